"""The sum step on a stopped run's answer (``portfolio.SUM_RESERVE``, off by default; issue
40 follow-up, h52tmap): a run the deadline stops gets no sum step, so a share of the budget
can be kept for it. Referees: the family's ``verify`` and ``communication_cost`` on every
answer (the maximum never rises, the sum falls); stand-ins for the stopped run; no clock
raced."""

from __future__ import annotations

import time

import numpy as np

import coalloc.taskmap as tm
from coalloc.taskmap import communication_cost
from coalloc.taskmap import generators as gen
from coalloc.taskmap import portfolio as pf
from coalloc.taskmap.multilevel import map_multilevel
from coalloc.taskmap.sumrefine import sum_step_until


def _instance():
    tasks = gen.stencil_task_graph((12, 12), seed=3)
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=4, seed=5)
    return tasks, res


def _blocks(tasks, res) -> np.ndarray:
    """Tasks dealt round-robin onto the processors: a poor sum, a valid mapping."""
    procs = np.asarray(res.processors)
    return procs[np.arange(tasks.n) % procs.shape[0]]


def test_the_step_lowers_the_sum_and_never_lifts_the_maximum():
    tasks, res = _instance()
    m = _blocks(tasks, res)
    cap = float(tm.verify_mapping(tasks, res, m).max_occupancy)
    out = sum_step_until(tasks, res, m, cap, time.perf_counter() + 600.0)
    assert out is not None
    mapping, (occ, _) = out
    rep = tm.verify_mapping(tasks, res, mapping)
    assert rep.valid and float(rep.max_occupancy) <= cap * (1 + 1e-12)
    assert float(occ) == float(rep.max_occupancy)
    assert communication_cost(tasks, res, mapping) < communication_cost(tasks, res, m)


def test_a_deadline_already_passed_makes_no_pass():
    tasks, res = _instance()
    m = _blocks(tasks, res)
    cap = float(tm.verify_mapping(tasks, res, m).max_occupancy)
    assert sum_step_until(tasks, res, m, cap, time.perf_counter() - 1.0) is None


def _stopped_stand_in(monkeypatch) -> list:
    """The timed multilevel replaced by a stand-in stopped by its deadline with the
    round-robin mapping: the limits it was given are recorded."""
    limits = []

    def with_limit(func, stopped):
        def timed(tasks, res, *, seed=0, time_limit=None, **params):
            limits.append(time_limit)
            out = map_multilevel(tasks, res, seed=seed, **{**params, "sum_refine": False})
            out.mapping = _blocks(tasks, res)  # a stopped run's poor answer
            out.max_occupancy = float(tm.verify_mapping(tasks, res, out.mapping).max_occupancy)
            out.status = "time_limit"
            return out

        return timed

    monkeypatch.setattr(pf, "with_time_limit", with_limit)
    # the stand-in's stopped answer and limit as they are: no grid layout (h58bound)
    monkeypatch.setattr(pf.gridstarts, "GRID_STARTS", False)
    return limits


def test_off_by_default_the_stopped_answer_is_kept(monkeypatch):
    tasks, res = _instance()
    limits = _stopped_stand_in(monkeypatch)
    out = pf.map_portfolio(tasks, res, time_limit=600.0)
    assert pf.SUM_RESERVE == 0.0 and limits == [600.0]
    assert np.array_equal(out.mapping, _blocks(tasks, res))


def test_the_reserve_is_kept_from_the_mapper_and_spent_on_the_sum(monkeypatch):
    tasks, res = _instance()
    limits = _stopped_stand_in(monkeypatch)
    monkeypatch.setattr(pf, "SUM_RESERVE", 0.25)
    m = _blocks(tasks, res)
    out = pf.map_portfolio(tasks, res, time_limit=600.0)
    assert limits == [450.0] and out.status in ("time_limit", "optimal")  # (settled at a bound)
    assert tm.verify_mapping(tasks, res, out.mapping).valid
    assert out.max_occupancy <= tm.verify_mapping(tasks, res, m).max_occupancy * (1 + 1e-12)
    assert communication_cost(tasks, res, out.mapping) < communication_cost(tasks, res, m)
