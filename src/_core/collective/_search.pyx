# cython: language_level=3
"""Compiled search kernels of coalloc.collective (Cankar et al. 2013, Phases III-V).

window_max (the timetable maxima T_ij^t of every candidate start, by a sparse table per
node and property), screen and scan_screen (the default method's per-start screens, one
shared inline helper; scan_screen runs the whole screening loop up to the first start that
passes), weighted_screen (issue 40: the equal weights' proof that no set exists, for the
starts that passed), block_screen (screen and weighted_screen in one pass, issue 40),
pruned_screen (block_screen over the nodes that can matter per sub-block of starts),
window_screen (window_max_rows and pruned_screen without the maxima of every node at every
start), block_maxima and block_minima (the pool's extrema of blocks of segments that they read),
decrease_starts (the candidate starts), select_and_swap (the paper's SelectAndSwap, Phase
IV), phase5 (Phase V) and swap_search (the default method's
deterministic best-improvement swaps). Every loop runs without the GIL. The NumPy/Python twin
is coalloc.collective._reference.search (same signatures, equal results bit for bit); random
choices come from the xoshiro256** generator of coalloc/common/xoshiro.hpp.

One interface (docs/architecture.md, "Kernel arguments"): every array is a typed memoryview,
C-contiguous, tagged IN (const, read only), OUT (caller-allocated, every entry written) or
INOUT (read, then overwritten); the Python caller (coalloc.collective.core.Kernels) converts
and allocates, the kernels only check shapes. They return scalars only.

The family's tolerance rule (coalloc.collective.model.TOLERANCE): every kernel that compares
amounts takes tol (per property, tau_i; zeros: none); an amount meets a minimum e_i when
a >= e_i - tau_i and count amounts meet a total d_i when their sum is >= d_i - count tau_i.
The utilisation factor takes 1 for a property the set has none of (0/0: nothing needed,
nothing wasted), so that no NaN reaches a comparison.
"""

import numpy as np
cimport cython
from libc.stdint cimport int64_t, uint64_t
from libcpp.vector cimport vector
from libcpp.pair cimport pair
from libcpp.algorithm cimport nth_element, sort


from coalloc.common.interrupt cimport Poll, coalloc_raise_interrupt, deadline_of
from coalloc.common.xoshiro cimport Xoshiro256ss
from libc.math cimport INFINITY, NAN, fabs, log
from libc.string cimport memcpy
from libc.stdlib cimport free, malloc


cdef int _check_rows(const int64_t[::1] nd, Py_ssize_t rows, const double[::1] st) except -1:
    """The kernels' shared argument checks: every entry of ``nd`` a row of ``reserved``
    (``rows`` of them) and, when given, the starts ``st`` non-decreasing."""
    cdef Py_ssize_t j, s
    for j in range(nd.shape[0]):
        if nd[j] < 0 or nd[j] >= rows:
            raise ValueError("nodes must index rows of reserved")
    if st is not None:
        for s in range(1, st.shape[0]):
            if not (st[s] >= st[s - 1]):
                raise ValueError("starts must be non-decreasing")
    return 0


cdef inline double _mx(double a, double b) noexcept nogil:
    return a if a > b else b


cdef inline double _mn(double a, double b) noexcept nogil:
    return a if a < b else b


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


cdef inline Py_ssize_t _windows(const double[::1] t, const double[::1] st, double duration,
                                 Py_ssize_t* lo, Py_ssize_t* hi, Py_ssize_t* lev,
                                 Py_ssize_t* off) noexcept nogil:
    """Segments of each start's window: lo[s] (the segment holding st[s], 0 if before the
    first breakpoint) to hi[s] (exclusive, at least lo[s] + 1), the sparse-table level
    lev[s] = floor(log2(hi - lo)) and off[s] = hi - 2**lev: the window is the union of
    [lo, lo + 2**lev) and [off, hi). Returns the largest level."""
    cdef Py_ssize_t s, k0, k1, l, top = 0
    for s in range(st.shape[0]):
        k0 = _bisect_right(t, st[s]) - 1
        if k0 < 0:
            k0 = 0
        k1 = _bisect_left(t, st[s] + duration)
        if k1 < k0 + 1:
            k1 = k0 + 1
        lo[s] = k0
        hi[s] = k1
        l = 0
        while (<Py_ssize_t>2 << l) <= k1 - k0:
            l += 1
        lev[s] = l
        off[s] = k1 - (<Py_ssize_t>1 << l)
        if l > top:
            top = l
    return top


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void _row_maxima(const double* r, Py_ssize_t kmin, Py_ssize_t span, Py_ssize_t levels,
                             const Py_ssize_t* lo, const Py_ssize_t* lev, const Py_ssize_t* off,
                             Py_ssize_t s0, Py_ssize_t s1, double* tab, double* dst,
                             Py_ssize_t stride) noexcept nogil:
    """Window maxima of one timetable row r for the starts s0..s1-1, without branches on the
    data: a sparse table over the segments kmin..kmin+span-1 (level l holds the maxima of
    2**l consecutive segments, tab[(l - 1) * span + x] for l >= 1), then each window is the
    larger of two table entries. dst[(s - s0) * stride] receives the maximum for start s."""
    cdef const double* prev = r + kmin
    cdef double* cur
    cdef Py_ssize_t l, h, x, s
    cdef double a, b
    for l in range(1, levels + 1):
        h = <Py_ssize_t>1 << (l - 1)
        cur = tab + (l - 1) * span
        for x in range(span - 2 * h + 1):
            a = prev[x]
            b = prev[x + h]
            cur[x] = a if a > b else b
        prev = cur
    for s in range(s0, s1):
        l = lev[s]
        prev = r + kmin if l == 0 else tab + (l - 1) * span
        a = prev[lo[s] - kmin]
        b = prev[off[s] - kmin]
        dst[(s - s0) * stride] = a if a > b else b


@cython.boundscheck(False)
@cython.wraparound(False)
def window_max(const double[::1] t,             # IN  (K,) breakpoints, ascending
               const double[:, :, ::1] res,     # IN  (n, m, K) reserved amounts
               const double[::1] st,            # IN  (S,) starts
               double duration,                 # IN
               double[:, :, ::1] out):          # OUT (S, n, m)
    """out[s, j, i] = max of res[j, i, k] over the segments meeting
    [st[s], st[s] + duration). GIL released.

    A sparse table per node and property over the segments the windows cover (any order of
    starts), each window the larger of two entries: no data-dependent branches."""
    cdef Py_ssize_t S = st.shape[0], n = res.shape[0], m = res.shape[1]
    if S and t.shape[0] == 0:
        raise ValueError("times must not be empty")
    if res.shape[2] != t.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    if out.shape[0] != S or out.shape[1] != n or out.shape[2] != m:
        raise ValueError("out must be (len(starts), n, m)")
    cdef Py_ssize_t s, j, i, kmin, kmax, levels
    cdef vector[Py_ssize_t] lo, hi, lev, off
    cdef vector[double] tab
    if S == 0 or n == 0 or m == 0:
        return
    with nogil:
        lo.resize(S); hi.resize(S); lev.resize(S); off.resize(S)
        levels = _windows(t, st, duration, &lo[0], &hi[0], &lev[0], &off[0])
        kmin = lo[0]
        kmax = hi[0]
        for s in range(S):
            if lo[s] < kmin:
                kmin = lo[s]
            if hi[s] > kmax:
                kmax = hi[s]
        tab.resize(levels * (kmax - kmin) + 1)
        for j in range(n):
            for i in range(m):
                _row_maxima(&res[j, i, 0], kmin, kmax - kmin, levels, &lo[0], &lev[0],
                            &off[0], 0, S, &tab[0], &out[0, j, i], n * m)


cdef struct ScreenArgs:
    # A Demand and a ScreenOut record (coalloc.collective.core) as the screens read them:
    # pointers into the records' arrays (NULL for an empty one) and the count.
    const double* e             # (m,) minimums
    const double* d             # (m,) totals
    const double* tol           # (m,) tolerance tau
    Py_ssize_t count
    int64_t* code               # (S,) OUT
    int64_t* elig               # (S,) OUT
    int64_t* prop               # (S,) OUT
    double* val                 # (S,) OUT


cdef ScreenArgs _screen_args(demand, out, Py_ssize_t S, Py_ssize_t m) except *:
    """The one unpacking of the screens' records (screen, block_screen, scan_screen):
    ``demand``'s e, d and tol as typed views of length m, ``out``'s four arrays of length S
    (a wrong dtype, layout or length raises), the outputs set to code 0, elig 0, prop -1,
    value 0, and pointers into the arrays (the records, tuples, hold them for the call)."""
    if not isinstance(demand, tuple) or not isinstance(out, tuple):
        raise TypeError("demand and out must be Demand and ScreenOut records")
    cdef const double[::1] ee = demand.e
    cdef const double[::1] dd = demand.d
    cdef const double[::1] tl = demand.tol
    cdef int64_t[::1] code = out.code
    cdef int64_t[::1] elig = out.elig
    cdef int64_t[::1] prop = out.prop
    cdef double[::1] val = out.value
    if ee.shape[0] != m or dd.shape[0] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    _check_tol(tl, m)
    _check_outs(S, code, elig, prop, val)
    code[:] = 0
    elig[:] = 0
    prop[:] = -1
    val[:] = 0.0
    cdef ScreenArgs sa
    sa.count = demand.count
    sa.e = &ee[0] if m else NULL
    sa.d = &dd[0] if m else NULL
    sa.tol = &tl[0] if m else NULL
    sa.code = &code[0] if S else NULL
    sa.elig = &elig[0] if S else NULL
    sa.prop = &prop[0] if S else NULL
    sa.val = &val[0] if S else NULL
    return sa


#: The screens sort their selections (the count largest amounts or scores of a start and the
#: threshold carried to the next one) by _sort_asc, a radix sort, from this many values on;
#: below it, nth_element and sort (issue 40: at N = 1,024 two nth_element and the sort of
#: the 1,024 largest were 75 % of block_screen).
cdef enum:
    _RADIX_MIN = 192


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline uint64_t _dkey(double x) noexcept nogil:
    """An unsigned key in the order of the doubles (-0.0 just before +0.0; no NaN)."""
    cdef uint64_t u
    memcpy(&u, &x, 8)
    if u >> 63:
        return ~u
    return u | (<uint64_t>1 << 63)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _sort_asc(double* v, Py_ssize_t c) noexcept nogil:
    """Sort v[0:c] ascending (the same array as std::sort; equal doubles are equal values,
    so any order among them gives the same sums): keys in the doubles' order, least
    significant digit first on their upper 32 bits (bytes whose digit every key shares are
    skipped), then every run of keys equal there sorted on the whole key (std::sort)."""
    cdef uint64_t* ka
    cdef Py_ssize_t hist[4][256]
    cdef Py_ssize_t q, b, r, t, x
    cdef uint64_t k
    cdef uint64_t* src
    cdef uint64_t* dst
    cdef uint64_t* tmp
    cdef int pas, skip
    if c < 2:
        return
    ka = <uint64_t*>malloc(2 * c * sizeof(uint64_t))  # scratch, not initialised
    if ka == NULL:  # no memory: the comparison sort, in place
        sort(v, v + c)
        return
    src = ka
    dst = ka + c
    for pas in range(4):
        for b in range(256):
            hist[pas][b] = 0
    for q in range(c):
        k = _dkey(v[q])
        src[q] = k
        hist[0][(k >> 32) & 255] += 1
        hist[1][(k >> 40) & 255] += 1
        hist[2][(k >> 48) & 255] += 1
        hist[3][k >> 56] += 1
    for pas in range(4):
        skip = 0
        t = 0
        for b in range(256):
            x = hist[pas][b]
            if x == c:
                skip = 1
                break
            hist[pas][b] = t
            t += x
        if skip:
            continue
        for q in range(c):
            k = src[q]
            b = <Py_ssize_t>((k >> (32 + 8 * pas)) & 255)
            dst[hist[pas][b]] = k
            hist[pas][b] += 1
        tmp = src
        src = dst
        dst = tmp
    # keys equal on their upper 32 bits are mostly equal doubles (in order already): an
    # insertion pass, which moves a key only past larger keys of its own run; past 4 c
    # moves (many near-ties), the comparison sort finishes
    t = 0
    for q in range(1, c):
        k = src[q]
        if k >= src[q - 1]:
            continue
        r = q
        while r > 0 and src[r - 1] > k:
            src[r] = src[r - 1]
            r -= 1
        src[r] = k
        t += q - r
        if t > 4 * c:
            sort(src, src + c)
            break
    for q in range(c):
        k = src[q]
        if k >> 63:
            k = k ^ (<uint64_t>1 << 63)
        else:
            k = ~k
        memcpy(&v[q], &k, 8)
    free(ka)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef inline int _screen_one(const double* tm, const double* p, Py_ssize_t n, Py_ssize_t m,
                            const double* ee, const double* dd, const double* tl,
                            Py_ssize_t count, double* av,
                            int64_t* ok, double* vals, double* thr, int64_t* elig,
                            int64_t* prop, double* val, const int64_t* cadd,
                            int64_t kadd) noexcept nogil:
    """The screens of one start (shared by screen and scan_screen).

    tm and p hold the window maxima and the capacities of the n nodes property by property
    (tm[i * n + j]); av (m * n), ok (n) and vals (n) are scratch. Returns the code: 1 when
    fewer than count nodes meet every minimum (prop = the first property met by the fewest
    nodes, val = how many), 2 when the count largest eligible amounts of a property miss its
    total (prop = the largest relative shortfall, the first on ties, val = its sum, largest
    amount first), else 0; elig = the eligible nodes. thr[i] carries the previous start's
    threshold for property i (-inf: none) between calls, set to about the 1.5 count-th
    largest eligible amount: the count largest amounts are selected among those at or above
    it when at least count are (the same multiset, so the same sums), else among all
    eligible ones. cadd (m; NULL: none) and kadd are nodes left out of the n (pruned_screen)
    whose answers to the minimums are known: cadd[i] of them meet minimum i, kadd of them
    every minimum; they are added to the counts (the count largest amounts never hold
    them)."""
    cdef Py_ssize_t i, j, k, c, q, bi, least, g
    cdef double a, tau, tot, worst, rel, mag, ei, dlo
    cdef int srt, full
    cdef int64_t y, cnt
    cdef const double* pi
    cdef const double* ti
    cdef double* ai
    for j in range(n):
        ok[j] = 1
    bi = 0
    least = n + 1
    if cadd != NULL:
        for i in range(m):
            least += cadd[i]
    for i in range(m):
        cnt = 0 if cadd == NULL else cadd[i]
        pi = p + i * n
        ti = tm + i * n
        ai = av + i * n
        ei = ee[i] - tl[i]
        for j in range(n):  # 64-bit flags, no branch: vectorised
            a = pi[j] - ti[j]
            ai[j] = a
            y = a >= ei
            cnt += y
            ok[j] &= y
        if cnt < least:
            least = cnt
            bi = i
    k = kadd
    for j in range(n):
        k += ok[j]
    elig[0] = k
    if k < count:
        prop[0] = bi
        val[0] = <double>least
        return 1
    worst = 0.0
    bi = -1
    for i in range(m):
        tau = thr[i]
        c = 0
        for j in range(n):
            a = av[i * n + j]
            vals[c] = -a
            c += ok[j] & (a >= tau)
        full = c < count
        if full:
            c = 0
            for j in range(n):
                vals[c] = -av[i * n + j]
                c += ok[j]
        # the count largest first (vals ascending: amounts descending), by a radix sort of
        # all c when they are many (then already in order for the exact sum below), else
        # by selection
        srt = c >= _RADIX_MIN
        if srt:
            _sort_asc(vals, c)
        elif count < c:
            nth_element(vals, vals + (count - 1), vals + c)
        # the next start's filter: the g-th largest amount collected here (g = 1.5 count),
        # so that the next start usually still has count amounts at or above it; fewer
        # than g collected above the threshold: the threshold kept (-inf, every eligible
        # amount, would make the next start collect them all)
        g = count + count // 2 + 1
        if g < c:
            if not srt:
                nth_element(vals + count, vals + (g - 1), vals + c)
            thr[i] = -vals[g - 1]
        elif full:
            thr[i] = -INFINITY
        # the sum in any order differs from the sum largest first by at most
        # 2 (count - 1) 2**-53 sum |x| (two error bounds): clearly above the total, the
        # property passes whatever the order; else the exact sum, largest amount first
        tot = 0.0
        mag = 0.0
        for q in range(count):
            tot = tot - vals[q]
            mag = mag + fabs(vals[q])
        dlo = dd[i] - <double>count * tl[i]
        if tot - 4.0 * <double>count * 1.1102230246251565e-16 * mag >= dlo:
            continue
        if not srt:
            sort(vals, vals + count)
        tot = 0.0
        for q in range(count):
            tot = tot - vals[q]
        if tot < dlo:
            rel = (dd[i] - tot) / dd[i] if dd[i] > 0 else INFINITY
            if bi < 0 or rel > worst:
                worst = rel
                bi = i
                val[0] = tot
    if bi >= 0:
        prop[0] = bi
        return 2
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef inline int _weighted_one(const double* av, const int64_t* ok, Py_ssize_t n, Py_ssize_t m,
                              const double* dd, const double* w, Py_ssize_t count, double bound,
                              double* xs, double* sc, double* wthr) noexcept nogil:
    """The equal weights' proof at one start (block_screen, pruned_screen): 1 when the count
    largest scores x_j = sum_i av[i * n + j] w_i (properties in order) of the nodes with
    ok[j], summed largest first, plus 1e-12 (|top| + |bound| + count max_j sum_i |a_ij| w_i)
    stay below bound, else 0. The count largest are selected among the scores at or above
    wthr (carried from the previous start) when at least count are, else among all; wthr is
    then set to the (count + count // 2 + 1)-th largest collected (-inf: fewer). xs and sc
    (n) are scratch."""
    cdef Py_ssize_t j, i, c, cs, q, g
    cdef double a, x, mg, mx, top, margin
    cdef int srt, full
    c = 0
    mx = 0.0
    for j in range(n):
        if not ok[j]:
            continue
        x = 0.0
        mg = 0.0
        for i in range(m):
            if dd[i] > 0:
                a = av[i * n + j]
                x = x + a * w[i]
                mg = mg + fabs(a) * w[i]
        xs[c] = -x
        c += 1
        if mg > mx:
            mx = mg
    if c < count:
        return 0
    # the count largest scores are selected among those at or above the previous start's
    # (count + count // 2 + 1)-th largest when at least count are (then they hold every one
    # of the count largest), else among all of them
    cs = 0
    for q in range(c):
        sc[cs] = xs[q]
        cs += -xs[q] >= wthr[0]
    full = cs < count
    if full:
        for q in range(c):
            sc[q] = xs[q]
        cs = c
    srt = cs >= _RADIX_MIN
    if srt:  # all of them in order (radix sort): the count largest first
        _sort_asc(sc, cs)
    elif count < cs:
        nth_element(sc, sc + (count - 1), sc + cs)
    g = count + count // 2 + 1
    if g < cs:
        if not srt:
            nth_element(sc + count, sc + (g - 1), sc + cs)
        wthr[0] = -sc[g - 1]
    elif full:  # else the threshold kept (as the screen's)
        wthr[0] = -INFINITY
    if not srt:
        sort(sc, sc + count)  # the count largest, largest first
    top = 0.0
    for q in range(count):
        top = top - sc[q]
    margin = 1e-12 * (fabs(top) + fabs(bound) + <double>count * mx)
    return 1 if top + margin < bound else 0


