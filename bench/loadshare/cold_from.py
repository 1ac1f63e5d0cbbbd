"""Issue 36's contract at 0.2-0.75 s (h52gap): from which budget should the GAP default
(``portfolio``) start CP-SAT beside its search, and how (``exact.PORTFOLIO_COLD_FROM``,
``exact.PORTFOLIO_EARLY_PAIRS``)?

Per rep, instance, seed and limit T five calls run one after the other, their order
turned by one each time so that a change of load hits them alike: ``heuristic``; the
default with CP-SAT started cold at every limit (``cold``: ``PORTFOLIO_COLD_FROM = 0``);
the default with CP-SAT from the heuristic's first feasible assignment (``hinted``:
``PORTFOLIO_COLD_FROM = inf``, ``PORTFOLIO_EARLY_PAIRS = None``); and the default with
CP-SAT never started (``none``: ``_SOLVER_FIT = 0``, the heuristic with the portfolio's
callback: the race's own spread, the floor of the counts); and the default as it is
(``default``). Printed per T and variant: the
pairs where the variant's answer is worse than the heuristic's / better / equal (no
answer counts as the worst), the proofs (the variant ``optimal`` where the heuristic's
call is not), the mean gap to the best known where one is published, and the load
average at the start and the end. Every answer is checked by ``verify_gap``.

    PYTHONPATH=src:. python -m bench.loadshare.cold_from --data /work/peers/gapdata \\
        --only chu1997/b05100 chu1997/c10100 chu1997/d05100 chu1997/d10100 heavy-10x80 \\
        --limits 0.2 0.3 0.5 0.75 --seeds 4 --reps 1
"""

from __future__ import annotations

import argparse
import os
import statistics

from bench.loadshare.early_race import _instance, _value
from bench.loadshare.gap_published import best_known
from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import solve_gap, verify_gap
from coalloc.loadshare.gap import exact

#: the variants: (method, the knobs of :mod:`coalloc.loadshare.gap.exact` set for it)
VARIANTS = {
    "heuristic": ("heuristic", {}),
    "cold": ("portfolio", {"PORTFOLIO_COLD_FROM": 0.0}),
    "hinted": ("portfolio", {"PORTFOLIO_COLD_FROM": float("inf"), "PORTFOLIO_EARLY_PAIRS": None}),
    "none": ("portfolio", {"PORTFOLIO_COLD_FROM": float("inf"), "_SOLVER_FIT": 0.0}),
    "default": ("portfolio", {}),
}


def _call(inst, variant: str, limit: float, seed: int):
    method, knobs = VARIANTS[variant]
    old = {name: getattr(exact, name) for name in knobs}
    try:
        for name, value in knobs.items():
            setattr(exact, name, value)
        res = solve_gap(inst, method, time_limit=limit, seed=seed)
    finally:
        for name, value in old.items():
            setattr(exact, name, value)
    if res.assignment is not None:
        assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA", ""))
    ap.add_argument("--only", nargs="+", default=["heavy-10x80"])
    ap.add_argument("--limits", type=float, nargs="+", default=[0.2, 0.3, 0.5, 0.75])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    add_quiet(ap)
    args = ap.parse_args(argv)
    from coalloc._shared.milp import preload

    preload("cpsat")  # (every variant on the same footing: no first import in the timing)
    best = best_known(args.data) if args.data else {}
    insts = [(n, _instance(args.data, n)) for n in args.only]
    for _, inst in insts:
        solve_gap(inst, seed=0)  # the instance's one-time costs, before any timed call
    load0 = os.getloadavg()[0]
    names = ["heuristic"] + [v for v in args.variants if v != "heuristic"]
    counts = {(t, v): [0, 0, 0, 0] for t in args.limits for v in names[1:]}
    gaps: dict = {}
    jobs = [(r, n, i, s, t) for r in range(args.reps) for n, i in insts
            for s in range(args.seeds) for t in args.limits]  # fmt: skip
    for k, (_, name, inst, seed, limit) in enumerate(bar(jobs, desc="slots", unit="slot")):
        turn = k % len(names)
        out = {v: _call(inst, v, limit, seed) for v in names[turn:] + names[:turn]}
        h = _value(out["heuristic"])
        for v in names:
            if name in best and out[v].has_solution:
                bk = best[name]
                gaps.setdefault((limit, v), []).append(100.0 * abs(out[v].objective - bk) / bk)
            if v == "heuristic":
                continue
            d = _value(out[v])
            c = counts[(limit, v)]
            c[0 if d > h else 1 if h > d else 2] += 1
            c[3] += out[v].status == "optimal" and out["heuristic"].status != "optimal"
    say(f"load average {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    say("| T | variant | worse / better / equal than heuristic | proofs | mean gap % |")
    for limit in args.limits:
        for v in names:
            g = gaps.get((limit, v))
            cell = f"{statistics.mean(g):.3f}" if g else "-"
            if v == "heuristic":
                say(f"| {limit:g} | {v} | - | - | {cell} |")
                continue
            w, b, e, p = counts[(limit, v)]
            say(f"| {limit:g} | {v} | {w} / {b} / {e} | {p} | {cell} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
