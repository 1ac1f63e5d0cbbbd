"""Compiled softassign kernels (coalloc.ctaap._softassign) against their NumPy twins."""

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc.ctaap._reference.softassign import (
    compute_q_reference,
    edge_ranks_reference,
    graduated_assignment_reference,
    q_matrix_reference,
    sinkhorn_reference,
    softassign_exp_reference,
)
from coalloc.ctaap._softassign import (
    compute_q,
    edge_ranks,
    graduated_assignment,
    sinkhorn,
    softassign_exp,
)
from coalloc.ctaap.model import RankedLinks

RTOL = 1e-9


def _csr(B):
    """CSR arrays (int64, int64, float64) storing exactly the entries B > 0."""
    S = sp.csr_matrix(B)
    S.eliminate_zeros()
    S.sort_indices()
    return S.indptr.astype(np.int64), S.indices.astype(np.int64), S.data.astype(np.float64)


def _instance(rng, n, m, density, symmetric, tied=True):
    """Random request b (no self loops) and offer bhat; ``tied`` draws both from a few
    levels so that b == bhat and equal bhat entries occur often."""
    if tied:
        levels = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
        B = levels[rng.integers(0, 5, (n, n))]
        bhat = levels[rng.integers(0, 5, (m, m))]
    else:
        B = rng.uniform(1, 100, (n, n))
        bhat = rng.uniform(1, 200, (m, m))
    B = B * (rng.random((n, n)) < density)
    if symmetric:
        B = np.triu(B, 1)
        B = B + B.T
        bhat = np.triu(bhat) + np.triu(bhat, 1).T
    np.fill_diagonal(B, 0.0)
    return B, np.ascontiguousarray(bhat)


def _cases(count, seed, n_max=40, m_max=7):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(0, n_max + 1))
        m = int(rng.integers(1, m_max + 1))
        density = float(rng.choice([0.0, 0.1, 0.4, 1.0]))
        symmetric = bool(rng.random() < 0.5)
        tied = bool(rng.random() < 0.6)
        yield rng, n, m, density, symmetric, tied


def _problem(rng, n, m, density, symmetric, tied):
    """Everything graduated_assignment needs: CSR + ranks of b and of b.T."""
    B, bhat = _instance(rng, n, m, density, symmetric, tied)
    indptr, indices, data = _csr(B)
    t_indptr, t_indices, t_data = _csr(B.T)
    rank, order = edge_ranks(indptr, indices, data, bhat)
    t_rank, t_order = edge_ranks(t_indptr, t_indices, t_data, np.ascontiguousarray(bhat.T))
    compat = (rng.random((n, m)) < rng.choice([0.5, 0.75, 1.0])).astype(np.uint8)
    capacity = rng.integers(0, n + 4, m).astype(np.int64)
    return dict(
        B=B,
        bhat=bhat,
        indptr=indptr,
        indices=indices,
        data=data,
        t_indptr=t_indptr,
        t_indices=t_indices,
        t_data=t_data,
        rank=rank,
        order=order,
        t_rank=t_rank,
        t_order=t_order,
        compat=compat,
        capacity=capacity,
    )


def _assert_close(a, b, rtol=RTOL, scale=None):
    scale = max(1.0, float(np.abs(b).max(initial=0.0))) if scale is None else scale
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


# --------------------------------------------------------------------------- edge_ranks


def test_edge_ranks_matches_twin_and_definition():
    for rng, n, m, density, symmetric, tied in _cases(150, 10):
        B, bhat = _instance(rng, n, m, density, symmetric, tied)
        indptr, indices, data = _csr(B)
        rank, order = edge_ranks(indptr, indices, data, bhat)
        r_ref, o_ref = edge_ranks_reference(indptr, indices, data, bhat)
        assert rank.dtype == np.int32 and order.dtype == np.int32
        assert rank.shape == (len(data), m) and order.shape == (m, m)
        np.testing.assert_array_equal(rank, r_ref)
        np.testing.assert_array_equal(order, o_ref)
        for j in range(m):
            assert sorted(order[j]) == list(range(m))
            assert np.all(np.diff(bhat[j, order[j]]) <= 0)
        for e in range(min(len(data), 30)):
            for j in range(m):
                assert set(order[j, : rank[e, j]]) == set(np.flatnonzero(bhat[j] >= data[e]))


