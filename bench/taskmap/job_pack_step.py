"""The opt-in job packing step after the multilevel mapper (issue 40 item 2, h48bound's
follow-up; :func:`coalloc.taskmap.jobpack.pack_jobs`) on the 30 instances of
:mod:`bench.taskmap.vs_peers`: the mapper's answer and the step's (both recomputed by
``verify_mapping``), the default lower bound, the gap of each and the CPU of each. The step
applies where every task is in a job and the resource graph is a tree of single processors
(the pipelines); elsewhere it returns the mapper's answer at once.

    PYTHONPATH=src:. nice python -m bench.taskmap.job_pack_step [--kinds pipeline] [--tries 6]
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import KINDS, instances
from coalloc.cli._common import count, seconds
from coalloc.taskmap import verify_mapping
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.jobpack import pack_jobs
from coalloc.taskmap.multilevel import map_multilevel


def _gap(ours: float, bound: float) -> float:
    return (ours - min(bound, ours)) / ours if ours > 0 else 0.0


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--tries", type=count(), default=6, help="MILPs per instance at most")
    ap.add_argument("--time-limit", type=seconds(), default=180.0,
                    help="seconds a pipeline (pack_jobs' time_limit)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    rows = []
    for kind, name, build in bar(instances(args.kinds, False), desc="instances", unit="inst"):
        tasks, res = build()
        t = time.process_time()
        mapping = map_multilevel(tasks, res).mapping
        map_cpu = time.process_time() - t
        ours = float(verify_mapping(tasks, res, mapping).max_occupancy)
        t = time.process_time()
        packed, occ = pack_jobs(tasks, res, mapping, tries=args.tries,
                                time_limit=args.time_limit)  # fmt: skip
        step_cpu = time.process_time() - t
        rep = verify_mapping(tasks, res, packed)
        if not rep.valid or abs(float(rep.max_occupancy) - occ) > 1e-9 * max(1.0, occ):
            raise SystemExit(f"{name}: the step's mapping does not verify")
        lb = lower_bound(tasks, res)
        if lb > occ * (1 + 1e-9):
            raise SystemExit(f"{name}: the bound exceeds a verified mapping")
        rows.append(dict(kind=kind, name=name, ours=ours, step=occ, lb=lb, map_cpu=map_cpu,
                         step_cpu=step_cpu))  # fmt: skip
    say("| instance | mapper | with the step | bound | gap before -> after | CPU s mapper, step |")
    say("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        say(f"| {r['name']} | {r['ours']:.4g} | {r['step']:.4g} | {r['lb']:.4g} "
            f"| {100 * _gap(r['ours'], r['lb']):.1f} % -> {100 * _gap(r['step'], r['lb']):.1f} % "
            f"| {r['map_cpu']:.3f}, {r['step_cpu']:.3f} |")  # fmt: skip
    say("| instances | gap before: median, max (<= 10 %) | after | CPU s step median (max) |")
    say("|---|---:|---:|---:|")
    for kind in [*args.kinds, "all"]:
        rs = [r for r in rows if kind in ("all", r["kind"])]
        if not rs:
            continue
        gb = [_gap(r["ours"], r["lb"]) for r in rs]
        ga = [_gap(r["step"], r["lb"]) for r in rs]
        med = statistics.median
        cpu = [r["step_cpu"] for r in rs]
        say(f"| {kind} ({len(rs)}) | {100 * med(gb):.1f} %, {100 * max(gb):.1f} % "
            f"({sum(g <= 0.1 for g in gb)}/{len(rs)}) | {100 * med(ga):.1f} %, "
            f"{100 * max(ga):.1f} % ({sum(g <= 0.1 for g in ga)}/{len(rs)}) "
            f"| {med(cpu):.3f} ({max(cpu):.3f}) |")  # fmt: skip


if __name__ == "__main__":
    main()
