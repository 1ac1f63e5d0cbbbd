"""A batch as a Slurm job array: :func:`solve_array` and :func:`solve_array_iter`.

The batch is cut into chunks of about the same predicted solve time (the families' cost
models, :mod:`coalloc.batch.cost`, as ``chunksize="auto"`` cuts them, but longer: a Slurm
job pays a second or so to start), each chunk is pickled into a folder every node can read,
and one ``sbatch --array=0-N%K`` job runs ``python -m coalloc.batch.slurm element LIST``
for each: element ``k`` solves chunk ``k`` of the list with the batch's own chunk solver
(:func:`coalloc.batch.worker._solve_chunk`: the same per-instance seeds, isolation and
timeouts as every executor) and writes its records beside it. The calling process waits
for the records (reading the files, asking ``squeue`` which elements still run) and yields
them in input order.

- **Cap.** ``max_running=K`` is Slurm's ``%K``: at most ``K`` elements at once.
- **Resume.** A chunk's files are named by the SHA-256 of what it solves (its items, an
  instance file's bytes, seeds, method and parameters): a chunk whose records are already
  in the folder (an earlier run that was stopped) is read, not submitted again. The
  command line's ``solve-batch --slurm-array --resume`` plans its chunks over the whole
  file list, so the chunks of a rerun are those of the first run.
- **Failures.** An element that ends without records (killed, out of memory, over its time
  limit, a node lost) gives a :class:`~coalloc.batch.BatchError` of type ``SlurmError`` for
  each of its instances, naming the Slurm job id (``1234_5``) and the tail of its stderr;
  ``solve-batch --resume`` solves those again on the next run.
- **Cleanup.** Closing the iterator early (or Ctrl-C) cancels the array (``scancel``); a
  batch without failed elements removes its files from the folder.
"""

from __future__ import annotations

import collections.abc as abc
import hashlib
import os
import pickle
import shlex
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, List, Mapping, Optional, Sequence

from .._shared.jsonio import atomic_output, file_sha256
from .errors import BatchError, _Invalid, _source
from .run import (
    _check_item,
    _check_params,
    _CostChunks,
    _cpu_count,
    _positive_int,
    _seed_function,
    merge_options,
)
from .worker import _solve_chunk, read_problem

__all__ = ["solve_array", "solve_array_iter", "ARRAY_CHUNK_SECONDS", "SlurmError"]

#: The predicted solve time a chunk (one array element) aims at: an element pays about a
#: second to start (Slurm's launch, Python's and coalloc's imports), a few per cent of it.
ARRAY_CHUNK_SECONDS = 30.0

#: The least predicted time of a chunk that the end-of-batch balancing may cut down to
#: (never more than ``chunk_seconds``): below it an element's start costs more than the
#: balance gains (about a second per element on the 2-core VM's local Slurm).
ARRAY_MIN_SECONDS = 5.0

#: Seconds between two looks at the folder and ``squeue``.
POLL_SECONDS = 0.5

#: Seconds an element that left the queue may take to show its records (a shared file
#: system's cache) before it counts as failed.
GRACE_SECONDS = 10.0

#: Seconds ``squeue`` may fail in a row (the controller restarting) before the batch gives up.
SQUEUE_PATIENCE = 120.0


class SlurmError(RuntimeError):
    """Slurm refused the array (``sbatch`` failed) or stopped answering (``squeue``)."""


@dataclass
class _Chunk:
    """A chunk of the plan: its entries ``(index, item, seed)`` and the digest that names
    its files."""

    entries: list
    digest: str = ""
    job: Optional[str] = None  # "1234_5" once submitted
    records: Optional[list] = None
    gone_at: Optional[float] = None  # when squeue stopped listing it without records


@dataclass
class _Array:
    """The checked arguments of an array batch."""

    folder: str
    method: Optional[str]
    params: dict
    with_report: bool
    family: Optional[str]
    timeout: Optional[float]
    max_running: Optional[int]
    workers: int
    chunk_seconds: float
    sbatch_args: List[str]
    python: str
    poll: float
    progress: Optional[Callable[[int, Optional[int]], None]]
    keep: bool = False
    submitted: List[str] = field(default_factory=list)  # job ids of this run


# --------------------------------------------------------------------------- planning


