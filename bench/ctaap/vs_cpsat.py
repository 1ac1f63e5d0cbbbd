"""Issue 5, item 2: the default CTAAP-Solver against CP-SAT with a time limit, Fig. 3 setup.

For each size n (default 200 and 500; 5 clusters, the paper's Fig. 3 generator) and each
instance, CP-SAT (one worker, pairwise formulation) runs for ``--time-limit`` seconds
(default 60) and reports the best allocation it found and its proven bound; the default
CTAAP-Solver (fill + local search) and the paper's algorithm (``paper=True``) run on the
same instance (median time over ``--repeats``). CP-SAT results are cached in
bench/out/vs_cpsat_cache.json. Every allocation goes through
``coalloc.verify``. Prints a markdown table; writes bench/out/vs_cpsat.csv.

    python -m bench.ctaap.vs_cpsat                            # n = 200, 500; 5 instances; 60 s
    python -m bench.ctaap.vs_cpsat --sizes 200 --instances 2 --time-limit 10   # quick
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time

import coalloc
from bench.shared._progress import add_quiet, bar, say
from coalloc.ctaap.generators import fig3

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def timed(req, off, repeats, **params):
    times, res = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        res = coalloc.solve(req, off, "ctaap", seed=0, **params)
        times.append(time.perf_counter() - t0)
    if not coalloc.verify(req, off, res.assignment).feasible:
        sys.exit(f"INFEASIBLE ctaap output {params}")
    return res.n_allocated, statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--sizes", type=int, nargs="+", default=[200, 500])
    ap.add_argument("--instances", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    # CP-SAT results are cached (keyed by size, instance and time limit): later runs only
    # re-time the heuristics.
    cache_path = os.path.join(OUT, "vs_cpsat_cache.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    rows = []
    for n in args.sizes:
        for k in bar(range(args.instances), desc=f"n={n}", unit="inst", leave=False):
            req, off = fig3(n, seed=50_000 + 100 * n + k)
            key = f"{n}/{k}/{args.time_limit:g}"
            if key not in cache:
                t0 = time.perf_counter()
                ex = coalloc.solve(req, off, "exact", solver="cpsat", time_limit=args.time_limit)
                t_ex = time.perf_counter() - t0
                if not coalloc.verify(req, off, ex.assignment).feasible:
                    sys.exit("INFEASIBLE CP-SAT output")
                cache[key] = [ex.n_allocated, ex.bound, ex.status, t_ex]
                with open(cache_path, "w") as fh:
                    json.dump(cache, fh)
            ex_size, ex_bound, ex_status, t_ex = cache[key]
            d_size, d_time = timed(req, off, args.repeats)
            p_size, p_time = timed(req, off, args.repeats, paper=True)
            row = {
                "n": n, "instance": k, "cpsat": ex_size, "cpsat_bound": ex_bound,
                "cpsat_status": ex_status, "cpsat_s": t_ex,
                "default": d_size, "default_s": d_time, "paper": p_size, "paper_s": p_time,
            }  # fmt: skip
            rows.append(row)
            say(row)
    with open(os.path.join(OUT, "vs_cpsat.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(
        "\n| n | inst. | CP-SAT best (bound, status) | CP-SAT s | default | default ms "
        "| time ratio | paper | paper ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']} | {r['instance']} | {r['cpsat']} ({r['cpsat_bound']:.0f}, "
              f"{r['cpsat_status']}) | {r['cpsat_s']:.1f} | {r['default']} | "
              f"{r['default_s'] * 1e3:.1f} | {r['default_s'] / r['cpsat_s']:.2%} | "
              f"{r['paper']} | {r['paper_s'] * 1e3:.1f} |")  # fmt: skip
    for n in args.sizes:
        mine = [r for r in rows if r["n"] == n]
        ge = sum(r["default"] >= r["cpsat"] for r in mine)
        diff = statistics.fmean(r["default"] - r["cpsat"] for r in mine)
        ratio = statistics.median(r["default_s"] / r["cpsat_s"] for r in mine)
        print(f"n={n}: default >= CP-SAT in {ge}/{len(mine)}; mean default - CP-SAT "
              f"{diff:+.2f}; median time ratio {ratio:.3%}")  # fmt: skip


if __name__ == "__main__":
    main()
