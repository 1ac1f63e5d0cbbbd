"""The result object every solver returns (after SciPy's ``OptimizeResult``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

__all__ = ["SolveResult"]

#: Statuses a solver may report.
STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "error")


@dataclass
class SolveResult:
    """Outcome of :func:`coalloc.solve`.

    Attributes
    ----------
    assignment : ndarray of int64, shape (n,)
        Cluster of each task, -1 when the task is not allocated.
    n_allocated : int
        Number of allocated tasks (the objective).
    status : str
        ``"feasible"`` for a heuristic allocation, ``"optimal"`` when proven optimal,
        ``"time_limit"`` when a time limit stopped an exact solver without a solution,
        ``"infeasible"`` or ``"error"``.
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
    objective, bound, gap : float, optional
        For exact solvers: objective value, proven upper bound and relative gap.
    """

    assignment: np.ndarray
    n_allocated: int
    status: str
    message: str
    method: str
    timings: dict = field(default_factory=dict)
    iterations: dict = field(default_factory=dict)
    n_removals: int = 0
    seed: Optional[int] = None
    params: dict = field(default_factory=dict)
    weights: Optional[np.ndarray] = field(default=None, repr=False)
    objective: Optional[float] = None
    bound: Optional[float] = None
    gap: Optional[float] = None

    @property
    def n_tasks(self) -> int:
        """Number of tasks in the request."""
        return int(self.assignment.shape[0])

    @property
    def success(self) -> bool:
        """True when an allocation was produced."""
        return self.status in ("optimal", "feasible")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (without the step-1 weights)."""
        out = {
            "method": self.method,
            "status": self.status,
            "message": self.message,
            "n_tasks": self.n_tasks,
            "n_allocated": int(self.n_allocated),
            "assignment": [int(a) for a in self.assignment],
            "timings": {k: float(v) for k, v in self.timings.items()},
            "iterations": {k: int(v) for k, v in self.iterations.items()},
            "n_removals": int(self.n_removals),
            "seed": self.seed,
            "params": _jsonable(self.params),
        }
        for key in ("objective", "bound", "gap"):
            value = getattr(self, key)
            if value is not None:
                out[key] = float(value)
        return out

    def __repr__(self) -> str:
        total = self.timings.get("total")
        t = f", time={total * 1e3:.2f} ms" if total is not None else ""
        return (
            f"SolveResult(method={self.method!r}, status={self.status!r}, "
            f"n_allocated={self.n_allocated}/{self.n_tasks}{t})"
        )


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value
