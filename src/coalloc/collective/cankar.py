"""The published algorithm (Cankar et al. 2013, section 3): Phases I-VI.

* **Phase I** (discovery): ``M N`` resources that match the request regardless of the
  timetables (labels, capacity ``p_ij >= e_i``); the discovery service is modelled as a seeded
  random order of the matching nodes of which the first ``M N`` are returned. Rejection when
  fewer than ``N`` match, when ``M > M_max`` or when the same set comes back.
* **Phase II**: for each property the ``N`` largest capacities must reach ``d_i``; otherwise
  ``M`` doubles and Phase I runs again.
* **Phase III**: start candidates ``t`` in ``[t_e, t_l]`` at which some ``a_ij`` increases
  (``t_e`` included: ``a_ij`` jumps from 0 there) on a resource continuously available
  (``A_j^s(t) = 1``, every ``a_ij^t >= e_i`` over ``[t, t + t_res)``).
* **Phase IV**: for each candidate in ascending order, ``R_a`` = the available resources;
  SelectAndSwap (``L_1``) when more than ``N``; the first admissible set goes to Phase V;
  none: ``M`` doubles, back to Phase I.
* **Phase V**: ``N L_2`` random swaps improving the estimated utilisation factor.
* **Phase VI**: amounts ``e_i + r_ij (d_i - N e_i)``; with ``reserve=True`` they are reserved
  on the pool, and a failed reservation returns to Phase I without changing ``M``.

Random choices (discovery order, SelectAndSwap, Phase V) come from the named streams of the
seed; the kernels (``backend="compiled"``) and their twins (``"numpy"``) give equal results.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared import params as checks
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.seeding import kernel_seed, resolve_seed, streams
from ._order import demand_first
from .core import (
    CallReport,
    Clock,
    Problem,
    kernels,
    offer,
    rejected,
    settled,
    solution,
)
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult, stopped_result

__all__ = ["cankar", "M_INIT", "L1", "L2"]

#: The paper's parameters (section 4.3).
M_INIT, L1, L2 = 3, 7, 10
STREAMS = ("discovery", "phase4", "phase5")


@filled
@checked("coalloc.collective.constraints", "cankar")
def cankar(
    request: CollectiveRequest,
    pool: ResourcePool,
    *,
    seed: Optional[int] = 0,
    backend: str = "compiled",
    m_init: int = M_INIT,
    m_max: Optional[int] = None,
    l1: int = L1,
    l2: int = L2,
    reserve: bool = False,
    max_retries: int = 3,
) -> CoallocationResult:
    """Co-allocate with the algorithm of Cankar et al. (Phases I-VI).

    Parameters
    ----------
    %(collective_request_pool)s
    seed : int, optional
        Seed of every random choice.
    backend : {"compiled", "numpy"}
        The compiled kernels or their NumPy twins (same answers).
    m_init : int, default 3
        ``M_init``.
    m_max : int, optional
        ``M_max`` (default ``8 * m_init``; the paper's experiments use ``m_max = m_init``,
        a single pass).
    l1, l2 : int, default 7, 10
        ``L_1`` (SelectAndSwap attempts per resource, at most ``10**6``) and ``L_2``
        (Phase V attempts per resource, at most ``10**6``).
    reserve : bool
        Phase VI reserves the solution on ``pool`` (atomically).
    max_retries : int
        Returns to Phase I after a failed reservation before giving up (at most ``10**4``).

    time_limit : float, optional
        Seconds for the whole call (default None), counted from its start: the phases stop
        at the deadline and the call returns the best answer found so far (the Phase IV set,
        before Phase V ends) with status ``"time_limit"``, or no answer.

    Returns
    -------
    CoallocationResult
        A solution (``"feasible"``; ``"optimal"`` when it starts when the window opens, the
        only bound the heuristic knows), or a rejection: ``"no_solution"`` (the heuristic
        found nothing; not a proof) or ``"infeasible"`` (fewer than ``N`` resources match,
        or their ``N`` largest capacities miss a total: proofs), or ``"time_limit"``.

    Raises
    ------
    TypeError, ValueError
        On a malformed pool, request or parameter.

    Examples
    --------
    >>> pool = ResourcePool([[4.0], [2.0], [1.0]], ["cores"])
    >>> req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 5})
    >>> cankar(req, pool, seed=1).resources.size
    2
    """
    request, pool = demand_first(request, pool, "cankar", stacklevel=3)
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    # the values were checked by the table (@checked); these only fix their types
    m_init = int(m_init)
    m_max = 8 * m_init if m_max is None else int(m_max)
    l1, l2, max_retries = int(l1), int(l2), int(max_retries)
    prob = Problem.of(pool, request)
    params = {"m_init": m_init, "m_max": m_max, "l1": l1, "l2": l2, "backend": backend,
              "reserve": bool(reserve)}  # fmt: skip
    ker = kernels(backend)
    clock = Clock()
    st = {k: np.random.default_rng(v) for k, v in streams(seed, STREAMS).items()}
    order, g4, g5 = st["discovery"].permutation(prob.matching), st["phase4"], st["phase5"]
    req, n, d = request, request.count, prob.d
    tol, dlo = prob.tol, prob.dlo  # the family's tolerance rule
    cap_all = pool.capacity
    counters = {"phase1": 0, "phase2_fail": 0, "candidates": 0, "select_and_swap": 0,
                "swap_attempts": 0, "phase5_accepted": 0, "retries": 0}  # fmt: skip
    m = m_init
    previous = None
    retries = 0

    reject = functools.partial(_reject, prob, clock, seed, params, counters)
    while True:
        interrupt.check()  # a batch's timeout or cancellation
        counters["phase1"] += 1
        rjob, why, proven = _discover(order, n, m, m_max, previous)
        if why is not None:
            return reject(why, proven=proven)
        previous = rjob
        clock.lap("phase1")
        # Phase II: the N largest capacities per property must reach d_i.
        cap = cap_all[rjob]
        top = -np.sort(-cap, axis=0)[:n].sum(axis=0)
        clock.lap("phase2")
        if np.any(top < dlo):
            counters["phase2_fail"] += 1
            if rjob.size == prob.matching.size:  # every matching node: a proof
                return reject(_capacity_proof(prob, pool, top, n), proven=True)
            m *= 2
            continue
        win = _start_candidates(ker, prob, req, rjob, cap)
        counters["candidates"] += int(win.index.size)
        clock.lap("phase3")
        # Phase IV: the first candidate, in ascending order, with an admissible set of N
        # available resources (SelectAndSwap among more than N); kept inline (a hot loop:
        # as a function of its own it cost 1-4 % of the call, bench/shared/ISSUE37.md)
        found = None
        ok_all, avail_all, tmax_all = win.ok, win.avail, win.tmax
        for c in win.index:
            interrupt.check()  # a batch's timeout or cancellation
            ra = np.flatnonzero(ok_all[c])
            if ra.size < n:
                continue
            avail, tmax, capa = avail_all[c, ra], tmax_all[c, ra], cap[ra]
            if ra.size == n:
                sel = np.arange(n, dtype=np.int64)
                good = bool(np.all(avail.sum(axis=0) >= dlo))
            else:
                counters["select_and_swap"] += 1
                sel, good, attempts = ker.select_and_swap(avail, tmax, capa, d, n, l1,
                                                          kernel_seed(g4), tol)  # fmt: skip
                counters["swap_attempts"] += attempts
            if good:
                found = (c, ra, sel)
                break
        clock.lap("phase4")
        if found is None:
            m *= 2
            continue
        c, ra, sel = found
        avail, tmax, capa = win.avail[c, ra], win.tmax[c, ra], cap[ra]
        start = float(win.times[c])
        # an answer: what the time limit returns if it stops Phase V (copies)
        found = CallReport("cankar", seed, params, {}, dict(counters))
        offer(functools.partial(solution, prob, found, start, rjob[ra[sel]].copy(),
                                tmax[sel].copy()), pool, reserve)  # fmt: skip
        if l2 > 0 and ra.size > n:
            sel, acc = ker.phase5(avail, tmax, capa, d, sel, l2, kernel_seed(g5), tol)
            counters["phase5_accepted"] += acc
        clock.lap("phase5")
        nodes = rjob[ra[sel]]
        result = solution(prob, CallReport("cankar", seed, params, {}, counters), start,
                          nodes, tmax[sel])  # fmt: skip
        if reserve:
            try:
                pool.reserve(result.start, req.duration, result.resources, result.amounts)
            except ValueError as exc:
                retries += 1
                counters["retries"] = retries
                if retries > max_retries:
                    return reject({"phase": "VI", "reason": "reservation_failed",
                                   "message": f"rejected: reservation failed: {exc}"})  # fmt: skip
                previous = None
                continue
        clock.lap("phase6")
        result.timings = clock.done()
        return result


def _reject(prob: Problem, clock: Clock, seed, params: dict, counters: dict, reason: dict,
            proven: bool = False) -> CoallocationResult:  # fmt: skip
    """A rejection: ``"no_solution"`` (the heuristic found nothing: not a proof), or
    ``"infeasible"`` with ``proven`` (the message says what the proof is)."""
    clock.lap("phase_other")
    if not proven:
        reason = {**reason, "message": reason["message"] + " (a heuristic's rejection, "
                  "not a proof: method='scan' decides every start)"}  # fmt: skip
    return rejected(prob, CallReport("cankar", seed, params, clock.done(), counters), reason,
                    proven=proven)  # fmt: skip


def _discover(order: np.ndarray, n: int, m: int, m_max: int, previous):
    """Phase I: the first ``M N`` matching resources of the discovery order, sorted, as
    ``(rjob, None, False)``; or why the call stops, as ``(None, reason, proven)``."""
    if m > m_max:
        return None, {"phase": "I", "reason": "m_max", "m": m,
                      "message": f"rejected: M = {m} > M_max = {m_max} (no admissible set "
                                 "found)"}, False  # fmt: skip
    rjob = np.sort(order[: m * n])
    if rjob.size < n:
        return None, {"phase": "I", "reason": "too_few_matching", "matching": int(rjob.size),
                      "message": f"rejected: only {rjob.size} resources match the request "
                                 f"(labels, capacity >= minimum), {n} needed (a proof: no set "
                                 f"of {n} exists at any time)"}, True  # fmt: skip
    if previous is not None and np.array_equal(previous, rjob):
        return None, {"phase": "I", "reason": "same_set", "m": m,
                      "message": "rejected: resource discovery returned the same set "
                                 "again"}, False  # fmt: skip
    return rjob, None, False


def _capacity_proof(prob: Problem, pool: ResourcePool, top: np.ndarray, n: int) -> dict:
    """Phase II over every matching resource: the first property whose ``N`` largest
    capacities miss its total (a proof that no set of ``N`` reaches it)."""
    i = int(np.flatnonzero(top < prob.dlo)[0])
    return {"phase": "II", "reason": "capacity", "property": pool.names[i],
            "message": f"rejected: the {n} largest capacities of {pool.names[i]!r} over every "
                       f"matching resource sum to {top[i]:g} < total {prob.d[i]:g} (a proof: "
                       f"no set of {n} reaches it at any time)"}  # fmt: skip


#: Phase III's candidates per ``window_max`` call and rows per copy (the deadline is looked
#: at between them).
_CHUNK = 32
_ROWS = 1024


@dataclass(frozen=True)
class _Window:
    """Phase III's start candidates over the discovered resources ``rjob``: ``times``
    (every candidate), ``index`` (those kept, ascending), ``tmax``/``avail`` (candidate x
    resource x property: the peak reservation and what is left over the run) and ``ok``
    (candidate x resource: ``A_j^s(t)``)."""

    times: np.ndarray
    index: np.ndarray
    tmax: np.ndarray
    avail: np.ndarray
    ok: np.ndarray


def _start_candidates(ker, prob: Problem, req: CollectiveRequest, rjob: np.ndarray,
                      cap: np.ndarray) -> _Window:  # fmt: skip
    """Phase III: the window's opening and every later instant in it at which a reservation
    of ``rjob`` drops, kept where some resource is continuously available from it."""
    pool = prob.pool
    lo, hi = req.earliest_start, req.latest_start
    # the slots from the one holding t_e to the last window's end only (issue 36: a copy of
    # the rows' whole timetables, 410 MB at 10,000 nodes x 2,016 slots, ran seconds past a
    # 0.05-2 s limit under load); the same drops, candidates and window maxima
    k0 = max(int(np.searchsorted(pool.times, lo, side="right")) - 1, 0)
    k1 = int(np.searchsorted(pool.times, hi + req.duration, side="left")) + 1
    k1 = min(max(k1, k0 + 1), pool.times.shape[0])
    times = pool.times[k0:k1]
    sub = np.empty((rjob.size, pool.reserved.shape[1], times.shape[0]))
    inc = np.zeros((rjob.size, times.shape[0]), dtype=bool)
    for r in range(0, rjob.size, _ROWS):  # rows in chunks, the deadline looked at between
        interrupt.check()
        part = sub[r : r + _ROWS]
        part[...] = pool.reserved[rjob[r : r + _ROWS], :, k0:k1]
        if times.shape[0] > 1:
            inc[r : r + _ROWS, 1:] = np.any(part[:, :, 1:] < part[:, :, :-1], axis=1)
    in_window = (times > lo) & (times <= hi)
    cand = np.concatenate([[lo], times[np.any(inc, axis=0) & in_window]])
    # the candidates' maxima in chunks, the deadline looked at between them (one call over
    # 577 candidates x 8,476 rows ran 1-3 s past the deadline under load; the same values)
    tmax_all = np.empty((cand.size, rjob.size, sub.shape[1]))
    avail_all = np.empty_like(tmax_all)
    ok_all = np.empty((cand.size, rjob.size), dtype=bool)
    for c in range(0, cand.size, _CHUNK):
        interrupt.check()
        tm = tmax_all[c : c + _CHUNK]
        tm[...] = ker.window_max(times, sub, cand[c : c + _CHUNK], req.duration)
        np.subtract(cap[None, :, :], tm, out=avail_all[c : c + _CHUNK])
        ok_all[c : c + _CHUNK] = np.all(avail_all[c : c + _CHUNK] >= prob.elo[None, None, :],
                                        axis=2)  # A_j^s(t)  # fmt: skip
    kidx = np.searchsorted(times, cand[1:], side="left")
    keep = np.concatenate([[ok_all[0].any()], np.any(ok_all[1:] & inc[:, kidx].T, axis=1)])
    return _Window(cand, np.flatnonzero(keep), tmax_all, avail_all, ok_all)


# The paper's algorithm with ``time_limit`` (:func:`coalloc._shared.params.with_time_limit`)
# and the one status rule at its exit; the name stays "cankar" for Sphinx and numpydoc.
cankar = settled(checks.with_time_limit(cankar, functools.partial(stopped_result, method="cankar")))
