# cython: language_level=3
"""Compiled search kernels of coalloc.collective (Cankar et al. 2013, Phases III-V).

window_max (the timetable maxima T_ij^t of every candidate start), select_and_swap (the
paper's SelectAndSwap, Phase IV), phase5 (Phase V) and swap_search (the default method's
deterministic best-improvement swaps). Every loop runs without the GIL. The NumPy/Python twin
is coalloc.collective._reference.search (same signatures, equal results bit for bit); random
choices come from the xoshiro256** generator of coalloc/common/xoshiro.hpp.
"""

import numpy as np
cimport cython
from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector
from libcpp.pair cimport pair
from libcpp.algorithm cimport nth_element, sort


cdef extern from "coalloc/common/interrupt.h" namespace "coalloc" nogil:
    # Ctrl-C / cancellation every ~50 ms (see the header): stop() is a decrement between
    # two looks at the clock; once it says True the loop ends and the caller raises.
    cdef cppclass Poll:
        Poll() noexcept
        Poll(unsigned int) noexcept
        bint stop() noexcept
        bint stopped() noexcept
    int coalloc_raise_interrupt() except -1


cdef extern from "coalloc/common/xoshiro.hpp" namespace "coalloc":
    cdef cppclass Xoshiro256ss:
        Xoshiro256ss(uint64_t seed) nogil
        int64_t below(int64_t bound) nogil

from libc.math cimport INFINITY


cdef inline Py_ssize_t _bisect_right(const double[::1] a, double x) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = a.shape[0], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef inline Py_ssize_t _bisect_left(const double[::1] a, double x) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = a.shape[0], mid
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def window_max(times, reserved, starts, double duration):
    """out[s, j, i] = max of reserved[j, i, k] over the segments meeting
    [starts[s], starts[s] + duration); shape (S, n, m). GIL released.

    Sorted starts use a monotone deque per node and property (O(K + S) each); unsorted
    starts a direct scan of each window (the same values)."""
    cdef const double[::1] t = np.ascontiguousarray(times, dtype=np.float64)
    cdef const double[:, :, ::1] res = np.ascontiguousarray(reserved, dtype=np.float64)
    cdef const double[::1] st = np.ascontiguousarray(starts, dtype=np.float64)
    cdef Py_ssize_t S = st.shape[0], n = res.shape[0], m = res.shape[1]
    out_arr = np.empty((S, n, m), dtype=np.float64)
    cdef double[:, :, ::1] out = out_arr
    cdef Py_ssize_t s, j, i, k, k0, k1, head, tail, nxt
    cdef double best, v
    cdef bint ordered = True
    cdef vector[Py_ssize_t] lo, hi, dq
    with nogil:
        lo.assign(S, 0)
        hi.assign(S, 0)
        for s in range(S):
            k0 = _bisect_right(t, st[s]) - 1
            k1 = _bisect_left(t, st[s] + duration)
            if k1 < k0 + 1:
                k1 = k0 + 1
            lo[s] = k0
            hi[s] = k1
            if s > 0 and (k0 < lo[s - 1] or k1 < hi[s - 1]):
                ordered = False
        if ordered and S > 0:
            dq.assign(t.shape[0] + 1, 0)
            for j in range(n):
                for i in range(m):
                    head = 0
                    tail = 0
                    nxt = lo[0]
                    for s in range(S):
                        while nxt < hi[s]:
                            v = res[j, i, nxt]
                            while tail > head and res[j, i, dq[tail - 1]] <= v:
                                tail -= 1
                            dq[tail] = nxt
                            tail += 1
                            nxt += 1
                        while dq[head] < lo[s]:
                            head += 1
                        out[s, j, i] = res[j, i, dq[head]]
        else:
            for s in range(S):
                k0 = lo[s]
                k1 = hi[s]
                for j in range(n):
                    for i in range(m):
                        best = res[j, i, k0]
                        for k in range(k0 + 1, k1):
                            v = res[j, i, k]
                            if v > best:
                                best = v
                        out[s, j, i] = best
    return out_arr


