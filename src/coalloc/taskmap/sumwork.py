"""The tries, the cap and the tasks moved that the passes of
:func:`coalloc.taskmap.sumrefine.sum_refine` share (split from :mod:`coalloc.taskmap.sumrefine`,
issue 40 h64cpu, to keep that module under the house's 800 lines)."""

from __future__ import annotations

import numpy as np

from .refinement import RefineState

__all__ = ["SumWork"]


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
