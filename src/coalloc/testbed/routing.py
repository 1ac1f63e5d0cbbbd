"""Placement bookkeeping and routing of virtual links onto physical links.

:class:`Placement` keeps what the heuristics need while they place virtual nodes (slots in
use, the type each physical node acts as, additive features, type limits, vclass types).
:func:`route` turns a complete node mapping into physical paths: it picks interfaces (a
whole one per non-emulated link, shared bandwidth for emulated ones), the trunks on the
fewest-hop switch path, and reports the first constraint it cannot meet.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Dict, List, Optional, Tuple

import numpy as np

from .._shared.caches import cache_of
from .problem import BIG, Problem, _resumed, link_bw

__all__ = ["Placement", "route", "Routing", "estimate_isw"]


class Placement:
    """Mutable placement state of the virtual nodes of one problem."""

    def __init__(self, pr: Problem) -> None:
        self.pr = pr
        npn = len(pr.pnames)
        self.where = np.full(pr.nv, -1, dtype=np.int64)
        self.cur = np.full(npn, -1, dtype=np.int64)
        self.used = np.zeros(npn)
        self.add = np.zeros((npn, len(pr.add_names)))
        self.tcount = np.zeros(len(pr.type_names))
        self.limited = np.flatnonzero(pr.tlimit >= 0)
        self.vctype: Dict[int, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.hosted: List[List[int]] = [[] for _ in range(npn)]
        self.cand_sets = [set(c) for c in pr.cand]

    def copy(self) -> Placement:
        out = Placement.__new__(Placement)
        out.pr = self.pr
        out.where, out.cur, out.used = self.where.copy(), self.cur.copy(), self.used.copy()
        out.add, out.tcount, out.limited = self.add.copy(), self.tcount.copy(), self.limited
        out.vctype = defaultdict(lambda: defaultdict(int))
        for k, d in self.vctype.items():
            out.vctype[k].update(d)
        out.hosted = [list(h) for h in self.hosted]
        out.cand_sets = self.cand_sets
        return out

    def fits(self, v: int, p: int) -> bool:
        """Can virtual node ``v`` go on physical node ``p`` now?"""
        pr = self.pr
        c = pr.pclass[p]
        if c < 0 or c not in self.cand_sets[v]:
            return False
        if pr.fixed[v] >= 0 and pr.fixed[v] != p:
            return False
        t = pr.vtype[v, c]
        if not pr.vstatic[v, c]:
            if self.cur[p] >= 0 and self.cur[p] != t:
                return False
            if self.used[p] + pr.vslots[v] > pr.cap[p, t] + 1e-9:
                return False
            if self.cur[p] < 0 and not self._limits_allow(p):
                return False
        if len(pr.add_names) and np.any(self.add[p] + pr.vadd[v] > pr.padd[p] + 1e-9):
            return False
        vc = pr.vclass[v]
        if vc >= 0 and pr.vclass_w[vc] >= 1.0:
            types = [k for k, n in self.vctype[vc].items() if n > 0]
            if types and types[0] != t:
                return False
        return True

    def _limits_allow(self, p: int) -> bool:
        """``set-type-limit`` as Emulab counts it: a used node adds its slots of every type
        it lists to that type's count, whichever type it acts as."""
        lim = self.limited
        if not len(lim):
            return True
        w = self.pr.tweight[p, lim]
        over = (w > 0) & (self.tcount[lim] + w > self.pr.tlimit[lim] + 1e-9)
        return not over.any()

    def place(self, v: int, p: int) -> None:
        pr = self.pr
        c = pr.pclass[p]
        t = pr.vtype[v, c]
        if not pr.vstatic[v, c]:
            if self.cur[p] < 0:
                self.tcount[self.limited] += pr.tweight[p, self.limited]
            self.cur[p] = t
            self.used[p] += pr.vslots[v]
        if len(pr.add_names):
            self.add[p] += pr.vadd[v]
        if pr.vclass[v] >= 0:
            self.vctype[pr.vclass[v]][t] += 1
        self.where[v] = p
        self.hosted[p].append(v)

    def remove(self, v: int) -> None:
        pr = self.pr
        p = self.where[v]
        c = pr.pclass[p]
        t = pr.vtype[v, c]
        if not pr.vstatic[v, c]:
            self.used[p] -= pr.vslots[v]
            if not any(not pr.vstatic[u, c] for u in self.hosted[p] if u != v):
                self.cur[p] = -1
                self.used[p] = 0.0
                self.tcount[self.limited] -= pr.tweight[p, self.limited]
        if len(pr.add_names):
            self.add[p] -= pr.vadd[v]
        if pr.vclass[v] >= 0:
            self.vctype[pr.vclass[v]][t] -= 1
        self.where[v] = -1
        self.hosted[p].remove(v)

    def free_nodes(self, c: int, v: int) -> List[int]:
        """Physical nodes of pclass ``c`` that can take ``v`` now, partly used ones first."""
        out = [int(p) for p in self.pr.members[c] if self.fits(v, int(p))]
        out.sort(key=lambda p: (self.used[p] == 0, p))
        return out


