// pybind11 binding of coalloc::allocate (include/coalloc/testbed/allocate.hpp): assign+'s
// allocate and exchange steps.  Twin: coalloc/testbed/_reference/allocate.py.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <pybind11/stl.h>

#include "coalloc/common/pybind.hpp"
#include "coalloc/testbed/allocate.hpp"
#include "coalloc/testbed/bind_data.hpp"

namespace py = pybind11;
namespace al = coalloc::allocate;
using i64 = std::int64_t;
using coalloc::bind::Arr;
using coalloc::bind::need;

PYBIND11_MODULE(_allocate, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "assign+'s allocate and exchange steps (seed 003, section 8.2).  Twin: "
        "coalloc.testbed._reference.allocate.";
    mod.def(
        "allocate_all",
        [](py::dict data, std::vector<int> strategies, bool use_exchange, i64 max_rounds,
           bool trunk_aware) {
            std::vector<py::object> keep;
            coalloc::anneal::Data d;
            coalloc::testbed_bind::fill_data(data, d, keep);
            using coalloc::testbed_bind::get;
            Arr<double> cscore = get<double>(data, "cscore");
            Arr<i64> vscore = get<i64>(data, "vscore"), parent = get<i64>(data, "parent"),
                     list_ptr = get<i64>(data, "list_ptr"), list_idx = get<i64>(data, "list_idx"),
                     vlist = get<i64>(data, "vlist"), cswitch = get<i64>(data, "cswitch");
            need(cscore.size() == d.nc && cswitch.size() == d.nc, "cscore/cswitch need nc entries");
            need(vscore.size() == d.nv && parent.size() == d.nv && vlist.size() == d.nv,
                 "vscore/parent/vlist need nv entries");
            for (int s : strategies) need(s >= 0 && s <= 4, "strategies must be in 0..4");
            al::PlusData x;
            x.cscore = cscore.data();
            x.vscore = vscore.data();
            x.parent = parent.data();
            x.list_ptr = list_ptr.data();
            x.list_idx = list_idx.data();
            x.vlist = vlist.data();
            x.cswitch = cswitch.data();
            x.nlists = list_ptr.shape(0) - 1;
            const i64 ns = (i64)strategies.size();
            std::vector<i64> where((2 * ns + 1) * d.nv, -1), fail(ns * 5, 0);
            std::vector<double> isw(2 * ns + 1, std::nan(""));
            i64 exchanges = 0;
            std::vector<i64> xmoves(ns, 0);
            const i64 ntrunks = get<double>(data, "tcap").shape(0);
            {
                py::gil_scoped_release release;
                al::Allocator A(d, x);
                A.ntrunks_ = ntrunks;
                for (i64 i = 0; i < ns; ++i) {
                    al::State st(d);
                    al::Fail f;
                    if (!A.allocate(strategies[i], st, f)) {
                        fail[i * 5] = f.code;
                        fail[i * 5 + 1] = f.v;
                        fail[i * 5 + 2] = f.list;
                        fail[i * 5 + 3] = f.need;
                        fail[i * 5 + 4] = f.avail;
                        continue;
                    }
                    std::copy(st.where.begin(), st.where.end(), where.begin() + 2 * i * d.nv);
                    isw[2 * i] = A.isw(st.where);
                    if (use_exchange) {
                        // a placement an earlier strategy produced: reuse its exchange
                        i64 same = -1;
                        for (i64 j = 0; j < i && same < 0; ++j)
                            if (!std::isnan(isw[2 * j]) &&
                                std::equal(st.where.begin(), st.where.end(),
                                           where.begin() + 2 * j * d.nv))
                                same = j;
                        if (same >= 0) {
                            exchanges += xmoves[same];
                            std::copy(where.begin() + (2 * same + 1) * d.nv,
                                      where.begin() + (2 * same + 2) * d.nv,
                                      where.begin() + (2 * i + 1) * d.nv);
                            isw[2 * i + 1] = isw[2 * same + 1];
                            continue;
                        }
                        xmoves[i] = A.exchange(st, max_rounds, trunk_aware);
                        exchanges += xmoves[i];
                        std::copy(st.where.begin(), st.where.end(),
                                  where.begin() + (2 * i + 1) * d.nv);
                        isw[2 * i + 1] = A.isw(st.where);
                    }
                }
                if (trunk_aware && use_exchange) {
                    // refine the best exchanged solution: group moves, Kernighan-Lin passes
                    i64 best = -1;
                    double best_val = HUGE_VAL;
                    for (i64 i = 0; i < ns; ++i) {
                        if (std::isnan(isw[2 * i + 1])) continue;
                        std::vector<i64> w(where.begin() + (2 * i + 1) * d.nv,
                                           where.begin() + (2 * i + 2) * d.nv);
                        double val = A.objective(w, true);
                        if (val < best_val) {
                            best = i;
                            best_val = val;
                        }
                    }
                    if (best >= 0) {
                        al::State st(d);
                        for (i64 v = 0; v < d.nv; ++v) st.place(v, where[(2 * best + 1) * d.nv + v]);
                        i64 gm = A.group_moves(st, true);
                        gm += A.kl_passes(st, true);
                        exchanges += gm;
                        if (gm) exchanges += A.exchange(st, max_rounds, true);
                        std::copy(st.where.begin(), st.where.end(), where.begin() + 2 * ns * d.nv);
                        isw[2 * ns] = A.isw(st.where);
                    }
                }
            }
            py::dict res;
            res["where"] = coalloc::bind::to_array(where).reshape({2 * ns + 1, d.nv});
            res["isw"] = coalloc::bind::to_array(isw);
            res["fail"] = coalloc::bind::to_array(fail).reshape({ns, (i64)5});
            res["exchanges"] = exchanges;
            return res;
        },
        py::arg("data"), py::arg("strategies"), py::arg("use_exchange"), py::arg("max_rounds"),
        py::arg("trunk_aware") = false,
        "allocate (and exchange) once per strategy; returns where (2 x strategies, nv), isw, "
        "fail (strategies, 5) and exchanges (GIL released during the search).");
}
