"""An upper bound on the CTAAP optimum tighter than the flow bound: the LP of the
clique-strengthened formulation, judged by its dual.

The flow bound (:func:`coalloc.ctaap.upper_bound`) drops constraint (4) between clusters.
This bound keeps it in the strongest cheap linear form. For every stored link
``B[i, k]`` and every cluster ``j`` that ``i`` fits, the clusters ``l`` where placing
``k`` conflicts with ``i`` in ``j`` (``B[i,k] > Bhat[j,l]`` or ``B[k,i] > Bhat[l,j]``)
form, with ``x[i,j]``, a clique of the conflict graph (``k`` sits on one cluster at
most), so::

    x[i,j] + sum_{l in C(i,k,j)} x[k,l] <= 1          (star clique)

is valid, and much stronger than the pairwise rows ``x[i,j] + x[k,l] <= 1``. With the
rows of (1) and (2) (capacities tightened by the flow bound's clique covers) the LP
``max sum x`` over ``0 <= x <= 1`` is solved by HiGHS (interior point, no crossover).

The bound is computed from the LP's *dual*, never from its primal objective: for any row
prices ``y >= 0``, weak duality gives ``sum_r y_r u_r + sum_v max(0, 1 - (A^T y)_v)``
as an upper bound on the LP and so on the optimum, whatever the solver's tolerances or
an early stop left in ``y``. The answer is that value rounded down (allocations are whole
tasks), capped by the flow bound. On sparse requests (mean degree 10) this closes most of
the flow bound's gap; on the paper's complete Fig. 3 requests the flow bound's clique
covers are already the stronger part (bench/RESULTS.md, issue 29).
"""

from __future__ import annotations

import math
import time
from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared import params as checks
from .exact import tightened_capacity, upper_bound
from .model import Offer, Request, check_compatible, compatibility

__all__ = ["lp_bound", "strong_upper_bound"]

# Largest LP (non-zeros) the bound builds; beyond it the flow bound is returned.
_MAX_NONZEROS = 30_000_000


def _star_rows(request: Request, offer: Offer, compat: np.ndarray, var: np.ndarray):
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


