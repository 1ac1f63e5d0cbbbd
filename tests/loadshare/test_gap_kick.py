"""The reduced-cost kick at restarts (h51gap, ``search._KICK``, off): when on, the searches
on every pair restart from their best with k items moved to their second-best agent by
reduced cost; the answers verify, untimed calls take it only with ``_KICK_UNTIMED``, and
off (the default) changes nothing."""

from __future__ import annotations

import numpy as np

from coalloc.loadshare import generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import search


def _count_kicks(monkeypatch) -> list:
    moved = []
    real = search.TabuState.restart_from

    def restart_from(self, assign, cost):
        moved.append(int(np.count_nonzero(assign != self.best)))
        return real(self, assign, cost)

    monkeypatch.setattr(search.TabuState, "restart_from", restart_from)
    return moved


def test_the_kick_moves_k_items_from_the_best_and_the_answer_verifies(monkeypatch):
    inst = generate_gap("d", 5, 60, seed=1)
    moved = _count_kicks(monkeypatch)
    monkeypatch.setattr(search, "_KICK", 4)
    monkeypatch.setattr(search, "_KICK_UNTIMED", True)
    res = solve_gap(inst, "heuristic", iterations=6000, seed=2)
    assert moved and all(m == 4 for m in moved)  # each restart: 4 items off the best
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok


def test_untimed_calls_take_the_kick_only_when_asked(monkeypatch):
    inst = generate_gap("d", 5, 60, seed=1)
    off = solve_gap(inst, "heuristic", iterations=6000, seed=2)
    moved = _count_kicks(monkeypatch)
    monkeypatch.setattr(search, "_KICK", 4)
    on_untimed_rule = solve_gap(inst, "heuristic", iterations=6000, seed=2)
    assert not moved  # untimed: not taken without _KICK_UNTIMED
    assert np.array_equal(off.assignment, on_untimed_rule.assignment)
