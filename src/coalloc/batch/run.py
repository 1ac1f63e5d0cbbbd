"""The run loop of a batch: :func:`solve_many`, :func:`solve_many_iter`, the validation of
their arguments, and the generator that feeds the chunks to an executor with at most
``max_in_flight`` in flight and yields the records in input order.

Why over 800 lines: one idea, the run loop, with its chunk sizer by predicted cost
(:class:`_CostChunks`, which reads the loop's futures) and the pool it owns (:class:`_Held`);
the workers' side is in :mod:`.worker`, errors in :mod:`.errors`, shipping in
:mod:`.shipping`, the cost model in :mod:`.cost`.
"""

from __future__ import annotations

import collections.abc as abc
import concurrent.futures as cf
import contextlib
import functools
import gc
import inspect
import math
import os
import shutil
import statistics
import threading
import time
import warnings
from collections import deque
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import islice
from typing import (
    Any,
    Callable,
    Deque,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Union,
)

import numpy as np

from .._shared import interrupt
from .._shared.family import FamilyInstance, coerce_problem, problem_kinds
from .._shared.milp.outcome import SOLVERS
from .._shared.milp.supervise import new_owned_temp_dir
from .._shared.params import check_backend
from .._shared.progress import ProgressBar
from .._shared.result import Result
from .cost import keyed_cost
from .errors import BatchError, _chunk_failed, _deferred_seed, _Invalid
from .shipping import Shipper, paused_gc, received, shared_folder
from .supervise import _isolate_crash, _new_process_pool, _resubmit, _Watchdog
from .worker import _new_temp_root, _solve_chunk

#: What a batch may contain: a family's Instance, the pair it wraps, or an instance file path.
Instance = Union[FamilyInstance, Tuple[Any, ...], Any, str, "os.PathLike[str]"]

#: The executors a batch names by a word (``executor=``); any
#: :class:`concurrent.futures.Executor` object may be passed instead.
EXECUTORS = ("threads", "processes", "serial")
ON_ERROR = ("record", "raise")


#: The registered kinds, the first time a batch asks: an item of one of them is taken as
#: it is (a kind registered later goes the long way, :func:`coerce_problem`).
_KINDS: frozenset = frozenset()


def _check_item(item: Any) -> Any:
    """The item as a family's Instance (or a path), else an :class:`_Invalid` marker."""
    global _KINDS
    if type(item) in _KINDS:  # the usual item: about 25 us less of the caller's per item
        return item
    if isinstance(item, (str, os.PathLike)):
        return item
    if not _KINDS:
        _KINDS = frozenset(problem_kinds())
        if type(item) in _KINDS:
            return item
    try:
        return coerce_problem(item)
    except TypeError as exc:
        return _Invalid(
            "a batch item must be a family's Instance, the tuple of its parts, a bare "
            f"one-part problem, or the path of an instance file; {exc}"
        )


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _executor_workers(executor: cf.Executor) -> Optional[int]:
    """How many workers an executor has, when it tells (standard pools, Dask), else None."""
    workers = getattr(executor, "_max_workers", None)  # Thread/ProcessPoolExecutor
    if isinstance(workers, int) and workers > 0:
        return workers
    client = getattr(executor, "_client", None)  # distributed's ClientExecutor
    try:
        total = sum(client.nthreads().values())
    except Exception:
        return None
    return total if isinstance(total, int) and total > 0 else None


#: The wall time a chunk of ``chunksize="auto"`` aims at on threads (and serially): a
#: thread's dispatch costs microseconds, so short chunks keep the end of a batch balanced.
AUTO_CHUNK_SECONDS = 0.05
#: ... on a process pool: a chunk costs about 1 ms of the calling process's CPU (its pickle,
#: the pool's queues) and 1-2 ms of its worker's (measured on the 2-core VM,
#: ``bench.shared.scaling_cpu``), about 0.5 % of a 0.4 s chunk (6 % of a 0.05 s one). Was
#: 0.2 s: the pool's own threads in the caller (its manager thread's wake-ups, one or two
#: per chunk, and the feeder's) cost per chunk, not per instance, 0.035-0.045 ms per
#: testbed instance at 0.2 s, 0.02-0.03 at 0.4 s (issue 41, h54house); the end of a batch
#: stays balanced by the quarter-of-a-share rule of :class:`_CostChunks`.
AUTO_CHUNK_SECONDS_PROCESSES = 0.4
#: ... on Dask: a task costs about 5 ms of the client's and the scheduler's CPU and as much
#: of its worker's, 0.5 % of a 1 s chunk; with 16 workers the scheduler then handles 16
#: chunks a second, not 320. Was 0.5 s: on a command-line cluster the client's event loop
#: spends 2-3 ms of CPU per task (its submit, the result's gather, the release), 0.15 of
#: the testbed caller's 0.25 ms per instance; 1 s chunks took it to 0.09-0.11 (issue 41,
#: h55house).
AUTO_CHUNK_SECONDS_DASK = 1.0


def _chunk_seconds(executor: Optional[cf.Executor]) -> float:
    """The chunk duration ``chunksize="auto"`` aims at on ``executor`` (None: serial)."""
    if executor is None or isinstance(executor, cf.ThreadPoolExecutor):
        return AUTO_CHUNK_SECONDS
    if getattr(executor, "_client", None) is not None:
        return AUTO_CHUNK_SECONDS_DASK
    return AUTO_CHUNK_SECONDS_PROCESSES  # a process pool, or another remote executor


