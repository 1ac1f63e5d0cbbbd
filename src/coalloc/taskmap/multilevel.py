"""Multilevel bottleneck mapping: the family's default method (issue 26).

:func:`map_multilevel` minimises the maximum occupancy (over processors and links) of a
mapping of a :class:`~coalloc.taskmap.TaskGraph` onto a
:class:`~coalloc.taskmap.ResourceGraph`:

1. **Coarsening.** Heavy-edge matching (tasks visited in a seeded random order, each
   matched with the unmatched neighbour it exchanges most with, under a weight cap)
   contracts the task graph level by level until it has about ``coarse_factor x`` as many
   vertices as there are processors. A stream inside a coarse vertex stays on one
   processor, so a coarse mapping has exactly the loads of its projection.
2. **Initial mapping by recursive bisection along the resource hierarchy.** Processors
   are listed depth-first from the centre of the resource graph, heavier subtrees first
   (:func:`hierarchy_order`), so that every prefix and every block of the list is a compact
   part of the machine. A block is split where two consecutive processors are farthest
   apart (the slowest links between them), and the tasks are split in proportion to the
   two halves' shares by graph growing (gain: volume to the grown side minus volume to the
   rest) followed by Fiduccia-Mattheyses passes; across links slower than the fastest ones
   three growing seeds (the ends of a pseudo-diameter and the task farthest from both) and
   a spectral split (Fiedler vector) are tried and the smallest cut kept. A processor's
   share is ``capacity ** alpha`` for each ``alpha`` of ``speed_exponents``: 1 balances
   compute, 0 cuts the task graph into equal parts (lighter on the links).
3. **Which processors.** The bisection runs on the coarsest graph for nested prefixes of
   the processor list (all, half, a quarter, ..., one: the bottleneck objective may prefer
   fewer processors when links are slow) and each ``alpha``; the ``keep`` starts of lowest
   maximum occupancy go on. The best two and every start on all processors are also
   bisected again on the finest graph.
4. **Refinement at every level** (coarsest to finest): greedy k-way moves of boundary tasks
   that lower the route cost of the streams (volume x sum of ``1 / bandwidth`` over the
   route) within the balance, then moves off the current bottleneck -- the processor or link
   of highest occupancy -- each move the one that leaves every resource it loads more below
   the current maximum and lowers the bottleneck most (candidates: the tasks on the
   processor, or the tasks whose streams cross the link; destinations: the processors of
   the task's neighbours, the least occupied processors and the processors next to it in
   the list). Every accepted move lowers the number of resources at the maximum, or the
   maximum itself, so the loop ends; it stops when the bottleneck has no such move. Moves
   are evaluated for all candidates at once (vectorised), with incremental node and link
   loads.

Compiled (``coalloc.taskmap._multilevel``; twins in
``coalloc.taskmap._reference.multilevel``): the routes between processors as one CSR, the
one-seed bisections whole, growing + FM of the other tries, and the scores of the moves.
Above 6,000 tasks the fine re-bisections take one seed and no spectral split, and at most
``max(2, 24000 / tasks)`` of them run.

The objective returned is recomputed from scratch by
:func:`coalloc.taskmap.max_occupancy` (the family's helper).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._shared import interrupt
from .._shared.caches import cache_of
from .._shared.params import offer_incumbent
from .._shared.seeding import check_seed
from . import _multilevel
from .bounds import lower_bound
from .model import ResourceGraph, TaskGraph, max_occupancy, occupancy_graph
from .result import TaskMappingResult
from .routing import route_table

__all__ = ["map_multilevel", "hierarchy_order"]

_TINY = 1e-12
#: How many of the kept starts are also bisected again on the finest graph.
_FINE_STARTS = 2
#: Fine re-bisections of at most this many tasks in all (at least _FINE_STARTS of them),
#: and above this many tasks they take one growing seed and no spectral split: with three
#: seeds and the spectral splits across slow links each costs about a second per thousand
#: tasks on 1,000 processors (10,000 tasks: 29 s instead of 2-5 s).
_FINE_WORK = 24_000


# --------------------------------------------------------------------------------------
# The resource side: processor order and routes between processors (cached per graph)
# --------------------------------------------------------------------------------------


def hierarchy_order(resources: ResourceGraph) -> np.ndarray:
    """Processors depth-first from the centre of the resource graph, heavier subtrees first.

    The walk starts at the node of smallest eccentricity (hops; ties: lowest index) and
    follows a breadth-first spanning tree; the children of a node are visited in decreasing
    total capacity of their subtree (ties: lower index). Every prefix and every block of
    the list is therefore a compact part of the machine (the cores of a node, the nodes of a
    rack stay together), the fastest parts first.

    Parameters
    ----------
    resources : ResourceGraph

    Returns
    -------
    ndarray of int64
        Every processor node index once.

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> res = hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2,
    ...                            speed=(1.0, 2.0), seed=3)
    >>> res.capacity[hierarchy_order(res)].round(2).tolist()
    [1.24, 1.24, 1.09, 1.09]
    """
    return _topology(resources).order_nodes.copy()


class _Topology:
    """Processors in hierarchy order (index 0..P-1), their capacities, routes as CSR."""

    def __init__(self, res: ResourceGraph):
        r = res.n_nodes
        ln = res.links
        adj = sp.csr_matrix(
            (np.ones(2 * ln.shape[0]), (np.r_[ln[:, 0], ln[:, 1]], np.r_[ln[:, 1], ln[:, 0]])),
            shape=(r, r),
        )
        procs = res.processors
        # root: smallest eccentricity (on big graphs: from a sample of processors)
        if r <= 1500:
            ecc = csgraph.shortest_path(adj, unweighted=True, directed=False).max(axis=1)
        else:
            far = csgraph.shortest_path(
                adj, unweighted=True, directed=False, indices=procs[:: max(1, len(procs) // 64)]
            )
            ecc = far.max(axis=0)
        interrupt.check()  # the first call on a resource graph: poll between its steps
        root = int(np.argmin(ecc))
        bfs, pred = csgraph.breadth_first_order(adj, root, directed=False)
        subcap = res.capacity.astype(np.float64).copy()
        for v in bfs[::-1][:-1]:
            subcap[pred[v]] += subcap[v]
        children: dict = {}
        for v in bfs[1:]:
            children.setdefault(int(pred[v]), []).append(int(v))
        order = []
        stack = [root]
        while stack:
            v = stack.pop()
            if res.is_processor[v]:
                order.append(v)
            kids = sorted(children.get(v, ()), key=lambda c: (-subcap[c], c))
            stack.extend(reversed(kids))
        seen = set(order)
        order += [int(p) for p in procs if int(p) not in seen]  # unreachable processors
        self.order_nodes = np.asarray(order, dtype=np.int64)
        node = self.order_nodes
        p = node.shape[0]
        self.P = p
        self.E = res.n_links
        self.cap = res.capacity[node].astype(np.float64)
        self.bw = res.bandwidth.astype(np.float64)
        interrupt.check()
        table = route_table(res)
        interrupt.check()
        self.rptr, self.rlink = _multilevel.pair_routes(
            table.pred, table.pred_link, table.proc_row, node
        )
        self.routes = _multilevel.PairRoutes(self.rptr, self.rlink, self.E)
        lens = np.diff(self.rptr)
        self.hops = lens.reshape(p, p)
        # link -> pairs using it (inverse CSR)
        pair_of = np.repeat(np.arange(p * p, dtype=np.int64), lens)
        # stable: the same order as on int64, by radix sort on small link ids (10x faster)
        small = np.uint16 if self.E < 2**16 else np.uint32 if self.E < 2**32 else np.int64
        by = np.argsort(self.rlink.astype(small), kind="stable")
        self.lptr = np.zeros(self.E + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.rlink, minlength=self.E), out=self.lptr[1:])
        self.lpairs = pair_of[by]
        # route cost: sum of 1 / bandwidth over the route (occupancy added per unit volume)
        inv_bw = 1.0 / self.bw
        self.cost = np.bincount(
            np.repeat(np.arange(p * p), lens), weights=inv_bw[self.rlink], minlength=p * p
        ).reshape(p, p)
        # distance along the list: the slowest link between consecutive processors
        idx = np.arange(max(p - 1, 0))
        self.gap = self.cost[idx, idx + 1].copy()


def _topology(res: ResourceGraph) -> _Topology:
    cache = cache_of(res)
    topo = cache.get("multilevel_topology")
    if topo is None:
        topo = cache.setdefault("multilevel_topology", _Topology(res))
    return topo


# --------------------------------------------------------------------------------------
# Coarsening
# --------------------------------------------------------------------------------------


class _Level:
    """One level: symmetric CSR (pair weights), vertex weights, map to the next coarser."""

    def __init__(self, ip, ix, iw, vw):
        self.ip, self.ix, self.iw, self.vw = ip, ix, iw, vw
        self.n = vw.shape[0]
        self.cmap: Optional[np.ndarray] = None
        self._kern = None

    @property
    def kern(self) -> _multilevel.Level:
        """The compiled view of the CSR (checked once, on first use)."""
        if self._kern is None:
            self._kern = _multilevel.Level(self.ip, self.ix, self.iw)
        return self._kern


def _coarsen(level: _Level, max_w: float, rng: np.random.Generator) -> Optional[_Level]:
    n = level.n
    ip, ix, iw, vw = level.ip, level.ix, level.iw, level.vw
    match = np.full(n, -1, dtype=np.int64)
    for i, v in enumerate(rng.permutation(n).tolist()):
        if not i & 255:
            interrupt.check()  # a time limit or a batch's timeout (about 3 ms apart)
        if match[v] >= 0:
            continue
        lo, hi = ip[v], ip[v + 1]
        best = v
        if hi > lo:
            nb = ix[lo:hi]
            ok = (match[nb] < 0) & (nb != v) & (vw[nb] + vw[v] <= max_w)
            if ok.any():
                w = np.where(ok, iw[lo:hi], -1.0)
                k = int(np.argmax(w))
                best = int(nb[k])
        match[v] = best
        match[best] = v
    rep = np.minimum(np.arange(n), match)
    roots, cmap = np.unique(rep, return_inverse=True)
    nc = roots.shape[0]
    if nc > 0.95 * n:
        return None
    cvw = np.bincount(cmap, weights=vw, minlength=nc)
    rows = np.repeat(np.arange(n), np.diff(ip))
    a = sp.csr_matrix((iw, (cmap[rows], cmap[ix])), shape=(nc, nc))
    a.setdiag(0)
    a.eliminate_zeros()
    a.sort_indices()
    level.cmap = cmap
    return _Level(
        a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data.astype(np.float64), cvw
    )


# --------------------------------------------------------------------------------------
# Initial mapping: recursive bisection along the processor list
# --------------------------------------------------------------------------------------


def _subgraph(level: _Level, verts: np.ndarray) -> tuple:
    """CSR ``(indptr, indices, data)`` of the graph induced by ``verts`` (local ids)."""
    n_loc = verts.shape[0]
    loc = np.full(level.n, -1, dtype=np.int64)
    loc[verts] = np.arange(n_loc)
    ent, own = _expand(level.ip[verts], level.ip[verts + 1] - level.ip[verts])
    nb = loc[level.ix[ent]]
    ok = nb >= 0
    indptr = np.zeros(n_loc + 1, dtype=np.int64)
    np.cumsum(np.bincount(own[ok], minlength=n_loc), out=indptr[1:])
    # rows come in order (own is sorted) and a level's CSR has no duplicate entries
    return indptr, nb[ok], level.iw[ent][ok]


#: Up to this many vertices, hop distances come from a Python breadth-first search (the
#: same distances as SciPy's, without its per-call overhead).
_SMALL_BFS = 128


def _hops(csr: tuple, src: int) -> np.ndarray:
    """Hop distances from ``src`` in the graph of the CSR triple (``-1``: unreachable);
    every stored entry is an edge, as for :func:`scipy.sparse.csgraph.shortest_path`."""
    sip, six, siw = csr
    n = sip.shape[0] - 1
    if n > _SMALL_BFS:
        d = csgraph.shortest_path(
            sp.csr_matrix((siw, six, sip), shape=(n, n)),
            unweighted=True,
            directed=False,
            indices=src,
        )
        d[~np.isfinite(d)] = -1
        return d
    ptr, idx = sip.tolist(), six.tolist()
    dist = [-1] * n
    dist[src] = 0
    frontier = [src]
    while frontier:
        nxt = []
        for v in frontier:
            dv = dist[v] + 1
            for u in idx[ptr[v] : ptr[v + 1]]:
                if dist[u] < 0:
                    dist[u] = dv
                    nxt.append(u)
        frontier = nxt
    return np.asarray(dist, dtype=np.float64)


def _grow(
    level: _Level, verts: np.ndarray, target: float, trials: int = 3, spectral: bool = True
) -> np.ndarray:
    """Boolean mask over ``verts``: a part of weight about ``target`` with a small cut.

    Greedy graph growing from ``trials`` seeds (the two ends of a pseudo-diameter, then the
    task farthest from both) and, across slow links, the spectral split, each followed by
    Fiduccia-Mattheyses passes (the compiled ``grow_fm``, twin
    :func:`coalloc.taskmap._reference.multilevel.grow_fm`); the smallest cut wins (ties: the
    earlier try).
    """
    n_loc = verts.shape[0]
    wloc = level.vw[verts]
    tol = max(float(wloc.max()), 0.02 * float(wloc.sum()))  # balance of the FM passes
    if trials == 1 and not spectral:  # all of it compiled (twin: _reference's bisect_small)
        return _multilevel.bisect_small(level.kern, verts, wloc, target, tol, 4)
    sub = _subgraph(level, verts)
    sip, six, siw = sub
    rows = np.repeat(np.arange(n_loc), np.diff(sip))
    d0 = _hops(sub, 0)
    a = int(np.argmax(d0))
    none = np.zeros(n_loc, dtype=bool)
    da = _hops(sub, a)
    b = int(np.argmax(da))
    seeds = [a, b]
    if trials > 2:
        db = _hops(sub, b)
        both = np.minimum(np.where(da < 0, np.inf, da), np.where(db < 0, np.inf, db))
        both[~np.isfinite(both)] = -1
        seeds.append(int(np.argmax(both)))
    best, best_cut = None, np.inf
    tries = [("grow", s0) for s0 in seeds[:trials]]
    if spectral and n_loc >= 64 and siw.shape[0]:
        tries.append(("spectral", 0))
    for how, s0 in tries:
        interrupt.check()
        start = None
        if how == "spectral":
            start = _spectral(sp.csr_matrix((siw, six, sip), shape=(n_loc, n_loc)), wloc, target)
        if start is None:  # growing (also where the spectral split failed: from task 0)
            inside = _multilevel.grow_fm(sip, six, siw, wloc, target, s0, tol, 4, none)
        else:
            inside = _multilevel.grow_fm(sip, six, siw, wloc, target, -1, tol, 4, start)
        cut = float(siw[inside[rows] != inside[six]].sum())
        if cut < best_cut - 1e-12:
            best, best_cut = inside, cut
    return best


def _spectral(sub: sp.csr_matrix, wloc: np.ndarray, target: float) -> Optional[np.ndarray]:
    """Prefix of weight ``target`` of the tasks sorted by the Fiedler vector.

    ARPACK in shift-invert mode with a fixed
    start vector (deterministic); ``None`` where ARPACK fails (the caller grows from task 0).
    """
    from scipy.sparse.linalg import eigsh

    n = wloc.shape[0]
    deg = np.asarray(sub.sum(axis=1)).ravel()
    lap = (sp.diags(deg) - sub).tocsc()
    try:
        shift = 1e-3 * max(float(deg.mean()), 1e-12)
        v0 = np.cos(np.arange(n) * 0.7548776662466927)  # fixed, not constant
        _, vec = eigsh(lap, k=2, sigma=-shift, which="LM", v0=v0, tol=1e-4, maxiter=200)
        f = vec[:, 1]
    except Exception:  # noqa: BLE001 - an ill-conditioned subgraph: the caller grows instead
        return None
    order = np.argsort(f, kind="stable")
    inside = np.zeros(n, dtype=bool)
    csum = np.cumsum(wloc[order])
    k = int(np.searchsorted(csum - wloc[order] / 2, target))
    inside[order[:k]] = True
    return inside


def _split_point(gap: list, lo: int, hi: int) -> int:
    """Where to split positions ``lo..hi-1`` of a list: the largest ``gap`` (between
    positions ``i - 1`` and ``i``) in the middle half, the one nearest the middle (the
    first of those). Plain Python: it runs once per split, on a few values."""
    k = hi - lo
    a, b = lo + max(1, k // 4), lo + max(1, k - k // 4)
    if b <= a:
        return lo + k // 2
    cand = range(a, b + 1) if b < hi else range(a, b)
    if not cand:
        return lo + k // 2
    top = max(gap[c - 1] for c in cand) * (1 - 1e-9)
    mid = lo + k / 2
    best, best_d = lo + k // 2, float("inf")
    for c in cand:
        if gap[c - 1] >= top and abs(c - mid) < best_d:
            best, best_d = c, abs(c - mid)
    return best


def _bisect_map(
    topo: _Topology,
    level: _Level,
    subset: np.ndarray,
    share: np.ndarray,
    full: bool = True,
) -> np.ndarray:
    """Recursive bisection of ``level`` onto the processors ``subset`` (increasing indices,
    i.e. in hierarchy order); returns the processor index of every vertex.

    ``full``: splits across links slower than the fastest ones get three growing seeds and
    the spectral split; otherwise (and always across the fastest links) one seed.
    """
    fast = float(topo.gap.min()) if topo.gap.shape[0] else 0.0
    gap = topo.cost[subset[:-1], subset[1:]].tolist()
    sh = share[subset]
    m = np.zeros(level.n, dtype=np.int64)
    stack = [(np.arange(level.n), 0, subset.shape[0])]
    while stack:
        interrupt.check()  # a split may take a spectral solve and FM passes: poll each
        verts, lo, hi = stack.pop()
        if hi - lo == 1 or verts.shape[0] == 0:
            m[verts] = subset[lo]
            continue
        if verts.shape[0] == 1:  # one task: the processor of the largest share in the block
            m[verts] = subset[lo + int(np.argmax(sh[lo:hi]))]
            continue
        s = _split_point(gap, lo, hi)
        left_cap, total_cap = sh[lo:s].sum(), sh[lo:hi].sum()
        target = level.vw[verts].sum() * left_cap / total_cap
        slow = full and gap[s - 1] > fast * (1 + 1e-9)
        slow = slow and verts.shape[0] > 8  # a few tasks: one seed and FM suffice
        inside = _grow(level, verts, target, 3 if slow else 1, slow)
        stack.append((verts[~inside], s, hi))
        stack.append((verts[inside], lo, s))
    return m


# --------------------------------------------------------------------------------------
# Refinement: move tasks off the bottleneck
# --------------------------------------------------------------------------------------


def _expand(starts: np.ndarray, lens: np.ndarray) -> tuple:
    """Indices ``starts[i] + 0..lens[i]-1`` concatenated, and the owner ``i`` of each."""
    total = int(lens.sum())
    owner = np.repeat(np.arange(lens.shape[0]), lens)
    if total == 0:
        return np.zeros(0, dtype=np.int64), owner
    first = np.cumsum(lens) - lens
    return np.repeat(starts, lens) + (np.arange(total) - first[owner]), owner


class _State:
    def __init__(self, topo: _Topology, level: _Level, m: np.ndarray):
        self.topo, self.level = topo, level
        self.m = m.astype(np.int64).copy()
        self.rows = np.repeat(np.arange(level.n), np.diff(level.ip))
        self.refresh()

    def refresh(self) -> None:
        topo, lv, m = self.topo, self.level, self.m
        self.nload = np.bincount(m, weights=lv.vw, minlength=topo.P).astype(np.float64)
        s, u = self.rows, lv.ix
        keep = (s < u) & (m[s] != m[u])
        pair = m[s[keep]] * topo.P + m[u[keep]]
        ent, own = _expand(topo.rptr[pair], np.diff(topo.rptr)[pair])
        self.lload = np.bincount(
            topo.rlink[ent], weights=lv.iw[keep][own], minlength=topo.E
        ).astype(np.float64)

    def occ(self) -> tuple:
        return self.nload / self.topo.cap, self.lload / self.topo.bw

    def maximum(self) -> float:
        n, e = self.occ()
        return max(float(n.max()), float(e.max()) if e.shape[0] else 0.0)

    def _row_deltas(self, rt: np.ndarray, rb: np.ndarray) -> tuple:
        """Link deltas of moving task rt[i] to processor rb[i]: (row, link, value)."""
        lv, topo, m = self.level, self.topo, self.m
        ip = lv.ip
        deg = ip[rt + 1] - ip[rt]
        ent, row = _expand(ip[rt], deg)
        q = m[lv.ix[ent]]
        w = lv.iw[ent]
        a = m[rt][row]
        b = rb[row]
        p = topo.P
        pairs = np.concatenate([b * p + q, a * p + q])
        vals = np.concatenate([w, -w])
        prow = np.concatenate([row, row])
        lens = topo.rptr[pairs + 1] - topo.rptr[pairs]
        lent, own = _expand(topo.rptr[pairs], lens)
        return prow[own], topo.rlink[lent], vals[own]

    def move(self, t: int, b: int) -> None:
        row, link, val = self._row_deltas(np.array([t]), np.array([b]))
        np.add.at(self.lload, link, val)
        a = self.m[t]
        w = self.level.vw[t]
        self.nload[a] -= w
        self.nload[b] += w
        self.m[t] = b


def _cut_refine(
    state: _State, used: np.ndarray, share: np.ndarray, slack: float = 0.03, passes: int = 8
) -> int:
    """Greedy k-way moves of boundary tasks lowering the route cost of the streams.

    The cost of a stream is its volume times the sum of ``1 / bandwidth`` over its route
    (the occupancy it adds to the links); a move is taken when it lowers the total and keeps
    its destination's compute under ``(1 + slack)`` times its ``share`` of the total over
    the processors ``used`` (or under its present load when that is higher).
    """
    topo, lv = state.topo, state.level
    p = topo.P
    cost = topo.cost
    total = float(lv.vw.sum())
    ub = np.zeros(p)
    ub[used] = (1 + slack) * total * share[used] / share[used].sum()
    moved = 0
    rows, ix, iw, ip = state.rows, lv.ix, lv.iw, lv.ip
    for _ in range(passes):
        interrupt.check()
        m = state.m
        cross = m[rows] != m[ix]
        if not cross.any():
            break
        # candidate (task, destination) pairs: a neighbour's processor
        cand = np.unique(rows[cross] * p + m[ix[cross]])
        ct, cb = cand // p, cand % p
        ent, own = _expand(ip[ct], ip[ct + 1] - ip[ct])
        q = m[ix[ent]]
        a = m[ct][own]
        gain = np.bincount(
            own, weights=iw[ent] * (cost[a, q] - cost[cb[own], q]), minlength=ct.shape[0]
        )
        good = gain > 1e-12 * (1 + np.abs(gain).max())
        if not good.any():
            break
        order = np.flatnonzero(good)[np.argsort(-gain[good], kind="stable")]
        touched = np.zeros(lv.n, dtype=bool)
        applied = 0
        limit = np.maximum(ub, state.nload).tolist()
        # Python floats and lists in the loop (the same IEEE operations as on NumPy scalars)
        ctl, cbl, nload, mt = ct.tolist(), cb.tolist(), state.nload.tolist(), state.m
        for k in order.tolist():
            t, b = ctl[k], cbl[k]
            if touched[t]:
                continue
            w = float(lv.vw[t])
            if nload[b] + w > limit[b] + 1e-12:
                continue
            if touched[ix[ip[t] : ip[t + 1]]].any():
                continue
            nload[int(mt[t])] -= w
            nload[b] += w
            mt[t] = b
            touched[t] = True
            applied += 1
        state.nload = np.asarray(nload, dtype=np.float64)
        moved += applied
        if applied == 0:
            break
    state.refresh()
    return moved


def _refine(state: _State, max_moves: int, n_cand: int = 24, n_light: int = 8) -> int:
    """Bottleneck moves until none helps; returns the number of moves."""
    topo, lv = state.topo, state.level
    p = topo.P
    moves = 0
    pair_mark = np.zeros(p * p, dtype=bool)
    stall = 0
    while moves < max_moves:
        if moves % 8 == 0:  # a move costs up to a few ms on large levels: poll often
            interrupt.check()
        nocc, locc = state.occ()
        i = int(np.argmax(nocc))
        big = float(nocc[i])
        kind, idx = "node", i
        if locc.shape[0]:
            j = int(np.argmax(locc))
            if locc[j] > big:
                big, kind, idx = float(locc[j]), "link", j
        if big <= 0:
            break
        m = state.m
        if kind == "node":
            tasks = np.flatnonzero(m == idx)
            tasks = tasks[lv.vw[tasks] > 0]
            if tasks.shape[0] > n_cand:
                deg_ext = np.zeros(lv.n)
                ext = (m[state.rows] == idx) & (m[lv.ix] != idx)
                np.add.at(deg_ext, state.rows[ext], lv.iw[ext])
                score = deg_ext[tasks] - 1e-9 * lv.vw[tasks]
                tasks = tasks[np.argsort(-score, kind="stable")[:n_cand]]
        else:
            pairs = topo.lpairs[topo.lptr[idx] : topo.lptr[idx + 1]]
            pair_mark[pairs] = True
            pr = m[state.rows] * p + m[lv.ix]
            cross = pair_mark[pr]
            pair_mark[pairs] = False
            s = state.rows[cross]
            if s.shape[0] == 0:
                break
            vol = np.bincount(s, weights=lv.iw[cross], minlength=lv.n)
            tasks = np.flatnonzero(vol)
            if tasks.shape[0] > n_cand:
                tasks = tasks[np.argsort(-vol[tasks], kind="stable")[:n_cand]]
        if tasks.shape[0] == 0:
            break
        light = np.argpartition(nocc, min(n_light, p - 1))[: n_light + 1].tolist() if p > 1 else []
        rt, rb = [], []
        for t in tasks.tolist():
            a = int(m[t])
            nbp = m[lv.ix[lv.ip[t] : lv.ip[t + 1]]]
            dest = set(nbp.tolist())
            dest.update(light)
            if a > 0:
                dest.add(a - 1)
            if a < p - 1:
                dest.add(a + 1)
            dest.discard(a)
            for b in dest:
                rt.append(t)
                rb.append(b)
        if not rt:
            break
        rt_a = np.asarray(rt, dtype=np.int64)
        rb_a = np.asarray(rb, dtype=np.int64)
        limit = big * (1 - 1e-12)  # a move is taken only when its score is below this
        w = lv.vw[rt_a]
        a_of = m[rt_a]
        # the processors' part of the score first: moves it already rules out are not scored
        # on the links (the same move wins: the others score >= limit)
        node_part = np.maximum(
            (state.nload[rb_a] + w) / topo.cap[rb_a], (state.nload[a_of] - w) / topo.cap[a_of]
        )
        if kind == "node":
            node_part = np.maximum(node_part, (state.nload[idx] - w) / topo.cap[idx])
            live = (node_part < limit) & (w > 0)
        else:
            live = node_part < limit
        sel = np.flatnonzero(live)
        if sel.shape[0] == 0:
            break
        up, dv = _multilevel.score_moves(
            lv.kern,
            topo.routes,
            m,
            state.lload,
            topo.bw,
            rt_a[sel],
            rb_a[sel],
            idx if kind == "link" else -1,
            _TINY,
        )
        score = np.maximum(up, node_part[sel])
        if kind == "link":
            score = np.maximum(score, (state.lload[idx] + dv) / topo.bw[idx])
            score = np.where(dv < -_TINY * (1 + state.lload[idx]), score, np.inf)
        pick = int(np.argmin(score))
        if not score[pick] < limit:
            break
        best = int(sel[pick])
        state.move(int(rt_a[best]), int(rb_a[best]))
        moves += 1
        stall += 1
        if stall >= 256:  # keep the incremental loads exact
            state.refresh()
            stall = 0
    state.refresh()
    return moves


# --------------------------------------------------------------------------------------
# The method
# --------------------------------------------------------------------------------------


def _quick_start(topo: _Topology, fine: _Level) -> np.ndarray:
    """The tasks in index order cut into blocks, one per processor in hierarchy order, each
    block's compute proportional to its processor's capacity: a complete mapping in
    microseconds (the first answer a time limit can return; on stencils in row-major order
    it is often a fair one)."""
    w = fine.vw
    total = float(w.sum())
    if fine.n == 0 or total <= 0:
        return np.zeros(fine.n, dtype=np.int64)
    ccap = np.cumsum(topo.cap)
    mid = (np.cumsum(w) - w / 2) / total
    return np.searchsorted(ccap / ccap[-1], mid, side="right").clip(0, topo.P - 1)


class _Incumbent:
    """The best complete mapping the run has held so far, offered to the time limit in
    force (:func:`coalloc._shared.params.offer_incumbent`): a level's mapping is projected
    to the tasks (a coarse mapping has exactly the loads of its projection) only if the
    deadline stops the run."""

    def __init__(self, tasks, resources, topo, levels, seed, params, started):
        self.args = (tasks, resources, topo, levels, seed, params, started)
        self.value = np.inf
        self.floor = lower_bound(tasks, resources)
        self.best: Optional[tuple] = None

    def offer(self, value: float, m: np.ndarray, depth: int, history: list, **counts) -> None:
        """Offer ``m`` (processor positions of the vertices of level ``depth``) when its
        maximum occupancy ``value`` is below the best offered so far."""
        if not value < self.value * (1 - 1e-12):
            return
        self.value = value
        m, history = m.copy(), [float(h) for h in history]
        tasks, resources, topo, levels, seed, params, started = self.args
        self.best = (m, depth, history, counts)

        def build() -> TaskMappingResult:
            fine = m
            for d in range(depth - 1, -1, -1):
                fine = fine[levels[d].cmap]
            iterations = {"levels": len(levels), **counts,
                          "processors_used": int(np.unique(fine).shape[0])}  # fmt: skip
            timings = {"total": time.perf_counter() - started}
            return _result(tasks, resources, topo.order_nodes[fine], seed, dict(params),
                           timings, iterations, history)  # fmt: skip

        offer_incumbent(build)
        if value <= self.floor * (1 + 1e-12):  # it meets the lower bound: nothing is better
            raise _AtBound()

    def result(self, timings: dict, moves: int) -> TaskMappingResult:
        """The mapping last offered, as the method's answer (it met the lower bound)."""
        m, depth, history, counts = self.best
        tasks, resources, topo, levels, seed, params, _ = self.args
        for d in range(depth - 1, -1, -1):
            m = m[levels[d].cmap]
        iterations = {"levels": len(levels), "moves": moves,
                      "processors_used": int(np.unique(m).shape[0]),
                      "initial_processors": int(counts.get("initial_processors", topo.P)),
                      "initial_level": int(counts.get("initial_level", -2)),
                      "stopped_at_bound": 1}  # fmt: skip
        out = _result(tasks, resources, topo.order_nodes[m], seed, params, timings,
                      iterations, history)  # fmt: skip
        out.bound = min(self.floor, float(out.max_occupancy))  # the proof it stopped on
        return out


