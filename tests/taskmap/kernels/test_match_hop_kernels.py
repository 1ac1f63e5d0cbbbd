"""The heavy-edge matching and hop-distance kernels of ``coalloc.taskmap._multilevel``
(issue 40, h60cpu) against their NumPy twins in ``coalloc.taskmap._reference.multilevel``:
exact parity on random inputs, each also checked by an independent referee (a matching's
rules re-checked pair by pair; SciPy's breadth-first distances)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

import coalloc.taskmap as tm
from coalloc.taskmap import _multilevel as K
from coalloc.taskmap import bisection, levels
from coalloc.taskmap._reference import multilevel as R

from ._graphs import random_resources


def _random_graph(rng, n, spread=False):
    """A symmetric CSR with ties among the weights (equal pair weights: the first wins);
    ``spread``: each pair's weight times a random factor (not dyadic: sums show their
    order)."""
    w = rng.choice([0.0, 1.0, 0.5, 3.25, 3.25], (n, n)) * (rng.random((n, n)) < 0.3)
    w = np.triu(w * rng.uniform(0.1, 3.0, (n, n)) if spread else w, 1)
    tasks = tm.TaskGraph(np.ones(n), w + w.T)
    return tuple(np.asarray(a) for a in tasks.undirected_csr())


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_match_heavy_matches_twin(seed):
    """The compiled matching equals the twin's (the loop ``coarsen_level`` ran) bit for bit;
    referee: every pair is mutual, within ``max_w``, joined by an edge, and each vertex's
    partner was its heaviest free neighbour when it was visited (replayed here)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_graph(rng, n)
    vw = rng.choice([0.5, 1.0, 2.0, 3.0], n)
    max_w = float(rng.choice([1.0, 2.5, 4.0, np.inf]))
    order = rng.permutation(n).astype(np.int64)
    if rng.random() < 0.3:  # a partial order: the unvisited stay -1
        order = order[: int(rng.integers(0, n + 1))]
    got = K.match_heavy(K.Level(ip, ix, iw), vw, max_w, order)
    want = R.match_heavy(R.Level(ip, ix, iw), vw, max_w, order)
    assert got.dtype == np.int64 and np.array_equal(got, want)
    match = np.full(n, -1)
    for v in order.tolist():  # referee: the rule, replayed without NumPy's argmax
        if match[v] >= 0:
            continue
        best, best_w = v, None
        for q in range(ip[v], ip[v + 1]):
            u = int(ix[q])
            if match[u] < 0 and u != v and vw[u] + vw[v] <= max_w:
                if best_w is None or iw[q] > best_w:
                    best, best_w = u, iw[q]
        match[v], match[best] = best, v
    assert np.array_equal(got, match)
    for v in range(n):
        if got[v] >= 0:
            assert got[got[v]] == v


def test_match_heavy_rejects_bad_arguments():
    """Bad lengths and vertices are refused (ValueError), as by the twin."""
    ip, ix, iw = np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0, 1.0])
    for mod in (K, R):
        lv = mod.Level(ip, ix, iw)
        with pytest.raises(ValueError, match="vw"):
            mod.match_heavy(lv, np.ones(3), 5.0, np.arange(2))
        with pytest.raises(ValueError, match="order"):
            mod.match_heavy(lv, np.ones(2), 5.0, np.array([0, 2]))


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_hop_distances_match_twin_and_scipy(seed):
    """The compiled breadth-first distances equal the twin's bit for bit and SciPy's
    unweighted shortest paths (explicit zero entries are edges for all three), on graphs
    with several components; and ``bisection.hop_distances`` gives them with the kernel
    and without it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    ip, ix, iw = _random_graph(rng, n) if n <= 60 else _sparse_graph(rng, n)
    src = int(rng.integers(0, n))
    got = K.hop_distances(ip, ix, src)
    want = R.hop_distances(ip, ix, src)
    assert got.dtype == np.float64 and np.array_equal(got, want)
    ref = csgraph.shortest_path(sp.csr_matrix((iw, ix, ip), shape=(n, n)), unweighted=True,
                                directed=False, indices=src)  # fmt: skip
    ref[~np.isfinite(ref)] = -1
    assert np.array_equal(got, ref)
    old = bisection.HOP_KERNEL
    try:
        for flag in (True, False):
            bisection.HOP_KERNEL = flag
            assert np.array_equal(bisection.hop_distances((ip, ix, iw), src), ref)
    finally:
        bisection.HOP_KERNEL = old


def _sparse_graph(rng, n):
    """A larger symmetric CSR (about 3 neighbours a vertex; explicit zero weights kept)."""
    m = 3 * n // 2
    pairs = np.unique(np.sort(rng.integers(0, n, (m, 2)), axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    w = rng.choice([0.0, 1.0, 2.0], pairs.shape[0])
    rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
    cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
    a = sp.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n, n))
    a.sort_indices()
    return a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data


def test_hop_distances_reject_bad_arguments():
    """A source out of range or a broken CSR is refused (ValueError), as by the twin."""
    ip, ix = np.array([0, 1, 2]), np.array([1, 0])
    for mod in (K, R):
        with pytest.raises(ValueError, match="src"):
            mod.hop_distances(ip, ix, 2)
        with pytest.raises(ValueError, match="indices"):
            mod.hop_distances(ip, np.array([1, 5]), 0)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_coarsen_level_same_with_and_without_the_kernel(seed, draws):
    """``coarsen_level`` gives the same coarse level and map with ``MATCH_KERNEL`` on and
    off, and leaves the generator in the same state (the same random stream after)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    ip, ix, iw = _random_graph(rng, n)
    vw = rng.choice([0.5, 1.0, 2.0], n)
    max_w = float(rng.choice([1.5, 3.0, 100.0]))
    out = []
    old = levels.MATCH_KERNEL
    try:
        for flag in (True, False):
            levels.MATCH_KERNEL = flag
            lv = levels.TaskLevel(ip, ix, iw, vw)
            g = np.random.default_rng(seed + 1)
            coarse = levels.coarsen_level(lv, max_w, g)
            tail = g.random(3) if draws else None
            out.append((coarse, lv.cmap, tail))
    finally:
        levels.MATCH_KERNEL = old
    (a, ma, ta), (b, mb, tb) = out
    assert (a is None) == (b is None)
    if a is not None:
        for x, y in ((a.ip, b.ip), (a.ix, b.ix), (a.iw, b.iw), (a.vw, b.vw), (ma, mb)):
            assert np.array_equal(x, y)
    if draws:
        assert np.array_equal(ta, tb)


