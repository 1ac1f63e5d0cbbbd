"""Task graphs and resource graphs: the models of a mapping problem (Taura & Chien, section 3).

A :class:`TaskGraph` has ``n`` tasks with a compute requirement each (node weight) and a
communication matrix ``W`` (``W[s, t]`` = data task ``s`` sends to task ``t`` per unit of
progress). It is *undirected* when ``W`` is symmetric and the caller does not say otherwise;
then each unordered pair ``{s, t}`` is one stream of volume ``W[s, t]``. In a *directed*
graph the two directions are separate streams, and the pair carries ``W[s, t] + W[t, s]``.

A :class:`ResourceGraph` has ``R`` nodes -- processors (positive compute capacity, may host
tasks) and routers (no capacity, cannot host tasks, e.g. WAN nodes and LAN gateways of the
Internet-like graphs of section 5.1) -- and undirected links with a bandwidth each. A link
is shared by both directions (its capacity bounds the sum of the traffic both ways). Every
pair of processors has one fixed route (a list of link ids), by default a shortest path by
hop count; ``route_length="inverse_bandwidth"`` or an array of link lengths picks another
shortest path. The route of ``(a, b)`` and of ``(b, a)`` is always the same set of links.

A mapping ``m`` puts every task on a processor (:func:`check_mapping` validates one). Its
load graph ``L(G, P, m)``, occupancy graph ``O = L / P`` and the objective ``max(O)`` -- the
occupancy measures -- live in :mod:`coalloc.taskmap.occupancy`, which builds on the models
here; this module imports none of it (no import cycle).

Why over 800 lines: one idea, the two read-only graph models with their constructors from
arrays, matrices and networkx, and the checks of what is handed to them (about 920 lines,
half of them the numpydoc and examples of a public API). Splitting the two classes apart
would split the validation helpers they share.
"""

from __future__ import annotations

from typing import Any, Optional, Union

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._shared.caches import cache_of
from .._shared.validation import nonnegative_vector, readonly, square_sparse
from .result import Bottleneck  # noqa: F401 - its old home: old pickles name it here
from .routing import route_table

__all__ = ["TaskGraph", "ResourceGraph", "check_mapping", "check_graphs", "link_adjacency"]


# --------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------


def _square_csr(matrix: Any, n: int, argname: str) -> sp.csr_matrix:
    """A validated float64 CSR copy of a dense or sparse ``n x n`` matrix, no diagonal."""
    mat = square_sparse(matrix, argname, n=n, kind="matrix")
    mat.setdiag(0.0)  # a task talking to itself never uses the network
    mat.eliminate_zeros()
    mat.sort_indices()
    return mat


