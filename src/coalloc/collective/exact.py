"""Exact co-allocation: the earliest admissible start over the whole pool, then the maximum
utilisation factor at that start; and a brute-force referee for small cases.

**Earliest start.** Only ``t_e`` and the breakpoints where a reserved amount falls can be the
earliest start (before such a breakpoint nothing becomes free, so an admissible start could
move back to it). At each candidate, in ascending order, the nodes with ``a_ij^t >= e_i``
(``a^t = p - T^t``, ``T^t`` the maximum over ``[t, t + t_res)``) are eligible, and the question
"is there a set of exactly ``N`` eligible nodes with ``sum_j a_ij^t >= d_i`` for every
property" is an integer program (binary ``x_j``, ``sum x_j = N``, ``sum_j a_ij^t x_j >= d_i``)
solved on the shared runner (:func:`coalloc._shared.milp.run_milp`, HiGHS or CBC, or
:func:`~coalloc._shared.milp.run_cpsat` on integer-scaled data rounded conservatively).
Two necessary conditions (``N`` eligible nodes; the ``N`` largest ``a_ij^t`` reach ``d_i``)
skip the solver where they fail.

**Utilisation.** At the earliest start the factor ``prod_i (d_i + sum T_ij^t) / sum p_ij`` is
maximised by enumeration of the ``C(k, N)`` subsets of the ``k`` eligible nodes when there
are at most ``enumerate_limit`` of them (status ``"optimal"``); otherwise the integer
program's solution is improved by best-improvement swaps and the status is ``"feasible"``
(the start is proven earliest, the factor is not proven maximal).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Optional

import numpy as np

from .._shared import interrupt, progress
from .._shared import params as checks
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.family import renamed_keyword
from .._shared.seeding import check_seed
from ._exact_sets import best_subset, enumerate_best, feasible_subset
from ._order import demand_first
from .core import (
    CallReport,
    Clock,
    Problem,
    decrease_starts,
    factor,
    kernels,
    rejected,
    settled,
    solution,
)
from .model import TOLERANCE, CollectiveRequest, ResourcePool
from .result import CoallocationResult

# Both kernel modules with this one, not at the first call: a first import inside a time
# limit (the twin's window_max below, 35-46 ms when Python compiles its source in a fresh
# process; the compiled _search 12 ms) was most of a 0.05 s budget (issue 36).
_TWIN = kernels("numpy")
_COMPILED = kernels("compiled")

__all__ = ["exact", "brute_force", "feasible_subset", "best_subset", "EXACT_SOLVERS"]

#: The integer-programming solvers of :func:`exact` (``solver=``).
EXACT_SOLVERS = ("highs", "cbc", "cpsat")
#: The older name of :data:`EXACT_SOLVERS`.
EXACT_BACKENDS = EXACT_SOLVERS


def _window_peak(pool: Any, nodes: np.ndarray, t: float, duration: float) -> np.ndarray:
    """``window_max``'s maxima at one start for the rows ``nodes``: only the window's slots
    are copied. (Issue 36: a copy of every matching row's whole timetable, 410 MB for 8,476
    of 10,000 nodes x 2,016 slots, took 0.4-1.5 s after a 0.05 s deadline had passed; the
    same slots as the twin's ``window_max``, so the same maxima.)"""
    k0 = int(np.searchsorted(pool.times, t, side="right")) - 1
    k1 = int(np.searchsorted(pool.times, t + duration, side="left"))
    return pool.reserved[nodes, :, k0 : max(k1, k0 + 1)].max(axis=2)


@filled
@checked("coalloc.collective.constraints", "exact")
def exact(
    request: CollectiveRequest,
    pool: ResourcePool,
    *,
    seed: Optional[int] = None,
    solver: str = "highs",
    time_limit: Optional[float] = None,
    enumerate_limit: int = 2_000_000,
    prune: bool = True,
) -> CoallocationResult:
    """The earliest admissible start over the whole pool, then the best utilisation there.

    Parameters
    ----------
    %(collective_request_pool)s
    seed : int, optional
        Unused (the method is deterministic); validated for a uniform signature.
    solver : {"highs", "cbc", "cpsat"}
        Integer-programming solver of the feasibility tests (shared runner); ``backend=``
        is its deprecated name.
    time_limit : float, optional
        Seconds for the whole call, from its entry: every feasibility test (its model
        building included) gets what is left, and the enumeration of the utilisation step
        stops at the limit, keeping the best set it met. A call stopped by the limit has
        status ``"time_limit"`` (or ``"optimal"`` when its start is proven earliest: the
        status rule), says so in its message and in ``iterations["time_limit_hit"]`` (1).
    enumerate_limit : int
        Largest number of subsets enumerated to prove the best utilisation (at most
        ``10**9``; ``time_limit`` bounds the enumeration's time).
    prune : bool
        Skip the integer program at starts where a necessary condition fails (fewer than
        ``N`` eligible nodes, or the ``N`` largest amounts miss a total). ``False`` runs the
        integer program at every candidate start with at least ``N`` eligible nodes (the
        plain formulation; same answers, slower).

    Returns
    -------
    CoallocationResult
        ``"optimal"`` (earliest start proven: ``bound`` equals the start; the message says
        whether the factor is proven maximal there), ``"feasible"`` (a start not proven
        earliest: a solver left an earlier start undecided; ``bound`` is the first such
        start), ``"infeasible"`` (no admissible solution in the window, proven),
        ``"time_limit"`` (the limit stopped the call: with the best answer found so far, or
        rejected when it had none) or ``"no_solution"`` (a solver left starts undecided and
        no later start admits a set).

    Examples
    --------
    >>> pool = ResourcePool([[4.0], [2.0], [1.0]], ["cores"])
    >>> req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 3})
    >>> r = exact(req, pool)
    >>> r.status, sorted(r.resources.tolist())
    ('optimal', [1, 2])
    """
    request, pool = demand_first(request, pool, "exact", stacklevel=3)
    t_entry = time.perf_counter()  # the time limit counts from here
    seed = check_seed(seed)
    # the values were checked by the table (@checked); these only fix their types
    time_limit = None if time_limit is None else float(time_limit)
    enumerate_limit = int(enumerate_limit)
    prob = Problem.of(pool, request)
    params = {"solver": solver, "time_limit": time_limit, "enumerate_limit": enumerate_limit,
              "prune": bool(prune)}  # fmt: skip
    clock = Clock()
    n, d = request.count, prob.d
    tol, elo, dlo = prob.tol, prob.elo, prob.dlo
    nodes = prob.matching
    counters = {"starts": 0, "solver_calls": 0, "enumerated": 0, "time_limit_hit": 0}
    deadline = checks.deadline(time_limit, t_entry)
    if nodes.size < n:
        reason = {
            "reason": "too_few_matching",
            "matching": int(nodes.size),
            "message": f"impossible: only {nodes.size} nodes match labels and minimums, "
            f"{n} needed (a proof: no set of {n} exists at any time)",
        }
        return rejected(prob, CallReport("exact", seed, params, clock.done(), counters), reason,
                        proven=True)  # fmt: skip
    starts = decrease_starts(pool, nodes, request.earliest_start, request.latest_start,
                             deadline)  # (polled: issue 36)  # fmt: skip
    cap = pool.capacity[nodes]
    unknown = 0
    undecided = 0  # starts a solver could not decide (not the time limit)
    first_undecided = None  # the first start left undecided: a lower bound on the earliest
    show = progress.exact_progress_wanted(None)  # the CLI, on a terminal
    # no bar at all unless shown: tqdm's first import (asyncio with it) took 0.16 s of a
    # 0.05 s limit in a fresh process (issue 36)
    bar_scope = (progress.progress(total=int(starts.size), desc="exact: candidate starts",
                                   unit="start", leave=False) if show else _NoBar())  # fmt: skip
    with bar_scope as bar:
        for k_start, t in enumerate(starts):
            interrupt.check()  # a batch's timeout or cancellation, between two starts
            if deadline is not None and time.perf_counter() >= deadline:
                counters["time_limit_hit"] = 1
                unknown += int(starts.size) - k_start  # the starts not looked at
                if first_undecided is None:
                    first_undecided = float(t)
                break
            counters["starts"] += 1
            bar.update(1)
            tmax = _window_peak(pool, nodes, float(t), request.duration)
            avail = cap - tmax
            el = np.flatnonzero(np.all(avail >= elo[None, :], axis=1))
            if el.size < n:
                continue
            if prune and np.any(-np.sort(-avail[el], axis=0)[:n].sum(axis=0) < dlo):
                continue
            counters["solver_calls"] += 1
            status, rows = feasible_subset(avail[el], d, n, solver=solver, tol=tol,
                                           time_limit=time_limit, started=t_entry)  # fmt: skip
            clock.lap("earliest")
            if status == "infeasible":
                continue
            if rows is None:
                unknown += 1
                if first_undecided is None:
                    first_undecided = float(t)
                if status == "time_limit":
                    counters["time_limit_hit"] = 1
                else:
                    undecided += 1
                continue
            found = _Found(t=float(t), nodes=nodes[el], avail=avail[el], tmax=tmax[el],
                           cap=cap[el], rows=rows)  # fmt: skip
            search = _Search(enumerate_limit=enumerate_limit, deadline=deadline, seed=seed,
                             params=params, clock=clock, counters=counters, unknown=unknown,
                             undecided=undecided, first_undecided=first_undecided)  # fmt: skip
            return _best_at(prob, found, search)
    if unknown:
        hit = counters["time_limit_hit"] == 1
        reason = {
            "reason": "time_limit" if hit else "undecided",
            "undecided_starts": unknown,
            "message": f"no admissible set found yet; {unknown} start(s) undecided"
            + (" within the time limit" if hit else "")
            + _by_solver(undecided)
            + ("" if hit else " (not a proof)"),
        }
        return rejected(prob, CallReport("exact", seed, params, clock.done(), counters), reason,
                        proven=False, status="time_limit" if hit else None)  # fmt: skip
    reason = {
        "reason": "no_start",
        "starts_checked": int(starts.size),
        "message": f"no admissible solution: none of {starts.size} candidate starts in "
        f"[{request.earliest_start:g}, {request.latest_start:g}] admits {n} resources (a "
        "proof: at each, a necessary condition fails or the integer program is infeasible)",
    }
    return rejected(prob, CallReport("exact", seed, params, clock.done(), counters), reason,
                    proven=True)  # fmt: skip


def _swapped_until(avail, tmax, cap, d, rows, tol, deadline, counters):
    """``rows`` raised by the swap search, which stops at ``deadline`` (the search is a long
    kernel: 1.8 s on a 3,000-node pool, and the deadline was no scope it polled); stopped,
    the solver's set ``rows`` is kept (admissible) and ``time_limit_hit`` set."""
    left = checks.remaining(deadline)
    if left is not None and left <= 0:
        counters["time_limit_hit"] = 1
        return rows
    try:
        with interrupt.Scope(timeout=left) if left is not None else _no_scope():
            swapped, _ = _COMPILED.swap_search(avail, tmax, cap, d, rows, 10**6, tol)
        return swapped
    except TimeoutError:
        if not checks.expired(deadline):  # an outer scope's timeout (a batch's): not ours
            raise
        counters["time_limit_hit"] = 1
        return rows


class _NoBar:
    """The progress bar of an exact solve that shows none."""

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def update(self, n: int = 1) -> None:
        return None


class _no_scope:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


@dataclass(frozen=True, kw_only=True)
class _Found:
    """The first start ``t`` of :func:`exact` with a set: the eligible pool rows ``nodes``,
    their availability, window maxima and capacities there, and the set ``rows`` (indices
    into them) the integer program found."""

    t: float
    nodes: np.ndarray
    avail: np.ndarray
    tmax: np.ndarray
    cap: np.ndarray
    rows: np.ndarray


@dataclass(frozen=True, kw_only=True)
class _Search:
    """What :func:`exact` knows when it finds its first set: its limits, what it reports
    (seed, params, clock, counters) and the earlier starts it left undecided (``unknown``
    in all, ``undecided`` by a solver without a time limit, the first of them)."""

    enumerate_limit: int
    deadline: Optional[float]
    seed: Optional[int]
    params: dict
    clock: Any
    counters: dict
    unknown: int
    undecided: int
    first_undecided: Optional[float]


def _best_at(prob, found: _Found, search: _Search) -> CoallocationResult:
    """The answer of :func:`exact` at the first start with a set: that set raised by the
    swaps, then the enumeration of every set when there are at most ``enumerate_limit``;
    when the deadline cuts the enumeration, the better of the two."""
    t, nodes, avail, tmax, cap, rows = (found.t, found.nodes, found.avail, found.tmax, found.cap,
                                        found.rows)  # fmt: skip
    clock, counters, unknown = search.clock, search.counters, search.unknown
    deadline = search.deadline
    n, d, tol = prob.request.count, prob.d, prob.tol
    swapped = _swapped_until(avail, tmax, cap, d, rows, tol, deadline, counters)
    best_rows, best_u = swapped, factor(d, tmax[swapped], cap[swapped])
    proven_u = False
    cut = False
    if math.comb(int(avail.shape[0]), n) <= search.enumerate_limit:
        got, u, complete = enumerate_best(avail, tmax, cap, d, n, deadline, tol)
        if complete:
            counters["enumerated"] = math.comb(int(avail.shape[0]), n)
        else:
            counters["time_limit_hit"] = 1
            cut = True
        if got is not None and (complete or u > best_u):
            best_rows, best_u, proven_u = got, u, complete
        # (complete without a set: summation order at the boundary; the solver's set stays)
    clock.lap("utilisation")
    proven = unknown == 0
    why = ("every set enumerated" if proven_u else
           "the time limit stopped its enumeration" if cut else
           f"C({avail.shape[0]}, {n}) > enumerate_limit")  # fmt: skip
    message = (f"start {t:g} s {'proven earliest' if proven else 'found'}; utilisation "
               f"factor {best_u:.6g} {'proven maximal there' if proven_u else 'not proven maximal'}"
               f" ({why})")  # fmt: skip
    if unknown:
        message += (f"; {unknown} earlier start(s) undecided"
                    f"{' within the time limit' if counters['time_limit_hit'] else ''}"
                    f"{_by_solver(search.undecided)}")  # fmt: skip
    status = "time_limit" if counters["time_limit_hit"] else "feasible"
    report = CallReport("exact", search.seed, search.params, clock.done(), counters)
    return solution(prob, report, t, nodes[best_rows], tmax[best_rows], status=status,
                    proven=proven, bound=search.first_undecided, message=message)  # fmt: skip


def _by_solver(count: int) -> str:
    """The part of a message on starts that a solver left undecided without a time limit."""
    if not count:
        return ""
    return (f" ({count} of them by the solver: a set that fails the tolerance rule, or no "
            "answer)")  # fmt: skip


@checked("coalloc.collective.constraints", "brute_force")
def brute_force(
    request: CollectiveRequest,
    pool: ResourcePool,
    *,
    seed: Optional[int] = None,
    max_combinations: int = 200_000,
) -> CoallocationResult:
    """Referee for small cases: every breakpoint in the window, every subset of nodes.

    Tries ``t_e`` and *every* breakpoint in ``(t_e, t_l]`` (not only those where availability
    increases), recomputes each node's window maximum segment by segment, and enumerates every
    subset of ``N`` eligible nodes; the first start with an admissible subset wins, with the
    largest factor there.

    Parameters
    ----------
    request, pool
        The request and the pool (demand first; the old order warns).
    seed : int, optional
        Unused.
    max_combinations : int
        ``ValueError`` when a start has more subsets than this (at most ``10**8``).

    Returns
    -------
    CoallocationResult
        ``"optimal"`` or ``"infeasible"`` (both proven).

    Raises
    ------
    ValueError
        When the instance is too large.

    Examples
    --------
    >>> pool = ResourcePool([[4.0], [2.0], [1.0]], ["cores"])
    >>> req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 3})
    >>> brute_force(req, pool).utilisation
    1.0
    """
    request, pool = demand_first(request, pool, "brute_force", stacklevel=3)
    seed = check_seed(seed)
    max_combinations = int(max_combinations)  # checked by the table (@checked)
    prob = Problem.of(pool, request)
    clock = Clock()
    n, e, d = request.count, prob.e, prob.d
    # the tolerance rule, restated here (the referee shares no threshold with the methods)
    tau = TOLERANCE * np.max(pool.capacity, axis=0, initial=0.0)
    times, res, capall = pool.times, pool.reserved, pool.capacity
    lo, hi = request.earliest_start, request.latest_start
    starts = [lo] + [float(x) for x in times if lo < x <= hi]
    params = {"max_combinations": max_combinations}
    for t in starts:
        interrupt.check()
        end = t + request.duration
        seg = [k for k in range(times.shape[0])
               if times[k] < end and (k + 1 == times.shape[0] or times[k + 1] > t)]  # fmt: skip
        # every labelled node's peaks at once (the per-node loop took 0.1-0.2 s CPU on 10,000
        # nodes before a refusal or the first check of the deadline; issue 36): the same
        # maxima and comparisons, node by node in index order
        ok_label = np.flatnonzero(prob.label_ok)
        # (the segments are consecutive: the window's maxima read in place, no copy)
        peaks = res[:, :, seg[0] : seg[-1] + 1].max(axis=2)[ok_label]
        keep = np.all(capall[ok_label] - peaks >= e - tau, axis=1)
        cand = [int(j) for j in ok_label[keep]]
        tm = {int(j): peaks[i] for i, j in enumerate(ok_label) if keep[i]}
        if len(cand) < n:
            continue
        if math.comb(len(cand), n) > max_combinations:
            raise ValueError(f"brute force: C({len(cand)}, {n}) subsets exceed max_combinations")
        best, best_u = None, -1.0

        def found(best: list, t: float, tm: dict = tm) -> CoallocationResult:
            # the best set at this start (every earlier start was enumerated: none there)
            tmax = np.array([tm[j] for j in best])
            report = CallReport("brute_force", seed, params, clock.done(),
                            {"starts": starts.index(t) + 1})  # fmt: skip
            return solution(prob, report, t, np.array(best), tmax, status="optimal", proven=True)

        for k, combo in enumerate(combinations(cand, n)):
            if not k & 1023:  # the time limit's deadline (issue 36), Ctrl-C
                interrupt.check()
            c = list(combo)
            avail = sum(capall[j] - tm[j] for j in c)
            if np.all(avail >= d - n * tau):
                used, have = d + sum(tm[j] for j in c), sum(capall[j] for j in c)
                # 0/0 (a property the set has none of) counts 1: no NaN
                u = float(np.prod([x / y if y > 0 else 1.0 for x, y in zip(used, have)]))
                if u > best_u:
                    best, best_u = c, u
                    checks.offer_incumbent(functools.partial(found, c, t))
        if best is not None:
            return found(best, t)
    reason = {"reason": "no_start", "starts_checked": len(starts),
              "message": "no admissible solution in the window"}  # fmt: skip
    report = CallReport("brute_force", seed, params, clock.done(), {"starts": len(starts)})
    return rejected(prob, report, reason, proven=True)


# The exact method at the public boundary: the one status rule at its exit, and ``solver=``
# also taken by its deprecated name ``backend=`` (a :class:`DeprecationWarning`).
exact = renamed_keyword(settled(exact), "backend", "solver")
