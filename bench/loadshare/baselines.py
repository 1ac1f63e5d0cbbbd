"""The paper's baselines (Fig. 8) under several arrival models, with DMCF-GGA beside them.

Hovey & Jung compare DMCF-GGA with FCFS, FCFS-FF and round robin (Fig. 8) but say neither when
jobs arrive (which orders the nodes' "Mflops ok" reports, and so the coalitions FCFS forms) nor
how round robin deals nodes to coalitions. This benchmark runs every baseline under every
arrival model of :func:`coalloc.loadshare.generators.paper_setup` (Fig. 5: 500 nodes, 30
trials) and both round-robin readings, prints the mean throughput against the paper's Fig. 8
value, and the load-sharing state changes (jobs placed away from their origin) of DMCF-GGA
against round robin beside the paper's "50 % fewer". Every placement is re-checked with the
independent ``verify_placement``.

    python -m bench.loadshare.baselines                  # 30 trials, sizes 23 45 100
    python -m bench.loadshare.baselines --trials 5

Writes bench/out/loadshare_baselines.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics

from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import generators, share, verify_placement

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
#: Fig. 8 of the paper: coalition size -> {method: throughput}.
PAPER = {
    23: {"fcfs-ff": 4.15e5, "round-robin": 4.63e5, "dmcf-gga": 4.95e5},
    45: {"fcfs-ff": 4.29e5, "round-robin": 4.62e5, "dmcf-gga": 4.99e5},
    100: {"fcfs-ff": 4.61e5, "round-robin": 4.94e5, "dmcf-gga": 4.99e5},
}
PAPER_FCFS = 2.74e5
#: (label, method, extra parameters)
METHODS = [
    ("fcfs", "fcfs", {}),
    ("fcfs-ff", "fcfs-ff", {}),
    ("round-robin", "round-robin", {}),
    ("round-robin(turn)", "round-robin", {"deal": "turn"}),
    ("dmcf-gga", "dmcf-gga", {}),
]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--nodes", type=int, default=500)
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--sizes", type=int, nargs="+", default=[23, 45, 100])
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--arrivals", nargs="+", default=list(generators.ARRIVALS),
                    choices=generators.ARRIVALS)  # fmt: skip
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    rows = []
    pbar = bar(total=len(args.arrivals) * args.trials, desc="baselines", unit="grid")
    for arrival in args.arrivals:
        for t in range(args.trials):
            prob = generators.paper_setup(args.nodes, seed=args.seed + t, arrival=arrival)
            for size in args.sizes:
                for label, method, extra in METHODS:
                    r = share(prob, method, coalition_size=size, seed=t, **extra)
                    rep = verify_placement(prob, r.placement, claimed=r.throughput)
                    if not rep.ok:
                        raise SystemExit(f"verification failed: {label} {arrival} {size}: {rep}")
                    rows.append(
                        {
                            "arrival": arrival,
                            "trial": t,
                            "size": size,
                            "method": label,
                            "throughput": r.throughput,
                            "bound": r.bound,
                            "jobs_moved": int(r.iterations.get("jobs_moved", 0)),
                        }
                    )
            pbar.update(1)
    pbar.close()
    with open(os.path.join(OUT, "loadshare_baselines.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)

    def mean(arrival, size, label, key="throughput"):
        return statistics.fmean(r[key] for r in rows if r["arrival"] == arrival
                                and r["size"] == size and r["method"] == label)  # fmt: skip

    print(
        f"{args.nodes} nodes, {args.trials} trials: mean throughput (x1e5), deviation from "
        f"the paper's Fig. 8 in brackets; FCFS in the paper {PAPER_FCFS:.3g}"
    )
    head = "| arrival | size | " + " | ".join(m[0] for m in METHODS) + " | DMCF-GGA / bound |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for arrival in args.arrivals:
        for size in args.sizes:
            cells = []
            for label, _method, _ in METHODS:
                v = mean(arrival, size, label)
                ref = PAPER.get(size, {}).get(label) or (PAPER_FCFS if label == "fcfs" else None)
                cells.append(f"{v / 1e5:.3f}" + (f" ({100 * (v / ref - 1):+.1f} %)" if ref else ""))
            worst = min(r["throughput"] / r["bound"] for r in rows if r["arrival"] == arrival
                        and r["size"] == size and r["method"] == "dmcf-gga")  # fmt: skip
            ratio = mean(arrival, size, "dmcf-gga") / mean(arrival, size, "dmcf-gga", "bound")
            print(
                f"| {arrival} | {size} | "
                + " | ".join(cells)
                + f" | {ratio:.4f} (worst {worst:.4f}) |"
            )
    above = sum(
        all(mean(a, s, "dmcf-gga") > mean(a, s, lab) for lab, _, _ in METHODS[:-1])
        for a in args.arrivals
        for s in args.sizes
    )
    print(
        f"DMCF-GGA above every baseline (means) in {above}/"
        f"{len(args.arrivals) * len(args.sizes)} (arrival, size) cells"
    )
    print(
        "load-sharing state changes (jobs placed away from their origin, mean over trials): "
        "DMCF-GGA against round robin; the paper: DMCF-GGA uses 50 % fewer"
    )
    for arrival in args.arrivals:
        cells = []
        for size in args.sizes:
            d = mean(arrival, size, "dmcf-gga", "jobs_moved")
            rr = mean(arrival, size, "round-robin", "jobs_moved")
            cells.append(f"{size}: {d:.0f} vs {rr:.0f} ({100 * (d / rr - 1):+.0f} %)")
        print(f"  {arrival}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
