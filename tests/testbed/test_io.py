"""Readers and writers: .ptop/.top round trips, networkx, JSON and one clear error per bad line."""

from __future__ import annotations

import math

import pytest

from coalloc import InstanceError
from coalloc import testbed as tb
from coalloc.testbed import generators as g

PTOP = """\
# a small testbed
node sw0 switch:1 *lan:*
node sw1 switch:1 *lan:*
node pc1 pc:1 pcvm:10 - fast:0.5 ?+cpu:3000 *&os:0 - trivial_bw:400000
node pc2 pc3000:1 pc:1
link pc1:e0 pc1:00aa/eth0 sw0 1000000 0 0 ethernet
link pc2:e0 pc2 sw1:port4 100000 0 0 1
link t0 sw0 sw1 1000000 2 0.01 ethernet
set-type-limit pc3000 3
policy desire fast limit 2
"""
TOP = """\
make-vclass A 1.0 pc pc3000
node a A ?+cpu:500 fast:0.5
node b pcvm:2 subnode_of:a
node lan0 lan
link l1 a lan0 100000 0 0 ethernet emulated trivial_ok
link l2 b lan0 100000 5 0.1 nodelay fixsrciface:eth0
fix-node a pc1
node-hint b pc1
"""


def test_ptop_fields():
    t = tb.parse_ptop(PTOP)
    pc1 = t.nodes["pc1"]
    assert pc1.types == {"pc": 1, "pcvm": 10}
    assert t.nodes["sw0"].static == {"lan": math.inf} and t.nodes["sw0"].is_switch
    assert pc1.features == {"fast": 0.5, "?+cpu": 3000, "*&os": 0}
    assert pc1.flags == {"trivial_bw": "400000"}
    assert t.links["pc1:e0"].a_iface == "00aa/eth0" and t.links["pc1:e0"].types == ("ethernet",)
    assert t.links["t0"].delay == 2 and t.links["t0"].loss == 0.01
    # the 8th token is the link type (Emulab 2011-2016), even when it looks like a number
    assert t.links["pc2:e0"].types == ("1",) and t.links["pc2:e0"].slots is None
    # the older 'BW MULTIPLICITY' line (in a file written in that form): MULTIPLICITY links
    old = tb.parse_ptop("node sw0 switch:1\nnode pc2 pc:1\nlink old pc2 sw0 100000 1\n")
    assert old.links["old"].slots is None and old.links["old"].delay == 0
    assert t.type_limits == {"pc3000": 3} and t.policies["fast"] == ("limit", 2.0)
    assert [lk.name for lk in t.trunks()] == ["t0"]


def test_top_fields():
    v = tb.parse_top(TOP)
    assert v.vclasses["A"] == (1.0, ("pc", "pc3000"))
    assert v.allowed_types("a") == ("pc", "pc3000")
    assert v.nodes["b"].slots == 2 and v.nodes["b"].flags["subnode_of"] == "a"
    l1, l2 = v.links["l1"], v.links["l2"]
    assert l1.bw == 100000 and l1.type == "ethernet" and l1.emulated and l1.trivial_ok
    assert l2.type is None and l2.flags == {"nodelay"} and l2.options == {"fixsrciface": "eth0"}
    assert v.fixed == {"a": "pc1"} and v.hints == {"b": "pc1"}


@pytest.mark.parametrize("fmt", ["text", "dict", "networkx"])
def test_round_trips(fmt, tmp_path):
    t, v = tb.parse_ptop(PTOP), tb.parse_top(TOP)
    if fmt == "text":
        t2, v2 = tb.parse_ptop(tb.format_ptop(t)), tb.parse_top(tb.format_top(v))
    elif fmt == "dict":
        tb.write_instance(tmp_path / "i.json", v, t)
        v2, t2 = tb.read_instance(tmp_path / "i.json")
    else:
        t2, v2 = (
            tb.ptop_from_networkx(tb.ptop_to_networkx(t)),
            tb.top_from_networkx(tb.top_to_networkx(v)),
        )

    def canon(d):
        return {**d, "links": sorted(d["links"], key=lambda x: x["name"])}

    assert canon(tb.ptop_to_dict(t2)) == canon(tb.ptop_to_dict(t))
    assert canon(tb.top_to_dict(v2)) == canon(tb.top_to_dict(v))


