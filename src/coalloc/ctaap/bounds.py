"""Upper bounds on the CTAAP optimum tighter than the flow bound.

Two of them, and :func:`best_bound` to pick: the LP of the clique-strengthened
formulation, judged by its dual (:func:`lp_bound`, for sparse requests, below), and the
cluster sets' bound (:func:`cluster_set_bound`, for dense requests: capped maximum cliques
of the compatibility graph of each cluster and each pair of clusters, combined by an LP).

The flow bound (:func:`coalloc.ctaap.upper_bound`) drops constraint (4) between clusters.
This bound keeps it in the strongest cheap linear form. For every stored link
``B[i, k]`` and every cluster ``j`` that ``i`` fits, the clusters ``l`` where placing
``k`` conflicts with ``i`` in ``j`` (``B[i,k] > Bhat[j,l]`` or ``B[k,i] > Bhat[l,j]``)
form, with ``x[i,j]``, a clique of the conflict graph (``k`` sits on one cluster at
most), so::

    x[i,j] + sum_{l in C(i,k,j)} x[k,l] <= 1          (star clique)

is valid, and much stronger than the pairwise rows ``x[i,j] + x[k,l] <= 1``. With the
rows of (1) and (2) (capacities tightened by the flow bound's clique covers) the LP
``max sum x`` over ``0 <= x <= 1`` is solved by HiGHS's first-order PDLP (2.2-4.5x less
CPU than its interior point IPX, same bound, on five sparse requests of 1,000-2,000 tasks;
bench/RESULTS.md, issue 29, third run).

The bound is computed from the LP's *dual*, never from its primal objective: for any row
prices ``y >= 0``, weak duality gives ``sum_r y_r u_r + sum_v max(0, 1 - (A^T y)_v)``
as an upper bound on the LP and so on the optimum, whatever the solver's tolerances or
an early stop left in ``y``. The answer is that value rounded down (allocations are whole
tasks), capped by the flow bound. On sparse requests (mean degree 10) this closes most of
the flow bound's gap; on the paper's complete Fig. 3 requests the flow bound's clique
covers are already the stronger part (bench/RESULTS.md, issue 29).

Reproducible work (issue 36). Every bound here caps its work by counts, never by the
clock: the clique searches by vertices coloured (:data:`CLIQUE_WORK`), the LPs by
iterations (the clique LP's cap scales with its size, :data:`LP_WORK`;
:data:`SET_LP_ITERATIONS` for the cluster sets' LP), all multiplied by ``effort`` (default 1, cheap;
larger is stronger and slower). So the same
call gives the same bound on any machine and under any load. A solve with a time limit
that runs out while a bound is computed drops that bound (it keeps the flow bound, or
none) rather than report a value cut by the clock.

Why over 800 lines: one idea, the upper bounds of the CTAAP optimum that :func:`best_bound`
chooses among; they share the compatibility adjacency, the capped clique search and the
count caps above (a split would pass those between modules at every call).
"""

from __future__ import annotations

import math
import time
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from .._shared import params as checks
from .._shared.docs import FRAGMENTS, fill
from .exact import tightened_capacity
from .model import Offer, Request, check_compatible, compatibility

__all__ = [
    "lp_bound",
    "strong_upper_bound",
    "cluster_set_bound",
    "capped_clique",
    "best_bound",
    "flow_bound",
    "b_matching_size",
    "BoundStopped",
    "CLIQUE_WORK",
    "LP_WORK",
    "LP_ITERATIONS",
    "SET_LP_ITERATIONS",
]

# Largest LP (non-zeros) the bound builds; beyond it the flow bound is returned.
_MAX_NONZEROS = 30_000_000

#: Vertices one capped-clique search of :func:`cluster_set_bound` may colour (its work) at
#: ``effort=1`` (a single cluster's search gets twice as many).
CLIQUE_WORK = 5_000
#: Work of the clique LP (:func:`lp_bound`) at ``effort=1``, in non-zeros x iterations:
#: its iteration cap is ``effort * LP_WORK / nnz`` (at least :data:`LP_MIN_ITERATIONS`,
#: at most :data:`LP_ITERATIONS`), PDLP's on large LPs, the dual simplex's on those of at
#: most :data:`SIMPLEX_NONZEROS` non-zeros. About a second on 5,000 sparse tasks.
LP_WORK = 50_000_000
#: Most iterations of the clique LP at ``effort=1`` (small LPs).
LP_ITERATIONS = 40_000
#: Fewest iterations of the clique LP.
LP_MIN_ITERATIONS = 20
#: Largest clique LP (non-zeros) solved by the simplex method rather than PDLP.
SIMPLEX_NONZEROS = 20_000
#: Simplex iterations of the cluster sets' LP at ``effort=1``.
SET_LP_ITERATIONS = 50_000


