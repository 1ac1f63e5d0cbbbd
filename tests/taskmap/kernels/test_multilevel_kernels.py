"""The compiled kernels of the multilevel method (coalloc.taskmap._multilevel) against their
NumPy twins (coalloc.taskmap._reference.multilevel): exact parity on random inputs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm

from ._graphs import random_resources as _random_resources

# ---------------------------------------------------------------- compiled kernels vs twins


def _random_level(rng, n):
    w = rng.choice([0.0, 1.0, 0.5, 3.25], (n, n)) * (rng.random((n, n)) < 0.3)
    w = np.triu(w, 1)
    tasks = tm.TaskGraph(np.ones(n), w + w.T)
    return tasks.undirected_csr()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_pair_routes_and_score_moves_match_twin(seed):
    """The compiled kernels of the multilevel mapper equal their NumPy twins bit for bit,
    and the pair routes equal the route table's walk of every pair."""
    from coalloc.taskmap import _multilevel as K
    from coalloc.taskmap._reference import multilevel as R
    from coalloc.taskmap.routing import route_table

    rng = np.random.default_rng(seed)
    res = _random_resources(rng)
    table = route_table(res)
    nodes = rng.permutation(res.processors).astype(np.int64)
    p = nodes.shape[0]
    rptr, rlink = K.pair_routes(table.pred, table.pred_link, table.proc_row, nodes)
    rptr2, rlink2 = R.pair_routes(table.pred, table.pred_link, table.proc_row, nodes)
    assert np.array_equal(rptr, rptr2) and np.array_equal(rlink, rlink2)
    for a in range(p):  # referee: the route table itself
        for b in range(p):
            got = rlink[rptr[a * p + b] : rptr[a * p + b + 1]]
            want = table.route(int(nodes[a]), int(nodes[b])) if a != b else []
            assert list(got) == list(want)
    n = int(rng.integers(1, 25))
    ip, ix, iw = _random_level(rng, n)
    m = rng.integers(0, p, n).astype(np.int64)
    lload = rng.choice([0.0, 1.0, 2.5, 7.0], res.n_links)
    bw = res.bandwidth.astype(np.float64)
    k = int(rng.integers(0, 30))
    rt = rng.integers(0, n, k).astype(np.int64)
    rb = rng.integers(0, p, k).astype(np.int64)
    link = int(rng.integers(-1, res.n_links))
    kr, rr = K.PairRoutes(rptr, rlink, res.n_links), R.PairRoutes(rptr, rlink, res.n_links)
    kl, rl = K.Level(ip, ix, iw), R.Level(ip, ix, iw)
    up, dv = K.score_moves(kl, kr, m, lload, bw, rt, rb, link, 1e-12)
    up2, dv2 = R.score_moves(rl, rr, m, lload, bw, rt, rb, link, 1e-12)
    assert np.array_equal(up, up2) and np.array_equal(dv, dv2)
    # referee for the scores: apply each move to a copy of the loads and read them back
    for i in range(k):
        t, b = int(rt[i]), int(rb[i])
        new = lload.copy()
        for q in range(ip[t], ip[t + 1]):
            u = int(m[ix[q]])
            for lk in rlink[rptr[b * p + u] : rptr[b * p + u + 1]]:
                new[lk] += iw[q]
            for lk in rlink[rptr[m[t] * p + u] : rptr[m[t] * p + u + 1]]:
                new[lk] -= iw[q]
        delta = new - lload
        rises = delta > 1e-12 * (1 + lload)
        want_up = float((new / bw)[rises].max()) if rises.any() else -np.inf
        assert up[i] == pytest.approx(want_up, rel=1e-12, abs=1e-12)
        assert dv[i] == pytest.approx(delta[link] if link >= 0 else 0.0, abs=1e-9)


