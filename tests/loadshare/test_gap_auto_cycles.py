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
from coalloc.loadshare.gap.search import _Search


@pytest.fixture
def auto(monkeypatch):
    """The rule on (K at most 3), its threshold set by the test."""
    monkeypatch.setattr(gap.search, "_AUTO_CYCLES", 3)

    def threshold(value):
        monkeypatch.setattr(gap.search, "_AUTO_CYCLE_ITERATIONS", value)

    return threshold


@pytest.mark.parametrize("threshold, want", [(8000, 0), (3000, 2), (2000, 3), (1000, 3), (0, 3)])
def test_the_rule_counts_the_cycles_the_time_left_holds(auto, threshold, want):
    """1000 iterations a second and 10 s left: the cycles' share (0.5 / 0.7 of what follows
    the core) holds about 7,140 iterations; K is that over the threshold, at most
    ``_AUTO_CYCLES``, and 0 when fewer than 2 (a threshold of 0: ``_AUTO_CYCLES``)."""
    auto(threshold)
    stub = SimpleNamespace(deadline=time.perf_counter() + 10.0)
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
