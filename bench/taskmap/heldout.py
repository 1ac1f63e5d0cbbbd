"""Task mapping against the peers on generators no one here tuned on (issue 40 item 1, the
held-back check).

Issue 40 is judged "on held-back task graphs and machines of other generators". The 30 of
:mod:`bench.taskmap.vs_peers` are pipelines on Internet-like graphs, 5/7-point stencils and
random geometric graphs on three-level clusters; this set is made of none of them. 24
instances, each a task graph and a machine built here from a seed (the same seed, the same
arrays), every graph validated by the package's model:

Task graphs (none from :mod:`coalloc.taskmap.generators`):

* ``delaunay``: the edges of the Delaunay triangulation of ``n`` uniform points of the unit
  square or cube (``scipy.spatial.Delaunay``; 2-D degree about 6, 3-D about 15), weights
  uniform in [1, 3], volumes uniform in [1, 10];
* ``ba`` / ``ws`` / ``plc``: Barabasi-Albert, connected Watts-Strogatz and Holme-Kim
  power-law cluster graphs (networkx); a task's weight grows as the square root of its
  degree (hubs compute more), volumes uniform in [1, 10];
* ``stencil9`` / ``stencil27``: 2-D 9-point / 3-D 27-point stencils with log-normal weights
  (sigma 0.75) and a refined ball (weights x 4); a face neighbour exchanges 4, an edge
  diagonal 1, a corner 0.25, each times the mean weight of the pair;
* ``butterfly``: the radix-2 FFT data flow, ``(k + 1) 2^k`` tasks, directed stage to stage;
* ``hypercube``: the binary-exchange FFT between ``2^d`` processes (``d`` partners each);
* ``pencil``: a 3-D FFT's two all-to-all transposes on a ``p1 x p2`` process grid (a
  clique per row and per column of the grid; a pair exchanges ``16 / side`` per unit of
  weight);
* ``mm25d``: 2.5-D matrix multiplication, ``c`` layers of a ``q x q`` Cannon torus (shifts
  of volume ``q / c``), layer 0 linked to the others (replication and reduction, 3);
* ``reduction``: a directed ``a``-ary reduction tree (leaves weigh 4, combiners 1).

Machines (none of the 30's shapes):

* ``tree``: a tree of switches of any depth; ``fanout`` innermost first (cores, nodes, ...),
  one bandwidth per level (fat: wider upwards; tapered: narrower), speeds per node;
  tagged with its hierarchy, so SharedMap maps onto it;
* ``torus`` / ``mesh``: 2-D/3-D tori and meshes of routers, each with ``cores`` cores (one:
  the router is the processor), link bandwidths spread around their mean;
* ``dragonfly``: groups of all-to-all routers, one global link between every two groups,
  ``cores`` cores per router; tagged (cores, routers, groups) for SharedMap;
* ``star``: one switch and nodes of 1-4 cores with spread speeds and uplinks (a
  heterogeneous cluster; not a regular hierarchy, no SharedMap).

Every peer of :mod:`bench.taskmap.vs_peers` runs through its own runner and scoring
(``run_instance``: objectives recomputed by ``verify_mapping`` / ``communication_cost``);
Mt-KaHyPar only where it applies (64 processors at most), SharedMap only on the tagged
machines. A peer that raises on an instance is reported with its reason and that instance
rerun without it (never silently).

    PYTHONPATH=src:. nice python -m bench.taskmap.heldout --time-limit 1 --repeat 1
    PYTHONPATH=src:. nice python -m bench.taskmap.heldout --time-limit 5 --repeat 1
    PYTHONPATH=src:. python -m bench.taskmap.heldout --list     # the instances, no run

Writes ``bench/out/heldout_T<T>.csv``; prints the tables of ``vs_peers`` (per kind, sums,
per peer) and per instance the best peer by name.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
from typing import Any, Callable, Optional

import numpy as np
import scipy.sparse as sp

from bench.shared._progress import add_quiet, bar, say
from bench.taskmap import vs_peers
from coalloc._shared.jsonio import atomic_output
from coalloc.taskmap.model import ResourceGraph, TaskGraph

KINDS = ("mesh", "network", "stencil", "kernel")


# --------------------------------------------------------------------------------------
# Task graphs
# --------------------------------------------------------------------------------------


def _undirected(n: int, u: np.ndarray, v: np.ndarray, w: np.ndarray) -> sp.csr_matrix:
    """The symmetric matrix of pairs ``(u, v)`` with volumes ``w`` (each pair once)."""
    return sp.csr_matrix((np.r_[w, w], (np.r_[u, v], np.r_[v, u])), shape=(n, n))


def _unique_pairs(u: np.ndarray, v: np.ndarray) -> tuple:
    lo, hi = np.minimum(u, v), np.maximum(u, v)
    keep = lo != hi
    pairs = np.unique(np.c_[lo[keep], hi[keep]], axis=0)
    return pairs[:, 0], pairs[:, 1]


def delaunay_graph(n: int, dim: int = 2, seed: int = 0) -> TaskGraph:
    """The Delaunay triangulation's edges of ``n`` uniform points in ``[0, 1]^dim``."""
    from scipy.spatial import Delaunay

    rng = np.random.default_rng(seed)
    pts = rng.random((n, dim))
    simplices = Delaunay(pts).simplices
    us, vs = [], []
    for a, b in itertools.combinations(range(dim + 1), 2):
        us.append(simplices[:, a])
        vs.append(simplices[:, b])
    u, v = _unique_pairs(np.concatenate(us), np.concatenate(vs))
    weight = rng.uniform(1.0, 3.0, n)
    return TaskGraph(weight, _undirected(n, u, v, rng.uniform(1.0, 10.0, u.shape[0])))


