"""A timed ``taskmap.solve``'s cold first call on a large instance (issue 40 item 1,
h52tmap): the stars bound's tables and star test and the multilevel mapper's topology are
built before the method's first answer, each step uninterruptible (a cold first call at
``T`` = 0.1-0.2 s ran a star test to 0.16 s and the topology's last steps to 0.28 s under a
load of 8). No test races the clock: stand-in rates, scopes whose deadline a stand-in moves."""

from __future__ import annotations

import time

import pytest

from coalloc._shared import interrupt
from coalloc.taskmap import bounds, hierarchy
from coalloc.taskmap import generators as gen

from ._spies import counted as _counted


def _grid():
    tasks = gen.stencil_task_graph((24, 24), seed=1)
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=8, seed=1)
    return tasks, res


def test_no_star_step_starts_that_is_predicted_to_end_past_the_deadline(monkeypatch):
    """An hour left, but a cell predicted at 1 s: neither the tables nor a star test start;
    the value is the start (valid), marked cut and not cached."""
    tasks, res = _grid()
    feasible = _counted(monkeypatch, bounds, "_feasible")
    built = _counted(monkeypatch, bounds, "_Stars")
    monkeypatch.setattr(bounds, "STAR_SECONDS", 1.0)
    cut = [False]
    value = bounds._stars(tasks, res, 0.5, None, time.perf_counter() + 3600.0, cut)
    assert cut[0] and value == 0.5 and not feasible and not built


def test_the_measured_rate_stops_the_next_star_test(monkeypatch):
    """The first star test is predicted to fit; it takes (stand-in clock) 10 s for the
    grid's cells, so the second, predicted the same, would end past the deadline: one star
    test only, and a value that failed it (valid)."""
    tasks, res = _grid()
    now = [0.0]
    calls = []
    fn = bounds._feasible

    def test(st, L, **kw):
        calls.append(L)
        now[0] += 10.0  # this test took 10 s
        return fn(st, L, **kw)

    class Clock:
        @staticmethod
        def perf_counter():
            return now[0]

    monkeypatch.setattr(bounds, "_feasible", test)
    monkeypatch.setattr(bounds, "time", Clock)
    cut = [False]
    start = bounds.lower_bound(tasks, res, strength="basic") / 64
    value = bounds._stars(tasks, res, start, None, 15.0, cut)
    assert cut[0] and len(calls) == 1
    assert start <= value <= bounds.lower_bound(tasks, res)


@pytest.mark.parametrize("step", ["pair_routes", "argsort"])
def test_the_topology_polls_after_its_routes_and_its_link_index(monkeypatch, step):
    """A deadline that passes during the pairs' routes (or the link index's sort) stops the
    build at the next poll: it raises, nothing is kept beside the graph."""
    _, res = _grid()
    scope = interrupt.until(time.perf_counter() + 3600.0)
    owner = hierarchy._multilevel if step == "pair_routes" else hierarchy.np
    fn = getattr(owner, step)
    seen = []

    def passing(*args, **kwargs):
        out = fn(*args, **kwargs)
        if step == "pair_routes" or len(args[0]) > 1000:  # the link index's sort
            seen.append(step)
            scope.when = time.perf_counter() - 1.0  # the deadline has passed
        return out

    monkeypatch.setattr(owner, step, passing)
    with scope, pytest.raises(interrupt.DeadlinePassed):
        hierarchy.topology(res)
    monkeypatch.undo()
    assert seen
    assert "multilevel_topology" not in hierarchy.cache_of(res)
