"""Plain NumPy twins of :mod:`coalloc.ctaap._softassign` (Alg. 1 of Kravtsov et al. 2008).

Written for clarity, not speed. The twins take the same arguments as the kernels but
return their results instead of filling output arrays:

=================================  ==================================================
kernel                             twin returns
=================================  ==================================================
``edge_ranks``                     ``(rank, order)`` (same as the kernel)
``compute_q(..., Q)``              ``Q``
``softassign_exp(Q, compat, b, X)`` a new ``X``
``sinkhorn(X, ...)``               ``(X_new, iterations)``
``graduated_assignment(.., X, p)`` ``(X_new, beta_steps, q_evaluations, sinkhorn_its)``
=================================  ==================================================

:func:`q_matrix_reference` computes ``Q`` straight from the definition (request
bandwidth and offer matrix, no ranks) and serves as an independent check of both
:func:`edge_ranks_reference` and :func:`compute_q_reference`.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._shared import interrupt

#: Work between two looks at the deadline inside a ``Q`` pass (a row counts its edges + 1),
#: ``COALLOC_Q_POLL_WORK`` of ``coalloc/ctaap/softassign_qpass.h``: the compiled passes
#: look between rows once that much work is done since the last look, and so does the twin.
Q_POLL_WORK = 32768


def _row_sum_matrix(indptr, nnz: int) -> sp.csr_matrix:
    """Sparse ``(n, nnz)`` matrix that sums per-edge rows into per-task rows.

    Parameters
    ----------
    indptr : array_like of int, shape (n + 1,)
        CSR row pointer.
    nnz : int
        Number of stored edges.

    Returns
    -------
    scipy.sparse.csr_matrix
        ``R`` with ``(R @ W)[i] = sum of W[e] over the edges e of row i``.
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    n = len(indptr) - 1
    return sp.csr_matrix((np.ones(nnz), np.arange(nnz, dtype=np.int64), indptr), shape=(n, nnz))


def edge_ranks_reference(
    indptr, indices, data, bhat, deadline=None
) -> tuple[np.ndarray, np.ndarray]:
    """Twin of :func:`coalloc.ctaap._softassign.edge_ranks`.

    Parameters
    ----------
    indptr, indices : array_like
        CSR structure (unused; signature parity).
    data : array_like of float, shape (nnz,)
        Request bandwidth of every stored edge.
    bhat : array_like of float, shape (m, m)
        Offer bandwidth between clusters.
    deadline : KernelDeadline, optional
        The call's deadline (None: the calling thread's), looked at where the kernel
        polls: before the rows are sorted and before the edges are ranked.

    Returns
    -------
    rank : ndarray of int32, shape (nnz, m)
        ``rank[e, j] = #{l : bhat[j, l] >= data[e]}``.
    order : ndarray of int32, shape (m, m)
        ``order[j]`` = clusters sorted by ``bhat[j, l]`` descending, ties by index.

    Raises
    ------
    TimeoutError
        Past the deadline or cancelled, as the kernel.
    """
    if deadline is None:
        deadline = interrupt.kernel_deadline()
    interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
    data = np.asarray(data, dtype=np.float64)
    bhat = np.asarray(bhat, dtype=np.float64)
    order = np.argsort(-bhat, axis=1, kind="stable").astype(np.int32)
    interrupt.check_kernel(deadline)
    rank = (bhat[None, :, :] >= data[:, None, None]).sum(axis=2).astype(np.int32)
    return rank.reshape(len(data), bhat.shape[0]), order.reshape(bhat.shape)


def _row_blocks(indptr) -> list:
    """The rows ``[(i0, i1), ...]`` between two looks at the deadline of a compiled pass:
    a look before row ``i`` once the rows since the last look hold :data:`Q_POLL_WORK`
    (edges + 1 per row)."""
    sizes = np.diff(np.asarray(indptr, dtype=np.int64)) + 1
    blocks, start, work = [], 0, 0
    for i, size in enumerate(sizes.tolist()):
        work += size
        if work >= Q_POLL_WORK:
            blocks.append((start, i))
            start, work = i, 0
    blocks.append((start, len(sizes)))
    return blocks


