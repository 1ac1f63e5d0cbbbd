"""The scan's route for requests with minimums only over long windows (issue 40, h54coll:
``window_screen`` from the blocks' extrema on the later blocks whatever ``N``, when the
totals are at most ``N`` times the minimums and the window spans ``_PLAIN_SEGS`` segments or
more): the same answers and rejections, request by request, with it and without it, and as
the NumPy twins give them."""

import importlib

import numpy as np
import pytest

from coalloc.collective import CollectiveRequest, scan, verify
from coalloc.collective.core import Kernels

from ._routes import answer_key, wandering_pool

scan_module = importlib.import_module("coalloc.collective.scan")


def _key(res):
    return answer_key(res, message=True)


def _pool(seed):
    return wandering_pool(seed, 400, k=600, level=(0.1, 0.9), step=0.04, freed=True)


@pytest.mark.parametrize("seed", [1, pytest.param(2, marks=pytest.mark.slow)])
@pytest.mark.parametrize("count", [60, 150])
@pytest.mark.parametrize("hours", [6.0, 12.0])
def test_scan_answers_alike_with_and_without_the_plain_route(monkeypatch, seed, count, hours):
    # minimums at quantiles of the free amounts at t_e: fewer than count eligible nodes at
    # many starts (rejected, code 1 everywhere), or eligible once many nodes are freed at
    # slot 250 (solved late, in a later block)
    pool = _pool(seed)
    free = pool.capacity - pool.reserved_at(3000.0)
    reqs = []
    for q in (0.35, 0.6, 0.8):
        e = np.quantile(free, q, axis=0)
        mins = {k: float(v) for k, v in zip("abc", e)}
        reqs.append(CollectiveRequest(hours * 3600.0, count, 3000.0, 3000.0 + 86400.0, mins))
    calls, subs = [], set()
    real = Kernels.window_screen

    def counted(self, *args, **kwargs):
        calls.append(len(args[5]))
        subs.add(args[11])
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Kernels, "window_screen", counted)
    statuses = set()
    for req in reqs:
        calls.clear()
        got = scan(req, pool)
        plain = list(calls)
        monkeypatch.setattr(scan_module, "_PLAIN_SEGS", 10**9)
        calls.clear()
        off = scan(req, pool)
        assert not calls  # N beside 400 nodes: no window_screen without the route
        monkeypatch.setattr(scan_module, "_PLAIN_SEGS", 64)
        twin = scan(req, pool, backend="numpy")
        assert _key(got) == _key(off) == _key(twin)
        if got.iterations["starts"] > 9:  # past the first block: the route ran
            assert plain and sum(plain) >= got.iterations["starts"] - 9
            assert subs == {scan_module._PLAIN_SUB}  # its own sub-block
        if got.has_solution:
            assert verify(req, pool, got).admissible
        statuses.add(got.status if got.iterations["starts"] > 9 else "early")
    assert {"infeasible", "optimal"} <= statuses  # rejected, and solved in a later block


def test_the_plain_route_needs_minimums_that_imply_the_totals(monkeypatch):
    # a total above N times the minimums: the usual route (no window_screen at N = 150)
    pool = _pool(3)
    free = pool.capacity - pool.reserved_at(3000.0)
    e = np.quantile(free, 0.5, axis=0)
    req = CollectiveRequest(6 * 3600.0, 150, 3000.0, 3000.0 + 86400.0,
                            {k: float(v) for k, v in zip("abc", e)},
                            {k: float(v) * 151 for k, v in zip("abc", e)})  # fmt: skip
    calls = []
    real = Kernels.window_screen
    monkeypatch.setattr(Kernels, "window_screen",
                        lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    got = scan(req, pool)
    assert got.iterations["starts"] > 9 and not calls
