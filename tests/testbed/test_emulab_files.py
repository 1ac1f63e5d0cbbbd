"""Files read as Emulab's ``assign`` reads them (issue 25, first part; issue 30 item 9).

Emulab's parser splits lines on white space and has no comments; the 8th token of a link
line is the link type (``80211``, ``ethernet``); a repeated physical link name is one more
link; an older ``BW MULTIPLICITY`` line stands for that many links; a ``.top`` link line
shorter than ``BW DELAY LOSS`` is a cut line.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import InstanceError
from coalloc import testbed as tb
from coalloc.cli import main


def test_hash_is_part_of_a_name_not_a_comment():
    ptop = tb.parse_ptop("# a comment line\nnode sw switch:1\nnode pc#1 pc:1\nnode pc2 pc:1\n"
                         "link link0#2 pc#1 sw 1000 0 0 ethernet\n"
                         "link link1#2 pc2 sw 1000 0 0 ethernet #not-a-comment\n")  # fmt: skip
    assert sorted(ptop.links) == ["link0#2", "link1#2"]
    assert ptop.links["link1#2"].types == ("ethernet", "#not-a-comment")
    top = tb.parse_top("node v#1 pc\nnode v2 pc\nlink l#0 v#1 v2 100 0 0 ethernet\n")
    r = tb.assign(top, ptop)
    assert r.success and r.routes["l#0"] and set(r.mapping) == {"v#1", "v2"}
    assert tb.verify_mapping(top, ptop, r.mapping, r.routes).ok


def test_repeated_physical_link_name_is_one_more_link():
    """As in Emulab's test_ugly.ptop: a PC wired twice under one link name has two links."""
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nnode b pc:1\nnode c pc:1\n"
                         "node d pc:1\nlink d-0 d sw 100 0 0\n"
                         "link a-0 a sw 100 0 0\nlink a-1 a sw 100 0 0\nlink a-1 a sw 100 0 0\n"
                         "link b-0 b sw 100 0 0\nlink c-0 c sw 100 0 0\n"
                         "link a-1#2 b sw 100 0 0\n")  # fmt: skip
    assert [lk.name for lk in ptop.interfaces("a")] == ["a-0", "a-1", "a-1#2"]
    assert ptop.links["a-1#2#2"].a == "b"  # an explicit name already taken moves on too
    top = tb.parse_top(
        "node hub pc\nnode x pc\nnode y pc\nnode z pc\n"
        "link l1 hub x 100 0 0\nlink l2 hub y 100 0 0\nlink l3 hub z 100 0 0\n"
    )
    for method in tb.METHODS:
        r = tb.assign(top, ptop, method, seed=1)
        assert r.success and r.mapping["hub"] == "a", method
        assert tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    # written back with the names it was given, and read back to the same testbed
    again = tb.parse_ptop(tb.format_ptop(ptop))
    assert tb.ptop_to_dict(again) == tb.ptop_to_dict(ptop)


def test_multiplicity_line_is_several_links():
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nnode b pc:1\n"
                         "link e a sw 100000 3\nlink f b sw 100000 1\n")  # fmt: skip
    assert [lk.name for lk in ptop.interfaces("a")] == ["e", "e#2", "e#3"]
    assert len(ptop.interfaces("b")) == 1 and ptop.links["e#3"].bw == 100000
    for bad in ("0", "1001", "1.5", "inf", "1e400", "2_0"):
        with pytest.raises(InstanceError, match="^p:3: expected the multiplicity"):
            tb.parse_ptop(f"node sw switch:1\nnode a pc:1\nlink e a sw 100000 {bad}\n", "p")


# ptop: one ethernet PC (a) and two 802.11 PCs (w1, w2) behind an air switch
WIRELESS = (
    "node sw switch:1\nnode air switch:1\nnode a pc:1\nnode w1 pc:1\nnode w2 pc:1\n"
    "link la a sw 100000 0 0 ethernet\nlink lw1 w1 air 54000 0 0 80211\n"
    "link lw2 w2 air 54000 0 0 80211\nlink t sw air 1000000 0 0 ethernet\n"
)


