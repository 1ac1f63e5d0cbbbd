"""The refinement of the multilevel mapper, at every level: route cost, then the bottleneck.

:class:`RefineState` holds a level's mapping with incremental node and link loads;
:func:`cut_refine` takes greedy k-way moves of boundary tasks that lower the route cost of
the streams within the balance, and :func:`refine` moves tasks off the current bottleneck
-- the processor or link of highest occupancy -- until no move lowers it (the moves of all
candidates scored at once by the compiled ``coalloc.taskmap._multilevel.score_moves``).
:func:`~coalloc.taskmap.sumrefine.sum_refine`, the last step (its own module), lowers the
route cost of the finest mapping by moves and swaps of boundary tasks under the bottleneck
found as a hard cap.
"""

from __future__ import annotations

import numpy as np

from .._shared import interrupt
from . import _multilevel
from ._reference import refine as _twin  # the kernels' twins: the code with the knobs off
from .hierarchy import Topology
from .levels import TaskLevel, expand

__all__ = [
    "BEST_MOVE_KERNEL",
    "CUT_KERNEL",
    "DEST_KERNEL",
    "LOADS_KERNEL",
    "MOVE_KERNEL",
    "PICK_KERNEL",
    "TASKS_KERNEL",
    "RefineState",
    "cut_refine",
    "refine",
    "TINY",
]

#: Relative tolerance of the move scores.
TINY = 1e-12

#: :meth:`RefineState.move` by the compiled ``apply_move`` (twin:
#: :func:`coalloc.taskmap._reference.multilevel.apply_move`, the NumPy code it replaces:
#: the same additions in the same order, so the same loads and answers). The NumPy move
#: was 3 % of the untimed mapper's CPU on the 30 of ``bench/taskmap/vs_peers.py`` (25,000
#: moves; issue 40, h60cpu). False: the NumPy code.
MOVE_KERNEL = True

#: :func:`_destinations` by the compiled ``_multilevel.destinations`` (twin:
#: :func:`coalloc.taskmap._reference.refine.destinations`, the Python code it replaces).
#: The kernel emulates CPython's set of small ints slot for slot, so the candidates come in
#: the order the Python sets iterated them (the order ties between moves are broken in):
#: the same moves and answers. The sets were 4-7 % of the untimed mapper's CPU on the 30 of
#: ``bench/taskmap/vs_peers.py`` (10,000 calls; issue 40, h63cpu). False: the Python sets.
DEST_KERNEL = True

#: :func:`refine` picks its move by the compiled ``_multilevel.best_move`` (twin:
#: :func:`coalloc.taskmap._reference.refine.best_move`, ``score_moves`` and the NumPy
#: code it replaces): NumPy's argmin of the same scores, where a candidate whose
#: processors' part of the score is already above the best score found (in the order of
#: those parts) is not scored: it cannot be the first minimum. On the 30 of
#: ``bench/taskmap/vs_peers.py`` 38 % of the candidates are scored; ``score_moves`` was
#: 10 % of the untimed mapper's CPU (issue 40, h63cpu). The same move, so the same answers.
#: False: every candidate scored by ``score_moves``.
BEST_MOVE_KERNEL = True

#: :meth:`RefineState.refresh` by the compiled ``_multilevel.loads`` (twin:
#: :func:`coalloc.taskmap._reference.refine.loads`, the NumPy code it replaces: the
#: additions of ``np.bincount``, one after another in the same order, so the same loads).
#: False: the NumPy code.
LOADS_KERNEL = True

#: :func:`_bottleneck_tasks` by the compiled ``_multilevel.bottleneck_tasks`` (twin:
#: :func:`coalloc.taskmap._reference.refine.bottleneck_tasks`, the NumPy code it replaces:
#: the volumes summed in the same order, the same stable sort, so the same tasks and
#: answers); 3 % of the untimed mapper's CPU on the 30 of ``bench/taskmap/vs_peers.py``
#: (10,000 calls, each over all the level's entries; issue 40, h63cpu). False: NumPy.
TASKS_KERNEL = True

