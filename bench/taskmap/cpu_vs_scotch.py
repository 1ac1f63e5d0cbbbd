"""Issue 40 (h57cpu): the untimed mapper's CPU against Scotch's, with Scotch's threads
stated.

Scotch 7 (the ``pyscotch`` wheel) maps with as many threads as the machine has cores
unless ``SCOTCH_PTHREAD_NUMBER`` says otherwise, and it reads that variable at every
call. On the 2-core VM its threads synchronise thousands of times a mapping (8,800
voluntary context switches on stencil 48x48 onto 128 processors): with the default two
threads its **CPU** there is 0.22 s a run, with one thread 0.007 s. The CPU ratio of
:mod:`bench.taskmap.vs_peers` (which leaves the variable alone) therefore measures
Scotch's thread synchronisation under the load of the moment as much as its mapping.

This script times, per instance of the 30 of :mod:`bench.taskmap.vs_peers`, in one
process and alternated in rounds (so one load window serves all):

* Scotch's single mapping call (``vs_peers.Scotch`` with ``runs`` as given, 3 as there)
  with ``SCOTCH_PTHREAD_NUMBER=1`` and with the library's default threads;
* ``map_multilevel(tasks, res, seed=0)`` untimed (what ``vs_peers`` times), and with
  ``--variants`` the same under knob settings (``name:module.CONST=value,...``;
  ``blas=1``: the call inside :func:`coalloc.taskmap.blasthreads.blas_threads` at 1 thread);

and prints per instance the process-CPU medians and the median over the instances of the
per-instance ratios (the issue's "median time at most 5x Scotch's"), with the load.

    PYTHONPATH=src:. nice -n 5 python -m bench.taskmap.cpu_vs_scotch --repeat 3 \\
        --variants "one_blas:blas=1" "moves_alone:blockswap.BLOCK_SWAPS=False" \\
        "no_sum:sum_refine=False"
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from contextlib import nullcontext

from bench.shared._progress import add_quiet, bar


def _scotch_cpu(sc, tasks, res, order, threads) -> float:
    """Process CPU seconds of one ``sc.map`` with Scotch's threads at ``threads`` (None:
    the library's default)."""
    old = os.environ.get("SCOTCH_PTHREAD_NUMBER")
    if threads is None:
        os.environ.pop("SCOTCH_PTHREAD_NUMBER", None)
    else:
        os.environ["SCOTCH_PTHREAD_NUMBER"] = str(threads)
    try:
        c = time.process_time()
        sc.map(tasks, res, order)
        return time.process_time() - c
    finally:
        if old is None:
            os.environ.pop("SCOTCH_PTHREAD_NUMBER", None)
        else:
            os.environ["SCOTCH_PTHREAD_NUMBER"] = old


def _parse_variant(text: str) -> tuple:
    """``name:mod.CONST=value,...`` (``sum_refine=False`` is the call's argument) as
    ``(name, [(module or None, attribute, value)])``."""
    name, _, rest = text.partition(":")
    sets = []
    for item in filter(None, rest.split(",")):
        key, _, val = item.partition("=")
        mod, _, attr = key.rpartition(".")
        value = {"True": True, "False": False, "None": None}.get(val, val)
        if isinstance(value, str):
            try:
                value = float(value) if "." in value else int(value)
            except ValueError:
                pass
        sets.append((mod or None, attr, value))
    return name, sets


def _apply(sets: list) -> tuple:
    """Set the module constants of ``sets``; ``(undo list, keyword arguments)``."""
    import importlib

    undo, kwargs = [], {}
    for mod, attr, value in sets:
        if mod is None:
            kwargs[attr] = value
            continue
        module = importlib.import_module(f"coalloc.taskmap.{mod}")
        undo.append((module, attr, getattr(module, attr)))
        setattr(module, attr, value)
    return undo, kwargs


