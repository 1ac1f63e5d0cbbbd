"""The cluster sets' bound (:func:`cluster_set_bound`): each set's capped clique bound, combined
by an LP (dense requests, issue 29).
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np
import scipy.sparse as sp

from ..._shared.constraints import checked
from ..._shared.docs import filled
from ..exact import tightened_capacity
from ..model import Offer, Request, check_compatible, compatibility
from ._common import (
    CLIQUE_WORK,
    DENSE_FRACTION,
    SET_LP_ITERATIONS,
    BoundStopped,
    _dual_value,
    _poll,
    _solve_dual,
    _timed,
    lp_skip,
)
from .cliques import (
    _MAX_COUNT_WORK,
    _MAX_SET_VERTICES,
    _greedy_clique,
    _pair_count_bound,
    _search,
    _set_adjacency,
)
from .flow import (
    _flow_with_caps,
    b_matching_size,
    flow_bound,
    tightening_fits,
)

#: Largest cluster sets' LP (rows x columns) built as a dense matrix.
_DENSE_SET_LP = 200_000


def _set_lp(compat: np.ndarray, sets: list, limits: list, iterations: int,
            stop_at: Optional[float] = None) -> Optional[float]:  # fmt: skip
    """Dual bound of ``max sum x``: task rows, and ``sum_{j in W} sum_i x[i,j] <= beta_W``.

    Tasks that fit the same clusters are interchangeable here, so the LP is solved with one
    column per (such a group, cluster), bounded by the group's size, and one row per group
    (its size): the same optimum (split a group's column evenly among its tasks), a few
    dozen columns instead of one per compatible pair on the paper's instances. The bound
    is judged from the prices as in :func:`lp_bound`, each column's excess weighted by its
    upper bound.
    """
    fits = compat.any(axis=1)
    if not fits.any():
        return 0.0
    groups, sizes = np.unique(compat[fits], axis=0, return_counts=True)
    gi, cj = np.nonzero(groups)
    nv = int(gi.size)
    n_groups = groups.shape[0]
    member = np.zeros((len(sets), compat.shape[1]), dtype=bool)  # member[r, j]: j in set r
    for r, W in enumerate(sets):
        member[r, np.asarray(W, dtype=np.int64)] = True
    if (n_groups + len(sets)) * nv <= _DENSE_SET_LP:  # small: a dense matrix, built at once
        A = np.zeros((n_groups + len(sets), nv))
        A[gi, np.arange(nv)] = 1.0
        A[n_groups:] = member[:, cj]
    else:
        sr, sc = np.nonzero(member[:, cj])
        A = sp.csr_array(
            (np.ones(nv + sr.size), (np.concatenate([gi, n_groups + sr]),
                                     np.concatenate([np.arange(nv), sc]))),
            shape=(n_groups + len(sets), nv),
        )  # fmt: skip
    upper = np.concatenate([sizes.astype(np.float64), np.asarray(limits, dtype=np.float64)])
    col_upper = sizes[gi].astype(np.float64)
    y, _ = _solve_dual(A, upper, iterations, solver="simplex", stop_at=stop_at,
                       col_upper=col_upper)  # fmt: skip
    if y is None:
        return None
    value = _dual_value(A, upper, y, col_upper)
    return value if math.isfinite(value) else None


@filled
@checked("coalloc.ctaap.constraints", "bounds.cluster_set_bound", tables="FUNCTIONS")
def cluster_set_bound(
    request: Request,
    offer: Offer,
    *,
    effort: float = 1.0,
    max_set_size: int = 2,
    stop_at: Optional[float] = None,
    at_least: int = 0,
) -> dict:
    """An upper bound from the cluster sets that can host tasks together (dense requests).

    The tasks a feasible allocation places on a set ``W`` of clusters form, as
    ``(task, cluster)`` pairs, a clique of the compatibility graph of ``W`` (pairs of
    different tasks that constraint (4) lets sit together; constraint (3) decides the
    vertices) with at most ``cap[j]`` pairs of each cluster ``j``. So ``beta_W``, the
    largest such capped clique (or any upper bound on it), bounds the tasks on ``W``. For
    every single cluster, then every pair (then triple ... up to ``max_set_size``) a branch
    and bound with colouring bounds (:func:`capped_clique`) computes ``beta_W`` within
    ``effort * CLIQUE_WORK`` vertices coloured (twice that for a single cluster); a search
    cut short still gives a valid ``beta_W``, the same on every run. The
    bound is the LP ``max sum x`` over the compatible pairs with one row per task and
    ``sum_{j in W} sum_i x[i,j] <= beta_W``, judged by its dual (as :func:`lp_bound`),
    rounded down, capped by the flow bound.

    On complete request graphs (the paper's Fig. 3) a cluster whose own bandwidth is low
    holds a small clique of the task graph, far below its machine count, and two clusters
    linked by a low bandwidth cannot both be full; the flow bound and the star-clique LP
    see neither.

    Parameters
    ----------
    %(ctaap_pair)s
    effort : float, default 1
        Multiplies the work caps of the searches and of the LP.
    max_set_size : int, default 2
        Largest cluster set searched.
    %(bound_stop_at)s
    %(bound_at_least)s

    Returns
    -------
    dict
        ``bound`` (int, valid upper bound, never above the flow bound), ``flow``,
        ``sets`` (list of ``(clusters, best, beta, seconds)``: the largest capped clique
        found, the bound used and the search's time), ``status`` (``"optimal"`` when
        every search finished, ``"work_limit"`` when one stopped at its cap,
        ``"met"`` (``at_least``), ``"trivial"``), ``seconds``; ``lp_skipped`` (why) when,
        under a ``stop_at``, the sets' LP was not started (HiGHS not loaded yet and less
        time left than its import): ``bound`` is then the flow with the single clusters'
        bounds as capacities.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import cluster_set_bound
    >>> request, offer = ct.generators.fig3(60, seed=2)
    >>> info = cluster_set_bound(request, offer)
    >>> info["bound"] <= info["flow"], info["status"]
    (True, 'optimal')
    """
    from itertools import combinations

    check_compatible(request, offer)
    # the values were checked by the table (FUNCTIONS, @checked); these only fix their types
    effort, max_set_size, at_least = float(effort), int(max_set_size), int(at_least)
    t0 = time.perf_counter()
    allowed = max(1, int(round(effort * CLIQUE_WORK)))
    if not tightening_fits(request, offer, stop_at):
        raise BoundStopped()  # its first pass over the links would end past stop_at
    flow = int(flow_bound(request, offer))
    _poll(stop_at)
    out = {"bound": flow, "flow": flow, "sets": [], "status": "trivial", "seconds": 0.0}
    m = offer.m
    compat = compatibility(request, offer)
    if flow == 0 or request.bandwidth.nnz == 0:
        return _timed(out, t0)
    cap = tightened_capacity(request, offer, compat)
    used = [j for j in range(m) if compat[:, j].any() and cap[j] > 0]
    beta: dict = {}
    finished = True
    sets = _SetSearch(request, offer, compat, cap, beta, stop_at)
    top = float(request.bandwidth.max()) if request.bandwidth.nnz else 0.0
    bhat = offer.bandwidth
    if flow <= at_least:
        return _timed(out, t0, "met")
    for size in range(1, min(max_set_size, len(used)) + 1):
        if size == 2 and at_least:  # the singles' flow, the LP of their rows: met already?
            singles = b_matching_size(compat, [beta.get((j,), 0) for j in range(m)])
            if singles <= at_least:
                out["bound"] = int(min(flow, singles))
                return _timed(out, t0, "met")
        todo = list(combinations(used, size))
        if size > 1:  # links with no conflict gain nothing over the sums of smaller sets
            todo = [W for W in todo if min(bhat[j, l] for j in W for l in W if j != l) < top]
            todo.sort(key=lambda W: min(bhat[j, l] for j in W for l in W if j != l))
        for W in todo:
            now = time.perf_counter()
            best, done = sets.bound(W, 2 * allowed if size == 1 else allowed)  # singles: more
            finished &= done
            if best is not None:
                out["sets"].append((W, int(best), beta[W],
                                    round(time.perf_counter() - now, 3)))  # fmt: skip
    return _combined(out, compat, beta, finished, effort, stop_at, t0)


class _SetSearch:
    """The bounds ``beta_W`` of :func:`cluster_set_bound`, one cluster set at a time, into
    ``beta`` (the smaller sets' bounds, read by the larger ones), with the request as a
    dense matrix (once, when it is dense and small enough) and the cluster pairs'
    adjacency blocks (each computed once) shared between the sets."""

    def __init__(self, request: Request, offer: Offer, compat: np.ndarray, cap: np.ndarray,
                 beta: dict, stop_at: Optional[float]) -> None:  # fmt: skip
        self.request, self.offer, self.compat, self.cap = request, offer, compat, cap
        self.beta, self.stop_at = beta, stop_at
        self.blocks: dict = {}
        self.dense = None
        n = request.n
        if request.bandwidth.nnz >= DENSE_FRACTION * n * (n - 1) and n <= 4000:
            self.dense = request.bandwidth.toarray()

    def _smaller_sets(self, W: tuple) -> float:
        """The bound the smaller sets give ``W``: its singles' (or capacities') sum, or the
        least sum of a part's and the rest's bounds."""
        from itertools import combinations

        beta, cap = self.beta, self.cap
        simple = sum(beta.get((j,), cap[j]) for j in W)
        for s in range(1, len(W)):  # the sums of smaller sets' bounds
            for part in combinations(W, s):
                rest = tuple(j for j in W if j not in part)
                if part in beta and rest in beta:
                    simple = min(simple, beta[part] + beta[rest])
        return simple

    def bound(self, W: tuple, budget: int) -> tuple:
        """Set ``beta[W]``; ``(best, finished)``: the largest capped clique found (None
        when the set has too many vertices to search: then ``beta[W]`` is the smaller
        sets' bound) and whether the search ended within its ``budget``."""
        beta, compat = self.beta, self.compat
        simple = self._smaller_sets(W)
        nv = int(compat[:, list(W)].sum())
        _poll(self.stop_at)
        if nv > _MAX_SET_VERTICES:
            beta[W] = simple
            return None, False
        caps = [beta.get((j,), self.cap[j]) for j in W]  # singles' bounds cap the parts
        adj, group = _set_adjacency(self.request, self.offer, compat, list(W), self.dense,
                                    self.blocks, self.stop_at)  # fmt: skip
        counts = np.bincount(group, minlength=2)
        work = max(counts[0] ** 2 * counts[1], counts[1] ** 2 * counts[0])
        if len(W) == 2 and work <= _MAX_COUNT_WORK:
            simple = min(simple, _pair_count_bound(adj, group, tuple(caps), self.stop_at))
        _poll(self.stop_at)
        found = _greedy_clique(adj, group, caps, self.stop_at)
        finished = True
        if found >= min(simple, sum(caps), nv):  # the greedy clique meets a bound
            best = upper = found
        else:
            search = _search(adj, group, caps, budget, found, self.stop_at)
            best, upper = search.run()
            finished = not search.stopped
        beta[W] = int(min(simple, upper))
        return best, finished


def _combined(out: dict, compat: np.ndarray, beta: dict, finished: bool, effort: float,
              stop_at: Optional[float], t0: float) -> dict:  # fmt: skip
    """The cluster sets' bound from their ``beta``: the flow with the singles' bounds as
    capacities when no larger set says more, else the LP of their rows (:func:`_set_lp`)."""
    flow, m = out["flow"], compat.shape[1]
    singles = [beta.get((j,), 0) for j in range(m)]
    status = "optimal" if finished else "work_limit"
    if all(beta[W] >= sum(beta[(j,)] for j in W) for W in beta if len(W) > 1):
        # no larger set's bound below its singles' sum: the LP is the flow with the singles'
        # bounds as capacities (a bipartite b-matching LP has whole optima)
        out["bound"] = int(min(flow, _flow_with_caps(compat, singles)))
        return _timed(out, t0, status)
    sets = [list(W) for W in beta]
    limits = [beta[W] for W in beta]
    skipped = lp_skip(0, 0, "simplex", stop_at)  # a few dozen columns: HiGHS's import only
    if skipped is not None:  # under a time limit only: the singles' flow, and why
        out["bound"] = min(flow, _flow_with_caps(compat, singles))
        out["lp_skipped"] = f"the cluster sets' LP: {skipped}"
        return _timed(out, t0, status)
    try:
        value = _set_lp(compat, sets, limits, max(1, int(round(effort * SET_LP_ITERATIONS))),
                        stop_at)  # fmt: skip
    except BoundStopped:
        raise
    except Exception as exc:  # the flow bound stays valid
        return _timed(out, t0, f"error: {type(exc).__name__}: {exc}")
    if value is not None:
        out["bound"] = int(min(flow, math.floor(value + 1e-6)))
    else:  # no LP answer in time: the flow bound with the singles' bounds as capacities
        out["bound"] = min(flow, _flow_with_caps(compat, singles))
    return _timed(out, t0, status)
