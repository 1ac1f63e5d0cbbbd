"""Cancellation scopes: a deadline or a cancel flag that the compiled kernels obey.

Every long-loop kernel takes its deadline as an argument: :func:`kernel_deadline`, built
once per call by the Python wrapper, holds the earliest deadline in force (a
``CLOCK_MONOTONIC`` instant) and the cancel flag of the calling thread's innermost scope,
which :meth:`Scope.cancel` sets. The kernel copies it into the plain C struct of
``coalloc/common/deadline.h`` and its polls compare the clock with it and read the flag
without the GIL, from their first look. About every 50 ms they also take the GIL, let
Python run its signal handlers (so Ctrl-C raises ``KeyboardInterrupt`` in the main thread)
and call :func:`check` of this module, which raises the error of the calling thread's
innermost :class:`Scope` once it is cancelled or past its deadline; after a stop by the
struct the kernel asks :func:`check` for that error too. The kernel then stops and that
error propagates to its caller.

A scope belongs to the thread that entered it; any thread may cancel it. Python loops can
call :func:`check` themselves. ``coalloc.solve_many`` uses scopes for its per-instance
``timeout`` with threads and to stop running kernels when the batch is interrupted.

Examples
--------
>>> from coalloc._shared import interrupt
>>> with interrupt.Scope(timeout=60) as scope:  # doctest: +SKIP
...     coalloc.solve(request, offer)         # TimeoutError after 60 s (compiled steps)
"""

from __future__ import annotations

import array
import threading
import time
import weakref
from typing import Optional

__all__ = [
    "Cancelled",
    "DeadlinePassed",
    "KernelDeadline",
    "NO_DEADLINE",
    "Scope",
    "check",
    "check_kernel",
    "current",
    "poll",
    "deadline_ns",
    "kernel_deadline",
    "until",
]


class _Local(threading.local):
    #: The innermost scope of the thread. A class default, so that reading it where no scope
    #: was ever entered is a plain attribute lookup (a missing attribute of a
    #: ``threading.local`` costs an AttributeError, microseconds: too much for hot loops).
    scope: Optional[Scope] = None


_local = _Local()


class Cancelled(Exception):
    """Raised in a scope cancelled with :meth:`Scope.cancel` and no explicit error."""


