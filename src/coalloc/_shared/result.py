"""The result and verification-report bases every family's types derive from.

A family's result is a keyword-only dataclass that subclasses :class:`Result`, which
declares the fields of :data:`RESULT_FIELDS` once; the family adds only its own (an
assignment, a mapping ...) and its objective's direction ``sense``::

    @dataclass(kw_only=True, eq=False)
    class PackResult(Result):
        chosen: Optional[list] = None
        sense: ClassVar[str] = "max"

    PackResult(status="feasible", method="greedy", chosen=[0, 2], objective=7.0)

Every construction names its fields (the dataclass is keyword-only), and ``eq=False`` keeps
the base's :meth:`Result.__eq__`, which compares array fields by value. Its exact and
heuristic methods share that type. The base gives the common behaviour: the status
vocabulary, :attr:`Result.has_solution` (= :attr:`Result.success`), :meth:`Result.to_dict`
(JSON-ready), and :attr:`Result.counters`.

The statuses, for every family and method, follow **one rule** (:func:`settle` applies it
at every family's exit, so no method sets them by its own convention):

===============  ================================================  ==================
status           meaning                                           ``has_solution``
===============  ================================================  ==================
``optimal``      an answer whose objective meets a valid bound     True
                 (within :data:`OPTIMALITY_TOL`, relative), from
                 any method, heuristic or exact
``feasible``     an answer, not proven optimal, from a method      True
                 that ended by itself
``time_limit``   the time limit (or Ctrl-C) ended the method: it   True with the
                 holds the best answer found so far when there     best answer so
                 was one (verified like any other), else none      far, else False
``infeasible``   no answer exists, with a proof (an exact          False
                 solver's, or a combinatorial certificate)
``no_solution``  the method ended by itself with neither an        False
                 answer nor a proof (a heuristic that found
                 nothing, a request a heuristic rejected)
``error``        the method failed                                 False
===============  ================================================  ==================

``objective`` is set whenever there is an answer; ``bound`` is finite or absent; ``gap``
is :func:`relative_gap` of the two. A result with a solution is verified like any other
(the families' ``verify``), and the command line prints the status the result holds and
exits 0 when it wrote a verified solution, 1 when it has none (a proven ``infeasible``
too: for a script a "no" is a failed solve, in every family's command), 2 on bad input.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Dict, Optional

import numpy as np

from .jsonio import num

__all__ = [
    "STATUSES",
    "RESULT_FIELDS",
    "Result",
    "Report",
    "jsonable",
    "relative_gap",
    "stopped_fields",
    "settle",
    "OPTIMALITY_TOL",
]

#: Statuses a solver may report, for every family.
STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "no_solution", "error")

#: The relative gap (:func:`relative_gap`) at or below which an answer meets its bound and
#: is ``"optimal"`` (an exact solver's own ``mip_gap``, when larger, is used instead).
OPTIMALITY_TOL = 1e-9

#: The fields every family's result has, declared once by :class:`Result`.
RESULT_FIELDS = (
    "status",
    "message",
    "method",
    "seed",
    "params",
    "timings",
    "iterations",
    "objective",
    "bound",
    "gap",
)


def jsonable(value: Any, *, compact: bool = False) -> Any:
    """``value`` with NumPy scalars and arrays turned into plain Python for JSON.

    With ``compact``, floats that are integers become ints (as in the files' numbers).
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v, compact=compact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v, compact=compact) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), compact=compact)
    if isinstance(value, np.generic):
        value = value.item()
    if compact and isinstance(value, float):
        return num(value)
    return value


