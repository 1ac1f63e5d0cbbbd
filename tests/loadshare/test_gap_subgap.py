"""Exact re-optimisation of agent sets (issue 40, h48gaplns: ``gap/subgap.py``): the
dynamic programme against brute force and CP-SAT, ``intensify`` against ``verify_gap``,
and the search's knob (``search._SUBGAP``, off by default)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import GapInstance, gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.subgap import intensify, solve_subgap, sub_multipliers


def brute(cost, weight, cap):
    """The least cost over every assignment within the capacities (None: none)."""
    k, s = cost.shape
    best = None
    for to in itertools.product(range(k), repeat=s):
        to = np.array(to, dtype=np.int64)
        load = np.bincount(to, weights=weight[to, np.arange(s)], minlength=k)
        if np.all(load <= cap):
            z = float(cost[to, np.arange(s)].sum())
            best = z if best is None or z < best else best
    return best


@st.composite
def subproblems(draw):
    k = draw(st.integers(1, 3))
    s = draw(st.integers(0, 7))
    cost = np.array(draw(st.lists(st.integers(-20, 20), min_size=k * s, max_size=k * s)),
                    dtype=np.float64).reshape(k, s)  # fmt: skip
    weight = np.array(draw(st.lists(st.integers(0, 9), min_size=k * s, max_size=k * s)),
                      dtype=np.int64).reshape(k, s)  # fmt: skip
    cap = np.array(draw(st.lists(st.integers(0, 25), min_size=k, max_size=k)), dtype=np.int64)
    lam = np.array(draw(st.lists(st.floats(0, 5), min_size=k, max_size=k)))
    slack = draw(st.sampled_from([None, -1.0, 0.0, 1.0]))
    return cost, weight, cap, lam, slack


def check(cost, weight, cap, got, z):
    to, val = got
    s = cost.shape[1]
    load = np.bincount(to, weights=weight[to, np.arange(s)], minlength=cost.shape[0])
    assert np.all(load <= cap)
    assert float(cost[to, np.arange(s)].sum()) == pytest.approx(val)
    assert val == pytest.approx(z)


@settings(deadline=None, derandomize=True, max_examples=300)
@given(subproblems())
def test_the_programme_is_brute_forces_optimum(case):
    """Any multipliers (the pruning bound is valid for all), with no bound or a bound just
    above, at or below the optimum: the optimum when one is below the bound, else None."""
    cost, weight, cap, lam, slack = case
    z = brute(cost, weight, cap)
    bound = np.inf if slack is None or z is None else z + slack
    got = solve_subgap(cost, weight, cap, bound, lam)
    if z is None or not z < bound:
        assert got is None
    else:
        assert got is not None
        check(cost, weight, cap, got, z)


@pytest.mark.parametrize("kind, seed", [("d", 1), ("c", 2), ("d", 3)])
def test_the_programme_is_cpsats_optimum(kind, seed):
    """Three agents, 18 items (beyond brute force): CP-SAT's proven optimum (the family's
    exact method), with the multipliers of a few subgradient steps and a bound 5 above the
    optimum (as the search asks: below the incumbent; unbounded, the load vectors alone
    pass the state budget here)."""
    inst = generate_gap(kind, 3, 18, seed=seed)
    ref = solve_gap(inst, "exact", seed=0)
    assert ref.status == "optimal"
    lam = sub_multipliers(inst.cost, inst.weight, inst.capacity, ref.objective + 5.0)
    got = solve_subgap(inst.cost, inst.weight, inst.capacity, ref.objective + 5.0, lam)
    assert got is not None
    check(inst.cost, inst.weight, inst.capacity, got, ref.objective)
    assert verify_gap(inst, got[0], claimed=ref.objective).ok


def test_a_budget_too_small_gives_up():
    inst = generate_gap("d", 3, 18, seed=1)
    assert solve_subgap(inst.cost, inst.weight, inst.capacity, max_states=2) is None


@pytest.mark.parametrize("k, steps", [(2, 30), (3, 30), (3, 0)])
def test_intensify_keeps_capacities_and_never_worsens(k, steps):
    """From a feasible but poor assignment (the capacity shares' greedy): feasible, never
    costlier, strictly cheaper here, and the same from the same draws (``steps`` 0: the
    multipliers as given, not refined per set)."""
    inst = generate_gap("c", 6, 36, seed=4)
    share = inst.weight / inst.capacity[:, None]
    x = gap.search.reduced_cost_greedy(share, inst.weight, inst.capacity, np.zeros(inst.m))
    before = verify_gap(inst, x)
    assert before.ok
    lam = sub_multipliers(inst.cost, inst.weight, inst.capacity, float(before.objective))
    y, improved, tried = intensify(inst.cost, inst.weight, inst.capacity, x, lam, k, None,
                                   np.random.default_rng(0), steps=steps)  # fmt: skip
    after = verify_gap(inst, y)
    assert after.ok and tried > 0
    assert improved > 0 and after.objective < before.objective
    y2, _, _ = intensify(inst.cost, inst.weight, inst.capacity, x, lam, k, None,
                         np.random.default_rng(0), steps=steps)  # fmt: skip
    assert np.array_equal(y, y2)


def test_three_agents_of_three_is_the_optimum():
    """With m = 3 the one set of three agents frees every item: the instance's optimum
    (CP-SAT's, proven)."""
    inst = generate_gap("d", 3, 12, seed=5)
    ref = solve_gap(inst, "exact", seed=0)
    assert ref.status == "optimal"
    share = inst.weight / inst.capacity[:, None]
    x = gap.search.reduced_cost_greedy(share, inst.weight, inst.capacity, np.zeros(3))
    start = verify_gap(inst, x)
    assert start.ok
    lam = sub_multipliers(inst.cost, inst.weight, inst.capacity, float(start.objective))
    y, _, tried = intensify(inst.cost, inst.weight, inst.capacity, x, lam, 3, None,
                            np.random.default_rng(1))  # fmt: skip
    assert tried == 1
    assert verify_gap(inst, y, claimed=ref.objective).ok


def test_infeasible_sets_are_left_alone():
    """Agents with no room for their items' alternatives: nothing changes."""
    inst = GapInstance([[1.0, 1.0], [0.0, 0.0]], [[1, 1], [5, 5]], [2, 4])
    y, improved, _ = intensify(inst.cost, inst.weight, inst.capacity, np.array([0, 0]),
                               np.zeros(2), 2, None, np.random.default_rng(0))  # fmt: skip
    assert improved == 0 and np.array_equal(y, [0, 0])


@pytest.fixture
def subgap_on(monkeypatch):
    monkeypatch.setattr(gap.search, "_SUBGAP", 3)


def test_untimed_calls_never_take_it(subgap_on):
    """The knob on, untimed: the answer of the knob off, and no count reported."""
    inst = generate_gap("d", 8, 80, seed=2)
    on = solve_gap(inst, "heuristic", iterations=4000, seed=1, with_bound=False)
    gap.search._SUBGAP = 0
    off = solve_gap(inst, "heuristic", iterations=4000, seed=1, with_bound=False)
    assert np.array_equal(on.assignment, off.assignment)
    assert "subgap_sets" not in on.iterations


def test_the_search_with_it_is_checked_and_seeded(subgap_on, monkeypatch):
    """Untimed with ``_SUBGAP_UNTIMED`` (load-free): sets are re-optimised, the answer
    passes ``verify_gap``, and the same seed gives the same answer."""
    monkeypatch.setattr(gap.search, "_SUBGAP_UNTIMED", True)
    inst = generate_gap("d", 8, 80, seed=2)
    a = solve_gap(inst, "heuristic", iterations=4000, seed=1, with_bound=False)
    b = solve_gap(inst, "heuristic", iterations=4000, seed=1, with_bound=False)
    assert verify_gap(inst, a.assignment, claimed=a.objective).ok
    assert a.iterations["subgap_sets"] > 0
    assert np.array_equal(a.assignment, b.assignment) and a.iterations == b.iterations


def test_a_timed_call_with_it_is_checked(subgap_on):
    inst = generate_gap("d", 10, 100, seed=6)
    res = solve_gap(inst, "heuristic", time_limit=0.3, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