#: :func:`refine` computes the processors' part of its moves' scores, keeps the moves below
#: the maximum and picks among them (:data:`BEST_MOVE_KERNEL`'s search) in one compiled
#: call, ``_multilevel.pick_move`` (twin: :func:`coalloc.taskmap._reference.refine.pick_move`,
#: the NumPy code and ``best_move``: the same values by the same operations, so the same
#: move); ten NumPy calls a move before (issue 40, h63cpu). False: the NumPy parts.
PICK_KERNEL = True


class RefineState:
    """A mapping of one level with its node and link loads, updated move by move.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order and their routes.
    level : TaskLevel
        The level mapped.
    m : ndarray of int64, shape (level.n,)
        The processor position of each vertex (copied).

    Examples
    --------
    Two tasks exchanging 4 units, on the two nodes of a rack (one core each):

    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> res = generators.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> lv = TaskLevel(np.array([0, 1, 2]), np.array([1, 0]), np.array([4.0, 4.0]), np.ones(2))
    >>> state = RefineState(hierarchy.topology(res), lv, np.array([0, 1]))
    >>> [o.tolist() for o in state.occ()]   # 4 over the nodes' uplinks (10), the cores' (100)
    [[1.0, 1.0], [0.0, 0.4, 0.04, 0.4, 0.04]]
    >>> state.move(1, 0)
    >>> state.maximum()
    2.0
    """

    def __init__(self, topo: Topology, level: TaskLevel, m: np.ndarray):
        self.topo, self.level = topo, level
        self.m = m.astype(np.int64).copy()
        self.rows = np.repeat(np.arange(level.n), np.diff(level.ip))
        self.refresh()

    def refresh(self) -> None:
        """Recompute the loads from scratch."""
        topo, lv, m = self.topo, self.level, self.m
        if LOADS_KERNEL:  # the same sums in the same order, compiled
            self.nload, self.lload = _multilevel.loads(lv.kern, topo.routes, m, lv.vw)
        else:  # the twin: the NumPy code before (the topology serves as its routes)
            self.nload, self.lload = _twin.loads(lv, topo, m, lv.vw)

    def occ(self) -> tuple:
        """``(node occupancy (P,), link occupancy (E,))``."""
        return self.nload / self.topo.cap, self.lload / self.topo.bw

    def maximum(self) -> float:
        """The largest node or link occupancy."""
        n, e = self.occ()
        return max(float(n.max()), float(e.max()) if e.shape[0] else 0.0)

    def _row_deltas(self, rt: np.ndarray, rb: np.ndarray) -> tuple:
        """Link deltas of moving task rt[i] to processor rb[i]: (row, link, value)."""
        lv, topo, m = self.level, self.topo, self.m
        ip = lv.ip
        deg = ip[rt + 1] - ip[rt]
        ent, row = expand(ip[rt], deg)
        q = m[lv.ix[ent]]
        w = lv.iw[ent]
        a = m[rt][row]
        b = rb[row]
        p = topo.P
        pairs = np.concatenate([b * p + q, a * p + q])
        vals = np.concatenate([w, -w])
        prow = np.concatenate([row, row])
        lens = topo.rptr[pairs + 1] - topo.rptr[pairs]
        lent, own = expand(topo.rptr[pairs], lens)
        return prow[own], topo.rlink[lent], vals[own]

    def move(self, t: int, b: int) -> None:
        """Move vertex ``t`` to processor position ``b``, updating the loads (the link
        deltas of :meth:`_row_deltas` for one task, in its order)."""
        lv, topo, m = self.level, self.topo, self.m
        if MOVE_KERNEL:  # the same additions in the same order, compiled
            _multilevel.apply_move(lv.kern, topo.routes, m, self.lload, self.nload,
                                   float(lv.vw[t]), int(t), int(b))  # fmt: skip
            return
        lo, hi = lv.ip[t], lv.ip[t + 1]
        q = m[lv.ix[lo:hi]]
        w = lv.iw[lo:hi]
        a = m[t]
        pairs = np.concatenate([b * topo.P + q, a * topo.P + q])
        vals = np.concatenate([w, -w])
        rptr = topo.rptr
        lent, own = expand(rptr[pairs], rptr[pairs + 1] - rptr[pairs])
        np.add.at(self.lload, topo.rlink[lent], vals[own])
        w = self.level.vw[t]
        self.nload[a] -= w
        self.nload[b] += w
        self.m[t] = b


