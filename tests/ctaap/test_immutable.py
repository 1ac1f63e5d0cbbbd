"""Issue 15, item 1: a model cannot be changed after validation, and bounds are exact."""

import pickle

import numpy as np
import pytest

from coalloc import Offer, Request, generators, solve, upper_bound, verify


def _models():
    r, o = generators.fig2(3, seed=1)
    return r, o


def _copies(obj):
    return [obj, pickle.loads(pickle.dumps(obj))]


@pytest.mark.parametrize("copy", [0, 1], ids=["fresh", "unpickled"])
def test_request_arrays_cannot_be_written(copy):
    r, _ = _models()
    r = _copies(r)[copy]
    parts = [r.bandwidth.data, r.bandwidth.indices, r.bandwidth.indptr]
    parts += [r.bandwidth_transpose.indices, *r.properties.values()]
    for arr in parts:
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 10**9


@pytest.mark.parametrize("copy", [0, 1], ids=["fresh", "unpickled"])
def test_request_csr_and_attributes_cannot_be_rebound(copy):
    r, o = _models()
    r = _copies(r)[copy]
    before = solve(r, o, seed=3)
    with pytest.raises(AttributeError, match="read-only"):
        r.bandwidth.indices = np.full_like(r.bandwidth.indices, 10**9)
    with pytest.raises(AttributeError, match="immutable"):
        r.bandwidth = None
    with pytest.raises(AttributeError, match="immutable"):
        o.capacity = np.zeros_like(o.capacity)
    with pytest.raises(AttributeError, match="immutable"):
        del r.properties
    after = solve(r, o, seed=3)  # the kernels see exactly the validated model
    assert verify(r, o, after.assignment).feasible
    assert np.array_equal(before.assignment, after.assignment)


def test_offer_arrays_read_only_after_pickling():
    _, o = _models()
    for obj in _copies(o):
        for arr in (obj.capacity, obj.bandwidth, *obj.properties.values()):
            with pytest.raises(ValueError, match="read-only"):
                arr.flat[0] = 1


def test_results_of_operations_on_a_frozen_bandwidth_are_ordinary():
    r, _ = _models()
    sub = r.bandwidth[[0, 1]]
    sub.data[...] = 0.0  # an ordinary array again: the model is not touched
    assert r.bandwidth.data.min() > 0


def test_upper_bound_is_exact_for_huge_capacities():
    r = Request({"cpu": [1, 1, 1]})
    o = Offer({"cpu": [2]}, capacity=[2**32], bandwidth=[[1]])
    assert upper_bound(r, o) == 3
    res = solve(r, o, "exact")
    assert res.status == "optimal"
    assert res.n_allocated == 3
    assert verify(r, o, res.assignment).feasible


@pytest.mark.parametrize("cap", [1e19, 2**63, 2**53 + 2, [2**52, 2**52, 2**52]])
def test_capacities_that_cannot_be_exact_are_refused(cap):
    caps = cap if isinstance(cap, list) else [cap]
    with pytest.raises(ValueError, match="capacity must be at most"):
        Offer({"cpu": [2] * len(caps)}, capacity=caps, bandwidth=np.eye(len(caps)))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"beta_r": 1 + 1e-12}, "annealing steps; at most"),
        ({"beta_r": float("inf")}, r"beta_r must be a finite number in \(1, inf\)"),
        ({"max_inner": 10**9}, r"max_inner must be an integer in \[1, 10000\]"),
        ({"max_outer": 0}, r"max_outer must be an integer in \[1, 10000\]"),
        ({"local_search": 10**12}, r"local_search must be .*an integer in \[0, 10000000\]"),
    ],
)
def test_iteration_parameters_have_upper_limits(params, match):
    r, o = _models()
    with pytest.raises(ValueError, match=match):
        solve(r, o, **params)
