"""The procedures of Taura & Chien's mapper (sections 4.4-4.5) on one mutable state.

:class:`Engine` runs the elementary move ``map_tasks_on`` (Fig. 7), the loop that fills the
processors one after another (``map_tasks``), ``remove_bottlenecks`` and ``improve``
(Fig. 10) on an :class:`~coalloc.taskmap.OccupancyState`, updating its loads move by move.
The public functions of :mod:`coalloc.taskmap.mapper` validate their input and drive it.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared.docs import filled
from . import _occupancy
from .model import ResourceGraph, TaskGraph
from .occupancy import OccupancyState
from .routing import route_table

__all__ = ["Engine", "TIE"]

#: Relative tolerance when comparing M_i values (incremental float updates).
TIE = 1e-12

#: Issue 40 (h64cpu; the same values in the same order, so the same answers; False: the
#: Python loop): :meth:`Engine.map_tasks_on`'s loop over the unmapped tasks compiled
#: (``_occupancy.fill_prefix``, twin ``coalloc.taskmap._reference.occupancy.fill_prefix``):
#: the paper's greedy start, about a sixth of the untimed mapper's CPU on the table1 graphs.
FILL_KERNEL = True


@filled
class Engine:
    """The paper's procedures on one mutable :class:`OccupancyState`.

    Parameters
    ----------
    %(taskmap_graphs)s
    order : ndarray of int64
        The task order (a permutation).
    procs : ndarray of int64
        The processors in the order they are filled.
    open_metric : bool
        Include ``O_open`` in ``M_i`` (the ``"open"`` variants).
    early_exit : bool, default True
        Stop an elementary move once ``O(m_i)`` exceeds the best ``M_j`` (same result).

    Attributes
    ----------
    moves : int
        Tasks placed so far (counting those taken back).

    Examples
    --------
    >>> import numpy as np
    >>> import coalloc.taskmap as tm
    >>> tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    >>> res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    >>> eng = Engine(tasks, res, np.arange(3), np.array([2, 1]), open_metric=True)
    >>> state = tm.OccupancyState(tasks, res)
    >>> eng.map_tasks(state), state.mapping.tolist(), eng.moves
    (True, [2, 2, 1], 4)
    """

    def __init__(
        self,
        tasks: TaskGraph,
        resources: ResourceGraph,
        order: np.ndarray,
        procs: np.ndarray,
        *,
        open_metric: bool,
        early_exit: bool = True,
    ):
        self.tasks = tasks
        self.res = resources
        self.order = order
        self.procs = procs
        self.open_metric = open_metric
        self.early_exit = early_exit
        self.w = tasks.node_weight
        self.indptr, self.indices, self.pw = tasks.undirected_csr()
        cap = resources.capacity[procs]
        # capacity of Q = the processors after position k in procs
        self.cap_after = np.concatenate([np.cumsum(cap[::-1])[::-1][1:], [0.0]])
        self.inv_cap = np.zeros(resources.n_nodes)
        np.divide(1.0, resources.capacity, out=self.inv_cap, where=resources.is_processor)
        self.inv_bw = 1.0 / resources.bandwidth
        self.adj_bw = resources.adjacent_bandwidth
        self.routes = route_table(resources).kernel
        self.moves = 0

    # -- section 4.4 ----------------------------------------------------------------------
    def map_tasks_on(self, state: OccupancyState, q: int, cap_q: float, u: Optional[float]) -> int:
        """Put the best prefix of the unmapped tasks (in order) on q; returns how many.

        Parameters
        ----------
        state : OccupancyState
            The partial mapping, changed in place.
        q : int
            The processor to fill.
        cap_q : float
            The capacity of the processors still to come (for ``O_comp``).
        u : float or None
            Stop once the occupancy exceeds ``u``.

        Returns
        -------
        int
            The tasks put on ``q`` (the prefix ``m_i`` minimising ``M_i``).
        """
        mp = state.mapping
        unmapped = self.order[mp[self.order] < 0]
        if unmapped.shape[0] == 0:
            return 0
        rest = float(self.w[unmapped].sum())
        cur = state.max_occupancy()
        on_q = np.flatnonzero(mp == q)
        open_vol = 0.0
        if self.open_metric and on_q.shape[0]:
            for y in on_q:
                lo, hi = self.indptr[y], self.indptr[y + 1]
                nb = self.indices[lo:hi]
                open_vol += float(self.pw[lo:hi][mp[nb] < 0].sum())
        adj = float(self.adj_bw[q])
        inv_cq = self.inv_cap[q]
        if FILL_KERNEL:  # the same loop, compiled
            count = np.zeros(1, dtype=np.int64)
            try:
                return _occupancy.fill_prefix(
                    state._pairs, state._routes, mp, state.node_load, state.link_load,
                    unmapped, q, float(inv_cq), float(cap_q), float(cur), rest, self.inv_bw,
                    bool(self.open_metric), open_vol, adj, np.nan if u is None else float(u),
                    bool(self.early_exit), TIE, interrupt.check, count,
                )  # fmt: skip
            finally:
                self.moves += int(count[0])  # (also when a poll raises, as the loop)
        best_m = np.inf
        best_i = 0
        placed = 0
        n_u = unmapped.shape[0]
        for i in range(n_u):
            if not i & 63:
                interrupt.check()  # a batch's timeout or cancellation
            t = int(unmapped[i])
            ids = state.place(t, q)
            placed += 1
            self.moves += 1
            occ = state.node_load[q] * inv_cq
            if occ > cur:
                cur = occ
            if ids.shape[0]:
                lo_ = float((state.link_load[ids] * self.inv_bw[ids]).max())
                if lo_ > cur:
                    cur = lo_
            rest -= self.w[t]
            if i == n_u - 1:
                comp = 0.0  # nothing left to place
            else:
                comp = max(rest, 0.0) / cap_q if cap_q > 0 else np.inf
            m_i = max(cur, comp)
            if self.open_metric:
                lo, hi = self.indptr[t], self.indptr[t + 1]
                nb = self.indices[lo:hi]
                where = mp[nb]
                vol = self.pw[lo:hi]
                open_vol += float(vol[where < 0].sum()) - float(vol[where == q].sum())
                if open_vol > 1e-12 * (1.0 + abs(open_vol)):
                    o_open = open_vol / adj if adj > 0 else np.inf
                    m_i = max(m_i, o_open)
            # early exit / bound u: m_i can no longer be chosen, nor anything after it
            if u is not None and cur > u * (1 + TIE):
                break
            if self.early_exit and cur > best_m * (1 + TIE):
                break
            if m_i <= best_m * (1 + TIE):
                best_m = min(best_m, m_i)
                best_i = i + 1
        for j in range(placed - 1, best_i - 1, -1):
            state.remove(int(unmapped[j]))
        return best_i

    def map_tasks(self, state: OccupancyState, u: Optional[float] = None) -> bool:
        """Map every unmapped task (Fig. 7); False when the bound u makes it give up.

        Parameters
        ----------
        state : OccupancyState
            The partial mapping, completed in place.
        u : float, optional
            The bound of section 4.4.

        Returns
        -------
        bool
            Whether every task is mapped.
        """
        for k, q in enumerate(self.procs):
            if not (state.mapping < 0).any():
                return True
            cap_q = float(self.cap_after[k])
            self.map_tasks_on(state, int(q), cap_q, u)
            if u is not None:
                rest = float(self.w[state.mapping < 0].sum())
                if rest > 0 and (cap_q <= 0 or rest / cap_q > u):
                    return False
        return not (state.mapping < 0).any()

    # -- section 4.5 ----------------------------------------------------------------------
    def remove_bottlenecks(self, state: OccupancyState, acceleration: float) -> None:
        """Unmap bottleneck tasks until the maximum occupancy is at most acceleration x max.

        Parameters
        ----------
        state : OccupancyState
            The mapping, changed in place.
        acceleration : float
            The fraction of the present maximum occupancy to get below.
        """
        target = acceleration * state.max_occupancy()
        s_all, t_all, vol_all = self.tasks.edges()
        while True:
            interrupt.check()  # a batch's timeout or cancellation
            link_occ = state.link_occupancy()
            node_occ = state.node_occupancy()
            l_best = int(np.argmax(link_occ)) if link_occ.shape[0] else -1
            if l_best >= 0 and link_occ[l_best] > target:
                mp = state.mapping
                a, b = mp[s_all], mp[t_all]
                live = np.flatnonzero((a >= 0) & (b >= 0) & (a != b))
                uses = _occupancy.route_uses(self.routes, a[live], b[live], l_best)
                cand = live[uses]
                e = int(cand[np.argmax(vol_all[cand])])
                state.remove(int(s_all[e]))
                state.remove(int(t_all[e]))
                continue
            p = int(np.argmax(node_occ))
            if node_occ[p] > target:
                on_p = np.flatnonzero(state.mapping == p)
                t = int(on_p[np.argmax(self.w[on_p])])
                state.remove(t)
                continue
            return

    def improve(
        self, state: OccupancyState, acceleration: float, bound_factor: Optional[float]
    ) -> bool:
        """One round of Fig. 10; keeps the result only if it lowers the occupancy.

        Parameters
        ----------
        state : OccupancyState
            A complete mapping, changed in place only when the round lowers the occupancy.
        acceleration : float
            As in :meth:`remove_bottlenecks`.
        bound_factor : float or None
            The remapping's bound ``u``, as a fraction of the present occupancy.

        Returns
        -------
        bool
            Whether the round was kept.
        """
        before = state.max_occupancy()
        saved = state.mapping.copy()
        self.remove_bottlenecks(state, acceleration)
        u = None if bound_factor is None else bound_factor * before
        ok = self.map_tasks(state, u)
        if ok:
            state.refresh()
            if state.max_occupancy() < before * (1 - TIE):
                return True
        state.mapping = saved
        state.refresh()
        return False
