"""Reproduce the load-sharing experiments of Hovey & Jung (Figs. 5, 6, 8, 9, threshold sweep).

Setup (Fig. 5, :func:`coalloc.loadshare.generators.paper_setup`): 500 nodes of 1000 Mflops/s,
per 20 nodes 19 with 526 +- 500 Mflops of jobs and one with 10000 +- 500; job sizes (not in
the paper) uniform on 10-100 Mflops; p = 0.25; stop after 100 generations without a gain.
Every placement is re-checked with the independent ``verify_placement``.

    python -m bench.loadshare.paper                 # 30 trials, sizes 23 33 45 83 100
    python -m bench.loadshare.paper --trials 5      # fewer trials
    python -m bench.loadshare.paper --nodes 50000 --trials 1 --sizes 100 --no-sweep

Writes bench/out/loadshare_fig8.csv (every method, size, trial), loadshare_fig6.csv
(migrations against throughput along the DMCF-GGA runs), loadshare_fig9.csv (search cost),
loadshare_sweep.csv (threshold sweep) and the PNGs.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time

import numpy as np

from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import generators, share, verify_placement

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
METHODS = ["fcfs", "fcfs-ff", "round-robin", "dmcf-gga", "dmcf-gga(ff)", "bfd"]
PAPER_FIG8 = {  # coalition size: (FCFS-FF, round robin, DMCF-GGA), Fig. 8
    23: (4.15e5, 4.63e5, 4.95e5), 45: (4.29e5, 4.62e5, 4.99e5), 100: (4.61e5, 4.94e5, 4.99e5)
}


def run(prob, method, size, seed, **kw):
    name, extra = method, {}
    if method == "dmcf-gga(ff)":
        name, extra = "dmcf-gga", {"phase2": "ff"}
    t = time.perf_counter()
    r = share(prob, name, coalition_size=size, seed=seed, **extra, **kw)
    dt = time.perf_counter() - t
    rep = verify_placement(prob, r.placement, claimed=r.throughput)
    if not rep.ok:
        raise SystemExit(f"verification failed: {method} size {size}: {rep}")
    return r, dt


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--sizes", type=int, nargs="+", default=[23, 33, 45, 83, 100])
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--arrival", default="staggered", choices=generators.ARRIVALS,
                    help="arrival model of paper_setup (bench/loadshare/baselines.py compares)")
    ap.add_argument("--latency", type=float, default=0.7e-3,
                    help="seconds per sequential round of messages (the paper: 0.7 ms)")
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--sweep-trials", type=int, default=5)
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    rows, trace, cost_rows = [], [], []
    pbar = bar(total=args.trials * len(args.sizes), desc="fig8", unit="run")
    for t in range(args.trials):
        prob = generators.paper_setup(args.nodes, seed=args.seed + t, arrival=args.arrival)
        for size in args.sizes:
            for m in METHODS:
                r, dt = run(prob, m, size, seed=t)
                rows.append({"trial": t, "size": size, "method": m, "throughput": r.throughput,
                             "bound": r.bound, "ratio": r.throughput / r.bound,
                             "fcfs": prob.fcfs_throughput, "seconds": dt,
                             "generations": r.generations, "migrations": r.migrations})
                if m == "dmcf-gga":
                    c = r.cost(args.latency)
                    reach = {}
                    for level in (0.980, 0.985, 0.990):
                        hit = np.flatnonzero(r.history >= level * r.bound)
                        reach[f"migrations_to_{int(level * 1000)}"] = (
                            int(r.migration_history[hit[0]]) if hit.size else -1)
                    cost_rows.append({**reach, "trial": t, "size": size,
                                      "generations": r.generations,
                                      "migrations": r.migrations,
                                      "phase2_state_changes":
                                          r.iterations["jobs_moved_max_coalition"],
                                      **{k: v for k, v in c.items()}, "ratio": r.ratio})
                    if t < 3:
                        for g, (h, mg) in enumerate(zip(r.history, r.migration_history)):
                            trace.append({"trial": t, "size": size, "generation": g,
                                          "throughput": h, "migrations": int(mg)})
            pbar.update(1)
    pbar.close()
    _write("loadshare_fig8.csv", rows)
    _write("loadshare_fig6.csv", trace)
    _write("loadshare_fig9.csv", cost_rows)
    print(f"{args.nodes} nodes, {args.trials} trials; median throughput (ratio to the bound)")
    print("size  " + "  ".join(f"{m:>20s}" for m in METHODS) + "   paper FF/RR/DMCF")
    for size in args.sizes:
        cells = []
        for m in METHODS:
            sel = [r for r in rows if r["size"] == size and r["method"] == m]
            tp = statistics.median(r["throughput"] for r in sel)
            ra = statistics.median(r["ratio"] for r in sel)
            cells.append(f"{tp:11.4g} ({ra:.4f})")
        paper = PAPER_FIG8.get(size)
        print(f"{size:4d}  " + "  ".join(f"{c:>20s}" for c in cells)
              + (f"   {paper[0]:.3g}/{paper[1]:.3g}/{paper[2]:.3g}" if paper else ""))
    order_ok = 0
    for t in range(args.trials):
        for size in args.sizes:
            v = {r["method"]: r["throughput"] for r in rows
                 if r["trial"] == t and r["size"] == size}  # fmt: skip
            order_ok += v["dmcf-gga"] > v["round-robin"] > v["fcfs-ff"] > v["fcfs"]
    pairs = args.trials * len(args.sizes)
    print(f"paper order DMCF-GGA > RR > FCFS-FF > FCFS in {order_ok}/{pairs} (trial, size) pairs")
    print("migrations to reach 98.0 / 98.5 / 99.0 % of the bound (median; Fig. 9b's levels)")
    for size in args.sizes:
        sel = [r for r in cost_rows if r["size"] == size]
        cells = [statistics.median(r[f"migrations_to_{lv}"] for r in sel)
                 for lv in (980, 985, 990)]  # fmt: skip
        print(f"  {size:4d} " + " ".join(f"{c:6.0f}" for c in cells))
    print(f"search cost (median, s; {args.latency * 1e3:g} ms per sequential round of messages, "
          "as the paper's Fig. 9, not per message): size, generations, migrations, "
          "phase I overhead, migration, phase II, total")
    for size in args.sizes:
        sel = [r for r in cost_rows if r["size"] == size]
        med = {k: statistics.median(r[k] for r in sel) for k in
               ("generations", "migrations", "phase1_overhead", "phase1_migration", "phase2",
                "total")}  # fmt: skip
        print(f"  {size:4d} {med['generations']:6.0f} {med['migrations']:6.0f} "
              f"{med['phase1_overhead']:.3f} {med['phase1_migration']:.3f} {med['phase2']:.3f} "
              f"{med['total']:.3f}")
    sweep = []
    if not args.no_sweep:
        ths = [round(0.05 * k, 2) for k in range(1, 25)]
        pbar = bar(total=len(ths) * len(args.sizes), desc="sweep", unit="run")
        for th in ths:
            for size in args.sizes:
                for t in range(args.sweep_trials):
                    prob = generators.paper_setup(args.nodes, seed=args.seed + t,
                                                  arrival=args.arrival)
                    r, _ = run(prob, "dmcf-gga", size, seed=t, th_c=th)
                    sweep.append({"th_c": th, "size": size, "trial": t, "ratio": r.ratio,
                                  "throughput": r.throughput, "migrations": r.migrations,
                                  "generations": r.generations})
                pbar.update(1)
        pbar.close()
        _write("loadshare_sweep.csv", sweep)
        print("threshold sweep (median ratio / migrations), sizes "
              + " ".join(map(str, args.sizes)))
        for th in ths:
            cells = []
            for size in args.sizes:
                sel = [r for r in sweep if r["th_c"] == th and r["size"] == size]
                cells.append(f"{statistics.median(r['ratio'] for r in sel):.4f}/"
                             f"{statistics.median(r['migrations'] for r in sel):5.0f}")
            print(f"  {th:4.2f}  " + "  ".join(cells))
    _plots(rows, trace, sweep, args.sizes)


def _write(name, rows):
    if not rows:
        return
    with open(os.path.join(OUT, name), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def _plots(rows, trace, sweep, sizes):
    plt = pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    for m in METHODS:
        med = [np.median([r["throughput"] for r in rows if r["size"] == s and r["method"] == m])
               for s in sizes]  # fmt: skip
        ax[0].plot(sizes, med, marker="o", label=m)
    ax[0].set_xlabel("coalition size")
    ax[0].set_ylabel("throughput (Mflops/s)")
    ax[0].set_title("Fig. 8: methods against coalition size")
    ax[0].legend(fontsize=7)
    for s in (23, 45, 100):
        sel = [r for r in trace if r["size"] == s and r["trial"] == 0]
        if sel:
            ax[1].plot([r["throughput"] for r in sel], [r["migrations"] for r in sel],
                       label=str(s))
    ax[1].set_xlabel("throughput")
    ax[1].set_ylabel("migrations")
    ax[1].set_title("Fig. 6: migrations against throughput")
    ax[1].legend(title="size")
    if sweep:
        for s in sizes:
            ths = sorted({r["th_c"] for r in sweep})
            med = [np.median([r["ratio"] for r in sweep if r["th_c"] == t and r["size"] == s])
                   for t in ths]  # fmt: skip
            ax[2].plot(ths, med, label=str(s))
        ax[2].set_xlabel("threshold th_c (node capacities)")
        ax[2].set_ylabel("throughput / bound")
        ax[2].set_title("threshold sweep")
        ax[2].legend(title="size")
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "loadshare_paper.png"), dpi=110)
    print(f"wrote {OUT}/loadshare_*.csv and loadshare_paper.png")


if __name__ == "__main__":
    main()
