"""Multilevel bottleneck mapping: the family's default method (issue 26).

:func:`map_multilevel` minimises the maximum occupancy (over processors and links) of a
mapping of a :class:`~coalloc.taskmap.TaskGraph` onto a
:class:`~coalloc.taskmap.ResourceGraph`:

1. **Coarsening.** Heavy-edge matching (tasks visited in a seeded random order, each
   matched with the unmatched neighbour it exchanges most with, under a weight cap)
   contracts the task graph level by level until it has about ``coarse_factor x`` as many
   vertices as there are processors (a hub-heavy graph on many processors: fewer, by label
   propagation; :func:`~coalloc.taskmap.levels.coarse_target`). A stream inside a coarse
   vertex stays on one processor, so a coarse mapping has exactly the loads of its projection.
2. **Initial mapping by recursive bisection along the resource hierarchy.** Processors
   are listed depth-first from the centre of the resource graph, heavier subtrees first
   (:func:`hierarchy_order`), so that every prefix and every block of the list is a compact
   part of the machine. A block is split where two consecutive processors are farthest
   apart (the slowest links between them), and the tasks are split in proportion to the
   two halves' shares by graph growing (gain: volume to the grown side minus volume to the
   rest) followed by Fiduccia-Mattheyses passes; across links slower than the fastest ones
   three growing seeds (the ends of a pseudo-diameter and the task farthest from both) and
   a spectral split (Fiedler vector) are tried and the smallest cut kept. A processor's
   share is ``capacity ** alpha`` for each ``alpha`` of ``speed_exponents``: 1 balances
   compute, 0 cuts the task graph into equal parts (lighter on the links).
3. **Which processors.** The bisection runs on the coarsest graph for nested prefixes of
   the processor list (all, half, a quarter, ..., one: the bottleneck objective may prefer
   fewer processors when links are slow) and each ``alpha``; the ``keep`` starts of lowest
   maximum occupancy go on. The best two and every start on all processors are also
   bisected again on the finest graph.
4. **Refinement at every level** (coarsest to finest): greedy k-way moves of boundary tasks
   that lower the route cost of the streams (volume x sum of ``1 / bandwidth`` over the
   route) within the balance, then moves off the current bottleneck -- the processor or link
   of highest occupancy -- each move the one that leaves every resource it loads more below
   the current maximum and lowers the bottleneck most (candidates: the tasks on the
   processor, or the tasks whose streams cross the link; destinations: the processors of
   the task's neighbours, the least occupied processors and the processors next to it in
   the list). Every accepted move lowers the number of resources at the maximum, or the
   maximum itself, so the loop ends; it stops when the bottleneck has no such move. Moves
   are evaluated for all candidates at once (vectorised), with incremental node and link
   loads.

Compiled (``coalloc.taskmap._multilevel``; twins in
``coalloc.taskmap._reference.multilevel``): the routes between processors as one CSR, the
one-seed bisections whole, growing + FM of the other tries, and the scores of the moves.
Above 6,000 tasks the fine re-bisections take one seed and no spectral split, and at most
``max(2, 24000 / tasks)`` of them run.

A mapping that meets :func:`~coalloc.taskmap.bounds.lower_bound` with
``strength="basic"`` ends the run (it is optimal): the closed forms cost microseconds, where
the default ``"stars"`` bound costs up to 0.1 s on the pipeline benchmarks (1-7x the
mapper's own work there) and ended no run sooner on the 30 instances of
``bench/taskmap/vs_peers.py`` (issue 40). Without a time limit, when that mapping is the
quick block start or the paper's, one bisection of the finest graph onto all processors
(+ route-cost moves) is tried first and returned instead when it also meets the bound with
less volume x route distance (the sum objective of
:func:`~coalloc.taskmap.communication_cost`; issue 40). The last step (``sum_refine=True``,
:func:`~coalloc.taskmap.sumrefine.sum_refine`) lowers that sum on the answer by moves and
swaps of boundary tasks that keep every processor and link at most the maximum occupancy
found: the bottleneck never rises.

The objective returned is recomputed from scratch by
:func:`coalloc.taskmap.max_occupancy` (the family's helper).

This module is the method (the order of the steps above, the starts, the incumbent under a
time limit); each step is a module of its own: :mod:`~coalloc.taskmap.hierarchy` (the
processor order and the routes), :mod:`~coalloc.taskmap.levels` (1),
:mod:`~coalloc.taskmap.bisection` (2), :mod:`~coalloc.taskmap.refinement` and
:mod:`~coalloc.taskmap.sumrefine` (4); the starts are made in :mod:`~coalloc.taskmap.starts`
and, under a time limit, the fine re-bisections without eigensolves in
:mod:`~coalloc.taskmap.grownstarts`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared.constraints import checked
from .._shared.params import offer_incumbent, time_left, time_up
from .._shared.seeding import check_seed
from . import splits, starts, timedorder
from .bisection import bisect_map, note_pace
from .bounds import lower_bound
from .grownstarts import grown_fine_starts, grown_order
from .hierarchy import Topology, hierarchy_order, topology
from .levels import TaskLevel, coarse_target, coarsen_level, hub_clustering
from .model import ResourceGraph, TaskGraph, check_graphs
from .occupancy import max_occupancy, occupancy_graph
from .refinement import RefineState, cut_refine, refine
from .result import TaskMappingResult
from .starts import _FINE_WORK, _coarse_starts, _paper_starts, _plan, _processor_sets, _quick_start
from .sumrefine import held_sum, sum_refine
from .swaprefine import swapped

__all__ = ["map_multilevel", "hierarchy_order"]

#: Under a time limit, a mapping that meets the lower bound early gets the bisection spent
#: on the volume (:func:`_lighter_at_bound`) in 3/4 of the time left, as an untimed call does
#: (issue 40 follow-up, h52tmap): the timed calls skipped it, and the quick start's blocks
#: carried 1.5-2.3x the volume x distance on the stencils that meet the bound (48x48 on
#: 4x4x8: 205.8 at T = 1 s, 88.3 untimed, the best peer's 88.3). False: skipped, as before.
LIGHTER_TIMED = True
#: Timed: the fine re-bisections without eigensolves (:mod:`~coalloc.taskmap.grownstarts`;
#: h53tmap): "first" before the coarse starts' refinement (after all of it if predicted too
#: long or the graph is irregular: :func:`~coalloc.taskmap.grownstarts.grown_order`), "share"
#: after the best one's in a share of the time left, "after" after it.
GROWN_TIMED = "first"
#: Untimed too: the grown starts (as :data:`GROWN_TIMED` orders them; no clock, so every one
#: begins), their answers held for the end (:func:`_held_better`; h55tmap follow-up: the
#: held-back set's mm25d 16x16x4 on 4x4x4x2 het had 16.8 untimed where a timed call's grown
#: start gives 13.87; on the 30 of ``vs_peers`` untimed no answer higher, three geometric
#: graphs 0.2-1.3 % lower, the CPU within noise: 18.5 -> 17.9 s in all). False: untimed runs
#: skip them, as before.
GROWN_UNTIMED = True
#: Timed: a run that ends by itself returns the best answer offered to the time limit only
#: (the early answer, a grown start) where that is lower than the run's own end
#: (:func:`_held_better`; h54tmap follow-up: the contract keeps the best answer found). False:
#: the run's own end, as before.
KEEP_HELD = True
#: Untimed too: the early answer's count of moves (:func:`_early_answer`, step 1; no clock)
#: runs, and the run returns it where it is lower than the run's own end (h55tmap: the house
#: contract keeps the best answer a solver found; table1 c=1 #0's untimed answer was 0.3857
#: where the refined quick blocks of a timed call have 0.3322). False: untimed runs skip it.
HELD_UNTIMED = True
#: Untimed, up to this many tasks the best of the count's starts is refined on to the end of
#: its moves too (:func:`_finish`, no clock): table1 c=1 #0 0.3398 -> 0.3322, as the timed
#: call's clock step; on the geometric graphs of 500-2,000 tasks it cost 0.2-2 s of CPU and
#: changed no answer of ``vs_peers``' 30 (h55tmap). 0: the count alone.
HELD_FINISH_TASKS = 300
#: Timed, under a budget below this many seconds (0: never, the default): the paper's starts
#: (their clustering: 0.06-0.07 s on 58 tasks under a load of 6) come after the first coarse
#: start's refinement, not before the coarsening (h54tmap section 3: table1-c1-3 kept the early
#: answer 0.3146 at 0.05-0.15 s where that refinement has 0.3088 at 0.17-0.23 s). Off: h55tmap
#: measured it against the contract audit's default-vs-single-method check (ISSUE40).
PAPER_AFTER_BELOW = 0.0
#: Bottleneck moves per slice of the finish at a deadline (:func:`_finish`; the clock between).
_FINISH_SLICE = 8
#: True (the default): a finish with a deadline makes one move first, its own probe of the
#: rate, before a slice the rate predicts: the early answer's rate (a quick start's moves)
#: was 5-8 x below a stopped run's on ba 3000 onto a tree of 256 (8 moves 0.07 s of wall
#: under a load of 10: the 1 s call ended at 1.09 s; h57fast). Same moves, other slices.
FINISH_PROBE = True
#: Under a time limit, the quick start is refined first for at most this share of the
#: budget (:func:`_early_answer`): the paper's starts (their clustering: 0.2 s on 100 tasks)
#: come before the multilevel's, and a deadline among them returned the unrefined start.
_EARLY_SHARE = 0.25
#: Bottleneck moves the early answer's starts get in all whatever the share says
#: (:func:`_early_answer`; only the deadline stops them): a start cut in its moves by the
#: clock left the answer to the machine's load (the audit's 23.33 or 23.92 at 0.05 s; with
#: half a share more, 1701 under a load of 7). Two slices: the few-processor blocks of the
#: audit's instances end in 2-7.
_EARLY_MOVES = 16


def _finish_allowance(limit: float) -> float:
    """Seconds past the deadline the finish of a stopped run may spend (:func:`_finish`):
    half the overrun the family's contract allows, ``max(0.05, 0.05 x limit)``, the other
    half left to the stop itself and the result's build."""
    return 0.5 * max(0.05, 0.05 * limit)


