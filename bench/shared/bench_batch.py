"""Batch throughput of ``coalloc.solve_many``: serial loop, 1 and 2 threads, 2 processes.

Solves the same batch of paper-sized instances (Fig. 2 setup: n = 50, M = 5; Fig. 3 setup:
n = 500, M = 5) with a plain loop over ``coalloc.solve`` and with ``solve_many`` on 1 thread,
2 threads and 2 worker processes (a warm pool, so pool start-up is not counted), in one
run. The configurations are interleaved round-robin in every repeat so that background load
hits them alike; the table gives the median throughput (instances per second) over the
repeats and, in parentheses, the best. Every answer is checked with ``coalloc.verify`` and
against the serial answers (same seeds, same allocations).

Two more measurements explain the thread scaling:

- a **control**, interleaved with the same repeats: 1 vs 2 threads on a pure C workload
  that never holds the GIL (``hashlib.sha256`` of 1 MB blocks, as long as the batch), i.e.
  how much of a second core the machine gives right now, whatever Python does; and the
  CPU cores the process actually used (process CPU time / wall time) and the CPU time per
  instance with 1 and 2 threads (equal CPU per instance means two threads cost no extra
  work: on two free cores they would double the throughput);
- a **GIL breakdown** of one solve: wall time per stage with the GIL held or released (the
  compiled kernels release it; the validation, the Python orchestration of
  ``coalloc/ctaap.py`` and ``solvers.py`` and the result construction hold it), measured by
  timing wrappers installed around those functions in this process only.

    python -m bench.shared.bench_batch                          # n = 50 and 500
    python -m bench.shared.bench_batch --sizes 50 --instances 64 --repeats 9
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import os
import platform
import statistics
import threading
import time
from collections import defaultdict

import numpy as np

import coalloc
import coalloc.ctaap.solver as ctaap
import coalloc.ctaap.solvers as solvers
from bench.shared._progress import add_quiet, bar
from coalloc.batch import instance_seed
from coalloc.ctaap.generators import fig2, fig3

SEED = 2008


def row(*cells) -> str:
    """One row of a Markdown table."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def make_batch(n: int, k: int) -> list:
    if n == 50:
        return [fig2(1 + s % 5, seed=s) for s in range(k)]
    return [fig3(n, seed=s) for s in range(k)]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


# ---------------------------------------------------------------- throughput


_DATA = os.urandom(1 << 20)


def _sha(_):
    return hashlib.sha256(_DATA).digest()  # pure C that releases the GIL (large buffer)


def run_config(name: str, batch: list, pool, chunksize: int, jobs: int = 0):
    if name == "serial loop":
        return [
            coalloc.solve(req, off, seed=instance_seed(SEED, i))
            for i, (req, off) in enumerate(batch)
        ]
    if name == "1 thread":
        return coalloc.solve_many(batch, n_jobs=1, seed=SEED, chunksize=chunksize)
    if name == "2 threads":
        return coalloc.solve_many(batch, n_jobs=2, seed=SEED, chunksize=chunksize)
    if name == "2 processes":
        return coalloc.solve_many(batch, executor=pool, n_jobs=2, seed=SEED, chunksize=chunksize)
    if name.startswith("control"):
        with cf.ThreadPoolExecutor(int(name[-1])) as threads:
            return list(threads.map(_sha, range(jobs)))
    raise ValueError(name)


CONFIGS = ("serial loop", "1 thread", "2 threads", "2 processes")
CONTROLS = ("control 1", "control 2")


def throughput(batch: list, repeats: int, pool, chunksize: int) -> tuple:
    """Median and best rate per configuration (controls included) and the CPU cores used."""
    reference = run_config("serial loop", batch, pool, chunksize)
    for (req, off), res in zip(batch, reference):
        assert coalloc.verify(req, off, res.assignment).feasible, "infeasible output"
    for name in CONFIGS:  # warm-up, and the same answers everywhere
        for res, ref in zip(run_config(name, batch, pool, chunksize), reference):
            assert np.array_equal(res.assignment, ref.assignment), name
    # a control batch that takes about as long as the solver batch on one thread
    t0 = time.perf_counter()
    run_config("1 thread", batch, pool, chunksize)
    t_batch = time.perf_counter() - t0
    t0 = time.perf_counter()
    _sha(0)
    jobs = max(4, 2 * round(t_batch / (2 * (time.perf_counter() - t0))))
    rates, cores, cpu = defaultdict(list), defaultdict(list), defaultdict(list)
    for _ in bar(range(repeats), desc="repeats", leave=False):
        for name in CONFIGS + CONTROLS:
            c0, t0 = time.process_time(), time.perf_counter()
            run_config(name, batch, pool, chunksize, jobs)
            wall, busy = time.perf_counter() - t0, time.process_time() - c0
            rates[name].append((jobs if name in CONTROLS else len(batch)) / wall)
            cores[name].append(busy / wall)
            cpu[name].append(1e3 * busy / len(batch))
    summary = {name: (statistics.median(r), max(r)) for name, r in rates.items()}
    used = {name: statistics.median(c) for name, c in cores.items()}
    cpu_ms = {name: statistics.median(c) for name, c in cpu.items()}
    return summary, used, cpu_ms


