"""The bisection of the task-mapping bounds: the least value that passes a monotone test,
from below (every value returned failed the test, so it is a valid lower bound)."""

from __future__ import annotations

_STEPS = 40  # bisection steps (it stops earlier at a relative _PRECISION)
_PRECISION = 1e-3


class _Spent(Exception):
    """The stars bound's cap on full tests is reached (``max_tests``)."""


def _least(test, lo: float) -> float:
    """The largest value found to fail ``test`` (monotone: once passed, passed above), or
    ``lo`` when it passes there; to a relative ``_PRECISION``. A test that raises
    :class:`_Spent` ends the search at the largest value found to fail so far."""
    try:
        if test(lo):
            return lo
        hi = 2.0 * lo
        for _ in range(60):
            if test(hi):
                break
            lo, hi = hi, 2.0 * hi
        else:
            return lo
        for _ in range(_STEPS):
            if hi - lo <= _PRECISION * hi:
                break
            mid = 0.5 * (lo + hi)
            if test(mid):
                hi = mid
            else:
                lo = mid
    except _Spent:
        pass
    return lo
