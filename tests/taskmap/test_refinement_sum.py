"""The sum refinement, the multilevel mapper's last step (issue 40): moves and swaps that
lower volume x route distance never raise the maximum occupancy. Referees: the family's
``verify_mapping`` (the maximum occupancy) and ``communication_cost`` (the sum), both
computed from scratch apart from the refinement's incremental loads and route costs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import generators as gen
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.multilevel import map_multilevel
from coalloc.taskmap.refinement import RefineState
from coalloc.taskmap.sumrefine import sum_refine


def _scores(tasks, res, mapping):
    report = tm.verify_mapping(tasks, res, mapping)
    assert report.valid, report
    return float(report.max_occupancy), tm.communication_cost(tasks, res, mapping)


@st.composite
def cluster_stencils(draw):
    """A stencil (2-D or 3-D, uniform or random weights) on a hierarchical cluster."""
    seed = draw(st.integers(0, 1000))
    shape = draw(st.sampled_from([(4, 4), (6, 5), (8, 8), (3, 3, 3)]))
    tasks = gen.stencil_task_graph(
        shape,
        compute=draw(st.sampled_from([1.0, (0.5, 2.0)])),
        volume=draw(st.sampled_from([1.0, (0.5, 4.0)])),
        seed=seed,
    )
    res = gen.hierarchical_cluster(
        n_racks=draw(st.integers(1, 2)),
        nodes_per_rack=draw(st.integers(1, 3)),
        cores_per_node=draw(st.integers(1, 4)),
        speed=draw(st.sampled_from([1.0, (0.5, 3.0)])),
        seed=seed,
    )
    return tasks, res


@st.composite
def internet_pipelines(draw):
    """A pipeline or geometric task graph on an Internet-like resource graph."""
    seed = draw(st.integers(0, 1000))
    if draw(st.booleans()):
        tasks = gen.pipeline_task_graph(
            n_clusters=draw(st.integers(1, 4)), cluster_size=draw(st.integers(2, 6)), seed=seed
        )
    else:
        tasks = gen.geometric_task_graph(draw(st.integers(10, 80)), degree=5.0, seed=seed)
    res = gen.internet_resource_graph(n_wan=2, n_lan=2, lan_size=(2, 4), seed=seed)
    return tasks, res


def _refined_from(tasks, res, start_seed):
    """A random mapping, then sum_refine: (scores before, scores after, moves)."""
    topo = topology(res)
    m = np.random.default_rng(start_seed).integers(0, topo.P, tasks.n)
    before = _scores(tasks, res, topo.order_nodes[m])
    state = RefineState(topo, TaskLevel.of(tasks), m)
    moves = sum_refine(state, 10_000)
    after = _scores(tasks, res, topo.order_nodes[state.m])
    return before, after, moves


@settings(max_examples=40, deadline=None, derandomize=True)
@given(cluster_stencils(), st.integers(0, 5))
@example(
    (
        gen.stencil_task_graph((4, 4)),
        gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2),
    ),
    0,
)
def test_sum_refine_never_raises_either_objective_on_clusters(inst, start):
    before, after, moves = _refined_from(*inst, start)
    assert after[0] <= before[0] * (1 + 1e-9)
    assert after[1] <= before[1] * (1 + 1e-9) + 1e-12
    if moves == 0:
        assert after[1] == pytest.approx(before[1], rel=1e-12)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(internet_pipelines(), st.integers(0, 5))
def test_sum_refine_never_raises_either_objective_on_internet_graphs(inst, start):
    before, after, _ = _refined_from(*inst, start)
    assert after[0] <= before[0] * (1 + 1e-9)
    assert after[1] <= before[1] * (1 + 1e-9) + 1e-12


def test_sum_refine_lowers_the_sum_of_a_scattered_stencil():
    """A 4x4 stencil scattered over 4 cores at equal compute: swaps of equal tasks lower the
    sum a lot and the maximum occupancy stays."""
    tasks = gen.stencil_task_graph((4, 4))
    res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2)
    before, after, moves = _refined_from(tasks, res, 3)
    assert moves > 0
    assert after[1] < 0.8 * before[1]
    assert after[0] <= before[0] * (1 + 1e-9)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.one_of(cluster_stencils(), internet_pipelines()))
def test_the_mapper_with_the_step_is_no_worse_on_either_objective(inst):
    tasks, res = inst
    off = map_multilevel(tasks, res, seed=0, sum_refine=False)
    on = map_multilevel(tasks, res, seed=0, sum_refine=True)
    occ_off, sum_off = _scores(tasks, res, off.mapping)
    occ_on, sum_on = _scores(tasks, res, on.mapping)
    assert on.max_occupancy == pytest.approx(occ_on, rel=1e-9)
    assert occ_on <= occ_off * (1 + 1e-9)
    assert sum_on <= sum_off * (1 + 1e-9) + 1e-12
    assert on.params["sum_refine"] is True and off.params["sum_refine"] is False


def test_the_step_is_deterministic():
    tasks = gen.geometric_task_graph(120, seed=4)
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=4, seed=4)
    a = map_multilevel(tasks, res, seed=1)
    b = map_multilevel(tasks, res, seed=1)
    assert np.array_equal(a.mapping, b.mapping)


@pytest.mark.parametrize("bad", ["yes", 1, None])
def test_sum_refine_must_be_a_boolean(bad):
    tasks = gen.stencil_task_graph((3, 3))
    res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=1, cores_per_node=2)
    with pytest.raises((TypeError, ValueError), match="sum_refine"):
        map_multilevel(tasks, res, sum_refine=bad)


@st.composite
def geometric_on_clusters(draw):
    """Random geometric graphs on heterogeneous clusters: the processors near the maximum,
    where single moves and swaps stop and ejections are for."""
    seed = draw(st.integers(0, 1000))
    tasks = gen.geometric_task_graph(draw(st.integers(40, 160)), seed=seed)
    res = gen.hierarchical_cluster(
        n_racks=draw(st.integers(1, 2)), nodes_per_rack=draw(st.integers(2, 3)),
        cores_per_node=draw(st.integers(2, 4)), speed=draw(st.sampled_from([1.0, (1.0, 3.0)])),
        node_bandwidth=50.0, rack_bandwidth=100.0, seed=seed,
    )  # fmt: skip
    return tasks, res


def _with_and_without_ejections(tasks, res, monkeypatch):
    from coalloc.taskmap import blockswap, sumrefine

    # one path of the step (its moves alone): with ``BLOCK_SWAPS = "both"`` the step keeps
    # the lexicographically better of two paths, which may trade a higher sum for a lower
    # maximum when the ejections change one of them (h56sum)
    monkeypatch.setattr(blockswap, "BLOCK_SWAPS", False)
    monkeypatch.setattr(sumrefine.sumcycle, "VCYCLES", 0)  # and no V-cycles (h58sum)
    out = []
    for flag in (False, True):
        monkeypatch.setattr(sumrefine, "_EJECTIONS", flag)
        r = map_multilevel(tasks, res, seed=0)
        occ, cost = _scores(tasks, res, r.mapping)
        assert r.max_occupancy == pytest.approx(occ, rel=1e-9)
        out.append((occ, cost, r.mapping))
    return out


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.one_of(geometric_on_clusters(), cluster_stencils(), internet_pipelines()))
def test_ejections_never_raise_the_bottleneck_nor_the_sum(inst):
    """The step's second phase (ejections) starts from the first phase's local minimum and
    takes only pairs that lower the sum under the bottleneck as a cap: against the step
    without it, on many instances of three generators, neither objective ever rises
    (``verify_mapping`` and ``communication_cost`` as referees)."""
    tasks, res = inst
    with pytest.MonkeyPatch.context() as mp:
        (occ0, sum0, _), (occ1, sum1, _) = _with_and_without_ejections(tasks, res, mp)
    assert occ1 <= occ0 * (1 + 1e-9)
    assert sum1 <= sum0 * (1 + 1e-9) + 1e-12


def test_ejections_lower_the_sum_where_moves_and_swaps_stop(monkeypatch):
    """On random geometric graphs on clusters the ejections lower the sum of some answers
    by more than 1 % (a phase that never moved would pass the test above by doing
    nothing). Measured on these 8: 5 lower by more than 1 %, by up to 16 %."""
    lower = 0
    for seed in range(8):
        tasks = gen.geometric_task_graph(150, seed=seed)
        res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=4,
                                       speed=(1.0, 3.0), node_bandwidth=50.0,
                                       rack_bandwidth=100.0, seed=seed)  # fmt: skip
        (occ0, sum0, _), (occ1, sum1, _) = _with_and_without_ejections(tasks, res, monkeypatch)
        assert occ1 <= occ0 * (1 + 1e-9) and sum1 <= sum0 * (1 + 1e-9)
        lower += sum1 < 0.99 * sum0
    assert lower >= 2, lower


@settings(max_examples=25, deadline=None, derandomize=True)
@given(internet_pipelines(), st.integers(0, 5))
def test_the_swap_table_has_the_gains_of_gains_to(inst, start):
    """The swaps' table of gains (every pair of processors at once) holds, bit for bit, what
    ``_gains_to`` computes for the tasks of ``b`` alone, and each pair's largest gain;
    referee: ``_gains_to`` and ``np.flatnonzero`` on the mapping."""
    from coalloc.taskmap import sumrefine

    tasks, res = inst
    topo = topology(res)
    m = np.random.default_rng(start).integers(0, topo.P, tasks.n)
    state = RefineState(topo, TaskLevel.of(tasks), m)
    ct, cb, _ = sumrefine._cross_gains(state, positive=False)
    if not ct.shape[0]:
        return
    work = sumrefine._SumWork(state, state.maximum(), 10)
    ks = list(range(ct.shape[0]))[::-1]  # any order of the moves
    pair_of, offsets, on, gains, largest = sumrefine._swap_table(work, ct, cb, ks)
    for i, k in enumerate(ks):
        j = pair_of[i]
        b, a = int(cb[k]), int(state.m[ct[k]])
        want = np.flatnonzero(state.m == b)
        assert np.array_equal(on[offsets[j] : offsets[j + 1]], want)
        ref = sumrefine._gains_to(state, want, a)
        assert np.array_equal(gains[offsets[j] : offsets[j + 1]], ref)
        assert largest[j] == (ref.max() if ref.shape[0] else -np.inf)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(internet_pipelines(), st.integers(0, 5))
def test_a_move_adds_the_row_deltas_of_its_task(inst, start):
    """``RefineState.move`` (one task, its own path) leaves the link loads bit for bit where
    the batch deltas of ``_row_deltas`` added in their order leave them, and both near the
    loads recomputed from scratch; referee: ``refresh``."""
    tasks, res = inst
    topo = topology(res)
    rng = np.random.default_rng(start)
    state = RefineState(topo, TaskLevel.of(tasks), rng.integers(0, topo.P, tasks.n))
    for t, b in zip(rng.integers(0, tasks.n, 12).tolist(), rng.integers(0, topo.P, 12).tolist()):
        want = state.lload.copy()
        _, link, val = state._row_deltas(np.array([t]), np.array([b]))
        np.add.at(want, link, val)
        state.move(t, b)
        assert np.array_equal(state.lload, want)
    moved = state.lload.copy()
    state.refresh()
    assert np.allclose(moved, state.lload, rtol=1e-9, atol=1e-9)


def _screens_referee(state, work, ct, cb, gain, ks, moves):
    """The swap and ejection screens' verdicts, one move and one partner at a time in plain
    Python scalars (the scoring of ``_sum_swaps`` and the filters of ``_sum_ejections``)."""
    from coalloc.taskmap import sumrefine as rf

    topo, lv, m, nload, limit = state.topo, state.level, state.m, state.nload, work.limit
    et, ec, eg = moves
    swaps, ejects = [], []
    for k in ks:
        t, b = int(ct[k]), int(cb[k])
        a, g_t = int(m[t]), float(gain[k])
        nb = {}
        for e in range(lv.ip[t], lv.ip[t + 1]):
            nb[int(lv.ix[e])] = nb.get(int(lv.ix[e]), 0.0) + float(lv.iw[e])
        found = False
        for u in np.flatnonzero(m == b).tolist():
            dw = float(lv.vw[u]) - float(lv.vw[t])
            fit = (nload[a] + dw <= max(limit * topo.cap[a], nload[a])) and (
                nload[b] - dw <= max(limit * topo.cap[b], nload[b])
            )
            g_u = float(rf._gains_to(state, np.array([u]), a)[0])
            g = g_t + g_u - 2 * nb.get(u, 0.0) * float(topo.cost[a, b])
            found |= bool(fit and not work.touched[u] and g > rf.TINY * (1 + abs(g_t)))
        swaps.append(found)
        room = nload[b] + lv.vw[t] - limit * topo.cap[b]
        tried, ok = 0, False
        for j in range(et.shape[0]):
            v, c = int(et[j]), int(ec[j])
            if not (m[v] == b and c != a and lv.vw[v] >= room and not work.touched[v]
                    and eg[j] > -g_t and nload[c] + lv.vw[v] <= limit * topo.cap[c]):
                continue  # fmt: skip
            tried += 1
            if tried > rf._SWAP_TRIES:
                break
            ok |= v != t and not work.near[v]
        ejects.append(bool(room > 0 and ok))
    return swaps, ejects


@settings(max_examples=25, deadline=None, derandomize=True)
@given(internet_pipelines(), st.integers(0, 5), st.floats(0.6, 1.0))
def test_the_swap_and_ejection_screens_agree_with_one_at_a_time(inst, start, tight):
    """The screens of a window of blocked moves (every partner at once) give the verdicts of
    the one-move-at-a-time scoring, with some tasks already moved in the pass and a cap
    that blocks; referee: plain Python scalars."""
    from coalloc.taskmap import sumrefine as rf

    tasks, res = inst
    topo = topology(res)
    rng = np.random.default_rng(start)
    state = RefineState(topo, TaskLevel.of(tasks), rng.integers(0, topo.P, tasks.n))
    ct, cb, gain = rf._cross_gains(state)
    if not ct.shape[0]:
        return
    work = rf._SumWork(state, tight * state.maximum(), 10**6)
    for t in rng.integers(0, tasks.n, 2).tolist():  # some tasks moved in this pass
        work.touch(t)
    ks = list(range(ct.shape[0]))
    moves = rf._cross_gains(state, positive=False)
    got_s = rf._swap_screen(work, ct, cb, gain, ks, rf._swap_table(work, ct, cb, ks))
    got_e = rf._eject_screen(work, ct, cb, gain, ks, moves)
    want_s, want_e = _screens_referee(state, work, ct, cb, gain, ks, moves)
    assert got_s.tolist() == want_s
    assert got_e.tolist() == want_e
