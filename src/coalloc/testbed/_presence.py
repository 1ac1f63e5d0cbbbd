"""The explainer's presence model: the exact mapping model whose virtual nodes may be absent.

:func:`exact_core` (used by :mod:`coalloc.testbed.explain` only) builds the model of
:func:`coalloc.testbed.exact.exact_mapping` with one presence literal per virtual node and
asks CP-SAT for an unsat core over them (``SufficientAssumptionsForInfeasibility``): a set
of virtual nodes that cannot all be present. With ``alone`` (the per-link presence model)
each link carries its own presence and each node the candidate hosts it has alone, so the
core alone cannot be mapped. The model's pieces (placements, host rules, type limits,
trunks) are :mod:`.exact`'s own; only the presence rows are written here. Normal solves
never build this model.
"""

from __future__ import annotations

import sys
import time
from typing import Any, List, Optional

from .._shared.milp import import_solver_until
from . import exact as _exact
from .exact import (
    CPSAT_IMPORT_SECONDS,
    IMPORT_RAN_OUT,
    IMPORT_WONT_FIT,
    _exact_mapping,
    _fits_alone,
    _host_rules,
    _interfaces,
    _lonely_hosts,
    _OutOfTime,
    _trunk_model,
    _type_limits,
    _whole_node_classes,
)
from .problem import Problem

__all__ = ["exact_core"]


def exact_core(pr: Problem, *, time_limit: float, seed: int = 0,
               started: Optional[float] = None,
               alone: Optional[Problem] = None) -> Optional[List[int]]:  # fmt: skip
    """The virtual nodes of an unsat core of the exact model, or None.

    The model of :func:`exact_mapping` with one presence literal per virtual node (its
    placement row becomes "exactly one host, or absent": an absent node places nothing, so
    its host rules and its links' demands vanish with it), no objective, and the presence
    literals as CP-SAT assumptions. On ``INFEASIBLE`` the solver's
    ``SufficientAssumptionsForInfeasibility`` is a set of nodes that cannot all be present:
    their indices (sorted) are returned. None when the model is feasible, the time limit
    runs out, or the core is empty. Only the conflict search uses it (as a seed it proves
    again with :func:`exact_mapping`): normal solves build the model without these
    literals.

    With ``alone`` (the problem of the same virtual nodes without their links), each node's
    candidate hosts are those it has alone, and every link carries its own presence (both
    its ends present): a host takes a node only if it carries each of the node's present
    links (its bandwidth; per link type, as many interfaces of that type), and as many
    interfaces as present links. The model with any set of nodes present is then the
    model of that sub-experiment, so the core alone cannot be mapped. Without it, the
    candidates are ``pr``'s (filtered by all of a node's links), and the core alone may map
    once its links to absent nodes are gone.

    Parameters
    ----------
    pr : Problem
        The built problem (as :func:`exact_mapping` takes it).
    time_limit : float
        Seconds, counted from ``started`` (default: this call), model building included.
    seed : int, default 0
        CP-SAT's random seed.
    started : float, optional
        A ``time.perf_counter()`` value.
    alone : Problem, optional
        The problem of ``pr``'s virtual nodes (same names, same order) without links.

    Returns
    -------
    list of int or None
    """
    t0 = time.perf_counter() if started is None else float(started)
    keep: list = []
    try:
        if alone is None:
            return _exact_mapping(pr, time_limit, 1, seed, t0, keep, core=True)
        if list(alone.vnames) != list(pr.vnames) or len(alone.la):
            raise ValueError("alone must hold pr's virtual nodes, in order, without links")
        return _presence_core(pr, alone, time_limit, seed, t0, keep)
    except _OutOfTime:
        return None


def _widened(pr: Problem, alone: Problem) -> Problem:
    """``pr`` with each virtual node's candidates (and their type, static flag and feature
    cost) as ``alone`` has them: those of the node alone (a shallow copy; ``pr`` unchanged).
    A node's rows over the pclasses depend on the node and the pclass only, so where both
    have a pclass as candidate they agree."""
    import copy

    wide = copy.copy(pr)
    wide.cand = [list(c) for c in alone.cand]
    wide.vtype, wide.vstatic, wide.fcost = alone.vtype, alone.vstatic, alone.fcost
    return wide


