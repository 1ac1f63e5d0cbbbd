"""The deadline rule, the time-limit wrapper of every method, and the few value checks of
functions that have no constraint table (generators, explainers; messages name the
argument).

A method's parameter values are checked by its table (:mod:`coalloc._shared.constraints`,
``@checked``), not here: :func:`number`, :func:`integer`, :func:`choice` and
:func:`time_limit` serve the functions outside the tables, :func:`check_backend` the kernel
look-ups, and :func:`backend_name` only renames a value a table has accepted.
"""

from __future__ import annotations

import functools
import inspect
import math
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import interrupt

__all__ = [
    "number",
    "integer",
    "choice",
    "MATRIX_FORMATS",
    "time_limit",
    "deadline",
    "remaining",
    "expired",
    "with_time_limit",
    "timed_method",
    "offer_incumbent",
    "time_up",
    "time_left",
    "stop_now",
    "BACKENDS",
    "check_backend",
    "backend_name",
    "check_keywords",
]


#: How a writer stores a sparse matrix (a request's bandwidth, a task graph's volumes):
#: ``"dense"`` rows, ``"edges"`` triples, or ``"auto"`` (the smaller).
MATRIX_FORMATS = ("auto", "dense", "edges")


def _is_number(value: Any) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, float, np.number))


def number(value: Any, argname: str, *, allow_zero: bool = False) -> float:
    """A finite number ``> 0`` (``>= 0`` with ``allow_zero``) as a float."""
    if not _is_number(value):
        raise TypeError(f"{argname} must be a number, got {type(value).__name__}")
    v = float(value)
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{argname} must be a finite number > 0, got {value!r}")
    return v


def integer(value: Any, argname: str, lo: int, hi: Optional[int] = None) -> int:
    """An int (NumPy integers accepted, bools not) ``>= lo`` (and ``<= hi``: every count
    parameter of a method can have an upper bound, so that none makes it run for ever)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{argname} must be an int, got {type(value).__name__}")
    if value < lo:
        raise ValueError(f"{argname} must be >= {lo}, got {value}")
    if hi is not None and value > hi:
        raise ValueError(f"{argname} must be <= {hi:.0e}, got {value}")
    return int(value)


def choice(value: Any, options: Sequence[str], argname: str) -> str:
    """One of ``options``."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{argname} must be one of {tuple(options)}, got {value!r}")
    return value


def time_limit(value: Any, argname: str = "time_limit") -> Optional[float]:
    """None or a positive finite number of seconds."""
    if value is None:
        return None
    if not _is_number(value):
        raise ValueError(f"{argname} must be a positive number of seconds or None, got {value!r}")
    if not (math.isfinite(float(value)) and float(value) > 0):
        raise ValueError(f"{argname} must be a positive finite number of seconds, got {value!r}")
    return float(value)


def deadline(
    limit: Any, started: Optional[float] = None, argname: str = "time_limit"
) -> Optional[float]:
    """The one deadline rule: the instant a call must stop, counted from the call's start.

    Every method of every family takes ``time_limit`` (seconds, default None) and turns it
    into a deadline with this function, on the :func:`time.perf_counter` clock, counted
    from ``started`` (the ``time.perf_counter()`` value the method read on entry; None: now).

    Parameters
    ----------
    limit : float or None
        Seconds the call may take (validated by :func:`time_limit`: a ``ValueError`` naming
        ``argname`` for a negative, zero, NaN or infinite value).
    started : float, optional
        The call's start, a :func:`time.perf_counter` value.
    argname : str
        The name the error message gives the argument.

    Returns
    -------
    float or None
        ``started + limit``, or None without a limit.

    Examples
    --------
    >>> deadline(None) is None
    True
    >>> deadline(2.5, started=10.0)
    12.5
    """
    limit = time_limit(limit, argname)
    if limit is None:
        return None
    return (time.perf_counter() if started is None else float(started)) + limit


def remaining(when: Optional[float]) -> Optional[float]:
    """Seconds left until the deadline ``when`` (None: no deadline; never below 0).

    Examples
    --------
    >>> remaining(None) is None
    True
    >>> remaining(0.0)
    0.0
    """
    if when is None:
        return None
    return max(0.0, when - time.perf_counter())


