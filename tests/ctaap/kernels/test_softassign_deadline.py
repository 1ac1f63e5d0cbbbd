"""The step-1 kernels look at their deadline inside a Q pass and in its set-up (issue 36).

On a 5,000-task Fig. 3 request (25 million links) one Q pass took 0.1-0.3 s under load and
the set-up of its plans (the links' classes, a zero-filled 100 MB buffer) 0.2-0.8 s, both
without a look at the deadline: the anytime search returned up to +0.45 s late. The passes
now look between rows every ``COALLOC_Q_POLL_WORK`` edges, the set-up every as many links.
Judged by errors and arrays only (deadlines in the past, cancel flags, far deadlines),
never by the clock.
"""

import array
import pathlib
import time

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc._shared.interrupt import KernelDeadline
from coalloc.ctaap import _softassign
from coalloc.ctaap._reference import softassign as twin
from coalloc.ctaap._softassign import compute_q, edge_ranks, graduated_assignment
from coalloc.ctaap.model import RankedLinks

HEADER = (pathlib.Path(__file__).resolve().parents[3]
          / "src/_core/include/coalloc/ctaap/softassign_qpass.h")  # fmt: skip


def _deadlines():
    """A deadline long past, a cancelled one (no instant), and one an hour away."""
    past = KernelDeadline(ns=1)
    cancelled = KernelDeadline(-1, array.array("i", [1]))
    far = KernelDeadline(time.monotonic_ns() + 3600 * 10**9, array.array("i", [0]))
    return past, cancelled, far


def _links(n, m, seed, tied=True, density=1.0):
    """A request (CSR of ``b`` and ``b.T``, ranked against ``bhat``) with more links than
    ``Q_POLL_WORK`` when dense: the set-up's and the pass's looks both happen."""
    rng = np.random.default_rng(seed)
    levels = np.array([10.0, 20.0, 30.0, 40.0, 50.0])
    if tied:
        B = levels[rng.integers(0, 5, (n, n))]
        bhat = levels[rng.integers(0, 5, (m, m))]
    else:
        B = rng.uniform(1, 100, (n, n))
        bhat = rng.uniform(1, 200, (m, m))
    B = B * (rng.random((n, n)) < density)
    np.fill_diagonal(B, 0.0)
    S = sp.csr_matrix(B)
    S.eliminate_zeros()
    S.sort_indices()
    T = sp.csr_matrix(B.T)
    T.eliminate_zeros()
    T.sort_indices()
    out = []
    for M, bx in ((S, bhat), (T, np.ascontiguousarray(bhat.T))):
        indptr, indices = M.indptr.astype(np.int64), M.indices.astype(np.int64)
        rank, order = edge_ranks(indptr, indices, M.data.astype(np.float64), bx)
        out.append((indptr, indices, rank, order))
    return out, rng


# (n, m, tied): the class table read in blocks (AVX, tiled), the class table of width 6
# without blocks, a class table of odd width, and the edge-by-edge path (m > 15)
PATHS = [(600, 5, True), (250, 6, True), (250, 8, True), (200, 16, False)]


def test_the_twin_and_the_kernel_share_the_work_between_two_looks():
    """The twin's constant is the header's (one rule, two spellings), and its blocks of
    rows close where the compiled loop looks: before the row that brings the work since
    the last look to ``Q_POLL_WORK``."""
    text = HEADER.read_text()
    assert f"#define COALLOC_Q_POLL_WORK {twin.Q_POLL_WORK}" in text
    rng = np.random.default_rng(1)
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 9000, 60))]).astype(np.int64)
    blocks = twin._row_blocks(indptr)
    assert blocks[0][0] == 0 and blocks[-1][1] == 60
    assert all(a[1] == b[0] for a, b in zip(blocks, blocks[1:]))
    work = 0  # the compiled loop, written out
    looks = []
    for i in range(60):
        work += int(indptr[i + 1] - indptr[i]) + 1
        if work >= twin.Q_POLL_WORK:
            looks.append(i)
            work = 0
    assert [b[0] for b in blocks[1:]] == looks and len(looks) > 5


