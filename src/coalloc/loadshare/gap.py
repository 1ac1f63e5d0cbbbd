"""The generalized assignment problem (GAP), as Hovey & Jung frame load sharing.

``m`` agents with capacities ``b_i`` and ``n`` items; assigning item ``j`` to agent ``i``
costs ``c_ij`` (or earns it, ``sense="max"``) and uses ``w_ij`` of the agent's capacity.
Every item goes to exactly one agent (``assign_all=True``) or to at most one
(``assign_all=False``: an item may stay unassigned, ``-1``, at no cost).

* :func:`read_gap` / :func:`write_gap`: the OR-Library format (module docstring of
  :mod:`coalloc.loadshare.io` and ``coalloc docs loadshare``).
* :func:`solve_gap`: ``method="exact"`` (CP-SAT or HiGHS on the shared runner: proven
  optimum, bound, gap; started from the heuristic and never worse than it) or
  ``"heuristic"``, anytime: the rounded LP relaxation (or a greedy on the Lagrangian
  relaxation's reduced costs) as the start, then a resumable compiled tabu search over
  shifts, swaps and ejection chains with a penalised capacity excess in rounds that stop
  at ``time_limit``, with subgradient steps on the Lagrangian relaxation of the capacities
  between them; the bound is the best of the LP and the Lagrangian, and
  ``result.trajectory`` records (time, objective, bound).
* :func:`generate_gap`: Chu & Beasley's types A-D.
"""

from __future__ import annotations

import math
import sys
import threading
import time
from typing import Any, List, NamedTuple, Optional

import numpy as np

from .._shared import interrupt
from .._shared.family import renamed_keyword
from .._shared.milp import (
    MilpOutcome,
    Rejected,
    import_solver,
    integer_scaling,
    run_cpsat,
    run_milp,
)
from .._shared.params import choice, integer
from .._shared.params import deadline as _deadline
from .._shared.params import time_limit as _time_limit
from .._shared.result import relative_gap, settle
from .._shared.seeding import check_seed, kernel_seed, resolve_seed
from .._shared.validation import check_memory, readonly
from . import _gapls
from .result import GapResult
from .verify import verify_gap

__all__ = [
    "GapInstance",
    "GapResult",
    "solve_gap",
    "generate_gap",
    "GAP_TYPES",
    "gap_bound",
    "count_bound_infeasible",
]

_LIMIT = 2**62
#: The share of an exact call's time limit its hint (the heuristic) may take.
HINT_SHARE = 0.25
#: The most tabu iterations a heuristic run may be asked for (the search runs in rounds
#: that ``time_limit`` stops; without one, this bounds its time).
MAX_ITERATIONS = 10**9
GAP_TYPES = ("a", "b", "c", "d")


class GapInstance:
    """A validated GAP instance.

    Parameters
    ----------
    cost : array_like, shape (m, n)
        ``cost[i, j]``: cost (or profit) of item ``j`` on agent ``i``; finite.
    weight : array_like of int, shape (m, n)
        Capacity used; non-negative integers.
    capacity : array_like of int, shape (m,)
        Agent capacities; non-negative integers.
    name : str, optional

    Raises
    ------
    TypeError, ValueError
        Wrong shapes, non-integer weights or capacities, negative values, NaN, or weights
        whose sums could overflow 64-bit integers (every agent's total weight and capacity
        must stay below 2**62).

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance
    >>> inst = GapInstance([[1, 2], [3, 1]], [[1, 1], [1, 1]], [1, 1])
    >>> inst.m, inst.n
    (2, 2)
    """

    def __init__(self, cost: Any, weight: Any, capacity: Any, name: str = "") -> None:
        try:
            c = np.array(cost, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cost must be a numeric (m, n) matrix: {exc}") from None
        if c.ndim != 2 or c.shape[0] == 0:
            raise ValueError(f"cost must be a 2-D (m, n) matrix with m >= 1, got shape {c.shape}")
        if not np.all(np.isfinite(c)):
            raise ValueError("cost must be finite (found NaN or inf)")
        w = _int_array(weight, "weight", 2)
        if w.shape != c.shape:
            raise ValueError(f"weight has shape {w.shape}, expected {c.shape} (like cost)")
        b = _int_array(capacity, "capacity", 1)
        if b.shape[0] != c.shape[0]:
            raise ValueError(f"capacity has length {b.shape[0]}, expected {c.shape[0]} agents")
        for i in range(w.shape[0]):
            if sum(int(x) for x in w[i].tolist()) >= _LIMIT or int(b[i]) >= _LIMIT:
                raise ValueError(
                    f"weights of agent {i} sum to 2**62 or more: they could overflow int64"
                )
        self.cost, self.weight, self.capacity = c, w, b
        readonly(c, w, b)
        self.name = str(name)

    @property
    def m(self) -> int:
        """Number of agents."""
        return int(self.cost.shape[0])

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.cost.shape[1])

    @property
    def integral_cost(self) -> bool:
        """All costs are integers (CP-SAT can take them as they are)."""
        cost = self.cost  # no items: integral (max of nothing is 0)
        return bool(np.all(cost == np.round(cost)) and np.abs(cost).max(initial=0.0) < 2**52)

    def __repr__(self) -> str:
        return f"GapInstance(m={self.m}, n={self.n}{', ' + self.name if self.name else ''})"


