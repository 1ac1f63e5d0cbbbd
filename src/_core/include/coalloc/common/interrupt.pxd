# The one Cython declaration of the interrupt poll of coalloc/common/interrupt.h and of the
# kernel deadline of coalloc/common/deadline.h (read the headers for the contract). Every
# Cython kernel with a long loop cimports it:
#
#     from coalloc.common.interrupt cimport Deadline, Poll, coalloc_raise_interrupt, deadline_of
#
# The kernel's `deadline` argument (a coalloc._shared.interrupt.KernelDeadline; None: the
# calling thread's, built by deadline_of from its scopes) is copied into the plain struct
# once per call with deadline_of(); each long loop owns a Poll
# made from it. stop() is a decrement between two looks at the clock (the deadline and the
# cancel flag, without the GIL; Python for Ctrl-C every ~50 ms); once it says True (and from
# then on) the loop ends, and after its nogil block the caller raises with
# coalloc_raise_interrupt(). coalloc_raise_py is the `except +coalloc_raise_py` handler of a
# throwing C++ kernel: the table of errors.hpp plus coalloc::Interrupted. setup.py puts
# src/_core/include on every extension's include path.

from libc.stdint cimport int64_t, uintptr_t
from libcpp cimport bool as cbool


cdef extern from "coalloc/common/deadline.h" namespace "coalloc" nogil:
    cdef struct Deadline:
        int64_t ns
        const int* cancel


cdef extern from "coalloc/common/interrupt.h" namespace "coalloc" nogil:
    cdef cppclass Poll:
        Poll() noexcept  # Cython's stack allocation only: every Poll is assigned one below
        Poll(const Deadline&) noexcept
        Poll(const Deadline&, unsigned int) noexcept
        cbool stop() noexcept
        cbool stopped() noexcept
        cbool stop_now() noexcept
    int coalloc_raise_interrupt() except -1
    void coalloc_raise_py()


cdef inline Deadline deadline_of(object deadline) except *:
    """The C struct of a KernelDeadline (None: the calling thread's, built now)."""
    cdef Deadline d
    if deadline is None:
        from coalloc._shared.interrupt import kernel_deadline
        deadline = kernel_deadline()
    d.ns = deadline.ns
    d.cancel = <const int*><uintptr_t>deadline.cancel_addr
    return d
