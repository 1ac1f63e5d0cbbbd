"""The compiled kernels against their NumPy/Python twins: exact parity on random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import _dmcf, _gapls
from coalloc.loadshare._reference import dmcf as twin
from coalloc.loadshare._reference import gapls as gtwin


def _random_state(rng, n, nc, J):
    coal = rng.integers(0, nc, size=n).astype(np.int64)
    cap = rng.choice([500.0, 1000.0, 1500.0], size=n)
    size = rng.uniform(0, 300, size=J)
    origin = rng.integers(0, n, size=J).astype(np.int64)
    load = np.bincount(origin, weights=size, minlength=n).astype(np.float64)
    return coal, cap, size, origin, load


@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 8), st.integers(0, 60))
def test_migrate_parity(seed, n, nc, J):
    rng = np.random.default_rng(seed)
    coal, cap, size, origin, load = _random_state(rng, n, nc, J)
    p = float(rng.uniform(0, 1))
    th = float(rng.uniform(-1, 2))
    outs = []
    for mod in (_dmcf, twin):
        cl = np.bincount(coal, weights=load, minlength=nc).astype(np.float64)
        cc = np.bincount(coal, weights=cap, minlength=nc).astype(np.float64)
        cn = np.bincount(coal, minlength=nc).astype(np.int64)
        out = np.empty(n, dtype=np.int64)
        counts = mod.migrate(coal, load, cap, cl, cc, cn, p, th, 1000.0, seed * 7919, 3, out)
        outs.append((counts, out, cl, cc, cn))
    (a, oa, *ra), (b, ob, *rb) = outs
    assert a == b
    np.testing.assert_array_equal(oa, ob)
    for x, y in zip(ra, rb):
        np.testing.assert_array_equal(x, y)
    # the updated coalition lists are the snapshot of the new structure
    np.testing.assert_allclose(ra[0], np.bincount(oa, weights=load, minlength=nc), atol=1e-6)
    np.testing.assert_array_equal(ra[2], np.bincount(oa, minlength=nc))


@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(1, 6), st.integers(0, 80))
def test_first_fit_parity(seed, n, nc, J):
    rng = np.random.default_rng(seed)
    coal, cap, size, origin, _ = _random_state(rng, n, nc, J)
    dirty = (rng.uniform(size=nc) < 0.7).astype(np.uint8)
    order = rng.permutation(J).astype(np.int64)
    res = []
    for mod in (_dmcf, twin):
        place = np.full(J, -7, dtype=np.int64)
        tp = np.full(nc, -1.0)
        counts = mod.first_fit_all(coal, cap, size, origin, order, dirty, place, tp)
        res.append((counts, place, tp))
    assert res[0][0] == res[1][0]
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_array_equal(res[0][2], res[1][2])
    # jobs of dirty coalitions stay inside their coalition
    place = res[0][1]
    inside = dirty[coal[origin]] == 1
    assert np.all(coal[place[inside]] == coal[origin[inside]])


@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.integers(0, 80), st.booleans())
def test_best_fit_parity(seed, n, J, keep):
    rng = np.random.default_rng(seed)
    _, cap, size, origin, _ = _random_state(rng, n, 1, J)
    size = np.round(size)  # ties in size and remaining capacity
    order = np.argsort(-size, kind="stable").astype(np.int64)
    res = []
    for mod in (_dmcf, twin):
        place = np.full(J, -1, dtype=np.int64)
        moved = mod.best_fit_decreasing(cap, size, origin, order, place, keep)
        res.append((moved, place))
    assert res[0][0] == res[1][0]
    np.testing.assert_array_equal(res[0][1], res[1][1])
    assert np.all((res[0][1] >= 0) & (res[0][1] < n))


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 3000), st.sampled_from(["real", "ties", "zeros"]))
def test_size_order_matches_twin(seed, J, kind):
    """The polled merge sort gives NumPy's stable order of ``-size`` (ties in arrival order,
    0.0 and -0.0 equal), across the run (32) and merge-width boundaries."""
    rng = np.random.default_rng(seed)
    if kind == "real":
        size = rng.uniform(0, 300, size=J)
    elif kind == "ties":
        size = rng.integers(0, 4, size=J).astype(np.float64)
    else:
        size = np.where(rng.random(J) < 0.5, 0.0, -0.0)
    res = []
    for mod in (_dmcf, twin):
        order = np.full(J, -1, dtype=np.int64)
        mod.size_order(size, order)
        res.append(order)
    np.testing.assert_array_equal(res[0], res[1])


def test_size_order_stops_at_the_deadline_and_writes_nothing():
    """A deadline that has passed stops the sort; the output is left as it was."""
    from coalloc._shared import interrupt

    size = np.random.default_rng(0).uniform(0, 300, size=200_000)
    order = np.full(size.shape[0], -1, dtype=np.int64)
    with pytest.raises(TimeoutError):
        with interrupt.Scope(timeout=1e-9):
            _dmcf.size_order(size, order)
    assert np.all(order == -1)


def _gap_data(rng, m, n):
    cost = rng.integers(-20, 50, size=(m, n)).astype(np.float64)
    weight = rng.integers(0, 30, size=(m, n)).astype(np.int64)
    cap = rng.integers(0, 15 * n // m + 5, size=m).astype(np.int64)
    return cost, weight, cap


def _tabu(tabu_search, cost, weight, cap, state, iterations, *knobs):
    """One call of ``tabu_search`` (kernel or twin) on the state arrays ``state`` (a list,
    updated in place) with the knobs in their historic order (chain 0 when left out)."""
    from coalloc.loadshare.gap.tabu import TabuPlan, TabuState

    knobs = knobs + (0,) * (7 - len(knobs))
    return tabu_search(cost, weight, cap, TabuState(*state), TabuPlan(iterations, *knobs))


def _tabu_state(start, m, n, seed):
    return [start.copy(), np.zeros(n, np.int64), np.zeros(m), np.zeros(m * n, np.int64),
            np.zeros(6, np.int64), np.zeros(3), np.array([seed], dtype=np.uint64)]  # fmt: skip


@settings(deadline=None)  # a loaded machine took 261 ms on one example (no timed assertions)
@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 14), st.integers(0, 60),
       st.integers(0, 40), st.sampled_from([(3, 7, 4, 1.05, 0, False), (2, 5, 100, 1.2, 3, True),
                                            (5, 1000, 2, 1.01, 20, True),
                                            (3, 7, 4, 1.05, 0, False, True),
                                            (2, 5, 100, 1.2, 3, True, True),
                                            (5, 1000, 2, 1.01, 20, False, True),
                                            (3, 7, 4, 1.05, 0, False, 2),
                                            (2, 5, 100, 1.2, 3, True, 2),
                                            (5, 1000, 2, 1.01, 20, False, 2)]))  # fmt: skip
def test_tabu_search_parity(seed, m, n, first, second, knobs):
    """Kernel and twin leave the same state after two calls (a resumed search)."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _gap_data(rng, m, n)
    start = rng.integers(0, m, size=n).astype(np.int64)
    res = []
    for mod in (_gapls, gtwin):
        state = _tabu_state(start, m, n, seed)
        done = [
            _tabu(mod.tabu_search, cost, weight, cap, state, k, *knobs) for k in (first, second)
        ]
        res.append((done, state))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_array_equal(a, b)  # floats too: the same arithmetic in one order
    assign, best, _, _, istate, dstate, _ = res[0][1]
    # the state's costs are the costs of its assignments; a feasible best is feasible
    assert dstate[0] == pytest.approx(cost[assign, np.arange(n)].sum(), abs=1e-6)
    assert dstate[1] == pytest.approx(cost[best, np.arange(n)].sum(), abs=1e-6)
    if istate[4]:
        used = np.bincount(best, weights=weight[best, np.arange(n)], minlength=m)
        assert np.all(used <= cap)


