/* SIMD versions of one pass of the capacity-aware Sinkhorn (coalloc.ctaap._softassign,
   _sk_pass): X <- min(R * scale, clip) with R = X with its rows divided by their sums,
   and the row sums and column statistics of the new X for the next iteration. Every entry
   gets the operations of the portable Cython pass and the row sums stay sequential, so
   every path gives the same result bit for bit. */
#ifndef COALLOC_CTAAP_SOFTASSIGN_SINKHORN_H
#define COALLOC_CTAAP_SOFTASSIGN_SINKHORN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define COALLOC_SK6 1
#if defined(__GNUC__)
#define COALLOC_NOINLINE __attribute__((noinline))
#else
#define COALLOC_NOINLINE
#endif
/* One Sinkhorn pass over X for m == 5 with SSE2, see _sk_pass in _softassign.pyx.
     X      INOUT (n + 1, 6)  updated in place with update
     rinv   INOUT (n + 1,)    1 / row sums of X (IN with update, OUT with feed)
     tcap   IN    (n + 1, 6)  0 where the row is remembered among the largest of the
                              column, else inf
     sc, cl IN    (6,)        per-column scale and clip bound (slack last)
     keep   IN    (6,)        mask: 0 for a degenerate column (scale inf), else all ones
     stats  OUT   (3, 6)      rest, maxrest, mintop (with feed)
   Returns max |X_new - X| (0 without update). */