#: The docstring fragments of this module's bounds (``%(name)s`` lines,
#: :func:`coalloc._shared.docs.fill`), beside the shared ones: each written once.
_FRAGMENTS = {
    **FRAGMENTS,
    "bound_stop_at": """\
stop_at : float, optional
    A :func:`time.perf_counter` instant after which the call raises
    :class:`BoundStopped` (a solve's deadline); never changes the value returned.""",
    "bound_at_least": """\
at_least : int, default 0
    The size of an allocation known to be feasible (a verified answer's), so a lower
    bound on the optimum: the work stops as soon as the bound meets it (status
    ``"met"``). The value returned is the same as without it (the bound cannot go
    below the optimum; the LP over the singles' rows is the flow with their bounds as
    capacities, and the pairs' rows only lower it).""",
}


def _filled(func):
    """Fill ``func``'s docstring from :data:`_FRAGMENTS` (as ``docs.filled`` does)."""
    if func.__doc__:
        func.__doc__ = fill(func.__doc__, _FRAGMENTS)
    return func


class BoundStopped(Exception):
    """A bound's computation passed the ``stop_at`` instant its caller gave it (a solve's
    deadline): the caller drops the bound instead of reporting a value cut by the clock."""


def _effort(effort: Any) -> float:
    return checks.number(effort, "effort")


def _poll(stop_at: Optional[float]) -> None:
    """Ctrl-C and the caller's scope (:mod:`coalloc._shared.interrupt`), then ``stop_at``."""
    interrupt.check()
    if stop_at is not None and time.perf_counter() >= stop_at:
        raise BoundStopped()


def _star_rows(request: Request, offer: Offer, compat: np.ndarray, var: np.ndarray,
               stop_at: Optional[float] = None):  # fmt: skip
    """Rows ``(row, variable)`` of the star cliques, and their number."""
    B = request.bandwidth.tocoo()
    i_all, k_all, w_all = B.row.astype(np.int64), B.col.astype(np.int64), B.data
    keep = i_all != k_all
    i_all, k_all, w_all = i_all[keep], k_all[keep], w_all[keep]
    if request.symmetric:
        wt_all = w_all
    else:  # B[k, i] for every stored B[i, k] (0 where not stored)
        wt_all = np.asarray(request.bandwidth[k_all, i_all]).reshape(-1)
    bhat = offer.bandwidth
    rows, cols = [], []
    n_rows = 0
    for j in range(offer.m):
        _poll(stop_at)
        sel = compat[i_all, j]
        if not sel.any():
            continue
        i_, k_, w_, wt_ = i_all[sel], k_all[sel], w_all[sel], wt_all[sel]
        bites = (w_[:, None] > bhat[j][None, :]) | (wt_[:, None] > bhat[:, j][None, :])
        conf = compat[k_, :] & bites
        has = conf.any(axis=1)
        if not has.any():
            continue
        i_, k_, conf = i_[has], k_[has], conf[has]
        e, l = np.nonzero(conf)
        rid = n_rows + np.arange(i_.size, dtype=np.int64)
        rows += [rid, rid[e]]
        cols += [var[i_, j], var[k_[e], l]]
        n_rows += int(i_.size)
    return rows, cols, n_rows


