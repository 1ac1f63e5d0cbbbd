"""The replay bench against Emulab's assign (bench/testbed/vs_assign.py) without the binary:
its reading of assign's output, the trunk order it walks, the free testbed it writes, and a
replay of the package's own methods; the referee is ``verify_mapping``."""

from __future__ import annotations

import pytest
from bench.testbed import vs_assign as V

from coalloc import testbed as tb
from coalloc.testbed import generators as g

# hand-written in the shape Emulab's 2016 build prints (as seen on the DeterLab-like replay):
# the interfaces of an inter-switch path first and last, its trunks from the far end
PTOP = (
    "node s0 switch:1\nnode s1 switch:1\nnode s2 switch:1\n"
    "node a pc:1\nnode b pc:1\nnode c pc:1\n"
    "link t01 s0 s1 1000 0 0 ethernet\nlink t12 s1 s2 1000 0 0 ethernet\n"
    "link ea a:m0/eth0 s0 100 0 0 ethernet\nlink ea2 a s0 100 0 0 ethernet\n"
    "link eb b s2 100 0 0 ethernet\n"
    "link ec c s0 100 0 0 ethernet\n"
)
TOP = (
    "node x pc\nnode y pc\nnode z pc\nlink l1 x y 100 0 0 ethernet\nlink l2 x z 100 0 0 ethernet\n"
)
OUT = """BEST SCORE:  0.88 in 1002 iters and 0.001 seconds
With 0 violations
Nodes:
x a
y b
z c
End Nodes
Edges:
l1 interswitch  ea (m0,(null)) t12 ((null),(null)) t01 ((null),(null)) eb ((null),(null))
l2 intraswitch ea2 ((null),(null)) ec ((null),(null))
End Edges
End solution
"""


def test_parse_and_walk_give_routes_the_checker_accepts():
    ptop, top = tb.parse_ptop(PTOP), tb.parse_top(TOP)
    mapping, routes = V.parse_assign(OUT)
    assert mapping == {"x": "a", "y": "b", "z": "c"}
    assert routes["l1"] == ["ea", "t12", "t01", "eb"]  # as printed: not a walk
    assert not tb.verify_mapping(top, ptop, mapping, routes).ok
    walked = V._oriented(top, ptop, mapping, routes)
    assert walked["l1"] == ["ea", "t01", "t12", "eb"]
    rep = tb.verify_mapping(top, ptop, mapping, walked)
    assert rep.ok and rep.interswitch_bandwidth == 200  # 100 over two trunk hops


def test_direct_links_printed_twice_are_one_hop_and_failures_map_nothing():
    mapping, routes = V.parse_assign(
        "Nodes:\nx a\nunassigned: y\nEnd Nodes\nEdges:\n"
        "l direct d0 (m,(null)) d0 (m,(null))\nl2 Mapping Failed\nEnd Edges\n"
    )
    assert mapping == {"x": "a"} and routes == {"l": ["d0"]}
    assert V.walk_order(tb.parse_ptop(PTOP), "a", ["t12", "ea"]) == ["t12", "ea"]  # no walk


def test_typed_lines_and_the_free_testbed():
    ptop = g.deterlab(12, 2, seed=0)
    used = {"pc3000-0", "pc3000-1"}
    trunk = {"trunk-sw0-0": ptop.links["trunk-sw0-0"].bw}  # full: left out
    free = V.free_testbed(ptop, used, trunk)
    assert used.isdisjoint(free.nodes) and "trunk-sw0-0" not in free.links
    assert all(n in free.nodes for n, p in ptop.nodes.items() if p.is_switch)
    text = V._typed(tb.format_ptop(free), "ptop")
    assert all(len(line.split()) >= 8 for line in text.splitlines() if line.startswith("link"))
    again = tb.parse_ptop(text)
    assert sorted(again.links) == sorted(free.links)
    top_text = V._typed("link l a b 100 0 0 emulated\n", "top")
    assert top_text.split() == ["link", "l", "a", "b", "100", "0", "0", "ethernet", "emulated"]


@pytest.mark.slow
@pytest.mark.parametrize("name", V.GENERATORS)
def test_replay_of_our_methods_checks_every_mapping(name, tmp_path):
    """Without assign: the default and the annealer replay 12 experiments; every mapping
    was re-checked by verify_mapping inside the replay (none rejected)."""
    r = V.replay(name, None, 12, 0, [1], str(tmp_path))
    for m in ("default", "anneal"):
        assert r[m]["rejected_by_checker"] == 0
        assert 0 <= r[m]["failures"] < 12


def test_missing_binary_is_said(capsys, tmp_path):
    assert V.main(["--assign", str(tmp_path / "nope"), "--n", "1"]) == 2
    assert "assign binary not found" in capsys.readouterr().err


@pytest.mark.parametrize("sites,clusters,nodes,up", [(2, 1, 3, 2), (2, 2, 3, 1), (3, 1, 3, 2)])
def test_hub_bound_is_the_largest_lan_the_exact_method_maps(sites, clusters, nodes, up):
    """The bench's proof of impossibility on the empty testbed against CP-SAT: a LAN of the
    bound's size maps (exact: optimal), one more member is proven infeasible."""
    ptop = g.grid5000(sites, clusters, nodes, backbone_bw=up * 1000, uplink_bw=up * 1000)
    bound = V.hub_bound(g.lan(2, bw=1000), ptop, "lan0")
    assert bound is not None and 2 <= bound < sites * clusters * nodes
    fits = tb.assign(g.lan(bound, bw=1000), ptop, "exact", time_limit=20)
    assert fits.status == "optimal"
    assert tb.verify_mapping(g.lan(bound, bw=1000), ptop, fits.mapping, fits.routes).ok
    over = g.lan(bound + 1, bw=1000)
    assert tb.assign(over, ptop, "exact", time_limit=20).status == "infeasible"
    assert V.impossible_on_empty(over, ptop) is not None
    assert V.impossible_on_empty(g.lan(bound, bw=1000), ptop) is None


def test_hub_bound_does_not_apply_to_mixed_bandwidths():
    ptop = g.grid5000(2, 1, 3)
    top = tb.parse_top("node a pc\nnode b pc\nnode l lan\nlink x a l 100 0 0\nlink y b l 200 0 0\n")
    assert V.hub_bound(top, ptop, "l") is None