static COALLOC_NOINLINE double coalloc_sk_pass6(
    double* X, double* rinv, const double* tcap, ptrdiff_t n, const double* sc,
    const double* cl, const uint64_t* keep, int any_degen, int update, int feed,
    double* stats)
{
    const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
    const __m128d inf = _mm_set1_pd(HUGE_VAL);
    __m128d df0 = zero, df1 = zero, df2 = zero;
    ptrdiff_t i, rows = n + 1;
    if (update) {
        /* X_new = min(R * scale, clip); in a degenerate column (scale inf) this is
           1 where R > 0 and NaN or -inf elsewhere, hence the mask (R > 0 | keep).
           With feed, rinv[i] temporarily holds the row sum of X_new. */
        const __m128d sign = _mm_set1_pd(-0.0);
        const __m128d sc0 = _mm_loadu_pd(sc), sc1 = _mm_loadu_pd(sc + 2),
                      sc2 = _mm_loadu_pd(sc + 4);
        const __m128d cl0 = _mm_loadu_pd(cl), cl1 = _mm_loadu_pd(cl + 2),
                      cl2 = _mm_loadu_pd(cl + 4);
        const __m128d kp0 = _mm_castsi128_pd(_mm_loadu_si128((const __m128i*)keep));
        const __m128d kp1 = _mm_castsi128_pd(_mm_loadu_si128((const __m128i*)(keep + 2)));
        const __m128d kp2 = _mm_castsi128_pd(_mm_loadu_si128((const __m128i*)(keep + 4)));
        for (i = 0; i < rows; i++) {
            double* Xi = X + 6 * i;
            const __m128d x0 = _mm_loadu_pd(Xi), x1 = _mm_loadu_pd(Xi + 2),
                          x2 = _mm_loadu_pd(Xi + 4);
            const __m128d r = _mm_set1_pd(rinv[i]);
            const __m128d v0 = _mm_mul_pd(x0, r), v1 = _mm_mul_pd(x1, r),
                          v2 = _mm_mul_pd(x2, r);
            __m128d y0 = _mm_min_pd(_mm_mul_pd(v0, sc0), cl0);
            __m128d y1 = _mm_min_pd(_mm_mul_pd(v1, sc1), cl1);
            __m128d y2 = _mm_min_pd(_mm_mul_pd(v2, sc2), cl2);
            if (any_degen) {
                y0 = _mm_and_pd(y0, _mm_or_pd(_mm_cmpgt_pd(v0, zero), kp0));
                y1 = _mm_and_pd(y1, _mm_or_pd(_mm_cmpgt_pd(v1, zero), kp1));
                y2 = _mm_and_pd(y2, _mm_or_pd(_mm_cmpgt_pd(v2, zero), kp2));
            }
            df0 = _mm_max_pd(_mm_andnot_pd(sign, _mm_sub_pd(y0, x0)), df0);
            df1 = _mm_max_pd(_mm_andnot_pd(sign, _mm_sub_pd(y1, x1)), df1);
            df2 = _mm_max_pd(_mm_andnot_pd(sign, _mm_sub_pd(y2, x2)), df2);
            _mm_storeu_pd(Xi, y0);
            _mm_storeu_pd(Xi + 2, y1);
            _mm_storeu_pd(Xi + 4, y2);
            if (feed) {
                double s = _mm_cvtsd_f64(y0) + _mm_cvtsd_f64(_mm_unpackhi_pd(y0, y0));
                s += _mm_cvtsd_f64(y1);
                s += _mm_cvtsd_f64(_mm_unpackhi_pd(y1, y1));
                s += _mm_cvtsd_f64(y2);
                s += _mm_cvtsd_f64(_mm_unpackhi_pd(y2, y2));
                rinv[i] = s;
            }
        }
    } else if (feed) {
        for (i = 0; i < n; i++) {
            const double* Xi = X + 6 * i;
            rinv[i] = ((((Xi[0] + Xi[1]) + Xi[2]) + Xi[3]) + Xi[4]) + Xi[5];
        }
    }
    if (feed) {
        __m128d rs0 = zero, rs1 = zero, rs2 = zero;
        __m128d mr0 = zero, mr1 = zero, mr2 = zero;
        __m128d mt0 = inf, mt1 = inf, mt2 = inf;
        /* rinv = 1 / row sum (1 for zero rows and the slack row), two at a time */
        for (i = 0; i + 2 <= n; i += 2) {
            const __m128d s = _mm_loadu_pd(rinv + i);
            const __m128d pos = _mm_cmpgt_pd(s, zero);
            const __m128d q = _mm_div_pd(one, s);
            _mm_storeu_pd(rinv + i, _mm_or_pd(_mm_and_pd(pos, q), _mm_andnot_pd(pos, one)));
        }
        for (; i < n; i++)
            rinv[i] = rinv[i] > 0.0 ? 1.0 / rinv[i] : 1.0;
        rinv[n] = 1.0;
        for (i = 0; i < rows; i++) {
            const double* Xi = X + 6 * i;
            const double* ci = tcap + 6 * i;
            const __m128d r = _mm_set1_pd(rinv[i]);
            const __m128d x0 = _mm_mul_pd(_mm_loadu_pd(Xi), r);
            const __m128d x1 = _mm_mul_pd(_mm_loadu_pd(Xi + 2), r);
            const __m128d x2 = _mm_mul_pd(_mm_loadu_pd(Xi + 4), r);
            const __m128d c0 = _mm_loadu_pd(ci), c1 = _mm_loadu_pd(ci + 2),
                          c2 = _mm_loadu_pd(ci + 4);
            const __m128d z0 = _mm_min_pd(x0, c0);  /* remembered rows 0, others x */
            const __m128d z1 = _mm_min_pd(x1, c1);
            const __m128d z2 = _mm_min_pd(x2, c2);
            rs0 = _mm_add_pd(rs0, z0);
            rs1 = _mm_add_pd(rs1, z1);
            rs2 = _mm_add_pd(rs2, z2);
            mr0 = _mm_max_pd(z0, mr0);
            mr1 = _mm_max_pd(z1, mr1);
            mr2 = _mm_max_pd(z2, mr2);
            mt0 = _mm_min_pd(_mm_max_pd(x0, c0), mt0);  /* remembered x, others inf */
            mt1 = _mm_min_pd(_mm_max_pd(x1, c1), mt1);
            mt2 = _mm_min_pd(_mm_max_pd(x2, c2), mt2);
        }
        _mm_storeu_pd(stats, rs0);
        _mm_storeu_pd(stats + 2, rs1);
        _mm_storeu_pd(stats + 4, rs2);
        _mm_storeu_pd(stats + 6, mr0);
        _mm_storeu_pd(stats + 8, mr1);
        _mm_storeu_pd(stats + 10, mr2);
        _mm_storeu_pd(stats + 12, mt0);
        _mm_storeu_pd(stats + 14, mt1);
        _mm_storeu_pd(stats + 16, mt2);
    }
    df0 = _mm_max_pd(df0, _mm_max_pd(df1, df2));
    df0 = _mm_max_pd(df0, _mm_unpackhi_pd(df0, df0));
    return _mm_cvtsd_f64(df0);
}
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#define COALLOC_SK6AVX 1
/* coalloc_sk_pass6 with columns 0-3 in one ymm and 4-5 in one xmm, for CPUs with
   AVX (checked at run time). The same operations per entry (vminpd / vmaxpd /
   ordered compares as their SSE2 forms, the row sums left to right), hence the same
   result bit for bit. */
