"""The GAP search's start (:mod:`.search`): the search's arrays, the multipliers' greedy
(:func:`reduced_cost_greedy`) and its shift descent, the core phase's costs
(:func:`core_costs`), the cost-weight correlation that picks type d's rules, and the
start's steps of a run (:class:`StartSteps`: the rounded LP or the greedy, the
capacity shares' fallback and its repair, the judge of a start when no round runs).

The knobs these read (``_GREEDY_CHECK``, ``_REPAIR_ITERATIONS``, ``_LATE_PAIRS``,
``_CORE_PERCENTILE``) stay in :mod:`.search`, where the benches and the tests set them;
they are read from there at each call.
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from ..._shared import interrupt
from ..._shared.seeding import kernel_seed
from .. import _gapls
from .model import GapInstance, objective_of
from .tabu import TabuKnobs, TabuState

__all__ = ["reduced_cost_greedy", "cost_weight_correlation", "core_costs", "StartSteps"]


def _k():
    """The knobs' module, :mod:`.search` (imported here on use: it imports this one)."""
    from . import search

    return search


def core_costs(cost: np.ndarray, x_lp: Optional[np.ndarray], rc: Optional[np.ndarray],
               assign_all: bool, m: int,
               keep: Optional[np.ndarray] = None,
               percentile: Optional[float] = None) -> Optional[np.ndarray]:  # fmt: skip
    """The costs of the core phase (``cost``, the search's (m_all, n) costs; the far price
    outside the core), or None: no LP, nothing positive to cut at, or a core of every
    pair. ``keep`` (an assignment, (n,)): its pairs are in the core too. ``percentile``:
    where the positive reduced costs are cut (None: ``search._CORE_PERCENTILE``)."""
    if percentile is None:
        percentile = _k()._CORE_PERCENTILE
    if x_lp is None or rc is None or rc.shape != cost.shape:
        return None
    support = x_lp > 1e-9
    if not assign_all:  # the dummy agent holds what the LP leaves out
        support = np.vstack([support, x_lp.sum(axis=0) < 1.0 - 1e-9])
    scale = float(np.abs(cost).max()) + 1.0
    finite = np.isfinite(rc)
    positive = rc[finite & (rc > 1e-9 * scale)]
    if positive.size == 0:
        return None
    tau = float(np.percentile(positive, percentile))
    core = support | (finite & (rc <= tau))
    if keep is not None:
        core[keep, np.arange(cost.shape[1])] = True
    if np.all(core | ~finite):
        return None
    return np.ascontiguousarray(np.where(core, cost, 1e4 * scale), dtype=np.float64)


def cost_weight_correlation(cost: np.ndarray, weight: np.ndarray) -> float:
    """The correlation coefficient of the costs and the weights over every pair (0 when
    either is constant): about -0.98 on the published type d, -0.57 on type e.

    Parameters
    ----------
    cost : numpy.ndarray, shape (m, n)
        The costs (of the minimisation).
    weight : numpy.ndarray, shape (m, n)
        The weights.

    Returns
    -------
    float
        In ``[-1, 1]``.

    Examples
    --------
    >>> w = np.array([[1, 2], [3, 4]])
    >>> round(cost_weight_correlation(10.0 - w, w), 6)
    -1.0
    """
    c = np.asarray(cost, dtype=np.float64).ravel()
    w = np.asarray(weight, dtype=np.float64).ravel()
    if c.size < 2:
        return 0.0
    c, w = c - c.mean(), w - w.mean()
    den = float(np.sqrt((c * c).sum() * (w * w).sum()))
    return float((c * w).sum() / den) if den > 0 else 0.0


