"""A fresh process's CPU to import the task mapper and compute the default bound once (issue
41: a batch worker pays its imports once per process; the bound's LP used to import
``scipy.optimize`` for ``linprog`` alone, h48bound's follow-up calls HiGHS through highspy).

Each run is a new interpreter that imports ``coalloc.taskmap``, builds one of the 30
instances of :mod:`bench.taskmap.vs_peers` and calls ``lower_bound(tasks, res)``; the child
reports its own CPU time (user + system, ``resource.getrusage``) at the end, the CPU of the
bound call alone and whether ``scipy.optimize`` was imported. ``--src`` runs the same with
another source tree first on the path (an older commit's ``src/`` copied with its compiled
modules), alternating the trees run by run.

    PYTHONPATH=src:. nice python -m bench.taskmap.bound_start [--src /tmp/old_src] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench.shared._progress import add_quiet, bar, say
from coalloc.cli._common import count

_CHILD = r"""
import json, resource, sys, time
from bench.taskmap.vs_peers import instances
from coalloc.taskmap.bounds import lower_bound
kind, index = sys.argv[1], int(sys.argv[2])
name, build = [(n, b) for k, n, b in instances([kind], False)][index]
tasks, res = build()
t = time.process_time()
value = lower_bound(tasks, res)
bound_cpu = time.process_time() - t
u = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps(dict(name=name, value=value, cpu=u.ru_utime + u.ru_stime, bound_cpu=bound_cpu,
                      optimize="scipy.optimize" in sys.modules)))
"""


def _one(src: str, kind: str, index: int) -> dict:
    here = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, here])}
    out = subprocess.run([sys.executable, "-c", _CHILD, kind, str(index)], env=env,
                         capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=None, help="another source tree to compare with")
    ap.add_argument("--repeat", type=count(), default=5, help="runs per tree and instance")
    ap.add_argument("--instances", nargs="+", default=["pipeline:0", "pipeline:5", "stencil:0"],
                    help="kind:index among vs_peers' instances (default: table1 c=1 #0, "
                    "c=16 #0, the first stencil)")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    here = str(Path(__file__).resolve().parents[2] / "src")
    trees = [("this", here)] + ([("other", args.src)] if args.src else [])
    runs = [(tag, src, inst) for inst in args.instances for _ in range(args.repeat)
            for tag, src in trees]  # fmt: skip
    rows: dict = {}
    for tag, src, inst in bar(runs, desc="processes", unit="proc"):
        kind, index = inst.split(":")
        rows.setdefault((inst, tag), []).append(_one(src, kind, int(index)))
    say(
        "| instance | tree | bound | process CPU s, median (min-max) | bound call CPU s, median "
        "| scipy.optimize imported |"
    )
    say("|---|---|---:|---:|---:|---|")
    med = statistics.median
    for (_inst, tag), rs in rows.items():
        cpu = [r["cpu"] for r in rs]
        say(f"| {rs[0]['name']} | {tag} | {rs[0]['value']:.4g} | {med(cpu):.3f} "
            f"({min(cpu):.3f}-{max(cpu):.3f}) | {med(r['bound_cpu'] for r in rs):.4f} "
            f"| {'yes' if any(r['optimize'] for r in rs) else 'no'} |")  # fmt: skip


if __name__ == "__main__":
    main()
