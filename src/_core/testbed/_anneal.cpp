// pybind11 binding of coalloc::anneal (include/coalloc/testbed/anneal.hpp): assign's simulated
// annealing over pclasses, the baseline of coalloc.testbed.  Twin:
// coalloc/testbed/_reference/anneal.py (same signature, same answer).

#include <cstdint>
#include <string>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/testbed/anneal.hpp"
#include "coalloc/testbed/bind_data.hpp"

namespace py = pybind11;
namespace an = coalloc::anneal;

namespace {

using i64 = std::int64_t;
using coalloc::bind::Arr;
using coalloc::bind::need;


}  // namespace

PYBIND11_MODULE(_anneal, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "assign's simulated annealing over pclasses (Ricci, Alfeld & Lepreau 2003), the "
        "baseline of coalloc.testbed.  Twin: coalloc.testbed._reference.anneal.";
    mod.def(
        "anneal",
        [](py::dict data, py::int_ seed_obj, py::dict params) {
            std::vector<py::object> keep;
            an::Data d;
            coalloc::testbed_bind::fill_data(data, d, keep);
            Arr<double> tcap = coalloc::testbed_bind::get<double>(data, "tcap");
            an::Params p;
            p.t0 = params["t0"].cast<double>();
            p.melt_accept = params["melt_accept"].cast<double>();
            p.cooling = params["cooling"].cast<double>();
            p.t_stop = params["t_stop"].cast<double>();
            p.melt_moves = params["melt_moves"].cast<i64>();
            p.min_moves = params["min_moves"].cast<i64>();
            p.frozen = params["frozen"].cast<i64>();
            p.max_moves = params["max_moves"].cast<i64>();
            // optional start mapping: int64, one entry per virtual node (-1: none)
            if (params.contains("start") && !params["start"].is_none()) {
                Arr<i64> start = coalloc::bind::ensure_array<i64>(params["start"]);
                if (start.ndim() != 1 || start.shape(0) != d.nv)
                    throw std::invalid_argument(
                        "params['start'] must have one entry per virtual node");
                for (i64 v = 0; v < d.nv; ++v)
                    if (start.data()[v] < -1 || start.data()[v] >= d.npn)
                        throw std::invalid_argument("params['start'] names no physical node");
                keep.push_back(start);  // alive until the search ends
                p.start = start.data();
            }
            p.deadline = coalloc::testbed_bind::deadline_of(params);
            const std::uint64_t seed = coalloc::bind::seed_u64(seed_obj);
            an::Output out;
            {
                py::gil_scoped_release release;
                an::Annealer a(d, seed);
                a.set_ntrunks(tcap.shape(0));
                out = a.run(p);
            }
            // first, before any other Python call: the error a stop left pending
            py::object err = out.stopped ? coalloc::testbed_bind::stop_error() : py::none();
            py::dict res;
            res["where"] = coalloc::bind::to_array(out.where);
            res["score"] = out.score;
            res["violations"] = out.violations;
            res["valid"] = out.violations == 0;
            res["moves"] = out.moves;
            res["accepted"] = out.accepted;
            res["temperatures"] = out.temperatures;
            res["t_start"] = out.t_start;
            res["run_limit"] = out.run_limit;
            res["stopped"] = out.stopped;
            res["first_valid"] = out.first_valid;
            res["error"] = err;
            return res;
        },
        py::arg("data"), py::arg("seed"), py::arg("params"),
        "Anneal one mapping problem; returns where, score, violations, valid, moves, accepted, "
        "temperatures, t_start, run_limit, first_valid, stopped and error (GIL released during the search).\n\n"
        "params['deadline'] (coalloc._shared.interrupt.KernelDeadline; absent or None: the "
        "calling thread's, built now): the search stops there by itself.  A search "
        "stopped (deadline, Ctrl-C, a cancelled scope) returns its best so far with stopped "
        "True; error is the Python error to raise then (None for the deadline).");
}
