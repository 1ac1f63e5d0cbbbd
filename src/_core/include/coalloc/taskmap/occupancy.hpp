// Routes and occupancy updates of the task mapper (seed 002, Taura & Chien 2000, section 3).
//
// A resource graph's fixed routes are stored as two (P, R) tables computed once per graph
// (coalloc.taskmap.routing.RouteTable): pred[k, v], the node before v on the shortest path
// from the k-th processor, and pred_link[k, v], the link (pred[k, v], v).  The route between
// processors a and b is read from the row of the one that comes first among the processors
// (row = proc_row[node]), so it is the same set of links both ways; it is expanded on demand
// by walking the predecessors from the other end.  Nothing is stored per pair: O(P x R) memory
// instead of O(P^2 x hops).
//
// The arithmetic is the plain IEEE-754 double sequence of the NumPy code that came before
// (coalloc.taskmap._reference.occupancy repeats it): every link's load receives the pairs'
// volumes in the order of the task's neighbours (CSR order), and a full recount groups the
// pairs by the node of their first task (ascending), summing each group apart before adding
// it to the loads, as numpy.bincount did.  So the loads, and every answer, are bit-identical.
//
// The kernels trust their input: the model validated the graphs and the bindings check
// shapes and the task and processor arguments.  The header does not depend on Python.

#pragma once

#include <cstdint>
#include <vector>

namespace coalloc {
namespace taskmap {

using i64 = std::int64_t;
using i32 = std::int32_t;

// The routing tables of one resource graph (row-major (P, R) arrays).
struct Routes {
    i64 n_nodes = 0;         // R
    const i32* pred = nullptr;       // (P, R) node predecessors, -1 at the row's root
    const i32* pred_link = nullptr;  // (P, R) link entering v on the path from row k, -1
    const i64* proc_row = nullptr;   // (R,) row of a processor, -1 for a router
};

// The task graph's symmetric pair weights (CSR, no diagonal) and compute requirements.
struct Pairs {
    i64 n = 0;
    const i64* indptr = nullptr;
    const i64* indices = nullptr;
    const double* weight = nullptr;
    const double* node_weight = nullptr;
};

// Calls f(link) for each link of the route between processors a != b, in the order the
// predecessor walk meets them (from the end whose row is not used back to the other).
template <class F>
inline void for_route(const Routes& r, i64 a, i64 b, F&& f) {
    const i64 ra = r.proc_row[a], rb = r.proc_row[b];
    i64 row, src, v;
    if (rb >= 0 && rb < ra) {
        row = rb, src = b, v = a;
    } else {
        row = ra, src = a, v = b;
    }
    const i32* pr = r.pred + row * r.n_nodes;
    const i32* pl = r.pred_link + row * r.n_nodes;
    while (v != src) {
        f(static_cast<i64>(pl[v]));
        v = pr[v];
    }
}

// Number of links of that route.
inline i64 route_length(const Routes& r, i64 a, i64 b) {
    i64 k = 0;
    if (a != b) for_route(r, a, b, [&](i64) { ++k; });
    return k;
}

// Adds sign x volume of every pair (t, u) with u mapped elsewhere than p to the links of the
// route p - mapping[u]; appends the links touched (with repeats) to `touched`.
inline void comm_update(const Pairs& g, const Routes& r, const i64* mapping, double* link_load,
                        i64 t, i64 p, double sign, std::vector<i64>& touched) {
    for (i64 q = g.indptr[t]; q < g.indptr[t + 1]; ++q) {
        const i64 b = mapping[g.indices[q]];
        if (b < 0 || b == p) continue;
        const double d = sign * g.weight[q];
        for_route(r, p, b, [&](i64 k) {
            link_load[k] += d;
            touched.push_back(k);
        });
    }
}

// Places the unmapped task t on processor p.
inline void place(const Pairs& g, const Routes& r, i64* mapping, double* node_load,
                  double* link_load, i64 t, i64 p, std::vector<i64>& touched) {
    node_load[p] += g.node_weight[t];
    comm_update(g, r, mapping, link_load, t, p, 1.0, touched);
    mapping[t] = p;
}

// Unmaps the mapped task t.
inline void remove(const Pairs& g, const Routes& r, i64* mapping, double* node_load,
                   double* link_load, i64 t, std::vector<i64>& touched) {
    const i64 p = mapping[t];
    mapping[t] = -1;
    node_load[p] -= g.node_weight[t];
    comm_update(g, r, mapping, link_load, t, p, -1.0, touched);
}

// out[i] = 1 when the route between processors a[i] and b[i] crosses `link` (0 when a[i] ==
// b[i]).
inline void route_uses(const Routes& r, i64 n, const i64* a, const i64* b, i64 link,
                       bool* out) {
    for (i64 i = 0; i < n; ++i) {
        bool hit = false;
        if (a[i] != b[i]) for_route(r, a[i], b[i], [&](i64 k) { hit = hit || k == link; });
        out[i] = hit;
    }
}

// The link loads of a (partial) mapping from scratch, over the pairs (s[e], t[e], vol[e]),
// s[e] < t[e]: pairs with both ends mapped on different processors, grouped by the node of
// s (ascending, stable), each group summed apart and then added to link_load.
inline void link_loads(const Routes& r, const i64* mapping, i64 n_pairs, const i64* s,
                       const i64* t, const double* vol, i64 n_links, double* link_load) {
    const i64 R = r.n_nodes;
    std::vector<i64> count(R + 1, 0);
    for (i64 e = 0; e < n_pairs; ++e) {
        const i64 a = mapping[s[e]], b = mapping[t[e]];
        if (a >= 0 && b >= 0 && a != b) ++count[a + 1];
    }
    for (i64 v = 0; v < R; ++v) count[v + 1] += count[v];
    std::vector<i64> start(count.begin(), count.end() - 1);
    std::vector<i64> sorted(static_cast<std::size_t>(count[R]));
    for (i64 e = 0; e < n_pairs; ++e) {
        const i64 a = mapping[s[e]], b = mapping[t[e]];
        if (a >= 0 && b >= 0 && a != b) sorted[start[a]++] = e;
    }
    std::vector<double> tmp(static_cast<std::size_t>(n_links), 0.0);
    std::vector<char> seen(static_cast<std::size_t>(n_links), 0);
    std::vector<i64> used;
    for (i64 a = 0; a < R; ++a) {
        if (count[a] == count[a + 1]) continue;
        for (i64 j = count[a]; j < count[a + 1]; ++j) {
            const i64 e = sorted[j];
            const double w = vol[e];
            for_route(r, a, mapping[t[e]], [&](i64 k) {
                tmp[k] += w;
                if (!seen[k]) seen[k] = 1, used.push_back(k);
            });
        }
        for (i64 k : used) {
            link_load[k] += tmp[k];
            tmp[k] = 0.0;
            seen[k] = 0;
        }
        used.clear();
    }
}

}  // namespace taskmap
}  // namespace coalloc
