// assign+'s allocate and exchange steps (seed 003, section 8.2), the fast core of
// coalloc.testbed's default mapper.  The Python twin coalloc/testbed/_reference/allocate.py is
// the specification: every loop, tie-break and floating-point sum follows it in the same
// order, so that both give the same answer.  The header does not depend on Python.

#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "coalloc/testbed/anneal.hpp"

namespace coalloc {
namespace allocate {

using i64 = std::int64_t;
constexpr double BIG = 1e18;

// assign+ inputs beyond the annealer's arrays.
struct PlusData {
    const double* cscore;
    const i64 *vscore, *parent, *list_ptr, *list_idx, *vlist, *cswitch;
    i64 nlists;
    i64 ntrunks = 0;  // trunks (the length of anneal::Data::tcap)
};

struct Fail {
    i64 code = 0, v = 0, list = 0, need = 0, avail = 0;
};

class State {
   public:
    explicit State(const anneal::Data& d) : d_(d) {
        where.assign(d.nv, -1);
        cur.assign(d.npn, -1);
        used.assign(d.npn, 0.0);
        add.assign(d.npn * d.na, 0.0);
        tcount.assign(d.nty, 0.0);
        vcount.assign(d.nvc * d.nty, 0);
        hosted.assign(d.npn, {});
        // members of each pclass that are free (used 0) or switches: Allocator::size_of
        nsize.assign(d.nc, 0);
        for (i64 c = 0; c < d.nc; ++c) nsize[c] = d.mem_ptr[c + 1] - d.mem_ptr[c];
    }
    std::vector<i64> where, cur, vcount, nsize;
    std::vector<double> used, add, tcount;
    std::vector<std::vector<i64>> hosted;

    bool fits(i64 v, i64 p) const {
        const anneal::Data& d = d_;
        if (d.fixed[v] >= 0 && d.fixed[v] != p) return false;
        i64 c = d.pclass[p];
        if (c < 0) return false;
        i64 k = v * d.nc + c;
        i64 t = d.vtype[k];
        if (t < 0) return false;
        if (!d.vstatic[k]) {
            if (cur[p] >= 0 && cur[p] != t) return false;
            if (used[p] + d.vslots[v] > d.cap[p * d.nty + t] + 1e-9) return false;
            if (cur[p] < 0 && !anneal::limits_allow(d, tcount, p)) return false;
        }
        for (i64 a = 0; a < d.na; ++a)
            if (add[p * d.na + a] + d.vadd[v * d.na + a] > d.padd[p * d.na + a] + 1e-9) return false;
        i64 vc = d.vclass[v];
        if (vc >= 0 && d.vclass_w[vc] >= 1.0) {
            for (i64 t2 = 0; t2 < d.nty; ++t2)
                if (t2 != t && vcount[vc * d.nty + t2] > 0) return false;
        }
        return true;
    }

    void place(i64 v, i64 p) {
        const anneal::Data& d = d_;
        i64 c = d.pclass[p];
        i64 k = v * d.nc + c;
        i64 t = d.vtype[k];
        if (!d.vstatic[k]) {
            if (cur[p] < 0) anneal::count_types(d, tcount, p, 1.0);
            cur[p] = t;
            const bool was_free = used[p] == 0;
            used[p] += d.vslots[v];
            count_free(p, c, was_free);
        }
        for (i64 a = 0; a < d.na; ++a) add[p * d.na + a] += d.vadd[v * d.na + a];
        i64 vc = d.vclass[v];
        if (vc >= 0) vcount[vc * d.nty + t] += 1;
        where[v] = p;
        hosted[p].push_back(v);
    }

    void remove(i64 v) {
        const anneal::Data& d = d_;
        i64 p = where[v];
        i64 c = d.pclass[p];
        i64 k = v * d.nc + c;
        i64 t = d.vtype[k];
        if (!d.vstatic[k]) {
            const bool was_free = used[p] == 0;
            used[p] -= d.vslots[v];
            bool others = false;
            for (i64 u : hosted[p]) {
                if (u != v && !d.vstatic[u * d.nc + c]) {
                    others = true;
                    break;
                }
            }
            if (!others) {
                cur[p] = -1;
                used[p] = 0.0;
                anneal::count_types(d, tcount, p, -1.0);
            }
            count_free(p, c, was_free);
        }
        for (i64 a = 0; a < d.na; ++a) add[p * d.na + a] -= d.vadd[v * d.na + a];
        i64 vc = d.vclass[v];
        if (vc >= 0) vcount[vc * d.nty + t] -= 1;
        where[v] = -1;
        auto& h = hosted[p];
        h.erase(std::find(h.begin(), h.end(), v));
    }

