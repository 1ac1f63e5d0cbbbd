// Interrupts, cancellation and deadlines of long compiled loops: one header for every module
// (pybind11 bindings, the C++ kernels they wrap, and the Cython modules, which use it through
// its one Cython declaration, interrupt.pxd beside it: `from coalloc.common.interrupt cimport
// Poll, Deadline, deadline_of`).
//
// A kernel runs without the GIL, so neither Ctrl-C (Python only sets a flag that the
// interpreter's eval loop looks at) nor a caller's cancellation reaches it by itself.  Every
// long-loop kernel takes a coalloc::Deadline (deadline.h: a CLOCK_MONOTONIC instant and a
// cancel flag, built once per call by the Python wrapper with
// coalloc._shared.interrupt.kernel_deadline) as an argument, and each of its long loops owns
// a Poll made from it and calls it once per iteration:
//
//     coalloc::Poll poll(deadline, 256);       // look at the clock every 256 iterations
//     for (...) { poll.tick(); ... }           // C++: throws coalloc::Interrupted
//     for ...: if poll.stop(): break           # Cython, noexcept code: a flag, see below
//
// The hot path is a decrement.  Every `every` iterations (and at the first call) the steady
// clock is read and compared with the deadline's instant, and its cancel flag is read, without
// the GIL and without Python: past the instant or cancelled, the poll says stop (no Python
// error is set yet).  Besides, when kInterval (50 ms) has passed since this thread last asked
// (in any call of this module), the poll takes the GIL and asks Python:
//   1. PyErr_CheckSignals(): runs the signal handlers (main thread only); Ctrl-C makes it
//      set KeyboardInterrupt (or whatever a handler raised);
//   2. the cancellation scope of this thread, if coalloc._shared.interrupt is imported:
//      its check() raises the scope's error (TimeoutError past the deadline, or the error
//      it was cancelled with).
// Either leaves that Python error set and the poll says stop.  A deadline or a cancellation
// is met within one iteration batch; Ctrl-C within about kInterval + one iteration batch.
// Nothing is leaked (the kernels own their buffers in RAII containers) and models are
// untouched.
//
// How the stop reaches Python (coalloc_raise_interrupt, GIL held): the pending Python error if
// the poll asked Python; after a stop by the struct, the error of the scope (its check() is
// called then: TimeoutError, the time limit's own error, the error of a cancel), and outside
// every scope TimeoutError("the kernel's deadline passed").
//   - C++ (tick() throws coalloc::Interrupted): pybind11 modules translate it with
//     coalloc::bind::register_exceptions (pybind.hpp); Cython modules calling a throwing C++
//     kernel declare it `except +coalloc_raise_py` (the full table of errors.hpp, plus
//     Interrupted).  A kernel that returns its best answer on a stop (testbed) catches it.
//   - Cython noexcept nogil loops test `poll.stop()` (true once stopped, and from then on),
//     unwind by returning, and after the nogil block call coalloc_raise_interrupt()
//     (declared `except -1`), which raises.

#pragma once

#include <Python.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>

#include "coalloc/common/deadline.h"
#include "coalloc/common/errors.hpp"

namespace coalloc {

// Thrown by Poll::tick(): the call must stop; its Python error is set already (a poll that
// asked Python) or when it is translated (coalloc_raise_interrupt, after a stop by the struct).
class Interrupted : public std::exception {
   public:
    const char* what() const noexcept override { return "interrupted"; }
};

namespace interrupt_detail {

using Clock = std::chrono::steady_clock;
constexpr auto kInterval = std::chrono::milliseconds(50);

// When this thread last asked Python (per module: each extension has its own copy).
inline Clock::time_point& last_check() {
    static thread_local Clock::time_point t{};
    return t;
}

// With the GIL held: 0 to go on, -1 with a Python error set to stop.
inline int ask_python() {
    if (PyErr_Occurred()) return -1;
    if (PyErr_CheckSignals() != 0) return -1;
    static PyObject* name = nullptr;  // interned once, never freed (module lifetime)
    if (name == nullptr) {
        name = PyUnicode_InternFromString("coalloc._shared.interrupt");
        if (name == nullptr) return -1;
    }
    PyObject* mod = PyImport_GetModule(name);  // new reference, NULL if not imported (no scope then)
    if (mod == nullptr) return PyErr_Occurred() ? -1 : 0;
    PyObject* res = PyObject_CallMethod(mod, "check", nullptr);
    Py_DECREF(mod);
    if (res == nullptr) return -1;
    Py_DECREF(res);
    return 0;
}

}  // namespace interrupt_detail

// One per long loop (or per kernel call); not shared between threads.
class Poll {
   public:
    // deadline: the kernel's argument (deadline.h); every: iterations between two looks at
    // the clock (choose it so that `every` iterations take well under a millisecond, and
    // well over a clock read, ~25 ns).  The first call looks.
    explicit Poll(const Deadline& deadline, std::uint32_t every = 1024) noexcept
        : deadline_(deadline), every_(every ? every : 1), left_(1) {}
    // For Cython's stack allocation only (`cdef Poll poll = Poll(deadline_of(dl), n)`
    // default-constructs, then assigns): no deadline until assigned.
    Poll() noexcept : Poll(kNoDeadline) {}

