// Iterated local search for the CTAAP allocation problem (seed 000, Kravtsov et al. 2008):
// maximise the number of placed tasks subject to the allowed (task, cluster) pairs, the
// cluster capacities and the bandwidth constraint (4).
//
// Restricted to the allowed pairs the problem is a maximum independent set with per-cluster
// capacities in a conflict graph whose vertices are the placements (i, j):
//   (i, j) and (k, l) conflict  iff  i == k, or b[i,k] > bhat[j,l], or b[k,i] > bhat[l,j]
// (only links with b > 0 constrain anything).  The search follows the iterated local search
// of Andrade, Resende and Werneck for maximum independent set:
//
//   * (0,1) insertion: an unplaced task whose placement (k, l) conflicts with no placed task,
//     in a cluster with a free slot, is placed.
//   * (1,2) swap: one placement (i, j) is removed and two placements (k1, l1), (k2, l2) of
//     distinct tasks are added; each added task is either unplaced or i itself moved to
//     another cluster l != j.  The result must be feasible: each added placement may
//     conflict with no remaining placement, the two may not conflict with each other, and
//     the capacities must hold after the removal.  The size grows by one.
//   * perturbation: a (task, cluster) pair is forced in, removing every placement that
//     conflicts with it (and one random task of the cluster if it is full); a single removal
//     is a (1,1) swap, i.e. a plateau move.  The perturbed solution is brought back to a local
//     optimum and accepted as the new current solution if it is not smaller, or otherwise
//     with probability 1 / (1 + d * d_best) (d: loss against the current solution, d_best:
//     against the best); the best solution ever seen is kept and returned.
//
// Improve() first descends to a local optimum (insertions first, by priority; then swaps),
// then runs max_iters perturbation rounds.  The result is always a local optimum: no (0,1)
// insertion and no (1,2) swap is left.
//
// Incremental state, updated in O(deg * m) per placement change (deg: links of the task):
//   tight[k*m+l]  for allowed (k, l): number of placed tasks x != k whose placement
//                 conflicts with (k, l) (0 for pairs that are not allowed);
//   owner[k*m+l]  xor of the ids of those tasks: when tight == 1 it *is* the single one
//                 (both kept in one 64-bit word per pair: tight in bits 0..30, bit 31 set
//                 while task k is placed, owner in the high half);
//   free list per cluster l   unplaced tasks k with (k, l) allowed and tight == 0;
//   bucket per placed task i  allowed (k, l), k unplaced, tight == 1, the conflict being i.
// A (0,1) insertion is a free-list entry of a cluster with a free slot (O(m) to find); the
// (1,2) candidates around (i, j) are bucket[i], the free lists whose cluster has a slot once
// i leaves, and i's own tight-0 pairs in other clusters.
//
// The header does not depend on Python; src/_core/ctaap/_localsearch.cpp binds it.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "coalloc/common/csr.hpp"
#include "coalloc/common/errors.hpp"
#include "coalloc/common/interrupt.h"
#include "coalloc/common/xoshiro.hpp"

namespace coalloc {
namespace localsearch {

using i64 = std::int64_t;

// ------------------------------------------------------------------------------ random

// The common xoshiro256** generator (coalloc/common/xoshiro.hpp); the twin
// coalloc.ctaap._reference.localsearch repeats its stream.
using Rng = coalloc::Xoshiro256ss;

// Index of the lowest set bit of a non-zero word.
inline int ctz64(std::uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(x);
#else
    int r = 0;
    while (!(x & 1U)) {
        x >>= 1;
        ++r;
    }
    return r;
#endif
}

// ---------------------------------------------------------------------------- instance

// Raw views of the caller's arrays (shapes already checked by the binding).
struct RawInput {
    i64 n = 0, m = 0;
    CsrView<double> b, bt;  // request bandwidth b (n x n) and its transpose
    const double* bhat = nullptr;            // m x m
    const std::uint8_t* allowed = nullptr;   // n x m
    const i64* capacity = nullptr;           // m
    const double* priority = nullptr;        // n x m, may be null
};

// Validated copy of an instance with the request graph stored once per task as a merged,
// sorted adjacency (links in either direction).  With m <= kMaskM every link carries the
// bits of the conflicting (cluster of k, cluster of x) pairs, restricted to allowed
// placements, and links without any are dropped; otherwise, for task k and neighbour
// nb[e], out_bw[e] = b[k, nb] and in_bw[e] = b[nb, k], -inf where that direction has no
// link (b <= 0 or absent), so that "b > bhat" with b > 0 is simply "stored > bhat".
struct Instance {
    i64 n = 0, m = 0;
    std::vector<i64> ptr, nb;
    std::vector<double> out_bw, in_bw;
    std::vector<double> bhat, bhat_t;  // row-major and transposed
    std::vector<std::uint8_t> allowed;  // allowed[i*m+j] && capacity[j] > 0
    std::vector<i64> cap;
    std::vector<double> prio;
    // m <= kMaskM: bit l*m+j of cmask[e] says edge_conflict(e, l, j).
    static constexpr i64 kMaskM = 8;
    std::vector<std::uint64_t> cmask;
    // n <= kDenseN: eidx[k*n+x] = index of x in k's adjacency, or -1.
    static constexpr i64 kDenseN = 1024;
    std::vector<std::int32_t> eidx;

