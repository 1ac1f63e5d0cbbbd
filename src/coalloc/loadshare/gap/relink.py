"""Path relinking between elite GAP assignments (Yagiura, Ibaraki & Glover, EJOR 2006).

The search keeps a small pool of good, distinct assignments (:class:`ElitePool`). A step
of the relinking takes two of them, an initiating one and a guiding one, and walks from
the first toward the second (:func:`path_point`): each move sends one item on which they
differ to its agent in the guiding assignment, the move of least penalised cost first
(the cost plus the penalty weight times the capacity excess it adds or removes). The point
reached after a share of the differing items moved is the start of a tabu search (the
package's tabu search with ejection chains, :mod:`.tabu`), whose best assignment may
enter the pool. The walk is plain NumPy (O(d) a move, d the differing items); the tabu
search is the compiled kernel.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

import numpy as np

__all__ = ["ElitePool", "path_point"]


def path_point(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, start: np.ndarray,
               guide: np.ndarray, alpha: float, share: float) -> np.ndarray:  # fmt: skip
    """The assignment reached from ``start`` toward ``guide`` after ``share`` of the items
    on which they differ moved to their agent in ``guide``, the move of least penalised
    cost first (ties: the lowest item).

    Parameters
    ----------
    cost : numpy.ndarray of float64, shape (m, n)
        The costs (minimised).
    weight : numpy.ndarray of int64, shape (m, n)
        The weights.
    cap : numpy.ndarray of int64, shape (m,)
        The capacities.
    start, guide : numpy.ndarray of int64, shape (n,)
        The initiating and the guiding assignments (agents ``0 .. m - 1``).
    alpha : float
        The penalty weight of a unit of capacity excess.
    share : float
        The share of the differing items to move, in ``[0, 1]``.

    Returns
    -------
    numpy.ndarray of int64, shape (n,)
        The new assignment (``start`` is not changed).

    Examples
    --------
    >>> c = np.array([[1.0, 1.0], [0.0, 0.0]]); w = np.ones((2, 2), dtype=np.int64)
    >>> path_point(c, w, np.array([2, 1]), np.array([0, 0]), np.array([1, 1]), 10.0, 0.5)
    array([1, 0])
    """
    x = np.array(start, dtype=np.int64)
    m, n = cost.shape
    load = np.bincount(x, weights=weight[x, np.arange(n)], minlength=m).astype(np.int64)
    diff = np.flatnonzero(x != guide)
    steps = int(round(share * diff.size))
    for _ in range(steps):
        src, dst = x[diff], guide[diff]
        w_src, w_dst = weight[src, diff], weight[dst, diff]
        over_src = np.maximum(load[src] - cap[src], 0)
        over_dst = np.maximum(load[dst] - cap[dst], 0)
        d_excess = (np.maximum(load[src] - w_src - cap[src], 0) - over_src
                    + np.maximum(load[dst] + w_dst - cap[dst], 0) - over_dst)  # fmt: skip
        delta = cost[dst, diff] - cost[src, diff] + alpha * d_excess
        k = int(np.argmin(delta))
        j = int(diff[k])
        load[x[j]] -= weight[x[j], j]
        x[j] = guide[j]
        load[x[j]] += weight[x[j], j]
        diff = np.delete(diff, k)
    return x


class ElitePool:
    """At most ``size`` feasible assignments of distinct costs, the best first.

    An assignment enters when the pool has room or when it is better than the worst one
    kept, and when no assignment of the same cost is in the pool (two assignments of one
    cost are taken for the same: the pool keeps its diversity cheaply).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.members: List[Tuple[float, np.ndarray]] = []

    def __len__(self) -> int:
        return len(self.members)

    def offer(self, value: float, assign: np.ndarray) -> bool:
        """Offer an assignment of cost ``value`` (copied when kept); True when kept."""
        if any(abs(v - value) <= 1e-9 * max(1.0, abs(value)) for v, _ in self.members):
            return False
        if len(self.members) >= self.size:
            if value >= self.members[-1][0]:
                return False
            self.members.pop()
        self.members.append((float(value), np.array(assign, dtype=np.int64)))
        self.members.sort(key=lambda t: t[0])
        return True

    def pair(self, rng: np.random.Generator) -> Optional[Tuple[np.ndarray, np.ndarray]]:
        """Two distinct members drawn at random (initiating, guiding), or None when fewer
        than two."""
        if len(self.members) < 2:
            return None
        a, b = rng.choice(len(self.members), size=2, replace=False)
        return self.members[int(a)][1], self.members[int(b)][1]
