"""Task mapping against seven peers on the maximum occupancy and the sum objective
(issues 26 and 40).

The same instances are mapped by

* the package: ``multilevel`` (the default method) and, up to ``--paper-max`` tasks, the
  paper's ``open+improve``;
* Scotch 7 (``pyscotch``): graph mapping onto a decomposition-defined architecture built
  from the resource graph (``SCOTCH_archBuild0``: terminals = processors with weights
  proportional to capacity, edge costs = inverse bandwidth), default strategy; its
  answer is not deterministic between processes, so it runs ``--scotch-runs`` times
  (default 3) a mapping, the best kept and the runs' spread printed;
* KaHIP 3 (``kahip``): ``kaffpa`` (mode ECO, 3 % imbalance) into as many blocks as
  processors; block ``i`` goes to the ``i``-th processor of the hierarchy order (the Python
  binding has no target block weights nor the process mapping);
* METIS 5 (``pymetis``): k-way with target part weights proportional to capacity; part
  ``i`` goes to the processor whose capacity set its weight (the ``i``-th of the order);

* Mt-KaHyPar 1.7 (``mtkahypar``): ``map_onto_graph`` onto the complete graph of the
  processors weighted by route distance, presets ``default`` and ``highest_quality`` (its
  strongest), equal blocks (its individual block weights crash 1.7); on machines of at
  most 64 processors (its target-graph set-up took 47-88 s at 153 here);
* SharedMap (``chszlablib`` 0.5): process mapping onto the hierarchy cores x nodes x racks
  with the route distance of each level, modes ``fast``, ``eco``, ``strong``; hierarchical
  clusters only, equal blocks (no speeds);
* KaMinPar 3.7 (``kaminpar``): k-way partition with maximum block weights by capacity,
  presets ``default`` and ``strong``; part ``i`` to the ``i``-th processor, as METIS's;

Scotch, KaHIP and METIS as one run on all processors and as a sweep over ~16 nested
subsets (prefixes of the hierarchy order, largest to one processor), keeping the mapping of
lowest maximum occupancy; the new peers as one run (one thread each; none of them takes a
time limit in its Python binding, so "equal time" is their presets' own times, printed).
Every kept mapping's maximum occupancy is recomputed with the package's independent
``verify_mapping`` and its sum objective (volume x route distance, distance = sum of
``1 / bandwidth`` over the route) with ``communication_cost``; coalloc's certified gap is
the one ``taskmap.solve(..., bound=True)`` attaches (``bounds.lower_bound``). A missing peer
is reported and left out.

Times: multilevel and each peer's single run are timed as the least of ``--repeat`` runs
(default 3), in wall-clock and in CPU time of this process; on a shared machine the CPU
time is the steadier of the two (the ratio columns give both).

    PYTHONPATH=src nice python -m bench.taskmap.vs_peers            # all 30 instances
    PYTHONPATH=src nice python -m bench.taskmap.vs_peers --quick    # 6 small instances
    PYTHONPATH=src nice python -m bench.taskmap.vs_peers --kinds stencil
    PYTHONPATH=src:. nice python -m bench.taskmap.vs_peers --time-limit 1 --repeat 1

``--time-limit T``: coalloc is the default ``solve(tasks, res, time_limit=T)`` (what ``coalloc
taskmap map --time-limit T`` prints; one run, no open+improve), its printed gap and whether
it ended within ``T + max(0.05, 0.05 T)`` are recorded; files ``vs_peers_T<T>.csv/png``.
The tables add a row for the 19 hierarchical machines (SharedMap's family).

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
from coalloc._shared.result import relative_gap
from coalloc.taskmap import communication_cost, map_tasks, max_occupancy, solve, verify_mapping
from coalloc.taskmap import generators as gen
from coalloc.taskmap.bounds import lower_bound
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


def _with_hierarchy(build, r, nd, co):
    """Tag a builder whose machine is ``r`` racks x ``nd`` nodes x ``co`` cores: SharedMap
    takes the machine as that hierarchy (innermost level first) and a distance per level."""
    build.hierarchy = (co, nd, r)
    return build


def instances(kinds, quick=False):
    """(kind, name, builder) triples; builders are deterministic. A builder of a
    hierarchical cluster has ``hierarchy`` = (cores per node, nodes per rack, racks)."""
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
                    _with_hierarchy(
                        lambda shape=shape, r=r, nd=nd, co=co, speed=speed, nbw=nbw, rbw=rbw, j=j: (
                            gen.stencil_task_graph(shape, seed=j),
                            _cluster(r, nd, co, speed, nbw, rbw, 100 + j),
                        ),
                        r,
                        nd,
                        co,
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

                _with_hierarchy(build, r, nd, co)
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
    """Scotch's ``SCOTCH_graphMap``. Its answer moves between processes (also with
    ``random_reset``; h55tgen: single runs of 59-125 on one instance in four processes),
    so each ``map`` runs it ``runs`` times and keeps the mapping of least maximum
    occupancy (the strongest reading of the peer); ``last_spread`` is (least, largest)
    of those runs' bottlenecks. Its times cover the ``runs`` runs."""

    name = "scotch"
    runs = 3  # ``--scotch-runs``

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
        best, occs, took = None, [], 0.0
        for _ in range(max(1, int(self.runs))):
            self.pyscotch.random_reset()
            t = time.perf_counter()
            part = np.asarray(g.map(arch), dtype=np.int64)
            took += time.perf_counter() - t
            occs.append(max_occupancy(tasks, res, part)[0])
            if best is None or occs[-1] < min(occs[:-1]):
                best = part
        self.last_map_seconds = took  # the mappings alone, arch built
        self.last_spread = (min(occs), max(occs))
        return best


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


