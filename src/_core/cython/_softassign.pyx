# cython: language_level=3
# distutils: language = c++
"""Graduated-assignment (softassign) kernels for step 1 of the CTAAP-Solver.

This is Algorithm 1 of Kravtsov et al. (2008). ``n`` tasks are softly assigned to ``m``
clusters through a matrix ``X`` of shape ``(n + 1, m + 1)``: the real block
``X[:n, :m]``, the slack column ``X[:, m]`` and the slack row ``X[n, :]``.

Edge compatibility: a request edge with bandwidth ``b`` placed on the cluster pair
``(j, l)`` scores ``F = f_ok`` if ``b <= bhat[j, l]`` and ``F = f_bad`` otherwise.
:func:`edge_ranks` turns the request bandwidths into ranks so that
``{l : bhat[j, l] >= data[e]} == order[j, :rank[e, j]]``; :func:`compute_q` then needs
only prefix sums of ``X`` along ``order[j]``, i.e. O(nnz*m + n*m^2) work.

The kernels trust their input (the Python model validates it once); only O(1) shape
checks are done. Plain NumPy twins live in :mod:`coalloc._reference.softassign`.
"""

import numpy as np

from libc.math cimport exp, fabs
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy
from libcpp.algorithm cimport nth_element, sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector


# ---------------------------------------------------------------------------
# C-level building blocks (raw pointers, row-major arrays, no Python objects)
# ---------------------------------------------------------------------------

cdef void _q_table(
    const double* X,          # IN  (n + 1, m + 1) row-major; only X[:n, :m] is read
    Py_ssize_t n,
    Py_ssize_t m,
    const int32_t* order,     # IN  (m, m)
    double f_ok,
    double f_bad,
    double weight,
    double* G,                # OUT (n, m, m + 1)
) noexcept nogil:
    """Per-task score table ``G[k, j, r]`` of one edge ending at task ``k``.

    With ``S[k, j, r] = sum_{q<r} X[k, order[j, q]]`` (mass of ``X[k]`` on the ``r``
    clusters that offer most to cluster ``j``) and ``T = S[k, j, m]``:
    ``G[k, j, r] = weight * (f_ok * S + f_bad * (T - S))``, so an edge ``e = (i, k)``
    adds ``G[k, j, rank[e, j]]`` to ``Q[i, j]``.
    """
    cdef Py_ssize_t k, j, p, mm = m + 1
    cdef const double* Xk
    cdef const int32_t* oj
    cdef double* Gkj
    cdef double acc, tot
    for k in range(n):
        Xk = X + k * mm
        for j in range(m):
            oj = order + j * m
            Gkj = G + (k * m + j) * mm
            acc = 0.0
            Gkj[0] = 0.0
            for p in range(m):
                acc += Xk[oj[p]]
                Gkj[p + 1] = acc
            tot = acc
            for p in range(mm):
                acc = Gkj[p]
                Gkj[p] = weight * (f_ok * acc + f_bad * (tot - acc))


cdef void _q_pass(
    const int64_t* indptr,    # IN  (n + 1,)
    const int64_t* indices,   # IN  (nnz,)
    const int32_t* rank,      # IN  (nnz, m)
    Py_ssize_t n,
    Py_ssize_t m,
    const double* G,          # IN  (n, m, m + 1) table from _q_table
    bint accumulate,          # add to Q instead of overwriting it
    double* Q,                # OUT / INOUT (n, m)
    double* acc,              # scratch (m,)
) noexcept nogil:
    """``Q[i, j] (+)= sum over edges e = (i, k) of G[k, j, rank[e, j]]``.

    The first eight clusters are summed in scalar accumulators (independent add
    chains that stay in registers; the ``m > c`` tests are loop invariant and well
    predicted); clusters ``j >= 8`` take a second, generic sweep over the row.
    """
    cdef Py_ssize_t i, j, mm = m + 1, blk = m * (m + 1)
    cdef int64_t e, e0, e1
    cdef const double* Gk
    cdef const int32_t* re
    cdef double* Qi
    cdef double a0, a1, a2, a3, a4, a5, a6, a7
    for i in range(n):
        e0 = indptr[i]
        e1 = indptr[i + 1]
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for e in range(e0, e1):
            Gk = G + indices[e] * blk
            re = rank + e * m
            a0 += Gk[re[0]]
            if m > 1:
                a1 += Gk[mm + re[1]]
            if m > 2:
                a2 += Gk[2 * mm + re[2]]
            if m > 3:
                a3 += Gk[3 * mm + re[3]]
            if m > 4:
                a4 += Gk[4 * mm + re[4]]
            if m > 5:
                a5 += Gk[5 * mm + re[5]]
            if m > 6:
                a6 += Gk[6 * mm + re[6]]
            if m > 7:
                a7 += Gk[7 * mm + re[7]]
        acc[0] = a0
        if m > 1:
            acc[1] = a1
        if m > 2:
            acc[2] = a2
        if m > 3:
            acc[3] = a3
        if m > 4:
            acc[4] = a4
        if m > 5:
            acc[5] = a5
        if m > 6:
            acc[6] = a6
        if m > 7:
            acc[7] = a7
        if m > 8:
            for j in range(8, m):
                acc[j] = 0.0
            for e in range(e0, e1):
                Gk = G + indices[e] * blk
                re = rank + e * m
                for j in range(8, m):
                    acc[j] += Gk[j * mm + re[j]]
        Qi = Q + i * m
        if accumulate:
            for j in range(m):
                Qi[j] += acc[j]
        else:
            for j in range(m):
                Qi[j] = acc[j]


