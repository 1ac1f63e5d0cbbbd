"""The exact model's unsat core over node presence (issue 38), judged independently.

Link-free experiments onto a one-switch testbed map exactly when a bipartite maximum
matching (networkx, not the package's mappers) matches every virtual node to a distinct PC
of its type: the core :func:`coalloc.testbed.exact.exact_core` names must not match alone.
On linked experiments the core (a presence per link, by default) and the plain core with
its neighbours (the seed the explainer falls back to) are judged by the exact method on
that sub-experiment alone.
"""

from __future__ import annotations

import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc.testbed as tb
import coalloc.testbed.explain  # noqa: F401  (the module, for its _core)
from coalloc.testbed.exact import exact_core
from coalloc.testbed.explain import _core, _sub, explain_mapping
from coalloc.testbed.methods.outcome import _problem
from tests.testbed._matching import typed_matching

KINDS = ("pc850", "pc3000", "d710")


def _testbed(kinds):
    lines = ["node sw switch:1"]
    for i, k in enumerate(kinds):
        lines += [f"node p{i} pc:1 {k}:1", f"link l{i} p{i} sw 100000 0 0"]
    return tb.parse_ptop("\n".join(lines))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])  # fmt: skip
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=5),
       st.lists(st.sampled_from(("pc",) + KINDS), min_size=1, max_size=9))  # fmt: skip
def test_the_core_alone_does_not_match(kinds, asks):
    vtypes = {f"v{j}": t for j, t in enumerate(asks)}
    top = tb.VirtualTopology([tb.VNode(v, t) for v, t in vtypes.items()])
    pr = _problem(top, _testbed(kinds), None)
    core = exact_core(pr, time_limit=30.0)
    if typed_matching(vtypes, kinds):
        assert core is None  # nothing to name: every node can be present
        return
    assert core is not None
    named = {pr.vnames[v] for v in core}
    assert named <= set(vtypes)
    assert not typed_matching({v: vtypes[v] for v in named}, kinds), "the core must not match"


@pytest.mark.parametrize("case", [(20, 0), (40, 1), (40, 2), (70, 1)])
def test_the_per_link_core_alone_is_infeasible_on_linked_experiments(case):
    # with a presence per link and the nodes' own candidates (the default), the core alone
    # cannot be mapped: the exact method rejects that sub-experiment on its own
    size, r = case
    ptop = tb.generators.deterlab(max(16, size // 2), 3, seed=r)
    top = tb.generators.random_topology(size, seed=1000 * size + r)
    names = sorted(top.nodes)
    seeds = _core(top, ptop, names, time.monotonic() + 60.0)
    assert seeds, case
    core = _sub(top, [names[i] for i in seeds[0]])
    assert tb.Instance(core, ptop).solve("exact", time_limit=60.0).status == "infeasible"


def test_the_plain_core_with_its_neighbours_is_infeasible_on_linked_experiments():
    # without a presence per link (per_link=False: candidates filtered by all of a node's
    # links), deterlab(20, 3, seed=2) with random_topology(40, seed=40002): the core alone
    # maps, the core with its neighbours does not
    for size, r in ((20, 0), (40, 1), (40, 2), (70, 1)):
        ptop = tb.generators.deterlab(max(16, size // 2), 3, seed=r)
        top = tb.generators.random_topology(size, seed=1000 * size + r)
        names = sorted(top.nodes)
        seeds = _core(top, ptop, names, time.monotonic() + 60.0, per_link=False)
        assert seeds, (size, r)
        assert set(seeds[0]) <= set(seeds[-1])
        last = _sub(top, [names[i] for i in seeds[-1]])
        assert tb.Instance(last, ptop).solve("exact", time_limit=60.0).status == "infeasible"
        if (size, r) == (40, 2):  # the case the neighbours are for
            alone = _sub(top, [names[i] for i in seeds[0]])
            assert len(seeds) == 2 and tb.Instance(alone, ptop).solve().has_solution


def test_explanations_seeded_by_the_core_stay_sound_and_minimal(monkeypatch):
    # the exact model's "infeasible" names no nodes here, and the core alone maps: the core
    # with its neighbours seeds the search
    ptop = tb.generators.deterlab(20, 3, seed=2)
    top = tb.generators.random_topology(40, seed=40002)
    explain = sys.modules["coalloc.testbed.explain"]
    seeded = []

    def spy(*args, **kwargs):
        seeded.append(explain._core_plain(*args, **kwargs))
        return seeded[-1]

    monkeypatch.setattr(explain, "_core_plain", explain._core, raising=False)
    monkeypatch.setattr(explain, "_core", spy)
    e = explain_mapping(top, ptop, time_limit=30.0)
    assert seeded and seeded[0], "the exact proof names no nodes here: the core seeds"
    assert e is not None and e.sound is True and e.minimal is True
    conflict = e.conflict["vnodes"]
    sub = _sub(top, conflict)
    assert tb.Instance(sub, ptop).solve("exact", time_limit=60.0).status == "infeasible"
    for v in conflict:
        rest = _sub(top, [u for u in conflict if u != v])
        assert tb.Instance(rest, ptop).solve("exact", time_limit=60.0).has_solution
