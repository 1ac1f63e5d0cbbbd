"""Validated model objects: the request graph and the offer graph of Kravtsov et al., section 3.2.

A :class:`Request` holds ``n`` tasks, each with minimum values of named quantitative
properties (the paper's CPU ``c_i`` and memory ``m_i`` are two) and an ``n x n`` matrix
``B`` of required bandwidth between tasks. An :class:`Offer` holds ``m`` clusters of
identical machines: per-machine property values, a machine count (capacity) per cluster,
and an ``m x m`` matrix ``B_hat`` of available bandwidth (the diagonal is the bandwidth
between two machines of the same cluster).

Both objects validate their input once, at construction, and keep read-only copies, so the
caller's arrays are never modified and the solvers can trust what they get.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Optional

import numpy as np
import scipy.sparse as sp

from .._shared.caches import cache_of
from .._shared.docs import filled
from .._shared.validation import check_nonnegative, nonnegative_vector, square_sparse

__all__ = ["Request", "Offer", "check_compatible", "KernelLinks", "RankedLinks"]


def _as_property_vectors(properties: Any, argname: str, length: Optional[int]) -> dict:
    """Validate a mapping of property name -> 1-D non-negative finite vector."""
    if properties is None:
        properties = {}
    if not isinstance(properties, Mapping):
        raise TypeError(
            f"{argname} must be a mapping of property name to a 1-D array, "
            f"got {type(properties).__name__}"
        )
    out = {}
    for name, values in properties.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"{argname}: property names must be non-empty strings, got {name!r}")
        arr = nonnegative_vector(values, f"{argname}[{name!r}]", length=length)
        arr.setflags(write=False)
        out[name] = arr
    return out


def _check_names(names: Any, length: int, argname: str) -> Optional[tuple]:
    """Validate optional names: ``length`` distinct strings or integers; a tuple or None."""
    if names is None:
        return None
    if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
        raise TypeError(f"{argname} must be a sequence of names, got {type(names).__name__}")
    out = []
    for i, name in enumerate(names):
        if isinstance(name, (bool, np.bool_)) or not isinstance(name, (str, int, np.integer)):
            raise TypeError(
                f"{argname}[{i}] must be a string or an integer, got {type(name).__name__}"
            )
        name = int(name) if isinstance(name, np.integer) else name
        if isinstance(name, int) and not -(2**63) <= name < 2**63:
            raise ValueError(f"{argname}[{i}] = {name} is not a 64-bit integer")
        out.append(name)
    if len(out) != length:
        raise ValueError(f"{argname} has {len(out)} names but there are {length} of them")
    if len(set(out)) != len(out):
        seen: set = set()
        dup = next(x for x in out if x in seen or seen.add(x))
        raise ValueError(f"{argname}: the name {dup!r} appears twice")
    return tuple(out)


def _graph_names(nodes: list) -> Optional[list]:
    """networkx node labels as names: None for the default 0..n-1, other labels as they are
    (strings and integers) or as ``str(label)``."""
    if nodes == list(range(len(nodes))):
        return None
    return [u if isinstance(u, (str, int)) and not isinstance(u, bool) else str(u) for u in nodes]


#: Largest machine count of one cluster or of the whole offer (exact in float64 and int64).
MAX_CAPACITY = 2**53


def _common_length(props: dict, argname: str) -> Optional[int]:
    lengths = {name: arr.shape[0] for name, arr in props.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{argname}: all properties must have the same length, got {lengths}")
    return next(iter(lengths.values())) if lengths else None


def _request_bandwidth(bandwidth: Any, n: Optional[int]) -> sp.csr_array:
    """Validate the request bandwidth and return it as a canonical CSR array."""
    if bandwidth is None:
        if n is None:
            raise ValueError(
                "Request needs at least one property or a bandwidth matrix to know how many "
                "tasks it has"
            )
        mat = sp.csr_array((n, n), dtype=np.float64)
    else:
        mat = square_sparse(bandwidth, "bandwidth", n=n)
    if np.any(mat.diagonal() != 0):
        raise ValueError("bandwidth must have a zero diagonal: a task needs no bandwidth to itself")
    mat.eliminate_zeros()
    mat.sort_indices()
    mat.indptr = mat.indptr.astype(np.int64, copy=False)
    mat.indices = mat.indices.astype(np.int64, copy=False)
    _freeze_csr(mat)
    return mat


class _FrozenCSR(sp.csr_array):
    """A ``csr_array`` whose arrays can be neither written nor rebound once locked.

    The kernels trust a model's CSR (sorted int64 indices in range): a model's bandwidth
    is locked so that no later assignment (``B.indices = ...``, ``B.data[0] = ...``) can
    reach them. Results of operations on it are ordinary, unlocked arrays.
    """

    _locked = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self._locked and name in ("data", "indices", "indptr", "_shape"):
            raise AttributeError(
                f"the bandwidth of a model is read-only: cannot set {name!r} "
                "(build a new Request instead)"
            )
        super().__setattr__(name, value)


def _freeze_csr(mat: sp.csr_array) -> None:
    """Lock a canonical CSR: read-only arrays that cannot be rebound (kernels trust them)."""
    mat.has_sorted_indices = True
    mat.has_canonical_format = True
    for arr in (mat.data, mat.indices, mat.indptr):
        arr.setflags(write=False)
    mat.__class__ = _FrozenCSR
    object.__setattr__(mat, "_locked", True)


def _array_items(state: dict):
    """(path, ndarray) for every array an object's state holds: attributes, dict values and
    the data/indices/indptr of sparse matrices."""
    for key, value in state.items():
        if isinstance(value, np.ndarray):
            yield (key,), value
        elif isinstance(value, dict):
            for name, arr in value.items():
                if isinstance(arr, np.ndarray):
                    yield (key, name), arr
        elif sp.issparse(value):
            for part in ("data", "indices", "indptr"):
                arr = getattr(value, part, None)
                if isinstance(arr, np.ndarray):
                    yield (key, part), arr


class _ReadOnlyPickle:
    """Immutable after construction: attributes cannot be rebound, every array is
    read-only, and pickling keeps them so (pickle itself restores arrays writable)."""

    _frozen = False

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen:
            raise AttributeError(
                f"{type(self).__name__} is immutable after construction: build a new one "
                f"instead of setting {name!r}"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable after construction")

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_readonly"] = [p for p, a in _array_items(self.__dict__) if not a.flags.writeable]
        return state

    def __setstate__(self, state: dict) -> None:
        state = dict(state)
        readonly = state.pop("_readonly", [])
        self.__dict__.update(state)
        arrays = dict(_array_items(self.__dict__))
        for path in readonly:
            if path in arrays:
                arrays[path].setflags(write=False)
        for value in self.__dict__.values():
            if sp.issparse(value):
                _freeze_csr(value)


class Request(_ReadOnlyPickle):
    """A request graph: ``n`` tasks with minimum properties and pairwise bandwidth needs.

    Parameters
    ----------
    properties : mapping of str to array_like, optional
        Minimum value of each named quantitative property per task, e.g.
        ``{"cpu": c, "mem": m}``; every vector has length ``n``, finite and non-negative.
        A task fits a cluster when every property is ``<=`` the cluster's value.
    bandwidth : array_like or scipy.sparse matrix, optional
        ``n x n`` matrix ``B``; ``B[i, k] > 0`` is the bandwidth task ``i`` needs to task
        ``k``. Dense or sparse; omitted means no links. The diagonal must be zero. An
        asymmetric matrix is allowed: constraint (4) is then checked in both directions.
    names : sequence of str or int, optional
        A distinct name per task (kept by the JSON format and networkx; printed by the
        command line). Default None: tasks are known by their numbers.

    Attributes
    ----------
    n : int
        Number of tasks.
    properties : dict of str to ndarray
        Read-only float64 copies of the property vectors.
    bandwidth : scipy.sparse.csr_array
        Canonical CSR copy (sorted indices, no explicit zeros, int64 indices).
    symmetric : bool
        Whether ``B`` equals its transpose.
    names : tuple or None
        The task names.

    Raises
    ------
    TypeError, ValueError
        On malformed input; the message names the argument.

    Examples
    --------
    Three tasks needing CPU 10, 20 and 30; task 1 talks to both others:

    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> request
    Request(n=3, properties=['cpu'], edges=4, symmetric=True)
    >>> request.properties["cpu"].tolist()
    [10.0, 20.0, 30.0]
    """

    names: Optional[tuple] = None  # objects pickled before names existed have none

    def __init__(
        self,
        properties: Optional[Mapping[str, Any]] = None,
        bandwidth: Any = None,
        *,
        names: Optional[Any] = None,
    ):
        props = _as_property_vectors(properties, "properties", None)
        n = _common_length(props, "properties")
        self.bandwidth = _request_bandwidth(bandwidth, n)
        self.n = int(self.bandwidth.shape[0])
        self.names = _check_names(names, self.n, "names")
        self.properties = props
        diff = self.bandwidth - self.bandwidth.T
        self.symmetric = bool(diff.nnz == 0 or np.all(diff.data == 0))
        self._frozen = True

    @property
    def bandwidth_transpose(self) -> sp.csr_array:
        """CSR of ``B.T`` (the in-edges of every task), computed once (kept beside the request
        by :func:`coalloc._shared.caches.cache_of`: the request itself stays read-only)."""
        cache = cache_of(self)
        transpose = cache.get("transpose")
        if transpose is None and self.symmetric:  # B itself (no transpose built and dropped)
            transpose = cache["transpose"] = self.bandwidth
        elif transpose is None:
            t = sp.csr_array(self.bandwidth.T)
            t.sort_indices()
            t.indptr = t.indptr.astype(np.int64, copy=False)
            t.indices = t.indices.astype(np.int64, copy=False)
            _freeze_csr(t)
            transpose = cache["transpose"] = t
        return transpose

    @property
    def n_edges(self) -> int:
        """Number of stored (non-zero) entries of ``B``."""
        return int(self.bandwidth.nnz)

    @classmethod
    def from_networkx(
        cls,
        graph: Any,
        *,
        properties: Optional[list] = None,
        bandwidth: str = "bandwidth",
    ) -> Request:
        """Build a request from a networkx graph.

        Nodes are tasks, in ``graph.nodes`` order; their labels become the task ``names``
        (unless they are just ``0 .. n-1``; labels other than strings and integers are kept
        as ``str(label)``). Node attributes give the properties; the edge attribute
        ``bandwidth`` gives ``B`` (an undirected graph gives a symmetric matrix, a directed
        one ``B[u, v]`` for each arc).

        Parameters
        ----------
        graph : networkx.Graph or networkx.DiGraph
            The request graph.
        properties : list of str, optional
            Node attributes to read; default: every attribute present on all nodes.
        bandwidth : str, default "bandwidth"
            Edge attribute holding the bandwidth (edges without it get weight 1).

        Returns
        -------
        Request
            Tasks in the graph's node order, named by the nodes.

        Examples
        --------
        >>> import networkx as nx
        >>> from coalloc.ctaap import Request
        >>> g = nx.Graph()
        >>> g.add_node("db", cpu=4.0)
        >>> g.add_node("web", cpu=2.0)
        >>> g.add_edge("db", "web", bandwidth=10.0)
        >>> r = Request.from_networkx(g)
        >>> r.n, list(r.names), r.bandwidth.toarray().tolist()
        (2, ['db', 'web'], [[0.0, 10.0], [10.0, 0.0]])
        """
        props, mat = _graph_to_arrays(graph, properties, bandwidth, exclude=())
        return cls(properties=props, bandwidth=mat, names=_graph_names(list(graph.nodes)))

    def to_networkx(self) -> Any:
        """Return the request as a networkx graph (DiGraph when asymmetric); nodes are the
        task names when there are names, else the task numbers.

        Returns
        -------
        networkx.Graph or networkx.DiGraph
            One node per task with its properties as attributes, one edge per link with its
            ``bandwidth``.

        Examples
        --------
        >>> from coalloc.ctaap import Request
        >>> r = Request({"cpu": [1.0, 2.0]}, [[0, 5], [5, 0]], names=["a", "b"])
        >>> g = r.to_networkx()
        >>> g.nodes["b"]["cpu"], g.edges["a", "b"]["bandwidth"]
        (2.0, 5.0)
        >>> Request.from_networkx(g).bandwidth.toarray().tolist()
        [[0.0, 5.0], [5.0, 0.0]]
        """
        import networkx as nx

        g = nx.Graph() if self.symmetric else nx.DiGraph()
        label = self.names if self.names is not None else range(self.n)
        for i in range(self.n):
            g.add_node(label[i], **{k: float(v[i]) for k, v in self.properties.items()})
        coo = self.bandwidth.tocoo()
        for i, k, b in zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()):
            g.add_edge(label[i], label[k], bandwidth=b)
        return g

    def __repr__(self) -> str:
        return (
            f"Request(n={self.n}, properties={sorted(self.properties)}, "
            f"edges={self.n_edges}, symmetric={self.symmetric})"
        )


class Offer(_ReadOnlyPickle):
    """An offer graph: ``m`` clusters of identical machines.

    Parameters
    ----------
    properties : mapping of str to array_like
        Per-machine value of each named property per cluster (length ``m``), finite and
        non-negative. Names must match the request's.
    capacity : array_like of int
        Number of available machines per cluster (non-negative integers).
    bandwidth : array_like or scipy.sparse matrix, optional
        ``m x m`` matrix ``B_hat`` of available bandwidth between a machine of cluster
        ``j`` and one of cluster ``l``; the diagonal is the intra-cluster bandwidth.
        Omitted means no links at all (then tasks that communicate cannot both be placed).
    names : sequence of str or int, optional
        A distinct name per cluster (kept by the JSON format and networkx). Default None.

    Attributes
    ----------
    m : int
        Number of clusters.
    properties : dict of str to ndarray
        Read-only float64 copies.
    capacity : ndarray of int64
        Read-only copy.
    bandwidth : ndarray of float64, shape (m, m)
        Read-only dense copy of ``B_hat``.
    names : tuple or None
        The cluster names.

    Raises
    ------
    TypeError, ValueError
        On malformed input; the message names the argument.

    Examples
    --------
    Two clusters: one machine of CPU 25, two of CPU 40; the diagonal is intra-cluster:

    >>> import coalloc.ctaap as ct
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> offer
    Offer(m=2, properties=['cpu'], machines=3)
    >>> offer.capacity.tolist(), offer.bandwidth.tolist()
    ([1, 2], [[4.0, 3.0], [3.0, 6.0]])
    """

    names: Optional[tuple] = None  # objects pickled before names existed have none

    def __init__(
        self,
        properties: Optional[Mapping[str, Any]] = None,
        capacity: Any = None,
        bandwidth: Any = None,
        *,
        names: Optional[Any] = None,
    ):
        if capacity is None:
            raise TypeError("capacity is required: the number of machines in each cluster")
        props = _as_property_vectors(properties, "properties", None)
        try:
            cap = np.array(capacity)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"capacity must be an array of integers: {exc}") from None
        if cap.ndim != 1:
            raise ValueError(f"capacity must be 1-D, got shape {cap.shape}")
        if cap.dtype == bool or not (
            np.issubdtype(cap.dtype, np.integer) or np.issubdtype(cap.dtype, np.floating)
        ):
            if cap.size:
                raise TypeError(f"capacity must hold integers, got dtype {cap.dtype}")
        capf = cap.astype(np.float64) if cap.size else np.zeros(0)
        if not np.all(np.isfinite(capf)) or np.any(capf != np.round(capf)):
            raise ValueError("capacity must hold whole numbers of machines")
        if np.any(capf < 0):
            raise ValueError("capacity must be non-negative")
        if np.any(capf > MAX_CAPACITY) or capf.sum() > MAX_CAPACITY:
            raise ValueError(
                f"capacity must be at most {MAX_CAPACITY} (2**53) machines per cluster and in "
                "total: larger counts cannot be represented exactly"
            )
        m = cap.shape[0]
        n_props = _common_length(props, "properties")
        if n_props is not None and n_props != m:
            raise ValueError(
                f"properties have length {n_props} but capacity has length {m}; both count clusters"
            )
        self.m = int(m)
        self.names = _check_names(names, self.m, "names")
        self.properties = props
        self.capacity = capf.astype(np.int64)
        self.capacity.setflags(write=False)
        if bandwidth is None:
            bhat = np.zeros((m, m))
        else:
            if sp.issparse(bandwidth):
                bandwidth = bandwidth.toarray()
            try:
                bhat = np.array(bandwidth, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"bandwidth must be numeric: {exc}") from None
            if bhat.shape != (m, m):
                raise ValueError(
                    f"bandwidth has shape {bhat.shape}, expected ({m}, {m}) for {m} clusters"
                )
            check_nonnegative(bhat, "bandwidth")
        bhat = np.ascontiguousarray(bhat)
        bhat.setflags(write=False)
        self.bandwidth = bhat
        self._frozen = True

    @property
    def total_capacity(self) -> int:
        """Total number of machines offered."""
        return int(self.capacity.sum())

    @classmethod
    def from_networkx(
        cls,
        graph: Any,
        *,
        properties: Optional[list] = None,
        capacity: str = "capacity",
        bandwidth: str = "bandwidth",
    ) -> Offer:
        """Build an offer from a networkx graph.

        Nodes are clusters, in ``graph.nodes`` order (their labels become the cluster
        ``names``, as for :meth:`Request.from_networkx`); the node attribute ``capacity`` is the
        machine count and the other node attributes are properties; the edge attribute
        ``bandwidth`` gives ``B_hat`` and a self-loop the intra-cluster bandwidth.

        Parameters
        ----------
        graph : networkx.Graph or networkx.DiGraph
            The offer graph.
        properties : list of str, optional
            Node attributes to read as properties; default: every attribute present on all
            nodes except ``capacity``.
        capacity : str, default "capacity"
            Node attribute with the machine count.
        bandwidth : str, default "bandwidth"
            Edge attribute with the bandwidth.

        Returns
        -------
        Offer
            Clusters in the graph's node order, named by the nodes.

        Raises
        ------
        ValueError
            A node without the ``capacity`` attribute.

        Examples
        --------
        >>> import networkx as nx
        >>> from coalloc.ctaap import Offer
        >>> g = nx.Graph()
        >>> g.add_node("east", cpu=8.0, capacity=2)
        >>> g.add_node("west", cpu=4.0, capacity=3)
        >>> g.add_edge("east", "east", bandwidth=100.0)
        >>> g.add_edge("east", "west", bandwidth=10.0)
        >>> o = Offer.from_networkx(g)
        >>> o.capacity.tolist(), o.bandwidth.tolist()
        ([2, 3], [[100.0, 10.0], [10.0, 0.0]])
        """
        nodes = list(graph.nodes)
        missing = [u for u in nodes if capacity not in graph.nodes[u]]
        if missing:
            raise ValueError(f"graph: node {missing[0]!r} has no {capacity!r} attribute")
        cap = [graph.nodes[u][capacity] for u in nodes]
        props, mat = _graph_to_arrays(graph, properties, bandwidth, exclude=(capacity,))
        return cls(properties=props, capacity=cap, bandwidth=mat.toarray(),
                   names=_graph_names(nodes))  # fmt: skip

    def to_networkx(self) -> Any:
        """Return the offer as a networkx graph (self-loops for intra-cluster bandwidth).

        Returns
        -------
        networkx.Graph or networkx.DiGraph
            One node per cluster with ``capacity`` and its properties, one edge per pair of
            clusters with bandwidth (a self-loop: inside the cluster).

        Examples
        --------
        >>> from coalloc.ctaap import Offer
        >>> o = Offer({"cpu": [8.0, 4.0]}, capacity=[2, 3], bandwidth=[[100, 10], [10, 50]])
        >>> g = o.to_networkx()
        >>> g.nodes[1]["capacity"], g.edges[0, 0]["bandwidth"], g.edges[0, 1]["bandwidth"]
        (3, 100.0, 10.0)
        """
        import networkx as nx

        symmetric = np.array_equal(self.bandwidth, self.bandwidth.T)
        g = nx.Graph() if symmetric else nx.DiGraph()
        label = self.names if self.names is not None else range(self.m)
        for j in range(self.m):
            attrs = {k: float(v[j]) for k, v in self.properties.items()}
            g.add_node(label[j], capacity=int(self.capacity[j]), **attrs)
        for j, l in zip(*np.nonzero(self.bandwidth)):
            g.add_edge(label[int(j)], label[int(l)], bandwidth=float(self.bandwidth[j, l]))
        return g

    def __repr__(self) -> str:
        return (
            f"Offer(m={self.m}, properties={sorted(self.properties)}, "
            f"machines={self.total_capacity})"
        )


def _graph_to_arrays(graph: Any, properties: Optional[list], bandwidth: str, exclude: tuple):
    """Node-attribute vectors and an edge-attribute CSR matrix from a networkx graph."""
    try:
        nodes = list(graph.nodes)
        edges = graph.edges(data=True)
    except AttributeError:
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}") from None
    index = {u: i for i, u in enumerate(nodes)}
    if properties is None:
        common = None
        for u in nodes:
            keys = set(graph.nodes[u]) - set(exclude)
            common = keys if common is None else common & keys
        properties = sorted(common or ())
    props = {}
    for name in properties:
        missing = [u for u in nodes if name not in graph.nodes[u]]
        if missing:
            raise ValueError(f"graph: node {missing[0]!r} has no {name!r} attribute")
        props[name] = [graph.nodes[u][name] for u in nodes]
    rows, cols, vals = [], [], []
    directed = graph.is_directed()
    for u, v, data in edges:
        b = data.get(bandwidth, 1.0)
        rows.append(index[u])
        cols.append(index[v])
        vals.append(b)
        if not directed and u != v:
            rows.append(index[v])
            cols.append(index[u])
            vals.append(b)
    n = len(nodes)
    try:
        vals_arr = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"graph: edge attribute {bandwidth!r} must be numeric") from None
    mat = sp.csr_array(
        (vals_arr, (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64))),
        shape=(n, n),
    )
    return props, mat


class KernelLinks(NamedTuple):
    """A request's links as the kernels take them: one record, not six arrays.

    The CSR of the bandwidth ``B`` (``indptr``, ``indices``, ``data``) and of ``B.T``
    (``t_indptr``, ``t_indices``, ``t_data``; a symmetric request's are ``B``'s own arrays,
    which the kernels recognise). Read-only views of the request's arrays: no copy.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [1, 1]}, bandwidth=[[0, 5], [0, 0]])
    >>> links = KernelLinks.of(request)
    >>> links.indptr.tolist(), links.t_indptr.tolist()
    ([0, 1, 1], [0, 0, 1])
    """

    indptr: np.ndarray  # (n + 1,) int64
    indices: np.ndarray  # (nnz,) int64
    data: np.ndarray  # (nnz,) float64
    t_indptr: np.ndarray  # (n + 1,) int64, of B.T
    t_indices: np.ndarray  # (nnz,) int64
    t_data: np.ndarray  # (nnz,) float64

    @classmethod
    def of(cls, request: Request) -> KernelLinks:
        """The links of ``request``, built once and kept beside it (as its transpose:
        :func:`coalloc._shared.caches.cache_of`), so a solve's kernels share one record."""
        cache = cache_of(request)
        links = cache.get("kernel_links")
        if links is None:
            B, BT = request.bandwidth, request.bandwidth_transpose
            links = cache["kernel_links"] = cls(B.indptr, B.indices, B.data, BT.indptr,
                                                BT.indices, BT.data)  # fmt: skip
        return links