class _CostChunks:
    """Chunk boundaries for ``chunksize="auto"`` (the default): chunks of about the same predicted
    solve time, not the same count.

    An instance's cost is its family's prediction
    (:func:`coalloc.batch.cost.predicted_cost`, from its size) times that family's
    correction: the measured over the predicted seconds of the recent instances of that kind
    the workers solved, summed (a chunk's time is a sum: a kind whose instances mostly take
    0.1 ms and sometimes 4 ms costs its mean, not its median), 1 until one has come back. An
    instance without a prediction (a file path, an unknown kind) costs the mean measured
    time of such instances, and a whole chunk until one has come back. A chunk closes when
    its cost reaches ``seconds`` (:func:`_chunk_seconds`; a quarter of it until the first
    chunk has come back, so that a model far off costs little), or when adding the next
    instance would pass it (that instance starts the next chunk), or at :data:`MAX`
    instances; in a batch of known length, also at a quarter of a worker's share of the
    predicted work left, so that the last chunks are short and every worker finishes near
    the same time. Until a chunk has come back only one chunk per worker is sent (a model
    far off commits little work blind). Sizes depend on timing; answers never do (each
    instance's seed is its position's).
    """

    MAX = 4096
    WINDOW = 64  # instances whose measured/predicted ratio is remembered, per kind
    WARMUP = 0.25  # fraction of ``seconds`` a chunk aims at before any has come back
    #: The last chunks' floor, a fraction of ``seconds`` (0.05 s on a process pool, 0.0625 s
    #: on Dask): a quarter of a worker's share of the work left shrinks to one instance at
    #: the end of a batch, and a third to a half of a batch's chunks were that tail (the
    #: testbed on Dask: 120 chunks for 3,000 instances, about 67 of 0.5 s), each costing the
    #: caller a whole chunk's dispatch; a floor of an eighth of a chunk leaves the workers at
    #: most that apart at the end (issue 41, h55house).
    TAIL_FLOOR = 0.125

    def __init__(self, workers: int, total: Optional[int], seconds: float = AUTO_CHUNK_SECONDS):
        self.workers = workers
        self.total = total
        self.seconds = seconds
        self.ratios: dict = {}  # cost key -> deque of (measured, predicted) seconds
        self.factor: dict = {}  # cost key -> measured / predicted, summed over the deque
        self.sums: dict = {}  # cost key -> [measured, predicted, updates since summed afresh]
        self.unknown: Deque[float] = deque(maxlen=self.WINDOW)  # seconds, no prediction
        self.unknown_cost: Optional[float] = None
        self.measured = False
        self.seen = 0  # instances sized so far, and the sum of their estimated costs
        self.seen_cost = 0.0
        self._meta: dict = {}  # future -> [(cost key, predicted seconds or None)]

    def predict(self, item: Any) -> Tuple[Any, Optional[float], float]:
        """``(cost key, the model's seconds or None, estimated seconds)`` of an item."""
        key, raw = keyed_cost(item)
        if raw is None:
            cost = self.unknown_cost if self.unknown_cost is not None else self.seconds
        else:  # the median of the others' only for a kind not measured yet (was: always)
            factor = self.factor.get(key)
            cost = raw * (self._any_factor() if factor is None else factor)
        self.seen += 1
        self.seen_cost += cost
        return key, raw, cost

    def _any_factor(self) -> float:
        """The correction of a kind not measured yet: the median of the others' (the
        machine's speed is common to every family), else 1."""
        if not self.factor:
            return 1.0
        return statistics.median(self.factor.values())

    def limit(self, taken: int) -> float:
        """The cost at which the next chunk closes."""
        seconds = self.seconds if self.measured else self.seconds * self.WARMUP
        if self.total is not None and self.seen:
            left = max(0, self.total - taken) * (self.seen_cost / self.seen)
            tail = max(left / (4 * self.workers), self.seconds * self.TAIL_FLOOR)
            seconds = min(seconds, tail)
        return seconds

    def _remember(self, key: Any, seconds: float, raw: float) -> None:
        """One instance's measured and predicted seconds in ``key``'s window, and the
        window's sums kept as it moves (h51pool: summing the 64 pairs again after every
        chunk cost a chunk of one CTAAP or task-mapping instance 0.2 ms of the caller's CPU
        under cProfile); summed afresh once per window, so that no rounding accumulates."""
        pairs = self.ratios.setdefault(key, deque(maxlen=self.WINDOW))
        sums = self.sums.setdefault(key, [0.0, 0.0, 0])
        if len(pairs) == self.WINDOW:
            old = pairs[0]
            sums[0] -= old[0]
            sums[1] -= old[1]
        pairs.append((seconds, raw))
        sums[0] += seconds
        sums[1] += raw
        sums[2] += 1
        if sums[2] >= self.WINDOW:
            sums[:] = [math.fsum(p[0] for p in pairs), math.fsum(p[1] for p in pairs), 0]

    def _remember_many(self, key: Any, pairs: list) -> None:
        """A chunk's ``(measured, predicted)`` pairs of ``key`` in its window at once: one
        at a time (:meth:`_remember`) when they are few, else the window's sums taken
        afresh over its pairs (a chunk of 40 testbed instances cost the caller's main
        thread 0.18 ms in 40 calls of :meth:`_remember`, h54house)."""
        if len(pairs) < self.WINDOW // 4:
            for seconds, raw in pairs:
                self._remember(key, seconds, raw)
            return
        window = self.ratios.setdefault(key, deque(maxlen=self.WINDOW))
        window.extend(pairs)
        self.sums[key] = [math.fsum(p[0] for p in window), math.fsum(p[1] for p in window), 0]

    def submitted(self, future: cf.Future, meta: list) -> None:
        self._meta[future] = meta

    def finished(self, future: cf.Future) -> None:
        meta = self._meta.pop(future, None)
        try:
            records = future.result(timeout=0)
        except BaseException:  # failed chunks say nothing about the cost
            return
        costs = getattr(records, "costs", None)
        if meta is None or costs is None or len(costs) != len(meta):
            return
        self.measured = True
        fresh: dict = {}  # cost key -> the chunk's (measured, predicted) pairs of that key
        for (key, raw), seconds in zip(meta, costs):
            if raw is None:
                self.unknown.append(seconds)
            else:
                pairs = fresh.get(key)
                if pairs is None:
                    fresh[key] = pairs = []
                pairs.append((seconds, raw))
        for key, pairs in fresh.items():  # the mean, not the median: a chunk's time is a sum
            self._remember_many(key, pairs)
            measured, predicted = self.sums[key][:2]
            self.factor[key] = max(measured / predicted, 1e-6)
        if self.unknown:
            self.unknown_cost = sum(self.unknown) / len(self.unknown)


