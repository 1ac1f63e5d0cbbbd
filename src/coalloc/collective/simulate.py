"""Online mode: a stream of requests against a pool (reserve on arrival, free on expiry).

Requests are handled in order of arrival; each is co-allocated on the current timetables
(its window clipped to start no earlier than its arrival) and, when solved, reserved
atomically; a reservation frees its resources when its interval ends (the timetable is a
function of time, so nothing needs releasing). :func:`simulate` reports, per request, whether
it was accepted, its start delay and utilisation factor, and the pool's usage per slot.

With ``explain=True`` every rejected request's record also says why (issue 38): the
explanation of :func:`~coalloc.collective.explain.explain_request` on the timetables the
request met (its minimal conflict and certificate, ``"explanation"``) and the nearest fix in
time, the earliest later start that fits (``"nearest_start"``). The explanations share a
budget relative to the run itself: together they take at most ``explain_share`` times the
seconds the run has spent without them so far, plus one explanation's ``explain_time``
(so that the first rejection is explained however fast the run), whatever the machine's
speed; ``explain_budget`` adds an absolute cap in seconds when given. A rejection met after
the budget is spent is recorded as not explained (``"explained": "budget spent"``).
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Mapping, Optional, Sequence, Tuple

import numpy as np

from .._shared import params as checks
from .._shared.progress import progress
from .._shared.validation import check_memory
from .model import CollectiveRequest, ResourcePool
from .result import CollectiveSimulationResult, SimulationResult  # noqa: F401 - its old home, same class
from .solvers import DEFAULT_METHOD, coallocate

__all__ = ["simulate", "SimulationResult"]


def _totals(pool: ResourcePool) -> Tuple[np.ndarray, np.ndarray]:
    """The pool's breakpoints and its reserved amounts summed over nodes (m x K)."""
    return pool.times.copy(), pool.reserved.sum(axis=0)


def _sample(pool: ResourcePool, totals: Tuple[np.ndarray, np.ndarray],
            slot_times: np.ndarray) -> np.ndarray:  # fmt: skip
    # the node sums first, then the slots (indexing every node's row at every slot copied the
    # whole timetable: 0.7 GB and 2.4 s at 10,000 nodes x 10 days of 5-minute slots)
    times, summed = totals
    k = np.searchsorted(times, slot_times, side="right") - 1
    tot = pool.capacity.sum(axis=0)
    used = summed[:, k]
    # a property the pool has none of is used 0 (0/0: no NaN in the usage log)
    return np.divide(used, tot[:, None], out=np.zeros_like(used), where=tot[:, None] > 0).T


#: The fewest breakpoints before the current arrival that make :func:`simulate` cut the past
#: off its working pool (and at least as many as lie after it): a cut costs the size of the
#: timetables, paid for by as many breakpoints left behind.
_COMPACT_AT = 64


class _Past:
    """The part of the working pool's timetables that :func:`simulate` cut off (``compact``).

    Requests come in order of arrival and none starts before its arrival, so the segments
    that end before it are never read or booked again: :meth:`cut` moves them out of the
    pool (:meth:`ResourcePool.trim`, which keeps the amounts in force at the cut in the
    pool's first segment), keeping their sums over nodes for the usage log and, for
    ``in_place``, their amounts for the ledger. ``origin`` is the true time of the pool's
    first segment (the pool's own times start at 0)."""

    def __init__(self, keep_amounts: bool) -> None:
        self.origin = 0.0
        self.keep_amounts = keep_amounts
        self.times: list = []
        self.summed: list = []
        self.amounts: list = []

    def cut(self, pool: ResourcePool, before: float) -> None:
        """Drop the segments before the last breakpoint earlier than ``before`` (that one
        stays, so that no booking at or after ``before`` falls on the pool's origin)."""
        times = pool.times
        k = int(np.searchsorted(times, before, side="left")) - 1
        if k < _COMPACT_AT or 2 * k < times.shape[0]:
            return
        res = pool.reserved[:, :, :k]
        t = times[:k].copy()
        t[0] = self.origin
        self.times.append(t)
        self.summed.append(res.sum(axis=0))
        if self.keep_amounts:
            self.amounts.append(res.copy())
        self.origin = float(times[k])
        pool.trim(self.origin)

    def _now(self, pool: ResourcePool) -> np.ndarray:
        t = pool.times.copy()
        t[0] = self.origin
        return t

    def totals(self, pool: ResourcePool) -> Tuple[np.ndarray, np.ndarray]:
        """:func:`_totals` of the whole run: the past cut off, then the pool."""
        if not self.times:
            return _totals(pool)
        return (np.concatenate(self.times + [self._now(pool)]),
                np.concatenate(self.summed + [pool.reserved.sum(axis=0)], axis=1))  # fmt: skip

    def restore(self, pool: ResourcePool) -> None:
        """Put the past back into ``pool``: the whole ledger, as without cuts."""
        if self.times:
            pool._restore(np.concatenate(self.times + [self._now(pool)]),
                          np.concatenate(self.amounts + [pool.reserved], axis=2))  # fmt: skip
            self.times, self.summed, self.amounts, self.origin = [], [], [], 0.0