class RankedLinks(NamedTuple):
    """A request's links as step 1 (the graduated assignment) takes them: the CSR structure
    of ``B`` and of ``B.T`` with each link's ranks among the offer's bandwidths
    (:func:`coalloc.ctaap._softassign.edge_ranks`: ``rank``, ``order``), not the bandwidths
    themselves. One record, not eight arrays; ``t_*`` are ignored by a symmetric plan."""

    indptr: np.ndarray  # (n + 1,) int64, of B
    indices: np.ndarray  # (nnz,) int64
    rank: np.ndarray  # (nnz, m) int32
    order: np.ndarray  # (m, m) int32
    t_indptr: np.ndarray  # (n + 1,) int64, of B.T
    t_indices: np.ndarray  # (nnz,) int64
    t_rank: np.ndarray  # (nnz, m) int32
    t_order: np.ndarray  # (m, m) int32


@filled
def check_compatible(request: Request, offer: Offer) -> None:
    """Raise if ``request`` and ``offer`` cannot be solved together.

    Parameters
    ----------
    %(ctaap_graphs)s

    Raises
    ------
    TypeError
        If either is not the right model type.
    ValueError
        If the property names differ.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> ct.check_compatible(request, offer)          # fine: nothing happens
    >>> other = ct.Offer({"mem": [4]}, capacity=[1], bandwidth=[[1]])
    >>> ct.check_compatible(request, other)
    Traceback (most recent call last):
    ...
    ValueError: offer: property names must match the request's: ... offer has ['mem']
    """
    if not isinstance(request, Request):
        raise TypeError(f"request must be a coalloc.Request, got {type(request).__name__}")
    if not isinstance(offer, Offer):
        raise TypeError(f"offer must be a coalloc.Offer, got {type(offer).__name__}")
    if set(request.properties) != set(offer.properties):
        raise ValueError(
            "offer: property names must match the request's: request has "
            f"{sorted(request.properties)}, offer has {sorted(offer.properties)}"
        )


def compatibility(request: Request, offer: Offer) -> np.ndarray:
    """Boolean ``(n, m)`` matrix: task ``i`` fits a machine of cluster ``j`` (constraint (3)).

    Clusters with no machines are marked incompatible.

    Parameters
    ----------
    request : Request
        The request graph.
    offer : Offer
        The offer graph (same property names).

    Returns
    -------
    ndarray of bool, shape (n, m)
        ``True`` where every property of task ``i`` is at most the machine's of cluster ``j``.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> ct.compatibility(request, offer).tolist()   # task 2 (CPU 30) fits cluster 1 only
    [[True, True], [True, True], [False, True]]
    """
    ok = np.ones((request.n, offer.m), dtype=bool)
    for name, need in request.properties.items():
        ok &= need[:, None] <= offer.properties[name][None, :]
    ok &= (offer.capacity > 0)[None, :]
    return ok
