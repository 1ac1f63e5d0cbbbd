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

from typing import List, Optional, Tuple

import numpy as np

from .._shared import lazyimport
from .core import Kernels, factor, ratio

Array = np.ndarray

__all__ = ["greedy_starts", "first_rows", "top_rows", "lagrange", "proves_empty", "proven_by",
           "dual_cuts", "repair", "large_search", "improve"]


def greedy_starts(avail: Array, tmax: Array, cap: Array, d: Array, n: int,
                  e: Array) -> List[Array]:  # fmt: skip
    """Greedy starting sets (row indices): best coverage, tightest fit overall and tightest
    fit on each property."""
    need = np.maximum(d / n, e)
    cover = np.minimum(ratio(avail, need[None, :]), 1.0).sum(axis=1) + 1e-9 * avail.sum(axis=1)
    out = [first_rows(-cover, n)]
    fits = np.all(avail >= need[None, :], axis=1)
    per = ratio(tmax + need[None, :], cap)
    tight = np.prod(per, axis=1)
    out.append(first_rows(-np.where(fits, tight, tight - 1e9), n))
    if per.shape[1] > 1:
        for i in range(per.shape[1]):
            out.append(first_rows(-np.where(fits, per[:, i], per[:, i] - 1e9), n))
    return out


def first_rows(key: Array, n: int) -> Array:
    """``np.argsort(key, kind="stable")[:n]``: the ``n`` rows of least ``key`` in ascending
    order of ``key`` (ties: the lower row first), by partial selection when ``n`` is small
    beside the rows (issue 40, h55coll: the full sort of every eligible row was 15 % of a
    week N = 256 collective request's set search). The same rows in the same order: every row
    below the ``n``-th least key, then the lowest rows at it, sorted by (key, row); a NaN
    there (fewer than ``n`` ordered keys) takes the full sort."""
    key = np.asarray(key)
    if n <= 0 or 4 * n >= key.size or key.dtype.kind != "f":
        return np.argsort(key, kind="stable")[:n]
    cut = np.partition(key, n - 1)[n - 1]
    if cut != cut:  # NaN: argsort puts them last, in row order
        return np.argsort(key, kind="stable")[:n]
    below = np.flatnonzero(key < cut)
    # each part ascending: a stable sort by key alone orders equal keys by row
    rows = np.concatenate([below, np.flatnonzero(key == cut)[: n - below.size]])
    return rows[np.argsort(key[rows], kind="stable")]


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
    g, b = _scaled(a, d, dlo)
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
        if proves_empty(g, b, lam, rows, score):
            return "infeasible", sets, it + 1
        slack = g[rows].sum(axis=0) - b  # a subgradient of max_S lam . (g_S - b)
        lam = lam - step * slack / max(float(np.abs(slack).max()), 1e-300)
        lam = np.maximum(lam, 0.0)
        if lam.sum() <= 0:
            lam = (slack < 0).astype(np.float64)
        lam = lam / lam.sum()
        step *= 0.85
    return "unknown", sets, steps


def _scaled(a: Array, d: Array, dlo: Array) -> Tuple[Array, Array]:
    """``(g, b)``: the amounts and thresholds of the properties with a total, each divided by
    its total (the weighted sums of :func:`lagrange` and :func:`dual_cuts`)."""
    pos = d > 0
    return a[:, pos] / d[pos][None, :], dlo[pos] / d[pos]


def proves_empty(g: Array, b: Array, lam: Array, rows: Array, score: Array) -> bool:
    """Whether the weights ``lam >= 0`` prove that no set of ``rows.size`` rows of ``g``
    reaches ``b`` on every column: ``rows`` are the top rows of ``score = g @ lam`` (the
    largest weighted sum any set reaches) and that sum misses ``lam @ b`` by more than a
    margin (relative ``1e-12``) far above the rounding of the sums."""
    top = float(score[rows].sum())
    bound = float(lam @ b)
    margin = 1e-12 * (abs(top) + abs(bound) + float(np.abs(g[rows]).sum(axis=0) @ lam))
    return top + margin < bound


def proven_by(a: Array, d: Array, dlo: Array, n: int, proofs: List[Array]) -> bool:
    """Whether one of the weights ``proofs`` (over the properties with a total, as
    :func:`dual_cuts` keeps them) proves that no ``n`` rows of ``a`` reach every total
    (:func:`proves_empty`): one top-``n`` selection per weights, no search."""
    if not proofs or not np.any(d > 0):
        return False
    g, b = _scaled(a, d, dlo)
    for lam in proofs:
        if lam.size == g.shape[1]:
            score = g @ lam
            if proves_empty(g, b, lam, top_rows(score, n), score):
                return True
    return False


