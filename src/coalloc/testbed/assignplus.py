"""assign+ (section 8.2 of the DeterLab paper): five deterministic strategies and an exchange.

1. pclasses and candidate pclasses per virtual node (:func:`.problem.build_problem`);
2. candidate lists: virtual nodes with the same candidate pclasses, most restricted first;
3. the degree-scored partitioning (:func:`partition`): nodes of smallest degree get score 1,
   each round marks the links of the scored nodes whose peer is unscored or scored higher;
   the peer becomes the node's parent if it has none;
4. ``allocate`` once per strategy (PART, SCORE, ISW, PREF, FRAG): for each candidate list,
   for each of its nodes (parents first), try the node with its maximum pool (the
   unallocated descendants that may go on the pclass), then with its minimum pool (those
   that must go on this list), then alone, over the list's pclasses in the strategy's order;
5. an exchange (Kernighan-Lin style, pairwise, positive gains) that moves or swaps virtual
   nodes between pclasses while the inter-switch bandwidth drops;
6. the solution with the lowest inter-switch bandwidth is kept, ties by the lowest score
   (the first of them, in that order, that the router can route).

Steps 4-5 run in the compiled kernel ``coalloc.testbed._allocate`` (C++, GIL released);
:mod:`coalloc.testbed._reference.allocate` is its Python twin and specification.

Scoring variants of the evaluation: ``"1"`` (a pclass scores its number of features,
so node types with more unwanted features cost more), ``"1m"`` (that plus how often its
type was requested, a memory carried across calls), ``"2m"`` (only the request frequency).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np

from .._shared import interrupt
from .._shared.caches import cache_of
from .anneal import kernel_data
from .problem import Problem
from .routing import route

__all__ = ["STRATEGIES", "SCORINGS", "partition", "candidate_lists", "plus_data", "assign_plus",
           "RequestMemory", "scarcity"]  # fmt: skip

STRATEGIES = ("PART", "SCORE", "ISW", "PREF", "FRAG")
#: Every strategy the kernel knows: the paper's five and FIT (ISW's order, the smallest
#: pclass first among equals: best fit, which the default adds).
ALL_STRATEGIES = STRATEGIES + ("FIT",)
SCORINGS = ("1", "1m", "2m")


class RequestMemory:
    """How often each physical type was requested (the memory of ``.1m`` and ``.2m``).

    Pass the same object to successive calls (the simulator does); each call adds the
    types its virtual nodes request. A type's pressure is its request count per physical
    node offering it, so that a type every PC offers (``pc``) weighs little and a scarce
    type that experiments ask for by name weighs much.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> memory = tb.RequestMemory()
    >>> tb.assign(top, ptop, "assign+.1m", memory=memory).success
    True
    >>> dict(memory.counts), memory.total
    ({'pc': 2.0}, 2.0)
    """

    def __init__(self) -> None:
        self.counts: Dict[str, float] = defaultdict(float)
        self.total = 0.0

    def record(self, pr: Problem) -> None:
        """Count the types the virtual nodes of a problem request.

        Parameters
        ----------
        pr : Problem
            A compiled problem (:func:`build_problem`); each virtual node adds one to every
            type it accepts.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
        ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
        >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
        >>> memory = tb.RequestMemory()
        >>> memory.record(tb.build_problem(top, ptop))
        >>> dict(memory.counts), memory.total
        ({'pc': 2.0}, 2.0)
        """
        for v in pr.vnames:
            for t in pr.top.allowed_types(v):
                self.counts[t] += 1.0
            self.total += 1.0

    def frequency(self, type_name: str) -> float:
        """The share of the recorded requests that accepted ``type_name``.

        Parameters
        ----------
        type_name : str
            A physical node type.

        Returns
        -------
        float
            Its request count over the number of virtual nodes recorded (0 when none).

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
        ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
        >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
        >>> memory = tb.RequestMemory()
        >>> memory.record(tb.build_problem(top, ptop))
        >>> memory.frequency("pc"), memory.frequency("pc3000")
        (1.0, 0.0)
        """
        return self.counts.get(type_name, 0.0) / self.total if self.total else 0.0


def _supply(pr: Problem) -> Dict[str, int]:
    cache = cache_of(pr.ptop).setdefault("supply", {})  # beside the model
    if not cache:
        for p in pr.ptop.nodes.values():
            if not p.is_switch:
                for t in p.types:
                    cache[t] = cache.get(t, 0) + 1
    return cache


def partition(pr: Problem):
    """Degree-scored partitioning: ``(score, parent)`` arrays (parent -1 for roots).

    Parameters
    ----------
    pr : Problem
        A compiled problem (:func:`build_problem`).

    Returns
    -------
    score : ndarray
        The score of every virtual node.
    parent : ndarray of int
        The parent of every virtual node in the partition (-1 for roots).

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> score, parent = tb.partition(tb.build_problem(top, ptop))
    >>> score.tolist(), parent.tolist()
    ([1, 1], [-1, -1])
    """
    nv = pr.nv
    inc = pr.inc
    la, lb = pr.la.tolist(), pr.lb.tolist()
    deg = [len(inc[v]) for v in range(nv)]
    score = [0] * nv
    parent = [-1] * nv
    marked = [False] * len(la)
    # connected components, so that each starts from its own smallest degree (a component
    # is labelled by its first node, so the labels come in increasing order)
    comp = [-1] * nv
    for s in range(nv):
        if comp[s] >= 0:
            continue
        stack = [s]
        comp[s] = s
        nodes = [s]
        while stack:
            u = stack.pop()
            for e in inc[u]:
                w = lb[e] if la[e] == u else la[e]
                if comp[w] < 0:
                    comp[w] = s
                    stack.append(w)
                    nodes.append(w)
        nodes.sort()
        dmin = min(deg[v] for v in nodes)
        frontier = [v for v in nodes if deg[v] == dmin]
        for v in frontier:
            score[v] = 1
        rnd = 1
        while frontier:
            nxt = []
            for v in frontier:
                for e in inc[v]:
                    if marked[e]:
                        continue
                    w = lb[e] if la[e] == v else la[e]
                    if score[w] == 0 or score[w] > score[v]:
                        marked[e] = True
                        if score[w] == 0:
                            score[w] = rnd + 1
                            nxt.append(w)
                        if parent[v] < 0:
                            parent[v] = w
            frontier = nxt
            rnd += 1
    return np.array(score, dtype=np.int64), np.array(parent, dtype=np.int64)


def candidate_lists(pr: Problem, free: List[int]) -> List[tuple]:
    """Candidate lists (tuples of pclasses), most restricted first (fewest pclasses, then
    fewest free nodes)."""
    lists = {tuple(sorted(c)) for c in pr.cand if c}
    return sorted(lists, key=lambda L: (len(L), sum(free[c] for c in L), L))


def _pclass_scores(pr: Problem, scoring: str, memory: Optional[RequestMemory]) -> np.ndarray:
    """Score of each pclass: ``.1`` its feature count, ``.2m`` the request pressure of its
    types (memory; without one, the share of this request's nodes that may use it),
    ``.1m`` both (pressure scaled to the feature counts)."""
    feats = pr.pfeature_count
    if scoring == "1":
        return feats.copy()
    if memory is not None and memory.total:
        freq = np.zeros(pr.nc)
        supply = _supply(pr)
        for c, r in enumerate(pr.crep.tolist()):
            p = pr.ptop.nodes[pr.pnames[r]]
            freq[c] = max((memory.counts.get(t, 0.0) / max(supply.get(t, 1), 1)
                           for t in p.types), default=0.0)  # fmt: skip
    else:  # no history: the share of this request's nodes that may use each pclass
        flat = [c for cl in pr.cand for c in cl]
        freq = np.bincount(np.array(flat, dtype=np.int64), minlength=pr.nc).astype(float)
        freq /= max(pr.nv, 1)
    if scoring == "2m":
        return freq
    top = float(freq.max()) if len(freq) and freq.max() > 0 else 1.0
    return feats + freq / top * max(1.0, float(feats.max()) if len(feats) else 1.0)


def plus_data(pr: Problem, scores: np.ndarray, part) -> dict:
    """The arrays of the allocate kernel: :func:`.anneal.kernel_data` plus assign+'s."""
    data = kernel_data(pr)
    free = [len(m) for m in pr.members]
    keys = [tuple(sorted(c)) for c in pr.cand]
    lists = sorted({L for L in keys if L}, key=lambda L: (len(L), sum(free[c] for c in L), L))
    lid = {L: i for i, L in enumerate(lists)}
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    for i, L in enumerate(lists):
        ptr[i + 1] = ptr[i] + len(L)
    data.update({
        "cscore": np.asarray(scores, dtype=np.float64),
        "vscore": np.asarray(part[0], dtype=np.int64),
        "parent": np.asarray(part[1], dtype=np.int64),
        "list_ptr": ptr,
        "list_idx": np.array([c for L in lists for c in L], dtype=np.int64),
        "vlist": np.array([lid.get(L, -1) for L in keys], dtype=np.int64),
        "cswitch": np.asarray(pr.cswitch, dtype=np.int64),
    })  # fmt: skip
    return data


def _score(pr: Problem, where: np.ndarray, scores: np.ndarray) -> float:
    used = np.unique(where[where >= 0])  # sorted, as the sum's order
    used = used[~pr.pis_switch[used]]
    return float(sum(scores[pr.pclass[used]].tolist()))


def packing(pr: Problem, where: np.ndarray) -> float:
    """How whole the free testbed stays after a mapping: the sum over switches of the
    square of the usable hosts left free behind each (higher is better: a mapping that
    fills a switch's partly used hosts keeps large blocks of free hosts together for the
    next experiments, the best fit of bin packing).

    Parameters
    ----------
    pr : Problem
        The compiled problem.
    where : int array (nv,)
        Virtual -> physical index of a complete mapping.

    Returns
    -------
    float
        The sum of squares (hosts on no switch count as a switch of their own each).
    """
    usable = np.flatnonzero((pr.pclass >= 0) & ~pr.pis_switch)
    home = pr.pswitch[usable].copy()
    lone = home < 0  # hosts on no switch: a block of one each, numbered after the switches
    home[lone] = int(home.max(initial=-1)) + 1 + np.arange(int(lone.sum()))
    total = np.bincount(home)
    w = np.asarray(where, dtype=np.int64)
    taken = np.zeros(len(pr.pnames), dtype=bool)
    taken[w[w >= 0]] = True
    left = total - np.bincount(home[taken[usable]], minlength=len(total))
    return float(np.dot(left, left))


def _scarce_offers(pr: Problem) -> np.ndarray:
    """The usable hosts x counted types boolean table of :func:`scarcity` (kept on ``pr``)."""
    got = getattr(pr, "_scarce_offers", None)
    if got is not None:
        return got
    usable = (pr.pclass >= 0) & ~pr.pis_switch
    offers = (pr.cap[:, : len(pr.type_names)] > 0) & usable[:, None]
    count = offers.sum(axis=0)
    # a switch's own type: offered by exactly the usable hosts behind one switch
    sw = pr.pswitch[usable]
    on = sw >= 0
    ns = int(sw.max(initial=-1)) + 1
    per = np.zeros((ns, offers.shape[1]), dtype=np.int64)  # hosts offering t behind s
    np.add.at(per, sw[on], offers[usable][on].astype(np.int64))
    behind = np.bincount(sw[on], minlength=ns)[:, None]
    own = ((per == count[None, :]) & (per == behind) & (behind > 0)).any(axis=0)
    everywhere = count == int(usable.sum())
    if ((count == 0) | own | everywhere).all():  # types say only where (clusters): not counted
        keep = (count > 0) & ~own
    else:  # types say what (hardware): every one counted
        keep = count > 0
    pr._scarce_offers = offers[:, keep]
    return pr._scarce_offers


def scarcity(pr: Problem, where: np.ndarray) -> float:
    """How much of the scarce node types a mapping takes: the sum over node types of
    ``1 / (usable hosts offering it left free after the mapping + 1)`` (lower is better).

    A mapping that takes its hosts from the plentiful types and leaves the types with few
    free hosts free keeps the testbed able to take the next experiments that ask for them
    (on the DeterLab-like replay, plain ``pc`` nodes had taken most of the scarce
    ``pc2133`` and ``microcloud`` PCs, which the experiments asking for them then lacked).
    Types that no usable host offers are not counted. Where the types only say where a
    host is (each is offered by every usable host, or is a switch's own: offered by exactly
    the usable hosts behind one switch, as Grid'5000 clusters' types), the switches' own
    types are not counted either: which switch a node goes to is what :func:`packing`
    weighs, and nobody asks for a cluster by its type there. Where some type says what a
    host is (hosts of two types behind one switch, or a type behind two switches, as
    DeterLab's hardware types), every type is counted.

    Parameters
    ----------
    pr : Problem
        The compiled problem.
    where : int array (nv,)
        Virtual -> physical index of a complete mapping.

    Returns
    -------
    float
        The sum (0 when no type is counted).

    Examples
    --------
    >>> import numpy as np
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1 rare:1\\nnode b pc:1\\n"
    ...                      "node c pc:1\\nlink la a sw 100 0 0\\nlink lb b sw 100 0 0\\n"
    ...                      "link lc c sw 100 0 0")
    >>> pr = tb.build_problem(tb.parse_top("node x pc"), ptop)
    >>> on_a, on_b = np.array([pr.pidx["a"]]), np.array([pr.pidx["b"]])
    >>> tb.assignplus.scarcity(pr, on_a) > tb.assignplus.scarcity(pr, on_b)
    True
    """
    offers = _scarce_offers(pr)
    w = np.asarray(where, dtype=np.int64)
    taken = np.zeros(len(pr.pnames), dtype=bool)
    taken[w[w >= 0]] = True
    left = offers[~taken].sum(axis=0)
    return float(np.sum(1.0 / (left + 1.0)))


def _failure(pr: Problem, row, lists_idx) -> dict:
    code, v, li, need, avail = (int(x) for x in row)
    if code == 1:
        return {"constraint": "fixed", "vnodes": [pr.vnames[v]],
                "pnode": pr.pnames[int(pr.fixed[v])]}  # fmt: skip
    pcs = [pr.pnames[int(pr.crep[c])] for c in lists_idx[li]]
    if code == 2:
        todo = [pr.vnames[u] for u in range(pr.nv) if tuple(sorted(pr.cand[u])) ==
                tuple(lists_idx[li])]  # fmt: skip
        return {"constraint": "capacity", "needed": need, "available": avail,
                "vnodes": todo, "candidate_pclasses": pcs}  # fmt: skip
    return {"constraint": "capacity", "vnodes": [pr.vnames[v]], "candidate_pclasses": pcs}


#: How many of its solutions a stopped ``assign_plus`` routes at most (each routing of an
#: 800-node experiment takes 10-40 ms, all past the deadline), best first.
STOPPED_ROUTES = 2


def assign_plus(pr: Problem, *, scoring: str = "1", memory: Optional[RequestMemory] = None,
                strategies=STRATEGIES, use_exchange: bool = True, max_rounds: int = 50,
                backend: str = "compiled", trunk_aware: bool = False,
                pack: bool = False):  # fmt: skip
    """Run assign+ on a compiled problem (allocate and exchange in the compiled kernel
    ``coalloc.testbed._allocate``, or its Python twin with ``backend="numpy"``).

    Returns
    -------
    dict
        ``where`` (array or None), ``routing``, ``score``, ``strategy``, ``failure``,
        ``solutions`` (candidate solutions scored), ``exchanges``, ``stopped`` and
        ``error`` (the deadline of the time limit in force, Ctrl-C or a cancelled scope
        stopped the kernel: ``where`` is the best of what it had done, and the caller
        raises the stop with :func:`.anneal.raise_stop` after offering it).

    With ``pack`` (the default method), solutions of equal inter-switch bandwidth and
    score are ranked by :func:`packing` (the most whole free testbed left), not by the
    order of the strategies.
    """
    missing = [pr.vnames[v] for v in range(pr.nv) if not pr.cand[v]]
    if missing:
        return {"where": None, "failure": {
            "constraint": "no_candidate", "vnodes": missing,
            "why": {pr.vnames[v]: pr.cand_why[v] for v in range(pr.nv) if not pr.cand[v]}},
            "solutions": 0, "score": None, "routing": None, "strategy": None,
            "exchanges": 0}  # fmt: skip
    scores = _pclass_scores(pr, scoring, memory)
    part = partition(pr)
    data = plus_data(pr, scores, part)
    codes = [ALL_STRATEGIES.index(s) for s in strategies]
    if backend != "compiled":
        from ._reference.allocate import allocate_all
    else:
        from ._allocate import allocate_all
    rounds = max(int(max_rounds), pr.nv) if trunk_aware else int(max_rounds)
    from .anneal import kernel_deadline_struct

    out = allocate_all(data, codes, bool(use_exchange), rounds, bool(trunk_aware),
                       kernel_deadline_struct(pr))  # fmt: skip
    stop = {"stopped": bool(out.get("stopped")), "error": out.get("error")}
    if memory is not None:
        memory.record(pr)
    failure = None
    for f in out["fail"]:
        if f[0] and failure is None:
            ptr, idx = data["list_ptr"].tolist(), data["list_idx"].tolist()
            failure = _failure(pr, f, [idx[ptr[i] : ptr[i + 1]] for i in range(len(ptr) - 1)])
    # distinct solutions, by the lowest inter-switch bandwidth, ties by the lowest score
    # (computed only where bandwidths tie), then by row; the first that routes wins
    isw_all = out["isw"].tolist()
    groups: Dict[float, list] = {}
    seen = set()
    for row, val in enumerate(isw_all):
        if not np.isfinite(val):
            continue
        where = out["where"][row]
        key = where.tobytes()
        if key not in seen:
            seen.add(key)
            groups.setdefault(val, []).append((row, where))
    n_cands = len(seen)
    tried = 0
    for val in sorted(groups):
        group = groups[val]
        if len(group) == 1 or stop["stopped"]:  # (stopped: no time to rank by score)
            ranked = [(None, row, where) for row, where in group]
        elif pack:
            ranked = [(sc, row, where) for sc, _, row, where in sorted(
                    (_score(pr, where, scores), -packing(pr, where), row, where)
                    for row, where in group)]  # fmt: skip
        else:
            ranked = sorted((_score(pr, where, scores), row, where) for row, where in group)
        if stop["stopped"] and tried >= STOPPED_ROUTES:
            break
        for sc, row, where in ranked:
            if not stop["stopped"]:  # (stopped: the best row so far, then the stop is raised)
                interrupt.check()  # a batch's timeout or cancellation
            elif tried >= STOPPED_ROUTES:  # past the deadline: a few routings at most
                break
            tried += 1
            rt = route(pr, where)
            if rt.failure is None:
                if sc is None:
                    sc = _score(pr, where, scores)
                return {"where": where, "routing": rt, "score": sc,
                        "strategy": strategies[row // 2] + ("" if row % 2 == 0 else "+exchange")
                        if row < 2 * len(strategies) else "refined", "failure": None,
                        "solutions": n_cands, "exchanges": int(out["exchanges"]),
                        **stop}  # fmt: skip
            failure = failure or rt.failure
    return {"where": None, "failure": failure or {"constraint": "unknown"},
            "solutions": n_cands, "score": None, "routing": None, "strategy": None,
            "exchanges": int(out["exchanges"]), **stop}  # fmt: skip
