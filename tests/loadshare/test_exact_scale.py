"""Load sharing and GAP exact at any scale of numbers (issue 30, items 4 and 5).

The same problem in other units (every size and capacity, or every cost or weight, times a
power of ten from 1e-9 to 1e12) must have the same optimum, in those units, on every
solver. The reproducers are the instances the fuzzing campaign (and a rerun of it on the
code before the fix) found wrong: "optimal" answers below the optimum. Brute force over
every placement or assignment is the referee.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc._shared import milp
from coalloc.loadshare import (
    GapInstance,
    LoadSharingProblem,
    generate_gap,
    share,
    share_exact,
    solve_gap,
    verify_gap,
    verify_placement,
)
from tests._optional import require_solver
from tests.loadshare._gap_brute import brute_gap

SCALES = [1e-9, 1e-7, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9, 1e11, 1e12]


available = require_solver


def brute_share(cap, size, origin) -> float:
    """The best throughput of any placement, in the units given (verify's arithmetic)."""
    problem = LoadSharingProblem(cap, size, origin)
    return max(
        verify_placement(problem, list(p)).throughput
        for p in itertools.product(range(len(cap)), repeat=len(size))
    )




def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


# ----------------------------------------------------------------- load sharing, reproducers
SHARE_CASES = [
    # (capacities, sizes, origins, scale, backend): wrong "optimal" answers before the fix
    ([28.0, 5.0, 21.0], [17.0, 16.0, 6.0, 19.0], [0, 0, 0, 1], 1e12, "highs"),  # 50 of 52
    ([1.0, 6.0, 22.0, 25.0], [23.0, 10.0, 17.0, 13.0], [0, 1, 0, 2], 1e13, "highs"),  # 51/53
    ([29.0, 15.0, 2.0], [5.0, 8.0, 20.0, 11.0], [0, 0, 2, 0], 1e-6, "cbc"),  # 40 of 43
    ([29.0, 2.0], [17.0, 13.0, 1.0, 16.0], [1, 1, 1, 1], 1e-9, "highs"),  # 29 of 31
    ([29.0, 2.0], [17.0, 13.0, 1.0, 16.0], [1, 1, 1, 1], 1e-9, "cbc"),
    ([10.0, 24.0, 6.0], [11.0, 20.0, 17.0, 6.0, 20.0], [1, 2, 1, 2, 2], 1e-9, "highs"),  # 10/40
]


@pytest.mark.parametrize("cap,size,origin,scale,backend", SHARE_CASES)
def test_share_exact_reproducers(cap, size, origin, scale, backend):
    available(backend)
    best = brute_share(cap, size, origin)
    problem = LoadSharingProblem(np.array(cap) * scale, np.array(size) * scale, origin)
    res = share_exact(problem, solver=backend, time_limit=30)
    assert res.status == "optimal", res.message
    rep = verify_placement(problem, res.placement, claimed=res.throughput)
    assert rep.ok, rep
    assert close(res.throughput / scale, best), (res.throughput / scale, best)
    assert res.bound >= res.throughput * (1 - 1e-9)  # a valid bound, in the user's units
    assert close(res.bound / scale, best)


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["highs", "cbc"])
@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 3), jobs=st.integers(0, 5), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from(SCALES))  # fmt: skip
def test_share_exact_any_scale_against_brute_force(backend, n, jobs, seed, scale):
    available(backend)
    rng = np.random.default_rng(seed)
    cap = rng.integers(1, 30, n).astype(float)
    size = rng.integers(0, 30, jobs).astype(float)
    origin = rng.integers(0, n, jobs)
    best = brute_share(cap, size, origin)
    problem = LoadSharingProblem(cap * scale, size * scale, origin)
    res = share_exact(problem, solver=backend, time_limit=30)
    assert res.status == "optimal", res.message  # never "error" on a model this small
    assert verify_placement(problem, res.placement, claimed=res.throughput).ok
    assert close(res.throughput, best * scale) or (best == 0 and res.throughput == 0)


# ------------------------------------------------------------------------- GAP, reproducers
def scaled_gap(inst: GapInstance, cost_scale: float = 1.0, weight_scale: int = 1):
    return GapInstance(inst.cost * cost_scale, inst.weight * weight_scale,
                       inst.capacity * weight_scale)  # fmt: skip


