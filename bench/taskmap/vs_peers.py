"""Task mapping against Scotch, KaHIP and METIS on the maximum occupancy (issue 26).

The same instances are mapped by

* the package: ``multilevel`` (the default method) and, up to ``--paper-max`` tasks, the
  paper's ``open+improve``;
* Scotch 7 (``pyscotch``): graph mapping onto a decomposition-defined architecture built
  from the resource graph (``SCOTCH_archBuild0``: terminals = processors with weights
  proportional to capacity, edge costs = inverse bandwidth), default strategy;
* KaHIP 3 (``kahip``): ``kaffpa`` (mode ECO, 3 % imbalance) into as many blocks as
  processors; block ``i`` goes to the ``i``-th processor of the hierarchy order (the Python
  binding has no target block weights nor the process mapping);
* METIS 5 (``pymetis``): k-way with target part weights proportional to capacity; part
  ``i`` goes to the processor whose capacity set its weight (the ``i``-th of the order);

each peer as one run on all processors and as a sweep over ~16 nested subsets (prefixes of
the hierarchy order, largest to one processor), keeping the mapping of lowest maximum
occupancy. Every kept mapping's maximum occupancy is recomputed with the package's
independent ``verify_mapping``. A missing peer is reported and left out.

Times: multilevel and each peer's single run are timed as the least of ``--repeat`` runs
(default 3), in wall-clock and in CPU time of this process; on a shared machine the CPU
time is the steadier of the two (the ratio columns give both).

    PYTHONPATH=src nice python -m bench.taskmap.vs_peers            # all 30 instances
    PYTHONPATH=src nice python -m bench.taskmap.vs_peers --quick    # 6 small instances
    PYTHONPATH=src nice python -m bench.taskmap.vs_peers --kinds stencil

Writes bench/out/vs_peers.csv and bench/out/vs_peers.png (ratio of the package's best to
the best peer, per instance).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import time
from typing import Any, Callable, Optional

import numpy as np

from bench.shared._plot import pyplot
from bench.shared._progress import add_quiet, bar, say
from coalloc._shared.jsonio import atomic_output
from coalloc.taskmap import generators as gen
from coalloc.taskmap import map_tasks, max_occupancy, verify_mapping
from coalloc.taskmap.multilevel import hierarchy_order, map_multilevel

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")
KINDS = ("pipeline", "stencil", "geometric")


# --------------------------------------------------------------------------------------
# Instances
# --------------------------------------------------------------------------------------


def _cluster(racks, nodes, cores, speed, node_bw, rack_bw, seed):
    return gen.hierarchical_cluster(
        n_racks=racks,
        nodes_per_rack=nodes,
        cores_per_node=cores,
        speed=speed,
        core_bandwidth=100.0,
        node_bandwidth=node_bw,
        rack_bandwidth=rack_bw,
        seed=seed,
    )


def instances(kinds, quick=False):
    """(kind, name, builder) triples; builders are deterministic."""
    out = []
    if "pipeline" in kinds:
        for c in (1, 16):
            for i in range(2 if quick else 5):
                out.append(
                    (
                        "pipeline",
                        f"table1 c={c} #{i}",
                        lambda c=c, i=i: gen.table1_instance(c, 7000 + 100 * c + i),
                    )
                )
    if "stencil" in kinds:
        specs = [
            ((8, 8), (1, 4, 4), 1.0, 10.0, 20.0),
            ((4, 4, 4), (1, 2, 4), (1.0, 3.0), 10.0, 20.0),
            ((16, 16), (2, 4, 4), (1.0, 3.0), 10.0, 20.0),
            ((8, 8, 8), (2, 4, 4), 1.0, 4.0, 8.0),
            ((32, 32), (2, 4, 8), 1.0, 10.0, 20.0),
            ((32, 32), (2, 4, 8), (1.0, 3.0), 2.0, 4.0),
            ((12, 12, 12), (2, 4, 8), (1.0, 3.0), 10.0, 20.0),
            ((48, 48), (4, 4, 8), 1.0, 10.0, 20.0),
            ((48, 48), (4, 4, 16), (1.0, 3.0), 5.0, 10.0),
            ((16, 16, 16), (4, 4, 16), 1.0, 10.0, 20.0),
            ((64, 64), (4, 8, 8), (1.0, 3.0), 10.0, 20.0),
            ((16, 16, 16), (2, 8, 8), (1.0, 3.0), 3.0, 6.0),
        ]
        if quick:
            specs = specs[:2]
        for j, (shape, (r, nd, co), speed, nbw, rbw) in enumerate(specs):
            name = f"stencil {'x'.join(map(str, shape))} on {r}x{nd}x{co}" + (
                " het" if isinstance(speed, tuple) else ""
            )
            out.append(
                (
                    "stencil",
                    name,
                    lambda shape=shape, r=r, nd=nd, co=co, speed=speed, nbw=nbw, rbw=rbw, j=j: (
                        gen.stencil_task_graph(shape, seed=j),
                        _cluster(r, nd, co, speed, nbw, rbw, 100 + j),
                    ),
                )
            )
    if "geometric" in kinds:
        specs = [
            (150, (1, 4, 4), (1.0, 3.0)),
            (300, (2, 4, 4), 1.0),
            (500, (2, 4, 4), (1.0, 3.0)),
            (800, (2, 4, 8), 1.0),
            (1000, (2, 4, 8), (1.0, 3.0)),
            (1200, "internet", None),
            (1500, (4, 4, 8), (1.0, 3.0)),
            (2000, (4, 4, 8), 1.0),
        ]
        if quick:
            specs = specs[:2]
        for j, (n, shape, speed) in enumerate(specs):
            if shape == "internet":

                def build(n=n, j=j):
                    return (
                        gen.geometric_task_graph(n, seed=200 + j),
                        gen.internet_resource_graph(seed=300 + j),
                    )

                name = f"geometric {n} on Table 1 graph"
            else:
                r, nd, co = shape

                def build(n=n, j=j, r=r, nd=nd, co=co, speed=speed):
                    return (
                        gen.geometric_task_graph(n, seed=200 + j),
                        _cluster(r, nd, co, speed, 50.0, 100.0, 300 + j),
                    )

                name = f"geometric {n} on {r}x{nd}x{co}" + (
                    " het" if isinstance(speed, tuple) else ""
                )
            out.append(("geometric", name, build))
    return out


# --------------------------------------------------------------------------------------
# Peers
# --------------------------------------------------------------------------------------


def _ints(x: np.ndarray, scale: float = 1000.0) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    top = x.max() if x.shape[0] and x.max() > 0 else 1.0
    return np.maximum(1, np.round(x / top * scale)).astype(np.int64)


def _subsets(p: int, count: int = 16) -> list:
    ks = sorted({int(round(p ** (i / (count - 1)))) for i in range(count)} | {p, 1}, reverse=True)
    return [k for k in ks if 1 <= k <= p]


class Scotch:
    name = "scotch"

    def __init__(self):
        import pyscotch
        from pyscotch import libscotch as lib

        self.pyscotch, self.lib = pyscotch, lib

    def _graph(self, ip, ix, velo, edlo):
        from pyscotch.graph import Graph

        dt = self.lib.get_scotch_dtype()
        g = Graph()
        g.build(
            np.asarray(ip, dtype=dt),
            np.asarray(ix, dtype=dt),
            np.asarray(velo, dtype=dt),
            np.asarray(edlo, dtype=dt),
        )
        return g

    def map(self, tasks, res, procs):
        from ctypes import POINTER, byref

        import scipy.sparse as sp
        from pyscotch.arch import Architecture
        from pyscotch.strategy import Strategy

        if len(procs) == 1:
            return np.full(tasks.n, procs[0], dtype=np.int64)
        lib = self.lib
        r, ln = res.n_nodes, res.links
        cost = _ints(1.0 / res.bandwidth, 1000.0)
        a = sp.csr_matrix(
            (np.r_[cost, cost], (np.r_[ln[:, 0], ln[:, 1]], np.r_[ln[:, 1], ln[:, 0]])),
            shape=(r, r),
        )
        a.sort_indices()
        velo = np.where(res.capacity > 0, _ints(res.capacity), 1)
        target = self._graph(a.indptr, a.indices, velo, a.data)
        arch = Architecture()
        lst = np.asarray(sorted(procs), dtype=lib.get_scotch_dtype())
        with Strategy()._materialized_mapping(len(lst)) as sd:
            ret = lib.SCOTCH_archBuild0(
                byref(arch._arch),
                byref(target._graph),
                lib.SCOTCH_Num(len(lst)),
                lst.ctypes.data_as(POINTER(lib.SCOTCH_Num)),
                byref(sd),
            )
        if ret != 0:
            raise RuntimeError("SCOTCH_archBuild0 failed")
        ip, ix, iw = tasks.undirected_csr()
        if ix.shape[0] == 0:
            ip, ix, iw = np.zeros(tasks.n + 1, dtype=np.int64), ix, iw
        g = self._graph(ip, ix, _ints(tasks.node_weight), _ints(iw) if iw.shape[0] else iw)
        self.pyscotch.random_reset()
        t = time.perf_counter()
        part = g.map(arch)
        self.last_map_seconds = time.perf_counter() - t  # the mapping alone, arch built
        return np.asarray(part, dtype=np.int64)


class Metis:
    name = "metis"

    def __init__(self):
        import pymetis

        self.pymetis = pymetis

    def map(self, tasks, res, procs):
        k = len(procs)
        if k == 1:
            return np.full(tasks.n, procs[0], dtype=np.int64)
        ip, ix, iw = tasks.undirected_csr()
        cap = res.capacity[procs]
        tp = (cap / cap.sum()).tolist()
        opts = self.pymetis.Options(seed=1)
        cut, parts = self.pymetis.part_graph(
            k,
            xadj=ip.tolist(),
            adjncy=ix.tolist(),
            vweights=_ints(tasks.node_weight).tolist(),
            eweights=_ints(iw).tolist() if iw.shape[0] else None,
            tpwgts=tp,
            options=opts,
        )
        return np.asarray(procs)[np.asarray(parts, dtype=np.int64)]


class Kahip:
    name = "kahip"

    def __init__(self):
        import kahip

        self.kahip = kahip

    def map(self, tasks, res, procs):
        k = len(procs)
        if k == 1:
            return np.full(tasks.n, procs[0], dtype=np.int64)
        ip, ix, iw = tasks.undirected_csr()
        _, blocks = self.kahip.kaffpa(
            _ints(tasks.node_weight).tolist(),
            ip.tolist(),
            _ints(iw).tolist() if iw.shape[0] else [],
            ix.tolist(),
            k,
            0.03,
            True,
            1,
            self.kahip.ECO,
        )
        return np.asarray(procs)[np.asarray(blocks, dtype=np.int64)]


def load_peers(names) -> list:
    out = []
    for cls in (Scotch, Kahip, Metis):
        if cls.name not in names:
            continue
        try:
            out.append(cls())
        except ImportError as exc:  # a missing peer is said, not hidden
            say(f"peer {cls.name} missing ({exc}); pip install 'coalloc[bench]'")
    return out


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


def _verified(tasks, res, mapping) -> float:
    rep = verify_mapping(tasks, res, mapping)
    if not rep.valid:
        raise SystemExit(f"invalid mapping: {rep.problems}")
    return float(rep.max_occupancy)


def _timed(func: Callable[[], Any], repeat: int = 1) -> tuple:
    """``func()``, its wall time and its CPU time (this process, all threads), each the
    least of ``repeat`` runs (the runs give the same answer: every method here is
    deterministic); the least is the run the shared machine disturbed least."""
    wall = cpu = math.inf
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = func()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return out, wall, cpu


def run_instance(kind, name, build, peers, args) -> dict:
    tasks, res = build()
    order = hierarchy_order(res)
    row: dict = {"kind": kind, "instance": name, "tasks": tasks.n, "processors": len(order)}
    repeat = max(1, int(getattr(args, "repeat", 1)))
    r, dt, cpu = _timed(lambda: map_multilevel(tasks, res, seed=0), repeat)
    row["cpu_multilevel"] = cpu
    occ = _verified(tasks, res, r.mapping)
    if abs(occ - r.max_occupancy) > 1e-9 * max(1.0, occ):
        raise SystemExit(f"{name}: multilevel claims {r.max_occupancy}, verify says {occ}")
    row["multilevel"], row["t_multilevel"] = occ, dt
    ours = [occ]
    if tasks.n <= args.paper_max:
        r2, dt2, _ = _timed(lambda: map_tasks(tasks, res, method="open+improve", seed=0))
        row["open+improve"], row["t_open+improve"] = _verified(tasks, res, r2.mapping), dt2
        ours.append(row["open+improve"])
    row["coalloc"] = min(ours)
    best_single, best_any = math.inf, math.inf
    for peer in peers:
        map_s = math.inf

        def single_run(peer=peer):
            nonlocal map_s
            out = peer.map(tasks, res, order)
            map_s = min(map_s, getattr(peer, "last_map_seconds", math.inf))
            return out

        m, dt, cpu = _timed(single_run, repeat)
        row[f"cpu_{peer.name}"] = cpu
        single = _verified(tasks, res, m)
        row[f"{peer.name}"], row[f"t_{peer.name}"] = single, dt
        if math.isfinite(map_s):
            row[f"t_{peer.name}_map"] = map_s
        kept, kept_occ = m, single
        t_sweep = dt
        for k in _subsets(len(order), args.subsets)[1:]:
            mk, dtk, _ = _timed(lambda peer=peer, k=k: peer.map(tasks, res, order[:k]))
            t_sweep += dtk
            o = max_occupancy(tasks, res, mk)[0]
            if o < kept_occ:
                kept, kept_occ = mk, o
        sweep = _verified(tasks, res, kept)
        row[f"{peer.name}_sweep"], row[f"t_{peer.name}_sweep"] = sweep, t_sweep
        best_single = min(best_single, single)
        best_any = min(best_any, single, sweep)
    row["best_peer_single"], row["best_peer"] = best_single, best_any
    row["ratio"] = row["coalloc"] / best_any if best_any > 0 else 1.0
    row["ratio_single"] = row["coalloc"] / best_single if best_single > 0 else 1.0
    if "t_scotch" in row:
        row["time_vs_scotch"] = row["t_multilevel"] / row["t_scotch"]
        row["time_vs_scotch_map"] = row["t_multilevel"] / max(row["t_scotch_map"], 1e-6)
        row["cpu_vs_scotch"] = row["cpu_multilevel"] / max(row["cpu_scotch"], 1e-6)
    return row


def summary(rows) -> list:
    lines = [
        "| instances | coalloc <= best peer (single+sweep) | geo. mean coalloc / best peer "
        "| vs single runs: <= / geo. mean | time multilevel / Scotch (median; in brackets: "
        "/ Scotch's mapping alone, architecture built) "
        "| CPU time multilevel / Scotch (median) | multilevel s (median, max) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    groups = [(k, [r for r in rows if r["kind"] == k]) for k in KINDS] + [("all", rows)]
    for kind, rs in groups:
        if not rs:
            continue
        win = sum(r["ratio"] <= 1 + 1e-9 for r in rs) / len(rs)
        gm = math.exp(statistics.fmean(math.log(r["ratio"]) for r in rs))
        worst = max(rs, key=lambda r: r["ratio"])
        win1 = sum(r["ratio_single"] <= 1 + 1e-9 for r in rs) / len(rs)
        gm1 = math.exp(statistics.fmean(math.log(r["ratio_single"]) for r in rs))
        tv = [r["time_vs_scotch"] for r in rs if "time_vs_scotch" in r]
        tvm = [r["time_vs_scotch_map"] for r in rs if "time_vs_scotch_map" in r]
        ts = [r["t_multilevel"] for r in rs]
        tc = [r["cpu_vs_scotch"] for r in rs if "cpu_vs_scotch" in r]
        ccell = f"{statistics.median(tc):.1f}x" if tc else "-"
        tcell = f"{statistics.median(tv):.1f}x ({statistics.median(tvm):.0f}x)" if tv else "-"
        lines.append(
            f"| {kind} ({len(rs)}) | {100 * win:.0f} % | {gm:.3f} (worst {worst['ratio']:.2f}) "
            f"| {100 * win1:.0f} % / {gm1:.3f} | {tcell} | {ccell} "
            f"| {statistics.median(ts):.2f}, {max(ts):.2f} |"
        )
    return lines


def picture(rows, path) -> Optional[str]:
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(10, 4.5))
    colors = {"pipeline": "tab:blue", "stencil": "tab:orange", "geometric": "tab:green"}
    x = np.arange(len(rows))
    ax.bar(x, [r["ratio"] for r in rows], color=[colors[r["kind"]] for r in rows])
    ax.scatter(x, [r["ratio_single"] for r in rows], color="k", marker="_", s=80, zorder=3)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([r["instance"] for r in rows], rotation=75, fontsize=6)
    ax.set_ylabel("max occupancy: coalloc / best peer")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [Patch(color=c, label=k) for k, c in colors.items()]
    handles.append(
        Line2D([], [], color="k", marker="_", ls="", label="vs single runs of the peers")
    )
    ax.legend(handles=handles, fontsize=7)
    ax.set_title(
        "coalloc (multilevel, open+improve) vs best of Scotch, KaHIP, METIS (+ subset sweeps)"
    )
    fig.tight_layout()
    with atomic_output(path, binary=True) as fh:
        fig.savefig(fh, dpi=110, format="png")
    plt.close(fig)
    return path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--quick", action="store_true", help="2 instances per kind")
    ap.add_argument("--peers", nargs="+", default=["scotch", "kahip", "metis"])
    ap.add_argument("--subsets", type=int, default=16, help="subset sizes of the sweep")
    ap.add_argument(
        "--paper-max",
        type=int,
        default=300,
        help="run open+improve up to this many tasks (it is slow beyond)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="time multilevel and each peer's single run as the least of this many runs",
    )
    ap.add_argument("--out", default=OUT)
    add_quiet(ap)
    args = ap.parse_args(argv)
    peers = load_peers(args.peers)
    rows = []
    for kind, name, build in bar(instances(args.kinds, args.quick), desc="instances", unit="inst"):
        rows.append(run_instance(kind, name, build, peers, args))
        r = rows[-1]
        say(
            f"{name}: coalloc {r['coalloc']:.4g} best peer {r['best_peer']:.4g} "
            f"ratio {r['ratio']:.3f} time {r['t_multilevel']:.2f}s "
            f"(scotch {r.get('t_scotch', float('nan')):.3f}s)"
        )
    os.makedirs(args.out, exist_ok=True)
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    with atomic_output(os.path.join(args.out, "vs_peers.csv"), newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print("\n".join(summary(rows)))
    print()
    print(
        "| instance | tasks | procs | multilevel | open+improve | "
        + " | ".join(f"{p.name} | {p.name} sweep" for p in peers)
        + " | ratio | t multilevel | t scotch |"
    )
    print("|---|---:|---:|---:|---:|" + "---:|" * (2 * len(peers)) + "---:|---:|---:|")
    for r in rows:
        cells = " | ".join(f"{r[p.name]:.4g} | {r[p.name + '_sweep']:.4g}" for p in peers)
        print(
            f"| {r['instance']} | {r['tasks']} | {r['processors']} | {r['multilevel']:.4g} | "
            f"{r.get('open+improve', float('nan')):.4g} | {cells} | {r['ratio']:.3f} | "
            f"{r['t_multilevel']:.3f} | {r.get('t_scotch', float('nan')):.3f} |"
        )
    p = picture(rows, os.path.join(args.out, "vs_peers.png"))
    if p:
        print(f"\npicture: {p}")


if __name__ == "__main__":
    main()
