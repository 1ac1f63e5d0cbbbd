"""Every "no" with its reason (issue 36's contract, h52gap): on a tight instance the timed
heuristic tries the LP relaxation, the one proof that no assignment exists, whenever its
measured time fits the LP's share of the limit, not only when the size rule does. Before,
the contract audit's heavy 15 x 120 (1,800 pairs, infeasible) ended ``time_limit`` with no
reason under 0.11 s, the LP (6-36 ms) never tried. No clock is raced: the decision is a
function of the size and the limit, and the end-to-end cases run stand-ins for the LP
and the search."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from coalloc.loadshare import GapInstance, solve_gap
from coalloc.loadshare.gap import heuristic
from coalloc.loadshare.gap.search import SearchOutcome


def tight_infeasible(m: int = 15, n: int = 120) -> GapInstance:
    """Items of weight 1 or 9 on every agent, capacities 3 % short of the total weight:
    the LP relaxation is infeasible, the count bound (each agent holds 39 light items)
    proves nothing."""
    rng = np.random.default_rng(np.random.SeedSequence([52, m, n]))
    w = np.where(np.arange(n) % 2 == 0, 1, 9)
    weight = np.tile(w, (m, 1)).astype(np.int64)
    cap = int(w.sum() * 0.97) // m
    cost = rng.integers(1, 50, (m, n)).astype(float)
    return GapInstance(cost, weight, np.full(m, cap, dtype=np.int64), name="tight")


def loose(m: int = 15, n: int = 120) -> GapInstance:
    rng = np.random.default_rng(np.random.SeedSequence([52, 1]))
    weight = rng.integers(5, 25, (m, n))
    cost = rng.integers(1, 50, (m, n)).astype(float)
    cap = np.full(m, int(0.8 * weight.sum() / m), dtype=np.int64)
    return GapInstance(cost, weight, cap, name="loose")


@pytest.fixture
def highspy_imported(monkeypatch):
    """The LP's solver counted as imported (its import is not in the budgets below)."""
    module = heuristic._LP_IMPORT_SECONDS[heuristic._bounds._LP_BACKEND][0]
    monkeypatch.setitem(sys.modules, module, sys.modules.get(module, object()))


def test_the_instances_are_what_they_say():
    inst = tight_infeasible()
    assert heuristic.looks_tight(inst) and not heuristic.looks_tight(loose())
    res = solve_gap(inst, "heuristic")  # untimed: the LP, then the proof
    assert res.status == "infeasible" and "LP relaxation" in res.message
    assert not heuristic._bounds.count_bound_infeasible(inst)


@pytest.mark.usefixtures("highspy_imported")
def test_a_tight_instance_tries_the_lp_where_its_measured_time_fits(monkeypatch):
    inst, other = tight_infeasible(), loose()
    # the size rule alone: 2.5e-5 s x 1,800 pairs = 45 ms against 0.4 x 50 ms
    assert heuristic._LP_SECONDS_PER_PAIR * inst.m * inst.n > heuristic._LP_SHARE * 0.05
    assert heuristic.lp_fits(inst, True, 0.05)
    assert not heuristic.lp_fits(other, True, 0.05)  # not tight: the size rule, as before
    assert not heuristic.lp_fits(inst, False, 0.05)  # items may stay out: nothing to prove
    assert not heuristic.lp_fits(inst, True, 0.02)  # the measured time does not fit either
    assert heuristic.lp_fits(other, True, 0.2) and heuristic.lp_fits(inst, True, 0.2)
    monkeypatch.setattr(heuristic, "_TIGHT_FROM", float("inf"))  # off: the old rule
    assert not heuristic.lp_fits(inst, True, 0.05)


def _stand_ins(monkeypatch, lp_calls: list) -> None:
    """An LP that answers "infeasible" at once, a search that finds nothing and is stopped
    by the limit (as under load on the audit's heavy 15 x 120)."""

    def lp(instance, sense, assign_all, until=None):
        lp_calls.append(until)
        return None, None, None

    def search(call, iterations, lp_start=None, on_round=None, halt=None, on_bound=None):
        n = call.instance.n
        return SearchOutcome(assign=np.zeros(n, dtype=np.int64), feasible=False,
                             iterations=0, lagrangian=None, subgradient_iterations=0,
                             trajectory=[], search_seconds=0.0, stopped=True)  # fmt: skip

    monkeypatch.setattr(heuristic, "lp_relaxation", lp)
    monkeypatch.setattr(heuristic, "run_search", search)


@pytest.mark.usefixtures("highspy_imported")
@pytest.mark.parametrize("method", ["heuristic", "portfolio"])
def test_a_short_limit_says_infeasible_with_the_lps_reason(monkeypatch, method):
    inst = tight_infeasible()
    lp_calls: list = []
    _stand_ins(monkeypatch, lp_calls)
    res = solve_gap(inst, method, time_limit=0.05, seed=0)
    assert len(lp_calls) == 1 and lp_calls[0] is not None  # tried, capped at its share
    assert res.status == "infeasible" and "LP relaxation is infeasible" in res.message
    assert res.assignment is None


@pytest.mark.usefixtures("highspy_imported")
def test_without_the_rule_the_same_call_ends_without_a_reason(monkeypatch):
    """The guard: the stand-ins give ``time_limit`` when the LP is not tried (what the
    code before h52gap did at 0.05 s), so the test above can fail."""
    inst = tight_infeasible()
    lp_calls: list = []
    _stand_ins(monkeypatch, lp_calls)
    monkeypatch.setattr(heuristic, "_TIGHT_FROM", float("inf"))
    res = solve_gap(inst, "heuristic", time_limit=0.05, seed=0)
    assert not lp_calls and res.status == "time_limit"
