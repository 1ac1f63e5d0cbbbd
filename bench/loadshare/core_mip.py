"""Issue 40 (h50gap): can a core MIP improve the heuristic's answer on type d?

For each instance of ``--only`` and seed: the heuristic's answer at ``--limit`` seconds,
the LP relaxation's reduced costs, then HiGHS's MIP (``highspy``, one thread, ``--mip``
seconds, the answer as its start solution) on cores of every ``--k``: per item its k
pairs of least reduced cost, the LP's support and the answer's pair (``--elite E``: the
pairs of the E best answers of E more seeds too, and, with ``--fix``, items on which those
answers agree fixed to their agent). Printed per core: its variables, HiGHS's status,
seconds, objective and dual bound, and the gap to the best known. Every improved answer
is checked by ``verify_gap``.

``--equal F``: at equal time instead, per seed interleaved (the order alternating), the
heuristic at ``--limit`` T against the heuristic at ``(1 - F) T``, the LP and the core MIP
(the first ``--k``) until T from the call's start (less 0.03 s); printed per instance the
median gap of each, the mean and worst over the instances, the MIP's improvements and the
B calls' wall seconds.

    PYTHONPATH=src:. python -m bench.loadshare.core_mip --data /work/peers/gapdata \\
        --only chu1997/d20100 chu1997/d10100 --limit 1 --mip 1 --k 2 3 4 6
    PYTHONPATH=src:. python -m bench.loadshare.core_mip --data /work/peers/gapdata \\
        --only chu1997/d05100 chu1997/d05200 chu1997/d10100 chu1997/d10200 \\
        chu1997/d20100 chu1997/d20200 --limit 1 --k 3 --seeds 0 1 2 3 4 --equal 0.3
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from bench.loadshare.gap_published import best_known
from bench.shared._progress import add_quiet, bar
from coalloc.loadshare import read_gap, solve_gap, verify_gap
from coalloc.loadshare.gap.bounds import lp_relaxation


def core_mip(inst, allowed: np.ndarray, start: np.ndarray, seconds: float):
    """HiGHS's MIP on the pairs ``allowed`` ((m, n) bool) from ``start``: (variables,
    status, seconds, assignment or None, dual bound)."""
    import highspy

    m, n = inst.m, inst.n
    ii, jj = np.nonzero(allowed)
    k = ii.size
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = k, m + n
    lp.col_cost_ = inst.cost[ii, jj].astype(np.float64)
    lp.col_lower_, lp.col_upper_ = np.zeros(k), np.ones(k)
    lp.row_lower_ = np.concatenate([np.full(m, -inf), np.ones(n)])
    lp.row_upper_ = np.concatenate([inst.capacity.astype(np.float64), np.ones(n)])
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.arange(0, 2 * k + 1, 2, dtype=np.int32)
    index = np.empty(2 * k, dtype=np.int32)
    index[0::2], index[1::2] = ii, m + jj
    value = np.empty(2 * k)
    value[0::2], value[1::2] = inst.weight[ii, jj], 1.0
    lp.a_matrix_.index_, lp.a_matrix_.value_ = index, value
    lp.integrality_ = [highspy.HighsVarType.kInteger] * k
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(seconds))
    h.passModel(lp)
    sol = highspy.HighsSolution()
    sol.col_value = (start[jj] == ii).astype(np.float64)
    h.setSolution(sol)
    t = time.perf_counter()
    h.run()
    t = time.perf_counter() - t
    x = np.asarray(h.getSolution().col_value)
    out = np.full(n, -1, dtype=np.int64)
    sel = x > 0.5
    out[jj[sel]] = ii[sel]
    status = str(h.getModelStatus()).rpartition(".")[2]
    return k, status, t, (out if np.all(out >= 0) else None), h.getInfo().mip_dual_bound


def _core(inst, k: int, answers: np.ndarray, x_lp, rc, fix: bool) -> np.ndarray:
    """The core: per item its k pairs of least reduced cost, the LP's support, the
    answers' pairs (``fix``: items the answers agree on fixed to their agent)."""
    cols = np.arange(inst.n)
    inc = answers[0]
    allowed = np.zeros((inst.m, inst.n), dtype=bool)
    allowed[np.argsort(rc, axis=0, kind="stable")[:k], cols[None, :]] = True
    allowed |= x_lp > 1e-9
    allowed[answers, cols[None, :]] = True
    if fix:
        agree = np.all(answers == inc, axis=0)
        allowed[:, agree] = False
        allowed[inc[agree], np.flatnonzero(agree)] = True
    return allowed & (inst.weight <= inst.capacity[:, None])


