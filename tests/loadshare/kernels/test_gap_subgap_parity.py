"""The compiled layer loop of the GAP's exact re-optimisation of agent sets
(``_gapsub.subgap_layers``, h50gap) against its NumPy twin: the same answer, bit for bit,
on random sub-problems (ties of cost and load included), with and without a bound, a state
budget or multipliers; and ``solve_subgap`` equal with either backend."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import _gapsub, generate_gap
from coalloc.loadshare._reference import gapsub as stwin
from coalloc.loadshare.gap import subgap


def _prepared(cost, weight, cap, lam):
    """solve_subgap's arrays for the layer loop (its item order, rest, wrest, radix)."""
    red = cost + lam[:, None] * weight
    order = np.argsort(-(red.max(axis=0) - red.min(axis=0)), kind="stable")
    cost, weight, red = cost[:, order], weight[:, order], red[:, order]
    rest = np.concatenate([np.cumsum(red.min(axis=0)[::-1])[::-1], [0.0]])
    wrest = np.concatenate([np.cumsum(weight.min(axis=0)[::-1])[::-1], [0]]).astype(np.int64)
    radix = np.cumprod(np.concatenate([[1], cap[:-1] + 1])).astype(np.int64)
    return (np.ascontiguousarray(cost), np.ascontiguousarray(weight), cap, lam, rest, wrest,
            radix)  # fmt: skip


def _both(args, bound, max_states):
    got = [mod.subgap_layers(*args, bound, max_states) for mod in (_gapsub, stwin)]
    a, b = got
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]  # bit for bit
        assert a[0].dtype == np.int64
    return a


@settings(deadline=None, derandomize=True, max_examples=400)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(0, 14),
       st.sampled_from(["int", "float", "ties"]), st.sampled_from([None, -1.0, 0.0, 1.0]),
       st.sampled_from([50_000, 3, 1]), st.booleans())  # fmt: skip
@example(seed=0, k=3, s=14, costs="ties", slack=None, max_states=50_000, with_lam=True)
@example(seed=1, k=1, s=0, costs="int", slack=None, max_states=50_000, with_lam=False)
def test_layers_parity(seed, k, s, costs, slack, max_states, with_lam):
    rng = np.random.default_rng(seed)
    if costs == "int":
        cost = rng.integers(-20, 21, size=(k, s)).astype(np.float64)
    elif costs == "float":
        cost = rng.uniform(-5, 5, size=(k, s))
    else:  # few distinct costs and weights: many equal loads and equal costs
        cost = rng.integers(0, 3, size=(k, s)).astype(np.float64)
    weight = rng.integers(0, 4 if costs == "ties" else 10, size=(k, s)).astype(np.int64)
    cap = rng.integers(0, 3 * s + 2, size=k).astype(np.int64)
    lam = rng.uniform(0, 3, size=k) if with_lam else np.zeros(k)
    args = _prepared(cost, weight, cap, lam)
    free = _both(args, np.inf, max_states)
    if slack is not None and free is not None:  # a bound just above, at, below the optimum
        _both(args, free[1] + slack, max_states)


def test_layers_parity_on_a_generated_type_d_set():
    """Three agents of a generated type d instance, 16 items: thousands of states a layer."""
    inst = generate_gap("d", 3, 16, seed=5)
    cost = inst.cost.astype(np.float64)
    for lam in (np.zeros(3), np.array([0.3, 1.1, 0.7])):
        args = _prepared(cost, inst.weight.astype(np.int64), inst.capacity.astype(np.int64),
                         lam)  # fmt: skip
        free = _both(args, np.inf, 10**6)
        assert free is not None
        _both(args, free[1] + 1.0, 10**6)
        assert _both(args, free[1], 10**6) is None  # nothing strictly below the optimum


def test_layers_give_up_at_until():
    """A clock value already passed: both give up (None) before the first item."""
    args = _prepared(np.ones((2, 3)), np.ones((2, 3), dtype=np.int64),
                     np.array([3, 3], dtype=np.int64), np.zeros(2))  # fmt: skip
    for mod in (_gapsub, stwin):
        assert mod.subgap_layers(*args, np.inf, 100, 0.0) is None
        assert mod.subgap_layers(*args, np.inf, 100, None) is not None


