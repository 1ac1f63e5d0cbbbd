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
from itertools import combinations
from typing import Optional

import numpy as np

from .._shared import interrupt, milp, progress
from .._shared import params as checks
from .._shared.family import renamed_keyword
from .._shared.seeding import check_seed
from ._order import demand_first
from .core import (
    Clock,
    Problem,
    bounded,
    decrease_starts,
    factor,
    kernels,
    ratio,
    rejected,
    settled,
    solution,
)
from .model import TOLERANCE, CollectiveRequest, ResourcePool
from .result import CoallocationResult

__all__ = ["exact", "brute_force", "feasible_subset", "best_subset", "EXACT_SOLVERS"]

#: The integer-programming solvers of :func:`exact` (``solver=``).
EXACT_SOLVERS = ("highs", "cbc", "cpsat")
#: The older name of :data:`EXACT_SOLVERS`.
EXACT_BACKENDS = EXACT_SOLVERS
#: CP-SAT needs every linear expression's range inside int64: exact integer columns are used
#: while the sum of their magnitudes stays below this.
_CPSAT_LIMIT = 2**61
#: The float models of HiGHS and CBC keep a column as it is while its largest magnitude lies
#: in this range (integers: at most the upper end); outside it the column is multiplied by
#: the power of two that brings its largest magnitude into [0.5, 1) (exact in binary).
_WELL_SCALED = (2.0**-10, 2.0**20)


