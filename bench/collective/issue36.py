"""Issue 36 for the collective family: time limits, first answers, statuses, and the default
against every method at equal budgets.

For each method (``scan``, the default; ``cankar``; ``exact``) and each time limit ``T`` in
``--limits`` (default 0.05, 0.5 and 5 s), on the family's bench instances:

* ``paper``: the 606-node Table 1 pool, section 4.2 requests (simple and collective) for
  every ``N`` of the paper, ``--cases`` per ``N``;
* ``hard``: pools where every other slot is a candidate start whose integer program is
  infeasible although the screens pass (the scan and exact run one program per start), with
  a solution at the end of the window or none;
* ``enum``: an 80-node pool whose best factor is enumerated by ``exact`` (``C(80, 4)``
  subsets: seconds).

it records the status, the start, the utilisation factor and the seconds of the call, in a
warm process (every method run once untimed first) and in fresh processes (one per call:
the first call of a process, imports of the package done, solver imports inside the call).
The overrun of a call is ``max(0, seconds - T)``; the target is ``T + max(0.05, 0.05 T)``.
The first-answer time of a method is when it first offered an answer to the time limit (or
returned one). The default is compared with every other method at the same ``T``: earlier
start first, then higher factor (an answer beats none).

Run:  PYTHONPATH=src python -m bench.collective.issue36 [--fresh 2] [--cases 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

from bench.shared._progress import add_quiet, bar
from coalloc.collective import CollectiveRequest, ResourcePool, coallocate, verify
from coalloc.collective.generators import COUNTS, section42_requests, table1_pool

METHODS = ("scan", "cankar", "exact")


def _hard(slots: int, solvable: bool, per_kind: int = 30):
    """Every other slot a candidate start whose integer program is infeasible while the
    screens pass: ``per_kind`` nodes rich in one property and as many rich in the other,
    four of which must meet both totals (``C(2 per_kind, 4)`` sets: more than the scan
    enumerates); ``solvable``: a last node, busy until the last slot, completes a set there."""
    k = 2 * per_kind
    cap = np.vstack([np.tile([10.0, 0.5], (per_kind, 1)), np.tile([0.5, 10.0], (per_kind, 1)),
                     [[30.0, 30.0]]])  # fmt: skip
    times = np.arange(slots) * 10.0
    reserved = np.zeros((k + 1, 2, slots))
    reserved[0, 0, 0::2] = 0.2  # falls at every odd slot: a new candidate start
    reserved[k, :, :] = 30.0 if not solvable else 29.95
    if solvable:
        reserved[k, :, -1] = 0.0
    pool = ResourcePool(cap, ["a", "b"], times, reserved)
    request = CollectiveRequest(1.0, 4, 0.0, float(times[-1]), minimum={"a": 0.1, "b": 0.1},
                                total={"a": 25.0, "b": 25.0})  # fmt: skip
    return pool, request


def instances(cases: int, seed: int = 36):
    """``(name, pool, request)`` of every bench instance."""
    out = []
    pool = table1_pool(606, seed=1)
    for n in COUNTS:
        for q, (simple, coll) in enumerate(section42_requests(pool, n, cases, seed=seed)):
            out.append((f"paper/N{n}/{q}/simple", pool, simple))
            out.append((f"paper/N{n}/{q}/collective", pool, coll))
    for slots, solvable in ((4000, False), (4000, True)):
        p, r = _hard(slots, solvable)
        out.append((f"hard/{slots}/{'solvable' if solvable else 'none'}", p, r))
    rng = np.random.default_rng(0)
    p = ResourcePool(rng.uniform(1, 10, size=(80, 2)), ["a", "b"])
    out.append(("enum/80x4", p, CollectiveRequest(1.0, 4, minimum={"a": 0.1, "b": 0.1},
                                                  total={"a": 8, "b": 8})))  # fmt: skip
    return out


def run_one(method: str, pool, req, limit):
    """One call: its status, start, factor, seconds, first-answer seconds and check."""
    from coalloc._shared import params
    from coalloc.collective import core

    first = []
    t0 = time.perf_counter()
    real = params.offer_incumbent

    def spy(build):
        if not first:
            first.append(time.perf_counter() - t0)
        real(build)

    core.checks.offer_incumbent = spy  # core.offer looks it up at each call
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            res = coallocate(pool, req, method, seed=0, time_limit=limit)
            took = time.perf_counter() - t0
    finally:
        core.checks.offer_incumbent = real
    ok = None if res.start is None else bool(verify(req, pool, res).ok)
    if res.start is not None and not first:
        first.append(took)
    return {"status": res.status, "start": res.start, "u": res.utilisation, "seconds": took,
            "first": first[0] if first else None, "verified": ok,
            "has": bool(res.has_solution)}  # fmt: skip


def better(a: dict, b: dict) -> bool:
    """Whether answer ``a`` is strictly better than ``b``: an answer beats none; then the
    earlier start; then the higher factor (relative 1e-9)."""
    if a["has"] != b["has"]:
        return a["has"]
    if not a["has"]:
        return False
    if abs(a["start"] - b["start"]) > 1e-9:
        return a["start"] < b["start"]
    return a["u"] > b["u"] * (1 + 1e-9)


def _worker(argv):
    name, method, limit, cases = argv[0], argv[1], float(argv[2]), int(argv[3])
    inst = {n: (p, r) for n, p, r in instances(cases)}
    pool, req = inst[name]
    print(json.dumps(run_one(method, pool, req, limit)))


def late(r, limit) -> bool:
    """Whether run ``r`` returned past the target ``T + max(0.05, 0.05 T)`` (another budget)."""
    return limit is not None and r["seconds"] > limit + max(0.05, 0.05 * limit)


def _q(xs, q):
    return float(np.percentile(xs, q)) if xs else float("nan")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--worker":
        return _worker(argv[1:])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[0.05, 0.5, 5.0])
    ap.add_argument("--cases", type=int, default=3, help="requests per N (paper pool)")
    ap.add_argument("--fresh", type=int, default=2,
                    help="fresh-process repeats per (instance, method, T) on a subset")  # fmt: skip
    ap.add_argument("--fresh-names", nargs="*", default=None)
    add_quiet(ap)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "out",
                                                  "collective_issue36.json"))  # fmt: skip
    args = ap.parse_args(argv)
    print(f"# {platform.node()} {platform.processor() or platform.machine()}, "
          f"load {os.getloadavg()}")  # fmt: skip
    insts = instances(args.cases)
    rows = []
    for name, pool, req in bar(insts, desc="untimed", unit="instance"):  # warm: each once
        for m in METHODS:
            r = run_one(m, pool, req, None)
            rows.append({"mode": "warm", "T": None, "name": name, "method": m, **r})
    for limit in args.limits:
        for name, pool, req in bar(insts, desc=f"T={limit:g}", unit="instance"):
            for m in METHODS:
                r = run_one(m, pool, req, limit)
                rows.append({"mode": "warm", "T": limit, "name": name, "method": m, **r})
    fresh_names = args.fresh_names or [n for n, _, _ in insts
                                       if n.startswith(("hard", "enum"))
                                       or n.startswith("paper/N60/0")
                                       or n.startswith("paper/N5/0")]  # fmt: skip
    for _ in range(args.fresh):
        for limit in args.limits:
            for name in fresh_names:
                for m in METHODS:
                    cmd = [sys.executable, "-m", "bench.collective.issue36", "--worker", name, m,
                           str(limit), str(args.cases)]  # fmt: skip
                    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                    r = json.loads(out.stdout.strip().splitlines()[-1])
                    rows.append({"mode": "fresh", "T": limit, "name": name, "method": m, **r})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(rows, fh)
    report(rows, args.limits)
    print(f"# load after: {os.getloadavg()}")


def report(rows, limits):
    bad = [r for r in rows if r["verified"] is False]
    print(f"\nunverified answers: {len(bad)}")
    print("\n### Overrun past T (s): median / p99 / max, runs past T + max(0.05, 0.05 T)\n")
    print("| mode | method | T | runs | stopped by T | median | p99 | max | past target |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for mode in ("warm", "fresh"):
        for m in METHODS:
            for limit in limits:
                rs = [r for r in rows if r["mode"] == mode and r["method"] == m
                      and r["T"] == limit]  # fmt: skip
                if not rs:
                    continue
                over = [max(0.0, r["seconds"] - limit) for r in rs]
                stopped = sum(r["seconds"] >= limit for r in rs)
                past = sum(o > max(0.05, 0.05 * limit) for o in over)
                print(f"| {mode} | {m} | {limit:g} | {len(rs)} | {stopped} | {_q(over, 50):.4f} "
                      f"| {_q(over, 99):.4f} | {max(over):.4f} | {past} |")  # fmt: skip
    print("\n### First answer (s, warm, untimed runs with an answer): median / max\n")
    print("| method | instances answered | median | max |")
    print("|---|---:|---:|---:|")
    for m in METHODS:
        rs = [r for r in rows if r["mode"] == "warm" and r["T"] is None and r["method"] == m
              and r["first"] is not None]  # fmt: skip
        f = [r["first"] for r in rs]
        print(f"| {m} | {len(rs)} | {_q(f, 50):.4f} | {max(f) if f else float('nan'):.4f} |")
    print("\n### Statuses (warm)\n")
    for limit in [None, *limits]:
        for m in METHODS:
            rs = [r for r in rows if r["mode"] == "warm" and r["T"] == limit and r["method"] == m]
            counts = {}
            for r in rs:
                counts[r["status"]] = counts.get(r["status"], 0) + 1
            print(f"- T={limit}: {m}: {dict(sorted(counts.items()))}")
    print("\n### The default (scan) against each method at the same T (warm)\n")
    print("| T | instances | scan worse than cankar | scan worse than exact | "
          "scan better than cankar | scan better than exact |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|")
    for limit in [None, *limits]:
        by = {}
        for r in rows:
            if r["mode"] == "warm" and r["T"] == limit:
                by.setdefault(r["name"], {})[r["method"]] = r
        cells = []
        for other in ("cankar", "exact"):
            worse = [n for n, d in by.items() if better(d[other], d["scan"])]
            cells.append(worse)

        wins = [sum(better(d["scan"], d[o]) for d in by.values()) for o in ("cankar", "exact")]
        print(f"| {limit} | {len(by)} | {len(cells[0])} | {len(cells[1])} | {wins[0]} "
              f"| {wins[1]} |")  # fmt: skip
        for other, worse in zip(("cankar", "exact"), cells):
            for n in worse:
                d = by[n]
                print(f"  - T={limit} {n}: scan {d['scan']['start']} u={d['scan']['u']} "
                      f"({d['scan']['status']}, {d['scan']['seconds']:.3f} s) < {other} "
                      f"{d[other]['start']} u={d[other]['u']} ({d[other]['status']}, "
                      f"{d[other]['seconds']:.3f} s"
                      f"{', past the target' if late(d[other], limit) else ''})")  # fmt: skip


if __name__ == "__main__":
    main()
