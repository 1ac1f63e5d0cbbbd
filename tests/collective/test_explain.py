"""Why not, for collective co-allocation (issue 38): every explanation judged by brute force.

The referee is the family's ``brute_force`` method (every start, every node set), not the
scan the explanation uses: the conflict's own request must be rejected, the request without
any one of its requirements must fit, and every relaxation's changed request must fit.
"""

from __future__ import annotations

import pytest

import coalloc.collective as co
from coalloc.collective.explain import explain_request


def _fits(pool, doc) -> bool:
    return co.coallocate(pool, co.CollectiveRequest(**doc), "brute_force").has_solution


def _cases():
    for s in range(40):
        pool, req = co.generators.random_instance(6, 2 + s % 4, collective=bool(s % 2),
                                                  load=0.7 + 0.05 * (s % 5), seed=s)  # fmt: skip
        yield pytest.param(pool, req, id=f"seed{s}")


@pytest.mark.parametrize("pool, req", list(_cases()))
def test_explanation_is_sound_minimal_and_its_fixes_fit(pool, req):
    rejected = not co.coallocate(pool, req, "brute_force").has_solution
    e = explain_request(pool, req, time_limit=30.0)
    if not rejected:
        assert e is None
        return
    assert e is not None and e.sound is True and e.minimal is True
    conflict = e.conflict
    assert not _fits(pool, conflict), "the conflict's request alone must be rejected"
    for key in sorted(set(conflict["minimum"]) | set(conflict.get("total", {}))
                      | set(conflict.get("labels", {}))):  # fmt: skip
        fewer = {**conflict,
                 "minimum": {k: v for k, v in conflict["minimum"].items() if k != key},
                 "total": {k: v for k, v in conflict.get("total", {}).items() if k != key},
                 "labels": {k: v for k, v in conflict.get("labels", {}).items() if k != key}}
        assert _fits(pool, fewer), f"dropping {key} must let the conflict fit"
    for r in e.relaxations:
        assert r.checked and _fits(pool, r.changes["request"]), r.sentence
    assert len(e.demand) == 1 + len(set(conflict["minimum"]) | set(conflict.get("total", {}))
                                    | set(conflict.get("labels", {})))  # fmt: skip
    assert "No start fits" in e.sentence and e.to_dict()["conflict"] == conflict


def test_a_request_that_fits_has_nothing_to_explain():
    pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    assert explain_request(pool, co.CollectiveRequest(600, 2, minimum={"cores": 1})) is None


def test_later_start_is_the_earliest_that_fits():
    """One node booked until 3600 s: a 2-node request in [0, 600] fits first at 3600."""
    pool = co.ResourcePool([[4.0], [4.0]], ["cores"]).reserve(0, 3600, [0], [[4.0]])
    e = explain_request(pool, co.CollectiveRequest(600, 2, 0, 600, minimum={"cores": 1}))
    later = next(r for r in e.relaxations if r.kind == "later_start")
    assert later.changes["latest_start"] == 3600.0
    moved = dict(later.changes["request"], latest_start=3599.0)
    assert not _fits(pool, moved), "no earlier start fits"


def test_explain_request_refuses_bad_arguments():
    pool = co.ResourcePool([[4.0]], ["cores"])
    req = co.CollectiveRequest(600, 1)
    with pytest.raises(TypeError, match="pool"):
        explain_request("pool", req)
    with pytest.raises(TypeError, match="request"):
        explain_request(pool, "req")
    with pytest.raises(ValueError, match="time_limit"):
        explain_request(pool, req, time_limit=-1)


@pytest.mark.parametrize("lo, hi", [(1, 1), (1, 2), (1, 7), (1, 127), (3, 40)])
def test_largest_agrees_with_a_scan_and_asks_the_least_first(lo, hi):
    """``_largest`` (the fixes' search for the most nodes, the longest duration) against a
    scan of every ``k``, for every threshold of a monotone ``fits``; where even ``lo`` does
    not fit it asks once."""
    from coalloc.collective.explain import _largest

    for top in range(lo - 1, hi + 1):  # fits(k) for k <= top
        asked = []

        def fits(k, top=top, asked=asked):
            asked.append(k)
            return k <= top

        want = max((k for k in range(lo, hi + 1) if k <= top), default=None)
        assert _largest(lo, hi, fits) == want
        if want is None:
            assert asked == [lo]
    assert _largest(1, 9, lambda k: None) is None  # unknown: nothing claimed
    got = _largest(1, 9, lambda k: True if k <= 4 else None)  # stops at the first unknown
    assert got is not None and got <= 4  # (a k that fits: never one undecided)