def network_graph(kind: str, n: int, m: int, p: float = 0.1, seed: int = 0) -> TaskGraph:
    """A networkx random graph: ``ba`` (Barabasi-Albert, ``m`` links per new task), ``ws``
    (connected Watts-Strogatz, ``m`` neighbours, rewiring ``p``) or ``plc`` (Holme-Kim,
    triangle probability ``p``); weight ``1 + sqrt(degree)`` x U(0.5, 1.5)."""
    import networkx as nx

    if kind == "ba":
        g = nx.barabasi_albert_graph(n, m, seed=seed)
    elif kind == "ws":
        g = nx.connected_watts_strogatz_graph(n, m, p, seed=seed)
    elif kind == "plc":
        g = nx.powerlaw_cluster_graph(n, m, p, seed=seed)
    else:
        raise ValueError(f"kind must be 'ba', 'ws' or 'plc', got {kind!r}")
    rng = np.random.default_rng(seed)
    e = np.asarray(sorted(tuple(sorted(x)) for x in g.edges()), dtype=np.int64)
    deg = np.bincount(e.ravel(), minlength=n)
    weight = (1.0 + np.sqrt(deg)) * rng.uniform(0.5, 1.5, n)
    return TaskGraph(weight, _undirected(n, e[:, 0], e[:, 1], rng.uniform(1.0, 10.0, len(e))))