@cython.boundscheck(False)
@cython.wraparound(False)
def screen(const double[:, :, ::1] tm,   # IN  (S, n, m) window maxima
           const double[:, ::1] p,       # IN  (n, m) capacities
           demand,                       # IN  Demand: e, d (m,), count, tol (m,)
           out):                         # OUT ScreenOut: code, elig, prop (S,) int64, value (S,)
    """Per start s: code[s] = 0 (passes), 1 (fewer than count nodes meet every minimum) or
    2 (the count largest amounts of a property miss its total), with elig[s], prop[s]
    and val[s] (see the twin coalloc.collective._reference.search.screen). GIL released.
    demand and out are coalloc.collective.core's Demand and ScreenOut records."""
    cdef Py_ssize_t S = tm.shape[0], n = tm.shape[1], m = tm.shape[2]
    if p.shape[0] != n or p.shape[1] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    cdef ScreenArgs sa = _screen_args(demand, out, S, m)
    cdef vector[double] pt, tt, av, vals, thr
    cdef vector[int64_t] ok
    cdef Py_ssize_t s, j, i
    cdef const double* r
    if S == 0 or n == 0 or m == 0:
        return
    with nogil:
        pt.resize(m * n); tt.resize(m * n); av.resize(m * n); vals.resize(n)
        ok.resize(n)
        thr.assign(m, -INFINITY)
        for j in range(n):
            for i in range(m):
                pt[i * n + j] = p[j, i]
        for s in range(S):
            # property by property: contiguous writes, reads of stride m
            r = &tm[s, 0, 0]
            for i in range(m):
                for j in range(n):
                    tt[i * n + j] = r[j * m + i]
            sa.code[s] = _screen_one(&tt[0], &pt[0], n, m, sa.e, sa.d, sa.tol, sa.count, &av[0],
                                     &ok[0], &vals[0], &thr[0], &sa.elig[s], &sa.prop[s],
                                     &sa.val[s], NULL, 0)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def weighted_screen(const double[:, :, ::1] tm,   # IN    (S, n, m) window maxima
                    const double[:, ::1] p,       # IN    (n, m) capacities
                    demand,                       # IN    Demand: e, d (m,), count, tol (m,)
                    int64_t[::1] code):           # INOUT (S,) screen codes
    """Issue 40: for each start s with code[s] == 0, code[s] = 3 when equal weights prove
    that no count eligible nodes reach every total: with k the properties of d > 0 and
    w_i = (1 / k) / d_i, the count largest x_j = sum_i a_ij w_i (a = p - tm[s], properties
    in order) of the eligible nodes (a_ij >= e_i - tau_i for every i), summed largest first,
    plus 1e-12 (|top| + |bound| + count max_j sum_i |a_ij| w_i) stay below bound =
    sum_i (1 / k) ((d_i - count tau_i) / d_i) (in order). Other codes are left as they are.
    GIL released. Twin: coalloc.collective._reference.search.weighted_screen."""
    cdef const double[::1] ee = demand.e
    cdef const double[::1] dd = demand.d
    cdef Py_ssize_t count = demand.count
    cdef const double[::1] tl = demand.tol
    cdef Py_ssize_t S = tm.shape[0], n = tm.shape[1], m = tm.shape[2]
    if p.shape[0] != n or p.shape[1] != m or ee.shape[0] != m or dd.shape[0] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    _check_tol(tl, m)
    if code.shape[0] != S:
        raise ValueError("code must have one entry per start")
    cdef Py_ssize_t s, j, i, c, q, k = 0
    cdef double a, x, mg, mx, top, bound = 0.0, margin
    cdef int ok
    cdef vector[double] w, elo, sc
    for i in range(m):
        if dd[i] > 0:
            k += 1
    if S == 0 or n == 0 or k == 0 or count < 1 or n < count:
        return
    with nogil:
        w.assign(m, 0.0)
        elo.assign(m, 0.0)
        sc.assign(n, 0.0)
        for i in range(m):
            elo[i] = ee[i] - tl[i]
            if dd[i] > 0:
                w[i] = (1.0 / <double>k) / dd[i]
                bound = bound + (1.0 / <double>k) * ((dd[i] - <double>count * tl[i]) / dd[i])
        for s in range(S):
            if code[s] != 0:
                continue
            c = 0
            mx = 0.0
            for j in range(n):
                ok = 1
                x = 0.0
                mg = 0.0
                for i in range(m):
                    a = p[j, i] - tm[s, j, i]
                    if not (a >= elo[i]):
                        ok = 0
                    if dd[i] > 0:
                        x = x + a * w[i]
                        mg = mg + fabs(a) * w[i]
                if ok:
                    sc[c] = -x
                    c += 1
                    if mg > mx:
                        mx = mg
            if c < count:
                continue
            if count < c:
                nth_element(&sc[0], &sc[0] + (count - 1), &sc[0] + c)
            sort(&sc[0], &sc[0] + count)  # the count largest, largest first
            top = 0.0
            for q in range(count):
                top = top - sc[q]
            margin = 1e-12 * (fabs(top) + fabs(bound) + <double>count * mx)
            if top + margin < bound:
                code[s] = 3


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def block_screen(const double[:, :, ::1] tm,   # IN  (S, n, m) window maxima
                 const double[:, ::1] p,       # IN  (n, m) capacities
                 demand,                       # IN  Demand: e, d (m,), count, tol (m,)
                 out):                         # OUT ScreenOut: code, elig, prop, value (S,)
    """screen, then weighted_screen, in one pass over the block (issue 40): the outputs of
    screen(tm, ...) with code 3 where weighted_screen would set it, bit for bit. A start that
    passes the screens gets the equal weights' proof from the amounts and eligibility the
    screen has just computed (in cache), instead of a second pass over the (S, n, m) block;
    its count largest scores are selected among those at or above a threshold carried from
    the previous start (as the screen's), among all eligible nodes when fewer reach it (the
    same count largest either way). GIL released. Twin: coalloc.collective._reference.search.block_screen."""
    cdef Py_ssize_t S = tm.shape[0], n = tm.shape[1], m = tm.shape[2]
    if p.shape[0] != n or p.shape[1] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    cdef ScreenArgs sa = _screen_args(demand, out, S, m)
    cdef Py_ssize_t count = sa.count
    cdef const double* dd = sa.d
    cdef const double* tl = sa.tol
    cdef int64_t* code = sa.code
    cdef vector[double] pt, tt, av, vals, thr, w, sc, xs
    cdef vector[int64_t] ok
    cdef Py_ssize_t s, j, i, k = 0
    cdef double bound = 0.0, wthr = -INFINITY
    cdef int weigh
    cdef const double* r
    if S == 0 or n == 0 or m == 0:
        return
    for i in range(m):
        if dd[i] > 0:
            k += 1
    weigh = k > 0 and count >= 1 and n >= count
    with nogil:
        pt.resize(m * n); tt.resize(m * n); av.resize(m * n); vals.resize(n)
        ok.resize(n)
        sc.assign(n, 0.0)
        xs.assign(n, 0.0)
        w.assign(m, 0.0)
        thr.assign(m, -INFINITY)
        for j in range(n):
            for i in range(m):
                pt[i * n + j] = p[j, i]
        if weigh:
            for i in range(m):
                if dd[i] > 0:
                    w[i] = (1.0 / <double>k) / dd[i]
                    bound = bound + (1.0 / <double>k) * ((dd[i] - <double>count * tl[i]) / dd[i])
        for s in range(S):
            # property by property: contiguous writes, reads of stride m
            r = &tm[s, 0, 0]
            for i in range(m):
                for j in range(n):
                    tt[i * n + j] = r[j * m + i]
            code[s] = _screen_one(&tt[0], &pt[0], n, m, sa.e, dd, tl, count, &av[0],
                                  &ok[0], &vals[0], &thr[0], &sa.elig[s], &sa.prop[s],
                                  &sa.val[s], NULL, 0)
            if code[s] != 0 or not weigh:
                continue
            # weighted_screen's proof from av (a = p - tm, the same doubles) and ok (every
            # minimum met, the same test): the same sums in the same order
            if _weighted_one(&av[0], &ok[0], n, m, dd, &w[0], count, bound, &xs[0], &sc[0],
                             &wthr):
                code[s] = 3


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
@cython.initializedcheck(False)
@cython.boundscheck(False)
@cython.wraparound(False)
cdef Py_ssize_t _keep_rows(const double* p, const double* lo, const double* hi, Py_ssize_t n,
                           Py_ssize_t m, const double* elo, const double* dd, const double* w,
                           Py_ssize_t g, int weigh, double* lb, double* buf, int64_t* cls,
                           int64_t* keep, int64_t* cadd, int64_t* kadd,
                           double* kthr) noexcept nogil:
    """pruned_screen's choice of the rows to screen over one sub-block (shared with
    window_screen), from the least (lo) and largest (hi) window maxima of every (node,
    property) over its starts, or bounds of them (lo[j * m + i] at most the least, hi at
    least the largest: every test below only needs bounds): the classes (cls: 2 eligible
    at every start, 1 settled and never eligible, 0 undecided), the kept rows (keep, in
    order; their count returned) and the dropped ones' answers to the minimums (cadd[i] of
    them meet minimum i, kadd every minimum). p: (n, m) capacities; lb (m) and buf (n)
    scratch. kthr (m + 1: the properties, then the scores; -inf: none) carries between the
    sub-blocks of a block a threshold for each g-th largest (about the 1.5 g-th largest of
    the previous sub-block): the g largest are selected among the values at or above it
    when at least g are (the same g-th largest), else among all."""
    cdef Py_ssize_t j, i, c, ne, nk, g2 = g + g // 2 + 1
    cdef int alw, settled, keepj, prune, full
    cdef double al, ah, x, xh, mg, mh, mgl, lsc, tau
    ne = 0
    for j in range(n):
        alw = 1
        settled = 1
        for i in range(m):
            if not (p[j * m + i] - hi[j * m + i] >= elo[i]):
                alw = 0
                if not (p[j * m + i] - lo[j * m + i] < elo[i]):
                    settled = 0
        if alw:
            cls[j] = 2
        elif settled:
            cls[j] = 1
        else:
            cls[j] = 0
        ne += alw
    prune = ne >= g and g <= n
    lsc = -INFINITY
    mgl = 0.0
    if prune:
        # the g-th largest least amount per property among the always eligible
        for i in range(m):
            tau = kthr[i]
            c = 0
            for j in range(n):  # branch-free: vectorised
                x = p[j * m + i] - hi[j * m + i]
                buf[c] = -x
                c += (cls[j] == 2) & (x >= tau)
            full = c < g
            if full:
                c = 0
                for j in range(n):
                    buf[c] = -(p[j * m + i] - hi[j * m + i])
                    c += cls[j] == 2
            nth_element(&buf[0], &buf[0] + (g - 1), &buf[0] + c)
            lb[i] = -buf[g - 1]
            if g2 < c:
                nth_element(&buf[0] + g, &buf[0] + (g2 - 1), &buf[0] + c)
                kthr[i] = -buf[g2 - 1]
            elif full:  # else the threshold kept
                kthr[i] = -INFINITY
        if weigh:  # the g-th largest least score and the largest least margin
            c = 0
            for j in range(n):
                if cls[j] != 2:
                    continue
                x = 0.0
                mg = 0.0
                for i in range(m):
                    if dd[i] > 0:
                        al = p[j * m + i] - hi[j * m + i]
                        ah = p[j * m + i] - lo[j * m + i]
                        x = x + al * w[i]
                        mg = mg + (al if al > 0 else (-ah if ah < 0 else 0.0)) * w[i]
                buf[c] = -x
                c += 1
                if mg > mgl:
                    mgl = mg
            # the g largest among the scores at or above the carried threshold when at
            # least g are (compacted in place), else among all
            tau = kthr[m]
            nk = 0
            for j in range(c):
                x = buf[j]
                buf[nk] = x
                nk += -x >= tau
            full = nk < g
            if not full:
                c = nk
            else:  # rebuild all of them (the compaction overwrote some)
                c = 0
                for j in range(n):
                    if cls[j] != 2:
                        continue
                    x = 0.0
                    for i in range(m):
                        if dd[i] > 0:
                            x = x + (p[j * m + i] - hi[j * m + i]) * w[i]
                    buf[c] = -x
                    c += 1
            nth_element(&buf[0], &buf[0] + (g - 1), &buf[0] + c)
            lsc = -buf[g - 1]
            if g2 < c:
                nth_element(&buf[0] + g, &buf[0] + (g2 - 1), &buf[0] + c)
                kthr[m] = -buf[g2 - 1]
            elif full:
                kthr[m] = -INFINITY
    # the kept rows; the dropped ones' answers to the minimums as counts
    nk = 0
    kadd[0] = 0
    for i in range(m):
        cadd[i] = 0
    for j in range(n):
        if cls[j] == 1:
            for i in range(m):
                cadd[i] += p[j * m + i] - hi[j * m + i] >= elo[i]
            continue
        keepj = 1
        if cls[j] == 2 and prune:
            keepj = 0
            for i in range(m):
                if p[j * m + i] - lo[j * m + i] >= lb[i]:
                    keepj = 1
            if weigh and not keepj:
                xh = 0.0
                mh = 0.0
                for i in range(m):
                    if dd[i] > 0:
                        al = p[j * m + i] - hi[j * m + i]
                        ah = p[j * m + i] - lo[j * m + i]
                        xh = xh + ah * w[i]
                        mh = mh + (ah if ah > -al else -al) * w[i]
                keepj = xh >= lsc or mh >= mgl
            if not keepj:
                kadd[0] += 1
                for i in range(m):
                    cadd[i] += 1
        if keepj:
            keep[nk] = j
            nk += 1
    return nk


