"""The straightforward router and checker that the fast ones replaced, kept as their twins.

:func:`route_reference` is the router :func:`coalloc.testbed.routing.route` was (a list of
interface rows per host, scanned per link end), :func:`verify_reference` the checker
:func:`coalloc.testbed.verify_mapping` was (no per-testbed tables); neither caches anything on
the testbed. ``tests/testbed/test_fast_paths.py`` requires identical answers.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import repeat
from typing import Any, Dict, List, Mapping

import numpy as np

from coalloc.testbed.problem import Problem, link_bw
from coalloc.testbed.routing import Routing
from coalloc.testbed.verify import VerifyReport

_EPS = 1e-6


def route_reference(pr: Problem, where: np.ndarray) -> Routing:
    """The straightforward router :func:`coalloc.testbed.routing.route` replaced (its twin)."""
    out = Routing()
    ptop = pr.ptop
    pn = pr.pnames
    # interfaces per physical node: [link, switch index or -1, bw, types, free bw, taken]
    ifaces: Dict[int, list] = {}

    def node_ifaces(p: int) -> list:
        if p not in ifaces:
            rows = []
            for lk in ptop.interfaces(pn[p]):
                other = lk.b if lk.a == pn[p] else lk.a
                sw = pr.sidx.get(other, -1)
                rows.append([lk, sw, lk.bw, lk.types or ("ethernet",), lk.bw, False, other])
            ifaces[p] = rows
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
                if trunk_free[tname] + 1e-9 >= bw and (
                    best is None or trunk_free[tname] < trunk_free[best]
                ):
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
            free = [
                n
                for n in pr.direct.get(key, ())
                if direct_free[n]
                and ptop.links[n].bw + 1e-9 >= bw
                and (not ltype or ltype in (ptop.links[n].types or ("ethernet",)))
            ]
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
            row = take_iface(
                p, bw, emu, ltype, target, exclude=ends[0][1] if ends and p == pa == pb else None
            )
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


def _native(ptop, p: str) -> float:
    node = ptop.nodes[p]
    if node.is_switch:
        return math.inf
    bws = [lk.bw for lk in ptop.interfaces(p)]
    return max(bws) if bws else math.inf


def _check_shapes(mapping: Any, routes: Any) -> None:
    """A mapping of names to names (or None) and routes of names to link lists or "trivial"."""
    if not isinstance(mapping, Mapping):
        raise TypeError(f"mapping must be a dict of virtual -> physical node names, got "
                        f"{type(mapping).__name__}")  # fmt: skip
    for v, p in mapping.items():
        if not isinstance(v, str) or not (p is None or isinstance(p, str)):
            raise TypeError(f"mapping[{v!r}] must map a node name to a node name (or None), "
                            f"got {type(p).__name__}")  # fmt: skip
    if routes is None:
        return
    if not isinstance(routes, Mapping):
        raise TypeError(f"routes must be a dict of virtual link -> physical links, got "
                        f"{type(routes).__name__}")  # fmt: skip
    for name, r in routes.items():
        ok = (
            r is None
            or r == "trivial"
            or (isinstance(r, (list, tuple)) and all(map(isinstance, r, repeat(str))))
        )
        if not ok:
            raise TypeError(f"routes[{name!r}] must be a list of physical link names or "
                            f"'trivial', got {type(r).__name__}")  # fmt: skip


def verify_reference(top, ptop, mapping, routes=None, *, claimed=None) -> VerifyReport:
    """The straightforward checker :func:`coalloc.testbed.verify_mapping` replaced."""
    _check_shapes(mapping, routes)
    bad: List[dict] = []
    for v in top.nodes:
        if v not in mapping or mapping[v] is None:
            bad.append({"constraint": "unassigned", "vnode": v})
        elif mapping[v] not in ptop.nodes:
            bad.append({"constraint": "unknown_pnode", "vnode": v, "pnode": mapping[v]})
    hosted: Dict[str, List[str]] = defaultdict(list)
    for v, p in mapping.items():
        if v in top.nodes and p in ptop.nodes:
            hosted[p].append(v)
    acting: Dict[str, str] = {}
    allowed_of = {v: top.allowed_types(v) for v in top.nodes}
    # each virtual node's additive desires (a hosted node without one adds 0 to every sum)
    add_of = {v: {k: w for k, w in nd.desires.items() if k.startswith("?+")}
              for v, nd in top.nodes.items() if nd.desires}  # fmt: skip
    pfeat = {n: [(k, c) for k, c in nd.features.items() if k.startswith("?+")]
             for n, nd in ptop.nodes.items()}  # fmt: skip
    in_use_weight: Dict[str, float] = defaultdict(float)
    for p, vs in hosted.items():
        node = ptop.nodes[p]
        types, static = node.types, node.static
        dynamic = []
        mistyped = False
        for v in vs:
            allowed = allowed_of[v]
            offered = False
            for t in allowed:
                if t in types:
                    offered = True
                    break
            if not offered and static and any(t in static for t in allowed):
                continue
            if not offered:
                bad.append({"constraint": "type", "vnode": v, "pnode": p,
                            "allowed": list(allowed)})  # fmt: skip
                mistyped = True
                continue
            dynamic.append(v)
        if dynamic or mistyped:  # in use (Emulab's set-type-limit counts it)
            for table in (node.types, node.static):
                for t, n in table.items():
                    in_use_weight[t] += 10000.0 if math.isinf(n) else n
        if dynamic:
            common = set(node.types)
            for v in dynamic:
                common &= set(allowed_of[v])
            if not common:
                bad.append({"constraint": "one_type_at_a_time", "pnode": p, "vnodes": dynamic})
            else:
                slots = sum(top.nodes[v].slots for v in dynamic)
                fits = [t for t in sorted(common) if slots <= node.types[t] + _EPS]
                if not fits:
                    bad.append({"constraint": "slots", "pnode": p, "used": slots,
                                "capacity": max(node.types[t] for t in common)})  # fmt: skip
                else:
                    acting[p] = fits[0]
        wants = [add_of[v] for v in vs if add_of.get(v)]
        for k, cap in pfeat[p]:
            use = sum(a.get(k, 0.0) for a in wants)
            if use > cap + _EPS:
                bad.append({"constraint": "additive", "feature": k, "pnode": p,
                            "used": use, "capacity": cap})  # fmt: skip
        for v in vs:
            desires = top.nodes[v].desires
            if not desires:
                continue
            for k, w in desires.items():
                if k.startswith("?+"):
                    if k not in node.features:
                        bad.append({"constraint": "additive", "feature": k, "pnode": p,
                                    "vnode": v, "capacity": 0.0})  # fmt: skip
                elif w >= 1.0 and k not in node.features:
                    bad.append({"constraint": "desire", "feature": k, "vnode": v, "pnode": p})
    for v, p in top.fixed.items():
        if mapping.get(v) != p:
            bad.append({"constraint": "fixed", "vnode": v, "pnode": p,
                        "got": mapping.get(v)})  # fmt: skip
    for t, lim in ptop.type_limits.items():
        c = in_use_weight[t]
        if c > lim:
            used = int(c) if c.is_integer() else c
            bad.append({"constraint": "type_limit", "type": t, "used": used, "limit": lim})
    for name, (kind, x) in ptop.policies.items():
        weights = [nd.desires[name] for nd in top.nodes.values() if name in nd.desires]
        if weights and kind == "disallow":
            bad.append({"constraint": "policy", "desire": name, "policy": "disallow",
                        "users": len(weights)})  # fmt: skip
        elif weights and x is not None and sum(weights) > x + _EPS:
            bad.append({"constraint": "policy", "desire": name, "policy": "limit",
                        "total": sum(weights), "limit": x})  # fmt: skip
    for name, (w, _types) in top.vclasses.items():
        if w < 1.0:
            continue
        chosen = set()
        for v, node in top.nodes.items():
            if node.type == name and mapping.get(v) in acting:
                chosen.add(acting[mapping[v]])
        if len(chosen) > 1:
            bad.append({"constraint": "vclass", "vclass": name, "types": sorted(chosen)})
    if any(b["constraint"] in ("unassigned", "unknown_pnode") for b in bad):
        return VerifyReport(bad, None, {}, claimed)
    if routes is None:  # route it here (the old router), or say the links went unchecked
        if bad:
            return VerifyReport(bad, None, {}, claimed)
        if top.links:
            from coalloc.testbed.problem import build_problem

            pr = build_problem(top, ptop)
            pidx = {n: i for i, n in enumerate(pr.pnames)}
            found = route_reference(pr, np.array([pidx[mapping[v]] for v in pr.vnames]))
            if found.failure is not None:
                bad.append({"constraint": "links_unchecked",
                            "why": "no routes were given and the router found none for this "
                                   "mapping: its links could not be checked"})  # fmt: skip
                return VerifyReport(bad, None, {}, claimed)
            routes = dict(found.routes)
        else:
            routes = {}

    switches = frozenset(n for n, node in ptop.nodes.items() if node.is_switch)
    exclusive: Dict[str, str] = {}
    shared: Dict[str, float] = defaultdict(float)
    trunk_load: Dict[str, float] = defaultdict(float)
    isw = 0.0
    for name, lk in top.links.items():
        pa, pb = mapping[lk.a], mapping[lk.b]
        r = routes.get(name)
        if r is None:
            bad.append({"constraint": "unrouted", "link": name})
            continue
        if r == "trivial":
            if pa != pb:
                bad.append({"constraint": "trivial_on_two_nodes", "link": name})
            elif not lk.trivial_ok:
                bad.append({"constraint": "trivial_not_ok", "link": name})
            continue
        bw = lk.bw
        if bw is None:
            m = min(_native(ptop, pa), _native(ptop, pb))
            bw = m if math.isfinite(m) else 100000.0
        here = pa
        hops = 0
        ok = True
        for i, pl in enumerate(r):
            if pl not in ptop.links:
                bad.append({"constraint": "unknown_plink", "link": name, "plink": pl})
                ok = False
                break
            phys = ptop.links[pl]
            if here not in (phys.a, phys.b):
                bad.append({"constraint": "broken_path", "link": name, "plink": pl,
                            "at": here})  # fmt: skip
                ok = False
                break
            nxt = phys.b if phys.a == here else phys.a
            if i < len(r) - 1 and nxt not in switches:
                bad.append({"constraint": "path_through_host", "link": name, "node": nxt})
                ok = False
                break
            if lk.type and lk.type not in (phys.types or ("ethernet",)):
                bad.append({"constraint": "link_type", "link": name, "plink": pl,
                            "wanted": lk.type})  # fmt: skip
            if phys.bw + _EPS < bw:
                bad.append({"constraint": "bandwidth", "link": name, "plink": pl,
                            "needed": bw, "capacity": phys.bw})  # fmt: skip
            if phys.a in switches and phys.b in switches:
                trunk_load[pl] += bw
                hops += 1
            elif lk.emulated:
                shared[pl] += bw
            else:
                if pl in exclusive:
                    bad.append({"constraint": "interface_shared", "plink": pl,
                                "links": [exclusive[pl], name]})  # fmt: skip
                exclusive[pl] = name
            here = nxt
        if ok and here != pb:
            bad.append({"constraint": "path_end", "link": name, "ends_at": here, "wanted": pb})
        if ok and not r and pa != pb:
            bad.append({"constraint": "empty_route", "link": name})
        isw += bw * hops
    for pl, use in shared.items():
        cap = ptop.links[pl].bw
        if pl in exclusive:
            bad.append({"constraint": "interface_shared", "plink": pl,
                        "links": [exclusive[pl], "emulated"]})  # fmt: skip
        elif use > cap + _EPS:
            bad.append({"constraint": "interface_bandwidth", "plink": pl, "load": use,
                        "capacity": cap})  # fmt: skip
    for pl, load in trunk_load.items():
        cap = ptop.links[pl].bw
        if load > cap + _EPS:
            bad.append({"constraint": "trunk_bandwidth", "plink": pl, "load": load,
                        "capacity": cap})  # fmt: skip
    return VerifyReport(bad, isw, dict(trunk_load), claimed)


def tables_reference(ptop) -> dict:
    """The interface and trunk part of :func:`coalloc.testbed.problem._testbed_part` as it
    was (one pass over the links, each end counted in turn, nothing memoized)."""
    pnames = list(ptop.nodes)
    pidx = {n: i for i, n in enumerate(pnames)}
    switches = [n for n in pnames if ptop.nodes[n].is_switch]
    sidx = {n: i for i, n in enumerate(switches)}
    is_sw = [ptop.nodes[n].is_switch for n in pnames]
    npn = len(pnames)
    ifaces, ifbw = [0] * npn, [0.0] * npn
    types: List[Dict[str, int]] = [defaultdict(int) for _ in pnames]
    per_switch: List[Dict[int, int]] = [defaultdict(int) for _ in pnames]
    tgroups: Dict[tuple, int] = {}
    tcap: List[float] = []
    tlinks: List[List[str]] = []
    direct: Dict[tuple, List[str]] = defaultdict(list)
    for lk in ptop.links.values():
        a, b = pidx[lk.a], pidx[lk.b]
        if is_sw[a] and is_sw[b]:
            key = tuple(sorted((sidx[lk.a], sidx[lk.b])))
            g = tgroups.setdefault(key, len(tcap))
            if g == len(tcap):
                tcap.append(0.0)
                tlinks.append([])
            tcap[g] += lk.bw
            tlinks[g].append(lk.name)
            continue
        if not is_sw[a] and not is_sw[b]:
            direct[(min(a, b), max(a, b))].append(lk.name)
        for p, other in ((a, b), (b, a)):
            if is_sw[p]:
                continue
            ifaces[p] += 1
            ifbw[p] = max(ifbw[p], lk.bw)
            for t in lk.types or ("ethernet",):
                types[p][t] += 1
            if is_sw[other]:
                per_switch[p][sidx[pnames[other]]] += 1
    home = []
    for p in range(npn):
        if is_sw[p]:
            home.append(sidx[pnames[p]])
            ifbw[p] = 1e18
        elif per_switch[p]:
            most = max(per_switch[p].values())
            home.append(min(s for s, c in per_switch[p].items() if c == most))
        else:
            home.append(-1)
    names: Dict[str, int] = {}
    for node in ptop.nodes.values():
        for t in [*node.types, *node.static]:
            names.setdefault(t, len(names))
    cap = np.zeros((npn, len(names)))
    tweight = np.zeros((npn, len(names)))
    static = np.zeros((npn, len(names)), dtype=bool)
    for i, node in enumerate(ptop.nodes.values()):
        for table, is_static in ((node.types, False), (node.static, True)):
            for t, c in table.items():
                cap[i, names[t]] = min(c, 1e18)
                tweight[i, names[t]] = 10000.0 if math.isinf(c) else c
                static[i, names[t]] |= is_static
    return {"cap": cap.tolist(), "tweight": tweight.tolist(), "static": static.tolist(),
            "type_names": names, "pswitch": home, "pifaces": ifaces, "pifbw": ifbw,
            "iface_types": [dict(x) for x in types], "tgroups": tgroups, "tcap": tcap,
            "tlinks": tlinks, "direct": dict(direct)}  # fmt: skip
