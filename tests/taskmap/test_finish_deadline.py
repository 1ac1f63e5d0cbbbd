"""The finish of a stopped multilevel run keeps its allowance (issue 40 follow-up,
h52tmap): on the geometric graph of 2,000 tasks a slice of 8 bottleneck moves took 70 ms of
wall under a load of 5, and one started 10 ms before ``finish_by`` ended the call at
1.038-1.062 s at ``T`` = 1 s. No test races the clock: a stand-in clock and stand-in moves."""

from __future__ import annotations

import numpy as np

from coalloc.taskmap import multilevel as ml


class _Clock:
    def __init__(self):
        self.now = 100.0

    def perf_counter(self):
        return self.now


class _State:
    def __init__(self, topo, fine, m):
        self.m = m

    def maximum(self):
        return 1.0


def _stand_ins(monkeypatch, seconds_a_move: float) -> tuple:
    clock, slices = _Clock(), []

    def moves(state, k):  # every move helps and takes ``seconds_a_move`` of wall
        slices.append(k)
        clock.now += seconds_a_move * k
        return k

    monkeypatch.setattr(ml, "time", clock)
    monkeypatch.setattr(ml, "RefineState", _State)
    monkeypatch.setattr(ml, "refine", moves)
    return clock, slices


def test_no_finish_slice_starts_that_is_predicted_to_end_past_finish_by(monkeypatch):
    """10 ms a move, 200 ms allowed: the measured rate shortens the last slices, so the
    finish ends by ``finish_by`` (before: slices of 8 to 240 ms, 40 ms past it)."""
    clock, slices = _stand_ins(monkeypatch, 0.01)
    by = clock.now + 0.2
    rate: list = []
    _, moves, _ = ml._finish(None, None, np.zeros(3, dtype=np.int64), by, cap=1000, rate=rate)
    assert clock.now <= by + 1e-9
    # (FINISH_PROBE: one move first, its own probe of the rate; h57fast)
    assert moves == sum(slices) and moves >= 15
    assert slices[0] == (1 if ml.FINISH_PROBE else ml._FINISH_SLICE)
    assert rate and max(rate) > 0


def test_a_rate_measured_earlier_in_the_run_stops_the_first_slice(monkeypatch):
    """The run's early answer measured 70 ms a move: a finish with 50 ms left starts none."""
    clock, slices = _stand_ins(monkeypatch, 0.07)
    by = clock.now + 0.05
    _, moves, _ = ml._finish(None, None, np.zeros(3, dtype=np.int64), by, cap=99, rate=[0.07])
    assert moves == 0 and not slices and clock.now <= by


def test_without_a_deadline_the_slices_are_the_old_ones(monkeypatch):
    """No ``finish_by``: slices of 8 to the cap whatever the rate (untimed answers unchanged)."""
    clock, slices = _stand_ins(monkeypatch, 1.0)
    _, moves, _ = ml._finish(None, None, np.zeros(3, dtype=np.int64), None, cap=20, rate=[5.0])
    assert slices == [8, 8, 4] and moves == 20
