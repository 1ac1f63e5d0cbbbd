# cython: language_level=3
# distutils: language = c++
"""Steps 2 and 3 of the CTAAP-Solver in one ``nogil`` call.

Step 2 (Alg. 2) is the b-matching of ``coalloc/ctaap/bmatching.hpp`` (the same C++ class that
``coalloc._bmatching`` binds with pybind11). Step 3 (Alg. 3) counts, for every allocated
task, the violating ordered pairs it takes part in; while any pair violates constraint (4)
the allocation of the task with the largest count (the lowest index on ties) is removed and
forbidden for good, and step 2 repairs its optimum (one shortest path). Only the tasks whose
cluster changed have their counts updated, and the largest count is kept in a tournament
tree refreshed once per round (the paths of the changed tasks, or the whole tree when that
is cheaper), so a round costs the degrees of the moved tasks plus min(d log n, n) for d
changed counts, not all pairs.

The Python loop of :func:`coalloc._reference.cleanup.match_and_clean_reference` runs the
same rounds through the separate kernels; the tests compare the two.
"""

from libc.stdint cimport int64_t, uint8_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from _violation_core cimport (
    DirtySet,
    Links,
    _links_of,
    _count_all,
    _task_contribution,
    _tree_build,
    _tree_refresh,
)

import numpy as np


from coalloc.common.interrupt cimport (
    Deadline, Poll, coalloc_raise_interrupt, coalloc_raise_py, deadline_of,
)


cdef extern from "coalloc/ctaap/bmatching.hpp" namespace "coalloc" nogil:
    cdef cppclass BMatcher:
        BMatcher(const double*, const uint8_t*, const int64_t*, int64_t, int64_t,
                 cbool) except +coalloc_raise_py
        void solve(vector[int64_t]*, vector[int64_t]*, const Deadline&) except +coalloc_raise_py
        cbool forbid(int64_t, int64_t) except +coalloc_raise_py
        const vector[int64_t]& assignment()
        int64_t n_augmentations()
        int64_t n_cycle_cancellations()


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


def match_and_clean(
    links,                          # IN  KernelLinks: CSR of the request bandwidth b and of b.T
    const double[:, ::1] bhat,      # IN  (m, m) offer bandwidth
    const double[:, ::1] weights,   # IN  (n, m) step-1 weights
    const uint8_t[:, ::1] allowed,  # IN  (n, m) constraint (3) and capacity > 0
    const int64_t[::1] capacity,    # IN  (m,)
    bint cardinality_first,         # IN  step-2 objective
    int64_t[::1] assign,            # OUT (n,) final allocation, -1 = not allocated
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
):
    """Run the b-matching and the cleanup loop until no pair violates constraint (4).

    Parameters
    ----------
    links : KernelLinks
        CSR of the request bandwidth (``indptr``, ``indices``, ``data``: int64, int64,
        float64) and of its transpose (``t_indptr``, ``t_indices``, ``t_data``; a
        symmetric request's are the same arrays): :class:`coalloc.ctaap.model.KernelLinks`.
    bhat : ndarray of float64, shape (m, m)
        Offer bandwidth.
    weights : ndarray of float64, shape (n, m)
        Step-1 weights of the b-matching.
    allowed : ndarray of uint8, shape (n, m)
        Pairs the matching may use.
    capacity : ndarray of int64, shape (m,)
        Machines per cluster.
    cardinality_first : bool
        Maximise the number of matched tasks first (else the weight only).
    assign : ndarray of int64, shape (n,)
        Output: the final allocation.

    Returns
    -------
    tuple
        ``(removals, augmentations, cycle_cancellations, seconds_matching,
        seconds_counting)``.
    """
    cdef Links lk = _links_of(links)
    cdef Py_ssize_t n = weights.shape[0], m = weights.shape[1]
    if (allowed.shape[0] != n or allowed.shape[1] != m or capacity.shape[0] != m
            or bhat.shape[0] != m or bhat.shape[1] != m or assign.shape[0] != n
            or lk.n_rows != n or lk.t_rows != n):
        raise ValueError("match_and_clean: inconsistent array shapes")
    cdef Py_ssize_t i
    if n == 0 or m == 0:
        for i in range(n):
            assign[i] = -1
        return 0, 0, 0, 0.0, 0.0
    cdef int64_t[::1] counts = np.zeros(n, dtype=np.int64)
    cdef Py_ssize_t size = 1
    while size < n:
        size *= 2
    cdef int64_t[::1] tree = np.empty(2 * size, dtype=np.int64)
    cdef unsigned char[::1] dirty_flag = np.zeros(n, dtype=np.uint8)
    cdef int64_t[::1] dirty_items = np.empty(n, dtype=np.int64)
    cdef DirtySet dirty
    # A symmetric request (its transpose passed as the same arrays) on a symmetric offer:
    # the in-edge half of every count update repeats the out-edge half.
    cdef bint symmetric = (
        lk.t_indptr == lk.indptr
        and (lk.nnz == 0 or (lk.t_indices == lk.indices and lk.t_data == lk.data))
    )
    cdef Py_ssize_t a, b
    for a in range(m):
        for b in range(a):
            if bhat[a, b] != bhat[b, a]:
                symmetric = False
    dirty.flag = &dirty_flag[0]
    dirty.items = &dirty_items[0]
    dirty.count = 0
    dirty.depth = 0
    while (<Py_ssize_t>1 << dirty.depth) < size:
        dirty.depth += 1
    cdef BMatcher* matcher = new BMatcher(
        &weights[0, 0], &allowed[0, 0], &capacity[0], n, m, cardinality_first
    )
    cdef vector[int64_t] tasks, old
    cdef int64_t total, removals = 0, cluster, task, was
    cdef Py_ssize_t worst, r
    cdef double t0, t1, t2, t_match = 0.0, t_count = 0.0
    cdef Deadline dl = deadline_of(deadline)
    cdef Poll poll = Poll(dl, 1)
    try:
        with nogil:
            t0 = _now()
            matcher.solve(NULL, NULL, dl)
            for i in range(n):
                assign[i] = matcher.assignment()[i]
            t1 = _now()
            total = _count_all(lk.indptr, lk.indices, lk.data, bhat, assign, counts, n)
            _tree_build(&tree[0], size, &counts[0], n)
            t2 = _now()
            t_match += t1 - t0
            t_count += t2 - t1
            while total > 0:
                if poll.stop():
                    break
                t0 = _now()
                _tree_refresh(&tree[0], size, &counts[0], &dirty)
                worst = tree[1]
                cluster = assign[worst]
                matcher.forbid(worst, cluster)
                assign[worst] = -1
                total += _task_contribution(&lk, bhat, assign, worst, cluster, -1,
                                            counts, &dirty, symmetric)
                removals += 1
                t1 = _now()
                tasks.clear()
                old.clear()
                matcher.solve(&tasks, &old, dl)
                t2 = _now()
                for r in range(<Py_ssize_t>tasks.size()):
                    task = tasks[r]
                    was = old[r]
                    assign[task] = matcher.assignment()[task]
                    if was >= 0:
                        total += _task_contribution(
                            &lk, bhat, assign, task, was, -1, counts, &dirty, symmetric)
                    if assign[task] >= 0:
                        total += _task_contribution(
                            &lk, bhat, assign, task, assign[task], 1, counts, &dirty, symmetric)
                t_count += (t1 - t0) + (_now() - t2)
                t_match += t2 - t1
        if poll.stopped():
            coalloc_raise_interrupt()
        return (removals, matcher.n_augmentations(), matcher.n_cycle_cancellations(),
                t_match, t_count)
    finally:
        del matcher


