"""The tabu kernel's candidate list (``TabuKnobs.cands``, issue 40 item 2, h54gap): swaps
and ejection chains move the sampled item only to one of its first ``cands`` shift
targets (``cands < 0``: one of its ``-cands`` cheapest agents, by cost or, with the
capacity multipliers ``mult``, by Lagrangian reduced cost). Kernel and twin in exact
parity with it on (fast path: bounded costs; plain path: a huge cost turns the kernel's
pruning off), resumed searches included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import _gapls
from coalloc.loadshare._reference import gapls as gtwin
from coalloc.loadshare.gap import tabu
from coalloc.loadshare.gap.tabu import TabuKnobs, TabuPlan, TabuState


def _data(rng, m, n, huge):
    cost = rng.integers(-20, 50, size=(m, n)).astype(np.float64)
    if huge:  # no pruning in the kernel: its plain scan
        cost[0, 0] = 1e295
    weight = rng.integers(0, 30, size=(m, n)).astype(np.int64)
    cap = rng.integers(0, 15 * n // m + 5, size=m).astype(np.int64)
    return cost, weight, cap


def _run(mod, cost, weight, cap, start, seed, knobs, calls):
    m, n = cost.shape
    state = TabuState.fresh(start, m, np.array([seed], dtype=np.uint64))
    done = [mod.tabu_search(cost, weight, cap, state, knobs.plan(k)) for k in calls]
    return done, state


@settings(deadline=None, max_examples=80)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 16), st.integers(0, 40),
       st.integers(0, 40), st.sampled_from([1, 2, 3, -1, -2, -4]), st.sampled_from([0, 1, 2]),
       st.sampled_from([2, 100]), st.booleans())  # fmt: skip
@example(7, 5, 16, 30, 30, 1, 1, 2, False)
@example(11, 6, 16, 25, 25, 2, 2, 100, True)
@example(5, 6, 16, 30, 30, -2, 1, 2, False)
@example(9, 5, 16, 30, 30, -3, 0, 100, True)
def test_cands_parity(seed, m, n, first, second, cands, chain, swap_items, huge) -> None:
    """Kernel and twin leave the same state after two calls with the candidate list on."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n, huge)
    start = rng.integers(0, m, size=n).astype(np.int64)
    knobs = TabuKnobs(tenure=3, restart=9, swap_items=swap_items, chain=chain, cands=cands)
    res = [_run(mod, cost, weight, cap, start, seed, knobs, (first, second))
           for mod in (_gapls, gtwin)]  # fmt: skip
    assert res[0][0] == res[1][0]
    for f in ("assign", "best", "alpha", "tabu_until", "istate", "dstate", "rng"):
        np.testing.assert_array_equal(getattr(res[0][1], f), getattr(res[1][1], f))


def test_cands_change_the_search_and_off_is_the_default() -> None:
    """The knob is off by default (the plan the kernel gets says 0, no multipliers), and on
    it changes the trajectory of a search on a tight instance (the neighbourhood is
    smaller)."""
    assert TabuKnobs.default(100).cands == 0 and TabuPlan(5).cands == 0
    assert not tabu._LAG_CANDS
    rng = np.random.default_rng(3)
    m, n = 6, 60
    cost = rng.integers(1, 60, size=(m, n)).astype(np.float64)
    weight = rng.integers(5, 30, size=(m, n)).astype(np.int64)
    cap = np.full(m, int(0.8 * weight.mean() * n / m), dtype=np.int64)
    start = rng.integers(0, m, size=n).astype(np.int64)
    states = []
    for cands in (0, 1):
        knobs = TabuKnobs(tenure=5, restart=200, swap_items=20, chain=1, cands=cands)
        states.append(_run(_gapls, cost, weight, cap, start, 1, knobs, (300,))[1])
    assert not np.array_equal(states[0].tabu_until, states[1].tabu_until)


