"""The GAP's "no" with the LP relaxation's checked certificate (``heuristic._CERTIFY_LP``)
against the search run first (the knob off), on instances whose LP relaxation is
infeasible while the count and volume bounds prove nothing.

The instances: the contract audit's heavy generator
(``bench.shared.audit_cases.gap_heavy``) at slacks where it is infeasible, each checked
here (no cheap proof; the untimed exact method says ``infeasible``). For every method and
limit, one call with the knob on and one with it off (alternating which goes first):
the status, the wall time, the tabu iterations run. Then the conflict search
(:func:`coalloc.loadshare.explain_gap`) with the oracle's certificate on and off
(``explain.LP_CERTIFICATE``): seconds, oracle calls, the conflict's size, its proof.

    PYTHONPATH=src:. python -m bench.loadshare.lp_certificate --limits 1 10
"""

from __future__ import annotations

import argparse
import os
import time

from bench.shared._progress import add_quiet, bar, say
from bench.shared.audit_cases import gap_heavy
from coalloc.loadshare import explain, explain_gap, solve_gap
from coalloc.loadshare.gap import bounds, heuristic

#: (m, n, seed, slack) of ``gap_heavy``: infeasible, and no cheap proof says so
CASES = ((20, 200, 7, 1.2), (10, 80, 31, 1.0), (10, 80, 32, 0.95), (8, 60, 35, 1.0))
METHODS = ("portfolio", "heuristic", "exact")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[1.0, 10.0])
    ap.add_argument("--explain-limit", type=float, default=10.0)
    add_quiet(ap)
    args = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    say(f"load {load0:.2f}")
    solve_gap(gap_heavy(3, 8, 1), "exact")  # the solvers imported before any timing
    rows, expl = [], []
    total = len(CASES) * (len(METHODS) * len(args.limits) * 2 + 2)
    with bar(total=total, desc="calls") as progress:
        for k, (m, n, seed, slack) in enumerate(CASES):
            inst = gap_heavy(m, n, seed, slack=slack)
            name = f"heavy {m}x{n} s{seed} slack {slack:g}"
            assert not bounds.count_bound_infeasible(inst), name
            assert inst.weight.min(axis=0).sum() <= inst.capacity.sum(), name
            for method in METHODS:
                for limit in args.limits:
                    got = {}
                    for on in ((True, False) if k % 2 == 0 else (False, True)):
                        heuristic._CERTIFY_LP = on
                        try:
                            t = time.perf_counter()
                            res = solve_gap(inst, method, time_limit=limit, seed=0)
                            wall = time.perf_counter() - t
                        finally:
                            heuristic._CERTIFY_LP = True
                        tabu = res.iterations.get("tabu_iterations",
                                                  res.iterations.get("hint_tabu_iterations"))
                        got[on] = (res.status, wall, tabu)
                        progress.update(1)
                    rows.append((name, method, limit, got))
            for on in (False, True):
                explain.LP_CERTIFICATE = on
                try:
                    t = time.perf_counter()
                    e = explain_gap(inst, time_limit=args.explain_limit)
                    wall = time.perf_counter() - t
                finally:
                    explain.LP_CERTIFICATE = True
                expl.append((name, on, wall, e.oracle_calls, len(e.conflict["items"]),
                             e.certificate, e.minimal))
                progress.update(1)
    print("| instance | method | T | off: status, s, tabu iterations | on: status, s, tabu "
          "iterations |")
    print("|---|---|---|---|---|")
    for name, method, limit, got in rows:
        cells = [f"{s}, {w:.3f}, {it}" for s, w, it in (got[False], got[True])]
        print(f"| {name} | {method} | {limit:g} | {cells[0]} | {cells[1]} |")
    print()
    print("| instance | oracle certificate | s | oracle calls | conflict items | proof | "
          "minimal |")
    print("|---|---|---|---|---|---|---|")
    for name, on, wall, calls, size, proof, minimal in expl:
        print(f"| {name} | {'on' if on else 'off'} | {wall:.2f} | {calls} | {size} | "
              f"{proof} | {minimal} |")
    print(f"load {load0:.2f} -> {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
