"""Limits of the load-sharing methods: what a limited call answers.

How long the calls take against their limits is measured by ``bench/loadshare/overrun.py``
(the ``gap:D,30,1200,1`` case is this file's instance), not asserted here.
"""

from __future__ import annotations

import pytest

from coalloc.loadshare import generate_gap, solve_gap, verify_gap


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["cpsat", "highs"])
def test_gap_exact_under_a_short_limit_answers_a_verified_assignment(solver):
    # The LP-rounding start and its tabu search alone take seconds here; under a limit the
    # hint gets a quarter of it and the model building is watched, so the call ends with
    # the hint's assignment (or better) and never a proof it could not have had time for.
    inst = generate_gap("D", 30, 1200, seed=1)
    res = solve_gap(inst, "exact", time_limit=0.8, solver=solver)
    assert res.status in ("feasible", "time_limit")
    if res.assignment is not None:
        assert verify_gap(inst, list(res.assignment), claimed=res.objective).ok


@pytest.mark.slow
def test_a_thread_batch_timeout_stops_the_python_dmcf():
    from coalloc.loadshare import Instance
    from coalloc.loadshare.generators import paper_setup
    from tests._timeouts import assert_times_out

    assert_times_out(Instance(paper_setup(5000, seed=1)), "dmcf-gga", backend="numpy")
