"""The shared contract of issue 36: a time limit keeps the best answer offered so far, and
one status rule (``settle``) checked against an independent recomputation."""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Optional

from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc._shared import interrupt
from coalloc._shared.params import offer_incumbent, time_up, with_time_limit
from coalloc._shared.result import OPTIMALITY_TOL, STATUSES, Result, settle


@dataclass
class Answer(Result):
    status: str = "feasible"
    message: str = ""
    objective: Optional[float] = None
    bound: Optional[float] = None
    gap: Optional[float] = None
    params: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    sense: str = "min"


def _never_ends(n, *, seed=0, offers=3):
    """Offers answers n, n-1, ... then spins until the deadline stops it."""
    for k in range(offers):
        value = n - k
        offer_incumbent(lambda value=value: Answer(objective=float(value)))
    while True:
        interrupt.check()
        time.sleep(0.001)


def _stopped(*args, **kwargs):
    return Answer(status="time_limit", message="nothing")


def test_the_deadline_returns_the_last_answer_offered():
    timed = with_time_limit(_never_ends, _stopped)
    result = timed(10, offers=3, time_limit=0.05)
    assert result.status == "time_limit"
    assert result.objective == 8.0  # the third offer, not the first
    assert result.params["time_limit"] == 0.05
    assert result.timings["total"] >= 0.05
    assert "best found so far" in result.message
    assert 0 <= result.timings["first_answer"] < result.timings["total"]


def test_no_offer_gives_the_family_stopped_result():
    timed = with_time_limit(_never_ends, _stopped)
    result = timed(10, offers=0, time_limit=0.02)
    assert result.message == "nothing" and result.objective is None


def test_an_incumbent_that_meets_its_bound_is_optimal_even_when_stopped():
    def method(n, *, seed=0):
        offer_incumbent(lambda: Answer(objective=3.0, bound=3.0))
        while True:
            interrupt.check()

    result = with_time_limit(method, _stopped)(1, time_limit=0.02)
    assert result.status == "optimal" and result.gap == 0.0


def test_offers_and_time_up_are_inert_without_a_limit():
    seen = []

    def method(n, *, seed=0):
        offer_incumbent(lambda: seen.append("built"))
        return time_up()

    assert with_time_limit(method, _stopped)(1) is False
    assert seen == []  # never built


def test_time_up_follows_the_innermost_limit():
    def method(n, *, seed=0):
        before = time_up()
        time.sleep(0.06)
        return before, time_up()

    assert with_time_limit(method, _stopped)(1, time_limit=0.05) == (False, True)


def test_incumbents_stay_with_their_thread():
    out = {}

    def method(tag, *, seed=0):
        offer_incumbent(lambda: Answer(objective=float(tag)))
        while True:
            interrupt.check()

    timed = with_time_limit(method, _stopped)

    def run(tag):
        out[tag] = timed(tag, time_limit=0.05).objective

    threads = [threading.Thread(target=run, args=(t,)) for t in (1, 2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert out == {1: 1.0, 2: 2.0, 3: 3.0}


# ---------------------------------------------------------------- the rule, independently


def _expected(status, objective, bound, sense):
    """The rule of the issue, written from its text, not from settle's code."""
    if bound is not None and not math.isfinite(bound):
        bound = None
    if status == "error":
        return "error", bound
    has = objective is not None
    if has and bound is not None:
        diff = (objective - bound) if sense == "min" else (bound - objective)
        scale = max(abs(objective), abs(bound))
        gap = 0.0 if scale == 0 else max(0.0, diff) / scale
        if gap <= OPTIMALITY_TOL:
            return "optimal", bound
        return ("feasible" if status == "optimal" else status), bound
    if has and status == "optimal":
        return "optimal", objective
    if not has:
        if status in ("optimal", "feasible"):
            status = "no_solution"
        if status in ("infeasible", "no_solution"):
            bound = None
    return status, bound


values = st.one_of(st.none(), st.integers(-50, 50).map(float),
                   st.sampled_from([math.inf, -math.inf, math.nan]))  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(status=st.sampled_from(STATUSES), objective=st.one_of(st.none(), st.integers(-50, 50)),
       bound=values, sense=st.sampled_from(["min", "max"]))  # fmt: skip
def test_settle_follows_the_rule(status, objective, bound, sense):
    objective = None if objective is None else float(objective)
    if status in ("infeasible", "no_solution"):
        objective = None  # a claim of no answer comes without one
    result = settle(Answer(status=status, objective=objective, bound=bound, sense=sense))
    want_status, want_bound = _expected(status, objective, bound, sense)
    assert result.status == want_status
    assert result.bound == want_bound
    assert result.status in STATUSES
    if result.status in ("infeasible", "no_solution"):
        assert result.bound is None and not result.has_solution
    if result.status in ("optimal", "feasible"):
        assert result.objective is not None


def test_settle_uses_the_solvers_own_gap_when_larger():
    relaxed = Answer(status="optimal", objective=100.0, bound=99.995, params={"mip_gap": 1e-4})
    strict = Answer(status="optimal", objective=100.0, bound=99.995)
    assert settle(relaxed).status == "optimal"
    assert settle(strict).status == "feasible"


def test_the_kernels_see_the_earliest_deadline_in_force():
    from coalloc._shared.params import _Until

    assert interrupt.deadline_ns() == -1 and interrupt.poll() == -1
    with interrupt.Scope(timeout=100) as outer:
        far = interrupt.deadline_ns()
        assert far == int(outer.deadline * 1e9)
        soon = time.perf_counter() + 1.0
        with _Until(soon):
            assert interrupt.deadline_ns() == int(soon * 1e9) < far  # the nearer one
        with _Until(time.perf_counter() + 1000.0):
            assert interrupt.deadline_ns() == far  # the outer one is nearer
        assert interrupt.deadline_ns() == far
    parent = interrupt.Scope(timeout=50)
    parent.__enter__()
    parent.__exit__(None, None, None)
    with interrupt.Scope(parent=parent):
        assert interrupt.deadline_ns() == int(parent.deadline * 1e9)
    assert interrupt.deadline_ns() == -1
