// Incremental maximum-weight bipartite b-matching (tasks -> clusters) for coalloc.
//
// Problem
// -------
// n tasks, m clusters.  Task i may go to cluster j only if allowed[i, j]; cluster j holds at
// most capacity[j] tasks; every task goes to at most one cluster.  Objective:
//   * cardinality_first = true : maximise (number of matched tasks, total weight)
//                                lexicographically -- exactly, with no big-M constant;
//   * cardinality_first = false: maximise the total weight only.
//
// Method
// ------
// This is a transportation problem, i.e. a min-cost flow s -> task -> cluster -> t.  Every task
// node carries one unit, so the residual graph condenses onto the m + 2 nodes
// {clusters 0..m-1, S = m (the pool of free tasks), T = m + 1 (spare capacity)}:
//
//   S -> j   free task i, allowed[i, j]                  gain (+1,  w[i, j])
//   j -> j'  task k now in j, allowed[k, j'], j' != j    gain ( 0,  w[k, j'] - w[k, j])
//   j -> S   task k now in j (unassign it)               gain (-1, -w[k, j])
//   j -> T   load[j] < capacity[j]                       gain ( 0,  0)
//   T -> j   load[j] > 0                                 gain ( 0,  0)
//   T -> S   always (closes an augmenting path)          gain ( 0,  0)
//   S -> T   if some task is matched (closes a reducing path)  gain (0, 0)
//
// (the count component is 0 everywhere when cardinality_first is false).  For every task arc
// only the best task (largest gain, lowest index on ties) is kept; arcs leaving one node use
// tasks that sit in that node, so a simple cycle of the condensed graph is a valid exchange,
// and any improving cycle of the full residual graph maps to an improving simple cycle here.
// The matching is optimal iff the condensed graph has no positive-gain cycle.
//
// The gain of a task arc g -> t depends only on the task and on (g, t), so for every pair
// (group g in {clusters, S}, target t) a binary max-heap holds the tasks of group g keyed by
// that gain, with lazy deletion: an entry is stale once its task has moved (per-task stamp)
// or the pair was forbidden, and stale entries are dropped when they reach the top or when
// the heap is compacted (size > 2 * group size + 32).  Rebuilding the condensed arcs is then
// O(m^2) heap peeks, and moving one task costs O(m log n).  (build_arcs_by_scan() recomputes
// the same arcs with one O(n m) pass over the tasks; self_check() compares the two.)
//
// solve() repeats: rebuild the condensed arcs from the heap tops, then
//   (A) unless the state is known to be clean, look for a positive cycle avoiding the T-S
//       arcs (Bellman-Ford from a virtual source) and cancel it;
//   (B) otherwise take the maximum-gain S -> T path (Bellman-Ford from S) and augment along it
//       if it improves (successive shortest paths keep the state clean);
//   (C) (weight mode only) take the maximum-gain T -> S path and un-augment along it if it
//       improves;
// until none of the three applies.  From an empty matching this is successive shortest paths
// (one augmentation per matched task, no cycle ever needed); after forbid() unassigns one
// task, a couple of cycle cancellations and at most a few augmentations restore optimality.
// (With cardinality_first every simple S -> T path has count exactly +1 and every cycle
// count 0, so (B) augments whenever any augmenting path exists and (C) is never useful.)
//
// Gains are pairs (int64 count, double weight) compared lexicographically.  A gain is
// "improving" when count > 0, or count == 0 and weight > eps, and Bellman-Ford relaxes an arc
// only when it improves a label by more than eps in the weight component (counts are exact).
// eps = 1e-12 * max|w| (over allowed pairs) * max(1, (m + 2) / 200): larger than the rounding
// error of any simple cycle of the condensed graph, so the exact objective strictly increases
// at every step and solve() always terminates; the result is optimal to within eps.
// Bellman-Ford stops after 3 (m + 2) rounds; not converging by then (which would take
// rounding trouble at the eps scale) is treated as "nothing improving found".
//
// Ties are broken deterministically (scan order, lowest task index, fixed arc order), so the
// same input always gives the same output.  The class is not thread-safe by itself.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace coalloc {

