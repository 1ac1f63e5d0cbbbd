"""The GAP search's two restart knobs of issue 40 (h46gap40), both off by default:
restarts from elite assignments (``search._ELITE_RESTART``, made by the search through
:meth:`TabuState.restart_from`) and the learned restart weight (``search._LEARN_WEIGHT``,
:attr:`TabuState.restart_weight`). Timed calls only unless their ``_UNTIMED`` switch is
set; untimed answers are unchanged otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.tabu import TabuKnobs, TabuState


def _arrays(inst):
    return (np.ascontiguousarray(inst.cost), np.ascontiguousarray(inst.weight),
            np.ascontiguousarray(inst.capacity))  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_restart_from_sets_the_state_the_kernel_resumes(seed):
    """After a caller's restart the state holds the given assignment at its cost, every
    weight at the restart weight, no iteration since a new best, and the old best; the
    kernel resumes from it with a current cost that is still the assignment's (a wrong
    cost slot would drift)."""
    inst = generate_gap("d", 5, 40, seed=seed)
    cost, weight, cap = _arrays(inst)
    rng = np.random.default_rng(seed)
    state = TabuState.fresh(rng.integers(0, 5, size=40).astype(np.int64), 5,
                            np.array([seed + 7], dtype=np.uint64))  # fmt: skip
    knobs = TabuKnobs.default(40)
    state.run(cost, weight, cap, 300, knobs)
    best = state.best.copy()
    state.restart_weight = 3.25
    x = rng.integers(0, 5, size=40).astype(np.int64)
    state.restart_from(x, cost)
    cols = np.arange(40)
    assert np.array_equal(state.assign, x) and np.array_equal(state.best, best)
    assert state.current_cost == pytest.approx(cost[x, cols].sum())
    assert np.all(state.alpha == 3.25) and state.since_best == 0
    state.run(cost, weight, cap, 200, knobs)
    assert state.current_cost == pytest.approx(cost[state.assign, cols].sum())
    assert state.restart_weight == 3.25


@pytest.fixture
def restore():
    """Every knob the tests set, put back after."""
    names = ("_ELITE_RESTART", "_ELITE_UNTIMED", "_LEARN_WEIGHT", "_LEARN_UNTIMED")
    old = {k: getattr(gap.search, k) for k in names}
    yield
    for k, v in old.items():
        setattr(gap.search, k, v)


def test_untimed_calls_ignore_the_knobs_without_their_switch(restore):
    """Untimed, the knobs alone change nothing: same assignment as with them off."""
    inst = generate_gap("d", 8, 80, seed=3)
    off = solve_gap(inst, "heuristic", iterations=4000, seed=1)
    gap.search._ELITE_RESTART, gap.search._LEARN_WEIGHT = 6, 0.2
    on = solve_gap(inst, "heuristic", iterations=4000, seed=1)
    assert np.array_equal(on.assignment, off.assignment) and on.objective == off.objective


@pytest.mark.parametrize("knob", ["elite", "learn"])
def test_the_knobs_are_deterministic_by_seed_and_verified(restore, monkeypatch, knob):
    """With the untimed switch on: two calls of one seed give one answer, the answer keeps
    every capacity (verify_gap), and the knob acted (restarts from the pool made; the
    restart weight moved off the first weight)."""
    if knob == "elite":
        gap.search._ELITE_RESTART, gap.search._ELITE_UNTIMED = 6, True
    else:
        gap.search._LEARN_WEIGHT, gap.search._LEARN_UNTIMED = 0.2, True
    made, weights = [], []
    real_restart, real_learn = TabuState.restart_from, gap.search._Search.learn

    def spy_restart(self, assign, cost):
        made.append(1)
        real_restart(self, assign, cost)

    def spy_learn(self, state):
        real_learn(self, state)
        weights.append((state.restart_weight, self.a0))

    monkeypatch.setattr(TabuState, "restart_from", spy_restart)
    monkeypatch.setattr(gap.search._Search, "learn", spy_learn)
    inst = generate_gap("d", 8, 80, seed=5)
    a = solve_gap(inst, "heuristic", iterations=6000, seed=4)
    b = solve_gap(inst, "heuristic", iterations=6000, seed=4)
    assert np.array_equal(a.assignment, b.assignment) and a.objective == b.objective
    assert verify_gap(inst, a.assignment, claimed=a.objective).ok
    if knob == "elite":
        assert made and not weights
    else:
        assert weights and not made
        assert any(abs(w - a0) > 1e-9 * a0 for w, a0 in weights)


def test_a_timed_call_with_the_knobs_checks_out(restore):
    """Timed (the knobs' own case), both on: a feasible, verified answer."""
    gap.search._ELITE_RESTART, gap.search._LEARN_WEIGHT = 6, 0.2
    inst = generate_gap("d", 6, 60, seed=2)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=0, with_bound=False)
    assert res.assignment is not None
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