# --------------------------------------------------------------------------------------
# The method
# --------------------------------------------------------------------------------------


class _Incumbent:
    """The best complete mapping the run has held so far, offered to the time limit in
    force (:func:`coalloc._shared.params.offer_incumbent`): a level's mapping is projected
    to the tasks (a coarse mapping has exactly the loads of its projection) only if the
    deadline stops the run."""

    def __init__(self, tasks, resources, topo, levels, seed, params, started):
        self.args = (tasks, resources, topo, levels, seed, params, started)
        left = time_left()  # the deadline in force (None: no time limit)
        self.finish_by = self.early_by = self.early_last = self.budget = None
        if left is not None:
            when = time.perf_counter() + left
            self.budget = when - started  # the run's whole budget (:data:`PAPER_AFTER_BELOW`)
            self.finish_by = when + _finish_allowance(when - started)
            self.early_by = started + _EARLY_SHARE * (when - started)
            self.early_last = when  # the count's cap (:func:`_early_answer`): the deadline
        self.rate: list = []  # the finishes' wall seconds a move (:func:`_finish`)
        self.pending: Optional[tuple] = None  # the clock step put off (timedorder)
        self.value = np.inf
        self.early = np.inf  # the value of the answer offered by offer_early
        self.early_best: Optional[tuple] = None  # its (mapping, history, counts)
        self.floor = lower_bound(tasks, resources, strength="basic")
        self.best: Optional[tuple] = None

    def offer(self, value: float, m: np.ndarray, depth: int, history: list, **counts) -> None:
        """Offer ``m`` (processor positions of the vertices of level ``depth``) when its
        maximum occupancy ``value`` is below the best offered so far."""
        if not value < self.value * (1 - 1e-12):
            return
        self.value = value
        m, history = m.copy(), [float(h) for h in history]
        self.best = (m, depth, history, counts)
        # (its build finishes it and keeps the early answer instead when that is better)
        offer_incumbent(self._builder(m, depth, history, counts))
        if value <= self.floor * (1 + 1e-12):  # it meets the lower bound: nothing is better
            raise _AtBound()

    def offer_early(self, value: float, m: np.ndarray, history: list, **counts) -> None:
        """Offer the finest mapping ``m`` to the time limit only (:func:`_early_answer`):
        the run's own choices (its best, its stop at the lower bound) stay those of the run
        without a time limit, so an answer found before the deadline is unchanged."""
        if value < min(self.value, self.early) * (1 - 1e-12):
            self.early = value
            self.early_best = (m.copy(), [float(h) for h in history], counts)
            if self.early_by is not None:  # (untimed, HELD_UNTIMED: kept for the end only)
                offer_incumbent(self._builder(*self.early_best[:1], 0, *self.early_best[1:]))

    def _builder(self, m: np.ndarray, depth: int, history: list, counts: dict):
        """The result of mapping ``m`` of level ``depth``, built if the deadline stops the
        run (:func:`~coalloc._shared.params.offer_incumbent`)."""
        tasks, resources, topo, levels, seed, params, started = self.args
        finish_by = self.finish_by

        def build() -> TaskMappingResult:
            fine = m
            for d in range(depth - 1, -1, -1):
                fine = fine[levels[d].cmap]
            # the deadline stopped the run: the stage's mapping (a coarse start or an
            # unrefined quick start is up to 140x worse on a bipartite graph) and the early
            # refined quick start are finished by bottleneck moves on the finest graph while
            # the overrun allowance lasts, the one of lower maximum first; the better is kept
            cands = [(history[-1], fine, history, counts)]
            early = self.early_best
            if early is not None and early[0] is not m:
                cands.append((self.early, *early))
            cands.sort(key=lambda c: c[0])  # (stable: the stage's mapping first on a tie)
            best = None
            for value0, mapping, hist, counts_ in cands:
                if finish_by is not None and time.perf_counter() >= finish_by:
                    # past the allowance already (a stop that came late under load): the
                    # lowest as it is; its finish's first state alone cost 5-70 ms on
                    # 4,096 tasks past a 1 s limit
                    best = (value0, mapping, hist, counts_, 0) if best is None else best
                    break
                mapping, moves, value = _finish(topo, levels[0], mapping, finish_by, rate=self.rate)
                if best is None or value < best[0] * (1 - 1e-12):
                    hist = [*hist, value] if value < value0 * (1 - 1e-12) else hist
                    best = (value, mapping, hist, counts_, moves)
            _, fine, hist, counts_, moves = best
            iterations = {"levels": len(levels), **counts_,
                          "processors_used": int(np.unique(fine).shape[0])}  # fmt: skip
            iterations["moves"] = int(iterations.get("moves", 0)) + moves
            iterations["finish_moves"] = moves
            timings = {"total": time.perf_counter() - started}
            return _result(tasks, resources, topo.order_nodes[fine], seed, dict(params),
                           timings, iterations, hist)  # fmt: skip

        return build

    def result(self, timings: dict, moves: int) -> TaskMappingResult:
        """The mapping last offered, as the method's answer (it met the lower bound)."""
        m, depth, history, counts = self.best
        tasks, resources, topo, levels, seed, params, _ = self.args
        for d in range(depth - 1, -1, -1):
            m = m[levels[d].cmap]
        iterations = {"levels": len(levels), "moves": moves,
                      "processors_used": int(np.unique(m).shape[0]),
                      "initial_processors": int(counts.get("initial_processors", topo.P)),
                      "initial_level": int(counts.get("initial_level", -2)),
                      "stopped_at_bound": 1}  # fmt: skip
        out = _result(tasks, resources, topo.order_nodes[m], seed, params, timings,
                      iterations, history)  # fmt: skip
        out.bound = min(self.floor, float(out.max_occupancy))  # the proof it stopped on
        return out


