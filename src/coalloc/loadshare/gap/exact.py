"""The GAP exact method: the heuristic and the integer-programming solver, the better
answer of the two, the tighter valid bound.

Without a limit: the heuristic (its default iterations), then the solver from its
assignment. With one: the heuristic for the whole limit, and from ``HINT_SHARE`` of it the
solver beside it in a thread (:class:`.solver.SolverThread`, the heuristic's best
assignment as its start); a proof from either ends both.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Optional

import numpy as np

from ..._shared import interrupt
from ..._shared.milp.supervise import join_at_exit
from ..._shared.result import relative_gap, settle
from ..result import GapResult
from ..verify import verify_gap
from .heuristic import solve_heuristic
from .model import GapCall, objective, objective_of
from .solver import Outcome, SolverThread, solver_outcome

__all__ = ["solve_exact", "solve_portfolio", "portfolio_start", "HINT_SHARE",
           "HINT_MAX_SECONDS", "PORTFOLIO_PAIRS", "PORTFOLIO_LARGE_FROM", "UNTIMED_WORK"]

#: The share of an exact call's time limit after which the solver starts beside the
#: heuristic (from the heuristic's best assignment at that moment).
HINT_SHARE = 0.25
#: ... and at most this many seconds after the call's start: under a long limit the solver
#: no longer waits a quarter of it (at T = 100 s a 10 x 60 instance that the untimed exact
#: method proves in 0.45 s took 25 s; at T = 1e300 s it never started). 2.5 s is a quarter
#: of the 10 s every published timed figure used, so no measured limit of 10 s or less
#: starts later or earlier than before.
HINT_MAX_SECONDS = 2.5
#: The timed exact method starts its solver only when the solver's import (when not yet
#: imported) and model building, estimated from the instance's size, take at most
#: ``_SOLVER_FIT`` of the time the solver would have: on 80 x 1600 (128,000 pairs) the
#: CP-SAT model took 7 s to build on a loaded two-core machine (21 us per variable), time
#: the heuristic beside it uses better.
_SOLVER_SECONDS_PER_PAIR, _SOLVER_IMPORT_SECONDS, _SOLVER_FIT = 4e-5, 0.5, 0.5
#: The timed default (``method="portfolio"``) runs the solver beside its search, as the
#: timed exact method does, when the instance has at most this many (agent, item) pairs
#: (``m * n``); above it the heuristic runs alone, as before. Measured in
#: ``bench/shared/CONTRACT_AUDIT.md`` (GAP default section): on 10 x 80 (800 pairs) the
#: heuristic alone lost to the exact method at 0.05 and 0.5 s.
PORTFOLIO_PAIRS = 2000
#: ... and on a larger instance, when the limit is at least this many seconds (None: never,
#: the heuristic alone as before): the timed exact method's schedule (CP-SAT from the
#: search's best at ``HINT_SHARE`` of the limit, at most ``HINT_MAX_SECONDS`` in, when its
#: model fits the time, ``_SOLVER_FIT``; from the search's first feasible assignment with
#: ``PORTFOLIO_LARGE_EARLY``), the better answer and the tighter bound kept. Measured
#: (bench/loadshare/ISSUE40.md, "the default on larger instances"): the audit's heavy
#: 20 x 200 (4,000 pairs) at 2-10 s, the default's search alone stuck 0.1-0.9 % above the
#: optimum without a proof, where ``exact`` proved it in 0.75-3.75 s; on Chu-Beasley c/d
#: 20 x 200 and Yagiura c/d/e 20 x 400 at 5 s, the two within the seeds' spread. Not below
#: 2 s: at 1 s the 4,000-pair instances gained nothing measurable, and a short call's
#: CPU is what the search lacks under load.
PORTFOLIO_LARGE_FROM: Optional[float] = 2.0
#: ... and at least this many seconds per (agent, item) pair: on 4,500-16,000 pairs at 2 s
#: CP-SAT's model (built holding the interpreter) and its thread proved nothing and cost
#: the search 0.2-0.5 points (heavy 30 x 300: 1.89 % above the optimum against 1.39 %
#: alone, median of three seeds, load 2-3), while from 5 s on 9,000 pairs and 10 s on
#: 16,000 it proved the optimum in every call (bench/loadshare/large_default.py). So
#: 4,000 pairs from 2 s, 9,000 from 4.5 s, 16,000 from 8 s, Yagiura's 20 x 1600 (32,000)
#: from 16 s.
PORTFOLIO_LARGE_PER_PAIR = 5e-4
PORTFOLIO_LARGE_EARLY = False
#: The untimed default on a small instance (``PORTFOLIO_PAIRS``) runs CP-SAT after the
#: heuristic, from its assignment, for at most this many of CP-SAT's deterministic seconds
#: (``max_deterministic_time``, one worker, the call's seed). A count, not a clock: the
#: answer and the bound are the same on any machine and under any load. Measured in
#: ``bench/shared/CONTRACT_AUDIT.md`` (untimed GAP default): the small instances CP-SAT
#: proved from the heuristic's answer needed at most 0.17 deterministic seconds (Chu-Beasley
#: c05100; the audit's heavy 10 x 80: 0.015); the others needed 1 (c10100), 7 or more than
#: 10 and gained nothing at 0.25-1, while each deterministic second cost 1.8-6 s of wall
#: time on the loaded two-core machine: hence a fixed amount, not one growing with the size.
UNTIMED_WORK = 0.25
#: The timed default on a small instance starts CP-SAT first, without a hint, the
#: heuristic beside it for the whole limit (True), rather than from the heuristic's first
#: feasible assignment (False). CP-SAT is the stronger side on these sizes and its time is
#: what a short limit lacks: on the contract audit's heavy 10 x 80 at 0.5 s, ``exact``
#: (CP-SAT from a quarter of the limit) found 1851 where the hinted portfolio kept the
#: heuristic's 1911, and CP-SAT from the start proved 1851 in 0.3-0.4 s. Only for limits
#: of at least ``PORTFOLIO_COLD_FROM`` seconds: below, the heuristic needs the
#: interpreter to find a first answer at all, and CP-SAT starts from its first feasible
#: assignment, on tiny instances only (``PORTFOLIO_EARLY_PAIRS``; the contract audit, load
#: 6.8: the heavy 10 x 80 at 0.05 s had no answer with CP-SAT started beside the
#: heuristic's start, 1937 from the heuristic alone; bench/loadshare/ISSUE40.md, h47gap).
#: ``PORTFOLIO_COLD_FROM`` was 0.2 s until h52gap; at 0.2-0.3 s CP-SAT beside the search,
#: cold or hinted, proved nothing on Chu-Beasley b-d and the audit's heavy 10 x 80 and
#: took the search's CPU (the default worse than ``heuristic`` in 9-15 of 28 pairs, better
#: in 3-7; the heuristic with CP-SAT never started 7-9 / 6-8, the race's own spread), while
#: from 0.5 s it proved heavy 10 x 80 in 4 of 4 seeds (bench/loadshare/ISSUE40.md, h52gap).
PORTFOLIO_COLD = True
PORTFOLIO_COLD_FROM = 0.5
#: Below ``PORTFOLIO_COLD_FROM`` the timed default starts CP-SAT (from the heuristic's
#: first feasible assignment) only on instances of at most this many (agent, item) pairs,
#: whose model takes a few milliseconds (the audit's 2 x 4 to 6 x 7 cases, OR-Library's
#: 5 x 15); on larger ones the heuristic runs alone (h52gap, above). None: every size, as
#: before h52gap.
PORTFOLIO_EARLY_PAIRS: Optional[int] = 200
#: The timed default's portfolio runs HiGHS's MILP (from the same start) in place of
#: CP-SAT on instances of at most this many fitting (agent, item) pairs, at limits of at
#: least ``PORTFOLIO_COLD_FROM`` (:func:`portfolio_solver`); None: CP-SAT at every size,
#: as before h52gap's follow-up. Measured (bench/loadshare/proofs.py; ISSUE40.md, h52gap
#: follow-up): on OR-Library's gap1-12 (75-600 pairs) and the audit's small cases at 1 s
#: the default proved 58-63 of 67 optima with HiGHS beside it against 55-56 with CP-SAT
#: (three alternating runs), the heuristic's bound one unit short where it did not
#: (gap1-0: 260 against 261); on the audit's heavy 10 x 80 at 0.5-1 s HiGHS proved 1851
#: in 6 of 6 calls, CP-SAT in none; on Chu-Beasley a-d 05100 (500 pairs) the same
#: answers within the race's spread.
PORTFOLIO_HIGHS_PAIRS: Optional[int] = 800
#: The hand-off (issue 40 item 4, h53gap): below ``PORTFOLIO_COLD_FROM``, on instances of
#: at most this many fitting (agent, item) pairs, the timed default runs the search alone
#: until it holds a feasible assignment and ``PORTFOLIO_HANDOFF_AT`` of the limit has
#: passed, stops it there and hands the rest of the time (the CPU, not a share of it) to
#: HiGHS's MILP started from the search's best; the better answer and the tighter bound
#: of the two, as with a solver beside the search. Bare HiGHS proves OR-Library's gap1-0,
#: gap2-1 and the audit's heavy 10 x 80 in 0.07-0.14 s where the default, its search
#: alone at 0.2 s, does not (the search's Lagrangian bound one unit short;
#: bench/loadshare/ISSUE40.md, h52gap follow-up and h53gap). None: off.
PORTFOLIO_HANDOFF_PAIRS: Optional[int] = None
PORTFOLIO_HANDOFF_AT = 0.0
#: ... once the search's answer is within this of its bound (integral costs only; None:
#: whatever the gap): the proof is what is missing, not the answer.
PORTFOLIO_HANDOFF_GAP: Optional[float] = 1.0
#: ... and HiGHS starts from the search's best (True) or without a start (False): on
#: gap2-1 HiGHS from the optimum ran its root to a 0.5 s limit, 0.18-0.24 s without one.
PORTFOLIO_HANDOFF_HINT = False
#: CP-SAT's workers in the timed default's portfolio (the untimed one runs one, for its
#: deterministic work cap).
PORTFOLIO_WORKERS = 1
#: The share of the overrun allowance (``max(0.05 s, 0.05 T)``) kept back from the solver's
#: time limit for its own overrun (stopping, reading the solution back, the check).
_SOLVER_MARGIN = 0.5
#: The shares of the allowance by which the timed method waits for the solver's thread
#: (then cancels it) and stops waiting (its answer then unused).
_JOIN_AT, _JOIN_LAST = 0.3, 0.6
#: The solver's outcome is used once its thread has set it, alive or not (False: only
#: from a thread that had ended by the last join, as before h59gap).
_OUTCOME_ONCE_SET = True
#: When the search proved its answer (optimal or infeasible), the call cancels the
#: solver's thread and returns without joining it (False: it waited for the thread up to
#: ``_JOIN_AT`` of the allowance past the limit, as before h59gap: a proof at 1 ms on the
#: audit's heavy 3 x 8 "max" returned at 0.08-0.11 s under load, past T + 0.05 s).
_NO_WAIT_AFTER_PROOF = True
#: A timed call stops its solver before it returns (issue 40, h60tail): once the result
#: is built, the solver's thread (cancelled) and the CP-SAT search it left running past its
#: own deadline (:func:`coalloc._shared.milp.supervise.supervise_thread`'s let-go) are
#: waited for, up to ``_STOP_JOIN`` of the overrun allowance past the limit, so that a
#: returned call leaves no solver taking the caller's CPU. A proof by the search waits
#: at most ``_STOP_AFTER_PROOF`` seconds for them (the proof's answer is not held back
#: for the solver's stop, h59gap). False: the call returns with them still running, as
#: before h60tail.
_STOP_BEFORE_RETURN = True
_STOP_JOIN = 0.8
_STOP_AFTER_PROOF = 0.02
#: The name of the threads the solver's runner starts for a CP-SAT search (joined with
#: ``_STOP_BEFORE_RETURN`` when they began during the call).
_SEARCH_THREAD = "coalloc-solver"


def solve_exact(call: GapCall, solver: str, threads: int, iterations: Optional[int],
                hint: bool) -> GapResult:  # fmt: skip
    """The exact method of :func:`coalloc.loadshare.solve_gap`.

    Parameters
    ----------
    call : GapCall
        The instance and the call's parameters.
    solver : {"cpsat", "highs", "cbc"}
    threads : int
        The solver's workers.
    iterations : int, optional
        The heuristic's tabu iterations.
    hint : bool
        Run the heuristic (and start the solver from its assignment).

    Returns
    -------
    GapResult
        Not yet settled.

    Notes
    -----
    With a limit, the solver gets the limit less ``_SOLVER_MARGIN`` of the overrun
    allowance (its own overrun: stopping, reading the solution back), and a thread still
    busy at the limit (an import that cannot be interrupted) is left to end by itself, its
    answer unused.
    """
    call = call.with_params(solver=solver, threads=threads)
    if call.limit is None:
        return _untimed(call, solver, threads, iterations, hint)
    return _Timed(call, solver, threads).run(iterations, hint)


def solve_portfolio(call: GapCall, iterations: Optional[int]) -> GapResult:
    """The default of :func:`coalloc.loadshare.solve_gap` on a small instance
    (``PORTFOLIO_PAIRS``), the ``"portfolio"`` method, with
    ``iterations["solver_started"]`` and ``params["portfolio"]``.

    With a time limit: the timed exact method's portfolio (the heuristic for the whole
    limit, CP-SAT beside it, or HiGHS on at most ``PORTFOLIO_HIGHS_PAIRS`` pairs: with
    ``PORTFOLIO_COLD`` and a limit of ``PORTFOLIO_COLD_FROM`` or more from the call's
    start without a hint, else from the heuristic's first feasible assignment, or from
    ``HINT_SHARE`` of the limit when that comes first, started from the heuristic's best
    assignment; the better answer, the tighter bound). Without one: the heuristic (its
    default iterations), then, unless it
    proved its answer, CP-SAT from its assignment with one worker, the call's seed and a
    work cap of ``UNTIMED_WORK`` deterministic seconds (``params["work_limit"]``), so that
    the answer and the bound depend on the instance and the parameters only.

    Parameters
    ----------
    call : GapCall
        The instance and the call's parameters.
    iterations : int, optional
        The heuristic's tabu iterations.

    Returns
    -------
    GapResult
        Not yet settled.
    """
    if call.limit is None:
        return _untimed_portfolio(call, iterations)
    params = {**call.params, "iterations": iterations}
    solver = portfolio_solver(call)
    inner = call.with_params(solver=solver, threads=PORTFOLIO_WORKERS)
    inst = call.instance
    when = portfolio_start(call.limit, int(np.count_nonzero(inst.weight <= inst.capacity[:, None])))
    if inst.m * inst.n > PORTFOLIO_PAIRS:  # a large instance at a long limit (solve_gap)
        when = "large"
    if when == "off":  # the heuristic alone: the very call ``method="heuristic"`` makes
        heur = settle(solve_heuristic(call, iterations, True))
        res = _combine(inner, None, heur, time.perf_counter() - call.t0, started=False)
        if heur.status not in ("optimal", "infeasible"):
            res.message += _off_note()
        res.iterations["solver_started"] = 0
        return _as_portfolio(res, heur, call, params, solver, "beside it")
    timed = _Timed(inner, solver, PORTFOLIO_WORKERS)
    # a small instance: CP-SAT from the first feasible assignment on; a large one: from
    # the exact method's start (PORTFOLIO_LARGE_FROM)
    timed.early = when != "large" or PORTFOLIO_LARGE_EARLY
    timed.cold = when == "cold"  # or CP-SAT first, from nothing, the heuristic beside it
    timed.off = when == "off"  # or the heuristic alone (a short limit, a larger instance)
    if when == "handoff":  # or the search alone to a feasible assignment, then the solver
        timed.early, timed.handoff_at = False, call.t0 + PORTFOLIO_HANDOFF_AT * call.limit
    res = timed.run(iterations, True)
    return _as_portfolio(res, timed.heur, call, params, solver,
                         "after it" if when == "handoff" else "beside it")


def _off_note() -> str:
    """Why the timed default ran the heuristic alone (``portfolio_start`` said "off")."""
    return (f"; CP-SAT was not started: below {PORTFOLIO_COLD_FROM:g} s on more than "
            f"{PORTFOLIO_EARLY_PAIRS} pairs the heuristic runs alone (beside it, CP-SAT "
            "took the search's CPU and proved nothing)")  # fmt: skip


def _as_portfolio(res: GapResult, heur: Optional[GapResult], call: GapCall, params: dict,
                  solver: str, how: str) -> GapResult:  # fmt: skip
    """The timed default's result: the heuristic's trajectory and counts (``heur``, None
    when it did not run), the method's name, parameters and message."""
    if heur is not None:  # the heuristic's trajectory and counts, as the method gives
        res.trajectory = _ends_at(heur.trajectory, res, call.t0)
        res.iterations = {**heur.iterations, **res.iterations}
    res.method = "portfolio"
    res.params = {**params, "portfolio": True, "solver": solver}
    name = "CP-SAT" if solver == "cpsat" else "HiGHS"
    res.message = f"portfolio (heuristic, {name} {how}): " + res.message
    return res


