"""Issue 36 for the testbed: time limits that keep the best mapping, statuses, the default.

Three parts (``--part``, default all), printed as Markdown tables (``--json FILE`` also
writes the raw rows):

* ``overrun``: each method under ``time_limit`` T in {0.05, 0.5, 5} s and 0.6 and 0.9 x
  its own untimed time, on an 800-node ring onto a 2,000-PC DeterLab-like testbed (5 leaf
  switches) and on a 100-node random experiment onto the 255-PC one: the seconds past T
  (``elapsed - T``; the target is ``max(0.05, 0.05 T)``), the status, whether the answer
  holds a mapping, and that the mapping verifies (for the annealer also the fraction of
  its untimed moves made when its first valid mapping came);
* ``utah``: Emulab's ``test_big`` (2003) on the Utah testbed of July 2000
  (``bench/testbed/data``): the default, ``anneal`` and ``exact`` (2 workers), with times;
* ``sweep``: random experiments under random limits of 0.02-0.4 s (overruns, checks);
* ``statuses``: the annealer and the default given no limit on 40-96-node experiments onto
  the 255-PC testbed (the seeds the issue's report used): the status each ends with.

Run from the repository root (warm process: each call after one warm-up call)::

    PYTHONPATH=src python -m bench.testbed.issue36 --repeats 3 --json /tmp/issue36.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from bench.shared._progress import add_quiet, bar, say
from coalloc import testbed as tb
from coalloc.testbed import generators as g

DATA = Path(__file__).resolve().parent / "data"
LIMITS = (0.05, 0.5, 5.0)


def _run(top, pt, method, **kw):
    t0 = time.perf_counter()
    r = tb.assign(top, pt, method, seed=1, **kw)
    el = time.perf_counter() - t0
    ok = tb.Instance(top, pt).verify(r).ok if r.mapping is not None else None
    return r, el, ok


def overrun(repeats: int, methods) -> list:
    cases = [
        ("ring800@deterlab2000", g.ring(800), g.deterlab(2000, 5, seed=1)),
        ("random100@deterlab255", g.random_topology(100, seed=11), g.deterlab(255, 5, seed=1)),
    ]
    rows = []
    for name, top, pt in bar(cases, desc="overrun", unit="case", leave=False):
        tb.assign(g.ring(4), pt, "anneal")  # warm-up: kernels, caches of this testbed
        for m in methods:
            first = None
            if m == "exact":
                untimed = None  # (an 800-node model: no end in minutes)
            else:
                r0, untimed, _ = _run(top, pt, m)
                fv, moves = r0.iterations.get("first_valid"), r0.iterations.get("moves")
                if fv is not None and moves:  # the annealer: when its first answer came
                    first = fv / moves if fv >= 0 else None
            extra = [0.6 * untimed, 0.9 * untimed] if untimed else []
            limits = list(LIMITS) + extra
            for T in limits:
                if untimed is not None and T >= untimed and T not in extra:
                    continue  # the method ends by itself before T
                over, stat = [], []
                for _ in range(repeats):
                    r, el, ok = _run(top, pt, m, time_limit=T)
                    over.append(el - T)
                    stat.append((r.status, r.mapping is not None, ok, r.objective))
                rows.append({"case": name, "method": m, "untimed": untimed, "T": T,
                             "first_valid_fraction": first,
                             "overrun_median": statistics.median(over),
                             "overrun_max": max(over), "target": max(0.05, 0.05 * T),
                             "runs": stat})  # fmt: skip
                say(json.dumps(rows[-1]))
                sys.stdout.flush()
    return rows


def utah(repeats: int) -> list:
    pt = tb.read_ptop(DATA / "utah2000.ptop")
    top = tb.read_top(DATA / "test_big.top")
    rows = []
    for m, kw in bar((("assign+", {}), ("anneal", {}), ("assign+.1", {}),
                      ("exact", {"threads": 2, "time_limit": 60})),
                     desc="utah", unit="method", leave=False):  # fmt: skip
        times, res = [], None
        for _ in range(repeats):
            res, el, ok = _run(top, pt, m, **kw)
            times.append(el)
            assert ok, m
        rows.append({"method": m, "status": res.status, "isw": res.interswitch_bandwidth,
                     "bound": res.bound, "seconds_median": statistics.median(times),
                     "seconds": times, "portfolio": res.params.get("portfolio")})  # fmt: skip
        say(json.dumps(rows[-1]))
        sys.stdout.flush()
    return rows


def sweep(runs: int = 12) -> list:
    """Random experiments (30-100 nodes on 255 PCs, 100-300 on 2,000) under random limits
    of 0.02-0.4 s, the default and the annealer: overrun against the target, every mapping
    verified."""
    import random

    rng = random.Random(5)
    rows = []
    for pcs in (255, 2000):
        pt = g.deterlab(pcs, 5, seed=1)
        tb.assign(g.ring(4), pt)
        for _ in bar(range(runs), desc=f"sweep {pcs} PCs", unit="run", leave=False):
            n = rng.choice([100, 200, 300] if pcs == 2000 else [30, 60, 100])
            top = g.random_topology(n, seed=rng.randrange(1000))
            for m in ("assign+", "anneal"):
                T = rng.choice([0.02, 0.05, 0.1, 0.2, 0.4])
                r, el, ok = _run(top, pt, m, time_limit=T)
                assert ok in (None, True), (pcs, n, m, T)
                rows.append({"pcs": pcs, "nodes": n, "method": m, "T": T, "status": r.status,
                             "overrun": el - T, "target": max(0.05, 0.05 * T),
                             "verified": ok})  # fmt: skip
    over = [r for r in rows if r["overrun"] > r["target"]]
    print(f"{len(rows)} runs, {len(over)} past the target; worst overrun "
          f"{max(r['overrun'] for r in rows):+.3f} s", flush=True)  # fmt: skip
    return rows


def statuses() -> list:
    pt = g.deterlab(255, 5, seed=1)
    rows = []
    for s in bar(range(12), desc="statuses", unit="seed", leave=False):
        top = g.random_topology(40 + 5 * s, seed=s)
        for m in ("anneal", "assign+"):
            r, el, ok = _run(top, pt, m)
            rows.append({"seed": s, "nodes": len(top.nodes), "method": m, "status": r.status,
                         "isw": r.objective, "seconds": el, "verified": ok,
                         "reason": (r.reason or {}).get("constraint")})  # fmt: skip
            say(json.dumps(rows[-1]))
            sys.stdout.flush()
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=["overrun", "utah", "statuses", "sweep", "all"],
                    default="all")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--methods", nargs="+", default=list(tb.METHODS))
    ap.add_argument("--json", default=None)
    add_quiet(ap)
    args = ap.parse_args(argv)
    out = {"load_before": os.getloadavg()}
    if args.part in ("utah", "all"):
        out["utah"] = utah(args.repeats)
    if args.part in ("statuses", "all"):
        out["statuses"] = statuses()
    if args.part in ("sweep", "all"):
        out["sweep"] = sweep()
    if args.part in ("overrun", "all"):
        out["overrun"] = overrun(args.repeats, args.methods)
    out["load_after"] = os.getloadavg()
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