GAP_CASES = [
    # (generator kind, m, n, seed, cost scale, weight scale, backend)
    ("d", 3, 8, 11, 1e-7, 1, "cpsat"),  # 618 of 616 (CP-SAT fell back to HiGHS)
    ("d", 3, 8, 11, 1e-7, 1, "highs"),  # 618 of 616
    ("d", 3, 8, 11, 1e-7, 1, "cbc"),  # 619 of 616
    ("a", 2, 8, 8, 1e-7, 1, "cbc"),  # 202 of 201
    ("d", 3, 8, 11, 1e-9, 10**11, "cbc"),  # 669 of 616
    ("b", 3, 7, 1, 1.0, 10**11, "cbc"),  # 165 of 160
    ("b", 3, 8, 5, 1e12, 10**11, "cbc"),  # 244 of 243
    ("b", 3, 6, 9, 1e-9, 10**11, "cbc"),  # "infeasible"
]


@pytest.mark.parametrize("kind,m,n,seed,cscale,wscale,backend", GAP_CASES)
def test_gap_exact_reproducers(kind, m, n, seed, cscale, wscale, backend):
    available(backend)
    base = generate_gap(kind, m, n, seed=seed)
    best = brute_gap(base)
    inst = scaled_gap(base, cscale, wscale)
    res = solve_gap(inst, "exact", solver=backend, time_limit=30, seed=0)
    assert res.status == "optimal", res.message
    assert verify_gap(inst, res.assignment).feasible
    assert close(res.objective, verify_gap(inst, res.assignment).objective)
    assert close(res.objective / cscale, best), (res.objective / cscale, best)
    assert close(res.bound, res.objective)


def _no_small_proof(monkeypatch) -> None:
    """The heuristic without its exact programme on small instances (stop 62), so that the
    solver, not the heuristic's proof, decides these small instances."""
    from coalloc.loadshare.gap import search

    monkeypatch.setattr(search, "_PROOF_PAIRS", 0)


def test_gap_cpsat_takes_decimal_costs_as_integers(monkeypatch):
    """Costs of 1e-7 units stay on CP-SAT (exact integers times 1e-7), not on HiGHS."""
    available("cpsat")
    _no_small_proof(monkeypatch)
    inst = scaled_gap(generate_gap("d", 3, 8, seed=11), 1e-7)
    res = solve_gap(inst, "exact", solver="cpsat", time_limit=30)
    assert res.params["solver"] == "cpsat" and res.message.startswith("CP-SAT")
    assert res.status == "optimal"
    assert close(res.objective, 616e-7) and close(res.bound, 616e-7)


def test_gap_cpsat_irrational_costs_fall_back_to_highs(monkeypatch):
    available("cpsat")
    available("highs")
    _no_small_proof(monkeypatch)
    base = generate_gap("a", 2, 5, seed=3)
    inst = GapInstance(base.cost / 3.0, base.weight, base.capacity)
    res = solve_gap(inst, "exact", solver="cpsat", time_limit=30)
    assert res.params["solver"] == "highs"
    assert res.status == "optimal"
    assert close(res.objective, brute_gap(inst))


def _any_scale(test):
    """The two any-scale tests' draws: every backend, shapes up to 3 x 5, costs of 1e-9 to
    1e12 units, weights of 1 to 1e11 units, both senses, items that must or may be placed."""
    test = given(m=st.integers(1, 3), n=st.integers(1, 5), seed=st.integers(0, 2**32 - 1),
                 cscale=st.sampled_from(SCALES),
                 wscale=st.sampled_from([1, 10**3, 10**6, 10**11]),
                 sense=st.sampled_from(["min", "max"]), assign_all=st.booleans())(test)  # fmt: skip
    test = settings(max_examples=25, deadline=None)(test)
    return pytest.mark.slow(pytest.mark.parametrize("backend", ["cpsat", "highs", "cbc"])(test))


def _scaled_draw(m, n, seed, cscale, wscale, sense, assign_all):
    """The drawn instance in the drawn units, and its optimum in the base units."""
    rng = np.random.default_rng(seed)
    base = GapInstance(rng.integers(1, 50, size=(m, n)), rng.integers(1, 25, size=(m, n)),
                       rng.integers(5, 40, size=m))  # fmt: skip
    return scaled_gap(base, cscale, wscale), brute_gap(base, sense, assign_all)


