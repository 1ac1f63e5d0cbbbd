"""window_screen (issue 40): window_max_rows then pruned_screen without the window maxima of
every node at every start, against its twin, the pruned screen and the full screen."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Demand, Kernels, ScreenOut

from ._screen_cases import large_block, random_case


def _block_max(res, B):
    """The maxima of blocks of ``B`` segments (the last one shorter), by their definition."""
    K = res.shape[2]
    return np.stack([res[:, :, c : c + B].max(axis=2) for c in range(0, K, B)], axis=2)


def _check(times, res, nodes, starts, dur, cap_n, e, d, count, sub, tol, B=4):
    """Compiled and twin window_screen (block maxima of ``B`` segments) against pruned_screen
    and block_screen over the window maxima of every row: the same four outputs bit for bit,
    the same rows screened by compiled and twin, at least pruned_screen's (looser bounds)."""
    tms = Kernels(C).window_max_rows(times, res, nodes, starts, dur)
    full = Kernels(C).block_screen(tms, cap_n, e, d, count, tol=tol)
    pruned = Kernels(C).pruned_screen(tms, cap_n, e, d, count, sub, tol=tol)
    bm = _block_max(res, B)
    got = Kernels(C).window_screen(times, res, bm, B, nodes, starts, dur, cap_n, e, d, count,
                                   sub, tol=tol)  # fmt: skip
    ref = Kernels(R).window_screen(times, res, bm, B, nodes, starts, dur, cap_n, e, d, count,
                                   sub, tol=tol)  # fmt: skip
    assert got[4] == ref[4] >= pruned[4]
    for x, y, z in zip(got[:4], ref[:4], full):
        assert x.dtype == z.dtype and np.array_equal(x, y) and np.array_equal(x, z)
    # with the block minima (h50coll: coarser bounds first, from the blocks' extrema only):
    # the same outputs and the same rows in the end
    bn = -_block_max(-res, B)
    low = Kernels(C).window_screen(times, res, bm, B, nodes, starts, dur, cap_n, e, d, count,
                                   sub, tol=tol, bn=bn)  # fmt: skip
    assert low[4] == got[4]
    for x, y in zip(low[:4], got[:4]):
        assert np.array_equal(x, y)
    return tms, got


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["none", "equal", "near"]),
       st.integers(1, 9), st.booleans())  # fmt: skip
@example(seed=7, ties="near", sub=3, minimums=False)
@example(seed=40, ties="equal", sub=16, minimums=True)
def test_window_screen_matches_twin_pruned_and_full(seed, ties, sub, minimums):
    """On drifting pools with ties and near-ties, any rows (repeats too, more than one group
    of 32), starts on and off the grid (repeats too) and short and long windows: compiled =
    twin = pruned_screen = block_screen over the window maxima of every row; every start
    proven empty (code 3) has no set (enumeration, the referee, when small)."""
    c, rng = random_case(seed, ties, minimums, max_count=4)
    times, res, nodes, starts, dur, cap_n, e, d, count, tol, tms = c
    n = nodes.size
    B = int(rng.integers(1, 9))  # blocks of 1 to 8 segments
    tms, got = _check(times, res, nodes, starts, dur, cap_n, e, d, count, sub, tol, B)
    k0 = np.maximum(np.searchsorted(times, starts, side="right") - 1, 0)
    k1 = np.searchsorted(times, starts + dur, side="left")
    if np.all(k1 <= k0 + 1) and np.all(np.diff(k0) <= 1):
        # windows of one segment each, no segment between them: the bounds are exact
        assert got[4] == Kernels(C).pruned_screen(tms, cap_n, e, d, count, sub, tol=tol)[4]
    # the block maxima only speed the ranges' maxima up: every block size, the same rows
    one = Kernels(C).window_screen(times, res, res, 1, nodes, starts, dur, cap_n, e, d, count,
                                   sub, tol=tol)  # fmt: skip
    assert one[4] == got[4] and all(np.array_equal(x, y) for x, y in zip(one[:4], got[:4]))
    if n <= 12:
        dlo = d - count * tol
        for s in np.flatnonzero(got[0] == 3):
            av = cap_n - tms[s]
            el = np.flatnonzero(np.all(av >= e - tol, axis=1))
            assert not any(np.all(av[list(c)].sum(axis=0) >= dlo)
                           for c in combinations(el.tolist(), count))  # fmt: skip