def _distances(res, procs) -> np.ndarray:
    """Route distance between the processors ``procs`` (sum of ``1 / bandwidth`` over the
    fixed route: the distance of :func:`coalloc.taskmap.communication_cost`)."""
    inv = 1.0 / np.asarray(res.bandwidth, dtype=np.float64)
    k = len(procs)
    d = np.zeros((k, k))
    for i in range(k):
        table = res.routes_from(int(procs[i]))
        for j in range(i + 1, k):
            row = table[int(procs[j])]
            d[i, j] = d[j, i] = inv[row[row >= 0]].sum()
    return d


def _int_distances(d: np.ndarray) -> np.ndarray:
    """Positive integer distances, the shortest one 10 (the peers take integers)."""
    pos = d[d > 0]
    low = pos.min() if pos.shape[0] else 1.0
    return np.maximum(1, np.round(d / low * 10.0)).astype(np.int64)


def _block_limits(tasks, res, procs, eps: float = 0.03) -> list:
    """Largest task weight (integer scale of :func:`_ints`) each processor may take:
    its share of the total by capacity, plus ``eps``."""
    w = _ints(tasks.node_weight)
    cap = res.capacity[procs].astype(np.float64)
    share = w.sum() * cap / cap.sum() * (1.0 + eps)
    return np.maximum(np.ceil(share), w.max()).astype(np.int64).tolist()


def _upper_edges(tasks):
    ip, ix, iw = tasks.undirected_csr()
    rows = np.repeat(np.arange(tasks.n), np.diff(ip))
    keep = rows < ix
    return rows[keep], ix[keep], _ints(iw)[keep] if iw.shape[0] else iw


