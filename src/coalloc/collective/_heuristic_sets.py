"""Heuristic sets of ``N`` nodes at one start, for the scan: greedy starting sets for its
swaps, and, when ``N`` and the eligible nodes are many ("Large N" in ``docs/collective.md``),
weighted-sum (Lagrangian) top-``N`` sets that can also prove a start infeasible, a
one-at-a-time fill and the swaps on a shortlist that raise the factor. The exact decisions
(integer program, enumeration) are in :mod:`._exact_sets`.

Every function is deterministic (ties: the lower row) and takes the eligible rows of one start:
available amounts ``a`` (rows x m), window maxima ``tm``, capacities ``cp``, totals ``d`` and
their thresholds ``dlo`` (``d`` less the tolerance), ``n`` = ``N``.
"""

from __future__ import annotations

from typing import List, Tuple

import numpy as np

from .core import Kernels, factor, ratio

Array = np.ndarray

__all__ = ["greedy_starts", "top_rows", "lagrange", "fill", "large_search", "improve"]


def greedy_starts(avail: Array, tmax: Array, cap: Array, d: Array, n: int,
                  e: Array) -> List[Array]:  # fmt: skip
    """Greedy starting sets (row indices): best coverage, tightest fit overall and tightest
    fit on each property."""
    need = np.maximum(d / n, e)
    cover = np.minimum(ratio(avail, need[None, :]), 1.0).sum(axis=1) + 1e-9 * avail.sum(axis=1)
    out = [np.argsort(-cover, kind="stable")[:n]]
    fits = np.all(avail >= need[None, :], axis=1)
    per = ratio(tmax + need[None, :], cap)
    tight = np.prod(per, axis=1)
    out.append(np.argsort(-np.where(fits, tight, tight - 1e9), kind="stable")[:n])
    if per.shape[1] > 1:
        for i in range(per.shape[1]):
            out.append(np.argsort(-np.where(fits, per[:, i], per[:, i] - 1e9), kind="stable")[:n])
    return out


#: Subgradient steps of :func:`lagrange` per start.
LAGRANGE_STEPS = 40
#: Nodes outside the set offered to the factor's swaps in :func:`improve`, and their rounds.
SHORTLIST = 256
IMPROVE_ROUNDS = 32


def top_rows(score: Array, n: int) -> Array:
    """The ``n`` rows of largest ``score`` (ties: the lower row), as sorted row indices."""
    if n >= score.size:
        return np.arange(score.size)
    part = np.argpartition(-score, n - 1, kind="introselect")[:n]
    # ties at the cut: the lowest rows among the equal scores, so the answer is deterministic
    cut = score[part].min()
    above = np.flatnonzero(score > cut)
    at = np.flatnonzero(score == cut)[: n - above.size]
    return np.sort(np.concatenate([above, at]))


def lagrange(a: Array, d: Array, dlo: Array, n: int,
             steps: int = LAGRANGE_STEPS) -> Tuple[str, List[Array], int]:  # fmt: skip
    """Decide "is there a set of ``n`` rows of ``a`` whose sums reach ``dlo``" by weighted
    sums, without an integer program where possible.

    For weights ``lam >= 0`` on the properties (scaled by ``d``) the ``n`` rows of largest
    ``sum_i lam_i a_ij / d_i`` maximise that weighted sum over every set of ``n`` rows: when
    its maximum misses ``sum_i lam_i dlo_i / d_i`` no set meets every total (a proof: an
    admissible set would reach it); when the top rows meet every total they are a set. The
    weights follow a projected subgradient from equal weights (the LP dual of the
    relaxation), towards the properties the top rows miss.

    Returns
    -------
    verdict : {"feasible", "infeasible", "unknown"}
    sets : list of ndarray
        The admissible sets met on the way (row indices).
    steps : int
    """
    pos = d > 0  # a property with no total (d = 0) is met by any set
    if not np.any(pos):
        return "feasible", [np.arange(n)], 0
    g = a[:, pos] / d[pos][None, :]
    b = dlo[pos] / d[pos]
    k = g.shape[1]
    lam = np.full(k, 1.0 / k)
    sets, seen = [], set()
    step = 1.0
    for it in range(steps):
        score = g @ lam
        rows = top_rows(score, n)
        key = rows.tobytes()
        sums = a[rows].sum(axis=0)
        if np.all(sums >= dlo):
            if key not in seen:
                sets.append(rows)
            return "feasible", sets, it + 1
        seen.add(key)
        top = float(score[rows].sum())
        bound = float(lam @ b)
        # rounding of the weighted sums is far below this margin (relative 1e-12)
        margin = 1e-12 * (abs(top) + abs(bound) + float(np.abs(g[rows]).sum(axis=0) @ lam))
        if top + margin < bound:
            return "infeasible", sets, it + 1
        slack = g[rows].sum(axis=0) - b  # a subgradient of max_S lam . (g_S - b)
        lam = lam - step * slack / max(float(np.abs(slack).max()), 1e-300)
        lam = np.maximum(lam, 0.0)
        if lam.sum() <= 0:
            lam = (slack < 0).astype(np.float64)
        lam = lam / lam.sum()
        step *= 0.85
    return "unknown", sets, steps