    i64 first_free(i64 c, i64 v) const {
        const anneal::Data& d = d_;
        // members are in increasing order: partly used ones first, then free ones
        for (i64 q = d.mem_ptr[c]; q < d.mem_ptr[c + 1]; ++q) {
            i64 p = d.mem_idx[q];
            if (used[p] != 0 && fits(v, p)) return p;
        }
        for (i64 q = d.mem_ptr[c]; q < d.mem_ptr[c + 1]; ++q) {
            i64 p = d.mem_idx[q];
            if (used[p] == 0 && fits(v, p)) return p;
        }
        return -1;
    }

   private:
    const anneal::Data& d_;

    // keep nsize in step with `used[p] == 0` (switch members always count)
    void count_free(i64 p, i64 c, bool was_free) {
        const bool is_free = used[p] == 0;
        if (was_free != is_free && !d_.pis_sw[p]) nsize[c] += is_free ? 1 : -1;
    }
};

inline double bw_of(const anneal::Data& d, i64 e, i64 pa, i64 pb) {
    if (d.lbw[e] >= 0) return d.lbw[e];
    double m = std::min(d.pifbw[pa], d.pifbw[pb]);
    return m < BIG ? m : 100000.0;
}

class Allocator {
   public:
    Allocator(const anneal::Data& d, const PlusData& x) : d_(d), x_(x) {
        children_.assign(d.nv, {});
        for (i64 v = 0; v < d.nv; ++v)
            if (x.parent[v] >= 0) children_[x.parent[v]].push_back(v);
        neighbours_.assign(d.nv, {});
        row_ok_.assign(d.nv, 1);
        for (i64 v = 0; v < d.nv; ++v)
            for (i64 k = d.inc_ptr[v]; k < d.inc_ptr[v + 1]; ++k) {
                i64 e = d.inc_idx[k];
                neighbours_[v].push_back(d.la[e] == v ? d.lb[e] : d.la[e]);
                if (!(d.lbw[e] >= 0)) row_ok_[v] = 0;  // bw_of looks at the nodes' interfaces
            }
        // the switch every member of a pclass is on (-2: the members disagree)
        class_sw_.assign(d.nc, -2);
        for (i64 c = 0; c < d.nc; ++c) {
            i64 lo = d.mem_ptr[c], hi = d.mem_ptr[c + 1];
            if (lo == hi) continue;
            i64 s = d.pswitch[d.mem_idx[lo]];
            bool same = true;
            for (i64 q = lo + 1; q < hi; ++q) same = same && d.pswitch[d.mem_idx[q]] == s;
            if (same) class_sw_[c] = s;
        }
        adj_.assign(d.nv, 0);
        rows_.assign(d.nv * (d.ns > 0 ? d.ns : 1), 0.0);
    }

    // Returns true on success; st holds the placement, fail the reason otherwise.
    bool allocate(int strategy, State& st, Fail& fail) const {
        const anneal::Data& d = d_;
        for (i64 v = 0; v < d.nv; ++v) {
            i64 p = d.fixed[v];
            if (p >= 0) {
                if (!st.fits(v, p)) {
                    fail = {1, v, -1, 0, 0};
                    return false;
                }
                st.place(v, p);
            }
        }
        for (i64 li = 0; li < x_.nlists; ++li) {
            std::vector<i64> L(x_.list_idx + x_.list_ptr[li], x_.list_idx + x_.list_ptr[li + 1]);
            std::vector<i64> todo;
            for (i64 v = 0; v < d.nv; ++v)
                if (x_.vlist[v] == li && st.where[v] < 0) todo.push_back(v);
            if (todo.empty()) continue;
            i64 avail = 0;
            for (i64 c : L)
                for (i64 q = d.mem_ptr[c]; q < d.mem_ptr[c + 1]; ++q)
                    if (st.used[d.mem_idx[q]] == 0) avail += 1;
            bool single = true;
            for (i64 v : todo)
                for (i64 c : L) {
                    i64 k = v * d.nc + c;
                    if (d.vstatic[k] || d.vslots[v] < 1) {
                        single = false;
                    } else {
                        i64 t = d.vtype[k];  // members of a pclass offer the same slots
                        if (d.cap[d.mem_idx[d.mem_ptr[c]] * d.nty + t] > 1) single = false;
                    }
                }
            if ((i64)todo.size() > avail && single) {
                fail = {2, todo[0], li, (i64)todo.size(), avail};
                return false;
            }
            std::stable_sort(todo.begin(), todo.end(), [&](i64 a, i64 b) {
                return std::make_pair(-x_.vscore[a], a) < std::make_pair(-x_.vscore[b], b);
            });
            for (i64 v : todo) {
                if (st.where[v] >= 0) continue;
                check_deadline(deadline_);  // (a stop abandons this strategy's partial placement)
                std::vector<i64> desc = descendants(v, st);
                std::vector<i64>& cl = cl_;
                order(strategy, L, v, st, cl);
                bool done = false;
                std::vector<i64>& group = group_;  // scratch
                for (i64 c : cl) {
                    group.assign(1, v);
                    for (i64 u : desc)
                        if (d.vtype[u * d.nc + c] >= 0) group.push_back(u);
                    if (group.size() > 1 && try_group(c, group, st)) {
                        done = true;
                        break;
                    }
                }
                if (!done) {
                    group.assign(1, v);
                    for (i64 u : desc)
                        if (x_.vlist[u] == li) group.push_back(u);
                    if (group.size() > 1) {
                        for (i64 c : cl)
                            if (try_group(c, group, st)) {
                                done = true;
                                break;
                            }
                    }
                }
                if (!done) {
                    group.assign(1, v);
                    for (i64 c : cl)
                        if (try_group(c, group, st)) {
                            done = true;
                            break;
                        }
                }
                if (!done) {
                    fail = {3, v, li, 0, 0};
                    return false;
                }
            }
        }
        return true;
    }

