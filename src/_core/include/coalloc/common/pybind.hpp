// pybind11 helpers shared by the bindings (src/_core/<family>/*.cpp): array aliases, the
// argument checks and their ValueError messages, conversions of results to NumPy, seeds,
// CSR views of NumPy arrays, deadline_arg() (a kernel's deadline argument into the struct of
// deadline.h), and register_exceptions() (the table of errors.hpp).
//
// Users: coalloc.ctaap._bmatching, coalloc.ctaap._localsearch, coalloc.taskmap._flowinject.
//
// Only bindings include this header (it needs pybind11 and Python); kernels use errors.hpp.

#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "coalloc/common/csr.hpp"
#include "coalloc/common/errors.hpp"
#include "coalloc/common/interrupt.h"

namespace coalloc {
namespace bind {

namespace py = pybind11;
using i64 = std::int64_t;

// An input array as the kernels read it: C-contiguous, converted to T if needed (a copy
// only when the caller's array is not already that).
template <class T>
using Arr = py::array_t<T, py::array::c_style | py::array::forcecast>;

// A kernel's `deadline` argument (coalloc._shared.interrupt.KernelDeadline; None: the calling
// thread's, built now from its scopes) as the plain struct of deadline.h; the caller keeps
// the Python object (and so its flag, which its scope owns too) alive for the call.
inline Deadline deadline_arg(py::handle dl) {
    py::object built;
    if (dl.is_none()) {
        built = py::module_::import("coalloc._shared.interrupt").attr("kernel_deadline")();
        dl = built;
    }
    Deadline d;
    d.ns = dl.attr("ns").cast<std::int64_t>();
    d.cancel = reinterpret_cast<const volatile int*>(dl.attr("cancel_addr").cast<std::uintptr_t>());
    return d;
}

// Argument check: ValueError(msg) unless ok.
inline void need(bool ok, const std::string& msg) {
    if (!ok) throw py::value_error(msg);
}

// "(3, 4)", "(5,)", "()": the shape as NumPy prints it.
inline std::string shape_of(const py::array& a) {
    std::string s = "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d) s += (d ? ", " : "") + std::to_string(a.shape(d));
    return s + (a.ndim() == 1 ? ",)" : ")");
}

// a must be 1-D of length n: "<name> must have shape (n,) = (<n>,), got <shape>"
// (`what` replaces "n" in the message, e.g. "n + 1" or "m").
inline void need_length(const py::array& a, i64 n, const std::string& name,
                        const std::string& what = "n") {
    need(a.ndim() == 1 && a.shape(0) == n, name + " must have shape (" + what + ",) = (" +
                                               std::to_string(n) + ",), got " + shape_of(a));
}

// a must be 2-D of shape (r, c): "<name> must have shape (<what>) = (<r>, <c>), got <shape>".
inline void need_shape(const py::array& a, i64 r, i64 c, const std::string& name,
                       const std::string& what) {
    need(a.ndim() == 2 && a.shape(0) == r && a.shape(1) == c,
         name + " must have shape (" + what + ") = (" + std::to_string(r) + ", " +
             std::to_string(c) + "), got " + shape_of(a));
}

// a is updated in place by a kernel: exactly dtype dt (`kind` in the message), 1-D of
// length len, C-contiguous and writeable (a converted copy would lose the update):
// "<name> must be a writeable contiguous 1-D <kind> array of length <len>".
inline void need_writeable(const py::array& a, const py::dtype& dt, const std::string& kind,
                           i64 len, const std::string& name) {
    need(a.dtype().is(dt) && a.ndim() == 1 && a.writeable() &&
             (a.flags() & py::array::c_style) && a.shape(0) == len,
         name + " must be a writeable contiguous 1-D " + kind + " array of length " +
             std::to_string(len));
}

// Converts obj like an Arr<T> argument would.  Known wart, kept for compatibility: when the
// conversion fails, pybind11's ensure() has already cleared NumPy's error, so the caller
// sees RuntimeError ("error_already_set called while Python error indicator not set").
template <class T>
Arr<T> ensure_array(const py::object& obj) {
    Arr<T> a = Arr<T>::ensure(obj);
    if (!a) throw py::error_already_set();
    return a;
}

// A fresh 1-D NumPy array holding a copy of v.
template <class T>
py::array_t<T> to_array(const std::vector<T>& v) {
    py::array_t<T> out(static_cast<py::ssize_t>(v.size()));
    if (!v.empty()) std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
}

// Any Python int as a 64-bit seed (taken modulo 2^64).
inline std::uint64_t seed_u64(const py::int_& seed) {
    const std::uint64_t s = PyLong_AsUnsignedLongLongMask(seed.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    return s;
}

// Shapes of the CSR triple (<prefix>indptr, <prefix>indices, <prefix>data) of an n-row
// matrix; the contents are checked by whoever walks it.
inline void need_csr_shapes(const Arr<i64>& ptr, const Arr<i64>& idx, const Arr<double>& val,
                            i64 n, const std::string& prefix = "") {
    need_length(ptr, n + 1, prefix + "indptr", "n + 1");
    need(idx.ndim() == 1, prefix + "indices must be 1-D, got shape " + shape_of(idx));
    need(val.ndim() == 1 && val.shape(0) == idx.shape(0),
         prefix + "data must be 1-D with the length of " + prefix + "indices (" +
             std::to_string(idx.shape(0)) + "), got shape " + shape_of(val));
}

// View of a shape-checked CSR triple of an n-row matrix (the arrays must outlive it).
inline CsrView<double> csr_view(const Arr<i64>& ptr, const Arr<i64>& idx, const Arr<double>& val,
                                i64 n) {
    CsrView<double> v;
    v.n = n;
    v.nnz = idx.shape(0);
    v.indptr = ptr.data();
    v.indices = idx.data();
    v.data = val.data();
    return v;
}

// Installs the exception table of coalloc/common/errors.hpp for every function of `mod`
// (and coalloc::Interrupted of interrupt.h: the error of the stop is raised)
// (a module-local translator: other extension modules are not affected).  Exceptions that
// already are Python exceptions (py::value_error & co., error_already_set) pass through.
inline void register_exceptions(py::module_& mod) {
    (void)mod;  // module-local: applies to the module whose init calls this
    py::register_local_exception_translator([](std::exception_ptr p) {
        if (!p) return;
        try {
            std::rethrow_exception(p);
        } catch (const py::builtin_exception&) {
            throw;
        } catch (const py::error_already_set&) {
            throw;
        } catch (const Interrupted&) {  // a Poll stopped the kernel: its error (interrupt.h)
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
            PyErr_SetString(type, e.what());
        }
    });
}

}  // namespace bind
}  // namespace coalloc
