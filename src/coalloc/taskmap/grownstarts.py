"""Under a time limit: the fine re-bisections without eigensolves (issue 40, h53tmap).

The multilevel mapper's best answers on the large hierarchical stencils come from a
bisection of the *finest* graph onto all the processors (its cuts are straighter than a
projected coarse cut), but with three growing seeds and a spectral split across every slow
link such a bisection costs 0.5-1.5 s of CPU on 2,000-4,000 tasks, most of it the
eigensolves (ARPACK in shift-invert mode, one per split). At ``T`` = 1 s on a loaded machine
the run was stopped before any of them, with the coarse start's answer: stencil 48x48 on
4x4x16 het 11.6-13 where SharedMap has 9.6, 64x64 on 4x8x8 het 8.2-8.4 where METIS has
7.974. Without the eigensolves it costs 0.05-0.5 s there: across the slow links each
split tries the three growing seeds and, instead of the spectral split, the prefixes of the
tasks sorted by the difference of their hop distances from two of the seeds
(:func:`~coalloc.taskmap.bisection.grow` with ``differences=True``: on a grid box whose
seeds are corners, one coordinate, so the prefixes are the straight slabs the spectral split
finds), FM after each. On the five stencils the default lost at 1 s (load 7.5): 48x48 het
9.6, 64x64 het 7.943, 16x16x16 on 4x4x16 19.2 and on 2x8x8 het 64 (the untimed run's
answers) and 12x12x12 het 16 (untimed 15.75; the coarse path had 17.66). Growing alone (the
first version) reached the first two only (16x16x16 25.6 and 85.3, 12x12x12 18.8).

:func:`grown_fine_starts` runs them for the starts on all the processors (one per speed
exponent, in the coarse ranking's order) right after the coarse starts, before any of them
is refined (``multilevel.GROWN_TIMED = "first"``; ``"after"``: after the best one's
refinement, the first version, which a 1 s call under a heavier load never reached on the
large stencils: 15/20 at or below the best peer against 20/20), and offers each to the time
limit only (``_Incumbent.offer_early``): a run that ends before its deadline keeps the
answer of the run without a time limit; a run the deadline stops returns the best of
everything offered. Untimed calls run them too (``multilevel.GROWN_UNTIMED``, h55tmap
follow-up; before, never): no clock, so every one begins, and the run returns the best of
them where it is below its own end (the held answer).
"""

from __future__ import annotations

import time
from typing import Callable, Optional

import numpy as np

from .._shared import interrupt
from .._shared.params import time_left
from .bisection import bisect_map, split_point
from .hierarchy import Topology
from .levels import TaskLevel
from .refinement import RefineState, cut_refine, refine

__all__ = ["grown_fine_starts", "grown_fits", "grown_order", "GrownPrediction", "slow_depth"]

#: The guard's prediction: "work" (h54tmap, :class:`GrownPrediction`: per graph kind, each
#: start from the work of its slow splits at the pace of the call's coarsening) or "coarsen"
#: (h53tmap: the first start as :data:`GROWN_PER_COARSEN` x the coarsening seconds, the rest
#: unchecked, every graph alike).
PREDICTION = "work"

#: A grown start's seconds (bisection and refinement) per second of the same call's coarsening
#: (the heavy-edge matchings of the finest graph down: the same passes over its tasks and edges,
#: under the same load). Measured (``/tmp/h53tmap/gprobe.py``, load 5.2, first start): the
#: stencils 0.9-2.9 (64x64 on 4x4x8 het the 2.9: 0.46 s after 0.16 s), the geometric graphs
#: 2.3-6.3 (their starts 0.02-0.31 s). (``PREDICTION = "coarsen"`` only.)
GROWN_PER_COARSEN = 3.0

#: ``PREDICTION = "work"``: a first grown start's seconds per unit of ``pace x entries x slow
#: depth`` (:class:`GrownPrediction`). Measured on the 30 of ``bench/taskmap/vs_peers.py`` in
#: two windows (h54tmap, ``/tmp/h54tmap/probe2.py``, loads 3.2-4.1 and 6.4-7.3): the stencils
#: 0.88-1.85 (12x12x12 het 2.33 once; the large ones, where a 1 s call is short of time,
#: 0.88-1.43), the geometric graphs 1.24-2.89; five stencils and five geometric graphs of other
#: shapes and densities 0.69-2.64. The coarsening ratio of h53tmap spread 0.87-12.9 on the
#: same runs (the Table 1 graph's 156 processors: 140 slow splits, 7.2-12.9 x its coarsening).
#: Above the large stencils' 1.43: a first start cut by the deadline leaves the early answer
#: (64x64 on 4x8x8 het: 13 where the coarse refinement has 8.2).
GROWN_PER_WORK = 2.0
#: A later start's seconds per unit of work, as a multiple of the largest rate measured on the
#: call's grown starts before it (later starts took 0.43-1.36 x the first's per unit of work).
GROWN_LATER = 1.25
#: Degree spread (standard deviation / mean of the tasks' numbers of neighbours) above which the
#: task graph is irregular and its grown starts come after the coarse starts' refinement: their
#: hop-distance slabs are the straight cuts of a grid box (the stencils 0.06-0.19; the geometric
#: graphs 0.28-0.52), elsewhere no better than the spectral split the refinement makes (the
#: geometric graph of 1,200 tasks on the Table 1 graph: 5.45 where that split has 4.93; the
#: others within 1.3 % either way at 1 s). ``inf``: every graph alike.
IRREGULAR_SPREAD = 0.25