def screen(tmax, cap, e, d, Py_ssize_t count):
    """Per start s: code[s] = 0 (passes), 1 (fewer than count nodes meet every minimum) or
    2 (the count largest amounts of a property miss its total), with eligible[s], prop[s]
    and value[s] (see the twin coalloc.collective._reference.search.screen). GIL released."""
    cdef const double[:, :, ::1] tm = np.ascontiguousarray(tmax, dtype=np.float64)
    cdef const double[:, ::1] p = np.ascontiguousarray(cap, dtype=np.float64)
    cdef const double[::1] ee = np.ascontiguousarray(e, dtype=np.float64)
    cdef const double[::1] dd = np.ascontiguousarray(d, dtype=np.float64)
    cdef Py_ssize_t S = tm.shape[0], n = tm.shape[1], m = tm.shape[2]
    code_arr = np.zeros(S, dtype=np.int64)
    elig_arr = np.zeros(S, dtype=np.int64)
    prop_arr = np.full(S, -1, dtype=np.int64)
    val_arr = np.zeros(S, dtype=np.float64)
    cdef int64_t[::1] code = code_arr, elig = elig_arr, prop = prop_arr
    cdef double[::1] val = val_arr
    cdef vector[char] ok
    cdef vector[int64_t] meet
    cdef vector[double] vals
    cdef Py_ssize_t s, j, i, k, q, bi
    cdef double a, tot, worst, rel
    cdef bint good
    with nogil:
        ok.assign(n, 0)
        meet.assign(m, 0)
        for s in range(S):
            k = 0
            for i in range(m):
                meet[i] = 0
            for j in range(n):
                good = True
                for i in range(m):
                    if p[j, i] - tm[s, j, i] >= ee[i]:
                        meet[i] += 1
                    else:
                        good = False
                ok[j] = good
                if good:
                    k += 1
            elig[s] = k
            if k < count:
                code[s] = 1
                bi = 0
                for i in range(1, m):
                    if meet[i] < meet[bi]:
                        bi = i
                prop[s] = bi
                val[s] = <double>meet[bi]
                continue
            worst = 0.0
            bi = -1
            for i in range(m):
                vals.clear()
                for j in range(n):
                    if ok[j]:
                        vals.push_back(-(p[j, i] - tm[s, j, i]))
                if count < <Py_ssize_t>vals.size():
                    nth_element(vals.begin(), vals.begin() + (count - 1), vals.end())
                sort(vals.begin(), vals.begin() + count)
                tot = 0.0
                for q in range(count):
                    tot = tot - vals[q]
                if tot < dd[i]:
                    rel = (dd[i] - tot) / dd[i]
                    if bi < 0 or rel > worst:
                        worst = rel
                        bi = i
                        val[s] = tot
            if bi >= 0:
                code[s] = 2
                prop[s] = bi
    return code_arr, elig_arr, prop_arr, val_arr


cdef inline double _factor(const double[::1] d, double* st, double* sp, Py_ssize_t m) noexcept nogil:
    cdef double u = 1.0
    cdef Py_ssize_t i
    for i in range(m):
        u = u * ((d[i] + st[i]) / sp[i])
    return u


cdef inline double _deficit(const double[::1] d, double* sa, Py_ssize_t m) noexcept nogil:
    cdef double f = 0.0
    cdef Py_ssize_t i
    for i in range(m):
        if sa[i] < d[i]:
            f = f + (sa[i] - d[i]) / d[i]
    return f


