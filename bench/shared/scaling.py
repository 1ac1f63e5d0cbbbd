"""Scaling of ``coalloc.solve_many`` per family: serial against threads, processes and Dask.

For every family a batch of many instances sharing one large model (the usual case: many
requests against one system) is generated afresh for every configuration (no warm cache
carried from one configuration to the next: a new batch of new objects each time), solved
serially and with 1, 2, ... N workers on threads, processes and a local Dask cluster, and
every answer is compared with the serial run's (the results' dictionaries without their
timings). The table gives throughput (instances per second), speed-up against the serial
loop, efficiency (speed-up / workers), the per-instance overhead (wall time x workers /
instances, less the serial time per instance) and the peak resident memory of a worker
(processes, spawned: the largest peak (VmHWM) a worker reports at the end; Dask: the
largest a worker reports through ``Client.run``; threads and serial: not measured, "nan":
the calling process's peak is the benchmark's own). The local Dask cluster runs with
:data:`DASK_BATCH_CONFIG` (``--dask-defaults``: as installed).

    python -m bench.shared.scaling                        # every family, 1 and 2 workers
    python -m bench.shared.scaling --families collective testbed --workers 1 2 4 8 16
    python -m bench.shared.scaling --bytes                # bytes shipped per instance only
    python -m bench.shared.scaling --large --repeats 1    # >= 10 s of serial work per family
    python -m bench.shared.scaling --families mixed --workers 2 --kinds processes dask --one
                                       # costs 1,000x apart: chunks by cost vs one per chunk
    python -m bench.shared.scaling --families taskmap --workers 2 --kinds processes dask --caches
                                       # the graph's routes shipped with it vs built per worker

It runs on any core count (``--workers`` up to the CPUs). ``--bytes`` measures what crosses
to a process or Dask worker per instance, with the shared models sent once
(:class:`coalloc.batch.shipping.Shipper`) and as a plain pickle of each chunk (main's code
before issue 24).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import multiprocessing as mp
import os
import pickle
import resource
import statistics
import sys
import time
from typing import Any, Dict, List

import coalloc
from bench.shared._progress import add_quiet, bar, say

#: family -> (instances per batch, builder) at the benchmark's size.
FAMILIES = ("ctaap", "taskmap", "collective", "testbed", "loadshare")


def family_batch(family: str, k: int, *, seed: int = 0, small: bool = False) -> List[Any]:
    """``k`` instances of ``family`` sharing one supply model, built afresh.

    Parameters
    ----------
    family : str
        One of :data:`FAMILIES`.
    k : int
        Instances in the batch.
    seed : int
        Seed of the generators.
    small : bool
        Test-sized models (milliseconds per instance) instead of the benchmark's.

    Returns
    -------
    list
        The family's ``Instance`` objects; all hold the same supply object.
    """
    if family == "ctaap":
        from coalloc.ctaap import Instance
        from coalloc.ctaap.generators import fig2, fig3

        if small:
            offer = fig2(1, n_tasks=20, n_clusters=4, seed=seed)[1]
            return [Instance(fig2(1, n_tasks=20, n_clusters=4, seed=seed + 1 + i)[0], offer)
                    for i in range(k)]  # fmt: skip
        offer = fig3(500, seed=seed)[1]
        return [Instance(fig3(500, seed=seed + 1 + i)[0], offer) for i in range(k)]
    if family == "taskmap":
        from coalloc.taskmap import Instance
        from coalloc.taskmap import generators as g

        if small:
            graph = g.internet_resource_graph(n_wan=2, n_lan=2, lan_size=(3, 5), seed=seed)
            shape = {"n_clusters": (2, 3), "cluster_size": (2, 4)}
        else:
            graph = g.internet_resource_graph(seed=seed)
            shape = {}
        return [Instance(g.pipeline_task_graph(seed=seed + 1 + i, **shape), graph)
                for i in range(k)]  # fmt: skip
    if family == "collective":
        from coalloc.collective import Instance
        from coalloc.collective import generators as g

        pool = g.table1_pool(40, n_slots=48, seed=seed) if small else g.table1_pool(seed=seed)
        cases = g.section42_requests(pool, 4 if small else 8, n_cases=k, seed=seed + 1)
        return [Instance(case[0], pool) for case in cases[:k]]
    if family == "testbed":
        from coalloc.testbed import Instance
        from coalloc.testbed import generators as g

        ptop = g.deterlab(30, 2, seed=seed) if small else g.deterlab(255, 5, seed=seed)
        work = g.workload(k, seed=seed + 1, max_size=6 if small else 80)
        return [Instance(item[2], ptop) for item in work]
    if family == "loadshare":
        from coalloc.loadshare import Instance
        from coalloc.loadshare import generators as g

        problem = g.paper_setup(40 if small else 500, seed=seed)
        return [Instance(problem) for _ in range(k)]  # one problem, a seed per instance
    if family == "mixed":
        return mixed_batch(k, seed=seed, small=small)
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")


def mixed_batch(k: int, *, seed: int = 0, small: bool = False) -> List[Any]:
    """A batch of ``k`` instances about 1,000x apart in cost, three families shuffled: one
    in 100 a CTAAP Fig. 3 request (n = 400, about 50-100 ms on the 2-core VM; ``small``:
    n = 60), the others small load-sharing problems (40 nodes, about 0.1 ms) and
    collective requests (a 40-node pool, about 0.4 ms), half each; the order is a seeded
    shuffle, so the costly instances fall anywhere, a few together.
    """
    import numpy as np

    from coalloc.collective import Instance as Collective
    from coalloc.collective import generators as cg
    from coalloc.ctaap import Instance as Ctaap
    from coalloc.ctaap.generators import fig3
    from coalloc.loadshare import Instance as Loadshare
    from coalloc.loadshare import generators as lg

    n_big = max(1, k // 100)
    offer = fig3(60 if small else 400, seed=seed)[1]
    big = [Ctaap(fig3(60 if small else 400, seed=seed + 1 + i)[0], offer) for i in range(n_big)]
    rest = k - n_big
    problem = lg.paper_setup(40, seed=seed)
    pool = cg.table1_pool(40, n_slots=48, seed=seed)
    cases = cg.section42_requests(pool, 4, n_cases=rest // 2, seed=seed + 1)
    small_ones = [Collective(c[0], pool) for c in cases]
    small_ones += [Loadshare(problem) for _ in range(rest - len(small_ones))]
    batch = big + small_ones
    order = np.random.default_rng(seed).permutation(len(batch))
    return [batch[i] for i in order]


def answer(result: Any) -> Any:
    """What must equal the serial run's: the result's dictionary without its timings."""
    if isinstance(result, coalloc.BatchError):
        return ("error", result.exc_type, result.message)
    data = result.to_dict()
    data.pop("timings", None)
    return data


def _peak_rss_mib() -> float:
    """This process's peak resident memory (MiB): Linux's VmHWM, which exec resets
    (``ru_maxrss`` keeps the peak of the process a worker was forked from, across exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _warm(_: int = 0) -> bool:
    """Import the package and its families in a worker (0.44 s of CPU on the 2-core VM): part
    of starting a pool or a cluster, not of the batch. A process worker does it on
    unpickling :func:`_worker_peak` (this module imports coalloc); a Dask worker is told."""
    from coalloc._shared.family import problem_kinds

    return bool(problem_kinds())


def _settled(executor: Any, quiet: float = 0.005, every: float = 0.2) -> None:
    """Wait until a warm pool's workers are done warming (their CPU still in ``every``
    seconds), whichever took the first tasks."""
    import psutil

    procs = [psutil.Process(pid) for pid in executor._processes]
    before = None
    while True:
        total = sum(p.cpu_times().user + p.cpu_times().system for p in procs)
        if before is not None and total - before < quiet:
            return
        before = total
        time.sleep(every)


def _worker_peak(_: int = 0) -> float:
    time.sleep(0.05)  # so that every worker takes one
    return _peak_rss_mib()


@contextlib.contextmanager
def _as_before(before: bool):
    """With ``before``: the batch layer as on main before issue 24 -- every chunk pickled
    whole (no shared models sent once); the caller also passes chunksize 1, main's default."""
    if not before:
        yield
        return
    import coalloc.batch.run as run

    saved = run._shipper_for
    run._shipper_for = lambda executor, temp_root: (None, None)
    try:
        yield
    finally:
        run._shipper_for = saved


@contextlib.contextmanager
def _caches_shipped(ship: bool):
    """With ``ship`` False: the caches a model's class declares travelling are not shipped
    with it (every worker builds its own, as before issue 41 item 3)."""
    from coalloc.batch import shipping

    saved = shipping.SHIP_CACHES
    shipping.SHIP_CACHES = ship and saved
    try:
        yield
    finally:
        shipping.SHIP_CACHES = saved


def _worker_setup(blob: bytes, digest: str, ship: bool) -> float:
    """Seconds a worker takes to make a shared model it receives ready to solve: unpickle
    it and install the caches shipped with it (``ship``), or build them (as before)."""
    import io

    from coalloc._shared.caches import _spec, cache_of, install_caches

    clear = getattr(sys.modules.get("coalloc.taskmap.routing"), "_by_digest", None)
    if clear is not None:
        clear.clear()  # a fresh worker: no route table of an equal graph held
    start = time.perf_counter()
    fh = io.BytesIO(blob)
    obj = pickle.load(fh)
    extra = fh.read()
    if ship and extra:
        install_caches(obj, extra, digest)
    else:
        _spec(obj)[1](obj)  # the class's fill: what the first solve builds
    assert len(cache_of(obj)) >= 2
    return time.perf_counter() - start


def worker_setup(family: str, kind: str, workers: int, seed: int, repeats: int = 3) -> dict:
    """Per-worker set-up of one fresh shared model of ``family`` on ``kind`` ("processes" or
    "dask"): the caller's seconds to build and export its caches once, the bytes that cross,
    and the median seconds a worker takes with the caches shipped and building its own."""
    from coalloc._shared.caches import export_caches
    from coalloc.batch.shipping import digest_of

    model = family_batch(family, 1, seed=seed)[0][1]
    plain = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    digest = digest_of(model)
    start = time.perf_counter()
    extra = export_caches(model, digest) or b""
    caller = time.perf_counter() - start
    blob = plain + extra
    times: Dict[bool, list] = {True: [], False: []}
    client = cluster = executor = None
    try:
        if kind == "processes":
            executor = cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"))
            list(executor.map(_worker_peak, range(workers)))  # started: not timed
        else:
            import distributed

            cluster = local_cluster(workers)
            client = distributed.Client(cluster)
            client.run(_warm)
        for rep in range(repeats + 1):  # the first round (imports the solvers) not counted
            for ship in (True, False):
                if executor is not None:
                    futures = [executor.submit(_worker_setup, blob, digest, ship)
                               for _ in range(workers)]  # fmt: skip
                    got = [f.result() for f in futures]
                else:
                    got = list(client.run(_worker_setup, blob, digest, ship).values())
                if rep:
                    times[ship] += got
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        if executor is not None:
            executor.shutdown()
    return {"caller": caller, "model_bytes": len(plain), "cache_bytes": len(extra),
            "shipped": statistics.median(times[True]),
            "built": statistics.median(times[False])}  # fmt: skip


#: The Dask settings of the benchmark's local cluster (docs/batch.md recommends them for a
#: batch cluster): the worker's statistical profiler off (it samples the solving thread's
#: stack every 10 ms) and glibc's trim threshold back from the nanny's 64 KiB to 128 MiB
#: (memory handed back to the system after every freed array, then page-faulted in again).
#: Together they took a worker's CPU per collective instance from 1.81-2.02 to 1.51-1.54
#: ms (2 workers, 3,000 requests, the 2-core VM under load; bench/RESULTS.md, issue 24,
#: third run). Setting any of glibc's thresholds also fixes its mmap threshold at 128 KiB
#: (no longer raised as large blocks are freed): every array past it is mapped and page-
#: faulted in afresh, 44-50 ms of system CPU per CTAAP Fig. 3 instance (against 9-11 ms with
#: no setting, 0-1 ms with the mmap threshold at 32 MiB too; a solving thread, 8 instances,
#: h46disp): so the mmap threshold is set beside the trim threshold. ``--dask-defaults``
#: measures Dask as installed instead (the nanny's 64 KiB trim threshold: the same faults).
DASK_BATCH_CONFIG: Dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    # both in distributed.nanny.pre-spawn-environ
    "MALLOC_TRIM_THRESHOLD_": 128 * 2**20,
    "MALLOC_MMAP_THRESHOLD_": 32 * 2**20,
}


