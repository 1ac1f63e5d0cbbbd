"""The task side of the multilevel mapper: the levels of the coarsening.

A :class:`TaskLevel` is one task graph of the hierarchy (symmetric CSR of the pair weights,
vertex weights, and the map to the next coarser level). :func:`coarsen_level` contracts a
level by heavy-edge matching (vertices in a seeded random order, each matched with the
unmatched neighbour it exchanges most with, under a weight cap). A stream inside a coarse
vertex stays on one processor, so a coarse mapping has exactly the loads of its projection.
:func:`coarse_target` is where the coarsening stops: about ``coarse_factor x`` processors
vertices, or :data:`HUB_VERTICES` on a hub-heavy task graph (degree spread above
:data:`HUB_SPREAD`) where that is at most half of it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from . import _multilevel

__all__ = [
    "HUB_CLUSTER",
    "HUB_ROUNDS",
    "HUB_SPREAD",
    "HUB_VERTICES",
    "MATCH_KERNEL",
    "TaskLevel",
    "cluster_level",
    "coarse_target",
    "coarsen_level",
    "hub_clustering",
    "degree_spread",
    "expand",
    "subgraph",
]

#: Degree spread (standard deviation / mean of the tasks' numbers of neighbours,
#: :func:`degree_spread`) above which a task graph is hub-heavy and coarsened further
#: (:data:`HUB_VERTICES`). Measured (h56hub): the held-back set's Barabasi-Albert and power-law
#: cluster graphs have 1.07-1.46, every other graph of it and of ``vs_peers``' 30 at most 0.87
#: (a 4-ary reduction tree; meshes, stencils and geometric graphs 0.0-0.40).
HUB_SPREAD = 1.0
#: On a hub-heavy graph whose usual target is at least twice this, the coarsening goes on
#: to this many vertices (at least one a processor). h56hub: ba 3000 m4 on tree 16x4x4 (256
#: processors) stopped at 996 vertices (target 1,024) -- its matching shrinks it by 0.58 a
#: level, as a mesh's (0.54): the target, not the matching, kept the coarsest level large;
#: the coarse starts of a 256-vertex level, refined through three more levels, map it
#: 447 -> 366.5 at 5 s and 373 -> 320.8 untimed (KaHIP's sweep: 322). Where the usual target
#: is near this (plc 1200 on 72 processors, 288) one more level cost 2-9 % (38.04 / 40.52
#: against 37.3 untimed / at 5 s). 0: the usual target on every graph, as before.
HUB_VERTICES = 256
#: Where :data:`HUB_VERTICES` applies, the levels are made by size-constrained label
#: propagation (:func:`cluster_level`) instead of heavy-edge matching. False: matching.
HUB_CLUSTER = True
#: Rounds of :func:`cluster_level` (fewer when a round moves under 1 % of the vertices).
HUB_ROUNDS = 3


class TaskLevel:
    """One level: symmetric CSR (pair weights), vertex weights, map to the next coarser.

    Parameters
    ----------
    ip, ix : ndarray of int64
        ``indptr`` and ``indices`` of the symmetric CSR (no diagonal, no duplicates).
    iw : ndarray of float64
        The pair weights (``data`` of the CSR).
    vw : ndarray of float64, shape (n,)
        The vertex weights (compute requirements).

    Attributes
    ----------
    n : int
        Vertices.
    cmap : ndarray of int64 or None
        The coarse vertex of each vertex, once :func:`coarsen_level` has contracted it.

    Examples
    --------
    >>> import numpy as np
    >>> lv = TaskLevel(np.array([0, 1, 2]), np.array([1, 0]), np.array([3.0, 3.0]),
    ...                np.array([1.0, 2.0]))
    >>> lv.n, lv.cmap
    (2, None)
    """

    def __init__(self, ip: np.ndarray, ix: np.ndarray, iw: np.ndarray, vw: np.ndarray):
        self.ip, self.ix, self.iw, self.vw = ip, ix, iw, vw
        self.n = vw.shape[0]
        self.cmap: Optional[np.ndarray] = None
        self._kern = None

    @classmethod
    def of(cls, tasks) -> TaskLevel:
        """The finest level of a :class:`~coalloc.taskmap.model.TaskGraph`: its symmetric
        CSR (pairs in both directions) and its tasks' compute requirements, as the
        compiled kernels take them (int64 indices, float64 weights)."""
        ip, ix, iw = tasks.undirected_csr()
        return cls(
            np.asarray(ip, dtype=np.int64),
            np.asarray(ix, dtype=np.int64),
            np.asarray(iw, dtype=np.float64),
            tasks.node_weight.astype(np.float64),
        )

    @property
    def kern(self) -> _multilevel.Level:
        """The compiled view of the CSR (checked once, on first use)."""
        if self._kern is None:
            self._kern = _multilevel.Level(self.ip, self.ix, self.iw)
        return self._kern


def degree_spread(level: TaskLevel) -> float:
    """Standard deviation / mean of the vertices' numbers of neighbours (0 without edges).

    Parameters
    ----------
    level : TaskLevel
        The level.

    Returns
    -------
    float
        The spread: 0 on a regular graph, about 1-1.5 on a power-law one.

    Examples
    --------
    >>> import numpy as np
    >>> star = TaskLevel(np.array([0, 3, 4, 5, 6]), np.array([1, 2, 3, 0, 0, 0]),
    ...                  np.ones(6), np.ones(4))
    >>> round(degree_spread(star), 3)
    0.577
    """
    deg = np.diff(level.ip).astype(np.float64)
    mean = float(deg.mean()) if deg.shape[0] else 0.0
    return float(deg.std() / mean) if mean > 0 else 0.0


def coarse_target(level: TaskLevel, n_procs: int, coarse_factor: float) -> int:
    """Where the coarsening of ``level`` stops: about ``coarse_factor x n_procs`` vertices
    (at least 16); on a hub-heavy graph (:func:`degree_spread` above :data:`HUB_SPREAD`)
    whose usual target is at least twice :data:`HUB_VERTICES`, that many (at least
    ``n_procs``).

    Parameters
    ----------
    level : TaskLevel
        The finest level.
    n_procs : int
        Processors of the machine.
    coarse_factor : float
        Coarse vertices per processor (positive).

    Returns
    -------
    int
        The largest number of vertices of a coarsest level.

    Examples
    --------
    >>> import numpy as np
    >>> path = TaskLevel(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]), np.ones(4),
    ...                  np.ones(3))
    >>> coarse_target(path, 256, 4.0)
    1024
    """
    usual = max(int(coarse_factor * n_procs), 16)
    if _hub_gate(level, usual):
        return max(HUB_VERTICES, n_procs, 16)
    return usual


def _hub_gate(level: TaskLevel, usual: int) -> bool:
    """Hub-heavy and a usual target of at least twice :data:`HUB_VERTICES`."""
    return bool(HUB_VERTICES) and usual >= 2 * HUB_VERTICES and degree_spread(level) > HUB_SPREAD


def hub_clustering(level: TaskLevel, n_procs: int, coarse_factor: float) -> bool:
    """Whether the levels of ``level`` are made by :func:`cluster_level`: where
    :func:`coarse_target` lowers the target (and :data:`HUB_CLUSTER`).

    Parameters
    ----------
    level : TaskLevel
        The finest level.
    n_procs : int
        Processors of the machine.
    coarse_factor : float
        Coarse vertices per processor (positive).

    Returns
    -------
    bool
        True: label propagation; False: heavy-edge matching.

    Examples
    --------
    >>> import numpy as np
    >>> path = TaskLevel(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]), np.ones(4),
    ...                  np.ones(3))
    >>> hub_clustering(path, 256, 4.0)
    False
    """
    return HUB_CLUSTER and _hub_gate(level, max(int(coarse_factor * n_procs), 16))


def cluster_level(level: TaskLevel, max_w: float, rng: np.random.Generator,
                  rounds: Optional[int] = None) -> Optional[TaskLevel]:  # fmt: skip
    """The next coarser level by size-constrained label propagation, or None when it would
    shrink by less than 5 %.

    Every vertex starts as a cluster of its own. In each round (at most ``rounds``, default
    :data:`HUB_ROUNDS`; fewer when a round moves under 1 % of the vertices) the vertices are
    visited in the order of a permutation drawn from ``rng``; a vertex joins the neighbouring
    cluster it exchanges most with (the first met among equals) when that is strictly more
    than with its own and the cluster's weight with it stays at most ``max_w``. The clusters
    are the coarse vertices (numbered in order of their labels). On a power-law graph a
    hub gathers its neighbours where a matching pairs it with one (h56hub). Sets
    ``level.cmap``.

    Parameters
    ----------
    level : TaskLevel
        The level to contract.
    max_w : float
        The largest weight of a coarse vertex (a vertex heavier than it stays alone).
    rng : numpy.random.Generator
        Draws the visiting orders.
    rounds : int, optional
        The most rounds.

    Returns
    -------
    TaskLevel or None
        The coarse level (pair weights summed, no diagonal).

    Examples
    --------
    >>> import numpy as np
    >>> star = TaskLevel(np.array([0, 3, 4, 5, 6]), np.array([1, 2, 3, 0, 0, 0]),
    ...                  np.ones(6), np.ones(4))
    >>> coarse = cluster_level(star, 4.0, np.random.default_rng(0))
    >>> coarse.n, coarse.vw.tolist(), star.cmap.tolist()
    (1, [4.0], [0, 0, 0, 0])
    """
    n = level.n
    ptr, idx, wts = level.ip.tolist(), level.ix.tolist(), level.iw.tolist()
    vw = level.vw.tolist()
    lab, cw = list(range(n)), list(vw)
    for _ in range(HUB_ROUNDS if rounds is None else rounds):
        moved = 0
        for i, v in enumerate(rng.permutation(n).tolist()):
            if not i & 255:
                interrupt.check()  # a time limit or a batch's timeout
            conn: dict = {}
            for q in range(ptr[v], ptr[v + 1]):
                c = lab[idx[q]]
                conn[c] = conn.get(c, 0.0) + wts[q]
            own, wv = lab[v], vw[v]
            best, best_w = own, conn.get(own, 0.0)
            for c, w in conn.items():  # neighbours' order: the first among equals
                if w > best_w and c != own and cw[c] + wv <= max_w:
                    best, best_w = c, w
            if best != own:
                cw[own] -= wv
                cw[best] += wv
                lab[v] = best
                moved += 1
        if moved < 0.01 * n:
            break
    return _contract(level, np.asarray(lab, dtype=np.int64))


#: The heavy-edge matching of :func:`coarsen_level` by the compiled ``match_heavy`` (twin:
#: :func:`coalloc.taskmap._reference.multilevel.match_heavy`, the loop it replaces; the
#: same matching, so the same levels and answers). The Python loop was 8-10 % of the
#: untimed mapper's CPU on the 30 of ``bench/taskmap/vs_peers.py`` (the multilevel splits'
#: contractions, ``splits._vcycle``, most of it; issue 40, h60cpu). False: the loop.
MATCH_KERNEL = True


def coarsen_level(level: TaskLevel, max_w: float, rng: np.random.Generator,
                  cluster: bool = False) -> Optional[TaskLevel]:  # fmt: skip
    """The next coarser level by heavy-edge matching (``cluster``: by
    :func:`cluster_level`), or None when it would shrink by less than 5 %.

    Vertices are visited in the order of a permutation drawn from ``rng``; each unmatched one
    is matched with the unmatched neighbour of largest pair weight whose weight with it stays
    at most ``max_w``. Sets ``level.cmap``.

    Parameters
    ----------
    level : TaskLevel
        The level to contract.
    max_w : float
        The largest weight of a coarse vertex.
    rng : numpy.random.Generator
        Draws the visiting order.
    cluster : bool, default False
        Label propagation (:func:`cluster_level`) instead of the matching.

    Returns
    -------
    TaskLevel or None
        The coarse level (pair weights summed, no diagonal).

    Examples
    --------
    >>> import numpy as np
    >>> lv = TaskLevel(np.array([0, 1, 2]), np.array([1, 0]), np.array([3.0, 3.0]),
    ...                np.array([1.0, 2.0]))
    >>> coarse = coarsen_level(lv, 10.0, np.random.default_rng(0))
    >>> coarse.n, coarse.vw.tolist(), lv.cmap.tolist()
    (1, [3.0], [0, 0])
    """
    if cluster:
        return cluster_level(level, max_w, rng)
    n, vw = level.n, level.vw
    order = rng.permutation(n)
    if MATCH_KERNEL:  # the same matching, compiled (twin: _reference's match_heavy)
        interrupt.check()
        match = _multilevel.match_heavy(level.kern, vw, float(max_w), order)
    else:  # the twin itself: the loop this function ran before the kernel
        from ._reference.multilevel import match_heavy as plain

        match = plain(level, vw, float(max_w), order)
    return _contract(level, np.minimum(np.arange(n), match))


def _contract(level: TaskLevel, rep: np.ndarray) -> Optional[TaskLevel]:
    """The coarse level whose vertices are the distinct labels ``rep`` of the vertices
    (numbered in increasing label order), or None when it would shrink by less than 5 %.
    Sets ``level.cmap``."""
    n, ip, ix, iw = level.n, level.ip, level.ix, level.iw
    roots, cmap = np.unique(rep, return_inverse=True)
    nc = roots.shape[0]
    if nc > 0.95 * n:
        return None
    cvw = np.bincount(cmap, weights=level.vw, minlength=nc)
    rows = np.repeat(np.arange(n), np.diff(ip))
    a = sp.csr_matrix((iw, (cmap[rows], cmap[ix])), shape=(nc, nc))
    a.setdiag(0)
    a.eliminate_zeros()
    a.sort_indices()
    level.cmap = cmap
    return TaskLevel(
        a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data.astype(np.float64), cvw
    )


#: :func:`expand` by the compiled ``_multilevel.expand`` (twin:
#: :func:`coalloc.taskmap._reference.refine.expand`, the NumPy code it replaces; integer
#: outputs, so the same arrays and answers). 40,000 calls on the 30 of
#: ``bench/taskmap/vs_peers.py``, 15 us of NumPy calls each for a few dozen entries (5 % of
#: the untimed mapper's CPU; issue 40, h63cpu). False: the NumPy code.
EXPAND_KERNEL = True


def expand(starts: np.ndarray, lens: np.ndarray) -> tuple:
    """Indices ``starts[i] + 0..lens[i]-1`` concatenated, and the owner ``i`` of each.

    Parameters
    ----------
    starts, lens : ndarray of int64, shape (k,)
        The first index and the length of each run.

    Returns
    -------
    index : ndarray of int64
        The runs' indices, one after another.
    owner : ndarray of int64
        The run of each index.

    Examples
    --------
    >>> import numpy as np
    >>> [a.tolist() for a in expand(np.array([5, 0]), np.array([2, 3]))]
    [[5, 6, 0, 1, 2], [0, 0, 1, 1, 1]]
    """
    if EXPAND_KERNEL:
        return _multilevel.expand(starts, lens)
    from ._reference.refine import expand as plain  # the twin: the NumPy code before

    return plain(starts, lens)


def subgraph(level: TaskLevel, verts: np.ndarray) -> tuple:
    """CSR ``(indptr, indices, data)`` of the graph induced by ``verts`` (local ids).

    Parameters
    ----------
    level : TaskLevel
        The level.
    verts : ndarray of int64
        Distinct vertices of the level; vertex ``verts[i]`` is local vertex ``i``.

    Returns
    -------
    tuple of ndarray
        ``(indptr, indices, data)`` over the local ids.

    Examples
    --------
    >>> import numpy as np
    >>> lv = TaskLevel(np.array([0, 1, 3, 4]), np.array([1, 0, 2, 1]),
    ...                np.array([3.0, 3.0, 5.0, 5.0]), np.ones(3))
    >>> [a.tolist() for a in subgraph(lv, np.array([1, 2]))]
    [[0, 1, 2], [1, 0], [5.0, 5.0]]
    """
    n_loc = verts.shape[0]
    loc = np.full(level.n, -1, dtype=np.int64)
    loc[verts] = np.arange(n_loc)
    ent, own = expand(level.ip[verts], level.ip[verts + 1] - level.ip[verts])
    nb = loc[level.ix[ent]]
    ok = nb >= 0
    indptr = np.zeros(n_loc + 1, dtype=np.int64)
    np.cumsum(np.bincount(own[ok], minlength=n_loc), out=indptr[1:])
    # rows come in order (own is sorted) and a level's CSR has no duplicate entries
    return indptr, nb[ok], level.iw[ent][ok]
