"""A timed call's stop at the pace the call gets (h57fast follow-up, issue 40 item 1).

1. The keep for the method's stop (``POST_SECONDS`` per task and pair, at most
   ``POST_SHARE`` of the limit) is multiplied by the call's wall / CPU pace so far over
   ``KEEP_PACE_REF`` (``solvers.PACED_KEEP``, 1 to ``KEEP_PACE_MAX``): a starved call's stop
   runs that slowly.
3. Under a time limit a coarse start after the first begins only where the largest wall of
   one so far fits in the time left (``starts.STARTS_FIT``).
2. A finish with a deadline makes one move first, its own probe of the rate
   (``multilevel.FINISH_PROBE``): a slice of 8 predicted from the early answer's cheaper moves
   took 0.07 s past the finish's allowance on ba 3000.

Stand-in clocks and spies, no real-clock race."""

from __future__ import annotations

import types

import numpy as np
import pytest

from coalloc.taskmap import multilevel as ml
from coalloc.taskmap import solvers
from coalloc.taskmap.generators import table1_instance


class _Clock:
    def __init__(self):
        self.now, self.cpu = 100.0, 10.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = _Clock()
    monkeypatch.setattr(solvers, "time", types.SimpleNamespace(perf_counter=c.perf_counter))
    monkeypatch.setattr(solvers, "process_time", lambda: c.cpu)
    return c


@pytest.mark.parametrize("on", [True, False])
@pytest.mark.parametrize("wall,cpu,pace", [(0.0, 0.0, 1.0), (0.001, 0.001, 1.0),
                                           (0.03, 0.01, 1.5), (0.5, 0.01, 4.0),
                                           (0.009, 0.01, 1.0), (0.03, 0.001, 1.0)])
def test_the_stop_keep_is_times_the_pace(clock, monkeypatch, on, wall, cpu, pace):
    tasks, res = table1_instance(1, 0)
    monkeypatch.setattr(solvers, "PACED_KEEP", on)
    monkeypatch.setattr(solvers, "KEEP_PACE_REF", 2.0)  # the pace over 2, from 1 to 4
    monkeypatch.setattr(solvers, "KEEP_PACE_MAX", 4.0)
    monkeypatch.setattr(solvers, "bound_tests", lambda *a: 0)
    monkeypatch.setattr(solvers, "timed_bound", lambda *a: (1.0, False))
    t0, cpu0 = clock.now, clock.cpu
    clock.now += wall
    clock.cpu += cpu
    left, _, _ = solvers._timed_start(tasks, res, 5.0, t0, True, cpu0)
    post = min(solvers.POST_SHARE * 5.0, solvers.POST_SECONDS * (tasks.n + tasks.n_edges))
    assert post > 0
    expect = 5.0 - wall - post * (pace if on else 1.0)
    assert left == pytest.approx(expect, abs=1e-12)
    # without cpu0 (a caller that has none) the fixed keep
    left0, _, _ = solvers._timed_start(tasks, res, 5.0, t0, True)
    assert left0 == pytest.approx(5.0 - wall - post, abs=1e-12)


def test_the_pace_is_bounded(clock, monkeypatch):
    monkeypatch.setattr(solvers, "KEEP_PACE_REF", 1.0)
    t0, cpu0 = clock.now, clock.cpu
    clock.now, clock.cpu = t0 + 100.0, cpu0 + 1.0
    assert solvers._pace(t0, cpu0) == solvers.KEEP_PACE_MAX
    clock.now = t0 + 0.5
    assert solvers._pace(t0, cpu0) == 1.0


def _level_and_start():
    # every task on one processor: a finish with many moves to make
    tasks, res = table1_instance(1, 0)
    topo = ml.topology(res)
    fine = ml.TaskLevel.of(tasks)
    return topo, fine, np.zeros(tasks.n, dtype=np.int64)


@pytest.mark.parametrize("on", [True, False])
def test_a_timed_finish_probes_with_one_move_first(monkeypatch, on):
    topo, fine, m = _level_and_start()
    sizes = []
    real = ml.refine

    def spy(state, k, *a, **kw):
        sizes.append(k)
        return real(state, k, *a, **kw)

    monkeypatch.setattr(ml, "refine", spy)
    monkeypatch.setattr(ml, "FINISH_PROBE", on)
    far = ml.time.perf_counter() + 1e6
    out, moves, value = ml._finish(topo, fine, m, far, rate=[1e-9])
    assert sizes and sizes[0] == (1 if on else min(ml._FINISH_SLICE, max(200, 4 * fine.n)))
    assert all(k >= 1 for k in sizes)
    sizes.clear()
    ref, moves0, value0 = ml._finish(topo, fine, m, None)  # untimed: slices of 8, no probe
    assert sizes[0] == ml._FINISH_SLICE
    # same moves by number and the same maximum (the slices do not change the moves' order)
    assert moves == moves0 and value == pytest.approx(value0, rel=1e-12)


