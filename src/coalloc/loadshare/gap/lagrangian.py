"""The bound the GAP search carries: the LP's (given), and two Lagrangian relaxations
stepped between the search's rounds.

* The capacities relaxed (:func:`coalloc.loadshare._gapls.subgradient`): ``_LAGR_START``
  subgradient steps before the search (their multipliers give its start when the LP is not
  solved), ``_LAGR_ROUND`` after every round, towards the best objective found.
* The assignment rows relaxed (:func:`coalloc.loadshare._gapls.knapsack_lagrangian`, the
  knapsacks keep their integrality: a tighter bound), when its dynamic programme is small
  enough (``_KNAP_*`` below), started from the capacity multipliers.

Both kernels are resumable: their state lives in the arrays this class keeps.
"""

from __future__ import annotations

import math
import time
from typing import Callable, Optional

import numpy as np

from ..._shared import interrupt
from .. import _gapls
from .bounds import integral_bound

__all__ = ["RelaxationBounds"]

#: Subgradient iterations before the search (they give its start when the LP is not
#: solved) and after every round of it.
_LAGR_START, _LAGR_ROUND = 300, 5
#: The knapsack Lagrangian (the assignment rows relaxed, :func:`_gapls.knapsack_lagrangian`)
#: runs between rounds when one of its steps, ``n * sum_i (b_i + 1)`` cells of dynamic
#: programme, is at most ``_KNAP_STEP_CELLS`` (and its choice table,
#: ``n * (max_i b_i + 1)`` bytes, at most ``_KNAP_TABLE_BYTES``); a round takes
#: ``max(1, _KNAP_ROUND_CELLS // cells)`` steps (about 6 ms here, against a round's 0.1 s);
#: under a time limit only while its steps have taken at most ``_KNAP_SHARE`` of the
#: search's time so far (the rounds shrink near the limit: the share keeps the steps from
#: taking the search's last tenths).
_KNAP_STEP_CELLS, _KNAP_TABLE_BYTES, _KNAP_ROUND_CELLS = 3 * 10**7, 10**8, 4 * 10**6
_KNAP_SHARE = 0.05


