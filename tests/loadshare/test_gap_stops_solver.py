"""A timed GAP call leaves no solver running when it returns (issue 40, h60tail): the
solver's thread and the CP-SAT search it let go past its own deadline are waited for
(``exact._STOP_BEFORE_RETURN``). The solver is a stand-in whose search thread ends a set
time after the call's limit or after its cancellation, so the test does not depend on how
fast CP-SAT stops; the join's bound is widened so that a loaded machine cannot make it fail.
No clock is asserted on: only which threads are alive when the call has returned."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from coalloc._shared import interrupt
from coalloc._shared.milp import MilpOutcome
from coalloc.loadshare import GapInstance, solve_gap, verify_gap
from coalloc.loadshare.gap import exact, solver

#: How long the stand-in's search runs on after it was let go or cancelled.
_RUNS_ON = 0.3


def _instance() -> GapInstance:
    """A small feasible instance (5 agents, 20 items) the search does not prove at once."""
    rng = np.random.default_rng(3)
    weight = rng.integers(5, 26, (5, 20))
    cost = rng.integers(10, 51, (5, 20)).astype(float)
    capacity = np.full(5, int(0.8 * weight.sum() / 5 / 5), dtype=np.int64)
    return GapInstance(cost, weight, capacity)


def _no_solution(call) -> MilpOutcome:
    out = MilpOutcome(x=None, bound=None, status="time_limit", solver_status=-1,
                      message="stand-in: no incumbent found", nodes=0, time_limit_hit=True,
                      infeasible=False, rows=call.instance.m + call.instance.n,
                      time_limit=call.limit)  # fmt: skip
    out.assignment = None
    return out


def _let_go(call, used, threads, hint, work_limit=None):
    """A stand-in for :func:`.solver.solver_outcome` that returns at once, leaving its
    search running until ``_RUNS_ON`` s past the call's limit (as a let-go CP-SAT search)."""
    end = call.t0 + call.limit + _RUNS_ON

    def search() -> None:
        while time.perf_counter() < end:
            time.sleep(0.005)

    threading.Thread(target=search, name=exact._SEARCH_THREAD, daemon=True).start()
    return _no_solution(call), used, 0.0


def _until_cancelled(call, used, threads, hint, work_limit=None):
    """A stand-in that runs until its thread's scope is cancelled (a proof by the search),
    its search going on ``_RUNS_ON`` s after that."""
    scope = interrupt.current()
    stop = threading.Event()

    def search() -> None:
        stop.wait(60)
        time.sleep(_RUNS_ON)

    threading.Thread(target=search, name=exact._SEARCH_THREAD, daemon=True).start()
    while not scope.cancelled:
        time.sleep(0.002)
    stop.set()
    return _no_solution(call), used, 0.0


def _solver_threads(before: set) -> list:
    return [t.name for t in threading.enumerate()
            if t.name in (exact._SEARCH_THREAD, "coalloc-gap-solver")
            and t.ident not in before and t.is_alive()]  # fmt: skip


def _call(monkeypatch, stand_in, on: bool, **kwargs):
    # imported, so that the solver's start is not skipped for its import's time
    pytest.importorskip("ortools.sat.python.cp_model")
    monkeypatch.setattr(solver, "solver_outcome", stand_in)
    monkeypatch.setattr(exact, "_STOP_BEFORE_RETURN", on)
    # the join's bound widened (a share of the allowance; 0.05 s at these limits), so that
    # a descheduled thread cannot make the test fail: what is tested is that the call waits
    monkeypatch.setattr(exact, "_STOP_JOIN", 40.0)
    monkeypatch.setattr(exact, "_STOP_AFTER_PROOF", 2.0)
    before = {t.ident for t in threading.enumerate()}
    res = solve_gap(kwargs.pop("instance"), time_limit=0.3, seed=0, **kwargs)
    alive = _solver_threads(before)
    for t in threading.enumerate():  # leave nothing to the next test
        if t.ident not in before and t.name in (exact._SEARCH_THREAD, "coalloc-gap-solver"):
            t.join(5)
    return res, alive


@pytest.mark.parametrize("method", ["exact", "portfolio"])
def test_a_let_go_search_has_ended_when_the_call_returns(monkeypatch, method) -> None:
    """The solver's search still running past the limit (let go by the runner): the call
    waits for it, and returns the search's answer, verified."""
    inst = _instance()
    hint = {"hint": False} if method == "exact" else {}
    res, alive = _call(monkeypatch, _let_go, True, instance=inst, method=method, **hint)
    assert alive == []
    assert res.iterations["solver_started"] == 1
    if res.assignment is not None or method == "portfolio":
        rep = verify_gap(inst, res.assignment)
        assert rep.feasible and rep.objective == pytest.approx(res.objective)


