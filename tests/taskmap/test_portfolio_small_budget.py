"""The task-mapping default at a small budget (issue 36 item 4): it keeps its multilevel
member's answer, and starts its exact member only when the time left lets it start.

The contract audit found the default (``portfolio``) at ``time_limit=0.05`` ending
``time_limit`` on tiny instances after a call of the exact MILP that never started ("the
time limit passed before it could start", its model built past the time the call had).
Load-proof: the multilevel here returns its untimed answer when the time left is below
what the exact member needs (a wait on the time limit's own clock, no timed assertion).
Referees: :func:`coalloc.taskmap.verify_mapping` and the multilevel's own answer."""

from __future__ import annotations

import pytest
from bench.shared import contract_audit as ca  # the audit's generators, seed root 42

from coalloc import taskmap as tm
from coalloc._shared.params import time_left
from coalloc.taskmap import portfolio


def _tiny():
    """The audit's metis-clustered-10/star4 (40 pairs: the exact MILP's range)."""
    return ca.task_graph_clustered(10, 2, root=42), ca.star_resources(4, 2, root=42)


@pytest.mark.parametrize("seed", [0, 1])
def test_portfolio_keeps_the_multilevel_answer_when_the_exact_cannot_start(seed, monkeypatch):
    tasks, res = _tiny()
    assert tasks.n * res.n_processors <= portfolio.EXACT_CELLS
    alone = tm.map_multilevel(tasks, res, seed=seed)
    real = portfolio._member  # the default's multilevel member (h59edge: no context variable)

    def late(*args, **kwargs):
        out = real(*args, **kwargs)
        while (time_left() or 0.0) > portfolio.EXACT_START / 2:
            pass  # (the member ends with less time left than the exact member needs)
        return out

    def exact(*args, **kwargs):
        raise AssertionError("the exact member was started without the time to start")

    monkeypatch.setattr(portfolio, "_member", late)
    monkeypatch.setattr(portfolio, "solve_exact_mapping", exact)
    monkeypatch.setattr(portfolio, "_solve_exact", exact)
    r = portfolio.map_portfolio(tasks, res, seed=seed, time_limit=0.5)
    assert r.mapping is not None
    report = tm.verify_mapping(tasks, res, r.mapping)
    assert report.valid, report.problems
    assert r.max_occupancy == pytest.approx(report.max_occupancy, rel=1e-12)
    assert r.max_occupancy <= alone.max_occupancy * (1 + 1e-12)
    assert r.status == "time_limit" and "not started" in r.message


def test_portfolio_with_time_to_start_still_runs_the_exact_member():
    """The other side: with time left (0.5 s idle is ample for 40 pairs) the exact member
    runs; the answer is verified and never worse than the multilevel's alone."""
    tasks, res = _tiny()
    alone = tm.map_multilevel(tasks, res, seed=0)
    r = portfolio.map_portfolio(tasks, res, seed=0, time_limit=30)
    assert "exact" in r.timings
    report = tm.verify_mapping(tasks, res, r.mapping)
    assert report.valid, report.problems
    assert r.max_occupancy <= alone.max_occupancy * (1 + 1e-12)
