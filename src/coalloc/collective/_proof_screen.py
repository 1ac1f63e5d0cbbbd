"""The earlier proofs' weights applied from the pool's block maxima (issue 40, h56coll).

A start that passed the screens is often proven empty by the weights of an earlier proof
(:func:`._heuristic_sets.proven_by`), which reads every node's window maxima there (week
N = 10 collective case 2 on pool 2030: 126 of 127 such starts over 2-day windows, two
``window_max_rows`` calls of 94-98 ms). Per group of consecutive starts this
screen bounds every node's window maxima from below by the largest block maximum of the
blocks inside every window of the group (a subset of each window's segments), so the amounts
free at each start from above; a weighted sum of the ``N`` largest of those that misses the
weights' threshold by more than :data:`SLACK` proves the start empty wherever
``proven_by`` on the exact maxima would (larger amounts on more rows only raise the sum), so
the scan's answers, ledger and counters are those of the exact path. Pure NumPy: no kernel.
"""

from __future__ import annotations

from typing import List

import numpy as np

from ._heuristic_sets import top_rows
from ._scratch import window_rows
from .model import BLOCK

#: Relative slack over ``proves_empty``'s margin (1e-12): covers the rounding of sums taken
#: over other rows in another order.
SLACK = 1e-9
#: The anchor's running maxima one block at a time, each an ``(N, m)`` plane written in
#: place (:func:`_running`), instead of ``np.maximum.accumulate`` along the blocks then
#: moved to the front (:func:`_accumulated`): the same values (a maximum is exact), about
#: half the time (issue 40, h57coll: 6.2 vs 12.6 ms for 72 blocks of 10,000 x 3).
STEPPED = True
#: The window maxima of a start the screen leaves, when computed for that start alone (and
#: for the first start it is asked, no weights kept yet: alone), over windows of
#: :data:`ALONE_SEGS` segments or more from the pool's block maxima (``window_max_blocks``)
#: instead of every segment (``window_max_rows``, whose pass over a row costs the windows'
#: span whatever the starts): the same values (issue 40, h57coll). False: h56coll's.
ALONE = True
ALONE_SEGS = 4 * BLOCK


def window_lows(times: np.ndarray, bm: np.ndarray, nodes: np.ndarray,
                starts: np.ndarray, duration: float) -> np.ndarray:  # fmt: skip
    """``(len(nodes), m)``: per node and property a value at most its window maximum over
    ``[t, t + duration)`` for every start ``t`` of ``starts`` (non-decreasing): the largest
    block maximum ``bm`` of the blocks of :data:`BLOCK` segments whose segments all begin inside
    every window, 0 where no block does (amounts are never negative)."""
    c0 = _blocks(times, float(starts[-1]), duration)[0]  # those of the last start's window
    c1 = _blocks(times, float(starts[0]), duration)[1]  # and of the first's
    if c1 <= c0:
        return np.zeros((nodes.size, bm.shape[1]))
    return bm[:, :, c0:c1].max(axis=2)[nodes]


def bound_proves(ahi: np.ndarray, elo: np.ndarray, d: np.ndarray, dlo: np.ndarray, n: int,
                 proofs: List[np.ndarray]) -> bool:  # fmt: skip
    """Whether one of ``proofs`` proves that no ``n`` rows reach every total at a start
    where each row's free amounts are at most ``ahi`` (rows below ``elo`` are not eligible):
    when True, ``proven_by`` proves it from the exact amounts too."""
    pos = d > 0
    if not proofs or not np.any(pos):
        return False
    ok = np.all(ahi >= elo[None, :], axis=1)
    if int(ok.sum()) < n:
        return False  # the exact rows could be fewer than n: not a superset's bound
    g, b = ahi[ok][:, pos] / d[pos][None, :], dlo[pos] / d[pos]
    for lam in proofs:
        if lam.size == g.shape[1]:
            score = g @ lam
            rows = top_rows(score, n)
            top, bound = float(score[rows].sum()), float(lam @ b)
            scale = abs(top) + abs(bound) + float(np.abs(g[rows]).sum(axis=0) @ lam)
            if top + SLACK * scale < bound:
                return True
    return False