def reduced_cost_greedy(
    cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, lam: np.ndarray,
    until: Optional[float] = None,
) -> np.ndarray:
    """A start from the Lagrangian multipliers: reduced costs ``c_ij + lam_i w_ij``; the
    items in decreasing regret (second least reduced cost minus the least), each to the
    agent of least reduced cost among those it still fits, else to the one with the most
    room left (the search repairs it). O(n m) in all.

    ``until`` (a :func:`time.perf_counter` instant): the loop looks at the clock every
    ``_GREEDY_CHECK`` items and, once past it, sends every item left to its agent of least
    reduced cost at once (capacities unheeded: the caller judges the result). The loop is
    Python's: 0.06-0.18 s on Yagiura d801600 (1,600 items, 80 agents) at a load of 5-9,
    run after a 0.05-0.2 s limit before it had one."""
    m, n = cost.shape
    red = cost + lam[:, None] * weight
    if until is not None and time.perf_counter() >= until:  # (nothing in time: the least)
        return np.argmin(red, axis=0).astype(np.int64) if n else np.empty(0, dtype=np.int64)
    if m > 1:
        two = np.partition(red, 1, axis=0)[:2]
        regret = two[1] - two[0]
    else:
        regret = np.zeros(n)
    order = np.argsort(-regret, kind="stable")
    check = _k()._GREEDY_CHECK
    rem = cap.astype(np.int64).copy()
    assign = np.empty(n, dtype=np.int64)
    for k, j in enumerate(order.tolist()):
        if until is not None and k % check == 0 and k and time.perf_counter() >= until:
            rest = order[k:]
            assign[rest] = np.argmin(red[:, rest], axis=0)
            break
        col = np.where(weight[:, j] <= rem, red[:, j], np.inf)
        i = int(np.argmin(col))
        if not np.isfinite(col[i]):
            i = int(np.argmax(rem - weight[:, j]))
        assign[j] = i
        rem[i] -= weight[i, j]
    return assign


def _descent(cost: np.ndarray, weight: np.ndarray, cap: np.ndarray, x: np.ndarray,
             until: Optional[float]) -> None:
    """The shift descent (50 sweeps) on ``x`` in place, stopped at ``until`` (its moves so
    far kept: each leaves a whole assignment) as well as at the batch's deadline."""
    try:
        _gapls.shift_descent(cost, weight, cap, x, 50, interrupt.kernel_deadline(until))
    except TimeoutError:
        if until is None or time.perf_counter() < until:
            raise  # the batch's timeout, not the call's limit
        # the call's limit passed (a batch deadline as well: its next check raises it)


def _search_arrays(inst: GapInstance, sense: str, assign_all: bool):
    """The minimisation's cost, weight and capacity, with a dummy agent (index m) that
    takes anything at no cost when items may stay out."""
    sign = 1.0 if sense == "min" else -1.0
    cost, weight, cap, n = sign * inst.cost, inst.weight, inst.capacity, inst.n
    if not assign_all:
        cost = np.vstack([cost, np.zeros((1, n))])
        weight = np.vstack([weight, np.zeros((1, n), dtype=np.int64)])
        cap = np.concatenate([cap, [0]]).astype(np.int64)
    return (np.ascontiguousarray(cost, dtype=np.float64),
            np.ascontiguousarray(weight, dtype=np.int64),
            np.ascontiguousarray(cap, dtype=np.int64))  # fmt: skip


#: The fallbacks after the limit (``late``: no feasible assignment by then) repair the
#: greedy's overload as the feasibility-first start does (at most ``_REPAIR_ITERATIONS``,
#: by ``_LATE_SHARE`` of the allowance; whole up to ``_LATE_PAIRS``): before h59gap
#: (False) a 0.05 s call on the audit's heavy 3 x 8 "max" whose start came after the
#: limit ended without an answer, the heuristic's as the default's; the first tabu round
#: makes these tight instances feasible, the greedy alone overloads them
#: (bench/loadshare/ISSUE40.md).
_LATE_REPAIR = True


