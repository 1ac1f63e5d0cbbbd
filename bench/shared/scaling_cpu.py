"""Where a batch's CPU goes: the calling process, each worker, against the serial loop.

Wall-clock speed-ups mean nothing on a machine other jobs share; CPU times do. For each
family's batch of :mod:`bench.shared.scaling` (generated afresh for every configuration),
this solves it serially and with ``--workers`` workers on processes and on a local Dask
cluster, and reads the CPU time (user + system, all threads) of the calling process and of
every process it started (``psutil``), from just before the batch to just after it, so
that starting a pool or a cluster is not counted (as in the wall-clock benchmark). It prints
per instance:

* the serial CPU;
* the parent's CPU, and that of its main thread alone (generation excluded: the batch is
  built before; checking the items, pickling, digests, unpickling results, ordering, the
  progress callback, and on Dask the scheduler and the client, which run in the calling
  process);
* the workers' CPU, in all and relative to the serial CPU (the extra work a worker does:
  unpickling, first-use caches, results pickled back), and the Dask nannies' CPU;
* the imbalance between workers (busiest worker's CPU / the mean);
* the overhead: all that CPU less the serial CPU, per instance (the CPU counterpart of
  the wall-clock overhead of :mod:`bench.shared.scaling`);
* the speed-up bound these imply on ``w`` cores of which the batch has all:
  ``serial / max(total CPU / w, busiest worker)``;
* the chunks the batch was cut into (count, sizes of the first, the largest, the last);
* the cores the machine gives ``--workers`` busy threads right now (:func:`cores_given`,
  a perfectly parallel control run just before and just after the batch, averaged);
* the measured wall-clock speed-up (serial wall / batch wall, both in this run) beside the
  speed-up the model of ``docs/performance.md`` predicts from the CPU accounting above on
  the cores given, and at 4, 8, 16 and 64 workers (:func:`predict`), each worker on a core
  of its own and the calling process on one more.

    python -m bench.shared.scaling_cpu                       # every family, 2 workers
    python -m bench.shared.scaling_cpu --families testbed --instances 3000
    python -m bench.shared.scaling_cpu --profile processes   # cProfile of the parent
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import cProfile
import hashlib
import io
import math
import multiprocessing as mp
import os
import pstats
import sys
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import coalloc
from bench.shared._progress import add_quiet, bar, say
from bench.shared.scaling import (
    FAMILIES,
    _settled,
    _solve,
    _warm,
    _worker_peak,
    answer,
    cli_cluster,
    family_batch,
    local_cluster,
)

#: Seconds the calling process's CPU is read with a Dask cluster up and idle, before the
#: batch (0: not read): the floor its scheduler's and nannies' timers cost per second of
#: wall, whatever the batch. The caller's figure per instance is then split into that floor
#: times the batch's wall and the rest (the work per chunk and per instance): under load the
#: wall grows and the floor's share with it (ISSUE41.md, h59tail).
IDLE_FLOOR_SECONDS = 5.0

#: Instances per batch: about 3-5 s of serial CPU each on the 2-core VM.
CPU_SIZES: Dict[str, int] = {
    "ctaap": 60,
    "taskmap": 160,
    "collective": 5000,
    "testbed": 3000,
    "loadshare": 4000,
    "mixed": 2000,
}


def _cpu(times: Any) -> float:
    return times.user + times.system


def _children_cpu(me: Any) -> Dict[int, float]:
    """pid -> CPU seconds of every live descendant of this process."""
    out = {}
    for child in me.children(recursive=True):
        try:
            out[child.pid] = _cpu(child.cpu_times())
        except Exception:  # gone meanwhile
            pass
    return out


def _profile_text(profiler: Optional[cProfile.Profile], lines: int) -> Optional[str]:
    """The ``lines`` costliest functions (own time) of ``profiler``; None without one."""
    if profiler is None:
        return None
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(lines)
    return buffer.getvalue()


def _main_thread_cpu(me: Any) -> float:
    """CPU seconds of this process's main thread (the rest of ``parent``: the pool's
    threads that pickle and send the chunks, Dask's event loop: client and scheduler)."""
    tid = threading.main_thread().native_id
    for thread in me.threads():
        if thread.id == tid:
            return thread.user_time + thread.system_time
    return float("nan")


