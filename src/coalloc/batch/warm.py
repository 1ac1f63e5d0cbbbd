"""A warm process pool that many batches reuse: :func:`pool` and :class:`WorkerPool`.

``solve_many(..., executor="processes")`` starts a process pool for the call and shuts it
down at its end, so every batch pays each worker's start again: a fresh interpreter, the
package and the family's imports (SciPy's ``sparse`` for CTAAP and task mapping), and the
first-use caches of its first instance. On the 2-core VM that is 0.07-0.5 s of CPU per
worker (``bench/shared/ISSUE41.md``, "A worker's start"); at 16 workers a 10 s batch gives
each worker 0.63 s of work, so the start alone caps CTAAP near 11.5x and task mapping near
10x. A :class:`WorkerPool` starts its workers once, at creation, each warming the families
it is told (importing them and solving their small example instance, in every worker at
once, while the caller builds its batch), and keeps them, with the models and caches each
worker received (:mod:`.shipping`), for every batch passed to it as ``executor=``.

The answers are those of any other executor: instance ``i`` is solved with
``instance_seed(seed, i)`` whatever the pool, its warm-up or the batches before.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gc
import os
import shutil
from typing import Any, Iterable, Iterator, Optional, Tuple, Union

import numpy as np

from .worker import _init_worker, _new_temp_root


def _families(families: Union[None, str, Iterable[str]]) -> Tuple[str, ...]:
    """The names of the families to warm, checked (None: every registered family)."""
    from .._shared.family import families as registered

    known = registered()
    if families is None:
        return tuple(known)
    if isinstance(families, str):
        families = (families,)
    try:
        names = tuple(families)
    except TypeError:
        raise TypeError(
            f"families must be None, a family name or names, got {type(families).__name__}"
        ) from None
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"families must hold family names, got {type(name).__name__}")
        if name not in known:
            raise ValueError(f"families: unknown family {name!r} (known: {sorted(known)})")
    return names


def _warm(families: Tuple[str, ...]) -> None:
    """Import each family and solve its example instance with the default method: its
    modules, SciPy's where it needs them, and its first-use caches are then paid here,
    not by a batch. A failure only leaves that family cold (it is an optimisation)."""
    from .._shared.family import families as registered

    specs = registered()
    for name in families:
        spec = specs.get(name)
        if spec is None or spec.example is None:
            continue
        try:
            spec.example(seed=0).solve(seed=0)
        except Exception:  # pragma: no cover - a cold family still solves
            pass
    # what the warm-up left (modules, functions, caches) is moved out of the collector's
    # generations: full collections in a batch no longer walk it (nothing is freed)
    gc.collect()
    gc.freeze()


def _init_pool_worker(temp_root: str, families: Tuple[str, ...]) -> None:
    """A :class:`WorkerPool` worker's start: its temporary folder, then the warm-up."""
    _init_worker(None, 0, temp_root)
    _warm(families)


class WorkerPool(cf.ProcessPoolExecutor):
    """A process pool whose workers stay warm from one batch to the next.

    Pass it as ``executor=`` to :func:`coalloc.solve_many` (and ``solve_many_iter``) as
    often as you like; shut it down (or leave the ``with`` block of :func:`pool`) at the
    end. Its workers start at once, each warming ``families`` (imports, the example
    instance solved, :func:`gc.freeze`), and keep the models and caches they received
    between batches. Temporary files of its workers live in a folder it removes at
    shutdown.

    As with any executor passed to a batch, per-instance ``timeout=`` is cooperative (the
    kernels and the families' loops stop; no worker is killed) and a worker that dies
    breaks the pool: its batch records the lost chunks as :class:`BatchError`, and later
    batches on it fail. ``executor="processes"`` (a pool per call) replaces dead or
    overdue workers instead.

    Parameters
    ----------
    n_jobs : int, optional
        Worker processes; None or -1: every CPU this process may use.
    families : str or iterable of str, optional
        The families each worker warms at its start (None: all five; ``()``: none).
    mp_context : multiprocessing context, optional
        The start method (default: the platform's, as :class:`ProcessPoolExecutor`).
    """

    def __init__(self, n_jobs: Optional[int] = None, *,
                 families: Union[None, str, Iterable[str]] = None,
                 mp_context: Any = None) -> None:  # fmt: skip
        if n_jobs is not None and not isinstance(n_jobs, bool) and n_jobs == -1:
            n_jobs = None
        if n_jobs is not None and (
            isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer))
        ):
            raise TypeError(
                f"n_jobs must be a positive integer or None, got {type(n_jobs).__name__}"
            )
        if n_jobs is not None and n_jobs < 1:
            raise ValueError(f"n_jobs must be a positive integer, None or -1, got {n_jobs!r}")
        if mp_context is not None and not hasattr(mp_context, "Process"):
            raise TypeError(
                f"mp_context must be a multiprocessing context, got {type(mp_context).__name__}"
            )
        names = _families(families)
        workers = int(n_jobs) if n_jobs is not None else _cpu_count()
        self.temp_root = _new_temp_root()
        self.families = names
        super().__init__(
            max_workers=workers, mp_context=mp_context,
            initializer=_init_pool_worker, initargs=(self.temp_root, names),
        )  # fmt: skip
        self._start_all()

    def _start_all(self) -> None:
        """Start every worker now (they warm up in parallel), not one per submitted chunk
        as a spawned pool otherwise does, and the executor's manager thread with them.

        Without that thread a pool that was never given work would not stop its workers at
        :meth:`shutdown` (the standard library tells them to stop from that thread only):
        they would outlive their parent, each blocked on the queue whose pipe the others
        still hold open.
        """
        launch = getattr(self, "_launch_processes", None)  # Python >= 3.11
        if launch is not None and not getattr(self, "_executor_manager_thread", None):
            launch()
            manage = getattr(self, "_start_executor_manager_thread", None)
            if manage is not None:
                manage()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop the workers and, once they are gone (``wait``), remove their folder."""
        super().shutdown(wait=wait, cancel_futures=cancel_futures)
        if wait:
            shutil.rmtree(self.temp_root, ignore_errors=True)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def pool(n_jobs: Optional[int] = None, *, families: Union[None, str, Iterable[str]] = None,
         mp_context: Any = None) -> Iterator[WorkerPool]:  # fmt: skip
    """A warm process pool for several batches, shut down at the end of the ``with`` block.

    Parameters
    ----------
    n_jobs : int, optional
        Worker processes; None or -1: every CPU this process may use.
    families : str or iterable of str, optional
        The families each worker imports and warms at its start (None: all).
    mp_context : multiprocessing context, optional
        The start method, e.g. ``multiprocessing.get_context("spawn")``.

    Yields
    ------
    WorkerPool
        Pass it as ``executor=`` to :func:`coalloc.solve_many`.

    Raises
    ------
    TypeError, ValueError
        For a bad ``n_jobs``, ``families`` or ``mp_context``, naming it.

    Examples
    --------
    >>> import coalloc
    >>> from coalloc.batch import pool
    >>> batches = [[coalloc.generators.random_instance(6, 2, seed=s) for s in range(3)]] * 2
    >>> with pool(2, families="ctaap") as workers:  # doctest: +SKIP
    ...     results = [coalloc.solve_many(b, executor=workers, seed=0) for b in batches]
    """
    workers = WorkerPool(n_jobs, families=families, mp_context=mp_context)
    try:
        yield workers
    finally:
        workers.shutdown(wait=True, cancel_futures=True)


__all__ = ["WorkerPool", "pool"]