def relative_gap(
    objective: Optional[float], bound: Optional[float], *, sense: str
) -> Optional[float]:
    """The one gap formula: how far an objective is from a proven bound, relatively.

    Every family's result, the integer-programming runner's progress bar and the command
    line print this number::

        gap = max(0, bound - objective) / max(|objective|, |bound|)   (sense="max")
        gap = max(0, objective - bound) / max(|objective|, |bound|)   (sense="min")

    and 0 when both are 0. Dividing by the larger of the two magnitudes makes the gap
    independent of the objective's unit (a utilisation factor below 1 and a count of tasks
    are judged alike) and keeps it in ``[0, 1]`` when both have the same sign; a bound on
    the wrong side of the objective (a solver's tolerance) gives 0.

    Parameters
    ----------
    objective, bound : float or None
        The solution's objective value and a proven bound on the optimum.
    sense : {"min", "max"}
        Direction of the objective.

    Returns
    -------
    float or None
        None when either value is missing or not finite.

    Examples
    --------
    >>> relative_gap(17.0, 20.0, sense="max")
    0.15
    >>> relative_gap(8.0, 6.0, sense="min")
    0.25
    >>> relative_gap(None, 1.0, sense="min") is None
    True
    """
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    if objective is None or bound is None:
        return None
    objective, bound = float(objective), float(bound)
    if not (np.isfinite(objective) and np.isfinite(bound)):
        return None
    scale = max(abs(objective), abs(bound))
    if scale == 0:
        return 0.0
    diff = bound - objective if sense == "max" else objective - bound
    return max(0.0, diff) / scale


def stopped_fields(method: str, method_params: dict, time_limit: float, elapsed: float) -> dict:
    """The common fields of a result stopped at its ``time_limit`` before any solution.

    What every family's stopped-result builder (used by
    :func:`coalloc._shared.params.with_time_limit`) passes to its result class: status
    ``"time_limit"``, a message naming the limit, the method, the seed and parameters it ran
    with, and the seconds it took.

    Parameters
    ----------
    method : str
        The method's name.
    method_params : dict
        The keyword arguments the method was called with (``seed`` among them).
    time_limit : float
        The limit, in seconds.
    elapsed : float
        Seconds from the call's start to the stop.

    Returns
    -------
    dict
        ``status``, ``message``, ``method``, ``seed``, ``params``, ``timings``.

    Examples
    --------
    >>> out = stopped_fields("greedy", {"seed": 3, "order": "index"}, 0.5, 0.51)
    >>> out["status"], out["seed"], out["params"]
    ('time_limit', 3, {'order': 'index', 'time_limit': 0.5})
    """
    params = {k: v for k, v in method_params.items() if k != "seed"}
    params["time_limit"] = float(time_limit)
    return {
        "status": "time_limit",
        "message": f"stopped at the time limit ({time_limit:g} s) before a solution",
        "method": method,
        "seed": method_params.get("seed"),
        "params": params,
        "timings": {"total": float(elapsed)},
    }


def settle(result: Any) -> Any:
    """Apply the one status rule to ``result`` (in place) and return it.

    The rule (the module docstring's table), for any family and method:

    1. A bound that is not finite is dropped (a bound is finite or absent).
    2. ``error`` stays ``error``.
    3. An answer (:meth:`Result._holds_solution`) whose ``objective`` meets a bound within
       the tolerance (:data:`OPTIMALITY_TOL`, or the ``mip_gap`` the method ran with when
       larger) is ``"optimal"``, however the method ended.
    4. ``"optimal"`` claimed without a bound (an exact solver's own proof) gets the
       objective as its bound; claimed with a bound it does not meet, it is ``"feasible"``
       (or stays ``"time_limit"``).
    5. ``"optimal"`` or ``"feasible"`` without an answer is ``"no_solution"``; an
       ``"infeasible"`` or ``"no_solution"`` result carries no bound (there is nothing it
       bounds).
    6. ``gap`` is recomputed from ``objective`` and ``bound``.

    The result's objective direction is its ``sense`` attribute (``"min"`` or ``"max"``).

    Parameters
    ----------
    result : Result
        A family's result, with ``sense``.

    Returns
    -------
    Result
        The same object.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from typing import ClassVar
    >>> @dataclass(kw_only=True, eq=False)
    ... class R(Result):
    ...     sense: ClassVar[str] = "max"
    >>> answer = dict(status="feasible", objective=5.0)
    >>> (settle(R(**answer, bound=5.0)).status, settle(R(**answer, bound=7.0)).status,
    ...  settle(R(**answer, bound=float("inf"))).bound)
    ('optimal', 'feasible', None)
    """
    bound = getattr(result, "bound", None)
    if bound is not None and not np.isfinite(float(bound)):
        result.bound = bound = None
    status = result.status
    if status == "error":
        return result
    if status in ("infeasible", "no_solution"):
        result.bound = result.gap = None
        return result
    has = result._holds_solution()
    sense = getattr(result, "sense", None)
    objective = getattr(result, "objective", None)
    if has and objective is not None and bound is not None and sense in ("min", "max"):
        gap = relative_gap(objective, bound, sense=sense)
        result.gap = gap
        params = getattr(result, "params", None) or {}
        mip_gap = params.get("mip_gap") if isinstance(params, dict) else None
        tol = OPTIMALITY_TOL
        if isinstance(mip_gap, (int, float)) and not isinstance(mip_gap, bool):
            tol = max(tol, float(mip_gap))
        if gap is not None and gap <= tol:
            result.status = "optimal"
            return result
        if status == "optimal":
            result.status = "feasible"
        return result
    if has and status == "optimal" and objective is not None:
        result.bound = objective
        result.gap = 0.0
        return result
    if not has:
        if status in ("optimal", "feasible"):
            result.status = "no_solution"
        if result.status in ("infeasible", "no_solution"):
            result.bound = None
            result.gap = None
        elif result.bound is None:
            result.gap = None
    return result


