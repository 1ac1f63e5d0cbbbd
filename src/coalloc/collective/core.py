"""Helpers every method shares: the request resolved against a pool, candidate starts,
window availability (through the compiled kernel or its twin) and Phase VI amounts."""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple, Optional

import numpy as np

from .._shared import interrupt
from .._shared import params as checks
from .._shared.result import relative_gap, settle
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult

BACKENDS = ("compiled", "numpy")


class Demand(NamedTuple):
    """What a request asks of a set of nodes, as the screen kernels take it (``screen``,
    ``weighted_screen``, ``block_screen``, ``pruned_screen``, ``window_screen``, ``scan_screen``
    and their twins)."""

    #: The per-property minimums ``e`` (float64, shape (m,)).
    e: np.ndarray
    #: The per-property totals ``d`` (float64, shape (m,)).
    d: np.ndarray
    #: ``N``, the number of nodes.
    count: int
    #: The tolerance ``tau_i`` per property (float64, shape (m,); zeros: none).
    tol: np.ndarray


class ScreenOut(NamedTuple):
    """The screens' outputs per start (OUT, allocated by the caller, :class:`Kernels`)."""

    #: 0 (passes), 1 (too few nodes meet every minimum), 2 (a total missed), 3 (the equal
    #: weights prove no set; ``block_screen``, ``weighted_screen``), int64 (S,).
    code: np.ndarray
    #: The eligible nodes per start, int64 (S,).
    elig: np.ndarray
    #: The binding property per start (-1: none), int64 (S,).
    prop: np.ndarray
    #: Its count or best reachable sum, float64 (S,).
    value: np.ndarray


class ScanPlan(NamedTuple):
    """The starts ``scan_screen`` screens and how: in order, a first block of
    ``first_block`` starts, then blocks of ``max_block``."""

    #: The candidate starts (float64, shape (S,)).
    starts: np.ndarray
    #: The request's duration (seconds).
    duration: float
    #: The first block's size (>= 1).
    first_block: int
    #: The later blocks' size (>= first_block).
    max_block: int


def _screen_out(S: int) -> ScreenOut:
    """Fresh OUT arrays of the screens for ``S`` starts."""
    return ScreenOut(np.empty(S, np.int64), np.empty(S, np.int64), np.empty(S, np.int64),
                     np.empty(S))  # fmt: skip


def kernels(backend: str) -> Kernels:
    """The compiled kernels (``"compiled"``) or their NumPy twins (``"numpy"``), behind
    :class:`Kernels` (which converts the inputs and allocates the outputs)."""
    if backend == "compiled":
        from . import _search

        return Kernels(_search)
    if backend == "numpy":
        from ._reference import search

        return Kernels(search)
    return kernels(checks.check_backend(backend))


def _f64(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64)


def _i64(x) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.int64)


