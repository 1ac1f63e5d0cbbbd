"""swap_search's candidates computed property by property over every row (issue 40, h49coll):
the compiled kernel against its NumPy twin, bit for bit, on sets larger than the parity
test's, in both phases (the repair of the totals, then the factor), with rows of zero
capacity (a factor's quotient skipped), totals of zero (the deficit divided by 1), exact ties
and tolerances; and an independent referee: no single swap of the final set meets every
total and raises the factor (computed from the exact sums)."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Kernels


def _instance(seed):
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(20, 90)), int(rng.integers(1, 5))
    count = int(rng.integers(1, min(r, 30)))
    ties = seed % 3 == 0
    cap = rng.uniform(1, 8, (r, m))
    tmax = cap * rng.uniform(0, 1, (r, m)) * (rng.random((r, m)) < 0.6)
    if ties:  # exact ties between candidates
        cap, tmax = np.round(cap), np.floor(tmax)
    if seed % 4 == 0:  # rows of zero capacity on a property: sets whose sum is 0 there
        z = rng.choice(r, r // 2, replace=False)  # skip its quotient in the factor
        cap[z, 0], tmax[z, 0] = 0.0, 0.0
        count = int(rng.integers(1, 3))
    a = cap - tmax
    d = count * a.mean(axis=0) * rng.uniform(0.6, 1.4, m)
    if seed % 4 == 0:
        d[0] = 0.0
    if seed % 5 == 0:
        d[-1] = 0.0  # a total of zero: the deficit's term divided by 1
    tol = np.round(rng.uniform(0, 0.05, m), 3) if seed % 2 else np.zeros(m)
    sel = np.sort(rng.choice(r, count, replace=False))
    return a, tmax, cap, d, tol, sel


def _factor(d, t, p):
    u = 1.0
    for i in range(d.size):
        if p[i] > 0:
            u *= (d[i] + t[i]) / p[i]
    return u


@settings(max_examples=50, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
@example(0)
@example(20)
def test_swap_search_candidates_match_twin_and_are_a_local_optimum(seed):
    a, t, p, d, tol, sel = _instance(seed)
    s1, k1 = Kernels(C).swap_search(a, t, p, d, sel, 40, tol)
    s2, k2 = Kernels(R).swap_search(a, t, p, d, sel, 40, tol)
    assert np.array_equal(s1, s2) and k1 == k2
    assert len(set(s1.tolist())) == sel.size
    dl = d - sel.size * tol
    if k1 == 40 or not np.all(a[s1].sum(axis=0) >= dl) or seed % 4 == 0:
        # stopped by the rounds, or the totals not repaired: no factor to referee; with rows
        # of zero capacity the kernels' running sums (rounded) decide whether a quotient
        # is skipped, not the exact sums
        return
    u = _factor(d, t[s1].sum(axis=0), p[s1].sum(axis=0))
    rest = np.setdiff1d(np.arange(a.shape[0]), s1)
    for pos in range(s1.size):
        for q in rest:
            s = s1.copy()
            s[pos] = q
            if np.all(a[s].sum(axis=0) >= dl):
                assert _factor(d, t[s].sum(axis=0), p[s].sum(axis=0)) <= u * (1 + 1e-9)


def test_swap_search_repairs_then_raises_on_a_larger_set():
    # both phases on one call: a start set missing the totals, 300 rows, 40 swapped in
    rng = np.random.default_rng(7)
    r, m = 300, 3
    p = np.round(rng.uniform(1, 8, (r, m)), 1)
    t = np.floor(p * rng.uniform(0, 1, (r, m)) * 4) / 4
    a = p - t
    sel = np.argsort(a.sum(axis=1))[:40].copy()  # the poorest rows: the totals missed
    d = np.sort(a, axis=0)[::-1][:40].sum(axis=0) * 0.6
    assert not np.all(a[sel].sum(axis=0) >= d)
    s1, k1 = Kernels(C).swap_search(a, t, p, d, sel, 10**4, np.zeros(m))
    s2, k2 = Kernels(R).swap_search(a, t, p, d, sel, 10**4, np.zeros(m))
    assert np.array_equal(s1, s2) and k1 == k2 and k1 > 10
    assert np.all(a[s1].sum(axis=0) >= d)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
@example(1)
def test_swap_search_on_small_integers_matches_twin_in_both_phases(seed):
    """Small integer amounts and totals (issue 40, h52coll: the candidates' values two at a
    time in SSE2): sums that meet a total exactly (x == d in the repair phase), capacity sums
    of 0 (a quotient skipped), equal factors, and an odd or even count of rows out of the
    set (the scalar tail); the compiled kernel takes the twin's swaps, round for round."""
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(3, 24)), int(rng.integers(1, 4))
    count = int(rng.integers(1, r))
    # quarters: every sum, total and threshold d - count tol exact, so ties are exact too
    cap = rng.integers(0, 16, (r, m)) / 4.0
    tmax = np.minimum(cap, rng.integers(0, 12, (r, m)) / 4.0)
    a = cap - tmax
    d = np.floor(a.sum(axis=0) * count / r * rng.uniform(0.8, 1.6, m) * 4) / 4
    d[rng.random(m) < 0.2] = 0.0
    tol = rng.choice([0.0, 0.25, 0.5], m)  # a threshold below the total: x == d - count tol
    sel = np.argsort(a.sum(axis=1), kind="stable")[:count].copy()  # the poorest: a repair
    for rounds in (1, 3, 200):
        s1, k1 = Kernels(C).swap_search(a, tmax, cap, d, sel, rounds, tol)
        s2, k2 = Kernels(R).swap_search(a, tmax, cap, d, sel, rounds, tol)
        assert np.array_equal(s1, s2) and k1 == k2