@pytest.mark.parametrize("sub", [1, 8, 16, 64])  # 64: the plain route's (scan._PLAIN_SUB)
@pytest.mark.parametrize("minimum", [0.0, 3.0])
def test_window_screen_prunes_a_large_block(sub, minimum):
    # 600 rows (19 groups of 32) over a day of 5-minute slots, 96 consecutive starts and a
    # window of an hour: the outputs are the full screen's, most rows are pruned without
    # minimums (the kept rows' maxima are recomputed, not all), and codes 0, 2 and 3 occur
    c = large_block(minimum, 12)
    times, res, nodes, starts, _, cap, e, top, count, tol, _ = c
    rows = nodes.size
    d = top * 0.97
    _, got = _check(times, res, nodes, starts, 3600.0, cap, e, d, count, sub, tol, 16)
    if minimum == 0.0:
        assert set(np.unique(got[0]).tolist()) >= {0, 2, 3}
        assert got[4] < 0.3 * rows * -(-starts.size // sub)


def test_window_screen_checks_its_arguments():
    times = np.arange(5) * 300.0
    res = np.zeros((3, 2, 5))
    cap = np.ones((2, 2))
    nodes = np.array([0, 2])
    e, d = np.zeros(2), np.ones(2)
    bm = _block_max(res, 2)
    for mod in (C, R):
        ker = Kernels(mod)
        with pytest.raises(ValueError, match="sub"):
            ker.window_screen(times, res, bm, 2, nodes, [0.0, 300.0], 600.0, cap, e, d, 1, 0)
        with pytest.raises(ValueError, match="non-decreasing"):
            ker.window_screen(times, res, bm, 2, nodes, [300.0, 0.0], 600.0, cap, e, d, 1, 4)
        with pytest.raises(ValueError, match="nodes"):
            ker.window_screen(times, res, bm, 2, [0, 3], [0.0], 600.0, cap, e, d, 1, 4)
        with pytest.raises(ValueError, match="cap"):
            ker.window_screen(times, res, bm, 2, nodes, [0.0], 600.0, np.ones((3, 2)), e, d, 1,
                              4)  # fmt: skip
        with pytest.raises(ValueError, match="block maxima"):
            ker.window_screen(times, res, bm, 3, nodes, [0.0], 600.0, cap, e, d, 1, 4)
        # the raw interface: caller-allocated OUT arrays, every entry written
        out = ScreenOut(np.full(2, 9, np.int64), np.full(2, 9, np.int64),
                        np.full(2, 9, np.int64), np.full(2, np.nan))  # fmt: skip
        demand = Demand(e, d, 1, np.zeros(2))
        rows = mod.window_screen(times, res, bm, 2, nodes.astype(np.int64),
                                 np.array([0.0, 300.0]), 600.0, cap, demand, 4, out)  # fmt: skip
        assert rows == 2 and out.code.tolist() == [0, 0] and out.elig.tolist() == [2, 2]


@pytest.mark.parametrize("count, later", [(2, 0), (3, 0), (4, 0), (2, 6), (3, 6), (4, 8)])
def test_scan_answers_alike_with_and_without_window_screen(monkeypatch, count, later):
    # scan on a pool where N is small beside the nodes (window_screen on the later blocks)
    # against scan with the window maxima of every node (window_max_rows + pruned_screen)
    # and the NumPy twins: the same status, start, nodes, proof and rejection. later = 0:
    # totals at 0.97 of the N largest free amounts at t_e, each alone (rejected at every
    # start); else the free amounts of N nodes ``later`` hours on (a set there: solved late)
    from coalloc.collective import CollectiveRequest, scan, verify
    from coalloc.collective.generators import table1_pool

    mod = __import__("coalloc.collective.scan", fromlist=["_FUSE_SHARE"])
    pool = table1_pool(400, n_slots=288, seed=47 + count)
    te = 3600.0 * count
    match = pool.match({"arch": "amd64"})
    if later == 0:
        free = (pool.capacity - pool.reserved_at(te))[match]
        d = -np.sort(-free, axis=0)[:count].sum(axis=0) * 0.97
    else:
        t2 = te + later * 3600.0
        free = (pool.capacity - np.max([pool.reserved_at(t2 + k * 300.0) for k in range(6)],
                                       axis=0))[match]  # fmt: skip
        best = np.argsort(-(free / free.max(axis=0)).sum(axis=1))[:count]
        d = free[best].sum(axis=0) * 0.999
    req = CollectiveRequest(1800.0, count, te, te + 12 * 3600.0, {k: 0.0 for k in pool.names},
                            {k: float(v) for k, v in zip(pool.names, d)},
                            {"arch": "amd64"})  # fmt: skip
    calls, blocks = [], []  # the starts of each window_screen / window_max_blocks call
    real, real_blocks = Kernels.window_screen, Kernels.window_max_blocks

    def counted(self, *args, **kwargs):
        calls.append(len(args[5]))
        return real(self, *args, **kwargs)

    def counted_blocks(self, *args, **kwargs):
        blocks.append(len(args[5]))
        return real_blocks(self, *args, **kwargs)

    monkeypatch.setattr(Kernels, "window_screen", counted)
    monkeypatch.setattr(Kernels, "window_max_blocks", counted_blocks)
    got = scan(req, pool)
    fused = list(calls)
    # h51coll: the second block (8 starts) by window_screen too, the first start alone not
    assert blocks == [1] and fused[0] == 8
    monkeypatch.setattr(mod, "_FUSE_SHARE", 10**9)
    calls.clear()
    blocks.clear()
    full = scan(req, pool)
    assert fused and not calls  # the switch is what differs
    assert blocks == [1, 8]
    twin = scan(req, pool, backend="numpy")
    for other in (full, twin):
        assert (got.status, got.start, got.message) == (other.status, other.start, other.message)
        assert np.array_equal(got.resources, other.resources)
        assert got.rejection == other.rejection
    assert got.status == ("infeasible" if later == 0 else "optimal")
    if later:
        assert got.start > te + 3600.0  # found in a later block (window_screen's)
        assert verify(req, pool, got).admissible