def _random_topology(rng):
    """The multilevel mapper's topology of a random connected resource graph with cycles
    (equal-length routes) and routers."""
    from coalloc.taskmap.hierarchy import topology

    return topology(random_resources(rng, most=16))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_apply_move_matches_twin_and_refresh(seed):
    """A sequence of random moves by the compiled ``apply_move`` leaves the mapping and the
    loads equal bit for bit to the twin's; referee: ``RefineState.refresh`` recomputes the
    loads from scratch (equal up to rounding), and ``RefineState.move`` with the kernel and
    without it gives the same arrays."""
    from coalloc.taskmap import refinement
    from coalloc.taskmap.refinement import RefineState

    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 30))
    ip, ix, iw = _random_graph(rng, n, spread=True)
    vw = rng.choice([0.0, 1.0, 2.5], n)
    lv = levels.TaskLevel(ip, ix, iw, vw)
    m0 = rng.integers(0, topo.P, n).astype(np.int64)
    moves = [(int(rng.integers(0, n)), int(rng.integers(0, topo.P))) for _ in range(12)]
    states = []
    old = refinement.MOVE_KERNEL
    try:
        for flag in (True, False):
            refinement.MOVE_KERNEL = flag
            state = RefineState(topo, lv, m0)
            for t, b in moves:
                state.move(t, b)
            states.append(state)
    finally:
        refinement.MOVE_KERNEL = old
    k_state, n_state = states
    for x, y in ((k_state.m, n_state.m), (k_state.lload, n_state.lload),
                 (k_state.nload, n_state.nload)):  # fmt: skip
        assert np.array_equal(x, y)
    m, lload = m0.copy(), np.zeros(topo.E)
    nload = np.bincount(m0, weights=vw, minlength=topo.P).astype(np.float64)
    m2, lload2, nload2 = m.copy(), lload.copy(), nload.copy()
    kl, rl = K.Level(ip, ix, iw), R.Level(ip, ix, iw)
    rr = R.PairRoutes(topo.rptr, topo.rlink, topo.E)
    for t, b in moves:
        K.apply_move(kl, topo.routes, m, lload, nload, float(vw[t]), t, b)
        R.apply_move(rl, rr, m2, lload2, nload2, float(vw[t]), t, b)
    assert np.array_equal(m, m2) and np.array_equal(lload, lload2)
    assert np.array_equal(nload, nload2)
    fresh = RefineState(topo, lv, m)  # referee: the loads of the final mapping from scratch
    ref_l = lload + RefineState(topo, lv, m0).lload  # (the moves' deltas on m0's loads)
    assert np.allclose(fresh.lload, ref_l, atol=1e-9) and np.allclose(fresh.nload, nload)


def test_apply_move_refuses_arrays_it_could_not_update():
    """A converted copy would lose the update: a wrong dtype, a read-only array or a wrong
    length is refused (ValueError) before anything changes, by the kernel and the twin."""
    from coalloc.taskmap.generators import hierarchical_cluster
    from coalloc.taskmap.hierarchy import topology
    from coalloc.taskmap.refinement import RefineState

    topo = topology(hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1))
    ip, ix, iw = np.array([0, 1, 2]), np.array([1, 0]), np.array([4.0, 4.0])
    rr = R.PairRoutes(topo.rptr, topo.rlink, topo.E)
    start = RefineState(topo, levels.TaskLevel(ip, ix, iw, np.ones(2)), np.array([0, 1]))
    for mod, lv, routes in ((K, K.Level(ip, ix, iw), topo.routes), (R, R.Level(ip, ix, iw), rr)):
        m, lload, nload = np.array([0, 1]), start.lload.copy(), np.array([1.0, 1.0])
        with pytest.raises(ValueError, match="m must"):
            mod.apply_move(lv, routes, m.astype(np.int32), lload, nload, 1.0, 1, 0)
        ro = lload.copy()
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="lload must"):
            mod.apply_move(lv, routes, m, ro, nload, 1.0, 1, 0)
        with pytest.raises(ValueError, match="nload must"):
            mod.apply_move(lv, routes, m, lload, np.ones(3), 1.0, 1, 0)
        assert m.tolist() == [0, 1] and np.array_equal(lload, start.lload) and lload.any()
        mod.apply_move(lv, routes, m, lload, nload, 1.0, 1, 0)  # both on one: no stream out
        assert m.tolist() == [0, 0] and nload.tolist() == [2.0, 0.0] and not lload.any()