def portfolio_solver(call: GapCall) -> str:
    """The solver of the timed default's portfolio: ``"highs"`` on instances of at most
    ``PORTFOLIO_HIGHS_PAIRS`` fitting (agent, item) pairs at limits of at least
    ``PORTFOLIO_COLD_FROM`` (below it, hinted HiGHS on gap1-12 at 0.2 s proved 51-52 of
    67 optima against CP-SAT's 53 and lost 2-3 objectives), else ``"cpsat"``."""
    inst = call.instance
    pairs = int(np.count_nonzero(inst.weight <= inst.capacity[:, None]))
    small = PORTFOLIO_HIGHS_PAIRS is not None and pairs <= PORTFOLIO_HIGHS_PAIRS
    long = call.limit is not None and call.limit >= PORTFOLIO_COLD_FROM
    if call.limit is not None and portfolio_start(call.limit, pairs) == "handoff":
        return "highs"
    return "highs" if small and long else "cpsat"


def portfolio_start(limit: float, pairs: int) -> str:
    """When the timed default (``method="portfolio"``) starts CP-SAT beside its search.

    Parameters
    ----------
    limit : float
        The call's time limit, seconds.
    pairs : int
        The instance's (agent, item) pairs where the item fits the agent.

    Returns
    -------
    str
        ``"cold"``: at the call's start, without a hint (``PORTFOLIO_COLD``, from
        ``PORTFOLIO_COLD_FROM``); ``"hinted"``: from the heuristic's first feasible
        assignment (or a quarter of the limit); ``"off"``: not at all, the heuristic
        alone (below ``PORTFOLIO_COLD_FROM`` on more than ``PORTFOLIO_EARLY_PAIRS``
        pairs); ``"handoff"``: the search alone, stopped at its first feasible
        assignment from ``PORTFOLIO_HANDOFF_AT`` of the limit, then the solver from
        its best (below ``PORTFOLIO_COLD_FROM`` on at most ``PORTFOLIO_HANDOFF_PAIRS``
        pairs). Every start still needs its model to fit the time (``_SOLVER_FIT``).
    """
    if limit >= PORTFOLIO_COLD_FROM:
        return "cold" if PORTFOLIO_COLD else "hinted"
    if PORTFOLIO_HANDOFF_PAIRS is not None and pairs <= PORTFOLIO_HANDOFF_PAIRS:
        return "handoff"
    if PORTFOLIO_EARLY_PAIRS is None or pairs <= PORTFOLIO_EARLY_PAIRS:
        return "hinted"
    return "off"