@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 12), st.integers(1, 50))
def test_tabu_search_resumes_exactly(seed, m, n, total):
    """Rounds change nothing: k calls of t iterations leave what one call of k t leaves
    (what makes the heuristic's answer depend on its iterations only)."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _gap_data(rng, m, n)
    start = rng.integers(0, m, size=n).astype(np.int64)
    knobs = (3, 9, 4, 1.05, 5, bool(seed % 2), seed // 2 % 3)
    one = _tabu_state(start, m, n, seed)
    d1 = _tabu(_gapls.tabu_search, cost, weight, cap, one, total, *knobs)
    split = _tabu_state(start, m, n, seed)
    d2, cut = 0, int(rng.integers(0, total + 1))
    for k in (cut, total - cut):
        d2 += _tabu(_gapls.tabu_search, cost, weight, cap, split, k, *knobs)
    assert d1 == d2
    for a, b in zip(one, split):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("mod", [_gapls, gtwin])
def test_ejection_chain_reaches_what_no_shift_or_swap_reaches(mod):
    """Three agents of room 10, items of weight 10: item 0 on agent 0 wants agent 1, whose
    item 1 is cheapest on agent 2 (empty). Only the chain (0 -> 1, 1 -> 2) reaches the
    optimum in one move: a shift overloads agent 1 and the swap sends item 1 to its
    dearest agent. Brute force is the referee."""
    import itertools

    cost = np.array([[10.0, 20.0], [0.0, 5.0], [10.0, 5.0]])
    weight = np.full((3, 2), 10, dtype=np.int64)
    cap = np.full(3, 10, dtype=np.int64)
    feasible = [
        a for a in itertools.product(range(3), repeat=2)
        if np.all(np.bincount(a, weights=weight[list(a), [0, 1]], minlength=3) <= cap)
    ]  # fmt: skip
    opt = min(cost[list(a), [0, 1]].sum() for a in feasible)
    ends = {}
    for chain in (False, True):
        state = _tabu_state(np.array([0, 1], dtype=np.int64), 3, 2, 7)
        assert _tabu(mod.tabu_search, cost, weight, cap, state, 1, 5, 100, 100, 1.05, 0, False,
                               chain) == 1  # fmt: skip
        ends[chain] = (state[1].tolist(), float(state[5][1]), bool(state[4][4]))
    assert ends[True] == ([1, 2], opt, True)
    assert ends[False][1] > opt  # one shift or swap cannot get there


@pytest.mark.parametrize("mod", [_gapls, gtwin])
def test_two_ejections_reach_what_one_does_not(mod):
    """Four agents of room 10, items of weight 10 on agents 0, 1, 2, agent 3 empty; the
    optimum moves every item one agent up (0 -> 1, 1 -> 2, 2 -> 3): one move of a chain
    with two ejections, while one ejection (or a shift or swap) ends elsewhere."""
    import itertools

    cost = np.array([[10.0, 20.0, 20.0], [0.0, 10.0, 20.0], [10.0, 0.0, 10.0],
                     [10.0, 20.0, 0.0]])  # fmt: skip
    weight = np.full((4, 3), 10, dtype=np.int64)
    cap = np.full(4, 10, dtype=np.int64)
    cols = [0, 1, 2]
    opt = min(
        cost[list(a), cols].sum() for a in itertools.product(range(4), repeat=3)
        if np.all(np.bincount(a, weights=weight[list(a), cols], minlength=4) <= cap)
    )  # fmt: skip
    ends = {}
    for chain in (1, 2):
        state = _tabu_state(np.array([0, 1, 2], dtype=np.int64), 4, 3, 3)
        assert _tabu(mod.tabu_search, cost, weight, cap, state, 1, 5, 100, 100, 1.05, 0, False,
                               chain) == 1  # fmt: skip
        ends[chain] = (state[1].tolist(), float(state[5][1]), bool(state[4][4]))
    assert ends[2] == ([1, 2, 3], opt, True)
    assert ends[1][1] > opt


@settings(deadline=None)  # the twin is Python: slow under load (no timed assertions)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(1, 6),
    st.integers(1, 20),
    st.integers(1, 60),
    st.integers(0, 30),
)
def test_subgradient_parity_and_bound(seed, m, n, first, second):
    """Kernel and twin leave the same multipliers, bound and relaxed assignment; the bound
    is below the optimum (brute force on tiny instances)."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _gap_data(rng, m, n)
    weight[0] = np.minimum(weight[0], cap[0])  # every item fits agent 0
    res = []
    for mod in (_gapls, gtwin):
        state = [np.zeros(m), np.zeros(m), np.zeros(n, np.int64), np.zeros(3),
                 np.zeros(1, np.int64)]  # fmt: skip
        done = [
            mod.subgradient(cost, weight, cap, *state, first, -1e300),
            mod.subgradient(cost, weight, cap, *state, second, float(cost.sum())),
        ]
        res.append((done, state))
    assert res[0][0] == res[1][0]
    for a, b in zip(res[0][1], res[1][1]):
        np.testing.assert_array_equal(a, b)
    lam, best_lam, x, dstate, _ = res[0][1]
    assert np.all(lam >= 0) and np.all(best_lam >= 0)
    # the bound is L(best_lam), recomputed independently
    red = np.where(weight <= cap[:, None], cost + best_lam[:, None] * weight, np.inf)
    assert dstate[0] == pytest.approx(red.min(axis=0).sum() - best_lam @ cap, rel=1e-9, abs=1e-9)
    assert np.array_equal(x, np.argmin(red, axis=0))
    if m**n <= 4096:  # below every feasible assignment's cost
        import itertools

        for a in itertools.product(range(m), repeat=n):
            a = np.array(a)
            used = np.bincount(a, weights=weight[a, np.arange(n)], minlength=m)
            if np.all(used <= cap):
                assert dstate[0] <= cost[a, np.arange(n)].sum() + 1e-9


@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(0, 25), st.integers(0, 6))
def test_shift_descent_parity(seed, m, n, sweeps):
    """Kernel and twin make the same moves; a start within capacity stays within it and
    its cost never rises (the descent's promise), checked on the data."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _gap_data(rng, m, n)
    start = rng.integers(0, m, size=n).astype(np.int64)
    outs = []
    for mod in (_gapls, gtwin):
        a = start.copy()
        outs.append((mod.shift_descent(cost, weight, cap, a, sweeps), a))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_array_equal(outs[0][1], outs[1][1])
    a = outs[0][1]
    cols = np.arange(n)

    def over(x):
        return np.bincount(x, weights=weight[x, cols], minlength=m) > cap

    if not over(start).any():
        assert not over(a).any()
        assert cost[a, cols].sum() <= cost[start, cols].sum() + 1e-9
    assert (outs[0][0] == 0) == np.array_equal(a, start) or outs[0][0] > 0
