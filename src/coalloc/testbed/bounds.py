"""Cheap proofs that no mapping exists, for the failures a search leaves open.

:func:`hub_bound` bounds how many of a hub's links (a LAN node, or any virtual node only
switches can host) any mapping can carry to it over the free hosts and the trunks' free
bandwidth, by a maximum flow; :func:`hub_proof` turns a bound below the hub's degree into a
failure reason. On the Grid'5000-like workload of ``bench/testbed/vs_assign.py`` a VLAN of
21-40 nodes behind 40 Gb/s uplinks is such a case on the *empty* testbed (a cluster's 16
hosts plus 4 more members of 10 Gb/s through its uplink), which the searches could only
report as not found.
"""

from __future__ import annotations

from collections import deque
from typing import Dict, List, Optional

import numpy as np

from .problem import Problem

__all__ = ["hub_bound", "hub_proof"]


def _max_flow(cap: Dict[int, Dict[int, int]], source: int, sink: int, limit: int) -> int:
    """Edmonds-Karp on integer capacities ``cap[u][v]`` (copied, not changed), stopping
    once the flow reaches ``limit``."""
    res: Dict[int, Dict[int, int]] = {u: dict(arcs) for u, arcs in cap.items()}
    for u, arcs in cap.items():
        for v in arcs:
            res.setdefault(v, {}).setdefault(u, 0)
    flow = 0
    while flow < limit:
        prev = {source: source}
        todo = deque([source])
        while todo and sink not in prev:
            u = todo.popleft()
            for v, c in res[u].items():
                if c > 0 and v not in prev:
                    prev[v] = u
                    todo.append(v)
        if sink not in prev:
            break
        push, v = limit - flow, sink
        while v != source:
            push = min(push, res[prev[v]][v])
            v = prev[v]
        v = sink
        while v != source:
            res[prev[v]][v] -= push
            res[v][prev[v]] += push
            v = prev[v]
        flow += push
    return flow


def _exclusive(pr: Problem, v: int) -> bool:
    """Does virtual node ``v`` take a host of its own on every candidate pclass (never a
    switch, never beside another node: a whole slot of a type of one slot, not static)?"""
    if pr.vslots[v] < 1 or not pr.cand[v]:
        return False
    for c in pr.cand[v]:
        rep = int(pr.members[c][0])
        t = int(pr.vtype[v, c])
        if pr.pis_switch[rep] or t < 0 or pr.vstatic[v, c] or pr.cap[rep, t] > 1:
            return False
    return True