class _ChunkLog:
    """Record the chunk sizes ``chunksize="auto"`` picks (a wrapper of the sizer's
    ``submitted``, which sees every chunk sent)."""

    def __init__(self):
        import coalloc.batch.run as run

        self.run = run
        self.sizes: List[int] = []
        self.saved = run._CostChunks.submitted

    def __enter__(self):
        saved, sizes = self.saved, self.sizes

        def submitted(sizer, future, meta):
            sizes.append(len(meta))
            return saved(sizer, future, meta)

        self.run._CostChunks.submitted = submitted
        return self

    def __exit__(self, *exc):
        self.run._CostChunks.submitted = self.saved


def cpu_config(family: str, k: int, kind: str, workers: int, seed: int, chunksize: Any,
               profile: bool = False, dask_defaults: bool = False) -> dict:  # fmt: skip
    """Solve a fresh batch with ``kind`` and read the CPU of this process and its children."""
    import psutil

    batch = family_batch(family, k, seed=seed)
    me = psutil.Process()
    client = cluster = executor = cli = None
    stack = contextlib.ExitStack()
    worker_pids: Optional[set] = None
    try:
        if kind == "processes":
            executor = cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"))
            list(executor.map(_worker_peak, range(workers)))  # started: not counted
            worker_pids = set(executor._processes)
        elif kind in ("pool", "pool-cold"):  # coalloc.batch.pool: warmed (not counted)
            from coalloc.batch import WorkerPool

            warmed = _pool_families(family) if kind == "pool" else ()  # cold: no warm-up
            executor = WorkerPool(workers, families=warmed,
                                  mp_context=mp.get_context("spawn"))  # fmt: skip
            list(executor.map(_worker_peak, range(workers)))
            worker_pids = set(executor._processes)
            _settled(executor)  # every worker's warm-up done: not counted
        elif kind == "dask":
            import distributed

            cluster = local_cluster(workers, dask_defaults)
            client = distributed.Client(cluster)
            client.run(_warm)  # coalloc imported in every worker: not counted
            executor = client.get_executor()
            worker_pids = set(client.run(os.getpid).values())
        elif kind == "dask-cli":  # the scheduler a process of its own: in "other"
            cli = stack.enter_context(cli_cluster(workers))
            cli.run(_warm)
            executor = cli.get_executor()
            worker_pids = set(cli.run(os.getpid).values())
        time.sleep(0.2)  # let start-up work settle
        floor = None
        if kind.startswith("dask") and IDLE_FLOOR_SECONDS > 0:  # the idle cluster's cost
            c0, t0 = _cpu(me.cpu_times()), time.perf_counter()
            time.sleep(IDLE_FLOOR_SECONDS)
            floor = (_cpu(me.cpu_times()) - c0) / (time.perf_counter() - t0)
        kids0 = _children_cpu(me)
        parent0 = _cpu(me.cpu_times())
        main0 = _main_thread_cpu(me)
        profiler = cProfile.Profile() if profile else None
        with _ChunkLog() as log:
            if profiler is not None:
                profiler.enable()
            start = time.perf_counter()
            results = _solve(batch, kind, executor, workers, seed, chunksize)
            wall = time.perf_counter() - start
            if profiler is not None:
                profiler.disable()
        parent = _cpu(me.cpu_times()) - parent0
        main = _main_thread_cpu(me) - main0
        kids1 = _children_cpu(me)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        elif executor is not None and cli is None:
            executor.shutdown()
        stack.close()
    per_kid = {pid: kids1[pid] - kids0.get(pid, 0.0) for pid in kids1}
    if worker_pids is None:
        worker_cpu: List[float] = []
        other = sum(per_kid.values())
    else:
        worker_cpu = [per_kid.get(pid, 0.0) for pid in sorted(worker_pids)]
        other = sum(v for pid, v in per_kid.items() if pid not in worker_pids)
    text = _profile_text(profiler, 18)
    return {
        "wall": wall, "parent": parent, "main": main, "workers": worker_cpu, "other": other,
        "chunks": log.sizes, "answers": [answer(r) for r in results], "profile": text,
        "floor": floor,
    }  # fmt: skip


