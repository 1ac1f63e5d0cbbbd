"""The tabu kernel's memory of visited assignments on timed GAP calls of instances whose
costs fall as the weights grow (issue 40, h57gap: ``search._CORRELATED_MEMO`` below the
correlation ``search._CORRELATED``); untimed calls keep the package's (``tabu._MEMO``)."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import tabu
from coalloc.loadshare.gap.tabu import TabuState


@pytest.fixture
def knobs_seen(monkeypatch):
    """``watch(field)``: the list of that knob's value in every tabu kernel call from now on."""

    def watch(field: str) -> list:
        seen: list = []
        real = TabuState.run

        def spy(self, cost, weight, capacity, iterations, knobs, until=None):
            seen.append(getattr(knobs, field))
            return real(self, cost, weight, capacity, iterations, knobs, until)

        monkeypatch.setattr(TabuState, "run", spy)
        return seen

    return watch


@pytest.fixture
def memos(monkeypatch, knobs_seen):
    """The rule on (memo 1), and the memo every kernel call ran with."""
    monkeypatch.setattr(gap.search, "_CORRELATED_MEMO", 1)
    return knobs_seen("memo")


@pytest.mark.parametrize("kind, want", [("d", 1), ("c", tabu._MEMO)])
def test_timed_calls_take_the_memo_on_correlated_instances(memos, kind, want):
    """Timed: type d runs every tabu round with the memory, type c with the package's;
    both answers check out."""
    inst = generate_gap(kind, 6, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert memos and set(memos) == {want}


def test_untimed_calls_keep_the_package_memo(memos, monkeypatch):
    """Untimed, type d: the package's memo, the answer of the rule off, deterministic."""
    inst = generate_gap("d", 6, 60, seed=2)
    on = solve_gap(inst, "heuristic", iterations=2000, seed=5)
    assert set(memos) == {tabu._MEMO}
    monkeypatch.setattr(gap.search, "_CORRELATED_MEMO", 0)
    off = solve_gap(inst, "heuristic", iterations=2000, seed=5)
    assert np.array_equal(on.assignment, off.assignment) and on.objective == off.objective
    assert verify_gap(inst, on.assignment, claimed=on.objective).ok


def test_the_memo_on_every_call_still_verifies(monkeypatch):
    """With the memory on everywhere (``tabu._MEMO`` 2 and 1), untimed answers are
    deterministic and pass ``verify_gap``; the same seed gives the same answer."""
    inst = generate_gap("d", 8, 80, seed=4)
    for memo in (1, 2):
        monkeypatch.setattr(tabu, "_MEMO", memo)
        a = solve_gap(inst, "heuristic", iterations=3000, seed=1)
        b = solve_gap(inst, "heuristic", iterations=3000, seed=1)
        assert np.array_equal(a.assignment, b.assignment) and a.objective == b.objective
        assert verify_gap(inst, a.assignment, claimed=a.objective).ok


@pytest.mark.parametrize("kind, base", [("d", 77), ("c", 0)])
def test_timed_calls_take_the_restart_base_on_correlated_instances(
    monkeypatch, knobs_seen, kind, base
):
    """``search._CORRELATED_RESTART``: timed rounds on type d start the restart rule at
    its value, type c at the package's ``tabu._RESTART``; both answers check out."""
    monkeypatch.setattr(gap.search, "_CORRELATED_RESTART", 77)
    seen = knobs_seen("restart")
    inst = generate_gap(kind, 6, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert seen and min(seen) == (base or tabu._RESTART)


def test_restart_after_takes_a_base():
    """The rule's first threshold is ``base`` (0: ``tabu._RESTART``); the growth is the same."""
    assert tabu.restart_after(50, 0, 77) == 77
    assert tabu.restart_after(50, 0, 0) == tabu._RESTART
    assert tabu.restart_after(50, 600_000, 77) == tabu.restart_after(50, 600_000)


def test_restart_after_takes_a_divisor():
    """``div``: the growth's divisor (0: ``tabu._RESTART_DIV``); negative: no growth."""
    done = 600_000
    assert tabu.restart_after(50, done, 0, 0) == tabu.restart_after(50, done)
    assert tabu.restart_after(50, done, 0, -1) == tabu._RESTART
    assert tabu.restart_after(50, done, 77, -1) == 77
    assert tabu.restart_after(50, done, 0, 1000) == done // 1000
    assert tabu.restart_after(50, done, 0, 1000) != tabu.restart_after(50, done, 0, 60)


@pytest.mark.parametrize("kind, grows", [("d", False), ("c", True)])
def test_timed_calls_take_the_restart_divisor_on_correlated_instances(
    monkeypatch, knobs_seen, kind, grows
):
    """``search._CORRELATED_RESTART_DIV`` -1: timed rounds on type d keep the restart
    rule's first threshold however many iterations have run; type c's grows (the package's
    growth, made fast here: ``tabu._RESTART_DIV`` 1); both answers check out."""
    monkeypatch.setattr(gap.search, "_CORRELATED_RESTART_DIV", -1)
    monkeypatch.setattr(tabu, "_RESTART_DIV", 1)
    monkeypatch.setattr(gap.search, "_PROOF_PAIRS", 0)  # (h63prog's programme proves type c)
    seen = knobs_seen("restart")
    inst = generate_gap(kind, 6, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert res.iterations["tabu_iterations"] > 2 * tabu._RESTART_STEP
    assert seen and (max(seen) > tabu._RESTART) == grows
    assert min(seen) == tabu._RESTART
