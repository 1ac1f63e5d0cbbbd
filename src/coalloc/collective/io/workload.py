"""Workloads: requests that arrive over time, as ``coalloc.collective.workload`` JSON or as a
Standard Workload Format trace (``.swf``) mapped to requests by :func:`swf_requests`.

* ``coalloc.collective.workload`` (JSON): ``requests``: a list of requests with ``arrival``
  (a request without ``earliest_start`` opens its window at its arrival, as SWF jobs do).
* Standard Workload Format (``.swf``): :func:`read_swf`.
"""

from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np

from ..._shared.jsonio import InstanceError, PathOrFile, check_envelope, load_json, read_text
from ..._shared.schema import AnyValue, ListOf, Obj, check
from ..model import CollectiveRequest
from ._common import DECIMAL
from .json_files import REQUEST_SCHEMA, VERSION, request_from_dict

__all__ = ["read_workload", "read_swf", "swf_requests", "WORKLOAD_FORMAT", "WORKLOAD_SCHEMA"]

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
    """Turn SWF jobs into ``(arrival, request)`` pairs (the mapping of ``coalloc docs collective``).

    * arrival = ``t_e`` = submit time (field 2) minus ``time_offset`` (default: the first
      submit time), ``t_l = t_e + max_wait``;
    * duration = run time (field 4), else requested time (field 9); jobs with neither are
      skipped;
    * processors ``P`` = requested (field 8), else allocated (field 5); skipped if unknown;
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
    list of (float, CollectiveRequest)
        ``(arrival, request)`` per usable job, in the order of ``jobs``.

    Raises
    ------
    ValueError
        A job whose numbers give no valid request (for instance a memory so large that the
        total overflows), naming the job (and ``source``); an argument out of range, naming
        it.

    Examples
    --------
    >>> import io
    >>> import coalloc.collective as co
    >>> jobs = co.read_swf(io.StringIO("1 0 5 3600 4 -1 -1 4 7200 -1 1 1 1 1 1 -1 -1 -1\\n"))
    >>> [(t, r.count, r.duration) for t, r in co.swf_requests(jobs, procs_per_node=2)]
    [(0.0, 2, 3600.0)]
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
    out = []
    if jobs.shape[0] == 0:
        return out
    t0 = float(jobs[:, 1].min()) if time_offset is None else float(time_offset)
    for row in jobs:
        dur = row[3] if row[3] > 0 else row[8]
        procs = row[7] if row[7] > 0 else row[4]
        if dur <= 0 or procs <= 0:
            continue
        where = f"{source + ': ' if source else ''}SWF job {row[0]:g}"
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
        out.append((te, req))
    return out
