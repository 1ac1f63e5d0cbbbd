"""The GAP tabu search's parameters and its resumable state, named.

The compiled kernel :func:`coalloc.loadshare._gapls.tabu_search` (twin:
:func:`coalloc.loadshare._reference.gapls.tabu_search`) keeps its whole state in arrays the
caller owns, so that ``k`` calls of ``t`` iterations give exactly what one call of ``k * t``
gives. :class:`TabuState` owns those arrays and names every slot of the two counter arrays
(``istate``, ``dstate``); :class:`TabuKnobs` names the kernel's scalar parameters and
:class:`TabuPlan` is what the kernel takes (the knobs, the iterations of the call and the
deadline; the kernel copies it into a C struct once per call). The kernel is called
``tabu_search(cost, weight, capacity, state, plan)``; :meth:`TabuState.run` is the one place
in the package that calls it.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Optional, Tuple

import numpy as np

from ..._shared import interrupt
from .. import _gapls

__all__ = ["TabuKnobs", "TabuPlan", "TabuState", "restart_after", "weight_scale"]

#: Tabu parameters: tenure (+ a random 0 .. tenure // 2), items whose swaps are tried per
#: iteration, the penalty weights' factor.
_TENURE, _SWAP_ITEMS, _GROWTH = 5, 100, 1.05
#: The restart rule: after 200 iterations without a new best at first, after one in 60 of
#: the iterations done later on. Long runs on small instances were held near the best by
#: the fixed 200: Yagiura e20100 at 300,000 iterations (about 10 s), 0.522 % mean over seven
#: seeds with 200, 0.447 % over eight with 5000, 0.462 % over seven with this rule, which
#: leaves short runs as they were (bench/RESULTS.md, issue 27, fifth run).
_RESTART, _RESTART_DIV, _RESTART_STEP = 200, 60, 1000
#: One item in ``_SHAKE`` moved at random at a restart (0: none); per-agent penalty
#: weights (0: one factor for all; 1: the overloaded agents' weights grow; 2: each
#: overloaded agent's grows by its share of the largest excess, Yagiura, Ibaraki & Glover
#: 2006).
_SHAKE = 0
_PER_AGENT = 0
#: Per-agent weights where the agents' weights differ in scale (h61heavy): when the largest
#: of the agents' mean weights is at least ``_SCALED_FROM`` times the least, the search's
#: tabu kernel runs with ``per_agent = _SCALED_PER_AGENT`` (timed and untimed calls; the
#: package's ``_PER_AGENT`` elsewhere). The one penalty weight of ``_PER_AGENT = 0`` counts
#: an overload in weight units, so on ``bench.shared.audit_cases.gap_heavy`` (a third of
#: the agents 5x heavier, every agent full at the optimum) one item too many on a heavy
#: agent costs 5x what it costs on a light one: in 6,000 kernel iterations from the
#: rounded LP on heavy 30 x 300 (seed 21) the common weight settled at 74 (24x the first),
#: a heavy agent was never overloaded (0 of the 3,036 infeasible iterations), the best was
#: 4731; with YIG's weights (2) the heavy agents' settled at 11, the light ones' at 36, a
#: heavy agent was overloaded in 2,531 iterations, the best 4617 (optimum 4595). The
#: published files are at most 1.59 (gap9-4; Yagiura e10100 1.57, Chu-Beasley 1.20),
#: heavy 5x, 3x and 10x at about 5, 3 and 10. Measured: bench/loadshare/ISSUE40.md,
#: h61heavy. ``_SCALED_FROM`` inf: off.
_SCALED_FROM, _SCALED_PER_AGENT = 2.5, 2
#: Ejection chains in the tabu search: the most ejections per move (0: shifts and swaps
#: only). One ejection (item j to agent b, b's item k to a third agent) measured better
#: than none at equal CPU time on Chu-Beasley d and Yagiura d; two measured within the
#: seeds' spread of one on Chu-Beasley d and worse on Yagiura d40400 and e801600
#: (bench/RESULTS.md, issue 27, third run).
_CHAIN = 1
#: A candidate list for the swaps and ejection chains (issue 40 item 2, h54gap): item j
#: (sampled) swaps or starts a chain only towards the first ``_CANDS`` of its three best
#: non-tabu shift targets of the iteration (1-3; no effect without chains, which keep
#: those targets), or (``_CANDS < 0``) towards its ``-_CANDS`` cheapest agents (no list
#: where there are no more agents than that); 0: towards every agent. Off. By cost alone
#: it lost on Chu-Beasley d at 1 s (2: 0.364 -> 0.420 %; -5: 0.388 -> 0.407 %; -10:
#: 0.326 -> 0.399 %); ranked by the Lagrangian reduced costs (``_LAG_CANDS``) -10 was
#: better or equal on the 20-agent Chu-Beasley d at 1 s (d20100 0.938 -> 0.808, 0.808
#: -> 0.792 %) but not on Yagiura d40400 at 10 s (0.468 -> 0.448, 0.452 -> 0.439, then
#: 0.480 -> 0.489 and 0.472 -> 0.513 % with other seeds; bench/loadshare/ISSUE40.md,
#: h54gap and its follow-up).
_CANDS = 0
#: The ``_CANDS < 0`` list ranked by the Lagrangian reduced costs ``c_ij + lam_i w_ij``
#: (``lam``: the capacity multipliers of the search's bound, its subgradient's best,
#: refreshed every round; Yagiura, Ibaraki & Glover 2006) instead of the costs alone
#: (False; calls outside the search's rounds, without multipliers, rank by cost). Off
#: (see ``_CANDS``).
_LAG_CANDS = False

#: A memory of the assignments the kernel visited (``TabuKnobs.memo``): a move whose
#: assignment was visited is not admissible (aspiration still applies). 0: none (the
#: kernel as before); 1: every assignment of the kernel call; 2: those since the last
#: restart. On type d at tenure 3, 50-83 % of the iterations revisited an assignment
#: (bench/loadshare/ISSUE40.md, h57gap).
_MEMO = 0
#: The memory's length across kernel calls: :meth:`TabuState.fresh` gives each state a
#: log of the last ``_MEMO_WINDOW`` assignments visited (``TabuState.memo_log``, 64 KiB
#: at 8,192), so the memory outlives a round and the search stays resumable; 0: no log
#: (the memory is each kernel call's own). Used only where ``memo`` is on (timed type d,
#: ``search._CORRELATED_MEMO``). Against no log, five seeds interleaved, load 7-10:
#: Chu-Beasley d at 1 s 0.352 -> 0.320 % and 0.321 -> 0.289 % mean (worst 0.825 ->
#: 0.744, 0.792 -> 0.647); Yagiura d10400/d20400/d40400 at 10 s 0.230 -> 0.227 % and
#: 0.225 -> 0.227 % (worst 0.431 -> 0.415, 0.419 -> 0.423): equal within the spread
#: there (bench/loadshare/ISSUE40.md, h57gap).
_MEMO_WINDOW = 8192


def restart_after(n: int, done: int = 0, base: int = 0, div: int = 0) -> int:
    """Tabu iterations without a new best after which the search restarts from the best,
    when ``done`` iterations have run: ``_RESTART``, growing as the run gets long (one in
    ``_RESTART_DIV`` of the iterations done, counted in whole steps of ``_RESTART_STEP``, so
    the rule does not depend on the rounds).

    Parameters
    ----------
    n : int
        Items (kept for the rule's signature; the rule does not use it today).
    done : int
        Tabu iterations done so far.
    base : int
        The threshold at the start (0: ``_RESTART``).
    div : int
        The growth's divisor (0: ``_RESTART_DIV``); a negative one: no growth (the
        threshold stays at ``base``).

    Returns
    -------
    int
        The restart threshold.

    Examples
    --------
    >>> restart_after(100), restart_after(100, 300_000), restart_after(100, 0, 100)
    (200, 5000, 100)
    >>> restart_after(100, 300_000, div=-1), restart_after(100, 300_000, div=600)
    (200, 500)
    """
    first = base or _RESTART
    if div < 0:
        return first
    return max(first, (done - done % _RESTART_STEP) // (div or _RESTART_DIV))


def weight_scale(weight: np.ndarray) -> float:
    """The largest of the agents' mean weights over the least (1 with fewer than two
    agents or no items, inf when an agent's mean is 0).

    Parameters
    ----------
    weight : numpy.ndarray, shape (m, n)

    Returns
    -------
    float

    Examples
    --------
    >>> weight_scale(np.array([[5, 15], [1, 3]]))
    5.0
    """
    if weight.shape[0] < 2 or weight.shape[1] == 0:
        return 1.0
    mean = weight.mean(axis=1)
    low = float(mean.min())
    return float(mean.max()) / low if low > 0 else float("inf")


@dataclasses.dataclass
class TabuKnobs:
    """The kernel's scalar parameters (see :func:`coalloc.loadshare._gapls.tabu_search`).

    Attributes
    ----------
    tenure : int
        Iterations an item may not return to the agent it left (+ a random ``0 ..
        tenure // 2``).
    restart : int
        Iterations without a new best before a restart from the best.
    swap_items : int
        Items whose swaps are tried per iteration.
    growth : float
        The penalty weights' factor.
    shake : int
        At a restart, about one item in ``shake`` moves to a random agent (0: none).
    per_agent : int
        0 (or False): every weight grows while the assignment is overloaded; 1 (or True):
        only the overloaded agents' weights; 2: each overloaded agent's weight by ``1 +
        (growth - 1) * excess / largest excess`` (Yagiura, Ibaraki & Glover 2006).
    chain : int
        The most ejections of an ejection chain (0: shifts and swaps only).
    cands : int
        Swaps and chains move the sampled item only to one of the first ``cands`` of its
        three best shift targets (needs ``chain >= 1``), or, when negative, to one of its
        ``-cands`` cheapest agents (0: to any agent).
    mult : numpy.ndarray or None
        With ``cands < 0``: the agents' capacity multipliers ``lam`` (``(m,)`` float64);
        the cheapest agents are then those of least ``cost + lam * weight`` (None: of
        least cost).
    memo : int
        The visited assignments a move may not return to (aspiration aside): 0 none, 1
        those of the kernel call, 2 those since the last restart. The memory lives in
        one call (a call split in two may differ from the whole).
    """

    tenure: int = _TENURE
    restart: int = _RESTART
    swap_items: int = _SWAP_ITEMS
    growth: float = _GROWTH
    shake: int = _SHAKE
    per_agent: int = int(_PER_AGENT)
    chain: int = _CHAIN
    cands: int = _CANDS
    mult: Optional[np.ndarray] = None
    memo: int = _MEMO

    @classmethod
    def default(cls, n: int, weight: Optional[np.ndarray] = None) -> TabuKnobs:
        """The package's parameters for ``n`` items (as :func:`solve_gap` runs them);
        ``weight`` (the agents' (m, n) weights, dummy agent aside): per-agent weights
        ``_SCALED_PER_AGENT`` when :func:`weight_scale` is at least ``_SCALED_FROM``."""
        per_agent = int(_PER_AGENT)
        if weight is not None and weight_scale(weight) >= _SCALED_FROM:
            per_agent = int(_SCALED_PER_AGENT)
        return cls(_TENURE, restart_after(n), _SWAP_ITEMS, _GROWTH, _SHAKE, per_agent,
                   _CHAIN, _CANDS, memo=_MEMO)  # fmt: skip

    def as_args(self) -> Tuple[int, int, int, float, int, int, int, int]:
        """The knobs in the kernel's historic positional order (older builds), ``cands``
        last."""
        return (self.tenure, self.restart, self.swap_items, self.growth, self.shake,
                self.per_agent, self.chain, self.cands)  # fmt: skip

    def plan(self, iterations: int,
             deadline: Optional[interrupt.KernelDeadline] = None) -> TabuPlan:  # fmt: skip
        """The kernel's plan for one call of ``iterations`` iterations.

        Parameters
        ----------
        iterations : int
            Iterations of the call (0: set the state up only).
        deadline : KernelDeadline, optional
            The kernel's deadline (None: the calling thread's, built by the kernel).

        Returns
        -------
        TabuPlan
        """
        return TabuPlan(int(iterations), self.tenure, self.restart, self.swap_items,
                        self.growth, self.shake, self.per_agent, self.chain, self.cands,
                        self.mult, deadline=deadline, memo=self.memo)  # fmt: skip


@dataclasses.dataclass
class TabuPlan(TabuKnobs):
    """What one call of the kernel takes besides its arrays: the knobs of
    :class:`TabuKnobs`, the iterations and the deadline (the kernel copies them into its C
    struct ``_TabuPlan`` once per call).

    Attributes
    ----------
    iterations : int
        Iterations of the call (0: set the state up only).
    deadline : KernelDeadline or None
        The kernel's deadline (:func:`coalloc._shared.interrupt.kernel_deadline`; None: the
        calling thread's, built by the kernel).

    Examples
    --------
    >>> TabuKnobs(tenure=3).plan(10).iterations
    10
    """

    iterations: int = 0
    deadline: Optional[interrupt.KernelDeadline] = None

    def __init__(self, iterations: int = 0, tenure: int = _TENURE, restart: int = _RESTART,
                 swap_items: int = _SWAP_ITEMS, growth: float = _GROWTH, shake: int = _SHAKE,
                 per_agent: int = int(_PER_AGENT), chain: int = _CHAIN, cands: int = _CANDS,
                 mult: Optional[np.ndarray] = None, *,
                 deadline: Optional[interrupt.KernelDeadline] = None,
                 memo: int = _MEMO) -> None:  # fmt: skip
        super().__init__(tenure, restart, swap_items, growth, shake, per_agent, chain, cands,
                         mult, memo)  # fmt: skip
        self.iterations = iterations
        self.deadline = deadline


def _slot(array: str, index: int, kind: type, doc: str) -> property:
    """A read-only property naming slot ``index`` of the state array ``array``."""

    def get(self: TabuState) -> Any:
        return kind(getattr(self, array)[index])

    return property(get, doc=doc)


@dataclasses.dataclass
class TabuState:
    """A tabu search's whole resumable state: the arrays the kernel reads and writes.

    ``istate`` and ``dstate`` are the kernel's counter arrays; their slots are named by the
    properties below (read and written through them, never by index elsewhere).

    Attributes
    ----------
    assign : numpy.ndarray of int64, shape (n,)
        The current assignment.
    best : numpy.ndarray of int64, shape (n,)
        The best assignment found: the best feasible one once :attr:`feasible`, else the
        one of least excess, then cost.
    alpha : numpy.ndarray of float64, shape (m,)
        The agents' penalty weights.
    tabu_until : numpy.ndarray of int64, shape (m * n,)
        The iteration until which each (agent, item) pair is tabu.
    istate : numpy.ndarray of int64, shape (6,)
        :attr:`iteration`, :attr:`since_best`, :attr:`swap_start`, :attr:`best_excess`,
        :attr:`feasible`, :attr:`started`.
    dstate : numpy.ndarray of float64, shape (3,)
        :attr:`current_cost`, :attr:`best_cost`, :attr:`first_weight`.
    rng : numpy.ndarray of uint64, shape (1,)
        The splitmix64 state (shared by the searches of one call).
    memo_log : numpy.ndarray of uint64, shape (L + 1,), or None
        The visited-assignment memory's log (:attr:`TabuKnobs.memo`): ``[0]`` the hashes
        written, ``[1:]`` the last ``L`` (a ring); None: the memory is each kernel call's.
    """

    assign: np.ndarray
    best: np.ndarray
    alpha: np.ndarray
    tabu_until: np.ndarray
    istate: np.ndarray
    dstate: np.ndarray
    rng: np.ndarray
    memo_log: Optional[np.ndarray] = None

    @classmethod
    def fresh(cls, start: np.ndarray, m: int, rng: np.ndarray) -> TabuState:
        """A state the kernel sets up on its first call, from ``start`` (copied), for
        ``m`` agents, drawing from ``rng`` (kept, not copied)."""
        assign = np.array(start, dtype=np.int64)
        n = assign.shape[0]
        log = np.zeros(_MEMO_WINDOW + 1, dtype=np.uint64) if _MEMO_WINDOW > 0 else None
        return cls(assign, assign.copy(), np.zeros(m), np.zeros(m * n, dtype=np.int64),
                   np.zeros(6, dtype=np.int64), np.zeros(3), rng, log)  # fmt: skip

    def run(self, cost: np.ndarray, weight: np.ndarray, capacity: np.ndarray,
            iterations: int, knobs: TabuKnobs, until: Optional[float] = None) -> int:  # fmt: skip
        """``iterations`` more tabu iterations (0: set the state up only); returns the
        iterations done (fewer when the deadline or Ctrl-C stopped the kernel).

        ``until`` (a :func:`time.perf_counter` instant): the caller's own deadline, which
        the kernel looks at every iteration: past it the kernel stops, the state kept (it
        resumes exactly), and the iterations done are returned, not an error. A round's
        iterations come from a speed measured before it; under load a round can run
        several times its planned seconds (at a load of 6-8 on two cores, rounds of
        0.25-0.4 s where 0.1 s was planned ran calls 0.15-0.23 s past a 1 s limit,
        bench/loadshare/ISSUE40.md, h50gap follow-up), so a timed search passes its
        deadline here. The deadline of the calling thread's scope still raises.
        """
        plan = knobs.plan(iterations, interrupt.kernel_deadline(until))
        if until is None:
            return _gapls.tabu_search(cost, weight, capacity, self, plan)
        before = self.iteration
        try:
            return _gapls.tabu_search(cost, weight, capacity, self, plan)
        except TimeoutError:
            if time.perf_counter() < until:  # not ours: the scope's deadline or cancel
                raise
            interrupt.check()  # the scope's own error, when it also ended
            return self.iteration - before

    # istate's slots
    iteration = _slot("istate", 0, int, "Iterations done since the state was set up.")
    since_best = _slot("istate", 1, int, "Iterations since the last new best (a restart at "
                       ":attr:`TabuKnobs.restart`).")  # fmt: skip
    swap_start = _slot("istate", 2, int, "The first item whose swaps the next iteration "
                       "tries (cycling).")  # fmt: skip
    best_excess = _slot("istate", 3, int, "The capacity excess of :attr:`best` (0 once "
                        "feasible).")  # fmt: skip
    feasible = _slot("istate", 4, bool, "Whether :attr:`best` keeps every capacity.")
    started = _slot("istate", 5, bool, "Whether the kernel has set the state up (False: the "
                    "next call does).")  # fmt: skip
    # dstate's slots
    current_cost = _slot("dstate", 0, float, "The cost of :attr:`assign`.")
    best_cost = _slot("dstate", 1, float, "The cost of :attr:`best`.")

    @property
    def first_weight(self) -> float:
        """The penalty weight every agent starts from and returns to at a restart."""
        return float(self.dstate[2])

    @first_weight.setter
    def first_weight(self, value: float) -> None:
        self.dstate[2] = value
        self.alpha[:] = value

    @property
    def restart_weight(self) -> float:
        """The penalty weight every agent returns to at the kernel's next restart (the
        first weight; set alone, the current weights are left as they are)."""
        return float(self.dstate[2])

    @restart_weight.setter
    def restart_weight(self, value: float) -> None:
        self.dstate[2] = value

    def restart_from(self, assign: np.ndarray, cost: np.ndarray) -> None:
        """A restart made by the caller (as the kernel's own, but from ``assign``, not from
        :attr:`best`): the current assignment set to ``assign`` (its cost on ``cost``, the
        costs the search runs on), every weight back at the restart weight, the count of
        iterations since the last new best at 0; :attr:`best` is kept."""
        self.assign[:] = assign
        self.dstate[0] = float(cost[self.assign, np.arange(self.assign.shape[0])].sum())
        self.alpha[:] = self.dstate[2]
        self.istate[1] = 0
