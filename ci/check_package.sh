#!/usr/bin/env bash
# Packaging checks: ruff is clean, the sdist holds what its tests need, and the one wheel built
# from it (ci/wheel.sh: auditwheel-repaired to a manylinux tag) installs into a fresh virtual
# environment and runs `coalloc demo`, a solve of every family and a smoke subset of the
# sdist's tests. The wheel is built once here; ci/test.sh's build is the checkout's own.
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
pip install --quiet ruff build
ruff check src tests bench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python -m build --sdist --outdir "$tmp/dist" .
sdist=$(ls "$tmp"/dist/coalloc-*.tar.gz)
python - "$sdist" <<'PY'
import sys, tarfile
names = {n.split("/", 1)[1] for n in tarfile.open(sys.argv[1]).getnames() if "/" in n}
need = ["LICENSE", "README.md", "MANIFEST.in", "tests/_optional.py", "tests/conftest.py",
        "tests/strategies.py", "ci/test.sh", "ci/wheel.sh", "docs/architecture.md",
        "bench/RESULTS.md", "src/_core/ctaap/_softassign.pyx"]
missing = [n for n in need if n not in names]
assert not missing, f"sdist misses {missing}"
junk = [n for n in names if n.endswith((".so", ".o", ".pyc"))]
assert not junk, f"sdist carries build products: {junk[:5]}"
print(f"sdist ok: {len(names)} entries")
PY
bash ci/wheel.sh "$sdist" "$tmp/wheelhouse"
