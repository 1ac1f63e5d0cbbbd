"""The knapsack bound of the GAP's exact programme (h63prog; ``search._PROOF_KNAP``,
:func:`coalloc.loadshare.gap.subgap.knapsack_bound`): the tables are the least subsets by
enumeration, the bound is never below the Lagrangian one with the least reduced costs as
multipliers, and the layers pruned by it (any multipliers, either sign) find exactly what
brute force finds below a bound, or prove there is none, on feasible and infeasible
sub-problems; the heuristic decides a type d instance it gave up on before."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import GapInstance, _gapsub, generate_gap, solve_gap
from coalloc.loadshare._reference import gapsub as stwin
from coalloc.loadshare.gap import search, subgap
from tests.loadshare._gap_brute import brute_gap


def _draw(k: int, s: int, seed: int, tight: bool):
    rng = np.random.default_rng(seed)
    cost = rng.integers(-5, 20, size=(k, s)).astype(np.float64)
    weight = rng.integers(0, 8, size=(k, s)).astype(np.int64)
    hi = 2 * s + 2 if tight else 4 * s + 2
    cap = rng.integers(0, hi, size=k).astype(np.int64)
    return rng, cost, weight, cap


def _tables(mod, cost, weight, cap, mu):
    k, s = cost.shape
    rows = (cap + 1) * (s + 1)
    koff = np.concatenate([[0], np.cumsum(rows[:-1])]).astype(np.int64)
    table, pick = np.zeros(int(rows.sum())), np.zeros((k, s), dtype=np.int8)
    mod.knapsack_tables(cost, weight, cap, mu, koff, table, pick)
    return table, koff, pick


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(0, 6), st.integers(0, 2**31))
def test_the_tables_are_the_least_subsets(k, s, seed):
    """Every cell f_a(t, r) against every subset of the items t.. (weights 0 included),
    and the pick at (0, cap_a) is a subset of that least value within the capacity."""
    rng, cost, weight, cap = _draw(k, s, seed, False)
    mu = rng.uniform(-10, 25, size=s)
    for mod in (_gapsub, stwin):
        table, koff, pick = _tables(mod, cost, weight, cap, mu)
        for a in range(k):
            f = table[koff[a]:koff[a] + (s + 1) * (cap[a] + 1)].reshape(s + 1, cap[a] + 1)
            for t in range(s + 1):
                subsets = [c for n in range(s - t + 1)
                           for c in itertools.combinations(range(t, s), n)]  # fmt: skip
                for r in range(cap[a] + 1):
                    least = min(sum(cost[a, u] - mu[u] for u in c) for c in subsets
                                if sum(weight[a, u] for u in c) <= r)  # fmt: skip
                    assert f[t, r] == pytest.approx(least, abs=1e-9)
            chosen = np.flatnonzero(pick[a])
            assert weight[a, chosen].sum() <= cap[a]
            assert (cost[a, chosen] - mu[chosen]).sum() == pytest.approx(f[0, cap[a]], abs=1e-9)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.integers(1, 4), st.integers(0, 8), st.integers(0, 2**31))
def test_never_weaker_than_the_lagrangian_bound(k, s, seed):
    """With ``mu_u = min_a c_au + lam_a w_au``: ``sum_{u >= t} mu_u + sum_b f_b(t, r_b) >=
    sum_{u >= t} mu_u - sum_b lam_b r_b`` for every t and residual capacities r."""
    rng, cost, weight, cap = _draw(k, s, seed, False)
    lam = rng.uniform(0, 3, size=k)
    mu = (cost + lam[:, None] * weight).min(axis=0) if s else np.zeros(0)
    knap, koff, murest = subgap.knapsack_bound(cost, weight, cap, mu, np.inf, 0)
    for t in range(s + 1):
        for _ in range(10):
            r = rng.integers(0, cap + 1)
            kb = murest[t] + sum(knap[koff[b] + t * (cap[b] + 1) + r[b]] for b in range(k))
            assert kb >= murest[t] - float(lam @ r) - 1e-9


@settings(max_examples=250, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(0, 6), st.integers(0, 2**31), st.booleans(),
       st.sampled_from(["least", "drawn"]), st.sampled_from([-1.0, 0.0, 0.25, 1.0, None]),
       st.sampled_from([10**6, 2, 1]), st.integers(-1, 3))  # fmt: skip
@example(3, 6, 0, True, "drawn", 0.0, 10**6, -1)
@example(3, 6, 0, True, "drawn", 0.25, 10**6, 1)
def test_layers_with_the_knapsack_bound_against_brute_force(k, s, seed, tight, mus, slack,
                                                            max_states, split):  # fmt: skip
    """Any multipliers (the least reduced costs, or drawn of either sign), the key in one
    word or two (``split``): an answer is the optimum below the bound, a proof (why 1)
    leaves none below it (no assignment at all on infeasible draws), and only the state
    budget gives up."""
    rng, cost, weight, cap = _draw(k, s, seed, tight)
    best = brute_gap(GapInstance(cost, weight, cap)) if s else 0.0
    bound = np.inf if slack is None or best is None else best + slack
    lam = rng.uniform(0, 2, size=k)
    mu = (cost + lam[:, None] * weight).min(axis=0) if mus == "least" else rng.uniform(-9, 9, s)
    rest = np.zeros(s + 1)
    wrest = np.concatenate([np.cumsum(weight.min(axis=0)[::-1])[::-1], [0]]).astype(np.int64)
    radix = np.cumprod(np.concatenate([[1], cap[:-1] + 1])).astype(np.int64)
    if 0 <= split < k:  # agents split.. in the second word, keyed again from 1
        radix = np.concatenate([radix[:split], radix[split:] // radix[split]])
    for mod in (_gapsub, stwin):
        knap, koff, _ = _tables(mod, cost, weight, cap, mu)
        murest = np.concatenate([np.cumsum(mu[::-1])[::-1], [0.0]])
        why = np.full(1, -7, dtype=np.int64)
        got = mod.subgap_layers(cost, weight, cap, lam, rest, wrest, radix, bound, max_states,
                                why=why, knap=knap, koff=koff, murest=murest,
                                split=split)  # fmt: skip
        if why[0] == 0:
            assert got is not None and best is not None and got[1] == pytest.approx(best)
            assert best < bound - 1e-9
        elif why[0] == 1:  # a proof: nothing below the bound
            assert got is None and (best is None or best >= bound - 1e-9)
        else:
            assert why[0] == 2 and got is None and max_states < 10**6


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.integers(1, 3), st.integers(1, 7), st.integers(0, 2**31), st.booleans(),
       st.sampled_from([0, 3, 30]), st.sampled_from([-1.0, 0.0, 0.25, 1.0, None]))  # fmt: skip
def test_solve_subgap_with_the_knapsack_bound_against_brute_force(k, s, seed, tight, steps,
                                                                  slack):  # fmt: skip
    """Through ``solve_subgap`` (its item order, scaling and subgradient steps towards the
    bound), either backend the same: the optimum below the bound or None exactly when
    brute force has none below it."""
    rng, cost, weight, cap = _draw(k, s, seed, tight)
    best = brute_gap(GapInstance(cost, weight, cap))
    bound = np.inf if slack is None or best is None else best + slack
    lam = rng.uniform(0, 2, size=k)
    got = []
    for backend in ("compiled", "numpy"):
        old, subgap._BACKEND = subgap._BACKEND, backend
        try:
            got.append(subgap.solve_subgap(cost, weight, cap, bound, lam, knap_steps=steps))
        finally:
            subgap._BACKEND = old
    a, b = got
    assert (a is None) == (b is None)
    if best is None or best >= bound - 1e-9 * np.abs(cost).max():
        assert a is None
        return
    assert a is not None and a[1] == pytest.approx(best, abs=1e-9)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1] == b[1]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 3), st.integers(1, 6), st.integers(0, 2**31), st.booleans())
def test_load_vectors_of_two_words_against_brute_force(k, s, seed, knap):
    """Capacities of 2^31-2^32 on two agents, 2^21-2^22 on three (weights alike): the key
    needs two words (``key_split``); ``solve_subgap`` finds the brute-force optimum, with
    either bound."""
    rng = np.random.default_rng(seed)
    e = 31 if k == 2 else 21
    cost = rng.integers(0, 20, size=(k, s)).astype(np.float64)
    weight = rng.integers(0, 2 ** (e - 1), size=(k, s)).astype(np.int64)
    cap = rng.integers(2**e, 2 ** (e + 1) - 1, size=k).astype(np.int64)
    split = subgap.key_split(cap)
    assert split is not None and 0 < split < k
    assert subgap.key_split(cap, words=1) is None
    best = brute_gap(GapInstance(cost, weight, cap))
    got = subgap.solve_subgap(cost, weight, cap, np.inf, knap_steps=5 if knap else None)
    assert (got is None) == (best is None)
    if got is not None:
        assert got[1] == pytest.approx(best)


def test_key_split_by_products():
    assert subgap.key_split(np.array([80] * 9)) == 9  # 57 bits: one word
    assert subgap.key_split(np.array([80] * 10)) == 9  # 64 bits: nine and one
    assert subgap.key_split(np.array([2**61 - 1, 1])) == 1  # 2^61 * 2 = 2^62: over
    assert subgap.key_split(np.array([2**61 - 2, 1])) == 2  # (2^61 - 1) * 2 < 2^62
    assert subgap.key_split(np.array([2**62 - 1])) is None
    assert subgap.key_split(np.array([2**40, 2**30, 2**40])) is None


def test_too_many_cells_keeps_the_lagrangian_bound(monkeypatch):
    rng, cost, weight, cap = _draw(3, 6, 5, False)
    assert subgap.knapsack_bound(cost, weight, cap, np.zeros(6), 1.0, 3, cells=10) is None
    monkeypatch.setattr(subgap, "KNAP_CELLS", 10)
    best = brute_gap(GapInstance(cost, weight, cap))
    got = subgap.solve_subgap(cost, weight, cap, np.inf, knap_steps=30)
    assert got is not None and got[1] == pytest.approx(best)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_heuristic_decides_type_d_5x15_with_it(monkeypatch, seed):
    """Chu-Beasley type d, 5 x 15 (bench/loadshare/small_proof.py): the untimed heuristic
    ends ``feasible`` with the Lagrangian bound (the programme gives up) and ``optimal``,
    at the exact method's optimum, with the knapsack bound."""
    inst = generate_gap("d", 5, 15, seed=seed)
    ref = solve_gap(inst, method="exact", seed=0)
    assert ref.status == "optimal"
    monkeypatch.setattr(search, "_PROOF_KNAP", None)
    before = solve_gap(inst, method="heuristic", seed=0)
    monkeypatch.setattr(search, "_PROOF_KNAP", 30)
    now = solve_gap(inst, method="heuristic", seed=0)
    assert before.status == "feasible"
    assert now.status == "optimal", now.message
    assert now.objective == pytest.approx(ref.objective, rel=1e-12)
    assert now.bound == pytest.approx(ref.objective, rel=1e-12)
