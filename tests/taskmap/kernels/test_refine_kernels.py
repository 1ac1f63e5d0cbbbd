"""The refinement kernels of ``coalloc.taskmap._multilevel`` added for issue 40 (h63cpu):
``expand``, ``destinations``, ``best_move``, ``loads``, ``cut_pass``, ``cross_gains``,
``bottleneck_tasks``, ``bisect_block``, ``link_pick``, ``pick_move``, ``swap_table``,
``eject_screen`` and ``swap_screen`` against their NumPy twins in
``coalloc.taskmap._reference.refine``: exact parity on random inputs (ties, non-dyadic
weights, repeated and colliding set members), each also checked by an independent referee,
and the refinement with the knobs on and off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import _multilevel as K
from coalloc.taskmap import levels, refinement
from coalloc.taskmap._reference import multilevel as RM
from coalloc.taskmap._reference import refine as R

from ._graphs import random_resources


def _random_graph(rng, n):
    """A symmetric CSR with equal weights (ties) and non-dyadic ones (sums show order)."""
    w = rng.choice([0.0, 1.0, 0.5, 3.25], (n, n)) * (rng.random((n, n)) < 0.35)
    w = np.triu(w * np.where(rng.random((n, n)) < 0.5, rng.uniform(0.1, 3.0, (n, n)), 1.0), 1)
    tasks = tm.TaskGraph(np.ones(n), w + w.T)
    return tuple(np.asarray(a) for a in tasks.undirected_csr())


def _random_topology(rng):
    from coalloc.taskmap.hierarchy import topology

    return topology(random_resources(rng, most=16))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_expand_matches_twin_and_a_loop(seed):
    """The compiled ``expand`` equals its twin (the NumPy code) and a plain loop, dtype and
    all; ``levels.expand`` gives the same with the knob on and off."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(0, 12))
    starts = rng.integers(-5, 50, k).astype(np.int64)
    lens = rng.integers(0, 5, k).astype(np.int64) * (rng.random(k) < 0.8)
    got = K.expand(starts, lens)
    want = R.expand(starts, lens)
    loop_i = [s + j for s, n in zip(starts.tolist(), lens.tolist()) for j in range(n)]
    loop_o = [r for r, n in enumerate(lens.tolist()) for _ in range(n)]
    for a, b, c in zip(got, want, (loop_i, loop_o)):
        assert a.dtype == b.dtype == np.int64 and np.array_equal(a, b) and a.tolist() == c
    old = levels.EXPAND_KERNEL
    try:
        outs = []
        for flag in (True, False):
            levels.EXPAND_KERNEL = flag
            outs.append(levels.expand(starts, lens))
    finally:
        levels.EXPAND_KERNEL = old
    for a, b in zip(*outs):
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_expand_rejects_bad_arguments():
    """Negative lengths and unequal lengths are refused (ValueError), by both."""
    for mod in (K, R):
        with pytest.raises(ValueError, match="lens"):
            mod.expand(np.array([0, 1]), np.array([1, -1]))
        with pytest.raises(ValueError, match="starts"):
            mod.expand(np.array([0, 1, 2]), np.array([1, 1]))