#: A local cluster's scheduler and nannies run in the calling process, and their event
#: loop's periodic work follows the batch's wall time, not its instances: at load 15 on the
#: 2-core VM an idle two-worker cluster costs the caller 27-35 ms of CPU a second, most of it
#: the three servers' diagnostics (issue 41, h58gap): the loop-blocking tick every 20 ms
#: (150 calls a second) and the system monitor every 0.5 s (psutil's disk, network and
#: process counters, about 1.3 ms a call). Both feed only the dashboard and the "event loop
#: unresponsive" warning; at 1 s and 5 s the idle caller costs 13.5-14.4 ms a second. The
#: nannies' memory monitor (every 0.1 s, the one that restarts a worker past its memory
#: limit) is left as installed. ``DASK_QUIET_LOOPS = False`` measures without them.
DASK_QUIET_LOOPS = True
DASK_LOOP_CONFIG: Dict[str, Any] = {
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
}


#: The nannies' memory monitor (``distributed.worker.memory.monitor-interval``, 0.1 s as
#: installed: 20 calls a second for two nannies, in the calling process's loop) every 0.5 s:
#: an idle two-worker cluster's caller 14-15 -> 7-8 ms of CPU a second (three alternated
#: pairs, load 14-15, ISSUE41.md h59tail). The monitor still restarts a worker past its
#: memory limit, up to 0.4 s later (the benchmark's workers use a few hundred MB of their
#: limit). ``DASK_QUIET_MONITOR = False``: as installed.
DASK_QUIET_MONITOR = True
DASK_MONITOR_CONFIG: Dict[str, Any] = {"distributed.worker.memory.monitor-interval": "500ms"}


