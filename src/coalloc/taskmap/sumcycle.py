"""V-cycles of the sum step: the step's moves repeated on coarsenings of the answer (h58sum).

The sum step (:func:`~coalloc.taskmap.sumrefine.sum_refine`) moves one boundary task at a
time (or swaps two, or ejects one); where the parts' borders are ragged a better border
needs groups of tasks to move together, and each single move of the group raises the sum
or meets the cap. A **V-cycle** (as the multilevel partitioners refine a partition again,
e.g. KaHIP's iterated V-cycles) contracts the answer: heavy-edge matchings of the task
graph restricted to the pairs on one processor, level after level, down to about as many
vertices as processors; the step runs on each level from the coarsest up, its mapping
projected down. A coarse vertex sits on one processor, so a coarse level has exactly the
node and link loads of its projection: a coarse move is a fine move of the whole group, and
the cap (the maximum on entry) holds on every level. On the held-back set of
``bench/taskmap/heldout.py`` from the untimed answers it lowered the sum after the step a
further 3-12 % (ba 2000 on a torus 4x4x4 1,418 -> 1,262, stencil9 64x32 on a dragonfly
489 -> 450, delaunay2d 3000 on a mesh 1,172 -> 1,110) in 0.1-0.5 s of CPU.

:func:`sum_cycles` keeps a cycle's answer only when it is lexicographically better
(the maximum occupancy lower, or not higher and the route cost lower). Under a deadline the
cycles start only where they are predicted to end before it (:func:`fits`); a stop during a
cycle restores the answer before it and is passed on, as a stop in the step's moves.
"""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from .coarsen import heavy_edge_matching
from .levels import TaskLevel
from .refinement import TINY, RefineState

__all__ = ["sum_cycles"]

#: V-cycles :func:`~coalloc.taskmap.sumrefine.sum_refine` runs after its moves, at most
#: (0: none, the step before h58sum). A second runs only when the first lowered the route
#: cost by at least :data:`CYCLE_GAIN` of it. Off (0): with the counted cap
#: (:data:`CYCLE_WORK` 0.5) they cost +5 % of untimed CPU on the held-back 24 and took the
#: sum within 1.25x of the best peer's 16 -> 19, but the answer's maximum ended higher on 4
#: of the 24 (a later bottleneck step starts from another answer; h59sum):
#: :data:`FINAL_CYCLES` runs them on the final answer instead.
VCYCLES = 0
#: V-cycles of the sum step on the default's final answer
#: (:func:`~coalloc.taskmap.sumrefine.final_cycles`, the portfolio's last step, after its
#: exact member; 0: none). There no bottleneck step runs
#: after them, so the maximum occupancy of the answer is never higher; inside the
#: multilevel's own steps (:data:`VCYCLES`) a later bottleneck step (the layer moves) starts
#: from a different answer and on 4 of the held-back 24 ended higher (stencil9 30x30 on a
#: star 40 20.18 -> 20.72, ba 3000 307.96 -> 309.62; h59sum). **On (2)**, with
#: :data:`FINAL_TIMED` (h60sum; h59sum had them untimed only, which broke "a time limit
#: that is not reached gives the untimed answer"). Alternated with 0 on the held-back 24
#: (``bench/taskmap/sum_dominated.py --set heldout``, load 8-15): the sum within 1.25x of
#: the best peer's untimed 16 -> 18 (CPU +11 %), at ``T`` = 5 s 12 -> 15, at 1 s 10 -> 10
#: (a stopped answer gets none); no maximum higher untimed (8 lower), 0 late calls.
FINAL_CYCLES = 2
#: Whether the final cycles come after the whole sum step again (True: untimed on the
#: held-back 24 +41 % CPU, ba 3000 12.5 -> 23 s; h59sum) or alone (False), their work cap
#: then :data:`CYCLE_WORK` x ``FINAL_WORK`` x the finest level's streams and tasks.
FINAL_STEP = False
FINAL_WORK = 8.0
#: The final cycles under a time limit too (False: untimed calls only), on an answer whose
#: limit was not reached (status other than ``time_limit``: a stopped answer has the
#: spare-time step, ``portfolio.sum_in_spare_time``), in the time left: a deadline inside
#: them keeps the cycles ended before it and sets the status ``time_limit`` (the answer is
#: then not the untimed one). So a limit that is not reached gives the untimed answer,
#: cycles included (h60sum). On.
FINAL_TIMED = True
#: What a cycle runs on each level: ``"blocks"`` (the default) the step without its link
#: sequences (the block swaps and the moves, swaps and ejections); ``"moves"`` the moves,
#: swaps and ejections alone (``sumrefine._phases``); ``"full"`` the whole step with its link
#: sequences (on 256 processors its untimed call took 3-4x the wall: ba 3000 on a tree
#: 16x4x4 86 -> 274 s, load 18-22). Untimed, load 13-17: "blocks" 1,110 / 2,195 / 450 on
#: delaunay2d 3000, ba 3000, stencil9 64x32 of the held-back set, "moves" 1,288 / 2,233 / 458,
#: at the same CPU (1.9 / 31.7 / 1.4 s against 1.8 / 32.5 / 1.2 s; h58sum).
CYCLE_STEP = "blocks"
#: The share of the route cost a cycle must save for the next to run.
CYCLE_GAIN = 0.01
#: A level is contracted while it has more vertices than this many times the processors
#: and the matching shrinks it to at most :data:`_SHRINK` of its vertices (0.9: on ba 3000
#: onto 256 processors the matchings within processors shrank 0.79-0.88 a level past the
#: third, 13 levels, and the untimed call took 9.2 -> 32.4 s of CPU; 0.75: 21.3 s, the sum
#: 2,195 -> 2,250 (2,367 without cycles), ba 2000 on a torus 1,262 -> 1,346 (1,428), four
#: others the same; load 13-14, h58sum).
_MIN_PER_PROC = 1
_SHRINK = 0.75
#: Under a deadline the cycles start only when the time left is at least this many times
#: the seconds the step before them took (:func:`fits`): a cycle's cost is 1-3 times the
#: step's, and a stop inside the cycles gives the stopped run's answer, not the step's
#: (stencil27 20x20x8 on a dragonfly 9x4x4 of ``bench/taskmap/heldout.py`` at ``T`` = 1 s:
#: 47.65 -> 59.47 in both calls while the cycles ran into the deadline; h58sum).
CYCLE_ROOM = 6.0
#: The cycles' counted work (:func:`charge`: the edges the step's passes scan, its tries
#: times the mean degree, the block swaps' processor pairs, the contractions' edges) at most
#: this many times the work the step before them did on the finest level (``None``: no
#: cap). A cycle that passes it stops before its next contraction or level's step; the
#: levels already refined are kept (projected down: a coarse level's loads are its
#: projection's), the keep test of :func:`sum_cycles` decides as for a whole cycle. A count,
#: no clock: the answer depends on the arguments only (h59sum; h58sum's cap read the process
#: CPU clock, so an untimed answer depended on the machine's speed and load).
CYCLE_WORK: Optional[float] = 0.5

