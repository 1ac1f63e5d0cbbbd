"""Pure-Python twin of coalloc.testbed._anneal: assign's simulated annealing over pclasses.

Same signature and, for the same data and seed, exactly the same answer as the compiled
kernel (``tests/testbed/kernels`` asserts it). The data dictionary is the one
:func:`coalloc.testbed.anneal.kernel_data` builds.

The state is a mapping virtual node -> physical node; a move picks a free virtual node
(xoshiro256** stream), one of its candidate pclasses, and the first physical node of the
pclass (from a random offset) that can take it, or else swaps it with the single virtual
node on the node at that offset. The score uses the published weights (direct link 0.01,
intra-switch 0.02, inter-switch 0.2, physical node 0.2, switch 0.5, pclass 0.5, unused
interface 0.04, unassigned node 1.0, feature costs, vclass weights); each violation
(unassigned node, over-subscribed trunk group, interface over-use, unreachable switch)
adds 1.0 and is counted. Metropolis acceptance ``exp(-delta / T)``; melting phase of
``melt_moves`` accepted-always moves sets the start temperature so that about
``melt_accept`` of the uphill moves would be accepted; ``T *= cooling`` after each
temperature step of ``max(min_moves, free nodes x pclasses)`` moves; stop when ``T <
t_stop``, after ``frozen`` steps without an energy change, or at ``max_moves``.
"""

from __future__ import annotations

import math

import numpy as np

from ..._shared import interrupt
from ..._shared.xoshiro import Xoshiro256

__all__ = ["anneal", "Xoshiro256", "WEIGHTS"]

BIG = 1e18
NATIVE_BW = 100000.0
#: Score weights (assign's distributed defaults).
WEIGHTS = {"direct": 0.01, "intraswitch": 0.02, "interswitch": 0.2, "pnode": 0.2,
           "switch": 0.5, "pclass": 0.5, "unused_interface": 0.04, "unassigned": 1.0,
           "violation": 1.0}  # fmt: skip


def limits_allow(limited, tlimit, tweight, nty, tcount, p) -> bool:
    """``set-type-limit`` as Emulab counts it: may physical node ``p`` start being used?

    A used node adds its weight (its slots) of every type it lists to that type's count,
    whichever type it acts as; no limited type may go over its limit.
    """
    for t in limited:
        w = tweight[p * nty + t]
        if w > 0 and tcount[t] + w > tlimit[t] + 1e-9:
            return False
    return True


def count_types(limited, tweight, nty, tcount, p, sign) -> None:
    """Node ``p`` starts (``sign`` 1.0) or stops (-1.0) being used: update the counts."""
    for t in limited:
        tcount[t] += sign * tweight[p * nty + t]


class _Stop(Exception):
    """The twin's deadline passed (the kernel's own deadline check)."""


