"""The default lower bound before and after the job bound (issue 40 item 2, h48bound); the
lattice bound alone beside it (h58bound).

On the 30 instances of :mod:`bench.taskmap.vs_peers`: the multilevel mapper's answer
(recomputed by ``verify_mapping``) and its CPU time; the bound before (the largest of the
basic bound and the star-and-routes bound: the default until h48bound), the job bound alone
and the default bound now (``lower_bound(tasks, res)``), each on graphs built apart (the
bound is cached beside the task graph) with its CPU time; the gap ``(ours - bound) / ours``
of each. Exits non-zero if a bound exceeds the mapper's verified answer. ``--default``: the
answer is the default's (``taskmap.solve(tasks, res)``, untimed: the portfolio, with the grid
layout of h58bound's follow-up) instead of the multilevel mapper's. ``--opt-in`` (h59bound):
for every instance above 10 %, the opt-in strengths too (``"cuts"``, ``"spectral"``, and
``"joint"`` where the task graph has jobs: seconds of HiGHS), each on graphs built apart,
with its CPU: which argument, if any, the default leaves on the table.

    PYTHONPATH=src:. nice python -m bench.taskmap.job_bound [--kinds pipeline] [--quick] \\
        [--default] [--opt-in]
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import KINDS, instances
from coalloc.taskmap import solve, verify_mapping
from coalloc.taskmap.bounds import _basic, _stars, lower_bound
from coalloc.taskmap.jobbound import _job_sets, _jobs_bound
from coalloc.taskmap.latticebound import lattice_bound
from coalloc.taskmap.multilevel import map_multilevel


def _cpu(func, *args):
    t = time.process_time()
    out = func(*args)
    return out, time.process_time() - t


def _before(tasks, res) -> float:
    basic = _basic(tasks, res)
    return max(basic, _stars(tasks, res, basic)) if basic > 0 else basic


def _job_part(tasks, res) -> float:
    return _jobs_bound(tasks, res, _basic(tasks, res))


def _lattice_part(tasks, res) -> float:
    return lattice_bound(tasks, res, _basic(tasks, res))


def run(kinds, quick, default: bool = False) -> list:
    rows = []
    for kind, name, build in bar(instances(kinds, quick), desc="instances", unit="inst"):
        tasks, res = build()
        result, map_cpu = _cpu(solve if default else map_multilevel, tasks, res)
        ours = float(verify_mapping(tasks, res, result.mapping).max_occupancy)
        before, before_cpu = _cpu(_before, *build())  # graphs built apart: nothing cached
        jobs, jobs_cpu = _cpu(_job_part, *build())
        lattice, lattice_cpu = _cpu(_lattice_part, *build())
        after, after_cpu = _cpu(lower_bound, *build())
        rows.append(dict(kind=kind, name=name, ours=ours, before=before, jobs=jobs, after=after,
                         map_cpu=map_cpu, before_cpu=before_cpu, jobs_cpu=jobs_cpu,
                         after_cpu=after_cpu, lattice=lattice,
                         lattice_cpu=lattice_cpu))  # fmt: skip
    return rows


def _gap(ours, bound) -> float:
    return (ours - min(bound, ours)) / ours if ours > 0 else 0.0


def opt_in(kinds, quick, rows) -> None:
    """The opt-in strengths on the instances whose default gap is above 10 %."""
    say("| instance | coalloc | default bound | cuts (CPU s) | spectral (CPU s) | joint (CPU s) "
        "| best gap |")  # fmt: skip
    say("|---|---:|---:|---:|---:|---:|---:|")
    builds = {name: build for _, name, build in instances(kinds, quick)}
    for r in rows:
        if _gap(r["ours"], r["after"]) <= 0.1:
            continue
        build = builds[r["name"]]
        cells, best = [], r["after"]
        for strength in ("cuts", "spectral", "joint"):
            tasks, res = build()
            if strength == "joint" and not len(_job_sets(tasks)):
                cells.append("-")
                continue
            value, cpu = _cpu(lambda t=tasks, s=res, k=strength: lower_bound(t, s, strength=k))
            best = max(best, value)
            cells.append(f"{value:.4g} ({cpu:.2f})")
        say(f"| {r['name']} | {r['ours']:.4g} | {r['after']:.4g} | {' | '.join(cells)} "
            f"| {100 * _gap(r['ours'], best):.1f} % |")  # fmt: skip


def _summary(rs) -> str:
    gb = [_gap(r["ours"], r["before"]) for r in rs]
    ga = [_gap(r["ours"], r["after"]) for r in rs]
    med = statistics.median
    return (
        f"| {rs[0]['kind'] if len({r['kind'] for r in rs}) == 1 else 'all'} ({len(rs)}) "
        f"| {100 * med(gb):.1f} %, {100 * max(gb):.1f} % ({sum(g <= 0.1 for g in gb)}/{len(rs)}) "
        f"| {100 * med(ga):.1f} %, {100 * max(ga):.1f} % ({sum(g <= 0.1 for g in ga)}/{len(rs)}) "
        f"| {med(r['before_cpu'] for r in rs):.3f} / {med(r['after_cpu'] for r in rs):.3f} "
        f"({max(r['after_cpu'] for r in rs):.3f}) "
        f"| {med(r['jobs_cpu'] for r in rs):.4f} ({max(r['jobs_cpu'] for r in rs):.4f}) "
        f"| {med(r['map_cpu'] for r in rs):.3f} |"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--quick", action="store_true", help="2 instances per kind")
    ap.add_argument("--default", action="store_true", help="the default's answer (solve)")
    ap.add_argument("--opt-in", action="store_true",
                    help="the opt-in strengths on the instances above 10 %%")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    rows = run(args.kinds, args.quick, args.default)
    say("| instance | coalloc | bound before | job bound | lattice bound | bound after "
        "| gap before -> after | CPU s: before, job, lattice, after bound, mapper |")  # fmt: skip
    say("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        say(f"| {r['name']} | {r['ours']:.4g} | {r['before']:.4g} | {r['jobs']:.4g} "
            f"| {r['lattice']:.4g} | {r['after']:.4g} | {100 * _gap(r['ours'], r['before']):.1f} "
            f"% -> {100 * _gap(r['ours'], r['after']):.1f} % | {r['before_cpu']:.3f}, "
            f"{r['jobs_cpu']:.4f}, {r['lattice_cpu']:.4f}, {r['after_cpu']:.3f}, "
            f"{r['map_cpu']:.3f} |")  # fmt: skip
    say("")
    say("| instances | gap before: median, max (<= 10 %) | gap after: median, max (<= 10 %) "
        "| bound CPU s before / after, median (max after) | job bound CPU s median (max) "
        "| mapper CPU s median |")  # fmt: skip
    say("|---|---:|---:|---:|---:|---:|")
    for kind in args.kinds:
        rs = [r for r in rows if r["kind"] == kind]
        if rs:
            say(_summary(rs))
    say(_summary(rows))
    if args.opt_in:
        say("")
        opt_in(args.kinds, args.quick, rows)
    bad = [r["name"] for r in rows if r["after"] > r["ours"] * (1 + 1e-9)]
    if bad:
        raise SystemExit(f"a bound above the mapper's verified answer: {bad}")


if __name__ == "__main__":
    main()