_METER = threading.local()


def charge(units: float) -> None:
    """Add ``units`` of work to this thread's meter (:data:`CYCLE_WORK`)."""
    _METER.work = getattr(_METER, "work", 0.0) + units


def metered() -> float:
    """This thread's work meter: the units :func:`charge` added so far."""
    return getattr(_METER, "work", 0.0)


class _OverWork(Exception):
    """The cycles' work cap (:data:`CYCLE_WORK`) passed inside a cycle."""


def fits(step_seconds: float, cycles: int = -1) -> bool:
    """Whether ``cycles`` (-1: :data:`VCYCLES`) cycles may start: no deadline in force, or
    at least :data:`CYCLE_ROOM` x ``step_seconds`` (the seconds the step before them took)
    x the cycles left before it."""
    when = interrupt.deadline_ns()
    if when < 0:
        return True
    cycles = VCYCLES if cycles < 0 else cycles
    return (when - time.perf_counter_ns()) * 1e-9 >= CYCLE_ROOM * cycles * step_seconds


def _coarser(level: TaskLevel, m: np.ndarray):
    """The next level of a cycle: a heavy-edge matching of the pairs of ``level`` whose two
    vertices share a processor in ``m``; ``(coarse level, coarse vertex of each vertex,
    coarse mapping)``, or None when it would keep more than :data:`_SHRINK` of them."""
    n = level.n
    rows = np.repeat(np.arange(n), np.diff(level.ip))
    same = m[rows] == m[level.ix]
    a = sp.csr_matrix((level.iw[same], (rows[same], level.ix[same])), shape=(n, n))
    a.sort_indices()
    cmap = heavy_edge_matching(a.indptr.astype(np.int64), a.indices.astype(np.int64),
                               a.data.astype(np.float64))  # fmt: skip
    nc = int(cmap.max()) + 1 if n else 0
    if nc > _SHRINK * n:
        return None
    c = sp.csr_matrix((level.iw, (cmap[rows], cmap[level.ix])), shape=(nc, nc))
    c.setdiag(0)
    c.eliminate_zeros()
    c.sort_indices()
    mc = np.empty(nc, dtype=np.int64)
    mc[cmap] = m  # a matched pair shares its processor
    coarse = TaskLevel(c.indptr.astype(np.int64), c.indices.astype(np.int64),
                       c.data.astype(np.float64), np.bincount(cmap, weights=level.vw,
                                                              minlength=nc))  # fmt: skip
    return coarse, cmap, mc


