"""Pure Python/NumPy twin of coalloc.taskmap._multilevel (src/_core/taskmap/_multilevel.cpp).

All routes between processors as one CSR (:func:`pair_routes`) and the scores of candidate
bottleneck moves (:func:`score_moves`), with the kernel's signatures, checks and
floating-point operation order: the parity tests in ``tests/taskmap/test_multilevel.py``
require bit-identical results. :func:`score_moves` is the vectorised NumPy code the
multilevel mapper ran before the kernel existed.
"""

from __future__ import annotations

import numpy as np

from .occupancy import Routes

__all__ = [
    "PairRoutes",
    "Level",
    "pair_routes",
    "score_moves",
    "grow_fm",
    "bisect_small",
    "match_heavy",
    "hop_distances",
    "apply_move",
]


def _need(ok: bool, msg: str) -> None:
    if not ok:
        raise ValueError(msg)


def pair_routes(pred, pred_link, proc_row, nodes) -> tuple:
    """CSR ``(rptr, rlink)`` of the routes between ``nodes[a]`` and ``nodes[b]``.

    Pair ``a * P + b``; the links of each route in the order the predecessor walk meets
    them (:meth:`coalloc.taskmap._reference.occupancy.Routes.route`).

    Parameters
    ----------
    pred, pred_link : ndarray of int32, shape (P0, R)
        The routing tables of a resource graph.
    proc_row : ndarray of int64, shape (R,)
        Row of each processor, ``-1`` for a router.
    nodes : ndarray of int64, shape (P,)
        Processors, in the order of the pairs.

    Returns
    -------
    rptr : ndarray of int64, shape (P * P + 1,)
    rlink : ndarray of int64
    """
    proc_row = np.ascontiguousarray(proc_row, dtype=np.int64)
    nodes = np.ascontiguousarray(nodes, dtype=np.int64)
    _need(nodes.ndim == 1, "nodes must be 1-D")
    r = proc_row.shape[0]
    for v in nodes.tolist():
        _need(0 <= v < r and proc_row[v] >= 0, f"nodes must hold processors, got {v}")
    routes = Routes(pred, pred_link, proc_row, int(np.max(pred_link, initial=-1)) + 1)
    p = nodes.shape[0]
    rptr = np.zeros(p * p + 1, dtype=np.int64)
    chunks = []
    for a in range(p):
        for b in range(p):
            links = (
                routes.route(int(nodes[a]), int(nodes[b]))
                if a != b
                else np.zeros(0, dtype=np.int64)
            )
            chunks.append(links)
            rptr[a * p + b + 1] = rptr[a * p + b] + links.shape[0]
    rlink = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int64)
    return rptr, rlink.astype(np.int64)


class PairRoutes:
    """The CSR of :func:`pair_routes`, checked once.

    Parameters
    ----------
    rptr, rlink : ndarray of int64
        The routes (pair ``a * P + b``).
    n_links : int
        The number of links ``E``.
    """

    def __init__(self, rptr, rlink, n_links: int):
        self.rptr = np.ascontiguousarray(rptr, dtype=np.int64)
        self.rlink = np.ascontiguousarray(rlink, dtype=np.int64)
        _need(self.rptr.ndim == 1 and self.rptr.shape[0] >= 1, "rptr must be 1-D and non-empty")
        pp = self.rptr.shape[0] - 1
        self.P = int(round(pp**0.5))
        _need(self.P * self.P == pp, "rptr must have P * P + 1 entries")
        _need(n_links >= 0, "n_links must be >= 0")
        self.E = int(n_links)
        _need(self.rptr[0] == 0, "rptr must start at 0")
        _need(bool(np.all(np.diff(self.rptr) >= 0)), "rptr must be non-decreasing")
        _need(self.rlink.shape == (self.rptr[-1],), "rlink must have shape (rptr[-1],)")
        _need(
            bool(np.all((self.rlink >= 0) & (self.rlink < self.E))),
            "rlink must hold link ids in [0, n_links)",
        )


