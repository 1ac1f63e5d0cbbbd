"""The readers' fast paths read what the line table reads (issue 25, deliverable 4).

Plain node and link lines are read by the one fast path (built from their text alone,
remembered for ``.ptop`` texts), and the models are built from what the reader checked
(each value checked once). The referee here is the line table alone, with the models' full
constructors: every text, plain or faulty, must give an identical model or the identical
error. A testbed text
read again is the same object (its compiled tables reused).
"""

from __future__ import annotations

import contextlib
import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import InstanceError
from coalloc import testbed as tb
from coalloc._shared.caches import cache_of
from coalloc.testbed import generators as g
from coalloc.testbed import io as tbio
from coalloc.testbed.io import cache, grammar


@contextlib.contextmanager
def _table_only():
    """The reader with no fast path (no plain-line builders, no line memo) and the models
    built by their checking constructors."""
    saved = dict(grammar._FILES)
    slow = {file: dataclasses.replace(kind, plain={}, memo=None) for file, kind in saved.items()}
    slow["ptop"] = dataclasses.replace(slow["ptop"], build=lambda r: tb.PhysicalTopology(
        r.nodes, r.links, type_limits=r.limits, policies=r.policies))  # fmt: skip
    slow["top"] = dataclasses.replace(slow["top"], build=lambda r: tb.VirtualTopology(
        r.nodes, r.links, vclasses=r.vclasses, fixed=r.fixed, hints=r.hints))  # fmt: skip
    grammar._FILES.update(slow)
    try:
        yield
    finally:
        grammar._FILES.update(saved)


def _canon(topo) -> tuple:
    if isinstance(topo, tb.PhysicalTopology):
        nodes = [(n.name, dict(n.types), dict(n.static), dict(n.features), dict(n.flags))
                 for n in topo.nodes.values()]  # fmt: skip
        links = [(lk.name, lk.a, lk.b, lk.bw, lk.delay, lk.loss, lk.types, lk.a_iface,
                  lk.b_iface, lk.slots, type(lk.bw), type(lk.delay), type(lk.loss))
                 for lk in topo.links.values()]  # fmt: skip
        extra = (dict(topo.type_limits), dict(topo.policies),
                 {n: [lk.name for lk in topo.interfaces(n)] for n in topo.nodes})  # fmt: skip
    else:
        nodes = [(n.name, n.type, n.slots, dict(n.desires), dict(n.flags), type(n.slots))
                 for n in topo.nodes.values()]  # fmt: skip
        links = [(lk.name, lk.a, lk.b, lk.bw, lk.delay, lk.loss, lk.type, lk.flags,
                  dict(lk.options)) for lk in topo.links.values()]  # fmt: skip
        extra = (dict(topo.vclasses), dict(topo.fixed), dict(topo.hints),
                 {n: [lk.name for lk in topo.incident(n)] for n in topo.nodes})  # fmt: skip
    return nodes, links, extra, [list(vars(x)) for x in [*topo.nodes.values(),
                                                          *topo.links.values()]]  # fmt: skip


def _outcome(kind: str, text: str):
    parse = tb.parse_ptop if kind == "ptop" else tb.parse_top
    tbio.clear_read_cache()
    try:
        return ("ok", _canon(parse(text, "f")))
    except InstanceError as exc:
        return ("error", str(exc))


def _same_as_the_table(kind: str, text: str) -> None:
    fast = _outcome(kind, text)
    with _table_only():
        slow = _outcome(kind, text)
    assert fast == slow, text


