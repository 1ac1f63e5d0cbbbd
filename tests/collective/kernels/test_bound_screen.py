"""bound_screen (issue 40, h53coll): block_screen's code and property at the starts that
bounds from thresholds decide, against its twin and the full screen."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Demand, Kernels, ScreenOut

from ._screen_cases import large_block, pool, random_case


def _check(times, res, nodes, starts, dur, cap_n, e, d, count, stride, group, tol):
    """Compiled = twin (every output, the starts decided); at every decided start the full
    screen's code and property (and its value for code 1), its eligible count everywhere;
    code 2 only where the full screen says 2; undecided starts carry (-1, -1, 0.0)."""
    tms = Kernels(C).window_max_rows(times, res, nodes, starts, dur)
    full = Kernels(C).block_screen(tms, cap_n, e, d, count, tol=tol)
    got = Kernels(C).bound_screen(times, res, nodes, starts, dur, cap_n, e, d, count, stride,
                                  group, tol=tol)  # fmt: skip
    ref = Kernels(R).bound_screen(times, res, nodes, starts, dur, cap_n, e, d, count, stride,
                                  group, tol=tol)  # fmt: skip
    assert got[4] == ref[4] == int(np.sum(got[0] >= 0))
    for x, y in zip(got[:4], ref[:4]):
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
    code, elig, prop, value = got[:4]
    assert np.array_equal(elig, full[1])
    dec = code >= 0
    assert np.array_equal(code[dec], full[0][dec]) and np.array_equal(prop[dec], full[2][dec])
    one = code == 1
    assert np.array_equal(value[one], full[3][one])
    assert np.all(np.isnan(value[code == 2]))
    assert np.all(prop[~dec] == -1) and np.all(value[~dec] == 0.0)
    # the rows' bounds from block extrema (B segments, the last block shorter): compiled =
    # twin, and every decision the full screen's again
    for B in (1, 3, 16):
        bm = np.stack([res[:, :, c : c + B].max(axis=2) for c in range(0, res.shape[2], B)], 2)
        bn = np.stack([res[:, :, c : c + B].min(axis=2) for c in range(0, res.shape[2], B)], 2)
        gb = Kernels(C).bound_screen(times, res, nodes, starts, dur, cap_n, e, d, count, stride,
                                     group, tol=tol, extrema=(bm, bn, B))  # fmt: skip
        rb = Kernels(R).bound_screen(times, res, nodes, starts, dur, cap_n, e, d, count, stride,
                                     group, tol=tol, extrema=(bm, bn, B))  # fmt: skip
        assert gb[4] == rb[4]
        for x, y in zip(gb[:4], rb[:4]):
            assert np.array_equal(x, y, equal_nan=True)
        db = gb[0] >= 0
        assert np.array_equal(gb[1], full[1])
        assert np.array_equal(gb[0][db], full[0][db]) and np.array_equal(gb[2][db], full[2][db])
    return full, got


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["none", "equal", "near"]),
       st.integers(1, 5), st.integers(1, 9), st.booleans())  # fmt: skip
@example(seed=7, ties="near", stride=1, group=1, minimums=False)
@example(seed=40, ties="equal", stride=2, group=4, minimums=True)
def test_bound_screen_matches_twin_and_full(seed, ties, stride, group, minimums):
    """Drifting pools with ties and near-ties, any rows (repeats too), starts on and off the
    grid, short and long windows, totals around the count largest sums (some zero)."""
    c, _ = random_case(seed, ties, minimums, max_count=6)
    times, res, nodes, starts, dur, cap_n, e, d, count, tol, _ = c
    _check(times, res, nodes, starts, dur, cap_n, e, d, count, stride, group, tol)


@pytest.mark.parametrize("minimum", [0.0, 3.0])
@pytest.mark.parametrize("shares", [(0.97, 1.2, 1.3), (0.95, 0.9, 1.3), (1.02, 1.1, 1.2)])
def test_bound_screen_decides_most_starts_of_a_large_block(minimum, shares):
    # 600 rows over a day of 5-minute slots, 96 consecutive starts, a window of an hour:
    # totals at fixed shares of the median count-largest sums; one property short (most
    # starts decided, code 2 on it), two short (the larger shortfall proven at most of them),
    # or none short (nothing decided but the minimums' code 1)
    c = large_block(minimum, 40)
    times, res, nodes, starts, _, cap, e, top, count, tol, _ = c
    d = top / np.array(shares)
    full, got = _check(times, res, nodes, starts, 3600.0, cap, e, d, count, 4, 8, tol)
    short = full[0] == 2
    if short.any():
        assert got[4] >= 0.6 * short.sum()
    else:
        assert got[4] == int(np.sum(full[0] == 1))


def test_bound_screen_checks_its_arguments():
    rng = np.random.default_rng(3)
    times, res, cap = pool(rng, 6, 2, 12, "none")
    nodes, starts = np.arange(6), times[:4].copy()
    K = Kernels(C)
    with pytest.raises(ValueError, match="stride"):
        K.bound_screen(times, res, nodes, starts, 600.0, cap, np.zeros(2), np.ones(2), 2, 0, 1)
    with pytest.raises(ValueError, match="non-decreasing"):
        K.bound_screen(times, res, nodes, starts[::-1], 600.0, cap, np.zeros(2), np.ones(2), 2,
                       1, 1)  # fmt: skip
    with pytest.raises(ValueError, match="rows of reserved"):
        K.bound_screen(times, res, nodes + 1, starts, 600.0, cap, np.zeros(2), np.ones(2), 2,
                       1, 1)  # fmt: skip


def test_bound_screen_direct_calls_agree():
    # the kernel and its twin called directly (caller-allocated outputs, as Kernels does)
    rng = np.random.default_rng(5)
    times, res, cap = pool(rng, 30, 3, 40, "equal")
    nodes, starts = np.arange(30), times[3:20].copy()
    demand = Demand(np.zeros(3), np.array([40.0, 30.0, 0.0]), 4, np.zeros(3))
    outs = []
    for mod in (C, R):
        out = ScreenOut(*(np.empty(starts.size, dtype=t) for t in (np.int64, np.int64,
                                                                     np.int64, np.float64)))
        got = mod.bound_screen(times, res, nodes, starts, 900.0, cap, demand, 2, 3, out)
        outs.append((got, out))
    assert outs[0][0] == outs[1][0]
    for x, y in zip(outs[0][1], outs[1][1]):
        assert np.array_equal(x, y, equal_nan=True)
