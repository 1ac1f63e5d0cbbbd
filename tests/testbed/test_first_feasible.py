"""The default's first feasible mapping where assign+'s strategies find none, under a time
limit (``methods.first_feasible.FIRST_FEASIBLE``): Emulab's test_ugly, whose direct
PC-to-PC wires defeat the strategies, answered by the short cool anneal."""

from __future__ import annotations

from pathlib import Path

import pytest

import coalloc.testbed as tb
from coalloc.testbed.anneal import ANNEAL_DEFAULTS
from coalloc.testbed.methods import assign_plus as ap
from coalloc.testbed.methods import first_feasible as ff

DATA = Path(__file__).parent / "data" / "emulab"


@pytest.fixture(scope="module")
def ugly():
    return (tb.parse_top((DATA / "test_ugly.top").read_text()),
            tb.parse_ptop((DATA / "test_ugly.ptop").read_text()))  # fmt: skip


def _verified(top, ptop, r):
    assert tb.Instance(top, ptop).verify(r).ok
    return r


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_the_first_feasible_mapping_answers_where_the_annealer_finds_none(ugly, seed,
                                                                          monkeypatch):  # fmt: skip
    top, ptop = ugly
    # assign's annealer (beside the strategies) given one move: it never finds a mapping
    monkeypatch.setattr(ap, "ANNEAL_DEFAULTS", dict(ANNEAL_DEFAULTS, melt_moves=0, max_moves=1))
    r = tb.assign(top, ptop, "assign+", seed=seed, time_limit=10)
    assert r.has_solution, r.message
    _verified(top, ptop, r)
    assert r.params["fallback_used"]
    monkeypatch.setattr(ff, "FIRST_FEASIBLE", None)  # off: the strategies and the annealer
    r = tb.assign(top, ptop, "assign+", seed=seed, time_limit=10)
    assert not r.has_solution


def test_the_strategies_fail_there_and_untimed_answers_do_not_change(ugly, monkeypatch):
    top, ptop = ugly
    assert not tb.assign(top, ptop, "assign+.1", seed=0).has_solution  # (the premise)
    on = _verified(top, ptop, tb.assign(top, ptop, "assign+", seed=0))
    monkeypatch.setattr(ff, "FIRST_FEASIBLE", None)
    off = tb.assign(top, ptop, "assign+", seed=0)
    assert (on.status, on.objective, on.mapping) == (off.status, off.objective, off.mapping)
    assert "first_feasible_moves" not in on.counters


def test_a_timed_answer_is_verified_and_no_worse_than_the_annealers(ugly):
    top, ptop = ugly
    for seed in range(3):
        r = _verified(top, ptop, tb.assign(top, ptop, "assign+", seed=seed, time_limit=10))
        a = tb.assign(top, ptop, "anneal", seed=seed)
        assert r.objective <= a.objective
