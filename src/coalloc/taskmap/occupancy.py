"""The occupancy of a mapping: the plain measures and :class:`OccupancyState`.

The load graph ``L(G, P, m)`` of a mapping ``m`` adds each task's weight to its processor
and each communicating pair's volume to every link on the route between their processors;
the occupancy graph is ``O = L / P`` (load over capacity, node- and link-wise) and the
objective is ``max(O)``, the inverse of the throughput. :func:`load_graph`,
:func:`occupancy_graph` and :func:`max_occupancy` compute them plainly from scratch;
:func:`comp_occupancy` and :func:`open_occupancy` are the two look-ahead measures of the
paper's elementary move (section 4.4).

:class:`OccupancyState` is the task mapper's one mutable object: it holds a mapping and the
node and link loads it puts on a :class:`~coalloc.taskmap.ResourceGraph`, and updates them
as single tasks are placed, removed or moved, in ``O(degree x route length)`` per move. It
reads the task and resource graphs of :mod:`coalloc.taskmap.model` and never writes to them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._shared.caches import cache_of
from . import _occupancy
from .model import ResourceGraph, TaskGraph, check_mapping
from .result import Bottleneck
from .routing import route_table

__all__ = [
    "load_graph",
    "occupancy_graph",
    "max_occupancy",
    "comp_occupancy",
    "open_occupancy",
    "OccupancyState",
    "Bottleneck",
    "pairs_of",
]


def load_graph(tasks: TaskGraph, resources: ResourceGraph, mapping: Any) -> tuple:
    """The load graph ``L(G, P, m)``: ``(node_load (R,), link_load (E,))``.

    Entries ``-1`` in ``mapping`` are unmapped tasks (they and their communication add no
    load).

    Parameters
    ----------
    tasks : TaskGraph
        The task graph ``G``.
    resources : ResourceGraph
        The resource graph ``P``.
    mapping : array_like of int, shape (n,)
        Processor node of each task; ``-1`` = unmapped.

    Returns
    -------
    node_load : ndarray of float64, shape (R,)
        Compute requirement placed on each node.
    link_load : ndarray of float64, shape (E,)
        Communication volume crossing each link (both directions).

    Raises
    ------
    ValueError, TypeError
        A mapping of the wrong shape, with non-integer entries, or onto a non-processor.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> node, link = tm.load_graph(tasks, res, [1, 1, 2])
    >>> node.tolist(), link.tolist()
    ([0.0, 3.0, 1.5], [1.0, 1.0])
    """
    m = check_mapping(tasks, resources, mapping, partial=True)
    mapped = m >= 0
    node = np.bincount(m[mapped], weights=tasks.node_weight[mapped], minlength=resources.n_nodes)
    s, t, vol = tasks.edges()
    link = _occupancy.link_loads(route_table(resources).kernel, m, s, t, vol)
    return node.astype(np.float64), link


def occupancy_graph(tasks: TaskGraph, resources: ResourceGraph, mapping: Any) -> tuple:
    """The occupancy graph ``O = L / P``: ``(node_occupancy (R,), link_occupancy (E,))``.

    Routers (capacity 0) never carry load and get occupancy 0.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph ``G``.
    resources : ResourceGraph
        The resource graph ``P``.
    mapping : array_like of int, shape (n,)
        Processor node of each task; ``-1`` = unmapped.

    Returns
    -------
    node_occupancy : ndarray of float64, shape (R,)
        Node load over node capacity.
    link_occupancy : ndarray of float64, shape (E,)
        Link load over link bandwidth.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping (as in :func:`load_graph`).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> node, link = tm.occupancy_graph(tasks, res, [1, 1, 2])
    >>> node.tolist(), link.tolist()
    ([0.0, 1.0, 0.3], [0.02, 0.02])
    """
    node, link = load_graph(tasks, resources, mapping)
    cap = resources.capacity
    node_occ = np.divide(node, cap, out=np.zeros_like(node), where=cap > 0)
    return node_occ, link / resources.bandwidth


def max_occupancy(tasks: TaskGraph, resources: ResourceGraph, mapping: Any) -> tuple:
    """``(max(O(G, P, m)), Bottleneck)`` of a mapping; node wins ties, then lower index.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph ``G``.
    resources : ResourceGraph
        The resource graph ``P``.
    mapping : array_like of int, shape (n,)
        Processor node of each task; ``-1`` = unmapped.

    Returns
    -------
    occupancy : float
        The maximum occupancy (the inverse of the pipeline's throughput).
    bottleneck : Bottleneck
        Where it is reached.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping (as in :func:`load_graph`).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.max_occupancy(tasks, res, [2, 2, 1])
    (0.6, Bottleneck(kind='node', index=2, occupancy=0.6))
    """
    node_occ, link_occ = occupancy_graph(tasks, resources, mapping)
    return _max_of(node_occ, link_occ)


def _max_of(node_occ: np.ndarray, link_occ: np.ndarray) -> tuple:
    i = int(np.argmax(node_occ))
    best = Bottleneck("node", i, float(node_occ[i]))
    if link_occ.shape[0]:
        j = int(np.argmax(link_occ))
        if link_occ[j] > best.occupancy:
            best = Bottleneck("link", j, float(link_occ[j]))
    return best.occupancy, best


def comp_occupancy(
    tasks: TaskGraph, resources: ResourceGraph, mapping: Any, remaining: Any
) -> float:
    """``O_comp(G, P, m, Q)``: unmapped compute requirement over the capacity of ``Q``.

    Infinite when ``Q`` is empty and some task is unmapped, 0 when every task is mapped.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph ``G``.
    resources : ResourceGraph
        The resource graph ``P``.
    mapping : array_like of int, shape (n,)
        Partial mapping (``-1`` = unmapped).
    remaining : array_like of int
        The processors ``Q`` still to be filled.

    Returns
    -------
    float
        The compute occupancy ``O_comp``.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping (as in :func:`load_graph`).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.comp_occupancy(tasks, res, [1, -1, -1], [2])    # (2.0 + 1.5) / 5
    0.7
    """
    m = check_mapping(tasks, resources, mapping, partial=True)
    rest = float(tasks.node_weight[m < 0].sum())
    cap = float(resources.capacity[np.asarray(remaining, dtype=np.int64)].sum())
    if rest == 0:
        return 0.0
    return rest / cap if cap > 0 else float("inf")


def open_occupancy(tasks: TaskGraph, resources: ResourceGraph, mapping: Any, q: int) -> float:
    """``O_open``: communication between tasks on ``q`` and unmapped tasks, over the
    bandwidth of the links adjacent to ``q``.

    This is the paper's ``O<->``; for a directed task graph it counts both directions
    (``O-> + O<-`` of the paper), because a link's capacity is shared by both directions.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph ``G``.
    resources : ResourceGraph
        The resource graph ``P``.
    mapping : array_like of int, shape (n,)
        Partial mapping (``-1`` = unmapped).
    q : int
        The processor being filled.

    Returns
    -------
    float
        The open-communication occupancy of ``q``.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping (as in :func:`load_graph`).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.open_occupancy(tasks, res, [1, -1, -1], 1)     # 4 / 50
    0.08
    """
    m = check_mapping(tasks, resources, mapping, partial=True)
    s, t, vol = tasks.edges()
    cross = ((m[s] == q) & (m[t] < 0)) | ((m[t] == q) & (m[s] < 0))
    total = float(vol[cross].sum())
    denom = float(resources.adjacent_bandwidth[q])
    if total == 0:
        return 0.0
    return total / denom if denom > 0 else float("inf")


def pairs_of(tasks: TaskGraph) -> _occupancy.Pairs:
    """The compiled view of a task graph's pair weights, built once per graph.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph.

    Returns
    -------
    coalloc.taskmap._occupancy.Pairs
        What the occupancy kernels take (kept beside the graph, never on it).
    """
    cache = cache_of(tasks)
    pairs = cache.get("occupancy_pairs")
    if pairs is None:
        indptr, indices, weights = tasks.undirected_csr()
        pairs = cache.setdefault(
            "occupancy_pairs", _occupancy.Pairs(indptr, indices, weights, tasks.node_weight)
        )
    return pairs


class OccupancyState:
    """Node and link loads of a (partial) mapping, updated as single tasks move.

    ``place(t, p)`` and ``remove(t)`` cost ``O(deg(t) x route length)``; the loads always
    equal :func:`load_graph` of :attr:`mapping` (up to floating-point rounding, see
    :meth:`refresh`).

    Parameters
    ----------
    tasks, resources : TaskGraph, ResourceGraph
        The graphs.
    mapping : array_like of int, optional
        Initial (partial, ``-1`` = unmapped) mapping; default all unmapped.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> state = tm.OccupancyState(tasks, res, [1, -1, 2])
    >>> state.node_load.tolist(), state.link_load.tolist()
    ([0.0, 1.0, 1.5], [0.0, 0.0])
    >>> sorted(state.place(1, 2).tolist())   # task 1 joins task 2 on node 2
    [0, 1]
    >>> state.node_load.tolist(), state.link_load.tolist()
    ([0.0, 1.0, 3.5], [4.0, 4.0])
    """

    def __init__(self, tasks: TaskGraph, resources: ResourceGraph, mapping: Any = None):
        self.tasks = tasks
        self.resources = resources
        self.indptr, self.indices, self.weights = tasks.undirected_csr()
        self._pairs = pairs_of(tasks)
        self._routes = route_table(resources).kernel
        self._inv_cap = np.zeros(resources.n_nodes)
        np.divide(1.0, resources.capacity, out=self._inv_cap, where=resources.is_processor)
        self._inv_bw = 1.0 / resources.bandwidth
        self.mapping = np.full(tasks.n, -1, dtype=np.int64)
        self.node_load = np.zeros(resources.n_nodes)
        self.link_load = np.zeros(resources.n_links)
        if mapping is not None:
            self.mapping = check_mapping(tasks, resources, mapping, partial=True)
            self.refresh()

    def copy(self) -> OccupancyState:
        """An independent state: moves on the copy leave this one unchanged.

        Returns
        -------
        OccupancyState
            Same mapping and loads, in arrays of its own.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> state = tm.OccupancyState(tasks, res, [1, 1, 2])
        >>> other = state.copy()
        >>> other.move(0, 2)
        >>> state.mapping.tolist(), other.mapping.tolist()
        ([1, 1, 2], [2, 1, 2])
        """
        other = OccupancyState.__new__(OccupancyState)
        other.__dict__.update(self.__dict__)
        other.mapping = self.mapping.copy()
        other.node_load = self.node_load.copy()
        other.link_load = self.link_load.copy()
        return other

    def refresh(self) -> None:
        """Recompute the loads from scratch (removes accumulated rounding).

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> state = tm.OccupancyState(tasks, res, [1, 1, 2])
        >>> for _ in range(3):
        ...     state.move(1, 2)
        ...     state.move(1, 1)
        >>> state.refresh()
        >>> state.node_load.tolist(), state.link_load.tolist()
        ([0.0, 3.0, 1.5], [1.0, 1.0])
        """
        self.node_load, self.link_load = load_graph(self.tasks, self.resources, self.mapping)

    def place(self, t: int, p: int) -> np.ndarray:
        """Map the unmapped task ``t`` on processor ``p``; returns the link ids touched.

        Parameters
        ----------
        t : int
            An unmapped task (mapping ``-1``).
        p : int
            The node index of a processor.

        Returns
        -------
        ndarray of int64
            The links whose load changed (with repeats when several pairs use one).

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> state = tm.OccupancyState(tasks, res, [1, -1, 2])
        >>> sorted(state.place(1, 1).tolist()), state.link_load.tolist()
        ([0, 1], [1.0, 1.0])
        """
        return _occupancy.place(
            self._pairs, self._routes, self.mapping, self.node_load, self.link_load, t, p
        )

    def remove(self, t: int) -> np.ndarray:
        """Unmap task ``t``; returns the link ids touched.

        Parameters
        ----------
        t : int
            A mapped task.

        Returns
        -------
        ndarray of int64
            The links whose load changed.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> state = tm.OccupancyState(tasks, res, [1, 2, 2])
        >>> sorted(state.remove(0).tolist()), state.mapping.tolist(), state.link_load.tolist()
        ([0, 1], [-1, 2, 2], [0.0, 0.0])
        """
        return _occupancy.remove(
            self._pairs, self._routes, self.mapping, self.node_load, self.link_load, t
        )

    def move(self, t: int, p: int) -> None:
        """Move task ``t`` (mapped or not) to processor ``p``.

        Parameters
        ----------
        t : int
            A task.
        p : int
            The node index of a processor.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> state = tm.OccupancyState(tasks, res, [1, 1, 2])
        >>> state.move(2, 1)
        >>> state.mapping.tolist(), state.node_load.tolist(), state.link_load.tolist()
        ([1, 1, 1], [0.0, 4.5, 0.0], [0.0, 0.0])
        """
        _occupancy.move(
            self._pairs, self._routes, self.mapping, self.node_load, self.link_load, t, p
        )

    # -- occupancies ------------------------------------------------------------------
    def node_occupancy(self) -> np.ndarray:
        """Load / capacity of every node (0 on routers).

        Returns
        -------
        ndarray of float64, shape (R,)
            The compute occupancy of each node.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> tm.OccupancyState(tasks, res, [1, 1, 2]).node_occupancy().tolist()
        [0.0, 1.0, 0.3]
        """
        return self.node_load * self._inv_cap

    def link_occupancy(self) -> np.ndarray:
        """Load / bandwidth of every link.

        Returns
        -------
        ndarray of float64, shape (E,)
            The communication occupancy of each link.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> tm.OccupancyState(tasks, res, [1, 1, 2]).link_occupancy().tolist()
        [0.02, 0.02]
        """
        return self.link_load * self._inv_bw

    def max_occupancy(self) -> float:
        """The largest node or link occupancy (the inverse of the throughput).

        Returns
        -------
        float
            The occupancy of :meth:`bottleneck`.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> tm.OccupancyState(tasks, res, [1, 1, 2]).max_occupancy()
        1.0
        """
        return self.bottleneck().occupancy

    def bottleneck(self) -> Bottleneck:
        """The node or link with the largest occupancy.

        Returns
        -------
        Bottleneck
            Its kind (``"node"`` or ``"link"``), index and occupancy.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> b = tm.OccupancyState(tasks, res, [1, 1, 2]).bottleneck()
        >>> b.kind, b.index, b.occupancy
        ('node', 1, 1.0)
        """
        return _max_of(self.node_occupancy(), self.link_occupancy())[1]
