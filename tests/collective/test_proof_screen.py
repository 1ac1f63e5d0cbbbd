"""The kept proofs' weights from the block maxima (issue 40, h56coll, ``_proof_screen``):
its running-maxima bound equals the direct one bit for bit, both are at most the exact
window maxima, its verdict implies ``proven_by``'s, and the scan answers alike with it."""

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import CollectiveRequest, scan, verify
from coalloc.collective._heuristic_sets import proven_by
from coalloc.collective._proof_screen import ProofScreen, bound_proves, window_lows
from coalloc.collective.core import kernels
from coalloc.collective.model import BLOCK
from coalloc.collective.model.pool import _block_maxima

from ._routes import answer_key, wandering_pool

scan_module = importlib.import_module("coalloc.collective.scan")
screen_module = importlib.import_module("coalloc.collective._proof_screen")


class _Pool:
    def __init__(self, times, bm):
        self.got = (times, None, bm)

    def _block_maxima(self):
        return self.got


class _Scan:
    def __init__(self, nodes, m):
        self.nodes, self.cap, self.proofs = nodes, np.ones((nodes.size, m)), []


def _case(seed, rows, m, k):
    rng = np.random.default_rng(seed)
    times = np.concatenate([[0.0], np.cumsum(rng.choice([100.0, 300.0, 450.0], size=k - 1))])
    res = np.ascontiguousarray(rng.random((rows, m, k)) * (rng.random((rows, m, 1)) < 0.8))
    return rng, times, res, _block_maxima(res)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 9), m=st.integers(1, 3),
       k=st.integers(1, 5 * BLOCK), whole=st.booleans())  # fmt: skip
