"""The mapping problem compiled to arrays: pclasses, candidate lists, switches and trunks.

Both heuristics (assign+ and the annealer) and the exact program start from a
:class:`Problem`; the independent checker (:mod:`.verify`) does not.

Modelling choices (``coalloc docs testbed``):

* a PC's *home switch* is the switch holding most of its interfaces; the search scores a
  virtual link by the home switches of its ends (the router then picks real interfaces);
* a trunk group is the set of parallel trunks between two switches; its capacity is their
  summed bandwidth; inter-switch paths are the fewest-hop paths of the switch graph;
* a virtual link between two nodes of one PC is ``trivial`` when it is ``trivial_ok``,
  otherwise it leaves through two interfaces of the PC;
* a non-emulated link takes a whole interface at each PC end; emulated links share
  interfaces up to their bandwidth;
* a desire of weight >= 1 (local or global) is hard: physical nodes lacking it are no
  candidates; lower weights cost their weight when unmet; local features a node has but
  its virtual node does not desire cost their weight (the "unwanted feature" penalty).

Why over 800 lines: one idea, the compiled problem -- the testbed's tables and the build's
named steps (:func:`_build`) that fill one :class:`TestbedProblem` from them, sharing the
memos kept beside the testbed and the deadline polling of :func:`_polled`.
"""

from __future__ import annotations

import contextlib
import gc
import math
import threading
from collections import defaultdict, deque
from operator import attrgetter
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import numpy as np

from .._shared import interrupt
from .._shared.caches import cache_of
from .._shared.docs import filled
from .model import HARD_WEIGHT, PhysicalTopology, VirtualTopology, feature_kind

__all__ = ["Problem", "build_problem", "NATIVE_BW"]

BIG = 1e18
#: What a used node listing a type with an unlimited count (``*``) adds to that type's
#: count under ``set-type-limit`` (Emulab's ``assign`` reads ``*`` as 10000 slots).
TYPE_LIMIT_STAR = 10000.0
#: Items between two looks at the deadline in the long loops of :func:`build_problem` (and
#: of the testbed part it builds: 0.1-0.4 s for 2,000 PCs in a fresh process, before any
#: method's own check): a few hundred microseconds of work.
POLL_EVERY = 256


def _polled(items, every: int = POLL_EVERY):
    """``items``, with :func:`coalloc._shared.interrupt.check` (the calling thread's time
    limit or cancellation: it raises the scope's error) before the first and every
    ``every``-th. What a stopped build had derived per node stays memoized (the
    ``_node_facts``-style tables), so the next call resumes rather than restarts."""
    check = interrupt.check
    for k, item in enumerate(items):
        if not k % every:
            check()
        yield item


def _resumed(cache: dict, key: str, items: Sequence, fn: Callable[[Any], Any],
             every: int = 32) -> list:  # fmt: skip
    """``[fn(x) for x in items]`` polled as :func:`_polled` and resumable: the values a
    stopped build made stay in ``cache[key]`` and the next build goes on from there (the
    key goes once the list is whole). A testbed's router's and checker's tables are built
    this way in a time-limited set-up (``methods.outcome._problem``): built whole there,
    they took 0.1-0.7 s of wall under load on 2,000 PCs without a look at the deadline
    (assign+ at T = 1 s ended at 1.3-1.5 s), and a short call stopped in them must not
    begin them afresh each time. A thread that finds another building them builds its
    own copy (polled, not kept). A look every ``every`` items: 256 nodes' views took 0.1 s
    of wall under load."""
    lock = cache.setdefault(key + "/lock", threading.Lock())
    if not lock.acquire(blocking=False):  # another thread's build under way
        return [fn(x) for x in _polled(items, every)]
    try:
        done = cache.setdefault(key, [])
        check = interrupt.check
        for k in range(len(done), len(items)):
            if not k % every:
                check()
            done.append(fn(items[k]))
        cache.pop(key, None)
        cache.pop(key + "/lock", None)
        return done
    finally:
        lock.release()


#: Bandwidth assumed for a ``*`` link when no interface is known.
NATIVE_BW = 100000.0


def _iface_types(types) -> Tuple[str, ...]:
    return tuple(types) if types else ("ethernet",)


class TestbedProblem:
    """Arrays describing ``(top, ptop)`` for the solvers (built by :func:`build_problem`).

    Attributes (``nv`` virtual nodes, ``ne`` virtual links, ``np_`` physical nodes, ``nc``
    pclasses, ``ns`` switches, ``nt`` trunk groups):

    vnames, pnames : list of str
    link_names : list of str
    la, lb : int arrays (ne,)   virtual link ends
    lbw : float array (ne,)     bandwidth (``*`` resolved to the smaller native bandwidth
                                 of the two ends' interfaces once mapped: stored as -1)
    ltriv, lemu : bool arrays (ne,)
    pswitch : int array (np_,)  home switch index of each physical node (-1: none)
    pis_switch : bool array (np_,)
    pifaces : int array (np_,)  interfaces (links to switches) of each physical node
    pifbw : float array (np_,)  bandwidth of its fastest interface
    pclass : int array (np_,)   pclass of each physical node
    members : list of int arrays  physical nodes of each pclass
    cand : list of int lists    candidate pclasses of each virtual node
    fixed : int array (nv,)     fixed physical node (-1 if none)
    fcost : float array (nv, nc) feature cost of a virtual node on a pclass
    vtype : int array (nv, nc)  the type id a virtual node acts as on a pclass (-1: none)
    vstatic : bool array (nv, nc) that type is static on the pclass
    vslots : float array (nv,)
    cap : float array (np_, ntypes) slots of each type (0 if not offered)
    tlimit : int array (ntypes,) type limits (-1: none)
    tweight : float array (np_, ntypes) what a used physical node adds to each type's count
                                 under ``set-type-limit`` (Emulab's rule: the node's slots of
                                 every type it lists, ``*`` counting 10000; 0 if not listed)
    add_names : list of str; vadd (nv, na); padd (np_, na)   additive features
    vclass : int array (nv,) vclass id (-1); vclass_w : float array
    path : dict (s1, s2) -> list of trunk group ids; tcap : float array (nt,)
    """

    def __init__(self, top: VirtualTopology, ptop: PhysicalTopology) -> None:
        self.top = top
        self.ptop = ptop

    def path_of(self, s1: int, s2: int) -> Optional[List[int]]:
        """Trunk groups on the path between switches ``s1`` and ``s2`` (None: unreachable)."""
        if s1 == s2:
            return []
        return self.paths.get((s1, s2))

    @property
    def nv(self) -> int:
        return len(self.vnames)

    @property
    def nc(self) -> int:
        return len(self.members)


