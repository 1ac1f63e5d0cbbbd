"""What every family's subcommands share: options written once.

The number and table-derived option types, the solver, seed and output options, so that no
family writes an option twice. The batch runner (``solve-batch``'s options and
:func:`run_batch`, with its Dask and Slurm-array branches) is :mod:`._batch`, and the
``--format`` option (its words from the specs, :func:`read_as`) is :mod:`._format`, both
re-exported here.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from numbers import Integral
from typing import Any, List, Mapping, Optional, Sequence

__all__ = [
    "Parser",
    "Integer",
    "Real",
    "count",
    "seconds",
    "table_type",
    "add_table_option",
    "SEED",
    "OutputPath",
    "add_output_option",
    "param",
    "jobs",
    "add_params",
    "add_seed",
    "add_output",
    "add_verbose",
    "add_exact_options",
    "DeprecatedAlias",
    "solver_params",
    "describe_bound",
    "describe_gap",
    "add_batch_options",
    "run_batch",
    "format_table",
    "add_format",
    "add_format_of",
    "line_formats_of",
    "read_as",
]


class Parser(argparse.ArgumentParser):
    """The ``coalloc`` command's parser (and, through ``add_subparsers``, every subparser's).

    A command-line error is one line on standard error, ``coalloc: error: ...`` (the
    subcommand named), and exit status 2, like every other input error of the command;
    argparse's own prints a usage block first. ``--help`` is unchanged.
    """

    def error(self, message: str):  # type: ignore[override]
        """Print ``message`` as one line and exit with status 2."""
        where = self.prog.split(" ", 1)[1] + ": " if " " in self.prog else ""
        text = " ".join(f"{where}{message}".split())
        self.exit(2, f"coalloc: error: {text}\n")


#: The ASCII decimal notations the numeric options take: Python's ``int()`` and ``float()``
#: also read ``1_0``, Unicode digits (``١٢``), surrounding spaces, ``inf`` and ``nan``.
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)
_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
#: Longest numeral read (a 400-digit number is refused before it is converted).
_MAX_DIGITS = 40

INT64_MAX = 2**63 - 1


def _range_text(lo: Any, hi: Any, lo_open: bool = False) -> str:
    if lo is not None and hi is not None:
        return f"in [{lo:g}, {hi:g}]" if not lo_open else f"in ({lo:g}, {hi:g}]"
    if lo is not None:
        return f"{'>' if lo_open else '>='} {lo:g}"
    if hi is not None:
        return f"<= {hi:g}"
    return "finite"


class Integer:
    """An argparse ``type``: an integer in ASCII decimal digits within ``[lo, hi]``.

    Parameters
    ----------
    lo, hi : int, optional
        The range (``hi`` defaults to the largest 64-bit integer, so nothing wraps).
    what : str
        What the number is, for the message (``"a count"``).
    count : bool
        A count (of items, workers, seconds ...): ``-1`` is refused (the tests check it).
    """

    def __init__(self, lo: Optional[int] = None, hi: Optional[int] = INT64_MAX, *,
                 what: str = "an integer", count: bool = False) -> None:  # fmt: skip
        self.lo, self.hi, self.what, self.count = lo, hi, what, count
        self.__name__ = "integer"

    def expectation(self) -> str:
        hi = {INT64_MAX: None, 2**64 - 1: None}.get(self.hi, self.hi)
        lo = "" if self.lo is None else f"{self.lo:d}"
        if hi is None:
            top = {INT64_MAX: "2**63", 2**64 - 1: "2**64"}.get(self.hi)
            where = f">= {lo} and < {top}" if lo else f"< {top}"
        else:
            where = f"in [{lo}, {hi:d}]" if lo else f"<= {hi:d}"
        return f"{self.what} {where} in ASCII decimal digits"

    def __call__(self, text: str) -> int:
        t = str(text)
        if len(t) > _MAX_DIGITS + 1 or not _INT.fullmatch(t):
            raise argparse.ArgumentTypeError(f"expected {self.expectation()}, got {t[:50]!r}")
        value = int(t)
        if (self.lo is not None and value < self.lo) or (self.hi is not None and value > self.hi):
            raise argparse.ArgumentTypeError(f"expected {self.expectation()}, got {value}")
        return value

    def __repr__(self) -> str:
        return f"Integer(lo={self.lo}, hi={self.hi})"


class Real:
    """An argparse ``type``: a finite number in ASCII decimal notation (``0.5``, ``1e-3``)
    within a range; ``inf``, ``nan``, ``1e400`` (which overflows), ``1_0`` and Unicode
    digits are refused.

    Parameters
    ----------
    lo, hi : float, optional
        The range.
    lo_open : bool
        ``lo`` itself is refused (a positive number: ``Real(0, lo_open=True)``).
    what : str
        What the number is, for the message.
    """

    def __init__(self, lo: Optional[float] = None, hi: Optional[float] = None, *,
                 lo_open: bool = False, what: str = "a number") -> None:  # fmt: skip
        self.lo, self.hi, self.lo_open, self.what = lo, hi, lo_open, what
        self.count = False
        self.__name__ = "number"

    def expectation(self) -> str:
        return (
            f"{self.what} {_range_text(self.lo, self.hi, self.lo_open)} in ASCII decimal notation"
        )

    def __call__(self, text: str) -> float:
        t = str(text)
        if len(t) > _MAX_DIGITS + 10 or not _FLOAT.fullmatch(t):
            raise argparse.ArgumentTypeError(f"expected {self.expectation()}, got {t[:50]!r}")
        value = float(t)
        bad = not math.isfinite(value)
        if self.lo is not None:
            bad = bad or value < self.lo or (self.lo_open and value == self.lo)
        if self.hi is not None:
            bad = bad or value > self.hi
        if bad:
            raise argparse.ArgumentTypeError(f"expected {self.expectation()}, got {t[:50]!r}")
        return value

    def __repr__(self) -> str:
        return f"Real(lo={self.lo}, hi={self.hi}, lo_open={self.lo_open})"


def count(lo: int = 1, hi: int = INT64_MAX, what: str = "a count") -> Integer:
    """A count option's type: an integer in ``[lo, hi]`` (``lo`` 1 unless given)."""
    return Integer(lo, hi, what=what, count=True)


