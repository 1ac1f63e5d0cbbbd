"""Why a collective request was rejected: a minimal conflict and the nearest request that fits.

:func:`explain_request` answers a rejection with an
:class:`~coalloc._shared.explain.Explanation`. The request is read as demand elements: its
base (``N`` nodes for ``t_res`` seconds, a start in ``[t_e, t_l]``), which every version of
the request keeps, and its requirements, each of which could be dropped: one per label
(``site in {a, b}``) and one per property with a minimum or a total. The conflict is the
base with the fewest requirements that, on the pool's timetables, still have no admissible
start: every candidate set is judged by the family's exact scan (the default method, which
proves a rejection by checking every start of the window), so the conflict is **sound**
(its own rejection is proved) and **minimal** (each requirement's drop was solved and fits),
or says which it could not establish before the deadline.

The nearest requests that fit, each solved by the scan and so checked:

* ``later_start``: the same request with its window extended, at the earliest start that
  fits (after ``t_l``);
* ``fewer_nodes``: the most nodes ``N' < N`` that fit in the window (totals scaled by
  ``N'/N``);
* ``shorter_duration``: the longest duration that fits in the window (to the grain of the
  timetables, their shortest gap between breakpoints);
* ``drop_requirement``: the request without one requirement of the conflict.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.explain import Explanation, Relaxation, fix_deadline, minimal_conflict
from .model import CollectiveRequest, ResourcePool
from .solvers import coallocate

__all__ = ["explain_request"]

#: A requirement of a request: (kind, key) with kind "label" or "property".
Requirement = Tuple[str, str]


def _requirements(req: CollectiveRequest) -> List[Requirement]:
    props = sorted(set(req.minimum) | set(req.total))
    return [("label", k) for k in sorted(req.labels)] + [("property", k) for k in props]


def _describe(req: CollectiveRequest, item: Requirement) -> str:
    kind, key = item
    if kind == "label":
        want = req.labels[key]
        return f"label {key} in {{{want if isinstance(want, str) else ', '.join(want)}}}"
    parts = []
    if key in req.minimum:
        parts.append(f"at least {req.minimum[key]:g} per node")
    if key in req.total:
        parts.append(f"{req.total[key]:g} in all")
    return f"{key}: " + " and ".join(parts)


def _variant(req: CollectiveRequest, keep: List[Requirement], **change: Any) -> CollectiveRequest:
    """``req`` with only the requirements ``keep`` and the base fields of ``change``."""
    labels = {k: req.labels[k] for kind, k in keep if kind == "label"}
    props = {k for kind, k in keep if kind == "property"}
    count = change.get("count", req.count)
    scale = count / req.count
    minimum = {k: v for k, v in req.minimum.items() if k in props}
    total = {k: v * scale for k, v in req.total.items() if k in props}
    for k in list(total):  # a scaled total still covers its minimum on every node
        total[k] = max(total[k], count * minimum.get(k, 0.0))
    return CollectiveRequest(change.get("duration", req.duration), count,
                             req.earliest_start, change.get("latest_start", req.latest_start),
                             minimum=minimum, total=total, labels=labels)  # fmt: skip


class _Oracle:
    """The scan as the explanation's feasibility oracle, keeping the explanation's deadline.

    Each call gets what is left before its deadline; a call whose deadline is the
    explanation's own (the fixes') gets that less the most any earlier call of this
    explanation ran past the limit it was given and ``SLACK`` of the rest (learnt as
    the calls go: the scan stops between its steps and its integer programs at their
    deadline, but HiGHS may not look at its stop request inside presolve), so that the
    explanation returns within its budget (issue 36's rule). The oracle asks feasibility
    only, so the scan runs without its portfolio (``portfolio=False``): the portfolio
    polishes the utilisation factor of a start already found (swap searches, enumeration,
    the exact method's program: 0.1-0.7 s per feasible call on 256-1,024 nodes, 85 % of an
    explanation's time), which no verdict, start or count of a fix depends on. Its integer
    programs (the plain scan's proof at hard starts) get what is left less HiGHS's latency
    (``LATENCY``, or half of what is left when that is less), so that HiGHS, which may not
    stop inside presolve, returns before the call's deadline.
    """

    #: The share of what is left that a call is not given (HiGHS's overrun grows with it).
    SLACK = 0.1
    #: The least time worth a call (s): less is answered "unknown" without a call.
    MIN_CALL = 0.01
    #: Seconds HiGHS may run past its own time limit inside the scan (the scan's own
    #: allowance for its portfolio's program), kept off each integer program's limit.
    LATENCY = 0.2

    def __init__(self, pool: ResourcePool, end: float):
        self.pool = pool
        self.end = end  # the explanation's own deadline (time.monotonic)
        self.overrun = 0.0  # the most a call ran past its limit so far (s)

    def __call__(self, request: CollectiveRequest, deadline: float) -> Tuple[
            Optional[bool], Any]:  # fmt: skip
        """The scan's verdict: (True: fits | False: rejection proved | None: unknown, result)."""
        start = time.monotonic()
        left = deadline - start
        if deadline >= self.end:  # the last deadline: keep a reserve for the overrun
            left = (left - self.overrun) * (1.0 - self.SLACK)
        if left <= self.MIN_CALL:
            return None, None
        program = max(left - self.LATENCY, 0.5 * left)
        res = coallocate(self.pool, request, "scan", time_limit=left, portfolio=False,
                         program_time_limit=program)  # fmt: skip
        self.overrun = max(self.overrun, time.monotonic() - start - left)
        if res.has_solution:
            return True, res
        if res.status == "infeasible":
            return False, res
        return None, res


def _step(pool: ResourcePool) -> float:
    """The timetables' grain: the shortest gap between breakpoints (at least 1 s)."""
    gaps = np.diff(np.asarray(pool.times, dtype=float))
    gaps = gaps[gaps > 0]
    return float(max(1.0, gaps.min())) if gaps.size else 60.0


def _largest(lo: int, hi: int, fits: Callable[[int], Optional[bool]]) -> Optional[int]:
    """The largest ``k`` in ``[lo, hi]`` with ``fits(k)`` True (fits monotone), or None.

    ``lo`` is asked first: when even it does not fit, no ``k`` does (one call, not the
    bisection's ``log2(hi - lo)``: 6 scans of 1,024 nodes for ``N = 128``)."""
    if lo > hi:
        return None
    got = fits(lo)
    if got is not True:
        return None
    best, lo = lo, lo + 1
    while lo <= hi:
        mid = (lo + hi) // 2
        got = fits(mid)
        if got is True:
            best, lo = mid, mid + 1
        elif got is False:
            hi = mid - 1
        else:
            return best
    return best


@filled
@checked("coalloc.collective.constraints", "explain_request", tables="FUNCTIONS")
def explain_request(pool: ResourcePool, request: CollectiveRequest, *,
                    time_limit: float = 10.0) -> Optional[Explanation]:  # fmt: skip
    """Why ``request`` has no admissible start on ``pool``, and what nearby request fits.

    Parameters
    ----------
    pool : ResourcePool
        The resources and their reservations.
    request : CollectiveRequest
        The rejected request.
    %(explain_time_limit)s

    Returns
    -------
    Explanation or None
        None when the request fits (nothing to explain) or when its rejection could not
        be proved in the budget.

    Examples
    --------
    Two nodes, one with 4 cores and one with 2; a request for 2 nodes with 3 cores each:

    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    >>> req = co.CollectiveRequest(600, 2, minimum={"cores": 3})
    >>> e = explain_request(pool, req)
    >>> e.demand, e.sound, e.minimal
    (('2 nodes for 600 s, start in [0, 86400]', 'cores: at least 3 per node'), True, True)
    >>> [(r.kind, r.changes["request"]["count"]) for r in e.relaxations if r.checked]
    [('fewer_nodes', 1), ('drop_requirement', 2)]
    """
    if not isinstance(pool, ResourcePool):
        raise TypeError(f"pool must be a ResourcePool, got {type(pool).__name__}")
    if not isinstance(request, CollectiveRequest):
        raise TypeError(f"request must be a CollectiveRequest, got {type(request).__name__}")
    time_limit = float(time_limit)  # checked by the table (@checked)
    t0 = time.monotonic()
    search_end = t0 + 0.6 * time_limit
    items = _requirements(request)
    judge = _Oracle(pool, t0 + time_limit)
    whole, first = judge(request, search_end)
    if whole is not False:
        return None
    rejections: Dict[tuple, Any] = {tuple(items): first}

    def feasible(index: List[int]) -> Optional[bool]:
        keep = [items[i] for i in index]
        got, res = judge(_variant(request, keep), search_end)
        if got is False:
            rejections[tuple(keep)] = res
        return got

    search = minimal_conflict(range(len(items)), feasible, deadline=search_end,
                              known_infeasible=True)  # fmt: skip
    conflict = [items[i] for i in search.conflict]
    base_alone, minimal = not conflict, search.minimal
    deadline = fix_deadline(t0, time_limit)
    # the fixes' last calls keep the learnt overrun and SLACK back from their own deadline
    # too (not only from the budget's end): the fixes end within the solve + 1 s under load
    judge.end = min(judge.end, deadline)
    relax = _relaxations(judge, request, conflict, deadline)
    base = (f"{request.count} nodes for {request.duration:g} s, start in "
            f"[{request.earliest_start:g}, {request.latest_start:g}]")  # fmt: skip
    found = rejections.get(tuple(conflict))
    why = (found.rejection or {}).get("message", "") if found is not None else ""
    why = why.split(". Proof")[0].rstrip(".")  # the scan's finding, not its proof's text
    demand = (base, *(_describe(request, c) for c in conflict))
    fixes = "; or ".join(r.sentence for r in relax if r.checked)
    what = (
        "the request's size and window alone"
        if base_alone
        else (", ".join(_describe(request, c) for c in conflict) + " with its size and window")
    )
    sentence = (f"No start fits: {what} (proved by checking every start of the window"
                f"{'; dropping any one requirement fits' if conflict and minimal else ''})"
                f"{': ' + why if why else ''}.")  # fmt: skip
    sentence += (f" Nearest fix: {fixes}." if fixes else
                 " No single change of the request (later start, fewer nodes, shorter "
                 "duration, one requirement dropped) fits.")  # fmt: skip
    resources = (f"the timetables of the pool's {pool.n_nodes} nodes over the window",)
    return Explanation(demand=demand, resources=resources, certificate="exact scan",
                       conflict=_variant(request, conflict).to_dict(),
                       sound=True if found is not None else search.sound, minimal=minimal,
                       sentence=sentence, relaxations=tuple(relax),
                       oracle_calls=search.calls + 1, seconds=time.monotonic() - t0)  # fmt: skip


def _relaxations(judge: _Oracle, req: CollectiveRequest, conflict: List[Requirement],
                 deadline: float) -> List[Relaxation]:  # fmt: skip
    """The nearest requests that fit, each solved by the scan (see the module docstring)."""
    pool = judge.pool
    out: List[Relaxation] = []
    keep = _requirements(req)
    horizon = max(float(pool.times[-1]) if len(pool.times) else 0.0, req.latest_start)
    # the longest scan (the window to the horizon) gets 0.6 of the fixes' time: a call that
    # runs past its limit then eats into the other fixes, not past the explanation's end
    mid = time.monotonic() + 0.6 * max(0.0, deadline - time.monotonic())
    later, res = judge(_variant(req, keep, latest_start=horizon + req.duration), mid)
    if later and res.start is not None and res.start > req.latest_start:
        moved = _variant(req, keep, latest_start=float(res.start)).to_dict()
        out.append(Relaxation(kind="later_start", sentence=f"start at {res.start:g} s "
                              f"(the window closes at {req.latest_start:g} s)",
                              changes={"latest_start": float(res.start), "request": moved},
                              cost=float(res.start - req.latest_start), optimal=True,
                              checked=True))  # fmt: skip
    if req.count > 1:
        k = _largest(
            1, req.count - 1, lambda c: judge(_variant(req, keep, count=c), deadline)[0]
        )
        if k is not None:
            nodes = f"{k} node{'s' if k > 1 else ''}"
            out.append(Relaxation(kind="fewer_nodes", sentence=f"ask for {nodes}",
                                  changes={"count": k, "request": _variant(
                                      req, keep, count=k).to_dict()},
                                  cost=float(req.count - k),
                                  optimal=None, checked=True))  # fmt: skip
    step = _step(pool)  # durations to the timetables' own grain (a slot)
    top = int(math.ceil(req.duration / step)) - 1
    if top >= 1:
        k = _largest(1, top, lambda s: judge(_variant(req, keep, duration=s * step),
                                              deadline)[0])  # fmt: skip
        d = None if k is None else k * step
        if d is not None:
            out.append(Relaxation(kind="shorter_duration", sentence=f"ask for {d:g} s",
                                  changes={"duration": float(d), "request": _variant(
                                      req, keep, duration=float(d)).to_dict()},
                                  cost=float(req.duration - d),
                                  optimal=None, checked=True))  # fmt: skip
    for item in conflict:
        rest = [c for c in keep if c != item]
        if judge(_variant(req, rest), deadline)[0]:
            out.append(Relaxation(kind="drop_requirement",
                                  sentence=f"drop the requirement '{_describe(req, item)}'",
                                  changes={"drop": item[1],
                                           "request": _variant(req, rest).to_dict()},
                                  cost=1.0, optimal=True,
                                  checked=True))  # fmt: skip
            break
    return out