def hub_bound(pr: Problem, hub: int) -> Optional[int]:
    """An upper bound on how many of ``hub``'s links any mapping can carry, or None where
    the bound does not apply.

    It applies where every candidate pclass of the virtual node ``hub`` is a switch's, its
    links all ask the same bandwidth ``b`` (not ``*``) and join distinct virtual nodes, each
    of which takes a host of its own (:func:`_exclusive`). Each such neighbour then sits on a
    distinct usable host of its candidate pclasses, and its link leaves that host through a
    host-switch link of bandwidth at least ``b`` and crosses whole trunks (a link is never
    split over parallel trunks) to the hub's switch. A maximum flow from the hosts (one unit
    each) to a switch, each host-switch link of bandwidth at least ``b`` one unit, each trunk
    ``floor(free bandwidth / b)`` units in each direction, bounds the links that switch can
    take; the bound is the largest over the switches that may host ``hub``. It over-counts
    (link types, interfaces other links use and both directions of a trunk are not
    charged), so it is a bound, never a mapping.

    Parameters
    ----------
    pr : Problem
        The compiled problem (its free hosts, ``trunk_used`` applied).
    hub : int
        Index of a virtual node.

    Returns
    -------
    int or None
        The bound.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node s0 switch:1 *lan:*\\nnode s1 switch:1 *lan:*\\n"
    ...                      "link t s0 s1 100 0 0\\nnode a pc:1\\nnode b pc:1\\nnode c pc:1\\n"
    ...                      "link la a s0 100 0 0\\nlink lb b s1 100 0 0\\nlink lc c s1 100 0 0")
    >>> pr = tb.build_problem(tb.generators.lan(3, bw=100), ptop)
    >>> hub_bound(pr, pr.vidx["lan0"])  # on s1: b, c and a over the one trunk
    3
    >>> pr = tb.build_problem(tb.generators.lan(3, bw=100), ptop, trunk_used={"t": 50})
    >>> hub_bound(pr, pr.vidx["lan0"])  # the trunk carries none: two behind s1 at most
    2
    """
    if not pr.cand[hub]:
        return None
    if not all(pr.pis_switch[int(pr.members[c][0])] for c in pr.cand[hub]):
        return None
    links = list(pr.inc[hub])
    if not links:
        return None
    la, lb, lbw = pr.la, pr.lb, pr.lbw
    bws = {float(lbw[e]) for e in links}
    if len(bws) != 1:
        return None
    b = bws.pop()
    if not b > 0:
        return None
    peers = [int(lb[e]) if int(la[e]) == hub else int(la[e]) for e in links]
    if hub in peers or len(set(peers)) != len(peers):
        return None
    if not all(_exclusive(pr, v) for v in peers):
        return None
    eligible = np.zeros(len(pr.pnames), dtype=bool)
    for c in {c for v in peers for c in pr.cand[v]}:
        eligible[pr.members[c]] = True
    ptop, pidx = pr.ptop, pr.pidx
    nh = len(pr.pnames)  # graph nodes: 0..nh-1 physical, nh the source
    source = nh
    cap: Dict[int, Dict[int, int]] = {source: {}}
    used = pr.trunk_used or {}
    homes: Dict[int, set] = {}  # eligible host -> switches it reaches by a link of >= b
    for lk in ptop.links.values():
        i, j = pidx[lk.a], pidx[lk.b]
        si, sj = bool(pr.pis_switch[i]), bool(pr.pis_switch[j])
        if si and sj:
            units = int((lk.bw - used.get(lk.name, 0.0)) // b)
            if units > 0:
                for x, y in ((i, j), (j, i)):
                    arcs = cap.setdefault(x, {})
                    arcs[y] = arcs.get(y, 0) + units
        elif si != sj and lk.bw >= b:
            host, sw = (j, i) if si else (i, j)
            if eligible[host]:
                homes.setdefault(host, set()).add(sw)
    for host, sws in homes.items():
        if len(sws) == 1:  # one way out: the host is one more unit entering its switch
            (sw,) = sws
            cap[source][sw] = cap[source].get(sw, 0) + 1
        else:
            cap[source][host] = 1
            cap.setdefault(host, {}).update({sw: 1 for sw in sws})
    targets: List[int] = sorted({int(p) for c in pr.cand[hub] for p in pr.members[c]})
    best = 0
    for t in targets:
        best = max(best, _max_flow(cap, source, t, len(peers)))
        if best >= len(peers):
            break
    return best


def hub_proof(pr: Problem) -> Optional[dict]:
    """A failure reason proving that no mapping exists, from :func:`hub_bound` below some
    virtual node's degree, or None.

    Parameters
    ----------
    pr : Problem
        The compiled problem.

    Returns
    -------
    dict or None
        ``{"constraint": "hub_bandwidth", "vnode", "links", "bound", "bandwidth"}``.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node s0 switch:1 *lan:*\\nnode s1 switch:1 *lan:*\\n"
    ...                      "link t s0 s1 100 0 0\\nnode a pc:1\\nnode b pc:1\\nnode c pc:1\\n"
    ...                      "link la a s0 100 0 0\\nlink lb b s1 100 0 0\\nlink lc c s1 100 0 0")
    >>> pr = tb.build_problem(tb.generators.lan(3, bw=100), ptop, trunk_used={"t": 50})
    >>> hub_proof(pr)["bound"]
    2
    """
    for v in range(pr.nv):
        deg = len(pr.inc[v])
        if deg < 2:
            continue
        bound = hub_bound(pr, v)
        if bound is not None and bound < deg:
            return {"constraint": "hub_bandwidth", "vnode": pr.vnames[v], "links": deg,
                    "bound": bound, "bandwidth": float(pr.lbw[pr.inc[v][0]])}  # fmt: skip
    return None