# ---------------------------------------------------------------- GIL breakdown

#: (owner, attribute, label, releases the GIL)
STAGES = [
    (solvers, "check_compatible", "solve(): check_compatible", False),
    (ctaap, "check_compatible", "solve_ctaap: check_compatible", False),
    (ctaap, "_check_params", "solve_ctaap: _check_params", False),
    (ctaap, "_resolve_compat", "solve_ctaap: _resolve_compat", False),
    (ctaap, "_resolve_scale", "solve_ctaap: _resolve_scale", False),
    (ctaap, "compatibility", "model.compatibility (NumPy, n x m)", False),
    (ctaap, "SolveResult", "SolveResult construction", False),
    (ctaap._Compiled, "edge_ranks", "kernel edge_ranks", True),
    (ctaap._Compiled, "graduated_assignment", "kernel graduated_assignment (step 1)", True),
    (ctaap._Compiled, "match_and_clean", "kernel match_and_clean (steps 2-3)", True),
    (ctaap._Compiled, "fill_free", "kernel fill_free", True),
    (ctaap._Compiled, "improve", "kernel improve (local search)", True),
]


def gil_breakdown(batch: list, repeats: int) -> tuple:
    """Mean microseconds per solve spent in each stage, one thread, no other Python threads."""
    spent = defaultdict(float)
    originals = []
    for owner, attr, label, _ in STAGES:
        orig = owner.__dict__[attr]
        func = orig.__func__ if isinstance(orig, staticmethod) else orig

        def timed(*args, _func=func, _label=label, **kwargs):
            t0 = time.perf_counter()
            try:
                return _func(*args, **kwargs)
            finally:
                spent[_label] += time.perf_counter() - t0

        setattr(owner, attr, staticmethod(timed) if isinstance(orig, staticmethod) else timed)
        originals.append((owner, attr, orig))
    try:
        calls = 0
        total = 0.0
        for _ in bar(range(repeats), desc="repeats", leave=False):
            for i, (req, off) in enumerate(batch):
                t0 = time.perf_counter()
                coalloc.solve(req, off, seed=instance_seed(SEED, i))
                total += time.perf_counter() - t0
                calls += 1
    finally:
        for owner, attr, orig in originals:
            setattr(owner, attr, orig)
    per = {label: 1e6 * spent[label] / calls for _, _, label, _ in STAGES}
    return 1e6 * total / calls, per


def per_item_cost(batch: list, repeats: int = 20000) -> float:
    """Microseconds solve_many spends per instance in the caller: seed and item check."""
    from coalloc.batch import _check_item

    t0 = time.perf_counter()
    for i in range(repeats):
        instance_seed(SEED, i)
        _check_item(batch[0])
    return 1e6 * (time.perf_counter() - t0) / repeats


def thread_dispatch(repeats: int = 2000) -> float:
    """Microseconds of a ThreadPoolExecutor round trip of a no-op (GIL held throughout)."""
    with cf.ThreadPoolExecutor(1) as pool:
        pool.submit(int).result()
        t0 = time.perf_counter()
        for _ in bar(range(repeats), desc="repeats", leave=False):
            pool.submit(int).result()
        return 1e6 * (time.perf_counter() - t0) / repeats


