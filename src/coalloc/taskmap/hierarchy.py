"""The resource side of the multilevel mapper: processors in hierarchy order, routes as CSR.

:func:`hierarchy_order` lists the processors depth-first from the centre of the resource
graph, heavier subtrees first, so that every prefix and every block of the list is a compact
part of the machine; :class:`Topology` holds that order with the processors' capacities,
the routes between every two of them (one CSR, compiled
``coalloc.taskmap._multilevel.pair_routes``), the pairs that use each link and the route
costs (sum of ``1 / bandwidth``). :func:`topology` builds it once per resource graph.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csgraph

from .._shared import interrupt
from .._shared.caches import cache_of, travels
from . import _multilevel
from .model import ResourceGraph, link_adjacency
from .routing import route_table

__all__ = ["hierarchy_order", "Topology", "topology"]


def hierarchy_order(resources: ResourceGraph) -> np.ndarray:
    """Processors depth-first from the centre of the resource graph, heavier subtrees first.

    The walk starts at the node of smallest eccentricity (hops; ties: lowest index) and
    follows a breadth-first spanning tree; the children of a node are visited in decreasing
    total capacity of their subtree (ties: lower index). Every prefix and every block of
    the list is therefore a compact part of the machine (the cores of a node, the nodes of a
    rack stay together), the fastest parts first.

    Parameters
    ----------
    resources : ResourceGraph

    Returns
    -------
    ndarray of int64
        Every processor node index once.

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> res = hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2,
    ...                            speed=(1.0, 2.0), seed=3)
    >>> res.capacity[hierarchy_order(res)].round(2).tolist()
    [1.24, 1.24, 1.09, 1.09]
    """
    return topology(resources).order_nodes.copy()


class Topology:
    """Processors in hierarchy order (index 0..P-1), their capacities, routes as CSR.

    Parameters
    ----------
    res : ResourceGraph
        The resource graph (:func:`topology` builds one per graph and keeps it).

    Attributes
    ----------
    order_nodes : ndarray of int64, shape (P,)
        The node index of each processor position (:func:`hierarchy_order`).
    P, E : int
        Processors and links.
    cap : ndarray of float64, shape (P,)
        Capacity of each position.
    bw : ndarray of float64, shape (E,)
        Link bandwidths.
    rptr, rlink : ndarray of int64
        CSR of the links of the route of each ordered pair ``a * P + b``.
    routes : coalloc.taskmap._multilevel.PairRoutes
        The compiled view of ``rptr`` / ``rlink``.
    hops : ndarray of int64, shape (P, P)
        Route lengths.
    lptr, lpairs : ndarray of int64
        CSR of the pairs whose route uses each link.
    cost : ndarray of float64, shape (P, P)
        Sum of ``1 / bandwidth`` over each route (occupancy added per unit volume).
    gap : ndarray of float64, shape (P - 1,)
        ``cost`` between consecutive positions (where a block of the list is split).

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> topo = Topology(hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2))
    >>> topo.P, topo.hops[0].tolist()
    (4, [0, 2, 4, 4])
    """

    def __init__(self, res: ResourceGraph):
        r = res.n_nodes
        adj = link_adjacency(r, res.links)
        procs = res.processors
        # root: smallest eccentricity (on big graphs: from a sample of processors)
        if r <= 1500:
            ecc = csgraph.shortest_path(adj, unweighted=True, directed=False).max(axis=1)
        else:
            far = csgraph.shortest_path(
                adj, unweighted=True, directed=False, indices=procs[:: max(1, len(procs) // 64)]
            )
            ecc = far.max(axis=0)
        interrupt.check()  # the first call on a resource graph: poll between its steps
        root = int(np.argmin(ecc))
        bfs, pred = csgraph.breadth_first_order(adj, root, directed=False)
        subcap = res.capacity.astype(np.float64).copy()
        for v in bfs[::-1][:-1]:
            subcap[pred[v]] += subcap[v]
        children: dict = {}
        for v in bfs[1:]:
            children.setdefault(int(pred[v]), []).append(int(v))
        order = []
        stack = [root]
        while stack:
            v = stack.pop()
            if res.is_processor[v]:
                order.append(v)
            kids = sorted(children.get(v, ()), key=lambda c: (-subcap[c], c))
            stack.extend(reversed(kids))
        seen = set(order)
        order += [int(p) for p in procs if int(p) not in seen]  # unreachable processors
        self.order_nodes = np.asarray(order, dtype=np.int64)
        node = self.order_nodes
        p = node.shape[0]
        self.P = p
        self.E = res.n_links
        self.cap = res.capacity[node].astype(np.float64)
        self.bw = res.bandwidth.astype(np.float64)
        interrupt.check()
        table = route_table(res)
        interrupt.check()
        self.rptr, self.rlink = _multilevel.pair_routes(
            table.pred, table.pred_link, table.proc_row, node
        )
        self.routes = _multilevel.PairRoutes(self.rptr, self.rlink, self.E)
        interrupt.check()  # each step below is 2-10 ms of CPU on 256 processors (h52tmap)
        lens = np.diff(self.rptr)
        self.hops = lens.reshape(p, p)
        # link -> pairs using it (inverse CSR)
        pair_of = np.repeat(np.arange(p * p, dtype=np.int64), lens)
        # stable: the same order as on int64, by radix sort on small link ids (10x faster)
        small = np.uint16 if self.E < 2**16 else np.uint32 if self.E < 2**32 else np.int64
        by = np.argsort(self.rlink.astype(small), kind="stable")
        self.lptr = np.zeros(self.E + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.rlink, minlength=self.E), out=self.lptr[1:])
        self.lpairs = pair_of[by]
        interrupt.check()
        # route cost: sum of 1 / bandwidth over the route (occupancy added per unit volume)
        inv_bw = 1.0 / self.bw
        self.cost = np.bincount(  # (pair_of: each route link's pair, as repeated above)
            pair_of, weights=inv_bw[self.rlink], minlength=p * p
        ).reshape(p, p)
        # distance along the list: the slowest link between consecutive processors
        idx = np.arange(max(p - 1, 0))
        self.gap = self.cost[idx, idx + 1].copy()

    def __getstate__(self) -> dict:
        # the compiled view does not pickle: rebuilt from the CSR (a batch ships the
        # topology to its workers with the graph, coalloc._shared.caches.export_caches)
        return {k: v for k, v in vars(self).items() if k != "routes"}

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        self.routes = _multilevel.PairRoutes(self.rptr, self.rlink, self.E)


def topology(res: ResourceGraph) -> Topology:
    """The :class:`Topology` of ``res``, built once and kept beside the graph.

    Parameters
    ----------
    res : ResourceGraph
        The resource graph.

    Returns
    -------
    Topology
        The same object on every call with the same graph.

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> res = hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2)
    >>> topology(res) is topology(res)
    True
    """
    cache = cache_of(res)
    topo = cache.get("multilevel_topology")
    if topo is None:
        topo = cache.setdefault("multilevel_topology", Topology(res))
    return topo


def _fill_caches(res: ResourceGraph) -> None:
    """Build what the solvers derive from a resource graph once: its routes and the
    multilevel mapper's topology (which builds the routes)."""
    topology(res)


# A batch builds them once in the calling process and ships them with the graph (issue 41).
# Registered here, not in model.py, so that the model imports only results and routes
# (tests/taskmap/test_floor_plan.py); coalloc.taskmap imports this module with the package.
travels(ResourceGraph, ("route_table", "multilevel_topology"), _fill_caches)
