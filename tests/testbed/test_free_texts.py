"""Free-testbed texts read one after the other (a replay's file workflow): the line memo of
the ``.ptop`` reader and the per-testbed tables reused across texts give exactly what a cold
read and a cold build give."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from bench.testbed import vs_assign as V

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed import io as tbio
from coalloc.testbed import model as tbm
from coalloc.testbed import problem as tbp
from coalloc.testbed import routing as tbr
from coalloc.testbed import verify as tbv
from coalloc.testbed.io import InstanceError, fast, grammar

from ._slow_twins import tables_reference
from .test_io_speed import _canon, _table_only


def _states(ptop, k: int, seed: int):
    """``k`` free-testbed texts of ``ptop``: random PCs in use, random trunk loads (some
    trunks used up, so that they are left out of the text)."""
    rng = random.Random(seed)
    pcs = [n for n, x in ptop.nodes.items() if not x.is_switch]
    trunks = [lk.name for lk in ptop.links.values()
              if ptop.nodes[lk.a].is_switch and ptop.nodes[lk.b].is_switch]  # fmt: skip
    for _ in range(k):
        used = set(rng.sample(pcs, rng.randrange(0, len(pcs))))
        load = {}
        for t in rng.sample(trunks, rng.randrange(0, len(trunks) + 1)):
            bw = ptop.links[t].bw
            load[t] = bw if rng.random() < 0.3 else round(bw * rng.random(), 3)
        yield V._typed(tb.format_ptop(V.free_testbed(ptop, used, load)), "ptop")


FABRICS = {
    "deterlab": lambda: g.deterlab(60, 3, seed=2),
    "grid5000": lambda: g.grid5000(
        2, 2, 6, backbone_bw=40 * g.GBIT, uplink_bw=20 * g.GBIT, seed=3
    ),  # fmt: skip
}


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_warm_line_memo_reads_as_the_table(fabric):
    tbio.clear_read_cache()
    texts = list(_states(FABRICS[fabric](), 12, seed=len(fabric)))
    warm = [_canon(grammar.parse(t, "f", "ptop")) for t in texts]  # memo filled as it goes
    assert len(fast._line_memo) > 0
    with _table_only():
        cold = [_canon(grammar.parse(t, "f", "ptop")) for t in texts]
    assert warm == cold


def _error(text: str) -> str:
    with pytest.raises(InstanceError) as exc:
        grammar.parse(text, "f", "ptop")
    return str(exc.value)


def test_top_lines_are_read_as_top_lines_and_not_remembered():
    """The memo is the .ptop's: a .top line with the text of a remembered .ptop line is a
    virtual node or link, and a .top read adds nothing to the memo."""
    tbio.clear_read_cache()
    text = "node a pc:1\nnode b pc:1\nlink l a b 100 0 0\n"
    ptop = tb.parse_ptop(text)
    assert type(ptop.nodes["a"]) is tb.PNode and "node a pc:1" in fast._line_memo
    held = dict(fast._line_memo)
    top = tb.parse_top(text)
    assert type(top.nodes["a"]) is tb.VNode and top.nodes["a"].slots == 1.0
    assert type(top.links["l"]) is tb.VLink and top.links["l"].type is None
    assert fast._line_memo == held


def test_remembered_lines_out_of_place_are_refused_as_cold():
    """Lines the memo holds, put where they are wrong (a node twice, a link before its
    ends, a link with no node), give the cold reader's refusal."""
    text = next(_states(g.deterlab(20, 2, seed=1), 1, seed=0))
    lines = text.splitlines()
    node = next(x for x in lines if x.startswith("node") and "switch" not in x)
    link = next(x for x in lines if x.startswith("link"))
    bad = [
        "\n".join(lines + [node]),  # a node defined twice
        "\n".join([link] + lines),  # a link before its ends
        "\n".join([x for x in lines if x != node]),  # a link naming a node not defined
    ]
    tbio.clear_read_cache()
    cold = [_error(b) for b in bad]
    grammar.parse(text, "f", "ptop")  # every line of the text remembered
    assert all(x in fast._line_memo for x in lines if x.split())
    assert [_error(b) for b in bad] == cold
    # a repeated link name: the second is NAME#2, as the cold reader names it
    twice = text + link + "\n"
    tbio.clear_read_cache()
    first = _canon(grammar.parse(twice, "f", "ptop"))
    grammar.parse(text, "f", "ptop")
    assert _canon(grammar.parse(twice, "f", "ptop")) == first


