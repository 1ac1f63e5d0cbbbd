"""A testbed's time-limited set-up looks at the deadline in the router's and the checker's
tables too (issue 36), and a stopped build is resumed by the next call: built whole, they
took 0.1-0.7 s of wall under load on 2,000 PCs, and assign+ at T = 1 s ended at 1.3-1.5 s
(``bench/shared/large_budgets.py --family testbed --trace``). The deadline here is a
stand-in (a poll that raises at its n-th look): no clock is read."""

from __future__ import annotations

import gc
import time

import pytest

from coalloc import testbed as tb
from coalloc._shared import interrupt
from coalloc._shared.caches import cache_of
from coalloc.testbed import generators as g
from coalloc.testbed import problem as tp
from coalloc.testbed import routing, verify
from coalloc.testbed.methods import outcome


class _Stop(Exception):
    pass


def _stop_at(monkeypatch, n):
    """``interrupt.check`` as a deadline that passes at its ``n``-th look."""
    looks = [0]

    def check(*_):
        looks[0] += 1
        if looks[0] >= n:
            raise _Stop
    monkeypatch.setattr(interrupt, "check", check)
    return looks


def _testbed(seed=3):
    return g.ring(40), g.deterlab(300, 5, seed=seed)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_the_route_tables_stop_at_the_deadline_and_resume(monkeypatch, n):
    top, ptop = _testbed()
    pr = tb.problem.build_problem(top, ptop)
    want = routing._route_tables(tb.problem.build_problem(*_testbed()))  # a fresh testbed
    looks = _stop_at(monkeypatch, n)
    with pytest.raises(_Stop):
        routing._route_tables(pr, polled=True)
    assert looks[0] == n and "route" not in cache_of(ptop)
    kept = len(cache_of(ptop)["route/ifaces"])
    assert kept == (n - 1) * 32  # what the stopped build made stays
    monkeypatch.undo()
    got = routing._route_tables(pr, polled=True)  # resumed: the same tables
    assert got[:3] == want[:3]
    assert "route/ifaces" not in cache_of(ptop) and "route/ifaces/lock" not in cache_of(ptop)


@pytest.mark.parametrize("n", [1, 3])
def test_the_check_tables_stop_at_the_deadline_and_resume(monkeypatch, n):
    _, ptop = _testbed()
    want = verify._testbed_tables(_testbed()[1])
    _stop_at(monkeypatch, n)
    with pytest.raises(_Stop):
        verify._testbed_tables(ptop, polled=True)
    assert "verify" not in cache_of(ptop)
    assert len(cache_of(ptop)["verify/facts"]) == (n - 1) * 32
    monkeypatch.undo()
    got = verify._testbed_tables(ptop, polled=True)
    assert (got[0], got[1], got[2], got[4]) == (want[0], want[1], want[2], want[4])


def test_unpolled_tables_do_not_look_at_the_deadline(monkeypatch):
    # the answer's routing and check after the deadline must not stop there
    top, ptop = _testbed()
    pr = tb.problem.build_problem(top, ptop)
    _stop_at(monkeypatch, 1)
    routing._route_tables(pr)
    verify._testbed_tables(ptop)


def test_a_build_under_way_in_another_thread_is_not_disturbed():
    _, ptop = _testbed()
    lock = cache_of(ptop).setdefault("verify/facts/lock", __import__("threading").Lock())
    lock.acquire()  # as another thread's build would hold it
    try:
        got = tp._resumed(cache_of(ptop), "verify/facts", list(ptop.nodes.values()),
                          verify._node_view)  # fmt: skip
    finally:
        lock.release()
    assert got == [verify._node_view(nd) for nd in ptop.nodes.values()]
    assert "verify/facts" not in cache_of(ptop)  # its own copy, nothing kept


def test_the_collector_stays_paused_through_the_tables(monkeypatch):
    # the build deferred the collector's run; it came in the tables (0.3-0.6 s under load)
    seen = []
    real = routing._route_tables

    def spy(pr, polled=False):
        seen.append(gc.isenabled())
        return real(pr, polled)
    monkeypatch.setattr(outcome, "_route_tables", spy)
    top, ptop = _testbed()
    # a deadline in force, an hour away (not 1e12 s: past 2**62 ns a deadline is never
    # reached, so none is in force and the collector is not paused)
    with interrupt.until(time.perf_counter() + 3600):
        outcome._problem(top, ptop, None)
    assert seen == [False]
    assert gc.isenabled()


def test_assign_plus_stops_at_once_after_a_set_up_past_its_deadline(monkeypatch):
    # no annealer thread begun once the set-up has used the budget
    from coalloc.testbed.methods import assign_plus as ap

    started = []
    monkeypatch.setattr(ap, "_BesideAnneal", lambda *a: started.append(a))
    real = ap._problem

    def slow_setup(*args):
        pr = real(*args)
        monkeypatch.setattr(interrupt, "check", _raise_deadline)
        return pr
    monkeypatch.setattr(ap, "_problem", slow_setup)
    top, ptop = _testbed()
    res = tb.solve(top, ptop, method="assign+", seed=0, time_limit=30.0)
    assert res.status == "time_limit" and started == []


def _raise_deadline(*_):
    from coalloc._shared.params import _TimeLimitReached

    raise _TimeLimitReached()  # (what the time limit's scope raises past its deadline)
