"""Issue 40, fourth collective pass: the pruned screen per sub-block, orchestrated in NumPy.

For the ``reject`` requests of ``bench.collective.scale`` (10,000 nodes, 7 days of 5-minute
slots), the candidate starts after the first nine are screened two ways:

* ``full``: as ``scan`` does, ``window_max_rows`` then ``block_screen`` over every matching
  node, in blocks of ``--block`` starts;
* ``pruned``: per sub-block of ``--sub`` starts, cheap bounds on ``tm`` per node (above: the
  pool's block maxima over the span; below: the larger of the smallest amount at the starts'
  own segments and the largest over the segments every window holds), then the window maxima
  and ``block_screen`` over the kept rows only.  A node is kept when its eligibility is not
  settled for the whole sub-block, or when its upper bound on some property's amount (or on
  the equal weights' score, or on the margin's ``sum |a| w``) reaches the ``N + N // 2 + 1``-th
  largest lower bound among the nodes eligible at every start.  The eligible count adds the
  dropped nodes settled eligible.  A sub-block falls back to the full path when a start gets
  code 1 or fewer kept eligible nodes than ``N + N // 2 + 1``; a start that passes gets its
  maxima over every node again (one ``window_max_rows`` call), as ``scan`` would hand them on.

Every sub-block's codes, eligible counts, properties and values are compared with the full
path's (the referee); any difference raises.  It prints the CPU time of each path per request.

Run:  PYTHONPATH=src:. python -m bench.collective.issue40_pruned_screen [--pool-seeds 2030]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench.collective.scale import reject_requests
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count as _count
from coalloc.collective.core import Problem, kernels
from coalloc.collective.generators import table1_pool
from coalloc.collective.model.pool import BLOCK


def full(ker, times, res, nodes, cap, b, dur, e, d, n, tol, block):
    """The codes, eligible counts, properties and values of ``scan``'s screens."""
    out = []
    for p in range(0, b.size, block):
        tm = ker.window_max_rows(times, res, nodes, b[p : p + block], dur)
        out.append(ker.block_screen(tm, cap, e, d, n, tol=tol))
    return [np.concatenate(x) for x in zip(*out)]


