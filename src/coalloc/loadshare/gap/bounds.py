"""Bounds and proofs of the GAP: the LP relaxation (its bound, its solution and reduced
costs, with a wall-clock cap), the count bound, the cheap proofs that no assignment exists,
and the safe rounding of a bound computed in floating point."""

from __future__ import annotations

import math
import time
from typing import Any, Optional, Tuple

import numpy as np

from .model import GapInstance

__all__ = [
    "gap_bound",
    "count_bound_infeasible",
    "lp_relaxation",
    "LpTimedOut",
    "proof_of_infeasibility",
    "integral_bound",
]


def gap_bound(
    instance: GapInstance, sense: str = "min", assign_all: bool = True
) -> Optional[float]:
    """The LP-relaxation bound of the GAP (None when the LP is infeasible).

    Equal to the Lagrangian bound obtained by relaxing the capacity constraints. Items that
    fit no agent alone are forced out of the LP's support (``x_ij = 0`` when ``w_ij > b_i``).

    Parameters
    ----------
    instance : GapInstance
        The GAP instance.
    sense : {"min", "max"}
        Minimise the cost or maximise the profit.
    assign_all : bool
        Every item must be assigned (the classical GAP); False: items may stay out.

    Returns
    -------
    float or None
        A lower bound (``"min"``) or an upper bound (``"max"``) on the optimum; None when
        the LP is infeasible.

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance, gap_bound
    >>> gap_bound(GapInstance([[1, 3], [2, 1]], [[2, 2], [2, 2]], [2, 2]))
    2.0
    """
    return lp_relaxation(instance, sense, assign_all)[0]


class LpTimedOut(Exception):
    """HiGHS stopped the LP relaxation at its wall-clock cap (no bound, no start)."""