class Scope:
    """A deadline and a cancel flag for the code the current thread runs inside ``with``.

    Parameters
    ----------
    timeout : float, optional
        Seconds from entering the scope after which :func:`check` raises ``TimeoutError``.
    message : str, optional
        The message of that ``TimeoutError`` (default: "timed out after <timeout> s").
    parent : Scope, optional
        A scope (entered or not, e.g. one per batch) whose cancellation cancels this one.
    """

    def __init__(
        self,
        timeout: Optional[float] = None,
        *,
        message: Optional[str] = None,
        parent: Optional[Scope] = None,
    ):
        if timeout is not None:
            timeout = float(timeout)
            if not timeout > 0:
                raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout
        self.message = message
        self.parent = parent
        self.deadline: Optional[float] = None
        self._error: Optional[BaseException] = None
        self._outer: Optional[Scope] = None
        #: The error this scope last raised into the code it runs (None until it fires): a
        #: caller learns from it that its work was stopped even when that work caught the
        #: error and returned something else (a solver failure 'reported, not raised').
        self.fired: Optional[BaseException] = None
        #: The cancel flag the kernels read without the GIL (made by the first
        #: :func:`kernel_deadline` inside this scope), and the flags of the scopes nested in
        #: this one or made with it as parent, which its :meth:`cancel` sets too.
        self._flag: Optional[array.array] = None
        self._watchers: Optional[weakref.WeakValueDictionary] = None  # id -> flag

    def __enter__(self) -> Scope:
        if self.timeout is not None:
            self.deadline = time.monotonic() + self.timeout
        self._outer = getattr(_local, "scope", None)
        self._flag = None  # a new entry: a new flag, chained to its new outer scope
        _local.scope = self
        return self

    def __exit__(self, *exc) -> None:
        _local.scope = self._outer
        self._outer = None

    def cancel(self, error: Optional[BaseException] = None) -> None:
        """Make :func:`check` raise ``error`` (default :class:`Cancelled`) in this scope.

        The kernels running inside it (or inside a scope nested in it, or made with it as
        parent) see the cancel flag of their :class:`KernelDeadline` set and stop at their
        next look at the clock, without asking Python.
        """
        self._error = error if error is not None else Cancelled("cancelled")
        if self._flag is not None:
            self._flag[0] = 1
        if self._watchers is not None:
            for flag in list(self._watchers.values()):
                flag[0] = 1

    @property
    def cancelled(self) -> bool:
        """True once cancelled or past the deadline (this scope or its parent)."""
        return (
            self._error is not None
            or (self.deadline is not None and time.monotonic() >= self.deadline)
            or (self.parent is not None and self.parent.cancelled)
        )

    def __getstate__(self) -> dict:  # a scope crosses to processes without its thread link
        state = dict(self.__dict__)
        state["_outer"] = None
        state["fired"] = None
        state["_flag"] = None  # the flags are per process: made again there on demand
        state["_watchers"] = None
        return state

    def raise_if_cancelled(self, detail: Optional[str] = None) -> None:
        """Raise this scope's error if it is cancelled or past its deadline.

        ``detail`` (what the stopped work had achieved, e.g. a solver's incumbent) is
        appended to the error's message. The error raised is kept in :attr:`fired`.
        """
        error: Optional[BaseException] = None
        if self._error is not None:
            error = self._error
        elif self.deadline is not None and time.monotonic() >= self.deadline:
            error = TimeoutError(self.message or f"timed out after {self.timeout:g} s")
        else:
            try:
                if self.parent is not None:
                    self.parent.raise_if_cancelled()
                if self._outer is not None:
                    self._outer.raise_if_cancelled()
            except BaseException as exc:
                error = exc
        if error is None:
            return
        if detail:
            plain, error = error, _with_detail(error, detail)
            outer = self._outer
            while outer is not None:  # the outer scope that fired keeps the detail too
                if outer.fired is plain:
                    outer.fired = error
                outer = outer._outer
        self.fired = error
        raise error.with_traceback(None)


class DeadlinePassed(Exception):
    """Raised by :func:`check` inside :func:`until` once its deadline has passed."""


class _Until(Scope):
    """:func:`until`'s scope: :class:`DeadlinePassed` past ``when``, an outer scope's error
    (a batch's timeout, a cancelled batch) unchanged."""

    def __init__(self, when: float) -> None:
        super().__init__()
        self.when = when

    @property
    def cancelled(self) -> bool:
        return time.perf_counter() >= self.when or super().cancelled

    def raise_if_cancelled(self, detail: Optional[str] = None) -> None:
        if time.perf_counter() >= self.when:
            raise DeadlinePassed()
        super().raise_if_cancelled(detail)


def until(when: Optional[float]) -> Scope:
    """A scope in which :func:`check` (the compiled kernels' poll, a Python loop's own call)
    raises :class:`DeadlinePassed` once ``when`` (a :func:`time.perf_counter` instant)
    passes: for a phase that must stop at a method's deadline -- building an exact model --
    while the method itself goes on to return what it has. None: a scope without one.

    Examples
    --------
    >>> import time
    >>> try:
    ...     with until(time.perf_counter()):
    ...         check()
    ... except DeadlinePassed:
    ...     print("stopped")
    stopped
    """
    return Scope() if when is None else _Until(float(when))


def current() -> Optional[Scope]:
    """The innermost scope of the calling thread, or None."""
    return getattr(_local, "scope", None)


def _with_detail(error: BaseException, detail: str) -> BaseException:
    """A copy of ``error`` (same class) whose message ends with ``; detail``."""
    try:
        return type(error)(f"{error}; {detail}")
    except Exception:  # a class that takes other arguments: keep it as it is
        return error