#: ``multilevel.GROWN_TIMED = "share"``: the best coarse start's refinement (its levels
#: offered as they come) first, within this share of the time left, then the grown starts.
FIRST_SHARE = 0.4


def grown_fits(coarsen_s: float, left: Optional[float]) -> bool:
    """Whether the first grown start is predicted to end in the time left
    (``PREDICTION = "coarsen"``, h53tmap).

    Parameters
    ----------
    coarsen_s : float
        Seconds the call's coarsening took (its size and the machine's pace in one figure).
    left : float or None
        Seconds left to the deadline (None: no time limit).

    Returns
    -------
    bool
        ``GROWN_PER_COARSEN x coarsen_s <= left`` (True without a time limit). False: the
        multilevel mapper makes them after all its coarse starts' refinement (the search
        without them first, so no worse than it), as a call stopped inside the first grown
        start returned the coarse start unrefined (64x64 on 4x8x8 het at 1 s under a load
        of 6-7: 13 where the coarse refinement has 8.2). After the best one's refinement
        ("after") lost the others' (12x12x12 het 19.2 where they have 17.66).
    """
    return left is None or GROWN_PER_COARSEN * coarsen_s <= left


def slow_depth(topo: Topology, share: np.ndarray, n: int) -> float:
    """How many times a grown start's slow splits pass over the task graph.

    The bisection onto all the processors (:func:`~coalloc.taskmap.bisection.bisect_map`)
    simulated on the processors alone: each block's tasks in proportion to its share, a split
    slow where its gap is above the fastest and its block has more than 8 tasks (as
    ``bisect_map`` decides); the sum of the slow splits' blocks as fractions of all the tasks.
    A slow split costs three growing tries, three difference tries and their FM passes on its
    tasks; a fast one a compiled one-seed split (far less).

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    share : ndarray of float64, shape (P,)
        The start's share of the compute per position.
    n : int
        Tasks.

    Returns
    -------
    float
        0 for one processor; ``log2(P / cores)`` on a balanced cluster whose cores share fast
        links; up to ``log2 P`` where every split is slow (the Table 1 graph: 7.4).

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> from coalloc.taskmap.hierarchy import topology
    >>> topo = topology(hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=4))
    >>> float(slow_depth(topo, np.ones(topo.P), 1000))  # the rack and node splits only
    2.0
    """
    if topo.P < 2:
        return 0.0
    fast = float(topo.gap.min()) if topo.gap.shape[0] else 0.0
    gap = topo.cost[np.arange(topo.P - 1), np.arange(1, topo.P)].tolist()
    cum = np.concatenate(([0.0], np.cumsum(np.asarray(share, dtype=np.float64))))
    total, depth = float(cum[-1]), 0.0
    stack = [(0, topo.P)]
    while stack:
        lo, hi = stack.pop()
        frac = (cum[hi] - cum[lo]) / total
        if hi - lo < 2 or n * frac < 2:
            continue
        s = split_point(gap, lo, hi)
        if gap[s - 1] > fast * (1 + 1e-9) and n * frac > 8:
            depth += frac
        stack += [(lo, s), (s, hi)]
    return depth


