"""The default's sum of volume x route distance beside the peers' mappings, variants of the
default alternated per instance (issue 40 item 1, the sum target; h54tsum).

The peers' mappings of :mod:`bench.taskmap.vs_peers` (single runs, and the sweep-kept
mappings of Scotch, KaHIP and METIS) are computed once and kept in ``--cache`` (one
``.npz`` an instance: each mapping with its bottleneck by ``verify_mapping`` and its sum by
``communication_cost``); a later run reuses them (the peers take no time limit: their
mappings do not depend on ``T``). Then per instance the default ``solve(tasks, res,
time_limit=T)`` runs once per variant, the variants' order rotated instance by instance
(same window, same load), and per answer:

* ``dominated``: the peer mappings at most as bottlenecked as ours with a sum under 1/1.25
  of ours (``vs_peers``'s column), and which peer;
* the sum against the best peer mapping of any bottleneck (sweeps included: the issue's
  ratio), against the best of the peers' single runs, and the bottleneck against the best
  peer's;
* whether the call ended within ``T + max(0.05, 0.05 T)``.

A variant is ``name`` or ``name:module.ATTR=value[,module.ATTR=value]`` (modules of
``coalloc.taskmap``), set before its calls and restored after: ``old:portfolio.SUM_SPARE=False``.
``--paired``: one call an instance, its answer before and after the spare-time sum step
(``portfolio.sum_in_spare_time``): the same search, so the two differ by the step alone.

    PYTHONPATH=src:. nice python -m bench.taskmap.sum_dominated --time-limit 1 \\
        --variants old:portfolio.SUM_RESERVE=0 new --json /tmp/out.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import statistics
import time
from typing import Optional

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import KINDS, PEERS, Scotch, _subsets, instances, load_peers
from coalloc.taskmap import communication_cost, max_occupancy, solve, verify_mapping
from coalloc.taskmap.multilevel import hierarchy_order

CACHE = "/tmp/h54tsum/peers"  # one per --set: pass --cache when switching sets


def _spectral_bisect(topo, level, subset, share, full=True, spectral=True):
    """``bisect_map`` with its eigensolves always (a variant's stand-in: the timed
    ``multilevel._lighter_at_bound`` before h54tsum),
    ``old:multilevel.bisect_map=_spectral_bisect``."""
    from coalloc.taskmap.bisection import bisect_map

    return bisect_map(topo, level, subset, share, full, True)


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def peer_points(name: str, build, peers, cache: str) -> list:
    """``[(peer label, bottleneck, sum)]`` of every peer mapping of the instance (cached)."""
    path = os.path.join(cache, _slug(name) + ".npz")
    if os.path.exists(path):
        z = np.load(path, allow_pickle=False)
        got = zip(z["labels"], z["occ"], z["sum"])
        return [(str(lab), float(o), float(s)) for lab, o, s in got]
    tasks, res = build()
    order = hierarchy_order(res)
    labels, occ, sums, maps = [], [], [], []

    def keep(label, m):
        rep = verify_mapping(tasks, res, m)
        labels.append(label)
        occ.append(float(rep.max_occupancy))
        sums.append(communication_cost(tasks, res, m))
        maps.append(np.asarray(m, dtype=np.int64))

    for peer in peers:
        if hasattr(peer, "applies"):
            if not peer.applies(build, res):
                continue
            peer.hierarchy = getattr(build, "hierarchy", None)
        try:
            m = peer.map(tasks, res, order)
        except Exception as exc:  # noqa: BLE001 - said, the peer left out of this instance
            say(f"{name}: peer {peer.name} failed ({type(exc).__name__}: {exc}); left out")
            continue
        keep(peer.name, m)
        if getattr(peer, "sweep", True):
            kept, kept_occ = m, max_occupancy(tasks, res, m)[0]
            for k in _subsets(len(order), 16)[1:]:
                try:
                    mk = peer.map(tasks, res, order[:k])
                except Exception:  # noqa: BLE001 - that subset size left out of the sweep
                    continue
                o = max_occupancy(tasks, res, mk)[0]
                if o < kept_occ:
                    kept, kept_occ = mk, o
            keep(peer.name + "_sweep", kept)
    os.makedirs(cache, exist_ok=True)
    np.savez(path, labels=np.array(labels), occ=np.array(occ), sum=np.array(sums),
             maps=np.array(maps))  # fmt: skip
    return list(zip(labels, occ, sums))


def _variant(spec: str) -> tuple:
    name, _, sets = spec.partition(":")
    out = []
    for item in filter(None, sets.split(",")):
        target, _, value = item.partition("=")
        mod, _, attr = target.rpartition(".")
        out.append((importlib.import_module(f"coalloc.taskmap.{mod}"), attr, eval(value)))  # noqa: S307
    return name, out


def _run(tasks, res, T: Optional[float], sets: list) -> dict:
    """One call of the default under the variant's settings ``sets``; the answer, and the
    one before the spare-time sum step (``portfolio.sum_in_spare_time``: the same search)
    in ``before`` when that step was called with a mapping."""
    from coalloc.taskmap import solvers

    old = [(mod, attr, getattr(mod, attr)) for mod, attr, _ in sets]
    for mod, attr, value in sets:
        setattr(mod, attr, value)
    seen: list = []
    step = solvers.sum_in_spare_time

    def observed(tasks_, res_, result, until, *rest):  # rest: the call's pace (h56late)
        if result.mapping is not None and result.status == "time_limit":
            seen.append(np.array(result.mapping))
        return step(tasks_, res_, result, until, *rest)

    solvers.sum_in_spare_time = observed
    try:
        c0, t0 = time.process_time(), time.perf_counter()
        r = solve(tasks, res, time_limit=T)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        solvers.sum_in_spare_time = step
        for mod, attr, value in old:
            setattr(mod, attr, value)
    rep = verify_mapping(tasks, res, r.mapping)
    if not rep.valid:
        raise SystemExit(f"invalid mapping: {rep.problems}")
    out = {"occ": float(rep.max_occupancy), "sum": communication_cost(tasks, res, r.mapping),
           "wall": wall, "cpu": cpu, "status": r.status,
           "late": T is not None and wall > T + max(0.05, 0.05 * T),
           "spare": r.timings.get("sum_spare"),
           "cycles": r.timings.get("sum_cycles")}  # fmt: skip (the final cycles' seconds)
    if seen:
        m = seen[0]
        out["before"] = {"occ": float(verify_mapping(tasks, res, m).max_occupancy),
                         "sum": communication_cost(tasks, res, m)}  # fmt: skip
    return out


def _paired(tasks, res, T: Optional[float]) -> tuple:
    """One call of the default: its answer before the spare-time sum step and after."""
    after = _run(tasks, res, T, [])
    before = {**after, **after.get("before", {})}
    return before, after


def score(row: dict, points: list) -> None:
    """The sum's three readings and the dominating peer mappings, into ``row``."""
    level = row["occ"] * (1 + 1e-9)
    singles = [p for p in points if not p[0].endswith("_sweep")]
    row["sum_ratio"] = row["sum"] / max(min(p[2] for p in points), 1e-300)
    row["sum_ratio_single"] = row["sum"] / max(min(p[2] for p in singles), 1e-300)
    row["ratio"] = row["occ"] / min(p[1] for p in points)
    dom = [p for p in points if p[1] <= level and 1.25 * p[2] < row["sum"]]
    row["dominated"] = len(dom)
    row["dominated_by"] = [f"{p[0]} {p[1]:.4g}/{p[2]:.4g}" for p in dom]