    double local(const State& st, i64 v, i64 p, i64 other, i64 q) const {
        const anneal::Data& d = d_;
        double cost = 0.0;
        for (i64 k = d.inc_ptr[v]; k < d.inc_ptr[v + 1]; ++k) {
            i64 e = d.inc_idx[k];
            i64 w = d.la[e] == v ? d.lb[e] : d.la[e];
            i64 pw = w == other ? q : st.where[w];
            i64 s1 = d.pswitch[p], s2 = d.pswitch[pw];
            if (s1 != s2 && s1 >= 0 && s2 >= 0) {
                i64 h = d.hops[s1 * d.ns + s2];
                cost += bw_of(d, e, p, pw) * (double)(h > 1 ? h : 1);
            }
        }
        return cost;
    }

    // local(st, v, p, -1, -1) for a node p on each switch s at once: row[s], every term added
    // in the same order as local() adds it, so the values are identical.  Valid only when
    // every link of v has its own bandwidth (row_ok_[v]): then bw_of does not look at p.
    void local_row(const State& st, i64 v, double* row) const {
        const anneal::Data& d = d_;
        for (i64 s = 0; s < d.ns; ++s) row[s] = 0.0;
        for (i64 k = d.inc_ptr[v]; k < d.inc_ptr[v + 1]; ++k) {
            i64 e = d.inc_idx[k];
            i64 w = d.la[e] == v ? d.lb[e] : d.la[e];
            i64 s2 = d.pswitch[st.where[w]];
            if (s2 < 0) continue;
            const double bw = d.lbw[e];
            const i64* hrow = d.hops + s2;  // hops[s * ns + s2]
            for (i64 s = 0; s < d.ns; ++s) {
                if (s == s2) continue;
                i64 h = hrow[s * d.ns];
                row[s] += bw * (double)(h > 1 ? h : 1);
            }
        }
    }

    // local() of v at a node of pclass c, from v's row when it is valid for (v, c)
    bool row_cost(i64 v, i64 c, double& out) const {
        if (!row_ok_[v] || class_sw_[c] == -2) return false;
        i64 s = class_sw_[c];
        out = s >= 0 ? rows_[v * d_.ns + s] : 0.0;
        return true;
    }

    std::vector<double> loads(const std::vector<i64>& where) const {
        const anneal::Data& d = d_;
        std::vector<double> tl(ntrunks_, 0.0);
        for (i64 e = 0; e < d.ne; ++e) {
            i64 pa = where[d.la[e]], pb = where[d.lb[e]];
            if (pa < 0 || pb < 0 || pa == pb) continue;
            i64 s1 = d.pswitch[pa], s2 = d.pswitch[pb];
            if (s1 != s2 && s1 >= 0 && s2 >= 0) {
                i64 k = s1 * d.ns + s2;
                double bw = bw_of(d, e, pa, pb);
                for (i64 q = d.path_ptr[k]; q < d.path_ptr[k + 1]; ++q) tl[d.path_idx[q]] += bw;
            }
        }
        return tl;
    }

    double over_delta(const State& st, const std::vector<double>& tl, i64 v, i64 p_new, i64 u,
                      i64 q_new) const {
        const anneal::Data& d = d_;
        std::vector<std::pair<i64, double>>& delta = delta_;
        delta.clear();
        i64 movers[2] = {v, u};
        for (int mi = 0; mi < (u < 0 ? 1 : 2); ++mi) {
            i64 x = movers[mi];
            for (i64 k = d.inc_ptr[x]; k < d.inc_ptr[x + 1]; ++k) {
                i64 e = d.inc_idx[k];
                i64 w = d.la[e] == x ? d.lb[e] : d.la[e];
                if (x == u && w == v) continue;
                i64 xo = st.where[x], wo = st.where[w];
                i64 xn = x == v ? p_new : q_new;
                i64 wn = w == v ? p_new : (w == u ? q_new : wo);
                const i64 pas[2] = {xo, xn}, pbs[2] = {wo, wn};
                const double signs[2] = {-1.0, 1.0};
                for (int j = 0; j < 2; ++j) {
                    i64 pa = pas[j], pb = pbs[j];
                    if (pa == pb) continue;
                    i64 s1 = d.pswitch[pa], s2 = d.pswitch[pb];
                    if (s1 != s2 && s1 >= 0 && s2 >= 0) {
                        double bw = bw_of(d, e, pa, pb);
                        i64 kk = s1 * d.ns + s2;
                        for (i64 q = d.path_ptr[kk]; q < d.path_ptr[kk + 1]; ++q) {
                            i64 g = d.path_idx[q];
                            bool found = false;
                            for (auto& kv : delta)
                                if (kv.first == g) {
                                    kv.second = kv.second + signs[j] * bw;
                                    found = true;
                                    break;
                                }
                            if (!found) delta.emplace_back(g, 0.0 + signs[j] * bw);
                        }
                    }
                }
            }
        }
        double change = 0.0;
        for (const auto& kv : delta) {
            double before = tl[kv.first] - d.tcap[kv.first];
            double after = tl[kv.first] + kv.second - d.tcap[kv.first];
            change += (after > 0 ? after : 0.0) - (before > 0 ? before : 0.0);
        }
        return change;
    }

