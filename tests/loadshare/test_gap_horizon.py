"""A GAP time limit is a cap, not a target: the timed search lays its phases out over at
most ``search._HORIZON`` seconds (issue 40 / the contract), and a phase whose best has
stalled for a count of iterations hands its time on (``search._STALL``), so that a longer
limit does not delay what the search proves; limits within the horizon keep their
schedule."""

from __future__ import annotations

import time

import pytest

from coalloc import loadshare as ls
from coalloc.loadshare.gap import search


class _Seen(Exception):
    """Raised by the spy once the first phase's schedule is recorded (ends the call)."""


def _first_phase(monkeypatch, limit: float, horizon) -> tuple:
    """The first phase's end and the deadline, as seconds after the search's start, for a
    timed heuristic call on the contract suite's type-d instance under ``horizon``."""
    monkeypatch.setattr(search, "_HORIZON", horizon)
    seen = {}

    def spy(self, phase_cost, start, until, *args, **kwargs):
        seen["until"] = until - self.t_search
        seen["deadline"] = self.deadline - self.t_search
        raise _Seen

    monkeypatch.setattr(search._Search, "phase", spy)
    inst = ls.generators.gap_instance("d", 4, 12, seed=1)
    with pytest.raises(_Seen):
        ls.solve_gap(inst, method="heuristic", seed=0, time_limit=limit)
    return seen["until"], seen["deadline"]


def test_a_long_limit_lays_the_phases_out_over_the_horizon(monkeypatch):
    until, deadline = _first_phase(monkeypatch, 1000.0, 10.0)
    assert deadline > 990.0
    # the core phase's share of the horizon, not of the limit
    assert until == pytest.approx(search._CORE_SHARE * 10.0, rel=1e-9)


def test_without_the_horizon_the_phases_are_shares_of_the_whole_limit(monkeypatch):
    until, deadline = _first_phase(monkeypatch, 1000.0, None)
    assert until == pytest.approx(search._CORE_SHARE * deadline, rel=1e-9)
    assert until > 250.0


@pytest.mark.parametrize("limit", [0.5, 2.0, 9.5])
def test_limits_within_the_horizon_keep_their_schedule(monkeypatch, limit):
    on = _first_phase(monkeypatch, limit, 10.0)
    assert on[0] == pytest.approx(search._CORE_SHARE * on[1], rel=1e-9)


def test_a_long_limit_answers_what_the_untimed_call_proves():
    """The answer under a long limit is the untimed call's proven optimum (referee: the
    exact method), and the call ended by its proof, not by the limit."""
    inst = ls.generators.gap_instance("d", 4, 12, seed=1)
    exact = ls.solve_gap(inst, method="exact", seed=0)
    assert exact.status == "optimal"
    timed = ls.solve_gap(inst, method="heuristic", seed=0, time_limit=600.0)
    assert timed.status == "optimal"
    assert timed.objective == exact.objective
    assert ls.verify_gap(inst, timed.assignment).feasible


def _phase_ends(monkeypatch) -> list:
    """A list that each phase of the calls to come appends ``(its end, when it returned)``
    to."""
    ends = []
    real = search._Search.phase

    def spy(self, phase_cost, start, until, *args, **kwargs):
        state = real(self, phase_cost, start, until, *args, **kwargs)
        ends.append((until, time.perf_counter()))
        return state

    monkeypatch.setattr(search._Search, "phase", spy)
    return ends


def test_a_stalled_phase_hands_its_time_on(monkeypatch):
    """The core phase ends on a count of iterations without a better answer
    (``search._STALL``), long before its share of the clock: the call proves the optimum
    (the exact method's) and its first phase returns before its end (180 s after the start
    here, the horizon off so that the clock's share is the whole limit's)."""
    monkeypatch.setattr(search, "_HORIZON", None)
    assert search._STALL > 0  # the package's own (on)
    inst = ls.generators.gap_instance("d", 4, 12, seed=1)
    exact = ls.solve_gap(inst, method="exact", seed=0)  # the referee, before the spy
    ends = _phase_ends(monkeypatch)
    res = ls.solve_gap(inst, method="heuristic", seed=0, time_limit=600.0)
    assert res.status == "optimal" and res.objective == exact.objective
    until, returned = ends[0]
    assert returned < until - 100.0  # ended by the stall, not by the clock


def test_without_the_stall_the_core_phase_keeps_its_share(monkeypatch):
    """The same call with the stall off: the first phase runs to its end (a limit of 2 s,
    its share 0.6 s), so the test above can fail."""
    monkeypatch.setattr(search, "_STALL", 0.0)
    monkeypatch.setattr(search, "_PROOF_PAIRS", 0)  # (the programme, h63prog, proves it)
    ends = _phase_ends(monkeypatch)
    inst = ls.generators.gap_instance("d", 4, 12, seed=1)
    ls.solve_gap(inst, method="heuristic", seed=0, time_limit=2.0)
    until, returned = ends[0]
    assert returned >= until
