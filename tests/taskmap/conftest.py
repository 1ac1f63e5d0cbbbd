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