def _estimate(sizer: _CostChunks, item: Any) -> float:
    """An item's predicted seconds; an instance file is read here to be sized (and dropped)."""
    if isinstance(item, (str, os.PathLike)) and not isinstance(item, _Invalid):
        try:
            item = read_problem(item)
        except Exception:  # the element reports it; it costs little
            return 0.0
    return sizer.predict(item)[2]


def _plan(entries: list, workers: int, seconds: float) -> List[_Chunk]:
    """Cut ``entries`` into chunks of about ``seconds`` of predicted work (and at most a
    quarter of a worker's share of what is left, so that the last elements are short, but
    not below :data:`ARRAY_MIN_SECONDS`)."""
    sizer = _CostChunks(workers, len(entries), seconds)
    sizer.measured = True  # no warm-up: nothing will be measured before the array starts
    costs = [_estimate(sizer, item) for _, item, _ in entries]
    sizer.seen, sizer.seen_cost = 0, 0.0
    chunks: List[_Chunk] = []
    current: list = []
    cost = 0.0
    average = sum(costs) / len(costs) if costs else 0.0
    taken = 0
    for entry, estimate in zip(entries, costs):
        left = (len(entries) - taken) * average
        limit = max(min(seconds, left / (4 * workers)), min(seconds, ARRAY_MIN_SECONDS))
        if current and cost + estimate > limit:
            chunks.append(_Chunk(current))
            current, cost = [], 0.0
        current.append(entry)
        taken += 1
        cost += estimate
        if len(current) >= _CostChunks.MAX:
            chunks.append(_Chunk(current))
            current, cost = [], 0.0
    if current:
        chunks.append(_Chunk(current))
    return chunks


def _chunk_digest(chunk: _Chunk, array: _Array) -> str:
    """SHA-256 naming a chunk's files: what it solves and how (a file by its bytes)."""
    digest = hashlib.sha256()
    for index, item, seed in chunk.entries:
        if isinstance(item, (str, os.PathLike)):
            digest.update(f"file:{os.fspath(item)}:{file_sha256(item)}".encode())
        else:
            digest.update(pickle.dumps(item, protocol=4))
        digest.update(f"|{index}|{seed}|".encode())
    how = (array.method, sorted(array.params.items()), array.with_report, array.family,
           array.timeout)  # fmt: skip
    digest.update(repr(how).encode())
    return digest.hexdigest()


# --------------------------------------------------------------------------- files
def _chunk_path(folder: str, digest: str) -> str:
    return os.path.join(folder, f"chunk-{digest}.pkl")


def _records_path(folder: str, digest: str) -> str:
    return os.path.join(folder, f"records-{digest}.pkl")


def _failed_path(folder: str, digest: str) -> str:
    return os.path.join(folder, f"failed-{digest}")


def _write_atomic(path: str, data: bytes) -> None:
    """``data`` at ``path`` whole or not at all (the one writer: a reader on another node
    never sees half a chunk or record file)."""
    with atomic_output(path, binary=True) as fh:
        fh.write(data)


def _read_records(folder: str, chunk: _Chunk) -> Optional[list]:
    try:
        with open(_records_path(folder, chunk.digest), "rb") as fh:
            records = pickle.load(fh)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None
    return records if isinstance(records, list) and len(records) == len(chunk.entries) else None


def _stderr_tail(folder: str, job: Optional[str], lines: int = 12) -> str:
    if job is None:
        return ""
    try:
        with open(os.path.join(folder, "logs", f"{job}.err"), errors="replace") as fh:
            text = fh.read().splitlines()
    except OSError:
        return "(no stderr file)"
    return "\n".join(text[-lines:]) or "(stderr empty)"


# --------------------------------------------------------------------------- Slurm
def _slurm(argv: List[str], timeout: float = 60.0) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise SlurmError(
            f"{argv[0]} not found: a Slurm job array needs the Slurm client commands "
            "(sbatch, squeue, scancel) on this machine"
        ) from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{argv[0]} did not answer within {timeout:.0f} s") from None