def bounds_all(times, bt, nt, nodes, cap, b, dur, e, d, n, tol, sub):
    """``(keep, sure)`` of shape (sub-blocks, nodes) for every sub-block at once (the same
    bounds and rule as :func:`pruned` with ``bt``/``nt``, in fewer, larger NumPy passes)."""
    rank = n + n // 2 + 1
    k_pos = d > 0
    kk = max(int(k_pos.sum()), 1)
    w = np.where(k_pos, 1.0 / kk / np.where(k_pos, d, 1.0), 0.0)
    first, last = b[::sub], b[np.minimum(np.arange(0, b.size, sub) + sub, b.size) - 1]
    k0 = np.maximum(np.searchsorted(times, first, side="right") - 1, 0)
    k1 = np.maximum(np.searchsorted(times, last + dur, side="left"), k0 + 1)
    ka = np.maximum(np.searchsorted(times, first, side="right") - 1, 0)  # first start's segment
    kz = np.maximum(np.searchsorted(times, last, side="right") - 1, 0)  # last start's segment
    k2 = np.searchsorted(times, first + dur, side="left")
    nb = bt.shape[0]
    btp = np.concatenate([bt, bt[-1:]])  # reduceat needs every index inside the array
    ntp = np.concatenate([nt, nt[-1:]])

    def over(arr, ufunc, lo, hi):
        idx = np.empty(2 * lo.size, np.intp)
        idx[0::2], idx[1::2] = lo, np.minimum(hi, nb)
        return ufunc.reduceat(arr, idx, axis=0)[0::2][:, nodes]

    chi = over(btp, np.maximum, k0 // BLOCK, (k1 - 1) // BLOCK + 1)
    clo = over(ntp, np.minimum, ka // BLOCK, kz // BLOCK + 1)
    j0, j1 = -(-kz // BLOCK), k2 // BLOCK
    inner = j1 > j0
    if inner.any():
        got = over(btp, np.maximum, np.where(inner, j0, 0), np.where(inner, j1, 1))
        clo = np.where(inner[:, None, None], np.maximum(clo, got), clo)
    alo, ahi = cap - chi, cap - clo
    floor = e - tol
    sure = (alo >= floor).all(2)
    keep = ~(sure | (ahi < floor).any(2))
    enough = sure.sum(1) >= rank
    keep |= sure & ~enough[:, None]
    sel = sure & enough[:, None]
    cols = [alo[:, :, i] for i in range(cap.shape[1])] + [alo @ w]
    ups = [ahi[:, :, i] for i in range(cap.shape[1])] + [ahi @ w]
    for lo_v, hi_v in zip(cols, ups):
        lo_v = np.where(sure, lo_v, -np.inf)
        thr = np.partition(lo_v, -rank, axis=1)[:, -rank]
        keep |= sel & (hi_v >= thr[:, None])
    low = np.where(sure, np.maximum(np.maximum(alo, -ahi), 0.0) @ w, -np.inf).max(1)
    keep |= sel & (np.maximum(np.abs(alo), np.abs(ahi)) @ w >= low[:, None])
    return keep, sure


def bounds(times, res, bm, bt, nt, nodes, cap, s, dur, e, d, n, tol):
    """``(keep, sure)`` per node for the sub-block of starts ``s`` (see the module's text)."""
    rank = n + n // 2 + 1
    m = cap.shape[1]
    k_pos = d > 0
    kk = max(int(k_pos.sum()), 1)
    w = np.where(k_pos, 1.0 / kk / np.where(k_pos, d, 1.0), 0.0)
    floor = e - tol
    k0 = max(int(np.searchsorted(times, s[0], side="right")) - 1, 0)
    k1 = max(int(np.searchsorted(times, s[-1] + dur, side="left")), k0 + 1)
    ks = np.maximum(np.searchsorted(times, s, side="right") - 1, 0)
    k2 = int(np.searchsorted(times, s[0] + dur, side="left"))
    if bt is None:  # the pool's layout: (nodes, m, segments)
        chi = bm[:, :, k0 // BLOCK : (k1 - 1) // BLOCK + 1].max(2)[nodes]
        clo = res[:, :, ks].min(2)[nodes]
    else:  # block maxima and minima laid out (blocks, nodes, m): contiguous reads
        chi = bt[k0 // BLOCK : (k1 - 1) // BLOCK + 1].max(0)[nodes]
        clo = nt[ks[0] // BLOCK : ks[-1] // BLOCK + 1].min(0)[nodes]
    # every window holds the segments ks[-1] .. k2 - 1; the pool's blocks wholly inside
    # them give a max over some of them, still a lower bound on every window's maximum
    j0, j1 = -(-int(ks[-1]) // BLOCK), k2 // BLOCK
    if j1 > j0:
        inner = bm[:, :, j0:j1].max(2) if bt is None else bt[j0:j1].max(0)
        clo = np.maximum(clo, inner[nodes])
    alo, ahi = cap - chi, cap - clo  # bounds on the amounts a = cap - tm
    sure = (alo >= floor).all(1)  # eligible at every start
    never = (ahi < floor).any(1)  # eligible at no start
    keep = ~(sure | never)
    if sure.sum() >= rank:
        for i in range(m):
            thr = np.partition(alo[sure, i], -rank)[-rank]
            keep |= sure & (ahi[:, i] >= thr)
        thr = np.partition(alo[sure] @ w, -rank)[-rank]
        keep |= sure & (ahi @ w >= thr)
        low = (np.maximum(np.maximum(alo, -ahi), 0.0)[sure] @ w).max()
        keep |= sure & (np.maximum(np.abs(alo), np.abs(ahi)) @ w >= low)
    else:
        keep |= sure
    return keep, sure


def pruned(ker, times, res, bm, nodes, cap, b, dur, e, d, n, tol, sub, stats, bt=None, nt=None,
           vectorized=False):  # fmt: skip
    """The same four arrays from the pruned screen per sub-block of ``sub`` starts."""
    rank = n + n // 2 + 1
    pre = None
    if vectorized:  # every sub-block's bounds at once
        c0 = time.process_time()
        pre = bounds_all(times, bt, nt, nodes, cap, b, dur, e, d, n, tol, sub)
        stats["bounds"] += time.process_time() - c0
    outs = []
    for p in range(0, b.size, sub):
        s = b[p : p + sub]
        c0 = time.process_time()
        if pre is not None:
            keep, sure = pre[0][p // sub], pre[1][p // sub]
        else:
            keep, sure = bounds(times, res, bm, bt, nt, nodes, cap, s, dur, e, d, n, tol)
        rows = nodes[keep]
        c1 = time.process_time()
        stats["bounds"] += c1 - c0
        dropped = int((sure & ~keep).sum())
        ok = False
        if rows.size:
            tm = ker.window_max_rows(times, res, rows, s, dur)
            code, elig, prop, val = ker.block_screen(tm, cap[keep], e, d, n, tol=tol)
            ok = not (code == 1).any() and (elig >= rank).all()
        stats["kernels"] += time.process_time() - c1
        if ok:
            elig = elig + dropped
            stats["kept"].append(rows.size)
            c2 = time.process_time()
            for q in np.flatnonzero(code == 0).tolist():  # scan hands these to the set search
                ker.window_max_rows(times, res, nodes, s[q : q + 1], dur)
            stats["passing"] += time.process_time() - c2
            outs.append((code, elig, prop, val))
        else:
            stats["fallback"] += 1
            tm = ker.window_max_rows(times, res, nodes, s, dur)
            outs.append(ker.block_screen(tm, cap, e, d, n, tol=tol))
    return [np.concatenate(x) for x in zip(*outs)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=_count(), default=10_000)
    ap.add_argument("--pool-seeds", type=_count(0), nargs="+", default=[2030])
    ap.add_argument("--counts", type=_count(), nargs="+", default=[10, 60])
    ap.add_argument("--block", type=_count(), default=128)
    ap.add_argument("--sub", type=_count(), default=8)
    ap.add_argument("--cases", type=_count(), default=3)
    ap.add_argument("--seed", type=_count(0), default=28)
    ap.add_argument(
        "--block-layout",
        action="store_true",
        help="bounds from block maxima and minima laid out (blocks, nodes, m)",
    )
    ap.add_argument(
        "--minimums",
        type=float,
        default=0.0,
        help="minimums e_i at this quantile of the matching nodes' capacities (0: the "
        "requests' own, none); exercises the eligibility bounds and the fallback",
    )
    ap.add_argument(
        "--vectorized",
        action="store_true",
        help="with --block-layout: every sub-block's bounds in one set of NumPy passes",
    )
    add_quiet(ap)
    args = ap.parse_args(argv)
    ker = kernels("compiled")
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratios = []
    for pseed in args.pool_seeds:
        pool = table1_pool(args.nodes, n_slots=288 * 7, load=(1.5, 3.5), seed=pseed)
        for n_top in bar(args.counts, desc=f"pool {pseed}", unit="N"):
            for q, req in enumerate(reject_requests(pool, n_top, args.cases, days=7,
                                                    seed=args.seed)):  # fmt: skip
                prob = Problem.of(pool, req)
                nodes = prob.matching
                cap = np.ascontiguousarray(pool.capacity[nodes])
                b = pool.candidate_starts(nodes, req.earliest_start, req.latest_start)[9:]
                times, res, bm = pool._block_maxima()
                common = (ker, times, res)
                e = prob.e
                if args.minimums > 0:
                    e = np.maximum(e, np.quantile(cap, args.minimums, axis=0))
                tail = (req.duration, e, prob.d, n_top, prob.tol)
                t0 = time.process_time()
                ref = full(*common, nodes, cap, b, *tail, args.block)
                tf = time.process_time()
                stats = {"kept": [], "fallback": 0, "bounds": 0.0, "kernels": 0.0, "passing": 0.0}
                bt = nt = None
                if args.block_layout:  # what the pool would keep up to date (not timed)
                    bt = np.ascontiguousarray(bm.transpose(2, 0, 1))
                    k = res.shape[2]
                    pad = np.pad(res, ((0, 0), (0, 0), (0, -k % BLOCK)), mode="edge")
                    mins = pad.reshape(res.shape[0], res.shape[1], -1, BLOCK).min(3)
                    nt = np.ascontiguousarray(mins.transpose(2, 0, 1))
                    if nt.shape != bt.shape:
                        raise AssertionError("block minima and maxima do not line up")
                t1 = time.process_time()
                got = pruned(*common, bm, nodes, cap, b, *tail, args.sub, stats, bt, nt,
                             args.vectorized and args.block_layout)  # fmt: skip
                t2 = time.process_time()
                for name, x, y in zip(("code", "elig", "prop", "value"), ref, got):
                    if not np.array_equal(x, y):
                        bad = np.flatnonzero(x != y)
                        raise AssertionError(f"{name} differs at {bad.size} starts: "
                                             f"{x[bad[:5]]} vs {y[bad[:5]]}")  # fmt: skip
                ratios.append((t2 - t1) / (tf - t0))
                kept = np.median(stats["kept"]) if stats["kept"] else float("nan")
                print(f"pool {pseed} N={n_top} case {q} {req.duration / 3600:g} h, "
                      f"{nodes.size} nodes, {b.size} starts, passed "
                      f"{int(((ref[0] == 0) | (ref[0] == 3)).sum())}: full "
                      f"{1e3 * (tf - t0):.1f} ms, pruned {1e3 * (t2 - t1):.1f} ms "
                      f"(bounds {1e3 * stats['bounds']:.0f}, kernels {1e3 * stats['kernels']:.0f}, "
                      f"passing starts {1e3 * stats['passing']:.0f}; "
                      f"kept median {kept:.0f}, fallbacks {stats['fallback']}), "
                      "outputs identical", flush=True)  # fmt: skip
    say(f"median ratio pruned/full {np.median(ratios):.2f}")
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
