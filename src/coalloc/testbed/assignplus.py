"""assign+ (seed 003, section 8.2): five deterministic allocation strategies and an exchange.

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
6. the solution with the lowest inter-switch bandwidth is kept, ties by the lowest score.

Scoring variants of the evaluation: ``"1"`` (a pclass scores its number of features,
so node types with more unwanted features cost more), ``"1m"`` (that plus how often its
type was requested, a memory carried across calls), ``"2m"`` (only the request frequency).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Dict, List, Optional

import numpy as np

from .problem import Problem, link_bw
from .routing import Placement, estimate_isw, route

__all__ = ["STRATEGIES", "SCORINGS", "partition", "candidate_lists", "allocate", "assign_plus",
           "RequestMemory"]  # fmt: skip

STRATEGIES = ("PART", "SCORE", "ISW", "PREF", "FRAG")
SCORINGS = ("1", "1m", "2m")


class RequestMemory:
    """How often each physical type was requested (the memory of ``.1m`` and ``.2m``).

    Pass the same object to successive calls (the simulator does); each call adds the
    types its virtual nodes request.
    """

    def __init__(self) -> None:
        self.counts: Dict[str, float] = defaultdict(float)
        self.total = 0.0

    def record(self, pr: Problem) -> None:
        for v in pr.vnames:
            for t in pr.top.allowed_types(v):
                self.counts[t] += 1.0
            self.total += 1.0

    def frequency(self, type_name: str) -> float:
        return self.counts.get(type_name, 0.0) / self.total if self.total else 0.0


def partition(pr: Problem):
    """Degree-scored partitioning: ``(score, parent)`` arrays (parent -1 for roots)."""
    nv = pr.nv
    deg = np.array([len(pr.inc[v]) for v in range(nv)])
    score = np.zeros(nv, dtype=np.int64)
    parent = np.full(nv, -1, dtype=np.int64)
    marked = np.zeros(len(pr.la), dtype=bool)
    # connected components, so that each starts from its own smallest degree
    comp = np.full(nv, -1, dtype=np.int64)
    for s in range(nv):
        if comp[s] >= 0:
            continue
        stack = [s]
        comp[s] = s
        while stack:
            u = stack.pop()
            for e in pr.inc[u]:
                w = pr.lb[e] if pr.la[e] == u else pr.la[e]
                if comp[w] < 0:
                    comp[w] = s
                    stack.append(w)
    for c in np.unique(comp):
        nodes = np.flatnonzero(comp == c)
        dmin = deg[nodes].min()
        frontier = [int(v) for v in nodes if deg[v] == dmin]
        for v in frontier:
            score[v] = 1
        rnd = 1
        while frontier:
            nxt = []
            for v in frontier:
                for e in pr.inc[v]:
                    if marked[e]:
                        continue
                    w = int(pr.lb[e] if pr.la[e] == v else pr.la[e])
                    if score[w] == 0 or score[w] > score[v]:
                        marked[e] = True
                        if score[w] == 0:
                            score[w] = rnd + 1
                            nxt.append(w)
                        if parent[v] < 0:
                            parent[v] = w
            frontier = nxt
            rnd += 1
    return score, parent


def candidate_lists(pr: Problem, free: List[int]) -> List[tuple]:
    """Candidate lists (tuples of pclasses), most restricted first (fewest pclasses, then
    fewest free nodes)."""
    lists = {tuple(sorted(c)) for c in pr.cand if c}
    return sorted(lists, key=lambda L: (len(L), sum(free[c] for c in L), L))


def _pclass_scores(pr: Problem, scoring: str, memory: Optional[RequestMemory]) -> np.ndarray:
    feats = pr.pfeature_count
    if scoring == "1":
        return feats.copy()
    freq = np.zeros(pr.nc)
    for c in range(pr.nc):
        r = int(pr.crep[c])
        p = pr.ptop.nodes[pr.pnames[r]]
        if memory is not None and memory.total:
            freq[c] = max((memory.frequency(t) for t in p.types), default=0.0)
        else:  # no history: how many of this request's nodes may use it
            freq[c] = sum(1 for v in range(pr.nv) if c in pr.cand[v]) / max(pr.nv, 1)
    if scoring == "2m":
        return freq
    return feats + freq * max(1.0, float(feats.max()) if len(feats) else 1.0)


def allocate(pr: Problem, strategy: str, scores: np.ndarray, part=None):
    """One allocation with ``strategy``; returns ``(placement or None, failure or None)``."""
    score_v, parent = part if part is not None else partition(pr)
    nv = pr.nv
    children: List[List[int]] = [[] for _ in range(nv)]
    for v in range(nv):
        if parent[v] >= 0:
            children[int(parent[v])].append(v)
    st = Placement(pr)
    free = [len(m) for m in pr.members]
    neighbours: List[List[int]] = [[int(pr.lb[e] if pr.la[e] == v else pr.la[e])
                                    for e in pr.inc[v]] for v in range(nv)]  # fmt: skip
    # fixed nodes first
    for v in range(nv):
        p = int(pr.fixed[v])
        if p >= 0:
            if not st.fits(v, p):
                return None, {"constraint": "fixed", "vnodes": [pr.vnames[v]],
                              "pnode": pr.pnames[p]}  # fmt: skip
            st.place(v, p)
    lists = candidate_lists(pr, free)
    list_of = {v: tuple(sorted(pr.cand[v])) for v in range(nv)}
    members_of: Dict[tuple, List[int]] = defaultdict(list)
    for v in range(nv):
        members_of[list_of[v]].append(v)

    def descendants(v: int) -> List[int]:
        out, stack = [], list(children[v])
        while stack:
            u = stack.pop()
            if st.where[u] < 0:
                out.append(u)
            stack.extend(children[u])
        return out

    def hosted_counts(v: int):
        pc = defaultdict(int)  # pclass -> parent/children hosted there
        sw = defaultdict(int)  # switch -> neighbours hosted there
        rel = set(children[v]) | ({int(parent[v])} if parent[v] >= 0 else set())
        for u in rel:
            if st.where[u] >= 0:
                pc[int(pr.pclass[st.where[u]])] += 1
        for u in neighbours[v]:
            if st.where[u] >= 0:
                sw[int(pr.pswitch[st.where[u]])] += 1
        return pc, sw

    def order(L: tuple, v: int) -> List[int]:
        size = {c: sum(1 for p in pr.members[c] if st.used[p] == 0 or pr.pis_switch[p])
                for c in L}  # fmt: skip
        if strategy == "PART":
            return sorted(L, key=lambda c: (-size[c], c))
        if strategy == "SCORE":
            return sorted(L, key=lambda c: (scores[c], -size[c], c))
        pc, sw = hosted_counts(v)
        if strategy == "FRAG":
            return sorted(L, key=lambda c: (-(1 + pc[c]) * size[c], scores[c], c))
        if strategy == "PREF":
            return sorted(L, key=lambda c: (-(1 + pc[c] + sw[int(pr.cswitch[c])]) * size[c],
                                            scores[c], c))  # fmt: skip
        # ISW: parent/child preference, then the trunk capacity towards the neighbours
        def isw(c: int) -> float:
            s = int(pr.cswitch[c])
            total = 0.0
            for t, n in sw.items():
                if t == s:
                    total += n * 1e18
                elif s >= 0 and t >= 0:
                    hops = pr.path_of(s, t)
                    if hops:
                        total += n * min(pr.tcap[g] for g in hops)
            return total
        return sorted(L, key=lambda c: (-pc[c], -isw(c), -size[c], scores[c], c))

    def try_group(c: int, group: List[int]) -> bool:
        placed = []
        for u in group:
            nodes = st.free_nodes(c, u)
            if not nodes:
                for w in placed:
                    st.remove(w)
                return False
            st.place(u, nodes[0])
            placed.append(u)
        return True

    for L in lists:
        todo = [v for v in members_of[L] if st.where[v] < 0]
        if not todo:
            continue
        avail = sum(1 for c in L for p in pr.members[c] if st.used[p] == 0)
        need = len(todo)
        if need > avail and all(not pr.vstatic[v, c] and pr.vslots[v] >= 1 and
                                np.all(pr.cap[pr.members[c], pr.vtype[v, c]] <= 1)
                                for v in todo for c in L):  # fmt: skip
            return None, {"constraint": "capacity", "candidate_list":
                          [[pr.pnames[p] for p in pr.members[c]][:3] for c in L],
                          "needed": need, "available": avail,
                          "vnodes": [pr.vnames[v] for v in todo]}  # fmt: skip
        todo.sort(key=lambda v: (-score_v[v], v))
        for v in todo:
            if st.where[v] >= 0:
                continue
            desc = descendants(v)
            cl = order(L, v)
            done = False
            for c in cl:  # the node and its maximum pool
                pool = [u for u in desc if c in st.cand_sets[u]]
                if pool and try_group(c, [v] + pool):
                    done = True
                    break
            if not done:  # the node and its minimum pool
                pool = [u for u in desc if list_of[u] == L]
                if pool:
                    for c in cl:
                        if try_group(c, [v] + pool):
                            done = True
                            break
            if not done:
                for c in cl:
                    if try_group(c, [v]):
                        done = True
                        break
            if not done:
                return None, {"constraint": "capacity", "vnodes": [pr.vnames[v]],
                              "candidate_pclasses": [pr.pnames[int(pr.crep[c])] for c in L]}
    return st, None


def _score(pr: Problem, st: Placement, scores: np.ndarray) -> float:
    used = {int(p) for p in st.where if p >= 0}
    return float(sum(scores[pr.pclass[p]] for p in used if not pr.pis_switch[p]))


def exchange(pr: Problem, st: Placement, max_rounds: int = 50) -> int:
    """Kernighan-Lin style exchange: move or swap virtual nodes between pclasses while the
    inter-switch bandwidth (bandwidth x trunk hops by home switch) drops. Returns the
    number of exchanges made."""
    nv = pr.nv
    if len(pr.tcap) == 0:
        return 0

    def local(v: int, p: int, other: Optional[int] = None, q: int = -1) -> float:
        cost = 0.0
        for e in pr.inc[v]:
            w = int(pr.lb[e] if pr.la[e] == v else pr.la[e])
            pw = q if w == other else int(st.where[w])
            s1, s2 = pr.pswitch[p], pr.pswitch[pw]
            if s1 != s2 and s1 >= 0 and s2 >= 0:
                cost += link_bw(pr, e, p, pw) * max(1, pr.hops[s1, s2])
        return cost

    moves = 0
    for _ in range(max_rounds):
        best = (1e-9, None)
        cross = [v for v in range(nv) if pr.fixed[v] < 0 and local(v, int(st.where[v])) > 0]
        for v in cross:
            pv = int(st.where[v])
            cur = local(v, pv)
            seen = set()
            for e in pr.inc[v]:  # switches where neighbours are
                w = int(pr.lb[e] if pr.la[e] == v else pr.la[e])
                seen.add(int(pr.pswitch[st.where[w]]))
            for c in pr.cand[v]:
                if int(pr.cswitch[c]) not in seen:
                    continue
                st.remove(v)
                nodes = st.free_nodes(c, v)
                st.place(v, pv)
                if nodes:
                    gain = cur - local(v, nodes[0])
                    if gain > best[0]:
                        best = (gain, ("move", v, nodes[0]))
                # swap with a node on the target pclass
                for p in pr.members[c]:
                    for u in st.hosted[int(p)]:
                        if u == v or pr.fixed[u] >= 0:
                            continue
                        if pr.pclass[pv] not in st.cand_sets[u]:
                            continue
                        g = (cur + local(u, int(p))
                             - local(v, int(p), u, pv) - local(u, pv, v, int(p)))
                        if g > best[0]:
                            best = (g, ("swap", v, u))
        if best[1] is None:
            break
        kind, v, x = best[1]
        if kind == "move":
            st.remove(v)
            if not st.fits(v, x):
                st.place(v, int(st.where[v]) if st.where[v] >= 0 else x)
                break
            st.place(v, x)
        else:
            u = x
            pv, pu = int(st.where[v]), int(st.where[u])
            st.remove(v)
            st.remove(u)
            if st.fits(v, pu) and st.fits(u, pv):
                st.place(v, pu)
                st.place(u, pv)
            else:
                st.place(v, pv)
                st.place(u, pu)
                break
        moves += 1
    return moves


def assign_plus(pr: Problem, *, scoring: str = "1", memory: Optional[RequestMemory] = None,
                strategies=STRATEGIES, use_exchange: bool = True):  # fmt: skip
    """Run assign+ on a compiled problem.

    Returns
    -------
    dict
        ``where`` (array or None), ``routing``, ``score``, ``strategy``, ``failure``,
        ``solutions`` (how many candidate solutions were scored), ``times``.
    """
    t0 = time.perf_counter()
    missing = [pr.vnames[v] for v in range(pr.nv) if not pr.cand[v]]
    if missing:
        return {"where": None, "failure": {
            "constraint": "no_candidate", "vnodes": missing,
            "why": {pr.vnames[v]: pr.cand_why[v] for v in range(pr.nv) if not pr.cand[v]}},
            "solutions": 0, "score": None, "routing": None, "strategy": None}  # fmt: skip
    scores = _pclass_scores(pr, scoring, memory)
    part = partition(pr)
    best = None
    failure = None
    n_solutions = 0
    exchanges = 0
    for strategy in strategies:
        st, fail = allocate(pr, strategy, scores, part)
        if st is None:
            failure = failure or fail
            continue
        states = [st]
        if use_exchange:
            st2 = st.copy()
            exchanges += exchange(pr, st2)
            states.append(st2)
        for s in states:
            n_solutions += 1
            rt = route(pr, s.where)
            if rt.failure is not None:
                failure = failure or rt.failure
                continue
            key = (rt.interswitch_bandwidth, _score(pr, s, scores))
            if best is None or key < best[0]:
                best = (key, s, rt, strategy)
    if memory is not None:
        memory.record(pr)
    if best is None:
        return {"where": None, "failure": failure, "solutions": n_solutions, "score": None,
                "routing": None, "strategy": None, "exchanges": exchanges,
                "time": time.perf_counter() - t0}  # fmt: skip
    (isw, sc), s, rt, strategy = best
    return {"where": s.where, "routing": rt, "score": sc, "strategy": strategy,
            "failure": None, "solutions": n_solutions, "exchanges": exchanges,
            "isw_estimate": estimate_isw(pr, s.where), "time": time.perf_counter() - t0}