def expired(when: Optional[float]) -> bool:
    """True when the deadline ``when`` has passed (never without a deadline).

    Examples
    --------
    >>> expired(None), expired(0.0)
    (False, True)
    """
    return when is not None and time.perf_counter() >= when


class _TimeLimitReached(Exception):
    """Raised inside a :func:`with_time_limit` call when its own deadline passes."""


class _Until(interrupt.Scope):
    """An interrupt scope (the compiled kernels and the Python loops poll it) that raises
    :class:`_TimeLimitReached` once ``when`` (a :func:`time.perf_counter` value) passes;
    the error of an outer scope (a batch's timeout, Ctrl-C) still goes through unchanged.

    It also holds the method's incumbent: the builder of the best answer found so far,
    set by :func:`offer_incumbent`, which :func:`with_time_limit` returns when the
    deadline stops the method."""

    def __init__(self, when: float) -> None:
        super().__init__()
        self.when = when
        self.best: Optional[Callable[[], Any]] = None
        #: When the first answer was offered (a perf_counter value), None before.
        self.first: Optional[float] = None

    @property
    def cancelled(self) -> bool:
        """True past the deadline too: what the solver supervisors of the MILP runner ask
        before they stop a running HiGHS, CBC or CP-SAT (and keep its incumbent)."""
        return time.perf_counter() >= self.when or super().cancelled

    def raise_if_cancelled(self, detail: Optional[str] = None) -> None:
        if time.perf_counter() >= self.when:
            raise _TimeLimitReached()
        super().raise_if_cancelled(detail)


def _budget() -> Optional[_Until]:
    """The innermost :func:`with_time_limit` scope of the calling thread, or None."""
    scope = interrupt.current()
    while scope is not None and not isinstance(scope, _Until):
        scope = scope._outer
    return scope


def offer_incumbent(build: Callable[[], Any]) -> None:
    """Tell the time limit in force the best answer found so far.

    A method run under :func:`with_time_limit` calls this each time it holds a better
    complete answer (after a phase, a restart, a level of a multilevel scheme ...).
    ``build`` is a function of no arguments that returns the family's result holding
    that answer; it is called only if the deadline stops the method before it returns
    (so offering costs a closure, not a result), and the result it builds is returned
    with status ``"time_limit"``. The builder must not depend on state the method
    changes afterwards: capture copies. Without a time limit this does nothing.

    Parameters
    ----------
    build : callable
        ``build() -> Result``.

    Examples
    --------
    >>> from coalloc._shared.result import Result
    >>> class Answer(Result):
    ...     def __init__(self, value):
    ...         self.status, self.message, self.objective, self.bound = "feasible", "", value, None
    >>> def count(n, *, seed=0):
    ...     offer_incumbent(lambda: Answer(n))
    ...     while True:             # a method that never ends by itself
    ...         interrupt.check()
    >>> timed = with_time_limit(count, lambda *a, **k: "nothing")
    >>> answer = timed(3, time_limit=0.01)
    >>> answer.status, answer.objective
    ('time_limit', 3)
    """
    scope = _budget()
    if scope is not None:
        scope.best = build
        if scope.first is None:
            scope.first = time.perf_counter()


def time_up() -> bool:
    """True once the deadline of the :func:`with_time_limit` call in force has passed.

    For Python loops that stop by themselves and return their best answer (with status
    ``"time_limit"``) rather than let the deadline's error unwind them. False without a
    time limit.

    Returns
    -------
    bool
        Whether the deadline has passed.

    Examples
    --------
    >>> time_up()
    False
    """
    scope = _budget()
    return scope is not None and time.perf_counter() >= scope.when


def time_left() -> Optional[float]:
    """Seconds left until the deadline of the :func:`with_time_limit` call in force (never
    below 0), or None without a time limit: what a kernel that checks its own deadline is
    given.

    Returns
    -------
    float or None
        Seconds left, or None without a time limit.

    Examples
    --------
    >>> time_left() is None
    True
    """
    scope = _budget()
    return None if scope is None else max(0.0, scope.when - time.perf_counter())


