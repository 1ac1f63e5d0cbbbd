"""The sum step in a timed call's spare time (``portfolio.sum_in_spare_time``, h54tsum) and
the sum step's looks at the deadline between its moves. Referees: the family's
``verify_mapping`` and ``communication_cost`` from scratch on every answer (the maximum never
rises, the sum falls), a fresh ``RefineState``'s loads for a step stopped mid-pass, the
brute-force optimum on tiny instances; a counting stand-in for the deadline, no clock raced."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc.taskmap import communication_cost, sumrefine
from coalloc.taskmap import generators as gen
from coalloc.taskmap import portfolio as pf
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.multilevel import map_multilevel
from coalloc.taskmap.refinement import RefineState

from ._brute import brute_force


def _instance(shape=(12, 12), seed=3):
    """A stencil on a cluster of unequal cores (the round-robin mapping is then above the
    lower bound: a stopped answer that ``settle`` leaves "time_limit")."""
    tasks = gen.stencil_task_graph(shape, seed=seed)
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=4,
                                   speed=(0.5, 2.0), seed=5)  # fmt: skip
    return tasks, res


def _blocks(tasks, res) -> np.ndarray:
    """Tasks dealt round-robin onto the processors: a poor sum, a valid mapping."""
    procs = np.asarray(res.processors)
    return procs[np.arange(tasks.n) % procs.shape[0]]


def _stopped(tasks, res, status="time_limit"):
    """A default answer as a stopped run leaves it: the round-robin mapping, no sum step."""
    out = map_multilevel(tasks, res, sum_refine=False)
    out.mapping = _blocks(tasks, res)
    out.max_occupancy = float(tm.verify_mapping(tasks, res, out.mapping).max_occupancy)
    out.status = status
    return out


def test_a_stopped_answer_gets_a_lower_sum_and_no_higher_maximum():
    tasks, res = _instance()
    out = _stopped(tasks, res)
    m0, cap = out.mapping.copy(), float(out.max_occupancy)
    assert pf.sum_in_spare_time(tasks, res, out, time.perf_counter() + 600.0) is out
    rep = tm.verify_mapping(tasks, res, out.mapping, claimed=out.max_occupancy)
    assert rep.valid and rep.ok
    assert float(rep.max_occupancy) <= cap * (1 + 1e-12)
    assert communication_cost(tasks, res, out.mapping) < 0.8 * communication_cost(tasks, res, m0)
    assert "sum step in the spare time" in out.message and "sum_spare" in out.timings
    assert out.status == "time_limit"  # the caller's to settle
    # the occupancy graphs are the new mapping's
    occ, _ = tm.max_occupancy(tasks, res, out.mapping)
    assert float(occ) == float(out.max_occupancy)


def test_an_answer_that_ended_by_itself_is_left_alone():
    tasks, res = _instance()
    out = _stopped(tasks, res, status="feasible")
    m0 = out.mapping.copy()
    pf.sum_in_spare_time(tasks, res, out, time.perf_counter() + 600.0)
    assert np.array_equal(out.mapping, m0) and "sum_spare" not in out.timings


def test_too_little_time_left_or_the_knob_off_changes_nothing(monkeypatch):
    tasks, res = _instance()
    out = _stopped(tasks, res)
    m0 = out.mapping.copy()
    short = time.perf_counter() + pf.SUM_RESULT_SECONDS  # under the result's update + minimum
    pf.sum_in_spare_time(tasks, res, out, short)
    assert np.array_equal(out.mapping, m0) and "sum_spare" not in out.timings
    monkeypatch.setattr(pf, "SUM_SPARE", False)
    pf.sum_in_spare_time(tasks, res, out, time.perf_counter() + 600.0)
    assert np.array_equal(out.mapping, m0) and "sum_spare" not in out.timings


def test_solve_spends_its_spare_time_on_a_stopped_default(monkeypatch):
    """``solve`` with a time limit: a stand-in multilevel stopped with the round-robin
    mapping; the answer returned has a lower sum, no higher maximum, and is verified."""

    def with_limit(func, stopped):
        def timed(tasks, res, *, seed=0, time_limit=None, **params):
            return _stopped(tasks, res)

        return timed

    monkeypatch.setattr(pf, "with_time_limit", with_limit)
    monkeypatch.setattr(pf.gridstarts, "GRID_STARTS", False)  # the stopped answer (h58bound)
    tasks, res = _instance()
    m0 = _blocks(tasks, res)
    cap = float(tm.verify_mapping(tasks, res, m0).max_occupancy)
    out = tm.solve(tasks, res, time_limit=600.0)
    rep = tm.verify_mapping(tasks, res, out.mapping, claimed=out.max_occupancy)
    assert rep.valid and rep.ok and float(rep.max_occupancy) <= cap * (1 + 1e-12)
    assert communication_cost(tasks, res, out.mapping) < communication_cost(tasks, res, m0)
    assert out.status in ("time_limit", "optimal") and out.gap is not None
    monkeypatch.setattr(pf, "SUM_SPARE", False)  # the knob off: the stopped answer as it was
    off = tm.solve(tasks, res, time_limit=600.0)
    assert np.array_equal(off.mapping, m0)


def _state(tasks, res, mapping):
    topo, fine = topology(res), TaskLevel.of(tasks)
    position = np.empty(res.n_nodes, dtype=np.int64)
    position[topo.order_nodes] = np.arange(topo.P)
    return RefineState(topo, fine, position[np.asarray(mapping, dtype=np.int64)])


def _stop_after(monkeypatch, k: int) -> None:
    """The deadline passes at the sum step's ``k``-th look at it (a count, not a clock)."""
    looks = [0]

    def check(detail=None):
        looks[0] += 1
        if looks[0] > k:
            raise interrupt.DeadlinePassed()

    monkeypatch.setattr(sumrefine.interrupt, "check", check)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(k=st.integers(0, 60), seed=st.integers(0, 50), shape=st.sampled_from([(6, 6), (9, 8)]))
