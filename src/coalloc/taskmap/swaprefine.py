"""Swaps at the bottleneck processor: the multilevel mapper's answer, when its maximum is a
processor's compute (issue 40, h53tmap).

The bottleneck moves of :func:`~coalloc.taskmap.refinement.refine` move one task at a time;
when every task of the most occupied processor is heavier than the room any other processor
has below the maximum, none of them can move, and the answer stays above the compute bound
by up to a task's weight over the processor's capacity. A **swap** of a task ``t`` of that
processor ``p`` with a lighter task ``u`` of another processor ``q`` moves only the
difference: the geometric graph of 300 tasks onto 2x4x4 of ``bench/taskmap/vs_peers.py``
ended at 19.19 (Mt-KaHyPar highest quality 19.17) where 43 swaps reach 18.648, the compute
bound being 18.646.

:func:`swap_refine`: while a processor is the bottleneck, the pairs ``(t, u)`` whose swap
leaves both processors' compute below the maximum are scored at once (vectorised) and the
:data:`_TRIES` that add the least volume x route distance tried (the first version took the
lowest new occupancy first: the sum of geometric 300 went 72.6 -> 240.6, the sum step after
it bound by the lower cap); a swap is kept when it lowers the maximum or the number of
resources at it (links included: it is made, the loads updated, and undone otherwise), so
the loop ends; at most ``max_swaps``. :func:`swapped` applies it to the mapper's best
mapping when :data:`SWAPS` is on.

**Off by default** (h53tmap): on the geometric graphs of ``vs_peers`` it lowers the maximum
0.0-2 % (300: 19.19 -> 18.73, below Mt-KaHyPar's 19.17) but the sum of volume x distance
rises 0-51 % (150 +51 %, 500 +35 %, 2000 +42 %): the sum step after it works under the lower
cap. The stencils and pipelines are unchanged (a link is their bottleneck, or no swap fits).
"""

from __future__ import annotations

import numpy as np

from .._shared import interrupt
from .hierarchy import Topology
from .levels import TaskLevel
from .refinement import RefineState

__all__ = ["swap_refine", "swapped"]

#: True: :func:`swapped` swaps on the mapper's answer; False (the default): it returns the
#: answer as it is (the sum objective rises where the maximum falls; module documentation).
SWAPS = False
#: Candidate swaps tried per step (best first) before the step gives up.
_TRIES = 8
#: Relative tolerance of the comparisons of occupancies.
_TOL = 1e-12


def _key(state: RefineState) -> tuple:
    """``(maximum occupancy, resources at it)``: what a kept swap must lower."""
    n, e = state.occ()
    top = state.maximum()
    at = int((n >= top * (1 - _TOL)).sum() + (e >= top * (1 - _TOL)).sum())
    return top, at


def _lower(new: tuple, old: tuple) -> bool:
    return new[0] < old[0] * (1 - _TOL) or (new[0] <= old[0] * (1 + _TOL) and new[1] < old[1])


def _candidates(state: RefineState, p: int, top: float) -> tuple:
    """The swaps of a task of ``p`` with a lighter task elsewhere that leave both
    processors' compute below ``top``: ``(t, u)`` arrays, those that add the least volume x
    route distance first (ties: the lower new occupancy, then the order of the pairs).

    The added route cost of a swap is each task's move scored as if the other stayed (a
    stream between the two is counted as lost twice where it keeps its length): a ranking,
    the sum step after it recomputes every cost."""
    lv, topo = state.level, state.topo
    w, m, load, cap, cost = lv.vw, state.m, state.nload, topo.cap, topo.cost
    tp = np.nonzero(m == p)[0]
    others = np.nonzero(m != p)[0]
    if tp.shape[0] == 0 or others.shape[0] == 0:
        return tp[:0], tp[:0]
    q = m[others]
    d = w[tp][:, None] - w[others][None, :]  # the compute that leaves p
    new_p = (load[p] - d) / cap[p]
    new_q = (load[q][None, :] + d) / cap[q][None, :]
    worse = np.maximum(new_p, new_q)
    ok = (d > 0) & (worse < top * (1 - _TOL))
    i, j = np.nonzero(ok)
    if i.shape[0] == 0:
        return tp[:0], tp[:0]
    nb = m[lv.ix]
    # u's move from m[u] to p, every u at once (by its CSR rows)
    to_p = np.bincount(state.rows, weights=lv.iw * (cost[p, nb] - cost[m[state.rows], nb]),
                       minlength=lv.n)  # fmt: skip
    # t's move from p to each processor: rows of cost[:, m[neighbour]] weighted, less staying
    from_p = np.empty((tp.shape[0], topo.P))
    for k, t in enumerate(tp.tolist()):
        lo, hi = lv.ip[t], lv.ip[t + 1]
        from_p[k] = cost[:, nb[lo:hi]] @ lv.iw[lo:hi] - float(cost[p, nb[lo:hi]] @ lv.iw[lo:hi])
    added = from_p[i, q[j]] + to_p[others[j]]
    order = np.lexsort((worse[i, j], added))[:_TRIES]
    return tp[i[order]], others[j[order]]


def swap_refine(state: RefineState, max_swaps: int) -> int:
    """Swaps at the bottleneck processor until none helps (module documentation).

    Parameters
    ----------
    state : RefineState
        The mapping and its loads (changed in place; the loads recomputed at the end).
    max_swaps : int
        At most this many swaps kept.

    Returns
    -------
    int
        The swaps kept.

    Examples
    --------
    Two processors of a node, tasks 3 and 3 on one, 2 and 2 on the other, no streams: no
    single move lowers the 6, one swap leaves 5 and 5.

    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> res = generators.hierarchical_cluster(n_racks=1, nodes_per_rack=1, cores_per_node=2)
    >>> lv = TaskLevel(np.zeros(5, dtype=np.int64), np.zeros(0, dtype=np.int64),
    ...                np.zeros(0), np.array([3.0, 3.0, 2.0, 2.0]))
    >>> state = RefineState(hierarchy.topology(res), lv, np.array([0, 0, 1, 1]))
    >>> swap_refine(state, 10), state.maximum()
    (1, 5.0)
    """
    made = 0
    while made < max_swaps:
        interrupt.check()
        n_occ, _ = state.occ()
        top = state.maximum()
        p = int(np.argmax(n_occ))
        if n_occ[p] < top * (1 - _TOL):
            break  # a link is the bottleneck: a swap of compute does not lower it
        before = _key(state)
        kept = False
        for t, u in zip(*(a.tolist() for a in _candidates(state, p, top))):
            q = int(state.m[u])
            state.move(t, q)
            state.move(u, p)
            if _lower(_key(state), before):
                kept = True
                break
            state.move(u, q)  # undone: a link went over
            state.move(t, p)
        if not kept:
            break
        made += 1
    state.refresh()
    return made


def swapped(topo: Topology, fine: TaskLevel, best: tuple, run: dict) -> tuple:
    """The multilevel mapper's ``best`` (``(occupancy, positions, history, ...)``) after
    :func:`swap_refine` (at most ``max(50, tasks / 4)`` swaps), when that lowered its
    maximum; else ``best`` itself. ``run["moves"]`` counts two moves a swap."""
    if not SWAPS:
        return best
    state = RefineState(topo, fine, best[1])
    made = swap_refine(state, max(50, fine.n // 4))
    run["moves"] += 2 * made
    value = state.maximum()
    if made and value < best[0] * (1 - _TOL):
        return (value, state.m, [*best[2], value], *best[3:])
    return best
