"""Hypothesis strategies for valid models of every family.

* CTAAP: :func:`ctaap_instances` draws a ``(Request, Offer)`` pair whose property names are
  shared, with the request bandwidth dense or sparse, symmetric or not; :func:`ctaap_arrays`
  draws the raw arrays (to check that the models copy them).
* Task mapping: :func:`task_graphs` and :func:`resource_trees` (a random tree of routers and
  processors, so every route is the unique tree path and can be recomputed independently);
  :func:`taskmap_instances` draws both.

Sizes are small on purpose: the property tests run every solver on every example.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from coalloc.ctaap import Offer, Request
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