def test_score_moves_rejects_bad_arguments():
    from coalloc.taskmap import _multilevel as K

    rptr = np.array([0, 0, 1, 1, 1], dtype=np.int64)  # P = 2, one link
    with pytest.raises(ValueError, match="rlink"):
        K.PairRoutes(rptr, np.array([3], dtype=np.int64), 1)
    with pytest.raises(ValueError, match="P \\* P"):
        K.PairRoutes(np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int64), 1)
    routes = K.PairRoutes(rptr, np.array([0], dtype=np.int64), 1)
    level = K.Level(np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0, 1.0]))
    ok = dict(lload=np.zeros(1), bw=np.ones(1), link=-1, tiny=1e-12)
    with pytest.raises(ValueError, match="rb"):
        K.score_moves(level, routes, np.array([0, 1]), rt=np.array([0]), rb=np.array([2]), **ok)
    with pytest.raises(ValueError, match="m must"):
        K.score_moves(level, routes, np.array([0, 5]), rt=np.array([0]), rb=np.array([1]), **ok)
    with pytest.raises(ValueError, match="ix"):
        K.Level(np.array([0, 1, 2]), np.array([1, 2]), np.array([1.0, 1.0]))
    up, dv = K.score_moves(
        level, routes, np.array([0, 1]), rt=np.array([0]), rb=np.array([1]), **ok
    )
    # task 0 joins its neighbour on processor 1: the stream 0-1 leaves link 0
    assert up.tolist() == [-np.inf] and dv.tolist() == [0.0]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(-1, 40), st.integers(0, 4))
def test_grow_fm_matches_twin(seed, start_vertex, passes):
    """The compiled bisection equals its twin bit for bit; referee: the FM passes never end
    with a larger cut than the side they start from (they roll back to the best prefix)."""
    from coalloc.taskmap import _multilevel as K
    from coalloc.taskmap._reference import multilevel as R

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_level(rng, n)
    wloc = rng.choice([0.0, 1.0, 1.0, 2.5], n)
    target = float(rng.uniform(0, 1) * wloc.sum())
    tol = max(float(wloc.max()), 0.02 * float(wloc.sum()))
    s0 = min(start_vertex, n - 1)
    start = rng.random(n) < 0.5
    got = K.grow_fm(ip, ix, iw, wloc, target, s0, tol, passes, start)
    want = R.grow_fm(ip, ix, iw, wloc, target, s0, tol, passes, start)
    assert got.dtype == bool and np.array_equal(got, want)
    if s0 == -1:
        rows = np.repeat(np.arange(n), np.diff(ip))

        def cut(side):
            return float(iw[side[rows] != side[ix]].sum()) / 2

        assert cut(got) <= cut(start) + 1e-9
    else:
        assert got.shape == (n,)
    with pytest.raises(ValueError, match="seed"):
        K.grow_fm(ip, ix, iw, wloc, target, n, tol, passes, start)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_bisect_small_matches_twin(seed):
    """The compiled bisection of an induced subgraph equals its twin bit for bit; referee:
    with the subgraph built by SciPy and the farthest vertex found by SciPy's BFS,
    ``grow_fm`` gives the same side."""
    import scipy.sparse as sp
    from scipy.sparse import csgraph

    from coalloc.taskmap import _multilevel as K
    from coalloc.taskmap._reference import multilevel as R

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_level(rng, n)
    verts = rng.permutation(n)[: int(rng.integers(1, n + 1))].astype(np.int64)
    wloc = rng.choice([0.0, 1.0, 2.5], verts.shape[0])
    target = float(rng.uniform(0, 1) * wloc.sum())
    tol = max(float(wloc.max()), 0.02 * float(wloc.sum()))
    got = K.bisect_small(K.Level(ip, ix, iw), verts, wloc, target, tol, 4)
    want = R.bisect_small(R.Level(ip, ix, iw), verts, wloc, target, tol, 4)
    assert np.array_equal(got, want)
    full = sp.csr_matrix((iw, ix, ip), shape=(n, n))
    sub = full[verts][:, verts]  # explicit zeros stay (they are edges)
    d = csgraph.shortest_path(sub, unweighted=True, directed=False, indices=0)
    d[~np.isfinite(d)] = -1
    ref = K.grow_fm(
        sub.indptr.astype(np.int64),
        sub.indices.astype(np.int64),
        sub.data,
        wloc,
        target,
        int(np.argmax(d)),
        tol,
        4,
        np.zeros(verts.shape[0], dtype=bool),
    )
    assert np.array_equal(got, ref)
