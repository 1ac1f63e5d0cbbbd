"""The star tables of the stars bound (:mod:`coalloc.taskmap.bounds`): what its star test
and full tests need of an instance, built once per call (:class:`_Stars`), and a timed
build's progress."""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from .routing import route_table

_SLACK = 1e-12  # relative slack of every test: a rounding error never fails a feasible L


#: A timed build of the star tables (:class:`_Stars` given ``pace``) tells its caller how
#: far it is, ``pace(share done)``, after a sort of a ``_BUILD_SLICE``-th of the neighbour
#: lists, then after each of its three sorts (the bulk of it; the shares ``_BUILD_DONE``,
#: measured): the caller predicts its end and stops it (h56late: 0.1-0.2 s on stencil27
#: 20x20x8 onto a dragonfly of 144, 1.3-4 s niced beside two busy loops, against the
#: first part's 1.25 s at ``T`` = 5 s and 0.07 s by ``STAR_SECONDS``)
_BUILD_SLICE, _BUILD_DONE = 16, (0.03, 0.33, 0.6, 0.9)


def _row_sort(key: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The order of the entries of each row (``rows`` ascending) by ``key``, stable."""
    return np.lexsort((key, rows))


class _Stars:
    """What the star test needs, computed once per instance (``pace``: a timed build's
    progress, the caller's to stop by raising)."""

    def __init__(self, tasks, resources, pace: Optional[Callable[[float], None]] = None):
        timed, pace = pace is not None, pace or (lambda done: None)
        w = tasks.node_weight.astype(np.float64)
        n = tasks.n
        ip, ix, iw = tasks.undirected_csr()
        deg = np.diff(ip)
        rows = np.repeat(np.arange(n), deg)
        wn = w[ix]
        safe = np.where(wn > 0, wn, 1.0)
        ratio = np.where(wn > 0, iw / safe, np.inf)
        if timed and ix.size > _BUILD_SLICE:  # a slice's sort first: the build's pace
            k = ix.size // _BUILD_SLICE
            _row_sort(-ratio[:k], rows[:k])
            pace(_BUILD_DONE[0])
        order = _row_sort(-ratio, rows)  # each row's neighbours, best volume per weight first
        pace(_BUILD_DONE[1])
        self.n, self.w, self.rows = n, w, rows
        self.ix = ix[order]
        self.wn, self.vn = wn[order], iw[order]
        cw = np.cumsum(self.wn)
        first = np.repeat(ip[:-1], deg)
        self.wprev = cw - self.wn - (cw[first] - self.wn[first]) if ix.size else cw
        self.vol = np.bincount(rows, weights=iw, minlength=n)
        # the count bound: at most k neighbours fit (k = how many of the lightest fit), and
        # they keep at most the k largest volumes; per row, the lightest weights' running
        # sums and the largest volumes' running sums
        by_w = _row_sort(wn, rows)
        pace(_BUILD_DONE[2])
        by_v = _row_sort(-iw, rows)
        pace(_BUILD_DONE[3])
        start = np.repeat(ip[:-1], deg)
        self.wlight = (
            np.cumsum(wn[by_w]) - (np.cumsum(wn[by_w]) - wn[by_w])[start] if ix.size else wn
        )
        cv = np.cumsum(iw[by_v])
        self.vtop = cv - (cv - iw[by_v])[start] if ix.size else iw
        self.row_start = ip[:-1]
        self.adjacency = sp.csr_matrix(
            (np.ones(ix.shape[0], dtype=np.float32), ix, ip), shape=(n, n)
        )
        procs = resources.processors
        self.P = int(procs.shape[0])
        self.cap = resources.capacity[procs].astype(np.float64)
        self.ucap, self.cap_class = np.unique(self.cap, return_inverse=True)
        self.cap_class = self.cap_class.reshape(-1)
        self.band = resources.adjacent_bandwidth[procs].astype(np.float64)
        self.bw = resources.bandwidth.astype(np.float64)
        self.hop = None
        self.resources = resources

    def leaving(self, L: float) -> np.ndarray:
        """(n, K): the least volume task t sends off its processor when that processor has
        capacity class k and occupancy at most L: its volume less what it can keep, the
        smaller of the fractional knapsack of its neighbours in the room and the largest
        volumes of as many neighbours as fit (counting the lightest)."""
        out = np.empty((self.n, self.ucap.shape[0]))
        for k, c in enumerate(self.ucap):
            room = L * c * (1 + _SLACK) - self.w
            rr = room[self.rows] - self.wprev
            frac = np.where(
                self.wn > 0,
                np.clip(rr / np.where(self.wn > 0, self.wn, 1.0), 0.0, 1.0),
                (rr >= 0).astype(np.float64),
            )
            keep = np.bincount(self.rows, weights=self.vn * frac, minlength=self.n)
            if self.vtop.size:
                fits = np.bincount(
                    self.rows, weights=(self.wlight <= room[self.rows]), minlength=self.n
                ).astype(np.int64)
                last = np.maximum(self.row_start + fits - 1, 0)
                keep = np.minimum(keep, np.where(fits > 0, self.vtop[last], 0.0))
            out[:, k] = np.where(room < 0, np.inf, np.maximum(self.vol - keep, 0.0))
        return out

    def slots(self) -> np.ndarray:
        """(P, E): the position of each link among the links of each processor."""
        if getattr(self, "_slot", None) is None:
            links = self.resources.links
            procs = self.resources.processors
            row = np.full(self.resources.n_nodes, -1)
            row[procs] = np.arange(self.P)
            slot = np.zeros((self.P, links.shape[0]), dtype=np.int64)
            count = np.zeros(self.P, dtype=np.int64)
            cols = []
            for e, (u, v) in enumerate(links.tolist()):
                for x in (u, v):
                    r = row[x]
                    if r >= 0:
                        slot[r, e] = count[r]
                        cols.append((r, count[r], self.bw[e]))
                        count[r] += 1
            D = max(1, int(count.max()) if count.size else 1)
            sbw = np.zeros((self.P, D))
            for r, k, b in cols:
                sbw[r, k] = b
            self._slot, self._sbw = slot, sbw
        return self._slot

    def slot_bw(self) -> np.ndarray:
        """(P, D): the bandwidth of each link of each processor, by position (0 padded)."""
        self.slots()
        return self._sbw

    def first_hops(self) -> np.ndarray:
        """(P, P): the link by which the route from processor i to processor j leaves i
        (-1 on the diagonal)."""
        if self.hop is not None:
            return self.hop
        rt = route_table(self.resources)
        pred = rt.pred.astype(np.int64)
        plink = rt.pred_link.astype(np.int64)
        procs = self.resources.processors
        P, R = pred.shape
        src = procs[:, None]
        # child[k, v]: the node after processors[k] on its route tree towards v
        child = np.where(pred == src, np.arange(R)[None, :], -1)
        par = np.where(pred >= 0, pred, 0)
        for _ in range(R):
            nxt = np.where(child >= 0, child, np.take_along_axis(child, par, axis=1))
            nxt = np.where(pred >= 0, nxt, -1)
            if np.array_equal(nxt, child):
                break
            child = nxt
        hop = np.full((P, P), -1, dtype=np.int64)
        kk, jj = np.meshgrid(np.arange(P), np.arange(P), indexing="ij")
        low = kk < jj
        c = child[kk[low], procs[jj[low]]]
        hop[low] = plink[kk[low], np.where(c >= 0, c, 0)]
        high = kk > jj
        hop[high] = plink[jj[high], procs[kk[high]]]
        self.hop = hop
        return hop
