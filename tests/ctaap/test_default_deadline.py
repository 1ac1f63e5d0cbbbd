"""The bound ``solve(..., bound=True)`` adds after a heuristic stops at the time limit too.

Issue 36: on a 1,000-task Fig. 2 instance in a fresh process, the default's search ended at
its 0.5 s limit and the bound then ran 0.23 s more (the flow bound's tightened capacities
polled ``interrupt.check()`` but no scope set a deadline). Judged by what ran and what the
result says, never by the clock: the bound is not started past the limit, and a bound
that polls is stopped by the limit's scope; a stopped bound is no bound.
"""

from __future__ import annotations

import time

import coalloc.ctaap as ct
from coalloc._shared import interrupt
from coalloc.ctaap import solvers


def _instance():
    return ct.generators.fig2(2, n_tasks=30, seed=1)


def _greedy_that_ends_past(limit_passes: bool, monkeypatch) -> None:
    real = solvers.METHODS["greedy"]

    def greedy(request, offer, *, seed=0, time_limit=None, **kw):
        t0 = time.perf_counter()
        result = real(request, offer, seed=seed, time_limit=time_limit, **kw)
        while limit_passes and time.perf_counter() <= t0 + time_limit:
            pass  # (the search used its whole budget)
        return result

    monkeypatch.setitem(solvers.METHODS, "greedy", greedy)


def test_no_bound_is_started_once_the_limit_has_passed(monkeypatch):
    calls = []
    monkeypatch.setattr(solvers, "best_bound", lambda *a, **k: calls.append(k) or {"bound": 0})
    _greedy_that_ends_past(True, monkeypatch)
    request, offer = _instance()
    r = solvers.solve(request, offer, "greedy", time_limit=0.01)
    assert calls == []
    assert r.bound is None and r.params["bound"] == "stopped by the time limit"
    assert r.has_solution and ct.verify(request, offer, r.assignment).feasible


def test_a_polling_bound_is_stopped_by_the_limits_scope(monkeypatch):
    polls = []

    def slow_bound(request, offer, *, effort, stop_at=None, at_least=0):
        end = stop_at + 30.0  # (a bound that only polls: it would end 30 s past the limit)
        while time.perf_counter() < end:
            interrupt.check()
            polls.append(1)
        return {"bound": 10**6}

    monkeypatch.setattr(solvers, "best_bound", slow_bound)
    _greedy_that_ends_past(False, monkeypatch)
    request, offer = _instance()
    r = solvers.solve(request, offer, "greedy", time_limit=0.3)
    assert polls  # it started (the limit had not passed), then was stopped
    assert r.bound is None and r.params["bound"] == "stopped by the time limit"
    assert interrupt.current() is None  # (no scope left behind)


def test_without_a_limit_the_bound_is_computed_unscoped(monkeypatch):
    seen = []
    real = solvers.best_bound

    def spy(*a, **k):
        seen.append((k.get("stop_at"), interrupt.current()))
        return real(*a, **k)

    monkeypatch.setattr(solvers, "best_bound", spy)
    request, offer = _instance()
    r = solvers.solve(request, offer, "greedy")
    assert seen == [(None, None)]
    assert r.bound is not None and r.bound >= r.n_allocated


def test_the_local_search_is_not_started_past_the_deadline(monkeypatch):
    """The compiled local search builds its instance and descends once (about 90 ms on
    1,000 tasks under load) before its first poll: a deadline that passed during the fill
    stops the call before the kernel, which is never called; the answer is the allocation
    after the fill (offered as the incumbent), verified."""
    from coalloc.ctaap import solver

    real_fill = solver._Compiled.fill_free
    searched = []

    def fill_then_wait(*args):
        out = real_fill(*args)
        end = time.perf_counter() + 60.0
        while time.perf_counter() < end:  # until the limit's scope says it has passed
            try:
                interrupt.check()
            except Exception:
                break
        return out

    monkeypatch.setattr(solver._Compiled, "fill_free", staticmethod(fill_then_wait))
    monkeypatch.setattr(solver._Compiled, "improve",
                        staticmethod(lambda *a: searched.append(1) or {}))  # fmt: skip
    request, offer = _instance()
    r = solvers.solve(request, offer, time_limit=0.3)
    assert searched == []
    assert r.status == "time_limit" and r.has_solution
    assert ct.verify(request, offer, r.assignment).feasible


def _search_inputs():
    """A 60-task Fig. 2 pair and an empty allocation: the first descent has moves to make."""
    import numpy as np

    from coalloc.ctaap.model import compatibility
    from coalloc.ctaap.solver import _links

    request, offer = ct.generators.fig2(2, n_tasks=60, seed=3)
    compat = compatibility(request, offer)
    args = (_links(request), offer.bandwidth, compat.view(np.uint8), offer.capacity)
    return args, np.full(request.n, -1, dtype=np.int64)


def test_the_compiled_local_search_polls_inside_its_first_descent():
    """With no iteration to run (max_iters 0) the kernel's only work is its first descent:
    a passed deadline now stops it there (it polled only between iterations, so it ran to
    the end and returned); the twin, which looks before each move, stops alike. Without a
    deadline both make the same moves."""
    import numpy as np
    import pytest

    from coalloc.ctaap._localsearch import improve
    from coalloc.ctaap._reference.localsearch import improve_reference

    args, empty = _search_inputs()
    free = [empty.copy(), empty.copy()]
    c_kernel = improve(*args, free[0], 0, 7, None, deadline=None)
    c_twin = improve_reference(*args, free[1], 0, 7, None)
    assert c_kernel["insertions"] > 0 and np.array_equal(free[0], free[1])
    assert c_kernel["insertions"] == c_twin["insertions"]
    for search in (improve, improve_reference):
        assign = empty.copy()
        with pytest.raises(interrupt.DeadlinePassed):
            with interrupt.until(time.perf_counter() - 1.0):
                search(*args, assign, 0, 7, None, deadline=interrupt.kernel_deadline())
        assert (assign < 0).all()  # (stopped: the allocation it was given, untouched)


def test_the_compiled_local_search_polls_in_its_set_up():
    """The set-up (the instance's links, then the allocation's placement: ~90 ms on a dense
    1,000-task request under load) looks at the deadline before the allocation is even
    read: with a passed deadline the kernel stops there, before it would refuse the
    infeasible allocation it was given (it refused it first, the set-up polling nothing)."""
    import numpy as np
    import pytest

    from coalloc.ctaap._localsearch import improve

    args, empty = _search_inputs()
    allowed = args[2]
    bad = empty.copy()
    bad[0] = int(np.flatnonzero(allowed[0] == 0)[0])  # task 0 where it may not go
    with pytest.raises(ValueError, match="infeasible"):
        improve(*args, bad.copy(), 10, 7, None, deadline=None)
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(time.perf_counter() - 1.0):
            improve(*args, bad.copy(), 10, 7, None, deadline=interrupt.kernel_deadline())
