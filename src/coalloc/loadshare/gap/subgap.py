"""Exact re-optimisation of a few agents (issue 40, h48gaplns): free every item of k agents
(k = 2 or 3) and reassign them among those agents at least cost, exactly.

The sub-problem is a GAP of k agents on the freed items; it is solved by a dynamic
programme over the items whose states are the k agents' loads (each at most its
capacity; states of equal loads keep the cheapest), pruned by a Lagrangian bound: for
multipliers ``lam >= 0`` (any: the bound is valid for every choice), the items still to
place cost at least ``sum_u min_i (c_iu + lam_i w_iu) - sum_i lam_i (b_i - load_i)``, so a
state whose cost plus that bound is not below the incumbent's cost of those items cannot
lead to a better sub-assignment and is dropped. The multipliers are the search's
Lagrangian ones, refined on the sub-problem by a few subgradient steps
(:func:`sub_multipliers`). Without pruning (``bound`` infinite) the programme is the
exact optimum of the sub-problem (``tests/loadshare/test_gap_subgap.py`` checks it
against brute force); with a state budget it gives up (None) rather than guess. Its layer
loop is compiled (:mod:`coalloc.loadshare._gapsub`, h50gap; the NumPy twin
:mod:`coalloc.loadshare._reference.gapsub` gives the same answers bit for bit): 0.2-1.6 ms
a set of three agents on Chu-Beasley d in place of 2-13 ms.

With ``knap_steps`` (h63prog; the search's proof on small instances, ``search._PROOF_KNAP``)
the states are pruned by a stronger bound, each agent's 0-1 knapsack over the items left at
its residual capacity (:func:`knapsack_bound`; the proof of its validity is in the kernel's
docstring), and load vectors that do not fit one 62-bit key are keyed in two words
(:func:`key_split`).

:func:`intensify` applies it to an assignment over sets of agents chosen where items
are contested (an item's cheapest other agent in the reduced costs), until a deadline,
and keeps every improvement. Off by default in the search (``search._SUBGAP``; the
figures: bench/loadshare/ISSUE40.md, h48gaplns).
"""

from __future__ import annotations

import itertools
import time
from typing import Optional, Tuple

import numpy as np

from .. import _gapsub
from .._reference import gapsub as _twin

__all__ = ["solve_subgap", "sub_multipliers", "knapsack_bound", "key_split", "intensify",
           "MAX_STATES", "KNAP_CELLS"]

#: The most states a layer of the programme may keep; above it the sub-problem is given up.
MAX_STATES = 50_000
_TOL = 1e-9
#: The programme's layer loop: ``"compiled"`` (:mod:`coalloc.loadshare._gapsub`, h50gap)
#: or ``"numpy"`` (its twin, :mod:`coalloc.loadshare._reference.gapsub`); the same answers,
#: bit for bit (tests/loadshare/kernels/test_gap_subgap_parity.py).
_BACKEND = "compiled"
#: The most cells (``(s + 1) sum_a (cap_a + 1)``) of the knapsack tables of
#: :func:`knapsack_bound` (16 MB); above it the programme keeps the Lagrangian bound.
KNAP_CELLS = 2_000_000
#: Each word of the layer loop's key below this (the key of a word is at most its product
#: of ``cap_a + 1``, less one).
_WORD = 2**62


def key_split(cap: np.ndarray, words: int = 2) -> Optional[int]:
    """The first agent of the load vectors' second key word (h63prog): ``len(cap)`` when
    the product of every ``cap_a + 1`` is below 2^62 (one word), else the longest prefix
    below it if the rest's product is below it too and ``words >= 2``; None: the key does
    not fit ``words`` words."""
    prod, split = 1, len(cap)
    for a, c in enumerate(np.asarray(cap).tolist()):
        if prod * (int(c) + 1) >= _WORD:
            split = a
            break
        prod *= int(c) + 1
    if split == len(cap):
        return split
    rest = 1
    for c in np.asarray(cap)[split:].tolist():
        rest *= int(c) + 1
    return split if words >= 2 and rest < _WORD else None