def test_edge_ranks_ties_are_stable():
    bhat = np.array(
        [[5.0, 7.0, 5.0, 7.0], [1.0, 1.0, 1.0, 1.0], [0.0, 3.0, 2.0, 1.0], [2.0, 2.0, 9.0, 2.0]]
    )
    data = np.array([7.0, 5.0, 6.0, 10.0, 0.5])
    rank, order = edge_ranks(
        np.array([0, 5], dtype=np.int64), np.zeros(5, dtype=np.int64), data, bhat
    )
    assert order.tolist() == [[1, 3, 0, 2], [0, 1, 2, 3], [1, 2, 3, 0], [2, 0, 1, 3]]
    assert rank[:, 0].tolist() == [2, 4, 2, 0, 4]
    assert rank[:, 1].tolist() == [0, 0, 0, 0, 4]


def _deadlines():
    """A deadline long past, a cancelled one (no instant), and one far away (an hour)."""
    import array
    import time

    from coalloc._shared.interrupt import KernelDeadline

    past = KernelDeadline(ns=1)  # 1 ns after the clock's origin
    cancelled = KernelDeadline(-1, array.array("i", [1]))
    far = KernelDeadline(time.monotonic_ns() + 3600 * 10**9, array.array("i", [0]))
    return past, cancelled, far


@pytest.mark.parametrize("tied", [True, False])  # few distinct offer values (table) or many
@pytest.mark.parametrize("kernel", [edge_ranks, edge_ranks_reference], ids=["compiled", "twin"])
def test_edge_ranks_stops_on_its_deadline(kernel, tied):
    """The kernel (and its twin) takes the call's deadline: past it or cancelled, it raises
    TimeoutError (no scope: the kernel's own) instead of returning ranks; with a far
    deadline it returns what it returns without one (issue 36: the unpolled step of the
    CTAAP default at T = 0.05 s)."""
    rng = np.random.default_rng(3)
    B, bhat = _instance(rng, 80, 6, 1.0, False, tied)
    indptr, indices, data = _csr(B)
    past, cancelled, far = _deadlines()
    for dl in (past, cancelled):
        with pytest.raises(TimeoutError, match="kernel's deadline"):
            kernel(indptr, indices, data, bhat, dl)
    rank, order = kernel(indptr, indices, data, bhat, far)
    r_ref, o_ref = edge_ranks_reference(indptr, indices, data, bhat)
    np.testing.assert_array_equal(rank, r_ref)
    np.testing.assert_array_equal(order, o_ref)


def test_edge_ranks_raises_the_scopes_error():
    """Inside a cancelled scope the kernel, given the scope's deadline, raises the error the
    scope was cancelled with (the compiled kernel and its twin alike)."""
    from coalloc._shared import interrupt

    rng = np.random.default_rng(4)
    B, bhat = _instance(rng, 30, 4, 1.0, True)
    indptr, indices, data = _csr(B)
    for kernel in (edge_ranks, edge_ranks_reference):
        with interrupt.Scope() as scope:
            scope.cancel(KeyError("stop here"))
            dl = interrupt.kernel_deadline()
            with pytest.raises(KeyError, match="stop here"):
                kernel(indptr, indices, data, bhat, dl)


# ---------------------------------------------------------------------------- compute_q


def test_compute_q_hand_example():
    # tasks 0 -> 1 with b = 5; clusters j, l in {0, 1}; bhat[0] = [9, 1], bhat[1] = [4, 6]
    B = np.array([[0.0, 5.0], [0.0, 0.0]])
    bhat = np.array([[9.0, 1.0], [4.0, 6.0]])
    X = np.array([[0.1, 0.2, 0.7], [0.3, 0.6, 0.1], [1.0, 1.0, 0.0]])
    f_ok, f_bad = 2.0, -1.0
    # Q[0, 0] = X[1,0]*F(5<=9) + X[1,1]*F(5<=1) = 0.3*2 - 0.6 = 0.0
    # Q[0, 1] = X[1,0]*F(5<=4) + X[1,1]*F(5<=6) = -0.3 + 1.2 = 0.9 ; task 1 has no edges
    expect = np.array([[0.0, 0.9], [0.0, 0.0]])
    indptr, indices, data = _csr(B)
    rank, order = edge_ranks(indptr, indices, data, bhat)
    Q = np.full((2, 2), np.nan)
    compute_q(indptr, indices, rank, order, X, f_ok, f_bad, Q)
    np.testing.assert_allclose(Q, expect, atol=1e-15)
    np.testing.assert_allclose(
        q_matrix_reference(indptr, indices, data, bhat, X, f_ok, f_bad), expect, atol=1e-15
    )
    np.testing.assert_allclose(
        compute_q_reference(indptr, indices, rank, order, X, f_ok, f_bad), expect, atol=1e-15
    )