__attribute__((target("avx")))
static double coalloc_sk_pass6_avx(
    double* X, double* rinv, const double* tcap, ptrdiff_t n, const double* sc,
    const double* cl, const uint64_t* keep, int any_degen, int update, int feed,
    double* stats)
{
    const __m256d zero4 = _mm256_setzero_pd(), inf4 = _mm256_set1_pd(HUGE_VAL);
    const __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
    const __m128d inf = _mm_set1_pd(HUGE_VAL);
    __m256d df4 = zero4;
    __m128d df2 = zero;
    ptrdiff_t i, rows = n + 1;
    if (update) {
        const __m256d sign4 = _mm256_set1_pd(-0.0);
        const __m128d sign = _mm_set1_pd(-0.0);
        const __m256d sc4 = _mm256_loadu_pd(sc), cl4 = _mm256_loadu_pd(cl);
        const __m128d sc2 = _mm_loadu_pd(sc + 4), cl2 = _mm_loadu_pd(cl + 4);
        const __m256d kp4 = _mm256_castsi256_pd(_mm256_loadu_si256((const __m256i*)keep));
        const __m128d kp2 = _mm_castsi128_pd(_mm_loadu_si128((const __m128i*)(keep + 4)));
        for (i = 0; i < rows; i++) {
            double* Xi = X + 6 * i;
            const __m256d x4 = _mm256_loadu_pd(Xi);
            const __m128d x2 = _mm_loadu_pd(Xi + 4);
            const __m256d r4 = _mm256_set1_pd(rinv[i]);
            const __m128d r2 = _mm_set1_pd(rinv[i]);
            const __m256d v4 = _mm256_mul_pd(x4, r4);
            const __m128d v2 = _mm_mul_pd(x2, r2);
            __m256d y4 = _mm256_min_pd(_mm256_mul_pd(v4, sc4), cl4);
            __m128d y2 = _mm_min_pd(_mm_mul_pd(v2, sc2), cl2);
            if (any_degen) {
                y4 = _mm256_and_pd(y4, _mm256_or_pd(_mm256_cmp_pd(v4, zero4, _CMP_GT_OQ), kp4));
                y2 = _mm_and_pd(y2, _mm_or_pd(_mm_cmp_pd(v2, zero, _CMP_GT_OQ), kp2));
            }
            df4 = _mm256_max_pd(_mm256_andnot_pd(sign4, _mm256_sub_pd(y4, x4)), df4);
            df2 = _mm_max_pd(_mm_andnot_pd(sign, _mm_sub_pd(y2, x2)), df2);
            _mm256_storeu_pd(Xi, y4);
            _mm_storeu_pd(Xi + 4, y2);
            if (feed) {
                const __m128d lo = _mm256_castpd256_pd128(y4);
                const __m128d hi = _mm256_extractf128_pd(y4, 1);
                double s = _mm_cvtsd_f64(lo) + _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo));
                s += _mm_cvtsd_f64(hi);
                s += _mm_cvtsd_f64(_mm_unpackhi_pd(hi, hi));
                s += _mm_cvtsd_f64(y2);
                s += _mm_cvtsd_f64(_mm_unpackhi_pd(y2, y2));
                rinv[i] = s;
            }
        }
    } else if (feed) {
        for (i = 0; i < n; i++) {
            const double* Xi = X + 6 * i;
            rinv[i] = ((((Xi[0] + Xi[1]) + Xi[2]) + Xi[3]) + Xi[4]) + Xi[5];
        }
    }
    if (feed) {
        __m256d rs4 = zero4, mr4 = zero4, mt4 = inf4;
        __m128d rs2 = zero, mr2 = zero, mt2 = inf;
        for (i = 0; i + 2 <= n; i += 2) {
            const __m128d s = _mm_loadu_pd(rinv + i);
            const __m128d pos = _mm_cmpgt_pd(s, zero);
            const __m128d q = _mm_div_pd(one, s);
            _mm_storeu_pd(rinv + i, _mm_or_pd(_mm_and_pd(pos, q), _mm_andnot_pd(pos, one)));
        }
        for (; i < n; i++)
            rinv[i] = rinv[i] > 0.0 ? 1.0 / rinv[i] : 1.0;
        rinv[n] = 1.0;
        for (i = 0; i < rows; i++) {
            const double* Xi = X + 6 * i;
            const double* ci = tcap + 6 * i;
            const __m256d x4 = _mm256_mul_pd(_mm256_loadu_pd(Xi), _mm256_set1_pd(rinv[i]));
            const __m128d x2 = _mm_mul_pd(_mm_loadu_pd(Xi + 4), _mm_set1_pd(rinv[i]));
            const __m256d c4 = _mm256_loadu_pd(ci);
            const __m128d c2 = _mm_loadu_pd(ci + 4);
            const __m256d z4 = _mm256_min_pd(x4, c4);
            const __m128d z2 = _mm_min_pd(x2, c2);
            rs4 = _mm256_add_pd(rs4, z4);
            rs2 = _mm_add_pd(rs2, z2);
            mr4 = _mm256_max_pd(z4, mr4);
            mr2 = _mm_max_pd(z2, mr2);
            mt4 = _mm256_min_pd(_mm256_max_pd(x4, c4), mt4);
            mt2 = _mm_min_pd(_mm_max_pd(x2, c2), mt2);
        }
        _mm256_storeu_pd(stats, rs4);
        _mm_storeu_pd(stats + 4, rs2);
        _mm256_storeu_pd(stats + 6, mr4);
        _mm_storeu_pd(stats + 10, mr2);
        _mm256_storeu_pd(stats + 12, mt4);
        _mm_storeu_pd(stats + 16, mt2);
    }
    {
        double d[6], r = 0.0;
        int l;
        _mm256_storeu_pd(d, df4);
        _mm_storeu_pd(d + 4, df2);
        _mm256_zeroupper();
        for (l = 0; l < 6; l++) r = d[l] > r ? d[l] : r;
        return r;
    }
}
#else
#define COALLOC_SK6AVX 0
static double coalloc_sk_pass6_avx(double* X, double* rinv, const double* tcap,
                                   ptrdiff_t n, const double* sc, const double* cl,
                                   const uint64_t* keep, int any_degen, int update,
                                   int feed, double* stats)
{ return 0.0; }
#endif
#else
#define COALLOC_SK6 0
static double coalloc_sk_pass6(double* X, double* rinv, const double* tcap,
                               ptrdiff_t n, const double* sc, const double* cl,
                               const uint64_t* keep, int any_degen, int update,
                               int feed, double* stats)
{ return 0.0; }
#endif

#endif /* COALLOC_CTAAP_SOFTASSIGN_SINKHORN_H */
