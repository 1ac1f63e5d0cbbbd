"""Generated GAP instances: Chu & Beasley's types A-D."""

from __future__ import annotations

from numbers import Integral
from typing import Any, List, Optional

import numpy as np

from ..._shared.constraints import Interval, Options, Table, checked
from ..._shared.seeding import check_seed
from ..._shared.validation import check_memory
from .model import GapInstance

__all__ = ["generate_gap", "GAP_TYPES", "GENERATORS"]

#: Chu & Beasley's instance types.
GAP_TYPES = ("a", "b", "c", "d")


class _AnyCase(Options):
    """One of a set of lower-case words, in any case (``"D"`` is type D, as the OR-Library
    writes it)."""

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value.lower() in self.options

    def __str__(self) -> str:
        return f"one of {self.options} (any case)"

    def refused(self) -> List[Any]:
        return ["e", "no-such-option", 1]


#: The generator's parameters, declared once (as every family's ``GENERATORS``, re-exported
#: by :mod:`coalloc.loadshare.generators`): checked at every call (``@checked``), the type of
#: ``coalloc loadshare generate``'s ``--agents`` and ``--items``, and the source of
#: ``tests/shared/test_checked.py``'s invalid-value tests. ``seed`` follows the seed policy
#: (:func:`coalloc._shared.seeding.check_seed`); ``m x n`` is bounded by the memory check.
GENERATORS = {
    "generate_gap": Table(
        {
            "kind": [_AnyCase(GAP_TYPES)],
            "m": [Interval(Integral, 1, None, closed="left")],
            "n": [Interval(Integral, 1, None, closed="left")],
        }
    ),
}


@checked("coalloc.loadshare.gap.generators", "generate_gap", tables="GENERATORS")

def generate_gap(kind: str, m: int, n: int, *, seed: Optional[int] = 0) -> GapInstance:
    """A GAP instance of Chu & Beasley's type A, B, C or D (minimisation).

    * A: ``w ~ U[5, 25]``, ``c ~ U[10, 50]``, ``b_i = 9 n / m + 0.4 max_i sum_{j: I_j = i}
      w_ij`` where ``I_j`` is the cheapest agent of item ``j``;
    * B: as A with 70 % of A's capacity;
    * C: as A with ``b_i = 0.8 sum_j w_ij / m``;
    * D: ``w ~ U[1, 100]``, ``c = 111 - w + U[-10, 10]``, ``b_i = 0.8 sum_j w_ij / m``.

    Parameters
    ----------
    kind : {"a", "b", "c", "d"}
        The type, in any case.
    m, n : int
        Agents and items (at least 1 each).
    seed : int, optional

    Returns
    -------
    GapInstance
        With ``sense="min"`` (the types are minimisation problems).

    Examples
    --------
    >>> from coalloc.loadshare import generate_gap
    >>> int(generate_gap("d", 5, 100, seed=1).weight.max()) <= 100
    True
    """
    # the values were checked by the table (GENERATORS); these only fix their types
    kind, m, n = kind.lower(), int(m), int(n)
    check_memory(40.0 * m * n, f"a GAP instance of {m} x {n}")
    rng = np.random.default_rng(check_seed(seed))
    if kind == "d":
        w = rng.integers(1, 101, size=(m, n))
        c = 111 - w + rng.integers(-10, 11, size=(m, n))
        b = np.floor(0.8 * w.sum(axis=1) / m)
    else:
        w = rng.integers(5, 26, size=(m, n))
        c = rng.integers(10, 51, size=(m, n))
        if kind == "c":
            b = np.floor(0.8 * w.sum(axis=1) / m)
        else:
            cheapest = np.argmin(c, axis=0)
            per = np.array([w[i, cheapest == i].sum() for i in range(m)])
            b = np.full(m, np.floor(9 * n / m + 0.4 * per.max()))
            if kind == "b":
                b = np.floor(0.7 * b)
    return GapInstance(c, w, b.astype(np.int64), name=f"{kind}{m:02d}{n}-{seed}", sense="min")
