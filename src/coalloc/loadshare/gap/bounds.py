"""Bounds and proofs of the GAP: the LP relaxation (its bound, its solution and reduced
costs, with a wall-clock cap), the count bound, the cheap proofs that no assignment exists,
the checked certificate of an infeasible LP relaxation, and the safe rounding of a bound
computed in floating point."""

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
    "capacity_certificate",
    "certificate_excess",
    "weights_certificate",
    "weights_excess",
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


#: The LP relaxation's solver: ``"highspy"`` (HiGHS through ``highspy``, imported in
#: 0.01-0.04 s) or ``"linprog"`` (the same HiGHS dual simplex through
#: ``scipy.optimize.linprog``). Since SciPy's optimiser is no longer imported with the
#: family (issue 41), a process that had not imported it counted its import (0.35-1.2 s)
#: in the LP's budget, so a timed heuristic call under about 1.4 s never solved the LP,
#: and never imported SciPy's optimiser for the next call either: every 1 s call ran
#: without the LP's start and core phase (Chu-Beasley d at 1 s: 0.55 % mean against
#: 0.29-0.37 % with the LP; bench/loadshare/ISSUE40.md, h49gap). HiGHS directly costs
#: no such import. Untimed calls (no ``time_limit``, no ``until``) keep ``linprog``: on a
#: degenerate LP the two can return different optimal vertices (a tie of two items on one
#: agent, found by the parity test), and untimed answers stay as they were; on the 117
#: published instances both give the same bound, solution and reduced costs, bit for bit.
_LP_BACKEND = "highspy"

#: The LP's answer: (status, value, x, the capacity rows' duals, the items' duals).
_LpAnswer = Tuple[int, float, Any, Any, Any]
#: linprog's status codes of the two outcomes the caller tells apart (0: optimal, 1: a limit).
_HIGHS_STATUS = {"kOptimal": 0, "kTimeLimit": 1, "kIterationLimit": 1}


def _linprog(c: np.ndarray, w: np.ndarray, ii: np.ndarray, jj: np.ndarray, m: int, n: int,
             b: np.ndarray, assign_all: bool, options: dict) -> _LpAnswer:  # fmt: skip
    """The LP (columns the pairs ``(ii, jj)``, costs ``c``, capacity rows ``w`` against
    ``b``, an assignment row per item: ``= 1``, ``<= 1`` unless ``assign_all``) through
    ``scipy.optimize.linprog``: (status, value, x, capacity rows' duals, items' duals)."""
    from scipy.optimize import linprog
    from scipy.sparse import coo_matrix, vstack

    k = ii.shape[0]
    a_cap = coo_matrix((w, (ii, np.arange(k))), shape=(m, k))
    a_one = coo_matrix((np.ones(k), (jj, np.arange(k))), shape=(n, k))
    if assign_all:
        res = linprog(c, A_ub=a_cap, b_ub=b, A_eq=a_one, b_eq=np.ones(n), bounds=(0, 1),
                      method="highs", options=options)  # fmt: skip
    else:
        res = linprog(c, A_ub=vstack([a_cap, a_one]), b_ub=np.concatenate([b, np.ones(n)]),
                      bounds=(0, 1), method="highs", options=options)  # fmt: skip
    if res.status != 0:
        return int(res.status), float("nan"), None, None, None
    if assign_all:
        return 0, float(res.fun), res.x, res.ineqlin.marginals, res.eqlin.marginals
    mar = res.ineqlin.marginals
    return 0, float(res.fun), res.x, mar[:m], mar[m:]


def _highs_lp(c: np.ndarray, w: np.ndarray, ii: np.ndarray, jj: np.ndarray, m: int, n: int,
              b: np.ndarray, assign_all: bool, options: dict) -> _LpAnswer:  # fmt: skip
    """:func:`_linprog`'s LP and answer through ``highspy`` directly (the rows in
    linprog's order: the capacities, then the items; its options: dual simplex, one
    thread), the matrix built column by column (two entries a pair) without SciPy."""
    import highspy

    k = ii.shape[0]
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = k
    lp.num_row_ = m + n
    lp.col_cost_ = np.ascontiguousarray(c, dtype=np.float64)
    lp.col_lower_ = np.zeros(k)
    lp.col_upper_ = np.ones(k)
    lp.row_lower_ = np.concatenate([np.full(m, -inf), np.ones(n) if assign_all
                                    else np.full(n, -inf)])  # fmt: skip
    lp.row_upper_ = np.concatenate([np.clip(b, -inf, inf), np.ones(n)])
    index = np.empty(2 * k, dtype=np.int32)
    index[0::2], index[1::2] = ii, m + jj
    value = np.empty(2 * k)
    value[0::2], value[1::2] = w, 1.0
    h = _minimising(lp, np.arange(0, 2 * k + 1, 2, dtype=np.int32), index, value)
    h.setOptionValue("simplex_strategy", 1)  # dual simplex, as linprog's "highs"
    for key, v in options.items():
        h.setOptionValue(key, v)
    h.passModel(lp)
    h.run()
    ms = h.getModelStatus()
    status = _HIGHS_STATUS.get(str(ms).rpartition(".")[2], 2)
    if status != 0:
        return status, float("nan"), None, None, None
    sol = h.getSolution()
    dual = np.asarray(sol.row_dual, dtype=np.float64)
    x = np.asarray(sol.col_value, dtype=np.float64)
    return 0, float(h.getInfo().objective_function_value), x, dual[:m], dual[m:]


