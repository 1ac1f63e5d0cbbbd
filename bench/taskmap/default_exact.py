"""The default (``portfolio``) untimed against the untimed exact MILP, 64-400 pairs (issue 36).

Instances of task-processor pairs ``n * k`` from 64 to 400, from two of the package's
generators (small Table 1 pipelines and stencils on hierarchical clusters) and from the
contract audit's (random bipartite and clustered task graphs on a star of skewed
processors and on a deep binary tree with thin root links,
``bench/shared/contract_audit.py``). Per instance: the default's maximum occupancy and time,
the exact method's (HiGHS, "untimed": cut at ``--cap`` seconds, reported as such), whether
the default is worse, by how much (relative), and both answers checked by ``verify``.

    PYTHONPATH=src:. nice python -m bench.taskmap.default_exact --cap 60

Prints one line per instance and a summary by size; writes
bench/out/taskmap_default_exact.csv.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import time

from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count, seconds

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def instances(quick: bool = False) -> list:
    """(name, generator, pairs, build) of every instance (``build()`` gives the graphs)."""
    from bench.shared import contract_audit as ca
    from coalloc.taskmap import generators as gen

    out = []

    def add(name, source, build):
        tasks, res = build()
        out.append((name, source, tasks.n * res.n_processors, build))

    seeds = range(2) if quick else range(4)
    for s in seeds:
        for n, k in ((20, 4), (24, 4), (30, 4), (16, 6), (40, 4), (25, 8), (50, 6), (50, 8)):
            add(f"bipartite-{n}/star{k}#{s}", "audit",
                lambda n=n, k=k, s=s: (ca.task_graph_bipartite(n, 200 + s),
                                       ca.star_resources(k, 200 + s)))  # fmt: skip
            add(f"clustered-{n}/star{k}#{s}", "audit",
                lambda n=n, k=k, s=s: (ca.task_graph_clustered(n, 300 + s),
                                       ca.star_resources(k, 300 + s)))  # fmt: skip
        for n, depth in ((20, 2), (30, 2), (12, 3), (16, 3), (25, 3), (40, 3)):
            add(f"clustered-{n}/tree{depth}#{s}", "audit",
                lambda n=n, d=depth, s=s: (ca.task_graph_clustered(n, 400 + s),
                                           ca._deep_tree(d, 400 + s)))  # fmt: skip
        hier = dict(n_racks=2, nodes_per_rack=2, cores_per_node=2, speed=(1.0, 4.0))
        for shape in ((3, 4), (4, 4), (4, 6), (5, 5)):
            add(f"stencil{shape[0]}x{shape[1]}/hier8#{s}", "generators",
                lambda shape=shape, s=s, hier=hier: (
                    gen.stencil_task_graph(shape, compute=(1.0, 3.0), seed=s),
                                          gen.hierarchical_cluster(**hier, seed=s)))  # fmt: skip
        for nc, cs in ((3, (3, 4)), (4, (3, 5)), (5, (4, 6))):
            add(f"pipeline{nc}x{cs[0]}-{cs[1]}/hier8#{s}", "generators",
                lambda nc=nc, cs=cs, s=s, hier=hier: (gen.pipeline_task_graph(n_clusters=nc,
                                                                   cluster_size=cs, seed=s),
                                           gen.hierarchical_cluster(**hier, seed=s)))  # fmt: skip
    return [x for x in out if 64 < x[2] <= 400]


def run_one(build, cap: float, exact_cells=None, reference=None) -> dict:
    """Both methods untimed on one instance (the exact one cut at ``cap`` s; with
    ``reference``, a row of an earlier run's CSV, its exact answer instead)."""
    import coalloc.taskmap as tm
    from coalloc.taskmap.portfolio import map_portfolio

    tasks, res = build()
    kw = {} if exact_cells is None else {"exact_cells": exact_cells}
    t0 = time.perf_counter()
    d = map_portfolio(tasks, res, **kw)
    t1 = time.perf_counter()
    assert tm.verify_mapping(tasks, res, d.mapping).valid
    out = {"default": d.max_occupancy, "default_status": d.status, "default_s": t1 - t0,
           "default_bound": d.bound, "message": d.message}  # fmt: skip
    if reference is not None:
        return {**out, "exact": float(reference["exact"]),
                "exact_status": reference["exact_status"],
                "exact_s": float(reference["exact_s"]),
                "exact_nodes": reference.get("exact_nodes")}  # fmt: skip
    e = tm.solve_exact_mapping(tasks, res, time_limit=cap)
    t2 = time.perf_counter()
    assert tm.verify_mapping(tasks, res, e.mapping).valid
    return {**out, "exact": e.max_occupancy, "exact_status": e.status, "exact_s": t2 - t1,
            "exact_nodes": e.iterations.get("nodes")}  # fmt: skip


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=seconds(), default=60.0,
                    help="seconds after which the 'untimed' exact run is cut")  # fmt: skip
    ap.add_argument("--quick", action="store_true", help="two seeds instead of four")
    ap.add_argument("--max-pairs", type=count(), default=400)
    ap.add_argument("--exact-cells", type=count(), default=None,
                    help="the default's exact_cells (default: its own)")  # fmt: skip
    ap.add_argument("--reference", default=None,
                    help="an earlier run's CSV: its exact answers, not solved again")
    ap.add_argument("--out", default=os.path.join(OUT, "taskmap_default_exact.csv"))
    add_quiet(ap)
    args = ap.parse_args(argv)
    say("load average", os.getloadavg())
    rows = []
    todo = [x for x in instances(args.quick) if x[2] <= args.max_pairs]
    ref = None
    if args.reference:
        with open(args.reference, newline="") as fh:
            ref = {row["name"]: row for row in csv.DictReader(fh)}
        todo = [x for x in todo if x[0] in ref]
    for name, source, pairs, build in bar(todo, desc="instances"):
        r = run_one(build, args.cap, args.exact_cells, None if ref is None else ref[name])
        worse = (r["exact"] is not None and r["default"] is not None
                 and r["default"] > r["exact"] * (1 + 1e-9))  # fmt: skip
        r.update(name=name, source=source, pairs=pairs, worse=worse,
                 by=(r["default"] / r["exact"] - 1) if worse else 0.0)  # fmt: skip
        rows.append(r)
        say(f"{name:28s} {pairs:4d}  default {r['default']:.6g} ({r['default_status']}, "
            f"{r['default_s']:.2f} s)  exact {r['exact']:.6g} ({r['exact_status']}, "
            f"{r['exact_s']:.2f} s){'  WORSE +%.1f%%' % (100 * r['by']) if worse else ''}")
    say("load average", os.getloadavg())
    for lo, hi in ((64, 100), (100, 160), (160, 250), (250, 400)):
        part = [r for r in rows if lo < r["pairs"] <= hi]
        if not part:
            continue
        w = [r for r in part if r["worse"]]
        cut = sum(r["exact_status"] == "time_limit" for r in part)
        say(f"pairs {lo+1}-{hi}: {len(part)} instances, default worse on {len(w)} "
            f"(max +{100 * max([r['by'] for r in w], default=0):.1f} %); exact median "
            f"{statistics.median(r['exact_s'] for r in part):.2f} s, max "
            f"{max(r['exact_s'] for r in part):.2f} s, cut at the cap {cut}; default median "
            f"{statistics.median(r['default_s'] for r in part):.2f} s")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
