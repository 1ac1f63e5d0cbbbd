"""An untimed GAP heuristic whose iterations end before any feasible assignment answers with
the fallback (the capacity shares' greedy, repaired) rather than ``no_solution``
(``search._UNTIMED_FALLBACK``); calls whose search found an assignment are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from bench.shared.audit_cases import gap_heavy

from coalloc.loadshare import solve_gap, verify_gap
from coalloc.loadshare.gap import search


@pytest.mark.parametrize("case", [(10, 80, 5, 1.2), (20, 200, 13, 1.3)])
def test_few_iterations_still_answer(monkeypatch, case):
    inst = gap_heavy(*case)
    monkeypatch.setattr(search, "_UNTIMED_FALLBACK", False)
    before = solve_gap(inst, method="heuristic", seed=0, iterations=100)
    assert before.status == "no_solution"  # what the fallback is for
    monkeypatch.setattr(search, "_UNTIMED_FALLBACK", True)
    res = solve_gap(inst, method="heuristic", seed=0, iterations=100)
    assert res.status == "feasible", res.message
    rep = verify_gap(inst, res.assignment)
    assert rep.feasible and rep.objective == pytest.approx(res.objective)
    assert res.bound is not None and res.objective >= res.bound - 1e-9
    again = solve_gap(inst, method="heuristic", seed=0, iterations=100)
    assert np.array_equal(again.assignment, res.assignment)  # one seed, one answer


@pytest.mark.parametrize("iterations", [1000, 3000])
def test_a_search_that_answers_is_unchanged(monkeypatch, iterations):
    inst = gap_heavy(10, 80, 5, 1.2)
    got = []
    for on in (False, True):
        monkeypatch.setattr(search, "_UNTIMED_FALLBACK", on)
        got.append(solve_gap(inst, method="heuristic", seed=0, iterations=iterations))
    assert got[0].status == got[1].status == "feasible"
    assert np.array_equal(got[0].assignment, got[1].assignment)