#: The older name of :class:`TestbedProblem`.
Problem = TestbedProblem


#: id(node) -> (node, its facts): what :func:`_testbed_part` derives from one physical node
#: alone (a pure function of the read-only :class:`PNode`). The ``.ptop`` reader returns the
#: same node object for the same line of the free-testbed texts a replay or a service reads
#: for each experiment, so these facts are derived once per node line, not once per text.
#: The node is kept in the entry (its id cannot be reused while the entry lives). Bounded.
_node_facts: Dict[int, tuple] = {}
NODE_FACTS_SIZE = 1 << 16


def _facts_of(node) -> tuple:
    """``(sorted types, sorted static types, sorted features, feature kinds, summed local
    weight, local feature count)`` of a physical node (memoized by identity)."""
    hit = _node_facts.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    kinds = {k: feature_kind(k) for k in node.features}
    facts = (tuple(sorted(node.types.items())), tuple(sorted(node.static.items())),
             tuple(sorted(node.features.items())), kinds,
             float(sum(w for k, w in node.features.items() if kinds[k] == "local")),
             sum(1 for k in kinds.values() if k == "local"))  # fmt: skip
    if len(_node_facts) >= NODE_FACTS_SIZE:
        _node_facts.clear()
    _node_facts[id(node)] = (node, facts)
    return facts


#: id(node) -> (node, the testbed's type names, its rows): memoized as :data:`_node_facts`
#: (successive free texts of one testbed number the same types alike).
_row_memo: Dict[int, tuple] = {}


def _type_rows(node, names: tuple, type_names: Dict[str, int]) -> tuple:
    """``(slots, type-limit weights, static)`` of a physical node over the testbed's type
    names ``names`` (``type_names``: their indices), as three rows (a static type's entry
    after the plain one's), memoized by the node and ``names``."""
    hit = _row_memo.get(id(node))
    if hit is not None and hit[0] is node and hit[1] == names:
        return hit[2]
    n = len(names)
    cap, weight, static = [0.0] * n, [0.0] * n, [False] * n
    for table, is_static in ((node.types, False), (node.static, True)):
        for t, c in table.items():
            j = type_names[t]
            cap[j] = min(c, BIG)
            weight[j] = TYPE_LIMIT_STAR if math.isinf(c) else c
            if is_static:
                static[j] = True
    rows = (cap, weight, static)
    if len(_row_memo) >= NODE_FACTS_SIZE:
        _row_memo.clear()
    _row_memo[id(node)] = (node, names, rows)
    return rows


_NO_TYPES: Mapping[str, int] = MappingProxyType({})
#: id(host) -> (host, its links, its facts): what :func:`_testbed_part` derives from a host
#: and its links alone (memoized as :data:`_node_facts`; links equal to the remembered
#: ones give the same facts).
_host_memo: Dict[int, tuple] = {}


def _host_facts(node, links: list) -> tuple:
    """``(interfaces, fastest interface bandwidth, read-only link type counts, [(other end,
    links to it)])`` of a host over ``links``, its links in order (memoized)."""
    links = tuple(links)
    hit = _host_memo.get(id(node))
    if hit is not None and hit[0] is node and hit[1] == links:
        return hit[2]
    name = node.name
    bw = 0.0
    counts: Dict[str, int] = {}
    others: Dict[str, int] = {}
    for lk in links:
        if lk.bw > bw:
            bw = lk.bw
        for t in _iface_types(lk.types):
            counts[t] = counts.get(t, 0) + 1
        other = lk.b if lk.a == name else lk.a
        others[other] = others.get(other, 0) + 1
    facts = (len(links), bw, MappingProxyType(counts), tuple(others.items()))
    if len(_host_memo) >= NODE_FACTS_SIZE:
        _host_memo.clear()
    _host_memo[id(node)] = (node, links, facts)
    return facts


def _switch_paths(tgroups: Dict[Tuple[int, int], int], ns: int) -> tuple:
    """Fewest-hop paths between the ``ns`` switches (BFS from each, ties by switch index)
    over the trunk groups ``tgroups`` (switch pair -> group): ``(paths, hops)``, the groups
    of each path by ``(s, t)`` and the matrix of their lengths (-1: no path)."""
    adj: List[List[Tuple[int, int]]] = [[] for _ in range(ns)]
    for (s1, s2), g in sorted(tgroups.items()):
        adj[s1].append((s2, g))
        adj[s2].append((s1, g))
    paths: Dict[Tuple[int, int], List[int]] = {}
    for s in _polled(range(ns), 16):  # a BFS each
        prev: Dict[int, Tuple[int, int]] = {s: (-1, -1)}
        q = deque([s])
        while q:
            u = q.popleft()
            for w, g in adj[u]:
                if w not in prev:
                    prev[w] = (u, g)
                    q.append(w)
        for t in prev:
            if t == s:
                continue
            hops = []
            u = t
            while u != s:
                u, g = prev[u][0], prev[u][1]
                hops.append(g)
            paths[(s, t)] = hops[::-1]
    hop = np.full((max(ns, 1), max(ns, 1)), -1, dtype=np.int64)
    for s in range(ns):
        hop[s, s] = 0
    for (s, t), hp in paths.items():
        hop[s, t] = len(hp)
    return paths, hop


