"""Why load waits (issue 38), when the jobs exceed the nodes' total capacity.

The conflict is then large jobs whose sizes exceed the total (the volume bound), and
it is minimal when the jobs but its smallest pack (any other job out leaves a set that
packs too: the smallest takes its place). The packing witnesses (best fit, first fit, and
the node-by-node fill with a best pair) are judged by a brute force over the assignments
on small instances and by summing their assignment again (math.fsum) on the paper's grid.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coalloc.loadshare import LoadSharingProblem
from coalloc.loadshare.explain import FILL_RESERVES, _fill, _packs, explain_share
from coalloc.loadshare.generators import paper_setup

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])  # fmt: skip


def brute_packs(size, cap) -> bool:
    size = list(size)
    if not size:
        return True
    return any(all(math.fsum(s for s, i in zip(size, a) if i == b) <= cap[b]
                   for b in range(len(cap)))
               for a in itertools.product(range(len(cap)), repeat=len(size)))  # fmt: skip


@SETTINGS
@given(st.lists(st.floats(1.0, 9.0), min_size=1, max_size=7),
       st.lists(st.floats(4.0, 16.0), min_size=1, max_size=3))  # fmt: skip
@example([5.0, 5.0, 5.0], [10.0, 5.0])
def test_a_packing_witness_is_a_packing(size, cap):
    size, cap = np.array(size), np.array(cap)
    if _packs(size, cap):
        assert brute_packs(size, cap)
    for r in FILL_RESERVES:
        where = _fill(size, cap, r)
        if where is not None:
            for b in range(cap.size):
                assert math.fsum(size[where == b]) <= cap[b]


@SETTINGS
@given(st.lists(st.integers(1, 9), min_size=2, max_size=6),
       st.lists(st.integers(2, 12), min_size=1, max_size=3))  # fmt: skip
def test_volume_conflicts_and_the_fewest_jobs_held_back(size, cap):
    if sum(size) <= sum(cap):
        return  # (not the volume case)
    problem = LoadSharingProblem(cap, size, [0] * len(size))
    e = explain_share(problem, time_limit=20.0)
    assert e is not None and e.sound is True
    jobs = e.conflict["jobs"]
    assert sum(size[j] for j in jobs) > sum(cap) or not brute_packs([size[j] for j in jobs], cap)
    if e.minimal:
        for j in jobs:
            assert brute_packs([size[i] for i in jobs if i != j], cap)
    for r in e.relaxations:
        if r.kind != "drop_items" or not r.checked:
            continue
        gone = set(r.changes["drop_items"])
        assert brute_packs([s for i, s in enumerate(size) if i not in gone], cap)
        if r.optimal:  # no fewer jobs held back pack
            k = len(gone) - 1
            assert not any(brute_packs([s for i, s in enumerate(size) if i not in out], cap)
                           for out in itertools.combinations(range(len(size)), k))  # fmt: skip


@pytest.mark.parametrize("n, seed", [(20, 0), (20, 3), (40, 0), (40, 2)])
def test_the_paper_grid_over_capacity_gets_a_minimal_volume_conflict(n, seed):
    prob = paper_setup(n, light=(560.0, 500.0), seed=seed)
    size, cap = np.asarray(prob.job_size), np.asarray(prob.capacity)
    assert size.sum() > cap.sum()
    e = explain_share(prob, time_limit=10.0)
    assert e is not None and e.sound is True and e.certificate == "volume bound"
    jobs = e.conflict["jobs"]
    assert math.fsum(size[jobs]) > math.fsum(cap)
    assert e.minimal is True
    # the witness of minimality, summed again: the conflict's jobs but the smallest pack
    rest = np.sort(size[jobs])[1:]
    found = [w for w in (_fill(rest, cap, r) for r in FILL_RESERVES) if w is not None]
    if found:
        for b in range(cap.size):
            assert math.fsum(rest[found[0] == b]) <= cap[b]
    drop = next(r for r in e.relaxations if r.kind == "drop_items")
    assert drop.checked
    keep = [j for j in range(size.size) if j not in set(drop.changes["drop_items"])]
    assert math.fsum(size[keep]) <= math.fsum(cap)
    assert _packs(size[keep], cap)


@pytest.mark.parametrize("n, seed", [(40, 1), (100, 1), (100, 2)])
def test_a_swapped_volume_conflict_is_shown_minimal_where_the_largest_jobs_are_not(n, seed):
    """The largest jobs past the total leave 1-9 of room (no packing found); one large job
    swapped for the next two leaves about the smaller of them, and that packing is found."""
    prob = paper_setup(n, light=(560.0, 500.0), seed=seed)
    size, cap = np.asarray(prob.job_size), np.asarray(prob.capacity)
    order = np.argsort(-size, kind="stable")
    k = int(np.searchsorted(np.cumsum(size[order]), cap.sum(), side="right")) + 1
    assert not _packs(np.sort(size[order[:k]])[1:], cap)  # (the case the swap is for)
    e = explain_share(prob, time_limit=10.0)
    assert e is not None and e.sound is True and e.minimal is True
    jobs = e.conflict["jobs"]
    assert len(jobs) == k and sorted(jobs) != sorted(order[:k].tolist())  # (swapped)
    assert math.fsum(size[jobs]) > math.fsum(cap)
    rest = np.sort(size[jobs])[1:]  # the witness of minimality, summed again
    found = [w for w in (_fill(rest, cap, r) for r in FILL_RESERVES) if w is not None]
    assert found or _packs(rest, cap)
    for where in found[:1]:
        for b in range(cap.size):
            assert math.fsum(rest[where == b]) <= cap[b]
