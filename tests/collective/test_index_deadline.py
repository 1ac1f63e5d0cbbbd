"""Issue 36 on a fresh pool (issue 40 item 5, h52coll): the pool's indexes (the bits of
falling amounts, the block maxima and minima) are built in pieces of rows with a look at
the deadline in force between two pieces; a stopped build keeps its rows (exact through
bookings on the same grid) and the next build goes on from there. No clock races: a
deadline already passed, or a stand-in ``interrupt.check`` that stops every few pieces."""

from __future__ import annotations

import importlib
import time
import types

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc._shared import interrupt
from coalloc._shared import params as checks
from coalloc._shared.caches import cache_of
from coalloc.collective import CollectiveRequest, ResourcePool, scan, verify
from coalloc.collective._reference import search as R
from coalloc.collective.model import pool as P

PAST = interrupt.DeadlinePassed


def _falls(res):
    """The bits of falling amounts by their definition (bit k - 1: some amount falls at k)."""
    fall = np.zeros((res.shape[0], max(res.shape[2] - 1, 0)), dtype=bool)
    for j in range(res.shape[0]):
        for k in range(1, res.shape[2]):
            fall[j, k - 1] = bool(np.any(res[j, :, k] < res[j, :, k - 1]))
    return np.packbits(fall, axis=1)


def _assert_indexes(pool):
    d = cache_of(pool)
    res = pool.reserved
    assert np.array_equal(d["falls"][1], _falls(res))
    assert np.array_equal(d["bm"][1], R.block_maxima(res, P.BLOCK))
    assert np.array_equal(d["bn"][1], R.block_minima(res, P.BLOCK))


def _build(pool):
    """What a scan reads: the starts' bits and both block indexes."""
    pool.candidate_starts(np.arange(pool.n_nodes), 0.0, float(pool.times[-1]))
    pool._block_extrema()


class _StopEvery:
    """A stand-in for ``interrupt.check``: the deadline passes at every ``k``-th look."""

    def __init__(self, k):
        self.k, self.calls = k, 0

    def check(self, detail=None):
        self.calls += 1
        if self.calls % self.k == 0:
            raise PAST()


def _pool(seed, n=23, m=2, k=70):
    rng = np.random.default_rng(seed)
    res = np.floor(rng.random((n, m, k)) * 4)
    return ResourcePool(np.full((n, m), 8.0), [f"p{i}" for i in range(m)],
                        np.arange(k) * 300.0, res)  # fmt: skip


def test_a_passed_deadline_stops_the_index_build_before_its_first_piece(monkeypatch):
    """Before h52coll the build ran to its end whatever the deadline (0.5-1.0 s past a 0.05 s
    limit on the first request on a 10,000-node pool under load)."""
    monkeypatch.setattr(P, "PIECE", 2 * 70)  # one row per piece
    pool = _pool(1)
    for build in (lambda: pool.candidate_starts([0, 1], 0.0, 1e4), pool._block_extrema):
        with pytest.raises(PAST), interrupt.until(time.perf_counter() - 1.0):
            build()
    d = cache_of(pool)
    assert d["falls"] is None and d["bm"] is None and d["bn"] is None
    assert {key: part[2] for key, part in d["parts"].items()} == {"falls": 0, "bm": 0}
    _build(pool)  # no deadline: the whole build, the same arrays as the definitions
    _assert_indexes(pool)
    assert d["parts"] == {}


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.integers(2, 7), st.integers(1, 4),
       st.sampled_from(["none", "same grid", "new grid", "copy"]))  # fmt: skip
@example(seed=3, k=2, rows_per_piece=1, event="same grid")
def test_a_stopped_build_goes_on_and_ends_with_the_same_indexes(seed, k, rows_per_piece,
                                                                event):  # fmt: skip
    """Stopped every ``k`` looks, each build makes progress and the indexes in the end equal
    the definitions; a booking between two stops (the rows built so far updated, or the
    build dropped on a new grid) and a copy (its own build) change nothing of that."""
    mp = pytest.MonkeyPatch()
    try:
        pool = _pool(seed)
        mp.setattr(P, "PIECE", rows_per_piece * pool.n_properties * pool.times.size)
        stand_in = _StopEvery(k)
        mp.setattr(P, "interrupt", types.SimpleNamespace(check=stand_in.check))
        rng = np.random.default_rng(seed)
        stops, others = 0, []
        while True:
            try:
                _build(pool)
                break
            except PAST:
                stops += 1
            assert stops <= 6 * pool.n_nodes + 6  # each look that passes builds a piece
            if stops == 2 and event == "copy":
                others.append(pool.copy())
                assert cache_of(others[-1])["parts"] == {}
            elif stops == 2 and event != "none":
                rows = rng.choice(pool.n_nodes, 5, replace=False)
                start = 600.0 + (150.0 if event == "new grid" else 0.0)
                pool.reserve(start, 900.0, rows, np.ones((5, pool.n_properties)))
        assert stops >= 1
        mp.setattr(P, "interrupt", interrupt)
        for p in [pool] + others:
            _build(p)
            _assert_indexes(p)
    finally:
        mp.undo()