def _testbed_part(ptop: PhysicalTopology) -> dict:
    """What depends on the testbed only (computed once per PhysicalTopology, kept beside it
    by :func:`coalloc._shared.caches.cache_of`, never written onto it)."""
    cached = cache_of(ptop).get("tables")
    if cached is not None:
        return cached
    pnames = list(ptop.nodes)
    pidx = {n: i for i, n in enumerate(pnames)}
    switches = [n for n in pnames if ptop.nodes[n].is_switch]
    sidx = {n: i for i, n in enumerate(switches)}
    npn, ns = len(pnames), len(switches)
    # (the loops below work on Python lists, made arrays at the end: one element of a NumPy
    # array costs several times a list's to read or write from Python)
    is_sw = [ptop.nodes[n].is_switch for n in pnames]
    pis_switch = np.array(is_sw, dtype=bool)
    ifaces = [0] * npn
    ifbw = [0.0] * npn
    iface_types: List[Mapping[str, int]] = [_NO_TYPES] * npn
    tgroups: Dict[Tuple[int, int], int] = {}
    tcap: List[float] = []
    tlinks: List[List[str]] = []
    direct: Dict[Tuple[int, int], List[str]] = defaultdict(list)
    for lk in _polled(ptop.links.values(), 4 * POLL_EVERY):  # trunks and host links, in order
        a_sw, b_sw = lk.a in sidx, lk.b in sidx
        if a_sw and b_sw:
            key = (min(sidx[lk.a], sidx[lk.b]), max(sidx[lk.a], sidx[lk.b]))
            if key not in tgroups:
                tgroups[key] = len(tcap)
                tcap.append(0.0)
                tlinks.append([])
            tcap[tgroups[key]] += lk.bw
            tlinks[tgroups[key]].append(lk.name)
        elif not a_sw and not b_sw:
            a, b = pidx[lk.a], pidx[lk.b]
            direct[(min(a, b), max(a, b))].append(lk.name)
    # each host's interfaces: its links in the links' order (as ``ptop.interfaces``)
    adjacency = getattr(ptop, ptop.ADJ)
    home = [-1] * npn
    for p, (name, node) in enumerate(_polled(ptop.nodes.items())):
        if is_sw[p]:
            home[p] = sidx[name]
            ifbw[p] = BIG
            continue
        ifaces[p], bw, iface_types[p], others = _host_facts(node, adjacency[name])
        ifbw[p] = bw
        best = None  # the switch holding most of its interfaces (ties: the lowest index)
        for other, count in others:
            s = sidx.get(other)
            if s is not None and (best is None or (count, -s) > best):
                best = (count, -s)
        if best is not None:
            home[p] = -best[1]
    pswitch = np.array(home, dtype=np.int64)
    pifaces = np.array(ifaces, dtype=np.int64)
    pifbw = np.array(ifbw, dtype=float)
    paths, hop = _switch_paths(tgroups, ns)
    type_names: Dict[str, int] = {}
    for p in ptop.nodes.values():
        for t in list(p.types) + list(p.static):
            type_names.setdefault(t, len(type_names))
    nty = len(type_names)
    tn_key = tuple(type_names)
    rows = [_type_rows(p, tn_key, type_names) for p in _polled(ptop.nodes.values())]
    cap = np.array([r[0] for r in rows], dtype=float).reshape(npn, nty)
    tweight = np.array([r[1] for r in rows], dtype=float).reshape(npn, nty)
    static = np.array([r[2] for r in rows], dtype=bool).reshape(npn, nty)
    sigs = []
    direct_nodes = {i for pair in direct for i in pair}
    facts = [_facts_of(p) for p in _polled(ptop.nodes.values())]
    for i, p in enumerate(_polled(ptop.nodes.values())):
        if is_sw[i] or i in direct_nodes or p.flags:
            sigs.append(("own", i))
        else:
            f = facts[i]
            sigs.append((f[0], f[1], f[2], home[i], ifaces[i], float(ifbw[i]),
                         tuple(sorted(iface_types[i].items()))))  # fmt: skip
    kinds = [f[3] for f in facts]
    sig_ids: Dict[tuple, int] = {}
    sig_id = np.array([sig_ids.setdefault(sg, len(sig_ids)) for sg in sigs], dtype=np.int64)
    # the first physical node of each signature (its representative, as a pclass's first)
    _u, sig_rep = np.unique(sig_id, return_index=True)
    cached = {
        "pnames": pnames, "pidx": pidx, "switches": switches, "sidx": sidx,
        "pswitch": pswitch, "pifaces": pifaces, "pifbw": pifbw, "pis_switch": pis_switch,
        "iface_types": iface_types, "direct": dict(direct), "tgroups": tgroups,
        "tcap": tcap, "tlinks": tlinks, "paths": paths, "hops": hop,
        "type_names": type_names, "cap": cap, "tweight": tweight, "static": static,
        "sigs": sigs, "kinds": kinds,
        "sig_id": sig_id, "sig_rep": sig_rep.astype(np.int64), "cand_memo": {}, "pclasses": {},
        "local_weight": [f[4] for f in facts],
        "additive": {k for kd in kinds for k, kind in kd.items() if kind == "additive"},
        "feature_count": [f[5] for f in facts],
    }  # fmt: skip
    for arr in (pswitch, pifaces, pifbw, pis_switch, hop, cap, tweight, static):
        arr.flags.writeable = False
    cache_of(ptop)["tables"] = cached
    return cached


