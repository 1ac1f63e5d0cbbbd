"""Workloads: requests that arrive over time, as ``coalloc.collective.workload`` JSON or as a
Standard Workload Format trace (``.swf``) mapped to requests by :func:`swf_requests`.

* ``coalloc.collective.workload`` (JSON): ``requests``: a list of requests with ``arrival``
  (a request without ``earliest_start`` opens its window at its arrival, as SWF jobs do).
* Standard Workload Format (``.swf``): :func:`read_swf` reads the 18 fields of
  :data:`SWF_FIELDS`; :func:`swf_workload` maps the jobs to requests as the format's fields
  say (job numbers kept, the status field obeyed, the requested time reserved, the run time
  recorded beside) and :func:`swf_requests` returns only the ``(arrival, request)`` pairs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import numpy as np

from ..._shared.jsonio import InstanceError, PathOrFile, check_envelope, load_json, read_text
from ..._shared.schema import AnyValue, ListOf, Obj, check
from ..model import CollectiveRequest
from ._common import DECIMAL
from .json_files import REQUEST_SCHEMA, VERSION, request_from_dict

__all__ = [
    "read_workload",
    "read_swf",
    "swf_requests",
    "swf_workload",
    "SWFWorkload",
    "SWF_FIELDS",
    "SWF_STATUS",
    "WORKLOAD_FORMAT",
    "WORKLOAD_SCHEMA",
]

#: The 18 fields of a Standard Workload Format line, in order (field ``k`` of the format is
#: column ``k - 1`` of :func:`read_swf`'s array); ``-1`` means unknown in every field.
SWF_FIELDS = (
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time_used",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)

#: The values of the status field (11): 1 completed, 0 failed, 5 cancelled; 2, 3 and 4 for
#: the parts of a checkpointed or swapped job (partial execution to be continued, last
#: partial execution completed, last partial execution failed); -1 unknown.
SWF_STATUS = {
    1: "completed",
    0: "failed",
    5: "cancelled",
    2: "partial, continued",
    3: "last partial, completed",
    4: "last partial, failed",
    -1: "unknown",
}

WORKLOAD_FORMAT = "coalloc.collective.workload"

#: A ``coalloc.collective.workload`` file.
WORKLOAD_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "requests": (ListOf(REQUEST_SCHEMA), True),
        "metadata": (AnyValue(), False),
    }
)


def read_workload(src: PathOrFile) -> List[Tuple[float, CollectiveRequest]]:
    """``[(arrival, request), ...]`` from a ``coalloc.collective.workload`` JSON file.

    Parameters
    ----------
    src : str, path-like or file object
        The workload file: ``requests``, each a request with an optional ``arrival``.

    Returns
    -------
    list of (float, CollectiveRequest)
        The requests by arrival time. The paper's ``t_e`` is the submission time, so a
        request with an ``arrival`` and no ``earliest_start`` gets ``t_e`` = its arrival and,
        without ``latest_start``, ``t_l = t_e + t_C`` (:data:`DEFAULT_HORIZON`), the window
        :func:`swf_requests` gives an SWF job; without an ``arrival`` it arrives at its
        ``earliest_start``. Explicit fields are kept as written.

    Raises
    ------
    InstanceError
        An unreadable file, a bad request or a negative arrival (named with the file).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> text = ('{"format": "coalloc.collective.workload", "version": 1, "requests": ['
    ...         '{"arrival": 60, "duration": 600, "count": 1}, {"duration": 300, "count": 2}]}')
    >>> [(t, r.count, r.earliest_start, r.latest_start)
    ...  for t, r in co.read_workload(io.StringIO(text))]
    [(0.0, 2, 0.0, 86400.0), (60.0, 1, 60.0, 86460.0)]
    """
    data, name = load_json(src)
    check_envelope(data, WORKLOAD_FORMAT, VERSION, name)
    check(data, WORKLOAD_SCHEMA, name)
    out = []
    for q, item in enumerate(data["requests"]):
        if item.get("arrival") is not None and item.get("earliest_start") is None:
            item = {**item, "earliest_start": item["arrival"]}  # t_e = the submission time
        req = request_from_dict(item, source=name, root=f"requests[{q}]")
        out.append((float(item.get("arrival", req.earliest_start)), req))
    return sorted(out, key=lambda x: x[0])


def read_swf(src: PathOrFile) -> np.ndarray:
    """The jobs of a Standard Workload Format file as a float array (jobs x 18).

    Lines starting with ``;`` are header comments; every other non-empty line must have 18
    white-space separated numeric fields (``-1`` = unknown).

    Parameters
    ----------
    src : str, path-like or file object
        The SWF trace.

    Returns
    -------
    ndarray of float64, shape (jobs, 18)
        One row per job, the SWF fields in order.

    Raises
    ------
    InstanceError
        On a line with the wrong number of fields or a non-numeric field (with its number).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> swf = io.StringIO("; a header comment\\n"
    ...                   "1 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"
    ...                   "2 60 0 1800 2 -1 -1 2 3600 -1 1 1 1 1 1 -1 -1 -1\\n")
    >>> jobs = co.read_swf(swf)
    >>> jobs.shape, jobs[:, 1].tolist()
    ((2, 18), [0.0, 60.0])
    """
    text, name = read_text(src)
    rows = []
    for ln, line in enumerate(text.splitlines(), start=1):
        s = line.strip()
        if not s or s.startswith(";"):
            continue
        parts = s.split()
        if len(parts) != 18:
            raise InstanceError(f"{name}:{ln}: expected 18 SWF fields, got {len(parts)}")
        # float() also reads "1_0" and other scripts' digits; an ASCII line without "_" holds
        # only what float() reads as decimal or as inf/nan (refused below): the slow, exact
        # check only where the line could hold something else
        plain = s.isascii() and "_" not in s
        bad = (
            None
            if plain
            else next((k for k, x in enumerate(parts) if not DECIMAL.fullmatch(x)), None)
        )
        if bad is None:
            try:
                row = [float(x) for x in parts]
            except ValueError:
                bad = next(k for k, x in enumerate(parts) if not DECIMAL.fullmatch(x))
        if bad is not None:
            raise InstanceError(
                f"{name}:{ln}: SWF field {bad + 1} must be a finite number in ASCII decimal "
                f"digits, got {parts[bad]!r}"
            )
        bad = next((k for k, x in enumerate(row) if not math.isfinite(x)), None)
        if bad is not None:
            raise InstanceError(
                f"{name}:{ln}: SWF field {bad + 1} must be a finite number, got {parts[bad]!r}"
            )
        rows.append(row)
    return np.array(rows, dtype=np.float64).reshape(-1, 18)


@dataclass
class SWFWorkload:
    """SWF jobs mapped to requests (:func:`swf_workload`), with what the format says beside.

    Parameters
    ----------
    requests : list of (float, CollectiveRequest)
        ``(arrival, request)`` per simulated job, in the order of the trace; each request
        lasts the job's requested time (field 9; the run time where none was requested).
    job_ids : list of int
        The SWF job number (field 1) of each request.
    run_times : list of float
        The actual run time (field 4) of each request's job, -1 where unknown.
    requested_times : list of float
        The requested time (field 9) of each request's job, -1 where unknown.
    statuses : list of int
        The status (field 11) of each request's job.
    skipped : list of dict
        The jobs not simulated, each ``{"job", "status", "reason"}``; ``reason`` is
        ``"cancelled"`` (status 5 that never ran), ``"failed to start"`` (status 0 that
        never ran), ``"no duration"`` (neither a run time nor a requested time) or
        ``"no processors"`` (neither requested nor allocated processors).

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> w = co.swf_workload(co.read_swf(io.StringIO(
    ...     "7 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"
    ...     "8 9 -1 -1 -1 -1 -1 4 7200 -1 5 1 1 1 1 -1 -1 -1\\n")))
    >>> w.job_ids, w.run_times, [r.duration for _, r in w.requests], w.skipped_counts()
    ([7], [3600.0], [7200.0], {'cancelled': 1})
    """

    requests: List[Tuple[float, CollectiveRequest]] = field(default_factory=list)
    job_ids: List[int] = field(default_factory=list)
    run_times: List[float] = field(default_factory=list)
    requested_times: List[float] = field(default_factory=list)
    statuses: List[int] = field(default_factory=list)
    skipped: List[dict] = field(default_factory=list)

    def skipped_counts(self) -> Dict[str, int]:
        """The number of jobs not simulated, by reason.

        Returns
        -------
        dict
            Reason -> number of jobs (reasons with none left out).

        Examples
        --------
        >>> from coalloc.collective.io import SWFWorkload
        >>> SWFWorkload(skipped=[{"job": 3, "status": 5, "reason": "cancelled"}]).skipped_counts()
        {'cancelled': 1}
        """
        out: Dict[str, int] = {}
        for s in self.skipped:
            out[s["reason"]] = out.get(s["reason"], 0) + 1
        return out

    def simulate_kwargs(self) -> dict:
        """The keywords that hand its bookkeeping to :func:`~coalloc.collective.simulate.simulate`.

        Returns
        -------
        dict
            ``job_ids``, ``run_times`` and ``skipped``: ``simulate(pool, w.requests,
            **w.simulate_kwargs())`` keeps the job numbers and run times in its records and
            reports the jobs not simulated.

        Examples
        --------
        >>> from coalloc.collective.io import SWFWorkload
        >>> sorted(SWFWorkload().simulate_kwargs())
        ['job_ids', 'run_times', 'skipped']
        """
        return {"job_ids": list(self.job_ids), "run_times": list(self.run_times),
                "skipped": [dict(s) for s in self.skipped]}  # fmt: skip


def swf_workload(
    jobs: np.ndarray,
    *,
    procs_property: Optional[str] = "cores",
    memory_property: Optional[str] = None,
    procs_per_node: float = 1.0,
    max_wait: float = 86400.0,
    collective: bool = True,
    time_offset: Optional[float] = None,
    source: Optional[str] = None,
) -> SWFWorkload:
    """Turn SWF jobs into requests as the format's fields say (``coalloc docs collective``).

    * the job number (field 1) is kept beside each request (:attr:`SWFWorkload.job_ids`);
    * the status (field 11) decides whether a job is simulated: a cancelled job (5) or a
      failed one (0) that never ran (run time -1 or 0) is not simulated but listed in
      :attr:`SWFWorkload.skipped` (``"cancelled"``, ``"failed to start"``); a job that ran
      (completed, failed or cancelled after it started, a partial execution, or a status of
      -1 unknown) is simulated;
    * arrival = ``t_e`` = submit time (field 2) minus ``time_offset`` (default: the first
      submit time of the trace), ``t_l = t_e + max_wait``;
    * duration = the requested time (field 9), what a scheduler reserves, else the run time
      (field 4); the run time is recorded beside (:attr:`SWFWorkload.run_times`); a job with
      neither is skipped (``"no duration"``);
    * processors ``P`` = requested (field 8), else allocated (field 5); unknown: skipped
      (``"no processors"``);
    * ``N = ceil(P / procs_per_node)`` resources; a total of ``P`` of ``procs_property``
      (collective) or ``P / N`` on each (simple);
    * with ``memory_property`` and a known memory per processor (field 10 requested, else
      field 7 used, KB): a total of ``P * memory`` in GB.

    Parameters
    ----------
    jobs : ndarray, shape (jobs, 18)
        SWF jobs, as :func:`read_swf` returns them.
    procs_property : str or None
        The property that counts processors (None: none).
    memory_property : str, optional
        The property that counts memory in GB (None: memory is ignored).
    procs_per_node : float
        Processors of one resource (finite, > 0).
    max_wait : float
        Seconds a job may wait (finite, >= 0): the start window is ``[t_e, t_e + max_wait]``.
    collective : bool
        Collective requests (a total over the resources) or simple ones (per resource).
    time_offset : float, optional
        Subtracted from the submit times (default: the first submit time).
    source : str, optional
        The trace's file name, for error messages (``"<file>: SWF job <id>: ..."``).

    Returns
    -------
    SWFWorkload
        The simulated jobs' requests in the order of ``jobs``, their job numbers, run and
        requested times and statuses, and the jobs skipped with their reasons.

    Raises
    ------
    ValueError
        A job whose numbers give no valid request (for instance a memory so large that the
        total overflows) or whose status is not one of :data:`SWF_STATUS`, naming the job
        (and ``source``); an argument out of range, naming it.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> jobs = co.read_swf(io.StringIO(
    ...     "1 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"
    ...     "2 60 -1 -1 2 -1 -1 2 600 -1 0 1 1 1 1 -1 -1 -1\\n"))
    >>> w = co.swf_workload(jobs, procs_per_node=2)
    >>> [(j, t, r.count, r.duration) for j, (t, r) in zip(w.job_ids, w.requests)], w.skipped
    ([(1, 0.0, 2, 7200.0)], [{'job': 2, 'status': 0, 'reason': 'failed to start'}])
    """
    jobs = np.asarray(jobs, dtype=np.float64)
    if jobs.ndim != 2 or jobs.shape[1] != 18:
        raise ValueError(f"jobs must have shape (jobs, 18), got {jobs.shape}")
    if not np.all(np.isfinite(jobs)):
        raise ValueError("jobs must hold finite numbers")
    for argname, value in (("procs_per_node", procs_per_node), ("max_wait", max_wait),
                           ("time_offset", time_offset)):  # fmt: skip
        if value is None and argname == "time_offset":
            continue
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"{argname} must be a number, got {type(value).__name__}")
        if not math.isfinite(float(value)):
            raise ValueError(f"{argname} must be a finite number, got {value!r}")
    if not procs_per_node > 0:
        raise ValueError(f"procs_per_node must be > 0, got {procs_per_node!r}")
    if not max_wait >= 0:
        raise ValueError(f"max_wait must be >= 0 seconds, got {max_wait!r}")
    for argname, value in (("procs_property", procs_property),
                           ("memory_property", memory_property)):  # fmt: skip
        if value is not None and not (isinstance(value, str) and value):
            raise TypeError(f"{argname} must be a property name or None, got {value!r}")
    out = SWFWorkload()
    if jobs.shape[0] == 0:
        return out
    t0 = float(jobs[:, 1].min()) if time_offset is None else float(time_offset)
    for row in jobs:
        job, run, wanted, status = int(row[0]), float(row[3]), float(row[8]), float(row[10])
        where = f"{source + ': ' if source else ''}SWF job {row[0]:g}"
        if status not in SWF_STATUS:
            raise ValueError(f"{where}: status (field 11) must be one of "
                             f"{sorted(SWF_STATUS)}, got {status:g}")  # fmt: skip
        status = int(status)
        ran = run > 0
        reason = None
        if status == 5 and not ran:
            reason = "cancelled"
        elif status == 0 and not ran:
            reason = "failed to start"
        dur = wanted if wanted > 0 else run
        procs = row[7] if row[7] > 0 else row[4]
        if reason is None and dur <= 0:
            reason = "no duration"
        if reason is None and procs <= 0:
            reason = "no processors"
        if reason is not None:
            out.skipped.append({"job": job, "status": status, "reason": reason})
            continue
        if procs / procs_per_node > 2**31 - 1:  # a count numpy's int64 arrays and we can hold
            raise ValueError(f"{where}: {procs:g} processors need more than 2**31 - 1 "
                             f"resources of {procs_per_node:g}")  # fmt: skip
        n = max(1, int(math.ceil(procs / procs_per_node)))
        te = max(0.0, float(row[1]) - t0)
        minimum, total = {}, {}
        if procs_property:
            if collective:
                total[procs_property] = float(procs)
                minimum[procs_property] = float(procs) / (2 * n)
            else:
                minimum[procs_property] = float(procs) / n
        mem = row[9] if row[9] > 0 else row[6]
        if memory_property and mem > 0:
            gb = float(procs) * float(mem) / 1048576.0
            if not math.isfinite(gb):
                raise ValueError(f"{where}: {procs:g} processors x {mem:g} KB of memory is not "
                                 f"a finite amount of memory")  # fmt: skip
            if collective:
                total[memory_property] = gb
                minimum[memory_property] = gb / (2 * n)
            else:
                minimum[memory_property] = gb / n
        try:
            req = CollectiveRequest(float(dur), n, te, te + max_wait, minimum, total or None)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
        out.requests.append((te, req))
        out.job_ids.append(job)
        out.run_times.append(run if ran else -1.0)
        out.requested_times.append(wanted if wanted > 0 else -1.0)
        out.statuses.append(status)
    return out


def swf_requests(
    jobs: np.ndarray,
    *,
    procs_property: Optional[str] = "cores",
    memory_property: Optional[str] = None,
    procs_per_node: float = 1.0,
    max_wait: float = 86400.0,
    collective: bool = True,
    time_offset: Optional[float] = None,
    source: Optional[str] = None,
) -> List[Tuple[float, CollectiveRequest]]:
    """The ``(arrival, request)`` pairs of :func:`swf_workload` (same rules, same arguments).

    Cancelled and failed-to-start jobs are left out, each request lasts the job's requested
    time (field 9, else its run time); :func:`swf_workload` also returns the job numbers,
    the run times and the jobs left out, which :func:`~coalloc.collective.simulate.simulate`
    keeps in its records.

    Parameters
    ----------
    jobs : ndarray, shape (jobs, 18)
        SWF jobs, as :func:`read_swf` returns them.
    procs_property, memory_property, procs_per_node, max_wait, collective, time_offset, source
        As for :func:`swf_workload`.

    Returns
    -------
    list of (float, CollectiveRequest)
        ``(arrival, request)`` per simulated job, in the order of ``jobs``.

    Raises
    ------
    ValueError
        As :func:`swf_workload`.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> jobs = co.read_swf(io.StringIO("1 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"))
    >>> [(t, r.count, r.duration) for t, r in co.swf_requests(jobs, procs_per_node=2)]
    [(0.0, 2, 7200.0)]
    """
    return swf_workload(
        jobs, procs_property=procs_property, memory_property=memory_property,
        procs_per_node=procs_per_node, max_wait=max_wait, collective=collective,
        time_offset=time_offset, source=source,
    ).requests  # fmt: skip
