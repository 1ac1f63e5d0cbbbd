"""Issue 36: the cost and the reproducibility of ``--bound`` on a batch of Fig. 2 or 3 instances.

Writes ``--count`` Fig. 2 instances (range factors 1..5 in turn, seeds 360000 + k; with
``--figure 3`` Fig. 3 instances of 10-300 tasks in turn, seeds 370000 + k, as
``bench.ctaap.bound_cost``), then
times ``coalloc ctaap solve-batch`` on them without ``--bound``, with ``--bound``, and with
``--bound`` again while ``--load`` busy processes run alongside, each in a fresh process
(``--jobs`` workers). The bounds of the two ``--bound`` runs are compared instance by
instance (they must be equal: the bound's work is capped by counts, not by the clock), and
the statuses are checked against the rule (``optimal`` exactly when the allocation meets
the bound). ``--src`` runs another checkout's package (e.g. main before issue 36) the same
way, for the before/after figures.

    python -m bench.ctaap.bound_batch --count 300 --jobs 2 --load 2
    python -m bench.ctaap.bound_batch --figure 3 --count 100 --jobs 2 --no-load-run
    python -m bench.ctaap.bound_batch --count 300 --src /path/to/old/src --no-load-run
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import tempfile
import time

import coalloc.ctaap as ct
from bench.ctaap.bound_cost import instances
from bench.shared._progress import add_quiet, bar
from coalloc.cli._common import count, seconds


def _busy(stop_at: float) -> None:  # pragma: no cover - a load generator
    x = 0
    while time.time() < stop_at:
        x = (x * 31 + 7) % 1_000_003


#: CPU seconds of each run_batch call, in order.
CPU: list = []


def run_batch(files, out, jobs, bound, src, effort=None):
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src
    cmd = [sys.executable, "-c", "import sys; from coalloc.cli import main; sys.exit(main())",
           "ctaap", "solve-batch", *files, "-o", out, "--quiet", "-j", str(jobs)]  # fmt: skip
    if bound:
        cmd.append("--bound")
        if effort is not None:
            cmd += ["--bound-effort", str(effort)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, capture_output=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    CPU.append(cpu)  # the batch's processes' CPU time (steadier than wall time under load)
    with open(out) as fh:
        lines = [json.loads(x) for x in fh]
    return wall, lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figure", type=int, choices=(2, 3), default=2)
    ap.add_argument("--count", type=count(), default=300)
    ap.add_argument("--jobs", type=count(), default=2)
    ap.add_argument("--load", type=count(0), default=2, help="busy processes in the loaded run")
    ap.add_argument("--src", default=None, help="PYTHONPATH of the package to time")
    ap.add_argument("--effort", type=seconds("a positive number"), default=None,
                    help="--bound-effort")  # fmt: skip
    ap.add_argument("--no-load-run", action="store_true", help="skip the run under load")
    add_quiet(ap)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        batch = instances(args.figure, args.count)
        for k, (req, off) in enumerate(bar(batch, desc="instances", unit="inst", leave=False)):
            path = os.path.join(tmp, f"fig{args.figure}_{k:04d}.json")
            ct.write_instance(path, req, off)
            files.append(path)
        print(f"# {args.count} Fig. {args.figure} instances, {args.jobs} workers, "
              f"load {os.getloadavg()}")  # fmt: skip
        t_plain, plain = run_batch(files, os.path.join(tmp, "a.jsonl"), args.jobs, False, args.src)
        print(f"solve-batch without --bound: {t_plain:.2f} s", flush=True)
        t_b1, b1 = run_batch(files, os.path.join(tmp, "b.jsonl"), args.jobs, True, args.src,
                             args.effort)  # fmt: skip
        print(f"solve-batch --bound: {t_b1:.2f} s ({t_b1 / t_plain:.2f}x); CPU {CPU[0]:.2f} s "
              f"without, {CPU[1]:.2f} s with: the bound {CPU[1] - CPU[0]:.2f} s, "
              f"{(CPU[1] - CPU[0]) / CPU[0]:.2f}x the batch without it", flush=True)  # fmt: skip
        runs = [b1]
        if not args.no_load_run:
            stop_at = time.time() + 3600
            procs = [mp.Process(target=_busy, args=(stop_at,), daemon=True)
                     for _ in range(args.load)]  # fmt: skip
            for p in procs:
                p.start()
            try:
                t_b2, b2 = run_batch(files, os.path.join(tmp, "c.jsonl"), args.jobs, True,
                                     args.src, args.effort)  # fmt: skip
            finally:
                for p in procs:
                    p.terminate()
            print(f"solve-batch --bound beside {args.load} busy processes: {t_b2:.2f} s",
                  flush=True)  # fmt: skip
            runs.append(b2)
            differ = [i for i, (x, y) in enumerate(zip(b1, b2)) if x.get("bound") != y.get("bound")]
            print(f"bounds differing between the two --bound runs: {len(differ)} of {len(b1)}"
                  + (f" (instances {differ[:10]})" if differ else ""))  # fmt: skip
        for lines in runs:
            rule = ["optimal" if x["n_allocated"] >= x["bound"] else "feasible" for x in lines]
            bad = [x["index"] for x, want in zip(lines, rule) if x["status"] != want]
            opt = sum(x["status"] == "optimal" for x in lines)
            print(f"statuses: {opt} optimal, {len(lines) - opt} feasible; "
                  f"{len(bad)} disagree with the rule")  # fmt: skip
        gaps = [x["gap"] for x in b1]
        print(f"mean gap {sum(gaps) / len(gaps):.4f}; sum of bounds {sum(x['bound'] for x in b1):g}"
              f", sum allocated {sum(x['n_allocated'] for x in b1)}")  # fmt: skip


if __name__ == "__main__":
    main()