def test_link_type_80211_is_a_type_not_a_slot_count():
    ptop = tb.parse_ptop(WIRELESS)
    assert ptop.links["lw1"].types == ("80211",) and ptop.links["lw1"].slots is None
    top = tb.parse_top("node x pc\nnode y pc\nlink l x y 10000 0 0 80211\n")
    assert top.links["l"].type == "80211"


@pytest.mark.parametrize("method", list(tb.METHODS))
def test_ethernet_links_are_never_routed_over_80211(method):
    """With the one ethernet PC the only one free for an ethernet link's end, no method may
    put the link on the 802.11 PCs and call it valid."""
    ptop = tb.parse_ptop(WIRELESS)
    eth = tb.parse_top("node x pc\nnode y pc\nlink l x y 10000 0 0 ethernet\n")
    r = tb.assign(eth, ptop, method, seed=2)
    assert not r.success and r.mapping is None
    wifi = tb.parse_top("node x pc\nnode y pc\nlink l x y 10000 0 0 80211\n")
    r = tb.assign(wifi, ptop, method, seed=2)
    assert r.success and set(r.mapping.values()) == {"w1", "w2"}
    assert tb.verify_mapping(wifi, ptop, r.mapping, r.routes).ok


def test_verify_refuses_ethernet_over_80211():
    ptop = tb.parse_ptop(WIRELESS)
    eth = tb.parse_top("node x pc\nnode y pc\nlink l x y 10000 0 0 ethernet\n")
    mapping = {"x": "w1", "y": "w2"}
    rep = tb.verify_mapping(eth, ptop, mapping, {"l": ["lw1", "lw2"]})
    assert not rep.valid and {v["constraint"] for v in rep.violations} == {"link_type"}
    rep = tb.verify_mapping(eth, ptop, mapping)  # no routes: none found, never valid
    assert not rep.valid and rep.violations[0]["constraint"] == "links_unchecked"


