"""The multilevel mapper's starts (:func:`~coalloc.taskmap.multilevel.map_multilevel`).

Moved out of :mod:`~coalloc.taskmap.multilevel` (h54tmap: that module had reached the house's
800 lines) unchanged: the quick block start (:func:`_quick_start`), the paper's starts
(:func:`_paper_starts`), the processor subsets the coarse starts are bisected onto
(:func:`_processor_sets`), the coarse starts themselves (:func:`_coarse_starts`; h56sets: and
the prefix sizes between the halvings, :func:`_between_starts`) and which of them go on from
which level (:func:`_plan`). The multilevel module imports them by name (its
tests and the phase timer of ``bench/taskmap/timed_phases.py`` replace them there); ``inc``
is its ``_Incumbent`` (its ``offer``).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared.params import stop_now, time_left
from .bisection import bisect_map
from .hierarchy import Topology
from .levels import TaskLevel
from .refinement import RefineState, cut_refine, refine

#: How many of the kept starts are also bisected again on the finest graph.
_FINE_STARTS = 2
#: Fine re-bisections of at most this many tasks in all (at least _FINE_STARTS of them),
#: and above this many tasks they take one growing seed and no spectral split: with three
#: seeds and the spectral splits across slow links each costs about a second per thousand
#: tasks on 1,000 processors (10,000 tasks: 29 s instead of 2-5 s).
_FINE_WORK = 24_000


def _quick_start(topo: Topology, fine: TaskLevel, sub: Optional[np.ndarray] = None) -> np.ndarray:
    """The tasks in index order cut into blocks, one per processor in hierarchy order, each
    block's compute proportional to its processor's capacity: a complete mapping in
    microseconds (the first answer a time limit can return; on stencils in row-major order
    it is often a fair one). ``sub``: only these positions (in this order; None: all)."""
    w = fine.vw
    total = float(w.sum())
    first = 0 if sub is None else int(sub[0])
    if fine.n == 0 or total <= 0:
        return np.full(fine.n, first, dtype=np.int64)
    cap = topo.cap if sub is None else topo.cap[sub]
    ccap = np.cumsum(cap)
    mid = (np.cumsum(w) - w / 2) / total
    block = np.searchsorted(ccap / ccap[-1], mid, side="right").clip(0, cap.shape[0] - 1)
    return block if sub is None else sub[block]


#: True (the default): a timed run offers :func:`_first_answer` before anything its deadline
#: can stop (h56sets follow-up); False: its first answer is the quick start, after the
#: topology (a timed call stopped while building it came back without a mapping).
FIRST_ANSWER = True


def _first_answer(tasks, resources, seed, params: dict, started: float):
    """Every task on the processor of the largest capacity (the lowest node on a tie): a
    mapping without traffic, so its occupancy needs no routes and no topology (a division,
    microseconds, no poll of the deadline). The answer a timed run returns when its deadline
    stops it before the quick start (:func:`_quick_start`), i.e. while it builds the
    resource graph's routes and topology on the first call on that graph: ws 1500 k6 onto a
    dragonfly 9x4x4 of 144 processors, 17 ms of CPU, 0.13-0.2 s of wall under a load of 16
    (h56sets follow-up). ``iterations["first_answer"]`` 1. The same values as
    :func:`~coalloc.taskmap.occupancy.occupancy_graph`'s (the same expressions)."""
    from .occupancy import _max_of
    from .result import TaskMappingResult

    procs = resources.processors
    cap = resources.capacity
    proc = int(procs[int(np.argmax(cap[procs]))])
    mapping = np.full(tasks.n, proc, dtype=np.int64)
    node = np.bincount(mapping, weights=tasks.node_weight, minlength=resources.n_nodes)
    node = node.astype(np.float64)
    node_occ = np.divide(node, cap, out=np.zeros_like(node), where=cap > 0)
    link_occ = np.zeros(resources.n_links, dtype=np.float64)  # (0 / bandwidth)
    occ, bott = _max_of(node_occ, link_occ)
    return TaskMappingResult(
        mapping=mapping, max_occupancy=occ, bottleneck=bott, method="multilevel", seed=seed,
        timings={"total": time.perf_counter() - started},
        iterations={"levels": 0, "moves": 0, "processors_used": 1, "first_answer": 1},
        params=dict(params), node_occupancy=node_occ, link_occupancy=link_occ,
        history=[float(occ)], status="feasible",
    )  # fmt: skip


#: The processor subsets' sizes (:func:`_prefixes`): each the previous one times this ratio,
#: rounded up (0.5: the halvings 64, 32, 16, 8, ...). 0.75 (h55tmap follow-up, off): the sizes
#: between, as the held-back set's delaunay3d 2000 on a binary tree of 64 is node-bound at its
#: best on 9 processors (KaHIP's sweep) where the halvings give 8 or 16.
PREFIX_RATIO = 0.5