    // Allowed placements (k, l) and (x, j) conflict, given e = the link k -> x in k's
    // adjacency.
    bool edge_conflict(i64 e, i64 l, i64 j) const {
        if (m <= kMaskM) return (cmask[e] >> (l * m + j)) & 1U;
        return out_bw[e] > bhat[l * m + j] || in_bw[e] > bhat[j * m + l];
    }
    // Calls f(j) for every allowed placement (x, j) that conflicts with (k, l), given
    // e = the link k -> x and (k, l) allowed.
    template <class F>
    void for_conflicts(i64 e, i64 l, F&& f) const {
        if (m <= kMaskM) {
            std::uint64_t bits = (cmask[e] >> (l * m)) & ((std::uint64_t{1} << m) - 1);
            while (bits) {
                f(static_cast<i64>(ctz64(bits)));
                bits &= bits - 1;
            }
        } else {
            const double* row = &bhat[l * m];
            const double* col = &bhat_t[l * m];
            const std::uint8_t* ok = &allowed[nb[e] * m];
            const double bo = out_bw[e], bi = in_bw[e];
            for (i64 j = 0; j < m; ++j)
                if (ok[j] && (bo > row[j] || bi > col[j])) f(j);
        }
    }
    // Index of neighbour x in k's adjacency, or -1.
    i64 find_edge(i64 k, i64 x) const {
        if (!eidx.empty()) return eidx[k * n + x];
        const i64* lo = nb.data() + ptr[k];
        const i64* hi = nb.data() + ptr[k + 1];
        const i64* it = std::lower_bound(lo, hi, x);
        return (it != hi && *it == x) ? static_cast<i64>(it - nb.data()) : -1;
    }
    // Do placements (k1, l1) and (k2, l2) of two distinct tasks conflict?
    bool pair_conflict(i64 k1, i64 l1, i64 k2, i64 l2) const {
        const i64 e = find_edge(k1, k2);
        return e >= 0 && edge_conflict(e, l1, l2);
    }
};

namespace detail {

inline void fail(const std::string& msg) { throw InvalidInput(msg); }

// Canonical rows of a CSR matrix: per row, (column, value) sorted by column, duplicates
// summed, the diagonal and every value that is not > 0 dropped.  A matrix already in that
// form (the usual case) is used in place, without a copy.
struct CsrRows {
    CsrView<double> rows;  // the input itself, or the own_ arrays
    std::vector<i64> own_ptr, own_idx;
    std::vector<double> own_val;
};

// poll: ticked every 2,048 entries of its passes over the links (on 25 million links the
// checks took 0.1-0.15 s under load before the first look: issue 36); none: no look.
inline void canonical_rows(const CsrView<double>& in, const char* name, CsrRows& out,
                           Poll* poll = nullptr) {
    const i64 n = in.n, nnz = in.nnz;
    const i64* indices = in.indices;
    const double* data = in.data;
    const std::string nm(name);
    if (in.indptr[0] != 0) fail(nm + "indptr[0] must be 0");
    for (i64 r = 0; r < n; ++r)
        if (in.end(r) < in.begin(r)) fail(nm + "indptr must be non-decreasing");
    if (in.indptr[n] != nnz)
        fail(nm + "indptr[-1] (" + std::to_string(in.indptr[n]) + ") must equal len(" + nm +
             "indices) = " + std::to_string(nnz));
    for (i64 e = 0; e < nnz; ++e) {
        if (poll && (e & 2047) == 0) poll->tick();
        if (indices[e] < 0 || indices[e] >= n)
            fail(nm + "indices must lie in [0, " + std::to_string(n) + "), found " +
                 std::to_string(indices[e]));
    }
    auto row_canonical = [&](i64 r) {
        const i64 lo = in.begin(r), hi = in.end(r);
        bool canonical = true;
        for (i64 e = lo; e < hi && canonical; ++e)
            canonical = indices[e] != r && data[e] > 0.0 && (e == lo || indices[e - 1] < indices[e]);
        return canonical;
    };
    i64 first_bad = 0;
    while (first_bad < n && row_canonical(first_bad)) {
        if (poll) poll->tick();
        ++first_bad;
    }
    if (first_bad == n) {
        out.rows = in;
        return;
    }
    std::vector<i64>& out_ptr = out.own_ptr;
    std::vector<i64>& out_idx = out.own_idx;
    std::vector<double>& out_val = out.own_val;
    out_ptr.assign(n + 1, 0);
    out_idx.clear();
    out_val.clear();
    out_idx.reserve(nnz);
    out_val.reserve(nnz);
    std::vector<std::pair<i64, double>> row;
    for (i64 r = 0; r < n; ++r) {
        if (poll) poll->tick();
        const i64 lo = in.begin(r), hi = in.end(r);
        if (r < first_bad || (r > first_bad && row_canonical(r))) {
            out_idx.insert(out_idx.end(), indices + lo, indices + hi);
            out_val.insert(out_val.end(), data + lo, data + hi);
        } else {
            row.clear();
            for (i64 e = lo; e < hi; ++e) row.emplace_back(indices[e], data[e]);
            std::stable_sort(row.begin(), row.end(),
                             [](const auto& x, const auto& y) { return x.first < y.first; });
            for (std::size_t x = 0; x < row.size();) {
                std::size_t y = x;
                double sum = 0.0;
                for (; y < row.size() && row[y].first == row[x].first; ++y) sum += row[y].second;
                if (row[x].first != r && sum > 0.0) {
                    out_idx.push_back(row[x].first);
                    out_val.push_back(sum);
                }
                x = y;
            }
        }
        out_ptr[r + 1] = static_cast<i64>(out_idx.size());
    }
    out.rows.n = n;
    out.rows.nnz = static_cast<i64>(out_idx.size());
    out.rows.indptr = out_ptr.data();
    out.rows.indices = out_idx.data();
    out.rows.data = out_val.data();
}

// Step function v -> OR of the bits of all thresholds < v (NaN thresholds never count).
class ThresholdBits {
   public:
    void add(double threshold, std::uint64_t bit) {
        if (!std::isnan(threshold)) items_.emplace_back(threshold, bit);
    }
    void finish() {
        std::sort(items_.begin(), items_.end(),
                  [](const auto& x, const auto& y) { return x.first < y.first; });
        keys_.clear();
        prefix_.assign(1, 0);
        for (const auto& it : items_) {
            keys_.push_back(it.first);
            prefix_.push_back(prefix_.back() | it.second);
        }
    }
    std::uint64_t operator()(double v) const {
        // Branchless lower bound: the link values are random, branches would mispredict.
        std::size_t len = keys_.size();
        if (len == 0) return 0;
        const double* base = keys_.data();
        while (len > 1) {
            const std::size_t half = len / 2;
            base = (base[half] < v) ? base + half : base;
            len -= half;
        }
        return prefix_[static_cast<std::size_t>(base - keys_.data()) + (*base < v ? 1 : 0)];
    }

    bool operator==(const ThresholdBits& o) const {
        return keys_ == o.keys_ && prefix_ == o.prefix_;
    }