@pytest.mark.parametrize("line, words", [
    ("set-type-limit pc inf", "type limit N"),
    ("set-type-limit pc 1e400", "type limit N"),
    ("set-type-limit pc 1_0", "type limit N"),
    ("set-type-limit pc 1.5", "type limit N"),
    ("set-type-limit pc \u0661", "type limit N"),
    ("set-type-limit pc 99999999999999999999999999999999999", "2**53"),
    ("node q pc:1e400", "slot count of type pc"),
    ("node q pc:1 - fast:inf", "weight of fast"),
    ("link l a sw 1e400 0 0 ethernet", "bandwidth"),
    ("link l a sw 100 nan 0 ethernet", "delay"),
    ("policy desire fast limit inf", "policy limit"),
])  # fmt: skip
def test_numbers_out_of_range_are_one_line_errors(tmp_path, capsys, line, words):
    """Issue 30 item 9: no OverflowError, no inf read as a count; CLI: one line, exit 2."""
    text = f"node sw switch:1\nnode a pc:1\nlink la a sw 100 0 0\n{line}\n"
    with pytest.raises(InstanceError, match=rf"^bed\.ptop:4: .*{re.escape(words)}"):
        tb.parse_ptop(text, "bed.ptop")
    p, t = tmp_path / "bed.ptop", tmp_path / "x.top"
    p.write_text(text)
    t.write_text("node x pc\n")
    assert main(["testbed", "assign", str(t), str(p)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bed.ptop:4:" in err[0], err


def test_inf_as_the_8th_token_is_a_link_type():
    """The 8th token is a type (``inf``, ``1e400`` included): no slot count, no crash."""
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nlink la a sw 100 0 0 inf 1e400\n")
    assert ptop.links["la"].types == ("inf", "1e400")


@pytest.mark.parametrize(
    "line",
    [
        "link l x y",
        "link l x y 100",
        "link l x y 100 0",
        "link l x y 100:1 0 0",
        "link l x y 100 0 0:1",
    ],
)
def test_cut_top_link_lines_are_errors(line):
    with pytest.raises(InstanceError, match=r"^exp\.top:3: expected "):
        tb.parse_top(f"node x pc\nnode y pc\n{line}\n", "exp.top")


@st.composite
def _typed_testbed(draw):
    """Up to 4 PCs on an ethernet switch and an air switch (joined by a trunk), each PC with
    ethernet and/or 802.11 interfaces (or none), some pairs joined by direct links; 1-3
    virtual nodes in a chain of typed links."""
    n = draw(st.integers(2, 4))
    lines = ["node sw switch:1", "node air switch:1", "link t sw air 1000000 0 0 ethernet"]
    for i in range(n):
        lines.append(f"node p{i} pc:1")
        kinds = draw(st.sampled_from([("ethernet",), ("80211",), ("ethernet", "80211"), ()]))
        for k, kind in enumerate(kinds):
            lines.append(f"link p{i}-{k} p{i} {'sw' if kind == 'ethernet' else 'air'} "
                         f"100000 0 0 {kind}")  # fmt: skip
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    for k, (i, j) in enumerate(draw(st.lists(st.sampled_from(pairs), max_size=3))):
        kind = draw(st.sampled_from(["ethernet", "80211"]))
        lines.append(f"link d{k} p{i} p{j} 100000 0 0 {kind}")
    nv = draw(st.integers(1, 3))
    top = "".join(f"node v{j} pc\n" for j in range(nv))
    for j in range(nv - 1):
        kind = draw(st.sampled_from(["ethernet", "80211", ""]))
        top += f"link e{j} v{j} v{j + 1} 1000 0 0 {kind}\n"
    return tb.parse_ptop("\n".join(lines) + "\n"), tb.parse_top(top)


def _brute_force(top, ptop):
    """The lowest inter-switch bandwidth of a valid mapping (routed by verify), or None."""
    pcs = [n for n, p in ptop.nodes.items() if not p.is_switch]
    names = list(top.nodes)
    best = None
    for choice in itertools.product(pcs, repeat=len(names)):
        rep = tb.verify_mapping(top, ptop, dict(zip(names, choice)))
        if rep.ok and (best is None or rep.interswitch_bandwidth < best):
            best = rep.interswitch_bandwidth
    return best


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(_typed_testbed(), st.integers(0, 2**31))
def test_link_types_every_method_against_verify_and_brute_force(case, seed):
    """Every mapping reported is valid by verify (link types on every hop). The exact
    method's "infeasible" and "optimal" hold against brute force; where its model is exact
    (hosts on one switch each, no direct links) it maps exactly when brute force does, and
    elsewhere it claims neither (status feasible or error, ``params["unproven"]``)."""
    ptop, top = case
    best = _brute_force(top, ptop)
    for method in tb.METHODS:
        r = tb.assign(top, ptop, method, seed=seed)
        if r.mapping is not None:
            assert tb.verify_mapping(top, ptop, r.mapping, r.routes).ok, method
        assert not r.success or best is not None, method
        if r.status == "infeasible":  # every method: only when proven
            assert best is None, method
        if method != "exact":
            continue
        if r.status == "optimal":
            assert r.interswitch_bandwidth <= best + 1e-9
        if "unproven" in r.params:
            # (a mapping with no inter-switch bandwidth meets the bound 0: proven anyway)
            if r.status == "optimal":
                assert r.interswitch_bandwidth == 0, r.status
            else:
                assert r.status in ("feasible", "error", "no_solution"), r.status
        else:
            assert r.success == (best is not None)


# hosts wired to one another (direct links) around one switch, as in Emulab's test_ugly:
# hub has no switch interface, only direct links to h1, h2 and h3; h1 and h2 also have one
# switch interface each (h1's under a repeated name), h3 and leaf only direct links
DIRECT = (
    "node sw switch:1\nnode hub pc:1\nnode h1 pc:1\nnode h2 pc:1\nnode h3 pc:1\n"
    "node leaf pc:1\nnode far pc:1\n"
    "link d1 hub h1 100 0 0\nlink d2 hub h2 100 0 0\nlink d3 hub h3 100 0 0\n"
    "link s1 h1 sw 100 0 0\nlink s1 h1 sw 100 0 0\nlink s2 h2 sw 100 0 0\n"
    "link d4 h3 leaf 100 0 0\nlink s3 far sw 100 0 0\n"
)
# a star of three around c, one arm (y) continuing to z: five of the seven hosts, so some
# of them are ones reached only over direct links
STAR = (
    "node c pc\nnode x pc\nnode y pc\nnode w pc\nnode z pc\n"
    "link l1 c x 100 0 0\nlink l2 c y 100 0 0\nlink l3 c w 100 0 0\nlink l4 y z 100 0 0\n"
)


@pytest.mark.parametrize("method", ["assign+", "anneal", "exact"])
def test_direct_host_links_are_mapped(method):
    """Issue 25: on a testbed whose hosts are wired to one another every method failed (a
    host without switch interface was scored as unreachable); the default, the annealer
    and the exact method map it, and verify accepts."""
    ptop, top = tb.parse_ptop(DIRECT), tb.parse_top(STAR)
    assert "s1#2" in ptop.links
    r = tb.assign(top, ptop, method, seed=1)
    assert r.success, (method, r.reason)
    assert tb.verify_mapping(top, ptop, r.mapping, r.routes).ok
    assert "direct" in r.kinds.values()


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 6), st.integers(0, 2**31), st.integers(0, 2**63))
def test_annealer_twins_agree_with_direct_links(size, gseed, seed):
    import numpy as np

    from coalloc.testbed import generators as g
    from coalloc.testbed.anneal import run_anneal
    from coalloc.testbed.problem import build_problem

    pr = build_problem(g.random_sparse(size, 1, seed=gseed), tb.parse_ptop(DIRECT))
    fast = {"t0": 10.0, "melt_moves": 60, "melt_accept": 0.95, "cooling": 0.7,
            "min_moves": 40, "t_stop": 0.05, "frozen": 3, "max_moves": 3000}  # fmt: skip
    a, b = run_anneal(pr, seed, fast, "compiled"), run_anneal(pr, seed, fast, "python")
    assert np.array_equal(a["where"], b["where"]) and a["score"] == b["score"]
    assert a["violations"] == b["violations"]


