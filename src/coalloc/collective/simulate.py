"""Online mode: a stream of requests against a pool (reserve on arrival, free on expiry).

Requests are handled in order of arrival; each is co-allocated on the current timetables
(its window clipped to start no earlier than its arrival) and, when solved, reserved
atomically; a reservation frees its resources when its interval ends (the timetable is a
function of time, so nothing needs releasing). :func:`simulate` reports, per request, whether
it was accepted, its start delay and utilisation factor, and the pool's usage per slot.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from .._shared import params as checks
from .._shared.progress import progress
from .._shared.validation import check_memory
from .model import CollectiveRequest, ResourcePool
from .result import CollectiveSimulationResult, SimulationResult  # noqa: F401 - its old home, same class
from .solvers import DEFAULT_METHOD, coallocate

__all__ = ["simulate", "SimulationResult"]


def _sample(pool: ResourcePool, slot_times: np.ndarray) -> np.ndarray:
    k = np.searchsorted(pool.times, slot_times, side="right") - 1
    tot = pool.capacity.sum(axis=0)
    used = pool.reserved[:, :, k].sum(axis=0)
    # a property the pool has none of is used 0 (0/0: no NaN in the usage log)
    return np.divide(used, tot[:, None], out=np.zeros_like(used), where=tot[:, None] > 0).T


def simulate(
    pool: ResourcePool,
    requests: Sequence[Tuple[float, CollectiveRequest]],
    *,
    method: str = DEFAULT_METHOD,
    seed: Optional[int] = 0,
    slot_seconds: float = 300.0,
    horizon: Optional[float] = None,
    show_progress: bool = False,
    align: Optional[float] = None,
    in_place: bool = False,
    **params: Any,
) -> SimulationResult:
    """Run a stream of ``(arrival, request)`` against a copy of ``pool``.

    Parameters
    ----------
    pool : ResourcePool
        Not modified (a copy is used).
    requests : sequence of (float, CollectiveRequest)
        Handled in order of arrival.
    method : str
        Co-allocation method.
    seed : int, optional
    slot_seconds : float
        Usage-log slot length (finite, > 0).
    horizon : float, optional
        End of the usage log (default: the latest end of any reservation or breakpoint).
    show_progress : bool
    align : float, optional
        Book on a grid of ``align`` seconds (for example the pool's 5-minute slots): each
        request's earliest start is rounded up to a multiple of ``align`` and its duration
        up to whole multiples (a job holds its nodes for at least its duration: never less
        than it asked for), so that the bookings fall on the pool's breakpoints and update
        its timetables in place, without growing the grid. ``delay`` still counts from the
        request's own earliest start; a window with no grid point keeps its start. Default
        None: the requests as they are.
    in_place : bool
        Book on ``pool`` itself (the ledger after the run), not on a copy.
    **params
        Parameters of the method.

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> p = ResourcePool([[4.0], [4.0]], ["cores"])
    >>> reqs = [(0.0, CollectiveRequest(600, 2, 0, 3600, {"cores": 3}))] * 2
    >>> simulate(p, reqs).records[1]["start"]
    600.0
    """
    if not isinstance(pool, ResourcePool):
        raise TypeError(f"pool must be a ResourcePool, got {type(pool).__name__}")
    slot_seconds = checks.number(slot_seconds, "slot_seconds")
    if align is not None:
        align = checks.number(align, "align")
    if horizon is not None:
        horizon = checks.number(horizon, "horizon", allow_zero=True)
    for q, item in enumerate(requests):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise TypeError(f"requests[{q}] must be an (arrival, CollectiveRequest) pair")
        arrival = item[0]
        number = isinstance(arrival, (int, float, np.number))
        if isinstance(arrival, (bool, np.bool_)) or not number:
            raise TypeError(f"requests[{q}] arrival must be a number of seconds")
        if not math.isfinite(float(arrival)):
            raise ValueError(f"requests[{q}] arrival must be finite, got {arrival!r}")
        if not isinstance(item[1], CollectiveRequest):
            raise TypeError(f"requests[{q}] must hold a CollectiveRequest, got "
                            f"{type(item[1]).__name__}")  # fmt: skip
    background = pool.copy()
    work = pool if in_place else pool.copy()
    items = sorted(requests, key=lambda x: x[0])
    records = []
    for q, (arrival, req) in enumerate(progress(items, desc="simulate", unit="req",
                                                 disable=not show_progress)):  # fmt: skip
        te = max(req.earliest_start, float(arrival))
        tl = max(req.latest_start, te)
        dur, te0 = req.duration, te
        if align is not None:  # on the grid: never earlier, never shorter than asked
            dur = math.ceil(dur / align) * align
            on_grid = math.ceil(te / align) * align
            if on_grid <= tl:  # (a window between two grid points keeps its own start)
                te, tl = on_grid, max(math.floor(tl / align) * align, on_grid)
        r2 = CollectiveRequest(dur, req.count, te, tl, req.minimum, req.total or None,
                               req.labels or None)  # fmt: skip
        res = coallocate(work, r2, method, seed=None if seed is None else seed + q, **params)
        rec = {"arrival": float(arrival), "count": req.count, "collective": req.collective,
               "accepted": res.start is not None, "start": res.start, "delay": None,
               "utilisation": res.utilisation, "reason": None}  # fmt: skip
        if res.start is not None:
            work.reserve(res.start, dur, res.resources, res.amounts)
            rec["delay"] = res.start - te0
        else:
            rec["reason"] = (res.rejection or {}).get("reason")
        records.append(rec)
    end = horizon if horizon is not None else float(work.times[-1]) + slot_seconds
    n_slots = math.ceil(end / float(slot_seconds)) if end > 0 else 0
    check_memory(4.0 * 8 * n_slots * max(work.n_properties, 1),
                 f"usage logs of {n_slots:.3g} slots of {slot_seconds:g} s")  # fmt: skip
    slot_times = np.arange(0.0, end, float(slot_seconds))
    usage = _sample(work, slot_times)
    return SimulationResult(records, slot_times, usage, usage - _sample(background, slot_times),
                            pool.names)  # fmt: skip