def select_and_swap(avail, tmax, cap, d, Py_ssize_t count, Py_ssize_t l1, seed):
    """SelectAndSwap (Phase IV) over the rows of avail; returns (sel, ok, attempts).
    See coalloc.collective._reference.search.select_and_swap. GIL released."""
    cdef const double[:, ::1] a = np.ascontiguousarray(avail, dtype=np.float64)
    cdef const double[:, ::1] tm = np.ascontiguousarray(tmax, dtype=np.float64)
    cdef const double[:, ::1] p = np.ascontiguousarray(cap, dtype=np.float64)
    cdef const double[::1] dd = np.ascontiguousarray(d, dtype=np.float64)
    cdef Py_ssize_t r = a.shape[0], m = a.shape[1]
    if count < 1 or count > r or m < 1:
        raise ValueError("select_and_swap needs 1 <= count <= rows and at least one property")
    cdef uint64_t sd = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    sel_arr = np.empty(count, dtype=np.int64)
    cdef int64_t[::1] sel = sel_arr
    cdef vector[char] in_a
    cdef vector[double] sa, st, sp, na, util
    cdef vector[Py_ssize_t] ties, perm, props
    cdef vector[pair[double, Py_ssize_t]] order
    cdef Py_ssize_t k, q, j, i, v, rm, out, w, tmp, pos, n_a, c, mm, limit, kk
    cdef double best, top
    cdef bint canswap, viol, ok
    cdef Xoshiro256ss* rng
    cdef Poll poll = Poll(1)  # a swap attempt sorts the rows: look at the clock each time
    with nogil:
        rng = new Xoshiro256ss(sd)
        in_a.assign(r, 1)
        sa.assign(m, 0.0); st.assign(m, 0.0); sp.assign(m, 0.0); na.assign(m, 0.0)
        util.assign(m, 0.0)
        for k in range(count):
            q = k % m
            best = 0.0
            pos = -1
            for j in range(r):
                if in_a[j] and (pos < 0 or a[j, q] > best):
                    best = a[j, q]
                    pos = j
            ties.clear()
            for j in range(r):
                if in_a[j] and a[j, q] == best:
                    ties.push_back(j)
            j = ties[rng.below(<int64_t>ties.size())]
            sel[k] = j
            in_a[j] = 0
        for k in range(count):
            j = sel[k]
            for i in range(m):
                sa[i] = sa[i] + a[j, i]
        for k in range(count):
            j = sel[k]
            for i in range(m):
                st[i] = st[i] + tm[j, i]
        for k in range(count):
            j = sel[k]
            for i in range(m):
                sp[i] = sp[i] + p[j, i]
        n_a = r - count
        c = 1
        mm = 0
        limit = count * l1
        perm.assign(count, 0)
        while True:
            if poll.stop():
                break
            viol = False
            for i in range(m):
                if sa[i] < dd[i]:
                    viol = True
            if not (viol and c <= limit and mm < n_a):
                break
            mm += 1
            kk = 0
            for i in range(m):
                if sp[i] > 0:
                    util[i] = (dd[i] + st[i]) / sp[i]
                else:
                    util[i] = INFINITY
            top = util[0]
            for i in range(1, m):
                if util[i] > top:
                    top = util[i]
            props.clear()
            for i in range(m):
                if util[i] == top:
                    props.push_back(i)
            v = props[rng.below(<int64_t>props.size())]
            order.clear()
            for j in range(r):
                if in_a[j]:
                    order.push_back(pair[double, Py_ssize_t](-a[j, v], j))
            sort(order.begin(), order.end())
            rm = order[mm - 1].second
            for q in range(count):
                perm[q] = q
            for q in range(count - 1, 0, -1):
                w = rng.below(q + 1)
                tmp = perm[q]; perm[q] = perm[w]; perm[w] = tmp
            while True:
                out = sel[perm[kk]]
                for i in range(m):
                    na[i] = (sa[i] - a[out, i]) + a[rm, i]
                canswap = True
                for i in range(m):
                    if not (na[i] >= (sa[i] if sa[i] < dd[i] else dd[i])):
                        canswap = False
                if canswap:
                    sel[perm[kk]] = rm
                    in_a[rm] = 0
                    in_a[out] = 1
                    for i in range(m):
                        sa[i] = na[i]
                        st[i] = (st[i] - tm[out, i]) + tm[rm, i]
                        sp[i] = (sp[i] - p[out, i]) + p[rm, i]
                    mm = 0
                kk += 1
                c += 1
                if not (kk < count and c <= limit and not canswap):
                    break
        ok = True
        for i in range(m):
            if sa[i] < dd[i]:
                ok = False
        del rng
    if poll.stopped():
        coalloc_raise_interrupt()
    return sel_arr, bool(ok), int(c - 1)


