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
only prefix sums of ``X`` along ``order[j]``, i.e. O(nnz*m + n*m^2) work. Edges with
equal rank rows (``classes``; at most ``m*m + 1`` come from :func:`edge_ranks`) share
one row of a per-task table, so on dense request graphs an edge costs ``m`` contiguous
additions (:func:`_q_table_cls`, :func:`_q_pass_cls`). For ``m`` = 5 or 6 on x86 CPUs
with AVX, checked at run time, those additions use 256-bit vectors, and a table larger
than the L1 cache is read in blocks of end tasks (``coalloc_q_pass6_tiled_block``); the
Sinkhorn pass for ``m`` = 5 uses SSE2 (AVX where present). Every sum is formed in the
same order as by the scalar code, so the results are identical on every CPU. The SIMD
code is plain C in ``coalloc/ctaap/softassign_{cpu,qpass,sinkhorn}.h``; ``_simd_level``
caps the path for the tests and ``bench/ctaap/simd_variants.py``.

Layout: the Q evaluation (edge ranks, classes, :c:type:`_QPlan`), the softassign step,
Sinkhorn (:c:type:`_SK`), then the annealing loop (:c:type:`_GAPlan`, :func:`_ga_run`:
:func:`_ga_eval_q` then :func:`_ga_normalise` per iteration) and the Python-visible
kernels.

