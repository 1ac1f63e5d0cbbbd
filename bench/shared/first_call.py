"""Issue 36's budget on a process's first call: one fresh process per timed call.

A method that imports its solver (HiGHS, SciPy's optimize, OR-Tools' CP-SAT) the first time
it runs spends that import inside the first caller's ``time_limit`` (collective ``exact``:
1.1 s at T = 0.05 s, seventeenth run). Each call here runs in a new interpreter that has
imported ``coalloc`` and the family and built the instance (a small case of
``bench/shared/contract_audit.py``) but nothing else, then times ``solve(method,
time_limit=T)``: wall, status, within ``T + max(0.05, 0.05 T)``, and which packages the
call imported. ``--busy K`` runs K busy loops beside (``bench/shared/_phases.py``).
``--call explain`` times ``inst.explain(time_limit=T)`` instead (the family's "why not";
``--build`` another instance: an infeasible one, for an explanation to search).

    PYTHONPATH=src:. nice python -m bench.shared.first_call --busy 2 --limits 0.05 0.2 1
    PYTHONPATH=src:. nice python -m bench.shared.first_call --family testbed --call explain \
        --build "testbed_typed(13)" --busy 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from typing import List, Optional

from bench.shared._phases import busy
from bench.shared._progress import add_quiet, bar, say

#: (kind, the instance class's module and name, a builder of ``contract_audit``) per family:
#: small instances (the exact methods finish); the child imports only that family.
CASES = {
    "ctaap": ("ctaap", "coalloc.ctaap.solvers:CtaapInstance", "ctaap_clustered(10, 3, 1)"),
    "taskmap": ("taskmap", "coalloc.taskmap.solvers:TaskMapInstance",
                "(task_graph_bipartite(8, 1), star_resources(4, 1))"),
    "collective": ("collective", "coalloc.collective.solvers:CollectiveInstance",
                   "collective_swf(1, 0)"),
    "testbed": ("testbed", "coalloc.testbed.solvers:TestbedInstance",
                "_emulab('test.top', 'test.ptop')"),
    "loadshare": ("loadshare", "coalloc.loadshare.solvers:LoadShareInstance",
                  "loadshare_skewed(3, 6, 1)"),
    "gap": ("gap", "coalloc.loadshare.solvers:GapProblem", "gap_orlib('multi.txt', 0)"),
}  # fmt: skip
HEAVY = ("highspy", "scipy.optimize", "scipy.sparse", "ortools.sat.python.cp_model", "pulp",
         "networkx")  # fmt: skip

CHILD = r"""
import json, sys, time
import importlib
kind, where, build, method, T, call = sys.argv[1:5] + [float(sys.argv[5]), sys.argv[6]]
from bench.shared import contract_audit as ca
mod, _, name = where.partition(":")
cls = getattr(importlib.import_module(mod), name)
inst = cls.coerce(eval(build, dict(vars(ca))))
before = set(sys.modules)
t0 = time.perf_counter()
try:
    if call == "explain":
        got = inst.explain(time_limit=T)
        st = "none" if got is None else f"explained (minimal={got.minimal})"
    else:
        st = inst.solve(method, seed=0, time_limit=T).status
except Exception as exc:
    st = "raised " + type(exc).__name__ + ": " + str(exc)[:80]
wall = time.perf_counter() - t0
new = {m.split(".")[0] for m in set(sys.modules) - before if not m.startswith("coalloc")}
new |= {m for m in HEAVY if m in sys.modules and m not in before}
print(json.dumps({"wall": wall, "status": st, "loaded_by_call": sorted(new)}))
"""


def allowed(T: float) -> float:
    """Issue 36's contract: a call with budget ``T`` returns within this many seconds."""
    return T + max(0.05, 0.05 * T)


def one(kind: str, where: str, build: str, method: str, T: float, call: str = "solve") -> dict:
    """One fresh process's timed call (see :data:`CHILD`): ``solve`` or ``explain``."""
    code = f"HEAVY = {HEAVY!r}\n" + CHILD
    out = subprocess.run([sys.executable, "-c", code, kind, where, build, method, str(T), call],
                         capture_output=True, text=True, timeout=600)  # fmt: skip
    try:
        rec = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        rec = {"wall": float("nan"), "status": "crashed: " + out.stderr[-200:]}
    rec.update(kind=kind, case=build, method=method, T=T, within=rec["wall"] <= allowed(T),
               load=os.getloadavg()[0])  # fmt: skip
    return rec


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--methods", nargs="+", default=["exact"], help="'all': every method")
    ap.add_argument("--limits", nargs="+", type=float, default=[0.05, 0.2, 1.0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--busy", type=int, default=0, help="busy loops beside")
    ap.add_argument("--json", default=None, help="append one JSON line per call")
    ap.add_argument("--call", choices=["solve", "explain"], default="solve",
                    help="explain: inst.explain(time_limit=T) (the method is not used)")
    ap.add_argument("--build", default=None,
                    help="the instance: an expression over contract_audit's generators")
    add_quiet(ap)
    args = ap.parse_args(argv)
    from coalloc._shared.family import problem_kinds

    kinds = {k.kind: k for k in problem_kinds()}
    procs = busy(args.busy)
    rows = []
    try:
        plan = []
        for _ in range(args.reps):
            for fam in args.family:
                every = list(kinds[CASES[fam][0]].methods)
                for method in every if args.methods == ["all"] else args.methods:
                    if method in every:  # (a method of another family: skipped)
                        plan += [(fam, method, T) for T in args.limits]
        if args.call == "explain":  # (one call per family, limit and rep: no method)
            plan = [(fam, "explain", T) for _ in range(args.reps) for fam in args.family
                    for T in args.limits]  # fmt: skip
        for fam, method, T in bar(plan, desc="fresh calls", unit="call"):
            kind, where, build = CASES[fam]
            rec = one(kind, where, args.build or build, method, T, args.call)
            rows.append(rec)
            say(json.dumps(rec))
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(rec) + "\n")
    finally:
        for p in procs:
            p.kill()
            p.wait()
    by = defaultdict(list)
    for r in rows:
        by[(r["kind"], r["method"], r["T"])].append(r)
    print("| family | method | T s | calls | within | max wall s | statuses | loaded by call |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for (k, m, T), rs in sorted(by.items()):
        w = max(r["wall"] for r in rs)
        st = ", ".join(sorted({str(r["status"]) for r in rs}))
        ld = ", ".join(sorted({x for r in rs for x in r.get("loaded_by_call", [])}))
        print(f"| {k} | {m} | {T} | {len(rs)} | {sum(r['within'] for r in rs)} | {w:.3f} | "
              f"{st} | {ld} |")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
