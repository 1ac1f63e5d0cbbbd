// Interrupts and cancellation of long compiled loops: one header for every module (pybind11
// bindings, the C++ kernels they wrap, and the Cython modules, which use it through its one
// Cython declaration, interrupt.pxd beside it: `from coalloc.common.interrupt cimport Poll`).
//
// A kernel runs without the GIL, so neither Ctrl-C (Python only sets a flag that the
// interpreter's eval loop looks at) nor a caller's cancellation reaches it.  A long loop owns
// a Poll and calls it once per iteration:
//
//     coalloc::Poll poll(256);                 // look at the clock every 256 iterations
//     for (...) { poll.tick(); ... }           // C++: throws coalloc::Interrupted
//     for ...: if poll.stop(): break           # Cython, noexcept code: a flag, see below
//
// The hot path is a decrement.  Every `every` iterations the steady clock is read, and when
// kInterval (50 ms) has passed since this thread last looked (in any call of this module) the
// poll takes the GIL and asks Python:
//   1. PyErr_CheckSignals(): runs the signal handlers (main thread only); Ctrl-C makes it
//      set KeyboardInterrupt (or whatever a handler raised);
//   2. the cancellation scope of this thread, if coalloc._shared.interrupt is imported:
//      its check() raises the scope's error (TimeoutError past the deadline, or the error
//      it was cancelled with).
// Either leaves that Python error set and the poll says stop.  The same call returns the
// earliest deadline in force (interrupt.poll(): a time limit's or a batch timeout's, as a
// CLOCK_MONOTONIC instant in ns, the clock of std::chrono::steady_clock on Linux); the poll
// keeps it in a plain thread-local and, between two asks, compares the clock with it at each
// look, without the GIL: a deadline is met within one iteration batch, not kInterval.  Past
// it, the poll asks Python at once (which raises the scope's error).  Ctrl-C and explicit
// cancellation are still seen within about kInterval + one iteration batch.  Nothing is
// leaked (the kernels own their buffers in RAII containers) and models are untouched.
//
// How the stop reaches Python:
//   - C++ (tick() throws coalloc::Interrupted): pybind11 modules translate it with
//     coalloc::bind::register_exceptions (pybind.hpp): the pending Python error is raised;
//     Cython modules calling a throwing C++ kernel declare it `except +coalloc_raise_py` (the
//     full table of errors.hpp, plus Interrupted).
//   - Cython noexcept nogil loops test `poll.stop()` (true once stopped, and from then on),
//     unwind by returning, and after the nogil block call coalloc_raise_interrupt()
//     (declared `except -1`), which raises the pending error.

#pragma once

#include <Python.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>

#include "coalloc/common/errors.hpp"

namespace coalloc {

// Thrown by Poll::tick(): the call must stop; the Python error to raise is already set.
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

// The deadline Python gave at this thread's last ask (time_point::max(): none).  A stale
// value is harmless: an earlier one only makes the poll ask Python, which decides, and
// refreshes it; a later one or none falls back to asking every kInterval.
inline Clock::time_point& known_deadline() {
    static thread_local Clock::time_point t = Clock::time_point::max();
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
    PyObject* res = PyObject_CallMethod(mod, "poll", nullptr);
    Py_DECREF(mod);
    if (res == nullptr) return -1;
    const long long ns = PyLong_Check(res) ? PyLong_AsLongLong(res) : -1;
    Py_DECREF(res);
    if (ns == -1 && PyErr_Occurred()) PyErr_Clear();
    known_deadline() = ns < 0 ? Clock::time_point::max()
                              : Clock::time_point(std::chrono::nanoseconds(ns));
    return 0;
}

}  // namespace interrupt_detail

// One per long loop (or per kernel call); not shared between threads.
class Poll {
   public:
    // every: iterations between two looks at the clock (choose it so that `every`
    // iterations take well under a millisecond, and well over a clock read, ~25 ns).
    explicit Poll(std::uint32_t every = 1024) noexcept : every_(every ? every : 1), left_(1) {}

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

    // Asks Python now, whatever the clock says (e.g. between two long phases).
    bool stop_now() noexcept {
        if (!stopped_) ask();
        return stopped_;
    }

   private:
    bool slow() noexcept {
        using namespace interrupt_detail;
        const auto now = Clock::now();
        auto& last = last_check();
        if (now - last < kInterval && now < known_deadline()) return false;
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

    std::uint32_t every_;
    std::uint32_t left_;
    bool stopped_ = false;
};

// After a Cython nogil loop stopped (GIL held): raises the pending error, KeyboardInterrupt
// if there is none.  Declared in Cython as `int coalloc_raise_interrupt() except -1`.
inline int coalloc_raise_interrupt() {
    if (!PyErr_Occurred()) PyErr_SetNone(PyExc_KeyboardInterrupt);
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
