"""Issue 40 (h59gap): CP-SAT from the heuristic's answer for the second half of a budget,
against the heuristic alone for the whole budget, at equal time on the published GAP
instances.

For every instance, seed and limit T: A, ``solve_gap(method="heuristic", time_limit=T,
seed=s)``; B, the same heuristic with the limit ``--share`` T, then CP-SAT
(:func:`coalloc.loadshare.gap.solver.solver_outcome`, ``--workers`` workers, the call's
seed) from its assignment (the hint) until T counted from B's start (model building
included), the better of the two kept (CP-SAT's LNS moves many items at once: the
evidence of h58gap says that is what the search lacks). A and B alternate by seed;
every answer is checked by ``verify_gap``. Printed: per instance the median gap (``100
(z - best known) / best known``) over the seeds of A and B, how often CP-SAT improved
the heuristic's half-time answer, then the mean and worst of the medians, the load
average at the start and the end.

    PYTHONPATH=src:. python -m bench.loadshare.cpsat_half --gapdata /work/peers/gapdata \\
        --sets yagiura2004 --only d20400 d40400 --limit 10 --seeds 0 1 2 --workers 1
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.loadshare.gap_published import best_known
from bench.loadshare.knob_ab import instances
from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import solve_gap, verify_gap
from coalloc.loadshare.gap.model import GapCall, objective
from coalloc.loadshare.gap.solver import solver_outcome


def second_half(inst, limit: float, seed: int, share: float, workers: int):
    """B: the heuristic for ``share`` of ``limit``, CP-SAT from its answer to ``limit``;
    ``(objective, heuristic's objective, seconds)``."""
    t0 = time.perf_counter()
    heur = solve_gap(inst, "heuristic", time_limit=share * limit, seed=seed)
    best = heur.objective
    assign = heur.assignment
    if assign is not None and time.perf_counter() - t0 < limit:
        call = GapCall(inst, "min", True, limit, seed, {}, t0)
        out, _, _ = solver_outcome(call, "cpsat", workers, assign)
        if out.assignment is not None and verify_gap(inst, out.assignment).feasible:
            z = objective(inst, out.assignment)
            if best is None or z < best:
                best, assign = z, out.assignment
    return best, heur.objective, assign, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gapdata", default=os.environ.get("COALLOC_GAPDATA"))
    ap.add_argument("--sets", nargs="+", default=["yagiura2004"])
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--limit", type=float, default=10.0)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--share", type=float, default=0.5, help="the heuristic's share of T")
    ap.add_argument("--workers", type=int, default=1, help="CP-SAT's workers")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.gapdata:
        ap.error("give --gapdata or COALLOC_GAPDATA")
    best = best_known(args.gapdata)
    load0 = os.getloadavg()[0]
    rows = []
    for key, inst in bar(instances(args.gapdata, args.sets, args.only), desc="instances"):
        bk = best[key]
        a_gaps, b_gaps, gains, secs = [], [], 0, []
        for seed in args.seeds:
            order = ("A", "B") if seed % 2 == 0 else ("B", "A")
            for side in order:
                if side == "A":
                    t0 = time.perf_counter()
                    r = solve_gap(inst, "heuristic", time_limit=args.limit, seed=seed)
                    secs.append(time.perf_counter() - t0)
                    assert verify_gap(inst, r.assignment).feasible
                    a_gaps.append(100.0 * (r.objective - bk) / bk)
                else:
                    z, zh, assign, el = second_half(inst, args.limit, seed, args.share,
                                                    args.workers)  # fmt: skip
                    secs.append(el)
                    assert verify_gap(inst, assign).feasible
                    gains += z < zh
                    b_gaps.append(100.0 * (z - bk) / bk)
        a, b = statistics.median(a_gaps), statistics.median(b_gaps)
        rows.append((key, a, b))
        say(f"{key}: A {a:.3f} B {b:.3f} (CP-SAT improved {gains}/{len(args.seeds)}; "
            f"A {[round(g, 3) for g in a_gaps]} B {[round(g, 3) for g in b_gaps]}; "
            f"wall max {max(secs):.2f} s)")  # fmt: skip
    load1 = os.getloadavg()[0]
    ma = statistics.mean(r[1] for r in rows)
    mb = statistics.mean(r[2] for r in rows)
    print(f"T={args.limit:g} s, share {args.share:g}, {args.workers} worker(s), seeds "
          f"{args.seeds}: A mean {ma:.3f} worst {max(r[1] for r in rows):.3f}; B mean {mb:.3f} "
          f"worst {max(r[2] for r in rows):.3f}; load {load0:.1f} -> {load1:.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