class RelaxationBounds:
    """The best bound known to a search, in the caller's sense, and the relaxations that
    improve it.

    Parameters
    ----------
    cost, weight, capacity : numpy.ndarray
        The search's minimisation data (``(m_all, n)``, ``(m_all, n)``, ``(m_all,)``: with
        the dummy agent when items may stay out).
    sense : {"min", "max"}
        The caller's sense (the bounds are reported in it).
    integral : bool
        Integer costs: bounds are rounded inwards.
    lp_bound : float, optional
        The LP relaxation's bound, when solved (and wanted).

    Attributes
    ----------
    lagrangian : float or None
        The best Lagrangian bound so far (None: none computed).
    exact : float or None
        The optimum's value, when the search's exact programme proved it
        (:mod:`.search_proof`).
    subgradient_iterations, knapsack_iterations : int
        Steps done.
    best_lam : numpy.ndarray
        The best capacity multipliers (the greedy start's prices).
    """

    def __init__(self, cost: np.ndarray, weight: np.ndarray, capacity: np.ndarray, sense: str,
                 integral: bool, lp_bound: Optional[float]) -> None:  # fmt: skip
        self.cost, self.weight, self.capacity = cost, weight, capacity
        self.sign = 1.0 if sense == "min" else -1.0
        self.sense = sense
        self.integral = integral
        self.lp_bound = lp_bound
        #: the optimum's value when the search's exact programme proved it (caller's sense)
        self.exact: Optional[float] = None
        self.lagrangian: Optional[float] = None
        m_all, n = cost.shape
        # the capacities relaxed (every item must fit some agent)
        self.subgradient_iterations = 0
        self.lam = np.zeros(m_all)
        self.best_lam = np.zeros(m_all)
        self.x_lag = np.zeros(n, dtype=np.int64)
        self.l_dstate = np.zeros(3)
        self.l_istate = np.zeros(1, dtype=np.int64)
        self.can_lag = n > 0 and bool(np.all((weight <= capacity[:, None]).any(axis=0)))
        self.lag_open = self.can_lag  # False once a zero subgradient ends the steps
        # the assignment rows relaxed (the knapsacks keep their integrality)
        self.knapsack_iterations = 0
        cells = n * int((capacity + 1).sum()) if n else 0
        self.knap_open = (self.can_lag and cells <= _KNAP_STEP_CELLS
                          and n * (int(capacity.max()) + 1) <= _KNAP_TABLE_BYTES)  # fmt: skip
        self.u = np.zeros(n)
        self.best_u = np.zeros(n)
        self.cover = np.zeros(n, dtype=np.int64)
        self.k_dstate = np.zeros(3)
        self.k_istate = np.zeros(1, dtype=np.int64)
        self.k_round = max(1, _KNAP_ROUND_CELLS // max(cells, 1))
        self.knapsack_seconds = 0.0

    def best(self) -> Optional[float]:
        """The best bound known (LP, Lagrangian, or the exact programme's optimum), or None."""
        known = [v for v in (self.lp_bound, self.lagrangian, self.exact) if v is not None]
        if not known:
            return None
        return max(known) if self.sense == "min" else min(known)

    def _offer(self, minimum_bound: float) -> None:
        """A Lagrangian value (of the minimisation) as a bound in the caller's sense."""
        value = self.sign * integral_bound(minimum_bound, "min", self.integral)
        lag = self.lagrangian
        if lag is None or (value > lag if self.sense == "min" else value < lag):
            self.lagrangian = value

    def subgradient_steps(self, k: int, target: float) -> int:
        """``k`` subgradient steps towards ``target`` (the minimisation's value); returns
        the steps done (fewer: a zero subgradient ended them)."""
        got = _gapls.subgradient(self.cost, self.weight, self.capacity, self.lam, self.best_lam,
                                 self.x_lag, self.l_dstate, self.l_istate, k, target,
                                 interrupt.kernel_deadline())  # fmt: skip
        self.subgradient_iterations += got
        if math.isfinite(float(self.l_dstate[0])):  # overflowed multipliers: no bound
            self._offer(float(self.l_dstate[0]))
        return got

    def knapsack_steps(self, k: int, target: float) -> bool:
        """``k`` knapsack-Lagrangian steps; False when they ended early (a zero subgradient)
        or the multipliers overflowed (no more steps)."""
        t_k = time.perf_counter()
        got = _gapls.knapsack_lagrangian(self.cost, self.weight, self.capacity, self.u,
                                         self.best_u, self.cover, self.k_dstate, self.k_istate,
                                         k, target, interrupt.kernel_deadline())  # fmt: skip
        self.knapsack_seconds += time.perf_counter() - t_k
        self.knapsack_iterations += got
        if not math.isfinite(float(self.k_dstate[0])):  # overflowed multipliers: no bound
            return False
        self._offer(float(self.k_dstate[0]))
        return got == k and bool(np.all(np.isfinite(self.u)))

    def start(self, out_of_time: Callable[[], bool], group: int = 25) -> None:
        """The steps before the search: up to ``_LAGR_START`` subgradient steps (in groups
        of ``group``, until ``out_of_time()``), then the knapsack multipliers from the best
        capacity multipliers (``L(u)`` is then at least their bound)."""
        if self.can_lag:
            while self.subgradient_iterations < _LAGR_START and not out_of_time():
                k = min(group, _LAGR_START - self.subgradient_iterations)
                if self.subgradient_steps(k, -1e300) < k:
                    self.lag_open = False
                    break
        if self.knap_open:
            weight, cost = self.weight, self.cost
            fit = weight <= self.capacity[:, None]
            self.u[:] = np.where(fit, cost + self.best_lam[:, None] * weight, np.inf).min(axis=0)
            # the capacity multipliers grow without bound where the capacities cannot be met
            self.knap_open = bool(np.all(np.abs(self.u) < 1e15))

    def subgradient_due(self) -> bool:
        """Whether subgradient steps may still raise the bound (steps open, step size not
        yet negligible)."""
        return self.lag_open and self.l_dstate[1] > 1e-6

    def subgradient_round(self, target: float) -> None:
        """The ``_LAGR_ROUND`` steps between two rounds of the search."""
        self.lag_open = self.subgradient_steps(_LAGR_ROUND, target) == _LAGR_ROUND

    def knapsack_due(self, timed: bool, search_seconds: float) -> bool:
        """Whether knapsack steps may run now: open, step size not negligible, and under a
        time limit (``timed``) within ``_KNAP_SHARE`` of the search's time so far."""
        if not (not timed or self.knapsack_seconds <= _KNAP_SHARE * search_seconds):
            return False
        return self.knap_open and (self.k_dstate[2] == 0 or self.k_dstate[1] > 1e-6)

    def knapsack_round(self, target: float) -> None:
        """One round of knapsack steps (``k_round`` of them) between two search rounds."""
        self.knap_open = self.knapsack_steps(self.k_round, target)