def phase5(avail, tmax, cap, d, sel_in, Py_ssize_t l2, seed):
    """Phase V: N*l2 random swaps kept when admissible and not worse; returns (sel, accepted).
    See coalloc.collective._reference.search.phase5. GIL released."""
    cdef const double[:, ::1] a = np.ascontiguousarray(avail, dtype=np.float64)
    cdef const double[:, ::1] tm = np.ascontiguousarray(tmax, dtype=np.float64)
    cdef const double[:, ::1] p = np.ascontiguousarray(cap, dtype=np.float64)
    cdef const double[::1] dd = np.ascontiguousarray(d, dtype=np.float64)
    sel_arr = np.array(sel_in, dtype=np.int64, copy=True).ravel()
    cdef int64_t[::1] sel = sel_arr
    cdef Py_ssize_t r = a.shape[0], m = a.shape[1], count = sel.shape[0]
    if count < 1 or count > r:
        raise ValueError("phase5 needs 1 <= len(sel) <= rows")
    cdef uint64_t sd = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    cdef vector[char] chosen
    cdef vector[int64_t] rest
    cdef vector[double] sa, st, sp, na, nt, np_
    cdef Py_ssize_t c, c0, c1, i, j, ps, pa, out, inn, accepted = 0
    cdef double cur, f
    cdef bint ok
    cdef Xoshiro256ss* rng
    cdef Poll poll = Poll(1)  # asked every 4096 swaps (a swap is ~20 ns: kept off its path)
    with nogil:
        chosen.assign(r, 0)
        for j in range(count):
            chosen[sel[j]] = 1
        for j in range(r):
            if not chosen[j]:
                rest.push_back(j)
        if rest.size() > 0:
            rng = new Xoshiro256ss(sd)
            sa.assign(m, 0.0); st.assign(m, 0.0); sp.assign(m, 0.0)
            na.assign(m, 0.0); nt.assign(m, 0.0); np_.assign(m, 0.0)
            for j in range(count):
                for i in range(m):
                    sa[i] = sa[i] + a[sel[j], i]
            for j in range(count):
                for i in range(m):
                    st[i] = st[i] + tm[sel[j], i]
            for j in range(count):
                for i in range(m):
                    sp[i] = sp[i] + p[sel[j], i]
            cur = _factor(dd, &st[0], &sp[0], m)
            c0 = 0
            while c0 < count * l2:  # blocks of 4096 swaps, a poll between two
                if poll.stop():
                    break
                c1 = c0 + 4096 if c0 + 4096 < count * l2 else count * l2
                for c in range(c0, c1):
                    ps = rng.below(count)
                    pa = rng.below(<int64_t>rest.size())
                    out = sel[ps]
                    inn = rest[pa]
                    ok = True
                    for i in range(m):
                        na[i] = (sa[i] - a[out, i]) + a[inn, i]
                        if not (na[i] >= dd[i]):
                            ok = False
                    if not ok:
                        continue
                    for i in range(m):
                        nt[i] = (st[i] - tm[out, i]) + tm[inn, i]
                        np_[i] = (sp[i] - p[out, i]) + p[inn, i]
                    f = _factor(dd, &nt[0], &np_[0], m)
                    if f >= cur:
                        sel[ps] = inn
                        rest[pa] = out
                        for i in range(m):
                            sa[i] = na[i]; st[i] = nt[i]; sp[i] = np_[i]
                        cur = f
                        accepted += 1
                c0 = c1
            del rng
    if poll.stopped():
        coalloc_raise_interrupt()
    return sel_arr, int(accepted)


