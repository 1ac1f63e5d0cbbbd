"""Why not, every family (issue 38): explanations of failures, re-checked, and their cost.

For each family the script draws failing requests from the family's generators at the sizes
issue 38 names, runs the family's explanation (``explain_*``), and re-checks it:

* **sound**: the conflict alone is infeasible according to a referee other than the one
  the explanation used where the package has one: the GAP's conflicts by OR-Tools CP-SAT
  (the explanation used HiGHS), collective conflicts by the ``exact`` integer program (the
  explanation used the scan), CTAAP conflicts by the exact method with CP-SAT (the
  explanation used HiGHS) or the b-matching count bound; testbed conflicts by the
  ``exact`` class model again (the explanation's own proof: no second exact testbed model
  exists), said so in the table;
* **minimal**: the share the explanation itself proved minimal;
* **fixes**: every relaxation said to be checked is applied and solved again by the
  family's default method;
* **time**: the explanation's seconds against the default method's own solve of the same
  request plus 1 s (issue 38's target), median and max.

Run (about 10 minutes on two cores)::

    python -m bench.shared.explain --repeats 2

``--family`` restricts the run; ``--quick`` uses smaller sizes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

from bench.loadshare.explain import cpsat_fits
from bench.shared._progress import add_quiet, bar


def _timed(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Tuple[Any, float]:
    t = time.perf_counter()
    out = f(*args, **kwargs)
    return out, time.perf_counter() - t


# ------------------------------------------------------------------------------ families


def gap_cases(quick: bool, repeats: int) -> Iterator[dict]:
    from coalloc.loadshare import GapInstance, generate_gap, solve_gap
    from coalloc.loadshare.explain import explain_gap

    sizes = [(5, 40)] if quick else [(5, 40), (10, 100), (20, 200)]
    for m, n in sizes:
        for r in range(repeats):
            for kind in "cd":
                g = generate_gap(kind, m, n, seed=r)
                inst = GapInstance(g.cost, g.weight, np.floor(0.6 * g.capacity).astype(int))
                res, t_solve = _timed(solve_gap, inst, "heuristic", time_limit=10.0)
                if res.has_solution:
                    continue
                e, t_exp = _timed(explain_gap, inst, time_limit=10.0)
                if e is None:
                    continue
                items = e.conflict["items"]
                sound = cpsat_fits(inst.weight, inst.capacity, items) is False
                fixes = []
                for rx in e.relaxations:
                    if rx.kind == "drop_items":
                        keep = [j for j in range(inst.n) if j not in rx.changes["drop_items"]]
                        fixes.append(cpsat_fits(inst.weight, inst.capacity, keep) is True)
                    else:
                        cap = inst.capacity.copy()
                        for i, add in rx.changes["add_capacity"].items():
                            cap[int(i)] += add
                        fixes.append(cpsat_fits(inst.weight, cap, list(range(inst.n))) is True)
                yield {"label": f"GAP {kind} {m}x{n}", "e": e, "sound": sound, "fixes": fixes,
                       "t_exp": t_exp, "t_solve": t_solve, "referee": "CP-SAT"}  # fmt: skip


def collective_cases(quick: bool, repeats: int) -> Iterator[dict]:
    import coalloc.collective as co
    from coalloc.collective.explain import explain_request

    sizes = [256] if quick else [256, 1024]
    for n_nodes in sizes:
        for r in range(repeats):
            pool = co.generators.table1_pool(n_nodes, load=(3.0, 4.0), seed=r)
            pairs = co.generators.section42_requests(pool, max(8, n_nodes // 8), 6, seed=r)
            for simple, coll in pairs:
                for req in (simple, coll):
                    res, t_solve = _timed(co.coallocate, pool, req)
                    if res.has_solution:
                        continue
                    e, t_exp = _timed(explain_request, pool, req, time_limit=10.0)
                    if e is None:
                        continue
                    ref = co.coallocate(pool, co.CollectiveRequest(**e.conflict), "exact",
                                        time_limit=60.0)  # fmt: skip
                    fixes = [co.coallocate(pool, co.CollectiveRequest(**rx.changes["request"]))
                             .has_solution for rx in e.relaxations]  # fmt: skip
                    yield {"label": f"collective {n_nodes} nodes, N={req.count}", "e": e,
                           "sound": ref.status == "infeasible", "fixes": fixes,
                           "t_exp": t_exp, "t_solve": t_solve, "referee": "exact IP"}  # fmt: skip


def ctaap_cases(quick: bool, repeats: int) -> Iterator[dict]:
    import coalloc.ctaap as ct
    from coalloc.ctaap.exact import upper_bound
    from coalloc.ctaap.explain import _sub, explain_allocation

    sizes = [100] if quick else [100, 300, 1000]
    for n in sizes:
        for r in range(repeats):
            for gen in ("fig2", "random"):
                if gen == "fig2":
                    req, off = ct.generators.fig2(1, n_tasks=n, seed=r)
                else:
                    req, off = ct.generators.random_instance(n, 5, seed=r)
                res, t_solve = _timed(ct.solve, req, off)
                e, t_exp = _timed(explain_allocation, req, off, time_limit=10.0)
                if e is None:
                    continue
                sub = _sub(req, e.conflict["tasks"])
                sound = upper_bound(sub, off) < sub.n
                if not sound:
                    ref = ct.solve(sub, off, "exact", solver="cpsat", time_limit=60.0)
                    sound = ref.status == "optimal" and ref.n_allocated < sub.n
                fixes = []
                for rx in e.relaxations:
                    if rx.kind == "drop_tasks":
                        keep = [i for i in range(req.n) if i not in rx.changes["drop_tasks"]]
                        changed, offer = _sub(req, keep), off
                    elif rx.kind == "less_bandwidth":
                        changed = _sub(req, list(range(req.n)), scale=(
                            rx.changes["tasks"], rx.changes["bandwidth_fraction"]))
                        offer = off
                    else:
                        cap = np.array(off.capacity)
                        cap[rx.changes["cluster"]] += 1
                        changed, offer = req, ct.Offer(dict(off.properties), cap, off.bandwidth)
                    got = ct.solve(changed, offer, "exact", time_limit=30.0)
                    fixes.append(got.n_allocated == changed.n and ct.verify(
                        changed, offer, got.assignment).ok)
                yield {"label": f"CTAAP {gen} {n} tasks", "e": e, "sound": sound,
                       "fixes": fixes, "t_exp": t_exp, "t_solve": t_solve,
                       "referee": "count bound / CP-SAT"}  # fmt: skip


def testbed_cases(quick: bool, repeats: int) -> Iterator[dict]:
    import coalloc.testbed as tb
    from coalloc.testbed.explain import _sub, explain_mapping

    sizes = [20, 40] if quick else [20, 40, 70, 100]
    for size in sizes:
        for r in range(repeats * 3):
            ptop = tb.generators.deterlab(max(16, size // 2), 3, seed=r)
            top = tb.generators.random_topology(size, seed=1000 * size + r)
            inst = tb.Instance(top, ptop)
            res, t_solve = _timed(inst.solve, time_limit=10.0)
            if res.has_solution:
                continue
            e, t_exp = _timed(explain_mapping, top, ptop, time_limit=10.0)
            if e is None:
                continue
            sub = _sub(top, e.conflict["vnodes"])
            ref = tb.Instance(sub, ptop).solve("exact", time_limit=60.0)
            fixes = []
            for rx in e.relaxations:
                if rx.kind == "drop_nodes":
                    changed = _sub(top, [v for v in top.nodes
                                         if v not in rx.changes["drop_vnodes"]])
                elif rx.kind == "other_type":
                    changed = _sub(top, list(top.nodes),
                                   retype=(rx.changes["vnode"], rx.changes["type"]))
                else:
                    changed = _sub(top, list(top.nodes), scale=(
                        set(e.conflict["vnodes"]), rx.changes["bandwidth_fraction"]))
                got = tb.Instance(changed, ptop).solve(time_limit=10.0)
                fixes.append(bool(got.has_solution))
            yield {"label": f"testbed {size} vnodes", "e": e,
                   "sound": ref.status == "infeasible", "fixes": fixes, "t_exp": t_exp,
                   "t_solve": t_solve, "referee": "exact (same model)"}  # fmt: skip


FAMILIES: Dict[str, Callable[[bool, int], Iterator[dict]]] = {
    "gap": gap_cases, "collective": collective_cases, "ctaap": ctaap_cases,
    "testbed": testbed_cases,
}  # fmt: skip


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    add_quiet(ap)
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    rows: Dict[str, List[dict]] = {}
    for fam in args.family or list(FAMILIES):
        for case in bar(FAMILIES[fam](args.quick, args.repeats), desc=fam):
            rows.setdefault(case["label"], []).append(case)
    print("| failures of | explained | sound (referee) | proven minimal | fixes feasible "
          "| conflict size (median) | explain s (median, max) | solve s (median) "
          "| within solve + 1 s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, cases in rows.items():
        k = len(cases)
        sound = sum(c["sound"] for c in cases)
        minimal = sum(c["e"].minimal is True for c in cases)
        fixes = [f for c in cases for f in c["fixes"]]
        t_exp = [c["t_exp"] for c in cases]
        within = sum(c["t_exp"] <= c["t_solve"] + 1.0 for c in cases)
        print(f"| {label} | {k} | {sound}/{k} ({cases[0]['referee']}) | {minimal}/{k} "
              f"| {sum(fixes)}/{len(fixes)} "
              f"| {statistics.median(len(c['e'].demand) for c in cases):.0f} "
              f"| {statistics.median(t_exp):.2f}, {max(t_exp):.2f} "
              f"| {statistics.median(c['t_solve'] for c in cases):.2f} | {within}/{k} |")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