@_filled
def lp_bound(
    request: Request,
    offer: Offer,
    *,
    effort: float = 1.0,
    set_rows: Optional[list] = None,
    stop_at: Optional[float] = None,
    at_least: int = 0,
) -> dict:
    """The dual bound of the clique-strengthened LP (module docstring), with its details.

    Parameters
    ----------
    %(ctaap_pair)s
    effort : float, default 1
        Multiplies the LP's iteration cap (``effort * LP_WORK / nnz``, between
        :data:`LP_MIN_ITERATIONS` and ``effort * LP_ITERATIONS``): an LP stopped at its cap
        still gives a valid bound (its current prices), usually a weaker
        one, and the same one on every run.
    set_rows : list of (sequence of int, int), optional
        Extra rows ``sum_{j in W} sum_i x[i,j] <= beta`` for pairs ``(W, beta)``; each
        ``beta`` must bound the tasks any feasible allocation places on the clusters ``W``
        (as :func:`cluster_set_bound` computes them).
    %(bound_stop_at)s
    %(bound_at_least)s

    Returns
    -------
    dict
        ``bound`` (int, valid upper bound on the optimum, never above the flow bound),
        ``flow`` (the flow bound), ``lp`` (the dual value before rounding, or None when the
        LP was not solved), ``status`` (``"optimal"``, ``"iteration_limit"`` (stopped at
        its cap), ``"too_large"``, ``"trivial"``, ``"error"``), ``rows``, ``columns``,
        ``seconds``.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import lp_bound
    >>> request, offer = ct.generators.random_instance(30, 3, edge_probability=0.2, seed=4)
    >>> info = lp_bound(request, offer)
    >>> info["bound"] <= info["flow"], info["status"]
    (True, 'optimal')
    """
    check_compatible(request, offer)
    effort = _effort(effort)
    at_least = checks.integer(at_least, "at_least", 0)
    t0 = time.perf_counter()
    flow = int(flow_bound(request, offer))
    _poll(stop_at)
    out = {"bound": flow, "flow": flow, "lp": None, "status": "trivial", "rows": 0,
           "columns": 0, "seconds": 0.0}  # fmt: skip
    m = offer.m
    compat = compatibility(request, offer)
    if flow == 0 or request.bandwidth.nnz == 0 or flow <= at_least:
        if flow <= at_least and flow > 0 and request.bandwidth.nnz:
            out["status"] = "met"
        return _timed(out, t0)
    # Rough size check before building anything: star rows have at most 1 + m entries.
    if request.bandwidth.nnz * m * (m + 1) > _MAX_NONZEROS * 4:
        return _timed(out, t0, "too_large")
    built = _clique_lp(request, offer, compat, set_rows, stop_at)
    if built is None:
        return _timed(out, t0, "too_large")
    A, upper = built
    out["rows"], out["columns"] = int(A.shape[0]), int(A.shape[1])
    _poll(stop_at)
    small = A.nnz <= SIMPLEX_NONZEROS
    work = effort * LP_WORK / max(1, A.nnz)
    iterations = int(max(LP_MIN_ITERATIONS, min(effort * LP_ITERATIONS, work)))
    try:
        y, status = _solve_dual(A, upper, iterations, solver="simplex" if small else "pdlp",
                                stop_at=stop_at)  # fmt: skip
    except BoundStopped:
        raise
    except Exception as exc:  # the flow bound stays valid
        return _timed(out, t0, f"error: {type(exc).__name__}: {exc}")
    if y is not None:
        value = _dual_value(A, upper, y)
        out["lp"] = value
        if math.isfinite(value):
            out["bound"] = int(min(flow, math.floor(value + 1e-6)))
    return _timed(out, t0, status)


def _timed(out: dict, t0: float, status: Optional[str] = None) -> dict:
    """``out`` with its ``seconds`` since ``t0`` (and its ``status`` when one is given)."""
    if status is not None:
        out["status"] = status
    out["seconds"] = time.perf_counter() - t0
    return out


def _clique_lp(request: Request, offer: Offer, compat: np.ndarray, set_rows,
               stop_at: Optional[float]):  # fmt: skip
    """The clique-strengthened LP ``(A, upper)``: the star cliques' rows, one row per task,
    one per cluster (its tightened capacity) and the ``set_rows``; None when it has more
    than :data:`_MAX_NONZEROS` non-zeros."""
    n, m = request.n, offer.m
    ti, cj = np.nonzero(compat)
    nv = int(ti.size)
    var = np.full((n, m), -1, dtype=np.int64)
    var[ti, cj] = np.arange(nv, dtype=np.int64)
    rows, cols, n_star = _star_rows(request, offer, compat, var, stop_at)
    cap = tightened_capacity(request, offer, compat)
    rows += [n_star + ti, n_star + n + cj]
    cols += [np.arange(nv, dtype=np.int64)] * 2
    extra = []
    for W, beta in set_rows or ():
        sel = np.flatnonzero(np.isin(cj, np.asarray(list(W), dtype=np.int64)))
        rows.append(np.full(sel.size, n_star + n + m + len(extra), dtype=np.int64))
        cols.append(sel)
        extra.append(float(beta))
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    if r.size > _MAX_NONZEROS:
        return None
    n_rows = n_star + n + m + len(extra)
    _poll(stop_at)
    A = sp.csr_array((np.ones(r.size), (r, c)), shape=(n_rows, nv))
    _poll(stop_at)
    A.sum_duplicates()
    A.data[:] = 1.0
    upper = np.concatenate([np.ones(n_star + n), cap.astype(np.float64), np.asarray(extra)])
    return A, upper


def _dual_value(A, upper: np.ndarray, y: np.ndarray, col_upper=None) -> float:
    """The weak-duality bound of ``max 1.x, A x <= upper, 0 <= x <= col_upper`` (1 unless
    given) at the row prices ``y`` (negative or non-finite prices read as 0)."""
    y = np.where(np.isfinite(y), np.maximum(y, 0.0), 0.0)
    reduced = 1.0 - A.T @ y
    if col_upper is None:
        return float(y @ upper + np.maximum(reduced, 0.0).sum())
    return float(y @ upper + (col_upper * np.maximum(reduced, 0.0)).sum())


