"""Issue 36's budget contract on the families' largest documented instances, under load.

The contract audit (``bench/shared/contract_audit.py``) judges small and middle instances;
this script times the public methods that take ``time_limit`` on the largest sizes the
families' benchmarks document, where a phase that does not look at the clock (an index
build, a model build, the first request on a fresh pool, ``verify``, the result's assembly)
would show as an overrun:

* ``collective``: Table 1 pools of 10,000 nodes x 2,016 slots (a week of 5 minutes,
  ``bench/collective/scale.py``), the issue 40 ``reject`` and ``week`` (collective)
  requests at N = 10, 60, 256, 1,024; a warm pool (indexes built by an untimed request
  first), and with ``--fresh`` the first timed request on a newly built pool (its indexes
  built inside the call);
* ``ctaap``: the sparse generator at n = 10,000 tasks x M = 20 clusters and the dense one at
  n = 2,000 (``bench/ctaap/bench_scale.py``'s largest points);
* ``testbed``: ring(800) on DeterLab 2,000 PCs and ``test_big.top`` on ``utah2000.ptop``
  (``bench/testbed/issue36.py``'s largest);
* ``loadshare``: the paper's grid of 30,000 nodes (about 563,000 jobs), coalitions of 45
  nodes (``bench/loadshare/deadline.py``'s); GAP's largest are ``bench/loadshare/gap_phases``'s.

With ``--trace``, CTAAP ``exact``'s phases are wrapped (``bench/shared/_phases.py``): the
model's build and its conflict pairs, the flow bound, the constraint matrix, the MILP, the
check and the allocation's assembly; and the testbed's ``assign+`` (its set-up, the annealer
beside, the strategies, the portfolio's steps, routing, the answer's assembly); each call's
record says which phase was running at the deadline and when each ended (``phases``), and
``events``: every wrapped call's (label, start, end) in seconds from the call's start.

Every call: wall time, the process's CPU time (all its threads: a wall time past the
contract with a CPU time within it is the scheduler under load, not a phase), status,
within ``T + max(0.05, 0.05 T)`` or not. ``--load K`` runs K busy processes beside (killed
at the end). One JSON line per call with ``--json FILE``; the
summary per family and method: calls, the fraction within, the largest overrun.

    PYTHONPATH=src:. nice -n 10 python -m bench.shared.large_budgets --load 2 --quiet \
        --json /tmp/large.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple

from bench.shared._phases import EVENTS, wrap
from bench.shared._progress import add_quiet, bar, say

ROOT = Path(__file__).resolve().parents[2]
BUDGETS = (0.05, 0.2, 1.0, 2.0)


def allowed(T: float) -> float:
    """Issue 36's contract: a call with budget ``T`` returns within this many seconds."""
    return T + max(0.05, 0.05 * T)


def _busy() -> None:  # pragma: no cover - a load generator
    while True:
        pass


def collective_cases(seeds: List[int], fresh: bool) -> Iterator[Tuple[str, Callable, bool]]:
    """``(name, build, fresh)``: ``build()`` gives ``(request, pool)``."""
    from bench.collective.scale import reject_requests, week_requests
    from coalloc.collective import CollectiveRequest, scan
    from coalloc.collective.generators import table1_pool

    for s in seeds:
        pool = table1_pool(10_000, n_slots=2016, seed=2028 + s)
        scan(CollectiveRequest(300.0, 1, 0.0, 0.0), pool)  # the indexes, untimed
        for n in (10, 60, 256, 1024):
            req = reject_requests(pool, n, 1, seed=28 + s)[0]
            yield f"reject-{n}/pool{2028 + s}", (lambda r=req, p=pool: (r, p)), False
            _, coll = week_requests(pool, n, 1, seed=28 + s)[0]
            yield f"week-{n}/pool{2028 + s}", (lambda r=coll, p=pool: (r, p)), False
        if fresh and s == seeds[0]:
            req = reject_requests(pool, 60, 1, seed=28 + s)[0]

            def build(r=req, s=s):  # a new pool: the call builds its indexes
                return r, table1_pool(10_000, n_slots=2016, seed=2028 + s)

            yield f"fresh-reject-60/pool{2028 + s}", build, True


