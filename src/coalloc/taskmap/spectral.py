"""The spectral bound of :func:`coalloc.taskmap.bounds.lower_bound` (strength ``"spectral"``,
opt-in): an isoperimetric argument over all the groups of processors of one level together.

Two lemmas:

1. *The cut of any task set, from the algebraic connectivity.* Let ``L`` be the Laplacian of
   the task graph (pair volumes, :meth:`TaskGraph.undirected_csr`), ``M = diag(w)`` the task
   weights (all positive) and ``lambda_2`` the second smallest eigenvalue of ``L x = lambda
   M x``. For a task set ``S`` of weight ``a = w(S)``, ``x = 1_S - (a / W) 1`` is
   ``M``-orthogonal to ``1`` (the first eigenvector), ``x' M x = a (W - a) / W`` and ``x' L
   x = cut(S)``, so by Courant-Fischer ``cut(S) >= lambda_2 f(a)`` with ``f(a) = a (W - a) /
   W``. The value used is a certified lower bound on ``lambda_2``: ARPACK's estimate less 2
   %, checked by the inertia of ``M^-1/2 L M^-1/2 - sigma I`` (Sylvester: one negative
   pivot of a symmetric LU, ``lambda_1 = 0`` alone below ``sigma``); 0 (no bound) when the
   check fails, the graph is disconnected or a task weighs 0.
2. *Groups.* Every route from the processors behind a bridge to the others crosses it, and
   every route from a processor leaves by one of its own links. Take disjoint groups ``j``
   of processors, each behind a bridge (or one processor: its own links) of bandwidth
   ``b_j``, with capacity ``c_j``; the processors in no group hold capacity ``c_0``. In a
   mapping of maximum occupancy at most ``U`` the tasks ``S_j`` of group ``j`` have weight
   ``a_j <= U c_j`` and ``cut(S_j) <= U b_j``, and the rest holds at most ``U c_0``. So
   ``lambda_2 sum_j f(a_j) <= U sum_j b_j`` for some ``a`` with ``0 <= a_j <= U c_j`` and
   ``W - U c_0 <= sum_j a_j <= W``. ``sum_j f(a_j) = s - sum_j a_j^2 / W`` (``s = sum_j
   a_j``) is least, for a given ``s``, when the groups are filled largest first (that
   vector majorizes every other; the sum of squares is Schur-convex), and that least value
   is concave in ``s`` between two consecutive fills: its minimum over ``s`` is at the ends
   of the range or at a fill. The test (is that minimum times ``lambda_2`` at most ``U
   sum_j b_j``?) only gets easier as ``U`` grows, so the least passing ``U`` (bisection
   from below, :func:`coalloc.taskmap._bisect._least`) is a lower bound on the optimum.

The groups tried: every processor alone; and for every depth ``d`` of the tree of sides
(:class:`coalloc.taskmap.cutbound._Sides`) the sides at depth ``d`` (a hierarchical
cluster's nodes, its racks), the other processors once left out (``c_0``) and once as
groups of one. The largest of their bounds is returned.

On a grid the bound is weak: ``lambda_2`` of a ``k x k`` grid is about ``(pi / k)^2``, so a
node's share ``a`` of the grid is charged ``lambda_2 a`` where its true cut grows as
``sqrt(a)`` (measured in ``bench/taskmap/ISSUE40.md``, h52tmap).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._shared.caches import cache_of
from ._bisect import _least
from .model import ResourceGraph, TaskGraph

__all__ = ["connectivity_lower", "spectral_bound"]

_MARGIN = 0.98  # the certified value is ARPACK's estimate times this (then checked)
_DENSE = 400  # up to this many tasks the eigenvalue comes from a dense solver


def connectivity_lower(tasks: TaskGraph) -> float:
    """A certified lower bound on ``lambda_2`` of ``L x = lambda M x`` (lemma 1 above).

    Parameters
    ----------
    tasks : TaskGraph

    Returns
    -------
    float
        At most the true ``lambda_2``; 0 when no positive value could be certified (a
        disconnected graph, a task of weight 0, fewer than 3 tasks' worth of structure).
        Kept beside the task graph.

    Examples
    --------
    >>> from coalloc.taskmap import TaskGraph
    >>> path = TaskGraph([1.0, 1.0, 1.0], [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    >>> round(connectivity_lower(path), 3)   # the path's lambda_2 is 1, less the margin
    0.98
    """
    cache = cache_of(tasks)
    hit = cache.get("spectral_lambda2")
    if hit is None:
        hit = cache["spectral_lambda2"] = _lambda2(tasks)
    return hit


def _normalised(tasks: TaskGraph):
    """``M^-1/2 L M^-1/2`` as CSC, or None where lemma 1 gives nothing."""
    from scipy.sparse import csgraph

    n = tasks.n
    w = tasks.node_weight.astype(np.float64)
    ip, ix, iw = tasks.undirected_csr()
    if n < 2 or not (w > 0).all() or not (iw > 0).any():
        return None
    a = sp.csr_matrix((np.array(iw, dtype=np.float64), np.array(ix), np.array(ip)), shape=(n, n))
    a.eliminate_zeros()
    if csgraph.connected_components(a, directed=False)[0] > 1:
        return None
    d = 1.0 / np.sqrt(w)
    lap = sp.diags(np.asarray(a.sum(axis=1)).ravel()) - a
    return sp.csc_matrix(sp.diags(d) @ lap @ sp.diags(d))


def _lambda2(tasks: TaskGraph) -> float:
    from scipy.sparse.linalg import eigsh

    nl = _normalised(tasks)
    if nl is None:
        return 0.0
    n = nl.shape[0]
    if n <= _DENSE:  # dense: exact to rounding, then the same check
        vals = np.linalg.eigvalsh(nl.toarray())
        theta = float(vals[1])
    else:
        scale = float(nl.diagonal().max())
        v0 = np.sqrt(np.arange(1, n + 1, dtype=np.float64))  # deterministic start
        vals = eigsh(nl, k=2, sigma=-1e-6 * scale, which="LM", v0=v0,
                     return_eigenvectors=False)  # fmt: skip
        theta = float(np.max(vals))
    for sigma in (_MARGIN * theta, 0.5 * theta):
        if sigma > 0 and _below(nl, sigma) == 1:
            return sigma
    return 0.0


def _below(nl: sp.csc_matrix, sigma: float) -> int:
    """How many eigenvalues of ``nl`` lie below ``sigma`` (the negative pivots of a
    symmetric LU of ``nl - sigma I``, Sylvester's law of inertia); -1 when the
    factorisation pivoted off the diagonal or met a zero pivot (no count)."""
    from scipy.sparse.linalg import splu

    shifted = sp.csc_matrix(nl - sigma * sp.identity(nl.shape[0], format="csc"))
    try:
        lu = splu(shifted, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                  options={"SymmetricMode": True})  # fmt: skip
    except RuntimeError:  # exactly singular
        return -1
    if not np.array_equal(lu.perm_r, lu.perm_c):
        return -1
    piv = lu.U.diagonal()
    if not np.all(np.isfinite(piv)) or (piv == 0).any():
        return -1
    return int((piv < 0).sum())


def _families(resources: ResourceGraph) -> list:
    """The groups tried: ``(caps, bandwidths, rest capacity)`` per family."""
    from .cutbound import _Sides

    sides = _Sides(resources)
    cap, band = sides.cap, sides.band
    out = [(cap, band, 0.0)]  # every processor alone, by its own links
    depth = np.zeros(sides.ncomp, dtype=np.int64)
    for c in sides.order[::-1][1:]:  # root first: a parent before its children
        depth[c] = depth[sides.parent[c]] + 1
    for d in range(1, int(depth.max()) + 1 if sides.ncomp else 1):
        # the ancestor at depth d of each processor's component (-1: above it)
        anc = np.where(depth[sides.pcomp] >= d, sides.pcomp, -1)
        for _ in range(int(depth.max()) - d):
            up = (anc >= 0) & (depth[np.maximum(anc, 0)] > d)
            anc[up] = sides.parent[anc[up]]
        inside = anc >= 0
        if not inside.any():
            continue
        groups, gi = np.unique(anc[inside], return_inverse=True)
        gcap = np.bincount(gi, weights=cap[inside], minlength=groups.size)
        gbw = sides.bw_up[groups]
        out.append((gcap, gbw, float(cap[~inside].sum())))
        out.append((np.concatenate([gcap, cap[~inside]]),
                    np.concatenate([gbw, band[~inside]]), 0.0))  # fmt: skip
    return [f for f in out if f[0].size and np.all(f[1] > 0)]


def _least_sum(u: np.ndarray, W: float, lo: float, hi: float) -> float:
    """``min sum_j f(a_j)`` over ``0 <= a_j <= u_j``, ``lo <= sum_j a_j <= hi`` (lemma 2)."""
    u = np.minimum(np.sort(u)[::-1], W)
    fills = np.concatenate([[0.0], np.cumsum(u)])
    squares = np.concatenate([[0.0], np.cumsum(u * u)])

    def g(s: float) -> float:
        k = int(np.searchsorted(fills, s, side="right")) - 1
        k = min(k, u.size)
        t = s - fills[k]
        return s - (squares[k] + t * t) / W

    points = [lo, hi] + [float(x) for x in fills if lo < x < hi]
    return min(g(s) for s in points)


def _passes(lam: float, W: float, family: tuple, U: float) -> bool:
    caps, bws, rest = family
    lo = max(0.0, W - U * rest)
    hi = min(W, U * float(caps.sum()))
    if lo > hi * (1 + 1e-12):
        return False  # the groups and the rest cannot hold W
    need = lam * _least_sum(U * caps, W, lo, max(lo, hi))
    return need <= U * float(bws.sum()) * (1 + 1e-12)


def spectral_bound(tasks: TaskGraph, resources: ResourceGraph, start: float) -> float:
    """The least ``U`` (from ``start`` up) that every family of groups passes (lemma 2).

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    start : float
        A lower bound already known (positive), where the bisection starts.

    Returns
    -------
    float
        A lower bound on the maximum occupancy of every mapping, at least ``start``.

    Examples
    --------
    >>> from coalloc.taskmap import generators as gen
    >>> tasks = gen.stencil_task_graph((8, 8), seed=1)
    >>> res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=4,
    ...                                speed=(1.0, 3.0), node_bandwidth=1.0, seed=4)
    >>> round(spectral_bound(tasks, res, 1.0), 2)   # the spread (3.26): a grid's cut is weak
    3.26
    """
    if tasks.n < 2 or resources.n_processors < 2 or resources.n_links == 0 or start <= 0:
        return float(start)
    lam = connectivity_lower(tasks)
    if lam <= 0:
        return float(start)
    W = float(tasks.node_weight.astype(np.float64).sum())
    best = float(start)
    for family in _families(resources):
        best = max(best, _least(lambda U, f=family: _passes(lam, W, f, U), best))
    return best
