"""Issue 36: how far past its time limit each CTAAP method returns, and with what answer.

For every method (``greedy`` with unbounded restarts so that the limit stops it, the
default ``ctaap``, i.e. its anytime search, and ``exact`` on HiGHS and CP-SAT) and every
limit T (``--limits``), on instances of two generators (sparse random requests of
``--sparse`` tasks, the setup of bench_scale, and the paper's Fig. 3 complete requests of
``--fig3`` tasks): the call's elapsed time minus T (the overrun), the status and the tasks
allocated (every answer checked by ``coalloc.verify``), ``--repeats`` times, in this warm
process. ``--fresh`` also runs the default through the command line in a fresh process
(``coalloc solve FILE --time-limit T --json``), as every CLI call is: the process's wall
time, and the call's own time from the JSON. ``--load K`` runs K busy processes alongside.
The target: a return within T + max(0.05 s, 0.05 T).

    python -m bench.ctaap.overrun --limits 0.05 0.5 5 --repeats 3 --fresh
    python -m bench.ctaap.overrun --limits 10 --sparse 5000 --fig3 --methods ctaap
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time

import coalloc
import coalloc.ctaap as ct
from bench.ctaap.vs_ip_budget import sparse_instance
from bench.shared._progress import add_quiet, bar, say

METHODS = {
    "greedy": ("greedy", {"order": "random", "restarts": 10**9}),
    "ctaap": ("ctaap", {}),
    "exact-highs": ("exact", {"solver": "highs"}),
    "exact-cpsat": ("exact", {"solver": "cpsat"}),
}


def _busy(stop_at: float) -> None:  # pragma: no cover - a load generator
    x = 0
    while time.time() < stop_at:
        x = (x * 31 + 7) % 1_000_003


def allowed(T: float) -> float:
    return T + max(0.05, 0.05 * T)


def run_warm(name, req, off, method, params, T):
    t0 = time.perf_counter()
    res = coalloc.solve(req, off, method, seed=0, time_limit=T, **params)
    elapsed = time.perf_counter() - t0
    if res.has_solution and not coalloc.verify(req, off, res.assignment).feasible:
        sys.exit(f"INFEASIBLE {name} {method} answer")
    return elapsed, res.status, int(res.n_allocated) if res.has_solution else None


def run_fresh(path, T):
    cmd = [sys.executable, "-c", "import sys; from coalloc.cli import main; sys.exit(main())",
           "solve", path, "--time-limit", str(T), "--json"]  # fmt: skip
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    data = json.loads(out.stdout)
    return wall, data["timings"]["total"], data["status"], data.get("n_allocated")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", type=float, nargs="+", default=[0.05, 0.5, 5.0])
    ap.add_argument("--sparse", type=int, default=2000, help="tasks of the sparse instance")
    ap.add_argument("--fig3", type=int, default=300, help="tasks of the Fig. 3 instance")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--fresh", action="store_true", help="also the CLI in fresh processes")
    ap.add_argument("--load", type=int, default=0, help="busy processes alongside")
    add_quiet(ap)
    args = ap.parse_args(argv)
    insts = {
        f"sparse{args.sparse}": sparse_instance(args.sparse, 10, seed=0),
        f"fig3-{args.fig3}": ct.generators.fig3(args.fig3, seed=0),
    }
    procs = []
    if args.load:
        stop_at = time.time() + 3600
        procs = [mp.Process(target=_busy, args=(stop_at,), daemon=True) for _ in range(args.load)]
        for p in procs:
            p.start()
    print(f"# load average at start: {os.getloadavg()}; busy processes: {args.load}")
    print("| instance | method | T (s) | overrun median (s) | overrun max (s) | within target "
          "| statuses | allocated |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    rows = len(args.methods) * len(args.limits) + (len(args.limits) if args.fresh else 0)
    pbar = bar(total=len(insts) * rows, desc="overrun", unit="row", leave=False)
    try:
        for name, (req, off) in insts.items():
            for key in args.methods:
                method, params = METHODS[key]
                for T in args.limits:
                    runs = [run_warm(name, req, off, method, params, T)
                            for _ in range(args.repeats)]  # fmt: skip
                    over = [e - T for e, _, _ in runs]
                    ok = sum(e <= allowed(T) for e, _, _ in runs)
                    say(f"| {name} | {key} | {T:g} | {statistics.median(over):+.3f} | "
                        f"{max(over):+.3f} | {ok}/{len(runs)} | "
                        f"{','.join(sorted({s for _, s, _ in runs}))} | "
                        f"{sorted({a for _, _, a in runs}, key=str)} |")  # fmt: skip
                    sys.stdout.flush()
                    pbar.update(1)
            if args.fresh:
                with tempfile.TemporaryDirectory() as tmp:
                    path = os.path.join(tmp, "inst.json")
                    ct.write_instance(path, req, off)
                    for T in args.limits:
                        runs = [run_fresh(path, T) for _ in range(args.repeats)]
                        walls = [w - T for w, _, _, _ in runs]
                        calls = [c - T for _, c, _, _ in runs]
                        ok = sum(c <= allowed(T) for _, c, _, _ in runs)
                        say(f"| {name} | ctaap, fresh CLI process (call / process wall) | "
                            f"{T:g} | {statistics.median(calls):+.3f} / "
                            f"{statistics.median(walls):+.3f} | {max(calls):+.3f} / "
                            f"{max(walls):+.3f} | {ok}/{len(runs)} | "
                            f"{','.join(sorted({s for _, _, s, _ in runs}))} | "
                            f"{sorted({a for *_, a in runs}, key=str)} |")  # fmt: skip
                        sys.stdout.flush()
                        pbar.update(1)
    finally:
        pbar.close()
        for p in procs:
            p.terminate()
    print(f"# load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
