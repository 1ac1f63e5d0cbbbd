"""The clique LP (:func:`lp_bound`): star cliques of constraint (4) between clusters, judged by
its dual (the package docstring), for sparse requests.
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
    _MAX_NONZEROS,
    LP_ITERATIONS,
    LP_MIN_ITERATIONS,
    LP_WORK,
    SIMPLEX_NONZEROS,
    BoundStopped,
    _dual_value,
    _poll,
    _solve_dual,
    _timed,
    lp_skip,
)
from .flow import (
    flow_bound,
    tightening_fits,
)


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


@filled
@checked("coalloc.ctaap.constraints", "bounds.lp_bound", tables="FUNCTIONS")
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
        its cap), ``"too_large"``, ``"trivial"``, ``"error"``, ``"lp_skipped"``: under a
        ``stop_at`` whose time left cannot hold the LP's predicted time, the LP is not
        started and ``bound`` is the flow bound, with the reason in ``lp_skipped``,
        :func:`~coalloc.ctaap.bounds._common.lp_skip`), ``rows``, ``columns``,
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
    # the values were checked by the table (FUNCTIONS, @checked); these only fix their types
    effort, at_least = float(effort), int(at_least)
    t0 = time.perf_counter()
    if not tightening_fits(request, offer, stop_at):
        raise BoundStopped()  # its first pass over the links would end past stop_at
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
    solver = "simplex" if small else "pdlp"
    skipped = lp_skip(int(A.nnz), iterations, solver, stop_at)
    if skipped is not None:  # under a time limit only: the flow bound, and why
        out["lp_skipped"] = f"the clique LP ({solver}, {A.nnz} non-zeros): {skipped}"
        return _timed(out, t0, "lp_skipped")
    try:
        y, status = _solve_dual(A, upper, iterations, solver=solver, stop_at=stop_at)
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
