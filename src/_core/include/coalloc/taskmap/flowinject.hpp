// Hierarchical clustering of a task graph by stochastic flow injection (seed 002, Taura &
// Chien 2000, section 4.3; after Yeh, Cheng & Lin 1995), and the depth-first task order of
// the resulting cluster tree (section 4.2).
//
// Splitting one cluster H (a set of tasks, at least two):
//
//   0. H's edges are the graph's edges inside H with a positive weight ("capacity").  With
//      `inherit` the capacities left by the parent's injections are kept (removed edges
//      stay removed); otherwise (default) they are reset to the original weights.  If H is
//      already disconnected its connected components are the children (no injection).
//   1. Pick s with probability proportional to its node weight, then t != s the same way
//      among the others (all weights taken as 1 when fewer than two are positive).
//   2. Find a shortest s-t path over the remaining edges: `hops` (BFS), or Dijkstra with
//      length 1 / remaining capacity (`inverse_remaining`) or 1 / original weight
//      (`inverse_weight`).
//   3. Subtract Delta from the capacity of every edge on the path (inject a flow Delta).
//   4. Remove the edges whose capacity became <= 0.
//   5. Repeat until H is disconnected; its components are the children.
//
// Delta is either an absolute constant (params.delta > 0, the paper's "small constant") or,
// by default, delta_scale x the mean remaining capacity of H's edges when the split starts,
// so the number of injections does not depend on the scale of the weights.  After
// max_injections injections in one split the split is finished deterministically by
// removing the edge of smallest remaining capacity (ties: first in (u, v) order) until H
// falls apart ("forced" split; never reached with the relative default on sane inputs).
// Clusters of at most min_cluster_size tasks are not split: their tasks become leaves in
// index order ("flat" node).
//
// Determinism: every tree node has its own xoshiro256** stream seeded from (seed, node id),
// every choice has a fixed tie-break (neighbours visited in increasing index; BFS is FIFO;
// Dijkstra pops the smallest (distance, node) pair and keeps the first predecessor found;
// components are numbered by their smallest task, then arranged by arrange()) and the
// arithmetic is the plain
// IEEE-754 double sequence that coalloc.taskmap._reference.flowinject repeats in Python, so the
// twin returns the very same tree for every metric.
//
// Children order: the paper only asks for "a depth-first order"; arrange() puts the
// children of a split left to right so that each is as attached as possible to what is
// already ordered and as little as possible to what comes after (see there).
//
// Tree nodes are numbered in creation order (root 0); the children of a node have
// consecutive ids, in their left-to-right order.  The depth-first order visits children in id order; node x covers
// order[start[x]:stop[x]].
//
// The header does not depend on Python; src/_core/taskmap/_flowinject.cpp binds it.

#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "coalloc/common/csr.hpp"
#include "coalloc/common/interrupt.h"
#include "coalloc/common/xoshiro.hpp"