def _int_array(values: Any, argname: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(values)
    except (TypeError, ValueError) as exc:  # pragma: no cover
        raise TypeError(f"{argname} must be an integer array: {exc}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{argname} must be {ndim}-D, got shape {arr.shape}")
    if arr.size and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{argname} must hold integers")
        if np.abs(arr).max() >= 2**62:
            raise ValueError(f"{argname} has values of 2**62 or more: they could overflow int64")
    elif arr.size and arr.dtype.kind == "O":
        if any(abs(int(v)) >= _LIMIT for v in arr.ravel().tolist()):
            raise ValueError(f"{argname} has values of 2**62 or more: they could overflow int64")
    elif arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{argname} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{argname} must be non-negative")
    return arr


def _objective(inst: GapInstance, assign: np.ndarray) -> float:
    on = assign >= 0
    return float(inst.cost[assign[on], np.flatnonzero(on)].sum())


def gap_bound(
    instance: GapInstance, sense: str = "min", assign_all: bool = True
) -> Optional[float]:
    """The LP-relaxation bound of the GAP (None when the LP is infeasible).

    Equal to the Lagrangian bound obtained by relaxing the capacity constraints. Items that
    fit no agent alone are forced out of the LP's support (``x_ij = 0`` when ``w_ij > b_i``).

    Parameters
    ----------
    instance : GapInstance
        The GAP instance.
    sense : {"min", "max"}
        Minimise the cost or maximise the profit.
    assign_all : bool
        Every item must be assigned (the classical GAP); False: items may stay out.

    Returns
    -------
    float or None
        A lower bound (``"min"``) or an upper bound (``"max"``) on the optimum; None when
        the LP is infeasible.

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance, gap_bound
    >>> gap_bound(GapInstance([[1, 3], [2, 1]], [[2, 2], [2, 2]], [2, 2]))
    2.0
    """
    return _lp(instance, sense, assign_all)[0]


class _LpTimedOut(Exception):
    """HiGHS stopped the LP relaxation at its wall-clock cap (no bound, no start)."""


def _lp(instance: GapInstance, sense: str, assign_all: bool, time_limit: Optional[float] = None,
        until: Optional[float] = None):  # fmt: skip
    """``(bound or None, x or None, rc or None)``: the LP bound, its (m, n) solution and
    the reduced costs of the pairs in the minimisation of ``sign * cost`` (``c_ij - y_j -
    mu_i w_ij`` from HiGHS's duals: ``>= 0`` where ``x_ij = 0``, ``0`` where it is
    fractional; ``+inf`` where the item does not fit the agent), with one more row, the
    dummy agent's ``-y_j``, when items may stay out; ``None`` when the LP is infeasible.
    With ``time_limit`` (seconds), HiGHS stops there and :class:`_LpTimedOut` is raised:
    the size rule that decides whether the LP runs at all cannot see the machine's load,
    the cap can. ``until`` (a :func:`time.perf_counter` value) caps it instead, counted
    after SciPy's optimiser is imported (a first call in a process imports it: 0.35 s
    idle, over a second under load)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    if until is not None:
        time_limit = until - time.perf_counter()
        if time_limit <= 0:
            raise _LpTimedOut

    m, n = instance.m, instance.n
    fits = instance.weight <= instance.capacity[:, None]
    if assign_all and n and not np.all(fits.any(axis=0)):
        return None, None, None  # an item fits no agent
    ii, jj = np.nonzero(fits)
    k = ii.shape[0]
    if k == 0:
        return 0.0, np.zeros((m, n)), None
    sign = 1.0 if sense == "min" else -1.0
    c = sign * instance.cost[ii, jj]
    a_cap = coo_matrix((instance.weight[ii, jj].astype(float), (ii, np.arange(k))), shape=(m, k))
    a_one = coo_matrix((np.ones(k), (jj, np.arange(k))), shape=(n, k))
    options = {} if time_limit is None else {"time_limit": max(float(time_limit), 1e-3)}
    if assign_all:
        res = linprog(c, A_ub=a_cap, b_ub=instance.capacity.astype(float), A_eq=a_one,
                      b_eq=np.ones(n), bounds=(0, 1), method="highs",
                      options=options)  # fmt: skip
    else:
        from scipy.sparse import vstack

        res = linprog(c, A_ub=vstack([a_cap, a_one]),
                      b_ub=np.concatenate([instance.capacity.astype(float), np.ones(n)]),
                      bounds=(0, 1), method="highs", options=options)  # fmt: skip
    if res.status == 1 and time_limit is not None:  # stopped at the cap: nothing proven
        raise _LpTimedOut
    if res.status != 0:
        return None, None, None
    value = sign * float(res.fun)
    if instance.integral_cost:  # an integer optimum: round the bound inwards
        value = math.ceil(value - 1e-6) if sense == "min" else math.floor(value + 1e-6)
    x = np.zeros((m, n))
    x[ii, jj] = res.x
    if assign_all:
        mu, y = res.ineqlin.marginals, res.eqlin.marginals
    else:
        mu, y = res.ineqlin.marginals[:m], res.ineqlin.marginals[m:]
    rc = np.full((m, n), np.inf)
    rc[ii, jj] = c - y[jj] - mu[ii] * instance.weight[ii, jj]
    if not assign_all:  # the dummy agent: cost 0, weight 0
        rc = np.vstack([rc, -y[None, :]])
    return float(value), x, rc


def solve_gap(
    instance: GapInstance,
    method: str = "heuristic",
    *,
    sense: str = "min",
    assign_all: bool = True,
    time_limit: Optional[float] = None,
    seed: Optional[int] = 0,
    solver: str = "cpsat",
    threads: int = 1,
    iterations: Optional[int] = None,
    with_bound: bool = True,
    hint: bool = True,
) -> GapResult:
    """Solve a GAP instance exactly or heuristically.

    Parameters
    ----------
    instance : GapInstance
    method : {"heuristic", "exact"}, default "heuristic"
    sense : {"min", "max"}, default "min"
        Minimise cost or maximise profit.
    assign_all : bool, default True
        Every item must be assigned; False lets items stay unassigned (``-1``, no cost).
    time_limit : float, optional
        Seconds for the whole call, from its entry. Heuristic: the search runs in rounds of
        about 0.1 s and stops at the limit with the best assignment so far (it uses the
        whole limit unless ``iterations`` ends it first or the bound proves the assignment
        optimal); the LP relaxation, which cannot be interrupted, is solved only when its
        budget (2.5e-5 s per pair) fits 0.4 of the limit. Exact: the heuristic runs for the
        whole limit exactly as the heuristic method would, and from a quarter of the limit
        on (``HINT_SHARE``) the solver runs beside it in a second thread, started from the
        heuristic's best assignment at that moment (importing the solver and building its
        model count); the better answer of the two is returned, so the exact method at a
        limit is never worse than the heuristic at that limit, and a proof from either
        (the solver's optimum or infeasibility, the heuristic's bound) ends both.
    seed : int, optional
    solver : {"cpsat", "highs", "cbc"}, default "cpsat"
        The exact method's integer-programming solver (non-integer costs: HiGHS is used
        instead of CP-SAT). ``backend=``, its old name, is accepted with a
        DeprecationWarning.
    threads : int, default 1
        Exact method's workers.
    iterations : int, optional
        Heuristic: tabu iterations (default ``max(3000, 15 n)`` without a time limit,
        unbounded with one; at most ``MAX_ITERATIONS``, 10**9). The answer depends on the
        seed and the iterations only: a timed run's ``iterations["tabu_iterations"]``
        given here replays it.
    with_bound : bool, default True
        Heuristic: report the bound (the best of the LP relaxation, when solved, and the
        Lagrangian relaxations of the capacities and of the assignment rows, the latter
        by knapsacks; the message says which).
    hint : bool, default True
        Exact: run the heuristic first (beside the solver under a time limit) and start
        the solver from its assignment; False: the solver alone.

    Returns
    -------
    GapResult
        ``status`` (the one rule of :mod:`coalloc._shared.result`): ``optimal`` when the
        objective meets a proven bound (the solver's, or the heuristic's LP or Lagrangian
        bound), ``feasible`` for an assignment without that proof from a method that ended
        by itself, ``time_limit`` when the limit ended the method (with the best
        assignment found, when there is one: ``has_solution``), ``infeasible`` only with a
        proof (the solver's, the LP relaxation's, an item that fits no agent, or the
        count bound: the most items each agent can hold, its lightest ones, sum to fewer
        than the items), ``no_solution`` when the heuristic ended by itself without an
        assignment or a proof, ``error``.

    Raises
    ------
    ValueError, TypeError
        Bad arguments.

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance, solve_gap
    >>> inst = GapInstance([[1, 9], [9, 1]], [[1, 1], [1, 1]], [1, 1])
    >>> solve_gap(inst, "exact").objective
    2.0
    """
    t0 = time.perf_counter()
    if not isinstance(instance, GapInstance):
        raise TypeError(f"instance must be a GapInstance, got {type(instance).__name__}")
    choice(method, ("heuristic", "exact"), "method")
    choice(sense, ("min", "max"), "sense")
    choice(solver, ("cpsat", "highs", "cbc"), "solver")
    if not isinstance(assign_all, (bool, np.bool_)):
        raise TypeError("assign_all must be a bool")
    limit = _time_limit(time_limit)
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    threads = integer(threads, "threads", 1)
    if iterations is not None:
        iterations = integer(iterations, "iterations", 0)
        if iterations > MAX_ITERATIONS:
            raise ValueError(
                f"iterations must be at most {MAX_ITERATIONS:,}, got {iterations}"
                " (use time_limit to let the search run as long as you wish)"
            )
    assign_all = bool(assign_all)
    params = {"sense": sense, "assign_all": assign_all, "time_limit": limit}
    if method == "exact":
        res = _solve_exact(instance, sense, assign_all, limit, seed, solver, threads,
                           iterations, hint, params, t0)  # fmt: skip
    else:
        res = _solve_heuristic(instance, sense, assign_all, limit, seed, iterations,
                               with_bound, params, t0)  # fmt: skip
    return settle(res)


solve_gap = renamed_keyword(solve_gap, "backend", "solver")


def count_bound_infeasible(instance: GapInstance) -> bool:
    """The count bound: True when the most items every agent can hold together are fewer
    than the items, a proof that no assignment of every item exists.

    Agent ``i`` holds at most ``k_i`` items, the length of the longest prefix of its
    weights sorted increasingly that fits its capacity (any ``k`` items weigh at least its
    ``k`` lightest); every item needs an agent, so ``sum_i k_i < n`` leaves one out. It
    catches what the LP relaxation cannot (three items of weight 2 on two agents of
    capacity 3: the LP spreads them, the count is 1 + 1 < 3).

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance
    >>> count_bound_infeasible(GapInstance([[1, 1, 1]] * 2, [[2, 2, 2]] * 2, [3, 3]))
    True
    """
    n = instance.n
    if n == 0:
        return False
    w = np.sort(instance.weight, axis=1)
    csum = np.cumsum(w, axis=1)  # weights below 2**62 per agent: no overflow
    most = (csum <= instance.capacity[:, None]).sum(axis=1)
    return int(most.sum()) < n


def _proof_of_infeasibility(instance: GapInstance, lp_solved: bool, lp_bound: Any) -> str:
    """Why no assignment of every item exists, or "" (none of the cheap proofs holds)."""
    if instance.n and not np.all((instance.weight <= instance.capacity[:, None]).any(axis=0)):
        return "an item fits no agent"
    if lp_solved and lp_bound is None:
        return "the LP relaxation is infeasible"
    if count_bound_infeasible(instance):
        return ("the count bound: the most items the agents can hold (each its lightest) "
                "are fewer than the items")  # fmt: skip
    return ""


def _solve_heuristic(instance, sense, assign_all, limit, seed, iterations, with_bound, params,
                     t0, on_round=None, halt=None) -> GapResult:  # fmt: skip
    """The heuristic method (``on_round``, ``halt``: what :func:`_heuristic` takes, for the
    exact method that runs a solver beside it)."""
    deadline = _deadline(limit, t0)  # the one rule: the limit counts from the call
    # the LP (HiGHS, not interruptible) when its budget fits a share of the limit
    lp_bound, x_lp, rc, t_lp = None, None, None, 0.0
    lp_need = _LP_SECONDS_PER_PAIR * instance.m * instance.n
    if "scipy.optimize" not in sys.modules:  # a first call imports SciPy's optimiser
        lp_need += _LP_IMPORT_SECONDS
    lp_solved = limit is None or lp_need <= _LP_SHARE * limit
    if lp_solved:  # capped at its share of the limit: under load it may need far more
        try:
            lp_until = None if limit is None else t0 + _LP_SHARE * limit
            lp_bound, x_lp, rc = _lp(instance, sense, assign_all, until=lp_until)
        except _LpTimedOut:
            lp_solved = False
        t_lp = time.perf_counter() - t0
    heur = _heuristic(instance, sense, assign_all, deadline, seed, iterations, x_lp, t0,
                      lp_bound if with_bound else None, rc, on_round, halt)  # fmt: skip
    t = time.perf_counter() - t0
    params = {**params, "iterations": iterations}
    bounds = [v for v in (lp_bound, heur.lagrangian) if v is not None]
    bound = (max(bounds) if sense == "min" else min(bounds)) if bounds and with_bound else None
    kinds = [
        name
        for name, v in (("LP relaxation", lp_bound), ("Lagrangian relaxation", heur.lagrangian))
        if v is not None
    ]
    timings = {"lp": t_lp, "search": heur.search_seconds, "total": t}
    counters = {
        "tabu_iterations": heur.iterations,
        "subgradient_iterations": heur.subgradient_iterations,
        "knapsack_iterations": heur.knapsack_iterations,
        "core_iterations": heur.core_iterations,
    }
    trajectory = np.array(
        [
            (a, np.nan if b is None else b, np.nan if c is None else c)
            for a, b, c in heur.trajectory
        ],
        dtype=np.float64,
    ).reshape(-1, 3)
    if not with_bound:
        trajectory[:, 2] = np.nan
    if not heur.feasible:
        proof = _proof_of_infeasibility(instance, lp_solved, lp_bound) if assign_all else ""
        if proof:
            status, message = "infeasible", proof
        elif heur.stopped:
            status, message = "time_limit", "stopped at the time limit without an assignment"
        else:  # the search ended by itself: nothing found, nothing proven
            status = "no_solution"
            message = (
                "the search found no assignment that keeps every capacity, and no proof "
                "that none exists (LP relaxation, count bound): try the exact method"
            )
        return GapResult(status=status, message=message, method="heuristic", assignment=None,
                         sense=sense, assign_all=assign_all, seed=seed, params=params,
                         timings=timings, iterations=counters,
                         trajectory=trajectory)  # fmt: skip
    obj = _objective(instance, heur.assign)
    gap = relative_gap(obj, bound, sense=sense)
    status = "time_limit" if heur.stopped else "feasible"
    message = "tabu search" + (f"; bound: {' and '.join(kinds)}" if bound is not None else "")
    if heur.stopped:
        message += f"; stopped at the time limit ({limit:g} s) with the best assignment found"
    return GapResult(status=status, message=message, method="heuristic", assignment=heur.assign,
                     objective=obj, bound=bound, gap=gap, sense=sense, assign_all=assign_all,
                     seed=seed, params=params, timings=timings, iterations=counters,
                     trajectory=trajectory)  # fmt: skip


class _Heur(NamedTuple):
    """What :func:`_heuristic` found: the best assignment (``-1``: unassigned), whether it
    is feasible, the tabu and subgradient iterations done, the Lagrangian bound (None
    when not computed), the trajectory rows ``(seconds from t0, objective or None,
    bound or None)``, the search's seconds, the best bound (LP or Lagrangian), the
    knapsack steps, the tabu iterations of the core phase (0: none) and whether the
    deadline ended the search (not its iterations, a proof or ``halt``)."""

    assign: np.ndarray
    feasible: bool
    iterations: int
    lagrangian: Optional[float]
    subgradient_iterations: int
    trajectory: list
    search_seconds: float
    bound: Optional[float] = None
    knapsack_iterations: int = 0
    core_iterations: int = 0
    stopped: bool = False


#: Tabu parameters: tenure (+ a random 0 .. tenure // 2), items whose swaps are tried per
#: iteration, the penalty weights' factor; restart after ``max(1000, 5 n)`` iterations
#: without a new best.
_TENURE, _SWAP_ITEMS, _GROWTH = 5, 100, 1.05
#: Subgradient iterations before the search (they give its start when the LP is not
#: solved) and after every round of it.
_LAGR_START, _LAGR_ROUND = 300, 5
#: The knapsack Lagrangian (the assignment rows relaxed, :func:`_gapls.knapsack_lagrangian`)
#: runs between rounds when one of its steps, ``n * sum_i (b_i + 1)`` cells of dynamic
#: programme, is at most ``_KNAP_STEP_CELLS`` (and its choice table,
#: ``n * (max_i b_i + 1)`` bytes, at most ``_KNAP_TABLE_BYTES``); a round takes
#: ``max(1, _KNAP_ROUND_CELLS // cells)`` steps (about 6 ms here, against a round's 0.1 s);
#: under a time limit only while its steps have taken at most ``_KNAP_SHARE`` of the
#: search's time so far (the rounds shrink near the limit: the share keeps the steps from
#: taking the search's last tenths).
_KNAP_STEP_CELLS, _KNAP_TABLE_BYTES, _KNAP_ROUND_CELLS = 3 * 10**7, 10**8, 4 * 10**6
_KNAP_SHARE = 0.05
#: Tabu iterations per round without a time limit (rounds resume the search: the answer
#: depends on the iterations only) and the seconds a round aims at under one.
_ROUND_ITERATIONS, _ROUND_SECONDS = 1000, 0.1


def _restart(n: int, done: int = 0) -> int:
    """Tabu iterations without a new best after which the search restarts from the best,
    when ``done`` iterations have run: ``_RESTART``, growing as the run gets long (one in
    ``_RESTART_DIV`` of the iterations done, counted in whole steps of ``_RESTART_STEP``, so
    the rule does not depend on the rounds)."""
    return max(_RESTART, (done - done % _RESTART_STEP) // _RESTART_DIV)


#: The restart rule: after 200 iterations without a new best at first, after one in 60 of
#: the iterations done later on. Long runs on small instances were held near the best by
#: the fixed 200: Yagiura e20100 at 300,000 iterations (about 10 s), 0.522 % mean over seven
#: seeds with 200, 0.447 % over eight with 5000, 0.462 % over seven with this rule, which
#: leaves short runs as they were (bench/RESULTS.md, issue 27, fifth run).
_RESTART, _RESTART_DIV, _RESTART_STEP = 200, 60, 1000
_SHAKE = 0
_PER_AGENT = 0
#: Ejection chains in the tabu search: the most ejections per move (0: shifts and swaps
#: only). One ejection (item j to agent b, b's item k to a third agent) measured better
#: than none at equal CPU time on Chu-Beasley d and Yagiura d; two measured within the
#: seeds' spread of one on Chu-Beasley d and worse on Yagiura d40400 and e801600
#: (bench/RESULTS.md, issue 27, third run).
_CHAIN = 1
#: The core phase: with the LP solved, the search first runs for ``_CORE_SHARE`` of its
#: time (or iterations) on the core, the pairs of the LP's support and those whose reduced
#: cost is at most the ``_CORE_PERCENTILE``-th percentile of the positive reduced costs
#: (every other pair priced far out of reach), from the rounded LP; then on every pair, for
#: half of what is left from the core's best, for the other half afresh from the rounded
#: LP. At equal iterations on Chu-Beasley d (6 instances x 12 seeds) the mean gap fell
#: from 0.391 % (one search on every pair) to 0.314 %; the full search from the core's
#: best alone gave 0.321 % and fell into the core's basin on c20100, the fresh one alone
#: 0.332 % (bench/RESULTS.md, issue 27, fifth run).
_CORE_SHARE, _CORE_PERCENTILE = 0.3, 10.0


def _core_costs(cost, x_lp, rc, assign_all: bool, m: int) -> Optional[np.ndarray]:
    """The costs of the core phase (``cost``, the search's (m_all, n) costs; the far price
    outside the core), or None: no LP, nothing positive to cut at, or a core of every
    pair."""
    if x_lp is None or rc is None or rc.shape != cost.shape:
        return None
    support = x_lp > 1e-9
    if not assign_all:  # the dummy agent holds what the LP leaves out
        support = np.vstack([support, x_lp.sum(axis=0) < 1.0 - 1e-9])
    scale = float(np.abs(cost).max()) + 1.0
    finite = np.isfinite(rc)
    positive = rc[finite & (rc > 1e-9 * scale)]
    if positive.size == 0:
        return None
    tau = float(np.percentile(positive, _CORE_PERCENTILE))
    core = support | (finite & (rc <= tau))
    if np.all(core | ~finite):
        return None
    return np.ascontiguousarray(np.where(core, cost, 1e4 * scale), dtype=np.float64)


def _integral_bound(value: float, sense: str, integral: bool) -> float:
    """A bound computed in floating point, made safe (and rounded inwards for integer
    costs): a minimum's lower bound moves down by the rounding slack, then up to the next
    integer."""
    slack = 1e-9 * max(1.0, abs(value))
    if integral:
        return float(math.ceil(value - slack)) if sense == "min" else float(
            math.floor(value + slack))  # fmt: skip
    return value - slack if sense == "min" else value + slack


def _heuristic(inst, sense, assign_all, deadline, seed, iterations, x_lp=None, t0=None,
               lp_bound=None, rc=None, on_round=None, halt=None):  # fmt: skip
    """The anytime heuristic. A start (the rounded LP relaxation ``x_lp`` when given, else
    :func:`_reduced_cost_greedy` at the best Lagrangian multipliers, or on the costs when no
    subgradient step ran, polished by :func:`_gapls.shift_descent`),
    then the resumable tabu search (:func:`_gapls.tabu_search`) in rounds, with a few
    subgradient steps (:func:`_gapls.subgradient`, towards the best objective found) after
    each round. ``deadline`` (a ``time.perf_counter()`` value, or None) stops it between
    rounds, which are sized from the measured speed to end before it; ``iterations`` (None:
    ``max(3000, 15 n)`` without a deadline, unbounded with one) caps the tabu iterations.
    The search stops early when the bound proves the best assignment optimal. ``t0``: the
    call's start, for the trajectory's times; ``lp_bound``: the LP bound in the caller's
    sense, for the trajectory and the early stop; ``rc``: the LP's reduced costs (see
    :func:`_lp`), for the core phase (:func:`_core_costs`): with them, the search first runs
    on the pairs of small reduced cost, then afresh on every pair. ``on_round(assignment,
    feasible)``, when given, is called with the best assignment so far (the caller must
    copy it) at the start and after every round; ``halt`` (a :class:`threading.Event`),
    when set, ends the search between rounds."""
    t_start = time.perf_counter()
    t0 = t_start if t0 is None else t0
    sign = 1.0 if sense == "min" else -1.0
    cost = sign * inst.cost
    weight = inst.weight
    cap = inst.capacity
    n = inst.n
    if not assign_all:  # a dummy agent (index m) that takes anything at no cost
        cost = np.vstack([cost, np.zeros((1, n))])
        weight = np.vstack([weight, np.zeros((1, n), dtype=np.int64)])
        cap = np.concatenate([cap, [0]]).astype(np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    weight = np.ascontiguousarray(weight, dtype=np.int64)
    cap = np.ascontiguousarray(cap, dtype=np.int64)
    m_all = cost.shape[0]
    integral = inst.integral_cost
    trajectory: list = []

    def now() -> float:
        return time.perf_counter() - t0

    def out_of_time() -> bool:
        if halt is not None and halt.is_set():
            return True
        return deadline is not None and time.perf_counter() >= deadline

    # the Lagrangian relaxation of the capacities (every item must fit some agent)
    lag = None
    sub_done = 0
    lam = np.zeros(m_all)
    best_lam = np.zeros(m_all)
    x_lag = np.zeros(n, dtype=np.int64)
    l_dstate = np.zeros(3)
    l_istate = np.zeros(1, dtype=np.int64)
    can_lag = n > 0 and bool(np.all((weight <= cap[:, None]).any(axis=0)))

    def lag_steps(k: int, target: float) -> None:
        nonlocal lag, sub_done
        sub_done += _gapls.subgradient(cost, weight, cap, lam, best_lam, x_lag, l_dstate,
                                       l_istate, k, target)  # fmt: skip
        if not math.isfinite(float(l_dstate[0])):  # overflowed multipliers: no bound
            return
        value = sign * _integral_bound(float(l_dstate[0]), "min", integral)
        if lag is None or (value > lag if sense == "min" else value < lag):
            lag = value

    def best_bound():
        known = [v for v in (lp_bound, lag) if v is not None]
        if not known:
            return None
        return max(known) if sense == "min" else min(known)

    # the knapsack Lagrangian: a tighter bound (the knapsacks keep their integrality)
    k_done = 0
    cells = n * int((cap + 1).sum()) if n else 0
    knap_open = (can_lag and cells <= _KNAP_STEP_CELLS
                 and n * (int(cap.max()) + 1) <= _KNAP_TABLE_BYTES)  # fmt: skip
    u = np.zeros(n)
    best_u = np.zeros(n)
    cover = np.zeros(n, dtype=np.int64)
    k_dstate = np.zeros(3)
    k_istate = np.zeros(1, dtype=np.int64)
    k_round = max(1, _KNAP_ROUND_CELLS // max(cells, 1))

    k_time = 0.0

    def knap_steps(k: int, target: float) -> bool:
        """``k`` knapsack steps; False when they ended early (a zero subgradient)."""
        nonlocal lag, k_done, k_time
        t_k = time.perf_counter()
        got = _gapls.knapsack_lagrangian(cost, weight, cap, u, best_u, cover, k_dstate,
                                         k_istate, k, target)  # fmt: skip
        k_time += time.perf_counter() - t_k
        k_done += got
        if not math.isfinite(float(k_dstate[0])):  # overflowed multipliers: no bound
            return False
        value = sign * _integral_bound(float(k_dstate[0]), "min", integral)
        if lag is None or (value > lag if sense == "min" else value < lag):
            lag = value
        return got == k and bool(np.all(np.isfinite(u)))

    lag_open = can_lag  # False once a zero subgradient ends the subgradient steps
    if can_lag:
        while sub_done < _LAGR_START and not out_of_time():
            k = min(25, _LAGR_START - sub_done)
            before = sub_done
            lag_steps(k, -1e300)
            if sub_done - before < k:
                lag_open = False
                break
    if knap_open:  # from the capacity multipliers: L(u) >= their Lagrangian bound
        fit = weight <= cap[:, None]
        u[:] = np.where(fit, cost + best_lam[:, None] * weight, np.inf).min(axis=0)
        # the capacity multipliers grow without bound where the capacities cannot be met
        knap_open = bool(np.all(np.abs(u) < 1e15))
    trajectory.append((now(), None, best_bound()))
    if x_lp is not None and n:
        # every item to the agent with the largest LP share (the dummy agent when the LP
        # leaves more than half of it unassigned)
        start = np.argmax(x_lp, axis=0).astype(np.int64)
        if not assign_all:
            start[x_lp.sum(axis=0) < 0.5] = inst.m
    else:  # the multipliers' greedy (on the costs alone when no step ran), then a descent
        start = _reduced_cost_greedy(cost, weight, cap, best_lam)
        _gapls.shift_descent(cost, weight, cap, start, 50)
    if iterations is None:
        iterations = max(3000, 15 * n) if deadline is None else MAX_ITERATIONS
    rng = np.array([kernel_seed(seed)], dtype=np.uint64)
    done = 0
    feasible = False
    best_obj = None
    incumbent = np.ascontiguousarray(start, dtype=np.int64)  # the best assignment so far
    knobs = [_TENURE, _restart(n), _SWAP_ITEMS, _GROWTH, _SHAKE, _PER_AGENT, _CHAIN]
    a0 = (float(np.abs(cost).sum()) + 1.0) / (float(weight.sum()) + 1.0)  # as the kernel sets it
    t_search = time.perf_counter()
    proven = False

    def search(
        phase_cost: np.ndarray, until: Optional[float], cap_it: int, from_best: bool
    ) -> None:
        """A fresh tabu search on ``phase_cost`` from ``start`` (from the incumbent when
        ``from_best`` and one is feasible), in rounds, until ``until`` (a clock value) or
        ``cap_it`` iterations in all; its best feasible assignments (judged on the true
        costs) update the incumbent."""
        nonlocal done, feasible, best_obj, incumbent, proven
        assign = np.array(incumbent if from_best and feasible else start, dtype=np.int64)
        best = assign.copy()
        alpha = np.zeros(m_all)
        tabu = np.zeros(m_all * n, dtype=np.int64)
        istate = np.zeros(6, dtype=np.int64)
        dstate = np.zeros(3)
        rate = None  # tabu iterations per second, measured
        # set the state up (feasible or not: the start's excess); one agent: nothing to do
        _gapls.tabu_search(phase_cost, weight, cap, assign, best, alpha, tabu, istate, dstate,
                           rng, 0, *knobs)  # fmt: skip
        alpha[:] = a0  # the weights of the true costs (the core's far costs would inflate them)
        dstate[2] = a0

        def take() -> None:  # the kernel's best, judged on the true costs
            nonlocal feasible, best_obj, incumbent
            if istate[4]:
                obj = _objective_of(inst, best, assign_all)
                if not feasible or (obj < best_obj if sense == "min" else obj > best_obj):
                    feasible, best_obj, incumbent = True, obj, best.copy()
                    trajectory.append((now(), obj, best_bound()))
            elif not feasible:  # none feasible yet: the least excess
                incumbent = best.copy()

        take()
        if on_round is not None:
            on_round(incumbent, feasible)
        while done < cap_it and n and m_all > 1:
            if halt is not None and halt.is_set():
                break
            if until is None:
                k = min(_ROUND_ITERATIONS, cap_it - done)
            else:
                left = until - time.perf_counter()
                if left <= 0:
                    break
                k = 20 if rate is None else max(1, int(rate * min(_ROUND_SECONDS, 0.5 * left)))
                k = min(k, cap_it - done)
            k = min(k, _RESTART_STEP - done % _RESTART_STEP)  # one restart rule a round
            knobs[1] = _restart(n, done)
            t1 = time.perf_counter()
            got = _gapls.tabu_search(phase_cost, weight, cap, assign, best, alpha, tabu, istate,
                                     dstate, rng, k, *knobs)  # fmt: skip
            spent = time.perf_counter() - t1
            done += got
            if got:
                rate = got / max(spent, 1e-6)
            take()
            if on_round is not None:
                on_round(incumbent, feasible)
            bound_steps()
            b = best_bound()
            if feasible and b is not None and (b >= best_obj if sense == "min" else b <= best_obj):
                proven = True  # proven optimal
                break
            if until is not None and time.perf_counter() >= until:
                break
            interrupt.check()  # a batch's timeout or cancellation, between two rounds

    def bound_steps() -> None:
        """A few subgradient and knapsack-Lagrangian steps between two rounds."""
        nonlocal lag_open, knap_open
        if lag_open and l_dstate[1] > 1e-6 and not out_of_time():
            before, k_sub = best_bound(), sub_done
            target = sign * best_obj if feasible else -1e300
            lag_steps(_LAGR_ROUND, target)
            lag_open = sub_done - k_sub == _LAGR_ROUND
            if best_bound() != before:
                trajectory.append((now(), best_obj, best_bound()))
        knap_due = deadline is None or k_time <= _KNAP_SHARE * (time.perf_counter() - t_search)
        if (
            knap_open
            and knap_due
            and (k_dstate[2] == 0 or k_dstate[1] > 1e-6)
            and not out_of_time()
        ):
            before = best_bound()
            knap_open = knap_steps(k_round, sign * best_obj if feasible else -1e300)
            if best_bound() != before:
                trajectory.append((now(), best_obj, best_bound()))

    core = _core_costs(cost, x_lp, rc, assign_all, inst.m) if n and m_all > 1 else None
    # (costs, end as a share of the search's time or iterations, start from the incumbent)
    phases = [(cost, 1.0, False)]
    if core is not None:
        phases = [(core, _CORE_SHARE, False), (cost, _CORE_SHARE + 0.5 * (1.0 - _CORE_SHARE), True),
                  (cost, 1.0, False)]  # fmt: skip
    core_done = 0
    for phase_cost, end, from_best in phases:
        if proven or (halt is not None and halt.is_set()):
            break
        last = end >= 1.0
        until = deadline if last or deadline is None else t_search + end * (deadline - t_search)
        cap_it = iterations if last or deadline is not None else int(end * iterations)
        search(phase_cost, until, cap_it, from_best)  # out of time: the start is judged
        if phase_cost is core:
            core_done = done
    best = incumbent
    out = best.copy()
    if not assign_all:
        out[out == inst.m] = -1
    if not n:
        feasible = True
    halted = halt is not None and halt.is_set()
    stopped = bool(deadline is not None and not proven and not halted
                   and time.perf_counter() >= deadline)  # fmt: skip
    return _Heur(
        out,
        feasible,
        done,
        lag,
        sub_done,
        trajectory,
        time.perf_counter() - t_search,
        best_bound(),
        k_done,
        core_done,
        stopped,
    )


def _objective_of(inst: GapInstance, assign: np.ndarray, assign_all: bool) -> float:
    """The objective of the kernel's assignment (the dummy agent ``m``: unassigned)."""
    if assign_all:
        return float(inst.cost[assign, np.arange(inst.n)].sum())
    on = assign < inst.m
    return float(inst.cost[assign[on], np.flatnonzero(on)].sum())


