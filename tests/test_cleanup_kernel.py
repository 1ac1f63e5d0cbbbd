"""The fused step 2-3 kernel against the literal cleanup loop (full recount every round)."""

import numpy as np
import pytest
import scipy.sparse as sp

import coalloc
from coalloc._cleanup import match_and_clean
from coalloc._reference.cleanup import match_and_clean_reference
from coalloc.model import compatibility


def arrays(req, off, weights, cardinality_first):
    B, BT = req.bandwidth, req.bandwidth_transpose
    compat = compatibility(req, off).view(np.uint8)
    return (
        B.indptr, B.indices, B.data, BT.indptr, BT.indices, BT.data,
        off.bandwidth, weights, compat, off.capacity, cardinality_first,
    )  # fmt: skip


def random_case(rng):
    n, m = int(rng.integers(0, 45)), int(rng.integers(1, 7))
    dense = rng.integers(1, 40, (n, n)) * (rng.random((n, n)) < rng.uniform(0.05, 1.0))
    np.fill_diagonal(dense, 0)
    if rng.random() < 0.5:
        dense = np.triu(dense) + np.triu(dense, 1).T
    req = coalloc.Request({"cpu": rng.integers(0, 10, n)}, sp.csr_array(dense.astype(float)))
    off = coalloc.Offer(
        {"cpu": rng.integers(0, 12, m)},
        capacity=rng.integers(0, max(2, n // 2), m),
        bandwidth=rng.integers(0, 50, (m, m)),
    )
    weights = rng.random((n, m)) * (rng.random((n, m)) < 0.9)  # some exact zeros
    if rng.random() < 0.3:
        weights = np.round(weights, 1)  # many ties
    return req, off, weights


@pytest.mark.parametrize("cardinality_first", [True, False])
def test_fused_loop_equals_literal_loop(cardinality_first):
    rng = np.random.default_rng(2024 + cardinality_first)
    for _ in range(250):
        req, off, weights = random_case(rng)
        args = arrays(req, off, weights, cardinality_first)
        assign = np.full(req.n, -7, dtype=np.int64)
        removals, *_ = match_and_clean(*args, assign)
        ref_assign, ref_removals = match_and_clean_reference(*args)
        np.testing.assert_array_equal(assign, ref_assign)
        assert removals == ref_removals
        assert coalloc.verify(req, off, assign).feasible


def test_fused_loop_on_paper_instances():
    for seed in range(20):
        req, off = coalloc.generators.fig2(1 + seed % 5, seed=seed)
        w = np.random.default_rng(seed).random((req.n, off.m))
        args = arrays(req, off, w, True)
        assign = np.empty(req.n, dtype=np.int64)
        removals, aug, cyc, t_match, t_count = match_and_clean(*args, assign)
        ref_assign, ref_removals = match_and_clean_reference(*args)
        np.testing.assert_array_equal(assign, ref_assign)
        assert removals == ref_removals and aug >= 0 and cyc >= 0
        assert t_match >= 0 and t_count >= 0


def test_shape_mismatch_raises():
    req, off = coalloc.generators.fig2(1, n_tasks=6, seed=0)
    args = list(arrays(req, off, np.ones((6, 5)), True))
    with pytest.raises(ValueError, match="inconsistent"):
        match_and_clean(*args, np.empty(5, dtype=np.int64))
    args[7] = np.ones((6, 4))
    with pytest.raises(ValueError, match="inconsistent"):
        match_and_clean(*args, np.empty(6, dtype=np.int64))