def _answer(r) -> tuple:
    return (
        r.status,
        r.success,
        r.mapping,
        r.routes,
        r.kinds,
        r.score,
        r.objective,
        r.interswitch_bandwidth,
        r.trunk_load,
        r.reason,
    )


def _cold() -> None:
    tbio.clear_read_cache()
    tbp._node_facts.clear()
    tbp._host_memo.clear()
    tbr._row_memo.clear()
    tbp._row_memo.clear()
    tbv._node_views.clear()


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_free_texts_read_in_turn_map_as_cold(fabric):
    """The file workflow (each state's text read by a warm process after the earlier ones,
    every memo and table cache warm) gives the answers of a cold process reading that text
    alone, on random states (trunks partly used or used up) of two generators."""
    ptop = FABRICS[fabric]()
    rng = random.Random(7)
    experiments = [g.ring(3), g.tree(2, 2), g.lan(5), g.ring(6)]
    if fabric == "grid5000":
        experiments = [g.lan(m, bw=10 * g.GBIT) for m in (2, 4, 7, 12)]
    texts = list(_states(ptop, 10, seed=11))
    jobs = [(t, experiments[rng.randrange(len(experiments))], rng.randrange(100))
            for t in texts]  # fmt: skip
    _cold()
    warm = [_answer(tb.assign(top, tb.parse_ptop(t), "assign+", seed=s)) for t, top, s in jobs]
    cold = []
    for t, top, s in jobs:
        _cold()
        cold.append(_answer(tb.assign(top, tb.parse_ptop(t), "assign+", seed=s)))
    assert warm == cold
    assert any(a[1] for a in warm)  # (some map: the comparison covers routes too)


def test_node_facts_are_the_nodes_own():
    """The memoized per-node facts of the tables equal the node's fields derived afresh."""
    _cold()
    for text in _states(g.deterlab(30, 2, seed=4), 3, seed=5):
        ptop = tb.parse_ptop(text)
        T = tbp._testbed_part(ptop)
        for i, node in enumerate(ptop.nodes.values()):
            kinds = {k: tbm.feature_kind(k) for k in node.features}
            local = [w for k, w in node.features.items() if kinds[k] == "local"]
            assert T["kinds"][i] == kinds
            assert T["local_weight"][i] == float(sum(local))
            assert T["feature_count"][i] == len(local)
            if T["sigs"][i][0] != "own":
                assert T["sigs"][i][:3] == (tuple(sorted(node.types.items())),
                                            tuple(sorted(node.static.items())),
                                            tuple(sorted(node.features.items())))  # fmt: skip


def _tables(T: dict) -> dict:
    out = {k: T[k] for k in ("tgroups", "tcap", "tlinks", "direct", "type_names")}
    for k in ("pswitch", "pifaces", "pifbw", "cap", "tweight", "static"):
        out[k] = T[k].tolist()
    out["iface_types"] = [dict(x) for x in T["iface_types"]]
    return out


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_tables_of_texts_read_in_turn_are_the_straight_loops(fabric):
    """The interface, home switch and trunk tables of free texts read in turn (host facts
    memoized across texts) equal the one-pass loop they replaced, on every state."""
    _cold()
    for text in _states(FABRICS[fabric](), 8, seed=21):
        ptop = tb.parse_ptop(text)
        assert _tables(tbp._testbed_part(ptop)) == tables_reference(ptop)