def _solve_dual(A, upper: np.ndarray, iterations: int, solver: str = "ipx",
                stop_at: Optional[float] = None, col_upper=None):  # fmt: skip
    """Row prices of ``max 1.x, A x <= upper, 0 <= x <= col_upper`` (1 unless given) from
    HiGHS, and a status. ``A``: a SciPy sparse matrix, or a small dense array.

    ``solver``: ``"pdlp"`` (first order: the large star-clique LPs), ``"ipx"`` (interior
    point, no crossover) or ``"simplex"`` (the small cluster-set LPs). ``iterations`` caps
    the solver's iterations (the work, so the prices are the same on every run); HiGHS
    gets the time to ``stop_at`` as a limit only to honour a caller's deadline, and a run
    it stops raises :class:`BoundStopped` (its prices would depend on the clock).
    """
    import highspy

    from .._shared.milp import quiet_highs

    h = quiet_highs()  # no start-up banner on standard output
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", solver)
    h.setOptionValue("run_crossover", "off")
    h.setOptionValue("presolve", "off")  # its work is not capped by the iteration limits
    h.setOptionValue("threads", 1)
    for option in ("pdlp_iteration_limit", "simplex_iteration_limit", "ipm_iteration_limit"):
        h.setOptionValue(option, int(iterations))
    if stop_at is not None:
        left = stop_at - time.perf_counter()
        if left <= 0:
            raise BoundStopped()
        h.setOptionValue("time_limit", float(left))
    nv = A.shape[1]
    lp = highspy.HighsLp()
    lp.num_col_ = nv
    lp.num_row_ = A.shape[0]
    lp.col_cost_ = np.ones(nv)
    lp.col_lower_ = np.zeros(nv)
    lp.col_upper_ = np.ones(nv) if col_upper is None else np.asarray(col_upper, np.float64)
    lp.row_lower_ = np.full(A.shape[0], -highspy.kHighsInf)
    lp.row_upper_ = upper
    if isinstance(A, np.ndarray):  # column by column, rows rising (as a CSC matrix)
        col, row = np.nonzero(A.T)
        start = np.zeros(nv + 1, dtype=np.int32)
        np.cumsum(np.bincount(col, minlength=nv), out=start[1:])
        index, value = row.astype(np.int32), A.T[col, row].astype(np.float64)
    else:
        Ac = A.tocsc()
        start, index = Ac.indptr.astype(np.int32), Ac.indices.astype(np.int32)
        value = Ac.data
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    lp.sense_ = highspy.ObjSense.kMaximize
    h.passModel(lp)
    h.run()
    model_status = h.getModelStatus()
    sol = h.getSolution()
    y = np.asarray(sol.row_dual, dtype=np.float64) if sol.dual_valid else None
    if model_status == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif model_status == highspy.HighsModelStatus.kTimeLimit:
        raise BoundStopped()
    elif model_status == highspy.HighsModelStatus.kIterationLimit:
        status = "iteration_limit"
    else:
        status = f"highs: {h.modelStatusToString(model_status)}"
    if y is not None and y.size != A.shape[0]:
        y = None
    return y, status


@_filled
def strong_upper_bound(request: Request, offer: Offer, *, effort: float = 1.0) -> int:
    """The bound of :func:`best_bound` (the flow bound, the clique LP's or the cluster sets').

    Parameters
    ----------
    %(ctaap_pair)s
    effort : float, default 1
        Multiplies the work caps (:func:`best_bound`).

    Returns
    -------
    int
        A valid upper bound on the number of tasks any feasible allocation places.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import strong_upper_bound
    >>> request, offer = ct.generators.random_instance(30, 3, edge_probability=0.2, seed=4)
    >>> strong_upper_bound(request, offer) <= ct.upper_bound(request, offer)
    True
    """
    return int(best_bound(request, offer, effort=effort)["bound"])


# --------------------------------------------------------------------------------------
# Cluster-set bound: capped maximum cliques of the compatibility graph (issue 29)
# --------------------------------------------------------------------------------------

# Most bytes of adjacency blocks kept over one call of cluster_set_bound.
_BLOCK_BYTES = 64 << 20
# Largest number of (task, cluster) vertices a cluster set's search builds.
_MAX_SET_VERTICES = 6000
# Largest matrix product (multiply-adds) the pair count bound does.
_MAX_COUNT_WORK = 1e10
# Fraction of stored links (of n (n - 1)) from which a request counts as dense.
DENSE_FRACTION = 0.2


def _to_bits(rows: np.ndarray) -> list:
    """Each boolean row as a Python integer bitset (bit v set: column v true)."""
    packed = np.packbits(rows, axis=1, bitorder="little")
    return [int.from_bytes(packed[r].tobytes(), "little") for r in range(rows.shape[0])]


def _lowbit(q: int) -> int:
    return (q & -q).bit_length() - 1


