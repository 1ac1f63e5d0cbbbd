"""Fixtures shared by the task-mapping tests."""

from __future__ import annotations

import types

import pytest

from coalloc.taskmap import bounds, solvers


class FrozenClock:
    """A stand-in ``time`` module whose ``perf_counter`` only the test moves (``now``)."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> FrozenClock:
    """``bounds``' and ``solvers``' clock frozen at ``clock.now`` (no real-clock race); a
    test module that needs another clock defines its own ``clock``."""
    c = FrozenClock()
    fake = types.SimpleNamespace(perf_counter=c.perf_counter)
    monkeypatch.setattr(bounds, "time", fake)
    monkeypatch.setattr(solvers, "time", fake)
    return c


@pytest.fixture
def start_order(monkeypatch) -> list:
    """The order in which a multilevel run calls its paper starts (``"paper"``) and
    refines a coarse start (``"refined"``), appended to the list returned, the real
    functions still doing the work."""
    from coalloc.taskmap import multilevel as ml

    order: list = []
    real_paper, real_refined = ml._paper_starts, ml._refined_start

    def paper(*a, **k):
        order.append("paper")
        return real_paper(*a, **k)

    def refined(*a, **k):
        order.append("refined")
        return real_refined(*a, **k)

    monkeypatch.setattr(ml, "_paper_starts", paper)
    monkeypatch.setattr(ml, "_refined_start", refined)
    return order