def knapsack_bound(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, mu: np.ndarray,
                   target: float, steps: int, cells: Optional[int] = None,
                   until: Optional[float] = None,
                   ) -> Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]]:  # fmt: skip
    """The knapsack bound's arrays for the layer loop (h63prog): item multipliers from
    ``mu`` improved by ``steps`` subgradient steps (Polyak's, towards ``target``) on the
    relaxation of "each item once" (its value: ``sum_u mu_u + sum_a f_a(0, cap_a)``, each
    agent a 0-1 knapsack; valid for every ``mu``), the best seen kept; then its tables.

    Parameters
    ----------
    cost, weight : numpy.ndarray, shape (k, s)
        The items in the programme's order (costs minimised, weights ``>= 0``).
    cap : numpy.ndarray of int64, shape (k,)
        Capacities.
    mu : numpy.ndarray, shape (s,)
        The first multipliers (e.g. the least reduced costs ``min_a c_au + lam_a w_au``,
        whose bound is never below the Lagrangian one).
    target : float
        The bound sought (the incumbent); not finite: no steps.
    steps : int
        The subgradient steps (0: ``mu`` as given).
    cells : int, optional
        The most table cells (None: :data:`KNAP_CELLS`); above, None.
    until : float, optional
        A ``time.perf_counter()`` value; passed, no further steps.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray) or None
        The table, its offsets and the suffix sums of the multipliers
        (``subgap_layers``' ``knap``, ``koff``, ``murest``), or None (too many cells).
    """
    k, s = cost.shape
    cap = np.ascontiguousarray(cap, dtype=np.int64)
    rows = (cap.astype(np.float64) + 1.0) * (s + 1)
    if float(rows.sum()) > (KNAP_CELLS if cells is None else cells):
        return None
    koff = np.concatenate([[0], np.cumsum(rows[:-1])]).astype(np.int64)
    table = np.empty(int(rows.sum()))
    fill = _gapsub.knapsack_tables if _BACKEND == "compiled" else _twin.knapsack_tables
    mu = np.array(mu, dtype=np.float64)
    pick = np.zeros((k, s), dtype=np.int8)
    best, best_mu, step = -np.inf, mu.copy(), 1.0
    for it in range(steps if np.isfinite(target) else 0):
        fill(cost, weight, cap, mu, koff, table, pick)
        val = float(mu.sum() + table[koff + cap].sum())
        if val > best:
            best, best_mu = val, mu.copy()
        g = 1.0 - pick.sum(axis=0)  # each item's shortfall of "given once"
        norm = float(g @ g)
        if norm == 0.0 or val >= target:
            break
        if until is not None and time.perf_counter() >= until:
            break
        mu = mu + step * max(target - val, 1e-9) / norm * g
        if it % 10 == 9:
            step *= 0.5
    fill(cost, weight, cap, best_mu, koff, table)
    murest = np.concatenate([np.cumsum(best_mu[::-1])[::-1], [0.0]])
    return table, koff, murest


def sub_multipliers(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, target: float,
                    lam: Optional[np.ndarray] = None,
                    iterations: int = 30) -> np.ndarray:  # fmt: skip
    """Subgradient steps (Polyak's, towards ``target``) on the sub-problem's Lagrangian
    relaxation of the capacities, from ``lam`` (None: zeros); the best multipliers seen.

    Parameters
    ----------
    cost, weight : numpy.ndarray, shape (k, s)
        The sub-problem's costs (minimised) and weights.
    cap : numpy.ndarray, shape (k,)
        Its capacities.
    target : float
        An upper bound on the sub-problem's optimum (the incumbent's cost of its items).
    lam : numpy.ndarray, shape (k,), optional
        The first multipliers (clipped at 0).
    iterations : int
        The steps.

    Returns
    -------
    numpy.ndarray, shape (k,)
        Multipliers ``>= 0``.
    """
    k, s = cost.shape
    lam = np.zeros(k) if lam is None else np.maximum(np.asarray(lam, dtype=np.float64), 0.0)
    best, best_lam = -np.inf, lam.copy()
    if s == 0 or not np.isfinite(target):
        return best_lam
    cols = np.arange(s)
    step = 1.0
    for it in range(iterations):
        red = cost + lam[:, None] * weight
        i = red.argmin(axis=0)
        val = float(red[i, cols].sum() - lam @ cap)
        if val > best:
            best, best_lam = val, lam.copy()
        g = np.bincount(i, weights=weight[i, cols], minlength=k) - cap
        norm = float(g @ g)
        if norm == 0.0:
            break
        lam = np.maximum(0.0, lam + step * max(target - val, 1e-6) / norm * g)
        if it % 10 == 9:
            step *= 0.5
    return best_lam


