"""The fused step 2-3 kernel against the literal cleanup loop (full recount every round)."""

import numpy as np
import pytest
import scipy.sparse as sp

import coalloc
from coalloc.ctaap._cleanup import match_and_clean
from coalloc.ctaap._reference.cleanup import match_and_clean_reference
from coalloc.ctaap.model import KernelLinks, compatibility


def arrays(req, off, weights, cardinality_first):
    """The kernels' arguments but the output: the links (one record), then the arrays."""
    compat = compatibility(req, off).view(np.uint8)
    return (KernelLinks.of(req), off.bandwidth, weights, compat, off.capacity,
            cardinality_first)  # fmt: skip


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


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
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
        removals, *_ = match_and_clean(*args, assign)
        ref_assign, ref_removals = match_and_clean_reference(*args)
        np.testing.assert_array_equal(assign, ref_assign)
        assert removals == ref_removals
        assert coalloc.verify(req, off, assign).feasible


def test_shape_mismatch_raises():
    req, off = coalloc.generators.fig2(1, n_tasks=6, seed=0)
    args = list(arrays(req, off, np.ones((6, 5)), True))
    with pytest.raises(ValueError, match="inconsistent"):
        match_and_clean(*args, np.empty(5, dtype=np.int64))
    args[2] = np.ones((6, 4))  # the weights
    with pytest.raises(ValueError, match="inconsistent"):
        match_and_clean(*args, np.empty(6, dtype=np.int64))


def test_fill_free_matches_twin_and_keeps_feasibility():
    from coalloc.ctaap._cleanup import fill_free
    from coalloc.ctaap._reference.cleanup import fill_free_reference

    rng = np.random.default_rng(99)
    added_total = 0
    for _ in range(200):
        req, off, weights = random_case(rng)
        args = arrays(req, off, weights, True)
        start = np.empty(req.n, dtype=np.int64)
        match_and_clean(*args, start)
        task_order = rng.permutation(req.n).astype(np.int64)
        cluster_order = np.argsort(rng.random((req.n, off.m)), axis=1).astype(np.int64)
        fill_args = args[:2] + (args[3], args[4], task_order, cluster_order)
        ref, ref_added = fill_free_reference(*fill_args, start)
        got = start.copy()
        added = fill_free(*fill_args, got)
        np.testing.assert_array_equal(got, ref)
        assert added == ref_added == int((got >= 0).sum() - (start >= 0).sum())
        assert np.all(got[start >= 0] == start[start >= 0])  # nothing placed moves
        assert coalloc.verify(req, off, got).feasible
        added_total += added
    assert added_total > 0  # the pass does something on these instances


def test_fill_free_shape_check():
    from coalloc.ctaap._cleanup import fill_free

    req, off = coalloc.generators.fig2(1, n_tasks=4, seed=0)
    args = arrays(req, off, np.ones((4, 5)), True)
    with pytest.raises(ValueError, match="inconsistent"):
        fill_free(*args[:2], args[3], args[4], np.arange(3), np.zeros((4, 5), np.int64),
                  np.full(4, -1, np.int64))  # fmt: skip


@pytest.mark.parametrize(
    "density",
    [0.01, pytest.param(0.08, marks=pytest.mark.slow), pytest.param(0.6, marks=pytest.mark.slow)],
)
@pytest.mark.parametrize("cardinality_first", [True, False])
def test_fused_loop_equals_literal_loop_many_clusters(cardinality_first, density):
    """Larger m and n: many incremental repairs and tournament-tree refreshes per instance.

    Sparse requests change few counts per round (the tree is refreshed along their paths),
    dense ones many (the whole tree is rebuilt); both must keep the literal loop's argmax.
    Symmetric requests on symmetric offers take the one-pass count update.
    """
    rng = np.random.default_rng(4242 + cardinality_first + int(100 * density))
    for _ in range(6):
        n, m = int(rng.integers(80, 200)), int(rng.integers(15, 60))
        dense = rng.integers(1, 100, (n, n)) * (rng.random((n, n)) < density)
        np.fill_diagonal(dense, 0)
        if rng.random() < 0.5:
            dense = np.triu(dense) + np.triu(dense, 1).T
        req = coalloc.Request({"cpu": rng.integers(0, 10, n)}, sp.csr_array(dense.astype(float)))
        bhat = rng.integers(20, 150, (m, m))
        if rng.random() < 0.6:  # symmetric offer: with a symmetric request, one-pass counts
            bhat = np.triu(bhat) + np.triu(bhat, 1).T
        off = coalloc.Offer(
            {"cpu": rng.integers(3, 12, m)},
            capacity=rng.integers(1, max(2, 3 * n // m), m),
            bandwidth=bhat,
        )
        weights = rng.random((req.n, off.m))
        args = arrays(req, off, weights, cardinality_first)
        assign = np.empty(req.n, dtype=np.int64)
        removals, *_ = match_and_clean(*args, assign)
        ref_assign, ref_removals = match_and_clean_reference(*args)
        np.testing.assert_array_equal(assign, ref_assign)
        assert removals == ref_removals and removals > 0
        assert coalloc.verify(req, off, assign).feasible
