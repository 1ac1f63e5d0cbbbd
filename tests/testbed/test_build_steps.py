"""The build's two ways to a node's row agree: a free node's row is the testbed-wide filter
row taken at the pclasses (the memo), a fixed node's is filtered over the pclasses'
representatives; and a fix-node naming no physical node is refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc import testbed as tb
from coalloc.testbed import generators as g

PTOP = g.deterlab(60, 3, seed=1)


def _top(fix: str, desires: str = " ?+mem:1024 fast-disk:0.4 tpm:0.3") -> tb.VirtualTopology:
    """``a`` and ``b`` alike (type, desires, one link each to ``c``), ``a`` fixed to ``fix``."""
    return tb.parse_top(f"node a pc{desires}\nnode b pc{desires}\nnode c pc\n"
                        "link l1 a c 100000 0 0\nlink l2 b c 100000 0 0\n"
                        f"fix-node a {fix}\n")  # fmt: skip


@pytest.mark.parametrize("pc", ["pc3000-0", "pc2133-3", "bpc2800-1", "microcloud-2", "pc850-5"])
@pytest.mark.parametrize("available", [None, "half"])
def test_fixed_node_row_equals_its_free_twins(pc, available):
    free = None
    if available == "half":
        pcs = sorted(n for n, node in PTOP.nodes.items() if not node.is_switch)
        free = set(pcs[::2]) | {pc}
    pr = tb.build_problem(_top(pc), PTOP, free)
    a, b = pr.vidx["a"], pr.vidx["b"]
    home = int(pr.pclass[pr.pidx[pc]])
    assert pr.fixed[a] == pr.pidx[pc] and pr.fixed[b] == -1
    # the fixed node may take its own pclass only, and exactly when its free twin may
    assert pr.cand[a] == ([home] if home in pr.cand[b] else [])
    assert set(pr.cand[b]) == set(np.flatnonzero(pr.vtype[b] >= 0).tolist())
    if pr.cand[a]:
        assert pr.fcost[a, home] == pr.fcost[b, home]
        assert pr.vtype[a, home] == pr.vtype[b, home] >= 0
        assert pr.vstatic[a, home] == pr.vstatic[b, home]
        assert pr.cand_why[a] == ""
    else:  # pc850 has 512 MB: the additive desire is the reason
        assert pc.startswith("pc850") and pr.cand_why[a] == "additive:?+mem"
    # the pclasses hold the usable nodes, each once
    usable = set(range(len(pr.pnames))) if free is None else (
        {pr.pidx[n] for n in free} | set(np.flatnonzero(pr.pis_switch).tolist()))  # fmt: skip
    held = [int(p) for m in pr.members for p in m]
    assert sorted(held) == sorted(usable)


def test_fix_node_naming_no_physical_node_is_refused_by_name():
    with pytest.raises(ValueError, match="fix-node a names unknown physical node 'nosuch'"):
        tb.build_problem(_top("nosuch"), PTOP)
