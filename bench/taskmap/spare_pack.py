"""The default's spare time on the pipelines (issue 40 item 2, h49tmap):
``taskmap.solve(tasks, res, time_limit=T)`` with the spare-time packing
(:func:`coalloc.taskmap.jobpack.pack_in_spare_time`) off and on, alternating per instance,
on the 10 pipelines of :mod:`bench.taskmap.vs_peers` (the other 20 have no jobs: the step
does not apply). Prints the printed gap of each, the wall time of the call against the
contract (``T + max(0.05, 0.05 T)``) and the load average; exits non-zero on a mapping that
does not verify or a call past the contract.

    PYTHONPATH=src:. nice python -m bench.taskmap.spare_pack [--time-limit 20 60] [--instances 1:0]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import coalloc.taskmap as tm
import coalloc.taskmap.jobpack as jp
from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import instances


def _run(tasks, res, T: float, step: bool) -> dict:
    jp.SPARE_GAP = 0.10 if step else float("inf")
    t = time.perf_counter()
    r = tm.solve(tasks, res, time_limit=T)
    wall = time.perf_counter() - t
    if not tm.Instance(tasks, res).verify(r).ok:
        raise SystemExit("a mapping does not verify")
    return dict(occ=float(r.max_occupancy), gap=float(r.gap), wall=wall, status=r.status)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, nargs="+", default=[20.0])
    ap.add_argument("--instances", nargs="+", default=None,
                    help="c:i pairs (table1 c=<c> #<i>), default all 10")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    chosen = instances(("pipeline",))
    if args.instances:
        keep = {f"table1 c={c} #{i}" for c, i in (s.split(":") for s in args.instances)}
        chosen = [x for x in chosen if x[1] in keep]
    say(f"load average at the start: {os.getloadavg()}")
    rows, late = [], 0
    for T in args.time_limit:
        for _, name, build in bar(chosen, desc=f"T={T:g}", unit="inst"):
            tasks, res = build()
            off, on = _run(tasks, res, T, False), _run(tasks, res, T, True)
            for r in (off, on):
                late += r["wall"] > T + max(0.05, 0.05 * T)
            rows.append(dict(T=T, name=name, off=off, on=on))
    say(f"load average at the end: {os.getloadavg()}")
    say("| T s | instance | occupancy off -> on | gap off -> on | wall s off, on | status on |")
    say("|---:|---|---:|---:|---:|---|")
    for r in rows:
        a, b = r["off"], r["on"]
        say(f"| {r['T']:g} | {r['name']} | {a['occ']:.4g} -> {b['occ']:.4g} "
            f"| {100 * a['gap']:.1f} % -> {100 * b['gap']:.1f} % "
            f"| {a['wall']:.2f}, {b['wall']:.2f} | {b['status']} |")  # fmt: skip
    say("| T s | gap off: median, max (<= 10 %) | gap on | wall on: median (max) |")
    say("|---:|---:|---:|---:|")
    for T in args.time_limit:
        rs = [r for r in rows if r["T"] == T]
        g0 = [r["off"]["gap"] for r in rs]
        g1 = [r["on"]["gap"] for r in rs]
        w = [r["on"]["wall"] for r in rs]
        med = statistics.median
        say(f"| {T:g} | {100 * med(g0):.1f} %, {100 * max(g0):.1f} % "
            f"({sum(g <= 0.1 for g in g0)}/{len(rs)}) | {100 * med(g1):.1f} %, "
            f"{100 * max(g1):.1f} % ({sum(g <= 0.1 for g in g1)}/{len(rs)}) "
            f"| {med(w):.2f} ({max(w):.2f}) |")  # fmt: skip
    say(f"calls past T + max(0.05, 0.05 T): {late}")
    if late:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