#: Seconds per (agent, item) pair that the LP relaxation is budgeted (HiGHS through SciPy,
#: which cannot be interrupted: 80 x 1600 took 2.8 s on a loaded two-core machine). Under
#: heavier load it took the whole 10 s limit, so HiGHS is also stopped at the share itself.
_LP_SECONDS_PER_PAIR = 2.5e-5
#: The seconds the LP's budget counts for importing SciPy's optimiser when a process has
#: not imported it yet (0.35 s on an idle machine; a time limit of 0.05 s on a first call
#: ran 0.2 s past it before this was counted).
_LP_IMPORT_SECONDS = 0.5
#: The share of a heuristic's time limit the LP's budget may take (else the search starts
#: from the Lagrangian multipliers' greedy start).
_LP_SHARE = 0.4


def _reduced_cost_greedy(
    cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, lam: np.ndarray
) -> np.ndarray:
    """A start from the Lagrangian multipliers: reduced costs ``c_ij + lam_i w_ij``; the
    items in decreasing regret (second least reduced cost minus the least), each to the
    agent of least reduced cost among those it still fits, else to the one with the most
    room left (the search repairs it). O(n m) in all."""
    m, n = cost.shape
    red = cost + lam[:, None] * weight
    if m > 1:
        two = np.partition(red, 1, axis=0)[:2]
        regret = two[1] - two[0]
    else:
        regret = np.zeros(n)
    order = np.argsort(-regret, kind="stable")
    rem = cap.astype(np.int64).copy()
    assign = np.empty(n, dtype=np.int64)
    for j in order.tolist():
        col = np.where(weight[:, j] <= rem, red[:, j], np.inf)
        i = int(np.argmin(col))
        if not np.isfinite(col[i]):
            i = int(np.argmax(rem - weight[:, j]))
        assign[j] = i
        rem[i] -= weight[i, j]
    return assign