class ProofScreen:
    """The bound per start from the blocks inside its window, each the larger of two running
    maxima either side of an anchor block boundary ``A`` inside the window (suffix maxima of
    the blocks before ``A``, prefix maxima after: 2 reads per node and property a start,
    the maxima built once for every start whose window holds ``A``)."""

    def __init__(self, scan, pool, duration: float) -> None:
        self.pool, self.bm = pool, None  # the index read when first needed (not built here)
        self.duration, self.scan = duration, scan
        self.anchor = None  # (c0, A, W, L, R): L[i] max of blocks c0 + i .. A - 1, R[j] A .. A+j-1
        self.key, self.ahi, self.said = None, None, {}  # the last bound and its verdicts
        self.asked = self.proven = 0  # counts: the screen's own share of proofs (scan.py)

    def lows(self, t: float) -> np.ndarray:
        """``(len(nodes), m)``: at most each node's window maximum at start ``t``."""
        if self.bm is None:  # a start to prove: the pool's index (built by then, or now)
            self.times, _, self.bm = self.pool._block_maxima()
            nodes = self.scan.nodes
            self.whole = nodes.size == self.bm.shape[0] and bool(
                np.all(nodes == np.arange(nodes.size)))  # fmt: skip
        sc, bm = self.scan, self.bm
        c0, c1 = _blocks(self.times, t, self.duration)
        if c1 <= c0:
            return np.zeros((sc.nodes.size, bm.shape[1]))
        got = self.anchor
        if got is None or not (got[0] <= c0 <= got[1] <= c1 <= got[1] + got[2]):
            a, w = c1, c1 - c0  # every later start's window holds A until its c0 passes A
            hi = min(bm.shape[2], a + w)
            self.anchor = got = (c0, a, hi - a) + (_running(bm, c0, a, hi) if STEPPED else
                                                   _accumulated(bm, c0, a, hi))  # fmt: skip
        lo = np.maximum(got[3][c0 - got[0]], got[4][c1 - got[1]])
        return lo if self.whole else lo[sc.nodes]

    def proves(self, b: np.ndarray, s: int) -> bool:
        """Whether the scan's kept proofs prove start ``b[s]`` empty from the bound; if so
        noted as ``_Scan.search_at`` notes a start ``proven_by`` proves (the same counter)."""
        sc = self.scan
        self.asked += 1
        if not sc.proofs:
            return False
        key = _blocks(self.pool._state[0], float(b[s]), self.duration)  # the bound's blocks
        if key != self.key:  # the starts of a block of segments share them
            self.key, self.ahi, self.said = key, sc.cap - self.lows(float(b[s])), {}
        for lam in sc.proofs:  # as bound_proves, each weights' verdict kept for the key
            got = self.said.get(lam.tobytes())
            if got is None:
                got = bound_proves(self.ahi, sc.elo, sc.d, sc.dlo, sc.n, [lam])
                self.said[lam.tobytes()] = got
            if got:
                break
        else:
            return False
        self.proven += 1
        sc.frontier = float(b[s])
        sc.counters["lagrange_steps"] = sc.counters.get("lagrange_steps", 0) + 1
        sc.note_empty(b[s])
        return True

    def ahead(self, size: int) -> int:
        """Starts whose window maxima the scan computes at once from a start the screen
        did not prove: that start alone while the screen proves half those it was asked
        (the later ones are likely proven: no maxima needed), and the first start it was
        asked (:data:`ALONE`: the answer, or the source of the weights that prove the
        later ones), else ``size`` (the rest of the block: one pass over the windows).
        Counts only, never the clock."""
        first = ALONE and self.asked == 1
        return 1 if first or 2 * self.proven >= self.asked else size

    def maxima(self, ker, times: np.ndarray, res: np.ndarray, b: np.ndarray,
               s: int) -> np.ndarray:  # fmt: skip
        """Every node's window maxima from start ``b[s]`` on, as many starts as
        :meth:`ahead` says (``window_max_rows``); a start alone over windows of
        :data:`ALONE_SEGS` segments or more from the pool's block maxima
        (``window_max_blocks``, :data:`ALONE`: the same values, its whole blocks read once
        each instead of every segment)."""
        sc, t, k = self.scan, float(b[s]), s + self.ahead(b.size)
        if ALONE and k == s + 1 and sc.backend == "compiled":
            segs = np.searchsorted(times, t + self.duration) - np.searchsorted(times, t)
            if segs >= ALONE_SEGS:
                times, res, bm = self.pool._block_maxima()
                return ker.window_max_blocks(times, res, bm, BLOCK, sc.nodes, b[s:k],
                                             self.duration)  # fmt: skip
        return window_rows(ker, times, res, sc.nodes, b[s:k], self.duration)


def _running(bm: np.ndarray, c0: int, a: int, hi: int):
    """``(L, R)``: ``L[i]`` the maxima of the blocks ``c0 + i .. a - 1`` (0 for ``i = a -
    c0``), ``R[j]`` those of ``a .. a + j - 1`` (0 for ``j = 0``), each ``(N, m)``: one
    ``np.maximum`` of two ``(N, m)`` planes a block (:data:`STEPPED`)."""
    k, shape = a - c0, bm.shape[:2]
    L, R = np.empty((k + 1,) + shape), np.empty((hi - a + 1,) + shape)
    L[k], R[0] = 0.0, 0.0
    L[k - 1] = bm[:, :, a - 1]
    for j in range(k - 2, -1, -1):
        np.maximum(L[j + 1], bm[:, :, c0 + j], out=L[j])
    for j in range(1, hi - a + 1):
        np.maximum(R[j - 1], bm[:, :, a + j - 1], out=R[j])
    return L, R


def _accumulated(bm: np.ndarray, c0: int, a: int, hi: int):
    """:func:`_running`'s ``(L, R)`` by ``np.maximum.accumulate`` along the blocks then
    moved to the front (h56coll's: about twice the time, the same values)."""
    left = np.maximum.accumulate(bm[:, :, c0:a][:, :, ::-1], axis=2)[:, :, ::-1]
    zero = np.zeros(bm.shape[:2] + (1,))
    L = np.ascontiguousarray(np.moveaxis(np.concatenate([left, zero], axis=2), 2, 0))
    right = np.maximum.accumulate(bm[:, :, a:hi], axis=2)
    R = np.ascontiguousarray(np.moveaxis(np.concatenate([zero, right], axis=2), 2, 0))
    return L, R


def _blocks(times: np.ndarray, t: float, duration: float):
    """The whole blocks ``[c0, c1)`` of segments all beginning inside ``[t, t + duration)``."""
    k0 = int(np.searchsorted(times, t, "right"))
    k1 = int(np.searchsorted(times, t + duration, "left")) - 1
    return -(-k0 // BLOCK), k1 // BLOCK