def solve_subgap(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray,
                 bound: float = np.inf, lam: Optional[np.ndarray] = None,
                 max_states: int = MAX_STATES, until: Optional[float] = None,
                 why: Optional[np.ndarray] = None, knap_steps: Optional[int] = None,
                 ) -> Optional[Tuple[np.ndarray, float]]:  # fmt: skip
    """The least-cost assignment of the sub-problem's items to its agents, if one costs
    less than ``bound``.

    Parameters
    ----------
    cost : numpy.ndarray, shape (k, s)
        Costs (minimised).
    weight : numpy.ndarray of int, shape (k, s)
        Weights (``>= 0``).
    cap : numpy.ndarray of int, shape (k,)
        Capacities (``>= 0``).
    bound : float
        Only assignments costing less than this are sought (``inf``: any), by more than
        1e-9 times the largest cost magnitude (the costs are divided by it for the layer
        loop, whose tolerance is absolute).
    lam : numpy.ndarray, shape (k,), optional
        Multipliers ``>= 0`` of the pruning bound (None: zeros, the bound is then the sum
        of the items' least costs).
    max_states : int
        The most states a layer keeps; above it, None (given up).
    until : float, optional
        A ``time.perf_counter()`` value; passed between two items, None (given up).
    why : numpy.ndarray of int64, shape (1,), optional
        Set to why the call returned: 0 an assignment, 1 None as a proof that no
        assignment within the capacities costs less than ``bound`` (every state of a layer
        pruned), 2 None as given up (the state budget or ``until``).
    knap_steps : int, optional
        None: states pruned by the Lagrangian bound of ``lam``; an int: by the knapsack
        bound of :func:`knapsack_bound` instead (from ``mu_u = min_a c_au + lam_a w_au``
        and that many subgradient steps towards ``bound``; never weaker with 0 steps),
        unless its tables exceed :data:`KNAP_CELLS` cells.

    Returns
    -------
    (numpy.ndarray of int64, float) or None
        The agents' indices (0..k-1) for the s items and the cost; None when no
        assignment within the capacities costs less than ``bound`` (or the state budget or
        ``until`` was passed).
    """
    cost = np.asarray(cost, dtype=np.float64)
    weight = np.asarray(weight, dtype=np.int64)
    cap = np.asarray(cap, dtype=np.int64)
    k, s = cost.shape
    lam = np.zeros(k) if lam is None else np.maximum(np.asarray(lam, dtype=np.float64), 0.0)
    if s == 0:
        found = 0.0 < bound - _TOL
        if why is not None:
            why[0] = 0 if found else 1
        return (np.zeros(0, dtype=np.int64), 0.0) if found else None
    # the layer loop's tolerance (1e-9) is absolute: costs in units of their largest
    # magnitude make it relative (costs of 1e-11 units: every state "not below" the bound)
    scale = float(np.abs(cost).max())
    scale = scale if scale > 0.0 and np.isfinite(scale) else 1.0
    cost, lam, bound = cost / scale, lam / scale, float(bound) / scale
    red = cost + lam[:, None] * weight
    # the items of the largest spread in reduced cost first: the bound tightens soonest
    order = np.argsort(-(red.max(axis=0) - red.min(axis=0)), kind="stable")
    cost, weight, red = cost[:, order], weight[:, order], red[:, order]
    rest = np.concatenate([np.cumsum(red.min(axis=0)[::-1])[::-1], [0.0]])
    wrest = np.concatenate([np.cumsum(weight.min(axis=0)[::-1])[::-1], [0]])
    split = key_split(cap)
    if split is None or split == k:  # one word (None: as before; callers keep to fits)
        split = k
        radix = np.cumprod(np.concatenate([[1], cap[:-1] + 1])).astype(np.int64)
    else:  # two words: agents split.. keyed again from 1
        radix = np.concatenate([np.cumprod(np.concatenate([[1], cap[:split - 1] + 1])),
                                np.cumprod(np.concatenate([[1], cap[split:-1] + 1]))])
        radix = radix.astype(np.int64)
    cost, weight = np.ascontiguousarray(cost), np.ascontiguousarray(weight)
    knap = None
    if knap_steps is not None:
        knap = knapsack_bound(cost, weight, cap, red.min(axis=0), float(bound), knap_steps,
                              until=until)
    extra = {} if knap is None else dict(zip(("knap", "koff", "murest"), knap))
    layers = _gapsub.subgap_layers if _BACKEND == "compiled" else _twin.subgap_layers
    got = layers(cost, weight, cap, lam, rest, wrest, radix, float(bound), int(max_states),
                 until, why=why, split=split, **extra)  # fmt: skip
    if got is None:
        return None
    to, z = got
    out = np.empty(s, dtype=np.int64)
    out[order] = to
    return out, z * scale


