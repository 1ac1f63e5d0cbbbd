"""min_counts (issue 40, h55coll): the minimum screen's counts without the window maxima,
against its twin and against block_screen over the window maxima of every row (the
referee: the eligible counts everywhere, and at the starts it rejects for too few eligible
nodes its property and count)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Kernels

from ._screen_cases import random_case


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["none", "equal", "near"]),
       st.sampled_from([0.0, 0.3, 0.7, 1.0]))  # fmt: skip
@example(seed=40, ties="equal", scale=1.0)
@example(seed=7, ties="near", scale=0.0)
def test_min_counts_matches_twin_and_block_screen(seed, ties, scale):
    """On drifting pools with ties and near-ties (the minimums on their amounts exactly
    when ``ties`` is "equal"), any rows (repeats too), starts on and off the grid (repeats
    too), short and long windows: compiled = twin, the eligible counts = block_screen's,
    and where block_screen rejects a start for its minimums (code 1), its property is the
    first met by the fewest rows and its value that count."""
    c, rng = random_case(seed, ties, True, max_count=6)
    times, res, nodes, starts, dur, cap_n, e, d, count, tol, tms = c
    e = e * (1.0 + scale)  # more starts with too few eligible rows
    if ties == "equal":  # minimums equal to amounts that some windows hold
        e = np.round(e)
    got = Kernels(C).min_counts(times, res, nodes, starts, dur, cap_n, e, tol)
    elig, meet = np.empty_like(got[0]), np.empty_like(got[1])
    R.min_counts(times, res, nodes, starts, dur, cap_n, e, tol, elig, meet)
    assert got[0].dtype == got[1].dtype == np.int64
    assert np.array_equal(got[0], elig) and np.array_equal(got[1], meet)
    code, el, prop, val = Kernels(C).block_screen(tms, cap_n, e, d, count, tol=tol)
    assert np.array_equal(el, elig)
    assert np.array_equal(code == 1, elig < count)  # code 1 exactly when too few eligible
    for s in np.flatnonzero(code == 1):
        assert prop[s] == int(np.argmin(meet[s])) and val[s] == float(meet[s].min())
    # the counts by their definition, from the window maxima
    good = cap_n[None] - tms >= e - tol
    assert np.array_equal(meet, good.sum(axis=1))


def test_min_counts_checks_its_arguments_and_empty_inputs():
    """Shapes checked by name (both), no starts or no rows: zero counts."""
    times = np.array([0.0, 300.0, 600.0])
    res = np.zeros((2, 1, 3))
    nodes = np.array([0, 1])
    cap = np.ones((2, 1))
    for mod in (C, R):
        elig, meet = np.full(2, 7, np.int64), np.full((2, 1), 7, np.int64)
        mod.min_counts(times, res, nodes[:0], np.array([0.0, 300.0]), 600.0, cap[:0],
                       np.ones(1), np.zeros(1), elig, meet)  # fmt: skip
        assert not elig.any() and not meet.any()
        try:
            mod.min_counts(times, res, nodes, np.array([0.0]), 600.0, cap, np.ones(2),
                           np.zeros(1), elig[:1], meet[:1])  # fmt: skip
        except ValueError as err:
            assert "e and tol" in str(err)
        else:
            raise AssertionError("a minimum per property was not checked")
        try:
            mod.min_counts(times, res, nodes, np.array([300.0, 0.0]), 600.0, cap, np.ones(1),
                           np.zeros(1), elig, meet)  # fmt: skip
        except ValueError as err:
            assert "non-decreasing" in str(err)
        else:
            raise AssertionError("the starts' order was not checked")