class GrownPrediction:
    """When the grown starts come, and which (``PREDICTION = "work"``, h54tmap).

    A grown start's seconds are predicted as :data:`GROWN_PER_WORK` x ``pace`` x the finest
    graph's entries x its :func:`slow_depth`, ``pace`` the call's coarsening seconds per
    vertex and entry it matched (the machine's speed under the load of the moment); after a
    grown start, from the largest rate (seconds per entry x slow depth) the call measured on
    them, x :data:`GROWN_LATER`. They come first (:meth:`first`) when the task graph is
    regular (:data:`IRREGULAR_SPREAD`) and the first is predicted to end in the time left;
    each then begins only when predicted to end (:meth:`fits`); those that do not, and all of
    them where they do not come first, after the coarse starts' refinement (``skipped``).

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    levels : list of TaskLevel
        The finest level first, then the coarsening's levels.
    coarsen_s : float
        Seconds the coarsening took.
    """

    def __init__(self, topo: Topology, levels: list, coarsen_s: float):
        fine = levels[0]
        self.topo, self.n, self.entries = topo, fine.n, float(fine.ip[-1])
        matched = sum(lv.n + float(lv.ip[-1]) for lv in levels[:-1])
        self.pace = coarsen_s / matched if matched > 0 else 0.0
        deg = np.diff(fine.ip)
        self.spread = float(deg.std() / deg.mean()) if fine.n and deg.mean() > 0 else 0.0
        self.rate: Optional[float] = None  # measured seconds per entry x slow depth
        self.skipped: list = []

    def work(self, start: tuple) -> float:
        """Entries x slow depth of ``start``'s grown bisection."""
        return self.entries * slow_depth(self.topo, start[5], self.n)

    def seconds(self, start: tuple) -> float:
        """The predicted seconds of ``start``'s grown start (bisection and refinement)."""
        if self.rate is None:
            return GROWN_PER_WORK * self.pace * self.work(start)
        return GROWN_LATER * self.rate * self.work(start)

    def fits(self, start: tuple) -> bool:
        """Whether ``start``'s grown start is predicted to end in the time left (True
        without a time limit)."""
        left = time_left()
        return left is None or self.seconds(start) <= left

    def measured(self, start: tuple, seconds: float) -> None:
        """Keep the rate of a grown start that took ``seconds``."""
        w = self.work(start)
        if w > 0:
            self.rate = max(self.rate or 0.0, seconds / w)

    def first(self, starts: list) -> bool:
        """Whether the grown starts come before the coarse starts' refinement."""
        full = [s for s in starts if s[6].shape[0] == self.topo.P]
        return bool(full) and self.spread <= IRREGULAR_SPREAD and self.fits(full[0])


def grown_order(topo: Topology, levels: list, starts: list, coarsen_s: float) -> tuple:
    """Whether the grown starts come after the coarse starts' refinement, and the prediction
    that decides which of them begin (:data:`PREDICTION`).

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    levels : list of TaskLevel
        The finest level first, then the coarsening's levels.
    starts : list
        The coarse starts in the coarse ranking's order (:func:`grown_fine_starts`).
    coarsen_s : float
        Seconds the call's coarsening took.

    Returns
    -------
    tuple
        ``(late, predict)``: ``late`` True when they all come after; ``predict`` the
        :class:`GrownPrediction` to give :func:`grown_fine_starts` (None with
        ``PREDICTION = "coarsen"``: every start begins).
    """
    if PREDICTION == "coarsen":
        return not grown_fits(coarsen_s, time_left()), None
    predict = GrownPrediction(topo, levels, coarsen_s)
    return not predict.first(starts), predict


def grown_fine_starts(
    topo: Topology,
    fine: TaskLevel,
    starts: list,
    inc,
    max_moves: Optional[int] = None,
    first: Optional[Callable[[], object]] = None,
    predict: Optional[GrownPrediction] = None,
) -> int:
    """Bisect the finest graph again, without eigensolves, for every start on all processors.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    fine : TaskLevel
        The finest level (the task graph).
    starts : list
        The multilevel mapper's coarse starts, ``(occupancy, -processors, -alpha, i, state,
        share, subset)``, in the order to try them (the coarse ranking).
    inc : multilevel._Incumbent
        The run's incumbent; each refined mapping goes to its ``offer_early``.
    max_moves : int, optional
        Bottleneck moves of the refinement (default ``max(200, 4 x tasks)``, as a level's).
    first : callable, optional
        Run before them within :data:`FIRST_SHARE` of the time left (the best coarse start's
        refinement; stopped there, what it offered stays).
    predict : GrownPrediction, optional
        Each start begins only when predicted to end (:meth:`GrownPrediction.fits`); the
        others go to its ``skipped``, and each one's seconds to its measured rate.

    Returns
    -------
    int
        The moves made (not counted in the run's own: its untimed answer does not have
        them).
    """
    if first is not None:
        left = time_left()
        when = None if left is None else time.perf_counter() + FIRST_SHARE * left
        try:
            with interrupt.until(when):
                first()
        except interrupt.DeadlinePassed:
            pass
    moves = 0
    cap = max_moves if max_moves is not None else max(200, 4 * fine.n)
    for start in list(starts):  # (the late call's ``starts`` may be ``predict.skipped``)
        share, sub = start[5], start[6]
        if sub.shape[0] != topo.P:
            continue
        if predict is not None and not predict.fits(start):
            predict.skipped.append(start)
            continue
        t = time.perf_counter()
        m = bisect_map(topo, fine, sub, share, full=True, spectral=False)
        state = RefineState(topo, fine, m)
        before = state.maximum()
        moves += cut_refine(state, sub, share)
        moves += refine(state, cap)
        if state.maximum() > before * (1 + 1e-12):  # as a level does (multilevel)
            state = RefineState(topo, fine, m)
            moves += refine(state, cap)
        inc.offer_early(state.maximum(), state.m, [before, state.maximum()], moves=moves,
                        initial_processors=int(sub.shape[0]), initial_level=0)  # fmt: skip
        if predict is not None:
            predict.measured(start, time.perf_counter() - t)
    return moves
