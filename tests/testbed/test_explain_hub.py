"""Why not, for a LAN behind an uplink (issue 38): the hub conflict is minimal, by a count.

A LAN hub (type ``lan``, on a switch) with ``k`` PC members, on a testbed of two switches
holding ``a`` and ``b`` PCs joined by a trunk of ``u`` units of the LAN's bandwidth: with the
hub on switch ``s``, the members it can reach are the PCs on ``s`` and at most ``u`` of the
other switch's. A sub-experiment maps exactly when that count (or, without the hub, the
PC count) holds its members: the referee here, independent of the package's mappers and
of the hub bound the explanation starts from. The explanation must be sound (the conflict
fails the count), minimal (every single drop passes it) and, since the drops are cheap,
proved minimal in its budget (the search goes one node at a time from the hub's seed).
"""

from __future__ import annotations

import pytest

import coalloc.testbed as tb
from coalloc.testbed.explain import explain_mapping

BW = 100


def _testbed(a: int, b: int, units: int) -> tb.PhysicalTopology:
    lines = ["node s0 switch:1 *lan:*", "node s1 switch:1 *lan:*"]
    if units:
        lines.append(f"link t s0 s1 {units * BW} 0 0")
    for i in range(a + b):
        lines += [f"node p{i} pc:1", f"link l{i} p{i} s{0 if i < a else 1} {BW} 0 0"]
    return tb.parse_ptop("\n".join(lines))


def _maps(nodes, a: int, b: int, units: int) -> bool:
    members = [v for v in nodes if v != "lan0"]
    if len(members) > a + b:
        return False
    if "lan0" not in nodes:
        return True
    reach = max(a + min(b, units), b + min(a, units))
    return len(members) <= reach


@pytest.mark.parametrize("a, b, units, k", [(1, 2, 0, 3), (2, 3, 1, 5), (3, 5, 1, 7),
                                            (4, 6, 2, 9), (2, 6, 0, 7), (3, 3, 1, 5),
                                            (3, 5, 1, 8)])  # fmt: skip
def test_the_hub_conflict_is_sound_and_proved_minimal(a, b, units, k):
    ptop = _testbed(a, b, units)
    top = tb.generators.lan(k, bw=BW)
    assert not _maps(list(top.nodes), a, b, units)  # (the case is a "no")
    e = explain_mapping(top, ptop, time_limit=30.0)
    assert e is not None and e.sound is True and e.minimal is True, e
    conflict = e.conflict["vnodes"]
    assert not _maps(conflict, a, b, units), "the conflict must fail the count"
    for v in conflict:
        rest = [u for u in conflict if u != v]
        assert _maps(rest, a, b, units), f"taking out {v} must let the rest map"
        inst = tb.Instance(tb.explain._sub(top, rest), ptop)
        got = inst.solve(time_limit=30.0)
        assert got.has_solution and inst.verify(got).ok  # (and a mapper finds it)


@pytest.mark.parametrize("seed", range(12))
def test_nodes_of_one_class_swap_onto_the_same_experiment(seed):
    """``_classes``' promise, checked on its own: swapping two nodes of one class maps the
    set of links (ends and fields) and the nodes' fields onto themselves."""
    from coalloc.testbed.explain import _classes

    top = (tb.generators.dumbbell(3 + seed % 3, 4) if seed % 2
           else tb.generators.random_topology(12, seed=seed))  # fmt: skip
    lan = tb.generators.lan(4, bw=BW)
    kind = _classes(top)
    assert len(set(_classes(lan)[v] for v in lan.nodes if v != "lan0")) == 1  # the members

    def links(swap):
        return sorted((swap.get(lk.a, lk.a), swap.get(lk.b, lk.b), lk.bw, lk.delay, lk.loss,
                       lk.type) for lk in top.links.values())  # fmt: skip

    pairs = [(u, v) for u in top.nodes for v in top.nodes if u < v and kind[u] == kind[v]]
    assert pairs or not seed % 2  # (a dumbbell's leaves are alike)
    for u, v in pairs:
        assert links({u: v, v: u}) == links({})
        a, b = top.nodes[u], top.nodes[v]
        assert (a.type, a.slots, dict(a.desires)) == (b.type, b.slots, dict(b.desires))
