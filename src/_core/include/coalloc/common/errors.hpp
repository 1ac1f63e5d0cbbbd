// The exceptions of the compiled core and how they reach Python: one table for every module.
//
// Kernels (the Python-free headers) report errors by throwing C++ exceptions; the bindings
// translate them.  Both binding technologies are used (pybind11 for src/_core/*/*.cpp,
// Cython `except +` for the .pyx modules), and they agree only on some standard types, so a
// kernel throws only these:
//
//   thrown by a kernel                    Python exception   meaning
//   ------------------------------------  -----------------  -------------------------------
//   coalloc::InvalidInput                 ValueError         malformed or inconsistent input
//     (or std::invalid_argument)
//   std::out_of_range                     IndexError         an index argument out of range
//   std::bad_alloc                        MemoryError        out of memory
//   std::overflow_error                   OverflowError      a size that does not fit
//   coalloc::KernelError                  RuntimeError       broken internal invariant (a
//     (or std::runtime_error)                                 bug, e.g. a failed self-check)
//   any other std::exception              RuntimeError
//
// (std::domain_error / length_error / range_error are avoided: pybind11 turns them into
// ValueError, Cython into ValueError / RuntimeError / ArithmeticError.)
//
// python_error_for() below is that table as code.  pybind11 modules install it with
// coalloc::bind::register_exceptions(module) (coalloc/common/pybind.hpp) as a module-local
// translator, so the mapping is explicit and does not depend on pybind11's defaults or on
// translators other extension modules register; Python exceptions raised by the binding
// itself (py::value_error, error_already_set, ...) pass through unchanged.  Cython's fixed
// `except +` mapping gives the same Python types for every row of the table.
//
// The header does not depend on Python.

#pragma once

#include <new>
#include <stdexcept>
#include <string>

namespace coalloc {

// Malformed or inconsistent input -> ValueError.
class InvalidInput : public std::invalid_argument {
   public:
    using std::invalid_argument::invalid_argument;
};

// A broken internal invariant (a bug in a kernel, e.g. a failed self-check) -> RuntimeError.
class KernelError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

// The Python exception type each C++ exception becomes.
enum class PyErrorKind { ValueError, IndexError, MemoryError, OverflowError, RuntimeError };

inline PyErrorKind python_error_for(const std::exception& e) {
    if (dynamic_cast<const std::invalid_argument*>(&e)) return PyErrorKind::ValueError;
    if (dynamic_cast<const std::out_of_range*>(&e)) return PyErrorKind::IndexError;
    if (dynamic_cast<const std::bad_alloc*>(&e)) return PyErrorKind::MemoryError;
    if (dynamic_cast<const std::overflow_error*>(&e)) return PyErrorKind::OverflowError;
    // As pybind11 and Cython do, should a kernel throw one anyway.
    if (dynamic_cast<const std::domain_error*>(&e) || dynamic_cast<const std::length_error*>(&e) ||
        dynamic_cast<const std::range_error*>(&e))
        return PyErrorKind::ValueError;
    return PyErrorKind::RuntimeError;  // KernelError, std::runtime_error, anything else
}

}  // namespace coalloc
