"""The flow bound of a CTAAP request: a cheap, provably valid upper bound on the optimum.

:func:`upper_bound` drops constraint (4) except inside each cluster and solves what remains,
a maximum bipartite b-matching, as a maximum flow; :func:`tightened_capacity` gives the
cluster capacities tightened by intra-cluster conflicts (a greedy clique partition) that
the flow and the bounds of :mod:`coalloc.ctaap.bounds` use. The exact solve
(:mod:`coalloc.ctaap.exact`) intersects its proven bound with this one; the module is apart
from it because the bounds use it without the integer program.
"""

from __future__ import annotations

import sys
import time
import weakref
from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from .._shared.caches import cache_of
from .._shared.docs import filled
from .model import Offer, Request, check_compatible, compatibility

__all__ = ["upper_bound", "tightened_capacity"]

#: About what a process's first import of ``scipy.sparse.csgraph`` (:func:`upper_bound`'s
#: maximum flow) takes on a loaded machine (0.2 s at a load of 9, 1.4 s at 13): a
#: time-limited solve with less time left does not start it and keeps the plain bound (the
#: tasks that fit somewhere, capped by the machines), rather than return that long after
#: its limit (issue 36).
CSGRAPH_IMPORT_SECONDS = 0.5
# Largest per-cluster candidate set for which upper_bound builds the dense conflict graph.
_CLIQUE_LIMIT = 3000


def _clique_cover_size(adj: np.ndarray) -> int:
    """Number of cliques of a greedy clique partition of a graph (an upper bound on alpha).

    Vertices are taken by increasing degree; each joins the first clique all of whose
    members it is adjacent to, else opens a new one.
    """
    nv = adj.shape[0]
    if nv <= 1:
        return nv
    order = np.argsort(adj.sum(axis=1), kind="stable")
    common = np.zeros((0, nv), dtype=bool)  # common[c, v]: v adjacent to all of clique c
    n_cliques = 0
    for step, v in enumerate(order.tolist()):
        if not step & 63:
            interrupt.check()  # a solve's deadline, Ctrl-C (the anytime search's bound)
        hits = np.flatnonzero(common[:n_cliques, v])
        if hits.size:
            c = hits[0]
            common[c] &= adj[v]
        else:
            if n_cliques == common.shape[0]:
                common = np.concatenate([common, np.zeros((max(4, n_cliques), nv), bool)])
            common[n_cliques] = adj[v]
            n_cliques += 1
    return n_cliques


def tightened_capacity(request: Request, offer: Offer, compat: np.ndarray) -> np.ndarray:
    """Cluster capacities tightened by intra-cluster conflicts (:func:`upper_bound`).

    ``min(cap[j], n, #cliques of a greedy clique partition of the tasks that fit j and
    conflict inside j)``: no feasible allocation places more tasks on cluster ``j``.
    """
    # Computed once per (request, offer) pair and kept beside the offer (never on it): the
    # bounds ask for it several times per call.
    store = cache_of(offer).setdefault("tightened_capacity", {})
    hit = store.get(id(request))
    if hit is not None and hit[0]() is request and np.array_equal(hit[1], compat):
        return hit[2].copy()
    cap = _tightened_capacity(request, offer, compat)
    for key in [k for k, entry in store.items() if entry[0]() is None]:
        store.pop(key, None)  # requests gone since: one offer serves a whole batch
    store[id(request)] = (weakref.ref(request), compat.copy(), cap.copy())
    return cap


