"""Layer moves: a link-bound mapping's bottleneck link relieved a whole boundary layer at a time.

Where a link binds (typically a node's uplink on a stencil), single-task moves are stuck: a
task moved off a straight block boundary leaves its block's boundary two edges longer. The
layer of tasks on the link's inner side that talk to one neighbouring group of processors
(the processors behind one link, the second last of the route) moved there at once shifts
the boundary by one layer: the inner block's boundary shrinks, the neighbour's grows. On the
heterogeneous stencils of ``bench.taskmap.vs_peers`` the blocks near the grid's border have
less boundary and grow into the interior ones' (h58edge follow-up, ISSUE40): 48x48 on
4x4x16 het 9.6 -> 8.4, 16^3 on 2x8x8 het 64 -> 53.3.

A layer move is kept when, after a few bottleneck moves
(:func:`~coalloc.taskmap.refinement.refine`), the mapping is better in the order
``(maximum, resources at the maximum, sum of (occupancy / maximum) ** 8)``: never worse
than before, and the loop ends (the order strictly falls).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .._shared import interrupt
from .hierarchy import Topology
from .levels import TaskLevel
from .refinement import RefineState, refine

__all__ = ["layer_refine", "layered", "layers_until", "own_links"]

#: True: the untimed multilevel mapper's answer gets :func:`layer_refine` (:func:`layered`)
#: when a link binds it; False: it does not.
LAYERS = True
#: At most this many layer moves kept per call.
LAYER_ROUNDS = 200
#: Bottleneck moves after each layer move, before it is judged.
LAYER_SETTLE = 400


def _oriented(topo: Topology, ends: np.ndarray, a: int, b: int) -> np.ndarray:
    """The links of the route from position ``a`` to ``b``, from ``a``'s end (a pair's
    route is stored in either direction)."""
    k = a * topo.P + b
    r = topo.rlink[topo.rptr[k] : topo.rptr[k + 1]]
    if r.shape[0] > 1 and topo.order_nodes[a] not in ends[r[0]]:
        r = r[::-1]
    return r


def own_links(topo: Topology, ends: np.ndarray) -> np.ndarray:
    """``(P, E)`` mask: the links on each processor's side of its route to the processor
    farthest from it (on a tree: its uplinks).

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    ends : ndarray of int64, shape (E, 2)
        The resource graph's links (``ResourceGraph.links``).

    Returns
    -------
    ndarray of bool, shape (P, E)

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> from coalloc.taskmap.hierarchy import topology
    >>> res = hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> own_links(topology(res), res.links).sum(axis=1).tolist()  # core link, node link
    [2, 2]
    """
    p = topo.P
    out = np.zeros((p, topo.E), dtype=bool)
    far = np.argmax(topo.cost, axis=1)
    for a in range(p):
        r = _oriented(topo, ends, a, int(far[a]))
        out[a, r[: max(1, (r.shape[0] + 1) // 2)]] = True
    return out


def _order(state: RefineState) -> tuple:
    node, link = state.occ()
    top = max(float(node.max(initial=0.0)), float(link.max(initial=0.0)))
    if top <= 0:
        return (0.0, 0, 0.0)
    near = top * (1 - 1e-9)
    count = int((node >= near).sum() + (link >= near).sum())
    spread = float(((node / top) ** 8).sum() + ((link / top) ** 8).sum())
    return (top, count, spread)


def _better(new: tuple, old: tuple) -> bool:
    """``new`` before ``old`` in the order of the module (relative tolerances)."""
    if new[0] < old[0] * (1 - 1e-12):
        return True
    if new[0] > old[0] * (1 + 1e-12):
        return False
    return new[1] < old[1] or (new[1] == old[1] and new[2] < old[2] * (1 - 1e-9))


def _layers(topo: Topology, ends: np.ndarray, state: RefineState, link: int,
            inside: np.ndarray) -> list:  # fmt: skip
    """The layers across ``link``: ``{task: destination}`` dicts, one per neighbouring
    group (the second last link of the route), the largest first."""
    lv, m, p = state.level, state.m, topo.P
    pairs = topo.lpairs[topo.lptr[link] : topo.lptr[link + 1]]
    mark = np.zeros(p * p, dtype=bool)
    mark[pairs] = True
    src, dst = m[state.rows], m[lv.ix]
    cross = mark[src * p + dst] & inside[src]
    groups: dict = {}
    for s, t in zip(state.rows[cross].tolist(), lv.ix[cross].tolist()):
        r = _oriented(topo, ends, int(m[s]), int(m[t]))
        key = int(r[-2]) if r.shape[0] >= 2 else int(r[-1])
        groups.setdefault(key, {}).setdefault(s, int(m[t]))
    return sorted(groups.values(), key=len, reverse=True)


def layer_refine(topo: Topology, ends: np.ndarray, state: RefineState,
                 rounds: int = LAYER_ROUNDS, tries: Optional[int] = None) -> int:  # fmt: skip
    """Layer moves on a link-bound mapping until none helps; returns the number kept.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    ends : ndarray of int64, shape (E, 2)
        The resource graph's links.
    state : RefineState
        The mapping, changed in place (never to a worse one in the order of the module).
    rounds : int, default LAYER_ROUNDS
        At most this many layer moves kept.
    tries : int, optional
        At most this many layer moves tried (each with up to :data:`LAYER_SETTLE`
        bottleneck moves); None: no cap.

    Returns
    -------
    int
        The layer moves kept.

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> from coalloc.taskmap.hierarchy import topology
    >>> from coalloc.taskmap.levels import TaskLevel
    >>> res = hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> ip, ix = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2])
    >>> lv = TaskLevel(ip, ix, np.ones(6), np.ones(4))
    >>> st = RefineState(topology(res), lv, np.array([0, 0, 0, 1]))
    >>> layer_refine(topology(res), res.links, st) >= 0
    True

    Inside :func:`~coalloc._shared.interrupt.until` a deadline that passes during a try
    undoes that try (the mapping is the last kept one) and raises
    :class:`~coalloc._shared.interrupt.DeadlinePassed`.
    """
    if rounds <= 0 or topo.E == 0 or topo.P < 2:
        return 0
    own = None
    kept = 0
    left = np.inf if tries is None else int(tries)
    while kept < rounds and left > 0:
        node, link = state.occ()
        if link.max(initial=0.0) <= node.max(initial=0.0):
            break  # a processor binds: not the layers' case
        if own is None:
            own = own_links(topo, ends)
        worst = int(np.argmax(link))
        before = _order(state)
        found = False
        for layer in _layers(topo, ends, state, worst, own[:, worst]):
            if left <= 0:
                break
            left -= 1
            interrupt.check()
            saved = state.m.copy()
            try:
                for s, b in layer.items():
                    state.move(s, b)
                state.refresh()
                refine(state, LAYER_SETTLE)
            except interrupt.DeadlinePassed:  # (a deadline of layers_until): the try undone
                state.m[:] = saved
                state.refresh()
                raise
            if _better(_order(state), before):
                found = True
                break
            state.m[:] = saved
            state.refresh()
        if not found:
            break
        kept += 1
    return kept


def layered(topo: Topology, fine: TaskLevel, best: tuple, pre: tuple, ends: np.ndarray,
            run: dict, untimed: bool = True, resum=None) -> tuple:  # fmt: skip
    """The multilevel mapper's answer ``best`` (``(occupancy, positions, history, ...)``)
    after :func:`layer_refine` when :data:`LAYERS` is on and the run ``untimed``: the
    lowest maximum of ``best``, ``best`` with layer moves, and ``pre`` (the answer before
    the sum step ``resum(topo, fine, positions)`` -> ``(positions, moves, maximum)``) with
    layer moves then that step (a node-bound answer after the sum step may be link-bound
    before it: stencil 32x32 on 2x4x8 het). ``run["moves"]`` counts the moves. Never above
    ``best``'s maximum."""
    if not (LAYERS and untimed):
        return best
    out = best
    tries = [(best, False)] + ([(pre, True)] if resum is not None and pre is not best else [])
    for start, again in tries:
        state = RefineState(topo, fine, start[1])
        made = layer_refine(topo, ends, state)
        run["moves"] += made
        value, m = state.maximum(), state.m
        if not made:
            continue
        if again:  # the sum step on it too, kept where its maximum is no higher
            m_s, moves_s, value_s = resum(topo, fine, m.copy())
            run["moves"] += moves_s
            if value_s <= value * (1 + 1e-12):
                m, value = m_s, value_s
        if value < out[0] * (1 - 1e-12):
            out = (value, m, [*best[2], value], *best[3:])
    return out


