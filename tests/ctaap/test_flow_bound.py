"""The flow bound without SciPy's graph module, and what a fresh process's first call imports.

Issue 36: a fresh process's first ``solve(..., time_limit=T)`` imported
:mod:`scipy.sparse.csgraph` (0.1-0.3 s) for the flow bound, and CP-SAT in the background
while the limit ran, so that it returned up to 0.22 s past T = 0.05 s. The b-matching is
now the minimum cut over cluster sets, checked here against networkx's maximum flow (an
independent referee) and against :func:`coalloc.ctaap.upper_bound`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.ctaap as ct
from coalloc.ctaap import bounds
from coalloc.ctaap.bounds import b_matching_size, flow_bound


def _referee(compat: np.ndarray, caps) -> int:
    """The b-matching's size as networkx's maximum flow on the flow bound's network."""
    n, m = compat.shape
    g = nx.DiGraph()
    g.add_node("s")
    g.add_node("t")
    for i in range(n):
        g.add_edge("s", ("task", i), capacity=1)
        for j in np.flatnonzero(compat[i]):
            g.add_edge(("task", i), ("cluster", int(j)), capacity=1)
    for j in range(m):
        g.add_edge(("cluster", j), "t", capacity=max(0, int(caps[j])))
    return int(nx.maximum_flow_value(g, "s", "t"))


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(0, 25),
    m=st.integers(1, 7),
    density=st.floats(0.0, 1.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_b_matching_is_networkxs_maximum_flow(n, m, density, seed):
    rng = np.random.default_rng(seed)
    compat = rng.random((n, m)) < density
    caps = rng.integers(-1, 7, m)
    assert b_matching_size(compat, caps) == _referee(compat, caps)


@pytest.mark.parametrize("subset_clusters", [0, 16])
def test_both_ways_agree_many_clusters_included(monkeypatch, subset_clusters):
    """SciPy's flow (forced with 0) and the cut over cluster sets, up to 12 clusters."""
    monkeypatch.setattr(bounds.flow, "SUBSET_CLUSTERS", subset_clusters)  # where it is read
    rng = np.random.default_rng(7)
    for _ in range(40):
        n, m = int(rng.integers(1, 60)), int(rng.integers(1, 13))
        compat = rng.random((n, m)) < rng.random()
        caps = rng.integers(0, 9, m)
        assert b_matching_size(compat, caps) == _referee(compat, caps)


def test_the_flow_bound_is_upper_bound_on_generated_instances():
    for s in range(12):
        for request, offer in (
            ct.generators.fig2(1 + s % 5, seed=s),
            ct.generators.fig3(30 + 5 * s, seed=s),
            ct.generators.random_instance(25 + s, 1 + s, edge_probability=0.3, seed=s),
        ):
            assert flow_bound(request, offer) == ct.upper_bound(request, offer)


_CHILD = r"""
import json, sys
import coalloc.ctaap as ct
request, offer = ct.generators.fig2(2, n_tasks=50, seed=1)
before = set(sys.modules)
result = ct.solve(request, offer, seed=0, time_limit=0.05)
assert ct.verify(request, offer, result.assignment).feasible
print(json.dumps({"status": result.status, "new": sorted(set(sys.modules) - before)}))
"""


def test_a_fresh_processs_short_limited_call_imports_neither_csgraph_nor_cpsat():
    """What the first call imports inside its limit (a count of modules, no clock)."""
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(ct.__file__))
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    new = json.loads(done.stdout.strip().splitlines()[-1])["new"]
    assert "scipy.sparse.csgraph" not in new
    assert not [m for m in new if m.startswith(("ortools", "pandas"))]