def _q_from_f(indptr, indices, F, X, deadline=None) -> np.ndarray:
    """``Q[i, j] = sum_e sum_{l<m} X[k_e, l] * F[e, j, l]`` over the edges of row ``i``.

    Parameters
    ----------
    indptr, indices : array_like of int
        CSR structure.
    F : ndarray of float, shape (nnz, m, m)
        Compatibility score of every edge on every cluster pair.
    X : ndarray of float, shape (n + 1, m + 1)
        Soft assignment (only the real block is used).
    deadline : KernelDeadline, optional
        Looked at between blocks of rows (:func:`_row_blocks`), as the compiled passes do;
        None: never.

    Returns
    -------
    ndarray of float64, shape (n, m)

    Raises
    ------
    TimeoutError
        Past ``deadline`` or cancelled, as the kernel.
    """
    X = np.asarray(X, dtype=np.float64)
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    m = X.shape[1] - 1
    n = len(indptr) - 1
    Q = np.zeros((max(n, 0), m))
    for b, (i0, i1) in enumerate(_row_blocks(indptr) if n > 0 else []):
        if b > 0 and deadline is not None:
            interrupt.check_kernel(deadline)  # the compiled pass's look (twin)
        e0, e1 = int(indptr[i0]), int(indptr[i1])
        Xk = X[indices[e0:e1], :m]  # (edges, m): X row of the other end of every edge
        W = np.einsum("ejl,el->ej", F[e0:e1], Xk)  # (edges, m)
        Q[i0:i1] = np.asarray(_row_sum_matrix(indptr[i0 : i1 + 1] - e0, e1 - e0) @ W)
    return Q


def compute_q_reference(indptr, indices, rank, order, X, f_ok, f_bad, Q=None,
                        deadline=None) -> np.ndarray:
    """Twin of :func:`coalloc.ctaap._softassign.compute_q` (brute force over ``e, j, l``).

    ``F[e, j, l] = f_ok`` iff ``l`` is among the first ``rank[e, j]`` entries of
    ``order[j]``, else ``f_bad``.

    Parameters
    ----------
    indptr, indices : array_like of int
        CSR structure.
    rank : array_like of int, shape (nnz, m)
        Edge ranks.
    order : array_like of int, shape (m, m)
        Cluster orders.
    X : array_like of float, shape (n + 1, m + 1)
        Soft assignment.
    f_ok, f_bad : float
        Compatibility scores.
    Q : ignored
        The kernel's output array (the twin returns ``Q``).
    deadline : KernelDeadline, optional
        The call's deadline (None: the calling thread's), looked at where the kernel looks
        (between blocks of rows).

    Returns
    -------
    ndarray of float64, shape (n, m)
        ``Q``.

    Raises
    ------
    TimeoutError
        Past the deadline or cancelled, as the kernel.
    """
    if deadline is None:
        deadline = interrupt.kernel_deadline()
    rank = np.asarray(rank, dtype=np.int64)
    order = np.asarray(order, dtype=np.int64)
    m = order.shape[0]
    pos = np.empty_like(order)  # pos[j, l] = position of l in order[j]
    for j in range(m):
        pos[j, order[j]] = np.arange(m)
    ok = pos[None, :, :] < rank.reshape(-1, m)[:, :, None]  # (nnz, m, m)
    F = np.where(ok, float(f_ok), float(f_bad))
    return _q_from_f(indptr, indices, F, X, deadline)


def q_matrix_reference(indptr, indices, data, bhat, X, f_ok, f_bad) -> np.ndarray:
    """``Q`` straight from the definition ``F = f_ok if data[e] <= bhat[j, l]``.

    Parameters
    ----------
    indptr, indices, data : array_like
        CSR of the request bandwidth.
    bhat : array_like of float, shape (m, m)
        Offer bandwidth (pass ``bhat.T`` with the transposed CSR for in-edges).
    X : array_like of float, shape (n + 1, m + 1)
        Soft assignment.
    f_ok, f_bad : float
        Compatibility scores.

    Returns
    -------
    ndarray of float64, shape (n, m)
    """
    data = np.asarray(data, dtype=np.float64)
    bhat = np.asarray(bhat, dtype=np.float64)
    F = np.where(data[:, None, None] <= bhat[None, :, :], float(f_ok), float(f_bad))
    return _q_from_f(indptr, indices, F, X)