@dataclass(kw_only=True, eq=False)
class Result:
    """Base of every family's result (after SciPy's ``OptimizeResult``).

    A keyword-only dataclass that declares the fields of :data:`RESULT_FIELDS`; a family's
    result subclasses it with ``@dataclass(kw_only=True, eq=False)`` and adds only its own
    fields (the module docstring's example).

    Parameters
    ----------
    status : str
        One of :data:`STATUSES`: ``"optimal"`` (proven), ``"feasible"`` (a solution,
        optimality not proven), ``"time_limit"`` (a time limit or Ctrl-C stopped the solver
        before a proof: with the incumbent when there was one, see :attr:`has_solution`),
        ``"infeasible"``, ``"no_solution"`` or ``"error"`` (the module docstring's table).
    message : str, default ""
        Human-readable explanation.
    method : str, default ""
        The method that produced it.
    seed : int or None, default None
        The seed used.
    params : dict, optional
        Parameters the solver ran with, defaults filled in.
    timings : dict of str to float, optional
        Seconds per phase, with ``"total"``.
    iterations : dict of str to int, optional
        Counters per phase (also :attr:`counters`).
    objective, bound, gap : float or None, default None
        The objective value, a proven bound and the relative gap, where known.
    explanation : Explanation or None, default None
        Why the answer is a "no" (or a partial yes): a minimal conflict and the nearest
        request that fits (:mod:`coalloc._shared.explain`), attached by
        :meth:`coalloc.FamilyInstance.explain` (the command line's ``explain`` and
        ``--explain``); in :meth:`to_dict` when set.

    Examples
    --------
    Every family's result is a ``Result``:

    >>> import coalloc
    >>> request, offer = coalloc.generators.random_instance(6, 2, seed=0)
    >>> result = coalloc.solve(request, offer, seed=0)
    >>> isinstance(result, coalloc.Result), result.status, result.success
    (True, 'optimal', True)
    >>> result.status in coalloc.STATUSES, "timings" in result.to_dict()
    (True, True)

    Results compare by value (arrays too) and pickle (a batch ships them between processes):

    >>> import pickle
    >>> pickle.loads(pickle.dumps(result)) == result
    True
    """

    status: str
    message: str = ""
    method: str = ""
    seed: Optional[int] = None
    params: Dict[str, Any] = field(default_factory=dict)
    timings: Dict[str, float] = field(default_factory=dict)
    iterations: Dict[str, int] = field(default_factory=dict)
    objective: Optional[float] = None
    bound: Optional[float] = None
    gap: Optional[float] = None
    explanation: Optional[Any] = field(default=None, repr=False, compare=False)

    #: The objective's direction, ``"min"`` or ``"max"``, that :func:`settle` reads (a
    #: family sets it on its class, or as a field when it varies by instance).
    sense: ClassVar[Optional[str]] = None

    def __eq__(self, other: object) -> bool:
        """Field-by-field equality of two results of the same type (arrays by value, NaN
        equal to NaN), what the batch tests and the executors' round trips compare."""
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(_same(getattr(self, f.name), getattr(other, f.name))
                   for f in fields(self) if f.compare)  # fmt: skip

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    @property
    def has_solution(self) -> bool:
        """True when the result holds a solution.

        Status ``optimal`` or ``feasible``, or ``time_limit`` with the incumbent the
        stopped solver had (a family tells through its solution fields: an allocation, a
        mapping, an accepted request ...).
        """
        if self.status in ("optimal", "feasible"):
            return True
        return self.status == "time_limit" and self._holds_solution()

    @property
    def success(self) -> bool:
        """:attr:`has_solution`: the result holds a solution, proven optimal or not.

        Unlike SciPy's ``OptimizeResult.success`` (True only for status 0), a heuristic's
        ``feasible`` and an exact solver's ``time_limit`` with an incumbent count as
        success: the solution is there to use (and passes the family's ``verify``). Ask
        ``status == "optimal"`` for a proof.
        """
        return self.has_solution

    def _holds_solution(self) -> bool:
        """Whether the solution fields are filled (default: an objective value is known);
        families whose objective exists without a solution override it."""
        return getattr(self, "objective", None) is not None

    @property
    def counters(self) -> dict:
        """The iteration counters (the ``iterations`` field)."""
        return self.iterations

    def _payload(self) -> dict:
        """Family-specific JSON-ready entries; subclasses override."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of the result.

        Returns
        -------
        dict
            ``method``, ``status``, ``message``, the family's own fields (an assignment, a
            mapping, ...), ``timings``, ``iterations``, ``seed``, ``params`` and, where known,
            ``objective``, ``bound`` and ``gap``; every value plain JSON (lists, not arrays).

        Examples
        --------
        >>> import json
        >>> import coalloc
        >>> request, offer = coalloc.generators.random_instance(6, 2, seed=0)
        >>> data = coalloc.solve(request, offer, "greedy").to_dict()
        >>> data["method"], data["status"], len(data["assignment"])
        ('greedy', 'feasible', 6)
        >>> json.loads(json.dumps(data)) == data
        True
        """
        out: dict = {
            "method": self.method,
            "status": self.status,
            "message": self.message,
            **self._payload(),
            "timings": {k: float(v) for k, v in self.timings.items()},
            "iterations": {k: int(v) for k, v in self.iterations.items()},
            "seed": self.seed,
            "params": jsonable(self.params),
        }
        for key in ("objective", "bound", "gap"):
            value = getattr(self, key)
            if value is not None:
                out[key] = float(value)
        if self.explanation is not None:
            out["explanation"] = self.explanation.to_dict()
        return out


