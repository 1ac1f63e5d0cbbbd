// The deadline every long-loop kernel takes as an argument (issue 36, item 1): a plain struct,
// built once per kernel call by the Python wrapper from the calling thread's cancellation
// scopes (coalloc._shared.interrupt.kernel_deadline) and read in C without the GIL.
//
//   ns      the earliest deadline in force, as a CLOCK_MONOTONIC instant in nanoseconds (the
//           clock of std::chrono::steady_clock on Linux, and of Python's time.monotonic and
//           time.perf_counter); -1: none.
//   cancel  a flag the scope sets (nonzero) when it, its parent or a scope it is nested in is
//           cancelled (Scope.cancel); nullptr: none.  Owned by the scope, alive for the call.
//
// A kernel hands it to its coalloc::Poll (interrupt.h), which compares the clock with `ns` and
// reads `cancel` at every look at the clock, from the first one, without asking Python; Python
// is still asked every kInterval (Ctrl-C).  Cython declares it in interrupt.pxd, with
// deadline_of(), the conversion of the Python object; pybind11 modules convert it with
// coalloc::bind::deadline_arg (pybind.hpp).

#pragma once

#include <chrono>
#include <cstdint>

namespace coalloc {

struct Deadline {
    std::int64_t ns;
    const volatile int* cancel;

    bool cancelled() const noexcept { return cancel != nullptr && *cancel != 0; }
    bool passed(std::chrono::steady_clock::time_point now) const noexcept {
        return ns >= 0 && now.time_since_epoch() >= std::chrono::nanoseconds(ns);
    }
    bool passed() const noexcept { return passed(std::chrono::steady_clock::now()); }
    // the kernel must stop: cancelled or past the instant
    bool expired() const noexcept { return cancelled() || passed(); }
};

// No deadline, no cancel flag (Ctrl-C and the scopes are still polled through Python).
constexpr Deadline kNoDeadline{-1, nullptr};

}  // namespace coalloc