    i64 ntrunks_ = 0;
    Deadline deadline_ = kNoDeadline;  // the call's; the polls are made from it, and it is
                                       // checked where a stop abandons a strategy
    static constexpr double TRUNK_W = 1000.0;

    i64 exchange(State& st, i64 max_rounds, bool trunk_aware) const {
        const anneal::Data& d = d_;
        i64 moves = 0;
        Poll poll(deadline_, 16);  // the deadline, Ctrl-C (interrupt.h)
        std::vector<double> tl, now(d.nv);
        std::vector<char> dirty(d.nv, 1);
        std::vector<i64> seen;
        std::vector<std::vector<i64>> partners(d.nc);
        auto touch = [&](i64 x) {  // x moved: its cost and its neighbours' costs change
            dirty[x] = 1;
            for (i64 w : neighbours_[x]) dirty[w] = 1;
        };
        for (i64 round = 0; round < max_rounds; ++round) {
            double over_now = 0.0;
            if (trunk_aware) {
                tl = loads(st.where);
                for (std::size_t g = 0; g < tl.size(); ++g)
                    if (tl[g] > d.tcap[g]) over_now += tl[g] - d.tcap[g];
            }
            // every node's cost where it is (the twin's `bnd` and `cur`) and its cost on
            // every switch (local_row), recomputed for the nodes a move touched: both are
            // functions of where the node's neighbours are
            for (i64 u = 0; u < d.nv; ++u) {
                if (!dirty[u]) continue;
                dirty[u] = 0;
                now[u] = local(st, u, st.where[u], -1, -1);
                if (row_ok_[u]) local_row(st, u, &rows_[u * d.ns]);
            }
            // swap partners bucketed by pclass, in increasing node order (the twin's scan
            // over every node in order, filtered the same way, visits the same sequence)
            for (auto& b : partners) b.clear();
            for (i64 u = 0; u < d.nv; ++u) {
                i64 p = st.where[u];
                if (p >= 0 && now[u] > 0) partners[d.pclass[p]].push_back(u);
            }
            // Without overload, the trunk term only lowers a gain (it is computed for a
            // winner only), so a move or swap whose bandwidth gain cannot beat the best is
            // skipped: the twin evaluates it and rejects it.
            const bool prune = !(trunk_aware && over_now > 0);
            double best_gain = 1e-9;
            int kind = -1;
            i64 bv = -1, bx = -1;
            for (i64 v = 0; v < d.nv; ++v) {
                poll.tick();
                check_deadline(deadline_);
                if (d.fixed[v] >= 0) continue;
                i64 pv = st.where[v];
                double cur = now[v];
                if (cur <= 0) continue;
                seen.clear();
                for (i64 k = d.inc_ptr[v]; k < d.inc_ptr[v + 1]; ++k) {
                    i64 e = d.inc_idx[k];
                    i64 w = d.la[e] == v ? d.lb[e] : d.la[e];
                    seen.push_back(d.pswitch[st.where[w]]);
                    adj_[w] = 1;
                }
                for (i64 k = d.cand_ptr[v]; k < d.cand_ptr[v + 1]; ++k) {
                    i64 c = d.cand_idx[k];
                    if (std::find(seen.begin(), seen.end(), x_.cswitch[c]) == seen.end() &&
                        !d.pis_sw[d.mem_idx[d.mem_ptr[c]]])
                        continue;  // switches (LAN nodes): every candidate
                    double lc;
                    const bool known = row_cost(v, c, lc);
                    if (!(prune && known && !(cur - lc > best_gain))) {
                        st.remove(v);
                        i64 p_new = st.first_free(c, v);
                        st.place(v, pv);
                        if (p_new >= 0) {
                            double gain = cur - (known ? lc : local(st, v, p_new, -1, -1));
                            if (trunk_aware && (over_now > 0 || gain > best_gain))
                                gain -= TRUNK_W * over_delta(st, tl, v, p_new, -1, -1);
                            if (gain > best_gain) {
                                best_gain = gain;
                                kind = 0;
                                bv = v;
                                bx = p_new;
                            }
                        }
                    }
                    for (i64 u : partners[c]) {
                        i64 p = st.where[u];
                        if (u == v || d.fixed[u] >= 0) continue;
                        if (d.vtype[u * d.nc + d.pclass[pv]] < 0) continue;
                        double a, b;
                        if (row_ok_[v] && row_ok_[u] && !adj_[u]) {  // no link between them
                            i64 sp = d.pswitch[p], spv = d.pswitch[pv];
                            a = sp >= 0 ? rows_[v * d.ns + sp] : 0.0;
                            b = spv >= 0 ? rows_[u * d.ns + spv] : 0.0;
                        } else {
                            a = local(st, v, p, u, pv);
                            b = local(st, u, pv, v, p);
                        }
                        double g = cur + now[u] - a - b;
                        if (trunk_aware && (over_now > 0 || g > best_gain))
                            g -= TRUNK_W * over_delta(st, tl, v, p, u, pv);
                        if (g > best_gain) {
                            best_gain = g;
                            kind = 1;
                            bv = v;
                            bx = u;
                        }
                    }
                }
                for (i64 k = d.inc_ptr[v]; k < d.inc_ptr[v + 1]; ++k) {
                    i64 e = d.inc_idx[k];
                    adj_[d.la[e] == v ? d.lb[e] : d.la[e]] = 0;
                }
            }
            if (kind < 0) break;
            if (kind == 0) {
                i64 pv = st.where[bv];
                st.remove(bv);
                if (!st.fits(bv, bx)) {
                    st.place(bv, pv);
                    break;
                }
                st.place(bv, bx);
                touch(bv);
            } else {
                i64 u = bx;
                i64 pv = st.where[bv], pu = st.where[u];
                st.remove(bv);
                st.remove(u);
                if (st.fits(bv, pu) && st.fits(u, pv)) {
                    st.place(bv, pu);
                    st.place(u, pv);
                    touch(bv);
                    touch(u);
                } else {
                    st.place(bv, pv);
                    st.place(u, pu);
                    break;
                }
            }
            moves += 1;
        }
        return moves;
    }