def check(detail: Optional[str] = None) -> None:
    """Raise the error of the calling thread's scope if it is cancelled or expired.

    Called by the compiled kernels at their polling interval; cheap when no scope is set.
    ``detail`` is appended to the error's message (the MILP runners say what the stopped
    solver had found: its incumbent and bound).
    """
    scope = getattr(_local, "scope", None)
    if scope is not None:
        if detail is None:  # the kernels' poll: the plain call every scope class takes
            scope.raise_if_cancelled()
        else:
            scope.raise_if_cancelled(detail)


def deadline_ns() -> int:
    """The earliest deadline in force for the calling thread, in nanoseconds of the
    ``CLOCK_MONOTONIC`` clock (the clock of :func:`time.monotonic`, :func:`time.perf_counter`
    and C++'s ``std::chrono::steady_clock`` on Linux), or -1 without one.

    Every scope's own deadline counts (a :class:`Scope`'s ``timeout``, the ``when`` of a
    time limit's scope), with those of its parent and of the scopes it is nested in.

    Returns
    -------
    int
        The deadline in nanoseconds, or -1.

    Examples
    --------
    >>> deadline_ns()
    -1
    >>> with Scope(timeout=60):
    ...     deadline_ns() > 0
    True
    """
    best = None
    seen = set()
    todo = [getattr(_local, "scope", None)]
    while todo:
        scope = todo.pop()
        if scope is None or id(scope) in seen:
            continue
        seen.add(id(scope))
        for when in (getattr(scope, "when", None), scope.deadline):
            if when is not None and (best is None or when < best):
                best = when
        todo.append(scope.parent)
        todo.append(scope._outer)
    return -1 if best is None else _ns(best)


#: The latest instant a deadline can name, in nanoseconds (the C struct's ``int64_t``, with
#: room for the rounding up): a later one (a time limit of 1e300 s, 2**63 s) is never
#: reached, so it is no deadline at all, not an overflow.
_LATEST_NS = 2**62


def _ns(when: float) -> int:
    """``when`` (seconds of the monotonic clock) in nanoseconds; -1 (none) past
    :data:`_LATEST_NS`, where it could never pass."""
    when = float(when) * 1e9
    return int(when) if when < _LATEST_NS else -1


#: The longest a thread join or event wait is asked to wait, in seconds (about 31 years): a
#: lock's wait past ``threading.TIMEOUT_MAX`` (about 292 years) raises ``OverflowError``,
#: and a time limit of 1e300 s must wait as long as one that is never reached, not fail.
LONGEST_WAIT = 1e9


def wait_seconds(seconds: Optional[float]) -> Optional[float]:
    """``seconds`` as a timeout a thread's ``join`` or an event's ``wait`` takes: never
    below 0, never above :data:`LONGEST_WAIT` (None, no timeout, stays None).

    Examples
    --------
    >>> wait_seconds(1e300), wait_seconds(-2.0), wait_seconds(0.5), wait_seconds(None)
    (1000000000.0, 0.0, 0.5, None)
    """
    if seconds is None:
        return None
    return min(max(0.0, float(seconds)), LONGEST_WAIT)


class KernelDeadline:
    """The deadline a compiled kernel takes as an argument (``coalloc::Deadline`` of
    ``coalloc/common/deadline.h``): an instant and a cancel flag, read in C without the GIL.

    Made by :func:`kernel_deadline`; the kernel's binding copies it into the C struct once
    per call. The NumPy twins take it too and check it with :func:`check_kernel`.

    Attributes
    ----------
    ns : int
        The instant, in nanoseconds of ``CLOCK_MONOTONIC``; -1: none.
    cancel_addr : int
        The address of the cancel flag (a C ``int``, nonzero once cancelled); 0: none.
    flag : array.array or None
        The flag itself (kept alive with this object; the scope sets it).
    """

    __slots__ = ("ns", "cancel_addr", "flag")

    def __init__(self, ns: int = -1, flag: Optional[array.array] = None) -> None:
        ns = int(ns)
        self.ns = ns if ns < _LATEST_NS else -1  # never reached: none (the C struct's int64_t)
        self.flag = flag
        self.cancel_addr = 0 if flag is None else flag.buffer_info()[0]

    @property
    def expired(self) -> bool:
        """True once the flag is set or the instant has passed."""
        return (self.flag is not None and self.flag[0] != 0) or (
            self.ns >= 0 and time.monotonic_ns() >= self.ns
        )

    def __repr__(self) -> str:
        return f"KernelDeadline(ns={self.ns}, cancelled={bool(self.flag and self.flag[0])})"