class _CappedClique:
    """Largest clique of a graph with at most ``caps[g]`` vertices of each group ``g``.

    Branch and bound after Tomita's MCQ: at every node the candidates are coloured greedily
    (each colour class is an independent set, so a clique takes at most one vertex of each
    class), and the bound of a node is ``|C| + min(colours(P), sum_g min(caps left,
    colours(P_g)))``. :meth:`run` returns ``(best, upper)``: the largest capped clique found
    and an upper bound on every capped clique, exact (``best == upper``) when the search
    ends within ``max_work`` vertices coloured (its work, counted); a node reached after that
    contributes its colouring bound, so ``upper`` is valid however early the search stops,
    and it is the same on every run. ``stop_at`` (a caller's deadline) raises
    :class:`BoundStopped` instead.
    """

    def __init__(self, adj: list, group: np.ndarray, caps: np.ndarray, max_work: float,
                 stop_at: Optional[float] = None):  # fmt: skip
        self.adj = adj
        # each vertex's non-neighbours without itself, as a mask (one AND per vertex coloured)
        self.away = [~(row | (1 << v)) for v, row in enumerate(adj)]
        self.nv = len(adj)
        self.caps = [int(c) for c in caps]
        self.n_groups = len(self.caps)
        self.group = [int(g) for g in group]
        masks = [0] * self.n_groups
        for v, g in enumerate(self.group):
            masks[g] |= 1 << v
        self.masks = masks
        self.max_work = max_work
        self.stop_at = stop_at
        self.work = 0
        self.best = 0
        self.nodes = 0
        self.stopped = False

    def _colour(self, p: int):
        """Greedy colouring of ``p`` in index order: vertices and colours, colours rising."""
        away = self.away
        verts, cols = [], []
        add_vert, add_col = verts.append, cols.append
        k = 0
        u = p
        work, max_work = self.work, self.max_work  # counted locally, stored back
        while u:
            k += 1
            if work > max_work:
                self.work = work
                self.stopped = True
                return None, None
            q = u  # the colour class grows from the uncoloured vertices, lowest first
            while q:
                work += 1
                if not work & 4095:
                    self.work = work
                    _poll(self.stop_at)
                low = q & -q
                v = low.bit_length() - 1
                q &= away[v]
                u ^= low  # v is in q, a subset of u
                add_vert(v)
                add_col(k)
        self.work = work
        return verts, cols

    def _n_colours(self, p: int) -> Optional[int]:
        """The number of colours :meth:`_colour` gives ``p`` (the same work, counted the
        same way), or None when the work cap is reached first."""
        away = self.away
        k = 0
        u = p
        work, max_work = self.work, self.max_work
        while u:
            k += 1
            if work > max_work:
                self.work = work
                self.stopped = True
                return None
            q = u
            while q:
                work += 1
                if not work & 4095:
                    self.work = work
                    _poll(self.stop_at)
                low = q & -q
                q &= away[low.bit_length() - 1]
                u ^= low
        self.work = work
        return k

    def _group_bound(self, p: int, left: list) -> int:
        total = 0
        for g in range(self.n_groups):
            q = p & self.masks[g]
            if not q or left[g] <= 0:
                continue
            colours = self._n_colours(q)
            if colours is None:
                return sum(left)
            total += min(left[g], colours)
        return total

    def _expand(self, size: int, p: int, left: list) -> int:
        self.nodes += 1
        if not p:
            if size > self.best:
                self.best = size
            return size
        room = sum(x for g, x in enumerate(left) if x > 0 and p & self.masks[g])
        if size + room <= self.best:  # the caps alone close the node
            return size + room
        verts, cols = self._colour(p)
        if cols is None:  # the work cap was reached while colouring
            self.best = max(self.best, size)
            return size + room
        ub = size + cols[-1]
        if self.n_groups > 1:
            ub = min(ub, size + self._group_bound(p, left))
        else:
            ub = min(ub, size + left[0])
        if ub <= self.best:
            return ub
        if self.stopped or self.work > self.max_work:
            self.stopped = True
            if size > self.best:
                self.best = size
            return ub
        res = size  # the clique C itself
        if size > self.best:
            self.best = size
        for t in range(len(verts) - 1, -1, -1):
            v, c = verts[t], cols[t]
            if size + min(c, room) <= self.best:  # every vertex left has a colour <= c
                res = max(res, size + min(c, room))
                break
            g = self.group[v]
            left[g] -= 1
            q = p & self.adj[v]
            if left[g] <= 0:
                q &= ~self.masks[g]
            res = max(res, self._expand(size + 1, q, left))
            left[g] += 1
            p &= ~(1 << v)
        return res

    def run(self) -> tuple:
        import sys

        if self.nv == 0:
            return 0, 0
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 10 * self.nv + 1000))
        try:
            p = (1 << self.nv) - 1
            for g, c in enumerate(self.caps):  # groups without room take no vertex
                if c <= 0:
                    p &= ~self.masks[g]
            upper = self._expand(0, p, list(self.caps))
        finally:
            sys.setrecursionlimit(old)
        return self.best, max(upper, self.best)


