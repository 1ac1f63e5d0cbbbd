"""What a solver run gave, in the package's terms, and what every solver module shares.

:class:`MilpOutcome` (the status table is in :mod:`coalloc._shared.milp`'s docstring),
:class:`Rejected` and the judgement of an outcome against a family's ``check``
(:func:`_judge`), the time-limit arithmetic (:func:`remaining`, :func:`_left`), the
progress display in the user's units, and the small numeric helpers the HiGHS, CBC and
CP-SAT modules all use.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..progress import SolveProgress

#: The integer-programming solvers the runner knows (a family's ``solver=``).
SOLVERS = ("highs", "cbc", "cpsat")


@dataclass
class MilpOutcome:
    """What a solver run gave, in the package's terms.

    Attributes
    ----------
    x : ndarray or None
        Values of the variables (None without a solution).
    bound : float or None
        The solver's proven bound on the objective, in the model's sense (an upper bound when
        maximising, a lower bound when minimising); None when the solver gave none.
    status : str
        ``optimal | feasible | time_limit | infeasible | no_solution | error`` (module
        docstring); ``time_limit`` with ``x`` when a stopped solver had an incumbent;
        ``no_solution`` when a work cap (``node_limit``, ``work_limit``) ended the solve
        without an incumbent (``bound`` may still hold the solver's bound).
    solver_status : int
        The solver's own status code.
    message : str
        ``"<solver>: <its status>"``.
    nodes : int or None
        Branch-and-bound nodes (CP-SAT: branches) when reported.
    time_limit_hit : bool
        The solver stopped on its time limit.
    infeasible : bool
        The solver proved the model infeasible.
    rows : int
        Constraints of the model.
    time_limit : float or None
        Seconds the call was given (the solver got what remained after the conversion).
    interrupted : bool
        Ctrl-C stopped the solver (the outcome holds its incumbent, if any).
    objective : float or None
        The value of ``x`` in the user's units: what the family's ``check`` computed from
        its original data, else ``c @ x`` (None without a solution, and from
        :func:`run_cpsat` without a ``check``).
    scaled : bool
        The runner solved a rescaled copy of the model (:func:`model_scaling`); ``x`` and
        ``bound`` are given back in the user's units either way.
    solver : str or None
        The solver that ran (one of :data:`SOLVERS`; set by :func:`run_milp` and
        :func:`run_cpsat`, None in an outcome a family builds itself).
    """

    x: Optional[np.ndarray]
    bound: Optional[float]
    status: str
    solver_status: int
    message: str
    nodes: Optional[int]
    time_limit_hit: bool
    infeasible: bool
    rows: int
    time_limit: Optional[float]
    interrupted: bool = False
    objective: Optional[float] = None
    scaled: bool = False
    solver: Optional[str] = None


class Rejected(Exception):
    """Raised by a family's ``check`` (:func:`run_milp`, :func:`run_cpsat`) when a solution
    the solver returned is not valid on the original, unscaled data; the message says why."""


def _judge(out: MilpOutcome, check: Any, sense: str, slack_abs: float,
           slack_rel: float) -> MilpOutcome:  # fmt: skip
    """Hold the outcome's solution and bound against the family's ``check``.

    ``check(x)`` gives the objective of ``x`` on the original data (or raises
    :class:`Rejected`). A rejected solution, a bound on the wrong side of that value, or an
    "optimal" whose bound does not meet it, by more than ``slack_abs + slack_rel * |value|``
    (what the solver's tolerances can explain), turns the outcome into ``error`` without a
    solution. Otherwise ``objective`` is set to the checked value.
    """
    if out.x is None:
        return out
    try:
        value = float(check(out.x))
    except Rejected as exc:
        return _as_error(out, f"its solution fails the check on the original data: {exc}")
    if not np.isfinite(value):
        return _as_error(out, f"its solution has no finite value on the original data ({value})")
    out.objective = value
    bound = out.bound
    if bound is None:
        return out
    slack = slack_abs + slack_rel * max(abs(value), abs(bound))
    beyond = (value - bound) if sense == "min" else (bound - value)  # >= 0 for a valid bound
    if beyond < -slack:
        return _as_error(out, f"its bound {bound:.17g} is {'above' if sense == 'min' else 'below'}"
                         f" the value {value:.17g} of its own solution on the original data, by "
                         f"more than its tolerances explain ({slack:.3g})")  # fmt: skip
    if out.status == "optimal" and beyond > slack:
        return _as_error(out, f"it said optimal, but its solution's value on the original data "
                         f"({value:.17g}) is {beyond:.3g} from its bound ({bound:.17g}), more "
                         f"than its tolerances explain ({slack:.3g})")  # fmt: skip
    return out


def _as_error(out: MilpOutcome, why: str) -> MilpOutcome:
    out.message += f"; not trusted: {why}"
    out.status, out.x, out.bound, out.objective = "error", None, None, None
    return out


def _kept(x: Any, bound: Optional[float]) -> str:
    """What a stopped solve kept, for its message: no incumbent, the incumbent, or both."""
    if x is None:
        return "; no incumbent found"
    return "; incumbent kept" if bound is None else "; incumbent and bound kept"


def _closed(value: Optional[float], bound: Optional[float], sense: str) -> bool:
    """The proven bound meets the value (to a relative 1e-9)."""
    if value is None or bound is None:
        return False
    slack = 1e-9 * max(1.0, abs(value))
    return bound >= value - slack if sense == "min" else bound <= value + slack


def _finite(value: Any) -> Optional[float]:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) and abs(value) < 1e50 else None


class _UserUnits(SolveProgress):
    """The progress display of a rescaled model, in the user's units."""

    def __init__(self, *args: Any, unit: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unit = float(unit)

    def update(self, elapsed: float, *, incumbent: Optional[float] = None,
               bound: Optional[float] = None) -> None:  # fmt: skip
        super().update(elapsed, incumbent=None if incumbent is None else incumbent / self.unit,
                       bound=None if bound is None else bound / self.unit)  # fmt: skip


def _progress_bar(solver: str, sense: str, time_limit: Any, enabled: bool,
                  unit: float) -> SolveProgress:  # fmt: skip
    if unit == 1.0:
        return SolveProgress(solver, sense=sense, time_limit=time_limit, enabled=enabled)
    return _UserUnits(solver, sense=sense, time_limit=time_limit, enabled=enabled, unit=unit)


def remaining(deadline: Optional[float]) -> Optional[float]:
    """Seconds left before ``deadline`` (at least 10 ms), or None without a limit."""
    return None if deadline is None else max(0.01, deadline - time.perf_counter())


def _left(t_entry: float, time_limit: Optional[float]) -> Optional[float]:
    """Seconds of ``time_limit`` left since ``t_entry`` (at least 10 ms), None without one."""
    if time_limit is None:
        return None
    return max(0.01, float(time_limit) - (time.perf_counter() - t_entry))


def _empty_outcome(solver, row_lb, row_ub, time_limit) -> MilpOutcome:
    """A model without variables: optimal (value 0) when every row admits 0."""
    lo, hi = np.asarray(row_lb, dtype=np.float64), np.asarray(row_ub, dtype=np.float64)
    fits = bool(np.all(lo <= 0) and np.all(hi >= 0))
    return MilpOutcome(
        x=np.zeros(0) if fits else None, bound=0.0 if fits else None,
        status="optimal" if fits else "infeasible", solver_status=0,
        message=f"{'HiGHS' if solver == 'highs' else 'CBC'}: no variables, not solved "
        f"({'every row admits 0' if fits else 'a row excludes 0: infeasible'})",
        nodes=0, time_limit_hit=False, infeasible=not fits, rows=int(lo.shape[0]),
        time_limit=time_limit,
    )  # fmt: skip