class BMatcher {
public:
    // weights: n*m row-major doubles, finite on allowed pairs (normally >= 0, but any sign
    // works); allowed: n*m bytes (nonzero = allowed); capacity: m non-negative entries.
    // All three are copied.  Throws std::invalid_argument on bad sizes or values.
    BMatcher(const double* weights, const std::uint8_t* allowed, const std::int64_t* capacity,
             std::int64_t n, std::int64_t m, bool cardinality_first)
        : n_(n), m_(static_cast<int>(m)), card_(cardinality_first) {
        if (n < 0 || m < 0) throw std::invalid_argument("n and m must be non-negative");
        if (m > (std::int64_t{1} << 20)) throw std::invalid_argument("too many clusters");
        const std::size_t nm = static_cast<std::size_t>(n) * static_cast<std::size_t>(m);
        w_.assign(weights, weights + nm);
        a_.resize(nm);
        double maxw = 0.0;
        for (std::size_t k = 0; k < nm; ++k) {
            a_[k] = allowed[k] ? 1 : 0;
            if (a_[k]) {
                if (!std::isfinite(w_[k]))
                    throw std::invalid_argument("weights must be finite on allowed pairs");
                maxw = std::max(maxw, std::fabs(w_[k]));
            }
        }
        cap_.resize(m_);
        for (int j = 0; j < m_; ++j) {
            if (capacity[j] < 0) throw std::invalid_argument("capacity must be non-negative");
            cap_[j] = capacity[j];
        }
        N_ = m_ + 2;
        S_ = m_;
        T_ = m_ + 1;
        eps_ = 1e-12 * maxw * std::max(1.0, N_ / 200.0);
        assign_.assign(static_cast<std::size_t>(n), -1);
        load_.assign(m_, 0);
        first_old_.assign(static_cast<std::size_t>(n), kUntouched);
        const std::size_t M1 = static_cast<std::size_t>(m_) + 1;
        stamp_.assign(static_cast<std::size_t>(n), 0);
        group_size_.assign(M1, 0);
        group_size_[static_cast<std::size_t>(m_)] = n;
        heap_.assign(M1 * M1, {});
        top_task_.assign(M1 * M1, -1);
        top_key_.assign(M1 * M1, 0.0);
        dirty_group_.assign(M1, 1);
        for (std::int64_t i = 0; i < n; ++i) push_entries(i, m_, false);
        for (auto& h : heap_) std::make_heap(h.begin(), h.end(), EntryLess{});
        dist_.resize(N_);
        reach_.resize(N_);
        dirty_.resize(N_);
        out_start_.assign(static_cast<std::size_t>(N_) + 1, 0);
        pred_.resize(N_);
        mark_.resize(N_);
    }

    // Bring the matching to optimum.  Appends to *tasks / *old every task whose cluster now
    // differs from the one it had when solve() was called (old = -1: was unassigned), in
    // increasing task order.
    void solve(std::vector<std::int64_t>* tasks, std::vector<std::int64_t>* old) {
        for (;;) {
            build_arcs();
            if (!clean_) {
                const int r = bellman_ford(-1, -1);
                if (r == kCycle) {
                    apply(cycle_);
                    ++n_cycles_;
                    continue;
                }
                clean_ = true;  // kConverged, or gave up on a numerical near-zero cycle
            }
            int r = bellman_ford(S_, T_);
            if (r == kCycle) {
                apply(cycle_);
                ++n_cycles_;
                clean_ = false;
                continue;
            }
            if (r == kConverged && reach_[T_] && improving(dist_[T_]) && path_to(S_, T_)) {
                apply(cycle_);
                ++n_augmentations_;
                continue;
            }
            if (!card_ && n_alloc_ > 0) {
                r = bellman_ford(T_, S_);
                if (r == kCycle) {
                    apply(cycle_);
                    ++n_cycles_;
                    clean_ = false;
                    continue;
                }
                if (r == kConverged && reach_[S_] && improving(dist_[S_]) && path_to(T_, S_)) {
                    apply(cycle_);
                    ++n_augmentations_;
                    continue;
                }
            }
            break;
        }
        std::sort(touched_.begin(), touched_.end());
        for (std::int64_t i : touched_) {
            const std::int64_t was = first_old_[static_cast<std::size_t>(i)];
            if (was != assign_[static_cast<std::size_t>(i)]) {
                if (tasks) tasks->push_back(i);
                if (old) old->push_back(was);
            }
            first_old_[static_cast<std::size_t>(i)] = kUntouched;
        }
        touched_.clear();
    }