#: Under a deadline, :func:`cut_refine` scores its (task, destination) candidates in chunks
#: of about this many adjacency entries, the deadline polled between them (h58edge): one
#: pass on ba 3000's coarsest level (213 vertices, dense) onto a tree of 256 processors
#: scores 3-6 million entries, 20-50 ms of CPU and 0.2-0.5 s of wall at a 1/10 CPU share,
#: unpolled (the late calls of a starved 1 s call). The same sums in the same order (a
#: candidate's entries stay in one chunk): the same gains, moves and mapping; and faster
#: (a chunk's gathers stay in cache: the five largest calls there 0.335 -> 0.173 s of CPU,
#: alike for chunks of 2^14-2^17 entries, 0.29 s at 2^18). 0: one chunk, polled between
#: passes only, as before.
CUT_CHUNK = 1 << 16

#: A pass of :func:`cut_refine` by the compiled ``_multilevel.cut_pass`` (twin:
#: :func:`coalloc.taskmap._reference.refine.cut_pass`, the NumPy and Python code of the
#: pass: the same candidates, gains summed in the same order, the same order of the moves,
#: so the same moves and answers), polling between the same chunks of :data:`CUT_CHUNK`
#: entries (``interrupt.check``, called back). ``cut_refine`` was 7 % of the untimed
#: mapper's CPU on the 30 of ``bench/taskmap/vs_peers.py`` (issue 40, h63cpu). False: the
#: NumPy pass.
CUT_KERNEL = True


def cut_refine(
    state: RefineState, used: np.ndarray, share: np.ndarray, slack: float = 0.03, passes: int = 8
) -> int:
    """Greedy k-way moves of boundary tasks lowering the route cost of the streams.

    The cost of a stream is its volume times the sum of ``1 / bandwidth`` over its route
    (the occupancy it adds to the links); a move is taken when it lowers the total and keeps
    its destination's compute under ``(1 + slack)`` times its ``share`` of the total over
    the processors ``used`` (or under its present load when that is higher).

    Parameters
    ----------
    state : RefineState
        The mapping, changed in place (its loads recomputed at the end).
    used : ndarray of int64
        The processor positions the level is balanced over.
    share : ndarray of float64, shape (P,)
        The relative share of the compute of each position.
    slack : float, default 0.03
        The balance tolerance.
    passes : int, default 8
        At most this many passes over the boundary in each phase.

    Returns
    -------
    int
        The moves made.
    """
    topo, lv = state.topo, state.level
    p = topo.P
    cost = topo.cost
    total = float(lv.vw.sum())
    ub = np.zeros(p)
    ub[used] = (1 + slack) * total * share[used] / share[used].sum()
    moved = 0
    for _ in range(passes):
        interrupt.check()
        m = state.m
        # one pass, m changed in place: compiled, or its twin (the NumPy code before)
        cut_pass = _multilevel.cut_pass if CUT_KERNEL else _twin.cut_pass
        applied, nload = cut_pass(lv.kern if CUT_KERNEL else lv, m, state.nload, lv.vw, cost,
                                  ub, CUT_CHUNK, interrupt.check)  # fmt: skip
        if applied < 0:
            break
        state.nload = nload
        moved += applied
        if applied == 0:
            break
    state.refresh()
    return moved


def _bottleneck_tasks(state: RefineState, kind: str, idx: int, n_cand: int,
                      pair_mark: np.ndarray) -> np.ndarray:  # fmt: skip
    """The tasks :func:`refine` tries to move off the bottleneck ``idx`` (a processor when
    ``kind`` is "node", else a link), at most ``n_cand``: a processor's tasks of positive
    weight, most volume across first; a link's tasks that send across it, most volume
    first (``pair_mark``: a zeroed scratch mask of processor pairs, left zeroed)."""
    topo, lv, m = state.topo, state.level, state.m
    if TASKS_KERNEL:  # the same tasks in the same order, compiled
        return _multilevel.bottleneck_tasks(lv.kern, m, lv.vw, topo.lptr, topo.lpairs,
                                            pair_mark, kind == "link", idx, n_cand)  # fmt: skip
    return _twin.bottleneck_tasks(lv, m, lv.vw, topo.lptr, topo.lpairs, pair_mark,
                                  kind == "link", idx, n_cand)  # fmt: skip


