# cython: language_level=3
# distutils: language = c++
"""Bandwidth-constraint violation counting for step 3 of the CTAAP-Solver.

A request edge ``e = (i, k)`` with bandwidth ``b = data[e]`` (stored in CSR form,
no self loops) *violates* constraint (4) of Kravtsov et al. (2008) when both tasks are
allocated (``assign[i] >= 0`` and ``assign[k] >= 0``) and
``b > bhat[assign[i], assign[k]]``.  Edges are ordered pairs, so an asymmetric request
matrix is handled edge by edge.

The kernels trust their input (the Python model validates it once): index arrays must
be in range, ``assign`` values must be ``-1`` or a valid cluster, ``counts`` must have
length ``n``.  Only O(1) shape checks are done here.  The plain NumPy twins live in
:mod:`coalloc._reference.violations`.
"""

from libc.stdint cimport int64_t

from _violation_core cimport Links, _count_all, _links_of, _task_contribution


def violation_counts(
    const int64_t[::1] indptr,      # IN  (n + 1,) CSR row pointer of b
    const int64_t[::1] indices,     # IN  (nnz,)   CSR column indices of b
    const double[::1] data,         # IN  (nnz,)   CSR values of b (request bandwidth)
    const double[:, ::1] bhat,      # IN  (m, m)   offer bandwidth between clusters
    const int64_t[::1] assign,      # IN  (n,)     cluster of every task, -1 = unallocated
    int64_t[::1] counts,            # OUT (n,)     violations each task takes part in
):
    """Count the violated bandwidth constraints of an allocation.

    For every stored edge ``e = (i, k)`` with ``assign[i] >= 0``, ``assign[k] >= 0``,
    ``k != i`` and ``data[e] > bhat[assign[i], assign[k]]`` the kernel adds one to
    ``counts[i]``, one to ``counts[k]`` and one to the total.

    Parameters
    ----------
    indptr : ndarray of int64, shape (n + 1,)
        CSR row pointer of the request bandwidth matrix ``b``.
    indices : ndarray of int64, shape (nnz,)
        CSR column indices of ``b``.
    data : ndarray of float64, shape (nnz,)
        CSR values of ``b``.
    bhat : ndarray of float64, shape (m, m)
        Offer bandwidth; ``bhat[j, l]`` is available between clusters ``j`` and ``l``.
    assign : ndarray of int64, shape (n,)
        Cluster of every task, or ``-1`` if the task is not allocated.
    counts : ndarray of int64, shape (n,)
        Output. Overwritten (zeroed first) with the number of violating ordered pairs
        each task takes part in (as source or as target).

    Returns
    -------
    int
        Number of violating ordered pairs ``(i, k)``.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t i, k
    cdef int64_t e, ai, ak
    cdef int64_t total = 0
    if n < 0:
        n = 0
    if assign.shape[0] < n or counts.shape[0] < n:
        raise ValueError("assign and counts must have length n = len(indptr) - 1")
    cdef const int64_t* ip = &indptr[0] if indptr.shape[0] else NULL
    cdef const int64_t* ix = &indices[0] if indices.shape[0] else NULL
    cdef const double* dt = &data[0] if data.shape[0] else NULL
    with nogil:
        total = _count_all(ip, ix, dt, bhat, assign, counts, n)
    return total


def update_violations(
    links,                          # IN    KernelLinks: CSR of b (out-edges) and of b.T (in-edges)
    const double[:, ::1] bhat,      # IN    (m, m)
    const int64_t[::1] assign,      # IN    (n,) assignment AFTER the move of ``task``
    Py_ssize_t task,                # IN    the task that moved
    int64_t old_cluster,            # IN    its cluster before the move (-1 = none)
    int64_t[::1] counts,            # INOUT (n,) per-task violation counts
):
    """Update violation counts after one task changed its cluster.

    ``assign`` must already hold the new cluster of ``task`` (possibly ``-1``) and the
    current clusters of all other tasks. The kernel removes the contributions ``task``
    had in ``old_cluster`` (if ``>= 0``) and adds those it has in ``assign[task]`` (if
    ``>= 0``), over its out-edges ``(task, k)`` (violated if
    ``data > bhat[c, assign[k]]``) and its in-edges ``(k, task)`` (violated if
    ``t_data > bhat[assign[k], c]``). Every violating pair changes ``counts[task]`` and
    ``counts[k]`` by one.

    Parameters
    ----------
    links : KernelLinks
        CSR of the request bandwidth ``b`` (``indptr``, ``indices``, ``data``: int64, int64,
        float64) and of ``b.T`` (``t_indptr``, ``t_indices``, ``t_data``: the in-edges of
        every task): :class:`coalloc.ctaap.model.KernelLinks`.
    bhat : ndarray of float64, shape (m, m)
        Offer bandwidth between clusters.
    assign : ndarray of int64, shape (n,)
        Assignment after the move.
    task : int
        Index of the task that moved, ``0 <= task < n``.
    old_cluster : int
        Cluster of ``task`` before the move, ``-1`` if it was unallocated.
    counts : ndarray of int64, shape (n,)
        Input/output. Per-task violation counts valid for the old assignment; updated
        in place to be valid for the new one.

    Returns
    -------
    int
        Change of the total number of violating ordered pairs.
    """
    cdef Links lk = _links_of(links)
    cdef Py_ssize_t n = lk.n_rows
    cdef int64_t new_cluster
    cdef int64_t delta = 0
    if task < 0 or task >= n:
        raise IndexError("task out of range")
    if assign.shape[0] < n or counts.shape[0] < n or lk.t_rows < n:
        raise ValueError("inconsistent array lengths")
    with nogil:
        new_cluster = assign[task]
        if old_cluster >= 0:
            delta += _task_contribution(&lk, bhat, assign, task, old_cluster, -1,
                                        counts, NULL, False)
        if new_cluster >= 0:
            delta += _task_contribution(&lk, bhat, assign, task, new_cluster, 1,
                                        counts, NULL, False)
    return delta
