"""run_milp's narrow form (issue 37): a MilpProblem and MilpOptions, the old keyword form
mapped onto them; a solve whose deadline has passed is not started (issue 36)."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc._shared import interrupt, milp


def _knapsack(n: int = 12, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.integers(3, 20, n).astype(float)
    v = rng.integers(1, 30, n).astype(float)
    A = sp.csr_matrix(w[None, :])
    return v, A, np.array([-np.inf]), np.array([w.sum() / 3])


def test_the_records_and_the_old_keywords_give_the_same_answer():
    c, A, lo, hi = _knapsack()
    pkg = milp.import_solver("highs")
    problem = milp.MilpProblem(c, A, lo, hi, integrality=np.ones(c.size), sense="max")
    new = milp.run_milp("highs", pkg, problem, options=milp.MilpOptions(seed=3))
    old = milp.run_milp("highs", pkg, c, A, lo, hi, integrality=np.ones(c.size), sense="max",
                        seed=3)  # fmt: skip
    assert new.status == old.status == "optimal"
    assert new.objective == old.objective
    np.testing.assert_array_equal(new.x, old.x)
    # the brute-force optimum of the knapsack, an independent referee
    w = A.toarray()[0]
    best = max(
        float(c @ np.array(bits))
        for bits in np.ndindex(*(2,) * c.size)
        if float(w @ np.array(bits, dtype=float)) <= hi[0]
    )
    assert new.objective == pytest.approx(best)


def test_the_old_form_refuses_what_it_never_took():
    c, A, lo, hi = _knapsack()
    pkg = milp.import_solver("highs")
    with pytest.raises(TypeError, match="time_limt"):
        milp.run_milp("highs", pkg, c, A, lo, hi, integrality=np.ones(c.size), time_limt=1)
    with pytest.raises(TypeError, match="integrality"):
        milp.run_milp("highs", pkg, c, A, lo, hi)
    with pytest.raises(TypeError, match="A, row_lb and row_ub"):
        milp.run_milp("highs", pkg, c, A, integrality=np.ones(c.size))
    problem = milp.MilpProblem(c, A, lo, hi, integrality=np.ones(c.size))
    with pytest.raises(TypeError, match="no other arguments"):
        milp.run_milp("highs", pkg, problem, time_limit=1.0)
    with pytest.raises(ValueError, match="sense"):
        milp.MilpProblem(c, A, lo, hi, integrality=np.ones(c.size), sense="maximise")


def test_the_options_are_frozen_and_hold_a_deadline():
    opts = milp.MilpOptions(time_limit=2.0, started=10.0)
    assert opts.deadline == 12.0
    with pytest.raises(AttributeError):
        opts.time_limit = 3.0  # type: ignore[misc]
    until = milp.MilpOptions.until(time.perf_counter() + 5.0, mip_gap=0.1)
    assert 4.0 < until.time_limit <= 5.0 and until.mip_gap == 0.1
    assert milp.MilpOptions.until(None).time_limit is None


@pytest.mark.parametrize("mode", ["never", "always"])
def test_a_solve_past_its_deadline_is_not_started(mode, monkeypatch):
    """The family's model building took the whole budget: no solver (no child process) is
    started, the outcome says so at once, without a solution."""
    monkeypatch.setenv("COALLOC_HIGHS_PROCESS", mode)
    c, A, lo, hi = _knapsack()
    problem = milp.MilpProblem(c, A, lo, hi, integrality=np.ones(c.size), sense="max")
    opts = milp.MilpOptions(time_limit=0.5, started=time.perf_counter() - 1.0)
    t0 = time.perf_counter()
    out = milp.run_milp("highs", milp.import_solver("highs"), problem, options=opts)
    assert out.status == "time_limit" and out.x is None and out.time_limit_hit
    assert "passed before it could start" in out.message, out.message
    assert time.perf_counter() - t0 < 0.5  # far less in fact: nothing was started
    # the message names its own status only: a command prints it on its status line (CI
    # once saw "time_limit ... no solution found", which reads as two statuses)
    words = re.findall(r"\b(optimal|infeasible|no[ _]solution|error)\b", out.message)
    assert not words, out.message


def test_until_stops_a_phase_and_lets_an_outer_scope_through():
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(time.perf_counter() - 1e-3):
            interrupt.check()
    with interrupt.until(time.perf_counter() + 60):  # not yet: nothing raised
        interrupt.check()
    with interrupt.until(None):
        interrupt.check()
    outer = interrupt.Scope()
    with outer:
        outer.cancel()
        with pytest.raises(interrupt.Cancelled):
            with interrupt.until(time.perf_counter() + 60):
                interrupt.check()