def _set_adjacency(request: Request, offer: Offer, compat: np.ndarray, clusters, dense=None,
                   blocks: Optional[dict] = None):  # fmt: skip
    """The compatibility graph of the (task, cluster) pairs of a cluster set.

    Vertices: compatible pairs ``(i, j)``, ``j`` in ``clusters`` (cluster by cluster, tasks
    rising); ``(i, j)`` and ``(k, l)`` are adjacent when ``i != k`` and constraint (4) lets
    ``i`` sit on ``j`` beside ``k`` on ``l`` (``B[i,k] <= Bhat[j,l]`` and
    ``B[k,i] <= Bhat[l,j]``). A feasible allocation's pairs on ``clusters`` are a clique with
    at most ``cap[j]`` vertices of cluster ``j``. Returns the boolean adjacency and the
    position in ``clusters`` of each vertex. ``blocks``: a dict kept by the caller over the
    sets of one instance, the block of each cluster pair ``(j, l)`` computed once (a pair's
    graph repeats its two singles' blocks), up to :data:`_BLOCK_BYTES` in all.
    """
    parts = [np.flatnonzero(compat[:, j]) for j in clusters]
    sizes = [p.size for p in parts]
    nv = int(sum(sizes))
    group = np.repeat(np.arange(len(clusters)), sizes)
    bhat = offer.bandwidth
    B = request.bandwidth

    def part(rows, cols):  # B[rows][:, cols] as a dense array
        return dense[np.ix_(rows, cols)] if dense is not None else B[rows][:, cols].toarray()

    adj = np.zeros((nv, nv), dtype=bool)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    for a, j in enumerate(clusters):  # block by block: bounded temporary memory
        ta = parts[a]
        for b in range(a, len(clusters)):
            l, tb = clusters[b], parts[b]
            block = None if blocks is None else blocks.get((j, l))
            if block is None:
                out_ = part(ta, tb)  # B[i, k]: i on j, k on l
                if request.symmetric:  # B[k, i] = B[i, k]: one comparison
                    block = out_ <= min(bhat[j, l], bhat[l, j])
                else:
                    back = out_ if a == b else part(tb, ta)  # B[k, i]
                    block = (out_ <= bhat[j, l]) & (back.T <= bhat[l, j])
                block &= ta[:, None] != tb[None, :]
                if blocks is not None and blocks.get("bytes", 0) + block.nbytes <= _BLOCK_BYTES:
                    blocks[(j, l)] = block
                    blocks["bytes"] = blocks.get("bytes", 0) + block.nbytes
            adj[starts[a] : starts[a + 1], starts[b] : starts[b + 1]] = block
            adj[starts[b] : starts[b + 1], starts[a] : starts[a + 1]] = block.T
    return adj, group


def _greedy_clique(adj: np.ndarray, group: np.ndarray, caps) -> int:
    """Size of a capped clique grown greedily (largest degree among the candidates first);
    ``adj`` symmetric (degrees are summed over rows, contiguous in memory)."""
    left = np.asarray(caps, dtype=np.int64).copy()
    cand = left[group] > 0
    deg = adj[cand].sum(axis=0, dtype=np.int64)  # neighbours among the candidates
    size = 0
    while cand.any():
        v = int(np.flatnonzero(cand)[int(np.argmax(deg[cand]))])
        size += 1
        left[group[v]] -= 1
        keep = cand & adj[v] & (left[group] > 0)
        gone = cand & ~keep
        deg -= adj[gone].sum(axis=0, dtype=np.int64)
        cand = keep
    return size


def _search(
    adj: np.ndarray, group: np.ndarray, caps, max_work: float, found: int = 0,
    stop_at: Optional[float] = None,
) -> _CappedClique:  # fmt: skip
    """A capped-clique search on ``adj``, vertices by falling degree (the colouring's order);
    ``found``: the size of a capped clique known to exist (pruning starts from it)."""
    order = np.argsort(-adj.sum(axis=1), kind="stable")
    adj = adj[np.ix_(order, order)]
    search = _CappedClique(_to_bits(adj), group[order], np.asarray(caps, np.int64), max_work,
                           stop_at)  # fmt: skip
    search.best = int(found)
    return search


