"""The results of the family: every load-sharing method's :class:`ShareResult` and the
generalized assignment problem's :class:`GapResult`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from .._shared.docs import filled
from .._shared.params import offer_incumbent
from .._shared.result import Result, jsonable, relative_gap, stopped_fields

__all__ = [
    "ShareResult",
    "GapResult",
    "stopped_result",
    "placement_result",
    "offer_origins",
    "share_gap",
]


@filled
@dataclass(kw_only=True, eq=False)
class ShareResult(Result):
    """What :func:`coalloc.loadshare.share` returns.

    Parameters
    ----------
    placement : ndarray of int64, shape (J,)
        The node of every job.
    throughput : float
        ``sum_i min(load_i, capacity_i)`` of the placement.
    bound : float
        ``min(total load, total capacity)`` (or the exact method's proven bound).
    coalition : ndarray of int64 or None
        The coalition of every node (coalition methods).
    migrations : int
        Conditional migrations performed (DMCF-GGA).
    generations : int
        Generations run (DMCF-GGA).
    messages : dict of str to int
        Messages sent per procedure (DMCF-GGA, Fig. 9a's procedures), with ``"total"``.
    rounds : dict of str to int
        Sequential message rounds (latency steps) per procedure, summed over the run.
    history : ndarray or None
        Best throughput after each generation (DMCF-GGA; entry 0: the initial structure).
    migration_history : ndarray or None
        Migrations so far after each generation (DMCF-GGA).
    coalition_history : list of (int, ndarray) or None
        ``(generation, coalition of every node)`` pairs, when DMCF-GGA was asked to keep
        them (``coalition_history=k``: every ``k`` generations).
    status, message, method, seed, params, timings, iterations, objective, gap : object
        As for :class:`coalloc.Result`; ``objective`` is the throughput (None, and
        ``placement`` the jobs' origins, when an exact run was stopped without a solution:
        status ``time_limit``, ``has_solution`` False).
    %(result_explanation)s

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> result = ls.share(problem, "fcfs-ff", coalition_size=3)
    >>> result.placement.tolist(), result.throughput, result.bound
    ([0, 1, 2, 1], 24.0, 24.0)
    >>> result.coalition.tolist()
    [0, 0, 0]
    """

    placement: np.ndarray = field(repr=False)
    throughput: float
    coalition: Optional[np.ndarray] = field(default=None, repr=False)
    migrations: int = 0
    generations: int = 0
    messages: dict = field(default_factory=dict)
    rounds: dict = field(default_factory=dict)
    history: Optional[np.ndarray] = field(default=None, repr=False)
    migration_history: Optional[np.ndarray] = field(default=None, repr=False)
    coalition_history: Optional[list] = field(default=None, repr=False)
    #: The throughput is maximised (:func:`coalloc._shared.result.settle` reads it).
    sense: ClassVar[str] = "max"

    @property
    def ratio(self) -> float:
        """``throughput / bound`` (1 when the bound is 0)."""
        return 1.0 if self.bound <= 0 else self.throughput / self.bound

    def cost(self, latency: float = 0.7e-3) -> dict:
        """The communication-cost model of Fig. 9: sequential message rounds times a latency.

        The unit is the paper's: ``latency`` (0.7 ms) per *sequential round* of messages, the
        messages of one round travelling in parallel; not per message. Phase I costs one round
        per overhead step (9 per generation: Fig. 9a) plus one per migration (Fig. 9b); Phase II
        costs one per load-sharing state change (a job placed away from its origin, Fig. 9c) of
        the coalition with the most of them (coalitions share in parallel). Seconds.

        Parameters
        ----------
        latency : float, default 0.7e-3
            Seconds per sequential round of messages (DAS-3's worst node-to-node latency).

        Returns
        -------
        dict
            ``phase1_overhead``, ``phase1_migration``, ``phase1``, ``phase2``, ``total``.

        Examples
        --------
        >>> from coalloc import loadshare
        >>> prob = loadshare.generators.paper_setup(n_nodes=60, seed=1)
        >>> cost = loadshare.dmcf_gga(prob, coalition_size=20, seed=0).cost()
        >>> sorted(cost)
        ['phase1', 'phase1_migration', 'phase1_overhead', 'phase2', 'total']
        >>> cost["total"] == cost["phase1"] + cost["phase2"] > 0
        True
        """
        overhead = sum(v for k, v in self.rounds.items() if k not in ("total", "Initialize"))
        ff = int(self.iterations.get("jobs_moved_max_coalition", 0))
        out = {
            "phase1_overhead": overhead * latency,
            "phase1_migration": self.migrations * latency,
            "phase2": ff * latency,
        }
        out["phase1"] = out["phase1_overhead"] + out["phase1_migration"]
        out["total"] = out["phase1"] + out["phase2"]
        return out

    def _payload(self) -> dict:
        out: dict[str, Any] = {
            "placement": jsonable(self.placement),
            "throughput": float(self.throughput),
            "migrations": int(self.migrations),
            "generations": int(self.generations),
            "messages": jsonable(self.messages),
            "rounds": jsonable(self.rounds),
        }
        if self.coalition is not None:
            out["coalition"] = jsonable(self.coalition)
        return out


@filled
@dataclass(kw_only=True, eq=False)
class GapResult(Result):
    """What :func:`solve_gap` returns.

    Parameters
    ----------
    assignment : ndarray of int64, shape (n,)
        Agent of every item, -1 when unassigned (None without a solution).
    objective : float or None
        Total cost (``sense="min"``) or profit (``"max"``).
    bound : float or None
        A proven bound (lower for ``min``, upper for ``max``).
    gap : float or None
        The relative gap (:func:`coalloc._shared.result.relative_gap` with ``sense``).
    %(result_explanation)s
    sense : str
        ``"min"`` (cost) or ``"max"`` (profit).
    assign_all : bool
        Whether every item had to be assigned.
    trajectory : ndarray of float64, shape (k, 3), optional
        Heuristic (also the exact method's hint): rows ``(seconds since the call,
        objective, bound)``, one when the search starts and one whenever the best
        objective or the bound improves (NaN: none yet); for plots of the anytime
        behaviour. None for the exact method.
    status, message, method, seed, params, timings, iterations : object
        As for :class:`coalloc.Result`.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> gap = ls.GapInstance([[1, 3], [2, 1]], [[2, 2], [2, 2]], [2, 2])
    >>> result = ls.solve_gap(gap, "heuristic")
    >>> result.status, result.assignment.tolist(), result.objective, result.bound
    ('optimal', [0, 1], 2.0, 2.0)
    """

    assignment: Optional[np.ndarray] = field(repr=False)
    sense: str = "min"
    assign_all: bool = True
    trajectory: Optional[np.ndarray] = field(default=None, repr=False)

    def _holds_solution(self) -> bool:
        """An assignment is there (``time_limit`` with the stopped solver's incumbent)."""
        return self.assignment is not None

    def _payload(self) -> dict:
        return {"assignment": None if self.assignment is None else jsonable(self.assignment),
                "sense": self.sense, "assign_all": self.assign_all}  # fmt: skip


def stopped_result(problem: Any, **stop: Any) -> ShareResult:
    """A load-sharing method stopped at its ``time_limit`` before a placement: the jobs
    stay at their origins (as the exact method leaves them without a solution), no
    objective, status ``"time_limit"`` (``stop``: what
    :func:`coalloc._shared.result.stopped_fields` takes)."""
    from .model import throughput_of

    placement = problem.job_origin.copy()
    return ShareResult(
        placement=placement, throughput=throughput_of(problem, placement), bound=problem.bound,
        **stopped_fields(**stop),
    )  # fmt: skip


@filled
def offer_origins(problem: Any, method: str, seed: Any, t0: float,
                   params: Optional[dict] = None) -> None:  # fmt: skip
    """Offer a time limit in force the placement every method starts from: every job on
    its origin node (FCFS's). It is a placement :func:`verify_placement` accepts (one node
    for every job), so a method stopped before its own first placement still returns one,
    as good as no sharing at all; a method that places jobs one by one in a kernel does not
    offer its half-built placement (the kernel's state is lost when the limit stops it).

    Parameters
    ----------
    %(loadshare_problem)s
    method : str
        The method's name, for the result.
    seed : int or None
        Recorded in the result.
    t0 : float
        The call's start (a :func:`time.perf_counter` value).
    params : dict, optional
        The parameters the result records (copied).
    """
    offer_incumbent(lambda: placement_result(problem, method, problem.job_origin.copy(), t0,
                                             seed, dict(params or {}),
                                             iterations={"jobs_moved": 0}))  # fmt: skip


def share_gap(throughput: float, bound: float) -> float:
    """The relative gap of a throughput to its bound (a maximisation).

    Parameters
    ----------
    throughput, bound : float
        The placement's throughput and the bound it is measured against.

    Returns
    -------
    float
        :func:`coalloc._shared.result.relative_gap` with ``sense="max"``.
    """
    return relative_gap(throughput, bound, sense="max")


@filled
def placement_result(problem: Any, method: str, placement: np.ndarray, t0: float, seed: Any,
                     params: dict, coalition: Optional[np.ndarray] = None,
                     iterations: Optional[dict] = None) -> ShareResult:  # fmt: skip
    """The :class:`ShareResult` of a complete placement (status ``feasible``; the caller's
    settle applies the status rule), timed from ``t0``.

    Parameters
    ----------
    %(loadshare_problem)s
    method : str
        The method's name.
    placement : numpy.ndarray of int64, shape (J,)
        The node of every job (kept, not copied).
    t0 : float
        The call's start (a :func:`time.perf_counter` value).
    seed : int or None
    params : dict
        The parameters the result records.
    coalition : numpy.ndarray, optional
        The coalition of every node (coalition methods).
    iterations : dict, optional
        The method's counters.

    Returns
    -------
    ShareResult
    """
    from .model import throughput_of

    tput = throughput_of(problem, placement)
    return ShareResult(
        status="feasible", message="", method=method, placement=placement, throughput=tput,
        bound=problem.bound, seed=seed, params=params,
        timings={"total": time.perf_counter() - t0}, iterations=iterations or {},
        objective=tput, gap=share_gap(tput, problem.bound), coalition=coalition,
    )  # fmt: skip
