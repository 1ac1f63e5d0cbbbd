"""The cut bound of :func:`coalloc.taskmap.bounds.lower_bound` (strength ``"cuts"``): the
task sets behind the resource graph's cuts (the two lemmas of that module's docstring)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._shared.caches import cache_of
from ._bisect import _least
from .model import ResourceGraph, TaskGraph

# --------------------------------------------------------------------------------------
# The cut bound (strength "cuts"): the task sets behind the resource graph's cuts
# --------------------------------------------------------------------------------------

_FLOW_WORK = 2.5e7  # cap on (source, arc) pairs of the congestion certificate (a count)
_BATCH = 128  # sources routed together


def _cuts(tasks: TaskGraph, resources: ResourceGraph, start: float) -> float:
    """The least ``L`` (from ``start`` up) that passes :func:`_cuts_feasible`, from below."""
    if tasks.n < 2 or resources.n_processors < 2 or resources.n_links == 0:
        return start
    cache = cache_of(tasks)
    profile = cache.get("cut_profile")
    if profile is None:  # a function of the task graph alone: kept beside it
        profile = cache["cut_profile"] = _Profile(tasks)
    if not profile.kappa > 0:
        return start
    sides = _Sides(resources)
    return _least(lambda L: _cuts_feasible(sides, profile, L), float(start))


class _Profile:
    """A certified lower bound on the cut of a task set by the weight of its lighter side:
    ``cut(X) >= psi(min(w(X), W - w(X)))`` for every task set ``X`` (the congestion
    certificate of the module's docstring).

    Demands ``w_s w_t`` from each source ``s`` to every task ``t`` of the largest connected
    component ``K`` (of volume > 0 streams), each routed evenly over its shortest paths in
    hops; ``kappa`` is the largest load / volume of a stream. Every pair split by ``X``
    sends its demand over the cut, so ``cut(X) >= D(X) / kappa``. With every task of ``K``
    a source, ``D(X) = 2 a (w(K) - a)`` for ``a = w(X & K)``, and with ``m`` the lighter
    side's weight and ``R = W - w(K)``, ``a`` and ``w(K) - a`` are both at least ``m - R``:
    ``psi(m) = 2 (m - R)(W - m) / kappa``. When the work cap allows only some sources
    (every k-th of a breadth-first order), ``D(X) >= (m - R) w(sources)``: ``psi(m) = (m - R) w(Q) /
    kappa``. Work: sources x streams, capped by ``_FLOW_WORK`` (a count)."""

    def __init__(self, tasks: TaskGraph):
        from scipy.sparse import csgraph

        n = tasks.n
        w = tasks.node_weight.astype(np.float64)
        self.W = float(w.sum())
        self.kappa, self.rest, self.full, self.wq = 0.0, 0.0, False, 0.0
        ip, ix, iw = tasks.undirected_csr()
        keep = iw > 0
        rows = np.repeat(np.arange(n), np.diff(ip))[keep]
        cols, vol = ix[keep], iw[keep]
        if rows.size == 0:
            return
        adj = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
        _, label = csgraph.connected_components(adj, directed=False)
        sizes = np.bincount(label, weights=w)
        big = int(np.argmax(sizes))
        inK = label == big
        members = np.flatnonzero(inK)
        if members.size < 2:
            return
        self.rest = max(0.0, self.W - float(w[members].sum()))
        budget = int(_FLOW_WORK // rows.size)
        if budget >= members.size:
            src, self.full = members, True
        else:
            src = _spread(adj, members, max(1, budget))
        wK = np.where(inK, w, 0.0)
        load = np.zeros(rows.size)
        for b0 in range(0, src.size, _BATCH):
            _route(adj, rows, cols, vol, w, wK, src[b0 : b0 + _BATCH], load)
        # a stream's two stored arcs carry its two directions: their loads add up
        _, pair = np.unique(np.minimum(rows, cols) * n + np.maximum(rows, cols),
                            return_inverse=True)  # fmt: skip
        pair = pair.reshape(-1)
        per_pair = np.bincount(pair, weights=load)
        pair_vol = np.bincount(pair, weights=vol) / np.bincount(pair)
        self.kappa = float((per_pair / pair_vol).max()) * (1 + 1e-9)
        self.wq = float(w[src].sum())

    def g(self, c):
        """The heaviest lighter side ``m`` with ``psi(m) <= c`` (``>= W / 2``: no limit)."""
        c = np.asarray(c, dtype=np.float64)
        R, W, k = self.rest, self.W, self.kappa
        if not self.full:
            return R + c * k / self.wq
        # 2 y (W - R - y) = c kappa, y = m - R: the smaller root, none above the vertex
        span = W - R
        disc = span * span - 2.0 * c * k
        y = 0.5 * (span - np.sqrt(np.maximum(disc, 0.0)))
        return np.where(disc > 0, R + y, np.inf)


def _spread(adj, members, count: int) -> np.ndarray:
    """``count`` tasks of ``members`` spread out: every k-th in the reverse Cuthill-McKee
    order (breadth-first layers), no clock and no random draw."""
    from scipy.sparse import csgraph

    order = csgraph.reverse_cuthill_mckee(adj.tocsr(), symmetric_mode=True)
    inK = np.zeros(adj.shape[0], dtype=bool)
    inK[members] = True
    order = order[inK[order]].astype(np.int64)
    step = max(1, order.size // count)
    return order[::step][:count]


def _route(adj, rows, cols, vol, w, wK, src, load) -> None:
    """Add to ``load`` (per stored arc) the demands ``w_s w_t`` from each source ``s`` of
    ``src`` to every task ``t`` of ``wK``'s support, each routed over the shortest paths
    (hops): at each task the flow through it (its own demand and what passes on to farther
    tasks) divides among its arcs from one hop nearer in proportion to their volumes."""
    from scipy.sparse import csgraph

    n = adj.shape[0]
    b = src.shape[0]
    D = csgraph.shortest_path(adj, unweighted=True, indices=src).reshape(b, n)
    D[~np.isfinite(D)] = -2.0  # unreachable (another component): no arc is one hop on
    D = D.astype(np.int32)
    dag = D[:, cols] - D[:, rows] == 1  # (b, arcs): tail -> head one hop farther from s
    bi, ai = np.nonzero(dag)
    bn = bi * n
    head = bn + cols[ai]
    tail = bn + rows[ai]
    share_of = vol[ai]
    into = np.bincount(head, weights=share_of, minlength=b * n)
    share_of = share_of / into[head]
    flow = (w[src][:, None] * wK[None, :]).reshape(-1)
    flow[np.arange(b) * n + src] = 0.0
    level = (D.max() - D.reshape(-1)[head]).astype(np.int16)  # farthest first
    order = np.argsort(level, kind="stable")  # (a radix sort)
    cuts_ = np.flatnonzero(np.diff(level[order])) + 1
    for part in np.split(order, cuts_):
        share = flow[head[part]] * share_of[part]
        np.add.at(load, ai[part], share)
        np.add.at(flow, tail[part], share)


class _Sides:
    """The resource graph as a tree of sides: its 2-edge-connected components joined by
    its bridges (a tree graph: every link a bridge, every node a component), rooted at the
    component of node 0; per component its processors (capacity, the bandwidth of their
    own links) and the bandwidth of the bridge to its parent."""

    def __init__(self, resources: ResourceGraph):
        from scipy.sparse import csgraph

        R = resources.n_nodes
        links = resources.links
        bridge = _bridges(R, links)
        keep = ~bridge
        a = sp.csr_matrix(
            (np.ones(int(keep.sum())), (links[keep, 0], links[keep, 1])), shape=(R, R)
        )
        ncomp, comp = csgraph.connected_components(a, directed=False)
        tree = sp.csr_matrix(
            (np.arange(1, int(bridge.sum()) + 1, dtype=np.float64),
             (comp[links[bridge, 0]], comp[links[bridge, 1]])),
            shape=(ncomp, ncomp),
        )  # fmt: skip
        order, parent = csgraph.breadth_first_order(
            tree + tree.T, comp[0], directed=False, return_predecessors=True
        )
        bw_up = np.zeros(ncomp)
        bl = np.flatnonzero(bridge)
        for e in bl.tolist():
            u, v = comp[links[e, 0]], comp[links[e, 1]]
            child = v if parent[v] == u else u
            bw_up[child] = resources.bandwidth[e]
        procs = resources.processors
        self.order = order[::-1]  # leaves first
        self.parent = parent
        self.bw_up = bw_up
        self.pcomp = comp[procs]
        self.cap = resources.capacity[procs].astype(np.float64)
        self.band = resources.adjacent_bandwidth[procs].astype(np.float64)
        self.ncomp = ncomp


def _bridges(R: int, links: np.ndarray) -> np.ndarray:
    """Which links are bridges (iterative DFS low-link; each link is one edge)."""
    E = links.shape[0]
    adj = [[] for _ in range(R)]
    for e, (u, v) in enumerate(links.tolist()):
        adj[u].append((v, e))
        adj[v].append((u, e))
    disc = [-1] * R
    low = [0] * R
    out = np.zeros(E, dtype=bool)
    timer = 0
    for root in range(R):
        if disc[root] >= 0:
            continue
        disc[root] = low[root] = timer
        timer += 1
        stack = [(root, -1, iter(adj[root]))]
        while stack:
            v, via, it = stack[-1]
            for u, e in it:
                if e == via:
                    continue
                if disc[u] < 0:
                    disc[u] = low[u] = timer
                    timer += 1
                    stack.append((u, e, iter(adj[u])))
                    break
                low[v] = min(low[v], disc[u])
            else:
                stack.pop()
                if stack:
                    p = stack[-1][0]
                    low[p] = min(low[p], low[v])
                    if low[v] > disc[p]:
                        out[via] = True
    return out


def _restrict(cap, g, W):
    """The most weight a side may hold: at most ``cap``, and the lighter of it and the
    rest at most ``g`` (so at most ``g``, or at least ``W - g``)."""
    return np.where(cap >= W - g, cap, np.minimum(cap, g))


def _cuts_feasible(sides: _Sides, profile: _Profile, L: float) -> bool:
    """False only if no mapping has maximum occupancy at most ``L``: every processor holds
    at most ``L c`` and, its own links being a cut, tasks whose cut is at most ``L`` times
    their bandwidth; every side below a bridge likewise with the bridge's bandwidth; the
    root must hold everything."""
    slack = 1 + 1e-9
    W = profile.W
    own = _restrict(L * sides.cap * slack, profile.g(L * sides.band * slack), W)
    U = np.bincount(sides.pcomp, weights=own, minlength=sides.ncomp)
    gup = profile.g(L * sides.bw_up * slack)
    parent = sides.parent
    for c in sides.order.tolist():
        p = parent[c]
        if p < 0:
            return bool(U[c] >= W * (1 - 1e-12))
        U[p] += float(_restrict(U[c], gup[c], W))
    return True