def fill(a: Array, d: Array, dlo: Array, n: int) -> Array:
    """A set of ``n`` rows chosen one at a time, each covering the most of what the totals
    still miss (scaled by ``d``; ties: the larger scaled sum, then the lower row)."""
    pos = d > 0
    g = a[:, pos] / d[pos][None, :]
    rem = dlo[pos] / d[pos]
    free = np.ones(a.shape[0], dtype=bool)
    total = g.sum(axis=1)
    rows = []
    for _ in range(n):
        cover = np.minimum(g, np.maximum(rem, 0.0)[None, :]).sum(axis=1)
        key = np.where(free, cover + 1e-9 * total / max(float(total.max()), 1e-300), -np.inf)
        j = int(np.argmax(key))
        rows.append(j)
        free[j] = False
        rem = rem - g[j]
    return np.sort(np.array(rows, dtype=np.int64))


def large_search(a: Array, tm: Array, cp: Array, d: Array, n: int, e: Array,
                 dlo: Array) -> Tuple[str, List[Array], int]:  # fmt: skip
    """A start's set when ``n`` and the eligible nodes are many: the greedy starting sets of
    :func:`greedy_starts` that already meet every total, then :func:`lagrange` (which can also
    prove that no set exists), then :func:`fill`. Returns ``(verdict, sets, steps)``; no
    set and no proof: the caller's integer program decides."""
    cands = [r for r in greedy_starts(a, tm, cp, d, n, e) if np.all(a[r].sum(axis=0) >= dlo)]
    verdict, sets, k = lagrange(a, d, dlo, n)
    if verdict == "infeasible":
        return verdict, [], k
    cands += sets
    if not cands and np.any(d > 0):
        rows = fill(a, d, dlo, n)
        if np.all(a[rows].sum(axis=0) >= dlo):
            cands.append(rows)
    return ("feasible" if cands else verdict), cands, k


def improve(ker: Kernels, a: Array, tm: Array, cp: Array, d: Array, dlo: Array, tol: Array,
            cands: List[Array], max_rounds: int) -> Tuple[Array, int]:  # fmt: skip
    """The best factor of the admissible ``cands``, raised by the compiled swaps among the
    set and a shortlist of the :data:`SHORTLIST` tightest-fitting other nodes
    (:data:`IMPROVE_ROUNDS` rounds at most): a cost that grows with ``N``, not with the pool.
    Returns ``(rows, rounds)``."""
    us = [factor(d, tm[r], cp[r]) for r in cands]
    best = np.asarray(cands[int(np.argmax(us))], dtype=np.int64)
    inside = np.zeros(a.shape[0], dtype=bool)
    inside[best] = True
    per = ratio(tm, cp).sum(axis=1)  # busy nodes first: they waste the least
    outside = np.flatnonzero(~inside)
    order = outside[np.argsort(-per[outside], kind="stable")[:SHORTLIST]]
    short = np.concatenate([best, order])
    r, k = ker.swap_search(a[short], tm[short], cp[short], d, np.arange(best.size),
                           min(max_rounds, IMPROVE_ROUNDS), tol)  # fmt: skip
    rows = short[r]
    if np.all(a[rows].sum(axis=0) >= dlo) and factor(d, tm[rows], cp[rows]) >= max(us):
        return rows, k
    return best, k