def _pool_families(family: str) -> Tuple[str, ...]:
    """The families a warm pool for ``family``'s batch warms (all five for "mixed")."""
    return tuple(FAMILIES) if family == "mixed" else (family,)


def worker_cpu(family: str, k: int, seed: int, chunk: int, profile: bool = False) -> dict:
    """The work of a process worker, in this process: each chunk of ``chunk`` instances
    packed as the calling process packs it (large arrays to files), its bytes unpickled,
    solved and the records pickled back (large arrays to files, read in "unpack"),
    against the serial loop on another fresh batch (both start cold)."""
    import pickle
    import tempfile

    from coalloc.batch.run import _check_item
    from coalloc.batch.shipping import Shipper, _cache, received
    from coalloc.batch.worker import _solve_chunk

    args = (None, {}, False, None)
    batch = family_batch(family, k, seed=seed)
    items = [(i, _check_item(item), i) for i, item in enumerate(batch)]
    chunks = [items[j : j + chunk] for j in range(0, k, chunk)]
    _cache.clear()
    with tempfile.TemporaryDirectory() as folder:
        shipper = Shipper(folder=folder)
        t0 = time.process_time()
        blobs = [pickle.dumps(shipper.pack(c)[0], protocol=pickle.HIGHEST_PROTOCOL)
                 for c in chunks]  # fmt: skip
        pack = time.process_time() - t0
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        t0 = time.process_time()
        back = [pickle.dumps(_solve_chunk(pickle.loads(b), *args), protocol=pickle.HIGHEST_PROTOCOL)
                for b in blobs]  # fmt: skip
        work = time.process_time() - t0
        if profiler is not None:
            profiler.disable()
        t0 = time.process_time()
        results = [r for b in back for r in received(pickle.loads(b))]  # files read here
        unpack = time.process_time() - t0
    _cache.clear()
    batch = family_batch(family, k, seed=seed)
    t0 = time.process_time()
    serial = _solve_chunk([(i, _check_item(item), i) for i, item in enumerate(batch)], *args)
    serial_cpu = time.process_time() - t0
    text = _profile_text(profiler, 25)
    return {
        "serial": serial_cpu, "pack": pack, "work": work, "unpack": unpack,
        "same": [answer(r) for r in results] == [answer(r) for r in serial], "profile": text,
    }  # fmt: skip


_BLOCK = os.urandom(1 << 20)


def _sha(n: int) -> None:
    for _ in range(n):
        hashlib.sha256(_BLOCK).digest()  # C that releases the GIL: threads run in parallel


def cores_given(w: int, blocks: int = 120) -> float:
    """How many cores the machine gives ``w`` busy threads right now, in units of what it
    gives one (a perfectly parallel control: SHA-256 of 1 MB blocks, ``blocks`` per thread,
    against the same total on one thread). On a quiet machine with ``w`` free cores: ``w``;
    when other jobs hold the cores, less. The model's ``C`` on a shared machine."""
    start = time.perf_counter()
    _sha(w * blocks)
    one = time.perf_counter() - start
    with cf.ThreadPoolExecutor(w) as pool:
        start = time.perf_counter()
        list(pool.map(_sha, [blocks] * w))
        many = time.perf_counter() - start
    return one / many


#: The worker counts the model predicts for (issue 41).
PREDICT_AT = (4, 8, 16, 64)