   private:
    std::vector<std::pair<double, std::uint64_t>> items_;
    std::vector<double> keys_;
    std::vector<std::uint64_t> prefix_;
};

}  // namespace detail

// Builds the instance; throws InvalidInput (ValueError) on malformed input (including a
// transpose that does not match the matrix).
// poll: ticked once per row of its long loops (a dense 1,000-task request's ~1e6 links took
// ~90 ms under load before the search's first look at the clock: issue 36); none: none.
inline Instance build_instance(const RawInput& in, Poll* poll = nullptr) {
    using detail::fail;
    Instance I;
    const i64 n = in.n, m = in.m;
    I.n = n;
    I.m = m;
    I.bhat.assign(in.bhat, in.bhat + m * m);
    I.bhat_t.resize(m * m);
    for (i64 j = 0; j < m; ++j)
        for (i64 l = 0; l < m; ++l) I.bhat_t[l * m + j] = I.bhat[j * m + l];
    I.cap.assign(in.capacity, in.capacity + m);
    for (i64 j = 0; j < m; ++j)
        if (I.cap[j] < 0) fail("capacity must be non-negative");
    I.allowed.resize(n * m);
    for (i64 p = 0; p < n * m; ++p)
        I.allowed[p] = (in.allowed[p] != 0 && I.cap[p % m] > 0) ? 1 : 0;
    if (in.priority)
        I.prio.assign(in.priority, in.priority + n * m);
    else
        I.prio.assign(n * m, 0.0);
    for (double& v : I.prio)
        if (std::isnan(v)) v = -std::numeric_limits<double>::infinity();

    detail::CsrRows Frows, Trows;
    detail::canonical_rows(in.b, "", Frows, poll);
    detail::canonical_rows(in.bt, "t_", Trows, poll);
    const CsrView<double>& F = Frows.rows;
    const CsrView<double>& T = Trows.rows;
    const i64 *fp = F.indptr, *fi = F.indices;
    const double* fv = F.data;

    // The transpose of the canonical matrix must equal the canonical t_ matrix: F is walked
    // row by row (increasing source row, the order of the rows of its transpose), each
    // entry (r, c) matched with the next unmatched entry of row c of T, and every entry of
    // T must be matched.  (gp, gi, gv) is that transpose: T itself when all values agree
    // exactly, else built from F.
    const i64 *gp = T.indptr, *gi = T.indices;
    const double* gv = T.data;
    std::vector<i64> gp_own, gi_own;
    std::vector<double> gv_own;
    {
        std::vector<i64> cur(T.indptr, T.indptr + n);
        bool same = true, exact = true;
        for (i64 r = 0; r < n && same; ++r) {
            if (poll) poll->tick();
            for (i64 e = fp[r]; e < fp[r + 1]; ++e) {
                const i64 c = fi[e];
                const i64 q = cur[c]++;
                if (q >= T.end(c) || T.col(q) != r) {
                    same = false;
                    break;
                }
                const double x = fv[e], y = T.val(q);
                if (x != y) {
                    exact = false;
                    if (!(std::fabs(x - y) <= 1e-12 * std::max(std::fabs(x), std::fabs(y)))) {
                        same = false;
                        break;
                    }
                }
            }
        }
        for (i64 c = 0; c < n && same; ++c) same = cur[c] == T.end(c);
        if (!same)
            fail("(t_indptr, t_indices, t_data) is not the transpose of (indptr, indices, data)");
        if (!exact) {
            gp_own.assign(T.indptr, T.indptr + n + 1);
            gi_own.assign(T.indices, T.indices + T.nnz);
            gv_own.resize(static_cast<std::size_t>(T.nnz));
            for (i64 c = 0; c < n; ++c) cur[c] = gp_own[c];
            for (i64 r = 0; r < n; ++r)
                for (i64 e = fp[r]; e < fp[r + 1]; ++e) gv_own[cur[fi[e]]++] = fv[e];
            gp = gp_own.data();
            gi = gi_own.data();
            gv = gv_own.data();
        }
    }

    // With m <= kMaskM the conflicts of a link are precomputed as bits, restricted to the
    // allowed placements of both ends, and links that can never conflict are dropped
    // (pair_conflict then correctly finds no link).
    const bool masks = m <= Instance::kMaskM;
    std::vector<std::uint64_t> row_allow(n, 0), rep_allow(n, 0);
    detail::ThresholdBits out_bits, in_bits;
    if (masks) {
        for (i64 k = 0; k < n; ++k)
            for (i64 l = 0; l < m; ++l)
                if (I.allowed[k * m + l]) {
                    row_allow[k] |= ((std::uint64_t{1} << m) - 1) << (l * m);
                    for (i64 q = 0; q < m; ++q) rep_allow[k] |= std::uint64_t{1} << (q * m + l);
                }
        for (i64 l = 0; l < m; ++l)
            for (i64 j = 0; j < m; ++j) {
                out_bits.add(I.bhat[l * m + j], std::uint64_t{1} << (l * m + j));  // b[k,x]
                in_bits.add(I.bhat[j * m + l], std::uint64_t{1} << (l * m + j));   // b[x,k]
            }
        out_bits.finish();
        in_bits.finish();
    }
    // Symmetric bhat: both step functions agree, a link with b[k,x] == b[x,k] needs one.
    const bool same_bits = masks && out_bits == in_bits;

    // Merge row r of B (out-links) and row r of B^T (in-links).
    const double none = -std::numeric_limits<double>::infinity();
    I.ptr.assign(n + 1, 0);
    {
        const std::size_t most = static_cast<std::size_t>(fp[n] + gp[n]);
        I.nb.reserve(most);
        if (masks) {
            I.cmask.reserve(most);
        } else {
            I.out_bw.reserve(most);
            I.in_bw.reserve(most);
        }
    }
    auto emit = [&](i64 k, i64 x, double bo, double bi) {
        if (masks) {
            // -inf (no link that way) is below every threshold.
            const std::uint64_t ob = bo == none ? 0 : out_bits(bo);
            const std::uint64_t ib = bi == none ? 0 : (same_bits && bi == bo) ? ob : in_bits(bi);
            const std::uint64_t mask = (ob | ib) & row_allow[k] & rep_allow[x];
            if (!mask) return;
            I.cmask.push_back(mask);
        } else {
            I.out_bw.push_back(bo);
            I.in_bw.push_back(bi);
        }
        I.nb.push_back(x);
    };
    for (i64 r = 0; r < n; ++r) {
        if (poll) poll->tick();
        i64 x = fp[r], xe = fp[r + 1], y = gp[r], ye = gp[r + 1];
        while (x < xe || y < ye) {
            if (y >= ye || (x < xe && fi[x] < gi[y])) {
                emit(r, fi[x], fv[x], none);
                ++x;
            } else if (x >= xe || gi[y] < fi[x]) {
                emit(r, gi[y], none, gv[y]);
                ++y;
            } else {
                emit(r, fi[x], fv[x], gv[y]);
                ++x;
                ++y;
            }
        }
        I.ptr[r + 1] = static_cast<i64>(I.nb.size());
    }
    if (n <= Instance::kDenseN) {
        I.eidx.assign(n * n, -1);
        for (i64 k = 0; k < n; ++k) {
            if (poll) poll->tick();
            for (i64 e = I.ptr[k]; e < I.ptr[k + 1]; ++e)
                I.eidx[k * n + I.nb[e]] = static_cast<std::int32_t>(e);
        }
    }
    return I;
}

// ------------------------------------------------------------------------------- state

struct Counters {
    i64 insertions = 0;     // (0,1) moves applied
    i64 swaps_1_2 = 0;      // (1,2) moves applied
    i64 plateau_moves = 0;  // perturbations that kept the size ((1,1) swaps, relocations)
    i64 perturbations = 0;  // forced insertions
    i64 iterations = 0;     // perturbation rounds run (<= max_iters)
    i64 accepted = 0;       // rounds whose result became the current solution
    i64 initial_size = 0;
    i64 best_size = 0;
};

class Search {
   public:
    // Builds the state around a feasible allocation; throws InvalidInput (ValueError) if it is
    // not one.
    // poll: ticked once per task placed (as build_instance's); none: no look at the clock.
    Search(const Instance& inst, const i64* assign0, Poll* poll = nullptr)
        : I_(inst), n_(inst.n), m_(inst.m) {
        const i64 nm = n_ * m_;
        if (n_ >= (i64{1} << 31)) detail::fail("at most 2**31 - 1 tasks");  // tw_ fields
        assign_.assign(n_, -1);
        load_.assign(m_, 0);
        tw_.assign(nm, 0);
        pos_.assign(nm, -1);
        free_.assign(m_, {});
        bucket_.assign(n_, {});
        members_.assign(m_, {});
        mpos_.assign(n_, -1);
        placed_.assign((n_ + 63) / 64, 0);
        if (m_ <= 64) {
            allow_bits_.assign(n_, 0);
            for (i64 p = 0; p < nm; ++p)
                if (I_.allowed[p]) allow_bits_[p / m_] |= std::uint64_t{1} << (p % m_);
        }
        ptask_.resize(nm);
        pclus_.resize(nm);
        for (i64 p = 0; p < nm; ++p) {
            ptask_[p] = p / m_;
            pclus_[p] = p % m_;
        }
        group_.assign(m_, {});
        room_.assign(m_, 0);
        gsize_.assign(m_, 0);
        cbeg_.assign(nm, -1);
        cend_.assign(nm, -1);
        moving_.resize(nm);
        for (i64 k = 0; k < n_; ++k) {
            const i64 j = assign0[k];
            if (j < -1 || j >= m_)
                detail::fail("assign[" + std::to_string(k) + "] = " + std::to_string(j) +
                             " is not a cluster in [0, " + std::to_string(m_) + ") or -1");
        }
        // Every task starts unplaced; its pairs enter the free lists.
        for (i64 k = 0; k < n_; ++k)
            for (i64 l = 0; l < m_; ++l) attach(k * m_ + l);
        for (i64 k = 0; k < n_; ++k) {
            const i64 j = assign0[k];
            if (j < 0) continue;
            if (poll) poll->tick();
            if (!I_.allowed[k * m_ + j])
                detail::fail("assign is infeasible: task " + std::to_string(k) +
                             " may not go to cluster " + std::to_string(j));
            if (load_[j] >= I_.cap[j])
                detail::fail("assign is infeasible: cluster " + std::to_string(j) +
                             " holds more than its capacity " + std::to_string(I_.cap[j]));
            place(k, j);
        }
        for (i64 k = 0; k < n_; ++k)
            if (assign_[k] >= 0 && tight(k * m_ + assign_[k]) != 0)
                detail::fail("assign is infeasible: task " + std::to_string(k) +
                             " in cluster " + std::to_string(assign_[k]) +
                             " breaks the bandwidth constraint with another placed task");
    }

