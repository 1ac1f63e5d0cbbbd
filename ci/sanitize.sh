#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of every compiled module (Cython's
# bounds/wraparound/initialisation checks on), then the kernel parity tests and the fuzzed
# readers against it. Any sanitizer report aborts the run (halt_on_error), so CI goes red.
# Run after ci/test.sh, in its virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
here="$(pwd)"
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then . .venv/bin/activate; fi
tree="$(mktemp -d /tmp/coalloc-asan.XXXXXX)"
trap 'rm -rf "$tree"' EXIT
# A copy of the sources, so the sanitized modules never mix with the installed package.
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$tree"
cd "$tree"
python -m pip install --quiet "setuptools>=77" "Cython>=3.0" "pybind11>=2.11"
COALLOC_SANITIZE=1 python setup.py --quiet build_ext --inplace -j 2 2>&1 | grep -v "^warning\|warn(" || true
n_src=$(find src/_core -maxdepth 2 -name '*.pyx' -o -maxdepth 2 -name '*.cpp' | wc -l)
n_so=$(find src/coalloc -name '*.so' | wc -l)
[ "$n_so" -eq "$n_src" ] || { echo "sanitize: built $n_so of $n_src modules"; exit 1; }
# The modules really are instrumented: without the sanitizer runtime they refuse to load.
if PYTHONPATH="$tree/src" python -c "import coalloc.ctaap._softassign" 2>/dev/null; then
    echo "sanitize: the kernels loaded without the ASan runtime: not instrumented"; exit 1
fi
libs="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
export LD_PRELOAD="$libs"
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export PYTHONPATH="$tree/src"
echo "sanitize: kernels built with -fsanitize=address,undefined; running parity tests and fuzzer"
python -c "import coalloc, sys; assert coalloc.__file__.startswith('$tree'), coalloc.__file__"
python -m pytest -q -p no:cacheprovider -m "slow or not slow" tests/*/kernels tests/shared/test_fuzz_readers.py
python fuzz/run.py --replay  # the committed fuzz corpus, against the sanitized kernels
cd "$here"
