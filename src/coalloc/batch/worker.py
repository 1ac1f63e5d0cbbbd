"""The worker side of a batch: read a problem, solve a chunk of ``(index, item, seed)``
under each instance's cancellation scope, and (in a process pool solve_many owns) report
when each instance starts and ends, and keep temporary files in a folder of the worker's own.

:func:`_solve_chunk` is what every executor runs; it is a top-level function so that it
pickles by reference.
"""

from __future__ import annotations

import os
import tempfile
import time
import traceback as _traceback
from typing import Any, List, Optional, Tuple

from .._shared import interrupt
from .._shared.family import kind_of_format, problem_kinds
from .._shared.jsonio import InstanceError, brief, load_json
from .._shared.milp.supervise import new_owned_temp_dir
from .errors import BatchError, _Invalid, _resolve_seed, _source, _TimedOut, _timeout_message
from .shipping import spill, unpack


def read_problem(path: Any) -> Any:
    """Read an instance file of any family; its ``"format"`` names the family.

    A file without ``"format"`` is read as a CTAAP instance (``coalloc.instance``).

    Raises
    ------
    InstanceError
        When the file is unreadable, not an instance of a family, or invalid.
    """
    from .._shared.sniff import sniff, wrong_kind

    if isinstance(path, (str, os.PathLike)):
        found = sniff(path)
        if found.kind not in ("json", "missing"):  # what it is, not "not valid JSON"
            raise wrong_kind(path, found, "solve-batch",
                             "a JSON instance file of a family (see 'coalloc schema')")  # fmt: skip
    data, name = load_json(path)
    kind = kind_of_format(data.get("format")) if isinstance(data, dict) else None
    if kind is not None:
        return kind.from_dict(data, source=name)
    fmt = data.get("format") if isinstance(data, dict) else None
    known = sorted(kind.format for kind in problem_kinds())
    raise InstanceError(
        f"{name}: not an instance file of a family (format {brief(fmt)}; known: {known})"
    )


_WORKER_REPORTS: Any = None
_WORKER_GENERATION = 0


def _init_worker(reports: Any, generation: int, temp_root: Optional[str] = None) -> None:
    global _WORKER_REPORTS, _WORKER_GENERATION
    _WORKER_REPORTS, _WORKER_GENERATION = reports, generation
    if temp_root is not None:
        _use_temp_dir(temp_root)


def _use_temp_dir(temp_root: str) -> None:
    """Make ``<temp_root>/<pid>`` this worker's temporary folder (Python's ``tempfile`` and,
    through ``TMPDIR``, the processes it starts, e.g. CBC): when the worker is killed, the
    parent removes what it left there (see :func:`_worker_temp_dir`)."""
    path = _worker_temp_dir(temp_root, os.getpid())
    os.makedirs(path, exist_ok=True)
    os.environ["TMPDIR"] = path
    tempfile.tempdir = path


def _worker_temp_dir(temp_root: str, pid: int) -> str:
    return os.path.join(temp_root, str(pid))


def _new_temp_root() -> str:
    """The folder of a process pool's temporary folders, removed when the batch ends."""
    return new_owned_temp_dir("batch")  # coalloc_batch_<pid>_*: swept if this process dies


def _report(index: int, start: Optional[float]) -> None:
    if _WORKER_REPORTS is not None:
        try:
            _WORKER_REPORTS.put((_WORKER_GENERATION, index, os.getpid(), start))
        except Exception:  # pragma: no cover - the parent is gone
            pass


