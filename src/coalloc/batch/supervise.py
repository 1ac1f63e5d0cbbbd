"""Process supervision of a batch on a process pool solve_many owns.

The process helpers it shares with the MILP runner's child processes (killing a process
tree, temporary folders named by their process and swept after a kill) are in
:mod:`coalloc._shared.milp.supervise`.

:class:`_Watchdog` enforces the per-instance timeouts (it kills the worker of an overdue
instance with what it started, and removes the temporary folder it leaves);
:func:`_isolate_crash` and :func:`_resubmit` replace a pool broken by a dead worker, so that
only the instance that killed it is lost.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import queue as _queue
import shutil
import time
from concurrent.futures.process import BrokenProcessPool
from typing import Deque, Iterable, Optional

from .._shared.milp.supervise import kill_tree
from .errors import _chunk_failed, _source, _TimedOut, _timeout_message
from .worker import _init_worker, _solve_chunk, _worker_temp_dir


class _Watchdog:
    """Per-instance timeouts in a process pool solve_many owns: kill the overdue worker.

    Workers report when each instance starts and ends (``_init_worker``, ``_report``);
    an instance still running ``timeout + grace`` seconds after it started has its worker
    killed (the pool then breaks and is replaced as after a crash), and its item is
    replaced by a :class:`_TimedOut` marker in every chunk that holds it, so that it is
    recorded as timed out and never solved again. The grace leaves the cooperative stop of
    the kernels (the instance's scope) the first chance.
    """

    tick = 0.05  # seconds between two looks at the running instances

    def __init__(self, timeout: float, temp_root: Optional[str] = None):
        self.timeout = timeout
        self.temp_root = temp_root
        self.grace = max(1.0, 0.1 * timeout)
        self.reports = multiprocessing.get_context().Queue()
        self.generation = 0
        self.running: dict = {}  # index -> (pid, start) in the current pool
        self.killed: set = set()

    def new_pool(self, workers: int) -> cf.Executor:
        self.generation += 1
        self.running.clear()
        return cf.ProcessPoolExecutor(
            max_workers=workers, initializer=_init_worker,
            initargs=(self.reports, self.generation, self.temp_root),
        )  # fmt: skip

    def _drain(self) -> None:
        while True:
            try:
                generation, index, pid, start = self.reports.get_nowait()
            except (_queue.Empty, OSError, ValueError):
                return
            if generation != self.generation:
                continue  # from a pool already replaced
            if start is None:
                self.running.pop(index, None)
            else:
                self.running[index] = (pid, start)

    def check(self, chunks: Iterable[list]) -> None:
        """Kill the worker of every overdue instance and mark it in ``chunks``."""
        chunks = list(chunks)
        self._drain()
        now = time.monotonic()
        for index, (pid, start) in list(self.running.items()):
            if now - start < self.timeout + self.grace:
                continue
            del self.running[index]
            try:
                kill_tree(pid)  # the worker and what it started (its CBC)
            except OSError:
                continue
            if self.temp_root is not None:  # what it (or its CBC) left in its temp folder
                shutil.rmtree(_worker_temp_dir(self.temp_root, pid), ignore_errors=True)
            self.killed.add(index)
            message = (
                f"{_timeout_message(self.timeout)}: its worker process was killed and "
                "replaced; the other instances of the batch were not affected"
            )
            for chunk in chunks:
                for k, (i, item, seed) in enumerate(chunk):
                    if i == index and not isinstance(item, _TimedOut):
                        chunk[k] = (i, _TimedOut(message, _source(item)), seed)

    def close(self) -> None:
        self.reports.close()
        self.reports.join_thread()


def _new_process_pool(
    old: Optional[cf.Executor], workers: int, watchdog: Optional[_Watchdog] = None,
    temp_root: Optional[str] = None,
) -> cf.Executor:  # fmt: skip
    """A process pool for a batch (replacing ``old``), whose workers keep their temporary
    files in folders of ``temp_root`` that the batch removes, even after a kill."""
    if old is not None:
        old.shutdown(wait=False, cancel_futures=True)
    if watchdog is not None:
        return watchdog.new_pool(workers)
    return cf.ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(None, 0, temp_root)
    )


def _isolate_crash(
    chunk: list, args: tuple, pool: cf.Executor, workers: int,
    watchdog: Optional[_Watchdog] = None, temp_root: Optional[str] = None,
):  # fmt: skip
    """Re-run a chunk whose worker died one instance at a time in a fresh pool; an instance
    that kills its worker again is recorded as crashed (or as timed out, when the watchdog
    killed it). Returns (records, pool, pool)."""
    pool = _new_process_pool(pool, workers, watchdog, temp_root)
    records = []
    for k in range(len(chunk)):
        i, item, s = chunk[k]
        if isinstance(item, _TimedOut):
            records.extend(_solve_chunk([(i, item, s)], *args))
            continue
        try:
            future = pool.submit(_solve_chunk, [(i, item, s)], *args)
            while watchdog is not None and not future.done():
                cf.wait([future], timeout=watchdog.tick)
                watchdog.check([chunk])
            records.extend(future.result())
        except BrokenProcessPool:
            if isinstance(chunk[k][1], _TimedOut):
                records.extend(_solve_chunk([chunk[k]], *args))
            else:
                died = RuntimeError(
                    "the worker process solving this instance died (crashed, was killed or ran "
                    "out of memory); the other instances of the batch were not affected"
                )
                records.append(_chunk_failed(died, i, item, s))
            pool = _new_process_pool(pool, workers, watchdog, temp_root)
    return records, pool, pool


def _resubmit(pending: Deque, sizes: dict, args: tuple, executor: cf.Executor) -> int:
    """After a crash, run again in the new pool every pending chunk lost with the old one.

    Returns how many instances had already been counted as done (they are counted again
    when their new future finishes)."""
    recount = 0
    for k, (chunk, future) in enumerate(pending):
        if future.done() and not isinstance(future.exception(), BrokenProcessPool):
            continue  # came back before the crash: keep its records
        if sizes.pop(future, None) is None:
            recount += len(chunk)
        again = executor.submit(_solve_chunk, chunk, *args)
        sizes[again] = len(chunk)
        pending[k] = (chunk, again)
    return recount