def estimate_isw(pr: Problem, where: np.ndarray) -> float:
    """Inter-switch bandwidth of a mapping by home switches (bandwidth x trunk hops)."""
    total = 0.0
    for e in range(len(pr.la)):
        pa, pb = where[pr.la[e]], where[pr.lb[e]]
        if pa < 0 or pb < 0 or pa == pb:
            continue
        sa, sb = pr.pswitch[pa], pr.pswitch[pb]
        if sa != sb and sa >= 0 and sb >= 0:
            h = pr.hops[sa, sb]
            total += link_bw(pr, e, pa, pb) * (h if h > 0 else 1)
    return total


class Routing:
    """What :func:`route` found: ``routes`` (link -> physical link names or "trivial"),
    ``kinds``, ``trunk_load`` (physical trunk -> bandwidth), ``interswitch_bandwidth`` and
    ``failure`` (None, or a dict saying which constraint blocked which link)."""

    def __init__(self) -> None:
        self.routes: Dict[str, object] = {}
        self.kinds: Dict[str, str] = {}
        self.trunk_load: Dict[str, float] = {}
        self.interswitch_bandwidth = 0.0
        self.failure: Optional[dict] = None


#: id(node) -> (node, its links, the switches, its interface columns): memoized as
#: ``problem._host_memo`` (the ``.ptop`` reader keeps node and link objects across
#: successive free-testbed texts; their switches are the same names in the same order).
_row_memo: Dict[int, tuple] = {}
_NO_IFACES: tuple = ((), (), (), ())


def _iface_columns(node, links: list, switches: tuple, sidx: Dict[str, int]) -> tuple:
    """``(link names, switch indices, bandwidths, link types)`` of ``node``'s links to a
    switch, in order (``sidx``: the index of each of ``switches``), memoized by the node,
    its link objects and the switches (links equal to the remembered ones, or the same
    switch names in the same order, give the same columns)."""
    links = tuple(links)
    hit = _row_memo.get(id(node))
    if hit is not None and hit[0] is node and hit[1] == links and hit[2] == switches:
        return hit[3]
    name = node.name
    rows = []
    for lk in links:
        other = lk.b if lk.a == name else lk.a
        if other in sidx:  # links to another host are never an interface to a switch
            rows.append((lk.name, sidx[other], lk.bw, lk.types or ("ethernet",)))
    columns = tuple(tuple(col) for col in zip(*rows)) if rows else _NO_IFACES
    if len(_row_memo) >= 1 << 16:
        _row_memo.clear()
    _row_memo[id(node)] = (node, links, switches, columns)
    return columns


def _route_tables(pr: Problem, polled: bool = False) -> tuple:
    """What :func:`route` reads that depends on the testbed only, cached on it.

    ``ifaces[p]``: the switch-facing interfaces of physical node ``p`` in the order of
    ``ptop.interfaces`` as four tuples (link names, switch indices, bandwidths, link types);
    ``trunks[g]``: ``(name, link types)`` of the trunks of group ``g``; ``direct``: the
    ``(name, bandwidth, link types)`` of the links between two hosts, by host pair; and
    an empty dict that :func:`route` fills with interface rankings by (host, switch).
    ``polled`` (a time-limited set-up): the interfaces are built looking at the deadline,
    and a stopped build is resumed by the next (:func:`.problem._resumed`).
    """
    ptop = pr.ptop
    cached = cache_of(ptop).get("route")  # kept beside the model, never on it
    if cached is not None:
        return cached
    pn, sidx = pr.pnames, pr.sidx
    adjacency = getattr(ptop, ptop.ADJ)  # each node's links in order (ptop.interfaces)
    nodes = ptop.nodes
    # a switch's interfaces to a switch: the trunks touching it, in the links' order (its
    # many links to hosts change from one free-testbed text to the next: not remembered)
    trunks_at: Dict[str, list] = {n: [] for n in sidx}
    for lk in ptop.links.values():
        if lk.a in sidx and lk.b in sidx:
            trunks_at[lk.a].append(lk)
            trunks_at[lk.b].append(lk)
    switches = tuple(pr.switches)
    def columns(name: str) -> tuple:
        return _iface_columns(nodes[name], trunks_at[name] if name in sidx else adjacency[name],
                              switches, sidx)  # fmt: skip

    if polled:
        ifaces = _resumed(cache_of(ptop), "route/ifaces", pn, columns)
    else:
        ifaces = [columns(name) for name in pn]
    links = ptop.links
    trunks = [tuple((t, links[t].types or ("ethernet",)) for t in names) for names in pr.tlinks]
    direct = {key: tuple((n, links[n].bw, links[n].types or ("ethernet",)) for n in names)
              for key, names in pr.direct.items()}  # fmt: skip
    cached = (ifaces, trunks, direct, {})
    cache_of(ptop)["route"] = cached
    return cached


