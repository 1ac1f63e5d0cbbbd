// pybind11 kernels of the multilevel mapper (coalloc.taskmap.multilevel): every route between
// the processors of a resource graph as one CSR (pair_routes), and the scores of candidate
// bottleneck moves (score_moves).  Slow twin in coalloc.taskmap._reference.multilevel, with
// the same signatures and floating-point operation order (the parity tests in
// tests/taskmap/test_multilevel.py require bit-identical results).

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/taskmap/occupancy.hpp"

namespace py = pybind11;
namespace tk = coalloc::taskmap;

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;
using coalloc::bind::Arr;
using coalloc::bind::need;
using coalloc::bind::need_length;
using coalloc::bind::shape_of;

// The routes between processors as CSR (pair a * P + b), validated once.
struct PairRoutesView {
    Arr<i64> rptr, rlink;
    i64 P = 0, E = 0;

    PairRoutesView(Arr<i64> rptr_, Arr<i64> rlink_, i64 n_links) : rptr(rptr_), rlink(rlink_) {
        need(rptr.ndim() == 1 && rptr.shape(0) >= 1,
             "rptr must be 1-D and non-empty, got shape " + shape_of(rptr));
        const i64 pp = rptr.shape(0) - 1;
        P = static_cast<i64>(std::llround(std::sqrt(static_cast<double>(pp))));
        need(P * P == pp, "rptr must have P * P + 1 entries");
        need(n_links >= 0, "n_links must be >= 0");
        E = n_links;
        const i64* p = rptr.data();
        need(p[0] == 0, "rptr must start at 0");
        for (i64 q = 0; q < pp; ++q) need(p[q] <= p[q + 1], "rptr must be non-decreasing");
        need_length(rlink, p[pp], "rlink", "rptr[-1]");
        const i64* l = rlink.data();
        for (i64 q = 0; q < p[pp]; ++q)
            need(l[q] >= 0 && l[q] < E, "rlink must hold link ids in [0, n_links)");
    }
};

// A symmetric task graph (CSR), validated once.
struct LevelView {
    Arr<i64> ip, ix;
    Arr<double> iw;
    i64 n = 0;

    LevelView(Arr<i64> ip_, Arr<i64> ix_, Arr<double> iw_) : ip(ip_), ix(ix_), iw(iw_) {
        need(ip.ndim() == 1 && ip.shape(0) >= 1,
             "ip must be 1-D and non-empty, got shape " + shape_of(ip));
        n = ip.shape(0) - 1;
        coalloc::bind::need_csr_shapes(ip, ix, iw, n);
        const i64* p = ip.data();
        const i64* x = ix.data();
        need(p[0] == 0 && p[n] == ix.shape(0), "ip must start at 0 and end at len(ix)");
        for (i64 v = 0; v < n; ++v) need(p[v] <= p[v + 1], "ip must be non-decreasing");
        for (i64 q = 0; q < p[n]; ++q) need(x[q] >= 0 && x[q] < n, "ix must be in [0, n)");
    }
};

}  // namespace

