"""The GAP search's path relinking (issue 40): the walk between two assignments, the elite
pool, and a timed search that relinks and still answers a checked assignment; and the
start's feasible fallback when there is no LP."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.relink import ElitePool, path_point


def _penalised(cost, weight, cap, x, alpha):
    """The referee: the cost plus ``alpha`` times the total capacity excess, from scratch."""
    n = x.shape[0]
    load = np.zeros(cost.shape[0], dtype=np.int64)
    for j in range(n):
        load[x[j]] += weight[x[j], j]
    return float(cost[x, np.arange(n)].sum()) + alpha * float(np.maximum(load - cap, 0).sum())


def _draw(m, n, seed):
    rng = np.random.default_rng(seed)
    cost = rng.integers(1, 50, size=(m, n)).astype(np.float64)
    weight = rng.integers(1, 20, size=(m, n)).astype(np.int64)
    cap = rng.integers(n, 6 * n, size=m).astype(np.int64)
    return cost, weight, cap, rng.integers(0, m, size=n), rng.integers(0, m, size=n)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 6), st.integers(1, 30), st.integers(0, 10**6),
       st.floats(0.0, 1.0), st.floats(0.0, 50.0))  # fmt: skip
def test_the_walk_moves_its_share_of_the_differences_toward_the_guide(m, n, seed, share, alpha):
    """After the walk, ``round(share d)`` of the ``d`` differing items hold the guide's
    agent and the others the start's; the start is left as it was; share 1 reaches the
    guide, share 0 stays at the start."""
    cost, weight, cap, a, b = _draw(m, n, seed)
    a0 = a.copy()
    d = int((a != b).sum())
    x = path_point(cost, weight, cap, a, b, alpha, share)
    assert np.array_equal(a, a0)
    assert np.all((x == a) | (x == b))
    assert int((x != a).sum()) == int(round(share * d))
    assert int((x != b).sum()) == d - int(round(share * d))
    assert np.array_equal(path_point(cost, weight, cap, a, b, alpha, 1.0), b)
    assert np.array_equal(path_point(cost, weight, cap, a, b, alpha, 0.0), a)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 5), st.integers(2, 20), st.integers(0, 10**6), st.floats(0.0, 50.0))
def test_each_step_is_the_move_of_least_penalised_cost(m, n, seed, alpha):
    """Step by step, the walk's move is one of least penalised cost among the moves toward
    the guide, the penalised cost recomputed from scratch by the referee."""
    cost, weight, cap, a, b = _draw(m, n, seed)
    d = int((a != b).sum())
    x = a.copy()
    for step in range(1, d + 1):
        nxt = path_point(cost, weight, cap, a, b, alpha, step / d)
        # the walk from a to step k passes through step k - 1: one more move
        moved = np.flatnonzero(nxt != x)
        assert moved.size == 1
        options = []
        for j in np.flatnonzero(x != b):
            y = x.copy()
            y[j] = b[j]
            options.append(_penalised(cost, weight, cap, y, alpha))
        got = _penalised(cost, weight, cap, nxt, alpha)
        assert got <= min(options) + 1e-6 * (1.0 + abs(got))
        x = nxt


def test_the_pool_keeps_the_best_distinct_values():
    """Room first, then only better than the worst; one assignment per cost; best first."""
    pool = ElitePool(3)
    z = np.zeros(4, dtype=np.int64)
    assert pool.offer(10.0, z) and pool.offer(8.0, z + 1) and pool.offer(12.0, z + 2)
    assert not pool.offer(10.0, z + 3)  # a cost already kept
    assert not pool.offer(13.0, z + 3)  # full, and worse than the worst
    assert pool.offer(9.0, z + 3)  # better than the worst (12): it goes
    assert [v for v, _ in pool.members] == [8.0, 9.0, 10.0]
    assert np.array_equal(pool.members[1][1], z + 3)
    rng = np.random.default_rng(0)
    first, second = pool.pair(rng)
    assert not np.array_equal(first, second)
    assert ElitePool(2).pair(rng) is None


def test_a_timed_search_relinks_and_answers_a_checked_assignment(monkeypatch):
    """Asked for (``relink=True``) and with time for it (segments made short, 50
    iterations, and the speed check passed: under a load of 13 the measured speed left
    fewer than one segment and none ran), the search runs
    path-relinking segments; the answer passes the referee and keeps the status rule
    (stopped at the limit: ``time_limit``; a proof first: ``optimal``). Untimed, or not
    asked for (the default), no segment runs; ``result.params`` records the choice."""
    inst = generate_gap("d", 5, 40, seed=3)
    monkeypatch.setattr(gap.search, "_PR_MIN", 50)
    monkeypatch.setattr(gap.search, "_PR_PER_ITEM", 1)
    monkeypatch.setattr(gap.search, "_PR_FEWEST", 1)
    monkeypatch.setattr(gap.search._Search, "relink_fits", lambda self, seconds: True)
    res = solve_gap(inst, "heuristic", time_limit=1.0, seed=1, relink=True)
    untimed = solve_gap(inst, "heuristic", iterations=2000, seed=1, relink=True)
    off = solve_gap(inst, "heuristic", time_limit=0.5, seed=1)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert res.params["relink"] is True and off.params["relink"] is False
    assert res.status in ("time_limit", "optimal")
    if res.status == "time_limit":  # (a proof may end the search before the relinking)
        assert res.iterations["relink_segments"] > 0
    assert untimed.iterations["relink_segments"] == 0  # untimed: the phases as before
    assert off.iterations["relink_segments"] == 0  # the default: off
    assert verify_gap(inst, off.assignment, claimed=off.objective).ok


def test_without_the_speed_for_it_no_relinking(monkeypatch):
    """Asked for, when the measured speed leaves fewer than ``_PR_FEWEST`` segments (the threshold
    raised out of reach), no segment runs and the answer is still checked."""
    inst = generate_gap("d", 5, 40, seed=3)
    monkeypatch.setattr(gap.search, "_PR_FEWEST", 10**12)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=1, relink=True)
    assert res.iterations["relink_segments"] == 0
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.sampled_from("abcd"), st.integers(2, 6), st.integers(4, 40), st.integers(0, 999))
def test_the_no_lp_fallback_is_feasible_and_never_worse(kind, m, n, seed):
    """Without the LP, a start that overloads an agent gets the capacity-share greedy as
    its incumbent when that one keeps every capacity: the referee accepts it and its
    recorded objective; a feasible start is left alone. A whole untimed search without
    the LP (iterations 1) answers the least objective its trajectory recorded (fallback
    or search), the trajectory never rising."""
    inst = generate_gap(kind, m, n, seed=seed)
    call = gap.model.GapCall(inst, "min", True, None, 0, {}, time.perf_counter())
    s = gap.search._Search(call, None, None, None)
    rng = np.random.default_rng(seed)
    start = rng.integers(0, m, size=n).astype(np.int64)
    s.incumbent = start.copy()
    s.fallback(start)
    if verify_gap(inst, start).ok:
        assert not s.feasible and np.array_equal(s.incumbent, start)
    elif s.feasible:
        assert verify_gap(inst, s.incumbent, claimed=s.best_obj).ok
    whole = gap.search._Search(call, None, None, None)
    out = whole.run(1, None, None)
    objs = [r[1] for r in whole.trajectory if r[1] is not None]
    assert all(b <= a for a, b in zip(objs, objs[1:]))
    if objs:
        assert out.feasible
        got = float(inst.cost[out.assign, np.arange(n)].sum())
        assert verify_gap(inst, out.assign, claimed=got).ok
        assert got == min(objs)


@pytest.mark.parametrize("limit", [None, 1000.0])
def test_without_the_lp_the_search_starts_from_a_feasible_fallback(monkeypatch, limit):
    """Without the LP, when the fallback is kept (a feasible incumbent beside an
    overloaded start), the tabu search's first phase starts from it: that phase's state
    is feasible from its first iteration; when it is not kept, the phase starts from the
    start as before. Some drawn instances must take each branch (none vacuous). With a
    time limit far beyond ``_FALLBACK_HORIZON`` times the subgradient start's seconds
    (here none: the start is skipped), the phase starts from the start even when the
    fallback is kept."""
    calls = []
    real_fallback, real_phase = gap.search._Search.fallback, gap.search._Search.phase

    def fallback(self, start, **kwargs):
        kept = real_fallback(self, start, **kwargs)
        calls.append(["fallback", kept, None])
        return kept

    def phase(self, *args, **kwargs):
        state = real_phase(self, *args, **kwargs)
        calls[-1][2] = (args[4], bool(state.feasible))  # (from_best, feasible)
        return state

    monkeypatch.setattr(gap.search._Search, "fallback", fallback)
    monkeypatch.setattr(gap.search._Search, "phase", phase)
    taken = {True: 0, False: 0}
    for seed in range(40):
        inst = generate_gap("ad"[seed % 2], 8, 60, seed=seed)
        call = gap.model.GapCall(inst, "min", True, limit, seed, {}, time.perf_counter())
        s = gap.search._Search(call, None, None, None)
        s.bounds.start = lambda out_of_time, group=25: None  # no steps: the costs' greedy
        calls.clear()
        out = s.run(1, None, None)
        kept, (from_best, feasible) = calls[0][1], calls[0][2]
        taken[kept] += 1
        assert from_best == (kept and limit is None)
        if from_best:
            assert feasible and out.feasible
            assert verify_gap(inst, out.assign, claimed=s.best_obj).ok
    assert taken[True] and taken[False], taken