class _AtBound(Exception):
    """Raised when a mapping meets :func:`~coalloc.taskmap.bounds.lower_bound`."""


def _prefixes(p: int) -> list:
    ks = {p}
    k = p
    while k > 1:
        k = (k + 1) // 2
        ks.add(k)
    return sorted(ks, reverse=True)


def map_multilevel(
    tasks: TaskGraph,
    resources: ResourceGraph,
    *,
    seed: Optional[int] = 0,
    coarse_factor: float = 4.0,
    subsets: bool = True,
    keep: int = 2,
    max_moves: Optional[int] = None,
    speed_exponents: Optional[tuple] = None,
    paper_start: int = 300,
) -> TaskMappingResult:
    """Map ``tasks`` onto ``resources`` minimising the maximum occupancy (multilevel).

    Heavy-edge coarsening, recursive bisection of the coarsest graph along the resource
    hierarchy on nested prefixes of the processors, and bottleneck-driven refinement at
    every level; see the module's documentation and ``coalloc docs taskmap``.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph (directed graphs are mapped by their pair volumes).
    resources : ResourceGraph
        The resource graph.
    seed : int, optional
        Seed of the matching order; same seed, same mapping.
    coarse_factor : float, default 4.0
        Coarsening stops at about ``coarse_factor x`` processors vertices (positive).
    subsets : bool, default True
        Also try nested prefixes of the processor list (half, quarter, ..., one processor).
    keep : int, default 2
        How many of the best initial mappings are refined through all levels (at least 1).
    max_moves : int, optional
        Refinement moves per level (default ``max(200, 4 x vertices)``).
    speed_exponents : tuple of float, optional
        The initial mappings give processor ``p`` a share of the compute proportional to
        ``capacity[p] ** alpha`` for each ``alpha`` here (1: proportional to speed; 0: equal
        shares, which cut the task graph into equal parts and may load slow links less).
        Default ``(1.0, 0.5, 0.0)`` above ``paper_start`` tasks, ``(1.0,)`` up to there
        (where the paper's start is one more: the other exponents changed none of 33 small
        instances of ``bench/taskmap/vs_peers.py`` and Table 1, and cost a quarter of the
        time).
    paper_start : int, default 300
        Up to this many tasks, the mapping of the paper's ``"open+improve"``
        (:func:`~coalloc.taskmap.map_tasks`) is one more start, refined by bottleneck moves
        (it is quick there and wins on some pipelines; its time grows fast beyond).

    Returns
    -------
    TaskMappingResult
        ``method`` "multilevel"; ``timings`` has ``"coarsen"``, ``"initial"``,
        ``"refine"``, ``"total"``; ``iterations`` ``"levels"``, ``"moves"``,
        ``"processors_used"``, ``"initial_processors"``, ``"initial_level"`` (-1: the
        paper's open+improve was the best start, -2 the quick block start, -3 the paper's
        base), and ``"stopped_at_bound"`` 1 when a mapping met
        :func:`~coalloc.taskmap.bounds.lower_bound` (then ``bound`` is set: it is optimal);
        ``history`` the maximum occupancy after the initial mapping and after each level's
        refinement. Under a time limit (:func:`coalloc.taskmap.solve`) every better mapping
        is offered as it comes: the quick start, the paper's base and open+improve (up to
        ``paper_start`` tasks), each initial start, each level's refinement.

    Raises
    ------
    TypeError, ValueError
        Graphs of the wrong type, a bad parameter.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = map_multilevel(tasks, res)
    >>> result.max_occupancy, result.method
    (0.6, 'multilevel')
    """
    if not isinstance(tasks, TaskGraph):
        raise TypeError(f"tasks must be a TaskGraph, got {type(tasks).__name__}")
    if not isinstance(resources, ResourceGraph):
        raise TypeError(f"resources must be a ResourceGraph, got {type(resources).__name__}")
    seed = check_seed(seed)
    if isinstance(coarse_factor, bool) or not isinstance(coarse_factor, (int, float)):
        raise TypeError("coarse_factor must be a number")
    if not (np.isfinite(coarse_factor) and coarse_factor > 0):
        raise ValueError(f"coarse_factor must be positive, got {coarse_factor!r}")
    if not isinstance(subsets, (bool, np.bool_)):
        raise TypeError("subsets must be a bool")
    if isinstance(paper_start, bool) or not isinstance(paper_start, (int, np.integer)):
        raise TypeError(f"paper_start must be an int, got {paper_start!r}")
    if speed_exponents is None:  # up to paper_start tasks the paper's start is one more
        speed_exponents = (1.0,) if tasks.n <= paper_start else (1.0, 0.5, 0.0)
    if isinstance(keep, bool) or not isinstance(keep, (int, np.integer)) or keep < 1:
        raise ValueError(f"keep must be an int >= 1, got {keep!r}")
    if max_moves is not None and (
        isinstance(max_moves, bool) or not isinstance(max_moves, (int, np.integer)) or max_moves < 0
    ):
        raise ValueError(f"max_moves must be an int >= 0 or None, got {max_moves!r}")
    if resources.n_processors == 0:
        raise ValueError("resources has no processor")
    params = {"coarse_factor": float(coarse_factor), "subsets": bool(subsets), "keep": int(keep)}
    params["max_moves"] = max_moves
    exps = tuple(float(a) for a in speed_exponents)
    if not exps or not all(np.isfinite(exps)) or min(exps) < 0:
        raise ValueError(f"speed_exponents must be non-negative numbers, got {speed_exponents!r}")
    params["speed_exponents"] = exps
    params["paper_start"] = int(paper_start)
    speed_exponents = exps
    t0 = time.perf_counter()
    topo = _topology(resources)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    ip, ix, iw = tasks.undirected_csr()
    fine = _Level(
        np.asarray(ip, dtype=np.int64),
        np.asarray(ix, dtype=np.int64),
        np.asarray(iw, dtype=np.float64),
        tasks.node_weight.astype(np.float64),
    )
    levels = [fine]
    inc = _Incumbent(tasks, resources, topo, levels, seed, params, t0)
    total_moves, t1 = 0, None
    try:
        quick = _quick_start(topo, fine)
        quick_occ = _State(topo, fine, quick).maximum()
        inc.offer(quick_occ, quick, 0, [quick_occ], initial_level=-2)
        interrupt.check()  # the next steps may import and build the clustering first
        paper = None
        if tasks.n <= paper_start:
            # the paper's open+improve (unchanged) as one more start, refined by bottleneck
            # moves; first, since it is quick there (its mappings are offered as they come),
            # and weighed against the others last (ties go to the multilevel's starts)
            from .mapper import map_tasks_quietly

            where = np.empty(resources.n_nodes, dtype=np.int64)
            where[topo.order_nodes] = np.arange(topo.P)

            def offer_from(level: int):
                def on_mapping(mapping: np.ndarray, value: float) -> None:
                    inc.offer(value, where[mapping], 0, [value], initial_level=level)

                return on_mapping

            # the paper's "base" first: its clustering and one greedy pass take milliseconds
            found = map_tasks_quietly(tasks, resources, offer_from(-3), method="base", seed=seed)
            value = _State(topo, levels[0], where[found.mapping]).maximum()
            first = (value, where[found.mapping], [value], len(set(found.mapping.tolist())), -3)
            found = map_tasks_quietly(  # the same task order (clustering) as base's
                tasks,
                resources,
                offer_from(-1),
                method="open+improve",
                seed=seed,
                order=found.order,
            )
            state = _State(topo, levels[0], where[found.mapping])
            history = [state.maximum()]
            cap = max_moves if max_moves is not None else max(200, 4 * tasks.n)
            total_moves += _refine(state, cap)
            history.append(state.maximum())
            inc.offer(history[-1], state.m, 0, history, moves=total_moves, initial_level=-1)
            paper = (history[-1], state.m, history, int(np.unique(state.m).shape[0]), -1)
        target = max(int(coarse_factor * topo.P), 16)
        total_w = float(fine.vw.sum())
        max_w = 1.5 * total_w / target if total_w > 0 else np.inf
        while levels[-1].n > target:
            nxt = _coarsen(levels[-1], max_w, rng)
            if nxt is None:
                break
            levels.append(nxt)
        t1 = time.perf_counter()
        coarse = levels[-1]
        coarsest = len(levels) - 1
        ks = _prefixes(topo.P) if subsets else [topo.P]
        # processor subsets: prefixes of the hierarchy order, and the k fastest processors
        # (ties: hierarchy order), each kept in hierarchy order for the bisection
        fastest = np.argsort(-topo.cap, kind="stable")
        sets: list = []
        seen_sets: set = set()
        for k in ks:
            for sub in (np.arange(k, dtype=np.int64), np.sort(fastest[:k]).astype(np.int64)):
                if sub.tobytes() not in seen_sets:  # equal subsets (int64 alike): equal bytes
                    seen_sets.add(sub.tobytes())
                    sets.append(sub)
        starts = []
        seen_shares: list = []
        for alpha in speed_exponents:
            share = topo.cap**alpha
            share = share / share.max()
            if any(np.array_equal(share, other) for other in seen_shares):
                continue  # equal capacities: every exponent gives the same shares
            seen_shares.append(share)
            for i, sub in enumerate(sets if len(seen_shares) == 1 else sets[:1]):
                st = _State(topo, coarse, _bisect_map(topo, coarse, sub, share, full=False))
                _cut_refine(st, sub, share)
                starts.append((st.maximum(), -sub.shape[0], -alpha, i, st, share, sub))
                inc.offer(st.maximum(), st.m, coarsest, [st.maximum()], initial_level=coarsest)
        starts.sort(key=lambda x: x[:4])
        t2 = time.perf_counter()
        best = None
        plan = []
        fine_left = max(_FINE_STARTS, _FINE_WORK // max(tasks.n, 1))
        for rank, start in enumerate(starts):
            # the kept starts through all levels, the best of them also bisected again on the
            # finest graph; every start on all processors (one per speed exponent) is bisected
            # on the finest graph too (the coarse ranking is a weak predictor there)
            tops = []
            if rank < keep:
                tops.append(coarsest)
            if (rank < _FINE_STARTS or start[6].shape[0] == topo.P) and coarsest > 0:
                if fine_left > 0:
                    tops.append(0)
                    fine_left -= 1
            if tops:
                plan.append((start, tops))
        for (occ0, _, _, _, st, share, sub), tops in plan:
            for top in tops:
                if top == coarsest:
                    m, history = st.m, [occ0]
                else:
                    m = _bisect_map(topo, levels[top], sub, share, full=tasks.n <= _FINE_WORK // 4)
                    history = []
                for depth in range(top, -1, -1):
                    lv = levels[depth]
                    if depth < top:
                        m = m[lv.cmap]
                    state = _State(topo, lv, m)
                    before = state.maximum()
                    total_moves += _cut_refine(state, sub, share)
                    cap = max_moves if max_moves is not None else max(200, 4 * lv.n)
                    total_moves += _refine(state, cap)
                    if state.maximum() > before * (1 + 1e-12):
                        # the route-cost pass raised a load the bottleneck moves did not undo:
                        # bottleneck moves alone from the mapping the level started with
                        state = _State(topo, lv, m)
                        total_moves += _refine(state, cap)
                    m = state.m
                    history.append(state.maximum())
                    inc.offer(history[-1], m, depth, history, moves=total_moves,
                              initial_processors=int(sub.shape[0]), initial_level=top)  # fmt: skip
                if best is None or history[-1] < best[0] * (1 - 1e-12):
                    best = (history[-1], m, history, sub.shape[0], top)
        if paper is not None and paper[0] < best[0] * (1 - 1e-12):
            best = paper
        if paper is not None and first[0] < best[0] * (1 - 1e-12):
            best = first  # the paper's plain "base" mapping is the best (rare)
        if quick_occ < best[0] * (1 - 1e-12):  # the quick start is the best (rare)
            best = (quick_occ, quick, [quick_occ], topo.P, -2)
    except _AtBound:  # a mapping met the lower bound: it is optimal, stop here
        now = time.perf_counter()
        timings = {"coarsen": (t1 or now) - t0, "total": now - t0}
        return inc.result(timings, total_moves)
    t3 = time.perf_counter()
    mapping = topo.order_nodes[best[1]]
    timings = {"coarsen": t1 - t0, "initial": t2 - t1, "refine": t3 - t2, "total": t3 - t0}
    iterations = {
        "levels": len(levels),
        "moves": total_moves,
        "processors_used": int(np.unique(best[1]).shape[0]),
        "initial_processors": int(best[3]),
        "initial_level": int(best[4]),
    }
    return _result(tasks, resources, mapping, seed, params, timings, iterations, best[2])


def _result(tasks, resources, mapping, seed, params, timings, iterations, history):
    occ, bott = max_occupancy(tasks, resources, mapping)  # from scratch, the family's helper
    node_occ, link_occ = occupancy_graph(tasks, resources, mapping)
    return TaskMappingResult(
        mapping=mapping,
        max_occupancy=occ,
        bottleneck=bott,
        method="multilevel",
        seed=seed,
        timings=timings,
        iterations=iterations,
        params=params,
        node_occupancy=node_occ,
        link_occupancy=link_occ,
        history=[float(h) for h in history],
        status="feasible",
    )
