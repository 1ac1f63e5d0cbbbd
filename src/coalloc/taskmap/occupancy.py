"""The incremental occupancy state of a (partial) mapping: :class:`OccupancyState`.

The one mutable object of the task mapper, kept apart from the read-only models of
:mod:`coalloc.taskmap.model` (which re-exports it): it holds a mapping and the node and
link loads it puts on a :class:`~coalloc.taskmap.ResourceGraph`, and updates them as
single tasks are placed, removed or moved, in ``O(degree x route length)`` per move. It
reads the task and resource graphs and never writes to them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._shared.caches import cache_of
from . import _occupancy
from .model import (
    Bottleneck,
    ResourceGraph,
    TaskGraph,
    _max_of,
    check_mapping,
    load_graph,
)
from .routing import route_table

__all__ = ["OccupancyState", "pairs_of"]


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
