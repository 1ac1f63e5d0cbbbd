"""Issue 36: how far past a short time limit each load-sharing method returns on the
paper's largest grid, warm and in fresh processes, and whether it returns an answer.

The instance, ``paper_setup(30000, seed=1)`` (563,424 jobs; coalition size 45 for the
coalition methods, as ``bench/shared/budget.py`` runs it), is built once and pickled (the
generator takes 3-15 s, longer than the calls measured). Every run unpickles a *new*
problem object, so nothing computed on an earlier call (the jobs' size order, kept per
problem) is reused: the case of a user who builds a problem and solves it once.

* ``warm``: in this process, the imports and one untimed call done before;
* ``fresh``: a new ``python`` process per run, its first call (the clock covers the call
  only; the process's imports and unpickling are outside it).

Printed per method and limit: the median and largest elapsed time, the largest overrun,
how many runs returned within ``T + max(0.05 s, 0.05 T)`` (the issue's target), how many
held a placement that ``verify_placement`` accepts, the statuses, and the load average.

    PYTHONPATH=src:. python -m bench.loadshare.deadline --methods bfd portfolio \\
        --limits 0.05 --reps 5 --fresh 5
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time

from bench.shared._progress import add_quiet, bar

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
METHODS = ("portfolio", "bfd", "dmcf-gga", "fcfs", "fcfs-ff", "round-robin")
COALITION = ("dmcf-gga", "fcfs-ff", "round-robin")


def run_once(path: str, method: str, limit: float | None) -> dict:
    """One timed call on a new problem object read from ``path``, and its verification."""
    import coalloc.loadshare as ls

    with open(path, "rb") as fh:
        problem = pickle.load(fh)
    extra = {"coalition_size": 45} if method in COALITION else {}
    kw = {} if limit is None else {"time_limit": limit}
    t = time.perf_counter()
    res = ls.share(problem, method, seed=0, **extra, **kw)
    elapsed = time.perf_counter() - t
    ok = bool(ls.verify_placement(problem, res.placement, claimed=res.throughput).ok)
    return {"elapsed": elapsed, "status": res.status, "answer": bool(res.has_solution),
            "verified": ok, "throughput": res.throughput}  # fmt: skip


def fresh(path: str, method: str, limit: float | None) -> dict:
    """:func:`run_once` in a new process (its first call)."""
    code = ("import json; from bench.loadshare.deadline import run_once; "
            f"print(json.dumps(run_once({path!r}, {method!r}, {limit!r})))")  # fmt: skip
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src") + os.pathsep + ROOT)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=ROOT, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--limits", nargs="+", type=float, default=[0.05])
    ap.add_argument("--reps", type=int, default=5, help="warm runs per method and limit")
    ap.add_argument("--fresh", type=int, default=5, help="fresh processes per method and limit")
    ap.add_argument("--json", default=None, help="write every run here")
    add_quiet(ap)
    args = ap.parse_args(argv)
    import coalloc.loadshare as ls

    print(f"load average at the start: {load()}")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "paper30000.pickle")
        with open(path, "wb") as fh:
            pickle.dump(ls.generators.paper_setup(30000, seed=1), fh)
        print("| method | T (s) | mode | elapsed median (max) s | max overrun s | within | answers "
              "| statuses | load |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|")
        for method in bar(args.methods, desc="methods"):
            run_once(path, method, None)  # the imports, outside the clock
            for limit in args.limits:
                allowed = limit + max(0.05, 0.05 * limit)
                for mode, reps in (("warm", args.reps), ("fresh", args.fresh)):
                    got = [run_once(path, method, limit) if mode == "warm"
                           else fresh(path, method, limit) for _ in range(reps)]  # fmt: skip
                    if not got:
                        continue
                    el = [r["elapsed"] for r in got]
                    statuses = sorted({r["status"] for r in got})
                    print(f"| {method} | {limit:g} | {mode} | {statistics.median(el):.3f} "
                          f"({max(el):.3f}) | {max(el) - limit:+.3f} | "
                          f"{sum(e <= allowed for e in el)}/{len(el)} | "
                          f"{sum(r['answer'] and r['verified'] for r in got)}/{len(got)} | "
                          f"{', '.join(statuses)} | {load()} |")  # fmt: skip
                    rows += [{"method": method, "limit": limit, "mode": mode, **r} for r in got]
    print(f"load average at the end: {load()}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