#: The prefix sizes between the best coarse start's and the next larger one, tried when that
#: start is node-bound (:func:`_between_starts`, h56sets): at most this many (0: none). The
#: held-back set's delaunay3d 2000 on a binary tree of 64 is node-bound at its best on 9
#: processors (KaHIP's sweep) where the halvings give 8 (node-bound, unbalanced) or 16
#: (link-bound): 12, 10, 9 find it (untimed 482.3 -> 418.9, KaHIP's sweep 457.8). On the 30
#: of ``vs_peers`` and the other 23 held-back instances no best coarse start is node-bound on
#: a prefix below all: no probe, the same answers (h56sets, ISSUE40).
BETWEEN_PROBES = 3
#: Under a time limit, a probe of :func:`_between_starts` begins only where the largest wall
#: of one coarse start in the call is at most this share of the time left.
BETWEEN_SHARE = 0.1
#: Under a time limit, the coarse starts on all the processors (one per speed exponent) are
#: made before those on the subsets (h57fast): a starved 1 s call (0.1-0.15 s of CPU under a
#: load of 6-8, niced) reaches only the first few of the ~20, and on the held-back
#: stencil27 20x20x8 the best one (111.4, exponent 0.5 on all) came 18th, after 0.11 s of
#: the 0.12 s of CPU they take there. The set of starts and their ranking are the same (they
#: are sorted after); untimed the order is as before. **Off**: measured alternated (ISSUE40,
#: h57fast) neutral at 0.36 s of CPU a call (held-back 24 and the 30: gm 0.999) and mixed at
#: 0.07 s (delaunay3d 2000 on 2^6, whose best start is on 8 of 64, 705 -> 864). False: as
#: before (the default).
FULL_FIRST = False
#: Under a time limit, :func:`_plan`'s refinements from the coarsest level (cheap) all come
#: before its fine re-bisections (the grown starts have given fine ones without eigensolves
#: already): on the held-back ba 3000 m4 on a tree 16x4x4 the first start's fine
#: re-bisection (10.8 s untimed, with eigensolves) took the rest of a 1 s call, where the
#: second start's coarsest level alone reaches 316.9 (the answer 352.9, KaHIP's 322.1;
#: h59edge). Untimed the order is as before. **Off**: at ``T`` = 2 s, alternated (load 8-10),
#: the held-back 24 gm 1.015 (delaunay2d 1000 1.068, delaunay3d 800 1.073, stencil27 20x20x8
#: 1.249: their fine re-bisections win) and the 30 gm 1.005. False: each start's levels in
#: turn (the default).
COARSE_FIRST = False


def _prefixes(p: int) -> list:
    ks = {p}
    k = p
    while k > 1:
        k = min(k - 1, int(np.ceil(k * PREFIX_RATIO - 1e-9)))
        ks.add(k)
    return sorted(ks, reverse=True)


def _paper_starts(tasks, resources, topo: Topology, fine: TaskLevel, inc, seed,
                  max_moves) -> tuple:  # fmt: skip
    """The paper's ``"base"`` and ``"open+improve"`` mappings as starts (their mappings
    offered as they come), the second refined by bottleneck moves: ``(first, state,
    history, moves)``, ``first`` the base start as :func:`map_multilevel` weighs it. The
    caller offers the refined mapping (so that its count of moves is the caller's)."""
    from .mapper import map_tasks_quietly

    where = np.empty(resources.n_nodes, dtype=np.int64)
    where[topo.order_nodes] = np.arange(topo.P)

    def offer_from(level: int):
        def on_mapping(mapping: np.ndarray, value: float) -> None:
            inc.offer(value, where[mapping], 0, [value], initial_level=level)

        return on_mapping

    # the paper's "base" first: its clustering and one greedy pass take milliseconds
    found = map_tasks_quietly(tasks, resources, offer_from(-3), method="base", seed=seed)
    value = RefineState(topo, fine, where[found.mapping]).maximum()
    first = (value, where[found.mapping], [value], len(set(found.mapping.tolist())), -3)
    found = map_tasks_quietly(  # the same task order (clustering) as base's
        tasks,
        resources,
        offer_from(-1),
        method="open+improve",
        seed=seed,
        order=found.order,
    )
    state = RefineState(topo, fine, where[found.mapping])
    history = [state.maximum()]
    cap = max_moves if max_moves is not None else max(200, 4 * tasks.n)
    moves = refine(state, cap)
    history.append(state.maximum())
    return first, state, history, moves