def stop_now() -> None:
    """Stop the method now as its time limit does (for a kernel that returned at its own
    copy of the deadline, a moment before the shared clock says so): raises the stop that
    :func:`with_time_limit` turns into the best answer offered so far. Does nothing without
    a time limit.

    Examples
    --------
    >>> stop_now()  # no time limit in force: nothing happens
    """
    if _budget() is not None:
        raise _TimeLimitReached()


def mark_stopped(result: Any, time_limit: float, elapsed: float) -> Any:
    """``result`` (an incumbent) as the answer of a method its ``time_limit`` stopped.

    Status ``"time_limit"``, a message that says the answer is the best found so far,
    ``params["time_limit"]`` and ``timings["total"]`` set; then the one status rule
    (:func:`coalloc._shared.result.settle`), so an incumbent that meets a proven bound is
    ``"optimal"``.
    """
    from .result import settle

    result.status = "time_limit"
    result.message = (
        f"stopped at the time limit ({time_limit:g} s); the answer is the best found so far"
    )
    if isinstance(getattr(result, "params", None), dict):
        result.params["time_limit"] = float(time_limit)
    if isinstance(getattr(result, "timings", None), dict):
        result.timings["total"] = float(elapsed)
    return settle(result)


def with_time_limit(func: Callable[..., Any], stopped: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` (a method without a time limit of its own) taking ``time_limit`` too.

    The method runs as before when ``time_limit`` is None (its answer is unchanged, and so
    it is whenever it ends before the deadline). With a limit, the deadline is
    :func:`deadline` from the call's start and the method stops at it between iterations:
    the compiled kernels poll it about every 50 ms and the Python loops at each step
    (:mod:`coalloc._shared.interrupt`). The call then returns the best answer the method
    had offered with :func:`offer_incumbent`, with status ``"time_limit"``
    (:func:`mark_stopped`), and ``timings["first_answer"]`` says when the first answer was
    offered (seconds from the call's start); when it had offered none, ``stopped(*args,
    method_params=kwargs, time_limit=limit, elapsed=seconds)``, the family's result with
    status ``"time_limit"`` and no solution.

    Parameters
    ----------
    func : callable
        The method: its problem arguments positionally, its parameters by keyword.
    stopped : callable
        The family's builder of a stopped result without a solution.

    Returns
    -------
    callable
        The method with a keyword-only ``time_limit=None`` added to its signature.

    Examples
    --------
    >>> def count(n, *, seed=0):
    ...     return sum(range(n))
    >>> timed = with_time_limit(count, lambda *a, **k: "stopped")
    >>> timed(4, time_limit=60), timed(4)
    (6, 6)
    """

    @functools.wraps(func)
    def run(*args: Any, time_limit: Any = None, **kwargs: Any) -> Any:
        started = time.perf_counter()
        when = deadline(time_limit, started)
        if when is None:
            return func(*args, **kwargs)
        scope = _Until(when)
        try:
            with scope:
                result = func(*args, **kwargs)
        except _TimeLimitReached:
            elapsed = time.perf_counter() - started
            if scope.best is None:
                return stopped(*args, method_params=kwargs, time_limit=float(time_limit),
                               elapsed=elapsed)  # fmt: skip
            result = mark_stopped(scope.best(), float(time_limit), elapsed)
        timings = getattr(result, "timings", None)
        if scope.first is not None and isinstance(timings, dict):
            timings.setdefault("first_answer", scope.first - started)
        return result

    sig = inspect.signature(func)
    if "time_limit" not in sig.parameters:
        params = list(sig.parameters.values())
        extra = inspect.Parameter(
            "time_limit", inspect.Parameter.KEYWORD_ONLY, default=None,
            annotation="Optional[float]",
        )  # fmt: skip
        tail = [p for p in params if p.kind is p.VAR_KEYWORD]
        params = [p for p in params if p.kind is not p.VAR_KEYWORD] + [extra] + tail
        run.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return run


def timed_method(
    func: Callable[..., Any],
    name: str,
    stopped: Callable[..., Any],
    *,
    exit: Optional[Callable[[Callable[..., Any]], Callable[..., Any]]] = None,
) -> Callable[..., Any]:
    """A family's method ``func`` registered as ``name``, taking ``time_limit``.

    The one wrapper the families' method registries use (each wrote its own ``_timed``):
    :func:`with_time_limit` with the family's builder of a stopped result, told the method's
    name, and the family's exit (its status rule) around it when it has one.

    Parameters
    ----------
    func : callable
        The method (its problem arguments positionally, its parameters by keyword).
    name : str
        The method's name in the registry (the stopped result's ``method``).
    stopped : callable
        The family's ``stopped_result(*problem, method=..., method_params=..., time_limit=...,
        elapsed=...)``.
    exit : callable, optional
        Wraps the timed method (the collective family's ``settled``).

    Returns
    -------
    callable
        The method with a keyword-only ``time_limit=None``.

    Examples
    --------
    >>> def count(n, *, seed=0):
    ...     return sum(range(n))
    >>> method = timed_method(count, "count", lambda *a, **k: "stopped")
    >>> method(4, time_limit=60), "time_limit" in str(inspect.signature(method))
    (6, True)
    """
    run = with_time_limit(func, functools.partial(stopped, method=name))
    return run if exit is None else exit(run)


#: The kernel choices of every family's ``backend=``: the compiled kernels or their NumPy
#: twins (the reference implementations that give the same answers).
BACKENDS = ("compiled", "numpy")
#: Older spellings still accepted (the testbed and the task mapper's clustering said
#: ``"python"`` for their twins).
_BACKEND_ALIASES = {"python": "numpy"}


def check_backend(backend: Any, argname: str = "backend") -> str:
    """The one check of a kernel choice: ``"compiled"`` or ``"numpy"`` (``"python"`` is an
    accepted older name of ``"numpy"``).

    Parameters
    ----------
    backend : str
        What the caller passed.
    argname : str
        The name the error message gives the argument.

    Returns
    -------
    str
        ``"compiled"`` or ``"numpy"``.

    Raises
    ------
    ValueError
        For anything else; the message names ``argname`` and both choices.

    Examples
    --------
    >>> check_backend("compiled"), check_backend("python")
    ('compiled', 'numpy')
    """
    if isinstance(backend, str):
        backend = _BACKEND_ALIASES.get(backend, backend)
        if backend in BACKENDS:
            return backend
    raise ValueError(
        f"{argname} must be one of {BACKENDS} (the compiled kernels or their NumPy twins), "
        f"got {backend!r}"
    )


def backend_name(backend: str) -> str:
    """A kernel choice the method's table has accepted, under its current name (``"python"``,
    the older name of ``"numpy"``, becomes ``"numpy"``); no check: the table made it.

    Examples
    --------
    >>> backend_name("python"), backend_name("compiled")
    ('numpy', 'compiled')
    """
    return _BACKEND_ALIASES.get(backend, backend)


def check_method(method: Any, methods: Any) -> str:
    """``method`` if it names one of ``methods`` (a family's registry), else a ValueError
    that lists them: the one check of a method name every family's entry points share."""
    if not isinstance(method, str) or method not in methods:
        raise ValueError(f"method must be one of {sorted(methods)}, got {method!r}")
    return method


def check_keywords(func: Any, method: str, names: Any, n_problem_args: int = 2) -> None:
    """Reject keyword names that ``func`` (a family's method) does not take.

    The first ``n_problem_args`` parameters of ``func`` (the problem, e.g. request and offer)
    and ``seed`` are not parameters a caller passes by name. Used by the batch runner to fail
    before any work starts.
    """
    import inspect

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return
    problem = set(list(sig.parameters)[:n_problem_args])
    known = (
        {
            name
            for name, p in sig.parameters.items()
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        }
        - problem
        - {"seed"}
    )
    known |= set(getattr(func, "__renamed__", {}))  # old spellings a shim still takes
    unknown = sorted(set(names) - known)
    if unknown:
        raise TypeError(
            f"method {method!r} takes no parameter(s) {unknown}; it takes {sorted(known)}"
        )
