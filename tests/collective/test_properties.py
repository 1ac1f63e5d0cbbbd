"""Property-based tests: random small pools, every method against the referees."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import CollectiveRequest, ResourcePool, coallocate, verify


@st.composite
def problems(draw):
    n = draw(st.integers(1, 7))
    m = draw(st.integers(1, 3))
    k = draw(st.integers(1, 6))
    cap = np.array(draw(st.lists(st.integers(1, 6), min_size=n * m, max_size=n * m)), float)
    cap = cap.reshape(n, m)
    frac = np.array(draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n * m * k,
                                  max_size=n * m * k))).reshape(n, m, k)  # fmt: skip
    times = np.cumsum([0] + draw(st.lists(st.integers(1, 4), min_size=k - 1, max_size=k - 1)))
    pool = ResourcePool(cap, [f"p{i}" for i in range(m)], times * 100.0, cap[:, :, None] * frac)
    count = draw(st.integers(1, n))
    dur = draw(st.sampled_from([50.0, 100.0, 200.0, 400.0]))
    te = draw(st.sampled_from([0.0, 100.0, 150.0]))
    tl = te + draw(st.sampled_from([0.0, 100.0, 300.0, 1000.0]))
    e = {f"p{i}": draw(st.sampled_from([0.5, 1.0, 2.0])) for i in range(m)}
    total = None
    if draw(st.booleans()):
        total = {k_: v * count * draw(st.sampled_from([1.0, 1.5, 2.0])) for k_, v in e.items()}
    return pool, CollectiveRequest(dur, count, te, tl, e, total)


@pytest.mark.slow
@settings(max_examples=80, deadline=None)
@given(problems(), st.integers(0, 5))
def test_methods_admissible_and_scan_earliest(problem, seed):
    pool, req = problem
    ref = coallocate(pool, req, "brute_force")
    for method in ("scan", "cankar", "exact"):
        res = coallocate(pool, req, method, seed=seed)
        if res.start is not None:
            assert verify(req, pool, res).ok, (method, verify(req, pool, res))
            assert ref.start is not None and res.start >= ref.start
        if method != "cankar":
            assert res.start == ref.start
            if res.start is not None:
                assert res.utilisation >= 0.999999 * ref.utilisation * (method == "exact")
    scan_plain = coallocate(pool, req, "scan", enumerate_limit=0)
    assert scan_plain.start == ref.start
    if scan_plain.start is not None:
        assert verify(req, pool, scan_plain).ok