def _tables_packed(tables: dict) -> dict:
    """:func:`_testbed_part`'s tables as they pickle (a batch ships them with the testbed,
    issue 41): the read-only interface-type mappings as dicts (one per mapping: those the
    hosts share stay shared), the memos the solves fill left out (each worker its own)."""
    plain: Dict[int, dict] = {}
    out = {k: v for k, v in tables.items() if k not in ("cand_memo", "pclasses")}
    out["iface_types"] = [plain.setdefault(id(m), dict(m)) for m in tables["iface_types"]]
    return out


def _tables_unpacked(packed: dict) -> dict:
    """The tables :func:`_tables_packed` made, as :func:`_testbed_part` builds them."""
    proxies: Dict[int, Mapping[str, int]] = {}
    out = dict(packed)
    out["iface_types"] = [proxies.setdefault(id(d), MappingProxyType(d) if d else _NO_TYPES)
                          for d in packed["iface_types"]]  # fmt: skip
    out["cand_memo"], out["pclasses"] = {}, {}
    return out


@filled
def build_problem(top: VirtualTopology, ptop: PhysicalTopology,
                  available: Optional[set] = None,
                  trunk_used: Optional[Dict[str, float]] = None) -> Problem:  # fmt: skip
    """Compile ``(top, ptop)``; ``available`` restricts the physical nodes usable.

    The testbed part (interfaces, switch paths, pclass signatures) is computed once per
    :class:`PhysicalTopology` object and cached on it.

    Parameters
    ----------
    %(testbed_topologies)s
    available : set of str, optional
        Names of the physical nodes that may be used (switches are always usable).
    trunk_used : dict of str to float, optional
        Bandwidth already in use on trunks (by other experiments).

    Returns
    -------
    Problem
        The arrays the solvers take.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> problem = tb.build_problem(top, ptop)
    >>> problem.nv, problem.vnames
    (2, ['x', 'y'])
    """
    with _collection_deferred():
        return _build(top, ptop, available, trunk_used)


@contextlib.contextmanager
def _collection_deferred():
    """Under a deadline (a time limit's or a batch's scope), Python's cyclic garbage
    collector is paused while the problem is built, and resumed after.

    The build allocates tens of thousands of containers (no cycles among them); in a fresh
    process that has just read a large testbed, they trigger a full collection of the whole
    heap inside the build: 117-127 ms at a load of 8 for 2,000 PCs (measured with
    ``gc.callbacks``), all of it past a 0.05 s deadline, and no poll can interrupt it. The
    collection still happens, at the collector's next trigger after the build. Nothing is
    changed without a deadline, or when the collector was already off (another thread's
    build, or the caller's choice: never turned on here).
    """
    if interrupt.deadline_ns() < 0 or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _build(top: VirtualTopology, ptop: PhysicalTopology, available: Optional[set],
           trunk_used: Optional[Dict[str, float]]) -> Problem:  # fmt: skip
    """:func:`build_problem`'s work: the steps below, in this order (each polls the deadline
    in its long loops, as :func:`_polled` says)."""
    b = _Build(top, ptop, _testbed_part(ptop))
    _testbed_fields(b, trunk_used)
    _virtual_nodes(b)
    _types(b)
    _additive(b)
    _pclasses(b, available)
    _virtual_links(b)
    _vclasses(b)
    _candidates(b)
    _hints(b)
    return b.pr


class _Build:
    """What the steps of one build share: the problem ``pr`` they fill, ``top``, ``ptop``,
    the testbed's tables ``T``, and what a step derives for later ones: the virtual nodes
    and the first node of each virtual type (:func:`_virtual_nodes`), the type ids each
    virtual type may act as, as a list and a tuple (:func:`_types`), the additive columns
    and their key (:func:`_additive`), this call's pclass signatures and the memo of rows
    taken at them (:func:`_pclasses`). One object, not a record per step: a build is 70 us
    for a 20-node experiment, and six records cost 4 us of it."""

    __slots__ = ("pr", "top", "ptop", "T", "vnodes", "first_of", "allowed_of", "allowed_key",
                 "aidx", "add_key", "sig_of_pc", "projected")  # fmt: skip

    def __init__(self, top: VirtualTopology, ptop: PhysicalTopology, T: dict) -> None:
        self.pr, self.top, self.ptop, self.T = Problem(top, ptop), top, ptop, T


class _LinkNeeds(NamedTuple):
    """What each virtual node's non-emulated links ask of a physical node: ``need_if``
    (interfaces, for the non-trivial links), ``max_bw`` (the widest bandwidth) and
    ``types`` (node -> link type -> count; nodes without typed links absent)."""

    need_if: List[int]
    max_bw: List[float]
    types: Dict[int, Dict[str, int]]


class _Groups(NamedTuple):
    """The virtual nodes by signature (a node's filters depend on its signature only):
    ``gid`` (each node's group), each group's ``first`` node, ``sig`` and ``full`` (its
    testbed-wide filter rows from the memo; None for a fixed node's group)."""

    gid: List[int]
    first: List[int]
    sig: List[tuple]
    full: List[Optional[tuple]]


