"""The enumeration of every set (``_exact_sets.enumerate_best``) checks its deadline between
blocks of at most ``_BLOCK_ENTRIES`` row indices: with sets of 40 rows a block of 4096 sets
took 0.15-0.28 s, and the scan at T = 0.5 s returned after 0.55-0.77 s (the contract audit's
big-150 case). The best set must not depend on the blocks."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import _exact_sets
from coalloc.collective.core import ratio


def _case(seed: int, k: int, count: int):
    rng = np.random.default_rng(seed)
    avail = rng.integers(0, 5, size=(k, 2)).astype(np.float64)
    tmax = rng.integers(1, 9, size=(k, 2)).astype(np.float64)
    cap = tmax + rng.integers(0, 5, size=(k, 2))
    d = np.full(2, 1.5 * count)
    return avail, tmax, cap, d


def _brute(avail, tmax, cap, d, count, subsets):
    best, rows = -1.0, None
    for c in subsets:
        b = np.array(c)
        if np.all(avail[b].sum(axis=0) >= d):
            u = float(np.prod(ratio(d + tmax[b].sum(axis=0), cap[b].sum(axis=0))))
            if u > best:
                best, rows = u, b
    return rows, best


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.integers(0, 10**6), st.integers(3, 9), st.integers(1, 8), st.booleans())
def test_the_best_set_is_the_same_whatever_the_blocks(seed, k, entries, single):
    count = 1 if single else max(1, k // 2)  # single rows: ranges, not combinations
    avail, tmax, cap, d = _case(seed, k, count)
    want_rows, want_u = _brute(avail, tmax, cap, d, count, combinations(range(k), count))
    old = _exact_sets._BLOCK_ENTRIES
    try:
        _exact_sets._BLOCK_ENTRIES = entries  # tiny blocks: many deadline checks
        rows, u, complete = _exact_sets.enumerate_best(avail, tmax, cap, d, count)
    finally:
        _exact_sets._BLOCK_ENTRIES = old
    assert complete
    if want_rows is None:
        assert rows is None and u == -1.0
    else:
        assert u == want_u and list(rows) == list(want_rows)


def test_a_deadline_stops_it_after_one_block_of_bounded_size(monkeypatch):
    # 42 rows, sets of 40: 861 sets. A clock that passes the deadline after the first check
    # lets exactly one block run, of at most _BLOCK_ENTRIES // 40 sets (it was 4096)
    k, count = 42, 40
    avail, tmax, cap, d = _case(1, k, count)
    d[:] = 0.0  # every set admissible: the best so far is the best of the sets seen
    ticks = iter([0.0] + [10.0] * 100)
    monkeypatch.setattr(_exact_sets.time, "perf_counter", lambda: next(ticks))
    rows, u, complete = _exact_sets.enumerate_best(avail, tmax, cap, d, count, deadline=5.0)
    assert not complete
    step = _exact_sets._BLOCK_ENTRIES // count
    assert step < 861
    first = list(combinations(range(k), count))[:step]
    want_rows, want_u = _brute(avail, tmax, cap, d, count, first)
    assert u == want_u and list(rows) == list(want_rows)