@_any_scale
# found by this test in a suite run: costs of 1e-9 made HiGHS's LP "optimal" above the true
# optimum (its tolerances are absolute), and that bound proved the heuristic's 4.5e-8 optimal
@example(m=2, n=5, seed=8218, cscale=1e-9, wscale=10**6, sense="min", assign_all=True)
def test_gap_exact_any_scale_against_brute_force(backend, m, n, seed, cscale, wscale, sense,
                                                 assign_all):  # fmt: skip
    """The exact method as a user calls it, any units: on these small instances the
    heuristic's exact programme (stop 62) or the solver decides, always correctly (the
    solver alone, below)."""
    available(backend)
    inst, best = _scaled_draw(m, n, seed, cscale, wscale, sense, assign_all)
    res = solve_gap(inst, "exact", sense=sense, assign_all=assign_all, solver=backend,
                    time_limit=30, seed=0)  # fmt: skip
    if best is None:
        assert res.status == "infeasible", res.message
        return
    assert res.status == "optimal", res.message
    rep = verify_gap(inst, res.assignment, assign_all=assign_all)
    assert rep.feasible, rep
    assert close(res.objective, best * cscale) or (best == 0 and res.objective == 0)


@_any_scale
# CBC at these units says "Integer infeasible" for a 148-unit optimum (stop 62's suite run)
@example(m=3, n=5, seed=0, cscale=1e-9, wscale=10**11, sense="min", assign_all=True)
def test_gap_solver_at_any_scale_never_claims_wrongly(backend, m, n, seed, cscale, wscale,
                                                      sense, assign_all):  # fmt: skip
    """The solver itself at any scale (the heuristic's exact programme off, so that the
    solver decides): a solver may fail at extreme units, but an ``optimal`` is the
    optimum, an ``infeasible`` has none, and anything else keeps an assignment that
    verifies, never better than the optimum."""
    available(backend)
    inst, best = _scaled_draw(m, n, seed, cscale, wscale, sense, assign_all)
    with pytest.MonkeyPatch.context() as mp:  # (a fixture would outlive one example)
        _no_small_proof(mp)
        res = solve_gap(inst, "exact", sense=sense, assign_all=assign_all, solver=backend,
                        time_limit=30, seed=0)  # fmt: skip
    if res.status == "infeasible":
        assert best is None, res.message
        return
    if best is None:
        assert not res.has_solution, res.message
        return
    if res.status == "optimal":
        assert close(res.objective, best * cscale) or (best == 0 and res.objective == 0)
    if res.has_solution:
        rep = verify_gap(inst, res.assignment, assign_all=assign_all)
        assert rep.feasible, rep
        worse = res.objective - best * cscale if sense == "min" else best * cscale - res.objective
        assert worse >= -1e-9 * max(abs(best * cscale), 1e-300), (res.objective, best * cscale)


@settings(max_examples=60, deadline=None)
@given(m=st.integers(1, 3), n=st.integers(1, 5), seed=st.integers(0, 2**32 - 1),
       cscale=st.sampled_from(SCALES), wscale=st.sampled_from([1, 10**3, 10**6, 10**11]),
       sense=st.sampled_from(["min", "max"]), assign_all=st.booleans())  # fmt: skip
@example(m=2, n=5, seed=8218, cscale=1e-9, wscale=10**6, sense="min", assign_all=True)
def test_gap_lp_bound_is_a_bound_at_any_scale(m, n, seed, cscale, wscale, sense, assign_all):
    """The LP bound never passes the brute-force optimum, in any units."""
    from coalloc.loadshare import gap_bound

    rng = np.random.default_rng(seed)
    base = GapInstance(rng.integers(1, 50, size=(m, n)), rng.integers(1, 25, size=(m, n)),
                       rng.integers(5, 40, size=m))  # fmt: skip
    best = brute_gap(base, sense, assign_all)
    bound = gap_bound(scaled_gap(base, cscale, wscale), sense, assign_all)
    if best is None or bound is None:
        return  # an infeasible LP proves nothing here; an infeasible GAP has no optimum
    slack = 1e-7 * cscale * max(1.0, abs(best))
    if sense == "min":
        assert bound <= best * cscale + slack, (bound, best * cscale)
    else:
        assert bound >= best * cscale - slack, (bound, best * cscale)


# ------------------------------------------- GAP exact never worse than its heuristic start
def stopped_without_solution(*args, **kwargs):
    """What a solver stopped by its time limit before any incumbent returns."""
    return milp.MilpOutcome(x=None, bound=None, status="time_limit", solver_status=-1,
                            message="HiGHS: Time limit reached; no incumbent found", nodes=0,
                            time_limit_hit=True, infeasible=False, rows=0,
                            time_limit=1.0)  # fmt: skip


