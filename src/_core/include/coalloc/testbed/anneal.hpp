// assign's simulated annealing over pclasses (Ricci, Alfeld & Lepreau 2003), the baseline of
// coalloc.testbed.  The Python twin coalloc/testbed/_reference/anneal.py is the specification:
// every operation here follows it in the same order, so that the two give the same answer
// bit for bit (same moves, same floating-point sums).  The header does not depend on Python.

#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "coalloc/common/interrupt.h"
#include "coalloc/common/xoshiro.hpp"

namespace coalloc {
namespace anneal {

using i64 = std::int64_t;

struct Weights {
    double direct = 0.01, intraswitch = 0.02, interswitch = 0.2, pnode = 0.2, sw = 0.5,
           pclass = 0.5, unused_interface = 0.04, unassigned = 1.0, violation = 1.0;
};

// The kernels' deadline is the common coalloc::Deadline (coalloc/common/deadline.h): the time
// limit's instant (less a reserve) merged with the scopes' by the wrapper, and the scope's
// cancel flag.  Their polls are made from it: past it, the poll throws Interrupted with no
// Python error set, and the kernel returns its best answer so far with `stopped` (the binding
// tells a deadline, where no Python error is pending, from Ctrl-C, where one is; the Python
// side then asks the scopes which of them, if any, ended the call).

// Flat input arrays (owned by the caller; see coalloc.testbed.anneal.kernel_data).
struct Data {
    i64 nv, npn, nc, nty, na, ns, nvc, ne;
    const i64 *la, *lb, *ltriv, *lemu;
    const double* lbw;
    const i64 *cand_ptr, *cand_idx, *mem_ptr, *mem_idx, *inc_ptr, *inc_idx;
    const i64 *pclass, *pswitch, *pis_sw, *pif;
    const double* pifbw;
    const i64 *vtype, *vstatic;
    const double *fcost, *vslots, *cap;
    const i64* tlimit;
    const double* tweight;  // npn x nty: what a used node adds to each type's count
    bool has_limits = false;  // some type has a set-type-limit
    const double *vadd, *padd;
    const i64 *fixed, *vclass;
    const double* vclass_w;
    const i64 *hops, *path_ptr, *path_idx;
    const double* tcap;
    const i64 *dir_ptr, *dir_idx;  // each host's peers over a direct link (CSR, ascending)
};

// Are hosts a and b joined by a direct (host-host) link?
inline bool direct_pair(const Data& d, i64 a, i64 b) {
    for (i64 q = d.dir_ptr[a]; q < d.dir_ptr[a + 1]; ++q)
        if (d.dir_idx[q] == b) return true;
    return false;
}

// set-type-limit as Emulab's assign counts it: a physical node in use adds its weight
// (its slots) of every type it lists, whichever type it acts as.  May node p start being
// used without a limited type going over its limit?
inline bool limits_allow(const Data& d, const std::vector<double>& tcount, i64 p) {
    if (!d.has_limits) return true;
    for (i64 t = 0; t < d.nty; ++t) {
        if (d.tlimit[t] < 0) continue;
        double w = d.tweight[p * d.nty + t];
        if (w > 0 && tcount[t] + w > (double)d.tlimit[t] + 1e-9) return false;
    }
    return true;
}

// Node p starts (sign 1) or stops (sign -1) being used: its weights join or leave the counts
// of the limited types.
inline void count_types(const Data& d, std::vector<double>& tcount, i64 p, double sign) {
    if (!d.has_limits) return;
    for (i64 t = 0; t < d.nty; ++t)
        if (d.tlimit[t] >= 0) tcount[t] += sign * d.tweight[p * d.nty + t];
}

struct Params {
    double t0, melt_accept, cooling, t_stop;
    i64 melt_moves, min_moves, frozen, max_moves;
    // optional start (nv entries, -1: none): each free virtual node whose start node fits
    // is placed there first, in index order, before the random initial assignment places
    // the others (nullptr: the random initial assignment of every free node, as published)
    const i64* start = nullptr;
    Deadline deadline = kNoDeadline;  // the call's; its poll looks every 256 moves
};

struct Output {
    std::vector<i64> where;
    double score = 0, t_start = 0;
    i64 violations = 0, moves = 0, accepted = 0, temperatures = 0;
    bool run_limit = false;
    // stopped by the deadline or the poll (Ctrl-C, a cancelled scope): `where` is the best
    // found before the stop
    bool stopped = false;
    i64 first_valid = -1;  // moves made when the first valid mapping was met (-1: never)
};

class Annealer {
   public:
    Annealer(const Data& d, std::uint64_t seed) : d_(d), rng_(seed) {
        where_.assign(d.nv, -1);
        pcount_.assign(d.npn, 0);
        nstat_.assign(d.npn, 0);
        cur_.assign(d.npn, -1);
        used_.assign(d.npn, 0.0);
        used_if_.assign(d.npn, 0);
        add_used_.assign(d.npn * d.na, 0.0);
        tcount_.assign(d.nty, 0.0);
        ccount_.assign(d.nc, 0);
        scount_.assign(d.ns, 0);
        vcount_.assign(d.nvc * d.nty, 0);
        tload_.assign(d.ns > 0 ? (std::size_t)tcap_len() : 0, 0.0);
        score_ = W_.unassigned * (double)d.nv;
        viol_ = d.nv;
    }

