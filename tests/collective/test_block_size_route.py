"""The largest block of starts for short windows (issue 40, h56coll): a request with totals
beyond its minimums screens blocks of up to ``_SHORT_BLOCK_TOTALS`` starts, a minimums-only
request keeps ``_SHORT_BLOCK``; the block's size changes no answer, rejection or count."""

import importlib

import numpy as np
import pytest

from coalloc.collective import CollectiveRequest, scan, verify
from coalloc.collective.core import Kernels

from ._routes import answer_key, wandering_pool

scan_module = importlib.import_module("coalloc.collective.scan")


def _spied(monkeypatch):
    """The lengths of the blocks of starts ``window_max_rows`` and ``bound_screen`` got."""
    sizes = []
    for name, at in (("window_max_rows", 3), ("bound_screen", 3)):
        real = getattr(Kernels, name)

        def spy(self, *args, _real=real, _at=at, **kwargs):
            sizes.append(len(args[_at]))
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(Kernels, name, spy)
    return sizes


def _requests(pool, count):
    """Totals at 0.9, 1 and 1.15 times the ``count`` largest free amounts at t_e (solved late,
    after many starts that miss a total or the combination, or rejected at every start), 30
    min and 1 h windows over a day; no minimums."""
    free = pool.capacity - pool.reserved_at(3000.0)
    top = -np.sort(-free, axis=0)[:count].sum(axis=0)
    return [CollectiveRequest(dur, count, 3000.0, 3000.0 + 86400.0, {k: 0.0 for k in "abc"},
                              {k: float(v * f) for k, v in zip("abc", top)})
            for dur in (1800.0, 3600.0) for f in (0.9, 1.0, 1.15)]  # fmt: skip


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("count", [10, 60])
def test_the_totals_blocks_answer_alike(monkeypatch, seed, count):
    pool = wandering_pool(seed, 400, k=600, level=(0.1, 0.9), step=0.04, freed=True)
    sizes = _spied(monkeypatch)
    big, statuses = 0, set()
    for req in _requests(pool, count):
        got = {}
        for limit in (512, 128):
            monkeypatch.setattr(scan_module, "_SHORT_BLOCK_TOTALS", limit)
            sizes.clear()
            got[limit] = scan(req, pool)
            assert max(sizes, default=0) <= limit
            big += limit == 512 and max(sizes, default=0) > 128
        assert answer_key(got[512], message=True) == answer_key(got[128], message=True)
        if got[512].has_solution:
            assert verify(req, pool, got[512]).admissible
        statuses.add(got[512].status)
    assert big  # some request screened a block of more than 128 starts
    assert "infeasible" in statuses


def test_minimums_only_requests_keep_the_short_blocks(monkeypatch):
    pool = wandering_pool(3, 400, k=600, level=(0.1, 0.9), step=0.04, freed=True)
    free = pool.capacity - pool.reserved_at(3000.0)
    e = np.quantile(free, 0.95, axis=0)
    req = CollectiveRequest(1800.0, 10, 3000.0, 3000.0 + 86400.0,
                            {k: float(v) for k, v in zip("abc", e)})  # fmt: skip
    monkeypatch.setattr(scan_module, "_MIN_COUNTS", False)  # every block to the exact screens
    sizes = _spied(monkeypatch)
    res = scan(req, pool)
    assert res.iterations["starts"] > 200
    assert max(sizes) == scan_module._SHORT_BLOCK < scan_module._SHORT_BLOCK_TOTALS
