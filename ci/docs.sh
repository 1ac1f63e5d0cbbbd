#!/usr/bin/env bash
# The documentation: build the Sphinx site (pydata-sphinx-theme; the API reference from the
# numpydoc docstrings, a page per object; the guides of docs/; the example gallery examples/,
# every example run on Agg; bench/RESULTS.md as the changelog) with warnings as errors,
# numpydoc's validation of every public docstring included; check the built site (every page
# has its content, every internal link and anchor resolves: ci/check_site.py); then run every
# worked example as a doctest: the Examples sections of the installed package and the
# examples of the Markdown pages of docs/. With Debian's Chromium (installed below when
# missing; COALLOC_DOCS_BROWSER=0 skips the browser), every page is also loaded
# headless at 1280 px (none empty or wider than the window, no code block cut off or past
# the text column, no image missing) and screenshots of the main pages land in
# docs/_build/screenshots (keep them as build artefacts).
# Run in a virtual environment (CI: after ci/test.sh, in its .venv); the site lands in
# docs/_build/html. A coalloc already installed there is used as it is (no second compile).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
if python -c "import coalloc" 2>/dev/null && [ -z "${COALLOC_DOCS_REINSTALL:-}" ]; then
    # coalloc is installed: add the requirements of the docs and exact extras (some examples
    # solve exactly), read from pyproject.toml.
    python - <<'PY' > "${TMPDIR:-/tmp}/coalloc-docs-req.txt"
import re
import tomllib

with open("pyproject.toml", "rb") as f:
    extras = tomllib.load(f)["project"]["optional-dependencies"]


def expand(name):  # "coalloc[a,b]" inside an extra names other extras
    for req in extras[name]:
        m = re.match(r"coalloc\[(.*)\]", req)
        yield from (r for sub in m.group(1).split(",") for r in expand(sub)) if m else [req]


print("\n".join(sorted(set(expand("docs")) | set(expand("exact")))))
PY
    python -m pip install --quiet -r "${TMPDIR:-/tmp}/coalloc-docs-req.txt" pytest
else
    python -m pip install --quiet ".[docs,exact]" pytest
fi
# The plot_* examples and the gallery draw for real, on the Agg backend.
export MPLBACKEND=Agg
python -m sphinx -W --keep-going -q -b html docs docs/_build/html
# Debian's Chromium for the browser check: installed when missing, as root with apt-get, within
# 150 s (measured: 18 s CPU, 2 min wall on the loaded 2-core VM); COALLOC_DOCS_BROWSER=0 skips
# it. A failed or slow install only skips the browser check and the screenshots, with a note.
if [ "${COALLOC_DOCS_BROWSER:-1}" != 0 ] && ! command -v chromium >/dev/null \
    && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    timeout 150 bash -c 'apt-get install -y -q chromium >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; }' ||
        echo "docs: Debian's chromium could not be installed: no browser check, no screenshots"
fi
if [ "${COALLOC_DOCS_BROWSER:-1}" = 0 ]; then
    python ci/check_site.py docs/_build/html
else
    python ci/check_site.py docs/_build/html --screenshots docs/_build/screenshots
fi
flags="NORMALIZE_WHITESPACE ELLIPSIS NUMBER"
python -m pytest -q -p no:cacheprovider --noconftest -o "doctest_optionflags=$flags" -o addopts="" \
    --doctest-modules --pyargs coalloc
python -m pytest -q -p no:cacheprovider --noconftest -o "doctest_optionflags=$flags" -o addopts="" \
    --doctest-glob="*.md" docs
echo "docs: built docs/_build/html; doctests passed"
