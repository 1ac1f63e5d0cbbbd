"""The bound inside a timed call's budget (issue 36): ``taskmap.solve(..., time_limit=T)``
computes :func:`lower_bound` first, its full tests capped by a count from the instance and
``T`` (:func:`bound_tests`), and gives the method the time left. Before, the bound ran after
the method, past the limit (the contract audit: +0.14 s at T = 0.05 s)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from coalloc import taskmap
from coalloc.taskmap import generators as gen
from coalloc.taskmap.bounds import bound_tests, lower_bound
from tests.taskmap.test_bounds import _brute_force, jobs_on_graphs


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(jobs_on_graphs())
def test_a_capped_bound_is_valid_and_grows_with_its_cap(case):
    tasks, res = case
    opt = _brute_force(tasks, res)  # the referee: every mapping
    full = lower_bound(tasks, res)
    seen = []
    for cap in (0, 1, 2, 4, 1000):
        tasks2 = taskmap.TaskGraph(tasks.node_weight, tasks.comm)  # no cache shared
        value = lower_bound(tasks2, res, max_tests=cap)
        assert value <= full * (1 + 1e-12) and value <= opt * (1 + 1e-9)
        seen.append(value)
    assert seen == sorted(seen)  # more tests never give a weaker bound
    assert seen[-1] == full  # a cap above the bisection's needs: the uncapped value


def test_the_pipeline_bound_needs_its_tests_and_the_cap_is_a_count():
    # a pipeline on an Internet-like graph: the LP tests lift the bound (12 of them)
    tasks = gen.pipeline_task_graph(seed=1)
    res = gen.internet_resource_graph(seed=301)
    full = lower_bound(tasks, res)
    capped = lower_bound(taskmap.TaskGraph(tasks.node_weight, tasks.comm), res, max_tests=2)
    assert capped < full
    again = lower_bound(taskmap.TaskGraph(tasks.node_weight, tasks.comm), res, max_tests=2)
    assert again == capped  # a count, not a clock


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_bad_max_tests_is_refused_naming_it(bad):
    tasks = taskmap.TaskGraph([1.0, 2.0], [[0, 1], [1, 0]])
    res = taskmap.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    with pytest.raises(ValueError, match="max_tests"):
        lower_bound(tasks, res, max_tests=bad)


@pytest.mark.parametrize("method", ["portfolio", "multilevel", "open+improve"])
def test_a_timed_solve_carries_the_capped_bound_and_the_callers_limit(method):
    tasks = gen.pipeline_task_graph(seed=2)
    res = gen.internet_resource_graph(seed=302)
    limit = 0.2
    out = taskmap.solve(tasks, res, method, time_limit=limit, seed=0)
    tests = bound_tests(tasks, res, limit)
    assert out.params["time_limit"] == limit and out.params["bound_tests"] == tests
    want = lower_bound(taskmap.TaskGraph(tasks.node_weight, tasks.comm), res, max_tests=tests)
    if out.mapping is not None:
        assert taskmap.verify_mapping(tasks, res, out.mapping).ok
        if "cut short by the deadline" in out.message:  # a loaded machine: valid, weaker
            assert out.bound <= min(want, out.max_occupancy) * (1 + 1e-12)
        else:
            assert out.bound == pytest.approx(min(want, out.max_occupancy)) or (
                out.bound >= want and out.bound <= out.max_occupancy * (1 + 1e-9))
    untimed = taskmap.solve(tasks, res, method, seed=0)
    assert "bound_tests" not in untimed.params
    assert untimed.bound >= lower_bound(tasks, res) * (1 - 1e-12) or untimed.bound == pytest.approx(
        untimed.max_occupancy)


def test_bound_tests_is_a_function_of_the_instance_and_the_limit():
    tasks = gen.pipeline_task_graph(seed=1)
    res = gen.internet_resource_graph(seed=301)
    small, large = bound_tests(tasks, res, 0.05), bound_tests(tasks, res, 5.0)
    assert 0 <= small < large and bound_tests(tasks, res, 5.0) == large
    big = gen.geometric_task_graph(seed=1)
    assert bound_tests(big, res, 0.5) < bound_tests(tasks, res, 0.5)  # larger: fewer tests
    assert isinstance(bound_tests(tasks, res, 1.0), int)


def test_no_test_of_the_bound_starts_after_the_callers_deadline(monkeypatch):
    """A timed call's bound runs after the method with the tests' predicted time kept back;
    a bound slower than predicted (a cold first call under load: 0.104-0.155 s at T = 0.05
    s, h50tmap) must not run past the deadline. Stand-in: every full test moves the bound's
    clock on by an hour, so after the first no other may start, whatever the machine's load;
    the count alone (the old code) let the bisection run its dozen. The value is valid (at
    most the count's, at least the job bound), not cached, and named in the message."""
    import coalloc.taskmap.bounds as bd

    tasks = gen.pipeline_task_graph(seed=1)
    res = gen.internet_resource_graph(seed=301)
    full_count = lower_bound(taskmap.TaskGraph(tasks.node_weight, tasks.comm), res,
                             max_tests=bound_tests(tasks, res, 0.5))  # fmt: skip
    started = []
    feasible, clock = bd._feasible, __import__("time").perf_counter

    class _Clock:  # the bound's clock: real time plus an hour per full test so far
        @staticmethod
        def perf_counter():
            return clock() + 3600.0 * len(started)

    def slow(st, L, rounds=bd._ROUNDS, lp=True, **kw):  # kw: a full test's ``until``
        if lp and rounds:
            started.append(L)
        return feasible(st, L, rounds=rounds, lp=lp, **kw)

    monkeypatch.setattr(bd, "time", _Clock, raising=False)
    monkeypatch.setattr(bd, "_feasible", slow)
    out = taskmap.solve(tasks, res, "multilevel", time_limit=0.5, seed=0)
    assert len(started) <= 1  # the count allows bound_tests(0.5) of them; 12 needed
    assert taskmap.verify_mapping(tasks, res, out.mapping).ok
    assert out.bound <= full_count * (1 + 1e-12) and out.bound <= out.max_occupancy
    assert out.gap == pytest.approx((out.max_occupancy - out.bound) / out.max_occupancy)
    assert "cut short by the deadline" in out.message
    monkeypatch.undo()
    assert lower_bound(tasks, res, max_tests=bound_tests(tasks, res, 0.5)) == full_count
