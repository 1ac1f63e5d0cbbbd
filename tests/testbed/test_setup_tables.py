"""The testbed's methods build the router's and the checker's tables of a testbed in their
set-up (which the time limit counts), not after the search's deadline: on a testbed's first
mapping the answer's routing and check built them there, 0.3 s past a 2 s limit (ring(800)
on 2,000 PCs, load 8; ``bench/shared/large_budgets.py``)."""

from __future__ import annotations

from pathlib import Path

from coalloc import testbed as tb
from coalloc._shared.caches import cache_of
from coalloc.testbed.methods.outcome import _problem

DATA = Path(__file__).parent / "data" / "emulab"


def test_the_set_up_builds_the_route_and_check_tables():
    top, ptop = tb.read_top(DATA / "test.top"), tb.read_ptop(DATA / "test.ptop")
    assert "route" not in cache_of(ptop) and "verify" not in cache_of(ptop)
    _problem(top, ptop, None)
    assert "route" in cache_of(ptop) and "verify" in cache_of(ptop)


def test_answers_with_the_tables_built_first_are_checked():
    top, ptop = tb.read_top(DATA / "test.top"), tb.read_ptop(DATA / "test.ptop")
    for method in ("assign+", "anneal", "exact"):
        res = tb.solve(top, ptop, method=method, seed=0)
        assert res.has_solution, method
        assert tb.verify_mapping(top, ptop, res.mapping, res.routes).ok, method