def predict(serial: float, parent: float, workers: float, other: float, imbalance: float,
            w: int, cores: Optional[int] = None, *, start: float = 0.0,
            batch: Optional[Tuple[int, int]] = None) -> float:  # fmt: skip
    """The speed-up the batch model predicts on ``w`` workers (``docs/performance.md``).

    Parameters
    ----------
    serial, parent, workers, other : float
        CPU seconds per instance: of the serial loop, of the calling process (the
        scheduler's too on a local Dask cluster), of all the workers together, of the
        other processes (Dask's nannies), measured on any number of workers.
    imbalance : float
        The busiest worker's CPU over the mean worker's.
    w : int
        Workers.
    cores : int, optional
        Cores the batch has; None: ``w + 1`` (one per worker, one for the caller).
    start : float
        CPU seconds a fresh worker spends once, on its first instance (importing the
        family: :func:`start_cpu`), inside ``workers``.
    batch : (int, int), optional
        ``(k, m)``: the batch has ``k`` instances, and ``workers`` was measured on ``m``
        workers (each paying ``start`` once). None: no start cost (``start`` ignored).

    Returns
    -------
    float
        ``serial * k / max(max(W * k * imbalance / w, W * ceil(k / w)) + start, parent * k,
        (W * k + w * start + (parent + other) * k) / cores)`` with ``W = workers - m * start
        / k``, the workers' CPU per instance without their start: the busiest worker (at
        least ``ceil(k / w)`` whole instances), the calling process (one thread: it does not
        scale) and all the CPU spread over the cores, whichever is longest.
    """
    cores = w + 1 if cores is None else cores
    if batch is None:
        return serial / max(workers * imbalance / w, parent, (workers + parent + other) / cores)
    k, m = batch
    steady = max(workers - m * start / k, 0.0)
    # instances are whole: the busiest worker solves at least ceil(k / w) of them (a 10 s
    # CTAAP batch is 57 instances: 4 on some of 16 workers, not 3.6)
    busiest = max(steady * k * imbalance / w, steady * math.ceil(k / w)) + start
    total = steady * k + w * start + (parent + other) * k
    return serial * k / max(busiest, parent * k, total / cores)


_START = r"""
import pickle, sys, time
import bench.shared.scaling  # what a process worker has imported before its first chunk
from coalloc.batch.worker import _solve_chunk
if sys.argv[2:]:  # a warm pool's worker (coalloc.batch.pool): its start's warm-up first
    from coalloc.batch.warm import _warm
    _warm(tuple(sys.argv[2].split(",")))
blobs = pickle.loads(open(sys.argv[1], "rb").read())
cpu = []
for blob in blobs:
    t0 = time.process_time()
    _solve_chunk([(0, pickle.loads(blob), 0)], None, {}, False, None)
    cpu.append(time.process_time() - t0)
print(cpu[0] - min(cpu[1:]))
"""


def start_cpu(family: str, seed: int, repeats: int = 3, warm: bool = False) -> float:
    """CPU seconds a fresh process worker spends once, on its first instance of ``family``,
    beyond what a later one costs: the family's import (SciPy's included where it imports
    it), first-use caches. Median of ``repeats`` fresh interpreters, each unpickling and
    solving three instances as a worker does (:func:`_solve_chunk`). With ``warm``: a
    worker of :func:`coalloc.batch.pool`, which warmed the family at its start (what its
    first instance still pays beyond a later one)."""
    import pickle
    import statistics
    import subprocess
    import tempfile

    from coalloc.batch.run import _check_item

    blobs = [pickle.dumps(_check_item(item), protocol=pickle.HIGHEST_PROTOCOL)
             for item in family_batch(family, 3, seed=seed)]  # fmt: skip
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.pathsep.join([os.path.dirname(os.path.dirname(os.path.abspath(coalloc.__file__))),
                            root])  # fmt: skip
    env = {**os.environ, "PYTHONPATH": path}
    with tempfile.TemporaryDirectory() as folder:
        file = os.path.join(folder, "blobs.pkl")
        with open(file, "wb") as fh:
            pickle.dump(blobs, fh)
        got = []
        for _ in range(repeats):
            extra = [",".join(_pool_families(family))] if warm else []
            out = subprocess.run([sys.executable, "-c", _START, file, *extra], capture_output=True,
                                 text=True, env=env, check=True)  # fmt: skip
            got.append(max(0.0, float(out.stdout.split()[-1])))
    return statistics.median(got)


#: The serial work of the batch the predictions at PREDICT_AT are for (issue 41's target:
#: batches of at least 10 s of serial work).
PREDICT_SERIAL = 10.0


def _chunks_text(sizes: List[int]) -> str:
    if not sizes:
        return "-"
    return f"{len(sizes)}: {sizes[0]}..{max(sizes)}..{sizes[-1]}"