cdef void _softassign_exp(
    const double* Q,          # IN    (n, m)
    const uint8_t* compat,    # IN    (n, m)
    Py_ssize_t n,
    Py_ssize_t m,
    double beta,
    double* X,                # INOUT (n + 1, m + 1)
) noexcept nogil:
    cdef Py_ssize_t i, j, mm = m + 1
    cdef double mx
    cdef const double* Qi
    cdef const uint8_t* ci
    cdef double* Xi
    for i in range(n):
        Qi = Q + i * m
        ci = compat + i * m
        Xi = X + i * mm
        mx = 0.0
        for j in range(m):
            if ci[j] and Qi[j] > mx:
                mx = Qi[j]
        for j in range(m):
            if ci[j]:
                Xi[j] = exp(beta * (Qi[j] - mx))
            else:
                Xi[j] = 0.0
        Xi[m] = exp(-beta * mx)
    Xi = X + n * mm
    for j in range(m):
        Xi[j] = 1.0
    Xi[m] = 0.0


cdef int _sinkhorn(
    double* X,                # INOUT (n + 1, m + 1)
    Py_ssize_t n,
    Py_ssize_t m,
    const int64_t* capacity,  # IN    (m,)
    int max_iter,
    double tol,
    double* prev,             # scratch ((n + 1) * (m + 1),)
    double* col,              # scratch (n + 1,)
    int* iterations,          # OUT   number of iterations done
) except -1 nogil:
    cdef Py_ssize_t i, j, mm = m + 1, rows = n + 1, size = (n + 1) * (m + 1)
    cdef Py_ssize_t kj
    cdef int it
    cdef double s, denom, diff, v
    cdef double* Xi
    iterations[0] = 0
    for it in range(max_iter):
        memcpy(prev, X, size * sizeof(double))
        # (a) rows i < n over all m + 1 columns (slack row excluded)
        for i in range(n):
            Xi = X + i * mm
            s = 0.0
            for j in range(mm):
                s += Xi[j]
            if s > 0.0:
                s = 1.0 / s
                for j in range(mm):
                    Xi[j] *= s
        # (b) capacity-aware normalisation of columns j < m over all n + 1 rows
        for j in range(m):
            kj = rows + 1 - <Py_ssize_t>capacity[j]
            if kj > rows:
                kj = rows
            denom = 0.0
            if kj > 0:
                for i in range(rows):
                    col[i] = X[i * mm + j]
                if kj < rows:
                    nth_element(col, col + (kj - 1), col + rows)
                for i in range(kj):
                    denom += col[i]
            if denom > 1e-300:
                s = 1.0 / denom
                for i in range(rows):
                    v = X[i * mm + j] * s
                    X[i * mm + j] = v if v < 1.0 else 1.0
            else:
                for i in range(rows):
                    X[i * mm + j] = 1.0 if X[i * mm + j] > 0.0 else 0.0
        iterations[0] = it + 1
        # (c) convergence test
        diff = 0.0
        for i in range(size):
            v = fabs(X[i] - prev[i])
            if v > diff:
                diff = v
        if diff < tol:
            break
    return 0


