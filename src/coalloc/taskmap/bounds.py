"""A cheap, reproducible lower bound on the maximum occupancy of every mapping.

:func:`lower_bound` is what ``taskmap.solve(..., bound=True)`` attaches to the result of
every method (the exact method keeps its solver's proven bound when that is higher), what
the multilevel mapper stops at once it reaches it, and what ``coalloc taskmap map`` prints
the gap against. It is a function of the graphs alone (no clock, no solver): the same
instance gives the same bound on any machine and under any load.
"""

from __future__ import annotations

import numpy as np

from .model import ResourceGraph, TaskGraph

__all__ = ["lower_bound"]


def lower_bound(tasks: TaskGraph, resources: ResourceGraph) -> float:
    """The largest of three bounds no mapping's maximum occupancy can go below.

    1. **Spread.** The processors together carry the whole compute, so one of them has
       occupancy at least ``sum(w) / sum(capacity)``.
    2. **Heaviest task.** It sits on some processor: ``max(w) / max(capacity)``.
    3. **A task and its neighbours.** For a task ``t``, either every task it exchanges
       with shares its processor (occupancy at least ``(w_t + sum of their w) /
       max(capacity)``), or one pair ``{t, u}`` is split and its volume crosses at least
       one link (occupancy at least ``volume(t, u) / max(bandwidth)``, for the smallest
       such volume). The bound is the smaller of the two, and the largest over the tasks.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph

    Returns
    -------
    float
        0 for an empty task graph.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> lower_bound(tasks, res)   # the spread: 4.5 / 8; the optimum is 0.6
    0.5625
    """
    if not isinstance(tasks, TaskGraph) or not isinstance(resources, ResourceGraph):
        raise TypeError("lower_bound needs a TaskGraph and a ResourceGraph")
    w = tasks.node_weight.astype(np.float64)
    if tasks.n == 0:
        return 0.0
    cap = resources.capacity[resources.processors].astype(np.float64)
    if cap.size == 0 or not cap.max() > 0:
        return 0.0
    top = float(cap.max())
    best = max(float(w.sum()) / float(cap.sum()), float(w.max()) / top)
    ip, ix, iw = tasks.undirected_csr()
    if ix.shape[0] and resources.n_links and resources.n_processors > 1:
        bw = float(resources.bandwidth.max())
        deg = np.diff(ip)
        has = deg > 0
        rows = np.repeat(np.arange(tasks.n), deg)
        together = (w + np.bincount(rows, weights=w[ix], minlength=tasks.n)) / top
        starts = ip[:-1][has]
        split = np.minimum.reduceat(iw, starts) / bw
        best = max(best, float(np.minimum(together[has], split).max()))
    return float(best)
