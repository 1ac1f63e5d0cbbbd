"""Type stub for the compiled module ``coalloc.ctaap._bmatching`` (src/_core/ctaap/_bmatching.cpp).

Incremental maximum-weight bipartite b-matching of tasks onto clusters with an exact
lexicographic (number matched, total weight) objective.
"""

from typing import Tuple

import numpy as np
import numpy.typing as npt

class BMatcher:
    """Incremental maximum-weight b-matching; starts empty, :meth:`solve` optimises."""

    def __init__(
        self,
        weights: npt.ArrayLike,
        allowed: npt.ArrayLike,
        capacity: npt.ArrayLike,
        cardinality_first: bool = True,
    ) -> None: ...
    def solve(self) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Optimise; return (tasks whose cluster changed, their old clusters), by task."""
    def forbid(self, i: int, j: int) -> bool:
        """Forbid pair (i, j); True if task i was in cluster j (it is now unassigned)."""
    @property
    def assignment(self) -> npt.NDArray[np.int64]:
        """Cluster of each task, -1 if unassigned (a copy)."""
    @property
    def n_allocated(self) -> int: ...
    @property
    def total_weight(self) -> float: ...
    @property
    def n_augmentations(self) -> int: ...
    @property
    def n_cycle_cancellations(self) -> int: ...
    @property
    def n_tasks(self) -> int: ...
    @property
    def n_clusters(self) -> int: ...
    @property
    def cardinality_first(self) -> bool: ...
    @property
    def epsilon(self) -> float:
        """Weight tolerance of 'strictly improving': 1e-12 * max|w| * max(1, (m + 2) / 200)."""
    @property
    def n_fallbacks(self) -> int:
        """Times the potentials were rebuilt after a rounding inconsistency (normally 0)."""
    @property
    def has_potentials(self) -> bool:
        """Whether node potentials certifying optimality are held (True after a solve)."""
    def _drop_potentials(self) -> None:
        """Testing aid: forget the potentials; the next forbid/solve take the general path."""
    def _self_check(self) -> bool:
        """Testing aid: cached arcs, groups, loads, counts and potentials are consistent."""

def b_matching(
    weights: npt.ArrayLike,
    allowed: npt.ArrayLike,
    capacity: npt.ArrayLike,
    cardinality_first: bool = True,
) -> npt.NDArray[np.int64]:
    """One-shot b-matching: cluster of each task, -1 if unassigned."""