def lp_relaxation(
    instance: GapInstance,
    sense: str,
    assign_all: bool,
    time_limit: Optional[float] = None,
    until: Optional[float] = None,
) -> Tuple[Optional[float], Optional[np.ndarray], Optional[np.ndarray]]:
    """``(bound or None, x or None, rc or None)``: the LP bound, its (m, n) solution and
    the reduced costs of the pairs in the minimisation of ``sign * cost`` (``c_ij - y_j -
    mu_i w_ij`` from HiGHS's duals: ``>= 0`` where ``x_ij = 0``, ``0`` where it is
    fractional; ``+inf`` where the item does not fit the agent), with one more row, the
    dummy agent's ``-y_j``, when items may stay out; ``None`` when the LP is infeasible.
    With ``time_limit`` (seconds), HiGHS stops there and :class:`LpTimedOut` is raised:
    the size rule that decides whether the LP runs at all cannot see the machine's load,
    the cap can. ``until`` (a :func:`time.perf_counter` value) caps it instead, counted
    after SciPy's optimiser is imported (a first call in a process imports it: 0.35 s
    idle, over a second under load)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix

    if until is not None:
        time_limit = until - time.perf_counter()
        if time_limit <= 0:
            raise LpTimedOut

    m, n = instance.m, instance.n
    fits = instance.weight <= instance.capacity[:, None]
    if assign_all and n and not np.all(fits.any(axis=0)):
        return None, None, None  # an item fits no agent
    ii, jj = np.nonzero(fits)
    k = ii.shape[0]
    if k == 0:
        return 0.0, np.zeros((m, n)), None
    sign = 1.0 if sense == "min" else -1.0
    c = sign * instance.cost[ii, jj]
    # HiGHS's tolerances are absolute (1e-7): on costs of 1e-9 an "optimal" LP can sit well
    # above the true optimum, and that is no bound. The LP is solved on costs divided by
    # their largest magnitude and on capacity rows divided by their capacity; the value and
    # the reduced costs are scaled back.
    c_scale = float(np.max(np.abs(c))) or 1.0
    cap = instance.capacity.astype(float)
    row = np.where(cap > 0, cap, 1.0)
    w = instance.weight[ii, jj].astype(float) / row[ii]
    a_cap = coo_matrix((w, (ii, np.arange(k))), shape=(m, k))
    a_one = coo_matrix((np.ones(k), (jj, np.arange(k))), shape=(n, k))
    options = {} if time_limit is None else {"time_limit": max(float(time_limit), 1e-3)}
    if assign_all:
        res = linprog(c / c_scale, A_ub=a_cap, b_ub=cap / row, A_eq=a_one,
                      b_eq=np.ones(n), bounds=(0, 1), method="highs",
                      options=options)  # fmt: skip
    else:
        from scipy.sparse import vstack

        res = linprog(c / c_scale, A_ub=vstack([a_cap, a_one]),
                      b_ub=np.concatenate([cap / row, np.ones(n)]),
                      bounds=(0, 1), method="highs", options=options)  # fmt: skip
    if res.status == 1 and time_limit is not None:  # stopped at the cap: nothing proven
        raise LpTimedOut
    if res.status != 0:
        return None, None, None
    value = sign * float(res.fun) * c_scale
    if instance.integral_cost:  # an integer optimum: round the bound inwards
        value = math.ceil(value - 1e-6) if sense == "min" else math.floor(value + 1e-6)
    x = np.zeros((m, n))
    x[ii, jj] = res.x
    if assign_all:
        mu, y = res.ineqlin.marginals, res.eqlin.marginals
    else:
        mu, y = res.ineqlin.marginals[:m], res.ineqlin.marginals[m:]
    rc = np.full((m, n), np.inf)
    rc[ii, jj] = (c / c_scale - y[jj] - mu[ii] * w) * c_scale
    if not assign_all:  # the dummy agent: cost 0, weight 0
        rc = np.vstack([rc, -y[None, :] * c_scale])
    return float(value), x, rc


def count_bound_infeasible(instance: GapInstance) -> bool:
    """The count bound: True when the most items every agent can hold together are fewer
    than the items, a proof that no assignment of every item exists.

    Agent ``i`` holds at most ``k_i`` items, the length of the longest prefix of its
    weights sorted increasingly that fits its capacity (any ``k`` items weigh at least its
    ``k`` lightest); every item needs an agent, so ``sum_i k_i < n`` leaves one out. It
    catches what the LP relaxation cannot (three items of weight 2 on two agents of
    capacity 3: the LP spreads them, the count is 1 + 1 < 3).

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance
    >>> count_bound_infeasible(GapInstance([[1, 1, 1]] * 2, [[2, 2, 2]] * 2, [3, 3]))
    True
    """
    n = instance.n
    if n == 0:
        return False
    w = np.sort(instance.weight, axis=1)
    csum = np.cumsum(w, axis=1)  # weights below 2**62 per agent: no overflow
    most = (csum <= instance.capacity[:, None]).sum(axis=1)
    return int(most.sum()) < n


def proof_of_infeasibility(instance: GapInstance, lp_solved: bool, lp_bound: Any) -> str:
    """Why no assignment of every item exists, or "" (none of the cheap proofs holds)."""
    if instance.n and not np.all((instance.weight <= instance.capacity[:, None]).any(axis=0)):
        return "an item fits no agent"
    if lp_solved and lp_bound is None:
        return "the LP relaxation is infeasible"
    if count_bound_infeasible(instance):
        return ("the count bound: the most items the agents can hold (each its lightest) "
                "are fewer than the items")  # fmt: skip
    return ""


def integral_bound(value: float, sense: str, integral: bool) -> float:
    """A bound computed in floating point, made safe (and rounded inwards for integer
    costs): a minimum's lower bound moves down by the rounding slack, then up to the next
    integer."""
    slack = 1e-9 * max(1.0, abs(value))
    if integral:
        return float(math.ceil(value - slack)) if sense == "min" else float(
            math.floor(value + slack))  # fmt: skip
    return value - slack if sense == "min" else value + slack