def _cost(state: RefineState) -> float:
    lv, m = state.level, state.m
    return float(np.dot(lv.iw, state.topo.cost[m[state.rows], m[lv.ix]]))


def _cycle(state: RefineState, refine: Callable[[RefineState], int],
           work_end: Optional[float] = None) -> bool:  # fmt: skip
    """One V-cycle from ``state``'s mapping: its levels, then ``refine`` on each from the
    coarsest up (the finest last, in ``state``). Once this thread's meter (:func:`metered`)
    has passed ``work_end``, the levels left are not refined: the coarsest level refined so
    far is projected down into ``state`` (unchanged when none was). Whether the cap
    stopped it."""
    topo = state.topo

    def over() -> bool:
        return work_end is not None and metered() > work_end

    levels, maps, m = [state.level], [], state.m.copy()
    while levels[-1].n > _MIN_PER_PROC * topo.P:
        interrupt.check()
        if over():
            return True  # nothing refined: ``state`` as it was
        charge(float(levels[-1].ip[-1]))
        got = _coarser(levels[-1], m)
        if got is None:
            break
        levels.append(got[0])
        maps.append(got[1])
        m = got[2]
    if len(levels) > 1 and over():
        return True
    for d in range(len(levels) - 1, 0, -1):
        if over():  # the levels refined so far, projected down to the finest
            for e in range(d, 0, -1):
                m = m[maps[e - 1]]
            state.m = m
            state.refresh()
            return True
        coarse = RefineState(topo, levels[d], m)
        refine(coarse)
        m = coarse.m[maps[d - 1]]
    state.m = m
    state.refresh()
    if over():
        return True
    refine(state)
    return False


def sum_cycles(state: RefineState, refine: Callable[[RefineState], int],
               cycles: int = -1, step_work: Optional[float] = None) -> int:  # fmt: skip
    """V-cycles of ``refine`` (the sum step's moves) on ``state`` (module documentation).

    Parameters
    ----------
    state : RefineState
        The mapping, changed in place (its loads recomputed) only to a lexicographically
        better one: a lower maximum occupancy, or one not higher and a lower route cost.
    refine : callable
        The step on one level's state (in place, never above that state's maximum on
        entry).
    cycles : int, default -1
        At most this many cycles (-1: :data:`VCYCLES`).
    step_work : float, optional
        The counted work (:func:`charge`) of the step before the cycles: with
        :data:`CYCLE_WORK` set, the cycles stop past ``CYCLE_WORK * step_work`` more
        (the levels of the running cycle already refined kept, when better).

    Returns
    -------
    int
        The cycles kept.

    Examples
    --------
    The step itself as ``refine``: a 6 x 4 stencil on the four nodes of two racks, its
    mapping a local minimum of the moves already.

    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> from coalloc.taskmap.sumrefine import sum_refine
    >>> tasks = generators.stencil_task_graph((6, 4), volume=(0.5, 4.0), seed=1)
    >>> res = generators.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=1)
    >>> state = RefineState(hierarchy.topology(res), TaskLevel.of(tasks),
    ...                     np.random.default_rng(1).integers(0, 4, 24))
    >>> before = state.maximum()
    >>> kept = sum_cycles(state, lambda s: sum_refine(s, 200))
    >>> kept >= 0 and state.maximum() <= before
    True
    """
    cycles = VCYCLES if cycles < 0 else int(cycles)
    kept = 0
    work_end = (None if CYCLE_WORK is None or step_work is None
                else metered() + CYCLE_WORK * step_work)  # fmt: skip
    state.refresh()
    for _ in range(cycles):
        m0, top, cost = state.m.copy(), state.maximum(), _cost(state)
        try:
            stopped = _cycle(state, refine, work_end)
        except interrupt.DeadlinePassed:  # the answer before the cycle, then the stop
            state.m = m0
            state.refresh()
            raise
        value, after = state.maximum(), _cost(state)
        if value < top * (1 - TINY) or (value <= top * (1 + TINY) and after < cost):
            kept += 1
            if stopped:
                break  # the work cap
            if value <= top * (1 + TINY) and not after < cost * (1 - CYCLE_GAIN):
                break  # too little for another
            continue
        state.m = m0  # no better (or rounding lifted the maximum)
        state.refresh()
        break
    return kept

