"""Issue 40, the collective tail (h46coll): ``block_screen`` against the compiled ``pruned_screen``.

For the ``reject`` requests of ``bench.collective.scale`` (10,000 nodes, 7 days of 5-minute
slots; and the ``week`` mix's collective requests with ``--week``), the candidate starts after
the first nine are cut into blocks of ``--block`` starts (what ``scan`` does for these
windows), their window maxima computed once (``window_max_rows``, not timed), then screened by

* ``full``: ``block_screen`` over every matching node;
* ``sub S``: ``pruned_screen`` with sub-blocks of ``S`` starts (each of ``--subs``).

The referee: every output (codes, eligible counts, properties, values) of every pruned run
must equal the full run's (``np.array_equal``, bit for bit); any difference raises. Printed
per request: the best of ``--repeats`` CPU times (``time.process_time``) of each screen over
all its blocks, and the rows the pruned screen kept per sub-block (rows screened over all
sub-blocks / sub-blocks; of the matching nodes, column ``nodes``).

Run:  PYTHONPATH=src:. python -m bench.collective.issue40_pruned_kernel [--counts 10 60 256]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from bench.collective.scale import reject_requests, week_requests
from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count as _count
from coalloc.collective import CollectiveRequest, scan
from coalloc.collective.core import Problem, kernels
from coalloc.collective.generators import table1_pool


def _screens(ker, req, pool, block, subs, repeats):
    """CPU ms of ``block_screen`` and of ``pruned_screen`` per sub-block size, and the rows
    kept per sub-block, over the starts of ``req`` after the first nine."""
    prob = Problem.of(pool, req)
    nodes = prob.matching
    cap = np.ascontiguousarray(pool.capacity[nodes])
    starts = pool.candidate_starts(nodes, req.earliest_start, req.latest_start)
    times, res = pool._state
    blocks = [starts[i : i + block] for i in range(9, starts.size, block)]
    tms = [ker.window_max_rows(times, res, nodes, b, req.duration) for b in blocks]
    n_starts = sum(tm.shape[0] for tm in tms)
    args = (prob.e, prob.d, req.count)

    def best(fn):
        ts, outs = [], None
        for _ in range(repeats):
            t0 = time.process_time()
            outs = [fn(tm) for tm in tms]
            ts.append(time.process_time() - t0)
        return 1e3 * min(ts), outs

    t_full, full = best(lambda tm: ker.block_screen(tm, cap, *args, tol=prob.tol))
    row = {"starts": n_starts, "nodes": int(nodes.size), "full": t_full}
    for sub in subs:
        t, outs = best(lambda tm, s=sub: ker.pruned_screen(tm, cap, *args, s, tol=prob.tol))
        for got, ref in zip(outs, full):
            if not all(np.array_equal(x, y) for x, y in zip(got[:4], ref)):
                raise AssertionError(f"pruned_screen (sub {sub}) differs from block_screen")
        n_sub = sum(-(-tm.shape[0] // sub) for tm in tms)
        row[sub] = (t, sum(o[4] for o in outs) / max(n_sub, 1))
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=_count(), default=10_000)
    ap.add_argument("--pool-seeds", type=_count(0), nargs="+", default=[2030])
    ap.add_argument("--counts", type=_count(), nargs="+", default=[10, 60, 256])
    ap.add_argument("--cases", type=_count(), default=3)
    ap.add_argument("--seed", type=_count(0), default=28)
    ap.add_argument("--block", type=_count(), default=128, help="starts per block")
    ap.add_argument("--subs", type=_count(), nargs="+", default=[8, 16, 32],
                    help="sub-block sizes of the pruned screen")  # fmt: skip
    ap.add_argument("--repeats", type=_count(), default=3)
    ap.add_argument("--week", action="store_true",
                    help="also the week mix's collective requests (N = 1,024)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    ker = kernels("compiled")
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    lines = ["| pool | request | starts | nodes | full ms | "
             + " | ".join(f"sub {s}: ms (rows kept)" for s in args.subs) + " |",
             "|---|---|---:|---:|---:|" + "---:|" * len(args.subs)]  # fmt: skip
    for pseed in args.pool_seeds:
        pool = table1_pool(args.nodes, n_slots=288 * 7, load=(1.5, 3.5), seed=pseed)
        scan(CollectiveRequest(300.0, 1, 0.0, 0.0), pool)  # the pool's indexes
        reqs = [(f"reject N = {n}, case {q}", r) for n in args.counts
                for q, r in enumerate(reject_requests(pool, n, args.cases, seed=args.seed))]
        if args.week:
            reqs += [(f"week N = 1024 collective, case {q}", b) for q, (_, b) in
                     enumerate(week_requests(pool, 1024, args.cases, seed=args.seed))]
        for name, req in bar(reqs, desc=f"pool {pseed}", unit="req"):
            r = _screens(ker, req, pool, args.block, args.subs, args.repeats)
            lines.append(f"| {pseed} | {name} | {r['starts']} | {r['nodes']} | {r['full']:.1f} | "
                         + " | ".join(f"{r[s][0]:.1f} ({r[s][1]:.0f})" for s in args.subs)
                         + " |")  # fmt: skip
    print("\n".join(lines))
    say(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
