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
everything offered. Untimed calls never run it.
"""

from __future__ import annotations

import time
from typing import Callable, Optional

from .._shared import interrupt
from .._shared.params import time_left
from .bisection import bisect_map
from .hierarchy import Topology
from .levels import TaskLevel
from .refinement import RefineState, cut_refine, refine

__all__ = ["grown_fine_starts", "grown_fits"]

#: A grown start's seconds (bisection and refinement) per second of the same call's coarsening
#: (the heavy-edge matchings of the finest graph down: the same passes over its tasks and edges,
#: under the same load). Measured (``/tmp/h53tmap/gprobe.py``, load 5.2, first start): the
#: stencils 0.9-2.9 (64x64 on 4x8x8 het the 2.9: 0.46 s after 0.16 s), the geometric graphs
#: 2.3-6.3 (their starts 0.02-0.31 s).
GROWN_PER_COARSEN = 3.0

#: ``multilevel.GROWN_TIMED = "share"``: the best coarse start's refinement (its levels
#: offered as they come) first, within this share of the time left, then the grown starts.
FIRST_SHARE = 0.4


def grown_fits(coarsen_s: float, left: Optional[float]) -> bool:
    """Whether the first grown start is predicted to end in the time left.

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


def grown_fine_starts(
    topo: Topology,
    fine: TaskLevel,
    starts: list,
    inc,
    max_moves: Optional[int] = None,
    first: Optional[Callable[[], object]] = None,
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
    for start in starts:
        share, sub = start[5], start[6]
        if sub.shape[0] != topo.P:
            continue
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
    return moves
