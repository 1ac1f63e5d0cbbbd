"""A timed call's bound before its method keeps to its share, so the method gets its budget
(h56late). Two steps were unpolled there: the job bound (13-100 ms on the contract audit's
Table 1 pipeline, 58 tasks onto 140 processors, against 12.5 ms at ``T`` = 0.05 s: the
method's budget became a draw between 0 and 35 ms, the audit's coin flip between the
default and ``multilevel``) and the star tables' build (0.1-4 s on stencil27 20x20x8 onto
a dragonfly of 144 against 1.25 s at ``T`` = 5 s). And the sum step in the spare time keeps
back a time measured in the call. Stand-in clocks that only the named steps move: no
real-clock race."""

from __future__ import annotations

import types

import pytest

import coalloc.taskmap as tm
from coalloc._shared.caches import cache_of
from coalloc.taskmap import bounds, jobbound, occupancy, solvers, startables, sumrefine
from coalloc.taskmap import portfolio as pf
from coalloc.taskmap.generators import table1_instance

from .conftest import FrozenClock
from .test_sum_spare import _instance as _sum_instance
from .test_sum_spare import _stopped


def _slow_jobs(monkeypatch, c: FrozenClock, seconds: float) -> list:
    calls = []
    real = bounds._jobs_bound

    def slow(*args):
        calls.append(1)
        c.now += seconds
        return real(*args)

    monkeypatch.setattr(bounds, "_jobs_bound", slow)
    return calls


def _pipeline():
    return table1_instance(1, 7103)  # the audit's table1-c1-3: 9 jobs onto 140 processors


def test_a_tiny_first_part_does_not_start_the_job_bound(clock, monkeypatch):
    # the job bound costs 40 ms of a 50 ms budget: the old first part ran it (unpolled) and
    # handed the method 0.05 - 0.04 - keep; now it is predicted past the share, not started
    tasks, res = _pipeline()
    calls = _slow_jobs(monkeypatch, clock, 0.04)
    t0 = clock.now
    left, tests, (value, cut) = solvers._timed_start(tasks, res, 0.05, t0, True)
    assert calls == [] and cut
    keep = min(solvers.POST_SHARE * 0.05, solvers.POST_SECONDS * (tasks.n + tasks.n_edges))
    assert left == pytest.approx(0.05 - keep - min(tests, bounds.USUAL_TESTS)
                                 * bounds.seconds_per_test(tasks, res))  # fmt: skip
    assert clock.now - t0 <= bounds.BOUND_SHARE * 0.05
    assert value == pytest.approx(bounds._basic(tasks, res))  # valid, weaker
    assert value <= bounds.lower_bound(tasks, res) * (1 + 1e-12)


def test_the_default_and_multilevel_members_get_the_same_limit(clock, monkeypatch):
    # equal budgets: the default's multilevel member is handed the limit the single method is
    from coalloc._shared import params

    given = []
    real = params.deadline

    def spy(limit, started=None, argname="time_limit"):
        given.append(limit)
        return real(limit, started, argname)

    monkeypatch.setattr(params, "deadline", spy)
    tasks, res = _pipeline()
    _slow_jobs(monkeypatch, clock, 0.04)
    for method in ("portfolio", "multilevel"):
        tm.solve(tasks, res, method, seed=1, time_limit=0.05)
    assert len(given) == 2 and given[0] == pytest.approx(given[1])
    assert given[0] > 0.05 - bounds.BOUND_SHARE * 0.05


def test_the_job_bound_is_computed_once_per_pair_of_graphs(clock, monkeypatch):
    tasks, res = _pipeline()
    calls = _slow_jobs(monkeypatch, clock, 0.0)
    untimed = bounds.lower_bound(tasks, res)
    assert calls == [1]
    # a timed first part after it: the job bound kept, its value the same as a fresh one's
    value, cut = bounds.timed_bound(tasks, res, 0, clock.now + 600.0)
    assert calls == [1] and not cut
    fresh, fresh_res = _pipeline()
    again, _ = bounds.timed_bound(fresh, fresh_res, 0, clock.now + 600.0)
    assert value == again <= untimed
    assert value >= jobbound._jobs_bound(tasks, res, bounds._basic(tasks, res))