    // allowed[i, j] = 0 from now on.  If task i sits in cluster j it is unassigned and true is
    // returned.  Does not re-solve.
    bool forbid(std::int64_t i, std::int64_t j) {
        if (i < 0 || i >= n_ || j < 0 || j >= m_)
            throw std::invalid_argument("forbid: task or cluster index out of range");
        const std::size_t k = static_cast<std::size_t>(i) * m_ + static_cast<std::size_t>(j);
        a_[k] = 0;
        const std::int64_t c = assign_[static_cast<std::size_t>(i)];
        if (c != j) {
            dirty_group_[static_cast<std::size_t>(c < 0 ? m_ : c)] = 1;  // (group, j) top may change
            return false;
        }
        move(i, -1, /*log=*/false);  // solve() reports changes relative to its own start
        clean_ = false;
        return true;
    }

    std::int64_t n_tasks() const { return n_; }
    int n_clusters() const { return m_; }
    bool cardinality_first() const { return card_; }
    const std::vector<std::int64_t>& assignment() const { return assign_; }
    std::int64_t n_allocated() const { return n_alloc_; }
    std::int64_t n_augmentations() const { return n_augmentations_; }
    std::int64_t n_cycle_cancellations() const { return n_cycles_; }
    double epsilon() const { return eps_; }

    // Sum of w[i, assignment[i]] over matched tasks, in task order.
    double total_weight() const {
        double s = 0.0;
        for (std::int64_t i = 0; i < n_; ++i) {
            const std::int64_t c = assign_[static_cast<std::size_t>(i)];
            if (c >= 0) s += w_[static_cast<std::size_t>(i) * m_ + static_cast<std::size_t>(c)];
        }
        return s;
    }

    // Consistency check for the tests: the heap tops give the same condensed arcs as a full
    // scan of the tasks, and loads / counts agree with the assignment.
    bool self_check() {
        std::vector<std::int64_t> load(static_cast<std::size_t>(m_), 0);
        std::int64_t alloc = 0;
        for (std::int64_t i = 0; i < n_; ++i) {
            const std::int64_t c = assign_[static_cast<std::size_t>(i)];
            if (c < -1 || c >= m_) return false;
            if (c >= 0) {
                if (!a_[static_cast<std::size_t>(i) * m_ + static_cast<std::size_t>(c)]) return false;
                ++load[static_cast<std::size_t>(c)];
                ++alloc;
            }
        }
        if (load != load_ || alloc != n_alloc_) return false;
        for (int j = 0; j < m_; ++j) {
            if (load_[static_cast<std::size_t>(j)] > cap_[static_cast<std::size_t>(j)]) return false;
            if (group_size_[static_cast<std::size_t>(j)] != load_[static_cast<std::size_t>(j)]) return false;
        }
        if (group_size_[static_cast<std::size_t>(m_)] != n_ - n_alloc_) return false;
        build_arcs();
        const std::vector<Arc> from_heaps = arcs_;
        build_arcs_by_scan();
        if (from_heaps.size() != arcs_.size()) return false;
        for (std::size_t k = 0; k < arcs_.size(); ++k) {
            const Arc &x = from_heaps[k], &y = arcs_[k];
            if (x.u != y.u || x.v != y.v || x.task != y.task || x.g.c != y.g.c || x.g.w != y.g.w)
                return false;
        }
        return true;
    }

private:
    struct Gain {
        std::int64_t c;
        double w;
    };
    struct Arc {
        int u, v;
        std::int64_t task;  // -1 for the structural arcs j->T, T->j
        Gain g;
    };

    struct Entry {
        double key;  // gain (weight part) of the arc this task would provide
        std::int64_t task;
        std::uint64_t stamp;
    };
    struct EntryLess {  // heap order: larger key first, then smaller task index
        bool operator()(const Entry& a, const Entry& b) const {
            return a.key < b.key || (a.key == b.key && a.task > b.task);
        }
    };

    static constexpr std::int64_t kUntouched = -2;
    static constexpr int kConverged = 0, kCycle = 1, kGaveUp = 2;

    // ---- comparisons -------------------------------------------------------------------
    bool better(const Gain& a, const Gain& b) const {
        return a.c > b.c || (a.c == b.c && a.w > b.w + eps_);
    }
    bool improving(const Gain& g) const { return g.c > 0 || (g.c == 0 && g.w > eps_); }

    // ---- condensed graph ---------------------------------------------------------------
    // Groups: cluster c (tasks in c) or m_ (free tasks, node S).  Targets: cluster j or m_
    // (node S: unassign).  Heap (g, t) lives at heap_[g * (m + 1) + t].