class Level:
    """A symmetric task graph as CSR ``(ip, ix, iw)``, checked once.

    Parameters
    ----------
    ip, ix : ndarray of int64
    iw : ndarray of float64
    """

    def __init__(self, ip, ix, iw):
        self.ip = np.ascontiguousarray(ip, dtype=np.int64)
        self.ix = np.ascontiguousarray(ix, dtype=np.int64)
        self.iw = np.ascontiguousarray(iw, dtype=np.float64)
        _need(self.ip.ndim == 1 and self.ip.shape[0] >= 1, "ip must be 1-D and non-empty")
        self.n = self.ip.shape[0] - 1
        _need(self.ix.ndim == 1 and self.iw.shape == self.ix.shape, "ix, iw: bad shapes")
        _need(self.ip[0] == 0 and self.ip[-1] == self.ix.shape[0], "ip must span ix")
        _need(bool(np.all(np.diff(self.ip) >= 0)), "ip must be non-decreasing")
        _need(bool(np.all((self.ix >= 0) & (self.ix < self.n))), "ix must be in [0, n)")


def _expand(starts: np.ndarray, lens: np.ndarray) -> tuple:
    total = int(lens.sum())
    owner = np.repeat(np.arange(lens.shape[0]), lens)
    if total == 0:
        return np.zeros(0, dtype=np.int64), owner
    first = np.cumsum(lens) - lens
    return np.repeat(starts, lens) + (np.arange(total) - first[owner]), owner


