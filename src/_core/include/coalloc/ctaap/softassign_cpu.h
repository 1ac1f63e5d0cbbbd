/* Run-time choice of the SIMD paths of the step-1 kernels (coalloc.ctaap._softassign).

   The module is compiled for the baseline ISA; the AVX functions carry
   __attribute__((target(...))) and run only where the CPU reports the extension. The
   testing aid _simd_level() lowers coalloc_simd_cap so that one machine can check every
   path it has against the portable code. */
#ifndef COALLOC_CTAAP_SOFTASSIGN_CPU_H
#define COALLOC_CTAAP_SOFTASSIGN_CPU_H

#include <stddef.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <unistd.h>
/* Bytes of class table read per block of end tasks: 3/4 of the L1 data cache where
   the C library reports it (glibc), else 24 KiB; between 16 and 64 KiB. */
static ptrdiff_t coalloc_tile_bytes(void)
{
    static ptrdiff_t bytes = 0;
    if (bytes == 0) {
        long l1 = 0;
#ifdef _SC_LEVEL1_DCACHE_SIZE
        l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
#endif
        bytes = l1 > 0 ? (ptrdiff_t)(l1 / 4 * 3) : 24576;
        if (bytes < 16384) bytes = 16384;
        if (bytes > 65536) bytes = 65536;
    }
    return bytes;
}
/* The ladder of SIMD paths; a path runs where the CPU has it and the cap allows it. */
enum {
    COALLOC_SIMD_PORTABLE = 0,  /* the Cython loops only */
    COALLOC_SIMD_SSE2 = 1,      /* SSE2 Sinkhorn pass for m = 5 (baseline of x86-64) */
    COALLOC_SIMD_AVX = 2        /* AVX Q and Sinkhorn passes for m = 5-6, tiled Q pass */
};
/* Highest path the kernels may take; lowered only by the testing aid _simd_level(), so
   that one build can check (and time) every path. */
static int coalloc_simd_cap = COALLOC_SIMD_AVX;
static int coalloc_has_sse2(void) { return coalloc_simd_cap >= COALLOC_SIMD_SSE2; }
static int coalloc_has_avx(void)
{
    static int flag = -1;
    if (flag < 0) {
        __builtin_cpu_init();
        flag = __builtin_cpu_supports("avx") ? 1 : 0;
#ifdef COALLOC_NO_AVX
        flag = 0;
#endif
    }
    return flag && coalloc_simd_cap >= COALLOC_SIMD_AVX;
}
#else
enum { COALLOC_SIMD_PORTABLE = 0, COALLOC_SIMD_SSE2 = 1, COALLOC_SIMD_AVX = 2 };
static int coalloc_simd_cap = COALLOC_SIMD_AVX;
static int coalloc_has_sse2(void) { return 0; }  /* not x86 (or not GCC/Clang) */
static int coalloc_has_avx(void) { return 0; }
static ptrdiff_t coalloc_tile_bytes(void) { return 24576; }
#endif

#endif /* COALLOC_CTAAP_SOFTASSIGN_CPU_H */
