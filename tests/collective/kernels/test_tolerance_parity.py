"""The kernels' tolerance argument and the 0/0 rule of the factor (issue 30 items 1 and 3):
compiled and NumPy twins equal, and both against the rule written out with NumPy."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import _search as C
from coalloc.collective._reference import search as R
from coalloc.collective.core import Kernels


def call(fn, *args, **kwargs):
    """Call a kernel (or its twin) as the methods do: through the caller
    :class:`~coalloc.collective.core.Kernels`, which converts the IN arrays and allocates
    the OUT ones, and return what it returns."""
    module = C if getattr(C, fn.__name__, None) is fn else R
    assert getattr(module, fn.__name__) is fn
    return getattr(Kernels(module), fn.__name__)(*args, **kwargs)


#: Amounts that make decimal boundaries: 8 - 6.2 = 1.7999999999999998 < 1.8, 1 - 0.7 > 0.3.
_CAPS = [0.0, 0.0, 1.0, 3.0, 8.0, 0.3]
_RES = [0.0, 0.0, 0.7, 2.2, 6.2, 0.1]


def rows(rng, r, m):
    cap = rng.choice(_CAPS, (r, m))
    tmax = np.minimum(rng.choice(_RES, (r, m)), cap)
    return cap - tmax, tmax, cap


def factor(d, tm, cp):
    """The factor with 0/0 = 1, written out."""
    used, have = d + tm.sum(axis=0), cp.sum(axis=0)
    return float(np.prod([u / h if h > 0 else 1.0 for u, h in zip(used, have)]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_swap_search_and_phase5_with_zero_capacities_and_tolerance(seed):
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(2, 9)), int(rng.integers(1, 4))
    count = int(rng.integers(1, r + 1))
    a, t, p = rows(rng, r, m)
    d = rng.choice([0.0, 0.3, 1.8, 2.0], m) * count
    tol = 1e-9 * np.max(p, axis=0)
    sel = rng.permutation(r)[:count]
    s1, k1 = call(C.swap_search, a, t, p, d, sel, 100, tol)
    s2, k2 = call(R.swap_search, a, t, p, d, sel, 100, tol)
    assert np.array_equal(s1, s2) and k1 == k2
    dlo = d - count * tol
    if np.all(a[sel].sum(axis=0) >= dlo):  # feasible start: stays feasible, factor grows
        assert np.all(a[s1].sum(axis=0) >= dlo)
        assert factor(d, t[s1], p[s1]) >= factor(d, t[sel], p[sel])
        assert np.isfinite(factor(d, t[s1], p[s1]))
        if count < r:
            q2, n2 = call(R.phase5, a, t, p, d, s1, 5, seed, tol)
            q3, n3 = call(C.phase5, a, t, p, d, s1, 5, seed, tol)
            assert np.array_equal(q2, q3) and n2 == n3
            assert np.all(a[q3].sum(axis=0) >= dlo)
            assert np.isfinite(factor(d, t[q3], p[q3]))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_select_and_swap_with_tolerance(seed):
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(2, 12)), int(rng.integers(1, 4))
    count = int(rng.integers(1, r + 1))
    a, t, p = rows(rng, r, m)
    d = rng.choice([0.0, 0.3, 1.8, 2.0], m) * count
    tol = 1e-9 * np.max(p, axis=0)
    got = call(C.select_and_swap, a, t, p, d, count, 7, seed, tol)
    ref = call(R.select_and_swap, a, t, p, d, count, 7, seed, tol)
    assert np.array_equal(got[0], ref[0]) and got[1:] == ref[1:]
    assert got[1] == bool(np.all(a[got[0]].sum(axis=0) >= d - count * tol))


@pytest.mark.parametrize("case", range(30))
def test_screen_with_tolerance_against_the_rule(case):
    rng = np.random.default_rng(7000 + case)
    S, n, m = int(rng.integers(1, 4)), int(rng.integers(1, 9)), int(rng.integers(1, 4))
    cap = rng.choice(_CAPS, (n, m))
    tmax = np.minimum(rng.choice(_RES, (S, n, m)), cap[None])
    e = rng.choice([0.0, 0.3, 0.8, 1.8], m)
    count = int(rng.integers(1, n + 1))
    d = count * e * rng.choice([1.0, 1.0, 2.0], m)
    tol = 1e-9 * np.max(cap, axis=0)
    got = call(C.screen, tmax, cap, e, d, count, tol)
    ref = call(R.screen, tmax, cap, e, d, count, tol)
    for x, y in zip(got, ref):
        assert np.array_equal(x, y)
    for s in range(S):
        a = cap - tmax[s]
        ok = np.all(a >= e - tol, axis=1)
        assert got[1][s] == ok.sum()
        if ok.sum() < count:
            assert got[0][s] == 1
        else:
            top = -np.sort(-a[ok], axis=0)[:count].sum(axis=0)
            assert (got[0][s] == 2) == bool(np.any(top < d - count * tol))


def test_screen_counts_free_memory_8_minus_6_2_as_1_8():
    """Issue 30 item 3: 8.0 - 6.2 = 1.7999999999999998 meets a minimum of 1.8 under the rule."""
    cap, tmax = np.array([[8.0]]), np.array([[[6.2]]])
    assert call(C.screen, tmax, cap, np.array([1.8]), np.array([1.8]), 1)[0][0] == 1  # no tolerance
    tol = np.array([8e-9])
    for kern in (C, R):
        assert call(kern.screen, tmax, cap, np.array([1.8]), np.array([1.8]), 1, tol)[0][0] == 0


def test_kernels_reject_a_tolerance_of_the_wrong_length():
    a = np.ones((3, 2))
    for kern in (C, R):
        with pytest.raises(ValueError, match="tol"):
            call(kern.swap_search, a, a, a, np.ones(2), np.arange(2), 10, np.zeros(3))
