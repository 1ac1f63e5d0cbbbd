"""The joint job bound (issue 40, h51tmap): every dense job of the task graph *together*,
counted integrally per side of every bridge of the resource graph, as one small MILP whose
proven dual bound is a lower bound on every mapping's maximum occupancy. What
:func:`coalloc.taskmap.lower_bound` does with ``strength="joint"`` (opt-in; the default's
job bound, :mod:`coalloc.taskmap.jobbound`, takes each job *alone*).

**Why.** On the Table 1 pipelines with light streams (``c = 1``) a job alone can be spread
one task per processor anywhere, so the per-job bound is the heaviest task over the largest
capacity; what the mappings pay is the jobs *competing* for the few subtrees with large
processors behind links of small bandwidth, which only an argument over all jobs at once
sees.

**The relaxation, step by step** (each step only drops constraints of the true problem or
lowers a load, so the least ``L`` of the relaxation is at most the optimum):

1. *Drop the tasks outside the jobs* and every stream between two jobs or with an end
   outside them (Lemma 1 of :mod:`~coalloc.taskmap.jobbound`, for the union of the jobs:
   every processor and link load only falls).
2. *Counts per side.* The resource graph's bridges make a tree of sides (its
   2-edge-connected components; :class:`~coalloc.taskmap.cutbound._Sides`). In a mapping,
   let ``N_jC`` be the number of tasks of job ``j`` on the processors of side ``C`` and the
   sides below it (its subtree). One binary ``y[j, C, N]`` per possible count, exactly one
   per ``(j, C)``; at the root ``N_j = k_j``. A side's own count ``o_jC = N_jC - sum over
   its child sides D of N_jD`` is at least 0 (0 for a side with no processor); the own
   count is split over the side's processors as integers ``x[j, p]``.
3. *The bridges, jointly.* Every route between the two sides of a bridge crosses it, and by
   Lemma 2 of :mod:`~coalloc.taskmap.jobbound` the volume between ``N`` tasks of job ``j``
   and its other ``k_j - N`` is at least ``cut_j[N]``; the jobs' streams are distinct, so the
   bridge above ``C`` carries at least ``sum_j cut_j[N_jC]``: ``<= L bw_C``.
4. *Processor weights.* The ``x`` tasks of job ``j`` on processor ``p`` weigh at least
   ``W_j(x)``, the sum of the job's ``x`` lightest weights: a convex function of ``x``
   (increasing differences), so it is the largest of its tangents ``W_j(m) + (x - m)
   w_j(m+1)`` (``w_j`` sorted ascending, ``m = 0..k_j - 1``); a variable ``z[j, p]`` at least
   every tangent is at least ``W_j(x)``, and ``sum_j z[j, p] <= L c_p``.
5. *Dropped* (relaxing): a processor's own links (except as a bridge), the volume between
   jobs, which task of a job goes where.

The MILP minimises ``L`` over ``lower <= L <= upper`` (``upper``: any value, e.g. a
mapping's occupancy). With ``L <= upper`` known, a count whose cut alone exceeds ``upper bw``
or whose lightest weight exceeds ``upper`` x the capacity of its subtree (or whose other
tasks' lightest weight exceeds ``upper`` x the capacity outside it) is left out: no
relaxed solution with ``L <= upper`` uses it. So:

* HiGHS proves the MILP infeasible: the relaxation's least ``L`` is above ``upper``, and
  ``upper`` is returned (a mapping's occupancy: that mapping is optimal);
* otherwise HiGHS's dual bound (the best proven lower end of its branch and bound, also
  when a node or time limit stops it) is at most the relaxation's least ``L``; it is
  returned less a relative ``_SLACK`` (HiGHS's feasibility tolerances), and never below
  ``lower``.

The MILP's size is ``sum_j k_j`` x sides binaries at most; the work is capped by a node count
(``_NODES``; deterministic, as HiGHS with one thread) and a model size (``_MAX_COLS``: above
it ``lower`` is returned). Tested against brute force on tiny instances
(``tests/taskmap/test_bounds_joint.py``).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .model import ResourceGraph, TaskGraph

__all__ = ["joint_bound", "prove_at"]

_SLACK = 1e-6  # relative: HiGHS's primal/dual feasibility tolerances are 1e-7
_NODES = 5000  # branch-and-bound nodes at most (a count: the same bound on any machine)
_MAX_COLS = 200_000  # a larger model is not built (lower returned)


def _model(tasks: TaskGraph, resources: ResourceGraph, upper: float):
    """The MILP's rows, or None when it does not apply (no jobs, a graph in pieces, too
    large). Returns ``(cols_lo, cols_hi, integral, rows, L_col)`` with ``rows`` a list of
    ``(coef dict, low, high)``."""
    from .cutbound import _Sides
    from .jobbound import _jobs

    jobs = _jobs(tasks)
    if not jobs or resources.n_processors < 1:
        return None
    sides = _Sides(resources)
    n = sides.ncomp
    if sides.order.shape[0] != n:
        return None  # a resource graph in pieces
    own = [[] for _ in range(n)]
    for q, c in enumerate(sides.pcomp.tolist()):
        own[c].append(q)
    kids = [[] for _ in range(n)]
    for c in range(n):
        if sides.parent[c] >= 0:
            kids[int(sides.parent[c])].append(c)
    root = int(sides.order[-1])
    sub_cap = np.zeros(n)  # capacity of each side's subtree
    for c in sides.order.tolist():  # leaves first
        sub_cap[c] += sides.cap[own[c]].sum()
        if sides.parent[c] >= 0:
            sub_cap[int(sides.parent[c])] += sub_cap[c]
    total = float(sides.cap.sum())
    w = tasks.node_weight.astype(np.float64)
    U = float(upper) * (1 + _SLACK)
    lo, hi, integ, rows = [0.0], [float(upper)], [False], []  # column 0: L
    y: dict = {}  # (j, C) -> [(N, col)]

    def col(low: float, high: float, integral: bool) -> int:
        lo.append(low)
        hi.append(high)
        integ.append(integral)
        return len(lo) - 1

    prefix = []
    for j, (m, cut) in enumerate(jobs):
        k = m.shape[0]
        W = np.concatenate([[0.0], np.cumsum(np.sort(w[m]))])
        prefix.append(W)
        for C in range(n):
            if C == root:
                y[(j, C)] = [(k, col(1.0, 1.0, True))]
                continue
            ok = [N for N in range(k + 1)
                  if cut[N] <= U * sides.bw_up[C] and W[N] <= U * sub_cap[C]
                  and W[k - N] <= U * max(total - sub_cap[C], 0.0)]  # fmt: skip
            y[(j, C)] = [(N, col(0.0, 1.0, True)) for N in ok]
            if len(lo) > _MAX_COLS:
                return None
            rows.append(({q: 1.0 for _, q in y[(j, C)]}, 1.0, 1.0))
    for C in range(n):
        if C != root:
            coef = {q: float(jobs[j][1][N]) for j in range(len(jobs)) for N, q in y[(j, C)]}
            coef[0] = -float(sides.bw_up[C])
            rows.append((coef, -np.inf, 0.0))
    load = {q: {0: -float(sides.cap[q])} for q in range(sides.cap.shape[0])}
    for j, (m, _) in enumerate(jobs):
        k = m.shape[0]
        W = prefix[j]
        for C in range(n):
            ocount: dict = {}  # own count of job j on C as coefficients
            for N, q in y[(j, C)]:
                ocount[q] = ocount.get(q, 0.0) + N
            for D in kids[C]:
                for N, q in y[(j, D)]:
                    ocount[q] = ocount.get(q, 0.0) - N
            if not own[C]:
                rows.append((ocount, 0.0, 0.0))
                continue
            if len(own[C]) == 1:
                xs = {own[C][0]: ocount}
                rows.append((ocount, 0.0, np.inf))
            else:
                xs = {}
                link = dict(ocount)
                for p in own[C]:
                    xp = col(0.0, float(k), True)
                    xs[p] = {xp: 1.0}
                    link[xp] = link.get(xp, 0.0) - 1.0
                rows.append((link, 0.0, 0.0))
            for p, x in xs.items():
                z = col(0.0, np.inf, False)
                load[p][z] = 1.0
                for mm in range(k):  # z >= W(mm) + (x - mm) w(mm+1)
                    slope = W[mm + 1] - W[mm]
                    coef = {q: -slope * a for q, a in x.items()}
                    coef[z] = 1.0
                    rows.append((coef, W[mm] - mm * slope, np.inf))
    for coef in load.values():
        if len(coef) > 1:
            rows.append((coef, -np.inf, 0.0))
    return np.array(lo), np.array(hi), np.array(integ), rows


def _solve(tasks: TaskGraph, resources: ResourceGraph, lower: float, upper: float,
           nodes: Optional[int], time_limit: Optional[float],
           until: Optional[float] = None) -> tuple:  # fmt: skip
    """One MILP with ``lower <= L <= upper``: ``("infeasible", upper, upper)`` when HiGHS
    proves it infeasible, else ``(status, dual, objective)`` with HiGHS's dual bound (NaN
    when none) and its best objective (inf when none); ``("n/a", lower, inf)`` when the
    model does not apply. ``until`` (a :func:`time.perf_counter` value): HiGHS gets at most
    the time left once the model is built (``("stopped", NaN, inf)`` when none is)."""
    import time

    built = _model(tasks, resources, upper)
    if built is None:
        return "n/a", lower, np.inf
    if until is not None:
        left = until - time.perf_counter()
        if left <= 1e-3:
            return "stopped", float("nan"), np.inf
        time_limit = left if time_limit is None else min(time_limit, left)
    lo, hi, integ, rows = built
    lo[0] = lower
    cost = np.zeros(lo.shape[0])
    cost[0] = 1.0
    status, dual, obj, _ = run_highs(cost, lo, hi, integ, rows, nodes, time_limit)
    if status == "infeasible":
        return "infeasible", upper, upper
    return status, dual, obj


def run_highs(cost: np.ndarray, lo: np.ndarray, hi: np.ndarray, integ: np.ndarray,
              rows: list, nodes: Optional[int], time_limit: Optional[float]) -> tuple:  # fmt: skip
    """``min cost.x`` over rows ``(coef dict, low, high)`` and column bounds, with HiGHS
    (one thread, no output). Returns ``(status, dual, objective, x)``: status
    ``"infeasible"`` (proven), ``"optimal"`` or ``"stopped"`` (a limit or anything else);
    HiGHS's dual bound (NaN when none); the best objective and solution found (inf and
    None when none: also after a limit, HiGHS's incumbent)."""
    import highspy
    import scipy.sparse as sp

    from .._shared.milp.highs import quiet_highs

    r, c, v, rlo, rhi = [], [], [], [], []
    for i, (coef, a, b) in enumerate(rows):
        for q, x in coef.items():
            r.append(i)
            c.append(q)
            v.append(x)
        rlo.append(a)
        rhi.append(b)
    nv = lo.shape[0]
    a = sp.csc_matrix((v, (r, c)), shape=(len(rows), nv))
    a.sum_duplicates()
    a.sort_indices()
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = nv, len(rows)
    lp.col_cost_ = np.asarray(cost, dtype=np.float64)
    lp.col_lower_ = np.clip(lo, -inf, inf)
    lp.col_upper_ = np.clip(hi, -inf, inf)
    lp.row_lower_ = np.clip(np.array(rlo, dtype=np.float64), -inf, inf)
    lp.row_upper_ = np.clip(np.array(rhi, dtype=np.float64), -inf, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr.astype(np.int32)
    lp.a_matrix_.index_ = a.indices.astype(np.int32)
    lp.a_matrix_.value_ = a.data.astype(np.float64)
    lp.integrality_ = [highspy.HighsVarType.kInteger if t else highspy.HighsVarType.kContinuous
                       for t in integ.tolist()]  # fmt: skip
    h = quiet_highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    if nodes is not None:
        h.setOptionValue("mip_max_nodes", int(nodes))
    if time_limit is not None:
        h.setOptionValue("time_limit", max(float(time_limit), 1e-3))
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return "infeasible", float("nan"), np.inf, None
    info = h.getInfo()
    dual = float(info.mip_dual_bound)
    has = info.primal_solution_status == 2  # a feasible solution (HiGHS's kSolutionStatusFeasible)
    obj = float(info.objective_function_value) if has else np.inf
    x = np.asarray(h.getSolution().col_value, dtype=np.float64) if has else None
    name = "optimal" if status == highspy.HighsModelStatus.kOptimal else "stopped"
    return name, dual if np.isfinite(dual) else float("nan"), obj, x


def joint_bound(tasks: TaskGraph, resources: ResourceGraph, lower: float,
                upper: Optional[float] = None, *, tries: int = 8, nodes: int = _NODES,
                time_limit: Optional[float] = None) -> float:  # fmt: skip
    """The joint job bound: at least ``lower``, at most ``upper`` (module docstring).

    A search over the MILP's upper end ``U``, upwards from ``lower`` first: at each try the
    MILP with ``lo <= L <= U`` (``lo`` the best proven so far) either is proven infeasible
    (the bound is at least ``U``; the next ``U`` steps up twice as far, 5 % of ``lo`` at
    first) or gives HiGHS's dual bound (at least as much is proven; then ``U`` is bisected
    between ``lo`` and it). A small ``U`` prunes many counts, so a proof just above the
    bound is quick (0.5 s on the Table 1 c=1 #0 pipeline) where one MILP over a wide range
    stalls at its root (13 s there for the same value).

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    lower : float
        A proven lower bound, greater than 0 (returned when the MILP does not apply or
        proves nothing more).
    upper : float, optional
        Where to stop looking (a mapping's occupancy: the result is ``upper`` only when the
        relaxation is proven to need it); none by default.
    tries : int, default 8
        MILPs at most.
    nodes : int, default ``_NODES``
        HiGHS's branch-and-bound node limit per MILP (a count: the same bound anywhere).
    time_limit : float, optional
        HiGHS's time limit per MILP (a clock: the value may then vary with the load; it
        stays valid).

    Returns
    -------
    float
        A lower bound on every mapping's maximum occupancy.
    """
    lo = float(lower)
    hi = np.inf if upper is None else float(upper)
    step = 0.05
    rising = True
    for _ in range(int(tries)):
        if not hi > lo * (1 + 1e-3) or not lo > 0:
            break
        U = min(hi, lo * (1 + step)) if rising else 0.5 * (lo + hi)
        status, dual, obj = _solve(tasks, resources, lo, U, nodes, time_limit)
        if status == "n/a":
            break
        if status == "infeasible":
            lo, step = U, 2 * step
            continue
        rising = False
        if dual == dual:  # not NaN
            lo = max(lo, min(U, dual * (1 - _SLACK)))
        # the relaxation's least L is at most its best answer; otherwise look below U
        hi = min(U, obj) if status == "optimal" else U
    return lo


def prove_at(tasks: TaskGraph, resources: ResourceGraph, lower: float, level: float,
             until: float) -> float:  # fmt: skip
    """One MILP of the joint job bound aimed at ``level``: ``level`` when HiGHS proves that
    no relaxed solution has ``L <= level`` before ``until`` (a :func:`time.perf_counter`
    value, HiGHS's stop margin kept back), else the larger of ``lower`` and HiGHS's dual
    bound (valid whenever it stops). What the default's spare time uses to certify that a
    mapping is within a target gap (:func:`coalloc.taskmap.jobpack.pack_in_spare_time`)."""
    from .._shared.milp.highs import HIGHS_STOP_MARGIN

    lower, level = float(lower), float(level)
    if not level > lower:
        return lower
    status, dual, _ = _solve(tasks, resources, lower, level, None, None,
                             until - HIGHS_STOP_MARGIN)  # fmt: skip
    if status == "infeasible":
        return level
    if dual == dual:
        return max(lower, min(level, dual * (1 - _SLACK)))
    return lower