    Output run(const Params& prm) {
        const Data& d = d_;
        for (i64 v = 0; v < d.nv; ++v) {
            if (d.fixed[v] >= 0) {
                if (fits(v, d.fixed[v])) add(v, d.fixed[v]);
            } else {
                free_v_.push_back(v);
            }
        }
        if (prm.start != nullptr)
            for (i64 v : free_v_)
                if (prm.start[v] >= 0 && fits(v, prm.start[v])) add(v, prm.start[v]);
        std::vector<i64> order = free_v_;
        for (i64 i = (i64)order.size() - 1; i > 0; --i) {
            i64 j = rng_.below(i + 1);
            std::swap(order[i], order[j]);
        }
        for (i64 v : order) {
            if (where_[v] >= 0) continue;  // placed at its start
            i64 nca = d.cand_ptr[v + 1] - d.cand_ptr[v];
            if (nca == 0) continue;
            i64 o = rng_.below(nca);
            bool done = false;
            for (i64 i = 0; i < nca && !done; ++i) {
                i64 c = d.cand_idx[d.cand_ptr[v] + (o + i) % nca];
                for (i64 q = d.mem_ptr[c]; q < d.mem_ptr[c + 1]; ++q) {
                    if (fits(v, d.mem_idx[q])) {
                        add(v, d.mem_idx[q]);
                        done = true;
                        break;
                    }
                }
            }
        }
        best_where_ = where_;
        best_score_ = score_;
        best_viol_ = viol_;
        if (viol_ == 0) first_valid_ = 0;

        Output out;
        i64 temps = 0;
        bool run_limit = false;
        try {
            search(prm, out, temps, run_limit);
        } catch (const Interrupted&) {
            // the deadline or the poll stopped the search: the best so far is the answer
            out.stopped = true;
        }
        out.where = best_where_;
        out.score = best_score_;
        out.violations = best_viol_;
        out.moves = moves_;
        out.accepted = accepted_;
        out.temperatures = temps;
        out.run_limit = run_limit;
        out.first_valid = first_valid_;
        return out;
    }