namespace coalloc {
namespace flowinject {

using i64 = std::int64_t;
using u64 = std::uint64_t;

// ------------------------------------------------------------------------------ random

// The common xoshiro256** generator (coalloc/common/xoshiro.hpp); the twin
// coalloc.taskmap._reference.flowinject repeats its stream.
using Rng = coalloc::Xoshiro256ss;

// Seed of the stream of tree node `node`.
inline u64 node_seed(u64 seed, i64 node) {
    return seed ^ (0x9e3779b97f4a7c15ULL * (static_cast<u64>(node) + 1));
}

// ------------------------------------------------------------------------------ types

enum Metric : int { kHops = 0, kInverseRemaining = 1, kInverseWeight = 2 };
enum Kind : std::int8_t { kLeaf = 0, kFlow = 1, kComponents = 2, kFlat = 3, kForced = 4 };

struct Params {
    double delta = 0.0;        // > 0: absolute Delta; otherwise delta_scale x mean capacity
    double delta_scale = 0.05; // relative Delta (used when delta <= 0)
    int metric = kHops;
    u64 seed = 0;
    i64 min_cluster_size = 1;  // clusters of at most this many tasks are not split
    bool inherit = false;      // children keep the remaining capacities
    i64 max_injections = 1000000;  // per split; then the split is forced
    Deadline deadline = kNoDeadline;  // the call's (coalloc/common/deadline.h)
};

// Raw views of the caller's arrays.  Expected (checked by the binding): symmetric CSR with
// indices in [0, n); entries with v > u and weight > 0 define the undirected edges
// (the lower triangle is ignored); node weights finite and >= 0.
struct Input {
    CsrView<double> graph;                // n x n edge weights
    const double* node_weight = nullptr;  // n
    i64 n() const { return graph.n; }
};

struct Counters {
    i64 injections = 0;        // flows injected (shortest paths found)
    i64 path_edges = 0;        // total length of those paths (work measure)
    i64 removed_edges = 0;     // edges saturated by injections
    i64 forced_removals = 0;   // edges removed after max_injections
    i64 flow_splits = 0;       // clusters split by flow injection (incl. forced ones)
    i64 component_splits = 0;  // clusters already disconnected when their split started
    i64 flat_nodes = 0;        // clusters left whole (min_cluster_size)
};

struct Tree {
    std::vector<i64> parent;      // -1 for the root
    std::vector<i64> task;        // task of a leaf, -1 for an internal node
    std::vector<std::int8_t> kind;
    std::vector<i64> child_start, child_count;
    std::vector<i64> injections;  // injections spent splitting the node
    std::vector<double> delta;    // Delta used for the node (NaN: no injection)
    std::vector<i64> depth, start, stop;
    std::vector<i64> order;       // depth-first order of the tasks
    Counters counters;
};

// ------------------------------------------------------------------------------ kernel

class Clusterer {
   public:
    Clusterer(const Input& in, const Params& p) : in_(in), p_(p) { build_edges(); }

