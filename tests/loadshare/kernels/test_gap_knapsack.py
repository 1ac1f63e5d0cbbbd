"""The knapsack Lagrangian of the GAP (the assignment rows relaxed) against its twin, and
its bound against brute force and the capacity relaxation's bound."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import _gapls
from coalloc.loadshare._reference import gapls as gtwin


def _data(rng, m, n):
    cost = rng.integers(-20, 50, size=(m, n)).astype(np.float64)
    weight = rng.integers(0, 30, size=(m, n)).astype(np.int64)
    cap = rng.integers(0, 15 * n // m + 5, size=m).astype(np.int64)
    weight[0] = np.minimum(weight[0], cap[0])  # every item fits agent 0
    return cost, weight, cap


def _state(u0, n):
    return [u0.copy(), np.zeros(n), np.zeros(n, np.int64), np.zeros(3), np.zeros(1, np.int64)]


def _knapsack_value(values, weights, cap):
    """Brute-force 0-1 knapsack (most value within ``cap``) and one best choice."""
    best, pick = 0.0, ()
    k = len(values)
    for r in range(k + 1):
        for sub in itertools.combinations(range(k), r):
            if sum(weights[t] for t in sub) <= cap:
                v = sum(values[t] for t in sub)
                if v > best:
                    best, pick = v, sub
    return best, pick


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 9), st.integers(1, 30),
       st.integers(0, 25))  # fmt: skip
def test_knapsack_lagrangian_parity_and_bound(seed, m, n, first, second):
    """Kernel and twin leave the same multipliers, cover and bound (floats too: the same
    arithmetic in one order); the bound is ``L(best_u)`` recomputed by brute-force
    knapsacks and lies below every feasible assignment's cost (brute force)."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n)
    u0 = rng.uniform(-10, 60, size=n).round(2)
    res = []
    for mod in (_gapls, gtwin):
        state = _state(u0, n)
        done = [
            mod.knapsack_lagrangian(cost, weight, cap, *state, first, -1e300),
            mod.knapsack_lagrangian(cost, weight, cap, *state, second, float(cost.sum())),
        ]
        res.append((done, state))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_array_equal(a, b)
    _, best_u, cover, dstate, _ = res[0][1]
    lval = float(best_u.sum())
    for i in range(m):
        items = [j for j in range(n) if weight[i, j] <= cap[i] and best_u[j] - cost[i, j] > 0]
        v, _ = _knapsack_value([best_u[j] - cost[i, j] for j in items],
                               [int(weight[i, j]) for j in items], int(cap[i]))  # fmt: skip
        lval -= v
    assert dstate[0] == pytest.approx(lval, rel=1e-9, abs=1e-6)
    assert np.all(cover >= 0) and np.all(cover <= m)
    if m**n <= 4096:
        for a in itertools.product(range(m), repeat=n):
            a = np.array(a)
            used = np.bincount(a, weights=weight[a, np.arange(n)], minlength=m)
            if np.all(used <= cap):
                assert dstate[0] <= cost[a, np.arange(n)].sum() + 1e-6


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 25))
def test_knapsack_bound_starts_at_or_above_the_capacity_bound(seed, m, n):
    """From ``u_j = min_i (c_ij + lam_i w_ij)`` its first value is at least the capacity
    relaxation's ``L(lam)`` (each knapsack is at most ``lam_i b_i``): the heuristic's
    reported bound never loses by adding it. The cover it reports is the one of its
    knapsacks: each agent's chosen items fit its capacity."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n)
    lam = rng.uniform(0, 3, size=m)
    fit = weight <= cap[:, None]
    red = np.where(fit, cost + lam[:, None] * weight, np.inf)
    l_cap = red.min(axis=0).sum() - lam @ cap
    state = _state(red.min(axis=0), n)
    assert _gapls.knapsack_lagrangian(cost, weight, cap, *state, 1, -1e300) in (0, 1)
    assert state[3][0] >= l_cap - 1e-6 * max(1.0, abs(l_cap))
