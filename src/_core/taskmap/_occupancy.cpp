// pybind11 binding of coalloc::taskmap (include/coalloc/taskmap/occupancy.hpp): the routes of
// a resource graph expanded from its predecessor tables, and the occupancy updates of placing,
// removing and moving one task, and of recounting every link load.  Slow twin in
// coalloc.taskmap._reference.occupancy; users: coalloc.taskmap.routing and
// coalloc.taskmap.occupancy.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "coalloc/common/pybind.hpp"
#include "coalloc/taskmap/occupancy.hpp"
#include "coalloc/taskmap/npsum.hpp"

namespace py = pybind11;
namespace tk = coalloc::taskmap;

namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;
using coalloc::bind::Arr;
using coalloc::bind::need;
using coalloc::bind::need_length;
using coalloc::bind::shape_of;
using coalloc::bind::to_array;

// A mutable array argument: exactly this dtype, C-contiguous, writeable, never a copy (the
// updates must land in the caller's array).
template <class T>
using Out = py::array_t<T, py::array::c_style>;

template <class T>
T* writable(Out<T>& a, i64 n, const char* name) {
    need_length(a, n, name);
    need(a.writeable(), std::string(name) + " must be writeable");
    return a.mutable_data();
}

// The routing tables of one resource graph, validated once.
struct RoutesView {
    Arr<i32> pred, pred_link;
    Arr<i64> proc_row;
    i64 n_links = 0;
    tk::Routes r;

    RoutesView(Arr<i32> pred_, Arr<i32> pred_link_, Arr<i64> proc_row_, i64 n_links_)
        : pred(pred_), pred_link(pred_link_), proc_row(proc_row_), n_links(n_links_) {
        need(proc_row.ndim() == 1, "proc_row must be 1-D, got shape " + shape_of(proc_row));
        const i64 R = proc_row.shape(0);
        need(pred.ndim() == 2 && pred.shape(1) == R,
             "pred must have shape (P, R) with R = " + std::to_string(R) + ", got " +
                 shape_of(pred));
        const i64 P = pred.shape(0);
        need(pred_link.ndim() == 2 && pred_link.shape(0) == P && pred_link.shape(1) == R,
             "pred_link must have the shape of pred " + shape_of(pred) + ", got " +
                 shape_of(pred_link));
        need(n_links >= 0, "n_links must be >= 0");
        const i64* row = proc_row.data();
        i64 seen = 0;
        for (i64 v = 0; v < R; ++v) {
            need(row[v] >= -1 && row[v] < P, "proc_row must hold -1 or rows in [0, P)");
            seen += row[v] >= 0;
        }
        need(seen == P, "proc_row must name every row of pred once");
        const i32* pr = pred.data();
        const i32* pl = pred_link.data();
        for (i64 q = 0; q < P * R; ++q) {
            need(pr[q] >= -1 && pr[q] < R, "pred must hold -1 or node indices in [0, R)");
            need((pr[q] < 0) == (pl[q] < 0) && pl[q] < n_links,
                 "pred_link must hold a link id in [0, n_links) where pred >= 0, else -1");
        }
        r.n_nodes = R;
        r.pred = pr;
        r.pred_link = pl;
        r.proc_row = row;
    }

    i64 processor(i64 a, const char* name) const {
        need(a >= 0 && a < r.n_nodes && r.proc_row[a] >= 0,
             std::string(name) + " = " + std::to_string(a) + " is not a processor");
        return a;
    }
};

// The task graph's symmetric pair weights (CSR) and compute requirements, validated once.
struct PairsView {
    Arr<i64> indptr, indices;
    Arr<double> weight, node_weight;
    tk::Pairs g;

