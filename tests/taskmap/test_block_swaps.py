"""Swaps of whole processors' contents (``blockswap.block_swaps``, h56sum): the route cost
never rises, the maximum occupancy never rises, the predicted gain is the real one, and the
answer is a local minimum of such swaps. Referees: ``verify_mapping`` and
``communication_cost`` from scratch, and a brute force over every swap of two positions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import blockswap, sumcycle
from coalloc.taskmap import generators as gen
from coalloc.taskmap.blockswap import _gain, _quotient, block_swaps
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState
from coalloc.taskmap.sumrefine import sum_refine


def _scores(tasks, res, mapping):
    report = tm.verify_mapping(tasks, res, mapping)
    assert report.valid, report
    return float(report.max_occupancy), tm.communication_cost(tasks, res, mapping)


def _instance(seed: int, shape: tuple, racks: int, nodes: int, cores: int, spread: bool):
    tasks = gen.stencil_task_graph(shape, compute=(0.5, 2.0) if spread else 1.0,
                                   volume=(0.5, 4.0), seed=seed)  # fmt: skip
    res = gen.hierarchical_cluster(n_racks=racks, nodes_per_rack=nodes, cores_per_node=cores,
                                   speed=(0.5, 3.0) if spread else 1.0, seed=seed)  # fmt: skip
    return tasks, res


def _state(tasks, res, seed: int):
    topo, fine = topology(res), TaskLevel.of(tasks)
    m = np.random.default_rng(seed).integers(0, topo.P, tasks.n)
    return topo, RefineState(topo, fine, m)


def _out(topo, state):
    return topo.order_nodes[state.m]


instances = st.tuples(
    st.integers(0, 500),
    st.sampled_from([(4, 4), (6, 5), (3, 3, 3)]),
    st.integers(1, 3),
    st.integers(1, 3),
    st.integers(1, 2),
    st.booleans(),
)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(instances)
@example((0, (4, 4), 2, 2, 1, False))
@example((7, (3, 3, 3), 3, 3, 2, True))
def test_never_worse_on_either_objective(args):
    tasks, res = _instance(*args)
    topo, state = _state(tasks, res, args[0])
    occ0, sum0 = _scores(tasks, res, _out(topo, state))
    made = block_swaps(state)
    occ1, sum1 = _scores(tasks, res, _out(topo, state))
    assert occ1 <= occ0 * (1 + 1e-9)
    assert sum1 <= sum0 * (1 + 1e-12) + 1e-12
    if made:
        assert sum1 < sum0
    # the state's incremental loads are those of the mapping
    nload, lload = state.nload.copy(), state.lload.copy()
    state.refresh()
    np.testing.assert_allclose(nload, state.nload, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lload, state.lload, rtol=1e-9, atol=1e-12)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(instances, st.integers(0, 10_000))
def test_predicted_gain_is_the_real_one(args, pick):
    """``_gain`` of a swap equals the route cost's change recomputed from scratch."""
    tasks, res = _instance(*args)
    topo, state = _state(tasks, res, args[0])
    qs = _quotient(state)
    p = topo.P
    c = np.zeros((p, p))
    rows = np.repeat(np.arange(p), np.diff(qs.level.ip))
    c[rows, qs.level.ix] = qs.level.iw
    d = 0.5 * (topo.cost + topo.cost.T)
    x, y = divmod(pick % (p * p), p)
    if x == y:
        y = (x + 1) % p
    before = tm.communication_cost(tasks, res, _out(topo, state))
    swapped = state.m.copy()
    swapped[state.m == x], swapped[state.m == y] = y, x
    after = tm.communication_cost(tasks, res, topo.order_nodes[swapped])
    # communication_cost counts a pair once, the CSR both ways
    assert _gain(c, d, np.arange(p), x, y) == pytest.approx(2 * (before - after), abs=1e-9)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(0, 300), st.sampled_from([(3, 3), (4, 2), (2, 2, 2)]))
def test_answer_is_a_local_minimum_brute_force(seed, shape):
    """No swap of two positions' contents (every pair, scored from scratch) lowers the sum
    and keeps the maximum at most the entry's: the answer is a 2-opt local minimum."""
    tasks, res = _instance(seed, shape, 2, 2, 1, seed % 2 == 1)
    topo, state = _state(tasks, res, seed)
    occ0, _ = _scores(tasks, res, _out(topo, state))
    block_swaps(state, rounds=1000)
    _, sum1 = _scores(tasks, res, _out(topo, state))
    for x, y in itertools.combinations(range(topo.P), 2):
        m = state.m.copy()
        m[state.m == x], m[state.m == y] = y, x
        occ, s = _scores(tasks, res, topo.order_nodes[m])
        assert not (s < sum1 * (1 - 1e-9) and occ <= occ0 * (1 - 1e-9)), (x, y, s, sum1)