def _testbed_fields(b: _Build, trunk_used: Optional[Dict[str, float]]) -> None:
    """The testbed's tables on the problem; each trunk group's capacity less ``trunk_used``
    (the bandwidth other experiments hold on its trunks)."""
    pr, T = b.pr, b.T
    pr.pnames, pr.pidx, pr.switches, pr.sidx = T["pnames"], T["pidx"], T["switches"], T["sidx"]
    pr.pswitch, pr.pifaces, pr.pifbw = T["pswitch"], T["pifaces"], T["pifbw"]
    pr.pis_switch = T["pis_switch"]
    pr.direct, pr.tlinks, pr.tgroups = T["direct"], T["tlinks"], T["tgroups"]
    pr.paths, pr.hops = T["paths"], T["hops"]
    tcap = list(T["tcap"])
    pr.trunk_used = dict(trunk_used or {})
    if pr.trunk_used:
        for g, names in enumerate(pr.tlinks):
            tcap[g] -= sum(pr.trunk_used.get(n, 0.0) for n in names)
    pr.tcap = np.array(tcap, dtype=float)


def _virtual_nodes(b: _Build) -> None:
    """The experiment's nodes, their indices and the first node of each virtual type."""
    top = b.top
    vnames = list(top.nodes)
    vnodes = list(top.nodes.values())
    vidx = dict(zip(vnames, range(len(vnames))))
    b.pr.vnames, b.pr.vidx, b.vnodes = vnames, vidx, vnodes
    first_of: Dict[str, str] = {}
    for v, node in zip(vnames, vnodes):
        first_of.setdefault(node.type, v)
    b.first_of = first_of


def _types(b: _Build) -> None:
    """The type tables: the testbed's types, then any only the experiment names (no physical
    node offers them: a zero column of slots), and their limits."""
    pr, T, top = b.pr, b.T, b.top
    type_names = dict(T["type_names"])
    # one entry per distinct virtual type (first seen first): its allowed physical types
    allowed_names = {t: top.allowed_types(v) for t, v in b.first_of.items()}
    for names in allowed_names.values():
        for t in names:
            type_names.setdefault(t, len(type_names))
    cap, static, tweight = T["cap"], T["static"], T["tweight"]
    if len(type_names) > cap.shape[1]:
        npn, extra = len(T["pnames"]), len(type_names) - cap.shape[1]
        cap = np.hstack([cap, np.zeros((npn, extra))])
        tweight = np.hstack([tweight, np.zeros((npn, extra))])
        static = np.hstack([static, np.zeros((npn, extra), dtype=bool)])
    pr.type_names = list(type_names)
    pr.cap, pr.static, pr.tweight = cap, static, tweight
    pr.tlimit = np.array([b.ptop.type_limits.get(t, -1) for t in type_names], dtype=np.int64)
    allowed_of = {t: [type_names[a] for a in names] for t, names in allowed_names.items()}
    b.allowed_of, b.allowed_key = allowed_of, {t: tuple(ids) for t, ids in allowed_of.items()}


def _additive(b: _Build) -> None:
    """The additive features: the physical nodes' amounts (cached on the testbed per list
    of names) and the virtual nodes' demands."""
    pr, T, ptop, vnodes = b.pr, b.T, b.ptop, b.vnodes
    wishing = [i for i, node in enumerate(vnodes) if node.desires]
    names = set(T["additive"])
    for i in wishing:
        for k in vnodes[i].desires:
            if k.startswith("?+"):
                names.add(k)
    add = sorted(names)
    aidx = {k: i for i, k in enumerate(add)}
    key = tuple(add)
    pcache = T.setdefault("padd", {})
    if key not in pcache:
        pnames = T["pnames"]
        padd = np.zeros((len(pnames), len(add)))
        for i, n in enumerate(_polled(pnames)):
            for k, w in ptop.nodes[n].features.items():
                if k in aidx:
                    padd[i, aidx[k]] = w
        pcache[key] = padd
    vadd = np.zeros((len(vnodes), len(add)))
    for i in wishing:
        for k, w in vnodes[i].desires.items():
            if k in aidx:
                vadd[i, aidx[k]] = w
    pr.add_names, pr.padd, pr.vadd = add, pcache[key], vadd
    b.aidx, b.add_key = aidx, key


def _pclasses(b: _Build, available: Optional[set]) -> None:
    """The pclasses over the usable physical nodes (switches always usable), cached on the
    testbed per usable set."""
    pr, T = b.pr, b.T
    if available is None:
        usable_key = None
    else:
        mask = pr.pis_switch.copy()
        mask[[i for i in map(pr.pidx.get, available) if i is not None]] = True
        usable_key = mask.tobytes()
    pcl_cache = T["pclasses"]
    hit = pcl_cache.get(usable_key)
    if hit is None:
        npn = len(T["pnames"])
        usable = np.arange(npn) if usable_key is None else np.flatnonzero(mask)
        if len(pcl_cache) >= 64:  # bounded: the simulator's free sets change all the time
            pcl_cache.clear()
        hit = pcl_cache[usable_key] = _partition(T, usable)
    b.sig_of_pc, pr.pclass, members, pr.crep, pr.cswitch, b.projected = hit
    pr.members = list(members)


