"""Why an experiment cannot be mapped onto a testbed: a minimal conflict and the nearest fix.

:func:`explain_mapping` answers a failed mapping with an
:class:`~coalloc._shared.explain.Explanation`. The demand elements are the experiment's
virtual nodes (a node taken out takes its links with it); the conflict is a set of them
whose induced sub-experiment alone has no mapping onto the testbed. Each candidate set is
judged by the family's methods: a mapping found by the default method is a witness that it
fits, and the ``exact`` method's ``infeasible`` is the proof that it does not (its class
model is exact: a rejection is a proof). So the conflict is **sound** and **minimal**
(taking out any one of its nodes lets the rest map), or says which it could not establish
before the deadline. The resources named are those the proof of the conflict cites.

The nearest experiments that fit, each one mapped and so checked:

* ``drop_nodes``: the fewest conflict nodes to take out (one at a time, greedily) so that
  the whole remaining experiment maps;
* ``less_bandwidth``: the conflict's links at a fraction of their bandwidth (3/4, 1/2,
  1/4, 1/10: the largest that maps);
* ``other_type``: one conflict node of another hardware type of the testbed.

Why over 800 lines: one search, its feasibility oracle and the seeds it starts from (the
default method's proof, the count violator, the unsat core, the hub bound) with the
witnesses it repairs (issue 38's solve + 1 s took it past 800); the fixes
(:func:`_relaxations` and its counts) are the part that could go to a module of their own.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .._shared import lazyimport
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.explain import Explanation, Relaxation, fix_deadline, minimal_conflict
from .model import PhysicalTopology, VirtualTopology
from .reasons import reason_text
from .solvers import Instance

__all__ = ["explain_mapping"]

#: Bandwidth fractions tried for ``less_bandwidth``, largest first.
FRACTIONS = (0.75, 0.5, 0.25, 0.1)


def _sub(top: VirtualTopology, keep: Sequence[str], *,
         scale: Optional[Tuple[set, float]] = None,
         retype: Optional[Tuple[str, str]] = None) -> VirtualTopology:  # fmt: skip
    """The experiment restricted to ``keep`` (the links among them), the links among
    ``scale[0]`` at ``scale[1]`` of their bandwidth, and one node retyped (``(node, type)``)."""
    kept = set(keep)
    nodes = []
    for name in keep:
        node = top.nodes[name]
        if retype is not None and retype[0] == name:
            node = dataclasses.replace(node, type=retype[1])
        nodes.append(node)
    links = []
    for lk in top.links.values():
        if lk.a not in kept or lk.b not in kept:
            continue
        if scale is not None and lk.bw and lk.a in scale[0] and lk.b in scale[0]:
            lk = dataclasses.replace(lk, bw=lk.bw * scale[1])
        links.append(lk)
    vclasses = {k: (w, tuple(t)) for k, (w, t) in top.vclasses.items()}
    return VirtualTopology(nodes, links, vclasses=vclasses,
                           fixed={v: p for v, p in top.fixed.items() if v in kept},
                           hints={v: p for v, p in top.hints.items() if v in kept})  # fmt: skip


def _maps(top: VirtualTopology, ptop: PhysicalTopology, deadline: float, *,
          prove: bool = True, clock: Optional[Dict[Any, List[float]]] = None,
          ) -> Tuple[Optional[bool], Any]:  # fmt: skip
    """(True: a mapping found | False: proved impossible | None: unknown, the deciding result).

    ``prove=False`` asks the default method only (a fix needs a witness, not a proof).
    With ``clock`` (method -> the seconds of its last calls, kept by the caller), the exact
    method is asked first when its recent calls were quicker than the default's (it decides
    both ways: on the small sub-experiments of a conflict search it often finds its
    witness sooner than the default method's portfolio), the default only when it does
    not decide.
    """
    if not top.nodes:
        return True, None
    inst = Instance(top, ptop)
    steps: List[Tuple[Optional[str], Optional[float]]] = [(None, None), ("exact", None)]
    if not prove:
        steps = [(None, None)]
    elif clock is not None and _quicker(clock):
        # the exact method first, for a while: it optimises the trunk bandwidth, and where a
        # witness is all that is asked its proof of optimality can take seconds (4.7 s for
        # 20 nodes of a LAN behind 4:1 uplinks at load 9); its incumbent at the cap is the
        # witness. Then the default; then the exact method again with all the time left,
        # where the cap cut it short without an answer (its proof of infeasibility)
        steps = [("exact", _exact_cap(clock)), (None, None), ("exact", None)]
    cut = False
    for method, cap in steps:
        if method == "exact" and cap is None and steps[0][1] is not None and not cut:
            break  # (the capped call answered what it could: nothing more to ask)
        left = deadline - time.monotonic()
        if left <= 0:
            return None, None
        began = time.monotonic()
        res = inst.solve(method, time_limit=left if cap is None else min(left, cap))
        if clock is not None:
            clock.setdefault(method, []).append(time.monotonic() - began)
        if res.has_solution and inst.verify(res).ok:
            return True, res
        if res.status == "infeasible":
            return False, res
        cut = cut or (cap is not None and res.status == "time_limit")
    return None, None


def _import_cpsat_later() -> None:
    """Begin CP-SAT's import for the next explanation, when this one returns (not waited
    for; :func:`explain_mapping` runs inside :func:`coalloc._shared.lazyimport.on_return`):
    begun here, inside the call, its initialisation held the interpreter lock while the
    search went on (0.17 s at T = 0.05 s in a fresh process beside two busy loops). No
    CP-SAT: the core is not looked for, as before."""
    from .._shared.milp.run import import_solver_later

    import_solver_later("cpsat")


class _Witnesses:
    """The deletion filter's last mappings, repaired into witnesses of the sets it asks next.

    One node at a time, the filter asks ``S - {j}`` after ``S - {i}`` mapped: the earlier
    mapping with node ``i`` put on the host ``j`` had (``j``'s links gone, ``i``'s back) is
    a candidate, and so is the mapping itself for any set it covers (a sub-experiment of
    a mapped one maps). A candidate counts only when :func:`~coalloc.testbed.verify_mapping`
    (the family's referee of every hard constraint, routing the links itself) accepts it
    on the asked sub-experiment; otherwise the mappers are asked as before. On the
    70-node count violator (36 nodes, every drop mapped) this answers most drops without
    a mapper call (each 0.1-0.3 s).
    """

    #: The mappings kept (the latest first); the freed hosts tried per mapping.
    KEEP, HOSTS = 8, 3

    def __init__(self, top: VirtualTopology, ptop: PhysicalTopology) -> None:
        self.top, self.ptop = top, ptop
        self.kept: List[Dict[str, str]] = []

    def keep(self, mapping: Dict[str, str]) -> None:
        self.kept = [mapping] + self.kept[: self.KEEP - 1]

    def repair(self, nodes: List[str]) -> bool:
        """Whether a kept mapping, at most one node moved, maps ``nodes`` (verified)."""
        from .verify import verify_mapping

        want = set(nodes)
        for base in self.kept:
            missing = [v for v in nodes if v not in base]
            if len(missing) > 1:
                continue
            freed = [base[v] for v in base if v not in want]
            hosts = freed[: self.HOSTS] if missing else [None]
            for host in hosts:
                where = {v: base[v] for v in nodes if v in base}
                if missing:
                    where[missing[0]] = host
                if verify_mapping(_sub(self.top, nodes), self.ptop, where).ok:
                    self.keep(where)
                    return True
        return False


def _exact_cap(clock: Dict[Any, List[float]]) -> float:
    """How long the exact method is asked first (see :func:`_maps`): four times the median
    of its own and the default's last five calls, 0.3 s at least."""
    recent = sorted(clock.get(None, [])[-5:] + clock.get("exact", [])[-5:])
    return max(0.3, 4.0 * recent[len(recent) // 2]) if recent else 0.3


def _names_within(result: Any, keep: set) -> bool:
    """Whether the nodes a proof's reason names are all in ``keep`` (a proof of an
    isomorphic sub-experiment may name others: its words are then not used)."""
    reason = getattr(result, "reason", None) or {}
    named = reason.get("vnodes") or []
    named = [named] if isinstance(named, str) else list(named)
    if reason.get("vnode"):
        named.append(reason["vnode"])
    return all(v in keep for v in named)


def _quicker(clock: Dict[Any, List[float]]) -> bool:
    """Whether the exact method's last calls took less than the default's (median of the
    last five of each): the default method is then skipped. Of every ten calls, the fifth
    asks the exact method first and the tenth the default, so that both times are kept up
    to date."""
    d, e = clock.get(None, [])[-5:], clock.get("exact", [])[-5:]
    calls = sum(len(v) for v in clock.values())
    if len(d) < 2:
        return False
    if not e or calls % 10 == 5:
        return calls % 10 == 5  # (a call now and then to time the exact method alone)
    if calls % 10 == 0:
        return False
    return sorted(e)[len(e) // 2] < sorted(d)[len(d) // 2]


def _certified(result: Any, names: List[str],
               top: Optional[VirtualTopology] = None) -> Optional[List[int]]:  # fmt: skip
    """The indices of the virtual nodes a failure's reason names, or None.

    A counting proof (``capacity``: more nodes need a class than it has free) or a node no
    physical node can host (``no_candidate``) names the nodes it is about; a hub whose
    links need more bandwidth than its switch can have (``hub_bandwidth``, with ``top``)
    names the hub, of whose neighbours one more than the bound is enough. The conflict
    search starts from them instead of the whole experiment (each seed proved again).
    """
    reason = getattr(result, "reason", None) or {}
    where = {v: i for i, v in enumerate(names)}
    hub = reason.get("vnode")
    if (reason.get("constraint") == "hub_bandwidth" and hub in where
            and isinstance(reason.get("bound"), int)):  # fmt: skip
        # a hub whose links its switch cannot carry: the hub and one neighbour more than
        # the bound (the same bound holds for them: the testbed's, per link bandwidth)
        near = sorted({lk.b if lk.a == hub else lk.a for lk in top.links.values()
                       if hub in (lk.a, lk.b)} - {hub}, key=lambda v: where.get(v, -1))
        if len(near) > reason["bound"]:  # (all of them, when just one past the bound)
            return sorted([where[hub]] + [where[v] for v in near[: reason["bound"] + 1]])
        return None
    named = (
        reason.get("vnodes") if reason.get("constraint") in ("capacity", "no_candidate") else None
    )
    if not named:
        return None
    if isinstance(named, str):
        named = [named]
    index = sorted(where[v] for v in named if v in where)
    if reason.get("constraint") == "no_candidate":
        index = index[:1]  # one node no host takes is a conflict by itself
    return index or None


def _frozen(obj: Any, skip: Tuple[str, ...]) -> tuple:
    """The fields of a node or link but ``skip``, comparable (mappings and sets sorted)."""
    out = []
    for f in dataclasses.fields(obj):
        if f.name in skip:
            continue
        v = getattr(obj, f.name)
        if hasattr(v, "items"):
            v = sorted((str(k), repr(x)) for k, x in v.items())
        elif isinstance(v, (set, frozenset)):
            v = sorted(repr(x) for x in v)
        out.append((f.name, repr(v)))
    return tuple(out)


def _classes(top: VirtualTopology) -> Dict[str, int]:
    """Interchangeable virtual nodes: a class number per node.

    Two nodes are in one class when swapping their names maps the experiment onto itself:
    the same fields (type, slots, desires, flags), neither fixed nor hinted, and the same
    links (fields and other end) to the same other nodes, none between them. A swap is
    an automorphism of the experiment, so two sets of nodes with as many of each class
    induce isomorphic sub-experiments: one maps exactly when the other does. The members
    of a LAN (each linked to the hub alone, alike) form one class, so the deletion filter
    maps one member's drop for all of them."""
    inc: Dict[str, list] = {v: [] for v in top.nodes}
    for lk in top.links.values():
        fields = _frozen(lk, ("name", "a", "b"))
        inc[lk.a].append(("to", lk.b, fields))
        inc[lk.b].append(("from", lk.a, fields))
    number: Dict[Any, int] = {}
    out: Dict[str, int] = {}
    for v, node in top.nodes.items():
        if v in top.fixed or v in top.hints or any(o == v for _, o, _ in inc[v]):
            key: Any = ("alone", v)
        else:
            key = (_frozen(node, ("name",)), tuple(sorted(inc[v])))
        out[v] = number.setdefault(key, len(number))
    return out


def _alone(top: VirtualTopology) -> VirtualTopology:
    """The experiment's nodes without their links."""
    return VirtualTopology(list(top.nodes.values()), [],
                           vclasses={k: (w, tuple(t)) for k, (w, t) in top.vclasses.items()},
                           fixed=dict(top.fixed), hints=dict(top.hints))  # fmt: skip


def _core(top: VirtualTopology, ptop: PhysicalTopology, names: List[str],
          deadline: float, *, per_link: bool = True) -> List[List[int]]:  # fmt: skip
    """Seeds (indices in ``names``) from the exact model's unsat core over node presence
    (:func:`coalloc.testbed._presence.exact_core`): the core, then the core with its
    neighbours; none when the core is not found in time.

    With ``per_link`` (the default) the model gives each link its own presence and each
    node the candidate hosts it has alone (``exact_core``'s ``alone``): the core alone is
    then a conflict. Without, the model's candidate hosts of a node are filtered by all its
    links (interfaces, link types, bandwidth), so the core alone may map once its links to
    absent nodes are gone; with its neighbours every core node keeps all its links, and a
    mapping of that sub-experiment would place the core as the presence model forbids.
    Seeds only: the caller proves each infeasible before the conflict search starts from
    it (the neighbours are tried only when the core maps)."""
    from ._presence import exact_core
    from .methods.outcome import _problem

    left = deadline - time.monotonic()
    if left <= 0:
        return []
    t0 = time.perf_counter()
    pr = _problem(top, ptop, None)
    if any(not c for c in pr.cand):
        return []  # (the method's own proof names such nodes: no_candidate)
    alone = _problem(_alone(top), ptop, None) if per_link and top.links else None
    got = exact_core(pr, time_limit=left, started=t0, alone=alone)
    if got is None:
        return []
    core = {pr.vnames[v] for v in got}
    near = set(core)
    for lk in top.links.values():
        if lk.a in core or lk.b in core:
            near.update((lk.a, lk.b))
    where = {v: i for i, v in enumerate(names)}
    seeds = [sorted(where[v] for v in core)]
    if len(near) > len(core):
        seeds.append(sorted(where[v] for v in near))
    return seeds


def _unmatched(top: VirtualTopology, ptop: PhysicalTopology, rest: Sequence[str], *,
               links: bool = True, violator: Optional[List[str]] = None,
               ) -> List[str]:  # fmt: skip
    """The nodes of ``rest`` a largest assignment to candidate hosts leaves out, the most
    linked kept, or ``[]`` when every node has a host.

    Each virtual node goes to one of the pclasses it may use (the problem's candidates:
    with ``links``, filtered by its links among ``rest`` as the mappers filter them;
    without, by the node alone), each pclass holding its members' nodes: a member acting as
    one type holds at most ``slots / least slot need`` of its users (static types add
    theirs). The nodes are offered most linked first, each kept when an augmenting path
    places it (the greedy algorithm of the transversal matroid: the nodes kept are a
    largest set with the most links). Without ``links`` every bound is a relaxation of the
    mapping (a host's features, type limits, interfaces and bandwidth ignored; a node's
    candidates only widen when its links go), so the count of nodes left out is a lower
    bound on the nodes any mapping must leave out; with ``links`` it is a guide (taking
    out a node frees its neighbours' candidates). A drop is mapped by the caller before it
    is offered. With ``violator`` (an empty list), the first node left out and the nodes
    held by every pclass its search reached are put there: a Hall-type violator, a proof
    that they cannot all be mapped when ``links`` is False."""
    from .methods.outcome import _problem

    sub = _sub(top, rest)
    pr = _problem(sub if links else _alone(sub), ptop, None)
    nv = pr.nv
    cand = [[int(c) for c in pr.cand[v]] for v in range(nv)]
    users: Dict[int, List[int]] = {}
    for v in range(nv):
        for c in cand[v]:
            users.setdefault(c, []).append(v)
    room: Dict[int, int] = {}
    for c, vs in users.items():
        least = max(min(float(pr.vslots[v]) for v in vs), 1e-9)
        p = int(pr.members[c][0])  # (the members of a pclass are alike)
        held = 0
        dyn = {int(pr.vtype[v, c]) for v in vs if not pr.vstatic[v, c]} - {-1}
        for t in {int(pr.vtype[v, c]) for v in vs if pr.vstatic[v, c]} - {-1}:
            held += nv if pr.cap[p, t] >= 1e6 else int(pr.cap[p, t] / least + 1e-9)
        if dyn:
            most = max(float(pr.cap[p, t]) for t in dyn)
            held += nv if most >= 1e6 else int(most / least + 1e-9)
        room[c] = min(nv, held * len(pr.members[c]))
    held_by: Dict[int, List[int]] = {c: [] for c in room}
    out = []
    for v in sorted(range(nv), key=lambda u: (-top.degree(pr.vnames[u]), pr.vnames[u])):
        # breadth-first over pclasses: reach one with room, moving a node at each step
        back: Dict[int, Tuple[Optional[int], int]] = {}
        queue = []
        for c in cand[v]:
            if c not in back:
                back[c] = (None, v)
                queue.append(c)
        end = None
        for c in queue:  # (the queue grows while read)
            if len(held_by[c]) < room[c]:
                end = c
                break
            for u in held_by[c]:
                for d in cand[u]:
                    if d not in back:
                        back[d] = (c, u)
                        queue.append(d)
        if end is None:
            if violator is not None and not violator:
                # every pclass the search reached is full: their nodes and v outnumber
                # what those pclasses hold, and none of them may use another (Hall)
                violator += [pr.vnames[v]] + [pr.vnames[u] for c in back for u in held_by[c]]
            out.append(pr.vnames[v])
            continue
        c = end
        while True:
            was, u = back[c]
            held_by[c].append(u)
            if was is None:
                break
            held_by[was].remove(u)
            c = was
    return sorted(out, key=lambda v: (top.degree(v), v))


#: The most distinct virtual node types whose unions :func:`_hall` counts (2^k unions).
HALL_TYPES = 10


def _hall(top: VirtualTopology, rest: Sequence[str], ptop: PhysicalTopology) -> Optional[
        Tuple[List[str], int, List[str]]]:  # fmt: skip
    """A Hall-type count the whole experiment breaks, where the solver's proof names none.

    For a set ``S`` of virtual node types, the nodes of ``rest`` of a type in ``S`` need
    their slots on physical nodes acting as one of those types (a physical node acts as
    one type at a time, plus its static types): at most ``cap(S)``, the sum over physical
    nodes of their largest slot count of a type in ``S`` (and their static slots of those
    types). Returns ``(nodes of S, fewest to take out, a conflict)`` for the union ``S``
    that needs the most nodes taken out (a lower bound on any drop: each node frees at most
    the largest slot need of ``S``), the conflict being the fewest nodes of the union of
    least capacity that a count breaks; None when every union fits its count (or there are
    more than :data:`HALL_TYPES` types). The count is a guide: the conflict is proved and
    every drop mapped by the caller.
    """
    kinds = sorted({top.nodes[v].type for v in rest})
    if not kinds or len(kinds) > HALL_TYPES:
        return None
    pnodes = list(ptop.nodes.values())
    best = small = None
    for mask in range(1, 1 << len(kinds)):
        union = {t for i, t in enumerate(kinds) if mask >> i & 1}
        cap = 0.0
        for p in pnodes:
            types, static = getattr(p, "types", {}), getattr(p, "static", {})
            cap += max((types.get(t, 0.0) for t in union), default=0.0)
            cap += sum(static.get(t, 0.0) for t in union)
        members = [v for v in rest if top.nodes[v].type in union]
        need = [float(top.nodes[v].slots) for v in members]
        excess = sum(need) - cap
        if not excess > 1e-9 or not need or max(need) <= 0:
            continue
        k = int(-(-excess // max(need)))  # ceil: the fewest nodes whose drop can fit it
        if best is None or k > best[1]:
            best = (members, k)
        if small is None or cap < small[0]:
            heavy = sorted(members, key=lambda v: (-float(top.nodes[v].slots), v))
            kept, total = [], 0.0
            for v in heavy:  # the fewest nodes whose slots exceed the capacity
                kept.append(v)
                total += float(top.nodes[v].slots)
                if total > cap + 1e-9:
                    break
            small = (cap, kept)
    if best is None or small is None:
        return None
    return best[0], best[1], small[1]


@filled
@checked("coalloc.testbed.constraints", "explain_mapping", tables="FUNCTIONS")
def explain_mapping(top: VirtualTopology, ptop: PhysicalTopology, *,
                    time_limit: float = 10.0) -> Optional[Explanation]:  # fmt: skip
    """Why ``top`` cannot be mapped onto ``ptop``, and what nearby experiment maps.

    Parameters
    ----------
    top : VirtualTopology
        The experiment that failed to map.
    ptop : PhysicalTopology
        The testbed.
    %(explain_time_limit)s

    Returns
    -------
    Explanation or None
        None when the experiment maps (nothing to explain) or when its failure could not
        be proved in the budget.

    Examples
    --------
    Three PCs asked for on a testbed of two:

    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100000 0 0\\nlink lb b sw 100000 0 0")
    >>> top = tb.VirtualTopology([tb.VNode(v, "pc") for v in "xyz"])
    >>> e = explain_mapping(top, ptop)
    >>> len(e.demand), e.sound, e.minimal
    (3, True, True)
    >>> [r.kind for r in e.relaxations if r.checked]
    ['drop_nodes']
    """
    if not isinstance(top, VirtualTopology):
        raise TypeError(f"top must be a VirtualTopology, got {type(top).__name__}")
    if not isinstance(ptop, PhysicalTopology):
        raise TypeError(f"ptop must be a PhysicalTopology, got {type(ptop).__name__}")
    time_limit = float(time_limit)  # checked by the table (@checked)
    # a solver import that this call or a mapper it asks would begin for the next calls
    # begins as the explanation returns, not inside it (see _import_cpsat_later)
    with lazyimport.on_return():
        return _explain(top, ptop, time_limit)


def _explain(top: VirtualTopology, ptop: PhysicalTopology,
             time_limit: float) -> Optional[Explanation]:  # fmt: skip
    """:func:`explain_mapping` after its arguments' checks."""
    t0 = time.monotonic()
    search_end = t0 + 0.6 * time_limit
    names = sorted(top.nodes, key=lambda v: (top.degree(v), v))  # most linked tried last
    # the default method first: a mapping (nothing to explain) or its own proof
    whole, first = _maps(top, ptop, search_end, prove=False)
    if whole:
        return None
    proofs: Dict[tuple, Any] = {tuple(names): first} if whole is False else {}

    clock: Dict[Any, List[float]] = {}  # the oracle's seconds per method (see _maps)
    kind = _classes(top)
    seen: Dict[tuple, Tuple[Optional[bool], Any]] = {}  # per count of each class (_classes)

    counting: List[tuple] = []  # the sets proved by the node-alone count (see below)
    witnesses = _Witnesses(top, ptop)

    def feasible(index: List[int]) -> Optional[bool]:
        keep = [names[i] for i in index]
        if counting and _unmatched(top, ptop, keep, links=False):
            counting.append(tuple(keep))  # (a relaxation of any mapping leaves one out)
            return False
        counts: Dict[int, int] = {}
        for v in keep:
            counts[kind[v]] = counts.get(kind[v], 0) + 1
        key = tuple(sorted(counts.items()))
        if key in seen:  # an isomorphic sub-experiment was decided: the same answer
            got, res = seen[key]
        elif witnesses.repair(keep):  # an earlier mapping, one node moved, verified
            return True
        else:
            got, res = _maps(_sub(top, keep), ptop, search_end, clock=clock)
            if got is not None:
                seen[key] = (got, res)
            if got and res is not None and res.mapping:
                witnesses.keep(dict(res.mapping))
        if got is False and _names_within(res, set(keep)):
            proofs[tuple(keep)] = res
        return got

    search = None
    seed = _certified(first, names, top) if whole is False else None
    # a proof naming no nodes, or none: the exact model's unsat core names some (proved by
    # the exact method on its own, which proves the whole too: a sub-experiment of a
    # mappable experiment maps; should the core alone map, the core with its neighbours
    # does not: see _core)
    cored = seed is None
    # a hub and one neighbour past its bound: every drop of a neighbour leaves the bound,
    # which the flow deems reachable, so the seed is likely minimal (one node at a time)
    hub = whole is False and (getattr(first, "reason", None) or {}).get(
        "constraint") == "hub_bandwidth"  # fmt: skip
    hub_all = hub and seed is not None and len(seed) >= len(names)  # (the hub's seed is all)
    violator: List[str] = []
    if seed is None and _unmatched(top, ptop, names, links=False, violator=violator):
        # no proof names nodes, but the assignment of the nodes to the hosts they could
        # take alone (links, features, interfaces ignored: a relaxation) leaves some out:
        # the count proves it. The unsat core still goes first (often smaller, found in
        # 0.04-0.5 s), for a tenth of the search's time (0.6 s at least: the search from
        # the violator, its drops mapped by repaired witnesses, takes about as long, and a
        # core not found by then took 1.2-1.5 s or none came: 20 nodes r=1, 70 r=4);
        # without one the search, asking the count first, starts from the count's
        # violator (the exact model on such a count can take longer than the budget: 70
        # nodes, 6 s)
        # (CP-SAT not loaded yet: its import, about 1 s, would not fit the core's time;
        # it is started in the background, so that the next explanation has the core)
        _import_cpsat_later()
        now = time.monotonic()
        core_end = min(search_end, now + max(0.6, 0.1 * (search_end - now)))
        seeds = _core(top, ptop, names, core_end)
        if not seeds:
            where = {v: i for i, v in enumerate(names)}
            counting.append(tuple(names))
            seeds, cored = [sorted(where[v] for v in violator)], False
        else:
            violator = []
    else:
        seeds = [seed] if seed is not None else _core(top, ptop, names, search_end)
    tried = 0
    for seed in seeds:
        if len(seed) >= len(names):
            break
        tried += 1
        if feasible(seed) is False:
            # the proof names its own nodes (a count, a node no host takes, the core): start
            # there (from an unsat core, often minimal already, one node at a time)
            one = (cored or hub or bool(violator)) and tried == 1
            inner = minimal_conflict(seed, feasible, deadline=search_end, known_infeasible=True,
                                     chunk=1 if one else None)  # fmt: skip
            search = dataclasses.replace(inner, calls=inner.calls + tried)
            break
    if search is None:
        if whole is not False:  # no proof yet: the exact method on the whole
            whole = feasible(list(range(len(names))))
            if whole is not False:
                return None
            first = proofs.get(tuple(names))  # (None: the count proved it)
        one = hub_all or len(violator) >= len(names)  # (the seed was everything)
        search = minimal_conflict(range(len(names)), feasible, deadline=search_end,
                                  known_infeasible=True, chunk=1 if one else None)  # fmt: skip
    conflict = [names[i] for i in search.conflict]
    sub = _sub(top, conflict)
    proof = proofs.get(tuple(conflict))
    why = reason_text(proof.reason) if proof is not None and proof.reason else ""
    counted = tuple(conflict) in counting
    if counted and proof is None:
        why = ("more of them than the hosts they could each take alone can hold (an "
               "assignment count: links, features and interfaces aside)")
    relax = _relaxations(top, ptop, conflict, fix_deadline(t0, time_limit), first)
    links = [lk.name for lk in sub.links.values()]
    demand = tuple(f"virtual node {v}" for v in sorted(conflict)) + tuple(
        f"virtual link {name}" for name in sorted(links)
    )
    fixes = "; or ".join(r.sentence for r in relax if r.checked)
    listed = ", ".join(sorted(conflict)[:12]) + (" ..." if len(conflict) > 12 else "")
    sentence = (f"Virtual nodes {listed} ({len(conflict)} of {len(top.nodes)}, with their "
                f"{len(links)} links) cannot be mapped together"
                f"{': ' + why if why else ''} (proved"
                f"{'; taking out any one of them lets the rest map' if search.minimal else ''}"
                f").")  # fmt: skip
    sentence += (
        f" Nearest fix: {fixes}."
        if fixes
        else " No single change tried (fewer nodes, less bandwidth, another type) maps."
    )
    resources = (why,) if why else (f"the testbed's {len(ptop.nodes)} nodes and "
                                    f"{len(ptop.links)} links",)  # fmt: skip
    return Explanation(demand=demand, resources=resources,
                       certificate="count" if counted and proof is None else "exact",
                       sound=True if proof is not None else search.sound,
                       minimal=search.minimal, sentence=sentence, relaxations=tuple(relax),
                       conflict={"vnodes": sorted(conflict), "vlinks": sorted(links)},
                       oracle_calls=search.calls + 1, seconds=time.monotonic() - t0)  # fmt: skip


def _relaxations(top: VirtualTopology, ptop: PhysicalTopology, conflict: List[str],
                 deadline: float, whole: Any = None) -> List[Relaxation]:  # fmt: skip
    """The nearest experiments that map, each mapped (see the module docstring); ``whole``
    is the whole experiment's failed result (its counting proof guides the drops)."""
    out: List[Relaxation] = []
    everyone = list(top.nodes)
    dropped, least = _drop_counted(top, ptop, whole, deadline)
    if not dropped:
        dropped = _drop_nodes(top, ptop, conflict, deadline)
        least = dropped is not None and len(dropped) == 1
    if dropped:
        out.append(Relaxation(kind="drop_nodes", sentence="take out virtual node"
                              + ("s " if len(dropped) > 1 else " ") + ", ".join(dropped),
                              changes={"drop_vnodes": dropped}, cost=float(len(dropped)),
                              optimal=True if least else None, checked=True))  # fmt: skip
    cset = set(conflict)
    if any(lk.a in cset and lk.b in cset and lk.bw for lk in top.links.values()):
        for f in FRACTIONS:
            if time.monotonic() >= deadline:
                break
            if _maps(_sub(top, everyone, scale=(cset, f)), ptop, deadline, prove=False)[0]:
                out.append(Relaxation(kind="less_bandwidth",
                                      sentence=f"ask for {f:g} of the bandwidth on the links among "
                                               "them",
                                      changes={"bandwidth_fraction": f,
                                               "vlinks": sorted(lk.name for lk in top.links.values()
                                                                if lk.a in cset and lk.b in cset)},
                                      cost=1.0 - f, optimal=None, checked=True))  # fmt: skip
                break
    types = sorted({t for p in ptop.nodes.values() for t in getattr(p, "types", {})} - {"switch"})
    for v in sorted(conflict):
        for t in types:
            if t == top.nodes[v].type:
                continue
            if time.monotonic() >= deadline:
                return out
            if _maps(_sub(top, everyone, retype=(v, t)), ptop, deadline, prove=False)[0]:
                out.append(Relaxation(kind="other_type",
                                      sentence=f"make virtual node {v} a {t}",
                                      changes={"vnode": v, "type": t}, cost=1.0, optimal=None,
                                      checked=True))  # fmt: skip
                return out
    return out


def _drop_counted(top: VirtualTopology, ptop: PhysicalTopology, whole: Any,
                  deadline: float) -> Tuple[Optional[List[str]], bool]:  # fmt: skip
    """Nodes to take out by counts, and whether that is proved the fewest.

    Each step takes out nodes a count says cannot all stay, and maps the rest (the default
    method first, a mapping being the witness; the exact method with the time left where it
    finds none, for the next proof). The counts, first that applies:

    1. the assignment of the rest's nodes to their candidate hosts (:func:`_unmatched`),
       first with each node's own candidates (a lower bound on any drop), then, on what
       that leaves, with those its links leave (a node whose gigabit link no 100 Mb/s
       host carries): both before the rest is mapped;
    2. the solver's counting proof: ``needed`` nodes compete for classes with ``available``
       free PCs, the least linked ``needed - available`` go; nodes no host takes go;
    3. a Hall-type count over unions of types (:func:`_hall`), where the proof names none;
    4. where no count breaks (the rest fails by bandwidth, trunks or interfaces), the
       exact model's unsat core of the rest (:func:`_core`): the first of its nodes, least
       linked first, whose removal lets the rest map, else its least linked node.

    The fewest is proved when the nodes taken out are as many as the node-alone
    assignment's lower bound. (Not the solver's counting proof: its candidates are filtered
    by the nodes' links, and taking out one end of a gigabit link can free the other end's
    hosts. Two pc nodes joined by a gigabit link and a pc3000 node, on one gigabit pc3000
    PC and two 100 Mb/s PCs: "3 nodes need 1 PC", yet taking out one pc node is enough.)
    """
    rest = list(top.nodes)
    dropped: List[str] = []
    res = whole
    first = _unmatched(top, ptop, rest, links=False)
    bound = len(first)
    while time.monotonic() < deadline:
        out = _count_step(top, ptop, rest, res, first)
        first = None
        if out is None:
            out = _core_step(top, ptop, rest, deadline, res)
            if out is None:
                return None, False
        if out[0]:  # a single node whose removal was mapped already
            dropped += out[1]
            break
        dropped += out[1]
        gone = set(out[1])
        rest = [v for v in rest if v not in gone]
        got, res = _maps(_sub(top, rest), ptop, deadline)
        if got:
            break
        if res is None:
            return None, False
    else:
        return None, False
    # (0.6 of the time left: the other fixes get the rest)
    dropped = _take_back(top, ptop, dropped, bound,
                         time.monotonic() + 0.6 * max(0.0, deadline - time.monotonic()))
    return dropped, len(dropped) <= bound


def _take_back(top: VirtualTopology, ptop: PhysicalTopology, dropped: List[str], bound: int,
               deadline: float) -> List[str]:  # fmt: skip
    """``dropped`` with the nodes taken back whose return still maps (each return mapped by
    the default method), last dropped and most linked first, until the lower ``bound`` is
    met or the time is up: the counts' later steps guess (a node taken out may have freed
    a neighbour's host), so a drop can be larger than it need be."""
    order = list(reversed(dropped))
    out = list(dropped)
    for v in order:
        if len(out) <= bound or time.monotonic() >= deadline:
            break
        trial = [u for u in out if u != v]
        keep = [u for u in top.nodes if u not in set(trial)]
        if _maps(_sub(top, keep), ptop, deadline, prove=False)[0]:
            out = trial
    return out


def _count_step(top: VirtualTopology, ptop: PhysicalTopology, rest: List[str], res: Any,
                alone: Optional[List[str]] = None) -> Optional[Tuple[bool, List[str]]]:  # fmt: skip
    """The nodes of ``rest`` a count takes out (steps 1-3 of :func:`_drop_counted`), as
    ``(False, nodes)``; None when no count breaks. ``alone``: the node-alone assignment's
    nodes left out, when known."""
    if not rest:
        return None
    # both assignments before a solve: the rest of the first cannot map while the second
    # leaves a node out (the mappers place a node only on those candidates)
    out = list(alone) if alone is not None else _unmatched(top, ptop, rest, links=False)
    left = [v for v in rest if v not in set(out)]
    out += _unmatched(top, ptop, left, links=True) if left else []
    if out and len(out) < len(rest):
        return False, out
    reason = getattr(res, "reason", None) or {}
    named = reason.get("vnodes") or []
    named = [named] if isinstance(named, str) else [v for v in named if v in rest]
    if reason.get("constraint") == "capacity" and "needed" in reason and "available" in reason:
        k = int(reason["needed"]) - int(reason["available"])
    elif reason.get("constraint") == "no_candidate":
        k = len(named)  # nodes no host takes: every one of them goes
    else:  # a proof that names no nodes: a Hall-type count of the types, if one breaks
        hall = _hall(top, rest, ptop)
        if hall is None:
            return None
        named, k, _ = hall
    if k <= 0 or k > len(named):
        return None
    return False, sorted(named, key=lambda v: (top.degree(v), v))[:k]


def _core_step(top: VirtualTopology, ptop: PhysicalTopology, rest: List[str],
               deadline: float, res: Any = None) -> Optional[Tuple[bool, List[str]]]:  # fmt: skip
    """Step 4 of :func:`_drop_counted`: ``(True, [v])`` when taking out the core node ``v``
    lets the rest map (mapped here), ``(False, [v])`` for the core's least linked node
    otherwise; None without a core in time. The nodes the rest's failure ``res`` names (a
    hub whose links need more bandwidth than its switch has, the ends of a link no trunk
    carries) are tried first, then the core's, least linked first."""
    reason = getattr(res, "reason", None) or {}
    named = [reason["vnode"]] if isinstance(reason.get("vnode"), str) else []
    link = top.links.get(reason.get("link")) if isinstance(reason.get("link"), str) else None
    if link is not None:
        named += sorted((link.a, link.b), key=lambda v: (top.degree(v), v))
    named = [v for v in dict.fromkeys(named) if v in set(rest)]

    def first_that_maps(vs: List[str]) -> Optional[str]:
        for v in vs:
            if time.monotonic() >= deadline:
                return None
            if _maps(_sub(top, [u for u in rest if u != v]), ptop, deadline, prove=False)[0]:
                return v
        return None

    hit = first_that_maps(named)  # (before the core: a named node is one solve away)
    if hit is not None:
        return True, [hit]
    names = sorted(rest, key=lambda v: (top.degree(v), v))
    seeds = _core(_sub(top, rest), ptop, names, deadline)
    if not seeds:
        return None
    core = [names[i] for i in seeds[0] if names[i] not in set(named)]
    hit = first_that_maps(core)
    if hit is not None:
        return True, [hit]
    if time.monotonic() >= deadline or not (named or core):
        return None
    return False, (named or core)[:1]


def _drop_nodes(top: VirtualTopology, ptop: PhysicalTopology, conflict: List[str],
                deadline: float) -> Optional[List[str]]:  # fmt: skip
    """Virtual nodes to take out so that the rest maps, or None (not found in time).

    One node of each conflict in turn: first any single node of the conflict whose removal
    lets the whole experiment map (fewest degree first); else the least linked node of the
    conflict goes, the next conflict of what remains is found, and so on.
    """
    rest = list(top.nodes)
    dropped: List[str] = []
    while conflict and time.monotonic() < deadline:
        order = sorted(conflict, key=lambda v: (top.degree(v), v))
        for v in order:
            if time.monotonic() >= deadline:
                return None
            if _maps(_sub(top, [u for u in rest if u != v]), ptop, deadline, prove=False)[0]:
                return dropped + [v]
        dropped.append(order[0])
        rest.remove(order[0])
        names = sorted(rest, key=lambda u: (top.degree(u), u))
        search = minimal_conflict(
            range(len(names)),
            lambda index, names=names: _maps(_sub(top, [names[i] for i in index]), ptop,
                                             deadline)[0],
            deadline=deadline)  # fmt: skip
        if search.sound is not True:
            return None
        conflict = [names[i] for i in search.conflict]
    return None
