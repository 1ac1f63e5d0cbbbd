"""Wrong answers presented as proven: exact methods against brute force at every scale (issue 30).

Small random instances are solved exactly after scaling their numbers by 1e-9 ... 1e12 and
judged by brute force on the unscaled data. An answer counts as *wrong* when its status is
``optimal`` with another objective than the brute-force optimum, or ``infeasible`` where a
solution exists; anything else (``feasible``, ``time_limit``) is honest, and counted apart.

- **loadshare**: ``share_exact`` (HiGHS, CBC) on 2-3 nodes and 2-5 jobs;
- **GAP**: ``solve_gap(..., "exact")`` (CP-SAT, HiGHS, CBC) on OR-Library-type A-D
  instances of 2-3 agents and 6-8 items, costs and weights scaled apart;
- **runner**: the shared MILP runner on a bottleneck model whose coefficients lie inside
  the sane range but whose optimum is a few 1e-6 (an occupancy), HiGHS and CBC.

Run (about 3 minutes on two cores)::

    python -m bench.shared.proven_answers --trials 10

The script uses only public entry points that existed before issue 30, so the same command
in an environment with an older coalloc measures the "before".
"""

from __future__ import annotations

import argparse
import collections
import itertools
import sys
import time

import numpy as np
import scipy.sparse as sp

from bench.shared._progress import add_quiet, bar

SCALES = [1e-9, 1e-7, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9, 1e11, 1e12]


def _brute_share(cap, size, origin) -> float:
    n, best = len(cap), -1.0
    for pl in itertools.product(range(n), repeat=len(size)):
        load = np.bincount(np.array(pl, dtype=int), weights=size, minlength=n)
        best = max(best, float(np.minimum(load, cap).sum()))
    return best


def _brute_gap(cost, weight, capacity):
    m, n = cost.shape
    best = None
    for a in itertools.product(range(m), repeat=n):
        a = np.array(a)
        used = np.bincount(a, weights=weight[a, np.arange(n)], minlength=m)
        if np.all(used <= capacity):
            v = float(cost[a, np.arange(n)].sum())
            best = v if best is None or v < best else best
    return best


def _judge(tally, key, status, value, truth, rel=1e-6):
    tally[key + ("runs",)] += 1
    if truth is None:
        if status == "optimal":
            tally[key + ("wrong",)] += 1
        return
    if status == "infeasible":
        tally[key + ("wrong",)] += 1
    elif status == "optimal":
        if abs(value - truth) > rel * max(abs(truth), 1e-300):
            tally[key + ("wrong",)] += 1
    else:
        tally[key + ("not proven",)] += 1


def loadshare(trials, seed, tally):
    from coalloc.loadshare import LoadSharingProblem, share_exact

    rng = np.random.default_rng(seed)
    for _ in bar(range(trials), desc="loadshare", unit="instance"):
        n, jobs = int(rng.integers(2, 4)), int(rng.integers(2, 6))
        cap = rng.integers(1, 30, n).astype(float)
        size = rng.integers(1, 30, jobs).astype(float)
        origin = rng.integers(0, n, jobs)
        truth = _brute_share(cap, size, origin)
        for s in SCALES:
            prob = LoadSharingProblem(cap * s, size * s, origin)
            for backend in ("highs", "cbc"):
                r = share_exact(prob, solver=backend, time_limit=20)
                _judge(tally, ("loadshare", backend), r.status, r.throughput / s, truth)


def gap(trials, seed, tally):
    from coalloc.loadshare import GapInstance, generate_gap, solve_gap

    for t in bar(range(trials), desc="GAP", unit="instance"):
        g = generate_gap("abcd"[t % 4], 2 + t % 2, 6 + t % 3, seed=seed + t)
        truth = _brute_gap(g.cost, g.weight, g.capacity)
        for cs, ws in itertools.product([1e-9, 1e-7, 1e-3, 1e12], [1, 10**11]):
            inst = GapInstance(g.cost * cs, g.weight * ws, g.capacity * ws)
            for backend in ("cpsat", "highs", "cbc"):
                r = solve_gap(inst, "exact", solver=backend, time_limit=20, seed=0)
                value = None if r.objective is None else r.objective / cs
                _judge(tally, ("gap", backend), r.status, value, truth)


def bottleneck_model(rng, n: int = 5, m: int = 3):
    """``min z`` with every task on one processor and ``cap_p z >= sum_i w_i x_ip``:
    coefficients inside the runner's sane range (1e-3 ... 1e3), an optimum of a few 1e-6 (an
    occupancy). Returns ``((c, A, row_lb, row_ub, integrality, ub), optimum)``, the optimum
    by enumeration (also used by ``tests/shared/test_milp_scale.py``)."""
    w = rng.integers(1, 9, size=n) * 1e-3
    cap = rng.integers(1, 4, size=m) * 1e3
    nv = n * m + 1
    rows, lo, hi = [], [], []
    for i in range(n):
        r = np.zeros(nv)
        r[i * m:(i + 1) * m] = 1
        rows.append(r), lo.append(1.0), hi.append(1.0)
    for p in range(m):
        r = np.zeros(nv)
        r[-1] = cap[p]
        r[p:n * m:m] = -w
        rows.append(r), lo.append(0.0), hi.append(np.inf)
    c = np.zeros(nv)
    c[-1] = 1.0
    integ, ub = np.ones(nv), np.ones(nv)
    integ[-1], ub[-1] = 0, np.inf
    truth = min(
        max(sum(w[i] for i in range(n) if a[i] == p) / cap[p] for p in range(m))
        for a in itertools.product(range(m), repeat=n)
    )
    model = (c, sp.csr_matrix(np.array(rows)), np.array(lo), np.array(hi), integ, ub)
    return model, truth


def runner(trials, seed, tally):
    from coalloc._shared import milp

    rng = np.random.default_rng(seed)
    for _ in bar(range(trials), desc="runner", unit="model"):
        (c, A, lo, hi, integ, ub), truth = bottleneck_model(rng)
        for backend in ("highs", "cbc"):
            out = milp.run_milp(backend, milp.import_solver(backend), c, A, lo, hi,
                                integrality=integ, lb=0.0, ub=ub, progress=False)  # fmt: skip
            value = None if out.x is None else float(c @ out.x)  # (older outcomes: no .objective)
            _judge(tally, ("runner", backend), out.status, value, truth, rel=1e-5)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=10, help="instances per family (x scales)")
    ap.add_argument("--seed", type=int, default=0)
    add_quiet(ap)
    args = ap.parse_args(argv)
    import coalloc

    tally: collections.Counter = collections.Counter()
    t0 = time.perf_counter()
    loadshare(args.trials, args.seed, tally)
    gap(max(4, args.trials // 2), args.seed, tally)
    runner(3 * args.trials, args.seed, tally)
    print(f"coalloc {coalloc.__version__} from {coalloc.__file__}; "
          f"{time.perf_counter() - t0:.0f} s")  # fmt: skip
    print(f"{'family':<10} {'solver':<6} {'runs':>5} {'wrong':>6} {'not proven':>11}")
    for fam, solver in sorted({k[:2] for k in tally}):
        print(f"{fam:<10} {solver:<6} {tally[(fam, solver, 'runs')]:>5} "
              f"{tally[(fam, solver, 'wrong')]:>6} {tally[(fam, solver, 'not proven')]:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
