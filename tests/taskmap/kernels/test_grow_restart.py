"""The compiled growing's restart from a heap (issue 40, h64cpu, ``bisection.REST_HEAP``):
``grow_fm`` and ``bisect_small`` give the twin's part bit for bit with the heap and with the
scan it replaces, on graphs made to restart often (several components, ties of gain,
vertices heavy enough to be skipped near the target)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import _multilevel as K
from coalloc.taskmap import bisection
from coalloc.taskmap._reference import multilevel as R


def _pieces(rng, n):
    """A symmetric CSR of several small components (and isolated vertices), weights with
    ties, plus vertex weights with heavy ones."""
    comp = rng.integers(0, max(1, n // 4), n)
    w = rng.choice([0.0, 1.0, 1.0, 2.0], (n, n)) * (rng.random((n, n)) < 0.5)
    w = np.triu(w * (comp[:, None] == comp[None, :]), 1)
    tasks = tm.TaskGraph(np.ones(n), w + w.T)
    ip, ix, iw = (np.asarray(a) for a in tasks.undirected_csr())
    wloc = rng.choice([0.5, 1.0, 1.0, 4.0, 9.0], n)
    return ip, ix, iw, wloc


@pytest.fixture
def rest_heap():
    old = K._rest_heap(True)
    yield
    K._rest_heap(old)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 4]))
def test_grow_fm_restarts_the_same_with_the_heap_and_the_scan(seed, passes):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    ip, ix, iw, wloc = _pieces(rng, n)
    target = float(rng.uniform(0.2, 0.9) * wloc.sum())
    tol = max(float(wloc.max()), 0.02 * float(wloc.sum()))
    s0 = int(rng.integers(0, n))
    start = np.zeros(n, dtype=bool)
    want = R.grow_fm(ip, ix, iw, wloc, target, s0, tol, passes, start)
    got = []
    try:
        for on in (True, False):
            K._rest_heap(on)
            got.append(K.grow_fm(ip, ix, iw, wloc, target, s0, tol, passes, start))
    finally:
        K._rest_heap(True)
    assert np.array_equal(got[0], want) and np.array_equal(got[1], want)
    if passes == 0:  # referee: growing alone stops at the target or with nothing to add
        grown = float(wloc[got[0]].sum())
        rest = wloc[~got[0]]
        assert grown >= target - 1e-12 or not rest.shape[0] or (
            grown > 0 and np.all(grown + rest > target) and np.all(grown + rest / 2 > target))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_bisect_small_is_the_same_with_the_heap_and_the_scan(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    ip, ix, iw, wloc = _pieces(rng, n)
    verts = np.sort(rng.choice(n, int(rng.integers(1, n + 1)), replace=False)).astype(np.int64)
    target = float(rng.uniform(0.2, 0.9) * wloc[verts].sum())
    tol = max(float(wloc[verts].max()), 0.02 * float(wloc[verts].sum()))
    want = R.bisect_small(R.Level(ip, ix, iw), verts, wloc[verts], target, tol, 4)
    try:
        for on in (True, False):
            K._rest_heap(on)
            got = K.bisect_small(K.Level(ip, ix, iw), verts, wloc[verts], target, tol, 4)
            assert np.array_equal(got, want)
    finally:
        K._rest_heap(True)


def test_the_knob_reaches_the_kernel(monkeypatch, rest_heap):
    ip, ix, iw, wloc = _pieces(np.random.default_rng(0), 12)
    from coalloc.taskmap.levels import TaskLevel

    level = TaskLevel(ip, ix, iw, wloc)
    for on in (False, True):
        monkeypatch.setattr(bisection, "REST_HEAP", on)
        bisection.grow(level, np.arange(12), float(wloc.sum()) / 2, trials=1, spectral=False)
        assert K._rest_heap(True) is on
