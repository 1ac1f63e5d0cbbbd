"""The timed multilevel at every deadline (issue 36): objective against the time limit.

The contract audit's metis-bipartite-100/tree (a bipartite task graph of 100 tasks read back
from a METIS file, on a 3-level tree) at seed 1 gave 342 at ``time_limit=0.5`` against 23.5
untimed: the answer depended on the stage the deadline fell in. This sweeps the deadline
from ``--start`` to past the untimed time in steps of ``--step`` seconds, every call warm in
this process (after two untimed runs), ``--repeat`` calls per deadline, and prints per T the
median and maximum objective (maximum occupancy), the median return time and the stages the
stopped runs came back from (``initial_level`` of the result: -2 the quick start, -3 the
paper's base, -1 its open+improve, >= 0 a bisection start; ``f`` the finish's moves).

    PYTHONPATH=src:. nice python -m bench.taskmap.deadline_sweep --repeat 5

Writes bench/out/taskmap_deadline_sweep.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time

from coalloc.cli._common import count, seconds

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def _instance():
    from bench.shared.contract_audit import _deep_tree, _via_metis, task_graph_bipartite

    return _via_metis(task_graph_bipartite(100, 5)), _deep_tree(3, 5)


def sweep(args) -> list:
    from bench.shared._progress import bar
    from coalloc import taskmap as tm

    tasks, res = _instance()
    for _ in range(2):  # warm: imports, tables, the compiled modules
        t = time.perf_counter()
        untimed = tm.solve(tasks, res, method=args.method, seed=args.seed)
        spent = time.perf_counter() - t
    print(f"untimed {args.method}: {untimed.max_occupancy:.6g} in {spent:.3f} s", flush=True)
    limits, t = [], args.start
    while t <= spent * args.past + 1e-12:
        limits.append(round(t, 6))
        t += args.step
    rows = []
    for lim in bar(limits, desc="deadlines", unit="T", leave=False):
        values, back, stages = [], [], []
        for _ in range(args.repeat):
            t = time.perf_counter()
            r = tm.solve(tasks, res, method=args.method, seed=args.seed, time_limit=lim)
            back.append(time.perf_counter() - t)
            report = tm.verify_mapping(tasks, res, r.mapping)
            assert report.valid, report.problems
            values.append(float(report.max_occupancy))
            it = r.iterations or {}
            stage = "done" if r.status != "time_limit" else str(it.get("initial_level", "?"))
            if "finish_moves" in it:
                stage += f"/f{it['finish_moves']}"
            stages.append(stage)
        row = {"T": lim, "median": statistics.median(values), "max": max(values),
               "return_median": statistics.median(back), "stages": " ".join(stages),
               "untimed": untimed.max_occupancy}  # fmt: skip
        rows.append(row)
        print(f"T={lim:6.3f} median={row['median']:9.4g} max={row['max']:9.4g} "
              f"return={row['return_median']:.3f} s  {row['stages']}", flush=True)  # fmt: skip
    return rows


def main(argv=None) -> None:
    from bench.shared._progress import add_quiet

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", default="multilevel", choices=("multilevel", "portfolio"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=seconds(), default=0.02, help="first deadline (s)")
    ap.add_argument("--step", type=seconds(), default=0.02, help="deadline step (s)")
    ap.add_argument("--past", type=float, default=1.1, help="last deadline: this x untimed")
    ap.add_argument("--repeat", type=count(), default=3, help="calls per deadline")
    add_quiet(ap)
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    print(f"load average: {os.getloadavg()}", flush=True)
    rows = sweep(args)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, f"taskmap_deadline_sweep_{args.method}.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}; load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
