"""window_max_rows (one monotone deque per row, issue 28) against its twin and the definition."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Kernels


def _definition(times, res, nodes, starts, dur):
    """The window maxima from the definition: every segment meeting [t, t + dur)."""
    k = times.shape[0]
    out = np.empty((starts.size, nodes.size, res.shape[1]))
    for s, t in enumerate(starts):
        ks = [q for q in range(k) if times[q] < t + dur and (q + 1 == k or times[q + 1] > t)]
        out[s] = res[nodes][:, :, ks].max(axis=2)
    return out


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_window_max_rows_matches_twin(seed, ties):
    rng = np.random.default_rng(seed)
    n, m, k = int(rng.integers(1, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 40))
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 5, k - 1) * 100.0)])
    res = rng.random((n, m, k)) * (rng.random((n, m, k)) < 0.7)
    if ties:  # equal amounts: the deque keeps the later of two equal ones
        res = np.floor(res * 3)
    nodes = rng.integers(0, n, int(rng.integers(0, 2 * n)))  # any rows, repeats too
    pool = np.concatenate([times, rng.uniform(0, times[-1] + 900, 6), times[:3]])
    starts = np.sort(rng.choice(pool, int(rng.integers(0, 12))))  # repeated starts too
    dur = float(rng.choice([50.0, 100.0, 250.0, 1000.0, 5000.0]))
    a = Kernels(C).window_max_rows(times, res, nodes, starts, dur)
    b = Kernels(R).window_max_rows(times, res, nodes, starts, dur)
    assert np.array_equal(a, b)
    assert np.array_equal(a, _definition(times, res, nodes, starts, dur))
    # the raw interface: caller-allocated OUT arrays, every entry written
    raw = [np.full(a.shape, np.nan), np.full(a.shape, np.nan)]
    args = (times, res, nodes.astype(np.int64), starts, dur)
    C.window_max_rows(*args, raw[0])
    R.window_max_rows(*args, raw[1])
    assert np.array_equal(raw[0], a) and np.array_equal(raw[1], a)
    # the older kernel over the same rows (every node) agrees where it applies
    if starts.size and nodes.size:
        full = Kernels(C).window_max(times, res, starts, dur)
        assert np.array_equal(a, full[:, nodes, :])


@pytest.mark.parametrize("case", range(6))
def test_window_max_rows_wide_windows(case):
    # a week of 5-minute slots and windows of up to 2 days (576 segments), starts off the grid
    rng = np.random.default_rng(2800 + case)
    k = 2017
    times = np.arange(k) * 300.0
    res = np.round(rng.random((4, 3, k)) * 8, 2)
    starts = np.sort(np.concatenate([[0.0], rng.uniform(0, times[-1], 30)]))
    dur = float(rng.choice([600.0, 3 * 3600.0, 86400.0, 172800.0]))
    nodes = np.array([3, 0, 2])
    a = Kernels(C).window_max_rows(times, res, nodes, starts, dur)
    assert np.array_equal(a, Kernels(R).window_max_rows(times, res, nodes, starts, dur))
    assert np.array_equal(a, _definition(times, res, nodes, starts, dur))


@pytest.mark.parametrize("module", [C, R], ids=["compiled", "twin"])
def test_window_max_rows_rejects_bad_arguments(module):
    times, res = np.array([0.0, 100.0]), np.zeros((2, 1, 2))
    ker = Kernels(module)
    with pytest.raises(ValueError, match="non-decreasing"):
        ker.window_max_rows(times, res, [0], [100.0, 0.0], 10.0)
    with pytest.raises(ValueError, match="index rows"):
        ker.window_max_rows(times, res, [2], [0.0], 10.0)
    with pytest.raises(ValueError, match="one column per breakpoint"):
        ker.window_max_rows(times[:1], res, [0], [0.0], 10.0)
    with pytest.raises(ValueError, match="out must be"):
        module.window_max_rows(times, res, np.array([0]), np.array([0.0]), 10.0,
                               np.empty((1, 2, 1)))  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 9))
def test_window_max_blocks_matches_twin(seed, B):
    rng = np.random.default_rng(seed)
    n, m, k = int(rng.integers(1, 7)), int(rng.integers(1, 4)), int(rng.integers(1, 60))
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 5, k - 1) * 100.0)])
    res = np.floor(rng.random((n, m, k)) * 4) * (rng.random((n, m, k)) < 0.8)
    nodes = rng.integers(0, n, int(rng.integers(0, 2 * n)))
    pool = np.concatenate([times, rng.uniform(0, times[-1] + 900, 6)])
    starts = rng.choice(pool, int(rng.integers(0, 10)))  # any order: each start on its own
    dur = float(rng.choice([50.0, 100.0, 700.0, 3000.0, 20000.0]))
    bm = R.block_maxima(res, B)
    a = Kernels(C).window_max_blocks(times, res, bm, B, nodes, starts, dur)
    assert np.array_equal(a, Kernels(R).window_max_blocks(times, res, bm, B, nodes, starts, dur))
    assert np.array_equal(a, _definition(times, res, nodes, starts, dur))
    raw = [np.full(a.shape, np.nan), np.full(a.shape, np.nan)]
    args = (times, res, bm, B, nodes.astype(np.int64), starts, dur)
    C.window_max_blocks(*args, raw[0])
    R.window_max_blocks(*args, raw[1])
    assert np.array_equal(raw[0], a) and np.array_equal(raw[1], a)


@pytest.mark.parametrize("module", [C, R], ids=["compiled", "twin"])
def test_window_max_blocks_rejects_bad_arguments(module):
    times, res = np.array([0.0, 100.0, 200.0]), np.zeros((2, 1, 3))
    ker = Kernels(module)
    with pytest.raises(ValueError, match="block maxima"):
        ker.window_max_blocks(times, res, np.zeros((2, 1, 1)), 2, [0], [0.0], 10.0)
    with pytest.raises(ValueError, match="B must be"):
        ker.window_max_blocks(times, res, np.zeros((2, 1, 3)), 0, [0], [0.0], 10.0)
    with pytest.raises(ValueError, match="index rows"):
        ker.window_max_blocks(times, res, np.zeros((2, 1, 2)), 2, [5], [0.0], 10.0)
