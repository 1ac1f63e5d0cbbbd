"""A heavy import under a deadline: a time-limited call's first import of its solver.

Issue 36's contract counts the whole call in ``time_limit``, and a process's first call of
an exact method imports its solver inside it: SciPy's sparse matrices 0.25 s, SciPy's
optimize 0.65 s, OR-Tools' CP-SAT 0.6-1 s on a quiet machine, two to five times that under
load (collective ``exact`` took 1.0 s at T = 0.05 s in a fresh process, load 7). Every
family's import of a heavy module inside a timed path goes through :func:`load_by`:

* untimed (``deadline`` None), or the module already loaded: a plain import;
* timed: the import runs in a daemon thread (one per module, shared by every caller) and
  the caller waits for it at most until ``deadline``; None when it has not finished, and
  the caller ends ``time_limit`` with its best answer so far (or its family's no-answer
  status), while the import goes on, so that the next call finds the module loaded;
* with less time left than the import is expected to take (:data:`IMPORT_SECONDS`), the
  caller does not wait at all: a module's initialisation holds the interpreter lock for a
  while at a time (loading a large shared library), so that a caller waiting until its
  deadline would get it back late.

A call that only wants a module loaded for the *next* call (not waited for: too little time
left) begins its import with :func:`start_on_return` as the last thing before it returns:
the import is handed to one long-lived thread (fed by a queue: a new thread's first turn
held the caller 11-30 ms under load, and an import begun at once held the interpreter lock
while the call returned) that begins it :data:`RETURN_DELAY` seconds later. A call made of
other timed calls (the testbed's explanation asks its mappers dozens of times) runs them
inside :func:`on_return`: an import they begin "as they return" then begins only when the
whole call returns, not inside it (testbed ``explain`` at T = 0.05 s in a fresh process
beside two busy loops ended at 0.17 s with CP-SAT's import begun inside it).

An import that raises is raised to the caller that waits for it (and tried again by the
next call). The threads are joined at the interpreter's exit for at most
:data:`EXIT_WAIT` seconds, so that none is stopped inside a module's initialisation, and
before a ``fork`` for at most :data:`FORK_WAIT` seconds: a child forked while a module is
half imported inherits that module's import lock held by a thread the child does not have,
and its own import of the module would wait for ever (a batch's forked workers after a
timed call that left an import running).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import os
import sys
import threading
import time
from types import ModuleType
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

from . import interrupt

__all__ = ["IMPORT_SECONDS", "import_by", "import_in_budget", "installed", "load_by", "loaded",
           "on_return", "pending", "ready_on_return", "start", "start_on_return"]  # fmt: skip

#: Seconds a module's first import takes, about, on this project's 2-core VM at a load of
#: 1-2 after ``numpy`` (``python -X importtime``): waited for only with this much time
#: left. Solver keys (``"solver:..."``) are :func:`coalloc._shared.milp.import_solver`'s.
IMPORT_SECONDS: Dict[str, float] = {
    "scipy.sparse": 0.2,
    "scipy.sparse.csgraph": 0.25,
    "scipy.sparse.linalg": 0.25,
    "scipy.optimize": 0.5,
    "highspy": 0.1,
    "networkx": 0.25,
    "pulp": 0.05,
    "ortools.sat.python.cp_model": 0.5,
    "solver:highs": 0.3,
    "solver:cbc": 0.15,
    "solver:cpsat": 1.0,
}

#: Seconds the interpreter's exit waits, all imports together, for those still running.
EXIT_WAIT = 5.0

#: Seconds a ``fork`` waits, all imports together, for those still running (then it forks).
FORK_WAIT = 30.0

#: key -> (thread, box): the box gets "value" or "error" when the thread ends.
_LOADS: Dict[str, Tuple[threading.Thread, dict]] = {}
_LOCK = threading.Lock()
_EXIT_HOOK: list = []


def loaded(name: str) -> Optional[ModuleType]:
    """The module ``name`` when it is imported and initialised, else None (absent, or a
    half-run initialisation in another thread)."""
    mod = sys.modules.get(name)
    if mod is None or getattr(getattr(mod, "__spec__", None), "_initializing", False):
        return None
    return mod


def installed(name: str) -> bool:
    """Whether the top-level package ``name`` can be imported, without importing it."""
    import importlib.util

    if loaded(name) is not None:
        return True
    try:
        return importlib.util.find_spec(name.partition(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def pending(key: str) -> bool:
    """Whether a background load of ``key`` is still running."""
    with _LOCK:
        entry = _LOADS.get(key)
    return entry is not None and entry[0].is_alive()


def _join_all(wait: float) -> None:
    """Join the background loads still running, for at most ``wait`` seconds in all."""
    give_up = time.monotonic() + wait
    with _LOCK:
        threads = [t for t, _ in _LOADS.values() if t.is_alive()]
    for t in threads:
        if t is not threading.current_thread():
            t.join(max(0.0, give_up - time.monotonic()))


def _join_at_exit() -> None:
    _join_all(EXIT_WAIT)


def _join_before_fork() -> None:
    _join_all(FORK_WAIT)


if hasattr(os, "register_at_fork"):  # (POSIX) the module docstring says why
    os.register_at_fork(before=_join_before_fork)


def _start(key: str, loader: Callable[[], Any]) -> Tuple[threading.Thread, dict]:
    """The background load of ``key``: the one under way or done, else a new one."""
    with _LOCK:
        entry = _LOADS.get(key)
        if entry is not None and (entry[0].is_alive() or "value" in entry[1]):
            return entry
        box: dict = {}

        def run() -> None:
            try:
                box["value"] = loader()
            except BaseException as exc:  # handed to the caller that waits
                box["error"] = exc

        thread = threading.Thread(target=run, name=f"coalloc-import-{key}", daemon=True)
        _LOADS[key] = (thread, box)
        if not _EXIT_HOOK:
            _EXIT_HOOK.append(atexit.register(_join_at_exit))
        thread.start()
        return thread, box


def start(key: str, loader: Callable[[], Any]) -> None:
    """Begin the background load of ``key`` (``loader()``) now, not waiting for it: a
    search that needs a solver later starts its import first and works meanwhile; its
    :func:`load_by` of the same key then waits for this one."""
    if not pending(key):
        with _LOCK:
            entry = _LOADS.get(key)
        if entry is None or "value" not in entry[1]:
            _start(key, loader)


#: Per thread: ``depth`` of :func:`on_return` blocks, ``wanted`` {key: loader} they hold.
_RETURN = threading.local()

#: Seconds the loads begun "on return" wait before they begin: the caller's return, well
#: before the import's first stretch holding the interpreter lock.
RETURN_DELAY = 0.05

#: The queue of the one thread that runs the loads begun on return (started on first use).
_LATER: list = []


class _Later:
    """The handle of a load begun on return (``is_alive``/``join`` as a thread's), set
    when the later thread has run it."""

    __slots__ = ("done",)

    def __init__(self) -> None:
        self.done = threading.Event()

    def is_alive(self) -> bool:
        return not self.done.is_set()

    def join(self, timeout: Optional[float] = None) -> None:
        self.done.wait(timeout)


def _later_queue() -> Any:
    """The later thread's queue, the thread started on first use (cheap after it)."""
    with _LOCK:
        if not _LATER:
            import queue

            q: Any = queue.SimpleQueue()
            threading.Thread(target=_run_later, args=(q,), name="coalloc-import-later",
                             daemon=True).start()  # fmt: skip
            _LATER.append(q)
        return _LATER[0]


def ready_on_return() -> None:
    """Start the thread of the loads begun on return now (once per process): a timed call
    that may begin one as it returns calls this as it begins, so that the thread's first
    turn falls inside its budget, not after its answer (:func:`on_return` does it itself).
    """
    _later_queue()


def _run_later(q: Any) -> None:
    while True:
        loader, box, handle = q.get()
        time.sleep(RETURN_DELAY)
        try:
            box["value"] = loader()
        except BaseException as exc:  # handed to the caller that waits
            box["error"] = exc
        handle.done.set()
        del loader, box, handle


def _start_later(key: str, loader: Callable[[], Any]) -> None:
    """Hand ``key``'s load to the later thread, unless one is under way or done."""
    q = _later_queue()
    with _LOCK:
        entry = _LOADS.get(key)
        if entry is not None and (entry[0].is_alive() or "value" in entry[1]):
            return
        box: dict = {}
        handle = _Later()
        _LOADS[key] = (handle, box)  # type: ignore[assignment]
        if not _EXIT_HOOK:
            _EXIT_HOOK.append(atexit.register(_join_at_exit))
    q.put((loader, box, handle))


def _forget_later_in_child() -> None:
    """A forked child has no later thread (its parent's fork waited for its loads)."""
    _LATER.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_later_in_child)


