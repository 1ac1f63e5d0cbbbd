"""The bisection's per-vertex-set preparation (issue 40, the mapper's CPU): the induced
graph, the growing seeds and the Fiedler order are kept on the level and reused for every
target; a bisection with them warm is the bisection of a fresh level. Referees: the same
bisection on a fresh copy of the level, and SciPy's hop distances / eigensolver through
``spectral_split``."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.taskmap import generators as gen
from coalloc.taskmap.bisection import _prefix, bisect_map, fiedler_order, grow, spectral_split
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel, subgraph


@settings(max_examples=12, deadline=None, derandomize=True)
@given(st.integers(70, 400), st.integers(0, 1000), st.sampled_from([1.0, (1.0, 3.0)]))
def test_a_warm_level_bisects_as_a_fresh_one(n, seed, speed):
    tasks = gen.geometric_task_graph(n, seed=seed)
    res = gen.hierarchical_cluster(
        n_racks=2, nodes_per_rack=2, cores_per_node=4, speed=speed,
        node_bandwidth=50.0, rack_bandwidth=100.0, seed=seed,
    )  # fmt: skip
    topo = topology(res)
    warm = TaskLevel.of(tasks)
    subsets = [np.arange(topo.P), np.arange((topo.P + 1) // 2)]
    shares = [topo.cap / topo.cap.max(), np.ones(topo.P)]
    for sub in subsets:  # the same level through several bisections: its cache fills
        for share in shares:
            got = bisect_map(topo, warm, sub, share, full=True)
            want = bisect_map(topo, TaskLevel.of(tasks), sub, share, full=True)
            assert np.array_equal(got, want)
    assert warm.__dict__.get("_grow_prep"), "the warm level kept no preparation"


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(64, 300), st.integers(0, 1000), st.floats(0.2, 0.8))
def test_grow_and_the_spectral_split_agree_with_their_parts(n, seed, frac):
    tasks = gen.geometric_task_graph(n, seed=seed)
    lv = TaskLevel.of(tasks)
    verts = np.arange(lv.n)
    target = frac * float(lv.vw.sum())
    first = grow(lv, verts, target)
    again = grow(lv, verts, target)  # from the kept preparation
    assert np.array_equal(first, again)
    assert np.array_equal(first, grow(TaskLevel.of(tasks), verts, target))
    sip, six, siw = subgraph(lv, verts)
    csr = sp.csr_matrix((siw, six, sip), shape=(lv.n, lv.n))
    split = spectral_split(csr, lv.vw, target)
    order = fiedler_order(csr, lv.n)
    assert (split is None) == (order is None)
    if split is not None:
        assert np.array_equal(split, _prefix(order, lv.vw, target))
        w_in = float(lv.vw[split].sum())  # the prefix is within a task of the target
        assert abs(w_in - target) <= float(lv.vw.max()) + 1e-9
