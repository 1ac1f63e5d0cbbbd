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
// The gain of a task arc g -> t depends only on the task and on (g, t).  Every group g (a
// cluster, or S) stores its tasks slot by slot with, for every target t, the gain of the arc
// each provides (t-major: the gains towards one target are contiguous; kNone where the pair
// is not allowed).  The best task of every (g, t) is cached; a cached top is re-computed (one
// contiguous scan of the group) only when its task leaves the group or loses the target,
// and a task joining a group updates the clean tops it beats.  Moving one task costs O(m)
// (plus the scans of the tops it was), and the condensed arcs are read from the cache.
// (build_arcs_by_scan() recomputes the same arcs with one O(n m) pass over the tasks;
// self_check() compares the two.)
//
// Node potentials and Dijkstra.  After a solve, the matcher holds potentials pot[v] (pairs,
// like the gains) such that every residual arc u -> v of the condensed graph, the T -> S and
// S -> T arcs included, has reduced gain g + pot[u] - pot[v] <= 0 -- the certificate of
// optimality (no positive cycle).  Task nodes need no potential of their own: the arcs of a
// task are feasible for some task potential iff the condensed arcs through it are.  Then:
//   * forbid(i, j) with task i in cluster j puts i in "limbo": it leaves its group, the
//     cluster's load drops, and the pseudoflow keeps one unit of excess at i and one of
//     deficit at j.  Every residual arc keeps a non-positive reduced gain.
//   * solve() removes each such unit by ONE shortest path, from task i (arcs: to every
//     allowed cluster, or back to S = stay unassigned) to a cluster with a deficit, by
//     Dijkstra on the costs -(reduced gain) >= 0 over the m + 2 nodes (dense, O(m^2), stops
//     at the first deficit node reached); pot[v] -= min(dist[v], dist[target]) keeps all
//     arcs feasible and makes the path tight (successive shortest paths on a pseudoflow).
//     The result is again an optimal b-matching for the current allowed set.
//   * The first solve (from the empty matching) is successive shortest paths S -> T by the
//     same Dijkstra (initial potentials: pot[j] = best S -> j gain, pot[T] = max), followed by
//     one check of the general method below and potentials computed by Bellman-Ford over all
//     residual arcs (O(m^3), once).
//   * Reduced costs are clamped at 0 when rounding makes them slightly negative; if one is
//     below -1e3 eps (the potentials have drifted) the pending tasks are released as free
//     tasks and the general method below re-optimises, then new potentials are computed
//     (n_fallbacks() counts this; it does not happen in the tests and benchmarks).
//
// General method (first solve check, fallback, and any state without potentials) --
// solve() repeats: rebuild the condensed arcs from the cached tops, then
//   (A) unless the state is known to be clean, look for a positive cycle avoiding the T-S
//       arcs (Bellman-Ford from a virtual source) and cancel it;
//   (B) otherwise take the maximum-gain S -> T path (Bellman-Ford from S) and augment along it
//       if it improves (successive shortest paths keep the state clean);
//   (C) (weight mode only) take the maximum-gain T -> S path and un-augment along it if it
//       improves;
// until none of the three applies.
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
// Ties are broken deterministically (lowest task index, lowest node index, fixed arc order), so the
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

#include "coalloc/common/errors.hpp"
#include "coalloc/common/interrupt.h"

