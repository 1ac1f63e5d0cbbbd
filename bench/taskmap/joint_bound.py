"""The joint job bound (``lower_bound(..., strength="joint")``, issue 40, h51tmap) against
the default bound on the instances of :mod:`bench.taskmap.vs_peers`.

Per instance: the multilevel mapper's answer (recomputed by ``verify_mapping``) and its CPU
time, the default bound and the joint strength (each on graphs built apart: the bound is
cached beside the task graph) with their CPU times, and the gap ``(ours - bound) / ours`` of
each; for the three c = 1 pipelines whose gap was over 10 % also the gap against the best
mapping any run has found (``bench/taskmap/ISSUE40.md``: ``pack_jobs`` at 60 s). Exits
non-zero if a bound exceeds the mapper's verified answer.

    PYTHONPATH=src:. nice python -m bench.taskmap.joint_bound --kinds pipeline
"""

from __future__ import annotations

import argparse
import time

from bench.shared._progress import add_quiet, bar, say
from bench.taskmap.vs_peers import KINDS, instances
from coalloc.taskmap import verify_mapping
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.multilevel import map_multilevel

#: The best verified mappings known (h49tmap / h48bound's ``pack_jobs`` runs at 60 s).
BEST_KNOWN = {"table1 c=1 #0": 0.2251, "table1 c=1 #1": 0.2353, "table1 c=1 #3": 0.2191}


def _cpu(func, *args, **kw):
    t = time.process_time()
    out = func(*args, **kw)
    return out, time.process_time() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", nargs="+", default=["pipeline"], choices=KINDS)
    ap.add_argument("--quick", action="store_true")
    add_quiet(ap)
    args = ap.parse_args(argv)
    say("| instance | coalloc | default bound | joint | gap default -> joint | vs best known |"
        " CPU s mapper, default, joint |")  # fmt: skip
    say("|---|---:|---:|---:|---:|---:|---:|")
    bad = 0
    for _kind, name, build in bar(instances(args.kinds, args.quick), desc="instances"):
        tasks, res = build()
        result, map_cpu = _cpu(map_multilevel, tasks, res)
        ours = float(verify_mapping(tasks, res, result.mapping).max_occupancy)
        default, d_cpu = _cpu(lower_bound, *build())
        joint, j_cpu = _cpu(lower_bound, *build(), strength="joint")
        bad += joint > ours * (1 + 1e-9)
        best = BEST_KNOWN.get(name)
        vs = (f"{100 * (best - default) / best:.1f} % -> {100 * (best - joint) / best:.1f} %"
              if best else "")  # fmt: skip
        say(f"| {name} | {ours:.4g} | {default:.4g} | {joint:.4g} | "
            f"{100 * (ours - default) / ours:.1f} % -> {100 * (ours - joint) / ours:.1f} % | "
            f"{vs} | {map_cpu:.3f}, {d_cpu:.3f}, {j_cpu:.2f} |")  # fmt: skip
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