    const std::vector<i64>& assignment() const { return assign_; }
    i64 size() const { return size_; }

    // ---- move enumeration (used by count_moves / list_moves and by the search) ----------

    // Calls f(k, l) for every (0,1) insertion; stops early when f returns true.
    template <class F>
    bool for_each_insertion(F&& f) const {
        for (i64 l = 0; l < m_; ++l) {
            if (load_[l] >= I_.cap[l]) continue;
            for (i64 p : free_[l])
                if (f(ptask_[p], l)) return true;
        }
        return false;
    }

    // Whether for_each_swap_around(i) may find a pair once gather_swap_candidates(i) ran:
    // false when the candidate groups (sizes counted without building them) hold no two
    // candidates it would pair, i.e. no two non-empty groups and no group of >= 2 in a
    // cluster with >= 2 free slots.  Then the enumeration is empty and can be skipped.
    bool swap_possible(i64 i) {
        if (m_ <= 64) return swap_possible_bits(i);
        const i64 j = assign_[i];
        i64 nonempty = 0;
        for (i64 l = 0; l < m_; ++l) {
            const i64 room = I_.cap[l] - load_[l] + (l == j ? 1 : 0);
            room_[l] = room;
            i64 g = 0;
            if (room > 0) {
                g = static_cast<i64>(free_[l].size());
                if (l != j && I_.allowed[i * m_ + l] && tight(i * m_ + l) == 0) ++g;
            }
            gsize_[l] = g;
            if (g > 0 && (++nonempty >= 2 || (g >= 2 && room >= 2))) return true;
        }
        for (const i64 p : bucket_[i]) {
            const i64 l = pclus_[p];
            if (room_[l] <= 0) continue;
            const i64 g = ++gsize_[l];
            if ((g == 1 && ++nonempty >= 2) || (g >= 2 && room_[l] >= 2)) return true;
        }
        return false;
    }

