"""Task mapping at scale: the cost of each stage of a cold solve, before and after (issue 26).

Two instances of about 10,000 tasks on about 1,000 processors (``--tasks``, ``--procs``):

* ``pipeline``: the paper's setting grown (Table 1 generators): a pipeline of parallel jobs of
  6-10 tasks on an Internet-like graph of LANs of 14-20 processors;
* ``stencil``: a 2-D five-point stencil (square grid, unit compute and volume) on a
  hierarchical cluster: racks of nodes of cores, core-node links of bandwidth 100, node-rack
  links 10, rack-top links 20; core speeds 1 or 2 by node (heterogeneous).
* ``stencil3d`` (only with ``--kinds``): a 3-D seven-point stencil (cube grid) on the same
  kind of cluster -- issue 26's largest case is ``--kinds stencil3d --tasks 4096 --procs 256``.

Each (code, instance) runs in a fresh Python process (a cold solve: imports, routes,
clustering and all), which reports the time of every stage and its peak resident memory:

=============  ===========================================================================
stage          what is timed
=============  ===========================================================================
routing        building the resource graph and its route table (``route_table``) from its
               arrays; the code before issue 26 ran only its Dijkstra here and walked each
               route in Python on first use, inside placement and refinement
clustering     the flow injection (``timings["clustering"]`` of ``map_tasks``)
placement      the first mapping (``timings["initial"]``)
refinement     the improvement rounds (``timings["improve"]``)
solve          ``map_tasks`` in all (``timings["total"]``)
verify         the independent ``verify_mapping`` of the result
total          routing + solve + verify (imports left out)
peak RSS       ``ru_maxrss`` of the process (Python, NumPy and SciPy included)
=============  ===========================================================================

``--baseline SRC`` also runs every instance with the coalloc found under ``SRC`` (e.g. the
``src`` folder of a checkout of main, with its compiled modules built), interleaved with
this one's, and prints both tables and the ratios; the mapping digests say whether the
answers are the same.

    python -m bench.taskmap.scale                           # this code, both instances
    python -m bench.taskmap.scale --baseline /work/main/src --repeat 3
    python -m bench.taskmap.scale --tasks 1000 --procs 100  # smaller
    python -m bench.taskmap.scale --kinds stencil3d --tasks 4096 --procs 256
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

from bench.shared._progress import add_quiet, bar

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STAGES = ("routing", "clustering", "placement", "refinement", "solve", "verify")
KINDS = ("pipeline", "stencil")
ALL_KINDS = (*KINDS, "stencil3d")


# ----------------------------------------------------------------------------- instances


def stencil_cluster(n_tasks: int, n_procs: int, seed: int, dims: int = 2):
    """A square (cube) stencil and a three-level cluster (arrays only: any coalloc)."""
    import numpy as np
    import scipy.sparse as sp

    side = max(2, int(round(n_tasks ** (1.0 / dims))))
    grid = sp.diags([1.0, 1.0], [-1, 1], shape=(side, side))
    eye = sp.identity(side)
    if dims == 2:
        comm = (sp.kron(eye, grid) + sp.kron(grid, eye)).tocsr()
    else:
        comm = (
            sp.kron(sp.kron(eye, eye), grid)
            + sp.kron(sp.kron(eye, grid), eye)
            + sp.kron(sp.kron(grid, eye), eye)
        ).tocsr()
    weight = np.ones(side**dims)
    cores, nodes_per_rack = 10, 10
    n_nodes = max(1, n_procs // cores)
    racks = max(1, -(-n_nodes // nodes_per_rack))
    rng = np.random.default_rng(seed)
    cap, edges, bw = [0.0], [], []  # node 0: the top switch
    for k in range(racks):
        rack = len(cap)
        cap.append(0.0)
        edges.append((0, rack))
        bw.append(20.0)
        for _ in range(min(nodes_per_rack, n_nodes - k * nodes_per_rack)):
            node = len(cap)
            cap.append(0.0)
            edges.append((rack, node))
            bw.append(10.0)
            speed = float(rng.choice([1.0, 2.0]))
            for _ in range(cores):
                cap.append(speed)
                edges.append((node, len(cap) - 1))
                bw.append(100.0)
    return (weight, comm), (np.array(cap), np.array(edges), np.array(bw))


def build(kind: str, n_tasks: int, n_procs: int, seed: int):
    """(task graph, resource arrays) of one instance."""
    import numpy as np

    from coalloc.taskmap import TaskGraph
    from coalloc.taskmap import generators as gen

    if kind == "pipeline":
        tasks = gen.pipeline_task_graph(
            n_clusters=max(1, n_tasks // 8), cluster_size=(6, 10), seed=seed
        )
        res = gen.internet_resource_graph(
            n_wan=10, n_lan=max(1, n_procs // 17), lan_size=(14, 20), seed=seed + 1
        )
        arrays = (res.capacity, res.links, res.bandwidth)
        return tasks, tuple(np.array(a) for a in arrays)
    (weight, comm), arrays = stencil_cluster(
        n_tasks, n_procs, seed, dims=3 if kind == "stencil3d" else 2
    )
    return TaskGraph(weight, comm), arrays


# ----------------------------------------------------------------------------- one run


def child(kind: str, n_tasks: int, n_procs: int, method: str, seed: int) -> dict:
    """One cold solve in this process; the stage times and the peak memory."""
    import resource

    t0 = time.perf_counter()
    import coalloc.taskmap as tm

    t_import = time.perf_counter() - t0
    tasks, (cap, links, bw) = build(kind, n_tasks, n_procs, seed)
    t = time.perf_counter()
    res = tm.ResourceGraph(cap, links, bandwidth=bw)
    try:
        from coalloc.taskmap.routing import route_table
    except ImportError:  # before issue 26: routes walked lazily, in the solve
        pass
    else:
        route_table(res)
    t_route = time.perf_counter() - t
    if method == "multilevel":  # the default of tm.solve (issue 26); its own stage names
        r = tm.solve(tasks, res, method=method, seed=seed)
        stages = ("coarsen", "initial", "refine")
    else:
        r = tm.map_tasks(tasks, res, method=method, seed=seed)
        stages = ("clustering", "initial", "improve")
    t = time.perf_counter()
    rep = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    t_verify = time.perf_counter() - t
    if not (rep.valid and rep.matches):
        raise SystemExit(f"verification failed: {rep}")
    return {
        "kind": kind,
        "tasks": tasks.n,
        "pairs": tasks.n_edges,
        "processors": res.n_processors,
        "nodes": res.n_nodes,
        "import": t_import,
        "routing": t_route,
        "clustering": r.timings[stages[0]],
        "placement": r.timings[stages[1]],
        "refinement": r.timings[stages[2]],
        "solve": r.timings["total"],
        "verify": t_verify,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "max_occupancy": r.max_occupancy,
        "digest": hashlib.sha1(r.mapping.tobytes()).hexdigest()[:12],
    }


def run(src: str, kind: str, args) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, ROOT]))
    cmd = [sys.executable, "-m", "bench.taskmap.scale", "--child", kind, "--tasks",
           str(args.tasks), "--procs", str(args.procs), "--method", args.method,
           "--seed", str(args.seed)]  # fmt: skip
    out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{src}: {kind} failed\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# ----------------------------------------------------------------------------- tables


def median_row(rows: list) -> dict:
    out = dict(rows[0])
    for r in rows:
        r["total"] = r["routing"] + r["solve"] + r["verify"]
    for k in (*STAGES, "total", "import", "peak_mib"):
        out[k] = statistics.median(r[k] for r in rows)
    return out


def table(title: str, rows: dict) -> str:
    cols = (*STAGES, "total")
    head = "| instance | " + " | ".join(f"{s} (s)" for s in cols)
    head += " | peak RSS (MiB) | max occupancy |"
    lines = [f"**{title}**", "", head, "|---" + "|---:" * (len(cols) + 2) + "|"]
    for kind, r in rows.items():
        name = f"{kind}: {r['tasks']} tasks, {r['pairs']} pairs, {r['processors']} processors"
        cells = " | ".join(f"{r[s]:.3f}" for s in cols)
        lines.append(f"| {name} | {cells} | {r['peak_mib']:.0f} | {r['max_occupancy']:.6g} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=10_000)
    ap.add_argument("--procs", type=int, default=1_000)
    ap.add_argument("--method", default="open+improve")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated instances")
    ap.add_argument("--repeat", type=int, default=1, help="fresh processes per cell (median)")
    ap.add_argument("--baseline", help="src folder of another coalloc to compare with")
    ap.add_argument("--child", choices=ALL_KINDS, help=argparse.SUPPRESS)
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.tasks, args.procs, args.method, args.seed)))
        return
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(ALL_KINDS))
    if unknown:
        raise SystemExit(f"--kinds: unknown {unknown}; choose from {list(ALL_KINDS)}")
    here = os.path.join(ROOT, "src")
    codes = {"this": here}
    if args.baseline:
        if not os.path.isdir(os.path.join(args.baseline, "coalloc")):
            raise SystemExit(f"--baseline {args.baseline}: no coalloc package there")
        codes = {"baseline": args.baseline, "this": here}
    results = {c: {k: [] for k in kinds} for c in codes}
    cells = [(kind, code) for _ in range(args.repeat) for kind in kinds for code in codes]
    for kind, code in bar(cells, desc="cold solves", unit="run"):  # interleaved codes
        results[code][kind].append(run(codes[code], kind, args))
    med = {c: {k: median_row(v) for k, v in per.items()} for c, per in results.items()}
    print(f"method {args.method}, seed {args.seed}, median of {args.repeat} fresh process(es)")
    for code, rows in med.items():
        print()
        print(table(f"{code} ({codes[code]})", rows))
    if "baseline" in med:
        print()
        print("| instance | total after/before | solve after/before | verify after/before "
              "| peak RSS after/before | same mapping "
              "| max occupancy before / after |")  # fmt: skip
        print("|---|---:|---:|---:|---:|---|---:|")
        for kind in kinds:
            a, b = med["this"][kind], med["baseline"][kind]
            same = "yes" if a["digest"] == b["digest"] else "no"
            ratios = [a[k] / b[k] for k in ("total", "solve", "verify", "peak_mib")]
            print(f"| {kind} | {ratios[0]:.3f} | {ratios[1]:.3f} | {ratios[2]:.3f} "
                  f"| {ratios[3]:.2f} | {same} "
                  f"| {b['max_occupancy']:.6g} / {a['max_occupancy']:.6g} |")  # fmt: skip


if __name__ == "__main__":
    main()