class _OutOfTime(Exception):
    """The time limit ran out while the CP-SAT model was built."""


def _run_cpsat_gap(pkg, inst, sense, assign_all, ii, jj, heur, limit, threads, seed, t0,
                   costs, unit):  # fmt: skip
    """Build the CP-SAT model of the GAP (looking at the clock every 4096 variables or
    rows: :class:`_OutOfTime` past the limit) and solve it; the limit counts from ``t0``.
    ``costs`` are the integer costs of the pairs ``(ii, jj)``, in units of ``unit``
    (:func:`integer_scaling`)."""
    deadline = _deadline(limit, t0)

    def on_time(k: int) -> None:
        if k % 4096 == 0:
            interrupt.check()
            if deadline is not None and time.perf_counter() > deadline:
                raise _OutOfTime

    m, n = inst.m, inst.n
    model = pkg.CpModel()
    xs = []
    for k, (i, j) in enumerate(zip(ii.tolist(), jj.tolist())):
        on_time(k)
        xs.append(model.NewBoolVar(f"x{i}_{j}"))
    by_item: List[list] = [[] for _ in range(n)]
    by_agent: List[list] = [[] for _ in range(m)]
    for k, (i, j) in enumerate(zip(ii.tolist(), jj.tolist())):
        by_item[j].append(k)
        by_agent[i].append(k)
    for j in range(n):
        on_time(j)
        terms = [xs[k] for k in by_item[j]]
        if assign_all:
            model.AddExactlyOne(terms)
        elif terms:
            model.AddAtMostOne(terms)
    weights = inst.weight[ii, jj].tolist()
    for i in range(m):
        on_time(0)
        if by_agent[i]:
            ks = by_agent[i]
            model.Add(pkg.LinearExpr.WeightedSum([xs[k] for k in ks], [weights[k] for k in ks])
                      <= int(inst.capacity[i]))  # fmt: skip
    obj = pkg.LinearExpr.WeightedSum(xs, [int(z) for z in costs.tolist()])
    on_time(0)
    if sense == "min":
        model.Minimize(obj)
    else:
        model.Maximize(obj)
    if heur is not None and heur[1]:  # the hint in one step (AddHint per variable: seconds)
        hint = model.Proto().solution_hint
        hint.vars.extend([x.Index() for x in xs])
        hint.values.extend((heur[0][jj] == ii).astype(np.int64).tolist())
    return run_cpsat(pkg, model, xs, rows=n + m, time_limit=limit, threads=threads, seed=seed,
                     started=t0,  # the limit counts from the call (hint, import, model)
                     check=lambda x: _check(inst, assign_all, ii, jj, x),
                     objective_scale=unit)  # fmt: skip