def _check_names(names: Any, n: int, argname: str) -> Optional[list]:
    """A list copy of ``n`` distinct hashable names, or None."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)):
        raise TypeError(f"{argname} must be a sequence of names, got a string")
    out = list(names)
    if len(out) != n:
        raise ValueError(f"{argname} has length {len(out)}, expected {n}")
    seen: dict = {}
    for i, x in enumerate(out):
        try:
            j = seen.setdefault(x, i)
        except TypeError:
            raise TypeError(f"{argname}[{i}] = {x!r} is not hashable") from None
        if j != i:
            raise ValueError(f"{argname}[{i}] = {x!r} repeats {argname}[{j}]")
    return out


def link_adjacency(n_nodes: int, links: np.ndarray) -> sp.csr_matrix:
    """The symmetric ``n_nodes x n_nodes`` adjacency (ones) of undirected ``(E, 2)`` links.

    Parameters
    ----------
    n_nodes : int
        The number of nodes.
    links : ndarray of int64, shape (E, 2)
        Validated links (as :attr:`ResourceGraph.links`).

    Returns
    -------
    scipy.sparse.csr_matrix
        A 1 at ``[u, v]`` and ``[v, u]`` for every link ``{u, v}``.

    Examples
    --------
    >>> import numpy as np
    >>> link_adjacency(3, np.array([[0, 1], [0, 2]])).toarray().tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    """
    ends = (np.r_[links[:, 0], links[:, 1]], np.r_[links[:, 1], links[:, 0]])
    return sp.csr_matrix((np.ones(2 * links.shape[0]), ends), shape=(n_nodes, n_nodes))


def _attribute(data: dict, key: Optional[str], default: float, where: str) -> float:
    """``data[key]`` (or ``default``) as a finite non-negative float, or ValueError."""
    value = default if key is None else data.get(key, default)
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if isinstance(value, bool) or not np.isfinite(x) or x < 0:
        raise ValueError(
            f"{where}: attribute {key!r} = {value!r} is not a finite non-negative number"
        )
    return x


# --------------------------------------------------------------------------------------
# Task graph
# --------------------------------------------------------------------------------------


class TaskGraph:
    """Communicating tasks: compute requirements and a communication matrix.

    Parameters
    ----------
    node_weight : array_like of float, shape (n,)
        Compute requirement of each task (non-negative, finite).
    comm : array_like or scipy.sparse matrix, shape (n, n), optional
        ``comm[s, t]`` = volume task ``s`` sends to task ``t`` per unit of progress
        (non-negative, finite). The diagonal is ignored. None: no communication.
    directed : bool, optional
        None (default): undirected when ``comm`` is symmetric, directed otherwise.
        ``False`` with an asymmetric ``comm`` is an error.
    names : sequence, optional
        A distinct, hashable name for every task (kept end to end: files, results); e.g.
        the nodes of a networkx graph or the labels of a Scotch graph file.

    Attributes
    ----------
    n : int
        Number of tasks.
    node_weight : ndarray of float64, shape (n,)
    indptr, indices, data : ndarray
        CSR arrays of ``comm`` as given (int64, int64, float64), diagonal removed.
    directed : bool
    names : list or None
        The task names, or None.

    Raises
    ------
    ValueError
        No task, a negative or non-finite value, a wrong shape, ``directed=False`` with
        an asymmetric ``comm``, or names of the wrong length, repeated or unhashable.
    TypeError
        ``directed`` is not a bool or None.

    Examples
    --------
    Three tasks in a chain; task 1 talks to both others:

    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> tasks
    TaskGraph(n=3, pairs=2, undirected)
    >>> tasks.node_weight.tolist(), tasks.n_edges
    ([1.0, 2.0, 1.5], 2)
    """

    def __init__(
        self,
        node_weight: Any,
        comm: Any = None,
        *,
        directed: Optional[bool] = None,
        names: Any = None,
    ):
        w = nonnegative_vector(node_weight, "node_weight")
        n = int(w.shape[0])
        if n == 0:
            raise ValueError("node_weight: a task graph needs at least one task")
        mat = (
            sp.csr_matrix((n, n), dtype=np.float64)
            if comm is None
            else _square_csr(comm, n, "comm")
        )
        symmetric = (mat != mat.T).nnz == 0
        if directed is None:
            directed = not symmetric
        elif not isinstance(directed, (bool, np.bool_)):
            raise TypeError(f"directed must be a bool or None, got {type(directed).__name__}")
        elif not directed and not symmetric:
            raise ValueError("comm is not symmetric but directed=False")
        self.names = _check_names(names, n, "names")
        self.n = n
        self.directed = bool(directed)
        self.node_weight = w
        self.indptr = mat.indptr.astype(np.int64)
        self.indices = mat.indices.astype(np.int64)
        self.data = mat.data.astype(np.float64)
        readonly(self.node_weight, self.indptr, self.indices, self.data)
        pair = (mat + mat.T).tocsr() if self.directed else mat.copy()
        pair.sum_duplicates()
        pair.eliminate_zeros()
        pair.sort_indices()
        self._pair = pair
        self._pair_arrays = (
            pair.indptr.astype(np.int64),
            pair.indices.astype(np.int64),
            pair.data.astype(np.float64),
        )
        readonly(*self._pair_arrays)
        upper = sp.triu(pair, k=1).tocoo()
        self._edges = (
            upper.row.astype(np.int64),
            upper.col.astype(np.int64),
            upper.data.astype(np.float64),
        )
        readonly(*self._edges)

    # -- constructors -----------------------------------------------------------------
    @classmethod
    def from_networkx(
        cls,
        graph: Any,
        *,
        weight: Optional[str] = "weight",
        comm: Optional[str] = "weight",
        default_weight: float = 1.0,
        default_comm: float = 1.0,
    ) -> TaskGraph:
        """A task graph from a networkx (Di)Graph; tasks keep the graph's nodes as names.

        Tasks are numbered in ``graph.nodes`` order and :attr:`names` holds the nodes, so a
        mapping can be reported by name (:func:`coalloc.taskmap.named_mapping`).

        Parameters
        ----------
        graph : networkx.Graph or networkx.DiGraph
            A DiGraph gives a directed task graph, a Graph an undirected one. Self-loops
            are ignored (a task talking to itself uses no link).
        weight : str or None
            Node attribute holding the compute requirement (``default_weight`` where a node
            lacks it; None: every task gets ``default_weight``).
        comm : str or None
            Edge attribute holding the communication volume (``default_comm`` where an edge
            lacks it; None: every edge gets ``default_comm``).
        default_weight : float, default 1.0
            Compute requirement of a node without the ``weight`` attribute.
        default_comm : float, default 1.0
            Volume of an edge without the ``comm`` attribute.

        Returns
        -------
        TaskGraph
            Directed when ``graph`` is a DiGraph, with ``names`` = the graph's nodes.

        Raises
        ------
        TypeError
            ``graph`` is not a networkx graph, or is a multigraph.
        ValueError
            A node or edge whose attribute is not a finite non-negative number (named), or
            a graph without nodes.

        Examples
        --------
        >>> import networkx as nx
        >>> from coalloc.taskmap import TaskGraph
        >>> g = nx.path_graph(["a", "b", "c"])
        >>> g.nodes["b"]["flops"] = 2.5
        >>> g.edges["a", "b"]["bytes"] = 4.0
        >>> tasks = TaskGraph.from_networkx(g, weight="flops", comm="bytes")
        >>> tasks.names, tasks.node_weight.tolist(), tasks.comm.toarray().tolist()
        (['a', 'b', 'c'], [1.0, 2.5, 1.0], [[0.0, 4.0, 0.0], [4.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
        """
        import networkx as nx

        if not isinstance(graph, nx.Graph):
            raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}")
        if graph.is_multigraph():
            raise TypeError("graph: multigraphs are not supported")
        nodes = list(graph.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        w = [
            _attribute(graph.nodes[v], weight, default_weight, f"graph: node {v!r}") for v in nodes
        ]
        rows, cols, vals = [], [], []
        for u, v, d in graph.edges(data=True):
            vol = _attribute(d, comm, default_comm, f"graph: edge ({u!r}, {v!r})")
            if u == v:
                continue
            rows.append(index[u])
            cols.append(index[v])
            vals.append(vol)
        n = len(nodes)
        if n == 0:
            raise ValueError("graph: a task graph needs at least one task (the graph is empty)")
        mat = sp.coo_matrix((np.array(vals, dtype=np.float64), (rows, cols)), shape=(n, n))
        if not graph.is_directed():
            mat = mat + sp.coo_matrix((mat.data, (mat.col, mat.row)), shape=(n, n))
        return cls(w, mat.tocsr(), directed=graph.is_directed(), names=nodes)

    # -- views ------------------------------------------------------------------------
    @property
    def comm(self) -> sp.csr_matrix:
        """The communication matrix as given (a fresh CSR copy, diagonal removed)."""
        return sp.csr_matrix(
            (self.data.copy(), self.indices.copy(), self.indptr.copy()), shape=(self.n, self.n)
        )

    def undirected_csr(self) -> tuple:
        """CSR ``(indptr, indices, data)`` of the symmetric pair weights, no diagonal.

        Entry ``(s, t)`` is the volume the pair ``{s, t}`` puts on a link of its route:
        ``W + W^T`` for a directed graph, ``W`` itself (already symmetric) for an undirected
        one. Read-only arrays.

        Returns
        -------
        indptr, indices, data : ndarray
            The CSR arrays (int64, int64, float64).

        Examples
        --------
        >>> from coalloc.taskmap import TaskGraph
        >>> tasks = TaskGraph([1, 1, 1], [[0, 2, 0], [1, 0, 0], [0, 0, 0]], directed=True)
        >>> indptr, indices, data = tasks.undirected_csr()
        >>> indptr.tolist(), indices.tolist(), data.tolist()
        ([0, 1, 2, 2], [1, 0], [3.0, 3.0])
        """
        return self._pair_arrays

    def edges(self) -> tuple:
        """Communicating pairs ``(s, t, volume)`` with ``s < t``, each pair once.

        Returns
        -------
        s, t : ndarray of int64
            The two tasks of each pair.
        volume : ndarray of float64
            The pair's volume on a link (both directions summed for a directed graph).

        Examples
        --------
        >>> from coalloc.taskmap import TaskGraph
        >>> s, t, volume = TaskGraph([1, 1, 1], [[0, 4, 0], [4, 0, 1], [0, 1, 0]]).edges()
        >>> s.tolist(), t.tolist(), volume.tolist()
        ([0, 1], [1, 2], [4.0, 1.0])
        """
        return self._edges

    @property
    def n_edges(self) -> int:
        """Number of communicating unordered pairs."""
        return int(self._edges[0].shape[0])

    @property
    def total_weight(self) -> float:
        """Sum of the compute requirements of the tasks."""
        return float(self.node_weight.sum())

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return f"TaskGraph(n={self.n}, pairs={self.n_edges}, {kind})"


# --------------------------------------------------------------------------------------
# Resource graph
# --------------------------------------------------------------------------------------

RouteLength = Union[str, Any]


class ResourceGraph:
    """Processors, routers and links, with one fixed route between every pair of processors.

    Parameters
    ----------
    capacity : array_like of float, shape (R,)
        Compute capacity of each node; routers have 0.
    links : array_like of int, shape (E, 2)
        Undirected links as pairs of node indices (no self-loops, no duplicates).
    bandwidth : array_like of float, shape (E,)
        Communication capacity of each link (positive, finite). Shared by both directions.
    is_processor : array_like of bool, shape (R,), optional
        Nodes that may host tasks. Default ``capacity > 0``. A processor must have a positive
        capacity.
    route_length : {"hops", "inverse_bandwidth"} or array_like of float, shape (E,)
        Length of each link for the fixed shortest-path routes (default ``"hops"``: fewest
        links; ties are broken by SciPy's Dijkstra, deterministically).
    names : sequence, optional
        Node labels (kept for I/O, e.g. from networkx).

    Raises
    ------
    ValueError
        Bad shapes or values, or two processors that are not connected.

    Examples
    --------
    A router (node 0, capacity 0) joining two processors of capacity 3 and 5:

    >>> import coalloc.taskmap as tm
    >>> res = tm.ResourceGraph([0, 3.0, 5.0], [[0, 1], [0, 2]], bandwidth=[50.0, 50.0])
    >>> res
    ResourceGraph(nodes=3, processors=2, links=2, routes='hops')
    >>> res.processors.tolist(), res.route(1, 2).tolist()
    ([1, 2], [1, 0])
    """

    def __init__(
        self,
        capacity: Any,
        links: Any,
        *,
        bandwidth: Any = None,
        is_processor: Any = None,
        route_length: RouteLength = "hops",
        names: Any = None,
    ):
        cap = nonnegative_vector(capacity, "capacity")
        r = int(cap.shape[0])
        if r == 0:
            raise ValueError("capacity: a resource graph needs at least one node")
        try:
            ln = np.array(links if links is not None else np.zeros((0, 2)), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"links must be an (E, 2) integer array: {exc}") from None
        if ln.size == 0:
            ln = ln.reshape(0, 2)
        if ln.ndim != 2 or ln.shape[1] != 2:
            raise ValueError(f"links must have shape (E, 2), got {ln.shape}")
        if not np.all(np.isfinite(ln)) or np.any(ln != np.round(ln)):
            raise ValueError("links must hold integer node indices")
        ln = ln.astype(np.int64)
        e = int(ln.shape[0])
        if e and (ln.min() < 0 or ln.max() >= r):
            raise ValueError(f"links: node indices must be in [0, {r})")
        if np.any(ln[:, 0] == ln[:, 1]):
            raise ValueError("links: self-loops are not allowed")
        lo, hi = np.minimum(ln[:, 0], ln[:, 1]), np.maximum(ln[:, 0], ln[:, 1])
        if np.unique(lo * r + hi).shape[0] != e:
            raise ValueError("links: duplicate links (merge them into one with summed bandwidth)")
        if bandwidth is None:
            raise ValueError("bandwidth is required (one value per link)")
        bw = nonnegative_vector(bandwidth, "bandwidth", length=e)
        if np.any(bw <= 0):
            raise ValueError("bandwidth must be positive")
        if is_processor is None:
            proc = cap > 0
        else:
            proc = np.array(is_processor)
            if proc.shape != (r,) or proc.dtype != np.bool_:
                raise ValueError(f"is_processor must be a boolean array of shape ({r},)")
            proc = proc.copy()
            if np.any(cap[proc] <= 0):
                raise ValueError("is_processor: every processor needs a positive capacity")
        if not proc.any():
            raise ValueError("capacity: no processor (no node with positive capacity)")
        if isinstance(route_length, str):
            if route_length == "hops":
                length = np.ones(e)
            elif route_length == "inverse_bandwidth":
                length = 1.0 / bw
            else:
                raise ValueError(
                    "route_length must be 'hops', 'inverse_bandwidth' or an array, "
                    f"got {route_length!r}"
                )
        else:
            length = nonnegative_vector(route_length, "route_length", length=e)
            if np.any(length <= 0):
                raise ValueError("route_length must be positive")
        self.n_nodes = r
        self.n_links = e
        self.capacity = cap
        self.links = ln
        self.bandwidth = bw
        self.is_processor = proc
        self.processors = np.flatnonzero(proc).astype(np.int64)
        self.route_length = length
        self.route_kind = route_length if isinstance(route_length, str) else "custom"
        self.names = None if names is None else list(names)
        if self.names is not None and len(self.names) != r:
            raise ValueError(f"names has length {len(self.names)}, expected {r}")
        readonly(self.capacity, self.links, self.bandwidth, self.is_processor)
        readonly(self.processors, self.route_length)
        # Connectivity is checked here (one pass); the routes themselves -- one Dijkstra from
        # every processor -- are computed on first use by routing.route_table and shared by
        # every graph with the same links, lengths and processors.
        _, label = csgraph.connected_components(link_adjacency(r, ln), directed=False)
        first = int(self.processors[0])
        apart = label != label[first]
        if apart[self.processors].any():
            j = int(self.processors[np.flatnonzero(apart[self.processors])[0]])
            raise ValueError(f"links: processors {first} and {j} are not connected")
        if apart.any():
            v = int(np.flatnonzero(apart)[0])
            raise ValueError(
                f"links: node {v} is not connected to the processors (every router must be "
                "reachable: routes and flows are walked through the whole graph)"
            )
        self._proc_row = np.full(r, -1, dtype=np.int64)
        self._proc_row[self.processors] = np.arange(self.processors.shape[0])
        # adjacent link capacity of each node (the denominator of the open metric)
        self.adjacent_bandwidth = np.bincount(ln[:, 0], weights=bw, minlength=r) + np.bincount(
            ln[:, 1], weights=bw, minlength=r
        )
        readonly(self.adjacent_bandwidth)
        # the route tables routes_from computes are kept beside the graph (cache_of), never
        # on it: the graph stays read-only and a pickled graph carries no warm cache

    # -- constructors -----------------------------------------------------------------
    @classmethod
    def from_edges(
        cls,
        capacity: Any,
        edges: Any,
        bandwidth: Any,
        *,
        is_processor: Any = None,
        route_length: RouteLength = "hops",
    ) -> ResourceGraph:
        """A resource graph from node capacities, an ``(E, 2)`` edge list and bandwidths.

        Parameters
        ----------
        capacity : array_like of float, shape (R,)
            Compute capacity of every node (0: a router).
        edges : array_like of int, shape (E, 2)
            The undirected links.
        bandwidth : array_like of float, shape (E,)
            Bandwidth of every link.
        is_processor : array_like of bool, shape (R,), optional
            Which nodes take tasks (default: ``capacity > 0``).
        route_length : {"hops", "inverse_bandwidth"} or array_like of float, default "hops"
            Length of a link for the fixed shortest routes.

        Returns
        -------
        ResourceGraph
            Validated as the constructor does.

        Examples
        --------
        >>> from coalloc.taskmap import ResourceGraph
        >>> res = ResourceGraph.from_edges([0, 3.0, 5.0, 4.0], [[0, 1], [0, 2], [2, 3]],
        ...                                [50.0, 40.0, 20.0])
        >>> res.n_nodes, res.processors.tolist(), res.route_nodes(1, 3)
        (4, [1, 2, 3], [1, 0, 2, 3])
        """
        return cls(
            capacity, edges, bandwidth=bandwidth, is_processor=is_processor,
            route_length=route_length,
        )  # fmt: skip

    @classmethod
    def from_matrix(
        cls,
        capacity: Any,
        bandwidth: Any,
        *,
        is_processor: Any = None,
        route_length: RouteLength = "hops",
    ) -> ResourceGraph:
        """A resource graph from a symmetric ``R x R`` bandwidth matrix (dense or sparse).

        Each nonzero ``bandwidth[u, v]`` (``u < v``) is a link; the diagonal is ignored.

        Parameters
        ----------
        capacity : array_like of float, shape (R,)
            Compute capacity of every node (0: a router).
        bandwidth : array_like or scipy.sparse matrix, shape (R, R)
            Symmetric link bandwidths.
        is_processor : array_like of bool, shape (R,), optional
            Which nodes take tasks (default: ``capacity > 0``).
        route_length : {"hops", "inverse_bandwidth"} or array_like of float, default "hops"
            Length of a link for the fixed shortest routes.

        Returns
        -------
        ResourceGraph
            One link per nonzero upper-triangle entry.

        Raises
        ------
        ValueError
            An asymmetric ``bandwidth`` or a negative capacity.

        Examples
        --------
        >>> from coalloc.taskmap import ResourceGraph
        >>> res = ResourceGraph.from_matrix([2.0, 2.0, 2.0], [[0, 10, 0], [10, 0, 5], [0, 5, 0]])
        >>> res.links.tolist(), res.bandwidth.tolist()
        ([[0, 1], [1, 2]], [10.0, 5.0])
        """
        cap = nonnegative_vector(capacity, "capacity")
        mat = _square_csr(bandwidth, cap.shape[0], "bandwidth")
        if (mat != mat.T).nnz:
            raise ValueError("bandwidth must be symmetric (links are undirected)")
        upper = sp.triu(mat, k=1).tocoo()
        edges = np.stack([upper.row, upper.col], axis=1)
        return cls(
            cap, edges, bandwidth=upper.data, is_processor=is_processor,
            route_length=route_length,
        )  # fmt: skip

    @classmethod
    def from_networkx(
        cls,
        graph: Any,
        *,
        capacity: str = "capacity",
        bandwidth: str = "bandwidth",
        route_length: RouteLength = "hops",
        processor: str = "is_processor",
        length: Optional[str] = None,
    ) -> ResourceGraph:
        """A resource graph from an undirected networkx Graph; nodes keep their names.

        Node attribute ``capacity`` (default 0: a router), optional boolean node attribute
        ``processor`` (default ``capacity > 0``), edge attribute ``bandwidth`` (required),
        optional edge attribute ``length`` (the link lengths of the routes).

        Parameters
        ----------
        graph : networkx.Graph
            The undirected resource graph; nodes are numbered in ``graph.nodes`` order and
            keep their names (:attr:`names`).
        capacity : str, default "capacity"
            Node attribute holding the compute capacity.
        bandwidth : str, default "bandwidth"
            Edge attribute holding the link bandwidth.
        route_length : {"hops", "inverse_bandwidth"} or array_like of float, default "hops"
            Length of a link for the fixed shortest routes (ignored when ``length`` is
            given).
        processor : str, default "is_processor"
            Boolean node attribute saying which nodes take tasks.
        length : str, optional
            Edge attribute holding each link's length for the routes (e.g. a latency);
            every edge must have it.

        Returns
        -------
        ResourceGraph
            With ``names`` = the graph's nodes.

        Raises
        ------
        TypeError
            ``graph`` is not an undirected, simple networkx Graph.
        ValueError
            An edge without ``bandwidth`` (or ``length``), or an attribute that is not a
            finite non-negative number (a boolean for ``processor``), naming the node or
            edge.

        Examples
        --------
        >>> import networkx as nx
        >>> from coalloc.taskmap import ResourceGraph
        >>> g = nx.Graph()
        >>> g.add_node("switch")
        >>> g.add_node("cpu0", capacity=3.0)
        >>> g.add_node("cpu1", capacity=5.0)
        >>> g.add_edge("switch", "cpu0", bandwidth=50.0)
        >>> g.add_edge("switch", "cpu1", bandwidth=50.0)
        >>> res = ResourceGraph.from_networkx(g)
        >>> [res.names[p] for p in res.processors], res.route_nodes(1, 2)
        (['cpu0', 'cpu1'], [1, 0, 2])
        """
        import networkx as nx

        if not isinstance(graph, nx.Graph) or graph.is_directed() or graph.is_multigraph():
            raise TypeError("graph must be an undirected networkx.Graph")
        nodes = list(graph.nodes)
        index = {v: i for i, v in enumerate(nodes)}
        cap = [_attribute(graph.nodes[v], capacity, 0.0, f"graph: node {v!r}") for v in nodes]
        flags = [graph.nodes[v].get(processor) for v in nodes]
        for v, f in zip(nodes, flags):
            if f is not None and not isinstance(f, (bool, np.bool_)):
                raise ValueError(
                    f"graph: node {v!r}: attribute {processor!r} = {f!r} is not a bool"
                )
        proc = None
        if any(f is not None for f in flags):
            proc = np.array(
                [bool(f) if f is not None else c > 0 for f, c in zip(flags, cap)], dtype=bool
            )
        edges, bws, lengths = [], [], []
        for u, v, d in graph.edges(data=True):
            where = f"graph: edge ({u!r}, {v!r})"
            for key in (bandwidth, length):
                if key is not None and key not in d:
                    raise ValueError(f"{where} has no {key!r} attribute")
            edges.append((index[u], index[v]))
            bws.append(_attribute(d, bandwidth, 0.0, where))
            if length is not None:
                lengths.append(_attribute(d, length, 0.0, where))
        return cls(
            cap, np.array(edges, dtype=np.int64).reshape(-1, 2), bandwidth=bws,
            is_processor=proc, route_length=route_length if length is None else lengths,
            names=nodes,
        )  # fmt: skip

    # -- routes -----------------------------------------------------------------------
    @property
    def n_processors(self) -> int:
        """Number of processors (the nodes that take tasks)."""
        return int(self.processors.shape[0])

    @property
    def predecessors(self) -> np.ndarray:
        """``pred[k, v]``: the node before ``v`` on the shortest path from ``processors[k]``.

        The fixed route between processors ``a`` and ``b`` is read from the row of the one
        that comes first in ``processors`` (the smaller index), so it is the same both ways.
        Computed on first use, once per graph (:func:`coalloc.taskmap.routing.route_table`);
        int32, ``-1`` at the row's own processor.
        """
        return route_table(self).pred

    def routes_from(self, a: int) -> np.ndarray:
        """Padded route table of processor ``a``: row ``b`` lists the link ids to node ``b``.

        Shape ``(R, H)`` with ``-1`` padding (``H`` = longest route from ``a``); only rows of
        processors are meaningful (routers get their path from ``a`` too, unused). Cached
        per processor, read-only.

        Parameters
        ----------
        a : int
            A processor's node index.

        Returns
        -------
        ndarray of int64, shape (R, H)
            Link ids, ``-1`` padded.

        Raises
        ------
        ValueError
            ``a`` is not a processor.

        Examples
        --------
        >>> from coalloc.taskmap import ResourceGraph
        >>> res = ResourceGraph.from_edges([0, 3.0, 5.0, 4.0], [[0, 1], [0, 2], [2, 3]],
        ...                                [50.0, 40.0, 20.0])
        >>> res.routes_from(1).tolist()
        [[0, -1, -1], [-1, -1, -1], [1, 0, -1], [2, 1, 0]]
        """
        cache = cache_of(self)
        routes = cache.get("routes")
        if routes is None:
            routes = cache.setdefault("routes", {})
        table = routes.get(a)
        if table is not None:
            return table
        if not (0 <= int(a) < self.n_nodes and self.is_processor[int(a)]):
            raise ValueError(f"node {a} is not a processor")
        table = route_table(self).table(int(a))
        table.setflags(write=False)
        return routes.setdefault(a, table)

    def route(self, a: int, b: int) -> np.ndarray:
        """Link ids of the fixed route between processors ``a`` and ``b`` (empty if equal).

        Parameters
        ----------
        a, b : int
            Node indices of two processors.

        Returns
        -------
        ndarray of int64
            The links of the route, the same both ways; their order is not the path's
            (:meth:`route_nodes` gives the nodes in order).

        Examples
        --------
        >>> from coalloc.taskmap import ResourceGraph
        >>> res = ResourceGraph.from_edges([0, 3.0, 5.0, 4.0], [[0, 1], [0, 2], [2, 3]],
        ...                                [50.0, 40.0, 20.0])
        >>> sorted(res.route(1, 3).tolist()), sorted(res.route(3, 1).tolist())
        ([0, 1, 2], [0, 1, 2])
        >>> res.route(2, 2).tolist()
        []
        """
        row = self.routes_from(int(a))[int(b)]
        return row[row >= 0].copy()

    def route_nodes(self, a: int, b: int) -> list:
        """Node sequence of the fixed route from processor ``a`` to processor ``b``.

        Parameters
        ----------
        a, b : int
            Node indices of two processors.

        Returns
        -------
        list of int
            The nodes from ``a`` to ``b``, both included.

        Raises
        ------
        ValueError
            ``a`` or ``b`` is not a processor.

        Examples
        --------
        >>> from coalloc.taskmap import ResourceGraph
        >>> res = ResourceGraph.from_edges([0, 3.0, 5.0, 4.0], [[0, 1], [0, 2], [2, 3]],
        ...                                [50.0, 40.0, 20.0])
        >>> res.route_nodes(3, 1)
        [3, 2, 0, 1]
        """
        ra, rb = int(self._proc_row[a]), int(self._proc_row[b])
        if ra < 0 or rb < 0:
            raise ValueError("route_nodes: both ends must be processors")
        pred = route_table(self).pred
        src, dst, row = (a, b, ra) if ra <= rb else (b, a, rb)
        path = [dst]
        while path[-1] != src:
            path.append(int(pred[row, path[-1]]))
        path.reverse()
        return path if ra <= rb else path[::-1]

    def __repr__(self) -> str:
        return (
            f"ResourceGraph(nodes={self.n_nodes}, processors={self.n_processors}, "
            f"links={self.n_links}, routes={self.route_kind!r})"
        )


# --------------------------------------------------------------------------------------
# Mappings onto the two graphs
# --------------------------------------------------------------------------------------


def check_graphs(
    tasks: Any, resources: Any, names: tuple = ("task_graph", "resource_graph")
) -> None:
    """Raise TypeError unless ``tasks`` is a :class:`TaskGraph` and ``resources`` a
    :class:`ResourceGraph`, naming the argument (``names``: the caller's two names).

    Parameters
    ----------
    tasks, resources : object
        What the caller was given.
    names : (str, str), default ("task_graph", "resource_graph")
        The caller's names of the two arguments, for the message.

    Raises
    ------
    TypeError
        An argument of another type.

    Examples
    --------
    >>> check_graphs([1.0], None)
    Traceback (most recent call last):
    ...
    TypeError: task_graph must be a TaskGraph, got list
    """
    if not isinstance(tasks, TaskGraph):
        raise TypeError(f"{names[0]} must be a TaskGraph, got {type(tasks).__name__}")
    if not isinstance(resources, ResourceGraph):
        raise TypeError(f"{names[1]} must be a ResourceGraph, got {type(resources).__name__}")


def check_mapping(
    tasks: TaskGraph, resources: ResourceGraph, mapping: Any, *, partial: bool = False
) -> np.ndarray:
    """Validate a mapping (task -> processor node index); returns an int64 copy.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph (``n`` tasks).
    resources : ResourceGraph
        The resource graph.
    mapping : array_like of int, shape (n,)
        The processor node of each task; with ``partial=True`` ``-1`` means "not mapped".
    partial : bool, default False
        Whether unmapped tasks (``-1``) are allowed.

    Returns
    -------
    ndarray of int64, shape (n,)
        A copy of ``mapping``.

    Raises
    ------
    TypeError
        Entries that are not integers.
    ValueError
        A wrong shape, an index out of range or a task on a node that is not a processor.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> from coalloc.taskmap.model import check_mapping
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> check_mapping(tasks, res, [1, -1, 2], partial=True).tolist()
    [1, -1, 2]
    """
    try:
        m = np.array(mapping)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"mapping must be an integer array: {exc}") from None
    if m.shape != (tasks.n,):
        raise ValueError(f"mapping must have shape ({tasks.n},), got {m.shape}")
    if m.size and not np.issubdtype(m.dtype, np.integer):
        if not np.issubdtype(m.dtype, np.floating) or np.any(m != np.round(m)):
            raise TypeError("mapping must hold integer node indices")
    m = m.astype(np.int64)
    mapped = m >= 0 if partial else np.ones(tasks.n, dtype=bool)
    if np.any(m[mapped] >= resources.n_nodes) or np.any(m < (-1 if partial else 0)):
        raise ValueError(f"mapping: node indices must be in [0, {resources.n_nodes})")
    if not np.all(resources.is_processor[m[mapped]]):
        bad = int(np.flatnonzero(~resources.is_processor[np.where(mapped, m, 0)] & mapped)[0])
        raise ValueError(f"mapping: task {bad} is on node {int(m[bad])}, which is not a processor")
    return m
