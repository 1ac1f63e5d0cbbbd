"""The GAP tests' referee: the optimum by enumeration of every assignment, from the data
alone (not through ``verify_gap``), for instances of a few items."""

from __future__ import annotations

import itertools
from typing import Optional

__all__ = ["brute_gap"]


def brute_gap(inst, sense: str = "min", assign_all: bool = True) -> Optional[float]:
    """The optimum of ``inst`` (None: no assignment keeps every capacity); with
    ``assign_all=False`` an item may stay out (agent -1)."""
    best = None
    agents = range(inst.m) if assign_all else range(-1, inst.m)
    cost, weight, cap = inst.cost.tolist(), inst.weight.tolist(), inst.capacity.tolist()
    for a in itertools.product(agents, repeat=inst.n):
        used = [0] * inst.m
        total = 0.0
        for j, i in enumerate(a):
            if i >= 0:
                used[i] += weight[i][j]
                total += cost[i][j]
        if any(u > c for u, c in zip(used, cap)):
            continue
        if best is None or (total < best if sense == "min" else total > best):
            best = total
    return best
