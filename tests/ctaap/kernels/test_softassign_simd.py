"""Every SIMD path of the step-1 kernels gives the portable path's results, bit for bit.

The kernels pick AVX, SSE2 or portable code at run time from the CPU;
``_simd_level`` caps the choice so that one machine checks each path it has (a path the CPU
lacks is reported as such, not run).
"""

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc import ctaap
from coalloc.ctaap import _softassign
from coalloc.ctaap.generators import fig3, random_instance

BEST = _softassign._simd_level()


@pytest.fixture
def restore_simd():
    yield
    _softassign._simd_level(2)


def _solve_at(level, req, off, **kw):
    _softassign._simd_level(level)
    return ctaap.solve(req, off, seed=0, paper=True, **kw)


def _instances():
    yield fig3(200, seed=1)  # dense, m = 5: class table beyond L1, tiled pass
    yield fig3(500, seed=2)
    rng = np.random.default_rng(5)
    for m in (3, 5, 6, 7, 8):
        n = 180
        dense = rng.integers(1, 60, (n, n)) * (rng.random((n, n)) < 0.7)
        np.fill_diagonal(dense, 0)
        if m != 6:  # m = 6: asymmetric request (in-edge pass)
            dense = np.triu(dense) + np.triu(dense, 1).T
        req = ctaap.Request({"cpu": rng.integers(0, 5, n)}, sp.csr_array(dense.astype(float)))
        off = ctaap.Offer(
            {"cpu": rng.integers(3, 8, m)},
            capacity=rng.integers(5, 60, m),
            bandwidth=rng.integers(10, 80, (m, m)),
        )
        yield req, off
    yield random_instance(600, 5, edge_probability=0.02, seed=3)  # sparse


def test_simd_level_validates():
    with pytest.raises(ValueError, match="level"):
        _softassign._simd_level(3)


@pytest.mark.parametrize("level", [1, 2])
def test_simd_paths_match_portable_code(level, restore_simd):
    if level > BEST:
        pytest.skip(f"this CPU has SIMD level {BEST} < {level}; the path cannot run here")
    for req, off in _instances():
        ref = _solve_at(0, req, off)
        got = _solve_at(level, req, off)
        assert _softassign._simd_level() == level
        np.testing.assert_array_equal(got.weights, ref.weights)
        np.testing.assert_array_equal(got.assignment, ref.assignment)
        assert got.iterations == ref.iterations
        assert ctaap.verify(req, off, got.assignment).feasible