def test_a_step_stopped_between_moves_keeps_exact_loads_and_the_cap(k, seed, shape):
    """Stopped at any look (between single moves, before a swap or an ejection): the loads
    are those of a fresh state, no resource is above the entry maximum, the mapping is
    valid; with no stop, the same answer as a step that never looks (the looks change no
    answer)."""
    tasks, res = _instance(shape, seed)
    m0 = _blocks(tasks, res)
    full = _state(tasks, res, m0)
    sumrefine.sum_refine(full, max(200, 4 * tasks.n))
    with pytest.MonkeyPatch.context() as mp:
        _stop_after(mp, k)
        state = _state(tasks, res, m0)
        cap = state.maximum()
        try:
            sumrefine.sum_refine(state, max(200, 4 * tasks.n))
            stopped = False
        except interrupt.DeadlinePassed:
            stopped = True
    fresh = RefineState(state.topo, state.level, state.m)
    assert np.allclose(state.nload, fresh.nload, rtol=1e-9, atol=1e-9)
    assert np.allclose(state.lload, fresh.lload, rtol=1e-9, atol=1e-9)
    assert fresh.maximum() <= cap * (1 + 1e-9)
    mapping = state.topo.order_nodes[state.m]
    rep = tm.verify_mapping(tasks, res, mapping)
    assert rep.valid and float(rep.max_occupancy) <= cap * (1 + 1e-9)
    if not stopped:
        assert np.array_equal(state.m, full.m)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(n=st.integers(3, 5), seed=st.integers(0, 200), cores=st.integers(1, 2))
def test_the_spare_time_step_never_lifts_the_maximum_on_tiny_instances(n, seed, cores):
    """From random mappings of tiny geometric graphs: the maximum after the step is at most
    the one before and at least the brute-force optimum (an independent referee of the
    maximum the result claims), the sum no higher."""
    tasks = gen.geometric_task_graph(n, degree=3.0, seed=seed)
    res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=cores,
                                   speed=(0.5, 2.0), seed=seed)  # fmt: skip
    rng = np.random.default_rng(seed)
    out = map_multilevel(tasks, res, sum_refine=False)
    out.mapping = rng.choice(np.asarray(res.processors), tasks.n)
    out.max_occupancy = float(tm.verify_mapping(tasks, res, out.mapping).max_occupancy)
    out.status = "time_limit"
    before = (float(out.max_occupancy), communication_cost(tasks, res, out.mapping))
    pf.sum_in_spare_time(tasks, res, out, time.perf_counter() + 600.0)
    rep = tm.verify_mapping(tasks, res, out.mapping, claimed=out.max_occupancy)
    assert rep.valid and rep.ok
    assert float(rep.max_occupancy) <= before[0] * (1 + 1e-12)
    assert float(rep.max_occupancy) >= brute_force(tasks, res) * (1 - 1e-9)
    assert communication_cost(tasks, res, out.mapping) <= before[1] * (1 + 1e-12)
