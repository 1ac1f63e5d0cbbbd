"""A timed call whose mapping meets the lower bound early spends time left on the volume,
as an untimed call does (issue 40 follow-up, h52tmap): the bisection of
:func:`~coalloc.taskmap.multilevel._lighter_at_bound` was skipped under any time limit, and
the quick start's blocks carried 1.5-2.3x the volume x distance on the stencils that meet
the bound. Referees: the untimed call's answer, the family's ``verify``; no clock raced."""

from __future__ import annotations

import numpy as np

import coalloc.taskmap as tm
from coalloc._shared import interrupt
from coalloc.taskmap import communication_cost
from coalloc.taskmap import generators as gen
from coalloc.taskmap import multilevel as ml


def _stencil():
    """vs_peers's "stencil 8x8 on 1x4x4": the quick start meets the bound (sum 6.08), the
    bisection too with less volume x distance (4.16)."""
    tasks = gen.stencil_task_graph((8, 8), seed=0)
    res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=4, cores_per_node=4, speed=1.0,
                                   core_bandwidth=100.0, node_bandwidth=10.0,
                                   rack_bandwidth=20.0, seed=100)  # fmt: skip
    return tasks, res


def test_a_timed_call_at_the_bound_gets_the_untimed_lighter_mapping():
    tasks, res = _stencil()
    untimed = tm.solve(tasks, res)
    timed = tm.solve(tasks, res, time_limit=600.0)
    assert timed.status == untimed.status == "optimal"
    assert tm.Instance(tasks, res).verify(timed).ok
    assert timed.max_occupancy == untimed.max_occupancy
    assert np.array_equal(timed.mapping, untimed.mapping)


def test_the_knob_off_keeps_the_quick_start(monkeypatch):
    tasks, res = _stencil()
    on = tm.solve(tasks, res, time_limit=600.0)
    monkeypatch.setattr(ml, "LIGHTER_TIMED", False)
    off = tm.solve(tasks, res, time_limit=600.0)
    assert off.max_occupancy == on.max_occupancy
    assert communication_cost(tasks, res, on.mapping) < communication_cost(tasks, res, off.mapping)


def test_a_lighter_step_the_deadline_stops_leaves_the_answer_at_the_bound(monkeypatch):
    """A stand-in step that only polls until its scope's deadline (3/4 of the time left)
    stops it: the answer is the mapping at the bound, still "optimal"."""
    tasks, res = _stencil()
    monkeypatch.setattr(ml, "LIGHTER_TIMED", False)
    off = tm.solve(tasks, res, time_limit=0.5)
    calls = []

    def polls(inc, topo, fine):
        calls.append(1)
        while True:
            interrupt.check()

    monkeypatch.setattr(ml, "LIGHTER_TIMED", True)
    monkeypatch.setattr(ml, "_lighter_at_bound", polls)
    out = tm.solve(tasks, res, time_limit=0.5)
    assert calls and out.status == "optimal"
    assert np.array_equal(out.mapping, off.mapping)
