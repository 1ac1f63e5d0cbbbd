"""Plain NumPy twins of :mod:`coalloc.ctaap._violations`.

Dense and slow on purpose: the request matrix is rebuilt with :mod:`scipy.sparse`,
the violation matrix is ``V = (B > bhat[a][:, a])`` restricted to stored edges between
allocated tasks, diagonal removed, and ``counts = V.sum(1) + V.sum(0)``.

Unlike the kernels, the twins return their results instead of filling output arrays.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _dense(indptr, indices, data) -> tuple[np.ndarray, np.ndarray]:
    """Densify a square CSR matrix.

    Parameters
    ----------
    indptr, indices, data : array_like
        CSR arrays of an ``n x n`` matrix (canonical: no duplicate entries).

    Returns
    -------
    B : ndarray of float64, shape (n, n)
        The matrix.
    stored : ndarray of bool, shape (n, n)
        True where an entry is stored.
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    n = len(indptr) - 1
    indices = np.asarray(indices, dtype=np.int64)
    data = np.asarray(data, dtype=np.float64)
    B = sp.csr_matrix((data, indices, indptr), shape=(n, n)).toarray()
    stored = (
        sp.csr_matrix(
            (np.ones(len(indices), dtype=np.float64), indices, indptr), shape=(n, n)
        ).toarray()
        > 0
    )
    return B, stored


def violation_matrix_reference(indptr, indices, data, bhat, assign) -> np.ndarray:
    """Boolean matrix of the violated ordered pairs.

    Parameters
    ----------
    indptr, indices, data : array_like
        CSR of the request bandwidth ``b`` (n x n).
    bhat : array_like, shape (m, m)
        Offer bandwidth between clusters.
    assign : array_like of int, shape (n,)
        Cluster of every task, ``-1`` = unallocated.

    Returns
    -------
    ndarray of bool, shape (n, n)
        ``V[i, k]`` is True iff ``(i, k)`` is a stored edge, ``i != k``, both tasks are
        allocated and ``b[i, k] > bhat[assign[i], assign[k]]``.
    """
    B, stored = _dense(indptr, indices, data)
    a = np.asarray(assign, dtype=np.int64)
    bhat = np.asarray(bhat, dtype=np.float64)
    n = len(a)
    alloc = a >= 0
    a_safe = np.where(alloc, a, 0)
    offer = bhat[a_safe][:, a_safe] if n else np.zeros((0, 0))
    V = (B > offer) & stored & alloc[:, None] & alloc[None, :]
    np.fill_diagonal(V, False)
    return V


def violation_counts_reference(indptr, indices, data, bhat, assign) -> tuple[int, np.ndarray]:
    """Twin of :func:`coalloc.ctaap._violations.violation_counts`.

    Parameters
    ----------
    indptr, indices, data : array_like
        CSR of the request bandwidth ``b``.
    bhat : array_like, shape (m, m)
        Offer bandwidth between clusters.
    assign : array_like of int, shape (n,)
        Cluster of every task, ``-1`` = unallocated.

    Returns
    -------
    total : int
        Number of violating ordered pairs.
    counts : ndarray of int64, shape (n,)
        Violations every task takes part in (``V.sum(1) + V.sum(0)``).
    """
    V = violation_matrix_reference(indptr, indices, data, bhat, assign)
    counts = (V.sum(axis=1) + V.sum(axis=0)).astype(np.int64)
    return int(V.sum()), counts


def update_violations_reference(
    links, bhat, assign, task, old_cluster, counts
) -> tuple[int, np.ndarray]:
    """Twin of :func:`coalloc.ctaap._violations.update_violations`.

    Recounts everything for the old assignment (``assign`` with ``assign[task]``
    replaced by ``old_cluster``) and for the new one and applies the difference. The
    transposed CSR (``t_*``) is accepted for signature parity and not used.

    Parameters
    ----------
    links : KernelLinks
        CSR of the request bandwidth ``b`` (``indptr``, ``indices``, ``data``) and of
        ``b.T`` (``t_*``, unused): :class:`coalloc.ctaap.model.KernelLinks`.
    bhat : array_like, shape (m, m)
        Offer bandwidth between clusters.
    assign : array_like of int, shape (n,)
        Assignment after the move.
    task : int
        The task that moved.
    old_cluster : int
        Its cluster before the move (``-1`` = unallocated).
    counts : array_like of int, shape (n,)
        Per-task counts valid for the old assignment (not modified).

    Returns
    -------
    delta : int
        Change of the total number of violating ordered pairs.
    new_counts : ndarray of int64, shape (n,)
        ``counts`` updated to the new assignment.
    """
    new = np.array(assign, dtype=np.int64)
    old = new.copy()
    old[task] = old_cluster
    csr = (links.indptr, links.indices, links.data)
    t_old, c_old = violation_counts_reference(*csr, bhat, old)
    t_new, c_new = violation_counts_reference(*csr, bhat, new)
    return t_new - t_old, np.asarray(counts, dtype=np.int64) + (c_new - c_old)
