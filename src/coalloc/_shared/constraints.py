"""Parameters declared once: a constraint table per method (after scikit-learn's
``_param_validation``).

A family declares, next to its methods, one table per method: parameter name -> a list of
constraints, any of which a value may satisfy (``None`` in the list: None is accepted)::

    GREEDY = {
        "order": [Options({"index", "random", "degree"})],
        "restarts": [Interval(Integral, 1, None, closed="left")],
        "time_limit": TIME_LIMIT,
    }

The table is the one statement of what a parameter takes. :func:`validate` checks the
parameters a caller passed against it (each family's solve entry point, at the call), and
:meth:`coalloc._shared.family.FamilyInstance.check_params` does the same before a batch
starts; the message names the parameter and what it takes. :func:`invalid_values` derives,
from the same table, values each parameter must refuse (the parametrized test
``tests/shared/test_param_tables.py`` runs them through every family and method), and
:func:`check_value` is the imperative form of one check, for a function's own argument.

Validation costs a dictionary look-up and an ``isinstance`` or two per parameter passed
(parameters left at their default are not checked: the test checks the defaults once).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
from numbers import Integral, Real
from typing import Any, Callable, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

__all__ = [
    "InvalidParameterError",
    "Constraint",
    "Interval",
    "Options",
    "Boolean",
    "InstanceOf",
    "HasMethod",
    "Relation",
    "Table",
    "AnyGiven",
    "NotBelow",
    "Predicate",
    "NO_VALIDATION",
    "TIME_LIMIT",
    "EXPLAIN_TIME",
    "BACKEND",
    "MIP_GAP",
    "THREADS",
    "VERBOSE",
    "solvers",
    "validate",
    "check_value",
    "checked",
    "describe",
    "invalid_values",
]

#: A table entry that declares a parameter without checking it (a value the method itself
#: checks in depth: a permutation, a mapping of names, an executor ...).
NO_VALIDATION = "no_validation"


class InvalidParameterError(ValueError, TypeError):
    """A parameter's value its table refuses (a ``ValueError`` and a ``TypeError``, as
    scikit-learn's, so callers that caught either before still do).

    Examples
    --------
    >>> try:
    ...     validate({"restarts": [Interval(Integral, 1, None, closed="left")]},
    ...              {"restarts": 0})
    ... except ValueError as exc:
    ...     print(exc)
    restarts must be an integer in [1, inf), got 0
    """


class Constraint:
    """One constraint of a parameter: :meth:`accepts`, a description, and values it refuses."""

    def accepts(self, value: Any) -> bool:  # pragma: no cover - every subclass overrides
        """Whether ``value`` satisfies the constraint."""
        raise NotImplementedError

    def __str__(self) -> str:  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def refused(self) -> List[Any]:
        """Values just outside the constraint (for the generated tests)."""
        return [object()]


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


class Interval(Constraint):
    """A number in an interval: ``Interval(Real, 0, None, closed="neither")`` is ``(0, inf)``.

    Parameters
    ----------
    kind : {numbers.Integral, numbers.Real}
        Integral: a Python or NumPy integer (bools refused); Real: any finite number (ints
        included, bools and NaN refused).
    left, right : number or None
        The ends (None: unbounded).
    closed : {"both", "left", "right", "neither"}, default "both"
        Which ends belong to the interval.

    Examples
    --------
    >>> Interval(Real, 0, 1, closed="left").accepts(0.0), Interval(Real, 0, 1).accepts(2)
    (True, False)
    >>> str(Interval(Integral, 1, None, closed="left"))
    'an integer in [1, inf)'
    """

    def __init__(self, kind: type, left: Optional[float], right: Optional[float], *,
                 closed: str = "both") -> None:  # fmt: skip
        if kind not in (Integral, Real):
            raise ValueError(f"kind must be numbers.Integral or numbers.Real, got {kind!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be both, left, right or neither, got {closed!r}")
        self.kind, self.left, self.right, self.closed = kind, left, right, closed
        self._lo_open = closed in ("right", "neither")
        self._hi_open = closed in ("left", "neither")

    def accepts(self, value: Any) -> bool:
        # exact types first: this runs at every call of a solve (bool is not int here)
        t = type(value)
        if t is int or (t is not bool and isinstance(value, np.integer)):
            pass
        elif t is float or isinstance(value, np.floating):
            if self.kind is Integral or not math.isfinite(value):
                return False
        else:
            return False
        lo, hi = self.left, self.right
        if lo is not None and (value < lo or (self._lo_open and value == lo)):
            return False
        if hi is not None and (value > hi or (self._hi_open and value == hi)):
            return False
        return True

    def __str__(self) -> str:
        what = "an integer" if self.kind is Integral else "a finite number"
        lo = "-inf" if self.left is None else _number(self.left)
        hi = "inf" if self.right is None else _number(self.right)
        a = "[" if self.closed in ("both", "left") and self.left is not None else "("
        b = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        return f"{what} in {a}{lo}, {hi}{b}"

    def refused(self) -> List[Any]:
        out: List[Any] = ["1", True, float("nan")]
        if self.kind is Integral:
            out.append(1.5)
        step = 1 if self.kind is Integral else 0.5
        if self.left is not None:
            out.append(self.left if self.closed in ("right", "neither") else self.left - step)
        if self.right is not None:
            out.append(self.right if self.closed in ("left", "neither") else self.right + step)
        return out


def _number(x: float) -> str:
    return str(x) if isinstance(x, (int, np.integer)) else f"{x:g}"


class Options(Constraint):
    """One of a set of strings.

    Examples
    --------
    >>> Options({"index", "random"}).accepts("random"), str(Options({"b", "a"}))
    (True, "one of ('a', 'b')")
    """

    def __init__(self, options: Iterable[str]) -> None:
        self.options = tuple(sorted(options))

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return f"one of {self.options}"

    def refused(self) -> List[Any]:
        return ["no-such-option", 1]


class _Backend(Options):
    """The kernel choice: said as :func:`coalloc._shared.params.check_backend` says it (one
    message for every family and layer; ``"python"`` is accepted, the older name of
    ``"numpy"``, and not advertised)."""

    def __str__(self) -> str:
        return "one of ('compiled', 'numpy') (the compiled kernels or their NumPy twins)"


class Boolean(Constraint):
    """A bool (Python or NumPy).

    Examples
    --------
    >>> Boolean().accepts(False), Boolean().accepts(0)
    (True, False)
    """

    def accepts(self, value: Any) -> bool:
        return _is_bool(value)

    def __str__(self) -> str:
        return "a bool"

    def refused(self) -> List[Any]:
        return ["yes", 2]


class InstanceOf(Constraint):
    """An instance of a type (or of one of several).

    Examples
    --------
    >>> InstanceOf(dict, "a dict").accepts({}), str(InstanceOf(dict, "a dict"))
    (True, 'a dict')
    """

    def __init__(self, types: Union[type, Tuple[type, ...]], what: str) -> None:
        self.types, self.what = types, what

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types) and not (
            _is_bool(value) and not (isinstance(self.types, type) and self.types is bool)
        )

    def __str__(self) -> str:
        return self.what

    def refused(self) -> List[Any]:
        return [object()]


class HasMethod(Constraint):
    """An object with a callable attribute (duck typing: an executor is anything with
    ``submit``).

    Examples
    --------
    >>> import concurrent.futures as cf
    >>> HasMethod("submit", "an Executor").accepts(cf.ThreadPoolExecutor), HasMethod(
    ...     "submit", "an Executor").accepts(3)
    (True, False)
    """

    def __init__(self, method: str, what: str) -> None:
        self.method, self.what = method, what

    def accepts(self, value: Any) -> bool:
        return callable(getattr(value, self.method, None))

    def __str__(self) -> str:
        return self.what

    def refused(self) -> List[Any]:
        return [object(), "executor"]


class Relation:
    """A constraint between parameters of one call, checked after each value passed its
    own entry: :meth:`check` gets a look-up of every parameter (the value passed, else the
    method's default) and returns the message of a breach, or None.

    A family declares its relations beside its tables (``RELATIONS``: name -> list), and
    :func:`checked` applies them at each call of the method.
    """

    names: Tuple[str, ...] = ()

    def check(self, get: Any) -> Optional[str]:  # pragma: no cover - every subclass overrides
        """The message of a breach (``get(name)``: a parameter's value), or None."""
        raise NotImplementedError


class AnyGiven(Relation):
    """At least one of ``names`` is not None.

    Examples
    --------
    >>> AnyGiven("time_limit", "rounds", why="the anytime search").check(
    ...     {"time_limit": None, "rounds": None}.get)
    'the anytime search needs time_limit or rounds (both None)'
    """

    def __init__(self, *names: str, why: str) -> None:
        self.names, self.why = names, why

    def check(self, get: Any) -> Optional[str]:
        if all(get(n) is None for n in self.names):
            both = "both" if len(self.names) == 2 else "all"
            return f"{self.why} needs {' or '.join(self.names)} ({both} None)"
        return None


class NotBelow(Relation):
    """``name`` (when not None) is at least ``other``.

    Examples
    --------
    >>> NotBelow("m_max", "m_init").check({"m_max": 2, "m_init": 4}.get)
    'm_max must be >= m_init (4), got 2'
    """

    def __init__(self, name: str, other: str) -> None:
        self.names, self.name, self.other = (name, other), name, other

    def check(self, get: Any) -> Optional[str]:
        value, floor = get(self.name), get(self.other)
        if value is not None and floor is not None and value < floor:
            return f"{self.name} must be >= {self.other} ({floor!r}), got {value!r}"
        return None


Constraints = Union[str, Sequence[Any]]


class Table(dict):
    """A method's table with relations between its parameters: a ``dict`` (parameter ->
    constraints) that also holds ``relations``, checked by :func:`validate` when all their
    parameters are passed (so ``check_params`` refuses them before a batch starts) and by
    :func:`checked` at every call (a parameter left out: its default).

    Examples
    --------
    >>> t = Table({"lo": [Interval(Integral, 0, 9)], "hi": [Interval(Integral, 0, 9)]},
    ...           relations=[NotBelow("hi", "lo")])
    >>> validate(t, {"lo": 3, "hi": 5}); validate(t, {"hi": 1})
    >>> validate(t, {"lo": 3, "hi": 1})
    Traceback (most recent call last):
    ...
    coalloc._shared.constraints.InvalidParameterError: hi must be >= lo (3), got 1
    """

    def __init__(self, entries: Mapping[str, Any], *, relations: Sequence[Relation] = ()) -> None:
        super().__init__(entries)
        self.relations = tuple(relations)


#: ``time_limit`` of every method: seconds, a positive finite number, or None.
TIME_LIMIT: List[Any] = [Interval(Real, 0, None, closed="neither"), None]
#: ``backend`` of every method with kernels: the compiled ones or their NumPy twins
#: (``"python"``: the older name of ``"numpy"``).
BACKEND: List[Any] = [_Backend({"compiled", "numpy", "python"})]
#: ``time_limit`` of the explainers (``explain_*``): seconds, a positive finite number.
EXPLAIN_TIME: List[Any] = [Interval(Real, 0, None, closed="neither")]
#: ``mip_gap`` of the exact methods: a relative gap in ``[0, 1)``.
MIP_GAP: List[Any] = [Interval(Real, 0, 1, closed="left")]
#: ``threads`` of the exact methods.
THREADS: List[Any] = [Interval(Integral, 1, None, closed="left")]
#: ``verbose`` of the exact methods.
VERBOSE: List[Any] = [Boolean()]


def solvers(*names: str) -> List[Any]:
    """The ``solver`` entry of an exact method: one of ``names``.

    Parameters
    ----------
    *names : str
        The integer-programming solvers the method takes.

    Returns
    -------
    list
        The table entry.

    Examples
    --------
    >>> str(solvers("highs", "cbc")[0])
    "one of ('cbc', 'highs')"
    """
    return [Options(names)]


def describe(constraints: Constraints) -> str:
    """What a table entry accepts, in words.

    Parameters
    ----------
    constraints : list
        A table entry.

    Returns
    -------
    str
        The constraints joined by "or".

    Examples
    --------
    >>> describe(TIME_LIMIT)
    'a finite number in (0, inf) or None'
    """
    if constraints == NO_VALIDATION:
        return "anything"
    parts = [str(c) for c in constraints if c is not None]
    if None in constraints:
        parts.append("None")
    return " or ".join(parts)


def _accepted(value: Any, constraints: Constraints) -> bool:
    if constraints == NO_VALIDATION:
        return True
    for c in constraints:
        if c is None:
            if value is None:
                return True
        elif c.accepts(value):
            return True
    return False


def check_value(value: Any, argname: str, constraints: Constraints) -> Any:
    """``value`` if it satisfies one of ``constraints``, else :class:`InvalidParameterError`.

    Parameters
    ----------
    value : object
        What the caller passed.
    argname : str
        The name the message gives it.
    constraints : list
        A table entry.

    Returns
    -------
    object
        ``value``, unchanged.

    Raises
    ------
    InvalidParameterError
        The message names ``argname``, what it takes and what it got.

    Examples
    --------
    >>> check_value(3, "block", [Interval(Integral, 1, 10**6)])
    3
    """
    if not _accepted(value, constraints):
        raise InvalidParameterError(f"{argname} must be {describe(constraints)}, got {value!r}")
    return value


def validate(table: Mapping[str, Constraints], params: Mapping[str, Any]) -> None:
    """Check every parameter of ``params`` that ``table`` declares.

    Names the table does not declare are left to the name check
    (:func:`coalloc._shared.params.check_keywords`).

    Parameters
    ----------
    table : mapping
        Parameter name -> constraints (a list; ``None`` in it accepts None), or
        :data:`NO_VALIDATION`.
    params : mapping
        The parameters passed.

    Raises
    ------
    InvalidParameterError
        For the first value its constraints refuse.

    Examples
    --------
    >>> validate({"time_limit": TIME_LIMIT}, {"time_limit": None})
    >>> validate({"time_limit": TIME_LIMIT}, {"time_limit": -1})
    Traceback (most recent call last):
    ...
    coalloc._shared.constraints.InvalidParameterError: time_limit must be a finite number in (0, inf) or None, got -1
    """  # noqa: E501
    for name, value in params.items():
        constraints = table.get(name)
        if constraints is not None and not _accepted(value, constraints):
            raise InvalidParameterError(f"{name} must be {describe(constraints)}, got {value!r}")
    for relation in getattr(table, "relations", ()):
        # a relation among the values passed (one left to its default: at the call)
        if all(n in params for n in relation.names):
            message = relation.check(params.get)
            if message is not None:
                raise InvalidParameterError(message)


def invalid_values(constraints: Constraints) -> List[Any]:
    """Values a parameter with these constraints must refuse (the generated tests' input).

    Parameters
    ----------
    constraints : list
        A table entry.

    Returns
    -------
    list
        The candidates of every constraint that no constraint of the entry accepts (empty
        for :data:`NO_VALIDATION`).

    Examples
    --------
    >>> invalid_values(TIME_LIMIT)
    ['1', True, nan, 0]
    """
    if constraints == NO_VALIDATION:
        return []
    out: List[Any] = []
    for c in constraints:
        if c is None:
            continue
        for v in c.refused():
            if not _accepted(v, constraints) and not any(_same(v, w) for w in out):
                out.append(v)
    if None not in constraints and not _accepted(None, constraints):
        out.append(None)
    return out


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


def checked(
    module: str, method: str, *, tables: str = "PARAMS", relations: Optional[str] = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A method that validates its parameters by its table, at every call.

    The one place a method's parameter values are checked: the decorated function refuses
    (:class:`InvalidParameterError`, naming the parameter) every value passed, by keyword or
    by position, that its table entry refuses, then every relation of ``RELATIONS[relations]``
    (over the values passed and the defaults), and the table's own relations
    (:class:`Table`). Values left at their default are not checked
    (``tests/shared/test_param_tables.py`` checks the defaults). The family's entry point
    validates the same table before the call, so a batch refuses before it starts; the
    decorator covers a direct call of the method.

    The table is looked up at the first call (``module`` imports the method's module to
    read its option names, so it cannot be imported when the method is defined).

    Parameters
    ----------
    module : str
        The family's constraints module (``"coalloc.ctaap.constraints"``).
    method : str
        The method's name in the table.
    tables : str, default "PARAMS"
        The module's mapping of method -> table (``"GAP_PARAMS"``).
    relations : str, optional
        A key of the module's ``RELATIONS``: the relations between parameters to check.

    Returns
    -------
    callable
        A decorator; the wrapped method keeps its name, docstring and signature.

    Examples
    --------
    >>> import sys, types
    >>> sys.modules["toy_constraints"] = types.SimpleNamespace(
    ...     PARAMS={"count": {"k": [Interval(Integral, 1, 9)]}})
    >>> @checked("toy_constraints", "count")
    ... def count(items, k=1):
    ...     return k
    >>> count([], k=3)
    3
    >>> count([], 0)
    Traceback (most recent call last):
    ...
    coalloc._shared.constraints.InvalidParameterError: k must be an integer in [1, 9], got 0
    """

    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        sig = inspect.signature(func)
        positional = [p.name for p in sig.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]  # fmt: skip
        defaults = {n: p.default for n, p in sig.parameters.items()
                    if p.default is not inspect.Parameter.empty}  # fmt: skip
        loaded: List[Any] = []

        def load() -> Tuple[Mapping[str, Constraints], Sequence[Relation]]:
            mod = importlib.import_module(module)
            table = getattr(mod, tables)[method]
            rel = getattr(mod, "RELATIONS", {}).get(relations, ()) if relations else ()
            loaded.append((table, (*getattr(table, "relations", ()), *rel)))
            return loaded[0]

        @functools.wraps(func)
        def run(*args: Any, **kwargs: Any) -> Any:
            table, rel = loaded[0] if loaded else load()
            for name, value in zip(positional, args):
                entry = table.get(name)
                if entry is not None and not _accepted(value, entry):
                    raise InvalidParameterError(f"{name} must be {describe(entry)}, got {value!r}")
            validate(table, kwargs)
            if rel:
                given = dict(zip(positional, args))
                given.update(kwargs)

                def get(name: str) -> Any:
                    return given[name] if name in given else defaults.get(name)

                for r in rel:
                    message = r.check(get)
                    if message is not None:
                        raise InvalidParameterError(message)
            return func(*args, **kwargs)

        return run

    return wrap


class Predicate(Relation):
    """A relation written as a test of some parameters: ``test(*values)`` must be true.

    Parameters
    ----------
    names : tuple of str
        The parameters ``test`` takes, in order.
    test : callable
        True when the values go together.
    message : str
        The breach, formatted with the values by name (``"{beta0}"``).

    A value that is None (not given, and no default known) is not tested.

    Examples
    --------
    >>> r = Predicate(("lo", "hi"), lambda lo, hi: lo <= hi, "lo={lo} is above hi={hi}")
    >>> r.check({"lo": 3, "hi": 1}.get)
    'lo=3 is above hi=1'
    """

    def __init__(self, names: Sequence[str], test: Callable[..., bool], message: str) -> None:
        self.names, self.test, self.message = tuple(names), test, message

    def check(self, get: Any) -> Optional[str]:
        values = [get(n) for n in self.names]
        if any(v is None for v in values) or self.test(*values):  # None: nothing to relate
            return None
        return self.message.format(**dict(zip(self.names, values)))