def _takers(pr: Problem, out: Routing, trunks: Optional[Dict[Tuple[int, int], str]]) -> tuple:
    """The two steps :func:`route` takes a link's resources with, as closures over what it
    keeps while it routes one mapping (each host's free interface bandwidth, each trunk's
    and host-to-host link's free capacity; closures, not methods: the routing of a mapping
    calls them per link, and a closure's cells are read faster than attributes):
    ``(take_iface, trunk_path, ifaces, direct, direct_free)``."""
    plan = trunks
    ifaces, group_trunks, direct, ranks = _route_tables(pr)
    links = pr.ptop.links
    # free bandwidth of each interface of the hosts met so far (-inf: taken whole)
    state: Dict[int, list] = {}
    taken = -math.inf

    used = pr.trunk_used
    trunk_free = {name: links[name].bw - used.get(name, 0.0)
                  for names in pr.tlinks for name in names}  # fmt: skip
    direct_free = {name: True for names in pr.direct.values() for name in names}
    paths = pr.paths

    def take_iface(p: int, bw: float, emu: bool, ltype, prefer: int, exclude: int) -> int:
        """Index of the interface of host ``p`` taken (its state updated), or -1."""
        free = state.get(p)
        names, sws, full, types = ifaces[p]
        if free is None:
            free = state[p] = list(full)
        if not emu:
            # a whole interface: the untouched ones (free == full) compete by their static
            # key (other switch, -bandwidth, index), ranked once per testbed
            rank = ranks.get((p, prefer))
            if rank is None:
                rank = ranks[(p, prefer)] = tuple(
                    sorted(range(len(full)), key=lambda i: (sws[i] != prefer, -full[i], i))
                )
            for i in rank:
                if free[i] < full[i] or full[i] + 1e-9 < bw or i == exclude:
                    continue
                if ltype and ltype not in types[i]:
                    continue
                free[i] = taken
                return i
            return -1
        best = -1
        best_off = True
        best_free = 0.0
        for i in range(len(free)):
            f = free[i]
            if f + 1e-9 < bw or i == exclude or (ltype and ltype not in types[i]):
                continue
            off = sws[i] != prefer
            if best < 0 or (off < best_off) or (off == best_off and f > best_free):
                best, best_off, best_free = i, off, f
        if best >= 0:
            free[best] -= bw
        return best

    def trunk_path(s1: int, s2: int, bw: float, ltype, name: str, e: int):
        hops = paths.get((s1, s2))
        if hops is None:
            out.failure = {"constraint": "no_path", "link": name,
                           "switches": [pr.switches[s1], pr.switches[s2]]}  # fmt: skip
            return None
        names = []
        for g in hops:
            best = None
            best_free = 0.0
            planned = plan.get((e, g)) if plan else None
            for tname, ttypes in group_trunks[g]:
                if ltype and ltype not in ttypes:
                    continue
                f = trunk_free[tname]
                if f + 1e-9 >= bw and (best is None or f < best_free or tname == planned):
                    best, best_free = tname, f
                    if tname == planned:
                        break
            if best is None:
                out.failure = {"constraint": "trunk_bandwidth", "link": name,
                               "trunks": list(pr.tlinks[g]), "bandwidth": bw,
                               "free": max(trunk_free[t] for t in pr.tlinks[g])}  # fmt: skip
                return None
            trunk_free[best] = best_free - bw
            names.append(best)
        return names

    return take_iface, trunk_path, ifaces, direct, direct_free