def _submit(array: _Array, chunks: List[_Chunk]) -> str:
    """One ``sbatch --array`` job for ``chunks``; returns its job id."""
    listing = os.path.join(array.folder, f"list-{chunks[0].digest[:16]}-{len(chunks)}.txt")
    _write_atomic(listing, "".join(c.digest + "\n" for c in chunks).encode())
    logs = os.path.join(array.folder, "logs")
    os.makedirs(logs, exist_ok=True)
    cap = f"%{array.max_running}" if array.max_running else ""
    argv = ["sbatch", "--parsable", f"--array=0-{len(chunks) - 1}{cap}",
            "--job-name=coalloc-batch", "--ntasks=1", "--cpus-per-task=1",
            f"--output={logs}/%A_%a.out", f"--error={logs}/%A_%a.err",
            f"--chdir={os.getcwd()}", *array.sbatch_args,
            f"--wrap={shlex.quote(array.python)} -m coalloc.batch.slurm element "
            f"{shlex.quote(listing)}"]  # fmt: skip
    done = _slurm(argv)
    if done.returncode != 0:
        raise SlurmError(f"sbatch refused the array: {done.stderr.strip() or done.stdout.strip()}")
    job = done.stdout.strip().split(";")[0]
    array.submitted.append(job)
    for k, chunk in enumerate(chunks):
        chunk.job = f"{job}_{k}"
    return job


#: Reasons of a pending job that no wait resolves (squeue's ``%r``): the job asks for more
#: than the partition or any node has, or for an account or QOS it may not use.
NEVER_STARTS = ("PartitionConfig", "BadConstraints", "PartitionNodeLimit",
                "PartitionTimeLimit", "InvalidAccount", "InvalidQOS", "DependencyNeverSatisfied",
                "AccountNotAllowed", "QOSNotAllowed")  # fmt: skip


def _active(jobs: List[str]) -> Optional[set]:
    """The ``JOB_k`` of the elements ``squeue`` still lists (None: squeue failed).

    Raises
    ------
    SlurmError
        When an element waits for a reason no wait resolves (:data:`NEVER_STARTS`).
    """
    if not jobs:
        return set()
    done = _slurm(["squeue", "-h", "-r", "-j", ",".join(jobs), "-o", "%i|%T|%r"])
    if done.returncode != 0:
        if "Invalid job id" in done.stderr:  # purged: every element has ended
            return set()
        return None
    active = set()
    for line in done.stdout.splitlines():
        name, _, rest = line.strip().partition("|")
        state, _, reason = rest.partition("|")
        if state == "PENDING" and reason in NEVER_STARTS:
            raise SlurmError(f"Slurm job {name} can never start ({reason}): the array asks "
                             "for more than the partition allows or its nodes have "
                             "(see sbatch_args / --sbatch)")  # fmt: skip
        if name and state not in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                                  "OUT_OF_MEMORY", "NODE_FAIL", "PREEMPTED",
                                  "BOOT_FAIL", "DEADLINE"):  # fmt: skip
            active.add(name)
    return active


def _cancel(jobs: List[str]) -> None:
    if jobs:
        try:
            _slurm(["scancel", *jobs], timeout=30)
        except SlurmError:
            pass


# --------------------------------------------------------------------------- the run
def _failed(chunk: _Chunk, folder: str) -> list:
    tail = _stderr_tail(folder, chunk.job)
    message = (f"Slurm job {chunk.job} ended without results (killed, out of memory, over its "
               f"time limit or a node lost); its stderr ({folder}/logs/{chunk.job}.err) "
               f"ends:\n{tail}")  # fmt: skip
    return [BatchError(index, "SlurmError", message, source=_source(item), seed=seed)
            for index, item, seed in chunk.entries]  # fmt: skip


