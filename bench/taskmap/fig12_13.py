"""Reproduce Figs. 12-13 of Taura & Chien: improvement over Base of the mapping variants.

For each communication intensity c, 32 instances of Table 1 (Internet-like resource graph,
pipeline of parallel jobs) are mapped with the four variants of section 5.2 (Base,
Base + improve, Open, Open + improve); the improvement of a variant on an instance is
occ(Base) / occ(variant) (> 1 is better). Fig. 12 is the scatter of these ratios, Fig. 13
their mean per c. Every mapping's occupancy is re-checked with the independent
``verify_mapping``.

    python -m bench.taskmap.fig12_13                  # c = 1 2 4 8 12 16 (32 instances each)
    python -m bench.taskmap.fig12_13 --quick          # c = 1 4 16, 4 instances
    python -m bench.taskmap.fig12_13 --c 32 --instances 8  # more intensities
    python -m bench.taskmap.fig12_13 --ablation       # processor order / bound u (open+improve)
    python -m bench.taskmap.fig12_13 --exact          # small instances against the exact MILP

Writes bench/out/fig12_13.csv and bench/out/fig12_13.png (and *_exact.csv, *_ablation.csv).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import time

from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar
from coalloc.taskmap import generators as gen
from coalloc.taskmap import map_tasks, solve_exact_mapping, verify_mapping

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
METHODS = ["base", "base+improve", "open", "open+improve"]
VARIANTS = METHODS[1:]
DEFAULT_C = [1, 2, 4, 8, 12, 16]


def instance_seed(c: float, i: int, seed0: int) -> int:
    return seed0 + 1000 * int(round(c)) + i


def run_one(tasks, res, method, seed, **params):
    t = time.perf_counter()
    r = map_tasks(tasks, res, method=method, seed=seed, **params)
    dt = time.perf_counter() - t
    rep = verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    if not (rep.valid and rep.matches):
        raise SystemExit(f"verification failed: {rep}")
    return r, dt


def figs(args):
    rows = []
    for c in args.c:
        for i in bar(range(args.instances), desc=f"c={c:g}", unit="inst", leave=False):
            s = instance_seed(c, i, args.seed)
            tasks, res = gen.table1_instance(c, s)
            occ = {}
            for m in METHODS:
                r, dt = run_one(tasks, res, m, s, processor_order=args.processor_order)
                occ[m] = r.max_occupancy
                rows.append({
                    "c": c, "instance": i, "seed": s, "method": m, "n_tasks": tasks.n,
                    "n_processors": res.n_processors, "occupancy": r.max_occupancy,
                    "improvement": None, "bottleneck": r.bottleneck.kind, "seconds": dt,
                    "improve_rounds": r.iterations["improve_rounds"],
                })  # fmt: skip
            for row in rows[-len(METHODS) :]:
                row["improvement"] = occ["base"] / row["occupancy"]
        done = [r for r in rows if r["c"] == c]
        means = {
            m: statistics.mean(r["improvement"] for r in done if r["method"] == m) for m in VARIANTS
        }
        print(f"c={c:g}: " + ", ".join(f"{m} {v:.3f}" for m, v in means.items()), flush=True)
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "fig12_13.csv")
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    print_table(rows, args.c)
    plot(rows, args.c)


def print_table(rows, cs):
    print("\n| c | Base + improve | Open | Open + improve | Base occ. | Open + improve occ. "
          "| ms / instance (4 variants) | n tasks | procs |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for c in cs:
        sel = [r for r in rows if r["c"] == c]

        def mean(m, key, sel=sel):
            return statistics.mean(r[key] for r in sel if r["method"] == m)

        def band(m, sel=sel):
            v = [r["improvement"] for r in sel if r["method"] == m]
            return f"{statistics.mean(v):.3f} [{min(v):.2f}, {max(v):.2f}]"

        n_inst = len({r["instance"] for r in sel})
        ms = 1e3 * sum(r["seconds"] for r in sel) / n_inst
        print(
            f"| {c:g} | {band('base+improve')} | {band('open')} | {band('open+improve')} "
            f"| {mean('base', 'occupancy'):.3f} | {mean('open+improve', 'occupancy'):.3f} "
            f"| {ms:.0f} | {mean('base', 'n_tasks'):.0f} | {mean('base', 'n_processors'):.0f} |"
        )


def plot(rows, cs):
    plt = pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    colors = {"base+improve": "tab:blue", "open": "tab:orange", "open+improve": "tab:green"}
    for k, m in enumerate(VARIANTS):
        xs = [r["c"] * (1 + 0.04 * (k - 1)) for r in rows if r["method"] == m]
        ys = [r["improvement"] for r in rows if r["method"] == m]
        axes[0].scatter(xs, ys, s=10, alpha=0.6, label=m, color=colors[m])
        means = [
            statistics.mean(r["improvement"] for r in rows if r["method"] == m and r["c"] == c)
            for c in cs
        ]
        axes[1].plot(cs, means, marker="o", label=m, color=colors[m])
    for ax, title in zip(axes, ["Fig. 12: improvement over Base", "Fig. 13: mean improvement"]):
        ax.set_xscale("log", base=2)
        ax.set_xticks(cs)
        ax.set_xticklabels([f"{c:g}" for c in cs])
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xlabel("communication intensity c")
        ax.set_ylabel("occ(Base) / occ(variant)")
        ax.set_title(title)
        ax.legend()
    fig.tight_layout()
    path = os.path.join(OUT, "fig12_13.png")
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


def ablation(args):
    """open+improve under the open choices: processor order and the bound u of improve."""
    configs = [
        ("capacity, u=0.9x", {"processor_order": "capacity", "bound_factor": 0.9}),
        ("index, u=0.9x", {"processor_order": "index", "bound_factor": 0.9}),
        ("locality, u=0.9x", {"processor_order": "locality", "bound_factor": 0.9}),
        ("random, u=0.9x", {"processor_order": "random", "bound_factor": 0.9}),
        ("capacity, u=1.0x", {"processor_order": "capacity", "bound_factor": 1.0}),
        ("capacity, no u", {"processor_order": "capacity", "bound_factor": None}),
        ("capacity, accel 0.5", {"processor_order": "capacity", "acceleration": 0.5}),
        ("capacity, accel 0.9", {"processor_order": "capacity", "acceleration": 0.9}),
    ]
    rows = []
    for c in args.c:
        for i in range(args.instances):
            s = instance_seed(c, i, args.seed)
            tasks, res = gen.table1_instance(c, s)
            map_tasks(tasks, res, method="base", seed=s)  # warm the route cache before timing
            for name, params in configs:
                for m in ("open", "open+improve"):
                    r, dt = run_one(tasks, res, m, s, **params)
                    rows.append({"c": c, "instance": i, "config": name, "method": m,
                                 "occupancy": r.max_occupancy, "seconds": dt})  # fmt: skip
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "fig12_13_ablation.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    ref = {
        (r["c"], r["instance"], r["method"]): r["occupancy"]
        for r in rows
        if r["config"] == configs[0][0]
    }
    print("\nGeometric mean of occ(config) / occ(capacity, u=0.9x), lower is better; "
          "ms per run")  # fmt: skip
    print("| config | method | " + " | ".join(f"c={c:g}" for c in args.c) + " | all | ms |")
    print("|---|---|" + "---|" * (len(args.c) + 2))
    for name, _ in configs:
        for m in ("open", "open+improve"):
            sel = [r for r in rows if r["config"] == name and r["method"] == m]
            if name != configs[0][0] and m == "open" and "u=" not in name.split(",")[1]:
                continue
            cells = []
            for c in [*args.c, None]:
                v = [r["occupancy"] / ref[(r["c"], r["instance"], m)] for r in sel
                     if c is None or r["c"] == c]  # fmt: skip
                cells.append(f"{math.exp(statistics.mean(math.log(x) for x in v)):.3f}")
            ms = 1e3 * statistics.mean(r["seconds"] for r in sel)
            print(f"| {name} | {m} | " + " | ".join(cells) + f" | {ms:.0f} |")


def exact(args):
    """Small instances: every variant against the exact MILP optimum (HiGHS)."""
    rows = []
    for c in args.c:
        for i in range(args.instances):
            s = instance_seed(c, i, args.seed)
            tasks = gen.pipeline_task_graph(n_clusters=(2, 3), cluster_size=(2, 4), c=c, seed=s)
            res = gen.internet_resource_graph(n_wan=2, n_lan=2, children=(2, 3), seed=s)
            ex = solve_exact_mapping(tasks, res, time_limit=args.time_limit)
            row = {"c": c, "instance": i, "n_tasks": tasks.n, "n_processors": res.n_processors,
                   "exact": ex.objective, "bound": ex.bound, "status": ex.status,
                   "exact_seconds": ex.timings["total"]}  # fmt: skip
            for m in METHODS:
                r, dt = run_one(tasks, res, m, s, processor_order=args.processor_order)
                row[m] = r.max_occupancy
            rows.append(row)
        print(f"c={c:g} done", flush=True)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "fig12_13_exact.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print("\nMean occ(variant) / optimum (1 = optimal), [share of instances solved optimally by "
          "the variant]; exact = HiGHS proven optimum")  # fmt: skip
    print("| c | " + " | ".join(METHODS) + " | exact s | proven | tasks | procs |")
    print("|---|" + "---|" * (len(METHODS) + 4))
    for c in args.c:
        sel = [r for r in rows if r["c"] == c and r["status"] == "optimal"]
        if not sel:
            continue
        cells = []
        for m in METHODS:
            v = [r[m] / r["exact"] for r in sel]
            hit = sum(x <= 1 + 1e-9 for x in v)
            cells.append(f"{statistics.mean(v):.3f} [{hit}/{len(v)}]")
        allc = [r for r in rows if r["c"] == c]
        print(
            f"| {c:g} | " + " | ".join(cells)
            + f" | {statistics.mean(r['exact_seconds'] for r in allc):.2f} "
            f"| {len(sel)}/{len(allc)} | {statistics.mean(r['n_tasks'] for r in allc):.1f} "
            f"| {statistics.mean(r['n_processors'] for r in allc):.1f} |"
        )  # fmt: skip


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--c", type=float, nargs="+", default=None, help="intensities")
    ap.add_argument("--instances", type=int, default=None, help="instances per c (32)")
    ap.add_argument("--seed", type=int, default=0, help="base seed of the instances")
    ap.add_argument("--processor-order", default="capacity")
    ap.add_argument("--quick", action="store_true", help="c = 1 4 16, 4 instances")
    ap.add_argument("--ablation", action="store_true", help="open choices, open+improve")
    ap.add_argument("--exact", action="store_true", help="small instances vs the exact MILP")
    ap.add_argument("--time-limit", type=float, default=60.0, help="exact: seconds per MILP")
    args = ap.parse_args(argv)
    if args.c is None:
        args.c = [1, 4, 16] if args.quick else DEFAULT_C
    if args.instances is None:
        args.instances = 4 if args.quick else (8 if args.ablation or args.exact else 32)
    args.c = [int(c) if float(c).is_integer() else c for c in args.c]
    if args.ablation:
        ablation(args)
    elif args.exact:
        exact(args)
    else:
        figs(args)


if __name__ == "__main__":
    main()
