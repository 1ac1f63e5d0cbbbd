"""Why not, for testbed mapping (issue 38): explanations judged by a matching referee.

Experiments without links onto a one-switch testbed: an experiment maps exactly when its
virtual nodes can be matched to distinct PCs of the types they ask for, which a bipartite
maximum matching (networkx, not the package's mappers) decides independently.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import coalloc.testbed as tb
from coalloc.testbed.explain import explain_mapping
from tests.testbed._matching import typed_matching as _maps

KINDS = ("pc850", "pc3000", "d710")


def _testbed(rng):
    kinds = [KINDS[int(k)] for k in rng.integers(0, 3, int(rng.integers(2, 5)))]
    lines = ["node sw switch:1"]
    for i, k in enumerate(kinds):
        lines += [f"node p{i} pc:1 {k}:1", f"link l{i} p{i} sw 100000 0 0"]
    return tb.parse_ptop("\n".join(lines)), kinds


@pytest.mark.parametrize("seed", range(30))
def test_conflict_is_sound_minimal_and_the_fix_maps(seed):
    rng = np.random.default_rng(seed)
    ptop, kinds = _testbed(rng)
    n = int(rng.integers(1, 6))
    vtypes = {f"v{j}": ("pc",) + KINDS for j in range(n)}
    vtypes = {v: str(rng.choice(t)) for v, t in vtypes.items()}
    top = tb.VirtualTopology([tb.VNode(v, t) for v, t in vtypes.items()])
    e = explain_mapping(top, ptop, time_limit=30.0)
    if _maps(vtypes, kinds):
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    conflict = e.conflict["vnodes"]
    assert not _maps({v: vtypes[v] for v in conflict}, kinds), "the conflict must not map"
    for v in conflict:
        rest = {u: vtypes[u] for u in conflict if u != v}
        assert _maps(rest, kinds), f"taking out {v} must let the rest map"
    for r in e.relaxations:
        assert r.checked
        if r.kind == "drop_nodes":
            left = {u: t for u, t in vtypes.items() if u not in r.changes["drop_vnodes"]}
            assert _maps(left, kinds)
            if r.optimal:  # the fewest: no drop of one node less maps (every such drop tried)
                k = int(r.cost) - 1
                assert not any(_maps({u: vtypes[u] for u in vtypes if u not in gone}, kinds)
                               for gone in itertools.combinations(vtypes, k))  # fmt: skip
        if r.kind == "other_type":
            assert _maps({**vtypes, r.changes["vnode"]: r.changes["type"]}, kinds)
    assert e.sentence.startswith("Virtual nodes")


def test_explain_mapping_refuses_bad_arguments():
    ptop, _ = _testbed(np.random.default_rng(0))
    top = tb.VirtualTopology([tb.VNode("a", "pc")])
    with pytest.raises(TypeError, match="top"):
        explain_mapping("top", ptop)
    with pytest.raises(TypeError, match="ptop"):
        explain_mapping(top, "ptop")
    with pytest.raises(ValueError, match="time_limit"):
        explain_mapping(top, ptop, time_limit=0)


def test_the_counting_proof_drops_the_fewest_nodes_at_once():
    """Five pc3000 nodes for two pc3000 PCs (and a d710): three must go, proved the fewest."""
    lines = ["node sw switch:1", "node a pc:1 pc3000:1", "node b pc:1 pc3000:1",
             "node c pc:1 d710:1"] + [f"link l{p} {p} sw 100000 0 0" for p in "abc"]  # fmt: skip
    ptop = tb.parse_ptop("\n".join(lines))
    vtypes = {f"v{j}": "pc3000" for j in range(5)}
    top = tb.VirtualTopology([tb.VNode(v, t) for v, t in vtypes.items()])
    e = explain_mapping(top, ptop, time_limit=30.0)
    drop = next(r for r in e.relaxations if r.kind == "drop_nodes")
    assert drop.cost == 3.0 and drop.optimal is True
    kinds = ["pc3000", "pc3000", "d710"]
    assert _maps({u: t for u, t in vtypes.items() if u not in drop.changes["drop_vnodes"]}, kinds)
    assert not any(_maps({u: vtypes[u] for u in vtypes if u not in gone}, kinds)
                   for gone in itertools.combinations(vtypes, 2))  # fmt: skip


def test_coalloc_assign_explains_fixed_nodes_that_collide(tmp_path):
    """Two virtual nodes fixed on the same PC: assign's own two lines, then '*** Why:' naming
    both, and its nearest fix maps (checked by the mapper and verify)."""
    import io

    from coalloc.cli.assign_compat import run

    ptop = tmp_path / "bed.ptop"
    ptop.write_text("node sw switch:1\nnode a pc:1\nnode b pc:1\n"
                    "link la a sw 100 0 0\nlink lb b sw 100 0 0\n")  # fmt: skip
    top = tmp_path / "exp.top"
    top.write_text("node x pc\nnode y pc\nfix-node x a\nfix-node y a\n")
    buf = io.StringIO()
    assert run([str(ptop), str(top)], buf) == 2
    lines = buf.getvalue().splitlines()
    assert lines[-3].startswith("*** Fixed node: Could not map")
    assert lines[-2] == "*** Some fixed nodes failed to map"
    assert lines[-1].startswith("*** Why: Virtual nodes x, y (2 of 2")
    e = explain_mapping(tb.read_top(top), tb.read_ptop(ptop))
    left = [v for v in ("x", "y") if v not in e.relaxations[0].changes["drop_vnodes"]]
    sub = tb.VirtualTopology([tb.read_top(top).nodes[v] for v in left],
                             fixed={v: "a" for v in left})  # fmt: skip
    res = tb.assign(sub, tb.read_ptop(ptop))
    assert res.mapping is not None and tb.verify_mapping(sub, tb.read_ptop(ptop), res.mapping,
                                                         res.routes).ok  # fmt: skip


def test_the_hall_count_of_types_is_a_lower_bound_the_exact_model_agrees_with():
    """Two pc850 and one pc3000 host; five pc850-or-pc nodes: the union {pc, pc850} has
    three slots for five nodes (two must go), {pc850} alone two slots for four nodes."""
    from coalloc.testbed.explain import _hall, _sub

    ptop = tb.parse_ptop("node sw switch:1\nnode a pc:1 pc850:1\nnode b pc:1 pc850:1\n"
                         "node c pc:1 pc3000:1\nlink la a sw 100000 0 0\n"
                         "link lb b sw 100000 0 0\nlink lc c sw 100000 0 0")  # fmt: skip
    top = tb.VirtualTopology([tb.VNode("x", "pc")] +
                             [tb.VNode(v, "pc850") for v in ("y1", "y2", "y3", "y4")])
    members, k, conflict = _hall(top, list(top.nodes), ptop)
    assert {"y1", "y2", "y3", "y4"} <= set(members) and k == 2  # either union: two go
    assert len(conflict) == 3 and all(top.nodes[v].type == "pc850" for v in conflict)
    # the referee: the exact model rejects the conflict, maps it without any one node, and
    # no drop of fewer than k nodes maps the whole (k is a lower bound), while some k-drop does
    assert tb.Instance(_sub(top, conflict), ptop).solve("exact").status == "infeasible"
    for v in conflict:
        rest = [u for u in conflict if u != v]
        assert tb.Instance(_sub(top, rest), ptop).solve("exact").has_solution
    for v in top.nodes:
        rest = [u for u in top.nodes if u != v]
        assert not tb.Instance(_sub(top, rest), ptop).solve("exact").has_solution
    assert tb.Instance(_sub(top, ["x", "y1", "y2"]), ptop).solve("exact").has_solution
    fits = tb.VirtualTopology([tb.VNode("x", "pc"), tb.VNode("y1", "pc850")])
    assert _hall(fits, list(fits.nodes), ptop) is None
