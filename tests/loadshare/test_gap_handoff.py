"""Issue 40 item 4 (h53gap): the timed default's hand-off (``PORTFOLIO_HANDOFF_PAIRS``, off by
default): below ``PORTFOLIO_COLD_FROM`` on a small instance the search runs alone until its
answer is within ``PORTFOLIO_HANDOFF_GAP`` of its bound, then stops and HiGHS gets the rest of
the time.

No timed assertions: the hand-off's rule is tested on its own, and the whole call with a
limit far above what HiGHS needs on the instance (about 0.1 s), each answer checked by
:func:`verify_gap`."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc.loadshare import GapInstance, solve_gap, verify_gap
from coalloc.loadshare.gap import exact
from coalloc.loadshare.gap.model import GapCall

pytest.importorskip("highspy")


def small(seed: int = 0, m: int = 5, n: int = 15) -> GapInstance:
    """A small tight instance (OR-Library's size: 75 pairs)."""
    rng = np.random.default_rng(np.random.SeedSequence([53, seed]))
    weight = rng.integers(5, 26, (m, n))
    cost = rng.integers(15, 51, (m, n)).astype(float)
    capacity = np.full(m, int(0.8 * weight.sum() / m / m) + 10, dtype=np.int64)
    return GapInstance(cost, weight, capacity, name=f"small{seed}")


def test_the_handoff_rule(monkeypatch) -> None:
    """Off by default; on: below ``PORTFOLIO_COLD_FROM``, at most the knob's pairs."""
    assert exact.PORTFOLIO_HANDOFF_PAIRS is None
    assert exact.portfolio_start(0.2, 75) == "hinted"
    assert exact.portfolio_start(0.2, 800) == "off"
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_PAIRS", 800)
    assert exact.portfolio_start(0.2, 75) == exact.portfolio_start(0.2, 800) == "handoff"
    assert exact.portfolio_start(0.2, 801) == "off"
    assert exact.portfolio_start(exact.PORTFOLIO_COLD_FROM, 75) == "cold"


def test_the_search_stops_within_the_gap(monkeypatch) -> None:
    """The search's report stops it only when its answer is within the gap of its bound
    and the hand-off's time has come."""
    inst = small()
    timed = exact._Timed(GapCall(inst, "min", True, 0.2, 0, {}, 0.0), "highs", 1)
    timed.handoff_at = 0.0
    assign = np.zeros(inst.n, dtype=np.int64)
    obj = float(inst.cost[0].sum())
    timed.on_bound(None)
    timed.on_round(assign, True)
    assert not timed.stop.is_set()  # no bound yet
    timed.on_bound(obj - 2.0)
    timed.on_round(assign, True)
    assert not timed.stop.is_set()  # two units above the bound
    timed.on_bound(obj - 1.0)
    timed.on_round(assign, False)
    assert not timed.stop.is_set()  # not feasible
    timed.on_round(assign, True)
    assert timed.stop.is_set()  # one unit: the proof is what is missing
    assert timed.worker is None  # the solver starts after the search, not here
    timed = exact._Timed(GapCall(inst, "min", True, 0.2, 0, {}, 0.0), "highs", 1)
    timed.handoff_at = 1e300  # its time not come
    timed.on_bound(obj)
    timed.on_round(assign, True)
    assert not timed.stop.is_set()


@pytest.mark.parametrize("sense", ["min", "max"])
def test_the_handoff_runs_highs_after_the_search(monkeypatch, sense: str) -> None:
    """With the hand-off at the first feasible answer whatever the gap, a call whose limit
    counts as short (``PORTFOLIO_COLD_FROM`` raised) ends with HiGHS's proof, the search
    stopped; with the knob off, the same call is the portfolio as before (no hand-off)."""
    inst = small()
    ref = solve_gap(inst, method="exact", solver="highs", hint=False, sense=sense)
    assert ref.status == "optimal"
    monkeypatch.setattr(exact, "PORTFOLIO_COLD_FROM", 100.0)
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_PAIRS", 800)
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_GAP", None)
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_AT", 0.0)
    res = solve_gap(inst, time_limit=5.0, seed=0, sense=sense)
    assert "HiGHS after it" in res.message, res.message
    assert res.iterations["solver_started"] == 1
    assert res.status == "optimal", res.message
    rep = verify_gap(inst, res.assignment)
    assert rep.feasible and rep.objective == pytest.approx(ref.objective)
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_PAIRS", None)
    res = solve_gap(inst, time_limit=0.3, seed=0, sense=sense)
    assert "after it" not in res.message
    assert verify_gap(inst, res.assignment).feasible


def test_the_message_says_why_no_handoff(monkeypatch) -> None:
    """(h54gap) A hand-off that never came is reported as such, not as a model that would
    not fit the time left: the rule's closest approach, then a whole call whose gap rule
    cannot hold (a negative gap)."""
    inst = small()
    timed = exact._Timed(GapCall(inst, "min", True, 0.2, 0, {}, 0.0), "highs", 1)
    timed.handoff_at = 0.0
    assert "had none in its time" in timed.not_started()
    assign = np.zeros(inst.n, dtype=np.int64)
    obj = float(inst.cost[0].sum())
    timed.on_bound(None)
    timed.on_round(assign, True)
    assert "no bound" in timed.not_started()
    timed.on_bound(obj - 3.0)
    timed.on_round(assign, True)
    timed.on_bound(obj - 5.0)
    timed.on_round(assign, True)
    why = timed.not_started()
    assert "came no closer than 3 to its bound" in why and "would not fit" not in why, why
    timed.handoff_at = None  # no hand-off: the old reason
    assert "would not fit the time left" in timed.not_started()
    monkeypatch.setattr(exact, "PORTFOLIO_COLD_FROM", 100.0)
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_PAIRS", 10_000)
    monkeypatch.setattr(exact, "PORTFOLIO_HANDOFF_GAP", -1.0)  # never near enough
    big = small(2, m=10, n=120)
    res = solve_gap(big, time_limit=0.3, seed=0)
    assert verify_gap(big, res.assignment).feasible
    assert res.iterations["solver_started"] == 0
    if res.status != "optimal":  # (a proof of the search's own needs no solver, no reason)
        assert "would not fit" not in res.message, res.message
        assert "waits for the search's feasible answer within -1 of its bound" in res.message
        assert "did not end" not in res.message  # (it did not start)
