"""The scan's screens of a block with ``bound_screen`` first (issue 40, h53coll).

``bound_screen`` gives block_screen's code and property at the starts that bounds from
sampled thresholds decide (most starts that miss a total), without every node's window maxima
held or sorted; the scan then computes the window maxima and block_screen only at the starts
it leaves undecided and at those the ledger will list (their sums): the same answers, the
tail of issue 40's rejections about 0.6-0.9 of the time (bench/collective/ISSUE40.md,
"(h53coll)").
"""

from __future__ import annotations

import numpy as np

#: Whether the scan uses ``bound_screen`` on its later blocks (when the previous block failed
#: the screens at half of its starts and windows hold at most :data:`SEGS` segments).
ON = True
#: The longest windows (segments) it runs on (longer ones: slower than window_max_rows).
SEGS = 16
#: (Nor on a block whose first half or more the ledger will list: those starts are screened
#: exactly anyway.) The least share of the previous block's starts failing the screens
#: (codes 1 and 2) for which it runs (the starts that pass the screens, code 0 or 3, it
#: leaves undecided: their window maxima are then computed as well).
SHARE = 0.5
#: The least share of a block's starts it must decide for the scan to keep using it (the
#: issue's rejections with many starts passing the screens: it decided 10-30 % of a block,
#: and the window maxima of the rest cost nearly as much as those of every start).
KEEP = 0.5
#: Its sample (every ``STRIDE``-th matching node) and the starts sharing one set of thresholds
#: (on the issue's rejections: 95-99 % of the starts that miss a total decided).
STRIDE = 4
GROUP = 8
#: The entries the scan's ledger lists (_ledger.MAX_LISTED): their sums are needed exactly.
LISTED = 50


def bounded(sc, times, res, b, prune):
    """The screens of the block ``b`` of the scan ``sc`` with ``bound_screen`` first: the
    starts it leaves undecided and the ledger's next listed ones get their window maxima and
    ``pruned_screen`` (``prune``) or ``block_screen``. Returns the four outputs (block_screen's
    codes and properties at every start, its counts and sums wherever the ledger reads them),
    those window maxima, per start, their row (-1: none), and whether the bounds decided at
    least :data:`KEEP` of the block (else the scan stops using them)."""
    from ._scratch import window_rows
    from .model import BLOCK
    from .scan import _SUB

    ker, nodes, cap, n, tol = sc.ker, sc.nodes, sc.cap, sc.n, sc.tol
    dur = sc.request.duration
    times, res, bm, bn = sc.pool._block_extrema()  # the rows' bounds from the blocks
    codes, elig, props, vals, dec = ker.bound_screen(times, res, nodes, b, dur, cap, sc.e, sc.d,
                                                   n, STRIDE, GROUP, tol=tol,
                                                   extrema=(bm, bn, BLOCK))  # fmt: skip
    exact = codes < 0
    exact[: max(0, LISTED - len(sc.ledger.listed))] = True
    idx = np.flatnonzero(exact)
    tm_block = window_rows(ker, times, res, nodes, b[idx], dur)
    if idx.size:
        if prune and idx.size >= _SUB // 2:
            got = ker.pruned_screen(tm_block, cap, sc.e, sc.d, n, _SUB, tol=tol)[:4]
        else:
            got = ker.block_screen(tm_block, cap, sc.e, sc.d, n, tol=tol)
        for out, x in zip((codes, elig, props, vals), got):
            out[idx] = x
    at = np.full(b.size, -1, dtype=np.int64)
    at[idx] = np.arange(idx.size)
    return codes, elig, props, vals, tm_block, at, dec >= KEEP * b.size