def swap_search(avail, tmax, cap, d, sel_in, Py_ssize_t max_rounds):
    """Deterministic best-improvement swaps (repair the totals, then maximise the estimated
    utilisation factor); returns (sel, rounds). See
    coalloc.collective._reference.search.swap_search. GIL released."""
    cdef const double[:, ::1] a = np.ascontiguousarray(avail, dtype=np.float64)
    cdef const double[:, ::1] tm = np.ascontiguousarray(tmax, dtype=np.float64)
    cdef const double[:, ::1] p = np.ascontiguousarray(cap, dtype=np.float64)
    cdef const double[::1] dd = np.ascontiguousarray(d, dtype=np.float64)
    sel_arr = np.array(sel_in, dtype=np.int64, copy=True).ravel()
    cdef int64_t[::1] sel = sel_arr
    cdef Py_ssize_t r = a.shape[0], m = a.shape[1], count = sel.shape[0]
    if count < 1 or count > r:
        raise ValueError("swap_search needs 1 <= len(sel) <= rows")
    cdef vector[char] chosen
    cdef vector[double] sa, st, sp, na, nt, np_
    cdef Py_ssize_t rounds = 0, pp, q, i, j, out, bp, bq
    cdef double deficit, cur, best, val, nd
    cdef bint feasible
    cdef Poll poll = Poll(1)
    with nogil:
        chosen.assign(r, 0)
        for j in range(count):
            chosen[sel[j]] = 1
        sa.assign(m, 0.0); st.assign(m, 0.0); sp.assign(m, 0.0)
        na.assign(m, 0.0); nt.assign(m, 0.0); np_.assign(m, 0.0)
        for j in range(count):
            for i in range(m):
                sa[i] = sa[i] + a[sel[j], i]
        for j in range(count):
            for i in range(m):
                st[i] = st[i] + tm[sel[j], i]
        for j in range(count):
            for i in range(m):
                sp[i] = sp[i] + p[sel[j], i]
        while rounds < max_rounds:
            if poll.stop():
                break
            deficit = _deficit(dd, &sa[0], m)
            feasible = deficit == 0.0
            if feasible:
                cur = _factor(dd, &st[0], &sp[0], m)
            else:
                cur = deficit
            best = cur
            bp = -1
            bq = -1
            for pp in range(count):
                out = sel[pp]
                for q in range(r):
                    if chosen[q]:
                        continue
                    for i in range(m):
                        na[i] = (sa[i] - a[out, i]) + a[q, i]
                    nd = _deficit(dd, &na[0], m)
                    if feasible:
                        if nd != 0.0:
                            continue
                        for i in range(m):
                            nt[i] = (st[i] - tm[out, i]) + tm[q, i]
                            np_[i] = (sp[i] - p[out, i]) + p[q, i]
                        val = _factor(dd, &nt[0], &np_[0], m)
                    else:
                        val = nd
                    if val > best:
                        best = val
                        bp = pp
                        bq = q
            if bp < 0:
                break
            out = sel[bp]
            for i in range(m):
                sa[i] = (sa[i] - a[out, i]) + a[bq, i]
                st[i] = (st[i] - tm[out, i]) + tm[bq, i]
                sp[i] = (sp[i] - p[out, i]) + p[bq, i]
            chosen[out] = 0
            chosen[bq] = 1
            sel[bp] = bq
            rounds += 1
    if poll.stopped():
        coalloc_raise_interrupt()
    return sel_arr, int(rounds)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
