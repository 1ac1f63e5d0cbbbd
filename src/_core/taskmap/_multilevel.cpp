// pybind11 kernels of the multilevel mapper (coalloc.taskmap.multilevel): every route between
// the processors of a resource graph as one CSR (pair_routes), and the scores of candidate
// bottleneck moves (score_moves).  Slow twin in coalloc.taskmap._reference.multilevel, with
// the same signatures and floating-point operation order (the parity tests in
// tests/taskmap/test_multilevel.py require bit-identical results).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
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

// One bisection of a small graph (local CSR sip, six, siw; vertex weights wloc): graph
// growing from `seed` to about `target` (gain = volume to the grown side - volume to the
// rest; a vertex that would overshoot by more than half of itself is skipped), then `passes`
// Fiduccia-Mattheyses passes within `tol` of the target, each rolled back to its best prefix.
// The twin's heapq holds (-gain, vertex) pairs; a min-heap of the same pairs pops them in the
// same order (the pairs are totally ordered), so the answers are identical.
using Entry = std::pair<double, i64>;
using MinHeap = std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>>;

void grow_fm_kernel(i64 n, const i64* sip, const i64* six, const double* siw, const double* wloc,
                    double target, i64 seed, double tol, int passes, std::uint8_t* inside) {
    // seed < 0: no growing, the FM passes start from `inside` as given
    const double tiny = 1e-12;
    std::vector<double> gain(n, 0.0);
    for (i64 v = 0; v < n; ++v) {
        double g = 0.0;
        for (i64 k = sip[v]; k < sip[v + 1]; ++k) g += siw[k];
        gain[v] = -g;
    }
    std::vector<char> done(n, 0);
    MinHeap heap;
    double got = 0.0;
    if (seed >= 0) {
        std::fill(inside, inside + n, std::uint8_t{0});
        heap.push({-gain[seed], seed});
    }
    while (seed >= 0 && got < target - tiny) {
        if (heap.empty()) {
            i64 s = -1;
            for (i64 v = 0; v < n; ++v)
                if (!inside[v] && !done[v] && (s < 0 || gain[v] > gain[s])) s = v;
            if (s < 0) break;
            heap.push({-gain[s], s});
        }
        const Entry top = heap.top();
        heap.pop();
        const i64 v = top.second;
        if (inside[v] || done[v] || -top.first != gain[v]) continue;
        if (got + wloc[v] > target && got + wloc[v] / 2 > target && got > 0) {
            done[v] = 1;
            continue;
        }
        inside[v] = 1;
        got += wloc[v];
        for (i64 k = sip[v]; k < sip[v + 1]; ++k) {
            const i64 u = six[k];
            if (!inside[u]) {
                gain[u] += 2 * siw[k];
                if (!done[u]) heap.push({-gain[u], u});
            }
        }
    }
    if (n < 2) return;
    std::vector<std::uint8_t> side(inside, inside + n);
    std::vector<double> ext(n), intl(n);
    std::vector<char> locked(n);
    std::vector<i64> moves;
    for (int pass = 0; pass < passes; ++pass) {
        for (i64 v = 0; v < n; ++v) {
            double e = 0.0, in = 0.0;
            for (i64 k = sip[v]; k < sip[v + 1]; ++k) {
                const bool same = side[v] == side[six[k]];
                e += same ? 0.0 : siw[k];
                in += same ? siw[k] : 0.0;
            }
            ext[v] = e;
            intl[v] = in;
            gain[v] = e - in;
        }
        double cut = 0.0, w_in = 0.0;
        for (i64 v = 0; v < n; ++v) cut += ext[v];
        cut /= 2;
        for (i64 v = 0; v < n; ++v)
            if (side[v]) w_in += wloc[v];
        std::vector<Entry> init;
        for (i64 v = 0; v < n; ++v)
            if (ext[v] > 0) init.push_back({-gain[v], v});
        MinHeap h(std::greater<Entry>(), std::move(init));
        std::fill(locked.begin(), locked.end(), 0);
        moves.clear();
        double best_cut = cut, best_dev = std::fabs(w_in - target);
        std::size_t best_k = 0;
        int bad = 0;
        while (!h.empty() && bad < 64) {
            const Entry top = h.top();
            h.pop();
            const i64 v = top.second;
            if (locked[v] || -top.first != gain[v]) continue;
            const double dw = side[v] ? -wloc[v] : wloc[v];
            const double dev_new = std::fabs(w_in + dw - target);
            if (dev_new > tol && dev_new >= std::fabs(w_in - target)) continue;
            locked[v] = 1;
            side[v] ^= 1;
            w_in += dw;
            cut -= gain[v];
            gain[v] = -gain[v];
            for (i64 k = sip[v]; k < sip[v + 1]; ++k) {
                const i64 u = six[k];
                if (locked[u]) continue;
                gain[u] += side[u] != side[v] ? 2 * siw[k] : -2 * siw[k];
                h.push({-gain[u], u});
            }
            moves.push_back(v);
            const double dev = std::fabs(w_in - target);
            if ((dev <= tol || dev < best_dev) &&
                (cut < best_cut - 1e-12 || (cut <= best_cut + 1e-12 && dev < best_dev))) {
                best_cut = cut;
                best_dev = dev;
                best_k = moves.size();
                bad = 0;
            } else {
                ++bad;
            }
        }
        for (std::size_t j = best_k; j < moves.size(); ++j) side[moves[j]] ^= 1;
        if (best_k == 0) break;
    }
    std::copy(side.begin(), side.end(), inside);
}