@pytest.mark.parametrize("n, m, tied", PATHS)
def test_compute_q_stops_on_its_deadline_and_is_unchanged_before_it(n, m, tied):
    """Past or cancelled: TimeoutError from the kernel and from its twin. An hour away:
    the same ``Q`` bit for bit as without a deadline, and the twin's (which is the same
    with or without its blocks of rows)."""
    (out, _), rng = _links(n, m, seed=n + m)
    indptr, indices, rank, order = out
    assert indptr[-1] > twin.Q_POLL_WORK
    X = rng.random((n + 1, m + 1))
    past, cancelled, far = _deadlines()
    for dl in (past, cancelled):
        Q = np.zeros((n, m))
        with pytest.raises(TimeoutError, match="kernel's deadline"):
            compute_q(indptr, indices, rank, order, X, 1.0, -0.5, Q, dl)
        with pytest.raises(TimeoutError, match="kernel's deadline"):
            twin.compute_q_reference(indptr, indices, rank, order, X, 1.0, -0.5, None, dl)
    Q0, Q1 = np.full((n, m), np.nan), np.full((n, m), np.nan)
    compute_q(indptr, indices, rank, order, X, 1.0, -0.5, Q0)
    compute_q(indptr, indices, rank, order, X, 1.0, -0.5, Q1, far)
    np.testing.assert_array_equal(Q0, Q1)
    ref = twin.compute_q_reference(indptr, indices, rank, order, X, 1.0, -0.5, None, far)
    scale = 1.5 * n * m
    np.testing.assert_allclose(Q0, ref, rtol=1e-9, atol=1e-9 * scale)
    # the twin's blocks change nothing: one block (no deadline) against many
    F = np.where(
        np.argsort(order, axis=1)[None, :, :] < rank.reshape(-1, m)[:, :, None], 1.0, -0.5
    )
    whole = np.asarray(twin._row_sum_matrix(indptr, len(indices))
                       @ np.einsum("ejl,el->ej", F, X[indices, :m]))  # fmt: skip
    np.testing.assert_array_equal(twin._q_from_f(indptr, indices, F, X, far), whole)


@pytest.mark.parametrize("level", [0, 2])
def test_every_q_pass_path_stops_on_a_past_deadline(level):
    """The portable passes (level 0) and the AVX ones (tiled or not) alike."""
    before = _softassign._simd_level(level)
    try:
        for n, m, tied in PATHS:
            (out, _), rng = _links(n, m, seed=3 * n + m, tied=tied)
            indptr, indices, rank, order = out
            X = rng.random((n + 1, m + 1))
            past, cancelled, far = _deadlines()
            with pytest.raises(TimeoutError):
                compute_q(indptr, indices, rank, order, X, 0.0, -1.0, np.zeros((n, m)), past)
            Q = np.full((n, m), np.nan)
            compute_q(indptr, indices, rank, order, X, 0.0, -1.0, Q, far)
            assert np.isfinite(Q).all()
    finally:
        _softassign._simd_level(before)


def _ga(n, m, symmetric, seed):
    (out, t_out), rng = _links(n, m, seed=seed)
    if symmetric:
        t_out = out
    ranked = RankedLinks(*out, *t_out)
    compat = np.ones((n, m), dtype=np.uint8)
    capacity = np.full(m, n // m + 1, dtype=np.int64)
    X0 = 1.0 + 1e-3 * rng.random((n + 1, m + 1))
    plan = {"symmetric": symmetric, "f_ok": 1.0, "f_bad": 0.0, "q_scale": float(n * m),
            "beta0": 0.5, "beta_f": 4.0, "beta_r": 2.0, "max_outer": 2, "max_inner": 5,
            "tol_outer": 0.0, "tol_inner": 0.0}  # fmt: skip
    return ranked, compat, capacity, X0, plan


@pytest.mark.parametrize("symmetric", [True, False])
def test_graduated_assignment_stops_in_its_set_up_and_passes(symmetric):
    """Past or cancelled: TimeoutError (kernel and twin), whatever the phase it is met in;
    an hour away: the same ``X`` and counters as without a deadline, and the twin's."""
    ranked, compat, capacity, X0, plan = _ga(300, 5, symmetric, seed=7)
    past, cancelled, far = _deadlines()
    for dl in (past, cancelled):
        X = X0.copy()
        with pytest.raises(TimeoutError, match="kernel's deadline"):
            graduated_assignment(ranked, compat, capacity, X, plan, dl)
        with pytest.raises(TimeoutError, match="kernel's deadline"):
            twin.graduated_assignment_reference(ranked, compat, capacity, X0, plan, dl)
    X1, X2 = X0.copy(), X0.copy()
    c1 = graduated_assignment(ranked, compat, capacity, X1, plan)
    c2 = graduated_assignment(ranked, compat, capacity, X2, plan, far)
    assert c1 == c2 == (4, 8, 40)  # beta 0.5, 1, 2, 4; 2 x 5 iterations each
    np.testing.assert_array_equal(X1, X2)
    X_ref, *c_ref = twin.graduated_assignment_reference(ranked, compat, capacity, X0, plan, far)
    assert tuple(c_ref) == c1
    np.testing.assert_allclose(X1, X_ref, rtol=1e-6, atol=1e-9)


def test_a_cancelled_scope_reaches_the_kernel_in_its_set_up():
    """Inside a cancelled scope the kernel raises the scope's own error (and so does the
    twin), not a bare TimeoutError."""
    from coalloc._shared import interrupt

    ranked, compat, capacity, X0, plan = _ga(250, 5, True, seed=9)
    for kernel in (graduated_assignment, twin.graduated_assignment_reference):
        with interrupt.Scope() as scope:
            scope.cancel(KeyError("stop here"))
            dl = interrupt.kernel_deadline()
            with pytest.raises(KeyError, match="stop here"):
                kernel(ranked, compat, capacity, X0.copy(), plan, dl)
