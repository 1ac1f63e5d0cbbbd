"""Hierarchical clustering of a task graph by stochastic flow injection (section 4.3).

Taura & Chien order the tasks "in such a way that tasks within a cluster are close to each
other" (section 4.2): they split the task graph recursively into clusters with a simplified
version of Yeh, Cheng and Lin's stochastic flow injection and take the depth-first order of
the resulting tree. Splitting one cluster:

1. pick two tasks ``s != t`` with probability proportional to their weight;
2. find a shortest ``s``-``t`` path over the remaining edges;
3. subtract ``Delta`` from the remaining capacity (initially: the weight) of its edges;
4. remove the edges whose capacity reaches zero;
5. repeat until the cluster is disconnected; its connected components are the children.

A cluster that is already disconnected (disconnected input, zero weights, isolated tasks)
is split into its components without injection. :func:`flow_injection` returns the tree and
the order; the compiled kernel is :mod:`coalloc.taskmap._flowinject` (C++, GIL released) and its
slow twin :mod:`coalloc.taskmap._reference.flowinject` returns exactly the same result.

The choices the paper leaves open (path metric, ``Delta``, what a child starts from) are
documented and measured in ``coalloc docs taskmap`` and ``bench/taskmap/flow_injection.py``.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from .._shared import params as checks
from .._shared.constraints import checked
from .._shared.seeding import kernel_seed
from .._shared.validation import check_nonnegative
from .result import ClusterTree, FlowInjectionResult

__all__ = [
    "FlowInjectionResult",
    "ClusterTree",
    "flow_injection",
    "METRICS",
    "DEFAULT_DELTA_SCALE",
]

#: Path metrics: hop count (BFS), 1 / remaining capacity, 1 / original weight (Dijkstra).
METRICS = ("hops", "inverse_remaining", "inverse_weight")
#: Default relative Delta: this fraction of the mean remaining edge capacity of the cluster
#: being split (see ``coalloc docs taskmap`` for the measurement behind it).
DEFAULT_DELTA_SCALE = 0.05
#: Default cap on the injections of one split (then the weakest edges are removed).
DEFAULT_MAX_INJECTIONS = 1_000_000


# --------------------------------------------------------------------------------------
# Input conversion
# --------------------------------------------------------------------------------------


def _matrix_csr(matrix: Any, argname: str) -> sp.csr_matrix:
    if sp.issparse(matrix):
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"{argname} must be a square matrix, got shape {matrix.shape}")
        if not (np.issubdtype(matrix.dtype, np.number) or matrix.dtype == np.bool_):
            raise TypeError(f"{argname} must have a numeric dtype, got {matrix.dtype}")
        if np.issubdtype(matrix.dtype, np.complexfloating):
            raise TypeError(f"{argname} must be real, got {matrix.dtype}")
        mat = sp.csr_matrix(matrix, dtype=np.float64, copy=True)
    else:
        arr = np.asarray(matrix)
        if arr.dtype == object or not (
            np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_
        ):
            raise TypeError(
                f"{argname} must be a numeric matrix, a scipy.sparse matrix, a networkx graph "
                f"or a TaskGraph, got {type(matrix).__name__}"
            )
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError(f"{argname} must be real, got {arr.dtype}")
        if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
            raise ValueError(f"{argname} must be a square 2-D matrix, got shape {arr.shape}")
        mat = sp.csr_matrix(arr.astype(np.float64))
    mat.sum_duplicates()
    check_nonnegative(mat.data, f"{argname}: edge weights")
    return mat


def _symmetric_csr(mat: sp.csr_matrix) -> tuple:
    """Canonical CSR arrays of the pair weights: ``W`` if symmetric, else ``W + W^T``."""
    mat = sp.csr_matrix(mat, dtype=np.float64, copy=True)
    mat.setdiag(0.0)
    mat.eliminate_zeros()
    if (mat != mat.T).nnz:
        mat = (mat + mat.T).tocsr()
    mat.sum_duplicates()
    mat.eliminate_zeros()
    mat.sort_indices()
    return (
        np.ascontiguousarray(mat.indptr, dtype=np.int64),
        np.ascontiguousarray(mat.indices, dtype=np.int64),
        np.ascontiguousarray(mat.data, dtype=np.float64),
    )


def _from_networkx(graph: Any, argname: str) -> tuple:
    import networkx as nx

    nodes = list(graph.nodes)
    n = len(nodes)
    try:
        w = np.array([graph.nodes[v].get("weight", 1.0) for v in nodes], dtype=np.float64)
        mat = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight="weight", format="csr")
        mat = sp.csr_matrix(mat, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{argname}: node and edge 'weight' attributes must be numbers: {exc}"
        ) from None
    if n == 0:
        w = np.zeros(0, dtype=np.float64)
    check_nonnegative(mat.data, f"{argname}: edge weights")
    check_nonnegative(w, f"{argname}: node 'weight' attributes")
    return _symmetric_csr(mat), w


def _graph_arrays(graph: Any, node_weight: Any) -> tuple:
    """``((indptr, indices, data), node_weight)`` of any supported graph."""
    # A networkx graph can only exist once networkx is imported: look it up instead of
    # importing it (a 0.1-0.2 s import the solve path never needs).
    nx = sys.modules.get("networkx")
    if hasattr(graph, "undirected_csr") and hasattr(graph, "node_weight"):
        indptr, indices, data = (np.asarray(a) for a in graph.undirected_csr())
        n = int(graph.n)
        w = np.array(graph.node_weight, dtype=np.float64)
        mat = sp.csr_matrix(
            (np.array(data, dtype=np.float64), np.array(indices), np.array(indptr)),
            shape=(n, n),
        )
        check_nonnegative(mat.data, "graph: edge weights")
        arrays = _symmetric_csr(mat)
    elif nx is not None and isinstance(graph, nx.Graph):
        arrays, w = _from_networkx(graph, "graph")
    elif sp.issparse(graph) or isinstance(graph, (np.ndarray, list, tuple)):
        mat = _matrix_csr(graph, "graph")
        arrays = _symmetric_csr(mat)
        w = np.ones(mat.shape[0], dtype=np.float64)
    else:
        raise TypeError(
            "graph must be a numpy array, a scipy.sparse matrix, a networkx graph or a "
            f"TaskGraph, got {type(graph).__name__}"
        )
    n = arrays[0].shape[0] - 1
    if node_weight is not None:
        try:
            w = np.array(node_weight, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"node_weight must be a 1-D numeric array: {exc}") from None
        if w.shape != (n,):
            raise ValueError(f"node_weight must have shape ({n},), got {w.shape}")
    if w.shape != (n,):
        raise ValueError(f"graph: node weights have shape {w.shape}, expected ({n},)")
    check_nonnegative(w, "node_weight: node weights")
    return arrays, np.ascontiguousarray(w)


# --------------------------------------------------------------------------------------
# Public function
# --------------------------------------------------------------------------------------


@checked("coalloc.taskmap.constraints", "flow_injection", tables="FUNCTIONS")
def flow_injection(
    graph: Any,
    *,
    seed: Any = 0,
    delta: Optional[float] = None,
    delta_scale: float = DEFAULT_DELTA_SCALE,
    metric: str = "hops",
    min_cluster_size: int = 1,
    inherit: bool = False,
    max_injections: int = DEFAULT_MAX_INJECTIONS,
    node_weight: Any = None,
    backend: str = "compiled",
) -> FlowInjectionResult:
    """Cluster tree and depth-first task order by stochastic flow injection (section 4.3).

    Parameters
    ----------
    graph : ndarray, scipy.sparse matrix, networkx.Graph/DiGraph or TaskGraph
        The communication graph. A matrix ``W`` (``W[s, t]``: weight of ``s -> t``) is
        used as is when symmetric and as ``W + W^T`` otherwise; a networkx graph uses the
        edge attribute ``"weight"`` (default 1; a DiGraph is symmetrised, parallel edges of
        a multigraph are summed) and the node attribute ``"weight"`` (default 1), nodes
        numbered in ``graph.nodes`` order; a :class:`~coalloc.taskmap.TaskGraph` (or any
        object with ``n``, ``node_weight`` and ``undirected_csr()``) its pair weights and
        compute requirements. Weights must be finite and non-negative; the diagonal and
        zero weights are ignored. The caller's data is never modified.
    seed : int, numpy.random.Generator, SeedSequence or None, default 0
        An int is used modulo 2**64; a Generator / SeedSequence gives one 64-bit draw;
        None draws from the OS. Same graph, parameters and int seed: same result, on
        every platform and for both backends.
    delta : float, optional
        Absolute flow injected per path (the paper's "small constant"). None (default):
        ``delta_scale`` x the mean remaining capacity of the edges of the cluster being
        split, recomputed for every cluster.
    delta_scale : float, default 0.05
        Relative ``Delta`` (used when ``delta`` is None). Smaller is slower; 0.25 and
        more start to cut planted clusters apart (``bench/taskmap/flow_injection.py``).
    metric : {"hops", "inverse_remaining", "inverse_weight"}, default "hops"
        Length of an edge in the shortest-path search: 1 (BFS), 1 / remaining capacity
        or 1 / original weight (Dijkstra).
    min_cluster_size : int, default 1
        Clusters of at most this many tasks are not split further: their tasks become
        leaves of one node in index order (1: the hierarchy goes down to single tasks).
    inherit : bool, default False
        False: a child cluster starts again from the original weights of its edges (the
        paper's recursive call on the subgraph). True: it keeps the capacities left by its
        ancestors' injections (faster on large graphs, see ``coalloc docs taskmap``).
    max_injections : int, default 1_000_000
        Cap per split; when reached, the split is finished by removing the edges of
        smallest remaining capacity (``kind`` "forced"; never happens with the relative
        default ``Delta``, which needs at most ~``edges / delta_scale`` injections).
    node_weight : array_like, shape (n,), optional
        Overrides the node weights (end points are drawn proportionally to them; when
        fewer than two tasks of a cluster have a positive weight all count as 1).
    backend : {"compiled", "numpy"}, default "compiled"
        The C++ kernel or its slow pure-Python twin (identical results).

    Returns
    -------
    FlowInjectionResult
        ``order`` (int64 permutation), ``tree`` (:class:`ClusterTree`), counters.

    Raises
    ------
    TypeError, ValueError
        On an unsupported graph type or invalid weights / parameters (naming the argument).

    Examples
    --------
    >>> import numpy as np
    >>> block = np.ones((3, 3)) - np.eye(3)
    >>> W = np.kron(np.eye(2), block)           # two triangles ...
    >>> W[2, 3] = W[3, 2] = 0.1                 # ... joined by a weak edge
    >>> res = flow_injection(W, seed=1)
    >>> [sorted(c.tolist()) for c in res.clusters(1)]
    [[0, 1, 2], [3, 4, 5]]
    """
    # the values were checked by the table (@checked); these only fix their types
    backend = checks.backend_name(backend)
    delta_abs = 0.0 if delta is None else float(delta)
    scale, mcs, cap = float(delta_scale), int(min_cluster_size), int(max_injections)
    seed64 = kernel_seed(seed)
    (indptr, indices, data), w = _graph_arrays(graph, node_weight)

    kwargs = dict(
        delta=delta_abs, delta_scale=scale, metric=metric, seed=seed64,
        min_cluster_size=mcs, inherit=bool(inherit), max_injections=cap,
    )  # fmt: skip
    if backend == "compiled":
        from ._flowinject import cluster

        raw = cluster(indptr, indices, data, w, **kwargs, deadline=interrupt.kernel_deadline())
    else:
        from ._reference.flowinject import flow_injection_reference

        raw = flow_injection_reference(indptr, indices, data, w, **kwargs,
                                       deadline=interrupt.kernel_deadline())  # fmt: skip

    order = np.asarray(raw["order"], dtype=np.int64)
    tree = ClusterTree(
        **{
            k: np.asarray(raw[k])
            for k in ("parent", "task", "kind", "child_start", "child_count", "depth",
                      "start", "stop", "injections", "delta")
        },
        order=order,
    )  # fmt: skip
    for a in (order, *(getattr(tree, k) for k in tree.__dataclass_fields__)):
        a.setflags(write=False)
    counters = dict(raw["counters"])
    params = dict(kwargs, delta=delta, n=int(w.shape[0]))
    return FlowInjectionResult(
        order=order,
        tree=tree,
        n_injections=int(counters["injections"]),
        n_splits=int(counters["flow_splits"]),
        counters=counters,
        params=params,
        backend=backend,
    )
