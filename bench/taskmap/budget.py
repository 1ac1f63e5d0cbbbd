"""Time limits of the task mapper (issue 36): overrun, first answer, and the default's rank.

Two measurements on instances of three generators (Table 1 pipelines on the Internet-like
graph, stencils and geometric graphs on hierarchical clusters; the instances of
``bench/taskmap/vs_peers.py``):

``overrun``
    Every method with ``time_limit`` T in {0.05, 0.5, 5} s and at 0.6 of its own untimed
    time: the seconds past T the call returned (``elapsed - T``; negative when it ended by
    itself), its status, whether it held a mapping, and when its first answer came (the
    first ``offer_incumbent`` of the heuristics, timed from the call). ``--fresh`` runs each
    call in a new process (imports done before the call, as a user's budget counts from the
    call), otherwise every call runs warm in this one after one untimed run.
``default``
    Every method at the same budgets T, on every instance: the maximum occupancy each
    reaches (verified), and whether the default is at least as good as every other method.

    PYTHONPATH=src nice python -m bench.taskmap.budget overrun            # warm
    PYTHONPATH=src nice python -m bench.taskmap.budget overrun --fresh    # fresh processes
    PYTHONPATH=src nice python -m bench.taskmap.budget default

Prints tables (medians, maxima) and writes bench/out/taskmap_budget_<mode>.csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Optional

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
METHODS = ("portfolio", "multilevel", "open+improve", "open", "base+improve", "base", "exact")
LIMITS = (0.05, 0.5, 5.0)
#: The exact MILP's "untimed" run is cut here (it may run for hours on these instances).
EXACT_UNTIMED = 30.0

#: The instances of the overrun table: (kind, name) of vs_peers.instances.
OVERRUN = (
    ("pipeline", "table1 c=16 #0"),
    ("stencil", "stencil 16x16 on 2x4x4 het"),
    ("stencil", "stencil 32x32 on 2x4x8 het"),
    ("geometric", "geometric 500 on 2x4x4 het"),
    ("geometric", "geometric 1200 on Table 1 graph"),
)


def _instances(names=None, quick=False) -> list:
    from bench.taskmap.vs_peers import KINDS, instances

    out = instances(KINDS, quick=quick)
    if names is not None:
        out = [x for x in out if (x[0], x[1]) in set(names)]
    return out


def _build(kind: str, name: str):
    for k, n, build in _instances():
        if (k, n) == (kind, name):
            return build()
    raise SystemExit(f"no instance {kind!r} {name!r}")


def _first_answer_hook() -> dict:
    """Wrap the heuristics' offer_incumbent so that the first offer's time is recorded."""
    import coalloc.taskmap.mapper as mapper
    import coalloc.taskmap.multilevel as multilevel

    seen: dict = {"t0": None, "first": None}

    def make(real):
        def offer(build):
            if seen["first"] is None and seen["t0"] is not None:
                seen["first"] = time.perf_counter() - seen["t0"]
            real(build)

        return offer

    for mod in (mapper, multilevel):
        mod.offer_incumbent = make(mod.offer_incumbent)
    return seen


def one_call(tasks, res, method: str, limit: Optional[float], seen: dict) -> dict:
    """One timed call: elapsed, status, objective (verified), first answer."""
    from coalloc import taskmap

    seen["t0"], seen["first"] = time.perf_counter(), None
    t = time.perf_counter()
    try:
        r = taskmap.solve(tasks, res, method, seed=0, time_limit=limit)
    except ValueError as exc:  # the exact model refuses large instances
        return {"elapsed": time.perf_counter() - t, "status": "refused", "objective": None,
                "first": None, "why": str(exc)[:60]}  # fmt: skip
    elapsed = time.perf_counter() - t
    obj = None
    if r.mapping is not None:
        rep = taskmap.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert rep.valid and rep.matches, rep
        obj = float(rep.max_occupancy)
    first = seen["first"]
    if first is None and obj is not None and method == "exact":
        first = None  # the exact solver's incumbents are not offered through the hook
    return {"elapsed": elapsed, "status": r.status, "objective": obj, "first": first}


def child(argv) -> None:
    """``child KIND NAME METHOD LIMIT``: one call in this (fresh) process, JSON on stdout."""
    kind, name, method, limit = argv
    t = time.perf_counter()
    import coalloc.taskmap  # noqa: F401  (imports before the call: the budget starts there)

    imp = time.perf_counter() - t
    tasks, res = _build(kind, name)
    seen = _first_answer_hook()
    out = one_call(tasks, res, method, None if limit == "none" else float(limit), seen)
    out["import"] = imp
    print(json.dumps(out))


def _fresh(kind, name, method, limit) -> dict:
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "bench.taskmap.budget", "child", kind, name, method,
           "none" if limit is None else repr(limit)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def overrun(args) -> list:
    from bench.shared._progress import bar, say  # not at the top: a fresh child times imports

    rows = []
    seen = _first_answer_hook()
    for kind, name in bar(OVERRUN, desc="overrun", unit="instance", leave=False):
        tasks, res = _build(kind, name)
        for method in METHODS:
            if method not in args.methods:
                continue
            # warm-up and untimed time (the exact MILP: at most EXACT_UNTIMED seconds)
            base = one_call(tasks, res, method, EXACT_UNTIMED if method == "exact" else None,
                            seen)  # fmt: skip
            if base["status"] == "refused":
                say(f"{name:34s} {method:13s} refused: {base['why']}")
                sys.stdout.flush()
                continue
            limits = list(LIMITS)
            if base["status"] != "time_limit":  # 0.6 of a run that ended by itself
                limits.append(round(0.6 * base["elapsed"], 4))
            if args.fresh:
                limits = [x for x in limits if x <= args.max_fresh]
            for limit in limits:
                for _ in range(args.repeat):
                    if args.fresh:
                        out = _fresh(kind, name, method, limit)
                    else:
                        out = one_call(tasks, res, method, limit, seen)
                    row = {"kind": kind, "instance": name, "method": method, "limit": limit,
                           "untimed": base["elapsed"], "untimed_objective": base["objective"],
                           "over": out["elapsed"] - limit, **out}  # fmt: skip
                    rows.append(row)
                    first = "-" if out["first"] is None else f"{out['first']:.4f}"
                    say(f"{name:34s} {method:13s} T={limit:<7g} elapsed {out['elapsed']:.4f} "
                        f"over {row['over']:+.4f} {out['status']:10s} obj {out['objective']} "
                        f"first {first}")  # fmt: skip
                    sys.stdout.flush()
    return rows


def default(args) -> list:
    from bench.shared._progress import bar, say

    rows = []
    seen = _first_answer_hook()
    for kind, name, build in bar(_instances(quick=args.quick), desc="default", unit="instance",
                                 leave=False):  # fmt: skip
        tasks, res = build()
        for method in args.methods:  # warm: each method's caches (route tables) built once
            one_call(tasks, res, method, 0.05, seen)
        for limit in args.limits:
            got = {}
            for method in args.methods:
                out = one_call(tasks, res, method, limit, seen)
                got[method] = out["objective"]
                rows.append({"kind": kind, "instance": name, "method": method,
                             "limit": limit, **out})  # fmt: skip
            d = got["portfolio"]  # the default
            worse = [m for m, v in got.items() if v is not None
                     and (d is None or v < d * (1 - 1e-9))]  # fmt: skip
            cells = " ".join(f"{m}={'-' if v is None else f'{v:.5g}'}" for m, v in got.items())
            verdict = "DEFAULT BEATEN by " + ",".join(worse) if worse else "ok"
            say(f"{name:34s} T={limit:<5g} {cells} {verdict}")
            sys.stdout.flush()
    return rows


def _summary(rows) -> None:
    by: dict = {}
    for r in rows:
        if r["status"] == "refused":
            continue
        key = (r["method"], "0.6u" if r["limit"] not in LIMITS else r["limit"])
        by.setdefault(key, []).append(r)
    print("\nmethod        T      runs  median over  max over  within T+max(.05,.05T)  answered")
    for (method, lim), rs in sorted(by.items(), key=lambda x: (x[0][0], str(x[0][1]))):
        overs = [r["over"] for r in rs]
        ok = sum(r["over"] <= max(0.05, 0.05 * r["limit"]) for r in rs)
        ans = sum(r["objective"] is not None for r in rs)
        print(f"{method:13s} {lim!s:6s} {len(rs):5d} {statistics.median(overs):+11.4f} "
              f"{max(overs):+9.4f} {ok:10d}/{len(rs):<3d} {ans:10d}/{len(rs)}")  # fmt: skip


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "child":
        return child(argv[1:])
    from bench.shared._progress import add_quiet

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("overrun", "default"))
    ap.add_argument("--fresh", action="store_true", help="each call in a new process")
    ap.add_argument("--max-fresh", type=float, default=5.0, help="largest T run fresh")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--limits", nargs="+", type=float, default=[0.05, 0.5])
    add_quiet(ap)
    args = ap.parse_args(argv)
    print(f"load average: {os.getloadavg()}", flush=True)
    rows = overrun(args) if args.mode == "overrun" else default(args)
    if args.mode == "overrun":
        _summary(rows)
    os.makedirs(OUT, exist_ok=True)
    tag = args.mode + ("_fresh" if args.fresh else "")
    path = os.path.join(OUT, f"taskmap_budget_{tag}.csv")
    with open(path, "w", newline="") as fh:
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}; load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
