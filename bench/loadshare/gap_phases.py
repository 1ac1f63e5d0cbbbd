"""Issue 36/40 follow-up (h50gap): where a timed GAP call's time goes past its limit.

Runs the default (``portfolio``) and ``heuristic`` on the named GAP files at each limit,
``--reps`` seeds each, and records per call the wall and process seconds; with
``--phases`` the phases are timed (wrappers around the LP, the search's start, each tabu
round, the bound steps, the sub-solvers, the CP-SAT thread, the result's building), and for
every call past ``T + max(0.05, 0.05 T)`` (and the slowest of each method and limit) it
prints which phases ran past the limit and by how much. ``--busy K`` starts K busy loops
beside it (killed at the end) to hold the load at about 6-8 on the 2-core VM.

    PYTHONPATH=src:. python -m bench.loadshare.gap_phases --data /work/peers/gapdata \\
        --only d10100 d20100 d20200 d40400 --limits 0.5 1 2 --reps 5 --busy 2 --phases

Prints the load average with every block. The wrappers add a few microseconds a phase.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from bench.loadshare.knob_ab import instances
from bench.shared._phases import EVENTS, busy
from bench.shared._phases import wrap as _wrap
from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import solve_gap, verify_gap


def instrument() -> None:
    """Wrap the phases of the heuristic and the portfolio (module attributes, in place)."""
    from coalloc.loadshare.gap import exact, heuristic, lagrangian, search, solver, tabu

    _wrap(heuristic, "lp_relaxation", "lp")
    _wrap(heuristic, "run_search", "search(all)")
    _wrap(search._Search, "start", "start")
    _wrap(search._Search, "fallback", "fallback")
    _wrap(search._Search, "subgap", "subgap")
    _wrap(search._Search, "relink", "relink")
    _wrap(search._Search, "offer", "offer(portfolio hook)")
    _wrap(tabu.TabuState, "run", "tabu round")
    _wrap(lagrangian.RelaxationBounds, "start", "bounds start")
    _wrap(lagrangian.RelaxationBounds, "subgradient_round", "subgradient round")
    _wrap(lagrangian.RelaxationBounds, "knapsack_round", "knapsack round")
    _wrap(solver.SolverThread, "run", "cpsat thread")
    _wrap(exact._Timed, "wait", "wait for cpsat")
    _wrap(exact, "_combine", "combine")
    _wrap(exact, "settle", "settle(exact)")
    from coalloc.loadshare.gap import solve as _solve

    _wrap(_solve, "settle", "settle(solve_gap)")




def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA", "/work/peers/gapdata"))
    ap.add_argument("--sets", nargs="+", default=["chu1997", "yagiura2004"])
    ap.add_argument("--only", nargs="+", default=["d10100", "d20100", "d20200", "d40400"])
    ap.add_argument("--limits", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    ap.add_argument("--methods", nargs="+", default=["portfolio", "heuristic"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--phases", action="store_true")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.phases:
        instrument()
    insts = instances(args.data, args.sets, set(args.only))
    loops = busy(args.busy)
    try:
        solve_gap(insts[0][1], "portfolio", time_limit=0.2)  # imports, warm
        for limit in args.limits:
            allow = limit + max(0.05, 0.05 * limit)
            for method in args.methods:
                walls, over = [], []
                for key, inst in bar(insts, desc=f"{method} T={limit:g}", leave=False):
                    for seed in range(args.reps):
                        EVENTS.clear()
                        c0, t0 = time.process_time(), time.perf_counter()
                        res = solve_gap(inst, method, time_limit=limit, seed=seed)
                        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                        assert res.assignment is None or verify_gap(inst, res.assignment)
                        walls.append(wall)
                        if wall > allow:
                            over.append((wall, cpu, key, seed, t0, list(EVENTS)))
                print(f"{method} T={limit:g}: {len(walls)} calls, wall median "
                      f"{statistics.median(walls):.3f} max {max(walls):.3f} "
                      f"(allowed {allow:.3f}), past: {len(over)}; load "
                      f"{open('/proc/loadavg').read().split()[0]}", flush=True)
                for wall, cpu, key, seed, t0, ev in sorted(over, reverse=True)[:4]:
                    print(f"  {key} seed {seed}: wall {wall:.3f} cpu {cpu:.3f}")
                    late = [(e - (t0 + limit), e - s, n) for n, s, e in ev if e > t0 + limit]
                    for past, took, n in sorted(late, reverse=True)[:8]:
                        print(f"    {n:24s} ended {past:+.3f} s past T, took {took:.3f} s")
    finally:
        for p in loops:
            p.kill()


if __name__ == "__main__":
    main()