def _pair_count_bound(adj: np.ndarray, group: np.ndarray, beta: tuple) -> int:
    """Bound on a capped clique of a two-cluster graph by the size of its smaller side.

    With ``k`` vertices on side ``b`` the clique's side ``a`` lies in the common
    neighbourhood of any of them: ``k = 0`` gives ``beta_a``; ``k = 1`` gives ``1 +
    min(beta_a, D1)`` with ``D1`` the largest side-``a`` degree of a side-``b`` vertex;
    ``k >= 2`` gives ``beta_b + min(beta_a, D2)`` with ``D2`` the largest common side-``a``
    neighbourhood of two adjacent side-``b`` vertices. The bound is the worst case, taken
    for both choices of ``b``, the smaller kept.
    """
    best = beta[0] + beta[1]
    split = int(np.count_nonzero(group == 0))
    if np.all(group[:split] == 0):  # side 0 first (as _set_adjacency builds it): views
        sides = (slice(0, split), slice(split, group.size))
    else:
        sides = (group == 0, group == 1)
    for b in (0, 1):
        a = 1 - b
        sb, sa = sides[b], sides[a]
        X = adj[sb, sa] if isinstance(sb, slice) else adj[np.ix_(sb, sa)]
        if X.shape[0] == 0:
            best = min(best, beta[a])
            continue
        deg = X.sum(axis=1)
        d1 = int(deg.max()) if deg.size else 0
        cases = [beta[a], min(1, beta[b]) + min(beta[a], d1)]
        if beta[b] >= 2:
            Ab = adj[sb, sb] if isinstance(sb, slice) else adj[np.ix_(sb, sb)]
            if Ab.any():
                d2 = _most_common_neighbours(X, Ab)
                cases.append(beta[b] + min(beta[a], d2))
        best = min(best, max(cases))
    return int(best)


#: Bits set in each byte (numpy < 2 has no bitwise_count).
_BITS_SET = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)
#: Vertex pairs whose common neighbourhoods :func:`_most_common_neighbours` counts at once.
_PAIR_CHUNK = 1 << 16


def _most_common_neighbours(X: np.ndarray, pairs: np.ndarray) -> int:
    """Largest ``|N(u) & N(v)|`` over the pairs ``u < v`` with ``pairs[u, v]``, where
    ``N(u)`` is row ``u`` of the boolean ``X``: bit-packed rows, counted pair by pair (an
    exact count, without the BLAS matrix product ``X X^T``, whose threads contend with the
    machine's other work: 16-40 ms for a 251 x 34 side of a Fig. 3 pair at load 8)."""
    iu, iv = np.nonzero(np.triu(pairs, 1) | np.triu(pairs.T, 1))
    if iu.size == 0:
        return 0
    packed = np.packbits(X, axis=1)
    best = 0
    for at in range(0, iu.size, _PAIR_CHUNK):
        u, v = iu[at : at + _PAIR_CHUNK], iv[at : at + _PAIR_CHUNK]
        both = np.bitwise_and(packed[u], packed[v])
        best = max(best, int(_BITS_SET[both].sum(axis=1, dtype=np.int64).max()))
    return best


def capped_clique(adj_rows: np.ndarray, group: np.ndarray, caps, *, max_work=None) -> tuple:
    """Largest clique with at most ``caps[g]`` vertices of group ``g``: ``(best, upper)``.

    Parameters
    ----------
    adj_rows : ndarray of bool, shape (V, V)
        Symmetric adjacency, no loops.
    group : ndarray of int, shape (V,)
        Group of each vertex, ``0 .. len(caps) - 1``.
    caps : sequence of int
        Most vertices of each group in the clique.
    max_work : int, optional
        Vertices the search may colour (its work; None: no cap); a search stopped at
        the cap returns a valid (possibly larger) ``upper``, the same on every run.

    Returns
    -------
    (int, int)
        The largest capped clique found, and an upper bound on every capped clique (equal
        when the search finished).

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.ctaap.bounds import capped_clique
    >>> adj = np.ones((4, 4), bool) & ~np.eye(4, dtype=bool)      # K4
    >>> capped_clique(adj, np.array([0, 0, 1, 1]), [1, 2])
    (3, 3)
    """
    adj_rows = np.asarray(adj_rows, dtype=bool)
    if adj_rows.ndim != 2 or adj_rows.shape[0] != adj_rows.shape[1]:
        raise ValueError(f"adj_rows must be a square matrix, got shape {adj_rows.shape}")
    group = np.asarray(group, dtype=np.int64)
    caps = np.asarray(caps, dtype=np.int64)
    if group.shape != (adj_rows.shape[0],):
        raise ValueError("group must have one entry per vertex")
    if group.size and (group.min() < 0 or group.max() >= caps.size):
        raise ValueError("group entries must index caps")
    cap = math.inf if max_work is None else checks.integer(max_work, "max_work", 0)
    adj = adj_rows & adj_rows.T
    np.fill_diagonal(adj, False)
    order = np.argsort(-adj.sum(axis=1), kind="stable")
    adj = adj[np.ix_(order, order)]
    return _CappedClique(_to_bits(adj), group[order], caps, cap).run()


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


