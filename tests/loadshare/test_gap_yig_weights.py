"""The tabu kernel's penalty weights grown by each agent's excess (``per_agent=2``, the
rule of Yagiura, Ibaraki & Glover 2006; issue 40, h47gap): the compiled kernel against its
Python twin in exact parity, and the rule itself against the formula worked by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import _gapls
from coalloc.loadshare._reference import gapls as gtwin
from coalloc.loadshare.gap.tabu import TabuPlan, TabuState


def _data(rng, m, n):
    cost = rng.integers(-20, 50, size=(m, n)).astype(np.float64)
    weight = rng.integers(0, 30, size=(m, n)).astype(np.int64)
    cap = rng.integers(0, 15 * n // m + 5, size=m).astype(np.int64)
    return cost, weight, cap


def _state(start, m, seed):
    return TabuState.fresh(start, m, np.array([seed], dtype=np.uint64))


@settings(deadline=None, derandomize=True, max_examples=60)  # no timed assertions
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 14), st.integers(0, 60),
       st.integers(0, 40), st.sampled_from([0, 1, 2]), st.sampled_from([1.05, 1.3]))  # fmt: skip
@example(seed=5, m=4, n=12, first=30, second=20, chain=2, growth=1.3)
def test_kernel_and_twin_leave_the_same_state(seed, m, n, first, second, chain, growth):
    """Two calls (a resumed search) of kernel and twin with the YIG weights leave the same
    arrays, floats included; the state's costs are its assignments' costs."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n)
    start = rng.integers(0, m, size=n).astype(np.int64)
    ends = []
    for mod in (_gapls, gtwin):
        state = _state(start, m, seed)
        done = [
            mod.tabu_search(
                cost, weight, cap, state, TabuPlan(k, 3, 7, 4, growth, 0, 2, chain)
            )  # fmt: skip
            for k in (first, second)
        ]
        ends.append((done, state))
    (d0, s0), (d1, s1) = ends
    assert d0 == d1
    for name in ("assign", "best", "alpha", "tabu_until", "istate", "dstate", "rng"):
        np.testing.assert_array_equal(getattr(s0, name), getattr(s1, name), err_msg=name)
    assert s0.current_cost == pytest.approx(cost[s0.assign, np.arange(n)].sum(), abs=1e-6)
    if s0.feasible:
        used = np.bincount(s0.best, weights=weight[s0.best, np.arange(n)], minlength=m)
        assert np.all(used <= cap)


@pytest.mark.parametrize("mod", [_gapls, gtwin])
def test_one_iteration_grows_each_weight_by_its_share_of_the_largest_excess(mod):
    """Three agents, every item of weight 10 on agent 0 (room 10) and two on agent 1 (room
    10), agent 2 empty with no room: after one iteration that leaves the assignment
    overloaded, each overloaded agent's weight is the first weight times ``1 + (g - 1)
    e_i / max e``, the others' unchanged (the rule worked by hand from the loads the
    iteration left)."""
    m, n, g = 3, 5, 1.3
    cost = np.array([[0.0] * n, [0.0] * n, [1e6] * n])
    weight = np.full((m, n), 10, dtype=np.int64)
    cap = np.array([10, 10, 0], dtype=np.int64)
    start = np.array([0, 0, 0, 1, 1], dtype=np.int64)
    state = _state(start, m, 11)
    assert mod.tabu_search(cost, weight, cap, state, TabuPlan(1, 5, 100, 100, g, 0, 2, 0)) == 1
    a0 = state.first_weight
    used = np.bincount(state.assign, weights=weight[state.assign, np.arange(n)], minlength=m)
    excess = np.maximum(used - cap, 0)
    assert excess.sum() > 0 and excess[2] == 0  # still overloaded; agent 2 never used
    want = np.where(excess > 0, a0 * (1.0 + (g - 1.0) * excess / excess.max()), a0)
    np.testing.assert_allclose(state.alpha, want, rtol=1e-12)
    assert len(set(excess[excess > 0].tolist())) > 1  # two different shares: not all alike


def test_mode_two_differs_from_the_overloaded_rule():
    """The same search with ``per_agent`` 1 and 2 ends with different weights: the new
    rule is not the old one under another name."""
    rng = np.random.default_rng(3)
    cost, weight, cap = _data(rng, 4, 12)
    start = rng.integers(0, 4, size=12).astype(np.int64)
    alphas = []
    for per_agent in (1, 2):
        state = _state(start, 4, 3)
        _gapls.tabu_search(cost, weight, cap, state, TabuPlan(40, 3, 7, 4, 1.3, 0, per_agent, 1))
        alphas.append(state.alpha.copy())
    assert not np.array_equal(alphas[0], alphas[1])
