"""The guard of the unstoppable eigensolve under a time limit (issue 40, h55tmap).

16^3 on 4x4x16 at ``T`` = 5 s beside busy loops ran 0.3-0.8 s past the contract: the finest
graph's first Fiedler order (ARPACK, no poll inside) was the call's first eigensolve,
predicted at the constant ``FIEDLER_SECONDS`` (0.23 s) that knows nothing of the load, and
took 0.7-2.3 s. The guard now predicts from the call's coarsening pace before any eigensolve
was measured, scales a measured rate up with the subgraph's size, and starts the eigensolve
only within a share of the time left.

No clock races: the time left and the time limit's scope are stand-ins, and a spy counts
the eigensolves. Referees: the predictions' formulas written out, and the old rule (the
knobs at their old values) which the same stand-ins let through.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from coalloc.taskmap import bisection as bi
from coalloc.taskmap import generators as gen
from coalloc.taskmap.levels import TaskLevel

_OLD = {"FIEDLER_SHARE": 1.0, "FIEDLER_GROWTH": 0.0, "FIEDLER_PER_PACE": 0.0}


def _scope(monkeypatch, left, **attrs):
    """A stand-in time limit: ``left`` seconds, and a scope holding ``attrs``."""
    scope = types.SimpleNamespace(**attrs)
    monkeypatch.setattr(bi, "time_left", lambda: left)
    monkeypatch.setattr(bi.interrupt, "current", lambda: scope)
    return scope


def _old_rule(monkeypatch):
    for name, value in _OLD.items():
        monkeypatch.setattr(bi, name, value)


def test_the_first_eigensolve_is_predicted_from_the_calls_pace(monkeypatch):
    """The case traced: nothing measured, a pace of 30 us per unit (six busy loops; about
    1.3-1.6 us quiet): 8 x 30e-6 x 23,040 = 5.5 s, not begun with 2 s left; the old rule
    (1e-5 x 23,040 = 0.23 s < 2 s) began it."""
    _scope(monkeypatch, 2.0, fiedler_pace=30e-6)
    want = bi.FIEDLER_PER_PACE * 30e-6 * 23040
    assert bi.predicted_seconds(23040) == pytest.approx(want, rel=1e-12)
    assert not bi._in_time(23040)
    _old_rule(monkeypatch)
    assert bi._in_time(23040)


def test_a_quiet_pace_keeps_the_constant_as_its_floor(monkeypatch):
    _scope(monkeypatch, 2.0, fiedler_pace=1e-7)
    assert bi.predicted_seconds(5000) == pytest.approx(bi.FIEDLER_SECONDS * 5000, rel=1e-12)
    assert bi._in_time(5000)


def test_a_measured_rate_grows_with_the_subgraph(monkeypatch):
    """A rate measured on 2,000 entries predicts 23,040 at (23,040 / 2,000) ** growth more per
    entry; a smaller subgraph at the rate itself; the largest prediction of those kept."""
    _scope(monkeypatch, 0.5, fiedler_seen=[(6e-6, 2000), (4e-6, 12000)],
           fiedler_pace=1.0)  # fmt: skip  (a pace is not used once a rate is measured)
    g = bi.FIEDLER_GROWTH
    want = max(6e-6 * 23040 * (23040 / 2000) ** g, 4e-6 * 23040 * (23040 / 12000) ** g)
    assert bi.predicted_seconds(23040) == pytest.approx(want, rel=1e-12)
    assert bi.predicted_seconds(1500) == pytest.approx(6e-6 * 1500, rel=1e-12)
    assert not bi._in_time(23040)  # about 0.31 s predicted: over half of 0.5 s
    _old_rule(monkeypatch)  # 6e-6 x 23,040 = 0.14 s < 0.5 s: begun
    monkeypatch.setattr(bi.interrupt, "current",
                        lambda: types.SimpleNamespace(fiedler_rate=6e-6))  # fmt: skip
    assert bi._in_time(23040)


def test_the_share_boundary_and_no_time_limit(monkeypatch):
    _scope(monkeypatch, 1.0, fiedler_seen=[(1e-5, 50000)])
    share = bi.FIEDLER_SHARE
    fits = int(share * 1.0 / 1e-5)  # predicted = 1e-5 x nnz (below the measured size)
    assert bi._in_time(fits) and not bi._in_time(fits + 10)
    monkeypatch.setattr(bi, "time_left", lambda: None)
    assert bi._in_time(10**9)


def test_measured_and_noted_only_under_a_time_limit(monkeypatch):
    scope = _scope(monkeypatch, 1.0)
    bi._measured(5000, 0.05)
    bi._measured(500, 1.0)  # small: not kept
    bi.note_pace(2e-6)
    assert scope.fiedler_seen == [(1e-5, 5000)] and scope.fiedler_pace == 2e-6
    free = _scope(monkeypatch, None)
    bi._measured(5000, 0.05)
    bi.note_pace(2e-6)
    assert not vars(free)


@pytest.mark.parametrize("pace, spectral", [(1e-9, True), (1e-3, False)])
def test_grow_skips_the_eigensolve_predicted_too_long(monkeypatch, pace, spectral):
    """A split of an 8x8x8 stencil (2,688 entries) with 1 s left: at a quick pace the
    eigensolve runs, at a slow one it is skipped (the old rule ran it: 0.027 s predicted) and
    the part still has the target's weight within the FM balance."""
    calls = []
    real = bi.fiedler_order

    def spy(sub, n):
        calls.append(n)
        return real(sub, n)

    monkeypatch.setattr(bi, "fiedler_order", spy)
    _scope(monkeypatch, 1.0, fiedler_pace=pace)
    level = TaskLevel.of(gen.stencil_task_graph((8, 8, 8), seed=0))
    verts = np.arange(level.n)
    target = float(level.vw.sum()) / 2
    inside = bi.grow(level, verts, target)
    assert bool(calls) is spectral
    tol = max(float(level.vw.max()), 0.02 * float(level.vw.sum()))
    assert abs(float(level.vw[inside].sum()) - target) <= tol + 1e-9
    if not spectral:  # the old rule begins it on the same stand-ins
        _old_rule(monkeypatch)
        bi.grow(TaskLevel.of(gen.stencil_task_graph((8, 8, 8), seed=0)), verts, target)
        assert calls
