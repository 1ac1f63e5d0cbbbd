"""Supervision of the work a solve or a batch hands to a thread or another process.

One place for what the MILP runner's solvers and the batch layer's process workers share:

* :func:`supervise_thread`: run a solver in a worker thread while the caller waits in slices,
  asking it to stop on Ctrl-C, past a hard deadline or when the caller's cancellation scope
  (:mod:`coalloc._shared.interrupt`: a batch's per-instance timeout) ends (CP-SAT, HiGHS in
  a thread);
* child processes: started so that they die with the process that started them
  (:func:`dying_with_us`, ``PR_SET_PDEATHSIG`` on Linux) and watched by one wait loop
  (:func:`watch_child`): waited for in slices, asked to stop with SIGINT past a deadline,
  on Ctrl-C or when the caller's scope ends, killed when they do not stop in time, and
  reaped through Ctrl-C -- CBC and the HiGHS child;
* process trees: :func:`kill_tree` kills a process and everything it started (a batch's
  overdue worker and its CBC);
* temporary folders named by the process that owns them (:func:`owned_temp_dir`), so that
  the folders of a process killed before it could remove them are swept by the next one
  (:func:`sweep_orphans`): CBC's model files, a process batch's worker folders.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence

from .. import interrupt


def scope_cancelled() -> bool:
    """True when the calling thread's cancellation scope (a batch's per-instance timeout, a
    cancelled batch: :mod:`coalloc._shared.interrupt`) asks the solve to end. The wait loops
    then stop the solver as for Ctrl-C and, once it has ended and its files are gone, raise
    the scope's error through :func:`interrupt.check`."""
    scope = interrupt.current()
    return scope is not None and scope.cancelled


def stopped_detail(solver: str, incumbent: Optional[float], bound: Optional[float],
                   unit: float = 1.0) -> str:  # fmt: skip
    """What a solver stopped by a cancellation scope had found, for the scope's error
    (``unit``: the solver's objective per unit of the model's, as the progress bar takes it).

    Examples
    --------
    >>> stopped_detail("CBC", 12.0, 15.5)
    'CBC was stopped with an incumbent of 12 and a bound of 15.5'
    >>> stopped_detail("HiGHS", None, 3.0, unit=2.0)
    'HiGHS was stopped with no incumbent found and a bound of 1.5'
    """
    found = (
        "no incumbent found" if incumbent is None else f"an incumbent of {incumbent / unit:.10g}"
    )
    proven = "" if bound is None else f" and a bound of {bound / unit:.10g}"
    return f"{solver} was stopped with {found}{proven}"


def _slice(poll: float, *instants: Optional[float], now: Optional[float] = None,
           scoped: bool = True) -> float:  # fmt: skip
    """How long a wait loop may sleep: ``poll`` seconds at most, and never past one of
    ``instants`` (``time.perf_counter()`` values) or the deadline of the calling thread's
    cancellation scope (a time limit's: the supervisor then stops the solver at once; not
    with ``scoped`` False, once it has)."""
    now = time.perf_counter() if now is None else now
    wait = poll
    when = interrupt.deadline_ns() if scoped else -1
    if when >= 0:
        instants = instants + (when / 1e9 + 1e-4,)
    for at in instants:
        if at is not None:
            wait = min(wait, max(0.0, at - now))
    return wait


#: What :func:`supervise_thread` returns as the value of a worker it stopped waiting for
#: (``let_go``): the worker still runs, and its solver must not be read.
LET_GO = object()

#: Workers left running past their deadline (:func:`supervise_thread`'s ``let_go``), each
#: asked to stop; joined when the interpreter exits (:func:`_join_let_go`), for at most
#: :data:`LET_GO_EXIT_WAIT` seconds, so that one that ends soon is not inside its solver
#: while the interpreter shuts down.
_LET_GO_THREADS: set[threading.Thread] = set()
_LET_GO_LOCK = threading.Lock()
_LET_GO_EXIT: list = []  # the exit hook, once registered