    // swap_possible with m <= 64, on cluster bit masks fixed until the next move (see
    // swap_masks): open_ (a free slot), two_ (>= 2 free slots), fne_ / f2_ (>= 1 / >= 2
    // tasks in the free list).
    void swap_masks() {
        open_ = two_ = fne_ = f2_ = 0;
        for (i64 l = 0; l < m_; ++l) {
            const std::uint64_t b = std::uint64_t{1} << l;
            const i64 room = I_.cap[l] - load_[l];
            const std::size_t f = free_[l].size();
            if (room > 0) open_ |= b;
            if (room > 1) two_ |= b;
            if (f > 0) fne_ |= b;
            if (f > 1) f2_ |= b;
        }
    }
    bool swap_possible_bits(i64 i) {
        const i64 j = assign_[i];
        const std::uint64_t bj = std::uint64_t{1} << j;
        // Once i leaves, j has one more free slot.
        const std::uint64_t roomy = open_ | bj;
        const std::uint64_t two = two_ | (open_ & bj);
        std::uint64_t reloc = 0;  // clusters i itself may move to
        for (std::uint64_t bits = open_ & ~bj & allow_bits_[i]; bits; bits &= bits - 1) {
            const i64 l = ctz64(bits);
            if (tight(i * m_ + l) == 0) reloc |= std::uint64_t{1} << l;
        }
        std::uint64_t nonempty = (fne_ & roomy) | reloc;
        if ((nonempty & (nonempty - 1)) || ((f2_ | (fne_ & reloc)) & two)) return true;
        for (const i64 p : bucket_[i]) {
            const std::uint64_t b = std::uint64_t{1} << pclus_[p];
            if (!(roomy & b)) continue;
            if (nonempty & b) {
                if (two & b) return true;
            } else {
                nonempty |= b;
                if (nonempty & (nonempty - 1)) return true;
            }
        }
        return false;
    }

    // Candidates for a (1,2) swap around placed task i (in cluster j), grouped by cluster:
    // group_[l] lists the tasks k whose placement (k, l) would fit alone once (i, j) is
    // removed, room_[l] the free slots of cluster l then.  Returns the number of candidates.
    i64 gather_swap_candidates(i64 i) {
        const i64 j = assign_[i];
        for (i64 l = 0; l < m_; ++l) {
            auto& g = group_[l];
            g.clear();
            room_[l] = I_.cap[l] - load_[l] + (l == j ? 1 : 0);
            if (room_[l] <= 0) continue;
            for (i64 p : free_[l]) g.push_back(ptask_[p]);
            if (l != j && I_.allowed[i * m_ + l] && tight(i * m_ + l) == 0)
                g.push_back(i);  // i itself, moved to cluster l
        }
        for (i64 p : bucket_[i]) {
            const i64 l = pclus_[p];
            if (room_[l] > 0) group_[l].push_back(ptask_[p]);
        }
        i64 total = 0;
        for (i64 l = 0; l < m_; ++l) total += static_cast<i64>(group_[l].size());
        return total;
    }

    // Calls f(i, k1, l1, k2, l2) (k1 < k2) for every (1,2) swap around placed task i, from
    // the candidates of gather_swap_candidates(i); stops early when f returns true.
    template <class F>
    bool for_each_swap_around(i64 i, F&& f) const {
        for (i64 l1 = 0; l1 < m_; ++l1) {
            const auto& g1 = group_[l1];
            if (g1.empty()) continue;
            for (i64 l2 = l1; l2 < m_; ++l2) {
                const auto& g2 = group_[l2];
                if (g2.empty() || (l1 == l2 && room_[l1] < 2)) continue;
                for (std::size_t a = 0; a < g1.size(); ++a) {
                    const i64 ka = g1[a];
                    for (std::size_t b = (l1 == l2 ? a + 1 : 0); b < g2.size(); ++b) {
                        const i64 kb = g2[b];
                        if (ka == kb || I_.pair_conflict(ka, l1, kb, l2)) continue;
                        if (ka < kb ? f(i, ka, l1, kb, l2) : f(i, kb, l2, ka, l1)) return true;
                    }
                }
            }
        }
        return false;
    }

    // Calls f(i, k1, l1, k2, l2) for every (1,2) swap; stops early when f returns true.
    template <class F>
    bool for_each_swap(F&& f) {
        if (m_ <= 64) swap_masks();
        for (i64 i = 0; i < n_; ++i) {
            if (assign_[i] < 0 || !swap_possible(i)) continue;
            if (gather_swap_candidates(i) >= 2 && for_each_swap_around(i, f)) return true;
        }
        return false;
    }

    // ---- the search ---------------------------------------------------------------------

    // deadline: the call's (coalloc/common/deadline.h); the poll is made from it.
    Counters run(i64 max_iters, std::uint64_t seed, bool self_check, const Deadline& deadline) {
        Counters C;
        Rng rng(seed);
        C.initial_size = size_;
        upper_ = upper_bound();
        // the deadline, Ctrl-C (interrupt.h): also inside each descent, the first one
        // included (issue 36: it ran ~90 ms on 1,000 tasks under load before any poll);
        // the twin looks before each of its moves
        Poll poll(deadline, 4);
        descend(rng, C, self_check, &poll);
        std::vector<i64> best = assign_, current = assign_;
        i64 best_size = size_, cur_size = size_;
        for (i64 it = 0; it < max_iters && best_size < upper_; ++it) {
            poll.tick();
            ++C.iterations;
            const i64 before = size_;
            if (!perturb(rng, C, self_check)) break;  // nothing can be forced in
            if (size_ == before) ++C.plateau_moves;
            descend(rng, C, self_check, &poll);
            bool accept = size_ >= cur_size;
            if (!accept) {
                const double d = static_cast<double>(cur_size - size_);
                const double d_best = static_cast<double>(best_size - size_);
                accept = rng.uniform() < 1.0 / (1.0 + d * d_best);
            }
            if (size_ > best_size) {
                best_size = size_;
                best = assign_;
            }
            if (accept) {
                ++C.accepted;
                cur_size = size_;
                current = assign_;
            } else {
                restore(current);
                if (self_check) check_or_throw();
            }
        }
        restore(best);
        if (self_check) check_or_throw();
        C.best_size = size_;
        return C;
    }