    std::size_t hid(int g, int t) const {
        return static_cast<std::size_t>(g) * (static_cast<std::size_t>(m_) + 1) +
               static_cast<std::size_t>(t);
    }

    // Entries of task i for every arc leaving its group g; push_heap unless bulk loading.
    void push_entries(std::int64_t i, int g, bool heapify) {
        const std::size_t row = static_cast<std::size_t>(i) * static_cast<std::size_t>(m_);
        const double* w = w_.data() + row;
        const std::uint8_t* a = a_.data() + row;
        const std::uint64_t st = stamp_[static_cast<std::size_t>(i)];
        const double base = (g == m_) ? 0.0 : -w[g];
        auto push = [&](int t, double key) {
            std::vector<Entry>& h = heap_[hid(g, t)];
            h.push_back(Entry{key, i, st});
            if (heapify) std::push_heap(h.begin(), h.end(), EntryLess{});
        };
        if (g != m_) push(m_, base);
        for (int t = 0; t < m_; ++t)
            if (a[t] && t != g) push(t, w[t] + base);
    }

    bool valid(const Entry& e, int t) const {
        if (stamp_[static_cast<std::size_t>(e.task)] != e.stamp) return false;
        return t == m_ ||
               a_[static_cast<std::size_t>(e.task) * m_ + static_cast<std::size_t>(t)] != 0;
    }

    // Best valid entry of heap (g, t), or nullptr.
    const Entry* top(int g, int t) {
        std::vector<Entry>& h = heap_[hid(g, t)];
        while (!h.empty() && !valid(h.front(), t)) {
            std::pop_heap(h.begin(), h.end(), EntryLess{});
            h.pop_back();
        }
        return h.empty() ? nullptr : &h.front();
    }

    // Drop every stale entry of the heaps of group g once they have grown too large.
    void maybe_compact(int g) {
        const std::size_t limit =
            2 * static_cast<std::size_t>(group_size_[static_cast<std::size_t>(g)]) + 32;
        for (int t = 0; t <= m_; ++t) {
            if (t == g) continue;
            std::vector<Entry>& h = heap_[hid(g, t)];
            if (h.size() <= limit) continue;
            h.erase(std::remove_if(h.begin(), h.end(),
                                   [&](const Entry& e) { return !valid(e, t); }),
                    h.end());
            std::make_heap(h.begin(), h.end(), EntryLess{});
        }
    }

    // Move task i to cluster `to` (-1: unassign), keeping loads, heaps and (if log) the
    // change log of solve().
    void move(std::int64_t i, std::int64_t to, bool log = true) {
        const std::size_t ii = static_cast<std::size_t>(i);
        const std::int64_t was = assign_[ii];
        if (log && first_old_[ii] == kUntouched) {
            first_old_[ii] = was;
            touched_.push_back(i);
        }
        assign_[ii] = to;
        const int g_old = was < 0 ? m_ : static_cast<int>(was);
        const int g_new = to < 0 ? m_ : static_cast<int>(to);
        dirty_group_[static_cast<std::size_t>(g_old)] = 1;
        dirty_group_[static_cast<std::size_t>(g_new)] = 1;
        --group_size_[static_cast<std::size_t>(g_old)];
        ++group_size_[static_cast<std::size_t>(g_new)];
        if (was >= 0) {
            --load_[static_cast<std::size_t>(was)];
            --n_alloc_;
        }
        if (to >= 0) {
            ++load_[static_cast<std::size_t>(to)];
            ++n_alloc_;
        }
        ++stamp_[ii];  // invalidates every entry of the old group
        push_entries(i, g_new, true);
        maybe_compact(g_new);
    }

    // Field by field (building a temporary Arc and copying it stalls on store forwarding).
    void add_arc(int u, int v, std::int64_t task, std::int64_t c, double w) {
        Arc& e = arcs_.emplace_back();
        e.u = u;
        e.v = v;
        e.task = task;
        e.g.c = c;
        e.g.w = w;
    }