def _partition(T: dict, usable: np.ndarray) -> tuple:
    """``usable`` by testbed signature, numbered in order of first member: ``(signature of
    each pclass, pclass of each physical node (-1: unusable), members, first members, their
    home switches, {})`` (the last: the memo rows of node signatures taken at these
    pclasses, filled by :func:`_projected_rows`), read-only."""
    sig_id = T["sig_id"]
    npn = len(sig_id)
    ids = sig_id[usable]
    uniq, first = np.unique(ids, return_index=True)
    uniq = uniq[np.argsort(first, kind="stable")]
    remap = np.full(int(sig_id.max()) + 1 if npn else 1, -1, dtype=np.int64)
    remap[uniq] = np.arange(len(uniq))
    pclass = np.full(npn, -1, dtype=np.int64)
    pclass[usable] = remap[ids]
    order = np.argsort(pclass[usable], kind="stable")
    srt = usable[order]
    bounds = np.searchsorted(pclass[srt], np.arange(len(uniq) + 1))
    members = [srt[bounds[c] : bounds[c + 1]] for c in range(len(uniq))]
    crep = np.array([m[0] for m in members], dtype=np.int64)
    cswitch = T["pswitch"][crep] if len(members) else np.zeros(0, dtype=np.int64)
    for arr in [uniq, pclass, crep, cswitch, *members]:
        arr.flags.writeable = False
    return uniq, pclass, members, crep, cswitch, {}


def _virtual_links(b: _Build) -> None:
    """The virtual links as arrays (keyed by the links' names) and each node's links."""
    pr, top = b.pr, b.top
    vidx = pr.vidx
    pr.link_names = list(top.links)
    ends_a, ends_b, bws, flags, ltypes = (
        zip(*map(attrgetter("a", "b", "bw", "flags", "type"), top.links.values()))
        if top.links else ((), (), (), (), ())
    )  # fmt: skip
    la_l = list(map(vidx.__getitem__, ends_a))
    lb_l = list(map(vidx.__getitem__, ends_b))
    pr.la = np.array(la_l, dtype=np.int64)
    pr.lb = np.array(lb_l, dtype=np.int64)
    pr.lbw = np.array([-1.0 if bw is None else bw for bw in bws])
    # (the VLink properties trivial_ok and emulated)
    pr.ltriv = np.array(["trivial_ok" in f for f in flags], dtype=bool)
    pr.lemu = np.array(["emulated" in f for f in flags], dtype=bool)
    pr.ltype = list(ltypes)
    inc: List[List[int]] = [[] for _ in pr.vnames]
    for e, a in enumerate(la_l):
        inc[a].append(e)
        inc[lb_l[e]].append(e)
    pr.inc = inc


def _vclasses(b: _Build) -> None:
    """Each virtual node's vclass (-1: none), the vclasses' weights and names, and slots."""
    pr, top = b.pr, b.top
    vcl_names = list(top.vclasses)
    vclass_of = {t: vcl_names.index(t) if t in top.vclasses else -1 for t in b.first_of}
    pr.vclass = np.array([vclass_of[node.type] for node in b.vnodes], dtype=np.int64)
    pr.vclass_w = np.array([top.vclasses[c][0] for c in vcl_names])
    pr.vclass_names = vcl_names
    pr.vslots = np.array([node.slots for node in b.vnodes])


class _Filters:
    """The filters of one virtual-node signature over the representatives ``reps`` of some
    physical-node classes: the pclasses of this call, or every signature of the testbed
    (cached on it per additive-feature list: a pclass is one signature, so its row is the
    signature's row taken at the pclasses' signature ids)."""

    __slots__ = ("pr", "nodes", "iface_types", "kinds_of", "lw", "aidx", "sig_rep")

    def __init__(self, b: _Build) -> None:
        T = b.T
        self.pr, self.nodes, self.aidx = b.pr, b.ptop.nodes, b.aidx
        self.iface_types, self.kinds_of, self.lw = T["iface_types"], T["kinds"], T["local_weight"]
        self.sig_rep = T["sig_rep"]  # the testbed's signatures' representatives

    def __call__(self, node, allowed, need_if, need_types, max_bw, fixp, reps) -> tuple:
        """``(good, feature cost, type id, static)`` rows over ``reps`` and the masks that
        :meth:`reason` reads."""
        pr, pnodes, pnames = self.pr, self.nodes, self.pr.pnames
        static, iface_types, kinds_of, lw = pr.static, self.iface_types, self.kinds_of, self.lw
        nr = len(reps)
        capR, paddR = pr.cap[reps], pr.padd[reps]
        swR, pifR, pifbwR = pr.pis_switch[reps], pr.pifaces[reps], pr.pifbw[reps]
        reps = reps.tolist()
        hard = [k for k, w in node.desires.items() if w >= HARD_WEIGHT and
                not k.startswith("?+")]  # fmt: skip
        soft = [(k, w) for k, w in node.desires.items() if w < HARD_WEIGHT and
                not k.startswith("?+")]  # fmt: skip
        capa = capR[:, allowed]
        okt = (capa >= node.slots) & (capa > 0)
        m_type = okt.any(axis=1)
        if fixp is not None:
            m_fix = np.zeros(nr, dtype=bool)
            pclass = pr.pclass
            if pclass[pr.pidx[fixp]] >= 0:
                m_fix[pclass[pr.pidx[fixp]]] = True
        else:
            m_fix = np.ones(nr, dtype=bool)
        m_add = ((self.vadd_row(node) > paddR + 1e-9).any(axis=1) if len(pr.add_names)
                 else np.zeros(nr, dtype=bool))  # fmt: skip
        m_feat = np.zeros(nr, dtype=bool)
        if hard:
            for c in range(nr):
                feats = pnodes[pnames[reps[c]]].features
                m_feat[c] = any(k not in feats for k in hard)
        m_if = ~swR & (need_if > pifR)
        m_bw = ~swR & (max_bw > pifbwR)
        m_lt = np.zeros(nr, dtype=bool)
        if need_types:
            for c in range(nr):
                r = reps[c]
                m_lt[c] = not swR[c] and any(
                    iface_types[r].get(t, 0) < n for t, n in need_types.items()
                )
        good = m_fix & m_type & ~m_feat & ~m_add & ~m_lt & ~m_if & ~m_bw
        frow = np.zeros(nr)
        trow = np.full(nr, -1, dtype=np.int64)
        srow = np.zeros(nr, dtype=bool)
        for c in np.flatnonzero(good).tolist():
            r = reps[c]
            row = okt[c]
            t_ok = [allowed[j] for j in range(len(allowed)) if row[j]]
            t_ok.sort(key=lambda t: (static[r, t], allowed.index(t)))
            if node.desires:
                feats = pnodes[pnames[r]].features
                kinds = kinds_of[r]
                cost = 0.0
                for k, w in soft:
                    if k not in feats:
                        cost += w
                for k, w in feats.items():
                    if kinds[k] == "local" and k not in node.desires:
                        cost += w
            else:
                cost = lw[r]
            frow[c] = cost
            trow[c] = t_ok[0]
            srow[c] = static[r, t_ok[0]]
        masks = (hard, capR, paddR, m_type, m_fix, m_add, m_feat, m_if, m_lt, m_bw)
        return good, frow, trow, srow, masks

    def vadd_row(self, node) -> np.ndarray:
        """The additive demands of ``node``, a row of the additive columns."""
        aidx = self.aidx
        row = np.zeros(len(self.pr.add_names))
        for k, w in node.desires.items():
            if k in aidx:
                row[aidx[k]] = w
        return row

    def reason(self, node, masks) -> str:
        """Why ``node`` has no candidate pclass (the masks of a filter over the pclasses'
        representatives): the reasons met, sorted, comma-separated."""
        hard, capR, paddR, m_type, m_fix, m_add, m_feat, m_if, m_lt, m_bw = masks
        reasons = set()
        for c in np.flatnonzero(m_fix):
            if not m_type[c]:
                reasons.add("type")
            elif m_feat[c]:
                feats = self.nodes[self.pr.pnames[int(self.pr.crep[c])]].features
                reasons.add("feature:" + next(k for k in hard if k not in feats))
            elif m_add[c]:
                over = self.vadd_row(node) - paddR[c]
                reasons.add("additive:" + self.pr.add_names[int(np.argmax(over))])
            elif m_if[c]:
                reasons.add("interfaces")
            elif m_lt[c]:
                reasons.add("link_type")
            elif m_bw[c]:
                reasons.add("bandwidth")
        return ",".join(sorted(reasons))