    // Recomputes every incremental structure from scratch; returns an empty string if all
    // agree, else a description of the first mismatch.
    std::string self_check() const {
        std::vector<i64> t(n_ * m_, 0), o(n_ * m_, 0), ld(m_, 0);
        i64 sz = 0;
        for (i64 k = 0; k < n_; ++k) {
            const i64 l = assign_[k];
            if (l < 0) continue;
            ++ld[l];
            ++sz;
            if (members_[l][mpos_[k]] != k) return "members list broken";
            for (i64 e = I_.ptr[k]; e < I_.ptr[k + 1]; ++e)
                I_.for_conflicts(e, l, [&](i64 j) {
                    ++t[I_.nb[e] * m_ + j];
                    o[I_.nb[e] * m_ + j] ^= k;
                });
        }
        if (sz != size_) return "size mismatch";
        for (i64 j = 0; j < m_; ++j) {
            if (ld[j] != load_[j] || ld[j] > I_.cap[j]) return "load mismatch";
            if (static_cast<i64>(members_[j].size()) != ld[j]) return "members size mismatch";
        }
        i64 in_lists = 0;
        for (i64 p = 0; p < n_ * m_; ++p) {
            if (t[p] != tight(p) || o[p] != owner(p))
                return "tightness mismatch at pair " + std::to_string(p);
            const i64 k = p / m_, l = p % m_;
            if (assign_[k] == l && t[p] != 0) return "infeasible allocation";
            const bool cand = assign_[k] < 0 && I_.allowed[p];
            if (cand && t[p] == 0) {
                if (pos_[p] < 0 || free_[l][pos_[p]] != p) return "free list broken";
                ++in_lists;
            } else if (cand && t[p] == 1) {
                const auto& bk = bucket_[o[p]];
                if (pos_[p] < 0 || bk[pos_[p]] != p) return "bucket broken";
                ++in_lists;
            } else if (pos_[p] != -1) {
                return "stale list position";
            }
        }
        i64 listed = 0;
        for (const auto& f : free_) listed += static_cast<i64>(f.size());
        for (const auto& b : bucket_) listed += static_cast<i64>(b.size());
        if (listed != in_lists) return "lists hold extra entries";
        return {};
    }

   private:
    void check_or_throw() const {
        const std::string msg = self_check();
        if (!msg.empty()) throw KernelError("localsearch self-check failed: " + msg);
    }

    // Number of tasks with an allowed cluster, capped by the total capacity.
    i64 upper_bound() const {
        i64 tasks = 0, slots = 0;
        for (i64 k = 0; k < n_; ++k)
            for (i64 l = 0; l < m_; ++l)
                if (I_.allowed[k * m_ + l]) {
                    ++tasks;
                    break;
                }
        for (i64 l = 0; l < m_ && slots < tasks; ++l) slots += std::min(I_.cap[l], tasks);
        return std::min(tasks, slots);
    }

    // -- list membership of pair p (depends on assign, allowed, tight, owner) --
    std::vector<i64>* home(i64 p) {
        if (assign_[ptask_[p]] >= 0 || !I_.allowed[p]) return nullptr;
        if (tight(p) == 0) return &free_[pclus_[p]];
        if (tight(p) == 1) return &bucket_[owner(p)];
        return nullptr;
    }
    void enlist(std::vector<i64>& list, i64 p) {
        pos_[p] = static_cast<i64>(list.size());
        list.push_back(p);
    }
    void unlist(std::vector<i64>& list, i64 p) {
        const i64 q = list.back();
        list[pos_[p]] = q;
        pos_[q] = pos_[p];
        list.pop_back();
        pos_[p] = -1;
    }
    void attach(i64 p) {
        std::vector<i64>* h = home(p);
        if (!h) return;
        pos_[p] = static_cast<i64>(h->size());
        h->push_back(p);
    }
    void detach(i64 p) {
        if (pos_[p] < 0) return;
        std::vector<i64>* h = home(p);
        const i64 q = h->back();
        (*h)[pos_[p]] = q;
        pos_[q] = pos_[p];
        h->pop_back();
        pos_[p] = -1;
    }

    // With m <= kMaskM the placements that conflict with (k, l) are listed once, the first
    // time (k, l) is placed or removed: carena_[cbeg_[q] .. cend_[q]) for q = k*m+l holds
    // x*m+j for every allowed (x, j) conflicting with it, in the order of visit below.
    // Returns false (cbeg_[q] stays -1) if that is not possible or the arena is full.
    bool list_pairs(i64 q) {
        const i64 m = m_;
        if (m > Instance::kMaskM || n_ * m >= (i64{1} << 31)) return false;
        const i64 k = q / m, l = q % m;
        const std::uint64_t* cm = I_.cmask.data();
        const i64* nb = I_.nb.data();
        const unsigned shift = static_cast<unsigned>(l * m);
        const std::uint64_t low = (std::uint64_t{1} << m) - 1;
        const i64 e0 = I_.ptr[k], e1 = I_.ptr[k + 1];
        const i64 start = static_cast<i64>(carena_.size());
        // At most m pairs per link; reserve them so the loop writes without checks.
        if (start + (e1 - e0) * m > kMaxPairs) return false;
        carena_.resize(static_cast<std::size_t>(start + (e1 - e0) * m));
        std::int32_t* out = carena_.data();
        i64 end = start;
        for (i64 e = e0; e < e1; ++e) {
            // Branch-free compaction: every candidate is written, the end only advances past
            // the conflicting ones (the m slots reserved per link leave room for this).
            const std::uint64_t bits = (cm[e] >> shift) & low;
            const std::int32_t base = static_cast<std::int32_t>(nb[e] * m);
            for (i64 j = 0; j < m; ++j) {
                out[end] = base + static_cast<std::int32_t>(j);
                end += static_cast<i64>((bits >> j) & 1U);
            }
        }
        carena_.resize(static_cast<std::size_t>(end));
        cbeg_[q] = start;
        cend_[q] = end;
        return true;
    }