#: The deadline of a kernel called outside every scope, without a time limit.
NO_DEADLINE = KernelDeadline()


def _chain_flag(scope: Scope) -> array.array:
    """The cancel flag of ``scope``, made and registered with every scope whose
    cancellation reaches it (its parent and the scopes it is nested in) on first use."""
    flag = scope._flag
    if flag is not None:
        return flag
    flag = scope._flag = array.array("i", [0])
    seen = set()
    todo = [scope]
    while todo:
        s = todo.pop()
        if s is None or id(s) in seen:
            continue
        seen.add(id(s))
        if s._error is not None:
            flag[0] = 1
        if s is not scope:
            if s._watchers is None:
                s._watchers = weakref.WeakValueDictionary()
            s._watchers[id(flag)] = flag
        todo.append(s.parent)
        todo.append(s._outer)
    return flag


def kernel_deadline(when: Optional[float] = None) -> KernelDeadline:
    """The deadline to hand to a compiled kernel: the earliest deadline in force for the
    calling thread (:func:`deadline_ns`, and ``when`` if given) and the cancel flag of its
    innermost scope. Build it once per kernel call, just before the call.

    Parameters
    ----------
    when : float, optional
        A further deadline of the caller's own, a :func:`time.perf_counter` instant (the
        testbed's kernels stop there and return their best answer).

    Returns
    -------
    KernelDeadline
        :data:`NO_DEADLINE` outside every scope and without ``when``.

    Examples
    --------
    >>> kernel_deadline().ns
    -1
    >>> with Scope(timeout=60):
    ...     kernel_deadline().ns > 0
    True
    """
    scope = getattr(_local, "scope", None)
    if scope is None and when is None:
        return NO_DEADLINE
    ns = deadline_ns()
    if ns >= 0:
        ns += 1  # rounded up: a kernel never stops before Python agrees the instant passed
    if when is not None:
        own = _ns(when)
        if own >= 0:
            own += 1
            ns = own if ns < 0 else min(ns, own)
    return KernelDeadline(ns, None if scope is None else _chain_flag(scope))


def check_kernel(deadline: Optional[KernelDeadline]) -> None:
    """What a NumPy twin calls where its compiled kernel polls: :func:`check`, then, past
    ``deadline`` or with its flag set, the error the compiled kernel raises then (the scope's
    error, or ``TimeoutError`` outside every scope).

    Examples
    --------
    >>> check_kernel(KernelDeadline(ns=0))
    Traceback (most recent call last):
    ...
    TimeoutError: the kernel's deadline passed
    """
    check()
    if deadline is not None and deadline.expired:
        check()  # the scope's own error where it has one (it expires with the flag's scope)
        raise TimeoutError("the kernel's deadline passed")


def poll() -> int:
    """:func:`check` (raises the scope's error once it is cancelled or past its deadline),
    then :func:`deadline_ns`. The compiled kernels no longer call it: they take their
    deadline as an argument (:func:`kernel_deadline`) and call :func:`check` for Ctrl-C and
    the scope's error (``coalloc/common/interrupt.h``).

    Returns
    -------
    int
        :func:`deadline_ns`.

    Examples
    --------
    >>> poll()  # no scope: nothing to raise, no deadline
    -1
    """
    check()
    return deadline_ns()
