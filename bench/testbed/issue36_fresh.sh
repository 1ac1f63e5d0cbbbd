#!/bin/bash
# Issue 36, fresh processes: each method under --time-limit T in a new process (as every CLI
# call is), on a 100-node random experiment onto the 255-PC DeterLab-like testbed.  Prints
# method, T, the process's wall seconds, the status and the method's own total seconds.
# Run from the repository root: PYTHONPATH=src bash bench/testbed/issue36_fresh.sh
set -e
PY=${PYTHON:-python}
D=$(mktemp -d)
$PY -m coalloc testbed generate deterlab --size 255 --switches 5 --seed 1 -o $D/t.ptop >/dev/null
$PY -c "from coalloc.testbed import generators as g, write_top; write_top('$D/x.top', g.random_topology(100, seed=11))"
for m in assign+ anneal exact; do
  for T in 0.05 0.5 5; do
    for r in 1 2; do
      s=$(date +%s.%N)
      out=$($PY -m coalloc testbed assign $D/x.top $D/t.ptop --method $m --time-limit $T --json --quiet || true)
      e=$(date +%s.%N)
      echo "$out" | $PY -c "import json,sys; d=json.load(sys.stdin); print('$m', $T, round($e-$s,3), d['status'], round(d['timings']['total'],3), d.get('objective'))"
    done
  done
done
rm -rf $D
