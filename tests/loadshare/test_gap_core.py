"""The GAP heuristic's core phase (issue 27): the LP's reduced costs, the core they cut out,
and the three searches (core, every pair from the core's best, every pair afresh)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap


@settings(max_examples=25, deadline=None)
@given(st.sampled_from("abcd"), st.integers(2, 6), st.integers(4, 30), st.integers(0, 999),
       st.sampled_from(["min", "max"]), st.booleans())  # fmt: skip
def test_lp_reduced_costs_are_dual_feasible_and_complementary(kind, m, n, seed, sense, assign_all):
    """The reduced costs read from HiGHS's duals satisfy the LP's optimality conditions
    against its own primal solution: at least 0 where ``x_ij = 0``, 0 where it is
    fractional, at most 0 where it is 1; ``+inf`` exactly where the item does not fit; the
    dummy agent's (items may stay out) at least 0, and 0 where its row has slack. A wrong
    sign or a swapped dual block breaks them."""
    inst = generate_gap(kind, m, n, seed=seed)
    bound, x, rc = gap.bounds.lp_relaxation(inst, sense, assign_all)
    if bound is None:
        return
    sign = 1.0 if sense == "min" else -1.0
    tol = 1e-6 * (1.0 + float(np.abs(inst.cost).max()))
    fits = inst.weight <= inst.capacity[:, None]
    real = rc[:m]
    assert np.array_equal(np.isinf(real), ~fits)
    low, mid, high = x <= 1e-9, (x > 1e-9) & (x < 1 - 1e-9), x >= 1 - 1e-9
    assert np.all(real[fits & low] >= -tol)
    assert np.all(np.abs(real[fits & mid]) <= tol)
    assert np.all(real[fits & high] <= tol)
    # the LP value is sum(c x) in the caller's sense: the duals belong to that LP
    assert abs(sign * float((sign * inst.cost * x).sum()) - bound) <= 1.0 + tol
    if assign_all:
        assert rc.shape == (m, n)
    else:
        assert rc.shape == (m + 1, n)
        dummy = rc[m]
        assert np.all(dummy >= -tol)
        slack = 1.0 - x.sum(axis=0)
        assert np.all(np.abs(dummy[slack > 1e-9]) <= tol)


@settings(max_examples=15, deadline=None)
@given(st.sampled_from("abcd"), st.integers(3, 12), st.integers(20, 80), st.integers(0, 999),
       st.booleans())  # fmt: skip
def test_the_core_holds_the_lp_support_and_prices_the_rest_out(kind, m, n, seed, assign_all):
    inst = generate_gap(kind, m, n, seed=seed)
    bound, x, rc = gap.bounds.lp_relaxation(inst, "min", assign_all)
    if bound is None:
        return
    cost = inst.cost.astype(np.float64)
    if not assign_all:
        cost = np.vstack([cost, np.zeros((1, n))])
    core = gap.search.core_costs(cost, x, rc, assign_all, m)
    if core is None:  # nothing to cut: every pair that fits is in the core
        return
    inside = core == cost
    support = x > 1e-9
    if not assign_all:
        support = np.vstack([support, x.sum(axis=0) < 1 - 1e-9])
    assert np.all(inside[support])  # the rounded LP starts inside the core
    assert np.all(inside.any(axis=0))  # every item keeps an agent
    assert not np.all(inside)
    assert core[~inside].min() > 100 * np.abs(cost).max()  # out of reach of any real move
    finite = np.isfinite(rc)
    # the cut is a percentile of the positive reduced costs: every pair below it is in
    positive = rc[finite & (rc > 1e-9 * (np.abs(cost).max() + 1))]
    tau = np.percentile(positive, gap.search._CORE_PERCENTILE)
    assert np.all(inside[finite & (rc <= tau)])


def test_the_core_phase_takes_its_share_and_the_answer_checks_out():
    """Untimed, the core phase runs ``_CORE_SHARE`` of the iterations; the answer is a
    feasible assignment whose objective the referee recomputes, no worse than the rounded
    LP it started from when that one is feasible, and the same for the same seed."""
    inst = generate_gap("d", 10, 100, seed=4)
    res = solve_gap(inst, "heuristic", iterations=3000, seed=2)
    assert res.iterations["tabu_iterations"] == 3000
    assert res.iterations["core_iterations"] == int(gap.search._CORE_SHARE * 3000)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    _, x, _ = gap.bounds.lp_relaxation(inst, "min", True)
    start = np.argmax(x, axis=0)
    if verify_gap(inst, start).ok:
        assert res.objective <= inst.cost[start, np.arange(inst.n)].sum()
    again = solve_gap(inst, "heuristic", iterations=3000, seed=2)
    assert np.array_equal(again.assignment, res.assignment)


def test_timed_runs_report_their_core_phase():
    """Timed, the phases end on the clock (a limit generous enough for the LP, capped at
    0.4 of it, even on a loaded machine); the core phase's iterations are part of the
    total (all of it when the bound proves an assignment optimal within the core phase)."""
    inst = generate_gap("d", 8, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=1.0, seed=0)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert 0 < res.iterations["core_iterations"] <= res.iterations["tabu_iterations"]


def test_no_lp_no_core():
    """Without the LP (its share of the limit set to 0) there is no core phase."""
    inst = generate_gap("d", 5, 40, seed=0)
    old = gap.heuristic._LP_SHARE
    gap.heuristic._LP_SHARE = 0.0
    try:
        res = solve_gap(inst, "heuristic", time_limit=0.3, seed=0)
    finally:
        gap.heuristic._LP_SHARE = old
    assert res.iterations["core_iterations"] == 0
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok


def test_restart_threshold_grows_with_the_run_in_whole_steps():
    """200 iterations without a new best at first, then one in 60 of those done, counted
    in whole steps of 1000 (so every round inside a step uses the same rule)."""
    values = [gap.tabu.restart_after(100, d) for d in range(0, 400_000, 250)]
    assert values[0] == gap.tabu._RESTART == 200
    assert all(b >= a for a, b in zip(values, values[1:]))
    restart = gap.tabu.restart_after
    assert restart(100, 11_999) == 200 and restart(100, 12_000) == 200
    assert restart(100, 13_000) == 216 and restart(100, 13_999) == 216
    assert gap.tabu.restart_after(100, 300_000) == 5000


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 6), st.integers(4, 40), st.integers(0, 999), st.integers(0, 400))
def test_tabu_state_names_the_kernel_slots(m, n, seed, iterations):
    """Every named slot of ``TabuState`` reads what the kernel documents there: the costs
    of the current and best assignments, the excess of the best, the iterations done, the
    first weight the penalties restart from; a wrong index breaks one of them."""
    from coalloc.loadshare.gap.tabu import TabuKnobs, TabuState

    inst = generate_gap("d", m, n, seed=seed)
    cost = np.ascontiguousarray(inst.cost)
    weight = np.ascontiguousarray(inst.weight)
    cap = np.ascontiguousarray(inst.capacity)
    start = np.random.default_rng(seed).integers(0, m, size=n).astype(np.int64)
    state = TabuState.fresh(start, m, np.array([seed + 1], dtype=np.uint64))
    assert not state.started
    knobs = TabuKnobs.default(n)
    assert state.run(cost, weight, cap, 0, knobs) == 0
    assert state.started and state.iteration == 0 and np.array_equal(state.best, start)
    state.first_weight = 2.5
    assert np.all(state.alpha == 2.5)
    done = state.run(cost, weight, cap, iterations, knobs)
    assert state.iteration == done == iterations
    assert state.first_weight == 2.5
    cols = np.arange(n)
    assert state.current_cost == pytest.approx(cost[state.assign, cols].sum())
    assert state.best_cost == pytest.approx(cost[state.best, cols].sum())
    used = np.bincount(state.best, weights=weight[state.best, cols], minlength=m)
    excess = int(np.maximum(used - cap, 0).sum())
    assert state.best_excess == excess
    assert state.feasible == (excess == 0)
    assert 0 <= state.since_best <= max(knobs.restart, iterations)
