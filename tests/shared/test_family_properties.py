"""Property tests on hypothesis-drawn models of the collective, testbed and loadshare families.

(The CTAAP and task-mapping families have theirs in ``tests/<family>/test_properties.py``;
every strategy lives in ``tests/strategies.py``.) Each test runs every method of the family
and judges its answer by an independent referee: the family's ``verify``, and where the
family has one, an exact method or brute force.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc.collective as co
import coalloc.loadshare as ls
import coalloc.testbed as tb
from coalloc.testbed.reasons import reason_text
from tests.strategies import (
    collective_instances,
    gap_instances,
    loadshare_problems,
    topology_pairs,
)

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(collective_instances(), st.integers(0, 3))
def test_collective_every_method_is_admissible_and_the_exact_ones_earliest(problem, seed):
    pool, request = problem
    before = copy.deepcopy((pool.times, pool.reserved))
    ref = co.coallocate(pool, request, "brute_force")
    for method in ("scan", "cankar", "exact"):
        res = co.coallocate(pool, request, method, seed=seed)
        if res.start is None:
            assert "{" not in res.message  # a sentence, not a dict
        else:
            assert co.verify(request, pool, res).ok, (method, str(co.verify(request, pool, res)))
            assert ref.start is not None and res.start >= ref.start
        if method != "cankar":  # proven earliest start: the brute force's
            assert res.start == ref.start, method
    # nothing was reserved: the caller's pool is as it was
    assert np.array_equal(pool.times, before[0]) and np.array_equal(pool.reserved, before[1])


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topology_pairs(), st.integers(0, 3))
def test_testbed_every_mapping_passes_verify_and_exact_infeasibility_binds_all(problem, seed):
    top, ptop = problem
    results = {m: tb.assign(top, ptop, m, seed=seed) for m in tb.METHODS if m != "exact"}
    results["exact"] = tb.assign(top, ptop, "exact", seed=seed, time_limit=5)
    for method, r in results.items():
        if r.mapping is None:
            assert r.reason is not None and "{" not in r.message
            assert reason_text(r.reason)
            continue
        report = tb.verify_mapping(top, ptop, r.mapping, r.routes,
                                   claimed=r.interswitch_bandwidth)  # fmt: skip
        assert report.ok, (method, str(report))
    exact = results["exact"]
    if exact.status == "infeasible":  # proven: no method may map it
        assert all(r.mapping is None for r in results.values())
    if exact.status == "optimal":  # nothing crosses fewer switches
        for r in results.values():
            if r.mapping is not None:
                assert r.interswitch_bandwidth >= exact.interswitch_bandwidth - 1e-6


@FAST
@given(loadshare_problems(), st.integers(0, 3))
def test_loadshare_every_placement_is_valid_and_the_exact_one_best(problem, seed):
    results = {m: ls.share(problem, m, seed=seed) for m in ls.METHODS}
    for method, r in results.items():
        report = ls.verify_placement(problem, r.placement, claimed=r.throughput)
        assert report.valid and report.matches, (method, str(report))
        assert r.throughput <= report.bound + 1e-9
    best = results["exact"]
    assert best.status == "optimal"
    for r in results.values():
        assert r.throughput <= best.throughput + 1e-9


@FAST
@given(gap_instances(), st.sampled_from(["min", "max"]), st.booleans())
def test_gap_heuristic_and_exact_are_feasible_and_exact_is_best(instance, sense, assign_all):
    heur = ls.solve_gap(instance, "heuristic", sense=sense, assign_all=assign_all)
    exact = ls.solve_gap(instance, "exact", sense=sense, assign_all=assign_all)
    for r in (heur, exact):
        if r.assignment is not None:
            report = ls.verify_gap(instance, r.assignment, assign_all=assign_all,
                                   claimed=r.objective)  # fmt: skip
            assert report.feasible and report.matches, str(report)
    if exact.status == "infeasible":
        assert heur.assignment is None
    elif heur.assignment is not None:
        assert exact.status == "optimal"
        sign = 1 if sense == "min" else -1
        assert sign * exact.objective <= sign * heur.objective + 1e-9