def _untimed_portfolio(call: GapCall, iterations: Optional[int]) -> GapResult:
    """The untimed default on a small instance: the heuristic, then CP-SAT from its answer
    under a deterministic work cap (:func:`solve_portfolio`)."""
    work = UNTIMED_WORK
    params = {**call.params, "iterations": iterations}
    inner = call.with_params(solver="cpsat", threads=1)
    heur = settle(solve_heuristic(inner, iterations, True))
    t_hint = time.perf_counter() - call.t0
    out = None
    if heur.status not in ("optimal", "infeasible"):  # else proven by the heuristic
        out = solver_outcome(inner, "cpsat", 1, heur.assignment, work_limit=work)
    res = _combine(inner, out, heur, t_hint)
    if res.assignment is not None and res.status in ("no_solution", "time_limit"):
        # CP-SAT ended by its work cap without a solution of its own (the heuristic's kept):
        # the method ended by itself, no clock stopped it
        if out is None or not out[0].interrupted:
            res.status = "feasible"
    res.trajectory = _ends_at(heur.trajectory, res, call.t0)
    res.iterations = {**heur.iterations, **res.iterations, "solver_started": int(out is not None)}
    res.timings = {**heur.timings, **res.timings}  # the heuristic's phases ("lp", ...) too
    res.method = "portfolio"
    res.params = {**params, "portfolio": True, "solver": "cpsat", "work_limit": work}
    if out is None:
        res.message = (f"portfolio (heuristic, then CP-SAT): {heur.message}; CP-SAT not "
                       "run: the heuristic proved its answer")  # fmt: skip
    else:
        res.message = ("portfolio (heuristic, then CP-SAT, work cap "
                       f"{work:.3g} deterministic s): {res.message}; the heuristic: "
                       f"{heur.message}")  # fmt: skip
    return res