def _with_mip(inst, limit: float, share: float, k: int, seed: int):
    """The heuristic at ``(1 - share) limit``, then the LP and the core MIP until
    ``limit`` from the start: (objective, whether the MIP improved it, wall seconds)."""
    t0 = time.perf_counter()
    r = solve_gap(inst, "heuristic", time_limit=(1.0 - share) * limit, seed=seed)
    inc, z = np.asarray(r.assignment, dtype=np.int64), float(r.objective)
    _, x_lp, rc = lp_relaxation(inst, "min", True, until=t0 + limit)
    left = limit - (time.perf_counter() - t0) - 0.03
    improved = False
    if left > 0.02:
        _, _, _, out, _ = core_mip(inst, _core(inst, k, inc[None, :], x_lp, rc, False), inc,
                                   left)  # fmt: skip
        if out is not None:
            zz = float(inst.cost[out, np.arange(inst.n)].sum())
            if zz < z:
                assert verify_gap(inst, out, claimed=zz).ok
                z, improved = zz, True
    return z, improved, time.perf_counter() - t0


def equal_time(args, best) -> None:
    """``--equal``: the heuristic against the heuristic and the core MIP at equal time."""
    gaps_a, gaps_b, improved, walls = {}, {}, 0, []
    for key in bar(args.only, desc="instances"):
        inst = read_gap(os.path.join(args.data, *key.split("/")))[0]
        bk = best[key]
        ga, gb = [], []
        for seed in args.seeds:
            for variant in ("ab" if seed % 2 == 0 else "ba"):
                if variant == "a":
                    r = solve_gap(inst, "heuristic", time_limit=args.limit, seed=seed)
                    ga.append(100 * (r.objective - bk) / bk)
                else:
                    z, imp, wall = _with_mip(inst, args.limit, args.equal, args.k[0], seed)
                    gb.append(100 * (z - bk) / bk)
                    improved += imp
                    walls.append(wall)
        gaps_a[key], gaps_b[key] = statistics.median(ga), statistics.median(gb)
        print(f"{key}: heuristic {gaps_a[key]:.3f} %, with the core MIP {gaps_b[key]:.3f} %")
    a, b = list(gaps_a.values()), list(gaps_b.values())
    print(f"mean / worst: heuristic {statistics.mean(a):.3f} / {max(a):.3f} %, with the core "
          f"MIP {statistics.mean(b):.3f} / {max(b):.3f} %; the MIP improved {improved} of "
          f"{len(walls)} calls; their wall seconds median / max "
          f"{statistics.median(walls):.3f} / {max(walls):.3f}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("COALLOC_GAPDATA", ""))
    ap.add_argument("--only", nargs="+", required=True, help="set/name, e.g. chu1997/d20100")
    ap.add_argument("--limit", type=float, default=1.0, help="the heuristic's seconds")
    ap.add_argument("--mip", type=float, default=1.0, help="HiGHS's seconds a core")
    ap.add_argument("--k", type=int, nargs="+", default=[2, 3, 4, 6])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--elite", type=int, default=0, help="more answers (seeds) whose pairs join")
    ap.add_argument("--fix", action="store_true", help="fix the items the answers agree on")
    ap.add_argument("--equal", type=float, default=0.0, help="at equal time: the MIP's share")
    add_quiet(ap)
    args = ap.parse_args(argv)
    best = best_known(args.data)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if args.equal > 0:
        equal_time(args, best)
        print(f"load average at end: {os.getloadavg()[0]:.2f}")
        return
    for key in bar(args.only, desc="instances"):
        inst = read_gap(os.path.join(args.data, *key.split("/")))[0]
        bk = best[key]
        for seed in args.seeds:
            runs = [solve_gap(inst, "heuristic", time_limit=args.limit, seed=seed + 1000 * e)
                    for e in range(1 + args.elite)]  # fmt: skip
            runs.sort(key=lambda r: r.objective)
            answers = np.array([r.assignment for r in runs], dtype=np.int64)
            inc = answers[0]
            _, x_lp, rc = lp_relaxation(inst, "min", True, until=time.perf_counter() + 30)
            z0 = float(runs[0].objective)
            print(f"{key} seed {seed}: heuristic {z0:g} ({100 * (z0 - bk) / bk:.3f} %)")
            cols = np.arange(inst.n)
            for k in args.k:
                allowed = _core(inst, k, answers, x_lp, rc, args.fix)
                nv, status, t, out, dual = core_mip(inst, allowed, inc, args.mip)
                z = float(inst.cost[out, cols].sum()) if out is not None else None
                if z is not None and z < z0:
                    assert verify_gap(inst, out, claimed=z).ok
                gap = "" if z is None else f" ({100 * (z - bk) / bk:.3f} %)"
                print(f"  k={k}: {nv} variables, {status} in {t:.2f} s, objective {z}{gap}, "
                      f"dual bound {dual:g}")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