# ---------------------------------------------------------------------------
# Python-visible kernels
# ---------------------------------------------------------------------------

def edge_ranks(
    const int64_t[::1] indptr,      # IN (n + 1,) CSR row pointer (only used for nnz checks)
    const int64_t[::1] indices,     # IN (nnz,)
    const double[::1] data,         # IN (nnz,) request bandwidth of every stored edge
    const double[:, ::1] bhat,      # IN (m, m) offer bandwidth
):
    """Rank every request edge against every row of the offer matrix.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n + 1,)
        CSR row pointer of the request bandwidth matrix (unused except for its shape;
        kept so the call mirrors the other kernels).
    indices : ndarray of int64, shape (nnz,)
        CSR column indices (unused, see ``indptr``).
    data : ndarray of float64, shape (nnz,)
        Request bandwidth of every stored edge.
    bhat : ndarray of float64, shape (m, m)
        Offer bandwidth between clusters. For the in-edge pass of an asymmetric request
        pass ``bhat.T`` (made C-contiguous) together with the transposed CSR.

    Returns
    -------
    rank : ndarray of int32, shape (nnz, m)
        ``rank[e, j]`` = number of clusters ``l`` with ``bhat[j, l] >= data[e]``.
    order : ndarray of int32, shape (m, m)
        ``order[j]`` = the clusters sorted by ``bhat[j, l]`` descending, ties broken by
        ascending index (a stable sort). Hence
        ``{l : bhat[j, l] >= data[e]} == set(order[j, :rank[e, j]])``.
    """
    cdef Py_ssize_t m = bhat.shape[0]
    cdef Py_ssize_t nnz = data.shape[0]
    if bhat.shape[1] != m:
        raise ValueError("bhat must be square")
    rank_arr = np.empty((nnz, m), dtype=np.int32)
    order_arr = np.empty((m, m), dtype=np.int32)
    cdef int32_t[:, ::1] rank = rank_arr          # OUT
    cdef int32_t[:, ::1] order = order_arr        # OUT
    cdef vector[pair[double, int32_t]] keyed
    cdef vector[double] sorted_vals               # (m, m) bhat rows sorted descending
    cdef Py_ssize_t j, l, e, lo, hi, mid
    cdef double b
    cdef const double* row
    with nogil:
        keyed.resize(m)
        sorted_vals.resize(m * m)
        for j in range(m):
            for l in range(m):
                # ascending (-value, index) == descending value, ties by index
                keyed[l] = pair[double, int32_t](-bhat[j, l], <int32_t>l)
            sort(keyed.begin(), keyed.end())
            for l in range(m):
                order[j, l] = keyed[l].second
                sorted_vals[j * m + l] = bhat[j, keyed[l].second]
        for e in range(nnz):
            b = data[e]
            for j in range(m):
                # number of leading entries of the descending row that are >= b
                row = sorted_vals.data() + j * m
                lo = 0
                hi = m
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if row[mid] >= b:
                        lo = mid + 1
                    else:
                        hi = mid
                rank[e, j] = <int32_t>lo
    return rank_arr, order_arr