def seconds(what: str = "seconds") -> Real:
    """A duration option's type: a positive finite number of seconds."""
    return Real(0.0, lo_open=True, what=what)


class _TableValue:
    """An argparse ``type`` derived from a method's constraint table entry
    (:mod:`coalloc._shared.constraints`): the text read as what the entry takes (a word of
    its options, an integer or a number in ASCII decimal notation), then checked by the
    entry, so a bad value ends the command with the table's own message (exit status 2)."""

    constraints: Sequence[Any]
    name: str

    def _setup(self, constraints: Sequence[Any], name: str) -> None:
        from .._shared.constraints import Interval, Options

        # None (a method's "no value") is not written on a command line: leave the option out
        self.constraints = [c for c in constraints if c is not None]
        self.name = name
        self._words = {w for c in constraints if isinstance(c, Options) for w in c.options}
        kinds = [c.kind for c in constraints if isinstance(c, Interval)]
        self._integer = bool(kinds) and all(k is Integral for k in kinds)
        self._number = bool(kinds) and not self._integer

    def _refuse(self, shown: str) -> argparse.ArgumentTypeError:
        from .._shared.constraints import describe

        return argparse.ArgumentTypeError(
            f"{self.name} must be {describe(self.constraints)}, got {shown}"
        )

    def __call__(self, text: str) -> Any:
        from .._shared.constraints import InvalidParameterError, check_value

        t = str(text)
        value: Any
        if t in self._words:
            value = t
        elif (self._integer or self._number) and len(t) <= _MAX_DIGITS + 1 and _INT.fullmatch(t):
            value = int(t)
            if not -(2**63) <= value <= INT64_MAX:  # nothing wraps in a kernel's int64
                raise self._refuse(f"{t[:50]} (beyond 64 bits)")
        elif self._number and len(t) <= _MAX_DIGITS + 10 and _FLOAT.fullmatch(t):
            value = float(t)
        else:
            raise self._refuse(repr(t[:50]))
        if self._number and isinstance(value, int):
            value = float(value)  # "2" of a number option is 2.0, as before
        try:
            return check_value(value, self.name, self.constraints)
        except InvalidParameterError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