The kernels trust their input (the Python model validates it once); only O(1) shape
checks are done. Plain NumPy twins live in :mod:`coalloc.ctaap._reference.softassign`.
"""

import numpy as np

from libc.math cimport INFINITY, exp, fabs
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from libcpp.algorithm cimport nth_element, sort
from libcpp.pair cimport pair
from libcpp.vector cimport vector


from coalloc.common.interrupt cimport Poll, coalloc_raise_interrupt, deadline_of


# ---------------------------------------------------------------------------
# C-level building blocks (raw pointers, row-major arrays, no Python objects)
# ---------------------------------------------------------------------------

cdef extern from "coalloc/ctaap/softassign_qpass.h":
    # Edges (a row: its edges + 1) between two looks at the deadline inside a Q pass or a
    # plan's set-up (the header says why)
    int COALLOC_Q_POLL_WORK


cdef inline bint _e_poll(Poll* poll, Py_ssize_t e) noexcept nogil:
    """The set-up's look at the deadline in a loop over the links: at every
    ``COALLOC_Q_POLL_WORK``-th link (a power of two: one mask and a well-predicted branch
    per link). True: stop now."""
    return (e & (COALLOC_Q_POLL_WORK - 1)) == 0 and poll != NULL and poll.stop()


cdef inline bint _q_poll(Poll* poll, int64_t* work, int64_t add) noexcept nogil:
    """Counts ``add`` units of work; once they reach ``COALLOC_Q_POLL_WORK`` since the last
    look, looks at the deadline (``poll``; NULL: never). True: stop now."""
    work[0] += add
    if work[0] < COALLOC_Q_POLL_WORK or poll == NULL:
        return False
    work[0] = 0
    return poll.stop()

cdef void _q_fused(
    const int64_t* colptr,    # IN  (n + 1,) edges grouped by their end task k
    const int64_t* colpos,    # IN  (nnz,)   CSR position e of each edge, by (k, e)
    const int32_t* rowof,     # IN  (nnz,)   row i of each of those edges
    const int32_t* rank,      # IN  (nnz, m)
    const int16_t* rank_col,  # IN  (nnz, m) rank[colpos] (contiguous per task k), or NULL
    const int32_t* order,     # IN  (m, m)
    const double* X,          # IN  (n + 1, m + 1) row-major; only X[:n, :m] is read
    Py_ssize_t n,
    Py_ssize_t m,
    double f_ok,
    double f_bad,
    double weight,
    double* S,                # scratch (4, m + 1)
    double* C,                # scratch (max in-degree, m)
    double* Q,                # OUT (n, m)
    Poll* poll,               # INOUT looked at between end tasks (NULL: never); a stop
                              #       leaves Q unfinished
) noexcept nogil:
    """``Q[i, j] = sum over edges e = (i, k) of weight * (f_ok * s + f_bad * (T - s))``
    with ``s = S_k[j, rank[e, j]]``, ``S_k[j, r] = sum_{q<r} X[k, order[j, q]]`` (the
    mass of ``X[k]`` on the ``r`` clusters that offer most to cluster ``j``, summed left to
    right) and ``T = S_k[j, m]``.

    The edges are visited grouped by their end task ``k``: the prefix rows of ``k`` are
    built four clusters at a time (four independent add chains) in a small scratch, the
    value of every edge of ``k`` is read off them at once (``C``), and each edge then adds
    one contiguous row ``C[q]`` to ``Q[i]``. Nothing of size ``n m^2`` is stored; tasks
    no edge ends at cost nothing. Each row ``i`` still receives its edges in CSR order
    (ascending ``k``), so with sorted CSR indices the sums equal the row-by-row summation
    of the plain definition bit for bit.
    """
    cdef Py_ssize_t k, j, jj, p, nj, mm = m + 1
    cdef int64_t q, q0, q1
    cdef const int32_t* o0
    cdef const int32_t* re
    cdef const int16_t* re16
    cdef double* Cq
    cdef double* Qi
    cdef double a0, a1, a2, a3, v, t
    cdef int64_t work = 0
    memset(Q, 0, n * m * sizeof(double))
    for k in range(n):
        q0 = colptr[k]
        q1 = colptr[k + 1]
        if _q_poll(poll, &work, q1 - q0 + 1):
            return
        if q0 == q1:
            continue
        j = 0
        while j < m:
            nj = min(4, m - j)
            o0 = order + j * m
            a0 = a1 = a2 = a3 = 0.0
            S[0] = 0.0
            S[mm] = 0.0
            S[2 * mm] = 0.0
            S[3 * mm] = 0.0
            if nj == 4:
                for p in range(m):
                    a0 += X[k * mm + o0[p]]
                    a1 += X[k * mm + o0[m + p]]
                    a2 += X[k * mm + o0[2 * m + p]]
                    a3 += X[k * mm + o0[3 * m + p]]
                    S[p + 1] = a0
                    S[mm + p + 1] = a1
                    S[2 * mm + p + 1] = a2
                    S[3 * mm + p + 1] = a3
            else:
                for jj in range(nj):
                    a0 = 0.0
                    for p in range(m):
                        a0 += X[k * mm + o0[jj * m + p]]
                        S[jj * mm + p + 1] = a0
            for q in range(q0, q1):
                Cq = C + (q - q0) * m + j
                if rank_col != NULL:
                    re16 = rank_col + q * m + j
                    for jj in range(nj):
                        v = S[jj * mm + re16[jj]]
                        t = S[jj * mm + m]
                        Cq[jj] = weight * (f_ok * v + f_bad * (t - v))
                else:
                    re = rank + colpos[q] * m + j
                    for jj in range(nj):
                        v = S[jj * mm + re[jj]]
                        t = S[jj * mm + m]
                        Cq[jj] = weight * (f_ok * v + f_bad * (t - v))
            j += nj
        for q in range(q0, q1):
            Qi = Q + <Py_ssize_t>rowof[q] * m
            Cq = C + (q - q0) * m
            for j in range(m):
                Qi[j] += Cq[j]


# --- edge classes: edges with equal rank rows share one column of the Q table ------

cdef enum:
    _CLS_MAX_M = 15        # rank rows are packed 4 bits per cluster into one uint64
    _CLS_MAX = 256         # more distinct rank rows -> the per-edge path
    _CLS_HASH_BITS = 10
    _CLS_HASH = 1024       # open-addressing table, >= 4 * _CLS_MAX slots


cdef Py_ssize_t _edge_classes(
    const int32_t* rank,      # IN  (nnz, m), entries in [0, m]
    Py_ssize_t nnz,
    Py_ssize_t m,             # 1 <= m <= _CLS_MAX_M
    int32_t* cls,             # OUT (nnz,) class of every edge
    int32_t* rep,             # OUT (_CLS_MAX, m) rank row of every class
    Poll* poll,               # INOUT looked at every COALLOC_Q_POLL_WORK edges (NULL: never)
) noexcept nogil:
    """Number the distinct rank rows; returns their count, -1 if > _CLS_MAX, -2 if
    ``poll`` stopped."""
    cdef uint64_t keys[_CLS_HASH]
    cdef int32_t vals[_CLS_HASH]
    cdef uint64_t code, last_code = 0
    cdef int32_t c, last_cls = 0
    cdef Py_ssize_t e, j, n_cls = 0
    cdef size_t h
    cdef const int32_t* re
    memset(keys, 0, sizeof(keys))
    for e in range(nnz):
        if _e_poll(poll, e):
            return -2
        re = rank + e * m
        code = 0
        for j in range(m):
            code = (code << 4) | <uint64_t>re[j]
        code += 1                     # 0 marks an empty slot
        if code == last_code:
            cls[e] = last_cls
            continue
        h = <size_t>(((code ^ (code >> 29)) * <uint64_t>0x2545F4914F6CDD1D)
                     >> (64 - _CLS_HASH_BITS))
        while True:
            if keys[h] == code:
                c = vals[h]
                break
            if keys[h] == 0:
                if n_cls == _CLS_MAX:
                    return -1
                keys[h] = code
                c = <int32_t>n_cls
                vals[h] = c
                for j in range(m):
                    rep[n_cls * m + j] = re[j]
                n_cls += 1
                break
            h = (h + 1) & (_CLS_HASH - 1)
        cls[e] = c
        last_code = code
        last_cls = c
    return n_cls


cdef inline Py_ssize_t _cls_width(Py_ssize_t m) noexcept nogil:
    """Row length of the class table: ``m`` rounded up to an even number."""
    return (m + 1) & ~(<Py_ssize_t>1)


cdef bint _classes_usable(Py_ssize_t n_cls, Py_ssize_t n, Py_ssize_t m,
                          Py_ssize_t nnz) noexcept nogil:
    """Whether the class table ``(n, n_cls, mp)`` is worth building every evaluation."""
    cdef Py_ssize_t mp = _cls_width(m)
    if n_cls <= 0 or n_cls * n > nnz:
        return False
    if n * n_cls * mp >= 2147483647:
        return False
    return n * n_cls * mp <= (1 << 23) or n_cls * mp <= 2 * m * (m + 1)


cdef void _class_offsets(
    const int64_t* indices,   # IN    (nnz,)
    Py_ssize_t nnz,
    Py_ssize_t m,
    Py_ssize_t n_cls,
    const int32_t* rep,       # IN    (n_cls, m)
    int32_t* off,             # INOUT (nnz,) class of every edge -> table offset
    int32_t* gidx,            # OUT   (n_cls, mp) index into the per-task table V
    Poll* poll,               # INOUT looked at every COALLOC_Q_POLL_WORK edges (NULL: never)
) noexcept nogil:
    cdef Py_ssize_t e, c, j, mp = _cls_width(m)
    for e in range(nnz):
        if _e_poll(poll, e):
            return
        off[e] = <int32_t>((indices[e] * n_cls + off[e]) * mp)
    for c in range(n_cls):
        for j in range(mp):
            # V[j, rank] for real clusters; V[m * (m + 1)] = 0 for the padding
            gidx[c * mp + j] = <int32_t>(j * (m + 1) + rep[c * m + j] if j < m
                                         else m * (m + 1))


cdef void _q_table_cls(
    const double* X,          # IN  (n + 1, m + 1) row-major; only X[:n, :m] is read
    Py_ssize_t n,
    Py_ssize_t m,
    const int32_t* order,     # IN  (m, m)
    const int32_t* gidx,      # IN  (n_cls, mp) from _class_offsets
    Py_ssize_t n_cls,
    double f_ok,
    double f_bad,
    double weight,
    double* V,                # scratch (m * (m + 1) + 1,)
    double* Gc,               # OUT (n, n_cls, tw)
    Py_ssize_t tw,            # row width of gidx and Gc: mp, or 8 (padded rows)
    Poll* poll,               # INOUT looked at between tasks (NULL: never); a stop leaves
                              #       Gc unfinished
) noexcept nogil:
    """``Gc[k, c, j] = G[k, j, rank of class c at j]`` with ``G`` the weighted prefix
    table of :func:`_q_fused` (up to rounding: ``T - S`` is summed directly); padding
    entries ``j >= m`` are 0."""
    cdef Py_ssize_t k, j, p, t, mm = m + 1, width = n_cls * tw
    cdef const double* Xk
    cdef const int32_t* oj
    cdef double* Vj
    cdef double* g
    cdef double acc, tot
    cdef double xs[_CLS_MAX_M]
    cdef bint ok_zero = f_ok == 0.0
    cdef int64_t work = 0
    V[m * mm] = 0.0                 # read by the padding entries
    for k in range(n):
        if _q_poll(poll, &work, n_cls + m):
            return
        Xk = X + k * mm
        for j in range(m):
            # V[j, r] = weight * (f_ok * S + f_bad * U): S = mass of X[k] on the first
            # r clusters of order[j], U = mass on the others (summed directly, no
            # cancellation); f_ok * S is skipped if f_ok == 0
            oj = order + j * m
            Vj = V + j * mm
            for p in range(m):
                xs[p] = Xk[oj[p]]
            tot = 0.0
            if ok_zero:
                Vj[m] = weight * (f_bad * tot)
                for p in range(m - 1, -1, -1):
                    tot += xs[p]
                    Vj[p] = weight * (f_bad * tot)
            else:
                Vj[m] = 0.0
                for p in range(m - 1, -1, -1):
                    tot += xs[p]
                    Vj[p] = tot
                acc = 0.0
                for p in range(m):
                    Vj[p] = weight * (f_ok * acc + f_bad * Vj[p])
                    acc += xs[p]
                Vj[m] = weight * (f_ok * acc + f_bad * 0.0)
        g = Gc + k * width
        for t in range(width):
            g[t] = V[gidx[t]]


cdef extern from "coalloc/ctaap/softassign_plan.h":
    ctypedef struct coalloc_ga_plan:
        int symmetric
        double f_ok
        double f_bad
        double q_scale
        double beta0
        double beta_f
        double beta_r
        int max_outer
        int max_inner
        double tol_outer
        double tol_inner


cdef extern from "coalloc/ctaap/softassign_cpu.h":
    int coalloc_simd_cap
    bint coalloc_has_sse2() noexcept nogil
    bint coalloc_has_avx() noexcept nogil
    Py_ssize_t coalloc_tile_bytes() noexcept nogil


cdef extern from "coalloc/ctaap/softassign_qpass.h":
    bint COALLOC_QAVX
    void coalloc_q_pass6_avx(const int64_t* indptr, const int32_t* off, Py_ssize_t n,
                             Py_ssize_t m, const double* Gc, bint accumulate,
                             double* Q) noexcept nogil
    void coalloc_q_pass6_tiled_block(const int64_t* indptr, const int32_t* off,
                                     Py_ssize_t n, const double* Gc, const int64_t* segptr,
                                     Py_ssize_t nblk, Py_ssize_t blk,
                                     double* acc) noexcept nogil
    void coalloc_q_pass6_tiled_done(Py_ssize_t n, Py_ssize_t m, const double* acc,
                                    bint accumulate, double* Q) noexcept nogil


cdef void _q_pass_cls6(
    const int64_t* indptr,    # IN  (n + 1,)
    const int32_t* off,       # IN  (nnz,) table offset of every edge
    Py_ssize_t n,
    Py_ssize_t m,             # 5 or 6 (table rows of width 6)
    const double* Gc,         # IN  class table
    bint accumulate,
    double* Q,                # OUT / INOUT (n, m)
    Poll* poll,               # INOUT looked at between rows (NULL: never); a stop leaves Q
                              #       unfinished
) noexcept nogil:
    """:func:`_q_pass_cls` for ``mp == 6``: four edges at a time into four independent
    sets of accumulators (short add chains, pairs of adjacent loads)."""
    cdef Py_ssize_t i, e, e1
    cdef const double* g0
    cdef const double* g1
    cdef const double* g2
    cdef const double* g3
    cdef double* Qi
    cdef double a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5
    cdef double c0, c1, c2, c3, c4, c5, d0, d1, d2, d3, d4, d5
    cdef double r[6]
    cdef int64_t work = 0
    cdef Py_ssize_t i1
    if COALLOC_QAVX and coalloc_has_avx():
        if poll == NULL:
            coalloc_q_pass6_avx(indptr, off, n, m, Gc, accumulate, Q)
            return
        i = 0
        while i < n:  # slices of rows of COALLOC_Q_POLL_WORK, a look between two
            i1 = i
            work = 0
            while i1 < n and work < COALLOC_Q_POLL_WORK:
                work += indptr[i1 + 1] - indptr[i1] + 1
                i1 += 1
            coalloc_q_pass6_avx(indptr + i, off, i1 - i, m, Gc, accumulate, Q + i * m)
            i = i1
            if i < n and poll.stop():
                return
        return
    for i in range(n):
        e = indptr[i]
        e1 = indptr[i + 1]
        if _q_poll(poll, &work, e1 - e + 1):
            return
        a0 = a1 = a2 = a3 = a4 = a5 = 0.0
        b0 = b1 = b2 = b3 = b4 = b5 = 0.0
        c0 = c1 = c2 = c3 = c4 = c5 = 0.0
        d0 = d1 = d2 = d3 = d4 = d5 = 0.0
        while e + 4 <= e1:
            g0 = Gc + off[e]
            g1 = Gc + off[e + 1]
            g2 = Gc + off[e + 2]
            g3 = Gc + off[e + 3]
            a0 += g0[0]
            a1 += g0[1]
            a2 += g0[2]
            a3 += g0[3]
            a4 += g0[4]
            a5 += g0[5]
            b0 += g1[0]
            b1 += g1[1]
            b2 += g1[2]
            b3 += g1[3]
            b4 += g1[4]
            b5 += g1[5]
            c0 += g2[0]
            c1 += g2[1]
            c2 += g2[2]
            c3 += g2[3]
            c4 += g2[4]
            c5 += g2[5]
            d0 += g3[0]
            d1 += g3[1]
            d2 += g3[2]
            d3 += g3[3]
            d4 += g3[4]
            d5 += g3[5]
            e += 4
        while e < e1:
            g0 = Gc + off[e]
            a0 += g0[0]
            a1 += g0[1]
            a2 += g0[2]
            a3 += g0[3]
            a4 += g0[4]
            a5 += g0[5]
            e += 1
        r[0] = (a0 + b0) + (c0 + d0)
        r[1] = (a1 + b1) + (c1 + d1)
        r[2] = (a2 + b2) + (c2 + d2)
        r[3] = (a3 + b3) + (c3 + d3)
        r[4] = (a4 + b4) + (c4 + d4)
        r[5] = (a5 + b5) + (c5 + d5)
        Qi = Q + i * m
        if accumulate:
            for e in range(m):
                Qi[e] += r[e]
        else:
            for e in range(m):
                Qi[e] = r[e]


cdef void _q_pass_cls(
    const int64_t* indptr,    # IN  (n + 1,)
    const int32_t* off,       # IN  (nnz,) table offset of every edge
    Py_ssize_t n,
    Py_ssize_t m,             # <= _CLS_MAX_M
    const double* Gc,         # IN  (n, n_cls, mp) from _q_table_cls
    bint accumulate,
    double* Q,                # OUT / INOUT (n, m)
    Poll* poll,               # INOUT looked at between rows (NULL: never)
) noexcept nogil:
    """``Q[i, :] (+)= sum over edges e of row i of Gc[off[e] : off[e] + m]``."""
    cdef Py_ssize_t i, j, e, e1, mp = _cls_width(m)
    cdef const double* g0
    cdef const double* g1
    cdef double* Qi
    cdef double a[16]
    cdef double b[16]
    cdef int64_t work = 0
    if mp == 6:
        _q_pass_cls6(indptr, off, n, m, Gc, accumulate, Q, poll)
        return
    for i in range(n):
        e = indptr[i]
        e1 = indptr[i + 1]
        if _q_poll(poll, &work, e1 - e + 1):
            return
        for j in range(mp):
            a[j] = 0.0
            b[j] = 0.0
        while e + 2 <= e1:
            g0 = Gc + off[e]
            g1 = Gc + off[e + 1]
            for j in range(mp):
                a[j] += g0[j]
                b[j] += g1[j]
            e += 2
        if e < e1:
            g0 = Gc + off[e]
            for j in range(mp):
                a[j] += g0[j]
        Qi = Q + i * m
        if accumulate:
            for j in range(m):
                Qi[j] += a[j] + b[j]
        else:
            for j in range(m):
                Qi[j] = a[j] + b[j]


cdef struct _QPlan:
    # how one edge direction is summed: by classes (use_cls) or edge by edge
    bint use_cls
    Py_ssize_t n_cls
    const int64_t* indptr
    const int64_t* indices
    const int32_t* rank
    const int32_t* order
    const int32_t* off        # (nnz,)       class path only
    const int32_t* gidx       # (n_cls, mp)  class path only
    const int64_t* colptr     # (n + 1,)     edge path: edges grouped by end task
    const int64_t* colpos     # (nnz,)       edge path
    const int32_t* rowof      # (nnz,)       edge path
    double* qbuf              # (n, m)       edge path, accumulating plans only
    double* cbuf              # (max in-degree, m) edge path
    const int16_t* rank_col   # (nnz, m)     edge path: rank rows in colpos order, or NULL
    Py_ssize_t nblk           # class path, mp == 6 with AVX: > 1 to read the table in
    const int64_t* segptr     # (n, nblk + 1) blocks of end tasks (coalloc_q_pass6_tiled_block)
    double* tacc              # (n, 4, 6)    its partial sums


cdef void _q_eval(
    const _QPlan* plan,
    const double* X,
    Py_ssize_t n,
    Py_ssize_t m,
    double f_ok,
    double f_bad,
    double weight,
    bint accumulate,
    double* table,            # scratch: class table, or (4, m + 1) prefix rows
    double* V,                # scratch (m * (m + 1) + 1,)
    double* Q,                # OUT / INOUT (n, m)
    Poll* poll,               # INOUT the deadline, looked at inside the pass every
                              #       COALLOC_Q_POLL_WORK edges (NULL: never). Once it stops,
                              #       Q is unfinished: the caller must discard it
) noexcept nogil:
    cdef Py_ssize_t p, blk
    cdef int64_t work = 0, per_block
    if plan.use_cls:
        _q_table_cls(X, n, m, plan.order, plan.gidx, plan.n_cls, f_ok, f_bad, weight, V,
                     table, _cls_width(m), poll)
        if poll != NULL and poll.stopped():
            return
        if plan.nblk > 1:  # a block of end tasks at a time, a look between two
            per_block = plan.indptr[n] // plan.nblk + n
            memset(plan.tacc, 0, n * 24 * sizeof(double))
            for blk in range(plan.nblk):
                if blk > 0 and _q_poll(poll, &work, per_block):
                    return
                coalloc_q_pass6_tiled_block(plan.indptr, plan.off, n, table, plan.segptr,
                                            plan.nblk, blk, plan.tacc)
            coalloc_q_pass6_tiled_done(n, m, plan.tacc, accumulate, Q)
        else:
            _q_pass_cls(plan.indptr, plan.off, n, m, table, accumulate, Q, poll)
    elif accumulate:
        _q_fused(plan.colptr, plan.colpos, plan.rowof, plan.rank, plan.rank_col, plan.order,
                 X, n, m, f_ok, f_bad, weight, table, plan.cbuf, plan.qbuf, poll)
        if poll != NULL and poll.stopped():
            return
        for p in range(n * m):
            Q[p] += plan.qbuf[p]
    else:
        _q_fused(plan.colptr, plan.colpos, plan.rowof, plan.rank, plan.rank_col, plan.order,
                 X, n, m, f_ok, f_bad, weight, table, plan.cbuf, Q, poll)


cdef class _RawBuf:
    """A buffer left uninitialised (``malloc``; freed with the object) for arrays the
    kernel writes whole before reading: a ``vector``'s zero fill of the 100 MB edge classes
    of 25 million links took 150-250 ms under load before the set-up's first look at the
    deadline (issue 36)."""
    cdef void* p

    def __cinit__(self):
        self.p = NULL

    def __dealloc__(self):
        free(self.p)

    cdef void* alloc(self, size_t nbytes) except NULL:
        free(self.p)
        self.p = malloc(max(nbytes, <size_t>1))
        if self.p == NULL:
            raise MemoryError()
        return self.p


cdef class _QPlanner:
    """Owns the buffers of a :c:type:`_QPlan` (built with the GIL, used without)."""
    cdef _RawBuf off_buf          # (nnz,) int32: every edge's class, then table offset
    cdef int32_t* off
    cdef vector[int32_t] gidx
    cdef vector[int64_t] colptr
    cdef vector[int64_t] colpos
    cdef vector[int32_t] rowof
    cdef vector[double] qbuf
    cdef vector[double] cbuf
    cdef vector[int16_t] rank_col
    cdef vector[int64_t] segptr
    cdef vector[double] tacc
    cdef _QPlan plan
    cdef Py_ssize_t table_size

    def __cinit__(self):
        self.off_buf = _RawBuf()
        self.off = NULL
        self.plan.use_cls = False
        self.plan.n_cls = 0
        self.plan.nblk = 0
        self.table_size = 0

    cdef void build(self, const int64_t* indptr, const int64_t* indices,
                    const int32_t* rank, const int32_t* order, Py_ssize_t n, Py_ssize_t m,
                    Py_ssize_t nnz, bint accumulate=False, Poll* poll=NULL):
        """The plan of one edge direction. ``poll`` (NULL: never) is looked at every
        ``COALLOC_Q_POLL_WORK`` edges of the set-up's passes over the links (0.5-0.8 s on
        25 million links under load); once it stops, the plan is unfinished and the caller
        must not use it (it raises)."""
        cdef vector[int32_t] rep
        cdef Py_ssize_t n_cls = -1
        self.plan.indptr = indptr
        self.plan.indices = indices
        self.plan.rank = rank
        self.plan.order = order
        self.plan.use_cls = False
        if n <= 0 or m <= 0:
            self.table_size = 1
            return
        if m <= _CLS_MAX_M and 0 < nnz <= 2147483647:
            self.off = <int32_t*>self.off_buf.alloc(nnz * sizeof(int32_t))
            rep.resize(_CLS_MAX * m)
            with nogil:
                n_cls = _edge_classes(rank, nnz, m, self.off, rep.data(), poll)
            if n_cls == -2:
                return
            if _classes_usable(n_cls, n, m, nnz):
                self.gidx.resize(n_cls * _cls_width(m))
                with nogil:
                    _class_offsets(indices, nnz, m, n_cls, rep.data(), self.off,
                                   self.gidx.data(), poll)
                self.plan.use_cls = True
                self.plan.n_cls = n_cls
                self.plan.off = self.off
                self.plan.gidx = self.gidx.data()
                self.table_size = n * n_cls * _cls_width(m) + 1
                if poll == NULL or not poll.stopped():
                    self._plan_tiles(n, m, nnz, poll)
                return
            self.off_buf.alloc(1)       # the edge path: the classes are not kept
            self.off = NULL
        # Edge path: group the edges by end task (a counting sort, stable in e).
        self.table_size = 4 * (m + 1)
        if poll != NULL and poll.stop():   # before zero-filling 12 bytes per link
            return
        self.colptr.assign(n + 2, 0)
        self.colpos.resize(max(nnz, 1))
        self.rowof.resize(max(nnz, 1))
        if accumulate:
            self.qbuf.resize(n * m)
            self.plan.qbuf = self.qbuf.data()
        with nogil:
            _group_by_column(indptr, indices, n, self.colptr.data(), self.colpos.data(),
                             self.rowof.data(), poll)
        if poll != NULL and poll.stopped():
            return
        self.plan.colptr = self.colptr.data()
        self.plan.colpos = self.colpos.data()
        self.plan.rowof = self.rowof.data()
        cdef int64_t max_deg = 1
        cdef Py_ssize_t k
        for k in range(n):
            max_deg = max(max_deg, self.colptr[k + 1] - self.colptr[k])
        self.cbuf.resize(max_deg * m)
        self.plan.cbuf = self.cbuf.data()
        # The rank rows in the order the edges are visited (the original order is a random
        # walk over an nnz x m array), as int16 (ranks are <= m): half the bytes to stream
        # per evaluation. Skipped when that copy would be large.
        self.plan.rank_col = NULL
        if 0 < nnz * m <= _RANK_COPY_MAX and m < 32767:
            self.rank_col.resize(nnz * m)
            with nogil:
                _gather_rows(rank, self.colpos.data(), nnz, m, self.rank_col.data(), poll)
            self.plan.rank_col = self.rank_col.data()


    cdef void _plan_tiles(self, Py_ssize_t n, Py_ssize_t m, Py_ssize_t nnz, Poll* poll):
        """Blocks of end tasks for :c:func:`coalloc_q_pass6_tiled_block`, when the class table
        does not fit one block (``coalloc_tile_bytes``, L1-sized) and the rows are long
        enough."""
        cdef Py_ssize_t row_bytes = self.plan.n_cls * 6 * sizeof(double)
        cdef Py_ssize_t kb, nblk, i, b
        cdef int64_t e
        cdef const int64_t* indptr = self.plan.indptr
        cdef const int64_t* indices = self.plan.indices
        cdef int64_t work = 0
        self.plan.nblk = 0
        if _cls_width(m) != 6 or not (COALLOC_QAVX and coalloc_has_avx()):
            return
        kb = max(<Py_ssize_t>1, coalloc_tile_bytes() // row_bytes)
        nblk = (n + kb - 1) // kb
        if nblk <= 1 or n * (nblk + 1) * 8 > nnz:
            return                      # table fits anyway, or segments too short
        for i in range(n):              # the tiled pass needs sorted rows
            if _q_poll(poll, &work, indptr[i + 1] - indptr[i] + 1):
                return
            for e in range(indptr[i] + 1, indptr[i + 1]):
                if indices[e] < indices[e - 1]:
                    return
        self.segptr.resize(n * (nblk + 1))
        self.tacc.resize(n * 4 * 6)
        with nogil:
            for i in range(n):
                if _q_poll(poll, &work, indptr[i + 1] - indptr[i] + nblk + 1):
                    break
                e = indptr[i]
                for b in range(nblk + 1):
                    while e < indptr[i + 1] and indices[e] < b * kb:
                        e += 1
                    self.segptr[i * (nblk + 1) + b] = e
                self.segptr[i * (nblk + 1) + nblk] = indptr[i + 1]
        self.plan.nblk = nblk
        self.plan.segptr = self.segptr.data()
        self.plan.tacc = self.tacc.data()


cdef enum:
    _RANK_COPY_MAX = 1 << 27  # int16 entries (256 MB) of the reordered rank copy


cdef void _gather_rows(const int32_t* rank, const int64_t* colpos, Py_ssize_t nnz,
                       Py_ssize_t m, int16_t* out, Poll* poll) noexcept nogil:
    cdef Py_ssize_t q, j
    cdef const int32_t* r
    for q in range(nnz):
        if _e_poll(poll, q):
            return
        r = rank + colpos[q] * m
        for j in range(m):
            out[q * m + j] = <int16_t>r[j]


cdef void _group_by_column(
    const int64_t* indptr,    # IN  (n + 1,)
    const int64_t* indices,   # IN  (nnz,)
    Py_ssize_t n,
    int64_t* colptr,          # OUT (n + 2,) zero on entry; colptr[:n + 1] is the result
    int64_t* colpos,          # OUT (nnz,)
    int32_t* rowof,           # OUT (nnz,)
    Poll* poll,               # INOUT looked at every COALLOC_Q_POLL_WORK edges (NULL: never)
) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef int64_t e, q, work = 0
    for e in range(indptr[n]):
        if _e_poll(poll, e):
            return
        colptr[indices[e] + 2] += 1
    for k in range(n):
        colptr[k + 2] += colptr[k + 1]
    # colptr[k + 1] is now the start of column k; filling advances it to the end.
    for i in range(n):
        if _q_poll(poll, &work, indptr[i + 1] - indptr[i] + 1):
            return
        for e in range(indptr[i], indptr[i + 1]):
            q = colptr[indices[e] + 1]
            colptr[indices[e] + 1] = q + 1
            colpos[q] = e
            rowof[q] = <int32_t>i


# --- softassign step ------------------------------------------------------------------

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


# --- Sinkhorn ---------------------------------------------------------------------
#
# One iteration of Sinkhorn is: R = X with rows i < n divided by their sums; for every
# column j < m: denom_j = sum of the k_j smallest entries of R[:, j]; X_new[:, j] =
# min(1, R[:, j] / denom_j); X_new[:, m] = R[:, m]; diff = max |X_new - X|.
#
# rinv[i] = 1 / rowsum_i (1 for the slack row and for zero rows), so R[i, j] =
# X[i, j] * rinv[i] (the product the row normalisation computes, hence the same value).
#
# denom_j = sum of R[:, j] without its K_j = rows - k_j largest entries. Every column
# remembers the rows of its K_j largest entries of the previous iteration (``tcap``,
# exactly K_j rows per column). The pass that writes X_new also computes the next row
# sums and, per column, the sum and the maximum of R over the other rows and the
# minimum over the remembered rows. If no other entry exceeds the smallest remembered
# one, the remembered rows still hold K_j largest entries and the sum is denom_j
# (exact; with ties any choice gives the same sum). Otherwise only the entries between
# the two values are ambiguous: they are selected with nth_element and ``tcap`` is
# renewed. Nothing is ever subtracted, so small denominators are as accurate as large
# ones. An iteration is thus a single pass over X (plus, rarely, a repair of a column).
# The pass for m == 5 uses SSE2 on pairs of columns where available (AVX where the CPU
# has it, checked at run time: the same operations per entry).

cdef extern from "coalloc/ctaap/softassign_sinkhorn.h":
    bint COALLOC_SK6
    bint COALLOC_SK6AVX
    double coalloc_sk_pass6_avx(double* X, double* rinv, const double* tcap, Py_ssize_t n,
                                const double* sc, const double* cl, const uint64_t* keep,
                                bint any_degen, bint update, bint feed,
                                double* stats) noexcept nogil
    double coalloc_sk_pass6(double* X, double* rinv, const double* tcap, Py_ssize_t n,
                            const double* sc, const double* cl, const uint64_t* keep,
                            bint any_degen, bint update, bint feed,
                            double* stats) noexcept nogil


cdef struct _SK:
    Py_ssize_t n
    Py_ssize_t m
    Py_ssize_t rows           # n + 1
    double* X                 # (n + 1, m + 1)
    double* rinv              # (rows,)
    double* tcap              # (rows, m + 1) 0: row among the K_j largest of col j, else inf
    double* scale             # (m + 1,) 1 / denom (inf: denom <= 1e-300, the column
                              # becomes its support); scale[m] = 1 (slack column)
    double* clip              # (m + 1,) 1; clip[m] = inf (the slack column is not clipped)
    uint64_t* keep            # (m + 1,) 0 for degenerate columns, else all ones
    bint any_degen
    Py_ssize_t* kk            # (m,) k_j = number of smallest entries summed (<= 0: none)
    double* stats             # (3, m + 1) rest, maxrest, mintop of the last feed
    double* bands             # (m, rows) scratch: band entries of the repaired columns
    Py_ssize_t* rep           # (m,) scratch: the columns being repaired
    Py_ssize_t* above         # (m,) scratch: their entries above the band
    Py_ssize_t* bcount        # (m,) scratch: their entries in the band
    double* low               # (m,) scratch: sum of their entries below the band
    double* thr               # (m,) scratch: their K_j-th largest entries


cdef enum:
    _SK_BLOCK = 64            # rows per block of the column gathers of the repair


cdef void _sk_setup(_SK* sk, const int64_t* capacity) noexcept nogil:
    """``k_j`` from the capacities; the first ``K_j`` rows as initial largest rows."""
    cdef Py_ssize_t i, j, m = sk.m, mm = sk.m + 1, rows = sk.rows, kj
    for j in range(mm):
        sk.scale[j] = 1.0
        sk.clip[j] = 1.0 if j < m else INFINITY
        sk.keep[j] = ~(<uint64_t>0)
    for i in range(rows * mm):
        sk.tcap[i] = INFINITY
    for j in range(m):
        kj = rows + 1 - <Py_ssize_t>capacity[j]
        if kj > rows:
            kj = rows
        sk.kk[j] = kj
        if kj > 0:
            for i in range(rows - kj):
                sk.tcap[i * mm + j] = 0.0


cdef double _sk_pass(_SK* sk, bint update, bint feed) noexcept nogil:
    """With ``update``: ``X <- X_new`` from ``rinv``, ``scale`` and ``clip``; returns
    ``max |X_new - X|``. With ``feed``: ``rinv`` of (the new) ``X`` and the column
    statistics of its R (``stats``) for the next iteration."""
    cdef Py_ssize_t i, j, n = sk.n, m = sk.m, mm = sk.m + 1
    cdef double diff = 0.0, ri, v, w, x, d, s, c
    cdef double* Xi
    cdef const double* ci
    cdef double* rest = sk.stats
    cdef double* maxrest = sk.stats + mm
    cdef double* mintop = sk.stats + 2 * mm
    if COALLOC_SK6 and m == 5 and coalloc_has_sse2():
        if COALLOC_SK6AVX and coalloc_has_avx():
            return coalloc_sk_pass6_avx(sk.X, sk.rinv, sk.tcap, n, sk.scale, sk.clip,
                                        sk.keep, sk.any_degen, update, feed, sk.stats)
        return coalloc_sk_pass6(sk.X, sk.rinv, sk.tcap, n, sk.scale, sk.clip,
                                sk.keep, sk.any_degen, update, feed, sk.stats)
    if feed:
        for j in range(mm):
            rest[j] = 0.0
            maxrest[j] = 0.0
            mintop[j] = INFINITY
    for i in range(sk.rows):
        Xi = sk.X + i * mm
        if update:
            ri = sk.rinv[i]
            for j in range(mm):
                v = Xi[j] * ri
                w = v * sk.scale[j]
                x = w if w < sk.clip[j] else sk.clip[j]
                if sk.any_degen and not sk.keep[j] and not v > 0.0:
                    x = 0.0
                d = fabs(x - Xi[j])
                diff = d if d > diff else diff
                Xi[j] = x
        if feed:
            ri = 1.0
            if i < n:
                s = 0.0
                for j in range(mm):
                    s += Xi[j]
                ri = 1.0 / s if s > 0.0 else 1.0
            sk.rinv[i] = ri
            ci = sk.tcap + i * mm
            for j in range(m):
                v = Xi[j] * ri
                c = ci[j]
                w = v if v < c else c           # remembered rows 0, others v
                rest[j] += w
                maxrest[j] = w if w > maxrest[j] else maxrest[j]
                w = v if v > c else c           # remembered rows v, others inf
                mintop[j] = w if w < mintop[j] else mintop[j]
    return diff


cdef double _sk_select(_SK* sk, Py_ssize_t j, Py_ssize_t r, double lo, double hi,
                       double* thr) noexcept nogil:
    """Sum of the ``k_j`` smallest entries of column ``j`` of R when some entry outside
    the remembered rows (max ``hi``) exceeds one inside (min ``lo``); ``thr`` receives
    the ``K_j``-th largest entry (see :func:`_sk_remember`).

    The ``K_j`` largest are the entries > hi (all remembered, ``above[r]`` of them) plus
    the largest of the entries in [lo, hi] (``bands[r]``, gathered by :func:`_sk_denoms`
    with ``low[r]`` the sum of the entries < lo, in row order)."""
    cdef Py_ssize_t i, q, rows = sk.rows, mm = sk.m + 1
    cdef Py_ssize_t K = rows - sk.kk[j]
    cdef Py_ssize_t bc = sk.bcount[r]
    cdef double* band = sk.bands + r * rows
    cdef double t, part = 0.0
    q = K - sk.above[r]
    if q >= 1 and q <= bc:
        nth_element(band, band + (bc - q), band + bc)
        t = band[bc - q]            # the K-th largest entry
        for i in range(bc - q):
            part += band[i]
        part += sk.low[r]
    else:
        # only reachable with NaNs: plain selection on the whole column
        for i in range(rows):
            band[i] = sk.X[i * mm + j] * sk.rinv[i]
        nth_element(band, band + (rows - K), band + rows)
        t = band[rows - K]
        for i in range(rows - K):
            part += band[i]
    thr[0] = t
    return part


cdef void _sk_remember(_SK* sk, Py_ssize_t nrep) noexcept nogil:
    """Renew the remembered rows of the repaired columns ``rep[:nrep]``: the entries
    > ``thr``, then entries == ``thr`` (then any), in row order, up to ``K_j`` rows. The
    first rule is applied to all columns in one blocked pass over ``X`` and ``tcap``."""
    cdef Py_ssize_t i, r, j, K, cnt, rows = sk.rows, mm = sk.m + 1
    cdef Py_ssize_t i0, i1
    cdef double t, v
    cdef double* tc
    cdef int gt
    cdef double sel[2]
    sel[0] = INFINITY
    sel[1] = 0.0
    for r in range(nrep):
        sk.bcount[r] = 0            # reused as the count of rows > thr
    i0 = 0
    while i0 < rows:                # blocked: the rows of X and tcap stay cached
        i1 = min(i0 + _SK_BLOCK, rows)
        for r in range(nrep):
            j = sk.rep[r]
            t = sk.thr[r]
            cnt = 0
            for i in range(i0, i1):
                v = sk.X[i * mm + j] * sk.rinv[i]
                gt = v > t
                sk.tcap[i * mm + j] = sel[gt]   # 0.0 if v > t else inf, without a branch
                cnt += gt
            sk.bcount[r] += cnt
        i0 = i1
    for r in range(nrep):
        j = sk.rep[r]
        K = rows - sk.kk[j]
        cnt = sk.bcount[r]
        if cnt >= K:
            continue
        tc = sk.tcap + j
        for i in range(rows):
            if cnt >= K:
                break
            if sk.X[i * mm + j] * sk.rinv[i] == sk.thr[r] and tc[i * mm] != 0.0:
                tc[i * mm] = 0.0
                cnt += 1
        for i in range(rows):
            if cnt >= K:
                break
            if tc[i * mm] != 0.0:
                tc[i * mm] = 0.0
                cnt += 1


cdef void _sk_denoms(_SK* sk) noexcept nogil:
    """Column scales of this iteration from the statistics of the last feed.

    The columns that need a repair are split (entries above / inside / below the band
    between their two statistics) in one pass over ``X`` in blocks of rows: a
    column-by-column walk would touch one cache line per entry."""
    cdef Py_ssize_t i, j, r, nrep = 0, mm = sk.m + 1, rows = sk.rows
    cdef Py_ssize_t i0, i1, a, bc
    cdef double denom, lo, hi, v, low
    cdef double* band
    cdef bint gt, lt
    sk.any_degen = False
    for j in range(sk.m):
        if sk.kk[j] > 0 and sk.kk[j] != rows:
            lo = sk.stats[2 * mm + j]
            hi = sk.stats[mm + j]
            if lo < hi:
                sk.rep[nrep] = j
                sk.above[nrep] = 0
                sk.bcount[nrep] = 0
                sk.low[nrep] = 0.0
                nrep += 1
    i0 = 0
    while i0 < rows:
        i1 = min(i0 + _SK_BLOCK, rows)
        for r in range(nrep):
            j = sk.rep[r]
            lo = sk.stats[2 * mm + j]
            hi = sk.stats[mm + j]
            band = sk.bands + r * rows
            a = sk.above[r]
            bc = sk.bcount[r]
            low = sk.low[r]
            for i in range(i0, i1):
                v = sk.X[i * mm + j] * sk.rinv[i]
                gt = v > hi
                lt = v < lo
                a += gt
                low += v if lt else 0.0     # + 0.0 leaves the (non-negative) sum as is
                band[bc] = v
                bc += not (gt or lt)
            sk.above[r] = a
            sk.bcount[r] = bc
            sk.low[r] = low
        i0 = i1
    r = 0
    for j in range(sk.m):
        if sk.kk[j] <= 0:
            denom = 0.0
        elif r < nrep and sk.rep[r] == j:
            denom = _sk_select(sk, j, r, sk.stats[2 * mm + j], sk.stats[mm + j], sk.thr + r)
            r += 1
        else:
            denom = sk.stats[j]
        if denom > 1e-300:
            sk.scale[j] = 1.0 / denom
            sk.keep[j] = ~(<uint64_t>0)
        else:
            sk.scale[j] = INFINITY
            sk.keep[j] = 0
            sk.any_degen = True
    if nrep > 0:
        _sk_remember(sk, nrep)


cdef void _sk_run(_SK* sk, int max_iter, double tol, int* iterations,
                  Poll* poll) noexcept nogil:
    """Sinkhorn on ``sk.X`` (see :func:`sinkhorn`); returns early when ``poll`` stops."""
    cdef int it
    cdef double diff
    iterations[0] = 0
    if max_iter <= 0:
        return
    _sk_pass(sk, False, True)
    for it in range(max_iter):
        if poll.stop():
            return
        _sk_denoms(sk)
        diff = _sk_pass(sk, True, it + 1 < max_iter)
        iterations[0] = it + 1
        if diff < tol:
            break


cdef class _SKBuffers:
    """Owns the arrays of a :c:type:`_SK`."""
    cdef vector[double] rinv, tcap, scale, clip, stats, bands, low, thr
    cdef vector[Py_ssize_t] kk, rep, above, bcount
    cdef vector[uint64_t] keep
    cdef _SK sk

    cdef void build(self, double* X, Py_ssize_t n, Py_ssize_t m, const int64_t* capacity):
        cdef Py_ssize_t rows = n + 1, mm = m + 1
        self.rinv.resize(rows)
        self.tcap.resize(rows * mm)
        self.scale.resize(mm)
        self.clip.resize(mm)
        self.stats.resize(3 * mm)
        self.bands.resize(rows * max(m, 1))
        self.low.resize(mm)
        self.thr.resize(mm)
        self.rep.resize(mm)
        self.above.resize(mm)
        self.bcount.resize(mm)
        self.kk.resize(mm)
        self.keep.resize(mm)
        self.sk.n = n
        self.sk.m = m
        self.sk.rows = rows
        self.sk.X = X
        self.sk.rinv = self.rinv.data()
        self.sk.tcap = self.tcap.data()
        self.sk.scale = self.scale.data()
        self.sk.clip = self.clip.data()
        self.sk.keep = self.keep.data()
        self.sk.any_degen = False
        self.sk.kk = self.kk.data()
        self.sk.stats = self.stats.data()
        self.sk.bands = self.bands.data()
        self.sk.low = self.low.data()
        self.sk.thr = self.thr.data()
        self.sk.rep = self.rep.data()
        self.sk.above = self.above.data()
        self.sk.bcount = self.bcount.data()
        _sk_setup(&self.sk, capacity)


# ---------------------------------------------------------------------------
# The annealing loop (Alg. 1, step 1): Q evaluation, then normalisation, per iteration
# ---------------------------------------------------------------------------

cdef struct _GAPlan:
    # Everything :func:`_ga_run` reads and writes; filled by graduated_assignment (with
    # the GIL) from its arguments, then run without it. Arrays are row-major.
    Py_ssize_t n              # IN    number of tasks
    Py_ssize_t m              # IN    number of clusters
    const _QPlan* q_out       # IN    how Q is summed over the out-edges; NULL: no edges
    const _QPlan* q_in        # IN    the same over the in-edges; NULL: symmetric request
    const uint8_t* compat     # IN    (n, m) 1 if task i may go to cluster j (NULL if n m = 0)
    double f_ok               # IN    score of an edge a cluster pair can carry
    double f_bad              # IN    score of one it cannot
    double w_out              # IN    weight of the out-edge sums: 1 / q_scale (symmetric)
                              #       or 0.5 / q_scale
    double w_in               # IN    weight of the in-edge sums: 0.5 / q_scale
    double beta0              # IN    initial inverse temperature (> 0)
    double beta_limit         # IN    last one: beta_f * (1 + 1e-12)
    double beta_r             # IN    growth rate of beta (> 1)
    int max_outer             # IN    softassign iterations per temperature
    int max_inner             # IN    Sinkhorn iterations per softassign iteration
    double tol_outer          # IN    stop a temperature when max |X - X_prev| < tol_outer
    double tol_inner          # IN    Sinkhorn's tolerance (see sinkhorn)
    double* X                 # INOUT (n + 1, m + 1) initial soft assignment -> result
    _SK* sk                   # INOUT Sinkhorn state over X (_SKBuffers.build)
    double* table             # scratch (max table_size of q_out, q_in): class table or
                              #         prefix rows of the Q evaluation
    double* V                 # scratch (m * (m + 1) + 1,) per-task table of the class path
    double* Q                 # scratch (n * m + 1,) the gradient
    double* prev              # scratch (n + 1, m + 1) X before the iteration
    long beta_steps           # OUT   temperatures visited
    long q_evals              # OUT   Q evaluations (softassign iterations)
    long sk_total             # OUT   Sinkhorn iterations, all together
    Poll* poll                # INOUT interrupts: _ga_run returns early once it stops


cdef void _ga_eval_q(_GAPlan* g) noexcept nogil:
    """``Q = w_out * Q_out(X) (+ w_in * Q_in(X))``: the gradient of the current ``X``."""
    cdef Py_ssize_t p
    if g.q_out == NULL:
        for p in range(g.n * g.m):
            g.Q[p] = 0.0
        return
    # A pass takes 0.1-0.3 s on 25 million links under load: each looks at the deadline
    # inside (every COALLOC_Q_POLL_WORK edges) and stops there, Q unfinished (_ga_run
    # returns then; the kernel raises and X is discarded)
    _q_eval(g.q_out, g.X, g.n, g.m, g.f_ok, g.f_bad, g.w_out, False, g.table, g.V, g.Q,
            g.poll)
    if g.q_in != NULL and not g.poll.stop():
        _q_eval(g.q_in, g.X, g.n, g.m, g.f_ok, g.f_bad, g.w_in, True, g.table, g.V, g.Q,
                g.poll)


cdef void _ga_normalise(_GAPlan* g, double beta) noexcept nogil:
    """``X = sinkhorn(softassign_exp(Q, beta))``: the new soft assignment from ``Q``."""
    cdef int sk_iters = 0
    _softassign_exp(g.Q, g.compat, g.n, g.m, beta, g.X)
    _sk_run(g.sk, g.max_inner, g.tol_inner, &sk_iters, g.poll)
    g.sk_total += sk_iters


cdef double _max_abs_diff(const double* a, const double* b, Py_ssize_t size) noexcept nogil:
    cdef Py_ssize_t p
    cdef double diff = 0.0, v
    for p in range(size):
        v = fabs(a[p] - b[p])
        if v > diff:
            diff = v
    return diff


cdef void _ga_run(_GAPlan* g) noexcept nogil:
    """The whole annealing loop of :func:`graduated_assignment` on ``g.X``."""
    cdef Py_ssize_t size = (g.n + 1) * (g.m + 1)
    cdef double beta = g.beta0
    cdef int outer
    g.beta_steps = 0
    g.q_evals = 0
    g.sk_total = 0
    while beta <= g.beta_limit:
        g.beta_steps += 1
        for outer in range(g.max_outer):
            if g.poll.stop():
                return
            memcpy(g.prev, g.X, size * sizeof(double))
            g.q_evals += 1
            _ga_eval_q(g)
            if g.poll.stop():
                return
            _ga_normalise(g, beta)
            if _max_abs_diff(g.X, g.prev, size) < g.tol_outer:
                break
        beta *= g.beta_r


# ---------------------------------------------------------------------------
# Python-visible kernels
# ---------------------------------------------------------------------------

cdef inline bint _greater(double a, double b) noexcept nogil:
    return a > b


cdef inline Py_ssize_t _count_ge(const double* row, Py_ssize_t m, double b) noexcept nogil:
    """Number of leading entries of the descending ``row[:m]`` that are ``>= b``."""
    cdef Py_ssize_t lo = 0, hi = m, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if row[mid] >= b:
            lo = mid + 1
        else:
            hi = mid
    return lo


def edge_ranks(
    const int64_t[::1] indptr,      # IN (n + 1,) CSR row pointer (only used for nnz checks)
    const int64_t[::1] indices,     # IN (nnz,)
    const double[::1] data,         # IN (nnz,) request bandwidth of every stored edge
    const double[:, ::1] bhat,      # IN (m, m) offer bandwidth
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
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
    deadline : KernelDeadline, optional
        The call's deadline (:func:`coalloc._shared.interrupt.kernel_deadline`; None: the
        calling thread's, built now). Polled per offer row, per table row and every 1,024
        edges (a million links take 20-30 ms, several times that under load).

    Returns
    -------
    rank : ndarray of int32, shape (nnz, m)
        ``rank[e, j]`` = number of clusters ``l`` with ``bhat[j, l] >= data[e]``.
    order : ndarray of int32, shape (m, m)
        ``order[j]`` = the clusters sorted by ``bhat[j, l]`` descending, ties broken by
        ascending index (a stable sort). Hence
        ``{l : bhat[j, l] >= data[e]} == set(order[j, :rank[e, j]])``.

    Raises
    ------
    TimeoutError
        Past the deadline or cancelled (the scope's own error inside a scope); the
        outputs are then discarded.
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
    cdef Py_ssize_t j, l, e, t, nvals = 0
    cdef double b
    cdef vector[double] vals
    cdef vector[int32_t] table
    cdef const int32_t* src
    cdef int32_t* dst
    # one poll for the three loops: a row of the sort (m log m), a row of the table (m
    # searches) or an edge (m copies) each counts one step; the clock every 1,024 steps
    cdef Poll poll = Poll(deadline_of(deadline), 1024)
    with nogil:
        keyed.resize(m)
        sorted_vals.resize(m * m)
        for j in range(m):
            if poll.stop():
                break
            for l in range(m):
                # ascending (-value, index) == descending value, ties by index
                keyed[l] = pair[double, int32_t](-bhat[j, l], <int32_t>l)
            sort(keyed.begin(), keyed.end())
            for l in range(m):
                order[j, l] = keyed[l].second
                sorted_vals[j * m + l] = bhat[j, keyed[l].second]
        # rank[e] depends only on where data[e] falls among the distinct offer values:
        # with vals = those values descending and t = #{vals >= b}, rank[e, j] =
        # #{l : bhat[j, l] >= vals[t - 1]} (0 for t == 0; also for a NaN b). So when
        # there are few distinct values, one search per edge and a row copy from a
        # table of rank rows replace m searches (same result). Not with NaN in bhat.
        if nnz >= 64 and m > 0 and not poll.stopped():
            vals.resize(m * m)
            for l in range(m * m):
                vals[l] = sorted_vals[l]
                if sorted_vals[l] != sorted_vals[l]:
                    nvals = -1
                    break
            if nvals == 0:
                sort(vals.begin(), vals.end(), _greater)
                for l in range(m * m):
                    if l == 0 or vals[l] != vals[nvals - 1]:
                        vals[nvals] = vals[l]
                        nvals += 1
                if nvals + 1 > nnz:
                    nvals = -1
        if poll.stopped():
            pass
        elif nvals > 0:
            table.resize((nvals + 1) * m)
            for t in range(nvals + 1):
                if poll.stop():
                    break
                for j in range(m):
                    table[t * m + j] = <int32_t>_count_ge(
                        sorted_vals.data() + j * m, m, vals[t - 1]) if t > 0 else 0
            for e in range(nnz):
                if poll.stop():
                    break
                if nvals <= 32:     # branch-free count (a search mispredicts)
                    t = 0
                    b = data[e]
                    for l in range(nvals):
                        t += vals[l] >= b
                else:
                    t = _count_ge(vals.data(), nvals, data[e])
                src = table.data() + t * m
                dst = &rank[e, 0]
                for j in range(m):
                    dst[j] = src[j]
        else:
            for e in range(nnz):
                if poll.stop():
                    break
                b = data[e]
                for j in range(m):
                    rank[e, j] = <int32_t>_count_ge(sorted_vals.data() + j * m, m, b)
    if poll.stopped():
        coalloc_raise_interrupt()
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
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
):
    """Compute the softassign gradient ``Q`` for the current ``X``.

    ``Q[i, j] = sum over stored edges e = (i, k) of sum over l < m of
    X[k, l] * F(data[e], bhat[j, l])`` with ``F = f_ok`` if ``data[e] <= bhat[j, l]``
    and ``f_bad`` otherwise; only real columns ``l < m`` count. The cost is
    O(nnz*m + n*m*(m + C)) through prefix sums of ``X[k]`` along ``order[j]``, with
    ``C`` the number of distinct rank rows (edge by edge, O(nnz*m + n*m^2), when that
    is cheaper).

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
    deadline : KernelDeadline, optional
        The call's deadline (:func:`coalloc._shared.interrupt.kernel_deadline`; None: the
        calling thread's, built now). Looked at in the set-up and inside the pass, between
        rows, once ``COALLOC_Q_POLL_WORK`` edges (a row counts its edges + 1) were summed
        since the last look (``coalloc/ctaap/softassign_qpass.h``), as
        :func:`graduated_assignment` does in each of its passes.

    Returns
    -------
    None

    Raises
    ------
    TimeoutError
        Past the deadline or cancelled (the scope's own error inside a scope); ``Q`` is
        then unfinished.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t m = order.shape[0]
    if n < 0:
        n = 0
    if (X.shape[0] != n + 1 or X.shape[1] != m + 1 or Q.shape[0] != n
            or Q.shape[1] != m or order.shape[1] != m
            or (rank.shape[0] > 0 and rank.shape[1] != m)):
        raise ValueError("inconsistent shapes")
    cdef _QPlanner plan = _QPlanner()
    cdef vector[double] table, V
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    if n > 0 and m > 0:
        plan.build(&indptr[0], &indices[0] if indices.shape[0] > 0 else NULL,
                   &rank[0, 0] if rank.shape[0] > 0 else NULL, &order[0, 0], n, m,
                   <Py_ssize_t>indptr[n], False, &poll)
        if not poll.stopped():
            table.resize(plan.table_size)
            V.resize(m * (m + 1) + 1)
            with nogil:
                _q_eval(&plan.plan, &X[0, 0], n, m, f_ok, f_bad, 1.0, False, table.data(),
                        V.data(), &Q[0, 0], &poll)
    if poll.stopped():
        coalloc_raise_interrupt()


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
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
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
    cdef _SKBuffers buf = _SKBuffers()
    buf.build(&X[0, 0], n, m, &capacity[0] if m > 0 else NULL)
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    with nogil:
        _sk_run(&buf.sk, max_iter, tol, &iters, &poll)
    if poll.stopped():
        coalloc_raise_interrupt()
    return iters


def graduated_assignment(
    links,                          # IN    RankedLinks: CSR structure of b and b.T, their ranks
    const uint8_t[:, ::1] compat,   # IN    (n, m)
    const int64_t[::1] capacity,    # IN    (m,)
    double[:, ::1] X,               # INOUT (n + 1, m + 1) initial value -> result
    coalloc_ga_plan plan,           # IN    the scalars (a dict, converted once)
    deadline=None,  # IN  KernelDeadline (None: the calling thread's)
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
    links : RankedLinks
        :class:`coalloc.ctaap.model.RankedLinks`: ``indptr``, ``indices`` (int64), the CSR
        structure of the request bandwidth ``b`` (out-edges), and ``rank``, ``order``
        (int32), its :func:`edge_ranks` against ``bhat``; ``t_indptr``, ``t_indices``,
        ``t_rank``, ``t_order``, the same of ``b.T`` (in-edges) against ``bhat.T``
        (ignored when ``symmetric``).
    compat : ndarray of uint8, shape (n, m)
        Nonzero where task ``i`` may be placed in cluster ``j``.
    capacity : ndarray of int64, shape (m,)
        Number of machines of every cluster.
    X : ndarray of float64, shape (n + 1, m + 1)
        INOUT: the initial soft assignment on entry, the final one on exit.
    plan : dict
        IN: the loop's scalars, the fields of ``coalloc_ga_plan``
        (``coalloc/ctaap/softassign_plan.h``), converted to the C struct once:

        ``symmetric`` (bool)
            Whether ``b`` and ``bhat`` are symmetric (then the in-edge pass equals the
            out-edge pass and is skipped; ``t_*`` are ignored).
        ``f_ok``, ``f_bad`` (float)
            Edge compatibility scores.
        ``q_scale`` (float)
            ``Q`` is divided by this (nonzero) number before exponentiation.
        ``beta0``, ``beta_f``, ``beta_r`` (float)
            Initial and final inverse temperature and growth rate; ``beta0 > 0`` and
            ``beta_r > 1`` are required (checked: otherwise the loop would not end).
        ``max_outer``, ``max_inner`` (int)
            Iteration limits of the softassign loop and of Sinkhorn.
        ``tol_outer``, ``tol_inner`` (float)
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
    cdef const int64_t[::1] indptr = links.indptr          # (n + 1,) of b
    cdef const int64_t[::1] indices = links.indices        # (nnz,)
    cdef const int32_t[:, ::1] rank = links.rank           # (nnz, m)
    cdef const int32_t[:, ::1] order = links.order         # (m, m)
    cdef const int64_t[::1] t_indptr = links.t_indptr      # (n + 1,) of b.T
    cdef const int64_t[::1] t_indices = links.t_indices    # (nnz,)
    cdef const int32_t[:, ::1] t_rank = links.t_rank       # (nnz, m)
    cdef const int32_t[:, ::1] t_order = links.t_order     # (m, m)
    cdef Py_ssize_t n = indptr.shape[0] - 1
    cdef Py_ssize_t m = order.shape[0]
    cdef bint symmetric = plan.symmetric != 0
    if n < 0:
        n = 0
    if not (plan.beta0 > 0.0 and plan.beta_r > 1.0):
        raise ValueError("graduated_assignment needs beta0 > 0 and beta_r > 1")
    if (X.shape[0] != n + 1 or X.shape[1] != m + 1 or order.shape[1] != m
            or capacity.shape[0] < m or compat.shape[0] != n
            or (n > 0 and compat.shape[1] != m)
            or (rank.shape[0] > 0 and rank.shape[1] != m)):
        raise ValueError("inconsistent shapes")
    if not symmetric and (t_indptr.shape[0] != n + 1 or t_order.shape[0] != m
            or t_order.shape[1] != m or (t_rank.shape[0] > 0 and t_rank.shape[1] != m)):
        raise ValueError("inconsistent shapes of the transposed request")

    cdef vector[double] V, Q, prev
    cdef _RawBuf table = _RawBuf()  # written whole by every Q pass before it is read
    cdef _QPlanner plan_out = _QPlanner()
    cdef _QPlanner plan_in = _QPlanner()
    cdef _SKBuffers sk = _SKBuffers()
    cdef _GAPlan g
    # One poll for the set-up (the plans' passes over the links) and the loop
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    if n > 0 and m > 0:
        plan_out.build(&indptr[0], &indices[0] if indices.shape[0] > 0 else NULL,
                       &rank[0, 0] if rank.shape[0] > 0 else NULL, &order[0, 0], n, m,
                       <Py_ssize_t>indptr[n], False, &poll)
        if not symmetric and not poll.stopped():
            plan_in.build(&t_indptr[0], &t_indices[0] if t_indices.shape[0] > 0 else NULL,
                          &t_rank[0, 0] if t_rank.shape[0] > 0 else NULL, &t_order[0, 0],
                          n, m, <Py_ssize_t>t_indptr[n], True, &poll)
        if poll.stopped():
            coalloc_raise_interrupt()
    table.alloc(max(plan_out.table_size, plan_in.table_size, 1) * sizeof(double))
    V.resize(m * (m + 1) + 1)
    Q.resize(n * m + 1)
    prev.resize((n + 1) * (m + 1))
    sk.build(&X[0, 0], n, m, &capacity[0] if m > 0 else NULL)

    g.n = n
    g.m = m
    g.q_out = &plan_out.plan if n > 0 and m > 0 else NULL
    g.q_in = &plan_in.plan if n > 0 and m > 0 and not symmetric else NULL
    g.compat = &compat[0, 0] if n > 0 and m > 0 else NULL
    g.f_ok = plan.f_ok
    g.f_bad = plan.f_bad
    g.w_out = 1.0 / plan.q_scale if symmetric else 0.5 / plan.q_scale
    g.w_in = 0.5 / plan.q_scale
    g.beta0 = plan.beta0
    g.beta_limit = plan.beta_f * (1.0 + 1e-12)
    g.beta_r = plan.beta_r
    g.max_outer = plan.max_outer
    g.max_inner = plan.max_inner
    g.tol_outer = plan.tol_outer
    g.tol_inner = plan.tol_inner
    g.X = &X[0, 0]
    g.sk = &sk.sk
    g.table = <double*>table.p
    g.V = V.data()
    g.Q = Q.data()
    g.prev = prev.data()
    g.poll = &poll
    with nogil:
        _ga_run(&g)
    if poll.stopped():
        coalloc_raise_interrupt()
    return int(g.beta_steps), int(g.q_evals), int(g.sk_total)


def _simd_level(level=None):
    """Testing aid: the SIMD path the step-1 kernels take, optionally capped.

    Parameters
    ----------
    level : int, optional
        Highest path allowed from now on in this process: 0 (portable code only), 1 (SSE2)
        or 2 (AVX, the default). Every path gives bit-identical results; the cap exists so
        that the tests can check that (and the benchmarks time each path) on one machine.

    Returns
    -------
    int
        The path taken before the call (0, 1 or 2), which is the CPU's best path under the
        previous cap.
    """
    global coalloc_simd_cap
    cdef int before = 2 if coalloc_has_avx() else 1 if coalloc_has_sse2() else 0
    if level is not None:
        if level not in (0, 1, 2):
            raise ValueError(f"level must be 0, 1 or 2, got {level!r}")
        coalloc_simd_cap = level
    return before
