"""Placement bookkeeping and routing of virtual links onto physical links.

:class:`Placement` keeps what the heuristics need while they place virtual nodes (slots in
use, the type each physical node acts as, additive features, type limits, vclass types).
:func:`route` turns a complete node mapping into physical paths: it picks interfaces (a
whole one per non-emulated link, shared bandwidth for emulated ones), the trunks on the
fewest-hop switch path, and reports the first constraint it cannot meet.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np

from .problem import BIG, Problem, link_bw

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
        self.tcount = np.zeros(len(pr.type_names), dtype=np.int64)
        self.vctype: Dict[int, Dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.hosted: List[List[int]] = [[] for _ in range(npn)]
        self.cand_sets = [set(c) for c in pr.cand]

    def copy(self) -> Placement:
        out = Placement.__new__(Placement)
        out.pr = self.pr
        out.where, out.cur, out.used = self.where.copy(), self.cur.copy(), self.used.copy()
        out.add, out.tcount = self.add.copy(), self.tcount.copy()
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
            if self.cur[p] < 0 and 0 <= pr.tlimit[t] <= self.tcount[t]:
                return False
        if len(pr.add_names) and np.any(self.add[p] + pr.vadd[v] > pr.padd[p] + 1e-9):
            return False
        vc = pr.vclass[v]
        if vc >= 0 and pr.vclass_w[vc] >= 1.0:
            types = [k for k, n in self.vctype[vc].items() if n > 0]
            if types and types[0] != t:
                return False
        return True

    def place(self, v: int, p: int) -> None:
        pr = self.pr
        c = pr.pclass[p]
        t = pr.vtype[v, c]
        if not pr.vstatic[v, c]:
            if self.cur[p] < 0:
                self.tcount[t] += 1
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
                self.tcount[t] -= 1
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


def route(pr: Problem, where: np.ndarray) -> Routing:
    """Route every virtual link of a complete mapping ``where`` (virtual -> physical index).

    Returns
    -------
    Routing
        ``failure`` is set (and routing stops) at the first link that cannot be routed.
    """
    out = Routing()
    ptop = pr.ptop
    pn = pr.pnames
    # interfaces per physical node: [link, switch index or -1, bw, types, free bw, taken]
    ifaces: Dict[int, list] = {}

    templates = ptop.__dict__.setdefault("_tb_ifaces", {})

    def node_ifaces(p: int) -> list:
        if p not in ifaces:
            if p not in templates:
                rows = []
                for lk in ptop.interfaces(pn[p]):
                    other = lk.b if lk.a == pn[p] else lk.a
                    sw = pr.sidx.get(other, -1)
                    rows.append((lk, sw, lk.bw, lk.types or ("ethernet",), lk.bw, False, other))
                templates[p] = rows
            ifaces[p] = [list(r) for r in templates[p]]
        return ifaces[p]

    used = pr.trunk_used
    trunk_free = {name: ptop.links[name].bw - used.get(name, 0.0)
                  for names in pr.tlinks for name in names}  # fmt: skip
    direct_free = {name: True for names in pr.direct.values() for name in names}

    def take_iface(p: int, bw: float, emu: bool, ltype, prefer: int, exclude=None):
        best = None
        for row in node_ifaces(p):
            if row[1] < 0 or row is exclude:
                continue
            if ltype and ltype not in row[3]:
                continue
            if emu:
                if row[5] or row[4] + 1e-9 < bw:
                    continue
            elif row[5] or row[4] < row[2] or row[2] + 1e-9 < bw:
                continue
            key = (row[1] != prefer, -row[4])
            if best is None or key < best[0]:
                best = (key, row)
        if best is None:
            return None
        row = best[1]
        if emu:
            row[4] -= bw
        else:
            row[5] = True
            row[4] = 0.0
        return row

    def trunk_path(s1: int, s2: int, bw: float, ltype, name: str):
        hops = pr.path_of(s1, s2)
        if hops is None:
            out.failure = {"constraint": "no_path", "link": name,
                           "switches": [pr.switches[s1], pr.switches[s2]]}  # fmt: skip
            return None
        names = []
        for g in hops:
            best = None
            for tname in pr.tlinks[g]:
                tl = ptop.links[tname]
                if ltype and ltype not in (tl.types or ("ethernet",)):
                    continue
                if trunk_free[tname] + 1e-9 >= bw and (best is None or
                                                       trunk_free[tname] > trunk_free[best]):
                    best = tname
            if best is None:
                out.failure = {"constraint": "trunk_bandwidth", "link": name,
                               "trunks": list(pr.tlinks[g]), "bandwidth": bw,
                               "free": max(trunk_free[t] for t in pr.tlinks[g])}  # fmt: skip
                return None
            trunk_free[best] -= bw
            names.append(best)
        return names

    # plain Python lists: the loop below indexes them per link
    lemu, lbw, ltriv = pr.lemu.tolist(), pr.lbw.tolist(), pr.ltriv.tolist()
    wl = np.asarray(where).tolist()
    pa_l = [wl[a] for a in pr.la.tolist()]
    pb_l = [wl[b] for b in pr.lb.tolist()]
    is_sw, pswitch = pr.pis_switch.tolist(), pr.pswitch.tolist()
    order = sorted(range(len(lemu)), key=lambda e: (lemu[e], -lbw[e], e))
    for e in order:
        name = pr.link_names[e]
        pa, pb = pa_l[e], pb_l[e]
        ltype, emu = pr.ltype[e], lemu[e]
        bw = lbw[e] if lbw[e] >= 0 else link_bw(pr, e, pa, pb)
        sw_a, sw_b = is_sw[pa], is_sw[pb]
        if pa == pb:
            if ltriv[e]:
                out.routes[name], out.kinds[name] = "trivial", "trivial"
                continue
            if sw_a:
                out.routes[name], out.kinds[name] = [], "intraswitch"
                continue
        if not sw_a and not sw_b and pa != pb:
            key = (min(pa, pb), max(pa, pb))
            free = [n for n in pr.direct.get(key, ()) if direct_free[n]
                    and ptop.links[n].bw + 1e-9 >= bw
                    and (not ltype or ltype in (ptop.links[n].types or ("ethernet",)))]
            if free:
                direct_free[free[0]] = False
                out.routes[name], out.kinds[name] = [free[0]], "direct"
                continue
        ends = []
        for p, q, sw_p, sw_q in ((pa, pb, sw_a, sw_b), (pb, pa, sw_b, sw_a)):
            if sw_p:
                ends.append((pr.sidx[pn[p]], None))
                continue
            target = pr.sidx[pn[q]] if sw_q else pswitch[q]
            row = take_iface(p, bw, emu, ltype, target,
                             exclude=ends[0][1] if ends and p == pa == pb else None)
            if row is None:
                out.failure = {"constraint": "interfaces", "link": name, "pnode": pn[p],
                               "bandwidth": bw}  # fmt: skip
                return out
            ends.append((row[1], row))
        (s1, r1), (s2, r2) = ends
        plinks = [r[0].name for r in (r1,) if r is not None]
        hops = trunk_path(s1, s2, bw, ltype, name)
        if hops is None:
            return out
        plinks += hops
        if r2 is not None:
            plinks.append(r2[0].name)
        for t in hops:
            out.trunk_load[t] = out.trunk_load.get(t, 0.0) + bw
        out.interswitch_bandwidth += bw * len(hops)
        out.routes[name] = plinks
        out.kinds[name] = "interswitch" if hops else (
            "direct" if (r1 is None or r2 is None) else "intraswitch")  # fmt: skip
    return out


def switches_bw(pr: Problem) -> float:
    """Largest trunk capacity (for scaling)."""
    return float(pr.tcap.max()) if len(pr.tcap) else BIG
