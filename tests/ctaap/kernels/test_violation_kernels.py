"""Compiled violation kernels (coalloc.ctaap._violations) against their NumPy twins."""

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc.ctaap._reference.violations import (
    update_violations_reference,
    violation_counts_reference,
    violation_matrix_reference,
)
from coalloc.ctaap._violations import update_violations, violation_counts
from coalloc.ctaap.model import KernelLinks


def _csr(B):
    """CSR arrays (int64, int64, float64) of a dense matrix; stores exactly B > 0."""
    S = sp.csr_matrix(B)
    S.eliminate_zeros()
    S.sort_indices()
    return S.indptr.astype(np.int64), S.indices.astype(np.int64), S.data.astype(np.float64)


def _instance(rng, n, m, density, symmetric):
    """Random request (no self loops) and offer with many ties between b and bhat."""
    levels = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    B = levels[rng.integers(0, len(levels), (n, n))] * (rng.random((n, n)) < density)
    if rng.random() < 0.3:  # some non-tied values too
        B = B * (1 + (rng.random((n, n)) < 0.2) * 0.01)
    if symmetric:
        B = np.triu(B, 1)
        B = B + B.T
    np.fill_diagonal(B, 0.0)
    bhat = levels[rng.integers(0, len(levels), (m, m))]
    if symmetric:
        bhat = np.triu(bhat) + np.triu(bhat, 1).T
    assign = rng.integers(-1, m, n).astype(np.int64)
    return B, np.ascontiguousarray(bhat), assign


def _cases(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(0, 41))
        m = int(rng.integers(1, 8))
        density = float(rng.choice([0.0, 0.05, 0.3, 1.0]))
        symmetric = bool(rng.random() < 0.5)
        yield rng, n, m, density, symmetric


def test_hand_example():
    # 3 tasks; edges 0->1 (b=5), 1->0 (b=5), 1->2 (b=9); clusters: 0 -> 0, 1 -> 1, 2 -> 1
    B = np.array([[0, 5, 0], [5, 0, 9], [0, 0, 0]], dtype=float)
    bhat = np.array([[10.0, 4.0], [6.0, 8.0]])
    assign = np.array([0, 1, 1], dtype=np.int64)
    indptr, indices, data = _csr(B)
    counts = np.full(3, 99, dtype=np.int64)  # garbage: the kernel must zero it
    # 0->1: 5 > bhat[0,1]=4 violated; 1->0: 5 > bhat[1,0]=6 no; 1->2: 9 > bhat[1,1]=8 violated
    total = violation_counts(indptr, indices, data, bhat, assign, counts)
    assert total == 2
    assert counts.tolist() == [1, 2, 1]
    t_ref, c_ref = violation_counts_reference(indptr, indices, data, bhat, assign)
    assert t_ref == 2 and c_ref.tolist() == [1, 2, 1]
    # unallocating task 1 removes both violations
    assign[1] = -1
    T = _csr(B.T)
    delta = update_violations(KernelLinks(indptr, indices, data, *T), bhat, assign, 1, 1, counts)
    assert delta == -2
    assert counts.tolist() == [0, 0, 0]


def test_violation_counts_matches_twin():
    checked = 0
    for rng, n, m, density, symmetric in _cases(300, 1):
        B, bhat, assign = _instance(rng, n, m, density, symmetric)
        indptr, indices, data = _csr(B)
        counts = rng.integers(-5, 5, n).astype(np.int64)
        total = violation_counts(indptr, indices, data, bhat, assign, counts)
        t_ref, c_ref = violation_counts_reference(indptr, indices, data, bhat, assign)
        assert total == t_ref
        np.testing.assert_array_equal(counts, c_ref)
        assert counts.sum() == 2 * total
        checked += total
    assert checked > 0  # the random instances do contain violations


def test_violation_matrix_definition():
    rng = np.random.default_rng(7)
    B, bhat, assign = _instance(rng, 25, 4, 0.4, False)
    V = violation_matrix_reference(*_csr(B), bhat, assign)
    for i in range(25):
        for k in range(25):
            expect = (
                i != k
                and B[i, k] > 0
                and assign[i] >= 0
                and assign[k] >= 0
                and B[i, k] > bhat[assign[i], assign[k]]
            )
            assert V[i, k] == expect


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_update_sequence_keeps_counts_exact():
    for case, (rng, n, m, density, symmetric) in enumerate(_cases(120, 2)):
        if n == 0:
            continue
        B, bhat, assign = _instance(rng, n, m, density, symmetric)
        indptr, indices, data = _csr(B)
        t_indptr, t_indices, t_data = _csr(B.T)
        counts = np.empty(n, dtype=np.int64)
        total = violation_counts(indptr, indices, data, bhat, assign, counts)
        for _ in range(30):
            task = int(rng.integers(0, n))
            old = int(assign[task])
            new = int(rng.integers(-1, m))
            ref_counts = counts.copy()
            assign[task] = new
            links = KernelLinks(indptr, indices, data, t_indptr, t_indices, t_data)
            delta = update_violations(links, bhat, assign, task, old, counts)
            total += delta
            d_ref, c_ref = update_violations_reference(links, bhat, assign, task, old, ref_counts)
            assert delta == d_ref
            np.testing.assert_array_equal(counts, c_ref)
            fresh = np.empty(n, dtype=np.int64)
            fresh_total = violation_counts(indptr, indices, data, bhat, assign, fresh)
            assert total == fresh_total, case
            np.testing.assert_array_equal(counts, fresh)


def test_update_same_cluster_is_noop():
    rng = np.random.default_rng(3)
    B, bhat, assign = _instance(rng, 20, 3, 0.5, False)
    indptr, indices, data = _csr(B)
    T = _csr(B.T)
    counts = np.empty(20, dtype=np.int64)
    violation_counts(indptr, indices, data, bhat, assign, counts)
    before = counts.copy()
    for task in range(20):
        assert (
            update_violations(
                KernelLinks(indptr, indices, data, *T), bhat, assign, task, int(assign[task]),
                counts,
            )  # fmt: skip
            == 0
        )
    np.testing.assert_array_equal(counts, before)


def test_empty_inputs():
    e64 = np.zeros(0, dtype=np.int64)
    ef = np.zeros(0, dtype=np.float64)
    bhat = np.ones((2, 2))
    counts = np.zeros(0, dtype=np.int64)
    assert violation_counts(np.zeros(1, dtype=np.int64), e64, ef, bhat, e64, counts) == 0
    # n > 0 but no edges
    indptr = np.zeros(5, dtype=np.int64)
    counts = np.full(4, 7, dtype=np.int64)
    assign = np.array([0, 1, -1, 1], dtype=np.int64)
    assert violation_counts(indptr, e64, ef, bhat, assign, counts) == 0
    assert counts.tolist() == [0, 0, 0, 0]
    links = KernelLinks(indptr, e64, ef, indptr, e64, ef)
    assert update_violations(links, bhat, assign, 2, 0, counts) == 0
    t_ref, c_ref = violation_counts_reference(indptr, e64, ef, bhat, assign)
    assert t_ref == 0 and c_ref.tolist() == [0, 0, 0, 0]


def test_update_rejects_bad_task():
    indptr = np.zeros(3, dtype=np.int64)
    e64 = np.zeros(0, dtype=np.int64)
    ef = np.zeros(0, dtype=np.float64)
    assign = np.zeros(2, dtype=np.int64)
    with pytest.raises(IndexError):
        update_violations(
            KernelLinks(indptr, e64, ef, indptr, e64, ef),
            np.ones((1, 1)),
            assign,
            2,
            0,
            np.zeros(2, dtype=np.int64),
        )