def _shipper_for(executor: cf.Executor, temp_root: Optional[str]):
    """``(shipper, folder to remove)`` for an executor whose workers unpickle their chunks:
    a process pool (shared models as files of the batch's folder) or a Dask client
    (scattered to every worker); ``(None, None)`` for threads and unknown executors."""
    if isinstance(executor, cf.ProcessPoolExecutor):
        if temp_root is not None:  # the pool solve_many owns: its folder goes with it
            folder = os.path.join(temp_root, "shared")
            os.makedirs(folder, exist_ok=True)
            return Shipper(folder=folder), None
        folder = new_owned_temp_dir("shared")
        return Shipper(folder=folder), folder
    client = getattr(executor, "_client", None)
    if client is not None and callable(getattr(client, "scatter", None)):
        # workers on this machine read the large chunks from files (shared_folder)
        folder = shared_folder(client, lambda: new_owned_temp_dir("shared"))
        return Shipper(client=client, folder=folder), folder
    return None, None


def _positive_int(value: Any, name: str, *, allow_none: bool = False) -> Optional[int]:
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a positive integer, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _seed_function(seed: Any, instances: Any) -> Callable[[int], Optional[int]]:
    """Validate ``seed`` and return index -> what the chunk carries for its seed: the seed
    itself, or for a batch seed the same deferred value for every index, from which the
    worker derives ``instance_seed(seed, index)`` (:func:`~.errors._resolve_seed`)."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy) % 2**64  # fresh, but reported
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        if seed < 0:
            raise ValueError(f"seed must be non-negative, got {seed!r}")
        base = int(seed)
        deferred = _deferred_seed(base)

        def derived(index: int) -> int:
            return deferred  # the worker derives instance_seed(base, index) from it

        return derived
    if isinstance(seed, (str, bytes)) or not isinstance(seed, (abc.Sequence, np.ndarray)):
        raise TypeError(
            "seed must be a non-negative int, None, or a sequence of per-instance seeds, "
            f"got {type(seed).__name__}"
        )
    seeds = []
    for i, s in enumerate(seed):
        if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))):
            raise TypeError(f"seed[{i}] must be an int or None, got {type(s).__name__}")
        if s is not None and s < 0:
            raise ValueError(f"seed[{i}] must be non-negative, got {s!r}")
        seeds.append(None if s is None else int(s))
    if isinstance(instances, abc.Sized) and len(seeds) != len(instances):
        raise ValueError(
            f"seed: got {len(seeds)} per-instance seeds for {len(instances)} instances"
        )

    def explicit(index: int) -> Optional[int]:
        if index >= len(seeds):
            raise ValueError(f"seed: only {len(seeds)} per-instance seeds for more instances")
        return seeds[index]

    return explicit


def _check_params(method: Optional[str], params: dict, family: Optional[str]) -> None:
    """Reject a method or parameter names no candidate family takes, before any work starts.

    With ``family`` only that family is asked; else every family that has ``method`` (every
    family when ``method`` is None), and the call fails only when all of them refuse.
    """
    kinds = problem_kinds(family)  # ValueError for an unknown family
    if method is not None and not isinstance(method, str):
        raise ValueError(f"method must be a method name or None, got {method!r}")
    errors = []
    for cls in kinds:
        try:
            cls.check_params(method, params)
            return
        except (TypeError, ValueError) as exc:
            errors.append(exc)
    owners = [cls for cls in kinds if method in cls.methods]
    if method is not None and not owners:
        every = sorted({m for cls in kinds for m in cls.methods})
        raise ValueError(f"method must be one of {every}, got {method!r}")
    if len(owners) == 1:
        raise errors[kinds.index(owners[0])]
    raise errors[0]


def merge_options(options: Optional[Mapping[str, Any]], params: Mapping[str, Any]) -> dict:
    """The solver parameters of a batch: ``options`` (a mapping) plus ``**params``."""
    if options is None:
        return dict(params)
    if not isinstance(options, abc.Mapping) or not all(isinstance(k, str) for k in options):
        raise TypeError(
            f"options must be a mapping of parameter names to values, got {type(options).__name__}"
        )
    both = sorted(set(options) & set(params))
    if both:
        raise ValueError(f"solver parameter(s) {both} given both in options and as keywords")
    return {**options, **params}


def _check_executor(executor: Any) -> Tuple[Optional[str], Optional[cf.Executor]]:
    """``(the word, None)`` for an executor named by a word (None: ``"threads"``), or
    ``(None, the executor)`` for a :class:`concurrent.futures.Executor`."""
    if executor is None:
        return "threads", None
    if isinstance(executor, str):
        if executor not in EXECUTORS:
            raise ValueError(
                f"executor must be one of {list(EXECUTORS)} or a concurrent.futures.Executor, "
                f"got {executor!r}"
            )
        return executor, None
    if not isinstance(executor, cf.Executor):
        hint = " (for Dask, pass client.get_executor())" if hasattr(executor, "submit") else ""
        raise TypeError(
            f"executor must be one of {list(EXECUTORS)} or a concurrent.futures.Executor, "
            f"got {type(executor).__name__}{hint}"
        )
    return None, executor


def _executor_keyword(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` also taking ``backend=`` in its old meaning, the executor named by a word.

    The pattern of :func:`coalloc._shared.family.renamed_keyword`, for a name that has two
    meanings in a batch: ``backend="threads" | "processes" | "serial"`` is passed on as
    ``executor=`` with a :class:`DeprecationWarning` (both, naming different executors, are
    a ``TypeError``); any other ``backend=`` (``"compiled"``, ``"numpy"``: the kernels) is a
    parameter of the family's method, like every ``**params`` entry (checked here: a word
    that is neither is refused before any work; an exact method's deprecated
    ``backend="cbc"``, its solver, is left to the method). The wrapper's signature is
    ``func``'s, without ``backend``.
    """

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        value = kwargs.get("backend")
        if "backend" in kwargs and value is None:  # the old default: the executor's
            del kwargs["backend"]
        elif isinstance(value, str) and value in EXECUTORS:
            del kwargs["backend"]
            given = kwargs.get("executor")
            if given is not None and given != value:
                raise TypeError(f"executor={given!r} and backend={value!r} (its deprecated "
                                "name) disagree: pass executor= only")  # fmt: skip
            warnings.warn(f"backend= naming the batch's executor is deprecated: pass "
                          f"executor={value!r} (backend= is the kernels' choice, 'compiled' "
                          "or 'numpy')", DeprecationWarning, stacklevel=2)  # fmt: skip
            kwargs["executor"] = value
        elif value is not None and not (isinstance(value, str) and value in SOLVERS):
            check_backend(value)  # the kernels' choice: a bad one fails before any work
        return func(*args, **kwargs)

    run.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    return run


