"""Shared set-ups of the screens' kernel tests (``window_screen``, ``bound_screen``):
drifting random pools with ties, their demands, and the 600-row block of a day."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from coalloc.collective import _search as C
from coalloc.collective.core import Kernels


class Case(NamedTuple):
    """One screen's inputs: the pool's grid and amounts, the rows and starts screened, the
    window, the rows' capacities, the demand (minimums, totals, count, tolerances) and the
    window maxima of every row at every start (``window_max_rows``)."""

    times: np.ndarray
    res: np.ndarray
    nodes: np.ndarray
    starts: np.ndarray
    dur: float
    cap_n: np.ndarray
    e: np.ndarray
    d: np.ndarray
    count: int
    tol: np.ndarray
    tms: np.ndarray


def pool(rng, rows, m, k, ties):
    """A grid of ``k`` breakpoints and reserved amounts (rows, m, k) that drift slowly along
    the grid (so that a sub-block's bounds are tight and rows are pruned), with exact ties
    (rounded amounts) or near-ties (rows one ulp off another row) when ``ties`` asks; the
    capacities hold every reserved amount."""
    times = np.concatenate([[0.0], np.cumsum(rng.integers(1, 4, k - 1) * 300.0)])
    cap = np.round(rng.uniform(1, 8, (rows, 1)) * rng.uniform(0.6, 1.4, (rows, m)), 1)
    walk = np.clip(rng.uniform(0.1, 0.9, (rows, m, 1))
                   + np.cumsum(rng.normal(0, 0.05, (rows, m, k)), axis=2), 0, 1)  # fmt: skip
    res = cap[:, :, None] * walk
    if ties == "equal":
        cap, res = np.round(cap), np.round(res)
    elif ties == "near":
        src = int(rng.integers(rows))
        for j in rng.choice(rows, size=min(rows, 6), replace=False):
            cap[j] = cap[src]
            res[j] = np.nextafter(res[src], res[src] + rng.choice([-1.0, 1.0]))
        res = np.clip(res, 0.0, cap[:, :, None])
    return times, res, cap


def demand(rng, cap_n, tms, count, minimums):
    """Minimums (or none), totals around the ``count`` largest free sums (some zero) and
    tolerances (some zero)."""
    m = cap_n.shape[1]
    e = (np.quantile(cap_n, rng.uniform(0.05, 0.5), axis=0) * 0.5 if minimums
         else np.zeros(m))  # fmt: skip
    top = -np.sort(-(cap_n[None] - tms), axis=1)[:, :count].sum(axis=1)
    d = np.quantile(top, rng.uniform(0.2, 0.9), axis=0) * (rng.random(m) < 0.9)
    tol = np.full(m, 1e-9) * (rng.random(m) < 0.5)
    return e, d, tol


def random_case(seed, ties, minimums, max_count):
    """A random screen from ``seed``: up to 49 rows, 1-3 properties, 2-59 breakpoints, up
    to 79 rows screened (repeats too), up to 29 starts on and off the grid (repeats too),
    short and long windows, a count of 1 to ``max_count`` (at most the rows screened).
    Returns the case and its generator (the tests draw more from it)."""
    rng = np.random.default_rng(seed)
    rows, m, k = int(rng.integers(1, 50)), int(rng.integers(1, 4)), int(rng.integers(2, 60))
    times, res, cap = pool(rng, rows, m, k, ties)
    nodes = rng.integers(0, rows, int(rng.integers(1, 80)))
    grid = np.concatenate([times, rng.uniform(0, times[-1] + 900, 6), times[:2]])
    starts = np.sort(rng.choice(grid, int(rng.integers(1, 30))))
    dur = float(rng.choice([100.0, 300.0, 900.0, 3000.0, 20000.0]))
    count = int(rng.integers(1, min(nodes.size, max_count) + 1))
    cap_n = cap[nodes]
    tms = Kernels(C).window_max_rows(times, res, nodes, starts, dur)
    e, d, tol = demand(rng, cap_n, tms, count, minimums)
    return Case(times, res, nodes, starts, dur, cap_n, e, d, count, tol, tms), rng


def large_block(minimum, count):
    """600 rows over a day of 5-minute slots (seed 47), 96 consecutive starts, a window of
    an hour, a minimum on the first property only; the totals are the median (over the
    starts) of the ``count`` largest free sums (the tests scale them)."""
    rng = np.random.default_rng(47)
    rows, m, k = 600, 3, 288
    times = np.arange(k) * 300.0
    cap = np.round(rng.uniform(1, 8, (rows, 1)) * rng.uniform(0.7, 1.3, (rows, m)), 1)
    walk = np.clip(0.5 + np.cumsum(rng.normal(0, 0.02, (rows, 1, k)), axis=2), 0, 1)
    res = np.round(cap[:, :, None] * walk, 2)
    nodes = np.arange(rows)
    starts = times[10:106]
    e = np.array([minimum, 0.0, 0.0])
    tms = Kernels(C).window_max_rows(times, res, nodes, starts, 3600.0)
    top = -np.sort(-(cap[None] - tms), axis=1)[:, :count].sum(axis=1)
    d = np.median(top, axis=0)
    return Case(times, res, nodes, starts, 3600.0, cap, e, d, count, np.zeros(m), tms)
