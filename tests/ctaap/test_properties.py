"""Properties of every CTAAP method on random valid instances (hypothesis).

The referee is :func:`coalloc.ctaap.verify`, which shares no code with the solvers.
"""

import io

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import ctaap
from coalloc.ctaap.io import instance_from_dict, instance_to_dict
from tests.strategies import build_ctaap, ctaap_arrays, ctaap_instances

FAST = settings(max_examples=40, deadline=None)


def assert_same_instance(a, b):
    (ra, oa), (rb, ob) = a, b
    assert ra.n == rb.n and oa.m == ob.m
    assert sorted(ra.properties) == sorted(rb.properties)
    for name in ra.properties:
        np.testing.assert_array_equal(ra.properties[name], rb.properties[name])
        np.testing.assert_array_equal(oa.properties[name], ob.properties[name])
    np.testing.assert_array_equal(ra.bandwidth.toarray(), rb.bandwidth.toarray())
    assert ra.symmetric == rb.symmetric
    np.testing.assert_array_equal(oa.capacity, ob.capacity)
    np.testing.assert_array_equal(oa.bandwidth, ob.bandwidth)


def _allocated_fit(request, offer, assignment):
    """Every placed task fits its cluster (constraint 3), computed here from the arrays."""
    for i, j in enumerate(assignment.tolist()):
        if j < 0:
            continue
        for name, need in request.properties.items():
            assert need[i] <= offer.properties[name][j]


@pytest.mark.parametrize("method", ["greedy", "ctaap"])
@FAST
@given(inst=ctaap_instances(max_tasks=10), seed=st.integers(0, 2**32 - 1))
def test_heuristics_pass_verify(method, inst, seed):
    request, offer = inst
    result = ctaap.solve(request, offer, method, seed=seed)
    report = ctaap.verify(request, offer, result.assignment)
    assert report.feasible, (report.violations, report.examples)
    assert result.success
    assert report.n_allocated == result.n_allocated == int((result.assignment >= 0).sum())
    # the default bound=True (issue 39): an upper bound, never below the verified count;
    # "optimal" exactly when the allocation meets it
    assert result.bound is not None and result.bound >= report.n_allocated
    meets = report.n_allocated >= result.bound
    assert result.status == ("optimal" if meets else "feasible"), (result.bound, meets)
    assert result.assignment.shape == (request.n,)
    assert result.assignment.min(initial=-1) >= -1
    assert result.assignment.max(initial=-1) < offer.m
    _allocated_fit(request, offer, result.assignment)
    assert result.n_allocated <= min(request.n, offer.total_capacity)


@settings(max_examples=25, deadline=None)
@given(inst=ctaap_instances(max_tasks=5, max_clusters=3))
def test_exact_on_tiny_instances_is_feasible_and_never_worse(inst):
    request, offer = inst
    exact = ctaap.solve(request, offer, "exact", seed=0)
    assert exact.status == "optimal"
    assert ctaap.verify(request, offer, exact.assignment).feasible
    for method in ("greedy", "ctaap"):
        heuristic = ctaap.solve(request, offer, method, seed=0)
        assert heuristic.n_allocated <= exact.n_allocated, method
    assert exact.n_allocated <= ctaap.upper_bound(request, offer)


@FAST
@given(inst=ctaap_instances(max_tasks=10), seed=st.integers(0, 2**31))
def test_same_seed_same_answer(inst, seed):
    first = ctaap.solve(*inst, "ctaap", seed=seed)
    second = ctaap.solve(*inst, "ctaap", seed=seed)
    np.testing.assert_array_equal(first.assignment, second.assignment)
    assert first.n_allocated == second.n_allocated
    assert first.iterations == second.iterations
    np.testing.assert_array_equal(first.weights, second.weights)


def _snapshot(arrays):
    bw = arrays["req_bw"]
    return {
        "req_props": {k: v.copy() for k, v in arrays["req_props"].items()},
        "req_bw": bw.toarray() if sp.issparse(bw) else bw.copy(),
        "off_props": {k: v.copy() for k, v in arrays["off_props"].items()},
        "capacity": arrays["capacity"].copy(),
        "off_bw": arrays["off_bw"].copy(),
    }


def _assert_unchanged(arrays, snap):
    for key in ("req_props", "off_props"):
        for name, value in snap[key].items():
            np.testing.assert_array_equal(arrays[key][name], value)
    bw = arrays["req_bw"]
    np.testing.assert_array_equal(bw.toarray() if sp.issparse(bw) else bw, snap["req_bw"])
    np.testing.assert_array_equal(arrays["capacity"], snap["capacity"])
    np.testing.assert_array_equal(arrays["off_bw"], snap["off_bw"])


@FAST
@given(arrays=ctaap_arrays(max_tasks=8))
def test_models_never_modify_or_alias_the_callers_arrays(arrays):
    snap = _snapshot(arrays)
    request, offer = build_ctaap(arrays)
    for method in ("greedy", "ctaap"):
        ctaap.solve(request, offer, method, seed=1)
    ctaap.verify(request, offer, np.full(request.n, -1))
    _assert_unchanged(arrays, snap)
    # The models hold copies: scribbling on the caller's arrays afterwards changes nothing.
    before = instance_to_dict(request, offer)
    for value in arrays["req_props"].values():
        value += 1000.0
    for value in arrays["off_props"].values():
        value += 1000.0
    arrays["capacity"] += 7
    arrays["off_bw"] += 5.0
    bw = arrays["req_bw"]
    if sp.issparse(bw):
        bw.data += 3.0
    else:
        bw += 3.0
    assert instance_to_dict(request, offer) == before
    # ... and their arrays are read-only.
    with pytest.raises(ValueError):
        offer.capacity[0] = 99
    with pytest.raises(ValueError):
        next(iter(request.properties.values()))[0] = 99.0


@FAST
@given(
    inst=ctaap_instances(max_tasks=10),
    fmt=st.sampled_from(["auto", "dense", "edges"]),
    seed=st.integers(0, 1000),
)
def test_json_round_trip_gives_equal_instances_and_solutions(inst, fmt, seed):
    request, offer = inst
    buf = io.StringIO()
    ctaap.write_instance(buf, request, offer, bandwidth_format=fmt)
    buf.seek(0)
    back = ctaap.read_instance(buf)
    assert_same_instance(inst, back)
    assert_same_instance(inst, instance_from_dict(instance_to_dict(request, offer)))
    a = ctaap.solve(*inst, "ctaap", seed=seed)
    b = ctaap.solve(*back, "ctaap", seed=seed)
    np.testing.assert_array_equal(a.assignment, b.assignment)
    # The result file round-trips too.
    res = io.StringIO()
    ctaap.write_result(res, a, ctaap.verify(*inst, a.assignment))
    res.seek(0)
    data = ctaap.read_result(res)
    np.testing.assert_array_equal(data["assignment"], a.assignment)
    assert data["n_allocated"] == a.n_allocated and data["verify"]["feasible"]


def test_round_trip_through_a_file(tmp_path, ctaap_small):
    path = tmp_path / "again.json"
    ctaap.write_instance(path, *ctaap_small, metadata={"note": "x"})
    assert_same_instance(ctaap_small, ctaap.read_instance(path))


def test_tiny_instance_optimum(ctaap_tiny):
    exact = ctaap_tiny.solve("exact")
    assert exact.n_allocated == 4
    assert exact.assignment[0] == exact.assignment[1] == 0
    assert exact.assignment[2] == exact.assignment[3] == 1
    assert ctaap_tiny.verify(exact).feasible