def _dyadic(col: np.ndarray, need: float):
    """``(A, k, N)``: the column as exact integers ``A = col * 2**k`` (every finite double is
    an integer times a power of two) and ``N = ceil(need * 2**k)``, so that for binary ``x``
    ``sum A x >= N`` exactly when ``sum col x >= need``."""
    ratios = [float(v).as_integer_ratio() for v in col.tolist()]
    num_n, den_n = float(need).as_integer_ratio()
    k = max([den.bit_length() - 1 for _, den in ratios] + [0])
    ints = [num * ((1 << k) // den) for num, den in ratios]
    return ints, k, -(-(num_n << k) // den_n)


def _check(avail: np.ndarray, rows: np.ndarray, dlo: np.ndarray, count: int) -> bool:
    """The tolerance rule on the original data: ``count`` distinct rows whose column sums
    reach ``dlo``."""
    return (rows.size == count and np.unique(rows).size == count
            and bool(np.all(avail[rows].sum(axis=0) >= dlo)))  # fmt: skip


def _cpsat_model(cp, avail, need_cols, count, mode):
    """A CP-SAT model of ``sum x = count`` and ``sum_j A_ij x_j >= N_i``: ``mode`` "exact"
    (``need_cols`` holds integer columns), "relaxed" (availabilities rounded up, needs
    down: its infeasibility is a proof) or "conservative" (the other way: its solutions are
    admissible)."""
    k, m = avail.shape
    model = cp.CpModel()
    xs = [model.NewBoolVar(f"x{j}") for j in range(k)]
    model.Add(sum(xs) == count)
    for i in range(m):
        if mode == "exact":
            coef, need = need_cols[i]
        else:
            col, need_f = avail[:, i], need_cols[i]
            big = max(float(np.abs(col).max()), abs(need_f), 1e-300)
            scale = 2.0 ** (40 - math.frexp(big)[1])  # largest magnitude about 2**40
            up = mode == "relaxed"
            coef = (np.ceil(col * scale) if up else np.floor(col * scale)).astype(np.int64)
            need = int(math.floor(need_f * scale) if up else math.ceil(need_f * scale))
        model.Add(sum(int(c) * x for c, x in zip(coef, xs)) >= int(need))
    return model, xs


def feasible_subset(
    avail: np.ndarray,
    d: np.ndarray,
    count: int,
    *,
    solver: str = "highs",
    time_limit: Optional[float] = None,
    weights: Optional[np.ndarray] = None,
    started: Optional[float] = None,
    tol: Optional[np.ndarray] = None,
):
    """Is there a set of ``count`` rows of ``avail`` whose column sums reach ``d``?

    The family's tolerance rule applies: the sums must reach ``d - count * tol``
    (``tol``: ``tau_i`` per property, None: zeros). ``time_limit`` counts from ``started``
    (a ``time.perf_counter()`` value; default: this call), so that a caller running several
    tests under one deadline passes its own start. Returns ``(status, rows)``:
    ``"feasible"`` with rows checked against ``avail`` itself, ``"infeasible"`` (proven) or
    ``"time_limit"``/``"error"`` (undecided) with None.

    The models are exact at any scale of numbers: CP-SAT gets every column as exact
    integers (a power-of-two multiple) when they fit its 64-bit range, else a relaxation
    (rounded up: only its infeasibility is used) and a conservative model (rounded down:
    only its solutions are used); HiGHS and CBC get columns multiplied by a power of two
    (exact) when their magnitudes leave a well-conditioned range. A set a solver returns is
    checked against the original data before it is called feasible; a start HiGHS or CBC
    leave undecided that way goes to CP-SAT's exact model (when OR-Tools is installed).
    """  # fmt: skip
    started = time.perf_counter() if started is None else float(started)
    # No progress display per program (no objective to show): exact() shows the starts.
    k, m = avail.shape
    avail = np.asarray(avail, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    dlo = d if tol is None else d - count * np.asarray(tol, dtype=np.float64)
    if solver == "cpsat":
        cp = milp.import_solver("cpsat")
        cols = [_dyadic(avail[:, i], float(dlo[i])) for i in range(m)]
        exact_ints = all(sum(abs(v) for v in c) + abs(nd) < _CPSAT_LIMIT for c, _, nd in cols)
        modes = ["exact"] if exact_ints else ["relaxed", "conservative"]
        for mode in modes:
            need_cols = [(c, nd) for c, _, nd in cols] if mode == "exact" else list(dlo)
            model, xs = _cpsat_model(cp, avail, need_cols, count, mode)
            out = milp.run_cpsat(cp, model, xs, rows=m + 1, time_limit=time_limit,
                                 started=started, progress=False)  # fmt: skip
            if out.status == "infeasible" and mode != "conservative":
                return "infeasible", None  # exact or a relaxation: a proof
            if out.x is not None and out.status in ("optimal", "feasible", "time_limit"):
                rows = np.flatnonzero(np.round(out.x[:k]) > 0.5)
                if _check(avail, rows, dlo, count):
                    return "feasible", rows
            if out.time_limit_hit or out.status == "time_limit":
                return "time_limit", None
        return "error", None  # the rounded models could not decide
    # HiGHS, CBC: a float model, columns brought into a well-conditioned range
    scale = np.ones(m)
    lo_rule = dlo.copy()  # the rule's thresholds (scaled like their columns)
    lo_first = d.copy()  # the plain model first where a column is kept as it is
    for i in range(m):
        col = avail[:, i]
        big = float(np.abs(col).max()) if k else 0.0
        if bool(np.all(col == np.round(col))) and big <= _WELL_SCALED[1]:
            lo_rule[i] = lo_first[i] = math.ceil(dlo[i])  # integer sums: exact
        elif big > 0 and not (_WELL_SCALED[0] <= big <= _WELL_SCALED[1]):
            scale[i] = 2.0 ** -math.frexp(big)[1]  # exact: a power of two
            lo_rule[i] = lo_first[i] = dlo[i] * scale[i]
    a = np.vstack([np.ones((1, k)), (avail * scale[None, :]).T])
    hi = np.concatenate([[count], np.full(m, np.inf)])
    import scipy.sparse as sp

    cost = np.zeros(k) if weights is None else weights
    # The rule's thresholds first: most starts a scan asks about are infeasible, and their
    # proof is this one solve. A feasible one is then asked with the plain thresholds, and
    # a set meeting those is preferred (the answer the plain model alone gave before).
    plain = bool(np.any(lo_first != lo_rule))
    passes = [lo_rule]
    status = "error"
    margin = False
    found = None
    while passes:
        lo_rows = passes.pop(0)
        lo = np.concatenate([[count], lo_rows])
        out = milp.run_milp(solver, milp.import_solver(solver), cost, sp.csr_matrix(a), lo,
                            hi, integrality=np.ones(k), lb=0.0, ub=1.0, sense="min",
                            time_limit=time_limit, mip_gap=0.0, started=started,
                            progress=False)  # fmt: skip
        if out.x is not None and out.status in ("optimal", "feasible", "time_limit"):
            rows = np.flatnonzero(np.round(out.x[:k]) > 0.5)
            if _check(avail, rows, dlo, count):
                if lo_rows is lo_first:
                    return "feasible", rows
                if plain and not margin and found is None:
                    found, passes = rows, [lo_first]
                    continue
                return "feasible", rows
            if found is not None:  # the plain thresholds' set fails the rule: keep the rule's
                return "feasible", found
            # a set within the solver's own tolerances only: undecided, never "infeasible";
            # once more with the thresholds raised above those tolerances
            status = "error"
            if not margin:
                margin, passes = True, [lo_rule + 1e-6 * np.maximum(1.0, np.abs(lo_rule))]
        elif found is not None:  # the plain thresholds admit nothing: the rule's set
            return "feasible", found
        elif out.status == "infeasible":
            # the rule's own thresholds decide; a raised threshold's infeasibility proves nothing
            status = "error" if margin else "infeasible"
        else:
            status = "error"
        if out.time_limit_hit or out.status == "time_limit":
            return "time_limit", None
    if status == "error":  # CP-SAT on exact integers decides what float tolerances cannot
        try:
            milp.import_solver("cpsat")
        except ImportError:
            return status, None
        return feasible_subset(avail, d, count, solver="cpsat", time_limit=time_limit,
                               started=started, tol=tol)  # fmt: skip
    return status, None


def best_subset(avail, tmax, cap, d, count, limit, deadline=None, tol=None):
    """The subset of ``count`` rows with every total met (the tolerance rule: sums at least
    ``d - count * tol``) and the largest factor, by enumeration of all ``C(k, count)``
    subsets (None when there are more than ``limit`` or when ``time.perf_counter()`` passes
    ``deadline`` before the enumeration ends; ``(None, -1.0)`` when none is admissible).
    Returns ``(rows, factor)``."""
    if math.comb(avail.shape[0], count) > limit:
        return None
    rows, u, complete = enumerate_best(avail, tmax, cap, d, count, deadline, tol)
    return (rows, u) if complete else None


def enumerate_best(avail, tmax, cap, d, count, deadline=None, tol=None, on_better=None):
    """:func:`best_subset`'s enumeration, keeping what it found when ``deadline`` (a
    :func:`time.perf_counter` value) stops it: ``(rows, factor, complete)``, rows None
    (factor -1) when no admissible subset was met; ``complete`` False when the deadline cut
    the enumeration (the factor is then not proven maximal). ``on_better(rows, factor)`` is
    called at each better subset (a time limit's incumbent)."""
    k = avail.shape[0]
    dlo = d if tol is None else d - count * np.asarray(tol, dtype=np.float64)
    best_rows, best_u = None, -1.0
    it = combinations(range(k), count)
    while True:
        interrupt.check()  # about every 4096 subsets: a batch's timeout, a cancelled batch
        if deadline is not None and time.perf_counter() >= deadline:
            return best_rows, best_u, False
        block = np.fromiter((j for c in _take(it, 4096) for j in c), dtype=np.int64)
        if block.size == 0:
            break
        block = block.reshape(-1, count)
        sa = avail[block].sum(axis=1)
        ok = np.all(sa >= dlo[None, :], axis=1)
        if not ok.any():
            continue
        b = block[ok]
        u = np.prod(ratio(d[None, :] + tmax[b].sum(axis=1), cap[b].sum(axis=1)), axis=1)
        q = int(np.argmax(u))
        if u[q] > best_u:
            best_u, best_rows = float(u[q]), b[q]
            if on_better is not None:
                on_better(best_rows, best_u)
    return best_rows, best_u, True


def _take(it, n):
    for _ in range(n):
        try:
            yield next(it)
        except StopIteration:
            return


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
    request : CollectiveRequest
        The request (demand first; the old order ``(pool, request)`` still works, with a
        ``DeprecationWarning``).
    pool : ResourcePool
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
    checks.choice(solver, EXACT_SOLVERS, "solver")
    time_limit = checks.time_limit(time_limit)
    enumerate_limit = bounded(enumerate_limit, "enumerate_limit", 1, 10**9)
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
            "message": f"no solution: only {nodes.size} nodes match labels and minimums, "
            f"{n} needed (a proof: no set of {n} exists at any time)",
        }
        return rejected(prob, "exact", reason, seed, params, clock.done(), counters, proven=True)
    starts = decrease_starts(pool, nodes, request.earliest_start, request.latest_start)
    ref = kernels("numpy")
    cap = pool.capacity[nodes]
    sub = pool.reserved[nodes]
    unknown = 0
    undecided = 0  # starts a solver could not decide (not the time limit)
    first_undecided = None  # the first start left undecided: a lower bound on the earliest
    show = progress.exact_progress_wanted(None)  # the CLI, on a terminal
    with progress.progress(total=int(starts.size), desc="exact: candidate starts", unit="start",
                           disable=not show, leave=False) as bar:  # fmt: skip
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
            tmax = ref.window_max(pool.times, sub, np.array([t]), request.duration)[0]
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
            return _best_at(prob, t, nodes[el], avail[el], tmax[el], cap[el], rows, n,
                            enumerate_limit, deadline, seed, params, clock, counters,
                            unknown, undecided, first_undecided)  # fmt: skip
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
        return rejected(prob, "exact", reason, seed, params, clock.done(), counters,
                        proven=False, status="time_limit" if hit else None)  # fmt: skip
    reason = {
        "reason": "no_start",
        "starts_checked": int(starts.size),
        "message": f"no admissible solution: none of {starts.size} candidate starts in "
        f"[{request.earliest_start:g}, {request.latest_start:g}] admits {n} resources (a "
        "proof: at each, a necessary condition fails or the integer program is infeasible)",
    }
    return rejected(prob, "exact", reason, seed, params, clock.done(), counters, proven=True)


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
            swapped, _ = kernels("compiled").swap_search(avail, tmax, cap, d, rows, 10**6, tol)
        return swapped
    except TimeoutError:
        if not checks.expired(deadline):  # an outer scope's timeout (a batch's): not ours
            raise
        counters["time_limit_hit"] = 1
        return rows


class _no_scope:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


def _best_at(prob, t, nodes, avail, tmax, cap, rows, n, enumerate_limit, deadline, seed, params,
             clock, counters, unknown, undecided, first_undecided):  # fmt: skip
    """The answer of :func:`exact` at the first start ``t`` with a set (``rows``, from the
    integer program; ``nodes`` are the eligible pool rows): that set raised by the swaps,
    then the enumeration of every set when there are at most ``enumerate_limit``; when the
    deadline cuts the enumeration, the better of the two."""
    d, tol = prob.d, prob.tol
    swapped = _swapped_until(avail, tmax, cap, d, rows, tol, deadline, counters)
    best_rows, best_u = swapped, factor(d, tmax[swapped], cap[swapped])
    proven_u = False
    cut = False
    if math.comb(int(avail.shape[0]), n) <= enumerate_limit:
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
                    f"{_by_solver(undecided)}")  # fmt: skip
    status = "time_limit" if counters["time_limit_hit"] else "feasible"
    return solution(prob, "exact", t, nodes[best_rows], tmax[best_rows], seed, params,
                    clock.done(), counters, status=status, proven=proven,
                    bound=first_undecided, message=message)  # fmt: skip


def _by_solver(count: int) -> str:
    """The part of a message on starts that a solver left undecided without a time limit."""
    if not count:
        return ""
    return (f" ({count} of them by the solver: a set that fails the tolerance rule, or no "
            "answer)")  # fmt: skip


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
    max_combinations = bounded(max_combinations, "max_combinations", 1, 10**8)
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
        cand = []
        tm = {}
        for j in range(pool.n_nodes):
            if not prob.label_ok[j]:
                continue
            peak = res[j][:, seg].max(axis=1)
            if np.all(capall[j] - peak >= e - tau):
                cand.append(j)
                tm[j] = peak
        if len(cand) < n:
            continue
        if math.comb(len(cand), n) > max_combinations:
            raise ValueError(f"brute force: C({len(cand)}, {n}) subsets exceed max_combinations")
        best, best_u = None, -1.0

        def found(best: list, t: float, tm: dict = tm) -> CoallocationResult:
            # the best set at this start (every earlier start was enumerated: none there)
            tmax = np.array([tm[j] for j in best])
            return solution(prob, "brute_force", t, np.array(best), tmax, seed, params,
                            clock.done(), {"starts": starts.index(t) + 1}, status="optimal",
                            proven=True)  # fmt: skip

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
    return rejected(prob, "brute_force", reason, seed, params, clock.done(),
                    {"starts": len(starts)}, proven=True)  # fmt: skip


# The exact method at the public boundary: the one status rule at its exit, and ``solver=``
# also taken by its deprecated name ``backend=`` (a :class:`DeprecationWarning`).
exact = renamed_keyword(settled(exact), "backend", "solver")
