"""Type stub for ``coalloc.collective._search`` (src/_core/collective/_search.pyx).

Window maxima of the timetables, SelectAndSwap (Phase IV), Phase V and the default method's
swap search, all without the GIL; twin in :mod:`coalloc.collective._reference.search`.
``tol``: the family's tolerance ``tau_i`` per property (None: zeros).
"""

from typing import Optional, Tuple

import numpy as np
import numpy.typing as npt

def window_max(
    times: npt.ArrayLike, reserved: npt.ArrayLike, starts: npt.ArrayLike, duration: float
) -> np.ndarray:
    """(S, n, m) maxima of ``reserved`` over ``[starts[s], starts[s] + duration)``."""

def select_and_swap(
    avail: npt.ArrayLike,
    tmax: npt.ArrayLike,
    cap: npt.ArrayLike,
    d: npt.ArrayLike,
    count: int,
    l1: int,
    seed: int,
    tol: Optional[npt.ArrayLike] = ...,
) -> Tuple[np.ndarray, bool, int]:
    """(selected rows, admissible, swap attempts)."""

def phase5(
    avail: npt.ArrayLike,
    tmax: npt.ArrayLike,
    cap: npt.ArrayLike,
    d: npt.ArrayLike,
    sel: npt.ArrayLike,
    l2: int,
    seed: int,
    tol: Optional[npt.ArrayLike] = ...,
) -> Tuple[np.ndarray, int]:
    """(selected rows, swaps accepted)."""

def swap_search(
    avail: npt.ArrayLike,
    tmax: npt.ArrayLike,
    cap: npt.ArrayLike,
    d: npt.ArrayLike,
    sel: npt.ArrayLike,
    max_rounds: int,
    tol: Optional[npt.ArrayLike] = ...,
) -> Tuple[np.ndarray, int]:
    """(selected rows, swaps applied)."""

def scan_screen(
    times: npt.ArrayLike,
    reserved: npt.ArrayLike,
    nodes: npt.ArrayLike,
    starts: npt.ArrayLike,
    duration: float,
    cap: npt.ArrayLike,
    e: npt.ArrayLike,
    d: npt.ArrayLike,
    count: int,
    first_block: int = ...,
    max_block: int = ...,
    tol: Optional[npt.ArrayLike] = ...,
) -> Tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(stop, code, eligible, prop, value, tmax at starts[stop]): window maxima and screens
    of the starts in order, up to the first that passes."""

def decrease_starts(
    times: npt.ArrayLike, reserved: npt.ArrayLike, nodes: npt.ArrayLike, lo: float, hi: float
) -> np.ndarray:
    """``lo`` and the breakpoints in ``(lo, hi]`` where a reserved amount of ``nodes`` falls."""
