"""The tabu kernel's memory of visited assignments (``TabuKnobs.memo``, issue 40, h57gap):
a move whose assignment the kernel already visited (in this call, ``memo`` 1, or since
the last restart, ``memo`` 2) is not admissible unless it is a feasible new best. Kernel
and twin in exact parity with it on (fast path: bounded costs; plain path: a huge cost
turns the kernel's pruning off), chains of 0-2 ejections, two calls; an independent
referee replays the kernel's trajectory one iteration at a time and checks that no
assignment repeats within a call."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import _gapls
from coalloc.loadshare._reference import gapls as gtwin
from coalloc.loadshare.gap import tabu
from coalloc.loadshare.gap.tabu import TabuKnobs, TabuPlan, TabuState

from .test_gap_cands import _data  # the random instances of the candidate-list parity


def _run(mod, cost, weight, cap, start, seed, knobs, calls, window=0):
    m, n = cost.shape
    state = TabuState.fresh(start, m, np.array([seed], dtype=np.uint64))
    if window:
        state.memo_log = np.zeros(window + 1, dtype=np.uint64)
    done = [mod.tabu_search(cost, weight, cap, state, knobs.plan(k)) for k in calls]
    return done, state


@settings(deadline=None, max_examples=120)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6), st.integers(1, 16), st.integers(0, 60),
       st.integers(0, 60), st.sampled_from([1, 2]), st.sampled_from([0, 1, 2]),
       st.sampled_from([2, 100]), st.booleans(), st.sampled_from([1, 3]))  # fmt: skip
@example(7, 5, 16, 60, 60, 1, 1, 2, False, 1)
@example(11, 6, 16, 50, 50, 2, 2, 100, True, 3)
@example(5, 6, 16, 60, 60, 1, 0, 100, False, 1)
@example(9, 4, 12, 60, 60, 2, 1, 100, True, 1)
def test_memo_parity(seed, m, n, first, second, memo, chain, swap_items, huge, tenure) -> None:
    """Kernel and twin leave the same state after two calls with the memory on, without a
    log and with logs of 1, 7 and 1,000 assignments."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n, huge)
    start = rng.integers(0, m, size=n).astype(np.int64)
    knobs = TabuKnobs(tenure=tenure, restart=9, swap_items=swap_items, chain=chain, memo=memo)
    for window in (0, 1, 7, 1000):
        res = [_run(mod, cost, weight, cap, start, seed, knobs, (first, second), window)
               for mod in (_gapls, gtwin)]  # fmt: skip
        assert res[0][0] == res[1][0]
        for f in _FIELDS + (("memo_log",) if window else ()):
            np.testing.assert_array_equal(getattr(res[0][1], f), getattr(res[1][1], f))


_FIELDS = ("assign", "best", "alpha", "tabu_until", "istate", "dstate", "rng")


@settings(deadline=None, max_examples=40)
@given(st.integers(0, 2**32 - 1), st.integers(2, 6), st.integers(2, 16), st.integers(1, 60),
       st.integers(1, 60), st.sampled_from([1, 2]), st.sampled_from([0, 1, 2]),
       st.sampled_from([1, 7, 1000]))  # fmt: skip
@example(7, 5, 16, 37, 41, 1, 1, 7)
def test_a_log_makes_the_search_resumable(seed, m, n, first, second, memo, chain,
                                          window) -> None:  # fmt: skip
    """With a log the memory outlives the call: two calls of ``first`` and ``second``
    iterations leave what one call of ``first + second`` leaves (kernel and twin)."""
    rng = np.random.default_rng(seed)
    cost, weight, cap = _data(rng, m, n, False)
    start = rng.integers(0, m, size=n).astype(np.int64)
    knobs = TabuKnobs(tenure=1, restart=9, swap_items=100, chain=chain, memo=memo)
    for mod in (_gapls, gtwin):
        split = _run(mod, cost, weight, cap, start, seed, knobs, (first, second), window)
        whole = _run(mod, cost, weight, cap, start, seed, knobs, (first + second,), window)
        assert sum(split[0]) == whole[0][0]
        for f in _FIELDS + ("memo_log",):
            np.testing.assert_array_equal(getattr(split[1], f), getattr(whole[1], f))


def _tight(seed=3, m=6, n=60):
    rng = np.random.default_rng(seed)
    cost = rng.integers(1, 60, size=(m, n)).astype(np.float64)
    weight = rng.integers(5, 30, size=(m, n)).astype(np.int64)
    cap = np.full(m, int(0.8 * weight.mean() * n / m), dtype=np.int64)
    start = rng.integers(0, m, size=n).astype(np.int64)
    return cost, weight, cap, start


def test_memo_is_off_by_default_and_changes_the_search() -> None:
    """Off by default (the plan says 0), and on it changes a tight search's trajectory."""
    assert tabu._MEMO == 0 and TabuKnobs.default(100).memo == 0 and TabuPlan(5).memo == 0
    log = TabuState.fresh(np.zeros(3, dtype=np.int64), 2, np.zeros(1, dtype=np.uint64)).memo_log
    assert (log is None) == (tabu._MEMO_WINDOW == 0)
    assert log is None or (log.shape == (tabu._MEMO_WINDOW + 1,) and not log.any())
    cost, weight, cap, start = _tight()
    states = []
    for memo in (0, 1):
        knobs = TabuKnobs(tenure=1, restart=10**6, swap_items=20, chain=1, memo=memo)
        states.append(_run(_gapls, cost, weight, cap, start, 1, knobs, (400,))[1])
    assert not np.array_equal(states[0].tabu_until, states[1].tabu_until)


def _trajectory(memo, iterations=120, tenure=1, chain=1):
    """The assignments after 0, 1, ..., ``iterations`` iterations of one call (a fresh
    call of k iterations is the first k of a longer one: the memory is the call's)."""
    cost, weight, cap, start = _tight()
    knobs = TabuKnobs(tenure=tenure, restart=10**6, swap_items=100, chain=chain, memo=memo)
    return [_run(_gapls, cost, weight, cap, start, 1, knobs, (k,))[1].assign.tobytes()
            for k in range(iterations + 1)]  # fmt: skip


def _returns(states):
    """Iterations whose move led back to an assignment visited earlier in the call."""
    return [k for k in range(1, len(states))
            if states[k] != states[k - 1] and states[k] in states[:k]]  # fmt: skip


def test_no_assignment_repeats_within_a_call() -> None:
    """The referee, independent of the hashes: the kernel's trajectory rebuilt state by
    state. With tenure 1 the search without the memory returns to assignments it visited
    (it cycles); with ``memo = 1`` no move returns to one (chains of 0-2 ejections)."""
    assert _returns(_trajectory(0))
    for chain in (0, 1, 2):
        assert not _returns(_trajectory(1, chain=chain)), chain