@settings(deadline=None, max_examples=60)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 16), st.integers(0, 40),
       st.integers(0, 40), st.sampled_from([-1, -2, -4]), st.sampled_from([0, 1, 2]),
       st.sampled_from([2, 100]), st.booleans(), st.sampled_from([0.0, 0.3, 2.5]))  # fmt: skip
@example(5, 6, 16, 30, 30, -2, 1, 2, False, 2.5)
@example(9, 5, 16, 30, 30, -3, 0, 100, True, 0.3)
def test_lagrangian_cands_parity(seed, m, n, first, second, cands, chain, swap_items, huge,
                                 scale) -> None:  # fmt: skip
    """With the multipliers (the list by ``cost + mult * weight``) kernel and twin leave the
    same state after two calls, the multipliers changed between the calls (as a search's
    rounds refresh them)."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n, huge)
    start = rng.integers(0, m, size=n).astype(np.int64)
    mults = [scale * rng.random(m), scale * rng.random(m)]
    res = []
    for mod in (_gapls, gtwin):
        state = TabuState.fresh(start, m, np.array([seed], dtype=np.uint64))
        done = []
        for k, mult in zip((first, second), mults):
            knobs = TabuKnobs(tenure=3, restart=9, swap_items=swap_items, chain=chain,
                              cands=cands, mult=mult)  # fmt: skip
            done.append(mod.tabu_search(cost, weight, cap, state, knobs.plan(k)))
        res.append((done, state))
    assert res[0][0] == res[1][0]
    for f in ("assign", "best", "alpha", "tabu_until", "istate", "dstate", "rng"):
        np.testing.assert_array_equal(getattr(res[0][1], f), getattr(res[1][1], f))


def _tight(seed=3):
    rng = np.random.default_rng(seed)
    m, n = 6, 60
    cost = rng.integers(1, 60, size=(m, n)).astype(np.float64)
    weight = rng.integers(5, 30, size=(m, n)).astype(np.int64)
    cap = np.full(m, int(0.8 * weight.mean() * n / m), dtype=np.int64)
    return cost, weight, cap, rng.integers(0, m, size=n).astype(np.int64)


def test_the_multipliers_change_the_list() -> None:
    """Multipliers that reorder the agents change the trajectory; zero multipliers are the
    cost rule's list (the same state); no multipliers is the default (the search passes
    its own); a list of every agent is no list (the same state)."""
    assert TabuKnobs.default(100).mult is None and TabuPlan(5).mult is None
    cost, weight, cap, start = _tight()
    m = cost.shape[0]
    states = []
    for mult in (None, np.zeros(m), np.linspace(0.0, 5.0, m)):
        knobs = TabuKnobs(tenure=5, restart=200, swap_items=20, chain=1, cands=-2, mult=mult)
        states.append(_run(_gapls, cost, weight, cap, start, 1, knobs, (300,))[1])
    np.testing.assert_array_equal(states[0].tabu_until, states[1].tabu_until)
    assert not np.array_equal(states[0].tabu_until, states[2].tabu_until)
    for cands in (0, -m):
        knobs = TabuKnobs(tenure=5, restart=200, swap_items=20, chain=1, cands=cands,
                          mult=np.linspace(0.0, 5.0, m))  # fmt: skip
        states.append(_run(_gapls, cost, weight, cap, start, 1, knobs, (300,))[1])
    for f in ("assign", "best", "alpha", "tabu_until", "istate", "dstate", "rng"):
        np.testing.assert_array_equal(getattr(states[3], f), getattr(states[4], f))


@pytest.mark.parametrize("mod", [_gapls, gtwin])
def test_multipliers_one_per_agent(mod) -> None:
    """A multiplier array of the wrong length is refused, naming it."""
    cost, weight, cap, start = _tight()
    state = TabuState.fresh(start, cost.shape[0], np.array([1], dtype=np.uint64))
    knobs = TabuKnobs(cands=-2, mult=np.zeros(cost.shape[0] + 1))
    with pytest.raises(ValueError, match="mult"):
        mod.tabu_search(cost, weight, cap, state, knobs.plan(10))
