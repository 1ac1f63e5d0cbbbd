"""The scan's bound route (issue 40, h53coll: ``bound_screen`` first on the later blocks, off
by default): the same answers and rejections, request by request, with it on and off."""

import importlib

import numpy as np
import pytest

import coalloc.collective._bounded as bounded
from coalloc.collective import CollectiveRequest, scan, verify

from ._routes import answer_key, wandering_pool

scan_module = importlib.import_module("coalloc.collective.scan")


def _key(res):
    return answer_key(res, message=False)


def _pool(seed):
    return wandering_pool(seed, 400, k=400)


def test_the_ledger_lists_what_the_bound_route_keeps_exact():
    assert bounded.LISTED == scan_module._MAX_LISTED


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("count", [20, 150])
def test_scan_answers_alike_with_and_without_the_bound_route(monkeypatch, seed, count):
    # totals near the count largest sums (most starts miss one, some pass), minimums on
    # one property or none: every answer and rejection (its listed sums too) alike
    pool = _pool(seed)
    rng = np.random.default_rng([seed, count])
    free = pool.capacity - pool.reserved_at(3000.0)
    top = -np.sort(-free, axis=0)[:count].sum(axis=0)
    reqs = []
    for share in (1.0, 1.1):
        d = top * share * rng.uniform(0.95, 1.05, 3)
        e = {"a": float(np.quantile(free[:, 0], 0.2)), "b": 0.0, "c": 0.0}
        for mins in (None, e):
            reqs.append(CollectiveRequest(3600.0, count, 3000.0, 3000.0 + 86400.0,
                                          mins or {"a": 0.0, "b": 0.0, "c": 0.0},
                                          {"a": d[0], "b": d[1], "c": d[2]}))  # fmt: skip
    used = []
    real = bounded.bounded

    def spy(*args):
        got = real(*args)
        used.append(int(np.sum(got[5] < 0)))  # starts decided by the bounds alone
        assert got[6] in (True, False)
        return got

    monkeypatch.setattr(bounded, "bounded", spy)
    # no limit on the integer programs: with the default 10 s, a program slowed by a loaded
    # machine left a start undecided ("feasible") on one side and not the other
    unlimited = {"program_time_limit": None}
    for req in reqs:
        monkeypatch.setattr(bounded, "ON", False)
        off = scan(req, pool.copy(), **unlimited)
        monkeypatch.setattr(bounded, "ON", True)
        on = scan(req, pool.copy(), **unlimited)
        assert _key(on) == _key(off)
        if on.has_solution:
            assert verify(req, pool, on).ok
    assert used and sum(used) > 0  # the route ran and decided starts