def test_running_maxima_equal_the_direct_bound_below_the_window_maxima(seed, rows, m, k,
                                                                        whole):  # fmt: skip
    rng, times, res, bm = _case(seed, rows, m, k)
    nodes = np.arange(rows) if whole else np.sort(rng.choice(rows, size=max(1, rows // 2),
                                                             replace=False))  # fmt: skip
    if rng.random() < 0.5:  # windows ending on breakpoints, starts on them
        duration = float(times[rng.integers(0, k)] - times[0]) or 300.0
        starts = np.sort(rng.choice(times, size=12))
    else:
        duration = float(rng.uniform(0.5, 1.5) * max(times[-1], 300.0))
        starts = np.sort(rng.uniform(-200.0, times[-1] + 100.0, size=12))
    screen = ProofScreen(_Scan(nodes, m), _Pool(times, bm), duration)
    exact = kernels("numpy").window_max_rows(times, res, nodes, starts, duration)
    for i, t in enumerate(starts.tolist()):
        lo = screen.lows(t)
        assert np.array_equal(lo, window_lows(times, bm, nodes, starts[i : i + 1], duration))
        assert np.all(lo <= exact[i])
    group = window_lows(times, bm, nodes, starts[3:8], duration)  # every window of the group
    assert np.all(group[None] <= exact[3:8])


def test_the_bound_proves_only_what_proven_by_proves():
    rng, proved = np.random.default_rng(56), 0
    for _ in range(400):
        rows, m, n = int(rng.integers(3, 40)), int(rng.integers(1, 4)), int(rng.integers(1, 6))
        a = rng.random((rows, m)) * rng.uniform(0.5, 2.0, size=m)
        ahi = a + rng.random((rows, m)) * rng.choice([0.0, 0.01, 0.2])  # at least the amounts
        elo = rng.random(m) * 0.2
        d = rng.choice([0.0, 1.0, 2.0], size=m)
        dlo = d * rng.uniform(0.5, 1.0) * n * 0.5
        proofs = [rng.dirichlet(np.ones(int((d > 0).sum())))] if np.any(d > 0) else []
        if bound_proves(ahi, elo, d, dlo, n, proofs):
            proved += 1
            el = np.flatnonzero(np.all(a >= elo[None, :], axis=1))
            assert el.size >= n  # the scan's screens: a start that passed has n eligible
            assert proven_by(a[el], d, dlo, n, proofs)
    assert proved > 20


def _requests(pool, count):
    free = pool.capacity - pool.reserved_at(3000.0)
    top = -np.sort(-free, axis=0)[:count].sum(axis=0)
    return [CollectiveRequest(dur, count, 3000.0, 3000.0 + 86400.0, {k: 0.0 for k in "abc"},
                              {k: float(v * f) for k, v in zip("abc", top)})
            for dur, f in ((21600.0, 0.8), (43200.0, 0.8), (21600.0, 0.9))]  # fmt: skip


@pytest.mark.parametrize("rows,count", [(400, 3), pytest.param(700, 10, marks=pytest.mark.slow)])
def test_the_scan_answers_alike_with_the_screen(monkeypatch, rows, count):
    pool = wandering_pool(1, rows, k=600, level=(0.1, 0.9), step=0.04, freed=True)
    verdicts = []
    real = ProofScreen.proves

    def spy(self, b, s):
        verdicts.append(real(self, b, s))
        return verdicts[-1]

    monkeypatch.setattr(screen_module.ProofScreen, "proves", spy)
    for req in _requests(pool, count):
        got = {}
        for on in (False, True):
            monkeypatch.setattr(scan_module, "_PROOF_SCREEN", on)
            got[on] = scan(req, pool)
        assert answer_key(got[True], message=True) == answer_key(got[False], message=True)
        assert got[True].iterations == got[False].iterations
        if got[True].has_solution:
            assert verify(req, pool, got[True]).admissible
    assert sum(verdicts) >= 10  # the screen proved starts (and the answers stayed)


def test_the_stepped_running_maxima_equal_the_accumulated_ones():
    rng = np.random.default_rng(57)
    for _ in range(60):
        rows, m, nb = int(rng.integers(1, 12)), int(rng.integers(1, 4)), int(rng.integers(1, 30))
        bm = rng.random((rows, m, nb)) * (rng.random((rows, m, nb)) < 0.7)
        c0 = int(rng.integers(0, nb))
        a = int(rng.integers(c0 + 1, nb + 1))
        hi = int(rng.integers(a, nb + 1))
        got, want = screen_module._running(bm, c0, a, hi), screen_module._accumulated(bm, c0, a, hi)
        for x, y in zip(got, want):
            assert x.shape == y.shape and np.array_equal(x, y)
        assert np.array_equal(got[0][0], bm[:, :, c0:a].max(axis=2))  # the referee: directly
        if hi > a:
            assert np.array_equal(got[1][-1], bm[:, :, a:hi].max(axis=2))


def test_a_start_alone_from_the_block_maxima_answers_alike(monkeypatch):
    """``ALONE`` (h57coll): the window maxima of a start the screen leaves, computed alone
    from the pool's block maxima over long windows, give the same answers, ledgers and
    counters as those of ``window_max_rows``; the route is taken."""
    alone = []
    real = ProofScreen.maxima

    def spy(self, ker, times, res, b, s):
        got = real(self, ker, times, res, b, s)
        alone.append(got.shape[0] == 1 and screen_module.ALONE)
        return got

    monkeypatch.setattr(screen_module.ProofScreen, "maxima", spy)
    cases = []
    for rows, count, pick in ((300, 3, slice(1, 2)), (500, 5, slice(2, 3))):  # the fast ones
        pool = wandering_pool(1, rows, k=600, level=(0.1, 0.9), step=0.04, freed=True)
        cases += [(req, pool) for req in _requests(pool, count)[pick]]
    for req, pool in cases:
        got = {}
        for on in (False, True):
            monkeypatch.setattr(screen_module, "ALONE", on)
            got[on] = scan(req, pool)
        assert answer_key(got[True], message=True) == answer_key(got[False], message=True)
        assert got[True].iterations == got[False].iterations
        if got[True].has_solution:
            assert verify(req, pool, got[True]).admissible
    assert sum(alone) >= 10  # starts alone from the block maxima (and the answers stayed)
