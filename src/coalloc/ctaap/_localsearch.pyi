"""Type stub for ``coalloc.ctaap._localsearch`` (src/_core/ctaap/_localsearch.cpp).

Iterated local search (ARW-style (0,1) insertions, (1,2) swaps and forced-insertion
perturbations) that grows a feasible CTAAP allocation; slow twin in
:mod:`coalloc.ctaap._reference.localsearch`.
"""

from typing import Dict, Optional, Tuple

import numpy as np
import numpy.typing as npt

from .model import KernelLinks

def improve(
    links: KernelLinks,
    bhat: npt.ArrayLike,
    allowed: npt.ArrayLike,
    capacity: npt.ArrayLike,
    assign: npt.NDArray[np.int64],
    max_iters: int = 500,
    seed: int = 0,
    priority: Optional[npt.ArrayLike] = None,
    self_check: bool = False,
) -> Dict[str, int]:
    """Grow the feasible allocation ``assign`` IN PLACE (writable C-contiguous int64).

    Returns the counters ``insertions``, ``swaps_1_2``, ``plateau_moves``,
    ``perturbations``, ``iterations``, ``accepted``, ``initial_size``, ``best_size``.
    """

def count_moves(
    links: KernelLinks,
    bhat: npt.ArrayLike,
    allowed: npt.ArrayLike,
    capacity: npt.ArrayLike,
    assign: npt.ArrayLike,
) -> Tuple[int, int]:
    """(number of (0,1) insertions, number of (1,2) swaps) of a feasible allocation."""

def list_moves(
    links: KernelLinks,
    bhat: npt.ArrayLike,
    allowed: npt.ArrayLike,
    capacity: npt.ArrayLike,
    assign: npt.ArrayLike,
    limit: int = 1000000,
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Insertions as rows (k, l); swaps as rows (i, k1, l1, k2, l2) with k1 < k2."""
