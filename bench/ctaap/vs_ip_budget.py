"""Issue 29: the default, the anytime search, CP-SAT and HiGHS with the same wall-clock budgets.

Instances from two generators: the paper's Fig. 3 setup (complete request graph,
``generators.fig3``) and sparse random requests (mean degree 10, capacities near n / M,
``random_instance(n, M, edge_probability=10/(n-1), capacity_range=(n//2M, 3n//2M))``, the
setup of bench_scale). For each instance and each budget T (seconds, ``--budgets``): the
default (no budget: it ends when it ends), ``solve(..., "ctaap", time_limit=T)`` (the
anytime search), CP-SAT (one worker) and HiGHS with ``time_limit=T``. Every allocation goes
through ``coalloc.verify`` (an infeasible one stops the script). Prints a markdown table,
writes bench/out/vs_ip_budget.csv and the trajectory picture bench/out/vs_ip_budget.png
(allocated against time: the anytime search's trajectory at the largest budget, the
default as a point, CP-SAT and HiGHS at each budget).

``--fig2 N`` also runs N Fig. 2 instances per range factor 1..5 (seeds 910000 + 1000 r + k):
the anytime search with a 1 s budget against the optimum (CP-SAT, 60 s, proven).

    python -m bench.ctaap.vs_ip_budget --budgets 1 10                 # the modest run
    python -m bench.ctaap.vs_ip_budget --budgets 10 60 300 --fig3 200 500 1000 2000 \\
        --sparse 1000 2000 5000 10000 --clusters 10 20 --fig2 100       # the full run
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

import numpy as np

import coalloc
import coalloc.ctaap as ct
from bench.shared._progress import add_quiet, bar, say

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def sparse_instance(n: int, m: int, seed: int):
    """The sparse generator: mean degree 10, capacities near n / m."""
    return ct.generators.random_instance(
        n, m, edge_probability=min(1.0, 10 / max(1, n - 1)),
        capacity_range=(max(1, n // (2 * m)), max(1, 3 * n // (2 * m))), seed=seed,
    )  # fmt: skip


def checked(req, off, res, what):
    if res.has_solution and not coalloc.verify(req, off, res.assignment).feasible:
        sys.exit(f"INFEASIBLE {what} output")
    return int(res.n_allocated) if res.has_solution else 0


def run_instance(name, req, off, budgets, methods):
    rows, trajectories = [], {}
    t0 = time.perf_counter()
    d = coalloc.solve(req, off, seed=0)
    t_d = time.perf_counter() - t0
    base = {"instance": name, "n": req.n, "m": off.m, "links": req.bandwidth.nnz // 2}
    rows.append({**base, "method": "default", "budget": "",
                 "allocated": checked(req, off, d, "default"), "bound": ct.upper_bound(req, off),
                 "status": d.status, "seconds": t_d})  # fmt: skip
    for T in budgets:
        if "anytime" in methods:
            t0 = time.perf_counter()
            a = coalloc.solve(req, off, seed=0, time_limit=T)
            t_a = time.perf_counter() - t0
            rows.append({**base, "method": "anytime", "budget": T,
                         "allocated": checked(req, off, a, "anytime"), "bound": a.bound,
                         "status": a.status, "seconds": t_a,
                         "bound_kind": (a.params or {}).get("lp_bound_kind", "flow")})  # fmt: skip
            trajectories[T] = a.trajectory
        for solver in ("cpsat", "highs"):
            if solver not in methods:
                continue
            t0 = time.perf_counter()
            try:
                e = coalloc.solve(req, off, "exact", solver=solver, time_limit=T, seed=0)
                got, bound, status = checked(req, off, e, solver), e.bound, e.status
            except MemoryError:
                got, bound, status = 0, None, "memory"
            rows.append({**base, "method": solver, "budget": T, "allocated": got,
                         "bound": bound, "status": status,
                         "seconds": time.perf_counter() - t0})  # fmt: skip
    return rows, trajectories, t_d, d.n_allocated


def fig2_check(count: int, start: int = 0):
    out = []
    for r in range(1, 6):
        hits = total = 0
        for k in bar(range(start, start + count), desc=f"fig2 r={r}", unit="inst", leave=False):
            req, off = ct.generators.fig2(r, seed=910000 + 1000 * r + k)
            ex = coalloc.solve(req, off, "exact", solver="cpsat", time_limit=60)
            if ex.status != "optimal":
                continue
            a = coalloc.solve(req, off, seed=0, time_limit=1.0)
            checked(req, off, a, "anytime")
            total += 1
            hits += a.n_allocated == ex.n_allocated
        out.append((r, hits, total))
    return out


def plot(path, panels):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    k = len(panels)
    cols = min(3, k)
    nrows = (k + cols - 1) // cols
    fig, axes = plt.subplots(nrows, cols, figsize=(5 * cols, 3.6 * nrows), squeeze=False)
    for ax, (name, rows, traj, t_d, n_d) in zip(axes.flat, panels):
        if traj is not None:
            ax.step(traj[:, 0], traj[:, 1], where="post", label="anytime (ctaap, time_limit)")
        ax.plot([t_d], [n_d], "ko", label="default")
        for solver, mark in (("cpsat", "s-"), ("highs", "^-")):
            pts = sorted((r["budget"], r["allocated"]) for r in rows if r["method"] == solver)
            if pts:
                ax.plot(*zip(*pts), mark, label=f"{solver} at its budget")
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("seconds")
        ax.set_ylabel("tasks allocated")
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[k:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--budgets", type=float, nargs="+", default=[1.0, 10.0],
                    help="seconds, e.g. 1 10 60 300")  # fmt: skip
    ap.add_argument("--fig3", type=int, nargs="*", default=[200, 500], help="Fig. 3 sizes")
    ap.add_argument("--sparse", type=int, nargs="*", default=[1000, 2000, 5000],
                    help="sparse sizes")  # fmt: skip
    ap.add_argument("--clusters", type=int, nargs="+", default=[10],
                    help="clusters of the sparse instances (a set of instances each)")  # fmt: skip
    ap.add_argument("--instances", type=int, default=1)
    ap.add_argument("--methods", nargs="+", default=["anytime", "cpsat", "highs"])
    ap.add_argument("--fig2", type=int, default=0, help="Fig. 2 instances per range factor")
    ap.add_argument("--fig2-start", type=int, default=0,
                    help="first Fig. 2 instance k (seed 910000 + 1000 r + k)")  # fmt: skip
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    say(f"load average {os.getloadavg()}")
    jobs = [(f"fig3 n={n} #{k}", lambda n=n, k=k: ct.generators.fig3(n, seed=60_000 + 100 * n + k))
            for n in args.fig3 for k in range(args.instances)]  # fmt: skip
    jobs += [(f"sparse n={n} M={m} #{k}",
              lambda n=n, k=k, m=m: sparse_instance(n, m, 70_000 + 100 * n + k))
             for m in args.clusters for n in args.sparse
             for k in range(args.instances)]  # fmt: skip
    rows, panels = [], []
    for name, make in bar(jobs, desc="instances", unit="inst"):
        req, off = make()
        got, traj, t_d, n_d = run_instance(name, req, off, args.budgets, args.methods)
        rows += got
        panels.append((name, got, traj.get(max(args.budgets)), t_d, n_d))
        for r in got:
            say(r)
    if rows:
        with open(os.path.join(OUT, "vs_ip_budget.csv"), "w", newline="") as fh:
            fields = list(dict.fromkeys(k for r in rows for k in r))
            w = csv.DictWriter(fh, fieldnames=fields, restval="")
            w.writeheader()
            w.writerows(rows)
        plot(os.path.join(OUT, "vs_ip_budget.png"), panels)
    # the table: one row per instance and budget
    if rows:
        print("\n| instance | links | T (s) | default | anytime (bound, gap) | CP-SAT (bound) "
              "| HiGHS (bound) | flow bound |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|")
    for name, got, _, t_d, n_d in panels:
        flow = got[0]["bound"]
        for T in args.budgets:
            cell = {r["method"]: r for r in got if r["budget"] == T}

            def fmt(key, cell=cell):
                r = cell.get(key)
                if r is None:
                    return "-"
                b = "-" if r["bound"] is None else f"{r['bound']:.0f}"
                return f"{r['allocated']} ({b}, {r['status']})"

            a = cell.get("anytime")
            if a is None:
                any_cell = "-"
            elif a["bound"] is None:  # the default had not answered within T
                any_cell = f"{a['allocated']} ({a['status']}, no answer yet)"
            else:
                gap = (a["bound"] - a["allocated"]) / a["bound"]
                any_cell = (f"{a['allocated']} ({a['bound']:.0f} {a['bound_kind']}, gap {gap:.1%}, "
                            f"{a['status']})")  # fmt: skip
            print(f"| {name} | {got[0]['links']} | {T:g} | {n_d} ({t_d:.2f} s) | {any_cell} "
                  f"| {fmt('cpsat')} | {fmt('highs')} | {flow} |")  # fmt: skip
    if args.fig2:
        print("\n| range factor | anytime, 1 s: optimum found |")
        print("|---|---|")
        for r, hits, total in fig2_check(args.fig2, args.fig2_start):
            print(f"| {r} | {hits}/{total} ({hits / max(1, total):.0%}) |")
    say(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