PYBIND11_MODULE(_multilevel, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "Kernels of the multilevel task mapper: all routes between processors as one CSR, "
        "and the scores of candidate bottleneck moves; slow twin in "
        "coalloc.taskmap._reference.multilevel.";

    mod.def(
        "pair_routes",
        [](Arr<i32> pred, Arr<i32> pred_link, Arr<i64> proc_row, Arr<i64> nodes) {
            need(proc_row.ndim() == 1, "proc_row must be 1-D, got shape " + shape_of(proc_row));
            const i64 R = proc_row.shape(0);
            need(pred.ndim() == 2 && pred.shape(1) == R,
                 "pred must have shape (P, R), got " + shape_of(pred));
            need(pred_link.ndim() == 2 && pred_link.shape(0) == pred.shape(0) &&
                     pred_link.shape(1) == R,
                 "pred_link must have the shape of pred, got " + shape_of(pred_link));
            need(nodes.ndim() == 1, "nodes must be 1-D, got shape " + shape_of(nodes));
            const i64 P = nodes.shape(0);
            const i64* nd = nodes.data();
            const i64* row = proc_row.data();
            for (i64 a = 0; a < P; ++a)
                need(nd[a] >= 0 && nd[a] < R && row[nd[a]] >= 0,
                     "nodes must hold processors, got " + std::to_string(nd[a]));
            tk::Routes r;
            r.n_nodes = R;
            r.pred = pred.data();
            r.pred_link = pred_link.data();
            r.proc_row = row;
            py::array_t<i64> rptr(P * P + 1);
            i64* ptr = rptr.mutable_data();
            std::vector<i64> links;
            {
                py::gil_scoped_release release;
                ptr[0] = 0;
                for (i64 a = 0; a < P; ++a)
                    for (i64 b = 0; b < P; ++b) {
                        if (a != b)
                            tk::for_route(r, nd[a], nd[b], [&](i64 k) { links.push_back(k); });
                        ptr[a * P + b + 1] = static_cast<i64>(links.size());
                    }
            }
            return py::make_tuple(rptr, coalloc::bind::to_array(links));
        },
        py::arg("pred"), py::arg("pred_link"), py::arg("proc_row"), py::arg("nodes"),
        "CSR (rptr, rlink) of the routes between nodes[a] and nodes[b], pair a * P + b, "
        "links in walk order.");

    py::class_<PairRoutesView>(mod, "PairRoutes",
                               "The CSR (rptr, rlink) of pair_routes, checked once and kept "
                               "alive.")
        .def(py::init<Arr<i64>, Arr<i64>, i64>(), py::arg("rptr"), py::arg("rlink"),
             py::arg("n_links"));

    py::class_<LevelView>(mod, "Level",
                          "A symmetric task graph as CSR (ip, ix, iw), checked once and kept "
                          "alive.")
        .def(py::init<Arr<i64>, Arr<i64>, Arr<double>>(), py::arg("ip"), py::arg("ix"),
             py::arg("iw"));

    mod.def(
        "score_moves",
        [](const LevelView& G, const PairRoutesView& R, Arr<i64> m, Arr<double> lload,
           Arr<double> bw, Arr<i64> rt, Arr<i64> rb, i64 link, double tiny) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_length(m, n, "m");
            need_length(lload, E, "lload", "n_links");
            need_length(bw, E, "bw", "n_links");
            need(rt.ndim() == 1, "rt must be 1-D, got shape " + shape_of(rt));
            const i64 k = rt.shape(0);
            need_length(rb, k, "rb", "len(rt)");
            need(link >= -1 && link < E, "link must be -1 or in [0, n_links)");
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const i64* pm = m.data();
            const i64* prt = rt.data();
            const i64* prb = rb.data();
            for (i64 i = 0; i < k; ++i) {
                need(prt[i] >= 0 && prt[i] < n, "rt must hold tasks in [0, n)");
                need(prb[i] >= 0 && prb[i] < P, "rb must hold processors in [0, P)");
                const i64 t = prt[i];
                need(pm[t] >= 0 && pm[t] < P, "m must hold processors in [0, P)");
                for (i64 q = pip[t]; q < pip[t + 1]; ++q)
                    need(pm[pix[q]] >= 0 && pm[pix[q]] < P, "m must hold processors in [0, P)");
            }
            py::array_t<double> up(k), dv(k);
            double* pup = up.mutable_data();
            double* pdv = dv.mutable_data();
            const double* pl = lload.data();
            const double* pbw = bw.data();
            {
                py::gil_scoped_release release;
                std::vector<double> acc(static_cast<std::size_t>(E), 0.0);
                std::vector<char> seen(static_cast<std::size_t>(E), 0);
                std::vector<i64> used;
                const double ninf = -std::numeric_limits<double>::infinity();
                for (i64 i = 0; i < k; ++i) {
                    const i64 t = prt[i], a = pm[t], b = prb[i];
                    // +w along b - q for every neighbour q, then -w along a - q (the order of
                    // the twin's entries, so every link's delta is summed in the same order)
                    for (int pass = 0; pass < 2; ++pass) {
                        const i64 from = pass == 0 ? b : a;
                        for (i64 q = pip[t]; q < pip[t + 1]; ++q) {
                            const double w = pass == 0 ? pw[q] : -pw[q];
                            const i64 pair = from * P + pm[pix[q]];
                            for (i64 j = prp[pair]; j < prp[pair + 1]; ++j) {
                                const i64 e = prl[j];
                                acc[e] += w;
                                if (!seen[e]) seen[e] = 1, used.push_back(e);
                            }
                        }
                    }
                    double best = ninf;
                    for (i64 e : used) {
                        const double d = acc[e];
                        if (d > tiny * (1 + pl[e])) {
                            const double v = (pl[e] + d) / pbw[e];
                            if (v > best) best = v;
                        }
                    }
                    pup[i] = best;
                    pdv[i] = link >= 0 ? acc[link] : 0.0;
                    for (i64 e : used) acc[e] = 0.0, seen[e] = 0;
                    used.clear();
                }
            }
            return py::make_tuple(up, dv);
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("lload"), py::arg("bw"),
        py::arg("rt"), py::arg("rb"), py::arg("link"), py::arg("tiny"),
        "For moving task rt[i] to processor rb[i]: the largest occupancy of a link whose load "
        "rises (-inf: none) and the change of the load of `link` (0 when link = -1).");
}
