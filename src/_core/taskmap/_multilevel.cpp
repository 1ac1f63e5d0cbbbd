// pybind11 kernels of the multilevel mapper (coalloc.taskmap.multilevel): every route between
// the processors of a resource graph as one CSR (pair_routes), and the scores of candidate
// bottleneck moves (score_moves).  Slow twin in coalloc.taskmap._reference.multilevel, with
// the same signatures and floating-point operation order (the parity tests in
// tests/taskmap/test_multilevel.py require bit-identical results).

// No fused multiply-adds (a -march=native build on an FMA machine would contract a + b * c
// and round once, unlike NumPy's twins): every product is rounded before it is added.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

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
using coalloc::bind::need_writeable;

// An int64 (ints) or float64 array a kernel updates in place (need_writeable).
inline void need_own(const py::array& a, bool ints, i64 len, const char* name) {
    if (ints)
        need_writeable(a, py::dtype::of<i64>(), "int64", len, name);
    else
        need_writeable(a, py::dtype::of<double>(), "float64", len, name);
}

// Every vertex of the mapping pm (n of them) on a processor in [0, P).
inline void need_mapped(const i64* pm, i64 n, i64 P) {
    for (i64 v = 0; v < n; ++v) need(pm[v] >= 0 && pm[v] < P, "m must hold processors in [0, P)");
}

// Task t and each of its neighbours (CSR pip, pix) on a processor in [0, P): what a kernel
// that reads the mapping around t only checks.
inline void need_placed(const i64* pm, const i64* pip, const i64* pix, i64 t, i64 P) {
    need(pm[t] >= 0 && pm[t] < P, "m must hold processors in [0, P)");
    for (i64 q = pip[t]; q < pip[t + 1]; ++q)
        need(pm[pix[q]] >= 0 && pm[pix[q]] < P, "m must hold processors in [0, P)");
}

// The k candidate moves rt[i] -> rb[i] (rt grouped by task): tasks in [0, n), processors in
// [0, P), and each task with its neighbours placed (need_placed).
inline void need_moves(const i64* prt, const i64* prb, i64 k, i64 n, i64 P, const i64* pm,
                       const i64* pip, const i64* pix) {
    for (i64 i = 0; i < k; ++i) {
        need(prt[i] >= 0 && prt[i] < n, "rt must hold tasks in [0, n)");
        need(prb[i] >= 0 && prb[i] < P, "rb must hold processors in [0, P)");
        if (i > 0 && prt[i] == prt[i - 1]) continue;
        need_placed(pm, pip, pix, prt[i], P);
    }
}

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

