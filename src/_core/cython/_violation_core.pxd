# cython: language_level=3
"""Inline violation-counting helpers shared by ``_violations`` and ``_cleanup``.

Both take the request bandwidth as CSR (out-edges) and, for the incremental update, the
CSR of its transpose (in-edges). See ``_violations.pyx`` for the semantics.
"""

from libc.stdint cimport int64_t


cdef inline int64_t _count_all(
    const int64_t[::1] indptr,
    const int64_t[::1] indices,
    const double[::1] data,
    const double[:, ::1] bhat,
    const int64_t[::1] assign,
    int64_t[::1] counts,
    Py_ssize_t n,
) noexcept nogil:
    """Zero ``counts``, then count every violating ordered pair; return the total."""
    cdef Py_ssize_t i, k
    cdef int64_t e, ai, ak
    cdef int64_t total = 0
    for i in range(n):
        counts[i] = 0
    for i in range(n):
        ai = assign[i]
        if ai < 0:
            continue
        for e in range(indptr[i], indptr[i + 1]):
            k = <Py_ssize_t>indices[e]
            if k == i:
                continue
            ak = assign[k]
            if ak < 0:
                continue
            if data[e] > bhat[ai, ak]:
                counts[i] += 1
                counts[k] += 1
                total += 1
    return total


cdef inline int64_t _task_contribution(
    const int64_t[::1] indptr,
    const int64_t[::1] indices,
    const double[::1] data,
    const int64_t[::1] t_indptr,
    const int64_t[::1] t_indices,
    const double[::1] t_data,
    const double[:, ::1] bhat,
    const int64_t[::1] assign,
    Py_ssize_t task,
    int64_t c,
    int64_t sign,
    int64_t[::1] counts,
) noexcept nogil:
    """Add ``sign`` times the violations of ``task`` placed in cluster ``c``."""
    cdef int64_t e, ak
    cdef Py_ssize_t k
    cdef int64_t d = 0
    # out-edges (task, k): b[task, k] > bhat[c, a_k]
    for e in range(indptr[task], indptr[task + 1]):
        k = <Py_ssize_t>indices[e]
        if k == task:
            continue
        ak = assign[k]
        if ak < 0:
            continue
        if data[e] > bhat[c, ak]:
            counts[task] += sign
            counts[k] += sign
            d += sign
    # in-edges (k, task): b[k, task] > bhat[a_k, c]
    for e in range(t_indptr[task], t_indptr[task + 1]):
        k = <Py_ssize_t>t_indices[e]
        if k == task:
            continue
        ak = assign[k]
        if ak < 0:
            continue
        if t_data[e] > bhat[ak, c]:
            counts[task] += sign
            counts[k] += sign
            d += sign
    return d
