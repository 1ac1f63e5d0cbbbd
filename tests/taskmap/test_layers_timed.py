"""Layer moves in timed calls (``layermoves.layers_until``, ``portfolio._layers_in_time``;
h59edge): a deadline cuts a try and undoes it, the answer is kept only where the maximum
falls, every answer verified (the occupancy recomputed by ``verify_mapping``). No clock
assertion: the deadlines are either far (60 s) or already past."""

import time

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc.taskmap import layermoves
from coalloc.taskmap import portfolio as pf
from coalloc.taskmap.generators import hierarchical_cluster, stencil_task_graph
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState


def _case():
    """12x12 on 9 single-core nodes behind slow uplinks, cut in 3x3 equal blocks: link-bound,
    and layer moves lower it (test_layer_moves.py)."""
    tasks = stencil_task_graph((12, 12))
    res = hierarchical_cluster(n_racks=1, nodes_per_rack=9, cores_per_node=1,
                               node_bandwidth=0.5, rack_bandwidth=100.0)  # fmt: skip
    i, j = np.divmod(np.arange(144), 12)
    return tasks, res, (i // 4) * 3 + (j // 4)


def test_far_deadline_gives_the_untimed_layer_moves():
    tasks, res, m = _case()
    topo = topology(res)
    st = RefineState(topo, TaskLevel.of(tasks), m.copy())
    kept = layermoves.layer_refine(topo, res.links, st)
    out, value, n = layermoves.layers_until(topo, TaskLevel.of(tasks), m, res.links,
                                            time.perf_counter() + 60.0)  # fmt: skip
    assert kept > 0 and n == kept
    assert np.array_equal(out, st.m)
    report = tm.verify_mapping(tasks, res, topo.order_nodes[out], claimed=value)
    assert report.valid and report.matches
    before = tm.verify_mapping(tasks, res, topo.order_nodes[m]).max_occupancy
    assert report.max_occupancy < before * (1 - 1e-9)


def test_a_past_deadline_leaves_the_mapping_as_it_was():
    tasks, res, m = _case()
    topo = topology(res)
    out, value, n = layermoves.layers_until(topo, TaskLevel.of(tasks), m, res.links,
                                            time.perf_counter() - 1.0)  # fmt: skip
    assert n == 0 and np.array_equal(out, m)
    assert value == pytest.approx(tm.verify_mapping(tasks, res, topo.order_nodes[m]).max_occupancy)


@pytest.mark.parametrize("cut_at", [1, 2, 3, 4])
def test_a_deadline_inside_a_try_undoes_that_try(monkeypatch, cut_at):
    """The deadline passes inside the ``cut_at``-th try's bottleneck moves (a spy on
    ``refine`` raises as the deadline's poll would): the mapping is the one before that try
    (the state after the tries kept), verified, never above the start."""
    tasks, res, m = _case()
    topo = topology(res)
    fine = TaskLevel.of(tasks)
    calls, cut, starts, fresh = [0], [False], [], [True]
    real = layermoves.refine
    real_move = RefineState.move

    def spy(state, k):  # a try's bottleneck moves (one call a try)
        calls[0] += 1
        if calls[0] == cut_at:
            cut[0] = True
            raise interrupt.DeadlinePassed()
        made = real(state, k)
        fresh[0] = True
        return made

    def move(self, s, b):  # a try's first layer move: the mapping the try starts from
        if fresh[0]:
            starts.append(self.m.copy())
            fresh[0] = False
        return real_move(self, s, b)

    monkeypatch.setattr(layermoves, "refine", spy)
    monkeypatch.setattr(RefineState, "move", move)
    out, value, _ = layermoves.layers_until(topo, fine, m, res.links, time.perf_counter() + 60)
    assert cut[0]  # (the case makes more than 4 tries)
    assert np.array_equal(out, starts[cut_at - 1])  # the mapping the cut try started from
    report = tm.verify_mapping(tasks, res, topo.order_nodes[out], claimed=value)
    assert report.valid and report.matches
    start = tm.verify_mapping(tasks, res, topo.order_nodes[m]).max_occupancy
    assert report.max_occupancy <= start * (1 + 1e-12)


def test_the_default_gets_layer_moves_in_a_timed_call(monkeypatch):
    """A timed default call on a link-bound stencil: with the timed layers the answer is not
    above the one without (same seed; the deadline, 60 s, never reached), and both verify.
    Its multilevel ends by itself untimed-like, so the layers run on its answer."""
    tasks = stencil_task_graph((12, 12))
    res = hierarchical_cluster(n_racks=1, nodes_per_rack=9, cores_per_node=2, speed=(1.0, 3.0),
                               node_bandwidth=0.5, rack_bandwidth=100.0, seed=3)  # fmt: skip
    monkeypatch.setattr(layermoves, "LAYERS", False)  # the mapper's own (untimed) layers off
    monkeypatch.setattr(pf, "LAYER_RESERVE", 0.0)
    monkeypatch.setattr(pf, "LAYERS_TIMED", False)
    without = tm.solve(tasks, res, seed=0, time_limit=60.0)
    monkeypatch.setattr(pf, "LAYERS_TIMED", True)
    monkeypatch.setattr(layermoves, "LAYERS", True)
    with_layers = tm.solve(tasks, res, seed=0, time_limit=60.0)
    for r in (with_layers, without):
        report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert report.valid and report.matches
    assert with_layers.max_occupancy <= without.max_occupancy * (1 + 1e-12)


def test_the_timed_step_keeps_only_a_lower_maximum():
    """``_layers_in_time`` on a link-bound answer (the equal blocks) lowers it and says so;
    on its own answer again it changes nothing (no layer move helps twice from a local
    optimum: the maximum would have to fall); a processor-bound answer is left alone."""
    tasks, res, m = _case()
    topo = topology(res)
    mapping = topo.order_nodes[m]
    r = pf._stopped(tasks, res, method_params={}, time_limit=1.0, elapsed=0.0)
    occ, bott = tm.max_occupancy(tasks, res, mapping)
    node, link = tm.occupancy_graph(tasks, res, mapping)
    r.mapping, r.max_occupancy, r.bottleneck, r.history = mapping, occ, bott, [float(occ)]
    r.node_occupancy, r.link_occupancy, r.iterations = node, link, {}
    assert pf._layers_in_time(tasks, res, r, time.perf_counter() + 60.0)
    report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches and report.max_occupancy < occ * (1 - 1e-9)
    assert r.history[-1] == pytest.approx(report.max_occupancy)
    assert r.iterations["timed_layers"] >= 1
    again = r.max_occupancy
    assert not pf._layers_in_time(tasks, res, r, time.perf_counter() + 60.0)
    assert r.max_occupancy == again
    fast = hierarchical_cluster(n_racks=1, nodes_per_rack=9, cores_per_node=1,
                                node_bandwidth=1e6, rack_bandwidth=1e6)  # fmt: skip
    r2 = tm.solve(tasks, fast, seed=0, time_limit=60.0)
    kept = r2.mapping.copy()
    assert not pf._layers_in_time(tasks, fast, r2, time.perf_counter() + 60.0)
    assert np.array_equal(r2.mapping, kept)


def test_the_spare_time_step_lowers_a_link_bound_answer_and_respects_its_switch(monkeypatch):
    """``layers_in_spare_time`` (solve's spare time after the bound): off, nothing changes;
    on, with 60 s left, the equal blocks' answer is lowered (verified); with no time left
    (a deadline already past) nothing changes."""
    tasks, res, m = _case()
    topo = topology(res)

    def answer():
        mapping = topo.order_nodes[m]
        r = pf._stopped(tasks, res, method_params={}, time_limit=1.0, elapsed=0.0)
        occ, bott = tm.max_occupancy(tasks, res, mapping)
        r.mapping, r.max_occupancy, r.bottleneck, r.history = mapping, occ, bott, [float(occ)]
        r.node_occupancy, r.link_occupancy = tm.occupancy_graph(tasks, res, mapping)
        r.iterations = {}
        return r, occ

    monkeypatch.setattr(pf, "LAYERS_SPARE", False)
    r, occ = answer()
    pf.layers_in_spare_time(tasks, res, r, time.perf_counter() + 60.0)
    assert r.max_occupancy == occ and "timed_layers" not in r.iterations
    monkeypatch.setattr(pf, "LAYERS_SPARE", True)
    r, occ = answer()
    pf.layers_in_spare_time(tasks, res, r, time.perf_counter() - 1.0)
    assert r.max_occupancy == occ
    pf.layers_in_spare_time(tasks, res, r, time.perf_counter() + 60.0)
    report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches and report.max_occupancy < occ * (1 - 1e-9)
    assert r.iterations["timed_layers"] >= 1