class _TableInteger(_TableValue, Integer):
    """:class:`_TableValue` of an integer entry (an :class:`Integer`: the CLI's strict
    numeric options are found by that type)."""

    def __init__(self, constraints: Sequence[Any], name: str) -> None:
        self._setup(constraints, name)
        lo = min((_lowest(c) for c in constraints if _lowest(c) is not None), default=None)
        Integer.__init__(self, lo, INT64_MAX, what=name, count=lo is not None and lo >= 0)

    __call__ = _TableValue.__call__


class _TableReal(_TableValue, Real):
    """:class:`_TableValue` of a number entry (a :class:`Real`)."""

    def __init__(self, constraints: Sequence[Any], name: str) -> None:
        self._setup(constraints, name)
        Real.__init__(self, what=name)

    __call__ = _TableValue.__call__


class _TableWord(_TableValue):
    """:class:`_TableValue` of an entry of words (its options)."""

    def __init__(self, constraints: Sequence[Any], name: str) -> None:
        self._setup(constraints, name)
        self.__name__ = name


def _lowest(constraint: Any) -> Optional[int]:
    left = getattr(constraint, "left", None)
    if left is None:
        return None
    return int(left) + (constraint.closed in ("right", "neither"))


def table_type(constraints: Sequence[Any], name: str) -> _TableValue:
    """The argparse ``type`` of a method parameter, derived from its table entry.

    Parameters
    ----------
    constraints : list
        The parameter's entry in its method's table (``PARAMS[method][name]``).
    name : str
        The parameter's name (the messages name it).

    Returns
    -------
    callable
        Reads the option's text as the entry takes it (words, integers or numbers in ASCII
        decimal notation) and checks it by the entry; refuses with the table's message.

    Examples
    --------
    >>> from coalloc._shared.constraints import TIME_LIMIT
    >>> table_type(TIME_LIMIT, "time_limit")("2.5")
    2.5
    >>> table_type(TIME_LIMIT, "time_limit")("0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: time_limit must be a finite number in (0, inf), got 0.0
    """
    from .._shared.constraints import Interval

    kinds = [c.kind for c in constraints if isinstance(c, Interval)]
    if kinds and all(k is Integral for k in kinds):
        return _TableInteger(constraints, name)
    if kinds:
        return _TableReal(constraints, name)
    return _TableWord(constraints, name)


def add_table_option(
    p: argparse.ArgumentParser,
    flag: str,
    constraints: Sequence[Any],
    *,
    help: str,
    name: Optional[str] = None,
    **kwargs: Any,
) -> argparse.Action:
    """An option that sets a method parameter: its type, choices and range from the table.

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    flag : str
        The option (``"--time-limit"``).
    constraints : list
        The parameter's table entry.
    help : str
        What the option does; the range the table gives is added to it.
    name : str, optional
        The parameter's name (default: the flag's, ``time_limit``).
    **kwargs
        Passed on to ``add_argument`` (``default``, ``dest``, ``metavar`` ...).

    Returns
    -------
    argparse.Action
        The option.
    """
    from .._shared.constraints import Options, describe

    name = name or flag.lstrip("-").replace("-", "_")
    kind = table_type(constraints, name)
    words = [w for c in constraints if isinstance(c, Options) for w in c.options]
    if isinstance(kind, _TableWord) and "metavar" not in kwargs:
        kwargs["choices"] = [w for w in words if w != "python"]  # an old name, unadvertised
    if not isinstance(kind, _TableWord):  # words: argparse shows the choices
        help = f"{help} ({describe(kind.constraints)})"
    return p.add_argument(flag, type=kind, help=help.replace("%", "%%"), **kwargs)