def _candidate_sets(red: np.ndarray, assign: np.ndarray, k: int,
                    rng: np.random.Generator) -> list:  # fmt: skip
    """Sets of k agents, the most contested first: agents a and b are linked by the items
    of one whose cheapest other agent (in the reduced costs ``red``) is the other; pairs
    by that count, triples by a pair and the agent most linked to both; ties in a drawn
    order."""
    m, n = red.shape
    other = red.copy()
    other[assign, np.arange(n)] = np.inf
    second = other.argmin(axis=0)
    link = np.zeros((m, m))
    np.add.at(link, (assign, second), 1.0)
    link = link + link.T
    jitter = rng.random((m, m)) * 1e-3
    link = link + jitter + jitter.T
    pairs = sorted(itertools.combinations(range(m), 2), key=lambda p: -link[p])
    if k == 2:
        return [p for p in pairs if link[p] >= 1.0]
    out, seen = [], set()
    for a, b in pairs:
        if link[a, b] < 1.0:
            break
        score = link[a] + link[b]
        score[[a, b]] = -np.inf
        c = int(np.argmax(score))
        key = tuple(sorted((a, b, c)))
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def intensify(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, assign: np.ndarray,
              lam: np.ndarray, k: int, until: Optional[float], rng: np.random.Generator,
              max_sets: Optional[int] = None, max_states: int = MAX_STATES,
              steps: int = 30) -> Tuple[np.ndarray, int, int]:  # fmt: skip
    """Exact re-optimisation of sets of ``k`` agents of a feasible ``assign`` (not
    changed), the most contested sets first, each from the assignment improved so far,
    until the clock passes ``until`` (None: every set once) or ``max_sets`` sets.

    Parameters
    ----------
    cost, weight : numpy.ndarray, shape (m, n)
        The minimisation's costs and the weights.
    cap : numpy.ndarray, shape (m,)
        The capacities.
    assign : numpy.ndarray of int, shape (n,)
        A feasible assignment.
    lam : numpy.ndarray, shape (m,)
        Lagrangian multipliers ``>= 0`` (the search's; refined per set).
    k : int
        Agents per set (2 or 3).
    until : float, optional
        A ``time.perf_counter()`` value.
    rng : numpy.random.Generator
        Breaks ties among equally contested sets.
    max_sets : int, optional
        The most sets tried.
    max_states : int
        :func:`solve_subgap`'s state budget a layer.
    steps : int
        The subgradient steps refining the multipliers per set (:func:`sub_multipliers`;
        0: the search's multipliers as they are).

    Returns
    -------
    (numpy.ndarray, int, int)
        The assignment (feasible; never costlier than ``assign``), the sets improved and
        the sets tried.
    """
    x = np.array(assign, dtype=np.int64)
    m, n = cost.shape
    if m < k or n == 0:
        return x, 0, 0
    lam = np.maximum(np.asarray(lam, dtype=np.float64), 0.0)
    red = cost + lam[:, None] * weight
    improved = tried = 0
    for agents in _candidate_sets(red, x, k, rng):
        if until is not None and time.perf_counter() >= until:
            break
        if max_sets is not None and tried >= max_sets:
            break
        ag = np.array(agents, dtype=np.int64)
        items = np.flatnonzero(np.isin(x, ag))
        tried += 1
        if items.size < 2:
            continue
        c, w, b = cost[np.ix_(ag, items)], weight[np.ix_(ag, items)], cap[ag]
        now = float(cost[x[items], items].sum())
        mult = sub_multipliers(c, w, b, now, lam[ag], steps) if steps > 0 else lam[ag]
        got = solve_subgap(c, w, b, now, mult, max_states, until)
        if got is not None:
            x[items] = ag[got[0]]
            improved += 1
    return x, improved, tried
