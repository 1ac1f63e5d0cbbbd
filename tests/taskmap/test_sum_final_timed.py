"""The final V-cycles of the sum step under a time limit (``sumcycle.FINAL_TIMED``, h60sum):
a limit that is not reached gives the untimed answer, cycles included; a deadline inside
them keeps the cycles ended before it and says ``time_limit``; a stopped answer gets none.
Referees: ``verify_mapping`` and ``communication_cost`` from scratch, and the untimed call."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc.taskmap import generators as gen
from coalloc.taskmap import sumcycle, sumrefine


def _instance():
    # a stencil on two racks whose default answer the final cycles change (h59sum's)
    tasks = gen.stencil_task_graph((10, 8), compute=(0.5, 2.0), volume=(0.5, 4.0), seed=3)
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2,
                                   speed=(0.5, 3.0), seed=3)  # fmt: skip
    return tasks, res


def _scores(tasks, res, result):
    rep = tm.verify_mapping(tasks, res, result.mapping, claimed=result.max_occupancy)
    assert rep.valid and rep.matches, rep.problems
    return float(rep.max_occupancy), tm.communication_cost(tasks, res, result.mapping)


@pytest.fixture
def final_on(monkeypatch):
    monkeypatch.setattr(sumcycle, "VCYCLES", 0)
    monkeypatch.setattr(sumcycle, "FINAL_CYCLES", 2)
    monkeypatch.setattr(sumcycle, "FINAL_TIMED", True)
    return monkeypatch


def test_a_limit_not_reached_gives_the_untimed_answer_cycles_included(final_on):
    """The contract with the final cycles on: ``time_limit=600`` (not reached) returns the
    untimed mapping, and that mapping is not the one without the cycles (so the test
    cannot pass with the cycles skipped under a limit)."""
    tasks, res = _instance()
    untimed = tm.solve(tasks, res, seed=0)
    timed = tm.solve(tasks, res, seed=0, time_limit=600.0)
    assert timed.status != "time_limit"
    np.testing.assert_array_equal(timed.mapping, untimed.mapping)
    final_on.setattr(sumcycle, "FINAL_CYCLES", 0)
    without = tm.solve(tasks, res, seed=0, time_limit=600.0)
    assert not np.array_equal(without.mapping, untimed.mapping)
    occ, cost = _scores(tasks, res, untimed)
    occ0, cost0 = _scores(tasks, res, without)
    assert occ <= occ0 * (1 + 1e-12)
    assert occ < occ0 * (1 - 1e-12) or cost < cost0 * (1 - 1e-9)


def _answer(tasks, res):
    from coalloc.taskmap.multilevel import map_multilevel

    return map_multilevel(tasks, res, seed=0)


@pytest.mark.parametrize("cycles_first", [0, 1])
def test_a_deadline_in_the_cycles_keeps_those_ended_and_says_time_limit(final_on, cycles_first):
    """A stop inside the final cycles (after ``cycles_first`` whole cycles): status
    ``time_limit``, the mapping verified, never a higher maximum; with a cycle ended
    before the stop its better answer is kept, with none the entry mapping."""
    tasks, res = _instance()
    entry = _answer(tasks, res)
    real = sumcycle.sum_cycles

    def stopped(state, refine, cycles=-1, step_work=None):
        if cycles_first:
            real(state, refine, cycles_first, step_work)
        raise interrupt.DeadlinePassed("stand-in deadline")

    final_on.setattr(sumcycle, "sum_cycles", stopped)
    import time

    out = sumrefine.final_cycles(tasks, res, entry, time.perf_counter() + 600.0)
    assert out.status == "time_limit" and entry.status != "time_limit"
    occ, cost = _scores(tasks, res, out)
    occ0, cost0 = _scores(tasks, res, entry)
    assert occ <= occ0 * (1 + 1e-12)
    if cycles_first:  # the first cycle's gain is kept (the entry had none of it)
        assert occ < occ0 * (1 - 1e-12) or cost < cost0 * (1 - 1e-9)
    else:
        np.testing.assert_array_equal(out.mapping, entry.mapping)


def test_a_stopped_answer_gets_no_final_cycles(final_on):
    """An answer whose limit was reached (status ``time_limit``) is returned as it is,
    time left or not (the spare-time step's, ``sum_in_spare_time``); the same answer
    marked finished is changed (the test can fail)."""
    import time

    tasks, res = _instance()
    entry = _answer(tasks, res)
    stopped = dataclasses.replace(entry, status="time_limit")
    out = sumrefine.final_cycles(tasks, res, stopped, time.perf_counter() + 600.0)
    np.testing.assert_array_equal(out.mapping, entry.mapping)
    finished = sumrefine.final_cycles(tasks, res, entry, time.perf_counter() + 600.0)
    assert not np.array_equal(finished.mapping, entry.mapping)
    assert finished.status == entry.status
    final_on.setattr(sumcycle, "FINAL_TIMED", False)  # off: no cycles under a limit
    off = sumrefine.final_cycles(tasks, res, entry, time.perf_counter() + 600.0)
    np.testing.assert_array_equal(off.mapping, entry.mapping)