class MtKahypar:
    """Mt-KaHyPar 1.7: ``map_onto_graph`` onto the target graph of the processors
    (complete, edge weight = integer route distance; Mt-KaHyPar's Steiner-tree metric is
    then the volume x distance sum), 3 % imbalance over equal blocks (no speeds: see
    :meth:`map`), one thread; machines of at most :attr:`max_processors`."""

    sweep = False
    repeat = 1  # timed once: the strong presets are slow

    def __init__(self, preset: str = "default"):
        import mtkahypar

        self.mtk = mtkahypar
        if not hasattr(MtKahypar, "_init"):
            MtKahypar._init = mtkahypar.initialize(1, False)
        self.preset = preset
        self.name = f"mtkahypar_{preset}"

    #: Mt-KaHyPar's set-up of a target graph grows fast with its size: 47-88 s for one
    #: map onto 153 processors here (76 tasks), so machines above this are left out
    max_processors = 64

    def applies(self, build, res) -> bool:
        return res.n_processors <= self.max_processors

    def map(self, tasks, res, procs):
        k = len(procs)
        if k == 1:
            return np.full(tasks.n, procs[0], dtype=np.int64)
        # Mt-KaHyPar 1.7's individual block weights (the capacities) crash its mapping
        # (segmentation fault on heterogeneous stencils) or are refused (more blocks than
        # tasks): it runs with its uniform balance, as SharedMap does
        return self._map(tasks, res, procs, by_capacity=False)

    def _map(self, tasks, res, procs, by_capacity):
        k = len(procs)
        mtk, init = self.mtk, MtKahypar._init
        ctx = init.context_from_preset(getattr(mtk.PresetType, self.preset.upper()))
        ctx.set_mapping_parameters(k, 0.03)
        if by_capacity:
            ctx.set_individual_target_block_weights(_block_limits(tasks, res, procs))
        ctx.logging = False
        mtk.set_seed(1)
        u, v, w = _upper_edges(tasks)
        g = init.create_graph(
            ctx,
            tasks.n,
            len(u),
            list(zip(u.tolist(), v.tolist())),
            _ints(tasks.node_weight).tolist(),
            w.tolist(),
        )
        d = _int_distances(_distances(res, procs))
        iu, ju = np.triu_indices(k, 1)
        target = init.create_target_graph(
            ctx, k, len(iu), list(zip(iu.tolist(), ju.tolist())), d[iu, ju].tolist()
        )
        part = g.map_onto_graph(target, ctx)
        blocks = np.asarray([part.block_id(t) for t in range(tasks.n)], dtype=np.int64)
        return np.asarray(procs)[blocks]


class SharedMap:
    """SharedMap (Schulz & Woydt 2025) through ``chszlablib`` 0.5: hierarchical machines
    only (hierarchy innermost first, an integer route distance per level), on all the
    processors (no sweep), one thread. It balances the task weights evenly over the
    processing elements: it has no processor speeds."""

    sweep = False
    repeat = 1  # timed once: the strong presets are slow

    def __init__(self, mode: str = "strong"):
        from chszlablib import Decomposition, Graph

        self.decomposition, self.graph = Decomposition, Graph
        self.mode = mode
        self.name = f"sharedmap_{mode}"

    def applies(self, build, res) -> bool:
        return getattr(build, "hierarchy", None) is not None

    hierarchy = None  # set per instance from the builder's tag

    def map(self, tasks, res, procs):
        hierarchy = self.hierarchy
        procs_sorted = np.sort(np.asarray(res.processors))
        if hierarchy is None or len(procs) != len(procs_sorted):
            raise ValueError("SharedMap maps onto the whole hierarchical machine only")
        # processors are numbered rack-major, then node, then core: PE id order
        hierarchy = [int(h) for h in hierarchy if h > 1]  # a level of one is no level
        step, levels = 1, []
        for size in hierarchy:
            levels.append(step)  # the first PE that differs at this level
            step *= size
        d = _distances(res, procs_sorted[[0] + levels])[0, 1:]
        dist = _int_distances(np.r_[0.0, d])[1:]
        ip, ix, iw = tasks.undirected_csr()
        g = self.graph.from_csr(
            ip.astype(np.int64),
            ix.astype(np.int64),
            node_weights=_ints(tasks.node_weight),
            edge_weights=_ints(iw) if iw.shape[0] else iw.astype(np.int64),
        )
        r = self.decomposition.process_map(
            g, list(hierarchy), dist.tolist(), mode=self.mode, threads=1, seed=0
        )
        return procs_sorted[np.asarray(r.assignment, dtype=np.int64)]