def test_layers_reject_inconsistent_shapes():
    args = list(_prepared(np.ones((2, 3)), np.ones((2, 3), dtype=np.int64),
                          np.array([3, 3], dtype=np.int64), np.zeros(2)))  # fmt: skip
    args[4] = np.zeros(2)  # rest must have s + 1 entries
    with pytest.raises(ValueError, match="subgap_layers"):
        _gapsub.subgap_layers(*args, np.inf, 100)


@settings(deadline=None, derandomize=True, max_examples=60)
@given(st.integers(0, 2**32 - 1))
def test_solve_subgap_equal_with_either_backend(seed):
    rng = np.random.default_rng(seed)
    k, s = int(rng.integers(2, 4)), int(rng.integers(1, 12))
    cost = rng.integers(0, 30, size=(k, s)).astype(np.float64)
    weight = rng.integers(1, 10, size=(k, s)).astype(np.int64)
    cap = rng.integers(2 * s, 6 * s, size=k).astype(np.int64)
    lam = rng.uniform(0, 2, size=k)
    got = []
    for backend in ("compiled", "numpy"):
        old, subgap._BACKEND = subgap._BACKEND, backend
        try:
            got.append(subgap.solve_subgap(cost, weight, cap, np.inf, lam))
        finally:
            subgap._BACKEND = old
    a, b = got
    assert (a is None) == (b is None)  # (a drawn instance may have no assignment)
    if a is not None:
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]


# ------------------------------------------------- the knapsack bound (h63prog): tables, layers


def _knap_arrays(cost, weight, cap, mu):
    """The knapsack tables of both modules (checked equal bit for bit, picks too)."""
    k, s = cost.shape
    rows = (cap + 1) * (s + 1)
    koff = np.concatenate([[0], np.cumsum(rows[:-1])]).astype(np.int64)
    got = []
    for mod in (_gapsub, stwin):
        table = np.full(int(rows.sum()), np.nan)
        pick = np.full((k, s), 7, dtype=np.int8)
        mod.knapsack_tables(cost, weight, cap, mu, koff, table, pick)
        got.append((table, pick))
    (ta, pa), (tb, pb) = got
    np.testing.assert_array_equal(ta, tb)  # bit for bit, every cell written
    np.testing.assert_array_equal(pa, pb)
    murest = np.concatenate([np.cumsum(mu[::-1])[::-1], [0.0]])
    return ta, koff, murest, pa


@settings(deadline=None, derandomize=True, max_examples=300)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.integers(0, 12),
       st.sampled_from(["int", "float", "ties"]), st.sampled_from(["least", "drawn"]),
       st.sampled_from([None, -1.0, 0.0, 0.25, 1.0]),
       st.sampled_from([50_000, 30, 10, 3, 1]), st.integers(-1, 3))  # fmt: skip