#: ``--seed``: the seeds :mod:`numpy.random` takes, ``[0, 2**64)``.
SEED = Integer(0, 2**64 - 1, what="a seed", count=True)


def _json_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is not a finite number")
    return value


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_DIGITS:
        raise ValueError(f"{text[:20]}... has more than {_MAX_DIGITS} digits")
    value = int(text)
    if not -(2**63) <= value < 2**64:
        raise ValueError(f"{value} does not fit in 64 bits")
    return value


def _json_constant(text: str):
    raise ValueError(f"{text} is not a finite number")


def param(text: str):
    """``KEY=VALUE`` with a JSON value (a plain string when it is not JSON).

    Numbers are JSON's (ASCII decimal): ``NaN``, ``Infinity``, ``1e400`` (infinite) and
    integers beyond 64 bits are refused, and so is a value that is not JSON but that Python
    would read as a number (``1_0``, ``١٢``, ``inf``, ``nan``): it is neither a number nor
    meant as a word.
    """
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key, json.loads(value, parse_float=_json_float, parse_int=_json_int,
                               parse_constant=_json_constant)  # fmt: skip
    except ValueError as exc:
        if not isinstance(exc, json.JSONDecodeError):
            raise argparse.ArgumentTypeError(f"{key}={value[:50]}: {exc}") from None
    try:
        float(value)
    except ValueError:
        return key, value
    except OverflowError:  # pragma: no cover - float() of a str does not overflow
        pass
    raise argparse.ArgumentTypeError(
        f"{key}={value[:50]}: not a finite number in ASCII decimal notation (JSON)"
    )


def jobs(text: str) -> int:
    """A number of workers: 1 to 65536, or -1 for every CPU (ASCII decimal digits)."""
    t = str(text)
    if t == "-1":
        return -1
    return Integer(1, 65536, what="a number of workers (or -1: all CPUs)")(t)


def add_params(p: argparse.ArgumentParser, example: str) -> None:
    """``-p/--param KEY=VALUE`` (repeatable, JSON values)."""
    p.add_argument(
        "-p", "--param", action="append", type=param, metavar="KEY=VALUE",
        help=f"solver parameter, e.g. -p {example} (repeatable; JSON values)",
    )  # fmt: skip


def add_seed(p: argparse.ArgumentParser, help: str = "seed of every random choice") -> None:
    """``--seed N`` (default 0)."""
    p.add_argument("--seed", type=SEED, default=0, help=help)


class OutputPath(argparse._StoreAction):
    """The action of every option that names a file the command writes.

    It stores the path like ``store`` does; its class marks the option as an output, so that
    the ``coalloc`` command refuses the path when it is also one of the command's inputs
    (:func:`coalloc.cli.main`), and the writes go through the one writer
    (:func:`coalloc._shared.jsonio.atomic_output`). ``tests/shared/test_writer_cli.py``
    finds every option by this class and fails on one that writes without it.
    """


def add_output_option(p: argparse.ArgumentParser, *flags: str, help: str,
                      required: bool = False, metavar: str = "FILE") -> None:  # fmt: skip
    """An option naming a file the command writes (``-o``, ``--reserve-to``, ``--records``).

    Every option that writes a file is added here (:class:`OutputPath`); the command writes
    it with :func:`coalloc._shared.jsonio.atomic_output` or a family writer built on it.
    """
    p.add_argument(*flags, action=OutputPath, required=required, metavar=metavar, help=help)


def add_output(p: argparse.ArgumentParser, help: str, required: bool = False) -> None:
    """``-o/--output FILE`` (an :class:`OutputPath`)."""
    add_output_option(p, "-o", "--output", help=help, required=required)


class DeprecatedAlias(argparse._StoreAction):
    """The action of an option's former spelling: stores like ``store`` into the new
    option's ``dest`` and prints one line on standard error naming the new spelling
    (``coalloc: note: --backend is deprecated: use --solver``). The alias is hidden from
    ``--help``; give it ``help=argparse.SUPPRESS`` and ``new="--solver"``."""

    def __init__(self, *args: Any, new: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.new = new

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: Optional[str] = None) -> None:  # fmt: skip
        print(f"coalloc: note: {option_string} is deprecated: use {self.new}", file=sys.stderr)
        super().__call__(parser, namespace, values, option_string)


