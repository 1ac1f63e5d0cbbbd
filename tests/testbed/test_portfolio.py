"""The default method (a portfolio: assign+ strategies, a quick anneal from their mapping,
the exact method on small experiments) against the annealer and the exact method."""

from __future__ import annotations

import pytest

from coalloc import testbed as tb
from coalloc.testbed import generators as g
from coalloc.testbed.solvers import unmet_desires

# experiments of 20 PCs onto the Utah testbed of July 2000 where the assign+ strategies alone
# cross more bandwidth than the annealer (issue 25): (extra edges, seed) of random_sparse
UTAH_CASES = [(0, 10), (0, 11), (2, 3), (2, 5)]


@pytest.mark.slow
@pytest.mark.parametrize("extra,seed", UTAH_CASES)
def test_default_not_worse_than_annealer_on_utah2000(extra, seed):
    pt = g.utah2000()
    top = g.random_sparse(20, extra, seed=seed)
    d = tb.assign(top, pt, seed=1)
    assert d.success and tb.verify_mapping(top, pt, d.mapping, d.routes).ok
    strategies = tb.assign(top, pt, "assign+.1m", seed=1)
    for s in (1, 2, 3):
        a = tb.assign(top, pt, "anneal", seed=s)
        assert d.interswitch_bandwidth <= a.interswitch_bandwidth
    assert d.interswitch_bandwidth <= strategies.interswitch_bandwidth


@pytest.mark.slow
def test_utah2000_chain_is_proven_by_exact():
    """The case of the issue: the default's answer equals what CP-SAT proves optimal."""
    pt = g.utah2000()
    top = g.random_sparse(20, 0, seed=11)
    d = tb.assign(top, pt, seed=1)
    e = tb.assign(top, pt, "exact", time_limit=60)
    assert e.status == "optimal"
    assert d.interswitch_bandwidth == e.interswitch_bandwidth == 200_000
    assert d.status == "feasible"  # 20 nodes: above the portfolio's exact size, no proof


def test_special_desire_honoured_when_a_free_node_offers_it():
    """One free node offers ``special``; the default puts the node desiring it there."""
    pt = g.utah2000(special=1)
    top = tb.parse_top(
        "node a pc special:0.5\nnode b pc\nnode c pc\n"
        "link l0 a b 100000 0 0\nlink l1 b c 100000 0 0\n"
    )
    d = tb.assign(top, pt, seed=1)
    assert d.success and tb.verify_mapping(top, pt, d.mapping, d.routes).ok
    assert pt.nodes[d.mapping["a"]].features.get("special") == 0.2
    assert unmet_desires(top, pt, d.mapping) == 0
    # without a free node offering it, the desire stays unmet and the mapping stands
    avail = {n for n, p in pt.nodes.items() if "special" not in p.features}
    d2 = tb.assign(top, pt, seed=1, available=avail)
    assert d2.success and unmet_desires(top, pt, d2.mapping) == 0.5


def test_optimal_only_when_proven():
    """With exact_nodes, small experiments get the exact method: status optimal with a
    bound the exact method confirms; without it, or above the size, never optimal."""
    pt = g.utah2000(n_pcs=10)  # two PCs per switch: a ring of 5 must cross switches
    top = g.ring(5)
    plain = tb.assign(top, pt, seed=1)
    assert plain.success and plain.status == "feasible" and "exact_status" not in plain.params
    d = tb.assign(top, pt, seed=1, exact_nodes=8)
    e = tb.assign(top, pt, "exact")
    assert e.status == "optimal"
    assert d.status == "optimal" and d.interswitch_bandwidth == e.interswitch_bandwidth
    assert d.bound == pytest.approx(e.interswitch_bandwidth)
    big = g.ring(12)
    pt2 = g.utah2000(n_pcs=15)
    d2 = tb.assign(big, pt2, seed=1, exact_nodes=8)
    assert d2.success and d2.status == "feasible"
    with pytest.raises(ValueError, match="exact_nodes"):
        tb.assign(top, pt, exact_nodes=-1)


def test_unmet_desires_ignores_hard_and_additive():
    pt = tb.parse_ptop(
        "node sw switch:1\nnode a pc:1 - f:0.2 ?+mem:10\nnode b pc:1\n"
        "link la a sw 100 0 0\nlink lb b sw 100 0 0\n"
    )
    top = tb.parse_top("node x pc f:0.3 g:0.4 ?+mem:5\n")
    assert unmet_desires(top, pt, {"x": "a"}) == pytest.approx(0.4)
    assert unmet_desires(top, pt, {"x": "b"}) == pytest.approx(0.7)