def anneal(data: dict, seed: int, params: dict) -> dict:
    """Simulated annealing of one mapping problem (see the module docstring).

    Parameters
    ----------
    data : dict of str to ndarray
        The flat arrays of :func:`coalloc.testbed.anneal.kernel_data`.
    seed : int
        64-bit seed of the xoshiro256** stream.
    params : dict
        ``t0, melt_moves, melt_accept, cooling, min_moves, t_stop, frozen, max_moves``;
        optionally ``start`` (one physical node per virtual node, -1 none): free virtual
        nodes whose start node fits are placed there first, in index order, and the random
        initial assignment places the rest; optionally ``deadline`` (a
        :class:`coalloc._shared.interrupt.KernelDeadline`; None: none of its own), where
        the search stops by itself.

    Returns
    -------
    dict
        ``where`` (int64 array, -1 unassigned), ``score``, ``violations``, ``valid``,
        ``moves``, ``accepted``, ``temperatures``, ``t_start``, ``run_limit``,
        ``first_valid`` (the moves made when the first valid mapping was met; -1: never),
        ``stopped`` (the deadline, Ctrl-C or a cancelled scope stopped the search: the best
        so far is returned) and ``error`` (the error to raise then; None for the deadline).
    """
    W = WEIGHTS
    nvc = len(data["vclass_w"])
    na = data["vadd"].shape[1] if data["vadd"].ndim == 2 else 0
    data = {k: np.asarray(v).reshape(-1).tolist() for k, v in data.items()}
    la, lb, lbw = data["la"], data["lb"], data["lbw"]
    ltriv, lemu = data["ltriv"], data["lemu"]
    cand_ptr, cand_idx = data["cand_ptr"], data["cand_idx"]
    mem_ptr, mem_idx = data["mem_ptr"], data["mem_idx"]
    inc_ptr, inc_idx = data["inc_ptr"], data["inc_idx"]
    pclass, pswitch, pis_sw = data["pclass"], data["pswitch"], data["pis_switch"]
    pif, pifbw = data["pifaces"], data["pifbw"]
    vtype, vstatic, fcost = data["vtype"], data["vstatic"], data["fcost"]
    vslots, cap, tlimit = data["vslots"], data["cap"], data["tlimit"]
    tweight = data["tweight"]
    vadd, padd = data["vadd"], data["padd"]
    fixed, vclass, vclass_w = data["fixed"], data["vclass"], data["vclass_w"]
    hops, path_ptr, path_idx, tcap = data["hops"], data["path_ptr"], data["path_idx"], data["tcap"]
    dir_ptr, dir_idx = data["dir_ptr"], data["dir_idx"]
    nv, npn = len(vslots), len(pclass)
    nc = len(mem_ptr) - 1
    nty = len(tlimit)
    ns = int(round(math.sqrt(len(hops))))
    vadd_f, padd_f = vadd, padd
    fcost_f, vtype_f, vstatic_f = fcost, vtype, vstatic
    cap_f = cap

    where = [-1] * nv
    pcount = [0] * npn
    nstat = [0] * npn
    cur = [-1] * npn
    used = [0.0] * npn
    used_if = [0] * npn
    add_used = [0.0] * (npn * na)
    tcount = [0.0] * nty
    limited = [t for t in range(nty) if tlimit[t] >= 0]
    ccount = [0] * nc
    scount = [0] * ns
    vcount = [0] * (nvc * nty)
    tload = [0.0] * len(tcap)
    st = {"score": W["unassigned"] * nv, "viol": nv}

    def bw_of(e: int, pa: int, pb: int) -> float:
        if lbw[e] >= 0:
            return float(lbw[e])
        m = min(pifbw[pa], pifbw[pb])
        return float(m) if m < BIG else NATIVE_BW

    def pnode_terms(p: int, sign: int) -> None:
        if pcount[p] > 0 and not pis_sw[p]:
            free = pif[p] - used_if[p]
            st["score"] += sign * (W["pnode"] + W["unused_interface"] * (free if free > 0 else 0))
            if free < 0:
                st["score"] += sign * W["violation"] * (-free)
                st["viol"] += sign * (-free)

    def vclass_terms(vc: int, sign: int) -> None:
        d = 0
        for t in range(nty):
            if vcount[vc * nty + t] > 0:
                d += 1
        if d > 1:
            if vclass_w[vc] >= 1.0:
                st["score"] += sign * W["violation"] * (d - 1)
                st["viol"] += sign * (d - 1)
            else:
                st["score"] += sign * vclass_w[vc] * (d - 1)

    def trunk(g: int, amount: float) -> None:
        before = 1 if tload[g] > tcap[g] + 1e-9 else 0
        tload[g] += amount
        after = 1 if tload[g] > tcap[g] + 1e-9 else 0
        st["score"] += W["violation"] * (after - before)
        st["viol"] += after - before

    def link(e: int, sign: int) -> None:
        pa, pb = where[la[e]], where[lb[e]]
        ifa = ifb = 0
        if pa == pb:
            if ltriv[e] or pis_sw[pa]:
                cost = 0.0
            else:
                cost = W["intraswitch"]
                if not lemu[e]:
                    ifa = 2
        else:
            if not lemu[e]:
                ifa = 0 if pis_sw[pa] else 1
                ifb = 0 if pis_sw[pb] else 1
            sa, sb = pswitch[pa], pswitch[pb]
            if not pis_sw[pa] and not pis_sw[pb] and pb in dir_idx[dir_ptr[pa] : dir_ptr[pa + 1]]:
                cost = W["direct"]  # the router takes a direct link first
            elif sa < 0 or sb < 0 or hops[sa * ns + sb] < 0:
                cost = W["violation"]
                st["viol"] += sign
            elif sa == sb:
                cost = W["direct"] if (pis_sw[pa] or pis_sw[pb]) else W["intraswitch"]
            else:
                cost = W["interswitch"]
                bw = bw_of(e, pa, pb)
                k = sa * ns + sb
                for q in range(path_ptr[k], path_ptr[k + 1]):
                    trunk(path_idx[q], sign * bw)
        st["score"] += sign * cost
        if ifa:
            pnode_terms(pa, -1)
            used_if[pa] += sign * ifa
            pnode_terms(pa, 1)
        if ifb:
            pnode_terms(pb, -1)
            used_if[pb] += sign * ifb
            pnode_terms(pb, 1)

    def fits(v: int, p: int) -> bool:
        if fixed[v] >= 0 and fixed[v] != p:
            return False
        c = pclass[p]
        k = v * nc + c
        t = vtype_f[k]
        if t < 0:
            return False
        if not vstatic_f[k]:
            if cur[p] >= 0 and cur[p] != t:
                return False
            if used[p] + vslots[v] > cap_f[p * nty + t] + 1e-9:
                return False
            if cur[p] < 0 and not limits_allow(limited, tlimit, tweight, nty, tcount, p):
                return False
        for a in range(na):
            if add_used[p * na + a] + vadd_f[v * na + a] > padd_f[p * na + a] + 1e-9:
                return False
        vc = vclass[v]
        if vc >= 0 and vclass_w[vc] >= 1.0:
            for t2 in range(nty):
                if t2 != t and vcount[vc * nty + t2] > 0:
                    return False
        return True

    def add(v: int, p: int) -> None:
        c = pclass[p]
        k = v * nc + c
        t = vtype_f[k]
        pnode_terms(p, -1)
        pcount[p] += 1
        if not vstatic_f[k]:
            if nstat[p] == 0:
                cur[p] = t
                count_types(limited, tweight, nty, tcount, p, 1.0)
            nstat[p] += 1
            used[p] += vslots[v]
        for a in range(na):
            add_used[p * na + a] += vadd_f[v * na + a]
        pnode_terms(p, 1)
        ccount[c] += 1
        if ccount[c] == 1:
            st["score"] += W["pclass"]
        s = pswitch[p]
        if s >= 0:
            scount[s] += 1
            if scount[s] == 1:
                st["score"] += W["switch"]
        st["score"] += fcost_f[k]
        vc = vclass[v]
        if vc >= 0:
            vclass_terms(vc, -1)
            vcount[vc * nty + t] += 1
            vclass_terms(vc, 1)
        st["score"] -= W["unassigned"]
        st["viol"] -= 1
        where[v] = p
        for q in range(inc_ptr[v], inc_ptr[v + 1]):
            e = inc_idx[q]
            w = lb[e] if la[e] == v else la[e]
            if where[w] >= 0:
                link(e, 1)

    def remove(v: int) -> None:
        p = where[v]
        for q in range(inc_ptr[v], inc_ptr[v + 1]):
            e = inc_idx[q]
            w = lb[e] if la[e] == v else la[e]
            if where[w] >= 0:
                link(e, -1)
        c = pclass[p]
        k = v * nc + c
        t = vtype_f[k]
        vc = vclass[v]
        if vc >= 0:
            vclass_terms(vc, -1)
            vcount[vc * nty + t] -= 1
            vclass_terms(vc, 1)
        st["score"] -= fcost_f[k]
        s = pswitch[p]
        if s >= 0:
            scount[s] -= 1
            if scount[s] == 0:
                st["score"] -= W["switch"]
        ccount[c] -= 1
        if ccount[c] == 0:
            st["score"] -= W["pclass"]
        pnode_terms(p, -1)
        pcount[p] -= 1
        if not vstatic_f[k]:
            nstat[p] -= 1
            used[p] -= vslots[v]
            if nstat[p] == 0:
                cur[p] = -1
                used[p] = 0.0
                count_types(limited, tweight, nty, tcount, p, -1.0)
        for a in range(na):
            add_used[p * na + a] -= vadd_f[v * na + a]
        pnode_terms(p, 1)
        st["score"] += W["unassigned"]
        st["viol"] += 1
        where[v] = -1

    rng = Xoshiro256(seed)
    # fixed nodes, then a random initial assignment (Algorithm 1, lines 1-5)
    free_v = []
    for v in range(nv):
        if fixed[v] >= 0:
            if fits(v, fixed[v]):
                add(v, fixed[v])
        else:
            free_v.append(v)
    start = params.get("start")
    if start is not None:  # a start mapping: free nodes whose start fits go there first
        start = np.asarray(start, dtype=np.int64).reshape(-1).tolist()
        if len(start) != nv:
            raise ValueError("params['start'] must have one entry per virtual node")
        if any(p < -1 or p >= npn for p in start):
            raise ValueError("params['start'] names no physical node")
        for v in free_v:
            if start[v] >= 0 and fits(v, start[v]):
                add(v, start[v])
    order = list(free_v)
    for i in range(len(order) - 1, 0, -1):
        j = rng.below(i + 1)
        order[i], order[j] = order[j], order[i]
    for v in order:
        if where[v] >= 0:  # placed at its start
            continue
        nca = cand_ptr[v + 1] - cand_ptr[v]
        if nca == 0:
            continue
        o = rng.below(nca)
        done = False
        for i in range(nca):
            c = cand_idx[cand_ptr[v] + (o + i) % nca]
            for q in range(mem_ptr[c], mem_ptr[c + 1]):
                if fits(v, mem_idx[q]):
                    add(v, mem_idx[q])
                    done = True
                    break
            if done:
                break

    best_where = list(where)
    best_score = st["score"]
    best_viol = st["viol"]
    counters = {"moves": 0, "accepted": 0, "first_valid": 0 if best_viol == 0 else -1}

    def move(T: float) -> float:
        """One move at temperature T (T < 0: always accept). Returns delta (nan: none)."""
        nonlocal best_score, best_viol, best_where
        nfree = len(free_v)
        if nfree == 0:
            return math.nan
        v = free_v[rng.below(nfree)]
        nca = cand_ptr[v + 1] - cand_ptr[v]
        if nca == 0:
            return math.nan
        c = cand_idx[cand_ptr[v] + rng.below(nca)]
        m = mem_ptr[c + 1] - mem_ptr[c]
        o = rng.below(m)
        counters["moves"] += 1
        e0 = st["score"]
        old = where[v]
        if old >= 0:
            remove(v)
        target = -1
        for i in range(m):
            p = mem_idx[mem_ptr[c] + (o + i) % m]
            if p != old and fits(v, p):
                target = p
                break
        u = -1
        if target >= 0:
            add(v, target)
        else:
            p = mem_idx[mem_ptr[c] + o]
            if old >= 0 and p != old and pcount[p] == 1:
                for w in free_v:
                    if where[w] == p:
                        u = w
                        break
            if u < 0:
                if old >= 0:
                    add(v, old)
                return math.nan
            remove(u)
            if fits(v, p):
                add(v, p)
                if fits(u, old):
                    add(u, old)
                    target = p
                else:
                    remove(v)
            if target < 0:
                add(u, p)
                add(v, old)
                return math.nan
        delta = st["score"] - e0
        if T < 0 or delta <= 0 or rng.uniform() < math.exp(-delta / T):
            counters["accepted"] += 1
            if st["viol"] == 0 and (best_viol > 0 or st["score"] < best_score - 1e-12):
                if counters["first_valid"] < 0:
                    counters["first_valid"] = counters["moves"]
                best_score, best_viol = st["score"], 0
                best_where = list(where)
            elif best_viol > 0 and st["viol"] < best_viol:
                best_score, best_viol = st["score"], st["viol"]
                best_where = list(where)
            return delta
        # reject: undo
        if u >= 0:
            remove(u)
            remove(v)
            add(u, target)
            add(v, old)
        else:
            remove(v)
            if old >= 0:
                add(v, old)
        return math.nan

    until = params.get("deadline")  # a KernelDeadline (None: none of its own)

    def poll() -> None:  # the compiled kernel's poll and deadline (twin)
        interrupt.check()
        if until is not None and until.expired:
            raise _Stop

    # melting: accept everything, measure the uphill deltas
    up_sum, up_n = 0.0, 0
    t_start = float(params["t0"])
    temps = 0
    run_limit = False
    stopped, error = False, None
    try:
        for k in range(int(params["melt_moves"])):
            if not k & 255:
                poll()
            d = move(-1.0)
            if d == d and d > 1e-12:
                up_sum += d
                up_n += 1
        T = float(params["t0"])
        if up_n > 0:
            T = (up_sum / up_n) / -math.log(float(params["melt_accept"]))
        t_start = T
        n_per = max(int(params["min_moves"]), len(free_v) * nc)
        still = 0
        max_moves = int(params["max_moves"])
        while T >= float(params["t_stop"]) and len(free_v) > 0:
            changed = False
            for k in range(n_per):
                if not k & 255:
                    poll()
                d = move(T)
                if d == d and abs(d) > 1e-12:
                    changed = True
                if counters["moves"] >= max_moves:
                    run_limit = True
                    break
            temps += 1
            if run_limit:
                break
            still = 0 if changed else still + 1
            if int(params["frozen"]) > 0 and still >= int(params["frozen"]):
                break
            T *= float(params["cooling"])
    except _Stop:  # the deadline: the best so far is the answer
        stopped = True
    except BaseException as err:  # Ctrl-C, a cancelled scope: the caller raises it
        stopped, error = True, err
    return {
        "where": np.array(best_where, dtype=np.int64),
        "score": float(best_score),
        "violations": int(best_viol),
        "valid": bool(best_viol == 0),
        "moves": int(counters["moves"]),
        "accepted": int(counters["accepted"]),
        "temperatures": int(temps),
        "t_start": float(t_start),
        "run_limit": bool(run_limit),
        "first_valid": int(counters["first_valid"]),
        "stopped": stopped,
        "error": error,
    }
