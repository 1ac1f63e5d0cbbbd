"""The GAP heuristic's time-aware core cycles (issue 40, ``search._AUTO_CYCLES``): a timed
call with the LP solved and ``cycles`` not asked for runs K core cycles when the rest of
its limit holds K cycles of ``_AUTO_CYCLE_ITERATIONS`` at the speed measured on the core;
untimed calls never do."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import pytest

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import search
from coalloc.loadshare.gap.search import _Search
from coalloc.loadshare.gap.tabu import TabuState


@pytest.fixture
def auto(monkeypatch):
    """The rule on (K at most 3, no share kept for the search afresh), its threshold set
    by the test."""
    monkeypatch.setattr(gap.search, "_AUTO_CYCLES", 3)
    monkeypatch.setattr(gap.search, "_AUTO_FRESH", 0.0)

    def threshold(value):
        monkeypatch.setattr(gap.search, "_AUTO_CYCLE_ITERATIONS", value)

    return threshold


@pytest.mark.parametrize("threshold, want", [(8000, 0), (3000, 2), (2000, 3), (1000, 3), (0, 3)])
def test_the_rule_counts_the_cycles_the_time_left_holds(auto, threshold, want):
    """1000 iterations a second and 10 s left: the cycles' share (0.5 / 0.7 of what follows
    the core) holds about 7,140 iterations; K is that over the threshold, at most
    ``_AUTO_CYCLES``, and 0 when fewer than 2 (a threshold of 0: ``_AUTO_CYCLES``)."""
    auto(threshold)
    stub = SimpleNamespace(deadline=time.perf_counter() + 10.0, core_share=search._CORE_SHARE)
    assert _Search.auto_cycles(stub, 1000.0) == want
    assert _Search.auto_cycles(stub, 0.0) == 0  # no speed measured: no cycles
    stub.deadline = None  # untimed: never
    assert _Search.auto_cycles(stub, 1000.0) == 0


def test_the_fresh_share_keeps_the_search_afresh_after_the_cycles():
    """``_AUTO_FRESH``: the cycles end that share of their time early, and the search afresh
    on every pair (the true costs, not from the incumbent) runs to the end."""
    cost = np.zeros((2, 3))
    plain = gap.search._cycle_phases(cost, 2)
    beside = gap.search._cycle_phases(cost, 2, 0.4)
    assert [p[1] for p in plain][-1] == 1.0 and len(beside) == len(plain) + 1
    end = 1.0 - 0.4 * (1.0 - gap.search._CYCLE_FROM)
    assert beside[-2][0] == "cycle-full" and beside[-2][1] == pytest.approx(end)
    assert beside[-1][0] is cost and beside[-1][1:] == (1.0, False)
    ends = [p[1] for p in beside]
    assert ends == sorted(ends)  # the phases follow one another


def test_untimed_calls_never_take_the_rule(auto):
    """Untimed, the answer and the iterations are those of the rule off, whatever the
    threshold."""
    auto(1)
    inst = generate_gap("d", 10, 100, seed=4)
    on = solve_gap(inst, "heuristic", iterations=3000, seed=2)
    gap.search._AUTO_CYCLES = 0
    off = solve_gap(inst, "heuristic", iterations=3000, seed=2)
    assert on.iterations["core_cycles"] == off.iterations["core_cycles"] == 0
    assert np.array_equal(on.assignment, off.assignment) and on.objective == off.objective
    assert verify_gap(inst, on.assignment, claimed=on.objective).ok


@pytest.mark.parametrize("threshold", [1, 10**12])
def test_timed_calls_take_the_cycles_when_the_time_holds_them(auto, threshold):
    """Timed (the LP fits the limit, the heuristic alone): a threshold of one iteration
    gives K = 3 cycles, one beyond any speed none; the answer checks out either way and
    ``params`` does not record the rule (the call did not ask for cycles)."""
    auto(threshold)
    inst = generate_gap("d", 8, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=2.0, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert "cycles" not in res.params
    assert res.iterations["core_iterations"] > 0  # the core phase ran: the rule was asked
    if threshold > 1:
        assert res.iterations["core_cycles"] == 0
    elif res.status != "optimal":  # a bound that proves the answer ends the search early
        assert res.iterations["core_cycles"] == 3


@pytest.fixture
def fresh_count(monkeypatch):
    """How many searches (phases) the run sets up afresh."""
    count = []
    orig = TabuState.fresh.__func__

    def fresh(cls, start, m, rng):
        count.append(1)
        return orig(cls, start, m, rng)

    monkeypatch.setattr(TabuState, "fresh", classmethod(fresh))
    return count


def test_the_fresh_search_needs_the_time_for_its_iterations(monkeypatch):
    """``fresh_fits``: the speed since the mark times the time left, against
    ``_FRESH_MIN_ITERATIONS``."""
    monkeypatch.setattr(gap.search, "_FRESH_MIN_ITERATIONS", 3000)
    now = time.perf_counter()
    stub = SimpleNamespace(done=1000, deadline=now + 10.0)  # 1000 in 1 s, 10 s left: 10,000
    assert _Search.fresh_fits(stub, 0, now - 1.0)
    stub.deadline = now + 1.0  # 1,000 left
    assert not _Search.fresh_fits(stub, 0, now - 1.0)


@pytest.mark.parametrize("least", [0, 10**12])
def test_a_timed_call_skips_the_fresh_search_without_the_time(monkeypatch, fresh_count, least):
    """Timed: a threshold beyond any speed leaves the search from the core's best on to the
    end (two searches set up: the core's and that one), a threshold of 0 runs the three
    phases; untimed calls run the three whatever the threshold; answers check out."""
    monkeypatch.setattr(gap.search, "_FRESH_MIN_ITERATIONS", least)
    monkeypatch.setattr(gap.search, "_AUTO_CYCLES", 0)  # the three phases, no cycles
    inst = generate_gap("d", 8, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=2.0, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    if res.status != "optimal":  # a bound that proves the answer ends the search early
        assert len(fresh_count) == (2 if least else 3)
    fresh_count.clear()
    res = solve_gap(inst, "heuristic", iterations=3000, seed=0)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    if res.status != "optimal":
        assert len(fresh_count) == 3


def test_the_default_timed_call_runs_two_cycles_beside_the_search_afresh(fresh_count):
    """The default (``_AUTO_CYCLES`` 2, threshold 0, ``_AUTO_FRESH`` 0.4), timed: the core
    phase, the search from its best, two cycles of two searches each, then the search
    afresh on every pair: seven searches set up; untimed: the three phases as before."""
    assert (gap.search._AUTO_CYCLES, gap.search._AUTO_CYCLE_ITERATIONS) == (2, 0)
    inst = generate_gap("d", 8, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=2.0, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert "cycles" not in res.params
    if res.status != "optimal":  # a bound that proves the answer ends the search early
        assert res.iterations["core_cycles"] == 2 and len(fresh_count) == 7
    fresh_count.clear()
    res = solve_gap(inst, "heuristic", iterations=3000, seed=0)
    assert res.iterations["core_cycles"] == 0
    if res.status != "optimal":
        assert len(fresh_count) == 3