class _AtBound(Exception):
    """Raised when a mapping meets :func:`~coalloc.taskmap.bounds.lower_bound`."""


@checked("coalloc.taskmap.constraints", "multilevel")
def map_multilevel(
    tasks: TaskGraph,
    resources: ResourceGraph,
    *,
    seed: Optional[int] = 0,
    coarse_factor: float = 4.0,
    subsets: bool = True,
    keep: int = 2,
    max_moves: Optional[int] = None,
    speed_exponents: Optional[tuple] = None,
    paper_start: int = 300,
    sum_refine: bool = True,
) -> TaskMappingResult:
    """Map ``tasks`` onto ``resources`` minimising the maximum occupancy (multilevel).

    Heavy-edge coarsening, recursive bisection of the coarsest graph along the resource
    hierarchy on nested prefixes of the processors, and bottleneck-driven refinement at
    every level; see the module's documentation and ``coalloc docs taskmap``.

    Parameters
    ----------
    tasks : TaskGraph
        The task graph (directed graphs are mapped by their pair volumes).
    resources : ResourceGraph
        The resource graph.
    seed : int, optional
        Seed of the matching order; same seed, same mapping.
    coarse_factor : float, default 4.0
        Coarsening stops at about ``coarse_factor x`` processors vertices (positive; fewer
        on a hub-heavy task graph: :func:`~coalloc.taskmap.levels.coarse_target`).
    subsets : bool, default True
        Also try nested prefixes of the processor list (half, quarter, ..., one processor).
    keep : int, default 2
        How many of the best initial mappings are refined through all levels (at least 1).
    max_moves : int, optional
        Refinement moves per level (default ``max(200, 4 x vertices)``).
    speed_exponents : tuple of float, optional
        The initial mappings give processor ``p`` a share of the compute proportional to
        ``capacity[p] ** alpha`` for each ``alpha`` here (1: proportional to speed; 0: equal
        shares, which cut the task graph into equal parts and may load slow links less).
        Default ``(1.0, 0.5, 0.0)`` above ``paper_start`` tasks, ``(1.0,)`` up to there
        (where the paper's start is one more: the other exponents changed none of 33 small
        instances of ``bench/taskmap/vs_peers.py`` and Table 1, and cost a quarter of the
        time).
    paper_start : int, default 300
        Up to this many tasks, the mapping of the paper's ``"open+improve"``
        (:func:`~coalloc.taskmap.map_tasks`) is one more start, refined by bottleneck moves
        (it is quick there and wins on some pipelines; its time grows fast beyond).
    sum_refine : bool, default True
        A last step on the answer: moves and swaps of boundary tasks that lower the sum of
        volume x route distance (:func:`~coalloc.taskmap.communication_cost`) while every
        processor and link stays at most the maximum occupancy found
        (:func:`~coalloc.taskmap.sumrefine.sum_refine`; at most ``max(200, 4 x tasks)``
        tries): the maximum occupancy never rises. Under a time limit the mapping before
        it is the one offered.

    Returns
    -------
    TaskMappingResult
        ``method`` "multilevel"; ``timings`` has ``"coarsen"``, ``"initial"``,
        ``"refine"``, ``"total"``; ``iterations`` ``"levels"``, ``"moves"``,
        ``"processors_used"``, ``"initial_processors"``, ``"initial_level"`` (-1: the
        paper's open+improve was the best start, -2 the quick block start, -3 the paper's
        base), and ``"stopped_at_bound"`` 1 when a mapping met
        :func:`~coalloc.taskmap.bounds.lower_bound` (then ``bound`` is set: it is optimal);
        ``history`` the maximum occupancy after the initial mapping and after each level's
        refinement (and after the sum step, when that lowered it). Under a time limit
        (:func:`coalloc.taskmap.solve`) every better mapping
        is offered as it comes: the quick start, the paper's base and open+improve (up to
        ``paper_start`` tasks), each initial start, each level's refinement. Under a time
        limit quick block starts (on all the processors and on each processor subset) are
        also refined first (a count of moves, then the best of them for at most a quarter
        of the budget; offered to the time limit only), and a run the deadline stops
        returns the mapping last offered and that early one finished by bottleneck moves on
        the tasks for at most half the overrun allowance (``iterations["finish_moves"]``),
        the better of the two: never worse than the stage's mapping. Quick block starts
        refined by a count of moves (untimed: the count, and up to 300 tasks the best of
        them to the end of its moves) and the grown starts (:data:`GROWN_UNTIMED`) are
        kept aside too: a run that ends by itself returns
        the best of them where it is below its own end (``iterations["early_answer"]`` 1),
        so the answer is never worse than one the run held.

    Raises
    ------
    TypeError, ValueError
        Graphs of the wrong type, a bad parameter.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> result = map_multilevel(tasks, res)
    >>> result.max_occupancy, result.method
    (0.6, 'multilevel')
    """
    return _mapped(tasks, resources, seed, _Tuning(
        coarse_factor=coarse_factor, subsets=subsets, keep=keep, max_moves=max_moves,
        speed_exponents=speed_exponents, paper_start=paper_start, sum_refine=sum_refine,
    ), PAPER_AFTER_BELOW)  # fmt: skip


