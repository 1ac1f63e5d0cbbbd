"""The collective family's results: :class:`CoallocationResult`, which every co-allocation
method returns, and :class:`CollectiveSimulationResult`, which
:func:`coalloc.collective.simulate.simulate` returns (``SimulationResult`` is its older name)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, List, Optional

import numpy as np

from .._shared.docs import filled
from .._shared.result import Result, jsonable, stopped_fields

__all__ = [
    "CoallocationResult",
    "CollectiveSimulationResult",
    "SimulationResult",
    "stopped_result",
]


@filled
@dataclass(kw_only=True, eq=False)
class CoallocationResult(Result):
    """Outcome of :func:`coalloc.collective.coallocate` (every method).

    Parameters
    ----------
    start : float or None
        ``t_s`` in seconds from the pool's origin (None when rejected).
    duration : float
        ``t_res`` of the request.
    resources : ndarray of int64, shape (N,), or None
        Node indices into the pool.
    amounts : ndarray, shape (N, m), or None
        Amount of each property reserved on each resource (Phase VI: ``e_i + r_ij (d_i -
        N e_i)``); each column sums to ``d_i``.
    utilisation : float or None
        The utilisation factor ``U~ = prod_i u~_i`` (paper eqs. 1-3, worst case over the
        reservation interval, after the job is placed): the second criterion, at the start.
    names : tuple of str
        Property names (columns of ``amounts``).
    rejection : dict or None
        Why no solution was found: a machine-readable reason (``coalloc docs collective``).
    proven : bool
        For a rejection: True when no admissible solution exists in the window (exact
        methods); for a solution: True when its start is proven earliest.
    status, message, method, seed, params, timings, iterations, objective, bound, gap : object
        The shared result fields (:class:`coalloc.Result`). The family minimises the start
        first (:attr:`sense` ``"min"``): ``objective`` is the ``start`` of an accepted
        request and ``bound`` a proven lower bound on the earliest admissible start (the
        window's opening ``t_e`` at least), so ``"optimal"`` means the start is proven
        earliest; the utilisation factor, maximised at that start, is ``utilisation``.
    %(result_explanation)s

    Examples
    --------
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> result = co.coallocate(pool, req)
    >>> result.status, result.start, result.resources.tolist()
    ('optimal', 0.0, [1, 2])
    >>> result.objective == result.start == result.bound, result.sense
    (True, 'min')
    >>> result.amounts.tolist(), round(result.utilisation, 4)
    ([[1.0, 2.0], [1.0, 4.0]], 0.6667)
    """

    start: Optional[float] = None
    duration: float = 0.0
    resources: Optional[np.ndarray] = None
    amounts: Optional[np.ndarray] = None
    utilisation: Optional[float] = None
    names: tuple = ()
    rejection: Optional[dict] = None
    proven: bool = False
    #: The objective's direction for the one status rule (:func:`coalloc._shared.result.settle`):
    #: the start is minimised.
    sense: ClassVar[str] = "min"

    def _holds_solution(self) -> bool:
        """The request is accepted (``time_limit`` with a start not proven earliest)."""
        return self.rejection is None and self.resources is not None

    def _payload(self) -> dict:
        out: dict[str, Any] = {
            "start": self.start,
            "duration": self.duration,
            "resources": None if self.resources is None else jsonable(self.resources),
            "amounts": None if self.amounts is None else jsonable(self.amounts),
            "utilisation": self.utilisation,
            "names": list(self.names),
            "proven": bool(self.proven),
        }
        if self.rejection is not None:
            out["rejection"] = jsonable(self.rejection)
        return out

    def __str__(self) -> str:
        if self.start is None:
            return f"{self.method}: rejected ({self.status}): {self.message}"
        return (
            f"{self.method}: start {self.start:g} s on {len(self.resources)} resources "
            f"{self.resources.tolist()}, utilisation factor {self.utilisation:.4f} ({self.status})"
        )


def stopped_result(request: Any, pool: Any, **stop: Any) -> CoallocationResult:
    """A co-allocation method stopped at its ``time_limit`` before deciding the request:
    rejected, not proven (status ``"time_limit"``; ``stop``: what
    :func:`coalloc._shared.result.stopped_fields` takes). The parts come as the method
    was called: the request first, or the old order (told apart by type)."""
    from ._order import demand_first

    request, pool = demand_first(request, pool)
    fields = stopped_fields(**stop)
    return CoallocationResult(
        duration=request.duration, names=pool.names, proven=False,
        rejection={"reason": "time_limit", "message": fields["message"]}, **fields,
    )  # fmt: skip


@dataclass
class CollectiveSimulationResult:
    """What :func:`simulate` measured.

    Parameters
    ----------
    records : list of dict
        Per request, in order of arrival: ``job`` (its SWF job number, or its position in
        the requests), ``arrival``, ``count``, ``collective``, ``duration`` (the time
        reserved), ``run_time`` (the job's actual run time where known, else None or -1),
        ``accepted``, ``start``, ``delay`` (start - earliest start), ``utilisation``,
        ``reason`` (of a rejection: the method's, or ``"past the horizon"``).
    slot_times : ndarray
        Start of each usage slot (seconds).
    usage : ndarray, shape (slots, m)
        Fraction of each property's total capacity reserved in each slot (background and
        jobs), sampled at the slot start.
    job_usage : ndarray, shape (slots, m)
        The part of ``usage`` due to the simulated jobs.
    names : tuple of str
        The property names (columns of ``usage``).
    skipped : list of dict
        The workload's jobs that were not simulated (``job``, ``status``, ``reason``:
        ``"cancelled"``, ``"failed to start"``, ...); not counted among the requests.

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
    skipped: List[dict] = field(default_factory=list)

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
            ``requests``, ``acceptance_rate``, ``mean_delay``, ``rejections`` (reason ->
            number of requests), ``skipped`` (reason -> number of jobs not simulated) and,
            under ``simple`` and ``collective``, the same for that kind of request with
            ``mean_utilisation``.

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
        rejections: dict = {}
        for r in self.records:
            if not r["accepted"]:
                why = str(r.get("reason"))
                rejections[why] = rejections.get(why, 0) + 1
        skipped: dict = {}
        for sk in self.skipped:
            skipped[sk["reason"]] = skipped.get(sk["reason"], 0) + 1
        out = {"requests": len(self.records), "acceptance_rate": self.acceptance_rate,
               "mean_delay": self.mean_delay, "rejections": rejections,
               "skipped": skipped}  # fmt: skip
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
