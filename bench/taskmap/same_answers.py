"""Issue 40 (h60cpu): the untimed mapper with the CPU knobs off and on, alternated per
instance, answers compared byte for byte.

The knobs of :data:`KNOBS` change how the untimed mapper computes (compiled loops, shared
eigensolves), never what: every mapping must be the same array. This script runs, per
instance of the 30 of :mod:`bench.taskmap.vs_peers` and the 24 held back
(:mod:`bench.taskmap.heldout`), the call ``vs_peers`` times (``map_multilevel(tasks, res,
seed=0)``, inside :func:`coalloc.taskmap.blasthreads.blas_threads` at one thread as
:func:`coalloc.taskmap.solve` runs it) with all the knobs off and all on, alternated (off
first in even rounds, on first in odd ones), each call on freshly built graphs; with
``--solve`` also the family's default ``solve(tasks, res)``. It prints per instance the
process-CPU medians and their ratio, the totals and the median ratio, the load before and
after, and every instance whose mapping (bytes) or maximum occupancy differs; it exits 1
if any differs.

    PYTHONPATH=src:. nice -n 5 python -m bench.taskmap.same_answers --repeat 3
    PYTHONPATH=src:. nice -n 5 python -m bench.taskmap.same_answers --sets 30 --solve
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import time

import numpy as np

from bench.shared._progress import add_quiet, bar

#: The knobs switched together: ``(module of coalloc.taskmap, constant)``, on = True.
KNOBS = (
    ("levels", "MATCH_KERNEL"),
    ("bisection", "HOP_KERNEL"),
    ("bisection", "FIEDLER_SHARED"),
    ("refinement", "MOVE_KERNEL"),
    ("bisection", "GROW_MEMO"),
    ("levels", "EXPAND_KERNEL"),
    ("refinement", "DEST_KERNEL"),
    ("refinement", "BEST_MOVE_KERNEL"),
    ("refinement", "LOADS_KERNEL"),
    ("refinement", "CUT_KERNEL"),
    ("sumrefine", "CROSS_KERNEL"),
    ("sumrefine", "RADIX_ORDER"),
    ("refinement", "TASKS_KERNEL"),
    ("bisection", "BLOCK_KERNEL"),
    ("swaprefine", "PICK_KERNEL"),
    ("refinement", "PICK_KERNEL"),
    ("sumrefine", "TABLE_KERNEL"),
    ("sumrefine", "EJECT_KERNEL"),
    ("engine", "FILL_KERNEL"),
    ("sumrefine", "MOVES_KERNEL"),
    ("sumrefine", "TRY_KERNEL"),
    ("sumrefine", "PARTNERS_KERNEL"),
    ("bisection", "REST_HEAP"),
)


def _set(on: bool) -> None:
    for mod, attr in KNOBS:
        setattr(importlib.import_module(f"coalloc.taskmap.{mod}"), attr, on)


def _instances(sets) -> list:
    from bench.taskmap import heldout as ho
    from bench.taskmap import vs_peers as vp

    out = []
    if "30" in sets:
        out += [("30", n, b) for _, n, b in vp.instances(["pipeline", "stencil", "geometric"])]
    if "24" in sets:
        out += [("24", n, b) for _, n, b in ho.instances()]
    return out


def _call(build, solve: bool) -> tuple:
    """CPU seconds and (mapping bytes, maximum occupancy) of one call on fresh graphs."""
    from coalloc.taskmap import solve as solve_
    from coalloc.taskmap.blasthreads import blas_threads
    from coalloc.taskmap.multilevel import map_multilevel

    tasks, res = build()
    c = time.process_time()
    if solve:
        r = solve_(tasks, res)
    else:
        with blas_threads(1):
            r = map_multilevel(tasks, res, seed=0)
    cpu = time.process_time() - c
    m = np.ascontiguousarray(r.mapping)
    return cpu, (m.dtype.str, m.tobytes(), float(r.max_occupancy))


def main(argv: list | None = None) -> int:
    """Run the alternated rounds; print the table; 1 if any answer differs."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds (medians over them)")
    ap.add_argument("--sets", nargs="+", default=["30", "24"], choices=["30", "24"])
    ap.add_argument("--solve", action="store_true", help="also solve(tasks, res) untimed")
    ap.add_argument("--json", default=None, help="write the rows here")
    add_quiet(ap)
    args = ap.parse_args(argv)
    calls = [False, True] if args.solve else [False]
    rows, differ = [], []
    load0 = os.getloadavg()
    try:
        for s, name, build in bar(_instances(args.sets), desc="instances"):
            row = {"set": s, "instance": name}
            for solve in calls:
                tag = "solve" if solve else "ml"
                cpu: dict = {False: [], True: []}
                seen: dict = {}
                for r in range(max(1, args.repeat)):
                    for on in ((False, True) if r % 2 == 0 else (True, False)):
                        _set(on)
                        t, ans = _call(build, solve)
                        cpu[on].append(t)
                        seen.setdefault(on, set()).add(ans)
                same = len(seen[False] | seen[True]) == 1
                if not same:
                    differ.append(f"{s} {name} ({tag})")
                row[f"{tag}_off"] = statistics.median(cpu[False])
                row[f"{tag}_on"] = statistics.median(cpu[True])
                row[f"{tag}_same"] = same
            rows.append(row)
    finally:
        _set(True)
    print(f"load before {load0}, after {os.getloadavg()}; {args.repeat} rounds, alternated")
    for solve in calls:
        tag = "solve" if solve else "ml"
        print(f"\n{'solve(tasks, res)' if solve else 'map_multilevel(seed=0), one BLAS thread'}")
        print("| set | instance | off s | on s | on/off | same |\n|---|---|---:|---:|---:|---|")
        for r in rows:
            print(f"| {r['set']} | {r['instance']} | {r[tag + '_off']:.4f} | {r[tag + '_on']:.4f}"
                  f" | {r[tag + '_on'] / max(r[tag + '_off'], 1e-9):.3f} | {r[tag + '_same']} |")
        for s in args.sets:
            sub = [r for r in rows if r["set"] == s]
            if not sub:
                continue
            off = [r[tag + "_off"] for r in sub]
            on = [r[tag + "_on"] for r in sub]
            ratio = statistics.median(b / max(a, 1e-9) for a, b in zip(off, on))
            print(f"{s}: total off {sum(off):.3f} s, on {sum(on):.3f} s ({sum(on) / sum(off):.3f});"
                  f" median off {statistics.median(off):.4f}, on {statistics.median(on):.4f};"
                  f" median per-instance ratio {ratio:.3f}")
    n = len(rows) * len(calls)
    listed = "" if not differ else ": " + "; ".join(differ)
    print(f"\nanswers differing: {len(differ)} of {n}{listed}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
