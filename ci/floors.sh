#!/usr/bin/env bash
# The declared floors are true: a fresh virtual environment with the oldest supported Python
# and every runtime dependency pinned to the floor pyproject.toml declares (">=X" -> "==X"),
# coalloc from a wheel, then the test suite.
#
#   bash ci/floors.sh PYTHON [WHEEL] [PYTEST ARGS...]
#
# PYTHON: the interpreter (e.g. ~/.pyenv/versions/3.10.13/bin/python); WHEEL: a coalloc wheel
# built for it (default: built here from the checkout). Not part of .ci/run (it builds and
# tests a second time); run it when a floor or requires-python changes.
set -euo pipefail
cd "$(dirname "$0")/.."
py=$1
shift
wheel=${1:-}
[ $# -ge 1 ] && shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
floors=$(python3 - <<'PY'
import re, tomllib
deps = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
print(" ".join(re.sub(r">=([^,;]+).*", r"==\1", d) for d in deps))
PY
)
echo "floors: $floors"
"$py" -m venv "$tmp/venv"
if [ -z "$wheel" ]; then
    "$tmp/venv/bin/pip" wheel --no-deps --wheel-dir "$tmp/wheel" .
    wheel=$(ls "$tmp"/wheel/coalloc-*.whl)
fi
# shellcheck disable=SC2086
"$tmp/venv/bin/pip" install --quiet $floors "$wheel" pytest pytest-xdist hypothesis pulp ortools
"$tmp/venv/bin/pip" list 2>/dev/null | grep -Ei "^(numpy|scipy|networkx|tqdm|highspy) "
cd "$tmp" && "$tmp/venv/bin/coalloc" demo && cd - > /dev/null
"$tmp/venv/bin/python" -m pytest -p no:cacheprovider -q -n 2 "${@:-tests}"
