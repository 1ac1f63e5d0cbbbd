"""Why not, for the GAP (issue 38): explanations of infeasible instances, re-checked by CP-SAT.

Infeasible instances come from two generators: the OR-Library/Chu-Beasley types a-d
(``generate_gap``) with every capacity scaled by a factor below 1, and uniform random
weights with capacities drawn independently (``--sizes`` sets agents x items). For each one
the script runs :func:`coalloc.loadshare.explain.explain_gap`, times it beside the GAP's own
``solve_gap(..., "exact")`` on the same instance (the "no" it explains), and re-checks the
explanation with an independent exact model (OR-Tools CP-SAT, not the HiGHS model the
explanation used):

* **sound**: the conflict's items alone have no assignment (CP-SAT says INFEASIBLE);
* **minimal**: dropping any one conflict item, CP-SAT finds an assignment;
* **relaxations**: the changed instance (items dropped, capacities raised) has an
  assignment according to CP-SAT.

Run (about 2 minutes on two cores)::

    python -m bench.loadshare.explain --repeats 3

It prints one row per generator and size: instances, % sound, % proven minimal (by the
explanation) and % minimal by CP-SAT, % relaxations feasible, median explanation and solve
times, and the median ratio explanation / (solve + 1 s).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import GapInstance, generate_gap, solve_gap
from coalloc.loadshare.explain import explain_gap


def cpsat_fits(weight: np.ndarray, capacity: np.ndarray, items, limit: float = 30.0):
    """CP-SAT's verdict on assigning ``items``: True, False, or None (unknown)."""
    from ortools.sat.python import cp_model

    m = weight.shape[0]
    model = cp_model.CpModel()
    x = {(i, j): model.NewBoolVar(f"x{i}_{j}") for i in range(m) for j in items}
    for j in items:
        model.AddExactlyOne(x[i, j] for i in range(m))
    for i in range(m):
        model.Add(sum(int(weight[i, j]) * x[i, j] for j in items) <= int(capacity[i]))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = limit
    solver.parameters.num_workers = 1
    st = solver.Solve(model)
    if st in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return True
    return False if st == cp_model.INFEASIBLE else None


def instances(sizes, repeats):
    """Infeasible instances of both generators: (generator label, GapInstance)."""
    for m, n in sizes:
        for r in range(repeats):
            for kind in "abcd":
                g = generate_gap(kind, m, n, seed=100 * r + ord(kind))
                for f in (0.45, 0.6, 0.75):
                    b = np.floor(g.capacity * f).astype(np.int64)
                    yield f"orlib-{kind} {m}x{n}", GapInstance(g.cost, g.weight, b)
            rng = np.random.default_rng(7 + r)
            w = rng.integers(1, 40, size=(m, n))
            for f in (0.3, 0.4):
                b = rng.integers(1, int(f * w.sum() / m) + 2, size=m)
                yield f"uniform {m}x{n}", GapInstance(np.ones((m, n)), w, b)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="3x12,5x40,10x100")
    ap.add_argument("--time-limit", type=float, default=10.0)
    add_quiet(ap)
    args = ap.parse_args(argv)
    sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
    rows: dict = {}
    for label, inst in bar(list(instances(sizes, args.repeats)), desc="instances"):
        if cpsat_fits(inst.weight, inst.capacity, list(range(inst.n))) is not False:
            continue  # feasible (or undecided): nothing to explain
        t = time.perf_counter()
        res = solve_gap(inst, "exact", time_limit=args.time_limit, seed=0)
        t_solve = time.perf_counter() - t
        t = time.perf_counter()
        e = explain_gap(inst, time_limit=args.time_limit)
        t_explain = time.perf_counter() - t
        row = rows.setdefault(label, {"n": 0, "sound": 0, "minimal": 0, "cp_minimal": 0,
                                      "relax": 0, "relax_ok": 0, "t_e": [], "t_s": [],
                                      "ratio": [], "size": [], "status": []})  # fmt: skip
        row["n"] += 1
        row["status"].append(res.status)
        if e is None:
            continue
        conflict = [int(d.split()[1]) for d in e.demand]
        row["size"].append(len(conflict))
        row["sound"] += cpsat_fits(inst.weight, inst.capacity, conflict) is False
        row["minimal"] += e.minimal is True
        row["cp_minimal"] += all(
            cpsat_fits(inst.weight, inst.capacity, [k for k in conflict if k != j]) is True
            for j in conflict
        )
        for r in e.relaxations:
            row["relax"] += 1
            if r.kind == "drop_items":
                keep = [j for j in range(inst.n) if j not in r.changes["drop_items"]]
                row["relax_ok"] += cpsat_fits(inst.weight, inst.capacity, keep) is True
            else:
                cap = inst.capacity.copy()
                for i, add in r.changes["add_capacity"].items():
                    cap[int(i)] += add
                row["relax_ok"] += cpsat_fits(inst.weight, cap, list(range(inst.n))) is True
        row["t_e"].append(t_explain)
        row["t_s"].append(t_solve)
        row["ratio"].append(t_explain / (t_solve + 1.0))
    print("| generator | infeasible | sound (CP-SAT) | minimal (claimed) | minimal (CP-SAT) "
          "| relaxations feasible | conflict size (median) | explain s (median) "
          "| solve s (median) | explain / (solve + 1 s), median, max |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for label, r in rows.items():
        k = max(1, len(r["t_e"]))
        print(f"| {label} | {r['n']} | {100 * r['sound'] / k:.0f} % "
              f"| {100 * r['minimal'] / k:.0f} % | {100 * r['cp_minimal'] / k:.0f} % "
              f"| {r['relax_ok']}/{r['relax']} | {statistics.median(r['size'] or [0]):.0f} "
              f"| {statistics.median(r['t_e'] or [0]):.2f} "
              f"| {statistics.median(r['t_s'] or [0]):.2f} "
              f"| {statistics.median(r['ratio'] or [0]):.2f}, {max(r['ratio'] or [0]):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