def irregular_stencil(shape: tuple, seed: int = 0) -> TaskGraph:
    """A 9-point (2-D) or 27-point (3-D) stencil, log-normal weights and a refined ball."""
    rng = np.random.default_rng(seed)
    dims = tuple(int(d) for d in shape)
    n = int(np.prod(dims))
    grid = np.indices(dims).reshape(len(dims), -1).T
    centre = rng.uniform(0.25, 0.75, len(dims)) * np.asarray(dims)
    hot = np.linalg.norm(grid - centre, axis=1) < 0.2 * min(dims)
    weight = rng.lognormal(0.0, 0.75, n) * np.where(hot, 4.0, 1.0)
    idx = np.arange(n).reshape(dims)
    us, vs, ws = [], [], []
    for off in itertools.product((-1, 0, 1), repeat=len(dims)):
        if off <= (0,) * len(dims):  # each pair once: the offsets after zero
            continue
        src = tuple(slice(max(0, -o), d - max(0, o)) for o, d in zip(off, dims))
        dst = tuple(slice(max(0, o), d - max(0, -o)) for o, d in zip(off, dims))
        a, b = idx[src].ravel(), idx[dst].ravel()
        base = 4.0 ** (2 - sum(map(abs, off)))  # face 4, edge 1, corner 1/4
        us.append(a)
        vs.append(b)
        ws.append(base * 0.5 * (weight[a] + weight[b]))
    u, v, w = np.concatenate(us), np.concatenate(vs), np.concatenate(ws)
    return TaskGraph(weight, _undirected(n, u, v, w))


def butterfly_graph(k: int) -> TaskGraph:
    """The radix-2 FFT's data flow: stage ``s`` point ``i`` sends to ``(s + 1, i)`` and
    ``(s + 1, i xor 2^s)``; directed, unit weights and volumes."""
    width = 1 << k
    i = np.arange(width)
    rows, cols = [], []
    for s in range(k):
        for j in (i, i ^ (1 << s)):
            rows.append(s * width + i)
            cols.append((s + 1) * width + j)
    n = (k + 1) * width
    r, c = np.concatenate(rows), np.concatenate(cols)
    return TaskGraph(np.ones(n), sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(n, n)))


def hypercube_graph(d: int, seed: int = 0) -> TaskGraph:
    """The binary-exchange FFT between ``2^d`` processes: ``i`` and ``i xor 2^b`` exchange
    (volumes U(1, 2) per pair, weights U(1, 1.2))."""
    rng = np.random.default_rng(seed)
    n = 1 << d
    i = np.arange(n)
    u = np.concatenate([i[(i >> b) & 1 == 0] for b in range(d)])
    v = np.concatenate([i[(i >> b) & 1 == 0] ^ (1 << b) for b in range(d)])
    return TaskGraph(rng.uniform(1.0, 1.2, n), _undirected(n, u, v, rng.uniform(1, 2, len(u))))


def pencil_graph(p1: int, p2: int, volume: float = 16.0) -> TaskGraph:
    """A 3-D FFT on a ``p1 x p2`` process grid: all-to-all in every row and every column
    (volume ``volume / p2`` and ``volume / p1`` per pair), unit weights."""
    n = p1 * p2
    idx = np.arange(n).reshape(p1, p2)
    us, vs, ws = [], [], []
    for line, side in ((idx, p2), (idx.T, p1)):
        a, b = np.triu_indices(side, 1)
        us.append(line[:, a].ravel())
        vs.append(line[:, b].ravel())
        ws.append(np.full(line.shape[0] * a.shape[0], volume / side))
    return TaskGraph(
        np.ones(n), _undirected(n, np.concatenate(us), np.concatenate(vs), np.concatenate(ws))
    )


def mm25d_graph(q: int, c: int) -> TaskGraph:
    """2.5-D matrix multiplication: ``c`` layers of a ``q x q`` Cannon torus, the shifts
    of volume ``q / c`` per layer, layer 0 linked to every other (volume 3: the two
    replications and the reduction); unit weights."""
    idx = np.arange(c * q * q).reshape(c, q, q)
    us, vs, ws = [], [], []
    for ax in (1, 2):
        us.append(idx.ravel())
        vs.append(np.roll(idx, -1, axis=ax).ravel())
        ws.append(np.full(idx.size, q / c))
    for layer in range(1, c):
        us.append(idx[0].ravel())
        vs.append(idx[layer].ravel())
        ws.append(np.full(q * q, 3.0))
    u, v, w = np.concatenate(us), np.concatenate(vs), np.concatenate(ws)
    m = _undirected(idx.size, u, v, w)  # a side of 2 repeats a pair: summed, as traffic is
    return TaskGraph(np.ones(idx.size), m)