def _array_run(chunks: List[_Chunk], wanted: Optional[set], array: _Array,
               total: int) -> Iterator[Any]:  # fmt: skip
    """Submit the chunks without records, then yield the records of the indices in
    ``wanted`` (all when None) in input order, as they arrive."""
    os.makedirs(array.folder, exist_ok=True)
    needed = [c for c in chunks if wanted is None or any(e[0] in wanted for e in c.entries)]
    todo = []
    for chunk in needed:
        chunk.digest = _chunk_digest(chunk, array)
        chunk.records = _read_records(array.folder, chunk)  # an earlier run's
        if chunk.records is None:
            payload = (chunk.entries, array.method, array.params, array.with_report,
                       array.family, array.timeout)  # fmt: skip
            _write_atomic(_chunk_path(array.folder, chunk.digest), pickle.dumps(payload, 4))
            _remove(_failed_path(array.folder, chunk.digest))  # an earlier run's failure
            todo.append(chunk)
    completed = False
    failed = 0
    expected = sum(1 for c in needed for e in c.entries if wanted is None or e[0] in wanted)
    done = 0
    try:
        if todo:
            _submit(array, todo)
        last_ok = time.monotonic()
        for chunk in needed:
            while chunk.records is None:
                chunk.records = _read_records(array.folder, chunk)
                if chunk.records is not None:
                    break
                active = _active(array.submitted)
                now = time.monotonic()
                if active is None:
                    if now - last_ok > SQUEUE_PATIENCE:
                        raise SlurmError(f"squeue failed for {SQUEUE_PATIENCE:.0f} s: is the "
                                         "Slurm controller up?")  # fmt: skip
                else:
                    last_ok = now
                    if chunk.job not in active:
                        chunk.gone_at = chunk.gone_at or now
                        if now - chunk.gone_at > GRACE_SECONDS or _error_file(array, chunk):
                            chunk.records = _read_records(array.folder, chunk)
                            if chunk.records is None:
                                chunk.records = _failed(chunk, array.folder)
                                failed += 1
                            break
                if chunk.records is None:
                    time.sleep(array.poll)
            for (index, _, _), record in zip(chunk.entries, chunk.records):
                if wanted is None or index in wanted:
                    done += 1
                    yield record
            if array.progress is not None:
                array.progress(done, total)
        completed = True
    finally:
        # every record handed over (a consumer such as zip() stops before asking for more)
        completed = completed or done == expected
        if not completed:
            _cancel(array.submitted)
        elif failed == 0 and not array.keep:
            _remove_files(array.folder, needed)
        if array.progress is not None and hasattr(array.progress, "close"):
            array.progress.close()


def _error_file(array: _Array, chunk: _Chunk) -> bool:
    """Whether the element wrote its failure marker (an error outside every instance)."""
    return os.path.exists(_failed_path(array.folder, chunk.digest))


