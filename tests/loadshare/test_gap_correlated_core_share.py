"""The core phase's share of timed GAP calls on instances whose costs fall as the weights
grow (issue 40, h49gap: ``search._CORRELATED_CORE_SHARE`` below the correlation
``search._CORRELATED``); other instances and untimed calls keep ``search._CORE_SHARE``."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc.loadshare import gap, generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.search import _CORE_SHARE, _Search


@pytest.fixture
def shares(monkeypatch):
    """The rule on at 0.15; the first phase's end as a share of the search's time, per
    timed call (the core phase's: the search's first phase runs on the core)."""
    monkeypatch.setattr(gap.search, "_CORRELATED_CORE_SHARE", 0.15)
    seen = []
    real = _Search.phase

    def spy(self, phase_cost, start, until, *args, **kwargs):
        if not seen and self.deadline is not None and until is not None:
            seen.append((until - self.t_search) / (self.deadline - self.t_search))
        return real(self, phase_cost, start, until, *args, **kwargs)

    monkeypatch.setattr(_Search, "phase", spy)
    return seen


@pytest.mark.parametrize("kind, want", [("d", 0.15), ("c", _CORE_SHARE)])
def test_timed_calls_take_the_share_on_correlated_instances(shares, kind, want):
    """Timed: type d's core phase ends at 0.15 of the search's time, type c's at the
    package's share; both answers check out."""
    inst = generate_gap(kind, 6, 60, seed=1)
    res = solve_gap(inst, "heuristic", time_limit=0.5, seed=0, with_bound=False)
    assert verify_gap(inst, res.assignment, claimed=res.objective).ok
    assert res.iterations["core_iterations"] > 0  # the LP ran: there was a core phase
    assert shares and shares[0] == pytest.approx(want, abs=1e-9)


def test_untimed_calls_keep_the_package_share(shares):
    """Untimed, type d: the answer of the rule off (the share is not read), deterministic."""
    inst = generate_gap("d", 6, 60, seed=2)
    on = solve_gap(inst, "heuristic", iterations=2000, seed=5)
    gap.search._CORRELATED_CORE_SHARE = 0.0
    off = solve_gap(inst, "heuristic", iterations=2000, seed=5)
    assert np.array_equal(on.assignment, off.assignment) and on.objective == off.objective
    assert verify_gap(inst, on.assignment, claimed=on.objective).ok