def reduction_graph(leaves: int, arity: int) -> TaskGraph:
    """A directed ``arity``-ary reduction tree over ``leaves`` leaves (weight 4), each
    combiner weight 1, unit volume child to parent."""
    rows, cols, level, nxt = [], [], list(range(leaves)), leaves
    while len(level) > 1:
        parents = []
        for j in range(0, len(level), arity):
            for child in level[j : j + arity]:
                rows.append(child)
                cols.append(nxt)
            parents.append(nxt)
            nxt += 1
        level = parents
    weight = np.r_[np.full(leaves, 4.0), np.ones(nxt - leaves)]
    comm = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(nxt, nxt))
    return TaskGraph(weight, comm)


# --------------------------------------------------------------------------------------
# Machines
# --------------------------------------------------------------------------------------


def tree_machine(fanout: tuple, bandwidth: tuple, speed=1.0, seed: int = 0) -> ResourceGraph:
    """A tree of switches: ``fanout`` innermost first (cores per node, nodes per switch,
    ...), ``bandwidth[l]`` the links from level ``l`` up; speeds U(speed) per node. Nodes
    depth-first, so processors are numbered cores first (SharedMap's order)."""
    rng = np.random.default_rng(seed)
    capacity, edges, bw = [0.0], [], []

    def grow(parent: int, level: int) -> None:
        s = rng.uniform(*speed) if isinstance(speed, tuple) and level == 0 else None
        for _ in range(fanout[level]):
            me = len(capacity)
            capacity.append(0.0 if level else 1.0)
            edges.append((parent, me))
            bw.append(bandwidth[level])
            if level:
                grow(me, level - 1)
            else:
                capacity[me] = s if s is not None else float(speed)

    grow(0, len(fanout) - 1)
    return ResourceGraph.from_edges(np.asarray(capacity), np.asarray(edges), np.asarray(bw))


def _with_cores(capacity, edges, bw, routers, cores, core_bw, rng, speed):
    """Attach ``cores`` processors to each router (one: the router itself computes)."""
    for r in routers:
        s = rng.uniform(*speed) if isinstance(speed, tuple) else float(speed)
        if cores == 1:
            capacity[r] = s
            continue
        for _ in range(cores):
            edges.append((r, len(capacity)))
            bw.append(core_bw)
            capacity.append(s)


def torus_machine(shape: tuple, bandwidth: float, *, cores: int = 1, wrap: bool = True,
                  spread: float = 0.0, speed=1.0, core_bw: float = 100.0,
                  seed: int = 0) -> ResourceGraph:  # fmt: skip
    """A torus (``wrap``) or mesh of routers, link bandwidths U(b (1 - spread), b (1 +
    spread)), ``cores`` processors per router (one: the routers compute)."""
    rng = np.random.default_rng(seed)
    dims = tuple(int(d) for d in shape)
    idx = np.arange(int(np.prod(dims))).reshape(dims)
    pairs = []
    for ax, side in enumerate(dims):
        if side < 2:
            continue
        nb = np.roll(idx, -1, axis=ax)
        keep = np.ones(dims, dtype=bool)
        if not wrap or side == 2:  # a side of two wraps onto the same link
            last = [slice(None)] * len(dims)
            last[ax] = slice(side - 1, side)
            keep[tuple(last)] = False
        pairs.append(np.c_[idx[keep], nb[keep]])
    links = np.concatenate(pairs)
    bw = list(bandwidth * rng.uniform(1 - spread, 1 + spread, len(links)))
    edges = [tuple(x) for x in links.tolist()]
    capacity = [0.0] * idx.size
    _with_cores(capacity, edges, bw, range(idx.size), cores, core_bw, rng, speed)
    return ResourceGraph.from_edges(np.asarray(capacity), np.asarray(edges), np.asarray(bw))