def main(argv: list | None = None) -> None:
    """Print per instance the CPU medians and the median per-instance ratios."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="rounds (medians over them)")
    ap.add_argument("--scotch-runs", type=int, default=3, help="Scotch's runs a mapping")
    ap.add_argument("--kinds", nargs="+", default=["pipeline", "stencil", "geometric"])
    ap.add_argument("--variants", nargs="*", default=[], help="name:mod.CONST=value,...")
    ap.add_argument("--json", default=None, help="write the rows here")
    add_quiet(ap)
    args = ap.parse_args(argv)

    from bench.taskmap import vs_peers as vp
    from coalloc.taskmap import communication_cost
    from coalloc.taskmap.blasthreads import blas_threads
    from coalloc.taskmap.multilevel import hierarchy_order, map_multilevel

    vp.Scotch.runs = max(1, args.scotch_runs)
    sc = vp.Scotch()
    variants = [("default", [])] + [_parse_variant(v) for v in args.variants]
    rows = []
    for kind, name, build in bar(vp.instances(args.kinds), desc="instances"):
        tasks, res = build()
        order = hierarchy_order(res)
        cpu: dict = {"scotch_1": [], "scotch_default": []}
        cpu.update({v: [] for v, _ in variants})
        row: dict = {"kind": kind, "instance": name, "load": os.getloadavg()[0]}
        for _ in range(max(1, args.repeat)):
            cpu["scotch_1"].append(_scotch_cpu(sc, tasks, res, order, 1))
            cpu["scotch_default"].append(_scotch_cpu(sc, tasks, res, order, None))
            for v, sets in variants:
                undo, kwargs = _apply(sets)
                blas = kwargs.pop("blas", None)  # ours in blas_threads(blas) (h57cpu)
                try:
                    c = time.process_time()
                    with blas_threads(blas) if blas is not None else nullcontext():
                        r = map_multilevel(tasks, res, seed=0, **kwargs)
                    cpu[v].append(time.process_time() - c)
                finally:
                    for module, attr, value in reversed(undo):
                        setattr(module, attr, value)
                row[f"occ_{v}"] = float(r.max_occupancy)
                row[f"sum_{v}"] = float(communication_cost(tasks, res, r.mapping))
        row.update({f"cpu_{k}": statistics.median(x) for k, x in cpu.items()})
        rows.append(row)
    head = ["scotch_1", "scotch_default"] + [v for v, _ in variants]
    print(f"load now {os.getloadavg()}; Scotch {args.scotch_runs} runs a mapping")
    print("| instance | " + " | ".join(head) + " | bottleneck | sum |")
    print("|---|" + "---:|" * (len(head) + 2))
    for r in rows:
        print(
            f"| {r['instance']} | "
            + " | ".join(f"{r['cpu_' + k]:.4f}" for k in head)
            + " | "
            + " / ".join(f"{r['occ_' + v]:.5g}" for v, _ in variants)
            + " | "
            + " / ".join(f"{r['sum_' + v]:.5g}" for v, _ in variants)
            + " |"
        )
    print("\n| ours | median CPU s | total | median ratio to Scotch 1 thread | to default |")
    print("|---|---:|---:|---:|---:|")
    for v, _ in variants:
        ours = [r[f"cpu_{v}"] for r in rows]
        r1 = [r[f"cpu_{v}"] / max(r["cpu_scotch_1"], 1e-6) for r in rows]
        rd = [r[f"cpu_{v}"] / max(r["cpu_scotch_default"], 1e-6) for r in rows]
        print(
            f"| {v} | {statistics.median(ours):.4f} | {sum(ours):.3f} | "
            f"{statistics.median(r1):.1f}x | {statistics.median(rd):.1f}x |"
        )
    for k in ("scotch_1", "scotch_default"):
        xs = [r[f"cpu_{k}"] for r in rows]
        print(f"| ({k}) | {statistics.median(xs):.4f} | {sum(xs):.3f} | | |")
    loads = [r["load"] for r in rows]
    print(f"\nload (1-min) during the run: {min(loads):.2f}-{max(loads):.2f}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh)


if __name__ == "__main__":
    main()
