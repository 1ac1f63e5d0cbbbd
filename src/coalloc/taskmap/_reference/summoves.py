"""Pure Python/NumPy twin of ``coalloc.taskmap._multilevel.sum_moves``
(src/_core/taskmap/_multilevel.cpp, issue 40 h64cpu): the loop of
``coalloc.taskmap.sumrefine._sum_moves`` as it was before the kernel, with the kernel's
signature and checks; the parity tests in ``tests/taskmap/kernels/test_sum_moves_kernel.py``
require identical results.
"""

from __future__ import annotations

import numpy as np

from .multilevel import _need, apply_move, score_moves

__all__ = ["sum_moves", "swap_try", "eject_try", "swap_partners"]


def _own(a, kind, n: int, name: str) -> None:
    _need(
        isinstance(a, np.ndarray) and a.dtype == kind and a.ndim == 1 and a.flags.c_contiguous
        and a.flags.writeable and a.shape[0] == n,
        f"{name} must be a writeable contiguous 1-D {np.dtype(kind).name} array of length {n}",
    )  # fmt: skip


def sum_moves(level, routes, m, lload, nload, bw, cap, vw, ct, cb, okl, near, touched, done,
              max_work: int, limit: float, tiny: float, every: int, poll) -> tuple:  # fmt: skip
    """The single moves of a pass of the sum step, in order: a move ``ct[i] -> cb[i]`` is
    passed over when its task is ``near`` a move made, listed as blocked when ``okl[i]``
    is False, and otherwise counted as a try (``done[0]``; none once it reaches
    ``max_work``) and made when it fits ``cb[i]``'s compute under ``limit x cap`` and
    raises no link above ``limit`` (:func:`~.multilevel.score_moves`); a move made updates
    ``m``, the loads (:func:`~.multilevel.apply_move`), ``touched`` and ``near`` (the task
    and its neighbours). ``poll`` (a callable or None) before every ``every``-th move.

    Parameters
    ----------
    level, routes
        The graph (``Level``) and the routes between processors (``PairRoutes``).
    m, lload, nload : ndarray
        The mapping (int64), the links' and processors' loads (float64), updated.
    bw, cap, vw : ndarray of float64
        The links' bandwidths, the processors' capacities, the tasks' weights.
    ct, cb : ndarray of int64
        The moves (task, processor), in the order they are tried.
    okl : ndarray of bool
        The links' screen of each move.
    near, touched, done : ndarray
        Bool arrays per task and the tries' count (int64, one entry), updated.
    max_work : int
        The tries allowed.
    limit, tiny : float
        The cap on every occupancy; the tolerance of a rising link load.
    every : int
        The moves between two polls.
    poll : callable or None
        Called (no argument) before the moves 0, every, 2 every, ...

    Returns
    -------
    tuple
        ``(moves made, indices of the moves okl blocks as int64)``.
    """
    n, p, e = level.n, routes.P, routes.E
    _own(m, np.int64, n, "m")
    _own(lload, np.float64, e, "lload")
    _own(nload, np.float64, p, "nload")
    _own(near, np.bool_, n, "near")
    _own(touched, np.bool_, n, "touched")
    _own(done, np.int64, 1, "done")
    bw, cap, vw = (np.ascontiguousarray(x, dtype=np.float64) for x in (bw, cap, vw))
    ct, cb = np.ascontiguousarray(ct, dtype=np.int64), np.ascontiguousarray(cb, dtype=np.int64)
    okl = np.ascontiguousarray(okl, dtype=bool)
    _need(bw.shape == (e,), "bw must have length n_links")
    _need(cap.shape == (p,), "cap must have length P")
    _need(vw.shape == (n,), "vw must have length n")
    _need(ct.ndim == 1, "ct must be 1-D")
    _need(cb.shape == ct.shape and okl.shape == ct.shape, "cb and okl must have len(ct)")
    _need(int(every) >= 1, "every must be >= 1")
    _need(bool(np.all((m >= 0) & (m < p))), "m must hold processors in [0, P)")
    _need(bool(np.all((ct >= 0) & (ct < n))), "ct must hold tasks in [0, n)")
    _need(bool(np.all((cb >= 0) & (cb < p))), "cb must hold processors in [0, P)")
    left: list = []
    applied = 0
    for k in range(ct.shape[0]):
        if done[0] >= max_work:
            break
        if k % every == 0 and poll is not None:
            poll()
        t, b = int(ct[k]), int(cb[k])
        if near[t]:
            continue
        if not okl[k]:
            left.append(k)
            continue
        done[0] += 1
        if nload[b] + vw[t] > limit * cap[b]:
            continue
        up, _ = score_moves(level, routes, m, lload, bw, np.array([t]), np.array([b]), -1, tiny)
        if not up[0] <= limit:
            continue
        apply_move(level, routes, m, lload, nload, float(vw[t]), t, b)
        touched[t] = True
        near[t] = True
        near[level.ix[level.ip[t] : level.ip[t + 1]]] = True
        applied += 1
    return applied, np.array(left, dtype=np.int64)


