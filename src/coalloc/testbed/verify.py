"""An independent checker of testbed mappings (shares no code with the mappers).

It reads only the model objects: the virtual and physical topologies, a node mapping and,
when given, the routes. Checks: every virtual node mapped onto an existing physical node;
types and slot counts (a physical node acts as one non-static type at a time); fixed nodes;
hard desires (weight >= 1) and additive features; type limits; hard vclasses; every route a
path of physical links from one end to the other through switches only, of the link's type,
each link wide enough; interfaces (a non-emulated virtual link takes a whole interface,
emulated ones share its bandwidth); trunk bandwidth. It reports the inter-switch bandwidth
(bandwidth x trunk hops) and the load of every trunk.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import chain, repeat
from typing import Any, Dict, List, Mapping, Optional

from .._shared.caches import cache_of, travels
from .._shared.result import Report
from .model import PhysicalTopology, VirtualTopology
from .problem import _resumed, _tables_packed, _tables_unpacked, _testbed_part
from .reasons import reason_text

__all__ = ["VerifyReport", "verify_mapping"]

_EPS = 1e-6


class TestbedMappingReport(Report):
    """What :func:`verify_mapping` found.

    Parameters
    ----------
    violations : list of dict
        One entry per broken constraint: ``{"constraint": ..., ...}``.
    isw : float or None
        Bandwidth x trunk hops over all routed virtual links (None without routes); kept
        as the attribute ``interswitch_bandwidth``.
    trunk_load : dict of str to float
        Physical trunk -> bandwidth routed over it.
    claimed : float or None
        The inter-switch bandwidth the mapper claimed; ``matches`` compares it.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> report = tb.verify_mapping(top, ptop, {"x": "a", "y": "a"})
    >>> report.valid, report.violations
    (False, [{'constraint': 'slots', 'pnode': 'a', 'used': 2.0, 'capacity': 1.0}])
    """

    def __init__(self, violations, isw, trunk_load, claimed) -> None:
        self.violations = violations
        self.interswitch_bandwidth = isw
        self.trunk_load = trunk_load
        self.claimed = claimed

    @property
    def matches(self) -> bool:
        """True when no claim was made or the claimed inter-switch bandwidth is right."""
        if self.claimed is None or self.interswitch_bandwidth is None:
            return True
        return abs(self.claimed - self.interswitch_bandwidth) <= 1e-6 * max(
            1.0, abs(self.interswitch_bandwidth)
        )

    @property
    def valid(self) -> bool:
        """True when the mapping violates no constraint."""
        return not self.violations

    @property
    def ok(self) -> bool:
        """Valid and matching the claim (the shared report interface)."""
        return self.valid and self.matches

    def to_dict(self) -> dict:
        """A JSON-ready dictionary.

        Returns
        -------
        dict
            ``ok``, ``valid``, ``matches``, ``violations``, ``interswitch_bandwidth``,
            ``trunk_load`` and ``claimed``.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
        ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
        >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
        >>> d = tb.verify_mapping(top, ptop, {"x": "a", "y": "b"}).to_dict()
        >>> d["ok"], d["valid"], d["violations"], d["interswitch_bandwidth"], d["trunk_load"]
        (True, True, [], 0.0, {})
        """
        return {"ok": self.ok, "valid": self.valid, "matches": self.matches,
                "violations": self.violations,
                "interswitch_bandwidth": self.interswitch_bandwidth,
                "trunk_load": dict(self.trunk_load), "claimed": self.claimed}  # fmt: skip

    def __str__(self) -> str:
        head = "valid" if self.valid else f"INVALID ({len(self.violations)} violations)"
        isw = self.interswitch_bandwidth
        text = f"{head}; inter-switch bandwidth {isw if isw is not None else '-'}"
        if not self.matches:
            text += f" (claimed {self.claimed})"
        for v in self.violations[:10]:
            text += f"\n  {reason_text(v)}"
        return text


def _route_here(top: VirtualTopology, ptop: PhysicalTopology, mapping: Mapping[str, str]):
    """Routes for a mapping given without them (None when the router finds none).

    The routes come from the package's router; the checker then judges them like routes it
    was given, so a mapping is valid only when routes exist that the checker accepts.
    """
    if not top.links:
        return {}
    from .problem import build_problem
    from .routing import route

    pr = build_problem(top, ptop)
    pidx = {n: i for i, n in enumerate(pr.pnames)}
    where = [pidx[mapping[v]] for v in pr.vnames]
    found = route(pr, where)
    return None if found.failure is not None else dict(found.routes)


#: The older name of :class:`TestbedMappingReport`.
VerifyReport = TestbedMappingReport


def _native(ptop: PhysicalTopology, p: str) -> float:
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
    # the usual case in two C-level passes; the loop below finds what to report otherwise
    if not (
        all(map(isinstance, mapping.keys(), repeat(str)))
        and all(map(isinstance, mapping.values(), repeat((str, type(None)))))
    ):
        for v, p in mapping.items():
            if not isinstance(v, str) or not (p is None or isinstance(p, str)):
                raise TypeError(f"mapping[{v!r}] must map a node name to a node name (or "
                                f"None), got {type(p).__name__}")  # fmt: skip
    if routes is None:
        return
    if not isinstance(routes, Mapping):
        raise TypeError(f"routes must be a dict of virtual link -> physical links, got "
                        f"{type(routes).__name__}")  # fmt: skip
    lists = list(routes.values())
    if set(map(type, lists)) <= {list} and all(
        map(isinstance, chain.from_iterable(lists), repeat(str))
    ):
        return
    for name, r in routes.items():
        if type(r) is list and all(map(isinstance, r, repeat(str))):
            continue
        ok = (
            r is None
            or r == "trivial"
            or (isinstance(r, (list, tuple)) and all(map(isinstance, r, repeat(str))))
        )
        if not ok:
            raise TypeError(f"routes[{name!r}] must be a list of physical link names or "
                            f"'trivial', got {type(r).__name__}")  # fmt: skip


def _alone(
    types: Mapping[str, float], static: Mapping[str, float], allowed: tuple, slots: float
) -> tuple:
    """The type check of a physical node hosting one virtual node (types ``allowed``).

    ``("static",)``: a static type takes it; ``("type",)``: no type of the node allowed;
    ``("one_type",)``; ``("slots", used, capacity)``; ``("acting", type)``.
    """
    if not any(t in types for t in allowed):
        return ("static",) if static and any(t in static for t in allowed) else ("type",)
    common = set(types)
    common &= set(allowed)
    if not common:
        return ("one_type",)
    used = sum([slots])
    fits = [t for t in sorted(common) if used <= types[t] + _EPS]
    if not fits:
        return ("slots", used, max(types[t] for t in common))
    return ("acting", fits[0])


#: id(node) -> (node, its view): what the checker's tables take from one physical node
#: (a pure function of the read-only node; the ``.ptop`` reader gives the same node object
#: for the same line of successive free-testbed texts). Bounded.
_node_views: Dict[int, tuple] = {}


def _node_view(node) -> tuple:
    """``(additive features [(name, capacity)], those of a negative capacity, (types,
    static types) as written)`` of a physical node (memoized by identity; read only)."""
    hit = _node_views.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    additive = [(k, c) for k, c in node.features.items() if k.startswith("?+")]
    view = (additive, [(k, c) for k, c in additive if 0 > c + _EPS],
            (tuple(node.types.items()), tuple(node.static.items())))  # fmt: skip
    if len(_node_views) >= 1 << 16:
        _node_views.clear()
    _node_views[id(node)] = (node, view)
    return view


class _LinkViews(dict):
    """Each physical link's ``(a, b, bandwidth, link types, trunk)`` by name, made when first
    asked for (a check reads the links of one mapping's routes, a small part of a testbed's
    links; a replay's free-testbed texts are a new testbed each)."""

    __slots__ = ("_links", "_switches")

    def __init__(self, links: Mapping[str, Any], switches: frozenset) -> None:
        super().__init__()
        self._links, self._switches = links, switches

    def __missing__(self, name: str) -> tuple:
        lk = self._links[name]  # (KeyError: no such link)
        sw = self._switches
        view = self[name] = (lk.a, lk.b, lk.bw, lk.types or ("ethernet",),
                             lk.a in sw and lk.b in sw)  # fmt: skip
        return view

    def get(self, name: Any, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


def _testbed_tables(ptop: PhysicalTopology, polled: bool = False) -> tuple:
    """The checker's own view of a testbed, cached on it (the testbed is immutable).

    ``switches``: the switch names; ``additive``: each node's additive features as
    ``[(name, capacity)]``, ``negative`` those of a negative capacity; ``links``: each
    link's ``(a, b, bandwidth, link types, trunk)``;
    ``tsig``: each node's type signature (nodes with the same types and static types, in the
    same order, share it). ``polled`` (a time-limited set-up): the nodes' views are built
    looking at the deadline, and a stopped build is resumed by the next
    (:func:`.problem._resumed`).
    """
    cached = cache_of(ptop).get("verify")  # kept beside the model, never on it
    if cached is None:
        switches = frozenset(n for n, node in ptop.nodes.items() if node.is_switch)
        if polled:
            facts = _resumed(cache_of(ptop), "verify/facts", list(ptop.nodes.values()),
                             _node_view)  # fmt: skip
        else:
            facts = [_node_view(nd) for nd in ptop.nodes.values()]
        additive = {n: f[0] for n, f in zip(ptop.nodes, facts)}
        links = _LinkViews(ptop.links, switches)
        sigs: Dict[tuple, int] = {}
        tsig = {n: sigs.setdefault(f[2], len(sigs)) for n, f in zip(ptop.nodes, facts)}
        negative = {n: f[1] for n, f in zip(ptop.nodes, facts)}
        cached = (switches, additive, negative, links, tsig)
        cache_of(ptop)["verify"] = cached
    return cached


def _fill_caches(ptop: PhysicalTopology) -> None:
    """Build what the solvers and this checker derive from a testbed once: the solvers'
    tables (:func:`~.problem._testbed_part`) and the checker's (:func:`_testbed_tables`)."""
    _testbed_part(ptop)
    _testbed_tables(ptop)


def _pack_caches(ptop: PhysicalTopology, entries: dict) -> dict:
    """The testbed's caches as they pickle: the solvers' tables without their read-only
    mappings (:func:`~.problem._tables_packed`), the checker's without its view of the
    testbed's own links (rebuilt on the testbed as received)."""
    out = dict(entries)
    if "tables" in out:
        out["tables"] = _tables_packed(out["tables"])
    if "verify" in out:
        switches, additive, negative, _links, tsig = out["verify"]
        out["verify"] = (switches, additive, negative, tsig)
    return out


def _unpack_caches(ptop: PhysicalTopology, entries: dict) -> dict:
    """What :func:`_pack_caches` made, as the builders make it, on ``ptop``."""
    out = dict(entries)
    if "tables" in out:
        out["tables"] = _tables_unpacked(out["tables"])
    if "verify" in out:
        switches, additive, negative, tsig = out["verify"]
        out["verify"] = (switches, additive, negative, _LinkViews(ptop.links, switches), tsig)
    return out


# A batch builds them once in the calling process and ships them with the testbed (issue 41).
travels(PhysicalTopology, ("tables", "verify"), _fill_caches, pack=_pack_caches,
        unpack=_unpack_caches)  # fmt: skip


def _shared_host(p: str, vs: List[str], node: Any, vnodes: dict, allowed_of: Dict[str, tuple],
                 bad: List[dict]) -> tuple:  # fmt: skip
    """The rules of a physical node ``p`` hosting several virtual nodes ``vs``: each one's
    type offered (a static type takes it apart), one type for the dynamic ones, their slots;
    violations appended to ``bad``. Returns ``(in use, the type it acts as or None)``."""
    types, static = node.types, node.static
    dynamic = []
    mistyped = False
    for v in vs:
        allowed = allowed_of[vnodes[v].type]
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
    busy = bool(dynamic or mistyped)
    act = None
    if dynamic:
        common = set(types)
        for v in dynamic:
            common &= set(allowed_of[vnodes[v].type])
        if not common:
            bad.append({"constraint": "one_type_at_a_time", "pnode": p,
                        "vnodes": dynamic})  # fmt: skip
        else:
            slots = sum([vnodes[v].slots for v in dynamic])
            fits = [t for t in sorted(common) if slots <= types[t] + _EPS]
            if not fits:
                bad.append({"constraint": "slots", "pnode": p, "used": slots,
                            "capacity": max(types[t] for t in common)})  # fmt: skip
            else:
                act = fits[0]
    return busy, act


def _link_rules(top: VirtualTopology, ptop: PhysicalTopology, mapping: Dict[str, str],
                routes: Dict[str, Any], tables: tuple, bad: List[dict]) -> tuple:  # fmt: skip
    """The rules of the links along their ``routes``: each path valid from end to end
    through switches, link types, bandwidths, interfaces used by one link (emulated ones
    shared within capacity), trunk loads; violations appended to ``bad``. ``tables``:
    the testbed's switches and physical links (:func:`_testbed_tables`). Returns
    ``(inter-switch bandwidth, trunk loads)``."""
    switches, plinks = tables
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
        ltype, emulated = lk.type, "emulated" in lk.flags  # (VLink.emulated)
        here = pa
        hops = 0
        ok = True
        left = len(r)
        for pl in r:
            left -= 1
            phys = plinks.get(pl)
            if phys is None:
                bad.append({"constraint": "unknown_plink", "link": name, "plink": pl})
                ok = False
                break
            a, b, cap, ptypes, trunk = phys
            if here == a:
                nxt = b
            elif here == b:
                nxt = a
            else:
                bad.append({"constraint": "broken_path", "link": name, "plink": pl,
                            "at": here})  # fmt: skip
                ok = False
                break
            if left and nxt not in switches:
                bad.append({"constraint": "path_through_host", "link": name, "node": nxt})
                ok = False
                break
            if ltype and ltype not in ptypes:
                bad.append({"constraint": "link_type", "link": name, "plink": pl,
                            "wanted": ltype})  # fmt: skip
            if cap + _EPS < bw:
                bad.append({"constraint": "bandwidth", "link": name, "plink": pl,
                            "needed": bw, "capacity": cap})  # fmt: skip
            if trunk:
                trunk_load[pl] += bw
                hops += 1
            elif emulated:
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
        cap = plinks[pl][2]
        if pl in exclusive:
            bad.append({"constraint": "interface_shared", "plink": pl,
                        "links": [exclusive[pl], "emulated"]})  # fmt: skip
        elif use > cap + _EPS:
            bad.append({"constraint": "interface_bandwidth", "plink": pl, "load": use,
                        "capacity": cap})  # fmt: skip
    for pl, load in trunk_load.items():
        cap = plinks[pl][2]
        if load > cap + _EPS:
            bad.append({"constraint": "trunk_bandwidth", "plink": pl, "load": load,
                        "capacity": cap})  # fmt: skip
    return isw, trunk_load


def _experiment_rules(top: VirtualTopology, ptop: PhysicalTopology, mapping: Dict[str, str],
                      in_use: List[str], acting: Dict[str, str]) -> List[dict]:  # fmt: skip
    """The violations of the rules on the whole experiment: fixed nodes, the testbed's type
    limits over the nodes ``in_use``, its policies, and the vclasses (each node's type:
    ``acting``)."""
    vnodes, pnodes = top.nodes, ptop.nodes
    bad: List[dict] = []
    for v, p in top.fixed.items():
        if mapping.get(v) != p:
            bad.append({"constraint": "fixed", "vnode": v, "pnode": p,
                        "got": mapping.get(v)})  # fmt: skip
    # set-type-limit as Emulab's assign counts it: every node in use adds its slots of each
    # type it lists (static ones too; `*` counts 10000), whatever type it acts as
    count: Dict[str, float] = defaultdict(float)
    if ptop.type_limits:
        for p in in_use:
            node = pnodes[p]
            for table in (node.types, node.static):
                for t, n in table.items():
                    if t in ptop.type_limits:
                        count[t] += 10000.0 if math.isinf(n) else n
    for t, lim in ptop.type_limits.items():
        if count[t] > lim:
            used = int(count[t]) if count[t].is_integer() else count[t]
            bad.append({"constraint": "type_limit", "type": t, "used": used, "limit": lim})
    # Emulab's policy precheck: `policy desire NAME disallow | limit X` on the experiment
    for name, (kind, x) in ptop.policies.items():
        weights = [nd.desires[name] for nd in vnodes.values() if name in nd.desires]
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
        for v, node in vnodes.items():
            if node.type == name and mapping.get(v) in acting:
                chosen.add(acting[mapping[v]])
        if len(chosen) > 1:
            bad.append({"constraint": "vclass", "vclass": name, "types": sorted(chosen)})
    return bad


def verify_mapping(
    top: VirtualTopology,
    ptop: PhysicalTopology,
    mapping: Dict[str, str],
    routes: Optional[Dict[str, Any]] = None,
    *,
    claimed: Optional[float] = None,
) -> VerifyReport:
    """Check a mapping (and its routes) against every hard constraint.

    Parameters
    ----------
    top : VirtualTopology
    ptop : PhysicalTopology
    mapping : dict of str to str
        Virtual node -> physical node.
    routes : dict of str to (list of str or "trivial"), optional
        Virtual link -> physical links crossed in order (or ``"trivial"``). Without them
        the package's router routes the mapping and the routes it finds are checked; when
        it finds none the report has the violation ``links_unchecked`` (never valid: the
        links could not be checked).
    claimed : float, optional
        An inter-switch bandwidth to compare with the recomputed one.

    Returns
    -------
    VerifyReport

    Examples
    --------
    >>> from coalloc.testbed import parse_top, parse_ptop, verify_mapping
    >>> pt = parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                 "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> t = parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> verify_mapping(t, pt, {"x": "a", "y": "b"}, {"l": ["la", "lb"]}).ok
    True
    """
    _check_shapes(mapping, routes)
    switches, pfeat, pneg, plinks, tsig = _testbed_tables(ptop)
    vnodes, pnodes = top.nodes, ptop.nodes
    bad: List[dict] = []
    allowed_of: Dict[str, tuple] = {}  # by virtual type
    # each virtual node's additive desires (a hosted node without one adds 0 to every sum)
    add_of: Dict[str, Dict[str, float]] = {}
    for v, nd in vnodes.items():
        p = mapping.get(v)
        if p is None:
            bad.append({"constraint": "unassigned", "vnode": v})
        elif p not in pnodes:
            bad.append({"constraint": "unknown_pnode", "vnode": v, "pnode": p})
        if nd.type not in allowed_of:
            allowed_of[nd.type] = top.allowed_types(v)
        if nd.desires:
            add_of[v] = {k: w for k, w in nd.desires.items() if k.startswith("?+")}
    hosted: Dict[str, List[str]] = {}
    for v, p in mapping.items():
        if v in vnodes and p in pnodes:
            if p in hosted:
                hosted[p].append(v)
            else:
                hosted[p] = [v]
    acting: Dict[str, str] = {}
    in_use: List[str] = []  # nodes hosting a virtual node not taken by a static type
    alone: Dict[tuple, tuple] = {}  # a node hosting one virtual node: by the pair's kinds
    for p, vs in hosted.items():
        node = pnodes[p]
        types, static = node.types, node.static
        if len(vs) == 1:
            v = vs[0]
            nd = vnodes[v]
            key = (nd.type, nd.slots, tsig[p])
            res = alone.get(key)
            if res is None:
                res = alone[key] = _alone(types, static, allowed_of[nd.type], nd.slots)
            if res[0] != "static":
                in_use.append(p)
            if res[0] == "acting":
                acting[p] = res[1]
            elif res[0] == "type":
                bad.append({"constraint": "type", "vnode": v, "pnode": p,
                            "allowed": list(allowed_of[nd.type])})  # fmt: skip
            elif res[0] == "slots":
                bad.append({"constraint": "slots", "pnode": p, "used": res[1],
                            "capacity": res[2]})  # fmt: skip
            elif res[0] == "one_type":
                bad.append({"constraint": "one_type_at_a_time", "pnode": p, "vnodes": [v]})
            a = add_of.get(v)
            wants = [a] if a else []
        else:
            busy, act = _shared_host(p, vs, node, vnodes, allowed_of, bad)
            if busy:
                in_use.append(p)
            if act is not None:
                acting[p] = act
            wants = [add_of[v] for v in vs if add_of.get(v)]
        if wants:
            for k, cap in pfeat[p]:
                use = sum([a.get(k, 0.0) for a in wants])
                if use > cap + _EPS:
                    bad.append({"constraint": "additive", "feature": k, "pnode": p,
                                "used": use, "capacity": cap})  # fmt: skip
        else:
            for k, cap in pneg[p]:  # an empty sum exceeds a negative capacity
                bad.append({"constraint": "additive", "feature": k, "pnode": p,
                                "used": 0, "capacity": cap})  # fmt: skip
        for v in vs:
            desires = vnodes[v].desires
            if not desires:
                continue
            for k, w in desires.items():
                if k.startswith("?+"):
                    if k not in node.features:
                        bad.append({"constraint": "additive", "feature": k, "pnode": p,
                                    "vnode": v, "capacity": 0.0})  # fmt: skip
                elif w >= 1.0 and k not in node.features:
                    bad.append({"constraint": "desire", "feature": k, "vnode": v, "pnode": p})
    bad += _experiment_rules(top, ptop, mapping, in_use, acting)
    if any(b["constraint"] in ("unassigned", "unknown_pnode") for b in bad):
        return VerifyReport(bad, None, {}, claimed)
    if routes is None:
        if bad:  # invalid already; the links of a broken placement are not routed
            return VerifyReport(bad, None, {}, claimed)
        routes = _route_here(top, ptop, mapping)
        if routes is None:
            bad.append({"constraint": "links_unchecked",
                        "why": "no routes were given and the router found none for this "
                               "mapping: its links could not be checked"})  # fmt: skip
            return VerifyReport(bad, None, {}, claimed)

    isw, trunk_load = _link_rules(top, ptop, mapping, routes, (switches, plinks), bad)
    return VerifyReport(bad, isw, dict(trunk_load), claimed)