def _link_needs(pr: Problem) -> _LinkNeeds:
    """The link part of each virtual node's signature, vectorised over the links."""
    nv = len(pr.vnames)
    wired = ~pr.lemu
    ends = np.concatenate([pr.la[wired], pr.lb[wired]])
    solid = np.concatenate([~pr.ltriv[wired]] * 2)
    need_if_l = np.bincount(ends[solid], minlength=nv).tolist()
    max_bw_a = np.zeros(nv)
    np.maximum.at(max_bw_a, ends, np.concatenate([pr.lbw[wired]] * 2))
    need_types_of: Dict[int, Dict[str, int]] = {}
    for e, lt in enumerate(pr.ltype):
        if lt and wired[e]:
            for u in (int(pr.la[e]), int(pr.lb[e])):
                d = need_types_of.setdefault(u, {})
                d[lt] = d.get(lt, 0) + 1
    return _LinkNeeds(need_if=need_if_l, max_bw=max_bw_a.tolist(), types=need_types_of)


def _candidates(b: _Build) -> None:
    """Each virtual node's candidate pclasses (or why it has none), feature costs, type ids
    and static flags: once per distinct virtual-node signature."""
    pr, T = b.pr, b.T
    filters = _Filters(b)
    needs = _link_needs(pr)
    memo_all = T["cand_memo"]
    if len(memo_all) > 64:
        memo_all.clear()
    memo = memo_all.setdefault(b.add_key, {})
    if len(memo) > 20000:  # bounded: signatures of nodes seen on this testbed
        memo.clear()
    groups = _group_nodes(b, needs, filters, memo)
    g_cand, frows, trows, srows = _projected_rows(b, groups)
    g_why = _filter_rest(b, needs, filters, groups, (g_cand, frows, trows, srows))
    gid = groups.gid
    pr.cand = [list(g_cand[g]) for g in gid]
    pr.cand_why = [g_why[g] for g in gid]
    if len(pr.vnames):
        rows = np.array(gid, dtype=np.int64)
        pr.fcost, pr.vtype, pr.vstatic = frows[rows], trows[rows], srows[rows]
    else:
        pr.fcost, pr.vtype, pr.vstatic = frows, trows, srows  # (0, nc)
    pr.pfeature_count = np.array([T["feature_count"][r] for r in pr.crep.tolist()], dtype=float)