@pytest.mark.parametrize("m_max", [7, 12])  # 12 exercises the j >= 8 path of the kernel
def test_compute_q_matches_twins(m_max):
    for rng, n, m, density, symmetric, tied in _cases(120, 11 + m_max, m_max=m_max):
        B, bhat = _instance(rng, n, m, density, symmetric, tied)
        f_ok, f_bad = float(rng.uniform(-2, 2)), float(rng.uniform(-2, 2))
        X = rng.random((n + 1, m + 1))
        for Bx, bx in ((B, bhat), (B.T, np.ascontiguousarray(bhat.T))):  # out- and in-edges
            indptr, indices, data = _csr(Bx)
            rank, order = edge_ranks(indptr, indices, data, bx)
            Q = np.full((n, m), np.nan)
            compute_q(indptr, indices, rank, order, X, f_ok, f_bad, Q)
            ref = q_matrix_reference(indptr, indices, data, bx, X, f_ok, f_bad)
            scale = (abs(f_ok) + abs(f_bad)) * max(1, n) * m
            _assert_close(Q, ref, scale=scale)
            _assert_close(
                Q, compute_q_reference(indptr, indices, rank, order, X, f_ok, f_bad), scale=scale
            )


def test_compute_q_every_summation_path():
    # dense graphs with few distinct rank rows are summed by classes; sparse graphs,
    # m > 15 and many distinct rank rows (only with hand-made ranks) edge by edge
    rng = np.random.default_rng(12)
    for n, m, density, tied, rank_kind in (
        (60, 5, 1.0, True, "edge_ranks"),
        (60, 5, 1.0, False, "edge_ranks"),
        (60, 6, 1.0, False, "edge_ranks"),
        (60, 8, 1.0, True, "edge_ranks"),
        (60, 3, 1.0, True, "edge_ranks"),
        (60, 4, 0.05, False, "edge_ranks"),
        (30, 16, 1.0, False, "edge_ranks"),
        (60, 5, 1.0, False, "random"),
        (60, 8, 1.0, False, "random"),
    ):
        B, bhat = _instance(rng, n, m, density, False, tied)
        indptr, indices, data = _csr(B)
        rank, order = edge_ranks(indptr, indices, data, bhat)
        if rank_kind == "random":
            rank = rng.integers(0, m + 1, rank.shape).astype(np.int32)
        X = rng.random((n + 1, m + 1))
        for f_ok, f_bad in ((0.0, -1.0), (1.0, 0.0), (0.7, -1.3)):
            Q = np.full((n, m), np.nan)
            compute_q(indptr, indices, rank, order, X, f_ok, f_bad, Q)
            ref = compute_q_reference(indptr, indices, rank, order, X, f_ok, f_bad)
            _assert_close(Q, ref, scale=(abs(f_ok) + abs(f_bad)) * n * m)


def test_compute_q_ignores_slack_column():
    rng = np.random.default_rng(5)
    B, bhat = _instance(rng, 12, 3, 0.5, False)
    indptr, indices, data = _csr(B)
    rank, order = edge_ranks(indptr, indices, data, bhat)
    X = rng.random((13, 4))
    Q1, Q2 = np.empty((12, 3)), np.empty((12, 3))
    compute_q(indptr, indices, rank, order, X, 1.0, -1.0, Q1)
    X[:, 3] = 1e6
    X[12, :] = 1e6
    compute_q(indptr, indices, rank, order, X, 1.0, -1.0, Q2)
    np.testing.assert_array_equal(Q1, Q2)