def test_scan_on_a_fresh_pool_keeps_its_limit_and_then_answers_alike(monkeypatch):
    """``scan`` with a limit already spent when it reaches the indexes stops there with
    ``time_limit`` (before h52coll it built every index first); the next calls go on from
    the rows built and answer as a pool that never stopped does."""
    monkeypatch.setattr(P, "PIECE", 3 * 20)
    rng = np.random.default_rng(7)
    n, m, k = 40, 3, 20
    res = np.floor(rng.random((n, m, k)) * 3)
    res[:, :, 0] = 3.0  # the first start fails: the later ones are read from the indexes
    make = lambda: ResourcePool(np.full((n, m), 4.0), ["a", "b", "c"],  # noqa: E731
                                np.arange(k) * 300.0, res)  # fmt: skip
    req = CollectiveRequest(900.0, 5, 0.0, 4000.0, minimum={"a": 2.0}, total={"b": 8.0})
    pool = make()
    got = scan(req, pool, time_limit=1e-9)  # over before the first piece: no clock race
    assert got.status == "time_limit" and got.start is None
    d = cache_of(pool)  # no index built (h55coll: the first start is read without them)
    assert d.get("falls") is None and d.get("parts", {}).get("falls", (0, 0, 0))[2] == 0
    stand_in = _StopEvery(3)
    monkeypatch.setattr(P, "interrupt", types.SimpleNamespace(check=stand_in.check))
    for _ in range(3 * n):
        try:
            want = scan(req, pool)
            break
        except PAST:
            continue
    monkeypatch.setattr(P, "interrupt", interrupt)
    ref = scan(req, make())
    assert (want.status, want.start) == (ref.status, ref.start)
    assert np.array_equal(want.resources, ref.resources)
    assert verify(req, make(), want).admissible
    _assert_indexes(pool)


def _first_start_case(fail_first: bool):
    rng = np.random.default_rng(11)
    n, m, k = 40, 3, 20
    res = np.floor(rng.random((n, m, k)) * 3)
    if fail_first:
        res[:, :, 0] = 3.0  # no node has 2 of "a" at the first start
    make = lambda: ResourcePool(np.full((n, m), 4.0), ["a", "b", "c"],  # noqa: E731
                                np.arange(k) * 300.0, res)  # fmt: skip
    req = CollectiveRequest(900.0, 5, 0.0, 4000.0, minimum={"a": 2.0}, total={"b": 8.0})
    return make, req


def _expired(detail=None):
    """A stand-in for the index builds' ``interrupt.check``: the call's own clock has passed
    its limit at every look there (what the time limit's scope raises then)."""
    raise checks._TimeLimitReached()


@pytest.mark.parametrize("fail_first", [False, True])
def test_a_first_call_answers_at_the_first_start_without_the_indexes(monkeypatch, fail_first):
    """Issue 41 / issue 40 item 5 (h55coll): a timed first call on a fresh pool whose index
    builds cannot finish within its limit (a stand-in: the deadline passes at every look
    inside them) still answers when the first start, the earliest possible, has a set: its
    window maxima need no index. When that start fails, the later ones need the indexes: the
    call returns ``time_limit`` with no answer, and the next call answers alike."""
    make, req = _first_start_case(fail_first)
    warm = make()
    _build(warm)
    ref = scan(req, warm, time_limit=60.0)
    pool = make()
    monkeypatch.setattr(P, "interrupt", types.SimpleNamespace(check=_expired))
    got = scan(req, pool, time_limit=60.0)
    monkeypatch.setattr(P, "interrupt", interrupt)
    assert cache_of(pool).get("falls") is None  # no index was built
    if fail_first:
        assert ref.status == "optimal" and ref.start > 0.0
        assert got.status == "time_limit" and got.start is None
        got = scan(req, pool, time_limit=60.0)  # the indexes now: as on the warm pool
    else:
        assert ref.status == "optimal" and ref.start == 0.0
    assert (got.status, got.start, got.message) == (ref.status, ref.start, ref.message)
    assert np.array_equal(got.resources, ref.resources)
    assert np.array_equal(got.amounts, ref.amounts)
    assert got.iterations == ref.iterations
    assert verify(req, make(), got).admissible


def test_an_untimed_warm_up_still_builds_the_indexes():
    """The benches' and a matcher's warm-up (an untimed scan of a one-node request, answered
    at its first start) leaves the indexes built: only a timed call defers them."""
    make, _ = _first_start_case(False)
    pool = make()
    got = scan(CollectiveRequest(300.0, 1, 0.0, 0.0), pool)
    assert got.status == "optimal" and got.start == 0.0
    assert pool._indexed()
    _assert_indexes(pool)
    timed = make()
    assert scan(CollectiveRequest(300.0, 1, 0.0, 0.0), timed, time_limit=60.0).start == 0.0
    assert not timed._indexed()


def test_a_long_first_window_builds_the_indexes_first(monkeypatch):
    """Over more than ``_DEFER_SEGS`` segments one start's window maxima read more of the
    amounts than a short limit allows (40-90 ms over 2 days at 10,000 nodes): the timed call
    builds the indexes first, as before, and stops there under the stand-in."""
    scan_mod = importlib.import_module("coalloc.collective.scan")  # the module, not scan
    rng = np.random.default_rng(3)
    n, m, k = 30, 2, 120
    res = np.floor(rng.random((n, m, k)) * 2)
    make = lambda: ResourcePool(np.full((n, m), 4.0), ["a", "b"],  # noqa: E731
                                np.arange(k) * 300.0, res)  # fmt: skip
    segs = scan_mod._DEFER_SEGS
    for dur, deferred in ((segs * 300.0, True), ((segs + 1) * 300.0, False)):
        req = CollectiveRequest(dur, 3, 0.0, 3000.0, minimum={"a": 1.0})
        ref = scan(req, make(), time_limit=60.0)
        assert ref.status == "optimal" and ref.start == 0.0
        pool = make()
        monkeypatch.setattr(P, "interrupt", types.SimpleNamespace(check=_expired))
        got = scan(req, pool, time_limit=60.0)
        monkeypatch.setattr(P, "interrupt", interrupt)
        if deferred:
            assert (got.status, got.start) == (ref.status, ref.start)
            assert np.array_equal(got.resources, ref.resources)
        else:
            assert got.status == "time_limit" and got.start is None