def _limit(text: str) -> Optional[float]:
    """``--time-limit``: seconds, or ``none`` (untimed calls)."""
    return None if text.lower() == "none" else float(text)


def _gm(xs) -> float:
    xs = [x for x in xs if x > 0]
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else math.nan


def table(rows: list, names: list) -> list:
    out = [
        "| variant | dominated (instances) | sum / best peer incl. sweeps: geo. mean "
        "(<= 1.25) | sum / best single run: geo. mean (<= 1.25) | bottleneck / best peer: "
        "geo. mean (<= 1) | late | wall max | CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for v in names:
        rs = [r[v] for r in rows]
        out.append(
            f"| {v} | {sum(r['dominated'] > 0 for r in rs)} | "
            f"{_gm([r['sum_ratio'] for r in rs]):.3f}"
            f" ({sum(r['sum_ratio'] <= 1.25 for r in rs)}) | "
            f"{_gm([r['sum_ratio_single'] for r in rs]):.3f} "
            f"({sum(r['sum_ratio_single'] <= 1.25 for r in rs)}) | "
            f"{_gm([r['ratio'] for r in rs]):.4f} ({sum(r['ratio'] <= 1 + 1e-9 for r in rs)}) | "
            f"{sum(r['late'] for r in rs)} | {max(r['wall'] for r in rs):.3f} | "
            f"{sum(r.get('cpu', math.nan) for r in rs):.1f} |"
        )
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--only", nargs="+", default=None, help="instances whose name contains one")
    ap.add_argument("--time-limit", type=_limit, default=1.0, help="seconds, or none: untimed")
    ap.add_argument("--set", default="vs_peers", choices=("vs_peers", "heldout"),
                    help="the 30 of vs_peers, or the held-back 24 of heldout")
    ap.add_argument("--scotch-runs", type=int, default=1, help="Scotch: best of this many")
    ap.add_argument("--variants", nargs="+", default=["default"])
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--peers-only", action="store_true", help="fill the cache and stop")
    ap.add_argument("--paired", action="store_true",
                    help="one call an instance: its answer before and after the spare-time "
                         "sum step (the same search)")  # fmt: skip
    ap.add_argument("--json", default=None)
    add_quiet(ap)
    args = ap.parse_args(argv)
    peers = load_peers(list(PEERS))
    Scotch.runs = max(1, args.scotch_runs)
    variants = [_variant(v) for v in args.variants]
    names = ["before", "after"] if args.paired else [v[0] for v in variants]
    if args.set == "heldout":
        from bench.taskmap import heldout

        pool = heldout.instances()
    else:
        pool = instances(args.kinds)
    insts = [i for i in pool if args.only is None or any(s in i[1] for s in args.only)]
    rows = []
    for j, (kind, name, build) in enumerate(bar(insts, desc="instances", unit="inst")):
        points = peer_points(name, build, peers, args.cache)
        if args.peers_only:
            continue
        tasks, res = build()
        row = {"kind": kind, "instance": name, "load": os.getloadavg()[0]}
        if args.paired:
            row["before"], row["after"] = _paired(tasks, res, args.time_limit)
            for v in ("before", "after"):
                score(row[v], points)
        for k in range(0 if args.paired else len(variants)):
            vname, sets = variants[(j + k) % len(variants)]
            row[vname] = _run(tasks, res, args.time_limit, sets)
            score(row[vname], points)
        rows.append(row)
        say(f"{name}: " + "; ".join(
            f"{v} {row[v]['occ']:.5g}/{row[v]['sum']:.5g} dom {row[v]['dominated']}"
            f"{' LATE' if row[v]['late'] else ''}" for v in names))  # fmt: skip
    if args.peers_only:
        return
    print("\n".join(table(rows, names)))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"T": args.time_limit, "variants": names, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
