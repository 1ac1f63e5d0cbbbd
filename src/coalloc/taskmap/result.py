"""The task mapper's results: :class:`TaskMappingResult` (``MappingResult`` is its older
name, kept as an alias) and, in :mod:`coalloc.taskmap.exact`, its exact subclass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .._shared.result import Result, stopped_fields
from .model import Bottleneck

__all__ = ["TaskMappingResult", "MappingResult", "stopped_result"]


@dataclass
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

    mapping: np.ndarray
    max_occupancy: float
    bottleneck: Bottleneck
    method: str
    seed: Optional[int] = None
    timings: dict = field(default_factory=dict)
    iterations: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    node_occupancy: Optional[np.ndarray] = field(default=None, repr=False)
    link_occupancy: Optional[np.ndarray] = field(default=None, repr=False)
    order: Optional[np.ndarray] = field(default=None, repr=False)
    history: list = field(default_factory=list)
    status: str = "feasible"
    message: str = ""
    bound: Optional[float] = None
    gap: Optional[float] = None

    @property
    def objective(self) -> Optional[float]:
        """The maximum occupancy (minimised)."""
        return None if self.max_occupancy is None else float(self.max_occupancy)

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


def stopped_result(task_graph: Any, resource_graph: Any, **stop: Any) -> TaskMappingResult:
    """A mapping method stopped at its ``time_limit`` before a mapping (``mapping`` None,
    status ``"time_limit"``; ``stop``: what :func:`coalloc._shared.result.stopped_fields`
    takes)."""
    return TaskMappingResult(
        mapping=None, max_occupancy=None, bottleneck=None, **stopped_fields(**stop)
    )
