"""Sequences of moves across the bottleneck link (h56sum follow-up):
:func:`coalloc.taskmap.swaprefine.link_swap_refine` and its use in the sum step.

Referees: :func:`coalloc.taskmap.verify_mapping` (the maximum recomputed from scratch),
the brute-force optimum on a tiny instance, and a hand case where no single move helps.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import taskmap as tm
from coalloc.taskmap import generators as gen
from coalloc.taskmap import sumrefine
from coalloc.taskmap import swaprefine as sw
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState, refine

from ._brute import brute_force


def _split_pairs():
    """Two nodes of one core; two pairs of tasks of compute 3.5, each pair split across
    the nodes' uplinks (40 units a stream over bandwidth 10: occupancy 8 > 7)."""
    res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    vol = np.zeros((4, 4))
    vol[0, 1] = vol[2, 3] = 40.0
    return tm.TaskGraph([3.5] * 4, vol), res


def _mapped(tasks, res, positions):
    topo = topology(res)
    return topo, RefineState(topo, TaskLevel.of(tasks), np.asarray(positions))


def _maximum(tasks, res, topo, state):
    return tm.verify_mapping(tasks, res, topo.order_nodes[state.m]).max_occupancy


def test_a_link_relieved_where_no_single_move_or_processor_swap_helps():
    tasks, res = _split_pairs()
    topo, state = _mapped(tasks, res, [0, 1, 0, 1])
    assert _maximum(tasks, res, topo, state) == pytest.approx(8.0)  # a link: 40 / 10 ... x2
    assert refine(state, 100) == 0 and sw.swap_refine(state, 10) == 0  # both stuck
    assert sw.link_swap_refine(state, 10) == 2
    assert _maximum(tasks, res, topo, state) == pytest.approx(7.0)
    assert brute_force(tasks, res) == pytest.approx(7.0)  # the optimum


def test_the_knob_in_the_sum_step(monkeypatch):
    tasks, res = _split_pairs()
    for on, want in ((False, 8.0), (True, 7.0)):
        monkeypatch.setattr(sw, "LINK_SWAPS", on)
        monkeypatch.setattr(sumrefine, "_EJECTIONS", False)  # the moves alone: stuck too
        monkeypatch.setattr(sumrefine.blockswap, "BLOCK_SWAPS", False)
        monkeypatch.setattr(sumrefine.sumcycle, "VCYCLES", 0)  # no moves after it (h58sum)
        topo, state = _mapped(tasks, res, [0, 1, 0, 1])
        sumrefine.sum_refine(state, 0)  # no tries for the moves: the link step alone
        assert _maximum(tasks, res, topo, state) == pytest.approx(want)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    n=st.integers(2, 40),
    seed=st.integers(0, 10_000),
    shape=st.sampled_from([(1, 2, 1), (1, 2, 2), (2, 2, 2), (2, 3, 1)]),
    slow=st.sampled_from([0.5, 5.0, 100.0]),
)
def test_the_step_never_raises_the_maximum(n, seed, shape, slow):
    tasks = gen.geometric_task_graph(n, seed=seed)
    res = gen.hierarchical_cluster(n_racks=shape[0], nodes_per_rack=shape[1],
                                   cores_per_node=shape[2], speed=(1.0, 3.0),
                                   node_bandwidth=slow, rack_bandwidth=2 * slow,
                                   seed=seed)  # fmt: skip
    rng = np.random.default_rng(seed)
    topo, state = _mapped(tasks, res, rng.integers(0, topology(res).P, size=n))
    m0 = state.m.copy()
    before = _maximum(tasks, res, topo, state)
    made = sw.link_swap_refine(state, 20)
    after = _maximum(tasks, res, topo, state)
    assert after <= before * (1 + 1e-9)
    if made:
        assert after < before  # kept only when the bottleneck fell
    else:
        assert np.array_equal(state.m, m0)  # else the entry mapping
    loads = (state.nload.copy(), state.lload.copy())
    state.refresh()
    np.testing.assert_allclose(loads[0], state.nload, atol=1e-9)
    np.testing.assert_allclose(loads[1], state.lload, atol=1e-9)
    # and the sum step with it: never above the entry
    topo, again = _mapped(tasks, res, m0)
    sumrefine.sum_refine(again, 200)
    assert _maximum(tasks, res, topo, again) <= before * (1 + 1e-9)


def test_a_passed_deadline_keeps_the_entry():
    from coalloc._shared import interrupt

    tasks, res = _split_pairs()
    topo, state = _mapped(tasks, res, [0, 1, 0, 1])
    with pytest.raises(interrupt.DeadlinePassed), interrupt.until(0.0):
        sw.link_swap_refine(state, 10)
    assert state.m.tolist() == [0, 1, 0, 1] and state.maximum() == pytest.approx(8.0)
