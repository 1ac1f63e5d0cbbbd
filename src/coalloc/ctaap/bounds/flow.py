"""The flow bound: the largest b-matching of tasks to compatible clusters, the clusters'
capacities tightened by clique covers (constraint (4) inside a cluster).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import scipy.sparse as sp

from ..._shared import interrupt
from ..._shared.caches import cache_of
from ..exact import tightened_capacity
from ..model import Offer, Request, check_compatible, compatibility


def _flow_with_caps(compat: np.ndarray, caps) -> int:
    """Largest b-matching of tasks to compatible clusters with capacities ``caps``."""
    return b_matching_size(compat, caps)


#: Most clusters (with room and a compatible task) for which :func:`b_matching_size` takes
#: the minimum cut over cluster sets itself; above it, SciPy's maximum flow.
SUBSET_CLUSTERS = 16


def b_matching_size(compat: np.ndarray, caps) -> int:
    """Most tasks placed on compatible clusters, at most ``caps[j]`` on cluster ``j``.

    The value of the maximum flow ``source -> task (1) -> compatible cluster -> sink
    (caps[j])`` (the flow bound's network, :func:`coalloc.ctaap.upper_bound`). With at
    most :data:`SUBSET_CLUSTERS` clusters that have room and a compatible task (the
    paper's instances have 5) it is the minimum cut, taken over every set ``T`` of those
    clusters: ``sum_{j in T} caps[j] + #{tasks that fit some cluster outside T}`` (the
    tasks that fit only clusters of ``T`` counted by one subset-sum pass over the ``2^k``
    sets), in NumPy alone; otherwise SciPy's maximum flow (Dinic). The two agree (a
    maximum flow's value is unique); the first spares a fresh process the 0.1-0.3 s
    import of :mod:`scipy.sparse.csgraph` inside a solve's time limit.

    Parameters
    ----------
    compat : ndarray of bool, shape (n, m)
        ``compat[i, j]``: task ``i`` fits cluster ``j``.
    caps : sequence of int, length m
        Most tasks on each cluster (negative counts as 0).

    Returns
    -------
    int
        The largest number of tasks placed.

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.ctaap.bounds import b_matching_size
    >>> compat = np.array([[1, 0], [1, 0], [1, 1]], dtype=bool)
    >>> b_matching_size(compat, [1, 5])
    2
    """
    compat = np.asarray(compat, dtype=bool)
    n, m = compat.shape
    caps = np.clip(np.asarray(caps, dtype=np.int64).reshape(m), 0, n)
    live = np.flatnonzero((caps > 0) & compat.any(axis=0))
    k = int(live.size)
    if k == 0:
        return 0
    if k > SUBSET_CLUSTERS:
        return _scipy_flow(compat, caps)
    # Each task's set of live clusters as a bit mask; tasks fitting none cannot be placed.
    masks = compat[:, live].astype(np.int64) @ (np.int64(1) << np.arange(k, dtype=np.int64))
    masks = masks[masks > 0]
    fits = int(masks.size)
    inside = np.bincount(masks, minlength=1 << k).astype(np.int64)  # tasks fitting only T
    room = np.zeros(1 << k, dtype=np.int64)  # caps summed over T
    for b in range(k):
        half = inside.reshape(-1, 2, 1 << b)
        half[:, 1, :] += half[:, 0, :]
        room.reshape(-1, 2, 1 << b)[:, 1, :] += caps[live[b]]
    return int((room + (fits - inside)).min())


def _scipy_flow(compat: np.ndarray, caps: np.ndarray) -> int:
    """:func:`b_matching_size` by SciPy's maximum flow (many clusters)."""
    from scipy.sparse.csgraph import maximum_flow

    n, m = compat.shape
    t_idx, c_idx = np.nonzero(compat)
    if t_idx.size == 0:
        return 0
    tasks = np.unique(t_idx)
    src = np.concatenate([np.zeros(tasks.size, np.int64), 1 + t_idx, n + 1 + np.arange(m)])
    dst = np.concatenate([1 + tasks, n + 1 + c_idx, np.full(m, n + m + 1)])
    capy = np.concatenate(
        [np.ones(tasks.size + t_idx.size, np.int64), np.minimum(np.asarray(caps), n)]
    ).astype(np.int32)
    graph = sp.csr_array((capy, (src, dst)), shape=(n + m + 2, n + m + 2))
    return int(maximum_flow(graph, 0, n + m + 1, method="dinic").flow_value)


def flow_bound(request: Request, offer: Offer) -> int:
    """The flow bound, :func:`coalloc.ctaap.upper_bound`, the same value.

    The b-matching of :func:`b_matching_size` with the clique-tightened capacities
    (:func:`coalloc.ctaap.exact.tightened_capacity`); without SciPy's graph module on the
    paper's instances, so that a fresh process's first bounded solve does not import it
    inside its time limit.

    Parameters
    ----------
    request : Request
    offer : Offer

    Returns
    -------
    int
        An upper bound on the number of tasks any feasible allocation places.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import flow_bound
    >>> request, offer = ct.generators.fig2(3, seed=1)
    >>> flow_bound(request, offer) == ct.upper_bound(request, offer)
    True
    """
    interrupt.check()
    check_compatible(request, offer)
    if request.n == 0 or offer.m == 0:
        return 0
    compat = compatibility(request, offer)
    if not compat.any():
        return 0
    return b_matching_size(compat, tightened_capacity(request, offer, compat))


#: Links per second of one core that the tightened capacities' first pass over a request
#: does (:func:`coalloc.ctaap.exact.tightened_capacity`: the links off the diagonal, then
#: a mask per cluster), below the slowest measured: 19-41e6 per CPU second on Fig. 2/3
#: requests of 0.09-4 million links at load 10. The pass has no look at a deadline inside
#: its first step, and in a fresh process it ran 60-110 ms past a 0.05 s limit.
TIGHTENING_RATE = 15e6


def tightening_fits(request: Request, offer: Offer, stop_at: Optional[float]) -> bool:
    """Whether the flow bound's tightened capacities are known for this pair (kept by an
    earlier call) or predicted to be computed before ``stop_at`` (links over
    :data:`TIGHTENING_RATE`); always True without a ``stop_at``. A bound under a time
    limit is not started when False (no bound rather than one past the deadline)."""
    if stop_at is None:
        return True
    hit = cache_of(offer).get("tightened_capacity", {}).get(id(request))
    if hit is not None and hit[0]() is request:
        return True
    return stop_at - time.perf_counter() > request.bandwidth.nnz / TIGHTENING_RATE
