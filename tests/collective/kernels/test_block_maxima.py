"""block_maxima (the pool's index of block maxima, issue 40 h50coll) against its twin, the
definition and the pool's kept-up-to-date copy."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.collective import ResourcePool
from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Kernels
from coalloc.collective.model.pool import BLOCK


def _definition(res, B, reduce=max):
    n, m, K = res.shape
    out = np.empty((n, m, -(-K // B)))
    for b in range(out.shape[2]):
        for j in range(n):
            for i in range(m):
                out[j, i, b] = reduce(res[j, i, b * B : (b + 1) * B].tolist())
    return out


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(1, 21), st.booleans())
@example(seed=1, B=16, ties=False)  # the pool's BLOCK, a shorter last block
@example(seed=2, B=1, ties=True)
def test_block_maxima_matches_twin_and_definition(seed, B, ties):
    rng = np.random.default_rng(seed)
    n, m, K = int(rng.integers(0, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 90))
    res = rng.normal(size=(n, m, K)) * (rng.random((n, m, K)) < 0.8)  # negatives, zeros
    if ties:
        res = np.floor(res * 2)
    a = Kernels(C).block_maxima(res, B)
    assert np.array_equal(a, Kernels(R).block_maxima(res, B))
    assert np.array_equal(a, _definition(res, B))
    # the raw interface: every entry of the caller's OUT array written
    raw = np.full(a.shape, np.nan)
    C.block_maxima(res, B, raw)
    assert np.array_equal(raw, a)
    assert np.array_equal(R.block_maxima(res, B), a)
    # the minima alike
    lo = Kernels(C).block_minima(res, B)
    assert np.array_equal(lo, Kernels(R).block_minima(res, B))
    assert np.array_equal(lo, _definition(res, B, min))
    raw = np.full(lo.shape, np.nan)
    C.block_minima(res, B, raw)
    assert np.array_equal(raw, lo)
    assert np.array_equal(R.block_minima(res, B), lo)


@pytest.mark.parametrize("module", [C, R], ids=["compiled", "twin"])
def test_block_maxima_rejects_bad_arguments(module):
    res = np.zeros((2, 1, 5))
    for kernel in (module.block_maxima, module.block_minima):
        with pytest.raises(ValueError, match="B must be"):
            kernel(res, 0, np.zeros((2, 1, 1)))
        with pytest.raises(ValueError, match="out must be"):
            kernel(res, 2, np.zeros((2, 1, 2)))


def test_pool_block_maxima_follow_bookings():
    """The pool's indexes (built by the kernels) equal the twins' on the amounts after every
    booking and release, on the same grid and on a new one, in the pool and in a copy."""
    rng = np.random.default_rng(40)
    n, K = 12, 3 * BLOCK + 5
    times = np.arange(K) * 300.0
    res = np.floor(rng.random((n, 2, K)) * 3)
    pool = ResourcePool(np.full((n, 2), 8.0), ["cpu", "ram"], times, res)
    for step in range(8):
        res_now, bm = pool._block_maxima()[1:]
        assert np.array_equal(bm, R.block_maxima(res_now, BLOCK))
        res_now, bm, bn = pool._block_extrema()[1:]
        assert np.array_equal(bm, R.block_maxima(res_now, BLOCK))
        assert np.array_equal(bn, R.block_minima(res_now, BLOCK))
        if step == 3:  # a copy shares the indexes until one of them books
            other = pool.copy()
            # a whole block of three rows: their minima (and maxima) change in the copy only
            other.reserve(0.0, BLOCK * 300.0, [0, 1, 2], np.ones((3, 2)))
            assert np.array_equal(other._block_extrema()[3],
                                  R.block_minima(other.reserved, BLOCK))  # fmt: skip
        rows = rng.choice(n, 3, replace=False)
        start = float(rng.integers(0, K - 4)) * 300.0 + (150.0 if step == 5 else 0.0)
        pool.reserve(start, 900.0, rows, np.ones((3, 2)))
        if step % 3 == 2:
            pool.release(start, 900.0, rows, np.ones((3, 2)))
    assert np.array_equal(pool._block_maxima()[2], R.block_maxima(pool.reserved, BLOCK))
    assert np.array_equal(pool._block_extrema()[3], R.block_minima(pool.reserved, BLOCK))
