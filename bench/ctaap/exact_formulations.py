"""Time the exact solver's formulations of constraint (4) on the paper's instances.

For every available back-end (HiGHS always; CBC and CP-SAT when ``coalloc[exact]`` is
installed) and both formulations ("aggregated", "pairwise"), solve Fig. 2 instances
(50 tasks, 5 clusters, range factor r = 1..5) and Fig. 3 instances (n = 50, 100) for a few
seeds, and print the median wall-clock time of ``solve_exact`` (build + solve) per cell,
with the number of runs proven optimal. With ``--optima`` it also prints the HiGHS optimum
of every Fig. 2 instance (seeds ``0..optima-seeds-1``, r = 1..5), the reference the
heuristics are compared with in Fig. 2 of the paper.

Usage::

    PYTHONPATH=src python -m bench.ctaap.exact_formulations [--seeds 3] [--time-limit 120]
        [--backends highs,cbc,cpsat] [--only fig2,fig3] [--optima] [--optima-seeds 10]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from bench.shared._progress import add_quiet, bar
from coalloc.ctaap.exact import solve_exact, upper_bound
from coalloc.ctaap.generators import fig2, fig3


def available_backends(wanted):
    out = []
    for backend in wanted:
        if backend == "cbc":
            try:
                import pulp  # noqa: F401
            except ImportError:
                print("# cbc skipped: PuLP not installed", file=sys.stderr)
                continue
        if backend == "cpsat":
            try:
                import ortools  # noqa: F401
            except ImportError:
                print("# cpsat skipped: OR-Tools not installed", file=sys.stderr)
                continue
        out.append(backend)
    return out


def instances(seeds, which=("fig2", "fig3")):
    if "fig2" in which:
        for r in range(1, 6):
            yield f"fig2 r={r}", [fig2(r, seed=s) for s in range(seeds)]
    if "fig3" in which:
        for n in (50, 100):
            yield f"fig3 n={n}", [fig3(n, seed=s) for s in range(seeds)]


def run(args):
    backends = available_backends(args.backends.split(","))
    combos = [(b, f) for b in backends for f in ("aggregated", "pairwise")]
    rows = []
    for label, insts in instances(args.seeds, args.only.split(",")):
        cells = {}
        values = set()
        for backend, form in combos:
            times, n_opt, n_vals = [], 0, []
            for req, off in bar(insts, desc=f"{label} {backend} {form}", leave=False):
                t0 = time.perf_counter()
                res = solve_exact(
                    req, off, solver=backend, formulation=form, time_limit=args.time_limit
                )
                times.append(time.perf_counter() - t0)
                n_opt += res.status == "optimal"
                n_vals.append(res.n_allocated if res.status == "optimal" else None)
            values.add(tuple(n_vals))
            cells[(backend, form)] = (statistics.median(times), max(times), n_opt, n_vals, times)
            print(
                f"# {label:11s} {backend:5s} {form:10s} median {cells[(backend, form)][0]:7.2f}s"
                f" max {max(times):7.2f}s optimal {n_opt}/{len(insts)} values {n_vals}",
                file=sys.stderr,
                flush=True,
            )
        # Every proven optimum must agree across back-ends and formulations.
        for k in range(len(insts)):
            proven = {v[k] for v in values if v[k] is not None}
            if len(proven) > 1:
                print(f"!! {label} seed {k}: optima disagree {proven}", file=sys.stderr)
        rows.append((label, cells))

    head = f"{'instances':12s}" + "".join(f" {b + '/' + f[:4]:>16s}" for b, f in combos)
    print(
        f"\nMedian wall time of solve_exact in seconds ({args.seeds} seeds per row, "
        f"time limit {args.time_limit:g} s; [k] = runs not proven optimal)"
    )
    print(head)
    for label, cells in rows:
        line = f"{label:12s}"
        for combo in combos:
            med, _, n_opt, _, _ = cells[combo]
            miss = args.seeds - n_opt
            line += f" {med:12.2f}" + (f" [{miss}]" if miss else "    ")
        print(line)
    fig2_rows = [cells for label, cells in rows if label.startswith("fig2")]
    if fig2_rows:
        line = f"{'fig2 all':12s}"
        for combo in combos:
            times = [t for cells in fig2_rows for t in cells[combo][4]]
            miss = sum(args.seeds - cells[combo][2] for cells in fig2_rows)
            line += f" {statistics.median(times):12.2f}" + (f" [{miss}]" if miss else "    ")
        print(line)
    return rows, combos


def optima(args):
    print(f"\nFig. 2 optima (HiGHS, aggregated), seeds 0..{args.optima_seeds - 1}")
    print(
        "  r | "
        + " ".join(f"{s:>3d}" for s in range(args.optima_seeds))
        + " |  mean | b-matching bound mean"
    )
    table = {}
    for r in range(1, 6):
        vals, ubs = [], []
        for s in range(args.optima_seeds):
            req, off = fig2(r, seed=s)
            res = solve_exact(req, off, time_limit=args.time_limit)
            vals.append(res.n_allocated if res.status == "optimal" else f"{res.n_allocated}?")
            ubs.append(upper_bound(req, off))
        table[r] = vals
        num = [v for v in vals if isinstance(v, int)]
        mean = statistics.mean(num) if num else float("nan")
        print(
            f"  {r} | "
            + " ".join(f"{v!s:>3s}" for v in vals)
            + f" | {mean:5.1f} | {statistics.mean(ubs):5.1f}",
            flush=True,
        )
    return table


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_quiet(ap)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--backends", default="highs,cbc,cpsat")
    ap.add_argument("--optima", action="store_true", help="also print Fig. 2 optima")
    ap.add_argument("--optima-seeds", type=int, default=10)
    ap.add_argument("--skip-timing", action="store_true")
    ap.add_argument("--only", default="fig2,fig3", help="instance families to time")
    ap.add_argument("--json", help="write the raw figures to this file")
    args = ap.parse_args(argv)
    out = {}
    if not args.skip_timing:
        rows, combos = run(args)
        out["timing"] = {
            label: {
                f"{b}/{f}": {
                    "median_s": c[0],
                    "max_s": c[1],
                    "optimal": c[2],
                    "values": c[3],
                    "times_s": c[4],
                }
                for (b, f), c in cells.items()
            }
            for label, cells in rows
        }
    if args.optima:
        out["fig2_optima"] = optima(args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