    // Calls visit(p) for every allowed placement p = (x, j) (j ascending per link, links in
    // adjacency order) that conflicts with (k, l), from k's links (the order of list_pairs).
    // Loop bounds, m and the array pointers are held in locals: the i64 stores of the
    // callers could otherwise alias them.
    template <class F>
    void for_conflict_pairs(i64 k, i64 l, F&& visit) const {
        const i64 m = m_;
        const i64* nb = I_.nb.data();
        const i64 e0 = I_.ptr[k], e1 = I_.ptr[k + 1];
        if (m <= Instance::kMaskM) {
            const std::uint64_t* cm = I_.cmask.data();
            const unsigned shift = static_cast<unsigned>(l * m);
            const std::uint64_t low = (std::uint64_t{1} << m) - 1;
            for (i64 e = e0; e < e1; ++e) {
                std::uint64_t bits = (cm[e] >> shift) & low;
                if (!bits) continue;
                const i64 base = nb[e] * m;
                do {
                    visit(base + static_cast<i64>(ctz64(bits)));
                    bits &= bits - 1;
                } while (bits);
            }
        } else {
            for (i64 e = e0; e < e1; ++e) {
                const i64 x = nb[e];
                I_.for_conflicts(e, l, [&](i64 j) { visit(x * m + j); });
            }
        }
    }

    // With kPlacedBit set on every pair of a placed task, the low half of tw_[p] is 0, 1
    // or 2 only for pairs of unplaced tasks, i.e. the pairs that are kept in lists: place and
    // remove need not look at the task's assignment.
    static constexpr std::uint64_t kPlacedBit = std::uint64_t{1} << 31;
    i64 tight(i64 p) const { return static_cast<i64>(tw_[p] & (kPlacedBit - 1)); }
    i64 owner(i64 p) const { return static_cast<i64>(tw_[p] >> 32); }

    // The counter and list updates of placing (kAdd) or removing task k in / from cluster l:
    // every conflicting pair p gets tight +-1 and owner ^ k, and p changes lists if its task
    // is unplaced (low half of tw_[p] 0 or 1 on placing, 1 or 2 on removing; see
    // kPlacedBit): on placing from its free list to bucket k, or out of its owner's bucket;
    // on removing from bucket k to its free list, or into the bucket of the one task left.
    //
    // With a list of the pairs (see list_pairs) this takes two passes: the counters of every
    // pair, branch-free, collecting the pairs to move; then their list moves, in the same
    // order.  A list move reads no counters, so this gives the result of the interleaved
    // order, which the fallback (one pass, a branch per pair) follows.
    template <bool kAdd>
    void tighten(i64 k, i64 l) {
        std::uint64_t* tw = tw_.data();
        const i64* pclus = pclus_.data();
        const std::uint64_t kx = static_cast<std::uint64_t>(k) << 32;
        auto moves = [](std::uint64_t w) {  // w: tw_[p] before the update
            return kAdd ? static_cast<std::uint32_t>(w) <= 1
                        : static_cast<std::uint32_t>(w) - 1 <= 1;
        };
        auto update = [kx](std::uint64_t w) { return kAdd ? (w + 1) ^ kx : (w - 1) ^ kx; };
        auto move = [&](i64 p, std::uint64_t w) {  // w: tw_[p] before the update
            const std::uint32_t t = static_cast<std::uint32_t>(w);
            if (kAdd) {
                if (t == 0) {
                    unlist(free_[pclus[p]], p);
                    enlist(bucket_[k], p);
                } else {
                    unlist(bucket_[static_cast<i64>(w >> 32)], p);
                }
            } else {
                if (t == 1) {
                    unlist(bucket_[k], p);
                    enlist(free_[pclus[p]], p);
                } else {
                    enlist(bucket_[static_cast<i64>((w ^ kx) >> 32)], p);
                }
            }
        };
        const i64 q = k * m_ + l;
        if (cbeg_[q] >= 0 || list_pairs(q)) {
            const std::int32_t* cp = carena_.data();
            std::int32_t* moving = moving_.data();
            const i64 c0 = cbeg_[q], c1 = cend_[q];
            i64 n_moving = 0;
            for (i64 c = c0; c < c1; ++c) {
                const std::int32_t p = cp[c];
                const std::uint64_t w = tw[p];
                tw[p] = update(w);
                moving[n_moving] = p;
                n_moving += moves(w) ? 1 : 0;
            }
            for (i64 s = 0; s < n_moving; ++s) {
                const i64 p = moving[s];
                const std::uint64_t w = tw[p] ^ kx;  // undo the update
                move(p, kAdd ? w - 1 : w + 1);
            }
            return;
        }
        for_conflict_pairs(k, l, [&](i64 p) {
            const std::uint64_t w = tw[p];
            if (moves(w)) move(p, w);
            tw[p] = update(w);
        });
    }

    // Place unplaced task k in cluster l (the caller guarantees feasibility or is about to
    // restore it).
    void place(i64 k, i64 l) {
        for (i64 q = 0; q < m_; ++q) detach(k * m_ + q);
        assign_[k] = l;
        ++load_[l];
        ++size_;
        mpos_[k] = static_cast<i64>(members_[l].size());
        members_[l].push_back(k);
        placed_[k >> 6] |= std::uint64_t{1} << (k & 63);
        for (i64 q = 0; q < m_; ++q) tw_[k * m_ + q] |= kPlacedBit;
        tighten<true>(k, l);
    }

    void remove(i64 k) {
        const i64 l = assign_[k];
        tighten<false>(k, l);
        for (i64 q = 0; q < m_; ++q) tw_[k * m_ + q] &= ~kPlacedBit;
        placed_[k >> 6] &= ~(std::uint64_t{1} << (k & 63));
        const i64 last = members_[l].back();
        members_[l][mpos_[k]] = last;
        mpos_[last] = mpos_[k];
        members_[l].pop_back();
        mpos_[k] = -1;
        assign_[k] = -1;
        --load_[l];
        --size_;
        for (i64 q = 0; q < m_; ++q) attach(k * m_ + q);
    }

    // Calls f(x) for the placed tasks x in [from, to) in increasing order until it returns
    // true (then returns true).  f may remove x itself.
    template <class F>
    bool for_placed(i64 from, i64 to, F&& f) const {
        if (from >= to) return false;
        const std::uint64_t* words = placed_.data();
        const i64 w0 = from >> 6, w1 = (to - 1) >> 6;
        for (i64 w = w0; w <= w1; ++w) {
            std::uint64_t bits = words[w];
            if (w == w0) bits &= ~std::uint64_t{0} << (from & 63);
            if (w == w1 && ((to & 63) != 0)) bits &= (std::uint64_t{1} << (to & 63)) - 1;
            while (bits) {
                if (f((w << 6) + ctz64(bits))) return true;
                bits &= bits - 1;
            }
        }
        return false;
    }

