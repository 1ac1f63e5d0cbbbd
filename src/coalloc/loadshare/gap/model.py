"""The GAP instance: validated costs, weights and capacities, and the objective of an
assignment (the one model every GAP method reads)."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from ..._shared.validation import readonly

__all__ = ["GapInstance", "GapCall", "objective", "objective_of"]

#: Every agent's total weight and capacity stay below this (no int64 overflow in sums).
_LIMIT = 2**62


class GapInstance:
    """A validated GAP instance.

    Parameters
    ----------
    cost : array_like, shape (m, n)
        ``cost[i, j]``: cost (or profit) of item ``j`` on agent ``i``; finite.
    weight : array_like of int, shape (m, n)
        Capacity used; non-negative integers.
    capacity : array_like of int, shape (m,)
        Agent capacities; non-negative integers.
    name : str, optional
    sense : {"min", "max"}, optional
        The objective sense the instance states (a ``coalloc.loadshare.gap`` JSON file's
        ``"sense"``): what :func:`~coalloc.loadshare.solve_gap` optimises when it is not
        given one. None (the default): not stated, and ``solve_gap`` minimises.

    Raises
    ------
    TypeError, ValueError
        Wrong shapes, non-integer weights or capacities, negative values, NaN, or weights
        whose sums could overflow 64-bit integers (every agent's total weight and capacity
        must stay below 2**62).

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance
    >>> inst = GapInstance([[1, 2], [3, 1]], [[1, 1], [1, 1]], [1, 1])
    >>> inst.m, inst.n
    (2, 2)
    """

    def __init__(self, cost: Any, weight: Any, capacity: Any, name: str = "",
                 sense: Optional[str] = None) -> None:  # fmt: skip
        if sense not in (None, "min", "max"):
            raise ValueError(f"sense must be 'min', 'max' or None, got {sense!r}")
        try:
            c = np.array(cost, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"cost must be a numeric (m, n) matrix: {exc}") from None
        if c.ndim != 2 or c.shape[0] == 0:
            raise ValueError(f"cost must be a 2-D (m, n) matrix with m >= 1, got shape {c.shape}")
        if not np.all(np.isfinite(c)):
            raise ValueError("cost must be finite (found NaN or inf)")
        w = _int_array(weight, "weight", 2)
        if w.shape != c.shape:
            raise ValueError(f"weight has shape {w.shape}, expected {c.shape} (like cost)")
        b = _int_array(capacity, "capacity", 1)
        if b.shape[0] != c.shape[0]:
            raise ValueError(f"capacity has length {b.shape[0]}, expected {c.shape[0]} agents")
        for i in range(w.shape[0]):
            if sum(int(x) for x in w[i].tolist()) >= _LIMIT or int(b[i]) >= _LIMIT:
                raise ValueError(
                    f"weights of agent {i} sum to 2**62 or more: they could overflow int64"
                )
        self.cost, self.weight, self.capacity = c, w, b
        readonly(c, w, b)
        self.name = str(name)
        self.sense: Optional[str] = sense

    @property
    def m(self) -> int:
        """Number of agents."""
        return int(self.cost.shape[0])

    @property
    def n(self) -> int:
        """Number of items."""
        return int(self.cost.shape[1])

    @property
    def integral_cost(self) -> bool:
        """All costs are integers (CP-SAT can take them as they are)."""
        cost = self.cost  # no items: integral (max of nothing is 0)
        return bool(np.all(cost == np.round(cost)) and np.abs(cost).max(initial=0.0) < 2**52)

    def __repr__(self) -> str:
        return f"GapInstance(m={self.m}, n={self.n}{', ' + self.name if self.name else ''})"


def _int_array(values: Any, argname: str, ndim: int) -> np.ndarray:
    try:
        arr = np.array(values)
    except (TypeError, ValueError) as exc:  # pragma: no cover
        raise TypeError(f"{argname} must be an integer array: {exc}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{argname} must be {ndim}-D, got shape {arr.shape}")
    if arr.size and arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{argname} must hold integers")
        if np.abs(arr).max() >= 2**62:
            raise ValueError(f"{argname} has values of 2**62 or more: they could overflow int64")
    elif arr.size and arr.dtype.kind == "O":
        if any(abs(int(v)) >= _LIMIT for v in arr.ravel().tolist()):
            raise ValueError(f"{argname} has values of 2**62 or more: they could overflow int64")
    elif arr.size and arr.dtype.kind not in "iu":
        raise TypeError(f"{argname} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{argname} must be non-negative")
    return arr


def objective(inst: GapInstance, assign: np.ndarray) -> float:
    """The objective of ``assign`` (``-1``: an item left out, at no cost)."""
    on = assign >= 0
    return float(inst.cost[assign[on], np.flatnonzero(on)].sum())


def objective_of(inst: GapInstance, assign: np.ndarray, assign_all: bool) -> float:
    """The objective of the kernel's assignment (the dummy agent ``m``: unassigned)."""
    if assign_all:
        return float(inst.cost[assign, np.arange(inst.n)].sum())
    on = assign < inst.m
    return float(inst.cost[assign[on], np.flatnonzero(on)].sum())


@dataclasses.dataclass(frozen=True)
class GapCall:
    """One validated call of :func:`coalloc.loadshare.solve_gap`: what each of its methods
    reads (the instance and the call's common parameters, checked once at the door).

    Attributes
    ----------
    instance : GapInstance
    sense : {"min", "max"}
    assign_all : bool
    limit : float or None
        The time limit in seconds, counted from ``t0``.
    seed : int or None
    params : dict
        The parameters the result records.
    t0 : float
        The call's start, a :func:`time.perf_counter` value.
    relink : bool
        Path relinking in the search under a time limit (``solve_gap(relink=...)``).
    cycles : int
        Core cycles in the search (``solve_gap(cycles=...)``; 0: none).
    """

    instance: GapInstance
    sense: str
    assign_all: bool
    limit: Optional[float]
    seed: Optional[int]
    params: dict
    t0: float
    relink: bool = False
    cycles: int = 0

    def with_params(self, **extra: Any) -> GapCall:
        """The same call, recording ``extra`` parameters too."""
        return dataclasses.replace(self, params={**self.params, **extra})