def dragonfly_machine(groups: int, routers: int, cores: int, *, local_bw: float,
                      global_bw: float, core_bw: float = 100.0, speed=1.0,
                      seed: int = 0) -> ResourceGraph:  # fmt: skip
    """Groups of ``routers`` all-to-all routers; one global link between every two groups
    (the ``j``-th of a group on its router ``j mod routers``); ``cores`` per router.
    Nodes group-major, each router followed by its cores (SharedMap's order)."""
    rng = np.random.default_rng(seed)
    capacity, edges, bw = [], [], []
    router = np.zeros((groups, routers), dtype=np.int64)
    for g in range(groups):
        for r in range(routers):
            router[g, r] = len(capacity)
            capacity.append(0.0)
            _with_cores(capacity, edges, bw, [router[g, r]], cores, core_bw, rng, speed)
        for a, b in itertools.combinations(range(routers), 2):
            edges.append((router[g, a], router[g, b]))
            bw.append(local_bw)
    used = np.zeros(groups, dtype=np.int64)
    for g1, g2 in itertools.combinations(range(groups), 2):
        edges.append((router[g1, used[g1] % routers], router[g2, used[g2] % routers]))
        bw.append(global_bw)
        used[g1] += 1
        used[g2] += 1
    e = np.asarray(edges, dtype=np.int64)
    return ResourceGraph.from_edges(np.asarray(capacity), e, np.asarray(bw))


def star_machine(nodes: int, *, speed=(0.5, 4.0), uplink=(2.0, 40.0), core_bw: float = 100.0,
                 seed: int = 0) -> ResourceGraph:  # fmt: skip
    """One switch, ``nodes`` nodes of 1-4 cores (speed and uplink drawn per node)."""
    rng = np.random.default_rng(seed)
    capacity, edges, bw = [0.0], [], []
    for _ in range(nodes):
        node = len(capacity)
        capacity.append(0.0)
        edges.append((0, node))
        bw.append(rng.uniform(*uplink))
        _with_cores(capacity, edges, bw, [node], int(rng.integers(1, 5)), core_bw, rng, speed)
    return ResourceGraph.from_edges(np.asarray(capacity), np.asarray(edges), np.asarray(bw))


# --------------------------------------------------------------------------------------
# The instances
# --------------------------------------------------------------------------------------


def _tagged(build: Callable, hierarchy: Optional[tuple]) -> Callable:
    """A builder SharedMap maps onto when ``hierarchy`` (innermost level first) is given."""
    if hierarchy is not None:
        build.hierarchy = tuple(hierarchy)
    return build