def test_a_timed_finish_stops_after_a_slow_probe(monkeypatch):
    # the probe's own rate predicts the next slice past ``finish_by``: no second slice
    topo, fine, m = _level_and_start()
    sizes = []
    clock = [0.0]
    real = ml.refine

    def slow(state, k, *a, **kw):
        sizes.append(k)
        clock[0] += 0.05 * k  # 50 ms a move
        return real(state, k, *a, **kw)

    monkeypatch.setattr(ml, "refine", slow)
    monkeypatch.setattr(ml, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(ml, "FINISH_PROBE", True)
    ml._finish(topo, fine, m, 0.08, rate=[1e-6])  # an early rate 50,000 x too low
    assert sizes == [1]
    monkeypatch.setattr(ml, "FINISH_PROBE", False)
    sizes.clear()
    clock[0] = 0.0
    ml._finish(topo, fine, m, 0.08, rate=[1e-6])
    assert sizes[0] == ml._FINISH_SLICE  # the old first slice: 0.4 s past a 0.08 s allowance


@pytest.mark.parametrize("on", [True, False])
def test_a_coarse_start_begins_only_where_the_slowest_fits(monkeypatch, on):
    # a stand-in clock: every start takes 1 s, and 2.5 s are left at the first: with the
    # knob on the second begins (1.5 s left), not the third (0.5 s left < 1 s)
    from coalloc.taskmap import starts as S

    clock = [0.0]
    made = []

    def one(topo, coarse, coarsest, sub, share, alpha, i, inc):
        made.append(i)
        clock[0] += 1.0
        return (1.0, -sub.shape[0], -alpha, i, None, share, sub)

    monkeypatch.setattr(S, "_one_start", one)
    monkeypatch.setattr(S, "_between_starts", lambda *a: [])
    monkeypatch.setattr(S, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    monkeypatch.setattr(S, "time_left", lambda: 2.5 - clock[0])
    monkeypatch.setattr(S, "STARTS_FIT", on)
    topo = types.SimpleNamespace(cap=np.ones(8), P=8)
    sets = [np.arange(k, dtype=np.int64) for k in (8, 4, 2, 1, 3)]
    out = S._coarse_starts(topo, None, 0, sets, (0.0,), types.SimpleNamespace(early_by=None))
    assert made == ([0, 1] if on else [0, 1, 2, 3, 4])
    assert len(out) == len(made)
    monkeypatch.setattr(S, "time_left", lambda: None)  # untimed: every start
    made.clear()
    S._coarse_starts(topo, None, 0, sets, (0.0,), types.SimpleNamespace(early_by=None))
    assert made == [0, 1, 2, 3, 4]


def test_the_first_start_is_predicted_by_the_coarsening(monkeypatch, stand_in_starts):
    # the coarsening took 1 s and 0.5 s are left: no start begins, the run waits for its
    # deadline (the scope's poll raises); 2 s left: the first begins
    from coalloc._shared import interrupt
    from coalloc.taskmap import starts as S

    made, topo, sets, inc = (stand_in_starts.made, stand_in_starts.topo, stand_in_starts.sets,
                             stand_in_starts.inc)  # fmt: skip
    monkeypatch.setattr(S, "time_left", lambda: 0.05)
    monkeypatch.setattr(S, "STARTS_FIT", True)
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(S.time.perf_counter() + 0.05):
            S._coarse_starts(topo, None, 0, sets, (0.0,), inc, 1.0)
    assert made == []
    monkeypatch.setattr(S, "time_left", lambda: 2.0)
    S._coarse_starts(topo, None, 0, sets, (0.0,), inc, 1.0)
    assert made == [0]


def test_the_paced_extra_is_capped_by_the_allowance(clock, monkeypatch):
    # a large keep (1 s a stand-in task) at a pace of 4 x 2: the extra is the allowance
    tasks, res = table1_instance(1, 0)
    monkeypatch.setattr(solvers, "POST_SECONDS", 1.0)
    monkeypatch.setattr(solvers, "bound_tests", lambda *a: 0)
    monkeypatch.setattr(solvers, "timed_bound", lambda *a: (1.0, False))
    monkeypatch.setattr(solvers, "KEEP_PACE_REF", 2.0)
    t0, cpu0 = clock.now, clock.cpu
    clock.now += 0.08
    clock.cpu += 0.01
    left, _, _ = solvers._timed_start(tasks, res, 5.0, t0, True, cpu0)
    post = solvers.POST_SHARE * 5.0  # the cap of the fixed keep binds
    assert left == pytest.approx(5.0 - 0.08 - post - max(0.05, 0.05 * 5.0), abs=1e-12)


def test_the_wait_for_the_deadline_raises_even_when_its_sleeps_oversleep(monkeypatch):
    # under load a 2 ms sleep may return after the wait's own end: the deadline (passed by
    # then) must still raise, not the wait end quietly (the test above failed so at load 13)
    from coalloc._shared import interrupt
    from coalloc.taskmap import starts as S

    real_sleep = S.time.sleep
    monkeypatch.setattr(S.time, "sleep", lambda s: real_sleep(0.15))
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(S.time.perf_counter() + 0.05):
            S._wait_out(0.05)