def compute_q(
    const int64_t[::1] indptr,      # IN  (n + 1,)
    const int64_t[::1] indices,     # IN  (nnz,)
    const int32_t[:, ::1] rank,     # IN  (nnz, m) from edge_ranks
    const int32_t[:, ::1] order,    # IN  (m, m)   from edge_ranks
    const double[:, ::1] X,         # IN  (n + 1, m + 1)
    double f_ok,
    double f_bad,
    double[:, ::1] Q,               # OUT (n, m)
):
    """Compute the softassign gradient ``Q`` for the current ``X``.

    ``Q[i, j] = sum over stored edges e = (i, k) of sum over l < m of
    X[k, l] * F(data[e], bhat[j, l])`` with ``F = f_ok`` if ``data[e] <= bhat[j, l]``
    and ``f_bad`` otherwise; only real columns ``l < m`` count. The cost is
    O(nnz*m + n*m^2) through prefix sums of ``X[k]`` along ``order[j]``.

    Parameters
    ----------
    indptr, indices : ndarray of int64
        CSR structure of the request bandwidth (out-edges; pass the transposed CSR and
        the ranks computed against ``bhat.T`` for in-edges).
    rank : ndarray of int32, shape (nnz, m)
        Edge ranks from :func:`edge_ranks`.
    order : ndarray of int32, shape (m, m)
        Cluster orders from :func:`edge_ranks`.
    X : ndarray of float64, shape (n + 1, m + 1)
        Current soft assignment.
    f_ok, f_bad : float
        Compatibility scores of a satisfiable / unsatisfiable edge placement.
    Q : ndarray of float64, shape (n, m)
        Output, overwritten.

    Returns
    -------
    None
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t m = order.shape[0]
    if n < 0:
        n = 0
    if (X.shape[0] != n + 1 or X.shape[1] != m + 1 or Q.shape[0] != n
            or Q.shape[1] != m or order.shape[1] != m
            or (rank.shape[0] > 0 and rank.shape[1] != m)):
        raise ValueError("inconsistent shapes")
    cdef vector[double] G
    cdef vector[double] acc
    G.resize(n * m * (m + 1) + 1)
    acc.resize(m + 1)
    if n > 0 and m > 0:
        with nogil:
            _q_table(&X[0, 0], n, m, &order[0, 0], f_ok, f_bad, 1.0, G.data())
            _q_pass(&indptr[0], &indices[0] if indices.shape[0] > 0 else NULL,
                    &rank[0, 0] if rank.shape[0] > 0 else NULL, n, m, G.data(),
                    False, &Q[0, 0], acc.data())


def softassign_exp(
    const double[:, ::1] Q,         # IN    (n, m)
    const uint8_t[:, ::1] compat,   # IN    (n, m) 1 if task i may go to cluster j
    double beta,
    double[:, ::1] X,               # INOUT (n + 1, m + 1)
):
    """Exponentiate the scaled gradient into ``X`` (softassign step).

    For each task ``i < n``: ``mx = max(0, max over compatible j of Q[i, j])``,
    ``X[i, j] = exp(beta * (Q[i, j] - mx))`` for compatible ``j`` (else 0) and
    ``X[i, m] = exp(-beta * mx)``. The slack row becomes ``X[n, :m] = 1``,
    ``X[n, m] = 0``. The shift by ``mx`` avoids overflow; it is undone by the row
    normalisation of :func:`sinkhorn`.

    Parameters
    ----------
    Q : ndarray of float64, shape (n, m)
        Gradient (already divided by the caller's scale).
    compat : ndarray of uint8, shape (n, m)
        Nonzero where task ``i`` may be placed in cluster ``j``.
    beta : float
        Inverse temperature.
    X : ndarray of float64, shape (n + 1, m + 1)
        Output, overwritten.

    Returns
    -------
    None
    """
    cdef Py_ssize_t n = Q.shape[0]
    cdef Py_ssize_t m = X.shape[1] - 1
    if (X.shape[0] != n + 1 or m < 0 or (n > 0 and (Q.shape[1] != m
            or compat.shape[0] != n or compat.shape[1] != m))):
        raise ValueError("inconsistent shapes")
    with nogil:
        _softassign_exp(&Q[0, 0] if n > 0 and m > 0 else NULL,
                        &compat[0, 0] if n > 0 and m > 0 else NULL,
                        n, m, beta, &X[0, 0])


def sinkhorn(
    double[:, ::1] X,               # INOUT (n + 1, m + 1)
    const int64_t[::1] capacity,    # IN    (m,)
    int max_iter,
    double tol,
):
    """Capacity-aware Sinkhorn balancing of ``X`` in place.

    Each iteration (at most ``max_iter``): (a) rows ``i < n`` are divided by their sum
    over all ``m + 1`` columns (rows with zero sum are left alone); (b) every column
    ``j < m`` is divided by ``denom`` = the sum of its ``k_j`` smallest entries over all
    ``n + 1`` rows, ``k_j = min(n + 2 - capacity[j], n + 1)`` (``denom = 0`` if
    ``k_j <= 0``), and clipped at 1; if ``denom <= 1e-300`` the column becomes its
    support indicator. The slack column is not column-normalised, the slack row is not
    row-normalised. (c) stop when ``max |X - X_before| < tol``.

    Parameters
    ----------
    X : ndarray of float64, shape (n + 1, m + 1)
        Input/output.
    capacity : ndarray of int64, shape (m,)
        Number of machines of every cluster.
    max_iter : int
        Maximum number of iterations.
    tol : float
        Convergence threshold on the max-norm change of one iteration.

    Returns
    -------
    int
        Number of iterations done (the converged iteration included).
    """
    cdef Py_ssize_t n = X.shape[0] - 1
    cdef Py_ssize_t m = X.shape[1] - 1
    cdef int iters = 0
    if n < 0 or m < 0 or capacity.shape[0] < m:
        raise ValueError("inconsistent shapes")
    cdef vector[double] prev
    cdef vector[double] col
    prev.resize((n + 1) * (m + 1))
    col.resize(n + 1)
    with nogil:
        _sinkhorn(&X[0, 0], n, m, &capacity[0] if m > 0 else NULL, max_iter, tol,
                  prev.data(), col.data(), &iters)
    return iters


def graduated_assignment(
    const int64_t[::1] indptr,      # IN    (n + 1,)  CSR of b (out-edges)
    const int64_t[::1] indices,     # IN    (nnz,)
    const int32_t[:, ::1] rank,     # IN    (nnz, m)  edge_ranks(.., data, bhat)
    const int32_t[:, ::1] order,    # IN    (m, m)
    const int64_t[::1] t_indptr,    # IN    (n + 1,)  CSR of b.T (in-edges)
    const int64_t[::1] t_indices,   # IN    (nnz,)
    const int32_t[:, ::1] t_rank,   # IN    (nnz, m)  edge_ranks(.., t_data, bhat.T)
    const int32_t[:, ::1] t_order,  # IN    (m, m)
    bint symmetric,                 # IN    True: skip the in-edge pass (t_* ignored)
    const uint8_t[:, ::1] compat,   # IN    (n, m)
    const int64_t[::1] capacity,    # IN    (m,)
    double[:, ::1] X,               # INOUT (n + 1, m + 1) initial value -> result
    double f_ok,
    double f_bad,
    double q_scale,
    double beta0,
    double beta_f,
    double beta_r,
    int max_outer,
    int max_inner,
    double tol_outer,
    double tol_inner,
):
    """Run the whole graduated-assignment loop (Alg. 1, step 1) without the GIL.

    ::

        beta = beta0
        while beta <= beta_f * (1 + 1e-12):
            repeat up to max_outer times:
                prev = X
                Q = compute_q(out-edges)
                if not symmetric: Q = (Q + compute_q(in-edges)) / 2
                Q /= q_scale
                softassign_exp(Q, compat, beta, X)
                sinkhorn(X, capacity, max_inner, tol_inner)
                if max |X - prev| < tol_outer: break
            beta *= beta_r

    Parameters
    ----------
    indptr, indices : ndarray of int64
        CSR structure of the request bandwidth ``b`` (out-edges).
    rank, order : ndarray of int32
        :func:`edge_ranks` of ``b`` against ``bhat``.
    t_indptr, t_indices : ndarray of int64
        CSR structure of ``b.T`` (in-edges). Ignored when ``symmetric``.
    t_rank, t_order : ndarray of int32
        :func:`edge_ranks` of ``b.T`` against ``bhat.T``. Ignored when ``symmetric``.
    symmetric : bool
        Whether ``b`` and ``bhat`` are symmetric (then the in-edge pass equals the
        out-edge pass and is skipped).
    compat : ndarray of uint8, shape (n, m)
        Nonzero where task ``i`` may be placed in cluster ``j``.
    capacity : ndarray of int64, shape (m,)
        Number of machines of every cluster.
    X : ndarray of float64, shape (n + 1, m + 1)
        Input/output: the initial soft assignment on entry, the final one on exit.
    f_ok, f_bad : float
        Edge compatibility scores.
    q_scale : float
        ``Q`` is divided by this (nonzero) number before exponentiation.
    beta0, beta_f, beta_r : float
        Initial and final inverse temperature and growth rate; ``beta0 > 0`` and
        ``beta_r > 1`` are required (checked: otherwise the loop would not end).
    max_outer, max_inner : int
        Iteration limits of the softassign loop and of Sinkhorn.
    tol_outer, tol_inner : float
        Max-norm convergence thresholds of the two loops.

    Returns
    -------
    beta_steps : int
        Number of temperatures visited.
    q_evaluations : int
        Number of ``Q`` evaluations (softassign iterations; one per iteration even
        when an in-edge pass is added).
    sinkhorn_iterations : int
        Total number of Sinkhorn iterations.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t m = order.shape[0]
    if n < 0:
        n = 0
    if not (beta0 > 0.0 and beta_r > 1.0):
        raise ValueError("graduated_assignment needs beta0 > 0 and beta_r > 1")
    if (X.shape[0] != n + 1 or X.shape[1] != m + 1 or order.shape[1] != m
            or capacity.shape[0] < m or compat.shape[0] != n
            or (n > 0 and compat.shape[1] != m)
            or (rank.shape[0] > 0 and rank.shape[1] != m)):
        raise ValueError("inconsistent shapes")
    if not symmetric and (t_indptr.shape[0] != n + 1 or t_order.shape[0] != m
            or t_order.shape[1] != m or (t_rank.shape[0] > 0 and t_rank.shape[1] != m)):
        raise ValueError("inconsistent shapes of the transposed request")

    cdef Py_ssize_t size = (n + 1) * (m + 1)
    cdef vector[double] G, acc, Q, prev, scratch, col
    G.resize(n * m * (m + 1) + 1)
    acc.resize(m + 1)
    Q.resize(n * m + 1)
    prev.resize(size)
    scratch.resize(size)
    col.resize(n + 1)

    cdef long beta_steps = 0, q_evals = 0, sk_total = 0
    cdef int outer, sk_iters = 0
    cdef Py_ssize_t p
    cdef double beta = beta0, limit = beta_f * (1.0 + 1e-12), diff, v
    cdef double w_out, w_in
    cdef double* Xp = &X[0, 0]
    cdef bint has_edges = n > 0 and m > 0
    cdef bint has_t_edges = False
    cdef const int64_t* p_indices = NULL
    cdef const int32_t* p_rank = NULL
    cdef const int64_t* p_tindptr = NULL
    cdef const int64_t* p_tindices = NULL
    cdef const int32_t* p_trank = NULL
    cdef const int32_t* p_order = NULL
    cdef const int32_t* p_torder = NULL
    cdef const uint8_t* p_compat = NULL
    cdef const int64_t* p_cap = NULL
    if indices.shape[0] > 0:
        p_indices = &indices[0]
    if rank.shape[0] > 0:
        p_rank = &rank[0, 0]
    if m > 0:
        p_order = &order[0, 0]
        p_cap = &capacity[0]
    if n > 0 and m > 0:
        p_compat = &compat[0, 0]
    if not symmetric:
        has_t_edges = has_edges
        p_tindptr = &t_indptr[0]
        if t_indices.shape[0] > 0:
            p_tindices = &t_indices[0]
        if t_rank.shape[0] > 0:
            p_trank = &t_rank[0, 0]
        if m > 0:
            p_torder = &t_order[0, 0]
    if symmetric:
        w_out = 1.0 / q_scale
    else:
        w_out = 0.5 / q_scale
    w_in = 0.5 / q_scale

    with nogil:
        while beta <= limit:
            beta_steps += 1
            for outer in range(max_outer):
                memcpy(prev.data(), Xp, size * sizeof(double))
                q_evals += 1
                if has_edges:
                    _q_table(Xp, n, m, p_order, f_ok, f_bad, w_out, G.data())
                    _q_pass(&indptr[0], p_indices, p_rank, n, m, G.data(), False,
                            Q.data(), acc.data())
                    if has_t_edges:
                        _q_table(Xp, n, m, p_torder, f_ok, f_bad, w_in, G.data())
                        _q_pass(p_tindptr, p_tindices, p_trank, n, m, G.data(), True,
                                Q.data(), acc.data())
                else:
                    for p in range(n * m):
                        Q[p] = 0.0
                _softassign_exp(Q.data(), p_compat, n, m, beta, Xp)
                _sinkhorn(Xp, n, m, p_cap, max_inner, tol_inner, scratch.data(),
                          col.data(), &sk_iters)
                sk_total += sk_iters
                diff = 0.0
                for p in range(size):
                    v = fabs(Xp[p] - prev[p])
                    if v > diff:
                        diff = v
                if diff < tol_outer:
                    break
            beta *= beta_r
    return int(beta_steps), int(q_evals), int(sk_total)
