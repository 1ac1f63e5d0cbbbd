"""The testbed's conflict search repairs its last mappings into witnesses (issue 38: within
the solve + 1 s).

``explain_mapping``'s deletion filter asks ``S - {j}`` after ``S - {i}`` mapped; the
earlier mapping with ``i`` moved onto ``j``'s host is checked by ``verify_mapping`` and, if
it holds, answers without a mapper call (:class:`coalloc.testbed.explain._Witnesses`).
Judged on link-free experiments onto a one-switch testbed, where a set of virtual nodes
maps exactly when a bipartite matching to distinct PCs of their types covers it
(networkx, not the package's mappers): every repair the class accepts is a set that
matches, the mapping it keeps covers exactly that set on distinct hosts of the right
types, and the explanations built with it stay sound and minimal by the same referee.
"""

from __future__ import annotations

import itertools

import pytest

import coalloc.testbed as tb
from coalloc.testbed import explain as ex

from ._matching import typed_matching as _matches
from .test_explain_count import _case


@pytest.mark.parametrize("seed", range(40))
def test_a_repair_is_accepted_only_for_a_set_that_maps(seed):
    _repairs(seed)


def test_repairs_are_accepted_at_all():
    assert sum(_repairs(seed) for seed in range(10)) > 0  # (the test above can fail)


def _repairs(seed):
    ptop, kinds, vtypes, top = _case(seed)
    names = sorted(top.nodes)
    w = ex._Witnesses(top, ptop)
    accepted = 0
    for drop in names:  # seed the witnesses with each single drop that maps (the mapper)
        rest = [v for v in names if v != drop]
        res = tb.Instance(ex._sub(top, rest), ptop).solve(time_limit=10.0)
        if res.has_solution:
            w.keep(dict(res.mapping))
    for k in range(1, len(names) + 1):
        for nodes in itertools.combinations(names, k):
            if w.repair(list(nodes)):
                accepted += 1
                assert _matches({v: vtypes[v] for v in nodes}, kinds), nodes
                where = w.kept[0]
                assert sorted(where) == sorted(nodes)
                assert len(set(where.values())) == len(where)  # distinct hosts
                for v, p in where.items():  # each host of the node's type
                    i = int(p[1:])
                    assert vtypes[v] in ("pc", kinds[i])
    return accepted


def test_a_host_of_another_type_is_not_a_repair():
    ptop = tb.parse_ptop("node sw switch:1\nnode p0 pc:1 pc850:1\nnode p1 pc:1 d710:1\n"
                         "link l0 p0 sw 100000 0 0\nlink l1 p1 sw 100000 0 0")  # fmt: skip
    top = tb.VirtualTopology([tb.VNode("a", "pc850"), tb.VNode("b", "d710"),
                              tb.VNode("c", "pc850")])  # fmt: skip
    w = ex._Witnesses(top, ptop)
    w.keep({"a": "p0", "b": "p1"})
    assert w.repair(["a"]) and w.kept[0] == {"a": "p0"}  # a subset of a mapping maps
    assert not w.repair(["a", "c"])  # c would take b's d710: refused by verify_mapping
    assert w.repair(["c", "b"]) and w.kept[0] == {"c": "p0", "b": "p1"}  # a's pc850 freed


@pytest.mark.parametrize("seed", range(40))
def test_explanations_with_repairs_are_sound_and_minimal(seed):
    ptop, kinds, vtypes, top = _case(seed)
    e = ex.explain_mapping(top, ptop, time_limit=30.0)
    if _matches(vtypes, kinds):
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    nodes = e.conflict["vnodes"]
    assert not _matches({v: vtypes[v] for v in nodes}, kinds)
    for u in nodes:
        assert _matches({v: vtypes[v] for v in nodes if v != u}, kinds)
