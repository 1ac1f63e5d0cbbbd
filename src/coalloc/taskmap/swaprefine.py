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

import time

import numpy as np

from .._shared import interrupt
from . import _multilevel
from .hierarchy import Topology
from .levels import TaskLevel
from .refinement import TINY, RefineState

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


# --------------------------------------------------------------------------------------
# Swaps across a bottleneck link (h56sum)
# --------------------------------------------------------------------------------------

#: True (the default): :func:`~coalloc.taskmap.sumrefine.sum_refine` first runs
#: :func:`link_swap_refine` when a link is the bottleneck (h56sum); False: it does not.
LINK_SWAPS = True
#: :func:`_next_move` picks its move by the compiled ``_multilevel.link_pick`` (twin:
#: :func:`coalloc.taskmap._reference.refine.link_pick`, ``score_moves`` and the NumPy code
#: it replaces): the candidates in the order of the pick (a destination with room, then the
#: least load added to ``j``, then the first), the changes of ``j``'s load summed alone in
#: ``score_moves``' order, and the first whose other links stay below the maximum taken;
#: only those before it are scored on every link. ``score_moves`` of up to 64 x (P - 1)
#: candidates here was 6 % of the untimed mapper's CPU on the 30 of
#: ``bench/taskmap/vs_peers.py`` (issue 40, h63cpu). The same move, so the same answers.
#: False: every candidate scored.
PICK_KERNEL = True
#: Moves of one sequence of :func:`link_swap_refine`, at most.
_LINK_SEQ = 32
#: Tasks sending across the link scored per move of a sequence (most volume across first).
_LINK_CAND = 64


def _at_max(state: RefineState, top: float) -> np.ndarray:
    """The links at the maximum ``top``."""
    return np.flatnonzero(state.lload / state.topo.bw >= top * (1 - _TOL))


def _next_move(state: RefineState, j: int, top: float, locked: np.ndarray,
               pair_mark: np.ndarray, owed: int) -> tuple:  # fmt: skip
    """The next move of a sequence of :func:`link_swap_refine` at link ``j``: while no
    processor is ``owed`` a task, of an unlocked task sending across ``j`` to a processor
    across ``j``; else of an unlocked task of the owed processor to any other. The
    destination's compute may go over ``top`` (that processor is then owed); every other
    link stays below ``top`` (those at the maximum are judged at the sequence's end). Of
    those, a destination with room first, then the least load added to ``j`` (a rise
    allowed: a sequence may climb). ``(task, processor)`` or None."""
    from .refinement import _bottleneck_tasks

    topo, lv, m, p = state.topo, state.level, state.m, state.topo.P
    if owed < 0:
        tasks = _bottleneck_tasks(state, "link", j, lv.n, pair_mark)
    else:
        tasks = np.flatnonzero(m == owed)
    tasks = tasks[~locked[tasks]][:_LINK_CAND]
    if tasks.shape[0] == 0:
        return None
    rt = np.repeat(tasks, p - 1)
    rb = (m[rt] + np.tile(np.arange(1, p), tasks.shape[0])) % p
    if owed >= 0:
        keep = rb != owed
    else:  # across j: the route between the two processors takes it
        pairs = topo.lpairs[topo.lptr[j] : topo.lptr[j + 1]]
        pair_mark[pairs] = True
        keep = pair_mark[m[rt] * p + rb]
        pair_mark[pairs] = False
    rt, rb = rt[keep], rb[keep]
    if rt.shape[0] == 0:
        return None
    masked = state.lload.copy()
    masked[_at_max(state, top)] = -1e30  # their rises: judged at the sequence's end
    if PICK_KERNEL:  # the same pick, most candidates scored on link j alone
        over = (state.nload[rb] + lv.vw[rt]) / topo.cap[rb] >= top * (1 - _TOL)
        k = _multilevel.link_pick(lv.kern, topo.routes, m, masked, topo.bw, rt, rb, j, TINY,
                                  over, top * (1 - _TOL), topo.lptr, topo.lpairs)  # fmt: skip
        return None if k < 0 else (int(rt[k]), int(rb[k]))
    up, dv = _multilevel.score_moves(lv.kern, topo.routes, m, masked, topo.bw, rt, rb, j, TINY)
    over = (state.nload[rb] + lv.vw[rt]) / topo.cap[rb] >= top * (1 - _TOL)
    # a destination with room first (else a chain: it is owed next), then the least load
    # added to j (the order by the load on j alone drifted: a processor 74.1 when j fell
    # to 72.9 on plc 400, no prefix kept)
    ok = np.flatnonzero(up < top * (1 - _TOL))
    if ok.shape[0] == 0:
        return None
    dv, over = dv[ok], over[ok]
    k = int(ok[np.lexsort((dv, over))[0]])
    return int(rt[k]), int(rb[k])