    // Cython / noexcept code: true when the loop must stop (and on every later call).
    inline bool stop() noexcept {
        if (--left_ != 0) return false;
        left_ = stopped_ ? 1 : every_;
        return stopped_ || slow();
    }

    // C++ code: throws Interrupted when the loop must stop.
    inline void tick() {
        if (stop()) throw Interrupted();
    }

    bool stopped() const noexcept { return stopped_; }

    // The deadline now, then Python, whatever the clock says (e.g. between two long phases).
    bool stop_now() noexcept {
        if (!stopped_ && deadline_.expired()) stopped_ = true;
        if (!stopped_) ask();
        return stopped_;
    }

   private:
    bool slow() noexcept {
        using namespace interrupt_detail;
        const auto now = Clock::now();
        if (deadline_.cancelled() || deadline_.passed(now)) {  // no GIL, no Python
            stopped_ = true;
            return true;
        }
        auto& last = last_check();
        if (now - last < kInterval) return false;
        last = now;
        ask();
        return stopped_;
    }

    void ask() noexcept {
        if (!Py_IsInitialized()) return;
        PyGILState_STATE g = PyGILState_Ensure();
        stopped_ = interrupt_detail::ask_python() != 0;
        PyGILState_Release(g);
    }

    Deadline deadline_;
    std::uint32_t every_;
    std::uint32_t left_;
    bool stopped_ = false;
};

// Throws Interrupted (no Python error set) once `deadline` is cancelled or past: a check at a
// point where a kernel stops on the deadline alone (a clock read; no Python).
inline void check_deadline(const Deadline& deadline) {
    if (deadline.expired()) throw Interrupted();
}

// After a poll stopped (GIL held): sets the Python error of the stop unless one is pending
// (a poll that asked Python left it): the scope's (its check(), after a stop by the deadline
// struct), else TimeoutError.  Returns -1.  Declared in Cython as
// `int coalloc_raise_interrupt() except -1`.
inline int coalloc_raise_interrupt() {
    if (PyErr_Occurred()) return -1;
    if (interrupt_detail::ask_python() != 0 && PyErr_Occurred()) return -1;
    PyErr_SetString(PyExc_TimeoutError, "the kernel's deadline passed");
    return -1;
}

// Cython's `except +coalloc_raise_py` handler (called inside a catch block, GIL held): the
// table of errors.hpp, plus Interrupted -> the pending Python error.
inline void coalloc_raise_py() {
    try {
        throw;
    } catch (const Interrupted&) {
        coalloc_raise_interrupt();
    } catch (const std::exception& e) {
        PyObject* type = PyExc_RuntimeError;
        switch (python_error_for(e)) {
            case PyErrorKind::ValueError: type = PyExc_ValueError; break;
            case PyErrorKind::IndexError: type = PyExc_IndexError; break;
            case PyErrorKind::MemoryError: type = PyExc_MemoryError; break;
            case PyErrorKind::OverflowError: type = PyExc_OverflowError; break;
            case PyErrorKind::RuntimeError: type = PyExc_RuntimeError; break;
        }
        if (type == PyExc_MemoryError)
            PyErr_NoMemory();
        else
            PyErr_SetString(type, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception");
    }
}

}  // namespace coalloc

// Unqualified names for Cython's extern declarations.
using coalloc::coalloc_raise_interrupt;
using coalloc::coalloc_raise_py;