def _slow_sorts(monkeypatch, c: FrozenClock, per_entry: float) -> list:
    sizes = []
    real = startables._row_sort

    def slow(key, rows):
        sizes.append(key.shape[0])
        c.now += per_entry * key.shape[0]
        return real(key, rows)

    monkeypatch.setattr(startables, "_row_sort", slow)
    return sizes


def _stencil():
    tasks = tm.generators.stencil_task_graph((6, 6, 4), seed=4)
    res = tm.generators.hierarchical_cluster(n_racks=2, nodes_per_rack=4, cores_per_node=4,
                                             speed=(1.0, 2.0), seed=4)  # fmt: skip
    return tasks, res


@pytest.mark.parametrize("share", [0.05, 0.2, 1.0])
def test_the_star_tables_build_stops_at_its_pace(clock, monkeypatch, share):
    # each sort of E entries takes E x 1e-3 s: the build (three sorts) far past the share;
    # it stops after the slice's sort, predicted late, and the value is the job bound's
    tasks, res = _stencil()
    sizes = _slow_sorts(monkeypatch, clock, 1e-3)
    cache_of(tasks).clear()
    t0 = clock.now
    value, cut = bounds.timed_bound(tasks, res, 0, t0 + share)
    entries = tasks.undirected_csr()[1].shape[0]
    assert cut and len(sizes) == 1 and sizes[0] == entries // startables._BUILD_SLICE
    assert clock.now - t0 <= 1e-3 * entries / startables._BUILD_SLICE + 1e-9
    assert value == pytest.approx(
        max(bounds._basic(tasks, res), jobbound._jobs_bound(tasks, res, bounds._basic(tasks, res)))
    )
    assert value <= bounds.lower_bound(tasks, res) * (1 + 1e-12)


def test_the_star_tables_build_that_fits_is_whole(clock, monkeypatch):
    # the same sorts with a share that holds them: built, the star tests run, uncut
    tasks, res = _stencil()
    entries = tasks.undirected_csr()[1].shape[0]
    sizes = _slow_sorts(monkeypatch, clock, 1e-3)
    cache_of(tasks).clear()
    value, cut = bounds.timed_bound(tasks, res, 0, clock.now + 10.0 * 1e-3 * entries)
    assert len(sizes) == 4 and not cut
    assert value == bounds.timed_bound(*_stencil(), 0, clock.now + 600.0)[0]


@pytest.fixture
def paced(monkeypatch):
    c = FrozenClock()
    monkeypatch.setattr(pf, "time", types.SimpleNamespace(perf_counter=c.perf_counter))
    given = []

    def step(tasks, res, mapping, cap, until):
        given.append(until)
        return None

    monkeypatch.setattr(sumrefine, "sum_step_until", step)
    return c, given


@pytest.mark.parametrize("probe, pace", [(0.0, 1.0), (0.05, 1.0), (0.3, 1.0), (0.0, 4.0),
                                         (0.05, 0.5), (0.0, 1e6)])  # fmt: skip
def test_the_sum_step_keeps_back_its_measured_pace(paced, monkeypatch, probe, pace):
    # the occupancy graph measured first takes ``probe`` s: SUM_PROBE x that is kept back
    # too; the call's pace (wall / CPU so far, 1 to SUM_PACE_MAX) scales the update's time
    c, given = paced
    real = occupancy.occupancy_graph

    def slow(*args, **kwargs):
        c.now += probe
        return real(*args, **kwargs)

    monkeypatch.setattr(occupancy, "occupancy_graph", slow)
    tasks, res = _sum_instance()
    base = pf._result_seconds(tasks) * min(max(pace, 1.0), pf.SUM_PACE_MAX)
    out = _stopped(tasks, res)
    until = c.now + 2.0 + base
    pf.sum_in_spare_time(tasks, res, out, until, pace)
    assert given == [pytest.approx(until - base - pf.SUM_PROBE * probe)]
    # too little left after the probe for the kept time and the minimum: not started
    given.clear()
    out = _stopped(tasks, res)
    pf.sum_in_spare_time(tasks, res, out, c.now + probe + base + pf.SUM_PROBE * probe
                         + 0.5 * pf.SUM_SPARE_MIN, pace)  # fmt: skip
    assert given == [] and "sum_spare" not in out.timings