def _link_rules(m: Any, pr: Problem, present: list, on: dict) -> int:
    """Each link's own presence (both ends present) and, for a virtual node ``v`` on
    pclass ``c`` (``on[v, c]``: its placement literals there), the links a host of ``c``
    cannot carry: a link wider than its fastest interface is absent, and per link type no
    more present links than its interfaces of that type. Returns the rows added."""
    from .problem import _testbed_part

    iface_types = _testbed_part(pr.ptop)["iface_types"]
    rows = 0
    lit: dict = {}

    def link(e: int) -> Any:
        if e not in lit:
            a, b = int(pr.la[e]), int(pr.lb[e])
            lit[e] = m.NewBoolVar(f"lp{e}")
            m.AddBoolAnd([present[a], present[b]]).OnlyEnforceIf(lit[e])
            m.AddBoolOr([present[a].Not(), present[b].Not()]).OnlyEnforceIf(lit[e].Not())
        return lit[e]

    for (v, c), places in on.items():
        p = int(pr.members[c][0])  # (the members of a pclass are alike)
        if pr.pis_switch[p]:
            continue
        wired = [e for e in pr.inc[v] if not pr.lemu[e]]
        wide = [e for e in wired if pr.lbw[e] > pr.pifbw[p]]
        by_type: dict = {}
        for e in wired:
            if pr.ltype[e]:
                by_type.setdefault(pr.ltype[e], []).append(e)
        short = [(es, int(iface_types[p].get(t, 0))) for t, es in by_type.items()
                 if len(es) > iface_types[p].get(t, 0)]  # fmt: skip
        if not wide and not short:
            continue
        for var in places:
            for e in wide:
                m.AddImplication(var, link(e).Not())
                rows += 1
            for es, n in short:
                m.Add(sum(link(e) for e in es) <= n).OnlyEnforceIf(var)
                rows += 1
    return rows


def _presence_core(pr: Problem, alone: Problem, time_limit, seed, t0, keep: list):
    """:func:`exact_core` with ``alone``: the model of :func:`_exact_mapping` (its pieces:
    placements, :func:`_host_rules`, :func:`_lonely_hosts`, type limits,
    :func:`_trunk_model`) over the node-alone candidates, with :func:`_link_rules`."""
    deadline = t0 + float(time_limit)

    def clock() -> None:
        if time.perf_counter() > deadline:
            raise _OutOfTime

    if ("ortools.sat.python.cp_model" not in sys.modules
            and deadline - time.perf_counter() < CPSAT_IMPORT_SECONDS):  # fmt: skip
        raise _OutOfTime(IMPORT_WONT_FIT.format(s=CPSAT_IMPORT_SECONDS))
    cp = import_solver_until("cpsat", deadline)
    if cp is None:
        raise _OutOfTime(IMPORT_RAN_OUT)
    pr = _widened(pr, alone)
    m = cp.CpModel()
    nv = pr.nv
    x: dict = {}
    agg: dict = {}
    on: dict = {}
    keep += [m, x, agg, on]
    whole = _whole_node_classes(pr)
    present = [m.NewBoolVar(f"in{v}") for v in range(nv)]
    iface = _interfaces(m, pr, present)
    for v in range(nv):
        clock()
        opts = []
        for c in pr.cand[v]:
            if c in whole and pr.fixed[v] < 0:
                p = int(pr.members[c][0])
                if _fits_alone(pr, v, c, p, links=False):
                    agg[v, c] = m.NewBoolVar(f"n{v}_{c}")
                    opts.append(agg[v, c])
                    on.setdefault((v, c), []).append(agg[v, c])
                    if v in iface:
                        m.Add(iface[v] <= int(pr.pifaces[p])).OnlyEnforceIf(agg[v, c])
                continue
            for p in pr.members[c]:
                p = int(p)
                if pr.fixed[v] >= 0 and pr.fixed[v] != p:
                    continue
                x[v, p] = m.NewBoolVar(f"x{v}_{p}")
                opts.append(x[v, p])
                on.setdefault((v, c), []).append(x[v, p])
        m.AddExactlyOne(opts + [present[v].Not()])
    per_c: dict = {}
    for (_v, c), var in agg.items():
        per_c.setdefault(c, []).append(var)
    for c, lst in per_c.items():
        if len(lst) > len(pr.members[c]):
            m.Add(sum(lst) <= len(pr.members[c]))
    _link_rules(m, pr, present, on)
    y, _ = _host_rules(m, pr, x, clock, iface)
    keep.append(y)
    _lonely_hosts(m, pr, x, present)
    _type_limits(m, pr, y, agg, clock)
    keep.append(_trunk_model(cp, m, pr, x, agg, clock))
    clock()
    return _exact._core(cp, m, present, deadline, seed)  # (looked up there: tests patch it)
