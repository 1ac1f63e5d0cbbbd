"""The default method of every family timed on fixed instances: one side of a before/after.

Issue 23 asked that the template change no answer and slow nothing. This script solves a
fixed set of generated instances with each family's default method (CTAAP-Solver, the flow
injection mapper, the collective scan, assign+, DMCF-GGA / bfd and the GAP heuristic) and
prints, per case, the median wall time of ``--repeats`` runs and a digest of the answer. Run
it with two installations of coalloc, alternating, and compare: the digests must be equal
and the ratio of the medians says the speed. It uses only entry points older versions have.

Run (about a minute)::

    python -m bench.shared.speed_before_after --repeats 7 --json out.json

and compare two such files with ``--compare before.json after.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time

import numpy as np

from bench.shared._progress import add_quiet, bar


def _cases():
    import coalloc
    from coalloc import collective, ctaap, loadshare, taskmap, testbed

    req, off = ctaap.generators.fig3(1000, seed=1)
    yield "ctaap fig3(1000)", lambda: coalloc.solve(req, off, seed=0), lambda r: r.assignment
    req2, off2 = ctaap.generators.fig2(seed=3)
    yield "ctaap fig2", lambda: coalloc.solve(req2, off2, seed=0), lambda r: r.assignment
    tasks, res = taskmap.generators.table1_instance(seed=1)
    yield "taskmap table1", lambda: taskmap.map_tasks(tasks, res, seed=0), lambda r: r.mapping
    pool = collective.generators.table1_pool(seed=1)
    pairs = collective.generators.section42_requests(pool, 60, 10, seed=2)
    reqs = [q for pair in pairs for q in pair]  # simple and collective, N = 60
    yield ("collective scan x20 N=60",
           lambda: [collective.coallocate(pool, q, "scan") for q in reqs],
           lambda rs: [(r.start, None if r.resources is None else r.resources.tolist())
                       for r in rs])  # fmt: skip
    top, ptop = testbed.generators.ring(40), testbed.generators.deterlab(255, 5)
    yield "testbed assign+", lambda: testbed.assign(top, ptop, seed=0), lambda r: r.mapping
    prob = loadshare.generators.paper_setup(500, seed=1)
    yield (
        "loadshare dmcf-gga",
        lambda: loadshare.share(prob, "dmcf-gga", seed=0),
        lambda r: r.placement,
    )
    gap = loadshare.generate_gap("d", 10, 100, seed=1)
    yield ("GAP heuristic d10x100",
           lambda: loadshare.solve_gap(gap, "heuristic", seed=0, iterations=2000),
           lambda r: r.assignment)  # fmt: skip


def _digest(value) -> str:
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, dict):
        value = sorted((str(k), str(v)) for k, v in value.items())
    return hashlib.sha256(json.dumps(value, default=str).encode()).hexdigest()[:12]


def measure(repeats: int, cpu: bool = False) -> dict:
    import coalloc

    clock = time.process_time if cpu else time.perf_counter
    out = {"coalloc": coalloc.__file__, "clock": "cpu" if cpu else "wall", "cases": {}}
    for name, run, answer in bar(list(_cases()), desc="cases", unit="case"):
        run()  # warm-up: imports, per-model caches
        times = []
        for _ in range(repeats):
            t0 = clock()
            got = run()
            times.append(clock() - t0)
        out["cases"][name] = {"median_s": statistics.median(times), "answer": _digest(answer(got))}
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", help="write the figures here (the one writer of coalloc)")
    ap.add_argument("--compare", nargs="+", metavar="JSON",
                    help="before.json after.json [...]: several runs of each side alternate "
                         "(b1 a1 b2 a2 ...); prints median ratios after/before")  # fmt: skip
    ap.add_argument("--cpu", action="store_true",
                    help="time CPU seconds of the process (time.process_time) instead of the "
                         "wall clock: steadier on a shared machine")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.compare:
        runs = [json.load(open(p)) for p in args.compare]
        before, after = runs[0::2], runs[1::2]
        print(f"{'case':<24} {'before s':>9} {'after s':>9} {'after/before':>12} same answer")
        for name in before[0]["cases"]:
            b = statistics.median(r["cases"][name]["median_s"] for r in before)
            a = statistics.median(r["cases"][name]["median_s"] for r in after)
            same = all(r["cases"][name]["answer"] == before[0]["cases"][name]["answer"]
                       for r in runs)  # fmt: skip
            print(f"{name:<24} {b:>9.4f} {a:>9.4f} {a / b:>12.2f} {same}")
        return 0
    res = measure(args.repeats, args.cpu)
    text = json.dumps(res, indent=1)
    if args.json:
        from coalloc._shared.jsonio import write_text_atomic

        write_text_atomic(args.json, text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
