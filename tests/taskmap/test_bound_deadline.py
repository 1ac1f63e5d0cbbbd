"""A timed call's stars bound keeps its deadline when its full tests run slower than
predicted (h55tgen: one ran 3x ``seconds_per_test`` and took a timed ``solve`` 0.3-6 s past
its limit). A stand-in clock: the LP (each full test's costly step) advances it by a set
number of seconds, honouring the time limit it is given, so no real-clock race."""

from __future__ import annotations

import types

import pytest

from coalloc.taskmap import bounds
from coalloc.taskmap import generators as g


@pytest.fixture(autouse=True)
def _no_lattice(monkeypatch):
    # the stars bound's full tests are what is tested: the lattice bound (h58bound) lifts
    # this stencil's first part to the full tests' value, so it is off here
    from coalloc.taskmap import latticebound

    monkeypatch.setattr(latticebound, "LATTICE", False)


def _instance():
    # comm-bound: its full tests call the LP and raise the bound above the star tests'
    tasks = g.stencil_task_graph((4, 4), volume=(1.0, 8.0), compute=(1.0, 3.0), seed=2)
    res = g.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2,
                                 speed=(1.0, 2.0), node_bandwidth=2.0, rack_bandwidth=1.0,
                                 core_bandwidth=4.0, seed=2)  # fmt: skip
    return tasks, res


class _Clock:
    """A stand-in ``time`` for bounds.py: only the LP moves it."""

    def __init__(self, lp_seconds: float):
        self.now = 100.0
        self.lp_seconds = lp_seconds
        self.lp_calls = 0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    def make(lp_seconds: float) -> _Clock:
        c = _Clock(lp_seconds)
        real = bounds.solve_lp

        def slow_lp(*args, options=None, **kwargs):
            c.lp_calls += 1
            limit = (options or {}).get("time_limit")
            if limit is not None and limit < c.lp_seconds:
                c.now += limit
                return types.SimpleNamespace(status="time_limit")
            c.now += c.lp_seconds
            return real(*args, **kwargs)

        monkeypatch.setattr(bounds, "time", types.SimpleNamespace(perf_counter=c.perf_counter))
        monkeypatch.setattr(bounds, "solve_lp", slow_lp)
        return c

    return make


def _timed(tasks, res, tests, c: _Clock, budget: float):
    """A timed solve's two calls: the first part (no full test) then the full tests."""
    first, cut0 = bounds.timed_bound(tasks, res, 0, c.now + 10.0)
    assert not cut0 and c.lp_calls == 0
    until = c.now + budget
    value, cut = bounds.timed_bound(tasks, res, tests, until)
    return first, value, cut, until


def test_instance_needs_full_tests():
    tasks, res = _instance()
    assert bounds.lower_bound(tasks, res) > bounds.lower_bound(tasks, res, max_tests=0)


@pytest.mark.parametrize("budget", [0.5, 1.5, 2.5, 4.5])
def test_slow_full_tests_end_by_the_deadline(clock, budget):
    # each LP takes 1 s (stand-in): the old code started one whenever time was left and ran
    # it to its end (past ``until`` for every budget here that is not a whole number)
    tasks, res = _instance()
    c = clock(1.0)
    first, value, cut, until = _timed(tasks, res, 20, c, budget)
    assert c.now <= until
    assert cut  # not every test the count allowed fit
    assert first <= value <= bounds.lower_bound(tasks, res) * (1 + 1e-9)  # valid, not weaker


def test_a_test_cut_inside_keeps_the_value_proven(clock):
    # less time left than one LP: it is given the rest as its limit and stopped there
    tasks, res = _instance()
    c = clock(1.0)
    first, value, cut, until = _timed(tasks, res, 20, c, 0.5)
    assert c.lp_calls == 1 and cut
    assert value == first and c.now <= until


def test_the_first_full_test_is_predicted_with_a_margin(clock):
    # less time than FULL_MARGIN x seconds_per_test: no full test starts
    tasks, res = _instance()
    c = clock(0.0)
    budget = 0.5 * bounds.FULL_MARGIN * bounds.seconds_per_test(tasks, res)
    first, value, cut, until = _timed(tasks, res, 20, c, budget)
    assert c.lp_calls == 0 and cut and value == first


def test_the_star_phase_is_not_run_again(clock, monkeypatch):
    tasks, res = _instance()
    c = clock(0.0)
    built = []
    real = bounds._Stars

    def counted(*args):
        built.append(1)
        return real(*args)

    monkeypatch.setattr(bounds, "_Stars", counted)
    _, value, cut, _ = _timed(tasks, res, None, c, 1e6)
    assert len(built) == 1 and not cut
    assert value == pytest.approx(bounds.lower_bound(tasks, res), rel=1e-12)


def test_ample_time_gives_the_untimed_bound(clock):
    tasks, res = _instance()
    c = clock(0.01)
    _, value, cut, until = _timed(tasks, res, None, c, 1e6)
    assert not cut and c.now <= until
    assert value == bounds.lower_bound(tasks, res)