BASES = [
    ("ptop", tb.format_ptop(g.deterlab(24, 3, seed=2))),
    ("ptop", tb.format_ptop(g.grid5000(seed=1))),
    ("ptop", "node sw switch:1 *lan:*\nnode a pc:1 pcvm:* - ?+mem:512 fast:0.5 - trivial_bw:9\n"
             "node b pc:2 - special:1\nlink la a:eth0/e0 sw 100000 0 0 ethernet\n"
             "link la a sw 100000 1 0.5 ethernet 80211\nlink lb b sw 1000 2 0\n"
             "link ab a b 100 0 0 ethernet\nset-type-limit pc 2\n"
             "policy desire special limit 2\n"),
    ("ptop", "node sw switch:1\nnode a pc:1\nnode b pc:1\nlink m a sw 100000 3\n"
             "link n b sw 1000 1\nlink o a b 100 2\n"),  # the older BW MULTIPLICITY form
    ("top", tb.format_top(g.random_topology(12, seed=3, p_typed=0.5, p_desire=0.5))),
    ("top", "make-vclass big 0.5 pc pc3000\nnode x big ?+mem:256 fast:0.5\nnode y pc:2\n"
            "node z pc subnode_of:x disallow_trivial_mix\nnode lan lan\n"
            "link l1 x y * 0 0 ethernet nodelay\nlink l1 y z 100:10:20 0 0 trivial_ok\n"
            "link l3 x lan 100 0 0 80211 nodelay fixsrciface:e0\nfix-node x a\n"
            "node-hint y b\n"),
]  # fmt: skip
TOKENS = ["0", "-1", "1e400", "inf", "nan", "*", ":", "x:y", "1.5", "#", "1_0", "100000",
          "a:b:c", "-", "?+mem:3", "emulated", "trivial_ok", "ethernet", "sw", "a", "x", "y",
          "pc:1", "*lan:*", "unique", "trivial_bw:x", "1e15", "1000000000000001", "\u0663",
          "fixsrciface:e", "node", "link", "", "-0", ".5", "5.", "0x10"]  # fmt: skip


def _mutate(rng: random.Random, text: str) -> str:
    lines = text.splitlines()
    for _ in range(rng.randint(1, 3)):
        j = rng.randrange(len(lines))
        tok = lines[j].split(" ")
        op = rng.randrange(5)
        if op == 0 and len(tok) > 1:
            del tok[rng.randrange(len(tok))]
        elif op == 1:
            tok.insert(rng.randrange(len(tok) + 1), rng.choice(TOKENS))
        elif op == 2:
            tok[rng.randrange(len(tok))] = rng.choice(TOKENS)
        elif op == 3:
            lines.insert(rng.randrange(len(lines) + 1), lines[rng.randrange(len(lines))])
            continue
        else:
            tok = tok[: rng.randrange(len(tok) + 1)]
        lines[j] = " ".join(tok)
    return "\n".join(lines)


@pytest.mark.parametrize("kind, text", BASES)
def test_plain_texts_read_as_the_table_reads_them(kind, text):
    _same_as_the_table(kind, text)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(BASES) - 1), st.integers(0, 2**32 - 1))
def test_mutated_texts_give_the_tables_model_or_error(base, seed):
    kind, text = BASES[base]
    _same_as_the_table(kind, _mutate(random.Random(seed), text))


def test_emulab_files_read_as_the_table_reads_them():
    from pathlib import Path

    for path in sorted((Path(__file__).parent / "data" / "emulab").glob("*top")):
        _same_as_the_table(path.suffix[1:], path.read_text())


@pytest.mark.parametrize("text, lineno", [
    ("node sw switch:1\nnode a pc:1\nlink l a a 100 0 0\nlink m a sw 100 0 0\n", 3),
    ("node sw switch:1\nnode a pc:1\nlink m a sw 100 0 0\nlink l a:e0 a:e1 100 0 0\n", 4),
])  # fmt: skip
def test_a_self_loop_is_refused_at_its_own_line(text, lineno):
    joins = "link 'l' joins 'a' to itself$"
    with pytest.raises(InstanceError, match=rf"^p:{lineno}: physical {joins}"):
        tb.parse_ptop(text, "p")
    with pytest.raises(InstanceError, match=rf"^t:{lineno}: virtual {joins}"):
        tb.parse_top(text.replace("switch:1", "lan").replace(" pc:1", " pc"), "t")