#: The least time an explanation is started with (s): less is a budget spent.
_MIN_EXPLAIN = 0.01


def _why(pool: ResourcePool, request: CollectiveRequest, left: float) -> dict:
    """The explanation fields of a rejected request's record (see ``explain``), within
    ``left`` seconds (issue 36's rule: the explanation keeps its own budget)."""
    from .explain import explain_request

    if left <= _MIN_EXPLAIN:
        return {"explained": "budget spent", "explanation": None, "nearest_start": None}
    end = time.monotonic() + left
    found = explain_request(pool, request, time_limit=left)
    if found is None:  # the scan found a start, or could not prove the rejection in time
        rest = end - time.monotonic()  # what the explanation left, not a second budget
        fits = rest > _MIN_EXPLAIN and coallocate(pool, request, "scan",
                                                  time_limit=rest).has_solution  # fmt: skip
        return {"explained": "fits" if fits else "undecided", "explanation": None,
                "nearest_start": None}  # fmt: skip
    later = [r for r in found.relaxations if r.kind == "later_start" and r.checked]
    return {"explained": "yes", "explanation": found.to_dict(),
            "nearest_start": later[0].changes["latest_start"] if later else None}


def _side_records(n_req: int, job_ids: Optional[Sequence[Any]],
                  run_times: Optional[Sequence[float]],
                  skipped: Optional[Sequence[Mapping[str, Any]]]) -> Tuple[Optional[list], list]:
    """The per-request side columns checked against the ``n_req`` requests: ``run_times``
    as numbers (-1 unknown) and the ``skipped`` jobs' records copied."""
    for argname, values in (("job_ids", job_ids), ("run_times", run_times)):
        if values is not None and len(values) != n_req:
            raise ValueError(f"{argname} must have one value per request ({n_req}), "
                             f"got {len(values)}")  # fmt: skip
    if run_times is not None:
        run_times = [checks.number(x, "run_times", allow_zero=True) if x != -1 else -1.0
                     for x in run_times]  # fmt: skip
    skipped_list = []
    for s in skipped or ():
        if not (isinstance(s, Mapping) and "reason" in s):
            raise TypeError("skipped must hold dicts with a 'reason'")
        skipped_list.append(dict(s))
    return run_times, skipped_list


def _check_stream(requests: Sequence[Tuple[float, CollectiveRequest]]) -> None:
    """Refuse a stream that is not ``(finite arrival, CollectiveRequest)`` pairs."""
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


def _window(req: CollectiveRequest, arrival: float, align: Optional[float],
            horizon: Optional[float]) -> Tuple[float, float, Optional[float], float]:
    """The window a request is booked in: ``(te0, te, tl, duration)``, ``te0`` its own
    earliest start clipped to its arrival (``delay`` counts from it), ``te``/``tl`` the
    earliest and latest start on the ``align`` grid and ending by ``horizon``, and the
    duration rounded up to the grid; ``tl`` is None when not even ``te`` ends by the
    horizon."""
    te = max(req.earliest_start, arrival)
    tl = max(req.latest_start, te)
    dur, te0 = req.duration, te
    if align is not None:  # on the grid: never earlier, never shorter than asked
        dur = math.ceil(dur / align) * align
        on_grid = math.ceil(te / align) * align
        if on_grid <= tl:  # (a window between two grid points keeps its own start)
            te, tl = on_grid, max(math.floor(tl / align) * align, on_grid)
    if horizon is not None:
        if te + dur > horizon:
            return te0, te, None, dur
        cap = horizon - dur  # the latest start that ends by the horizon
        if align is not None and math.floor(cap / align) * align >= te:
            cap = math.floor(cap / align) * align  # on the grid, as the window is
        tl = min(tl, cap)
    return te0, te, tl, dur