def _check(inst, assign_all, ii, jj, x) -> float:
    """The runner's check of a solver's ``x`` (one per pair ``(ii, jj)``) on the original
    data: at most one agent per item (exactly one with ``assign_all``), capacities kept, as
    :func:`verify_gap` sees them; returns the objective it recomputes."""
    chosen = np.flatnonzero(np.asarray(x) > 0.5)
    per_item = np.bincount(jj[chosen], minlength=inst.n)
    if np.any(per_item > 1):
        j = int(np.flatnonzero(per_item > 1)[0])
        raise Rejected(f"item {j} is assigned to {int(per_item[j])} agents")
    assign = np.full(inst.n, -1, dtype=np.int64)
    assign[jj[chosen]] = ii[chosen]
    report = verify_gap(inst, assign, assign_all=assign_all)
    if not report.feasible:
        raise Rejected("; ".join(report.problems[:3]))
    return report.objective


def _solver_outcome(inst, sense, assign_all, limit, seed, solver, threads, hint_assign, t0):
    """Run the integer-programming solver on the GAP: ``(outcome, solver used, seconds)``.

    ``limit`` counts from ``t0`` (the import, the model building and the solve); the
    solver starts from ``hint_assign`` (a feasible assignment) when given."""
    t1 = time.perf_counter()
    m, n = inst.m, inst.n
    fits = inst.weight <= inst.capacity[:, None]
    ii, jj = np.nonzero(fits)
    scaled = None
    if solver == "cpsat":  # CP-SAT takes integers: the costs as integers times a unit
        scaled = integer_scaling(inst.cost[ii, jj])
        if scaled is None:
            solver = "highs"
    pkg = import_solver(solver)
    heur = None if hint_assign is None else (hint_assign, True)
    if solver == "cpsat":
        try:
            out = _run_cpsat_gap(pkg, inst, sense, assign_all, ii, jj, heur, limit, threads,
                                 seed, t0, scaled[0], scaled[1])  # fmt: skip
        except _OutOfTime:
            out = MilpOutcome(
                x=None, bound=None, status="time_limit", solver_status=-1,
                message="CP-SAT: not started, the time limit ran out while its model was "
                "built; no solution found", nodes=0, time_limit_hit=True, infeasible=False,
                rows=n + m, time_limit=limit,
            )  # fmt: skip
    else:
        from scipy.sparse import coo_matrix, vstack

        k = ii.shape[0]
        a_cap = coo_matrix((inst.weight[ii, jj].astype(float), (ii, np.arange(k))), shape=(m, k))
        a_one = coo_matrix((np.ones(k), (jj, np.arange(k))), shape=(n, k))
        A = vstack([a_cap, a_one]).tocsr()
        lo = np.concatenate([np.full(m, -np.inf), np.ones(n) if assign_all else np.zeros(n)])
        hi = np.concatenate([inst.capacity.astype(float), np.ones(n)])
        start = None
        if hint_assign is not None:  # HiGHS starts from the heuristic's assignment
            start = (hint_assign[jj] == ii).astype(np.float64)
        out = run_milp(solver, pkg, inst.cost[ii, jj], A, lo, hi, integrality=np.ones(k),
                       sense=sense, time_limit=limit, threads=threads, seed=seed,
                       started=t0, check=lambda x: _check(inst, assign_all, ii, jj, x),
                       start=start)  # fmt: skip
    out.assignment = None
    if out.x is not None:
        assign = np.full(n, -1, dtype=np.int64)
        chosen = np.flatnonzero(out.x > 0.5)
        assign[jj[chosen]] = ii[chosen]
        out.assignment = assign
    return out, solver, time.perf_counter() - t1