def test_a_search_that_finds_nothing_does_not_claim_infeasible():
    """The paper's assign+ finds nothing on the direct-link testbed, where a mapping exists:
    its status must not be "infeasible" (proven) but ``no_solution`` (the status rule: a
    method that ended by itself with neither an answer nor a proof; ``time_limit`` only
    when a time limit stopped it); a virtual node no node can take is."""
    ptop, top = tb.parse_ptop(DIRECT), tb.parse_top(STAR)
    r = tb.assign(top, ptop, "assign+.1", seed=1)
    assert not r.success and r.status == "no_solution"
    assert tb.assign(top, ptop, "exact").success
    r = tb.assign(tb.parse_top("node x pc3000\n"), ptop, "assign+.1")
    assert r.status == "infeasible" and r.reason["constraint"] == "no_candidate"


def test_repeated_virtual_link_name_is_one_more_link():
    top = tb.parse_top("node x pc\nnode y pc\nlink l x y 100 0 0\nlink l x y 100 0 0\n")
    assert sorted(top.links) == ["l", "l#2"]
    ptop = tb.parse_ptop(
        "node sw switch:1\nnode a pc:1\nnode b pc:1\nlink la a sw 100 0 0\n"
        "link la a sw 100 0 0\nlink lb b sw 100 0 0\nlink lb b sw 100 0 0\n"
    )
    r = tb.assign(top, ptop)
    assert r.success and set(r.routes) == {"l", "l#2"}
    assert tb.verify_mapping(top, ptop, r.mapping, r.routes).ok


def test_pigeonhole_capacity_failure_is_proven():
    """Four one-slot virtual nodes for two free PCs: assign+ proves it (status infeasible);
    the annealer, which only ran out of moves, does not."""
    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1\nnode b pc:1\n"
                         "link la a sw 100 0 0\nlink lb b sw 100 0 0\n")  # fmt: skip
    four = tb.parse_top("node x pc\nnode y pc\nnode z pc\nnode w pc\n")
    r = tb.assign(four, ptop, "assign+")
    assert r.status == "infeasible" and r.reason["constraint"] == "capacity"
    assert tb.assign(four, ptop, "exact").status == "infeasible"  # the referee agrees
    r = tb.assign(four, ptop, "anneal", max_moves=2000)
    assert r.status == "no_solution" and r.bound is None
