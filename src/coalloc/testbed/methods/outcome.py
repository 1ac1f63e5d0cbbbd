"""The one exit of every testbed method: a mapping checked by the independent checker
(:func:`_result`), or a failure with its reason, ``infeasible`` only when proven."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..._shared.result import relative_gap, settle
from .. import verify as _verify
from ..bounds import hub_proof
from ..io import as_ptop, as_top
from ..model import PhysicalTopology, VirtualTopology
from ..problem import Problem, _collection_deferred, build_problem
from ..reasons import reason_text
from ..result import MappingResult
from ..routing import _route_tables
from ..verify import verify_mapping

__all__ = ["PROVEN_FAILURES", "policy_breach"]

#: Failures that prove no mapping exists: a virtual node no free physical node can take, a
#: fix-node that cannot hold, a policy line the experiment breaks, a hub whose links the free
#: hosts and trunks cannot carry (:func:`.bounds.hub_proof`). Any other failure of a
#: search (assign+, the annealer) that ended by itself leaves the question open: status
#: ``no_solution`` (with its ``reason``), as the package's status rule says for a method
#: that ends with neither an answer nor a proof; never ``infeasible``, and ``time_limit``
#: only when the time limit stopped it.
PROVEN_FAILURES = ("no_candidate", "fixed", "policy", "hub_bandwidth")


def _pigeonhole(pr: Problem, reason: Optional[dict]) -> bool:
    """Does a ``capacity`` failure prove that no mapping exists? Yes when its virtual nodes
    are more than the free nodes of all the pclasses they may use, each taking a node of
    its own (a whole slot of a type of one slot, not through a static type)."""
    if not reason or reason.get("constraint") != "capacity" or "vnodes" not in reason:
        return False
    vs = [pr.vidx[n] for n in reason["vnodes"] if n in pr.vidx]
    if len(vs) != len(reason["vnodes"]):
        return False
    pcs = {int(c) for v in vs for c in pr.cand[v]}
    for v in vs:
        if pr.vslots[v] < 1:
            return False
        for c in pcs:
            t = pr.vtype[v, c]
            if t < 0:
                continue
            if pr.vstatic[v, c] or pr.cap[int(pr.members[c][0]), t] > 1:
                return False
    return len(vs) > sum(len(pr.members[c]) for c in pcs)


@dataclass(frozen=True)
class _Report:
    """What a mapping result reports of the call that made it: the method's name, its seed
    and parameters, when it began (``t0``: ``timings["total"]`` counts from there), its
    timings and counters."""

    method: str
    seed: Any
    params: dict
    t0: float
    timings: dict
    counters: dict


def _result(pr: Problem, report: _Report, where, routing, score=None, failure=None,
            status=None, message="", bound=None) -> MappingResult:  # fmt: skip
    """The result of the call ``report`` describes: the mapping ``where`` routed by
    ``routing``, checked by the independent checker, or a failure (``failure``, else the
    routing's), ``"infeasible"`` only when proven."""
    method, seed, params, t0 = report.method, report.seed, report.params, report.t0
    counters = report.counters
    timings = dict(report.timings)
    timings["total"] = time.perf_counter() - t0
    if where is None or routing is None or routing.failure is not None:
        reason = failure if failure is not None else (routing.failure if routing else None)
        if status in ("optimal", "feasible"):  # a success status without a mapping: never
            status = "error"
        if status is None:  # a search that found nothing: infeasible only when proven
            proven = (reason or {}).get("constraint") in PROVEN_FAILURES or _pigeonhole(pr, reason)
            if not proven:  # a cheap proof of the search's open failure (a hub's max flow)
                hub = hub_proof(pr)
                if hub is not None:
                    reason, proven = hub, True
                    message = f"no mapping exists: {reason_text(hub)}"
            status = "infeasible" if proven else "no_solution"
            if not proven and not message:
                message = f"no mapping found (not proven impossible): {reason_text(reason)}"
        return settle(MappingResult(
            status=status, method=method, seed=seed, params=params,
            message=message or f"no mapping: {reason_text(reason)}", timings=timings,
            iterations=counters, reason=reason or {"constraint": "unknown"},
        ))  # fmt: skip
    pn = pr.pnames
    mapping = dict(zip(pr.vnames, [pn[p] for p in np.asarray(where).tolist()]))
    isw = float(routing.interswitch_bandwidth)
    # last line of defence: the independent checker must accept what is reported as success
    report = verify_mapping(pr.top, pr.ptop, mapping, routing.routes, claimed=isw)
    if not report.ok:
        timings["total"] = time.perf_counter() - t0
        return MappingResult(
            status="error", method=method, seed=seed, params=params, timings=timings,
            iterations=counters, message=f"internal error: the mapping found fails the "
            f"independent check ({report.violations[:3]}); not reported as a success",
            reason={"constraint": "internal_check", "violations": report.violations[:10]},
        )  # fmt: skip
    if bound is None and isw == 0:  # no mapping crosses less than nothing: proven
        bound = 0.0
    gap = relative_gap(isw, bound, sense="min")
    return settle(MappingResult(
        status=status or "feasible", method=method, seed=seed, params=params,
        message=message or f"mapped {pr.nv} nodes; inter-switch bandwidth {isw:g}",
        timings=timings, iterations=counters, objective=isw, bound=bound, gap=gap,
        mapping=mapping, routes=dict(routing.routes), kinds=dict(routing.kinds),
        interswitch_bandwidth=isw, trunk_load=dict(routing.trunk_load), score=score,
    ))  # fmt: skip


def _problem(top, ptop, available, trunk_used=None):
    top, ptop = as_top(top), as_ptop(ptop)
    with _collection_deferred():  # (the tables too: the collection the build deferred
        return _set_up(top, ptop, available, trunk_used)  # came in them, 0.3-0.6 s, load 8)


def _set_up(top, ptop, available, trunk_used):
    """:func:`_problem`'s steps: the problem, then the testbed's tables."""
    pr = build_problem(top, ptop, available, trunk_used)
    # the router's and the checker's tables of the testbed (cached on it) are built here,
    # in the set-up the deadline counts, not by the answer's routing and check after the
    # search's deadline: on a testbed's first mapping they took 0.3 s past a 2 s limit
    # (ring(800) on 2,000 PCs, load 8)
    # (both look at the deadline, and a stopped build is resumed by the next call: on a
    # testbed's first mapping under load they took 0.1-0.7 s each, assign+ at T = 1 s
    # ending at 1.3-1.5 s)
    _route_tables(pr, polled=True)
    _verify._testbed_tables(ptop, polled=True)  # (through the module: a batch's counter)
    return pr


def policy_breach(top: VirtualTopology, ptop: PhysicalTopology) -> Optional[dict]:
    """The first ``policy desire`` line of the testbed the experiment breaks, or None.

    As Emulab's ``assign`` checks them before mapping (its policy precheck, an unretryable
    failure): ``disallow`` forbids any virtual node desiring the feature; ``limit X`` caps
    the sum of the weights with which the virtual nodes desire it.
    """
    for name, (kind, limit) in ptop.policies.items():
        users = [v for v, node in top.nodes.items() if name in node.desires]
        if not users:
            continue
        if kind == "disallow":
            return {"constraint": "policy", "desire": name, "policy": "disallow",
                    "vnodes": users}  # fmt: skip
        total = math.fsum(top.nodes[v].desires[name] for v in users)
        if limit is not None and total > limit + 1e-9:
            return {"constraint": "policy", "desire": name, "policy": "limit",
                    "total": total, "limit": limit, "vnodes": users}  # fmt: skip
    return None


#: The quick anneal of the default portfolio: it starts from the best strategy's mapping
