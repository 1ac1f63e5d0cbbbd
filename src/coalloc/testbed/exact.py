"""Exact mapping of small experiments on the shared CP-SAT runner.

Minimises the inter-switch bandwidth (bandwidth x trunk hops, by home switch) subject to
every hard constraint the heuristics obey: candidate physical nodes, one type at a time
with slot counts, additive features, interfaces (non-trivial non-emulated links), type
limits, fixed nodes, trunk bandwidth (each link takes one trunk of every trunk group it
crosses, so parallel trunks are packed one by one). Variables: ``x[v, p]`` (virtual node on
physical node; ``n[v, c]``, virtual node on pclass, where the pclass's nodes each host one
virtual node: see ``_whole_node_classes``), ``y[p, t]`` (p acts as type t), ``z[v, s]``
(v behind switch s) and
``w[e, s, t]`` (link e between switches s and t, the product of two z's; only pairs on
different switches), ``u[e, trunk]`` (link e takes that trunk of a group). The routes are
then found by :func:`.routing.route`, on the trunks the model chose.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import numpy as np

from .._shared.milp import MilpOutcome, import_solver_until, run_cpsat
from .._shared.milp.run import IMPORT_SECONDS
from .problem import Problem, link_bw

__all__ = ["exact_mapping"]  # (exact_core: in ._presence, reachable here too)


#: About what a process's first import of CP-SAT (OR-Tools) takes: with less time left, a
#: time-limited call does not start it (status time_limit, no mapping), rather than return
#: that long after its limit. With more, the import is waited for until the deadline only
#: (:func:`coalloc._shared.milp.import_solver_until`: it took 4.7 s under a load of 15).
CPSAT_IMPORT_SECONDS = IMPORT_SECONDS["cpsat"]


#: With less time left, once the constraints are built, than this share of the time they
#: took, the model is not finished (status time_limit, no mapping, at once): neither the
#: objective nor CP-SAT's start would fit in it (0.3-0.4 s of 8 s for 800 nodes onto 2,000
#: PCs under load, when the objective went through one WeightedSum and ``Minimize``; it is
#: now written into the proto a slice at a time, with looks at the clock between: issue 36).
OBJECTIVE_SHARE = 0.1


#: The long rows (a trunk group's or a trunk's bandwidth, the objective) are written into
#: the model's proto (``CpModel.Proto()``) this many terms at a time, with a look at the
#: clock between two slices; one ``WeightedSum`` of a group's terms or ``Minimize``'s pass
#: over 16,000 objective terms could not look at it (25-90 ms each under load, issue 36).
PROTO_SLICE = 2048

#: Write the long rows and the objective into the proto (True), or through CP-SAT's own
#: ``Add``/``Minimize`` (False: the same model, built the slow way; a test compares them).
_DIRECT = True

_INT64_MIN = -(2**63)


#: Why CP-SAT was not started (the message of a ``time_limit`` outcome without a model).
BUILDING = "the time limit ran out while its model was built"
IMPORT_WONT_FIT = ("its first import in this process (about {s:g} s) would not fit in the "
                   "time limit, so no model was begun")
IMPORT_RAN_OUT = "the time limit ran out while it was being imported, before any model"
OBJECTIVE_WONT_FIT = ("the time left once its model was built (the constraints) would not "
                      "fit the objective's hand-over and the solver's start")


class _OutOfTime(Exception):
    """The time limit ran out before CP-SAT started; ``why``: at which step."""

    def __init__(self, why: str = BUILDING) -> None:
        super().__init__(why)
        self.why = why


def exact_mapping(pr: Problem, *, time_limit: Optional[float] = None, threads: int = 1,
                  seed: Optional[int] = 0, started: Optional[float] = None,
                  keep: Optional[list] = None):  # fmt: skip
    """Solve the mapping problem exactly; returns ``(where or None, outcome, trunks)``.

    ``trunks`` maps ``(link index, trunk group)`` to the trunk the model gave that link in
    that group (pass it to :func:`.routing.route` so that the routes follow the model).

    The time limit counts from ``started`` (a ``time.perf_counter()`` value; default: this
    call): building the model is part of it, and a limit that runs out while the model is
    built gives a ``time_limit`` outcome without starting the solver. With ``keep`` (a
    list), the model and the containers of its variables are appended there rather than
    freed on return (freeing them takes 0.1-0.2 s on 800 nodes onto 2,000 PCs: the caller
    frees them after its answer, :func:`coalloc._shared.milp.supervise.free_in_background`).
    """
    t0 = time.perf_counter() if started is None else float(started)
    try:
        return _exact_mapping(pr, time_limit, threads, seed, t0, [] if keep is None else keep)
    except _OutOfTime as stop:
        return None, MilpOutcome(
            x=None, bound=None, status="time_limit", solver_status=-1,
            message=f"CP-SAT: not started: {stop.why}; no incumbent found", nodes=None,
            time_limit_hit=True, infeasible=False, rows=0,
            time_limit=time_limit,
        ), {}  # fmt: skip


def _bandwidth_unit(bws, caps, ns: int):
    """``(unit, up, down)``: bandwidths in CP-SAT's integers. Whole numbers of kbit/s whose
    sums fit are taken as they are (unit 1, ``up`` rounds, ``down`` floors: the model as it
    always was); otherwise they are counted in units of ``max / 2**40``, link bandwidths
    rounded to the nearest unit and capacities given half a unit per link of slack, so that
    the rounding cannot make a fitting set of links not fit (the router then checks the real
    bandwidths; the model is no longer exact: its optimum and infeasibility prove nothing)."""
    finite = [abs(x) for x in list(bws) + list(caps) if math.isfinite(x)]
    top = max(finite, default=0.0)
    whole = all(x == int(x) for x in bws)
    if whole and top * max(len(bws), 1) * max(ns, 1) <= 2.0**53:
        return 1.0, lambda x: int(round(x)), lambda c: int(math.floor(c + 1e-9))
    unit = top / 2.0**40 if top > 0 else 1.0
    slack = 0.5 * len(bws) + 1e-9
    return (
        unit,
        lambda x: int(round(x / unit)),
        lambda c: int(math.floor(c / unit + slack)),
    )


def _capacity(m, terms, cap: float) -> None:
    """``sum(demand x var) <= cap`` in CP-SAT's integers: demands and capacity in thousandths
    (as always), or scaled down to fit 2**50 when that would not fit; an unlimited capacity
    (``*``) adds nothing, a demand above the capacity (``*`` included) fixes its var at 0.
    No ``int(inf)`` and no coefficient beyond int64."""
    if math.isinf(cap):
        return
    fit = []
    for var, d in terms:
        if d > cap + 1e-9:
            m.Add(var == 0)
        else:
            fit.append((var, d))
    if not fit:
        return
    top = max(max(d for _, d in fit), cap, 1e-300)
    scale = 1000.0 if top * 1000 <= 2.0**50 else 2.0**50 / top
    m.Add(sum(int(round(d * scale)) * var for var, d in fit) <= int(round(cap * scale)))


def _weighted(cp, terms):
    """``sum(coef x var)`` of ``(var, coef)`` pairs as one CP-SAT expression (built at once:
    Python's ``sum`` of 16,000 products took a good part of a second)."""
    return cp.LinearExpr.WeightedSum([v for v, _ in terms], [c for _, c in terms])


def _flat(terms, clock) -> tuple:
    """``(indices, coefficients)`` of ``(var, coef)`` pairs as CP-SAT's own flattening of a
    ``WeightedSum`` writes them: one entry per variable (its coefficients summed), zeros
    dropped, by variable index; the clock is looked at every ``PROTO_SLICE`` terms."""
    acc: dict = {}
    get = acc.get
    for k, (var, c) in enumerate(terms):
        if not k % PROTO_SLICE:
            clock()
        i = var.Index()
        acc[i] = get(i, 0) + int(c)
    index = sorted(i for i, c in acc.items() if c)
    clock()
    return index, [acc[i] for i in index]


def _put(field, index: list, coeffs: list, clock) -> None:
    """Append ``index``/``coeffs`` to a proto's ``vars``/``coeffs``, a slice at a time."""
    for k in range(0, len(index), PROTO_SLICE):
        field.vars.extend(index[k : k + PROTO_SLICE])
        field.coeffs.extend(coeffs[k : k + PROTO_SLICE])
        clock()


def _at_most(cp, m, terms, ub: int, clock) -> None:
    """``sum(coef x var) <= ub``: the row ``m.Add(_weighted(cp, terms) <= ub)`` adds,
    written into the proto in slices (``_DIRECT``)."""
    if not _DIRECT:
        m.Add(_weighted(cp, terms) <= ub)
        return
    index, coeffs = _flat(terms, clock)
    lin = m.Proto().constraints.add().linear
    _put(lin, index, coeffs, clock)
    lin.domain.extend((_INT64_MIN, int(ub)))


def _minimize(cp, m, terms, clock) -> None:
    """The objective ``m.Minimize(_weighted(cp, terms) if terms else 0)`` sets, written
    into the proto in slices (``_DIRECT``)."""
    if not _DIRECT:
        m.Minimize(_weighted(cp, terms) if terms else 0)
        return
    index, coeffs = _flat(terms, clock)
    m.ClearObjective()
    obj = m.Proto().objective
    _put(obj, index, coeffs, clock)
    obj.scaling_factor = 1.0


def _exactly_one(m, literals: list) -> None:
    """``m.AddExactlyOne(literals)``'s row, written into the proto (``_DIRECT``)."""
    if not _DIRECT:
        m.AddExactlyOne(literals)
        return
    m.Proto().constraints.add().exactly_one.literals.extend([lit.Index() for lit in literals])


def _whole_node_classes(pr: Problem) -> set:
    """The pclasses whose nodes each host at most one virtual node, whoever uses them.

    A pclass's members are interchangeable (one signature: types, features, interfaces,
    home switch), so where every virtual node that may use one takes it whole, the model
    needs only *which pclass* a virtual node is on (``n[v, c]``, at most ``|members|`` per
    pclass) and the members are handed out afterwards: the same optimum and the same
    proof, without the ``|members|!`` interchangeable placements that kept the per-node
    model's bound at 0 (Emulab's test_big on the Utah testbed of 2000: 20 virtual nodes,
    32 PCs in 5 pclasses). Whole: no static type there, and each of its virtual nodes fills
    its type's slots (two of them would not fit); no fixed node, no direct link into it.
    """
    fixed = {int(p) for p in pr.fixed if p >= 0}
    direct = {p for pair in pr.direct for p in pair}
    users: dict = {}
    for v in range(pr.nv):
        for c in pr.cand[v]:
            users.setdefault(int(c), []).append(v)
    whole = set()
    for c, vs in users.items():
        mem = [int(p) for p in pr.members[c]]
        if len(mem) < 2 or any(p in fixed or p in direct or pr.pis_switch[p] for p in mem):
            continue
        if any(pr.vstatic[v, c] or pr.vtype[v, c] < 0 for v in vs):
            continue
        p = mem[0]
        # per type, the two smallest slot counts of its users: the smallest two must not
        # fit on one node together (then no two do)
        slots: dict = {}
        for v in vs:
            slots.setdefault(int(pr.vtype[v, c]), []).append(float(pr.vslots[v]))
        if all(len(s) < 2 or sum(sorted(s)[:2]) > pr.cap[p, t] + 1e-9 for t, s in slots.items()):
            whole.add(c)
    return whole


def _fits_alone(pr: Problem, v: int, c: int, p: int, links: bool = True) -> bool:
    """May virtual node ``v`` sit alone on node ``p`` of pclass ``c`` (slots, additive
    features, and with ``links`` interfaces)?"""
    t = int(pr.vtype[v, c])
    if pr.vslots[v] > min(pr.cap[p, t], 1e6) + 1e-9:
        return False
    for a in range(len(pr.add_names)):
        if pr.vadd[v, a] > pr.padd[p, a] + 1e-9:
            return False
    if not links:
        return True
    need = sum(1 for e in pr.inc[v] if not pr.lemu[e] and not pr.ltriv[e])
    return need <= int(pr.pifaces[p])


def _host_rules(m: Any, pr: Problem, x: dict, clock: Any,
                iface: Optional[dict] = None) -> tuple:  # fmt: skip
    """The rules of each physical node ``p`` over the placements ``x[v, p]``: the type it
    acts as (``y[p, t]``, at most one), its slots of that type, its additive features, its
    interfaces. Returns ``(y, rows added)``.

    With ``iface`` (:func:`exact_core`: per virtual node, its links whose both ends are
    present, :func:`_interfaces`), a node takes that many interfaces, as in the
    sub-experiment of the present nodes."""
    rows = 0
    by_p = {}
    for (v, p), var in x.items():
        by_p.setdefault(p, []).append((v, var))
    y = {}
    for p, lst in by_p.items():
        clock()
        types = set()
        for v, var in lst:
            c = pr.pclass[p]
            if not pr.vstatic[v, c]:
                t = int(pr.vtype[v, c])
                types.add(t)
                if (p, t) not in y:
                    y[p, t] = m.NewBoolVar(f"y{p}_{t}")
                m.AddImplication(var, y[p, t])
                rows += 1
        if types:
            m.AddAtMostOne([y[p, t] for t in types])
            for t in types:
                cap = min(pr.cap[p, t], 1e6)
                terms = [
                    (var, pr.vslots[v])
                    for v, var in lst
                    if not pr.vstatic[v, pr.pclass[p]] and pr.vtype[v, pr.pclass[p]] == t
                ]
                _capacity(m, terms, cap)
                rows += 2
        for a in range(len(pr.add_names)):
            dem = [(var, pr.vadd[v, a]) for v, var in lst if pr.vadd[v, a] > 0]
            if dem:
                _capacity(m, dem, float(pr.padd[p, a]))
                rows += 1
        if not pr.pis_switch[p]:
            need = [(var, sum(1 for e in pr.inc[v] if not pr.lemu[e] and not pr.ltriv[e]))
                    for v, var in lst]  # fmt: skip
            if iface is not None and any(n for _, n in need):
                used = []
                for (v, var), (_, n) in zip(lst, need):
                    if n:  # v's interfaces in use on p: its present links' count, when there
                        u = m.NewIntVar(0, n, f"i{v}_{p}")
                        m.Add(u == iface[v]).OnlyEnforceIf(var)
                        m.Add(u == 0).OnlyEnforceIf(var.Not())
                        used.append(u)
                m.Add(sum(used) <= int(pr.pifaces[p]))
                rows += 1
            elif any(n for _, n in need):
                m.Add(sum(n * var for var, n in need) <= int(pr.pifaces[p]))
                rows += 1
    return y, rows


def _interfaces(m: Any, pr: Problem, present: list) -> dict:
    """Per virtual node with interface links, the number of them whose both ends are
    present (an integer variable): each link's presence is the AND of its ends'."""
    both: dict = {}
    count = {}
    for v in range(pr.nv):
        terms = []
        for e in pr.inc[v]:
            if pr.lemu[e] or pr.ltriv[e]:
                continue
            if e not in both:
                a, b = int(pr.la[e]), int(pr.lb[e])
                both[e] = m.NewBoolVar(f"l{e}")
                m.AddBoolAnd([present[a], present[b]]).OnlyEnforceIf(both[e])
                m.AddBoolOr([present[a].Not(), present[b].Not()]).OnlyEnforceIf(both[e].Not())
            terms.append(both[e])
        if terms:
            count[v] = m.NewIntVar(0, len(terms), f"k{v}")
            m.Add(count[v] == sum(terms))
    return count


def _lonely_hosts(m: Any, pr: Problem, x: dict, present: Optional[list] = None,
                  clock: Any = None) -> int:
    """A host wired only to other hosts (no switch interface) reaches nothing but its direct
    peers: a link with one end there has its other end on a peer (or on the same host when
    the link may be trivial). Returns the rows added. With ``present``
    (:func:`exact_core`), only when that other end is present."""
    if not pr.direct:
        return 0
    rows = 0
    peers: dict = {}
    for a, b in pr.direct:
        peers.setdefault(a, set()).add(b)
        peers.setdefault(b, set()).add(a)
    sidx = pr.sidx
    lonely = {p for p in peers if not pr.pis_switch[p] and not any(
        (lk.b if lk.a == pr.pnames[p] else lk.a) in sidx
        for lk in pr.ptop.interfaces(pr.pnames[p]))}  # fmt: skip
    for e in range(len(pr.la)):
        if clock is not None:
            clock()
        u, w = int(pr.la[e]), int(pr.lb[e])
        for s, t in ((u, w), (w, u)):
            for p in lonely:
                if (s, p) not in x:
                    continue
                ok = [x[t, q] for q in sorted(peers[p]) if (t, q) in x]
                if pr.ltriv[e] and (t, p) in x:
                    ok.append(x[t, p])
                there = 0 if present is None else 1 - present[t]  # (t absent: no rule)
                if ok:
                    m.Add(sum(ok) + there >= x[s, p])
                else:
                    m.Add(x[s, p] <= there)
                rows += 1
    return rows


def _type_limits(m: Any, pr: Problem, y: dict, agg: dict, clock: Any) -> int:
    """The set-type-limit rows as Emulab counts them: a used node (acting as any type: sum of
    its y, at most one) adds its slots of every type it lists (``pr.tweight``) to that type's
    count; a virtual node on a whole-node pclass uses a node of its own. Returns the rows
    added (a limit above every node's weight together cannot bind, and may not fit int64)."""
    rows = 0
    for t, lim in enumerate(pr.tlimit):
        clock()
        if lim < 0:
            continue
        terms = [(var, int(round(pr.tweight[p, t] * 1000))) for (p, tt), var in y.items()
                 if pr.tweight[p, t] > 0]  # fmt: skip
        terms += [(var, int(round(pr.tweight[int(pr.members[c][0]), t] * 1000)))
                  for (v, c), var in agg.items()
                  if pr.tweight[int(pr.members[c][0]), t] > 0]  # fmt: skip
        if terms and sum(w for _, w in terms) > int(lim) * 1000:
            m.Add(sum(w * var for var, w in terms) <= int(lim) * 1000)
            rows += 1
    return rows


def _trunk_model(cp: Any, m: Any, pr: Problem, x: dict, agg: dict, clock: Any,
                 keep: Optional[list] = None) -> tuple:
    """The trunks: each virtual node's switch (``z``), each link's pair of switches (``w``)
    and the trunks of its path, the groups' capacities, and each link packed into ONE trunk
    of every group it crosses. Returns ``(objective terms, trunk plan variables, rows
    added)``. Its containers of variables go to ``keep`` as they are made (freed by the
    caller in the background; freed here, when the limit stopped the build inside this
    function, they took 10-27 ms as the stop unwound, after the deadline)."""
    nv, ns = pr.nv, len(pr.switches)
    rows = 0
    obj = []
    plan: dict = {}  # (e, g, trunk name) -> u: link e takes that trunk of group g
    keep = [] if keep is None else keep
    keep += [obj, plan]  # (each container as it is made: also when the limit stops here)
    if ns > 1 and len(pr.la):
        z = {}
        per_vs: dict = {}  # (v, switch) -> the x[v, p] of the p behind that switch
        keep += [z, per_vs]
        for (v, p), var in x.items():
            if pr.pswitch[p] >= 0:
                per_vs.setdefault(v, {}).setdefault(int(pr.pswitch[p]), []).append(var)
        for (v, c), var in agg.items():
            p = int(pr.members[c][0])
            if pr.pswitch[p] >= 0:
                per_vs.setdefault(v, {}).setdefault(int(pr.pswitch[p]), []).append(var)
        for v in range(nv):
            clock()
            per_s = per_vs.get(v, {})
            for s, lst in per_s.items():
                clock()
                z[v, s] = m.NewBoolVar(f"z{v}_{s}")
                m.Add(z[v, s] == sum(lst))
                rows += 1
        load = {g: [] for g in range(len(pr.tcap))}
        cross: dict = {}  # (e, g) -> the w of e whose switch path uses trunk group g
        keep += [load, cross]
        link_bws = []
        bws = []
        for e in range(len(pr.la)):
            bw = pr.lbw[e]
            if bw < 0:  # native bandwidth: the largest it can be
                bw = link_bw(pr, e, int(np.argmax(pr.pifbw * ~pr.pis_switch)),
                             int(np.argmax(pr.pifbw * ~pr.pis_switch)))  # fmt: skip
            bws.append(float(bw))
        caps = [float(c) for c in pr.tcap] + [
            pr.ptop.links[n].bw - pr.trunk_used.get(n, 0.0) for names in pr.tlinks for n in names
        ]
        unit, up, down = _bandwidth_unit(bws, caps, ns)
        if unit != 1.0:
            pr.exact_rescaled = (f"bandwidths not whole numbers of kbit/s or too large for "
                                 f"CP-SAT's integers: counted in units of {unit:g}")  # fmt: skip
        for e in range(len(pr.la)):
            clock()
            a, b = int(pr.la[e]), int(pr.lb[e])
            bwi = up(bws[e])
            link_bws.append(bwi)
            ws = []
            for s in range(ns):
                if (a, s) not in z:
                    continue
                for t in range(ns):
                    if t == s or (b, t) not in z:
                        continue
                    clock()  # (a link has up to ns x (ns - 1) pairs: 10-100 ms under load)
                    hops = pr.path_of(s, t)
                    w = m.NewBoolVar(f"w{e}_{s}_{t}")
                    m.Add(w >= z[a, s] + z[b, t] - 1)
                    rows += 1
                    if hops is None:
                        m.Add(w == 0)
                        continue
                    ws.append(w)
                    obj.append((w, bwi * len(hops)))
                    for g in hops:
                        load[g].append((w, bwi))
                        cross.setdefault((e, g), []).append(w)
            if len(ws) > 1:
                m.Add(sum(ws) <= 1)  # one pair of switches per link
                rows += 1
        for g, terms in load.items():
            if terms:
                clock()
                _at_most(cp, m, terms, down(pr.tcap[g]), clock)
                rows += 1
        # Each link takes ONE trunk of every group it crosses (as the router routes it), so
        # the parallel trunks of a group are packed one by one: a group's total free
        # bandwidth is not enough (two 2 Gb/s trunks with 0.5 Gb/s in use each do not carry
        # three 1 Gb/s links).
        per_trunk: dict = {}
        keep.append(per_trunk)
        for (e, g), ws in cross.items():
            clock()
            names = [n for n in pr.tlinks[g] if not pr.ltype[e] or pr.ltype[e] in
                     (pr.ptop.links[n].types or ("ethernet",))]  # fmt: skip
            if len(pr.tlinks[g]) == 1 and len(names) == 1:
                continue  # the group's constraint is the trunk's
            use = []
            for n in names:
                clock()
                u = m.NewBoolVar(f"u{e}_{n}")
                plan[e, g, n] = u
                use.append(u)
                per_trunk.setdefault(n, []).append((u, link_bws[e]))
            m.Add(sum(use) == sum(ws))
            rows += 1
        for n, terms in per_trunk.items():
            free = pr.ptop.links[n].bw - pr.trunk_used.get(n, 0.0)
            clock()
            _at_most(cp, m, terms, down(free), clock)
            rows += 1
    return obj, plan, rows


def _exact_mapping(pr: Problem, time_limit, threads, seed, t0, keep: list, core: bool = False):
    """Build the model (the cyclic collector paused under a time limit) and solve it.

    The build allocates some 100,000 containers and variable wrappers; with the collector
    on, they set off its older generations inside the build, where no look at the clock
    can interrupt them (one full collection took 176 ms, another 96 + 209 ms, of a 1-1.9 s
    build of 800 nodes onto 2,000 PCs at a load of 5: issue 36). Under a time limit the
    collector is paused while the model is built (after the solver's import: a fresh
    process's import of OR-Tools, its objects then left to the one collection below, made
    it 100-130 ms long) and turned back on just before the solver starts, after one
    collection of the youngest generation (8-30 ms: the build's objects, looked at once),
    a piece the clock then judges; on any other way out (the limit ran out, an error) it
    is turned back on as the call ends. Nothing changes without a limit,
    or when the collector was off already (it is never turned on here).
    """
    deadline = None if time_limit is None else t0 + float(time_limit)
    paused = [False]

    def pause() -> None:  # (after the solver's import: its objects are not the build's)
        if deadline is not None and gc.isenabled():
            gc.disable()
            paused[0] = True

    def resume() -> None:
        if paused[0]:
            paused[0] = False
            gc.enable()
            gc.collect(0)

    try:
        return _model_and_solve(pr, _BuildRun(
            time_limit=time_limit, threads=threads, seed=seed, deadline=deadline, started=t0,
            keep=keep, core=core, pause=pause, resume=resume))  # fmt: skip
    finally:
        resume()


@dataclass(frozen=True, kw_only=True)
class _BuildRun:
    """How :func:`_exact_mapping` asks :func:`_model_and_solve` to build and solve: the
    solver's ``time_limit``, ``threads`` and ``seed``; the ``deadline`` (perf_counter
    seconds, None: none) and the call's start ``started``; ``keep``, the list that holds the
    model's objects for the caller to free; ``core``: the presence model (its core's node
    indices) rather than the mapping; ``pause``/``resume``: the cyclic collector off while
    the model is built, back on before the solver starts."""

    time_limit: Any
    threads: Any
    seed: Any
    deadline: Optional[float]
    started: float
    keep: list
    core: bool
    pause: Callable[[], None]
    resume: Callable[[], None]


def _model_and_solve(pr: Problem, run: _BuildRun):
    """The CP-SAT model of ``pr`` built under ``run``'s clock, then solved: ``(where, outcome,
    trunks)``, or the core's node indices under ``run.core``."""
    time_limit, threads, seed, t0 = run.time_limit, run.threads, run.seed, run.started
    deadline, keep, core, pause, resume = run.deadline, run.keep, run.core, run.pause, run.resume

    def clock() -> None:  # between two variables, two rows, two slices of a long row
        if deadline is not None and time.perf_counter() > deadline:
            raise _OutOfTime

    if (deadline is not None and "ortools.sat.python.cp_model" not in sys.modules
            and deadline - time.perf_counter() < CPSAT_IMPORT_SECONDS):  # fmt: skip
        # (a first import would overrun the limit by itself)
        raise _OutOfTime(IMPORT_WONT_FIT.format(s=CPSAT_IMPORT_SECONDS))
    # with more time left, the import is still bounded by the deadline (4.7 s under a load
    # of 15): it goes on in the background when the deadline comes first
    cp = import_solver_until("cpsat", deadline)
    if cp is None:
        raise _OutOfTime(IMPORT_RAN_OUT)
    pause()
    t_build = time.perf_counter()
    m = cp.CpModel()
    nv = pr.nv
    x = {}
    rows = 0
    whole = _whole_node_classes(pr)
    clock()
    agg: dict = {}  # (v, c) -> v on some node of the whole-node pclass c (_whole_node_classes)
    keep += [m, x, agg]  # freed by the caller, in the background (exact_mapping)
    present = [m.NewBoolVar(f"in{v}") for v in range(nv)] if core else []
    # (core only, exact_core: v's presence literal, an assumption; a link takes interfaces
    # only when both its ends are present)
    iface = _interfaces(m, pr, present) if core else {}
    for v in range(nv):
        clock()
        opts = []
        for c in pr.cand[v]:
            clock()  # (between two variables: a new_bool_var took 40-120 us under load)
            if c in whole and pr.fixed[v] < 0:
                p = int(pr.members[c][0])  # (the members are alike: one stands for all)
                if _fits_alone(pr, v, c, p, links=not core):
                    agg[v, c] = m.NewBoolVar(f"n{v}_{c}")
                    opts.append(agg[v, c])
                    if v in iface:  # alone on the node: its present links' interfaces
                        m.Add(iface[v] <= int(pr.pifaces[p])).OnlyEnforceIf(agg[v, c])
                continue
            for p in pr.members[c]:
                p = int(p)
                if pr.fixed[v] >= 0 and pr.fixed[v] != p:
                    continue
                clock()
                x[v, p] = m.NewBoolVar(f"x{v}_{p}")
                opts.append(x[v, p])
        if core:  # one host, or absent (then nothing of v is placed)
            _exactly_one(m, opts + [present[v].Not()])
        else:
            _exactly_one(m, opts)
        rows += 1
    per_c: dict = {}
    for (_v, c), var in agg.items():
        per_c.setdefault(c, []).append(var)
    for c, lst in per_c.items():  # each takes a node of its own: at most one per member
        if len(lst) > len(pr.members[c]):
            m.Add(sum(lst) <= len(pr.members[c]))
            rows += 1
    y, host_rows = _host_rules(m, pr, x, clock, iface if core else None)
    keep.append(y)
    rows += host_rows
    rows += _lonely_hosts(m, pr, x, present if core else None, clock)
    rows += _type_limits(m, pr, y, agg, clock)
    obj, plan, trunk_rows = _trunk_model(cp, m, pr, x, agg, clock, keep)
    rows += trunk_rows
    clock()
    if core:
        resume()  # (the collector back on, before the solver starts)
        clock()
        return _core(cp, m, present, deadline, seed)
    if deadline is not None:  # the objective's hand-over (OBJECTIVE_SHARE)
        now = time.perf_counter()
        if deadline - now < OBJECTIVE_SHARE * (now - t_build):
            raise _OutOfTime(OBJECTIVE_WONT_FIT)
    _minimize(cp, m, obj, clock)  # (polled: written a slice at a time)
    clock()
    keys = list(plan)
    nkeys = list(agg)
    variables = list(x.values()) + [agg[k] for k in nkeys] + [plan[k] for k in keys]
    keep.append(variables)
    resume()  # (the collector back on, before the solver starts)
    clock()
    out = run_cpsat(cp, m, variables,
                    rows=rows, time_limit=time_limit, threads=threads, seed=seed,
                    started=t0)  # fmt: skip
    if out.x is None:
        return None, out, {}
    where = np.full(nv, -1, dtype=np.int64)
    for (v, p), val in zip(x.keys(), out.x[: len(x)]):
        if val > 0.5:
            where[v] = p
    # a whole-node pclass's virtual nodes take its members in order, one each
    taken: dict = {}
    for (v, c), val in zip(nkeys, out.x[len(x) : len(x) + len(agg)]):
        if val > 0.5:
            k = taken.get(c, 0)
            where[v] = int(pr.members[c][k])
            taken[c] = k + 1
    off = len(x) + len(agg)
    trunks = {(e, g): name for (e, g, name), val in zip(keys, out.x[off:]) if val > 0.5}
    return where, out, trunks


def _core(cp: Any, m: Any, present: list, deadline: Optional[float],
          seed: Any) -> Optional[List[int]]:  # fmt: skip
    """Solve the presence model under its assumptions; the core's node indices or None."""
    m.AddAssumptions(present)
    solver = cp.CpSolver()
    if deadline is not None:
        left = deadline - time.perf_counter()
        if left <= 0:
            return None
        solver.parameters.max_time_in_seconds = left
    # one worker: the core-based search whose core is the one that comes back
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed or 0)
    if solver.Solve(m) != cp.INFEASIBLE:
        return None
    at = {lit.Index(): v for v, lit in enumerate(present)}
    index = sorted(at[i] for i in solver.SufficientAssumptionsForInfeasibility() if i in at)
    return index or None


def __getattr__(name: str) -> Any:
    """``exact_core`` lives in :mod:`._presence` (the explainer's presence model); it is
    still reachable here, imported on first use (``._presence`` imports this module)."""
    if name == "exact_core":
        from ._presence import exact_core

        return exact_core
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