// One bisection of the subgraph induced by `verts` (global ids of a level's CSR, in order):
// the subgraph in local ids (rows in the order of verts, each row's entries in CSR order),
// growing from the vertex farthest (hops; first of the farthest) from local vertex 0, then
// grow_fm_kernel's passes.
void bisect_small_kernel(const i64* ip, const i64* ix, const double* iw, i64 n_level,
                         const i64* verts, i64 k, const double* wloc, double target, double tol,
                         int passes, std::uint8_t* inside) {
    std::vector<i64> loc(static_cast<std::size_t>(n_level), -1);
    for (i64 i = 0; i < k; ++i) loc[verts[i]] = i;
    std::vector<i64> sip(static_cast<std::size_t>(k + 1), 0), six;
    std::vector<double> siw;
    for (i64 i = 0; i < k; ++i) {
        const i64 v = verts[i];
        for (i64 q = ip[v]; q < ip[v + 1]; ++q) {
            const i64 u = loc[ix[q]];
            if (u >= 0) six.push_back(u), siw.push_back(iw[q]);
        }
        sip[i + 1] = static_cast<i64>(six.size());
    }
    std::vector<i64> dist(static_cast<std::size_t>(k), -1), frontier{0}, next;
    dist[0] = 0;
    while (!frontier.empty()) {
        next.clear();
        for (i64 v : frontier)
            for (i64 q = sip[v]; q < sip[v + 1]; ++q)
                if (dist[six[q]] < 0) dist[six[q]] = dist[v] + 1, next.push_back(six[q]);
        frontier.swap(next);
    }
    i64 a = 0;
    for (i64 v = 1; v < k; ++v)
        if (dist[v] > dist[a]) a = v;
    grow_fm_kernel(k, sip.data(), six.data(), siw.data(), wloc, target, a, tol, passes, inside);
}

// Heavy-edge matching (levels.coarsen_level, issue 40 h60cpu): the vertices visited in
// `order`; each unmatched one is matched with the unmatched neighbour (itself excluded) of
// largest pair weight whose weight with it stays at most max_w, the first of equals in CSR
// order (NumPy's argmax over the weights with -1 for the others: a NaN wins at once);
// unmatched (itself) where none is. match[v] = partner (v itself when alone).
void match_heavy_kernel(i64 n, const i64* ip, const i64* ix, const double* iw, const double* vw,
                        double max_w, const i64* order, i64 k, i64* match) {
    std::fill(match, match + n, i64{-1});
    for (i64 i = 0; i < k; ++i) {
        const i64 v = order[i];
        if (match[v] >= 0) continue;
        i64 best = v;
        const i64 lo = ip[v], hi = ip[v + 1];
        if (hi > lo) {
            bool any = false;
            i64 arg = lo;
            double top = 0.0;
            for (i64 q = lo; q < hi; ++q) {
                const i64 u = ix[q];
                const bool ok = match[u] < 0 && u != v && vw[u] + vw[v] <= max_w;
                any = any || ok;
                const double w = ok ? iw[q] : -1.0;
                if (q == lo || std::isnan(w) || w > top) {
                    arg = q;
                    top = w;
                    if (std::isnan(w)) break;
                }
            }
            if (any) best = ix[arg];
        }
        match[v] = best;
        match[best] = v;
    }
}

