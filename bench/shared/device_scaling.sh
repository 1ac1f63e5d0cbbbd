#!/usr/bin/env bash
# The 16-core batch-scaling run (issue 41) as one prepared script, for a lent machine with
# Python 3.12, NumPy, SciPy, networkx, tqdm, psutil, Cython, pybind11, setuptools and g++
# but no highspy or Dask (KINDS.md of the device notes). Their wheels travel in $WHEELS
# (default .whl/, ignored by git, named in the run's carry), fetched here with
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#     --platform manylinux2014_x86_64 -d .whl highspy dask distributed partd locket \
#     tornado tblib zict
# (dask, distributed and their pure-Python needs come as py3-none-any wheels).
#
# It installs coalloc from this checkout with
#   pip install --no-build-isolation --no-index --find-links $WHEELS .
# (its extensions compiled on every core: COALLOC_BUILD_JOBS), then runs
# bench.shared.scaling family by family, each under a time cap that shares what is left of
# BUDGET seconds (default 450: 7.5 minutes with the build), so that one slow family cannot
# lose the others' tables. The log goes to $OUT (or bench/out).
#
#   bash bench/shared/device_scaling.sh                         # the 16-core run
#   SMOKE=1 WORKERS="1 2" bash bench/shared/device_scaling.sh   # a dry run: tiny batches
#
# Variables: WHEELS, BUDGET, FAMILIES, WORKERS (default "2 8 16"), KINDS (default
# "processes pool dask dask-cli"; dask-cli is a cluster started by the 'dask scheduler' and
# 'dask worker' commands, the caller's CPU then the client's alone, as a cluster's user sees
# it: issue 41's dispatch target; it costs a cluster start per configuration, drop it to save
# time; both Dask kinds left out when Dask cannot be installed), LARGE (default 1: the
# --large batches, 10-12 s of serial work each on the 2-core VM; 0: the default sizes),
# SMOKE=1 (8 instances per family, for a dry run), PIP_ARGS (extra pip arguments).
set -uo pipefail
OUT=${OUT:-bench/out}
WHEELS=${WHEELS:-.whl}
BUDGET=${BUDGET:-450}
mkdir -p "$OUT" "$WHEELS"
start=$(date +%s)
export PYTHONUNBUFFERED=1
export COALLOC_BUILD_JOBS=${COALLOC_BUILD_JOBS:-$(nproc)}
PY=${PYTHON:-python3}
# shellcheck disable=SC2086
if ! "$PY" -m pip install -q --no-build-isolation --no-index --find-links "$WHEELS" ${PIP_ARGS:-} \
    . > "$OUT/build.log" 2>&1; then
  tail -30 "$OUT/build.log"
  exit 1
fi
KINDS=${KINDS:-processes pool dask dask-cli}
if [ -n "$(ls "$WHEELS"/distributed-*.whl 2>/dev/null)" ]; then
  # shellcheck disable=SC2086
  "$PY" -m pip install -q --no-index --find-links "$WHEELS" ${PIP_ARGS:-} "dask[distributed]" \
    >> "$OUT/build.log" 2>&1 || echo "Dask not installed: see build.log"
fi
if ! "$PY" -c "import distributed" 2>/dev/null; then
  KINDS=$(echo "$KINDS" | sed -E 's/dask(-cli)?//g')
fi
export PYTHONPATH=.  # bench.* from the checkout; coalloc as installed (not src/)
"$PY" -c "import coalloc, os; print('coalloc', coalloc.__version__, 'from', os.path.dirname(coalloc.__file__))" \
  | tee "$OUT/scaling.log"
echo "installed: $(( $(date +%s) - start )) s on $(nproc) CPUs; kinds: $KINDS" | tee -a "$OUT/scaling.log"
set -- ${FAMILIES:-ctaap taskmap collective testbed loadshare}
left=$#
for fam in "$@"; do
  cap=$(( (BUDGET - ($(date +%s) - start)) / left ))
  left=$(( left - 1 ))
  if [ "$cap" -lt 10 ]; then
    echo "[$fam skipped: no time left]" | tee -a "$OUT/scaling.log"
    continue
  fi
  size=()
  if [ "${SMOKE:-0}" = 1 ]; then size=(--instances 8); elif [ "${LARGE:-1}" = 1 ]; then size=(--large); fi
  # shellcheck disable=SC2086
  timeout "$cap" "$PY" -m bench.shared.scaling "${size[@]}" --families "$fam" \
    --workers ${WORKERS:-2 8 16} --kinds $KINDS --repeats 1 --quiet \
    2>&1 | tee -a "$OUT/scaling.log"
  echo "[$fam done at $(( $(date +%s) - start )) s (cap $cap s), load $(cut -d' ' -f1-3 /proc/loadavg)]" \
    | tee -a "$OUT/scaling.log"
done
