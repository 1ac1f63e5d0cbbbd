"""Random instances of the experiments of Taura & Chien, section 5.1 (Table 1).

* :func:`internet_resource_graph` -- a two-level (WAN / LAN) Internet-like resource graph,
  a simplified version of the Zegura / Calvert topology model: WAN routers placed at random
  in a rectangle and joined by the minimum spanning tree of their Euclidean distances; LAN
  gateways placed at random and joined to their nearest WAN router; behind each gateway a
  LAN, a shallow tree of processors of one common capacity.
* :func:`pipeline_task_graph` -- a pipeline of parallel jobs: each job a complete graph of
  equally weighted tasks, consecutive jobs joined by a complete bipartite graph carrying a
  total volume of 1.
* :func:`table1_instance` -- one (task graph, resource graph) pair with the parameters of
  Table 1.

Beyond the paper (issue 26), for benchmarks against graph partitioners and mappers:

* :func:`hierarchical_cluster` -- racks of nodes of several cores: fast intra-node links,
  slower node and rack uplinks, homogeneous or heterogeneous node speeds.
* :func:`stencil_task_graph` -- a 2-D (5-point) or 3-D (7-point) stencil.
* :func:`geometric_task_graph` -- a random geometric graph (tasks at random points of the
  unit square, a stream between every two closer than a radius).

Ranges ``(lo, hi)`` are drawn uniformly for each instance (integers: both ends included);
a single number fixes the value. Everything is seeded (``seed``: anything
:func:`numpy.random.default_rng` accepts) and reproducible.

Choices the paper leaves open (see ``coalloc docs taskmap``): a LAN has ``lan_size`` processors
(Table 1 / Fig. 11: "from 10 to 20 nodes"); its tree is filled breadth-first from the root,
each node taking ``children`` children (capped by the nodes left), which gives depth 1 or 2
with the defaults, as in Fig. 11; the gateway-root link has the LAN bandwidth; the
rectangle is the unit square (only the topology matters).
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Union

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree

from .._shared.constraints import Boolean, InstanceOf, Interval, Predicate, Table, checked
from .._shared.seeding import streams
from .model import ResourceGraph, TaskGraph

__all__ = [
    "internet_resource_graph",
    "pipeline_task_graph",
    "table1_instance",
    "TABLE1",
    "hierarchical_cluster",
    "stencil_task_graph",
    "geometric_task_graph",
    "GENERATORS",
]

Range = Union[float, int, tuple]

#: Table 1 of the paper.
TABLE1 = {
    "n_wan": 10,
    "n_lan": 10,
    "wan_bandwidth": 1000.0,
    "wan_lan_bandwidth": 500.0,
    "lan_bandwidth": 50.0,
    "children": (5, 20),
    "capacity": (3.0, 15.0),
    "n_clusters": (5, 10),
    "cluster_size": (5, 10),
    "compute": (1.0, 3.0),
    "inter_cluster_volume": 1.0,
}


_INT1 = Interval(Integral, 1, None, closed="left")
_POSITIVE = Interval(Real, 0, None, closed="neither")


def _ranged(name: str, single: Interval, what: str) -> tuple:
    """A :data:`Range` parameter's table entry (one value, or a ``(low, high)`` pair) and
    the relation that checks a pair: two values the entry takes, ``low <= high``."""

    def test(value: Any) -> bool:
        if not isinstance(value, (tuple, list)):
            return True  # one value: its entry checked it
        return (len(value) == 2 and single.accepts(value[0]) and single.accepts(value[1])
                and value[0] <= value[1])  # fmt: skip

    entry = [single, InstanceOf((tuple, list), f"a (low, high) pair of {what}")]
    return entry, Predicate((name,), test, f"{name} must be {single} or a (low, high) pair of "
                            f"them with low <= high, got {{{name}}}")  # fmt: skip


def _shape_ok(shape: Any) -> bool:
    return len(shape) in (2, 3) and all(_INT1.accepts(d) for d in shape)


def _table(entries: dict, ranges: dict, relations: tuple = ()) -> Table:
    """A generator's table: ``entries``, and ``ranges`` (name -> (single, what)) as
    :func:`_ranged` entries with their relations, besides ``relations``."""
    made = {name: _ranged(name, single, what) for name, (single, what) in ranges.items()}
    return Table({**entries, **{name: entry for name, (entry, _) in made.items()}},
                 relations=[*relations, *(rel for _, rel in made.values())])  # fmt: skip


_INTS, _NUMBERS = (_INT1, "integers >= 1"), (_POSITIVE, "finite numbers > 0")

#: Each generator's parameters, declared once (as the methods' tables,
#: :mod:`coalloc.taskmap.constraints`): checked at every call (``@checked``), and the source
#: of ``tests/shared/test_checked.py``'s invalid-value tests. ``seed`` follows the seed
#: policy (anything :func:`numpy.random.default_rng` accepts).
GENERATORS = {
    "internet_resource_graph": _table(
        {"n_wan": [_INT1], "n_lan": [_INT1], "wan_bandwidth": [_POSITIVE],
         "wan_lan_bandwidth": [_POSITIVE], "lan_bandwidth": [_POSITIVE]},
        {"children": _INTS, "capacity": _NUMBERS, "lan_size": _INTS},
    ),
    "pipeline_task_graph": _table(
        {"c": [Interval(Real, 1, None, closed="left")], "inter_volume": [_POSITIVE],
         "return_jobs": [Boolean()]},
        {"n_clusters": _INTS, "cluster_size": _INTS, "compute": _NUMBERS},
    ),
    "table1_instance": {"c": [Interval(Real, 1, None, closed="left")]},
    "hierarchical_cluster": _table(
        {"n_racks": [_INT1], "nodes_per_rack": [_INT1], "cores_per_node": [_INT1],
         "core_bandwidth": [_POSITIVE], "node_bandwidth": [_POSITIVE],
         "rack_bandwidth": [_POSITIVE]},
        {"speed": _NUMBERS},
    ),
    "stencil_task_graph": _table(
        {"shape": [InstanceOf((tuple, list), "a tuple of 2 or 3 integers >= 1")]},
        {"compute": _NUMBERS, "volume": _NUMBERS},
        (Predicate(("shape",), _shape_ok, "shape must be a tuple of 2 or 3 integers >= 1, "
                   "got {shape}"),),
    ),
    "geometric_task_graph": _table(
        {"degree": [_POSITIVE]}, {"n_tasks": _INTS, "compute": _NUMBERS, "volume": _NUMBERS},
    ),
}  # fmt: skip


def _ints(value: Any) -> tuple:
    """A checked :data:`Range` of integers as ``(low, high)``."""
    lo, hi = value if isinstance(value, (tuple, list)) else (value, value)
    return int(lo), int(hi)


def _floats(value: Any) -> tuple:
    """A checked :data:`Range` of numbers as ``(low, high)``."""
    lo, hi = value if isinstance(value, (tuple, list)) else (value, value)
    return float(lo), float(hi)


def _draw_int(rng: np.random.Generator, r: tuple) -> int:
    return int(rng.integers(r[0], r[1] + 1))


def _draw_float(rng: np.random.Generator, r: tuple) -> float:
    return float(r[0]) if r[0] == r[1] else float(rng.uniform(r[0], r[1]))


@checked("coalloc.taskmap.generators", "internet_resource_graph", tables="GENERATORS")
def internet_resource_graph(
    *,
    n_wan: int = 10,
    n_lan: int = 10,
    wan_bandwidth: float = 1000.0,
    wan_lan_bandwidth: float = 500.0,
    lan_bandwidth: float = 50.0,
    children: Range = (5, 20),
    capacity: Range = (3.0, 15.0),
    lan_size: Range = (10, 20),
    seed: Any = 0,
) -> ResourceGraph:
    """Two-level WAN / LAN Internet-like resource graph (section 5.1, Table 1).

    Parameters
    ----------
    n_wan : int, default 10
        WAN routers, placed uniformly in the unit square and joined by the minimum spanning
        tree of the complete graph with Euclidean lengths (links of ``wan_bandwidth``).
    n_lan : int, default 10
        LANs. Each has a gateway router placed uniformly in the square and linked to its
        nearest WAN router (``wan_lan_bandwidth``), and a tree of ``lan_size`` processors
        whose root is linked to the gateway (``lan_bandwidth``, like every LAN link).
    wan_bandwidth, wan_lan_bandwidth, lan_bandwidth : float
        Link capacities (Table 1: 1000, 500, 50).
    children : int or (int, int), default (5, 20)
        Number of children of a LAN node, drawn per node; the tree is filled breadth-first
        and stops when the LAN has ``lan_size`` processors (so its depth is 1 or 2 with
        the defaults, as in Fig. 11).
    capacity : float or (float, float), default (3.0, 15.0)
        Compute capacity, drawn once per LAN and shared by its processors.
    lan_size : int or (int, int), default (10, 20)
        Processors per LAN, root included (Fig. 11: "from 10 to 20 nodes").
    seed : int, numpy Generator or None
        Anything :func:`numpy.random.default_rng` accepts.

    Returns
    -------
    ResourceGraph
        Nodes: the WAN routers ``0 .. n_wan - 1``, then for each LAN its gateway followed
        by its processors in breadth-first order. Routers have capacity 0 and host no
        tasks; the graph is a tree, so every route is unique.

    Examples
    --------
    >>> from coalloc.taskmap.generators import internet_resource_graph
    >>> internet_resource_graph(n_wan=2, n_lan=2, seed=0)
    ResourceGraph(nodes=32, processors=28, links=31, routes='hops')
    """
    n_wan = int(n_wan)
    n_lan = int(n_lan)
    bw_wan = float(wan_bandwidth)
    bw_wl = float(wan_lan_bandwidth)
    bw_lan = float(lan_bandwidth)
    kids = _ints(children)
    cap_r = _floats(capacity)
    size_r = _ints(lan_size)
    rng = np.random.default_rng(seed)

    wan_xy = rng.random((n_wan, 2))
    edges: list = []
    bandwidth: list = []
    if n_wan > 1:
        dist = np.sqrt(((wan_xy[:, None, :] - wan_xy[None, :, :]) ** 2).sum(-1))
        # MST of the complete graph; a zero distance (coincident points) would read as "no
        # edge" to SciPy, so lengths are shifted by a tiny positive amount.
        mst = sp.coo_matrix(minimum_spanning_tree(np.triu(dist + 1e-300, 1)))
        for u, v in sorted(zip(mst.row.tolist(), mst.col.tolist())):
            edges.append((min(u, v), max(u, v)))
            bandwidth.append(bw_wan)
    caps = [0.0] * n_wan
    for _ in range(n_lan):
        gw = len(caps)
        gw_xy = rng.random(2)
        nearest = int(np.argmin(((wan_xy - gw_xy) ** 2).sum(1)))
        caps.append(0.0)
        edges.append((nearest, gw))
        bandwidth.append(bw_wl)
        size = _draw_int(rng, size_r)
        cap = _draw_float(rng, cap_r)
        root = len(caps)
        caps.append(cap)
        edges.append((gw, root))
        bandwidth.append(bw_lan)
        made, frontier = 1, [root]
        while made < size:
            nxt = []
            for parent in frontier:
                k = min(_draw_int(rng, kids), size - made)
                for _ in range(k):
                    child = len(caps)
                    caps.append(cap)
                    edges.append((parent, child))
                    bandwidth.append(bw_lan)
                    nxt.append(child)
                made += k
                if made >= size:
                    break
            frontier = nxt
    capacity_arr = np.array(caps, dtype=np.float64)
    return ResourceGraph.from_edges(
        capacity_arr,
        np.array(edges, dtype=np.int64).reshape(-1, 2),
        np.array(bandwidth, dtype=np.float64),
        is_processor=capacity_arr > 0,
    )


@checked("coalloc.taskmap.generators", "pipeline_task_graph", tables="GENERATORS")
def pipeline_task_graph(
    *,
    n_clusters: Range = (5, 10),
    cluster_size: Range = (5, 10),
    compute: Range = (1.0, 3.0),
    c: float = 1.0,
    inter_volume: float = 1.0,
    seed: Any = 0,
    return_jobs: bool = False,
) -> Any:
    """A pipeline of parallel jobs (section 5.1, Table 1).

    Parameters
    ----------
    n_clusters : int or (int, int), default (5, 10)
        Number of parallel jobs (clusters) in the pipeline.
    cluster_size : int or (int, int), default (5, 10)
        Tasks per job, drawn per job. The tasks of a job form a complete graph.
    compute : float or (float, float), default (1.0, 3.0)
        Compute requirement, drawn per job and shared by its tasks.
    c : float, default 1.0
        Communication intensity (>= 1): the weight of the edges inside a job is drawn per
        job from ``[1, c]``.
    inter_volume : float, default 1.0
        Total volume between consecutive jobs ``A`` and ``B``: every pair gets
        ``inter_volume / (a * b)`` (complete bipartite graph; Table 1: 1.0).
    seed : int, numpy Generator or None
    return_jobs : bool, default False
        Also return the job of every task.

    Returns
    -------
    TaskGraph or (TaskGraph, ndarray of int64)
        An undirected task graph (symmetric ``comm``); tasks are numbered job after job.

    Examples
    --------
    >>> from coalloc.taskmap.generators import pipeline_task_graph
    >>> pipeline_task_graph(n_clusters=(2, 2), cluster_size=(3, 3), seed=0)
    TaskGraph(n=6, pairs=15, undirected)
    """
    jobs_r = _ints(n_clusters)
    size_r = _ints(cluster_size)
    comp_r = _floats(compute)
    c_hi = float(c)
    vol = float(inter_volume)
    rng = np.random.default_rng(seed)
    n_jobs = _draw_int(rng, jobs_r)
    sizes = [_draw_int(rng, size_r) for _ in range(n_jobs)]
    weights = [_draw_float(rng, comp_r) for _ in range(n_jobs)]
    intra = [_draw_float(rng, (1.0, c_hi)) for _ in range(n_jobs)]
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(bounds[-1])
    rows, cols, vals = [], [], []
    for j in range(n_jobs):
        idx = np.arange(bounds[j], bounds[j + 1])
        r, q = np.meshgrid(idx, idx, indexing="ij")
        off = r != q
        rows.append(r[off])
        cols.append(q[off])
        vals.append(np.full(int(off.sum()), intra[j]))
        if j + 1 < n_jobs:
            nxt = np.arange(bounds[j + 1], bounds[j + 2])
            r, q = np.meshgrid(idx, nxt, indexing="ij")
            w = vol / (idx.shape[0] * nxt.shape[0])
            rows += [r.ravel(), q.ravel()]
            cols += [q.ravel(), r.ravel()]
            vals += [np.full(r.size, w), np.full(r.size, w)]
    comm = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    node_weight = np.repeat(np.array(weights), sizes)
    tasks = TaskGraph(node_weight, comm)
    if return_jobs:
        return tasks, np.repeat(np.arange(n_jobs, dtype=np.int64), sizes)
    return tasks


@checked("coalloc.taskmap.generators", "table1_instance", tables="GENERATORS")
def table1_instance(c: float = 1.0, seed: Any = 0) -> tuple:
    """One instance of the experiments of section 5 with the parameters of Table 1.

    Parameters
    ----------
    c : float, default 1.0
        Communication intensity (the paper uses 1, 2, 4, 8, 12, 16).
    seed : int, numpy Generator or None
        Split (``SeedSequence.spawn``) into one seed for each graph.

    Returns
    -------
    (TaskGraph, ResourceGraph)

    Examples
    --------
    >>> from coalloc.taskmap.generators import table1_instance
    >>> table1_instance(1.0, seed=0)
    (TaskGraph(n=67, pairs=652, undirected),
     ResourceGraph(nodes=171, processors=151, links=170, routes='hops'))
    """
    if isinstance(seed, np.random.Generator):
        seed = int(seed.integers(0, 2**63))
    st = streams(seed, ("tasks", "resources"))
    s_task, s_res = st["tasks"], st["resources"]
    t = TABLE1
    tasks = pipeline_task_graph(
        n_clusters=t["n_clusters"], cluster_size=t["cluster_size"], compute=t["compute"],
        c=c, inter_volume=t["inter_cluster_volume"], seed=np.random.default_rng(s_task),
    )  # fmt: skip
    res = internet_resource_graph(
        n_wan=t["n_wan"], n_lan=t["n_lan"], wan_bandwidth=t["wan_bandwidth"],
        wan_lan_bandwidth=t["wan_lan_bandwidth"], lan_bandwidth=t["lan_bandwidth"],
        children=t["children"], capacity=t["capacity"], seed=np.random.default_rng(s_res),
    )  # fmt: skip
    return tasks, res


@checked("coalloc.taskmap.generators", "hierarchical_cluster", tables="GENERATORS")
def hierarchical_cluster(
    *,
    n_racks: int = 2,
    nodes_per_rack: int = 4,
    cores_per_node: int = 4,
    speed: Range = 1.0,
    core_bandwidth: float = 100.0,
    node_bandwidth: float = 10.0,
    rack_bandwidth: float = 20.0,
    seed: Any = 0,
) -> ResourceGraph:
    """Hierarchical cluster: racks of nodes of several cores (a tree of links).

    A root switch is linked to ``n_racks`` rack switches (``rack_bandwidth`` each); each rack
    switch to ``nodes_per_rack`` node routers (``node_bandwidth``: the node's uplink); each
    node router to its ``cores_per_node`` cores (``core_bandwidth``: the fast intra-node
    links). Cores are the processors; every core of a node has the node's speed, drawn from
    ``speed`` per node (a single number: homogeneous). Nodes: root, then per rack its
    switch, then per node its router followed by its cores. Routes are unique (a tree).

    Parameters
    ----------
    n_racks, nodes_per_rack, cores_per_node : int
        Shape of the tree (each at least 1).
    speed : float or (low, high)
        Core capacity, drawn uniformly per node.
    core_bandwidth, node_bandwidth, rack_bandwidth : float
        Bandwidths of the core-node, node-rack and rack-root links (positive).
    seed : int, optional
        Seed of the speeds.

    Returns
    -------
    ResourceGraph
        ``1 + n_racks * (1 + nodes_per_rack * (1 + cores_per_node))`` nodes.

    Raises
    ------
    ValueError, TypeError
        A shape below 1, a non-positive bandwidth or speed.

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> res = hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2)
    >>> res.n_nodes, res.n_processors, res.n_links
    (15, 8, 14)
    """
    n_racks = int(n_racks)
    nodes_per_rack = int(nodes_per_rack)
    cores_per_node = int(cores_per_node)
    speed_r = _floats(speed)
    bws = (
        float(core_bandwidth),
        float(node_bandwidth),
        float(rack_bandwidth),
    )
    rng = np.random.default_rng(seed)
    capacity = [0.0]
    edges, bandwidth = [], []
    for _ in range(n_racks):
        rack = len(capacity)
        capacity.append(0.0)
        edges.append((0, rack))
        bandwidth.append(bws[2])
        for _ in range(nodes_per_rack):
            node = len(capacity)
            capacity.append(0.0)
            edges.append((rack, node))
            bandwidth.append(bws[1])
            s = _draw_float(rng, speed_r)
            for _ in range(cores_per_node):
                edges.append((node, len(capacity)))
                bandwidth.append(bws[0])
                capacity.append(s)
    cap = np.asarray(capacity)
    return ResourceGraph.from_edges(
        cap, np.asarray(edges), np.asarray(bandwidth), is_processor=cap > 0
    )


@checked("coalloc.taskmap.generators", "stencil_task_graph", tables="GENERATORS")
def stencil_task_graph(
    shape: Any = (16, 16),
    *,
    compute: Range = 1.0,
    volume: Range = 1.0,
    seed: Any = 0,
) -> TaskGraph:
    """A 2-D (5-point) or 3-D (7-point) stencil: one task per grid point.

    Task ``i`` is the grid point of C-order index ``i``; each point exchanges ``volume``
    with its axis neighbours (not periodic). Weights and volumes are drawn per task and per
    edge from their ranges (single numbers: uniform stencil).

    Parameters
    ----------
    shape : tuple of int
        Grid sides, two or three, each at least 1.
    compute, volume : float or (low, high)
        Task weights and stream volumes (positive).
    seed : int, optional

    Returns
    -------
    TaskGraph
        Undirected, ``prod(shape)`` tasks.

    Raises
    ------
    ValueError, TypeError
        A shape that is not 2 or 3 positive ints, a non-positive range.

    Examples
    --------
    >>> from coalloc.taskmap.generators import stencil_task_graph
    >>> g = stencil_task_graph((3, 4))
    >>> g.n, g.n_edges
    (12, 17)
    """
    dims = tuple(int(d) for d in shape)
    comp_r = _floats(compute)
    vol_r = _floats(volume)
    rng = np.random.default_rng(seed)
    n = int(np.prod(dims))
    idx = np.arange(n).reshape(dims)
    src, dst = [], []
    for ax in range(len(dims)):
        lo = [slice(None)] * len(dims)
        hi = [slice(None)] * len(dims)
        lo[ax] = slice(0, -1)
        hi[ax] = slice(1, None)
        src.append(idx[tuple(lo)].ravel())
        dst.append(idx[tuple(hi)].ravel())
    s = np.concatenate(src)
    t = np.concatenate(dst)
    w = _uniform(rng, vol_r, s.shape[0])
    weight = _uniform(rng, comp_r, n)
    return TaskGraph(weight, _symmetric(n, s, t, w))


@checked("coalloc.taskmap.generators", "geometric_task_graph", tables="GENERATORS")
def geometric_task_graph(
    n_tasks: Range = (150, 2000),
    *,
    degree: float = 8.0,
    compute: Range = (1.0, 3.0),
    volume: Range = (1.0, 10.0),
    seed: Any = 0,
) -> TaskGraph:
    """A random geometric task graph: tasks at uniform points of the unit square.

    Two tasks exchange a stream when their distance is below the radius
    ``sqrt(degree / (pi n))`` (about ``degree`` neighbours each, fewer near the border);
    weights and volumes are drawn uniformly per task and per stream.

    Parameters
    ----------
    n_tasks : int or (low, high)
        Number of tasks (drawn once), at least 1.
    degree : float, default 8
        Expected number of neighbours away from the border (positive).
    compute, volume : float or (low, high)
        Task weights and stream volumes (positive).
    seed : int, optional

    Returns
    -------
    TaskGraph
        Undirected; may be disconnected.

    Raises
    ------
    ValueError, TypeError
        Invalid ranges.

    Examples
    --------
    >>> from coalloc.taskmap.generators import geometric_task_graph
    >>> g = geometric_task_graph(200, seed=1)
    >>> g.n, 500 < g.n_edges < 900
    (200, True)
    """
    n_r = _ints(n_tasks)
    deg = float(degree)
    comp_r = _floats(compute)
    vol_r = _floats(volume)
    rng = np.random.default_rng(seed)
    n = _draw_int(rng, n_r)
    pts = rng.random((n, 2))
    from scipy.spatial import cKDTree

    pairs = cKDTree(pts).query_pairs(np.sqrt(deg / (np.pi * n)), output_type="ndarray")
    pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
    w = _uniform(rng, vol_r, pairs.shape[0])
    weight = _uniform(rng, comp_r, n)
    return TaskGraph(weight, _symmetric(n, pairs[:, 0], pairs[:, 1], w))


def _uniform(rng: np.random.Generator, r: tuple, size: int) -> np.ndarray:
    if r[0] == r[1]:
        return np.full(size, float(r[0]))
    return rng.uniform(r[0], r[1], size)


def _symmetric(n: int, s: np.ndarray, t: np.ndarray, w: np.ndarray) -> sp.csr_matrix:
    return sp.csr_matrix((np.r_[w, w], (np.r_[s, t], np.r_[t, s])), shape=(n, n))
