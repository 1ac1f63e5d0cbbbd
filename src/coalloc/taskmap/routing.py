"""The fixed routes of a resource graph, computed once and shared: :class:`RouteTable`.

Every pair of processors of a :class:`~coalloc.taskmap.ResourceGraph` has one fixed route, a
shortest path (by hops, inverse bandwidth or given link lengths). :func:`route_table`
computes all of them at once -- one SciPy Dijkstra from every processor
(:func:`scipy.sparse.csgraph.shortest_path` with predecessors, the very call the routes
always came from, so ties are broken as before) -- and stores them compactly as two
``(P, R)`` int32 tables: ``pred[k, v]``, the node before ``v`` on the route tree of the
``k``-th processor, and ``pred_link[k, v]``, the link joining them. A route is expanded on
demand by the compiled kernel (:mod:`coalloc.taskmap._occupancy`) walking the tree from
one end, read from the row of the processor that comes first, so the route of ``(a, b)``
and of ``(b, a)`` is the same set of links. Memory: ``8 P R`` bytes (8 MiB for 1,000
processors on 1,000 nodes) instead of one list per pair.

The table is kept beside the graph (:func:`coalloc._shared.caches.cache_of`) and also
under a digest of what the routes depend on (node count, links, link lengths,
processors), so every instance on that graph -- the same object, or an equal graph read
again from a file -- shares one table while any of them lives.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._shared.caches import cache_of
from .._shared.validation import readonly
from . import _occupancy

__all__ = ["RouteTable", "route_table", "routes_digest", "shortest_path_tree"]

_lock = threading.Lock()
#: digest -> RouteTable, held weakly: a table lives as long as a graph that uses it.
_by_digest: weakref.WeakValueDictionary[str, RouteTable] = weakref.WeakValueDictionary()


def _adjacency(n_nodes: int, links: np.ndarray, length: np.ndarray) -> sp.csr_matrix:
    u = np.concatenate([links[:, 0], links[:, 1]])
    v = np.concatenate([links[:, 1], links[:, 0]])
    return sp.csr_matrix((np.concatenate([length, length]), (u, v)), shape=(n_nodes, n_nodes))


def shortest_path_tree(n_nodes: int, links: Any, length: Any, processors: Any) -> np.ndarray:
    """``pred[k, v]``: the node before ``v`` on a shortest path from ``processors[k]``.

    SciPy's Dijkstra from every processor (its deterministic tie-breaking defines the
    routes); ``-1`` at the source and at unreachable nodes.

    Parameters
    ----------
    n_nodes : int
        Number of nodes ``R``.
    links : ndarray of int64, shape (E, 2)
        The undirected links.
    length : ndarray of float64, shape (E,)
        The positive length of every link.
    processors : ndarray of int64, shape (P,)
        The sources.

    Returns
    -------
    ndarray of int32, shape (P, R)
        The predecessors.

    Examples
    --------
    >>> import numpy as np
    >>> shortest_path_tree(3, np.array([[0, 1], [0, 2]]), np.ones(2), np.array([1, 2])).tolist()
    [[1, -9999, 0], [2, 0, -9999]]
    """
    adj = _adjacency(n_nodes, np.asarray(links), np.asarray(length, dtype=np.float64))
    procs = np.asarray(processors, dtype=np.int64)
    if procs.shape[0] == 0:
        return np.zeros((0, n_nodes), dtype=np.int32)
    _, pred = csgraph.shortest_path(
        adj, method="D", directed=False, return_predecessors=True, indices=procs
    )
    return pred.astype(np.int32, copy=False)


def routes_digest(resources: Any) -> str:
    """A digest of what the routes of ``resources`` depend on.

    Node count, links (in order: link ids are positions), link lengths and processors.

    Parameters
    ----------
    resources : ResourceGraph
        The resource graph.

    Returns
    -------
    str
        A hexadecimal BLAKE2b digest; equal graphs give equal digests.

    Examples
    --------
    >>> from coalloc.taskmap import ResourceGraph
    >>> a = ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> b = ResourceGraph.from_edges([0, 4.0, 1.0], [[0, 1], [0, 2]], [10.0, 20.0])
    >>> routes_digest(a) == routes_digest(b)   # capacities and bandwidths do not route
    True
    """
    h = hashlib.blake2b(digest_size=20)
    h.update(np.int64(resources.n_nodes).tobytes())
    for arr, dtype in (
        (resources.links, np.int64),
        (resources.route_length, np.float64),
        (resources.processors, np.int64),
    ):
        a = np.ascontiguousarray(arr, dtype=dtype)
        h.update(np.int64(a.size).tobytes())
        h.update(a.tobytes())
    return h.hexdigest()


class RouteTable:
    """All fixed routes of one resource graph (see the module docstring).

    Build it with :func:`route_table`, which caches it.

    Parameters
    ----------
    resources : ResourceGraph
        The resource graph.

    Attributes
    ----------
    pred : ndarray of int32, shape (P, R)
        Node predecessors on the route tree of each processor (read-only).
    pred_link : ndarray of int32, shape (P, R)
        The link from ``pred[k, v]`` to ``v``; ``-1`` where ``pred`` is (read-only).
    proc_row : ndarray of int64, shape (R,)
        Row of each processor in the tables, ``-1`` for a router.
    kernel : coalloc.taskmap._occupancy.Routes
        The compiled view the occupancy kernels take.

    Examples
    --------
    >>> from coalloc.taskmap import ResourceGraph
    >>> res = ResourceGraph.from_edges([0, 3.0, 5.0, 4.0], [[0, 1], [0, 2], [2, 3]],
    ...                                [50.0, 40.0, 20.0])
    >>> table = route_table(res)
    >>> table.route(1, 3).tolist(), table.route(3, 1).tolist()
    ([2, 1, 0], [2, 1, 0])
    >>> table.nbytes   # two (3, 4) int32 tables
    96
    """

    def __init__(self, resources: Any):
        r = int(resources.n_nodes)
        links = np.asarray(resources.links, dtype=np.int64)
        procs = np.asarray(resources.processors, dtype=np.int64)
        pred = shortest_path_tree(r, links, resources.route_length, procs)
        pred[pred < 0] = -1  # SciPy writes -9999
        self.pred = pred
        self.pred_link = _pred_links(pred, links, r)
        self.proc_row = np.full(r, -1, dtype=np.int64)
        self.proc_row[procs] = np.arange(procs.shape[0])
        readonly(self.pred, self.pred_link, self.proc_row)
        self.n_links = int(links.shape[0])
        self.kernel = _occupancy.Routes(self.pred, self.pred_link, self.proc_row, self.n_links)

    def __getstate__(self) -> dict:
        # the compiled view does not pickle: rebuilt from the tables (a batch ships the
        # table to its workers with the graph, coalloc._shared.caches.export_caches)
        return {k: v for k, v in vars(self).items() if k != "kernel"}

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        readonly(self.pred, self.pred_link, self.proc_row)
        self.kernel = _occupancy.Routes(self.pred, self.pred_link, self.proc_row, self.n_links)

    @property
    def nbytes(self) -> int:
        """Bytes held by the two tables."""
        return int(self.pred.nbytes + self.pred_link.nbytes)

    def route(self, a: int, b: int) -> np.ndarray:
        """Link ids of the route between processors ``a`` and ``b`` (empty when equal).

        Parameters
        ----------
        a, b : int
            Node indices of two processors.

        Returns
        -------
        ndarray of int64
            The links, in the order the predecessor walk meets them.
        """
        return self.kernel.route(int(a), int(b))

    def table(self, a: int) -> np.ndarray:
        """Padded ``(R, H)`` table of the routes of processor ``a`` (``-1`` padding).

        Parameters
        ----------
        a : int
            A processor's node index.

        Returns
        -------
        ndarray of int64, shape (R, H)
            Row ``v``: the links between ``a`` and node ``v``.
        """
        return self.kernel.table(int(a))


def _pred_links(pred: np.ndarray, links: np.ndarray, r: int) -> np.ndarray:
    """``pred_link[k, v]`` = id of the link ``{pred[k, v], v}`` (``-1`` where none)."""
    out = np.full(pred.shape, -1, dtype=np.int32)
    if links.shape[0] == 0 or pred.size == 0:
        return out
    key = np.minimum(links[:, 0], links[:, 1]) * r + np.maximum(links[:, 0], links[:, 1])
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    v = np.arange(r, dtype=np.int64)
    step = max(1, (1 << 22) // max(r, 1))  # rows per chunk: bounded temporaries
    for lo in range(0, pred.shape[0], step):
        u = pred[lo : lo + step].astype(np.int64)
        has = u >= 0
        k = np.where(has, np.minimum(u, v) * r + np.maximum(u, v), 0)
        pos = np.searchsorted(sorted_key, k[has])
        out[lo : lo + step][has] = order[pos]
    return out


def route_table(resources: Any) -> RouteTable:
    """The :class:`RouteTable` of ``resources``, computed once and shared.

    Cached beside the graph and under :func:`routes_digest`, so that equal graphs built
    apart (e.g. read from one file twice) share one table.

    Parameters
    ----------
    resources : ResourceGraph
        The resource graph.

    Returns
    -------
    RouteTable
        Its routes.

    Examples
    --------
    >>> from coalloc.taskmap import ResourceGraph
    >>> a = ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> b = ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> route_table(a) is route_table(a), route_table(a) is route_table(b)
    (True, True)
    """
    cache = cache_of(resources)
    table = cache.get("route_table")
    if table is not None:
        return table
    digest = routes_digest(resources)
    with _lock:
        table = _by_digest.get(digest)
    if table is None:
        table = RouteTable(resources)
        with _lock:
            table = _by_digest.setdefault(digest, table)
    return cache.setdefault("route_table", table)
