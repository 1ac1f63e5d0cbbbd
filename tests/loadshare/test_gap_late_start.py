"""A timed GAP call whose LP start takes the whole limit (a slow LP under load) still
answers: the search takes the fallback's assignment when the time is out before its first
round (h47gap: orlib-single, 2 x 4, at T = 0.05 s under a load of 9 ended without an
answer in 1-2 of 30 calls of every method, its LP start 34 ms median)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from coalloc.loadshare import read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import heuristic

SINGLE = Path(__file__).resolve().parents[2] / "fuzz" / "corpus" / "gap" / "single.txt"


@pytest.mark.parametrize("method", ["heuristic", "exact", "portfolio"])
def test_an_lp_past_the_limit_still_gives_an_answer(monkeypatch, method):
    inst = read_gap(SINGLE)[0]
    real = heuristic.lp_relaxation
    limit = 0.05

    def slow_lp(*args, **kwargs):  # the LP's answer, returned after the limit has passed
        out = real(*args, **kwargs)
        time.sleep(2 * limit)
        return out

    monkeypatch.setattr(heuristic, "lp_relaxation", slow_lp)
    res = solve_gap(inst, method, time_limit=limit, seed=0)
    assert res.assignment is not None, res.message
    rep = verify_gap(inst, res.assignment, claimed=res.objective)
    assert rep.ok, rep
    assert res.status in ("time_limit", "optimal"), res.status


def test_a_search_out_of_time_before_a_feasible_assignment_takes_the_fallback(monkeypatch):
    """The tabu search stopped before its first feasible assignment (here: no tabu
    iteration at all): the call still answers with the fallback's assignment, checked."""
    from coalloc.loadshare.gap import tabu

    inst = read_gap(SINGLE)[0]
    monkeypatch.setattr(tabu.TabuState, "run", lambda self, *args, **kwargs: 0)
    res = solve_gap(inst, "heuristic", time_limit=0.05, seed=0)
    assert res.assignment is not None, res.message
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