@_filled
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
        ``"met"`` (``at_least``), ``"trivial"``), ``seconds``.

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
    effort = _effort(effort)
    max_set_size = checks.integer(max_set_size, "max_set_size", 1)
    t0 = time.perf_counter()
    allowed = max(1, int(round(effort * CLIQUE_WORK)))
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
    at_least = checks.integer(at_least, "at_least", 0)
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
                                    self.blocks)  # fmt: skip
        counts = np.bincount(group, minlength=2)
        work = max(counts[0] ** 2 * counts[1], counts[1] ** 2 * counts[0])
        if len(W) == 2 and work <= _MAX_COUNT_WORK:
            simple = min(simple, _pair_count_bound(adj, group, tuple(caps)))
        found = _greedy_clique(adj, group, caps)
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


# Largest star-clique LP (stored links x m x (m + 1)) added to the cluster sets' rows.
_SMALL_LP = 2_000_000
#: Least ``effort`` at which :func:`best_bound` adds the clique LP to the cluster sets'
#: bound on dense requests (it costs more than the default solve there).
DENSE_LP_EFFORT = 2.0


def is_dense(request: Request) -> bool:
    """Whether a request stores at least :data:`DENSE_FRACTION` of all ordered task pairs."""
    n = request.n
    return n >= 2 and request.bandwidth.nnz >= DENSE_FRACTION * n * (n - 1)


@_filled
def best_bound(
    request: Request,
    offer: Offer,
    *,
    effort: float = 1.0,
    stop_at: Optional[float] = None,
    at_least: int = 0,
) -> dict:
    """The tightest proven bound this module computes with the work ``effort`` allows.

    Sparse requests: the clique LP (:func:`lp_bound`). Dense requests (at least
    :data:`DENSE_FRACTION` of the task pairs linked, as in the paper's Fig. 2 and Fig. 3):
    the cluster sets' bound (:func:`cluster_set_bound`); with ``effort`` of at least
    :data:`DENSE_LP_EFFORT`, and when the star-clique LP is small (at most 2e6 links x m x
    (m + 1)), then that LP with the cluster sets' rows added (on Fig. 2 instances it is
    1.2 % tighter in total, at 2-3x the cluster sets' time). The work is capped by counts
    (module docstring), so the bound is a function of the instance and ``effort`` alone:
    the same on every run, on any machine, under any load.

    Parameters
    ----------
    %(ctaap_pair)s
    effort : float, default 1
        Multiplies every work cap (vertices coloured by the clique searches, LP
        iterations): 1 is cheap
        (on the paper's 50-task Fig. 2 instances, about the default solve's own time); 10
        or 100 search further for a tighter bound, at up to that many times the cost.
    stop_at : float, optional
        A :func:`time.perf_counter` instant after which the call raises
        :class:`BoundStopped` (a solve's deadline): the caller then drops the bound rather
        than report one cut by the clock.

    %(bound_at_least)s

    Returns
    -------
    dict
        As :func:`lp_bound` (``bound``, ``flow``, ``status``, ``seconds``, ...) with ``kind``:
        ``"clique LP"``, ``"cluster sets"`` or ``"cluster sets + clique LP"``, and
        ``effort``.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> from coalloc.ctaap.bounds import best_bound
    >>> request, offer = ct.generators.fig3(60, seed=2)
    >>> info = best_bound(request, offer)
    >>> info["kind"], info["bound"] <= info["flow"]
    ('cluster sets', True)
    >>> best_bound(request, offer, effort=10)["kind"]
    'cluster sets + clique LP'
    >>> best_bound(request, offer)["bound"] == info["bound"]       # the same, every run
    True
    """
    check_compatible(request, offer)
    effort = _effort(effort)
    if not is_dense(request):
        info = lp_bound(request, offer, effort=effort, stop_at=stop_at, at_least=at_least)
        return {**info, "kind": "clique LP", "effort": effort}
    t0 = time.perf_counter()
    m = offer.m
    small_lp = request.bandwidth.nnz * m * (m + 1) <= _SMALL_LP
    info = cluster_set_bound(request, offer, effort=effort, stop_at=stop_at, at_least=at_least)
    out = {**info, "kind": "cluster sets", "effort": effort}
    if (small_lp and effort >= DENSE_LP_EFFORT and info["flow"] > 0 and info["bound"] > 0
            and info["bound"] > at_least):  # fmt: skip
        rows = [(W, beta) for W, _, beta, _ in info["sets"]]
        lp = lp_bound(request, offer, effort=effort, set_rows=rows, stop_at=stop_at)
        if lp["bound"] <= out["bound"]:
            out["bound"] = int(lp["bound"])
            out["kind"] = "cluster sets + clique LP"
            out["lp"] = lp["lp"]
    out["seconds"] = time.perf_counter() - t0
    return out
