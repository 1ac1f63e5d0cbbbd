"""Set-up cost of testbed mapping: reading the testbed, the first solve, the mapping itself.

Issue 25 (deliverable 4) asked that reading a 255-PC testbed take a few milliseconds, that
the per-testbed compiled tables be reused across experiments and that the per-experiment
cost be dominated by the mapping. This script times, on a DeterLab-like testbed of 255 PCs
behind 5 switches (``generators.deterlab(255, 5, seed=1)`` written as a ``.ptop`` text):

* ``read``: ``parse_ptop`` of the text, the reader's memory cleared first (a cold read);
* ``read again``: ``parse_ptop`` of the same text again (a replay or service re-reading
  the testbed file for each experiment);
* ``first solve``: ``assign`` (default method) of one experiment on a freshly read testbed;
* ``mapping``: the same ``assign`` again on the same testbed object (warm tables);
* ``per experiment``: what a process-per-experiment replay pays, for ``--experiments``
  experiments of ``generators.workload``: read the ``.ptop`` text, read the experiment's
  ``.top`` text, map it (on the empty testbed), median over the experiments.

Times are CPU time of this process (``time.process_time``: the machine is shared, so wall
time swings with the load), min and median over ``--repeats`` runs. With ``--baseline-src
PATH`` (the ``src`` folder of another checkout, e.g. ``/work/main/src``) the same
measurement runs in a child process on that code, alternating with this tree's, and the
table shows both side by side with their ratio, and whether the answers (the mapping and
routes of every experiment) are the same::

    python -m bench.testbed.read_speed --baseline-src /work/main/src --repeats 15
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

from bench.shared._progress import add_quiet, bar, say


def _clear(io_module) -> None:
    clear = getattr(io_module, "clear_read_cache", None)  # (older trees have none)
    if clear is not None:
        clear()


def _stats(values) -> dict:
    return {"min_ms": min(values) * 1e3, "median_ms": statistics.median(values) * 1e3}


def measure(repeats: int, experiments: int) -> dict:
    """The timings of this interpreter's coalloc (see the module docstring)."""
    import coalloc
    import coalloc.testbed as tb
    from coalloc.testbed import generators as g
    from coalloc.testbed import io as tbio

    text = tb.format_ptop(g.deterlab(255, 5, seed=1))
    top = g.ring(8)
    clock = time.process_time
    out = {"coalloc": os.path.dirname(coalloc.__file__), "ptop_lines": len(text.splitlines())}
    rows = {"read": [], "read again": [], "first solve": [], "mapping": []}
    for _ in bar(range(repeats), desc="set-up", unit="rep"):
        _clear(tbio)
        t0 = clock()
        ptop = tb.parse_ptop(text)
        rows["read"].append(clock() - t0)
        t0 = clock()
        tb.parse_ptop(text)
        rows["read again"].append(clock() - t0)
        t0 = clock()
        tb.assign(top, ptop, seed=0)
        rows["first solve"].append(clock() - t0)
        t0 = clock()
        tb.assign(top, ptop, seed=0)
        rows["mapping"].append(clock() - t0)
    out["cases"] = {k: _stats(v) for k, v in rows.items()}
    tops = [tb.format_top(t) for _, _, t in g.workload(experiments, seed=7)]
    per, answers = [], hashlib.sha256()
    _clear(tbio)
    for top_text in bar(tops, desc="experiments", unit="exp"):
        t0 = clock()
        ptop = tb.parse_ptop(text)
        r = tb.assign(tb.parse_top(top_text), ptop, seed=0)
        per.append(clock() - t0)
        answers.update(json.dumps([r.mapping, r.routes], sort_keys=True).encode())
    out["cases"]["per experiment"] = _stats(per)
    out["answers"] = answers.hexdigest()[:16]
    return out


def _child(src: str, args) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.getcwd()]))
    cmd = [sys.executable, "-m", "bench.testbed.read_speed", "--worker", "--quiet",
           "--repeats", str(args.repeats), "--experiments", str(args.experiments)]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--experiments", type=int, default=200)
    ap.add_argument("--baseline-src", default=None, metavar="PATH",
                    help="the src folder of another checkout to time side by side")  # fmt: skip
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(measure(args.repeats, args.experiments)))
        return 0
    if args.baseline_src and not os.path.isdir(os.path.join(args.baseline_src, "coalloc")):
        say(f"no coalloc package under --baseline-src {args.baseline_src}")
        return 2
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "src")  # fmt: skip
    runs = {"this": [], "baseline": []}
    for _ in bar(range(2), desc="rounds", unit="round"):  # alternate: two rounds each
        runs["this"].append(_child(here, args))
        if args.baseline_src:
            runs["baseline"].append(_child(args.baseline_src, args))

    def best(side: str) -> dict:
        if not runs[side]:
            return {}
        cases = {}
        for name in runs[side][0]["cases"]:
            vals = [r["cases"][name] for r in runs[side]]
            cases[name] = {k: min(v[k] for v in vals) for k in ("min_ms", "median_ms")}
        return {
            "cases": cases,
            "answers": {r["answers"] for r in runs[side]},
            "coalloc": runs[side][0]["coalloc"],
            "ptop_lines": runs[side][0]["ptop_lines"],
        }

    this, base = best("this"), best("baseline")
    if args.json:
        print(json.dumps({"this": this, "baseline": base}, default=sorted, indent=1))
        return 0
    say(f"testbed: {this['ptop_lines']} lines (deterlab(255, 5)); CPU ms, min / median")
    head = f"{'case':16s} {'this tree':>17s}"
    if base:
        head += f" {'baseline':>17s} {'ratio (median)':>15s}"
    say(head)
    for name, c in this["cases"].items():
        line = f"{name:16s} {c['min_ms']:8.2f} {c['median_ms']:8.2f}"
        if base:
            b = base["cases"][name]
            ratio = c["median_ms"] / b["median_ms"]
            line += f" {b['min_ms']:8.2f} {b['median_ms']:8.2f} {ratio:15.2f}"
        say(line)
    if base:
        same = this["answers"] == base["answers"] and len(this["answers"]) == 1
        say(f"same answers on the {args.experiments} experiments: {'yes' if same else 'NO'}")
        say(f"this: {this['coalloc']}; baseline: {base['coalloc']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