#: Seconds the interpreter's exit waits, all let-go workers together, for those still
#: running (issue 36: "a let-go solver thread holds up process exit until its solver looks
#: at its stop request"; a CP-SAT search of the testbed's 800-node model ran on 0.8 s after
#: its call had returned, at a load of 12). Past it the exit goes on without them: they are
#: daemon threads, which the interpreter stops where they next ask for the interpreter lock.
LET_GO_EXIT_WAIT = 2.0

# (Run at the lowest OS priority, a let-go worker would not take the cores from the
# caller's next call; tried and dropped: the workers take the interpreter lock in their
# solver's callbacks, and a low-priority thread descheduled while it holds it stalls the
# caller -- a 1 s call right after a let-go CP-SAT search ran +439 and +133 ms past its
# limit against +68 and +95 ms without, at a load of 13.)


def _join_let_go(wait: Optional[float] = None) -> None:
    """Wait, at interpreter exit, for the workers that were let go (each was asked to stop:
    a solver ends at its next interrupt check or at its own time limit), for at most
    ``wait`` seconds in all (default :data:`LET_GO_EXIT_WAIT`; None there: no bound)."""
    wait = LET_GO_EXIT_WAIT if wait is None else wait
    give_up = None if wait is None else time.monotonic() + float(wait)
    with _LET_GO_LOCK:
        threads = list(_LET_GO_THREADS)
    for t in threads:
        while t.is_alive():
            left = 0.1 if give_up is None else min(0.1, give_up - time.monotonic())
            if left <= 0:
                return  # the rest run on as daemon threads: the exit does not wait
            try:
                t.join(left)
            except KeyboardInterrupt:  # pragma: no cover - a Ctrl-C at exit
                return


def join_at_exit(thread: threading.Thread) -> None:
    """Have ``thread`` (a daemon: a solver let go, a solver's import in the background)
    joined when the interpreter exits (for at most :data:`LET_GO_EXIT_WAIT` seconds),
    rather than frozen where it stands."""
    with _LET_GO_LOCK:
        if not _LET_GO_EXIT:
            _LET_GO_EXIT.append(atexit.register(_join_let_go))
        _LET_GO_THREADS.add(thread)


def let_go_running() -> int:
    """How many workers let go past their deadline are still running (a diagnostic: a
    solver that does not look at its interrupt check for a while, e.g. HiGHS's probing)."""
    with _LET_GO_LOCK:
        for t in [t for t in _LET_GO_THREADS if not t.is_alive()]:
            _LET_GO_THREADS.discard(t)
        return len(_LET_GO_THREADS)


