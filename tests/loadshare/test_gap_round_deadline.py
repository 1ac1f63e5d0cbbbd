"""A timed GAP search keeps its limit whatever its rounds were planned to take (h50gap,
issue 36's contract): the tabu kernel gets the search's deadline, so a round planned on a
speed the load no longer gives ends at the limit, not after it; and the subgradient start
leaves the start its time. No clock is raced: a stand-in makes a round far too long (its
iterations take seconds), and the kernel's plan is inspected."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.tabu import TabuKnobs, TabuState

HUGE = 300_000  # iterations of a stand-in round: seconds of work, far past the limit


def test_a_round_planned_far_too_long_ends_at_the_limit(monkeypatch):
    """Every round asks for HUGE iterations (a speed measured before the load rose, in the
    extreme); the call must still end, by the kernel's own stop, with fewer iterations than
    one such round and an answer that verifies. Before h50gap the kernel had no deadline
    and ran the whole round."""
    inst = generate_gap("d", 5, 40, seed=2)
    monkeypatch.setattr(gap.search._Search, "round_size",
                        lambda self, until, cap_it, rate: HUGE)  # fmt: skip
    for method in ("heuristic", "portfolio"):
        res = solve_gap(inst, method, time_limit=0.3, seed=1)
        assert res.has_solution and verify_gap(inst, res.assignment, claimed=res.objective).ok
        assert 0 < res.iterations["tabu_iterations"] < HUGE
        assert res.status in ("time_limit", "optimal")


def test_the_kernel_gets_the_search_deadline_and_untimed_calls_none(monkeypatch):
    """The plan's deadline (CLOCK_MONOTONIC ns) is at most the call's deadline on a timed
    call, and absent (-1) untimed (whose answers depend on the iterations only)."""
    seen = []
    real = gap.tabu._gapls.tabu_search

    def spy(cost, weight, capacity, state, plan):
        if plan.iterations:  # (the set-up call, 0 iterations, needs none)
            seen.append(plan.deadline.ns)
        return real(cost, weight, capacity, state, plan)

    monkeypatch.setattr(gap.tabu._gapls, "tabu_search", spy)
    inst = generate_gap("d", 5, 40, seed=2)
    t0 = time.perf_counter()
    solve_gap(inst, "heuristic", time_limit=0.2, seed=1)
    limit_ns = int((t0 + 0.2) * 1e9) + 10**7  # (the call's own t0 is a little later)
    assert seen and all(0 <= ns <= limit_ns for ns in seen)
    seen.clear()
    solve_gap(inst, "heuristic", iterations=500, seed=1)
    assert seen and all(ns == -1 for ns in seen)


def test_a_round_stopped_by_its_deadline_resumes_exactly():
    """A round whose deadline has passed does nothing and raises nothing; the state then
    goes on exactly as an unstopped one (the kernel writes its state before it stops)."""
    inst = generate_gap("c", 4, 30, seed=5)
    cost = np.ascontiguousarray(inst.cost, dtype=np.float64)
    weight, cap = inst.weight, inst.capacity
    knobs = TabuKnobs.default(inst.n)
    start = np.argmin(cost, axis=0).astype(np.int64)
    a = TabuState.fresh(start, inst.m, np.array([7], dtype=np.uint64))
    b = TabuState.fresh(start, inst.m, np.array([7], dtype=np.uint64))
    for s in (a, b):
        s.run(cost, weight, cap, 0, knobs)
    assert a.run(cost, weight, cap, 300, knobs, until=time.perf_counter() - 1.0) == 0
    assert a.run(cost, weight, cap, 300, knobs) == b.run(cost, weight, cap, 300, knobs) == 300
    assert np.array_equal(a.best, b.best) and a.best_cost == b.best_cost


def test_the_subgradient_start_leaves_the_start_its_time(monkeypatch):
    """A stand-in subgradient group of 0.3 s on a 1 s call: the groups stop at half of the
    time left (two groups, at about 0 and 0.3 s), so the start begins well before the limit;
    before h50gap they ran to the deadline (four groups) and the start after it."""
    inst = generate_gap("d", 5, 40, seed=2)
    monkeypatch.setattr(gap.heuristic, "_LP_SHARE", 0.0)  # no LP: the subgradient start runs
    monkeypatch.setattr(gap.lagrangian, "_LAGR_START", 10**6)  # it would never end itself
    real = gap.lagrangian.RelaxationBounds.subgradient_steps
    groups = []

    def slow(self, k, target):
        groups.append(k)
        time.sleep(0.3)
        return real(self, k, target)

    monkeypatch.setattr(gap.lagrangian.RelaxationBounds, "subgradient_steps", slow)
    res = solve_gap(inst, "heuristic", time_limit=1.0, seed=1)
    assert res.has_solution and verify_gap(inst, res.assignment, claimed=res.objective).ok
    start_groups = [k for k in groups if k == 25]  # (the search's own rounds are of 5)
    assert 1 <= len(start_groups) <= 3


def test_a_bound_round_starts_only_when_twice_its_last_time_is_left():
    """A knapsack or subgradient round between two search rounds starts only when twice
    its last measured seconds are left before the deadline (one started just before it ran
    past the limit under load); untimed, always (unless halted)."""
    now = time.perf_counter()
    timed = SimpleNamespace(deadline=now + 100.0, halted=lambda: False)
    assert gap.search._Search.fits(timed, 1.0)
    assert not gap.search._Search.fits(timed, 60.0)
    untimed = SimpleNamespace(deadline=None, halted=lambda: False)
    assert gap.search._Search.fits(untimed, 1e9)
    halted = SimpleNamespace(deadline=None, halted=lambda: True)
    assert not gap.search._Search.fits(halted, 0.0)