def _checked(level, routes, m, lload, nload, bw, cap, vw, pair: tuple, on: int) -> tuple:
    """The checks of :func:`swap_try` and :func:`eject_try`; the float arrays."""
    n, p, e = level.n, routes.P, routes.E
    _own(m, np.int64, n, "m")
    _own(lload, np.float64, e, "lload")
    _own(nload, np.float64, p, "nload")
    bw, cap, vw = (np.ascontiguousarray(x, dtype=np.float64) for x in (bw, cap, vw))
    _need(bw.shape == (e,) and cap.shape == (p,) and vw.shape == (n,), "bw, cap, vw: bad shapes")
    x, y = (int(z) for z in pair)
    _need(0 <= x < n and 0 <= y < n and x != y, "two tasks in [0, n) expected")
    for z in (x, y):
        near = np.append(level.ix[level.ip[z] : level.ip[z + 1]], z)
        _need(bool(np.all((m[near] >= 0) & (m[near] < p))), "m must hold processors in [0, P)")
    _need(0 <= on < p and m[y] == on and m[x] != on, "the partner must be on b, t elsewhere")
    return bw, cap, vw


def _links_of(level, routes, m, t: int, b: int) -> np.ndarray:
    """The links whose load moving ``t`` to ``b`` changes (``sumrefine._links_of``)."""
    q = m[level.ix[level.ip[t] : level.ip[t + 1]]]
    pairs = np.concatenate([b * routes.P + q, m[t] * routes.P + q])
    out = [routes.rlink[routes.rptr[k] : routes.rptr[k + 1]] for k in pairs.tolist()]
    return np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *out]))


def _fits(nload, lload, cap, bw, procs, links, before: tuple, limit: float, tiny: float) -> bool:
    """``sumrefine._fits``: each at most ``limit`` x capacity or not above its value before."""
    nl, ll = nload[procs], lload[links]
    ok_n = (nl <= limit * cap[procs]) | (nl <= before[0] + tiny * (1 + before[0]))
    ok_l = (ll <= limit * bw[links]) | (ll <= before[1] + tiny * (1 + before[1]))
    return bool(ok_n.all() and ok_l.all())


def swap_try(level, routes, m, lload, nload, bw, cap, vw, t: int, u: int, b: int, limit: float,
             tiny: float) -> bool:  # fmt: skip
    """A swap of a pass of the sum step (``sumrefine._sum_swaps``): ``t`` (on ``a``) to
    ``b`` and ``u`` (on ``b``) to ``a`` made (:func:`~.multilevel.apply_move`); kept (True)
    when ``a``, ``b`` and every link either move changes (found before the moves) are each
    at most ``limit`` x their capacity or not above their loads before, else undone (``u``,
    then ``t``; False)."""
    bw, cap, vw = _checked(level, routes, m, lload, nload, bw, cap, vw, (t, u), int(b))
    t, u, b = int(t), int(u), int(b)
    a = int(m[t])
    links = np.union1d(_links_of(level, routes, m, t, b), _links_of(level, routes, m, u, a))
    procs = np.array([a, b])
    before = (nload[procs].copy(), lload[links].copy())
    apply_move(level, routes, m, lload, nload, float(vw[t]), t, b)
    apply_move(level, routes, m, lload, nload, float(vw[u]), u, a)
    if _fits(nload, lload, cap, bw, procs, links, before, limit, tiny):
        return True
    apply_move(level, routes, m, lload, nload, float(vw[u]), u, b)
    apply_move(level, routes, m, lload, nload, float(vw[t]), t, a)
    return False


def _gain_to(level, cost, m, t: int, b: int) -> float:
    """The route cost ``t`` saves moving alone to ``b`` (``sumrefine._gains_to``)."""
    lo, hi = level.ip[t], level.ip[t + 1]
    q = m[level.ix[lo:hi]]
    w = level.iw[lo:hi] * (cost[m[t], q] - cost[b, q])
    return float(np.bincount(np.zeros(hi - lo, dtype=np.int64), weights=w, minlength=1)[0])


