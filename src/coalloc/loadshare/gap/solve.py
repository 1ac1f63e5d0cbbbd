"""The GAP's front door: :func:`solve_gap` checks a call once and runs its method."""

from __future__ import annotations

import importlib.util
import time
from typing import Optional

from ..._shared.constraints import checked
from ..._shared.family import renamed_keyword
from ..._shared.params import choice
from ..._shared.result import settle
from ..._shared.seeding import resolve_seed
from ..result import GapResult
from . import exact as _exact
from .exact import PORTFOLIO_PAIRS, solve_exact, solve_portfolio
from .heuristic import solve_heuristic
from .model import GapCall, GapInstance

__all__ = ["solve_gap"]


# "portfolio", "heuristic" and "exact" share one table
@checked("coalloc.loadshare.constraints", "portfolio", tables="GAP_PARAMS")
def solve_gap(
    instance: GapInstance,
    method: str = "portfolio",
    *,
    sense: Optional[str] = None,
    assign_all: bool = True,
    time_limit: Optional[float] = None,
    seed: Optional[int] = 0,
    solver: str = "cpsat",
    threads: int = 1,
    iterations: Optional[int] = None,
    with_bound: bool = True,
    hint: bool = True,
    relink: bool = False,
    cycles: int = 0,
) -> GapResult:
    """Solve a GAP instance exactly or heuristically.

    Parameters
    ----------
    instance : GapInstance
    method : {"portfolio", "heuristic", "exact"}, default "portfolio"
        ``"portfolio"`` (the default): the best of the package at the call's budget, on a
        small instance the heuristic with CP-SAT beside it or after it (see ``time_limit``),
        on a larger one (or with ``with_bound=False``, or without OR-Tools) the heuristic
        alone; ``"heuristic"``: the heuristic alone, always; ``"exact"``: the solver, with
        the heuristic's help (``hint``).
    sense : {"min", "max"}, optional
        Minimise cost or maximise profit. None (the default): the sense the instance states
        (:attr:`GapInstance.sense`, from its file), else ``"min"``.
    assign_all : bool, default True
        Every item must be assigned; False lets items stay unassigned (``-1``, no cost).
    time_limit : float, optional
        Seconds for the whole call, from its entry. Heuristic: the search runs in rounds of
        about 0.1 s and stops at the limit with the best assignment so far (it uses the
        whole limit unless ``iterations`` ends it first or the bound proves the assignment
        optimal); the LP relaxation, which cannot be interrupted, is solved only when its
        budget (2.5e-5 s per pair) fits 0.4 of the limit. Exact: the heuristic runs for the
        whole limit exactly as the heuristic method would, and from a quarter of the limit
        on (``HINT_SHARE``; at most 2.5 s, ``HINT_MAX_SECONDS``, into a longer limit) the
        solver runs beside it in a second thread, started from the
        heuristic's best assignment at that moment (importing the solver and building its
        model count); the better answer of the two is returned, so the exact method at a
        limit is never worse than the heuristic at that limit, and a proof from either
        (the solver's optimum or infeasibility, the heuristic's bound) ends both.
        The default (``"portfolio"``) on a small instance (at most ``PORTFOLIO_PAIRS``, 2000,
        agent x item pairs) with a limit and ``with_bound`` (and OR-Tools installed) runs as
        the exact method, with CP-SAT started first, at the call's start and without a
        hint, for limits of 0.5 s or more (``PORTFOLIO_COLD``; below, from the
        heuristic's first feasible assignment on at most ``PORTFOLIO_EARLY_PAIRS``, 200,
        pairs, and not at all on more: the heuristic alone), the heuristic beside it for
        the whole limit, the better answer and the tighter bound kept, with ``params["portfolio"]``
        True, so that at a limit it is never worse than ``exact`` at that limit. Untimed,
        on the same small instances:
        the heuristic, then CP-SAT from its assignment (unless the heuristic proved it)
        with one worker, the seed and a work cap counted, not clocked (``UNTIMED_WORK``
        = 0.25 of CP-SAT's deterministic seconds, ``params["work_limit"]``), so that the
        answer and the bound are the same on any machine and load. Larger instances run
        as the timed exact method under a limit of at least ``PORTFOLIO_LARGE_FROM``
        (2 s) and ``PORTFOLIO_LARGE_PER_PAIR`` (5e-4 s) a pair, 4.5 s on 9,000 pairs
        (CP-SAT from the search's best at a quarter of the limit, when its model fits the
        time; ``params["portfolio"]`` True), the heuristic alone otherwise.
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
    relink : bool, default False
        Heuristic (and the exact method's heuristic), under a time limit only: path
        relinking (Yagiura, Ibaraki & Glover 2006) takes the fresh search's time, from
        half of the search's time on, when the measured speed leaves at least four tabu
        segments of ``max(1000, 5 n)`` iterations, each started part way between two of
        the six best distinct assignments found; else the search runs as without it.
        Untimed calls never relink. Off by default: at 5 s (three seeds) on Chu-Beasley
        d and Yagiura e instances of 100-200 items it measured no gain (0.416 % mean of
        the median gaps against 0.407 % without), and at that speed it does not fit on
        n >= 400 (``bench/loadshare/ISSUE40.md``, item 4).
        ``iterations["relink_segments"]`` counts the segments run.
    cycles : int, default 0
        Heuristic (and the exact method's heuristic), when the LP relaxation is solved
        (its core exists): the second half of the search (of its time, or of its
        iterations without a limit), where the search on every pair afresh from the
        rounded LP runs by default, goes to ``cycles`` cycles of equal length, each a
        search on a core afresh from the rounded LP for 40 % of it (cut at the 5th
        percentile of the positive reduced costs, then the 20th, alternating), then on
        every pair from that search's best; at most ``MAX_CYCLES`` (64). With ``relink``,
        the cycles take the time and no relinking runs. 0 (the default) leaves the
        choice to the search: untimed calls run no cycles; timed calls run two beside the
        search afresh (``search._AUTO_CYCLES``: the core phase to 30 % of the search's
        time, the search from its best to 50 %, two cycles to 80 %, the search afresh to
        the end), which lowered Yagiura's worst 10 s gap (d40400 0.456 to 0.419-0.435 %)
        and was never worse on the 1 s means (``bench/loadshare/ISSUE40.md``, h42gap40).
        ``iterations["core_cycles"]`` counts the cycles begun.

    Returns
    -------
    GapResult
        ``status`` (the one rule of :mod:`coalloc._shared.result`): ``optimal`` when the
        objective meets a proven bound (the solver's, the heuristic's LP or Lagrangian
        bound, or on small instances its exact programme over the agents' loads),
        ``feasible`` for an assignment without that proof from a method that ended
        by itself, ``time_limit`` when the limit ended the method (with the best
        assignment found, when there is one: ``has_solution``), ``infeasible`` only with a
        proof (the solver's, the LP relaxation's with its Farkas certificate checked against
        the instance, said at once without a search, an item that fits no agent, or the
        count bound: the most items each agent can hold, its lightest ones, sum to fewer
        than the items, or on instances of at most 400 agent-item pairs the heuristic's
        exact programme over the agents' loads), ``no_solution`` when the heuristic ended
        by itself without an assignment or a proof, ``error``.

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
    choice(method, ("portfolio", "heuristic", "exact"), "method")
    if sense is None:
        sense = instance.sense or "min"
    # the values were checked by the table (@checked); these only fix their types
    limit = None if time_limit is None else float(time_limit)
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    threads = int(threads)
    iterations = None if iterations is None else int(iterations)
    assign_all = bool(assign_all)
    relink = bool(relink)
    cycles = int(cycles)
    params = {"sense": sense, "assign_all": assign_all, "time_limit": limit, "relink": relink}
    if cycles:  # recorded when asked for (the default's params, and digests, stay as they were)
        params["cycles"] = cycles
    call = GapCall(instance, sense, assign_all, limit, seed, params, t0, relink, cycles)
    if method == "exact":
        res = solve_exact(call, solver, threads, iterations, hint)
    elif method == "portfolio" and with_bound and _portfolio_fits(instance, limit) and _has_cpsat():
        res = solve_portfolio(call, iterations)  # the solver beside it (or after it)
    else:
        res = solve_heuristic(call, iterations, with_bound)
        res.method = method  # "portfolio" past its size: the heuristic alone, named as asked
    return settle(res)


def _portfolio_fits(instance: GapInstance, limit: Optional[float]) -> bool:
    """Whether the default runs its portfolio (a solver beside or after the search): on a
    small instance (``PORTFOLIO_PAIRS``), or under a limit of at least
    ``PORTFOLIO_LARGE_FROM`` seconds and ``PORTFOLIO_LARGE_PER_PAIR`` seconds a pair; else
    the heuristic alone."""
    if instance.m * instance.n <= PORTFOLIO_PAIRS:
        return True
    large_from = _exact.PORTFOLIO_LARGE_FROM
    if limit is None or large_from is None:
        return False
    return limit >= max(large_from, _exact.PORTFOLIO_LARGE_PER_PAIR * instance.m * instance.n)


def _has_cpsat() -> bool:
    """Whether OR-Tools is installed (the default's portfolio needs CP-SAT; without it the
    heuristic runs alone)."""
    global _CPSAT
    if _CPSAT is None:
        _CPSAT = importlib.util.find_spec("ortools") is not None
    return _CPSAT


_CPSAT: Optional[bool] = None

solve_gap = renamed_keyword(solve_gap, "backend", "solver")
