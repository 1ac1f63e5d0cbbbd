"""The task side of the multilevel mapper: the levels of the coarsening.

A :class:`TaskLevel` is one task graph of the hierarchy (symmetric CSR of the pair weights,
vertex weights, and the map to the next coarser level). :func:`coarsen_level` contracts a
level by heavy-edge matching (vertices in a seeded random order, each matched with the
unmatched neighbour it exchanges most with, under a weight cap). A stream inside a coarse
vertex stays on one processor, so a coarse mapping has exactly the loads of its projection.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from . import _multilevel

__all__ = ["TaskLevel", "coarsen_level", "expand", "subgraph"]


class TaskLevel:
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


def coarsen_level(level: TaskLevel, max_w: float, rng: np.random.Generator) -> Optional[TaskLevel]:
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
    return TaskLevel(
        a.indptr.astype(np.int64), a.indices.astype(np.int64), a.data.astype(np.float64), cvw
    )


def expand(starts: np.ndarray, lens: np.ndarray) -> tuple:
    """Indices ``starts[i] + 0..lens[i]-1`` concatenated, and the owner ``i`` of each."""
    total = int(lens.sum())
    owner = np.repeat(np.arange(lens.shape[0]), lens)
    if total == 0:
        return np.zeros(0, dtype=np.int64), owner
    first = np.cumsum(lens) - lens
    return np.repeat(starts, lens) + (np.arange(total) - first[owner]), owner


def subgraph(level: TaskLevel, verts: np.ndarray) -> tuple:
    """CSR ``(indptr, indices, data)`` of the graph induced by ``verts`` (local ids)."""
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
