"""Why not, for testbed mapping (issue 38): the nearest fixes on linked experiments.

Small experiments with gigabit and 100 Mb/s links onto a one-switch testbed of PCs with
100 Mb/s or gigabit interfaces (one or two each): a node whose gigabit link no 100 Mb/s
host carries, too few interfaces, too few PCs of a type. The referees are the exact method
on each sub-experiment alone (another model than the presence model of the unsat core)
with ``verify`` on every mapping, a brute force over the drops, and a min-cost flow
(networkx) for the assignment count the fixes start from.
"""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

import coalloc.testbed as tb
from coalloc.testbed.explain import _sub, _unmatched, explain_mapping
from coalloc.testbed.methods.outcome import _problem

SPEEDS = {"pc850": 100000, "pc3000": 1000000}


def _instance(seed):
    rng = np.random.default_rng(seed)
    lines = ["node sw switch:1"]
    for i in range(int(rng.integers(2, 5))):
        kind = str(rng.choice(list(SPEEDS)))
        lines.append(f"node p{i} pc:1 {kind}:1")
        for j in range(int(rng.integers(1, 3))):
            lines.append(f"link l{i}_{j} p{i} sw {SPEEDS[kind]} 0 0")
    ptop = tb.parse_ptop("\n".join(lines))
    n = int(rng.integers(2, 7))
    nodes = [tb.VNode(f"v{j}", str(rng.choice(["pc", "pc", "pc850", "pc3000"])))
             for j in range(n)]  # fmt: skip
    links = []
    for k, (a, b) in enumerate(itertools.combinations(range(n), 2)):
        if rng.random() < 0.35:
            bw = float(rng.choice([100000.0, 1000000.0]))
            links.append(tb.VLink(f"e{k}", f"v{a}", f"v{b}", bw=bw))
    return tb.VirtualTopology(nodes, links), ptop


def _maps(top, ptop) -> bool:
    """The referee: the exact method on this experiment alone, its mapping verified."""
    if not top.nodes:
        return True
    inst = tb.Instance(top, ptop)
    res = inst.solve("exact", time_limit=60.0)
    assert res.status in ("optimal", "feasible", "infeasible"), res.status
    return bool(res.has_solution and inst.verify(res).ok)


def _fewest_drop(top, ptop) -> int:
    names = list(top.nodes)
    for k in range(len(names) + 1):
        for gone in itertools.combinations(names, k):
            if _maps(_sub(top, [v for v in names if v not in gone]), ptop):
                return k
    raise AssertionError("the empty experiment maps")


@pytest.mark.parametrize("seed", range(40))
def test_linked_conflicts_are_sound_minimal_and_every_fix_maps(seed):
    top, ptop = _instance(seed)
    e = explain_mapping(top, ptop, time_limit=30.0)
    if _maps(top, ptop):
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    conflict = e.conflict["vnodes"]
    assert not _maps(_sub(top, conflict), ptop), "the conflict must not map"
    for v in conflict:
        assert _maps(_sub(top, [u for u in conflict if u != v]), ptop), v
    fewest = _fewest_drop(top, ptop)
    # the node-alone assignment's count is a lower bound on any drop
    assert len(_unmatched(top, ptop, list(top.nodes), links=False)) <= fewest
    drops = [r for r in e.relaxations if r.kind == "drop_nodes"]
    assert drops, "a drop that maps is always found on these"
    for r in e.relaxations:
        assert r.checked
        if r.kind == "drop_nodes":
            gone = set(r.changes["drop_vnodes"])
            assert _maps(_sub(top, [v for v in top.nodes if v not in gone]), ptop)
            assert r.cost >= fewest
            if r.optimal:
                assert r.cost == fewest
        elif r.kind == "other_type":
            retyped = _sub(top, list(top.nodes), retype=(r.changes["vnode"], r.changes["type"]))
            assert _maps(retyped, ptop)
        else:
            scaled = _sub(top, list(top.nodes),
                          scale=(set(conflict), r.changes["bandwidth_fraction"]))  # fmt: skip
            assert _maps(scaled, ptop)


def _flow_left_out(top, ptop, rest, links):
    """The referee of :func:`_unmatched`: a min-cost maximum flow (networkx) from the nodes
    (cost: minus their degree) through their candidate pclasses' members to the sink."""
    sub = _sub(top, rest)
    if not links:
        sub = tb.VirtualTopology(list(sub.nodes.values()), [])
    pr = _problem(sub, ptop, None)
    g = nx.DiGraph()
    for v in range(pr.nv):
        g.add_edge("s", ("v", v), capacity=1, weight=-(1 + top.degree(pr.vnames[v])))
        for c in pr.cand[v]:
            for p in pr.members[c]:
                g.add_edge(("v", v), ("p", int(p)), capacity=1, weight=0)
                # a PC holds one node (one slot of its types), a switch any number of LANs
                room = pr.nv if pr.pis_switch[int(p)] else 1
                g.add_edge(("p", int(p)), "t", capacity=room, weight=0)
    if "t" not in g:
        return list(pr.vnames)
    flow = nx.max_flow_min_cost(g, "s", "t")
    return [pr.vnames[v] for v in range(pr.nv) if flow["s"][("v", v)] == 0]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("links", [False, True])
def test_the_assignment_keeps_as_many_and_as_linked_nodes_as_a_min_cost_flow(seed, links):
    ptop = tb.generators.deterlab(16, 3, seed=seed % 3)
    top = tb.generators.random_topology(20 + 5 * (seed % 4), seed=500 + seed)
    rest = list(top.nodes)
    got = _unmatched(top, ptop, rest, links=links)
    ref = _flow_left_out(top, ptop, rest, links)
    assert len(got) == len(ref)
    assert sum(top.degree(v) for v in got) == sum(top.degree(v) for v in ref)


def test_a_hub_the_trunks_cannot_serve_seeds_the_search_with_one_neighbour_past_the_bound():
    # nine PCs, three behind s0 and six behind s1, no trunk between them (as a full trunk
    # is left out of the free testbed): a LAN of nine reaches at most six of its members
    # from either switch (the hub bound), so the hub with seven of them is a conflict, and
    # without any one of those it maps
    lines = ["node s0 switch:1 *lan:*", "node s1 switch:1 *lan:*"]
    for i in range(9):
        sw = "s0" if i < 3 else "s1"
        lines += [f"node h{i} pc:1", f"link l{i} h{i} {sw} 100 0 0"]
    ptop = tb.parse_ptop("\n".join(lines))
    top = tb.generators.lan(9, bw=100)
    assert not _maps(top, ptop)
    # the default method's own proof names the hub (the seed comes from it)
    assert tb.Instance(top, ptop).solve().reason["constraint"] == "hub_bandwidth"
    e = explain_mapping(top, ptop, time_limit=30.0)
    assert e is not None and e.sound is True and e.minimal is True
    conflict = e.conflict["vnodes"]
    assert not _maps(_sub(top, conflict), ptop)
    for v in conflict:
        assert _maps(_sub(top, [u for u in conflict if u != v]), ptop), v
    assert len(conflict) == 8  # the hub and seven members: one past the six it can reach