def _mapped(tasks: TaskGraph, resources: ResourceGraph, seed, tuning: _Tuning,
            paper_after_below: float) -> TaskMappingResult:  # fmt: skip
    """:func:`map_multilevel`; the paper's starts late under a budget below
    ``paper_after_below`` (:data:`PAPER_AFTER_BELOW`; ``portfolio.PAPER_AFTER_BELOW``)."""
    seed, params = _checked_params(tasks, resources, seed, tuning)
    t0 = time.perf_counter()
    if starts.FIRST_ANSWER:  # before anything stoppable: a timed run's first answer (h56sets)
        offer_incumbent(lambda: starts._first_answer(tasks, resources, seed, params, t0))
    topo = topology(resources)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    fine = TaskLevel.of(tasks)
    levels = [fine]
    inc = _Incumbent(tasks, resources, topo, levels, seed, params, t0)
    run = {"moves": 0, "t1": None}  # the moves made, when the coarsening ended
    try:
        best, t2 = _search(tasks, resources, topo, levels, inc, seed, params, rng, run,
                           paper_after_below)  # fmt: skip
    except _AtBound:  # a mapping met the lower bound: it is optimal, stop here
        return _answer_at_bound(inc, topo, levels, params, run, t0)
    best = pre = swapped(topo, fine, best, run)  # swaps at a bottleneck processor (h53tmap)
    if params["sum_refine"]:
        m_b, moves_b, value_b = _sum_refined(topo, fine, best[1])
        run["moves"] += moves_b
        if value_b < best[0] * (1 - 1e-12):  # the step may lower the maximum too
            best = (value_b, m_b, [*best[2], value_b], *best[3:])
        else:
            best = (best[0], m_b, *best[2:])
    best = timedorder.layered(topo, fine, best, pre, resources.links, run, inc.early_by is None,
                   _sum_refined if params["sum_refine"] else None)  # fmt: skip
    t3 = time.perf_counter()
    mapping = topo.order_nodes[best[1]]
    timings = {"coarsen": run["t1"] - t0, "initial": t2 - run["t1"], "refine": t3 - t2,
               "total": t3 - t0}  # fmt: skip
    iterations = {
        "levels": len(levels),
        "moves": run["moves"],
        "processors_used": int(np.unique(best[1]).shape[0]),
        "initial_processors": int(best[3]),
        "initial_level": int(best[4]),
    }
    out = _result(tasks, resources, mapping, seed, params, timings, iterations, best[2])
    return _held_better(inc, out) if KEEP_HELD else out


