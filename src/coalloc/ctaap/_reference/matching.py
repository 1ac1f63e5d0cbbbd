"""Slow, obviously-correct twin of :mod:`coalloc.ctaap._bmatching` (bipartite b-matching).

The b-matching is written as a plain rectangular assignment problem and handed to
:func:`scipy.optimize.linear_sum_assignment`: one row per task; one column per cluster *slot*
(``capacity[j]`` copies of cluster ``j``) plus ``n`` dummy "unassigned" columns of cost 0.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

__all__ = ["b_matching_reference", "matching_objective"]


def b_matching_reference(weights, allowed, capacity, cardinality_first=True):
    """Maximum-weight bipartite b-matching by expansion into an assignment problem.

    Parameters
    ----------
    weights : array_like of float, shape (n, m)
        Non-negative weight of putting task ``i`` on cluster ``j``.
    allowed : array_like of bool, shape (n, m)
        True where task ``i`` may go to cluster ``j``.
    capacity : array_like of int, shape (m,)
        Maximum number of tasks per cluster (>= 0).
    cardinality_first : bool, default True
        If True, maximise the number of matched tasks first and the total weight second
        (through the cost ``-(K + w)`` with ``K = (2 n + 1) * max(1, max |w|)``, larger than
        the weight difference of any two matchings, which is exact enough for the small sizes
        this twin is meant for); otherwise maximise the total weight only (cost ``-w``).

    Returns
    -------
    ndarray of int64, shape (n,)
        Cluster of each task, or -1 if the task is unassigned.

    Notes
    -----
    The cost matrix has ``n`` rows and ``sum(capacity) + n`` columns.  Disallowed pairs get a
    positive cost; since every row can always take a free dummy column at cost 0, an optimal
    assignment never uses them (they would be mapped to -1 anyway).
    """
    w = np.asarray(weights, dtype=np.float64)
    ok = np.asarray(allowed).astype(bool)
    cap = np.asarray(capacity, dtype=np.int64)
    if w.ndim != 2 or ok.shape != w.shape or cap.shape != (w.shape[1],):
        raise ValueError("weights (n, m), allowed (n, m) and capacity (m,) shapes disagree")
    n, m = w.shape
    out = np.full(n, -1, dtype=np.int64)
    if n == 0 or m == 0 or cap.sum() == 0:
        return out

    slot_cluster = np.repeat(np.arange(m), cap)  # column -> cluster, for the slot columns
    ws = w[:, slot_cluster]  # (n, n_slots)
    if cardinality_first:
        big_k = (2 * n + 1) * max(1.0, float(np.abs(w[ok]).max()) if ok.any() else 0.0)
        gain = big_k + ws
    else:
        gain = ws
    forbidden_cost = 1.0 + float(np.abs(gain).max())
    cost_slots = np.where(ok[:, slot_cluster], -gain, forbidden_cost)
    cost = np.hstack([cost_slots, np.zeros((n, n))])

    rows, cols = linear_sum_assignment(cost)
    for r, c in zip(rows, cols):
        if c < slot_cluster.size and ok[r, slot_cluster[c]]:
            out[r] = slot_cluster[c]
    return out


def matching_objective(assignment, weights):
    """Objective value of an assignment.

    Parameters
    ----------
    assignment : array_like of int, shape (n,)
        Cluster of each task, -1 for unassigned.
    weights : array_like of float, shape (n, m)
        Pair weights.

    Returns
    -------
    n_matched : int
        Number of tasks with a cluster.
    total_weight : float
        Sum of ``weights[i, assignment[i]]`` over the matched tasks.
    """
    a = np.asarray(assignment, dtype=np.int64)
    w = np.asarray(weights, dtype=np.float64)
    used = np.flatnonzero(a >= 0)
    return int(used.size), float(w[used, a[used]].sum())