@_executor_keyword
def solve_many(
    instances: Iterable[Instance],
    method: Optional[str] = None,
    *,
    family: Optional[str] = None,
    n_jobs: Optional[int] = None,
    executor: Union[str, cf.Executor, None] = None,
    seed: Union[int, None, Sequence[Optional[int]]] = 0,
    chunksize: Union[int, str] = "auto",
    max_in_flight: Optional[int] = None,
    on_error: str = "record",
    progress: Union[None, bool, Callable[[int, Optional[int]], None]] = None,
    options: Optional[Mapping[str, Any]] = None,
    timeout: Optional[float] = None,
    **params: Any,
) -> List[Union[Result, BatchError]]:
    """Solve a batch of instances in parallel; results in input order.

    Parameters
    ----------
    instances : iterable
        Problems of any family, mixed freely: a family's ``Instance``
        (:class:`coalloc.ctaap.Instance`, :class:`coalloc.taskmap.Instance`), the pair it
        wraps (``(Request, Offer)``, ``(TaskGraph, ResourceGraph)``), or the path (str or
        path-like) of an instance file of a family (``coalloc docs formats``), read in the worker.
        Consumed lazily (a generator is fine).
    method : str, optional
        A method of the problems' family (``coalloc.<family>.METHODS``); None: each
        family's default (``"ctaap"`` for CTAAP, ``"open+improve"`` for task mapping).
    family : str, optional
        Check ``method`` and ``params`` against this family only (``"ctaap"``,
        ``"taskmap"``), and record a problem of another family as a :class:`BatchError`;
        by default they must suit some family that has ``method``.
    n_jobs : int, optional
        Workers of the pool solve_many creates: a positive number, or None / -1 for every
        CPU this process may use. With ``executor``, it only sizes the in-flight window:
        say how many workers the executor has (by default the worker count a standard pool
        or a Dask client reports, else the local CPU count); with ``executor="serial"`` it
        must be None or 1.
    executor : {"threads", "processes", "serial"} or concurrent.futures.Executor, optional
        What runs the instances. A word: a ``ThreadPoolExecutor`` (``"threads"``, the
        default), a ``ProcessPoolExecutor`` (``"processes"``: default start method of the
        platform; scripts need the usual ``if __name__ == "__main__":`` guard where that is
        spawn), or a plain loop in the calling thread (``"serial"``); that pool lives as long
        as the call. An executor object: the batch runs on it and leaves it running, e.g.
        a ``ThreadPoolExecutor``, a ``ProcessPoolExecutor`` with the start method of your
        choice, or ``distributed.Client(...).get_executor()`` for a Dask cluster.
        (``backend=`` was this argument's name for the words; it still works, with a
        :class:`DeprecationWarning`. ``backend="compiled"`` or ``"numpy"``, the kernels'
        choice, goes to the family's method as any other parameter.)
    seed : int, None or sequence of int, default 0
        The batch seed: instance ``i`` is solved with ``instance_seed(seed, i)``
        (see :func:`instance_seed`), so the answers do not depend on the executor,
        ``n_jobs``, ``chunksize`` or completion order. None draws a fresh batch seed (the
        seed each instance used is in ``result.seed``). A sequence gives the seed of every
        instance explicitly (its length must match the batch).
    chunksize : int or "auto", default "auto"
        Instances per submitted task. ``"auto"`` (the default) sizes every chunk by the
        predicted solve time of its instances, not by their count: each family predicts an
        instance's time from its size (:func:`coalloc.batch.cost.predicted_cost`, a model
        shipped with the package), rescaled per family by the times the workers measure on
        the first instances, and a chunk holds about 0.05 s of work on threads, 0.4 s on
        processes and 1 s on Dask (:data:`AUTO_CHUNK_SECONDS` and its siblings: a few
        per cent of a chunk goes to its dispatch), a quarter of that until the first chunk
        has come back, and at most a quarter of a worker's share of the work left in a
        batch of known length (but not under an eighth of a chunk). Instances of a
        millisecond then travel by the hundred, instances of a second one by one, and a
        batch mixing both (mixed sizes, mixed families) ends with every worker busy. An
        integer: that many instances per chunk, whatever they cost (``1``: the default
        before issue 41). The answers are the same for every ``chunksize``.
    max_in_flight : int, optional
        Most chunks submitted and not yet returned in order (default ``4 * n_jobs``); bounds
        the memory held for a long iterable. A chunk that came back waits for the earlier
        ones, so the window must leave room for them: with ``2 * n_jobs`` a chunk slower
        than its neighbours left the other workers idle once they had finished the rest of
        the window.
    on_error : {"record", "raise"}, default "record"
        ``"record"``: a failed instance gives a :class:`BatchError` in its place and the
        others go on. ``"raise"``: the first failure (in input order) is raised as a
        :class:`BatchError` and the rest of the batch is cancelled.
        With ``executor="processes"``, a worker process that dies (a crash, a kill, the
        out-of-memory killer) costs only the instance it was solving: the pool is replaced,
        the other instances lost with it are solved again, and the culprit is recorded.
    progress : bool or callable, optional
        ``True`` draws a :class:`ProgressBar` on stderr; a callable is called as
        ``progress(done, total)`` in the calling thread as chunks complete (``total`` is
        None when the iterable has no length), and its ``close()`` method, if it has one,
        at the end.
    options : mapping, optional
        Solver parameters as one dictionary, like SciPy's ``options=``: the way to pass a
        solver keyword that solve_many takes for itself (``seed=``, ``timeout=``, ...).
        Merged with ``**params``; a key given in both is an error. The integer-programming
        solver of the exact methods is ``solver=`` in every family, so it needs no detour:
        ``solve_many(batch, "exact", solver="cpsat", time_limit=10)``.
    timeout : float, optional
        Seconds each instance may take; one that runs longer is a :class:`BatchError` with
        ``exc_type="TimeoutError"`` and the others are unaffected. With
        ``executor="processes"`` it is enforced (the compiled kernels stop it within about
        50 ms, else its worker process is killed and replaced after a grace of
        ``max(1, timeout / 10)`` s); with threads, serially and on a caller's executor it is
        cooperative: the compiled kernels and the families' Python loops stop within about
        50 ms, a running MILP solve when its runner next looks (see the module docstring).
    **params
        Solver parameters, passed to the family's ``solve`` for every instance (for CTAAP
        also ``bound=True``, see :func:`coalloc.solve`). Names no candidate family's method
        takes are rejected before any work starts.

    Returns
    -------
    list of Result or BatchError
        One entry per instance, in input order: the family's result
        (:class:`coalloc.SolveResult`, :class:`coalloc.taskmap.MappingResult`, ...).
        ``r.success`` is False for a :class:`BatchError` (``r.ok`` too).

    Raises
    ------
    TypeError, ValueError
        For invalid arguments, before any instance is solved; the message names the
        argument.
    BatchError
        With ``on_error="raise"``, for the first instance that fails.

    See Also
    --------
    solve_many_iter : the same, as an iterator that yields each result when it is ready.

    Examples
    --------
    >>> import coalloc
    >>> batch = [coalloc.generators.fig2(r, seed=r) for r in (1, 2, 3)]
    >>> results = coalloc.solve_many(batch, n_jobs=2, seed=7)
    >>> [r.success for r in results]
    [True, True, True]
    >>> res = coalloc.solve(*batch[1], seed=coalloc.batch.instance_seed(7, 1))
    >>> bool((res.assignment == results[1].assignment).all())
    True
    """
    results = solve_many_iter(
        instances, method, family=family, n_jobs=n_jobs, executor=executor, seed=seed,
        chunksize=chunksize, max_in_flight=max_in_flight, on_error=on_error,
        progress=progress, options=options, timeout=timeout, **params,
    )  # fmt: skip
    _WHOLE.on = True  # (read as the run starts, in list's first next: see _run)
    try:
        return list(results)
    finally:
        _WHOLE.on = False


