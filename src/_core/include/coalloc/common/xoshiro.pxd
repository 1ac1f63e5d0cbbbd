# The one Cython declaration of the kernels' random generator, coalloc/common/xoshiro.hpp
# (xoshiro256** seeded through splitmix64; its Python twin is coalloc._shared.xoshiro):
#
#     from coalloc.common.xoshiro cimport Xoshiro256ss, splitmix64

from libc.stdint cimport int64_t, uint64_t


cdef extern from "coalloc/common/xoshiro.hpp" namespace "coalloc" nogil:
    # One splitmix64 step: advances x (by reference) and returns the next output.
    uint64_t splitmix64(uint64_t& x) noexcept

    cdef cppclass Xoshiro256ss:
        Xoshiro256ss(uint64_t seed) noexcept
        uint64_t next() noexcept
        int64_t below(int64_t bound) noexcept
        double uniform() noexcept
