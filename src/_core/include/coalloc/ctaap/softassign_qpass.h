/* SIMD versions of the class-table pass of the Q evaluation (coalloc.ctaap._softassign,
   _q_pass_cls6): Q[i, :] (+)= sum over the edges e of row i of the class-table row at
   off[e], for table rows of width 6 (m = 5 or 6). Every lane receives the additions of the
   portable Cython code in the same order, so every path gives the same sums bit for bit. */
#ifndef COALLOC_CTAAP_SOFTASSIGN_QPASS_H
#define COALLOC_CTAAP_SOFTASSIGN_QPASS_H

#include <stddef.h>
#include <stdint.h>

/* The Q passes look at the call's deadline once COALLOC_Q_POLL_WORK edges (a row counts its
   edges + 1) were summed since the last look: 32,768 table rows added, well under a
   millisecond, so a pass of 0.1-0.3 s (25 million links) stops within one such slice (issue
   36). The functions here do not look themselves (a callback inside them cost 25-30 % of
   the step's time): the Cython caller runs coalloc_q_pass6_avx on slices of rows and
   coalloc_q_pass6_tiled_block one block at a time, and looks between two calls. */
#define COALLOC_Q_POLL_WORK 32768

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#include <string.h>
#define COALLOC_QAVX 1
/* _q_pass_cls6 with 256-bit loads and adds where the CPU has AVX (checked at run
   time; the module itself stays SSE2). Columns 0-3 of a table row go into one ymm,
   4-5 into one xmm: every lane receives exactly the additions of the scalar code, in
   the same order, so the sums are the same bit for bit. */
__attribute__((target("avx")))
static void coalloc_q_pass6_avx(const int64_t* indptr, const int32_t* off,
                                ptrdiff_t n, ptrdiff_t m, const double* Gc,
                                int accumulate, double* Q)
{
    ptrdiff_t i, j;
    for (i = 0; i < n; i++) {
        int64_t e = indptr[i];
        const int64_t e1 = indptr[i + 1];
        __m256d a = _mm256_setzero_pd(), b = a, c = a, d = a;
        __m128d a2 = _mm_setzero_pd(), b2 = a2, c2 = a2, d2 = a2;
        while (e + 4 <= e1) {
            const double* g0 = Gc + off[e];
            const double* g1 = Gc + off[e + 1];
            const double* g2 = Gc + off[e + 2];
            const double* g3 = Gc + off[e + 3];
            a = _mm256_add_pd(a, _mm256_loadu_pd(g0));
            a2 = _mm_add_pd(a2, _mm_loadu_pd(g0 + 4));
            b = _mm256_add_pd(b, _mm256_loadu_pd(g1));
            b2 = _mm_add_pd(b2, _mm_loadu_pd(g1 + 4));
            c = _mm256_add_pd(c, _mm256_loadu_pd(g2));
            c2 = _mm_add_pd(c2, _mm_loadu_pd(g2 + 4));
            d = _mm256_add_pd(d, _mm256_loadu_pd(g3));
            d2 = _mm_add_pd(d2, _mm_loadu_pd(g3 + 4));
            e += 4;
        }
        while (e < e1) {
            const double* g0 = Gc + off[e];
            a = _mm256_add_pd(a, _mm256_loadu_pd(g0));
            a2 = _mm_add_pd(a2, _mm_loadu_pd(g0 + 4));
            e += 1;
        }
        double r[6];
        _mm256_storeu_pd(r, _mm256_add_pd(_mm256_add_pd(a, b), _mm256_add_pd(c, d)));
        _mm_storeu_pd(r + 4, _mm_add_pd(_mm_add_pd(a2, b2), _mm_add_pd(c2, d2)));
        double* Qi = Q + i * m;
        if (accumulate)
            for (j = 0; j < m; j++) Qi[j] += r[j];
        else
            for (j = 0; j < m; j++) Qi[j] = r[j];
    }
    _mm256_zeroupper();
}
/* The same sums, with the table read in blocks of end tasks k: segptr[i * (nblk +
   1) + b] is the first edge of row i whose end task is in block b (so the indices
   of every row must be sorted). Each row keeps its four partial sums (a, b, c, d of
   _q_pass_cls6) in acc (n, 4, 6) between blocks, and every edge goes to the same
   partial sum as in the untiled pass (position mod 4 within its row, the tail after
   the last full group of four to a), in the same order: identical results, but the
   table block being read stays in the L1 cache. The whole pass:
   acc = 0 (n * 24 doubles); coalloc_q_pass6_tiled_block for blk = 0 .. nblk - 1;
   coalloc_q_pass6_tiled_done. */