def softassign_exp_reference(Q, compat, beta, X) -> np.ndarray:
    """Twin of :func:`coalloc.ctaap._softassign.softassign_exp`.

    Parameters
    ----------
    Q : array_like of float, shape (n, m)
        Scaled gradient.
    compat : array_like of bool/uint8, shape (n, m)
        Allowed placements.
    beta : float
        Inverse temperature.
    X : array_like, shape (n + 1, m + 1)
        Only its shape is used (the kernel overwrites it).

    Returns
    -------
    ndarray of float64, shape (n + 1, m + 1)
        The new ``X``.
    """
    X = np.asarray(X, dtype=np.float64)
    n, m = X.shape[0] - 1, X.shape[1] - 1
    Q = np.asarray(Q, dtype=np.float64).reshape(n, m)
    compat = np.asarray(compat).reshape(n, m).astype(bool)
    out = np.zeros((n + 1, m + 1))
    for i in range(n):
        mx = max(0.0, Q[i][compat[i]].max()) if compat[i].any() else 0.0
        allowed = compat[i]
        out[i, :m][allowed] = np.exp(beta * (Q[i][allowed] - mx))
        out[i, m] = np.exp(-beta * mx)
    out[n, :m] = 1.0
    out[n, m] = 0.0
    return out


def _sinkhorn_step(X: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """One row + capacity-aware column normalisation (returns a new array).

    Parameters
    ----------
    X : ndarray of float, shape (n + 1, m + 1)
        Soft assignment.
    capacity : ndarray of int, shape (m,)
        Cluster capacities.

    Returns
    -------
    ndarray of float64, shape (n + 1, m + 1)
    """
    X = X.copy()
    n, m = X.shape[0] - 1, X.shape[1] - 1
    s = X[:n].sum(axis=1)
    pos = s > 0
    X[:n][pos] /= s[pos][:, None]
    for j in range(m):
        k = min(n + 2 - int(capacity[j]), n + 1)
        denom = np.sort(X[:, j])[:k].sum() if k > 0 else 0.0
        if denom > 1e-300:
            X[:, j] = np.minimum(1.0, X[:, j] / denom)
        else:
            X[:, j] = (X[:, j] > 0).astype(np.float64)
    return X


def sinkhorn_reference(X, capacity, max_iter, tol, deadline=None) -> tuple[np.ndarray, int]:
    """Twin of :func:`coalloc.ctaap._softassign.sinkhorn`.

    Parameters
    ----------
    X : array_like of float, shape (n + 1, m + 1)
        Soft assignment (not modified).
    capacity : array_like of int, shape (m,)
        Cluster capacities.
    max_iter : int
        Maximum number of iterations.
    tol : float
        Stop once an iteration changes no entry by ``tol`` or more.

    Returns
    -------
    X : ndarray of float64, shape (n + 1, m + 1)
        Balanced matrix.
    iterations : int
        Iterations done (the converged one included).
    """
    X = np.array(X, dtype=np.float64)
    capacity = np.asarray(capacity, dtype=np.int64)
    for it in range(max_iter):
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        new = _sinkhorn_step(X, capacity)
        diff = np.abs(new - X).max()
        X = new
        if diff < tol:
            return X, it + 1
    return X, max(int(max_iter), 0)


def graduated_assignment_reference(
    links, compat, capacity, X, plan, deadline=None
) -> tuple[np.ndarray, int, int, int]:
    """Twin of :func:`coalloc.ctaap._softassign.graduated_assignment`.

    Parameters
    ----------
    links : RankedLinks
        IN: :class:`coalloc.ctaap.model.RankedLinks`, the out-edge CSR structure and its
        :func:`edge_ranks_reference` against ``bhat`` (``indptr``, ``indices``, ``rank``,
        ``order``), and the same of the in-edges against ``bhat.T`` (``t_*``; ignored when
        ``plan["symmetric"]``).
    compat, capacity :
        IN: allowed placements ``(n, m)`` and cluster capacities ``(m,)``.
    X : array_like, shape (n + 1, m + 1)
        IN: initial soft assignment (not modified; the kernel overwrites its ``X``).
    plan : dict
        IN: the loop's scalars, the same dict the kernel takes (its fields are those of
        ``coalloc_ga_plan``, ``src/_core/include/coalloc/ctaap/softassign_plan.h``):
        ``symmetric`` (skip the in-edge pass), ``f_ok``, ``f_bad`` (compatibility
        scores), ``q_scale`` (the divisor of ``Q``), ``beta0``, ``beta_f``, ``beta_r``
        (annealing schedule), ``max_outer``, ``max_inner`` (iteration limits of the
        softassign loop and of Sinkhorn), ``tol_outer``, ``tol_inner`` (convergence
        thresholds).

    Returns
    -------
    X : ndarray of float64, shape (n + 1, m + 1)
        Final soft assignment.
    beta_steps, q_evaluations, sinkhorn_iterations : int
        Counters, as in the kernel.
    """
    indptr, indices, rank, order, t_indptr, t_indices, t_rank, t_order = links
    symmetric = bool(plan["symmetric"])
    f_ok, f_bad, q_scale = float(plan["f_ok"]), float(plan["f_bad"]), float(plan["q_scale"])
    beta0, beta_f, beta_r = float(plan["beta0"]), float(plan["beta_f"]), float(plan["beta_r"])
    max_outer, max_inner = int(plan["max_outer"]), int(plan["max_inner"])
    tol_outer, tol_inner = float(plan["tol_outer"]), float(plan["tol_inner"])
    if not (beta0 > 0 and beta_r > 1):
        raise ValueError("graduated_assignment needs beta0 > 0 and beta_r > 1")
    X = np.array(X, dtype=np.float64)
    m = X.shape[1] - 1

    def f_matrix(rk, od):
        """Score ``F[e, j, l]`` of every edge on every cluster pair from ranks/orders.

        Parameters
        ----------
        rk : array_like of int, shape (nnz, m)
            Edge ranks.
        od : array_like of int, shape (m, m)
            Cluster orders.

        Returns
        -------
        ndarray of float64, shape (nnz, m, m)
        """
        rk = np.asarray(rk, dtype=np.int64).reshape(-1, m)
        od = np.asarray(od, dtype=np.int64).reshape(m, m)
        pos = np.empty_like(od)
        for j in range(m):
            pos[j, od[j]] = np.arange(m)
        return np.where(pos[None, :, :] < rk[:, :, None], float(f_ok), float(f_bad))

    if deadline is None:
        deadline = interrupt.kernel_deadline()
    interrupt.check_kernel(deadline)  # the kernel looks in its set-up (the plans) too
    F_out = f_matrix(rank, order)  # fixed during the whole run
    F_in = None if symmetric else f_matrix(t_rank, t_order)
    beta = float(beta0)
    steps = q_evals = sk_total = 0
    while beta <= beta_f * (1 + 1e-12):
        steps += 1
        for _ in range(max_outer):
            interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
            prev = X.copy()
            q_evals += 1
            Q = _q_from_f(indptr, indices, F_out, X, deadline)  # looks inside, as the kernel
            if not symmetric:
                interrupt.check_kernel(deadline)
                Q = (Q + _q_from_f(t_indptr, t_indices, F_in, X, deadline)) / 2
            Q = Q / q_scale
            X = softassign_exp_reference(Q, compat, beta, X)
            X, its = sinkhorn_reference(X, capacity, max_inner, tol_inner)
            sk_total += its
            if np.abs(X - prev).max() < tol_outer:
                break
        beta *= beta_r
    return X, steps, q_evals, sk_total