class _SolverThread(threading.Thread):
    """The solver beside the heuristic: :func:`_solver_outcome` in its own thread, under
    its own cancellation scope (cancelled: the solver stops, or never starts); ``halt`` is
    set when it ends with a proof (optimal or infeasible), so that the heuristic stops."""

    def __init__(self, args: tuple, halt: threading.Event) -> None:
        super().__init__(name="coalloc-gap-solver", daemon=True)
        self.args = args
        self.halt = halt
        self.scope = interrupt.Scope()
        self.outcome: Any = None
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            with self.scope:
                self.outcome = _solver_outcome(*self.args)
            if self.outcome[0].status in ("optimal", "infeasible"):
                self.halt.set()
        except BaseException as exc:  # noqa: BLE001 - cancelled, or the solver failed
            self.error = exc


def _solve_exact(inst, sense, assign_all, limit, seed, solver, threads, iterations, hint,
                 params, t0) -> GapResult:  # fmt: skip
    """The exact method: the heuristic and the solver, the better answer of the two.

    Without a limit: the heuristic (its default iterations), then the solver from its
    assignment. With one: the heuristic for the whole limit, and from ``HINT_SHARE`` of
    it the solver beside it in a thread (the heuristic's best assignment as its start);
    the solver gets the limit less ``_SOLVER_MARGIN`` (its own overrun: stopping, reading
    the solution back), and a thread still busy at the limit (an import that cannot be
    interrupted) is left to end by itself, its answer unused."""
    params = {**params, "solver": solver, "threads": threads}
    heur = None
    t_hint = 0.0
    if limit is None:
        if hint:
            heur = settle(_solve_heuristic(inst, sense, assign_all, None, seed, iterations,
                                           True, params, t0))  # fmt: skip
            t_hint = time.perf_counter() - t0
        if heur is not None and heur.status in ("optimal", "infeasible"):
            out = None  # proven by the heuristic's bound or its proof
        else:
            h = None if heur is None or heur.assignment is None else heur.assignment
            out = _solver_outcome(inst, sense, assign_all, None, seed, solver, threads, h, t0)
        return _combine(inst, sense, assign_all, limit, seed, out, heur, params, t0, t_hint)
    grace = max(0.05, 0.05 * limit)
    solver_limit = max(limit - _SOLVER_MARGIN * grace, 1e-3)
    start_at = t0 + (HINT_SHARE * limit if hint else 0.0)
    halt = threading.Event()
    worker: list = []

    def start(assignment: Optional[np.ndarray]) -> None:
        args = (inst, sense, assign_all, solver_limit, seed, solver, threads,
                None if assignment is None else assignment.copy(), t0)  # fmt: skip
        worker.append(_SolverThread(args, halt))
        worker[0].start()

    pairs = int(np.count_nonzero(inst.weight <= inst.capacity[:, None]))
    need = _SOLVER_SECONDS_PER_PAIR * pairs
    if solver == "cpsat" and "ortools.sat.python.cp_model" not in sys.modules:
        need += _SOLVER_IMPORT_SECONDS
    skipped: list = []

    def fits_in_time() -> bool:
        """Whether the solver's import and model (a rule of the instance's size) fit
        ``_SOLVER_FIT`` of the time it would have; else it is not started at all."""
        left = t0 + solver_limit - time.perf_counter()
        return need <= _SOLVER_FIT * left

    def on_round(assignment: np.ndarray, feasible: bool) -> None:
        if not worker and not skipped and time.perf_counter() >= start_at:
            if fits_in_time():
                start(assignment if feasible else None)
            else:
                skipped.append(True)

    if not hint:
        start(None)
    try:
        if hint:
            heur = settle(_solve_heuristic(inst, sense, assign_all, limit, seed, iterations,
                                           True, params, t0, on_round, halt))  # fmt: skip
            t_hint = time.perf_counter() - t0
            proven = heur.status in ("optimal", "infeasible") and not halt.is_set()
            if not worker and not skipped and not proven and fits_in_time():
                # the heuristic ended by itself (its iterations) before the solver's start
                start(heur.assignment)
        out = None
        if worker:
            thread = worker[0]
            own_proof = heur is not None and heur.status in ("optimal", "infeasible")
            if own_proof and not halt.is_set():  # the solver has nothing left to do
                thread.scope.cancel()
            thread.join(max(0.0, t0 + limit + 0.5 * grace - time.perf_counter()))
            if thread.is_alive():  # past the limit: stop it, wait a little more
                thread.scope.cancel()
                thread.join(max(0.0, t0 + limit + 0.8 * grace - time.perf_counter()))
            if not thread.is_alive() and thread.outcome is not None:
                out = thread.outcome
    finally:
        if worker and worker[0].is_alive():  # cancelled from outside, or left behind
            worker[0].scope.cancel()
    res = _combine(inst, sense, assign_all, limit, seed, out, heur, params, t0, t_hint)
    if not worker:
        res.message += (f"; the solver was not started: its import and model ({pairs} pairs, "
                        f"about {need:.2g} s) would not fit the time left")  # fmt: skip
    res.iterations["solver_started"] = int(bool(worker))
    return res