#: Cutting-plane iterations of :func:`dual_cuts` per start.
DUAL_CUTS = 40
#: Proving weights :func:`dual_cuts` keeps for the next starts.
PROOFS_KEPT = 4
#: :func:`dual_cuts` stops when its lower bound on the dual is above ``-DUAL_GAP``: the
#: relaxation is (nearly) feasible, no weights can prove the start empty.
DUAL_GAP = 1e-9


def dual_cuts(a: Array, d: Array, dlo: Array, n: int, iters: int = DUAL_CUTS,
              proofs: Optional[List[Array]] = None) -> Tuple[str, List[Array], int]:  # fmt: skip
    """The weighted-sum proof of :func:`lagrange` with the best weights, by cutting planes.

    ``phi(lam) = max_S sum_{j in S} lam . g_j - lam . b`` over the sets ``S`` of ``n`` rows
    (``g = a / d``, ``b = dlo / d``) is convex; a ``lam`` in the simplex with ``phi(lam) < 0``
    proves that no set reaches every total (:func:`proves_empty`). Each top-``n`` set met
    gives a plane ``lam . (g_S - b) <= phi(lam)``; the next weights minimise the largest
    plane over the simplex (Kelley's method: a linear program in ``m + 1`` variables), whose
    minimum is a lower bound on ``min phi``: at or above ``-DUAL_GAP`` the linear relaxation is
    feasible and no weights can prove anything, so the search stops (``"unknown"``). The
    subgradient steps of :func:`lagrange` (a fixed, shrinking step) may stop short of the
    best weights; these planes reach them in a few dozen sets for the family's ``m <= 4``.
    ``proofs`` (a list the caller keeps across starts, most recent first) holds weights that
    proved earlier starts empty: each is tried first (one top-``n`` set each: neighbouring
    starts are often proven by the same weights), and new proving weights are put in front
    (at most :data:`PROOFS_KEPT`).

    Returns
    -------
    verdict : {"feasible", "infeasible", "unknown"}
    sets : list of ndarray
        Every top-``n`` set met (row indices), the admissible ones first.
    steps : int
        Sets evaluated.
    """
    pos = d > 0
    if not np.any(pos):
        return "feasible", [np.arange(n)], 0
    g, b = _scaled(a, d, dlo)
    k = g.shape[1]
    it = len(proofs or [])
    if proven_by(a, d, dlo, n, proofs or []):  # the weights that proved earlier starts
        return "infeasible", [], it
    # SciPy's optimize (a first import of 0.5-2 s) by the time limit's deadline: a proof
    # is optional, so without it the start is left to the caller ("unknown")
    opt = lazyimport.import_in_budget("scipy.optimize")
    if opt is None:
        return "unknown", [], it
    linprog = opt.linprog
    lam = np.full(k, 1.0 / k)
    planes: List[Array] = []
    met: List[Array] = []
    seen = set()
    first = it
    while it - first < iters:
        it += 1
        score = g @ lam
        rows = top_rows(score, n)
        if np.all(a[rows].sum(axis=0) >= dlo):
            return "feasible", [rows] + met, it
        if proves_empty(g, b, lam, rows, score):
            if proofs is not None:
                proofs.insert(0, lam.copy())
                del proofs[PROOFS_KEPT:]
            return "infeasible", [], it
        key = rows.tobytes()
        if key in seen:  # the model already holds this plane: the weights cannot improve
            break
        seen.add(key)
        met.append(rows)
        planes.append(g[rows].sum(axis=0) - b)
        # min z subject to lam . c_S <= z for every plane, lam in the simplex
        c = np.zeros(k + 1)
        c[-1] = 1.0
        rows_ub = np.hstack([np.asarray(planes), -np.ones((len(planes), 1))])
        eq = np.concatenate([np.ones(k), [0.0]])[None, :]
        out = linprog(c, A_ub=rows_ub, b_ub=np.zeros(len(planes)), A_eq=eq, b_eq=[1.0],
                      bounds=[(0, None)] * k + [(None, None)], method="highs")  # fmt: skip
        if out.status != 0:
            break
        if float(out.x[-1]) >= -DUAL_GAP:  # the relaxation is feasible: no proof exists
            break
        lam = np.maximum(out.x[:k], 0.0)
        if lam.sum() <= 0:
            break
        lam = lam / lam.sum()
    return "unknown", met, it