def _minimising(lp: Any, start: np.ndarray, index: np.ndarray, value: np.ndarray) -> Any:
    """A quiet one-thread ``highspy.Highs`` for ``lp`` (a ``HighsLp``, minimised) with its
    matrix given column by column (``start``, ``index``, ``value``); the model not yet
    passed."""
    import highspy

    from ..._shared.milp.highs import quiet_highs

    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    lp.sense_ = highspy.ObjSense.kMinimize
    h = quiet_highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    return h


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
    the cap can. ``until`` (a :func:`time.perf_counter` value) caps it instead. A capped
    call (``time_limit`` or ``until``) goes to HiGHS through ``highspy`` (``_LP_BACKEND``;
    its import 0.01-0.04 s), an uncapped one through ``scipy.optimize.linprog`` (its
    import 0.35 s idle, over a second under load; the answers untimed calls always had)."""
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
    options = {} if time_limit is None else {"time_limit": max(float(time_limit), 1e-3)}
    timed = time_limit is not None
    solve = _highs_lp if _LP_BACKEND == "highspy" and timed else _linprog
    status, fun, xk, mu, y = solve(c / c_scale, w, ii, jj, m, n, cap / row, assign_all,
                                   options)  # fmt: skip
    if status == 1 and time_limit is not None:  # stopped at the cap: nothing proven
        raise LpTimedOut
    if status != 0:
        return None, None, None
    value = sign * float(fun) * c_scale
    if instance.integral_cost:  # an integer optimum: round the bound inwards
        value = math.ceil(value - 1e-6) if sense == "min" else math.floor(value + 1e-6)
    x = np.zeros((m, n))
    x[ii, jj] = xk
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


#: The relative margin by which a capacity certificate's left side must exceed its right
#: side (:func:`certificate_excess`): every term of both sums is a product of non-negative
#: floats, so their rounding error is below ``(m + n)`` units in the last place of the
#: sum, far inside 1e-9 for any instance that fits in memory.
CERTIFICATE_MARGIN = 1e-9


def certificate_excess(instance: GapInstance, v: np.ndarray) -> float:
    """How far the multipliers ``v`` prove that no assignment of every item exists:
    ``sum_j min_i v_i w_ij - sum_i v_i b_i`` (the minimum over the agents item ``j``
    fits), when it exceeds ``CERTIFICATE_MARGIN`` of the right side, else 0.

    Any assignment of every item keeps ``sum_i v_i load_i <= sum_i v_i b_i`` for
    ``v >= 0``, and its left side is at least ``sum_j min_i v_i w_ij``: a positive excess
    is a proof, checked here in O(m n) from the instance alone, whoever computed ``v``
    (with ``v`` all ones it is the volume bound).

    Parameters
    ----------
    instance : GapInstance
    v : ndarray of float, shape (m,)
        Non-negative multipliers on the agents' capacities.

    Returns
    -------
    float
        The excess (0.0: ``v`` proves nothing).

    Examples
    --------
    >>> from coalloc.loadshare import GapInstance
    >>> inst = GapInstance([[1, 1, 1], [1, 1, 1]], [[2, 3, 4], [4, 1, 3]], [5, 2])
    >>> certificate_excess(inst, np.array([1.0, 1.0]))  # the volume bound: 2 + 1 + 4 <= 7
    0.0
    >>> certificate_excess(inst, np.array([1.0, 0.0]))  # items 0 and 2 fit agent 0 only
    1.0
    """
    return weights_excess(instance.weight, instance.capacity, v)


def weights_excess(weight: np.ndarray, capacity: np.ndarray, v: np.ndarray) -> float:
    """:func:`certificate_excess` on the arrays: ``weight`` (m, n) and ``capacity`` (m,),
    non-negative integers."""
    v = np.asarray(v, dtype=np.float64)
    m, n = weight.shape
    if n == 0 or v.shape != (m,) or not np.all(np.isfinite(v)) or np.any(v < 0):
        return 0.0
    fits = weight <= capacity[:, None]
    if not np.all(fits.any(axis=0)):
        return 0.0  # an item that fits no agent: a proof of its own, not this one
    lhs = float(np.where(fits, v[:, None] * weight.astype(np.float64), np.inf).min(axis=0).sum())
    rhs = float(v @ capacity.astype(np.float64))
    excess = lhs - rhs
    return excess if lhs > 0 and excess > CERTIFICATE_MARGIN * rhs else 0.0


def capacity_certificate(instance: GapInstance, until: Optional[float] = None
                         ) -> Optional[np.ndarray]:  # fmt: skip
    """Multipliers ``v >= 0`` on the agents' capacities that prove no assignment of every
    item exists (:func:`certificate_excess` positive), or None.

    The Farkas certificate of an infeasible LP relaxation, found by HiGHS as the optimum
    of ``max sum_j t_j - sum_i v_i b_i`` subject to ``t_j <= v_i w_ij`` on the pairs where
    the item fits, ``sum_i v_i b_i = 1``, ``v >= 0`` (positive exactly when the relaxation
    is infeasible), then checked by :func:`certificate_excess` from the instance alone: a
    numerical failure of the LP cannot fake it.

    Parameters
    ----------
    instance : GapInstance
    until : float, optional
        A :func:`time.perf_counter` value at which HiGHS is stopped (None: no cap).

    Returns
    -------
    ndarray of float, shape (m,), or None
        The multipliers, scaled so that ``sum_i v_i b_i = 1``; None when the LP is
        feasible, when HiGHS was stopped or failed, or when the check does not pass.
    """
    return weights_certificate(instance.weight, instance.capacity, until)


def weights_certificate(weight: np.ndarray, capacity: np.ndarray,
                        until: Optional[float] = None) -> Optional[np.ndarray]:  # fmt: skip
    """:func:`capacity_certificate` on the arrays: ``weight`` (m, n) and ``capacity``
    (m,), non-negative integers (the explanations' subsets of items)."""
    m, n = weight.shape
    fits = weight <= capacity[:, None]
    if n == 0 or m == 0 or not np.all(fits.any(axis=0)):
        return None
    cap = capacity.astype(np.float64)
    if not np.any(cap > 0):
        return None
    ii, jj = np.nonzero(fits)
    k = ii.shape[0]
    import highspy

    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = m + n, k + 1
    # columns v_1..v_m, then t_1..t_n; minimise sum_i v_i b_i - sum_j t_j
    lp.col_cost_ = np.concatenate([cap, -np.ones(n)])
    lp.col_lower_ = np.concatenate([np.zeros(m), np.full(n, -inf)])
    lp.col_upper_ = np.full(m + n, inf)
    lp.row_lower_ = np.concatenate([np.full(k, -inf), [1.0]])
    lp.row_upper_ = np.concatenate([np.zeros(k), [1.0]])
    # column v_i: -w_ij in row p of each of its pairs, b_i in the last row; column t_j: 1
    # in each of its pairs' rows (pairs are in row-major order: agent i's rows contiguous)
    rows_v = np.arange(k, dtype=np.int32)
    count_v = np.bincount(ii, minlength=m)
    order_t = np.argsort(jj, kind="stable").astype(np.int32)
    count_t = np.bincount(jj, minlength=n)
    index = np.empty(2 * k + m, dtype=np.int32)
    value = np.empty(2 * k + m)
    start = np.zeros(m + n + 1, dtype=np.int32)
    start[1:m + 1] = np.cumsum(count_v + 1)
    start[m + 1:] = start[m] + np.cumsum(count_t)
    for i in range(m):  # m columns, each its pairs and the normalising row
        a, c = start[i], count_v[i]
        lo = int(start[i] - i)  # the pairs before agent i
        index[a:a + c] = rows_v[lo:lo + c]
        value[a:a + c] = -weight[i, jj[lo:lo + c]]
        index[a + c], value[a + c] = k, cap[i]
    index[start[m]:] = order_t
    value[start[m]:] = 1.0
    h = _minimising(lp, start, index, value)
    if until is not None:
        left = until - time.perf_counter()
        if left <= 0:
            return None
        h.setOptionValue("time_limit", max(left, 1e-3))
    h.passModel(lp)
    h.run()
    if str(h.getModelStatus()).rpartition(".")[2] != "kOptimal":
        return None
    v = np.clip(np.asarray(h.getSolution().col_value[:m], dtype=np.float64), 0.0, None)
    return v if weights_excess(weight, capacity, v) > 0 else None
