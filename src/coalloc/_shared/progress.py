"""The one progress implementation of the package (solvers, batches, benchmarks).

Every bar is `tqdm <https://tqdm.github.io>`_'s (a core dependency), drawn by
:func:`progress`, so that every family reports progress the same way: on standard error,
with rate and time estimate, closed properly when the loop ends (use it as a context
manager or iterate to exhaustion), silent when ``disable=True``. Its two adapters live here
too: :class:`ProgressBar`, the bar of a batch driven as a ``progress(done, total)``
callback (:func:`coalloc.batch.solve_many`; ``coalloc.batch.ProgressBar`` is this class),
and :class:`SolveProgress` below. The benchmarks' ``bench/shared/_progress.bar`` only adds
``--quiet`` to :func:`progress`.

:class:`SolveProgress` is the display of a long exact solve (the integer-programming runner
:mod:`coalloc._shared.milp` feeds it): elapsed time against the time limit, the incumbent, the
bound and the gap, and one line each time the incumbent improves. The runner shows it when
asked (``progress=True``) or, by default, when the command line turned it on with
:func:`set_exact_progress` and standard error is a terminal.
"""

from __future__ import annotations

import contextvars
import math
import sys
from typing import Any, Iterable, Optional

from .result import relative_gap

__all__ = [
    "progress",
    "ProgressBar",
    "SolveProgress",
    "set_exact_progress",
    "exact_progress_wanted",
    "relative_gap",
]

#: Whether exact solves show their progress by default (the CLI turns it on; new threads
#: start with the default, off, so batch workers never draw bars over each other).
_EXACT_PROGRESS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "coalloc_exact_progress", default=False
)


def progress(
    iterable: Optional[Iterable[Any]] = None,
    *,
    total: Optional[int] = None,
    desc: Optional[str] = None,
    unit: str = "it",
    disable: Optional[bool] = False,
    leave: bool = True,
    file: Any = None,
) -> Any:
    """Return a progress bar over ``iterable`` (or a manual one with ``total``).

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over; the bar advances once per item.
    total : int, optional
        Number of steps when it cannot be taken from ``len(iterable)``.
    desc : str, optional
        Label shown before the bar.
    unit : str, default "it"
        Name of one step.
    disable : bool or None, default False
        True hides the bar; None hides it when standard error is not a terminal.
    leave : bool, default True
        Keep the finished bar on screen.
    file : file-like, optional
        Where to draw (default: standard error).

    Returns
    -------
    tqdm.tqdm
        Iterate over it, or call ``update(n)``; use ``with`` to close it.

    Examples
    --------
    >>> from coalloc._shared.progress import progress
    >>> sum(progress(range(3), disable=True))
    3
    """
    if disable is True:  # tqdm's first import (with asyncio: 0.16-0.3 s) inside a time
        return _HiddenBar(iterable, total)  # limit for a bar never shown (issue 36)
    from tqdm.auto import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        disable=disable,
        leave=leave,
        dynamic_ncols=True,
        file=file,
    )


class _HiddenBar:
    """What :func:`progress` returns for a hidden bar: tqdm's interface, drawing nothing
    and importing nothing (the iterable itself when iterated, as tqdm's hidden bar)."""

    disable = True
    fp = None

    def __init__(self, iterable: Optional[Iterable[Any]], total: Optional[int]) -> None:
        self.iterable, self.total, self.n = iterable, total, 0

    def __iter__(self) -> Any:
        return iter(self.iterable if self.iterable is not None else ())

    def __len__(self) -> int:
        return len(self.iterable) if self.iterable is not None else int(self.total or 0)

    def __enter__(self) -> _HiddenBar:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def update(self, n: float = 1) -> None:
        self.n += n

    def __getattr__(self, name: str) -> Any:  # close, refresh, set_postfix_str, write ...
        if name.startswith("__"):
            raise AttributeError(name)
        return lambda *args, **kwargs: None


class ProgressBar:
    """The batch progress bar: a :func:`progress` bar driven as ``bar(done, total)``.

    Shows count, rate and the time estimate; :meth:`close` draws the final state and ends
    the line (solve_many closes it before it returns, the CLI before its summary).

    Parameters
    ----------
    stream : text file, default sys.stderr
        Where to draw.
    desc : str, default "solved"
        Label before the bar.
    disable : bool or None, default None
        True hides the bar; None hides it when ``stream`` is not a terminal.

    Examples
    --------
    >>> import io
    >>> from coalloc.batch import ProgressBar
    >>> bar = ProgressBar(io.StringIO(), disable=False)
    >>> bar(2, 4); bar(4, 4); bar.close()
    >>> bar.done
    4
    """

    def __init__(
        self, stream: Any = None, *, desc: str = "solved", disable: Optional[bool] = None
    ) -> None:
        self.stream = sys.stderr if stream is None else stream
        self._bar = progress(desc=desc, unit="inst", disable=disable, file=self.stream)
        self.done = 0

    def __call__(self, done: int, total: Optional[int]) -> None:
        if total is not None and self._bar.total != total:
            self._bar.total = total
        self._bar.update(done - self.done)
        self.done = done

    def close(self) -> None:
        """Draw the final state and end the line (idempotent)."""
        self._bar.close()