#: Per thread: whether the batch starting now is :func:`solve_many`'s, whose results are
#: collected by ``list`` (no caller's code between two chunks but its progress callback).
_WHOLE = threading.local()

#: Seconds between two collections while :func:`solve_many`'s run keeps the collector
#: paused: the cyclic garbage of a long batch (a failed chunk's traceback, a future's
#: cycles) stays bounded; one collection every half minute is well under 1 % of a run.
PAUSED_COLLECT_EVERY = 30.0
#: The generations that collection looks at: the young and middle ones (1), which hold
#: everything allocated since the run paused the collector (no collection promoted it), not
#: the whole heap (2). A full collection of the caller's heap is the user's (the collector's
#: own, after the batch): on the benchmark's process (3,000 testbed instances and their
#: serial answers held) it cost the caller's main thread 0.1-0.3 s, a fifth of its CPU
#: over a 1,500-instance Dask batch, against a few ms for the young ones (issue 41,
#: h55house). A cycle that survives one such collection and dies later waits for the
#: user's next full collection.
PAUSED_COLLECT_GENERATION = 1


@_executor_keyword
def solve_many_iter(
    instances: Iterable[Instance],
    method: Optional[str] = None,
    *,
    family: Optional[str] = None,
    n_jobs: Optional[int] = None,
    executor: Union[str, cf.Executor, None] = None,
    seed: Union[int, None, Sequence[Optional[int]]] = 0,
    chunksize: Union[int, str] = "auto",
    max_in_flight: Optional[int] = None,
    on_error: str = "record",
    progress: Union[None, bool, Callable[[int, Optional[int]], None]] = None,
    options: Optional[Mapping[str, Any]] = None,
    timeout: Optional[float] = None,
    **params: Any,
) -> Iterator[Union[Result, BatchError]]:
    """Like :func:`solve_many`, but an iterator: yields each result, in input order, as
    soon as it and every earlier one are done (like ``Executor.map``, but lazy on input).

    The arguments are checked when this is called; the work starts at the first ``next``.
    Closing the iterator early (``break``, ``close()``) cancels the chunks not yet started
    and shuts down the pool it created.

    Parameters
    ----------
    instances, method, family, n_jobs, executor, seed, chunksize : object
        As in :func:`solve_many`.
    max_in_flight, on_error, progress, options, timeout : object
        As in :func:`solve_many`.
    **params
        Method parameters, as in :func:`solve_many`.

    Returns
    -------
    iterator of Result or BatchError
        The result of each instance (a :class:`BatchError` for a failed one), in input
        order.

    Raises
    ------
    ValueError, TypeError
        Bad arguments (at the call, before any work).

    Examples
    --------
    >>> import coalloc
    >>> batch = [coalloc.generators.random_instance(6, 2, seed=s) for s in range(3)]
    >>> for result in coalloc.solve_many_iter(batch, n_jobs=1, seed=0):
    ...     print(result.n_allocated, result.status)
    2 optimal
    1 optimal
    6 optimal
    """
    batch = _BatchOptions(family=family, n_jobs=n_jobs, executor=executor, seed=seed,
                          chunksize=chunksize, max_in_flight=max_in_flight, on_error=on_error,
                          progress=progress, timeout=timeout)  # fmt: skip
    return _batch_iter(instances, method, batch, params=merge_options(options, params),
                       with_report=False)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class _BatchOptions:
    """How a batch runs, as given to :func:`solve_many_iter` (checked by
    :func:`_batch_iter`); the defaults are :func:`solve_many`'s."""

    family: Optional[str] = None
    n_jobs: Optional[int] = None
    executor: Any = None
    seed: Any = 0
    chunksize: Union[int, str] = 1
    max_in_flight: Optional[int] = None
    on_error: str = "record"
    progress: Any = None
    timeout: Optional[float] = None


