"""The exact method packs links into parallel trunks one by one, and routes as it packed.

Regression: the integer program used to bound a trunk GROUP's total free bandwidth only, so
its optimum could need more room on one trunk than there is; the router then failed and the
result said ``status="optimal"`` and ``success=True`` with no mapping.
"""

from __future__ import annotations

import pytest

import coalloc.testbed as tb

pytest.importorskip("ortools")


def _testbed(free0: float, free1: float, n_b: int) -> tb.PhysicalTopology:
    text = ("node sw0 switch:1\nnode sw1 switch:1\n"
            f"link t0 sw0 sw1 {free0:g} 0 0\nlink t1 sw0 sw1 {free1:g} 0 0\n"
            "node a pc:1 A:1\n" + "".join(f"link a{i} a sw0 2000 0 0\n" for i in range(4)) +
            "".join(f"node b{i} pc:1 B:1\nlink lb{i} b{i} sw1 2000 0 0\n"
                    for i in range(n_b)))  # fmt: skip
    return tb.parse_ptop(text)


def _experiment(bws) -> tb.VirtualTopology:
    return tb.parse_top("node x A\n" + "".join(
        f"node y{i} B\nlink l{i} x y{i} {bw:g} 0 0\n" for i, bw in enumerate(bws)))


def test_unpackable_links_are_infeasible_not_optimal():
    # two 2 Gb/s trunks with 0.5 Gb/s in use each: 1.5 Gb/s free on each, so at most two of
    # the three 1 Gb/s links fit (the group's total, 3 Gb/s, would take all three)
    ptop, top = _testbed(2000, 2000, 3), _experiment([1000, 1000, 1000])
    r = tb.assign(top, ptop, "exact", trunk_used={"t0": 500, "t1": 500})
    assert r.status == "infeasible" and not r.success and r.mapping is None
    for method in ("assign+", "anneal"):  # nobody maps it
        assert not tb.assign(top, ptop, method, trunk_used={"t0": 500, "t1": 500}).success


def test_routes_follow_the_models_packing():
    # 1.5 + 1.5 fit the 3 Gb/s trunk and 1 + 1 the 2 Gb/s one; the router alone (the
    # trunk with the most room first, largest links first) strands the last 1 Gb/s link
    ptop, top = _testbed(3000, 2000, 4), _experiment([1500, 1500, 1000, 1000])
    r = tb.assign(top, ptop, "exact")
    assert r.status == "optimal" and r.success
    rep = tb.verify_mapping(top, ptop, r.mapping, r.routes, claimed=r.interswitch_bandwidth)
    assert rep.ok, rep.violations
    assert r.interswitch_bandwidth == pytest.approx(5000)
    assert sorted(r.trunk_load.items()) == [("t0", 3000.0), ("t1", 2000.0)]
    assert not tb.assign(top, ptop, "assign+").success  # the greedy router's limit
