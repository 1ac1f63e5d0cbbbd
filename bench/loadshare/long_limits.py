"""GAP time limits as caps, not targets: when the answer comes, and what it is.

The timed heuristic lays its phases out over at most
``coalloc.loadshare.gap.search._HORIZON`` seconds (10 s) and runs its last phase on to the
deadline, and a phase but the last ends when the call's best has stalled for a count of
iterations (``search._STALL``). Before, the phases were shares of the whole limit, so that a
longer limit delayed what the search proves (the core phase alone took 0.3 of it). This
bench runs, for each ``--limits`` T, the ``heuristic`` and the default (``portfolio``) as
now (``now``) and as before (``before``: ``_HORIZON = None``, ``_STALL = 0``), alternated,
on:

* the contract suite's three GAP instances (``tests/shared/test_contract.py``: type a,
  type d, type b), whose untimed calls prove their answer in well under a second;
* with ``--data DIR`` (or ``COALLOC_GAPDATA``), the published files named by ``--published``
  (default Chu-Beasley d05100 and d10100) at ``--published-limits``, where the heuristic
  cannot prove its answer and runs to the deadline: the answer's gap to the best known value
  (a longer limit must not answer worse than the 10 s call).

Every assignment is re-checked by ``verify_gap``. Printed per call: the wall seconds to the
answer, the status and the objective.

    PYTHONPATH=src:. python -m bench.loadshare.long_limits --quiet
    PYTHONPATH=src:. python -m bench.loadshare.long_limits --limits 30 --no-published
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Optional

from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import search
from tests.shared import test_contract as tc


def _call(inst, method: str, limit: float, arm: tuple, seed: int) -> tuple:
    """(wall seconds, status, objective) of one call under ``arm`` (``(horizon, stall)``),
    its answer checked."""
    search._HORIZON, search._STALL = arm
    t = time.perf_counter()
    r = solve_gap(inst, method=method, seed=seed, time_limit=limit)
    wall = time.perf_counter() - t
    if r.assignment is not None and not verify_gap(inst, r.assignment).feasible:
        raise SystemExit(f"{method} at {limit} s: the answer does not verify")
    return wall, r.status, r.objective


def _published(data: str, names: list) -> list:
    """``(name, instance, best known)`` of the Chu-Beasley files named (``d05100``, ...)."""
    from bench.loadshare.gap_published import best_known

    best = best_known(data)
    out = []
    for name in names:
        key = f"chu1997/{name}"
        inst = read_gap(os.path.join(data, key))[0]
        out.append((name, inst, best[key]))
    return out


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--limits", type=float, nargs="+", default=[3.0, 10.0, 30.0, 100.0])
    ap.add_argument("--methods", nargs="+", default=["heuristic", "portfolio"])
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA"))
    ap.add_argument("--published", nargs="*", default=["d05100", "d10100"])
    ap.add_argument("--published-limits", type=float, nargs="+", default=[10.0, 30.0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--no-published", action="store_true")
    args = ap.parse_args(argv)
    default = (search._HORIZON, search._STALL)
    arms = (("before", (None, 0.0)), ("now", default))
    say(f"load average {os.getloadavg()}; horizon {default[0]} s, stall {default[1]}")
    print("| instance | method | T s | before: s, status, objective "
          "| now: s, status, objective |")  # fmt: skip
    print("|---|---|---:|---|---|")
    calls = [(case, method, limit) for case in tc.CASES["gap"] if case != "infeasible"
             for method in args.methods for limit in args.limits]  # fmt: skip
    for i, (case, method, limit) in enumerate(bar(calls, desc="contract cases")):
        inst = tc.CASES["gap"][case][0]()  # the GapInstance the suite builds
        order = arms if i % 2 == 0 else arms[::-1]  # alternated: neither arm always first
        got = {name: _call(inst, method, limit, h, 0) for name, h in order}
        cells = [f"{w:.2f}, {s}, {o:g}" if o is not None else f"{w:.2f}, {s}"
                 for w, s, o in (got["before"], got["now"])]  # fmt: skip
        say(f"| {case} | {method} | {limit:g} | " + " | ".join(cells) + " |")
    if args.data and not args.no_published and args.published:
        print()
        print("| instance | T s | seed | before: gap % | now: gap % |")
        print("|---|---:|---:|---:|---:|")
        runs = [(p, limit, seed) for p in _published(args.data, args.published)
                for limit in args.published_limits for seed in args.seeds]  # fmt: skip
        for i, ((name, inst, best), limit, seed) in enumerate(bar(runs, desc="published")):
            order = arms if i % 2 == 0 else arms[::-1]
            got = {a: _call(inst, "heuristic", limit, h, seed) for a, h in order}
            gaps = [100.0 * (got[a][2] - best) / best for a in ("before", "now")]
            say(f"| {name} | {limit:g} | {seed} | {gaps[0]:.3f} | {gaps[1]:.3f} |")
    elif not args.no_published:
        say("published files skipped: give --data DIR or COALLOC_GAPDATA")
    search._HORIZON, search._STALL = default
    say(f"load average {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