@dataclass(frozen=True, kw_only=True)
class _RunPlan:
    """A batch's checked options, as :func:`_run` uses them."""

    executor: Optional[cf.Executor]
    pool_kind: str
    workers: int
    chunksize: Union[int, str]
    max_in_flight: int
    raise_errors: bool
    progress: Optional[Callable[[int, Optional[int]], None]]
    total: Optional[int]
    timeout: Optional[float] = None
    cancel: Optional[interrupt.Scope] = None


def _batch_iter(instances, method, batch: _BatchOptions, *, params,
                with_report) -> Iterator[Any]:  # fmt: skip
    """Validate everything, then return the generator (shared with ``coalloc solve-batch``).

    With ``with_report`` each success is a ``(result, verify_report_dict)`` pair.
    """
    family, n_jobs, executor, chunksize = (batch.family, batch.n_jobs, batch.executor,
                                           batch.chunksize)  # fmt: skip
    max_in_flight, on_error, progress, timeout = (batch.max_in_flight, batch.on_error,
                                                  batch.progress, batch.timeout)  # fmt: skip
    if isinstance(instances, (str, bytes, os.PathLike)) or not isinstance(instances, abc.Iterable):
        raise TypeError(
            "instances must be an iterable of problems (a family's Instance, a pair, or an "
            "instance file path), "
            f"got {type(instances).__name__}"
        )
    _check_params(method, params, family)
    pool_kind, executor = _check_executor(executor)
    if n_jobs is not None and not isinstance(n_jobs, bool) and n_jobs == -1:
        n_jobs = None
    n_jobs = _positive_int(n_jobs, "n_jobs (or None / -1 for all CPUs)", allow_none=True)
    if pool_kind == "serial" and n_jobs not in (None, 1):
        raise ValueError(f"n_jobs must be None or 1 with executor='serial', got {n_jobs}")
    workers = n_jobs or (executor is not None and _executor_workers(executor)) or _cpu_count()
    if not (isinstance(chunksize, str) and chunksize == "auto"):
        chunksize = _positive_int(chunksize, 'chunksize (or "auto")')
    max_in_flight = _positive_int(max_in_flight, "max_in_flight", allow_none=True)
    if max_in_flight is None:
        max_in_flight = 4 * workers
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {list(ON_ERROR)}, got {on_error!r}")
    if progress is True:
        progress = ProgressBar()
    elif progress is False:
        progress = None
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a bool or a callable, got {type(progress).__name__}")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.number)):
            raise TypeError(
                "timeout must be a positive number of seconds or None, "
                f"got {type(timeout).__name__}"
            )
        timeout = float(timeout)
        if not (timeout > 0 and np.isfinite(timeout)):
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    seed_of = _seed_function(batch.seed, instances)
    total = len(instances) if isinstance(instances, abc.Sized) else None
    cancel = interrupt.Scope()  # cancelled when the batch ends early: stops running kernels
    args = (method, dict(params), with_report, family, timeout, cancel)
    plan = _RunPlan(executor=executor, pool_kind=pool_kind, workers=workers, chunksize=chunksize,
                    max_in_flight=max_in_flight, raise_errors=on_error == "raise",
                    progress=progress, total=total, timeout=timeout, cancel=cancel)  # fmt: skip
    return _run(instances, args, seed_of, plan)