def _machines() -> dict:
    """name -> (builder of the machine, SharedMap hierarchy or None)."""
    return {
        "tree 8x2": (lambda: tree_machine((8, 2), (100.0, 8.0)), (8, 2)),
        "tree 4x4x4 fat": (lambda: tree_machine((4, 4, 4), (100.0, 10.0, 40.0)), (4, 4, 4)),
        "tree 4x4x4x2 het": (
            lambda: tree_machine((4, 4, 4, 2), (100.0, 20.0, 30.0, 40.0), (1.0, 3.0), 11),
            (4, 4, 4, 2),
        ),
        "tree 2^6": (lambda: tree_machine((2,) * 6, (64.0, 32.0, 16.0, 8.0, 8.0, 8.0)), (2,) * 6),
        "tree 8x4x4 tapered het": (
            lambda: tree_machine((8, 4, 4), (100.0, 20.0, 5.0), (1.0, 2.0), 12),
            (8, 4, 4),
        ),
        "tree 16x4x4": (lambda: tree_machine((16, 4, 4), (200.0, 40.0, 40.0)), (16, 4, 4)),
        "tree 8x4x2x2 het": (
            lambda: tree_machine((8, 4, 2, 2), (100.0, 15.0, 15.0, 10.0), (1.0, 3.0), 13),
            (8, 4, 2, 2),
        ),
        "torus 8x8": (lambda: torus_machine((8, 8), 20.0), None),
        "torus 4x4x4 spread": (lambda: torus_machine((4, 4, 4), 20.0, spread=0.5, seed=21), None),
        "torus 16x8": (lambda: torus_machine((16, 8), 30.0, speed=(1.0, 2.0), seed=22), None),
        "torus 4x4x4 x2 cores": (lambda: torus_machine((4, 4, 4), 15.0, cores=2), None),
        "mesh 6x6 x2 het": (
            lambda: torus_machine((6, 6), 25.0, cores=2, wrap=False, spread=0.6,
                                  speed=(1.0, 3.0), seed=23),
            None,
        ),  # fmt: skip
        "mesh 8x8 spread": (
            lambda: torus_machine((8, 8), 20.0, wrap=False, spread=0.75, seed=24),
            None,
        ),
        "dragonfly 5x4x2": (
            lambda: dragonfly_machine(5, 4, 2, local_bw=40.0, global_bw=10.0),
            (2, 4, 5),
        ),
        "dragonfly 4x4x4": (
            lambda: dragonfly_machine(4, 4, 4, local_bw=30.0, global_bw=15.0, seed=31),
            (4, 4, 4),
        ),
        "dragonfly 9x4x4 het": (
            lambda: dragonfly_machine(9, 4, 4, local_bw=40.0, global_bw=10.0, speed=(1.0, 2.5),
                                      seed=32),
            (4, 4, 9),
        ),  # fmt: skip
        "star 24": (lambda: star_machine(24, seed=41), None),
        "star 40": (lambda: star_machine(40, seed=42), None),
    }


#: (kind, task graph name, builder of the task graph, machine name)
SPECS = [
    ("mesh", "delaunay2d 1000", lambda: delaunay_graph(1000, 2, 501), "tree 4x4x4x2 het"),
    ("mesh", "delaunay2d 2500", lambda: delaunay_graph(2500, 2, 502), "torus 8x8"),
    ("mesh", "delaunay2d 3000", lambda: delaunay_graph(3000, 2, 503), "mesh 8x8 spread"),
    ("mesh", "delaunay3d 800", lambda: delaunay_graph(800, 3, 504), "dragonfly 5x4x2"),
    ("mesh", "delaunay3d 2000", lambda: delaunay_graph(2000, 3, 505), "tree 2^6"),
    ("network", "ba 1000 m3", lambda: network_graph("ba", 1000, 3, seed=511),
     "tree 8x4x4 tapered het"),
    ("network", "ba 2000 m2", lambda: network_graph("ba", 2000, 2, seed=512), "torus 4x4x4 spread"),
    ("network", "ba 3000 m4", lambda: network_graph("ba", 3000, 4, seed=513), "tree 16x4x4"),
    ("network", "ws 1500 k6", lambda: network_graph("ws", 1500, 6, 0.05, 514),
     "dragonfly 9x4x4 het"),
    ("network", "ws 600 k8", lambda: network_graph("ws", 600, 8, 0.2, 515), "star 24"),
    ("network", "plc 1200 m3", lambda: network_graph("plc", 1200, 3, 0.5, 516), "mesh 6x6 x2 het"),
    ("network", "plc 400 m2", lambda: network_graph("plc", 400, 2, 0.3, 517), "tree 8x2"),
    ("stencil", "stencil9 48x48", lambda: irregular_stencil((48, 48), 521), "tree 8x4x2x2 het"),
    ("stencil", "stencil27 12^3", lambda: irregular_stencil((12, 12, 12), 522),
     "torus 4x4x4 spread"),
    ("stencil", "stencil9 64x32", lambda: irregular_stencil((64, 32), 523), "dragonfly 4x4x4"),
    ("stencil", "stencil27 20x20x8", lambda: irregular_stencil((20, 20, 8), 524),
     "dragonfly 9x4x4 het"),
    ("stencil", "stencil9 30x30", lambda: irregular_stencil((30, 30), 525), "star 40"),
    ("kernel", "butterfly 2^7", lambda: butterfly_graph(7), "tree 4x4x4 fat"),
    ("kernel", "butterfly 2^8", lambda: butterfly_graph(8), "torus 16x8"),
    ("kernel", "hypercube 2^10", lambda: hypercube_graph(10, 531), "dragonfly 4x4x4"),
    ("kernel", "pencil 16x16", lambda: pencil_graph(16, 16), "tree 4x4x4 fat"),
    ("kernel", "mm25d 8x8x4", lambda: mm25d_graph(8, 4), "torus 4x4x4 x2 cores"),
    ("kernel", "mm25d 16x16x4", lambda: mm25d_graph(16, 4), "tree 4x4x4x2 het"),
    ("kernel", "reduction 4-ary 1024", lambda: reduction_graph(1024, 4), "star 40"),
]  # fmt: skip


