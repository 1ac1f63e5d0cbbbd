"""Pure-Python twin of coalloc.testbed._allocate: assign+'s allocate and exchange steps.

Same signature and, for the same data, exactly the same answer as the compiled kernel
(``tests/testbed/kernels`` asserts it). ``data`` is :func:`coalloc.testbed.anneal.kernel_data`
plus the assign+ inputs :func:`coalloc.testbed.assignplus.plus_data` adds: ``cscore``
(score of each pclass), ``vscore`` and ``parent`` (the degree-scored partitioning),
``list_ptr``/``list_idx`` (candidate lists, most restricted first), ``vlist`` (the list of
each virtual node), ``cswitch`` (home switch of each pclass).

For each strategy (0 PART, 1 SCORE, 2 ISW, 3 PREF, 4 FRAG, 5 FIT) :func:`allocate` walks the
candidate lists; each virtual node of the list (highest partition score first) is placed
with its maximum pool (its unallocated descendants that may use the pclass), else its
minimum pool (those whose list is this list), else alone, on the first pclass (strategy
order) with room. :func:`exchange` then moves or swaps virtual nodes between pclasses
while the inter-switch bandwidth (bandwidth x trunk hops by home switch) drops.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._shared import interrupt
from .anneal import count_types, limits_allow

__all__ = ["allocate_all"]

BIG = 1e18
NATIVE_BW = 100000.0
FAIL_FIXED, FAIL_LIST, FAIL_NODE = 1, 2, 3


class _State:
    def __init__(self, d: dict) -> None:
        self.d = d
        npn, nty, na = d["npn"], d["nty"], d["na"]
        self.where = [-1] * d["nv"]
        self.cur = [-1] * npn
        self.used = [0.0] * npn
        self.add = [0.0] * (npn * na)
        self.tcount = [0.0] * nty
        self.limited = [t for t in range(nty) if d["tlimit"][t] >= 0]
        self.vcount = [0] * (d["nvc"] * nty)
        self.hosted = [[] for _ in range(npn)]

    def fits(self, v: int, p: int) -> bool:
        d = self.d
        if d["fixed"][v] >= 0 and d["fixed"][v] != p:
            return False
        c = d["pclass"][p]
        if c < 0:
            return False
        k = v * d["nc"] + c
        t = d["vtype"][k]
        if t < 0:
            return False
        nty, na = d["nty"], d["na"]
        if not d["vstatic"][k]:
            if self.cur[p] >= 0 and self.cur[p] != t:
                return False
            if self.used[p] + d["vslots"][v] > d["cap"][p * nty + t] + 1e-9:
                return False
            if self.cur[p] < 0 and not limits_allow(
                self.limited, d["tlimit"], d["tweight"], nty, self.tcount, p
            ):
                return False
        for a in range(na):
            if self.add[p * na + a] + d["vadd"][v * na + a] > d["padd"][p * na + a] + 1e-9:
                return False
        vc = d["vclass"][v]
        if vc >= 0 and d["vclass_w"][vc] >= 1.0:
            for t2 in range(nty):
                if t2 != t and self.vcount[vc * nty + t2] > 0:
                    return False
        return True

    def place(self, v: int, p: int) -> None:
        d = self.d
        c = d["pclass"][p]
        k = v * d["nc"] + c
        t = d["vtype"][k]
        if not d["vstatic"][k]:
            if self.cur[p] < 0:
                count_types(self.limited, d["tweight"], d["nty"], self.tcount, p, 1.0)
            self.cur[p] = t
            self.used[p] += d["vslots"][v]
        na = d["na"]
        for a in range(na):
            self.add[p * na + a] += d["vadd"][v * na + a]
        vc = d["vclass"][v]
        if vc >= 0:
            self.vcount[vc * d["nty"] + t] += 1
        self.where[v] = p
        self.hosted[p].append(v)

    def remove(self, v: int) -> None:
        d = self.d
        p = self.where[v]
        c = d["pclass"][p]
        k = v * d["nc"] + c
        t = d["vtype"][k]
        if not d["vstatic"][k]:
            self.used[p] -= d["vslots"][v]
            others = False
            for u in self.hosted[p]:
                if u != v and not d["vstatic"][u * d["nc"] + c]:
                    others = True
                    break
            if not others:
                self.cur[p] = -1
                self.used[p] = 0.0
                count_types(self.limited, d["tweight"], d["nty"], self.tcount, p, -1.0)
        na = d["na"]
        for a in range(na):
            self.add[p * na + a] -= d["vadd"][v * na + a]
        vc = d["vclass"][v]
        if vc >= 0:
            self.vcount[vc * d["nty"] + t] -= 1
        self.where[v] = -1
        self.hosted[p].remove(v)

    def first_free(self, c: int, v: int) -> int:
        """The first node of pclass c that takes v: partly used ones first, then by index."""
        d = self.d
        lo, hi = d["mem_ptr"][c], d["mem_ptr"][c + 1]
        for q in range(lo, hi):  # members are in increasing order
            p = d["mem_idx"][q]
            if self.used[p] != 0 and self.fits(v, p):
                return p
        for q in range(lo, hi):
            p = d["mem_idx"][q]
            if self.used[p] == 0 and self.fits(v, p):
                return p
        return -1


def _bw(d: dict, e: int, pa: int, pb: int) -> float:
    if d["lbw"][e] >= 0:
        return d["lbw"][e]
    m = min(d["pifbw"][pa], d["pifbw"][pb])
    return m if m < BIG else NATIVE_BW


def _unplaced_descendants(st: _State, children: list, v: int) -> list:
    """The descendants of ``v`` in the request tree ``children`` not placed yet."""
    out = []
    stack = list(children[v])
    while stack:
        u = stack.pop()
        if st.where[u] < 0:
            out.append(u)
        stack.extend(children[u])
    return out


def _try_group(st: _State, c: int, group: list) -> bool:
    """Place every node of ``group`` on the first free member of pclass ``c``; all or
    none (the placed ones removed again)."""
    placed = []
    for u in group:
        p = st.first_free(c, u)
        if p < 0:
            for w in placed:
                st.remove(w)
            return False
        st.place(u, p)
        placed.append(u)
    return True


def _free_members(d: dict, st: _State, L: list) -> int:
    """The unused members of the pclasses ``L``."""
    mem_ptr, mem_idx = d["mem_ptr"], d["mem_idx"]
    avail = 0
    for c in L:
        for q in range(mem_ptr[c], mem_ptr[c + 1]):
            if st.used[mem_idx[q]] == 0:
                avail += 1
    return avail


def _one_node_each(d: dict, todo: list, L: list) -> bool:
    """Whether each node of ``todo`` takes a whole member of any pclass of ``L`` (a dynamic
    type of one slot): then more nodes than free members is a proof of failure."""
    nc, mem_ptr, mem_idx = d["nc"], d["mem_ptr"], d["mem_idx"]
    single = True
    for v in todo:
        for c in L:
            k = v * nc + c
            if d["vstatic"][k] or d["vslots"][v] < 1:
                single = False
            else:
                t = d["vtype"][k]  # members of a pclass offer the same slots
                if d["cap"][mem_idx[mem_ptr[c]] * d["nty"] + t] > 1:
                    single = False
    return single


def _allocate(d: dict, strategy: int, children: list, neighbours: list):
    nv, nc = d["nv"], d["nc"]
    st = _State(d)
    vscore, parent, vlist = d["vscore"], d["parent"], d["vlist"]
    cscore, cswitch = d["cscore"], d["cswitch"]
    mem_ptr, mem_idx = d["mem_ptr"], d["mem_idx"]
    for v in range(nv):
        p = d["fixed"][v]
        if p >= 0:
            if not st.fits(v, p):
                return st, (FAIL_FIXED, v, -1, 0, 0)
            st.place(v, p)

    def size_of(c: int) -> int:
        n = 0
        for q in range(mem_ptr[c], mem_ptr[c + 1]):
            p = mem_idx[q]
            if st.used[p] == 0 or d["pis_switch"][p]:
                n += 1
        return n

    def order(L: list, v: int) -> list:
        size = {c: size_of(c) for c in L}
        if strategy == 0:
            return sorted(L, key=lambda c: (-size[c], c))
        if strategy == 1:
            return sorted(L, key=lambda c: (cscore[c], -size[c], c))
        pc = {}
        rel = list(children[v]) + ([parent[v]] if parent[v] >= 0 else [])
        for u in rel:
            if st.where[u] >= 0:
                c = d["pclass"][st.where[u]]
                pc[c] = pc.get(c, 0) + 1
        sw = {}
        for u in neighbours[v]:
            if st.where[u] >= 0:
                s = d["pswitch"][st.where[u]]
                sw[s] = sw.get(s, 0) + 1
        if strategy == 4:
            return sorted(L, key=lambda c: (-(1 + pc.get(c, 0)) * size[c], cscore[c], c))
        if strategy == 3:
            return sorted(L, key=lambda c: (-(1 + pc.get(c, 0) + sw.get(cswitch[c], 0))
                                            * size[c], cscore[c], c))  # fmt: skip
        ns = d["ns"]

        def isw(c: int) -> float:
            s = cswitch[c]
            total = 0.0
            for t, n in sw.items():
                if t == s:
                    total += n * BIG
                elif s >= 0 and t >= 0:
                    k = s * ns + t
                    lo, hi = d["path_ptr"][k], d["path_ptr"][k + 1]
                    if hi > lo:
                        m = min(d["tcap"][d["path_idx"][q]] for q in range(lo, hi))
                        total += n * m
            return total

        sgn = 1 if strategy == 5 else -1  # ISW: the largest pclass among equals; FIT: smallest
        return sorted(L, key=lambda c: (-pc.get(c, 0), -isw(c), sgn * size[c], cscore[c], c))

    nl = len(d["list_ptr"]) - 1
    for li in range(nl):
        d.get("_poll", interrupt.check)()  # the compiled kernel's poll (twin)
        L = [d["list_idx"][q] for q in range(d["list_ptr"][li], d["list_ptr"][li + 1])]
        todo = [v for v in range(nv) if vlist[v] == li and st.where[v] < 0]
        if not todo:
            continue
        avail = _free_members(d, st, L)
        if len(todo) > avail and _one_node_each(d, todo, L):
            return st, (FAIL_LIST, todo[0], li, len(todo), avail)
        todo.sort(key=lambda v: (-vscore[v], v))
        for v in todo:
            if st.where[v] >= 0:
                continue
            desc = _unplaced_descendants(st, children, v)
            cl = order(L, v)
            done = False
            for c in cl:
                pool = [u for u in desc if d["vtype"][u * nc + c] >= 0]
                if pool and _try_group(st, c, [v] + pool):
                    done = True
                    break
            if not done:
                pool = [u for u in desc if vlist[u] == li]
                if pool:
                    for c in cl:
                        if _try_group(st, c, [v] + pool):
                            done = True
                            break
            if not done:
                for c in cl:
                    if _try_group(st, c, [v]):
                        done = True
                        break
            if not done:
                return st, (FAIL_NODE, v, li, 0, 0)
    return st, None


def _local(d: dict, st: _State, v: int, p: int, other: int, q: int) -> float:
    cost = 0.0
    ns = d["ns"]
    for k in range(d["inc_ptr"][v], d["inc_ptr"][v + 1]):
        e = d["inc_idx"][k]
        w = d["lb"][e] if d["la"][e] == v else d["la"][e]
        pw = q if w == other else st.where[w]
        s1, s2 = d["pswitch"][p], d["pswitch"][pw]
        if s1 != s2 and s1 >= 0 and s2 >= 0:
            h = d["hops"][s1 * ns + s2]
            cost += _bw(d, e, p, pw) * (h if h > 1 else 1)
    return cost


TRUNK_W = 1000.0


def _loads(d: dict, where: list) -> list:
    tl = [0.0] * len(d["tcap"])
    ns = d["ns"]
    for e in range(len(d["la"])):
        pa, pb = where[d["la"][e]], where[d["lb"][e]]
        if pa < 0 or pb < 0 or pa == pb:
            continue
        s1, s2 = d["pswitch"][pa], d["pswitch"][pb]
        if s1 != s2 and s1 >= 0 and s2 >= 0:
            k = s1 * ns + s2
            bw = _bw(d, e, pa, pb)
            for q in range(d["path_ptr"][k], d["path_ptr"][k + 1]):
                tl[d["path_idx"][q]] += bw
    return tl


def _over_delta(d: dict, st: _State, tl: list, v: int, p_new: int, u: int, q_new: int) -> float:
    """Change of the trunk overload (sum of load above capacity) when v moves to p_new
    (and u to q_new when u >= 0)."""
    ns = d["ns"]
    delta = {}
    movers = [v] if u < 0 else [v, u]
    for x in movers:
        for k in range(d["inc_ptr"][x], d["inc_ptr"][x + 1]):
            e = d["inc_idx"][k]
            w = d["lb"][e] if d["la"][e] == x else d["la"][e]
            if x == u and w == v:
                continue  # counted with v
            xo, wo = st.where[x], st.where[w]
            xn = p_new if x == v else q_new
            wn = p_new if w == v else (q_new if w == u else wo)
            for pa, pb, sign in ((xo, wo, -1.0), (xn, wn, 1.0)):
                if pa == pb:
                    continue
                s1, s2 = d["pswitch"][pa], d["pswitch"][pb]
                if s1 != s2 and s1 >= 0 and s2 >= 0:
                    bw = _bw(d, e, pa, pb)
                    kk = s1 * ns + s2
                    for q in range(d["path_ptr"][kk], d["path_ptr"][kk + 1]):
                        g = d["path_idx"][q]
                        delta[g] = delta.get(g, 0.0) + sign * bw
    change = 0.0
    for g, dl in delta.items():
        before = tl[g] - d["tcap"][g]
        after = tl[g] + dl - d["tcap"][g]
        change += (after if after > 0 else 0.0) - (before if before > 0 else 0.0)
    return change


def _exchange(d: dict, st: _State, max_rounds: int, trunk_aware: bool) -> int:
    nv, nc = d["nv"], d["nc"]
    moves = 0
    for _ in range(max_rounds):
        d.get("_poll", interrupt.check)()  # the compiled kernel's poll (twin)
        tl = _loads(d, st.where) if trunk_aware else None
        # swap partners: virtual nodes with a link across switches
        bnd = [_local(d, st, u, st.where[u], -1, -1) > 0 for u in range(nv)]
        over_now = 0.0
        if trunk_aware:
            for g in range(len(tl)):
                if tl[g] > d["tcap"][g]:
                    over_now += tl[g] - d["tcap"][g]
        best_gain = 1e-9
        best = None
        for v in range(nv):
            if d["fixed"][v] >= 0:
                continue
            pv = st.where[v]
            cur = _local(d, st, v, pv, -1, -1)
            if cur <= 0:
                continue
            seen = set()
            for k in range(d["inc_ptr"][v], d["inc_ptr"][v + 1]):
                e = d["inc_idx"][k]
                w = d["lb"][e] if d["la"][e] == v else d["la"][e]
                seen.add(d["pswitch"][st.where[w]])
            for k in range(d["cand_ptr"][v], d["cand_ptr"][v + 1]):
                c = d["cand_idx"][k]
                if (
                    d["cswitch"][c] not in seen  # switches (LAN nodes): every candidate
                    and not d["pis_switch"][d["mem_idx"][d["mem_ptr"][c]]]
                ):
                    continue
                st.remove(v)
                p_new = st.first_free(c, v)
                st.place(v, pv)
                if p_new >= 0:
                    gain = cur - _local(d, st, v, p_new, -1, -1)
                    # without overload a move cannot lower it: only a winner needs the term
                    if trunk_aware and (over_now > 0 or gain > best_gain):
                        gain -= TRUNK_W * _over_delta(d, st, tl, v, p_new, -1, -1)
                    if gain > best_gain:
                        best_gain, best = gain, (0, v, p_new)
                for u in range(nv):  # swaps with the virtual nodes on pclass c
                    p = st.where[u]
                    if p < 0 or not bnd[u] or d["pclass"][p] != c or u == v or d["fixed"][u] >= 0:
                        continue
                    if d["vtype"][u * nc + d["pclass"][pv]] < 0:
                        continue
                    g = (
                        cur
                        + _local(d, st, u, p, -1, -1)
                        - _local(d, st, v, p, u, pv)
                        - _local(d, st, u, pv, v, p)
                    )
                    if trunk_aware and (over_now > 0 or g > best_gain):
                        g -= TRUNK_W * _over_delta(d, st, tl, v, p, u, pv)
                    if g > best_gain:
                        best_gain, best = g, (1, v, u)
        if best is None:
            break
        kind, v, x = best
        if kind == 0:
            pv = st.where[v]
            st.remove(v)
            if not st.fits(v, x):
                st.place(v, pv)
                break
            st.place(v, x)
        else:
            u = x
            pv, pu = st.where[v], st.where[u]
            st.remove(v)
            st.remove(u)
            if st.fits(v, pu) and st.fits(u, pv):
                st.place(v, pu)
                st.place(u, pv)
            else:
                st.place(v, pv)
                st.place(u, pu)
                break
        moves += 1
    return moves


KL_STEPS = 24


def _kl_passes(d: dict, st: _State, trunk_aware: bool, max_passes: int = 3) -> int:
    """Kernighan-Lin passes over the boundary nodes: each pass moves every boundary node at
    most once, the best move each step even at zero or negative gain, and keeps the best
    prefix of the sequence (what a greedy exchange cannot do along a ring or chain)."""
    nv = d["nv"]
    kept = 0
    for _ in range(max_passes):
        locked = [False] * nv
        applied = []
        cum, best_cum, best_len = 0.0, 1e-9, 0
        for _step in range(min(nv, KL_STEPS)):
            d.get("_poll", interrupt.check)()  # the compiled kernel's poll (twin)
            tl = _loads(d, st.where) if trunk_aware else None
            over_now = 0.0
            if trunk_aware:
                for g in range(len(tl)):
                    if tl[g] > d["tcap"][g]:
                        over_now += tl[g] - d["tcap"][g]
            best = None
            best_gain = -math.inf
            for v in range(nv):
                if locked[v] or d["fixed"][v] >= 0:
                    continue
                pv = st.where[v]
                cur = _local(d, st, v, pv, -1, -1)
                if cur <= 0:
                    continue
                seen = set()
                for k in range(d["inc_ptr"][v], d["inc_ptr"][v + 1]):
                    e = d["inc_idx"][k]
                    w = d["lb"][e] if d["la"][e] == v else d["la"][e]
                    seen.add(d["pswitch"][st.where[w]])
                for k in range(d["cand_ptr"][v], d["cand_ptr"][v + 1]):
                    c = d["cand_idx"][k]
                    if d["cswitch"][c] == d["pswitch"][pv] or d["cswitch"][c] not in seen:
                        continue
                    st.remove(v)
                    p_new = st.first_free(c, v)
                    st.place(v, pv)
                    if p_new < 0:
                        continue
                    gain = cur - _local(d, st, v, p_new, -1, -1)
                    if trunk_aware and (over_now > 0 or gain > best_gain):
                        gain -= TRUNK_W * _over_delta(d, st, tl, v, p_new, -1, -1)
                    if gain > best_gain:
                        best_gain, best = gain, (v, p_new)
            if best is None:
                break
            v, p_new = best
            old = st.where[v]
            st.remove(v)
            st.place(v, p_new)
            locked[v] = True
            applied.append((v, old))
            cum += best_gain
            if cum > best_cum:
                best_cum, best_len = cum, len(applied)
        for v, old in reversed(applied[best_len:]):
            st.remove(v)
            st.place(v, old)
        if best_len == 0:
            break
        kept += best_len
    return kept


def _objective(d: dict, where: list, trunk_aware: bool) -> float:
    val = _isw(d, where)
    if trunk_aware:
        tl = _loads(d, where)
        over = 0.0
        for g in range(len(tl)):
            if tl[g] > d["tcap"][g]:
                over += tl[g] - d["tcap"][g]
        val += TRUNK_W * over
    return val


def _group_moves(d: dict, st: _State, children: list, trunk_aware: bool) -> int:
    """Move a hub with its leaf children (at least two) to another switch in one step (the
    members that cannot go there stay) while the objective drops: what pairwise exchanges
    cannot do for a LAN whose members sit on one switch and the LAN node on another."""
    nv, nc, ns = d["nv"], d["nc"], d["ns"]
    moves = 0
    for _ in range(3):
        improved = False
        for v in range(nv):
            d.get("_poll", interrupt.check)()  # the compiled kernel's poll (twin)
            if d["fixed"][v] >= 0:
                continue
            group = [v] + [u for u in children[v] if not children[u] and d["fixed"][u] < 0]
            if len(group) < 3:
                continue
            base = _objective(d, st.where, trunk_aware)
            for s in range(ns):
                old = [st.where[u] for u in group]
                for u in group:
                    st.remove(u)
                ok = True
                for i, u in enumerate(group):
                    p = -1
                    for k in range(d["cand_ptr"][u], d["cand_ptr"][u + 1]):
                        c = d["cand_idx"][k]
                        if d["cswitch"][c] == s:
                            p = st.first_free(c, u)
                            if p >= 0:
                                break
                    if p < 0:
                        if i == 0:
                            ok = False
                            break
                        p = old[i] if st.fits(u, old[i]) else -1
                        if p < 0:
                            ok = False
                            break
                    st.place(u, p)
                if ok:
                    val = _objective(d, st.where, trunk_aware)
                    if val < base - 1e-9:
                        base = val
                        improved = True
                        moves += 1
                        continue
                for u in group:
                    if st.where[u] >= 0:
                        st.remove(u)
                for u, p in zip(group, old):
                    st.place(u, p)
        if not improved:
            break
    del nc
    return moves


def _isw(d: dict, where: list) -> float:
    total = 0.0
    ns = d["ns"]
    for e in range(len(d["la"])):
        pa, pb = where[d["la"][e]], where[d["lb"][e]]
        if pa < 0 or pb < 0 or pa == pb:
            continue
        s1, s2 = d["pswitch"][pa], d["pswitch"][pb]
        if s1 != s2 and s1 >= 0 and s2 >= 0:
            h = d["hops"][s1 * ns + s2]
            total += _bw(d, e, pa, pb) * (h if h > 1 else 1)
    return total


class _Stop(Exception):
    """The twin's deadline passed (the kernel's own deadline check)."""


def allocate_all(data: dict, strategies, use_exchange: bool, max_rounds: int,
                 trunk_aware: bool = False,
                 deadline: Optional[interrupt.KernelDeadline] = None
                 ) -> dict:  # fmt: skip
    """Run allocate (and the exchange) for each strategy.

    Parameters
    ----------
    data : dict of str to ndarray
        See the module docstring.
    strategies : sequence of int
        0 PART, 1 SCORE, 2 ISW, 3 PREF, 4 FRAG, 5 FIT (ISW's order with the smallest pclass
        first among equals: best fit; the default's).
    use_exchange : bool
    max_rounds : int
        Exchanges at most per solution.
    trunk_aware : bool
        The exchange also lowers the trunk overload (sum of load above capacity, weighted
        1000 to 1 against inter-switch bandwidth), even at some inter-switch bandwidth.

    Returns
    -------
    dict
        ``where`` (int64 array (2 x len(strategies) + 1, nv): allocate's and the exchanged
        solution of each strategy, rows of -1 when it failed; the last row, with
        ``trunk_aware``, is the best exchanged solution refined by group moves and
        Kernighan-Lin passes), ``isw`` (estimated
        inter-switch bandwidth per row, NaN if failed), ``fail`` (int64 (len(strategies),
        5): code, virtual node, list, needed, available), ``exchanges``.
    """
    d = {k: (np.asarray(v).reshape(-1).tolist() if not np.isscalar(v) else v)
         for k, v in data.items()}  # fmt: skip
    d["nv"] = len(d["vslots"])
    d["npn"] = len(d["pclass"])
    d["nc"] = len(d["mem_ptr"]) - 1
    d["nty"] = len(d["tlimit"])
    d["na"] = np.asarray(data["vadd"]).shape[1] if np.asarray(data["vadd"]).ndim == 2 else 0
    d["ns"] = int(round(math.sqrt(len(d["hops"]))))
    d["nvc"] = len(d["vclass_w"])
    nv = d["nv"]
    children = [[] for _ in range(nv)]
    for v in range(nv):
        if d["parent"][v] >= 0:
            children[d["parent"][v]].append(v)
    neighbours = []
    for v in range(nv):
        row = []
        for k in range(d["inc_ptr"][v], d["inc_ptr"][v + 1]):
            e = d["inc_idx"][k]
            row.append(d["lb"][e] if d["la"][e] == v else d["la"][e])
        neighbours.append(row)
    ns_ = len(strategies)
    where = np.full((2 * ns_ + 1, nv), -1, dtype=np.int64)
    isw = np.full(2 * ns_ + 1, np.nan)
    fail = np.zeros((ns_, 5), dtype=np.int64)
    exchanges = 0
    xdone: dict = {}

    def poll() -> None:  # the compiled kernel's poll and deadline (twin)
        interrupt.check()
        if deadline is not None and deadline.expired:
            raise _Stop

    d["_poll"] = poll
    live = None  # the placement being improved when a stop comes, and its row
    stopped, error = False, None
    try:
        for i, s in enumerate(strategies):
            poll()
            st, f = _allocate(d, int(s), children, neighbours)
            if f is not None:
                fail[i] = f
                continue
            where[2 * i] = st.where
            isw[2 * i] = _isw(d, st.where)
            if use_exchange:
                # the exchange is a function of the placement: a placement an earlier strategy
                # already produced gets that strategy's exchanged solution (and move count)
                key = tuple(st.where)
                if key in xdone:
                    j, m = xdone[key]
                    exchanges += m
                    where[2 * i + 1] = where[2 * j + 1]
                    isw[2 * i + 1] = isw[2 * j + 1]
                    continue
                live = (st, 2 * i + 1)
                m = _exchange(d, st, max_rounds, bool(trunk_aware))
                live = None
                xdone[key] = (i, m)
                exchanges += m
                where[2 * i + 1] = st.where
                isw[2 * i + 1] = _isw(d, st.where)
        if trunk_aware and use_exchange:
            # refine the best exchanged solution: group moves, then Kernighan-Lin passes
            best, best_val = -1, math.inf
            for i in range(ns_):
                if not math.isnan(isw[2 * i + 1]):
                    val = _objective(d, where[2 * i + 1].tolist(), True)
                    if val < best_val:
                        best, best_val = i, val
            if best >= 0:
                st = _State(d)
                for v, p in enumerate(where[2 * best + 1].tolist()):
                    st.place(v, p)
                live = (st, 2 * ns_)
                g = _group_moves(d, st, children, True)
                g += _kl_passes(d, st, True)
                exchanges += g
                if g:
                    exchanges += _exchange(d, st, max_rounds, True)
                live = None
                where[2 * ns_] = st.where
                isw[2 * ns_] = _isw(d, st.where)
    except BaseException as err:  # the deadline, Ctrl-C, a cancelled scope
        stopped, error = True, None if isinstance(err, _Stop) else err
        if live is not None and min(live[0].where) >= 0:  # complete: a check between moves
            where[live[1]] = live[0].where
            isw[live[1]] = _isw(d, live[0].where)
    return {"where": where, "isw": isw, "fail": fail, "exchanges": exchanges,
            "stopped": stopped, "error": error}  # fmt: skip