    // Structural arcs j->T, T->j, then the out-arc index (CSR by tail, arc order kept).
    void add_structural_arcs() {
        for (int j = 0; j < m_; ++j) {
            if (load_[static_cast<std::size_t>(j)] < cap_[static_cast<std::size_t>(j)])
                add_arc(j, T_, -1, 0, 0.0);
            if (load_[static_cast<std::size_t>(j)] > 0)
                add_arc(T_, j, -1, 0, 0.0);
        }
        std::fill(out_start_.begin(), out_start_.end(), 0);
        for (const Arc& e : arcs_) ++out_start_[e.u + 1];
        for (int u = 0; u < N_; ++u) out_start_[u + 1] += out_start_[u];
        out_arcs_.resize(arcs_.size());
        fill_pos_.assign(out_start_.begin(), out_start_.end() - 1);
        for (int k = 0; k < static_cast<int>(arcs_.size()); ++k)
            out_arcs_[static_cast<std::size_t>(fill_pos_[arcs_[static_cast<std::size_t>(k)].u]++)] = k;
    }

    std::int64_t arc_count(int u, int v) const {
        if (!card_) return 0;
        return (u == m_) ? 1 : (v == m_ ? -1 : 0);
    }

    // Condensed arcs from the heap tops (arc order: u, then v, then structural arcs).
    // Only the groups touched since the last call (moves, forbids) are re-peeked.
    void build_arcs() {
        for (int u = 0; u <= m_; ++u) {
            if (!dirty_group_[static_cast<std::size_t>(u)]) continue;
            dirty_group_[static_cast<std::size_t>(u)] = 0;
            for (int v = 0; v <= m_; ++v) {
                if (u == v) continue;
                const Entry* e = top(u, v);
                top_task_[hid(u, v)] = e ? e->task : -1;
                top_key_[hid(u, v)] = e ? e->key : 0.0;
            }
        }
        arcs_.clear();
        for (int u = 0; u <= m_; ++u) {
            for (int v = 0; v <= m_; ++v) {
                const std::size_t k = hid(u, v);
                if (u != v && top_task_[k] >= 0)
                    add_arc(u, v, top_task_[k], arc_count(u, v), top_key_[k]);
            }
        }
        add_structural_arcs();
    }

    // The same arcs by one pass over all tasks (reference for self_check()).
    void build_arcs_by_scan() {
        const int m = m_;
        const std::size_t M1 = static_cast<std::size_t>(m) + 1;
        std::vector<double> bw(M1 * M1, 0.0);
        std::vector<std::int64_t> bt(M1 * M1, -1);
        const double* w = w_.data();
        const std::uint8_t* a = a_.data();
        for (std::int64_t i = 0; i < n_; ++i, w += m, a += m) {
            const std::int64_t c = assign_[static_cast<std::size_t>(i)];
            const int g = c < 0 ? m : static_cast<int>(c);
            const double base = c < 0 ? 0.0 : -w[c];
            for (int t = 0; t <= m; ++t) {
                if (t == g) continue;
                if (t < m && !a[t]) continue;
                if (t == m && c < 0) continue;
                const double key = (t == m) ? base : w[t] + base;
                const std::size_t k = hid(g, t);
                if (bt[k] < 0 || key > bw[k]) {
                    bw[k] = key;
                    bt[k] = i;
                }
            }
        }
        arcs_.clear();
        for (int u = 0; u <= m; ++u)
            for (int v = 0; v <= m; ++v)
                if (u != v && bt[hid(u, v)] >= 0)
                    add_arc(u, v, bt[hid(u, v)], arc_count(u, v), bw[hid(u, v)]);
        add_structural_arcs();
    }

    // Bellman-Ford for maximum gain over arcs_ (never the T-S bypass arcs).
    // src < 0: virtual source (every node starts at gain 0), used to find positive cycles.
    // src >= 0: paths from src; arcs into src and out of dst are skipped.
    // Returns kCycle with cycle_ filled when the predecessor graph closes an improving cycle,
    // kConverged when labels are stable, kGaveUp after 3N rounds (numerical pathologies only).
    int bellman_ford(int src, int dst) {
        const int N = N_;
        for (int v = 0; v < N; ++v) {
            dist_[v] = Gain{0, 0.0};
            reach_[v] = (src < 0 || v == src) ? 1 : 0;
            dirty_[v] = reach_[v];
            pred_[v] = -1;
        }
        // Bellman-Ford-Moore: a round scans the out-arcs of every node whose label changed
        // since its arcs were last scanned, so it never does less than a plain BF pass.
        for (int round = 0; round < 3 * N; ++round) {
            bool any = false;
            for (int u = 0; u < N; ++u) {
                if (!dirty_[u]) continue;
                dirty_[u] = 0;
                if (u == dst) continue;
                any = true;
                for (int p = out_start_[u]; p < out_start_[u + 1]; ++p) {
                    const int k = out_arcs_[static_cast<std::size_t>(p)];
                    const Arc& e = arcs_[static_cast<std::size_t>(k)];
                    if (e.v == src) continue;
                    const Gain cand{dist_[u].c + e.g.c, dist_[u].w + e.g.w};
                    if (!reach_[e.v] || better(cand, dist_[e.v])) {
                        dist_[e.v] = cand;
                        reach_[e.v] = 1;
                        pred_[e.v] = k;
                        dirty_[e.v] = 1;
                    }
                }
            }
            if (!any) return kConverged;
            if (find_pred_cycle()) return kCycle;
        }
        return kGaveUp;
    }

