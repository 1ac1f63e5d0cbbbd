"""Issue 36, item 4: is the default (``bfd``) at least as good as every other load-sharing
method at the same time limit, on the family's instances?

Every method of :data:`coalloc.loadshare.METHODS` runs with ``time_limit=T`` on the Fig. 5
grids of ``generators.paper_setup`` (every arrival model, several sizes and seeds) and on
small random grids whose jobs are large against the nodes (where whole jobs keep best fit
decreasing below the bound and the exact model can do better). Printed: per instance set,
how often each method's throughput (verified) beats the default's, ties it, or falls
short, and the largest excess over the default.

    PYTHONPATH=src python -m bench.loadshare.defaults --limit 1 --seeds 3
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import coalloc.loadshare as ls
from bench.shared._progress import add_quiet, bar


def instances(seeds: int):
    """``(set name, problem)`` pairs."""
    for arrival in ls.generators.ARRIVALS:
        for n in (100, 500, 3000):
            for seed in range(seeds):
                yield f"paper {arrival} n={n}", ls.generators.paper_setup(
                    n, seed=seed, arrival=arrival)  # fmt: skip
    rng = np.random.default_rng(36)
    for _ in range(40 * seeds):  # a few nodes, whole jobs large against them
        n = int(rng.integers(2, 7))
        cap = rng.uniform(5, 20, size=n)
        sizes = rng.uniform(1, 12, size=int(rng.integers(n, 4 * n + 1)))
        origin = rng.integers(0, n, size=sizes.shape[0])
        yield "small, large jobs", ls.LoadSharingProblem(cap, sizes, origin)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=float, default=1.0)
    ap.add_argument("--seeds", type=int, default=3)
    add_quiet(ap)
    args = ap.parse_args(argv)
    print(f"load average at the start: {os.getloadavg()}")
    table: dict = {}
    for name, prob in bar(list(instances(args.seeds)), desc="defaults", unit="instance"):
        got = {}
        for method in ls.METHODS:
            if method == "exact" and prob.n_nodes * prob.n_jobs > 500_000:
                continue
            res = ls.share(prob, method, time_limit=args.limit, seed=0)
            assert ls.verify_placement(prob, res.placement, claimed=res.throughput).ok
            got[method] = res.throughput if res.has_solution else float("-inf")
        base = got[ls.DEFAULT_METHOD]
        for method, value in got.items():
            row = table.setdefault((name, method), [0, 0, 0, 0.0])
            tol = 1e-9 * max(abs(base), 1.0)
            row[0 if value > base + tol else 1 if value >= base - tol else 2] += 1
            if value > base + tol:
                row[3] = max(row[3], (value - base) / max(base, 1e-12))
    print(f"time limit {args.limit:g} s each; against the default {ls.DEFAULT_METHOD!r}")
    print(f"{'instances':28s} {'method':12s} {'better':>6s} {'tie':>5s} {'worse':>6s} "
          f"{'largest excess':>15s}")  # fmt: skip
    for (name, method), (b, t, w, ex) in table.items():
        print(f"{name:28s} {method:12s} {b:6d} {t:5d} {w:6d} {100 * ex:14.3f}%")
    print(f"load average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
