"""Hypothesis strategies for valid models of every family.

* CTAAP: :func:`ctaap_instances` draws a ``(Request, Offer)`` pair whose property names are
  shared, with the request bandwidth dense or sparse, symmetric or not; :func:`ctaap_arrays`
  draws the raw arrays (to check that the models copy them).
* Task mapping: :func:`task_graphs` and :func:`resource_trees` (a random tree of routers and
  processors, so every route is the unique tree path and can be recomputed independently);
  :func:`taskmap_instances` draws both.
* Collective co-allocation: :func:`collective_instances` draws a ``(ResourcePool,
  CollectiveRequest)`` pair: a timetable of partial reservations, optional node labels, and a
  simple or collective request over a start window.
* Testbed mapping: :func:`topology_pairs` draws a ``(VirtualTopology,
  PhysicalTopology)`` pair from the family's generators (LANs, rings, trees, dumbbells, sparse
  and typed random experiments; DeterLab-like testbeds of a few switches), small enough for the
  exact method.
* Load sharing: :func:`loadshare_problems` draws a :class:`LoadSharingProblem` (capacities,
  jobs in arrival order, origins, optional groups); :func:`gap_instances` a GAP instance.

Sizes are small on purpose: the property tests run every solver on every example.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from coalloc import testbed
from coalloc.collective import CollectiveRequest, ResourcePool
from coalloc.ctaap import Offer, Request
from coalloc.loadshare import GapInstance, LoadSharingProblem
from coalloc.taskmap import ResourceGraph, TaskGraph

PROPERTY_POOL = ("cpu", "mem", "disk")


def _int_matrix(draw, rows: int, cols: int, high: int, density: float) -> np.ndarray:
    values = draw(
        st.lists(st.integers(0, high), min_size=rows * cols, max_size=rows * cols).map(
            lambda v: np.array(v, dtype=np.float64).reshape(rows, cols)
        )
    )
    keep = draw(
        st.lists(st.floats(0, 1), min_size=rows * cols, max_size=rows * cols).map(
            lambda v: np.array(v).reshape(rows, cols) < density
        )
    )
    return values * keep


@st.composite
def ctaap_arrays(draw, min_tasks: int = 1, max_tasks: int = 8, max_clusters: int = 4):
    """Raw arrays of a CTAAP instance: ``dict(req_props, req_bw, off_props, capacity, off_bw)``.

    Property names are drawn once and shared by the request and the offer. ``req_bw`` is a
    dense array or a SciPy sparse matrix (CSR or COO), symmetric or not, zero diagonal.
    """
    n = draw(st.integers(min_tasks, max_tasks))
    m = draw(st.integers(1, max_clusters))
    names = draw(st.lists(st.sampled_from(PROPERTY_POOL), min_size=1, max_size=2, unique=True))
    req_props = {
        p: np.array(draw(st.lists(st.integers(0, 10), min_size=n, max_size=n)), dtype=np.float64)
        for p in names
    }
    off_props = {
        p: np.array(draw(st.lists(st.integers(0, 12), min_size=m, max_size=m)), dtype=np.float64)
        for p in names
    }
    density = draw(st.sampled_from([0.0, 0.3, 0.7, 1.0]))
    bw = _int_matrix(draw, n, n, 10, density)
    if draw(st.booleans()):  # symmetric (the paper's case)
        bw = np.triu(bw, 1)
        bw = bw + bw.T
    np.fill_diagonal(bw, 0.0)
    kind = draw(st.sampled_from(["dense", "csr", "coo"]))
    req_bw = bw if kind == "dense" else (sp.csr_matrix(bw) if kind == "csr" else sp.coo_array(bw))
    capacity = np.array(draw(st.lists(st.integers(0, 4), min_size=m, max_size=m)), dtype=np.int64)
    off_bw = _int_matrix(draw, m, m, 12, draw(st.sampled_from([0.5, 1.0])))
    if draw(st.booleans()):
        off_bw = np.triu(off_bw) + np.triu(off_bw, 1).T
    return {
        "req_props": req_props,
        "req_bw": req_bw,
        "off_props": off_props,
        "capacity": capacity,
        "off_bw": off_bw,
    }


def build_ctaap(arrays: dict):
    """``(Request, Offer)`` from what :func:`ctaap_arrays` drew."""
    request = Request(arrays["req_props"], arrays["req_bw"])
    offer = Offer(arrays["off_props"], arrays["capacity"], arrays["off_bw"])
    return request, offer


def ctaap_instances(min_tasks: int = 1, max_tasks: int = 8, max_clusters: int = 4):
    """A valid ``(Request, Offer)`` pair (shared property names)."""
    return ctaap_arrays(min_tasks, max_tasks, max_clusters).map(build_ctaap)


@st.composite
def taskmap_arrays(draw, max_tasks: int = 7, max_nodes: int = 6, directed=None):
    """Raw arrays of a task-mapping instance on a tree of resources.

    Returns ``dict(weights, comm, directed, capacity, links, bandwidth)``: node 0 and some
    others may be routers (capacity 0), at least one node is a processor.
    """
    n = draw(st.integers(1, max_tasks))
    weights = (
        np.array(draw(st.lists(st.integers(1, 8), min_size=n, max_size=n)), dtype=np.float64) / 2.0
    )
    comm = _int_matrix(draw, n, n, 6, draw(st.sampled_from([0.0, 0.4, 1.0])))
    np.fill_diagonal(comm, 0.0)
    if directed is None:
        directed = draw(st.booleans())
    if not directed:
        comm = np.triu(comm, 1)
        comm = comm + comm.T
    r = draw(st.integers(1, max_nodes))
    parents = [draw(st.integers(0, v - 1)) for v in range(1, r)]
    links = np.array([[p, v] for v, p in enumerate(parents, start=1)], dtype=np.int64).reshape(
        -1, 2
    )
    bandwidth = np.array(
        draw(st.lists(st.integers(1, 10), min_size=r - 1, max_size=r - 1)), dtype=np.float64
    )
    capacity = np.array(
        draw(st.lists(st.sampled_from([0, 1, 2, 4]), min_size=r, max_size=r)), dtype=np.float64
    )
    if not capacity.any():
        capacity[draw(st.integers(0, r - 1))] = draw(st.sampled_from([1.0, 3.0]))
    return {
        "weights": weights,
        "comm": comm,
        "directed": bool(directed),
        "capacity": capacity,
        "links": links,
        "bandwidth": bandwidth,
    }


def build_taskmap(arrays: dict):
    """``(TaskGraph, ResourceGraph)`` from what :func:`taskmap_arrays` drew."""
    tasks = TaskGraph(arrays["weights"], arrays["comm"], directed=arrays["directed"])
    resources = ResourceGraph.from_edges(arrays["capacity"], arrays["links"], arrays["bandwidth"])
    return tasks, resources


def task_graphs(max_tasks: int = 7, directed=None):
    """A valid :class:`TaskGraph` (undirected, or directed with an asymmetric matrix)."""
    return taskmap_arrays(max_tasks=max_tasks, max_nodes=1, directed=directed).map(
        lambda a: build_taskmap(a)[0]
    )


def resource_trees(max_nodes: int = 6):
    """A valid :class:`ResourceGraph` that is a tree (routes are the unique tree paths)."""
    return taskmap_arrays(max_tasks=1, max_nodes=max_nodes).map(lambda a: build_taskmap(a)[1])


def taskmap_instances(max_tasks: int = 7, max_nodes: int = 6, directed=None):
    """A valid ``(TaskGraph, ResourceGraph)`` pair on a tree of resources."""
    return taskmap_arrays(max_tasks, max_nodes, directed).map(build_taskmap)


def _floats(draw, size: int, values) -> np.ndarray:
    return np.array(draw(st.lists(values, min_size=size, max_size=size)), dtype=np.float64)


@st.composite
def collective_instances(draw, max_nodes: int = 6, max_properties: int = 3, max_steps: int = 5):
    """A valid ``(ResourcePool, CollectiveRequest)`` pair of the collective family.

    The pool has ``n`` nodes with ``m`` properties and a timetable of ``k`` steps (100 s
    apart or more), each node reserving 0, a quarter, a half or all of a property; half the
    pools label their nodes by architecture. The request asks ``count`` nodes for a duration
    inside a start window, with per-node minimums and, for a collective request, totals.
    """
    n = draw(st.integers(1, max_nodes))
    m = draw(st.integers(1, max_properties))
    k = draw(st.integers(1, max_steps))
    names = [f"p{i}" for i in range(m)]
    capacity = _floats(draw, n * m, st.integers(1, 8)).reshape(n, m)
    share = _floats(draw, n * m * k, st.sampled_from([0.0, 0.25, 0.5, 1.0])).reshape(n, m, k)
    steps = draw(st.lists(st.integers(1, 4), min_size=k - 1, max_size=k - 1))
    times = np.cumsum([0, *steps]) * 100.0
    labels = None
    if draw(st.booleans()):
        labels = {"arch": draw(st.lists(st.sampled_from(["x86", "arm"]), min_size=n, max_size=n))}
    pool = ResourcePool(capacity, names, times, capacity[:, :, None] * share, labels)
    count = draw(st.integers(1, n))
    earliest = draw(st.sampled_from([0.0, 50.0, 150.0]))
    latest = earliest + draw(st.sampled_from([0.0, 100.0, 300.0, 1000.0]))
    minimum = {p: draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) for p in names}
    total = None
    if draw(st.booleans()):
        total = {p: max(minimum[p], 0.5) * count * draw(st.sampled_from([1.0, 1.5, 2.0]))
                 for p in names}  # fmt: skip
    want = None
    if labels is not None and draw(st.booleans()):
        want = {"arch": draw(st.sampled_from(["x86", "arm", ["x86", "arm"]]))}
    duration = draw(st.sampled_from([50.0, 100.0, 250.0]))
    request = CollectiveRequest(duration, count, earliest, latest, minimum, total, want)
    return pool, request


_EXPERIMENTS = {
    "lan": lambda d: testbed.generators.lan(d(st.integers(2, 6))),
    "ring": lambda d: testbed.generators.ring(d(st.integers(3, 6))),
    "tree": lambda d: testbed.generators.tree(d(st.integers(1, 2)), d(st.integers(2, 3))),
    "dumbbell": lambda d: testbed.generators.dumbbell(d(st.integers(1, 3)), d(st.integers(1, 3))),
    "sparse": lambda d: testbed.generators.random_sparse(
        d(st.integers(3, 7)), d(st.integers(0, 3)), seed=d(st.integers(0, 2**16))
    ),
    "typed": lambda d: testbed.generators.random_topology(
        d(st.integers(2, 7)), seed=d(st.integers(0, 2**16))
    ),
}


@st.composite
def topology_pairs(draw, max_pcs: int = 14, max_switches: int = 3):
    """A valid ``(VirtualTopology, PhysicalTopology)`` pair of the testbed family.

    The experiment comes from one of the family's generators (some ask for node types or
    more nodes than the testbed has, so failures are drawn too); the testbed is DeterLab-like,
    with ``n_pcs`` PCs of several hardware types behind a few switches joined by trunks.
    """
    kind = draw(st.sampled_from(sorted(_EXPERIMENTS)))
    top = _EXPERIMENTS[kind](draw)
    n_pcs = draw(st.integers(2, max_pcs))
    switches = draw(st.integers(1, max_switches))
    ptop = testbed.generators.deterlab(n_pcs, switches, seed=draw(st.integers(0, 2**16)))
    return top, ptop


@st.composite
def loadshare_problems(draw, max_nodes: int = 8, max_jobs: int = 24):
    """A valid :class:`LoadSharingProblem`: positive capacities, jobs in arrival order.

    Job sizes include zeros and jobs larger than any node; origins cluster on a few nodes
    half the time (the uneven arrivals the paper shares); groups are drawn or left out.
    """
    n = draw(st.integers(1, max_nodes))
    jobs = draw(st.integers(0, max_jobs))
    capacity = _floats(draw, n, st.sampled_from([1.0, 5.0, 10.0, 20.0, 50.0]))
    sizes = _floats(draw, jobs, st.sampled_from([0.0, 1.0, 3.0, 7.0, 12.0, 30.0, 60.0]))
    hot = draw(st.integers(1, n)) if draw(st.booleans()) else n
    origin = np.array(draw(st.lists(st.integers(0, hot - 1), min_size=jobs, max_size=jobs)),
                      dtype=np.int64)  # fmt: skip
    groups = None
    if draw(st.booleans()):
        g = draw(st.integers(1, n))
        groups = np.array([i % g for i in range(n)], dtype=np.int64)
    return LoadSharingProblem(capacity, sizes, origin, groups=groups)


@st.composite
def gap_instances(draw, max_agents: int = 4, max_items: int = 8):
    """A valid :class:`GapInstance`: integer costs, weights and capacities."""
    m = draw(st.integers(1, max_agents))
    n = draw(st.integers(0, max_items))
    cost = _floats(draw, m * n, st.integers(0, 30)).reshape(m, n)
    weight = np.array(draw(st.lists(st.integers(1, 10), min_size=m * n, max_size=m * n)),
                      dtype=np.int64).reshape(m, n)  # fmt: skip
    capacity = np.array(draw(st.lists(st.integers(0, 25), min_size=m, max_size=m)),
                        dtype=np.int64)  # fmt: skip
    return GapInstance(cost, weight, capacity)


def draw_small_network(draw, *, procs: tuple, caps: list, extra: tuple | None):
    """A small connected resource graph drawn inside a composite strategy: up to three
    routers (capacity 0) and ``procs = (least, most)`` processors of capacities from
    ``caps``, a random tree over them, then ``extra = (least, most)`` extra links drawn
    (cycles; None: a tree), bandwidths from 1 to 100 and either route length."""
    p = draw(st.integers(*procs))
    r = draw(st.integers(0, 3))
    cap = [0.0] * r + [float(draw(st.sampled_from(caps))) for _ in range(p)]
    nodes = r + p
    links = {(draw(st.integers(0, v - 1)), v) for v in range(1, nodes)}
    if extra is not None:
        for _ in range(draw(st.integers(*extra))):
            a, b = sorted(draw(st.lists(st.integers(0, nodes - 1), min_size=2, max_size=2)))
            if a != b:
                links.add((a, b))
    links = sorted(links)
    bw = [float(draw(st.sampled_from([1, 2, 5, 20, 100]))) for _ in links]
    route = draw(st.sampled_from(["hops", "inverse_bandwidth"]))
    return ResourceGraph(cap, np.array(links, dtype=np.int64).reshape(-1, 2), bandwidth=bw,
                         route_length=route)  # fmt: skip