@contextlib.contextmanager
def on_return() -> Iterator[None]:
    """A block whose :func:`start_on_return` loads begin only when it ends (the outermost
    block of this thread: nested calls defer to their caller's return).

    Examples
    --------
    >>> with on_return():
    ...     start_on_return("json", lambda: __import__("json"))
    ...     pending("json")
    False
    >>> load_by("json", lambda: __import__("json"), None).__name__  # (begun: waited for)
    'json'
    """
    depth = getattr(_RETURN, "depth", 0)
    if depth == 0:
        _RETURN.wanted = {}
        _later_queue()  # (its thread's first turn here, at the call's start, not its return)
    _RETURN.depth = depth + 1
    try:
        yield
    finally:
        _RETURN.depth = depth
        if depth == 0:
            wanted, _RETURN.wanted = _RETURN.wanted, {}
            for key, loader in wanted.items():
                _start_later(key, loader)


def start_on_return(key: str, loader: Callable[[], Any]) -> None:
    """:func:`start` for a call's last step (the load is for the next call): handed to
    the later thread (begun :data:`RETURN_DELAY` s later), at once or, inside
    :func:`on_return`, when that block ends."""
    if getattr(_RETURN, "depth", 0):
        _RETURN.wanted.setdefault(key, loader)
    else:
        _start_later(key, loader)