@cython.cdivision(True)
def scan_screen(times, reserved, nodes, starts, double duration, cap, e, d,
                Py_ssize_t count, Py_ssize_t first_block=8, Py_ssize_t max_block=64):
    """The screening loop of the default method in one call (GIL released).

    Starts are taken in order, a first block of first_block starts, then blocks of max_block
    starts; for a block the window maxima of the rows ``nodes`` of ``reserved`` are computed
    (as window_max) and each start is screened (as screen) until the first start that passes.
    Returns (stop, code, eligible, prop, value, tmax): stop = index of the first passing start
    (S if none), the screen outputs of length S (filled for starts 0..stop) and the window
    maxima (len(nodes), m) at starts[stop] (zeros when stop == S). Twin:
    coalloc.collective._reference.search.scan_screen."""
    cdef const double[::1] t = np.ascontiguousarray(times, dtype=np.float64)
    cdef const double[:, :, ::1] res = np.ascontiguousarray(reserved, dtype=np.float64)
    cdef const int64_t[::1] nd = np.ascontiguousarray(nodes, dtype=np.int64)
    cdef const double[::1] st = np.ascontiguousarray(starts, dtype=np.float64)
    cdef const double[:, ::1] p = np.ascontiguousarray(cap, dtype=np.float64)
    cdef const double[::1] ee = np.ascontiguousarray(e, dtype=np.float64)
    cdef const double[::1] dd = np.ascontiguousarray(d, dtype=np.float64)
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1]
    if p.shape[0] != n or p.shape[1] != m or ee.shape[0] != m or dd.shape[0] != m:
        raise ValueError("cap must be (len(nodes), m), e and d of length m")
    if first_block < 1 or max_block < first_block:
        raise ValueError("need 1 <= first_block <= max_block")
    if n and (np.min(nodes) < 0 or np.max(nodes) >= res.shape[0]):
        raise ValueError("nodes must index rows of reserved")
    if S and t.shape[0] == 0:
        raise ValueError("times must not be empty")
    code_arr = np.zeros(S, dtype=np.int64)
    elig_arr = np.zeros(S, dtype=np.int64)
    prop_arr = np.full(S, -1, dtype=np.int64)
    val_arr = np.zeros(S, dtype=np.float64)
    tmax_arr = np.zeros((n, m), dtype=np.float64)
    cdef int64_t[::1] code = code_arr, elig = elig_arr, prop = prop_arr
    cdef double[::1] val = val_arr
    cdef double[:, ::1] tout = tmax_arr
    cdef vector[Py_ssize_t] lo, hi, dq
    cdef vector[double] buf, row, vals, tile
    cdef vector[char] ok
    cdef vector[int64_t] meet
    cdef Py_ssize_t s, j, jj, i, k, k0, k1, head, tail, nxt, b0, b1, B, sl, q, bi, Bn, j0, jt
    cdef Py_ssize_t stop = S
    cdef double best, v, tot, worst, rel
    cdef bint ordered = True, good
    cdef const double* rowp
    cdef Py_ssize_t* dqp
    cdef double* tp
    cdef Poll poll = Poll(1)
    with nogil:
        lo.assign(S, 0)
        hi.assign(S, 0)
        for s in range(S):
            k0 = _bisect_right(t, st[s]) - 1
            if k0 < 0:
                k0 = 0
            k1 = _bisect_left(t, st[s] + duration)
            if k1 < k0 + 1:
                k1 = k0 + 1
            lo[s] = k0
            hi[s] = k1
            if s > 0 and (k0 < lo[s - 1] or k1 < hi[s - 1]):
                ordered = False
        dq.assign(t.shape[0] + 1, 0)
        ok.assign(n, 0)
        meet.assign(m, 0)
        row.assign(n * m, 0.0)
        b0 = 0
        B = first_block
        while b0 < S and stop == S:
            if poll.stop():
                break
            b1 = b0 + B
            if b1 > S:
                b1 = S
            buf.assign((b1 - b0) * n * m, 0.0)
            # window maxima of the block, buf[(s - b0) * n * m + jj * m + i], computed
            # node by node in tiles of 16 nodes (contiguous in s), then transposed
            Bn = b1 - b0
            tile.assign(16 * m * Bn, 0.0)
            for j0 in range(0, n, 16):
                jt = n - j0
                if jt > 16:
                    jt = 16
                for jj in range(j0, j0 + jt):
                    j = nd[jj]
                    for i in range(m):
                        q = ((jj - j0) * m + i) * Bn - b0
                        if ordered:
                            rowp = &res[j, i, 0]
                            dqp = &dq[0]
                            tp = &tile[0]
                            head = 0
                            tail = 0
                            nxt = lo[b0]
                            for s in range(b0, b1):
                                k1 = hi[s]
                                while nxt < k1:
                                    v = rowp[nxt]
                                    while tail > head and rowp[dqp[tail - 1]] <= v:
                                        tail -= 1
                                    dqp[tail] = nxt
                                    tail += 1
                                    nxt += 1
                                k0 = lo[s]
                                while dqp[head] < k0:
                                    head += 1
                                tp[q + s] = rowp[dqp[head]]
                        else:
                            for s in range(b0, b1):
                                best = res[j, i, lo[s]]
                                for k in range(lo[s] + 1, hi[s]):
                                    v = res[j, i, k]
                                    if v > best:
                                        best = v
                                tile[q + s] = best
                for s in range(Bn):
                    for q in range(jt * m):
                        buf[s * n * m + j0 * m + q] = tile[q * Bn + s]
            # the screens, start by start, up to the first start that passes
            for s in range(b0, b1):
                sl = (s - b0) * n * m
                k = 0
                for i in range(m):
                    meet[i] = 0
                for jj in range(n):
                    good = True
                    for i in range(m):
                        if p[jj, i] - buf[sl + jj * m + i] >= ee[i]:
                            meet[i] += 1
                        else:
                            good = False
                    ok[jj] = good
                    if good:
                        k += 1
                elig[s] = k
                if k < count:
                    code[s] = 1
                    bi = 0
                    for i in range(1, m):
                        if meet[i] < meet[bi]:
                            bi = i
                    prop[s] = bi
                    val[s] = <double>meet[bi]
                    continue
                worst = 0.0
                bi = -1
                for i in range(m):
                    vals.clear()
                    for jj in range(n):
                        if ok[jj]:
                            vals.push_back(-(p[jj, i] - buf[sl + jj * m + i]))
                    if count < <Py_ssize_t>vals.size():
                        nth_element(vals.begin(), vals.begin() + (count - 1), vals.end())
                    sort(vals.begin(), vals.begin() + count)
                    tot = 0.0
                    for q in range(count):
                        tot = tot - vals[q]
                    if tot < dd[i]:
                        rel = (dd[i] - tot) / dd[i]
                        if bi < 0 or rel > worst:
                            worst = rel
                            bi = i
                            val[s] = tot
                if bi >= 0:
                    code[s] = 2
                    prop[s] = bi
                    continue
                stop = s
                for jj in range(n):
                    for i in range(m):
                        tout[jj, i] = buf[sl + jj * m + i]
                break
            b0 = b1
            B = max_block
    if poll.stopped():
        coalloc_raise_interrupt()
    return stop, code_arr, elig_arr, prop_arr, val_arr, tmax_arr


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
def decrease_starts(times, reserved, nodes, double lo, double hi):
    """lo and the breakpoints times[k] in (lo, hi] where a reserved amount of a row in
    nodes falls (reserved[j, i, k] < reserved[j, i, k - 1]), ascending (GIL released).
    Twin: coalloc.collective._reference.search.decrease_starts."""
    cdef const double[::1] t = np.ascontiguousarray(times, dtype=np.float64)
    cdef const double[:, :, ::1] res = np.ascontiguousarray(reserved, dtype=np.float64)
    cdef const int64_t[::1] nd = np.ascontiguousarray(nodes, dtype=np.int64)
    cdef Py_ssize_t K = t.shape[0], n = nd.shape[0], m = res.shape[1], jj, i, k, c = 1
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if n and (np.min(nodes) < 0 or np.max(nodes) >= res.shape[0]):
        raise ValueError("nodes must index rows of reserved")
    cdef vector[char] drop
    cdef const double* rowp
    out_arr = np.empty(K + 1, dtype=np.float64)
    cdef double[::1] out = out_arr
    with nogil:
        drop.assign(K, 0)
        out[0] = lo
        for jj in range(n):
            for i in range(m):
                rowp = &res[nd[jj], i, 0]
                for k in range(1, K):
                    if rowp[k] < rowp[k - 1]:
                        drop[k] = 1
        for k in range(1, K):
            if drop[k] and t[k] > lo and t[k] <= hi:
                out[c] = t[k]
                c += 1
    return out_arr[:c].copy()