    // (0,1): the insertable pair of highest priority (ties: random).
    bool insert_one(Rng& rng) {
        i64 best = -1, ties = 0;
        double best_prio = 0.0;
        for_each_insertion([&](i64 k, i64 l) {
            const double pr = I_.prio[k * m_ + l];
            if (best < 0 || pr > best_prio) {
                best = k * m_ + l;
                best_prio = pr;
                ties = 1;
            } else if (pr == best_prio && rng.below(++ties) == 0) {
                best = k * m_ + l;
            }
            return false;
        });
        if (best < 0) return false;
        place(best / m_, best % m_);
        return true;
    }

    // (1,2): the first swap found, scanning the placed tasks from a random one.
    bool swap_one(Rng& rng) {
        if (size_ == 0) return false;
        const i64 start = rng.below(n_);
        i64 mv[5] = {-1, -1, -1, -1, -1};
        if (m_ <= 64) swap_masks();
        auto around = [&](i64 i) {
            if (!swap_possible(i) || gather_swap_candidates(i) < 2) return false;
            return for_each_swap_around(i, [&](i64 a, i64 k1, i64 l1, i64 k2, i64 l2) {
                mv[0] = a;
                mv[1] = k1;
                mv[2] = l1;
                mv[3] = k2;
                mv[4] = l2;
                return true;
            });
        };
        // The placed tasks from start on, wrapping around.
        if (!for_placed(start, n_, around)) for_placed(0, start, around);
        if (mv[0] < 0) return false;
        remove(mv[0]);
        place(mv[1], mv[2]);
        place(mv[3], mv[4]);
        return true;
    }

    // poll: the search's (run), ticked before each move; none: no look at the clock.
    void descend(Rng& rng, Counters& C, bool self_check, Poll* poll = nullptr) {
        for (;;) {
            if (poll) poll->tick();
            if (insert_one(rng)) {
                ++C.insertions;
            } else if (swap_one(rng)) {
                ++C.swaps_1_2;
            } else {
                break;
            }
            if (self_check) check_or_throw();
        }
    }

    // Force placement (k, l) in, removing what it conflicts with (and, if the cluster is
    // full, one random task of it).
    void force(i64 k, i64 l, Rng& rng) {
        if (assign_[k] >= 0) remove(k);
        // The placed neighbours x of k in increasing order (that of k's adjacency), through
        // the links or, when there are fewer placed tasks, through the placed set.
        if (!I_.eidx.empty() && size_ < I_.ptr[k + 1] - I_.ptr[k]) {
            const std::int32_t* row = &I_.eidx[k * n_];
            for_placed(0, n_, [&](i64 x) {
                const i64 e = row[x];
                if (e >= 0 && I_.edge_conflict(e, l, assign_[x])) remove(x);
                return false;
            });
        } else {
            for (i64 e = I_.ptr[k]; e < I_.ptr[k + 1]; ++e) {
                const i64 x = I_.nb[e];
                if (assign_[x] >= 0 && I_.edge_conflict(e, l, assign_[x])) remove(x);
            }
        }
        if (load_[l] >= I_.cap[l]) remove(members_[l][rng.below(load_[l])]);
        place(k, l);
    }

    // A uniformly random allowed pair (k, l) other than k's current placement, or -1.
    i64 random_pair(Rng& rng) {
        if (n_ == 0 || m_ == 0) return -1;
        for (int tries = 0; tries < 32; ++tries) {
            const i64 k = rng.below(n_), l = rng.below(m_);
            if (I_.allowed[k * m_ + l] && assign_[k] != l) return k * m_ + l;
        }
        i64 p = -1, seen = 0;  // sparse allowed: scan
        for (i64 q = 0; q < n_ * m_; ++q)
            if (I_.allowed[q] && assign_[ptask_[q]] != pclus_[q] && rng.below(++seen) == 0) p = q;
        return p;
    }

    // One perturbation: usually one forced pair; with probability 1 / (2 |S|) more (ARW).
    // Returns false if no pair can be forced in.
    bool perturb(Rng& rng, Counters& C, bool self_check) {
        i64 count = 1;
        if (size_ > 0 && rng.uniform() * 2.0 * static_cast<double>(size_) < 1.0) {
            count = 2;
            while (count < n_ && (rng.next() & 1)) ++count;
        }
        bool any = false;
        for (i64 c = 0; c < count; ++c) {
            const i64 p = random_pair(rng);
            if (p < 0) break;
            force(ptask_[p], pclus_[p], rng);
            ++C.perturbations;
            any = true;
            if (self_check) check_or_throw();
        }
        return any;
    }

    // Bring the state to allocation target (feasible): remove every task whose placement
    // differs, then add the target placements.
    void restore(const std::vector<i64>& target) {
        for (i64 k = 0; k < n_; ++k)
            if (assign_[k] >= 0 && assign_[k] != target[k]) remove(k);
        for (i64 k = 0; k < n_; ++k)
            if (target[k] >= 0 && assign_[k] < 0) place(k, target[k]);
    }

    const Instance& I_;
    i64 n_, m_;
    i64 size_ = 0, upper_ = 0;
    std::vector<i64> assign_, load_;
    // tw_[p]: tight(p) in bits 0..30, bit 31 (kPlacedBit) set while the task of p is
    // placed, owner(p) in bits 32..63 (see the top comment).
    std::vector<std::uint64_t> tw_;
    std::vector<i64> pos_;
    std::vector<std::vector<i64>> free_, bucket_, members_;
    std::vector<i64> mpos_;
    std::vector<std::uint64_t> placed_;  // bit k: task k is placed
    std::vector<i64> ptask_, pclus_;  // task and cluster of pair p = k*m+l
    std::vector<std::vector<i64>> group_;
    std::vector<i64> room_, gsize_;
    std::uint64_t open_ = 0, two_ = 0, fne_ = 0, f2_ = 0;
    std::vector<std::uint64_t> allow_bits_;  // m <= 64: bit l of task k: (k, l) allowed
    // Lists of conflicting placements, built on demand (see list_pairs), at most kMaxPairs.
    static constexpr i64 kMaxPairs = i64{1} << 23;
    std::vector<i64> cbeg_, cend_;
    std::vector<std::int32_t> carena_;
    std::vector<std::int32_t> moving_;  // scratch of tighten(), >= any list's length
};

}  // namespace localsearch
}  // namespace coalloc