class Kernels:
    """The Python caller of the search kernels (``_search`` or its twin ``_reference.search``).

    The kernels take C-contiguous typed arrays tagged IN (read only), OUT (allocated here,
    written by the kernel) or INOUT (a fresh copy made here, overwritten), and return
    scalars only (``docs/architecture.md``, "Kernel arguments"). Each method converts its
    inputs once, allocates the outputs and returns them; ``tol=None`` means zeros (no
    tolerance). The kernel is looked up at each call (a test may wrap it).

    Parameters
    ----------
    module : module
        :mod:`coalloc.collective._search` or :mod:`coalloc.collective._reference.search`.
    """

    def __init__(self, module):
        self.module = module

    def window_max(self, times, reserved, starts, duration):
        """The ``(S, n, m)`` window maxima (kernel ``window_max``)."""
        reserved, starts = _f64(reserved), _f64(starts)
        out = np.empty((starts.shape[0], reserved.shape[0], reserved.shape[1]))
        self.module.window_max(_f64(times), reserved, starts, float(duration), out)
        return out

    def window_max_rows(self, times, reserved, nodes, starts, duration, out=None):
        """The ``(S, len(nodes), m)`` window maxima of the rows ``nodes`` for ascending
        ``starts`` (kernel ``window_max_rows``), into ``out`` when given (C-contiguous)."""
        reserved, nodes, starts = _f64(reserved), _i64(nodes), _f64(starts)
        if out is None:
            out = np.empty((starts.shape[0], nodes.shape[0], reserved.shape[1]))
        self.module.window_max_rows(_f64(times), reserved, nodes, starts, float(duration), out)
        return out

    def min_counts(self, times, reserved, nodes, starts, duration, cap, e, tol=None):
        """``(eligible, meet)``: :meth:`block_screen`'s eligible counts and, per property,
        the nodes meeting its minimum (``(S, m)``), without the window maxima (kernel
        ``min_counts``, issue 40)."""
        reserved, nodes, starts = _f64(reserved), _i64(nodes), _f64(starts)
        S, m = starts.shape[0], reserved.shape[1]
        elig, meet = np.empty(S, np.int64), np.empty((S, m), np.int64)
        self.module.min_counts(_f64(times), reserved, nodes, starts, float(duration), _f64(cap),
                               _f64(e), self._tol(tol, m), elig, meet)  # fmt: skip
        return elig, meet

    def block_maxima(self, reserved, B):
        """The ``(N, m, ceil(K / B))`` maxima of blocks of ``B`` segments of every row of
        ``reserved`` (kernel ``block_maxima``)."""
        reserved = _f64(reserved)
        n, m, K = reserved.shape
        out = np.empty((n, m, -(-K // int(B))))
        self.module.block_maxima(reserved, int(B), out)
        return out

    def block_minima(self, reserved, B):
        """The ``(N, m, ceil(K / B))`` minima of blocks of ``B`` segments of every row of
        ``reserved`` (kernel ``block_minima``)."""
        reserved = _f64(reserved)
        n, m, K = reserved.shape
        out = np.empty((n, m, -(-K // int(B))))
        self.module.block_minima(reserved, int(B), out)
        return out

    def window_max_blocks(self, times, reserved, bm, B, nodes, starts, duration):
        """The ``(S, len(nodes), m)`` window maxima from block maxima ``bm`` of ``B`` segments
        (kernel ``window_max_blocks``)."""
        reserved, nodes, starts = _f64(reserved), _i64(nodes), _f64(starts)
        out = np.empty((starts.shape[0], nodes.shape[0], reserved.shape[1]))
        self.module.window_max_blocks(_f64(times), reserved, _f64(bm), int(B), nodes, starts,
                                      float(duration), out)  # fmt: skip
        return out

    @staticmethod
    def _tol(tol, m):
        return np.zeros(m) if tol is None else _f64(tol)

    def screen(self, tmax, cap, e, d, count, tol=None):
        """``(code, eligible, prop, value)`` per start (kernel ``screen``)."""
        tmax = _f64(tmax)
        out = _screen_out(tmax.shape[0])
        demand = Demand(_f64(e), _f64(d), count, self._tol(tol, tmax.shape[2]))
        self.module.screen(tmax, _f64(cap), demand, out)
        return out

    def block_screen(self, tmax, cap, e, d, count, tol=None):
        """``(code, eligible, prop, value)`` per start, as :meth:`screen` then
        :meth:`weighted_screen` (codes 0-3; kernel ``block_screen``, one pass, issue 40)."""
        tmax = _f64(tmax)
        out = _screen_out(tmax.shape[0])
        demand = Demand(_f64(e), _f64(d), count, self._tol(tol, tmax.shape[2]))
        self.module.block_screen(tmax, _f64(cap), demand, out)
        return out

    def pruned_screen(self, tmax, cap, e, d, count, sub, tol=None):
        """``(code, eligible, prop, value, rows)``: :meth:`block_screen`'s outputs, equal bit
        for bit, from only the nodes that can matter per sub-block of ``sub`` starts
        (kernel ``pruned_screen``, issue 40); ``rows``: the rows screened, summed over the
        sub-blocks."""
        tmax = _f64(tmax)
        out = _screen_out(tmax.shape[0])
        demand = Demand(_f64(e), _f64(d), count, self._tol(tol, tmax.shape[2]))
        rows = self.module.pruned_screen(tmax, _f64(cap), demand, int(sub), out)
        return (*out, int(rows))

    def window_screen(self, times, reserved, bm, B, nodes, starts, duration, cap, e, d, count,
                      sub, tol=None, bn=None):
        """``(code, eligible, prop, value, rows)``: :meth:`block_screen`'s outputs over the
        window maxima :meth:`window_max_rows` gives, equal bit for bit, from the rows that can
        matter per sub-block of ``sub`` starts (bounds from the block maxima ``bm`` of ``B``
        segments, and the block minima ``bn`` when given: the same outputs, fewer amounts
        read) and their window maxima only (kernel ``window_screen``, issue 40); ``rows``: the
        rows screened, summed over the sub-blocks."""
        reserved, nodes, starts = _f64(reserved), _i64(nodes), _f64(starts)
        out = _screen_out(starts.shape[0])
        demand = Demand(_f64(e), _f64(d), count, self._tol(tol, reserved.shape[1]))
        rows = self.module.window_screen(_f64(times), reserved, _f64(bm), int(B), nodes, starts,
                                         float(duration), _f64(cap), demand, int(sub), out,
                                         *(() if bn is None else (_f64(bn),)))  # fmt: skip
        return (*out, int(rows))

    def bound_screen(self, times, reserved, nodes, starts, duration, cap, e, d, count, stride,
                     group, tol=None, extrema=None):
        """``(code, eligible, prop, value, decided)``: :meth:`block_screen`'s code and property
        at the starts the bounds decide (codes 1 and 2, ``value`` NaN for 2; -1: undecided),
        without every node's window maxima held or sorted (kernel ``bound_screen``, issue
        40); ``decided``: how many starts. ``extrema``: ``(bm, bn, B)``, the block maxima and
        minima of ``B`` segments (the rows' bounds from them: fewer reads)."""
        reserved, nodes, starts = _f64(reserved), _i64(nodes), _f64(starts)
        out = _screen_out(starts.shape[0])
        demand = Demand(_f64(e), _f64(d), count, self._tol(tol, reserved.shape[1]))
        more = () if extrema is None else (_f64(extrema[0]), _f64(extrema[1]), int(extrema[2]))
        got = self.module.bound_screen(_f64(times), reserved, nodes, starts, float(duration),
                                       _f64(cap), demand, int(stride), int(group), out, *more)
        return (*out, int(got))

    def weighted_screen(self, tmax, cap, e, d, count, code, tol=None):
        """``code`` (a copy) with 3 where the equal weights prove a start that passed the
        screens (code 0) has no set (kernel ``weighted_screen``, issue 40)."""
        tmax = _f64(tmax)
        code = np.array(code, dtype=np.int64)
        demand = Demand(_f64(e), _f64(d), count, self._tol(tol, tmax.shape[2]))
        self.module.weighted_screen(tmax, _f64(cap), demand, code)
        return code

    def select_and_swap(self, avail, tmax, cap, d, count, l1, seed, tol=None):
        """``(sel, ok, attempts)``: SelectAndSwap of ``count`` rows (kernel ``select_and_swap``)."""
        avail = _f64(avail)
        sel = np.empty(count, dtype=np.int64)
        ok, attempts = self.module.select_and_swap(
            avail, _f64(tmax), _f64(cap), _f64(d), l1, seed, self._tol(tol, avail.shape[1]), sel,
            interrupt.kernel_deadline(),
        )  # fmt: skip
        return sel, ok, attempts

    def phase5(self, avail, tmax, cap, d, sel, l2, seed, tol=None):
        """``(sel, accepted)``: Phase V from a copy of ``sel`` (kernel ``phase5``)."""
        avail = _f64(avail)
        sel = np.array(sel, dtype=np.int64, copy=True).ravel()
        accepted = self.module.phase5(avail, _f64(tmax), _f64(cap), _f64(d), l2, seed,
                                      self._tol(tol, avail.shape[1]), sel,
                                      interrupt.kernel_deadline())  # fmt: skip
        return sel, accepted

    def swap_search(self, avail, tmax, cap, d, sel, max_rounds, tol=None):
        """``(sel, rounds)``: the swap search from a copy of ``sel`` (kernel ``swap_search``)."""
        avail = _f64(avail)
        sel = np.array(sel, dtype=np.int64, copy=True).ravel()
        rounds = self.module.swap_search(avail, _f64(tmax), _f64(cap), _f64(d), max_rounds,
                                         self._tol(tol, avail.shape[1]), sel,
                                         interrupt.kernel_deadline())  # fmt: skip
        return sel, rounds

    def scan_screen(self, times, reserved, nodes, cap, demand: Demand, plan: ScanPlan):
        """``(stop, code, eligible, prop, value, tmax)`` (kernel ``scan_screen``);
        ``demand.tol`` None means zeros."""
        reserved, nodes = _f64(reserved), _i64(nodes)
        starts = _f64(plan.starts)
        n, m = nodes.shape[0], reserved.shape[1]
        out, tmax = _screen_out(starts.shape[0]), np.empty((n, m))
        demand = Demand(_f64(demand.e), _f64(demand.d), demand.count,
                        self._tol(demand.tol, m))  # fmt: skip
        plan = plan._replace(starts=starts, duration=float(plan.duration))
        stop = self.module.scan_screen(_f64(times), reserved, nodes, _f64(cap), demand, plan,
                                       out, tmax, interrupt.kernel_deadline())  # fmt: skip
        return (stop, *out, tmax)

    def decrease_starts(self, times, reserved, nodes, lo, hi):
        """The candidate starts, ascending (kernel ``decrease_starts``)."""
        times = _f64(times)
        out = np.empty(times.shape[0] + 1)
        c = self.module.decrease_starts(times, _f64(reserved), _i64(nodes), float(lo),
                                        float(hi), out)  # fmt: skip
        return out[:c].copy()


def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` element by element, 1 where ``den`` is 0 (the factor's ``0/0`` rule: a
    property the set has none of needs none and wastes none)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.ones(np.broadcast(num, den).shape)
    return np.divide(num, den, out=out, where=den > 0)


@dataclass
class CollectiveProblem:
    """A request resolved against a pool (vectors, the label/capacity match) and the
    family's tolerance rule: ``elo = e - tau`` for one amount, ``dlo = d - N tau`` for the
    sum of ``N`` amounts (:data:`~coalloc.collective.model.TOLERANCE`)."""

    pool: ResourcePool
    request: CollectiveRequest
    e: np.ndarray
    d: np.ndarray
    matching: np.ndarray  # nodes whose labels match and whose capacity is >= e (indices)
    label_ok: np.ndarray  # mask: labels match
    tol: np.ndarray  # tau_i per property
    elo: np.ndarray  # e - tau: an amount meets the minimum when >= elo
    dlo: np.ndarray  # d - N tau: N amounts meet the total when their sum is >= dlo

    @classmethod
    def of(cls, pool: ResourcePool, request: CollectiveRequest) -> Problem:
        if not isinstance(pool, ResourcePool):
            raise TypeError(f"pool must be a ResourcePool, got {type(pool).__name__}")
        if not isinstance(request, CollectiveRequest):
            raise TypeError(f"request must be a CollectiveRequest, got {type(request).__name__}")
        e, d = request.vectors(pool.names)
        tol = pool.tolerance
        elo, dlo = e - tol, d - request.count * tol
        label_ok = pool.match(request.labels)
        cap_ok = np.all(pool.capacity >= elo[None, :], axis=1)
        return cls(pool, request, e, d, np.flatnonzero(label_ok & cap_ok), label_ok, tol, elo,
                   dlo)  # fmt: skip


#: The older name of :class:`CollectiveProblem`.
Problem = CollectiveProblem


#: :func:`decrease_starts` reads the reserved amounts of this many nodes at a time (a copy of
#: their window only), with a look at the deadline between two blocks; it stops early once
#: every breakpoint of the window is a start.
DECREASE_BLOCK = 128


def decrease_starts(pool: ResourcePool, nodes: np.ndarray, lo: float, hi: float,
                    deadline: Optional[float] = None) -> np.ndarray:  # fmt: skip
    """``lo`` and the breakpoints in ``(lo, hi]`` where a reserved amount of ``nodes`` falls
    (where availability increases): the only possible earliest starts (Phase III).

    The reserved amounts are read ``DECREASE_BLOCK`` nodes at a time, over the window's
    breakpoints only (no copy of the whole ``reserved[nodes]``: 17 MB for 2,554 of 3,000
    nodes, 15-40 ms under load, before a limit's first look at its deadline: issue 36),
    and the pass ends once every breakpoint of the window is a start. With ``deadline`` (a
    ``time.perf_counter()`` instant) the pass looks at it between two blocks; stopped
    there, every breakpoint of the window is returned (the starts not ruled out yet: a
    superset of the full pass's, each still a possible start) and the caller, looking at
    its deadline before its first start, reports them undecided.
    """
    times, res = pool.times, pool.reserved
    lo, hi = float(lo), float(hi)
    out = [lo]
    if nodes.size and times.shape[0] > 1:
        k0 = max(int(np.searchsorted(times, lo, side="right")), 1)  # first k with t_k > lo
        k1 = int(np.searchsorted(times, hi, side="right"))  # t_k <= hi for k < k1
        if k1 > k0:
            drop = np.zeros(k1 - k0, dtype=bool)
            for b in range(0, nodes.size, DECREASE_BLOCK):
                if deadline is not None and time.perf_counter() >= deadline:
                    drop[:] = True
                    break
                sub = res[nodes[b : b + DECREASE_BLOCK], :, k0 - 1 : k1]
                drop |= np.any(sub[:, :, 1:] < sub[:, :, :-1], axis=(0, 1))
                if drop.all():
                    break
            out.extend(times[k0:k1][drop].tolist())
    return np.array(sorted(set(out)), dtype=np.float64)


def amounts_for(avail: np.ndarray, e: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Phase VI amounts ``e_i + r_ij (d_i - N e_i)``.

    ``r_ij = (a_ij - e_i) / sum_j (a_ij - e_i)``; each column sums to ``d_i``.
    """
    n = avail.shape[0]
    slack = np.maximum(avail - e[None, :], 0.0)
    tot = slack.sum(axis=0)
    extra = np.maximum(d - n * e, 0.0)
    share = np.divide(slack, tot[None, :], out=np.zeros_like(slack), where=tot[None, :] > 0)
    amt = e[None, :] + share * extra[None, :]
    amt = np.minimum(amt, np.maximum(avail, e[None, :]))
    for _ in range(3):  # rounding: make each column reach d_i where the slack allows it
        short = d - amt.sum(axis=0)
        cols = np.flatnonzero(short > 0)
        if cols.size == 0:
            break
        for i in cols:
            j = int(np.argmax(avail[:, i] - amt[:, i]))
            amt[j, i] = min(avail[j, i], amt[j, i] + short[i])
    return amt


def factor(d: np.ndarray, tmax: np.ndarray, cap: np.ndarray) -> float:
    """The estimated utilisation factor ``prod_i (d_i + sum T_ij^t) / sum p_ij`` (eq. 3); a
    property with ``sum p_ij = 0`` counts 1 (:func:`ratio`)."""
    return float(np.prod(ratio(d + tmax.sum(axis=0), cap.sum(axis=0))))


@dataclass(frozen=True)
class CallReport:
    """What a result reports of the call that made it: the method, its seed and
    parameters, its timings and its counters (the result base's fields of the call)."""

    method: str
    seed: Optional[int]
    params: dict
    timings: dict
    iterations: dict

    def fields(self) -> dict:
        """The result's keyword arguments of the call."""
        return {"method": self.method, "seed": self.seed, "params": self.params,
                "timings": self.timings, "iterations": self.iterations}  # fmt: skip


def solution(prob: Problem, report: CallReport, start: float, nodes: np.ndarray, tmax: np.ndarray,
             *, status="feasible", message="", proven=False,
             bound=None) -> CoallocationResult:  # fmt: skip
    """A result for ``nodes`` (pool indices) at ``start`` with their window maxima, made by
    the call ``report`` describes.

    ``objective`` is the start (the family minimises it first); ``bound`` is a proven
    lower bound on the earliest admissible start: the start itself when ``proven``, else
    the given one, else the window's opening ``t_e`` (no start is earlier). The status
    rule (:func:`coalloc._shared.result.settle`) then makes a start that meets its bound
    ``"optimal"``."""
    cap = prob.pool.capacity[nodes]
    avail = cap - tmax
    amt = amounts_for(avail, prob.e, prob.d)
    u = factor(prob.d, tmax, cap)
    if proven:
        bound = float(start)
    elif bound is None:
        bound = float(prob.request.earliest_start)
    return CoallocationResult(
        start=float(start), duration=prob.request.duration, resources=np.asarray(nodes, np.int64),
        amounts=amt, utilisation=u, names=prob.pool.names, proven=proven, status=status,
        message=message or f"start {start:g} s, utilisation factor {u:.6g}",
        **report.fields(), objective=float(start), bound=float(bound),
        gap=relative_gap(float(start), float(bound), sense="min"),
    )  # fmt: skip


def rejected(prob: Problem, report: CallReport, reason: dict, *, proven: bool,
             status: Optional[str] = None) -> CoallocationResult:  # fmt: skip
    """A rejection: ``"infeasible"`` when ``proven`` (its message says what the proof is),
    else ``"no_solution"`` (the method ended by itself without an answer or a proof) unless
    ``status`` says otherwise (``"time_limit"``: the budget ended it)."""
    if status is None:
        status = "infeasible" if proven else "no_solution"
    return CoallocationResult(
        duration=prob.request.duration, names=prob.pool.names, rejection=reason, proven=proven,
        status=status, message=reason.get("message", "rejected"), **report.fields(),
    )  # fmt: skip


def settled(func: Callable[..., CoallocationResult]) -> Callable[..., CoallocationResult]:
    """``func`` (a method of the family) with the one status rule applied at its exit
    (:func:`coalloc._shared.result.settle`): the family's exit point, so that no method
    sets a status by its own convention. A method stopped by its time limit before any
    answer keeps the rejection's own message (what was left undecided)."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> CoallocationResult:
        result = func(*args, **kwargs)
        if result.status == "time_limit" and not result._holds_solution():
            if result.rejection is not None and result.rejection.get("message"):
                result.message = result.rejection["message"]
        return settle(result)

    return run


def offer(build: Callable[[], CoallocationResult], pool: ResourcePool,
          reserve: bool) -> None:  # fmt: skip
    """Offer the time limit in force (:func:`coalloc._shared.params.offer_incumbent`) the
    answer ``build()`` returns; with ``reserve``, the answer is reserved on ``pool`` when
    the deadline returns it (a reservation that fails returns a rejection instead)."""

    def make() -> CoallocationResult:
        result = build()
        if reserve:
            try:
                pool.reserve(result.start, result.duration, result.resources, result.amounts)
            except ValueError as exc:
                reason = {"reason": "reservation_failed",
                          "message": f"stopped at the time limit; reserving the best answer "
                          f"so far failed: {exc}"}  # fmt: skip
                return CoallocationResult(
                    duration=result.duration, names=result.names, rejection=reason,
                    status="time_limit", message=reason["message"], method=result.method,
                    seed=result.seed, params=result.params, timings=result.timings,
                    iterations=result.iterations,
                )  # fmt: skip
        return result

    checks.offer_incumbent(make)


class Clock:
    """Accumulates named phase timings."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.last = self.t0
        self.timings: dict = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.timings[name] = self.timings.get(name, 0.0) + (now - self.last)
        self.last = now

    def done(self) -> dict:
        self.timings["total"] = time.perf_counter() - self.t0
        return self.timings


def check_backend(backend: Optional[str]) -> str:
    """The shared kernel-choice check (:func:`coalloc._shared.params.check_backend`)."""
    return checks.check_backend(backend)
