"""The GAP search's starting greedies keep the call's deadline (h51gap follow-up, issue
36's contract): on Yagiura d801600 (1,600 items) their Python loop over the items ran
0.06-0.18 s after a 0.05-0.2 s limit under load, then the tabu kernel's set-up. No clock
is raced: the calls below start with their deadline already passed (``t0`` a second ago),
and a stand-in ``np`` counts the loop's items."""

from __future__ import annotations

import time

import numpy as np

from coalloc.loadshare import gap, generate_gap, verify_gap
from coalloc.loadshare.gap.model import GapCall
from coalloc.loadshare.gap.search import reduced_cost_greedy, run_search

_GREEDY_CHECK = getattr(gap.search, "_GREEDY_CHECK", 32)  # (so the tests run on the old code)
#: the module whose ``np`` the greedies call (the start's, since h52gap split the search)
_GREEDY_MODULE = getattr(gap, "search_start", gap.search)


class _CountingNp:
    """numpy, with its ``where`` counted (one call per item of the greedies' loop)."""

    def __init__(self) -> None:
        self.where_calls = 0

    def __getattr__(self, name):
        return getattr(np, name)

    def where(self, *args, **kwargs):
        self.where_calls += 1
        return np.where(*args, **kwargs)


def _arrays(seed: int):
    inst = generate_gap("d", 10, 300, seed=seed)
    return (inst.cost.astype(np.float64), np.ascontiguousarray(inst.weight, dtype=np.int64),
            inst.capacity.astype(np.int64))  # fmt: skip


def test_the_greedy_stops_at_a_passed_deadline_and_sends_the_rest_to_their_least(
        monkeypatch):  # fmt: skip
    cost, weight, cap = _arrays(3)
    lam = np.linspace(0.0, 1.0, cost.shape[0])
    fake = _CountingNp()
    monkeypatch.setattr(_GREEDY_MODULE, "np", fake)
    x = reduced_cost_greedy(cost, weight, cap, lam, time.perf_counter() - 1.0)
    assert fake.where_calls <= _GREEDY_CHECK < cost.shape[1]
    red = cost + lam[:, None] * weight
    two = np.partition(red, 1, axis=0)[:2]
    order = np.argsort(-(two[1] - two[0]), kind="stable")
    rest = order[fake.where_calls:]
    assert np.array_equal(x[rest], np.argmin(red[:, rest], axis=0))
    assert x.shape == (cost.shape[1],) and np.all((0 <= x) & (x < cost.shape[0]))


def test_the_greedy_without_a_deadline_or_before_it_is_unchanged():
    for seed in range(4):
        cost, weight, cap = _arrays(seed)
        lam = np.full(cost.shape[0], 0.3 * seed)
        a = reduced_cost_greedy(cost, weight, cap, lam)
        b = reduced_cost_greedy(cost, weight, cap, lam, time.perf_counter() + 3600.0)
        assert np.array_equal(a, b)


def test_a_search_whose_deadline_passed_runs_no_greedy_loop_nor_kernel(monkeypatch):
    """The deadline passed before the start (the bounds' start took the limit, in the
    extreme): the start's greedy, the fallbacks' greedies (the late one has half the
    allowance, also passed here; instances as large as Yagiura's) stop at their first look
    at the clock, and the tabu
    kernel's set-up does not run; the outcome is valid (verified when feasible)."""
    inst = generate_gap("d", 10, 300, seed=4)
    # (instances up to _LATE_PAIRS pairs run their late fallback whole: this one as large)
    monkeypatch.setattr(gap.search, "_LATE_PAIRS", 0, raising=False)
    fake = _CountingNp()
    monkeypatch.setattr(_GREEDY_MODULE, "np", fake)
    kernel_calls = []
    real = gap.tabu._gapls.tabu_search

    def spy(*args):
        kernel_calls.append(1)
        return real(*args)

    monkeypatch.setattr(gap.tabu._gapls, "tabu_search", spy)
    call = GapCall(inst, "min", True, 0.05, 1, {}, time.perf_counter() - 1.0)
    out = run_search(call, None)
    assert fake.where_calls <= 3 * _GREEDY_CHECK  # (before: an item a call, 300 and more)
    assert not kernel_calls
    assert out.iterations == 0 and out.stopped
    assert out.assign.shape == (inst.n,)
    if out.feasible:
        assert verify_gap(inst, out.assign).ok
