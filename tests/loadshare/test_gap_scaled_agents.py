"""Per-agent penalty weights where the agents' weights differ in scale (h61heavy:
``tabu._SCALED_FROM``, ``tabu._SCALED_PER_AGENT``): the rule's statistic, where it fires,
and the answer it buys on the contract audit's heavy 10 x 80, refereed by the exact
method; no timed assertion."""

from __future__ import annotations

import numpy as np
import pytest
from bench.shared.audit_cases import gap_heavy

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.tabu import TabuKnobs, TabuState, weight_scale


def test_the_scale_is_the_largest_mean_weight_over_the_least():
    w = np.array([[5, 15, 10], [1, 3, 2], [2, 2, 2]])
    assert weight_scale(w) == pytest.approx(10.0 / 2.0)
    assert weight_scale(np.ones((1, 4))) == 1.0  # one agent
    assert weight_scale(np.ones((3, 0))) == 1.0  # no items
    assert weight_scale(np.array([[0, 0], [1, 2]])) == float("inf")


@pytest.mark.parametrize("kind", ["a", "b", "c", "d"])
def test_generated_families_stay_below_the_threshold_heavy_is_above(kind):
    """The published families' generators (agents alike) never take the rule; the heavy
    generator (a third of the agents 5x heavier) does."""
    assert weight_scale(generate_gap(kind, 10, 100, seed=4).weight) < gap.tabu._SCALED_FROM
    assert weight_scale(gap_heavy(10, 80, 5, 1.2).weight) > gap.tabu._SCALED_FROM
    assert TabuKnobs.default(80, gap_heavy(10, 80, 5, 1.2).weight).per_agent == (
        gap.tabu._SCALED_PER_AGENT)
    assert TabuKnobs.default(100, generate_gap(kind, 10, 100, seed=4).weight).per_agent == (
        gap.tabu._PER_AGENT)


def _heavy(monkeypatch, scaled_from):
    monkeypatch.setattr(gap.tabu, "_SCALED_FROM", scaled_from)
    seen = []
    real = TabuState.run

    def run(self, cost, weight, cap, iterations, knobs, *args, **kwargs):
        seen.append(knobs.per_agent)
        return real(self, cost, weight, cap, iterations, knobs, *args, **kwargs)

    monkeypatch.setattr(TabuState, "run", run)
    inst = gap_heavy(10, 80, 5, 1.2)
    res = solve_gap(inst, "heuristic", iterations=1500, seed=0)
    monkeypatch.undo()
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    return res.objective, seen


def test_heavy_agents_reach_the_exact_optimum_only_with_the_rule(monkeypatch):
    """Untimed, 1,500 iterations, seed 0: with the rule the search's kernel runs with the
    per-agent weights and ends at the exact method's proven optimum (1851); with it off
    (one weight for all), strictly above it (1911 when measured)."""
    inst = gap_heavy(10, 80, 5, 1.2)
    exact = solve_gap(inst, "exact")
    assert exact.status == "optimal"
    assert verify_gap(inst, exact.assignment, claimed=exact.objective).ok
    on, seen_on = _heavy(monkeypatch, 2.5)
    off, seen_off = _heavy(monkeypatch, float("inf"))
    assert gap.tabu._SCALED_PER_AGENT in seen_on
    assert set(seen_off) == {gap.tabu._PER_AGENT}
    assert on == pytest.approx(exact.objective)
    assert off > exact.objective + 1e-6
