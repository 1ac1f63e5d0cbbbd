"""NumPy/Python twin of :mod:`coalloc.collective._search` (window maxima, Phases IV-V, swaps).

Same signatures and the same arithmetic, in the same order, as
``src/_core/collective/_search.pyx``, so the results are equal bit for bit:

* :func:`window_max`: for each start ``s`` the segments ``k0 = searchsorted(times, s,
  "right") - 1`` to ``k1 = searchsorted(times, s + duration, "left")`` (exclusive) and the
  maximum of ``reserved[:, :, k0:k1]`` (the paper's ``T_ij^t``);
* :func:`select_and_swap`: the paper's SelectAndSwap (Phase IV), random choices from a
  xoshiro256** stream (:class:`Xoshiro256`, the generator of ``coalloc/common/xoshiro.hpp``);
* :func:`phase5`: the paper's Phase V (``N L2`` random swap attempts);
* :func:`swap_search`: the deterministic best-improvement swap search of the default method
  (first repair the totals, then maximise the utilisation factor).

Same interface as the kernels (``docs/architecture.md``, "Kernel arguments"): arguments
tagged IN are read only, OUT arrays are allocated by the caller and written, INOUT arrays are
read and overwritten; the functions return scalars only.

Column sums are kept incrementally: ``s_i <- (s_i - x[out, i]) + x[in, i]`` for a swap.

The family's tolerance rule (:data:`coalloc.collective.model.TOLERANCE`): every function that
compares amounts takes ``tol`` (``tau_i`` per property; zeros: none); an amount meets a
minimum ``e_i`` when ``a >= e_i - tau_i``, ``count`` amounts meet a total ``d_i`` when their
sum is ``>= d_i - count tau_i``. The utilisation factor takes 1 for a property the set has
none of (``0/0``: nothing needed, nothing wasted), so no NaN reaches a comparison.

Why over 800 lines: it mirrors one kernel module, function by function and in the
kernel's order, so that each twin sits beside the code it must equal bit for bit.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..._shared import interrupt
from ..._shared.xoshiro import Xoshiro256
from ..core import ScreenOut

__all__ = ["Xoshiro256", "window_max", "window_max_rows", "window_max_blocks", "screen",
           "weighted_screen", "block_screen", "pruned_screen", "window_screen", "scan_screen",
           "select_and_swap", "phase5", "swap_search", "decrease_starts",
           "bound_screen", "min_counts"]  # fmt: skip


def _check_rows(nodes: np.ndarray, rows: int, starts: Optional[np.ndarray]) -> None:
    """The kernels' shared argument checks (the compiled ``_check_rows``): every node a
    row of ``reserved`` (``rows`` of them) and, when given, the starts non-decreasing."""
    if nodes.size and (nodes.min() < 0 or nodes.max() >= rows):
        raise ValueError("nodes must index rows of reserved")
    if starts is not None and starts.shape[0] > 1 and not np.all(starts[1:] >= starts[:-1]):
        raise ValueError("starts must be non-decreasing")


def window_max(times, reserved, starts, duration, out):
    """``out[s, j, i]``: maximum of ``reserved[j, i]`` over ``[starts[s], starts[s] + duration)``.

    Parameters
    ----------
    times : ndarray, shape (K,)
        IN: sorted breakpoints, ``times[0] <= min(starts)``.
    reserved : ndarray, shape (n, m, K)
        IN.
    starts : ndarray, shape (S,)
        IN.
    duration : float (> 0)
        IN.
    out : ndarray of float64, shape (S, n, m)
        OUT: the maxima.
    """
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.float64)
    n, m, _ = reserved.shape
    if out.shape != (starts.shape[0], n, m):
        raise ValueError("out must be (len(starts), n, m)")
    for s, t in enumerate(starts):
        interrupt.check()  # the compiled kernel's poll (twin)
        k0 = int(np.searchsorted(times, t, side="right")) - 1
        k1 = int(np.searchsorted(times, t + duration, side="left"))
        out[s] = reserved[:, :, k0 : max(k1, k0 + 1)].max(axis=2)


def _tol(tol, m):
    arr = np.asarray(tol, dtype=np.float64)
    if arr.shape != (m,):
        raise ValueError("tol must have one value per property")
    return arr


def _dlo(d, tol, count):
    d = np.asarray(d, dtype=np.float64)
    return d - float(count) * _tol(tol, d.shape[0])


def _outs(S, *arrays):
    if any(a.shape != (S,) for a in arrays):
        raise ValueError("code, eligible, prop and value must have one entry per start")


def screen(tmax, cap, demand, out):
    """The quick tests of every start (twin of the kernel's ``screen``).

    For each start ``s`` (``tmax[s]`` the window maxima, ``a = cap - tmax[s]``): the nodes
    with ``a_ij >= e_i`` for every property are eligible (``eligible[s]``); fewer than
    ``count``: ``code[s] = 1``, ``prop[s]`` = the property met by the fewest nodes,
    ``value[s]`` = how many meet it (the first such property on ties). Otherwise, for each
    property the ``count`` largest eligible amounts are summed (largest first); where a sum
    misses ``d_i``, ``code[s] = 2`` with the property of the largest relative shortfall
    (the first on ties) and its sum in ``value[s]``; else ``code[s] = 0``.

    Parameters
    ----------
    tmax : ndarray, shape (S, n, m)
        IN: window maxima per start.
    cap : ndarray, shape (n, m)
        IN: capacities.
    demand : Demand
        IN: :class:`coalloc.collective.core.Demand`: the minimums ``e`` and totals ``d``
        (shape (m,)), ``count`` (``N``) and the tolerance ``tol`` (``tau_i``, zeros: none).
    out : ScreenOut
        OUT: :class:`coalloc.collective.core.ScreenOut`: ``code``, ``elig``, ``prop``
        (int64, shape (S,): the screen's code, eligible count and property per start) and
        ``value`` (float64, shape (S,)).
    """
    e, d, count, tol = demand
    code, elig, prop, value = out
    tmax = np.asarray(tmax, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    S, n, m = tmax.shape
    tl = _tol(tol, m)
    _outs(S, code, elig, prop, value)
    code[:], elig[:], prop[:], value[:] = 0, 0, -1, 0.0
    for s in range(S):
        interrupt.check()  # the compiled kernel's poll (twin)
        meet = [0] * m
        ok = []
        for j in range(n):
            good = True
            for i in range(m):
                if cap[j, i] - tmax[s, j, i] >= e[i] - tl[i]:
                    meet[i] += 1
                else:
                    good = False
            ok.append(good)
        k = sum(ok)
        elig[s] = k
        if k < count:
            code[s] = 1
            bi = min(range(m), key=lambda i: (meet[i], i))
            prop[s], value[s] = bi, float(meet[bi])
            continue
        worst, bi = 0.0, -1
        for i in range(m):
            vals = sorted(-(cap[j, i] - tmax[s, j, i]) for j in range(n) if ok[j])
            tot = 0.0
            for q in range(count):
                tot = tot - vals[q]
            if tot < d[i] - float(count) * tl[i]:
                rel = (d[i] - tot) / d[i] if d[i] > 0 else np.inf
                if bi < 0 or rel > worst:
                    worst, bi = rel, i
                    value[s] = tot
        if bi >= 0:
            code[s], prop[s] = 2, bi


def weighted_screen(tmax, cap, demand, code):
    """Issue 40: the equal weights' proof that no set exists (twin of the kernel's
    ``weighted_screen``).

    For each start ``s`` with ``code[s] == 0``: with ``k`` the properties of ``d_i > 0`` and
    ``w_i = (1 / k) / d_i``, the nodes meeting every minimum (``a = cap - tmax[s] >= e - tau``)
    score ``x_j = sum_i a_ij w_i`` (properties in order); the ``count`` largest, summed largest
    first (``top``), plus the margin ``1e-12 (|top| + |bound| + count max_j sum_i |a_ij| w_i)``
    below ``bound = sum_i (1 / k) ((d_i - count tau_i) / d_i)`` prove that no ``count`` eligible
    nodes reach every total (an admissible set would reach ``bound``): ``code[s] = 3``. Other
    codes are left as they are.

    Parameters
    ----------
    tmax, cap, demand
        IN: as for :func:`screen`.
    code : ndarray of int64, shape (S,)
        INOUT: the screens' codes; 0 -> 3 where the proof holds.
    """
    e, d, count, tol = demand
    tmax = np.asarray(tmax, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    S, n, m = tmax.shape
    tl = _tol(tol, m)
    if code.shape != (S,):
        raise ValueError("code must have one entry per start")
    pos = [i for i in range(m) if d[i] > 0]
    k = len(pos)
    if S == 0 or n == 0 or k == 0 or count < 1 or n < count:
        return
    w = np.zeros(m)
    bound = 0.0
    for i in pos:
        w[i] = (1.0 / k) / d[i]
        bound = bound + (1.0 / k) * ((d[i] - float(count) * tl[i]) / d[i])
    elo = e - tl
    for s in range(S):
        interrupt.check()  # the compiled kernel's poll (twin)
        if code[s] != 0:
            continue
        a = cap - tmax[s]
        ok = np.ones(n, dtype=bool)
        x = np.zeros(n)
        mg = np.zeros(n)
        for i in range(m):  # property by property, in order: the kernel's sums
            ok &= a[:, i] >= elo[i]
            if d[i] > 0:
                x = x + a[:, i] * w[i]
                mg = mg + np.abs(a[:, i]) * w[i]
        vals = x[ok]
        if vals.size < count:
            continue
        best = -np.sort(-vals)[:count]  # the count largest, largest first
        top = float(np.cumsum(best)[-1])  # summed in that order
        margin = 1e-12 * (abs(top) + abs(bound) + float(count) * float(mg[ok].max()))
        if top + margin < bound:
            code[s] = 3


def block_screen(tmax, cap, demand, out):
    """:func:`screen`, then :func:`weighted_screen` on its codes (twin of the kernel's
    ``block_screen``, which fuses the two passes over the block, issue 40): ``code[s]`` is 0
    (passes), 1 or 2 (the screens, as :func:`screen`) or 3 (passes the screens, but the equal
    weights prove that no ``count`` eligible nodes reach every total).

    Parameters
    ----------
    tmax, cap, demand, out
        As for :func:`screen` (the same shapes, IN and OUT); ``out.code`` also takes 3.
    """
    screen(tmax, cap, demand, out)
    weighted_screen(tmax, cap, demand, out.code)


def pruned_screen(tmax, cap, demand, sub, out):
    """:func:`block_screen`'s outputs, screening per sub-block of ``sub`` starts only the nodes
    that can matter there (twin of the kernel's ``pruned_screen``, issue 40).

    Per sub-block, ``a = cap - tmax`` is bounded for every start by ``cap`` minus the largest
    and the least window maxima over its starts. A node whose every property meets its
    minimum at every start or at none is settled; one that misses a minimum is never
    eligible and only counted (per property). When ``g = count + count // 2 + 1`` nodes are
    eligible at every start, one of them is also only counted when, on every property, its
    largest amount is below the ``g``-th largest least amount among them, its largest
    equal-weights score below the ``g``-th largest least score and its largest
    ``sum_i |a_ij| w_i`` below the largest least one: the ``count`` largest amounts and scores
    and the margin's maximum are then those of the kept rows. The kept rows are screened by
    :func:`block_screen`; the counted nodes are added to the eligible counts and to the
    minimum screen's per-property counts.

    Parameters
    ----------
    tmax, cap, demand, out
        As for :func:`block_screen` (the same shapes, IN and OUT).
    sub : int
        IN: starts per sub-block (>= 1).

    Returns
    -------
    int
        The rows screened, summed over the sub-blocks.
    """
    e, d, count, tol = demand
    code, elig, prop, value = out
    tmax = np.asarray(tmax, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    S, n, m = tmax.shape
    if sub < 1:
        raise ValueError("sub must be >= 1")
    tl = _tol(tol, m)
    _outs(S, code, elig, prop, value)
    code[:], elig[:], prop[:], value[:] = 0, 0, -1, 0.0
    if S == 0 or n == 0 or m == 0:
        return 0
    e, d = np.asarray(e, dtype=np.float64), np.asarray(d, dtype=np.float64)
    elo = e - tl
    pos = [i for i in range(m) if d[i] > 0]
    k = len(pos)
    weigh = k > 0 and count >= 1 and n >= count
    w = [(1.0 / k) / float(d[i]) if d[i] > 0 else 0.0 for i in range(m)]
    g = count + count // 2 + 1
    rows = 0
    for s0 in range(0, S, sub):
        s1 = min(s0 + sub, S)
        lo, hi = tmax[s0:s1].min(axis=0), tmax[s0:s1].max(axis=0)
        keep, cadd, kadd = _pruned_keep(cap - hi, cap - lo, elo, g, weigh, pos, w)
        rows += keep.size
        _screen_kept(tmax[s0:s1, keep], cap[keep], demand, cadd, kadd, elo, s0, out)
    return rows


def _pruned_keep(alo, ahi, elo, g, weigh, pos, w):
    """:func:`pruned_screen`'s rows over one sub-block from bounds of every start's amounts
    (``alo`` below, ``ahi`` above, (n, m)): the kept rows, and the dropped ones' answers to
    the minimums (``cadd[i]`` of them meet minimum ``i``, ``kadd`` every minimum)."""
    n = alo.shape[0]
    always = np.all(alo >= elo, axis=1)
    never = ~always & np.all((alo >= elo) | (ahi < elo), axis=1)
    drop = never.copy()
    if always.sum() >= g:
        ea = np.flatnonzero(always)
        lb = -np.partition(-alo[ea], g - 1, axis=0)[g - 1]
        above = np.any(ahi >= lb, axis=1)
        if weigh:
            x, xh, mg, mh = (np.zeros(n) for _ in range(4))
            for i in pos:
                al, ah = alo[:, i], ahi[:, i]
                x = x + al * w[i]
                xh = xh + ah * w[i]
                mg = mg + np.where(al > 0, al, np.where(ah < 0, -ah, 0.0)) * w[i]
                mh = mh + np.where(ah > -al, ah, -al) * w[i]
            lsc = -np.partition(-x[ea], g - 1)[g - 1]
            mgl = max(0.0, float(mg[ea].max()))
            above = above | (xh >= lsc) | (mh >= mgl)
        drop |= always & ~above
    keep = np.flatnonzero(~drop)
    cadd = np.sum(drop[:, None] & (alo >= elo), axis=0)  # constant over the sub-block
    kadd = int(np.sum(drop & always))
    return keep, cadd, kadd


def _screen_kept(tk, capk, demand, cadd, kadd, elo, s0, out):
    """:func:`block_screen` over the kept rows (window maxima ``tk``, capacities ``capk``) of
    the sub-block starting at ``s0``, the dropped rows added to the counts, into ``out``."""
    code, elig, prop, value = out
    count, m = demand[2], capk.shape[1]
    part = ScreenOut(*(np.empty(tk.shape[0], dtype=x.dtype) for x in out))
    block_screen(tk, capk, demand, part)
    for s in range(tk.shape[0]):
        code[s0 + s], prop[s0 + s], value[s0 + s] = part.code[s], part.prop[s], part.value[s]
        elig[s0 + s] = part.elig[s] + kadd
        if part.code[s] == 1 or elig[s0 + s] < count:  # the counts over every node
            meet = np.sum(capk - tk[s] >= elo, axis=0) + cadd
            if elig[s0 + s] < count:
                bi = min(range(m), key=lambda i: (meet[i], i))
                code[s0 + s], prop[s0 + s], value[s0 + s] = 1, bi, float(meet[bi])


def window_screen(times, reserved, bm, B, nodes, starts, duration, cap, demand, sub, out,
                  bn=None):
    """:func:`block_screen`'s outputs over the window maxima of the rows ``nodes``
    (:func:`window_max_rows`) from those of the rows that can matter per sub-block of ``sub``
    starts (twin of the kernel's ``window_screen``, issue 40).

    Per sub-block, the amounts ``cap - tmax`` of every start are bounded: the window maxima
    are at most the maximum over the segments from the first window's to the last's, and at
    least the larger of the least over the windows of the largest amount at three of its
    segments (first, middle, last) and the maximum over the segments every window holds.
    The rows are chosen from those bounds as :func:`pruned_screen` chooses them, and
    screened with their exact window maxima. (The kernel reads the ranges' whole blocks from
    the block maxima ``bm`` of ``B`` segments: the same values, and first chooses among every
    row from coarser bounds, the blocks' maxima and minima ``bn`` (when given): the same rows
    in the end; here ``bm`` and ``bn`` are only checked.)

    Parameters
    ----------
    times, reserved, bm, B, nodes, starts, duration
        As for :func:`window_max_blocks` (IN; ``starts`` non-decreasing).
    cap, demand, sub, out
        As for :func:`pruned_screen` (``cap``: the rows ``nodes``; IN and OUT).

    Returns
    -------
    int
        The rows screened, summed over the sub-blocks (at least :func:`pruned_screen`'s).
    """
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    bm = np.asarray(bm, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    S, n, m, K = starts.shape[0], nodes.shape[0], reserved.shape[1], times.shape[0]
    if reserved.shape[2] != K:
        raise ValueError("reserved must have one column per breakpoint of times")
    if B < 1:
        raise ValueError("B must be >= 1")
    nblk = -(-K // B)
    if bm.shape != (reserved.shape[0], m, nblk):
        raise ValueError("block maxima must be (N, m, ceil(K / B))")
    if bn is not None and np.shape(bn) != (reserved.shape[0], m, nblk):
        raise ValueError("block minima must be (N, m, ceil(K / B))")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nodes, reserved.shape[0], starts)
    if cap.shape != (n, m):
        raise ValueError("cap must be (n, m), e and d of length m")
    if sub < 1:
        raise ValueError("sub must be >= 1")
    e, d, count, tol = demand
    code, elig, prop, value = out
    tl = _tol(tol, m)
    _outs(S, code, elig, prop, value)
    code[:], elig[:], prop[:], value[:] = 0, 0, -1, 0.0
    if S == 0 or n == 0 or m == 0:
        return 0
    d = np.asarray(d, dtype=np.float64)
    elo = np.asarray(e, dtype=np.float64) - tl
    pos = [i for i in range(m) if d[i] > 0]
    weigh = len(pos) > 0 and count >= 1 and n >= count
    w = [(1.0 / len(pos)) / float(d[i]) if d[i] > 0 else 0.0 for i in range(m)]
    g = count + count // 2 + 1
    # each start's window: segments k0 (the one holding it) to k1 (exclusive, >= k0 + 1)
    k0 = np.maximum(np.searchsorted(times, starts, side="right") - 1, 0)
    k1 = np.maximum(np.searchsorted(times, starts + duration, side="left"), k0 + 1)
    rn = reserved[nodes]
    subs = []
    for s0 in range(0, S, sub):
        s1 = min(s0 + sub, S)
        hi = rn[:, :, k0[s0] : k1[s1 - 1]].max(axis=2)  # every window lies in these
        w0, w1 = k0[s0:s1], k1[s0:s1] - 1  # each window's first and last segments
        lo = np.maximum(np.maximum(rn[:, :, w0], rn[:, :, (w0 + w1) // 2]),
                        rn[:, :, w1]).min(axis=2)  # fmt: skip
        if k0[s1 - 1] < k1[s0]:  # the segments every window holds
            lo = np.maximum(lo, rn[:, :, k0[s1 - 1] : k1[s0]].max(axis=2))
        subs.append((s0, s1) + _pruned_keep(cap - hi, cap - lo, elo, g, weigh, pos, w))
    union = np.unique(np.concatenate([x[2] for x in subs]))
    tmax = np.empty((S, union.size, m))  # the kept rows' window maxima (exact: any rows)
    window_max_rows(times, reserved, nodes[union], starts, duration, tmax)
    rows = 0
    for s0, s1, keep, cadd, kadd in subs:
        rows += keep.size
        at = np.searchsorted(union, keep)
        _screen_kept(tmax[s0:s1, at], cap[keep], demand, cadd, kadd, elo, s0, out)
    return rows


def _sums(x, rows):
    m = x.shape[1]
    s = [0.0] * m
    for r in rows:
        for i in range(m):
            s[i] = s[i] + float(x[r, i])
    return s


def select_and_swap(avail, tmax, cap, d, l1, seed, tol, sel, deadline=None):
    """SelectAndSwap of Phase IV over the available resources (rows of ``avail``).

    Parameters
    ----------
    avail, tmax, cap : ndarray, shape (r, m)
        IN: ``a_ij^t``, ``T_ij^t`` and ``p_ij`` of the available resources ``R_a``.
    d : ndarray, shape (m,)
        IN: totals ``d_i``.
    l1 : int
        IN: ``L_1``: at most ``N L_1`` swap attempts.
    seed : int
        IN: 64-bit seed of the xoshiro256** stream.
    tol : ndarray, shape (m,)
        IN: the tolerance ``tau_i`` (zeros: none).
    sel : ndarray of int64, shape (N,)
        OUT: rows of the selected set ``R_s`` (in selection order); ``N = len(sel)``,
        ``1 <= N <= r``.

    Returns
    -------
    ok : bool
        Whether every total is met (``sum a_ij >= d_i``).
    attempts : int
        Swap attempts made (``c - 1``).
    """
    avail = np.asarray(avail, dtype=np.float64)
    tmax = np.asarray(tmax, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    r, m = avail.shape
    count = sel.shape[0]
    if count < 1 or count > r or m < 1:
        raise ValueError("select_and_swap needs 1 <= len(sel) <= rows and at least one property")
    out_sel = sel
    dl = _dlo(d, tol, count)
    rng = Xoshiro256(seed)
    in_a = [True] * r
    sel = []
    for k in range(count):
        p = k % m
        best = None
        for j in range(r):
            if in_a[j] and (best is None or avail[j, p] > best):
                best = float(avail[j, p])
        ties = [j for j in range(r) if in_a[j] and avail[j, p] == best]
        pick = ties[rng.below(len(ties))]
        sel.append(pick)
        in_a[pick] = False
    sa, st, sp = _sums(avail, sel), _sums(tmax, sel), _sums(cap, sel)
    n_a = r - count
    c, mm = 1, 0
    limit = count * l1
    while any(sa[i] < dl[i] for i in range(m)) and c <= limit and mm < n_a:
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        mm += 1
        k = 0
        util = [(d[i] + st[i]) / sp[i] if sp[i] > 0 else np.inf for i in range(m)]
        top = max(util)
        props = [i for i in range(m) if util[i] == top]
        v = props[rng.below(len(props))]
        order = sorted((j for j in range(r) if in_a[j]), key=lambda j: (-avail[j, v], j))
        rm = order[mm - 1]
        perm = list(range(count))
        for q in range(count - 1, 0, -1):
            w = rng.below(q + 1)
            perm[q], perm[w] = perm[w], perm[q]
        while True:
            out = sel[perm[k]]
            new = [(sa[i] - avail[out, i]) + avail[rm, i] for i in range(m)]
            canswap = all(new[i] >= (sa[i] if sa[i] < dl[i] else dl[i]) for i in range(m))
            if canswap:
                sel[perm[k]] = rm
                in_a[rm] = False
                in_a[out] = True
                sa = new
                st = [(st[i] - tmax[out, i]) + tmax[rm, i] for i in range(m)]
                sp = [(sp[i] - cap[out, i]) + cap[rm, i] for i in range(m)]
                mm = 0
            k += 1
            c += 1
            if not (k < count and c <= limit and not canswap):
                break
    ok = all(sa[i] >= dl[i] for i in range(m))
    out_sel[:] = sel
    return bool(ok), c - 1


def _factor(d, st, sp):
    u = 1.0
    for i in range(len(d)):
        if sp[i] > 0:  # a property the set has none of counts 1 (0/0: no NaN)
            u = u * ((d[i] + st[i]) / sp[i])
    return u


def _swap_args(avail, tmax, cap, d, tol, sel, kernel):
    """The arguments of a swap kernel (:func:`phase5`, :func:`swap_search`): the arrays as
    float64, the set as a list of rows (``1 <= N <= rows``, else a ``ValueError`` naming
    ``kernel``) and the totals less their tolerance."""
    avail = np.asarray(avail, dtype=np.float64)
    rows = [int(j) for j in sel]
    if not 1 <= len(rows) <= avail.shape[0]:
        raise ValueError(f"{kernel} needs 1 <= len(sel) <= rows")
    d = np.asarray(d, dtype=np.float64)
    return (avail, np.asarray(tmax, dtype=np.float64), np.asarray(cap, dtype=np.float64), d,
            rows, _dlo(d, tol, len(rows)))  # fmt: skip


def phase5(avail, tmax, cap, d, l2, seed, tol, sel, deadline=None):
    """Phase V: ``N L_2`` random swaps between ``R_s`` and ``R_a``, kept when admissible and
    the estimated utilisation factor does not decrease.

    Parameters
    ----------
    avail, tmax, cap : ndarray, shape (r, m)
        IN: all available resources (``R_s`` and ``R_a``).
    d : ndarray, shape (m,)
        IN.
    l2 : int
        IN.
    seed : int
        IN.
    tol : ndarray, shape (m,)
        IN: the tolerance ``tau_i`` (zeros: none).
    sel : ndarray of int64, shape (N,)
        INOUT: the admissible set from Phase IV (rows) -> the set after the swaps.

    Returns
    -------
    accepted : int
        Swaps accepted.
    """
    out_sel = sel
    avail, tmax, cap, d, sel, dl = _swap_args(avail, tmax, cap, d, tol, sel, "phase5")
    r, m = avail.shape
    count = len(sel)
    chosen = set(sel)
    rest = [j for j in range(r) if j not in chosen]
    accepted = 0
    if not rest:
        return 0
    rng = Xoshiro256(seed)
    sa, st, sp = _sums(avail, sel), _sums(tmax, sel), _sums(cap, sel)
    cur = _factor(d, st, sp)
    for _ in range(count * l2):
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        ps = rng.below(count)
        pa = rng.below(len(rest))
        out, inn = sel[ps], rest[pa]
        na = [(sa[i] - avail[out, i]) + avail[inn, i] for i in range(m)]
        if not all(na[i] >= dl[i] for i in range(m)):
            continue
        nt = [(st[i] - tmax[out, i]) + tmax[inn, i] for i in range(m)]
        np_ = [(sp[i] - cap[out, i]) + cap[inn, i] for i in range(m)]
        f = _factor(d, nt, np_)
        if f >= cur:
            sel[ps], rest[pa] = inn, out
            sa, st, sp, cur = na, nt, np_, f
            accepted += 1
    out_sel[:] = sel
    return accepted


def _deficit(d, dl, sa):
    f = 0.0
    for i in range(len(d)):
        if sa[i] < dl[i]:
            f = f + (sa[i] - d[i]) / (d[i] if d[i] > 0 else 1.0)
    return f


def swap_search(avail, tmax, cap, d, max_rounds, tol, sel, deadline=None):
    """Deterministic best-improvement swap search (the default method's Phase IV-V).

    Each round tries every swap of a selected row with an unselected one and applies the
    best: while a total is unmet, the one that most reduces the summed relative deficit
    ``sum_i min(0, s_i - d_i) / d_i``; once every total is met, the admissible swap that most
    increases the estimated utilisation factor. Ties go to the first swap found (selected
    position ascending, then unselected row ascending). Stops when no swap improves or after
    ``max_rounds`` rounds.

    Parameters
    ----------
    avail, tmax, cap : ndarray, shape (r, m)
        IN.
    d : ndarray, shape (m,)
        IN: totals (> 0).
    max_rounds : int
        IN.
    tol : ndarray, shape (m,)
        IN: the tolerance ``tau_i`` (zeros: none).
    sel : ndarray of int64, shape (N,)
        INOUT: starting rows -> the rows after the swaps.

    Returns
    -------
    rounds : int
        Swaps applied.
    """
    out_sel = sel
    avail, tmax, cap, d, sel, dl = _swap_args(avail, tmax, cap, d, tol, sel, "swap_search")
    r, m = avail.shape
    count = len(sel)
    chosen = [False] * r
    for j in sel:
        chosen[j] = True
    sa, st, sp = _sums(avail, sel), _sums(tmax, sel), _sums(cap, sel)
    rounds = 0
    while rounds < max_rounds:
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        deficit = _deficit(d, dl, sa)
        feasible = deficit == 0.0
        cur = _factor(d, st, sp) if feasible else deficit
        best, bp, bq = cur, -1, -1
        for p in range(count):
            out = sel[p]
            for q in range(r):
                if chosen[q]:
                    continue
                na = [(sa[i] - avail[out, i]) + avail[q, i] for i in range(m)]
                nd = _deficit(d, dl, na)
                if feasible:
                    if nd != 0.0:
                        continue
                    nt = [(st[i] - tmax[out, i]) + tmax[q, i] for i in range(m)]
                    np_ = [(sp[i] - cap[out, i]) + cap[q, i] for i in range(m)]
                    val = _factor(d, nt, np_)
                else:
                    val = nd
                if val > best:
                    best, bp, bq = val, p, q
        if bp < 0:
            break
        out = sel[bp]
        sa = [(sa[i] - avail[out, i]) + avail[bq, i] for i in range(m)]
        st = [(st[i] - tmax[out, i]) + tmax[bq, i] for i in range(m)]
        sp = [(sp[i] - cap[out, i]) + cap[bq, i] for i in range(m)]
        chosen[out] = False
        chosen[bq] = True
        sel[bp] = bq
        rounds += 1
    out_sel[:] = sel
    return rounds


def scan_screen(times, reserved, nodes, cap, demand, plan, out, tmax, deadline=None):
    """The default method's screening loop (twin of the kernel's ``scan_screen``).

    Starts are taken in order, a first block of ``first_block`` starts, then blocks of
    ``max_block`` starts; for a block the window maxima of the rows ``nodes`` of ``reserved``
    are computed (as :func:`window_max`, a segment index below 0 taken as 0) and each start
    is screened (as :func:`screen`) until the first start that passes.

    Parameters
    ----------
    times, reserved, nodes, cap
        IN: the breakpoints, the reserved amounts, the rows to screen and their capacities.
    demand : Demand
        IN: as for :func:`screen` (``tol``: ``tau_i`` per property, zeros: none).
    plan : ScanPlan
        IN: :class:`coalloc.collective.core.ScanPlan`: the ``starts``, the ``duration``, and
        the ``first_block`` and ``max_block`` sizes.
    out : ScreenOut
        OUT: the screen outputs for starts ``0 .. stop`` (code, elig, prop: 0, 0, -1 after
        it; value: 0 after it).
    tmax : ndarray of float64, shape (len(nodes), m)
        OUT: window maxima at ``starts[stop]`` (zeros when ``stop == S``).

    Returns
    -------
    stop : int
        Index of the first start that passes (``S`` if none).
    """
    e, d, count, tol = demand
    starts, duration, first_block, max_block = plan
    code, elig, prop, value = out
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    e = np.asarray(e, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    S, n, m = starts.shape[0], nodes.shape[0], reserved.shape[1]
    if cap.shape != (n, m) or e.shape != (m,) or d.shape != (m,):
        raise ValueError("cap must be (len(nodes), m), e and d of length m")
    if first_block < 1 or max_block < first_block:
        raise ValueError("need 1 <= first_block <= max_block")
    _check_rows(nodes, reserved.shape[0], None)
    _tol(tol, m)
    _outs(S, code, elig, prop, value)
    if tmax.shape != (n, m):
        raise ValueError("tmax out must be (len(nodes), m)")
    code[:], elig[:], prop[:], value[:], tmax[:] = 0, 0, -1, 0.0, 0.0
    one = ScreenOut(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64),
                    np.zeros(1, dtype=np.int64), np.zeros(1))  # fmt: skip
    c, el, pr, va = one
    sub = reserved[nodes]
    b0, B = 0, first_block
    while b0 < S:
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        b1 = min(S, b0 + B)
        block = np.empty((b1 - b0, n, m))
        for s in range(b0, b1):
            k0 = max(int(np.searchsorted(times, starts[s], side="right")) - 1, 0)
            k1 = int(np.searchsorted(times, starts[s] + duration, side="left"))
            block[s - b0] = sub[:, :, k0 : max(k1, k0 + 1)].max(axis=2)
        for s in range(b0, b1):
            screen(block[s - b0 : s - b0 + 1], cap, demand, one)
            code[s], elig[s], prop[s], value[s] = c[0], el[0], pr[0], va[0]
            if c[0] == 0:
                tmax[:] = block[s - b0]
                return s
        b0, B = b1, max_block
    return S


def decrease_starts(times, reserved, nodes, lo, hi, out):
    """``lo`` and the breakpoints ``times[k]`` in ``(lo, hi]`` where a reserved amount of a row
    in ``nodes`` falls (``reserved[j, i, k] < reserved[j, i, k - 1]``), ascending (twin of the
    kernel's ``decrease_starts``).

    ``times``, ``reserved``, ``nodes``, ``lo``, ``hi`` are IN; ``out`` (float64, shape
    ``(len(times) + 1,)``) is OUT: the starts go to ``out[:c]``. Returns ``c``."""
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    if reserved.shape[2] != times.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    _check_rows(nodes, reserved.shape[0], None)
    if out.shape != (times.shape[0] + 1,):
        raise ValueError("out must have len(times) + 1 entries")
    got = [float(lo)]
    if nodes.size and times.shape[0] > 1:
        sub = reserved[nodes]
        drop = np.any(sub[:, :, 1:] < sub[:, :, :-1], axis=(0, 1))
        t = times[np.flatnonzero(drop) + 1]
        got.extend(t[(t > lo) & (t <= hi)].tolist())
    out[: len(got)] = got
    return len(got)


def window_max_rows(times, reserved, nodes, starts, duration, out):
    """``out[s, jj, i]``: the maximum of ``reserved[nodes[jj], i]`` over the segments meeting
    ``[starts[s], starts[s] + duration)`` (twin of the kernel's ``window_max_rows``, which
    runs one monotone deque per row; here one NumPy reduction per start).

    ``times``, ``reserved``, ``nodes`` and ``starts`` (non-decreasing) are IN; ``out``
    (float64, shape ``(len(starts), len(nodes), m)``) is OUT. The window of a start is the
    segment holding it (segment 0 before the first breakpoint) to the last segment starting
    before its end, at least one segment.
    """
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.float64)
    S, n, m = starts.shape[0], nodes.shape[0], reserved.shape[1]
    if reserved.shape[2] != times.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    if out.shape != (S, n, m):
        raise ValueError("out must be (len(starts), len(nodes), m)")
    if S and times.shape[0] == 0:
        raise ValueError("times must not be empty")
    _check_rows(nodes, reserved.shape[0], starts)
    if S == 0 or n == 0 or m == 0:
        return
    for s in range(S):
        interrupt.check()  # the compiled kernel's poll (twin)
        k0 = max(int(np.searchsorted(times, starts[s], side="right")) - 1, 0)
        k1 = int(np.searchsorted(times, starts[s] + duration, side="left"))
        out[s] = reserved[nodes, :, k0 : max(k1, k0 + 1)].max(axis=2)


def block_maxima(reserved, B, out=None):
    """``bm[j, i, b]``: the maximum of ``reserved[j, i]`` over segments ``b B .. (b + 1) B - 1``
    (the last block may be shorter): what :func:`window_max_blocks` reads (twin of the
    kernel's ``block_maxima``).

    ``reserved`` (``(N, m, K)``) and ``B`` (>= 1) are IN; ``out`` (float64,
    ``(N, m, ceil(K / B))``) is OUT, allocated when None; returns ``out``.
    """
    return _block_ext(reserved, B, out, np.max)


def block_minima(reserved, B, out=None):
    """``bn[j, i, b]``: the minimum of ``reserved[j, i]`` over segments ``b B .. (b + 1) B - 1``
    (twin of the kernel's ``block_minima``; arguments as :func:`block_maxima`)."""
    return _block_ext(reserved, B, out, np.min)


def _block_ext(reserved, B, out, reduce):
    reserved = np.asarray(reserved, dtype=np.float64)
    if int(B) < 1:
        raise ValueError("B must be >= 1")
    n, m, K = reserved.shape
    nb = -(-K // B)
    if out is None:
        out = np.empty((n, m, nb))
    elif out.shape != (n, m, nb):
        raise ValueError("out must be (N, m, ceil(K / B))")
    full = K // B
    if full:
        out[:, :, :full] = reduce(reserved[:, :, : full * B].reshape(n, m, full, B), axis=3)
    if K > full * B:
        out[:, :, full] = reduce(reserved[:, :, full * B :], axis=2)
    return out


def window_max_blocks(times, reserved, bm, B, nodes, starts, duration, out):
    """``out[s, jj, i]``: the window maxima of the rows ``nodes`` (twin of the kernel's
    ``window_max_blocks``, which reads the whole blocks from ``bm``; here one NumPy
    reduction per start over the segments: the maximum is the same in any order).

    ``times``, ``reserved``, ``bm`` (``block_maxima(reserved, B)``), ``B``, ``nodes``,
    ``starts`` are IN; ``out`` (float64, ``(len(starts), len(nodes), m)``) is OUT.
    """
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    bm = np.asarray(bm, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.float64)
    S, n, m, K = starts.shape[0], nodes.shape[0], reserved.shape[1], reserved.shape[2]
    if K != times.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    if B < 1:
        raise ValueError("B must be >= 1")
    if bm.shape != (reserved.shape[0], m, -(-K // B)):
        raise ValueError("block maxima must be (N, m, ceil(K / B))")
    if out.shape != (S, n, m):
        raise ValueError("out must be (len(starts), len(nodes), m)")
    if S and K == 0:
        raise ValueError("times must not be empty")
    _check_rows(nodes, reserved.shape[0], None)
    if S == 0 or n == 0 or m == 0:
        return
    for s in range(S):
        interrupt.check()  # the compiled kernel's poll (twin)
        k0 = max(int(np.searchsorted(times, starts[s], side="right")) - 1, 0)
        k1 = int(np.searchsorted(times, starts[s] + duration, side="left"))
        out[s] = reserved[nodes, :, k0 : max(k1, k0 + 1)].max(axis=2)


#: bound_screen's thresholds: ranks ``count * pct // (100 stride)`` of the sampled amounts.
_BOUND_PCT = (60, 70, 85, 100, 115, 130, 150)


def _bound_thresholds(a0, elo, count, stride):
    """bound_screen's thresholds (m, K) from the sampled rows' amounts ``a0`` (ns, m) at a
    group's first start: the r_k-th largest eligible amount per property (+inf: none)."""
    ok = np.all(a0 >= elo, axis=1)
    m, kk = a0.shape[1], len(_BOUND_PCT)
    out = np.full((m, kk), np.inf)
    c = int(ok.sum())
    if c == 0:
        return out
    for i in range(m):
        v = np.sort(a0[ok, i])[::-1]
        for k, pc in enumerate(_BOUND_PCT):
            r = min(max((count * pc) // (100 * stride), 1), c)
            out[i, k] = v[r - 1]
    return out


def _bound_decide(Cs, Ss, A, ts, n, count, d, tl):
    """bound_screen's decision at one start (its counts ``Cs``, sums ``Ss`` (m, K), the bound
    ``A`` (m,) on every |amount|, thresholds ``ts`` (m, K)): ``(2, prop)`` or ``(-1, -1)``."""
    m, kk = Cs.shape
    xs, ys = [None] * m, [None] * m
    nshort = 0
    for i in range(m):
        b = next((k for k in range(kk) if Cs[i, k] >= count), kk)
        if b == kk:
            return -1, -1
        a = b - 1
        sa_, ca = (0.0, 0) if a < 0 else (float(Ss[i, a]), int(Cs[i, a]))
        ub = float(Ss[i, b]) - float(int(Cs[i, b]) - count) * float(ts[i, b])
        if a >= 0:
            ub = min(sa_ + float(count - ca) * float(ts[i, a]), ub)
        lb = sa_ + float(count - ca) * ((float(Ss[i, b]) - sa_) / float(int(Cs[i, b]) - ca))
        ap = max(float(A[i]), abs(float(ts[i, b])))
        if a >= 0:
            ap = max(ap, abs(float(ts[i, a])))
        mu = float(count + 4) * (float(n + 4) * float(n + 4)) * 8.881784197001252e-16 * ap
        x, y = ub + mu, lb - mu
        dlo = float(d[i]) - float(count) * float(tl[i])
        if x < dlo:
            xs[i], ys[i] = x, y
            nshort += 1
        elif not y >= dlo:
            return -1, -1
    short = [i for i in range(m) if xs[i] is not None]
    if not short:
        return -1, -1
    if len(short) == 1:
        return 2, short[0]
    if any(not d[i] > 0 for i in short):
        return -1, -1
    best, bestrl = -1, 0.0
    for i in short:
        rl = (float(d[i]) - xs[i]) / float(d[i])
        if best < 0 or rl > bestrl:
            best, bestrl = i, rl
    for j in short:
        if j != best and not bestrl > (float(d[j]) - ys[j]) / float(d[j]):
            return -1, -1
    return 2, best


def bound_screen(times, reserved, nodes, starts, duration, cap, demand, stride, group, out,
                 bm=None, bn=None, B=1):
    """block_screen's code and property at the starts the bounds decide (twin of the
    kernel's ``bound_screen``, issue 40, h53coll; see its docstring for the bounds).

    Every start gets ``elig`` (exact); ``code`` 1 (exact, as block_screen's), 2 (a total
    proven missed; ``prop`` as block_screen's, ``value`` NaN) or -1 (undecided: ``prop``
    -1, ``value`` 0).

    Parameters
    ----------
    times, reserved, nodes, starts, duration
        As for :func:`window_max_rows` (IN; ``starts`` non-decreasing).
    cap, demand, out
        As for :func:`block_screen` (``cap``: the rows ``nodes``; IN and OUT).
    stride, group : int
        IN: every ``stride``-th row sampled for the thresholds, one set of thresholds per
        ``group`` starts (from the group's first start); both >= 1.
    bm, bn, B : optional
        IN: the block maxima and minima of ``B`` segments (as :func:`window_screen` takes
        them): the rows' bounds over the windows' segments from the blocks meeting them
        (looser, fewer reads), else from the amounts.

    Returns
    -------
    int
        The starts decided (codes 1 and 2).
    """
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.float64)
    cap = np.asarray(cap, dtype=np.float64)
    S, n, m = starts.shape[0], nodes.shape[0], reserved.shape[1]
    if reserved.shape[2] != times.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    if S and times.shape[0] == 0:
        raise ValueError("times must not be empty")
    _check_rows(nodes, reserved.shape[0], starts)
    if cap.shape != (n, m):
        raise ValueError("cap must be (n, m), e and d of length m")
    if stride < 1 or group < 1:
        raise ValueError("stride and group must be >= 1")
    e, d, count, tol = demand
    code, elig, prop, value = out
    tl = _tol(tol, m)
    _outs(S, code, elig, prop, value)
    code[:], elig[:], prop[:], value[:] = 0, 0, -1, 0.0
    if S == 0 or n == 0 or m == 0:
        return 0
    d = np.asarray(d, dtype=np.float64)
    elo = np.asarray(e, dtype=np.float64) - tl
    tm = np.empty((S, n, m))
    window_max_rows(times, reserved, nodes, starts, duration, tm)
    a = cap[None] - tm  # (S, n, m): the amounts, the kernel's doubles
    kk = len(_BOUND_PCT)
    ts = np.empty((S, m, kk))
    for s0 in range(0, S, group):
        ts[s0 : s0 + group] = _bound_thresholds(a[s0, ::stride], elo, count, stride)
    okm = a >= elo  # (S, n, m)
    ok = np.all(okm, axis=2)
    meet = okm.sum(axis=1)
    # the largest |amount| bound per property: every row's least and largest amount over the
    # segments of every window (the kernel's, which skips rows those bounds settle)
    k0 = np.maximum(np.searchsorted(times, starts, side="right") - 1, 0)
    k1 = np.maximum(np.searchsorted(times, starts + duration, side="left"), k0 + 1)
    if (bm is None) != (bn is None):
        raise ValueError("bm and bn go together")
    if B < 1:
        raise ValueError("B must be >= 1")
    if bm is None:
        span = reserved[nodes][:, :, k0.min() : k1.max()]
        lo, hi = span.min(axis=2), span.max(axis=2)
    else:
        nblk = -(-times.shape[0] // B)
        if np.shape(bm) != (reserved.shape[0], m, nblk) or np.shape(bn) != np.shape(bm):
            raise ValueError("block extrema must be (N, m, ceil(K / B))")
        c0, c1 = k0.min() // B, (k1.max() - 1) // B + 1
        lo = np.asarray(bn, dtype=np.float64)[nodes][:, :, c0:c1].min(axis=2)
        hi = np.asarray(bm, dtype=np.float64)[nodes][:, :, c0:c1].max(axis=2)
    A = np.maximum(np.abs(cap - lo), np.abs(cap - hi))
    A = np.maximum(A.max(axis=0), 0.0)  # (m,)
    C = np.zeros((S, m, kk), dtype=np.int64)
    Ss = np.zeros((S, m, kk))
    for j in range(n):  # rows in order: the kernel's sums
        x = a[:, j, :, None]
        hit = ok[:, j, None, None] & (x >= ts)
        C += hit
        Ss = Ss + np.where(hit, x, 0.0)
    decided = 0
    for s in range(S):
        elig[s] = int(ok[s].sum())
        if elig[s] < count:
            bi = min(range(m), key=lambda i: (meet[s, i], i))
            code[s], prop[s], value[s] = 1, bi, float(meet[s, bi])
            decided += 1
            continue
        code[s], prop[s] = _bound_decide(C[s], Ss[s], A, ts[s], n, count, d, tl)
        if code[s] == 2:
            value[s] = np.nan
            decided += 1
    return decided


def min_counts(times, reserved, nodes, starts, duration, cap, e, tol, elig, meet):
    """The minimum screen's counts (twin of the kernel's ``min_counts``, issue 40, h55coll):
    ``elig[s]``, the rows ``nodes`` whose every property meets its minimum at ``starts[s]``
    (``cap - T >= e - tol``, ``T`` the window maxima of :func:`window_max_rows`), and
    ``meet[s, i]``, the rows meeting minimum ``i`` (:func:`block_screen`'s eligible count and
    its per-property counts). Here from the window maxima themselves; the kernel keeps per
    row and property the last segment that misses the minimum (the same counts).

    ``times``, ``reserved``, ``nodes``, ``starts`` (non-decreasing) and ``duration`` as for
    :func:`window_max_rows`, ``cap`` (``(len(nodes), m)``), ``e`` and ``tol`` (``(m,)``) are
    IN; ``elig`` (int64, ``(len(starts),)``) and ``meet`` (int64, ``(len(starts), m)``) OUT.
    """
    times = np.asarray(times, dtype=np.float64)
    reserved = np.asarray(reserved, dtype=np.float64)
    nodes = np.asarray(nodes, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.float64)
    cap, e = np.asarray(cap, dtype=np.float64), np.asarray(e, dtype=np.float64)
    tol = np.asarray(tol, dtype=np.float64)
    S, n, m = starts.shape[0], nodes.shape[0], reserved.shape[1]
    if reserved.shape[2] != times.shape[0]:
        raise ValueError("reserved must have one column per breakpoint of times")
    if cap.shape != (n, m) or e.shape != (m,) or tol.shape != (m,):
        raise ValueError("cap must be (len(nodes), m), e and tol of length m")
    if elig.shape != (S,) or meet.shape != (S, m):
        raise ValueError("elig must be (len(starts),) and meet (len(starts), m)")
    if S and times.shape[0] == 0:
        raise ValueError("times must not be empty")
    _check_rows(nodes, reserved.shape[0], starts)
    elig[:], meet[:] = 0, 0
    if S == 0 or n == 0 or m == 0:
        return
    tmax = np.empty((S, n, m))
    window_max_rows(times, reserved, nodes, starts, duration, tmax)
    good = cap[None] - tmax >= e - tol
    meet[:] = good.sum(axis=1)
    elig[:] = good.all(axis=2).sum(axis=1)
