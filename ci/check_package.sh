#!/usr/bin/env bash
# Packaging checks: ruff is clean, the sdist builds a working wheel, and the wheel holds
# the package only (compiled modules inside their family packages, nothing top-level).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
pip install --quiet ruff build
ruff check src tests bench
tmp=$(mktemp -d)
python -m build --sdist --outdir "$tmp/dist" .
pip wheel --no-deps --wheel-dir "$tmp/wheel" "$tmp"/dist/coalloc-*.tar.gz
python - "$tmp"/wheel/coalloc-*.whl <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
top = {n.split("/")[0] for n in names}
bad = [t for t in top if t != "coalloc" and not t.endswith(".dist-info")]
exts = [n for n in names if n.endswith(".so")]
assert not bad, f"wheel has top-level entries besides coalloc/: {bad}"
need = {
    "coalloc/ctaap/_softassign", "coalloc/ctaap/_violations", "coalloc/ctaap/_bmatching",
    "coalloc/ctaap/_cleanup", "coalloc/ctaap/_localsearch", "coalloc/taskmap/_flowinject",
    "coalloc/collective/_search", "coalloc/testbed/_anneal", "coalloc/testbed/_allocate",
    "coalloc/loadshare/_dmcf", "coalloc/loadshare/_gapls",
}
have = {n.split(".")[0] for n in exts}
assert need <= have, f"wheel misses compiled modules (each inside its family): {need - have}"
assert "coalloc/ctaap/data/demo.json" in names, "wheel misses the demo instance"
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "wheel misses LICENSE"
print("wheel ok:", sorted(exts))
PY
python -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet "$tmp"/wheel/coalloc-*.whl
(cd "$tmp" && "$tmp/venv/bin/coalloc" demo)
rm -rf "$tmp"