def test_tables_of_direct_links_and_emulab_files_are_the_straight_loops():
    """Hosts joined to hosts (direct links), several interfaces to several switches, link
    types: the tables equal the one-pass loop's, cold and warm."""
    texts = [
        "node sw1 switch:1\nnode sw2 switch:1\nnode a pc:1\nnode b pc:1\nnode c pc:1\n"
        "link t1 sw1 sw2 1000 0 0\nlink t2 sw2 sw1 500 0 0\nlink d a b 100 0 0 80211\n"
        "link a1 a sw2 100 0 0\nlink a2 a sw1 100 0 0\nlink b1 b sw1 1000 0 0 ethernet\n"
        "link c1 c sw2 100 0 0\nlink c2 c sw2 100 0 0\nlink c3 c sw1 100 0 0\n"
        "node e pc:1\nlink e1 e sw1 100 0 0\nlink e2 e sw2 100 0 0\n",
    ]
    data = Path(__file__).parent / "data"
    texts += [p.read_text() for p in sorted(data.rglob("*.ptop"))]
    for text in texts:
        try:
            tbio.clear_read_cache()
            ptop = tb.parse_ptop(text)
        except InstanceError:
            continue
        for _ in range(2):  # cold, then the host facts remembered
            tbio.clear_read_cache()
            ptop = tb.parse_ptop(text)
            assert _tables(tbp._testbed_part(ptop)) == tables_reference(ptop)


def _assert_router_rows(pr, ptop) -> None:
    """The router's interface rows of every node equal its own links read straight."""
    ifaces = tbr._route_tables(pr)[0]
    for p, name in enumerate(pr.pnames):
        rows = [(lk.name, pr.sidx[o], lk.bw, lk.types or ("ethernet",))
                for lk in ptop.interfaces(name)
                for o in [lk.b if lk.a == name else lk.a] if o in pr.sidx]  # fmt: skip
        assert ifaces[p] == (tuple(zip(*rows)) if rows else ((), (), (), ()))


@pytest.mark.parametrize("fabric", sorted(FABRICS))
def test_router_and_checker_tables_of_texts_read_in_turn(fabric):
    """The router's interface rows and the checker's view of free texts read in turn (rows
    and node views memoized across texts) are those of each text's own interfaces and
    nodes, and the checker's reports on a mapping are a cold process's."""
    _cold()
    top = g.ring(4)
    for k, text in enumerate(_states(FABRICS[fabric](), 8, seed=31)):
        ptop = tb.parse_ptop(text)
        pr = tbp.build_problem(top, ptop)
        _assert_router_rows(pr, ptop)
        switches, additive, negative, links, tsig = tbv._testbed_tables(ptop)
        assert links.get("no such link") is None
        for name, lk in ptop.links.items():
            trunk = ptop.nodes[lk.a].is_switch and ptop.nodes[lk.b].is_switch
            assert links[name] == (lk.a, lk.b, lk.bw, lk.types or ("ethernet",), trunk)
        for name, node in ptop.nodes.items():
            assert additive[name] == [(f, c) for f, c in node.features.items() if f[:2] == "?+"]
            assert negative[name] == [(f, c) for f, c in additive[name] if c < -1e-6]
        same = {(tuple(n.types.items()), tuple(n.static.items())) for n in ptop.nodes.values()}
        assert len(set(tsig.values())) == len(same)
        r = tb.assign(top, ptop, "assign+", seed=k)
        if r.success:
            warm = tb.verify_mapping(top, ptop, r.mapping, r.routes)
            _cold()
            cold = tb.verify_mapping(top, tb.parse_ptop(text), r.mapping, r.routes)
            assert (warm.ok, warm.interswitch_bandwidth, warm.trunk_load) == (
                cold.ok, cold.interswitch_bandwidth, cold.trunk_load)  # fmt: skip


def test_remembered_lines_under_switches_in_another_order():
    """The same node and link lines (the same objects, from the line memo) in a text that
    lists the switches in another order: the switch indices are that text's own."""
    a = "node sw1 switch:1\nnode sw2 switch:1\n"
    b = "node sw2 switch:1\nnode sw1 switch:1\n"
    rest = ("node h pc:1\nnode k pc:1\nlink h1 h sw2 100 0 0\nlink h2 h sw1 100 0 0\n"
            "link k1 k sw2 100 0 0\nlink t sw1 sw2 1000 0 0\n")  # fmt: skip
    _cold()
    for text in (a + rest, b + rest, a + rest):
        ptop = tb.parse_ptop(text)
        pr = tbp.build_problem(g.ring(2), ptop)
        _assert_router_rows(pr, ptop)
        assert _tables(tbp._testbed_part(ptop)) == tables_reference(ptop)
    assert ptop.nodes["h"] is tb.parse_ptop(b + rest).nodes["h"]  # (the memo did serve)
