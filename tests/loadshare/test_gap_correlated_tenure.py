"""The tabu tenure of timed GAP calls on instances whose costs fall as the weights grow
(issue 40, h46gap40: ``search._CORRELATED_TENURE`` below the correlation
``search._CORRELATED``); untimed calls keep the package's tenure."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.search import cost_weight_correlation
from coalloc.loadshare.gap.tabu import _TENURE, TabuState


@pytest.mark.parametrize("kind, low, high", [("d", -1.0, -0.9), ("c", -0.3, 0.3),
                                             ("a", -0.3, 0.3)])  # fmt: skip
def test_the_correlation_is_numpys_and_separates_type_d(kind, low, high):
    """The coefficient equals NumPy's ``corrcoef`` (an independent referee) and puts the
    generated type d below the threshold, a and c far above it."""
    inst = generate_gap(kind, 10, 100, seed=3)
    r = cost_weight_correlation(inst.cost, inst.weight)
    ref = np.corrcoef(inst.cost.ravel(), inst.weight.ravel().astype(float))[0, 1]
    assert r == pytest.approx(ref, abs=1e-12)
    assert low <= r <= high


def test_constant_costs_or_weights_give_zero():
    w = np.array([[1, 2], [3, 4]])
    assert cost_weight_correlation(np.ones((2, 2)), w) == 0.0
    assert cost_weight_correlation(w.astype(float), np.full((2, 2), 7)) == 0.0
    assert cost_weight_correlation(np.ones((1, 1)), np.ones((1, 1))) == 0.0


@pytest.fixture
def tenures(monkeypatch):
    """The rule on (tenure 3), and the tenures every kernel call ran with."""
    monkeypatch.setattr(gap.search, "_CORRELATED_TENURE", 3)
    seen = []
    real = TabuState.run

    def spy(self, cost, weight, capacity, iterations, knobs, until=None):
        seen.append(knobs.tenure)
        return real(self, cost, weight, capacity, iterations, knobs, until)

    monkeypatch.setattr(TabuState, "run", spy)
    return seen


@pytest.mark.parametrize("kind, want", [("d", 3), ("c", _TENURE)])
def test_timed_calls_take_the_tenure_on_correlated_instances(tenures, kind, want):
    """Timed: type d runs every tabu round at tenure 3, type c at the package's; both
    answers check out."""
    inst = generate_gap(kind, 6, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert tenures and set(tenures) == {want}


def test_untimed_calls_keep_the_package_tenure(tenures):
    """Untimed, type d: the package's tenure, the answer of the rule off, deterministic."""
    inst = generate_gap("d", 6, 60, seed=2)
    on = solve_gap(inst, "heuristic", iterations=2000, seed=5)
    assert set(tenures) == {_TENURE}
    gap.search._CORRELATED_TENURE = 0
    off = solve_gap(inst, "heuristic", iterations=2000, seed=5)
    assert np.array_equal(on.assignment, off.assignment) and on.objective == off.objective
    assert verify_gap(inst, on.assignment, claimed=on.objective).ok
