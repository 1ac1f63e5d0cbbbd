"""Limits of the load-sharing methods: the GAP exact method's limit counts from the call."""

from __future__ import annotations

import time

import pytest

from coalloc.loadshare import generate_gap, solve_gap, verify_gap


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["cpsat", "highs"])
def test_gap_exact_limit_counts_the_hint_and_the_model(solver):
    # The LP-rounding start and its tabu search alone take seconds here; under a limit the
    # hint gets a quarter of it and the model building is watched.
    inst = generate_gap("D", 30, 1200, seed=1)
    limit = 0.8
    t0 = time.perf_counter()
    res = solve_gap(inst, "exact", time_limit=limit, solver=solver)
    elapsed = time.perf_counter() - t0
    assert elapsed < limit + 1.5, (elapsed, res.message)
    assert res.status in ("feasible", "time_limit")
    if res.assignment is not None:
        assert verify_gap(inst, list(res.assignment), claimed=res.objective).ok


@pytest.mark.slow
def test_a_thread_batch_timeout_stops_the_python_dmcf():
    from coalloc.loadshare import Instance
    from coalloc.loadshare.generators import paper_setup
    from tests._timeouts import assert_times_out

    assert_times_out(Instance(paper_setup(5000, seed=1)), "dmcf-gga", backend="numpy")
