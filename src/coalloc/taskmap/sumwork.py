"""The tries, the cap and the tasks moved that the passes of
:func:`coalloc.taskmap.sumrefine.sum_refine` share (split from :mod:`coalloc.taskmap.sumrefine`,
issue 40 h64cpu, to keep that module under the house's 800 lines)."""

from __future__ import annotations

import numpy as np

from .refinement import RefineState

__all__ = ["SumWork", "swap_partners"]


class SumWork:
    """What the phases of :func:`~coalloc.taskmap.sumrefine.sum_refine` share: the
    mapping, the cap on every occupancy (``limit``), the count of tries made (``done``) and
    allowed (``max_work``), and, within a pass, the tasks moved (``touched``) and those
    moved or next to a move (``near``, a bytearray: one look-up a task in Python, and a
    NumPy bool array's buffer for the compiled loops, ``np.frombuffer(near, dtype=bool)``)."""

    def __init__(self, state: RefineState, limit: float, max_work: int):
        self.state, self.limit, self.max_work = state, limit, max_work
        self.done = 0
        self.new_pass()

    def new_pass(self) -> None:
        """No task moved yet."""
        self.touched = np.zeros(self.state.level.n, dtype=bool)
        self.near = bytearray(self.state.level.n)  # (a bool array's buffer: the kernels')

    def touch(self, *ts: int) -> None:
        """Mark the tasks ``ts`` moved, and them and their neighbours near a move (the
        level's graph is symmetric: ``u`` is next to ``t`` when ``t`` is next to ``u``)."""
        lv = self.state.level
        for t in ts:
            self.touched[t] = True
            self.near[t] = True
            for u in lv.ix[lv.ip[t] : lv.ip[t + 1]].tolist():
                self.near[u] = True

    def spent(self) -> bool:
        """Whether the tries allowed are all made."""
        return self.done >= self.max_work

    def blocked(self, t: int) -> bool:
        """Whether ``t`` or one of its neighbours moved in this pass."""
        return self.near[t] != 0


def swap_partners(level, m: np.ndarray, vw: np.ndarray, nload: np.ndarray, cap: np.ndarray,
                  cost: np.ndarray, touched: np.ndarray, t: int, b: int, g_t: float,
                  largest: float, on_b: np.ndarray, gains_b: np.ndarray, limit: float,
                  tiny: float, tries: int) -> np.ndarray:  # fmt: skip
    """The partners a blocked move of ``t`` to ``b`` of :func:`~coalloc.taskmap.sumrefine.
    sum_refine`'s swaps tries, in order: the tasks ``on_b`` (``gains_b``: what each saves
    moving to ``t``'s processor ``a``) not ``touched`` whose swap with ``t`` keeps ``a`` and
    ``b`` within ``limit`` x their capacity or their present loads and gains more than
    ``tiny (1 + |g_t|)``, most gain first (stable), at most ``tries``; none when ``g_t +
    largest`` (the most any task of ``b`` saves) does not pass. The NumPy code of
    ``sumrefine.PARTNERS_KERNEL`` off (the kernel: ``_multilevel.swap_partners``)."""
    none = np.zeros(0, dtype=np.int64)
    thr = tiny * (1 + abs(g_t))
    if not g_t + largest > thr:
        return none  # no task of b is a partner that gains
    free = np.flatnonzero(~touched[on_b])
    if not free.shape[0]:
        return none
    us = on_b[free]
    a = int(m[t])
    dw = vw[us] - vw[t]  # what a gains and b loses in compute
    fit = (nload[a] + dw <= np.maximum(limit * cap[a], nload[a])) & (
        nload[b] - dw <= np.maximum(limit * cap[b], nload[b])
    )
    us, free = us[fit], free[fit]
    if not us.shape[0]:
        return none
    lo, hi = level.ip[t], level.ip[t + 1]
    w_tu = np.zeros(level.n)
    np.add.at(w_tu, level.ix[lo:hi], level.iw[lo:hi])
    g = g_t + gains_b[free] - 2 * w_tu[us] * cost[a, b]
    good = g > thr
    return us[good][np.argsort(-g[good], kind="stable")][:tries].astype(np.int64)
