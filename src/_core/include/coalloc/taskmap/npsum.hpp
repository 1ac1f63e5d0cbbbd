// NumPy's sum of a contiguous float64 array, the same additions in the same order, for the
// task mapper's kernels that must give the answers of the NumPy code they replace
// (_multilevel.cpp's bisections, _occupancy.cpp's greedy fill).  The header does not depend
// on Python.

#pragma once

#include <cstdint>

namespace coalloc::taskmap {

// Pairwise, as NumPy sums: blocks of at most 128 summed with 8 accumulators, halves at
// multiples of 8 above.
inline double np_sum(const double* a, std::int64_t n) {
    if (n < 8) {
        double r = 0.0;
        for (std::int64_t i = 0; i < n; ++i) r += a[i];
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; ++j) r[j] = a[j];
        std::int64_t i = 8;
        for (; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; ++j) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; ++i) res += a[i];
        return res;
    }
    std::int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return np_sum(a, n2) + np_sum(a + n2, n - n2);
}

}  // namespace coalloc::taskmap
