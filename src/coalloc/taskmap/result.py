"""The task mapper's results: :class:`TaskMappingResult` (``MappingResult`` is its older
name, kept as an alias), where its maximum is (:class:`Bottleneck`) and its exact subclass
:class:`ExactMappingResult`, which :func:`coalloc.taskmap.solve_exact_mapping` returns, and
the clustering step's :class:`FlowInjectionResult` with its :class:`ClusterTree` (of
:func:`coalloc.taskmap.flow_injection`).

Result types only: this module imports no other module of the family, so every module may
import it (``clustering`` and ``occupancy`` re-export the types they return)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from .._shared.docs import filled
from .._shared.result import Result, stopped_fields

__all__ = [
    "Bottleneck",
    "TaskMappingResult",
    "MappingResult",
    "ExactMappingResult",
    "FlowInjectionResult",
    "ClusterTree",
    "KIND_NAMES",
    "stopped_result",
]


@dataclass(frozen=True)
class Bottleneck:
    """Where the maximum occupancy is: ``kind`` is ``"node"`` or ``"link"``.

    Parameters
    ----------
    kind : {"node", "link"}
        Whether the maximum is on a resource-graph node or on a link.
    index : int
        The node index or the link index.
    occupancy : float
        The occupancy there (the maximum of the occupancy graph).

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> value, where = tm.max_occupancy(tasks, res, [1, 1, 2])
    >>> where
    Bottleneck(kind='node', index=1, occupancy=1.0)
    >>> where.to_dict()
    {'kind': 'node', 'index': 1, 'occupancy': 1.0}
    """

    kind: str
    index: int
    occupancy: float

    def to_dict(self) -> dict:
        """A JSON-ready dictionary.

        Returns
        -------
        dict
            ``kind``, ``index`` and ``occupancy``.

        Examples
        --------
        >>> import coalloc.taskmap as tm
        >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
        >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
        >>> tm.OccupancyState(tasks, res, [1, 1, 2]).bottleneck().to_dict()
        {'kind': 'node', 'index': 1, 'occupancy': 1.0}
        """
        return {"kind": self.kind, "index": int(self.index), "occupancy": float(self.occupancy)}


@filled
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
    %(result_explanation)s
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


@filled
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
    %(result_explanation)s
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


#: Names of :attr:`ClusterTree.kind` (0 .. 4).
KIND_NAMES = ("leaf", "flow", "components", "flat", "forced")


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