    // Kernighan-Lin passes over the boundary nodes (see the twin's _kl_passes).
    i64 kl_passes(State& st, bool trunk_aware, int max_passes = 3) const {
        const anneal::Data& d = d_;
        i64 kept = 0;
        Poll poll(deadline_, 16);
        std::vector<i64> seen;
        for (int pass = 0; pass < max_passes; ++pass) {
            std::vector<char> locked(d.nv, 0);
            std::vector<std::pair<i64, i64>> applied;
            double cum = 0.0, best_cum = 1e-9;
            std::size_t best_len = 0;
            for (i64 step = 0; step < std::min<i64>(d.nv, 24); ++step) {
                std::vector<double> tl;
                double over_now = 0.0;
                if (trunk_aware) {
                    tl = loads(st.where);
                    for (std::size_t g = 0; g < tl.size(); ++g)
                        if (tl[g] > d.tcap[g]) over_now += tl[g] - d.tcap[g];
                }
                i64 bv = -1, bp = -1;
                double best_gain = -HUGE_VAL;
                const bool prune = !(trunk_aware && over_now > 0);  // as in exchange()
                for (i64 v = 0; v < d.nv; ++v) {
                    poll.tick();
                    check_deadline(deadline_);
                    if (locked[v] || d.fixed[v] >= 0) continue;
                    i64 pv = st.where[v];
                    double cur = local(st, v, pv, -1, -1);
                    if (cur <= 0) continue;
                    seen.clear();
                    for (i64 k = d.inc_ptr[v]; k < d.inc_ptr[v + 1]; ++k) {
                        i64 e = d.inc_idx[k];
                        i64 w = d.la[e] == v ? d.lb[e] : d.la[e];
                        seen.push_back(d.pswitch[st.where[w]]);
                    }
                    if (row_ok_[v]) local_row(st, v, &rows_[v * d.ns]);
                    for (i64 k = d.cand_ptr[v]; k < d.cand_ptr[v + 1]; ++k) {
                        i64 c = d.cand_idx[k];
                        if (x_.cswitch[c] == d.pswitch[pv] ||
                            std::find(seen.begin(), seen.end(), x_.cswitch[c]) == seen.end())
                            continue;
                        double lc;
                        const bool known = row_cost(v, c, lc);
                        if (prune && known && !(cur - lc > best_gain)) continue;
                        st.remove(v);
                        i64 p_new = st.first_free(c, v);
                        st.place(v, pv);
                        if (p_new < 0) continue;
                        double gain = cur - (known ? lc : local(st, v, p_new, -1, -1));
                        if (trunk_aware && (over_now > 0 || gain > best_gain))
                            gain -= TRUNK_W * over_delta(st, tl, v, p_new, -1, -1);
                        if (gain > best_gain) {
                            best_gain = gain;
                            bv = v;
                            bp = p_new;
                        }
                    }
                }
                if (bv < 0) break;
                i64 old = st.where[bv];
                st.remove(bv);
                st.place(bv, bp);
                locked[bv] = 1;
                applied.emplace_back(bv, old);
                cum += best_gain;
                if (cum > best_cum) {
                    best_cum = cum;
                    best_len = applied.size();
                }
            }
            for (std::size_t i = applied.size(); i > best_len; --i) {
                st.remove(applied[i - 1].first);
                st.place(applied[i - 1].first, applied[i - 1].second);
            }
            if (best_len == 0) break;
            kept += (i64)best_len;
        }
        return kept;
    }

