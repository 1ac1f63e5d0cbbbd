"""The task mapper's results: :class:`TaskMappingResult` (``MappingResult`` is its older
name, kept as an alias) and its exact subclass :class:`ExactMappingResult`, which
:func:`coalloc.taskmap.solve_exact_mapping` returns, and the clustering step's
:class:`FlowInjectionResult` (of :func:`coalloc.taskmap.flow_injection`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Optional

import numpy as np

from .._shared.result import Result, stopped_fields
from .model import Bottleneck

if TYPE_CHECKING:  # the clustering module is imported on first use (coalloc.taskmap)
    from .clustering import ClusterTree

__all__ = [
    "TaskMappingResult",
    "MappingResult",
    "ExactMappingResult",
    "FlowInjectionResult",
    "stopped_result",
]


@dataclass(kw_only=True, eq=False)
class TaskMappingResult(Result):
    """Outcome of :func:`map_tasks` (a :class:`coalloc.Result`; ``objective`` is the
    maximum occupancy); ``coalloc.taskmap.MappingResult`` is its older name (an alias).

    Parameters
    ----------
    mapping : ndarray of int64, shape (n,)
        Processor (resource-graph node index) of each task.
    max_occupancy : float
        ``max(O(G, P, mapping))``, recomputed from scratch; the inverse of the throughput.
    bottleneck : Bottleneck
        Node or link where the maximum is reached (``kind``, ``index``, ``occupancy``).
    method : str
        ``"base"``, ``"base+improve"``, ``"open"`` or ``"open+improve"``.
    seed : int or None
    timings : dict of str to float
        Seconds: ``"clustering"``, ``"initial"``, ``"improve"``, ``"total"``.
    iterations : dict of str to int
        ``"improve_rounds"`` (calls of ``improve``), ``"improve_accepted"`` (those that
        lowered the occupancy), ``"initial_occupancy"`` is in :attr:`history`.
    params : dict
        Parameters used, defaults filled in.
    node_occupancy, link_occupancy : ndarray
        The occupancy graph of the mapping.
    order : ndarray of int64
        Task order used (depth-first order of the cluster tree).
    history : list of float
        Maximum occupancy after the initial mapping and after each accepted improvement.
    status : str
        ``"feasible"`` for a heuristic mapping (every task is placed).
    message : str
    bound, gap : float or None
        A proven lower bound on the optimal maximum occupancy and the relative gap, where
        known (the heuristics report none).
    objective : float or None
        The maximum occupancy (minimised): set from ``max_occupancy`` at construction,
        whatever is passed.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = tm.map_tasks(tasks, res, method="open+improve", seed=0)
    >>> result.mapping.tolist(), result.max_occupancy, result.status
    ([2, 2, 1], 0.6, 'feasible')
    >>> result.bottleneck.kind, round(result.throughput, 4)
    ('node', 1.6667)
    """

    mapping: Optional[np.ndarray]
    max_occupancy: Optional[float]
    bottleneck: Optional[Bottleneck]
    node_occupancy: Optional[np.ndarray] = field(default=None, repr=False)
    link_occupancy: Optional[np.ndarray] = field(default=None, repr=False)
    order: Optional[np.ndarray] = field(default=None, repr=False)
    history: list = field(default_factory=list)

    #: The objective's direction (:func:`coalloc._shared.result.settle`): the maximum
    #: occupancy is minimised.
    sense: ClassVar[str] = "min"

    def __post_init__(self) -> None:
        # the objective is the maximum occupancy (minimised), whatever was passed
        self.objective = None if self.max_occupancy is None else float(self.max_occupancy)

    def _holds_solution(self) -> bool:
        """A mapping is there (``time_limit`` with the stopped solver's incumbent)."""
        return self.mapping is not None

    def _payload(self) -> dict:
        return {
            "n_tasks": None if self.mapping is None else int(self.mapping.shape[0]),
            "mapping": None if self.mapping is None else [int(x) for x in self.mapping],
            "max_occupancy": self.objective,
            "bottleneck": None if self.bottleneck is None else self.bottleneck.to_dict(),
        }

    @property
    def throughput(self) -> float:
        """Units of progress per unit time, ``1 / max_occupancy``."""
        if self.max_occupancy is None:
            return float("nan")
        return float("inf") if self.max_occupancy == 0 else 1.0 / self.max_occupancy


#: The older name of :class:`TaskMappingResult` (the testbed's result is
#: :class:`coalloc.testbed.TestbedMappingResult`).
MappingResult = TaskMappingResult


@dataclass(kw_only=True, eq=False)
class ExactMappingResult(MappingResult):
    """Outcome of :func:`solve_exact_mapping`: a :class:`MappingResult` (method ``"exact"``).

    ``mapping`` is the best mapping found (None when none was found in time), ``objective``
    (= ``max_occupancy``) its maximum occupancy recomputed from scratch, ``bound`` a proven
    lower bound on the optimum, ``gap`` = ``(objective - bound) / objective``, ``status``
    ``"optimal"`` (the objective meets the bound: :func:`coalloc._shared.result.settle`),
    ``"feasible"`` (a mapping, optimality not proven: a positive ``mip_gap``, or CP-SAT's
    rounding), ``"time_limit"`` (a time limit or Ctrl-C stopped the solver before the
    proof: the incumbent mapping when there was one, else ``mapping`` None) or
    ``"error"``; ``timings`` has ``"build"``, ``"solve"``, ``"total"``.

    Parameters
    ----------
    mapping, max_occupancy, bottleneck, method, seed, timings, iterations, params : object
        As in :class:`MappingResult`.
    node_occupancy, link_occupancy, order, history, status, message, bound, gap : object
        As in :class:`MappingResult`.
    objective : float or None
        As in :class:`MappingResult` (``max_occupancy``).
    solver, formulation : str
        The integer-programming solver (``"highs"``, ``"cbc"`` or ``"cpsat"``) and the
        linearisation used (``backend`` is a deprecated read-only alias of ``solver``).
    model : dict
        Sizes of the model (variables, rows).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = tm.solve_exact_mapping(tasks, res)
    >>> result.status, result.mapping.tolist(), result.max_occupancy, result.bound
    ('optimal', [2, 2, 1], 0.6, 0.6)
    """

    solver: str = ""
    formulation: str = ""
    model: dict = field(default_factory=dict)

    @property
    def backend(self) -> str:
        """Deprecated: the solver's name (:attr:`solver`; ``backend`` names kernels now)."""
        import warnings

        warnings.warn("ExactMappingResult.backend is deprecated: read .solver",
                      DeprecationWarning, stacklevel=2)  # fmt: skip
        return self.solver


@dataclass(frozen=True, eq=False)
class FlowInjectionResult:
    """Result of :func:`flow_injection`.

    Parameters
    ----------
    order : ndarray of int64, shape (n,)
        Depth-first order of the cluster tree: a permutation of ``0 .. n - 1``; every
        cluster of the tree is a contiguous block.
    tree : ClusterTree
    n_injections : int
        Flows injected in total.
    n_splits : int
        Clusters split by flow injection (not counting splits into already disconnected
        components, see ``counters``).
    counters : dict
        ``injections``, ``path_edges`` (total path length), ``removed_edges``,
        ``forced_removals``, ``flow_splits``, ``component_splits``, ``flat_nodes``.
    params : dict
        The parameters used (``seed`` as the 64-bit integer given to the kernel).
    backend : str
        ``"compiled"`` or ``"numpy"`` (the twin).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> fi = tm.flow_injection(tasks, seed=0)
    >>> sorted(fi.order.tolist()), [c.tolist() for c in fi.clusters(1)]
    ([0, 1, 2], [[0, 1], [2]])
    """

    order: np.ndarray
    tree: ClusterTree
    n_injections: int
    n_splits: int
    counters: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    backend: str = "compiled"

    def __repr__(self) -> str:
        return (
            f"FlowInjectionResult(n={self.order.shape[0]}, tree_nodes={self.tree.n_nodes}, "
            f"injections={self.n_injections}, splits={self.n_splits}, backend={self.backend!r})"
        )

    def clusters(self, level: int = 1) -> list:
        """Shortcut for ``tree.clusters(level)``.

        Parameters
        ----------
        level : int, default 1
            Depth in the cluster tree (1: the top-level split).

        Returns
        -------
        list of ndarray of int64
            The task sets of the clusters at that depth.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> fi = tm.flow_injection(tasks, seed=0)
        >>> [c.tolist() for c in fi.clusters(1)], [c.tolist() for c in fi.clusters(2)]
        ([[0, 1], [2]], [[0], [1], [2]])
        """
        return self.tree.clusters(level)

    def labels(self, level: int = 1) -> np.ndarray:
        """Shortcut for ``tree.labels(level)``.

        Parameters
        ----------
        level : int, default 1
            Depth in the cluster tree (1: the top-level split).

        Returns
        -------
        ndarray of int64, shape (n_tasks,)
            The cluster number (position in :meth:`clusters`) of each task.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> fi = tm.flow_injection(tasks, seed=0)
        >>> fi.labels(1).tolist()
        [0, 0, 1]
        """
        return self.tree.labels(level)


def stopped_result(task_graph: Any, resource_graph: Any, **stop: Any) -> TaskMappingResult:
    """A mapping method stopped at its ``time_limit`` before a mapping (``mapping`` None,
    status ``"time_limit"``; ``stop``: what :func:`coalloc._shared.result.stopped_fields`
    takes)."""
    return TaskMappingResult(
        mapping=None, max_occupancy=None, bottleneck=None, **stopped_fields(**stop)
    )
