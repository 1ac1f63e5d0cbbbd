#!/usr/bin/env bash
# The 16-core batch-scaling run (issue 41) as one prepared script, for a lent machine with
# Python 3.12, NumPy, SciPy, networkx, tqdm, Cython, pybind11 and g++ but no highspy/Dask:
# their wheels travel in .whl/ (see the device notes). Builds coalloc in place on every core,
# then runs bench.shared.scaling family by family (each under its own time cap, so one slow
# family cannot lose the others' tables), writing the log to $OUT (or bench/out).
set -uo pipefail
OUT=${OUT:-bench/out}
mkdir -p "$OUT"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site
fi
export PYTHONPATH=src:.:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
start=$(date +%s)
COALLOC_BUILD_JOBS=$(nproc) python3 setup.py -q build_ext --inplace > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s on $(nproc) CPUs"
CAP=${CAP:-105}  # seconds per family; LARGE=1: the --large batches (10-12 s serial on 2 cores each)
for fam in ${FAMILIES:-ctaap taskmap collective testbed loadshare}; do
  timeout "$CAP" python3 -m bench.shared.scaling ${LARGE:+--large} --families "$fam" \
    --workers ${WORKERS:-1 2 4 8 16} --kinds ${KINDS:-processes dask} --repeats 1 --quiet \
    2>&1 | tee -a "$OUT/scaling.log"
  echo "[$fam done at $(( $(date +%s) - start )) s, load $(cut -d' ' -f1-3 /proc/loadavg)]" | tee -a "$OUT/scaling.log"
done
