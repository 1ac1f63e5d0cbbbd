"""What a timed ``taskmap.solve`` does after its method's deadline (issue 36's contract,
``T + max(0.05, 0.05 T)`` under load; h51tmap): on the large stencils and geometric graphs
the stars bound's first part ran after the method (0.1-0.3 s past a 1 s limit under a
load of 6), a spectral split's eigensolve ran past the deadline (up to 0.18 s) and a
stopped run's finish started past its allowance. No test races the clock: stand-ins,
counts and deadlines already passed."""

from __future__ import annotations

import time

import numpy as np
import pytest

from coalloc import taskmap
from coalloc.taskmap import bisection, bounds, solvers
from coalloc.taskmap import generators as gen
from coalloc.taskmap import multilevel as ml
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.result import stopped_result

from ._spies import counted as _counted


def _pipeline():
    return gen.pipeline_task_graph(seed=1), gen.internet_resource_graph(seed=301)


def test_the_bound_starts_no_step_past_its_deadline(monkeypatch):
    tasks, res = _pipeline()
    feasible = _counted(monkeypatch, bounds, "_feasible")
    jobs = _counted(monkeypatch, bounds, "_jobs_bound")
    value, cut = bounds.timed_bound(tasks, res, 0, time.perf_counter() - 1.0)
    assert cut and not feasible and not jobs  # not a star test, not the job bound
    assert value == bounds.lower_bound(tasks, res, strength="basic")  # valid, weaker
    # and not cached: a later call with time does the work
    again, cut2 = bounds.timed_bound(tasks, res, 0, time.perf_counter() + 3600)
    assert not cut2 and feasible and again >= value


def test_a_star_stage_cut_by_its_deadline_keeps_a_valid_value(monkeypatch):
    tasks, res = _pipeline()
    full = bounds.lower_bound(taskmap.TaskGraph(tasks.node_weight, tasks.comm), res)
    star, steps, now = [], [], [0.0]
    fn = bounds._feasible

    def test(st, L, **kw):  # the deadline (5.0) passes after the second star test
        (star if kw.get("lp") is False else steps).append(L)
        now[0] = 10.0 if len(star) >= 2 else 0.0
        return fn(st, L, **kw)

    class Clock:  # a stand-in clock for the bound's module
        @staticmethod
        def perf_counter():
            return now[0]

    start = bounds.lower_bound(tasks, res, strength="basic") / 64  # valid, far below
    uncut = bounds._stars(tasks, res, start, 0)
    monkeypatch.setattr(bounds, "_feasible", test)
    monkeypatch.setattr(bounds, "time", Clock)
    cut = [False]
    value = bounds._stars(tasks, res, start, None, 5.0, cut)
    assert cut[0] and len(star) == 2 and not steps  # no third star test, no full test
    assert start <= value < uncut <= full * (1 + 1e-12)


def test_the_bounds_first_part_runs_before_the_method_and_its_time_is_the_methods(
    monkeypatch,
):
    tasks = gen.stencil_task_graph((64, 64), seed=1)  # 4,096 tasks: no full test at 1 s
    res = gen.hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=8, seed=1)
    order, limits = [], []

    def bound(t, r, tests, until):
        order.append(("bound", tests))
        return 1.0, False

    def method(t, r, *, seed=0, time_limit=None, **params):
        order.append(("method", None))
        limits.append(time_limit)
        return stopped_result(t, r, method="portfolio", method_params={},
                              time_limit=time_limit, elapsed=0.0)  # fmt: skip

    monkeypatch.setattr(solvers, "timed_bound", bound)
    monkeypatch.setitem(solvers.METHODS, "portfolio", method)
    assert bounds.bound_tests(tasks, res, 1.0) == 0
    out = solvers.solve(tasks, res, time_limit=1.0)
    assert order == [("bound", 0), ("method", None)]  # nothing of the bound after it
    reserve = min(solvers.POST_SHARE, solvers.POST_SECONDS * (tasks.n + tasks.n_edges))
    assert reserve > 0.05 and limits[0] <= 1.0 - reserve  # the stop's and build's reserve
    assert out.params["time_limit"] == 1.0 and out.bound == 1.0


def test_a_small_timed_solve_still_runs_its_full_tests_after_the_method(monkeypatch):
    tasks, res = _pipeline()
    order = []
    fn = solvers.timed_bound

    def bound(t, r, tests, until):
        order.append(tests)
        return fn(t, r, tests, until)

    monkeypatch.setattr(solvers, "timed_bound", bound)
    tests = bounds.bound_tests(tasks, res, 5.0)
    out = solvers.solve(tasks, res, "open", time_limit=5.0)
    assert order == [0, tests] and tests > 0
    assert out.bound <= bounds.lower_bound(tasks, res) * (1 + 1e-12)


@pytest.mark.parametrize("left, spectral", [(None, True), (10.0, True), (1e-3, False)])
def test_the_spectral_split_is_skipped_where_it_would_end_past_the_deadline(
    monkeypatch, left, spectral
):
    tasks = gen.stencil_task_graph((16, 16), seed=1)
    lv = TaskLevel.of(tasks)
    calls = _counted(monkeypatch, bisection, "fiedler_order")
    monkeypatch.setattr(bisection, "time_left", lambda: left)  # a stand-in deadline
    part = bisection.grow(lv, np.arange(lv.n), float(lv.vw.sum()) / 2)
    assert bool(calls) == spectral and part.any() and not part.all()


def test_a_stopped_runs_finish_is_skipped_past_its_allowance(monkeypatch):
    tasks = gen.stencil_task_graph((16, 16), seed=1)
    res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=4, seed=1)
    topo = topology(res)
    levels = [TaskLevel.of(tasks)]
    seed, params = ml._checked_params(tasks, res, 0, ml._Tuning(
        coarse_factor=4.0, subsets=True, keep=2, max_moves=None, speed_exponents=(1.0,),
        paper_start=0, sum_refine=False))  # fmt: skip
    inc = ml._Incumbent(tasks, res, topo, levels, seed, params, time.perf_counter())
    m = ml._quick_start(topo, levels[0])
    value = ml.RefineState(topo, levels[0], m).maximum()
    finish = _counted(monkeypatch, ml, "_finish")
    inc.finish_by = time.perf_counter() - 1.0  # the allowance already spent
    out = inc._builder(m, 0, [value], {})()
    assert not finish and np.array_equal(out.mapping, topo.order_nodes[m])
    assert out.max_occupancy == pytest.approx(value)
    inc.finish_by = None  # no allowance: finished
    inc._builder(m, 0, [value], {})()
    assert finish
