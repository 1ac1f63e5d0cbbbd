"""Issue 40, third collective pass: how many nodes could a per-block bound prune?

For the ``reject`` requests of ``bench.collective.scale`` (10,000 nodes, 7 days of 5-minute
slots), the candidate starts after the first nine are cut into blocks of ``B`` starts. For
each block and node, the window maxima over the block's starts give an upper and a lower
bound on each available amount ``cap - tm``. A node can be among the ``N`` largest of a
property at some start of the block only if its upper bound reaches the ``N``-th largest
lower bound (no minimums here: every node is eligible at every start). It prints, per
request and block size, the median number of such nodes over the blocks:

* ``ideal``: bounds from the exact window maxima (the block's min and max of ``tm``), the
  tightest per-node bounds any pruning can use (computing them needs the maxima it would
  save, so this is a limit, not a method);
* ``span``: bounds from the largest and smallest reserved amount over every segment
  meeting a window of the block (one pass over the block's span, as cheap as the maxima);
* ``weighted``: the ideal count for the equal weights' score of the weighted proof;
* ``cheap``: bounds without a pass over the span: the pool's block maxima (``BLOCK``
  segments) over the span above, and below, per node, the smallest amount at the starts'
  own segments or the largest over the segments every window of the block holds.

Run:  PYTHONPATH=src:. python -m bench.collective.issue40_prune [--pool-seeds 2030]
"""

from __future__ import annotations

import argparse
import os

import numpy as np

from bench.collective.scale import reject_requests
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count as _count
from coalloc.collective.core import Problem, kernels
from coalloc.collective.generators import table1_pool
from coalloc.collective.model.pool import BLOCK


def survivors(pool, req, n_top, size, ker):
    """Median (ideal, span, weighted, cheap) survivors over the blocks of ``size`` starts."""
    prob = Problem.of(pool, req)
    nodes = prob.matching
    cap = np.ascontiguousarray(pool.capacity[nodes])
    starts = pool.candidate_starts(nodes, req.earliest_start, req.latest_start)
    times, res, bm = pool._block_maxima()
    d = prob.d
    k = int((d > 0).sum())
    w = np.where(d > 0, 1.0 / max(k, 1) / np.where(d > 0, d, 1.0), 0.0)
    rows = []
    for p0 in range(9, starts.size, size):
        b = starts[p0 : p0 + size]
        tm = np.asarray(ker.window_max_rows(times, res, nodes, b, req.duration))
        hi, lo = tm.max(0), tm.min(0)
        k0 = max(int(np.searchsorted(times, b[0], side="right")) - 1, 0)
        k1 = max(int(np.searchsorted(times, b[-1] + req.duration, side="left")), k0 + 1)
        seg = res[nodes][:, :, k0:k1]
        shi, slo = seg.max(2), seg.min(2)
        # cheap: the pool's block maxima over the span (tm at most that), and tm[s] at least
        # the amount at s's own segment, and at least the max over the segments that every
        # window of the block holds (when there are any)
        chi = bm[nodes][:, :, k0 // BLOCK : (k1 - 1) // BLOCK + 1].max(2)
        ks = np.maximum(np.searchsorted(times, b, side="right") - 1, 0)
        clo = res[nodes][:, :, ks].min(2)
        k2 = int(np.searchsorted(times, b[0] + req.duration, side="left"))
        if k2 > ks[-1]:
            clo = np.maximum(clo, res[nodes][:, :, ks[-1] : k2].max(2))
        if not ((clo <= lo).all() and (chi >= hi).all() and (slo <= lo).all()):
            raise AssertionError("a bound is not a bound")  # the referee: exact maxima
        ideal = np.zeros(nodes.size, bool)
        span = np.zeros(nodes.size, bool)
        cheap = np.zeros(nodes.size, bool)
        for i in range(cap.shape[1]):
            ideal |= cap[:, i] - lo[:, i] >= np.sort(cap[:, i] - hi[:, i])[-n_top]
            span |= cap[:, i] - slo[:, i] >= np.sort(cap[:, i] - shi[:, i])[-n_top]
            cheap |= cap[:, i] - clo[:, i] >= np.sort(cap[:, i] - chi[:, i])[-n_top]
        weighted = (cap - lo) @ w >= np.sort((cap - hi) @ w)[-n_top]
        rows.append((ideal.sum(), span.sum(), weighted.sum(), cheap.sum()))
    med = np.median(np.array(rows), axis=0)
    return nodes.size, starts.size, med


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=_count(), default=10_000)
    ap.add_argument("--pool-seeds", type=_count(0), nargs="+", default=[2030, 2028])
    ap.add_argument("--counts", type=_count(), nargs="+", default=[10, 60, 256])
    ap.add_argument("--blocks", type=_count(), nargs="+", default=[512, 128, 32])
    ap.add_argument("--cases", type=_count(), default=3)
    ap.add_argument("--seed", type=_count(0), default=28)
    add_quiet(ap)
    args = ap.parse_args(argv)
    ker = kernels("compiled")
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for pseed in args.pool_seeds:
        pool = table1_pool(args.nodes, n_slots=288 * 7, load=(1.5, 3.5), seed=pseed)
        for n_top in bar(args.counts, desc=f"pool {pseed}", unit="N"):
            for q, req in enumerate(reject_requests(pool, n_top, args.cases, days=7,
                                                    seed=args.seed)):  # fmt: skip
                parts = []
                for size in args.blocks:
                    n, s, med = survivors(pool, req, n_top, size, ker)
                    parts.append(f"B={size}: ideal {med[0]:.0f} span {med[1]:.0f} "
                                 f"weighted {med[2]:.0f} cheap {med[3]:.0f}")  # fmt: skip
                print(f"pool {pseed} N={n_top} case {q} {req.duration / 3600:g} h, {n} nodes, "
                      f"{s} starts: " + "; ".join(parts), flush=True)  # fmt: skip
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