def _processor_sets(topo: Topology, subsets: bool) -> list:
    """The processor subsets the coarse starts are bisected onto: nested prefixes of the
    hierarchy order and the ``k`` fastest processors (ties: hierarchy order) for the same
    sizes, each in hierarchy order, without repeats (only all processors without
    ``subsets``)."""
    ks = _prefixes(topo.P) if subsets else [topo.P]
    fastest = np.argsort(-topo.cap, kind="stable")
    sets: list = []
    seen_sets: set = set()
    for k in ks:
        for sub in (np.arange(k, dtype=np.int64), np.sort(fastest[:k]).astype(np.int64)):
            if sub.tobytes() not in seen_sets:  # equal subsets (int64 alike): equal bytes
                seen_sets.add(sub.tobytes())
                sets.append(sub)
    return sets


#: True (the default): under a time limit a coarse start after the first begins only where
#: the wall of the one before fits in the time left (:func:`_coarse_starts`): one pass of
#: its route-cost moves (``refinement.cut_refine``, polled between passes) took 20 ms of CPU
#: on ba 3000's coarsest level onto 256 processors, 0.1 s of wall at a 1/5 CPU share, and a
#: start begun near the deadline ended the call 0.1-0.5 s late at ``T`` = 0.3-1 s; a start
#: that cannot end before the deadline leaves nothing (the run stops inside it). The first
#: start is predicted by the coarsening's wall (at a 1/10 share its single pass began at
#: 0.8 s of 1 s and took 0.25 s); where it does not fit either, the run waits for its deadline
#: and returns its early answer. False: every start begins until the deadline stops one.
STARTS_FIT = True


#: True (the default): where no coarse start fits (:data:`STARTS_FIT`), the run stops at
#: once (:func:`~coalloc._shared.params.stop_now`) rather than wait for its deadline: nothing
#: else of the run begins after the coarse starts without one, and the stop's build
#: finishes the early answer by bottleneck moves until the deadline's allowance
#: (``multilevel._finish``), the caller's steps after the method (the bound's tests, the sum
#: step in the spare time) get the rest (h58edge). False: :func:`_wait_out`, as before.
STOP_UNFIT = True


def _wait_out(left: float) -> None:
    """Wait for the deadline in force (its scope's poll raises), at most ``left`` + 0.02 s."""
    end = time.perf_counter() + left + 0.02
    while time.perf_counter() < end:
        interrupt.check()
        time.sleep(0.002)
    interrupt.check()  # (a sleep that overslept past ``end`` under load skipped the last poll)


def _coarse_starts(topo: Topology, coarse: TaskLevel, coarsest: int, sets: list,
                   speed_exponents: tuple, inc,
                   first_wall: Optional[float] = None) -> list:  # fmt: skip
    """The bisections of the coarsest graph, one per processor subset (with ``alpha`` = the
    first exponent) and one on all processors per other exponent, each after its route-cost
    moves and offered: ``(occupancy, -processors, -alpha, i, state, share, subset)``; then
    the prefix sizes between (:func:`_between_starts`). With :data:`FULL_FIRST` (off), under a
    time limit those on all the processors come first. ``first_wall``: the wall the first
    start is predicted to take (:data:`STARTS_FIT`; None: not predicted)."""
    starts = []
    seen_shares: list = []
    walls = []  # wall seconds of each start (the sizes between are predicted from them)
    jobs = []  # (subset, share, alpha, i) in the order of before
    for alpha in speed_exponents:
        share = topo.cap**alpha
        share = share / share.max()
        if any(np.array_equal(share, other) for other in seen_shares):
            continue  # equal capacities: every exponent gives the same shares
        seen_shares.append(share)
        for i, sub in enumerate(sets if len(seen_shares) == 1 else sets[:1]):
            jobs.append((sub, share, alpha, i))
    if FULL_FIRST and getattr(inc, "early_by", None) is not None:  # timed: all processors first
        jobs.sort(key=lambda job: job[0].shape[0] != topo.P)  # (stable: the rest as before)
    for sub, share, alpha, i in jobs:
        left = time_left() if STARTS_FIT else None
        pred = walls[-1] if walls else first_wall  # the last start's wall, or the coarsening's
        if left is not None and pred is not None and pred > left:  # not to end in time (h57fast)
            if starts:
                break
            if STOP_UNFIT:  # no start: the run stops now with its early answer (h58edge)
                stop_now()  # (its finish has the time left; nothing without a time limit)
            _wait_out(left)  # no start: the run stops at its deadline with its early answer
        t = time.perf_counter()
        starts.append(_one_start(topo, coarse, coarsest, sub, share, alpha, i, inc))
        walls.append(time.perf_counter() - t)
    return starts + _between_starts(topo, coarse, coarsest, starts, sets, walls, inc)


def _one_start(topo: Topology, coarse: TaskLevel, coarsest: int, sub: np.ndarray,
               share: np.ndarray, alpha: float, i: int, inc) -> tuple:  # fmt: skip
    """One coarse start (:func:`_coarse_starts`): the bisection onto ``sub``, its route-cost
    moves, offered."""
    st = RefineState(topo, coarse, bisect_map(topo, coarse, sub, share, full=False))
    cut_refine(st, sub, share)
    inc.offer(st.maximum(), st.m, coarsest, [st.maximum()], initial_level=coarsest)
    return (st.maximum(), -sub.shape[0], -alpha, i, st, share, sub)


