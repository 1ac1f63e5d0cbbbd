"""An independent check of a co-allocation: :func:`verify_coallocation`.

Shares no code with the solvers: the window maxima are recomputed here segment by segment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, List, Optional

import numpy as np

from .._shared.constraints import checked
from .._shared.result import Report
from ._order import demand_first
from .model import TOLERANCE, CollectiveRequest, ResourcePool

__all__ = ["CoallocationReport", "verify_coallocation"]


@dataclass
class CoallocationReport(Report):
    """What :func:`verify_coallocation` found.

    Parameters
    ----------
    admissible : bool
        Every constraint holds.
    violations : list of str
        One line per violated constraint.
    utilisation : float or None
        The factor recomputed from the pool (eq. 3 after placement).
    matches : bool
        The claimed factor (if any) agrees with the recomputation.

    Examples
    --------
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> result = co.coallocate(pool, req)
    >>> report = co.verify(req, pool, result)
    >>> report.admissible, report.violations, report.matches
    (True, [], True)
    """

    admissible: bool
    violations: List[str] = field(default_factory=list)
    utilisation: Optional[float] = None
    matches: bool = True

    @property
    def ok(self) -> bool:
        """Admissible and matching any claimed utilisation (the shared report interface)."""
        return self.admissible and self.matches

    def to_dict(self) -> dict:
        """A JSON-ready dictionary.

        Returns
        -------
        dict
            ``ok``, ``admissible``, ``violations``, ``utilisation`` and ``matches``.

        Examples
        --------
        >>> import coalloc.collective as co
        >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0]], ["cores", "ram"])
        >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1})
        >>> data = co.verify(req, pool, co.coallocate(pool, req)).to_dict()
        >>> data["ok"], data["admissible"], data["violations"]
        (True, True, [])
        """
        return {"ok": self.ok, "admissible": self.admissible, "violations": list(self.violations),
                "utilisation": self.utilisation, "matches": self.matches}  # fmt: skip

    def __str__(self) -> str:
        if self.ok:
            return f"admissible; utilisation factor {self.utilisation:.6g}"
        return "NOT admissible: " + "; ".join(self.violations[:10] or ["claim mismatch"])


def _peak(times: np.ndarray, series: np.ndarray, lo: float, hi: float) -> float:
    best = None
    k_count = times.shape[0]
    for k in range(k_count):
        seg_lo = times[k]
        seg_hi = times[k + 1] if k + 1 < k_count else np.inf
        if seg_lo < hi and seg_hi > lo:
            v = float(series[k])
            best = v if best is None else max(best, v)
    return 0.0 if best is None else best


@checked("coalloc.collective.constraints", "verify_coallocation", tables="FUNCTIONS")
def verify_coallocation(
    request: CollectiveRequest,
    pool: ResourcePool,
    start: Optional[float],
    resources: Any,
    amounts: Any,
    *,
    claimed_utilisation: Optional[float] = None,
    rtol: Optional[float] = None,
) -> CoallocationReport:
    """Check that a co-allocation is admissible on ``pool`` (before it is reserved).

    Checks: exactly ``N`` distinct valid node indices; labels; ``t_e <= start <= t_l``;
    for every property over the whole interval ``[start, start + t_res)``: each amount at
    least ``e_i`` and at most what is free (``p_ij - max T_ij``), the amounts summing to
    ``d_i``; and the claimed utilisation factor.

    The comparisons follow the family's one tolerance rule (restated here, not imported from
    the solvers): with ``tau_i = rtol * max_j p_ij`` over the pool, an amount may fall
    ``tau_i`` below ``e_i`` or exceed the free amount by ``tau_i``, and the ``N`` amounts of a
    property must sum to ``d_i`` within ``N tau_i``. A property of which the chosen nodes have
    no capacity at all counts 1 in the utilisation factor (``0/0``).

    Parameters
    ----------
    request : CollectiveRequest
        The request (demand first, as ``solve``; the old order ``(pool, request, ...)``
        still works, with a ``DeprecationWarning``).
    pool : ResourcePool
        The pool before the reservation.
    start : float
    resources : array_like of int, shape (N,)
    amounts : array_like, shape (N, m)
    claimed_utilisation : float, optional
    rtol : float, optional
        The relative tolerance of the rule (default
        :data:`~coalloc.collective.model.TOLERANCE`, the one every method uses).

    Returns
    -------
    CoallocationReport

    Raises
    ------
    TypeError, ValueError
        A start that is not a finite number of seconds, amounts that are not finite numbers.

    Examples
    --------
    >>> pool = ResourcePool([[4.0], [2.0]], ["cores"])
    >>> req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 5})
    >>> verify_coallocation(req, pool, 0.0, [0, 1], [[3.0], [2.0]]).ok
    True
    """
    request, pool = demand_first(request, pool, "verify_coallocation")
    v: List[str] = []
    rtol = TOLERANCE if rtol is None else float(rtol)  # checked by the table (@checked)
    tau = rtol * np.max(pool.capacity, axis=0, initial=0.0)
    names = pool.names
    m = len(names)
    n = request.count
    e = np.empty(m)
    d = np.empty(m)
    for i, name in enumerate(names):
        e[i] = request.minimum.get(name, min(1e-6, request.total.get(name, np.inf) / n))
        d[i] = max(request.total.get(name, n * e[i]), n * e[i])
    if start is None:
        return CoallocationReport(False, ["no start time"])
    if isinstance(start, (bool, np.bool_)) or not isinstance(start, (int, float, np.number)):
        raise TypeError(f"start must be a number of seconds, got {type(start).__name__}")
    raw = start
    try:
        start = float(start)  # a 400-digit integer overflows here
    except OverflowError:
        start = math.inf
    if not math.isfinite(start):
        text = str(raw)
        text = text if len(text) <= 30 else f"{text[:12]}...({len(text)} characters)"
        raise ValueError(f"start must be a finite number of seconds, got {text}")
    idx = np.asarray(resources).ravel()
    try:
        amt = np.asarray(amounts, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError("amounts must be a table of finite numbers") from None
    if not np.all(np.isfinite(amt)):
        raise ValueError("amounts must be a table of finite numbers")
    if idx.shape[0] != n:
        v.append(f"{idx.shape[0]} resources, the request asks for exactly {n}")
    if idx.size and not np.issubdtype(idx.dtype, np.integer):
        return CoallocationReport(False, v + ["resources are not integer indices"])
    if len(set(idx.tolist())) != idx.shape[0]:
        v.append("resources are not distinct")
    if np.any(idx < 0) or np.any(idx >= pool.n_nodes):
        return CoallocationReport(False, v + ["resource index out of range"])
    if amt.shape != (idx.shape[0], m):
        return CoallocationReport(False, v + [f"amounts has shape {amt.shape}"])
    if not (request.earliest_start - 1e-9 <= start <= request.latest_start + 1e-9):
        v.append(f"start {start} outside [{request.earliest_start}, {request.latest_start}]")
    for key, want in request.labels.items():
        have = pool.labels.get(key)
        ok_vals = {want} if isinstance(want, str) else set(want)
        for j in idx:
            if have is None or have[j] not in ok_vals:
                v.append(f"node {int(j)} does not have label {key}={want!r}")
    lo, hi = float(start), float(start) + request.duration
    cap = pool.capacity
    peaks = np.zeros((idx.shape[0], m))
    for r, j in enumerate(idx):
        for i in range(m):
            peaks[r, i] = _peak(pool.times, pool.reserved[j, i], lo, hi)
            free = cap[j, i] - peaks[r, i]
            tol = tau[i]
            if amt[r, i] < e[i] - tol:
                v.append(f"node {int(j)}: {names[i]} amount {amt[r, i]:g} < minimum {e[i]:g}")
            if amt[r, i] > free + tol:
                v.append(f"node {int(j)}: {names[i]} amount {amt[r, i]:g} > free {free:g} "
                         f"over [{lo:g}, {hi:g})")  # fmt: skip
    for i in range(m):
        s = float(amt[:, i].sum())
        if not abs(s - d[i]) <= n * tau[i]:
            v.append(f"{names[i]}: amounts sum to {s:g}, total is {d[i]:g}")
    sp = cap[idx].sum(axis=0)
    used = d + peaks.sum(axis=0)
    util = float(np.prod([u / p if p > 0 else 1.0 for u, p in zip(used, sp)]))
    matches = True
    if claimed_utilisation is not None:
        matches = abs(claimed_utilisation - util) <= 1e-6 * max(1.0, abs(util))
    return CoallocationReport(not v, v, util, matches)
