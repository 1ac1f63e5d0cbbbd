"""Why not, every family (issue 38): explanations of failures, re-checked, and their cost.

For each family the script draws failing requests from the family's generators at the sizes
issue 38 names, runs the family's explanation (``explain_*``), and re-checks it:

* **sound**: the conflict alone is infeasible according to a referee other than the one
  the explanation used where the package has one: the GAP's conflicts by OR-Tools CP-SAT
  where the explanation's proof was HiGHS's, by HiGHS (a model of this script's own) where
  it was CP-SAT's (``certificate`` "CP-SAT"), collective conflicts by the ``exact``
  integer program (the explanation used the scan), CTAAP conflicts by the exact method
  with CP-SAT (the explanation used HiGHS) or the b-matching count bound; testbed conflicts by
  :func:`testbed_referee` (an assignment count by a networkx maximum flow, the hub bound of
  ``bench.testbed.vs_assign``, or the per-link presence model), each conflict node's
  removal mapped again ("minimal re-checked"); load-sharing conflicts by a volume sum or a
  CP-SAT packing;
* **minimal**: the share the explanation itself proved minimal;
* **fixes**: every relaxation said to be checked is applied and solved again by the
  family's default method;
* **time**: the explanation's seconds against the default method's own solve of the same
  request plus 1 s (issue 38's target), median and max, the count within it and the
  excess (explanation - solve - 1 s: at most 0 within), median and max.

Run (about 10 minutes on two cores)::

    python -m bench.shared.explain --repeats 2

``--family`` restricts the run (``--family none``: no family); ``--quick`` uses smaller
sizes; ``--replay`` adds a week's replay with the simulator's explanations
(``simulate(explain=True)``) and ``--binding`` CTAAP's ``explain_binding`` (what caps an
allocation), both described in ``bench/shared/ISSUE38.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import numpy as np

from bench.loadshare.explain import cpsat_fits
from bench.shared._progress import add_quiet, bar
from coalloc.cli._common import count, seconds


def _unexplained(label: str, t_exp: float, t_solve: float, referee: str) -> dict:
    """A failure the explanation left without a conflict (none proved in its budget)."""
    return {"label": label, "e": None, "sound": False, "fixes": [], "t_exp": t_exp,
            "t_solve": t_solve, "referee": referee}  # fmt: skip


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
                res, t_solve = _timed(solve_gap, inst, time_limit=10.0)  # the default
                if res.has_solution:
                    continue
                e, t_exp = _timed(explain_gap, inst, time_limit=10.0)
                if e is None:
                    yield _unexplained(f"GAP {kind} {m}x{n}", t_exp, t_solve, "CP-SAT")
                    continue
                items = e.conflict["items"]
                if e.certificate == "CP-SAT":  # (its proof was CP-SAT's: HiGHS judges it)
                    sound = highs_fits(inst.weight, inst.capacity, items) is False
                    referee = "HiGHS"
                else:
                    sound = cpsat_fits(inst.weight, inst.capacity, items) is False
                    referee = "CP-SAT"
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
                       "t_exp": t_exp, "t_solve": t_solve,
                       "referee": "CP-SAT / HiGHS", "how": referee}  # fmt: skip


def highs_fits(weight: np.ndarray, capacity: np.ndarray, items: List[int],
                limit: float = 60.0) -> Optional[bool]:  # fmt: skip
    """HiGHS's verdict on assigning ``items`` (a model of its own: ``x[i, t]`` binary, each
    item once, each agent within its capacity): True, False, or None (unknown)."""
    from scipy.optimize import LinearConstraint, milp

    m, k = weight.shape[0], len(items)
    a_item = np.zeros((k, m * k))
    a_agent = np.zeros((m, m * k))
    for i in range(m):
        for t, j in enumerate(items):
            a_item[t, i * k + t] = 1.0
            a_agent[i, i * k + t] = float(weight[i, j])
    res = milp(np.zeros(m * k), integrality=np.ones(m * k), bounds=(0, 1),
               constraints=[LinearConstraint(a_item, 1, 1),
                            LinearConstraint(a_agent, -np.inf, capacity.astype(float))],
               options={"time_limit": limit})  # fmt: skip
    return True if res.status == 0 else (False if res.status == 2 else None)


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
                        yield _unexplained(f"collective {n_nodes} nodes, N={req.count}", t_exp,
                                           t_solve, "exact IP")  # fmt: skip
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
                if res.n_allocated == req.n:
                    continue  # (every task placed: nothing to explain)
                e, t_exp = _timed(explain_allocation, req, off, time_limit=10.0)
                if e is None:
                    yield _unexplained(f"CTAAP {gen} {n} tasks", t_exp, t_solve,
                                       "count bound / CP-SAT")  # fmt: skip
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


def testbed_referee(top: Any, ptop: Any) -> Tuple[Optional[bool], str]:
    """Whether ``top`` alone cannot be mapped onto ``ptop``, by another proof than the
    ``exact`` class model the explanation used: the assignment count (more of its nodes
    than their candidate hosts can hold, counted by a maximum flow of networkx), the hub
    bound of ``bench.testbed.vs_assign`` (a LAN with more links than the trunks carry to
    any switch it may take), else the per-link presence model of
    :func:`coalloc.testbed.exact.exact_core` with every node present (another CP-SAT
    formulation: node-alone candidates and a presence per link;
    it shares the host and trunk rows with the exact model). ``(True, how)``: proved
    infeasible; ``(False, how)``: a mapping found by the default method and verified;
    ``(None, "")``: neither."""
    import networkx as nx

    import coalloc.testbed as tb
    from coalloc.testbed.exact import exact_core
    from coalloc.testbed.explain import _alone
    from coalloc.testbed.methods.outcome import _problem

    inst = tb.Instance(top, ptop)
    res = inst.solve(time_limit=10.0)
    if res.has_solution and inst.verify(res).ok:
        return False, "mapped"
    pr = _problem(top, ptop, None)
    g = nx.DiGraph()
    for v in range(pr.nv):
        g.add_edge("s", ("v", v), capacity=1)
        for c in pr.cand[v]:
            for p in pr.members[c]:
                g.add_edge(("v", v), ("p", int(p)), capacity=1)
                g.add_edge(("p", int(p)), "t", capacity=_room(pr, int(p)))
    held = nx.maximum_flow_value(g, "s", "t") if "t" in g else 0
    if held < pr.nv:
        return True, "count"
    from bench.testbed.vs_assign import hub_bound

    for name in top.nodes:  # a LAN hub with more links than the trunks can carry to it
        bound = hub_bound(top, ptop, name)
        if bound is not None and bound < top.degree(name):
            return True, "hub bound"
    alone = _problem(_alone(top), ptop, None)
    core = exact_core(pr, time_limit=60.0, alone=alone)
    return (True, "presence model") if core is not None else (None, "")


def _room(pr: Any, p: int) -> int:
    """At most how many virtual nodes physical node ``p`` can host: the slots of the one
    type it acts as (its largest) and of its static types, over the least slot need (all of
    them on a switch or an unlimited type)."""
    caps = [float(c) for c in pr.cap[p]]
    static = [bool(x) for x in pr.static[p]]
    least = max(min((float(s) for s in pr.vslots), default=1.0), 1e-9)
    if pr.pis_switch[p] or any(c >= 1e6 for c in caps):
        return pr.nv
    acting = max((c for c, st in zip(caps, static) if not st), default=0.0)
    held = acting + sum(c for c, st in zip(caps, static) if st)
    return min(pr.nv, int(held / least + 1e-9))


def _testbed_row(label: str, top: Any, ptop: Any, t_solve: float) -> Optional[dict]:
    """Explain one failure and re-check it: the conflict by :func:`testbed_referee`, every
    node's removal mapped (default method, verified), every fix mapped."""
    import coalloc.testbed as tb
    from coalloc.testbed.explain import _sub, explain_mapping

    e, t_exp = _timed(explain_mapping, top, ptop, time_limit=10.0)
    if e is None:
        if tb.Instance(top, ptop).solve("exact", time_limit=60.0).has_solution:
            return None  # (the default method missed a mapping: not a "no")
        return _unexplained(label, t_exp, t_solve, "count / hub / presence model")
    conflict = e.conflict["vnodes"]
    sound, how = testbed_referee(_sub(top, conflict), ptop)
    minimal = all(tb.Instance(_sub(top, [u for u in conflict if u != v]), ptop)
                  .solve(time_limit=10.0).has_solution for v in conflict)  # fmt: skip
    fixes = []
    for rx in e.relaxations:
        if rx.kind == "drop_nodes":
            changed = _sub(top, [v for v in top.nodes if v not in rx.changes["drop_vnodes"]])
        elif rx.kind == "other_type":
            changed = _sub(top, list(top.nodes), retype=(rx.changes["vnode"], rx.changes["type"]))
        else:
            changed = _sub(top, list(top.nodes), scale=(
                set(conflict), rx.changes["bandwidth_fraction"]))
        inst = tb.Instance(changed, ptop)
        got = inst.solve(time_limit=10.0)
        fixes.append(bool(got.has_solution and inst.verify(got).ok))
    return {"label": label, "e": e, "sound": sound is True, "how": how,
            "ref_minimal": minimal, "fixes": fixes, "t_exp": t_exp, "t_solve": t_solve,
            "referee": "count / hub / presence model"}  # fmt: skip