def _ends_at(trajectory: np.ndarray, res: GapResult, t0: float) -> np.ndarray:
    """The heuristic's trajectory, with a last row for the portfolio's answer and bound when
    CP-SAT's improved either (a trajectory ends at the result's objective and bound)."""
    objs = trajectory[~np.isnan(trajectory[:, 1]), 1] if len(trajectory) else trajectory[:, 1]
    bounds = trajectory[~np.isnan(trajectory[:, 2]), 2] if len(trajectory) else trajectory[:, 2]
    obj = np.nan if res.objective is None else float(res.objective)
    bound = np.nan if res.bound is None else float(res.bound)
    same_obj = np.isnan(obj) or (objs.size and objs[-1] == obj)
    same_bound = np.isnan(bound) or (bounds.size and bounds[-1] == bound)
    if same_obj and same_bound:
        return trajectory
    row = np.array([[time.perf_counter() - t0, obj, bound]], dtype=np.float64)
    return np.vstack([trajectory, row]) if len(trajectory) else row


def _untimed(call: GapCall, solver: str, threads: int, iterations: Optional[int],
             hint: bool) -> GapResult:  # fmt: skip
    """Without a limit: the heuristic, then the solver from its assignment (unless the
    heuristic proved its answer)."""
    heur = None
    t_hint = 0.0
    if hint:
        heur = settle(solve_heuristic(call, iterations, True))
        t_hint = time.perf_counter() - call.t0
    if heur is not None and heur.status in ("optimal", "infeasible"):
        out = None  # proven by the heuristic's bound or its proof
    else:
        h = None if heur is None or heur.assignment is None else heur.assignment
        out = solver_outcome(call, solver, threads, h)
    return _combine(call, out, heur, t_hint)


