"""NumPy twin of :mod:`coalloc.loadshare._gapsub` (the layer loop of the GAP's exact
re-optimisation of a few agents, :func:`coalloc.loadshare.gap.subgap.solve_subgap`).

The same layers, bit for bit: candidates numbered ``agent * states + parent``, the pruning
sum accumulated agent by agent, states of equal loads keeping the cheapest (ties: the
first candidate) through a ``lexsort`` by (key, cost), in increasing key.
"""

from __future__ import annotations

import time
from typing import Optional, Tuple

import numpy as np

from ..._shared import interrupt

__all__ = ["subgap_layers"]

_TOL = 1e-9


def subgap_layers(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, lam: np.ndarray,
                  rest: np.ndarray, wrest: np.ndarray, radix: np.ndarray, bound: float,
                  max_states: int, until: Optional[float] = None, deadline=None,
                  why: Optional[np.ndarray] = None,
                  ) -> Optional[Tuple[np.ndarray, float]]:  # fmt: skip
    """Twin of ``_gapsub.subgap_layers``: ``(agents of the items in this order, cost)`` of
    the cheapest assignment costing less than ``bound - 1e-9``, or None (none, a layer
    over ``max_states`` states, or ``until`` passed between two items); ``why[0]``, when
    given: 0 an assignment, 1 none below the bound (a proof), 2 given up."""
    if why is not None and why.shape[0] < 1:
        raise ValueError("subgap_layers: why needs one entry")

    def said(code: int) -> None:
        if why is not None:
            why[0] = code

    k, s = cost.shape
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
        sl = slack[:, 0] * lam[0]
        for b in range(1, k):  # agent by agent, as the kernel adds
            sl = sl + slack[:, b] * lam[b]
        keep = ((slack >= 0).all(axis=1)
                & ((nv + rest[t + 1]) - sl < lim)
                & (capsum - nl.sum(axis=1) >= wrest[t + 1]))  # fmt: skip
        idx = np.flatnonzero(keep)
        if idx.size == 0:  # every state pruned: none below the bound (a proof)
            said(1)
            return None
        nl, nv = nl[idx], nv[idx]
        key = nl @ radix
        o = np.lexsort((nv, key))
        ko = key[o]
        first = np.ones(o.size, dtype=bool)
        first[1:] = ko[1:] != ko[:-1]
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