def _held_better(inc: _Incumbent, out: TaskMappingResult) -> TaskMappingResult:
    """The answer ``out`` of a run that ended by itself, or, under a time limit, the best
    answer offered to the time limit only (:meth:`_Incumbent.offer_early`: the early answer
    of :func:`_early_answer` or a grown start of :mod:`~coalloc.taskmap.grownstarts`) where
    its maximum occupancy is lower (h54tmap follow-up): the contract keeps the best answer a
    timed call found, and the run's end is not always below what it held (table1 c=1 #1 at
    1 s: 0.392 after 0.36 early). Both are built from scratch (:func:`_result`) and compared
    there. Without a time limit the early answer is its count of moves alone
    (:data:`HELD_UNTIMED`; h55tmap: untimed answers keep it too, the same contract)."""
    if inc.early_best is None or not inc.early < out.max_occupancy * (1 - 1e-12) or \
            inc.early_best[2].get("search_layers"):  # (held for the deadline only) # fmt: skip
        return out
    m, history, counts = inc.early_best
    tasks, resources, topo, levels, seed, params, _ = inc.args
    if params["sum_refine"]:  # the held answer's sum step too (sumrefine.HELD_SUM, h58sum)
        m, history = held_sum(topo, levels[0], m, history)
    iterations = {**out.iterations, "initial_level": -2, **counts,
                  "processors_used": int(np.unique(m).shape[0]), "early_answer": 1}  # fmt: skip
    if "initial_processors" not in counts:  # a quick block start's set is not recorded
        iterations.pop("initial_processors", None)
    early = _result(tasks, resources, topo.order_nodes[m], seed, params, dict(out.timings),
                    iterations, history)  # fmt: skip
    return early if early.max_occupancy < out.max_occupancy * (1 - 1e-12) else out


def _search(tasks: TaskGraph, resources: ResourceGraph, topo: Topology, levels: list,
            inc: _Incumbent, seed: int, params: dict, rng, run: dict,
            paper_after_below: float = 0.0) -> tuple:  # fmt: skip
    """Steps 1-4 of :func:`map_multilevel` (the module's documentation): the quick start,
    the paper's starts, the coarsening (``levels`` extended), the coarse starts and their
    refinement through the levels; every better mapping offered to ``inc`` (which raises
    :class:`_AtBound` at the lower bound); timed, layer moves inside. Returns ``(best, time
    the starts ended)``, ``best`` = ``(occupancy, mapping, history, initial processors,
    initial level)``; ``rng``: matchings; ``run``: moves, ``paper_after_below``: _mapped's."""
    fine = levels[0]
    quick = _quick_start(topo, fine)
    quick_occ = RefineState(topo, fine, quick).maximum()
    inc.offer(quick_occ, quick, 0, [quick_occ], initial_level=-2)
    if inc.early_by is not None or HELD_UNTIMED:  # a refined answer early (untimed: the count)
        _early_answer(topo, fine, quick, quick_occ, inc, params["subsets"],
                      timedorder.EARLY_LATE and tasks.n > params["paper_start"])  # fmt: skip
    interrupt.check()  # the next steps may import and build the clustering first
    paper = first = None
    # the paper's open+improve (unchanged) as one more start, refined by bottleneck moves;
    # first, since it is quick there (its mappings are offered as they come), and weighed
    # against the others last (ties go to the multilevel's starts); under a tiny budget
    # (``paper_after_below``) after the first coarse start's refinement
    paper_args = (tasks, resources, topo, fine, inc, seed, params, run)
    late_paper = tasks.n <= params["paper_start"] and inc.budget is not None and \
        inc.budget < paper_after_below  # fmt: skip
    if tasks.n <= params["paper_start"] and not late_paper:
        paper, first = _paper_step(*paper_args)
    t_c = time.perf_counter()
    _coarsen(topo, levels, params["coarse_factor"], rng)
    run["t1"], coarsest = time.perf_counter(), len(levels) - 1
    matched = sum(lv.n + float(lv.ip[-1]) for lv in levels[:-1])  # the eigensolves' floor
    if inc.early_by is not None and matched > 0:
        note_pace((run["t1"] - t_c) / matched)
    sets = _processor_sets(topo, params["subsets"])
    starts = _coarse_starts(topo, levels[coarsest], coarsest, sets, params["speed_exponents"],
                            inc, run["t1"] - t_c)  # fmt: skip
    starts, t2 = sorted(starts, key=lambda x: x[:4]), time.perf_counter()
    if inc.pending is not None:  # the early answer's clock step, put off (h57fast)
        timedorder.early_clock(topo, fine, inc, starts[0][0] if starts else np.inf, _finish)
    best, late, pred, grown = None, False, None, bool(
        GROWN_TIMED and (inc.early_by or GROWN_UNTIMED) and coarsest)
    if grown and GROWN_TIMED == "first":  # when the grown starts come, and which (predicted)
        late, pred = grown_order(topo, levels, starts, run["t1"] - t_c)
    if grown and GROWN_TIMED == "first" and not late and timedorder.GROWN_NET and inc.early_by:
        starts[0] = timedorder.coarsest_refined(topo, levels[coarsest], starts[0], coarsest,
                                                params["max_moves"], inc, run)  # fmt: skip
    if grown and GROWN_TIMED in ("first", "share") and not late:
        one = (topo, levels, starts[0], coarsest, tasks.n, params["max_moves"], inc, dict(run))
        pre = (lambda: _refined_start(*one)) if GROWN_TIMED == "share" else None
        grown_fine_starts(topo, fine, starts, inc, params["max_moves"], first=pre, predict=pred)
        timedorder.layers_in_search(topo, fine, None, inc, run, resources.links)
    plan = _plan(starts, params["keep"], coarsest, topo.P, tasks.n)
    for k, start, top, tops in timedorder.in_order(plan):  # (timed: fine ones put off)
        found = _refined_start(topo, levels, start, top, tasks.n, params["max_moves"], inc,
                               run)  # fmt: skip
        found = timedorder.layers_in_search(topo, fine, found, inc, run, resources.links)
        best = found if best is None or found[0] < best[0] * (1 - 1e-12) else best
        if late_paper:  # (a tiny budget: the first refinement done, the paper's now)
            (paper, first), late_paper = _paper_step(*paper_args), False
        if GROWN_TIMED == "after" and inc.early_by and k == 0 and top == tops[0] > 0:
            grown_fine_starts(topo, fine, starts, inc, params["max_moves"])
    rest = starts if late else list(pred.skipped if pred is not None else [])
    if grown and rest:  # predicted too long to come first (or irregular): last
        grown_fine_starts(topo, fine, rest, inc, params["max_moves"], predict=pred)
    for other in (paper, first):  # the paper's starts (its plain "base" mapping: rare)
        if other is not None and other[0] < best[0] * (1 - 1e-12):
            best = other
    if quick_occ < best[0] * (1 - 1e-12):  # the quick start is the best (rare)
        best = (quick_occ, quick, [quick_occ], topo.P, -2)
    return best, t2


