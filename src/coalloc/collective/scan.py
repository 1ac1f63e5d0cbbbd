"""The package's default method: an exact earliest-start scan with explainable rejections.

For every candidate start in ascending order (``t_e`` and the breakpoints where availability
increases, over the *whole* pool: the only possible earliest starts), the window maxima of
every matching node come from the compiled kernel in blocks; then

1. the nodes with ``a_ij^t >= e_i`` are eligible; fewer than ``N``: rejected at ``t`` by a
   per-resource minimum (the property that excludes the most nodes is reported);
2. the ``N`` largest ``a_ij^t`` of each property must reach ``d_i``; otherwise rejected at
   ``t`` by that total (best reachable sum reported);
3. a set is searched: by enumeration when ``C(k, N) <= enumerate_limit`` (exact: also the
   best factor), else by deterministic best-improvement swaps (compiled :func:`swap_search`)
   from a best-coverage greedy set, which first repair the totals and then raise the
   utilisation factor; if the repair fails, the integer program of :mod:`.exact` decides
   (proven either way, or undecided on its time limit). Once a start is known feasible, the
   swaps also run from the tightest-fit greedy sets (overall and per property) and the best
   factor is kept.

The first start with a set wins: the start is the earliest (proven unless a test was
undecided), the factor is the local optimum of the swaps (or the enumerated optimum). No
random choice is made: the answer does not depend on the seed.
"""

from __future__ import annotations

import functools
import math
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared import params as checks
from .._shared.seeding import check_seed
from ._order import demand_first
from .core import (
    Clock,
    Problem,
    bounded,
    check_backend,
    factor,
    kernels,
    ratio,
    rejected,
    solution,
)
from .exact import best_subset, feasible_subset
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult, stopped_result

__all__ = ["scan"]


_MAX_LISTED = 50


def _starts(avail, tmax, cap, d, n, e):
    """Greedy starting sets (row indices): best coverage, tightest fit overall and tightest
    fit on each property."""
    need = np.maximum(d / n, e)
    cover = np.minimum(ratio(avail, need[None, :]), 1.0).sum(axis=1) + 1e-9 * avail.sum(axis=1)
    out = [np.argsort(-cover, kind="stable")[:n]]
    fits = np.all(avail >= need[None, :], axis=1)
    per = ratio(tmax + need[None, :], cap)
    tight = np.prod(per, axis=1)
    out.append(np.argsort(-np.where(fits, tight, tight - 1e9), kind="stable")[:n])
    if per.shape[1] > 1:
        for i in range(per.shape[1]):
            out.append(np.argsort(-np.where(fits, per[:, i], per[:, i] - 1e9), kind="stable")[:n])
    return out