cdef inline bint _fits(
    const Links* lk,
    const double[:, ::1] bhat,
    const int64_t[::1] assign,
    Py_ssize_t task,
    int64_t c,
) noexcept nogil:
    """True when ``task`` in cluster ``c`` violates no bandwidth with the placed tasks."""
    cdef int64_t e, ak
    for e in range(lk.indptr[task], lk.indptr[task + 1]):
        ak = assign[lk.indices[e]]
        if ak >= 0 and lk.indices[e] != task and lk.data[e] > bhat[c, ak]:
            return False
    for e in range(lk.t_indptr[task], lk.t_indptr[task + 1]):
        ak = assign[lk.t_indices[e]]
        if ak >= 0 and lk.t_indices[e] != task and lk.t_data[e] > bhat[ak, c]:
            return False
    return True


def fill_free(
    links,                              # IN    KernelLinks: CSR of b and of b.T
    const double[:, ::1] bhat,          # IN    (m, m)
    const uint8_t[:, ::1] allowed,      # IN    (n, m)
    const int64_t[::1] capacity,        # IN    (m,)
    const int64_t[::1] task_order,      # IN    (n,) permutation: tasks to try, in order
    const int64_t[:, ::1] cluster_order,  # IN  (n, m) per task, clusters in preference order
    int64_t[::1] assign,                # INOUT (n,) a feasible allocation, extended in place
):
    """Place unallocated tasks wherever they fit without any violation (first fit).

    Each unallocated task, in ``task_order``, goes to the first cluster of its row of
    ``cluster_order`` that is allowed, has a free machine and gives no bandwidth violation
    with the tasks already placed. A feasible allocation stays feasible and never shrinks.

    ``links`` is a :class:`coalloc.ctaap.model.KernelLinks` (as :func:`match_and_clean`).

    Returns
    -------
    int
        Number of tasks added.
    """
    cdef Links lk = _links_of(links)
    cdef Py_ssize_t n = allowed.shape[0], m = allowed.shape[1]
    if (capacity.shape[0] != m or bhat.shape[0] != m or bhat.shape[1] != m
            or assign.shape[0] != n or task_order.shape[0] != n
            or cluster_order.shape[0] != n or cluster_order.shape[1] != m
            or lk.n_rows != n or lk.t_rows != n):
        raise ValueError("fill_free: inconsistent array shapes")
    cdef int64_t[::1] load = np.zeros(m, dtype=np.int64)
    cdef Py_ssize_t i, r, q
    cdef int64_t task, c, added = 0
    with nogil:
        for i in range(n):
            if assign[i] >= 0:
                load[assign[i]] += 1
        for r in range(n):
            task = task_order[r]
            if assign[task] >= 0:
                continue
            for q in range(m):
                c = cluster_order[task, q]
                if (allowed[task, c] and load[c] < capacity[c]
                        and _fits(&lk, bhat, assign, task, c)):
                    assign[task] = c
                    load[c] += 1
                    added += 1
                    break
    return added
