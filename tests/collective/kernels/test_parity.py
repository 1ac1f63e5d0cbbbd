"""The compiled kernels of coalloc.collective against their NumPy twins: exact parity."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Demand, Kernels, ScanPlan, ScreenOut


def call(fn, *args, **kwargs):
    """Call a kernel (or its twin) as the methods do: through the caller
    :class:`~coalloc.collective.core.Kernels`, which converts the IN arrays and allocates
    the OUT ones, and return what it returns."""
    module = C if getattr(C, fn.__name__, None) is fn else R
    assert getattr(module, fn.__name__) is fn
    return getattr(Kernels(module), fn.__name__)(*args, **kwargs)


def random_rows(rng, r, m, ties=False):
    cap = rng.uniform(1, 8, (r, m))
    if ties:
        cap = np.round(cap)
    tmax = cap * rng.uniform(0, 1, (r, m)) * (rng.random((r, m)) < 0.6)
    if ties:
        tmax = np.floor(tmax)
    return cap - tmax, tmax, cap


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_window_max_parity(seed):
    rng = np.random.default_rng(seed)
    n, m, k = rng.integers(1, 6), rng.integers(1, 4), rng.integers(1, 12)
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 5, k - 1) * 100.0)])
    res = rng.random((n, m, k)) * (rng.random((n, m, k)) < 0.7)
    starts = np.sort(rng.choice(np.concatenate([times, rng.uniform(0, times[-1] + 500, 5)]), 6))
    dur = float(rng.choice([50.0, 100.0, 250.0, 1000.0]))
    a = call(C.window_max, times, res, starts, dur)
    b = call(R.window_max, times, res, starts, dur)
    assert np.array_equal(a, b)
    # referee: direct definition on a fine sample of the window
    for s, t in enumerate(starts):
        ks = [q for q in range(k) if times[q] < t + dur and (q + 1 == k or times[q + 1] > t)]
        assert np.array_equal(a[s], res[:, :, ks].max(axis=2))


@pytest.mark.parametrize("case", range(40))
def test_select_and_swap_parity(case):
    rng = np.random.default_rng(case)
    r, m = int(rng.integers(3, 30)), int(rng.integers(1, 4))
    count = int(rng.integers(1, r))
    a, t, p = random_rows(rng, r, m, ties=case % 3 == 0)
    d = count * a.mean(axis=0) * rng.uniform(0.5, 1.6, m)
    seed = int(rng.integers(0, 2**63))
    s1, ok1, c1 = call(C.select_and_swap, a, t, p, d, count, 7, seed)
    s2, ok2, c2 = call(R.select_and_swap, a, t, p, d, count, 7, seed)
    assert np.array_equal(s1, s2) and ok1 == ok2 and c1 == c2
    assert len(set(s1.tolist())) == count
    assert ok1 == bool(np.all(a[s1].sum(axis=0) >= d))


@pytest.mark.parametrize("case", range(40))
def test_phase5_parity_and_monotone(case):
    rng = np.random.default_rng(1000 + case)
    r, m = int(rng.integers(3, 30)), int(rng.integers(1, 4))
    count = int(rng.integers(1, r))
    a, t, p = random_rows(rng, r, m, ties=case % 4 == 0)
    sel = rng.permutation(r)[:count]
    d = a[sel].sum(axis=0) * rng.uniform(0.5, 1.0, m)
    seed = int(rng.integers(0, 2**63))
    s1, n1 = call(C.phase5, a, t, p, d, sel, 10, seed)
    s2, n2 = call(R.phase5, a, t, p, d, sel, 10, seed)
    assert np.array_equal(s1, s2) and n1 == n2
    assert np.all(a[s1].sum(axis=0) >= d)

    def u(s):
        return np.prod((d + t[s].sum(axis=0)) / p[s].sum(axis=0))

    assert u(s1) >= u(sel) * (1 - 1e-12)


@pytest.mark.parametrize("case", range(30))
def test_swap_search_parity(case):
    rng = np.random.default_rng(2000 + case)
    r, m = int(rng.integers(3, 20)), int(rng.integers(1, 4))
    count = int(rng.integers(1, r))
    a, t, p = random_rows(rng, r, m, ties=case % 5 == 0)
    d = count * a.mean(axis=0) * rng.uniform(0.5, 1.3, m) + 1e-3
    sel = rng.permutation(r)[:count]
    s1, k1 = call(C.swap_search, a, t, p, d, sel, 1000)
    s2, k2 = call(R.swap_search, a, t, p, d, sel, 1000)
    assert np.array_equal(s1, s2) and k1 == k2
    assert len(set(s1.tolist())) == count


def test_xoshiro_twin_matches_known_stream():
    # the kernel and twin must draw the same stream: a selection with all ties is decided by it
    a = np.ones((10, 1))
    for seed in range(5):
        s1, _, _ = call(C.select_and_swap, a, 0 * a, a, np.array([1.0]), 3, 7, seed)
        s2, _, _ = call(R.select_and_swap, a, 0 * a, a, np.array([1.0]), 3, 7, seed)
        assert np.array_equal(s1, s2)
    draws = {
        tuple(call(C.select_and_swap, a, 0 * a, a, np.array([1.0]), 3, 7, s)[0]) for s in range(8)
    }
    assert len(draws) > 1  # the seed matters


def test_kernels_reject_bad_sizes():
    a = np.ones((3, 2))
    with pytest.raises(ValueError):
        call(C.select_and_swap, a, a, a, np.ones(2), 4, 7, 0)
    with pytest.raises(ValueError):
        call(C.swap_search, a, a, a, np.ones(2), np.arange(4), 10)


@pytest.mark.parametrize("case", range(40))
def test_screen_parity_and_referee(case):
    rng = np.random.default_rng(3000 + case)
    S, n, m = int(rng.integers(1, 6)), int(rng.integers(1, 15)), int(rng.integers(1, 4))
    cap = rng.uniform(1, 8, (n, m))
    if case % 3 == 0:
        cap = np.round(cap)
    tmax = cap[None] * rng.uniform(0, 1, (S, n, m)) * (rng.random((S, n, m)) < 0.6)
    e = rng.uniform(0, 3, m)
    count = int(rng.integers(1, n + 1))
    d = count * e + rng.uniform(0, 8, m) * count
    got = call(C.screen, tmax, cap, e, d, count)
    ref = call(R.screen, tmax, cap, e, d, count)
    for x, y in zip(got, ref):
        assert np.array_equal(x, y)
    code, elig = got[0], got[1]
    for s in range(S):  # referee: the definition with NumPy
        a = cap - tmax[s]
        ok = np.all(a >= e, axis=1)
        assert elig[s] == ok.sum()
        if ok.sum() < count:
            assert code[s] == 1
        else:
            top = -np.sort(-a[ok], axis=0)[:count].sum(axis=0)
            assert (code[s] == 2) == bool(np.any(top < d * (1 - 1e-12)) or np.any(top < d))


def test_window_max_unsorted_starts_same_values():
    rng = np.random.default_rng(9)
    times = np.arange(20) * 60.0
    res = rng.random((4, 2, 20))
    starts = rng.uniform(0, 1300, 15)
    a = call(C.window_max, times, res, starts, 200.0)
    order = np.argsort(starts)
    b = call(C.window_max, times, res, starts[order], 200.0)
    assert np.array_equal(a[order], b)
    assert np.array_equal(a, call(R.window_max, times, res, starts, 200.0))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_scan_screen_parity_and_referee(seed):
    rng = np.random.default_rng(seed)
    N, m, k = int(rng.integers(1, 9)), int(rng.integers(1, 4)), int(rng.integers(1, 15))
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 5, k - 1) * 100.0)])
    cap = np.round(rng.uniform(1, 8, (N, m)))
    res = np.floor(cap[:, :, None] * rng.random((N, m, k)) * (rng.random((N, m, k)) < 0.7))
    nodes = np.sort(rng.choice(N, int(rng.integers(1, N + 1)), replace=False))
    starts = np.unique(rng.choice(np.concatenate([times, rng.uniform(0, times[-1] + 500, 5)]),
                                  int(rng.integers(1, 12))))  # fmt: skip
    if seed % 5 == 0:
        starts = rng.permutation(starts)  # unordered starts: the direct path
    dur = float(rng.choice([50.0, 100.0, 250.0, 1000.0]))
    e = rng.uniform(0, 2, m)
    count = int(rng.integers(1, nodes.size + 1))
    d = count * e + rng.uniform(0, 5, m) * count
    fb = int(rng.integers(1, 4))
    mb = fb + int(rng.integers(0, 5))
    args = (times, res, nodes, cap[nodes], Demand(e, d, count, None), ScanPlan(starts, dur, fb, mb))
    got = call(C.scan_screen, *args)
    ref = call(R.scan_screen, *args)
    assert got[0] == ref[0]
    for x, y in zip(got[1:], ref[1:]):
        assert np.array_equal(x, y)
    # referee: window_max then screen of every start; stop = the first start that passes
    tm = call(C.window_max, times, res[nodes], starts, dur)
    code, elig, prop, val = call(C.screen, tm, cap[nodes], e, d, count)
    passing = np.flatnonzero(code == 0)
    stop = int(passing[0]) if passing.size else starts.size
    assert got[0] == stop
    upto = min(stop + 1, starts.size)
    assert np.array_equal(got[1][:upto], code[:upto])
    assert np.array_equal(got[2][:upto], elig[:upto])
    assert np.array_equal(got[3][:upto], prop[:upto])
    assert np.array_equal(got[4][:upto], val[:upto])
    if stop < starts.size:
        assert np.array_equal(got[5], tm[stop])


def test_scan_screen_rejects_bad_arguments():
    times, res = np.arange(3) * 10.0, np.zeros((2, 1, 3))
    demand = Demand(np.ones(1), np.ones(1), 1, None)
    ok = (times, res, np.arange(2), np.ones((2, 1)), demand, ScanPlan(np.zeros(1), 5.0, 8, 64))
    for kern in (C.scan_screen, R.scan_screen):
        assert call(kern, *ok)[0] == 0
        with pytest.raises(ValueError):  # a node out of the pool
            call(kern, *ok[:2], np.array([0, 2]), *ok[3:])
        with pytest.raises(ValueError):  # capacities of three rows for two nodes
            call(kern, *ok[:3], np.ones((3, 1)), *ok[4:])
        with pytest.raises(ValueError):  # first_block > max_block
            call(kern, *ok[:5], ScanPlan(np.zeros(1), 5.0, 2, 1))


@pytest.mark.parametrize("case", range(30))
def test_decrease_starts_parity_and_referee(case):
    from coalloc.collective.core import decrease_starts
    from coalloc.collective.model import ResourcePool

    rng = np.random.default_rng(5000 + case)
    N, m, k = int(rng.integers(1, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 12))
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 5, k - 1) * 100.0)])
    cap = np.full((N, m), 4.0)
    res = np.floor(4 * rng.random((N, m, k)))
    pool = ResourcePool(cap, [f"p{i}" for i in range(m)], times=times, reserved=res)
    nodes = np.sort(rng.choice(N, int(rng.integers(0, N + 1)), replace=False))
    lo = float(rng.uniform(0, times[-1] + 50))
    hi = lo + float(rng.uniform(0, times[-1]))
    got = call(C.decrease_starts, pool.times, pool.reserved, nodes, lo, hi)
    assert np.array_equal(got, call(R.decrease_starts, pool.times, pool.reserved, nodes, lo, hi))
    assert np.array_equal(got, decrease_starts(pool, nodes, lo, hi))  # referee: the helper


@pytest.mark.parametrize("case", range(12))
def test_screen_parity_over_many_starts(case):
    # slowly drifting window maxima over many starts: the kernel carries a selection
    # threshold from start to start (used, and falling back to every eligible amount)
    rng = np.random.default_rng(7000 + case)
    S, n, m = 40, int(rng.integers(20, 120)), int(rng.integers(1, 4))
    cap = np.round(rng.uniform(1, 8, (n, m)), 1 if case % 2 else 0)
    walk = np.clip(0.5 + np.cumsum(rng.normal(0, 0.08, (S, n, m)), axis=0), 0, 1)
    tmax = np.round(cap[None] * walk, 2)
    e = np.zeros(m)
    count = int(rng.integers(1, n // 2))

    def largest_first(v):
        tot = 0.0
        for x in np.sort(v)[::-1][:count]:
            tot = tot + x
        return tot

    tops = np.array([[largest_first(cap[:, i] - tmax[s, :, i]) for i in range(m)]
                     for s in range(S)])  # fmt: skip
    d = tops.min(axis=0)  # every property passes at every start ...
    d[0] = np.median(tops[:, 0])  # ... but the first, at about half of them
    got = call(C.screen, tmax, cap, e, d, count)
    ref = call(R.screen, tmax, cap, e, d, count)
    for x, y in zip(got, ref):
        assert np.array_equal(x, y)
    code, prop, val = got[0], got[2], got[3]
    assert np.array_equal(code == 2, tops[:, 0] < d[0])  # referee: the definition
    assert np.all(prop[code == 2] == 0)
    assert np.array_equal(val[code == 2], tops[code == 2, 0])
    assert 0 < np.sum(code == 2) < S


def test_screen_total_decided_by_the_ordered_sum():
    # amounts whose sum depends on the order at the last bit: a total equal to the
    # largest-first sum passes and one ulp above fails, as in the twin
    a = np.array([1.0, 1e-16, 1e-16, 1e-16, 3e-16, 2.5e-16])
    cap = a[:, None] + 1.0
    tmax = np.ones((1, a.size, 1))
    e = np.zeros(1)
    total = 0.0
    for x in sorted(a, reverse=True):
        total = total + x
    for d in (total, np.nextafter(total, 2.0), np.nextafter(total, 0.0)):
        got = call(C.screen, tmax, cap, e, np.array([d]), a.size)
        ref = call(R.screen, tmax, cap, e, np.array([d]), a.size)
        for x, y in zip(got, ref):
            assert np.array_equal(x, y)
        assert (got[0][0] == 0) == (total >= d)


@pytest.mark.parametrize("case", range(8))
def test_window_max_wide_windows_parity(case):
    # windows of up to a few hundred segments (sparse-table levels up to 8), uneven
    # breakpoints, starts off the grid
    rng = np.random.default_rng(8000 + case)
    k = int(rng.integers(50, 300))
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 4, k - 1) * 60.0)])
    res = rng.random((3, 2, k))
    starts = np.sort(np.concatenate([[0.0], rng.uniform(0, times[-1], 24)]))
    dur = float(rng.uniform(30, times[-1] / 2))
    a = call(C.window_max, times, res, starts, dur)
    assert np.array_equal(a, call(R.window_max, times, res, starts, dur))
    for s, t in enumerate(starts):  # referee: the definition
        ks = [q for q in range(k) if times[q] < t + dur and (q + 1 == k or times[q + 1] > t)]
        assert np.array_equal(a[s], res[:, :, ks].max(axis=2))


def _readonly(*arrays):
    out = []
    for x in arrays:
        x = np.array(x)
        x.setflags(write=False)
        out.append(x)
    return out


@pytest.mark.parametrize("case", range(12))
def test_raw_interface_in_out(case):
    """The kernels' own interface (IN read-only arrays, caller-allocated OUT arrays, INOUT
    sel): the compiled kernel and its twin write every entry of a poisoned OUT buffer with
    equal values, leave IN arrays untouched, and refuse an OUT buffer of the wrong shape."""
    rng = np.random.default_rng(500 + case)
    n, m, k, S = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(2, 10)), 5
    times, res, starts = _readonly(
        np.concatenate([[0.0], np.cumsum(rng.integers(1, 5, k - 1) * 100.0)]),
        rng.random((n, m, k)) * (rng.random((n, m, k)) < 0.7),
        np.sort(rng.uniform(0, 900, S)),
    )
    before = [x.copy() for x in (times, res, starts)]
    outs = []
    for mod in (C, R):
        out = np.full((S, n, m), np.nan)
        assert mod.window_max(times, res, starts, 150.0, out) is None
        outs.append(out)
        with pytest.raises(ValueError):
            mod.window_max(times, res, starts, 150.0, np.empty((S + 1, n, m)))
    assert not np.isnan(outs[0]).any() and np.array_equal(outs[0], outs[1])
    tm = outs[0]
    cap, e, d, tol = _readonly(1.0 + 0.5 * rng.random((n, m)), 0.1 * rng.random(m),
                               n * 0.3 * rng.random(m), np.zeros(m))  # fmt: skip
    nodes = _readonly(np.arange(n, dtype=np.int64))[0]
    got = []
    for mod in (C, R):
        bufs = [np.full(S, -7, np.int64), np.full(S, -7, np.int64), np.full(S, -7, np.int64),
                np.full(S, np.nan)]  # fmt: skip
        assert mod.screen(tm, cap, Demand(e, d, 1, tol), ScreenOut(*bufs)) is None
        tout = np.full((n, m), np.nan)
        sbufs = [np.full(S, -7, np.int64), np.full(S, -7, np.int64), np.full(S, -7, np.int64),
                 np.full(S, np.nan), tout]  # fmt: skip
        stop = mod.scan_screen(times, res, nodes, cap, Demand(e, d, 1, tol),
                               ScanPlan(starts, 150.0, 2, 4), ScreenOut(*sbufs[:4]), tout)
        starts_out = np.full(k + 1, np.nan)
        c = mod.decrease_starts(times, res, nodes, 0.0, 1e9, starts_out)
        got.append((bufs, stop, sbufs, starts_out[:c]))
        with pytest.raises(ValueError):
            mod.screen(tm, cap, Demand(e, d, 1, tol), ScreenOut(*bufs[:3], np.empty(S + 1)))
        with pytest.raises(ValueError):
            mod.decrease_starts(times, res, nodes, 0.0, 1e9, np.empty(k))
    (b1, s1, sb1, st1), (b2, s2, sb2, st2) = got
    assert s1 == s2 and np.array_equal(st1, st2)
    for x, y in zip(b1 + sb1, b2 + sb2, strict=True):
        assert not (x == -7).any() and not np.isnan(x).any() and np.array_equal(x, y)
    assert all(np.array_equal(a, b) for a, b in zip(before, (times, res, starts), strict=True))
    # sel: OUT of select_and_swap, INOUT of phase5 and swap_search
    a, t, p = _readonly(*random_rows(rng, 8, 2))
    d2, tol2 = _readonly(3 * a.mean(axis=0), np.zeros(2))
    sels = []
    for mod in (C, R):
        sel = np.full(3, -1, np.int64)
        ok, att = mod.select_and_swap(a, t, p, d2, 7, 11, tol2, sel)
        acc = mod.phase5(a, t, p, d2, 4, 12, tol2, sel)
        rounds = mod.swap_search(a, t, p, d2, 50, tol2, sel)
        sels.append((sel.tolist(), ok, att, acc, rounds))
    assert sels[0] == sels[1] and len(set(sels[0][0])) == 3 and min(sels[0][0]) >= 0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_weighted_screen_parity_and_referee(seed, ties):
    """Issue 40: the equal weights' proof, compiled and twin equal; every start it proves
    empty has no set of ``count`` eligible nodes (enumeration, the referee); other codes are
    left as they are."""
    from itertools import combinations

    rng = np.random.default_rng(seed)
    S, n, m = int(rng.integers(1, 5)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
    count = int(rng.integers(1, n + 1))
    cap = rng.uniform(1, 8, (n, m))
    tms = cap[None, :, :] * rng.uniform(0, 1, (S, n, m))
    if ties:
        cap, tms = np.floor(cap), np.floor(tms)
    e = rng.uniform(0, 1, m) * (rng.random(m) < 0.5)
    top = -np.sort(-(cap[None] - tms), axis=1)[:, :count].sum(axis=1).max(axis=0)
    d = top * rng.uniform(0.5, 1.05, m) * (rng.random(m) < 0.9)
    tol = np.full(m, 1e-9) * (rng.random(m) < 0.5)
    code = rng.integers(0, 3, S) * (rng.random(S) < 0.3)  # some starts already rejected
    a = call(C.weighted_screen, tms, cap, e, d, count, code, tol=tol)
    b = call(R.weighted_screen, tms, cap, e, d, count, code, tol=tol)
    assert np.array_equal(a, b)
    assert np.all((a == code) | ((code == 0) & (a == 3)))
    for s in np.flatnonzero(a == 3):
        av = cap - tms[s]
        el = np.flatnonzero(np.all(av >= e - tol, axis=1))
        dlo = d - count * tol
        assert not any(np.all(av[list(c)].sum(axis=0) >= dlo)
                       for c in combinations(el.tolist(), count))  # fmt: skip


def test_weighted_screen_decides_a_trade_off():
    # two properties, four nodes: the 2 largest of each reach 15, no 2 nodes reach both
    cap = np.array([[10.0, 0.0], [10.0, 0.0], [0.0, 10.0], [0.0, 10.0]])
    tms = np.zeros((2, 4, 2))
    tms[1, 0, 0] = tms[1, 2, 1] = 5.0  # the second start: less available, still no set
    z = np.zeros(2)
    for fn in (C.weighted_screen, R.weighted_screen):
        code = np.zeros(2, dtype=np.int64)
        assert call(fn, tms, cap, z, np.array([15.0, 15.0]), 2, code).tolist() == [3, 3]
        # a mixed set exists for totals of 10 at the first start: no proof there
        assert call(fn, tms, cap, z, np.array([10.0, 10.0]), 2, code)[0] == 0


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_block_screen_is_screen_then_weighted(seed, ties):
    """Issue 40: the fused pass, compiled and twin equal bit for bit, and equal to the two
    kernels it replaces (screen, then weighted_screen on its codes); every start it proves
    empty (code 3) has no set of ``count`` eligible nodes (enumeration, the referee)."""
    from itertools import combinations

    rng = np.random.default_rng(seed)
    S, n, m = int(rng.integers(1, 7)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
    count = int(rng.integers(1, n + 1))
    cap = rng.uniform(1, 8, (n, m))
    tms = cap[None, :, :] * rng.uniform(0, 1, (S, n, m)) * (rng.random((S, n, m)) < 0.7)
    if ties:
        cap, tms = np.floor(cap), np.floor(tms)
    e = rng.uniform(0, 2, m) * (rng.random(m) < 0.5)
    top = -np.sort(-(cap[None] - tms), axis=1)[:, :count].sum(axis=1).max(axis=0)
    d = top * rng.uniform(0.5, 1.05, m) * (rng.random(m) < 0.9)
    tol = np.full(m, 1e-9) * (rng.random(m) < 0.5)
    got = call(C.block_screen, tms, cap, e, d, count, tol=tol)
    ref = call(R.block_screen, tms, cap, e, d, count, tol=tol)
    code, elig, prop, val = call(C.screen, tms, cap, e, d, count, tol=tol)
    two = (call(C.weighted_screen, tms, cap, e, d, count, code, tol=tol), elig, prop, val)
    for x, y, z in zip(got, ref, two):
        assert x.dtype == z.dtype and np.array_equal(x, y) and np.array_equal(x, z)
    dlo = d - count * tol
    for s in np.flatnonzero(got[0] == 3):
        av = cap - tms[s]
        el = np.flatnonzero(np.all(av >= e - tol, axis=1))
        assert not any(np.all(av[list(c)].sum(axis=0) >= dlo)
                       for c in combinations(el.tolist(), count))  # fmt: skip


def test_block_screen_all_codes_on_a_drifting_block():
    # many starts of slowly drifting maxima over 300 nodes (the screen's threshold carried
    # from start to start): codes 0-3 all occur; compiled, twin and the two kernels agree
    rng = np.random.default_rng(40)
    S, n, m, count = 60, 300, 3, 12
    # properties that go together (a node large on one is large on all), one drift per node
    cap = np.round(rng.uniform(1, 8, (n, 1)) * rng.uniform(0.7, 1.3, (n, m)), 1)
    walk = np.clip(0.5 + np.cumsum(rng.normal(0, 0.06, (S, n, 1)), axis=0), 0, 1)
    tms = np.round(cap[None] * walk, 2)
    e = np.array([0.5, 0.0, 0.0])
    top = -np.sort(-(cap[None] - tms), axis=1)[:, :count].sum(axis=1)
    d = np.median(top, axis=0) * 0.97
    got = call(C.block_screen, tms, cap, e, d, count)
    ref = call(R.block_screen, tms, cap, e, d, count)
    code, elig, prop, val = call(C.screen, tms, cap, e, d, count)
    code = call(C.weighted_screen, tms, cap, e, d, count, code)
    for x, y, z in zip(got, ref, (code, elig, prop, val)):
        assert np.array_equal(x, y) and np.array_equal(x, z)
    assert set(np.unique(got[0]).tolist()) >= {0, 2, 3}


def _pruned_case(rng, S, n, m, ties):
    """A block of ``S`` starts over ``n`` nodes whose window maxima drift slowly (so that a
    sub-block's bounds are tight and nodes are pruned), with exact ties (rounded amounts) or
    near-ties (amounts one or two ulps apart) when ``ties`` asks."""
    cap = np.round(rng.uniform(1, 8, (n, 1)) * rng.uniform(0.6, 1.4, (n, m)), 1)
    walk = np.clip(rng.uniform(0.1, 0.9, (1, n, 1)) + np.cumsum(rng.normal(0, 0.03, (S, n, m)),
                                                               axis=0), 0, 1)  # fmt: skip
    tms = cap[None] * walk
    if ties == "equal":
        cap, tms = np.round(cap), np.round(tms)
    elif ties == "near":
        # copies of one node's amounts, a few ulps off: the bounds' comparisons at the limit
        src = int(rng.integers(n))
        for j in rng.choice(n, size=min(n, 6), replace=False):
            cap[j] = cap[src]
            tms[:, j] = np.nextafter(tms[:, src], tms[:, src] + rng.choice([-1.0, 1.0]))
        tms = np.minimum(tms, cap[None])
    return cap, tms


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["none", "equal", "near"]),
       st.integers(1, 9), st.booleans())  # fmt: skip
def test_pruned_screen_matches_twin_and_full(seed, ties, sub, minimums):
    """Issue 40: the pruned screen (compiled and twin) gives ``block_screen``'s outputs over
    every node, bit for bit, on drifting blocks with ties and near-ties, with and without
    minimums (codes 1 and undecided eligibility); compiled and twin keep the same rows, and
    every start proven empty (code 3) has no set (enumeration, the referee)."""
    from itertools import combinations

    rng = np.random.default_rng(seed)
    S, n, m = int(rng.integers(1, 25)), int(rng.integers(1, 40)), int(rng.integers(1, 4))
    count = int(rng.integers(1, min(n, 4) + 1))
    cap, tms = _pruned_case(rng, S, n, m, ties)
    e = (np.quantile(cap, rng.uniform(0.05, 0.5), axis=0) * 0.5 if minimums
         else np.zeros(m))  # fmt: skip
    top = -np.sort(-(cap[None] - tms), axis=1)[:, :count].sum(axis=1)
    d = np.quantile(top, rng.uniform(0.2, 0.9), axis=0) * (rng.random(m) < 0.9)
    tol = np.full(m, 1e-9) * (rng.random(m) < 0.5)
    full = call(C.block_screen, tms, cap, e, d, count, tol=tol)
    got = call(C.pruned_screen, tms, cap, e, d, count, sub, tol=tol)
    ref = call(R.pruned_screen, tms, cap, e, d, count, sub, tol=tol)
    assert got[4] == ref[4] and got[4] <= n * -(-S // sub)  # the same rows kept
    for x, y, z in zip(got[:4], ref[:4], full):
        assert x.dtype == z.dtype and np.array_equal(x, y) and np.array_equal(x, z)
    if n <= 12:
        dlo = d - count * tol
        for s in np.flatnonzero(got[0] == 3):
            av = cap - tms[s]
            el = np.flatnonzero(np.all(av >= e - tol, axis=1))
            assert not any(np.all(av[list(c)].sum(axis=0) >= dlo)
                           for c in combinations(el.tolist(), count))  # fmt: skip


@pytest.mark.parametrize("sub", [1, 4, 8, 16])
@pytest.mark.parametrize("minimum", [0.0, 3.0, 5.0])
def test_pruned_screen_prunes_a_drifting_block(sub, minimum):
    # 60 starts of slowly drifting maxima over 600 nodes: every code occurs for some minimum,
    # the outputs are block_screen's over every node, and most rows are pruned (the pruning
    # is not a no-op) unless the minimum leaves eligibility undecided for many nodes
    rng = np.random.default_rng(46)
    S, n, m, count = 60, 600, 3, 12
    cap = np.round(rng.uniform(1, 8, (n, 1)) * rng.uniform(0.7, 1.3, (n, m)), 1)
    walk = np.clip(0.5 + np.cumsum(rng.normal(0, 0.02, (S, n, 1)), axis=0), 0, 1)
    tms = np.round(cap[None] * walk, 2)
    e = np.array([minimum, 0.0, 0.0])
    top = -np.sort(-(cap[None] - tms), axis=1)[:, :count].sum(axis=1)
    d = np.median(top, axis=0) * 0.97
    full = call(C.block_screen, tms, cap, e, d, count)
    got = call(C.pruned_screen, tms, cap, e, d, count, sub)
    ref = call(R.pruned_screen, tms, cap, e, d, count, sub)
    for x, y, z in zip(got[:4], ref[:4], full):
        assert np.array_equal(x, y) and np.array_equal(x, z)
    assert got[4] == ref[4]
    if minimum == 0.0:
        assert set(np.unique(got[0]).tolist()) >= {0, 2, 3}
        assert got[4] < 0.3 * n * -(-S // sub)
    if minimum == 5.0:  # fewer than count eligible at some starts (code 1), not at others
        assert set(np.unique(got[0]).tolist()) >= {1, 2}


def test_pruned_screen_counts_dropped_nodes_in_the_minimum_screen():
    # code 1 decided by nodes that are never eligible (pruned, counted per property): the
    # binding property and its count are those of the full screen
    cap = np.array([[4.0, 4.0]] * 3 + [[4.0, 0.5]] * 5 + [[0.5, 4.0]] * 2)
    tms = np.zeros((5, 10, 2))
    e, d = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    full = call(C.block_screen, tms, cap, e, d, 4)
    assert full[0].tolist() == [1] * 5 and full[2].tolist() == [1] * 5
    assert full[3].tolist() == [5.0] * 5  # property 1: 3 + 2 nodes meet it
    for fn in (C.pruned_screen, R.pruned_screen):
        got = call(fn, tms, cap, e, d, 4, 5)
        for x, z in zip(got[:4], full):
            assert np.array_equal(x, z)
        assert got[4] == 3  # the 7 never-eligible nodes are only counted