class Kaminpar:
    """KaMinPar 3.7: k-way partition with maximum block weights by capacity (3 %), one
    thread; part ``i`` goes to the ``i``-th processor of the order (as METIS's)."""

    sweep = False
    repeat = 1  # timed once: the strong presets are slow

    def __init__(self, preset: str = "default"):
        import kaminpar

        self.kaminpar = kaminpar
        self.preset = preset
        self.name = f"kaminpar_{preset}"

    def map(self, tasks, res, procs):
        import tempfile

        k = len(procs)
        if k == 1:
            return np.full(tasks.n, procs[0], dtype=np.int64)
        ip, ix, iw = tasks.undirected_csr()
        w, ew = _ints(tasks.node_weight), _ints(iw) if iw.shape[0] else iw
        lines = [f"{tasks.n} {len(ix) // 2} 011"]
        for t in range(tasks.n):
            nb = ix[ip[t] : ip[t + 1]] + 1
            cell = " ".join(f"{a} {b}" for a, b in zip(nb.tolist(), ew[ip[t] : ip[t + 1]].tolist()))
            lines.append(f"{w[t]} {cell}".rstrip())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "g.metis")
            with open(path, "w") as fh:
                fh.write("\n".join(lines) + "\n")
            g = self.kaminpar.load_graph(path, self.kaminpar.GraphFileFormat.METIS)
        ctx = getattr(self.kaminpar, f"{self.preset}_context")()
        self.kaminpar.reseed(1)
        parts = self.kaminpar.KaMinPar(1, ctx).compute_partition(
            g, _block_limits(tasks, res, procs)
        )
        return np.asarray(procs)[np.asarray(parts, dtype=np.int64)]


#: The peers by name (``--peers``); the new ones at their default and strongest presets.
PEERS = {
    "scotch": Scotch,
    "kahip": Kahip,
    "metis": Metis,
    "mtkahypar_default": lambda: MtKahypar("default"),
    "mtkahypar_highest_quality": lambda: MtKahypar("highest_quality"),
    "sharedmap_fast": lambda: SharedMap("fast"),
    "sharedmap_eco": lambda: SharedMap("eco"),
    "sharedmap_strong": lambda: SharedMap("strong"),
    "kaminpar_default": lambda: Kaminpar("default"),
    "kaminpar_strong": lambda: Kaminpar("strong"),
}


def load_peers(names) -> list:
    out = []
    for name in names:
        try:
            out.append(PEERS[name]())
        except ImportError as exc:  # a missing peer is said, not hidden
            say(f"peer {name} missing ({exc}); pip install 'coalloc[bench]'")
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
    deterministic but Scotch, whose ``map`` keeps the best of its own ``runs``, and the last
    run's answer is kept); the least is the run the shared machine disturbed least."""
    wall = cpu = math.inf
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = func()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return out, wall, cpu


def _gap(tasks, res, occ: float, strength: str = "stars") -> float:
    """The certified gap of ``occ``: what ``taskmap.solve(..., bound=True)`` attaches
    (the lower bound of :mod:`coalloc.taskmap.bounds` at its default strength, capped at
    the answer); ``strength="basic"``: against the bound before issue 40's item 2."""
    lb = min(lower_bound(tasks, res, strength=strength), occ)
    return float(relative_gap(occ, lb, sense="min"))