// bisection.REST_HEAP (h64cpu): grow_fm's restart pick from a heap (true) or by a scan of
// every vertex (false, as before); the same vertex. Set by the private _rest_heap.
bool g_rest_heap = true;

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
    // (h64cpu) An empty heap restarts from the vertex outside, not done, of largest gain
    // (the first of those): a scan of all n vertices, made ~50 times a call on the 30 of
    // vs_peers (the vertices that would overshoot are marked done one by one near the
    // target, each after a scan). `rest` holds (-gain, v) of those vertices from the first
    // empty heap on, an entry pushed at every change of a gain after it (stale ones
    // dropped when they come up): its least valid entry is the scan's pick, the same vertex.
    // (A vertex whose gain changes is also pushed on `heap`, so by the next restart it is
    // inside or done: the pushes on `rest` are defensive; mutating them passes the tests.)
    const bool use_rest = g_rest_heap;
    MinHeap rest;
    bool built = !use_rest;  // (off: the scan below, as before h64cpu)
    while (seed >= 0 && got < target - tiny) {
        if (heap.empty()) {
            if (!built) {
                std::vector<Entry> all;
                for (i64 v = 0; v < n; ++v)
                    if (!inside[v] && !done[v]) all.push_back({-gain[v], v});
                rest = MinHeap(std::greater<Entry>(), std::move(all));
                built = true;
            }
            i64 s = -1;
            if (!use_rest)
                for (i64 v = 0; v < n; ++v)
                    if (!inside[v] && !done[v] && (s < 0 || gain[v] > gain[s])) s = v;
            while (use_rest && !rest.empty()) {
                const Entry e = rest.top();
                const i64 v = e.second;
                if (inside[v] || done[v] || -e.first != gain[v]) {
                    rest.pop();
                    continue;
                }
                s = v;
                break;
            }
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
                if (!done[u]) {
                    heap.push({-gain[u], u});
                    if (built && use_rest) rest.push({-gain[u], u});
                }
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



// The sums of score_moves for one candidate (task t from processor a to b): acc[e] += the
// stream weights along the routes, in the twin's order (+w along b - q for every neighbour
// q, then -w along a - q); the links touched are listed in `used` (seen[] marks them).
inline void move_deltas(const i64* pip, const i64* pix, const double* pw, const i64* prp,
                        const i64* prl, const i64* pm, i64 P, i64 t, i64 a, i64 b,
                        std::vector<double>& acc, std::vector<char>& seen,
                        std::vector<i64>& used) {
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
}

// NumPy's maximum (a NaN operand gives NaN).
inline double np_maximum(double x, double y) {
    if (std::isnan(x)) return x;
    if (std::isnan(y)) return y;
    return x >= y ? x : y;
}


using coalloc::taskmap::np_sum;  // NumPy's pairwise sum (coalloc/taskmap/npsum.hpp)

// bisection.split_point: the largest gap in the middle half of lo..hi-1, the nearest the
// middle (the first of those), as the Python code computes it.
i64 split_point_of(const double* gap, i64 lo, i64 hi) {
    const i64 k = hi - lo;
    const i64 a = lo + std::max<i64>(1, k / 4), b = lo + std::max<i64>(1, k - k / 4);
    if (b <= a) return lo + k / 2;
    const i64 end = b < hi ? b + 1 : b;  // the candidates a..end-1
    if (end <= a) return lo + k / 2;
    double top = gap[a - 1];
    for (i64 c = a + 1; c < end; ++c)
        if (gap[c - 1] > top) top = gap[c - 1];  // Python's max: the first of the largest
    top *= (1 - 1e-9);
    const double mid = static_cast<double>(lo) + static_cast<double>(k) / 2;
    i64 best = lo + k / 2;
    double best_d = std::numeric_limits<double>::infinity();
    for (i64 c = a; c < end; ++c) {
        const double d = std::fabs(static_cast<double>(c) - mid);
        if (gap[c - 1] >= top && d < best_d) best = c, best_d = d;
    }
    return best;
}

// best_move's search: NumPy's argmin of the candidates' scores (max of score_moves' up and
// the node part pnp[i]; for a link also its new occupancy, inf where its load does not
// fall), the candidates that cannot be the first minimum left unscored. (pick, score).
std::pair<i64, double> best_move_search(const i64* pip, const i64* pix, const double* pw,
                                        const i64* prp, const i64* prl, const i64* pm, i64 P,
                                        i64 E, const double* pl, const double* pbw,
                                        const i64* prt, const i64* prb, const double* pnp,
                                        i64 k, i64 link, double tiny) {
    i64 pick = -1;
    double top = 0.0;
    std::vector<double> acc(static_cast<std::size_t>(E), 0.0);
    std::vector<char> seen(static_cast<std::size_t>(E), 0);
    std::vector<i64> used;
    const double ninf = -std::numeric_limits<double>::infinity();
    const double inf = std::numeric_limits<double>::infinity();
    // the score of the twin (np.maximum of the parts; a link's own rule)
    auto score = [&](i64 i) {
        const i64 t = prt[i], a = pm[t], b = prb[i];
        move_deltas(pip, pix, pw, prp, prl, pm, P, t, a, b, acc, seen, used);
        double up = ninf;
        for (i64 e : used) {
            const double d = acc[e];
            if (d > tiny * (1 + pl[e])) {
                const double v = (pl[e] + d) / pbw[e];
                if (v > up) up = v;
            }
        }
        const double dv = link >= 0 ? acc[link] : 0.0;
        for (i64 e : used) acc[e] = 0.0, seen[e] = 0;
        used.clear();
        double s = np_maximum(up, pnp[i]);
        if (link >= 0) {
            s = np_maximum(s, (pl[link] + dv) / pbw[link]);
            if (!(dv < -tiny * (1 + pl[link]))) s = inf;
        }
        return s;
    };
    bool any_nan = false;
    for (i64 i = 0; i < k; ++i) any_nan = any_nan || std::isnan(pnp[i]);
    if (any_nan) {  // NumPy's argmin over every score (the first NaN wins)
        for (i64 i = 0; i < k; ++i) {
            const double s = score(i);
            if (pick < 0 || std::isnan(s) || s < top) pick = i, top = s;
            if (std::isnan(s)) break;
        }
    } else {
        // every score is >= its node part and never NaN: in the order of the node
        // parts, a candidate whose part is above the best score so far (or equal,
        // with a later index) cannot be the first minimum; stop at the first
        std::vector<i64> order(static_cast<std::size_t>(k));
        for (i64 i = 0; i < k; ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(),
                         [&](i64 x, i64 y) { return pnp[x] < pnp[y]; });
        for (i64 i : order) {
            if (pick >= 0 && (pnp[i] > top || (pnp[i] == top && i > pick))) {
                if (pnp[i] > top) break;
                continue;
            }
            const double s = score(i);
            if (pick < 0 || s < top || (s == top && i < pick)) pick = i, top = s;
        }
    }
    return {pick, top};
}

// CPython's set of small non-negative ints (hash(v) == v), emulated slot for slot: the
// iteration order of a Python set is the order of its table's slots, and refine breaks ties
// between moves in that order (Objects/setobject.c: linear probes of 9, then the perturbed
// step; a table of 8 slots grown to the smallest power of two above 4 * used whenever
// 5 * fill >= 3 * mask; discard leaves a dummy). The parity tests compare it with Python's
// own set on random sequences.
class PySmallIntSet {
  public:
    static constexpr i64 kEmpty = -1, kDummy = -2;
    PySmallIntSet() : table_(8, kEmpty) {}

    void clear() {
        table_.assign(8, kEmpty);
        fill_ = used_ = 0;
    }
    void add(i64 v) {
        const std::size_t mask = table_.size() - 1;
        std::size_t i = static_cast<std::size_t>(v) & mask;
        std::size_t perturb = static_cast<std::size_t>(v);
        std::size_t freeslot = SIZE_MAX;
        while (true) {
            std::size_t j = i;
            int probes = (i + kLinearProbes <= mask) ? kLinearProbes : 0;
            do {
                const i64 key = table_[j];
                if (key == kEmpty) {
                    if (freeslot != SIZE_MAX) {
                        table_[freeslot] = v;
                        ++used_;
                        return;
                    }
                    table_[j] = v;
                    ++fill_;
                    ++used_;
                    if (fill_ * 5 >= mask * 3) resize(used_ > 50000 ? used_ * 2 : used_ * 4);
                    return;
                }
                if (key == v) return;
                if (key == kDummy && freeslot == SIZE_MAX) freeslot = j;
                ++j;
            } while (probes--);
            perturb >>= kPerturbShift;
            i = (i * 5 + 1 + perturb) & mask;
        }
    }
    void discard(i64 v) {
        const std::size_t mask = table_.size() - 1;
        std::size_t i = static_cast<std::size_t>(v) & mask;
        std::size_t perturb = static_cast<std::size_t>(v);
        while (true) {
            std::size_t j = i;
            int probes = (i + kLinearProbes <= mask) ? kLinearProbes : 0;
            do {
                const i64 key = table_[j];
                if (key == kEmpty) return;
                if (key == v) {
                    table_[j] = kDummy;
                    --used_;
                    return;
                }
                ++j;
            } while (probes--);
            perturb >>= kPerturbShift;
            i = (i * 5 + 1 + perturb) & mask;
        }
    }
    template <class F>
    void for_each(F&& f) const {
        for (i64 key : table_)
            if (key >= 0) f(key);
    }
    std::size_t size() const { return used_; }

  private:
    static constexpr int kLinearProbes = 9;
    static constexpr int kPerturbShift = 5;
    std::vector<i64> table_;
    std::size_t fill_ = 0, used_ = 0;

    void resize(std::size_t minused) {
        std::size_t size = 8;
        while (size <= minused) size <<= 1;
        std::vector<i64> old(size, kEmpty);
        old.swap(table_);
        const std::size_t mask = size - 1;
        for (i64 key : old) {
            if (key < 0) continue;
            std::size_t i = static_cast<std::size_t>(key) & mask;
            std::size_t perturb = static_cast<std::size_t>(key);
            std::size_t slot = i;
            while (true) {  // set_insert_clean: the probes move the slot, not i
                slot = i;
                if (table_[slot] == kEmpty) break;
                bool done = false;
                if (i + kLinearProbes <= mask) {
                    for (int j = 0; j < kLinearProbes; ++j) {
                        ++slot;
                        if (table_[slot] == kEmpty) {
                            done = true;
                            break;
                        }
                    }
                }
                if (done) break;
                perturb >>= kPerturbShift;
                i = (i * 5 + 1 + perturb) & mask;
            }
            table_[slot] = key;
        }
        fill_ = used_;
    }
};

// ---- the sum step's tries (issue 40, h64cpu): sumrefine._sum_swaps' and _sum_ejections'
// make-check-undo of one swap or one ejection, the same additions in the same order.

// RefineState.move: +w along b - m[q] for every neighbour q, then -w along a - m[q] (the
// order of apply_move), then the processors' loads and m[t].
void move_task(const i64* pip, const i64* pix, const double* pw, const i64* prp,
               const i64* prl, i64 P, i64* pm, double* pl, double* pn, double w, i64 t, i64 b) {
    const i64 a = pm[t];
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
}

// sumrefine._fits for one value: at most the cap, or not above its value before.
inline bool fits_one(double now, double cap, double before, double tiny) {
    return now <= cap || now <= before + tiny * (1 + before);
}

// sumrefine._gains_to for one task: the route cost t saves moving to b (np.bincount's sum).
double gain_to(const i64* pip, const i64* pix, const double* pw, const double* pc, i64 P,
               const i64* pm, i64 t, i64 b) {
    double g = 0.0;
    const i64 a = pm[t];
    for (i64 q = pip[t]; q < pip[t + 1]; ++q) {
        const i64 mq = pm[pix[q]];
        g += pw[q] * (pc[a * P + mq] - pc[b * P + mq]);
    }
    return g;
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
            need_moves(prt, prb, k, n, P, pm, pip, pix);
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
                    move_deltas(pip, pix, pw, prp, prl, pm, P, t, a, b, acc, seen, used);
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
            need_own(m, true, G.n, "m");
            need_own(lload, false, R.E, "lload");
            need_own(nload, false, R.P, "nload");
            need(t >= 0 && t < G.n, "t must be a vertex in [0, n)");
            need(b >= 0 && b < R.P, "b must be a processor in [0, P)");
            i64* pm = static_cast<i64*>(m.mutable_data());
            double* pl = static_cast<double*>(lload.mutable_data());
            double* pn = static_cast<double*>(nload.mutable_data());
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            need_placed(pm, pip, pix, t, R.P);
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const i64 P = R.P;
            // +w along b - q for every neighbour q, then -w along a - q: the order of the
            // twin's np.add.at, so every link's load is summed in the same order
            move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, w, t, b);
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("lload"), py::arg("nload"),
        py::arg("w"), py::arg("t"), py::arg("b"),
        "Move task t (weight w) to processor b in place: the link loads along its streams' "
        "routes (lload), the processors' loads (nload) and m.");
    mod.def(
        "expand",
        [](Arr<i64> starts, Arr<i64> lens) {
            need(lens.ndim() == 1, "lens must be 1-D, got shape " + shape_of(lens));
            const i64 k = lens.shape(0);
            need_length(starts, k, "starts", "len(lens)");
            const i64* ps = starts.data();
            const i64* pl = lens.data();
            i64 total = 0;
            for (i64 r = 0; r < k; ++r) {
                need(pl[r] >= 0, "lens must be >= 0");
                total += pl[r];
            }
            py::array_t<i64> index(total), owner(total);
            i64* pi = index.mutable_data();
            i64* po = owner.mutable_data();
            for (i64 r = 0, o = 0; r < k; ++r)
                for (i64 j = 0; j < pl[r]; ++j, ++o) pi[o] = ps[r] + j, po[o] = r;
            return py::make_tuple(index, owner);
        },
        py::arg("starts"), py::arg("lens"),
        "Indices starts[r] + 0..lens[r]-1 run after run, and the run r of each (int64).");
    mod.def(
        "destinations",
        [](const LevelView& G, Arr<i64> m, Arr<i64> tasks, Arr<i64> light, i64 P) {
            need_length(m, G.n, "m");
            need(tasks.ndim() == 1, "tasks must be 1-D, got shape " + shape_of(tasks));
            need(light.ndim() == 1, "light must be 1-D, got shape " + shape_of(light));
            need(P >= 1, "P must be >= 1");
            const i64 k = tasks.shape(0), nl = light.shape(0);
            const i64* pt = tasks.data();
            const i64* pli = light.data();
            const i64* pm = m.data();
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            for (i64 i = 0; i < nl; ++i)
                need(pli[i] >= 0 && pli[i] < P, "light must hold processors in [0, P)");
            for (i64 i = 0; i < k; ++i) {
                need(pt[i] >= 0 && pt[i] < G.n, "tasks must hold vertices in [0, n)");
                need_placed(pm, pip, pix, pt[i], P);
            }
            std::vector<i64> rt, rb;
            PySmallIntSet dest;
            for (i64 i = 0; i < k; ++i) {
                const i64 t = pt[i], a = pm[t];
                dest.clear();
                for (i64 q = pip[t]; q < pip[t + 1]; ++q) dest.add(pm[pix[q]]);
                for (i64 j = 0; j < nl; ++j) dest.add(pli[j]);
                if (a > 0) dest.add(a - 1);
                if (a < P - 1) dest.add(a + 1);
                dest.discard(a);
                dest.for_each([&](i64 b) {
                    rt.push_back(t);
                    rb.push_back(b);
                });
            }
            return py::make_tuple(coalloc::bind::to_array(rt), coalloc::bind::to_array(rb));
        },
        py::arg("level"), py::arg("m"), py::arg("tasks"), py::arg("light"), py::arg("P"),
        "The candidate moves of refine: each task to its neighbours' processors, the light "
        "ones and its two adjacent ones, in the order Python's set of those ints iterates "
        "(built in that order, its own processor discarded); (tasks, processors) as int64.");
    mod.def(
        "best_move",
        [](const LevelView& G, const PairRoutesView& R, Arr<i64> m, Arr<double> lload,
           Arr<double> bw, Arr<i64> rt, Arr<i64> rb, Arr<double> node_part, i64 link,
           double tiny) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_length(m, n, "m");
            need_length(lload, E, "lload", "n_links");
            need_length(bw, E, "bw", "n_links");
            need(rt.ndim() == 1, "rt must be 1-D, got shape " + shape_of(rt));
            const i64 k = rt.shape(0);
            need(k >= 1, "rt must not be empty");
            need_length(rb, k, "rb", "len(rt)");
            need_length(node_part, k, "node_part", "len(rt)");
            need(link >= -1 && link < E, "link must be -1 or in [0, n_links)");
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const i64* pm = m.data();
            const i64* prt = rt.data();
            const i64* prb = rb.data();
            const double* pnp = node_part.data();
            need_moves(prt, prb, k, n, P, pm, pip, pix);
            const double* pl = lload.data();
            const double* pbw = bw.data();
            i64 pick = -1;
            double top = 0.0;
            {
                py::gil_scoped_release release;
                const auto found = best_move_search(pip, pix, pw, prp, prl, pm, P, E, pl, pbw,
                                                    prt, prb, pnp, k, link, tiny);
                pick = found.first;
                top = found.second;
            }
            return py::make_tuple(pick, top);
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("lload"), py::arg("bw"),
        py::arg("rt"), py::arg("rb"), py::arg("node_part"), py::arg("link"), py::arg("tiny"),
        "refine's choice among the moves rt[i] -> rb[i]: (i, score) of NumPy's argmin of the "
        "scores max(score_moves' up, node_part[i]) (for a link: also its new occupancy; inf "
        "where its load does not fall), the candidates that cannot win left unscored.");
    mod.def(
        "loads",
        [](const LevelView& G, const PairRoutesView& R, Arr<i64> m, Arr<double> vw) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_length(m, n, "m");
            need_length(vw, n, "vw");
            const i64* pm = m.data();
            need_mapped(pm, n, P);
            py::array_t<double> nload(P), lload(E);
            double* pn = nload.mutable_data();
            double* pl = lload.mutable_data();
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const double* pv = vw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            {
                py::gil_scoped_release release;
                std::fill(pn, pn + P, 0.0);
                std::fill(pl, pl + E, 0.0);
                for (i64 v = 0; v < n; ++v) pn[pm[v]] += pv[v];
                for (i64 s = 0; s < n; ++s)
                    for (i64 q = pip[s]; q < pip[s + 1]; ++q) {
                        const i64 u = pix[q];
                        if (s >= u || pm[s] == pm[u]) continue;
                        const i64 pair = pm[s] * P + pm[u];
                        for (i64 j = prp[pair]; j < prp[pair + 1]; ++j) pl[prl[j]] += pw[q];
                    }
            }
            return py::make_tuple(nload, lload);
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("vw"),
        "The processors' loads (vw summed by processor) and the links' (each pair s < u on "
        "different processors: its weight on every link of the route m[s] -> m[u]), summed in "
        "vertex then entry order.");
    mod.def(
        "cut_pass",
        [](const LevelView& G, py::array m, Arr<double> nload, Arr<double> vw, Arr<double> cost,
           Arr<double> ub, i64 chunk, py::object poll) {
            const i64 n = G.n;
            need_own(m, true, n, "m");
            need(nload.ndim() == 1, "nload must be 1-D, got shape " + shape_of(nload));
            const i64 P = nload.shape(0);
            need_length(vw, n, "vw");
            need_length(ub, P, "ub", "len(nload)");
            need(cost.ndim() == 2 && cost.shape(0) == P && cost.shape(1) == P,
                 "cost must have shape (P, P), got " + shape_of(cost));
            i64* pm = static_cast<i64*>(m.mutable_data());
            need_mapped(pm, n, P);
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const double* pc = cost.data();
            const double* pv = vw.data();
            const double* pu = ub.data();
            py::array_t<double> out(P);
            double* nl = out.mutable_data();
            std::copy(nload.data(), nload.data() + P, nl);
            i64 applied = -1;
            {
                // (the GIL held: `poll`, Python's, is called between the chunks)
                // the candidates (t, b), b the processor of a neighbour of t on another one,
                // in increasing t * P + b (np.unique of the keys)
                std::vector<i64> ct, cb, dests;
                for (i64 t = 0; t < n; ++t) {
                    dests.clear();
                    for (i64 q = pip[t]; q < pip[t + 1]; ++q)
                        if (pm[pix[q]] != pm[t]) dests.push_back(pm[pix[q]]);
                    std::sort(dests.begin(), dests.end());
                    dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
                    for (i64 b : dests) ct.push_back(t), cb.push_back(b);
                }
                const std::size_t k = ct.size();
                if (k > 0) {
                    // the gains, each summed in CSR order from 0 (np.bincount's additions)
                    std::vector<double> gain(k, 0.0);
                    // chunks of about `chunk` entries, as cut_refine's (np.searchsorted of
                    // its multiples in the candidates' running entry counts), poll before each
                    std::vector<i64> ends(k);
                    for (std::size_t i = 0; i < k; ++i)
                        ends[i] = (i ? ends[i - 1] : 0) + pip[ct[i] + 1] - pip[ct[i]];
                    std::vector<i64> bounds{0, static_cast<i64>(k)};
                    if (chunk > 0 && ends[k - 1] > chunk)
                        for (i64 v = chunk; v < ends[k - 1]; v += chunk)
                            bounds.push_back(std::upper_bound(ends.begin(), ends.end(), v) -
                                             ends.begin());
                    std::sort(bounds.begin(), bounds.end());
                    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
                    std::size_t next = 0;  // the next chunk's first candidate index in bounds
                    double top = 0.0;
                    bool first = true;
                    for (std::size_t i = 0; i < k; ++i) {
                        if (next + 1 < bounds.size() && static_cast<i64>(i) == bounds[next]) {
                            if (!poll.is_none()) poll();
                            ++next;
                        }
                        const i64 t = ct[i], a = pm[t], d = cb[i];
                        double g = 0.0;
                        for (i64 q = pip[t]; q < pip[t + 1]; ++q) {
                            const i64 mq = pm[pix[q]];
                            g += pw[q] * (pc[a * P + mq] - pc[d * P + mq]);
                        }
                        gain[i] = g;
                        const double ag = std::fabs(g);  // np.abs(gain).max(): NaN wins
                        if (first || std::isnan(ag) || (!std::isnan(top) && ag > top)) top = ag;
                        first = false;
                    }
                    const double thr = 1e-12 * (1 + top);
                    std::vector<i64> order;
                    for (std::size_t i = 0; i < k; ++i)
                        if (gain[i] > thr) order.push_back(static_cast<i64>(i));
                    if (!order.empty()) {
                        if (!poll.is_none()) poll();  // (after the scoring, as cut_refine)
                        std::stable_sort(order.begin(), order.end(),
                                         [&](i64 x, i64 y) { return -gain[x] < -gain[y]; });
                        std::vector<double> limit(static_cast<std::size_t>(P));
                        for (i64 b = 0; b < P; ++b) limit[b] = np_maximum(pu[b], nl[b]);
                        std::vector<char> near(static_cast<std::size_t>(n), 0);
                        applied = 0;
                        for (i64 i : order) {
                            const i64 t = ct[i], b = cb[i];
                            if (near[t]) continue;
                            const double w = pv[t];
                            if (nl[b] + w > limit[b] + 1e-12) continue;
                            nl[pm[t]] -= w;
                            nl[b] += w;
                            pm[t] = b;
                            near[t] = 1;
                            for (i64 q = pip[t]; q < pip[t + 1]; ++q) near[pix[q]] = 1;
                            ++applied;
                        }
                    }
                }
            }
            if (applied < 0) return py::tuple(py::make_tuple(applied, py::none()));
            return py::tuple(py::make_tuple(applied, out));
        },
        py::arg("level"), py::arg("m"), py::arg("nload"), py::arg("vw"), py::arg("cost"),
        py::arg("ub"), py::arg("chunk"), py::arg("poll"),
        "One pass of cut_refine (m changed in place): the boundary moves (t, b) of positive "
        "route-cost gain, most first, each taken when neither t nor a neighbour moved in the "
        "pass and b's load stays within max(ub, its load at the start) + 1e-12; returns "
        "(moves made, the new loads), or (-1, None) when no move gains (nothing changed). `poll` (a callable or None) is "
        "called before each chunk of about `chunk` entries of the scoring (0: one chunk) and "
        "after the scoring when a move gains.");
    mod.def(
        "cross_gains",
        [](const LevelView& G, Arr<i64> m, Arr<double> cost, bool positive, double tiny) {
            const i64 n = G.n;
            need_length(m, n, "m");
            need(cost.ndim() == 2 && cost.shape(0) == cost.shape(1),
                 "cost must be square, got shape " + shape_of(cost));
            const i64 P = cost.shape(0);
            const i64* pm = m.data();
            need_mapped(pm, n, P);
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const double* pc = cost.data();
            std::vector<i64> ct, cb, dests, order;
            std::vector<double> gain;
            {
                py::gil_scoped_release release;
                for (i64 t = 0; t < n; ++t) {  // np.unique of the keys t * P + b
                    dests.clear();
                    for (i64 q = pip[t]; q < pip[t + 1]; ++q)
                        if (pm[pix[q]] != pm[t]) dests.push_back(pm[pix[q]]);
                    std::sort(dests.begin(), dests.end());
                    dests.erase(std::unique(dests.begin(), dests.end()), dests.end());
                    for (i64 b : dests) ct.push_back(t), cb.push_back(b);
                }
                const std::size_t k = ct.size();
                gain.assign(k, 0.0);
                double top = 0.0;
                for (std::size_t i = 0; i < k; ++i) {  // np.bincount's additions, CSR order
                    const i64 t = ct[i], a = pm[t], d = cb[i];
                    double g = 0.0;
                    for (i64 q = pip[t]; q < pip[t + 1]; ++q) {
                        const i64 mq = pm[pix[q]];
                        g += pw[q] * (pc[a * P + mq] - pc[d * P + mq]);
                    }
                    gain[i] = g;
                    const double ag = std::fabs(g);  // np.abs(gain).max(): NaN wins
                    if (i == 0 || std::isnan(ag) || (!std::isnan(top) && ag > top)) top = ag;
                }
                const double thr = tiny * (1 + top);
                for (std::size_t i = 0; i < k; ++i)
                    if (!positive || gain[i] > thr) order.push_back(static_cast<i64>(i));
                std::stable_sort(order.begin(), order.end(), [&](i64 x, i64 y) {
                    const double gx = -gain[x], gy = -gain[y];  // NumPy's order: NaN last
                    return gx < gy || (std::isnan(gy) && !std::isnan(gx));
                });
            }
            const std::size_t r = order.size();
            py::array_t<i64> ot(r), ob(r);
            py::array_t<double> og(r);
            i64* pt = ot.mutable_data();
            i64* pb = ob.mutable_data();
            double* pg = og.mutable_data();
            for (std::size_t j = 0; j < r; ++j)
                pt[j] = ct[order[j]], pb[j] = cb[order[j]], pg[j] = gain[order[j]];
            return py::make_tuple(ot, ob, og);
        },
        py::arg("level"), py::arg("m"), py::arg("cost"), py::arg("positive"), py::arg("tiny"),
        "The moves of boundary tasks to a neighbour's processor, (tasks, processors, gains "
        "in route cost), most gain first (stable over increasing t * P + b); positive: only "
        "the gains above tiny (1 + the largest |gain|).");
    mod.def(
        "bottleneck_tasks",
        [](const LevelView& G, Arr<i64> m, Arr<double> vw, Arr<i64> lptr, Arr<i64> lpairs,
           py::array pair_mark, bool link, i64 idx, i64 n_cand) {
            const i64 n = G.n;
            need_length(m, n, "m");
            need_length(vw, n, "vw");
            need(n_cand >= 0, "n_cand must be >= 0");
            need(pair_mark.dtype().is(py::dtype::of<bool>()) && pair_mark.ndim() == 1 &&
                     pair_mark.writeable() && (pair_mark.flags() & py::array::c_style),
                 "pair_mark must be a writeable contiguous 1-D bool array");
            const i64 PP = pair_mark.shape(0);
            const i64 P = static_cast<i64>(std::llround(std::sqrt(static_cast<double>(PP))));
            need(P * P == PP && P >= 1, "pair_mark must have P * P entries");
            const i64* pm = m.data();
            need_mapped(pm, n, P);
            need(lptr.ndim() == 1 && lpairs.ndim() == 1, "lptr and lpairs must be 1-D");
            const i64 E = lptr.shape(0) - 1;
            need(link ? (idx >= 0 && idx < E) : (idx >= 0 && idx < P),
                 "idx must be a link (link) or a processor");
            const i64* plp = lptr.data();
            const i64* plq = lpairs.data();
            if (link) {
                need(plp[idx] >= 0 && plp[idx] <= plp[idx + 1] && plp[idx + 1] <= lpairs.shape(0),
                     "lptr must index lpairs");
                for (i64 j = plp[idx]; j < plp[idx + 1]; ++j)
                    need(plq[j] >= 0 && plq[j] < PP, "lpairs must hold pairs in [0, P * P)");
            }
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const double* pv = vw.data();
            auto* mark = static_cast<std::uint8_t*>(pair_mark.mutable_data());
            std::vector<i64> tasks;
            std::vector<double> key;  // the score or volume of each task (sorted on -key)
            {
                py::gil_scoped_release release;
                if (!link) {
                    for (i64 v = 0; v < n; ++v)
                        if (pm[v] == idx && pv[v] > 0) tasks.push_back(v);
                    if (static_cast<i64>(tasks.size()) > n_cand) {
                        key.resize(tasks.size());
                        for (std::size_t j = 0; j < tasks.size(); ++j) {
                            const i64 v = tasks[j];
                            double d = 0.0;  // np.add.at: the entries in order, from 0
                            for (i64 q = pip[v]; q < pip[v + 1]; ++q)
                                if (pm[pix[q]] != idx) d += pw[q];
                            key[j] = d - 1e-9 * pv[v];
                        }
                    }
                } else {
                    std::vector<char> source(static_cast<std::size_t>(P), 0);
                    for (i64 j = plp[idx]; j < plp[idx + 1]; ++j)
                        mark[plq[j]] = 1, source[plq[j] / P] = 1;
                    for (i64 v = 0; v < n; ++v) {
                        if (!source[pm[v]]) continue;  // no route from m[v] takes the link
                        double vol = 0.0;  // np.bincount: the entries in order, from 0
                        bool any = false;
                        for (i64 q = pip[v]; q < pip[v + 1]; ++q)
                            if (mark[pm[v] * P + pm[pix[q]]]) vol += pw[q], any = true;
                        if (any && vol != 0.0) tasks.push_back(v), key.push_back(vol);
                    }
                    for (i64 j = plp[idx]; j < plp[idx + 1]; ++j) mark[plq[j]] = 0;
                    if (static_cast<i64>(tasks.size()) <= n_cand) key.clear();
                }
                if (!key.empty()) {  // np.argsort(-key, kind="stable")[:n_cand] (NaN last)
                    std::vector<i64> order(tasks.size());
                    for (std::size_t j = 0; j < order.size(); ++j) order[j] = static_cast<i64>(j);
                    std::stable_sort(order.begin(), order.end(), [&](i64 x, i64 y) {
                        const double kx = -key[x], ky = -key[y];
                        return kx < ky || (std::isnan(ky) && !std::isnan(kx));
                    });
                    std::vector<i64> kept(static_cast<std::size_t>(n_cand));
                    for (i64 j = 0; j < n_cand; ++j) kept[j] = tasks[order[j]];
                    tasks.swap(kept);
                }
            }
            return coalloc::bind::to_array(tasks);
        },
        py::arg("level"), py::arg("m"), py::arg("vw"), py::arg("lptr"), py::arg("lpairs"),
        py::arg("pair_mark"), py::arg("link"), py::arg("idx"), py::arg("n_cand"),
        "The tasks refine tries to move off the bottleneck idx, at most n_cand: a "
        "processor's tasks of positive weight, most volume to other processors first (less "
        "1e-9 of the weight); a link's tasks that send across it (the pairs lpairs[lptr[idx]:"
        "lptr[idx + 1]], marked in the zeroed scratch pair_mark and unmarked), most volume "
        "first; stable.");
    mod.def(
        "bisect_block",
        [](const LevelView& G, Arr<i64> verts, i64 lo, i64 hi, Arr<double> gap,
           Arr<double> sh, Arr<i64> subset, Arr<double> vw, py::array m, int passes) {
            const i64 n = G.n;
            need(verts.ndim() == 1, "verts must be 1-D, got shape " + shape_of(verts));
            need(subset.ndim() == 1, "subset must be 1-D, got shape " + shape_of(subset));
            const i64 S = subset.shape(0);
            need_length(sh, S, "sh", "len(subset)");
            need(gap.ndim() == 1 && gap.shape(0) >= S - 1, "gap must have len(subset) - 1 entries");
            need(0 <= lo && lo < hi && hi <= S, "need 0 <= lo < hi <= len(subset)");
            need_length(vw, n, "vw");
            need(passes >= 0, "passes must be >= 0");
            need_own(m, true, n, "m");
            const i64 k0 = verts.shape(0);
            const i64* pv0 = verts.data();
            std::vector<char> seen(static_cast<std::size_t>(n), 0);
            for (i64 i = 0; i < k0; ++i) {
                need(pv0[i] >= 0 && pv0[i] < n && !seen[pv0[i]],
                     "verts must hold distinct vertices in [0, n)");
                seen[pv0[i]] = 1;
            }
            i64* pm = static_cast<i64*>(m.mutable_data());
            const double* pg = gap.data();
            const double* psh = sh.data();
            const i64* psub = subset.data();
            const double* pw = vw.data();
            {
                py::gil_scoped_release release;
                struct Block {
                    std::vector<i64> verts;
                    i64 lo, hi;
                };
                std::vector<Block> stack;
                stack.push_back({std::vector<i64>(pv0, pv0 + k0), lo, hi});
                std::vector<double> wloc;
                std::vector<std::uint8_t> inside;
                while (!stack.empty()) {
                    Block blk = std::move(stack.back());
                    stack.pop_back();
                    const std::vector<i64>& vs = blk.verts;
                    const i64 k = static_cast<i64>(vs.size()), a = blk.lo, b = blk.hi;
                    if (b - a == 1 || k == 0) {
                        for (i64 v : vs) pm[v] = psub[a];
                        continue;
                    }
                    if (k == 1) {  // np.argmax of sh[a:b]: the first of the largest
                        i64 arg = a;
                        if (!std::isnan(psh[a]))
                            for (i64 j = a + 1; j < b; ++j) {
                                if (std::isnan(psh[j])) {
                                    arg = j;
                                    break;
                                }
                                if (psh[j] > psh[arg]) arg = j;
                            }
                        pm[vs[0]] = psub[arg];
                        continue;
                    }
                    const i64 sp = split_point_of(pg, a, b);
                    const double left_cap = np_sum(psh + a, sp - a);
                    const double total_cap = np_sum(psh + a, b - a);
                    wloc.resize(static_cast<std::size_t>(k));
                    for (i64 i = 0; i < k; ++i) wloc[i] = pw[vs[i]];
                    const double target = np_sum(wloc.data(), k) * left_cap / total_cap;
                    // grow's balance: max(wloc.max(), 0.02 * wloc.sum()), Python's max
                    double wmax = wloc[0];
                    for (i64 i = 1; i < k; ++i)
                        if (wloc[i] > wmax || std::isnan(wloc[i])) {
                            wmax = wloc[i];
                            if (std::isnan(wmax)) break;
                        }
                    const double frac = 0.02 * np_sum(wloc.data(), k);
                    const double tol = frac > wmax ? frac : wmax;
                    inside.assign(static_cast<std::size_t>(k), 0);
                    bisect_small_kernel(G.ip.data(), G.ix.data(), G.iw.data(), n, vs.data(), k,
                                        wloc.data(), target, tol, passes, inside.data());
                    Block in{{}, a, sp}, out{{}, sp, b};
                    for (i64 i = 0; i < k; ++i) (inside[i] ? in : out).verts.push_back(vs[i]);
                    stack.push_back(std::move(out));
                    stack.push_back(std::move(in));
                }
            }
        },
        py::arg("level"), py::arg("verts"), py::arg("lo"), py::arg("hi"), py::arg("gap"),
        py::arg("sh"), py::arg("subset"), py::arg("vw"), py::arg("m"), py::arg("passes"),
        "bisect_map's recursion on the block lo..hi-1 of subset where every split is a fast "
        "one (bisect_small with grow's balance, the split_point, NumPy's sums): m[v] for the "
        "vertices verts, in place.");
    mod.def(
        "link_pick",
        [](const LevelView& G, const PairRoutesView& R, Arr<i64> m, Arr<double> lload,
           Arr<double> bw, Arr<i64> rt, Arr<i64> rb, i64 link, double tiny, Arr<bool> over,
           double thr, Arr<i64> lptr, Arr<i64> lpairs) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_length(m, n, "m");
            need_length(lload, E, "lload", "n_links");
            need_length(bw, E, "bw", "n_links");
            need(rt.ndim() == 1, "rt must be 1-D, got shape " + shape_of(rt));
            const i64 k = rt.shape(0);
            need_length(rb, k, "rb", "len(rt)");
            need_length(over, k, "over", "len(rt)");
            need(link >= 0 && link < E, "link must be in [0, n_links)");
            need_length(lptr, E + 1, "lptr", "n_links + 1");
            const i64* plp = lptr.data();
            const i64* plq = lpairs.data();
            need(lpairs.ndim() == 1 && plp[link] >= 0 && plp[link] <= plp[link + 1] &&
                     plp[link + 1] <= lpairs.shape(0),
                 "lptr must index lpairs");
            for (i64 j = plp[link]; j < plp[link + 1]; ++j)
                need(plq[j] >= 0 && plq[j] < P * P, "lpairs must hold pairs in [0, P * P)");
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const i64* pm = m.data();
            const i64* prt = rt.data();
            const i64* prb = rb.data();
            const bool* pov = over.data();
            need_moves(prt, prb, k, n, P, pm, pip, pix);
            const double* pl = lload.data();
            const double* pbw = bw.data();
            i64 pick = -1;
            {
                py::gil_scoped_release release;
                // how many times the route of each pair takes `link` (a thread's scratch
                // table of P * P counts, zeroed again before the call returns)
                thread_local std::vector<std::uint8_t> times_of;
                if (static_cast<i64>(times_of.size()) < P * P)
                    times_of.assign(static_cast<std::size_t>(P * P), 0);
                struct Zeroed {  // the table zeroed again however the block is left
                    std::vector<std::uint8_t>& table;
                    const i64 *first, *last;
                    ~Zeroed() {
                        for (const i64* q = first; q < last; ++q) table[*q] = 0;
                    }
                } zeroed{times_of, plq + plp[link], plq + plp[link + 1]};
                for (i64 j = plp[link]; j < plp[link + 1]; ++j) ++times_of[plq[j]];
                auto times = [&](i64 pair) { return static_cast<int>(times_of[pair]); };
                // dv: the change of link's load, its additions alone in score_moves' order
                std::vector<double> dv(static_cast<std::size_t>(k));
                for (i64 i = 0; i < k; ++i) {
                    const i64 t = prt[i], a = pm[t], b = prb[i];
                    double d = 0.0;
                    for (int pass = 0; pass < 2; ++pass) {
                        const i64 from = pass == 0 ? b : a;
                        for (i64 q = pip[t]; q < pip[t + 1]; ++q) {
                            const int c = times(from * P + pm[pix[q]]);
                            const double w = pass == 0 ? pw[q] : -pw[q];
                            for (int r = 0; r < c; ++r) d += w;
                        }
                    }
                    dv[i] = d;
                }
                // np.lexsort((dv, over)): over first (False first), then dv (NaN last), stable
                std::vector<i64> order(static_cast<std::size_t>(k));
                for (i64 i = 0; i < k; ++i) order[i] = i;
                std::stable_sort(order.begin(), order.end(), [&](i64 x, i64 y) {
                    if (pov[x] != pov[y]) return !pov[x];
                    return dv[x] < dv[y] || (std::isnan(dv[y]) && !std::isnan(dv[x]));
                });
                // the first in that order whose largest rising link stays below thr
                std::vector<double> acc(static_cast<std::size_t>(E), 0.0);
                std::vector<char> seen(static_cast<std::size_t>(E), 0);
                std::vector<i64> used;
                for (i64 i : order) {
                    const i64 t = prt[i];
                    move_deltas(pip, pix, pw, prp, prl, pm, P, t, pm[t], prb[i], acc, seen, used);
                    double up = -std::numeric_limits<double>::infinity();
                    for (i64 e : used) {
                        const double d = acc[e];
                        if (d > tiny * (1 + pl[e])) {
                            const double v = (pl[e] + d) / pbw[e];
                            if (v > up) up = v;
                        }
                    }
                    for (i64 e : used) acc[e] = 0.0, seen[e] = 0;
                    used.clear();
                    if (up < thr) {
                        pick = i;
                        break;
                    }
                }
            }
            return pick;
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("lload"), py::arg("bw"),
        py::arg("rt"), py::arg("rb"), py::arg("link"), py::arg("tiny"), py::arg("over"),
        py::arg("thr"), py::arg("lptr"), py::arg("lpairs"),
        "link_swap_refine's next move among rt[i] -> rb[i]: of those whose score_moves' up "
        "is below thr, the first by (over, the change of link's load, i); -1 for none. The "
        "changes of link's load come from the pairs whose route takes it (lpairs[lptr[link]:"
        "lptr[link + 1]]); only the candidates before the pick are scored on every link.");
    mod.def(
        "pick_move",
        [](const LevelView& G, const PairRoutesView& R, Arr<i64> m, Arr<double> nload,
           Arr<double> lload, Arr<double> cap, Arr<double> bw, Arr<double> vw, Arr<i64> rt,
           Arr<i64> rb, i64 link, i64 idx, double limit, double tiny) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_length(m, n, "m");
            need_length(vw, n, "vw");
            need_length(nload, P, "nload", "P");
            need_length(cap, P, "cap", "P");
            need_length(lload, E, "lload", "n_links");
            need_length(bw, E, "bw", "n_links");
            need(rt.ndim() == 1, "rt must be 1-D, got shape " + shape_of(rt));
            const i64 k = rt.shape(0);
            need_length(rb, k, "rb", "len(rt)");
            need(link >= -1 && link < E, "link must be -1 or in [0, n_links)");
            need(link >= 0 || (idx >= 0 && idx < P), "idx must be a processor when link = -1");
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const i64* pm = m.data();
            const i64* prt = rt.data();
            const i64* prb = rb.data();
            need_moves(prt, prb, k, n, P, pm, pip, pix);
            const double* pn = nload.data();
            const double* pc = cap.data();
            const double* pv = vw.data();
            i64 best = -1;
            double top = 0.0;
            {
                py::gil_scoped_release release;
                // the processors' part of each score and the moves it leaves (refine's NumPy)
                std::vector<i64> sel, st, sb;
                std::vector<double> part;
                for (i64 i = 0; i < k; ++i) {
                    const i64 t = prt[i], a = pm[t], b = prb[i];
                    const double w = pv[t];
                    double np_ = np_maximum((pn[b] + w) / pc[b], (pn[a] - w) / pc[a]);
                    bool live;
                    if (link < 0) {
                        np_ = np_maximum(np_, (pn[idx] - w) / pc[idx]);
                        live = np_ < limit && w > 0;
                    } else {
                        live = np_ < limit;
                    }
                    if (live) sel.push_back(i), st.push_back(t), sb.push_back(b), part.push_back(np_);
                }
                if (!sel.empty()) {
                    const auto found = best_move_search(
                        pip, pix, pw, R.rptr.data(), R.rlink.data(), pm, P, E, lload.data(),
                        bw.data(), st.data(), sb.data(), part.data(),
                        static_cast<i64>(sel.size()), link, tiny);
                    best = sel[found.first];
                    top = found.second;
                }
            }
            return py::make_tuple(best, top);
        },
        py::arg("level"), py::arg("routes"), py::arg("m"), py::arg("nload"), py::arg("lload"),
        py::arg("cap"), py::arg("bw"), py::arg("vw"), py::arg("rt"), py::arg("rb"),
        py::arg("link"), py::arg("idx"), py::arg("limit"), py::arg("tiny"),
        "refine's move off the bottleneck (processor idx when link = -1, else that link) "
        "among rt[i] -> rb[i]: the processors' part of each score, the moves it keeps below "
        "limit (of positive weight off a processor), and best_move's pick among them; (i, "
        "score), (-1, 0.0) when none is kept.");
    mod.def(
        "swap_table",
        [](const LevelView& G, Arr<i64> m, Arr<double> cost, Arr<i64> t, Arr<i64> b) {
            const i64 n = G.n;
            need_length(m, n, "m");
            need(cost.ndim() == 2 && cost.shape(0) == cost.shape(1),
                 "cost must be square, got shape " + shape_of(cost));
            const i64 P = cost.shape(0);
            need(t.ndim() == 1, "t must be 1-D, got shape " + shape_of(t));
            const i64 k = t.shape(0);
            need_length(b, k, "b", "len(t)");
            const i64* pm = m.data();
            need_mapped(pm, n, P);
            const i64* pt = t.data();
            const i64* pb = b.data();
            for (i64 i = 0; i < k; ++i)
                need(pt[i] >= 0 && pt[i] < n && pb[i] >= 0 && pb[i] < P,
                     "t must hold tasks and b processors");
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const double* pc = cost.data();
            py::array_t<i64> pair_of(k);
            i64* ppo = pair_of.mutable_data();
            std::vector<i64> pairs, offsets{0}, tasks;
            std::vector<double> gains, largest;
            {
                py::gil_scoped_release release;
                // np.unique(b * P + m[t], return_inverse=True)
                std::vector<i64> key(static_cast<std::size_t>(k));
                for (i64 i = 0; i < k; ++i) key[i] = pb[i] * P + pm[pt[i]];
                pairs = key;
                std::sort(pairs.begin(), pairs.end());
                pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
                for (i64 i = 0; i < k; ++i)
                    ppo[i] = std::lower_bound(pairs.begin(), pairs.end(), key[i]) - pairs.begin();
                // the tasks of each processor in increasing order (a stable sort of m)
                std::vector<i64> count(static_cast<std::size_t>(P) + 1, 0), by(n);
                for (i64 v = 0; v < n; ++v) ++count[pm[v] + 1];
                for (i64 q = 0; q < P; ++q) count[q + 1] += count[q];
                {
                    std::vector<i64> fill(count.begin(), count.end() - 1);
                    for (i64 v = 0; v < n; ++v) by[fill[pm[v]]++] = v;
                }
                for (i64 pr : pairs) {
                    const i64 pbj = pr / P, paj = pr % P;
                    const std::size_t first = tasks.size();
                    for (i64 j = count[pbj]; j < count[pbj + 1]; ++j) {
                        const i64 u = by[j];
                        double g = 0.0;  // np.bincount: the entries in order, from 0
                        for (i64 q = pip[u]; q < pip[u + 1]; ++q) {
                            const i64 mq = pm[pix[q]];
                            g += pw[q] * (pc[pm[u] * P + mq] - pc[paj * P + mq]);
                        }
                        tasks.push_back(u);
                        gains.push_back(g);
                    }
                    offsets.push_back(static_cast<i64>(tasks.size()));
                    double top = -std::numeric_limits<double>::infinity();
                    if (tasks.size() > first) {  // np.maximum.reduceat over the pair's tasks
                        top = gains[first];
                        for (std::size_t j = first + 1; j < tasks.size(); ++j)
                            top = np_maximum(top, gains[j]);
                    }
                    largest.push_back(top);
                }
            }
            // (NumPy's bincount of no entries is int64 zeros, weights or not: the twin's)
            bool entries = false;
            for (i64 u : tasks) entries = entries || pip[u + 1] > pip[u];
            py::object g = py::object(coalloc::bind::to_array(gains));
            if (!entries) {
                py::array_t<i64> zeros(static_cast<i64>(tasks.size()));
                std::fill(zeros.mutable_data(), zeros.mutable_data() + tasks.size(), i64{0});
                g = zeros;
            }
            return py::make_tuple(pair_of, coalloc::bind::to_array(offsets),
                                  coalloc::bind::to_array(tasks), g,
                                  coalloc::bind::to_array(largest));
        },
        py::arg("level"), py::arg("m"), py::arg("cost"), py::arg("t"), py::arg("b"),
        "sumrefine._swap_table for the moves t[i] -> b[i]: (pair of each move among the "
        "sorted distinct (b, m[t]), offsets, the tasks of each pair's b in increasing order, "
        "the route cost each saves moving alone to the pair's m[t], the largest of each "
        "pair's (-inf: none)).");
    mod.def(
        "eject_screen",
        [](Arr<i64> m, Arr<double> vw, Arr<double> nload, Arr<double> cap, Arr<bool> touched,
           Arr<bool> near, Arr<i64> t, Arr<i64> b, Arr<double> g_t, Arr<i64> et, Arr<i64> ec,
           Arr<double> eg, double limit, i64 tries) {
            need(m.ndim() == 1, "m must be 1-D, got shape " + shape_of(m));
            const i64 n = m.shape(0);
            need_length(vw, n, "vw", "len(m)");
            need_length(touched, n, "touched", "len(m)");
            need_length(near, n, "near", "len(m)");
            need(nload.ndim() == 1, "nload must be 1-D, got shape " + shape_of(nload));
            const i64 P = nload.shape(0);
            need_length(cap, P, "cap", "len(nload)");
            need(t.ndim() == 1, "t must be 1-D, got shape " + shape_of(t));
            const i64 k = t.shape(0);
            need_length(b, k, "b", "len(t)");
            need_length(g_t, k, "g_t", "len(t)");
            need(et.ndim() == 1, "et must be 1-D, got shape " + shape_of(et));
            const i64 r = et.shape(0);
            need_length(ec, r, "ec", "len(et)");
            need_length(eg, r, "eg", "len(et)");
            const i64* pm = m.data();
            const i64* pt = t.data();
            const i64* pb = b.data();
            const i64* pet = et.data();
            const i64* pec = ec.data();
            need_mapped(pm, n, P);
            for (i64 i = 0; i < k; ++i)
                need(pt[i] >= 0 && pt[i] < n && pb[i] >= 0 && pb[i] < P,
                     "t must hold tasks and b processors");
            for (i64 j = 0; j < r; ++j)
                need(pet[j] >= 0 && pet[j] < n && pec[j] >= 0 && pec[j] < P,
                     "et must hold tasks and ec processors");
            const double* pv = vw.data();
            const double* pn = nload.data();
            const double* pc = cap.data();
            const bool* pto = touched.data();
            const bool* pne = near.data();
            const double* pg = g_t.data();
            const double* peg = eg.data();
            py::array_t<bool> out(k);
            auto* po = reinterpret_cast<std::uint8_t*>(out.mutable_data());
            {
                py::gil_scoped_release release;
                // each: the ejection's own filters that do not depend on the move
                std::vector<char> each(static_cast<std::size_t>(r));
                for (i64 j = 0; j < r; ++j) {
                    const i64 v = pet[j], c = pec[j];
                    each[j] = !pto[v] && pn[c] + pv[v] <= limit * pc[c];
                }
                for (i64 i = 0; i < k; ++i) {
                    const i64 tt = pt[i], bb = pb[i], a = pm[tt];
                    const double room = pn[bb] + pv[tt] - limit * pc[bb];
                    const double mg = -pg[i];
                    bool free = false;
                    i64 found = 0;  // the first `tries` moves that pass (np.cumsum <= tries)
                    for (i64 j = 0; j < r && found < tries; ++j) {
                        const i64 v = pet[j];
                        if (!(pm[v] == bb && pec[j] != a && pv[v] >= room && each[j] &&
                              peg[j] > mg))
                            continue;
                        ++found;
                        if (v != tt && !pne[v]) {
                            free = true;
                            break;
                        }
                    }
                    po[i] = (room > 0 && free) ? 1 : 0;
                }
            }
            return out;
        },
        py::arg("m"), py::arg("vw"), py::arg("nload"), py::arg("cap"), py::arg("touched"),
        py::arg("near"), py::arg("t"), py::arg("b"), py::arg("g_t"), py::arg("et"),
        py::arg("ec"), py::arg("eg"), py::arg("limit"), py::arg("tries"),
        "sumrefine._eject_screen for the moves t[i] -> b[i] (gains g_t): whether b's compute "
        "blocks the move (room > 0) and, among the first `tries` boundary moves (et, ec, eg) "
        "of tasks of b that pass the ejection's filters, one is of a task other than t not "
        "near a move.");
    mod.def(
        "swap_screen",
        [](const LevelView& G, Arr<i64> m, Arr<double> vw, Arr<double> nload, Arr<double> cap,
           Arr<double> cost, Arr<bool> touched, Arr<i64> t, Arr<i64> b, Arr<double> g_t,
           Arr<i64> pair_of, Arr<i64> offsets, Arr<i64> tasks, Arr<double> gains, double limit,
           double tiny) {
            const i64 n = G.n;
            need_length(m, n, "m");
            need_length(vw, n, "vw");
            need_length(touched, n, "touched");
            need(nload.ndim() == 1, "nload must be 1-D, got shape " + shape_of(nload));
            const i64 P = nload.shape(0);
            need_length(cap, P, "cap", "len(nload)");
            need(cost.ndim() == 2 && cost.shape(0) == P && cost.shape(1) == P,
                 "cost must have shape (P, P), got " + shape_of(cost));
            need(t.ndim() == 1, "t must be 1-D, got shape " + shape_of(t));
            const i64 k = t.shape(0);
            need_length(b, k, "b", "len(t)");
            need_length(g_t, k, "g_t", "len(t)");
            need_length(pair_of, k, "pair_of", "len(t)");
            need(offsets.ndim() == 1 && offsets.shape(0) >= 1, "offsets must be 1-D, not empty");
            const i64 np1 = offsets.shape(0);
            need(tasks.ndim() == 1, "tasks must be 1-D, got shape " + shape_of(tasks));
            need_length(gains, tasks.shape(0), "gains", "len(tasks)");
            const i64* pm = m.data();
            const i64* pt = t.data();
            const i64* pb = b.data();
            const i64* ppo = pair_of.data();
            const i64* pof = offsets.data();
            const i64* ptk = tasks.data();
            need_mapped(pm, n, P);
            for (i64 j = 0; j + 1 < np1; ++j)
                need(0 <= pof[j] && pof[j] <= pof[j + 1] && pof[j + 1] <= tasks.shape(0),
                     "offsets must index tasks");
            for (i64 i = 0; i < k; ++i)
                need(pt[i] >= 0 && pt[i] < n && pb[i] >= 0 && pb[i] < P && ppo[i] >= 0 &&
                         ppo[i] + 1 < np1,
                     "t, b, pair_of: a task, a processor and a pair each");
            for (i64 j = 0; j < tasks.shape(0); ++j)
                need(ptk[j] >= 0 && ptk[j] < n, "tasks must hold tasks in [0, n)");
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const double* pv = vw.data();
            const double* pn = nload.data();
            const double* pc = cap.data();
            const double* pcost = cost.data();
            const bool* pto = touched.data();
            const double* pg = g_t.data();
            const double* pga = gains.data();
            py::array_t<bool> out(k);
            auto* po = reinterpret_cast<std::uint8_t*>(out.mutable_data());
            {
                py::gil_scoped_release release;
                std::vector<double> vol(static_cast<std::size_t>(n), 0.0);
                for (i64 i = 0; i < k; ++i) {
                    const i64 tt = pt[i], bb = pb[i], a = pm[tt];
                    // the volume between t and each neighbour, its entries in order from 0
                    for (i64 q = pip[tt]; q < pip[tt + 1]; ++q) vol[pix[q]] += pw[q];
                    const double lim_a = np_maximum(limit * pc[a], pn[a]);
                    const double lim_b = np_maximum(limit * pc[bb], pn[bb]);
                    const double thr = tiny * (1 + std::fabs(pg[i]));
                    const double cab = pcost[a * P + bb];
                    bool any = false;
                    for (i64 j = pof[ppo[i]]; j < pof[ppo[i] + 1] && !any; ++j) {
                        const i64 u = ptk[j];
                        const double dw = pv[u] - pv[tt];
                        const bool fit = pn[a] + dw <= lim_a && pn[bb] - dw <= lim_b;
                        const double g = pg[i] + pga[j] - 2 * vol[u] * cab;
                        any = g > thr && fit && !pto[u];
                    }
                    for (i64 q = pip[tt]; q < pip[tt + 1]; ++q) vol[pix[q]] = 0.0;
                    po[i] = any ? 1 : 0;
                }
            }
            return out;
        },
        py::arg("level"), py::arg("m"), py::arg("vw"), py::arg("nload"), py::arg("cap"),
        py::arg("cost"), py::arg("touched"), py::arg("t"), py::arg("b"), py::arg("g_t"),
        py::arg("pair_of"), py::arg("offsets"), py::arg("tasks"), py::arg("gains"),
        py::arg("limit"), py::arg("tiny"),
        "sumrefine._swap_screen for the moves t[i] -> b[i] (gains g_t) with swap_table's "
        "(pair_of, offsets, tasks, gains): whether a task u of b not touched fits the swap's "
        "compute and gains more than tiny (1 + |g_t|) swapped with t.");

    mod.def(
        "sum_moves",
        [](const LevelView& G, const PairRoutesView& R, py::array m, py::array lload,
           py::array nload, Arr<double> bw, Arr<double> cap, Arr<double> vw, Arr<i64> ct,
           Arr<i64> cb, Arr<bool> okl, py::array near, py::array touched, py::array done,
           i64 max_work, double limit, double tiny, i64 every, py::object poll) {
            // updated in place: exactly these dtypes, contiguous, writeable, never a copy
            const i64 n = G.n, P = R.P, E = R.E;
            need_writeable(m, py::dtype::of<i64>(), "int64", n, "m");
            need_writeable(lload, py::dtype::of<double>(), "float64", E, "lload");
            need_writeable(nload, py::dtype::of<double>(), "float64", P, "nload");
            need_writeable(near, py::dtype::of<bool>(), "bool", n, "near");
            need_writeable(touched, py::dtype::of<bool>(), "bool", n, "touched");
            need_writeable(done, py::dtype::of<i64>(), "int64", 1, "done");
            need_length(bw, E, "bw", "n_links");
            need_length(cap, P, "cap", "P");
            need_length(vw, n, "vw", "n");
            need(ct.ndim() == 1, "ct must be 1-D, got shape " + shape_of(ct));
            const i64 k = ct.shape(0);
            need_length(cb, k, "cb", "len(ct)");
            need_length(okl, k, "okl", "len(ct)");
            need(every >= 1, "every must be >= 1");
            i64* pm = static_cast<i64*>(m.mutable_data());
            double* pl = static_cast<double*>(lload.mutable_data());
            double* pn = static_cast<double*>(nload.mutable_data());
            bool* pnear = static_cast<bool*>(near.mutable_data());
            bool* ptouch = static_cast<bool*>(touched.mutable_data());
            i64* pdone = static_cast<i64*>(done.mutable_data());
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const i64* pct = ct.data();
            const i64* pcb = cb.data();
            const bool* pok = okl.data();
            const double* pbw = bw.data();
            const double* pcap = cap.data();
            const double* pvw = vw.data();
            need_mapped(pm, n, P);
            for (i64 i = 0; i < k; ++i) {
                need(pct[i] >= 0 && pct[i] < n, "ct must hold tasks in [0, n)");
                need(pcb[i] >= 0 && pcb[i] < P, "cb must hold processors in [0, P)");
            }
            std::vector<i64> left;
            i64 applied = 0;
            std::vector<double> acc(static_cast<std::size_t>(E), 0.0);
            std::vector<char> seen(static_cast<std::size_t>(E), 0);
            std::vector<i64> used;
            const double ninf = -std::numeric_limits<double>::infinity();
            i64 i = 0;
            bool stop = false;
            while (i < k && !stop) {
                // the Python loop's order: the tries' count first, then the poll at k % every
                if (pdone[0] >= max_work) break;
                if (!poll.is_none()) poll();
                py::gil_scoped_release release;
                const i64 end = std::min(k, (i / every + 1) * every);
                for (; i < end; ++i) {
                    if (i % every != 0 && pdone[0] >= max_work) {
                        stop = true;
                        break;
                    }
                    const i64 t = pct[i], b = pcb[i];
                    if (pnear[t]) continue;
                    if (!pok[i]) {
                        left.push_back(i);
                        continue;
                    }
                    ++pdone[0];
                    if (pn[b] + pvw[t] > limit * pcap[b]) continue;
                    // score_moves for (t, b) alone: the largest occupancy of a link whose
                    // load rises, the deltas summed in the same order
                    const i64 a = pm[t];
                    move_deltas(pip, pix, pw, prp, prl, pm, P, t, a, b, acc, seen, used);
                    double up = ninf;
                    for (i64 e : used) {
                        const double d = acc[e];
                        if (d > tiny * (1 + pl[e])) {
                            const double v = (pl[e] + d) / pbw[e];
                            if (v > up) up = v;
                        }
                    }
                    for (i64 e : used) acc[e] = 0.0, seen[e] = 0;
                    used.clear();
                    if (!(up <= limit)) continue;
                    // RefineState.move (apply_move's additions in its order)
                    move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[t], t, b);
                    ptouch[t] = true;  // _SumWork.touch
                    pnear[t] = true;
                    for (i64 q = pip[t]; q < pip[t + 1]; ++q) pnear[pix[q]] = true;
                    ++applied;
                }
            }
            return py::make_tuple(applied, coalloc::bind::to_array(left));
        },
        py::arg("level"), py::arg("routes"), py::arg("m").noconvert(),
        py::arg("lload").noconvert(), py::arg("nload").noconvert(), py::arg("bw"),
        py::arg("cap"), py::arg("vw"), py::arg("ct"), py::arg("cb"), py::arg("okl"),
        py::arg("near").noconvert(), py::arg("touched").noconvert(),
        py::arg("done").noconvert(), py::arg("max_work"), py::arg("limit"), py::arg("tiny"),
        py::arg("every"), py::arg("poll"),
        "sumrefine._sum_moves' loop: the moves ct[i] -> cb[i] in order, each one whose task "
        "is not near a move made, passes the links' screen okl[i], fits b's compute and "
        "raises no link above `limit` made (m, the loads, near and touched updated; done[0] "
        "counts the tries, none once it reaches max_work); `poll` (a callable or None) at "
        "every `every`-th move. Returns (moves made, the indices that okl blocks).");

    mod.def(
        "swap_try",
        [](const LevelView& G, const PairRoutesView& R, py::array m, py::array lload,
           py::array nload, Arr<double> bw, Arr<double> cap, Arr<double> vw, i64 t, i64 u,
           i64 b, double limit, double tiny) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_own(m, true, n, "m");
            need_own(lload, false, E, "lload");
            need_own(nload, false, P, "nload");
            need_length(bw, E, "bw", "n_links");
            need_length(cap, P, "cap", "P");
            need_length(vw, n, "vw", "n");
            need(t >= 0 && t < n && u >= 0 && u < n && t != u, "t, u must be two tasks in [0, n)");
            need(b >= 0 && b < P, "b must be a processor in [0, P)");
            i64* pm = static_cast<i64*>(m.mutable_data());
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            for (i64 x : {t, u}) need_placed(pm, pip, pix, x, P);
            need(pm[u] == b && pm[t] != b, "u must be on b, t elsewhere");
            double* pl = static_cast<double*>(lload.mutable_data());
            double* pn = static_cast<double*>(nload.mutable_data());
            const double* pw = G.iw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const double* pbw = bw.data();
            const double* pcap = cap.data();
            const double* pvw = vw.data();
            const i64 a = pm[t];
            bool ok = true;
            {
                py::gil_scoped_release release;
                // the links either move changes (sumrefine._links_of of t -> b and u -> a,
                // before the moves), and their loads before
                std::vector<i64> links;
                for (i64 x : {t, u}) {
                    const i64 to = x == t ? b : a;
                    for (i64 from : {to, pm[x]})
                        for (i64 q = pip[x]; q < pip[x + 1]; ++q) {
                            const i64 pair = from * P + pm[pix[q]];
                            for (i64 j = prp[pair]; j < prp[pair + 1]; ++j) links.push_back(prl[j]);
                        }
                }
                std::sort(links.begin(), links.end());
                links.erase(std::unique(links.begin(), links.end()), links.end());
                std::vector<double> before(links.size());
                for (std::size_t j = 0; j < links.size(); ++j) before[j] = pl[links[j]];
                const double na = pn[a], nb = pn[b];
                move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[t], t, b);
                move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[u], u, a);
                ok = fits_one(pn[a], limit * pcap[a], na, tiny) &&
                     fits_one(pn[b], limit * pcap[b], nb, tiny);
                for (std::size_t j = 0; ok && j < links.size(); ++j)
                    ok = fits_one(pl[links[j]], limit * pbw[links[j]], before[j], tiny);
                if (!ok) {  // undone: u back to b, then t back to a
                    move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[u], u, b);
                    move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[t], t, a);
                }
            }
            return ok;
        },
        py::arg("level"), py::arg("routes"), py::arg("m").noconvert(),
        py::arg("lload").noconvert(), py::arg("nload").noconvert(), py::arg("bw"),
        py::arg("cap"), py::arg("vw"), py::arg("t"), py::arg("u"), py::arg("b"),
        py::arg("limit"), py::arg("tiny"),
        "sumrefine._sum_swaps' try: t (on a) to b and u (on b) to a made; kept (True) when a, "
        "b and every link either move changes are each at most limit x capacity or not "
        "above their loads before, else undone (u, then t; False).");
    mod.def(
        "eject_try",
        [](const LevelView& G, const PairRoutesView& R, py::array m, py::array lload,
           py::array nload, Arr<double> bw, Arr<double> cap, Arr<double> vw, Arr<double> cost,
           i64 t, i64 b, i64 v, i64 c, double g_t, double limit, double tiny) {
            const i64 n = G.n, P = R.P, E = R.E;
            need_own(m, true, n, "m");
            need_own(lload, false, E, "lload");
            need_own(nload, false, P, "nload");
            need_length(bw, E, "bw", "n_links");
            need_length(cap, P, "cap", "P");
            need_length(vw, n, "vw", "n");
            need(cost.ndim() == 2 && cost.shape(0) == P && cost.shape(1) == P,
                 "cost must have shape (P, P), got " + shape_of(cost));
            need(t >= 0 && t < n && v >= 0 && v < n && t != v, "t, v must be two tasks in [0, n)");
            need(b >= 0 && b < P && c >= 0 && c < P, "b, c must be processors in [0, P)");
            i64* pm = static_cast<i64*>(m.mutable_data());
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            for (i64 x : {t, v}) need_placed(pm, pip, pix, x, P);
            need(pm[v] == b && pm[t] != b, "v must be on b, t elsewhere");
            double* pl = static_cast<double*>(lload.mutable_data());
            double* pn = static_cast<double*>(nload.mutable_data());
            const double* pw = G.iw.data();
            const i64* prp = R.rptr.data();
            const i64* prl = R.rlink.data();
            const double* pbw = bw.data();
            const double* pcap = cap.data();
            const double* pvw = vw.data();
            const double* pc = cost.data();
            const i64 a = pm[t];
            bool ok = true;
            {
                py::gil_scoped_release release;
                const i64 procs[3] = {a, b, c};
                const double nb0[3] = {pn[a], pn[b], pn[c]};
                std::vector<double> before(pl, pl + E);  // every link (the Python: all)
                const double g1 = gain_to(pip, pix, pw, pc, P, pm, v, c);
                move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[v], v, c);
                const double g2 = gain_to(pip, pix, pw, pc, P, pm, t, b);
                move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[t], t, b);
                ok = g1 + g2 > tiny * (1 + std::fabs(g_t));
                for (int j = 0; ok && j < 3; ++j)
                    ok = fits_one(pn[procs[j]], limit * pcap[procs[j]], nb0[j], tiny);
                for (i64 e = 0; ok && e < E; ++e)
                    ok = fits_one(pl[e], limit * pbw[e], before[e], tiny);
                if (!ok) {  // undone: t back to a, then v back to b
                    move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[t], t, a);
                    move_task(pip, pix, pw, prp, prl, P, pm, pl, pn, pvw[v], v, b);
                }
            }
            return ok;
        },
        py::arg("level"), py::arg("routes"), py::arg("m").noconvert(),
        py::arg("lload").noconvert(), py::arg("nload").noconvert(), py::arg("bw"),
        py::arg("cap"), py::arg("vw"), py::arg("cost"), py::arg("t"), py::arg("b"),
        py::arg("v"), py::arg("c"), py::arg("g_t"), py::arg("limit"), py::arg("tiny"),
        "sumrefine._sum_ejections' try: v (on b) to c, then t (on a) to b made; kept (True) "
        "when the two route-cost gains (each before its move) sum above tiny (1 + |g_t|) "
        "and a, b, c and every link are each at most limit x capacity or not above their "
        "loads before, else undone (t, then v; False).");

    mod.def(
        "swap_partners",
        [](const LevelView& G, Arr<i64> m, Arr<double> vw, Arr<double> nload, Arr<double> cap,
           Arr<double> cost, Arr<bool> touched, i64 t, i64 b, double g_t, double largest,
           Arr<i64> on_b, Arr<double> gains_b, double limit, double tiny, i64 tries) {
            const i64 n = G.n;
            need_length(m, n, "m");
            need_length(vw, n, "vw", "n");
            need_length(touched, n, "touched", "n");
            need(nload.ndim() == 1, "nload must be 1-D, got shape " + shape_of(nload));
            const i64 P = nload.shape(0);
            need_length(cap, P, "cap", "len(nload)");
            need(cost.ndim() == 2 && cost.shape(0) == P && cost.shape(1) == P,
                 "cost must have shape (P, P), got " + shape_of(cost));
            need(on_b.ndim() == 1, "on_b must be 1-D, got shape " + shape_of(on_b));
            const i64 k = on_b.shape(0);
            need_length(gains_b, k, "gains_b", "len(on_b)");
            need(t >= 0 && t < n, "t must be a task in [0, n)");
            need(b >= 0 && b < P, "b must be a processor in [0, P)");
            const i64* pm = m.data();
            need(pm[t] >= 0 && pm[t] < P, "m[t] must be a processor in [0, P)");
            const i64* pu = on_b.data();
            for (i64 i = 0; i < k; ++i) need(pu[i] >= 0 && pu[i] < n, "on_b must hold tasks in [0, n)");
            need(tries >= 0, "tries must be >= 0");
            const double* pg = gains_b.data();
            const double* pv = vw.data();
            const double* pn = nload.data();
            const double* pc = cap.data();
            const bool* pt = touched.data();
            const i64* pip = G.ip.data();
            const i64* pix = G.ix.data();
            const double* pw = G.iw.data();
            const i64 a = pm[t];
            const double cab = cost.data()[a * P + b];
            std::vector<i64> out;
            {
                py::gil_scoped_release release;
                const double thr = tiny * (1 + std::fabs(g_t));
                if (g_t + largest > thr) {
                    const double lim_a = np_maximum(limit * pc[a], pn[a]);
                    const double lim_b = np_maximum(limit * pc[b], pn[b]);
                    std::vector<i64> good;
                    std::vector<double> g;
                    for (i64 i = 0; i < k; ++i) {
                        const i64 u = pu[i];
                        if (pt[u]) continue;
                        const double dw = pv[u] - pv[t];  // what a gains and b loses
                        if (!(pn[a] + dw <= lim_a && pn[b] - dw <= lim_b)) continue;
                        double w = 0.0;  // the volume between t and u (np.add.at's order)
                        for (i64 q = pip[t]; q < pip[t + 1]; ++q)
                            if (pix[q] == u) w += pw[q];
                        const double gi = g_t + pg[i] - 2 * w * cab;
                        if (gi > thr) good.push_back(u), g.push_back(gi);
                    }
                    std::vector<i64> idx(good.size());
                    for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<i64>(i);
                    std::stable_sort(idx.begin(), idx.end(),
                                     [&](i64 x, i64 y) { return -g[x] < -g[y]; });
                    for (std::size_t i = 0; i < idx.size() && static_cast<i64>(i) < tries; ++i)
                        out.push_back(good[idx[i]]);
                }
            }
            return coalloc::bind::to_array(out);
        },
        py::arg("level"), py::arg("m"), py::arg("vw"), py::arg("nload"), py::arg("cap"),
        py::arg("cost"), py::arg("touched"), py::arg("t"), py::arg("b"), py::arg("g_t"),
        py::arg("largest"), py::arg("on_b"), py::arg("gains_b"), py::arg("limit"),
        py::arg("tiny"), py::arg("tries"),
        "sumrefine._sum_swaps' partners of t's move to b: the tasks on_b (their gains gains_b "
        "moving to t's processor) not touched whose swap fits both processors' compute and "
        "gains more than tiny (1 + |g_t|), most gain first (stable), at most `tries` (none "
        "when g_t + largest does not pass).");

    mod.def(
        "_rest_heap",
        [](bool on) {
            const bool old = g_rest_heap;
            g_rest_heap = on;
            return old;
        },
        py::arg("on"),
        "Private (bisection.REST_HEAP): grow_fm's restart pick from a heap (True) or by a "
        "scan of every vertex (False); the same vertex either way. Returns the former.");
}