def gil_probe(batch: list) -> tuple:
    """Longest and 99th-percentile gap (ms) between wake-ups of a Python thread that sleeps
    0.5 ms in a loop while the main thread solves; a kernel that held the GIL would stall it
    for the kernel's whole duration (tens of ms at n = 500)."""
    gaps, stop = [], threading.Event()

    def probe():
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.0005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    thread = threading.Thread(target=probe)
    thread.start()
    t0 = time.perf_counter()
    for i, (req, off) in enumerate(batch[:3]):
        coalloc.solve(req, off, seed=instance_seed(SEED, i))
    per_solve = (time.perf_counter() - t0) / min(3, len(batch))
    stop.set()
    thread.join()
    gaps.sort()
    return 1e3 * gaps[-1], 1e3 * gaps[int(0.99 * (len(gaps) - 1))], 1e3 * per_solve


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(ap)
    ap.add_argument("--sizes", type=int, nargs="+", default=[50, 500], choices=[50, 500])
    ap.add_argument("--instances", type=int, default=None, help="per size (64 / 8)")
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    print(
        f"# {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, coalloc "
        f"{coalloc.__version__}; threads alive: {threading.active_count()}"
    )
    print(f"# load average (1/5/15 min) at start: {load()}")
    print()
    header = (
        "n", "instances", "chunksize", *(f"{c} (inst/s)" for c in CONFIGS),
        "2 threads / 1 thread", "2 processes / 1 thread", "control: 2 / 1 threads",
        "CPU cores used, 1 / 2 threads", "CPU ms per instance, 1 / 2 threads",
    )  # fmt: skip
    print(row(*header))
    print(row(*["---"] * len(header)))
    batches = {}
    with cf.ProcessPoolExecutor(2) as pool:
        list(pool.map(int, range(4)))  # start the workers
        for n in args.sizes:
            k = args.instances or (64 if n == 50 else 8)
            batches[n] = batch = make_batch(n, k)
            chunksize = 4 if n == 50 else 1
            res, used, cpu_ms = throughput(batch, args.repeats, pool, chunksize)
            cells = [f"{med:.1f} ({best:.1f})" for med, best in (res[c] for c in CONFIGS)]
            one = res["1 thread"][0]
            ratios = (
                f"{res['2 threads'][0] / one:.2f}",
                f"{res['2 processes'][0] / one:.2f}",
                f"{res['control 2'][0] / res['control 1'][0]:.2f}",
                f"{used['1 thread']:.2f} / {used['2 threads']:.2f}",
                f"{cpu_ms['1 thread']:.2f} / {cpu_ms['2 threads']:.2f}",
            )
            print(row(n, k, chunksize, *cells, *ratios))
    print()
    print(f"# load average at end: {load()}")
    print()
    print(f"Where a solve spends its time, one thread (mean us per solve over {args.repeats} "
          "passes; 'released' = inside a kernel that releases the GIL):")  # fmt: skip
    print()
    for n, batch in batches.items():
        total, per = gil_breakdown(batch, max(1, args.repeats // 2))
        released = sum(per[label] for _, _, label, rel in STAGES if rel)
        held_named = sum(per[label] for _, _, label, rel in STAGES if not rel)
        print(f"n = {n}:")
        print()
        print(row("stage", "GIL", "us per solve", "share"))
        print(row("---", "---", "---", "---"))
        for _, _, label, rel in STAGES:
            print(row(label, "released" if rel else "held", f"{per[label]:.1f}",
                      f"{100 * per[label] / total:.1f}%"))  # fmt: skip
        other = total - released - held_named
        print(row("other Python in solve() / solve_ctaap (rng, argsort, dicts, ...)", "held",
                  f"{other:.1f}", f"{100 * other / total:.1f}%"))  # fmt: skip
        held = total - released
        print(row("**total**", "", f"{total:.1f}", "100%"))
        print(row("**GIL held**", "", f"{held:.1f}", f"{100 * held / total:.1f}%"))
        over = per_item_cost(batch)
        print()
        print(
            f"solve_many's own per-instance work in the caller (seed, item check): {over:.1f} us; "
            f"thread-pool round trip: {thread_dispatch():.1f} us. With a share h of each solve "
            f"holding the GIL, 2 threads can reach at most min(2, 1/h) = "
            f"{min(2.0, total / held):.2f}x."
        )
        worst, p99, per_solve = gil_probe(batch)
        print(
            f"GIL probe: a Python thread ticking every 0.5 ms while solves of {per_solve:.1f} ms "
            f"run: longest gap {worst:.1f} ms, 99th percentile {p99:.2f} ms."
        )
        print()


if __name__ == "__main__":
    main()
