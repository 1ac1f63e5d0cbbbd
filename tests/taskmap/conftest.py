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


@pytest.fixture
def stand_in_starts(monkeypatch) -> types.SimpleNamespace:
    """``starts._one_start`` stood in (the indices of the starts made appended to ``made``,
    no work), no sizes between; with an 8-processor stand-in topology (``topo``), its one
    processor set (``sets``) and an incumbent without an early answer (``inc``)."""
    import numpy as np

    from coalloc.taskmap import starts

    made: list = []

    def one(topo, coarse, coarsest, sub, share, alpha, i, inc):
        made.append(i)
        return (1.0, -sub.shape[0], -alpha, i, None, share, sub)

    monkeypatch.setattr(starts, "_one_start", one)
    monkeypatch.setattr(starts, "_between_starts", lambda *a: [])
    return types.SimpleNamespace(made=made, topo=types.SimpleNamespace(cap=np.ones(8), P=8),
                                 sets=[np.arange(8, dtype=np.int64)],
                                 inc=types.SimpleNamespace(early_by=None))  # fmt: skip