def local_cluster(workers: int, defaults: bool = False) -> Any:
    """A local Dask cluster of ``workers`` single-thread worker processes, with
    :data:`DASK_BATCH_CONFIG` unless ``defaults``."""
    import dask
    import distributed

    settings = dict(DASK_BATCH_CONFIG)
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
        environ[name] = settings.pop(name)
    settings["distributed.nanny.pre-spawn-environ"] = environ  # the others kept
    if DASK_QUIET_LOOPS:
        settings.update(DASK_LOOP_CONFIG)
    if DASK_QUIET_MONITOR:
        settings.update(DASK_MONITOR_CONFIG)
    with dask.config.set({} if defaults else settings):
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None)  # fmt: skip


#: The command-line cluster (``--kinds dask-cli``, :func:`cli_cluster`) gets the quiet
#: loops too, as the environment variables docs/batch.md gives (``DASK_LOOP_CONFIG`` when
#: ``DASK_QUIET_LOOPS``, ``DASK_MONITOR_CONFIG`` when ``DASK_QUIET_MONITOR``) on its
#: scheduler and workers (issue 41, h60tail). False: :data:`DASK_BATCH_CONFIG` alone, as
#: before.
DASK_CLI_QUIET = True


def _env_name(key: str) -> str:
    """The environment variable of a Dask configuration key
    (``distributed.admin.tick.interval`` -> ``DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL``)."""
    return "DASK_" + "__".join(part.upper().replace("-", "_") for part in key.split("."))