def score_moves(level, routes, m, lload, bw, rt, rb, link: int, tiny: float) -> tuple:
    """Scores of moving task ``rt[i]`` to processor ``rb[i]`` (mapping ``m``).

    Parameters
    ----------
    level : Level
        The task graph.
    routes : PairRoutes
        The routes between processors.
    m : ndarray of int64, shape (n,)
        The processor of every task.
    lload, bw : ndarray of float64, shape (E,)
        Link loads and bandwidths.
    rt, rb : ndarray of int64, shape (k,)
        The candidate moves.
    link : int
        A link whose load change is reported, or ``-1``.
    tiny : float
        A link's load "rises" when its change exceeds ``tiny * (1 + load)``.

    Returns
    -------
    up : ndarray of float64, shape (k,)
        The largest occupancy ``(load + change) / bandwidth`` over the links whose load
        rises; ``-inf`` when none does.
    dv : ndarray of float64, shape (k,)
        The change of the load of ``link`` (0 when ``link`` is ``-1``).
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    lload = np.ascontiguousarray(lload, dtype=np.float64)
    bw = np.ascontiguousarray(bw, dtype=np.float64)
    rt = np.ascontiguousarray(rt, dtype=np.int64)
    rb = np.ascontiguousarray(rb, dtype=np.int64)
    n, p, e = level.n, routes.P, routes.E
    _need(m.shape == (n,), "m must have shape (n,)")
    _need(lload.shape == (e,) and bw.shape == (e,), "lload and bw must have shape (n_links,)")
    _need(rt.ndim == 1 and rb.shape == rt.shape, "rb must have the shape of rt")
    _need(-1 <= link < e, "link must be -1 or in [0, n_links)")
    ip, ix, iw = level.ip, level.ix, level.iw
    for t, b in zip(rt.tolist(), rb.tolist()):
        _need(0 <= t < n, "rt must hold tasks in [0, n)")
        _need(0 <= b < p, "rb must hold processors in [0, P)")
        for u in [t, *ix[ip[t] : ip[t + 1]].tolist()]:
            _need(0 <= m[u] < p, "m must hold processors in [0, P)")
    nrow = rt.shape[0]
    deg = ip[rt + 1] - ip[rt]
    ent, row = _expand(ip[rt], deg)
    q = m[ix[ent]]
    w = iw[ent]
    a = m[rt][row]
    b = rb[row]
    pairs = np.concatenate([b * p + q, a * p + q])
    vals = np.concatenate([w, -w])
    prow = np.concatenate([row, row])
    lens = routes.rptr[pairs + 1] - routes.rptr[pairs]
    lent, own = _expand(routes.rptr[pairs], lens)
    row, lk, val = prow[own], routes.rlink[lent], vals[own]
    ulink, li = np.unique(lk, return_inverse=True)
    d = np.zeros((nrow, ulink.shape[0]))
    np.add.at(d, (row, li), val)
    new_l = (lload[ulink] + d) / bw[ulink]
    rise = np.where(d > tiny * (1 + lload[ulink]), new_l, -np.inf)
    up = rise.max(axis=1) if ulink.shape[0] else np.full(nrow, -np.inf)
    dv = np.zeros(nrow)
    if link >= 0:
        col = np.searchsorted(ulink, link)
        if col < ulink.shape[0] and ulink[col] == link:
            dv = d[:, col].copy()
    return up, dv


def grow_fm(indptr, indices, data, wloc, target, seed, tol, passes, start) -> np.ndarray:
    """One bisection of a small graph: graph growing, then Fiduccia-Mattheyses passes.

    Growing from ``seed`` (gain = volume to the grown side minus volume to the rest; a
    vertex that would overshoot ``target`` by more than half of itself is skipped) to
    about ``target``; then ``passes`` FM passes: the free vertex of highest gain whose move
    keeps the grown side within ``tol`` of ``target`` (or brings it closer) moves, negative
    gains included, each vertex once per pass, and the pass is rolled back to its best
    prefix (smallest cut, then closest to the target).

    Parameters
    ----------
    indptr, indices, data : ndarray
        The symmetric graph as CSR (every stored entry an edge of weight ``data``).
    wloc : ndarray of float64, shape (n,)
        Vertex weights.
    target : float
        Weight of the grown side.
    seed : int
        First vertex grown; ``-1``: no growing, the passes start from ``start``.
    tol : float
        Balance tolerance of the passes.
    passes : int
        At most this many FM passes (they stop when one improves nothing).
    start : ndarray of bool, shape (n,)
        The side to start from when ``seed`` is ``-1`` (ignored otherwise).

    Returns
    -------
    ndarray of bool, shape (n,)
        The grown side.
    """
    import heapq

    sip = np.ascontiguousarray(indptr, dtype=np.int64)
    six = np.ascontiguousarray(indices, dtype=np.int64)
    siw = np.ascontiguousarray(data, dtype=np.float64)
    wloc = np.ascontiguousarray(wloc, dtype=np.float64)
    n = wloc.shape[0]
    _need(sip.shape == (n + 1,) and six.shape == siw.shape, "bad CSR shapes")
    _need(sip[0] == 0 and sip[-1] == six.shape[0], "indptr must start at 0 and span indices")
    _need(bool(np.all(np.diff(sip) >= 0)), "indptr must be non-decreasing")
    _need(bool(np.all((six >= 0) & (six < n))), "indices must be in [0, n)")
    _need(-1 <= seed < n, "seed must be -1 or a vertex in [0, n)")
    _need(passes >= 0, "passes must be >= 0")
    start = np.ascontiguousarray(start, dtype=bool)
    _need(start.shape == (n,), "start must have shape (n,)")
    rows = np.repeat(np.arange(n), np.diff(sip))
    gain = -np.bincount(rows, weights=siw, minlength=n)
    inside = start.copy()
    if seed >= 0:
        inside[:] = False
        done = np.zeros(n, dtype=bool)
        heap: list = [(-gain[seed], seed)]
        got = 0.0
        while got < target - 1e-12:
            if not heap:
                free = np.flatnonzero(~inside & ~done)
                if free.shape[0] == 0:
                    break
                s = int(free[np.argmax(gain[free])])
                heapq.heappush(heap, (-gain[s], s))
            g, v = heapq.heappop(heap)
            if inside[v] or done[v] or -g != gain[v]:
                continue
            if got + wloc[v] > target and got + wloc[v] / 2 > target and got > 0:
                done[v] = True
                continue
            inside[v] = True
            got += wloc[v]
            for k in range(sip[v], sip[v + 1]):
                u = six[k]
                if not inside[u]:
                    gain[u] += 2 * siw[k]
                    if not done[u]:
                        heapq.heappush(heap, (-gain[u], u))
    if n < 2:
        return inside
    side = inside.astype(np.int8)
    for _ in range(passes):
        same = side[rows] == side[six]
        ext = np.bincount(rows, weights=np.where(same, 0.0, siw), minlength=n)
        intl = np.bincount(rows, weights=np.where(same, siw, 0.0), minlength=n)
        gain = ext - intl
        # plain left-to-right sums (the kernel's order)
        cut = float(np.cumsum(ext)[-1]) / 2
        w_in = float(np.cumsum(np.where(side == 1, wloc, 0.0))[-1])
        heap = [(-gain[v], v) for v in range(n) if ext[v] > 0]
        heapq.heapify(heap)
        locked = np.zeros(n, dtype=bool)
        moves = []
        best_cut, best_dev, best_k = cut, abs(w_in - target), 0
        bad = 0
        while heap and bad < 64:
            g, v = heapq.heappop(heap)
            if locked[v] or -g != gain[v]:
                continue
            dw = -wloc[v] if side[v] else wloc[v]
            dev_new = abs(w_in + dw - target)
            if dev_new > tol and dev_new >= abs(w_in - target):
                continue
            locked[v] = True
            side[v] ^= 1
            w_in += dw
            cut -= gain[v]
            gain[v] = -gain[v]
            for k in range(sip[v], sip[v + 1]):
                u = six[k]
                if locked[u]:
                    continue
                # u's edge to v flips between internal and external
                gain[u] += 2 * siw[k] if side[u] != side[v] else -2 * siw[k]
                heapq.heappush(heap, (-gain[u], u))
            moves.append(v)
            dev = abs(w_in - target)
            if (dev <= tol or dev < best_dev) and (
                cut < best_cut - 1e-12 or (cut <= best_cut + 1e-12 and dev < best_dev)
            ):
                best_cut, best_dev, best_k = cut, dev, len(moves)
                bad = 0
            else:
                bad += 1
        for v in moves[best_k:]:
            side[v] ^= 1
        if best_k == 0:
            break
    return side.astype(bool)


def bisect_small(level, verts, wloc, target, tol, passes) -> np.ndarray:
    """:func:`grow_fm` on the subgraph of ``level`` induced by ``verts``.

    The subgraph in local ids (rows in the order of ``verts``, each row's entries in CSR
    order); growing starts from the vertex farthest in hops from ``verts[0]`` (the first of
    the farthest; every stored entry is an edge).

    Parameters
    ----------
    level : Level
        The graph.
    verts : ndarray of int64, shape (k,)
        Distinct vertices, ``k >= 1``.
    wloc : ndarray of float64, shape (k,)
        Their weights.
    target, tol : float
        As for :func:`grow_fm`.
    passes : int
        As for :func:`grow_fm`.

    Returns
    -------
    ndarray of bool, shape (k,)
        The grown side over ``verts``.
    """
    verts = np.ascontiguousarray(verts, dtype=np.int64)
    k = verts.shape[0]
    _need(verts.ndim == 1 and k >= 1, "verts must not be empty")
    _need(
        bool(np.all((verts >= 0) & (verts < level.n))) and np.unique(verts).shape[0] == k,
        "verts must hold distinct vertices in [0, n)",
    )
    loc = np.full(level.n, -1, dtype=np.int64)
    loc[verts] = np.arange(k)
    sip, six, siw = [0], [], []
    for v in verts.tolist():
        for q in range(level.ip[v], level.ip[v + 1]):
            u = int(loc[level.ix[q]])
            if u >= 0:
                six.append(u)
                siw.append(float(level.iw[q]))
        sip.append(len(six))
    dist = [-1] * k
    dist[0] = 0
    frontier = [0]
    while frontier:
        nxt = []
        for v in frontier:
            for u in six[sip[v] : sip[v + 1]]:
                if dist[u] < 0:
                    dist[u] = dist[v] + 1
                    nxt.append(u)
        frontier = nxt
    a = int(np.argmax(dist))
    return grow_fm(
        np.asarray(sip, dtype=np.int64),
        np.asarray(six, dtype=np.int64),
        np.asarray(siw, dtype=np.float64),
        wloc,
        target,
        a,
        tol,
        passes,
        np.zeros(k, dtype=bool),
    )


def match_heavy(level, vw, max_w, order) -> np.ndarray:
    """Heavy-edge matching (the loop :func:`~coalloc.taskmap.levels.coarsen_level` ran
    before the kernel, issue 40 h60cpu).

    Vertices are visited in ``order``; each unmatched one is matched with the unmatched
    neighbour (itself excluded) of largest pair weight whose weight with it stays at most
    ``max_w`` (NumPy's ``argmax``: the first of equals), or with itself where none is.

    Parameters
    ----------
    level : Level
        The graph.
    vw : ndarray of float64, shape (n,)
        Vertex weights.
    max_w : float
        The largest weight of a matched pair.
    order : ndarray of int64
        The visiting order (vertices in ``[0, n)``).

    Returns
    -------
    ndarray of int64, shape (n,)
        The partner of every vertex (itself when alone; -1 when never visited).
    """
    vw = np.ascontiguousarray(vw, dtype=np.float64)
    order = np.ascontiguousarray(order, dtype=np.int64)
    _need(vw.shape == (level.n,), "vw must have length n")
    _need(order.ndim == 1, "order must be 1-D")
    _need(bool(np.all((order >= 0) & (order < level.n))), "order must hold vertices in [0, n)")
    ip, ix, iw = level.ip, level.ix, level.iw
    match = np.full(level.n, -1, dtype=np.int64)
    for v in order.tolist():
        if match[v] >= 0:
            continue
        lo, hi = ip[v], ip[v + 1]
        best = v
        if hi > lo:
            nb = ix[lo:hi]
            ok = (match[nb] < 0) & (nb != v) & (vw[nb] + vw[v] <= max_w)
            if ok.any():
                w = np.where(ok, iw[lo:hi], -1.0)
                best = int(nb[int(np.argmax(w))])
        match[v] = best
        match[best] = v
    return match


def hop_distances(indptr, indices, src: int) -> np.ndarray:
    """Hop distances from ``src`` over the stored entries of a CSR graph (float64, ``-1``:
    unreachable): a plain breadth-first search (``bisection.hop_distances`` below 128
    vertices before the kernel, issue 40 h60cpu).

    Parameters
    ----------
    indptr, indices : ndarray of int64
        The graph as CSR (every stored entry an edge, followed from its row).
    src : int
        The source vertex.

    Returns
    -------
    ndarray of float64, shape (n,)
        The distances.
    """
    sip = np.ascontiguousarray(indptr, dtype=np.int64)
    six = np.ascontiguousarray(indices, dtype=np.int64)
    n = sip.shape[0] - 1
    _need(sip.ndim == 1 and n >= 0, "indptr must be 1-D and non-empty")
    _need(sip[0] == 0 and sip[-1] == six.shape[0], "indptr must start at 0 and span indices")
    _need(bool(np.all(np.diff(sip) >= 0)), "indptr must be non-decreasing")
    _need(bool(np.all((six >= 0) & (six < n))), "indices must be in [0, n)")
    _need(0 <= src < n, "src must be a vertex in [0, n)")
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


def apply_move(level, routes, m, lload, nload, w: float, t: int, b: int) -> None:
    """Move task ``t`` (weight ``w``) to processor ``b`` in place (the NumPy code of
    ``refinement.RefineState.move`` before the kernel, issue 40 h60cpu): ``+v`` on every
    link of the route from ``b`` to each neighbour's processor, then ``-v`` from the old
    processor, in that order (``np.add.at``: one addition after another); then the
    processors' loads and ``m[t]``.

    Parameters
    ----------
    level : Level
        The graph.
    routes : PairRoutes
        The routes between processors.
    m : ndarray of int64, shape (n,)
        The mapping (updated).
    lload : ndarray of float64, shape (E,)
        The links' loads (updated).
    nload : ndarray of float64, shape (P,)
        The processors' loads (updated).
    w : float
        The task's weight.
    t, b : int
        The task and its new processor.
    """
    for arr, kind, size, name in ((m, np.int64, level.n, "m"), (lload, np.float64, routes.E,
                                  "lload"), (nload, np.float64, routes.P, "nload")):  # fmt: skip
        _need(
            isinstance(arr, np.ndarray) and arr.dtype == kind and arr.ndim == 1
            and arr.flags.c_contiguous and arr.flags.writeable and arr.shape[0] == size,
            f"{name} must be a writeable contiguous 1-D {np.dtype(kind).name} array of "
            f"length {size}",
        )  # fmt: skip
    _need(0 <= t < level.n, "t must be a vertex in [0, n)")
    _need(0 <= b < routes.P, "b must be a processor in [0, P)")
    lo, hi = level.ip[t], level.ip[t + 1]
    q = m[level.ix[lo:hi]]
    _need(0 <= m[t] < routes.P and bool(np.all((q >= 0) & (q < routes.P))),
          "m must hold processors in [0, P)")  # fmt: skip
    vals = level.iw[lo:hi]
    a = int(m[t])
    rptr = routes.rptr
    pairs = np.concatenate([b * routes.P + q, a * routes.P + q])
    vals = np.concatenate([vals, -vals])
    lent, own = _expand(rptr[pairs], rptr[pairs + 1] - rptr[pairs])
    np.add.at(lload, routes.rlink[lent], vals[own])
    nload[a] -= w
    nload[b] += w
    m[t] = b