def layers_until(topo: Topology, fine: TaskLevel, m: np.ndarray, ends: np.ndarray,
                 until: float) -> tuple:  # fmt: skip
    """:func:`layer_refine` on the finest mapping ``m`` until ``until`` (a
    :func:`time.perf_counter` instant; h59edge: timed calls), the layer moves kept before
    it.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    fine : TaskLevel
        The task graph's finest level.
    m : ndarray of int64
        Processor positions of the tasks (not changed).
    ends : ndarray of int64, shape (E, 2)
        The resource graph's links.
    until : float
        The deadline, polled between the layer moves' tries and inside their bottleneck
        moves; a try it cuts is undone.

    Returns
    -------
    tuple
        ``(positions, maximum occupancy, layer moves kept)``: never a higher maximum than
        ``m``'s.

    Examples
    --------
    >>> import time
    >>> import numpy as np
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> from coalloc.taskmap.hierarchy import topology
    >>> from coalloc.taskmap.levels import TaskLevel
    >>> res = hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> ip, ix = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2])
    >>> lv = TaskLevel(ip, ix, np.ones(6), np.ones(4))
    >>> out = layers_until(topology(res), lv, np.array([0, 0, 0, 1]), res.links,
    ...                    time.perf_counter() + 10)
    >>> out[2] >= 0
    True
    """
    state = RefineState(topo, fine, np.array(m, dtype=np.int64))
    kept = 0
    try:
        with interrupt.until(until):
            kept = layer_refine(topo, ends, state)
    except interrupt.DeadlinePassed:
        kept = -1  # (cut: the moves kept before it stand; counted below)
    if kept < 0:
        kept = int(not np.array_equal(state.m, m))
    return state.m, state.maximum(), kept
