"""Issue 11: the one-house layout changes no answer and no speed, against the old layout.

Runs the same workloads with two installations of coalloc, each in fresh subprocesses, in
alternation (old, new, old, new, ...): the old flat layout (``coalloc.solve``,
``coalloc.generators``, ``coalloc.taskmap.map_tasks``; pass its interpreter with
``--old-python``) and this checkout (``coalloc.ctaap``, ``coalloc.taskmap``). Workloads:

* CTAAP default solve (``method="ctaap"``) on the Fig. 2 setup (r = 1..5, 20 seeds each) and
  on Fig. 3 instances (n = 50, 100, 200, 500; 3 seeds each), the paper's algorithm
  (``paper=True``) on the Fig. 2 ones, and the greedy baseline;
* task mapping, the four variants of Figs. 12-13 on Table 1 instances (c = 1, 4, 16; 6 seeds);
* a batch of 30 Fig. 2 instances through ``solve_many`` (2 threads, batch seed 7).

It prints, per workload, whether every allocation / mapping (and the step-1 weights of
CTAAP) is bit-identical (a SHA-256 of the arrays) and the median total time of each layout
over the repeats with the ratio new / old.

    python -m bench.shared.layout_identity --old-python /tmp/oldvenv/bin/python --repeats 3

To make the old installation: ``git worktree add /tmp/old <commit before issue 11>``,
``python3 -m venv /tmp/oldvenv && /tmp/oldvenv/bin/pip install /tmp/old``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

from bench.shared._progress import add_quiet, bar

WORKER = r'''
import hashlib, json, sys, time
import numpy as np
layout = sys.argv[1]
if layout == "old":
    import coalloc
    from coalloc.generators import fig2, fig3
    import coalloc.taskmap as tm
    solve, solve_many = coalloc.solve, coalloc.solve_many
    map_tasks, table1 = tm.map_tasks, tm.generators.table1_instance
else:
    import coalloc
    from coalloc.ctaap.generators import fig2, fig3
    import coalloc.taskmap as tm
    solve, solve_many = coalloc.ctaap.solve, coalloc.solve_many
    map_tasks, table1 = tm.map_tasks, tm.generators.table1_instance

def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]

out = {}
def run(name, jobs, fn):
    arrays, t0 = [], time.perf_counter()
    for job in jobs:
        arrays.extend(fn(*job))
    out[name] = {"digest": digest(arrays), "seconds": time.perf_counter() - t0, "n": len(jobs)}

f2 = [fig2(r, seed=s) for r in range(1, 6) for s in range(20)]
f3 = [fig3(n, seed=s) for n in (50, 100, 200, 500) for s in range(3)]
tm_inst = [table1(c, seed=s) for c in (1, 4, 16) for s in range(6)]

def ctaap(req, off, **kw):
    res = solve(req, off, seed=0, **kw)
    return [res.assignment, res.weights]

run("ctaap default, Fig. 2 (100)", f2, ctaap)
run("ctaap default, Fig. 3 (12)", f3, ctaap)
run("ctaap paper=True, Fig. 2 (100)", f2, lambda r, o: ctaap(r, o, paper=True))
run("greedy, Fig. 2 (100)", f2, lambda r, o: [solve(r, o, "greedy", seed=1).assignment])
for v in ("base", "base+improve", "open", "open+improve"):
    def mapping(t, r, v=v):
        res = map_tasks(t, r, method=v, seed=3)
        return [res.mapping, np.array([res.max_occupancy])]
    run(f"taskmap {v}, Table 1 (18)", tm_inst, mapping)
def batch():
    res = solve_many(f2[:30], n_jobs=2, seed=7)
    return [r.assignment for r in res]
run("solve_many, 30 Fig. 2 (2 threads)", [()], batch)
print(json.dumps(out))
'''


def run_layout(python: str, layout: str) -> dict:
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(
        [python, "-c", WORKER, layout], capture_output=True, text=True, check=True, env=env,
        cwd="/",  # never pick up the source tree instead of the installation
    )  # fmt: skip
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_quiet(ap)
    ap.add_argument("--old-python", required=True, help="interpreter with the old layout")
    ap.add_argument("--new-python", default=sys.executable, help="interpreter with this one")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    runs = {"old": [], "new": []}
    for _ in bar(range(args.repeats), desc="repeats", leave=False):
        for layout, python in (("old", args.old_python), ("new", args.new_python)):
            runs[layout].append(run_layout(python, layout))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()}, {args.repeats} alternating repeats")  # fmt: skip
    print("| workload | identical | old median s | new median s | new / old |")
    print("|---|---|---:|---:|---:|")
    all_same = True
    for name in runs["new"][0]:
        digests = {r[name]["digest"] for r in runs["old"] + runs["new"]}
        same = len(digests) == 1
        all_same &= same
        t_old = statistics.median(r[name]["seconds"] for r in runs["old"])
        t_new = statistics.median(r[name]["seconds"] for r in runs["new"])
        print(f"| {name} | {'yes' if same else 'NO'} | {t_old:.3f} | {t_new:.3f} | "
              f"{t_new / t_old:.2f} |")  # fmt: skip
    print(f"\nall identical: {all_same}")
    sys.exit(0 if all_same else 1)


if __name__ == "__main__":
    main()