    PairsView(Arr<i64> indptr_, Arr<i64> indices_, Arr<double> weight_, Arr<double> nw)
        : indptr(indptr_), indices(indices_), weight(weight_), node_weight(nw) {
        need(node_weight.ndim() == 1,
             "node_weight must be 1-D, got shape " + shape_of(node_weight));
        const i64 n = node_weight.shape(0);
        coalloc::bind::need_csr_shapes(indptr, indices, weight, n);
        const i64* ip = indptr.data();
        const i64* ix = indices.data();
        need(ip[0] == 0 && ip[n] == indices.shape(0),
             "indptr must start at 0 and end at len(indices)");
        for (i64 u = 0; u < n; ++u) need(ip[u] <= ip[u + 1], "indptr must be non-decreasing");
        for (i64 q = 0; q < ip[n]; ++q) need(ix[q] >= 0 && ix[q] < n, "indices must be in [0, n)");
        g.n = n;
        g.indptr = ip;
        g.indices = ix;
        g.weight = weight.data();
        g.node_weight = node_weight.data();
    }

    i64 task(i64 t) const {
        need(t >= 0 && t < g.n, "task " + std::to_string(t) + " is not in [0, n)");
        return t;
    }
};

struct State {
    i64* mapping;
    double* node_load;
    double* link_load;
};

State state_of(const PairsView& G, const RoutesView& Rt, Out<i64>& mapping, Out<double>& node_load,
               Out<double>& link_load) {
    return {writable(mapping, G.g.n, "mapping"), writable(node_load, Rt.r.n_nodes, "node_load"),
            writable(link_load, Rt.n_links, "link_load")};
}

using coalloc::taskmap::np_sum;  // NumPy's pairwise sum (coalloc/taskmap/npsum.hpp)

// Python's max(a, b) and min(a, b): the first unless the second is larger (smaller).
inline double py_max(double a, double b) { return b > a ? b : a; }
inline double py_min(double a, double b) { return b < a ? b : a; }

// engine.Engine.map_tasks_on's loop (section 4.4 of the paper): the unmapped tasks in order
// put on q one by one, the best prefix's length found, the rest taken off again in reverse.
// Every value is the one the Python loop computes (its additions in its order; NumPy's sums
// and maxima emulated). `poll` (a callable or None, called with the GIL held) before the
// tasks 0, 64, 128, ...; `count[0]` counts the tasks placed as they are (so a poll that
// raises leaves the caller the count of the moves made, as the Python loop's).
i64 fill_prefix(const PairsView& G, const RoutesView& Rt, State s, const i64* un, i64 n_u, i64 q,
                double inv_cq, double cap_q, double cur, double rest, const double* inv_bw,
                bool open_metric, double open_vol, double adj, double u, bool early_exit,
                double tie, const py::object& poll, i64* count) {
    const tk::Pairs& g = G.g;
    const double* w = g.node_weight;
    double best_m = std::numeric_limits<double>::infinity();
    const double inf = best_m;
    i64 best_i = 0, placed = 0;
    std::vector<i64> ids;
    std::vector<double> a_vol, b_vol;
    bool stop = false;
    for (i64 start = 0; start < n_u && !stop; start += 64) {
        if (!poll.is_none()) poll();
        py::gil_scoped_release release;
        const i64 end = std::min(n_u, start + 64);
        for (i64 i = start; i < end; ++i) {
            const i64 t = un[i];
            ids.clear();
            tk::place(g, Rt.r, s.mapping, s.node_load, s.link_load, t, q, ids);
            ++placed;
            ++count[0];
            const double occ = s.node_load[q] * inv_cq;
            if (occ > cur) cur = occ;
            if (!ids.empty()) {
                double lo = s.link_load[ids[0]] * inv_bw[ids[0]];  // np.max: NaN wins
                if (!std::isnan(lo))
                    for (std::size_t k = 1; k < ids.size(); ++k) {
                        const double x = s.link_load[ids[k]] * inv_bw[ids[k]];
                        if (std::isnan(x)) {
                            lo = x;
                            break;
                        }
                        if (x > lo) lo = x;
                    }
                if (lo > cur) cur = lo;
            }
            rest -= w[t];
            double comp;
            if (i == n_u - 1)
                comp = 0.0;
            else
                comp = cap_q > 0 ? py_max(rest, 0.0) / cap_q : inf;
            double m_i = py_max(cur, comp);
            if (open_metric) {
                a_vol.clear();
                b_vol.clear();
                for (i64 e = g.indptr[t]; e < g.indptr[t + 1]; ++e) {
                    const i64 where = s.mapping[g.indices[e]];
                    if (where < 0) a_vol.push_back(g.weight[e]);
                    if (where == q) b_vol.push_back(g.weight[e]);
                }
                open_vol += np_sum(a_vol.data(), static_cast<i64>(a_vol.size())) -
                            np_sum(b_vol.data(), static_cast<i64>(b_vol.size()));
                if (open_vol > 1e-12 * (1.0 + std::fabs(open_vol))) {
                    const double o_open = adj > 0 ? open_vol / adj : inf;
                    m_i = py_max(m_i, o_open);
                }
            }
            if (cur > u * (1 + tie)) {  // (u NaN: no bound)
                stop = true;
                break;
            }
            if (early_exit && cur > best_m * (1 + tie)) {
                stop = true;
                break;
            }
            if (m_i <= best_m * (1 + tie)) {
                best_m = py_min(best_m, m_i);
                best_i = i + 1;
            }
        }
    }
    {
        py::gil_scoped_release release;
        for (i64 j = placed - 1; j >= best_i; --j) {
            ids.clear();
            tk::remove(g, Rt.r, s.mapping, s.node_load, s.link_load, un[j], ids);
        }
    }
    return best_i;
}

}  // namespace

