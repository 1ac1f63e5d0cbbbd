"""Why not, for CTAAP (issue 38): explanations judged by brute force with ``verify``.

The referee enumerates every placement of a tiny request's tasks onto the clusters and asks
the family's ``verify`` (constraints (1)-(5)) whether it holds: the conflict's tasks must
have no valid placement, every single-task drop must have one, and each relaxation's
changed request must be placed in full.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import coalloc.ctaap as ct
from coalloc.ctaap.explain import _sub, explain_allocation


def brute_places_all(request, offer) -> bool:
    if request.n == 0:
        return True
    return any(ct.verify(request, offer, list(a)).ok
               for a in itertools.product(range(offer.m), repeat=request.n))  # fmt: skip


def _instance(seed):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 6)), int(rng.integers(1, 4))
    bw = np.triu(rng.choice([0, 0, 2, 5, 9], size=(n, n)), 1)
    request = ct.Request({"cpu": rng.integers(1, 10, n)}, bandwidth=bw + bw.T)
    obw = rng.integers(1, 10, (m, m))
    offer = ct.Offer({"cpu": rng.integers(3, 12, m)}, capacity=rng.integers(0, 3, m),
                     bandwidth=np.maximum(obw, obw.T))  # fmt: skip
    return request, offer


@pytest.mark.parametrize("seed", range(30))
def test_conflict_is_sound_minimal_and_the_fixes_fit(seed):
    request, offer = _instance(seed)
    e = explain_allocation(request, offer, time_limit=60.0)
    if brute_places_all(request, offer):
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    tasks = e.conflict["tasks"]
    assert not brute_places_all(_sub(request, tasks), offer), "the conflict must not fit"
    for i in tasks:
        rest = [k for k in tasks if k != i]
        assert brute_places_all(_sub(request, rest), offer), f"without task {i} they fit"
    for r in e.relaxations:
        assert r.checked, r.sentence
        if r.kind == "drop_tasks":
            keep = [i for i in range(request.n) if i not in r.changes["drop_tasks"]]
            assert brute_places_all(_sub(request, keep), offer)
        elif r.kind == "less_bandwidth":
            changed = _sub(request, list(range(request.n)),
                           scale=(r.changes["tasks"], r.changes["bandwidth_fraction"]))  # fmt: skip
            assert brute_places_all(changed, offer)
        elif r.kind == "more_machines":
            cap = np.array(offer.capacity)
            cap[r.changes["cluster"]] += 1
            bigger = ct.Offer(dict(offer.properties), cap, offer.bandwidth)
            assert brute_places_all(request, bigger)


def test_explain_allocation_refuses_bad_arguments():
    request, offer = _instance(0)
    with pytest.raises(TypeError, match="request"):
        explain_allocation("request", offer)
    with pytest.raises(ValueError, match="time_limit"):
        explain_allocation(request, offer, time_limit=0)
