"""The testbed and the experiment share one topology base (issue 23 item 4): the same faults
are refused the same way on both sides, each naming its side, and both keep each node's
links in the order of the description."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc import testbed as tb

SIDES = {
    "physical": (tb.PhysicalTopology, lambda n: tb.PNode(n, {"pc": 1}),
                 lambda name, a, b: tb.PLink(name, a, b, 100), "interfaces"),
    "virtual": (tb.VirtualTopology, lambda n: tb.VNode(n, "pc"),
                lambda name, a, b: tb.VLink(name, a, b, 100), "incident"),
}  # fmt: skip


@pytest.mark.parametrize("side", SIDES)
@pytest.mark.parametrize(
    ("nodes", "links", "message"),
    [
        (["a", "a"], [], "duplicate {side} node 'a'"),
        (["a", "b"], [("l", "a", "b"), ("l", "b", "a")], "duplicate {side} link 'l'"),
        (["a"], [("l", "a", "z")], "{side} link 'l' names unknown node 'z'"),
        (["a"], [("l", "a", "a")], "{side} link 'l' joins 'a' to itself"),
    ],
)
def test_same_faults_refused_on_both_sides(side, nodes, links, message):
    cls, node, link, _ = SIDES[side]
    with pytest.raises(ValueError) as err:
        cls([node(n) for n in nodes], [link(*x) for x in links])
    assert str(err.value) == message.format(side=side)


@pytest.mark.parametrize("side", SIDES)
def test_wrong_object_types_name_the_class(side):
    cls, node, link, _ = SIDES[side]
    other = SIDES["virtual" if side == "physical" else "physical"]
    stranger = other[1]("a")
    want = f"nodes must hold {cls.NODE.__name__} objects, got {type(stranger).__name__}"
    with pytest.raises(TypeError, match=want):
        cls([stranger])
    with pytest.raises(TypeError, match=f"links must hold {cls.LINK.__name__} objects"):
        cls([node("a"), node("b")], [other[2]("l", "a", "b")])


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 6), data=st.data())
def test_links_at_each_node_in_description_order(n, data):
    """Each node's links, on both sides, are exactly the links naming it, in order (a
    referee counts them from the list), and survive a pickle round trip."""
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                               .filter(lambda p: p[0] != p[1]), max_size=10))  # fmt: skip
    for cls, node, link, at in SIDES.values():
        names = [f"n{i}" for i in range(n)]
        links = [link(f"l{k}", names[a], names[b]) for k, (a, b) in enumerate(pairs)]
        topo = cls([node(x) for x in names], links)
        for t in (topo, pickle.loads(pickle.dumps(topo))):
            for x in names:
                want = [lk.name for lk in links if x in (lk.a, lk.b)]
                assert [lk.name for lk in getattr(t, at)(x)] == want
            with pytest.raises(TypeError):
                t.nodes["new"] = node("new")  # read-only after construction