#: Rows beside the set offered to :func:`repair`'s swaps, and their rounds.
REPAIR_SHORTLIST = 192
REPAIR_ROUNDS = 64


def repair(ker: Kernels, a: Array, tm: Array, cp: Array, d: Array, dlo: Array, tol: Array,
           sets: List[Array], n: int) -> Tuple[Array, int]:  # fmt: skip
    """A set meeting every total, repaired by the compiled swaps (which first reduce the
    summed relative deficit) from the set among ``sets`` of the smallest deficit, on a
    shortlist: that set and the :data:`REPAIR_SHORTLIST` other rows largest on the
    properties the set misses (each property's share in proportion to its deficit), at most
    :data:`REPAIR_ROUNDS` rounds (a set of ``sets`` already admissible is returned as it is).
    Returns ``(rows, rounds)``, rows None when the repair ends short (only a heuristic: no
    proof either way)."""
    for r in sets:  # one already admissible: nothing to repair
        if np.all(a[r].sum(axis=0) >= dlo):
            return np.sort(np.asarray(r, dtype=np.int64)), 0
    pos = d > 0
    if not sets or not np.any(pos):
        return None, 0
    g, b = _scaled(a, d, dlo)
    deficit = [float(np.maximum(b - g[r].sum(axis=0), 0.0).sum()) for r in sets]
    best = np.asarray(sets[int(np.argmin(deficit))], dtype=np.int64)
    short_of = np.maximum(b - g[best].sum(axis=0), 0.0)
    inside = np.zeros(a.shape[0], dtype=bool)
    inside[best] = True
    outside = np.flatnonzero(~inside)
    picked = np.zeros(0, dtype=np.int64)
    if outside.size:  # the rows that add most where the set misses, then the best overall
        w = short_of / short_of.sum() if short_of.sum() > 0 else np.full(b.size, 1.0 / b.size)
        score = g[outside] @ w
        picked = outside[first_rows(-score, REPAIR_SHORTLIST)]
    short = np.concatenate([best, np.sort(picked)])
    r, k = ker.swap_search(a[short], tm[short], cp[short], d, np.arange(best.size),
                           REPAIR_ROUNDS, tol)  # fmt: skip
    rows = np.sort(short[r])
    if rows.size == n and np.unique(rows).size == n and np.all(a[rows].sum(axis=0) >= dlo):
        return rows, k
    return None, k


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


def large_search(a: Array, tm: Array, cp: Array, d: Array, n: int, e: Array, dlo: Array,
                 ker: Optional[Kernels] = None, tol: Optional[Array] = None,
                 proofs: Optional[List[Array]] = None) -> Tuple[str, List[Array], int]:  # fmt: skip
    """A start's set when ``n`` and the eligible nodes are many: the greedy starting sets of
    :func:`greedy_starts` that already meet every total, then :func:`lagrange` (which can also
    prove that no set exists), then :func:`fill`; when all three come back empty-handed and
    ``ker`` is given, :func:`dual_cuts` (the best weights, ``proofs`` first: a proof, or a set) and
    :func:`repair` (swaps from the sets it met). Returns ``(verdict, sets, steps)``; no set
    and no proof: the caller's integer program decides."""
    verdict, sets, k = lagrange(a, d, dlo, n)  # first: a proof makes the greedy sets moot
    if verdict == "infeasible":
        return verdict, [], k
    cands = [r for r in greedy_starts(a, tm, cp, d, n, e) if np.all(a[r].sum(axis=0) >= dlo)]
    cands += sets
    if not cands and np.any(d > 0):
        rows = fill(a, d, dlo, n)
        if np.all(a[rows].sum(axis=0) >= dlo):
            cands.append(rows)
        elif ker is not None:  # before an integer program: the best weights, then swaps
            verdict, met, k2 = dual_cuts(a, d, dlo, n, proofs=proofs)
            k += k2
            if verdict == "infeasible":
                return verdict, [], k
            if verdict == "feasible":
                return verdict, met[:1], k
            rows, _ = repair(ker, a, tm, cp, d, dlo, tol, met + [rows], n)
            if rows is not None:
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
    order = outside[first_rows(-per[outside], SHORTLIST)]
    short = np.concatenate([best, order])
    r, k = ker.swap_search(a[short], tm[short], cp[short], d, np.arange(best.size),
                           min(max_rounds, IMPROVE_ROUNDS), tol)  # fmt: skip
    rows = short[r]
    if np.all(a[rows].sum(axis=0) >= dlo) and factor(d, tm[rows], cp[rows]) >= max(us):
        return rows, k
    return best, k
