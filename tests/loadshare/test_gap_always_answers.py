"""A timed GAP call always returns an answer when one is in hand (issue 40, h59gap
follow-up): the search's start that comes after the limit (a loaded machine descheduled
the call), the solver's outcome from a thread not yet ended, a search proof that does not
wait for the solver. The clock is not asserted on: the start is made late on purpose (a
sleep past a short limit), and the solver's thread is a stand-in."""

from __future__ import annotations

import time

import numpy as np
import pytest

from coalloc.loadshare import GapInstance, solve_gap, verify_gap
from coalloc.loadshare.gap import exact, search, search_start
from coalloc.loadshare.gap.model import GapCall


def _heavy(m: int, n: int, seed: int, sense: str = "max") -> GapInstance:
    """The contract audit's heavy instances (bench/shared/audit_cases.gap_heavy): a few
    agents with 5x weights, capacities 1.2 x the fair share; feasible, and tight enough
    that the greedy start alone overloads an agent."""
    rng = np.random.default_rng(seed)
    weight = rng.integers(1, 10, (m, n))
    weight[: max(1, m // 3)] *= 5
    cost = rng.integers(1, 50, (m, n)) + weight
    cap = np.maximum(1, (1.2 * weight.min(axis=0).sum() / m)).astype(np.int64)
    capacity = np.full(m, int(cap), dtype=np.int64)
    capacity[-1] += int(weight[-1].max())
    return GapInstance(cost.astype(float), weight, capacity, sense=sense)


@pytest.mark.parametrize("method", ["heuristic", "portfolio"])
@pytest.mark.parametrize("shape", [(3, 8, 2), (3, 8, 1), (4, 12, 5), (5, 20, 7)])
def test_a_start_after_the_limit_still_answers(monkeypatch, method, shape) -> None:
    """The search's start made to end past the limit (as a load spike does): the fallback
    after the limit repairs the greedy's overload (``search_start._LATE_REPAIR``) and the call
    returns a feasible assignment; before h59gap the heuristic and the default ended
    ``time_limit`` without one on heavy 3 x 8 "max" (the greedy alone overloads it)."""
    limit = 0.02
    real = search._Search.start

    def late_start(self, x_lp):
        time.sleep(limit + 0.01)  # past the deadline: no tabu round will run
        return real(self, x_lp)

    monkeypatch.setattr(search._Search, "start", late_start)
    m, n, seed = shape
    inst = _heavy(m, n, seed)
    exact_res = solve_gap(inst, "exact", seed=0)  # untimed: the instance is feasible
    assert exact_res.status == "optimal"
    for s in (0, 3):
        res = solve_gap(inst, method, time_limit=limit, seed=s)
        assert res.assignment is not None, res.message
        rep = verify_gap(inst, res.assignment)
        assert rep.feasible and rep.objective == pytest.approx(res.objective)
        assert res.objective <= exact_res.objective + 1e-9


def test_the_late_fallback_alone_does_not_answer_there(monkeypatch) -> None:
    """The referee of the test above: with the repair off (``_LATE_REPAIR`` False, main's
    code) the same late start ends without an answer on heavy 3 x 8 "max", so the test
    above can fail."""
    limit = 0.02
    real = search._Search.start

    def late_start(self, x_lp):
        time.sleep(limit + 0.01)
        return real(self, x_lp)

    monkeypatch.setattr(search._Search, "start", late_start)
    monkeypatch.setattr(search_start, "_LATE_REPAIR", False)
    res = solve_gap(_heavy(3, 8, 2), "heuristic", time_limit=limit, seed=0)
    assert res.assignment is None and res.status == "time_limit"


class _Thread:
    """A stand-in for :class:`.solver.SolverThread`: alive, with ``outcome`` set or not."""

    def __init__(self, outcome) -> None:
        self.outcome = outcome
        self.joins = []
        self.cancelled = False
        outer = self

        class _Scope:
            def cancel(self) -> None:
                outer.cancelled = True

        self.scope = _Scope()

    def is_alive(self) -> bool:
        return True

    def join(self, timeout=None) -> None:
        self.joins.append(timeout)


def _timed(limit: float, started_ago: float) -> exact._Timed:
    inst = _heavy(3, 8, 2)
    call = GapCall(inst, "max", True, limit, 0, {}, time.perf_counter() - started_ago)
    return exact._Timed(call, "cpsat", 1)


def test_an_outcome_set_is_used_though_its_thread_lives() -> None:
    """Past the joins, a solver's thread that has set its outcome (before its ``halt``)
    but not yet ended: the outcome is used (before h59gap it was dropped, and a search
    halted by that proof before its first feasible assignment left the call without
    one)."""
    timed = _timed(0.05, 1.0)  # far past the limit: the joins wait 0 s
    outcome = object()
    timed.worker = _Thread(outcome)
    timed.halt.set()
    assert timed.wait(None) is outcome
    timed.worker = _Thread(None)  # nothing set: nothing used
    assert timed.wait(None) is None


def test_a_search_proof_does_not_wait_for_the_solver() -> None:
    """The search proved its answer: the solver's thread is cancelled and not joined
    (before h59gap the call waited for it to ``_JOIN_AT`` of the allowance past the
    limit)."""
    timed = _timed(60.0, 0.0)  # a limit far ahead: a join would wait
    thread = _Thread(None)
    timed.worker = thread

    class _Proved:
        status = "optimal"

    assert timed.wait(_Proved()) is None
    assert thread.cancelled and thread.joins == []


def test_the_halted_search_keeps_the_solvers_answer(monkeypatch) -> None:
    """The hinted default (0.3 s, 24 pairs), its search kept from any feasible assignment
    (no fallback) and its solver forced to start cold at the search's first report, which
    waits for the solver's proof: the proof halts the search before it holds an
    assignment, and the solver's thread lingers past the joins, its outcome set. The call
    returns the solver's proven optimum, the untimed exact method's (before h59gap: no
    answer)."""
    from coalloc._shared.milp import preload
    from coalloc.loadshare.gap import solver as gap_solver

    preload("cpsat")  # (else the import's 0.5 s budget keeps the solver from starting)
    inst = _heavy(3, 8, 2)
    best = solve_gap(inst, "exact", seed=0).objective
    assert exact.portfolio_start(0.3, inst.m * inst.n) == "hinted"
    real_run = gap_solver.SolverThread.run

    def lingering(self) -> None:
        real_run(self)
        time.sleep(1.0)  # alive past the joins, its outcome set

    real_round = exact._Timed.on_round

    def on_round(self, assignment, feasible) -> None:
        real_round(self, assignment, feasible)
        if self.worker is not None:  # the search waits for the solver's proof
            self.halt.wait(5.0)

    monkeypatch.setattr(gap_solver.SolverThread, "run", lingering)
    monkeypatch.setattr(exact, "HINT_SHARE", 0.0)  # the solver at the first report
    monkeypatch.setattr(exact._Timed, "on_round", on_round)
    monkeypatch.setattr(search._Search, "fallback", lambda self, *a, **k: False)
    res = solve_gap(inst, time_limit=0.3, seed=0)
    assert res.iterations["solver_started"] == 1
    assert res.assignment is not None, res.message
    assert verify_gap(inst, res.assignment).feasible
    assert res.objective == pytest.approx(best)


@pytest.mark.parametrize("kind,seed", [("c", 0), ("d", 1), ("d", 4)])
def test_a_slow_lp_does_not_change_the_start(monkeypatch, kind, seed) -> None:
    """The LP made slow (a sleep of half the limit before it, as a loaded machine makes
    it): the size rule alone chose it (``heuristic._LP_CAP_SHARE``), so the call starts
    from the rounded LP all the same and, by counted work (``iterations``), ends at the
    undelayed call's assignment; with the cap at ``_LP_SHARE`` of the limit (before
    h59gap) the clock cut the LP and the search started from the greedy."""
    from coalloc.loadshare import generate_gap
    from coalloc.loadshare.gap import heuristic

    inst = generate_gap(kind, 5, 50, seed=seed)
    limit, its = 1.0, 300
    ref = solve_gap(inst, "heuristic", time_limit=limit, seed=seed, iterations=its)
    real = heuristic.lp_relaxation
    cut = []

    def slow(*args, **kwargs):
        time.sleep(0.5 * limit)  # past _LP_SHARE (0.4) of the limit, before the cap (0.8)
        try:
            return real(*args, **kwargs)
        except heuristic.LpTimedOut:
            cut.append(1)
            raise

    monkeypatch.setattr(heuristic, "lp_relaxation", slow)
    res = solve_gap(inst, "heuristic", time_limit=limit, seed=seed, iterations=its)
    assert not cut
    assert np.array_equal(res.assignment, ref.assignment)
    monkeypatch.setattr(heuristic, "_LP_CAP_SHARE", None)  # the clock's cap: cut
    solve_gap(inst, "heuristic", time_limit=limit, seed=seed, iterations=its)
    assert cut
