"""Issue 40: where a short timed GAP call goes on a large instance without the LP, and the
tabu search from the feasible fallback (``gap.search._FROM_FALLBACK``) against the search
from the multipliers' greedy, interleaved per seed in one process.

For each ``--limits`` T and seed, ``solve_gap(method="heuristic", time_limit=T)`` runs
twice, the switch off then on; printed per T: the median gap to the best known value (%)
and its range over the seeds, each answer checked by ``verify_gap``. ``--profile`` first
times the steps of one call at the largest T (cProfile, cumulative seconds). Record the
load average beside the figures: the searches' iterations follow the CPU they get.

    PYTHONPATH=src python -m bench.loadshare.fallback_start --instance c801600 \\
        --limits 0.25 0.4 0.6 1 --seeds 5 --profile --gapdata /path/to/data
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics

from bench.loadshare.gap_published import best_known
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count, seconds
from coalloc.loadshare import read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import search

#: The functions whose cumulative seconds ``--profile`` prints.
STEPS = ("start", "fallback", "run", "subgradient_steps", "bound_steps", "knapsack_steps")


def _profile(inst, limit: float) -> None:
    prof = cProfile.Profile()
    prof.enable()
    res = solve_gap(inst, "heuristic", time_limit=limit, seed=0)
    prof.disable()
    say(f"profile, T = {limit:g} s: objective {res.objective}, "
        f"tabu iterations {res.iterations['tabu_iterations']}")  # fmt: skip
    for (path, _, name), row in sorted(pstats.Stats(prof).stats.items()):
        if name in STEPS and "loadshare/gap" in path:
            say(f"  {os.path.basename(path)}:{name:20s} calls {row[1]:5d}  {row[3]:7.3f} s")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instance", default="c801600", help="a Yagiura instance name")
    ap.add_argument("--gapdata", default=os.environ.get("COALLOC_GAPDATA"),
                    help="fontanf/generalizedassignmentsolver's data/ folder")  # fmt: skip
    ap.add_argument("--limits", nargs="+", type=seconds(), default=[0.25, 0.4, 0.6, 1.0])
    ap.add_argument("--seeds", type=count(), default=5, help="seeds 0 .. N-1")
    ap.add_argument("--profile", action="store_true", help="time the steps of one call")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.gapdata:
        ap.error("give --gapdata or COALLOC_GAPDATA")
    key = f"yagiura2004/{args.instance}"
    inst = read_gap(os.path.join(args.gapdata, key))[0]
    best = best_known(args.gapdata).get(key)
    solve_gap(inst, "heuristic", time_limit=0.1, seed=0)  # warm: imports, first calls
    if args.profile:
        _profile(inst, max(args.limits))
    old = search._FROM_FALLBACK
    say(f"{args.instance}: median gap % (range) over {args.seeds} seeds, best known {best}")
    say("| T (s) | greedy start | fallback start |")
    try:
        for limit in bar(args.limits, desc="limits"):
            gaps = {False: [], True: []}
            for seed in range(args.seeds):
                for flag in (False, True):
                    search._FROM_FALLBACK = flag
                    res = solve_gap(inst, "heuristic", time_limit=limit, seed=seed)
                    if res.assignment is None:
                        gaps[flag].append(float("inf"))
                        continue
                    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
                    gaps[flag].append(100.0 * (res.objective - best) / best)
            cells = [f"{statistics.median(g):.3f} ({min(g):.3f}-{max(g):.3f})"
                     for g in (gaps[False], gaps[True])]  # fmt: skip
            say(f"| {limit:g} | {cells[0]} | {cells[1]} |")
    finally:
        search._FROM_FALLBACK = old


if __name__ == "__main__":
    main()
