"""``core.decrease_starts`` reads the window in blocks, without the whole copy, and looks at
a deadline between blocks (issue 36: the 17 MB copy and comparison ran before the exact
method's first look at its deadline). The referee is the kernel's NumPy twin
(``_reference.search.decrease_starts``), written independently of this function."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coalloc.collective as co
from coalloc.collective import core
from coalloc.collective._reference import search as twin


def _pool(n: int, k: int, seed: int, falls: float) -> co.ResourcePool:
    rng = np.random.default_rng(seed)
    cap = rng.integers(4, 9, size=(n, 2)).astype(float)
    # amounts that rise mostly, and fall at a share ``falls`` of the breakpoints
    steps = rng.integers(0, 3, size=(n, 2, k)).astype(float)
    steps *= np.where(rng.random((n, 2, k)) < falls, -1.0, 1.0)
    reserved = np.clip(np.cumsum(steps, axis=2), 0.0, cap[:, :, None])
    return co.ResourcePool.from_slots(cap, reserved, 60, ["cores", "mem"])


def _twin(pool, nodes, lo, hi) -> np.ndarray:
    out = np.empty(pool.times.shape[0] + 1)
    c = twin.decrease_starts(pool.times, pool.reserved, np.asarray(nodes, dtype=np.int64),
                             lo, hi, out)  # fmt: skip
    return out[:c]


@settings(max_examples=60, derandomize=True, deadline=None)
@given(n=st.integers(1, 300), k=st.integers(2, 40), seed=st.integers(0, 2**16),
       falls=st.sampled_from([0.0, 0.002, 0.05, 0.5]), lo=st.floats(-100, 2500),
       width=st.floats(0, 2500), take=st.floats(0.0, 1.0))  # fmt: skip
@example(n=1, k=2, seed=0, falls=0.0, lo=0.0, width=0.0, take=1.0)
@example(n=300, k=40, seed=3, falls=0.002, lo=-100.0, width=2500.0, take=1.0)
def test_decrease_starts_matches_the_twin(n, k, seed, falls, lo, width, take):
    pool = _pool(n, k, seed, falls)
    rng = np.random.default_rng(seed + 1)
    nodes = np.flatnonzero(rng.random(n) < take)
    rng.shuffle(nodes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(core, "DECREASE_BLOCK", 16)  # several blocks on these sizes
        got = core.decrease_starts(pool, nodes, lo, lo + width)
        far = core.decrease_starts(pool, nodes, lo, lo + width, time.perf_counter() + 3600)
    assert np.array_equal(got, _twin(pool, nodes, lo, lo + width))
    assert np.array_equal(far, got)


def test_a_passed_deadline_keeps_every_start_not_ruled_out(monkeypatch):
    """Stopped before its first block, the pass returns every breakpoint of the window: a
    superset of the full pass's starts (each still possible), strictly larger here."""
    monkeypatch.setattr(core, "DECREASE_BLOCK", 4)
    pool = _pool(40, 30, 7, 0.05)
    nodes = np.arange(40)
    lo, hi = 200.0, 1500.0
    full = core.decrease_starts(pool, nodes, lo, hi)
    stopped = core.decrease_starts(pool, nodes, lo, hi, time.perf_counter() - 1.0)
    window = pool.times[(pool.times > lo) & (pool.times <= hi)]
    assert np.array_equal(stopped, np.concatenate([[lo], window]))
    assert set(full) < set(stopped)


def test_the_pass_looks_at_the_deadline_between_blocks_and_stops_when_all_fall(monkeypatch):
    """Blocks read and looks at the clock, counted: one look per block, none once every
    breakpoint of the window is a start."""
    looks = []
    real = time.perf_counter

    class _Time:
        @staticmethod
        def perf_counter():
            looks.append(1)
            return real()

    monkeypatch.setattr(core, "time", _Time)
    monkeypatch.setattr(core, "DECREASE_BLOCK", 10)
    pool = _pool(95, 20, 2, 0.0)  # nothing falls before the horizon's end: every block read
    deadline = real() + 3600
    hi = float(pool.times[-2])
    assert core.decrease_starts(pool, np.arange(95), 0.0, hi, deadline).tolist() == [0.0]
    assert len(looks) == 10
    looks.clear()
    # every breakpoint a fall in the first block already: rows 0/1 drop at odd/even ones
    k = np.arange(20)
    rows = [np.where((k + j) % 2 == 0, 2.0, 1.0) for j in range(95)]
    reserved = np.stack([np.stack([r, np.zeros(20)]) for r in rows])
    pool = co.ResourcePool.from_slots(np.full((95, 2), 4.0), reserved, 60, ["cores", "mem"])
    got = core.decrease_starts(pool, np.arange(95), 0.0, 1e9, deadline)
    assert got.size == pool.times.size  # (lo = times[0], then every later breakpoint)
    assert len(looks) == 1


def test_exact_hands_its_deadline_down_and_a_stopped_pass_changes_no_answer(monkeypatch):
    """The exact method passes its deadline to the pass; the superset a stopped pass returns
    holds only possible starts, so the exact answer over it is the untimed one (here every
    breakpoint of the window falls already; a strict superset: the test above)."""
    import importlib

    cx = importlib.import_module("coalloc.collective.exact")
    pool = co.generators.table1_pool(16, n_slots=48, seed=1)
    request = co.generators.section42_requests(pool, 4, 2, seed=1)[0][1]
    untimed = co.Instance(request, pool).solve("exact")
    seen = []
    real = core.decrease_starts

    def stopped(pool, nodes, lo, hi, deadline=None):
        seen.append(deadline)
        out = real(pool, nodes, lo, hi, time.perf_counter() - 1.0)  # (as if it had passed)
        assert set(real(pool, nodes, lo, hi)) <= set(out)
        return out

    monkeypatch.setattr(cx, "decrease_starts", stopped)
    timed = co.Instance(request, pool).solve("exact", time_limit=300)
    assert seen and seen[0] is not None
    assert untimed.status == timed.status == "optimal"
    assert timed.start == untimed.start and timed.objective == untimed.objective
    assert co.Instance(request, pool).verify(timed).ok
