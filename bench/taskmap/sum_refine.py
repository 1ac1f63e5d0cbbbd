"""The multilevel mapper with and without its last step, the sum refinement (issue 40).

On the 30 instances of :mod:`bench.taskmap.vs_peers`, ``map_multilevel`` runs with
``sum_refine=False`` and ``sum_refine=True``; per instance the maximum occupancy (recomputed
by ``verify_mapping``), the sum objective (``communication_cost``) and the CPU time of each.
Exits non-zero if the step raised a maximum occupancy anywhere (its promise).
``--digests N``: instead, the taskmap instances of ``bench.shared.digests`` (its first ``N``)
with the methods that run the step (``multilevel``, ``portfolio``): how many answers the step
changes and whether any maximum occupancy rose.

    PYTHONPATH=src:. nice python -m bench.taskmap.sum_refine
    PYTHONPATH=src:. nice python -m bench.taskmap.sum_refine --digests 48
    PYTHONPATH=src:. nice python -m bench.taskmap.sum_refine --ejections [--digests 48]

``--ejections``: "before" and "after" are the step without and with its ejections (a move
blocked by the destination's compute, made room for by moving a task of the destination
to a third processor; issue 40 item 3).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import KINDS, instances
from coalloc.cli._common import count
from coalloc.taskmap import communication_cost, sumrefine, verify_mapping
from coalloc.taskmap.multilevel import map_multilevel


def _switch(on: bool, ejections: bool) -> dict:
    """The mapper's parameters for "before" (``on=False``) and "after": the step off and
    on, or (``ejections``) the step on with its ejections off and on."""
    if ejections:
        sumrefine._EJECTIONS = on
        return {"sum_refine": True}
    sumrefine._EJECTIONS = True
    return {"sum_refine": on}


def _run(tasks, res, on: bool, ejections: bool = False) -> tuple:
    c = time.process_time()
    r = map_multilevel(tasks, res, seed=0, **_switch(on, ejections))
    cpu = time.process_time() - c
    rep = verify_mapping(tasks, res, r.mapping)
    if not rep.valid:
        raise SystemExit(f"invalid mapping: {rep.problems}")
    return float(rep.max_occupancy), communication_cost(tasks, res, r.mapping), cpu


def _digests(n: int, ejections: bool = False) -> None:
    from bench.shared.digests import _taskmap

    changed = rose = worse = total = 0
    for label, inst in bar(list(_taskmap(n)), desc="digests", unit="inst"):
        for method in ("multilevel", "portfolio"):
            got = []
            for on in (False, True):
                r = inst.solve(method, seed=0, **_switch(on, ejections))
                rep = verify_mapping(inst.task_graph, inst.resource_graph, r.mapping)
                if not rep.valid:
                    raise SystemExit(f"{label}/{method}: invalid mapping: {rep.problems}")
                cost = communication_cost(inst.task_graph, inst.resource_graph, r.mapping)
                got.append((float(rep.max_occupancy), cost, r.mapping))
            total += 1
            if not np.array_equal(got[0][2], got[1][2]):
                changed += 1
                say(f"{label}/{method}: occ {got[0][0]:.6g} -> {got[1][0]:.6g}, "
                    f"sum {got[0][1]:.6g} -> {got[1][1]:.6g}")  # fmt: skip
                worse += got[1][1] >= got[0][1]
            rose += got[1][0] > got[0][0] * (1 + 1e-9)
    what = "its ejections" if ejections else "the step"
    print(f"{changed} of {total} answers changed by {what}; maximum occupancy rose on {rose}; "
          f"of the changed, the sum did not fall on {worse}")  # fmt: skip
    sumrefine._EJECTIONS = True
    if rose:
        raise SystemExit(1)


def _gm(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else math.nan


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--quick", action="store_true", help="2 instances per kind")
    ap.add_argument("--digests", type=count(), default=None, help="the digests' instances instead")
    ap.add_argument(
        "--ejections",
        action="store_true",
        help="before/after = the step's ejections off/on (the step on in both)",
    )
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.digests:
        _digests(args.digests, args.ejections)
        return
    rows = []
    for kind, name, build in bar(instances(args.kinds, args.quick), desc="instances", unit="inst"):
        tasks, res = build()
        o0, s0, c0 = _run(tasks, res, False, args.ejections)
        o1, s1, c1 = _run(tasks, res, True, args.ejections)
        rows.append((kind, name, o0, o1, s0, s1, c0, c1))
        say(
            f"{name}: occ {o0:.6g} -> {o1:.6g}, sum {s0:.6g} -> {s1:.6g}, "
            f"cpu {c0:.3f} -> {c1:.3f} s"
        )
    print(
        "| instances | sum after / before: geo. mean (min) | max occupancy rose | "
        "CPU after / before (median) |"
    )
    print("|---|---:|---:|---:|")
    rose = 0
    for kind in [*args.kinds, "all"]:
        rs = [r for r in rows if kind in ("all", r[0])]
        if not rs:
            continue
        ratio = [r[5] / r[4] if r[4] > 0 else 1.0 for r in rs]
        up = sum(r[3] > r[2] * (1 + 1e-9) for r in rs)
        if kind == "all":
            rose = up
        cpu = statistics.median(r[7] / max(r[6], 1e-9) for r in rs)
        print(f"| {kind} ({len(rs)}) | {_gm(ratio):.3f} ({min(ratio):.3f}) | {up} | {cpu:.2f}x |")
    if rose:
        raise SystemExit(f"the sum refinement raised the maximum occupancy on {rose} instances")


if __name__ == "__main__":
    main()
