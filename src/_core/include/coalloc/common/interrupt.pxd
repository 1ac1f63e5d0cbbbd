# The one Cython declaration of the interrupt poll of coalloc/common/interrupt.h (read the
# header for the contract). Every Cython kernel cimports it:
#
#     from coalloc.common.interrupt cimport Poll, coalloc_raise_interrupt
#
# Ctrl-C / cancellation every ~50 ms: stop() is a decrement between two looks at the clock;
# once it says True (and from then on) the loop ends, and after its nogil block the caller
# raises with coalloc_raise_interrupt(). coalloc_raise_py is the `except +coalloc_raise_py`
# handler of a throwing C++ kernel: the table of errors.hpp plus coalloc::Interrupted.
# setup.py puts src/_core/include on every extension's include path.

from libcpp cimport bool as cbool


cdef extern from "coalloc/common/interrupt.h" namespace "coalloc" nogil:
    cdef cppclass Poll:
        Poll() noexcept
        Poll(unsigned int) noexcept
        cbool stop() noexcept
        cbool stopped() noexcept
        cbool stop_now() noexcept
    int coalloc_raise_interrupt() except -1
    void coalloc_raise_py()
