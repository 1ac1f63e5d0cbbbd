// pybind11 binding of coalloc::allocate (include/coalloc/testbed/allocate.hpp): assign+'s
// allocate and exchange steps.  Twin: coalloc/testbed/_reference/allocate.py.

#include <cstdint>
#include <vector>

#include <pybind11/stl.h>

#include "coalloc/common/pybind.hpp"
#include "coalloc/testbed/allocate.hpp"
#include "coalloc/testbed/bind_data.hpp"

namespace py = pybind11;
namespace al = coalloc::allocate;
using i64 = std::int64_t;
using coalloc::bind::need;

PYBIND11_MODULE(_allocate, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "assign+'s allocate and exchange steps (seed 003, section 8.2).  Twin: "
        "coalloc.testbed._reference.allocate.";
    mod.def(
        "allocate_all",
        [](py::dict data, std::vector<int> strategies, bool use_exchange, i64 max_rounds,
           bool trunk_aware, py::object deadline) {
            // marshalling only: the arrays into typed views, the loop in allocate.hpp
            std::vector<py::object> keep;
            coalloc::anneal::Data d;
            al::PlusData x;
            coalloc::testbed_bind::fill_data(data, d, keep);
            coalloc::testbed_bind::fill_plus(data, d, x, keep);
            for (int s : strategies) need(s >= 0 && s <= 5, "strategies must be in 0..5");
            const i64 ns = (i64)strategies.size();
            const coalloc::Deadline dl = coalloc::bind::deadline_arg(deadline);
            al::Outcome out;
            {
                py::gil_scoped_release release;
                out = al::allocate_all(d, x, strategies, use_exchange, max_rounds, trunk_aware,
                                       dl);
            }
            // first, before any other Python call: the error a stop left pending
            py::object err = out.stopped ? coalloc::testbed_bind::stop_error() : py::none();
            py::dict res;
            res["where"] = coalloc::bind::to_array(out.where).reshape({2 * ns + 1, d.nv});
            res["isw"] = coalloc::bind::to_array(out.isw);
            res["fail"] = coalloc::bind::to_array(out.fail).reshape({ns, (i64)5});
            res["exchanges"] = out.exchanges;
            res["stopped"] = out.stopped;
            res["error"] = err;
            return res;
        },
        py::arg("data"), py::arg("strategies"), py::arg("use_exchange"), py::arg("max_rounds"),
        py::arg("trunk_aware") = false, py::arg("deadline") = py::none(),
        "allocate (and exchange) once per strategy; returns where (2 x strategies, nv), isw, "
        "fail (strategies, 5), exchanges, stopped and error (GIL released during the "
        "search).  deadline (coalloc._shared.interrupt.KernelDeadline; None: the calling "
        "thread's, built now): the search stops there by itself.  A search "
        "stopped (deadline, Ctrl-C, a cancelled scope) returns the rows done so far with "
        "stopped True; error is the Python error to raise then (None for the deadline).");
}
