"""The default method (a portfolio: assign+ strategies, a quick anneal from their mapping,
the exact method on small experiments) against the annealer and the exact method."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed.assignplus import packing, scarcity
from coalloc.testbed.problem import build_problem
from coalloc.testbed.solvers import unmet_desires

# experiments of 20 PCs onto the Utah testbed of July 2000 where the assign+ strategies alone
# cross more bandwidth than the annealer (issue 25): (extra edges, seed) of random_sparse
UTAH_CASES = [(0, 10), (0, 11), (2, 3), (2, 5)]


@pytest.mark.slow
@pytest.mark.parametrize("extra,seed", UTAH_CASES)
def test_default_not_worse_than_annealer_on_utah2000(extra, seed):
    pt = g.utah2000()
    top = g.random_sparse(20, extra, seed=seed)
    d = tb.assign(top, pt, seed=1)
    assert d.success and tb.verify_mapping(top, pt, d.mapping, d.routes).ok
    strategies = tb.assign(top, pt, "assign+.1m", seed=1)
    for s in (1, 2, 3):
        a = tb.assign(top, pt, "anneal", seed=s)
        assert d.interswitch_bandwidth <= a.interswitch_bandwidth
    assert d.interswitch_bandwidth <= strategies.interswitch_bandwidth


@pytest.mark.slow
def test_utah2000_chain_is_proven_by_exact():
    """The case of the issue: the default's answer equals what CP-SAT proves optimal."""
    pt = g.utah2000()
    top = g.random_sparse(20, 0, seed=11)
    d = tb.assign(top, pt, seed=1)
    e = tb.assign(top, pt, "exact", time_limit=60)
    assert e.status == "optimal"
    assert d.interswitch_bandwidth == e.interswitch_bandwidth == 200_000
    assert d.status == "feasible"  # 20 nodes: above the portfolio's exact size, no proof


def test_special_desire_honoured_when_a_free_node_offers_it():
    """One free node offers ``special``; the default puts the node desiring it there."""
    pt = g.utah2000(special=1)
    top = tb.parse_top(
        "node a pc special:0.5\nnode b pc\nnode c pc\n"
        "link l0 a b 100000 0 0\nlink l1 b c 100000 0 0\n"
    )
    d = tb.assign(top, pt, seed=1)
    assert d.success and tb.verify_mapping(top, pt, d.mapping, d.routes).ok
    assert pt.nodes[d.mapping["a"]].features.get("special") == 0.2
    assert unmet_desires(top, pt, d.mapping) == 0
    # without a free node offering it, the desire stays unmet and the mapping stands
    avail = {n for n, p in pt.nodes.items() if "special" not in p.features}
    d2 = tb.assign(top, pt, seed=1, available=avail)
    assert d2.success and unmet_desires(top, pt, d2.mapping) == 0.5


def test_optimal_only_when_proven():
    """With exact_nodes, small experiments get the exact method: status optimal with a
    bound the exact method confirms; without it, or above the size, never optimal."""
    pt = g.utah2000(n_pcs=10)  # two PCs per switch: a ring of 5 must cross switches
    top = g.ring(5)
    plain = tb.assign(top, pt, seed=1)
    assert plain.success and plain.status == "feasible" and "exact_status" not in plain.params
    d = tb.assign(top, pt, seed=1, exact_nodes=8)
    e = tb.assign(top, pt, "exact")
    assert e.status == "optimal"
    assert d.status == "optimal" and d.interswitch_bandwidth == e.interswitch_bandwidth
    assert d.bound == pytest.approx(e.interswitch_bandwidth)
    big = g.ring(12)
    pt2 = g.utah2000(n_pcs=15)
    d2 = tb.assign(big, pt2, seed=1, exact_nodes=8)
    assert d2.success and d2.status == "feasible"
    with pytest.raises(ValueError, match="exact_nodes"):
        tb.assign(top, pt, exact_nodes=-1)


def test_unmet_desires_ignores_hard_and_additive():
    pt = tb.parse_ptop(
        "node sw switch:1\nnode a pc:1 - f:0.2 ?+mem:10\nnode b pc:1\n"
        "link la a sw 100 0 0\nlink lb b sw 100 0 0\n"
    )
    top = tb.parse_top("node x pc f:0.3 g:0.4 ?+mem:5\n")
    assert unmet_desires(top, pt, {"x": "a"}) == pytest.approx(0.4)
    assert unmet_desires(top, pt, {"x": "b"}) == pytest.approx(0.7)


def _two_switches(left: int, right: int, *, right_type: str = "pc") -> str:
    lines = ["node s0 switch:1 *lan:*", "node s1 switch:1 *lan:*", "link t s0 s1 100000 0 0"]
    for i in range(left):
        lines += [f"node a{i} pc:1", f"link la{i} a{i} s0 1000 0 0"]
    for i in range(right):
        lines += [f"node b{i} {right_type}:1", f"link lb{i} b{i} s1 1000 0 0"]
    return "\n".join(lines) + "\n"


