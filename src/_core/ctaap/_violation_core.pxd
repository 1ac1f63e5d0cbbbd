# cython: language_level=3
"""Inline violation-counting helpers shared by ``_violations`` and ``_cleanup``.

Both take the request bandwidth as CSR (out-edges) and, for the incremental update, the
CSR of its transpose (in-edges). See ``_violations.pyx`` for the semantics.
"""

from libc.stdint cimport int64_t


cdef struct Links:
    # The request's links (coalloc.ctaap.model.KernelLinks: the CSR of b and of b.T) as the
    # kernels read them, filled by _links_of; the pointers are into the record's arrays.
    const int64_t* indptr       # (n_rows + 1,) CSR row pointer of b
    const int64_t* indices      # (nnz,)
    const double* data          # (nnz,)
    const int64_t* t_indptr     # (t_rows + 1,) of b.T
    const int64_t* t_indices    # (t_nnz,)
    const double* t_data        # (t_nnz,)
    Py_ssize_t n_rows           # len(indptr) - 1 (-1: an empty row pointer)
    Py_ssize_t t_rows           # len(t_indptr) - 1
    Py_ssize_t nnz
    Py_ssize_t t_nnz


cdef inline Links _links_of(object links) except *:
    """The one unpacking of a ``KernelLinks`` record by the kernels (``_cleanup``'s
    ``match_and_clean`` and ``fill_free``, ``_violations``' ``update_violations``): its six
    arrays as typed C-contiguous views (a wrong dtype or layout raises as an argument of
    that type did), kept as pointers with their lengths. ``links`` must be a tuple (the
    named tuple ``KernelLinks``): it holds its arrays for the whole call, so the pointers
    stay valid."""
    if not isinstance(links, tuple):
        raise TypeError(f"links must be a KernelLinks record, got {type(links).__name__}")
    cdef const int64_t[::1] indptr = links.indptr
    cdef const int64_t[::1] indices = links.indices
    cdef const double[::1] data = links.data
    cdef const int64_t[::1] t_indptr = links.t_indptr
    cdef const int64_t[::1] t_indices = links.t_indices
    cdef const double[::1] t_data = links.t_data
    cdef Links lk
    lk.indptr = &indptr[0] if indptr.shape[0] else NULL
    lk.indices = &indices[0] if indices.shape[0] else NULL
    lk.data = &data[0] if data.shape[0] else NULL
    lk.t_indptr = &t_indptr[0] if t_indptr.shape[0] else NULL
    lk.t_indices = &t_indices[0] if t_indices.shape[0] else NULL
    lk.t_data = &t_data[0] if t_data.shape[0] else NULL
    lk.n_rows, lk.t_rows = indptr.shape[0] - 1, t_indptr.shape[0] - 1
    lk.nnz, lk.t_nnz = indices.shape[0], t_indices.shape[0]
    return lk


cdef inline int64_t _count_all(
    const int64_t* indptr,
    const int64_t* indices,
    const double* data,
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


cdef struct DirtySet:
    unsigned char* flag       # (n,) 1 if the task's count changed since the last refresh
    int64_t* items            # (n,) the changed tasks, in first-change order
    Py_ssize_t count
    Py_ssize_t depth          # log2(size) of the tournament tree below


cdef inline void _mark(DirtySet* dirty, int64_t k) noexcept nogil:
    if dirty != NULL and not dirty.flag[k]:
        dirty.flag[k] = 1
        dirty.items[dirty.count] = k
        dirty.count += 1


cdef inline int64_t _task_contribution(
    const Links* lk,
    const double[:, ::1] bhat,
    const int64_t[::1] assign,
    Py_ssize_t task,
    int64_t c,
    int64_t sign,
    int64_t[::1] counts,
    DirtySet* dirty,
    bint symmetric,
) noexcept nogil:
    """Add ``sign`` times the violations of ``task`` placed in cluster ``c``.

    ``dirty`` (or NULL) records the tasks whose count changed. ``symmetric``: the
    transpose arrays are the request's own and ``bhat`` is symmetric, so the in-edge pass
    would repeat the out-edge pass test for test; one pass counts twice.
    """
    cdef int64_t e, ak
    cdef Py_ssize_t k
    cdef int64_t d = 0
    cdef int64_t step = 2 * sign if symmetric else sign
    # out-edges (task, k): b[task, k] > bhat[c, a_k]
    for e in range(lk.indptr[task], lk.indptr[task + 1]):
        k = <Py_ssize_t>lk.indices[e]
        if k == task:
            continue
        ak = assign[k]
        if ak < 0:
            continue
        if lk.data[e] > bhat[c, ak]:
            counts[k] += step
            _mark(dirty, k)
            d += step
    if not symmetric:
        # in-edges (k, task): b[k, task] > bhat[a_k, c]
        for e in range(lk.t_indptr[task], lk.t_indptr[task + 1]):
            k = <Py_ssize_t>lk.t_indices[e]
            if k == task:
                continue
            ak = assign[k]
            if ak < 0:
                continue
            if lk.t_data[e] > bhat[ak, c]:
                counts[k] += sign
                _mark(dirty, k)
                d += sign
    if d != 0:
        counts[task] += d
        _mark(dirty, task)
    return d


# Tournament tree over the counts (for the cleanup loop): node p holds the task with the
# largest count in its subtree (the lowest index on ties), so the worst task is tree[1].
# Leaves start at ``size`` (a power of two >= n) and hold task indices (-1: empty leaf), so
# a count change only makes the internal nodes above it stale. Changed tasks are collected
# in a dirty list while a round updates counts; before the next query _tree_refresh either
# recomputes their paths (O(d log n) for d changed tasks) or, when that would cost more,
# every internal node (O(n)): a round never costs more than the argmax scan it replaces.

cdef inline int64_t _win(const int64_t* counts, int64_t a, int64_t b) noexcept nogil:
    if b < 0:
        return a
    if a < 0:
        return b
    return b if counts[b] > counts[a] else a      # a < b: ties go to a


cdef inline void _tree_build(int64_t* tree, Py_ssize_t size, const int64_t* counts,
                             Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t p
    for p in range(size):
        tree[size + p] = p if p < n else -1
    for p in range(size - 1, 0, -1):
        tree[p] = _win(counts, tree[2 * p], tree[2 * p + 1])


cdef inline void _tree_refresh(int64_t* tree, Py_ssize_t size, const int64_t* counts,
                               DirtySet* dirty) noexcept nogil:
    """Bring the internal nodes up to date with the counts of the dirty tasks."""
    cdef Py_ssize_t r, p
    if dirty.count * dirty.depth > size:
        for p in range(size - 1, 0, -1):
            tree[p] = _win(counts, tree[2 * p], tree[2 * p + 1])
    else:
        # Paths in any order: the last recomputation of a shared ancestor sees both of its
        # children already recomputed by every earlier path through them.
        for r in range(dirty.count):
            p = (size + dirty.items[r]) >> 1
            while p >= 1:
                tree[p] = _win(counts, tree[2 * p], tree[2 * p + 1])
                p >>= 1
    for r in range(dirty.count):
        dirty.flag[dirty.items[r]] = 0
    dirty.count = 0
