"""Two steps of a timed multilevel run put where a short budget needs them (h57fast, issue
40 item 1: the held-back set's losses at ``T`` = 1 s that were about time).

- :func:`early_clock`: the early answer's clock step
  (:func:`~coalloc.taskmap.multilevel._early_answer`, step 2: the best quick block start
  refined on for up to a quarter of the budget) after the coarse starts, and only where its
  maximum is still below theirs (:data:`EARLY_LATE`).
- :func:`coarsest_refined`: the best coarse start refined on the coarsest level and offered
  before the grown starts, when those come first (:data:`GROWN_NET`).

Both run only under a time limit: untimed answers are those of the order before.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from .._shared import interrupt
from .._shared.params import time_left, time_up
from .levels import TaskLevel
from .refinement import RefineState, cut_refine, refine

__all__ = ["EARLY_LATE", "FINE_LATE", "GROWN_NET", "LAYERS_SEARCH", "LAYERED_TIMED",
           "early_clock", "coarsest_refined", "in_order", "layers_in_search", "layered"]

#: Timed, above ``paper_start`` tasks (no paper's start to wait for): the early answer's
#: clock step comes after the coarse starts, and only where the count's answer is below the
#: best coarse start's maximum (:func:`early_clock`). On the held-back set's large stencils
#: and power-law graphs the step took 0.14-0.19 s of CPU of a 1 s call for 44-167 where the
#: coarse starts have 75-111 at once and the answers are 37-48: under load the multilevel's
#: refinement or a grown start then missed the deadline. False: before the coarsening, as
#: before.
EARLY_LATE = True
#: Timed, when the grown starts come first (``multilevel.GROWN_TIMED`` "first", predicted to
#: end in the time left): the best coarse start is refined on the coarsest level and offered
#: before them (:func:`coarsest_refined`), so that a grown start the deadline cuts (the
#: prediction is from the coarsening's pace: under a load of 5 stencil27 20x20x8 began one
#: with 0.48 s left and was stopped in it) leaves that, not the coarse start unrefined
#: (101.1 where the level's refinement has 59.6). The plan's refinement goes on from it.
#: False: as before.
GROWN_NET = True


def early_clock(topo, fine: TaskLevel, inc, coarse: float, finish: Callable) -> None:
    """The early answer's clock step put off (:data:`EARLY_LATE`): the best of its count
    (``inc.pending``: ``((value0, value, mapping), seconds)``) refined on by ``finish``
    (:func:`~coalloc.taskmap.multilevel._finish`) for as long as the step had left, only
    where its maximum is below ``coarse``, the best coarse start's (a coarse mapping has
    exactly the loads of its projection, and its refinement through the levels only lowers
    them); offered to the time limit (``inc.offer_early``). ``inc.pending`` is cleared.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    fine : TaskLevel
        The finest level.
    inc : multilevel._Incumbent
        The run's incumbent.
    coarse : float
        The best coarse start's maximum occupancy (``inf``: none).
    finish : callable
        ``finish(topo, fine, m, until, rate=...) -> (mapping, moves, maximum)``.
    """
    (value0, value, m), seconds = inc.pending
    inc.pending = None
    if not value < coarse * (1 - 1e-12) or time_up():
        return
    until = min(time.perf_counter() + seconds, inc.early_last)
    mapping, moves, value = finish(topo, fine, m, until, rate=inc.rate)
    inc.offer_early(value, mapping, [value0, value], moves=moves, initial_level=-2)


def coarsest_refined(topo, coarse: TaskLevel, start: tuple, coarsest: int, max_moves,
                     inc, run: dict) -> tuple:  # fmt: skip
    """``start`` (a coarse start: ``(occupancy, -processors, -alpha, i, state, share,
    subset)``) with its mapping refined on the coarsest level as the multilevel's refinement
    does there (route-cost moves, then bottleneck moves; bottleneck moves alone from the
    start where the first raised its maximum), offered to ``inc`` (:data:`GROWN_NET`).

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    coarse : TaskLevel
        The coarsest level.
    start : tuple
        The best coarse start.
    coarsest : int
        The coarsest level's depth.
    max_moves : int or None
        Bottleneck moves at most (None: ``max(200, 4 x vertices)``).
    inc : multilevel._Incumbent
        The run's incumbent (``inc.offer``).
    run : dict
        ``run["moves"]`` counts the moves.

    Returns
    -------
    tuple
        The start with the refined state and its maximum, or ``start`` itself where the
        refinement did not lower it (then nothing is offered).
    """
    occ0, procs, alpha, i, st, share, sub = start
    state = RefineState(topo, coarse, st.m.copy())
    run["moves"] += cut_refine(state, sub, share)
    cap = max_moves if max_moves is not None else max(200, 4 * coarse.n)
    run["moves"] += refine(state, cap)
    if state.maximum() > occ0 * (1 + 1e-12):
        state = RefineState(topo, coarse, st.m.copy())
        run["moves"] += refine(state, cap)
    value = state.maximum()
    if not value < occ0 * (1 - 1e-12):
        return start
    inc.offer(value, state.m, coarsest, [occ0, value], moves=run["moves"],
              initial_processors=int(np.asarray(sub).shape[0]), initial_level=coarsest)  # fmt: skip
    return (value, procs, alpha, i, state, share, sub)


#: Timed (h59edge follow-up): the run's best finest answer, when it is link-bound, gets layer
#: moves in the search, after each refined start and after the grown starts
#: (:func:`layers_in_search`), so that the remaining starts must beat the lowered incumbent
#: and a deadline that stops the search keeps it. False: none in the search (the portfolio's
#: steps after it only).
LAYERS_SEARCH = True
#: The layer moves' tries per call of :func:`layers_in_search` (each with up to
#: ``layermoves.LAYER_SETTLE`` bottleneck moves): on the held-back set's stopped 1 s
#: answers the whole gain took 8-56 tries.
SEARCH_TRIES = 16
#: True: the lowered answer is offered to the run (``inc.offer``) and becomes the start's
#: (the post-search steps start from it); False (the default): it is held for the time
#: limit only (``inc.offer_early`` with ``search_layers``: a run that ends by itself returns
#: its own answer, ``multilevel._held_better``). Measured (h59edge follow-up, ISSUE40): True,
#: or held for the run's end too, lost 1.02-1.09 on delaunay3d 800, stencil9 30x30 (and
#: True on stencil 32x32 het, 16^3 on 2x8x8 het) at 1 s, load 3: the finished run's steps
#: after the search reach less from the capped layer moves' answer than from its own.
SEARCH_REPLACE = False
#: Timed (h60edge): one call of :func:`layers_in_search` that has kept no layer move by this
#: share of the time left stops there (and the run's calls with it); one that has goes on
#: (one more count of tries: stencil9 30x30 on star 40 kept 1 of its 4 moves in a 0.1 s
#: share under a load of 9, 21.53 where the 4 give 20.75). On the
#: held-back ba 3000 m4 on a tree 16x4x4 its 16 tries (none kept) took 3.8 s of a 5 s call,
#: the rest of it: the fine re-bisection and the second start (309.7, against the first's
#: 352.9) never ran. 0: no share (the count alone, as before).
SEARCH_SHARE = 0.25


def layers_in_search(topo, fine: TaskLevel, found, inc, run: dict, ends) -> tuple:
    """Layer moves (:func:`~coalloc.taskmap.layermoves.layer_refine`, at most
    :data:`SEARCH_TRIES` tries) on a timed run's best finest answer when a link binds it
    (:data:`LAYERS_SEARCH`): the refined start ``found`` (``(occupancy, finest positions,
    history, processors, level)``; None after the grown starts) or the answer held by
    ``inc.offer_early`` where that is lower. A lower maximum is held by ``inc.offer_early``
    (:data:`SEARCH_REPLACE` False) or offered to ``inc`` and returned as the start's. After
    a call that keeps no layer move none follow in the run
    (``run["layers_idle"]``). A deadline inside the moves keeps those kept (offered) and is
    raised again; a call that has kept none by :data:`SEARCH_SHARE` of the time left ends
    there. Untimed: ``found``, unchanged."""
    from .layermoves import LAYERS, layer_refine

    if not (LAYERS_SEARCH and LAYERS) or inc.early_by is None or run.get("layers_idle"):
        return found
    own = found if found is not None else (np.inf, None, [], topo.P, -2)
    if inc.early_best is not None and inc.early < own[0] * (1 - 1e-12):
        own = (inc.early, inc.early_best[0], inc.early_best[1], topo.P, -2)
    if own[1] is None or not own[0] <= inc.value * (1 + 1e-12):
        return found  # not the run's best (a coarse level's, or none)
    state = RefineState(topo, fine, np.array(own[1], dtype=np.int64))
    node, link = state.occ()
    if not link.max(initial=0.0) > node.max(initial=0.0):
        return found  # a processor binds
    cut, left = None, time_left()
    share_end = None if not SEARCH_SHARE > 0 or left is None else \
        time.perf_counter() + SEARCH_SHARE * left  # fmt: skip
    try:
        with interrupt.until(share_end):  # (None: a scope without a deadline of its own)
            kept = layer_refine(topo, ends, state, tries=SEARCH_TRIES)
    except interrupt.DeadlinePassed as e:  # the moves kept before it stand
        kept, cut = int(not np.array_equal(state.m, own[1])), _not_share(e, share_end)
        if kept and cut is None and not time_up():  # moves kept in the share: on
            try:
                kept += layer_refine(topo, ends, state, tries=SEARCH_TRIES)
            except interrupt.DeadlinePassed as e2:
                cut = e2
    run["layers_idle"] = not kept
    value = state.maximum()
    if kept and value < own[0] * (1 - 1e-12) and SEARCH_REPLACE:
        run["moves"] += kept
        found = (value, state.m, [*own[2], value], *own[3:])
        inc.offer(value, state.m, 0, found[2], moves=run["moves"],
                  initial_processors=int(own[3]), initial_level=own[4])
    elif kept and value < own[0] * (1 - 1e-12):  # held: the run's own choices unchanged
        inc.offer_early(value, state.m, [*own[2], value], search_layers=int(kept))
    if cut is not None:
        raise cut
    return found


#: Timed (h60edge): the multilevel run's own layer step after its search
#: (:func:`~coalloc.taskmap.layermoves.layered`: the answer, and the answer before the sum
#: step, each with layer moves, the second then the sum step), which untimed runs alone had,
#: in :data:`LAYERED_SHARE` of the time left (:func:`layered`); the tries it finishes
#: stand. Table1 c=1 #1 of ``vs_peers``: the run ends at 0.15-0.3 s with 0.3291, where the
#: untimed one has 0.3049 from that step (the portfolio's timed layers try the answer after
#: the sum step only, and keep nothing). False: timed runs skip it, as before.
LAYERED_TIMED = True
#: The share of the time left :func:`layered` may spend under a time limit.
LAYERED_SHARE = 0.9


def layered(topo, fine: TaskLevel, best: tuple, pre: tuple, ends, run: dict, untimed: bool,
            resum) -> tuple:  # fmt: skip
    """:func:`~coalloc.taskmap.layermoves.layered` untimed (the same call); timed, with
    :data:`LAYERED_TIMED`, the same tries inside :data:`LAYERED_SHARE` of the time left: a
    try that share cuts keeps its layer moves made before it (no sum step after), and the
    lowest maximum found stands; the call's own deadline is raised again. Never above
    ``best``'s maximum.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    fine : TaskLevel
        The finest level.
    best, pre : tuple
        The run's answer and the answer before its sum step (``(occupancy, positions,
        history, ...)``).
    ends : ndarray of int64, shape (E, 2)
        The resource graph's links.
    run : dict
        ``run["moves"]`` counts the moves.
    untimed : bool
        Whether the run has no time limit.
    resum : callable or None
        The sum step, ``resum(topo, fine, positions) -> (positions, moves, maximum)``.

    Returns
    -------
    tuple
        The answer (``best`` where nothing is lower).
    """
    from .layermoves import LAYERS, layer_refine
    from .layermoves import layered as plain

    left = time_left()
    if untimed or left is None or not (LAYERED_TIMED and LAYERS):
        return plain(topo, fine, best, pre, ends, run, untimed, resum)
    out = best
    tries = [(best, False)] + ([(pre, True)] if resum is not None and pre is not best else [])
    share_end = time.perf_counter() + LAYERED_SHARE * left
    try:
        with interrupt.until(share_end):
            for start, again in tries:
                state = RefineState(topo, fine, np.array(start[1], dtype=np.int64))
                cut = None
                try:
                    made = layer_refine(topo, ends, state)
                except interrupt.DeadlinePassed as e:  # the try undone, those before kept
                    made, cut = int(not np.array_equal(state.m, start[1])), e
                run["moves"] += made
                value, m = state.maximum(), state.m
                if made and again and cut is None:  # the sum step, kept where no higher
                    m_s, moves_s, value_s = resum(topo, fine, m.copy())
                    run["moves"] += moves_s
                    if value_s <= value * (1 + 1e-12):
                        m, value = m_s, value_s
                if made and value < out[0] * (1 - 1e-12):
                    out = (value, m, [*best[2], value], *best[3:])
                if cut is not None:
                    raise cut
    except interrupt.DeadlinePassed as e:
        if _not_share(e, share_end) is not None:
            raise
    return out


def _not_share(error: BaseException, share_end) -> BaseException | None:
    """``error`` (a :class:`~coalloc._shared.interrupt.DeadlinePassed` that cut a step), or
    None where it is the step's share's own (``share_end`` passed). The call's own deadline
    raises another error (the time limit's), which no step here catches: where both have
    passed the share's comes first, and the next poll raises the call's."""
    if share_end is not None and time.perf_counter() >= share_end:
        return None
    return error


#: Timed (h60edge): a start's fine re-bisection (``multilevel._plan``'s level 0) is put off
#: behind the other starts' refinements from the coarsest level when it is predicted not to
#: end in the time left: more than that left / :data:`FINE_PER_DESCENT` seconds was spent
#: on the same start's descent from the coarsest level (its refinement through the levels
#: and the layer moves after it) (:func:`in_order`). A split cut by the deadline leaves
#: nothing, where the next start's descent offers each level. On the held-back ba 3000 m4 on
#: a tree 16x4x4 the first start's fine re-bisection (1.4-1.7 s of wall under a load of
#: 8, after a 0.4-0.6 s descent) took the rest of a 1-4 s call, and the second start's first
#: level has 316.9 against 352.9. False: the plan's order, as before.
FINE_LATE = True
#: A fine re-bisection is predicted to take this many times its start's descent.
FINE_PER_DESCENT = 2.0


def in_order(plan: list):
    """The refinements of ``plan`` (``multilevel._plan``'s ``[(start, tops)]``) in turn:
    ``(k, start, top, tops)``, ``k`` the start's rank. Untimed (or :data:`FINE_LATE` off)
    the plan's order; timed, a fine re-bisection (``top`` 0) whose start's descent took more
    than the time left / :data:`FINE_PER_DESCENT` comes after every refinement from a
    coarser level still to come (then the put-off ones, in their order, before the rest).

    Parameters
    ----------
    plan : list
        ``[(start, tops)]``.

    Yields
    ------
    tuple
        ``(k, start, top, tops)``.
    """
    items = [(k, start, top, tops) for k, (start, tops) in enumerate(plan) for top in tops]
    walls: dict = {}  # each start's descent from a coarser level: wall seconds
    later: list = []
    while items or later:
        if later and not any(x[2] > 0 for x in items):  # no coarser one left: theirs now
            items, later = later + items, []
        item = items.pop(0)
        left = time_left()
        if FINE_LATE and left is not None and item[2] == 0 and item[0] in walls and \
                walls[item[0]] * FINE_PER_DESCENT > left and any(x[2] > 0 for x in items):
            later.append(item)
            continue
        t = time.perf_counter()
        yield item
        if item[2] > 0:
            walls[item[0]] = time.perf_counter() - t