def _print_against(rows: Dict[Tuple[str, str], dict], families: List[str], kinds: List[str],
                   w: int) -> None:  # fmt: skip
    """Each Dask kind of a run against its processes: the caller's ms per instance (main
    thread), the workers' CPU over the serial CPU, and Dask / processes, measured on the
    wall clock and by the model on the cores given (issue 41: at least 0.9x)."""
    dasks = [kind for kind in kinds if kind.startswith("dask")]
    if "processes" not in kinds or not dasks:
        return
    print(f"\n| family | executor | caller ms/inst (main thread) | workers x serial | "
          f"Dask / processes on {w} (wall) | (model) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    for family in families:
        base = rows[family, "processes"]
        for kind in ["processes", *dasks]:
            r = rows[family, kind]
            ratio = "" if kind == "processes" else f"{base['wall'] / r['wall']:.2f}x"
            model = "" if kind == "processes" else f"{r['model'] / base['model']:.2f}x"
            say(f"| {family} | {kind} | {r['caller'] * 1e3:.3f} ({r['main'] * 1e3:.3f}) | "
                f"{r['excess']:.2f}x | {ratio} | {model} |")  # fmt: skip


def _print_floors(floors: List[tuple]) -> None:
    """Each Dask run's caller CPU per instance split into its idle cluster's floor times the
    batch's wall (:data:`IDLE_FLOOR_SECONDS`) and the rest (the caller's work per chunk and
    per instance)."""
    if not floors:
        return
    print("\n| family | executor | caller ms/inst | idle floor ms/s | floor x wall ms/inst | "
          "rest ms/inst |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    for family, kind, caller, floor, wall in floors:
        say(f"| {family} | {kind} | {caller * 1e3:.3f} | {floor * 1e3:.1f} | "
            f"{floor * wall * 1e3:.3f} | {(caller - floor * wall) * 1e3:.3f} |")  # fmt: skip


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--families", nargs="+", default=list(FAMILIES),
                    choices=[*FAMILIES, "mixed"])  # fmt: skip
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--kinds", nargs="+", default=["processes", "dask"],
                    choices=["threads", "processes", "pool", "pool-cold", "dask", "dask-cli"],
                    help="dask: a local cluster, its scheduler and client in this process; "
                    "dask-cli: 'dask scheduler' and 'dask worker' started as processes of their "
                    "own (the caller's CPU is the client's alone; the scheduler's is in "
                    "'nannies')")  # fmt: skip
    ap.add_argument("--instances", type=int, default=None,
                    help="instances per batch (default: per family, CPU_SIZES)")  # fmt: skip
    ap.add_argument("--chunksize", default="auto", help="'auto' or a number")
    ap.add_argument("--profile", nargs="*", default=None, metavar="KIND",
                    help="print a cProfile of the calling process for these kinds")  # fmt: skip
    ap.add_argument("--worker", type=int, default=None, metavar="CHUNK",
                    help="only the work of a process worker in this process, chunks of CHUNK "
                    "(see worker_cpu)")  # fmt: skip
    ap.add_argument(
        "--dask-defaults",
        action="store_true",
        help="the local Dask cluster as installed, not with DASK_BATCH_CONFIG",
    )
    ap.add_argument("--seed", type=int, default=2024)
    add_quiet(ap)
    args = ap.parse_args(argv)
    chunksize = args.chunksize if args.chunksize == "auto" else int(args.chunksize)
    profile = set(args.profile or [])
    w = args.workers
    if args.worker is not None:
        print(
            "| family (instances) | chunk | serial ms/inst | pack ms/inst | worker ms/inst "
            "(x serial) | results unpickled ms/inst | same answers |"
        )
        print("|---|---:|---:|---:|---:|---:|---|")
        texts = []
        for family in args.families:
            k = args.instances or CPU_SIZES[family]
            o = worker_cpu(family, k, args.seed, args.worker, profile=args.profile is not None)
            print(f"| {family} ({k}) | {args.worker} | {o['serial'] / k * 1e3:.3f} | "
                  f"{o['pack'] / k * 1e3:.3f} | {o['work'] / k * 1e3:.3f} "
                  f"({o['work'] / o['serial']:.2f}x) | {o['unpack'] / k * 1e3:.3f} | "
                  f"{'yes' if o['same'] else 'NO'} |")  # fmt: skip
            if o["profile"]:
                texts.append((family, o["profile"]))
        for family, text in texts:
            print(f"\n### cProfile of the worker's work: {family}\n")
            print(text)
        return 0
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()}, "
          f"Python {sys.version.split()[0]}, coalloc {coalloc.__version__}")  # fmt: skip
    print(f"\n| family (instances) | executor | serial ms/inst | parent ms/inst (main thread) | "
          f"workers ms/inst (x serial) | nannies ms/inst | busiest/mean worker | "
          f"bound on {w} cores | overhead CPU ms/inst | chunks (n: first..max..last) | "
          f"same answers | cores given (control) | measured {w} (wall) | predicted {w} on the "
          f"cores given | worker start ms | predicted {', '.join(map(str, PREDICT_AT))} "
          f"({PREDICT_SERIAL:g} s batch) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---|")
    profiles = []
    floors: List[tuple] = []  # (family, kind, caller s/inst, idle floor s/s, wall s/inst)
    rows: Dict[Tuple[str, str], dict] = {}  # (family, kind) -> the figures compared below
    progress = bar(total=len(args.families) * (1 + len(args.kinds)))
    for family in args.families:
        k = args.instances or CPU_SIZES[family]
        serial = cpu_config(family, k, "serial", 1, args.seed, chunksize,
                            profile="serial" in profile)  # fmt: skip
        base = serial["parent"]
        progress.update(1)
        if serial["profile"]:
            profiles.append((family, "serial", serial["profile"]))
        # a process worker imports the family in the batch (a Dask worker before: _warm)
        first = start_cpu(family, args.seed) if "processes" in args.kinds else 0.0
        # a warm pool's worker: what its first instance pays after the warm-up
        warm = start_cpu(family, args.seed, warm=True) if "pool" in args.kinds else 0.0
        for kind in args.kinds:
            given = cores_given(w)  # the machine's share right now, before and after
            out = cpu_config(family, k, kind, w, args.seed, chunksize, profile=kind in profile,
                             dask_defaults=args.dask_defaults)  # fmt: skip
            given = min(w, (given + cores_given(w)) / 2)
            total = out["parent"] + sum(out["workers"]) + out["other"]
            # threads: one process, its threads' shares unknown (taken as even)
            busiest = max(out["workers"]) if out["workers"] else total / w
            mean = sum(out["workers"]) / len(out["workers"]) if out["workers"] else busiest
            bound = base / max(total / w, busiest)
            wsum = sum(out["workers"]) if out["workers"] else out["parent"]
            accounting = (base / k, out["parent"] / k, wsum / k, out["other"] / k, busiest / mean)

            start = {"processes": first, "pool": warm}.get(kind, 0.0)
            big = max(1, math.ceil(PREDICT_SERIAL / max(base / k, 1e-9)))  # K = 10 s / s

            def at(n, cores=None, size=k, accounting=accounting, start=start):
                return predict(*accounting, n, cores, start=start, batch=(size, w))

            say(f"| {family} ({k}) | {kind} | {base / k * 1e3:.3f} | "
                f"{out['parent'] / k * 1e3:.3f} ({out['main'] / k * 1e3:.3f}) | "
                f"{wsum / k * 1e3:.3f} ({wsum / base:.2f}x) | "
                f"{out['other'] / k * 1e3:.3f} | {busiest / mean:.2f} | {bound:.2f}x | "
                f"{(total - base) / k * 1e3:+.3f} | "
                f"{_chunks_text(out['chunks'])} | "
                f"{'yes' if out['answers'] == serial['answers'] else 'NO'} | "
                f"{given:.2f} | {serial['wall'] / out['wall']:.2f}x | {at(w, given):.2f}x | "
                f"{start * 1e3:.0f} | "
                f"{' / '.join(f'{at(n, size=big):.1f}' for n in PREDICT_AT)} |")  # fmt: skip
            rows[family, kind] = {"caller": out["parent"] / k, "main": out["main"] / k,
                                  "excess": wsum / base, "wall": out["wall"],
                                  "model": at(w, given)}  # fmt: skip
            progress.update(1)
            if out["profile"]:
                profiles.append((family, kind, out["profile"]))
            if out["floor"] is not None:
                floors.append((family, kind, out["parent"] / k, out["floor"], out["wall"] / k))
    progress.close()
    _print_against(rows, args.families, args.kinds, w)
    _print_floors(floors)
    for family, kind, text in profiles:
        print(f"\n### cProfile of the calling process: {family}, {kind}\n")
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