def _one_task(nbs, a):
    """A level whose vertex 0 has the neighbours 1..len(nbs), mapped to ``nbs``; vertex 0
    on ``a``."""
    k = len(nbs)
    ip = np.array([0, k] + [k] * k, dtype=np.int64)
    ix = np.arange(1, k + 1, dtype=np.int64)
    return (ip, ix, np.ones(k)), np.array([a, *nbs], dtype=np.int64)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_destinations_follow_python_sets(seed):
    """The compiled ``destinations`` lists every task's destinations in the order of
    Python's own set built the same way (the twin): members that collide in the table
    (equal remainders modulo its size), repeats, sets that grow the table, large
    processor numbers; referee: the same members as the set of the rule."""
    rng = np.random.default_rng(seed)
    p = int(rng.choice([2, 3, 9, 64, 300, 5000]))
    stride = int(rng.choice([1, 8, 16, 32, 64]))
    pool = np.unique(rng.integers(0, max(1, p // stride), 60) * stride % p)
    nbs = rng.choice(pool, int(rng.integers(0, 60))).tolist()
    a = int(rng.integers(0, p))
    light = rng.choice(pool, int(rng.integers(0, 10))).astype(np.int64)
    csr, m = _one_task(nbs, a)
    tasks = np.array([0], dtype=np.int64)
    rt, rb = K.destinations(K.Level(*csr), m, tasks, light, p)
    rt2, rb2 = R.destinations(RM.Level(*csr), m, tasks, light, p)
    assert rt.dtype == rb.dtype == np.int64
    assert np.array_equal(rt, rt2) and rb.tolist() == rb2.tolist()
    want = set(nbs) | set(light.tolist()) | {b for b in (a - 1, a + 1) if 0 <= b < p}
    assert sorted(rb.tolist()) == sorted(want - {a}) and set(rt.tolist()) <= {0}


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_destinations_match_twin_on_random_levels(seed):
    """Several tasks of a random level, each its own set, one after another."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    p = int(rng.integers(1, 80))
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, p, n).astype(np.int64)
    tasks = rng.choice(n, int(rng.integers(0, n + 1)), replace=False).astype(np.int64)
    light = rng.integers(0, p, int(rng.integers(0, 9))).astype(np.int64)
    got = K.destinations(K.Level(ip, ix, iw), m, tasks, light, p)
    want = R.destinations(RM.Level(ip, ix, iw), m, tasks, light, p)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    for mod in (K, R):  # refused: a processor out of range
        with pytest.raises(ValueError, match="light"):
            mod.destinations((K if mod is K else RM).Level(ip, ix, iw), m, tasks, np.array([p]), p)


def _scores(rng, topo, n):
    """A random level, mapping, loads and candidate moves with their processor parts."""
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    lload = rng.choice([0.0, 1.0, 2.5, 7.3], topo.E) * rng.choice([1.0, 1.1], topo.E)
    k = int(rng.integers(1, 40))
    rt = np.sort(rng.integers(0, n, k)).astype(np.int64)
    rb = rng.integers(0, topo.P, k).astype(np.int64)
    node_part = rng.choice([0.0, 0.5, 1.0, 2.0, 3.7, 9.0, np.inf], k)
    if rng.random() < 0.1:
        node_part[int(rng.integers(0, k))] = np.nan
    return (ip, ix, iw), m, lload, rt, rb, node_part


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_best_move_matches_twin_and_full_scores(seed):
    """The compiled ``best_move`` picks the twin's move with its score (ties among equal
    scores: the first; a NaN part: NumPy's argmin), though it scores only the candidates
    that can win; referee: the argmin of the scores from ``score_moves`` for all."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 25))
    csr, m, lload, rt, rb, node_part = _scores(rng, topo, n)
    link = int(rng.integers(-1, topo.E)) if topo.E else -1
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    got = K.best_move(K.Level(*csr), topo.routes, m, lload, topo.bw, rt, rb, node_part, link,
                      1e-12)  # fmt: skip
    want = R.best_move(RM.Level(*csr), rr, m, lload, topo.bw, rt, rb, node_part, link, 1e-12)
    assert got[0] == want[0]
    assert got[1] == want[1] or (np.isnan(got[1]) and np.isnan(want[1]))
    up, dv = K.score_moves(K.Level(*csr), topo.routes, m, lload, topo.bw, rt, rb, link, 1e-12)
    with np.errstate(invalid="ignore"):
        s = np.maximum(up, node_part)
        if link >= 0:
            s = np.maximum(s, (lload[link] + dv) / topo.bw[link])
            s = np.where(dv < -1e-12 * (1 + lload[link]), s, np.inf)
    assert got[0] == int(np.argmin(s))


def test_best_move_rejects_bad_arguments():
    """An empty candidate list and a wrong length of the parts are refused, by both."""
    from coalloc.taskmap.generators import hierarchical_cluster
    from coalloc.taskmap.hierarchy import topology

    topo = topology(hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1))
    ip, ix, iw = np.array([0, 1, 2]), np.array([1, 0]), np.array([4.0, 4.0])
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    m, lload = np.array([0, 1]), np.zeros(topo.E)
    for mod, routes in ((K, topo.routes), (R, rr)):
        lv = (K if mod is K else RM).Level(ip, ix, iw)
        with pytest.raises(ValueError, match="rt"):
            mod.best_move(lv, routes, m, lload, topo.bw, np.zeros(0, dtype=np.int64),
                          np.zeros(0, dtype=np.int64), np.zeros(0), -1, 1e-12)  # fmt: skip
        with pytest.raises(ValueError, match="node_part"):
            mod.best_move(lv, routes, m, lload, topo.bw, np.array([0]), np.array([1]),
                          np.zeros(2), -1, 1e-12)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_loads_match_twin_and_a_loop(seed):
    """The compiled ``loads`` equal the twin's (the NumPy code of ``refresh``) bit for bit;
    referee: a plain loop over the pairs (equal up to rounding)."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 30))
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    vw = rng.uniform(0.1, 3.0, n)
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    nl, ll = K.loads(K.Level(ip, ix, iw), topo.routes, m, vw)
    nl2, ll2 = R.loads(RM.Level(ip, ix, iw), rr, m, vw)
    assert np.array_equal(nl, nl2) and np.array_equal(ll, ll2)
    ref_n, ref_l = np.zeros(topo.P), np.zeros(topo.E)
    for s in range(n):
        ref_n[m[s]] += vw[s]
        for q in range(ip[s], ip[s + 1]):
            u = int(ix[q])
            pair = m[s] * topo.P + m[u]
            if s < u and m[s] != m[u]:
                ref_l[topo.rlink[topo.rptr[pair] : topo.rptr[pair + 1]]] += iw[q]
    assert np.allclose(nl, ref_n) and np.allclose(ll, ref_l)
    for mod, routes in ((K, topo.routes), (R, rr)):  # refused: a processor out of range
        with pytest.raises(ValueError, match="m must"):
            mod.loads((K if mod is K else RM).Level(ip, ix, iw), routes, np.full(n, topo.P), vw)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_cut_pass_matches_twin(seed):
    """One compiled ``cut_pass`` changes the mapping as the twin's (the NumPy and Python
    pass of ``cut_refine``), returns the same moves and loads and polls as often, before
    the moves; referee: every move made
    went to a neighbour's processor, none of two neighbours both moved, the loads are the
    start's plus the moves', and the route cost fell."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_graph(rng, n)
    m0 = rng.integers(0, topo.P, n).astype(np.int64)
    vw = rng.choice([0.5, 1.0, 2.0], n)
    nload = np.bincount(m0, weights=vw, minlength=topo.P).astype(np.float64)
    ub = nload + rng.choice([0.0, 0.5, 1.0, 5.0], topo.P)
    m1, m2 = m0.copy(), m0.copy()
    chunk = int(rng.choice([0, 1, 3, 8, 1 << 16]))
    polls: tuple = ([], [])
    a1, n1 = K.cut_pass(K.Level(ip, ix, iw), m1, nload, vw, topo.cost, ub, chunk,
                        lambda: polls[0].append(np.array_equal(m1, m0)))  # fmt: skip
    a2, n2 = R.cut_pass(RM.Level(ip, ix, iw), m2, nload, vw, topo.cost, ub, chunk,
                        lambda: polls[1].append(np.array_equal(m2, m0)))  # fmt: skip
    assert a1 == a2 and np.array_equal(m1, m2)
    assert polls[0] == polls[1] and all(polls[0])  # the same polls, all before any move
    assert (n1 is None) == (n2 is None) and (n1 is None or np.array_equal(n1, n2))
    moved = np.flatnonzero(m1 != m0)
    assert len(moved) == max(a1, 0)
    rows = np.repeat(np.arange(n), np.diff(ip))
    for t in moved.tolist():
        assert m1[t] in m0[ix[ip[t] : ip[t + 1]]].tolist()
        assert not np.isin(ix[ip[t] : ip[t + 1]], moved).any()
    if n1 is not None:
        assert np.allclose(n1, np.bincount(m1, weights=vw, minlength=topo.P))

    def cost(m):
        return float((iw * topo.cost[m[rows], m[ix]]).sum())

    assert cost(m1) <= cost(m0) + 1e-9


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_cross_gains_match_twin_and_a_loop(seed):
    """The compiled ``cross_gains`` equals its twin (the NumPy code of
    ``sumrefine._cross_gains``), dtypes and order; referee: each gain is the route cost
    saved by the move alone, every boundary move is listed (``positive=False``), and the
    gains come most first."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    positive = bool(rng.random() < 0.5)
    got = K.cross_gains(K.Level(ip, ix, iw), m, topo.cost, positive, 1e-12)
    want = R.cross_gains(RM.Level(ip, ix, iw), m, topo.cost, positive, 1e-12)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    rows = np.repeat(np.arange(n), np.diff(ip))
    moves = {(int(rows[q]), int(m[ix[q]])) for q in range(ix.shape[0]) if m[rows[q]] != m[ix[q]]}
    ct, cb, g = got
    if not positive:
        assert set(zip(ct.tolist(), cb.tolist())) == moves and len(ct) == len(moves)
    assert np.all(np.diff(g) <= 0)
    for t, b, gain in zip(ct.tolist(), cb.tolist(), g.tolist()):
        nb = m[ix[ip[t] : ip[t + 1]]]
        want_g = float((iw[ip[t] : ip[t + 1]] * (topo.cost[m[t], nb] - topo.cost[b, nb])).sum())
        assert gain == pytest.approx(want_g, rel=1e-9, abs=1e-9)


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_bottleneck_tasks_match_twin_and_a_loop(seed):
    """The compiled ``bottleneck_tasks`` equals its twin (the NumPy code of
    ``refinement._bottleneck_tasks``) on a processor and on a link, with ties and few or
    many candidates, and leaves the scratch mask zeroed; referee: the tasks are the rule's
    (on the processor with positive weight; sending across the link), most volume first."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    vw = rng.choice([0.0, 1.0, 2.0], n)
    link = bool(rng.random() < 0.5 and topo.E)
    idx = int(rng.integers(0, topo.E if link else topo.P))
    n_cand = int(rng.choice([0, 1, 3, 24]))
    marks = np.zeros(topo.P * topo.P, dtype=bool), np.zeros(topo.P * topo.P, dtype=bool)
    got = K.bottleneck_tasks(K.Level(ip, ix, iw), m, vw, topo.lptr, topo.lpairs, marks[0],
                             link, idx, n_cand)  # fmt: skip
    want = R.bottleneck_tasks(RM.Level(ip, ix, iw), m, vw, topo.lptr, topo.lpairs, marks[1],
                              link, idx, n_cand)  # fmt: skip
    assert got.dtype == want.dtype == np.int64 and np.array_equal(got, want)
    assert not marks[0].any() and not marks[1].any() and len(got) <= n_cand
    rows = np.repeat(np.arange(n), np.diff(ip))
    if link:
        pairs = set(topo.lpairs[topo.lptr[idx] : topo.lptr[idx + 1]].tolist())
        send = [q for q in range(ix.shape[0]) if int(m[rows[q]] * topo.P + m[ix[q]]) in pairs]
        vol = np.bincount(rows[send], weights=iw[send], minlength=n)
        pool = set(np.flatnonzero(vol).tolist())
    else:
        vol = np.array([iw[ip[v] : ip[v + 1]][m[ix[ip[v] : ip[v + 1]]] != idx].sum()
                        for v in range(n)])  # fmt: skip
        pool = {v for v in range(n) if m[v] == idx and vw[v] > 0}
    assert set(got.tolist()) <= pool and len(got) == min(n_cand, len(pool))
    left = pool - set(got.tolist())
    if got.shape[0] and left:
        assert vol[got].min() >= max(vol[list(left)]) - 1e-6


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_refine_and_cut_refine_with_the_knobs_on_and_off(seed):
    """``refine`` and ``cut_refine`` leave the same mapping and loads, bit for bit, with the
    h63cpu kernels on and off (the Python paths they replace)."""
    from coalloc.taskmap.refinement import RefineState

    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(2, 40))
    ip, ix, iw = _random_graph(rng, n)
    lv = levels.TaskLevel(ip, ix, iw, rng.choice([0.5, 1.0, 2.0, 3.3], n))
    m0 = rng.integers(0, topo.P, n).astype(np.int64)
    share = rng.choice([1.0, 2.0], topo.P)
    knobs = ("DEST_KERNEL", "BEST_MOVE_KERNEL", "LOADS_KERNEL", "CUT_KERNEL", "TASKS_KERNEL",
             "PICK_KERNEL")
    old = {k: getattr(refinement, k) for k in knobs} | {"x": levels.EXPAND_KERNEL}
    out = []
    try:
        for flag in (True, False):
            for k in knobs:
                setattr(refinement, k, flag)
            levels.EXPAND_KERNEL = flag
            state = RefineState(topo, lv, m0)
            c = refinement.cut_refine(state, np.arange(topo.P), share)
            r = refinement.refine(state, 60)
            out.append((c, r, state.m.copy(), state.nload.copy(), state.lload.copy()))
    finally:
        for k in knobs:
            setattr(refinement, k, old[k])
        levels.EXPAND_KERNEL = old["x"]
    (c1, r1, *a1), (c2, r2, *a2) = out
    assert (c1, r1) == (c2, r2)
    assert all(np.array_equal(x, y) for x, y in zip(a1, a2))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_bisect_block_matches_twin(seed):
    """The compiled ``bisect_block`` writes the twin's mapping (the Python recursion of
    ``bisect_map``'s fast splits): blocks of up to 300 positions and 400 tasks (NumPy's
    pairwise sums above 8 and 128 terms), equal gaps (ties of the split point), unequal
    shares and weights; referee: every vertex lands in the block, each position's load is
    near its share."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([1, 2, 9, 60, 400]))
    s_len = int(rng.choice([1, 2, 3, 8, 17, 300]))
    w = (rng.random((n, n)) < min(1.0, 6.0 / n)) * rng.uniform(0.1, 3.0, (n, n))
    w = np.triu(w, 1)
    ip, ix, iw = (np.asarray(a) for a in tm.TaskGraph(np.ones(n), w + w.T).undirected_csr())
    vw = rng.choice([0.5, 1.0, 1.7], n)
    gap = rng.choice([1.0, 1.0, 2.0, 5.0], max(s_len - 1, 0))
    sh = rng.choice([1.0, 2.0, 3.0], s_len) * rng.uniform(0.5, 1.5, s_len)
    subset = np.sort(rng.choice(1000, s_len, replace=False)).astype(np.int64)
    lo = int(rng.integers(0, s_len))
    hi = int(rng.integers(lo + 1, s_len + 1))
    verts = rng.permutation(n)[: int(rng.integers(0, n + 1))].astype(np.int64)
    m1, m2 = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    K.bisect_block(K.Level(ip, ix, iw), verts, lo, hi, gap, sh, subset, vw, m1, 4)
    R.bisect_block(RM.Level(ip, ix, iw), verts, lo, hi, gap, sh, subset, vw, m2, 4)
    assert np.array_equal(m1, m2)
    rest = np.setdiff1d(np.arange(n), verts)
    assert (m1[rest] == -1).all() and np.isin(m1[verts], subset[lo:hi]).all()
    if verts.shape[0] > 40 * (hi - lo):  # many tasks a position: loads follow the shares
        load = np.array([vw[verts][m1[verts] == subset[j]].sum() for j in range(lo, hi)])
        want = vw[verts].sum() * sh[lo:hi] / sh[lo:hi].sum()
        assert np.allclose(load, want, rtol=0.5, atol=5 * vw.max())


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_bisect_map_with_the_block_kernel_on_and_off(seed, full):
    """``bisect_map`` gives the same mapping with ``BLOCK_KERNEL`` on and off (the Python
    recursion calling ``grow`` for every split) on hierarchical clusters with unequal
    speeds, ``full`` on (slow splits in Python, the fast blocks compiled) and off."""
    from coalloc.taskmap import bisection, generators
    from coalloc.taskmap.hierarchy import topology

    rng = np.random.default_rng(seed)
    res = generators.hierarchical_cluster(
        n_racks=int(rng.integers(1, 3)), nodes_per_rack=int(rng.integers(1, 4)),
        cores_per_node=int(rng.integers(1, 9)), speed=(1.0, 3.0), seed=int(seed % 1000),
    )  # fmt: skip
    topo = topology(res)
    n = int(rng.integers(2, 120))
    ip, ix, iw = _random_graph(rng, n)
    lv = levels.TaskLevel(ip, ix, iw, rng.choice([0.5, 1.0, 2.0], n))
    share = topo.cap / topo.cap.max()
    subset = np.arange(topo.P, dtype=np.int64)
    old = bisection.BLOCK_KERNEL
    out = []
    try:
        for flag in (True, False):
            bisection.BLOCK_KERNEL = flag
            out.append(bisection.bisect_map(topo, lv, subset, share, full=full))
    finally:
        bisection.BLOCK_KERNEL = old
    assert np.array_equal(out[0], out[1])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_link_pick_matches_twin_and_full_scores(seed):
    """The compiled ``link_pick`` picks the twin's move (``score_moves`` for all, then the
    first by (over, the change of the link's load, index) among those below ``thr``), with
    masked loads (-1e30: ignored rises), ties of the load change and ``over`` both ways;
    referee: that move's ``up`` is below ``thr`` and its load change equals
    ``score_moves``'."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    if not topo.E:
        return
    n = int(rng.integers(1, 25))
    csr, m, lload, rt, rb, _ = _scores(rng, topo, n)
    lload = np.where(rng.random(topo.E) < 0.2, -1e30, lload)
    link = int(rng.integers(0, topo.E))
    over = rng.random(rt.shape[0]) < 0.3
    thr = float(rng.choice([0.5, 2.0, 5.0, 1e9]))
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    got = K.link_pick(K.Level(*csr), topo.routes, m, lload, topo.bw, rt, rb, link, 1e-12,
                      over, thr, topo.lptr, topo.lpairs)  # fmt: skip
    want = R.link_pick(RM.Level(*csr), rr, m, lload, topo.bw, rt, rb, link, 1e-12, over, thr,
                       topo.lptr, topo.lpairs)  # fmt: skip
    assert got == want
    up, dv = K.score_moves(K.Level(*csr), topo.routes, m, lload, topo.bw, rt, rb, link, 1e-12)
    if got < 0:
        assert not (up < thr).any()
    else:
        assert up[got] < thr
        better = (up < thr) & ((over < over[got]) | ((over == over[got]) & (dv < dv[got])))
        assert not better.any()


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_pick_move_matches_twin(seed):
    """The compiled ``pick_move`` picks the twin's move with its score (the processors'
    parts as refine's NumPy code, the moves kept, ``best_move``), off a processor and off a
    link, with weights of 0 (not moved off a processor) and limits that keep none; referee:
    the pick is kept (its processors' part below the limit) and its score is the argmin's."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 25))
    csr, m, lload, rt, rb, _ = _scores(rng, topo, n)
    vw = rng.choice([0.0, 1.0, 2.5], n)
    nload = np.bincount(m, weights=vw, minlength=topo.P).astype(np.float64)
    link = int(rng.integers(-1, topo.E)) if topo.E and rng.random() < 0.5 else -1
    idx = int(rng.integers(0, topo.P))
    limit = float(rng.choice([0.5, 2.0, 6.0, 1e9]))
    args = (m, nload, lload, topo.cap, topo.bw, vw, rt, rb, link, idx, limit, 1e-12)
    got = K.pick_move(K.Level(*csr), topo.routes, *args)
    want = R.pick_move(RM.Level(*csr), RM.PairRoutes(topo.rptr, topo.rlink, topo.E), *args)
    assert got[0] == want[0] and got[1] == want[1]
    if got[0] >= 0:
        t, b = int(rt[got[0]]), int(rb[got[0]])
        part = max((nload[b] + vw[t]) / topo.cap[b], (nload[m[t]] - vw[t]) / topo.cap[m[t]])
        assert part < limit and got[1] >= part


@settings(max_examples=120, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_swap_table_matches_twin_and_a_loop(seed):
    """The compiled ``swap_table`` equals its twin (the NumPy code of
    ``sumrefine._swap_table``), dtypes included, with repeated pairs and processors without
    tasks; referee: each pair's tasks are those on its ``b``, each gain is the route cost
    the task saves moving alone to the pair's ``a``, ``largest`` their maximum."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    k = int(rng.integers(1, 12))
    t = rng.integers(0, n, k).astype(np.int64)
    b = rng.integers(0, topo.P, k).astype(np.int64)
    got = K.swap_table(K.Level(ip, ix, iw), m, topo.cost, t, b)
    want = R.swap_table(RM.Level(ip, ix, iw), m, topo.cost, t, b)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y)
    pair_of, offsets, tasks, gains, largest = got
    pairs = sorted({(int(bb), int(m[tt])) for tt, bb in zip(t, b)})
    for i in range(k):
        assert pairs[pair_of[i]] == (int(b[i]), int(m[t[i]]))
    for j, (pb, pa) in enumerate(pairs):
        on = tasks[offsets[j] : offsets[j + 1]]
        assert on.tolist() == np.flatnonzero(m == pb).tolist()
        for u, g in zip(on.tolist(), gains[offsets[j] : offsets[j + 1]].tolist()):
            nb = m[ix[ip[u] : ip[u + 1]]]
            want_g = (iw[ip[u] : ip[u + 1]] * (topo.cost[pb, nb] - topo.cost[pa, nb])).sum()
            assert g == pytest.approx(float(want_g), rel=1e-9, abs=1e-9)
        seg = gains[offsets[j] : offsets[j + 1]]
        assert largest[j] == (seg.max() if seg.shape[0] else -np.inf)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_eject_screen_matches_twin_and_a_loop(seed):
    """The compiled ``eject_screen`` gives the twin's verdicts (the NumPy code of
    ``sumrefine._eject_screen``), with loads at the cap (ties of the filters), touched and
    near tasks and few or many passing moves; referee: a plain loop over the rule."""
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(1, 30)), int(rng.integers(1, 8))
    m = rng.integers(0, p, n).astype(np.int64)
    vw = rng.choice([0.5, 1.0, 2.0], n)
    cap = rng.choice([1.0, 2.0], p)
    nload = np.bincount(m, weights=vw, minlength=p).astype(np.float64)
    limit = float(rng.choice([0.5, 1.0, 2.0, 3.0]))
    touched, near = rng.random(n) < 0.2, rng.random(n) < 0.3
    k, r = int(rng.integers(0, 10)), int(rng.integers(0, 40))
    t, b = rng.integers(0, n, k).astype(np.int64), rng.integers(0, p, k).astype(np.int64)
    g_t = rng.choice([-1.0, 0.0, 0.5, 2.0], k)
    et, ec = rng.integers(0, n, r).astype(np.int64), rng.integers(0, p, r).astype(np.int64)
    eg = rng.choice([-2.0, -0.5, 0.0, 1.0], r)
    tries = int(rng.choice([1, 2, 8]))
    args = (m, vw, nload, cap, touched, near, t, b, g_t, et, ec, eg, limit, tries)
    got = K.eject_screen(*args)
    want = R.eject_screen(*args)
    assert got.dtype == want.dtype == np.bool_ and np.array_equal(got, want)
    for i in range(k):
        room = nload[b[i]] + vw[t[i]] - limit * cap[b[i]]
        passing = [j for j in range(r) if m[et[j]] == b[i] and ec[j] != m[t[i]]
                   and vw[et[j]] >= room and not touched[et[j]]
                   and nload[ec[j]] + vw[et[j]] <= limit * cap[ec[j]]
                   and eg[j] > -g_t[i]][:tries]  # fmt: skip
        ok = room > 0 and any(et[j] != t[i] and not near[et[j]] for j in passing)
        assert bool(got[i]) == ok


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_swap_screen_matches_twin_and_a_loop(seed):
    """The compiled ``swap_screen`` gives the twin's verdicts (the NumPy code of
    ``sumrefine._swap_screen``) on :func:`swap_table`'s tables, with partners that are
    neighbours (the volume between them counts) and touched ones; referee: a plain loop."""
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(1, 30))
    ip, ix, iw = _random_graph(rng, n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    vw = rng.choice([0.5, 1.0, 2.0], n)
    nload = np.bincount(m, weights=vw, minlength=topo.P).astype(np.float64)
    limit = float(rng.choice([0.5, 1.0, 3.0]))
    touched = rng.random(n) < 0.2
    k = int(rng.integers(1, 10))
    t = rng.integers(0, n, k).astype(np.int64)
    b = rng.integers(0, topo.P, k).astype(np.int64)
    g_t = rng.choice([-1.0, 0.0, 0.3, 2.0], k)
    table = K.swap_table(K.Level(ip, ix, iw), m, topo.cost, t, b)
    pair_of, offsets, tasks, gains, _ = table
    args = (m, vw, nload, topo.cap, topo.cost, touched, t, b, g_t, pair_of, offsets, tasks,
            gains, limit, 1e-12)  # fmt: skip
    got = K.swap_screen(K.Level(ip, ix, iw), *args)
    want = R.swap_screen(RM.Level(ip, ix, iw), *args)
    assert got.dtype == want.dtype == np.bool_ and np.array_equal(got, want)
    for i in range(k):
        a, j = int(m[t[i]]), int(pair_of[i])
        ok = False
        for u, gu in zip(tasks[offsets[j] : offsets[j + 1]].tolist(),
                         np.asarray(gains)[offsets[j] : offsets[j + 1]].tolist()):  # fmt: skip
            dw = vw[u] - vw[t[i]]
            fit = (nload[a] + dw <= max(limit * topo.cap[a], nload[a])
                   and nload[b[i]] - dw <= max(limit * topo.cap[b[i]], nload[b[i]]))  # fmt: skip
            w_tu = float(iw[ip[t[i]] : ip[t[i] + 1]][ix[ip[t[i]] : ip[t[i] + 1]] == u].sum())
            g = g_t[i] + gu - 2 * w_tu * topo.cost[a, b[i]]
            ok = ok or (g > 1e-12 * (1 + abs(g_t[i])) and fit and not touched[u])
        assert bool(got[i]) == ok