def test_a_scrambled_placement_is_put_back():
    """A stencil mapped by blocks, then its processors' contents permuted at random: the
    swaps recover most of the sum, the maximum unchanged."""
    tasks = gen.stencil_task_graph((16, 16), compute=1.0, volume=1.0)
    res = gen.hierarchical_cluster(n_racks=4, nodes_per_rack=4, cores_per_node=1)
    topo, fine = topology(res), TaskLevel.of(tasks)
    i, j = np.divmod(np.arange(256), 16)
    good = (i // 4) * 4 + j // 4  # 4x4 blocks, block rows on racks
    perm = np.random.default_rng(3).permutation(topo.P)
    state = RefineState(topo, fine, perm[good])
    occ0, sum0 = _scores(tasks, res, _out(topo, state))
    _, best = _scores(tasks, res, topo.order_nodes[good])
    assert block_swaps(state) > 0
    occ1, sum1 = _scores(tasks, res, _out(topo, state))
    assert occ1 <= occ0 * (1 + 1e-9)
    assert sum1 - best < 0.5 * (sum0 - best)


def test_sum_refine_knob(monkeypatch):
    """``BLOCK_SWAPS`` off: ``sum_refine`` is the moves alone (no whole-block change);
    on: never worse on either objective than the entry."""
    tasks, res = _instance(5, (6, 5), 2, 3, 2, True)
    topo, state = _state(tasks, res, 5)
    occ0, sum0 = _scores(tasks, res, _out(topo, state))
    for on in (False, True):
        monkeypatch.setattr(blockswap, "BLOCK_SWAPS", on)
        s = RefineState(topo, state.level, state.m)
        sum_refine(s, 10_000)
        occ, total = _scores(tasks, res, _out(topo, s))
        assert occ <= occ0 * (1 + 1e-9) and total < sum0


@settings(max_examples=30, deadline=None, derandomize=True)
@given(instances)
@example((0, (4, 4), 2, 2, 1, False))
def test_both_is_never_worse_than_the_moves_alone(args):
    """``BLOCK_SWAPS = "both"`` against the step before h56sum (``False``) from the same
    mapping: a maximum at most the old one, and at an equal maximum a sum at most the old
    one (the lexicographic objective); referees from scratch."""
    tasks, res = _instance(*args)
    topo, entry = _state(tasks, res, args[0])
    got = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sumcycle, "VCYCLES", 0)  # one level's step (h58sum: the cycles after it)
        for mode in (False, "both"):
            mp.setattr(blockswap, "BLOCK_SWAPS", mode)
            s = RefineState(topo, entry.level, entry.m)
            sum_refine(s, 4 * tasks.n)
            got[mode] = _scores(tasks, res, _out(topo, s))
    (o0, s0), (o1, s1) = got[False], got["both"]
    assert o1 <= o0 * (1 + 1e-9)
    if o1 >= o0 * (1 - 1e-9):
        assert s1 <= s0 * (1 + 1e-9)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(instances, st.integers(0, 200), st.booleans())
def test_a_stop_in_the_second_refinement_keeps_the_first(args, extra, blocks_first):
    """``"both"`` under a deadline that passes at a look of its second refinement: the
    answer is the first's (by default the moves alone, the step before h56sum; with
    ``blocks_first`` the block swaps and their moves), finished, with no exception. The
    looks are counted by a stand-in (no clock)."""
    from coalloc._shared import interrupt

    tasks, res = _instance(*args)
    topo, entry = _state(tasks, res, args[0])
    looks = [0]

    def count(detail=None):
        looks[0] += 1

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sumcycle, "VCYCLES", 0)  # one level's step (h58sum: the cycles after it)
        mp.setattr(interrupt, "check", count)
        mp.setattr(blockswap, "BLOCK_SWAPS", "first" if blocks_first else False)
        alone = RefineState(topo, entry.level, entry.m)
        sum_refine(alone, 4 * tasks.n)
        first = looks[0]
        mp.setattr(blockswap, "BLOCK_SWAPS", "both")
        looks[0] = 0
        full = RefineState(topo, entry.level, entry.m)
        sum_refine(full, 4 * tasks.n, blocks_first=blocks_first)
        k = first + extra

        def stop(detail=None):
            looks[0] += 1
            if looks[0] > k:
                raise interrupt.DeadlinePassed()

        mp.setattr(interrupt, "check", stop)
        looks[0] = 0
        s = RefineState(topo, entry.level, entry.m)
        sum_refine(s, 4 * tasks.n, blocks_first=blocks_first)  # the stop: in the second
        stopped = looks[0] > k
    if stopped:
        assert np.array_equal(s.m, alone.m)
    else:
        assert np.array_equal(s.m, full.m)
    fresh = RefineState(topo, entry.level, s.m)
    np.testing.assert_allclose(s.lload, fresh.lload, rtol=1e-9, atol=1e-12)