# ----------------------------------------------------------------------- softassign_exp


def test_softassign_exp_matches_twin():
    for rng, n, m, _, _, _ in _cases(150, 20):
        Q = rng.normal(0, rng.choice([0.1, 1.0, 100.0]), (n, m))
        compat = (rng.random((n, m)) < rng.choice([0.0, 0.5, 1.0])).astype(np.uint8)
        beta = float(rng.choice([0.5, 1.0, 10.0]))
        X = np.full((n + 1, m + 1), np.nan)
        softassign_exp(Q, compat, beta, X)
        ref = softassign_exp_reference(Q, compat, beta, X)
        _assert_close(X, ref)
        assert np.all(X[:n, :m][compat == 0] == 0)
        assert np.all(X[n, :m] == 1) and X[n, m] == 0


def test_softassign_exp_no_overflow():
    rng = np.random.default_rng(21)
    n, m = 30, 5
    Q = rng.uniform(-1e4, 1e4, (n, m))
    compat = np.ones((n, m), dtype=np.uint8)
    X = np.empty((n + 1, m + 1))
    softassign_exp(Q, compat, 10.0, X)
    assert np.all(np.isfinite(X)) and X.max() <= 1.0 and X.min() >= 0.0
    sinkhorn(X, np.full(m, 8, dtype=np.int64), 30, 1e-4)
    assert np.all(np.isfinite(X)) and X.min() >= 0.0 and X.max() <= 1.0


# ----------------------------------------------------------------------------- sinkhorn


def test_sinkhorn_hand_example():
    # n = 2, m = 1, capacity 1: k = n + 2 - 1 = 3 -> denom = sum of the whole column
    X = np.array([[1.0, 1.0], [3.0, 1.0], [1.0, 0.0]])
    its = sinkhorn(X, np.array([1], dtype=np.int64), 1, 0.0)
    # rows: [.5, .5], [.75, .25]; column 0 over all 3 rows: denom = .5 + .75 + 1 = 2.25
    expect = np.array([[0.5 / 2.25, 0.5], [0.75 / 2.25, 0.25], [1 / 2.25, 0.0]])
    assert its == 1
    np.testing.assert_allclose(X, expect, rtol=1e-15)
    ref, its_ref = sinkhorn_reference(
        np.array([[1.0, 1.0], [3.0, 1.0], [1.0, 0.0]]), np.array([1]), 1, 0.0
    )
    assert its_ref == 1
    np.testing.assert_allclose(ref, expect, rtol=1e-15)
    # capacity 2: k = 2 -> denom = the two smallest of (.5, .75, 1) = 1.25, clipped at 1
    X = np.array([[1.0, 1.0], [3.0, 1.0], [1.0, 0.0]])
    sinkhorn(X, np.array([2], dtype=np.int64), 1, 0.0)
    np.testing.assert_allclose(X[:, 0], [0.4, 0.6, 0.8], rtol=1e-15)
    # capacity >= n + 2: k <= 0 -> denom 0 -> column becomes its support indicator
    X = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    sinkhorn(X, np.array([4], dtype=np.int64), 1, 0.0)
    np.testing.assert_array_equal(X[:, 0], [1.0, 0.0, 1.0])


def test_sinkhorn_matches_twin_fixed_iterations():
    for rng, n, m, _, _, _ in _cases(150, 30):
        X0 = rng.random((n + 1, m + 1)) * (rng.random((n + 1, m + 1)) < 0.8)
        X0[:n, m] = rng.uniform(0.01, 1, n)  # slack > 0 as after softassign_exp
        X0[n, :m], X0[n, m] = 1.0, 0.0
        capacity = rng.integers(0, n + 4, m).astype(np.int64)
        max_iter = int(rng.integers(0, 40))
        X = X0.copy()
        its = sinkhorn(X, capacity, max_iter, 0.0)
        ref, its_ref = sinkhorn_reference(X0, capacity, max_iter, 0.0)
        assert its == its_ref == max_iter
        _assert_close(X, ref)