def test_the_same_text_is_the_same_testbed_and_its_tables_are_reused():
    text = tb.format_ptop(g.deterlab(40, 2, seed=9))
    tbio.clear_read_cache()
    first = tb.parse_ptop(text)
    top = g.random_topology(6, seed=1)
    r1 = tb.assign(top, first, seed=3)
    tables = cache_of(first)["tables"]
    again = tb.parse_ptop(text, "another name")
    assert again is first and cache_of(again)["tables"] is tables
    r2 = tb.assign(top, again, seed=3)
    assert (r1.mapping, r1.routes) == (r2.mapping, r2.routes)
    assert tb.verify_mapping(top, again, r2.mapping, r2.routes).ok
    # another text (one more space) is another object, equal in content
    other = tb.parse_ptop(text.replace("\n", " \n", 1))
    assert other is not first and _canon(other) == _canon(first)
    assert "tables" not in cache_of(other)
    # a failed read is not remembered; the cache is bounded
    with pytest.raises(InstanceError):
        tb.parse_ptop(text + "link bad\n")
    for k in range(tbio.READ_CACHE_SIZE + 2):
        tb.parse_ptop(text + f"node extra{k} pc:1\n")
    assert len(cache._recent) == tbio.READ_CACHE_SIZE
    assert tb.parse_ptop(text) is not first  # pushed out by the later ones


def test_read_models_are_equal_to_the_constructors_and_pickle_alike():
    """Objects built from what the reader checked are the dataclasses the constructors
    build: equal, hashable alike, same repr, same pickle round trip."""
    import pickle

    ptop = tb.parse_ptop(BASES[2][1])
    for lk in ptop.links.values():
        built = tb.PLink(lk.name, lk.a, lk.b, lk.bw, lk.delay, lk.loss, lk.types, lk.a_iface,
                         lk.b_iface)  # fmt: skip
        assert built == lk and repr(built) == repr(lk) and hash(built) == hash(lk)
        assert pickle.loads(pickle.dumps(lk)) == lk
    for p in ptop.nodes.values():
        built = tb.PNode(p.name, dict(p.types), dict(p.static), dict(p.features), dict(p.flags))
        assert built == p and repr(built) == repr(p)
        with pytest.raises(TypeError):
            p.types["pc"] = 3  # read-only as the constructor makes it
    top = tb.parse_top("node x pc fast:0.5\nnode y pc\nlink l x y * 0 0 ethernet nodelay\n")
    lk = top.links["l"]
    assert lk == tb.VLink("l", "x", "y", None, 0, 0, "ethernet", frozenset({"nodelay"}))
    assert top.nodes["x"] == tb.VNode("x", "pc", 1, {"fast": 0.5})
    assert pickle.loads(pickle.dumps(top)).links["l"] == lk


SMALL = [
    ("ptop", "node sw switch:1 *lan:*\nnode a pc:1 - fast:0.5\nnode b pc:2\n"
             "link la a:e0 sw 100000 0 0 ethernet\nlink la b sw 1000 1 0.5\n"
             "link ab a b 100 0 0\n"),
    ("top", "node x pc fast:0.5\nnode y pc:2\nlink l1 x y 100 0 0 ethernet emulated\n"
            "link l1 y x * 1 0\n"),
]  # fmt: skip


@pytest.mark.parametrize("kind, text", SMALL)
def test_every_token_replaced_or_dropped_reads_as_the_table(kind, text):
    """Each token of each line replaced by each odd token, or dropped: the fast paths and
    the table agree on every one of these texts (model or error)."""
    lines = text.splitlines()
    for j, line in enumerate(lines):
        tok = line.split(" ")
        for i in range(len(tok)):
            for new in [*TOKENS, None]:
                changed = tok[:i] + ([] if new is None else [new]) + tok[i + 1 :]
                _same_as_the_table(kind, "\n".join(lines[:j] + [" ".join(changed)]
                                                   + lines[j + 1 :]))  # fmt: skip