def testbed_cases(quick: bool, repeats: int) -> Iterator[dict]:
    import coalloc.testbed as tb

    sizes = [20, 40] if quick else [20, 40, 70, 100]
    for size in sizes:
        for r in range(repeats * 3):
            ptop = tb.generators.deterlab(max(16, size // 2), 3, seed=r)
            top = tb.generators.random_topology(size, seed=1000 * size + r)
            inst = tb.Instance(top, ptop)
            res, t_solve = _timed(inst.solve, time_limit=10.0)
            if res.has_solution:
                continue
            row = _testbed_row(f"testbed {size} vnodes", top, ptop, t_solve)
            if row is not None:
                yield row


def replay_cases(quick: bool, repeats: int) -> Iterator[dict]:
    """The failures of the default mapper in the replays of ``bench.testbed.vs_assign``
    (its generators and its free testbed: the PCs and trunk bandwidth not held by the
    experiments mapped before), each explained on the free testbed it met."""
    import coalloc.testbed as tb
    from bench.testbed.vs_assign import free_testbed, make_generator

    n = 60 if quick else 150
    for name in ("deterlab", "grid5000", "lanheavy"):
        for r in range(max(1, repeats // 2)):
            ptop, wl = make_generator(name, n, r)
            used: set = set()
            trunk: Dict[str, float] = {}
            running: list = []
            for k, (arrival, duration, top) in enumerate(sorted(wl, key=lambda x: x[0])):
                for _end, nodes, loads in [x for x in running if x[0] <= arrival]:
                    used -= nodes
                    for t, b in loads.items():
                        trunk[t] = trunk.get(t, 0.0) - b
                running = [x for x in running if x[0] > arrival]
                free = free_testbed(ptop, used, trunk)
                inst = tb.Instance(top, free)
                res, t_solve = _timed(inst.solve, seed=r + k, time_limit=10.0)
                rep = inst.verify(res) if res.has_solution else None
                if rep is not None and rep.ok:
                    nodes = {p for p in res.mapping.values() if not ptop.nodes[p].is_switch}
                    used |= nodes
                    loads = dict(rep.trunk_load)
                    for t, b in loads.items():
                        trunk[t] = trunk.get(t, 0.0) + b
                    running.append((arrival + duration, nodes, loads))
                    continue
                row = _testbed_row(f"testbed replay {name}", top, free, t_solve)
                if row is not None:
                    yield row


def share_cases(quick: bool, repeats: int) -> Iterator[dict]:
    """Load-sharing problems whose load must wait (the paper's grid, Fig. 5, at a load
    above capacity): ``explain_share``'s conflict re-checked by a volume sum or a CP-SAT
    packing with sizes rounded against the claim (down), each checked fix by the family's
    own solvers on the changed problem (:func:`_served`)."""
    from coalloc.loadshare import Instance
    from coalloc.loadshare.generators import paper_setup

    sizes = [20] if quick else [20, 40, 100]
    for n in sizes:
        for r in range(repeats * 2):
            prob = paper_setup(n, light=(560.0, 500.0), seed=r)
            inst = Instance(prob)
            res, t_solve = _timed(inst.solve, time_limit=10.0)
            if inst._meets_all(res):
                continue
            e, t_exp = _timed(inst.explain, res, time_limit=10.0)
            if e is None:
                yield _unexplained(f"load sharing {n} nodes", t_exp, t_solve,
                                   "volume / CP-SAT packing")  # fmt: skip
                continue
            size = np.asarray(prob.job_size, dtype=float)
            cap = np.asarray(prob.capacity, dtype=float)
            jobs = e.conflict["jobs"]
            sound = _packs(size[jobs], cap, conflict=True) is False
            fixes = []
            for rx in e.relaxations:
                if not rx.checked:
                    continue  # (not offered: the sentence names checked fixes only)
                if rx.kind == "drop_items":
                    keep = [j for j in range(size.size) if j not in set(rx.changes["drop_items"])]
                    placed = rx.changes.get("placement")
                    fixes.append(_served(size[keep], cap, None if placed is None
                                         else [placed[j] for j in keep]))  # fmt: skip
                else:
                    more = cap.copy()
                    for i, add in rx.changes["add_capacity"].items():
                        more[int(i)] += add
                    fixes.append(_served(size, more))
            yield {"label": f"load sharing {n} nodes", "e": e, "sound": sound,
                   "fixes": fixes, "t_exp": t_exp, "t_solve": t_solve,
                   "referee": "volume / CP-SAT packing"}  # fmt: skip


def _served(size: np.ndarray, cap: np.ndarray, placement: Optional[List[int]] = None) -> bool:
    """A fix's referee: the placement the fix carries (the explanation's packing of the
    changed problem, rebuilt here from the jobs it holds back) checked by
    ``verify_placement`` (every job on a node, the throughput recomputed: all the load
    served) and by a sum of each node's jobs (nothing past a capacity); else the family's
    own solvers (its default portfolio, then its exact method) on the changed problem serve
    all its load, their placement checked by ``verify_placement``; else a CP-SAT packing."""
    from coalloc.loadshare import Instance, LoadSharingProblem, verify_placement

    prob = LoadSharingProblem(cap, size, [0] * size.size)
    inst = Instance(prob)
    if placement is not None:
        rep = verify_placement(prob, placement)
        where = np.asarray(placement, dtype=np.int64)
        if (rep.ok and rep.throughput >= size.sum() * (1 - 1e-9) and where.min(initial=0) >= 0
                and np.all(np.bincount(where, weights=size, minlength=cap.size) <= cap)):
            return True
    for method in (None, "exact"):
        res = inst.solve(method, time_limit=30.0)
        if inst._meets_all(res) and verify_placement(prob, res.placement,
                                                     claimed=res.throughput).ok:  # fmt: skip
            return True
    return _packs(size, cap, conflict=False) is True


def _packs(size: np.ndarray, cap: np.ndarray, *, conflict: bool) -> Optional[bool]:
    """Whether jobs of ``size`` pack onto nodes of ``cap``: the volume first, then CP-SAT
    on integers (units of 1e-6), rounded in the caller's favour never: with ``conflict``
    sizes down and capacities up (a False proves the real jobs do not pack), else sizes up
    and capacities down (a True proves they do)."""
    if conflict and size.sum() > cap.sum() * (1 + 1e-12):
        return False
    from ortools.sat.python import cp_model

    scale = 1e6
    if conflict:
        w = np.floor(size * scale).astype(np.int64)
        b = np.ceil(cap * scale).astype(np.int64)
    else:
        w = np.ceil(size * scale).astype(np.int64)
        b = np.floor(cap * scale).astype(np.int64)
    m = cp_model.CpModel()
    x = {(i, j): m.NewBoolVar(f"x{i}_{j}") for i in range(b.size) for j in range(w.size)}
    for j in range(w.size):
        m.AddExactlyOne(x[i, j] for i in range(b.size))
    for i in range(b.size):
        m.Add(sum(int(w[j]) * x[i, j] for j in range(w.size)) <= int(b[i]))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = 60.0
    solver.parameters.num_workers = 1
    st = solver.Solve(m)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    return False if st == cp_model.INFEASIBLE else None


def replay_table(nodes: int, jobs: int, budget: Any, sample: int, quiet: bool,
                 share: float = 0.5) -> None:  # fmt: skip
    """A week's SWF replay (collective requests) without and with ``simulate(explain=True)``.

    Prints the replay's wall time both ways, the rejections and how each was explained, and
    re-checks up to ``sample`` explained rejections on the timetables they met (rebuilt from
    the background and the bookings before them, captured by ``on_booking``): the conflict
    by the ``exact`` integer program, the nearest start by the scan (it fits there).
    """
    import tempfile

    import coalloc.collective as co
    from bench.collective.replay import synthetic_swf
    from coalloc.collective.generators import table1_pool
    from coalloc.collective.io import read_swf, swf_workload
    from coalloc.collective.simulate import simulate

    days = 7
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "week.swf")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(synthetic_swf(jobs, days=days, max_procs=64, seed=28))
        trace = read_swf(path)
    base = table1_pool(nodes, n_slots=288 * (days + 3), seed=2028)
    horizon = 300.0 * 288 * (days + 3)
    wl = swf_workload(trace, collective=True, procs_per_node=1.0, source="synthetic week")
    runs = {}
    for explain in (False, True):
        pool, booked = base.copy(), []

        def keep(q: int, r: Any, res: Any, p: Any, booked: list = booked) -> None:
            booked.append((q, res.start, r.duration, res.resources, res.amounts))

        t0 = time.perf_counter()
        sim = simulate(pool, wl.requests, align=300.0, in_place=True, horizon=horizon,
                       explain=explain, explain_budget=budget, show_progress=not quiet,
                       **({"explain_share": share} if explain else {}),
                       on_booking=keep, **wl.simulate_kwargs())  # fmt: skip
        runs[explain] = (time.perf_counter() - t0, sim, booked)
    (t_off, _, _), (t_on, sim, booked) = runs[False], runs[True]
    outcomes: Dict[str, int] = {}
    for rec in sim.records:
        if "explained" in rec:
            outcomes[rec["explained"]] = outcomes.get(rec["explained"], 0) + 1
    sound = nearest = checked = 0
    for q, rec in enumerate(sim.records):
        if checked >= sample or rec.get("explained") != "yes":
            continue
        met = base.copy()
        for q2, start, dur, nodes_, amounts in booked:
            if q2 < q:
                met.reserve(start, dur, nodes_, amounts)
        e = rec["explanation"]
        ref = co.coallocate(met, co.CollectiveRequest(**e["conflict"]), "exact", time_limit=60.0)
        sound += ref.status == "infeasible"
        if rec["nearest_start"] is not None:
            moved = next(r for r in e["relaxations"] if r["kind"] == "later_start")
            nearest += co.coallocate(met, co.CollectiveRequest(**moved["changes"]["request"])
                                     ).has_solution  # fmt: skip
        else:
            nearest += 1  # nothing claimed
        checked += 1
        del met
    rej = sum(not r["accepted"] for r in sim.records)
    print("\n| week replay | jobs | rejected | explained (yes / fits / undecided / budget) "
          "| re-checked: sound (exact IP), nearest start fits | replay s without | with "
          "--explain | extra s per explained rejection |")  # fmt: skip
    print("|---|---:|---:|---|---|---:|---:|---:|")
    tried = sum(n for k, n in outcomes.items() if k != "budget spent")
    per = (t_on - t_off) / max(1, tried)
    print(f"| {nodes} nodes, collective | {len(wl.requests)} | {rej} | "
          f"{outcomes.get('yes', 0)} / {outcomes.get('fits', 0)} / "
          f"{outcomes.get('undecided', 0)} / {outcomes.get('budget spent', 0)} | "
          f"{sound}/{checked}, {nearest}/{checked} | {t_off:.1f} | {t_on:.1f} | {per:.2f} |")


def binding_table(repeats: int) -> None:
    """CTAAP's ``explain_binding`` (what caps an allocation) at 100, 300 and 1,000 tasks:
    its time against the default solve's, and every reason it gives re-checked by
    ``verify`` on the allocation with the left-out task added to that cluster."""
    import coalloc.ctaap as ct
    from coalloc.ctaap.explain import explain_binding

    kinds = {"full": 2, "its": 3, "task": 4}  # the reason's first word -> verify's constraint
    print("\n| CTAAP allocation | cases | left out (median) | reasons re-checked by verify "
          "| binding s (median, max) | solve s (median) |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|")
    for n in (100, 300, 1000):
        t_b, t_s, left, ok, total = [], [], [], 0, 0
        for r in range(repeats):
            for gen in ("fig2", "random"):
                req, off = (ct.generators.fig2(1, n_tasks=n, seed=r) if gen == "fig2"
                            else ct.generators.random_instance(n, 5, seed=r))  # fmt: skip
                res, ts = _timed(ct.solve, req, off)
                b, tb = _timed(explain_binding, req, off, res)
                t_b.append(tb)
                t_s.append(ts)
                left.append(req.n - b["placed"])
                a = np.asarray(res.assignment)
                for d in b["blocked"][:5]:  # five left-out tasks per case, every cluster
                    for j in range(off.m):
                        why = d["by"][f"cluster {j}" if off.names is None
                                      else f"cluster {off.names[j]}"]  # fmt: skip
                        trial = a.copy()
                        trial[d["task"]] = j
                        rep = ct.verify(req, off, trial)
                        word = why.split()[0]
                        total += 1
                        ok += (rep.feasible if word == "fits"
                               else rep.violations[kinds[word]] > 0)  # fmt: skip
        print(f"| {n} tasks | {len(t_b)} | {statistics.median(left):.0f} | {ok}/{total} "
              f"| {statistics.median(t_b):.3f}, {max(t_b):.3f} "
              f"| {statistics.median(t_s):.3f} |")  # fmt: skip


def _failing(family: str, limit: int) -> Iterator[Tuple[str, Callable[[float], Any]]]:
    """Up to ``limit`` failing requests of ``family``: (label, explain(time_limit))."""
    found = 0
    if family == "collective":
        import coalloc.collective as co
        from coalloc.collective.explain import explain_request

        pool = co.generators.table1_pool(1024, load=(3.0, 4.0), seed=0)
        for simple, coll in co.generators.section42_requests(pool, 128, 6, seed=0):
            for req in (simple, coll):
                if found < limit and not co.coallocate(pool, req).has_solution:
                    found += 1
                    yield ("collective 1024 nodes",
                           lambda t, req=req: explain_request(pool, req, time_limit=t))
    elif family == "gap":
        from coalloc.loadshare import GapInstance, generate_gap, solve_gap
        from coalloc.loadshare.explain import explain_gap

        for r in range(limit):
            for kind in "cd":
                g = generate_gap(kind, 5, 40, seed=r)
                inst = GapInstance(g.cost, g.weight, np.floor(0.6 * g.capacity).astype(int))
                if found < limit and not solve_gap(inst,
                                                   time_limit=10.0).has_solution:  # fmt: skip
                    found += 1
                    yield "GAP 5x40", lambda t, inst=inst: explain_gap(inst, time_limit=t)
    elif family == "ctaap":
        import coalloc.ctaap as ct
        from coalloc.ctaap.explain import explain_allocation

        for r in range(limit):
            for gen in ("fig2", "random"):
                req, off = (ct.generators.fig2(1, n_tasks=1000, seed=r) if gen == "fig2"
                            else ct.generators.random_instance(1000, 5, seed=r))  # fmt: skip
                if found < 2 * limit and ct.solve(req, off).n_allocated < req.n:
                    found += 1
                    yield ("CTAAP 1000 tasks", lambda t, req=req, off=off: explain_allocation(
                        req, off, time_limit=t))  # fmt: skip
    elif family == "testbed":
        import coalloc.testbed as tb
        from coalloc.testbed.explain import explain_mapping

        for r in range(3 * limit):
            ptop = tb.generators.deterlab(35, 3, seed=r)
            top = tb.generators.random_topology(70, seed=70_000 + r)
            if found < limit and not tb.Instance(top, ptop).solve(time_limit=10.0).has_solution:
                found += 1
                yield ("testbed 70 vnodes",
                       lambda t, top=top, ptop=ptop: explain_mapping(top, ptop, time_limit=t))


def overrun_table(families: List[str], budgets: List[float], limit: int) -> None:
    """Issue 36's rule for explanations: each ``explain_*`` call on a failing request at
    each budget ``T``, its seconds against ``T + max(0.05, 0.05 T)``; the overrun
    (seconds past ``T``) median and max, and what the explanations established."""
    print("\n| family | budget T s | calls | within T + max(0.05, 0.05 T) | overrun s "
          "(median, max) | s (median) | sound / minimal / neither proved |")  # fmt: skip
    print("|---|---:|---:|---:|---|---:|---|")
    for fam in families:
        cases = list(_failing(fam, limit))
        for t in budgets:
            secs, sound, minimal = [], 0, 0
            for _label, explain in bar(cases, desc=f"{fam} {t:g} s"):
                e, dt = _timed(explain, t)
                secs.append(dt)
                sound += e is not None and e.sound is True
                minimal += e is not None and e.minimal is True
            if not secs:
                continue
            over = [s - t for s in secs]
            ok = sum(s <= t + max(0.05, 0.05 * t) for s in secs)
            print(f"| {cases[0][0]} | {t:g} | {len(secs)} | {ok}/{len(secs)} "
                  f"| {statistics.median(over):+.3f}, {max(over):+.3f} "
                  f"| {statistics.median(secs):.3f} | {sound} / {minimal} / "
                  f"{len(secs) - sound} |")  # fmt: skip


FAMILIES: Dict[str, Callable[[bool, int], Iterator[dict]]] = {
    "gap": gap_cases, "collective": collective_cases, "ctaap": ctaap_cases,
    "testbed": testbed_cases, "replay": replay_cases, "share": share_cases,
}  # fmt: skip


def main(argv: Any = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES) + ["none"])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--replay", action="store_true",
                    help="also a week's replay with simulate(explain=True) (the families "
                    "run unless --family names none: --family none)")  # fmt: skip
    ap.add_argument("--replay-nodes", type=count(), default=1024)
    ap.add_argument("--replay-jobs", type=count(), default=2000)
    ap.add_argument("--replay-budget", type=seconds(), default=None,
                    help="simulate's explain_budget (s; default none: the share alone)")
    ap.add_argument("--replay-share", type=float, default=0.5,
                    help="simulate's explain_share (default 0.5)")  # fmt: skip
    ap.add_argument("--replay-sample", type=count(0), default=5,
                    help="explained rejections re-checked on their timetables")  # fmt: skip
    ap.add_argument("--binding", action="store_true",
                    help="also CTAAP's explain_binding (what caps an allocation)")  # fmt: skip
    ap.add_argument("--overrun", action="store_true",
                    help="also each explanation's time against its budget (issue 36's rule: "
                    "T + max(0.05, 0.05 T)) at --budgets, on --overrun-cases failing "
                    "requests of each --family")  # fmt: skip
    ap.add_argument("--budgets", type=seconds(), nargs="+", default=[0.2, 1.0, 5.0])
    ap.add_argument("--overrun-cases", type=count(), default=3)
    add_quiet(ap)
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if args.overrun:
        overrun_table([f for f in args.family or list(FAMILIES) if f != "none"],
                      args.budgets, args.overrun_cases)  # fmt: skip
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
        return 0
    if args.binding:
        binding_table(args.repeats)
    if args.replay:
        replay_table(args.replay_nodes, args.replay_jobs, args.replay_budget,
                     args.replay_sample, args.quiet, args.replay_share)  # fmt: skip
    rows: Dict[str, List[dict]] = {}
    for fam in [f for f in args.family or list(FAMILIES) if f != "none"]:
        for case in bar(FAMILIES[fam](args.quick, args.repeats), desc=fam):
            rows.setdefault(case["label"], []).append(case)
    if not rows:
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
        return 0
    print("| failures of | explained | sound (referee) | proven minimal | minimal re-checked "
          "| fixes feasible | conflict size (median) | explain s (median, max) "
          "| solve s (median) | within solve + 1 s | excess s (median, max) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, cases in rows.items():
        k = len(cases)
        done = [c for c in cases if c["e"] is not None]
        sound = sum(c["sound"] for c in cases)
        minimal = sum(c["e"].minimal is True for c in done)
        fixes = [f for c in done for f in c["fixes"]]
        t_exp = [c["t_exp"] for c in cases]
        within = sum(c["t_exp"] <= c["t_solve"] + 1.0 for c in cases)
        excess = [c["t_exp"] - c["t_solve"] - 1.0 for c in cases]  # (<= 0: within)
        rechecked = [c["ref_minimal"] for c in done if "ref_minimal" in c]
        again = f"{sum(rechecked)}/{len(rechecked)}" if rechecked else "-"
        size = (f"{statistics.median(len(c['e'].demand) for c in done):.0f}" if done else "-")
        print(f"| {label} | {len(done)}/{k} | {sound}/{k} ({cases[0]['referee']}) "
              f"| {minimal}/{k} | {again} | {sum(fixes)}/{len(fixes)} | {size} "
              f"| {statistics.median(t_exp):.2f}, {max(t_exp):.2f} "
              f"| {statistics.median(c['t_solve'] for c in cases):.2f} | {within}/{k} "
              f"| {statistics.median(excess):+.2f}, {max(excess):+.2f} |")
    from coalloc._shared import explain as shared

    if hasattr(shared, "fix_margin"):  # (a src/ from before the learnt margin has none)
        print(f"fixes' learnt margin at end: {shared.fix_margin():.3f} s "
              f"(lateness of the last {len(shared._LATE)}: max "
              f"{max(shared._LATE, default=0.0):.3f} s)")  # fmt: skip
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