    Tree run() {
        const i64 n = in_.n();
        Tree T;
        if (n == 0) return T;
        new_node(T, -1);
        std::vector<std::pair<i64, std::vector<i64>>> stack;
        {
            std::vector<i64> all(static_cast<size_t>(n));
            for (i64 i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
            stack.emplace_back(0, std::move(all));
        }
        while (!stack.empty()) {
            const i64 id = stack.back().first;
            std::vector<i64> nodes = std::move(stack.back().second);
            stack.pop_back();
            const i64 k = static_cast<i64>(nodes.size());
            if (k == 1) {
                T.kind[static_cast<size_t>(id)] = kLeaf;
                T.task[static_cast<size_t>(id)] = nodes[0];
                placed_[static_cast<size_t>(nodes[0])] = 1;
                continue;
            }
            std::vector<std::vector<i64>> parts;
            if (k <= p_.min_cluster_size) {
                T.kind[static_cast<size_t>(id)] = kFlat;
                ++T.counters.flat_nodes;
                for (i64 g : nodes) parts.push_back({g});
            } else {
                split(id, nodes, T, parts);
                arrange(parts);
            }
            const i64 first = static_cast<i64>(T.parent.size());
            T.child_start[static_cast<size_t>(id)] = first;
            T.child_count[static_cast<size_t>(id)] = static_cast<i64>(parts.size());
            for (size_t c = 0; c < parts.size(); ++c) new_node(T, id);
            for (size_t c = parts.size(); c-- > 0;)
                stack.emplace_back(first + static_cast<i64>(c), std::move(parts[c]));
        }
        finish(T);
        return T;
    }

   private:
    struct Adj {
        i64 nbr, edge;
    };

    const Input& in_;
    Params p_;
    // global undirected edges (u < v, weight > 0) in (u, v) order and their adjacency
    std::vector<i64> eu_, ev_;
    std::vector<double> orig_, cap_;
    std::vector<char> alive_;
    std::vector<i64> adj_ptr_;
    std::vector<Adj> adj_;
    // per split: local numbering and local adjacency (neighbours in increasing order)
    std::vector<i64> local_of_, mark_, part_of_;
    std::vector<char> placed_;  // task already in the depth-first order
    i64 stamp_ = 0;
    std::vector<i64> lptr_;
    std::vector<Adj> ladj_;  // edge = global edge id
    std::vector<i64> ledge_;  // global ids of the local edges, in (u, v) order
    std::vector<i64> lu_, lv_;  // local end points of the local edges
    // scratch, indexed by local node
    std::vector<i64> vis_a_, vis_b_, pred_node_, pred_edge_, queue_a_, queue_b_;
    std::vector<double> dist_;
    std::vector<char> done_;
    i64 vstamp_ = 0;

    static void new_node(Tree& T, i64 parent) {
        T.parent.push_back(parent);
        T.task.push_back(-1);
        T.kind.push_back(kLeaf);
        T.child_start.push_back(-1);
        T.child_count.push_back(0);
        T.injections.push_back(0);
        T.delta.push_back(std::numeric_limits<double>::quiet_NaN());
    }

    void build_edges() {
        const CsrView<double>& G = in_.graph;
        const i64 n = G.n;
        for (i64 u = 0; u < n; ++u)
            for (i64 q = G.begin(u); q < G.end(u); ++q) {
                const i64 v = G.col(q);
                if (v > u && G.val(q) > 0.0) {
                    eu_.push_back(u);
                    ev_.push_back(v);
                    orig_.push_back(G.val(q));
                }
            }
        cap_ = orig_;
        alive_.assign(orig_.size(), 1);
        adj_ptr_.assign(static_cast<size_t>(n) + 1, 0);
        for (size_t e = 0; e < eu_.size(); ++e) {
            ++adj_ptr_[static_cast<size_t>(eu_[e]) + 1];
            ++adj_ptr_[static_cast<size_t>(ev_[e]) + 1];
        }
        for (i64 u = 0; u < n; ++u) adj_ptr_[u + 1] += adj_ptr_[u];
        adj_.resize(static_cast<size_t>(adj_ptr_[n]));
        std::vector<i64> fill(adj_ptr_.begin(), adj_ptr_.end() - 1);
        // Edges come in (u, v) order, so every list ends up sorted by neighbour (for a
        // canonical input: the lower neighbours first, by increasing u, then the higher).
        for (size_t e = 0; e < eu_.size(); ++e) {
            adj_[static_cast<size_t>(fill[eu_[e]]++)] = {ev_[e], static_cast<i64>(e)};
            adj_[static_cast<size_t>(fill[ev_[e]]++)] = {eu_[e], static_cast<i64>(e)};
        }
        local_of_.assign(static_cast<size_t>(n), -1);
        mark_.assign(static_cast<size_t>(n), 0);
        placed_.assign(static_cast<size_t>(n), 0);
        part_of_.assign(static_cast<size_t>(n), -1);
    }

    // Order of the children of a split (section 4.2 only asks for "a depth-first order").
    // Greedy, left to right: next is the child c maximising
    //     left(c) - right(c),
    // left(c) = weight between c and the tasks already ordered (everything left of the
    // cluster, then the children already chosen), right(c) = weight between c and the tasks
    // that will come after it (the other remaining children and the unordered tasks outside
    // the cluster); ties to the child with the smallest task.  Original weights; a task
    // torn from its cluster thus lands next to it, and a pipeline keeps its direction.
    void arrange(std::vector<std::vector<i64>>& parts) {
        const size_t m = parts.size();
        if (m < 2) return;
        for (size_t c = 0; c < m; ++c)
            for (i64 g : parts[c]) part_of_[static_cast<size_t>(g)] = static_cast<i64>(c);
        std::vector<double> left(m, 0.0), right(m, 0.0);
        std::vector<std::vector<std::pair<i64, double>>> pair(m);  // (sibling, weight)
        std::vector<double> acc(m, 0.0);
        std::vector<i64> touched;
        for (size_t c = 0; c < m; ++c) {
            touched.clear();
            for (i64 g : parts[c])
                for (i64 q = adj_ptr_[g]; q < adj_ptr_[g + 1]; ++q) {
                    const Adj a = adj_[static_cast<size_t>(q)];
                    const double wt = orig_[static_cast<size_t>(a.edge)];
                    const size_t h = static_cast<size_t>(a.nbr);
                    if (placed_[h]) {
                        left[c] += wt;
                    } else if (mark_[h] == stamp_) {
                        const i64 j = part_of_[h];
                        if (j == static_cast<i64>(c)) continue;
                        if (acc[static_cast<size_t>(j)] == 0.0) touched.push_back(j);
                        acc[static_cast<size_t>(j)] += wt;
                    } else {
                        right[c] += wt;
                    }
                }
            std::sort(touched.begin(), touched.end());
            for (i64 j : touched) {
                pair[c].emplace_back(j, acc[static_cast<size_t>(j)]);
                right[c] += acc[static_cast<size_t>(j)];
                acc[static_cast<size_t>(j)] = 0.0;
            }
        }
        std::vector<char> chosen(m, 0);
        std::vector<std::vector<i64>> out;
        out.reserve(m);
        for (size_t step = 0; step < m; ++step) {
            size_t best = m;
            double best_score = 0.0;
            for (size_t c = 0; c < m; ++c) {
                if (chosen[c]) continue;
                const double score = left[c] - right[c];
                if (best == m || score > best_score) {
                    best = c;
                    best_score = score;
                }
            }
            chosen[best] = 1;
            for (const auto& jw : pair[best]) {
                const size_t j = static_cast<size_t>(jw.first);
                if (chosen[j]) continue;
                // the weight as j summed it (pair[j] is sorted by sibling)
                const auto it = std::lower_bound(
                    pair[j].begin(), pair[j].end(), std::make_pair(static_cast<i64>(best), -1.0));
                left[j] += it->second;
                right[j] -= it->second;
            }
            out.push_back(std::move(parts[best]));
        }
        parts = std::move(out);
    }

    // Local graph of the cluster `nodes` (sorted task ids).
    void build_local(const std::vector<i64>& nodes) {
        const i64 k = static_cast<i64>(nodes.size());
        ++stamp_;
        for (i64 i = 0; i < k; ++i) {
            mark_[static_cast<size_t>(nodes[i])] = stamp_;
            local_of_[static_cast<size_t>(nodes[i])] = i;
        }
        ledge_.clear();
        lu_.clear();
        lv_.clear();
        for (i64 i = 0; i < k; ++i) {
            const i64 g = nodes[i];
            for (i64 q = adj_ptr_[g]; q < adj_ptr_[g + 1]; ++q) {
                const Adj a = adj_[static_cast<size_t>(q)];
                if (a.nbr <= g || mark_[static_cast<size_t>(a.nbr)] != stamp_) continue;
                if (!p_.inherit) {
                    cap_[static_cast<size_t>(a.edge)] = orig_[static_cast<size_t>(a.edge)];
                    alive_[static_cast<size_t>(a.edge)] = 1;
                }
                if (!alive_[static_cast<size_t>(a.edge)]) continue;
                ledge_.push_back(a.edge);
                lu_.push_back(i);
                lv_.push_back(local_of_[static_cast<size_t>(a.nbr)]);
            }
        }
        lptr_.assign(static_cast<size_t>(k) + 1, 0);
        for (size_t e = 0; e < ledge_.size(); ++e) {
            ++lptr_[static_cast<size_t>(lu_[e]) + 1];
            ++lptr_[static_cast<size_t>(lv_[e]) + 1];
        }
        for (i64 i = 0; i < k; ++i) lptr_[i + 1] += lptr_[i];
        ladj_.resize(static_cast<size_t>(lptr_[k]));
        std::vector<i64> fill(lptr_.begin(), lptr_.end() - 1);
        for (size_t e = 0; e < ledge_.size(); ++e) {
            ladj_[static_cast<size_t>(fill[lu_[e]]++)] = {lv_[e], ledge_[e]};
            ladj_[static_cast<size_t>(fill[lv_[e]]++)] = {lu_[e], ledge_[e]};
        }
        if (static_cast<i64>(vis_a_.size()) < k) {
            vis_a_.assign(static_cast<size_t>(k), 0);
            vis_b_.assign(static_cast<size_t>(k), 0);
            pred_node_.resize(static_cast<size_t>(k));
            pred_edge_.resize(static_cast<size_t>(k));
            dist_.resize(static_cast<size_t>(k));
            done_.assign(static_cast<size_t>(k), 0);
            queue_a_.reserve(static_cast<size_t>(k));
            queue_b_.reserve(static_cast<size_t>(k));
        }
    }

    bool alive(i64 e) const { return alive_[static_cast<size_t>(e)] != 0; }

    // Connected components of the local graph, by increasing smallest member.
    std::vector<std::vector<i64>> components(const std::vector<i64>& nodes) {
        const i64 k = static_cast<i64>(nodes.size());
        std::vector<i64> comp(static_cast<size_t>(k), -1);
        std::vector<std::vector<i64>> out;
        std::vector<i64> q;
        for (i64 r = 0; r < k; ++r) {
            if (comp[static_cast<size_t>(r)] >= 0) continue;
            const i64 c = static_cast<i64>(out.size());
            out.emplace_back();
            q.assign(1, r);
            comp[static_cast<size_t>(r)] = c;
            for (size_t h = 0; h < q.size(); ++h) {
                const i64 x = q[h];
                for (i64 j = lptr_[x]; j < lptr_[x + 1]; ++j) {
                    const Adj a = ladj_[static_cast<size_t>(j)];
                    if (!alive(a.edge) || comp[static_cast<size_t>(a.nbr)] >= 0) continue;
                    comp[static_cast<size_t>(a.nbr)] = c;
                    q.push_back(a.nbr);
                }
            }
        }
        for (i64 i = 0; i < k; ++i) out[static_cast<size_t>(comp[static_cast<size_t>(i)])].push_back(nodes[i]);
        return out;
    }

    // Are local nodes u and v still connected?  Alternating BFS from both ends: stops as
    // soon as the searches meet or the smaller side is exhausted.
    bool connected(i64 u, i64 v) {
        if (u == v) return true;
        ++vstamp_;
        queue_a_.assign(1, u);
        queue_b_.assign(1, v);
        vis_a_[static_cast<size_t>(u)] = vstamp_;
        vis_b_[static_cast<size_t>(v)] = vstamp_;
        size_t ha = 0, hb = 0;
        for (;;) {
            if (ha == queue_a_.size() || hb == queue_b_.size()) return false;
            if (expand(queue_a_, ha, vis_a_, vis_b_)) return true;
            if (expand(queue_b_, hb, vis_b_, vis_a_)) return true;
        }
    }
    bool expand(std::vector<i64>& q, size_t& head, std::vector<i64>& mine,
                const std::vector<i64>& other) {
        const i64 x = q[head++];
        for (i64 j = lptr_[x]; j < lptr_[x + 1]; ++j) {
            const Adj a = ladj_[static_cast<size_t>(j)];
            if (!alive(a.edge)) continue;
            if (other[static_cast<size_t>(a.nbr)] == vstamp_) return true;
            if (mine[static_cast<size_t>(a.nbr)] == vstamp_) continue;
            mine[static_cast<size_t>(a.nbr)] = vstamp_;
            q.push_back(a.nbr);
        }
        return false;
    }

    // Weighted draw among local nodes != skip: first j whose running sum exceeds u * total;
    // rounding fallback: the last candidate.
    static i64 draw(Rng& rng, const std::vector<double>& w, double total, i64 skip) {
        const double u = rng.uniform() * total;
        double acc = 0.0;
        i64 last = -1;
        const i64 k = static_cast<i64>(w.size());
        for (i64 j = 0; j < k; ++j) {
            if (j == skip || !(w[static_cast<size_t>(j)] > 0.0)) continue;
            last = j;
            acc += w[static_cast<size_t>(j)];
            if (u < acc) return j;
        }
        return last;
    }

    // Shortest s-t path over the alive local edges; fills pred_node_/pred_edge_.
    void shortest_path(i64 s, i64 t) {
        ++vstamp_;
        if (p_.metric == kHops) {
            queue_a_.assign(1, s);
            vis_a_[static_cast<size_t>(s)] = vstamp_;
            for (size_t h = 0; h < queue_a_.size(); ++h) {
                const i64 x = queue_a_[h];
                for (i64 j = lptr_[x]; j < lptr_[x + 1]; ++j) {
                    const Adj a = ladj_[static_cast<size_t>(j)];
                    if (!alive(a.edge) || vis_a_[static_cast<size_t>(a.nbr)] == vstamp_) continue;
                    vis_a_[static_cast<size_t>(a.nbr)] = vstamp_;
                    pred_node_[static_cast<size_t>(a.nbr)] = x;
                    pred_edge_[static_cast<size_t>(a.nbr)] = a.edge;
                    if (a.nbr == t) return;
                    queue_a_.push_back(a.nbr);
                }
            }
            return;
        }
        using Item = std::pair<double, i64>;
        std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
        vis_a_[static_cast<size_t>(s)] = vstamp_;  // vis_a_: distance known; vis_b_: done
        dist_[static_cast<size_t>(s)] = 0.0;
        heap.emplace(0.0, s);
        while (!heap.empty()) {
            const auto [d, x] = heap.top();
            heap.pop();
            if (vis_b_[static_cast<size_t>(x)] == vstamp_) continue;
            vis_b_[static_cast<size_t>(x)] = vstamp_;
            if (x == t) return;
            for (i64 j = lptr_[x]; j < lptr_[x + 1]; ++j) {
                const Adj a = ladj_[static_cast<size_t>(j)];
                if (!alive(a.edge) || vis_b_[static_cast<size_t>(a.nbr)] == vstamp_) continue;
                const double len = p_.metric == kInverseRemaining
                                       ? 1.0 / cap_[static_cast<size_t>(a.edge)]
                                       : 1.0 / orig_[static_cast<size_t>(a.edge)];
                const double nd = d + len;
                const size_t y = static_cast<size_t>(a.nbr);
                if (vis_a_[y] != vstamp_ || nd < dist_[y]) {
                    vis_a_[y] = vstamp_;
                    dist_[y] = nd;
                    pred_node_[y] = x;
                    pred_edge_[y] = a.edge;
                    heap.emplace(nd, a.nbr);
                }
            }
        }
    }

    void split(i64 id, const std::vector<i64>& nodes, Tree& T,
               std::vector<std::vector<i64>>& parts) {
        const i64 k = static_cast<i64>(nodes.size());
        build_local(nodes);
        auto comps = components(nodes);
        if (comps.size() > 1) {
            T.kind[static_cast<size_t>(id)] = kComponents;
            ++T.counters.component_splits;
            parts = std::move(comps);
            return;
        }
        // Delta
        double delta = p_.delta;
        if (!(delta > 0.0)) {
            double sum = 0.0;
            for (i64 e : ledge_) sum += cap_[static_cast<size_t>(e)];
            delta = p_.delta_scale * (sum / static_cast<double>(ledge_.size()));
        }
        T.delta[static_cast<size_t>(id)] = delta;
        // endpoint weights
        std::vector<double> w(static_cast<size_t>(k));
        i64 positive = 0;
        for (i64 i = 0; i < k; ++i) {
            w[static_cast<size_t>(i)] = in_.node_weight[nodes[i]];
            if (w[static_cast<size_t>(i)] > 0.0) ++positive;
        }
        if (positive < 2) std::fill(w.begin(), w.end(), 1.0);
        double total = 0.0;
        for (double x : w) total += x;

        Rng rng(node_seed(p_.seed, id));
        i64 inj = 0;
        bool split_done = false;
        std::vector<i64> removed;
        Poll poll(p_.deadline, 4);  // the deadline, Ctrl-C (interrupt.h)
        while (!split_done && inj < p_.max_injections) {
            poll.tick();
            const i64 s = draw(rng, w, total, -1);
            const i64 t = draw(rng, w, total - w[static_cast<size_t>(s)], s);
            shortest_path(s, t);
            ++inj;
            removed.clear();
            for (i64 x = t; x != s; x = pred_node_[static_cast<size_t>(x)]) {
                const i64 e = pred_edge_[static_cast<size_t>(x)];
                cap_[static_cast<size_t>(e)] -= delta;
                ++T.counters.path_edges;
                if (cap_[static_cast<size_t>(e)] <= 0.0) {
                    alive_[static_cast<size_t>(e)] = 0;
                    removed.push_back(x);  // edge (pred[x], x)
                    removed.push_back(pred_node_[static_cast<size_t>(x)]);
                }
            }
            T.counters.removed_edges += static_cast<i64>(removed.size() / 2);
            for (size_t r = 0; r < removed.size() && !split_done; r += 2)
                split_done = !connected(removed[r], removed[r + 1]);
        }
        T.counters.injections += inj;
        T.injections[static_cast<size_t>(id)] = inj;
        T.kind[static_cast<size_t>(id)] = kFlow;
        while (!split_done) {  // forced finish: drop the weakest edge until H falls apart
            poll.tick();
            i64 best = -1;
            for (size_t e = 0; e < ledge_.size(); ++e) {
                if (!alive(ledge_[e])) continue;
                if (best < 0 || cap_[static_cast<size_t>(ledge_[e])] <
                                    cap_[static_cast<size_t>(ledge_[static_cast<size_t>(best)])])
                    best = static_cast<i64>(e);
            }
            alive_[static_cast<size_t>(ledge_[static_cast<size_t>(best)])] = 0;
            ++T.counters.forced_removals;
            T.kind[static_cast<size_t>(id)] = kForced;
            split_done = !connected(lu_[static_cast<size_t>(best)], lv_[static_cast<size_t>(best)]);
        }
        ++T.counters.flow_splits;
        parts = components(nodes);
    }

    // depth, start/stop and the depth-first order
    void finish(Tree& T) const {
        const size_t m = T.parent.size();
        T.depth.assign(m, 0);
        T.start.assign(m, 0);
        T.stop.assign(m, 0);
        T.order.clear();
        T.order.reserve(static_cast<size_t>(in_.n()));
        // iterative pre-order; a node is closed when popped a second time
        std::vector<std::pair<i64, bool>> st;
        st.emplace_back(0, false);
        while (!st.empty()) {
            auto [x, closing] = st.back();
            st.pop_back();
            const size_t ux = static_cast<size_t>(x);
            if (closing) {
                T.stop[ux] = static_cast<i64>(T.order.size());
                continue;
            }
            if (T.parent[ux] >= 0) T.depth[ux] = T.depth[static_cast<size_t>(T.parent[ux])] + 1;
            T.start[ux] = static_cast<i64>(T.order.size());
            if (T.task[ux] >= 0) T.order.push_back(T.task[ux]);
            st.emplace_back(x, true);
            for (i64 c = T.child_count[ux]; c-- > 0;) st.emplace_back(T.child_start[ux] + c, false);
        }
    }
};

inline Tree cluster(const Input& in, const Params& p) {
    Clusterer c(in, p);
    return c.run();
}

}  // namespace flowinject
}  // namespace coalloc
