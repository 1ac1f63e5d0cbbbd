"""V-cycles of the sum step (``sumcycle.sum_cycles``, h58sum): a coarse level of the answer
has exactly its projection's loads, a cycle never raises the maximum occupancy and keeps
only a lexicographically better answer, a deadline in a cycle keeps the answer before it,
and the knob in ``sum_refine``. Referees: ``verify_mapping`` and ``communication_cost``
from scratch, and ``RefineState.refresh`` (the loads recomputed)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc.taskmap import generators as gen
from coalloc.taskmap import sumcycle
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState
from coalloc.taskmap.sumrefine import sum_refine


def _scores(tasks, res, mapping):
    report = tm.verify_mapping(tasks, res, mapping)
    assert report.valid, report.problems
    return float(report.max_occupancy), tm.communication_cost(tasks, res, mapping)


def _instance(seed: int, shape: tuple, racks: int, cores: int, spread: bool):
    tasks = gen.stencil_task_graph(shape, compute=(0.5, 2.0) if spread else 1.0,
                                   volume=(0.5, 4.0), seed=seed)  # fmt: skip
    res = gen.hierarchical_cluster(n_racks=racks, nodes_per_rack=2, cores_per_node=cores,
                                   speed=(0.5, 3.0) if spread else 1.0, seed=seed)  # fmt: skip
    topo, fine = topology(res), TaskLevel.of(tasks)
    m = np.random.default_rng(seed).integers(0, topo.P, tasks.n)
    return tasks, res, topo, fine, m


@pytest.fixture(autouse=True, scope="module")
def _two_cycles():
    """The cycles as h58sum measured them (two): main has them off (``VCYCLES = 0``), and a
    test of the cycles with none would pass whatever they did."""
    old, sumcycle.VCYCLES = sumcycle.VCYCLES, 2
    yield
    sumcycle.VCYCLES = old


instances = st.tuples(st.integers(0, 400), st.sampled_from([(6, 6), (8, 5), (4, 4, 3)]),
                      st.integers(1, 3), st.integers(1, 2), st.booleans())  # fmt: skip


@settings(max_examples=30, deadline=None, derandomize=True)
@given(instances)
def test_a_coarse_level_has_its_projections_loads(args):
    _, _, topo, fine, m = _instance(*args)
    got = sumcycle._coarser(fine, m)
    if got is None:
        return
    coarse, cmap, mc = got
    np.testing.assert_array_equal(mc[cmap], m)  # a coarse vertex sits on one processor
    assert coarse.n < fine.n and coarse.vw.sum() == pytest.approx(fine.vw.sum())
    a, b = RefineState(topo, fine, m), RefineState(topo, coarse, mc)
    np.testing.assert_allclose(b.nload, a.nload, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b.lload, a.lload, rtol=1e-9, atol=1e-12)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(instances)
def test_a_cycle_keeps_only_a_lexicographically_better_answer(args):
    tasks, res, topo, fine, m = _instance(*args)
    state = RefineState(topo, fine, m)
    occ0, sum0 = _scores(tasks, res, topo.order_nodes[state.m])
    kept = sumcycle.sum_cycles(state, lambda s: sum_refine(s, max(200, 4 * s.level.n)))
    occ1, sum1 = _scores(tasks, res, topo.order_nodes[state.m])
    assert occ1 <= occ0 * (1 + 1e-9)
    if kept:
        assert occ1 < occ0 * (1 - 1e-12) or sum1 < sum0
    else:
        np.testing.assert_array_equal(state.m, m)
    nload, lload = state.nload.copy(), state.lload.copy()
    state.refresh()
    np.testing.assert_allclose(nload, state.nload, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lload, state.lload, rtol=1e-9, atol=1e-12)


def test_a_deadline_in_a_cycle_keeps_the_answer_before_it():
    tasks, res, topo, fine, m = _instance(3, (8, 8), 2, 2, True)
    calls = []

    def refine(s):
        calls.append(s.level.n)
        if len(calls) == 2:  # the second level of the first cycle
            raise interrupt.DeadlinePassed()
        return sum_refine(s, max(200, 4 * s.level.n))

    state = RefineState(topo, fine, m)
    with pytest.raises(interrupt.DeadlinePassed):  # passed on, as a stop in the moves
        sumcycle.sum_cycles(state, refine)
    assert len(calls) == 2 and calls[0] < fine.n  # stopped inside the cycle
    np.testing.assert_array_equal(state.m, m)
    nload, lload = state.nload.copy(), state.lload.copy()
    state.refresh()  # the loads are the entry mapping's
    np.testing.assert_allclose(nload, state.nload, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(lload, state.lload, rtol=1e-9, atol=1e-12)
    _scores(tasks, res, topo.order_nodes[state.m])


def test_no_cycle_starts_where_the_deadline_is_too_near(monkeypatch):
    """``fits``: untimed always; under a deadline only with ``CYCLE_ROOM`` x the step's
    seconds x the cycles left (a stand-in deadline, no clock race: 1 s and 1 ms away)."""
    import time

    assert sumcycle.fits(1e9)  # no deadline in force
    now = time.perf_counter_ns()
    monkeypatch.setattr(interrupt, "deadline_ns", lambda: now + 10**9)
    monkeypatch.setattr(sumcycle, "CYCLE_WORK", None)  # the cycles run where they start
    assert sumcycle.fits(0.0) and not sumcycle.fits(1.0)
    monkeypatch.setattr(interrupt, "deadline_ns", lambda: now + 10**6)
    assert not sumcycle.fits(0.01)
    tasks, res, topo, fine, m = _instance(0, (8, 8), 2, 2, True)
    got = {}
    for near in (False, True):  # sum_refine with the deadline far away, then too near
        monkeypatch.setattr(sumcycle, "fits", lambda s, c=-1, near=near: not near)
        state = RefineState(topo, fine, m)
        sum_refine(state, 4 * fine.n)
        got[near] = _scores(tasks, res, topo.order_nodes[state.m])
    monkeypatch.setattr(sumcycle, "VCYCLES", 0)
    state = RefineState(topo, fine, m)
    sum_refine(state, 4 * fine.n)
    assert got[True] == _scores(tasks, res, topo.order_nodes[state.m])  # as without cycles
    assert got[False][1] < got[True][1]


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_the_knob_in_sum_refine(monkeypatch, seed):
    """From a mapping at random, the cycles lower the sum the step alone leaves (fails
    without them) and the maximum is no higher."""
    tasks, res, topo, fine, m = _instance(seed, (8, 8), 2, 2, True)
    monkeypatch.setattr(sumcycle, "CYCLE_WORK", None)  # the cycles, not their work cap
    out = {}
    for cycles in (0, 2):
        monkeypatch.setattr(sumcycle, "VCYCLES", cycles)
        state = RefineState(topo, fine, m)
        sum_refine(state, 4 * fine.n)
        out[cycles] = _scores(tasks, res, topo.order_nodes[state.m])
    assert out[2][0] <= out[0][0] * (1 + 1e-9)
    assert out[2][1] < out[0][1]


def test_a_spent_work_cap_stops_the_cycle_before_its_first_level(monkeypatch):
    """``CYCLE_WORK``: a cap already spent stops the first cycle before its first
    contraction and keeps the entry mapping; no cap (``None``) runs the cycle."""
    tasks, res, topo, fine, m = _instance(3, (8, 8), 2, 2, True)
    calls = []

    def refine(s):
        calls.append(s.level.n)
        return sum_refine(s, max(200, 4 * s.level.n))

    monkeypatch.setattr(sumcycle, "CYCLE_WORK", 1.0)
    state = RefineState(topo, fine, m)
    assert sumcycle.sum_cycles(state, refine, step_work=-1.0) == 0
    assert calls == []
    np.testing.assert_array_equal(state.m, m)
    monkeypatch.setattr(sumcycle, "CYCLE_WORK", None)
    state = RefineState(topo, fine, m)
    sumcycle.sum_cycles(state, refine, step_work=-1.0)
    assert calls and calls[0] < fine.n  # the coarse levels ran
    _scores(tasks, res, topo.order_nodes[state.m])


@pytest.mark.parametrize("seed", [0, 1, 4])
def test_a_work_cap_inside_a_cycle_keeps_the_levels_refined(monkeypatch, seed):
    """The cap passed after the coarsest level's step: the finer levels are not refined,
    that level's answer is projected down (its loads are the projection's: consistent) and
    kept only when lexicographically better; the maximum never rises."""
    tasks, res, topo, fine, m = _instance(seed, (8, 8), 2, 2, True)
    calls = []

    def refine(s):
        calls.append(s.level.n)
        moved = sum_refine(s, max(200, 4 * s.level.n))
        sumcycle.charge(1e15)  # the cap passed after this level
        return moved

    monkeypatch.setattr(sumcycle, "VCYCLES", 0)  # from the step's answer: contractible
    state = RefineState(topo, fine, m)
    sum_refine(state, 4 * fine.n)
    m = state.m.copy()
    monkeypatch.setattr(sumcycle, "CYCLE_WORK", 1.0)
    state = RefineState(topo, fine, m)
    state.refresh()
    entry = (state.maximum(), sumcycle._cost(state))
    kept = sumcycle.sum_cycles(state, refine, cycles=2, step_work=1e12)
    assert len(calls) == 1 and calls[0] < fine.n  # the coarsest level only, one cycle
    nload, lload = state.nload.copy(), state.lload.copy()
    state.refresh()
    np.testing.assert_allclose(nload, state.nload, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lload, state.lload, rtol=1e-9, atol=1e-12)
    occ, cost = _scores(tasks, res, topo.order_nodes[state.m])
    assert occ <= entry[0] * (1 + 1e-9)
    if kept:
        assert occ < entry[0] * (1 - 1e-9) or cost < entry[1] * (1 - 1e-12)
    else:
        np.testing.assert_array_equal(state.m, m)


def test_same_answer_whatever_the_clocks_say(monkeypatch):
    """The cap counts work, reads no clock: ``sum_refine`` with its cycles gives the same
    mapping with every clock of :mod:`time` frozen and with them racing (a second a
    call). Fails if a clock decides the cycles again (h58sum's ``CYCLE_CPU`` read
    ``time.process_time``: racing, it stopped every cycle). The cycles must change the
    answer here, or the test would pass with none."""
    import time

    tasks, res, topo, fine, m = _instance(0, (8, 8), 2, 2, True)
    names = ("process_time", "perf_counter", "monotonic", "time", "thread_time")
    real = {k: getattr(time, k) for k in names}

    def answer(clocks):
        if clocks:
            for k in names:
                monkeypatch.setattr(time, k, clocks[k])
        try:
            state = RefineState(topo, fine, m)
            sum_refine(state, 4 * fine.n)
        finally:
            for k in names:
                monkeypatch.setattr(time, k, real[k])
        return state.m.copy()

    def frozen(k):
        return lambda: 1000.0

    def racing(k):
        box = [0.0]

        def clock():
            box[0] += 1.0
            return box[0]
        return clock

    got = [answer({k: f(k) for k in names}) for f in (frozen, racing)]
    np.testing.assert_array_equal(got[0], got[1])
    np.testing.assert_array_equal(got[0], answer(None))
    monkeypatch.setattr(sumcycle, "VCYCLES", 0)
    assert not np.array_equal(got[0], answer(None))  # the cycles changed the answer


def _portfolio_pair(monkeypatch, tasks, res):
    from coalloc.taskmap.portfolio import map_portfolio

    monkeypatch.setattr(sumcycle, "VCYCLES", 0)  # none inside the step (the default)
    out = {}
    for final in (0, 2):
        monkeypatch.setattr(sumcycle, "FINAL_CYCLES", final)
        r = map_portfolio(tasks, res)
        rep = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert rep.valid and rep.matches, rep.problems
        out[final] = (r.max_occupancy, tm.communication_cost(tasks, res, r.mapping), r)
    return out


@pytest.mark.slow
@settings(max_examples=10, deadline=None, derandomize=True)
@given(instances)
def test_the_final_cycles_never_lift_the_default_maximum(args):
    """``FINAL_CYCLES``: the default's answer after them has no higher maximum occupancy
    and no higher route cost at an equal maximum (nothing runs after them)."""
    tasks, res, _, _, _ = _instance(*args)
    with pytest.MonkeyPatch.context() as mp:
        out = _portfolio_pair(mp, tasks, res)
    assert out[2][0] <= out[0][0] * (1 + 1e-12)
    if out[2][0] >= out[0][0] * (1 - 1e-12):
        assert out[2][1] <= out[0][1] * (1 + 1e-12)


def test_the_final_cycles_lower_the_default_sum(monkeypatch):
    """A stencil on two racks (fails without the final cycles: the same answer), and the
    same answer whatever the clocks say (the cap counts work)."""
    import time

    tasks, res, _, _, _ = _instance(3, (10, 8), 2, 2, True)  # measured: 16.54 -> 14.43
    out = _portfolio_pair(monkeypatch, tasks, res)
    assert out[2][0] <= out[0][0] * (1 + 1e-12)
    assert out[2][0] < out[0][0] * (1 - 1e-12) or out[2][1] < out[0][1] * (1 - 1e-9)
    box = [0.0]

    def racing():
        box[0] += 1.0
        return box[0]

    monkeypatch.setattr(time, "process_time", racing)
    monkeypatch.setattr(time, "thread_time", racing)
    raced = _portfolio_pair(monkeypatch, tasks, res)[2][2]
    monkeypatch.undo()
    np.testing.assert_array_equal(raced.mapping, out[2][2].mapping)
