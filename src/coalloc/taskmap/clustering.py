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
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from .._shared import params as checks
from .._shared.seeding import kernel_seed
from .._shared.validation import check_nonnegative
from .result import FlowInjectionResult

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
KIND_NAMES = ("leaf", "flow", "components", "flat", "forced")


# --------------------------------------------------------------------------------------
# Result
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ClusterTree:
    """The cluster hierarchy: tree nodes ``0 .. n_nodes - 1``, root ``0``.

    Every internal node is a cluster split into its children; every leaf is one task. The
    children of a node have consecutive ids (``child_start[x] .. child_start[x] +
    child_count[x] - 1``), ordered by their smallest task; node ``x`` covers the tasks
    ``order[start[x]:stop[x]]`` of the depth-first order.

    Attributes
    ----------
    parent : ndarray of int64
        Parent of each node (-1 for the root).
    task : ndarray of int64
        Task of a leaf, -1 for an internal node.
    kind : ndarray of int8
        0 leaf, 1 split by flow injection, 2 split into its (already disconnected)
        components, 3 flat (at most ``min_cluster_size`` tasks, not split), 4 split by flow
        injection finished by removing the weakest edges (``max_injections`` reached);
        names in :attr:`KIND_NAMES`.
    child_start, child_count : ndarray of int64
    depth : ndarray of int64
        Root 0.
    start, stop : ndarray of int64
        Span of each node in ``order``.
    injections : ndarray of int64
        Flows injected to split each node.
    delta : ndarray of float64
        ``Delta`` used to split each node (NaN when nothing was injected).
    order : ndarray of int64
        Depth-first order of the tasks.
    """

    parent: np.ndarray
    task: np.ndarray
    kind: np.ndarray
    child_start: np.ndarray
    child_count: np.ndarray
    depth: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    injections: np.ndarray
    delta: np.ndarray
    order: np.ndarray

    KIND_NAMES = KIND_NAMES

    @property
    def n_nodes(self) -> int:
        """Number of tree nodes (leaves included)."""
        return int(self.parent.shape[0])

    @property
    def n_tasks(self) -> int:
        return int(self.order.shape[0])

    @property
    def height(self) -> int:
        """Largest depth (0 for a single task, -1 for the empty tree)."""
        return int(self.depth.max()) if self.n_nodes else -1

    @property
    def leaf_of_task(self) -> np.ndarray:
        """Tree node of each task."""
        out = np.full(self.n_tasks, -1, dtype=np.int64)
        leaves = np.flatnonzero(self.task >= 0)
        out[self.task[leaves]] = leaves
        return out

    def children(self, node: int) -> np.ndarray:
        """Child ids of ``node`` (empty for a leaf)."""
        s, c = int(self.child_start[node]), int(self.child_count[node])
        return np.arange(s, s + c, dtype=np.int64) if c else np.empty(0, dtype=np.int64)

    def members(self, node: int) -> np.ndarray:
        """Tasks of ``node``'s cluster, in depth-first order."""
        return self.order[self.start[node] : self.stop[node]].copy()

    def kind_name(self, node: int) -> str:
        return KIND_NAMES[int(self.kind[node])]

    def cut(self, level: int) -> np.ndarray:
        """Tree nodes whose clusters partition the tasks at depth ``level``.

        The nodes at depth ``level`` together with the shallower leaves, in depth-first
        order (``level=0``: the root; ``level >= height``: every leaf).
        """
        if not isinstance(level, (int, np.integer)) or isinstance(level, bool) or level < 0:
            raise ValueError(f"level must be a non-negative int, got {level!r}")
        if self.n_nodes == 0:
            return np.empty(0, dtype=np.int64)
        keep = (self.depth == level) | ((self.depth < level) & (self.task >= 0))
        nodes = np.flatnonzero(keep)
        return nodes[np.argsort(self.start[nodes], kind="stable")].astype(np.int64)

    def clusters(self, level: int = 1) -> list:
        """The partition of the tasks at depth ``level``: a list of int64 arrays, in order.

        ``level=1`` gives the top-level split; every cluster is contiguous in ``order``.
        """
        return [self.members(x) for x in self.cut(level)]

    def labels(self, level: int = 1) -> np.ndarray:
        """Cluster number (position in :meth:`clusters`) of each task at depth ``level``."""
        out = np.empty(self.n_tasks, dtype=np.int64)
        for i, x in enumerate(self.cut(level)):
            out[self.order[self.start[x] : self.stop[x]]] = i
        return out

    def __repr__(self) -> str:
        return f"ClusterTree(tasks={self.n_tasks}, nodes={self.n_nodes}, height={self.height})"

    def to_networkx(self) -> Any:
        """The tree as a ``networkx.DiGraph`` (edges parent -> child).

        Node attributes: ``kind`` (name), ``task`` (-1 for internal nodes), ``size``
        (number of tasks), ``depth``, ``injections``, ``delta``.
        """
        import networkx as nx

        g = nx.DiGraph()
        for x in range(self.n_nodes):
            g.add_node(
                x, kind=self.kind_name(x), task=int(self.task[x]),
                size=int(self.stop[x] - self.start[x]), depth=int(self.depth[x]),
                injections=int(self.injections[x]), delta=float(self.delta[x]),
            )  # fmt: skip
            if self.parent[x] >= 0:
                g.add_edge(int(self.parent[x]), x)
        return g


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
    if not isinstance(metric, str) or metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    backend = checks.check_backend(backend)
    if not isinstance(inherit, (bool, np.bool_)):
        raise TypeError(f"inherit must be a bool, got {type(inherit).__name__}")
    delta_abs = 0.0 if delta is None else checks.number(delta, "delta")
    scale = checks.number(delta_scale, "delta_scale")
    mcs = checks.integer(min_cluster_size, "min_cluster_size", 1)
    cap = checks.integer(max_injections, "max_injections", 0)
    seed64 = kernel_seed(seed)
    (indptr, indices, data), w = _graph_arrays(graph, node_weight)

    kwargs = dict(
        delta=delta_abs, delta_scale=scale, metric=metric, seed=seed64,
        min_cluster_size=mcs, inherit=bool(inherit), max_injections=cap,
    )  # fmt: skip
    if backend == "compiled":
        from ._flowinject import cluster

        raw = cluster(indptr, indices, data, w, **kwargs)
    else:
        from ._reference.flowinject import flow_injection_reference

        raw = flow_injection_reference(indptr, indices, data, w, **kwargs)

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
