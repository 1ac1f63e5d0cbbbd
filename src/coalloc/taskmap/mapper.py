"""The mapping heuristic of Taura & Chien, section 4 (Figs. 5, 7 and 10).

``map_tasks`` (the paper's top-level ``taskmap()``): order the tasks depth-first along the
cluster tree of the flow-injection clustering (section 4.3), fill processors one after
another with the elementary move ``map_tasks_on`` (section 4.4), then repeat ``improve``
(section 4.5: ``remove_bottlenecks`` + ``map_tasks`` on the partial mapping) while the
maximum occupancy strictly decreases.

The elementary move puts the next unmapped tasks (in cluster order) on processor ``q`` one at
a time, giving mappings ``m_1, m_2, ...``, and keeps the ``m_i`` that minimises

    M_i = max(O(m_i), O_comp(m_i, Q), O_open(m_i, q))

(ties: largest ``i``), where ``O`` is the current maximum occupancy, ``O_comp`` the
remaining compute requirement over the capacity of the processors ``Q`` still to come
(infinite when ``Q`` is empty and tasks remain), and ``O_open`` the open communication --
between tasks on ``q`` and unmapped tasks -- over the bandwidth of the links adjacent to
``q`` (left out by the ``"base"`` variants). It stops early once ``O(m_i)`` exceeds the best
``M_j`` seen (``O`` never decreases, so no later ``m_k`` can win) or an optional bound ``u``.

Choices the paper leaves open are documented in ``coalloc docs taskmap`` (processor order,
acceptance of an improvement, which bottleneck is removed first, directed graphs).

This module validates and drives; the procedures themselves run in
:class:`coalloc.taskmap.engine.Engine`, and the measures ``O``, ``O_comp`` and ``O_open``
live in :mod:`coalloc.taskmap.occupancy` (re-exported here).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy.sparse import csgraph

from .._shared import interrupt
from .._shared.constraints import checked
from .._shared.params import check_method, offer_incumbent
from .._shared.seeding import kernel_seed, resolve_seed
from .engine import Engine
from .model import ResourceGraph, TaskGraph, check_graphs, check_mapping, link_adjacency
from .occupancy import OccupancyState, comp_occupancy, occupancy_graph, open_occupancy
from .occupancy import max_occupancy as _plain_max_occupancy
from .result import MappingResult, TaskMappingResult

__all__ = [
    "METHODS",
    "PROCESSOR_ORDERS",
    "MappingResult",
    "TaskMappingResult",
    "map_tasks",
    "map_tasks_on",
    "improve",
    "remove_bottlenecks",
    "processor_order",
    "comp_occupancy",
    "open_occupancy",
]

#: The four variants of section 5.2: ``(open metric, improvement phase)``.
METHODS = {
    "base": (False, False),
    "base+improve": (False, True),
    "open": (True, False),
    "open+improve": (True, True),
}
#: Orders in which ``map_tasks`` visits the processors (the paper: "a processor in Q").
PROCESSOR_ORDERS = ("capacity", "index", "locality", "random")
STREAMS = ("clustering", "processors")  # the seed's named streams (new ones go at the end)


# --------------------------------------------------------------------------------------
# Processor order
# --------------------------------------------------------------------------------------


@checked("coalloc.taskmap.constraints", "processor_order", tables="FUNCTIONS")
def processor_order(resources: ResourceGraph, kind: str = "capacity", *, seed: Any = 0):
    """The order in which :func:`map_tasks` visits the processors.

    Parameters
    ----------
    resources : ResourceGraph
    kind : {"capacity", "index", "locality", "random"}
        ``"capacity"``: decreasing compute capacity, ties by a depth-first walk of the
        resource graph from the largest processor (so equal processors of one LAN stay
        together); ``"index"``: node index order; ``"locality"``: the depth-first walk
        alone; ``"random"``: a seeded permutation.
    seed : int or numpy.random.Generator
        Used by ``"random"`` only.

    Returns
    -------
    ndarray of int64
        Every processor node index once, in visiting order.

    Raises
    ------
    ValueError
        An unknown ``kind``.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.processor_order(res).tolist(), tm.processor_order(res, "index").tolist()
    ([2, 1], [1, 2])
    """
    procs = resources.processors
    if kind == "index":
        return procs.copy()
    if kind == "random":
        return np.random.default_rng(seed).permutation(procs)
    start = int(procs[np.argmax(resources.capacity[procs])])
    r = resources.n_nodes
    adj = link_adjacency(r, resources.links)
    walk = csgraph.depth_first_order(adj, start, directed=False, return_predecessors=False)
    rank = np.full(r, r, dtype=np.int64)
    rank[walk] = np.arange(walk.shape[0])
    if kind == "locality":
        return procs[np.argsort(rank[procs], kind="stable")]
    return procs[np.lexsort((rank[procs], -resources.capacity[procs]))]


# --------------------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------------------


def _check_order(order: Any, n: int) -> np.ndarray:
    try:
        arr = np.array(order, dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"order must be a permutation of the tasks: {exc}") from None
    if arr.shape != (n,) or not np.array_equal(np.sort(arr), np.arange(n)):
        raise ValueError(f"order must be a permutation of range({n})")
    return arr


def _check_procs(resources: ResourceGraph, procs: Any, argname: str) -> np.ndarray:
    try:
        arr = np.array(procs, dtype=np.int64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{argname} must be processor indices: {exc}") from None
    if arr.size and (arr.min() < 0 or arr.max() >= resources.n_nodes):
        raise ValueError(f"{argname}: node indices must be in [0, {resources.n_nodes})")
    if not np.all(resources.is_processor[arr]):
        raise ValueError(f"{argname}: every entry must be a processor")
    if np.unique(arr).shape[0] != arr.shape[0]:
        raise ValueError(f"{argname}: duplicate processors")
    return arr


def _task_order(tasks: TaskGraph, order: Any, seed: Any, clustering: Optional[dict]):
    if order is None or (isinstance(order, str) and order == "cluster"):
        from .coarsen import cluster_order  # flow injection, coarsened above 512 tasks

        return _check_order(cluster_order(tasks, seed, clustering), tasks.n)
    if isinstance(order, str):
        if order == "index":
            return np.arange(tasks.n, dtype=np.int64)
        raise ValueError(f"order must be 'cluster', 'index' or a permutation, got {order!r}")
    return _check_order(order, tasks.n)


@checked("coalloc.taskmap.constraints", "base")  # the four variants share one table
def map_tasks(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    *,
    method: str = "open+improve",
    seed: Optional[int] = 0,
    initial: Any = None,
    order: Any = None,
    processor_order: Any = "capacity",
    acceleration: float = 0.75,
    bound_factor: Optional[float] = 0.9,
    max_rounds: int = 100,
    early_exit: bool = True,
    clustering: Optional[dict] = None,
) -> MappingResult:
    """Map tasks onto processors minimising the maximum occupancy (Taura & Chien, Fig. 5).

    Parameters
    ----------
    task_graph : TaskGraph
    resource_graph : ResourceGraph
    method : {"open+improve", "open", "base+improve", "base"}
        The variants of section 5.2: with or without the open-communication metric, with or
        without the improvement phase.
    seed : int or None
        Seeds the clustering (and a ``"random"`` processor order). Same seed, same mapping.
    initial : array_like of int, optional
        A partial mapping (``-1`` = unmapped) to complete instead of starting empty (the
        paper's ``map_tasks(m)``); its tasks may move during the improvement phase.
    order : {"cluster", "index"} or array_like of int, optional
        Task order. Default (``None`` = ``"cluster"``): depth-first order of the cluster tree
        of :func:`coalloc.taskmap.flow_injection` (section 4.3).
    processor_order : {"capacity", "index", "locality", "random"} or array_like of int
        Order in which processors are filled (see :func:`processor_order`); an array gives
        the order explicitly and must list every processor once.
    acceleration : float
        ``remove_bottlenecks`` unmaps tasks until the occupancy is below this fraction of the
        current maximum (the paper: 0.75).
    bound_factor : float or None
        ``improve`` passes ``u = bound_factor x current occupancy`` to ``map_tasks`` (the
        paper's optional bound, section 4.4); None: no bound.
    max_rounds : int
        At most this many calls of ``improve``.
    early_exit : bool
        Stop ``map_tasks_on`` once ``O(m_i)`` exceeds the best ``M_j`` (no effect on the
        result, only on the work).
    clustering : dict, optional
        Keyword arguments for :func:`flow_injection` (e.g. ``delta``).

    Returns
    -------
    MappingResult
        The mapping, its maximum occupancy and bottleneck, timings and counters.

    Raises
    ------
    ValueError, TypeError
        An unknown method or processor order, or an invalid ``initial``, ``order`` or
        parameter.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = tm.map_tasks(tasks, res, method="open+improve", seed=0)
    >>> result.mapping.tolist(), result.max_occupancy
    ([2, 2, 1], 0.6)
    >>> tm.map_tasks(tasks, res, method="base", seed=0).mapping.tolist()
    [2, 2, 1]
    """
    plan = _MapPlan(method=method, seed=seed, initial=initial, order=order,
                    processor_order=processor_order, acceleration=acceleration,
                    bound_factor=bound_factor, max_rounds=max_rounds, early_exit=early_exit,
                    clustering=clustering)  # fmt: skip
    return _map_tasks(task_graph, resource_graph, plan, offer=True)


@checked("coalloc.taskmap.constraints", "base")
def map_tasks_quietly(task_graph: TaskGraph, resource_graph: ResourceGraph,
                      on_mapping: Any = None, **params: Any) -> MappingResult:  # fmt: skip
    """:func:`map_tasks` offering nothing to the time limit in force: for a method that
    runs it as one of its own starts and keeps its own incumbent (the multilevel mapper):
    ``on_mapping(mapping, max_occupancy)``, when given, is called instead with each mapping
    :func:`map_tasks` would offer."""
    return _map_tasks(task_graph, resource_graph, _MapPlan(**params), offer=on_mapping or False)


@dataclass(frozen=True, kw_only=True)
class _MapPlan:
    """The options of one :func:`map_tasks` call, as given (checked by :func:`_map_tasks`);
    the defaults are :func:`map_tasks`'s."""

    method: str = "open+improve"
    seed: Any = 0
    initial: Any = None
    order: Any = None
    processor_order: Any = "capacity"
    acceleration: float = 0.75
    bound_factor: Optional[float] = 0.9
    max_rounds: int = 100
    early_exit: bool = True
    clustering: Optional[dict] = None


def _map_tasks(task_graph, resource_graph, plan: _MapPlan, *, offer) -> MappingResult:
    """:func:`map_tasks`; with ``offer``, every complete mapping better than the last is
    offered to the time limit in force (:func:`coalloc._shared.params.offer_incumbent`);
    the multilevel mapper, which runs it as one of its starts, passes False."""
    t0 = time.perf_counter()
    method, seed, order, clustering = plan.method, plan.seed, plan.order, plan.clustering
    processor_order, acceleration = plan.processor_order, plan.acceleration
    bound_factor, max_rounds = plan.bound_factor, plan.max_rounds
    check_graphs(task_graph, resource_graph)
    check_method(method, METHODS)
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    open_metric, do_improve = METHODS[method]
    seed_cluster, seed_proc = (kernel_seed(seed, s, names=STREAMS, bits=32) for s in STREAMS)
    if isinstance(processor_order, str):
        procs = _procs_by_kind(resource_graph, processor_order, seed_proc)
    else:
        procs = _check_procs(resource_graph, processor_order, "processor_order")
        if procs.shape[0] != resource_graph.n_processors:
            raise ValueError("processor_order must list every processor exactly once")
    state = OccupancyState(task_graph, resource_graph, plan.initial)

    t1 = time.perf_counter()
    task_order = _task_order(task_graph, order, seed_cluster, clustering)
    t2 = time.perf_counter()
    eng = Engine(
        task_graph, resource_graph, task_order, procs, open_metric=open_metric,
        early_exit=plan.early_exit,
    )  # fmt: skip
    eng.map_tasks(state)
    state.refresh()
    history = [state.max_occupancy()]
    t3 = time.perf_counter()
    rounds = accepted = 0
    params = {
        "processor_order": processor_order if isinstance(processor_order, str) else "given",
        "order": order if isinstance(order, str) or order is None else "given",
        "acceleration": float(acceleration),
        "bound_factor": None if bound_factor is None else float(bound_factor),
        "max_rounds": int(max_rounds),
        "early_exit": bool(plan.early_exit),
        "clustering": dict(clustering or {}),
        "open_metric": open_metric,
        "improve": do_improve,
    }
    seed = None if seed is None else int(seed)

    def build(mapping, timings, iterations, history) -> MappingResult:
        occ, bott = _plain_max_occupancy(task_graph, resource_graph, mapping)
        node_occ, link_occ = occupancy_graph(task_graph, resource_graph, mapping)
        timings["total"] = time.perf_counter() - t0
        return MappingResult(
            mapping=mapping, max_occupancy=float(occ), bottleneck=bott, method=method,
            seed=seed, timings=timings, iterations=iterations, params=dict(params),
            node_occupancy=node_occ, link_occupancy=link_occ, order=task_order,
            history=history, status="feasible",
        )  # fmt: skip

    def offered() -> None:  # the mapping now held, as the time limit's incumbent
        if callable(offer):  # the caller keeps the incumbent (the multilevel mapper)
            offer(state.mapping.copy(), history[-1])
        elif offer:
            args = (
                state.mapping.copy(),
                {"clustering": t2 - t1},
                {"improve_rounds": rounds, "improve_accepted": accepted},
                list(history),
            )
            offer_incumbent(lambda: build(*args))  # fmt: skip

    offered()
    if do_improve:
        while rounds < int(max_rounds):
            interrupt.check()  # a batch's timeout or cancellation
            rounds += 1
            if not eng.improve(state, float(acceleration), bound_factor):
                break
            accepted += 1
            history.append(state.max_occupancy())
            offered()
    t4 = time.perf_counter()
    timings = {"clustering": t2 - t1, "initial": t3 - t2, "improve": t4 - t3}
    iterations = {"improve_rounds": rounds, "improve_accepted": accepted, "moves": eng.moves}
    return build(state.mapping.copy(), timings, iterations, history)


def _procs_by_kind(resources: ResourceGraph, kind: str, seed: Any) -> np.ndarray:
    if kind not in PROCESSOR_ORDERS:
        raise ValueError(f"processor_order must be one of {PROCESSOR_ORDERS}, got {kind!r}")
    return processor_order(resources, kind, seed=seed)


def map_tasks_on(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    mapping: Any,
    q: int,
    remaining: Any,
    *,
    order: Any,
    open_metric: bool = True,
    u: Optional[float] = None,
    early_exit: bool = True,
) -> np.ndarray:
    """The elementary move of section 4.4 (Fig. 7): put some unmapped tasks on processor q.

    Parameters
    ----------
    task_graph, resource_graph : TaskGraph, ResourceGraph
    mapping : array_like of int, shape (n,)
        Partial mapping (``-1`` = unmapped); not modified.
    q : int
        Processor to fill.
    remaining : array_like of int
        The processors ``Q`` still to be filled after ``q`` (for ``O_comp``).
    order : array_like of int
        Task order (unmapped tasks are taken in this order).
    open_metric : bool
        Include the open-communication metric.
    u : float, optional
        Stop as soon as the occupancy exceeds ``u``.
    early_exit : bool
        Stop once the occupancy exceeds the best found (no effect on the result).

    Returns
    -------
    ndarray of int64
        The new partial mapping ``m_i`` minimising ``M_i`` (ties: the most tasks on ``q``).

    Raises
    ------
    ValueError, TypeError
        An invalid mapping, order or processor, or ``q`` among ``remaining``.

    Examples
    --------
    Fill processor 2 first, processor 1 remaining:

    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.map_tasks_on(tasks, res, [-1, -1, -1], 2, [1], order=[0, 1, 2]).tolist()
    [2, 2, -1]
    """
    check_graphs(task_graph, resource_graph)
    q_arr = _check_procs(resource_graph, [q], "q")
    rem = _check_procs(resource_graph, remaining, "remaining")
    if int(q_arr[0]) in set(rem.tolist()):
        raise ValueError("remaining must not contain q")
    state = OccupancyState(task_graph, resource_graph, mapping)
    eng = Engine(
        task_graph, resource_graph, _check_order(order, task_graph.n), rem,
        open_metric=open_metric, early_exit=early_exit,
    )  # fmt: skip
    cap_q = float(resource_graph.capacity[rem].sum())
    eng.map_tasks_on(state, int(q_arr[0]), cap_q, u)
    return state.mapping.copy()


def remove_bottlenecks(
    task_graph: TaskGraph, resource_graph: ResourceGraph, mapping: Any, *, acceleration=0.75
) -> np.ndarray:
    """Fig. 10, ``remove_bottlenecks``: unmap the tasks that make the occupancy high.

    While some link or node has occupancy above ``acceleration x max(O(m))``: take the link
    of highest occupancy if it is above, and unmap the most heavily communicating pair whose
    route uses it (both tasks); otherwise unmap the heaviest task of the most occupied node.

    Parameters
    ----------
    task_graph : TaskGraph
        The task graph.
    resource_graph : ResourceGraph
        The resource graph.
    mapping : array_like of int, shape (n,)
        A total mapping.
    acceleration : float
        The fraction of the current maximum occupancy to get below (the paper: 0.75).

    Returns
    -------
    ndarray of int64
        The partial mapping (``-1`` for removed tasks); the input is not modified.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.remove_bottlenecks(tasks, res, [2, 2, 2]).tolist()
    [2, -1, 2]
    """
    check_graphs(task_graph, resource_graph)
    state = OccupancyState(task_graph, resource_graph, mapping)
    eng = Engine(
        task_graph, resource_graph, np.arange(task_graph.n), resource_graph.processors,
        open_metric=False,
    )  # fmt: skip
    eng.remove_bottlenecks(state, float(acceleration))
    return state.mapping.copy()


def improve(
    task_graph: TaskGraph,
    resource_graph: ResourceGraph,
    mapping: Any,
    *,
    order: Any,
    open_metric: bool = True,
    processor_order: Any = "capacity",
    acceleration: float = 0.75,
    bound_factor: Optional[float] = 0.9,
    seed: Optional[int] = 0,
) -> np.ndarray:
    """One call of the paper's ``improve`` (Fig. 10): remove bottlenecks, map them again.

    Returns the new total mapping when it has a strictly lower maximum occupancy, else a copy
    of ``mapping``. ``processor_order`` and ``seed`` are as in :func:`map_tasks`.

    Parameters
    ----------
    task_graph : TaskGraph
        The task graph.
    resource_graph : ResourceGraph
        The resource graph.
    mapping : array_like of int, shape (n,)
        A total mapping; not modified.
    order : array_like of int
        Task order for mapping the removed tasks again.
    open_metric : bool
        Include the open-communication metric.
    processor_order : {"capacity", "index", "locality", "random"} or array_like of int
        Order in which processors are filled.
    acceleration : float
        As in :func:`remove_bottlenecks`.
    bound_factor : float or None
        Bound passed to the remapping, as a fraction of the current occupancy.
    seed : int or None
        Seeds a ``"random"`` processor order.

    Returns
    -------
    ndarray of int64
        The improved total mapping, or a copy of ``mapping``.

    Raises
    ------
    ValueError, TypeError
        An invalid mapping, order or processor order.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> tm.max_occupancy(tasks, res, [2, 2, 2])[0]
    0.9
    >>> better = tm.improve(tasks, res, [2, 2, 2], order=[0, 1, 2])
    >>> better.tolist(), round(tm.max_occupancy(tasks, res, better)[0], 4)
    ([2, 1, 2], 0.6667)
    """
    check_graphs(task_graph, resource_graph)
    m = check_mapping(task_graph, resource_graph, mapping)
    if isinstance(processor_order, str):
        procs = _procs_by_kind(resource_graph, processor_order, seed)
    else:
        procs = _check_procs(resource_graph, processor_order, "processor_order")
    state = OccupancyState(task_graph, resource_graph, m)
    eng = Engine(
        task_graph, resource_graph, _check_order(order, task_graph.n), procs,
        open_metric=open_metric,
    )  # fmt: skip
    eng.improve(state, float(acceleration), bound_factor)
    return state.mapping.copy()