def test_sinkhorn_convergence_matches_twin():
    for rng, n, m, _, _, _ in _cases(100, 31):
        X0 = rng.random((n + 1, m + 1)) + 1e-3
        X0[n, :m], X0[n, m] = 1.0, 0.0
        capacity = rng.integers(0, n + 4, m).astype(np.int64)
        tol = float(rng.choice([1e-3, 1e-6]))
        X = X0.copy()
        its = sinkhorn(X, capacity, 200, tol)
        ref, its_ref = sinkhorn_reference(X0, capacity, 200, tol)
        assert 1 <= its <= 200
        if its == its_ref:
            _assert_close(X, ref)
        else:  # a rounding-level difference right at the threshold
            assert abs(its - its_ref) == 1
            np.testing.assert_allclose(X, ref, atol=2 * tol)


@pytest.mark.parametrize("m", [5, 3, 6])
def test_sinkhorn_ties_and_degenerate_columns_match_twin(m):
    # few distinct values (many ties among the largest entries), zero columns and
    # capacities from 0 to n + 3 (support-indicator columns included)
    rng = np.random.default_rng(32 + m)
    for n in (1, 7, 40, 300):
        levels = np.array([0.0, 0.25, 0.5, 1.0, 2.0])
        X0 = levels[rng.integers(0, 5, (n + 1, m + 1))]
        X0[:, rng.integers(0, m)] = 0.0
        X0[n, :m], X0[n, m] = 1.0, 0.0
        capacity = rng.integers(0, n + 4, m).astype(np.int64)
        capacity[0] = 1
        for max_iter in (1, 2, 7, 25):
            X = X0.copy()
            its = sinkhorn(X, capacity, max_iter, 0.0)
            ref, its_ref = sinkhorn_reference(X0, capacity, max_iter, 0.0)
            assert its == its_ref == max_iter
            _assert_close(X, ref)