def _free_per_switch(ptop, mapping) -> dict:
    """Free hosts left behind each switch, counted from the testbed's own links."""
    used = set(mapping.values())
    out = {}
    for lk in ptop.links.values():
        for host, sw in ((lk.a, lk.b), (lk.b, lk.a)):
            if not ptop.nodes[host].is_switch and ptop.nodes[sw].is_switch:
                out[sw] = out.get(sw, 0) + (host not in used)
    return out


@pytest.mark.parametrize("left,right,m", [(5, 3, 2), (5, 3, 3), (5, 3, 4), (3, 5, 2), (6, 6, 3),
                                          (4, 2, 2)])  # fmt: skip
def test_default_takes_the_fullest_switch_that_fits(left, right, m):
    """Best fit: a LAN that fits behind one switch goes behind the switch with the fewest
    free hosts that can take it (the larger block stays whole); the referee counts the free
    hosts from the testbed's links and checks the mapping independently."""
    ptop = tb.parse_ptop(_two_switches(left, right))
    top = g.lan(m, bw=1000)
    r = tb.assign(top, ptop, seed=0)
    assert r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    assert r.interswitch_bandwidth == 0
    fits = [n for n in (left, right) if n >= m]
    chosen = min(fits)
    assert sorted(_free_per_switch(ptop, r.mapping).values()) == sorted(
        [left + right - chosen, chosen - m]
    )


def test_best_fit_keeps_the_types_asked_for():
    """The fuller switch offers another type only: the experiment stays where its type is."""
    ptop = tb.parse_ptop(_two_switches(5, 2, right_type="other"))
    top = g.lan(2, bw=1000)
    r = tb.assign(top, ptop, seed=0)
    assert r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    assert all(p.startswith("a") or p == "s0" for p in r.mapping.values())


def test_packing_is_the_sum_of_squares_of_free_hosts_per_switch():
    ptop = tb.parse_ptop(_two_switches(5, 3))
    top = g.lan(3, bw=1000)
    r = tb.assign(top, ptop, "anneal", seed=1)
    pr = build_problem(top, ptop)
    where = np.array([pr.pidx[r.mapping[v]] for v in pr.vnames])
    want = sum(n * n for n in _free_per_switch(ptop, r.mapping).values())
    assert packing(pr, where) == want


@pytest.mark.parametrize("method", ["assign+", "anneal"])
def test_a_small_link_takes_the_fullest_trunk_that_carries_it(method):
    """Best fit on parallel trunks: a 100 link crossing two switches takes the trunk with
    300 already in use, so that the other stays whole for a 1000 link (the referee: the
    checker's trunk loads, and the 1000 link mapped afterwards)."""
    ptop = tb.parse_ptop(
        "node s0 switch:1\nnode s1 switch:1\nlink t1 s0 s1 1000 0 0\nlink t2 s0 s1 1000 0 0\n"
        "node a pc:1\nnode b pc:1\nlink la a s0 1000 0 0\nlink lb b s1 1000 0 0\n"
    )
    small = tb.parse_top("node x pc\nnode y pc\nlink l x y 100 0 0\n")
    r = tb.assign(small, ptop, method, seed=1, trunk_used={"t1": 300.0})
    assert r.success
    rep = tb.verify_mapping(small, ptop, r.mapping, r.routes)
    assert rep.ok and dict(rep.trunk_load) == {"t1": 100.0}
    wide = tb.parse_top("node x pc\nnode y pc\nlink l x y 1000 0 0\n")
    r2 = tb.assign(wide, ptop, method, seed=1, trunk_used={"t1": 400.0})
    assert r2.success and dict(r2.trunk_load) == {"t2": 1000.0}


def test_best_fit_moves_nothing_a_type_limit_forbids():
    """The fuller switch's PCs also count as type ``y``, limited to 1: moving a 2-node LAN
    there would break ``set-type-limit``; the default keeps a mapping the checker accepts."""
    text = _two_switches(5, 3).replace("node b0 pc:1", "node b0 pc:1 y:1")
    text = text.replace("node b1 pc:1", "node b1 pc:1 y:1").replace(
        "node b2 pc:1", "node b2 pc:1 y:1"
    )
    ptop = tb.parse_ptop(text + "set-type-limit y 1\n")
    top = g.lan(2, bw=1000)
    r = tb.assign(top, ptop, seed=0)
    assert r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok


# ----------------------------------------------------------------- scarce types (third run)
def _one_switch(rare: int, common: int, rare_switch: str = "s0", common_switch: str = "s0"):
    """``rare`` PCs of type ``rare`` (no unwanted feature: assign's score prefers them) and
    ``common`` PCs of type ``common`` with an unwanted feature, behind the given switches."""
    lines = ["node s0 switch:1 *lan:*", "node s1 switch:1 *lan:*", "link t s0 s1 100000 0 0"]
    for i in range(rare):
        lines += [f"node r{i} pc:1 rare:1", f"link lr{i} r{i} {rare_switch} 1000 0 0"]
    for i in range(common):
        lines += [f"node c{i} pc:1 common:1 - fast-disk:0.2",
                  f"link lc{i} c{i} {common_switch} 1000 0 0"]  # fmt: skip
    return tb.parse_ptop("\n".join(lines) + "\n")