   private:
    // Melting then cooling; throws Interrupted when stopped (the state stays consistent:
    // the checks sit between two moves).
    void search(const Params& prm, Output& out, i64& temps, bool& run_limit) {
        const Data& d = d_;
        double up_sum = 0.0;
        i64 up_n = 0;
        Poll poll(prm.deadline, 256);  // the deadline, Ctrl-C (coalloc/common/interrupt.h)
        auto tick = [&]() { poll.tick(); };
        for (i64 k = 0; k < prm.melt_moves; ++k) {
            tick();
            double dl = move(-1.0);
            if (dl == dl && dl > 1e-12) {
                up_sum += dl;
                up_n += 1;
            }
        }
        double T = prm.t0;
        if (up_n > 0) T = (up_sum / (double)up_n) / -std::log(prm.melt_accept);
        out.t_start = T;
        i64 n_per = std::max<i64>(prm.min_moves, (i64)free_v_.size() * d.nc);
        i64 still = 0;
        while (T >= prm.t_stop && !free_v_.empty()) {
            bool changed = false;
            for (i64 k = 0; k < n_per; ++k) {
                tick();
                double dl = move(T);
                if (dl == dl && std::fabs(dl) > 1e-12) changed = true;
                if (moves_ >= prm.max_moves) {
                    run_limit = true;
                    break;
                }
            }
            temps += 1;
            if (run_limit) break;
            still = changed ? 0 : still + 1;
            if (prm.frozen > 0 && still >= prm.frozen) break;
            T *= prm.cooling;
        }
    }

    i64 tcap_len() const { return tcap_n_; }

   public:
    i64 tcap_n_ = 0;
    void set_ntrunks(i64 n) {
        tcap_n_ = n;
        tload_.assign(n, 0.0);
    }

   private:
    const Data& d_;
    Xoshiro256ss rng_;
    Weights W_;
    std::vector<i64> where_, pcount_, nstat_, cur_, used_if_, ccount_, scount_, vcount_;
    std::vector<double> tcount_;  // per type: the weights of the used nodes listing it
    std::vector<double> used_, add_used_, tload_;
    std::vector<i64> free_v_, best_where_;
    double score_ = 0, best_score_ = 0;
    i64 viol_ = 0, best_viol_ = 0, moves_ = 0, accepted_ = 0;
    i64 first_valid_ = -1;  // moves made when the first valid mapping was met (-1: none)

    double bw_of(i64 e, i64 pa, i64 pb) const {
        if (d_.lbw[e] >= 0) return d_.lbw[e];
        double m = std::min(d_.pifbw[pa], d_.pifbw[pb]);
        return m < 1e18 ? m : 100000.0;
    }

    void pnode_terms(i64 p, int sign) {
        if (pcount_[p] > 0 && !d_.pis_sw[p]) {
            i64 fr = d_.pif[p] - used_if_[p];
            score_ += sign * (W_.pnode + W_.unused_interface * (double)(fr > 0 ? fr : 0));
            if (fr < 0) {
                score_ += sign * W_.violation * (double)(-fr);
                viol_ += sign * (-fr);
            }
        }
    }

    void vclass_terms(i64 vc, int sign) {
        i64 dd = 0;
        for (i64 t = 0; t < d_.nty; ++t)
            if (vcount_[vc * d_.nty + t] > 0) dd += 1;
        if (dd > 1) {
            if (d_.vclass_w[vc] >= 1.0) {
                score_ += sign * W_.violation * (double)(dd - 1);
                viol_ += sign * (dd - 1);
            } else {
                score_ += sign * d_.vclass_w[vc] * (double)(dd - 1);
            }
        }
    }

    void trunk(i64 g, double amount) {
        int before = tload_[g] > d_.tcap[g] + 1e-9 ? 1 : 0;
        tload_[g] += amount;
        int after = tload_[g] > d_.tcap[g] + 1e-9 ? 1 : 0;
        score_ += W_.violation * (double)(after - before);
        viol_ += after - before;
    }

