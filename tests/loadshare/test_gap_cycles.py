"""The GAP heuristic's core cycles (issue 40, ``solve_gap(..., cycles=K)``): the second half
of the search as K cycles of a core phase afresh from the rounded LP, then the search on
every pair from that phase's best."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.tabu import TabuState


@pytest.fixture
def fresh_starts(monkeypatch):
    """Every search (phase) the run sets up: its start, copied."""
    starts = []
    orig = TabuState.fresh.__func__

    def fresh(cls, start, m, rng):
        starts.append(np.array(start, dtype=np.int64))
        return orig(cls, start, m, rng)

    monkeypatch.setattr(TabuState, "fresh", classmethod(fresh))
    return starts


@pytest.mark.parametrize("cycles", [1, 2, 3])
def test_untimed_cycles_take_the_second_half_and_replay(fresh_starts, cycles):
    """Untimed: the core phase (its share of the iterations), the search from the core's
    best, then ``cycles`` pairs of searches; every core phase of a cycle starts from the
    rounded LP, as the first one did; the answer checks out and replays."""
    inst = generate_gap("d", 10, 100, seed=4)
    res = solve_gap(inst, "heuristic", iterations=4000, seed=2, cycles=cycles)
    assert res.iterations["tabu_iterations"] == 4000
    assert res.iterations["core_cycles"] == cycles
    assert res.iterations["core_iterations"] == int(gap.search._CORE_SHARE * 4000)
    assert res.params["cycles"] == cycles
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert len(fresh_starts) == 2 + 2 * cycles
    _, x, _ = gap.bounds.lp_relaxation(inst, "min", True)
    rounded = np.argmax(x, axis=0)
    for c in range(cycles):  # the cycles' core phases: afresh from the rounded LP
        assert np.array_equal(fresh_starts[2 + 2 * c], rounded)
    again = solve_gap(inst, "heuristic", iterations=4000, seed=2, cycles=cycles)
    assert np.array_equal(again.assignment, res.assignment)


def test_no_cycles_is_the_search_of_three_phases(fresh_starts):
    """``cycles=0`` (the default): core, every pair from its best, every pair afresh; the
    params do not record the option (the default's results are as they were)."""
    inst = generate_gap("d", 10, 100, seed=4)
    res = solve_gap(inst, "heuristic", iterations=3000, seed=2)
    assert len(fresh_starts) == 3 and res.iterations["core_cycles"] == 0
    assert "cycles" not in res.params
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok


def test_timed_cycles_run_on_the_clock():
    """Timed (a limit generous enough for the LP even on a loaded machine): the cycles are
    begun (the first of them at half of the search's time) and the answer checks out."""
    inst = generate_gap("d", 8, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=1.0, seed=0, cycles=2)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    if res.status != "optimal":  # a bound that proves the answer ends the search early
        assert res.iterations["core_cycles"] >= 1


def test_without_the_lp_there_is_no_core_and_no_cycle():
    """Without the LP (its share of the limit set to 0) the cycles are not run."""
    inst = generate_gap("d", 5, 40, seed=0)
    old = gap.heuristic._LP_SHARE
    gap.heuristic._LP_SHARE = 0.0
    try:
        res = solve_gap(inst, "heuristic", time_limit=0.3, seed=0, cycles=2)
    finally:
        gap.heuristic._LP_SHARE = old
    assert res.iterations["core_cycles"] == 0
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.sampled_from("abcd"), st.integers(2, 6), st.integers(4, 30), st.integers(0, 999))
def test_the_core_holds_a_kept_assignment_and_grows_with_its_percentile(kind, m, n, seed):
    """``core_costs(..., keep=a)`` prices every pair of ``a`` at its cost; a core cut at a
    higher percentile holds every pair of one cut at a lower one."""
    inst = generate_gap(kind, m, n, seed=seed)
    cost = np.ascontiguousarray(inst.cost, dtype=np.float64)
    _, x, rc = gap.bounds.lp_relaxation(inst, "min", True)
    keep = np.random.default_rng(seed).integers(0, m, n)
    core = gap.search.core_costs(cost, x, rc, True, m, keep=keep)
    if core is None:  # every pair in the core, or nothing positive to cut at
        return
    cols = np.arange(n)
    assert np.array_equal(core[keep, cols], cost[keep, cols])
    lo = gap.search.core_costs(cost, x, rc, True, m, percentile=5.0)
    hi = gap.search.core_costs(cost, x, rc, True, m, percentile=40.0)
    if lo is not None and hi is not None:
        assert np.all((lo == cost) <= (hi == cost))


@pytest.mark.parametrize("bad", [-1, gap.search.MAX_CYCLES + 1, 1.5, "2", True])
def test_cycles_are_checked(bad):
    inst = generate_gap("a", 3, 8, seed=0)
    with pytest.raises((ValueError, TypeError), match="cycles"):
        solve_gap(inst, "heuristic", cycles=bad)
