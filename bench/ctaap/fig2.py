"""Reproduce Fig. 2 of Kravtsov et al. (2008): allocation quality against the optimum.

For each range factor r = 1..5 the paper draws 100 instances (50 tasks, properties and
bandwidths in 1..100; 5 clusters with capacity 1..11, properties and bandwidths in
1..100*r), solves them exactly by integer programming and reports how often the
CTAAP-Solver finds the optimum. This script does the same with coalloc's exact solver
(HiGHS by default) and every heuristic given, and reports per range factor the success
rate (allocation == proven optimum) and the mean ratio to the optimum.

    python -m bench.ctaap.fig2                          # 100 instances per range, as the paper
    python -m bench.ctaap.fig2 --instances 20           # a quicker run
    python -m bench.ctaap.fig2 --variant paper='{"q_scale": "none"}'   # add a CTAAP variant

Optima are cached in bench/out/fig2_optima.csv (keyed by range factor and seed), so later
runs only solve the heuristics. Writes bench/out/fig2.csv and bench/out/fig2.png.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import coalloc
from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar
from coalloc.ctaap.exact import solve_exact
from coalloc.ctaap.generators import fig2

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def seed_of(r: int, k: int) -> int:
    """Instance k of range factor r (disjoint seeds per range)."""
    return 100_000 * r + k


def _optimum(job):
    r, k, backend, time_limit = job
    req, off = fig2(r, seed=seed_of(r, k))
    res = solve_exact(req, off, solver=backend, time_limit=time_limit)
    assert coalloc.verify(req, off, res.assignment).feasible
    return r, k, res.status, res.n_allocated, res.bound, res.timings["total"]


def load_optima(path):
    table = {}
    if os.path.exists(path):
        with open(path, newline="") as fh:
            for row in csv.DictReader(fh):
                table[(int(row["r"]), int(row["k"]))] = row
    return table


def compute_optima(jobs, path, backend, time_limit, workers):
    table = load_optima(path)
    todo = [(r, k, backend, time_limit) for r, k in jobs if (r, k) not in table]
    if todo:
        print(f"solving {len(todo)} integer programs with {backend} ({workers} processes)...")
        new = not os.path.exists(path)
        with open(path, "a", newline="") as fh, ProcessPoolExecutor(workers) as pool:
            w = csv.writer(fh)
            if new:
                w.writerow(["r", "k", "status", "optimum", "bound", "seconds"])
            optima = bar(pool.map(_optimum, todo), total=len(todo), desc="optima",
                         unit="ip")  # fmt: skip
            with optima:
                for r, k, status, opt, bound, sec in optima:
                    w.writerow([r, k, status, opt, bound, f"{sec:.3f}"])
                    fh.flush()
                    optima.set_postfix_str(f"r={r} k={k}: {opt} {status} {sec:.2f} s")
        table = load_optima(path)
    return table


def parse_variant(text):
    name, _, params = text.partition("=")
    return name, ("ctaap", json.loads(params) if params else {})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=100, help="instances per range factor")
    ap.add_argument("--ranges", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--backend", default="highs", help="exact backend for the optima")
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument(
        "--variant", action="append", default=[], type=parse_variant, metavar="NAME=JSON",
        help="extra CTAAP variant with these parameters",
    )  # fmt: skip
    ap.add_argument("--no-default-methods", action="store_true")
    ap.add_argument("--tag", default="fig2", help="output file stem")
    add_quiet(ap)
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)

    methods = {} if args.no_default_methods else {
        "ctaap": ("ctaap", {}),
        "ctaap-paper": ("ctaap", {"paper": True}),
        "greedy": ("greedy", {}),
        "greedy-best-of-10": ("greedy", {"order": "random", "restarts": 10}),
    }  # fmt: skip
    methods.update(dict(args.variant))

    jobs = [(r, k) for r in args.ranges for k in range(args.instances)]
    optima = compute_optima(
        jobs, os.path.join(OUT, "fig2_optima.csv"), args.backend, args.time_limit, args.workers
    )
    rows = []
    for name, (method, params) in methods.items():
        for r in args.ranges:
            ratios, hits, times = [], 0, []
            for k in bar(range(args.instances), desc=f"{name} r={r}", leave=False):
                req, off = fig2(r, seed=seed_of(r, k))
                t0 = time.perf_counter()
                res = coalloc.solve(req, off, method, seed=0, **params)
                times.append(time.perf_counter() - t0)
                if not coalloc.verify(req, off, res.assignment).feasible:
                    sys.exit(f"INFEASIBLE output from {name} on r={r}, k={k}")
                opt = int(optima[(r, k)]["optimum"])
                if optima[(r, k)]["status"] != "optimal":
                    print(f"warning: r={r} k={k} not proven optimal", file=sys.stderr)
                ratios.append(res.n_allocated / opt if opt else 1.0)
                hits += res.n_allocated == opt
            rows.append({
                "method": name, "r": r, "instances": args.instances,
                "success_rate": hits / args.instances,
                "mean_ratio": statistics.fmean(ratios), "min_ratio": min(ratios),
                "median_ms": statistics.median(times) * 1e3,
            })  # fmt: skip
            print(f"{name:>20} r={r}: success {hits / args.instances:6.1%}  "
                  f"mean ratio {statistics.fmean(ratios):.4f}  "
                  f"median {statistics.median(times) * 1e3:.2f} ms", flush=True)  # fmt: skip
    opt_times = [float(optima[j]["seconds"]) for j in jobs]
    print(f"exact ({args.backend}) median solve time {statistics.median(opt_times):.2f} s, "
          f"max {max(opt_times):.2f} s")  # fmt: skip

    with open(os.path.join(OUT, f"{args.tag}.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("hit rate / mean ratio to the optimum / median solve time")
    print("| method | " + " | ".join(f"r={r}" for r in args.ranges) + " | mean |")
    print("|---" * (len(args.ranges) + 2) + "|")
    for name in methods:
        mine = [x for x in rows if x["method"] == name]
        cells = [
            f"{x['success_rate']:.0%} / {x['mean_ratio']:.3f} / {x['median_ms']:.2f} ms"
            for x in mine
        ]
        mean = statistics.fmean(x["mean_ratio"] for x in mine)
        print(f"| {name} | " + " | ".join(cells) + f" | {mean:.3f} |")
    plot(rows, methods, args)


def plot(rows, methods, args):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for name in methods:
        mine = [x for x in rows if x["method"] == name]
        axes[0].plot([x["r"] for x in mine], [100 * x["success_rate"] for x in mine], "o-",
                     label=name)  # fmt: skip
        axes[1].plot([x["r"] for x in mine], [x["mean_ratio"] for x in mine], "o-", label=name)
    axes[0].set(xlabel="offer range factor r", ylabel="success rate (%)",
                title="allocation = proven optimum")  # fmt: skip
    axes[1].set(xlabel="offer range factor r", ylabel="mean allocation / optimum",
                title=f"{args.instances} instances per r")  # fmt: skip
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.set_xticks(args.ranges)
    axes[1].legend()
    fig.tight_layout()
    path = os.path.join(OUT, f"{args.tag}.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