    void link(i64 e, int sign) {
        const Data& d = d_;
        i64 pa = where_[d.la[e]], pb = where_[d.lb[e]];
        i64 ifa = 0, ifb = 0;
        double cost;
        if (pa == pb) {
            if (d.ltriv[e] || d.pis_sw[pa]) {
                cost = 0.0;
            } else {
                cost = W_.intraswitch;
                if (!d.lemu[e]) ifa = 2;
            }
        } else {
            if (!d.lemu[e]) {
                ifa = d.pis_sw[pa] ? 0 : 1;
                ifb = d.pis_sw[pb] ? 0 : 1;
            }
            i64 sa = d.pswitch[pa], sb = d.pswitch[pb];
            if (!d.pis_sw[pa] && !d.pis_sw[pb] && direct_pair(d, pa, pb)) {
                cost = W_.direct;  // the router takes a direct link first
            } else if (sa < 0 || sb < 0 || d.hops[sa * d.ns + sb] < 0) {
                cost = W_.violation;
                viol_ += sign;
            } else if (sa == sb) {
                cost = (d.pis_sw[pa] || d.pis_sw[pb]) ? W_.direct : W_.intraswitch;
            } else {
                cost = W_.interswitch;
                double bw = bw_of(e, pa, pb);
                i64 k = sa * d.ns + sb;
                for (i64 q = d.path_ptr[k]; q < d.path_ptr[k + 1]; ++q)
                    trunk(d.path_idx[q], sign * bw);
            }
        }
        score_ += sign * cost;
        if (ifa) {
            pnode_terms(pa, -1);
            used_if_[pa] += sign * ifa;
            pnode_terms(pa, 1);
        }
        if (ifb) {
            pnode_terms(pb, -1);
            used_if_[pb] += sign * ifb;
            pnode_terms(pb, 1);
        }
    }

    bool fits(i64 v, i64 p) const {
        const Data& d = d_;
        if (d.fixed[v] >= 0 && d.fixed[v] != p) return false;
        i64 c = d.pclass[p];
        if (c < 0) return false;
        i64 k = v * d.nc + c;
        i64 t = d.vtype[k];
        if (t < 0) return false;
        if (!d.vstatic[k]) {
            if (cur_[p] >= 0 && cur_[p] != t) return false;
            if (used_[p] + d.vslots[v] > d.cap[p * d.nty + t] + 1e-9) return false;
            if (cur_[p] < 0 && !limits_allow(d, tcount_, p)) return false;
        }
        for (i64 a = 0; a < d.na; ++a)
            if (add_used_[p * d.na + a] + d.vadd[v * d.na + a] > d.padd[p * d.na + a] + 1e-9)
                return false;
        i64 vc = d.vclass[v];
        if (vc >= 0 && d.vclass_w[vc] >= 1.0) {
            for (i64 t2 = 0; t2 < d.nty; ++t2)
                if (t2 != t && vcount_[vc * d.nty + t2] > 0) return false;
        }
        return true;
    }

    void add(i64 v, i64 p) {
        const Data& d = d_;
        i64 c = d.pclass[p];
        i64 k = v * d.nc + c;
        i64 t = d.vtype[k];
        pnode_terms(p, -1);
        pcount_[p] += 1;
        if (!d.vstatic[k]) {
            if (nstat_[p] == 0) {
                cur_[p] = t;
                count_types(d, tcount_, p, 1.0);
            }
            nstat_[p] += 1;
            used_[p] += d.vslots[v];
        }
        for (i64 a = 0; a < d.na; ++a) add_used_[p * d.na + a] += d.vadd[v * d.na + a];
        pnode_terms(p, 1);
        ccount_[c] += 1;
        if (ccount_[c] == 1) score_ += W_.pclass;
        i64 s = d.pswitch[p];
        if (s >= 0) {
            scount_[s] += 1;
            if (scount_[s] == 1) score_ += W_.sw;
        }
        score_ += d.fcost[k];
        i64 vc = d.vclass[v];
        if (vc >= 0) {
            vclass_terms(vc, -1);
            vcount_[vc * d.nty + t] += 1;
            vclass_terms(vc, 1);
        }
        score_ -= W_.unassigned;
        viol_ -= 1;
        where_[v] = p;
        for (i64 q = d.inc_ptr[v]; q < d.inc_ptr[v + 1]; ++q) {
            i64 e = d.inc_idx[q];
            i64 w = d.la[e] == v ? d.lb[e] : d.la[e];
            if (where_[w] >= 0) link(e, 1);
        }
    }