def _same(a: Any, b: Any) -> bool:
    """Equality of two field values, arrays (and arrays inside lists, tuples and dicts) by
    value with NaN equal to NaN."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(v, b[k]) for k, v in a.items())
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b)


class Report:
    """Base of every family's verification report.

    A report is computed by a family's ``verify`` function independently of the solvers.
    Subclasses define :attr:`ok` (the solution satisfies every constraint and any claim made
    about it), :meth:`to_dict` and ``__str__``.

    Examples
    --------
    >>> import coalloc
    >>> request, offer = coalloc.generators.random_instance(6, 2, seed=0)
    >>> result = coalloc.solve(request, offer, seed=0)
    >>> report = coalloc.verify(request, offer, result.assignment)
    >>> isinstance(report, coalloc.Report), report.ok
    (True, True)
    >>> report.to_dict()["violations"]
    {'1': 0, '2': 0, '3': 0, '4': 0, '5': 0}
    """

    @property
    def ok(self) -> bool:  # pragma: no cover - every subclass overrides
        """True when the solution satisfies every constraint and every claim checked."""
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - every subclass overrides
        """A JSON-ready dictionary of the report.

        Returns
        -------
        dict
            What the family's verifier found (counts of violations, the values it
            recomputed, whether claims match); plain JSON values only.

        Examples
        --------
        >>> import json
        >>> import coalloc
        >>> request, offer = coalloc.generators.random_instance(6, 2, seed=0)
        >>> report = coalloc.verify(request, offer, coalloc.solve(request, offer).assignment)
        >>> data = report.to_dict()
        >>> data["feasible"], json.loads(json.dumps(data)) == data
        (True, True)
        """
        raise NotImplementedError