def _scarcity_referee(ptop, mapping, counted) -> float:
    """Sum over the counted types of 1 / (free hosts offering it after the mapping + 1),
    counted from the testbed's nodes."""
    used = set(mapping.values())
    total = 0.0
    for t in counted:
        left = sum(1 for n, p in ptop.nodes.items()
                   if not p.is_switch and n not in used and p.types.get(t, 0) > 0)  # fmt: skip
        total += 1.0 / (left + 1.0)
    return total


@pytest.mark.parametrize("m", [1, 2, 3])
def test_plain_nodes_leave_the_scarce_type_free(m):
    """Plain ``pc`` nodes on one switch with 3 ``rare`` and 6 ``common`` PCs: the default
    takes the common ones, though assign's score prefers the rare (no unwanted feature), so
    that an experiment asking for the 3 rare PCs still maps afterwards (the referee: that
    experiment mapped on what is left, both checked independently)."""
    ptop = _one_switch(3, 6)
    top = g.lan(m, bw=1000)
    r = tb.assign(top, ptop, seed=0)
    assert r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    assert r.interswitch_bandwidth == 0
    assert all(not p.startswith("r") for p in r.mapping.values())
    left = {n for n in ptop.nodes if n not in r.mapping.values()}
    rare = g.lan(3, bw=1000, vtype="rare")
    r2 = tb.assign(rare, ptop, seed=0, available=left)
    assert r2.success and tb.verify_mapping(rare, ptop, r2.mapping, r2.routes).ok
    # the annealer, scoring by assign's weights alone, takes rare PCs (the contrast)
    a = tb.assign(top, ptop, "anneal", seed=1)
    assert a.success and any(p.startswith("r") for p in a.mapping.values())


def test_scarce_types_never_cost_interswitch_bandwidth():
    """The only placement without inter-switch bandwidth uses the rare PCs (behind s0 with
    one common PC; the other commons behind s1): the default keeps bandwidth first."""
    ptop = _one_switch(2, 3, "s0", "s0")
    text = tb.format_ptop(ptop).replace("lc1 c1 s0", "lc1 c1 s1").replace("lc2 c2 s0", "lc2 c2 s1")
    ptop = tb.parse_ptop(text)
    top = g.lan(3, bw=1000)
    r = tb.assign(top, ptop, seed=0)
    assert r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    assert r.interswitch_bandwidth == 0
    assert sorted(p for p in r.mapping.values() if p not in ("s0", "s1")) == ["c0", "r0", "r1"]


@pytest.mark.parametrize("mixed", [True, False])
def test_scarcity_counts_hardware_types_not_cluster_labels(mixed):
    """``scarcity`` against a count from the testbed's nodes. ``solo`` is exactly the hosts
    behind s1 (a switch's own type). With ``rare`` and ``common`` sharing s0 (types that
    say what a host is), every type counts, ``solo`` too; with s0's hosts all ``common``
    (every type says only where), the switches' own types do not count, ``pc`` does."""
    text = tb.format_ptop(_one_switch(2 if mixed else 0, 3))
    text += "node d0 pc:1 solo:1\nnode d1 pc:1 solo:1\n"
    text += "link ld0 d0 s1 1000 0 0\nlink ld1 d1 s1 1000 0 0\n"
    ptop = tb.parse_ptop(text)
    top = tb.parse_top("node x pc\nnode y pc\n")
    pr = build_problem(top, ptop)
    counted = ["pc", "rare", "common", "solo"] if mixed else ["pc"]
    hosts = [["c0", "c1"], ["c1", "c2"], ["d0", "d1"], ["d0", "c2"]]
    if mixed:
        hosts += [["r0", "c0"], ["r0", "r1"]]
    for pair in hosts:
        mapping = dict(zip(["x", "y"], pair))
        where = np.array([pr.pidx[mapping[v]] for v in pr.vnames])
        want = _scarcity_referee(ptop, mapping, counted)
        assert scarcity(pr, where) == pytest.approx(want, abs=1e-12)


def test_best_fit_unchanged_by_cluster_types():
    """Each switch's hosts carry a type of their own (Grid'5000 clusters): best fit still
    takes the fuller switch (the types say where, which packing weighs)."""
    text = _two_switches(5, 3).replace("pc:1", "pc:1 cla:1", 5)
    ptop = tb.parse_ptop(text.replace("node b0 pc:1", "node b0 pc:1 clb:1")
                         .replace("node b1 pc:1", "node b1 pc:1 clb:1")
                         .replace("node b2 pc:1", "node b2 pc:1 clb:1"))  # fmt: skip
    top = g.lan(3, bw=1000)
    r = tb.assign(top, ptop, seed=0)
    assert r.success and tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    assert sorted(_free_per_switch(ptop, r.mapping).values()) == [0, 5]