def ctaap_cases(seeds: List[int], fresh: bool) -> Iterator[Tuple[str, Callable, bool]]:
    from coalloc import ctaap as ct

    for s in seeds:
        for kind, n, p in (("sparse", 10_000, 10 / 9_999), ("dense", 2_000, 0.5)):
            m = 20
            inst = ct.generators.random_instance(
                n, m, edge_probability=p,
                capacity_range=(max(1, n // (2 * m)), max(1, 3 * n // (2 * m))), seed=s,
            )  # fmt: skip
            yield f"{kind}-{n}x{m}/seed{s}", (lambda i=inst: i), False


def testbed_cases(seeds: List[int], fresh: bool) -> Iterator[Tuple[str, Callable, bool]]:
    from coalloc import testbed as tb
    from coalloc.testbed import generators as g

    data = ROOT / "bench" / "testbed" / "data"
    for s in seeds:
        pt = g.deterlab(2000, 5, seed=1 + s)
        yield f"ring800@deterlab2000/seed{s}", (lambda p=pt: (g.ring(800), p)), False
    utah = (tb.read_top(data / "test_big.top"), tb.read_ptop(data / "utah2000.ptop"))
    yield "test_big@utah2000", (lambda: utah), False


def loadshare_cases(seeds: List[int], fresh: bool) -> Iterator[Tuple[str, Callable, bool]]:
    """The paper's largest grid (``bench/loadshare/deadline.py``): 30,000 nodes, about
    563,000 jobs (built once a seed, 3-15 s); the coalition methods with 45 nodes a
    coalition, as ``bench/shared/budget.py`` runs them (:data:`PARAMS`)."""
    from coalloc import loadshare as ls

    for s in seeds:
        pr = ls.generators.paper_setup(30000, seed=1 + s)
        yield f"paper30000/seed{1 + s}", (lambda p=pr: p), False


CASES = {"collective": collective_cases, "ctaap": ctaap_cases, "testbed": testbed_cases,
         "loadshare": loadshare_cases}  # fmt: skip
#: A family's methods' own parameters in these calls: (methods, params).
PARAMS = {"loadshare": (("dmcf-gga", "fcfs-ff", "round-robin", "bfd", "portfolio"),
                        {"coalition_size": 45})}  # (share()'s coalition methods)


#: CTAAP ``exact``'s phases wrapped by ``--trace``: (module, owner's attribute or None,
#: name, label).
TRACED = (("coalloc.ctaap.exact", None, "_build_under", "build+bound"),
          ("coalloc.ctaap.exact", None, "_conflict_pairs", "pairs"),
          ("coalloc.ctaap.exact", None, "upper_bound", "flow bound"),
          ("coalloc.ctaap.exact", "_Model", "constraint_matrix", "matrix"),
          ("coalloc.ctaap.exact", None, "_merge_fits", "merge check"),
          ("coalloc._shared.milp", None, "run_milp", "milp"),
          ("coalloc.ctaap.exact", None, "_with_allocation", "verify+assemble"),
          # the testbed's assign+ (the default and its variants): its set-up, the annealer
          # beside, the strategies, the portfolio's steps, routing, the answer's assembly
          ("coalloc.testbed.methods.assign_plus", None, "_problem", "tb setup"),
          ("coalloc.testbed.methods.assign_plus", None, "_beside", "tb beside start"),
          ("coalloc.testbed.methods.assign_plus", None, "_early_answer", "tb early"),
          ("coalloc.testbed.methods.assign_plus", None, "assign_plus", "tb strategies"),
          ("coalloc.testbed.methods.assign_plus", None, "_anneal_member", "tb anneal member"),
          ("coalloc.testbed.methods.assign_plus", None, "_portfolio", "tb portfolio"),
          ("coalloc.testbed.methods.assign_plus", None, "_quick_anneal", "tb quick anneal"),
          ("coalloc.testbed.methods.assign_plus", None, "_full_anneal", "tb full anneal"),
          ("coalloc.testbed.methods.assign_plus", None, "_moves", "tb moves"),
          ("coalloc.testbed.methods.assign_plus", None, "_offered_desires", "tb desires"),
          ("coalloc.testbed.methods.assign_plus", None, "_exact_candidate", "tb exact"),
          ("coalloc.testbed.methods.assign_plus", "_BesideAnneal", "hear", "tb hear"),
          ("coalloc.testbed.methods.assign_plus", "_Hearing", "__exit__", "tb hearing exit"),
          ("coalloc.testbed.methods.assign_plus", None, "route", "tb route"),
          ("coalloc.testbed.methods.assign_plus", None, "_result", "tb result"),
          ("coalloc.testbed.methods.assign_plus", None, "_better_of", "tb better of"))  # fmt: skip


def trace_phases() -> None:
    """Wrap :data:`TRACED` in place (their times go to ``_phases.EVENTS``)."""
    import importlib

    for mod, owner, name, label in TRACED:
        obj = importlib.import_module(mod)
        obj = getattr(obj, owner) if owner else obj
        if hasattr(obj, name):  # (an older tree may lack a phase)
            wrap(obj, name, label)


def _phases(t0: float, T: float) -> dict:
    """The wrapped phases of the last call: each one's end (s from the call's start, the
    last of its runs) and the one running at the deadline (None: none was)."""
    ends: dict = {}
    at = None
    events = []
    for label, a, b in EVENTS:
        ends[label] = round(b - t0, 4)
        events.append((label, round(a - t0, 4), round(b - t0, 4)))
        if a - t0 <= T < b - t0 and (at is None or label not in ("build+bound", "tb portfolio")):
            at = label  # the innermost: wrappers end after what they call
    EVENTS.clear()
    return {"phases": ends, "at_deadline": at, "events": events}


def _one(cls: Any, build: Callable, method: str, T: float, seed: int) -> dict:
    inst = cls.coerce(build())
    methods, params = PARAMS.get(cls.kind, ((), {}))
    params = params if method in methods else {}
    EVENTS.clear()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        r = inst.solve(method, seed=seed, time_limit=T, **params)
        status, msg = r.status, str(getattr(r, "message", ""))[:100]
    except Exception as exc:  # noqa: BLE001 - recorded, not judged here
        status, msg = "raised", f"{type(exc).__name__}: {str(exc)[:100]}"
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"method": method, "T": T, "seed": seed, "wall": round(wall, 4), "cpu": round(cpu, 4),
            "over": round(wall - T, 4), "within": wall <= allowed(T), "status": status,
            "message": msg, **(_phases(t0, T) if EVENTS else {})}  # fmt: skip


def run(args: argparse.Namespace) -> List[dict]:
    from coalloc._shared.family import problem_kinds

    kinds = {k.kind: k for k in problem_kinds()}
    rows: List[dict] = []
    out = open(args.json, "a") if args.json else None
    for fam in args.family:
        cls = kinds[fam]
        methods = args.methods or list(cls.methods)
        for name, build, fresh in bar(list(CASES[fam](args.seeds, args.fresh)),
                                      desc=fam, unit="instance"):  # fmt: skip
            # warm: every kernel and import loaded by one untimed-budget call first
            _one(cls, build, cls.DEFAULT_METHOD, 0.05, 0) if not fresh else None
            for method in methods:
                for T in args.budgets:
                    calls = args.seeds[: args.call_seeds] if args.call_seeds else args.seeds
                    for seed in calls if not fresh else args.seeds[:1]:
                        rec = _one(cls, build, method, T, seed)
                        rec.update(family=fam, case=name, load=os.getloadavg()[0])
                        rows.append(rec)
                        if out:
                            out.write(json.dumps(rec) + "\n")
                            out.flush()
                        if not rec["within"]:
                            say(f"  over: {fam} {name} {method} T={T} seed={seed}: "
                                f"{rec['wall']:.3f} s ({rec['status']}; at the deadline: "
                                f"{rec.get('at_deadline')})")  # fmt: skip
    if out:
        out.close()
    return rows


def summary(rows: List[dict]) -> None:
    by = defaultdict(list)
    for r in rows:
        by[(r["family"], r["method"], r["T"])].append(r)
    print("| family | method | T s | calls | within | max wall s | max overrun s | statuses |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for (fam, m, T), rs in sorted(by.items()):
        st = sorted({r["status"] for r in rs})
        w = max(r["wall"] for r in rs)
        print(f"| {fam} | {m} | {T} | {len(rs)} | {sum(r['within'] for r in rs)} | "
              f"{w:.3f} | {w - allowed(T):+.3f} | {', '.join(st)} |")  # fmt: skip


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", nargs="+", default=list(CASES), choices=list(CASES))
    ap.add_argument("--methods", nargs="+", default=None, help="default: every method")
    ap.add_argument("--budgets", nargs="+", type=float, default=list(BUDGETS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    ap.add_argument("--fresh", action="store_true", help="collective: a fresh pool too")
    ap.add_argument("--call-seeds", type=int, default=None,
                    help="calls per case and budget: the first N of --seeds (default: all; "
                         "1: one call on each case's fresh model, after the warm-up)")  # fmt: skip
    ap.add_argument("--load", type=int, default=0, help="busy processes beside")
    ap.add_argument("--json", default=None, help="append one JSON line per call")
    ap.add_argument("--trace", action="store_true",
                    help="CTAAP exact's and testbed assign+'s phases per call")  # fmt: skip
    add_quiet(ap)
    args = ap.parse_args(argv)
    if args.trace:
        trace_phases()
    procs = [mp.Process(target=_busy, daemon=True) for _ in range(args.load)]
    for p in procs:
        p.start()
    try:
        say(f"load average {os.getloadavg()}, {len(procs)} busy processes beside")
        rows = run(args)
    finally:
        for p in procs:
            p.terminate()
            p.join()
    summary(rows)
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
