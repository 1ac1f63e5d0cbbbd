"""A mixed batch serially, as a capped Slurm job array and on dask-jobqueue's SLURMCluster.

Starts a single-node Slurm on localhost (``tests.batch.slurm_fixture``: needs Debian's
``slurm-wlm`` and ``munge`` and root), builds ``scaling.mixed_batch`` (costs about 1,000x
apart, three families), and times, interleaved, ``--repeats`` times:

- ``serial``: ``solve_many(executor="serial")``;
- ``array``: ``coalloc.batch.slurm.solve_array(max_running=K)`` (submission to records);
- ``jobqueue``: ``SLURMCluster`` with ``K`` one-core workers: the workers' start
  (``scale`` to ``wait_for_workers``) and the batch on ``client.get_executor()`` apart.

Every answer is compared with the serial run's. Medians are printed with the load average::

    PYTHONPATH=src:. python -m bench.shared.slurm_batch --instances 2000 --repeats 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import coalloc
from bench.shared._progress import add_quiet, bar
from bench.shared.scaling import answer, mixed_batch
from coalloc.batch.slurm import ARRAY_CHUNK_SECONDS, _plan, solve_array
from coalloc.cli._common import count, seconds


def _same(serial, results) -> bool:
    return [answer(r) for r in serial] == [answer(r) for r in results]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=count(), default=2000)
    ap.add_argument("--repeats", type=count(), default=3)
    ap.add_argument("--max-running", type=count(), default=2,
                    help="elements at once (the array's %%K) and SLURMCluster workers")  # fmt: skip
    ap.add_argument("--chunk-seconds", type=seconds(), default=ARRAY_CHUNK_SECONDS)
    ap.add_argument("--no-jobqueue", action="store_true", help="skip dask-jobqueue")
    ap.add_argument("--seed", type=count(0), default=2024)
    add_quiet(ap)
    args = ap.parse_args(argv)
    from tests.batch.slurm_fixture import LocalSlurm, missing

    why = missing()
    if why is not None:
        print(f"cannot run: {why}", file=sys.stderr)
        return 1
    batch = mixed_batch(args.instances, seed=args.seed)
    k = args.max_running
    times: dict = {"serial": [], "array": [], "jobqueue start": [], "jobqueue": []}
    elements = len(_plan([(i, x, None) for i, x in enumerate(batch)], k, args.chunk_seconds))
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}; "
          f"{len(batch)} instances, K = {k}, {elements} array elements")  # fmt: skip
    with LocalSlurm() as slurm, tempfile.TemporaryDirectory() as tmp:
        for rep in bar(range(args.repeats), desc="repeats"):
            t = time.perf_counter()
            serial = coalloc.solve_many(batch, executor="serial", seed=rep)
            times["serial"].append(time.perf_counter() - t)
            t = time.perf_counter()
            got = solve_array(batch, folder=os.path.join(tmp, f"a{rep}"), seed=rep,
                              max_running=k, chunk_seconds=args.chunk_seconds)  # fmt: skip
            times["array"].append(time.perf_counter() - t)
            assert _same(serial, got), "the array's answers differ from the serial run's"
            if args.no_jobqueue:
                continue
            from dask_jobqueue import SLURMCluster
            from distributed import Client

            t = time.perf_counter()
            cluster = SLURMCluster(cores=1, processes=1, memory="1GB", walltime="01:00:00",
                                   log_directory=tmp, python=sys.executable)  # fmt: skip
            try:
                cluster.scale(jobs=k)
                with Client(cluster) as client:
                    client.wait_for_workers(k, timeout=300)
                    times["jobqueue start"].append(time.perf_counter() - t)
                    t = time.perf_counter()
                    got = coalloc.solve_many(batch, executor=client.get_executor(), seed=rep)
                    times["jobqueue"].append(time.perf_counter() - t)
            finally:
                cluster.close(timeout=60)
            assert _same(serial, got), "SLURMCluster's answers differ from the serial run's"
            slurm.cancel_all()
    base = statistics.median(times["serial"])
    print(f"load average at the end {os.getloadavg()}")
    print("\n| run | median s | all s | vs serial |\n|---|---:|---|---:|")
    for name, values in times.items():
        if values:
            med = statistics.median(values)
            ratio = "" if name == "jobqueue start" else f"{base / med:.2f}x"
            print(f"| {name} | {med:.2f} | {', '.join(f'{v:.2f}' for v in values)} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