def lp_bound(request: Request, offer: Offer, *, time_limit: Optional[float] = None) -> dict:
    """The dual bound of the clique-strengthened LP (module docstring), with its details.

    Parameters
    ----------
    request : Request
    offer : Offer
    time_limit : float, optional
        Seconds for the whole call, building the LP included (HiGHS gets what is left;
        with less than 10 ms left the flow bound is returned, status ``"time_limit"``).
        An LP stopped early still gives a valid bound (its current prices), usually a
        weaker one.

    Returns
    -------
    dict
        ``bound`` (int, valid upper bound on the optimum, never above the flow bound),
        ``flow`` (the flow bound), ``lp`` (the dual value before rounding, or None when the
        LP was not solved), ``status`` (``"optimal"``, ``"time_limit"``, ``"too_large"``,
        ``"trivial"``, ``"error"``), ``rows``, ``columns``, ``seconds``.

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
    limit = checks.time_limit(time_limit)
    t0 = time.perf_counter()
    flow = int(upper_bound(request, offer))
    out = {"bound": flow, "flow": flow, "lp": None, "status": "trivial", "rows": 0,
           "columns": 0, "seconds": 0.0}  # fmt: skip
    n, m = request.n, offer.m
    compat = compatibility(request, offer)
    if flow == 0 or request.bandwidth.nnz == 0:
        out["seconds"] = time.perf_counter() - t0
        return out
    # Rough size check before building anything: star rows have at most 1 + m entries.
    if request.bandwidth.nnz * m * (m + 1) > _MAX_NONZEROS * 4:
        out["status"] = "too_large"
        out["seconds"] = time.perf_counter() - t0
        return out
    ti, cj = np.nonzero(compat)
    nv = int(ti.size)
    var = np.full((n, m), -1, dtype=np.int64)
    var[ti, cj] = np.arange(nv, dtype=np.int64)
    rows, cols, n_star = _star_rows(request, offer, compat, var)
    cap = tightened_capacity(request, offer, compat)
    rows += [n_star + ti, n_star + n + cj]
    cols += [np.arange(nv, dtype=np.int64)] * 2
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    if r.size > _MAX_NONZEROS:
        out["status"] = "too_large"
        out["seconds"] = time.perf_counter() - t0
        return out
    n_rows = n_star + n + m
    A = sp.csr_array((np.ones(r.size), (r, c)), shape=(n_rows, nv))
    A.sum_duplicates()
    A.data[:] = 1.0
    upper = np.concatenate([np.ones(n_star + n), cap.astype(np.float64)])
    out["rows"], out["columns"] = int(n_rows), nv
    if limit is not None:
        limit = limit - (time.perf_counter() - t0)
        if limit < 0.01:
            out["status"] = "time_limit"
            out["seconds"] = time.perf_counter() - t0
            return out
    try:
        y, status = _solve_dual(A, upper, limit)
    except Exception as exc:  # the flow bound stays valid
        out["status"] = f"error: {type(exc).__name__}: {exc}"
        out["seconds"] = time.perf_counter() - t0
        return out
    if y is not None:
        y = np.where(np.isfinite(y), np.maximum(y, 0.0), 0.0)
        reduced = 1.0 - A.T @ y
        value = float(y @ upper + np.maximum(reduced, 0.0).sum())
        out["lp"] = value
        if math.isfinite(value):
            out["bound"] = int(min(flow, math.floor(value + 1e-6)))
    out["status"] = status
    out["seconds"] = time.perf_counter() - t0
    return out


def _solve_dual(A: sp.csr_array, upper: np.ndarray, limit: Optional[float]):
    """Row prices of ``max 1.x, A x <= upper, 0 <= x <= 1`` from HiGHS (IPM), and a status."""
    import highspy

    from .._shared.milp import quiet_highs

    h = quiet_highs()  # no start-up banner on standard output
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", "ipx")  # interior point (HiPO and PDLP were slower here)
    h.setOptionValue("run_crossover", "off")
    h.setOptionValue("threads", 1)
    if limit is not None:
        h.setOptionValue("time_limit", float(limit))
    nv = A.shape[1]
    lp = highspy.HighsLp()
    lp.num_col_ = nv
    lp.num_row_ = A.shape[0]
    lp.col_cost_ = np.ones(nv)
    lp.col_lower_ = np.zeros(nv)
    lp.col_upper_ = np.ones(nv)
    lp.row_lower_ = np.full(A.shape[0], -highspy.kHighsInf)
    lp.row_upper_ = upper
    Ac = A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = Ac.indptr.astype(np.int32)
    lp.a_matrix_.index_ = Ac.indices.astype(np.int32)
    lp.a_matrix_.value_ = Ac.data
    lp.sense_ = highspy.ObjSense.kMaximize
    h.passModel(lp)
    h.run()
    model_status = h.getModelStatus()
    sol = h.getSolution()
    y = np.asarray(sol.row_dual, dtype=np.float64) if sol.dual_valid else None
    if model_status == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif model_status == highspy.HighsModelStatus.kTimeLimit:
        status = "time_limit"
    else:
        status = f"highs: {h.modelStatusToString(model_status)}"
    if y is not None and y.size != A.shape[0]:
        y = None
    return y, status


def strong_upper_bound(
    request: Request, offer: Offer, *, time_limit: Optional[float] = None
) -> int:
    """The tighter of the flow bound and the clique LP's dual bound (:func:`lp_bound`).

    Parameters
    ----------
    request : Request
    offer : Offer
    time_limit : float, optional
        Seconds for the LP solver.

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
    return int(lp_bound(request, offer, time_limit=time_limit)["bound"])
