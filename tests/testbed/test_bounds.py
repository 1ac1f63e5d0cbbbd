"""The hub max-flow proof (:mod:`coalloc.testbed.bounds`): sound against CP-SAT on small
fabrics, and the default's failures it proves come back ``infeasible`` with its reason."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed.bounds import hub_bound, hub_proof
from coalloc.testbed.problem import build_problem


def _fabric(hosts, trunks, dual=()) -> tb.PhysicalTopology:
    """Switches s0..sk with ``hosts[s]`` hosts of interface bandwidth from the list, the
    trunks ``(a, b, bw)`` and hosts with an interface to each of two switches ``(a, b)``."""
    lines = [f"node s{s} switch:1 *lan:*" for s in range(len(hosts))]
    for s, bws in enumerate(hosts):
        for i, bw in enumerate(bws):
            lines += [f"node h{s}_{i} pc:1", f"link l{s}_{i} h{s}_{i} s{s} {bw} 0 0"]
    for i, (a, b) in enumerate(dual):
        lines += [f"node d{i} pc:1", f"link da{i} d{i}:eth0 s{a} 100 0 0",
                  f"link db{i} d{i}:eth1 s{b} 100 0 0"]  # fmt: skip
    for k, (a, b, bw) in enumerate(trunks):
        lines.append(f"link t{k} s{a} s{b} {bw} 0 0")
    return tb.parse_ptop("\n".join(lines) + "\n")


@st.composite
def _cases(draw):
    ns = draw(st.integers(2, 3))
    hosts = [draw(st.lists(st.sampled_from([50, 100, 200]), max_size=4)) for _ in range(ns)]
    trunks = []
    for a in range(ns):
        for b in range(a + 1, ns):
            for _ in range(draw(st.integers(0, 2))):
                trunks.append((a, b, draw(st.sampled_from([100, 150, 200, 300]))))
    used = {f"t{k}": float(draw(st.sampled_from([0, 50, 100]))) for k in range(len(trunks))}
    m = draw(st.integers(2, 6))
    return _fabric(hosts, trunks), used, m


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_hub_bound_is_sound_against_cpsat(case):
    """Whenever CP-SAT maps the LAN, the bound is at least its degree; whenever the bound
    is below it, CP-SAT proves no mapping exists, and the default says ``infeasible`` with
    the hub's reason (the referee: the exact method, every mapping checked)."""
    ptop, used, m = case
    top = g.lan(m, bw=100)
    pr = build_problem(top, ptop, trunk_used=used)
    bound = hub_bound(pr, pr.vidx["lan0"])
    if bound is None:  # (no host fast enough: no candidate, proven by the default already)
        assert not all(pr.cand[v] for v in range(pr.nv))
        assert tb.assign(top, ptop, seed=0).reason["constraint"] == "no_candidate"
        return
    exact = tb.assign(top, ptop, "exact", trunk_used=used, time_limit=20)
    assert exact.status in ("optimal", "infeasible")
    if exact.success:
        assert tb.verify_mapping(top, ptop, exact.mapping, exact.routes).ok
        assert bound >= m
    if bound < m:
        assert exact.status == "infeasible"
        d = tb.assign(top, ptop, seed=0, trunk_used=used)
        assert d.status == "infeasible" and not d.success
        assert d.reason["constraint"] in ("hub_bandwidth", "capacity", "no_candidate")


def test_grid5000_vlan_beyond_the_uplinks_is_infeasible():
    """A VLAN of 21 nodes on the empty Grid'5000-like fabric of the bench (clusters of 16
    behind 40 Gb/s uplinks, 10 Gb/s per node): 16 + 4 at most; proven, with the reason."""
    ptop = g.grid5000(3, 2, 16, backbone_bw=40 * g.GBIT, uplink_bw=40 * g.GBIT, seed=0)
    r = tb.assign(g.lan(21, bw=10 * g.GBIT), ptop, seed=0)
    assert r.status == "infeasible" and not r.success
    assert r.reason == {"constraint": "hub_bandwidth", "vnode": "lan0", "links": 21,
                        "bound": 20, "bandwidth": 10 * g.GBIT}  # fmt: skip
    assert "at most 20 of them" in r.message
    ok = tb.assign(g.lan(20, bw=10 * g.GBIT), ptop, seed=0)
    assert ok.success and tb.verify_mapping(g.lan(20, bw=10 * g.GBIT), ptop, ok.mapping,
                                            ok.routes).ok  # fmt: skip


def test_hub_bound_applies_only_where_it_is_sound():
    ptop = _fabric([[100, 100], [100]], [(0, 1, 100)])
    mixed = tb.parse_top(
        "node a pc\nnode b pc\nnode l lan\nlink x a l 100 0 0\nlink y b l 200 0 0\n"
    )
    pr = build_problem(mixed, ptop)
    assert hub_bound(pr, pr.vidx["l"]) is None  # two bandwidths
    shared = tb.parse_top("node a pc:0.5\nnode b pc\nnode l lan\nlink x a l 100 0 0\n"
                          "link y b l 100 0 0\n")  # fmt: skip
    pr = build_problem(shared, ptop)
    assert hub_bound(pr, pr.vidx["l"]) is None  # half a slot: two may share a host
    pr = build_problem(g.lan(3, bw=100), ptop)
    assert hub_bound(pr, pr.vidx["n0"]) is None  # a host node is no hub
    assert hub_proof(pr) is None  # 3 hosts, one trunk of 100: it maps


@pytest.mark.parametrize("trunk_free,bound", [(0, 2), (100, 3)])
def test_a_host_on_two_switches_counts_once(trunk_free, bound):
    """Host d has an interface on s0 and one on s1 (the exact model is not exact there, so
    the referee is the count by hand and the checker): a on s0, b on s1, one trunk with
    ``trunk_free`` left. At either switch d and the local host, plus b or a over the trunk
    when it carries one link: 2 or 3, never d twice. A LAN of the bound maps (checked), one
    more member is proven infeasible."""
    ptop = _fabric([[100], [100]], [(0, 1, 100)], dual=[(0, 1)])
    used = {"t0": 100.0 - trunk_free}
    pr = build_problem(g.lan(3, bw=100), ptop, trunk_used=used)
    assert hub_bound(pr, pr.vidx["lan0"]) == bound
    fits = g.lan(bound, bw=100)
    r = tb.assign(fits, ptop, seed=0, trunk_used=used)
    assert r.success and tb.verify_mapping(fits, ptop, r.mapping, r.routes).ok
    if bound < 3:
        over = tb.assign(g.lan(3, bw=100), ptop, seed=0, trunk_used=used)
        assert over.status == "infeasible" and over.reason["constraint"] == "hub_bandwidth"