#: The timed exact method starts its solver only when the solver's import (when not yet
#: imported) and model building, estimated from the instance's size, take at most
#: ``_SOLVER_FIT`` of the time the solver would have: on 80 x 1600 (128,000 pairs) the
#: CP-SAT model took 7 s to build on a loaded two-core machine (21 us per variable), time
#: the heuristic beside it uses better.
_SOLVER_SECONDS_PER_PAIR, _SOLVER_IMPORT_SECONDS, _SOLVER_FIT = 4e-5, 0.5, 0.5
#: The share of the overrun allowance (``max(0.05 s, 0.05 T)``) kept back from the solver's
#: time limit for its own overrun (stopping, reading the solution back, the check).
_SOLVER_MARGIN = 0.5


def _combine(inst, sense, assign_all, limit, seed, out, heur, params, t0, t_hint) -> GapResult:
    """The exact method's result: the solver's outcome ``out`` (``(outcome, solver,
    seconds)`` or None: not run, or not done by the limit) and the heuristic's result
    ``heur`` (or None), the better assignment of the two, the tighter valid bound."""
    fits = inst.weight <= inst.capacity[:, None]
    assign = obj = bound = None
    t_solve = 0.0
    nodes = 0
    if out is not None:
        outcome, used, t_solve = out
        params = {**params, "solver": used}
        status, message, bound = outcome.status, outcome.message, outcome.bound
        nodes = int(outcome.nodes or 0)
        if outcome.assignment is not None:
            assign = outcome.assignment
            obj = _objective(inst, assign)
        if status == "optimal" and obj is not None:
            bound = obj
        elif status == "infeasible" or (assign_all and not np.all(fits.any(axis=0))):
            status, assign, obj, bound = "infeasible", None, None, None
    elif heur is not None:  # the heuristic's answer alone
        status, assign, obj, bound = heur.status, heur.assignment, heur.objective, heur.bound
        message = f"the heuristic's answer ({heur.message})"
        if heur.status not in ("optimal", "infeasible"):
            message += "; the solver did not end by the time limit"
    else:
        status, message = "time_limit", "the solver did not end by the time limit"
    if out is not None and heur is not None and heur.assignment is not None:
        # never worse than the heuristic
        status, assign, obj, bound, message = _not_worse(
            inst, sense, assign_all, heur.assignment, status, assign, obj, bound, message
        )
    if out is not None and heur is not None and heur.status == "infeasible" and assign is None:
        status, message = "infeasible", message + f"; {heur.message}"
    if heur is not None and heur.bound is not None and obj is not None and status != "optimal":
        # the heuristic's LP or Lagrangian bound, if tighter
        hb = heur.bound
        if bound is None or (hb > bound if sense == "min" else hb < bound):
            bound = hb
            message += "; bound: the heuristic's LP or Lagrangian relaxation"
    if limit is not None and status in ("feasible", "no_solution"):
        status = "time_limit"  # the limit ended the exact method before a proof
    gap = relative_gap(obj, bound, sense=sense)
    return GapResult(status=status, message=message, method="exact", assignment=assign,
                     objective=obj, bound=bound, gap=gap, sense=sense, assign_all=assign_all,
                     seed=seed, params=params,
                     timings={"hint": t_hint, "solve": t_solve,
                              "total": time.perf_counter() - t0},
                     iterations={"nodes": nodes, "hint_tabu_iterations":
                                 int(heur.iterations.get("tabu_iterations", 0))
                                 if heur is not None else 0})  # fmt: skip