def add_exact_options(p: argparse.ArgumentParser, table: Any) -> None:
    """``--time-limit SECONDS``, ``--solver NAME`` and ``--quiet`` for the exact method
    (``--backend``, the solver's former name, still works with a note on standard error).

    ``table`` is the exact method's constraint table: the options' types, choices and
    ranges are its ``time_limit`` and ``solver`` entries (:func:`add_table_option`). A
    sequence of solver names is read as the table of an exact method taking them (the
    older call)."""
    if not isinstance(table, Mapping):
        from .._shared.constraints import TIME_LIMIT, solvers

        table = {"time_limit": TIME_LIMIT, "solver": solvers(*table)}
    add_table_option(
        p, "--time-limit", table["time_limit"], default=None, metavar="SECONDS",
        help="wall-clock limit of an exact solve (model building included)",
    )  # fmt: skip
    solver = add_table_option(
        p, "--solver", table["solver"], dest="solver", default=None,
        help="integer-programming solver of the exact method",
    )  # fmt: skip
    p.add_argument(
        "--backend", dest="solver", type=solver.type, choices=solver.choices, default=None,
        action=DeprecatedAlias, new="--solver", help=argparse.SUPPRESS,
    )  # fmt: skip
    p.add_argument(
        "--quiet", action="store_true",
        help="no progress display (incumbent, bound, gap) of an exact solve on a terminal",
    )  # fmt: skip


def solver_params(args: argparse.Namespace) -> dict:
    """``-p KEY=VALUE`` pairs plus ``--time-limit``/``--solver`` when given.

    It also decides whether an exact solve shows its progress (incumbent, bound and gap over
    time) on standard error: yes for ``--method exact`` without ``--quiet``, and then only on
    a terminal (:func:`coalloc._shared.progress.set_exact_progress`).
    """
    from .._shared.progress import set_exact_progress

    set_exact_progress(
        getattr(args, "method", None) == "exact" and not getattr(args, "quiet", False)
    )
    params = dict(getattr(args, "param", None) or [])
    for key in ("time_limit", "solver"):
        value = getattr(args, key, None)
        if value is not None:
            if key in params and params[key] != value:
                raise ValueError(f"--{key.replace('_', '-')} and -p {key}=... disagree")
            params[key] = value
    # -p backend=... is the method's: its kernels, or an exact method's deprecated name of
    # its solver, which the method itself checks against solver= (a TypeError: exit 2)
    preload_exact_solver(getattr(args, "method", None), params, _family_of(args))
    return params


def _family_of(args: argparse.Namespace) -> Optional[str]:
    """The family whose command runs: ``coalloc <family> ...``'s group name, or, for a
    command at the top level (CTAAP's ``solve``, the task mapper's ``map``), the family
    whose command-line module (``coalloc.<family>.cli``) holds the command's function.
    None when neither tells."""
    from .. import FAMILIES
    from .._shared.family import _REGISTRY

    names = set(FAMILIES) | set(_REGISTRY)  # the families, none imported for it
    command = getattr(args, "command", None)
    if command in names:
        return command
    parts = str(getattr(getattr(args, "func", None), "__module__", "") or "").split(".")
    if len(parts) > 2 and parts[0] == "coalloc" and parts[1] in names:
        return parts[1]
    return None


def exact_default_solvers(family: str) -> List[str]:
    """The solvers a family's ``exact`` methods use when none is named.

    Read from the family itself: for each of its problem kinds (its spec's ``kinds``) that
    has an ``exact`` method, the default of that method's ``solver`` parameter; in the
    kinds' order, without repeats. Empty when the family is not registered, has no exact
    method, or an exact method names no default.

    Parameters
    ----------
    family : str
        A registered family's name.

    Returns
    -------
    list of str
    """
    import inspect

    from .._shared.family import family_spec

    try:
        spec = family_spec(family)  # that family only
    except KeyError:
        spec = None
    out: List[str] = []
    for kind in () if spec is None else spec.kinds:
        method = dict(getattr(kind, "METHODS", None) or {}).get("exact")
        if method is None:
            continue
        try:
            default = inspect.signature(method).parameters["solver"].default
        except (KeyError, TypeError, ValueError):
            return []  # (no solver= to read: not known, so not guessed)
        if not isinstance(default, str):
            return []
        if default not in out:
            out.append(default)
    return out


