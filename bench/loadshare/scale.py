"""DMCF-GGA at the paper's largest scale (50,000 nodes), serial and on executors.

Runs the compiled generation step serially, with Phase II on a thread pool, and (if
``distributed`` is installed) on a local Dask cluster's executor; checks that every run
gives the same placement, and times the default method on the same grid.

    python -m bench.loadshare.scale                       # 50,000 nodes, coalitions of 100
    python -m bench.loadshare.scale --nodes 5000 --size 23

Writes bench/out/loadshare_scale.csv.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import csv
import os
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.loadshare import best_fit, dmcf_gga, generators, verify_placement

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "out")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_quiet(ap)
    ap.add_argument("--nodes", type=int, default=50000)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args(argv)
    os.makedirs(OUT, exist_ok=True)
    t = time.perf_counter()
    prob = generators.paper_setup(args.nodes, seed=args.seed)
    print(f"{prob.n_nodes} nodes, {prob.n_jobs} jobs generated in "
          f"{time.perf_counter() - t:.1f} s; bound {prob.bound:.6g}")  # fmt: skip
    rows = []
    pbar = bar(total=3 if args.no_dask else 4, desc="runs", unit="run")

    def record(name, res, dt):
        rep = verify_placement(prob, res.placement, claimed=res.throughput)
        rows.append({"run": name, "seconds": dt, "ratio": res.ratio, "ok": rep.ok,
                     "generations": res.generations, "migrations": res.migrations})
        pbar.update(1)
        say(f"  {name:24s} {dt:7.2f} s  ratio {res.ratio:.5f}  generations {res.generations}"
              f"  migrations {res.migrations}  verified {rep.ok}")  # fmt: skip
        return res

    t = time.perf_counter()
    base = record("dmcf-gga serial", dmcf_gga(prob, coalition_size=args.size, seed=0),
                  time.perf_counter() - t)  # fmt: skip
    with cf.ThreadPoolExecutor(args.workers) as ex:
        t = time.perf_counter()
        r = record(f"dmcf-gga threads({args.workers})",
                   dmcf_gga(prob, coalition_size=args.size, seed=0, executor=ex,
                            chunks=args.workers), time.perf_counter() - t)  # fmt: skip
        assert np.array_equal(r.placement, base.placement)
    if not args.no_dask:
        try:
            import distributed
        except ImportError:
            print("  (distributed not installed: no Dask run)")
        else:
            with distributed.Client(processes=False, n_workers=1, threads_per_worker=args.workers,
                                    dashboard_address=None) as client:  # fmt: skip
                t = time.perf_counter()
                r = record("dmcf-gga dask", dmcf_gga(prob, coalition_size=args.size, seed=0,
                                                     executor=client.get_executor(),
                                                     chunks=args.workers),
                           time.perf_counter() - t)  # fmt: skip
                assert np.array_equal(r.placement, base.placement)
    t = time.perf_counter()
    record("bfd (default)", best_fit(prob), time.perf_counter() - t)
    pbar.close()
    print("identical placements on every executor: True")
    with open(os.path.join(OUT, "loadshare_scale.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