def _paper_step(tasks, resources, topo, fine, inc, seed, params, run) -> tuple:
    """The paper's starts (``starts._paper_starts``), offered: ``(paper, first)``."""
    first, state, history, moves = _paper_starts(tasks, resources, topo, fine, inc, seed,
                                                 params["max_moves"])  # fmt: skip
    run["moves"] += moves
    inc.offer(history[-1], state.m, 0, history, moves=run["moves"], initial_level=-1)
    return (history[-1], state.m, history, int(np.unique(state.m).shape[0]), -1), first


def _coarsen(topo: Topology, levels: list, coarse_factor: float, rng) -> None:
    """Step 1: heavy-edge matchings (label propagation on a hub-heavy graph:
    :func:`~coalloc.taskmap.levels.hub_clustering`) appended to ``levels`` until the coarsest
    has at most about ``coarse_factor x`` processors vertices (fewer there:
    :func:`~coalloc.taskmap.levels.coarse_target`), or no level contracts it."""
    fine = levels[0]
    target = coarse_target(fine, topo.P, coarse_factor)
    cluster = hub_clustering(fine, topo.P, coarse_factor)  # label propagation there
    total_w = float(fine.vw.sum())
    max_w = 1.5 * total_w / target if total_w > 0 else np.inf
    while levels[-1].n > target:
        nxt = coarsen_level(levels[-1], max_w, rng, cluster=cluster)
        if nxt is None:
            break
        levels.append(nxt)


