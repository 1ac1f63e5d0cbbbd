"""An infeasible LP relaxation is a "no" said at once, with a certificate anyone can check.

Before, a GAP call whose LP relaxation was infeasible ran its search for the whole limit
(the audit's heavy 20 x 200, slack 1.2: "infeasible" after 10.05 s of a 10 s limit) and
took the LP's word at the end. Now the LP's Farkas certificate (non-negative weights on the
agents' capacities) is computed and checked against the instance, and the call ends there.
The referees: brute force over every assignment of small instances, and the LP relaxation
solved by SciPy (the untimed path), never the certificate's own LP.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench.shared.audit_cases import gap_heavy
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import GapInstance, solve_gap, verify_gap
from coalloc.loadshare.gap import bounds, heuristic

from .test_explain_repair import brute_fits


def _feasible_by_brute_force(inst: GapInstance) -> bool:
    """Whether some assignment of every item keeps every capacity (m ** n tries)."""
    return brute_fits(inst.weight, inst.capacity, list(range(inst.n)))


@st.composite
def small_instances(draw):
    m = draw(st.integers(1, 3))
    n = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    weight = rng.integers(0, 8, (m, n))
    # capacities near the fair share, so that both answers come up
    share = max(1, int(weight.min(axis=0).sum() / m))
    cap = rng.integers(max(0, share - 3), share + 4, m)
    cost = rng.integers(0, 9, (m, n)).astype(float)
    return GapInstance(cost, weight, cap)


@settings(max_examples=300, deadline=None)
@given(small_instances())
def test_a_certificate_is_found_exactly_when_the_lp_is_infeasible_and_is_a_proof(inst):
    fits_somewhere = bool((inst.weight <= inst.capacity[:, None]).any(axis=0).all())
    v = bounds.capacity_certificate(inst)
    if v is not None:
        assert bounds.certificate_excess(inst, v) > 0
        assert not _feasible_by_brute_force(inst)  # the referee: nothing fits
    if fits_somewhere:
        lp_infeasible = bounds.lp_relaxation(inst, "min", True)[0] is None  # SciPy's LP
        assert (v is not None) == lp_infeasible
    else:
        assert v is None  # that proof is another one's ("an item fits no agent")


@settings(max_examples=200, deadline=None)
@given(small_instances(), st.lists(st.floats(0, 10), min_size=3, max_size=3))
def test_no_weights_prove_a_feasible_instance_infeasible(inst, raw):
    v = np.asarray(raw[: inst.m], dtype=np.float64)
    if bounds.certificate_excess(inst, v) > 0:
        assert not _feasible_by_brute_force(inst)


def test_bad_weights_prove_nothing():
    inst = GapInstance([[1, 1, 1], [1, 1, 1]], [[2, 3, 4], [4, 1, 3]], [5, 2])
    assert not _feasible_by_brute_force(inst)
    assert bounds.certificate_excess(inst, np.array([1.0, 0.0])) == 1.0  # 2 + 4 > 5
    assert bounds.certificate_excess(inst, np.array([1.0, 1.0])) == 0.0  # 7 <= 7
    for v in ([-1.0, 0.0], [np.nan, 0.0], [np.inf, 0.0], [1.0, 0.0, 3.0], [0.0, 0.0]):
        assert bounds.certificate_excess(inst, np.array(v)) == 0.0
    v = bounds.capacity_certificate(inst)
    assert v is not None and bounds.certificate_excess(inst, v) > 0


@pytest.fixture(scope="module")
def infeasible():
    # the contract audit's heavy 20 x 200 at slack 1.2, seed 7: the count and volume
    # bounds prove nothing, the LP relaxation is infeasible
    inst = gap_heavy(20, 200, 7, slack=1.2)
    assert not bounds.count_bound_infeasible(inst)
    assert inst.weight.min(axis=0).sum() <= inst.capacity.sum()  # no volume proof
    assert bounds.lp_relaxation(inst, "min", True)[0] is None
    return inst


@pytest.mark.parametrize("method", ["heuristic", "portfolio", "exact"])
@pytest.mark.parametrize("limit", [None, 30.0])
def test_the_call_ends_at_the_certificate_without_a_search(infeasible, method, limit):
    res = solve_gap(infeasible, method, time_limit=limit, seed=1)
    assert res.status == "infeasible"
    assert "certified" in res.message and "weighted capacity" in res.message
    # no search ran and no solver was started (the work, not a clock)
    key = "hint_tabu_iterations" if method == "exact" else "tabu_iterations"
    assert res.iterations[key] == 0 and res.iterations.get("nodes", 0) == 0
    assert res.iterations.get("solver_started", 0) == 0


def test_without_the_certificate_the_search_runs_first(infeasible, monkeypatch):
    monkeypatch.setattr(heuristic, "_CERTIFY_LP", False)
    res = solve_gap(infeasible, "heuristic", iterations=500, seed=1)
    assert res.status == "infeasible" and "certified" not in res.message
    assert res.iterations["tabu_iterations"] > 0


def test_a_feasible_instance_is_untouched(monkeypatch):
    rng = np.random.default_rng(3)
    weight = rng.integers(5, 26, (5, 40))
    cap = np.full(5, int(1.5 * weight.mean(axis=0).sum() / 5))
    inst = GapInstance(rng.integers(1, 50, (5, 40)).astype(float), weight, cap)
    assert bounds.capacity_certificate(inst) is None
    res = solve_gap(inst, "heuristic", seed=2)
    assert res.has_solution and verify_gap(inst, res.assignment).ok


@pytest.mark.parametrize("on", [True, False])
def test_the_explanations_oracle_proves_a_set_by_the_certificate(infeasible, monkeypatch, on):
    """The conflict search's oracle (``explain._Oracle``) proves the whole item set
    infeasible by the certificate, before CP-SAT is asked; off, CP-SAT or HiGHS does."""
    import time

    from coalloc.loadshare import explain

    monkeypatch.setattr(explain, "LP_CERTIFICATE", on)
    oracle = explain._Oracle(infeasible.weight, infeasible.capacity, time.monotonic() + 30)
    items = list(range(infeasible.n))
    assert oracle(items) is False
    proof = oracle.certificates[tuple(items)]
    assert (proof == "capacity weights") == on