def _tightened_capacity(request: Request, offer: Offer, compat: np.ndarray) -> np.ndarray:
    n, m = request.n, offer.m
    # no cluster can take more than the n tasks: the flow capacities then fit in int32
    cap = np.minimum(offer.capacity, n).astype(np.int64)
    B = request.bandwidth
    # The stored links once (off the diagonal): a cluster's conflicts are those of its
    # candidates above its own bandwidth, O(links) per cluster, not O(candidates^2).
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(B.indptr))
    cols = B.indices.astype(np.int64, copy=False)
    off_diag = rows != cols
    rows, cols, data = rows[off_diag], cols[off_diag], B.data[off_diag]
    local = np.full(n, -1, dtype=np.int64)
    for j in range(m):
        interrupt.check()
        cand = np.flatnonzero(compat[:, j])
        if cand.size <= 1 or cand.size > _CLIQUE_LIMIT or cap[j] <= 1 or B.nnz == 0:
            continue
        bites = (data > offer.bandwidth[j, j]) & compat[rows, j] & compat[cols, j]
        if not bites.any():
            continue
        local[cand] = np.arange(cand.size, dtype=np.int64)
        adj = np.zeros((cand.size, cand.size), dtype=bool)
        a, b = local[rows[bites]], local[cols[bites]]
        adj[a, b] = True
        adj[b, a] = True  # either direction of a link conflicts
        local[cand] = -1
        cap[j] = min(cap[j], _clique_cover_size(adj))
    return cap


def _import_overruns(deadline: Optional[float]) -> bool:
    """Whether :func:`upper_bound`'s first import (not yet done) would likely outlast the
    time left before ``deadline``: :data:`CSGRAPH_IMPORT_SECONDS`."""
    if deadline is None or "scipy.sparse.csgraph" in sys.modules:
        return False
    return deadline - time.perf_counter() < CSGRAPH_IMPORT_SECONDS


@filled
def upper_bound(request: Request, offer: Offer) -> int:
    """A cheap, provably valid upper bound on the optimum.

    Constraint (4) is dropped except inside each cluster, and what remains is a maximum
    bipartite b-matching, solved as a maximum flow
    ``source -> task (1) -> compatible cluster (1) -> sink (c_j)``.

    The cluster capacities ``c_j`` are tightened from ``cap[j]`` with intra-cluster
    conflicts: two tasks ``i, k`` with ``B[i,k] > Bhat[j,j]`` or ``B[k,i] > Bhat[j,j]`` can
    never share cluster ``j``, so the tasks placed in ``j`` form an independent set of that
    conflict graph (over the tasks compatible with ``j``). A greedy partition of those
    tasks into cliques has at least as many parts as any independent set has members, so
    ``c_j = min(cap[j], #cliques)`` keeps the bound valid. The partition is skipped (plain
    ``cap[j]``) for clusters with more than a few thousand candidate tasks.

    Parameters
    ----------
    %(ctaap_graphs)s

    Returns
    -------
    int
        An upper bound on the number of tasks any feasible allocation places.

    Raises
    ------
    TypeError, ValueError
        Incompatible models.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> ct.upper_bound(request, offer), ct.solve(request, offer, seed=0).n_allocated
    (3, 2)
    """
    interrupt.check()  # before the import (up to 1.4 s in a fresh process under load)
    from scipy.sparse.csgraph import maximum_flow

    check_compatible(request, offer)
    n, m = request.n, offer.m
    compat = compatibility(request, offer)
    if n == 0 or m == 0 or not compat.any():
        return 0
    cap = tightened_capacity(request, offer, compat)
    # Nodes: 0 source, 1..n tasks, n+1..n+m clusters, n+m+1 sink.
    t_idx, c_idx = np.nonzero(compat)
    tasks = np.unique(t_idx)
    src = np.concatenate([np.zeros(tasks.size, np.int64), 1 + t_idx, n + 1 + np.arange(m)])
    dst = np.concatenate([1 + tasks, n + 1 + c_idx, np.full(m, n + m + 1)])
    capy = np.concatenate(
        [np.ones(tasks.size, np.int64), np.ones(t_idx.size, np.int64), cap]
    ).astype(np.int32)
    graph = sp.csr_array((capy, (src, dst)), shape=(n + m + 2, n + m + 2))
    return int(maximum_flow(graph, 0, n + m + 1, method="dinic").flow_value)