class _Timed:
    """The timed exact method: the heuristic for the whole limit, the solver beside it."""

    def __init__(self, call: GapCall, solver: str, threads: int) -> None:
        limit, t0, inst = call.limit, call.t0, call.instance
        self.call = call
        self.grace = max(0.05, 0.05 * limit)
        # the solver's own call: the limit less its margin, counted from the same start
        self.solver_call = GapCall(inst, call.sense, call.assign_all,
                                   max(limit - _SOLVER_MARGIN * self.grace, 1e-3), call.seed,
                                   call.params, t0)  # fmt: skip
        self.solver, self.threads = solver, threads
        self.halt = threading.Event()
        self.worker: Optional[SolverThread] = None
        self.skipped = False
        self.pairs = int(np.count_nonzero(inst.weight <= inst.capacity[:, None]))
        self.need = _SOLVER_SECONDS_PER_PAIR * self.pairs
        if solver == "cpsat" and "ortools.sat.python.cp_model" not in sys.modules:
            self.need += _SOLVER_IMPORT_SECONDS
        self.start_at = t0
        self.heur: Optional[GapResult] = None  # the heuristic's own result, once it ended
        #: the default's portfolio: the solver starts at the heuristic's first feasible
        #: assignment (not only from ``HINT_SHARE`` of the limit)
        self.early = False
        #: the default's portfolio (``PORTFOLIO_COLD``): the solver starts without a hint
        #: at the call's start when the limit is ``PORTFOLIO_COLD_FROM`` or more and its
        #: import and model fit the time
        self.cold = False
        #: the default's portfolio below ``PORTFOLIO_COLD_FROM`` on a larger instance
        #: (:func:`portfolio_start`): the solver is not started at all
        self.off = False
        #: the default's hand-off (``PORTFOLIO_HANDOFF_PAIRS``; None: none): from this
        #: clock value, the search's first feasible report stops it (``stop``) and the
        #: solver runs alone from its best
        self.handoff_at: Optional[float] = None
        self.stop = threading.Event()
        self.bound: Optional[float] = None  # the search's best bound (its ``on_bound``)
        #: the hand-off's closest approach: the least gap of a feasible report to the bound
        #: then known (inf: feasible, no bound yet; None: no feasible report)
        self.closest: Optional[float] = None
        #: the threads that ran before the call (``_STOP_BEFORE_RETURN``), and how many of
        #: the call's solver threads still ran when it returned
        self.before: set = set()
        self.running = 0

    def start(self, assignment: Optional[np.ndarray]) -> None:
        """The solver's thread, from ``assignment`` (copied) when given."""
        args = (self.solver_call, self.solver, self.threads,
                None if assignment is None else assignment.copy())  # fmt: skip
        self.worker = SolverThread(args, self.halt)
        self.worker.start()

    def fits_in_time(self) -> bool:
        """Whether the solver's import and model (a rule of the instance's size) fit
        ``_SOLVER_FIT`` of the time it would have; else it is not started at all."""
        sc = self.solver_call
        left = sc.t0 + sc.limit - time.perf_counter()
        return self.need <= _SOLVER_FIT * left

    def on_round(self, assignment: np.ndarray, feasible: bool) -> None:
        """The heuristic's report (its start, then after each round): time to start the
        solver (or, with the hand-off, to stop the search)?"""
        if self.handoff_at is not None:
            if feasible and time.perf_counter() >= self.handoff_at and self._near(assignment):
                self.stop.set()  # the search ends; run() starts the solver from its best
            return
        due = time.perf_counter() >= self.start_at or (self.early and feasible)
        if self.worker is None and not self.skipped and due:
            if self.fits_in_time():
                self.start(assignment if feasible else None)
            else:
                self.skipped = True

    def on_bound(self, bound: Optional[float]) -> None:
        """The search's best bound, reported before each ``on_round``."""
        self.bound = bound

    def _near(self, assignment: np.ndarray) -> bool:
        """Whether ``assignment`` (feasible) is within ``PORTFOLIO_HANDOFF_GAP`` of the
        search's bound (the hand-off's rule; always when that is None)."""
        if PORTFOLIO_HANDOFF_GAP is None:
            return True
        call = self.call
        if self.bound is None or not call.instance.integral_cost:
            self.closest = float("inf") if self.closest is None else self.closest
            return False
        gap = objective_of(call.instance, assignment, call.assign_all) - self.bound
        gap = gap if call.sense == "min" else -gap
        self.closest = gap if self.closest is None else min(self.closest, gap)
        return gap <= PORTFOLIO_HANDOFF_GAP + 1e-9

    def not_started(self) -> str:
        """Why the solver was not started (the result's message adds it): the hand-off
        never came (the search found no feasible assignment, or none within
        ``PORTFOLIO_HANDOFF_GAP`` of its bound, by the end of its time), or the solver's
        import and model would not fit the time left."""
        if self.handoff_at is not None and not self.stop.is_set():
            if PORTFOLIO_HANDOFF_GAP is None:
                wants = "first feasible answer"
            else:
                wants = f"feasible answer within {PORTFOLIO_HANDOFF_GAP:g} of its bound"
            if self.closest is None:
                got = "had none in its time"
            elif self.closest == float("inf"):
                got = "had no bound to compare its answers with (or the costs are not integral)"
            else:
                got = f"came no closer than {self.closest:g} to its bound"
            return (f"; the solver was not started: the hand-off waits for the search's "
                    f"{wants}, and the search {got}")  # fmt: skip
        return (f"; the solver was not started: its import and model ({self.pairs} pairs, "
                f"about {self.need:.2g} s) would not fit the time left")  # fmt: skip

    def wait(self, heur: Optional[GapResult]) -> Optional[Outcome]:
        """The solver's outcome when it ended by the limit (a little grace), else None."""
        thread, call, grace = self.worker, self.call, self.grace
        if thread is None:
            return None
        own_proof = heur is not None and heur.status in ("optimal", "infeasible")
        if own_proof and not self.halt.is_set():  # the solver has nothing left to do
            thread.scope.cancel()
            if _NO_WAIT_AFTER_PROOF:  # nor the call: the thread ends by itself
                return thread.outcome
        # (to 0.3 and 0.6 of the allowance, not 0.5 and 0.8 as before h50gap: under a load
        # of 7 the joins themselves came back 0.02-0.04 s late, waiting for the GIL, and the
        # result's building after them needs the rest)
        thread.join(
            interrupt.wait_seconds(call.t0 + call.limit + _JOIN_AT * grace - time.perf_counter())
        )
        if thread.is_alive():  # past the limit: stop it, wait a little more
            thread.scope.cancel()
            thread.join(
                interrupt.wait_seconds(
                    call.t0 + call.limit + _JOIN_LAST * grace - time.perf_counter()
                )
            )
        # the outcome once set (the thread sets it before ``halt`` and only then ends): a
        # thread still alive past the joins kept its proof and answer before h59gap only if
        # it had also ended, and a search it had halted before its first feasible
        # assignment left the call without one
        if thread.outcome is not None and (_OUTCOME_ONCE_SET or not thread.is_alive()):
            return thread.outcome
        return None

    def stop_solver(self, proved: bool) -> int:
        """Wait for the solver's thread (cancelled already) and the CP-SAT searches that
        began during the call, until ``_STOP_JOIN`` of the allowance past the limit (or
        ``_STOP_AFTER_PROOF`` seconds after a proof by the search): how many still run."""
        call = self.call
        until = call.t0 + call.limit + _STOP_JOIN * self.grace
        if proved:
            until = min(until, time.perf_counter() + _STOP_AFTER_PROOF)
        threads = [self.worker] if self.worker is not None else []
        starting = []
        for thread in threads:  # the solver's thread first: then the searches it left
            thread.join(interrupt.wait_seconds(until - time.perf_counter()))
        threads += [t for t in threading.enumerate()
                    if t.name == _SEARCH_THREAD and t.ident not in self.before]  # fmt: skip
        for thread in threads[1:]:
            try:
                thread.join(interrupt.wait_seconds(until - time.perf_counter()))
            except RuntimeError:  # still being started by the solver's thread: not
                starting.append(thread)  # joinable yet (a race seen under pytest -n 2)
        alive = [t for t in threads if t.is_alive()] + starting
        for thread in alive:  # (asked to stop) joined at the interpreter's exit, not frozen
            join_at_exit(thread)  # inside CP-SAT: that aborted the process (h61)
        return len(alive)

    def run(self, iterations: Optional[int], hint: bool) -> GapResult:
        call = self.call
        if _STOP_BEFORE_RETURN:  # the threads already running (not this call's)
            self.before = {t.ident for t in threading.enumerate()}
        heur = None
        t_hint = 0.0
        self.start_at = call.t0 + (min(HINT_SHARE * call.limit, HINT_MAX_SECONDS) if hint else 0.0)
        self.skipped = self.skipped or self.off
        if not hint or (self.cold and call.limit >= PORTFOLIO_COLD_FROM):
            if hint and not self.fits_in_time():
                self.skipped = True
            else:
                self.start(None)
        try:
            if hint:
                halt = self.halt if self.handoff_at is None else self.stop
                heur = settle(solve_heuristic(call, iterations, True, self.on_round, halt,
                                              self.on_bound))
                self.heur = heur
                t_hint = time.perf_counter() - call.t0
                proven = heur.status in ("optimal", "infeasible") and not self.halt.is_set()
                if (self.worker is None and not self.skipped and not proven
                        and self.fits_in_time()):  # fmt: skip
                    # the heuristic ended by itself (its iterations, or the hand-off) before
                    # the solver's start
                    handoff = self.handoff_at is not None and not PORTFOLIO_HANDOFF_HINT
                    self.start(None if handoff else heur.assignment)
            out = self.wait(heur)
        finally:
            if self.worker is not None and self.worker.is_alive():  # cancelled, or left behind
                self.worker.scope.cancel()
        res = _combine(call, out, heur, t_hint, started=self.worker is not None)
        proved = heur is not None and heur.status in ("optimal", "infeasible")
        if _STOP_BEFORE_RETURN and self.worker is not None:
            self.running = self.stop_solver(proved)
        if self.worker is None and not proved and self.off:
            res.message += _off_note()
        elif self.worker is None and not proved:  # (after a proof the solver is not needed)
            res.message += self.not_started()
        res.iterations["solver_started"] = int(self.worker is not None)
        return res