@dataclass
class _Held:
    """What a batch run holds and releases at its end, whatever the end
    (:meth:`release`)."""

    owned: Optional[cf.Executor] = None  # a pool the run created
    watchdog: Optional[_Watchdog] = None
    temp_root: Optional[str] = None  # the temporary folders of an owned process pool
    shipper: Optional[Shipper] = None
    shared_root: Optional[str] = None  # our files on the caller's process pool or Dask
    paused: Any = None  # the collector's pause of a whole solve_many run (see _run)
    collect_at: float = 0.0  # the paused run's next collection (time.monotonic)

    def collect_if_due(self) -> None:
        """A collection of the young generations when a paused run's
        :data:`PAUSED_COLLECT_EVERY` is up (nothing when the run is not paused)."""
        if self.paused is not None and time.monotonic() >= self.collect_at:
            gc.collect(PAUSED_COLLECT_GENERATION)
            self.collect_at = time.monotonic() + PAUSED_COLLECT_EVERY

    def start(self, plan: _RunPlan) -> cf.Executor:
        """The executor of a pooled run: the caller's, else one this run creates and owns
        (a process pool with its temporary folders and, with a timeout, a watchdog)."""
        executor = plan.executor
        if executor is None and plan.pool_kind == "processes":
            self.temp_root = _new_temp_root()
            if plan.timeout is not None:
                self.watchdog = _Watchdog(plan.timeout, self.temp_root)
            executor = self.owned = _new_process_pool(None, plan.workers, self.watchdog,
                                                      self.temp_root)  # fmt: skip
        elif executor is None:
            executor = self.owned = cf.ThreadPoolExecutor(max_workers=plan.workers)
        self.shipper, self.shared_root = _shipper_for(executor, self.temp_root)
        return executor

    def release(self, interrupted: bool) -> None:
        """Shut down what the run owns (its processes terminated after Ctrl-C) and remove
        its temporary folders, the pool's after the pool: no worker writes there then."""
        if self.paused is not None:
            self.paused, paused = None, self.paused
            paused.__exit__(None, None, None)
        if self.owned is not None:
            if interrupted and isinstance(self.owned, cf.ProcessPoolExecutor):
                for process in list((getattr(self.owned, "_processes", None) or {}).values()):
                    process.terminate()
            self.owned.shutdown(wait=True, cancel_futures=True)
        if self.watchdog is not None:
            self.watchdog.close()
        if self.shipper is not None:
            self.shipper.close()
        if self.shared_root is not None:  # the caller's pool or cluster: our files only
            shutil.rmtree(self.shared_root, ignore_errors=True)
        if self.temp_root is not None:  # after the pool: no worker writes there any more
            shutil.rmtree(self.temp_root, ignore_errors=True)


def _serial(next_chunk: Callable[[], list], args: tuple, emit: Callable, progress: Any,
            total: Optional[int], sizer: Any, metas: list) -> Iterator[Any]:  # fmt: skip
    """A serial batch: each chunk solved here, in turn (its time told to ``sizer``, the cost
    sizer of ``chunksize="auto"``, when there is one; ``metas``: its view of the chunk)."""
    done = 0
    while True:
        chunk = next_chunk()
        if not chunk:
            return
        records = _solve_chunk(chunk, *args)
        if sizer is not None:
            done_future: cf.Future = cf.Future()
            done_future.set_result(records)
            sizer.submitted(done_future, metas[0])
            sizer.finished(done_future)
        done += len(records)
        if progress is not None:
            progress(done, total)
        yield from emit(records)


def _submit(pool: cf.Executor, chunk: list, args: tuple, shipper: Optional[Shipper]) -> cf.Future:
    """Submit a chunk to ``pool``, its instances shipped by ``shipper`` when there is one."""
    if shipper is None:
        return pool.submit(_solve_chunk, chunk, *args)
    payload, keywords = shipper.pack(chunk)
    return pool.submit(_solve_chunk, payload, *args, **keywords)


