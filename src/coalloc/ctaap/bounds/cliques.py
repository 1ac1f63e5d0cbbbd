"""Capped maximum cliques of the compatibility graph of a set of clusters (:func:`capped_clique`):
the branch and bound with colouring bounds the cluster sets' bound runs on each set.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from ..._shared.constraints import checked
from ..model import Offer, Request
from ._common import (
    _poll,
)

# Most bytes of adjacency blocks kept over one call of cluster_set_bound.
_BLOCK_BYTES = 64 << 20


# Largest number of (task, cluster) vertices a cluster set's search builds.
_MAX_SET_VERTICES = 6000


# Largest matrix product (multiply-adds) the pair count bound does.
_MAX_COUNT_WORK = 1e10


#: Cells (or, from a sparse request, stored links) of one chunk of the cluster sets' array
#: work, between two looks at a ``stop_at``: on the 5,000-task Fig. 3 request (25 million
#: links) one adjacency block ``B[rows][:, cols]`` took 1.5 s unpolled at load 7, and the
#: bound ran +1.2 s past the anytime search's deadline (issue 36); 2^18 links take a few ms.
_CHUNK = 1 << 18


def _row_chunks(n_rows: int, per_row: int):
    """``slice``s of ``range(n_rows)`` of about :data:`_CHUNK` cells, ``per_row`` a row."""
    step = max(1, _CHUNK // max(1, per_row))
    return [slice(r, min(r + step, n_rows)) for r in range(0, n_rows, step)]


def _to_bits(rows: np.ndarray, stop_at: Optional[float] = None) -> list:
    """Each boolean row as a Python integer bitset (bit v set: column v true); looks at
    ``stop_at`` between chunks of rows."""
    out: list = []
    for sl in _row_chunks(rows.shape[0], rows.shape[1]):
        _poll(stop_at)
        packed = np.packbits(rows[sl], axis=1, bitorder="little")
        out.extend(int.from_bytes(packed[r].tobytes(), "little") for r in range(packed.shape[0]))
    return out


def _lowbit(q: int) -> int:
    return (q & -q).bit_length() - 1


class _CappedClique:
    """Largest clique of a graph with at most ``caps[g]`` vertices of each group ``g``.

    Branch and bound after Tomita's MCQ: at every node the candidates are coloured greedily
    (each colour class is an independent set, so a clique takes at most one vertex of each
    class), and the bound of a node is ``|C| + min(colours(P), sum_g min(caps left,
    colours(P_g)))``. :meth:`run` returns ``(best, upper)``: the largest capped clique found
    and an upper bound on every capped clique, exact (``best == upper``) when the search
    ends within ``max_work`` vertices coloured (its work, counted); a node reached after that
    contributes its colouring bound, so ``upper`` is valid however early the search stops,
    and it is the same on every run. ``stop_at`` (a caller's deadline) raises
    :class:`BoundStopped` instead.
    """

    def __init__(self, adj: list, group: np.ndarray, caps: np.ndarray, max_work: float,
                 stop_at: Optional[float] = None):  # fmt: skip
        self.adj = adj
        # each vertex's non-neighbours without itself, as a mask (one AND per vertex coloured)
        self.away = [~(row | (1 << v)) for v, row in enumerate(adj)]
        self.nv = len(adj)
        self.caps = [int(c) for c in caps]
        self.n_groups = len(self.caps)
        self.group = [int(g) for g in group]
        masks = [0] * self.n_groups
        for v, g in enumerate(self.group):
            masks[g] |= 1 << v
        self.masks = masks
        self.max_work = max_work
        self.stop_at = stop_at
        self.work = 0
        self.best = 0
        self.nodes = 0
        self.stopped = False

    def _colour(self, p: int):
        """Greedy colouring of ``p`` in index order: vertices and colours, colours rising."""
        away = self.away
        verts, cols = [], []
        add_vert, add_col = verts.append, cols.append
        k = 0
        u = p
        work, max_work = self.work, self.max_work  # counted locally, stored back
        while u:
            k += 1
            if work > max_work:
                self.work = work
                self.stopped = True
                return None, None
            q = u  # the colour class grows from the uncoloured vertices, lowest first
            while q:
                work += 1
                if not work & 4095:
                    self.work = work
                    _poll(self.stop_at)
                low = q & -q
                v = low.bit_length() - 1
                q &= away[v]
                u ^= low  # v is in q, a subset of u
                add_vert(v)
                add_col(k)
        self.work = work
        return verts, cols

    def _n_colours(self, p: int) -> Optional[int]:
        """The number of colours :meth:`_colour` gives ``p`` (the same work, counted the
        same way), or None when the work cap is reached first."""
        away = self.away
        k = 0
        u = p
        work, max_work = self.work, self.max_work
        while u:
            k += 1
            if work > max_work:
                self.work = work
                self.stopped = True
                return None
            q = u
            while q:
                work += 1
                if not work & 4095:
                    self.work = work
                    _poll(self.stop_at)
                low = q & -q
                q &= away[low.bit_length() - 1]
                u ^= low
        self.work = work
        return k

    def _group_bound(self, p: int, left: list) -> int:
        total = 0
        for g in range(self.n_groups):
            q = p & self.masks[g]
            if not q or left[g] <= 0:
                continue
            colours = self._n_colours(q)
            if colours is None:
                return sum(left)
            total += min(left[g], colours)
        return total

    def _expand(self, size: int, p: int, left: list) -> int:
        self.nodes += 1
        if not p:
            if size > self.best:
                self.best = size
            return size
        room = sum(x for g, x in enumerate(left) if x > 0 and p & self.masks[g])
        if size + room <= self.best:  # the caps alone close the node
            return size + room
        verts, cols = self._colour(p)
        if cols is None:  # the work cap was reached while colouring
            self.best = max(self.best, size)
            return size + room
        ub = size + cols[-1]
        if self.n_groups > 1:
            ub = min(ub, size + self._group_bound(p, left))
        else:
            ub = min(ub, size + left[0])
        if ub <= self.best:
            return ub
        if self.stopped or self.work > self.max_work:
            self.stopped = True
            if size > self.best:
                self.best = size
            return ub
        res = size  # the clique C itself
        if size > self.best:
            self.best = size
        for t in range(len(verts) - 1, -1, -1):
            v, c = verts[t], cols[t]
            if size + min(c, room) <= self.best:  # every vertex left has a colour <= c
                res = max(res, size + min(c, room))
                break
            g = self.group[v]
            left[g] -= 1
            q = p & self.adj[v]
            if left[g] <= 0:
                q &= ~self.masks[g]
            res = max(res, self._expand(size + 1, q, left))
            left[g] += 1
            p &= ~(1 << v)
        return res

    def run(self) -> tuple:
        import sys

        if self.nv == 0:
            return 0, 0
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 10 * self.nv + 1000))
        try:
            p = (1 << self.nv) - 1
            for g, c in enumerate(self.caps):  # groups without room take no vertex
                if c <= 0:
                    p &= ~self.masks[g]
            upper = self._expand(0, p, list(self.caps))
        finally:
            sys.setrecursionlimit(old)
        return self.best, max(upper, self.best)


def _set_adjacency(request: Request, offer: Offer, compat: np.ndarray, clusters, dense=None,
                   blocks: Optional[dict] = None, stop_at: Optional[float] = None):  # fmt: skip
    """The compatibility graph of the (task, cluster) pairs of a cluster set.

    Vertices: compatible pairs ``(i, j)``, ``j`` in ``clusters`` (cluster by cluster, tasks
    rising); ``(i, j)`` and ``(k, l)`` are adjacent when ``i != k`` and constraint (4) lets
    ``i`` sit on ``j`` beside ``k`` on ``l`` (``B[i,k] <= Bhat[j,l]`` and
    ``B[k,i] <= Bhat[l,j]``). A feasible allocation's pairs on ``clusters`` are a clique with
    at most ``cap[j]`` vertices of cluster ``j``. Returns the boolean adjacency and the
    position in ``clusters`` of each vertex. ``blocks``: a dict kept by the caller over the
    sets of one instance, the block of each cluster pair ``(j, l)`` computed once (a pair's
    graph repeats its two singles' blocks), up to :data:`_BLOCK_BYTES` in all. ``stop_at``
    (a caller's deadline) raises :class:`BoundStopped` between chunks of rows of about
    :data:`_CHUNK` cells or links (the same arrays as in one piece).
    """
    parts = [np.flatnonzero(compat[:, j]) for j in clusters]
    sizes = [p.size for p in parts]
    nv = int(sum(sizes))
    group = np.repeat(np.arange(len(clusters)), sizes)
    bhat = offer.bandwidth
    B = request.bandwidth

    def part(rows, cols):  # B[rows][:, cols] as a dense array, a chunk of rows at a time
        out = np.empty((rows.size, cols.size), dtype=np.float64)
        if dense is not None:
            chunks = _row_chunks(rows.size, cols.size)
        else:  # by stored links: a row of B costs its links, whatever cols is
            links = np.cumsum(np.diff(B.indptr)[rows])
            cuts = np.searchsorted(links, np.arange(_CHUNK, int(links[-1]) if links.size else 0,
                                                    _CHUNK), side="right")  # fmt: skip
            edges = np.unique(np.concatenate([[0], cuts, [rows.size]]))
            chunks = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
        for sl in chunks:
            _poll(stop_at)
            r = rows[sl]
            out[sl] = dense[np.ix_(r, cols)] if dense is not None else B[r][:, cols].toarray()
        return out

    adj = np.zeros((nv, nv), dtype=bool)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    for a, j in enumerate(clusters):  # block by block: bounded temporary memory
        ta = parts[a]
        for b in range(a, len(clusters)):
            l, tb = clusters[b], parts[b]
            block = None if blocks is None else blocks.get((j, l))
            if block is None:
                out_ = part(ta, tb)  # B[i, k]: i on j, k on l
                back = None
                if not request.symmetric:  # else B[k, i] = B[i, k]: one comparison
                    back = out_ if a == b else part(tb, ta)  # B[k, i]
                block = np.empty(out_.shape, dtype=bool)
                for sl in _row_chunks(ta.size, tb.size):
                    _poll(stop_at)
                    if back is None:
                        block[sl] = out_[sl] <= min(bhat[j, l], bhat[l, j])
                    else:
                        block[sl] = (out_[sl] <= bhat[j, l]) & (back[:, sl].T <= bhat[l, j])
                    block[sl] &= ta[sl, None] != tb[None, :]
                if blocks is not None and blocks.get("bytes", 0) + block.nbytes <= _BLOCK_BYTES:
                    blocks[(j, l)] = block
                    blocks["bytes"] = blocks.get("bytes", 0) + block.nbytes
            for sl in _row_chunks(block.shape[0], block.shape[1]):
                _poll(stop_at)
                adj[starts[a] + sl.start : starts[a] + sl.stop, starts[b] : starts[b + 1]] = (
                    block[sl])
            for sl in _row_chunks(block.shape[1], block.shape[0]):  # the transposed copy
                _poll(stop_at)
                adj[starts[b] + sl.start : starts[b] + sl.stop, starts[a] : starts[a + 1]] = (
                    block[:, sl].T)
    return adj, group


def _greedy_clique(adj: np.ndarray, group: np.ndarray, caps,
                   stop_at: Optional[float] = None) -> int:  # fmt: skip
    """Size of a capped clique grown greedily (largest degree among the candidates first);
    ``adj`` symmetric (degrees are summed over rows, contiguous in memory). ``stop_at`` (a
    caller's deadline) raises :class:`BoundStopped` between its steps (each O(vertices) or
    more: 6,000 vertices and hundreds of steps took 0.1-0.2 s under load)."""
    left = np.asarray(caps, dtype=np.int64).copy()
    cand = left[group] > 0
    deg = _poll_sum(adj, cand, stop_at)  # neighbours among the candidates
    size = 0
    while cand.any():
        _poll(stop_at)
        v = int(np.flatnonzero(cand)[int(np.argmax(deg[cand]))])
        size += 1
        left[group[v]] -= 1
        keep = cand & adj[v] & (left[group] > 0)
        gone = cand & ~keep
        deg -= _poll_sum(adj, gone, stop_at)
        cand = keep
    return size


def _poll_sum(adj: np.ndarray, rows: np.ndarray, stop_at: Optional[float]) -> np.ndarray:
    """``adj[rows].sum(axis=0)`` (int64; ``rows`` a boolean mask), summed a chunk of rows
    at a time with a look at ``stop_at`` before each (the same sum: integers)."""
    idx = np.flatnonzero(rows)
    total = np.zeros(adj.shape[1], dtype=np.int64)
    for sl in _row_chunks(idx.size, adj.shape[1]):
        _poll(stop_at)
        total += adj[idx[sl]].sum(axis=0, dtype=np.int64)
    return total


def _search(
    adj: np.ndarray, group: np.ndarray, caps, max_work: float, found: int = 0,
    stop_at: Optional[float] = None,
) -> _CappedClique:  # fmt: skip
    """A capped-clique search on ``adj``, vertices by falling degree (the colouring's order);
    ``found``: the size of a capped clique known to exist (pruning starts from it)."""
    # the degrees, the reordered rows and their bitsets a chunk of rows at a time, with a
    # look at stop_at between chunks (6,000 vertices: 36 million cells)
    degree = np.zeros(adj.shape[0], dtype=np.int64)
    for sl in _row_chunks(adj.shape[0], adj.shape[1]):
        _poll(stop_at)
        degree[sl] = adj[sl].sum(axis=1)
    order = np.argsort(-degree, kind="stable")
    bits: list = []
    for sl in _row_chunks(order.size, order.size):
        _poll(stop_at)
        bits.extend(_to_bits(adj[np.ix_(order[sl], order)]))
    search = _CappedClique(bits, group[order], np.asarray(caps, np.int64), max_work,
                           stop_at)  # fmt: skip
    search.best = int(found)
    return search


def _pair_count_bound(adj: np.ndarray, group: np.ndarray, beta: tuple,
                      stop_at: Optional[float] = None) -> int:  # fmt: skip
    """Bound on a capped clique of a two-cluster graph by the size of its smaller side.

    With ``k`` vertices on side ``b`` the clique's side ``a`` lies in the common
    neighbourhood of any of them: ``k = 0`` gives ``beta_a``; ``k = 1`` gives ``1 +
    min(beta_a, D1)`` with ``D1`` the largest side-``a`` degree of a side-``b`` vertex;
    ``k >= 2`` gives ``beta_b + min(beta_a, D2)`` with ``D2`` the largest common side-``a``
    neighbourhood of two adjacent side-``b`` vertices. The bound is the worst case, taken
    for both choices of ``b``, the smaller kept. ``stop_at`` (a caller's deadline) raises
    :class:`BoundStopped` between chunks of pairs.
    """
    best = beta[0] + beta[1]
    split = int(np.count_nonzero(group == 0))
    if np.all(group[:split] == 0):  # side 0 first (as _set_adjacency builds it): views
        sides = (slice(0, split), slice(split, group.size))
    else:
        sides = (group == 0, group == 1)
    for b in (0, 1):
        a = 1 - b
        sb, sa = sides[b], sides[a]
        X = adj[sb, sa] if isinstance(sb, slice) else adj[np.ix_(sb, sa)]
        if X.shape[0] == 0:
            best = min(best, beta[a])
            continue
        deg = X.sum(axis=1)
        d1 = int(deg.max()) if deg.size else 0
        cases = [beta[a], min(1, beta[b]) + min(beta[a], d1)]
        if beta[b] >= 2:
            Ab = adj[sb, sb] if isinstance(sb, slice) else adj[np.ix_(sb, sb)]
            if Ab.any():
                d2 = _most_common_neighbours(X, Ab, stop_at)
                cases.append(beta[b] + min(beta[a], d2))
        best = min(best, max(cases))
    return int(best)


#: Bits set in each byte (numpy < 2 has no bitwise_count).
_BITS_SET = np.array([bin(b).count("1") for b in range(256)], dtype=np.uint8)


#: Vertex pairs whose common neighbourhoods :func:`_most_common_neighbours` counts at once
#: (and between which it looks at its ``stop_at``): 2^12 pairs of the rows of a 1,000-task
#: Fig. 2 request take a few ms; 2^16 took 40-100 ms at load 12, past a 0.05-0.14 s limit.
_PAIR_CHUNK = 1 << 12


def _most_common_neighbours(X: np.ndarray, pairs: np.ndarray,
                            stop_at: Optional[float] = None) -> int:  # fmt: skip
    """Largest ``|N(u) & N(v)|`` over the pairs ``u < v`` with ``pairs[u, v]``, where
    ``N(u)`` is row ``u`` of the boolean ``X``: bit-packed rows, counted pair by pair (an
    exact count, without the BLAS matrix product ``X X^T``, whose threads contend with the
    machine's other work: 16-40 ms for a 251 x 34 side of a Fig. 3 pair at load 8).
    ``stop_at`` raises :class:`BoundStopped` between chunks (the count is exact or none)."""
    iu, iv = np.nonzero(np.triu(pairs, 1) | np.triu(pairs.T, 1))
    if iu.size == 0:
        return 0
    packed = np.packbits(X, axis=1)
    best = 0
    for at in range(0, iu.size, _PAIR_CHUNK):
        _poll(stop_at)
        u, v = iu[at : at + _PAIR_CHUNK], iv[at : at + _PAIR_CHUNK]
        both = np.bitwise_and(packed[u], packed[v])
        best = max(best, int(_BITS_SET[both].sum(axis=1, dtype=np.int64).max()))
    return best


@checked("coalloc.ctaap.constraints", "bounds.capped_clique", tables="FUNCTIONS")
def capped_clique(adj_rows: np.ndarray, group: np.ndarray, caps, *, max_work=None) -> tuple:
    """Largest clique with at most ``caps[g]`` vertices of group ``g``: ``(best, upper)``.

    Parameters
    ----------
    adj_rows : ndarray of bool, shape (V, V)
        Symmetric adjacency, no loops.
    group : ndarray of int, shape (V,)
        Group of each vertex, ``0 .. len(caps) - 1``.
    caps : sequence of int
        Most vertices of each group in the clique.
    max_work : int, optional
        Vertices the search may colour (its work; None: no cap); a search stopped at
        the cap returns a valid (possibly larger) ``upper``, the same on every run.

    Returns
    -------
    (int, int)
        The largest capped clique found, and an upper bound on every capped clique (equal
        when the search finished).

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.ctaap.bounds import capped_clique
    >>> adj = np.ones((4, 4), bool) & ~np.eye(4, dtype=bool)      # K4
    >>> capped_clique(adj, np.array([0, 0, 1, 1]), [1, 2])
    (3, 3)
    """
    adj_rows = np.asarray(adj_rows, dtype=bool)
    if adj_rows.ndim != 2 or adj_rows.shape[0] != adj_rows.shape[1]:
        raise ValueError(f"adj_rows must be a square matrix, got shape {adj_rows.shape}")
    group = np.asarray(group, dtype=np.int64)
    caps = np.asarray(caps, dtype=np.int64)
    if group.shape != (adj_rows.shape[0],):
        raise ValueError("group must have one entry per vertex")
    if group.size and (group.min() < 0 or group.max() >= caps.size):
        raise ValueError("group entries must index caps")
    cap = math.inf if max_work is None else int(max_work)  # checked by the table (@checked)
    adj = adj_rows & adj_rows.T
    np.fill_diagonal(adj, False)
    order = np.argsort(-adj.sum(axis=1), kind="stable")
    adj = adj[np.ix_(order, order)]
    return _CappedClique(_to_bits(adj), group[order], caps, cap).run()