def route(pr: Problem, where: np.ndarray,
          trunks: Optional[Dict[Tuple[int, int], str]] = None) -> Routing:  # fmt: skip
    """Route every virtual link of a complete mapping ``where`` (virtual -> physical index).

    Links are routed widest first (non-emulated before emulated); a host end takes the
    interface, among those wide enough and of the link's type, that faces the other end's
    switch, then the one with the most free bandwidth (the first of them in the testbed's
    order); a trunk hop takes the trunk of its group with the least free bandwidth that
    carries the link (best fit: whole trunks stay free for wide links), or the
    one ``trunks[(link index, trunk group)]`` names when it has room (the exact method's
    packing of the links into parallel trunks).

    Returns
    -------
    Routing
        ``failure`` is set (and routing stops) at the first link that cannot be routed.
    """
    out = Routing()
    pn = pr.pnames
    take_iface, trunk_path, ifaces, direct, direct_free = _takers(pr, out, trunks)

    # plain Python lists: the loop below indexes them per link
    lemu, lbw, ltriv = pr.lemu.tolist(), pr.lbw.tolist(), pr.ltriv.tolist()
    wh = np.asarray(where)
    pa_l, pb_l = wh[pr.la].tolist(), wh[pr.lb].tolist()
    is_sw, pswitch = pr.pis_switch.tolist(), pr.pswitch.tolist()
    link_names, ltypes = pr.link_names, pr.ltype
    # widest first, non-emulated before emulated, ties in link order (stable sorts)
    order = np.argsort(-pr.lbw, kind="stable")
    order = order[np.argsort(pr.lemu[order], kind="stable")].tolist()
    routes, kinds, trunk_load = out.routes, out.kinds, out.trunk_load
    isw = 0.0
    for e in order:
        name = link_names[e]
        pa, pb = pa_l[e], pb_l[e]
        ltype, emu = ltypes[e], lemu[e]
        bw = lbw[e]
        if bw < 0:
            bw = link_bw(pr, e, pa, pb)
        sw_a, sw_b = is_sw[pa], is_sw[pb]
        if pa == pb:
            if ltriv[e]:
                routes[name] = kinds[name] = "trivial"
                continue
            if sw_a:
                routes[name], kinds[name] = [], "intraswitch"
                continue
        elif direct and not sw_a and not sw_b:
            for dname, dbw, dtypes in direct.get((pa, pb) if pa < pb else (pb, pa), ()):
                if direct_free[dname] and dbw + 1e-9 >= bw and (not ltype or ltype in dtypes):
                    direct_free[dname] = False
                    routes[name], kinds[name] = [dname], "direct"
                    break
            else:
                dname = None
            if dname is not None:
                continue
        # the two ends: a switch is its own end; a host takes an interface facing the other
        # end's switch (a link looping on one host leaves through two interfaces)
        ends = []
        for p, q in ((pa, pb), (pb, pa)):
            if is_sw[p]:
                ends.append((pswitch[p], -1))
                continue
            i = take_iface(p, bw, emu, ltype, pswitch[q], ends[0][1] if ends and pa == pb else -1)
            if i < 0:
                out.failure = {"constraint": "interfaces", "link": name, "pnode": pn[p],
                               "bandwidth": bw}  # fmt: skip
                out.interswitch_bandwidth = isw
                return out
            ends.append((ifaces[p][1][i], i))
        (s1, i1), (s2, i2) = ends
        hops = trunk_path(s1, s2, bw, ltype, name, e) if s1 != s2 else ()
        if hops is None:
            out.interswitch_bandwidth = isw
            return out
        plinks = [ifaces[pa][0][i1]] if i1 >= 0 else []
        if hops:
            plinks += hops
            for t in hops:
                trunk_load[t] = trunk_load.get(t, 0.0) + bw
            kind = "interswitch"
        else:
            kind = "intraswitch" if i1 >= 0 and i2 >= 0 else "direct"
        isw += bw * len(hops)
        if i2 >= 0:
            plinks.append(ifaces[pb][0][i2])
        routes[name] = plinks
        kinds[name] = kind
    out.interswitch_bandwidth = isw
    return out


def switches_bw(pr: Problem) -> float:
    """Largest trunk capacity (for scaling)."""
    return float(pr.tcap.max()) if len(pr.tcap) else BIG
