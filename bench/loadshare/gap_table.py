"""GAP table: the heuristic and CP-SAT on generated Chu & Beasley instances of types A-D.

For every type and size (agents x items: 5x100, 5x200, 10x100, 10x200, 20x100, 20x200, the
sizes of the OR-Library a-d sets) one generated instance (minimisation) is solved by
``solve_gap(method="heuristic")`` and by ``solve_gap(method="exact")`` (CP-SAT, one
worker, a time limit); every assignment is re-checked with ``verify_gap``. Deviation of
the heuristic from CP-SAT's best value, CP-SAT's proven gap, and times.

    python -m bench.loadshare.gap_table                     # 24 instances, CP-SAT 60 s each
    python -m bench.loadshare.gap_table --time-limit 20 --types c d

Writes bench/out/loadshare_gap.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics

from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import generate_gap, solve_gap, verify_gap

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
SIZES = [(5, 100), (5, 200), (10, 100), (10, 200), (20, 100), (20, 200)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--types", nargs="+", default=["a", "b", "c", "d"])
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    rows = []
    jobs = [(k, m, n) for k in args.types for m, n in SIZES]
    for kind, m, n in bar(jobs, desc="gap", unit="inst"):
        inst = generate_gap(kind, m, n, seed=args.seed)
        h = solve_gap(inst, "heuristic", seed=0)
        e = solve_gap(inst, "exact", time_limit=args.time_limit, threads=args.threads, seed=0)
        for r in (h, e):
            if r.assignment is not None:
                rep = verify_gap(inst, r.assignment, claimed=r.objective)
                if not rep.ok:
                    raise SystemExit(f"verification failed: {kind}{m}x{n} {r.method}: {rep}")
        best = min(v for v in (h.objective, e.objective) if v is not None)
        rows.append({"type": kind, "m": m, "n": n, "heuristic": h.objective,
                     "heuristic_lp_bound": h.bound, "heuristic_s": h.timings["total"],
                     "cpsat": e.objective, "cpsat_status": e.status, "cpsat_bound": e.bound,
                     "cpsat_gap": e.gap, "cpsat_s": e.timings["total"],
                     "dev_vs_best_pct": 100 * (h.objective - best) / best,
                     "dev_vs_cpsat_pct": 100 * (h.objective - e.objective) / e.objective})
    with open(os.path.join(OUT, "loadshare_gap.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("type  m x n   heuristic (s)      CP-SAT status gap% (s)        dev vs CP-SAT %")
    for r in rows:
        print(f"  {r['type']}  {r['m']:2d}x{r['n']:3d}  {r['heuristic']:8.0f} "
              f"({r['heuristic_s']:.2f})"
              f"  {r['cpsat']:8.0f} {r['cpsat_status']:8s} {100 * (r['cpsat_gap'] or 0):.3f}"
              f" ({r['cpsat_s']:.1f})  {r['dev_vs_cpsat_pct']:+.3f}")
    for kind in args.types:
        sel = [r for r in rows if r["type"] == kind]
        dev = statistics.mean(r["dev_vs_best_pct"] for r in sel)
        print(f"type {kind}: mean deviation {dev:.3f} %"
              f" from the best known here; median heuristic time "
              f"{statistics.median(r['heuristic_s'] for r in sel):.2f} s")
    print(f"all: mean deviation {statistics.mean(r['dev_vs_best_pct'] for r in rows):.3f} %, "
          f"median time {statistics.median(r['heuristic_s'] for r in rows):.2f} s")


if __name__ == "__main__":
    main()