def _refined_start(topo: Topology, levels: list, start: tuple, top: int, n_tasks: int,
                   max_moves, inc: _Incumbent, run: dict) -> tuple:  # fmt: skip
    """Step 4 for one start of :func:`_coarse_starts` from level ``top`` (the coarsest: its
    coarse mapping; else bisected again on that level): route-cost and bottleneck moves at
    every level down to the finest, each level's mapping offered. Returns ``(occupancy,
    mapping, history, initial processors, initial level)``; ``run["moves"]`` counts the
    moves."""
    occ0, _, _, _, st, share, sub = start
    if top == len(levels) - 1:
        cands, history0 = [st.m], [occ0]
    else:  # (untimed, both splits where a V-cycle won the first: splits.VCYCLE_BOTH)
        run["both"] = run.get("both", 0) + 1  # (the first splits.VCYCLE_BOTH of the run)
        cands, history0 = splits.both_ways(lambda: bisect_map(
            topo, levels[top], sub, share, full=n_tasks <= _FINE_WORK // 4), run["both"]), []
    best = None
    for m in cands:
        history = list(history0)
        for depth in range(top, -1, -1):
            lv = levels[depth]
            if depth < top:
                m = m[lv.cmap]
            state = RefineState(topo, lv, m)
            before = state.maximum()
            run["moves"] += cut_refine(state, sub, share)
            cap = max_moves if max_moves is not None else max(200, 4 * lv.n)
            run["moves"] += refine(state, cap)
            if state.maximum() > before * (1 + 1e-12):  # the route-cost pass raised a load
                state = RefineState(topo, lv, m)  # (not undone): bottleneck moves alone from m
                run["moves"] += refine(state, cap)
            m = state.m
            history.append(state.maximum())
            inc.offer(history[-1], m, depth, history, moves=run["moves"],
                      initial_processors=int(sub.shape[0]), initial_level=top)  # fmt: skip
        if best is None or history[-1] < best[0] * (1 - 1e-12):
            best = (history[-1], m, history, sub.shape[0], top)
    return best


def _early_answer(topo: Topology, fine: TaskLevel, quick: np.ndarray, quick_occ: float,
                  inc: _Incumbent, subsets: bool = True, late: bool = False) -> None:  # fmt: skip
    """Under a time limit: quick block starts refined by bottleneck moves, each better one
    offered to the time limit only (:meth:`_Incumbent.offer_early`). Without a time limit
    step 1 alone (:data:`HELD_UNTIMED`; nothing with it False): a count, no clock.

    1. *A count.* The quick start on all the processors and the same blocks on each
       processor subset of the coarse starts (:func:`_processor_sets`: nested prefixes of
       the hierarchy order, the ``k`` fastest) are refined in increasing order of their
       maximum occupancy (ties: the earlier set), each to the end of its moves, until
       :data:`_EARLY_MOVES` moves in all: a count, not the clock, so that two runs of one
       seed under different loads reach the same answer (issue 50). Only the deadline
       (``inc.early_last``) cuts it.
    2. *The clock*: the best of them refined on until ``inc.early_by``
       (:data:`_EARLY_SHARE` of the budget; before issue 50, the quick start on all the
       processors alone), where the count did not end its moves (large instances). With
       ``late`` (:data:`~coalloc.taskmap.timedorder.EARLY_LATE`) it is put off
       (``inc.pending``) to :func:`~coalloc.taskmap.timedorder.early_clock`, after the
       coarse starts.

    On a graph whose links are slow the few-processor blocks are near the answer in a few
    moves, where the blocks on all the processors take many: the audit's
    metis-bipartite-100/tree, 3308 refined to 23.5 in 67 moves (35 ms), cut by a loaded
    machine's clock at 0.05 s anywhere from 2432 to 23.5; its blocks on 1 and 2 processors
    reach 23.92 and 23.33 in 2 and 7 moves. On the audit's pipeline (140 processors) the 17
    starts cost 1.5 ms."""
    def open_() -> bool:  # before the deadline (always without a time limit)
        return inc.early_last is None or (time.perf_counter() < inc.early_last and not time_up())

    starts = [(quick_occ, 0, quick)]
    for i, sub in enumerate(_processor_sets(topo, subsets)[1:], 1):  # [0]: all (``quick``)
        if not open_():
            break
        m = _quick_start(topo, fine, sub)
        starts.append((RefineState(topo, fine, m).maximum(), i, m))
    starts.sort(key=lambda s: s[:2])  # the earlier set first on a tie
    left, best = _EARLY_MOVES, (quick_occ, quick_occ, quick)
    for value0, _, m in starts:
        if left <= 0 or not open_():
            break
        mapping, moves, value = _finish(topo, fine, m, inc.early_last, cap=left, rate=inc.rate)
        left -= moves
        inc.offer_early(value, mapping, [value0, value], moves=moves, initial_level=-2)
        if value < best[1] * (1 - 1e-12):
            best = (value0, value, mapping)
    if inc.early_by is None:  # untimed (:data:`HELD_UNTIMED`): the count, then to the end
        if fine.n <= HELD_FINISH_TASKS and left <= 0:  # (the count ended: moves may remain)
            mapping, moves, value = _finish(topo, fine, best[2], None)
            inc.offer_early(value, mapping, [best[0], value], moves=moves, initial_level=-2)
        return
    if time.perf_counter() < inc.early_by and not time_up():  # on while the share lasts
        if late:  # after the coarse starts, if still the best then (timedorder.early_clock)
            inc.pending = (best, inc.early_by - time.perf_counter())
            return
        mapping, moves, value = _finish(topo, fine, best[2], inc.early_by, rate=inc.rate)
        inc.offer_early(value, mapping, [best[0], value], moves=moves, initial_level=-2)


def _finish(topo: Topology, fine: TaskLevel, m: np.ndarray, finish_by,
            cap: Optional[int] = None, rate: Optional[list] = None) -> tuple:  # fmt: skip
    """The finest mapping ``m`` of a run the deadline stopped, after bottleneck moves
    (:func:`~coalloc.taskmap.refinement.refine`, at most ``cap``, default ``max(200, 4 x
    tasks)``, in slices of :data:`_FINISH_SLICE`) made while :func:`time.perf_counter` is
    before ``finish_by`` (None: to the end): ``(mapping, moves, maximum occupancy)``. Every
    move lowers the bottleneck or the number of resources at it: never worse than ``m``. It
    stops too when the deadline of an enclosing time limit has passed
    (:func:`~coalloc._shared.params.time_up`). ``rate``: a list the wall seconds a step
    of every slice are appended to (the run's, shared by its finishes); with a
    ``finish_by``, no slice starts that the largest of them predicts to end past it (a
    slice of 8 moves on 2,000 tasks took 70 ms of wall under a load of 5, past an
    allowance of 25 ms)."""
    state = RefineState(topo, fine, m.copy())
    cap = max(200, 4 * fine.n) if cap is None else cap
    moves = 0
    probe = FINISH_PROBE and finish_by is not None
    while moves < cap and (finish_by is None or time.perf_counter() < finish_by) and not time_up():
        k = min(1 if probe else _FINISH_SLICE, cap - moves)
        probe = False
        if finish_by is not None and rate:  # no slice predicted to end past ``finish_by``
            k = min(k, int((finish_by - time.perf_counter()) / max(rate) - 1))
            if k < 1:
                break
        t = time.perf_counter()
        made = refine(state, k)
        if rate is not None:  # wall seconds a step (the moves and the last try's scoring)
            rate.append((time.perf_counter() - t) / (made + (made < k)))
        moves += made
        if made < k:  # no move helps any more
            break
    return state.m, moves, state.maximum()


def _answer_at_bound(inc: _Incumbent, topo: Topology, levels: list, params: dict, run: dict,
                     t0: float) -> TaskMappingResult:  # fmt: skip
    """The answer of :func:`map_multilevel` when a mapping met the lower bound: without a
    time limit one bisection spent on the volume (:func:`_lighter_at_bound`), then the sum
    step (``params["sum_refine"]``) on the finest mapping."""
    fine = levels[0]
    if interrupt.deadline_ns() < 0:  # no time limit: spend one bisection on the volume
        _lighter_at_bound(inc, topo, fine)
    elif LIGHTER_TIMED and inc.early_last is not None:  # in 3/4 of the time left, if it
        try:  # ends in it (``inc.best`` changes only at its end; the sum step has the rest)
            with interrupt.until(inc.early_last - 0.25 * (inc.early_last - time.perf_counter())):
                _lighter_at_bound(inc, topo, fine)
        except interrupt.DeadlinePassed:
            pass
    if params["sum_refine"]:
        m_b, depth_b, history_b, counts_b = inc.best
        for d in range(depth_b - 1, -1, -1):
            m_b = m_b[levels[d].cmap]
        m_b, moves_b, value_b = _sum_refined(topo, fine, m_b)
        run["moves"] += moves_b
        if value_b < history_b[-1] * (1 - 1e-12):  # the step may lower the maximum too
            history_b = [*history_b, value_b]
        inc.best = (m_b, 0, history_b, counts_b)
    now = time.perf_counter()
    timings = {"coarsen": (run["t1"] or now) - t0, "total": now - t0}
    return inc.result(timings, run["moves"])


def _sum_refined(topo: Topology, fine: TaskLevel, m: np.ndarray) -> tuple:
    """The finest mapping ``m`` after :func:`~coalloc.taskmap.sumrefine.sum_refine`:
    ``(mapping, moves, maximum occupancy)``."""
    state = RefineState(topo, fine, m)
    moves = sum_refine(state, max(200, 4 * fine.n))
    return state.m, moves, state.maximum()


def _route_cost(topo: Topology, level: TaskLevel, m: np.ndarray) -> float:
    """Volume x route distance (sum of ``1 / bandwidth``) of a level's mapping: the sum
    objective of :func:`coalloc.taskmap.communication_cost`."""
    rows = np.repeat(np.arange(level.n), np.diff(level.ip))
    return float(np.dot(level.iw, topo.cost[m[rows], m[level.ix]])) / 2.0


def _lighter_at_bound(inc: _Incumbent, topo: Topology, fine: TaskLevel) -> None:
    """When a start that is no bisection (the quick block start, the paper's) meets the
    lower bound, bisect the finest graph onto all the processors once, route-cost moves
    after (issue 40): if that also meets the bound with less volume x distance, it is the
    answer instead. The bottleneck is the same (both meet the bound); the quick start's
    blocks of task indices carry up to 2.3x the volume of a bisection on stencils."""
    m0, depth, _, counts = inc.best
    if depth != 0 or counts.get("initial_level", -2) >= 0 or fine.n == 0:
        return
    share = topo.cap / topo.cap.max()
    sub = np.arange(topo.P)
    m = bisect_map(topo, fine, sub, share, fine.n <= _FINE_WORK // 4, interrupt.deadline_ns() < 0)
    state = RefineState(topo, fine, m)  # timed: the split without eigensolves (6x faster)
    cut_refine(state, sub, share)
    value = state.maximum()
    if value <= inc.floor * (1 + 1e-12) and _route_cost(topo, fine, state.m) < _route_cost(
        topo, fine, m0
    ) * (1 - 1e-9):
        inc.best = (state.m.copy(), 0, [float(value)],
                    {**counts, "initial_processors": topo.P, "initial_level": 0})  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class _Tuning:
    """:func:`map_multilevel`'s tuning parameters as the caller gave them (its table of
    constraints has checked their ranges; :func:`_checked_params` makes the ``params`` dict
    of them that the search reads)."""

    coarse_factor: float
    subsets: bool
    keep: int
    max_moves: Optional[int]
    speed_exponents: Optional[tuple]
    paper_start: int
    sum_refine: bool


def _checked_params(tasks, resources, seed, tuning: _Tuning) -> tuple:
    """The arguments of :func:`map_multilevel`, checked: ``(seed, params)``, the default
    ``speed_exponents`` filled in."""
    check_graphs(tasks, resources, ("tasks", "resources"))
    seed = check_seed(seed)
    coarse_factor, subsets, keep = tuning.coarse_factor, tuning.subsets, tuning.keep
    max_moves, speed_exponents = tuning.max_moves, tuning.speed_exponents
    paper_start, sum_refine = tuning.paper_start, tuning.sum_refine
    if speed_exponents is None:  # up to paper_start tasks the paper's start is one more
        speed_exponents = (1.0,) if tasks.n <= paper_start else (1.0, 0.5, 0.0)
    if resources.n_processors == 0:
        raise ValueError("resources has no processor")
    params = {"coarse_factor": float(coarse_factor), "subsets": bool(subsets), "keep": int(keep)}
    params["max_moves"] = max_moves
    exps = tuple(float(a) for a in speed_exponents)
    if not exps or not all(np.isfinite(exps)) or min(exps) < 0:
        raise ValueError(f"speed_exponents must be non-negative numbers, got {speed_exponents!r}")
    params["speed_exponents"] = exps
    params["paper_start"] = int(paper_start)
    params["sum_refine"] = bool(sum_refine)
    return seed, params


def _result(tasks, resources, mapping, seed, params, timings, iterations, history):
    occ, bott = max_occupancy(tasks, resources, mapping)  # from scratch, the family's helper
    node_occ, link_occ = occupancy_graph(tasks, resources, mapping)
    return TaskMappingResult(
        mapping=mapping,
        max_occupancy=occ,
        bottleneck=bott,
        method="multilevel",
        seed=seed,
        timings=timings,
        iterations=iterations,
        params=params,
        node_occupancy=node_occ,
        link_occupancy=link_occ,
        history=[float(h) for h in history],
        status="feasible",
    )
