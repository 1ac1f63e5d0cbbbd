"""Online co-allocation (issue 28): SWF jobs replayed onto a large pool, simple against collective.

The pool is ``generators.table1_pool`` with ``--nodes`` nodes and 5-minute usage over
``--days`` days plus the three days after them that the last jobs may reach (waits up to a day,
runs up to two). The jobs come from a Standard Workload Format file (``--swf``) or, when none
is given, from :func:`synthetic_swf` (a week of jobs: arrivals with a daily cycle, 40 % serial
and the rest powers of two up to ``--max-procs`` processors, run times log-uniform from one
minute to two days). They are read by ``io.read_swf`` / ``io.swf_requests`` (one processor per
node, a total of ``P`` cores; simple: ``e = P / N`` = 1 core on each node, collective:
``e = P / 2N``) and replayed by ``simulate.simulate`` on the pool itself (``in_place``) with
bookings on the 5-minute grid (``align=300``), so every booking updates the ledger in place.

Measured per variant: wall time (all jobs, one core), per job, acceptance rate, mean start
delay, the jobs' share of the cores over time; after the run the ledger is checked (never above
capacity) and a snapshot is written through the guarded writer (``io.write_pool_snapshot``,
``.npz``) and read back, compared bit for bit (``--snapshot``).

Run:  PYTHONPATH=src nice -n 10 python -u -m bench.collective.replay [--nodes 10000 --jobs 10000]
"""

from __future__ import annotations

import argparse
import io
import os
import tempfile
import time

import numpy as np

from bench.shared._progress import add_quiet, bar, say
from coalloc.collective.generators import table1_pool
from coalloc.collective.io import read_pool_snapshot, read_swf, swf_requests, write_pool_snapshot
from coalloc.collective.simulate import simulate

DAY = 86400.0


def synthetic_swf(n_jobs, *, days=7, max_procs=64, seed=0):
    """``n_jobs`` jobs of a synthetic SWF trace over ``days`` days (the module docstring)."""
    rng = np.random.default_rng(seed)
    # arrivals: a daily cycle (busy afternoons), sorted
    t = rng.uniform(0, days * DAY, 4 * n_jobs)
    keep = rng.random(t.size) < 0.6 + 0.4 * np.sin(2 * np.pi * (t / DAY - 0.3))
    arrivals = np.sort(t[keep][:n_jobs])
    if arrivals.size < n_jobs:
        arrivals = np.sort(
            np.concatenate([arrivals, rng.uniform(0, days * DAY, n_jobs - arrivals.size)])
        )
    serial = rng.random(n_jobs) < 0.4
    procs = np.where(serial, 1, 2 ** rng.integers(1, int(np.log2(max_procs)) + 1, n_jobs))
    run = np.exp(rng.uniform(np.log(60.0), np.log(2 * DAY), n_jobs))
    lines = ["; synthetic SWF trace (bench.collective.replay)"]
    for q in range(n_jobs):
        f = [q + 1, int(arrivals[q]), -1, int(run[q]), int(procs[q]), -1, -1, int(procs[q]),
             int(run[q] * rng.uniform(1, 3)), -1, 1, 1, 1, -1, 1, -1, -1, -1]  # fmt: skip
        lines.append(" ".join(str(v) for v in f))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--max-procs", type=int, default=64)
    ap.add_argument("--swf", help="an SWF file (default: a synthetic trace)")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--pool-seed", type=int, default=2028)
    ap.add_argument("--snapshot", action="store_true", help="write and reread the final ledger")
    add_quiet(ap)
    args = ap.parse_args(argv)
    say(f"load average {os.getloadavg()[0]:.2f}")
    if args.swf:
        jobs = read_swf(args.swf)[: args.jobs]
    else:
        text = synthetic_swf(args.jobs, days=args.days, max_procs=args.max_procs, seed=args.seed)
        jobs = read_swf(io.StringIO(text))
    t0 = time.perf_counter()
    base = table1_pool(args.nodes, n_slots=288 * (args.days + 3), seed=args.pool_seed)
    say(f"pool {base.n_nodes} nodes x {base.times.size - 1} slots in "
        f"{time.perf_counter() - t0:.1f} s; {len(jobs)} jobs")  # fmt: skip
    print("| variant | jobs | seconds (CPU) | ms/job (CPU) | accepted | mean delay (h) | "
          "jobs' share of cores: mean | max | grid grew |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for simple in bar([True, False], desc="variants", unit="variant"):
        reqs = swf_requests(jobs, collective=not simple, procs_per_node=1.0)
        pool = base.copy()
        grid = pool.times.size
        t0, c0 = time.perf_counter(), time.process_time()
        sim = simulate(pool, reqs, align=300.0, in_place=True,
                       show_progress=not args.quiet)  # fmt: skip
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        over = pool.reserved > pool.capacity[:, :, None] + pool.tolerance[None, :, None]
        assert not np.any(over), "a booking above capacity"
        share = sim.job_usage[:, pool.names.index("cores")]
        delays = [r["delay"] for r in sim.records if r["accepted"]]
        per, per_cpu = 1e3 * secs / max(len(reqs), 1), 1e3 * cpu / max(len(reqs), 1)
        print(f"| {'simple' if simple else 'collective'} | {len(reqs)} | {secs:.1f} ({cpu:.1f}) | "
              f"{per:.1f} ({per_cpu:.1f}) | {sim.acceptance_rate:.3f} | "
              f"{np.mean(delays) / 3600 if delays else float('nan'):.2f} | {share.mean():.4f} | "
              f"{share.max():.4f} | {pool.times.size - grid} breakpoints |")  # fmt: skip
        if args.snapshot:
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "ledger.npz")
                t0 = time.perf_counter()
                write_pool_snapshot(path, pool)  # through the guarded writer
                back = read_pool_snapshot(path)
                same = (np.array_equal(back.times, pool.times) and
                        np.array_equal(back.reserved, pool.reserved) and
                        np.array_equal(back.capacity, pool.capacity))  # fmt: skip
                say(f"snapshot: {os.path.getsize(path) / 2**20:.0f} MiB written and reread in "
                    f"{time.perf_counter() - t0:.1f} s, identical: {same}")  # fmt: skip
                assert same, "the snapshot differs from the ledger"


if __name__ == "__main__":
    main()