    double objective(const std::vector<i64>& where, bool trunk_aware) const {
        double val = isw(where);
        if (trunk_aware) {
            std::vector<double> tl = loads(where);
            double over = 0.0;
            for (std::size_t g = 0; g < tl.size(); ++g)
                if (tl[g] > d_.tcap[g]) over += tl[g] - d_.tcap[g];
            val += TRUNK_W * over;
        }
        return val;
    }

    // A hub with its leaf children (at least two) moved to another switch in one step
    // (members that cannot go there stay) while the objective drops.
    i64 group_moves(State& st, bool trunk_aware) const {
        const anneal::Data& d = d_;
        i64 moves = 0;
        Poll poll(deadline_, 16);
        for (int round = 0; round < 3; ++round) {
            bool improved = false;
            for (i64 v = 0; v < d.nv; ++v) {
                poll.tick();
                check_deadline(deadline_);
                if (d.fixed[v] >= 0) continue;
                std::vector<i64> group{v};
                for (i64 u : children_[v])
                    if (children_[u].empty() && d.fixed[u] < 0) group.push_back(u);
                if (group.size() < 3) continue;
                double base = objective(st.where, trunk_aware);
                for (i64 s = 0; s < d.ns; ++s) {
                    std::vector<i64> old;
                    for (i64 u : group) old.push_back(st.where[u]);
                    for (i64 u : group) st.remove(u);
                    bool ok = true;
                    for (std::size_t i = 0; i < group.size(); ++i) {
                        i64 u = group[i];
                        i64 p = -1;
                        for (i64 k = d.cand_ptr[u]; k < d.cand_ptr[u + 1]; ++k) {
                            i64 c = d.cand_idx[k];
                            if (x_.cswitch[c] == s) {
                                p = st.first_free(c, u);
                                if (p >= 0) break;
                            }
                        }
                        if (p < 0) {
                            if (i == 0) {
                                ok = false;
                                break;
                            }
                            p = st.fits(u, old[i]) ? old[i] : -1;
                            if (p < 0) {
                                ok = false;
                                break;
                            }
                        }
                        st.place(u, p);
                    }
                    if (ok) {
                        double val = objective(st.where, trunk_aware);
                        if (val < base - 1e-9) {
                            base = val;
                            improved = true;
                            moves += 1;
                            continue;
                        }
                    }
                    for (i64 u : group)
                        if (st.where[u] >= 0) st.remove(u);
                    for (std::size_t i = 0; i < group.size(); ++i) st.place(group[i], old[i]);
                }
            }
            if (!improved) break;
        }
        return moves;
    }

    double isw(const std::vector<i64>& where) const {
        const anneal::Data& d = d_;
        double total = 0.0;
        for (i64 e = 0; e < d.ne; ++e) {
            i64 pa = where[d.la[e]], pb = where[d.lb[e]];
            if (pa < 0 || pb < 0 || pa == pb) continue;
            i64 s1 = d.pswitch[pa], s2 = d.pswitch[pb];
            if (s1 != s2 && s1 >= 0 && s2 >= 0) {
                i64 h = d.hops[s1 * d.ns + s2];
                total += bw_of(d, e, pa, pb) * (double)(h > 1 ? h : 1);
            }
        }
        return total;
    }

   private:
    const anneal::Data& d_;
    const PlusData& x_;
    std::vector<std::vector<i64>> children_, neighbours_;
    std::vector<char> row_ok_;  // every link of the node has its own bandwidth
    std::vector<i64> class_sw_;  // the switch of a pclass's members (-2: not one)
    mutable std::vector<char> adj_;  // scratch: neighbours of the node being scanned
    mutable std::vector<double> rows_;  // scratch: local_row of the boundary nodes
    mutable std::vector<std::pair<i64, double>> delta_;  // scratch of over_delta
    mutable std::vector<i64> group_, cl_;  // scratch of allocate
    using Key = std::array<double, 5>;
    mutable std::vector<Key> keys_;  // scratch of order
    mutable std::vector<i64> idx_;
    mutable std::vector<std::pair<i64, i64>> pc_, sw_;