def _fits_in_time(t0: float, moves: int) -> bool:
    """Whether ``moves`` more moves, each as long as the one since ``t0``, end before the
    deadline in force (True without one)."""
    end = interrupt.deadline_ns()
    if end < 0:
        return True
    now = time.perf_counter()
    return now + moves * (now - t0) < end * 1e-9


def _sequence(state: RefineState, j: int, before: tuple, pair_mark: np.ndarray) -> int:
    """One sequence of :func:`link_swap_refine` at link ``j``: up to :data:`_LINK_SEQ`
    moves, each task once, kept up to the prefix of lowest :func:`_key` when that is below
    ``before`` (the rest undone; all of it when none is): the moves kept."""
    top = before[0]
    locked = np.zeros(state.level.n, dtype=bool)
    done: list = []
    best, best_len = before, 0
    owed = -1
    t0 = time.perf_counter()
    try:
        for i in range(_LINK_SEQ):
            if i == 1 and not _fits_in_time(t0, _LINK_SEQ - 1):
                break  # the rest of the sequence would not end by the deadline
            nxt = _next_move(state, j, top, locked, pair_mark, owed)
            if nxt is None:
                break
            t, b = nxt
            done.append((t, int(state.m[t])))
            state.move(t, b)
            locked[t] = True
            n_occ = state.nload / state.topo.cap
            owed = int(np.argmax(n_occ))  # the most occupied processor, when over the top
            owed = owed if n_occ[owed] >= top * (1 - _TOL) else -1
            key = _key(state)
            if _lower(key, best):
                best, best_len = key, len(done)
            interrupt.check()
    finally:  # a deadline too: back to the best prefix, the loads consistent
        for t, a in reversed(done[best_len:]):
            state.move(t, a)
    return best_len


def link_swap_refine(state: RefineState, max_swaps: int) -> int:
    """Sequences of moves of tasks across the bottleneck link while a link is the
    bottleneck (h56sum).

    A step takes the most occupied link ``j`` (it stops when a processor is as occupied)
    and makes a sequence of moves in the manner of Fiduccia-Mattheyses, each task once:
    of a task sending across ``j`` to a processor across it, one with room first, then the
    one adding the least load to ``j`` -- a rise allowed, so that a group of tasks crosses
    together -- and, while a processor's compute is over the maximum, of one of its tasks
    elsewhere (a move and its return make a swap; a chain a rotation); every other link
    kept below the maximum. The sequence is kept up
    to its prefix of lowest maximum, then fewest processors and links at it, when that is
    below the step's start (undone otherwise, and the refinement ends). Under a deadline
    (:mod:`coalloc._shared.interrupt`) a sequence goes on past its first move only when the
    rest, at the first move's pace, is predicted to end before it; the deadline is polled
    after every move and a stop undoes the moves past the best prefix. At the end, when the
    maximum did not fall below the entry's, the entry mapping is restored: the step changes
    nothing unless the bottleneck falls.

    Parameters
    ----------
    state : RefineState
        The mapping and its loads (changed in place; the loads recomputed at the end).
    max_swaps : int
        At most this many sequences kept.

    Returns
    -------
    int
        The moves kept; 0 when the entry mapping is kept.

    Examples
    --------
    Two pairs of tasks on the two nodes of a rack, each pair split across the nodes, the
    nodes' compute full: a link is the bottleneck and no single move fits.

    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> res = generators.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> lv = TaskLevel(np.array([0, 1, 2, 3, 4]), np.array([1, 0, 3, 2]), np.full(4, 40.0),
    ...                np.full(4, 3.5))
    >>> state = RefineState(hierarchy.topology(res), lv, np.array([0, 1, 0, 1]))
    >>> state.maximum(), link_swap_refine(state, 10), state.m.tolist(), state.maximum()
    (8.0, 2, [1, 1, 0, 0], 7.0)
    """
    m0 = state.m.copy()
    state.refresh()
    entry = state.maximum()
    pair_mark = np.zeros(state.topo.P * state.topo.P, dtype=bool)
    made = 0
    try:
        for _ in range(max_swaps):
            interrupt.check()
            n_occ, l_occ = state.occ()
            top = state.maximum()
            if not l_occ.shape[0] or n_occ.max() >= top * (1 - _TOL):
                break  # a processor is at the maximum: its swaps are swap_refine's
            kept = _sequence(state, int(np.argmax(l_occ)), _key(state), pair_mark)
            if not kept:
                break
            made += kept
            state.refresh()
    finally:
        state.refresh()
        if not state.maximum() < entry * (1 - _TOL):
            state.m = m0
            state.refresh()
            made = 0
    return made