def set_exact_progress(enabled: bool) -> None:
    """Turn the default progress display of exact solves on or off (in this context).

    Parameters
    ----------
    enabled : bool
        The default of ``progress=None`` in :func:`coalloc._shared.milp.run_milp` and
        :func:`~coalloc._shared.milp.run_cpsat`; it still needs standard error to be a terminal.
    """
    _EXACT_PROGRESS.set(bool(enabled))


def exact_progress_wanted(flag: Optional[bool]) -> bool:
    """Resolve a solver's ``progress`` argument: True/False as given; None: the default
    set by :func:`set_exact_progress`, and only when standard error is a terminal."""
    if flag is not None:
        return bool(flag)
    if not _EXACT_PROGRESS.get():
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stream
        return False


def _number(value: Optional[float]) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.6g}"


class SolveProgress:
    """Progress of one exact solve on standard error: time, incumbent, bound, gap.

    Feed it with :meth:`update` (from the thread that created it); each improvement of the
    incumbent also prints one line, so the history of the gap stays on screen. Disabled, it
    does nothing.

    Parameters
    ----------
    solver : str
        Name shown before the bar (``"HiGHS"``, ``"CBC"``, ``"CP-SAT"``).
    sense : {"min", "max"}
        Direction of the objective (which incumbent is better).
    time_limit : float, optional
        Seconds the solve may take: the bar fills towards it; without it, only time is shown.
    enabled : bool
        False makes every method a no-op.
    file : file-like, optional
        Where to draw (default standard error).

    Examples
    --------
    >>> with SolveProgress("HiGHS", sense="max", time_limit=5.0, enabled=False) as bar:
    ...     bar.update(1.0, incumbent=3.0, bound=4.0)
    """

    def __init__(self, solver: str, *, sense: str = "min", time_limit: Optional[float] = None,
                 enabled: bool = True, file: Any = None) -> None:  # fmt: skip
        self.solver = solver
        self.sense = sense
        self.time_limit = time_limit
        self.enabled = bool(enabled)
        self.incumbent: Optional[float] = None
        self.bound: Optional[float] = None
        self._bar = None
        if not self.enabled:
            return
        from tqdm.auto import tqdm

        if time_limit is not None and time_limit > 0:
            limit = _number(round(float(time_limit), 1))
            fmt = "{desc}: {percentage:3.0f}%|{bar}| {elapsed} of " + limit + " s{postfix}"
            total: Optional[float] = float(time_limit)
        else:
            fmt = "{desc}: {elapsed}{postfix}"
            total = None
        self._bar = tqdm(
            total=total, desc=f"exact ({solver})", bar_format=fmt, leave=True,
            dynamic_ncols=True, file=file if file is not None else sys.stderr,
        )  # fmt: skip

    def _text(self) -> str:
        gap = relative_gap(self.incumbent, self.bound, sense=self.sense)
        return (
            f"incumbent {_number(self.incumbent)}, bound {_number(self.bound)}, "
            f"gap {'-' if gap is None else f'{100 * gap:.2f}%'}"
        )

    def update(self, elapsed: float, *, incumbent: Optional[float] = None,
               bound: Optional[float] = None) -> None:  # fmt: skip
        """Show the state at ``elapsed`` seconds; a None value keeps the last one."""
        if not self.enabled:
            return
        improved = incumbent is not None and math.isfinite(incumbent) and (
            self.incumbent is None
            or (incumbent > self.incumbent if self.sense == "max" else incumbent < self.incumbent)
        )  # fmt: skip
        if improved:
            self.incumbent = float(incumbent)
        if bound is not None and math.isfinite(bound):
            self.bound = float(bound)
        bar = self._bar
        if improved:
            bar.write(f"  {elapsed:8.2f} s  {self._text()}", file=bar.fp)
        if bar.total is not None:
            bar.n = min(float(elapsed), bar.total)
        bar.set_postfix_str(self._text(), refresh=False)
        bar.refresh()

    def close(self, status: Optional[str] = None) -> None:
        """Draw the final state (with the solver's ``status``) and release the line."""
        if self._bar is None:
            return
        if status is not None:
            self._bar.set_postfix_str(f"{self._text()}; {status}", refresh=False)
        self._bar.refresh()
        self._bar.close()
        self._bar = None

    def __enter__(self) -> SolveProgress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