def supervise_thread(work, stop, hard: Optional[float], tick=None, poll: float = 0.1,
                     detail: Optional[Callable[[Any], Optional[str]]] = None,
                     let_go: Optional[float] = None):  # fmt: skip
    """Run ``work()`` in a worker thread while this thread waits in slices of ``poll``.

    ``tick()`` runs after every slice (progress). Ctrl-C here, or the clock passing
    ``hard``, calls ``stop()`` (the solver's own 'stop and keep the incumbent'); the wait
    goes on until ``work`` returns, and a third Ctrl-C is re-raised. Returns ``(value,
    interrupted, overran)``; an exception of ``work`` is raised here. When the caller's
    cancellation scope stopped the solver, its error is raised, with ``detail(value)`` (what
    the solver had found, :func:`stopped_detail`) appended to its message.

    With ``let_go`` (a ``time.perf_counter()`` instant, at or after ``hard``), a worker
    that has been asked to stop at ``hard`` and still runs at ``let_go`` is no longer waited
    for: the value is :data:`LET_GO`, the worker runs on in the background until its solver
    looks at its stop request (it is joined at interpreter exit), and the caller keeps what
    the solver's callbacks recorded -- a thread cannot be killed, and a solver may not look
    at its stop request for a while (HiGHS's probing in presolve: 0.2 s on a 2,055-binary
    program). Ctrl-C and a cancellation scope still wait for the worker.
    """
    box: dict = {}
    done = threading.Event()  # not Thread.join: a Ctrl-C inside join() can leave a live
    # thread looking finished (Python < 3.12), and the solver would be read while it runs

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=run, name="coalloc-solver", daemon=True)
    interrupted = overran = cancelled = False
    presses = 0
    worker.start()
    while not done.is_set():
        try:
            # the deadline, then (asked to stop, not by Ctrl-C or the scope) the let-go
            wake = hard if not overran else None if interrupted or cancelled else let_go
            if done.wait(_slice(poll, wake, scoped=not cancelled)):
                break
            if tick is not None:
                tick()
            now = time.perf_counter()
            if hard is not None and not (overran or interrupted) and now > hard:
                overran = True
                stop()
            if (let_go is not None and overran and not (interrupted or cancelled)
                    and now >= let_go and not done.is_set()):  # fmt: skip
                join_at_exit(worker)
                return LET_GO, interrupted, overran
            if not (cancelled or interrupted) and scope_cancelled():
                cancelled = True
                stop()
        except KeyboardInterrupt:
            presses += 1
            if presses >= 3:
                raise
            if not interrupted:
                interrupted = True
                stop()
    while worker.is_alive():  # it has returned: only its last instructions remain
        try:
            worker.join(0.05)
        except KeyboardInterrupt:
            pass
    if cancelled:  # the scope's TimeoutError/Cancelled, the solver stopped
        said = None
        if detail is not None and "error" not in box:
            try:
                said = detail(box.get("value"))
            except Exception:  # the figures are a courtesy: the timeout is what counts
                said = None
        interrupt.check(said)
    if "error" in box:
        raise box["error"]
    return box.get("value"), interrupted, overran


def free_in_background(objs: list) -> Optional[_Freeing]:
    """Drop the references of ``objs`` (emptied here) in a daemon thread.

    A family's model of tens of thousands of solver variables (Python wrappers in dicts)
    takes 0.1-0.2 s to free (the testbed's CP-SAT model of 800 nodes onto 2,000 PCs): freed
    when the solving function returns, that time falls after its deadline. Handed here once
    the answer is built, the containers are emptied item by item (plain bytecode, so the
    thread gives the interpreter lock back every switch interval) while the caller goes on.

    One long-lived thread does the freeing, fed by a queue: starting a thread per call made
    the caller wait for the new thread's first turn on the interpreter lock, 11-30 ms at a
    load of 11 (issue 36), after its deadline. :func:`start_freer` starts it ahead of time.
    Returns a handle with ``join(timeout)`` and ``is_alive()`` (None when there was nothing
    to free).
    """
    if not objs:
        return None
    items = list(objs)
    objs.clear()
    done = _Freeing()
    start_freer().put((items, done))
    return done


class _Freeing:
    """The handle :func:`free_in_background` returns: set once its items are freed."""

    __slots__ = ("_done",)

    def __init__(self) -> None:
        self._done = threading.Event()

    def join(self, timeout: Optional[float] = None) -> None:
        """Wait until the items are freed, at most ``timeout`` seconds."""
        self._done.wait(timeout)

    def is_alive(self) -> bool:
        """Whether the items are still being freed."""
        return not self._done.is_set()


_FREER: Optional[Any] = None
_FREER_LOCK = threading.Lock()


def start_freer() -> Any:
    """The queue of the one freeing thread, started on first use (cheap after it)."""
    global _FREER
    if _FREER is None:
        with _FREER_LOCK:
            if _FREER is None:
                import queue

                q: Any = queue.SimpleQueue()
                threading.Thread(target=_freer, args=(q,), name="coalloc-free",
                                 daemon=True).start()  # fmt: skip
                _FREER = q
    return _FREER


