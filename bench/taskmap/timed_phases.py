"""Issue 36/40 follow-up (h51tmap): where a timed ``taskmap.solve`` call's time goes past
its limit on the large stencils and geometric graphs of :mod:`bench.taskmap.vs_peers`.

Runs the default (``solve(tasks, res, time_limit=T)``) on the named kinds at each limit,
``--reps`` times, and records per call the wall and process seconds; with ``--phases`` the
phases are timed (wrappers around the topology's build, the task graph's levels, the basic
floor bound, the early answer, the paper's starts, the coarsening and each of its levels,
the coarse starts, the bisections, the refinement passes, the finish of a stopped run, the
result's building, the stars bound's tests, the spare-time step, the status rule), and for
every call past ``T + max(0.05, 0.05 T)`` it prints which phases ran past the limit and by
how much. ``--busy K`` starts K busy loops beside it (killed at the end) so that the load
is about the same in every run on the 2-core VM.

    PYTHONPATH=src:. python -m bench.taskmap.timed_phases --kinds stencil geometric \\
        --limits 0.5 1 2 --busy 2 --phases

Prints the load average with every block. The wrappers add a few microseconds a phase.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import coalloc.taskmap as tm
from bench.shared._phases import EVENTS, busy
from bench.shared._phases import timed as _timed
from bench.shared._phases import wrap as _wrap
from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import instances


def instrument() -> None:
    """Wrap the phases of the default method (module attributes, in place)."""
    from coalloc._shared import params
    from coalloc.taskmap import multilevel as ml
    from coalloc.taskmap import portfolio, solvers

    for name, label in [("topology", "topology"), ("lower_bound", "floor bound"),
                        ("_early_answer", "early answer"), ("_paper_starts", "paper starts"),
                        ("_coarsen", "coarsen(all)"), ("coarsen_level", "coarsen level"),
                        ("_coarse_starts", "coarse starts"), ("bisect_map", "bisect_map"),
                        ("cut_refine", "cut_refine"), ("refine", "refine"),
                        ("_finish", "finish"), ("_sum_refined", "sum refine"),
                        ("_result", "result build"), ("RefineState", "RefineState()")]:  # fmt: skip
        _wrap(ml, name, label)
    _wrap(ml.TaskLevel, "of", "TaskLevel.of")
    builder = ml._Incumbent._builder

    def _builder(self, *args, **kwargs):
        return _timed(builder(self, *args, **kwargs), "incumbent build")

    ml._Incumbent._builder = _builder
    _wrap(portfolio, "_member", "multilevel(all)")  # (the default's member, h59edge)
    _wrap(portfolio, "_layers_in_time", "layers (timed)")
    _wrap(params, "mark_stopped", "mark_stopped")
    for name, label in [("timed_bound", "stars bound"), ("bound_tests", "bound_tests"),
                        ("pack_in_spare_time", "spare time"), ("settle", "settle")]:  # fmt: skip
        _wrap(solvers, name, label)




def _load() -> str:
    return open("/proc/loadavg").read().split()[0]


def _late_phases(ev: list, t0: float, limit: float) -> list:
    """The phases that ended past the limit: (seconds past, seconds taken, name)."""
    return sorted(((e - (t0 + limit), e - s, n) for n, s, e in ev if e > t0 + limit),
                  reverse=True)  # fmt: skip


#: The phases after the method's stop that :func:`_tail` names (the last of each)
_TAIL = ("multilevel(all)", "finish", "result build", "incumbent build", "stars bound",
         "spare time", "settle")


def _tail(events: list) -> str:
    """The end of a late call in one line: when the method stopped (seconds past ``T``),
    the seconds each phase after it took, and the phases in progress at ``T`` (those that
    started before it and ended after: the stop's latency)."""
    last = {n: (past, took) for past, took, n in sorted(events)}
    parts = [f"method ended {last['multilevel(all)'][0]:+.3f}"] if "multilevel(all)" in last else []
    parts += [f"{n} {last[n][1]:.3f}" for n in _TAIL[1:] if n in last]
    straddle = sorted({n for past, took, n in events if took > past and n not in _TAIL})
    return "; ".join(parts) + (f"; at T: {', '.join(straddle)}" if straddle else "")


def run_block(insts: list, limit: float, reps: int) -> dict:
    """Every instance ``reps`` times at ``limit`` (built anew for each call, so that the
    caches beside the graphs are cold as in a new call): the calls' walls, the late ones."""
    allow = limit + max(0.05, 0.05 * limit)
    rows = []
    for name, build in bar(insts, desc=f"T={limit:g}", leave=False):
        for rep in range(reps):
            tasks, res = build()  # cold: the caches beside the graphs (a new call's)
            EVENTS.clear()
            c0, t0 = time.process_time(), time.perf_counter()
            r = tm.solve(tasks, res, time_limit=limit)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            if not tm.Instance(tasks, res).verify(r).ok:
                raise SystemExit(f"{name}: a mapping that does not verify")
            rows.append(dict(name=name, rep=rep, wall=wall, cpu=cpu, late=wall > allow,
                             gap=float(r.gap), events=_late_phases(EVENTS, t0, limit)))  # fmt: skip
    walls = [r["wall"] for r in rows]
    within = sum(not r["late"] for r in rows)
    say(f"T={limit:g}: {len(rows)} calls, {within}/{len(rows)} within {allow:.3f} s; wall "
        f"median {statistics.median(walls):.3f} max {max(walls):.3f}; load {_load()}")
    for r in sorted((r for r in rows if r["late"]), key=lambda r: -r["wall"]):
        say(f"  {r['name']} #{r['rep']}: wall {r['wall']:.3f} cpu {r['cpu']:.3f}; "
            + _tail(r["events"]))
    return dict(limit=limit, within=within, calls=len(rows), max_wall=max(walls),
                rows=[{k: v for k, v in r.items() if k != "events"} for r in rows])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=["stencil", "geometric"])
    ap.add_argument("--only", nargs="*", default=None, help="instance names (substrings)")
    ap.add_argument("--limits", nargs="+", type=float, default=[0.5, 1.0, 2.0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--busy", type=int, default=0)
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--json", default=None, help="write the calls here")
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.phases:
        instrument()
    insts = []
    for _, name, build in instances(args.kinds):
        if args.only is None or any(s in name for s in args.only):
            insts.append((name, build))
    loops = busy(args.busy)
    out = []
    try:
        say(f"load at the start: {_load()} ({time.strftime('%H:%M:%S', time.gmtime())} UTC)")
        tm.solve(*insts[0][1](), time_limit=0.2)  # imports
        for limit in args.limits:
            out.append(run_block(insts, limit, args.reps))
    finally:
        for p in loops:
            p.kill()
            p.wait()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
