"""Time limits that are never reached (stop 58's fuzz finding), measured.

Two parts, on the cases of ``tests/shared/test_contract.py`` (every family, every method):

* **probe**: every method of every case under ``--limits`` (default 2**63 - 1 and 1e300
  seconds), each call in a forked child given ``--wait`` seconds (exact methods twice
  that): ``done STATUS`` when it returned, ``running`` when it was still at work (a
  heuristic's anytime search spends the time it is given), ``ERR ...`` when it raised.
  Before the fix the exact methods' kernels raised ``OverflowError`` at 2**63 - 1 s and
  the GAP default a thread join's ``OverflowError`` (``timestamp out of range``).
* **gap**: the GAP's timed ``exact`` at ``--gap-limit`` (default 100 s) on the suite's GAP
  instances, with the solver's start capped (``HINT_MAX_SECONDS``, now) and uncapped (a
  quarter of the limit, before), beside the untimed call: wall seconds and the answer.

Run from the repository root::

    PYTHONPATH=src:. python -m bench.shared.limit_never_reached [--part probe|gap|both] [--quiet]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import time
from typing import Any, Optional

from bench.shared._progress import add_quiet, bar, say
from tests.shared import test_contract as tc


def _child(kind: str, case: str, method: str, limit: Optional[float], hint_max: Optional[float],
           queue: Any) -> None:  # fmt: skip
    try:
        if hint_max is not None:
            from coalloc.loadshare.gap import exact

            exact.HINT_MAX_SECONDS = hint_max
        t = time.perf_counter()
        res = tc._run(tc.instance(kind, case), method, limit)
        queue.put(("done", res.status, res.objective, round(time.perf_counter() - t, 2)))
    except BaseException as exc:  # noqa: BLE001 - what the probe looks for
        queue.put(("ERR", f"{type(exc).__name__}: {exc}", None, None))


def _call(kind: str, case: str, method: str, limit: Optional[float], wait: float,
          hint_max: Optional[float] = None) -> tuple:  # fmt: skip
    """One call in a forked child: its outcome, or ``("running", ...)`` after ``wait``."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(kind, case, method, limit, hint_max, queue))
    proc.start()
    proc.join(wait)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return ("running", None, None, None)
    return queue.get()


def probe(limits: list, wait: float) -> int:
    """Every method of every case under each limit; the number of calls that raised."""
    errors = 0
    calls = [(kind, case, method, limit)
             for kind, case, method in (p.values for p in tc._repeat_params())
             if case == next(iter(tc.CASES[kind]))  # one case a family: the first
             for limit in limits]  # fmt: skip
    for kind, case, method, limit in bar(calls, desc="probe"):
        w = 2 * wait if tc.is_exact(kind, method) else wait
        out = _call(kind, case, method, limit, w)
        errors += out[0] == "ERR"
        say(f"{kind:10s} {case:12s} {method:14s} {limit!r:>22}  {out[0]} {out[1] or ''}")
    say(f"probe: {errors} of {len(calls)} calls raised")
    return errors


def gap(limit: float) -> None:
    """The GAP's timed exact method with the solver's start capped and uncapped."""
    print(f"| instance | untimed | T = {limit:g} s, a quarter (before) "
          f"| T = {limit:g} s, capped (now) |")  # fmt: skip
    print("|---|---|---|---|")
    for case in bar(list(tc.CASES["gap"]), desc="gap"):
        untimed = _call("gap", case, "exact", None, 600)
        before = _call("gap", case, "exact", limit, 2 * limit, hint_max=float("inf"))
        now = _call("gap", case, "exact", limit, 2 * limit)
        cells = [f"{o[3]} s ({o[1]} {o[2]})" for o in (untimed, before, now)]
        say(f"| {case} | " + " | ".join(cells) + " |")


def main(argv: Optional[list] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("probe", "gap", "both"), default="both")
    ap.add_argument("--limits", type=float, nargs="+", default=[9223372036854775807, 1e300])
    ap.add_argument("--wait", type=float, default=2.5)
    ap.add_argument("--gap-limit", type=float, default=100.0)
    add_quiet(ap)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()}")
    errors = probe(args.limits, args.wait) if args.part in ("probe", "both") else 0
    if args.part in ("gap", "both"):
        gap(args.gap_limit)
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