def _run(instances, args, seed_of, plan: _RunPlan) -> Iterator[Any]:
    """The batch's generator: chunks of ``instances`` solved on ``plan``'s executor (or
    here, serially), yielded in input order."""
    workers, chunksize, max_in_flight = plan.workers, plan.chunksize, plan.max_in_flight
    progress, total, cancel = plan.progress, plan.total, plan.cancel
    items = enumerate(instances)
    done = 0
    sizer = _CostChunks(workers, total) if chunksize == "auto" else None
    taken = 0
    carried: list = []  # the instance that would have passed a chunk's cost: the next one's
    metas: list = []  # the sizer's view of the chunk next_chunk returned last

    def next_chunk() -> list:
        nonlocal taken
        if sizer is None:
            chunk = [(i, _check_item(item), seed_of(i)) for i, item in islice(items, chunksize)]
            taken += len(chunk)
            return chunk
        chunk, meta, cost = [], [], 0.0
        limit = sizer.limit(taken)
        while len(chunk) < sizer.MAX:
            if carried:
                entry, key, raw, estimate = carried.pop()
            else:
                try:
                    i, item = next(items)
                except StopIteration:
                    break
                entry = (i, _check_item(item), seed_of(i))
                key, raw, estimate = sizer.predict(entry[1])
            if chunk and cost + estimate > limit:
                carried.append((entry, key, raw, estimate))
                break
            chunk.append(entry)
            meta.append((key, raw))
            cost += estimate
            if cost >= limit:
                break
        taken += len(chunk)
        metas[:] = [meta]
        return chunk

    def emit(records: list) -> Iterator[Any]:
        for record in records:
            if plan.raise_errors and isinstance(record, BatchError):
                raise record
            yield record

    held = _Held()
    interrupted = False
    pending: Deque[Tuple[list, cf.Future]] = deque()
    try:
        if plan.pool_kind == "serial":
            yield from _serial(next_chunk, args, emit, progress, total, sizer, metas)
            return

        executor = held.start(plan)
        watchdog, shipper = held.watchdog, held.shipper
        # the calling process pickles (shipper) or hands over objects (threads): only the
        # first builds garbage worth a pause of the collector (paused_gc)
        pause = paused_gc if shipper is not None else contextlib.nullcontext
        if shipper is not None and getattr(_WHOLE, "on", False):
            # solve_many's batch on processes or Dask, where the caller only packs chunks
            # and loads records: the collector paused for the whole run, not chunk by chunk
            # (paused, its counts still grew, and the first allocation after each chunk set
            # off the collection they had deferred: with just-built instances in the heap,
            # one full collection of the whole heap, 0.07 of the testbed caller's 0.2 ms per
            # instance). The batch's records are kept and its pickles freed by reference
            # counting; what is left goes at the collector's next run, after the batch.
            held.paused = paused_gc()
            held.paused.__enter__()
            held.collect_at = time.monotonic() + PAUSED_COLLECT_EVERY
            pause = contextlib.nullcontext  # (paused already: no lock and count per chunk)
        if sizer is not None:
            sizer.seconds = _chunk_seconds(executor)

        sizes = {}  # future -> chunk size, for the futures not yet counted as done
        exhausted = False

        def fill() -> None:
            nonlocal exhausted
            while not exhausted and len(pending) < max_in_flight:
                if sizer is not None and not sizer.measured and len(pending) >= workers:
                    return  # one blind chunk per worker: the rest sized by what it measures
                with pause():  # no collections set off by a chunk's short-lived pickle
                    chunk = next_chunk()
                    if not chunk:
                        exhausted = True
                        return
                    try:
                        future = _submit(executor, chunk, args, shipper)
                    except Exception as exc:  # e.g. a shut-down executor or a broken pool
                        future = cf.Future()
                        future.set_exception(exc)
                pending.append((chunk, future))
                sizes[future] = len(chunk)
                if sizer is not None:
                    sizer.submitted(future, metas[0])

        def count(finished) -> None:
            nonlocal done
            for future in finished:
                done += sizes.pop(future, 0)
                if sizer is not None:
                    sizer.finished(future)
            if progress is not None:
                progress(done, total)

        fill()
        while pending:
            chunk, head = pending[0]
            while head in sizes:
                finished, _ = cf.wait(
                    list(sizes), return_when=cf.FIRST_COMPLETED,
                    timeout=None if watchdog is None else watchdog.tick,
                )  # fmt: skip
                count(finished)
                if watchdog is not None:
                    watchdog.check(c for c, _ in pending)
            pending.popleft()
            try:
                with pause():
                    records = received(head.result())  # a process pool's: through a file if large
            except BrokenProcessPool as exc:
                if held.owned is None:  # the caller's executor: it cannot be replaced here
                    records = [_chunk_failed(exc, i, item, s) for i, item, s in chunk]
                else:  # a worker died: only the instance that killed it is lost
                    records, executor, held.owned = _isolate_crash(
                        chunk, args, held.owned, workers, watchdog, held.temp_root)  # fmt: skip
                    done -= _resubmit(pending, sizes, args, executor)
            except Exception as exc:  # the chunk never ran or never came back
                records = [_chunk_failed(exc, i, item, s) for i, item, s in chunk]
            fill()  # keep the workers busy while the caller handles these results
            held.collect_if_due()
            yield from emit(records)
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        if cancel is not None:  # running instances of threads stop at their next kernel poll
            cancel.cancel(interrupt.Cancelled("the batch was stopped before this instance ended"))
        for _, future in pending:
            future.cancel()
        held.release(interrupted)
        if progress is not None and hasattr(progress, "close"):
            progress.close()