namespace coalloc {

class BMatcher {
public:
    // weights: n*m row-major doubles, finite on allowed pairs (normally >= 0, but any sign
    // works); allowed: n*m bytes (nonzero = allowed); capacity: m non-negative entries.
    // All three are copied.  Throws InvalidInput (ValueError) on bad sizes or values.
    BMatcher(const double* weights, const std::uint8_t* allowed, const std::int64_t* capacity,
             std::int64_t n, std::int64_t m, bool cardinality_first)
        : n_(n), m_(static_cast<int>(m)), card_(cardinality_first) {
        if (n < 0 || m < 0) throw InvalidInput("n and m must be non-negative");
        if (m > (std::int64_t{1} << 20)) throw InvalidInput("too many clusters");
        const std::size_t nm = static_cast<std::size_t>(n) * static_cast<std::size_t>(m);
        w_.assign(weights, weights + nm);
        a_.resize(nm);
        double maxw = 0.0;
        for (std::size_t k = 0; k < nm; ++k) {
            a_[k] = allowed[k] ? 1 : 0;
            if (a_[k]) {
                if (!std::isfinite(w_[k]))
                    throw InvalidInput("weights must be finite on allowed pairs");
                maxw = std::max(maxw, std::fabs(w_[k]));
            }
        }
        cap_.resize(m_);
        for (int j = 0; j < m_; ++j) {
            if (capacity[j] < 0) throw InvalidInput("capacity must be non-negative");
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
        groups_.assign(M1, Group{});
        slot_.assign(static_cast<std::size_t>(n), -1);
        top_task_.assign(M1 * M1, -1);
        top_key_.assign(M1 * M1, 0.0);
        dirty_top_.assign(M1 * M1, 1);  // every cached top is computed on first use
        for (int u = 0; u <= m_; ++u)
            for (int v = 0; v <= m_; ++v)
                if (u != v) dirty_list_.push_back(static_cast<int>(hid(u, v)));
        reserve(groups_[static_cast<std::size_t>(m_)], n);
        for (std::int64_t i = 0; i < n; ++i) join(i, m_, false);
        tol_ = 1e3 * eps_;
        pot_.assign(static_cast<std::size_t>(N_), Gain{0, 0.0});
        limbo_flag_.assign(static_cast<std::size_t>(n), 0);
        deficit_.assign(static_cast<std::size_t>(m_), 0);
        dist_.resize(N_);
        reach_.resize(N_);
        dirty_.resize(N_);
        done_.resize(N_);
        open_.resize(N_);
        out_start_.assign(static_cast<std::size_t>(N_) + 1, 0);
        pred_.resize(N_);
        mark_.resize(N_);
    }

    // Bring the matching to optimum.  Appends to *tasks / *old every task whose cluster now
    // differs from the one it had when solve() was called (old = -1: was unassigned), in
    // increasing task order.
    // deadline: the call's (coalloc/common/deadline.h); its polls are made from it.
    void solve(std::vector<std::int64_t>* tasks, std::vector<std::int64_t>* old,
               const Deadline& deadline) {
        deadline_ = deadline;
        if (pot_valid_) {
            // Each pending forbid is a unit of excess at its task and of deficit at its old
            // cluster; one shortest path with reduced costs removes it (successive shortest
            // paths on a pseudoflow), and the potentials stay valid.
            std::size_t next = 0;
            for (; next < limbo_.size(); ++next) {
                if (!repair(limbo_[next])) break;
                ++n_augmentations_;
            }
            if (next < limbo_.size()) {
                // Potentials no longer consistent (rounding): put the remaining limbo tasks
                // back as free tasks and re-optimise from this state the general way.
                for (std::size_t q = next; q < limbo_.size(); ++q) leave_limbo(limbo_[q], -1);
                std::fill(deficit_.begin(), deficit_.end(), 0);
                pot_valid_ = false;
                clean_ = false;
                ++n_fallbacks_;
            }
            limbo_.clear();
        }
        if (!pot_valid_) {
            try {
                if (n_alloc_ == 0 && clean_) {
                    if (!initial_ssp()) clean_ = false;
                }
                general_solve();
            } catch (const Interrupted&) {
                // Stopped between two augmentations: a feasible matching, not yet optimal;
                // the next solve() re-optimises it the general way.
                clean_ = false;
                throw;
            }
            pot_valid_ = compute_potentials();
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
            throw InvalidInput("forbid: task or cluster index out of range");
        const std::size_t k = static_cast<std::size_t>(i) * m_ + static_cast<std::size_t>(j);
        a_[k] = 0;
        const std::int64_t c = assign_[static_cast<std::size_t>(i)];
        if (c != j) {
            // Removing an unused arc keeps the matching optimal and the potentials valid.
            if (!limbo_flag_[static_cast<std::size_t>(i)]) {
                const int g = c < 0 ? m_ : static_cast<int>(c);
                Group& gr = groups_[static_cast<std::size_t>(g)];
                gr.key[static_cast<std::size_t>(j * gr.cap + slot_[static_cast<std::size_t>(i)])] =
                    kNone;
                const std::size_t h = hid(g, static_cast<int>(j));
                if (top_task_[h] == i) mark_dirty(h);
            }
            return false;
        }
        if (pot_valid_) {
            enter_limbo(i);  // solve() re-places it with one shortest path
            return true;
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
    // Times the potentials had to be rebuilt after a rounding inconsistency (normally 0).
    std::int64_t n_fallbacks() const { return n_fallbacks_; }
    // Whether node potentials certifying optimality are held (after a successful solve()).
    bool has_potentials() const { return pot_valid_; }
    // Testing aid: forget the potentials, so that the next forbid() / solve() take the
    // general path (cycle cancelling, then potentials rebuilt by Bellman-Ford).
    void drop_potentials() {
        if (limbo_.empty()) pot_valid_ = false;
    }
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

    // Consistency check for the tests: the cached tops give the same condensed arcs as a full
    // scan of the tasks, and loads / counts agree with the assignment.
    bool self_check() {
        std::vector<std::int64_t> load(static_cast<std::size_t>(m_), 0);
        std::int64_t alloc = 0, in_limbo = 0;
        for (std::int64_t i = 0; i < n_; ++i) {
            const std::int64_t c = assign_[static_cast<std::size_t>(i)];
            if (c < -1 || c >= m_) return false;
            if (limbo_flag_[static_cast<std::size_t>(i)]) {
                if (c != -1) return false;
                ++in_limbo;
            }
            if (c >= 0) {
                if (!a_[static_cast<std::size_t>(i) * m_ + static_cast<std::size_t>(c)]) return false;
                ++load[static_cast<std::size_t>(c)];
                ++alloc;
            }
        }
        if (load != load_ || alloc != n_alloc_) return false;
        for (int j = 0; j < m_; ++j) {
            if (load_[static_cast<std::size_t>(j)] > cap_[static_cast<std::size_t>(j)]) return false;
            if (groups_[static_cast<std::size_t>(j)].size != load_[static_cast<std::size_t>(j)])
                return false;
        }
        if (in_limbo != static_cast<std::int64_t>(limbo_.size())) return false;
        if (groups_[static_cast<std::size_t>(m_)].size != n_ - n_alloc_ - in_limbo) return false;
        for (std::int64_t i = 0; i < n_; ++i) {
            if (limbo_flag_[static_cast<std::size_t>(i)]) continue;
            const std::int64_t c = assign_[static_cast<std::size_t>(i)];
            const Group& gr = groups_[static_cast<std::size_t>(c < 0 ? m_ : c)];
            const std::int64_t sl = slot_[static_cast<std::size_t>(i)];
            if (sl < 0 || sl >= gr.size || gr.task[static_cast<std::size_t>(sl)] != i) return false;
        }
        build_arcs();
        const std::vector<Arc> from_cache = arcs_;
        build_arcs_by_scan();
        if (from_cache.size() != arcs_.size()) return false;
        for (std::size_t k = 0; k < arcs_.size(); ++k) {
            const Arc &x = from_cache[k], &y = arcs_[k];
            if (x.u != y.u || x.v != y.v || x.task != y.task || x.g.c != y.g.c || x.g.w != y.g.w)
                return false;
        }
        // With potentials held (and nothing pending), every residual arc, the T-S bypass
        // arcs included, has a non-positive reduced gain (up to the drift tolerance).
        if (pot_valid_ && limbo_.empty()) {
            auto ok = [&](int u, int v, std::int64_t c, double w) {
                const Gain rg = reduced(u, v, Gain{c, w});
                return rg.c < 0 || (rg.c == 0 && rg.w <= tol_);
            };
            for (const Arc& e : arcs_)
                if (!ok(e.u, e.v, e.g.c, e.g.w)) return false;
            if (!ok(T_, S_, 0, 0.0)) return false;
            if (n_alloc_ > 0 && !ok(S_, T_, 0, 0.0)) return false;
        }
        return true;
    }

private:
    Deadline deadline_ = kNoDeadline;  // of the solve() running (its polls are made from it)
    struct Gain {
        std::int64_t c;
        double w;
    };
    struct Arc {
        int u, v;
        std::int64_t task;  // -1 for the structural arcs j->T, T->j
        Gain g;
    };

    // The tasks of one group, slot by slot, and for every target t the gain (weight part)
    // of the arc each of them provides: key[t * cap + slot], kNone where there is none.
    struct Group {
        std::vector<double> key;
        std::vector<std::int64_t> task;
        std::int64_t size = 0, cap = 0;
    };
    static constexpr double kNone = -std::numeric_limits<double>::infinity();

    static constexpr std::int64_t kUntouched = -2;
    static constexpr int kConverged = 0, kCycle = 1, kGaveUp = 2;
    static constexpr int kSource = -2;  // pred_ of the source of dijkstra()

    // ---- comparisons -------------------------------------------------------------------
    bool better(const Gain& a, const Gain& b) const {
        return a.c > b.c || (a.c == b.c && a.w > b.w + eps_);
    }
    bool improving(const Gain& g) const { return g.c > 0 || (g.c == 0 && g.w > eps_); }

    // ---- condensed graph ---------------------------------------------------------------
    // Groups: cluster c (tasks in c) or m_ (free tasks, node S).  Targets: cluster j or m_
    // (node S: unassign).  The cached top of (g, t) lives at index g * (m + 1) + t.

    std::size_t hid(int g, int t) const {
        return static_cast<std::size_t>(g) * (static_cast<std::size_t>(m_) + 1) +
               static_cast<std::size_t>(t);
    }

    void reserve(Group& gr, std::int64_t want) {
        if (want <= gr.cap) return;
        const std::int64_t cap = std::max<std::int64_t>({want, 2 * gr.cap, 8});
        const std::size_t M1 = static_cast<std::size_t>(m_) + 1;
        std::vector<double> key(M1 * static_cast<std::size_t>(cap), kNone);
        for (std::size_t t = 0; t < M1; ++t)
            std::copy(gr.key.begin() + static_cast<std::ptrdiff_t>(t * gr.cap),
                      gr.key.begin() + static_cast<std::ptrdiff_t>(t * gr.cap + gr.size),
                      key.begin() + static_cast<std::ptrdiff_t>(t * cap));
        gr.key.swap(key);
        gr.task.resize(static_cast<std::size_t>(cap));
        gr.cap = cap;
    }

    // Task i joins group g: its arc gains fill a new slot; clean cached tops it beats are
    // updated (unless `cache` is false: construction, where every top is dirty).
    void join(std::int64_t i, int g, bool cache = true) {
        Group& gr = groups_[static_cast<std::size_t>(g)];
        reserve(gr, gr.size + 1);
        const std::int64_t sl = gr.size++;
        gr.task[static_cast<std::size_t>(sl)] = i;
        slot_[static_cast<std::size_t>(i)] = sl;
        const std::size_t row = static_cast<std::size_t>(i) * static_cast<std::size_t>(m_);
        const double* w = w_.data() + row;
        const std::uint8_t* a = a_.data() + row;
        const double base = (g == m_) ? 0.0 : -w[g];
        const std::size_t hb = hid(g, 0);
        for (int t = 0; t <= m_; ++t) {
            double key = kNone;
            if (t == m_) {
                if (g != m_) key = base;
            } else if (t != g && a[t]) {
                key = w[t] + base;
            }
            gr.key[static_cast<std::size_t>(t * gr.cap + sl)] = key;
            if (!cache || key == kNone) continue;
            const std::size_t k = hb + static_cast<std::size_t>(t);
            if (!dirty_top_[k] && (top_task_[k] < 0 || key > top_key_[k] ||
                                    (key == top_key_[k] && i < top_task_[k]))) {
                top_task_[k] = i;
                top_key_[k] = key;
            }
        }
    }

    // Task i leaves group g (swap with the last slot); the tops it was are marked dirty.
    void leave(std::int64_t i, int g) {
        Group& gr = groups_[static_cast<std::size_t>(g)];
        const std::int64_t sl = slot_[static_cast<std::size_t>(i)];
        const std::int64_t last = --gr.size;
        if (sl != last) {
            const std::int64_t moved = gr.task[static_cast<std::size_t>(last)];
            gr.task[static_cast<std::size_t>(sl)] = moved;
            slot_[static_cast<std::size_t>(moved)] = sl;
            for (int t = 0; t <= m_; ++t)
                gr.key[static_cast<std::size_t>(t * gr.cap + sl)] =
                    gr.key[static_cast<std::size_t>(t * gr.cap + last)];
        }
        slot_[static_cast<std::size_t>(i)] = -1;
        leave_group(i, g);
    }

    // Best arc of group g to target t: largest key, lowest task index on ties; -1 if none.
    std::int64_t scan_top(int g, int t, double* key_out) const {
        const Group& gr = groups_[static_cast<std::size_t>(g)];
        const double* k = gr.key.data() + static_cast<std::size_t>(t * gr.cap);
        const std::int64_t size = gr.size;
        double best = kNone;
        for (std::int64_t s = 0; s < size; ++s) best = k[s] > best ? k[s] : best;
        *key_out = best;
        if (best == kNone) return -1;
        std::int64_t task = -1;
        for (std::int64_t s = 0; s < size; ++s)
            if (k[s] == best && (task < 0 || gr.task[static_cast<std::size_t>(s)] < task))
                task = gr.task[static_cast<std::size_t>(s)];
        return task;
    }

    // Move task i to cluster `to` (-1: unassign), keeping loads, groups and (if log) the
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
        leave(i, g_old);
        if (was >= 0) {
            --load_[static_cast<std::size_t>(was)];
            --n_alloc_;
        }
        if (to >= 0) {
            ++load_[static_cast<std::size_t>(to)];
            ++n_alloc_;
        }
        join(i, g_new);
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

    // Cached tops: a cached top is exact unless it is marked dirty, which happens only when
    // the cached task leaves the group or loses that target (forbid); a task joining a group
    // updates the clean tops it beats directly.  refresh_tops() re-scans the dirty ones.
    void mark_dirty(std::size_t k) {
        if (!dirty_top_[k]) {
            dirty_top_[k] = 1;
            dirty_list_.push_back(static_cast<int>(k));
        }
    }

    // Task i leaves group g: the tops it was must be re-scanned.
    void leave_group(std::int64_t i, int g) {
        const std::size_t base = hid(g, 0);
        for (int v = 0; v <= m_; ++v)
            if (top_task_[base + static_cast<std::size_t>(v)] == i)
                mark_dirty(base + static_cast<std::size_t>(v));
    }

    void refresh_tops() {
        const std::size_t M1 = static_cast<std::size_t>(m_) + 1;
        for (int k : dirty_list_) {
            const std::size_t kk = static_cast<std::size_t>(k);
            double key = 0.0;
            const std::int64_t t =
                scan_top(static_cast<int>(kk / M1), static_cast<int>(kk % M1), &key);
            top_task_[kk] = t;
            top_key_[kk] = t >= 0 ? key : 0.0;
            dirty_top_[kk] = 0;
        }
        dirty_list_.clear();
    }

    // Condensed arcs from the cached tops (arc order: u, then v, then structural arcs).
    void build_arcs() {
        refresh_tops();
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
            if (limbo_flag_[static_cast<std::size_t>(i)]) continue;
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

    // ---- general re-optimisation ------------------------------------------------------
    // From any feasible matching: cancel positive cycles (A), augment along maximum-gain
    // S -> T paths (B) and, in weight mode, un-augment along T -> S paths (C), all found by
    // Bellman-Ford on the condensed graph, until none applies.  Used for the first solve
    // (after the Dijkstra phase, as a check) and as the fallback when the potentials of the
    // incremental path cannot be trusted.
    void general_solve() {
        Poll poll(deadline_, 4);  // the deadline, Ctrl-C (interrupt.h)
        for (;;) {
            poll.tick();
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
    }

    // ---- potentials, pseudoflow repair, Dijkstra ---------------------------------------
    // Node potentials pot_ (pairs, like gains) certify optimality: every residual arc u -> v
    // of the condensed graph, the bypass arcs T -> S and S -> T (if anything is matched)
    // included, has reduced gain g + pot[u] - pot[v] <= 0.  (Task nodes need no potential:
    // a task's arcs are feasible for some task potential iff the condensed arcs through it
    // are.)  Shortest paths then run on the non-negative costs -(reduced gain) by Dijkstra.

    Gain reduced(int u, int v, Gain g) const {
        const Gain& pu = pot_[static_cast<std::size_t>(u)];
        const Gain& pv = pot_[static_cast<std::size_t>(v)];
        return Gain{g.c + pu.c - pv.c, g.w + pu.w - pv.w};
    }
    static bool less_cost(const Gain& a, const Gain& b) {
        return a.c < b.c || (a.c == b.c && a.w < b.w);
    }
    // Load of cluster j in the pseudoflow: the limbo tasks still count where they were.
    std::int64_t pseudo_load(int j) const {
        return load_[static_cast<std::size_t>(j)] + deficit_[static_cast<std::size_t>(j)];
    }

    // forbid() of a matched pair while potentials are held: the task leaves its cluster but
    // joins no group; the pseudoflow keeps one unit of excess at the task and one of deficit
    // at the cluster, and every residual arc keeps a non-positive reduced gain.
    void enter_limbo(std::int64_t i) {
        const std::size_t ii = static_cast<std::size_t>(i);
        const std::int64_t j = assign_[ii];
        assign_[ii] = -1;
        --load_[static_cast<std::size_t>(j)];
        --n_alloc_;
        leave(i, static_cast<int>(j));
        ++deficit_[static_cast<std::size_t>(j)];
        limbo_flag_[ii] = 1;
        limbo_.push_back(i);
        ++n_limbo_;
    }

    // A limbo task joins cluster `to` (-1: the free tasks), logged for solve().
    void leave_limbo(std::int64_t i, std::int64_t to) {
        const std::size_t ii = static_cast<std::size_t>(i);
        if (first_old_[ii] == kUntouched) {
            first_old_[ii] = assign_[ii];
            touched_.push_back(i);
        }
        limbo_flag_[ii] = 0;
        --n_limbo_;
        assign_[ii] = to;
        const int g_new = to < 0 ? m_ : static_cast<int>(to);
        if (to >= 0) {
            ++load_[static_cast<std::size_t>(to)];
            ++n_alloc_;
        }
        join(i, g_new);
    }

    // Potentials from scratch for an optimal matching (no limbo task): longest-path labels
    // from a virtual source by Bellman-Ford over every residual arc, bypass arcs included.
    // False if they do not settle (a positive cycle above eps, i.e. not optimal).
    bool compute_potentials() {
        build_arcs();
        const int N = N_;
        for (int v = 0; v < N; ++v) dist_[static_cast<std::size_t>(v)] = Gain{0, 0.0};
        auto relax = [&](int u, int v, const Gain& g) {
            const Gain& du = dist_[static_cast<std::size_t>(u)];
            const Gain cand{du.c + g.c, du.w + g.w};
            if (better(cand, dist_[static_cast<std::size_t>(v)])) {
                dist_[static_cast<std::size_t>(v)] = cand;
                return true;
            }
            return false;
        };
        for (int round = 0; round <= N + 1; ++round) {
            bool changed = false;
            for (const Arc& e : arcs_) changed |= relax(e.u, e.v, e.g);
            changed |= relax(T_, S_, Gain{0, 0.0});
            if (n_alloc_ > 0) changed |= relax(S_, T_, Gain{0, 0.0});
            if (!changed) {
                pot_ = dist_;
                normalise_potentials();
                return true;
            }
        }
        return false;
    }

    void normalise_potentials() {
        const Gain p = pot_[static_cast<std::size_t>(S_)];
        for (Gain& q : pot_) {
            q.c -= p.c;
            q.w -= p.w;
        }
    }

    // Dijkstra on the condensed graph with costs -(reduced gain) >= 0, dense O(N^2).
    // src >= 0: pseudoflow repair from limbo task src (its arcs: to each allowed cluster,
    // and back to S = unassign it), targets: clusters with a deficit, bypass arcs used.
    // src < 0: augmenting path S -> T of the first solve, bypass arcs excluded.
    // Returns the target reached, -1 if none, -2 if an arc has a reduced gain above the
    // drift tolerance (the potentials are inconsistent).  Ties: lowest node index.
    int dijkstra(std::int64_t src) {
        const bool rep = src >= 0;
        const int N = N_;
        Gain* dist = dist_.data();
        const Gain* pot = pot_.data();
        std::uint8_t* reach = reach_.data();
        std::uint8_t* done = done_.data();
        int* pred = pred_.data();
        int* open = open_.data();  // reached, not yet settled
        int n_open = 0;
        std::fill(reach, reach + N, std::uint8_t{0});
        std::fill(done, done + N, std::uint8_t{0});
        std::fill(pred, pred + N, -1);
        if (rep) {
            // Source arcs, shifted so that the best one costs 0 (the source has no in-arcs).
            const std::size_t row = static_cast<std::size_t>(src) * static_cast<std::size_t>(m_);
            const double* w = w_.data() + row;
            const std::uint8_t* a = a_.data() + row;
            Gain best{0, 0.0};
            for (int v = 0; v <= m_; ++v) {
                Gain g{card_ ? -1 : 0, 0.0};
                if (v < m_) {
                    if (!a[v]) continue;
                    g = Gain{0, w[v]};
                }
                g.c -= pot[v].c;
                g.w -= pot[v].w;
                dist[v] = g;
                reach[v] = 1;
                pred[v] = kSource;
                if (n_open == 0 || less_cost(best, g)) best = g;
                open[n_open++] = v;
            }
            for (int q = 0; q < n_open; ++q) {
                Gain& d = dist[open[q]];
                d = Gain{best.c - d.c, best.w - d.w};
            }
        } else {
            dist[S_] = Gain{0, 0.0};
            reach[S_] = 1;
            pred[S_] = kSource;
            open[n_open++] = S_;
        }
        const bool bypass_st = rep && (n_alloc_ + n_limbo_ > 0);
        const double tol = tol_;
        bool bad = false;
        // Relax u -> v (v not settled) with gain (c, w); cost = -(g + pot[u] - pot[v]).
        auto relax = [&](int u, const Gain& du, const Gain& pu, int v, std::int64_t c, double w) {
            const std::int64_t rc = pot[v].c - pu.c - c;
            double rw = pot[v].w - pu.w - w;
            if (rc <= 0) {
                if (rc < 0 || rw < -tol) {
                    bad = true;
                    return;
                }
                if (rw < 0.0) rw = 0.0;  // rounding
            }
            const std::int64_t cc = du.c + rc;
            const double cw = du.w + rw;
            if (!reach[v]) {
                reach[v] = 1;
                open[n_open++] = v;
            } else if (!(cc < dist[v].c || (cc == dist[v].c && cw < dist[v].w))) {
                return;
            }
            dist[v].c = cc;
            dist[v].w = cw;
            pred[v] = u;
        };
        while (n_open > 0) {
            int bq = 0;
            for (int q = 1; q < n_open; ++q) {
                const Gain& x = dist[open[q]];
                const Gain& y = dist[open[bq]];
                if (x.c < y.c || (x.c == y.c && (x.w < y.w || (x.w == y.w && open[q] < open[bq]))))
                    bq = q;
            }
            const int u = open[bq];
            open[bq] = open[--n_open];
            done[u] = 1;
            if (rep ? (u < m_ && deficit_[static_cast<std::size_t>(u)] > 0) : u == T_) return u;
            const Gain du = dist[u];
            const Gain pu = pot[u];
            if (u <= m_) {
                const std::size_t base = hid(u, 0);
                const std::int64_t* tk = top_task_.data() + base;
                const double* key = top_key_.data() + base;
                const std::int64_t c0 = (card_ && u == m_) ? 1 : 0;
                for (int v = 0; v < m_; ++v)
                    if (tk[v] >= 0 && !done[v]) relax(u, du, pu, v, c0, key[v]);
                if (u < m_) {
                    if (tk[m_] >= 0 && !done[S_]) relax(u, du, pu, S_, card_ ? -1 : 0, key[m_]);
                    if (pseudo_load(u) < cap_[static_cast<std::size_t>(u)] && !done[T_])
                        relax(u, du, pu, T_, 0, 0.0);
                } else if (bypass_st && !done[T_]) {
                    relax(u, du, pu, T_, 0, 0.0);
                }
            } else {
                for (int j = 0; j < m_; ++j)
                    if (!done[j] && pseudo_load(j) > 0) relax(u, du, pu, j, 0, 0.0);
                if (rep && !done[S_]) relax(u, du, pu, S_, 0, 0.0);
            }
            if (bad) return -2;
        }
        return -1;
    }

    // After dijkstra() reached `target`: pot[v] -= min(dist[v], dist[target]), which keeps
    // every residual arc feasible and makes the path arcs tight (so their reversals are
    // feasible too).
    void update_potentials(int target) {
        const Gain dt = dist_[static_cast<std::size_t>(target)];
        for (int v = 0; v < N_; ++v) {
            const Gain& d = done_[static_cast<std::size_t>(v)] ? dist_[static_cast<std::size_t>(v)]
                                                                : dt;
            pot_[static_cast<std::size_t>(v)].c -= d.c;
            pot_[static_cast<std::size_t>(v)].w -= d.w;
        }
        normalise_potentials();
    }

    // Task moves of the predecessor path ending at `target` (source task src, or S), into
    // moves_ (src itself, if any, is not included); its exact gain is returned.
    Gain path_moves(int target, std::int64_t src, std::int64_t* src_to) {
        moves_.clear();
        Gain g{0, 0.0};
        int v = target;
        for (int steps = 0; steps <= N_; ++steps) {
            const int u = pred_[static_cast<std::size_t>(v)];
            if (u == kSource) {
                if (src >= 0) {
                    const std::size_t row = static_cast<std::size_t>(src) * m_;
                    *src_to = v == S_ ? -1 : v;
                    if (v == S_) g.c += card_ ? -1 : 0;
                    else g.w += w_[row + static_cast<std::size_t>(v)];
                }
                return g;
            }
            if (u <= m_ && v <= m_) {
                const std::size_t k = hid(u, v);
                moves_.push_back({top_task_[k], v == S_ ? -1 : v});
                g.c += arc_count(u, v);
                g.w += top_key_[k];
            }
            v = u;
        }
        return g;  // not reached: a predecessor path has at most N arcs
    }

    // One pseudoflow repair: shortest path from limbo task i to a cluster with a deficit.
    bool repair(std::int64_t i) {
        refresh_tops();
        const int t = dijkstra(i);
        if (t < 0) return false;
        update_potentials(t);
        std::int64_t to = -1;
        path_moves(t, i, &to);
        leave_limbo(i, to);
        for (const auto& mv : moves_) move(mv.first, mv.second);
        --deficit_[static_cast<std::size_t>(t)];
        return true;
    }

    // First solve from the empty matching: successive shortest paths S -> T by Dijkstra
    // (the bypass arcs are left out, so the potentials below are valid from the start).
    // Stops when no augmenting path is improving.  False on inconsistent potentials.
    bool initial_ssp() {
        refresh_tops();
        Gain pt{0, 0.0};
        bool any_t = false;
        for (int v = 0; v < N_; ++v) pot_[static_cast<std::size_t>(v)] = Gain{0, 0.0};
        for (int j = 0; j < m_; ++j) {
            const std::size_t k = hid(m_, j);
            Gain& p = pot_[static_cast<std::size_t>(j)];
            if (top_task_[k] >= 0) p = Gain{arc_count(m_, j), top_key_[k]};
            if (cap_[static_cast<std::size_t>(j)] > 0 && (!any_t || less_cost(pt, p))) {
                pt = p;
                any_t = true;
            }
        }
        pot_[static_cast<std::size_t>(T_)] = pt;
        Poll poll(deadline_, 16);  // the deadline, Ctrl-C (interrupt.h)
        for (;;) {
            poll.tick();
            refresh_tops();
            const int t = dijkstra(-1);
            if (t == -2) return false;
            if (t < 0) return true;
            std::int64_t unused = -1;
            const Gain g = path_moves(t, -1, &unused);
            if (!improving(g)) return true;
            update_potentials(t);
            for (const auto& mv : moves_) move(mv.first, mv.second);
            ++n_augmentations_;
        }
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
    std::int64_t n_fallbacks_ = 0;

    // potentials and pending forbids (see solve(), forbid(), dijkstra())
    bool pot_valid_ = false;
    double tol_ = 0.0;  // drift tolerance of reduced gains
    std::vector<Gain> pot_;
    std::vector<std::int64_t> limbo_;      // tasks unassigned by forbid(), in call order
    std::vector<std::uint8_t> limbo_flag_;
    std::int64_t n_limbo_ = 0;
    std::vector<std::int64_t> deficit_;    // per cluster: limbo tasks that came from it

    // change tracking for solve()
    std::vector<std::int64_t> first_old_;
    std::vector<std::int64_t> touched_;

    // the tasks of every group with their arc gains per target
    std::vector<Group> groups_;
    std::vector<std::int64_t> slot_;  // slot of each task in its group (-1: limbo)
    // cached best task (and its gain) per (group, target), re-scanned when marked dirty
    std::vector<std::int64_t> top_task_;
    std::vector<double> top_key_;
    std::vector<std::uint8_t> dirty_top_;
    std::vector<int> dirty_list_;

    // scratch
    std::vector<Arc> arcs_;
    std::vector<std::pair<std::int64_t, std::int64_t>> moves_;
    std::vector<Gain> dist_;
    std::vector<std::uint8_t> reach_;
    std::vector<std::uint8_t> dirty_;
    std::vector<std::uint8_t> done_;
    std::vector<int> open_;
    std::vector<int> out_start_;
    std::vector<int> out_arcs_;
    std::vector<int> fill_pos_;
    std::vector<int> pred_;
    std::vector<int> mark_;
    std::vector<int> cycle_;
};

}  // namespace coalloc
