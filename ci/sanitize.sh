#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of every compiled module (Cython's
# bounds/wraparound/initialisation checks on), then the kernel parity tests and the fuzzed
# readers against it. Any sanitizer report aborts the run (halt_on_error), so CI goes red.
# Run after ci/test.sh, in its virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
here="$(pwd)"
tree="$(mktemp -d /tmp/coalloc-asan.XXXXXX)"
trap 'rm -rf "$tree"' EXIT
# A copy of the sources, so the sanitized modules never mix with the installed package.
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tree"
cd "$tree"
python -m pip install --quiet "Cython>=3.0" "pybind11>=2.11"
COALLOC_SANITIZE=1 python setup.py --quiet build_ext --inplace -j 2 2>&1 | grep -v "^warning\|warn(" || true
test -n "$(find src/coalloc -name '*.so' -newer setup.py)" || { echo "sanitized build failed"; exit 1; }
libs="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
export LD_PRELOAD="$libs"
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONPATH="$tree/src"
python -c "import coalloc, sys; assert coalloc.__file__.startswith('$tree'), coalloc.__file__"
python -m pytest -q -p no:cacheprovider -m "slow or not slow" tests/*/kernels tests/shared/test_fuzz_readers.py
cd "$here"
