"""Issue 36 at 10,000 nodes x 2,016 slots: with a deadline, ``scan`` sizes each block of
candidate starts from the last block's pace and the time left (a 504-start
``window_screen`` block begun before a 0.2 s deadline ran to 0.56-0.6 s under load). No
clock races here: a deadline already passed, none, or one far away; and the answers with
the smallest blocks equal those without a deadline."""

from __future__ import annotations

import time

import numpy as np
import pytest

from coalloc.collective import CollectiveRequest, scan, verify
from coalloc.collective.core import Kernels
from coalloc.collective.generators import table1_pool

mod = __import__("coalloc.collective.scan", fromlist=["_Scan"])


class _Stub:
    """What ``_Scan.fit`` reads: the deadline and the second block's size."""

    def __init__(self, deadline):
        self.deadline, self.block = deadline, 8


def test_fit_keeps_the_blocks_without_a_deadline_or_far_from_it():
    fit = mod._Scan.fit
    assert fit(_Stub(None), 512, 64, 1.0) == 512
    assert fit(_Stub(time.perf_counter() + 1e6), 512, 64, 1e-3) == 512


def test_fit_shrinks_the_next_block_once_the_deadline_is_near_or_past():
    fit = mod._Scan.fit
    past = _Stub(time.perf_counter() - 1.0)
    assert fit(past, 512, 64, 0.05) == max(mod._SUB, 9)  # the later blocks' route kept
    assert fit(past, 12, 64, 0.05) == 12  # a smaller block (the last starts) as it was
    assert fit(past, 512, 0, 0.0) == 512  # no pace yet: as before


def _request(pool, count, later):
    te = 3600.0 * count
    match = pool.match({"arch": "amd64"})
    if later == 0:  # rejected at every start (the totals together)
        free = (pool.capacity - pool.reserved_at(te))[match]
        d = -np.sort(-free, axis=0)[:count].sum(axis=0) * 0.97
    else:  # the free amounts of N nodes ``later`` hours on: a set there, found late
        t2 = te + later * 3600.0
        free = (pool.capacity - np.max([pool.reserved_at(t2 + k * 300.0) for k in range(6)],
                                       axis=0))[match]  # fmt: skip
        best = np.argsort(-(free / free.max(axis=0)).sum(axis=1))[:count]
        d = free[best].sum(axis=0) * 0.999
    return CollectiveRequest(1800.0, count, te, te + 12 * 3600.0, {k: 0.0 for k in pool.names},
                             {k: float(v) for k, v in zip(pool.names, d)},
                             {"arch": "amd64"})  # fmt: skip


@pytest.mark.parametrize("count, later", [(2, 0), (3, 0), (2, 6), (4, 8)])
def test_blocks_cut_by_the_deadline_give_the_same_answers(monkeypatch, count, later):
    """``fit`` as if every deadline were near (a stand-in: the smallest blocks), under a
    limit that is never reached: the same status, start, nodes, message and rejection as
    with the blocks as they were (the same limit, far from it), and the blocks were cut."""
    pool = table1_pool(400, n_slots=288, seed=47 + count)
    req = _request(pool, count, later)
    want = scan(req, pool, time_limit=600.0)  # far from the deadline: the blocks as before
    untimed = scan(req, pool)
    assert (want.status, want.start) == (untimed.status, untimed.start)
    sizes = []  # the starts of each window_screen / window_max_rows call
    real, real_rows = Kernels.window_screen, Kernels.window_max_rows

    def counted(self, *args, **kwargs):
        sizes.append(len(args[5]))
        return real(self, *args, **kwargs)

    def counted_rows(self, times, res, nodes, starts, *args, **kwargs):
        sizes.append(len(starts))
        return real_rows(self, times, res, nodes, starts, *args, **kwargs)

    monkeypatch.setattr(Kernels, "window_screen", counted)
    monkeypatch.setattr(Kernels, "window_max_rows", counted_rows)
    monkeypatch.setattr(mod._Scan, "fit", lambda self, size, done, spent:
                        min(size, max(mod._SUB, self.block + 1)))  # fmt: skip
    got = scan(req, pool, time_limit=600.0)
    assert sizes and max(sizes) <= mod._SUB and len(sizes) > 2
    assert (got.status, got.start, got.message) == (want.status, want.start, want.message)
    assert np.array_equal(got.resources, want.resources)
    assert got.rejection == want.rejection
    assert got.status == ("infeasible" if later == 0 else "optimal")
    if later:
        assert verify(req, pool, got).admissible
