"""The cluster order of a large task graph: flow injection on a coarsened graph.

Flow injection (:func:`coalloc.taskmap.flow_injection`) finds every path by a breadth-first
search over the cluster being split, so on a mesh a split costs ``O(injections x cluster
size)``: a 100 x 100 stencil's tree takes 12-18 s, a 16 x 16 x 16 one 96 s and even a
10 x 10 x 10 one 2.4 s -- the stage that kept the mapper of 10,000 tasks over 10 s
(``bench/taskmap/scale.py``). Above :data:`COARSEN_ABOVE` tasks, :func:`cluster_order`
therefore first halves the graph by heavy-edge matching
(deterministic: tasks visited in index order, each unmatched task paired with its unmatched
neighbour of largest pair weight, ties to the smaller index) until it has at most
``COARSEN_ABOVE`` nodes, runs flow injection on that graph (compute requirements and pair
weights summed), and expands its order: the tasks of a coarse node stay together, in the
order of the finer levels. Graphs of at most ``COARSEN_ABOVE`` tasks -- the paper's
instances and Figs. 12-13 among them -- get exactly the order they always got. On stencils
the coarsened order also maps better (``docs/taskmap.md``, "Large graphs").
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from .clustering import flow_injection

__all__ = ["COARSEN_ABOVE", "heavy_edge_matching", "coarsen", "cluster_order"]

#: Task graphs with more tasks than this are clustered on a coarsened graph (of at most
#: this many nodes).
COARSEN_ABOVE = 512


def heavy_edge_matching(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Coarse node of every node: a heavy-edge matching of a symmetric CSR graph.

    Nodes are visited in index order; an unmatched node is paired with its unmatched
    neighbour of largest weight (ties: the smaller index), or stays alone. Coarse nodes are
    numbered in order of their smaller member.

    Parameters
    ----------
    indptr, indices, data : ndarray
        Symmetric CSR of the pair weights (no diagonal).

    Returns
    -------
    ndarray of int64, shape (n,)
        The coarse node of each node (each coarse node holds one or two nodes).

    Examples
    --------
    >>> import numpy as np
    >>> # a path 0 - 1 - 2 - 3 with weights 1, 5, 1: node 0 is visited first and takes 1
    >>> heavy_edge_matching(np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2]),
    ...                     np.array([1.0, 1.0, 5.0, 5.0, 1.0, 1.0])).tolist()
    [0, 0, 1, 1]
    """
    n = indptr.shape[0] - 1
    mate = np.full(n, -1, dtype=np.int64)
    ptr, idx, val = indptr.tolist(), indices.tolist(), data.tolist()
    for u in range(n):
        if mate[u] >= 0:
            continue
        best, best_w = -1, -1.0
        for q in range(ptr[u], ptr[u + 1]):
            v = idx[q]
            if v != u and mate[v] < 0 and (val[q] > best_w or (val[q] == best_w and v < best)):
                best, best_w = v, val[q]
        mate[u] = u if best < 0 else best
        if best >= 0:
            mate[best] = u
    first = np.minimum(np.arange(n), mate)
    _, coarse = np.unique(first, return_inverse=True)
    return coarse.astype(np.int64)


def coarsen(
    indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, node_weight: np.ndarray, target: int
) -> tuple:
    """Repeated heavy-edge matching until at most ``target`` nodes (or no progress).

    Parameters
    ----------
    indptr, indices, data : ndarray
        Symmetric CSR of the pair weights.
    node_weight : ndarray of float64, shape (n,)
        Compute requirements.
    target : int
        The largest acceptable number of coarse nodes.

    Returns
    -------
    (indptr, indices, data), node_weight, maps
        The coarse graph, its node weights and the list of fine-to-coarse maps, finest
        first.
    """
    n = indptr.shape[0] - 1
    mat = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    w = np.asarray(node_weight, dtype=np.float64)
    maps = []
    while mat.shape[0] > target:
        c = heavy_edge_matching(mat.indptr, mat.indices, mat.data)
        k = int(c.max()) + 1
        if k > 0.95 * mat.shape[0]:  # nothing left to match (e.g. a star): stop
            break
        proj = sp.csr_matrix(
            (np.ones(mat.shape[0]), (np.arange(mat.shape[0]), c)), shape=(mat.shape[0], k)
        )
        mat = (proj.T @ mat @ proj).tocsr()
        mat = ((mat + mat.T) * 0.5).tocsr()  # exactly symmetric (sums in either order)
        mat.setdiag(0.0)
        mat.eliminate_zeros()
        mat.sort_indices()
        w = np.bincount(c, weights=w, minlength=k)
        maps.append(c)
    arrays = (
        mat.indptr.astype(np.int64),
        mat.indices.astype(np.int64),
        mat.data.astype(np.float64),
    )
    return arrays, w, maps


def _expand(order: np.ndarray, maps: list) -> np.ndarray:
    """The fine order of a coarse order: each coarse node's members, in finer order."""
    for c in reversed(maps):
        members = np.argsort(c, kind="stable")  # fine nodes grouped by coarse node, by index
        start = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=order.shape[0]))])
        order = np.concatenate([members[start[x] : start[x + 1]] for x in order.tolist()])
    return order.astype(np.int64)


def cluster_order(tasks: Any, seed: Any, clustering: Optional[dict] = None) -> np.ndarray:
    """The depth-first cluster order of ``tasks`` used by the mapper (section 4.3).

    Flow injection on the task graph itself up to :data:`COARSEN_ABOVE` tasks, on its
    heavy-edge coarsening beyond (see the module docstring).

    Parameters
    ----------
    tasks : TaskGraph
        The task graph.
    seed : int
        The clustering's seed.
    clustering : dict, optional
        Keyword arguments of :func:`coalloc.taskmap.flow_injection`.

    Returns
    -------
    ndarray of int64
        A permutation of the tasks.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> cluster_order(tasks, 0).tolist() == tm.flow_injection(tasks, seed=0).order.tolist()
    True
    """
    opts = dict(clustering or {})
    if tasks.n <= COARSEN_ABOVE or "node_weight" in opts:
        return np.asarray(flow_injection(tasks, seed=seed, **opts).order, dtype=np.int64)
    (indptr, indices, data), w, maps = coarsen(
        *tasks.undirected_csr(), tasks.node_weight, COARSEN_ABOVE
    )
    n = indptr.shape[0] - 1
    coarse = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    order = flow_injection(coarse, seed=seed, node_weight=w, **opts).order
    return _expand(np.asarray(order, dtype=np.int64), maps)