def _remove(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def _remove_files(folder: str, chunks: List[_Chunk]) -> None:
    for chunk in chunks:
        _remove(_chunk_path(folder, chunk.digest))
        _remove(_records_path(folder, chunk.digest))
        _remove(_failed_path(folder, chunk.digest))
    for name in os.listdir(folder):
        if name.startswith("list-"):
            _remove(os.path.join(folder, name))
    shutil.rmtree(os.path.join(folder, "logs"), ignore_errors=True)
    try:
        os.rmdir(folder)  # only when nothing else is there
    except OSError:
        pass


def _check(folder: Any, max_running: Any, chunk_seconds: Any, sbatch_args: Any,
           poll: Any) -> tuple:  # fmt: skip
    if not isinstance(folder, (str, os.PathLike)):
        raise TypeError(f"folder must be a path, got {type(folder).__name__}")
    folder = os.path.abspath(os.fspath(folder))
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise ValueError(f"folder must be a folder, got the file {folder!r}")
    max_running = _positive_int(max_running, "max_running", allow_none=True)
    if isinstance(chunk_seconds, bool) or not isinstance(chunk_seconds, (int, float)):
        raise TypeError(f"chunk_seconds must be a positive number, got "
                        f"{type(chunk_seconds).__name__}")  # fmt: skip
    if not chunk_seconds > 0:
        raise ValueError(f"chunk_seconds must be positive, got {chunk_seconds!r}")
    if isinstance(sbatch_args, str):
        sbatch_args = shlex.split(sbatch_args)
    if not isinstance(sbatch_args, abc.Sequence) or not all(
        isinstance(a, str) for a in sbatch_args
    ):
        raise TypeError("sbatch_args must be a string or a sequence of strings")
    if isinstance(poll, bool) or not isinstance(poll, (int, float)) or not poll > 0:
        raise ValueError(f"poll must be a positive number of seconds, got {poll!r}")
    return folder, max_running, float(chunk_seconds), list(sbatch_args), float(poll)


@dataclass(frozen=True, kw_only=True)
class _ArrayOptions:
    """The options of an array batch as the caller gave them, unchecked (:func:`_array_iter`
    checks them); the defaults are :func:`solve_array_iter`'s.

    ``workers``: the chunks are planned for this many (None: ``max_running`` or the CPU
    count). ``with_report``: each record carries its report (``solve-batch``). ``wanted``:
    yield the records of these indices only (the chunks are planned over the whole batch, so
    that a rerun plans the same chunks; those holding none are not run). ``keep``: leave the
    folder behind even when every element succeeded.
    """

    folder: Any
    params: Mapping[str, Any]
    family: Optional[str] = None
    seed: Any = 0
    max_running: Any = None
    workers: Optional[int] = None
    chunk_seconds: Any = ARRAY_CHUNK_SECONDS
    sbatch_args: Any = ()
    poll: Any = POLL_SECONDS
    timeout: Optional[float] = None
    progress: Any = None
    with_report: bool = False
    wanted: Optional[Sequence[int]] = None
    keep: bool = False


def _array_iter(instances: Iterable[Any], method: Optional[str],
                options: _ArrayOptions) -> Iterator[Any]:  # fmt: skip
    """Validate, plan, and return the generator (shared with ``solve-batch --slurm-array``)."""
    if isinstance(instances, (str, bytes, os.PathLike)) or not isinstance(instances, abc.Iterable):
        raise TypeError(f"instances must be an iterable of problems or instance file paths, "
                        f"got {type(instances).__name__}")  # fmt: skip
    items = list(instances)
    params = dict(options.params)
    _check_params(method, params, options.family)
    folder, max_running, chunk_seconds, sbatch_args, poll = _check(
        options.folder, options.max_running, options.chunk_seconds, options.sbatch_args,
        options.poll)  # fmt: skip
    timeout, progress = options.timeout, options.progress
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
        timeout = float(timeout)
    if progress is True:
        from .._shared.progress import ProgressBar

        progress = ProgressBar()
    elif progress is False:
        progress = None
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a bool or a callable, got {type(progress).__name__}")
    seed_of = _seed_function(options.seed, items)
    workers = max_running or options.workers or _cpu_count()
    entries = [(i, _check_item(item), seed_of(i)) for i, item in enumerate(items)]
    chosen = None if options.wanted is None else set(options.wanted)
    array = _Array(folder=folder, method=method, params=params, with_report=options.with_report,
                   family=options.family, timeout=timeout, max_running=max_running,
                   workers=workers, chunk_seconds=chunk_seconds, sbatch_args=sbatch_args,
                   python=sys.executable, poll=poll, progress=progress,
                   keep=options.keep)  # fmt: skip
    chunks = _plan(entries, workers, chunk_seconds)
    total = len(items) if chosen is None else len(chosen)
    return _array_run(chunks, chosen, array, total)


def solve_array_iter(
    instances: Iterable[Any],
    method: Optional[str] = None,
    *,
    folder: Any,
    family: Optional[str] = None,
    seed: Any = 0,
    max_running: Optional[int] = None,
    chunk_seconds: float = ARRAY_CHUNK_SECONDS,
    sbatch_args: Any = (),
    timeout: Optional[float] = None,
    progress: Any = None,
    poll: float = POLL_SECONDS,
    options: Optional[Mapping[str, Any]] = None,
    **params: Any,
) -> Iterator[Any]:
    """Like :func:`solve_array`, but an iterator: each result in input order as soon as its
    element and the earlier ones are done. Closing it early cancels the array.

    Parameters
    ----------
    instances, method, folder, family, seed, max_running : object
        As in :func:`solve_array`.
    chunk_seconds, sbatch_args, timeout, progress, poll, options : object
        As in :func:`solve_array`.
    **params
        Method parameters, as in :func:`solve_array`.

    Returns
    -------
    iterator of Result or BatchError
        The records in input order.
    """
    return _array_iter(instances, method, _ArrayOptions(
        folder=folder, family=family, seed=seed, max_running=max_running,
        chunk_seconds=chunk_seconds, sbatch_args=sbatch_args, timeout=timeout,
        progress=progress, poll=poll, params=merge_options(options, params)))  # fmt: skip


def solve_array(
    instances: Iterable[Any],
    method: Optional[str] = None,
    *,
    folder: Any,
    family: Optional[str] = None,
    seed: Any = 0,
    max_running: Optional[int] = None,
    chunk_seconds: float = ARRAY_CHUNK_SECONDS,
    sbatch_args: Any = (),
    timeout: Optional[float] = None,
    progress: Any = None,
    poll: float = POLL_SECONDS,
    options: Optional[Mapping[str, Any]] = None,
    **params: Any,
) -> List[Any]:
    """Solve a batch as one Slurm job array; results in input order.

    Parameters
    ----------
    instances : iterable
        As in :func:`coalloc.solve_many`: families' instances (mixed freely) or instance
        file paths (read by the elements: on a file system the nodes share). Materialised
        (the array is planned at once).
    method : str, optional
        A method of the problems' family; None: each family's default.
    folder : path
        A folder every node of the cluster can read and write (the chunks, the records,
        the elements' logs ``logs/JOB_K.err``). Created when missing; the batch's files are
        removed from it at the end unless an element failed.
    family : str, optional
        As in :func:`coalloc.solve_many`.
    seed : int, None or sequence of int, default 0
        The batch seed: instance ``i`` is solved with ``instance_seed(seed, i)``, so the
        answers are those of ``solve_many(..., seed=seed)`` on any executor.
    max_running : int, optional
        Most elements running at once (``sbatch --array=0-N%K``); None: no cap.
    chunk_seconds : float, default :data:`ARRAY_CHUNK_SECONDS`
        The predicted solve time of an element (at most a quarter of a worker's share of
        the batch, ``max_running`` workers, so that short batches still spread).
    sbatch_args : str or sequence of str, optional
        More ``sbatch`` options (``"--partition=short --time=01:00:00"``).
    timeout : float, optional
        Seconds per instance, cooperative (as on a caller's executor in ``solve_many``).
    progress : bool or callable, optional
        As in :func:`coalloc.solve_many`.
    poll : float, default :data:`POLL_SECONDS`
        Seconds between two looks at the folder and at ``squeue``.
    options : mapping, optional
        Solver parameters as one dictionary, merged with ``**params``.
    **params
        Solver parameters, passed to every instance's ``solve``.

    Returns
    -------
    list of Result or BatchError
        One entry per instance, in input order; an element that ended without records
        gives a ``BatchError`` of type ``"SlurmError"`` (its job id and stderr) for each of
        its instances.

    Raises
    ------
    TypeError, ValueError
        For invalid arguments, before anything is submitted.
    SlurmError
        When ``sbatch`` refuses the array or ``squeue`` stops answering.
    """
    return list(solve_array_iter(
        instances, method, folder=folder, family=family, seed=seed, max_running=max_running,
        chunk_seconds=chunk_seconds, sbatch_args=sbatch_args, timeout=timeout,
        progress=progress, poll=poll, options=options, **params))  # fmt: skip


# --------------------------------------------------------------------------- the element
def _element(listing: str, task: int) -> int:
    """Solve chunk ``task`` of ``listing`` and write its records beside it."""
    folder = os.path.dirname(os.path.abspath(listing))
    with open(listing) as fh:
        digests = fh.read().split()
    digest = digests[task]
    try:
        with open(_chunk_path(folder, digest), "rb") as fh:
            chunk, method, params, with_report, family, timeout = pickle.load(fh)
        records = _solve_chunk(chunk, method, params, with_report, family, timeout)
        _write_atomic(_records_path(folder, digest), pickle.dumps(list(records), 4))
    except BaseException:
        traceback.print_exc()
        _write_atomic(_failed_path(folder, digest), b"")
        return 1
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m coalloc.batch.slurm element LIST [TASK]`` (TASK: ``SLURM_ARRAY_TASK_ID``)."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) not in (2, 3) or argv[0] != "element":
        print("usage: python -m coalloc.batch.slurm element LIST [TASK]", file=sys.stderr)
        return 2
    task = argv[2] if len(argv) == 3 else os.environ.get("SLURM_ARRAY_TASK_ID")
    if task is None:
        print("coalloc.batch.slurm: no TASK and no SLURM_ARRAY_TASK_ID", file=sys.stderr)
        return 2
    return _element(argv[1], int(task))


if __name__ == "__main__":  # pragma: no cover - run by Slurm
    sys.exit(main())
