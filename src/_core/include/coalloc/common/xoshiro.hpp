// xoshiro256** seeded through splitmix64 (Blackman & Vigna): the random generator of every
// compiled kernel that draws random numbers.  Small, fast, and identical on every platform,
// so that the Python twins reproduce the streams bit for bit with its one Python twin,
// coalloc._shared.xoshiro (Xoshiro256, SplitMix64).  Any change here changes every seeded
// result and breaks that parity: do not touch the arithmetic.
//
// Users: coalloc/ctaap/localsearch.hpp (one stream per improve() call, seeded with the
// caller's seed), coalloc/taskmap/flowinject.hpp (one stream per cluster-tree node),
// coalloc/testbed/anneal.hpp, and through its one Cython declaration, xoshiro.pxd beside it,
// collective/_search.pyx (Xoshiro256ss) and loadshare/_dmcf.pyx, _gapls.pyx (splitmix64:
// counter-based draws).  The kernels' seeds come from coalloc._shared.seeding.kernel_seed.
//
// The header does not depend on Python.

#pragma once

#include <cstdint>

namespace coalloc {

// One splitmix64 step: advances x and returns the next output.
inline std::uint64_t splitmix64(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// xoshiro256**: the four state words are four successive splitmix64 outputs from `seed`.
class Xoshiro256ss {
   public:
    explicit Xoshiro256ss(std::uint64_t seed) {
        std::uint64_t x = seed;
        for (auto& w : s_) w = splitmix64(x);
    }
    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform integer in [0, bound), bound >= 1: next() % bound (modulo bias <= bound / 2^64:
    // negligible, and what the twins repeat).
    std::int64_t below(std::int64_t bound) {
        return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(bound));
    }
    // Uniform double in [0, 1) with 53 random bits: (next() >> 11) * 2^-53.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

   private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    std::uint64_t s_[4];
};

}  // namespace coalloc