def eject_try(level, routes, m, lload, nload, bw, cap, vw, cost, t: int, b: int, v: int, c: int,
              g_t: float, limit: float, tiny: float) -> bool:  # fmt: skip
    """An ejection of a pass of the sum step (``sumrefine._sum_ejections``): ``v`` (on
    ``b``) to ``c``, then ``t`` (on ``a``) to ``b`` made; kept (True) when the two route-cost
    gains (each before its move) sum above ``tiny (1 + |g_t|)`` and ``a``, ``b``, ``c`` and
    every link are each at most ``limit`` x their capacity or not above their loads before,
    else undone (``t``, then ``v``; False)."""
    bw, cap, vw = _checked(level, routes, m, lload, nload, bw, cap, vw, (t, v), int(b))
    cost = np.asarray(cost, dtype=np.float64)
    _need(cost.shape == (routes.P, routes.P), "cost must have shape (P, P)")
    _need(0 <= int(c) < routes.P, "c must be a processor in [0, P)")
    t, b, v, c = int(t), int(b), int(v), int(c)
    a = int(m[t])
    procs = np.array([a, b, c])
    every = np.arange(routes.E)
    before = (nload[procs].copy(), lload.copy())
    g1 = _gain_to(level, cost, m, v, c)
    apply_move(level, routes, m, lload, nload, float(vw[v]), v, c)
    g2 = _gain_to(level, cost, m, t, b)
    apply_move(level, routes, m, lload, nload, float(vw[t]), t, b)
    if g1 + g2 > tiny * (1 + abs(g_t)) and _fits(nload, lload, cap, bw, procs, every, before,
                                                 limit, tiny):  # fmt: skip
        return True
    apply_move(level, routes, m, lload, nload, float(vw[t]), t, a)
    apply_move(level, routes, m, lload, nload, float(vw[v]), v, b)
    return False


def swap_partners(level, m, vw, nload, cap, cost, touched, t: int, b: int, g_t: float,
                  largest: float, on_b, gains_b, limit: float, tiny: float,
                  tries: int) -> np.ndarray:  # fmt: skip
    """The partners a blocked move of ``t`` to ``b`` of the sum step's swaps tries, in
    order (``sumrefine._sum_swaps`` before the kernel): the tasks ``on_b`` not ``touched``
    whose swap with ``t`` keeps both processors within ``limit`` x their capacity or their
    present loads and gains more than ``tiny (1 + |g_t|)`` (``gains_b``: what each saves
    moving to ``t``'s processor; the volume between ``t`` and it counted twice off), most
    gain first (stable), at most ``tries``; none when ``g_t + largest`` does not pass."""
    n = level.n
    m, on_b = np.asarray(m, dtype=np.int64), np.asarray(on_b, dtype=np.int64)
    vw, nload, cap = (np.asarray(x, dtype=np.float64) for x in (vw, nload, cap))
    cost, gains_b = np.asarray(cost, dtype=np.float64), np.asarray(gains_b, dtype=np.float64)
    touched = np.asarray(touched, dtype=bool)
    p = nload.shape[0]
    _need(m.shape == (n,) and vw.shape == (n,) and touched.shape == (n,), "m, vw, touched: n")
    _need(cap.shape == (p,) and cost.shape == (p, p), "cap, cost: bad shapes")
    _need(on_b.ndim == 1 and gains_b.shape == on_b.shape, "gains_b must have len(on_b)")
    _need(0 <= int(t) < n and 0 <= int(b) < p and 0 <= m[int(t)] < p, "t, b: out of range")
    _need(bool(np.all((on_b >= 0) & (on_b < n))), "on_b must hold tasks in [0, n)")
    _need(int(tries) >= 0, "tries must be >= 0")
    t, b = int(t), int(b)
    none = np.zeros(0, dtype=np.int64)
    thr = tiny * (1 + abs(g_t))
    if not g_t + largest > thr:
        return none
    free = np.flatnonzero(~touched[on_b])
    us = on_b[free]
    a = int(m[t])
    dw = vw[us] - vw[t]
    fit = (nload[a] + dw <= np.maximum(limit * cap[a], nload[a])) & (
        nload[b] - dw <= np.maximum(limit * cap[b], nload[b])
    )
    us, free = us[fit], free[fit]
    w_tu = np.zeros(n)
    lo, hi = level.ip[t], level.ip[t + 1]
    np.add.at(w_tu, level.ix[lo:hi], level.iw[lo:hi])
    g = g_t + gains_b[free] - 2 * w_tu[us] * cost[a, b]
    good = g > thr
    return us[good][np.argsort(-g[good], kind="stable")][: int(tries)].astype(np.int64)