def instances(kinds=KINDS) -> list:
    """(kind, name, builder) triples as :func:`bench.taskmap.vs_peers.instances` gives
    them: a builder returns ``(tasks, resources)``, deterministic, and carries
    ``hierarchy`` (innermost level first) on a tree or dragonfly machine."""
    machines = _machines()
    out = []
    for kind, gname, graph, mname in SPECS:
        if kind not in kinds:
            continue
        machine, hierarchy = machines[mname]

        def build(graph=graph, machine=machine):
            return graph(), machine()

        out.append((kind, f"{gname} on {mname}", _tagged(build, hierarchy)))
    return out


# --------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------


class _Guard:
    """A peer whose ``map`` errors are told apart from the package's: they name the peer."""

    def __init__(self, peer: Any):
        self.peer = peer

    def __getattr__(self, key: str) -> Any:
        return getattr(self.peer, key)

    def __setattr__(self, key: str, value: Any) -> None:
        if key == "peer":
            object.__setattr__(self, key, value)
        else:
            setattr(self.peer, key, value)

    def map(self, tasks, res, procs):
        try:
            return self.peer.map(tasks, res, procs)
        except Exception as exc:  # noqa: BLE001 - reported, the peer skipped on this one
            raise _PeerFailed(self.peer.name, f"{type(exc).__name__}: {exc}") from exc


class _PeerFailed(Exception):
    def __init__(self, name: str, why: str):
        super().__init__(name, why)
        self.name, self.why = name, why


def run_guarded(kind, name, build, peers, args) -> dict:
    """:func:`vs_peers.run_instance`; a peer that raises is printed and left out of this
    instance (the instance rerun without it); the skipped peers are in ``row["skipped"]``."""
    left, skipped = list(peers), []
    while True:
        try:
            row = vs_peers.run_instance(kind, name, build, [_Guard(p) for p in left], args)
        except _PeerFailed as exc:
            say(f"{name}: peer {exc.name} failed ({exc.why[:160]}); skipped on this instance")
            skipped.append(exc.name)
            left = [p for p in left if p.name != exc.name]
            continue
        row["skipped"] = " ".join(skipped)
        return row


def best_peer_name(row: dict, peers) -> str:
    """The peer (and whether its sweep) that set ``row["best_peer"]``."""
    for p in peers:
        for key in (p.name, f"{p.name}_sweep"):
            if key in row and row[key] <= row["best_peer"] * (1 + 1e-12):
                return key
    return "-"


def instance_table(rows, peers) -> list:
    lines = [
        "| instance | tasks | procs | coalloc | best peer | by | ratio | sum ratio (single) "
        "| gap | coalloc s | late | peers skipped |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['instance']} | {r['tasks']} | {r['processors']} | {r['coalloc']:.4g} "
            f"| {r['best_peer']:.4g} | {best_peer_name(r, peers)} | {r['ratio']:.3f} "
            f"| {r['sum_ratio']:.2f} ({r['sum_ratio_single']:.2f}) | {100 * r['gap']:.1f} % "
            f"| {r['t_multilevel']:.2f} | {'yes' if r.get('late') else ''} "
            f"| {r.get('skipped') or ''} |"
        )
    return lines