def test_generated_round_trip(tmp_path):
    t = g.deterlab(30, 3, seed=2)
    tb.write_ptop(tmp_path / "x.ptop", t)
    assert tb.ptop_to_dict(tb.read_ptop(tmp_path / "x.ptop")) == tb.ptop_to_dict(t)


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("node a pc\nnode b\n", 2, "node NAME TYPE"),
        ("node a pc\nlink l a zz 100 0 0\n", 2, "defined node"),
        ("node a pc\nnode b pc\nlink l a b fast 0 0\n", 3, "bandwidth"),
        ("node a pc\nnode b pc\nlink l a b\n", 3, "link NAME A B BW"),
        ("node a pc\nnode b pc\nlink l a b 10 -1 0\n", 3, "the delay"),
        ("node a pc\nnode b pc\nlink l a b 100 0 0 ethernet bogus\n", 3, "link flag"),
        ("node a pc fast\n", 1, "NAME:WEIGHT"),
        ("node a pc fast:x\n", 1, "weight of fast"),
        ("nodes a pc\n", 1, "a line starting with node"),
        ("node a pc\nnode a pc\n", 2, "new node name"),
        ("node a pc\nfix-node b p\n", 2, "defined virtual node"),
    ],
)
def test_top_errors_name_file_and_line(text, line, words):
    with pytest.raises(InstanceError) as info:
        tb.parse_top(text, "exp.top")
    msg = str(info.value)
    assert msg.startswith(f"exp.top:{line}:") and words in msg, msg


@pytest.mark.parametrize(
    "text, line, words",
    [
        ("node sw switch:1\nlink l sw pc 100 0 0\n", 2, "defined node"),
        ("node sw switch:1 - a:1 - unique - c\n", 1, "two '-'"),
        ("node sw switch:1 - a:1 - fancy\n", 1, "node flag"),
        ("node sw switch:1 - a:1 - trivial_bw:x\n", 1, "trivial_bw"),
        ("node p pc:1\nnode q pc:1\nlink l p q 0 0 0\n", 3, "bandwidth > 0"),
        ("node p pc:x\n", 1, "slot count of type pc"),
        ("node p pc:1\nnode q pc:1\nlink l p q 100 0\n", 3, "multiplicity"),
        ("node p pc:1\nnode q pc:1\nlink l p q 100\n", 3, "BW DELAY LOSS TYPE"),
        ("set-type-limit pc inf\n", 1, "type limit N"),
        ("set-type-limit pc\n", 1, "set-type-limit TYPE N"),
        ("policy desire x maybe\n", 1, "policy desire"),
        ("node p pc:1\nnode q pc:1\nlink l p q -5 0 0\n", 3, "bandwidth"),
    ],
)
def test_ptop_errors_name_file_and_line(text, line, words):
    with pytest.raises(InstanceError) as info:
        tb.parse_ptop(text, "bed.ptop")
    msg = str(info.value)
    assert msg.startswith(f"bed.ptop:{line}:") and words in msg, msg


def test_model_validation_names_argument():
    with pytest.raises(ValueError, match="unknown node"):
        tb.VirtualTopology([tb.VNode("a", "pc")], [tb.VLink("l", "a", "b", 1)])
    with pytest.raises(ValueError, match="bandwidth"):
        tb.PLink("l", "a", "b", -1)
    with pytest.raises(ValueError, match="unknown flags"):
        tb.VLink("l", "a", "b", 1, flags={"wrong"})
    with pytest.raises(TypeError, match="ptop"):
        tb.assign(tb.parse_top("node a pc"), 42)


def test_generators_give_valid_inputs():
    t = g.grid5000(2, 2, 4, seed=3)
    assert len(t.switches) == 2 + 4 and len(t.trunks()) == 1 + 4
    for top in (g.lan(4), g.tree(2, 2), g.ring(5), g.dumbbell(2, 3), g.random_sparse(9, 3, seed=1)):
        assert top.nodes and all(top.degree(v) >= 1 for v in top.nodes)
        assert tb.top_to_dict(tb.parse_top(tb.format_top(top))) == tb.top_to_dict(top)
    wl = g.workload(5, seed=2)
    assert [w[0] for w in wl] == sorted(w[0] for w in wl)
    r = tb.assign(g.ring(6), t)  # Grid'5000-like nodes have one interface: a ring cannot map
    assert not r.success and "interfaces" in r.reason["why"]["n0"]
    r = tb.assign(g.lan(6), t)
    assert r.success
    assert tb.verify_mapping(g.lan(6), t, r.mapping, r.routes).ok


def test_top_links_of_2003_and_cut_lines():
    """2003 files omit the type (7 tokens); a line with fewer is a cut line, an error (it
    was read as an older 4- or 5-field line)."""
    v = tb.parse_top(
        "node a pc\nnode b pc\nlink l1 a b 100000 0 0\n"
        "link l3 a b 10 1 0.5 trivial_ok\nlink l4 a b 10:5:20 1:0:0:2 0 80211\n"
    )
    assert (v.links["l1"].bw, v.links["l1"].delay, v.links["l1"].type) == (100000, 0, None)
    assert v.links["l3"].loss == 0.5 and v.links["l3"].trivial_ok and v.links["l3"].type is None
    assert (v.links["l4"].bw, v.links["l4"].delay, v.links["l4"].type) == (10, 1, "80211")
    for cut in ("link l1 a b 100000", "link l2 a b 1000 5", "link l2 a b 1000 5 ethernet"):
        with pytest.raises(InstanceError, match=r"^x\.top:3: expected "):
            tb.parse_top(f"node a pc\nnode b pc\n{cut}\n", "x.top")