def _destinations(state: RefineState, tasks: np.ndarray, light: list) -> tuple:
    """The candidate moves of :func:`refine`, ``(tasks, processors)`` as two arrays: every
    task to its neighbours' processors, the ``light`` ones and its two adjacent ones (each
    task's in the order of a set built from those, in that order: the order ties are
    broken in)."""
    lv, m, p = state.level, state.m, state.topo.P
    if DEST_KERNEL:  # the same pairs in the same order, compiled
        return _multilevel.destinations(lv.kern, m, tasks, np.asarray(light, dtype=np.int64), p)
    return _twin.destinations(lv, m, tasks, np.asarray(light, dtype=np.int64), p)


def refine(state: RefineState, max_moves: int, n_cand: int = 24, n_light: int = 8) -> int:
    """Bottleneck moves until none helps; returns the number of moves.

    While the processor or link of highest occupancy has a single-task move that leaves
    every resource it loads more below the current maximum, the move that leaves the lowest
    such maximum is made (candidates scored at once by the compiled ``score_moves``).

    Parameters
    ----------
    state : RefineState
        The mapping, changed in place (its loads recomputed at the end).
    max_moves : int
        At most this many moves.
    n_cand : int, default 24
        Candidate tasks per bottleneck (most volume across first).
    n_light : int, default 8
        Least occupied processors added to each task's destinations.

    Returns
    -------
    int
        The moves made.

    Examples
    --------
    Two tasks that do not communicate, both on one core of a cluster of equal cores:

    >>> import numpy as np
    >>> from coalloc.taskmap.generators import hierarchical_cluster as cluster
    >>> no_pairs = TaskLevel(np.zeros(3, dtype=np.int64), np.zeros(0, dtype=np.int64),
    ...                      np.zeros(0), np.ones(2))
    >>> state = RefineState(Topology(cluster(n_racks=1, cores_per_node=2)), no_pairs, np.zeros(2))
    >>> refine(state, 10), state.m.tolist()   # one task leaves the loaded processor
    (1, [1, 0])
    """
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
        tasks = _bottleneck_tasks(state, kind, idx, n_cand, pair_mark)
        if tasks.shape[0] == 0:
            break
        light = np.argpartition(nocc, min(n_light, p - 1))[: n_light + 1].tolist() if p > 1 else []
        rt_a, rb_a = _destinations(state, tasks, light)
        if not rt_a.shape[0]:
            break
        limit = big * (1 - 1e-12)  # a move is taken only when its score is below this
        if PICK_KERNEL:  # the processors' parts, the moves kept and best_move, compiled
            best, top = _multilevel.pick_move(lv.kern, topo.routes, m, state.nload, state.lload,
                                              topo.cap, topo.bw, lv.vw, rt_a, rb_a,
                                              idx if kind == "link" else -1, idx, limit,
                                              TINY)  # fmt: skip
            if best < 0 or not top < limit:
                break
            state.move(int(rt_a[best]), int(rb_a[best]))
            moves += 1
            stall += 1
            if stall >= 256:  # keep the incremental loads exact
                state.refresh()
                stall = 0
            continue
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
        if BEST_MOVE_KERNEL:  # NumPy's argmin of the scores below, the hopeless unscored
            pick, top = _multilevel.best_move(lv.kern, topo.routes, m, state.lload, topo.bw,
                                              rt_a[sel], rb_a[sel], node_part[sel],
                                              idx if kind == "link" else -1, TINY)  # fmt: skip
            if not top < limit:
                break
            best = int(sel[pick])
            state.move(int(rt_a[best]), int(rb_a[best]))
            moves += 1
            stall += 1
            if stall >= 256:  # keep the incremental loads exact
                state.refresh()
                stall = 0
            continue
        up, dv = _multilevel.score_moves(
            lv.kern,
            topo.routes,
            m,
            state.lload,
            topo.bw,
            rt_a[sel],
            rb_a[sel],
            idx if kind == "link" else -1,
            TINY,
        )
        score = np.maximum(up, node_part[sel])
        if kind == "link":
            score = np.maximum(score, (state.lload[idx] + dv) / topo.bw[idx])
            score = np.where(dv < -TINY * (1 + state.lload[idx]), score, np.inf)
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