cdef double _screen_start(Py_ssize_t n, Py_ssize_t m, Py_ssize_t count, Py_ssize_t k, int weigh,
                          const double* ee, const double* dd, const double* tl,
                          vector[double]& sc, vector[double]& xs, vector[double]& w,
                          vector[double]& elo, vector[double]& lb, vector[int64_t]& cadd,
                          vector[double]& thr) noexcept nogil:
    """The pruned screens' (pruned_screen, window_screen) buffers set to their start, the
    weighted proof's weights ``w`` and its bound (returned; the sum in property order, as
    weighted_screen's), and ``elo = e - tol``."""
    cdef Py_ssize_t i
    cdef double bound = 0.0
    sc.assign(n, 0.0)
    xs.assign(n, 0.0)
    w.assign(m, 0.0)
    elo.assign(m, 0.0)
    lb.assign(m, 0.0)
    cadd.assign(m, 0)
    thr.assign(m, -INFINITY)
    for i in range(m):
        elo[i] = ee[i] - tl[i]
    if weigh:
        for i in range(m):
            if dd[i] > 0:
                w[i] = (1.0 / <double>k) / dd[i]
                bound = bound + (1.0 / <double>k) * ((dd[i] - <double>count * tl[i]) / dd[i])
    return bound


def pruned_screen(const double[:, :, ::1] tm,   # IN  (S, n, m) window maxima
                  const double[:, ::1] p,       # IN  (n, m) capacities
                  demand,                       # IN  Demand: e, d (m,), count, tol (m,)
                  Py_ssize_t sub,               # IN  starts per sub-block (>= 1)
                  out):                         # OUT ScreenOut: code, elig, prop, value (S,)
    """block_screen's outputs, bit for bit, screening per sub-block of sub starts only the
    nodes that can matter there (issue 40). Returns the rows screened, summed over the
    sub-blocks (n per sub-block without pruning).

    Per sub-block, from the least and largest window maxima of each node over its starts
    (one pass), a = p - tm is bounded on both sides for every start (a rounded difference is
    monotone in tm): a node is *settled* when each of its properties meets its minimum at
    every start or at none. A settled node that misses a minimum is never eligible and
    drops out (its per-property counts, constant over the sub-block, are added to the
    minimum screen's). When at least g = count + count // 2 + 1 nodes are eligible at every
    start, such a node also drops out when, for every property, its largest amount stays
    below the g-th largest least amount among them, its largest equal-weights score below
    the g-th largest least score, and its largest sum_i |a_ij| w_i below the largest least
    one (the weighted proof's margin): at every start at least g eligible nodes are then
    strictly above it, so the count largest amounts and scores, the screen's carried
    threshold and the margin's maximum are those of the kept rows (the sums, rounded the
    same way on the same multisets, are equal). The scores use block_screen's weights and
    order. GIL released. Twin: coalloc.collective._reference.search.pruned_screen."""
    cdef Py_ssize_t S = tm.shape[0], n = tm.shape[1], m = tm.shape[2]
    if p.shape[0] != n or p.shape[1] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    if sub < 1:
        raise ValueError("sub must be >= 1")
    cdef ScreenArgs sa = _screen_args(demand, out, S, m)
    cdef Py_ssize_t count = sa.count
    cdef const double* ee = sa.e
    cdef const double* dd = sa.d
    cdef const double* tl = sa.tol
    cdef int64_t* code = sa.code
    cdef vector[double] lo, hi, pk, tt, av, vals, thr, w, sc, xs, elo, lb, buf, kthr
    cdef vector[int64_t] ok, cadd, cls, keep
    cdef Py_ssize_t s, s0, s1, jj, i, q, nk, nm = n * m, g, k = 0
    cdef Py_ssize_t rows = 0
    cdef int64_t kadd
    cdef double bound = 0.0, wthr = -INFINITY
    cdef const double* r
    cdef int weigh
    if S == 0 or n == 0 or m == 0:
        return 0
    for i in range(m):
        if dd[i] > 0:
            k += 1
    weigh = k > 0 and count >= 1 and n >= count
    g = count + count // 2 + 1
    with nogil:
        lo.resize(nm); hi.resize(nm); pk.resize(nm); tt.resize(nm); av.resize(nm)
        vals.resize(n); buf.resize(n); ok.resize(n); cls.resize(n); keep.resize(n)
        bound = _screen_start(n, m, count, k, weigh, ee, dd, tl, sc, xs, w, elo, lb, cadd, thr)
        kthr.assign(m + 1, -INFINITY)
        s0 = 0
        while s0 < S:
            s1 = s0 + sub if s0 + sub < S else S
            # the least and largest window maxima of every (node, property) over the starts
            r = &tm[s0, 0, 0]
            for q in range(nm):
                lo[q] = r[q]
                hi[q] = r[q]
            for s in range(s0 + 1, s1):
                r = &tm[s, 0, 0]
                for q in range(nm):
                    lo[q] = _mn(lo[q], r[q])
                    hi[q] = _mx(hi[q], r[q])
            nk = _keep_rows(&p[0, 0], &lo[0], &hi[0], n, m, &elo[0], dd, &w[0], g, weigh,
                            &lb[0], &buf[0], &cls[0], &keep[0], &cadd[0], &kadd,
                            &kthr[0])
            for jj in range(nk):
                for i in range(m):
                    pk[i * nk + jj] = p[keep[jj], i]
            rows += nk
            for s in range(s0, s1):
                for jj in range(nk):
                    r = &tm[s, keep[jj], 0]
                    for i in range(m):
                        tt[i * nk + jj] = r[i]
                code[s] = _screen_one(&tt[0], &pk[0], nk, m, ee, dd, tl, count, &av[0],
                                      &ok[0], &vals[0], &thr[0], &sa.elig[s], &sa.prop[s],
                                      &sa.val[s], &cadd[0], kadd)
                if code[s] != 0 or not weigh:
                    continue
                if _weighted_one(&av[0], &ok[0], nk, m, dd, &w[0], count, bound, &xs[0],
                                 &sc[0], &wthr):
                    code[s] = 3
            s0 = s1
    return rows


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef inline double _range_max(const double* r, const double* rb, Py_ssize_t a, Py_ssize_t c,
                              Py_ssize_t B) noexcept nogil:
    """The maximum of r[a:c] (c > a): the whole blocks of B segments inside from their maxima
    rb, the segments before and after them from r (exact: the same value)."""
    cdef Py_ssize_t q, ba = (a + B - 1) // B, bc = c // B
    cdef double x = r[a]
    if bc <= ba:
        for q in range(a + 1, c):
            x = _mx(x, r[q])
        return x
    for q in range(a + 1, ba * B):
        x = _mx(x, r[q])
    for q in range(ba, bc):
        x = _mx(x, rb[q])
    for q in range(bc * B, c):
        x = _mx(x, r[q])
    return x


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef inline double _fine_lo(const double* r, const Py_ssize_t* wl, const Py_ssize_t* wh,
                            Py_ssize_t s0, Py_ssize_t s1, double first) noexcept nogil:
    """window_screen's bound below the least window maximum of one row r over the starts
    s0..s1-1: the least over the windows of the largest amount at three of its segments
    (first, middle, last), raised to first (the maximum over the segments every window
    holds, window_screen's first bound) when there are such segments."""
    cdef Py_ssize_t s
    cdef double y = INFINITY
    for s in range(s0, s1):
        y = _mn(y, _mx(_mx(r[wl[s]], r[(wl[s] + wh[s] - 1) // 2]), r[wh[s] - 1]))
    if wl[s1 - 1] < wh[s0]:
        y = _mx(y, first)
    return y


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline Py_ssize_t _gather_marked(const char* mark, char want, Py_ssize_t n, Py_ssize_t m,
                                      const double* p, const double* hb, const double* lb,
                                      int64_t* keep, double* pk, double* hk,
                                      double* lk) noexcept nogil:
    """window_screen's rows of one sub-block marked want (mark: its n marks), ascending:
    their indices into keep, their capacities (p, (n, m)) and bounds above and below (hb,
    lb, (n, m)) into pk, hk and lk, row after row; returns how many (steps A and B)."""
    cdef Py_ssize_t jj, i, nk = 0
    for jj in range(n):
        if mark[jj] == want:
            keep[nk] = jj
            for i in range(m):
                pk[nk * m + i] = p[jj * m + i]
                hk[nk * m + i] = hb[jj * m + i]
                lk[nk * m + i] = lb[jj * m + i]
            nk += 1
    return nk


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def window_screen(const double[::1] t,            # IN  (K,) breakpoints, ascending
                  const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                  const double[:, :, ::1] bm,     # IN  (N, m, ceil(K / B)) block maxima
                  Py_ssize_t B,                   # IN  segments per block
                  const int64_t[::1] nd,          # IN  (n,) rows of res
                  const double[::1] st,           # IN  (S,) starts, non-decreasing
                  double duration,                # IN
                  const double[:, ::1] p,         # IN  (n, m) capacities of the rows nd
                  demand,                         # IN  Demand: e, d (m,), count, tol (m,)
                  Py_ssize_t sub,                 # IN  starts per sub-block (>= 1)
                  out,                            # OUT ScreenOut: code, elig, prop, value (S,)
                  const double[:, :, ::1] bn = None):  # IN (N, m, ceil(K / B)) block minima
    """block_screen's outputs over the window maxima of the rows nd (window_max_rows), bit
    for bit, without those maxima (issue 40): per sub-block of sub starts, the rows chosen
    as pruned_screen chooses them (_keep_rows) from bounds of the least and largest window
    maxima, then the window maxima of the kept rows only. Returns the rows screened (at
    least pruned_screen's: the bounds are looser).

    Per (node, property) and sub-block (windows [lo_s, hi_s), both ends non-decreasing):
    the largest window maximum is at most the maximum over [lo_first, hi_last) (their
    union when no segment lies between them: then equal); the least is at least the least
    over the windows of the largest amount at three of its segments (its first, middle and
    last) and the maximum over the segments every window holds, [lo_last, hi_first) (ranges
    read from the block maxima bm where they hold whole blocks: _range_max, the same
    values). The rows are chosen in two steps (issue 40, h49coll) in a sub-block whose
    windows share segments: first from a cheaper bound below, the maximum over the segments
    every window holds (never above the three segments' bound), then among the rows kept by
    that step only, from the three segments' bound (_fine_lo, computed for them row by row in
    order after step A of every sub-block, h50coll): the same rows as one step with the second
    bound (the g-th largest least amounts and scores depend on the bound above only, and every
    row that could reach them or the largest least margin is kept by the first step), at a
    third of the reads for the rows the first step drops. Where the windows share no segment
    (the first bound was the least first segment, weak: N = 60, 1 h windows kept a quarter of
    the rows), one step with the three segments' bound (h50coll).
    With the block minima bn (issue 40, h50coll), a step 0 before them chooses among every
    row from the block extrema alone (above: the blocks meeting the windows' union; below:
    the least minimum of those blocks, raised to the largest maximum of a block inside the
    segments every window holds), and the two steps' bounds are computed for the rows it
    keeps only: the same rows in the end, as step 0's bounds are looser on both sides (its
    g-th largest least amounts and scores and largest least margin are at most step A's,
    every row it drops step A drops with the same counts, and every row that reaches step
    A's thresholds it keeps), without reading the amounts of the rows it drops.
    The kept rows' maxima come from window_max_rows per
    sub-block (its starts, its kept rows) or once for the union of the kept rows over every
    start, whichever covers fewer segments (a maximum is exact: the same values), screened
    as pruned_screen screens them (the carried thresholds across the sub-blocks alike). Twin:
    coalloc.collective._reference.search.window_screen."""
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1], K = t.shape[0]
    cdef Py_ssize_t s, s0, s1, jj, i, q, b, nb, nk, nm = n * m, g, k = 0
    cdef Py_ssize_t rows = 0, nblk, c0, c1, c, a0, a1
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if B < 1:
        raise ValueError("B must be >= 1")
    nblk = (K + B - 1) // B
    if bm.shape[0] != res.shape[0] or bm.shape[1] != m or bm.shape[2] != nblk:
        raise ValueError("block maxima must be (N, m, ceil(K / B))")
    cdef bint lows = bn is not None
    if lows and (bn.shape[0] != res.shape[0] or bn.shape[1] != m or bn.shape[2] != nblk):
        raise ValueError("block minima must be (N, m, ceil(K / B))")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nd, res.shape[0], st)
    if p.shape[0] != n or p.shape[1] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    if sub < 1:
        raise ValueError("sub must be >= 1")
    cdef ScreenArgs sa = _screen_args(demand, out, S, m)
    cdef Py_ssize_t count = sa.count
    cdef const double* ee = sa.e
    cdef const double* dd = sa.d
    cdef const double* tl = sa.tol
    cdef int64_t* code = sa.code
    cdef vector[double] lo, hi, pk, tt, av, vals, thr, w, sc, xs, elo, lb, buf, kthr
    cdef vector[double] hk, lk, kthr2, hk2, lk2, pk2, kthr0
    cdef vector[int64_t] ok, cadd, cls, keep, kept, cadds, kadds, keep2, cadd2, keep0
    cdef vector[char] mark
    cdef vector[Py_ssize_t] kofs, upos, wl, wh, lev, off, comb
    cdef int64_t kadd, kadd2
    cdef Py_ssize_t j, nk2, nk0
    cdef int64_t* kp
    cdef double bound = 0.0, wthr = -INFINITY, x, y
    cdef const double* r
    cdef const double* rb
    cdef const double* rn = NULL
    cdef const double* pp
    cdef const double* hp
    cdef const double* lp
    cdef Py_ssize_t nu, W, per_sub
    cdef bint union
    cdef int weigh
    cdef double[:, :, ::1] wv
    cdef int64_t[::1] kv
    if S == 0 or n == 0 or m == 0:
        return 0
    for i in range(m):
        if dd[i] > 0:
            k += 1
    weigh = k > 0 and count >= 1 and n >= count
    g = count + count // 2 + 1
    nb = (S + sub - 1) // sub
    with nogil:
        lo.resize(nb * nm)
        hi.resize(nb * nm)
        wl.resize(S); wh.resize(S); lev.resize(S); off.resize(S)
        _windows(t, st, duration, &wl[0], &wh[0], &lev[0], &off[0])
        # the bounds of every (node, property) per sub-block, row by row (its amounts and
        # block extrema read in order). Without bn, step A's: the exact bound above and, below,
        # the maximum over the segments every window holds, else the least first segment of
        # the windows. With bn, step 0's, from the block extrema alone (_coarse_bounds): above,
        # the largest maximum of the blocks meeting the windows' union; below, the least of
        # their minima, raised to the largest maximum of a block inside the segments every
        # window holds (never above step A's bound below: a block minimum is at most every
        # amount in its block, and a block inside those segments is at most their maximum)
        for jj in range(n if not lows else 0):  # step A's bounds (the loops apart: the
            for i in range(m):                   # compiler keeps each one's code)
                r = &res[nd[jj], i, 0]
                rb = &bm[nd[jj], i, 0]
                for b in range(nb):
                    s0 = b * sub
                    s1 = s0 + sub if s0 + sub < S else S
                    x = _range_max(r, rb, wl[s0], wh[s1 - 1], B)
                    if wl[s1 - 1] < wh[s0]:
                        y = _range_max(r, rb, wl[s1 - 1], wh[s0], B)
                    else:  # no segment in every window: the three segments' bound at once
                        y = _fine_lo(r, &wl[0], &wh[0], s0, s1, 0.0)
                    hi[b * nm + jj * m + i] = x
                    lo[b * nm + jj * m + i] = y
        for jj in range(n if lows else 0):  # step 0's bounds
            for i in range(m):
                rb = &bm[nd[jj], i, 0]
                rn = &bn[nd[jj], i, 0]
                for b in range(nb):
                    s0 = b * sub
                    s1 = s0 + sub if s0 + sub < S else S
                    c0 = wl[s0] // B
                    c1 = (wh[s1 - 1] - 1) // B + 1
                    x = rb[c0]
                    y = rn[c0]
                    for q in range(c0 + 1, c1):
                        x = _mx(x, rb[q])
                        y = _mn(y, rn[q])
                    a0 = wl[s1 - 1]
                    a1 = wh[s0]
                    if a0 < a1:
                        for q in range((a0 + B - 1) // B, a1 // B):
                            y = _mx(y, rb[q])
                    hi[b * nm + jj * m + i] = x
                    lo[b * nm + jj * m + i] = y
    pk.resize(nm); tt.resize(nm); av.resize(nm)
    vals.resize(n); buf.resize(n); ok.resize(n); cls.resize(n); keep.resize(n)
    bound = _screen_start(n, m, count, k, weigh, ee, dd, tl, sc, xs, w, elo, lb, cadd, thr)
    kthr.assign(m + 1, -INFINITY)
    kthr2.assign(m + 1, -INFINITY)
    kthr0.assign(m + 1, -INFINITY)
    hk.resize(nm); lk.resize(nm); keep2.resize(n); cadd2.resize(m)
    pk2.resize(nm); hk2.resize(nm); lk2.resize(nm); keep0.resize(n)
    # every sub-block's kept rows (in order, kofs: where each begins) and counts
    kofs.resize(nb + 1)
    kofs[0] = 0
    cadds.resize(nb * m)
    kadds.resize(nb)
    upos.assign(n, -1)
    mark.assign(nb * n, 0)
    if not lows:  # no step 0: every row, none dropped before step A
        for jj in range(n):
            keep0[jj] = jj
        for q in range(nb * m):
            cadds[q] = 0
        for b in range(nb):
            kadds[b] = 0
    with nogil:
        # step 0 (_coarse_bounds) per sub-block: the rows kept under the coarse bounds (a
        # superset of those kept under the exact bound above and the first bound below,
        # the dropped ones' counts the same), marked
        for b in range(nb if lows else 0):
            nk0 = _keep_rows(&p[0, 0], &lo[b * nm], &hi[b * nm], n, m, &elo[0], dd, &w[0], g,
                             weigh, &lb[0], &buf[0], &cls[0], &keep0[0], &cadds[b * m],
                             &kadds[b], &kthr0[0])
            for jj in range(nk0):
                mark[b * n + keep0[jj]] = 1
        # the exact bound above and the first bound below of the marked (row, sub-block)s,
        # row by row again (the same values as over every row)
        for jj in range(n if lows else 0):
            for i in range(m):
                r = &res[nd[jj], i, 0]
                rb = &bm[nd[jj], i, 0]
                for b in range(nb):
                    if not mark[b * n + jj]:
                        continue
                    s0 = b * sub
                    s1 = s0 + sub if s0 + sub < S else S
                    hi[b * nm + jj * m + i] = _range_max(r, rb, wl[s0], wh[s1 - 1], B)
                    if wl[s1 - 1] < wh[s0]:
                        lo[b * nm + jj * m + i] = _range_max(r, rb, wl[s1 - 1], wh[s0], B)
                    else:  # no segment in every window: the three segments' bound at once
                        lo[b * nm + jj * m + i] = _fine_lo(r, &wl[0], &wh[0], s0, s1, 0.0)
        # step A per sub-block (the rows step 0 kept, or every row): the rows kept under the
        # exact bound above and the first bound below, marked 2 (the chains of thresholds
        # kthr and kthr2 are apart: step A of every sub-block first, then step B of every
        # one, the same calls in the same order per chain)
        for b in range(nb):
            if lows:  # the rows step 0 kept (marked 1), their bounds gathered
                nk0 = _gather_marked(&mark[b * n], 1, n, m, &p[0, 0], &hi[b * nm],
                                     &lo[b * nm], &keep0[0], &pk2[0], &hk2[0], &lk2[0])
                pp, hp, lp = &pk2[0], &hk2[0], &lk2[0]
            else:  # every row (no step 0)
                nk0 = n
                pp, hp, lp = &p[0, 0], &hi[b * nm], &lo[b * nm]
            nk = _keep_rows(pp, lp, hp, nk0, m, &elo[0], dd, &w[0], g,
                            weigh, &lb[0], &buf[0], &cls[0], &keep[0], &cadd[0], &kadd,
                            &kthr[0])
            for jj in range(nk):
                mark[b * n + keep0[keep[jj]]] = 2
            for i in range(m):
                cadds[b * m + i] += cadd[i]
            kadds[b] += kadd
        # the three segments' bound below (_fine_lo) of the rows step A kept, row by row in
        # order (each row's span of the timetable read once for all its sub-blocks, not once
        # per sub-block from a cold cache: h49coll's step B read it per sub-block, 1.17x
        # slower for N = 60 with 1 h windows, where step A keeps a quarter of the rows)
        # (the sub-blocks whose windows share segments only: comb)
        for b in range(nb):
            s0 = b * sub
            s1 = s0 + sub if s0 + sub < S else S
            if wl[s1 - 1] < wh[s0]:
                comb.push_back(b)
        for jj in range(n if comb.size() else 0):
            for i in range(m):
                r = &res[nd[jj], i, 0]
                for q in range(<Py_ssize_t>comb.size()):
                    b = comb[q]
                    s0 = b * sub
                    s1 = s0 + sub if s0 + sub < S else S
                    if mark[b * n + jj] == 2:
                        lo[b * nm + jj * m + i] = _fine_lo(r, &wl[0], &wh[0], s0, s1,
                                                           lo[b * nm + jj * m + i])
        # step B per sub-block: those kept among step A's rows (in order) under that bound
        for b in range(nb):
            s0 = b * sub
            s1 = s0 + sub if s0 + sub < S else S
            if not wl[s1 - 1] < wh[s0]:  # step A had the three segments' bound: its rows
                nk2 = 0
                for jj in range(n):
                    if mark[b * n + jj] == 2:
                        kept.push_back(jj)
                        upos[jj] = 0
                        nk2 += 1
                kofs[b + 1] = kofs[b] + nk2
                continue
            nk = _gather_marked(&mark[b * n], 2, n, m, &p[0, 0], &hi[b * nm], &lo[b * nm],
                                &keep[0], &pk[0], &hk[0], &lk[0])
            nk2 = _keep_rows(&pk[0], &lk[0], &hk[0], nk, m, &elo[0], dd, &w[0], g, weigh,
                             &lb[0], &buf[0], &cls[0], &keep2[0], &cadd2[0], &kadd2,
                             &kthr2[0])
            for jj in range(nk2):
                j = keep[keep2[jj]]
                kept.push_back(j)
                upos[j] = 0
            kofs[b + 1] = kofs[b] + nk2
            for i in range(m):
                cadds[b * m + i] += cadd2[i]
            kadds[b] += kadd2
        rows = kofs[nb]
        # the kept rows' window maxima: per sub-block (its starts, its rows) or once over the
        # union of the kept rows and every start, whichever covers fewer segments (a
        # window_max_rows row costs about its starts plus its window's segments)
        lo.clear()
        hi.clear()
        lo.shrink_to_fit()
        hi.shrink_to_fit()
        nu = 0
        for jj in range(n):
            if upos[jj] == 0:
                upos[jj] = nu
                nu += 1
        W = 1
        for s in range(S):
            if wh[s] - wl[s] > W:
                W = wh[s] - wl[s]
        per_sub = 0
        for b in range(nb):
            s0 = b * sub
            s1 = s0 + sub if s0 + sub < S else S
            per_sub += (kofs[b + 1] - kofs[b]) * (s1 - s0 + W)
        union = nu * (S + W) <= per_sub
    if union and nu:
        kn = np.empty(nu, dtype=np.int64)
        kv = kn
        for jj in range(n):
            if upos[jj] >= 0:
                kv[upos[jj]] = nd[jj]
        wb = np.empty((S, nu, m))
        window_max_rows(t, res, kv, st, duration, wb)
        wv = wb
    for b in range(nb):
        s0 = b * sub
        s1 = s0 + sub if s0 + sub < S else S
        nk = kofs[b + 1] - kofs[b]
        kp = &kept[kofs[b]] if nk else NULL
        if nk and not union:  # the kept rows' window maxima at the sub-block's starts
            kn = np.empty(nk, dtype=np.int64)
            kv = kn
            for jj in range(nk):
                kv[jj] = nd[kp[jj]]
            wb = np.empty((s1 - s0, nk, m))
            window_max_rows(t, res, kv, st[s0:s1], duration, wb)
            wv = wb
        with nogil:
            for jj in range(nk):
                for i in range(m):
                    pk[i * nk + jj] = p[kp[jj], i]
            for s in range(s0, s1):
                if union:
                    for jj in range(nk):
                        r = &wv[s, upos[kp[jj]], 0]
                        for i in range(m):
                            tt[i * nk + jj] = r[i]
                else:
                    for jj in range(nk):
                        r = &wv[s - s0, jj, 0]
                        for i in range(m):
                            tt[i * nk + jj] = r[i]
                code[s] = _screen_one(&tt[0], &pk[0], nk, m, ee, dd, tl, count, &av[0],
                                      &ok[0], &vals[0], &thr[0], &sa.elig[s], &sa.prop[s],
                                      &sa.val[s], &cadds[b * m], kadds[b])
                if code[s] != 0 or not weigh:
                    continue
                if _weighted_one(&av[0], &ok[0], nk, m, dd, &w[0], count, bound, &xs[0],
                                 &sc[0], &wthr):
                    code[s] = 3
    return rows


cdef _check_tol(const double[::1] tl, Py_ssize_t m):
    if tl.shape[0] != m:
        raise ValueError("tol must have one value per property")


cdef _check_outs(Py_ssize_t S, int64_t[::1] code, int64_t[::1] elig, int64_t[::1] prop,
                 double[::1] val):
    if code.shape[0] != S or elig.shape[0] != S or prop.shape[0] != S or val.shape[0] != S:
        raise ValueError("code, eligible, prop and value must have one entry per start")



cdef vector[double] _dlo(const double[::1] dd, const double[::1] tl, Py_ssize_t count,
                         Py_ssize_t m) except *:
    """The totals' thresholds d_i - count tau_i (the tolerance rule)."""
    _check_tol(tl, m)
    cdef vector[double] dl
    cdef Py_ssize_t i
    dl.resize(m + 1)
    for i in range(m):
        dl[i] = dd[i] - <double>count * tl[i]
    return dl


cdef inline double _factor(const double[::1] d, double* st, double* sp, Py_ssize_t m) noexcept nogil:
    cdef double u = 1.0
    cdef Py_ssize_t i
    for i in range(m):
        if sp[i] > 0:  # a property the set has none of counts 1 (0/0: no NaN)
            u = u * ((d[i] + st[i]) / sp[i])
    return u


cdef inline double _deficit(const double[::1] d, const double* dlo, double* sa,
                            Py_ssize_t m) noexcept nogil:
    cdef double f = 0.0
    cdef Py_ssize_t i
    for i in range(m):
        if sa[i] < dlo[i]:
            f = f + (sa[i] - d[i]) / (d[i] if d[i] > 0 else 1.0)
    return f


def select_and_swap(const double[:, ::1] a,    # IN  (r, m) available amounts
                    const double[:, ::1] tm,   # IN  (r, m) window maxima
                    const double[:, ::1] p,    # IN  (r, m) capacities
                    const double[::1] dd,      # IN  (m,) totals d
                    Py_ssize_t l1,             # IN
                    seed,                      # IN  int, taken modulo 2**64
                    const double[::1] tl,      # IN  (m,) tolerance tau
                    int64_t[::1] sel, deadline=None):         # OUT (count,) the selected rows
    """SelectAndSwap (Phase IV) of count = len(sel) rows of a; returns (ok, attempts).
    See coalloc.collective._reference.search.select_and_swap. GIL released."""
    cdef Py_ssize_t r = a.shape[0], m = a.shape[1], count = sel.shape[0]
    if count < 1 or count > r or m < 1:
        raise ValueError("select_and_swap needs 1 <= len(sel) <= rows and at least one property")
    if tm.shape[0] != r or p.shape[0] != r or tm.shape[1] != m or p.shape[1] != m or dd.shape[0] != m:
        raise ValueError("avail, tmax and cap must be (r, m), d of length m")
    cdef vector[double] dl = _dlo(dd, tl, count, m)
    cdef uint64_t sd = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    cdef vector[char] in_a
    cdef vector[double] sa, st, sp, na, util
    cdef vector[Py_ssize_t] ties, perm, props
    cdef vector[pair[double, Py_ssize_t]] order
    cdef Py_ssize_t k, q, j, i, v, rm, out, w, tmp, pos, n_a, c, mm, limit, kk
    cdef double best, top
    cdef bint canswap, viol, ok
    cdef Xoshiro256ss* rng
    # a swap attempt sorts the rows: look at the clock each time
    cdef Poll poll = Poll(deadline_of(deadline), 1)
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
                if sa[i] < dl[i]:
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
                    if not (na[i] >= (sa[i] if sa[i] < dl[i] else dl[i])):
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
            if sa[i] < dl[i]:
                ok = False
        del rng
    if poll.stopped():
        coalloc_raise_interrupt()
    return bool(ok), int(c - 1)


def phase5(const double[:, ::1] a,    # IN    (r, m) available amounts
           const double[:, ::1] tm,   # IN    (r, m) window maxima
           const double[:, ::1] p,    # IN    (r, m) capacities
           const double[::1] dd,      # IN    (m,) totals d
           Py_ssize_t l2,             # IN
           seed,                      # IN    int, taken modulo 2**64
           const double[::1] tl,      # IN    (m,) tolerance tau
           int64_t[::1] sel, deadline=None):         # INOUT (count,) distinct rows -> the improved set
    """Phase V: N*l2 random swaps kept when admissible and not worse; returns accepted.
    See coalloc.collective._reference.search.phase5. GIL released."""
    cdef Py_ssize_t r = a.shape[0], m = a.shape[1], count = sel.shape[0]
    if count < 1 or count > r:
        raise ValueError("phase5 needs 1 <= len(sel) <= rows")
    if tm.shape[0] != r or p.shape[0] != r or tm.shape[1] != m or p.shape[1] != m or dd.shape[0] != m:
        raise ValueError("avail, tmax and cap must be (r, m), d of length m")
    cdef vector[double] dl = _dlo(dd, tl, count, m)
    cdef uint64_t sd = <uint64_t>(int(seed) & 0xFFFFFFFFFFFFFFFF)
    cdef vector[char] chosen
    cdef vector[int64_t] rest
    cdef vector[double] sa, st, sp, na, nt, np_
    cdef Py_ssize_t c, c0, c1, i, j, ps, pa, out, inn, accepted = 0
    cdef double cur, f
    cdef bint ok
    cdef Xoshiro256ss* rng
    # asked every 4096 swaps (a swap is ~20 ns: kept off its path)
    cdef Poll poll = Poll(deadline_of(deadline), 1)
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
                        if not (na[i] >= dl[i]):
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
    return int(accepted)


cdef extern from *:
    """
    /* _swap_bound's constants (issue 40, h54coll): the margin in log space, relative, far
       above the rounding of the computed factors (about 5 m 2^-53 relative), of log and of
       the bound's sums; the largest |log| a factor's quotients may reach together (the
       values stay normal doubles, so their rounding is relative); the largest relative
       change of a capacity sum its second-order term accepts; the least set size it runs
       for (below, evaluating every swap is faster than the bound's sort). */
    #define COALLOC_BOUND_MARGIN 1e-10
    #define COALLOC_BOUND_LOG_RANGE 600.0
    #define COALLOC_BOUND_W 0.5
    #define COALLOC_BOUND_COUNT 16
    """
    double COALLOC_BOUND_MARGIN
    double COALLOC_BOUND_LOG_RANGE
    double COALLOC_BOUND_W
    Py_ssize_t COALLOC_BOUND_COUNT


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _swap_bound(const double[:, ::1] a, const double[:, ::1] tm, const double[:, ::1] p,
                     const double* dd, const double* st, const double* sp,
                     const int64_t[::1] sel, const char* chosen, Py_ssize_t r, Py_ssize_t m,
                     double* X, double* Y, Py_ssize_t* free, double* out) noexcept nogil:
    """A bound on every swap's factor in the factor phase of swap_search (issue 40, h54coll):
    log u(p, q) <= K0 + Y[p] + X[q] + E for the set's row at position p swapped for the row
    free[q] out of the set, u the exact factor of the rounded sums that swap_search divides.

    With S_i = d_i + st_i and P_i = sp_i (the set's sums, any positive reference would do),
    a numerator N_i = d_i + b1_i + t_qi and a denominator D_i = b2_i + c_qi (b1, b2: the sums
    without row p): log N_i <= log S_i + (N_i - S_i) / S_i (concavity) and, with w = (D_i -
    P_i) / P_i, |w| <= W_i < 1, log D_i >= log P_i + w - W_i^2 / (2 (1 - W_i)) (the series
    of log(1 + w)). So K0 = sum_i log(S_i / P_i), Y[p] = sum_i (d_i + b1_i - S_i) / S_i - (b2_i
    - P_i) / P_i, X[q] = sum_i t_qi / S_i - c_qi / P_i and E = sum_i W_i^2 / (2 (1 - W_i)).
    Writes free (the rows out of the set, ascending), X, Y and out = (K0 + E, the margin,
    max_p Y[p]); returns the number of rows out of the set, or -1 when the bound does not
    hold as stated (a window maximum or a total below 0, a capacity <= 0, a quotient far from
    1 or not finite, NaN: every comparison below fails on NaN), then the caller evaluates
    every swap as before."""
    cdef Py_ssize_t count = sel.shape[0], i, j, q, k = 0
    cdef double S, P, t, c, tlo, thi, clo, chi, b1lo, b1hi, b2lo, b2hi, b1, b2, W, E = 0.0
    cdef double K0 = 0.0, rng = 0.0, lo, hi, ymax = -INFINITY, xabs = 0.0, yabs = 0.0
    for q in range(r):
        if not chosen[q]:
            free[k] = q
            X[k] = 0.0
            k += 1
    for j in range(count):
        Y[j] = 0.0
    for i in range(m):
        S = dd[i] + st[i]
        P = sp[i]
        if not (dd[i] >= 0.0 and S > 0.0 and P > 0.0 and S < INFINITY and P < INFINITY):
            return -1
        tlo = INFINITY; thi = 0.0; clo = INFINITY; chi = 0.0
        for j in range(k):
            q = free[j]
            t = tm[q, i]
            c = p[q, i]
            if not (t >= 0.0 and c > 0.0 and t < INFINITY and c < INFINITY):
                return -1
            tlo = _mn(tlo, t); thi = _mx(thi, t); clo = _mn(clo, c); chi = _mx(chi, c)
            X[j] = X[j] + (t / S - c / P)
        b1lo = INFINITY; b1hi = 0.0; b2lo = INFINITY; b2hi = 0.0
        for j in range(count):
            q = sel[j]
            b1 = st[i] - tm[q, i]
            b2 = sp[i] - p[q, i]
            if not (b1 >= 0.0 and b2 >= 0.0):
                return -1
            b1lo = _mn(b1lo, b1); b1hi = _mx(b1hi, b1); b2lo = _mn(b2lo, b2); b2hi = _mx(b2hi, b2)
            Y[j] = Y[j] + (((dd[i] + b1) - S) / S - (b2 - P) / P)
        if k == 0:
            return 0
        # the quotients' range (a few ulps of rounding aside): normal doubles throughout
        lo = (dd[i] + b1lo + tlo) / (b2hi + chi)
        hi = (dd[i] + b1hi + thi) / (b2lo + clo)
        if not (lo > 0.0 and hi < INFINITY):
            return -1
        rng = rng + _mx(fabs(log(lo)), fabs(log(hi)))
        W = _mx(fabs(b2lo + clo - P), fabs(b2hi + chi - P)) / P * (1.0 + 1e-9)
        if not (W < COALLOC_BOUND_W and rng < COALLOC_BOUND_LOG_RANGE):
            return -1
        E = E + W * W / (2.0 * (1.0 - W))
        K0 = K0 + log(S / P)
    for j in range(k):
        xabs = _mx(xabs, fabs(X[j]))
    for j in range(count):
        yabs = _mx(yabs, fabs(Y[j]))
        ymax = _mx(ymax, Y[j])
    out[0] = K0 + E
    out[1] = COALLOC_BOUND_MARGIN * (1000.0 + fabs(K0) + E + xabs + yabs)
    out[2] = ymax
    return k


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _bounded_round(const double[:, ::1] a, const double[:, ::1] tm,
                        const double[:, ::1] p, const double[::1] dd, const double* dl,
                        const double* sa, const double* st, const double* sp,
                        const int64_t[::1] sel, const char* chosen, Py_ssize_t r,
                        Py_ssize_t m, double cur, vector[double]& X, vector[double]& Y,
                        vector[Py_ssize_t]& free, vector[pair[double, Py_ssize_t]]& order,
                        double* na, Py_ssize_t* bp, Py_ssize_t* bq,
                        double* best) noexcept nogil:
    """One round of swap_search's factor phase (every total met) with the swaps that
    _swap_bound proves cannot beat the best so far left out (issue 40, h54coll: 2-6 % of
    them are evaluated on the week's requests): the rows out of the set with X[q] at or
    above the loosest threshold, in descending X, then per set row p (ascending) those whose
    bound reaches the best so far; each evaluated as swap_search's loop does (the same
    operations, so the same value). The same swap as that loop: the best value, ties to the
    lower position p, then the lower row q (a skipped swap's value is below the best, never
    equal). Returns 0 with bp, bq, best written (bp -1: no swap improves), or -1: the bound
    does not hold on these rows (the caller evaluates every swap)."""
    cdef Py_ssize_t count = sel.shape[0], nf, ns = 0, pp, j, q, out, i
    cdef double bnd[3]
    cdef double lb, thr, val, x, lo
    bnd[0] = 0.0; bnd[1] = 0.0; bnd[2] = 0.0
    nf = _swap_bound(a, tm, p, &dd[0], st, sp, sel, chosen, r, m, &X[0], &Y[0], &free[0], bnd)
    lb = log(cur)
    if nf < 0 or not (fabs(lb) < 700.0):
        return -1
    bp[0] = -1
    bq[0] = -1
    best[0] = cur
    # the loosest threshold (the largest Y, the best at its lowest): rows below it never count
    lo = lb - bnd[0] - bnd[2] - bnd[1]
    for j in range(nf):
        if X[j] >= lo:
            order[ns].first = -X[j]
            order[ns].second = j
            ns += 1
    sort(order.begin(), order.begin() + ns)
    for pp in range(count):
        out = sel[pp]
        thr = lb - bnd[0] - Y[pp] - bnd[1]
        for j in range(ns):
            if -order[j].first < thr:
                break
            q = free[order[j].second]
            val = 1.0
            for i in range(m):
                x = (dd[i] + ((st[i] - tm[out, i]) + tm[q, i])) / ((sp[i] - p[out, i]) + p[q, i])
                val = val * x
            if not (val > best[0] or (val == best[0] and bp[0] == pp and q < bq[0])):
                continue
            for i in range(m):
                na[i] = (sa[i] - a[out, i]) + a[q, i]
            for i in range(m):
                if na[i] < dl[i]:  # a total missed: the deficit as _deficit adds it
                    if _deficit(dd, dl, na, m) != 0.0:
                        val = NAN
                    break
            if not (val == val):
                continue
            best[0] = val
            bp[0] = pp
            bq[0] = q
            lb = log(val)
            thr = lb - bnd[0] - Y[pp] - bnd[1]
    return 0


def swap_search(const double[:, ::1] a,    # IN    (r, m) available amounts
                const double[:, ::1] tm,   # IN    (r, m) window maxima
                const double[:, ::1] p,    # IN    (r, m) capacities
                const double[::1] dd,      # IN    (m,) totals d
                Py_ssize_t max_rounds,     # IN
                const double[::1] tl,      # IN    (m,) tolerance tau
                int64_t[::1] sel, deadline=None):         # INOUT (count,) distinct rows -> the improved set
    """Deterministic best-improvement swaps (repair the totals, then maximise the estimated
    utilisation factor); returns the rounds. See
    coalloc.collective._reference.search.swap_search. GIL released.

    Per round and row out of the set, every candidate's value (its deficit, or its factor
    and whether it meets every total) is computed property by property over all the rows
    out of the set at once (_swap_values: their columns transposed once per round, the same
    operations in the same order as _deficit and _factor, so the same values bit for bit),
    then the candidates are read in order (issue 40: about 20 ns a candidate before, a
    division chain per candidate). In the factor phase, on sets of COALLOC_BOUND_COUNT rows or
    more, only the swaps whose bound (_swap_bound) reaches the best so far are valued
    (_bounded_round, issue 40, h54coll): the same swap, 2-6 % of the values."""
    cdef Py_ssize_t r = a.shape[0], m = a.shape[1], count = sel.shape[0]
    if count < 1 or count > r:
        raise ValueError("swap_search needs 1 <= len(sel) <= rows")
    if tm.shape[0] != r or p.shape[0] != r or tm.shape[1] != m or p.shape[1] != m or dd.shape[0] != m:
        raise ValueError("avail, tmax and cap must be (r, m), d of length m")
    cdef vector[double] dl = _dlo(dd, tl, count, m)
    cdef vector[char] chosen, okq
    cdef vector[double] sa, st, sp, na, aT, tT, pT, vals, base, X, Y
    cdef vector[Py_ssize_t] free
    cdef vector[pair[double, Py_ssize_t]] order
    cdef Py_ssize_t rounds = 0, pp, q, i, j, out, bp, bq, k, nf = r - count
    cdef double deficit, cur, best, val
    cdef bint feasible
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    with nogil:
        chosen.assign(r, 0)
        for j in range(count):
            chosen[sel[j]] = 1
        sa.assign(m, 0.0); st.assign(m, 0.0); sp.assign(m, 0.0); na.assign(m, 0.0)
        base.assign(3 * m, 0.0)
        aT.resize(m * nf + 1); tT.resize(m * nf + 1); pT.resize(m * nf + 1)
        vals.resize(nf + 1); okq.resize(nf + 1); free.resize(nf + 1)
        X.resize(nf + 1); Y.resize(count + 1); order.resize(nf + 1)
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
            deficit = _deficit(dd, &dl[0], &sa[0], m)
            feasible = deficit == 0.0
            if feasible:
                cur = _factor(dd, &st[0], &sp[0], m)
            else:
                cur = deficit
            # the factor phase: only the swaps whose bound reaches the best (issue 40, h54coll;
            # a set of a few rows evaluates every swap faster than the bound's sort)
            if not feasible or count < COALLOC_BOUND_COUNT or _bounded_round(a, tm, p, dd, &dl[0], &sa[0], &st[0], &sp[0],
                                              sel, &chosen[0], r, m, cur, X, Y, free, order,
                                              &na[0], &bp, &bq, &best) != 0:
                best = cur
                bp = -1
                bq = -1
                # the rows out of the set, ascending, and their columns transposed
                k = 0
                for q in range(r):
                    if not chosen[q]:
                        free[k] = q
                        for i in range(m):
                            aT[i * nf + k] = a[q, i]
                            tT[i * nf + k] = tm[q, i]
                            pT[i * nf + k] = p[q, i]
                        k += 1
                for pp in range(count):
                    out = sel[pp]
                    for i in range(m):  # the set without out: the parentheses of the sums below
                        base[i] = sa[i] - a[out, i]
                        base[m + i] = st[i] - tm[out, i]
                        base[2 * m + i] = sp[i] - p[out, i]
                    _swap_values(&aT[0], &tT[0], &pT[0], &base[0], &dd[0], &dl[0], nf, m,
                                 feasible, &vals[0], &okq[0])
                    for k in range(nf):
                        val = vals[k]
                        if not (val > best):  # not taken: its totals need no look (h52coll)
                            continue
                        q = free[k]
                        if feasible and not okq[k]:
                            # a total missed: the deficit as _deficit adds it (not 0.0 unless
                            # every term underflows)
                            for i in range(m):
                                na[i] = base[i] + a[q, i]
                            if _deficit(dd, &dl[0], &na[0], m) != 0.0:
                                continue
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
    return int(rounds)


cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* _swap_values's loops over the candidates q of one property (issue 40, h52coll): two
       candidates a step in SSE2 (the x86-64 baseline), the same operations in the same order
       as the scalar loop (IEEE division, multiplication and addition are correctly rounded
       in either form, and no FMA: the same values bit for bit); a select keeps the old value
       where the scalar loop skips the update (den <= 0, or x >= li), so NaN compares alike.
       Other targets, and the last odd candidate: the scalar loop. */
    static inline void coalloc_swap_factor(const double* ai, const double* ti,
                                           const double* pi, double b0, double b1, double b2,
                                           double di, double li, Py_ssize_t r, double* vals,
                                           char* okq) {
        Py_ssize_t q = 0;
    #if defined(__SSE2__)
        const __m128d vb0 = _mm_set1_pd(b0), vb1 = _mm_set1_pd(b1), vb2 = _mm_set1_pd(b2);
        const __m128d vdi = _mm_set1_pd(di), vli = _mm_set1_pd(li);
        const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
        for (; q + 2 <= r; q += 2) {
            const __m128d a = _mm_loadu_pd(ai + q), t = _mm_loadu_pd(ti + q);
            const __m128d p = _mm_loadu_pd(pi + q), v = _mm_loadu_pd(vals + q);
            const int miss = _mm_movemask_pd(_mm_cmplt_pd(_mm_add_pd(vb0, a), vli));
            okq[q] = (char)(okq[q] & !(miss & 1));
            okq[q + 1] = (char)(okq[q + 1] & !(miss >> 1));
            const __m128d den = _mm_add_pd(vb2, p);
            const __m128d pos = _mm_cmpgt_pd(den, zero);
            const __m128d dsel = _mm_or_pd(_mm_and_pd(pos, den), _mm_andnot_pd(pos, one));
            const __m128d x = _mm_div_pd(_mm_add_pd(vdi, _mm_add_pd(vb1, t)), dsel);
            const __m128d y = _mm_mul_pd(v, x);
            _mm_storeu_pd(vals + q, _mm_or_pd(_mm_and_pd(pos, y), _mm_andnot_pd(pos, v)));
        }
    #endif
        for (; q < r; ++q) {
            okq[q] = (char)(okq[q] & !(b0 + ai[q] < li));
            const double den = b2 + pi[q];
            const double x = (di + (b1 + ti[q])) / (den > 0 ? den : 1.0);
            if (den > 0) vals[q] = vals[q] * x;
        }
    }
    static inline void coalloc_swap_deficit(const double* ai, double b0, double di, double dv,
                                            double li, Py_ssize_t r, double* vals) {
        Py_ssize_t q = 0;
    #if defined(__SSE2__)
        const __m128d vb0 = _mm_set1_pd(b0), vdi = _mm_set1_pd(di);
        const __m128d vdv = _mm_set1_pd(dv), vli = _mm_set1_pd(li);
        for (; q + 2 <= r; q += 2) {
            const __m128d x = _mm_add_pd(vb0, _mm_loadu_pd(ai + q));
            const __m128d v = _mm_loadu_pd(vals + q);
            const __m128d y = _mm_add_pd(v, _mm_div_pd(_mm_sub_pd(x, vdi), vdv));
            const __m128d low = _mm_cmplt_pd(x, vli);
            _mm_storeu_pd(vals + q, _mm_or_pd(_mm_and_pd(low, y), _mm_andnot_pd(low, v)));
        }
    #endif
        for (; q < r; ++q) {
            const double x = b0 + ai[q];
            if (x < li) vals[q] = vals[q] + (x - di) / dv;
        }
    }
    """
    void coalloc_swap_factor(const double* ai, const double* ti, const double* pi, double b0,
                             double b1, double b2, double di, double li, Py_ssize_t r,
                             double* vals, char* okq) noexcept nogil
    void coalloc_swap_deficit(const double* ai, double b0, double di, double dv, double li,
                              Py_ssize_t r, double* vals) noexcept nogil


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _swap_values(const double* aT, const double* tT, const double* pT,
                       const double* base, const double* dd, const double* dl, Py_ssize_t r,
                       Py_ssize_t m, bint feasible, double* vals, char* okq) noexcept nogil:
    """swap_search's values of swapping each of the r rows out of the set (their columns
    transposed: aT[i * r + q]) in for the row whose removal leaves the sums base (amounts,
    window maxima, capacities: 3 m values). Not feasible: vals the deficit, as _deficit computes it (its
    terms added in property order from 0.0; adding 0.0 leaves a sum unchanged). Feasible:
    vals the factor as _factor computes it (its quotients multiplied in property order from
    1.0, those with a capacity sum <= 0 skipped) and okq whether every total is met (then
    _deficit is exactly 0.0). Loops over q, one property at a time: the divisions of
    different candidates independent, two a step in SSE2 (coalloc_swap_factor and
    coalloc_swap_deficit above; GCC does not vectorise the plain loops under
    -ftrapping-math: issue 40, h52coll)."""
    cdef Py_ssize_t i, q
    if not feasible:
        for q in range(r):
            vals[q] = 0.0
        for i in range(m):
            coalloc_swap_deficit(&aT[i * r], base[i], dd[i], dd[i] if dd[i] > 0 else 1.0,
                                 dl[i], r, vals)
        return
    for q in range(r):
        vals[q] = 1.0
        okq[q] = 1
    for i in range(m):
        coalloc_swap_factor(&aT[i * r], &tT[i * r], &pT[i * r], base[i], base[m + i],
                            base[2 * m + i], dd[i], dl[i], r, vals, okq)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
@cython.cdivision(True)
def scan_screen(const double[::1] t,            # IN  (K,) breakpoints, ascending
                const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                const int64_t[::1] nd,          # IN  (n,) rows of res to screen
                const double[:, ::1] p,         # IN  (n, m) capacities of those rows
                demand,                         # IN  Demand: e, d (m,), count, tol (m,)
                plan,                           # IN  ScanPlan: starts (S,), duration, first_block, max_block
                out,                            # OUT ScreenOut: code, elig, prop, value (S,)
                double[:, ::1] tout, deadline=None):           # OUT (n, m)
    """The screening loop of the default method in one call (GIL released).

    Starts are taken in order, a first block of first_block starts, then blocks of max_block
    starts; for a block the window maxima of the rows ``nodes`` of ``reserved`` are computed
    (as window_max: one sparse table per row over the block's segments) and each start is
    screened (as screen) until the first start that passes. Returns stop, the index of the
    first passing start (S if none); the screen outputs code, elig, prop, val (as screen's)
    are filled for starts 0..stop (code 0, elig 0, prop -1, val 0 after it) and tout receives
    the window maxima at st[stop] (zeros when stop == S). Twin:
    coalloc.collective._reference.search.scan_screen."""
    cdef const double[::1] st = plan.starts
    cdef double duration = plan.duration
    cdef Py_ssize_t first_block = plan.first_block
    cdef Py_ssize_t max_block = plan.max_block
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1]
    cdef Py_ssize_t q
    cdef ScreenArgs sa = _screen_args(demand, out, S, m)
    if tout.shape[0] != n or tout.shape[1] != m:
        raise ValueError("tmax out must be (len(nodes), m)")
    if p.shape[0] != n or p.shape[1] != m:
        raise ValueError("cap must be (len(nodes), m), e and d of length m")
    if first_block < 1 or max_block < first_block:
        raise ValueError("need 1 <= first_block <= max_block")
    _check_rows(nd, res.shape[0], None)
    if S and t.shape[0] == 0:
        raise ValueError("times must not be empty")
    if res.shape[2] != t.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    tout[:, :] = 0.0
    cdef vector[Py_ssize_t] lo, hi, lev, off
    cdef vector[double] buf, tab, pt, av, vals, thr
    cdef vector[int64_t] ok
    cdef Py_ssize_t s, j, jj, i, b0, b1, B, kmin, kmax, levels, top, nm = n * m
    cdef Py_ssize_t stop = S
    cdef int c
    cdef Poll poll = Poll(deadline_of(deadline), 1)
    if S == 0 or m == 0:
        return stop
    with nogil:
        lo.resize(S); hi.resize(S); lev.resize(S); off.resize(S)
        top = _windows(t, st, duration, &lo[0], &hi[0], &lev[0], &off[0])
        # capacities property by property, scratch of the screens, sized once
        pt.resize(nm + 1); av.resize(nm + 1); vals.resize(n + 1); ok.resize(n + 1)
        thr.assign(m, -INFINITY)
        for jj in range(n):
            for i in range(m):
                pt[i * n + jj] = p[jj, i]
        b0 = 0
        B = first_block
        while b0 < S and stop == S:
            if poll.stop():
                break
            b1 = b0 + B
            if b1 > S:
                b1 = S
            # window maxima of the block, buf[(s - b0) * n * m + i * n + jj]
            kmin = lo[b0]
            kmax = hi[b0]
            levels = 0
            for s in range(b0, b1):
                if lo[s] < kmin:
                    kmin = lo[s]
                if hi[s] > kmax:
                    kmax = hi[s]
                if lev[s] > levels:
                    levels = lev[s]
            if <Py_ssize_t>buf.size() < (b1 - b0) * nm + 1:
                buf.resize((b1 - b0) * nm + 1)
            if <Py_ssize_t>tab.size() < levels * (kmax - kmin) + 1:
                tab.resize(levels * (kmax - kmin) + 1)
            for jj in range(n):
                j = nd[jj]
                for i in range(m):
                    _row_maxima(&res[j, i, 0], kmin, kmax - kmin, levels, &lo[0], &lev[0],
                                &off[0], b0, b1, &tab[0], &buf[i * n + jj], nm)
            # the screens, start by start, up to the first start that passes
            for s in range(b0, b1):
                c = _screen_one(&buf[(s - b0) * nm], &pt[0], n, m, sa.e, sa.d, sa.tol, sa.count,
                                &av[0], &ok[0], &vals[0], &thr[0], &sa.elig[s], &sa.prop[s],
                                &sa.val[s], NULL, 0)
                sa.code[s] = c
                if c == 0:
                    stop = s
                    for jj in range(n):
                        for i in range(m):
                            tout[jj, i] = buf[(s - b0) * nm + i * n + jj]
                    break
            b0 = b1
            B = max_block
    if poll.stopped():
        coalloc_raise_interrupt()
    return stop


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
def decrease_starts(const double[::1] t,           # IN  (K,) breakpoints, ascending
                    const double[:, :, ::1] res,   # IN  (N, m, K) reserved amounts
                    const int64_t[::1] nd,         # IN  (n,) rows of res
                    double lo,                     # IN
                    double hi,                     # IN
                    double[::1] out):              # OUT (K + 1,) out[:c] the starts
    """lo and the breakpoints t[k] in (lo, hi] where a reserved amount of a row in nd
    falls (res[j, i, k] < res[j, i, k - 1]), ascending, into out[:c]; returns c
    (GIL released). Twin: coalloc.collective._reference.search.decrease_starts."""
    cdef Py_ssize_t K = t.shape[0], n = nd.shape[0], m = res.shape[1], jj, i, k, c = 1
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    _check_rows(nd, res.shape[0], None)
    if out.shape[0] != K + 1:
        raise ValueError("out must have len(times) + 1 entries")
    cdef vector[int] drop  # int, not char: its stores cannot alias the rows (vectorised)
    cdef const double* rowp
    cdef int* dp
    with nogil:
        drop.assign(K + 1, 0)
        dp = &drop[0]
        out[0] = lo
        for jj in range(n):
            for i in range(m):
                rowp = &res[nd[jj], i, 0]
                for k in range(1, K):  # no branch on the data
                    dp[k] |= rowp[k] < rowp[k - 1]
        for k in range(1, K):
            if drop[k] and t[k] > lo and t[k] <= hi:
                out[c] = t[k]
                c += 1
    return int(c)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
def window_max_rows(const double[::1] t,            # IN  (K,) breakpoints, ascending
                    const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                    const int64_t[::1] nd,          # IN  (n,) rows of res
                    const double[::1] st,           # IN  (S,) starts, non-decreasing
                    double duration,                # IN
                    double[:, :, ::1] out):         # OUT (S, n, m)
    """out[s, jj, i] = max of res[nd[jj], i, k] over the segments meeting
    [st[s], st[s] + duration) (the segment holding st[s], segment 0 before the first
    breakpoint, at least one segment). GIL released.

    Per row O(span + S) whatever the windows' length (span: the segments the windows cover;
    the sparse table of window_max costs span log2(window)). When the longest window is at
    most twice the shortest (W segments; a grid of equal slots: always), van Herk /
    Gil-Werman: the running maxima of the row forwards and backwards within blocks of W
    segments give the maximum of any W consecutive segments from two entries, and a window
    is the union of its first and last W segments (no branch on the data, vectorised).
    Otherwise one monotone deque per row (starts in order, so both ends of the windows only
    move forward; each segment enters and leaves once). Twin:
    coalloc.collective._reference.search.window_max_rows."""
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1], K = t.shape[0]
    cdef Py_ssize_t s, jj, i, k, kmin, kmax, head, tail, nxt, nm = n * m
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if out.shape[0] != S or out.shape[1] != n or out.shape[2] != m:
        raise ValueError("out must be (len(starts), len(nodes), m)")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nd, res.shape[0], st)
    if S == 0 or n == 0 or m == 0:
        return
    cdef vector[Py_ssize_t] lo, hi, lev, off, dq
    cdef vector[double] buf, fw, bw
    cdef const double* r
    cdef double* o
    cdef Py_ssize_t g0, g1, q, x, x1, span, W, Lmax, G = 16  # rows per group
    cdef Py_ssize_t c, u, v, nrp
    cdef const double* rp[4]
    cdef double* op[4]
    cdef const double* r0
    cdef const double* r1
    cdef const double* r2
    cdef const double* r3
    cdef double* f0
    cdef double* f1
    cdef double* f2
    cdef double* f3
    cdef double* b0
    cdef double* b1
    cdef double* b2
    cdef double* b3
    cdef double* fu
    cdef double* bu
    with nogil:
        lo.resize(S); hi.resize(S); lev.resize(S); off.resize(S)
        _windows(t, st, duration, &lo[0], &hi[0], &lev[0], &off[0])
        kmin = lo[0]
        kmax = hi[S - 1]
        span = kmax - kmin
        W = hi[0] - lo[0]
        Lmax = W
        for s in range(S):
            if hi[s] - lo[s] < W:
                W = hi[s] - lo[s]
            if hi[s] - lo[s] > Lmax:
                Lmax = hi[s] - lo[s]
        dq.resize(span + 1)
        fw.resize(4 * (span + 1))
        bw.resize(4 * (span + 1))
        buf.resize(G * m * S)
        f0 = &fw[0]
        f1 = &fw[span + 1]
        f2 = &fw[2 * (span + 1)]
        f3 = &fw[3 * (span + 1)]
        b0 = &bw[0]
        b1 = &bw[span + 1]
        b2 = &bw[2 * (span + 1)]
        b3 = &bw[3 * (span + 1)]
        g0 = 0
        while g0 < n:
            g1 = g0 + G if g0 + G < n else n
            nrp = (g1 - g0) * m  # rows (node, property) of the group, four at a time
            for c in range(0, nrp, 4):
                for u in range(4):
                    v = c + u if c + u < nrp else nrp - 1  # the last chunk repeats its last row
                    rp[u] = &res[nd[g0 + v // m], v % m, kmin]
                    op[u] = &buf[v * S]
                if Lmax <= 2 * W:
                    # running maxima within blocks of W, forwards (f) and backwards (b), four
                    # independent rows at once (four dependency chains)
                    r0 = rp[0]
                    r1 = rp[1]
                    r2 = rp[2]
                    r3 = rp[3]
                    x = 0
                    while x < span:
                        x1 = x + W if x + W < span else span
                        f0[x] = r0[x]
                        f1[x] = r1[x]
                        f2[x] = r2[x]
                        f3[x] = r3[x]
                        for q in range(x + 1, x1):
                            f0[q] = _mx(f0[q - 1], r0[q])
                            f1[q] = _mx(f1[q - 1], r1[q])
                            f2[q] = _mx(f2[q - 1], r2[q])
                            f3[q] = _mx(f3[q - 1], r3[q])
                        q = x1 - 1
                        b0[q] = r0[q]
                        b1[q] = r1[q]
                        b2[q] = r2[q]
                        b3[q] = r3[q]
                        for q in range(x1 - 2, x - 1, -1):
                            b0[q] = _mx(b0[q + 1], r0[q])
                            b1[q] = _mx(b1[q + 1], r1[q])
                            b2[q] = _mx(b2[q + 1], r2[q])
                            b3[q] = _mx(b3[q + 1], r3[q])
                        x = x1
                    for u in range(4):
                        fu = &fw[u * (span + 1)]
                        bu = &bw[u * (span + 1)]
                        o = op[u]
                        for s in range(S):
                            # [x, x + W) = bu[x] (to its block's end) and fu[x + W - 1]
                            x = lo[s] - kmin
                            x1 = hi[s] - W - kmin
                            o[s] = _mx(_mx(bu[x], fu[x + W - 1]), _mx(bu[x1], fu[x1 + W - 1]))
                else:
                    for u in range(4):
                        r = rp[u]
                        o = op[u]
                        head = 0
                        tail = 0
                        nxt = 0
                        for s in range(S):
                            while nxt < hi[s] - kmin:  # push: drop what the new one dominates
                                while tail > head and r[dq[tail - 1]] <= r[nxt]:
                                    tail -= 1
                                dq[tail] = nxt
                                tail += 1
                                nxt += 1
                            while dq[head] < lo[s] - kmin:  # pop what the window has left
                                head += 1
                            o[s] = r[dq[head]]
            # out[s, g0:g1, :] is one contiguous run per start
            for s in range(S):
                o = &out[s, g0, 0]
                for q in range((g1 - g0) * m):
                    o[q] = buf[q * S + s]
            g0 = g1


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double _ext(double a, double b, bint low) noexcept nogil:
    if low:
        return a if a < b else b
    return a if a > b else b


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
cdef _block_ext(const double[:, :, ::1] res, Py_ssize_t B, double[:, :, ::1] out, bint low):
    """block_maxima (low false) and block_minima (low true): a whole block is read by four
    independent chains (its quarters) joined at the end (the same value in any order)."""
    cdef Py_ssize_t N = res.shape[0], m = res.shape[1], K = res.shape[2]
    cdef Py_ssize_t j, i, b, k, nb, full, q4
    if B < 1:
        raise ValueError("B must be >= 1")
    nb = (K + B - 1) // B
    if out.shape[0] != N or out.shape[1] != m or out.shape[2] != nb:
        raise ValueError("out must be (N, m, ceil(K / B))")
    if N == 0 or m == 0 or K == 0:
        return
    cdef const double* r
    cdef double* o
    cdef double a0, a1, a2, a3
    full = K // B
    q4 = B // 4
    with nogil:
        for j in range(N):
            for i in range(m):
                r = &res[j, i, 0]
                o = &out[j, i, 0]
                for b in range(full):
                    k = b * B
                    a0 = r[k]
                    a1 = r[k + q4] if q4 else a0
                    a2 = r[k + 2 * q4] if q4 else a0
                    a3 = r[k + 3 * q4] if q4 else a0
                    if q4:
                        for k in range(b * B + 1, b * B + q4):
                            a0 = _ext(a0, r[k], low)
                            a1 = _ext(a1, r[k + q4], low)
                            a2 = _ext(a2, r[k + 2 * q4], low)
                            a3 = _ext(a3, r[k + 3 * q4], low)
                    for k in range(b * B + 4 * q4, b * B + B):  # B not a multiple of 4
                        a0 = _ext(a0, r[k], low)
                    o[b] = _ext(_ext(a0, a1, low), _ext(a2, a3, low), low)
                if full < nb:
                    a0 = r[full * B]
                    for k in range(full * B + 1, K):
                        a0 = _ext(a0, r[k], low)
                    o[full] = a0


def block_maxima(const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                 Py_ssize_t B,                   # IN  segments per block (>= 1)
                 double[:, :, ::1] out):         # OUT (N, m, ceil(K / B))
    """out[j, i, b] = max of res[j, i, k] over the segments b B .. (b + 1) B - 1 (the last
    block may be shorter): the block maxima window_max_blocks and window_screen read (issue
    40, h50coll: the pool's index, built once per grid; NumPy's reduction over the short
    last axis took 0.32-0.40 s at 10,000 nodes x 3 properties x 2,017 breakpoints, this
    0.05 s). GIL released. Twin: coalloc.collective._reference.search.block_maxima."""
    _block_ext(res, B, out, False)


def block_minima(const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                 Py_ssize_t B,                   # IN  segments per block (>= 1)
                 double[:, :, ::1] out):         # OUT (N, m, ceil(K / B))
    """out[j, i, b] = min of res[j, i, k] over the segments b B .. (b + 1) B - 1 (the last
    block may be shorter): window_screen's coarse bound below (issue 40, h50coll). GIL
    released. Twin: coalloc.collective._reference.search.block_minima."""
    _block_ext(res, B, out, True)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.initializedcheck(False)
def window_max_blocks(const double[::1] t,            # IN  (K,) breakpoints, ascending
                      const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                      const double[:, :, ::1] bm,     # IN  (N, m, ceil(K / B)) block maxima
                      Py_ssize_t B,                   # IN  segments per block (>= 1)
                      const int64_t[::1] nd,          # IN  (n,) rows of res
                      const double[::1] st,           # IN  (S,) starts
                      double duration,                # IN
                      double[:, :, ::1] out):         # OUT (S, n, m)
    """out[s, jj, i] = max of res[nd[jj], i, k] over the window of st[s] (as window_max_rows),
    from the maxima of blocks of B segments (bm[j, i, b]: segments b B .. (b + 1) B - 1):
    the window's whole blocks from bm, its partial blocks at both ends from res, so a start
    reads about 2 B + len / B amounts per row instead of len (a few starts over long windows:
    the first block of the default method's scan). GIL released. Twin:
    coalloc.collective._reference.search.window_max_blocks."""
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1], K = t.shape[0]
    cdef Py_ssize_t s, jj, i, k, k0, k1, b0, b1, nb
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if B < 1:
        raise ValueError("B must be >= 1")
    nb = (K + B - 1) // B
    if bm.shape[0] != res.shape[0] or bm.shape[1] != m or bm.shape[2] != nb:
        raise ValueError("block maxima must be (N, m, ceil(K / B))")
    if out.shape[0] != S or out.shape[1] != n or out.shape[2] != m:
        raise ValueError("out must be (len(starts), len(nodes), m)")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nd, res.shape[0], None)
    if S == 0 or n == 0 or m == 0:
        return
    cdef vector[Py_ssize_t] lo, hi, lev, off
    cdef const double* r
    cdef const double* q
    cdef double* o
    cdef double a
    with nogil:
        lo.resize(S); hi.resize(S); lev.resize(S); off.resize(S)
        _windows(t, st, duration, &lo[0], &hi[0], &lev[0], &off[0])
        for jj in range(n):  # row by row: the starts of a block share its cache lines
            for i in range(m):
                r = &res[nd[jj], i, 0]
                q = &bm[nd[jj], i, 0]
                o = &out[0, jj, i]
                for s in range(S):
                    k0 = lo[s]
                    k1 = hi[s]
                    b0 = (k0 + B - 1) // B  # the whole blocks: b0 .. b1 - 1
                    b1 = k1 // B
                    a = r[k0]
                    if b0 >= b1:  # no whole block: the segments themselves
                        for k in range(k0 + 1, k1):
                            a = _mx(a, r[k])
                    else:
                        for k in range(k0 + 1, b0 * B):
                            a = _mx(a, r[k])
                        for k in range(b0, b1):
                            a = _mx(a, q[k])
                        for k in range(b1 * B, k1):
                            a = _mx(a, r[k])
                    o[s * n * m] = a


#: bound_screen's thresholds per (group, property): the ranks count * _BOUND_PCT[k] / 100 of
#: the eligible amounts (scaled to the sample), largest first.
cdef enum:
    _BOUND_K = 7


cdef extern from *:
    """
    #include <math.h>
    #include <stdint.h>
    /* bound_screen's pass over one node (issue 40, h53coll), in C for plain loops over the
       starts (restrict pointers, no bounds checks): from the window maxima wm (m rows of S;
       only the properties with need[i]) and the capacities pj (m): for the properties
       whose minimum is not met at every start (alw[i] = 0), the minimum tests (meet, ok,
       elig); for those that can reach the lowest threshold (rch[i]), the counts C and sums
       Sm of the eligible amounts at or above each of the K thresholds ts (property-major,
       then threshold, then start); av is scratch. A node whose every property meets its
       minimum at every start is eligible everywhere: *eligc += 1. */
    static void coalloc_bound_node(Py_ssize_t S, Py_ssize_t m, Py_ssize_t K,
                                   const double* __restrict wm, const double* __restrict pj,
                                   const double* __restrict elo, const double* __restrict ts,
                                   const char* __restrict alw, const char* __restrict rch,
                                   double* __restrict av, int64_t* __restrict ok,
                                   int64_t* __restrict meet, int64_t* __restrict elig,
                                   int64_t* __restrict eligc, int64_t* __restrict C,
                                   double* __restrict Sm) {
        Py_ssize_t s, i, k;
        int every = 1, any = 0;
        for (i = 0; i < m; ++i) {
            every &= alw[i];
            any |= rch[i];
        }
        if (every) *eligc += 1;
        if (every && !any) return;
        for (s = 0; s < S; ++s) ok[s] = 1;
        for (i = 0; i < m; ++i) {
            const double y = pj[i], e = elo[i];
            const double* __restrict w = wm + i * S;
            double* __restrict ai = av + i * S;
            int64_t* __restrict mt = meet + i * S;
            if (alw[i]) {
                if (rch[i])
                    for (s = 0; s < S; ++s) ai[s] = y - w[s];
                continue;
            }
            for (s = 0; s < S; ++s) {
                const double a = y - w[s];
                const int64_t q = a >= e;
                ai[s] = a;
                mt[s] += q;
                ok[s] &= q;
            }
        }
        if (!every)
            for (s = 0; s < S; ++s) elig[s] += ok[s];
        for (i = 0; i < m; ++i) {
            if (!rch[i]) continue;
            const double* __restrict ai = av + i * S;
            const double* __restrict tlow = ts + (i * K + K - 1) * S;
            for (s = 0; s < S; ++s) {
                const double a = ai[s];
                if (!(ok[s] && a >= tlow[s])) continue;
                for (k = K - 1; k >= 0; --k) {
                    const Py_ssize_t x = (i * K + k) * S + s;
                    if (!(a >= ts[x])) break;  /* the thresholds descend with k */
                    C[x] += 1;
                    Sm[x] += a;
                }
            }
        }
    }
    /* ask for the amounts r[0:c] ahead of their use (the next node's rows, issue 40: the
       pass waits on memory, the rows 16 KiB apart defeat the hardware's prefetch) */
    static inline void coalloc_prefetch(const double* r, Py_ssize_t c) {
        Py_ssize_t q;
    #if defined(__GNUC__)
        for (q = 0; q < c; q += 8) __builtin_prefetch(r + q, 0, 1);
    #else
        (void)r; (void)c; (void)q;
    #endif
    }
    /* the least and largest of r[0:c] (c >= 1) */
    static void coalloc_minmax(const double* __restrict r, Py_ssize_t c, double* lo,
                               double* hi) {
        /* four independent chains (a minimum and a maximum are exact in any order) */
        double a0 = r[0], a1 = r[0], a2 = r[0], a3 = r[0];
        double b0 = r[0], b1 = r[0], b2 = r[0], b3 = r[0];
        Py_ssize_t q;
        for (q = 0; q + 4 <= c; q += 4) {
            a0 = r[q] < a0 ? r[q] : a0;
            a1 = r[q + 1] < a1 ? r[q + 1] : a1;
            a2 = r[q + 2] < a2 ? r[q + 2] : a2;
            a3 = r[q + 3] < a3 ? r[q + 3] : a3;
            b0 = r[q] > b0 ? r[q] : b0;
            b1 = r[q + 1] > b1 ? r[q + 1] : b1;
            b2 = r[q + 2] > b2 ? r[q + 2] : b2;
            b3 = r[q + 3] > b3 ? r[q + 3] : b3;
        }
        for (; q < c; ++q) {
            a0 = r[q] < a0 ? r[q] : a0;
            b0 = r[q] > b0 ? r[q] : b0;
        }
        a0 = a1 < a0 ? a1 : a0;
        a2 = a3 < a2 ? a3 : a2;
        b0 = b1 > b0 ? b1 : b0;
        b2 = b3 > b2 ? b3 : b2;
        *lo = a2 < a0 ? a2 : a0;
        *hi = b2 > b0 ? b2 : b0;
    }
    """
    void coalloc_bound_node(Py_ssize_t S, Py_ssize_t m, Py_ssize_t K, const double* wm,
                            const double* pj, const double* elo, const double* ts,
                            const char* alw, const char* rch, double* av, int64_t* ok,
                            int64_t* meet, int64_t* elig, int64_t* eligc, int64_t* C,
                            double* Sm) noexcept nogil
    void coalloc_minmax(const double* r, Py_ssize_t c, double* lo, double* hi) noexcept nogil
    void coalloc_prefetch(const double* r, Py_ssize_t c) noexcept nogil


@cython.boundscheck(False)
@cython.wraparound(False)
cdef void _row_herk(const double* r, Py_ssize_t span, Py_ssize_t W, const Py_ssize_t* lo,
                    const Py_ssize_t* hi, Py_ssize_t kmin, Py_ssize_t S, double* fw,
                    double* bw, double* o) noexcept nogil:
    """The window maxima of one timetable row (r: its segment kmin on) for the starts 0..S-1
    into o[s] when every window holds W to 2 W segments (van Herk / Gil-Werman, as
    window_max_rows: two passes over the span, whatever the windows' length): the same
    values (a maximum is exact)."""
    cdef Py_ssize_t x, x1, q, s
    x = 0
    while x < span:
        x1 = x + W if x + W < span else span
        fw[x] = r[x]
        for q in range(x + 1, x1):
            fw[q] = _mx(fw[q - 1], r[q])
        bw[x1 - 1] = r[x1 - 1]
        for q in range(x1 - 2, x - 1, -1):
            bw[q] = _mx(bw[q + 1], r[q])
        x = x1
    for s in range(S):
        x = lo[s] - kmin
        x1 = hi[s] - W - kmin
        o[s] = _mx(_mx(bw[x], fw[x + W - 1]), _mx(bw[x1], fw[x1 + W - 1]))


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _bound_decide(Py_ssize_t s, Py_ssize_t S, Py_ssize_t n, Py_ssize_t m,
                       Py_ssize_t count, const double* dd, const double* tl, const double* ts,
                       const int64_t* C, const double* Sm, const double* A, double* xs,
                       double* ys, int64_t* prop) noexcept nogil:
    """bound_screen's decision at start s (at least count eligible nodes): 2 with prop when
    the bounds prove a total missed and which property block_screen reports, else -1."""
    cdef Py_ssize_t i, k, b, a, j, best, nshort = 0
    cdef double ub, lb, Sa, ap, mu, X, Y, dlo, rl, bestrl
    cdef int64_t Ca
    cdef const double* tk
    for i in range(m):
        xs[i] = INFINITY  # not short
        b = _BOUND_K
        for k in range(_BOUND_K):
            if C[(i * _BOUND_K + k) * S + s] >= count:
                b = k
                break
        if b == _BOUND_K:
            return -1
        a = b - 1
        tk = ts + (i * _BOUND_K) * S + s
        Sa = 0.0 if a < 0 else Sm[(i * _BOUND_K + a) * S + s]
        Ca = 0 if a < 0 else C[(i * _BOUND_K + a) * S + s]
        ub = Sm[(i * _BOUND_K + b) * S + s] - <double>(C[(i * _BOUND_K + b) * S + s] - count) * tk[b * S]
        if a >= 0:
            ub = _mn(Sa + <double>(count - Ca) * tk[a * S], ub)
        lb = Sa + <double>(count - Ca) * ((Sm[(i * _BOUND_K + b) * S + s] - Sa)
                                          / <double>(C[(i * _BOUND_K + b) * S + s] - Ca))
        ap = _mx(A[i], fabs(tk[b * S]))
        if a >= 0:
            ap = _mx(ap, fabs(tk[a * S]))
        mu = <double>(count + 4) * (<double>(n + 4) * <double>(n + 4)) * 8.881784197001252e-16 * ap
        X = ub + mu
        Y = lb - mu
        dlo = dd[i] - <double>count * tl[i]
        if X < dlo:
            xs[i] = X
            ys[i] = Y
            nshort += 1
        elif not (Y >= dlo):
            return -1
    if nshort == 0:
        return -1
    best = -1
    bestrl = 0.0
    for i in range(m):
        if xs[i] == INFINITY:
            continue
        if nshort > 1 and not (dd[i] > 0):
            return -1
        if nshort == 1:
            best = i
            break
        rl = (dd[i] - xs[i]) / dd[i]
        if best < 0 or rl > bestrl:
            best = i
            bestrl = rl
    if nshort > 1:
        for j in range(m):
            if j == best or xs[j] == INFINITY:
                continue
            if not (bestrl > (dd[j] - ys[j]) / dd[j]):
                return -1
    prop[0] = best
    return 2


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def bound_screen(const double[::1] t,            # IN  (K,) breakpoints, ascending
                 const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
                 const int64_t[::1] nd,          # IN  (n,) rows of res
                 const double[::1] st,           # IN  (S,) starts, non-decreasing
                 double duration,                # IN
                 const double[:, ::1] p,         # IN  (n, m) capacities of the rows nd
                 demand,                         # IN  Demand: e, d (m,), count, tol (m,)
                 Py_ssize_t stride,              # IN  every stride-th row sampled (>= 1)
                 Py_ssize_t group,               # IN  starts per group of thresholds (>= 1)
                 out,                            # OUT ScreenOut: code, elig, prop, value (S,)
                 const double[:, :, ::1] bm = None,  # IN (N, m, ceil(K / B)) block maxima
                 const double[:, :, ::1] bn = None,  # IN (N, m, ceil(K / B)) block minima
                 Py_ssize_t B = 1):              # IN  segments per block
    """block_screen's code and property at the starts the bounds decide, without the window
    maxima of every node at every start held or sorted (issue 40, h53coll). Returns how many
    starts it decided.

    Every start s gets elig[s], the nodes meeting every minimum (exact). code[s] = 1 (fewer
    than count eligible: prop and value as block_screen's, exact counts), 2 (the bounds
    prove that the count largest eligible amounts of a property miss its total, and which
    property block_screen reports: prop; value NaN, the exact sum not computed) or -1 (not
    decided: prop -1, value 0; block_screen must screen it).

    Thresholds: per group of group starts, the window maxima of every stride-th row at its
    first start give, per property, _BOUND_K thresholds tau_k (largest first): the r_k-th
    largest eligible sampled amount, r_k = clamp(count * pct_k // (100 stride), 1, sampled
    eligible), pct = 60, 70, 85, 100, 115, 130, 150 (+inf: none eligible). Then one pass over
    the rows (each row's window maxima at every start, not kept) counts C_k and sums S_k the
    eligible amounts at or above each tau_k (rows in order). A bounds every |amount|: the
    largest over the rows of |capacity - least| and |capacity - largest| of the row's amounts
    over the segments of every window (from the block extrema bm and bn of B segments when
    given: the blocks meeting those segments, a sixteenth of the reads; else from res); a row's
    window maxima are computed only for the properties whose minimum those bounds do not show
    met at every start or whose largest amount reaches the least lowest threshold (the
    others' counts are constants, their sums nothing).
    With b the first k with C_b >= count and a = b - 1 (C, S = 0 for a = -1; no such b:
    undecided), the count largest sum to at most min(S_a + (count - C_a) tau_a,
    S_b - (C_b - count) tau_b) (the values below tau_a, resp. the values at or above tau_b
    left out) and at least S_a + (count - C_a) (S_b - S_a) / (C_b - C_a) (the largest of a
    band average at least its mean). Widened by mu = (count + 4) (n + 4)**2 2**-50 max(A,
    |tau_a|, |tau_b|) (over twice every rounding error of these sums and of block_screen's own
    sum, largest first, so each rounded comparison below holds for block_screen's sum): a
    property whose bound above is below d_i - count tau_i misses its total, one whose bound
    below reaches it does not, any other leaves the start undecided (as a start where no
    total is missed). Several missed: the largest relative shortfall must be proven (its
    least one above every other's largest), else undecided. GIL released. Twin:
    coalloc.collective._reference.search.bound_screen."""
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1], K = t.shape[0]
    cdef Py_ssize_t s, jj, i, k, q, g, c, r, prev, ns, G, kmin, kmax, span, ne, levels
    cdef Py_ssize_t decided = 0, least, bi
    cdef int pct[_BOUND_K]
    pct[0] = 60; pct[1] = 70; pct[2] = 85; pct[3] = 100; pct[4] = 115; pct[5] = 130
    pct[6] = 150
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nd, res.shape[0], st)
    if p.shape[0] != n or p.shape[1] != m:
        raise ValueError("cap must be (n, m), e and d of length m")
    if stride < 1 or group < 1:
        raise ValueError("stride and group must be >= 1")
    cdef bint blocks = bm is not None
    if blocks != (bn is not None):
        raise ValueError("bm and bn go together")
    if B < 1:
        raise ValueError("B must be >= 1")
    if blocks and (bm.shape[0] != res.shape[0] or bm.shape[1] != m
                   or bm.shape[2] != (K + B - 1) // B or bn.shape[0] != res.shape[0]
                   or bn.shape[1] != m or bn.shape[2] != bm.shape[2]):
        raise ValueError("block extrema must be (N, m, ceil(K / B))")
    cdef ScreenArgs sa = _screen_args(demand, out, S, m)
    if S == 0 or n == 0 or m == 0:
        return 0
    cdef Py_ssize_t count = sa.count
    cdef Py_ssize_t c0, c1
    cdef const double* dd = sa.d
    cdef const double* tl = sa.tol
    cdef vector[double] elo, tau, ts, wm, av, Sm, A, fw, bw, buf, xs, ys
    cdef Py_ssize_t W, Lmax
    cdef bint herk
    cdef vector[int64_t] okv, C, meet, meetc
    cdef vector[char] alw, rch
    cdef vector[double] tmin
    cdef int64_t eligc
    cdef double x, al, ah
    cdef vector[Py_ssize_t] lo, hi, lev, off
    cdef double a, y
    cdef int64_t okq
    cdef const double* tk
    cdef const double* rowp
    G = (S + group - 1) // group
    ns = (n + stride - 1) // stride
    gst = np.empty(G)
    snd = np.empty(ns, dtype=np.int64)
    cdef double[::1] gv = gst
    cdef int64_t[::1] sv = snd
    for g in range(G):
        gv[g] = st[g * group]
    for q in range(ns):
        sv[q] = nd[q * stride]
    wbs = np.empty((G, ns, m))
    window_max_rows(t, res, snd, gst, duration, wbs)
    cdef const double[:, :, ::1] wb = wbs
    with nogil:
        elo.resize(m)
        for i in range(m):
            elo[i] = sa.e[i] - tl[i]
        # the thresholds per (group, property), largest first
        tau.resize(G * m * _BOUND_K)
        buf.resize(ns)
        okv.resize(ns if ns > S else S)
        for g in range(G):
            ne = 0
            for q in range(ns):
                okq = 1
                for i in range(m):
                    if not (p[q * stride, i] - wb[g, q, i] >= elo[i]):
                        okq = 0
                okv[q] = okq
                ne += okq
            for i in range(m):
                c = 0
                for q in range(ns):
                    if okv[q]:
                        buf[c] = -(p[q * stride, i] - wb[g, q, i])
                        c += 1
                prev = 0
                for k in range(_BOUND_K):
                    if c == 0:
                        tau[(g * m + i) * _BOUND_K + k] = INFINITY
                        continue
                    r = (count * pct[k]) // (100 * stride)
                    r = 1 if r < 1 else (c if r > c else r)
                    if r - 1 >= prev:
                        nth_element(&buf[0] + prev, &buf[0] + (r - 1), &buf[0] + c)
                        prev = r
                    tau[(g * m + i) * _BOUND_K + k] = -buf[r - 1]
        ts.resize(m * _BOUND_K * S)
        for s in range(S):
            g = s // group
            for i in range(m):
                for k in range(_BOUND_K):
                    ts[(i * _BOUND_K + k) * S + s] = tau[(g * m + i) * _BOUND_K + k]
        # one pass over the rows: each row's window maxima at every start, then the counts
        lo.resize(S); hi.resize(S); lev.resize(S); off.resize(S)
        levels = _windows(t, st, duration, &lo[0], &hi[0], &lev[0], &off[0])
        kmin = lo[0]
        for s in range(S):
            if lo[s] < kmin:
                kmin = lo[s]
        kmax = hi[S - 1]
        for s in range(S):
            if hi[s] > kmax:
                kmax = hi[s]
        span = kmax - kmin
        W = hi[0] - lo[0]
        Lmax = W
        for s in range(S):
            if hi[s] - lo[s] < W:
                W = hi[s] - lo[s]
            if hi[s] - lo[s] > Lmax:
                Lmax = hi[s] - lo[s]
        # the sparse table up to 16 segments a window (at most 4 passes), else van Herk's
        # two passes when the windows' lengths allow it
        herk = levels > 4 and Lmax <= 2 * W
        fw.resize(levels * span + 1 if levels * span + 1 > span + 1 else span + 1)
        bw.resize(span + 1)
        wm.resize(m * S); av.resize(m * S); A.assign(m, 0.0)
        meet.assign(m * S, 0)
        C.assign(m * _BOUND_K * S, 0)
        Sm.assign(m * _BOUND_K * S, 0.0)
        alw.resize(m); rch.resize(m); tmin.resize(m); meetc.assign(m, 0)
        for i in range(m):  # the lowest threshold of any start
            tmin[i] = INFINITY
            for s in range(S):
                tmin[i] = _mn(tmin[i], ts[(i * _BOUND_K + _BOUND_K - 1) * S + s])
        for s in range(S):
            sa.elig[s] = 0
        eligc = 0
        c0 = kmin // B
        c1 = (kmax - 1) // B + 1
        for jj in range(n):
            if jj + 1 < n:  # the next node's amounts and block extrema, ahead
                for i in range(m):
                    coalloc_prefetch(&res[nd[jj + 1], i, kmin], span)
                    if blocks:
                        coalloc_prefetch(&bm[nd[jj + 1], i, c0], c1 - c0)
                        coalloc_prefetch(&bn[nd[jj + 1], i, c0], c1 - c0)
            for i in range(m):
                # the row's least and largest amount over the segments of every window
                # bound its amounts at every start: its window maxima are computed (a sparse
                # table, log2 of the longest window passes over the span, two entries per
                # window: the same maxima) only when its minimum is not met at every start
                # or it can reach the lowest threshold of some start
                if blocks:  # the blocks meeting the span (coarser, a sixteenth of the reads)
                    coalloc_minmax(&bn[nd[jj], i, c0], c1 - c0, &x, &al)
                    coalloc_minmax(&bm[nd[jj], i, c0], c1 - c0, &ah, &y)
                else:
                    coalloc_minmax(&res[nd[jj], i, kmin], span, &x, &y)
                al = p[jj, i] - y
                ah = p[jj, i] - x
                A[i] = _mx(_mx(A[i], fabs(ah)), fabs(al))
                alw[i] = al >= elo[i]
                rch[i] = ah >= tmin[i]
                meetc[i] += alw[i]
                if (not alw[i] or rch[i]) and herk:  # long windows: two passes
                    _row_herk(&res[nd[jj], i, kmin], span, W, &lo[0], &hi[0], kmin, S, &fw[0],
                              &bw[0], &wm[i * S])
                elif not alw[i] or rch[i]:
                    _row_maxima(&res[nd[jj], i, 0], kmin, span, levels, &lo[0], &lev[0],
                                &off[0], 0, S, &fw[0], &wm[i * S], 1)
            coalloc_bound_node(S, m, _BOUND_K, &wm[0], &p[jj, 0], &elo[0], &ts[0], &alw[0],
                               &rch[0], &av[0], &okv[0], &meet[0], sa.elig, &eligc, &C[0],
                               &Sm[0])
        for s in range(S):
            sa.elig[s] += eligc
            for i in range(m):
                meet[i * S + s] += meetc[i]
        xs.resize(m); ys.resize(m)
        for s in range(S):
            if sa.elig[s] < count:
                least = n + 1
                bi = 0
                for i in range(m):
                    if meet[i * S + s] < least:
                        least = meet[i * S + s]
                        bi = i
                sa.code[s] = 1
                sa.prop[s] = bi
                sa.val[s] = <double>least
                decided += 1
                continue
            sa.code[s] = _bound_decide(s, S, n, m, count, dd, tl, &ts[0], &C[0], &Sm[0],
                                       &A[0], &xs[0], &ys[0], &sa.prop[s])
            if sa.code[s] == 2:
                sa.val[s] = NAN
                decided += 1
    return decided


@cython.boundscheck(False)
@cython.wraparound(False)
def min_counts(const double[::1] t,            # IN  (K,) breakpoints, ascending
               const double[:, :, ::1] res,    # IN  (N, m, K) reserved amounts
               const int64_t[::1] nd,          # IN  (n,) rows of res
               const double[::1] st,           # IN  (S,) starts, non-decreasing
               double duration,                # IN
               const double[:, ::1] p,         # IN  (n, m) capacities of the rows nd
               const double[::1] ee,           # IN  (m,) minimums
               const double[::1] tl,           # IN  (m,) tolerances
               int64_t[::1] elig,              # OUT (S,) nodes meeting every minimum
               int64_t[:, ::1] meet):          # OUT (S, m) nodes meeting minimum i
    """The minimum screen's counts without the window maxima (issue 40, h55coll): elig[s]
    the rows whose every property meets its minimum at st[s] (p - T >= e - tol, T the window
    maxima of window_max_rows), meet[s, i] the rows meeting minimum i: block_screen's eligible
    count and its per-property counts. p - T >= e - tol holds iff p - a >= e - tol at every
    segment of the window (the rounded subtraction is monotone and T is one of the amounts),
    so per row and property one pass over the segments the windows cover keeps the last
    segment that misses it: a window meets it iff that segment lies before the window's
    first. O(n m (span + S)). GIL released. Twin: coalloc.collective._reference.search.
    min_counts."""
    cdef Py_ssize_t S = st.shape[0], n = nd.shape[0], m = res.shape[1], K = t.shape[0]
    cdef Py_ssize_t s, jj, i, k, last
    if res.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if p.shape[0] != n or p.shape[1] != m or ee.shape[0] != m or tl.shape[0] != m:
        raise ValueError("cap must be (len(nodes), m), e and tol of length m")
    if elig.shape[0] != S or meet.shape[0] != S or meet.shape[1] != m:
        raise ValueError("elig must be (len(starts),) and meet (len(starts), m)")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nd, res.shape[0], st)
    cdef vector[Py_ssize_t] lo, hi, lev, off
    cdef vector[int64_t] ok, cnt
    cdef const double* r
    cdef double c, ei
    for s in range(S):
        elig[s] = 0
        for i in range(m):
            meet[s, i] = 0
    if S == 0 or n == 0 or m == 0:
        return
    with nogil:
        lo.resize(S); hi.resize(S); lev.resize(S); off.resize(S)
        _windows(t, st, duration, &lo[0], &hi[0], &lev[0], &off[0])
        ok.resize(S)
        cnt.assign(m * S, 0)
        for jj in range(n):
            for s in range(S):
                ok[s] = 1
            for i in range(m):
                r = &res[nd[jj], i, 0]
                c = p[jj, i]
                ei = ee[i] - tl[i]
                last = -1  # the last segment before k that misses the minimum
                k = lo[0]
                for s in range(S):
                    while k < hi[s]:
                        if not (c - r[k] >= ei):
                            last = k
                        k += 1
                    if last < lo[s]:
                        cnt[i * S + s] += 1
                    else:
                        ok[s] = 0
            for s in range(S):
                elig[s] += ok[s]
        for i in range(m):
            for s in range(S):
                meet[s, i] = cnt[i * S + s]