def _freer(q: Any) -> None:
    while True:
        items, done = q.get()
        _free(items)
        del items
        done._done.set()


def _free(items: list) -> None:
    while items:
        obj = items.pop()
        if isinstance(obj, dict):
            while obj:
                obj.popitem()
        elif isinstance(obj, list):
            while obj:
                obj.pop()
        del obj


# ------------------------------------------------------------------ child processes


#: Run as ``python -I -S -c``: ask Linux to SIGKILL this process when its parent dies
#: (``PR_SET_PDEATHSIG``, kept across ``execv`` for an ordinary binary), give up if the
#: parent is already gone, then become the program (CBC).
EXEC_SHIM = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(3)
os.execv(sys.argv[2], sys.argv[2:])
"""


def dying_with_us(args: list) -> list:
    """``args`` started so that the program dies with this process (Linux; elsewhere as is).

    A small Python launcher sets ``PR_SET_PDEATHSIG`` and execs the program (about 20 ms),
    rather than a ``preexec_fn``, which is unsafe when the caller has threads.
    """
    if not sys.platform.startswith("linux") or not sys.executable:
        return list(args)
    return [sys.executable, "-I", "-S", "-c", EXEC_SHIM, str(os.getpid()), *args]


def signal_child(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to ``proc`` unless it has ended."""
    try:
        if proc.poll() is None:
            proc.send_signal(sig)
    except (OSError, ProcessLookupError):
        pass


@dataclass
class ChildEnd:
    """How :func:`watch_child` ended: what asked the child to stop, and whether it was killed.

    Attributes
    ----------
    interrupted : bool
        Ctrl-C in the calling thread.
    overran : bool
        The clock passed ``stop_at``.
    cancelled : bool
        The calling thread's cancellation scope ended (a batch's timeout); the caller raises
        its error through :func:`coalloc._shared.interrupt.check` once it has cleaned up.
    killed : bool
        The child was killed (SIGKILL) rather than left to end.
    """

    interrupted: bool = False
    overran: bool = False
    cancelled: bool = False
    killed: bool = False


def _sooner(at: Optional[float], other: float) -> float:
    return other if at is None else min(at, other)


def watch_child(
    proc: subprocess.Popen,
    *,
    stop_at: Optional[float] = None,
    kill_at: Optional[float] = None,
    grace: float,
    poll: float,
    tick: Optional[Callable[[], None]] = None,
    threads: Sequence[threading.Thread] = (),
    over: Optional[threading.Event] = None,
) -> ChildEnd:
    """Wait for the child ``proc`` in slices of at most ``poll`` seconds; the one wait loop of
    CBC and of the HiGHS child.

    The child is asked to stop with SIGINT (the solver's own 'stop and keep the incumbent')
    when the clock (``time.perf_counter()``) passes ``stop_at``, when the calling thread's
    cancellation scope ends (:func:`scope_cancelled`) or on Ctrl-C; it is killed when the
    clock passes ``kill_at`` or ``grace`` seconds after the SIGINT of a cancellation or a
    Ctrl-C, whichever comes first. A third Ctrl-C is re-raised (the child is killed first).
    ``tick()`` runs after every slice (progress). With ``over`` (an event its pipe reader
    sets once the child has sent its answer or closed its pipe), the wait ends as soon as it
    is set, without waiting for the child's interpreter to shut down. On the way out the
    child is killed if it still runs, and it and ``threads`` (its pipe readers) are waited
    for through Ctrl-C.
    """
    end = ChildEnd()
    presses = 0
    try:
        while proc.poll() is None and not (over is not None and over.is_set()):
            try:
                now = time.perf_counter()
                if kill_at is not None and now >= kill_at:
                    proc.kill()
                    end.killed = True
                    break
                if stop_at is not None and now >= stop_at and not (end.overran or end.interrupted):
                    end.overran = True
                    signal_child(proc, signal.SIGINT)
                if not (end.cancelled or end.interrupted) and scope_cancelled():
                    end.cancelled = True  # as Ctrl-C: asked to stop, killed after the grace
                    signal_child(proc, signal.SIGINT)
                    kill_at = _sooner(kill_at, now + grace)
                wait = _slice(poll, kill_at, None if end.overran else stop_at, now=now,
                              scoped=not end.cancelled)  # fmt: skip
                if over is not None:  # the answer, or the pipe's end when the child dies
                    over.wait(wait)
                else:
                    try:
                        proc.wait(wait)
                    except subprocess.TimeoutExpired:
                        pass
                if tick is not None:
                    tick()
            except KeyboardInterrupt:
                presses += 1
                if presses >= 3:
                    raise
                if not end.interrupted:
                    end.interrupted = True
                    signal_child(proc, signal.SIGINT)
                    kill_at = _sooner(kill_at, time.perf_counter() + grace)
    finally:
        if proc.poll() is None:
            proc.kill()
            end.killed = True
        reap(proc, list(threads))
    return end


