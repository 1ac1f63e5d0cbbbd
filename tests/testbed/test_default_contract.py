"""Issue 36, left by the contract audit (bench/shared/CONTRACT_AUDIT.md): the testbed
default under a time limit runs assign's annealer as early as the ``"anneal"`` method does,
and the exact method says why CP-SAT was not started."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from coalloc import testbed as tb
from coalloc.testbed import _anneal
from coalloc.testbed.methods.assign_plus import QUICK_ANNEAL

DATA = Path(__file__).resolve().parents[2] / "bench" / "testbed" / "data"


def _test_big():
    return tb.read_top(DATA / "test_big.top"), tb.read_ptop(DATA / "utah2000.ptop")


def _is_quick(params) -> bool:
    """The portfolio's quick anneal (started from assign+'s mapping, QUICK_ANNEAL's schedule)."""
    return ("start" in params and params.get("max_moves") == QUICK_ANNEAL["max_moves"]
            and params.get("t_stop") == QUICK_ANNEAL["t_stop"])  # fmt: skip


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_reaches_the_annealer_when_the_budget_ends_in_the_quick_anneal(
    seed, monkeypatch
):
    """Emulab's test_big onto Utah 2000, the audit's seeds: at 0.05 s the default gave 300 or
    400 where ``anneal`` alone gave 200, because its annealer came after the quick anneal and
    the moves and was cut. Made load-proof: the quick anneal here ends as the deadline would
    (stopped at once, nothing found), under a limit no run reaches; the annealer, run first
    under a limit, has ended by then with its untimed answer. Before the fix the default
    ended with assign+'s 400."""
    top, ptop = _test_big()
    real = _anneal.anneal

    def kernel(data, seed_, params):
        if _is_quick(params):
            return {"valid": False, "stopped": True, "moves": 0, "error": None,
                    "where": params["start"], "score": float("inf")}  # fmt: skip
        return real(data, seed_, params)

    alone = tb.assign(top, ptop, "anneal", seed=seed)
    assert alone.success and tb.verify_mapping(top, ptop, alone.mapping, alone.routes).ok
    monkeypatch.setattr(_anneal, "anneal", kernel)
    d = tb.assign(top, ptop, seed=seed, time_limit=600)
    assert d.status == "time_limit" and d.mapping is not None
    assert tb.verify_mapping(top, ptop, d.mapping, d.routes).ok
    assert d.interswitch_bandwidth <= alone.interswitch_bandwidth
    assert d.params["portfolio"] == "anneal"


def test_untimed_default_keeps_its_order_and_answer():
    """Without a limit the quick anneal still comes first (the untimed answers are those of
    the digests): on seed 1 its mapping is the one kept, the annealer's ties it."""
    top, ptop = _test_big()
    d = tb.assign(top, ptop, seed=1)
    assert d.params["portfolio"] == "quick anneal"
    assert d.interswitch_bandwidth == tb.assign(top, ptop, "anneal", seed=1).interswitch_bandwidth


def test_exact_says_cpsat_was_not_imported_rather_than_a_model_built(monkeypatch):
    """With CP-SAT not imported and less time than its first import, no model is begun: the
    message said "ran out while its model was built"; it names the import now."""
    from coalloc.testbed import exact as tx
    from coalloc.testbed.problem import build_problem

    top, ptop = _test_big()
    pr = build_problem(top, ptop)
    monkeypatch.delitem(sys.modules, "ortools.sat.python.cp_model", raising=False)
    where, out, trunks = tx.exact_mapping(pr, time_limit=0.01)
    assert where is None and out.status == "time_limit" and trunks == {}
    assert "model was built" not in out.message
    assert "first import" in out.message and "no model was begun" in out.message
