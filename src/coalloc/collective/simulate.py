"""Online mode: a stream of requests against a pool (reserve on arrival, free on expiry).

Requests are handled in order of arrival; each is co-allocated on the current timetables
(its window clipped to start no earlier than its arrival) and, when solved, reserved
atomically; a reservation frees its resources when its interval ends (the timetable is a
function of time, so nothing needs releasing). :func:`simulate` reports, per request, whether
it was accepted, its start delay and utilisation factor, and the pool's usage per slot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from .._shared import params as checks
from .._shared.progress import progress
from .._shared.validation import check_memory
from .model import CollectiveRequest, ResourcePool
from .solvers import DEFAULT_METHOD, coallocate

__all__ = ["simulate", "SimulationResult"]


@dataclass
class CollectiveSimulationResult:
    """What :func:`simulate` measured.

    Parameters
    ----------
    records : list of dict
        Per request: ``arrival``, ``count``, ``collective``, ``accepted``, ``start``,
        ``delay`` (start - earliest start), ``utilisation``, ``reason``.
    slot_times : ndarray
        Start of each usage slot (seconds).
    usage : ndarray, shape (slots, m)
        Fraction of each property's total capacity reserved in each slot (background and
        jobs), sampled at the slot start.
    job_usage : ndarray, shape (slots, m)
        The part of ``usage`` due to the simulated jobs.
    names : tuple of str
        The property names (columns of ``usage``).

    Examples
    --------
    >>> from coalloc.collective.simulate import SimulationResult
    >>> sim = SimulationResult(records=[{"accepted": True, "delay": 0.0},
    ...                                 {"accepted": False, "delay": None}])
    >>> sim.acceptance_rate
    0.5
    """

    records: List[dict] = field(default_factory=list)
    slot_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    usage: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    job_usage: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    names: tuple = ()

    @property
    def acceptance_rate(self) -> float:
        """Accepted requests / requests."""
        return float(np.mean([r["accepted"] for r in self.records])) if self.records else 0.0

    @property
    def mean_delay(self) -> float:
        """Mean start delay of the accepted requests (seconds)."""
        d = [r["delay"] for r in self.records if r["accepted"]]
        return float(np.mean(d)) if d else 0.0

    def summary(self) -> dict:
        """Acceptance rate, mean delay and mean utilisation factor, overall and by kind.

        Returns
        -------
        dict
            ``requests``, ``acceptance_rate``, ``mean_delay`` and, under ``simple`` and
            ``collective``, the same for that kind of request with ``mean_utilisation``.

        Examples
        --------
        >>> from coalloc.collective import CollectiveRequest, ResourcePool
        >>> from coalloc.collective.simulate import simulate
        >>> pool = ResourcePool([[4.0], [4.0]], ["cores"])
        >>> reqs = [(0.0, CollectiveRequest(600, 2, minimum={"cores": 3})),
        ...         (10.0, CollectiveRequest(600, 1, minimum={"cores": 2}, total={"cores": 2}))]
        >>> s = simulate(pool, reqs).summary()
        >>> s["requests"], s["acceptance_rate"], s["mean_delay"], s["collective"]["mean_delay"]
        (2, 1.0, 295.0, 590.0)
        """
        out = {"requests": len(self.records), "acceptance_rate": self.acceptance_rate,
               "mean_delay": self.mean_delay}  # fmt: skip
        for kind in ("simple", "collective"):
            rec = [r for r in self.records if r["collective"] == (kind == "collective")]
            acc = [r for r in rec if r["accepted"]]
            out[kind] = {"requests": len(rec),
                         "acceptance_rate": len(acc) / len(rec) if rec else 0.0,
                         "mean_delay": float(np.mean([r["delay"] for r in acc])) if acc else 0.0,
                         "mean_utilisation": float(np.mean([r["utilisation"] for r in acc]))
                         if acc else 0.0}  # fmt: skip
        return out


#: The older name of :class:`CollectiveSimulationResult`.
SimulationResult = CollectiveSimulationResult


def _sample(pool: ResourcePool, slot_times: np.ndarray) -> np.ndarray:
    k = np.searchsorted(pool.times, slot_times, side="right") - 1
    tot = pool.capacity.sum(axis=0)
    used = pool.reserved[:, :, k].sum(axis=0)
    # a property the pool has none of is used 0 (0/0: no NaN in the usage log)
    return np.divide(used, tot[:, None], out=np.zeros_like(used), where=tot[:, None] > 0).T


def simulate(
    pool: ResourcePool,
    requests: Sequence[Tuple[float, CollectiveRequest]],
    *,
    method: str = DEFAULT_METHOD,
    seed: Optional[int] = 0,
    slot_seconds: float = 300.0,
    horizon: Optional[float] = None,
    show_progress: bool = False,
    **params: Any,
) -> SimulationResult:
    """Run a stream of ``(arrival, request)`` against a copy of ``pool``.

    Parameters
    ----------
    pool : ResourcePool
        Not modified (a copy is used).
    requests : sequence of (float, CollectiveRequest)
        Handled in order of arrival.
    method : str
        Co-allocation method.
    seed : int, optional
    slot_seconds : float
        Usage-log slot length (finite, > 0).
    horizon : float, optional
        End of the usage log (default: the latest end of any reservation or breakpoint).
    show_progress : bool
    **params
        Parameters of the method.

    Returns
    -------
    SimulationResult

    Examples
    --------
    >>> p = ResourcePool([[4.0], [4.0]], ["cores"])
    >>> reqs = [(0.0, CollectiveRequest(600, 2, 0, 3600, {"cores": 3}))] * 2
    >>> simulate(p, reqs).records[1]["start"]
    600.0
    """
    if not isinstance(pool, ResourcePool):
        raise TypeError(f"pool must be a ResourcePool, got {type(pool).__name__}")
    slot_seconds = checks.number(slot_seconds, "slot_seconds")
    if horizon is not None:
        horizon = checks.number(horizon, "horizon", allow_zero=True)
    for q, item in enumerate(requests):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise TypeError(f"requests[{q}] must be an (arrival, CollectiveRequest) pair")
        arrival = item[0]
        number = isinstance(arrival, (int, float, np.number))
        if isinstance(arrival, (bool, np.bool_)) or not number:
            raise TypeError(f"requests[{q}] arrival must be a number of seconds")
        if not math.isfinite(float(arrival)):
            raise ValueError(f"requests[{q}] arrival must be finite, got {arrival!r}")
        if not isinstance(item[1], CollectiveRequest):
            raise TypeError(f"requests[{q}] must hold a CollectiveRequest, got "
                            f"{type(item[1]).__name__}")  # fmt: skip
    work = pool.copy()
    background = pool.copy()
    items = sorted(requests, key=lambda x: x[0])
    records = []
    for q, (arrival, req) in enumerate(progress(items, desc="simulate", unit="req",
                                                 disable=not show_progress)):  # fmt: skip
        te = max(req.earliest_start, float(arrival))
        tl = max(req.latest_start, te)
        r2 = CollectiveRequest(req.duration, req.count, te, tl, req.minimum, req.total or None,
                               req.labels or None)  # fmt: skip
        res = coallocate(work, r2, method, seed=None if seed is None else seed + q, **params)
        rec = {"arrival": float(arrival), "count": req.count, "collective": req.collective,
               "accepted": res.start is not None, "start": res.start, "delay": None,
               "utilisation": res.utilisation, "reason": None}  # fmt: skip
        if res.start is not None:
            work.reserve(res.start, req.duration, res.resources, res.amounts)
            rec["delay"] = res.start - te
        else:
            rec["reason"] = (res.rejection or {}).get("reason")
        records.append(rec)
    end = horizon if horizon is not None else float(work.times[-1]) + slot_seconds
    n_slots = math.ceil(end / float(slot_seconds)) if end > 0 else 0
    check_memory(4.0 * 8 * n_slots * max(work.n_properties, 1),
                 f"usage logs of {n_slots:.3g} slots of {slot_seconds:g} s")  # fmt: skip
    slot_times = np.arange(0.0, end, float(slot_seconds))
    usage = _sample(work, slot_times)
    return SimulationResult(records, slot_times, usage, usage - _sample(background, slot_times),
                            pool.names)  # fmt: skip