    std::vector<i64> descendants(i64 v, const State& st) const {
        std::vector<i64> out, stack(children_[v]);
        while (!stack.empty()) {
            i64 u = stack.back();
            stack.pop_back();
            if (st.where[u] < 0) out.push_back(u);
            for (i64 w : children_[u]) stack.push_back(w);
        }
        return out;
    }

    // members of pclass c that are free or switches (the twin counts them; State keeps the
    // count as used[] changes)
    i64 size_of(i64 c, const State& st) const { return st.nsize[c]; }

    // L's pclasses in the strategy's order, into `out`.  Each key is the twin's tuple, its
    // numbers held as doubles (all integers here are far below 2^53, so the order is the
    // same); a stable sort keeps L's order on ties, as the twin's sorted() does.
    void order(int strategy, const std::vector<i64>& L, i64 v, const State& st,
               std::vector<i64>& out) const {
        const anneal::Data& d = d_;
        const i64 n = (i64)L.size();
        std::vector<Key>& keys = keys_;
        std::vector<i64>& idx = idx_;
        keys.assign(n, Key{});
        idx.resize(n);
        for (i64 i = 0; i < n; ++i) idx[i] = i;
        auto finish = [&]() {
            std::stable_sort(idx.begin(), idx.end(),
                             [&](i64 a, i64 b) { return keys[a] < keys[b]; });
            out.clear();
            for (i64 i : idx) out.push_back(L[i]);
        };
        if (strategy == 0) {
            for (i64 i = 0; i < n; ++i)
                keys[i] = {-(double)size_of(L[i], st), (double)L[i], 0, 0, 0};
            return finish();
        }
        if (strategy == 1) {
            for (i64 i = 0; i < n; ++i)
                keys[i] = {x_.cscore[L[i]], -(double)size_of(L[i], st), (double)L[i], 0, 0};
            return finish();
        }
        // parent/child hosted per pclass, neighbours hosted per switch (insertion order)
        std::vector<std::pair<i64, i64>>& pc = pc_;
        std::vector<std::pair<i64, i64>>& sw = sw_;
        pc.clear();
        sw.clear();
        auto bump = [](std::vector<std::pair<i64, i64>>& m, i64 key) {
            for (auto& kv : m)
                if (kv.first == key) {
                    kv.second += 1;
                    return;
                }
            m.emplace_back(key, 1);
        };
        auto get = [](const std::vector<std::pair<i64, i64>>& m, i64 key) -> i64 {
            for (const auto& kv : m)
                if (kv.first == key) return kv.second;
            return 0;
        };
        for (i64 u : children_[v])
            if (st.where[u] >= 0) bump(pc, d.pclass[st.where[u]]);
        if (x_.parent[v] >= 0 && st.where[x_.parent[v]] >= 0)
            bump(pc, d.pclass[st.where[x_.parent[v]]]);
        for (i64 u : neighbours_[v])
            if (st.where[u] >= 0) bump(sw, d.pswitch[st.where[u]]);
        if (strategy == 4) {
            for (i64 i = 0; i < n; ++i)
                keys[i] = {(double)(-(1 + get(pc, L[i])) * size_of(L[i], st)), x_.cscore[L[i]],
                           (double)L[i], 0, 0};
            return finish();
        }
        if (strategy == 3) {
            for (i64 i = 0; i < n; ++i)
                keys[i] = {(double)(-(1 + get(pc, L[i]) + get(sw, x_.cswitch[L[i]])) *
                                    size_of(L[i], st)),
                           x_.cscore[L[i]], (double)L[i], 0, 0};
            return finish();
        }
        auto iswf = [&](i64 c) {
            i64 s = x_.cswitch[c];
            double total = 0.0;
            for (const auto& kv : sw) {
                i64 t = kv.first, cnt = kv.second;
                if (t == s) {
                    total += (double)cnt * BIG;
                } else if (s >= 0 && t >= 0) {
                    i64 k = s * d.ns + t;
                    i64 lo = d.path_ptr[k], hi = d.path_ptr[k + 1];
                    if (hi > lo) {
                        double m = d.tcap[d.path_idx[lo]];
                        for (i64 q = lo + 1; q < hi; ++q) m = std::min(m, d.tcap[d.path_idx[q]]);
                        total += (double)cnt * m;
                    }
                }
            }
            return total;
        };
        // ISW (2) takes the largest pclass among equals, FIT (5) the smallest (best fit)
        const double sgn = strategy == 5 ? 1.0 : -1.0;
        for (i64 i = 0; i < n; ++i)
            keys[i] = {-(double)get(pc, L[i]), -iswf(L[i]), sgn * (double)size_of(L[i], st),
                       x_.cscore[L[i]], (double)L[i]};
        finish();
    }