def _not_worse(inst, sense, assign_all, h_assign, status, assign, obj, bound, message):
    """The heuristic's assignment in place of the solver's when the solver ended with none or
    a worse one (stopped by the time limit, or an answer the check refused); a solver's
    "optimal" or "infeasible" that the heuristic's assignment contradicts loses its proof."""
    rep = verify_gap(inst, h_assign, assign_all=assign_all)
    if not rep.feasible:
        return status, assign, obj, bound, message
    h_obj = rep.objective
    slack = 1e-9 * max(abs(h_obj), abs(obj) if obj is not None else 0.0)
    better = obj is None or (h_obj < obj - slack if sense == "min" else h_obj > obj + slack)
    if not better:
        return status, assign, obj, bound, message
    if status in ("optimal", "infeasible", "error"):
        message += (f"; the solver's answer ({status}) is contradicted by the heuristic's "
                    f"assignment (objective {h_obj:.17g}), kept without a bound")  # fmt: skip
        return "feasible", h_assign.copy(), h_obj, None, message
    if bound is not None and (bound > h_obj + slack if sense == "min" else bound < h_obj - slack):
        bound = None  # not a bound of this assignment
    message += f"; the heuristic's assignment it started from (objective {h_obj:.17g}) is kept"
    return status, h_assign.copy(), h_obj, bound, message


def generate_gap(kind: str, m: int, n: int, *, seed: Optional[int] = 0) -> GapInstance:
    """A GAP instance of Chu & Beasley's type A, B, C or D (minimisation).

    * A: ``w ~ U[5, 25]``, ``c ~ U[10, 50]``, ``b_i = 9 n / m + 0.4 max_i sum_{j: I_j = i}
      w_ij`` where ``I_j`` is the cheapest agent of item ``j``;
    * B: as A with 70 % of A's capacity;
    * C: as A with ``b_i = 0.8 sum_j w_ij / m``;
    * D: ``w ~ U[1, 100]``, ``c = 111 - w + U[-10, 10]``, ``b_i = 0.8 sum_j w_ij / m``.

    Parameters
    ----------
    kind : {"a", "b", "c", "d"}
    m, n : int
        Agents and items.
    seed : int, optional

    Returns
    -------
    GapInstance

    Examples
    --------
    >>> from coalloc.loadshare import generate_gap
    >>> int(generate_gap("d", 5, 100, seed=1).weight.max()) <= 100
    True
    """
    kind = choice(str(kind).lower() if isinstance(kind, str) else kind, GAP_TYPES, "kind")
    m = integer(m, "m", 1)
    n = integer(n, "n", 1)
    check_memory(40.0 * m * n, f"a GAP instance of {m} x {n}")
    rng = np.random.default_rng(check_seed(seed))
    if kind == "d":
        w = rng.integers(1, 101, size=(m, n))
        c = 111 - w + rng.integers(-10, 11, size=(m, n))
        b = np.floor(0.8 * w.sum(axis=1) / m)
    else:
        w = rng.integers(5, 26, size=(m, n))
        c = rng.integers(10, 51, size=(m, n))
        if kind == "c":
            b = np.floor(0.8 * w.sum(axis=1) / m)
        else:
            cheapest = np.argmin(c, axis=0)
            per = np.array([w[i, cheapest == i].sum() for i in range(m)])
            b = np.full(m, np.floor(9 * n / m + 0.4 * per.max()))
            if kind == "b":
                b = np.floor(0.7 * b)
    return GapInstance(c, w, b.astype(np.int64), name=f"{kind}{m:02d}{n}-{seed}")