def test_without_the_stop_the_let_go_search_outlives_the_call(monkeypatch) -> None:
    """The referee: with ``_STOP_BEFORE_RETURN`` off (before h60tail) the same stand-in's
    search is still running when the call returns, so the test above can fail."""
    res, alive = _call(monkeypatch, _let_go, False, instance=_instance(), method="exact",
                       hint=False)  # fmt: skip
    assert exact._SEARCH_THREAD in alive
    assert res.iterations["solver_started"] == 1


def _proved_by_search() -> GapInstance:
    """A tiny instance whose optimum the search proves by its bound (every item's cheapest
    agent has room for it)."""
    cost = np.array([[1.0, 9.0, 9.0, 2.0], [9.0, 1.0, 2.0, 9.0]])
    weight = np.ones((2, 4), dtype=np.int64)
    return GapInstance(cost, weight, np.array([2, 2], dtype=np.int64))


@pytest.mark.parametrize("on", [True, False])
def test_a_proof_by_the_search_stops_the_solver_first(monkeypatch, on) -> None:
    """The search proves its answer while the solver runs beside it (the default's
    portfolio starts it at the first feasible assignment): the solver's thread is
    cancelled and, with the stop on, waited for; off (the referee), it outlives the call."""
    # the solver due at the search's first report (no share of the limit first), so that
    # it has started when the proof comes, whatever the machine's speed
    monkeypatch.setattr(exact, "HINT_SHARE", 0.0)
    res, alive = _call(monkeypatch, _until_cancelled, on, instance=_proved_by_search(),
                       method="portfolio")  # fmt: skip
    assert res.status == "optimal" and res.objective == pytest.approx(6.0)
    assert res.iterations["solver_started"] == 1
    if on:
        assert alive == []
    else:
        assert alive


def test_a_solver_still_stopping_is_joined_at_exit(monkeypatch) -> None:
    """A solver thread that outlives the call's wait (asked to stop, still inside its
    search) is handed to the interpreter's exit to be joined
    (:func:`coalloc._shared.milp.supervise.join_at_exit`), not frozen where it stands:
    frozen inside CP-SAT's C++ it aborted the process at exit ("terminate called without
    an active exception", the contract audit's GAP run after the LP certificate made the
    search's proofs come at once; h61). The stand-in's search runs until the test releases
    it, so no clock decides whether it is still alive."""
    from coalloc._shared.milp import supervise

    release, searching = threading.Event(), threading.Event()

    def until_released(call, used, threads, hint, work_limit=None):
        scope = interrupt.current()
        threading.Thread(target=release.wait, args=(60,), name=exact._SEARCH_THREAD,
                         daemon=True).start()  # fmt: skip
        searching.set()
        while not scope.cancelled:
            time.sleep(0.002)
        return _no_solution(call), used, 0.0

    real_start = exact._Timed.start

    def start(self, assignment):  # the search goes on once the solver's search runs
        real_start(self, assignment)
        assert searching.wait(30)

    monkeypatch.setattr(exact._Timed, "start", start)

    pytest.importorskip("ortools.sat.python.cp_model")
    monkeypatch.setattr(exact, "HINT_SHARE", 0.0)
    monkeypatch.setattr(supervise, "_LET_GO_THREADS", set())
    monkeypatch.setattr(supervise, "_LET_GO_EXIT", [True])  # no atexit hook from a test
    monkeypatch.setattr(solver, "solver_outcome", until_released)
    monkeypatch.setattr(exact, "_STOP_AFTER_PROOF", 0.0)  # the call does not wait
    before = {t.ident for t in threading.enumerate()}
    try:
        res = solve_gap(_proved_by_search(), time_limit=0.3, seed=0)
        alive = [t for t in threading.enumerate() if t.ident not in before
                 and t.name == exact._SEARCH_THREAD and t.is_alive()]  # fmt: skip
        handed = set(supervise._LET_GO_THREADS)
    finally:
        release.set()
        for t in threading.enumerate():
            if t.ident not in before and t.name in (exact._SEARCH_THREAD, "coalloc-gap-solver"):
                t.join(5)
    assert res.status == "optimal" and res.iterations["solver_started"] == 1
    assert alive, "the stand-in's search runs until released"
    assert set(alive) <= handed
