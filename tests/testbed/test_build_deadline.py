"""The testbed problem's build under a deadline (issue 36): it polls the calling thread's
scope in its long loops, the exact method returns at a build its limit stopped, and the
cyclic collector is paused while a build runs under a deadline (never otherwise)."""

from __future__ import annotations

import gc
import time

import pytest

from coalloc import testbed
from coalloc._shared import interrupt
from coalloc.testbed import generators as g
from coalloc.testbed import problem as tp


def _pair(n_pcs=300, n_nodes=20, seed=5):
    # a new testbed object each time: its part of the build is not cached yet
    return g.random_sparse(n_nodes, 2, seed=seed), g.deterlab(n_pcs, 4, seed=seed)


def test_a_build_past_its_deadline_stops_at_its_first_poll(monkeypatch):
    """Inside a scope already past its deadline the build raises the scope's error from a
    poll and caches nothing (the next call builds anew); the same build without a scope
    completes, and its answer equals the answer of a build with a far deadline."""
    top, ptop = _pair()
    polls = []
    real = interrupt.check

    def counted(*args):
        polls.append(args)
        return real(*args)

    monkeypatch.setattr(interrupt, "check", counted)
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(time.perf_counter() - 1.0):
            tp.build_problem(top, ptop)
    assert len(polls) == 1  # the first poll raised
    with interrupt.until(time.perf_counter() + 3600.0):
        far = tp.build_problem(top, ptop)
    assert len(polls) > 10  # the loops polled (300 PCs, 20 nodes, about 1,000 links)
    monkeypatch.setattr(interrupt, "check", real)
    plain = tp.build_problem(*_pair())
    assert far.vnames == plain.vnames and far.pnames == plain.pnames
    assert [list(c) for c in far.cand] == [list(c) for c in plain.cand]


def test_the_exact_method_answers_a_build_stopped_by_its_limit():
    """A limit that has passed by the build's first poll (1 ns): the exact method returns
    the testbed's stopped result (``time_limit``, no mapping, the limit in its params)
    rather than building the whole problem first."""
    top, ptop = _pair(seed=6)
    res = testbed.assign(top, ptop, method="exact", time_limit=1e-9)
    assert res.status == "time_limit"
    assert res.mapping is None and not res.has_solution
    assert res.params["time_limit"] == 1e-9
    assert "before a solution" in res.message


def test_the_collector_is_paused_only_during_a_build_under_a_deadline(monkeypatch):
    """What the testbed part of the build sees: the collector off under a deadline, on
    without one; on again after the build, and left off when the caller had turned it
    off."""
    seen = []
    real = tp._testbed_part

    def spy(ptop):
        seen.append(gc.isenabled())
        return real(ptop)

    monkeypatch.setattr(tp, "_testbed_part", spy)
    top, ptop = _pair(n_pcs=60, n_nodes=6)
    assert gc.isenabled()
    tp.build_problem(top, ptop)
    with interrupt.until(time.perf_counter() + 3600.0):
        tp.build_problem(top, ptop)
    with interrupt.Scope(timeout=3600.0):  # a batch's per-instance timeout is a deadline too
        tp.build_problem(top, ptop)
    assert seen == [True, False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        with interrupt.until(time.perf_counter() + 3600.0):
            tp.build_problem(top, ptop)
        assert not gc.isenabled()  # the caller's choice is kept
    finally:
        gc.enable()
    with pytest.raises(interrupt.DeadlinePassed):  # a stopped build turns it back on too
        with interrupt.until(time.perf_counter() - 1.0):
            tp.build_problem(*_pair(n_pcs=60, n_nodes=6, seed=7))
    assert gc.isenabled()


def test_the_model_is_not_finished_when_the_objective_could_not_be_handed_over(monkeypatch):
    """With less time left than ``OBJECTIVE_SHARE`` of the constraints' build time (made
    certain here by a share no limit can cover), the objective's unpolled hand-over and
    CP-SAT are not started: ``time_limit`` without a mapping, the model's building named;
    the same call with a share of 0 maps the experiment. Untimed calls never ask."""
    pytest.importorskip("ortools")
    from coalloc.testbed import exact as tx

    top, ptop = g.random_sparse(6, 1, seed=2), g.deterlab(20, 2, seed=2)
    monkeypatch.setattr(tx, "OBJECTIVE_SHARE", 1e12)
    cut = testbed.assign(top, ptop, method="exact", time_limit=600)
    assert cut.status == "time_limit" and cut.mapping is None
    assert "model was built" in cut.message
    untimed = testbed.assign(top, ptop, method="exact")
    assert untimed.status == "optimal" and untimed.mapping is not None
    monkeypatch.setattr(tx, "OBJECTIVE_SHARE", 0.0)
    full = testbed.assign(top, ptop, method="exact", time_limit=600)
    assert full.status == "optimal" and full.objective == untimed.objective
