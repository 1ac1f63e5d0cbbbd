"""The scan's minimums-only screen by counts (issue 40, h55coll: ``min_counts`` first, from
the third block of starts on, for a request whose totals are at most ``N`` times its
minimums and whose windows span under ``_PLAIN_SEGS`` segments; only the starts with ``N``
or more eligible nodes go to the exact screens): the same answers and rejections, request
by request, with it and without it, and as the NumPy twins give them."""

import importlib

import numpy as np
import pytest

from coalloc.collective import CollectiveRequest, scan, verify
from coalloc.collective.core import Kernels

from ._routes import answer_key, wandering_pool

scan_module = importlib.import_module("coalloc.collective.scan")


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("count", [10, 150])
@pytest.mark.parametrize("hours", [0.5, 2.0])
def test_scan_answers_alike_with_and_without_the_counts(monkeypatch, seed, count, hours):
    # minimums at quantiles of the free amounts at t_e: too few eligible nodes at many
    # starts (rejected, or solved late in a later block), or eligible at once
    pool = wandering_pool(seed, 400, k=600, level=(0.1, 0.9), step=0.04, freed=True)
    free = pool.capacity - pool.reserved_at(3000.0)
    calls = []
    real = Kernels.min_counts

    def counted(self, *args, **kwargs):
        calls.append(len(args[3]))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Kernels, "min_counts", counted)
    statuses, ran = set(), 0
    for q in {10: (0.35, 0.9, 0.95), 150: (0.35, 0.6, 0.8)}[count]:
        e = np.quantile(free, q, axis=0)
        req = CollectiveRequest(hours * 3600.0, count, 3000.0, 3000.0 + 86400.0,
                                {k: float(v) for k, v in zip("abc", e)})  # fmt: skip
        calls.clear()
        monkeypatch.setattr(scan_module, "_MIN_COUNTS", True)
        got = scan(req, pool)
        ran += bool(calls)
        monkeypatch.setattr(scan_module, "_MIN_COUNTS", False)
        off = scan(req, pool)
        twin = scan(req, pool, backend="numpy")
        assert _key(got) == _key(off) == _key(twin)
        if got.has_solution:
            assert verify(req, pool, got).admissible
        statuses.add(got.status)
    assert ran  # the counts ran on some request (past the first blocks)
    assert len(statuses) >= 2 or statuses == {"infeasible"}


def _key(res):
    return answer_key(res, message=True)


def test_the_counts_need_minimums_that_imply_the_totals(monkeypatch):
    # a total above N times the minimums, or windows of _PLAIN_SEGS segments: no counts
    pool = wandering_pool(3, 400, k=600, level=(0.1, 0.9), step=0.04, freed=True)
    free = pool.capacity - pool.reserved_at(3000.0)
    e = np.quantile(free, 0.95, axis=0)
    mins = {k: float(v) for k, v in zip("abc", e)}
    calls = []
    monkeypatch.setattr(Kernels, "min_counts", lambda self, *a, **k: calls.append(1))
    tot = CollectiveRequest(1800.0, 10, 3000.0, 3000.0 + 86400.0, mins,
                            {k: v * 11 for k, v in mins.items()})  # fmt: skip
    long = CollectiveRequest(12 * 3600.0, 10, 3000.0, 3000.0 + 86400.0, mins)
    for req in (tot, long):
        res = scan(req, pool)
        assert res.iterations["starts"] > 20 and not calls