PYBIND11_MODULE(_occupancy, mod) {
    coalloc::bind::register_exceptions(mod);
    mod.doc() =
        "Routes expanded from predecessor tables and the occupancy updates of the task "
        "mapper (coalloc/taskmap/occupancy.hpp); slow twin in "
        "coalloc.taskmap._reference.occupancy.";

    py::class_<RoutesView>(mod, "Routes",
                           "The routing tables (pred, pred_link, proc_row) of one resource "
                           "graph, checked once and kept alive.")
        .def(py::init<Arr<i32>, Arr<i32>, Arr<i64>, i64>(), py::arg("pred"),
             py::arg("pred_link"), py::arg("proc_row"), py::arg("n_links"))
        .def(
            "route",
            [](const RoutesView& R, i64 a, i64 b) {
                R.processor(a, "a");
                R.processor(b, "b");
                std::vector<i64> out;
                if (a != b) tk::for_route(R.r, a, b, [&](i64 k) { out.push_back(k); });
                return to_array(out);
            },
            py::arg("a"), py::arg("b"),
            "Link ids of the route between processors a and b, in walk order.")
        .def(
            "table",
            [](const RoutesView& R, i64 a) {
                R.processor(a, "a");
                const i64 n = R.r.n_nodes;
                i64 width = 0;
                std::vector<i64> len(static_cast<std::size_t>(n), 0);
                for (i64 v = 0; v < n; ++v) {
                    len[v] = tk::route_length(R.r, a, v);
                    width = std::max(width, len[v]);
                }
                py::array_t<i64> out({n, width});
                i64* o = out.mutable_data();
                std::fill(o, o + n * width, i64{-1});
                {
                    py::gil_scoped_release release;
                    for (i64 v = 0; v < n; ++v) {
                        if (v == a) continue;
                        i64 j = 0;
                        tk::for_route(R.r, a, v, [&](i64 k) { o[v * width + j++] = k; });
                    }
                }
                return out;
            },
            py::arg("a"),
            "Padded (R, H) route table of processor a: row v lists the links to node v.");

    py::class_<PairsView>(mod, "Pairs",
                          "The symmetric pair weights (CSR) and compute requirements of a "
                          "task graph, checked once and kept alive.")
        .def(py::init<Arr<i64>, Arr<i64>, Arr<double>, Arr<double>>(), py::arg("indptr"),
             py::arg("indices"), py::arg("weight"), py::arg("node_weight"));

    mod.def(
        "place",
        [](const PairsView& G, const RoutesView& Rt, Out<i64> mapping, Out<double> node_load,
           Out<double> link_load, i64 t, i64 p) {
            State s = state_of(G, Rt, mapping, node_load, link_load);
            G.task(t);
            Rt.processor(p, "p");
            need(s.mapping[t] < 0, "task " + std::to_string(t) + " is already mapped");
            std::vector<i64> touched;
            {
                py::gil_scoped_release release;
                tk::place(G.g, Rt.r, s.mapping, s.node_load, s.link_load, t, p, touched);
            }
            return to_array(touched);
        },
        py::arg("pairs"), py::arg("routes"), py::arg("mapping").noconvert(),
        py::arg("node_load").noconvert(), py::arg("link_load").noconvert(), py::arg("t"),
        py::arg("p"),
        "Map the unmapped task t on processor p; returns the links touched (with repeats).");

    mod.def(
        "remove",
        [](const PairsView& G, const RoutesView& Rt, Out<i64> mapping, Out<double> node_load,
           Out<double> link_load, i64 t) {
            State s = state_of(G, Rt, mapping, node_load, link_load);
            G.task(t);
            need(s.mapping[t] >= 0, "task " + std::to_string(t) + " is not mapped");
            Rt.processor(s.mapping[t], "mapping[t]");
            std::vector<i64> touched;
            {
                py::gil_scoped_release release;
                tk::remove(G.g, Rt.r, s.mapping, s.node_load, s.link_load, t, touched);
            }
            return to_array(touched);
        },
        py::arg("pairs"), py::arg("routes"), py::arg("mapping").noconvert(),
        py::arg("node_load").noconvert(), py::arg("link_load").noconvert(), py::arg("t"),
        "Unmap the mapped task t; returns the links touched (with repeats).");

    mod.def(
        "move",
        [](const PairsView& G, const RoutesView& Rt, Out<i64> mapping, Out<double> node_load,
           Out<double> link_load, i64 t, i64 p) {
            State s = state_of(G, Rt, mapping, node_load, link_load);
            G.task(t);
            Rt.processor(p, "p");
            if (s.mapping[t] >= 0) Rt.processor(s.mapping[t], "mapping[t]");
            std::vector<i64> touched;
            {
                py::gil_scoped_release release;
                if (s.mapping[t] >= 0)
                    tk::remove(G.g, Rt.r, s.mapping, s.node_load, s.link_load, t, touched);
                tk::place(G.g, Rt.r, s.mapping, s.node_load, s.link_load, t, p, touched);
            }
        },
        py::arg("pairs"), py::arg("routes"), py::arg("mapping").noconvert(),
        py::arg("node_load").noconvert(), py::arg("link_load").noconvert(), py::arg("t"),
        py::arg("p"), "Move task t (mapped or not) to processor p.");

    mod.def(
        "route_uses",
        [](const RoutesView& Rt, Arr<i64> a, Arr<i64> b, i64 link) {
            need(a.ndim() == 1, "a must be 1-D, got shape " + shape_of(a));
            const i64 n = a.shape(0);
            need_length(b, n, "b", "len(a)");
            need(link >= 0 && link < Rt.n_links, "link must be in [0, n_links)");
            const i64* pa = a.data();
            const i64* pb = b.data();
            for (i64 i = 0; i < n; ++i) {
                Rt.processor(pa[i], "a[i]");
                Rt.processor(pb[i], "b[i]");
            }
            py::array_t<bool> out(n);
            {
                py::gil_scoped_release release;
                tk::route_uses(Rt.r, n, pa, pb, link, out.mutable_data());
            }
            return out;
        },
        py::arg("routes"), py::arg("a"), py::arg("b"), py::arg("link"),
        "Whether the route between processors a[i] and b[i] crosses link (a bool array).");

    mod.def(
        "link_loads",
        [](const RoutesView& Rt, Arr<i64> mapping, Arr<i64> s, Arr<i64> t, Arr<double> vol) {
            need(mapping.ndim() == 1, "mapping must be 1-D, got shape " + shape_of(mapping));
            const i64 n = mapping.shape(0), m = s.ndim() == 1 ? s.shape(0) : -1;
            need(m >= 0, "s must be 1-D, got shape " + shape_of(s));
            need_length(t, m, "t", "len(s)");
            need_length(vol, m, "vol", "len(s)");
            const i64* mp = mapping.data();
            const i64* ps = s.data();
            const i64* pt = t.data();
            for (i64 i = 0; i < n; ++i)
                need(mp[i] == -1 || (mp[i] >= 0 && mp[i] < Rt.r.n_nodes &&
                                     Rt.r.proc_row[mp[i]] >= 0),
                     "mapping must hold -1 or processors");
            for (i64 e = 0; e < m; ++e)
                need(ps[e] >= 0 && ps[e] < n && pt[e] >= 0 && pt[e] < n,
                     "s and t must be tasks in [0, len(mapping))");
            py::array_t<double> out(Rt.n_links);
            double* o = out.mutable_data();
            std::fill(o, o + Rt.n_links, 0.0);
            {
                py::gil_scoped_release release;
                tk::link_loads(Rt.r, mp, m, ps, pt, vol.data(), Rt.n_links, o);
            }
            return out;
        },
        py::arg("routes"), py::arg("mapping"), py::arg("s"), py::arg("t"), py::arg("vol"),
        "Link loads of a (partial, -1 = unmapped) mapping over the pairs (s, t, vol).");

    mod.def(
        "fill_prefix",
        [](const PairsView& G, const RoutesView& Rt, Out<i64> mapping, Out<double> node_load,
           Out<double> link_load, Arr<i64> unmapped, i64 q, double inv_cq, double cap_q,
           double cur, double rest, Arr<double> inv_bw, bool open_metric, double open_vol,
           double adj, double u, bool early_exit, double tie, py::object poll,
           Out<i64> count) {
            State s = state_of(G, Rt, mapping, node_load, link_load);
            Rt.processor(q, "q");
            need(unmapped.ndim() == 1, "unmapped must be 1-D, got shape " + shape_of(unmapped));
            need_length(inv_bw, Rt.n_links, "inv_bw", "n_links");
            i64* cnt = writable(count, 1, "count");
            const i64 n_u = unmapped.shape(0);
            const i64* un = unmapped.data();
            std::vector<char> seen(static_cast<std::size_t>(G.g.n), 0);
            for (i64 i = 0; i < n_u; ++i) {
                G.task(un[i]);
                need(s.mapping[un[i]] < 0 && !seen[un[i]],
                     "unmapped must hold distinct unmapped tasks");
                seen[un[i]] = 1;
            }
            return fill_prefix(G, Rt, s, un, n_u, q, inv_cq, cap_q, cur, rest, inv_bw.data(),
                               open_metric, open_vol, adj, u, early_exit, tie, poll, cnt);
        },
        py::arg("pairs"), py::arg("routes"), py::arg("mapping").noconvert(),
        py::arg("node_load").noconvert(), py::arg("link_load").noconvert(), py::arg("unmapped"),
        py::arg("q"), py::arg("inv_cq"), py::arg("cap_q"), py::arg("cur"), py::arg("rest"),
        py::arg("inv_bw"), py::arg("open_metric"), py::arg("open_vol"), py::arg("adj"),
        py::arg("u"), py::arg("early_exit"), py::arg("tie"), py::arg("poll"),
        py::arg("count").noconvert(),
        "engine.Engine.map_tasks_on's loop: the tasks `unmapped` put on processor q in order, "
        "the best prefix kept (the rest taken off in reverse); returns its length. The "
        "occupancy so far `cur`, the weight left `rest`, the open volume `open_vol` (used "
        "with open_metric) as the Python loop has them; u NaN: no bound; `poll` (a callable "
        "or None) before the tasks 0, 64, ...; count[0] += each task placed.");
}
