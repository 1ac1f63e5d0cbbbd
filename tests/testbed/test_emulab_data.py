"""Emulab's own test files, unedited, read as ``assign`` reads them (issue 25, deliverable 1).

The expectations come from the raw text, split on spaces as Emulab's parser splits it (an
independent reading, not the package's reader): every link line is one link (a repeated
name one more), the tokens after LOSS are the link's types, ``node:mac`` ends keep their
MAC, features and desires keep their weights.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coalloc import testbed as tb

DATA = Path(__file__).parent / "data" / "emulab"
PTOPS = sorted(p.name for p in DATA.glob("*.ptop"))
TOPS = sorted(p.name for p in DATA.glob("*.top"))


def _lines(name: str):
    for raw in (DATA / name).read_text().splitlines():
        tok = [t for t in raw.split(" ") if t]  # Emulab's split_line: on spaces only
        if tok:
            yield tok


def test_the_files_are_the_upstream_files():
    """Unedited: the sizes and first lines of the upstream files (README.md says where)."""
    sizes = {p.name: p.stat().st_size for p in DATA.iterdir() if p.suffix != ".md"}
    assert sizes == {"dtest.ptop": 845, "dtest.top": 102, "test.ptop": 303, "test.top": 120,
                     "test2.ptop": 701, "test2a.top": 130, "test_ugly.ptop": 778,
                     "test_ugly.top": 367}  # fmt: skip
    assert "link l2 pa S 100 0 0 ethernet \n" in (DATA / "test.ptop").read_text()


@pytest.mark.parametrize("name", PTOPS)
def test_ptop_links_nodes_and_types_as_in_the_text(name):
    ptop = tb.read_ptop(DATA / name)
    link_lines = [t for t in _lines(name) if t[0] == "link"]
    node_lines = [t for t in _lines(name) if t[0] == "node"]
    assert len(ptop.links) == len(link_lines)  # a repeated name is one more link
    assert list(ptop.nodes) == [t[1] for t in node_lines]
    for lk, tok in zip(ptop.links.values(), link_lines):
        assert lk.name == tok[1] or lk.name.startswith(tok[1] + "#")
        src, _, smac = tok[2].partition(":")
        dst, _, dmac = tok[3].partition(":")
        assert (lk.a, lk.b, lk.a_iface, lk.b_iface) == (src, dst, smac, dmac)
        assert (lk.bw, lk.delay, lk.loss) == tuple(float(x) for x in tok[4:7])
        assert lk.types == tuple(tok[7:])  # the 8th token is a type, whatever it looks like
    for node, tok in zip(ptop.nodes.values(), node_lines):
        types = tok[2 : tok.index("-") if "-" in tok else None]
        assert dict(node.types) == {t.split(":")[0]: float(t.split(":")[1]) for t in types}
        feats = tok[tok.index("-") + 1 :] if "-" in tok else []
        assert dict(node.features) == {f.split(":")[0]: float(f.split(":")[1]) for f in feats}


@pytest.mark.parametrize("name", TOPS)
def test_top_nodes_links_desires_as_in_the_text(name):
    top = tb.read_top(DATA / name)
    link_lines = [t for t in _lines(name) if t[0] == "link"]
    node_lines = [t for t in _lines(name) if t[0] == "node"]
    assert [(n.name, n.type) for n in top.nodes.values()] == [(t[1], t[2]) for t in node_lines]
    for node, tok in zip(top.nodes.values(), node_lines):
        assert dict(node.desires) == {d.split(":")[0]: float(d.split(":")[1]) for d in tok[3:]}
    assert [(lk.name, lk.a, lk.b, lk.bw, lk.type) for lk in top.links.values()] == [
        (t[1], t[2], t[3], float(t[4]), t[7] if len(t) > 7 else None) for t in link_lines
    ]


def test_the_particular_lines_of_the_files():
    ugly = tb.read_ptop(DATA / "test_ugly.ptop")
    # 'link three-1 three switch' twice: two interfaces of 'three', as assign counts them
    assert [lk.name for lk in ugly.interfaces("three")] == ["three-0", "three-1", "three-1#2",
                                                            "a-0", "b-0"]  # fmt: skip
    assert ugly.links["tri1-1"].a == "tri2" and not ugly.nodes["tri2"].is_switch  # direct
    test = tb.read_ptop(DATA / "test.ptop")
    assert test.links["l7"].types == ("80211",) and test.links["l2"].types == ("ethernet",)
    trunk = tb.read_ptop(DATA / "test2.ptop").links["switch_a-switch_b"]
    assert (trunk.bw, trunk.types) == (400.0, ("1",))
    assert tb.read_ptop(DATA / "dtest.ptop").nodes["m1"].features == {"special": 0.2}
    assert tb.read_top(DATA / "dtest.top").nodes["A"].desires == {"special": 0.5}
    # test.top's links are typed ethernet: pd (80211 only) can host none of them
    r = tb.assign(tb.read_top(DATA / "test.top"), test, seed=1)
    assert r.success and "pd" not in r.mapping.values()
    assert tb.verify_mapping(tb.read_top(DATA / "test.top"), test, r.mapping, r.routes).ok
