"""The result every CTAAP method returns (a :class:`coalloc.Result`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

import numpy as np

from .._shared.docs import filled
from .._shared.result import STATUSES, Result, stopped_fields

__all__ = ["SolveResult", "STATUSES", "stopped_result"]


@filled
@dataclass(kw_only=True, eq=False)
class SolveResult(Result):
    """Outcome of :func:`coalloc.ctaap.solve` (every method of the family).

    Parameters
    ----------
    assignment : ndarray of int64, shape (n,)
        Cluster of each task, -1 when the task is not allocated.
    n_allocated : int
        Number of allocated tasks (the objective).
    status : str
        The one status rule (:func:`coalloc._shared.result.settle`, applied by
        :func:`coalloc.ctaap.solve`): ``"optimal"`` when the allocation meets a proven
        bound (any method: a heuristic's answer that meets the bound of ``bound=True`` is
        optimal), ``"feasible"`` for an allocation without that proof from a method that
        ended by itself, ``"time_limit"`` when the time limit (or Ctrl-C) ended the method
        (with the best allocation found so far when there was one: :attr:`has_solution`;
        all -1 otherwise), ``"error"`` for a failure. (A CTAAP instance always has an
        answer, the empty allocation, so ``"infeasible"`` and ``"no_solution"`` do not
        occur.)
    message : str
        Human-readable explanation.
    method : str
        The method that produced it.
    timings : dict of str to float
        Seconds spent per step (``"step1"``, ``"step2"``, ``"step3"``, ``"total"``, ...).
    iterations : dict of str to int
        Iteration counters per step.
    n_removals : int
        Allocations removed by the cleanup loop (step 3).
    seed : int or None
        Seed used.
    params : dict
        Parameters the solver ran with, defaults filled in.
    weights : ndarray, optional
        Step-1 weight matrix ``X`` (``n x m``) for CTAAP, else None.
    objective : float, optional
        The number of allocated tasks, set whenever there is an allocation (every method);
        None only for a method stopped before any answer, or an error.
    bound, gap : float, optional
        A proven upper bound on the optimum (exact solvers, the anytime search, or
        ``bound=True``) and the relative gap to it.
    %(result_explanation)s
    trajectory : ndarray of float, shape (k, 3), optional
        The anytime search (``"ctaap"`` with ``time_limit`` or ``rounds``): one row
        ``(seconds since the call, allocated, upper bound)`` per improvement of either,
        monotone (allocated never falls, the bound never rises); None for other runs.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> result = ct.solve(request, offer, method="ctaap", seed=0)
    >>> result.assignment.tolist(), result.n_allocated, result.status, result.method
    ([-1, 1, 1], 2, 'optimal', 'ctaap')
    >>> result.success, "total" in result.timings
    (True, True)
    """

    assignment: np.ndarray
    n_allocated: int
    n_removals: int = 0
    weights: Optional[np.ndarray] = field(default=None, repr=False)
    trajectory: Optional[np.ndarray] = field(default=None, repr=False)

    #: The objective (tasks allocated) is maximised: what the status rule reads.
    sense: ClassVar[str] = "max"

    @property
    def n_tasks(self) -> int:
        """Number of tasks in the request."""
        return int(self.assignment.shape[0])

    def _payload(self) -> dict:
        return {
            "n_tasks": self.n_tasks,
            "n_allocated": int(self.n_allocated),
            "assignment": [int(a) for a in self.assignment],
            "n_removals": int(self.n_removals),
            **(
                {}
                if self.trajectory is None
                else {"trajectory": [[float(t), int(a), int(b)] for t, a, b in self.trajectory]}
            ),
        }

    def __repr__(self) -> str:
        total = self.timings.get("total")
        t = f", time={total * 1e3:.2f} ms" if total is not None else ""
        return (
            f"SolveResult(method={self.method!r}, status={self.status!r}, "
            f"n_allocated={self.n_allocated}/{self.n_tasks}{t})"
        )


def stopped_result(request: Any, offer: Any, **stop: Any) -> SolveResult:
    """A CTAAP method stopped at its ``time_limit`` before it allocated anything: the empty
    allocation (always feasible: objective 0) is its answer, status ``"time_limit"``
    (``stop``: what :func:`coalloc._shared.result.stopped_fields` takes)."""
    fields = stopped_fields(**stop)
    fields["message"] = (f"stopped at the time limit ({stop['time_limit']:g} s) before any "
                         "task was allocated: the answer is the empty allocation")  # fmt: skip
    return SolveResult(assignment=np.full(request.n, -1, dtype=np.int64), n_allocated=0,
                       objective=0.0, **fields)  # fmt: skip