    bool try_group(i64 c, const std::vector<i64>& group, State& st) const {
        for (std::size_t i = 0; i < group.size(); ++i) {
            i64 p = st.first_free(c, group[i]);
            if (p < 0) {
                for (std::size_t j = 0; j < i; ++j) st.remove(group[j]);  // those placed
                return false;
            }
            st.place(group[i], p);
        }
        return true;
    }
};

// What allocate_all returns: the placement of every strategy before (row 2 i) and after
// (row 2 i + 1) the exchange, then the refined best (row 2 ns); -1 rows and NaN values where
// there is none.
struct Outcome {
    std::vector<i64> where;   // (2 ns + 1) x nv
    std::vector<double> isw;  // 2 ns + 1: the inter-switch bandwidth of each row
    std::vector<i64> fail;    // ns x 5: code, v, list, need, avail of a failed allocate
    i64 exchanges = 0;        // moves made by the exchanges, group moves and passes
    // stopped by the deadline or the poll: the rows hold what was done before the stop (the
    // row being improved holds its placement at the stop, complete and not worse than
    // allocate's); the others are -1 / NaN
    bool stopped = false;
};

// assign+'s strategy loop: allocate once per strategy (codes 0..5), exchange each placement
// (a placement an earlier strategy produced reuses that exchange) and, where trunk_aware,
// refine the best exchanged one by group moves and Kernighan-Lin passes.  The twin is
// coalloc.testbed._reference.allocate.allocate_all.
inline Outcome allocate_all(const anneal::Data& d, const PlusData& x,
                            const std::vector<int>& strategies, bool use_exchange,
                            i64 max_rounds, bool trunk_aware,
                            const Deadline& deadline) {
    const i64 ns = (i64)strategies.size();
    Outcome out;
    out.where.assign((2 * ns + 1) * d.nv, -1);
    out.fail.assign(ns * 5, 0);
    out.isw.assign(2 * ns + 1, std::nan(""));
    std::vector<i64>& where = out.where;
    std::vector<double>& isw = out.isw;
    std::vector<i64> xmoves(ns, 0);
    Allocator A(d, x);
    A.ntrunks_ = x.ntrunks;
    A.deadline_ = deadline;
    // the placement being improved when a stop comes, and its row
    // (owned out here, so that it outlives the unwinding of a stop)
    std::unique_ptr<State> cur;
    const State* live = nullptr;
    i64 live_row = -1;
    try {
    for (i64 i = 0; i < ns; ++i) {
        check_deadline(deadline);
        cur = std::make_unique<State>(d);
        State& st = *cur;
        Fail f;
        if (!A.allocate(strategies[i], st, f)) {
            out.fail[i * 5] = f.code;
            out.fail[i * 5 + 1] = f.v;
            out.fail[i * 5 + 2] = f.list;
            out.fail[i * 5 + 3] = f.need;
            out.fail[i * 5 + 4] = f.avail;
            continue;
        }
        std::copy(st.where.begin(), st.where.end(), where.begin() + 2 * i * d.nv);
        isw[2 * i] = A.isw(st.where);
        if (use_exchange) {
            // a placement an earlier strategy produced: reuse its exchange
            i64 same = -1;
            for (i64 j = 0; j < i && same < 0; ++j)
                if (!std::isnan(isw[2 * j]) &&
                    std::equal(st.where.begin(), st.where.end(), where.begin() + 2 * j * d.nv))
                    same = j;
            if (same >= 0) {
                out.exchanges += xmoves[same];
                std::copy(where.begin() + (2 * same + 1) * d.nv,
                          where.begin() + (2 * same + 2) * d.nv,
                          where.begin() + (2 * i + 1) * d.nv);
                isw[2 * i + 1] = isw[2 * same + 1];
                continue;
            }
            live = &st;
            live_row = 2 * i + 1;
            xmoves[i] = A.exchange(st, max_rounds, trunk_aware);
            live = nullptr;
            out.exchanges += xmoves[i];
            std::copy(st.where.begin(), st.where.end(), where.begin() + (2 * i + 1) * d.nv);
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
            cur = std::make_unique<State>(d);
            State& st = *cur;
            for (i64 v = 0; v < d.nv; ++v) st.place(v, where[(2 * best + 1) * d.nv + v]);
            live = &st;
            live_row = 2 * ns;
            i64 gm = A.group_moves(st, true);
            gm += A.kl_passes(st, true);
            out.exchanges += gm;
            if (gm) out.exchanges += A.exchange(st, max_rounds, true);
            live = nullptr;
            std::copy(st.where.begin(), st.where.end(), where.begin() + 2 * ns * d.nv);
            isw[2 * ns] = A.isw(st.where);
        }
    }
    } catch (const Interrupted&) {
        out.stopped = true;
        // the checks sit between two moves: the live placement is complete
        if (live != nullptr &&
            std::none_of(live->where.begin(), live->where.end(), [](i64 p) { return p < 0; })) {
            std::copy(live->where.begin(), live->where.end(), where.begin() + live_row * d.nv);
            isw[live_row] = A.isw(live->where);
        }
    }
    return out;
}

}  // namespace allocate
}  // namespace coalloc