class _Explainer:
    """The explanations' budget of one run (``explain``): each gets at most
    ``explain_time``, and all of them together at most ``explain_share`` times the run's
    own seconds so far plus ``explain_time`` (and ``explain_budget`` when given)."""

    __slots__ = ("time", "budget", "share", "run_start", "spent")

    def __init__(self, explain_time: float, explain_budget: Optional[float],
                 explain_share: float) -> None:  # fmt: skip
        self.time, self.budget, self.share = explain_time, explain_budget, explain_share
        self.run_start = time.monotonic()
        self.spent = 0.0  # the explanations' seconds so far

    def why(self, work: ResourcePool, request: CollectiveRequest) -> dict:
        """The explanation fields of a rejected request (:func:`_why`) within what is left."""
        now = time.monotonic()
        own = now - self.run_start - self.spent  # the run's seconds without explaining
        left = self.time + self.share * own - self.spent
        if self.budget is not None:
            left = min(left, self.budget - self.spent)
        found = _why(work, request, min(self.time, left))
        self.spent += time.monotonic() - now
        return found


def _usage_log(work: ResourcePool, totals: Tuple[np.ndarray, np.ndarray],
               background: Tuple[np.ndarray, np.ndarray], horizon: Optional[float],
               slot_seconds: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The usage log per slot to the horizon (else past the last breakpoint): the slot
    times, the pool's usage and the stream's own (less the ``background`` before it)."""
    end = horizon if horizon is not None else float(totals[0][-1]) + slot_seconds
    n_slots = math.ceil(end / float(slot_seconds)) if end > 0 else 0
    check_memory(4.0 * 8 * n_slots * max(work.n_properties, 1),
                 f"usage logs of {n_slots:.3g} slots of {slot_seconds:g} s")  # fmt: skip
    slot_times = np.arange(0.0, end, float(slot_seconds))
    usage = _sample(work, totals, slot_times)
    jobs = usage - _sample(work, background, slot_times)
    return slot_times, usage, jobs


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
    on_booking: Optional[Callable[[int, CollectiveRequest, Any, ResourcePool], None]] = None,
    job_ids: Optional[Sequence[Any]] = None,
    run_times: Optional[Sequence[float]] = None,
    skipped: Optional[Sequence[Mapping[str, Any]]] = None,
    explain: bool = False,
    explain_time: float = 1.0,
    explain_budget: Optional[float] = None,
    explain_share: float = 0.5,
    compact: bool = True,
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
        The end of the pool's known future (seconds, finite): no reservation may end after
        it. A request is booked only with a start in its window that ends by ``horizon``;
        one that cannot end by then even at its earliest start is rejected with the reason
        ``"past the horizon"`` without solving; one whose window the horizon shortened and
        that finds no start in what is left gets the method's reason. With ``align``, the
        latest start is on the grid. Also the end of the usage log. Default
        None: no horizon (the pool's last amounts hold for ever) and the usage log ends
        after the latest reservation or breakpoint.
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
    on_booking : callable, optional
        Called as ``on_booking(q, request, result, pool)`` for every accepted request just
        before it is reserved: ``q`` its position in order of arrival, ``request`` the request
        as booked (window clipped to the arrival, on the grid with ``align``), ``result`` its
        co-allocation, ``pool`` the timetables it was computed on (read them, do not change
        them). For an independent check of every booking, for example
        :func:`~coalloc.collective.verify.verify_coallocation`; an exception it raises stops
        the run.
    job_ids : sequence, optional
        One identifier per request, in the order of ``requests`` (the SWF job numbers of
        :func:`~coalloc.collective.io.swf_workload`): kept as ``"job"`` in its record
        (default: the request's position in ``requests``).
    run_times : sequence of float, optional
        One actual run time per request (seconds, -1 unknown), in the order of ``requests``:
        recorded beside the reservation as ``"run_time"`` (the reservation lasts the
        request's duration, the time a scheduler reserves).
    skipped : sequence of dict, optional
        Jobs of the workload that were not simulated (``{"job", "status", "reason"}``, as
        :attr:`~coalloc.collective.io.SWFWorkload.skipped`): reported in the result, never
        counted as requests.
    explain : bool, default False
        Explain every rejection the method makes (not those past the horizon, which no pool
        decides): its record gets ``"explained"`` (``"yes"``; ``"fits"``: the exact scan
        finds a start the method did not, so there is no conflict; ``"undecided"``: not
        proved within ``explain_time``; ``"budget spent"``), ``"explanation"`` (the
        explanation's ``to_dict()``: the conflict, its certificate, whether it is sound
        and minimal, the fixes) and ``"nearest_start"`` (the earliest later start that fits
        on the same timetables, or None).
    explain_time : float, default 1.0
        Seconds at most per explanation (finite, > 0).
    explain_budget : float, optional
        An absolute cap: seconds for all the run's explanations together (finite, > 0).
        Default None: no cap other than ``explain_share``'s.
    explain_share : float, default 0.5
        The explanations' budget relative to the run: at any point of the run, all the
        explanations so far may have taken at most ``explain_share`` times the seconds
        the run spent without them (solving and booking), plus ``explain_time`` (finite,
        >= 0; 0: one explanation's time in all). A faster machine solves and explains
        faster alike, so the share of rejections explained does not depend on its speed
        (an absolute budget covered more of a replay on a slower machine).
    compact : bool, default True
        Slide the timetables' window: once the breakpoints before the current arrival
        outnumber those after it (and are at least 64), they are cut off the working pool
        (no request starts before its arrival, so none reads them again), their usage kept
        for the log and, with ``in_place``, their amounts put back into the ledger at the
        end. Each request then costs what the timetables from its arrival on hold, not the
        whole log so far; the answers (records, usage log, ledger) are the same as with
        False. Not done with ``explain`` (an explanation reads the whole grid: the grain of
        its shorter durations) nor with ``on_booking`` (which is handed the whole
        timetables). With ``in_place`` on a pool that other threads book on during the run,
        pass False: they would meet the cut timetables until the end.
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
    explain_time = checks.number(explain_time, "explain_time")
    if explain_budget is not None:
        explain_budget = checks.number(explain_budget, "explain_budget")
    explain_share = checks.number(explain_share, "explain_share", allow_zero=True)
    if not isinstance(explain, (bool, np.bool_)):
        raise TypeError(f"explain must be True or False, got {type(explain).__name__}")
    if not isinstance(compact, (bool, np.bool_)):
        raise TypeError(f"compact must be True or False, got {type(compact).__name__}")
    explainer = _Explainer(explain_time, explain_budget, explain_share)
    if on_booking is not None and not callable(on_booking):
        raise TypeError(f"on_booking must be callable, got {type(on_booking).__name__}")
    n_req = len(requests)
    run_times, skipped_list = _side_records(n_req, job_ids, run_times, skipped)
    _check_stream(requests)
    background = _totals(pool)  # the usage before the stream (not a copy of the timetables)
    work = pool if in_place else pool.copy()
    order = sorted(range(n_req), key=lambda i: float(requests[i][0]))  # stable: ties keep order
    records = []
    past = _Past(keep_amounts=in_place) if compact and not explain and on_booking is None else None
    for q, i in enumerate(progress(order, desc="simulate", unit="req",
                                    disable=not show_progress)):  # fmt: skip
        arrival, req = requests[i]
        if past is not None:  # the window slides: nothing from here on starts before arrival
            past.cut(work, float(arrival))
        te0, te, tl, dur = _window(req, float(arrival), align, horizon)
        rec = {"job": job_ids[i] if job_ids is not None else i, "arrival": float(arrival),
               "count": req.count, "collective": req.collective, "duration": float(dur),
               "run_time": run_times[i] if run_times is not None else None,
               "accepted": False, "start": None, "delay": None, "utilisation": None,
               "reason": None}  # fmt: skip
        if tl is None:  # not even its earliest start ends within the pool's future
            rec["reason"] = "past the horizon"
            records.append(rec)
            continue
        r2 = CollectiveRequest(dur, req.count, te, tl, req.minimum, req.total or None,
                               req.labels or None)  # fmt: skip
        res = coallocate(work, r2, method, seed=None if seed is None else seed + q, **params)
        rec.update(accepted=res.start is not None, start=res.start, utilisation=res.utilisation)
        if res.start is not None:
            if on_booking is not None:
                on_booking(q, r2, res, work)
            work.reserve(res.start, dur, res.resources, res.amounts)
            rec["delay"] = res.start - te0
        else:
            rec["reason"] = (res.rejection or {}).get("reason")
            if explain:
                rec.update(explainer.why(work, r2))
        records.append(rec)
    if past is not None and in_place:
        past.restore(work)  # the caller's pool is the whole ledger again
    totals = past.totals(work) if past is not None else _totals(work)
    slot_times, usage, jobs = _usage_log(work, totals, background, horizon, slot_seconds)
    return SimulationResult(records=records, slot_times=slot_times, usage=usage, job_usage=jobs,
                            names=pool.names, skipped=skipped_list)  # fmt: skip
