"""The sum step of the multilevel mapper: :func:`sum_refine` lowers the route cost (the
sum of the streams' route lengths weighted by their rates) of the finest mapping by moves,
swaps and ejections of boundary tasks, under the bottleneck already found as a hard cap
(issue 40). Split from :mod:`coalloc.taskmap.refinement` (its level-by-level moves), whose
:class:`~coalloc.taskmap.refinement.RefineState` it works on.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .._shared import interrupt
from . import _multilevel, blockswap, sumcycle, swaprefine
from ._reference import refine as _twin  # the kernels' twins: the code with the knobs off
from .levels import expand
from .refinement import TINY, RefineState
from .sumwork import SumWork as _SumWork
from .sumwork import swap_partners

__all__ = ["final_cycles", "held_sum", "sum_refine"]

#: Partners of most gain a swap candidate of :func:`sum_refine` is paired with, at most.
_SWAP_TRIES = 8
_EJECTIONS = True  # the ejection step of sum_refine (issue 40 item 3)
#: Blocked moves whose swap partners :func:`sum_refine` scores at once (a try invalidates
#: them: a window, not all the moves left).
_SWAP_WINDOW = 32
#: The single moves of a pass between two looks at the deadline in force
#: (:func:`coalloc._shared.interrupt.check`; the swaps and ejections look before each
#: candidate). Before, only between passes: a pass on 2,000 tasks took 30-60 ms of wall
#: under load, past the end of a stopped run's budget (h52tmap); every look is at a point
#: where the loads are consistent, so a stopped step keeps the moves made (h54tsum).
_POLL = 16


#: Issue 40 (h63cpu; same values, same order, same answers; False: NumPy): the swap table,
#: cross gains and the ejection and swap screens (4, 3, 4, 4 % of the untimed CPU on the 30)
#: compiled (twins: :mod:`coalloc.taskmap._reference.refine`); ``m`` sorted by radix (uint16).
TABLE_KERNEL = True
EJECT_KERNEL = True
CROSS_KERNEL = True
RADIX_ORDER = True
#: Issue 40 (h64cpu; the same moves in the same order, so the same answers; False: the
#: Python loop): :func:`_sum_moves`' loop over the moves compiled (``_multilevel.sum_moves``,
#: twin :func:`coalloc.taskmap._reference.summoves.sum_moves`).
MOVES_KERNEL = True
#: (h64cpu, the same) a swap's and an ejection's make-check-undo compiled
#: (``_multilevel.swap_try`` / ``eject_try``, twins in ``_reference.summoves``).
TRY_KERNEL = True
#: (h64cpu, the same) a swap's partners compiled (``_multilevel.swap_partners``; False:
#: :func:`coalloc.taskmap.sumwork.swap_partners`, the NumPy code).
PARTNERS_KERNEL = True


def _cross_gains(state: RefineState, positive: bool = True) -> tuple:
    """The moves of boundary tasks to a neighbour's processor and their gains in route
    cost: ``(tasks, processors, gains)``, most gain first, positive gains only (all of
    them with ``positive=False``)."""
    topo, lv, m = state.topo, state.level, state.m
    if CROSS_KERNEL:  # the same moves, gains and order, compiled
        return _multilevel.cross_gains(lv.kern, m, topo.cost, positive, TINY)
    return _twin.cross_gains(lv, m, topo.cost, positive, TINY)  # the NumPy code before


def _gains_to(state: RefineState, tasks: np.ndarray, b: int) -> np.ndarray:
    """The route cost each of ``tasks`` saves moving alone to processor position ``b``."""
    lv, cost, m = state.level, state.topo.cost, state.m
    ent, own = expand(lv.ip[tasks], lv.ip[tasks + 1] - lv.ip[tasks])
    q = m[lv.ix[ent]]
    return np.bincount(own, weights=lv.iw[ent] * (cost[m[tasks][own], q] - cost[b, q]),
                       minlength=tasks.shape[0])  # fmt: skip


def _fits(state: RefineState, procs: list, links: np.ndarray, before: tuple, cap: float) -> bool:
    """Whether the processors ``procs`` and the ``links`` are each at most ``cap`` or not
    above their loads ``before`` (``(processor loads, link loads)``: a swap of equal tasks
    leaves a processor at the cap where it was)."""
    topo = state.topo
    nl, ll = state.nload[procs], state.lload[links]
    ok_n = (nl <= cap * topo.cap[procs]) | (nl <= before[0] + TINY * (1 + before[0]))
    ok_l = (ll <= cap * topo.bw[links]) | (ll <= before[1] + TINY * (1 + before[1]))
    return bool(ok_n.all() and ok_l.all())


def _links_of(state: RefineState, t: int, b: int) -> np.ndarray:
    """The links whose load moving ``t`` to ``b`` changes."""
    _, link, _ = state._row_deltas(np.array([t]), np.array([b]))
    return np.unique(link)


def sum_refine(state: RefineState, max_work: int, passes: int = 8,
               blocks_first: bool = False, cycles: int = -1) -> int:  # fmt: skip
    """Moves and swaps of boundary tasks lowering the route cost, the bottleneck as a cap.

    The route cost is the sum over the streams of volume x route distance (the sum of ``1 /
    bandwidth``: :func:`coalloc.taskmap.communication_cost`). A move of a task to a
    neighbour's processor, or a swap of two tasks on two processors each has neighbours on,
    is taken, most gain first, when it lowers the route cost and leaves every processor and
    link at most the maximum occupancy the mapping had on entry: the maximum occupancy never
    rises. With ``blockswap.BLOCK_SWAPS = "both"`` (the default, h56sum) this is done twice from
    the entry mapping, once after swaps of whole processors' contents under the same cap
    (:func:`~coalloc.taskmap.blockswap.block_swaps`), once without, and the answer of lower
    maximum, then lower route cost, is kept. With ``swaprefine.LINK_SWAPS`` on, a link at the
    maximum is first relieved where sequences of moves across it lower the maximum
    (:func:`~coalloc.taskmap.swaprefine.link_swap_refine`, h56sum), and the cap is the
    maximum after them. With ``sumcycle.VCYCLES`` (h58sum) all this is then repeated on
    coarsenings of the answer (:func:`~coalloc.taskmap.sumcycle.sum_cycles`: groups of
    tasks on one processor move together), kept only when lexicographically better. A move
    is checked against the loads of the moment
    (the kernel's ``score_moves``), a swap by making it and undoing it
    if it overloads something. From the local minimum of moves and swaps a second phase adds
    **ejections** (issue 40 item 3): a move of ``t`` to ``b`` that ``b``'s compute blocks is
    made together with a move of a task ``v`` of ``b`` (heavy enough to make the room) to a
    third processor ``c`` that has room, ``v``'s own gain possibly negative, when the pair
    lowers the route cost and overloads nothing (made and undone otherwise); moves and swaps
    go on between them. The second phase's cap is the first phase's maximum (which may be
    below the entry's), so it raises neither objective of the first phase's answer. At the
    end the loads are recomputed and, should rounding have lifted the maximum, the entry
    mapping is restored.

    Parameters
    ----------
    state : RefineState
        The mapping, changed in place (its loads recomputed at the end).
    max_work : int
        At most this many candidate moves and swaps tried in all (a count, no clock: the
        result depends on the arguments only).
    passes : int, default 8
        At most this many passes over the boundary in each phase.
    blocks_first : bool, default False
        With ``BLOCK_SWAPS = "both"``: the refinement with block swaps first, the moves
        alone second (the order decides only what a deadline leaves: the second is cut).
    cycles : int, default -1
        The V-cycles after the moves (-1: ``sumcycle.VCYCLES``).

    Returns
    -------
    int
        The moves made (a swap counts two) before the V-cycles.

    Examples
    --------
    Two pairs of tasks on the two nodes of a rack, each pair split across the nodes:

    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> from coalloc.taskmap.levels import TaskLevel
    >>> res = generators.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> lv = TaskLevel(np.array([0, 1, 2, 3, 4]), np.array([1, 0, 3, 2]), np.full(4, 4.0),
    ...                np.ones(4))
    >>> state = RefineState(hierarchy.topology(res), lv, np.array([0, 1, 0, 1]))
    >>> sum_refine(state, 100), state.m.tolist(), state.maximum()   # a swap, no move
    (2, [1, 1, 0, 0], 2.0)
    """
    t0, w0 = time.perf_counter(), sumcycle.metered()
    moved = _sum_core(state, max_work, passes, blocks_first)
    cycles = sumcycle.VCYCLES if cycles < 0 else cycles
    if cycles and state.level.n > state.topo.P > 1 and sumcycle.fits(
        time.perf_counter() - t0, cycles
    ):  # V-cycles (h58sum), where they are predicted to end before a deadline in force
        step = _level_step(state.level.n, max_work, passes, blocks_first)
        sumcycle.sum_cycles(state, step, cycles, step_work=sumcycle.metered() - w0)
    return moved


def _level_step(n: int, max_work: int, passes: int, blocks_first: bool):
    """The step a V-cycle runs on each level (``sumcycle.CYCLE_STEP``), its tries
    ``max_work`` scaled by the level's size against the finest's ``n``."""

    def level_step(s: RefineState) -> int:
        work = max(200, max_work * s.level.n // n)
        if sumcycle.CYCLE_STEP in ("full", "blocks"):
            return _sum_core(s, work, passes, blocks_first,
                             links=sumcycle.CYCLE_STEP == "full")  # fmt: skip
        s.refresh()  # the moves alone, under the level's maximum
        return _phases(_SumWork(s, s.maximum() * (1 - 1e-9), work), passes)

    return level_step


def _sum_core(state: RefineState, max_work: int, passes: int, blocks_first: bool,
              links: bool = True) -> int:  # fmt: skip
    """:func:`sum_refine` on one level without its V-cycles: the link step (``links``),
    the moves (twice with ``BLOCK_SWAPS = "both"``), the lexicographically better kept."""
    topo, lv = state.topo, state.level
    state.refresh()
    if lv.n == 0 or topo.P < 2 or not state.maximum() > 0:
        return 0
    linked = swaprefine.link_swap_refine(state, 50) if links and swaprefine.LINK_SWAPS else 0
    m0 = state.m.copy()
    cap = state.maximum()
    mode = blockswap.BLOCK_SWAPS
    # "both": the moves alone (the step before h56sum), then with block swaps
    # (``blocks_first``: the other order); the lexicographically better is kept. When the
    # block swaps make none, the two are the same refinement: run once
    first = blocks_first if mode == "both" else bool(mode)
    moved = _refine_from(state, cap, max_work, passes, first)
    if moved is None:  # blocks first, none made: the moves alone from the entry
        moved = _refine_from(state, cap, max_work, passes, False)
    elif mode == "both":
        moved = _better_of_two(state, m0, moved, cap, max_work, passes, blocks_first)
    state.refresh()
    if state.maximum() > cap * (1 + TINY):  # rounding: keep the entry mapping
        state.m = m0
        state.refresh()
        return linked
    return linked + moved


def _key(state: RefineState) -> tuple:
    """``(maximum occupancy, route cost)`` of the mapping: the lexicographic objective."""
    lv, cost, m = state.level, state.topo.cost, state.m
    state.refresh()
    return state.maximum(), float(np.dot(lv.iw, cost[m[state.rows], m[lv.ix]]))


def _refine_from(state: RefineState, cap: float, max_work: int, passes: int,
                 blocks: bool) -> Optional[int]:  # fmt: skip
    """The block swaps (``blocks``), then the two phases of moves (:func:`_phases`) under
    ``cap``: the moves made (a swap counts two); None, the mapping unchanged, when
    ``blocks`` and the block swaps lower the route cost by less than
    ``blockswap.MIN_GAIN`` of it (the rest would be the moves alone, or nearly)."""
    moved = 0
    if blocks:
        m0, before = state.m.copy(), _key(state)[1]
        moved = 2 * blockswap.block_swaps(state)
        if not _key(state)[1] < before * (1 - blockswap.MIN_GAIN):
            state.m = m0  # none, or too little to be worth a second refinement
            state.refresh()
            return None
    # rounding of the incremental loads stays under the cap
    return moved + _phases(_SumWork(state, cap * (1 - 1e-9), max_work), passes)


def _better_of_two(state: RefineState, m0: np.ndarray, moved: int, cap: float,
                   max_work: int, passes: int, blocks_first: bool) -> int:  # fmt: skip
    """The second refinement of ``BLOCK_SWAPS = "both"`` from the entry ``m0`` (the first's
    answer in ``state``, ``moved`` its moves): the lexicographically better answer left in
    ``state`` and its moves. A deadline during the second keeps the first's answer."""
    m_a, key_a = state.m.copy(), _key(state)
    state.m = m0.copy()
    state.refresh()
    try:
        moved_b = _refine_from(state, cap, max_work, passes, not blocks_first)
    except interrupt.DeadlinePassed:  # stopped: the first answer, finished (a stop here
        moved_b = None  # leaves the step's caller that answer)
    if moved_b is not None:
        key_b = _key(state)
        if key_b[0] < key_a[0] * (1 - TINY) or (
            key_b[0] <= key_a[0] * (1 + TINY) and key_b[1] < key_a[1]
        ):
            return moved_b
    state.m = m_a
    state.refresh()
    return moved


def _phases(work: _SumWork, passes: int) -> int:
    """The two phases of :func:`sum_refine` under ``work.limit``: moves and swaps to a
    local minimum, then (``_EJECTIONS``) the same with ejections from there, so the
    ejections only ever lower the first phase's sum. The moves made."""
    state, moved = work.state, 0
    for eject in (False, True) if _EJECTIONS else (False,):
        if eject:  # the cap of the second phase: the first phase's maximum (it may be lower)
            state.refresh()
            work.limit = min(work.limit, state.maximum() * (1 - 1e-9))
        for _ in range(passes):
            applied = _sum_pass(work, eject)
            if applied is None:
                break
            moved += applied
            state.refresh()
            if applied == 0:
                break
    lv = state.level  # each try scores one task's streams
    sumcycle.charge(work.done * (1.0 + lv.ip[-1] / max(lv.n, 1)))
    return moved


def _sum_pass(work: _SumWork, eject: bool):
    """One pass of :func:`sum_refine` over the boundary: the single moves of most gain,
    then swaps, then (``eject``) ejections for the moves blocked; the moves made (a swap or
    an ejection counts two), or None when there is no boundary move of positive gain or the
    tries are spent."""
    state = work.state
    interrupt.check()
    ct, cb, gain = _cross_gains(state)
    sumcycle.charge(float(state.level.ip[-1] + ct.shape[0]))  # the edges and moves scored
    if not ct.shape[0] or work.spent():
        return None
    work.new_pass()
    applied, left = _sum_moves(work, ct, cb)
    applied += _sum_swaps(work, ct, cb, gain, left)
    if eject and left and not work.spent():
        applied += _sum_ejections(work, ct, cb, gain, left)
    return applied


def _sum_moves(work: _SumWork, ct: np.ndarray, cb: np.ndarray) -> tuple:
    """The single moves of a pass of :func:`sum_refine`, most gain first: batch-screened on
    the processor and the links, then checked one by one against the loads left by the
    moves before. Returns ``(moves made, left)``, ``left`` the indices of the moves the
    links or a processor's compute block (the swap candidates)."""
    state, limit = work.state, work.limit
    topo, lv = state.topo, state.level
    vw = lv.vw
    okn = state.nload[cb] + vw[ct] <= limit * topo.cap[cb]
    sel = np.flatnonzero(okn)
    okl = np.zeros(ct.shape[0], dtype=bool)
    if sel.shape[0]:
        up, _ = _multilevel.score_moves(lv.kern, topo.routes, state.m, state.lload, topo.bw,
                                        ct[sel], cb[sel], -1, TINY)  # fmt: skip
        okl[sel] = up <= limit
    if MOVES_KERNEL:  # the same loop, compiled
        done = np.array([work.done], dtype=np.int64)
        try:
            applied, left_ = _multilevel.sum_moves(
                lv.kern, topo.routes, state.m, state.lload, state.nload, topo.bw, topo.cap, vw,
                ct, cb, okl, np.frombuffer(work.near, dtype=bool), work.touched, done,
                work.max_work, limit, TINY, _POLL, interrupt.check,
            )  # fmt: skip
        finally:
            work.done = int(done[0])
        return applied, left_.tolist()
    left: list = []
    applied = 0
    for k in range(ct.shape[0]):
        if work.spent():
            break
        if k % _POLL == 0:  # between moves: the loads are consistent here
            interrupt.check()
        t, b = int(ct[k]), int(cb[k])
        if work.blocked(t):
            continue
        if not okl[k]:
            left.append(k)
            continue
        work.done += 1
        if state.nload[b] + vw[t] > limit * topo.cap[b]:
            continue
        up, _ = _multilevel.score_moves(lv.kern, topo.routes, state.m, state.lload, topo.bw,
                                        np.array([t]), np.array([b]), -1, TINY)  # fmt: skip
        if not up[0] <= limit:
            continue
        state.move(t, b)
        work.touch(t)
        applied += 1
    return applied, left


def _swap_table(work: _SumWork, ct: np.ndarray, cb: np.ndarray, ks: list) -> tuple:
    """For the moves ``ks`` (indices into ``ct``, ``cb``) of a pass of :func:`sum_refine`,
    of ``t`` from ``a`` to ``b``: the tasks on each ``b`` and the route cost each saves
    moving alone to ``a`` (:func:`_gains_to`), for every distinct pair at once, with the
    largest of each pair's gains (-inf for no task). Returns ``(pair of each k, offsets,
    tasks, gains, largest)``; the pair ``j``'s tasks are ``tasks[offsets[j]:offsets[j +
    1]]``, in increasing order (as ``np.flatnonzero(m == b)``). A gain is the same sum, term
    by term, as :func:`_gains_to` computes for the task alone."""
    state = work.state
    topo, lv, m = state.topo, state.level, state.m
    p = topo.P
    kk = np.asarray(ks, dtype=np.int64)
    t = ct[kk]
    if TABLE_KERNEL:  # the same table, compiled
        return _multilevel.swap_table(lv.kern, m, topo.cost, t, cb[kk])
    key = cb[kk] * p + m[t]
    pairs, pair_of = np.unique(key, return_inverse=True)
    pb, pa = pairs // p, pairs % p
    small = RADIX_ORDER and p < 2**16  # (the same stable order, by NumPy's radix sort)
    order = np.argsort(m.astype(np.uint16) if small else m, kind="stable")
    count = np.bincount(m, minlength=p)
    lens = count[pb]
    idx, owner = expand((np.cumsum(count) - count)[pb], lens)
    tasks = order[idx]
    ent, own = expand(lv.ip[tasks], lv.ip[tasks + 1] - lv.ip[tasks])
    q = m[lv.ix[ent]]
    gains = np.bincount(
        own, weights=lv.iw[ent] * (topo.cost[m[tasks][own], q] - topo.cost[pa[owner][own], q]),
        minlength=tasks.shape[0],
    )  # fmt: skip
    offsets = np.concatenate([[0], np.cumsum(lens)])
    largest = np.full(pairs.shape[0], -np.inf)
    some = lens > 0
    largest[some] = np.maximum.reduceat(gains, offsets[:-1][some]) if tasks.shape[0] else 0
    return pair_of, offsets, tasks, gains, largest


def _swap_screen(work: _SumWork, ct: np.ndarray, cb: np.ndarray, gain: np.ndarray, ks: list,
                 table: tuple) -> np.ndarray:  # fmt: skip
    """Which of the blocked moves ``ks`` of :func:`_sum_swaps` have a partner to try in the
    present state: a task ``u`` of ``b`` not moved in this pass, whose swap fits the compute
    of ``a`` and ``b`` and gains more than the threshold; every (move, partner) pair at once,
    each value by the same operations as the swap's own scoring (so the same verdict).
    Returns a boolean per move of ``ks``."""
    state, limit = work.state, work.limit
    topo, lv, m = state.topo, state.level, state.m
    vw, nload = lv.vw, state.nload
    pair_of, offsets, tasks, gains, _ = table
    kk = np.asarray(ks, dtype=np.int64)
    t, b = ct[kk], cb[kk]
    if EJECT_KERNEL:  # (the screens' knob) the same verdicts, each scan stopped at its own
        return _multilevel.swap_screen(lv.kern, m, vw, nload, topo.cap, topo.cost, work.touched, t,
                                       b, gain[kk], pair_of, offsets, tasks, gains, limit, TINY)
    a = m[t]
    starts = offsets[pair_of]
    idx, own = expand(starts, offsets[pair_of + 1] - starts)  # (move, partner) pairs
    u = tasks[idx]
    tk, ak, bk, g_t = t[own], a[own], b[own], gain[kk][own]
    dw = vw[u] - vw[tk]  # what a gains and b loses in compute
    fit = (nload[ak] + dw <= np.maximum(limit * topo.cap[ak], nload[ak])) & (
        nload[bk] - dw <= np.maximum(limit * topo.cap[bk], nload[bk])
    )
    # the volume between t and u (as np.add.at into zeros: the entries in their order)
    ent, eown = expand(lv.ip[t], lv.ip[t + 1] - lv.ip[t])
    keys, inv = np.unique(eown * lv.n + lv.ix[ent], return_inverse=True)
    vol = np.bincount(inv.ravel(), weights=lv.iw[ent], minlength=keys.shape[0])
    want = own * lv.n + u
    at = np.minimum(np.searchsorted(keys, want), max(keys.shape[0] - 1, 0))
    w_tu = np.where(keys[at] == want, vol[at], 0.0) if keys.shape[0] else np.zeros(u.shape[0])
    g = g_t + gains[idx] - 2 * w_tu * topo.cost[ak, bk]
    good = (g > TINY * (1 + np.abs(g_t))) & fit & ~work.touched[u]
    return np.bincount(own[good], minlength=kk.shape[0]) > 0


def _sum_swaps(work: _SumWork, ct: np.ndarray, cb: np.ndarray, gain: np.ndarray,
               left: list) -> int:  # fmt: skip
    """The swaps of a pass of :func:`sum_refine`: each blocked move of ``t`` from ``a`` to
    ``b`` against the task ``u`` of ``b`` whose move to ``a`` gains most (any task of
    ``b``; the gains and compute of the moment), at most ``_SWAP_TRIES`` partners tried,
    each made and undone if it overloads something. Returns the moves made.

    The gains of the tasks of ``b`` come from :func:`_swap_table`, built for the next
    ``_SWAP_WINDOW`` moves with their screening (:func:`_swap_screen`: which moves have a
    partner to try), and again after every try (a swap made or undone changes the mapping
    or the loads' last bits): a move the screening finds no partner for is passed over
    unscored, as the scoring would find none in the same state."""
    state, limit = work.state, work.limit
    topo, lv = state.topo, state.level
    vw = lv.vw
    applied = 0
    table, since = None, 0
    for i, k in enumerate(left):
        if work.spent():
            break
        interrupt.check()  # between swaps (a try is made and undone within one candidate)
        t, b = int(ct[k]), int(cb[k])
        a = int(state.m[t])
        if work.blocked(t):
            continue
        if table is None or i - since >= _SWAP_WINDOW:  # the gains of the moment
            window = left[i : i + _SWAP_WINDOW]
            table, since = _swap_table(work, ct, cb, window), i
            live = _swap_screen(work, ct, cb, gain, window, table)
        if not live[i - since]:
            continue  # no partner passes (the state is the one screened: no try since)
        pair_of, offsets, tasks, gains, largest = table
        j = int(pair_of[i - since])
        g_t = float(gain[k])  # t and its neighbours unmoved this pass: as listed
        on_b, gains_b = tasks[offsets[j] : offsets[j + 1]], gains[offsets[j] : offsets[j + 1]]
        partners = _multilevel.swap_partners if PARTNERS_KERNEL else swap_partners
        for u in partners(lv.kern if PARTNERS_KERNEL else lv, state.m, vw, state.nload, topo.cap,
                          topo.cost, work.touched, t, b, g_t, float(largest[j]), on_b, gains_b,
                          limit, TINY, _SWAP_TRIES).tolist():  # fmt: skip
            work.done += 1
            table = None  # a try: the loads change (made, or undone up to rounding)
            if TRY_KERNEL:  # the same try, compiled
                if _multilevel.swap_try(lv.kern, topo.routes, state.m, state.lload, state.nload,
                                        topo.bw, topo.cap, vw, t, u, b, limit, TINY):  # fmt: skip
                    work.touch(t, u)
                    applied += 2
                    break
                continue
            links = np.union1d(_links_of(state, t, b), _links_of(state, u, a))
            procs = np.array([a, b])
            before = (state.nload[procs].copy(), state.lload[links].copy())
            state.move(t, b)
            state.move(u, a)
            if _fits(state, procs, links, before, limit):
                work.touch(t, u)
                applied += 2
                break
            state.move(u, b)
            state.move(t, a)
    return applied


def _eject_screen(work: _SumWork, ct: np.ndarray, cb: np.ndarray, gain: np.ndarray, ks: list,
                  moves: tuple) -> np.ndarray:  # fmt: skip
    """Which of the blocked moves ``ks`` of :func:`_sum_ejections` have an ejection to try
    in the present state: ``b``'s compute is what blocks, and among the first
    ``_SWAP_TRIES`` boundary moves ``moves`` = ``(tasks, processors, gains)`` of tasks ``v``
    of ``b`` that pass the ejection's filters one is of a task other than ``t`` with no
    neighbour moved in this pass; all moves at once, each filter by the same operations as
    the ejection's own (so the same verdict). Returns a boolean per move of ``ks``."""
    state, limit = work.state, work.limit
    topo, vw, nload = state.topo, state.level.vw, state.nload
    et, ec, eg = moves
    kk = np.asarray(ks, dtype=np.int64)
    if EJECT_KERNEL:  # the same verdicts, each move's scan stopped at its verdict
        return _multilevel.eject_screen(state.m, vw, nload, topo.cap, work.touched,
                                        np.asarray(work.near, dtype=bool), ct[kk], cb[kk],
                                        gain[kk], et, ec, eg, limit, _SWAP_TRIES)  # fmt: skip
    t, b = ct[kk], cb[kk]
    a, g_t = state.m[t], gain[kk]
    room = nload[b] + vw[t] - limit * topo.cap[b]
    w_e = vw[et]
    each = ~work.touched[et] & (nload[ec] + w_e <= limit * topo.cap[ec])
    on_b = (state.m[et][None, :] == b[:, None]) & (ec[None, :] != a[:, None])
    on_b &= (w_e[None, :] >= room[:, None]) & each[None, :]
    on_b &= eg[None, :] > -g_t[:, None]
    first = on_b & (np.cumsum(on_b, axis=1) <= _SWAP_TRIES)
    near = np.asarray(work.near, dtype=bool)[et]
    free = first & (et[None, :] != t[:, None]) & ~near[None, :]
    return (room > 0) & free.any(axis=1)


def _sum_ejections(work: _SumWork, ct: np.ndarray, cb: np.ndarray, gain: np.ndarray,
                   left: list) -> int:  # fmt: skip
    """The ejections of a pass of :func:`sum_refine` (its second phase): a move of ``t`` to
    ``b`` that ``b``'s compute blocks, made room for by moving a task ``v`` of ``b`` to a
    third processor ``c`` with room (a negative gain allowed when the pair gains): ``v``'s
    best boundary moves, tried in order, made and undone if the pair gains nothing or
    overloads something. Returns the moves made.

    The moves are screened ``_SWAP_WINDOW`` at a time (:func:`_eject_screen`), again after
    every try: a move with no ejection to try in the state screened is passed over."""
    state, limit = work.state, work.limit
    topo, lv = state.topo, state.level
    vw = lv.vw
    touched = work.touched
    applied = 0
    et, ec, eg = _cross_gains(state, positive=False)
    live, since = None, 0
    for i, k in enumerate(left):
        if work.spent():
            break
        interrupt.check()  # between ejections (made and undone within one candidate)
        t, b = int(ct[k]), int(cb[k])
        a = int(state.m[t])
        if work.blocked(t):
            continue
        if live is None or i - since >= _SWAP_WINDOW:
            live = _eject_screen(work, ct, cb, gain, left[i : i + _SWAP_WINDOW], (et, ec, eg))
            since = i
        if not live[i - since]:
            continue  # nothing to try (the state is the one screened: no try since)
        room = state.nload[b] + vw[t] - limit * topo.cap[b]
        if not room > 0:
            continue  # blocked on a link, not on b's compute
        g_t = float(gain[k])  # as listed (t and its neighbours unmoved)
        on_b = (state.m[et] == b) & (ec != a) & (vw[et] >= room) & ~touched[et]
        on_b &= eg > -g_t
        on_b &= state.nload[ec] + vw[et] <= limit * topo.cap[ec]
        for j in np.flatnonzero(on_b)[:_SWAP_TRIES].tolist():
            v, c = int(et[j]), int(ec[j])
            if v == t or work.near[v]:  # v itself is not touched (on_b): its neighbours
                continue
            work.done += 1
            live = None  # a try: the loads change (made, or undone up to rounding)
            if TRY_KERNEL:  # the same try, compiled
                if _multilevel.eject_try(lv.kern, topo.routes, state.m, state.lload, state.nload,
                                         topo.bw, topo.cap, vw, topo.cost, t, b, v, c, g_t, limit,
                                         TINY):  # fmt: skip
                    work.touch(t, v)
                    applied += 2
                    break
                continue
            procs = np.array([a, b, c])
            every = np.arange(topo.E)  # the links either move may load: all (few)
            before = (state.nload[procs].copy(), state.lload.copy())
            g1 = float(_gains_to(state, np.array([v]), c)[0])
            state.move(v, c)
            g2 = float(_gains_to(state, np.array([t]), b)[0])
            state.move(t, b)
            if g1 + g2 > TINY * (1 + abs(g_t)) and _fits(state, procs, every, before, limit):
                work.touch(t, v)
                applied += 2
                break
            state.move(t, a)
            state.move(v, b)
    return applied


#: True (the default): :func:`held_sum` runs the sum step on the answer a multilevel run
#: held aside (its early answer or a grown start, returned where its maximum is below the
#: run's own end: ``multilevel._held_better``), which never had one: untimed, ws 1500 on a
#: dragonfly 9x4x4 of ``bench/taskmap/heldout.py`` returned its early answer at a sum of
#: 634 where the step makes 476 (h58sum). False: the held answer as it is, as before.
HELD_SUM = True


def held_sum(topo, fine, m: np.ndarray, history: list) -> tuple:
    """The sum step (:func:`sum_refine`, ``max(200, 4 x tasks)`` tries, as the multilevel's
    own end) on a finest mapping ``m`` (processor positions) that a run held aside, with
    :data:`HELD_SUM`; ``m`` and ``history`` as they are without it.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order and their routes.
    fine : TaskLevel
        The finest level (the task graph).
    m : ndarray of int64
        The processor position of each task (not changed).
    history : list of float
        The answer's maximum occupancies so far.

    Returns
    -------
    tuple
        ``(mapping, history)``: the mapping after the step, never of higher maximum
        occupancy, and the history with the step's maximum appended when it is lower.

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.taskmap import generators, hierarchy
    >>> from coalloc.taskmap.levels import TaskLevel
    >>> res = generators.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1)
    >>> lv = TaskLevel(np.array([0, 1, 2, 3, 4]), np.array([1, 0, 3, 2]), np.full(4, 4.0),
    ...                np.ones(4))
    >>> m, hist = held_sum(hierarchy.topology(res), lv, np.array([0, 1, 0, 1]), [2.0])
    >>> m.tolist(), hist
    ([1, 1, 0, 0], [2.0])
    """
    if not HELD_SUM:
        return m, history
    state = RefineState(topo, fine, m)
    sum_refine(state, max(200, 4 * fine.n))
    value = state.maximum()
    if value < history[-1] * (1 - 1e-12):  # the step may lower the maximum too
        history = [*history, value]
    return state.m, history


#: True: :func:`sum_step_until` (a stopped answer's step, in a reserve or the spare time)
#: refines with the block swaps first (h56sum; they are cheap and their gain is the larger
#: where parts sit far apart; the moves alone get what time is left); False: the moves
#: alone first, as :func:`sum_refine` by default.
SPARE_BLOCKS_FIRST = True


def sum_step_until(tasks, resources, mapping: np.ndarray, cap: float, until: Optional[float],
                   cycles: int = -1):  # fmt: skip
    """The sum step (:func:`sum_refine`, ``max(200, 4 x tasks)`` tries) on ``mapping``, a
    stopped run's answer (processor ids) of maximum occupancy ``cap``, until ``until`` (a
    :func:`time.perf_counter` instant; the step checks it between its passes, and the
    passes made are kept, each leaving consistent loads): the new mapping and its
    ``max_occupancy`` result (from scratch), or None when it lowers neither the maximum nor
    the volume x distance, or lifts the maximum. Used by the default's
    ``portfolio.SUM_RESERVE`` (issue 40 follow-up, h52tmap)."""
    from .hierarchy import topology
    from .levels import TaskLevel
    from .occupancy import max_occupancy

    topo, fine = topology(resources), TaskLevel.of(tasks)
    position = np.empty(resources.n_nodes, dtype=np.int64)
    position[topo.order_nodes] = np.arange(topo.P)
    state = RefineState(topo, fine, position[np.asarray(mapping, dtype=np.int64)])
    rows = np.repeat(np.arange(fine.n), np.diff(fine.ip))
    before = float(np.dot(fine.iw, topo.cost[state.m[rows], state.m[fine.ix]]))
    try:
        with interrupt.until(until):
            sum_refine(state, max(200, 4 * fine.n), blocks_first=SPARE_BLOCKS_FIRST,
                       cycles=cycles)  # fmt: skip
    except interrupt.DeadlinePassed:  # state.m: after the passes made (checked below)
        pass
    lower = float(np.dot(fine.iw, topo.cost[state.m[rows], state.m[fine.ix]])) < before * (1 - 1e-9)
    if not lower and not state.maximum() < cap * (1 - 1e-9):  # neither objective fell
        return None
    out = topo.order_nodes[state.m]
    after = max_occupancy(tasks, resources, out)
    if after[0] < cap * (1 - 1e-12):  # the link step (swaprefine.LINK_SWAPS): a lower maximum
        return out, after
    return (out, after) if lower and after[0] <= cap * (1 + 1e-12) else None


def final_cycles(tasks, resources, result, until: Optional[float] = None,
                 sum_step: bool = True):  # fmt: skip
    """The default's answer ``result`` after the sum step with ``sumcycle.FINAL_CYCLES``
    V-cycles (:func:`sum_step_until`: never a higher maximum occupancy, a
    lower route cost or maximum kept), or ``result`` itself (no mapping, the knob off,
    ``sum_step`` False, nothing lower, a time limit without ``sumcycle.FINAL_TIMED``, an
    answer whose limit was reached: status ``time_limit``). Stopped at ``until`` (a
    :func:`time.perf_counter` instant; None: none, the work counted, no clock): the cycles
    ended before the stop kept, the status set to ``time_limit``. ``timings["sum_cycles"]``:
    their seconds, when they ran.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    result : TaskMappingResult
        The answer (not modified).
    until : float, optional
        The caller's deadline.
    sum_step : bool, default True
        The caller's ``sum_refine`` parameter (False: ``result`` as it is).

    Returns
    -------
    TaskMappingResult
    """
    import dataclasses

    from .occupancy import occupancy_graph

    if not sumcycle.FINAL_CYCLES or not sum_step or result.mapping is None:
        return result
    if until is not None and (not sumcycle.FINAL_TIMED or result.status == "time_limit"
                              or time.perf_counter() >= until):  # fmt: skip
        return result  # a stopped answer: the spare-time step's (``sum_in_spare_time``)
    cap, t0 = float(result.max_occupancy), time.perf_counter()
    stop: list = []
    if sumcycle.FINAL_STEP:  # the whole step again, then its cycles
        got = sum_step_until(tasks, resources, result.mapping, cap, until,
                             cycles=sumcycle.FINAL_CYCLES)  # fmt: skip
    else:
        got = _cycles_alone(tasks, resources, result.mapping, cap, until, stop)
    timings = {**(result.timings or {}), "sum_cycles": time.perf_counter() - t0}
    if stop or (until is not None and time.perf_counter() >= until):
        # the deadline ended the cycles: not the untimed answer, so said (the contract)
        result = dataclasses.replace(result, status="time_limit", timings=timings)
    else:
        result = dataclasses.replace(result, timings=timings)
    if got is None:
        return result
    m, (occ, bott) = got
    if occ > cap * (1 + 1e-12):
        return result
    node_occ, link_occ = occupancy_graph(tasks, resources, m)
    history = list(result.history or [])
    if occ < cap * (1 - 1e-12):
        history.append(float(occ))
    return dataclasses.replace(result, mapping=m, max_occupancy=float(occ), bottleneck=bott,
                               node_occupancy=node_occ, link_occupancy=link_occ,
                               history=history)  # fmt: skip


def _cycles_alone(tasks, resources, mapping: np.ndarray, cap: float, until: Optional[float],
                  stop: Optional[list] = None):  # fmt: skip
    """:func:`final_cycles` without the step on the finest level first (the answer had it):
    ``sumcycle.FINAL_CYCLES`` cycles, their work cap ``sumcycle.CYCLE_WORK`` x
    ``sumcycle.FINAL_WORK`` x the finest level's streams and tasks (a count). As
    :func:`sum_step_until` returns; a stop at ``until`` appends True to ``stop`` and keeps
    the cycles ended before it (each kept only when better)."""
    from .hierarchy import topology
    from .levels import TaskLevel
    from .occupancy import max_occupancy

    topo, fine = topology(resources), TaskLevel.of(tasks)
    if not fine.n > topo.P > 1:
        return None
    position = np.empty(resources.n_nodes, dtype=np.int64)
    position[topo.order_nodes] = np.arange(topo.P)
    state = RefineState(topo, fine, position[np.asarray(mapping, dtype=np.int64)])
    step = _level_step(fine.n, max(200, 4 * fine.n), 8, SPARE_BLOCKS_FIRST)
    entry = state.m.copy()
    try:
        with interrupt.until(until):
            kept = sumcycle.sum_cycles(state, step, sumcycle.FINAL_CYCLES,
                                       step_work=sumcycle.FINAL_WORK * (fine.ip[-1] + fine.n))
    except interrupt.DeadlinePassed:  # the answer before the stopped cycle (kept if better)
        kept = int(not np.array_equal(state.m, entry))
        if stop is not None:
            stop.append(True)
    if not kept:
        return None
    out = topo.order_nodes[state.m]
    after = max_occupancy(tasks, resources, out)
    return (out, after) if after[0] <= cap * (1 + 1e-12) else None
