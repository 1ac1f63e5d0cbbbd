"""NumPy twin of :mod:`coalloc.loadshare._gapsub` (the layer loop of the GAP's exact
re-optimisation of a few agents, :func:`coalloc.loadshare.gap.subgap.solve_subgap`).

The same layers, bit for bit: candidates numbered ``agent * states + parent``, the pruning
sum accumulated agent by agent, states of equal loads keeping the cheapest (ties: the
first candidate) through a ``lexsort`` by (key, cost), in increasing key; with a knapsack
table (h63prog), the knapsack bound summed agent by agent, and the tables themselves
(:func:`knapsack_tables`) row by row as the kernel fills them.
"""

from __future__ import annotations

import time
from typing import Optional, Tuple

import numpy as np

from ..._shared import interrupt

__all__ = ["knapsack_tables", "subgap_layers"]

_TOL = 1e-9


def knapsack_tables(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, mu: np.ndarray,
                    koff: np.ndarray, table: np.ndarray,
                    pick: Optional[np.ndarray] = None) -> None:  # fmt: skip
    """Twin of ``_gapsub.knapsack_tables``: fills ``table`` with each agent's 0-1 knapsack
    over the items' suffixes, ``f_a(t, r)`` at ``koff[a] + t (cap[a] + 1) + r`` (the least
    ``sum (cost[a, u] - mu[u])`` over subsets of the items ``t..`` weighing at most ``r``
    on agent a), and ``pick`` (when given) with agent a's subset at ``f_a(0, cap[a])``."""
    k, s = cost.shape
    if weight.shape != (k, s) or cap.shape != (k,) or mu.shape != (s,) or koff.shape != (k,):
        raise ValueError("knapsack_tables: inconsistent shapes")
    if ((cap < 0) | (koff < 0) | (koff + (s + 1) * (cap + 1) > table.shape[0])).any():
        raise ValueError("knapsack_tables: the table is too short")
    if pick is not None and pick.shape != (k, s):
        raise ValueError("knapsack_tables: inconsistent shapes")
    for a in range(k):
        row = int(cap[a]) + 1
        f = table[int(koff[a]):int(koff[a]) + (s + 1) * row].reshape(s + 1, row)
        f[s] = 0.0
        for t in range(s - 1, -1, -1):
            w, d = int(weight[a, t]), float(cost[a, t] - mu[t])
            f[t] = f[t + 1]
            if d < 0.0 and w < row:
                f[t, w:] = np.minimum(f[t + 1, w:], f[t + 1, :row - w] + d)
        if pick is not None:
            r = row - 1
            for t in range(s):
                pick[a, t] = f[t, r] != f[t + 1, r]
                r -= int(weight[a, t]) if pick[a, t] else 0


def subgap_layers(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, lam: np.ndarray,
                  rest: np.ndarray, wrest: np.ndarray, radix: np.ndarray, bound: float,
                  max_states: int, until: Optional[float] = None, deadline=None,
                  why: Optional[np.ndarray] = None, knap: Optional[np.ndarray] = None,
                  koff: Optional[np.ndarray] = None, murest: Optional[np.ndarray] = None,
                  split: int = -1) -> Optional[Tuple[np.ndarray, float]]:  # fmt: skip
    """Twin of ``_gapsub.subgap_layers``: ``(agents of the items in this order, cost)`` of
    the cheapest assignment costing less than ``bound - 1e-9``, or None (none, a layer
    over ``max_states`` states, or ``until`` passed between two items); ``why[0]``, when
    given: 0 an assignment, 1 none below the bound (a proof), 2 given up; with ``knap``,
    ``koff`` and ``murest``, the knapsack bound in place of the Lagrangian one; ``split``
    in ``0..k-1``: agents ``split..`` keyed in a second word compared first."""
    if (knap is None) != (koff is None) or (knap is None) != (murest is None):
        raise ValueError("subgap_layers: knap, koff and murest go together")
    if why is not None and why.shape[0] < 1:
        raise ValueError("subgap_layers: why needs one entry")
    if knap is not None and (koff.shape != cap.shape or murest.shape != (cost.shape[1] + 1,)):
        raise ValueError("subgap_layers: inconsistent shapes")
    if knap is not None and (koff + (cost.shape[1] + 1) * (cap + 1) > knap.shape[0]).any():
        raise ValueError("subgap_layers: the knapsack table is too short")

    def said(code: int) -> None:
        if why is not None:
            why[0] = code

    k, s = cost.shape
    split = k if split < 0 or split > k else split
    capsum = int(cap.sum())
    loads = np.zeros((1, k), dtype=np.int64)
    value = np.zeros(1)
    parents, choices = [], []
    rows = np.arange(k)
    lim = bound - _TOL
    for t in range(s):
        if until is not None and time.perf_counter() >= until:
            said(2)
            return None
        interrupt.check_kernel(deadline)
        n0 = value.shape[0]
        nl = np.repeat(loads[None], k, axis=0)  # (k, n0, k): item t to agent a
        nl[rows, :, rows] += weight[:, t][:, None]
        nl = nl.reshape(k * n0, k)
        nv = (value[None, :] + cost[:, t][:, None]).ravel()
        slack = cap - nl
        fits = (slack >= 0).all(axis=1)
        if knap is not None:  # f_b(t + 1, slack_b), agent by agent, as the kernel adds
            row = (t + 1) * (cap + 1) + koff
            sl = knap[np.where(fits, row[0] + slack[:, 0], 0)]
            for b in range(1, k):
                sl = sl + knap[np.where(fits, row[b] + slack[:, b], 0)]
            below = (nv + murest[t + 1]) + sl < lim
        else:
            sl = slack[:, 0] * lam[0]
            for b in range(1, k):  # agent by agent, as the kernel adds
                sl = sl + slack[:, b] * lam[b]
            below = (nv + rest[t + 1]) - sl < lim
        keep = fits & below & (capsum - nl.sum(axis=1) >= wrest[t + 1])
        idx = np.flatnonzero(keep)
        if idx.size == 0:  # every state pruned: none below the bound (a proof)
            said(1)
            return None
        nl, nv = nl[idx], nv[idx]
        key, hi = nl[:, :split] @ radix[:split], nl[:, split:] @ radix[split:]
        o = np.lexsort((nv, key, hi))
        ko, ho = key[o], hi[o]
        first = np.ones(o.size, dtype=bool)
        first[1:] = (ko[1:] != ko[:-1]) | (ho[1:] != ho[:-1])
        o = o[first]
        if o.size > max_states:
            said(2)
            return None
        loads, value = nl[o], nv[o]
        parents.append(idx[o] % n0)
        choices.append(idx[o] // n0)
    best = int(np.argmin(value))
    z = float(value[best])
    if not z < lim:
        said(1)
        return None
    said(0)
    to = np.empty(s, dtype=np.int64)
    for t in range(s - 1, -1, -1):
        to[t] = choices[t][best]
        best = int(parents[t][best])
    return to, z
