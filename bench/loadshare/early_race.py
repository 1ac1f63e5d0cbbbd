"""Issue 36's contract at the GAP's smallest budgets (h51gap): how often the default
(``portfolio``) and ``heuristic``, called one after the other at the same limit and seed,
give different answers, with ``search._EARLY_WORK`` at each of the values given.

Every instance is warmed by one untimed default call; then per rep, instance and seed the
values of ``--work`` run in turn (the order alternating), each the two methods one after
the other (the order alternating). Printed per value: the pairs where the default's answer
is worse, where the heuristic's is worse, and where they are equal (no answer counts as
the worst), and the load average at the start and the end.

    PYTHONPATH=src:. python -m bench.loadshare.early_race --data /work/peers/gapdata \\
        --only chu1997/b05100 chu1997/c10100 chu1997/d05100 chu1997/d10100 heavy-10x80 \\
        --limit 0.05 --reps 5 --work 0 150000
"""

from __future__ import annotations

import argparse
import os

from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import read_gap, solve_gap
from coalloc.loadshare.gap import search


def _instance(data: str, name: str):
    """A published file (``set/name``) or ``heavy-10x80``, the contract audit's instance."""
    if name == "heavy-10x80":
        from bench.shared.contract_audit import gap_heavy

        return gap_heavy(10, 80, 5)
    return read_gap(os.path.join(data, name))[0]


def _value(res) -> float:
    if not res.has_solution:
        return float("inf")
    return res.objective if res.sense == "min" else -res.objective


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA", ""))
    ap.add_argument("--only", nargs="+", default=["heavy-10x80"])
    ap.add_argument("--limit", type=float, default=0.05)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--work", type=int, nargs="+", default=[0, search._EARLY_WORK])
    add_quiet(ap)
    args = ap.parse_args(argv)
    from coalloc._shared.milp import preload

    preload("cpsat")  # (both methods on the same footing: no first import in the timing)
    insts = [(n, _instance(args.data, n)) for n in args.only]
    for _, inst in insts:
        solve_gap(inst, seed=0)  # the instance's one-time costs, before any timed call
    load0 = os.getloadavg()[0]
    counts = {w: [0, 0, 0] for w in args.work}
    old = search._EARLY_WORK
    jobs = [(r, n, i, s) for r in range(args.reps) for n, i in insts for s in range(args.seeds)]
    try:
        for rep, _, inst, seed in bar(jobs, desc="pairs", unit="slot"):
            turn = (rep + seed) % 2
            for work in args.work if turn == 0 else args.work[::-1]:
                search._EARLY_WORK = work
                methods = ("portfolio", "heuristic") if turn else ("heuristic", "portfolio")
                out = {m: solve_gap(inst, m, time_limit=args.limit, seed=seed) for m in methods}
                d, h = _value(out["portfolio"]), _value(out["heuristic"])
                counts[work][0 if d > h else 1 if h > d else 2] += 1
    finally:
        search._EARLY_WORK = old
    say(f"T = {args.limit:g} s, load average {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    for work, (dw, hw, eq) in counts.items():
        say(f"_EARLY_WORK={work}: default worse {dw}, heuristic worse {hw}, equal {eq} "
            f"(of {dw + hw + eq})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
