"""The fast router, checker and problem compiler give the answers of their straightforward twins.

``route`` (per-testbed interface tables and rankings), ``verify_mapping`` (its own per-testbed
tables, fast paths for the usual shapes) and ``build_problem`` (virtual nodes grouped by
signature in one pass, pclass partitions cached per testbed and free set) were rewritten for
speed; the referees here are the code they replaced (``_slow_twins``), a cold testbed object
(empty caches), and the same experiment with its nodes and links in another order.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed.model import PhysicalTopology, PLink, PNode, VirtualTopology, VLink, VNode
from coalloc.testbed.problem import build_problem
from coalloc.testbed.routing import route

from ._slow_twins import route_reference, verify_reference


def _rich_ptop(seed: int) -> PhysicalTopology:
    """Switch trees (sometimes disconnected, sometimes with a cycle) of parallel typed trunks;
    hosts with interfaces to several switches, typed and of several bandwidths; links between
    hosts; multi-slot, static and limited types; additive and ordinary features."""
    rng = np.random.default_rng(seed)
    ns = int(rng.integers(1, 6))
    nodes = [PNode(f"s{i}", {"switch": 1}, {"lan": math.inf}) for i in range(ns)]
    links = []

    def types():
        if rng.random() < 0.5:
            return ()
        return tuple(rng.choice(["ethernet", "fiber"], size=int(rng.integers(1, 3)),
                                replace=False).tolist())  # fmt: skip

    for i in range(1, ns):
        if rng.random() < 0.9:
            j = int(rng.integers(0, i))
            for k in range(int(rng.integers(1, 4))):
                links.append(PLink(f"t{i}-{k}", f"s{i}", f"s{j}",
                                   float(rng.choice([100, 200, 400, 1000])), types=types()))
    if ns > 2 and rng.random() < 0.5:
        links.append(PLink("tc", "s0", f"s{ns - 1}", 300.0))
    npc = int(rng.integers(3, 25))
    for p in range(npc):
        h = ("pa", "pb", "pq")[int(rng.integers(0, 3))]
        feats = {}
        if rng.random() < 0.5:
            feats["?+mem"] = float(rng.choice([256, 512, 1024, -5.0]))  # (negative: full)
        if rng.random() < 0.4:
            feats["fast"] = 0.2
        nodes.append(PNode(f"p{p}", {"pc": 1, h: float(rng.choice([1, 1, 2, 4]))},
                           {"delay": 2} if rng.random() < 0.2 else {}, feats))  # fmt: skip
        for q in range(int(rng.integers(0, 6))):
            links.append(PLink(f"p{p}:e{q}", f"p{p}", f"s{int(rng.integers(0, ns))}",
                               float(rng.choice([50, 100, 1000, 1000])), types=types()))
    for k in range(int(rng.integers(0, 4))):
        a, b = rng.integers(0, npc, 2)
        if a != b:
            links.append(PLink(f"d{k}", f"p{a}", f"p{b}", float(rng.choice([100, 1000]))))
    limits = {"pb": int(rng.integers(1, 4))} if rng.random() < 0.3 else None
    return PhysicalTopology(nodes, links, type_limits=limits)


def _rich_top(seed: int, n: int) -> VirtualTopology:
    """Typed and vclass nodes, desires, two-slot nodes; links of every flag, type, ``*``."""
    rng = np.random.default_rng(seed)
    vclasses = {"vc": (float(rng.choice([0.5, 1.0])), ("pa", "pb"))} if rng.random() < 0.3 else {}
    nodes = []
    for i in range(n):
        t = str(rng.choice(["pc", "pc", "pc", "pa", "pb", "pq", "delay"] +
                           (["vc", "vc"] if vclasses else [])))  # fmt: skip
        desires = {}
        if rng.random() < 0.2:
            desires["?+mem"] = float(rng.choice([128, 256, 512]))
        if rng.random() < 0.15:
            desires["fast"] = float(rng.choice([0.5, 1.0]))
        nodes.append(VNode(f"v{i}", t, 1.0 if rng.random() < 0.8 else 2.0, desires))
    links = []
    for e in range(int(rng.integers(max(1, n - 1), 2 * n + 1)) if n > 1 else 0):
        a, b = rng.integers(0, n, 2)
        if a == b:
            continue
        flags = {f for f, p in (("emulated", 0.2), ("trivial_ok", 0.3)) if rng.random() < p}
        links.append(VLink(f"l{e}", f"v{a}", f"v{b}",
                           None if rng.random() < 0.1 else float(rng.choice([10, 50, 100, 200])),
                           type=None if rng.random() < 0.7 else str(rng.choice(["ethernet",
                                                                                 "fiber"])),
                           flags=frozenset(flags)))  # fmt: skip
    fixed = {"v0": "p0"} if n and rng.random() < 0.1 else {}
    return VirtualTopology(nodes, links, vclasses=vclasses, fixed=fixed)


def _cases():
    """(top, ptop, available, trunk_used): generated testbeds and experiments, the rich ones."""
    rng = np.random.default_rng(7)
    fabrics = [g.deterlab(60, 3, seed=1), g.deterlab(48, 4, trunk_bw=200_000, seed=0),
               g.grid5000(3, 2, 6, backbone_bw=300_000, seed=1)]  # fmt: skip
    for i, ptop in enumerate(fabrics):
        pcs = [n for n, p in ptop.nodes.items() if not p.is_switch]
        trunks = [lk.name for lk in ptop.trunks()]
        for size in (3, 9, 17, 30):
            avail = set(rng.choice(pcs, size=len(pcs) * 2 // 3, replace=False).tolist()) \
                if size % 2 else None  # fmt: skip
            used = {t: 100_000.0 for t in trunks[::2]} if i % 2 else None
            yield g.random_topology(size, seed=100 * i + size), ptop, avail, used
    for s in range(24):
        ptop = _rich_ptop(s)
        trunks = [lk.name for lk in ptop.trunks()]
        yield _rich_top(50 + s, 2 + s % 11), ptop, None, {t: 50.0 for t in trunks[:1]}


def _wheres(pr, rng):
    """Mappings to route: candidates at random, a crowded one, any node (switches too)."""
    npn = len(pr.pnames)
    out = []
    for _ in range(3):
        w = np.array([int(rng.choice(pr.members[int(rng.choice(pr.cand[v]))])) if pr.cand[v]
                      else int(rng.integers(0, npn)) for v in range(pr.nv)], dtype=np.int64)
        out.append(w)
    few = rng.integers(0, npn, size=3)
    out.append(few[rng.integers(0, 3, size=pr.nv)].astype(np.int64))
    out.append(rng.integers(0, npn, size=pr.nv).astype(np.int64))
    return out


def _routing(rt) -> tuple:
    return (list(rt.routes.items()), list(rt.kinds.items()), list(rt.trunk_load.items()),
            rt.interswitch_bandwidth, rt.failure)  # fmt: skip


def _report(rep) -> tuple:
    return (rep.violations, rep.interswitch_bandwidth, list(rep.trunk_load.items()),
            rep.ok, str(rep))  # fmt: skip


def test_route_and_verify_match_their_twins():
    """Routes (link names and order), kinds, trunk loads, inter-switch bandwidth, failures;
    reports (violations and their order, trunk loads); every routed valid mapping verified."""
    rng = np.random.default_rng(3)
    routed = verified = 0
    for top, ptop, avail, used in _cases():
        pr = build_problem(top, ptop, avail, used)
        for where in _wheres(pr, rng):
            rt = route(pr, where)
            assert _routing(rt) == _routing(route_reference(pr, where))
            mapping = {pr.vnames[v]: pr.pnames[int(where[v])] for v in range(pr.nv)}
            for routes in (None, rt.routes):
                rep = tb.verify_mapping(top, ptop, mapping, routes,
                                        claimed=rt.interswitch_bandwidth)  # fmt: skip
                assert _report(rep) == _report(
                    verify_reference(top, ptop, mapping, routes, claimed=rt.interswitch_bandwidth)
                )
            if rt.failure is None and tb.verify_mapping(top, ptop, mapping).ok:
                routed += 1
                rep = tb.verify_mapping(top, ptop, mapping, rt.routes,
                                        claimed=rt.interswitch_bandwidth)  # fmt: skip
                verified += rep.ok
                assert rep.ok or any(v["constraint"] == "trunk_bandwidth"
                                     for v in rep.violations), str(rep)  # fmt: skip
    assert routed >= 10 and verified >= 10, (routed, verified)


def _mutants(mapping, routes, ptop, rng):
    vs, pn, ln = list(mapping), list(ptop.nodes), list(ptop.links)
    for kind in range(11):
        m = dict(mapping)
        r = {k: (list(x) if isinstance(x, list) else x) for k, x in routes.items()}
        v = vs[int(rng.integers(0, len(vs)))]
        if kind == 0:
            m[v] = pn[int(rng.integers(0, len(pn)))]
        elif kind == 1:
            m[v] = m[vs[int(rng.integers(0, len(vs)))]]
        elif kind == 2:
            del m[v]
        elif kind == 3:
            m[v] = None
        elif kind == 4:
            m[v] = "nosuchnode"
        elif kind == 5:
            for k in list(r)[::2]:
                del r[k]
        elif kind == 6:
            r = {k: x[::-1] if isinstance(x, list) else x for k, x in r.items()}
        elif kind == 7:
            for k in r:
                if isinstance(r[k], list) and r[k]:
                    r[k][int(rng.integers(0, len(r[k])))] = ln[int(rng.integers(0, len(ln)))]
        elif kind == 8:
            r = {k: x[:1] + x[1:-1] * 2 + x[-1:] if isinstance(x, list) else x
                 for k, x in r.items()}  # fmt: skip
        elif kind == 9:
            r = {k: "trivial" if i % 2 else ["nosuchlink"] for i, k in enumerate(r)}
        else:
            m = {u: m[v] for u in m}
        yield m, r


def test_verify_matches_its_twin_on_broken_mappings():
    """Wrong types, over-full nodes, missing and unknown nodes, broken, reversed, doubled and
    unknown routes, trivial routes between two nodes, shared interfaces, full trunks."""
    rng = np.random.default_rng(5)
    seen = set()
    for top, ptop, avail, used in _cases():
        r = tb.assign(top, ptop, "assign+", available=avail, trunk_used=used)
        if not r.success or not r.mapping:
            continue
        for m, routes in _mutants(r.mapping, r.routes, ptop, rng):
            rep = tb.verify_mapping(top, ptop, m, routes, claimed=r.interswitch_bandwidth)
            ref = verify_reference(top, ptop, m, routes, claimed=r.interswitch_bandwidth)
            assert _report(rep) == _report(ref)
            seen.update(v["constraint"] for v in rep.violations)
    assert {"type", "slots", "unassigned", "unknown_pnode", "broken_path", "unknown_plink",
            "interface_shared", "path_end"} <= seen, seen  # fmt: skip


@pytest.mark.parametrize("mapping, routes", [
    ({1: "a"}, None), ({"x": 3}, None), (["x"], None), ({"x": "a"}, ["l"]),
    ({"x": "a"}, {"l": "direct"}), ({"x": "a"}, {"l": ["la", 2]}), ({"x": "a"}, {"l": 5}),
])  # fmt: skip
def test_verify_rejects_bad_shapes_as_its_twin(mapping, routes):
    top, ptop = tb.parse_top("node x pc\n"), tb.parse_ptop("node sw switch:1\nnode a pc:1\n")
    with pytest.raises(TypeError) as fast:
        tb.verify_mapping(top, ptop, mapping, routes)
    with pytest.raises(TypeError) as slow:
        verify_reference(top, ptop, mapping, routes)
    assert str(fast.value) == str(slow.value)


_FIELDS = ("cand", "cand_why", "fcost", "vtype", "vstatic", "vslots", "vadd", "vclass", "fixed",
           "hint")  # fmt: skip


def _rows(pr) -> dict:
    """Each virtual node's rows by name, and each link's by name."""
    out = {}
    for i, v in enumerate(pr.vnames):
        for f in _FIELDS:
            x = getattr(pr, f)[i]
            out[v, f] = x.tolist() if isinstance(x, np.ndarray) else x
    for e, name in enumerate(pr.link_names):
        out[name] = (pr.vnames[pr.la[e]], pr.vnames[pr.lb[e]], float(pr.lbw[e]),
                     bool(pr.ltriv[e]), bool(pr.lemu[e]), pr.ltype[e])  # fmt: skip
    return out


def _reordered(top: VirtualTopology) -> VirtualTopology:
    return VirtualTopology(list(top.nodes.values())[::-1], list(top.links.values())[::-1],
                           vclasses=top.vclasses, fixed=top.fixed, hints=top.hints)  # fmt: skip


def _problem_arrays(pr) -> dict:
    out = {}
    for k, x in sorted(vars(pr).items()):
        if k in ("top", "ptop"):
            continue
        if isinstance(x, np.ndarray):
            out[k] = (x.dtype.str, x.shape, x.tobytes())
        elif k == "members":
            out[k] = [m.tolist() for m in x]
        else:
            out[k] = x
    return out


def test_problem_rows_follow_the_node_not_its_place():
    """A node's candidates, costs and types do not depend on which node of its signature
    came first, nor on the order of the links; a warm testbed (caches filled by other
    experiments and free sets) compiles what a cold one does."""
    for top, ptop, avail, used in _cases():
        pr = build_problem(top, ptop, avail, used)
        other = build_problem(_reordered(top), ptop, avail, used)
        assert _rows(pr) == _rows(other)
        cold = pickle.loads(pickle.dumps(ptop))  # the solvers' caches stay behind
        assert not [k for k in vars(cold) if k.startswith("_tb_")]
        assert _problem_arrays(build_problem(top, cold, avail, used)) == \
            _problem_arrays(build_problem(top, ptop, avail, used))  # fmt: skip


def test_pclass_partitions_cached_per_free_set():
    """The per-testbed cache of pclass partitions keys on the free set: each free set gets
    its own partition (members usable, one signature per pclass), recalled unchanged, and
    the cached arrays are read-only."""
    ptop = g.deterlab(40, 3, seed=2)
    top = g.random_topology(8, seed=4)
    pcs = [n for n, p in ptop.nodes.items() if not p.is_switch]
    rng = np.random.default_rng(0)
    frees = [None] + [set(rng.choice(pcs, size=k, replace=False).tolist()) for k in (5, 20, 39)]
    first = [build_problem(top, ptop, f) for f in frees]
    for f, pr in zip(frees, first):
        usable = set(range(len(pr.pnames))) if f is None else {
            i for i, n in enumerate(pr.pnames) if n in f or ptop.nodes[n].is_switch}
        assert {int(p) for m in pr.members for p in m} == usable
        for c, m in enumerate(pr.members):
            assert all(pr.pclass[p] == c for p in m)
            kinds = {(tuple(sorted(ptop.nodes[pr.pnames[p]].types.items())), int(pr.pswitch[p]))
                     for p in m}  # fmt: skip
            assert len(kinds) == 1
        again = build_problem(top, ptop, None if f is None else set(f))
        assert _problem_arrays(again) == _problem_arrays(pr)
        with pytest.raises(ValueError):
            pr.pclass[0] = 5