def scan(
    request: CollectiveRequest,
    pool: ResourcePool,
    *,
    seed: Optional[int] = 0,
    backend: str = "compiled",
    enumerate_limit: int = 20_000,
    solver: str = "highs",
    program_time_limit: Optional[float] = 10.0,
    max_rounds: int = 100_000,
    block: int = 8,
    reserve: bool = False,
) -> CoallocationResult:
    """Co-allocate at the earliest admissible start with a high utilisation factor.

    Parameters
    ----------
    request : CollectiveRequest
        The request (demand first; the old order ``(pool, request)`` still works, with a
        ``DeprecationWarning``).
    pool : ResourcePool
    seed : int, optional
        Accepted for a uniform signature; the method is deterministic.
    backend : {"compiled", "numpy"}
        Kernels: compiled (default) or their NumPy twins (same answers, slower).
    enumerate_limit : int
        Enumerate all subsets (exact factor) when there are at most this many (at most
        ``10**8``).
    solver : {"highs", "cbc", "cpsat"}
        Back-end of the integer program deciding hard starts.
    program_time_limit : float, optional
        Seconds per integer program (an undecided start counts as ``"time_limit"``).
    max_rounds : int
        Cap on swaps per search (at most ``10**9``).
    block : int
        Candidate starts screened first (the kernel then takes the remaining starts at once:
        the earliest start is usually among the first).
    reserve : bool
        Reserve the solution on ``pool`` (atomically).
    time_limit : float, optional
        Seconds for the whole call (default None: no limit), counted from its start as in
        every family; the scan stops at the deadline between steps (and stops a running
        integer program) and returns status ``"time_limit"``, the request undecided.

    Returns
    -------
    CoallocationResult
        ``"optimal"`` (earliest start proven, factor by enumeration), ``"feasible"`` or a
        rejection (``"infeasible"`` proven, ``"time_limit"`` undecided) whose ``rejection``
        says which check failed at which starts.

    Examples
    --------
    >>> pool = ResourcePool([[4.0], [2.0], [1.0]], ["cores"])
    >>> req = CollectiveRequest(60, 2, minimum={"cores": 1}, total={"cores": 3})
    >>> scan(req, pool).status
    'optimal'
    """
    request, pool = demand_first(request, pool, "scan", stacklevel=4)
    seed = check_seed(seed)
    check_backend(backend)
    enumerate_limit = bounded(enumerate_limit, "enumerate_limit", 0, 10**8)
    checks.choice(solver, ("highs", "cbc", "cpsat"), "solver")
    program_time_limit = checks.time_limit(program_time_limit, "program_time_limit")
    max_rounds = bounded(max_rounds, "max_rounds", 0, 10**9)
    block = bounded(block, "block", 1, 10**6)
    prob = Problem.of(pool, request)
    params = {"backend": backend, "enumerate_limit": enumerate_limit, "solver": solver,
              "program_time_limit": program_time_limit, "max_rounds": max_rounds}  # fmt: skip
    ker = kernels(backend)
    clock = Clock()
    n, e, d = request.count, prob.e, prob.d
    tol, elo, dlo = prob.tol, prob.elo, prob.dlo
    names = pool.names
    counters = {"starts": 0, "enumerated": 0, "swap_rounds": 0, "solver_calls": 0}
    nodes = prob.matching
    if nodes.size < n:
        lab = int(prob.label_ok.sum())
        short = [names[i] for i in range(len(names))
                 if np.sum(pool.capacity[prob.label_ok, i] < elo[i]) > 0]  # fmt: skip
        reason = {"reason": "too_few_matching", "label_matches": lab, "matching": int(nodes.size),
                  "needed": n, "capacity_short": short, "message":
                  f"no solution: {lab} nodes match the labels, {nodes.size} of them have the "
                  f"per-resource minimums as capacity; {n} needed"}  # fmt: skip
        return rejected(prob, "scan", reason, seed, params, clock.done(), counters, proven=True)
    cap = pool.capacity[nodes]
    top = -np.sort(-cap, axis=0)[:n].sum(axis=0)
    if np.any(top < dlo):
        i = int(np.flatnonzero(top < dlo)[0])
        reason = {"reason": "capacity", "property": names[i], "total": float(d[i]),
                  "best": float(top[i]), "message": f"no solution at any time: the {n} largest "
                  f"capacities of {names[i]!r} sum to {top[i]:g} < total {d[i]:g}"}  # fmt: skip
        return rejected(prob, "scan", reason, seed, params, clock.done(), counters, proven=True)
    starts = ker.decrease_starts(pool.times, pool.reserved, nodes, request.earliest_start,
                                 request.latest_start)  # fmt: skip
    cap = np.ascontiguousarray(cap)
    clock.lap("prepare")
    listed, summary, unknown = [], {"minimum": 0, "total": 0, "combination": 0, "undecided": 0}, 0
    binding: dict = {}
    checks_ = ("minimum", "total")

    def note(entry):
        summary[entry["check"]] += 1
        key = (entry["check"], entry.get("property"))
        binding[key] = binding.get(key, 0) + 1
        if len(listed) < _MAX_LISTED:
            listed.append(entry)

    def note_screened(b, codes, elig, props, vals):
        """Record the starts ``b`` (screen codes 1 and 2) at once: counts by check and
        property, and the first entries of the list."""
        if codes.size:
            keys = codes * len(names) + props  # (check, property) pairs, by first occurrence
            uniq, first, cnt = np.unique(keys, return_index=True, return_counts=True)
            for q in np.argsort(first, kind="stable").tolist():
                c, i = divmod(int(uniq[q]), len(names))
                summary[checks_[c - 1]] += int(cnt[q])
                key = (checks_[c - 1], names[i])
                binding[key] = binding.get(key, 0) + int(cnt[q])
        for c in range(min(codes.size, _MAX_LISTED - len(listed))):
            t, i = float(b[c]), int(props[c])
            if codes[c] == 1:
                listed.append({"start": t, "check": "minimum", "property": names[i],
                               "eligible": int(elig[c]), "meeting_property": int(vals[c]),
                               "needed": n})  # fmt: skip
            else:
                listed.append({"start": t, "check": "total", "property": names[i],
                               "best": float(vals[c]), "total": float(d[i])})  # fmt: skip

    pos = 0
    while pos < starts.size:
        interrupt.check()  # a batch's timeout or cancellation
        rest = starts[pos:]
        stop, codes, elig, props, vals, tmax = ker.scan_screen(
            pool.times, pool.reserved, nodes, rest, request.duration, cap, e, d, n, block,
            max(block, rest.size - block), tol=tol)  # fmt: skip
        counters["starts"] += min(stop + 1, rest.size)
        note_screened(rest[:stop], codes[:stop], elig[:stop], props[:stop], vals[:stop])
        clock.lap("window_max")
        if stop >= rest.size:
            break
        pos += stop + 1
        t = rest[stop]
        avail = cap - tmax
        el = np.flatnonzero(np.all(avail >= elo[None, :], axis=1))
        a, tm, cp = avail[el], tmax[el], cap[el]
        rows = None
        exact_u = False
        if math.comb(int(el.size), n) <= enumerate_limit:
            got = best_subset(a, tm, cp, d, n, enumerate_limit, tol=tol)
            counters["enumerated"] += math.comb(int(el.size), n)
            if got is not None and got[0] is not None:
                rows, exact_u = got[0], True
            else:
                note({"start": float(t), "check": "combination", "property": None})
                continue
        else:
            starts_ = _starts(a, tm, cp, d, n, e)
            r, k = ker.swap_search(a, tm, cp, d, starts_[0], max_rounds, tol)
            counters["swap_rounds"] += k
            cands = [r] if np.all(a[r].sum(axis=0) >= dlo) else []
            if not cands:
                # the repair from the best-coverage start failed: the integer program
                # decides whether any set exists at this start
                counters["solver_calls"] += 1
                status, r = feasible_subset(a, d, n, backend=solver, time_limit=program_time_limit,
                                            tol=tol)  # fmt: skip
                if status == "infeasible":
                    note({"start": float(t), "check": "combination", "property": None})
                    continue
                if r is None:
                    unknown += 1
                    note({"start": float(t), "check": "undecided", "property": None})
                    continue
                r, k = ker.swap_search(a, tm, cp, d, r, max_rounds, tol)
                counters["swap_rounds"] += k
                cands.append(r)
            for s0 in starts_[1:]:  # this start is feasible: more starts for the factor
                interrupt.check()  # a batch's timeout or cancellation
                r, k = ker.swap_search(a, tm, cp, d, s0, max_rounds, tol)
                counters["swap_rounds"] += k
                if np.all(a[r].sum(axis=0) >= dlo):
                    cands.append(r)
            clock.lap("search")
            us = [factor(d, tm[r], cp[r]) for r in cands]
            rows = cands[int(np.argmax(us))]
        clock.lap("search")
        proven = unknown == 0
        status = "optimal" if (exact_u and proven) else "feasible"
        result = solution(prob, "scan", float(t), nodes[el[rows]], tm[rows], seed, params,
                          {}, counters, status=status, proven=proven)  # fmt: skip
        if reserve:
            pool.reserve(result.start, request.duration, result.resources, result.amounts)
        result.timings = clock.done()
        return result
    (kind, prop), _ = max(binding.items(), key=lambda kv: kv[1]) if binding else ((None, None), 0)
    words = {"minimum": "per-resource minimum", "total": "total", "combination":
             "no combination of N eligible resources meets every total", "undecided":
             "undecided (time limit)"}  # fmt: skip
    what = words.get(kind, "")
    if prop is not None:
        what = f"{what} of {prop!r}"
    reason = {"reason": "no_start", "starts_checked": int(starts.size),
              "window": [request.earliest_start, request.latest_start], "summary": summary,
              "binding": {"check": kind, "property": prop}, "per_start": listed,
              "truncated": max(0, int(starts.size) - len(listed)), "message":
              f"no admissible solution at any of {starts.size} candidate starts in "
              f"[{request.earliest_start:g}, {request.latest_start:g}]; most often binding: "
              f"{what}"}  # fmt: skip
    return rejected(
        prob,
        "scan",
        reason,
        seed,
        params,
        clock.done(),
        counters,
        proven=unknown == 0,
        status="infeasible" if unknown == 0 else "time_limit",
    )


#: The scan with ``time_limit``, the call's deadline (:func:`coalloc._shared.params.deadline`).
# the name stays "scan" (Sphinx and numpydoc resolve the function by it, not the module)
scan = checks.with_time_limit(scan, functools.partial(stopped_result, method="scan"))