def preload_exact_solver(method: Optional[str], params: dict,
                         family: Optional[str] = None) -> List[str]:
    """Import an exact method's solver before its time limit's clock starts (issue 36).

    A command line is a fresh process: the first import of the solver (CP-SAT 0.7 s, 4.7 s
    under a load of 15; highspy 0.04-0.19 s) would otherwise count against ``--time-limit``
    (the method's clock starts at its call). Done for ``--method exact`` with a time limit
    only: the solver the parameters name; when none is named, the one the family's exact
    method takes by default (:func:`exact_default_solvers`: one import, not every installed
    solver's, CP-SAT's 0.7 s where HiGHS's 0.04 s would do); every installed one only when
    the family is not known or does not say. Untimed calls import it inside the call as
    before.

    Parameters
    ----------
    method : str or None
        The method the command runs.
    params : dict
        Its parameters (``time_limit``, ``solver``).
    family : str, optional
        The family whose method it is (its exact method's default solver is loaded).

    Returns
    -------
    list of str
        The solvers loaded (empty when nothing was to be done).
    """
    if method != "exact" or params.get("time_limit") is None:
        return []
    from .._shared import milp

    solver = params.get("solver")
    if solver is not None and solver not in milp.SOLVERS:
        return []  # the method refuses it with its own message
    if solver is not None:
        return milp.preload(solver)
    defaults = [] if family is None else exact_default_solvers(family)
    if defaults:  # (one the runner does not know is the method's to refuse)
        known = [s for s in defaults if s in milp.SOLVERS]
        return milp.preload(*known) if known else []
    return milp.preload()


def exact_params(args: argparse.Namespace, timed: Sequence[str] = ("exact",)) -> dict:
    """:func:`solver_params`, refusing ``--solver`` without ``--method exact`` and
    ``--time-limit`` with a method outside ``timed`` (the methods that take a time limit)."""
    params = solver_params(args)
    method = getattr(args, "method", None)
    if method != "exact" and getattr(args, "solver", None) is not None:
        raise ValueError("--solver applies to --method exact only")
    if method not in timed and getattr(args, "time_limit", None) is not None:
        names = " or ".join(f"--method {m}" for m in timed)
        raise ValueError(f"--time-limit applies to {names} only")
    return params


def describe_gap(gap: Optional[float]) -> str:
    """A relative gap as a percentage (``"unknown (no solution)"`` when None)."""
    return "unknown (no solution)" if gap is None else f"{100 * gap:.1f}%"


def describe_bound(result: Any, kind: str = "upper") -> Optional[str]:
    """``status, bound and gap`` of a result in one line (None when it has no bound)."""
    if result.bound is None:
        return None
    gap = describe_gap(result.gap)
    return f"  {result.status}: {kind} bound {result.bound:g}, gap {gap}"


def add_verbose(p: argparse.ArgumentParser) -> None:
    """``-v/--verbose``."""
    p.add_argument("-v", "--verbose", action="store_true", help="print timings and counters")


# The batch runner lives in its own module; its names stay importable from here (the
# families' CLIs call common.run_batch, and tests read the helpers here).
from ._batch import (  # noqa: E402, F401 - re-exported
    _batch_line,
    _file_digest,
    _lines_done,
    add_batch_options,
    chunksize,
    run_batch,
)

# The --format option lives in its own module (issue 37); its names stay importable from
# here (the families' CLIs call common.add_format_of and common.read_as).
from ._format import (  # noqa: E402, F401 - re-exported
    add_format,
    add_format_of,
    format_table,
    line_formats_of,
    read_as,
)
