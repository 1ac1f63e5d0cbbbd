"""The deletion filter's ``shrink`` (issue 38: explanations within the solve + 1 s).

``minimal_conflict(..., shrink=...)`` goes on from a smaller subset the oracle's refusal
proves infeasible too. Judged here on a knapsack (one bin: a set conflicts when its weight
exceeds the bin), where the shrink keeps the heaviest elements up to the first past the
bin (a proof by itself) and the referee is the sum: the conflict must exceed the bin and
every single drop must fit; and the conflict is the same kind of answer as without shrink.
CTAAP's shrink (:func:`coalloc.ctaap.explain._fewer`, an exact optimum placing ``k`` tasks
proves every ``k + 1`` of them infeasible) is judged by brute force with ``verify``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coalloc.ctaap as ct
from coalloc._shared.explain import minimal_conflict
from coalloc.ctaap.explain import _fewer, _sub, explain_allocation


@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.lists(st.integers(1, 20), min_size=1, max_size=10), st.integers(0, 40),
       st.integers(1, 4))  # fmt: skip
@example([5, 5, 5, 5, 5, 5], 9, 1)
def test_shrink_keeps_the_conflict_sound_and_minimal(weights, cap, chunk):
    calls = {"shrink": 0}

    def fits(s):
        return sum(weights[i] for i in s) <= cap

    def shrink(s):
        calls["shrink"] += 1
        heavy, total = [], 0
        for i in sorted(s, key=lambda i: -weights[i]):
            heavy.append(i)
            total += weights[i]
            if total > cap:
                return [i for i in s if i in heavy]  # in the candidates' order
        raise AssertionError("shrink asked about a set that fits")

    out = minimal_conflict(range(len(weights)), fits, shrink=shrink, chunk=chunk)
    if fits(range(len(weights))):
        assert out.sound is False and out.minimal is None and calls["shrink"] == 0
        return
    assert out.sound and out.minimal and not out.timed_out
    assert not fits(out.conflict)
    for j in out.conflict:
        assert fits([k for k in out.conflict if k != j])
    assert out.conflict == sorted(out.conflict)  # (a subset, in the candidates' order)


def test_a_shrink_that_finds_nothing_smaller_changes_nothing():
    w = [4, 5, 6, 1]
    plain = minimal_conflict(range(4), lambda s: sum(w[i] for i in s) <= 10)
    same = minimal_conflict(range(4), lambda s: sum(w[i] for i in s) <= 10,
                            shrink=lambda s: None)  # fmt: skip
    assert (same.conflict, same.minimal, same.calls) == (plain.conflict, plain.minimal,
                                                         plain.calls)  # fmt: skip


def brute_places_all(request, offer) -> bool:
    return request.n == 0 or any(
        ct.verify(request, offer, list(a)).ok
        for a in itertools.product(range(offer.m), repeat=request.n))  # fmt: skip


def _crowded(seed):
    """Tasks well past the machines, so that an optimum leaves two or more out."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(4, 7)), int(rng.integers(1, 3))
    bw = np.triu(rng.choice([0, 0, 3, 8], size=(n, n)), 1)
    request = ct.Request({"cpu": rng.integers(1, 10, n)}, bandwidth=bw + bw.T)
    obw = rng.integers(2, 10, (m, m))
    offer = ct.Offer({"cpu": rng.integers(5, 12, m)}, capacity=rng.integers(1, 3, m),
                     bandwidth=np.maximum(obw, obw.T))  # fmt: skip
    return request, offer


@pytest.mark.parametrize("seed", range(12))
def test_ctaap_fewer_is_proved_by_brute_force(seed):
    request, offer = _crowded(seed)
    index = list(range(request.n))
    proof = ct.solve(request, offer, "exact", time_limit=30.0)
    assert proof.status == "optimal"
    got = _fewer(index, proof)
    if proof.n_allocated + 1 >= request.n:
        assert got is None
        return
    assert got is not None and len(got) == proof.n_allocated + 1
    assert not brute_places_all(_sub(request, got), offer), "the shrunk set must not fit"
    placed = [i for i in got if proof.assignment[i] >= 0]
    assert len(placed) == len(got) - 1  # the optimum's placed tasks and one left out
    assert brute_places_all(_sub(request, placed), offer)


@pytest.mark.parametrize("seed", range(12))
def test_ctaap_explanations_with_shrink_are_sound_and_minimal(seed):
    request, offer = _crowded(seed)
    e = explain_allocation(request, offer, time_limit=60.0)
    if brute_places_all(request, offer):
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    tasks = e.conflict["tasks"]
    assert not brute_places_all(_sub(request, tasks), offer)
    for i in tasks:
        assert brute_places_all(_sub(request, [k for k in tasks if k != i]), offer)
