"""A timed default call keeps its budget when the bound's first part (before the method) is
cut short: that part keeps no star phase, and a second part after the method rebuilt the
star tables unpolled (stencil27 20x20x8 onto a dragonfly of 144 at ``T`` = 5 s: 1.3-2.0 s
from 4.0 s, the call 5.3-6.2 s; h55late). A stand-in clock that only the star tables' build
moves, shared by ``solvers`` and ``bounds``: no real-clock race.

And the sum step in the spare time keeps back, for its last swap window past its deadline
and the answer's update from scratch, a time that grows with the task graph (0.23-0.32 s on
that instance under a load of 5-6, where 0.04 s was kept; h55late): a stand-in step records
the deadline it is given, a frozen stand-in clock in ``portfolio``."""

from __future__ import annotations

import types

import pytest

import coalloc.taskmap as tm
from coalloc.taskmap import bounds, solvers, sumrefine
from coalloc.taskmap import portfolio as pf

from .test_bound_deadline import _instance  # the same comm-bound stencil
from .test_sum_spare import _instance as _sum_instance
from .test_sum_spare import _stopped


class _Clock:
    def __init__(self, build_seconds: float):
        self.now = 100.0
        self.build_seconds = build_seconds
        self.builds = 0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    def make(build_seconds: float) -> _Clock:
        c = _Clock(build_seconds)
        real = bounds._Stars

        def slow_stars(*args, **kwargs):
            c.builds += 1
            c.now += c.build_seconds
            return real(*args, **kwargs)

        fake = types.SimpleNamespace(perf_counter=c.perf_counter)
        monkeypatch.setattr(bounds, "time", fake)
        monkeypatch.setattr(solvers, "time", fake)
        monkeypatch.setattr(bounds, "_Stars", slow_stars)
        monkeypatch.setattr(solvers, "bound_tests", lambda *a: 2)  # full tests kept back
        calls = []
        timed = solvers.timed_bound

        def counted(tasks, res, max_tests, until):
            calls.append(max_tests)
            return timed(tasks, res, max_tests, until)

        monkeypatch.setattr(solvers, "timed_bound", counted)
        c.calls = calls
        return c

    return make


@pytest.mark.parametrize("limit", [1.0, 5.0, 20.0])
def test_cut_first_part_not_rebuilt_after_the_method(clock, limit):
    # the build costs 0.6 of the limit: past the first part's share (0.25), so it is cut
    c = clock(0.6 * limit)
    tasks, res = _instance()
    r = tm.solve(tasks, res, time_limit=limit)
    spent = c.now - 100.0
    assert "cut short" in r.message
    assert c.calls == [0]  # the first part only
    assert c.builds == 1
    assert spent <= limit + max(0.05, 0.05 * limit)
    assert tm.Instance(tasks, res).verify(r).ok
    assert r.bound is not None and 0 < r.bound <= r.max_occupancy * (1 + 1e-9)


def test_uncut_first_part_keeps_its_second(clock):
    # a free build: the first part ends, keeps its star phase, the full tests follow
    c = clock(0.0)
    tasks, res = _instance()
    r = tm.solve(tasks, res, time_limit=5.0)
    assert c.calls == [0, 2]
    assert c.builds == 1
    assert tm.Instance(tasks, res).verify(r).ok
    assert 0 < r.bound <= r.max_occupancy * (1 + 1e-9)


@pytest.fixture
def frozen(monkeypatch):
    now = 50.0
    monkeypatch.setattr(pf, "time", types.SimpleNamespace(perf_counter=lambda: now))
    given = []

    def step(tasks, res, mapping, cap, until):
        given.append(until)
        return None  # no better answer: the result unchanged

    monkeypatch.setattr(sumrefine, "sum_step_until", step)
    return now, given


@pytest.mark.parametrize("item", [6e-6, 1e-4, 1e-3])
def test_sum_step_keeps_back_a_time_that_grows_with_the_graph(frozen, monkeypatch, item):
    now, given = frozen
    monkeypatch.setattr(pf, "SUM_RESULT_ITEM", item, raising=False)
    tasks, res = _sum_instance()
    keep = max(pf.SUM_RESULT_SECONDS, item * (tasks.n + tasks.n_edges))
    out = _stopped(tasks, res)
    pf.sum_in_spare_time(tasks, res, out, now + 10.0)
    assert given == [pytest.approx(now + 10.0 - keep)]
    assert keep >= pf.SUM_RESULT_SECONDS and (item < 1e-4 or keep > pf.SUM_RESULT_SECONDS)
    # too little left for the kept time and the minimum: not started
    given.clear()
    out = _stopped(tasks, res)
    pf.sum_in_spare_time(tasks, res, out, now + keep + 0.5 * pf.SUM_SPARE_MIN)
    assert given == [] and "sum_spare" not in out.timings
    pf.sum_in_spare_time(tasks, res, out, now + keep + 2 * pf.SUM_SPARE_MIN)
    assert len(given) == 1