class StartSteps:
    """The start's steps of :class:`.search._Search` (a mixin: the attributes are the
    search's)."""

    def start(self, x_lp: Optional[np.ndarray]) -> np.ndarray:
        """Every item to the agent with the largest LP share (the dummy agent when the LP
        leaves more than half of it unassigned), or the multipliers' greedy and a descent."""
        if x_lp is not None and self.n:
            start = np.argmax(x_lp, axis=0).astype(np.int64)
            if not self.assign_all:
                start[x_lp.sum(axis=0) < 0.5] = self.inst.m
            return start
        start = reduced_cost_greedy(self.cost, self.weight, self.cap, self.bounds.best_lam,
                                    self.deadline)  # fmt: skip
        _descent(self.cost, self.weight, self.cap, start, self.deadline)
        return start

    def repair(self, share: np.ndarray, x: np.ndarray, until: Any = "deadline") -> np.ndarray:
        """At most ``_REPAIR_ITERATIONS`` tabu iterations on the capacity shares ``share``
        from ``x``, in rounds that end at the first feasible assignment or ``until`` (a
        clock value; None: none; by default the deadline); the state's best (feasible or
        of least excess). Its draws are its own (from the call's seed), so the search's
        are those of a call without it."""
        until = self.deadline if isinstance(until, str) else until
        rng = np.array([kernel_seed(self.seed) ^ 0xFEA5], dtype=np.uint64)
        state = TabuState.fresh(x, self.m_all, rng)
        knobs = TabuKnobs.default(self.n)
        state.run(share, self.weight, self.cap, 0, knobs)
        state.first_weight = (float(share.sum()) + 1.0) / (float(self.weight.sum()) + 1.0)
        done, most = 0, _k()._REPAIR_ITERATIONS
        while (not state.feasible and done < most and not self.halted()
               and (until is None or time.perf_counter() < until)):  # fmt: skip
            got = state.run(share, self.weight, self.cap, min(50, most - done), knobs, until)
            if not got:
                break
            done += got
        self.repair_iterations += done
        return state.best.copy()

    def fallback(self, start: np.ndarray, repair: bool = False, late: bool = False) -> bool:
        """When the start (no LP) leaves an agent overloaded: every item assigned, in
        decreasing regret of its capacity share ``w_ij / b_i``, to the agent of least
        share it still fits (else of most room), polished by the shift descent; kept as
        the incumbent when it keeps every capacity (True: kept; the tabu search then starts
        from it when the time left is short, ``_FROM_FALLBACK``), and the search replaces
        it with anything better: the answer can only improve. On Yagiura c801600, whose
        multipliers' greedy overloads all 80 agents, it gives a feasible 20029 (best
        known 16285) at once, where a 1 s call under a load of 12 ended without an
        assignment (bench/loadshare/ISSUE40.md). ``repair``: when the greedy overloads an
        agent, :meth:`repair` first (the feasibility-first start, ``_FEASIBLE_FIRST``; the
        descent's result is kept only when it still keeps every capacity). Under a limit the
        greedy and the descent stop at the deadline (``late``: at ``self.late``, for the
        fallbacks that run after it by design)."""
        n, m = self.n, self.m_all
        if not self.assign_all or not n or np.any(self.cap <= 0):
            return False
        until = self.late if late else self.deadline
        repair = repair or (late and _LATE_REPAIR)
        if late and n * m <= _k()._LATE_PAIRS:
            until = None  # (small: a millisecond or two, the answer rather than none)
        if until is not None and time.perf_counter() >= until:
            return False
        cols = np.arange(n)
        load = np.bincount(start, weights=self.weight[start, cols], minlength=m)
        if np.all(load <= self.cap):
            return False
        share = np.ascontiguousarray(self.weight / self.cap[:, None], dtype=np.float64)
        x = reduced_cost_greedy(share, self.weight, self.cap, np.zeros(m), until)
        if repair and m > 1:
            load = np.bincount(x, weights=self.weight[x, cols], minlength=m)
            if np.any(load > self.cap):
                x = self.repair(share, x, until)
                self.repaired = True
        kept = x.copy()
        _descent(self.cost, self.weight, self.cap, x, until)
        load = np.bincount(x, weights=self.weight[x, cols], minlength=m)
        if repair and np.any(load > self.cap):  # the descent judged: the repaired greedy
            x = kept
            load = np.bincount(x, weights=self.weight[x, cols], minlength=m)
        if np.all(load <= self.cap):
            obj = objective_of(self.inst, x, self.assign_all)
            self.feasible, self.best_obj, self.incumbent = True, obj, x
            self.trajectory.append((self.now(), obj, self.bounds.best()))
            return True
        return False

    def judge(self, x: np.ndarray) -> None:
        """``x`` into the incumbent when it keeps every capacity and is better (none
        feasible yet: kept as the incumbent, the least-excess stand-in)."""
        cols = np.arange(self.n)
        load = np.bincount(x, weights=self.weight[x, cols], minlength=self.m_all)
        if not np.all(load <= self.cap):
            if not self.feasible:
                self.incumbent = np.ascontiguousarray(x, dtype=np.int64)
            return
        obj = objective_of(self.inst, x, self.assign_all)
        better = self.best_obj is not None and (
            obj < self.best_obj if self.sense == "min" else obj > self.best_obj)  # fmt: skip
        if not self.feasible or better:
            self.feasible, self.best_obj = True, obj
            self.incumbent = np.ascontiguousarray(x, dtype=np.int64).copy()
            self.trajectory.append((self.now(), obj, self.bounds.best()))