def kind_tables(rows) -> list:
    """vs_peers' two summaries, one row per held-out kind, the tree/dragonfly machines
    (``hierarchical``) and all."""
    out = []
    for table in (vs_peers.summary, vs_peers.sum_summary):
        head = None
        body = []
        for kind in (*KINDS, "hierarchical", "all"):
            rs = [r for r in rows if (r["kind"] == kind if kind in KINDS else
                                      (kind == "all" or r.get("hierarchical")))]  # fmt: skip
            if not rs:
                continue
            lines = table(rs)
            head = lines[:2]
            last = lines[-1]  # the "all" row of this subset
            body.append(f"| {kind} ({len(rs)})" + last[last.index(")") + 1 :])
        out += head + body + [""]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--only", nargs="+", default=None, help="instances whose name has one")
    names = list(vs_peers.PEERS)
    ap.add_argument("--peers", nargs="+", default=names, choices=names)
    ap.add_argument("--subsets", type=int, default=16, help="subset sizes of the sweep")
    ap.add_argument("--repeat", type=int, default=1, help="time the peers' runs: least of")
    ap.add_argument("--time-limit", type=float, default=1.0, help="coalloc = solve(time_limit=T)")
    ap.add_argument("--scotch-runs", type=int, default=3, help="Scotch: best of this many")
    ap.add_argument("--list", action="store_true", help="print the instances and their sizes")
    ap.add_argument("--out", default=vs_peers.OUT)
    add_quiet(ap)
    args = ap.parse_args(argv)
    args.paper_max = 0
    vs_peers.Scotch.runs = max(1, args.scotch_runs)
    todo = [x for x in instances(args.kinds)
            if args.only is None or any(s in x[1] for s in args.only)]  # fmt: skip
    if args.list:
        for kind, name, build in todo:
            t, r = build()
            say(f"{kind:8s} {name}: {t.n} tasks, {t.n_edges} pairs, {r.n_processors} processors"
                f", {r.n_nodes} nodes, hierarchy {getattr(build, 'hierarchy', None)}")
        return
    peers = vs_peers.load_peers(args.peers)
    rows = []
    for kind, name, build in bar(todo, desc="instances", unit="inst"):
        rows.append(run_guarded(kind, name, build, peers, args))
        r = rows[-1]
        say(f"{name}: coalloc {r['coalloc']:.4g} best peer {r['best_peer']:.4g} "
            f"({best_peer_name(r, peers)}) ratio {r['ratio']:.3f} sum ratio {r['sum_ratio']:.2f} "
            f"time {r['t_multilevel']:.2f}s load {os.getloadavg()[0]:.1f}"
            + (f" (scotch's runs {r['scotch_runs_min']:.4g}-{r['scotch_runs_max']:.4g})"
               if "scotch_runs_min" in r else ""))  # fmt: skip
    os.makedirs(args.out, exist_ok=True)
    keys: list = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    path = os.path.join(args.out, f"heldout_T{args.time_limit:g}.csv")
    with atomic_output(path, newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print("\n".join(kind_tables(rows)))
    print("\n".join(vs_peers.per_peer(rows, peers)))
    print()
    print("\n".join(instance_table(rows, peers)))
    late = sum(bool(r.get("late")) for r in rows)
    wins = sum(r["ratio"] <= 1 + 1e-9 for r in rows)
    gm = math.exp(sum(math.log(r["ratio"]) for r in rows) / len(rows)) if rows else math.nan
    print(f"\nT = {args.time_limit:g} s: at/below the best peer {wins}/{len(rows)}, geometric "
          f"mean {gm:.3f}; calls past T + max(0.05, 0.05 T): {late}; "
          f"load {os.getloadavg()}")  # fmt: skip


if __name__ == "__main__":
    main()
