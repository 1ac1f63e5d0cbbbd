"""The fixes' learnt margin (issue 38: the explanation within the solve + 1 s under load).

``fix_deadline`` hands the fixes 0.9 s of a 10 s budget; an explanation built after it
records how far past that deadline it ended, and the next deadlines keep
``FIX_SAFETY`` times the second largest recent lateness before the 1 s target (never below
``FIX_FLOOR`` of the 0.9 s). Judged on the deadlines themselves under a clock the test
moves (no timing asserted), with the memory emptied and restored around each test.
"""

from __future__ import annotations

import pytest

import coalloc._shared.explain as ex
from coalloc._shared.explain import Explanation, fix_deadline, fix_margin


class Clock:
    """A stand-in for the module's ``time``: ``monotonic()`` is what the test sets."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    kept = list(ex._LATE)
    ex._LATE.clear()
    c = Clock()
    monkeypatch.setattr(ex, "time", c)
    monkeypatch.setattr(ex._PENDING, "fixes", None, raising=False)
    yield c
    ex._LATE.clear()
    ex._LATE.extend(kept)


def _built(clock: Clock, started: float) -> Explanation:
    return Explanation(demand=("item 0",), resources=("r",), seconds=clock.now - started)


def test_no_lateness_keeps_the_fixes_their_whole_share(clock):
    assert fix_margin() == 0.0
    assert fix_deadline(clock.now, 10.0) == pytest.approx(clock.now + 0.9)
    started = clock.now - 5.0  # (a conflict that took 5 s: 0.2 s after it)
    assert fix_deadline(started, 10.0) == pytest.approx(clock.now + 0.2)


def test_an_explanation_past_its_deadline_moves_the_next_fixes_earlier(clock):
    t0 = clock.now
    deadline = fix_deadline(t0, 10.0)
    clock.now = deadline + 0.4  # its last fix call ended 0.4 s past the deadline
    _built(clock, t0)
    assert list(ex._LATE) == [pytest.approx(0.4)]
    assert fix_margin() == pytest.approx(ex.FIX_SAFETY * 0.4)
    # 1 - 0.6 = 0.4 s: under the floor, half of the 0.9 s
    assert fix_deadline(clock.now, 10.0) == pytest.approx(clock.now + ex.FIX_FLOOR * 0.9)


def test_a_small_lateness_changes_nothing_and_a_middle_one_the_share(clock):
    ex._LATE.append(0.05)  # 1.5 x 0.05 = 0.075 < the 0.1 s the 0.9 s leaves
    assert fix_deadline(clock.now, 10.0) == pytest.approx(clock.now + 0.9)
    ex._LATE.append(0.3)  # one slow call: the second largest (0.05) counts
    assert fix_deadline(clock.now, 10.0) == pytest.approx(clock.now + 0.9)
    ex._LATE.append(0.2)  # two: 1 - 1.5 x 0.2
    assert fix_margin() == pytest.approx(0.3)
    assert fix_deadline(clock.now, 10.0) == pytest.approx(clock.now + 0.7)
    for _ in range(ex.FIX_MEMORY):  # quick explanations fill the memory: back to 0.9 s
        ex._LATE.append(0.0)
    assert fix_deadline(clock.now, 10.0) == pytest.approx(clock.now + 0.9)
    # a larger budget: a tenth of it, the same margin rule (1.8 s, target 2 s)
    ex._LATE.extend([0.4, 0.4])
    assert fix_deadline(clock.now, 20.0) == pytest.approx(clock.now + 2.0 - 0.6)


def test_an_explanation_not_from_that_deadline_records_nothing(clock):
    t0 = clock.now
    fix_deadline(t0, 10.0)
    clock.now += 0.3
    Explanation(demand=("x",), resources=("r",), seconds=0.0)  # (built by hand)
    assert len(ex._LATE) == 0
    _built(clock, t0)  # the one that took it: on time, lateness 0
    assert list(ex._LATE) == [0.0]
    _built(clock, t0)  # (recorded once)
    assert list(ex._LATE) == [0.0]