def _group_nodes(b: _Build, needs: _LinkNeeds, filters: _Filters, memo: dict) -> _Groups:
    """The virtual nodes by signature, each new unfixed signature's testbed-wide filter rows
    from ``memo`` (filtered over every testbed signature on a miss); the fix-node table
    resolved into ``pr.fixed`` (ValueError naming a node fixed to an unknown one)."""
    pr = b.pr
    vnames, pidx = pr.vnames, pr.pidx
    allowed_of, allowed_key = b.allowed_of, b.allowed_key
    need_if_l, max_bw_l, need_types_of = needs.need_if, needs.max_bw, needs.types
    sig_rep = filters.sig_rep
    fixed = np.full(len(vnames), -1, dtype=np.int64)
    fixed_tbl = pr.top.fixed
    group_of: Dict[tuple, int] = {}
    gid: List[int] = []
    g_first: List[int] = []
    g_sig: List[tuple] = []
    g_full: List[Optional[tuple]] = []
    for i, node in enumerate(_polled(b.vnodes)):
        need_types = need_types_of.get(i)
        fixp = fixed_tbl.get(vnames[i]) if fixed_tbl else None
        if fixp is not None:
            if fixp not in pidx:
                raise ValueError(f"fix-node {vnames[i]} names unknown physical node {fixp!r}")
            fixed[i] = pidx[fixp]
        desires = node.desires
        sig = (allowed_key[node.type], node.slots,
               tuple(sorted(desires.items())) if desires else (), fixp, need_if_l[i],
               tuple(sorted(need_types.items())) if need_types else (), max_bw_l[i])  # fmt: skip
        g = group_of.get(sig)
        if g is None:
            g = group_of[sig] = len(g_first)
            g_first.append(i)
            g_sig.append(sig)
            full = None
            if fixp is None:
                full = memo.get(sig)
                if full is None:
                    full = memo[sig] = filters(node, allowed_of[node.type], need_if_l[i],
                                               need_types or {}, max_bw_l[i], None,
                                               sig_rep)[:4]  # fmt: skip
            g_full.append(full)
        gid.append(g)
    pr.fixed = fixed
    return _Groups(gid=gid, first=g_first, sig=g_sig, full=g_full)


def _projected_rows(b: _Build, groups: _Groups) -> tuple:
    """``(candidates, feature costs, type ids, static flags)`` of each group over this call's
    pclasses: the testbed-wide rows taken at the pclasses' signatures (memoized with the
    pclasses); a fixed node's group is left empty (zero, -1, False) for :func:`_filter_rest`."""
    ng, nc, projected = len(groups.first), len(b.pr.members), b.projected
    g_full, g_sig, sig_of_pc, key = groups.full, groups.sig, b.sig_of_pc, b.add_key
    g_cand: List[List[int]] = [[] for _ in range(ng)]
    from_memo = [g for g in range(ng) if g_full[g] is not None]
    nm = len(from_memo)
    if len(projected) > 20000:  # bounded: signatures seen with this set of pclasses
        projected.clear()
    rows_of = []
    for g in from_memo:
        pkey = (key, g_sig[g])
        ent = projected.get(pkey)
        if ent is None:
            full = g_full[g]
            ent = projected[pkey] = (np.flatnonzero(full[0][sig_of_pc]).tolist(),
                                     full[1][sig_of_pc], full[2][sig_of_pc],
                                     full[3][sig_of_pc])  # fmt: skip
        g_cand[g] = ent[0]
        rows_of.append(ent)
    if nm == ng and ng:  # the usual case: no fixed node
        frows, trows, srows = _stacked(rows_of, 1, nc), _stacked(rows_of, 2, nc), _stacked(
            rows_of, 3, nc)
    else:
        frows = np.zeros((ng, nc))
        trows = np.full((ng, nc), -1, dtype=np.int64)
        srows = np.zeros((ng, nc), dtype=bool)
        if nm:
            frows[from_memo], trows[from_memo], srows[from_memo] = (
                _stacked(rows_of, 1, nc), _stacked(rows_of, 2, nc), _stacked(rows_of, 3, nc))
    return g_cand, frows, trows, srows


def _stacked(rows_of: list, j: int, nc: int) -> np.ndarray:
    """Field ``j`` of the memo groups' rows ``rows_of``, one row of ``nc`` each."""
    return np.concatenate([ent[j] for ent in rows_of]).reshape(len(rows_of), nc)


def _filter_rest(b: _Build, needs: _LinkNeeds, filters: _Filters, groups: _Groups,
                 rows: tuple) -> List[str]:  # fmt: skip
    """A filter pass over the pclasses' representatives for each group the memo left
    without candidates (a fixed node's, or one that has none: to say why), written into
    ``rows`` (:func:`_projected_rows`'); each group's reason for having none ("": some)."""
    g_cand, frows, trows, srows = rows
    g_full, g_first = groups.full, groups.first
    pr = b.pr
    vnodes, vnames, fixed_tbl, allowed_of = b.vnodes, pr.vnames, b.top.fixed, b.allowed_of
    ng = len(g_first)
    g_why = [""] * ng
    for g in _polled(range(ng), 16):  # a filter pass over the pclasses each
        if g_full[g] is not None and g_cand[g]:
            continue
        i = g_first[g]
        node = vnodes[i]
        need_types = needs.types.get(i) or {}
        good_g, frow, trow, srow, masks = filters(node, allowed_of[node.type],
                                                  needs.need_if[i], need_types,
                                                  needs.max_bw[i], fixed_tbl.get(vnames[i]),
                                                  pr.crep)  # fmt: skip
        g_cand[g] = np.flatnonzero(good_g).tolist()
        frows[g], trows[g], srows[g] = frow, trow, srow
        if not g_cand[g]:
            g_why[g] = filters.reason(node, masks)
    return g_why


def _hints(b: _Build) -> None:
    """Each virtual node's hinted physical node (-1: none, or not in the testbed)."""
    pr, top = b.pr, b.top
    if top.hints:
        pidx = pr.pidx
        pr.hint = np.array([pidx.get(top.hints.get(v, ""), -1) for v in pr.vnames],
                           dtype=np.int64)  # fmt: skip
    else:
        pr.hint = np.full(len(pr.vnames), -1, dtype=np.int64)


def link_bw(pr: Problem, e: int, pa: int, pb: int) -> float:
    """Bandwidth of virtual link ``e`` when its ends sit on ``pa`` and ``pb``."""
    bw = pr.lbw[e]
    if bw >= 0:
        return float(bw)
    m = min(pr.pifbw[pa], pr.pifbw[pb])
    return float(m) if m < BIG else NATIVE_BW


def is_inf(x: float) -> bool:
    return math.isinf(x) or x >= BIG
