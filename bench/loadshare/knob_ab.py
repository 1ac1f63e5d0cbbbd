"""Issue 40: the GAP heuristic's default against the same code with module knobs changed
(``search._AUTO_CYCLES=4``, ``tabu._X=...``), interleaved at equal time on the published
instances.

For every instance of ``--sets`` (or ``--only``), seed and ``--limits`` T, the default
call ``solve_gap(method="heuristic", time_limit=T, seed=s)`` and the same call with the
``--b`` knobs set (``MODULE.NAME=VALUE``, MODULE under :mod:`coalloc.loadshare.gap`, VALUE
a Python literal, restored after the call; ``call.NAME=VALUE``: a keyword of
``solve_gap``) run one after the other, the order alternating by seed so that a change
of load hits both alike; every answer is checked by
``verify_gap``. Printed: per instance the median gap over the seeds (``100 (z - best
known) / best known``) of each and the core cycles the B runs began, then per family and T
the mean and the worst of those medians, the load average at the start and the end.
``--iterations N`` runs untimed calls of N tabu iterations instead; ``--method`` another
method of ``solve_gap`` (the default portfolio, the exact method) in both variants.

    PYTHONPATH=src:. python -m bench.loadshare.knob_ab --data /work/peers/gapdata \\
        --sets chu1997 --limits 1 --seeds 0 1 2 3 4 --b search._AUTO_CYCLES=4
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import statistics
import time

from bench.loadshare.gap_published import SETS, best_known
from bench.loadshare.vs_fontanf import family
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count, seconds
from coalloc.loadshare import read_gap, solve_gap, verify_gap


def instances(data: str, sets, only):
    """``[(key, instance)]`` of the data directory's files in ``sets`` (``only``: names)."""
    out = []
    for s in sets:
        folder = os.path.join(data, s)
        for name in sorted(os.listdir(folder)):
            if only and name not in only:
                continue
            for k, inst in enumerate(read_gap(os.path.join(folder, name))):
                out.append((f"{s}/{name}" + (f"#{k}" if k else ""), inst))
    return out


def knob(text: str):
    """``MODULE.NAME=VALUE`` -> (module object, NAME, value); ``call.NAME=VALUE``: a
    keyword of ``solve_gap`` (module None)."""
    lhs, _, rhs = text.partition("=")
    mod, _, name = lhs.strip().rpartition(".")
    if mod == "call":
        return None, name, ast.literal_eval(rhs.strip())
    module = importlib.import_module(f"coalloc.loadshare.gap.{mod}")
    if not hasattr(module, name):
        raise argparse.ArgumentTypeError(f"{lhs}: no such knob")
    return module, name, ast.literal_eval(rhs.strip())


def run(inst, limit, seed, iterations, knobs, method="heuristic"):
    """One call of ``method`` with ``knobs`` set (restored after)."""
    old = [(mod, name, getattr(mod, name)) for mod, name, _ in knobs if mod is not None]
    kw = {name: value for mod, name, value in knobs if mod is None}
    try:
        for mod, name, value in knobs:
            if mod is not None:
                setattr(mod, name, value)
        return solve_gap(inst, method, time_limit=limit, seed=seed, iterations=iterations,
                         **kw)  # fmt: skip
    finally:
        for mod, name, value in old:
            setattr(mod, name, value)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA"),
                    help="fontanf/generalizedassignmentsolver's data/ folder")  # fmt: skip
    ap.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    ap.add_argument("--only", nargs="+", default=None, help="instance file names")
    ap.add_argument("--limits", nargs="+", type=seconds(), default=[1.0])
    ap.add_argument("--iterations", type=count(), default=None,
                    help="untimed calls of this many tabu iterations instead of --limits")
    ap.add_argument("--seeds", nargs="+", type=count(0), default=[0, 1, 2, 3, 4])
    ap.add_argument("--b", nargs="+", type=knob, default=None,
                    help="the B knobs, MODULE.NAME=VALUE (none: default only)")  # fmt: skip
    ap.add_argument("--method", default="heuristic", choices=("heuristic", "portfolio", "exact"),
                    help="the method both variants run (default: the heuristic)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    if not args.data:
        ap.error("give --data or COALLOC_GAPDATA")
    best = best_known(args.data)
    insts = instances(args.data, args.sets, args.only)
    if not insts:
        ap.error(f"no instance of {args.sets} is named {args.only}")
    limits = [None] if args.iterations else args.limits
    variants = {"default": []}
    if args.b:
        variants["B"] = args.b
        say("B: " + ", ".join(
            f"{'call' if m is None else m.__name__.rsplit('.', 1)[-1]}.{n}={v!r}"
            for m, n, v in args.b))  # fmt: skip
    say(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    gaps: dict = {}
    cyc: dict = {}
    wall: dict = {}  # the calls' wall seconds by variant (an overrun is extra time)
    sub: dict = {}  # the exact re-optimisation's (sets, improved) a call, when it ran
    for key, inst in bar(insts, desc="instances"):
        bk = best[key.split("#")[0]]
        for limit in limits:
            for seed in args.seeds:
                order = list(variants) if seed % 2 == 0 else list(variants)[::-1]
                for name in order:
                    t1 = time.perf_counter()
                    res = run(inst, limit, seed, args.iterations, variants[name], args.method)
                    wall.setdefault(name, []).append(time.perf_counter() - t1)
                    assert res.assignment is not None, (key, name, seed)
                    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
                    gaps.setdefault((key, limit, name), []).append(
                        100.0 * (res.objective - bk) / bk)  # fmt: skip
                    cyc.setdefault((key, limit, name), []).append(
                        res.iterations.get("core_cycles", 0))  # fmt: skip
                    if "subgap_sets" in res.iterations:  # search._SUBGAP on: sets / improved
                        sub.setdefault((key, limit, name), []).append(
                            (res.iterations["subgap_sets"], res.iterations["subgap_improved"]))
            meds = [statistics.median(gaps[(key, limit, v)]) for v in variants]
            say(f"{key} T={limit}: " + ", ".join(
                f"{v} {g:.3f}" for v, g in zip(variants, meds))
                + (f" (B cycles {cyc[(key, limit, 'B')]})" if args.b else "")
                + (f" (B subgap sets/improved {sub[(key, limit, 'B')]})"
                   if (key, limit, "B") in sub else ""))  # fmt: skip
    say(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    say("wall seconds a call, median / max: " + ", ".join(
        f"{v} {statistics.median(w):.3f} / {max(w):.3f}"
        for v, w in ((v, wall[v]) for v in variants)))  # fmt: skip
    say("| family | T | inst | " + " | ".join(f"{v} mean / worst %" for v in variants) + " |")
    fams = sorted({family(k) for k, _ in insts})
    for fam in fams + ["all"]:
        keys = [k for k, _ in insts if fam == "all" or family(k) == fam]
        for limit in limits:
            cells = []
            for v in variants:
                meds = [statistics.median(gaps[(k, limit, v)]) for k in keys]
                cells.append(f"{statistics.mean(meds):.3f} / {max(meds):.3f}")
            say(f"| {fam} | {limit} | {len(keys)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