def run_instance(kind, name, build, peers, args) -> dict:
    tasks, res = build()
    order = hierarchy_order(res)
    row: dict = {"kind": kind, "instance": name, "tasks": tasks.n, "processors": len(order)}
    repeat = max(1, int(getattr(args, "repeat", 1)))
    # the bound's own time, on graphs built apart (the bound is cached per graph pair and
    # the mapper computes it too, as its floor): CPU seconds, the least of ``repeat`` runs
    bound_s = math.inf
    for _ in range(repeat):
        t2, r2 = build()
        _, _, c2 = _timed(lambda t2=t2, r2=r2: lower_bound(t2, r2))
        bound_s = min(bound_s, c2)
    row["cpu_bound"] = bound_s
    row["hierarchical"] = getattr(build, "hierarchy", None) is not None
    T = getattr(args, "time_limit", None)
    if T is None:
        r, dt, cpu = _timed(lambda: map_multilevel(tasks, res, seed=0), repeat)
    else:  # the default at the budget T, as a user calls it (one run: the clock decides)
        r, dt, cpu = _timed(lambda: solve(tasks, res, time_limit=T))
        row["printed_gap"] = float(r.gap)
        row["late"] = dt > T + max(0.05, 0.05 * T)
    row["cpu_multilevel"] = cpu
    occ = _verified(tasks, res, r.mapping)
    if abs(occ - r.max_occupancy) > 1e-9 * max(1.0, occ):
        raise SystemExit(f"{name}: multilevel claims {r.max_occupancy}, verify says {occ}")
    row["multilevel"], row["t_multilevel"] = occ, dt
    row["sum_multilevel"] = communication_cost(tasks, res, r.mapping)
    ours = [(occ, row["sum_multilevel"])]
    if T is None and tasks.n <= args.paper_max:
        r2, dt2, _ = _timed(lambda: map_tasks(tasks, res, method="open+improve", seed=0))
        row["open+improve"], row["t_open+improve"] = _verified(tasks, res, r2.mapping), dt2
        ours.append((row["open+improve"], communication_cost(tasks, res, r2.mapping)))
    row["coalloc"], row["sum_coalloc"] = min(ours)
    row["lower_bound"] = lower_bound(tasks, res)
    row["gap"] = _gap(tasks, res, row["coalloc"])
    row["lower_bound_basic"] = lower_bound(tasks, res, strength="basic")
    row["gap_basic"] = _gap(tasks, res, row["coalloc"], strength="basic")
    if getattr(args, "cuts", False):
        # the opt-in cut bound (issue 40 item 2), its CPU on graphs built apart
        t3, r3 = build()
        _, _, row["cpu_bound_cuts"] = _timed(
            lambda t3=t3, r3=r3: lower_bound(t3, r3, strength="cuts")
        )
        row["lower_bound_cuts"] = lower_bound(tasks, res, strength="cuts")
        row["gap_cuts"] = _gap(tasks, res, row["coalloc"], strength="cuts")
    best_single, best_any, best_sum = math.inf, math.inf, math.inf
    best_single_sum = math.inf
    points = []  # (bottleneck, sum) of every peer mapping: singles and kept sweeps
    for peer in peers:
        if hasattr(peer, "applies"):
            if not peer.applies(build, res):
                continue  # SharedMap off a hierarchy, Mt-KaHyPar on a large machine
            peer.hierarchy = getattr(build, "hierarchy", None)
        map_s = math.inf

        def single_run(peer=peer):
            nonlocal map_s
            out = peer.map(tasks, res, order)
            map_s = min(map_s, getattr(peer, "last_map_seconds", math.inf))
            return out

        m, dt, cpu = _timed(single_run, min(repeat, getattr(peer, "repeat", repeat)))
        row[f"cpu_{peer.name}"] = cpu
        spread = getattr(peer, "last_spread", None)
        if spread is not None:  # Scotch: its runs' least and largest bottleneck (single run)
            row[f"{peer.name}_runs_min"], row[f"{peer.name}_runs_max"] = spread
        single = _verified(tasks, res, m)
        row[f"{peer.name}"], row[f"t_{peer.name}"] = single, dt
        row[f"sum_{peer.name}"] = communication_cost(tasks, res, m)
        best_sum = min(best_sum, row[f"sum_{peer.name}"])
        best_single_sum = min(best_single_sum, row[f"sum_{peer.name}"])
        points.append((single, row[f"sum_{peer.name}"]))
        if math.isfinite(map_s):
            row[f"t_{peer.name}_map"] = map_s
        kept, kept_occ = m, single
        t_sweep = dt
        subsets = _subsets(len(order), args.subsets)[1:] if getattr(peer, "sweep", True) else []
        for k in subsets:
            mk, dtk, _ = _timed(lambda peer=peer, k=k: peer.map(tasks, res, order[:k]))
            t_sweep += dtk
            o = max_occupancy(tasks, res, mk)[0]
            if o < kept_occ:
                kept, kept_occ = mk, o
        sweep = _verified(tasks, res, kept)
        row[f"{peer.name}_sweep"], row[f"t_{peer.name}_sweep"] = sweep, t_sweep
        if subsets:
            best_sum = min(best_sum, communication_cost(tasks, res, kept))
            points.append((sweep, communication_cost(tasks, res, kept)))
        best_single = min(best_single, single)
        best_any = min(best_any, single, sweep)
    row["best_peer_single"], row["best_peer"] = best_single, best_any
    row["ratio"] = row["coalloc"] / best_any if best_any > 0 else 1.0
    row["ratio_single"] = row["coalloc"] / best_single if best_single > 0 else 1.0
    row["best_peer_sum"] = best_sum
    row["bound_vs_coalloc"] = row["cpu_bound"] / max(row["cpu_multilevel"], 1e-6)
    row["sum_ratio"] = row["sum_coalloc"] / best_sum if best_sum > 0 else 1.0
    # the sum against the peers' own runs (not the sweeps, which are ours: a mapping onto a
    # few processors has a tiny sum at several times the bottleneck), and against every peer
    # mapping at most as bottlenecked as ours
    row["best_peer_single_sum"] = best_single_sum
    row["sum_ratio_single"] = row["sum_coalloc"] / best_single_sum if best_single_sum > 0 else 1.0
    level = row["coalloc"] * (1 + 1e-9)
    at_level = [sm for occ, sm in points if occ <= level]
    row["sum_ratio_at_bottleneck"] = (
        row["sum_coalloc"] / min(at_level) if at_level and min(at_level) > 0 else math.nan
    )
    # dominated: a peer mapping no worse on the bottleneck and over 1.25x better on the sum
    row["dominated"] = sum(occ <= level and 1.25 * sm < row["sum_coalloc"] for occ, sm in points)
    if "t_scotch" in row:
        row["time_vs_scotch"] = row["t_multilevel"] / row["t_scotch"]
        row["time_vs_scotch_map"] = row["t_multilevel"] / max(row["t_scotch_map"], 1e-6)
        row["cpu_vs_scotch"] = row["cpu_multilevel"] / max(row["cpu_scotch"], 1e-6)
    if "cpu_sharedmap_strong" in row:
        row["cpu_vs_sharedmap_strong"] = row["cpu_multilevel"] / max(
            row["cpu_sharedmap_strong"], 1e-6
        )
    return row


