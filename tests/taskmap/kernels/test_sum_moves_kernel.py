"""The compiled loop of the sum step's single moves (issue 40, h64cpu):
``_multilevel.sum_moves`` against its twin bit for bit, against a from-scratch referee, and
``sum_refine`` with the knob on and off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.taskmap import _multilevel as K
from coalloc.taskmap import levels, sumrefine
from coalloc.taskmap._reference import multilevel as RM
from coalloc.taskmap._reference import summoves as R
from coalloc.taskmap.refinement import RefineState

from .test_refine_kernels import _random_graph, _random_topology

seeds = st.integers(0, 2**32 - 1)


def _case(rng):
    topo = _random_topology(rng)
    n = int(rng.integers(1, 40))
    ip, ix, iw = _random_graph(rng, n)
    vw = rng.choice([0.5, 1.0, 2.0, 3.3], n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    nload, lload = K.loads(K.Level(ip, ix, iw), topo.routes, m, vw)
    k = int(rng.integers(0, 50))
    ct = rng.integers(0, n, k).astype(np.int64)
    cb = rng.integers(0, topo.P, k).astype(np.int64)
    okl = rng.random(k) < 0.8
    near = rng.random(n) < 0.15
    touched = near & (rng.random(n) < 0.5)
    occ = max(float((nload / topo.cap).max()), float((lload / topo.bw).max()) if topo.E else 0.0)
    limit = occ * float(rng.choice([0.8, 1.0, 1.2, 2.0]))
    done = np.array([int(rng.integers(0, 5))], dtype=np.int64)
    max_work = int(rng.integers(0, 60))
    every = int(rng.integers(1, 20))
    return topo, (ip, ix, iw), vw, m, nload, lload, ct, cb, okl, near, touched, done, max_work, \
        limit, every  # fmt: skip


def _run(fn, level, routes, topo, vw, m, nload, lload, ct, cb, okl, near, touched, done,
         max_work, limit, every, poll=None):  # fmt: skip
    s = [m.copy(), lload.copy(), nload.copy(), near.copy(), touched.copy(), done.copy()]
    got = fn(level, routes, s[0], s[1], s[2], topo.bw, topo.cap, vw, ct, cb, okl,
                        s[3], s[4], s[5], max_work, limit, 1e-12, every, poll)  # fmt: skip
    return got, s


@settings(max_examples=200, deadline=None)
@given(seeds)
def test_sum_moves_matches_its_twin_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    topo, csr, vw, m, nload, lload, ct, cb, okl, near, touched, done, mw, limit, every = _case(rng)
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    rest = (topo, vw, m, nload, lload, ct, cb, okl, near, touched, done, mw, limit, every)
    (a1, l1), s1 = _run(K.sum_moves, K.Level(*csr), topo.routes, *rest)
    (a2, l2), s2 = _run(R.sum_moves, RM.Level(*csr), rr, *rest)
    assert a1 == a2 and l1.dtype == l2.dtype and np.array_equal(l1, l2)
    for x, y in zip(s1, s2):
        assert x.dtype == y.dtype and np.array_equal(x, y)  # the float loads bit for bit


@settings(max_examples=150, deadline=None)
@given(seeds)
def test_sum_moves_by_a_from_scratch_referee(seed):
    """The loads left are those of the mapping left; the tasks moved are touched, they and
    their neighbours near; only moves the screen passed were made, each a try; nothing
    above the cap where a load rose; the blocked list is the screened-out moves not near."""
    rng = np.random.default_rng(seed)
    topo, csr, vw, m, nload, lload, ct, cb, okl, near, touched, done, mw, limit, every = _case(rng)
    ip, ix, iw = csr
    (applied, left), (m2, l2, n2, near2, t2, d2) = _run(
        K.sum_moves, K.Level(*csr), topo.routes, topo, vw, m, nload, lload, ct, cb, okl, near,
        touched, done, mw, limit, every)  # fmt: skip
    want_n, want_l = K.loads(K.Level(*csr), topo.routes, m2, vw)
    assert np.allclose(n2, want_n, atol=1e-9) and np.allclose(l2, want_l, atol=1e-9)
    moved = np.flatnonzero(m2 != m)
    assert applied >= moved.shape[0] and np.all(t2[moved]) and not np.any(t2 & ~touched & ~near2)
    new = np.flatnonzero(t2 & ~touched)
    assert applied == new.shape[0]
    want_near = near.copy()
    for t in new:
        want_near[t] = True
        want_near[ix[ip[t] : ip[t + 1]]] = True
    assert np.array_equal(near2, want_near)
    assert d2[0] - done[0] <= int(okl.sum()) and d2[0] - done[0] >= applied
    assert d2[0] <= max(mw, done[0])
    for t in new:  # each made move had a passing screen somewhere in the list
        assert np.any((ct == t) & (cb == m2[t]) & okl)
    rose = l2 > lload + 1e-9 * (1 + lload)
    assert np.all(l2[rose] / topo.bw[rose] <= limit * (1 + 1e-9))
    assert set(left.tolist()) <= set(np.flatnonzero(~okl).tolist())
    assert all(not near[ct[i]] for i in left.tolist())


def test_a_poll_that_raises_leaves_the_tries_counted():
    rng = np.random.default_rng(1)
    for seed in range(40):
        rng = np.random.default_rng(seed)
        topo, csr, vw, m, nload, lload, ct, cb, okl, near, touched, done, _, limit, _ = _case(rng)
        if ct.shape[0] < 3:
            continue
        rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
        out = []
        for mod, level, routes in ((K, K.Level(*csr), topo.routes), (R, RM.Level(*csr), rr)):
            calls = []

            def poll(calls=calls):
                calls.append(1)
                if len(calls) == 3:
                    raise KeyboardInterrupt

            s = [m.copy(), lload.copy(), nload.copy(), near.copy(), touched.copy(), done.copy()]
            with pytest.raises(KeyboardInterrupt):
                mod.sum_moves(level, routes, *s[:3], topo.bw, topo.cap, vw, ct, cb, okl, *s[3:],
                              10**6, limit, 1e-12, 1, poll)  # fmt: skip
            out.append(s)
        assert all(np.array_equal(x, y) for x, y in zip(*out))


def test_sum_moves_refuses_bad_arguments_like_its_twin():
    rng = np.random.default_rng(0)
    topo, csr, vw, m, nload, lload, ct, cb, okl, near, touched, done, mw, limit, every = _case(rng)
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    for mod, level, routes in ((K, K.Level(*csr), topo.routes), (R, RM.Level(*csr), rr)):
        for bad in ("near", "done", "cb"):
            args = dict(near=near.copy(), done=done.copy(), cb=cb.copy())
            if bad == "near":
                args["near"] = near.astype(np.uint8)
            elif bad == "done":
                args["done"] = np.zeros(2, dtype=np.int64)
            else:
                args["cb"] = np.full(max(cb.shape[0], 1), topo.P, dtype=np.int64)
                ct2 = np.zeros(args["cb"].shape[0], dtype=np.int64)
            with pytest.raises((ValueError, TypeError)):
                mod.sum_moves(level, routes, m.copy(), lload.copy(), nload.copy(), topo.bw,
                              topo.cap, vw, ct2 if bad == "cb" else ct, args["cb"],
                              np.ones(args["cb"].shape[0], bool) if bad == "cb" else okl,
                              args["near"], touched.copy(), args["done"], mw, limit, 1e-12,
                              every, None)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(seeds)
def test_sum_refine_with_the_knob_on_and_off(seed):
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(2, 60))
    ip, ix, iw = _random_graph(rng, n)
    lv = levels.TaskLevel(ip, ix, iw, rng.choice([0.5, 1.0, 2.0, 3.3], n))
    m0 = rng.integers(0, topo.P, n).astype(np.int64)
    old = sumrefine.MOVES_KERNEL
    out = []
    try:
        for flag in (True, False):
            sumrefine.MOVES_KERNEL = flag
            state = RefineState(topo, lv, m0.copy())
            moved = sumrefine.sum_refine(state, 4 * n)
            out.append((moved, state.m.tobytes(), state.nload.tobytes(), state.lload.tobytes()))
    finally:
        sumrefine.MOVES_KERNEL = old
    assert out[0] == out[1]


def _try_case(rng):
    """A state, a task ``t`` and a partner on another processor ``b`` (None: none)."""
    topo = _random_topology(rng)
    n = int(rng.integers(2, 30))
    ip, ix, iw = _random_graph(rng, n)
    vw = rng.choice([0.5, 1.0, 2.0, 3.3], n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    t, x = (int(z) for z in rng.choice(n, 2, replace=False))
    if m[t] == m[x]:
        return None
    nload, lload = K.loads(K.Level(ip, ix, iw), topo.routes, m, vw)
    occ = max(float((nload / topo.cap).max()), float((lload / topo.bw).max()) if topo.E else 0.0)
    limit = occ * float(rng.choice([0.7, 0.95, 1.0, 1.3]))
    return topo, (ip, ix, iw), vw, m, nload, lload, t, x, int(m[x]), limit


def _both(kernel, twin, case, extra):
    topo, csr, vw, m, nload, lload, t, x, b, limit = case
    rr = RM.PairRoutes(topo.rptr, topo.rlink, topo.E)
    out = []
    for fn, level, routes in ((kernel, K.Level(*csr), topo.routes), (twin, RM.Level(*csr), rr)):
        s = [m.copy(), lload.copy(), nload.copy()]
        got = fn(level, routes, *s, topo.bw, topo.cap, vw, *extra, limit, 1e-12)
        out.append((got, s))
    return out


@settings(max_examples=300, deadline=None)
@given(seeds)
def test_swap_try_matches_its_twin_and_a_from_scratch_referee(seed):
    rng = np.random.default_rng(seed)
    case = _try_case(rng)
    if case is None:
        return
    topo, csr, vw, m, nload, lload, t, u, b, limit = case
    (k_ok, ks), (r_ok, rs) = _both(K.swap_try, R.swap_try, case, (t, u, b))
    assert k_ok == r_ok
    assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(ks, rs))
    a = int(m[t])
    want = m.copy()
    if k_ok:
        want[t], want[u] = b, a
    assert np.array_equal(ks[0], want)
    n2, l2 = K.loads(K.Level(*csr), topo.routes, want, vw)
    assert np.allclose(ks[2], n2, atol=1e-9) and np.allclose(ks[1], l2, atol=1e-9)
    rose_l = l2 > lload + 1e-9 * (1 + lload)
    rose_n = n2 > nload + 1e-9 * (1 + nload)
    over = bool(np.any(l2[rose_l] > limit * topo.bw[rose_l] * (1 + 1e-9))) or bool(
        np.any(n2[rose_n] > limit * topo.cap[rose_n] * (1 + 1e-9)))
    if k_ok:
        assert not over
    else:  # refused: something it changes is above the cap and not below its load before
        swapped = m.copy()
        swapped[t], swapped[u] = b, a
        n2, l2 = K.loads(K.Level(*csr), topo.routes, swapped, vw)
        procs = np.array([a, b])
        tol = 1e-9
        hi_n = (n2[procs] > limit * topo.cap[procs] * (1 - tol)) & (
            n2[procs] > nload[procs] * (1 - tol) - tol)
        hi_l = (l2 > limit * topo.bw * (1 - tol)) & (l2 > lload * (1 - tol) - tol)
        assert hi_n.any() or hi_l.any()


@settings(max_examples=300, deadline=None)
@given(seeds)
def test_eject_try_matches_its_twin_and_a_from_scratch_referee(seed):
    rng = np.random.default_rng(seed)
    case = _try_case(rng)
    if case is None:
        return
    topo, csr, vw, m, nload, lload, t, v, b, limit = case
    c = int(rng.integers(0, topo.P))
    g_t = float(rng.choice([0.0, 0.5, -0.25, 2.0]))
    extra = (topo.cost, t, b, v, c, g_t)
    (k_ok, ks), (r_ok, rs) = _both(K.eject_try, R.eject_try, case, extra)
    assert k_ok == r_ok
    assert all(x.dtype == y.dtype and np.array_equal(x, y) for x, y in zip(ks, rs))
    ip, ix, iw = csr
    want = m.copy()
    if k_ok:
        want[v], want[t] = c, b
    assert np.array_equal(ks[0], want)
    rows = np.repeat(np.arange(ip.shape[0] - 1), np.diff(ip))
    moved = m.copy()
    moved[v], moved[t] = c, b

    def route_cost(x):
        return float(np.dot(iw, topo.cost[x[rows], x[ix]])) / 2

    if k_ok:  # the pair lowers the route cost (the gains are halves of the symmetric sum)
        assert route_cost(moved) < route_cost(m) + 1e-9
        n2, l2 = K.loads(K.Level(*csr), topo.routes, moved, vw)
        rose = l2 > lload + 1e-9 * (1 + lload)
        assert not np.any(l2[rose] > limit * topo.bw[rose] * (1 + 1e-9))


@settings(max_examples=40, deadline=None)
@given(seeds)
def test_sum_refine_with_the_try_kernel_on_and_off(seed):
    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(2, 60))
    ip, ix, iw = _random_graph(rng, n)
    lv = levels.TaskLevel(ip, ix, iw, rng.choice([0.5, 1.0, 2.0, 3.3], n))
    m0 = rng.integers(0, topo.P, n).astype(np.int64)
    old = sumrefine.TRY_KERNEL
    out = []
    try:
        for flag in (True, False):
            sumrefine.TRY_KERNEL = flag
            state = RefineState(topo, lv, m0.copy())
            moved = sumrefine.sum_refine(state, 4 * n)
            out.append((moved, state.m.tobytes(), state.nload.tobytes(), state.lload.tobytes()))
    finally:
        sumrefine.TRY_KERNEL = old
    assert out[0] == out[1]


@settings(max_examples=300, deadline=None)
@given(seeds)
def test_swap_partners_match_the_twin_the_off_path_and_a_loop(seed):
    from coalloc.taskmap.sumwork import swap_partners

    rng = np.random.default_rng(seed)
    topo = _random_topology(rng)
    n = int(rng.integers(2, 30))
    ip, ix, iw = _random_graph(rng, n)
    vw = rng.choice([0.5, 1.0, 2.0, 3.3], n)
    m = rng.integers(0, topo.P, n).astype(np.int64)
    t, b = int(rng.integers(0, n)), int(rng.integers(0, topo.P))
    nload, _ = K.loads(K.Level(ip, ix, iw), topo.routes, m, vw)
    on_b = np.flatnonzero(m == b).astype(np.int64)
    gains_b = rng.choice([-1.0, 0.0, 0.3, 1.7, 2.0], on_b.shape[0]) * rng.choice([1.0, 1.1])
    touched = rng.random(n) < 0.2
    g_t = float(rng.choice([0.0, 0.4, 1.3]))
    largest = float(gains_b.max()) if on_b.shape[0] else -np.inf
    limit = float(rng.choice([0.5, 1.0, 2.0])) * float((nload / topo.cap).max())
    tries = int(rng.integers(0, 10))
    args = (m, vw, nload, topo.cap, topo.cost, touched, t, b, g_t, largest, on_b, gains_b,
            limit, 1e-12, tries)  # fmt: skip
    got = K.swap_partners(K.Level(ip, ix, iw), *args)
    want = R.swap_partners(RM.Level(ip, ix, iw), *args)
    off = swap_partners(levels.TaskLevel(ip, ix, iw, vw), *args)
    assert got.dtype == want.dtype == off.dtype == np.int64
    assert np.array_equal(got, want) and np.array_equal(got, off)
    # referee: a plain loop over the tasks of b
    a = int(m[t])
    thr = 1e-12 * (1 + abs(g_t))
    rows = []
    if g_t + largest > thr:
        for i, u in enumerate(on_b.tolist()):
            dw = vw[u] - vw[t]
            if touched[u] or not (nload[a] + dw <= max(limit * topo.cap[a], nload[a])
                                  and nload[b] - dw <= max(limit * topo.cap[b], nload[b])):
                continue
            w = sum(iw[q] for q in range(ip[t], ip[t + 1]) if ix[q] == u)
            g = g_t + gains_b[i] - 2 * w * topo.cost[a, b]
            if g > thr:
                rows.append((-g, i, u))
    assert got.tolist() == [u for _, _, u in sorted(rows)][:tries]