@example(seed=0, k=3, s=12, costs="ties", mus="least", slack=None, max_states=50_000, split=-1)
@example(seed=2, k=1, s=0, costs="int", mus="drawn", slack=None, max_states=50_000, split=0)
@example(seed=0, k=3, s=12, costs="ties", mus="least", slack=None, max_states=50_000, split=1)
def test_knapsack_tables_and_layers_parity(seed, k, s, costs, mus, slack, max_states, split):
    """The tables and the layers pruned by them: the same in the kernel and the twin (costs
    with many ties, weights 0, capacities 0, multipliers of either sign, the key in one
    word or two: ``split``, h63prog)."""
    rng = np.random.default_rng(seed)
    if costs == "int":
        cost = rng.integers(-20, 21, size=(k, s)).astype(np.float64)
    elif costs == "float":
        cost = rng.uniform(-5, 5, size=(k, s))
    else:
        cost = rng.integers(0, 3, size=(k, s)).astype(np.float64)
    weight = rng.integers(0, 4 if costs == "ties" else 10, size=(k, s)).astype(np.int64)
    cap = rng.integers(0, 3 * s + 2, size=k).astype(np.int64)
    lam = rng.uniform(0, 3, size=k)
    args = _prepared(cost, weight, cap, lam)
    red = args[0] + lam[:, None] * args[1]
    mu = red.min(axis=0) if mus == "least" and s else rng.uniform(-6, 6, size=s)
    knap, koff, murest, _ = _knap_arrays(args[0], args[1], cap, mu)
    if 0 <= split < k:  # the key's second word: agents split.. keyed again from 1
        args = list(args)
        args[6] = np.concatenate([args[6][:split], args[6][split:] // args[6][split]])
    free = _both_knap(args, np.inf, max_states, knap, koff, murest, split)
    if slack is not None and free is not None:  # a bound just above, at, below the optimum
        _both_knap(args, free[1] + slack, max_states, knap, koff, murest, split)
    if 0 <= split < k and free is not None:  # the same optimum as with one word
        one = _both_knap(_prepared(cost, weight, cap, lam), np.inf, 10**6, knap, koff, murest)
        assert one is not None and one[1] == pytest.approx(free[1], abs=1e-9)


def _both_knap(args, bound, max_states, knap, koff, murest, split=-1):
    """The layers pruned by the knapsack bound in both modules: the same answer and why."""
    got, whys = [], []
    for mod in (_gapsub, stwin):
        why = np.full(1, -3, dtype=np.int64)
        got.append(mod.subgap_layers(*args, bound, max_states, why=why, knap=knap, koff=koff,
                                     murest=murest, split=split))  # fmt: skip
        whys.append(int(why[0]))
    a, b = got
    assert whys[0] == whys[1]
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_array_equal(a[0], b[0])
        assert a[1] == b[1]  # bit for bit
    return a


def test_knapsack_tables_and_layers_parity_on_a_generated_type_d_instance():
    """Three agents of a generated type d instance, 16 items, the multipliers of a few
    subgradient steps: the tables and the layers equal bit for bit, at the optimum."""
    inst = generate_gap("d", 3, 16, seed=5)
    cost = inst.cost.astype(np.float64) / inst.cost.max()
    weight, cap = inst.weight.astype(np.int64), inst.capacity.astype(np.int64)
    lam = np.array([0.03, 0.05, 0.02])  # (multipliers > 0: items of d < 0 in the tables)
    args = _prepared(cost, weight, cap, lam)
    free = _both(args, np.inf, 10**6)
    least = (args[0] + lam[:, None] * args[1]).min(axis=0)
    for steps in (0, 10):
        made = []
        for backend in ("compiled", "numpy"):  # the steps' tables by either module
            old, subgap._BACKEND = subgap._BACKEND, backend
            try:
                made.append(subgap.knapsack_bound(args[0], args[1], cap, least,
                                                  free[1] + 0.05, steps))  # fmt: skip
            finally:
                subgap._BACKEND = old
        for x, y in zip(*made):
            np.testing.assert_array_equal(x, y)
        knap, koff, murest = made[0]
        got = [mod.subgap_layers(*args, free[1] + 1e-6, 10**6, knap=knap, koff=koff,
                                 murest=murest) for mod in (_gapsub, stwin)]  # fmt: skip
        assert got[0] is not None and got[1] is not None
        np.testing.assert_array_equal(got[0][0], got[1][0])
        assert got[0][1] == got[1][1] == pytest.approx(free[1], abs=1e-9)
        for budget in (2**i for i in range(14)):  # the same layers: the same budget suffices
            _both_knap(args, free[1] + 1e-6, budget, knap, koff, murest)


def test_knapsack_arguments_checked():
    cost, weight = np.ones((2, 3)), np.ones((2, 3), dtype=np.int64)
    cap, mu = np.array([3, 3], dtype=np.int64), np.zeros(3)
    koff = np.array([0, 16], dtype=np.int64)
    args = _prepared(cost, weight, cap, np.zeros(2))
    for mod in (_gapsub, stwin):
        with pytest.raises(ValueError, match="too short"):
            mod.knapsack_tables(cost, weight, cap, mu, koff, np.zeros(31))
        with pytest.raises(ValueError, match="inconsistent"):
            mod.knapsack_tables(cost, weight, cap, np.zeros(2), koff, np.zeros(32))
        with pytest.raises(ValueError, match="inconsistent"):
            mod.knapsack_tables(cost, weight, cap, mu, koff, np.zeros(32),
                                np.zeros((2, 2), dtype=np.int8))  # fmt: skip
        with pytest.raises(ValueError, match="go together"):
            mod.subgap_layers(*args, np.inf, 100, knap=np.zeros(32))
        with pytest.raises(ValueError, match="too short"):
            mod.subgap_layers(*args, np.inf, 100, knap=np.zeros(31), koff=koff,
                              murest=np.zeros(4))  # fmt: skip