    // Look for a cycle in the predecessor graph whose gain is improving; fill cycle_.
    bool find_pred_cycle() {
        const int N = N_;
        std::fill(mark_.begin(), mark_.end(), -1);
        for (int s = 0; s < N; ++s) {
            int v = s;
            while (v >= 0 && mark_[v] < 0) {
                mark_[v] = s;
                v = pred_[v] < 0 ? -1 : arcs_[static_cast<std::size_t>(pred_[v])].u;
            }
            if (v < 0 || mark_[v] != s) continue;
            // v lies on a cycle of the walk started at s.
            cycle_.clear();
            Gain g{0, 0.0};
            int x = v;
            do {
                const Arc& e = arcs_[static_cast<std::size_t>(pred_[x])];
                cycle_.push_back(pred_[x]);
                g.c += e.g.c;
                g.w += e.g.w;
                x = e.u;
            } while (x != v);
            if (improving(g)) return true;
        }
        return false;
    }

    // Arcs of the predecessor path src -> dst into cycle_.  False if it is broken.
    bool path_to(int src, int dst) {
        cycle_.clear();
        int x = dst;
        for (int steps = 0; x != src; ++steps) {
            if (steps > N_ || pred_[x] < 0) return false;
            cycle_.push_back(pred_[x]);
            x = arcs_[static_cast<std::size_t>(pred_[x])].u;
        }
        return true;
    }

    // Apply the task moves of the arcs in cycle_ (the tasks were all read from the same arc
    // set, and the arcs leave distinct nodes, so the tasks are distinct).
    void apply(const std::vector<int>& arc_ids) {
        moves_.clear();
        for (int k : arc_ids) {
            const Arc& e = arcs_[static_cast<std::size_t>(k)];
            if (e.task >= 0) moves_.push_back({e.task, e.v == S_ ? -1 : e.v});
        }
        for (const auto& mv : moves_) move(mv.first, mv.second);
    }

    // ---- data --------------------------------------------------------------------------
    std::int64_t n_;
    int m_;
    bool card_;
    int N_ = 0, S_ = 0, T_ = 0;
    double eps_ = 0.0;
    std::vector<double> w_;
    std::vector<std::uint8_t> a_;
    std::vector<std::int64_t> cap_;
    std::vector<std::int64_t> assign_;
    std::vector<std::int64_t> load_;
    std::int64_t n_alloc_ = 0;
    std::int64_t n_augmentations_ = 0;
    std::int64_t n_cycles_ = 0;
    bool clean_ = true;  // no positive cycle avoiding the T-S arcs (true for the empty matching)

    // change tracking for solve()
    std::vector<std::int64_t> first_old_;
    std::vector<std::int64_t> touched_;

    // heaps of candidate tasks per (group, target)
    std::vector<std::vector<Entry>> heap_;
    std::vector<std::uint64_t> stamp_;
    std::vector<std::int64_t> group_size_;
    // cached best valid entry per heap, refreshed for the groups marked dirty
    std::vector<std::int64_t> top_task_;
    std::vector<double> top_key_;
    std::vector<std::uint8_t> dirty_group_;

    // scratch
    std::vector<Arc> arcs_;
    std::vector<std::pair<std::int64_t, std::int64_t>> moves_;
    std::vector<Gain> dist_;
    std::vector<std::uint8_t> reach_;
    std::vector<std::uint8_t> dirty_;
    std::vector<int> out_start_;
    std::vector<int> out_arcs_;
    std::vector<int> fill_pos_;
    std::vector<int> pred_;
    std::vector<int> mark_;
    std::vector<int> cycle_;
};

}  // namespace coalloc