def _between_starts(topo: Topology, coarse: TaskLevel, coarsest: int, starts: list,
                    sets: list, walls: list, inc) -> list:  # fmt: skip
    """The prefix sizes between the halvings (h56sets; :data:`BETWEEN_PROBES`): when the best
    coarse start is node-bound (its maximum a processor's, not a link's) on a prefix of ``k``
    processors, more processors would lower it until a link binds: up to
    :data:`BETWEEN_PROBES` more prefix starts between ``k`` and the next larger prefix size
    ``K``, a binary search of the size where the node bound gives way to a link bound (the
    middle of the interval left; a node-bound probe raises its low end, any other lowers its
    high end). Under a time limit a probe begins only where the largest wall of one coarse
    start in this call is at most :data:`BETWEEN_SHARE` of the time left. Returns the new
    starts (offered), indices ``i`` after ``sets``'."""
    if BETWEEN_PROBES <= 0 or not starts:
        return []
    best = min(starts, key=lambda x: x[:4])
    k, sub, state = best[6].shape[0], best[6], best[4]
    node, link = state.occ()
    if not np.array_equal(sub, np.arange(k)) or link.max(initial=0.0) > node.max():
        return []  # not a prefix, or a link binds (fewer processors, not more)
    sizes = [s.shape[0] for s in sets if np.array_equal(s, np.arange(s.shape[0]))]
    lo, hi = k, min((s for s in sizes if s > k), default=k)
    out: list = []
    while len(out) < BETWEEN_PROBES and hi - lo > 1:
        left = time_left()
        if left is not None and max(walls, default=0.0) > BETWEEN_SHARE * left:
            break  # predicted not to fit
        mid = (lo + hi) // 2
        t = time.perf_counter()
        found = _one_start(topo, coarse, coarsest, np.arange(mid, dtype=np.int64), best[5],
                           -best[2], len(sets) + len(out), inc)  # fmt: skip
        walls.append(time.perf_counter() - t)
        out.append(found)
        node, link = found[4].occ()
        if node.max() >= link.max(initial=0.0):
            lo = mid
        else:
            hi = mid
    return out


def _plan(starts: list, keep: int, coarsest: int, n_procs: int, n_tasks: int) -> list:
    """Which starts go on, and from which level: ``[(start, tops)]``, ``tops`` the levels
    each is refined down from (``coarsest``: its coarse mapping; 0: bisected again on the
    finest graph).

    The ``keep`` best starts go through all levels, the best of them are also bisected
    again on the finest graph, and so is every start on all processors (one per speed
    exponent: the coarse ranking is a weak predictor there), at most ``max(_FINE_STARTS,
    _FINE_WORK / tasks)`` fine re-bisections in all. The sizes between
    (:func:`_between_starts`: prefixes of a size no halving has) are ranked apart: every
    other start keeps the levels it has without them (its rank among the others), and a
    probe ranked among the ``keep`` best of all goes on too, bisected again on the finest
    graph where it ranks among the :data:`_FINE_STARTS` best (h56sets: where the probes
    took the others' places, geometric-32 of the digests rose 4.381 -> 4.550). Without a
    time limit the probes come after the others (an answer tied with the others' stays the
    others': it changes only where a probe is strictly better); under one, in rank order
    (a probe ranked first is refined first: the budget may end before the last). Under one
    too, with :data:`COARSE_FIRST`, every refinement from the coarsest level before the fine
    re-bisections.
    """
    plan, probes = [], []
    fine_left = max(_FINE_STARTS, _FINE_WORK // max(n_tasks, 1))
    halvings = set(_prefixes(n_procs))
    others = 0  # the rank among the starts that are no probe
    for rank, start in enumerate(starts):
        probe = start[6].shape[0] not in halvings
        r = rank if probe else others
        others += not probe
        tops = []
        if r < keep:
            tops.append(coarsest)
        if (r < _FINE_STARTS or start[6].shape[0] == n_procs) and coarsest > 0:
            if probe:  # (its own: the others keep theirs)
                tops.append(0)
            elif fine_left > 0:
                tops.append(0)
                fine_left -= 1
        if tops:
            (probes if probe and time_left() is None else plan).append((start, tops))
    if COARSE_FIRST and coarsest > 0 and time_left() is not None:  # the coarsest ones first
        plan = [(s, [t for t in tops if t == coarsest]) for s, tops in plan] + [
            (s, [t for t in tops if t != coarsest]) for s, tops in plan]  # fmt: skip
        plan = [(s, tops) for s, tops in plan if tops]
    return plan + probes