def _cli_environ() -> Dict[str, str]:
    """The environment of a command-line cluster: :data:`DASK_BATCH_CONFIG` (and with
    :data:`DASK_CLI_QUIET` the quiet loops) as the variables docs/batch.md gives, and this
    checkout's ``coalloc`` and ``bench`` first on the path (the workers import the code
    under test, not an installed copy)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    package = os.path.dirname(os.path.dirname(os.path.abspath(coalloc.__file__)))
    path = [package, root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(path))}
    environ["DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED"] = "False"
    for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
        value = str(DASK_BATCH_CONFIG[name])
        environ[f"DASK_DISTRIBUTED__NANNY__PRE_SPAWN_ENVIRON__{name}"] = value
    if DASK_CLI_QUIET:
        quiet = {**(DASK_LOOP_CONFIG if DASK_QUIET_LOOPS else {}),
                 **(DASK_MONITOR_CONFIG if DASK_QUIET_MONITOR else {})}  # fmt: skip
        environ.update({_env_name(key): str(value) for key, value in quiet.items()})
    return environ


def _readable_json(path: str) -> bool:
    """Whether ``path`` holds a whole JSON document (the scheduler file, once written)."""
    import json

    try:
        with open(path) as fh:
            json.load(fh)
        return True
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def cli_cluster(workers: int, timeout: float = 120.0):
    """A Dask cluster started from the command line as a cluster user starts one
    (docs/batch.md): ``dask scheduler`` and ``dask worker --nworkers W --nthreads 1`` as
    processes of their own (children of this one, so that their CPU can be read), with
    :data:`DASK_BATCH_CONFIG`; yields a connected :class:`distributed.Client` with every
    worker up, and stops both processes at the end. The caller's CPU is then the client's
    alone (a local cluster runs the scheduler in the calling process)."""
    import signal
    import subprocess
    import tempfile

    import distributed

    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    command = [dask] if os.path.exists(dask) else [sys.executable, "-m", "dask"]
    environ = _cli_environ()
    procs: List[Any] = []
    client = None
    with tempfile.TemporaryDirectory(prefix="coalloc-cli-") as folder:
        file = os.path.join(folder, "scheduler.json")
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": environ}
        try:
            procs.append(subprocess.Popen([*command, "scheduler", "--host", "127.0.0.1",
                                           "--port", "0", "--scheduler-file", file,
                                           "--no-dashboard"], **quiet))  # fmt: skip
            deadline = time.monotonic() + timeout
            while not _readable_json(file) and time.monotonic() < deadline:
                time.sleep(0.1)
            procs.append(subprocess.Popen([*command, "worker", "--scheduler-file", file,
                                           "--nworkers", str(workers), "--nthreads", "1",
                                           "--no-dashboard", "--host", "127.0.0.1"],
                                          **quiet))  # fmt: skip
            client = distributed.Client(scheduler_file=file, timeout=timeout)
            client.wait_for_workers(workers, timeout=timeout)
            yield client
        finally:
            if client is not None:
                client.close()
            for proc in reversed(procs):  # the workers first: they leave the scheduler
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def run_config(family: str, k: int, kind: str, workers: int, seed: int, chunksize: Any,
               dask_defaults: bool = False) -> dict:  # fmt: skip
    """Solve a fresh batch with ``kind`` ("serial", "threads", "processes", "pool", "dask",
    "dask-cli"; a
    trailing ``"-before"``: main's batch layer, chunks pickled whole, one instance each; a
    trailing ``"-one"``: one instance per chunk, solve_many's default before issue 41)."""
    before = kind.endswith("-before")
    kind = kind.removesuffix("-before")
    nocache = kind.endswith("-nocache")  # every worker builds the model's caches (no shipping)
    kind = kind.removesuffix("-nocache")
    if before or kind.endswith("-one"):
        chunksize = 1
    kind = kind.removesuffix("-one")
    batch = family_batch(family, k, seed=seed)
    client = cluster = executor = cli = None
    stack = contextlib.ExitStack()
    try:
        if kind == "processes":
            # spawned: a worker's peak memory is its own, not the pages of this process
            executor = cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"))
            list(executor.map(_worker_peak, range(workers)))  # started: not timed
        elif kind == "pool":  # coalloc.batch.pool: started and warmed, not timed
            from coalloc.batch import WorkerPool

            families = FAMILIES if family == "mixed" else (family,)
            executor = WorkerPool(workers, families=families, mp_context=mp.get_context("spawn"))
            list(executor.map(_worker_peak, range(workers)))
            _settled(executor)
        elif kind == "dask":
            import distributed

            cluster = local_cluster(workers, dask_defaults)
            client = distributed.Client(cluster)
            client.run(_warm)  # started, coalloc imported: not timed
            executor = client.get_executor()
        elif kind == "dask-cli":  # scheduler and workers started from the command line
            cli = stack.enter_context(cli_cluster(workers))
            cli.run(_warm)
            executor = cli.get_executor()
        start = time.perf_counter()
        with _as_before(before), _caches_shipped(not nocache):
            results = _solve(batch, kind, executor, workers, seed, chunksize)
        wall = time.perf_counter() - start
        if kind in ("processes", "pool"):
            peak = max(executor.map(_worker_peak, range(4 * workers)))
        elif kind in ("dask", "dask-cli"):
            peak = max((client or cli).run(_peak_rss_mib).values())
        else:
            peak = None  # this process's peak is the benchmark's own (every batch it built)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        elif executor is not None and cli is None:
            executor.shutdown()
        stack.close()
    return {"wall": wall, "answers": [answer(r) for r in results], "peak": peak}


def _solve(batch, kind, executor, workers, seed, chunksize):
    if kind == "serial":
        return coalloc.solve_many(batch, executor="serial", seed=seed)
    if kind == "threads":
        return coalloc.solve_many(batch, executor="threads", n_jobs=workers, seed=seed,
                                  chunksize=chunksize)  # fmt: skip
    return coalloc.solve_many(batch, executor=executor, n_jobs=workers, seed=seed,
                              chunksize=chunksize)  # fmt: skip


def bytes_per_instance(family: str, k: int, seed: int = 0) -> Dict[str, float]:
    """Bytes that cross to the workers per instance: plain pickles against the Shipper
    (its pickles, the shared models' files and the files of large arrays)."""
    import tempfile

    from coalloc.batch.run import _check_item
    from coalloc.batch.shipping import Shipper

    batch = family_batch(family, k, seed=seed)
    chunks = [[(i, _check_item(item), i)] for i, item in enumerate(batch)]
    plain = sum(len(pickle.dumps(c, protocol=pickle.HIGHEST_PROTOCOL)) for c in chunks)
    with tempfile.TemporaryDirectory() as folder:
        shipper = Shipper(folder=folder)
        packed = sum(len(pickle.dumps(shipper.pack(c)[0], protocol=pickle.HIGHEST_PROTOCOL))
                     for c in chunks)  # fmt: skip
        # large arrays go through files of the folder, not in the pickle (SPILL_BYTES)
        spilled = sum(os.path.getsize(os.path.join(folder, name))
                      for name in os.listdir(folder) if name.startswith("spill-"))  # fmt: skip
        shipped = packed + shipper.bytes_sent + spilled
    return {"plain": plain / k, "shipped": shipped / k}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(FAMILIES),
                    choices=[*FAMILIES, "mixed"],
                    help="'mixed': instances about 1,000x apart in cost (mixed_batch)")  # fmt: skip
    ap.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    ap.add_argument("--kinds", nargs="+", default=["threads", "processes", "dask"],
                    choices=["threads", "processes", "pool", "dask", "dask-cli"],
                    help="dask: a local cluster (its scheduler in this process); dask-cli: "
                    "'dask scheduler' and 'dask worker' as processes (cli_cluster)")  # fmt: skip
    ap.add_argument("--instances", type=int, default=None,
                    help="instances per batch (default: per family, see SIZES)")  # fmt: skip
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunksize", default="auto", help="'auto' or a number")
    ap.add_argument("--bytes", action="store_true", help="only the bytes per instance")
    ap.add_argument("--before", action="store_true",
                    help="also processes and Dask at the most workers with main's batch layer "
                    "(chunks pickled whole, chunksize 1), interleaved in the same run")  # fmt: skip
    ap.add_argument("--one", action="store_true",
                    help="also processes and Dask at the most workers with one instance per "
                    "chunk (the default before issue 41), interleaved in the same run")  # fmt: skip
    ap.add_argument("--caches", action="store_true",
                    help="also processes and Dask at the most workers with every worker "
                    "building the shared model's caches (not shipped with it), interleaved, "
                    "and the per-worker set-up time of both")  # fmt: skip
    ap.add_argument("--large", action="store_true",
                    help="batches of at least 10 s of serial work each on the 2-core VM "
                    "(LARGE_SIZES), for the quiet-machine run")  # fmt: skip
    ap.add_argument(
        "--dask-defaults",
        action="store_true",
        help="the local Dask cluster as installed, not with DASK_BATCH_CONFIG",
    )
    ap.add_argument("--seed", type=int, default=2024)
    add_quiet(ap)
    args = ap.parse_args(argv)
    sizes = LARGE_SIZES if args.large else SIZES
    chunksize = args.chunksize if args.chunksize == "auto" else int(args.chunksize)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}, "
          f"Python {sys.version.split()[0]}")  # fmt: skip
    if args.bytes:
        print("\n| family | instances | bytes/instance, plain pickle | shipped once | ratio |")
        print("|---|---:|---:|---:|---:|")
        for family in args.families:
            k = args.instances or sizes[family]
            b = bytes_per_instance(family, k, args.seed)
            print(f"| {family} | {k} | {b['plain']:,.0f} | {b['shipped']:,.0f} | "
                  f"{b['plain'] / b['shipped']:.1f}x |")  # fmt: skip
        return 0
    configs = [("serial", 1)] + [(kind, w) for kind in args.kinds for w in args.workers]
    if args.before:
        most = max(args.workers)
        configs += [(f"{kind}-before", most) for kind in args.kinds if kind != "threads"]
    if args.one:
        most = max(args.workers)
        configs += [(f"{kind}-one", most) for kind in args.kinds if kind != "threads"]
    if args.caches:
        most = max(args.workers)
        configs += [(f"{kind}-nocache", most) for kind in args.kinds if kind != "threads"]
        print("\n| family | executor | workers | caller builds + exports, s | model / caches "
              "bytes | worker set-up, caches shipped, s | built, s | ratio |")  # fmt: skip
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for family in args.families:
            for kind in args.kinds:
                if kind == "threads":
                    continue
                w = worker_setup(family, kind, most, args.seed, args.repeats)
                say(f"| {family} | {kind} | {most} | {w['caller']:.4f} | "
                    f"{w['model_bytes']:,} / {w['cache_bytes']:,} | {w['shipped']:.4f} | "
                    f"{w['built']:.4f} | {w['built'] / w['shipped']:.1f}x |")  # fmt: skip
        print(f"load average {os.getloadavg()}")
    print("\n| family (instances) | executor | workers | inst/s | speed-up | efficiency | "
          "overhead ms/inst | peak MiB/worker | same answers |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    progress = bar(total=len(args.families) * len(configs) * args.repeats)
    for family in args.families:
        k = args.instances or sizes[family]
        walls: Dict[tuple, list] = {c: [] for c in configs}
        peaks: Dict[tuple, float] = {}
        same: Dict[tuple, bool] = {c: True for c in configs}
        reference = None
        for rep in range(args.repeats):
            for config in configs:  # interleaved: background load hits all alike
                out = run_config(family, k, config[0], config[1], args.seed + rep, chunksize,
                                 args.dask_defaults)  # fmt: skip
                walls[config].append(out["wall"])
                if out["peak"] is not None:
                    peaks[config] = max(peaks.get(config, 0.0), out["peak"])
                if config == ("serial", 1):
                    reference = out["answers"]
                else:
                    same[config] &= out["answers"] == reference
                progress.update(1)
        serial = statistics.median(walls[("serial", 1)])
        for config in configs:
            wall = statistics.median(walls[config])
            speed = serial / wall
            workers = config[1]
            overhead = (wall * workers - serial) / k * 1e3
            say(f"| {family} ({k}) | {config[0]} | {workers} | {k / wall:,.1f} | "
                f"{speed:.2f}x | {speed / workers:.2f} | {overhead:+.2f} | "
                f"{peaks.get(config, float('nan')):.0f} | "
                f"{'yes' if same[config] else 'NO'} |")  # fmt: skip
    progress.close()
    return 0


#: Instances per batch at the benchmark's size (about 1.5 s of serial work on a 2-core VM:
#: CTAAP Fig. 3 n = 500 70 ms, task mapping 55 ms, the others 1.5-2 ms per instance).
SIZES: Dict[str, int] = {
    "ctaap": 20,
    "taskmap": 24,
    "collective": 800,
    "testbed": 600,
    "loadshare": 600,
    "mixed": 3000,
}


#: Instances per batch with ``--large``: at least 10 s of serial work on the 2-core VM
#: (CTAAP 60 ms, task mapping 26 ms, collective 0.8 ms, testbed 1.6 ms, loadshare 0.9 ms
#: per instance, quiet).
LARGE_SIZES: Dict[str, int] = {
    "ctaap": 170,
    "taskmap": 450,
    "collective": 13000,
    "testbed": 7000,
    "loadshare": 11000,
    "mixed": 20000,
}


if __name__ == "__main__":
    raise SystemExit(main())