def _wait(thread: threading.Thread, until: Optional[float], poll: Optional[Callable]) -> None:
    """Join ``thread`` until the ``time.perf_counter`` instant ``until`` (None: its end),
    calling ``poll()`` every 50 ms when given (Ctrl-C, a batch's cancellation)."""
    while thread.is_alive():
        left = None if until is None else until - time.perf_counter()
        if left is not None and left <= 0:
            return
        if poll is None:
            thread.join(interrupt.wait_seconds(left))
            return
        thread.join(0.05 if left is None else min(0.05, left))
        poll()


def load_by(
    key: str,
    loader: Callable[[], Any],
    deadline: Optional[float],
    cost: Optional[float] = None,
    poll: Optional[Callable[[], Any]] = None,
) -> Any:
    """``loader()`` (an import and whatever goes with it), given up at ``deadline``.

    Parameters
    ----------
    key : str
        What is loaded (a module's name, ``"solver:highs"``): one background load a key.
    loader : callable
        Takes nothing and returns what the caller needs (a module, a function); it must
        not return None.
    deadline : float or None
        A :func:`time.perf_counter` instant (the caller's deadline); None: wait as long as
        it takes (``loader()`` in this thread, or the background load under way).
    cost : float, optional
        Seconds the load is expected to take (default ``IMPORT_SECONDS.get(key, 0)``): not
        waited for with less time than this left.
    poll : callable, optional
        Called every 50 ms while waiting (``interrupt.check``: Ctrl-C ends the wait).

    Returns
    -------
    object or None
        What ``loader()`` returned, or None when the deadline came first (the load goes on).

    Raises
    ------
    BaseException
        What ``loader()`` raised (then the next call tries again).
    """
    with _LOCK:
        entry = _LOADS.get(key)
    if entry is None and deadline is None:
        return loader()
    if entry is None or not ("value" in entry[1] or entry[0].is_alive()):
        entry = _start(key, loader)
    thread, box = entry
    if thread.is_alive():
        if deadline is not None:
            left = float(deadline) - time.perf_counter()
            need = IMPORT_SECONDS.get(key, 0.0) if cost is None else float(cost)
            if left < need:
                return None  # it would not end in time: not waited for (see above)
        _wait(thread, None if deadline is None else float(deadline), poll)
        if thread.is_alive():
            return None
    if "error" in box:
        with _LOCK:
            if _LOADS.get(key) == (thread, box):
                del _LOADS[key]  # tried again by the next call
        raise box["error"]
    return box["value"]


def import_by(name: str, deadline: Optional[float], cost: Optional[float] = None) -> Any:
    """Import the module ``name`` by ``deadline`` (:func:`load_by`; a loaded one at once).

    Returns
    -------
    module or None
        The module, or None when ``deadline`` came first: the caller stops with
        ``time_limit`` and its best answer so far, and the import goes on in the background.

    Examples
    --------
    >>> import time
    >>> import_by("json", time.perf_counter() + 5.0).__name__
    'json'
    >>> import_by("json", None).__name__
    'json'
    """
    mod = loaded(name)
    if mod is not None:
        return mod
    return load_by(name, lambda: importlib.import_module(name), deadline, cost)


def import_in_budget(name: str, stop: bool = False, cost: Optional[float] = None) -> Any:
    """Import ``name`` by the deadline of the time limit in force
    (:func:`coalloc._shared.params.with_time_limit`; none: a plain import).

    For a phase inside a method that its family's time limit wraps, where the deadline is
    not passed down: an optional phase (a proof, a bound) skips itself on None; a phase the
    method cannot go on without passes ``stop=True``, and the method ends as its time limit
    ends it (:func:`coalloc._shared.params.stop_now`: the best answer offered so far, or
    the family's no-answer result).

    Returns
    -------
    module or None
        None when the deadline came first (never with ``stop=True``: the stop is raised).
    """
    mod = loaded(name)
    if mod is not None:
        return mod
    from . import params

    left = params.time_left()
    deadline = None if left is None else time.perf_counter() + left
    mod = import_by(name, deadline, cost)
    if mod is None and stop:
        params.stop_now()
    return mod