def test_sinkhorn_large_capacities_match_twin():
    # n = 300, m = 5 as in Fig. 3: large K_j, the remembered largest rows change often
    rng = np.random.default_rng(33)
    n, m = 300, 5
    for _ in range(5):
        X0 = rng.random((n + 1, m + 1)) ** 4
        X0[n, :m], X0[n, m] = 1.0, 0.0
        capacity = rng.integers(1, n // 5 + 1, m).astype(np.int64)
        X = X0.copy()
        its = sinkhorn(X, capacity, 40, 0.0)
        ref, its_ref = sinkhorn_reference(X0, capacity, 40, 0.0)
        assert its == its_ref == 40
        _assert_close(X, ref)


def test_sinkhorn_leaves_zero_rows():
    X = np.zeros((3, 3))
    X[2, :2] = 1.0
    sinkhorn(X, np.array([1, 1], dtype=np.int64), 5, 0.0)
    assert np.all(np.isfinite(X))


# ------------------------------------------------------------------ graduated_assignment


def _ga_args(p):
    """The kernel's arguments before ``X`` and the plan: the ranked links, one record."""
    ranked = RankedLinks(p["indptr"], p["indices"], p["rank"], p["order"], p["t_indptr"],
                         p["t_indices"], p["t_rank"], p["t_order"])  # fmt: skip
    return ranked, p["compat"], p["capacity"]


_PLAN_FIELDS = ("f_ok", "f_bad", "q_scale", "beta0", "beta_f", "beta_r", "max_outer",
                "max_inner", "tol_outer", "tol_inner")  # fmt: skip


def _plan(symmetric, consts):
    """The step-1 plan (coalloc/ctaap/softassign_plan.h) from the ten scalars in order."""
    return {"symmetric": symmetric, **dict(zip(_PLAN_FIELDS, consts, strict=True))}


def test_graduated_assignment_matches_twin_fixed_iterations():
    # tol 0: every loop runs to its limit, so the counters cannot differ by rounding
    for rng, n, m, density, symmetric, tied in _cases(40, 40, n_max=25, m_max=5):
        p = _problem(rng, n, m, density, symmetric, tied)
        f_ok, f_bad = 1.0, float(rng.choice([0.0, -1.0]))
        q_scale = float(max(1, n * m))
        X0 = 1.0 + 1e-3 * rng.random((n + 1, m + 1))
        consts = (f_ok, f_bad, q_scale, 0.5, 10.0, 1.5, 2, 5, 0.0, 0.0)
        X = X0.copy()
        counters = graduated_assignment(*_ga_args(p), X, _plan(symmetric, consts))
        X_ref, *c_ref = graduated_assignment_reference(*_ga_args(p), X0, _plan(symmetric, consts))
        steps = len([b for b in 0.5 * 1.5 ** np.arange(20) if b <= 10.0 * (1 + 1e-12)])
        assert counters == tuple(c_ref) == (steps, 2 * steps, 10 * steps)
        np.testing.assert_allclose(X, X_ref, rtol=1e-6, atol=1e-9)


def test_graduated_assignment_default_constants():
    for rng, n, m, density, symmetric, tied in _cases(6, 41, n_max=30, m_max=6):
        p = _problem(rng, max(n, 2), m, density, symmetric, tied)
        n = len(p["indptr"]) - 1
        X0 = 1.0 + 1e-3 * rng.random((n + 1, m + 1))
        consts = (1.0, 0.0, float(n * m), 0.5, 10.0, 1.075, 4, 30, 1e-4, 1e-4)
        X = X0.copy()
        counters = graduated_assignment(*_ga_args(p), X, _plan(symmetric, consts))
        X_ref, *c_ref = graduated_assignment_reference(*_ga_args(p), X0, _plan(symmetric, consts))
        assert counters == tuple(c_ref)
        assert counters[0] == 42  # 0.5 * 1.075**41 <= 10 < 0.5 * 1.075**42
        np.testing.assert_allclose(X, X_ref, rtol=1e-6, atol=1e-9)
        assert np.all(np.isfinite(X)) and X.min() >= 0 and X[:n, :m].max() <= 1


def test_graduated_assignment_symmetric_equals_explicit_in_pass():
    # for symmetric b and bhat the in-edge pass equals the out-edge pass
    rng = np.random.default_rng(42)
    p = _problem(rng, 20, 4, 0.5, True, True)
    X0 = 1.0 + 1e-3 * rng.random((21, 5))
    consts = (1.0, -0.5, 80.0, 0.5, 10.0, 1.2, 3, 10, 1e-4, 1e-4)
    X1, X2 = X0.copy(), X0.copy()
    graduated_assignment(*_ga_args(p), X1, _plan(True, consts))
    graduated_assignment(*_ga_args(p), X2, _plan(False, consts))
    np.testing.assert_allclose(X1, X2, rtol=1e-9, atol=1e-12)


def test_graduated_assignment_huge_q_stays_finite():
    rng = np.random.default_rng(43)
    n, m = 30, 4
    B = np.triu(rng.uniform(1e3, 1e4, (n, n)), 1)
    B = B + B.T
    bhat = np.full((m, m), 5e3)
    indptr, indices, data = _csr(B)
    rank, order = edge_ranks(indptr, indices, data, bhat)
    compat = np.ones((n, m), dtype=np.uint8)
    capacity = np.full(m, 10, dtype=np.int64)
    X = 1.0 + 1e-3 * rng.random((n + 1, m + 1))
    graduated_assignment(
        RankedLinks(indptr, indices, rank, order, indptr, indices, rank, order),
        compat,
        capacity,
        X,
        _plan(True, (1e4, -1e4, 1.0, 0.5, 10.0, 1.075, 4, 30, 1e-4, 1e-4)),
    )
    assert np.all(np.isfinite(X))
    assert X.min() >= 0.0 and X[:n].max() <= 1.0


def test_graduated_assignment_mixed_summation_paths():
    # out-edges summed by classes, in-edges (hand-made ranks with many distinct rows)
    # edge by edge, through one shared scratch table
    rng = np.random.default_rng(44)
    n, m = 60, 5
    p = _problem(rng, n, m, 1.0, False, False)
    p["t_rank"] = rng.integers(0, m + 1, p["t_rank"].shape).astype(np.int32)
    X0 = 1.0 + 1e-3 * rng.random((n + 1, m + 1))
    consts = (0.0, -1.0, float(n * m), 0.5, 10.0, 1.5, 2, 5, 0.0, 0.0)
    X = X0.copy()
    counters = graduated_assignment(*_ga_args(p), X, _plan(False, consts))
    X_ref, *c_ref = graduated_assignment_reference(*_ga_args(p), X0, _plan(False, consts))
    assert counters == tuple(c_ref)
    np.testing.assert_allclose(X, X_ref, rtol=1e-6, atol=1e-9)


def test_graduated_assignment_rejects_endless_schedule():
    p = _problem(np.random.default_rng(0), 3, 2, 1.0, True, True)
    X = np.ones((4, 3))
    for beta0, beta_r in ((0.5, 1.0), (0.0, 1.1), (-1.0, 1.1)):
        with pytest.raises(ValueError):
            graduated_assignment(
                *_ga_args(p),
                X,
                _plan(True, (1.0, 0.0, 1.0, beta0, 10.0, beta_r, 4, 30, 1e-4, 1e-4)),
            )


# ------------------------------------------------------------------------------ n = 0


def test_empty_problem():
    m = 3
    indptr = np.zeros(1, dtype=np.int64)
    indices = np.zeros(0, dtype=np.int64)
    data = np.zeros(0)
    bhat = np.arange(9.0).reshape(3, 3)
    rank, order = edge_ranks(indptr, indices, data, bhat)
    assert rank.shape == (0, m)
    Q = np.zeros((0, m))
    X = np.full((1, m + 1), 7.0)
    compute_q(indptr, indices, rank, order, X, 1.0, 0.0, Q)
    softassign_exp(Q, np.zeros((0, m), dtype=np.uint8), 2.0, X)
    assert X.tolist() == [[1.0, 1.0, 1.0, 0.0]]
    cap = np.array([0, 1, 5], dtype=np.int64)
    its = sinkhorn(X, cap, 10, 1e-9)
    X_ref, its_ref = sinkhorn_reference(np.array([[1.0, 1.0, 1.0, 0.0]]), cap, 10, 1e-9)
    assert its == its_ref
    np.testing.assert_array_equal(X, X_ref)
    X = np.ones((1, m + 1))
    counters = graduated_assignment(
        RankedLinks(indptr, indices, rank, order, indptr, indices, rank, order),
        np.zeros((0, m), dtype=np.uint8),
        cap,
        X,
        _plan(False, (1.0, 0.0, 1.0, 0.5, 10.0, 1.075, 4, 30, 1e-4, 1e-4)),
    )
    X_ref, *c_ref = graduated_assignment_reference(
        RankedLinks(indptr, indices, rank, order, indptr, indices, rank, order),
        np.zeros((0, m), dtype=np.uint8),
        cap,
        np.ones((1, m + 1)),
        _plan(False, (1.0, 0.0, 1.0, 0.5, 10.0, 1.075, 4, 30, 1e-4, 1e-4)),
    )
    assert counters == tuple(c_ref)
    np.testing.assert_array_equal(X, X_ref)


def test_tasks_without_edges():
    rng = np.random.default_rng(50)
    n, m = 6, 3
    indptr = np.zeros(n + 1, dtype=np.int64)
    indices = np.zeros(0, dtype=np.int64)
    rank, order = edge_ranks(indptr, indices, np.zeros(0), rng.random((m, m)))
    Q = np.full((n, m), np.nan)
    compute_q(indptr, indices, rank, order, rng.random((n + 1, m + 1)), 1.0, -1.0, Q)
    assert np.all(Q == 0)


def test_graduated_assignment_plan_needs_every_field():
    # the plan is converted to the C struct field by field: a missing scalar is refused by
    # name by the kernel and by its twin, instead of being read as garbage
    p = _problem(np.random.default_rng(1), 3, 2, 1.0, True, True)
    full = _plan(True, (1.0, 0.0, 1.0, 0.5, 10.0, 1.075, 4, 30, 1e-4, 1e-4))
    for field in full:
        plan = {k: v for k, v in full.items() if k != field}
        with pytest.raises((TypeError, ValueError, KeyError), match=field):
            graduated_assignment(*_ga_args(p), np.ones((4, 3)), plan)
        with pytest.raises(KeyError, match=field):
            graduated_assignment_reference(*_ga_args(p), np.ones((4, 3)), plan)
