"""Issue 40 (h59gap): how many (agent, item) pairs the LP's reduced costs fix at zero
given an upper bound, on the published GAP instances.

For each instance: the LP relaxation (:func:`coalloc.loadshare.gap.bounds.lp_relaxation`,
bound ``LB``, reduced costs ``rc``), one ``heuristic`` call of ``--limit`` seconds (seed 0,
its value ``UB``); a pair can be in an assignment of cost at most ``z`` only if ``LB +
rc_ij <= z``. Printed: the pairs left for an assignment better than the heuristic's (``z =
UB - 1``, integral costs) and for one as good as the best known (``z`` = best known).
Reduced-cost fixing followed by an exact solver on the reduced problem pays only where
these are a small share of the pairs.

    PYTHONPATH=src:. python -m bench.loadshare.rc_fixing --gapdata /work/peers/gapdata \\
        --limit 2 chu1997/d10100 yagiura2004/d40400
"""

from __future__ import annotations

import argparse
import os
import time

from bench.loadshare.gap_published import best_known
from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import read_gap, solve_gap
from coalloc.loadshare.gap.bounds import lp_relaxation


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gapdata", default=os.environ.get("COALLOC_GAPDATA"))
    ap.add_argument("--limit", type=float, default=2.0, help="the heuristic's seconds")
    ap.add_argument("keys", nargs="+", help="set/name, as in data.csv")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.gapdata:
        ap.error("give --gapdata or COALLOC_GAPDATA")
    best = best_known(args.gapdata)
    for key in bar(args.keys, desc="instances"):
        inst = read_gap(os.path.join(args.gapdata, key))[0]
        t0 = time.perf_counter()
        lb, _, rc = lp_relaxation(inst, "min", True)
        t_lp = time.perf_counter() - t0
        ub = solve_gap(inst, "heuristic", time_limit=args.limit, seed=0).objective
        fits = inst.weight <= inst.capacity[:, None]
        n_fit = int(fits.sum())
        for what, z in (("better than the heuristic", ub - 1), ("the best known", best[key])):
            keep = fits & (lb + rc <= z + 1e-6)
            say(f"{key} ({what}, z = {z:g}; LP {lb:.2f} in {t_lp:.2f} s, heuristic {ub:g}): "
                  f"{int(keep.sum())} of {n_fit} pairs left ({keep.sum() / n_fit:.1%}), items "
                  f"with one agent left {int((keep.sum(axis=0) == 1).sum())} of {inst.n}, "
                  f"agents an item, mean {keep.sum(axis=0).mean():.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