__attribute__((target("avx")))
static void coalloc_q_pass6_tiled_block(const int64_t* indptr, const int32_t* off,
                                        ptrdiff_t n, const double* Gc,
                                        const int64_t* segptr, ptrdiff_t nblk,
                                        ptrdiff_t blk, double* acc)
{
    ptrdiff_t i;
    {
        for (i = 0; i < n; i++) {
            const int64_t* sp = segptr + i * (nblk + 1) + blk;
            int64_t e = sp[0];
            const int64_t t = sp[1];
            if (e >= t) continue;
            const int64_t base = indptr[i];
            const int64_t full = base + ((indptr[i + 1] - base) & ~(int64_t)3);
            const int64_t lim = t < full ? t : full;
            double* A = acc + i * 24;
            __m256d a = _mm256_loadu_pd(A), b = _mm256_loadu_pd(A + 6),
                    c = _mm256_loadu_pd(A + 12), d = _mm256_loadu_pd(A + 18);
            __m128d a2 = _mm_loadu_pd(A + 4), b2 = _mm_loadu_pd(A + 10),
                    c2 = _mm_loadu_pd(A + 16), d2 = _mm_loadu_pd(A + 22);
            const double* g;
            int slot = (int)((e - base) & 3);
            if (e < lim && slot == 1) {
                g = Gc + off[e++];
                b = _mm256_add_pd(b, _mm256_loadu_pd(g));
                b2 = _mm_add_pd(b2, _mm_loadu_pd(g + 4));
                slot = 2;
            }
            if (e < lim && slot == 2) {
                g = Gc + off[e++];
                c = _mm256_add_pd(c, _mm256_loadu_pd(g));
                c2 = _mm_add_pd(c2, _mm_loadu_pd(g + 4));
                slot = 3;
            }
            if (e < lim && slot == 3) {
                g = Gc + off[e++];
                d = _mm256_add_pd(d, _mm256_loadu_pd(g));
                d2 = _mm_add_pd(d2, _mm_loadu_pd(g + 4));
            }
            while (e + 4 <= lim) {
                /* two offsets per 64-bit load: fewer loads, the port limit here */
                uint64_t p01, p23;
                memcpy(&p01, off + e, 8);
                memcpy(&p23, off + e + 2, 8);
                const double* g0 = Gc + (uint32_t)p01;
                const double* g1 = Gc + (uint32_t)(p01 >> 32);
                const double* g2 = Gc + (uint32_t)p23;
                const double* g3 = Gc + (uint32_t)(p23 >> 32);
                a = _mm256_add_pd(a, _mm256_loadu_pd(g0));
                a2 = _mm_add_pd(a2, _mm_loadu_pd(g0 + 4));
                b = _mm256_add_pd(b, _mm256_loadu_pd(g1));
                b2 = _mm_add_pd(b2, _mm_loadu_pd(g1 + 4));
                c = _mm256_add_pd(c, _mm256_loadu_pd(g2));
                c2 = _mm_add_pd(c2, _mm_loadu_pd(g2 + 4));
                d = _mm256_add_pd(d, _mm256_loadu_pd(g3));
                d2 = _mm_add_pd(d2, _mm_loadu_pd(g3 + 4));
                e += 4;
            }
            /* at a group boundary here (or at lim): slots 0, 1, 2 in turn */
            if (e < lim) {
                g = Gc + off[e++];
                a = _mm256_add_pd(a, _mm256_loadu_pd(g));
                a2 = _mm_add_pd(a2, _mm_loadu_pd(g + 4));
            }
            if (e < lim) {
                g = Gc + off[e++];
                b = _mm256_add_pd(b, _mm256_loadu_pd(g));
                b2 = _mm_add_pd(b2, _mm_loadu_pd(g + 4));
            }
            if (e < lim) {
                g = Gc + off[e++];
                c = _mm256_add_pd(c, _mm256_loadu_pd(g));
                c2 = _mm_add_pd(c2, _mm_loadu_pd(g + 4));
            }
            while (e < t) {         /* the tail of the row (e >= full) */
                g = Gc + off[e++];
                a = _mm256_add_pd(a, _mm256_loadu_pd(g));
                a2 = _mm_add_pd(a2, _mm_loadu_pd(g + 4));
            }
            _mm256_storeu_pd(A, a);
            _mm256_storeu_pd(A + 6, b);
            _mm256_storeu_pd(A + 12, c);
            _mm256_storeu_pd(A + 18, d);
            _mm_storeu_pd(A + 4, a2);
            _mm_storeu_pd(A + 10, b2);
            _mm_storeu_pd(A + 16, c2);
            _mm_storeu_pd(A + 22, d2);
        }
    }
    _mm256_zeroupper();
}
/* The end of the tiled pass: Q[i, :] (+)= the four partial sums of row i. */
static void coalloc_q_pass6_tiled_done(ptrdiff_t n, ptrdiff_t m, const double* acc,
                                       int accumulate, double* Q)
{
    ptrdiff_t i, j;
    for (i = 0; i < n; i++) {
        const double* A = acc + i * 24;
        double* Qi = Q + i * m;
        double r;
        for (j = 0; j < m; j++) {
            r = (A[j] + A[6 + j]) + (A[12 + j] + A[18 + j]);
            if (accumulate) Qi[j] += r; else Qi[j] = r;
        }
    }
}
#else
#define COALLOC_QAVX 0
static void coalloc_q_pass6_avx(const int64_t* indptr, const int32_t* off,
                                ptrdiff_t n, ptrdiff_t m, const double* Gc,
                                int accumulate, double* Q) {}
static void coalloc_q_pass6_tiled_block(const int64_t* indptr, const int32_t* off,
                                        ptrdiff_t n, const double* Gc,
                                        const int64_t* segptr, ptrdiff_t nblk,
                                        ptrdiff_t blk, double* acc) {}
static void coalloc_q_pass6_tiled_done(ptrdiff_t n, ptrdiff_t m, const double* acc,
                                       int accumulate, double* Q) {}
#endif

#endif /* COALLOC_CTAAP_SOFTASSIGN_QPASS_H */