def stopped_with_a_bad_incumbent(inst):
    """A stopped solver holding the worst feasible assignment, with a valid bound."""

    def run(*args, **kwargs):
        k = int((inst.weight <= inst.capacity[:, None]).sum())
        ii, jj = np.nonzero(inst.weight <= inst.capacity[:, None])
        worst, best_val = None, None
        for a in itertools.product(range(inst.m), repeat=inst.n):
            rep = verify_gap(inst, list(a))
            if rep.feasible and (best_val is None or rep.objective > best_val):
                worst, best_val = np.array(a), rep.objective
        x = np.zeros(k)
        x[worst[jj] == ii] = 1.0
        return milp.MilpOutcome(x=x, bound=0.0, status="time_limit", solver_status=-1,
                                message="HiGHS: Time limit reached", nodes=0,
                                time_limit_hit=True, infeasible=False, rows=0,
                                time_limit=1.0)  # fmt: skip

    return run


@pytest.mark.parametrize("how", ["none", "worse"])
def test_gap_exact_is_never_worse_than_the_heuristic_it_started_from(monkeypatch, how):
    """Issue 27 item 2: a time-limited exact solve ended worse than the heuristic (or with
    nothing); the heuristic's assignment it starts from is the floor of its answer."""
    from coalloc.loadshare import gap

    # the heuristic alone (untimed, the default runs CP-SAT after it on small instances)
    monkeypatch.setattr(gap.solve, "_CPSAT", False)
    _no_small_proof(monkeypatch)
    inst = generate_gap("d", 2, 8, seed=0)  # the heuristic's bound does not prove it
    heur = solve_gap(inst, "heuristic", seed=0)
    assert heur.status == "feasible"
    fake = stopped_without_solution if how == "none" else stopped_with_a_bad_incumbent(inst)
    monkeypatch.setattr(gap.solver, "run_milp", fake)
    res = solve_gap(inst, "exact", solver="highs", seed=0)
    assert res.status == "time_limit" and res.has_solution
    rep = verify_gap(inst, res.assignment, claimed=res.objective)
    assert rep.ok, rep
    assert res.objective <= heur.objective  # the same tabu search, run in full here
    assert "heuristic's assignment" in res.message
    assert res.bound is None or res.bound <= res.objective
    assert set(res.timings) >= {"hint", "solve", "total"}


def test_gap_exact_contradicted_proof_is_dropped(monkeypatch):
    """A solver "optimal" worse than a feasible assignment in hand is no proof."""
    from coalloc.loadshare import gap

    _no_small_proof(monkeypatch)
    inst = generate_gap("d", 2, 8, seed=0)  # the heuristic's bound does not prove it
    bad = stopped_with_a_bad_incumbent(inst)

    def claims_optimal(*args, **kwargs):
        out = bad()
        out.status, out.bound = "optimal", 1e9
        return out

    monkeypatch.setattr(gap.solver, "run_milp", claims_optimal)
    res = solve_gap(inst, "exact", solver="highs", seed=0)
    # the solver's bound is dropped; the heuristic's own LP/Lagrangian bound may remain
    assert res.status == "feasible" and (res.bound is None or res.bound <= res.objective)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert "contradicted" in res.message


@pytest.mark.slow
@settings(max_examples=10, deadline=None)
@given(
    n=st.integers(1, 5),
    sizes=st.lists(st.integers(1, 30), min_size=1, max_size=9),
    caps=st.lists(st.integers(1, 40), min_size=5, max_size=5),
    data=st.data(),
)
def test_share_exact_is_never_worse_than_best_fit(n, sizes, caps, data):
    """The exact method starts from best fit decreasing and ends no worse than it, with or
    without a time limit (issue 27 item 2); brute force referees the optimum."""
    origin = data.draw(st.lists(st.integers(0, n - 1), min_size=len(sizes), max_size=len(sizes)))
    problem = LoadSharingProblem(caps[:n], sizes, origin)
    bfd = share(problem, "bfd").throughput
    for limit in (None, 1e-6):
        res = share_exact(problem, time_limit=limit)
        assert res.has_solution
        rep = verify_placement(problem, res.placement, claimed=res.throughput)
        assert rep.ok, rep
        assert res.throughput >= bfd - 1e-9
        if res.status == "optimal":
            assert res.throughput == pytest.approx(brute_share(caps[:n], sizes, origin))
