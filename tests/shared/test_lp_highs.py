"""``coalloc._shared.lp_highs.solve_lp``: an LP in ``linprog``'s form solved by HiGHS through
highspy. Referee: SciPy's ``linprog(method="highs")`` (another build of HiGHS behind another
wrapper) on random small LPs, compared by status and optimal value; hand-made infeasible and
unbounded ones."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from coalloc._shared.lp_highs import solve_lp

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
_STATUS = {0: "optimal", 2: "infeasible", 3: "unbounded"}


@settings(max_examples=60, **_SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 6), m_ub=st.integers(0, 5),
       m_eq=st.integers(0, 2), upper=st.sampled_from([np.inf, 1.0, 3.0]))  # fmt: skip
def test_solve_lp_agrees_with_linprog(seed, n, m_ub, m_eq, upper):
    rng = np.random.default_rng(seed)
    cost = rng.integers(-3, 4, n).astype(float)
    a_ub = sp.csr_matrix(rng.integers(-2, 4, (m_ub, n)) * (rng.random((m_ub, n)) < 0.7))
    b_ub = rng.integers(-2, 8, m_ub).astype(float)
    a_eq = sp.csr_matrix(rng.integers(0, 3, (m_eq, n)).astype(float))
    b_eq = rng.integers(0, 5, m_eq).astype(float)
    out = solve_lp(cost, a_ub, b_ub, a_eq, b_eq, 0.0, upper)
    ref = linprog(cost, A_ub=a_ub if m_ub else None, b_ub=b_ub if m_ub else None,
                  A_eq=a_eq if m_eq else None, b_eq=b_eq if m_eq else None,
                  bounds=(0, None if np.isinf(upper) else upper), method="highs")  # fmt: skip
    if ref.status == 4:  # linprog's "unbounded or infeasible"
        assert out.status in ("unbounded", "infeasible", "unbounded_or_infeasible")
        return
    assert out.status == _STATUS[ref.status] or (
        ref.status in (2, 3) and out.status == "unbounded_or_infeasible"
    ), (out.status, ref)
    if ref.status == 0:
        assert out.objective == pytest.approx(ref.fun, abs=1e-7)
        x = out.x
        assert np.all(x >= -1e-9) and np.all(x <= upper + 1e-9)
        assert np.all(a_ub @ x <= b_ub + 1e-7)
        np.testing.assert_allclose(a_eq @ x, b_eq, atol=1e-7)
        assert cost @ x == pytest.approx(out.objective, abs=1e-7)


def test_solve_lp_proves_infeasibility_and_unboundedness():
    # x0 + x1 = 3 with x0 + x1 <= 2: infeasible
    out = solve_lp(np.zeros(2), np.array([[1.0, 1.0]]), [2.0], np.array([[1.0, 1.0]]), [3.0])
    assert out.status == "infeasible" and out.x is None and np.isnan(out.objective)
    # min -x0, x0 - x1 <= 1: unbounded (or HiGHS's joint word for it)
    out = solve_lp(np.array([-1.0, 0.0]), sp.csr_matrix([[1.0, -1.0]]), [1.0])
    assert out.status in ("unbounded", "unbounded_or_infeasible")
    # dense input and no rows at all
    out = solve_lp(np.array([1.0, 2.0]), lower=[1.0, 0.5])
    assert out.status == "optimal" and out.objective == pytest.approx(2.0)


def test_solve_lp_names_a_shape_mismatch():
    with pytest.raises(ValueError, match="columns"):
        solve_lp(np.zeros(3), np.ones((1, 2)), [1.0])
    with pytest.raises(ValueError, match="b_ub"):
        solve_lp(np.zeros(2), np.ones((2, 2)), [1.0])


@settings(max_examples=30, **_SETTINGS)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 5))
def test_solve_lp_integral_agrees_with_enumeration(seed, n):
    """A 0-1 knapsack with one equality (a MILP) against every 0-1 vector."""
    rng = np.random.default_rng(seed)
    cost = -rng.integers(1, 9, n).astype(float)
    a_ub, b_ub = rng.integers(1, 6, (1, n)).astype(float), [float(rng.integers(2, 12))]
    a_eq, b_eq = np.ones((1, n)), [float(rng.integers(0, n + 1))]
    out = solve_lp(cost, a_ub, b_ub, a_eq, b_eq, 0.0, 1.0, integral=True)
    feasible = [
        cost @ x
        for x in (np.array(bits, float) for bits in np.ndindex(*(2,) * n))
        if a_ub[0] @ x <= b_ub[0] and x.sum() == b_eq[0]
    ]
    if not feasible:
        assert out.status == "infeasible"
    else:
        assert out.status == "optimal" and out.objective == pytest.approx(min(feasible))
        assert np.allclose(out.x, np.round(out.x)) and cost @ out.x == pytest.approx(out.objective)
