#!/usr/bin/env bash
# The documentation: build the Sphinx site (API reference from the numpydoc docstrings, the
# guides of docs/ and bench/RESULTS.md) with warnings as errors, numpydoc's validation of every
# public docstring included, then run every worked example as a doctest: the Examples sections
# of the installed package and the examples of the Markdown pages of docs/.
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
python -m sphinx -W --keep-going -q -b html docs docs/_build/html
flags="NORMALIZE_WHITESPACE ELLIPSIS NUMBER"
# The plot_* examples draw for real, to PNG files in temporary folders, on the Agg backend.
export MPLBACKEND=Agg
python -m pytest -q -p no:cacheprovider --noconftest -o "doctest_optionflags=$flags" -o addopts="" \
    --doctest-modules --pyargs coalloc
python -m pytest -q -p no:cacheprovider --noconftest -o "doctest_optionflags=$flags" -o addopts="" \
    --doctest-glob="*.md" docs
echo "docs: built docs/_build/html; doctests passed"
