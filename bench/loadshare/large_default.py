"""The GAP default on instances larger than ``PORTFOLIO_PAIRS``: CP-SAT beside its search
from ``PORTFOLIO_LARGE_FROM`` seconds (B) against the search alone (A, the knob None), at
equal time, alternated, every answer checked by ``verify_gap``.

The instances: the contract audit's heavy generator (``bench.shared.audit_cases.gap_heavy``:
a third of the agents 5x heavier) at several sizes and slacks, and Chu-Beasley's types
c and d from the package's own generator (:func:`coalloc.loadshare.generate_gap`), each
with a referee: the exact method with ``--referee-limit`` seconds (its objective, and
whether it proved it). Printed per instance and limit: the median over the seeds of A's and
B's objective, their gaps to the referee, how many calls proved their answer (status
``optimal``) and the median wall time, then the totals, with the load average at the start
and the end.

    PYTHONPATH=src:. python -m bench.loadshare.large_default --limits 2 5 10 --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.shared._progress import add_quiet, bar, say
from bench.shared.audit_cases import gap_heavy
from coalloc.loadshare import generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import exact

#: name -> a function building the instance
CASES = {
    "heavy-20x200-s1.5": lambda: gap_heavy(20, 200, 11, slack=1.5),
    "heavy-20x200-s1.3": lambda: gap_heavy(20, 200, 13, slack=1.3),
    "heavy-30x300-s1.4": lambda: gap_heavy(30, 300, 21, slack=1.4),
    "heavy-15x300-s1.6": lambda: gap_heavy(15, 300, 22, slack=1.6),
    "heavy-40x400-s1.5": lambda: gap_heavy(40, 400, 23, slack=1.5),
    "typeC-20x200": lambda: generate_gap("c", 20, 200, seed=61),
    "typeD-20x200": lambda: generate_gap("d", 20, 200, seed=61),
}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[2.0, 5.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--only", nargs="+", choices=sorted(CASES), help="these cases only")
    ap.add_argument("--referee-limit", type=float, default=60.0)
    add_quiet(ap)
    args = ap.parse_args(argv)
    names = args.only or list(CASES)
    on = exact.PORTFOLIO_LARGE_FROM
    load0 = os.getloadavg()[0]
    say(f"load {load0:.2f}; B: PORTFOLIO_LARGE_FROM = {on}, A: None")
    total = len(names) * (1 + 2 * len(args.limits) * len(args.seeds))
    rows = []
    with bar(total=total, desc="calls") as progress:
        for name in names:
            inst = CASES[name]()
            ref = solve_gap(inst, "exact", time_limit=args.referee_limit, seed=0)
            progress.update(1)
            z_ref = ref.objective
            for limit in args.limits:
                got = {"A": [], "B": []}
                for k, seed in enumerate(args.seeds):
                    order = ("A", "B") if k % 2 == 0 else ("B", "A")
                    for arm in order:
                        exact.PORTFOLIO_LARGE_FROM = None if arm == "A" else on
                        try:
                            t = time.perf_counter()
                            res = solve_gap(inst, time_limit=limit, seed=seed)
                            wall = time.perf_counter() - t
                        finally:
                            exact.PORTFOLIO_LARGE_FROM = on
                        if res.assignment is not None:
                            assert verify_gap(inst, res.assignment).feasible, (name, arm)
                        got[arm].append((res.objective, res.status == "optimal", wall))
                        progress.update(1)
                rows.append((name, inst.m * inst.n, limit, z_ref, ref.status, got))
    print("| instance | pairs | T | referee | A median (gap) | B median (gap) | "
          "proved A / B | wall A / B (median) |")
    print("|---|---|---|---|---|---|---|---|")
    sums = {"A": [], "B": []}
    for name, pairs, limit, z_ref, st, got in rows:
        cells = []
        for arm in ("A", "B"):
            objs = [o for o, _, _ in got[arm] if o is not None]
            med = statistics.median(objs) if objs else None
            gap = None if med is None or not z_ref else 100 * (med - z_ref) / z_ref
            if gap is not None:
                sums[arm].append(gap)
            cells.append("-" if med is None else f"{med:g} ({gap:.3f} %)")
        proved = "/".join(str(sum(p for _, p, _ in got[a])) for a in ("A", "B"))
        walls = " / ".join(f"{statistics.median(w for _, _, w in got[a]):.2f}" for a in ("A", "B"))
        ref = f"{z_ref:g}" + ("" if st == "optimal" else f" ({st})")
        print(f"| {name} | {pairs} | {limit:g} | {ref} | {cells[0]} | {cells[1]} | "
              f"{proved} of {len(got['A'])} | {walls} |")
    for arm in ("A", "B"):
        if sums[arm]:
            print(f"{arm}: mean gap to the referee {statistics.mean(sums[arm]):.3f} %, "
                  f"worst {max(sums[arm]):.3f} %")
    print(f"load {load0:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
