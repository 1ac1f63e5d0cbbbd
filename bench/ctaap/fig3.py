"""Reproduce Fig. 3 of Kravtsov et al. (2008): run time of CTAAP-Solver against exact solving.

The request grows (n tasks, properties and bandwidths in 1..100; 5 clusters with capacity
1..n/5, properties and bandwidths in 1..200). For each n the CTAAP-Solver and each exact
backend (CBC as in the paper, HiGHS, CP-SAT) solve the same instances; an exact backend is
dropped for larger n once it fails to prove optimality within the time limit on every
instance of a size. Reports wall times, objectives and proven bounds.

    python -m bench.ctaap.fig3                                   # defaults below
    python -m bench.ctaap.fig3 --sizes 10 20 40 --instances 2 --time-limit 30
    python -m bench.ctaap.fig3 --backends highs                  # without the optional extras

Writes bench/out/fig3.csv and bench/out/fig3.png.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time

import coalloc
from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar, say
from coalloc.ctaap.exact import solve_exact, upper_bound
from coalloc.ctaap.generators import fig3

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
DEFAULT_SIZES = [10, 20, 30, 40, 50, 75, 100, 150, 200, 300, 500, 1000]


def available_backends(wanted):
    out = []
    for b in wanted:
        try:
            if b == "cbc":
                import pulp  # noqa: F401
            elif b == "cpsat":
                import ortools  # noqa: F401
        except ImportError:
            print(f"skipping backend {b!r}: pip install 'coalloc[exact]'", file=sys.stderr)
            continue
        out.append(b)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES)
    ap.add_argument("--instances", type=int, default=3, help="instances per size")
    ap.add_argument("--backends", nargs="+", default=["cbc", "highs", "cpsat"])
    ap.add_argument("--time-limit", type=float, default=60.0, help="per exact solve (s)")
    ap.add_argument("--repeats", type=int, default=5, help="CTAAP repeats (median)")
    ap.add_argument("--replot", action="store_true", help="table and plot from the last CSV")
    add_quiet(ap)
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    if args.replot:
        with open(os.path.join(OUT, "fig3.csv"), newline="") as fh:
            rows = [dict(r, n=int(r["n"]), seconds=float(r["seconds"])) for r in csv.DictReader(fh)]
        solvers = list(dict.fromkeys(r["solver"] for r in rows))
        summary(rows, solvers, args)
        plot(rows, solvers, args)
        return
    backends = available_backends(args.backends)
    alive = set(backends)
    rows = []
    for n in args.sizes:
        for k in bar(range(args.instances), desc=f"n={n}", leave=False):
            req, off = fig3(n, seed=10_000 + 100 * n + k)
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                res = coalloc.solve(req, off, seed=0)
                times.append(time.perf_counter() - t0)
            assert coalloc.verify(req, off, res.assignment).feasible
            ub = upper_bound(req, off)
            rows.append(dict(n=n, k=k, solver="ctaap", status=res.status,
                             objective=res.n_allocated, bound=ub,
                             seconds=statistics.median(times)))  # fmt: skip
            line = f"n={n:5d} k={k}: ctaap {res.n_allocated} in {rows[-1]['seconds'] * 1e3:.1f} ms"
            for b in backends:
                if b not in alive:
                    continue
                t0 = time.perf_counter()
                ex = solve_exact(req, off, backend=b, time_limit=args.time_limit)
                sec = time.perf_counter() - t0
                if ex.assignment is not None and ex.n_allocated:
                    assert coalloc.verify(req, off, ex.assignment).feasible
                rows.append(
                    dict(n=n, k=k, solver=b, status=ex.status, objective=ex.n_allocated,
                         bound=ex.bound, seconds=sec)
                )  # fmt: skip
                line += f" | {b} {ex.status} {ex.n_allocated}<={ex.bound} in {sec:.2f} s"
            say(line)
        for b in list(alive):
            mine = [r for r in rows if r["n"] == n and r["solver"] == b]
            if mine and all(r["status"] != "optimal" for r in mine):
                print(f"  {b} proved no instance of n={n} optimal within "
                      f"{args.time_limit:.0f} s: dropped for larger n")  # fmt: skip
                alive.discard(b)
        if not alive and n >= 200 and len(rows) > 0 and rows[-1]["seconds"] > 5:
            break
    with open(os.path.join(OUT, "fig3.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    summary(rows, ["ctaap", *backends], args)
    plot(rows, ["ctaap", *backends], args)


def summary(rows, solvers, args):
    """Markdown table: median time, proven optima and mean objective per size and solver."""
    sizes = sorted({r["n"] for r in rows})
    head = ["ctaap time (s) / objective"] + [
        f"{s} time (s) / proven optimal / objective / bound" for s in solvers if s != "ctaap"
    ]
    print("| n | " + " | ".join(head) + " |")
    print("|---" * (len(head) + 1) + "|")
    for n in sizes:
        cells = []
        for s in solvers:
            mine = [r for r in rows if r["n"] == n and r["solver"] == s]
            if not mine:
                cells.append("-")
                continue
            t = statistics.median(float(r["seconds"]) for r in mine)
            obj = statistics.fmean(float(r["objective"]) for r in mine)
            if s == "ctaap":
                cells.append(f"{t:.4f} / {obj:.1f}")
                continue
            opt = sum(r["status"] == "optimal" for r in mine)
            bnd = statistics.fmean(float(r["bound"]) for r in mine)
            cells.append(f"{t:.3g} / {opt}/{len(mine)} / {obj:.1f} / {bnd:.1f}")
        print(f"| {n} | " + " | ".join(cells) + " |")


def plot(rows, solvers, args):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for s in solvers:
        sizes = sorted({r["n"] for r in rows if r["solver"] == s})
        med = [statistics.median(r["seconds"] for r in rows if r["n"] == n and r["solver"] == s)
               for n in sizes]  # fmt: skip
        axes[0].plot(sizes, med, "o-", label=s)
    axes[0].axhline(args.time_limit, ls=":", c="gray", label="time limit")
    axes[0].set(xscale="log", yscale="log", xlabel="tasks n", ylabel="median wall time (s)",
                title="CTAAP-Solver vs exact solving")  # fmt: skip
    axes[0].legend()
    sizes = sorted({r["n"] for r in rows if r["solver"] == "ctaap"})
    med = [statistics.median(r["seconds"] for r in rows if r["n"] == n and r["solver"] == "ctaap")
           for n in sizes]  # fmt: skip
    axes[1].plot(sizes, [1e3 * t for t in med], "o-")
    axes[1].set(xlabel="tasks n", ylabel="median wall time (ms)", title="CTAAP-Solver alone")
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    path = os.path.join(OUT, "fig3.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