// Hop distances from src over the stored entries of a CSR graph (bisection.hop_distances,
// issue 40 h60cpu): breadth-first, -1 where unreachable.
void hop_kernel(i64 n, const i64* ip, const i64* ix, i64 src, double* dist) {
    std::fill(dist, dist + n, -1.0);
    std::vector<i64> frontier{src}, next;
    dist[src] = 0.0;
    while (!frontier.empty()) {
        next.clear();
        for (i64 v : frontier) {
            const double dv = dist[v] + 1.0;
            for (i64 q = ip[v]; q < ip[v + 1]; ++q)
                if (dist[ix[q]] < 0) dist[ix[q]] = dv, next.push_back(ix[q]);
        }
        frontier.swap(next);
    }
}

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
    mod.def(
        "grow_fm",
        [](Arr<i64> sip, Arr<i64> six, Arr<double> siw, Arr<double> wloc, double target,
           i64 seed, double tol, int passes, Arr<bool> start) {
            need(wloc.ndim() == 1, "wloc must be 1-D, got shape " + shape_of(wloc));
            const i64 n = wloc.shape(0);
            coalloc::bind::need_csr_shapes(sip, six, siw, n);
            const i64* p = sip.data();
            const i64* x = six.data();
            need(p[0] == 0 && p[n] == six.shape(0), "indptr must start at 0 and end at len(indices)");
            for (i64 v = 0; v < n; ++v) need(p[v] <= p[v + 1], "indptr must be non-decreasing");
            for (i64 q = 0; q < p[n]; ++q) need(x[q] >= 0 && x[q] < n, "indices must be in [0, n)");
            need(seed >= -1 && seed < n, "seed must be -1 or a vertex in [0, n)");
            need_length(start, n, "start");
            need(passes >= 0, "passes must be >= 0");
            py::array_t<bool> out(n);
            static_assert(sizeof(bool) == 1, "bool must be one byte");
            auto* o = reinterpret_cast<std::uint8_t*>(out.mutable_data());
            const bool* st = start.data();
            for (i64 v = 0; v < n; ++v) o[v] = st[v] ? 1 : 0;
            {
                py::gil_scoped_release release;
                grow_fm_kernel(n, p, x, siw.data(), wloc.data(), target, seed, tol, passes, o);
            }
            return out;
        },
        py::arg("indptr"), py::arg("indices"), py::arg("data"), py::arg("wloc"),
        py::arg("target"), py::arg("seed"), py::arg("tol"), py::arg("passes"), py::arg("start"),
        "Bisection of a small graph: growing from seed to about target (seed = -1: from the "
        "bool array start as given), then FM passes within tol of the target; returns the "
        "side of the target as a bool array.");
    mod.def(
        "bisect_small",
        [](const LevelView& G, Arr<i64> verts, Arr<double> wloc, double target, double tol,
           int passes) {
            need(verts.ndim() == 1, "verts must be 1-D, got shape " + shape_of(verts));
            const i64 k = verts.shape(0);
            need(k >= 1, "verts must not be empty");
            need_length(wloc, k, "wloc", "len(verts)");
            need(passes >= 0, "passes must be >= 0");
            const i64* pv = verts.data();
            std::vector<char> seen(static_cast<std::size_t>(G.n), 0);
            for (i64 i = 0; i < k; ++i) {
                need(pv[i] >= 0 && pv[i] < G.n && !seen[pv[i]],
                     "verts must hold distinct vertices in [0, n)");
                seen[pv[i]] = 1;
            }
            py::array_t<bool> out(k);
            auto* o = reinterpret_cast<std::uint8_t*>(out.mutable_data());
            {
                py::gil_scoped_release release;
                bisect_small_kernel(G.ip.data(), G.ix.data(), G.iw.data(), G.n, pv, k,
                                    wloc.data(), target, tol, passes, o);
            }
            return out;
        },
        py::arg("level"), py::arg("verts"), py::arg("wloc"), py::arg("target"), py::arg("tol"),
        py::arg("passes"),
        "grow_fm on the subgraph induced by verts, growing from the vertex farthest from "
        "verts[0] (hops); returns the grown side over verts.");
    mod.def(
        "match_heavy",
        [](const LevelView& G, Arr<double> vw, double max_w, Arr<i64> order) {
            need_length(vw, G.n, "vw");
            need(order.ndim() == 1, "order must be 1-D, got shape " + shape_of(order));
            const i64 k = order.shape(0);
            const i64* po = order.data();
            for (i64 i = 0; i < k; ++i)
                need(po[i] >= 0 && po[i] < G.n, "order must hold vertices in [0, n)");
            py::array_t<i64> out(G.n);
            i64* pm = out.mutable_data();
            {
                py::gil_scoped_release release;
                match_heavy_kernel(G.n, G.ip.data(), G.ix.data(), G.iw.data(), vw.data(), max_w,
                                   po, k, pm);
            }
            return out;
        },
        py::arg("level"), py::arg("vw"), py::arg("max_w"), py::arg("order"),
        "Heavy-edge matching in the visiting order `order`: each unmatched vertex with its "
        "unmatched neighbour of largest pair weight within max_w (first of equals); the "
        "partner of every vertex (itself when alone, -1 when never visited).");
    mod.def(
        "hop_distances",
        [](Arr<i64> indptr, Arr<i64> indices, i64 src) {
            need(indptr.ndim() == 1 && indptr.shape(0) >= 1,
                 "indptr must be 1-D and non-empty, got shape " + shape_of(indptr));
            const i64 n = indptr.shape(0) - 1;
            need(indices.ndim() == 1, "indices must be 1-D, got shape " + shape_of(indices));
            const i64* p = indptr.data();
            const i64* x = indices.data();
            need(p[0] == 0 && p[n] == indices.shape(0),
                 "indptr must start at 0 and end at len(indices)");
            for (i64 v = 0; v < n; ++v) need(p[v] <= p[v + 1], "indptr must be non-decreasing");
            for (i64 q = 0; q < p[n]; ++q) need(x[q] >= 0 && x[q] < n, "indices must be in [0, n)");
            need(src >= 0 && src < n, "src must be a vertex in [0, n)");
            py::array_t<double> out(n);
            double* d = out.mutable_data();
            {
                py::gil_scoped_release release;
                hop_kernel(n, p, x, src, d);
            }
            return out;
        },
        py::arg("indptr"), py::arg("indices"), py::arg("src"),
        "Hop distances from src over the stored entries (float64; -1: unreachable).");
    mod.def(
        "apply_move",
        [](const LevelView& G, const PairRoutesView& R, py::array m, py::array lload,
           py::array nload, double w, i64 t, i64 b) {
            // the three arrays are updated in place: exactly int64 / float64, contiguous,
            // writeable (a converted copy would lose the update)
            auto own = [](const py::array& a, bool ints, i64 len, const char* name) {
                const bool ok = ints ? a.dtype().is(py::dtype::of<i64>())
                                     : a.dtype().is(py::dtype::of<double>());
                need(ok && a.ndim() == 1 && a.writeable() &&
                         (a.flags() & py::array::c_style) && a.shape(0) == len,
                     std::string(name) + " must be a writeable contiguous 1-D " +
                         (ints ? "int64" : "float64") + " array of length " +
                         std::to_string(len));
            };
            own(m, true, G.n, "m");
            own(lload, false, R.E, "lload");
            own(nload, false, R.P, "nload");
            need(t >= 0 && t < G.n, "t must be a vertex in [0, n)");
            need(b >= 0 && b < R.P, "b must be a processor in [0, P)");
            i64* pm = static_cast<i64*>(m.mutable_data());
            double* pl = static_cast<double*>(lload.mutable_data());
            double* pn = static_cast<double*>(nload.mutable_data());
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            need(pm[t] >= 0 && pm[t] < R.P, "m must hold processors in [0, P)");
            for (i64 q = pip[t]; q < pip[t + 1]; ++q)
                need(pm[pix[q]] >= 0 && pm[pix[q]] < R.P, "m must hold processors in [0, P)");
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const i64 P = R.P, a = pm[t];
            // +w along b - q for every neighbour q, then -w along a - q: the order of the
            // twin's np.add.at, so every link's load is summed in the same order
            for (int pass = 0; pass < 2; ++pass) {
                const i64 from = pass == 0 ? b : a;
                for (i64 q = pip[t]; q < pip[t + 1]; ++q) {
                    const double v = pass == 0 ? pw[q] : -pw[q];
                    const i64 pair = from * P + pm[pix[q]];
                    for (i64 j = prp[pair]; j < prp[pair + 1]; ++j) pl[prl[j]] += v;
                }
            }
            pn[a] -= w;
            pn[b] += w;
            pm[t] = b;
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("lload"), py::arg("nload"),
        py::arg("w"), py::arg("t"), py::arg("b"),
        "Move task t (weight w) to processor b in place: the link loads along its streams' "
        "routes (lload), the processors' loads (nload) and m.");
}
