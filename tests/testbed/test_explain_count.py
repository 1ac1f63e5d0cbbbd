"""Why not, for the testbed (issue 38): the node-alone assignment count as a proof.

Where no proof of the mappers names nodes, ``explain_mapping`` counts: a largest
assignment of the virtual nodes to the pclasses they could take alone (links, features and
interfaces ignored: a relaxation of any mapping) that leaves a node out proves the
experiment cannot map, and the nodes its last search reached (``_unmatched``'s
``violator``) are a Hall-type violator to start the conflict search from. Judged here on
link-free experiments onto a one-switch testbed, where an experiment maps exactly when a
bipartite matching of its nodes to distinct PCs of their types covers them (networkx,
not the package's mappers).
"""

from __future__ import annotations

import numpy as np
import pytest

import coalloc.testbed as tb
from coalloc.testbed import explain as ex
from tests.testbed._matching import typed_matching

KINDS = ("pc850", "pc3000", "d710")


def _case(seed):
    rng = np.random.default_rng(seed)
    kinds = [KINDS[int(k)] for k in rng.integers(0, 3, int(rng.integers(2, 6)))]
    lines = ["node sw switch:1"]
    for i, k in enumerate(kinds):
        lines += [f"node p{i} pc:1 {k}:1", f"link l{i} p{i} sw 100000 0 0"]
    n = int(rng.integers(2, 8))
    vtypes = {f"v{j}": str(rng.choice(("pc",) + KINDS)) for j in range(n)}
    top = tb.VirtualTopology([tb.VNode(v, t) for v, t in vtypes.items()])
    return tb.parse_ptop("\n".join(lines)), kinds, vtypes, top


@pytest.mark.parametrize("seed", range(40))
def test_the_violator_cannot_match_and_each_drop_can(seed):
    ptop, kinds, vtypes, top = _case(seed)
    violator: list = []
    left = ex._unmatched(top, ptop, list(top.nodes), links=False, violator=violator)
    assert bool(left) == (not typed_matching(vtypes, kinds))
    if not left:
        assert violator == []
        return
    assert not typed_matching({v: vtypes[v] for v in violator}, kinds)
    for u in violator:  # tight: the search's tree, any one out lets the rest match
        assert typed_matching({v: vtypes[v] for v in violator if v != u}, kinds)


@pytest.mark.parametrize("seed", range(40))
def test_explanations_started_from_the_count_are_sound_and_minimal(seed, monkeypatch):
    ptop, kinds, vtypes, top = _case(seed)
    monkeypatch.setattr(ex, "_certified", lambda *a, **k: None)  # (as if no proof named any)
    e = ex.explain_mapping(top, ptop, time_limit=30.0)
    if typed_matching(vtypes, kinds):
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    conflict = e.conflict["vnodes"]
    assert not typed_matching({v: vtypes[v] for v in conflict}, kinds)
    for u in conflict:
        assert typed_matching({v: vtypes[v] for v in conflict if v != u}, kinds)
