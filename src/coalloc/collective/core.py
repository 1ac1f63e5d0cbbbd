"""Helpers every method shares: the request resolved against a pool, candidate starts,
window availability (through the compiled kernel or its twin) and Phase VI amounts."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .._shared import params as checks
from .._shared.result import relative_gap
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult

BACKENDS = ("compiled", "numpy")


def kernels(backend: str):
    """The compiled kernels (``"compiled"``) or their NumPy twins (``"numpy"``)."""
    if backend == "compiled":
        from . import _search

        return _search
    if backend == "numpy":
        from ._reference import search

        return search
    return kernels(checks.check_backend(backend))


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


def decrease_starts(pool: ResourcePool, nodes: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``lo`` and the breakpoints in ``(lo, hi]`` where a reserved amount of ``nodes`` falls
    (where availability increases): the only possible earliest starts (Phase III)."""
    times, res = pool.times, pool.reserved
    out = [float(lo)]
    if nodes.size and times.shape[0] > 1:
        sub = res[nodes]
        drop = np.any(sub[:, :, 1:] < sub[:, :, :-1], axis=(0, 1))
        k = np.flatnonzero(drop) + 1
        t = times[k]
        out.extend(t[(t > lo) & (t <= hi)].tolist())
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


def solution(prob: Problem, method: str, start: float, nodes: np.ndarray, tmax: np.ndarray,
             seed, params, timings, iterations, *, status="feasible", message="",
             proven=False, bound=None) -> CoallocationResult:  # fmt: skip
    """A result for ``nodes`` (pool indices) at ``start`` with their window maxima."""
    cap = prob.pool.capacity[nodes]
    avail = cap - tmax
    amt = amounts_for(avail, prob.e, prob.d)
    u = factor(prob.d, tmax, cap)
    gap = relative_gap(u, bound, sense="max")
    return CoallocationResult(
        start=float(start), duration=prob.request.duration, resources=np.asarray(nodes, np.int64),
        amounts=amt, utilisation=u, names=prob.pool.names, proven=proven, status=status,
        message=message or f"start {start:g} s, utilisation factor {u:.6g}", method=method,
        seed=seed, params=params, timings=timings, iterations=iterations, objective=u,
        bound=bound, gap=gap,
    )  # fmt: skip


def rejected(prob: Problem, method: str, reason: dict, seed, params, timings, iterations, *,
             proven: bool, status: str = "infeasible") -> CoallocationResult:  # fmt: skip
    return CoallocationResult(
        duration=prob.request.duration, names=prob.pool.names, rejection=reason, proven=proven,
        status=status, message=reason.get("message", "rejected"), method=method, seed=seed,
        params=params, timings=timings, iterations=iterations,
    )  # fmt: skip


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


def bounded(value, argname: str, lo: int, hi: int) -> int:
    """An int in ``[lo, hi]`` (``TypeError``/``ValueError`` naming ``argname``): every count
    parameter has an upper bound, so no parameter makes a method run for ever."""
    value = checks.integer(value, argname, lo)
    if value > hi:
        raise ValueError(f"{argname} must be <= {hi:.0e}, got {value}")
    return value


def check_backend(backend: Optional[str]) -> str:
    """The shared kernel-choice check (:func:`coalloc._shared.params.check_backend`)."""
    return checks.check_backend(backend)