def _solve_one(index, item, seed, method, params, with_report, family, timeout=None,
               cancel=None):  # fmt: skip
    if isinstance(item, _TimedOut):
        return BatchError(index, "TimeoutError", item.message, source=item.source, seed=seed)
    source = _source(item)
    scope = interrupt.Scope(
        timeout, message=None if timeout is None else _timeout_message(timeout), parent=cancel
    )
    _report(index, time.monotonic())
    try:
        with scope:
            scope.raise_if_cancelled()
            if isinstance(item, _Invalid):
                raise TypeError(item.message)
            problem = read_problem(source) if source is not None else item
            if family is not None and problem.family != family:
                raise TypeError(f"a {problem.family} problem in a batch for family {family!r}")
            result = problem.solve(method, seed=seed, **params)
            if scope.fired is None and with_report:
                report = problem.verify(result).to_dict()
        if scope.fired is not None:  # stopped, even if the solve caught it and returned
            return _stopped(index, scope.fired, source, seed)
        return (result, report) if with_report else result
    except Exception as exc:
        if scope.fired is not None:  # the scope's error, or what the family made of it
            return _stopped(index, scope.fired, source, seed, _traceback.format_exc())
        return BatchError(
            index, type(exc).__name__, str(exc), source=source, seed=seed,
            traceback=_traceback.format_exc(),
        )  # fmt: skip
    finally:
        _report(index, None)


def _stopped(index: int, error: BaseException, source: Optional[str], seed: Optional[int],
             traceback: str = "") -> BatchError:  # fmt: skip
    """The record of an instance its scope stopped (its timeout, a cancelled batch).

    The scope's error decides, whatever the solve did with it: a family that reports a
    solver failure rather than raising it ("reported, not raised": an exact method's
    ``except Exception``) would otherwise turn a timeout into a result of status ``error``.
    """
    return BatchError(index, type(error).__name__, str(error), source=source, seed=seed,
                      traceback=traceback)  # fmt: skip


def _cpu_seconds() -> float:
    """CPU seconds of this process, all its threads (a solver's own, such as CP-SAT's
    search workers), and of its finished children (an exact method's CBC runs in one):
    what an instance costs, which the machine's load does not change. Wall seconds would:
    on the loaded 2-core VM a worker given a fifth of a core measured five times the cost,
    and ``chunksize="auto"`` cut a testbed batch into chunks of 2-9 instances instead of 18,
    each costing the calling process its submit, wake-ups and result (issue 41: its work
    O(instances), not O(chunks)). Where several threads of one process solve at once
    (threads, a Dask worker's threads) each instance is charged their sum: more than its
    own, so chunks err small, as wall times did."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def _solve_chunk(
    chunk: List[Tuple[int, Any, Optional[int]]],
    method: Optional[str],
    params: dict,
    with_report: bool,
    family: Optional[str],
    timeout: Optional[float] = None,
    cancel: Optional[interrupt.Scope] = None,
    shared: Optional[dict] = None,
    data: Optional[bytes] = None,
) -> list:
    """Solve a chunk of ``(index, item, seed)``; top level so that it pickles by reference.

    ``chunk`` may come packed by a :class:`~coalloc.batch.shipping.Shipper` (its shared
    models as digests), with ``shared`` the objects Dask handed over for them, and ``data``
    the chunk's own pickle when Dask handed it over apart (a large chunk, scattered).
    A chunk packed for a process pool comes back as a :class:`~.shipping._Spill` of its
    records (:func:`~.shipping.received` turns it into them in the calling process).
    """
    start = time.perf_counter()
    back = getattr(chunk, "back", None)  # packed for a process pool: records as a _Spill
    chunk = unpack(chunk, shared, data)
    records = _Records()
    costs = []
    clock = _cpu_seconds()
    for index, item, seed in chunk:
        seed = _resolve_seed(seed, index)  # derived here, not by the calling process
        records.append(_solve_one(index, item, seed, method, params, with_report, family,
                                  timeout, cancel))  # fmt: skip
        now = _cpu_seconds()
        costs.append(now - clock)  # what chunksize="auto" refines its cost model by
        clock = now
    records.costs = costs
    records.seconds = time.perf_counter() - start
    if back is not None:  # pickled here, large arrays through a file of the batch's folder
        out = spill(records, back)
        out.costs = costs
        return out
    return records


class _Records(list):
    """The records of a chunk, the seconds the worker took to solve it (unpacking
    included, wall) and each instance's CPU seconds (:func:`_cpu_seconds`)."""

    seconds: Optional[float] = None
    costs: Optional[List[float]] = None