    void remove(i64 v) {
        const Data& d = d_;
        i64 p = where_[v];
        for (i64 q = d.inc_ptr[v]; q < d.inc_ptr[v + 1]; ++q) {
            i64 e = d.inc_idx[q];
            i64 w = d.la[e] == v ? d.lb[e] : d.la[e];
            if (where_[w] >= 0) link(e, -1);
        }
        i64 c = d.pclass[p];
        i64 k = v * d.nc + c;
        i64 t = d.vtype[k];
        i64 vc = d.vclass[v];
        if (vc >= 0) {
            vclass_terms(vc, -1);
            vcount_[vc * d.nty + t] -= 1;
            vclass_terms(vc, 1);
        }
        score_ -= d.fcost[k];
        i64 s = d.pswitch[p];
        if (s >= 0) {
            scount_[s] -= 1;
            if (scount_[s] == 0) score_ -= W_.sw;
        }
        ccount_[c] -= 1;
        if (ccount_[c] == 0) score_ -= W_.pclass;
        pnode_terms(p, -1);
        pcount_[p] -= 1;
        if (!d.vstatic[k]) {
            nstat_[p] -= 1;
            used_[p] -= d.vslots[v];
            if (nstat_[p] == 0) {
                cur_[p] = -1;
                used_[p] = 0.0;
                count_types(d, tcount_, p, -1.0);
            }
        }
        for (i64 a = 0; a < d.na; ++a) add_used_[p * d.na + a] -= d.vadd[v * d.na + a];
        pnode_terms(p, 1);
        score_ += W_.unassigned;
        viol_ += 1;
        where_[v] = -1;
    }

    double move(double T) {
        const Data& d = d_;
        const double nan = std::nan("");
        i64 nfree = (i64)free_v_.size();
        if (nfree == 0) return nan;
        i64 v = free_v_[rng_.below(nfree)];
        i64 nca = d.cand_ptr[v + 1] - d.cand_ptr[v];
        if (nca == 0) return nan;
        i64 c = d.cand_idx[d.cand_ptr[v] + rng_.below(nca)];
        i64 m = d.mem_ptr[c + 1] - d.mem_ptr[c];
        i64 o = rng_.below(m);
        moves_ += 1;
        double e0 = score_;
        i64 old = where_[v];
        if (old >= 0) remove(v);
        i64 target = -1;
        for (i64 i = 0; i < m; ++i) {
            i64 p = d.mem_idx[d.mem_ptr[c] + (o + i) % m];
            if (p != old && fits(v, p)) {
                target = p;
                break;
            }
        }
        i64 u = -1;
        if (target >= 0) {
            add(v, target);
        } else {
            i64 p = d.mem_idx[d.mem_ptr[c] + o];
            if (old >= 0 && p != old && pcount_[p] == 1) {
                for (i64 w : free_v_) {
                    if (where_[w] == p) {
                        u = w;
                        break;
                    }
                }
            }
            if (u < 0) {
                if (old >= 0) add(v, old);
                return nan;
            }
            remove(u);
            if (fits(v, p)) {
                add(v, p);
                if (fits(u, old)) {
                    add(u, old);
                    target = p;
                } else {
                    remove(v);
                }
            }
            if (target < 0) {
                add(u, p);
                add(v, old);
                return nan;
            }
        }
        double delta = score_ - e0;
        if (T < 0 || delta <= 0 || rng_.uniform() < std::exp(-delta / T)) {
            accepted_ += 1;
            if (viol_ == 0 && (best_viol_ > 0 || score_ < best_score_ - 1e-12)) {
                if (first_valid_ < 0) first_valid_ = moves_;
                best_score_ = score_;
                best_viol_ = 0;
                best_where_ = where_;
            } else if (best_viol_ > 0 && viol_ < best_viol_) {
                best_score_ = score_;
                best_viol_ = viol_;
                best_where_ = where_;
            }
            return delta;
        }
        if (u >= 0) {
            remove(u);
            remove(v);
            add(u, target);
            add(v, old);
        } else {
            remove(v);
            if (old >= 0) add(v, old);
        }
        return nan;
    }
};

}  // namespace anneal
}  // namespace coalloc