def _combine(call: GapCall, out: Optional[Outcome], heur: Optional[GapResult],
             t_hint: float, started: bool = True) -> GapResult:  # fmt: skip
    """The exact method's result: the solver's outcome ``out`` (``(outcome, solver,
    seconds)`` or None: not run, or not done by the limit) and the heuristic's result
    ``heur`` (or None), the better assignment of the two, the tighter valid bound;
    ``started``: whether the solver ran at all (else the caller says why not)."""
    inst, sense, assign_all, params = call.instance, call.sense, call.assign_all, call.params
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
            obj = objective(inst, assign)
        if status == "optimal" and obj is not None:
            bound = obj
        elif status == "infeasible" or (assign_all and not np.all(fits.any(axis=0))):
            status, assign, obj, bound = "infeasible", None, None, None
    elif heur is not None:  # the heuristic's answer alone
        status, assign, obj, bound = heur.status, heur.assignment, heur.objective, heur.bound
        message = f"the heuristic's answer ({heur.message})"
        if heur.status not in ("optimal", "infeasible") and started:  # (else: why not)
            message += "; the solver did not end by the time limit"
    else:
        status, message = "time_limit", "the solver did not end by the time limit"
    if out is not None and heur is not None and heur.assignment is not None:
        # never worse than the heuristic
        status, assign, obj, bound, message = _not_worse(
            call, heur.assignment, status, assign, obj, bound, message
        )
    if out is not None and heur is not None and heur.status == "infeasible" and assign is None:
        status, message = "infeasible", message + f"; {heur.message}"
    if heur is not None and heur.bound is not None and obj is not None and status != "optimal":
        # the heuristic's LP or Lagrangian bound, if tighter
        hb = heur.bound
        if bound is None or (hb > bound if sense == "min" else hb < bound):
            bound = hb
            message += "; bound: the heuristic's LP or Lagrangian relaxation"
    if call.limit is not None and status in ("feasible", "no_solution"):
        status = "time_limit"  # the limit ended the exact method before a proof
    gap = relative_gap(obj, bound, sense=sense)
    hint_iterations = int(heur.iterations.get("tabu_iterations", 0)) if heur is not None else 0
    return GapResult(
        status=status, message=message, method="exact", assignment=assign, objective=obj,
        bound=bound, gap=gap, sense=sense, assign_all=assign_all, seed=call.seed,
        params=params,
        timings={"hint": t_hint, "solve": t_solve, "total": time.perf_counter() - call.t0},
        iterations={"nodes": nodes, "hint_tabu_iterations": hint_iterations},
    )  # fmt: skip


def _not_worse(call: GapCall, h_assign: np.ndarray, status: str, assign, obj, bound,
               message: str):  # fmt: skip
    """The heuristic's assignment in place of the solver's when the solver ended with none or
    a worse one (stopped by the time limit, or an answer the check refused); a solver's
    "optimal" or "infeasible" that the heuristic's assignment contradicts loses its proof.
    Returns ``(status, assignment, objective, bound, message)``."""
    sense = call.sense
    rep = verify_gap(call.instance, h_assign, assign_all=call.assign_all)
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
