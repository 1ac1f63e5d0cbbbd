"""Swaps of whole processors' contents lowering the route cost under the bottleneck (h56sum).

The sum step's moves (:func:`~coalloc.taskmap.sumrefine.sum_refine`) change the mapping a
boundary task at a time; where the parts are good but placed badly on the machine (two
heavily communicating parts on processors far apart: the multilevel's starts place its
parts by a recursive split, and the bottleneck moves after it ignore the volume), no single
move helps, every processor being near the cap. A **block swap** exchanges everything two
processor positions hold (one of them may be empty: the block moves): the compute of each
block moves with it, the volume inside a block loads no link, and the route cost changes by
the quotient graph alone (the volume between blocks, a ``P x P`` matrix). This is the
2-opt of the quadratic assignment of parts to processors, the placement that the peers'
mapping tools (Scotch's dual recursive bipartitioning, Mt-KaHyPar's steiner-tree mode) get
from their recursion; on delaunay2d 2500 onto a torus 8x8 of ``bench/taskmap/heldout.py``
it lowers the sum 1,430 -> 1,236 in 0.02 s, and the moves after it reach 880 where they
alone reach 1,081 (h56sum).

:func:`block_swaps`: each round scores every pair at once (``M = C D^T``, the gain of a
swap of ``x`` and ``y`` is ``2 ((C_x - C_y) . (D_y - D_x) + 2 C_xy D_xy)``), then walks the
pairs of most gain, each rescored exactly against the positions of the moment, and keeps a
swap when it lowers the route cost, both blocks fit their new processors' compute under the
cap and no link rises above it (made on the quotient's loads and undone otherwise). The
maximum occupancy never rises: the cap is the mapping's maximum on entry.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from . import sumcycle
from .levels import TaskLevel
from .refinement import TINY, RefineState

__all__ = ["block_swaps"]

#: How :func:`~coalloc.taskmap.sumrefine.sum_refine` uses :func:`block_swaps`: ``"both"``
#: (the default) refines twice from its entry mapping, block swaps then the moves, and the
#: moves alone (the answer before h56sum), and keeps the lower maximum occupancy, then the
#: lower route cost (so it is never worse than before on either, in that order: the block
#: swaps first change which moves follow, and the moves' incidental drop of the maximum went
#: 0.4016 -> 0.4209 on one Table 1 digest instance). The moves alone run first: a deadline
#: during the second refinement keeps the first's answer, as the step before h56sum gave it.
#: ``"first"``: block swaps then the moves only; False: the moves alone (before h56sum).
BLOCK_SWAPS = "both"
#: The share of the route cost the block swaps must save for ``sum_refine``'s refinement
#: with them to run (else the moves alone, once): on a tree machine two swaps saved 0.1 %
#: on delaunay3d 2000 of ``bench/taskmap/heldout.py`` and the second refinement cost its
#: untimed call 3.4 -> 4.9 s of CPU for the same answer (h56sum)
MIN_GAIN = 0.01
#: Rounds of :func:`block_swaps` at most (each scores every pair once: ``P^3`` flops).
_ROUNDS = 50
#: Pairs of most predicted gain a round walks through, at most this many times ``P``.
_WALK = 4


def _quotient(state: RefineState) -> RefineState:
    """The mapping's quotient: one vertex a processor position (its compute, the volume
    to every other position; empty positions included), mapped to itself."""
    topo, lv, m = state.topo, state.level, state.m
    p = topo.P
    c = sp.csr_matrix((lv.iw, (m[state.rows], m[lv.ix])), shape=(p, p))
    c.setdiag(0)
    c.eliminate_zeros()
    c.sort_indices()
    q = TaskLevel(c.indptr.astype(np.int64), c.indices.astype(np.int64),
                  c.data.astype(np.float64), state.nload.copy())  # fmt: skip
    return RefineState(topo, q, np.arange(p, dtype=np.int64))


def _gain(c: np.ndarray, d: np.ndarray, pos: np.ndarray, x: int, y: int) -> float:
    """The route cost a swap of blocks ``x`` and ``y`` saves (the pairs counted both
    ways, as the CSR holds them), against the positions ``pos`` of the moment."""
    px, py = pos[x], pos[y]
    dx, dy = d[px, pos], d[py, pos]
    return -2.0 * (float((c[x] - c[y]) @ (dy - dx)) + 2.0 * c[x, y] * d[px, py])


def _fits(qs: RefineState, x: int, y: int, limit: float) -> bool:
    """Whether blocks ``x`` and ``y`` fit each other's processor's compute: at most
    ``limit`` there, or no heavier than the block it replaces."""
    load, cap, pos = qs.level.vw, qs.topo.cap, qs.m
    ok_x = load[x] <= limit * cap[pos[y]] or load[x] <= load[y] * (1 + TINY)
    ok_y = load[y] <= limit * cap[pos[x]] or load[y] <= load[x] * (1 + TINY)
    return bool(ok_x and ok_y)


def _round(qs: RefineState, c: np.ndarray, cs: sp.csr_matrix, d: np.ndarray,
           limit: float) -> int:  # fmt: skip
    """One round of :func:`block_swaps` (``c`` the quotient's volumes, dense, ``cs`` the
    same sparse): the swaps kept."""
    pos = qs.m
    n = c.shape[0]
    sumcycle.charge(float(n * n + cs.nnz * n))  # the gains of every pair of blocks
    dp = d[pos][:, pos]
    mm = np.asarray(cs @ dp)  # dp symmetric: C D^T (sparse: the quotient has few pairs)
    diag = np.diag(mm)
    gain = -2.0 * (mm + mm.T - diag[:, None] - diag[None, :] + 2.0 * c * dp)
    iu, ju = np.triu_indices(n, 1)
    g = gain[iu, ju]
    good = np.flatnonzero(g > TINY * (1.0 + float(np.abs(g).max(initial=0.0))))
    if not good.shape[0]:
        return 0
    good = good[np.argsort(-g[good], kind="stable")][: _WALK * n]
    sumcycle.charge(float(good.shape[0] * n))  # each try's gain against every position
    kept = 0
    for k in good.tolist():
        interrupt.check()  # between swaps: the quotient's loads are consistent here
        x, y = int(iu[k]), int(ju[k])
        g_now = _gain(c, d, pos, x, y)
        if not g_now > TINY * (1.0 + abs(g[k])) or not _fits(qs, x, y, limit):
            continue
        px, py = int(pos[x]), int(pos[y])
        top = qs.maximum()
        qs.move(x, py)
        qs.move(y, px)
        if qs.maximum() <= max(limit, top):
            kept += 1
            continue
        qs.move(y, py)  # undone: a link went over
        qs.move(x, px)
    return kept


def block_swaps(state: RefineState, rounds: int = _ROUNDS) -> int:
    """Swaps of whole processors' contents lowering the route cost (module documentation).

    Parameters
    ----------
    state : RefineState
        The mapping (changed in place, its loads recomputed at the end). Its maximum
        occupancy on entry is the cap: no processor or link ends above it.
    rounds : int, default 50
        At most this many rounds (a count, no clock: the answer depends on the arguments).

    Returns
    -------
    int
        The swaps kept.

    Examples
    --------
    Four tasks in a chain 0-1-2-3 on a rack's four nodes, placed 0, 2, 1, 3: one swap puts
    each half of the chain in a rack (0-1 and 2-3 on one rack each: one stream crosses).

    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> res = generators.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=1)
    >>> ip, ix = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2])
    >>> lv = TaskLevel(ip, ix, np.full(6, 1.0), np.ones(4))
    >>> state = RefineState(hierarchy.topology(res), lv, np.array([0, 2, 1, 3]))
    >>> block_swaps(state), (state.m // 2).tolist()   # the rack of each task
    (1, [1, 1, 0, 0])
    """
    topo = state.topo
    state.refresh()
    cap = state.maximum()
    if state.level.n == 0 or topo.P < 2 or not cap > 0:
        return 0
    m0 = state.m.copy()
    qs = _quotient(state)
    cs = sp.csr_matrix((qs.level.iw, qs.level.ix, qs.level.ip), shape=(topo.P,) * 2)
    c = cs.toarray()
    d = 0.5 * (topo.cost + topo.cost.T)  # the CSR counts each pair both ways
    limit = cap * (1 - 1e-9)  # rounding of the incremental loads stays under the cap
    made = 0
    try:
        for _ in range(rounds):
            kept = _round(qs, c, cs, d, limit)
            made += kept
            if not kept:
                break
    finally:  # a stop between swaps keeps those made (consistent loads)
        state.m = qs.m[state.m]
        state.refresh()
    if state.maximum() > cap * (1 + TINY):  # rounding: keep the entry mapping
        state.m = m0
        state.refresh()
        return 0
    return made
