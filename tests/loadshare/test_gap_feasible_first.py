"""The GAP heuristic's feasibility-first start (issue 36 item 4, h47gapfirst): under a time
limit, when the rounded LP overloads an agent, the capacity shares' greedy repaired by a
short tabu search on the shares is the first incumbent, before the bounds and the search.

Referees: ``verify_gap`` for every assignment, a brute force for whether one exists; the
untimed answers compared with the start switched off; no clock in any assertion."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import GapInstance, gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.bounds import lp_relaxation
from coalloc.loadshare.gap.lagrangian import RelaxationBounds


def tight(m: int, n: int, seed: int, slack: float = 1.2) -> GapInstance:
    """A few heavy agents (weights 5x), capacities ``slack`` x the fair share (the contract
    audit's heavy instances, drawn here with NumPy's generator)."""
    rng = np.random.default_rng(seed)
    weight = rng.integers(1, 10, (m, n))
    weight[: max(1, m // 3)] *= 5
    cost = rng.integers(1, 50, (m, n)) + weight
    cap = np.full(m, max(1, int(slack * weight.min(axis=0).sum() / m)), dtype=np.int64)
    cap[-1] += int(weight[-1].max())
    return GapInstance(cost.astype(float), weight, cap)


def brute_feasible(inst: GapInstance) -> bool:
    """Whether some assignment of every item keeps every capacity (every assignment
    tried)."""
    cols = np.arange(inst.n)
    for x in itertools.product(range(inst.m), repeat=inst.n):
        a = np.array(x)
        load = np.bincount(a, weights=inst.weight[a, cols], minlength=inst.m)
        if np.all(load <= inst.capacity):
            return True
    return False


def timed_search(inst: GapInstance, seed: int = 0, limit: float = 1000.0) -> gap.search._Search:
    call = gap.model.GapCall(inst, "min", True, limit, seed, {}, time.perf_counter())
    return gap.search._Search(call, None, None, None)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(2, 4), st.integers(3, 8), st.integers(0, 10**6),
       st.sampled_from([0.8, 1.0, 1.05, 1.2]))  # fmt: skip
@example(3, 8, 3, 1.0)
def test_the_start_is_feasible_where_an_assignment_exists(m, n, seed, slack):
    """From an overloaded start (every item to its least-cost agent), the start with the
    repair is kept exactly when a brute force finds a feasible assignment, and the referee
    accepts it with its recorded objective."""
    inst = tight(m, n, seed, slack)
    s = timed_search(inst, seed)
    start = np.argmin(inst.cost, axis=0).astype(np.int64)
    s.incumbent = start.copy()
    if verify_gap(inst, start).ok:
        assert not s.fallback(start, repair=True)  # a feasible start is left alone
        return
    exists = brute_feasible(inst)
    kept = s.fallback(start, repair=True)
    assert kept == exists == s.feasible
    if kept:
        assert verify_gap(inst, s.incumbent, claimed=s.best_obj).ok


@pytest.mark.parametrize("seed", range(6))
def test_the_start_is_feasible_on_tight_10_by_80(seed):
    """On heavy 10 x 80 instances the rounded LP overloads an agent and the capacity
    shares' greedy alone does too (the start needs its repair); with it the start keeps
    every capacity (the referee's word)."""
    inst = tight(10, 80, seed)
    _, x_lp, _ = lp_relaxation(inst, "min", True)
    s = timed_search(inst, seed)
    start = s.start(x_lp)
    s.incumbent = start.copy()
    assert not verify_gap(inst, start).ok
    share = inst.weight / inst.capacity[:, None]
    greedy = gap.search.reduced_cost_greedy(share, inst.weight, inst.capacity, np.zeros(10))
    assert not verify_gap(inst, greedy).ok
    assert s.fallback(start, repair=True)
    assert verify_gap(inst, s.incumbent, claimed=s.best_obj).ok


@pytest.mark.parametrize("kind,m,n,seed", [("c", 5, 40, 1), ("d", 5, 40, 2), ("a", 4, 30, 3)])
def test_untimed_answers_do_not_take_the_start(monkeypatch, kind, m, n, seed):
    """An untimed call never runs the start: the repair is never called, and the answer
    (assignment, objective, bound, iterations) equals the one with the start switched
    off."""
    inst = generate_gap(kind, m, n, seed=seed)
    on = solve_gap(inst, "heuristic", seed=seed)
    monkeypatch.setattr(gap.search, "_FEASIBLE_FIRST", False)
    off = solve_gap(inst, "heuristic", seed=seed)
    monkeypatch.setattr(gap.search, "_FEASIBLE_FIRST", True)

    def never(self, *args, **kwargs):
        raise AssertionError("the repair ran on an untimed call")

    monkeypatch.setattr(gap.search._Search, "repair", never)
    again = solve_gap(inst, "heuristic", seed=seed)
    for r in (on, again):
        assert np.array_equal(r.assignment, off.assignment)
        assert (r.objective, r.bound, r.iterations) == (off.objective, off.bound, off.iterations)
    assert verify_gap(inst, on.assignment, claimed=on.objective).ok


@pytest.mark.parametrize("method", ["heuristic", "portfolio"])
def test_a_limit_that_stops_the_search_after_the_start_still_answers(monkeypatch, method):
    """The bounds' start held until the deadline has passed (the search then runs no tabu
    iteration): on a tight 10 x 80 instance, whose end-of-search fallback alone has no
    feasible assignment, the call answers the start's assignment, checked; with the start
    switched off the same call has none (the test is not vacuous)."""
    inst = tight(10, 80, 0)

    def held(self, out_of_time, group=25):
        while not out_of_time():
            time.sleep(0.005)

    monkeypatch.setattr(RelaxationBounds, "start", held)
    # (the bounds' start may run to the deadline itself: by default it stops at half the
    # time left, h50gap, and the search would then run)
    monkeypatch.setattr(gap.search, "_BOUNDS_START_SHARE", 1.0)
    res = solve_gap(inst, method, time_limit=0.3, seed=0)
    assert res.assignment is not None, res.message
    assert res.status in (("time_limit",) if method == "heuristic" else ("time_limit", "optimal"))
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    if method == "heuristic":
        assert res.iterations["tabu_iterations"] == 0
        monkeypatch.setattr(gap.search, "_FEASIBLE_FIRST", False)
        late = solve_gap(inst, method, time_limit=0.3, seed=0)  # the late fallback's repair
        assert late.assignment is not None, late.message
        assert verify_gap(inst, late.assignment, claimed=late.objective).ok
        monkeypatch.setattr(gap.search_start, "_LATE_REPAIR", False)  # (h59gap) both off: none
        off = solve_gap(inst, method, time_limit=0.3, seed=0)
        assert off.assignment is None


@pytest.mark.parametrize("seed", range(4))
def test_without_the_lp_the_repaired_fallback_is_the_incumbent_not_the_start(monkeypatch, seed):
    """A timed call without the LP (a limit too short for it) whose capacity shares' greedy
    overloads an agent: the repaired fallback is the incumbent (checked), while the tabu
    search still starts from its own start, not from the incumbent (the search stubbed
    out here: the answer is the incumbent's)."""
    inst = tight(10, 80, seed)
    seen = []

    def phase(self, phase_cost, start, until, cap_it, from_best, *args, **kwargs):
        seen.append((start.copy(), from_best))
        return None

    monkeypatch.setattr(gap.search._Search, "phase", phase)
    s = timed_search(inst, seed)
    out = s.run(None, None, None)
    assert s.repaired  # the greedy alone overloads an agent: the repair ran
    assert out.feasible
    assert verify_gap(inst, out.assign, claimed=s.best_obj).ok
    (start, from_best), = seen
    assert not from_best and not verify_gap(inst, start).ok  # the overloaded start as before