def _gm(xs) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs)) if xs else math.nan


def _med(rows, key) -> float:
    xs = [r[key] for r in rows if key in r]
    return statistics.median(xs) if xs else math.nan


def _gaps(rs, key) -> str:
    gaps = [r[key] for r in rs if key in r]
    if not gaps:
        return "-"
    ok = sum(g <= 0.10 + 1e-12 for g in gaps)
    return (
        f"{100 * statistics.median(gaps):.1f} %, {100 * max(gaps):.1f} % ({ok}/{len(gaps)} <= 10 %)"
    )


def _groups(rows) -> list:
    """(name, rows) per kind, the hierarchical machines (stencils and geometric graphs on
    clusters: SharedMap's family), and all."""
    hier = [r for r in rows if r.get("hierarchical")]
    return ([(k, [r for r in rows if r["kind"] == k]) for k in KINDS]
            + [("hierarchical", hier), ("all", rows)])  # fmt: skip


def summary(rows) -> list:
    """Per kind: the bottleneck against the best peer, the sum objective against the best
    peer's, the certified gap and the times (wall; CPU ratios of the same run)."""
    lines = [
        "| instances | coalloc <= best peer | geo. mean coalloc / best peer (worst) "
        "| vs single runs: <= / geo. mean | sum objective coalloc / best peer's: geo. mean "
        "(worst; <= 1.25) | gap: median, max (<= 10 %) | coalloc s median (max) "
        "| Scotch s / SharedMap strong s (median) | CPU coalloc / Scotch, / SharedMap strong "
        "(median) | gap against the basic bound: median, max (<= 10 %) "
        "| bound CPU s median (max) | CPU bound / coalloc (median) "
        "| gap against the cut bound (--cuts): median, max (<= 10 %) "
        "| cut bound CPU s median (max) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    groups = _groups(rows)
    for kind, rs in groups:
        if not rs:
            continue
        win = sum(r["ratio"] <= 1 + 1e-9 for r in rs) / len(rs)
        worst = max(rs, key=lambda r: r["ratio"])
        win1 = sum(r["ratio_single"] <= 1 + 1e-9 for r in rs) / len(rs)
        sums = [r["sum_ratio"] for r in rs]
        ok_sum = sum(x <= 1.25 for x in sums)
        gaps = [r["gap"] for r in rs]
        ok_gap = sum(g <= 0.10 + 1e-12 for g in gaps)
        ts = [r["t_multilevel"] for r in rs]
        lines.append(
            f"| {kind} ({len(rs)}) | {100 * win:.0f} % | {_gm([r['ratio'] for r in rs]):.3f} "
            f"({worst['ratio']:.2f}) | {100 * win1:.0f} % / "
            f"{_gm([r['ratio_single'] for r in rs]):.3f} | {_gm(sums):.2f} ({max(sums):.2f}; "
            f"{ok_sum}/{len(rs)}) | {100 * statistics.median(gaps):.1f} %, "
            f"{100 * max(gaps):.1f} % ({ok_gap}/{len(rs)} <= 10 %) "
            f"| {statistics.median(ts):.2f} ({max(ts):.2f}) "
            f"| {_med(rs, 't_scotch'):.3f} / {_med(rs, 't_sharedmap_strong'):.3f} "
            f"| {_med(rs, 'cpu_vs_scotch'):.1f}x, {_med(rs, 'cpu_vs_sharedmap_strong'):.2f}x "
            f"| {_gaps(rs, 'gap_basic')} | {_med(rs, 'cpu_bound'):.3f} "
            f"({max(r.get('cpu_bound', math.nan) for r in rs):.3f}) "
            f"| {_med(rs, 'bound_vs_coalloc'):.2f}x | {_gaps(rs, 'gap_cuts')} "
            f"| {_med(rs, 'cpu_bound_cuts'):.3f} "
            f"({max((r.get('cpu_bound_cuts', math.nan) for r in rs), default=math.nan):.3f}) |"
        )
    return lines


def sum_summary(rows) -> list:
    """Per kind, the sum objective three ways: against the best peer mapping of any
    bottleneck (the issue's target), against the peers' own single runs, and against the
    peer mappings at most as bottlenecked as coalloc's; and how many instances have a peer
    mapping that dominates coalloc's (no worse bottleneck, over 1.25x lower sum)."""
    lines = [
        "| instances | sum / best peer mapping: geo. mean (<= 1.25) "
        "| sum / best single run: geo. mean (worst; <= 1.25) "
        "| sum / best peer mapping no more bottlenecked: geo. mean (instances with one) "
        "| dominated instances |",
        "|---|---:|---:|---:|---:|",
    ]
    groups = _groups(rows)
    for kind, rs in groups:
        if not rs:
            continue
        sums = [r["sum_ratio"] for r in rs]
        single = [r["sum_ratio_single"] for r in rs]
        level = [r["sum_ratio_at_bottleneck"] for r in rs
                 if not math.isnan(r["sum_ratio_at_bottleneck"])]  # fmt: skip
        lines.append(
            f"| {kind} ({len(rs)}) | {_gm(sums):.2f} ({sum(x <= 1.25 for x in sums)}/{len(rs)}) "
            f"| {_gm(single):.2f} ({max(single):.2f}; {sum(x <= 1.25 for x in single)}/{len(rs)}) "
            f"| {_gm(level):.2f} ({len(level)}) | {sum(r['dominated'] > 0 for r in rs)} |"
        )
    return lines


def per_peer(rows, peers) -> list:
    """Per peer: on how many instances it ran, its bottleneck and sum objective against
    coalloc's (geometric means), its median time."""
    lines = [
        "| peer | instances | coalloc / peer, bottleneck: <= / geo. mean "
        "| coalloc / peer, sum objective: geo. mean | peer s (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    for p in peers:
        rs = [r for r in rows if p.name in r]
        if not rs:
            lines.append(f"| {p.name} | 0 | - | - | - |")
            continue
        occ = [r["coalloc"] / r[p.name] for r in rs]
        sm = [r["sum_coalloc"] / r[f"sum_{p.name}"] for r in rs if r[f"sum_{p.name}"] > 0]
        lines.append(
            f"| {p.name} | {len(rs)} | {sum(x <= 1 + 1e-9 for x in occ)} / {_gm(occ):.3f} "
            f"| {_gm(sm):.3f} | {_med(rs, 't_' + p.name):.3f} |"
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
    ap.add_argument("--peers", nargs="+", default=list(PEERS), choices=list(PEERS))
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
    ap.add_argument(
        "--cuts",
        action="store_true",
        help="also the gap against lower_bound(strength='cuts') and its CPU (seconds a graph)",
    )
    ap.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="coalloc = the default solve(tasks, res, time_limit=T) (one run, no "
        "open+improve) instead of the untimed multilevel",
    )
    ap.add_argument(
        "--scotch-runs",
        type=int,
        default=3,
        help="Scotch's answer moves between processes: run it this many times a mapping "
        "and keep the best (its spread printed)",
    )
    ap.add_argument("--out", default=OUT)
    add_quiet(ap)
    args = ap.parse_args(argv)
    Scotch.runs = max(1, args.scotch_runs)
    peers = load_peers(args.peers)
    rows = []
    for kind, name, build in bar(instances(args.kinds, args.quick), desc="instances", unit="inst"):
        rows.append(run_instance(kind, name, build, peers, args))
        r = rows[-1]
        say(
            f"{name}: coalloc {r['coalloc']:.4g} best peer {r['best_peer']:.4g} "
            f"ratio {r['ratio']:.3f} sum ratio {r['sum_ratio']:.2f} gap {100 * r['gap']:.1f} % "
            f"time {r['t_multilevel']:.2f}s "
            f"(scotch {r.get('t_scotch', float('nan')):.3f}s"
            + (
                f", its {Scotch.runs} runs {r['scotch_runs_min']:.4g}-{r['scotch_runs_max']:.4g})"
                if "scotch_runs_min" in r
                else ")"
            )
        )
    os.makedirs(args.out, exist_ok=True)
    keys = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    tag = "" if args.time_limit is None else f"_T{args.time_limit:g}"
    with atomic_output(os.path.join(args.out, f"vs_peers{tag}.csv"), newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print("\n".join(summary(rows)))
    print()
    print("\n".join(sum_summary(rows)))
    print()
    print("\n".join(per_peer(rows, peers)))
    print()
    print(
        "| instance | tasks | procs | multilevel | open+improve | "
        + " | ".join(f"{p.name} | {p.name} sweep" for p in peers)
        + " | ratio | sum ratio | gap | t multilevel | t scotch |"
    )
    print("|---|---:|---:|---:|---:|" + "---:|" * (2 * len(peers)) + "---:|---:|---:|---:|---:|")
    for r in rows:
        cells = " | ".join(
            f"{r[p.name]:.4g} | {r[p.name + '_sweep']:.4g}" if p.name in r else "- | -"
            for p in peers
        )
        print(
            f"| {r['instance']} | {r['tasks']} | {r['processors']} | {r['multilevel']:.4g} | "
            f"{r.get('open+improve', float('nan')):.4g} | {cells} | {r['ratio']:.3f} | "
            f"{r['sum_ratio']:.2f} | {100 * r['gap']:.1f} % | "
            f"{r['t_multilevel']:.3f} | {r.get('t_scotch', float('nan')):.3f} |"
        )
    if args.time_limit is not None:
        late = sum(r["late"] for r in rows)
        gaps = [r["printed_gap"] for r in rows]
        print(f"\nT = {args.time_limit:g} s: printed gap <= 10 % on "
              f"{sum(g <= 0.10 + 1e-12 for g in gaps)}/{len(rows)}; calls past "
              f"T + max(0.05, 0.05 T): {late}")
    p = picture(rows, os.path.join(args.out, f"vs_peers{tag}.png"))
    if p:
        print(f"\npicture: {p}")


if __name__ == "__main__":
    main()