def reap(proc: subprocess.Popen, threads: list) -> None:
    """Wait for the killed or finished child and its pipe threads, through Ctrl-C."""
    for wait in [proc.wait] + [t.join for t in threads]:
        while True:
            try:
                wait()
                break
            except KeyboardInterrupt:
                continue
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass


# ------------------------------------------------------------------ process trees


_KILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def descendants(pid: int) -> List[int]:
    """The processes started by ``pid`` and theirs (Linux /proc; elsewhere none known).

    Kept by hand rather than ``psutil.Process(pid).children(recursive=True)`` (issue 37's
    "a library where it is simpler and not slower"): psutil is not a dependency of the
    package, and it is slower here -- it builds the parent map of every process on the
    machine, where this walk reads only the ``children`` files of the tree itself: 3 ms
    against 55 ms for a tree of 8 processes on the shared 2-core VM (load 15), the same pids.
    """
    found: List[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as handle:
                    kids = [int(k) for k in handle.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


def kill_tree(pid: int) -> None:
    """Kill ``pid`` and what it started (e.g. a batch worker and its CBC), so that nothing is
    orphaned. Raises OSError when ``pid`` itself cannot be killed (already gone)."""
    children = descendants(pid)
    os.kill(pid, _KILL)
    for child in children:
        try:
            os.kill(child, _KILL)
        except OSError:
            pass


# ------------------------------------------------------------------ temporary folders


def _owner_prefix(kind: str, pid: Optional[int] = None) -> str:
    return f"coalloc_{kind}_{os.getpid() if pid is None else pid}_"


def owned_temp_dir(kind: str) -> tempfile.TemporaryDirectory:
    """A temporary folder ``coalloc_<kind>_<pid>_*`` of this process (removed on leaving the
    ``with``), after sweeping those of ``kind`` whose process is gone (:func:`sweep_orphans`).
    """
    sweep_orphans(kind)
    return tempfile.TemporaryDirectory(prefix=_owner_prefix(kind))


def new_owned_temp_dir(kind: str) -> str:
    """As :func:`owned_temp_dir`, but the path of a folder the caller removes itself."""
    sweep_orphans(kind)
    return tempfile.mkdtemp(prefix=_owner_prefix(kind))


def sweep_orphans(kind: str) -> None:
    """Remove the folders ``coalloc_<kind>_<pid>_*`` of processes that were killed before
    they could (a process killed by SIGKILL cannot clean up after itself, and the children
    that wrote there died with it). A folder whose process runs, or that belongs to another
    user, is left alone."""
    root = tempfile.gettempdir()
    try:
        names = os.listdir(root)
    except OSError:
        return
    pattern = re.compile(rf"coalloc_{re.escape(kind)}_([0-9]+)_\w+")
    for name in names:
        m = pattern.fullmatch(name)
        if m is None or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # its owner runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue  # another user's, or not a pid
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)
