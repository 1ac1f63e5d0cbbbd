"""The GAP as an integer programme on the shared runner: the CP-SAT model (built with an
eye on the clock) or the MILP for HiGHS and CBC, each answer checked on the original data,
and the thread that runs the solver beside the heuristic."""

from __future__ import annotations

import threading
import time
from typing import Any, List, Optional, Tuple

import numpy as np

from ..._shared import interrupt
from ..._shared.milp import (
    MilpOutcome,
    Rejected,
    import_solver,
    integer_scaling,
    run_cpsat,
    run_milp,
)
from ..._shared.params import deadline as _deadline
from ..verify import verify_gap
from .model import GapCall, GapInstance

__all__ = ["solver_outcome", "SolverThread"]

#: What :func:`solver_outcome` returns: the runner's outcome (with ``assignment``), the
#: solver used, its seconds.
Outcome = Tuple[MilpOutcome, str, float]


class _OutOfTime(Exception):
    """The time limit ran out while the CP-SAT model was built."""


def _cpsat_gap(pkg: Any, call: GapCall, ii: np.ndarray, jj: np.ndarray,
               hint_assign: Optional[np.ndarray], threads: int,
               scaled: Tuple[np.ndarray, float],
               work_limit: Optional[float] = None) -> MilpOutcome:  # fmt: skip
    """Build the CP-SAT model of the GAP (looking at the clock every 4096 variables or
    rows: :class:`_OutOfTime` past the limit) and solve it; the limit counts from the
    call's start. ``scaled``: the integer costs of the pairs ``(ii, jj)`` and their unit
    (:func:`integer_scaling`); ``hint_assign``: a feasible assignment to start from;
    ``work_limit``: CP-SAT's deterministic work cap (``MilpOptions.work_limit``)."""
    inst, assign_all, limit, t0 = call.instance, call.assign_all, call.limit, call.t0
    costs, unit = scaled
    deadline = _deadline(limit, t0)

    def on_time(k: int) -> None:
        if k % 4096 == 0:
            interrupt.check()
            if deadline is not None and time.perf_counter() > deadline:
                raise _OutOfTime

    m, n = inst.m, inst.n
    model = pkg.CpModel()
    xs = []
    for k, (i, j) in enumerate(zip(ii.tolist(), jj.tolist())):
        on_time(k)
        xs.append(model.NewBoolVar(f"x{i}_{j}"))
    by_item: List[list] = [[] for _ in range(n)]
    by_agent: List[list] = [[] for _ in range(m)]
    for k, (i, j) in enumerate(zip(ii.tolist(), jj.tolist())):
        by_item[j].append(k)
        by_agent[i].append(k)
    for j in range(n):
        on_time(j)
        terms = [xs[k] for k in by_item[j]]
        if assign_all:
            model.AddExactlyOne(terms)
        elif terms:
            model.AddAtMostOne(terms)
    weights = inst.weight[ii, jj].tolist()
    for i in range(m):
        on_time(0)
        if by_agent[i]:
            ks = by_agent[i]
            model.Add(pkg.LinearExpr.WeightedSum([xs[k] for k in ks], [weights[k] for k in ks])
                      <= int(inst.capacity[i]))  # fmt: skip
    obj = pkg.LinearExpr.WeightedSum(xs, [int(z) for z in costs.tolist()])
    on_time(0)
    if call.sense == "min":
        model.Minimize(obj)
    else:
        model.Maximize(obj)
    if hint_assign is not None:  # the hint in one step (AddHint per variable: seconds)
        hint = model.Proto().solution_hint
        hint.vars.extend([x.Index() for x in xs])
        hint.values.extend((hint_assign[jj] == ii).astype(np.int64).tolist())
    return run_cpsat(pkg, model, xs, rows=n + m, time_limit=limit, threads=threads,
                     seed=call.seed,
                     started=t0,  # the limit counts from the call (hint, import, model)
                     work_limit=work_limit,
                     check=lambda x: _check(inst, assign_all, ii, jj, x),
                     objective_scale=unit)  # fmt: skip


def _check(inst: GapInstance, assign_all: bool, ii: np.ndarray, jj: np.ndarray,
           x: Any) -> float:  # fmt: skip
    """The runner's check of a solver's ``x`` (one per pair ``(ii, jj)``) on the original
    data: at most one agent per item (exactly one with ``assign_all``), capacities kept, as
    :func:`verify_gap` sees them; returns the objective it recomputes."""
    chosen = np.flatnonzero(np.asarray(x) > 0.5)
    per_item = np.bincount(jj[chosen], minlength=inst.n)
    if np.any(per_item > 1):
        j = int(np.flatnonzero(per_item > 1)[0])
        raise Rejected(f"item {j} is assigned to {int(per_item[j])} agents")
    assign = np.full(inst.n, -1, dtype=np.int64)
    assign[jj[chosen]] = ii[chosen]
    report = verify_gap(inst, assign, assign_all=assign_all)
    if not report.feasible:
        raise Rejected("; ".join(report.problems[:3]))
    return report.objective


def _milp_gap(solver: str, pkg: Any, call: GapCall, ii: np.ndarray, jj: np.ndarray,
              hint_assign: Optional[np.ndarray], threads: int) -> MilpOutcome:  # fmt: skip
    """The GAP as a MILP for HiGHS or CBC on the shared runner (started from
    ``hint_assign`` when given)."""
    from scipy.sparse import coo_matrix, vstack

    inst, assign_all = call.instance, call.assign_all
    m, n = inst.m, inst.n
    k = ii.shape[0]
    a_cap = coo_matrix((inst.weight[ii, jj].astype(float), (ii, np.arange(k))), shape=(m, k))
    a_one = coo_matrix((np.ones(k), (jj, np.arange(k))), shape=(n, k))
    A = vstack([a_cap, a_one]).tocsr()
    lo = np.concatenate([np.full(m, -np.inf), np.ones(n) if assign_all else np.zeros(n)])
    hi = np.concatenate([inst.capacity.astype(float), np.ones(n)])
    start = None
    if hint_assign is not None:  # HiGHS starts from the heuristic's assignment
        start = (hint_assign[jj] == ii).astype(np.float64)
    return run_milp(solver, pkg, inst.cost[ii, jj], A, lo, hi, integrality=np.ones(k),
                    sense=call.sense, time_limit=call.limit, threads=threads, seed=call.seed,
                    started=call.t0, check=lambda x: _check(inst, assign_all, ii, jj, x),
                    start=start)  # fmt: skip


def solver_outcome(call: GapCall, solver: str, threads: int,
                   hint_assign: Optional[np.ndarray],
                   work_limit: Optional[float] = None) -> Outcome:  # fmt: skip
    """Run the integer-programming solver on the GAP: ``(outcome, solver used, seconds)``.

    ``call.limit`` counts from ``call.t0`` (the import, the model building and the solve);
    the solver starts from ``hint_assign`` (a feasible assignment) when given; the outcome
    gets an ``assignment`` (None without a solution). ``work_limit``: CP-SAT's work cap in
    its deterministic seconds (the other solvers have none and are not given it)."""
    t1 = time.perf_counter()
    inst = call.instance
    m, n = inst.m, inst.n
    fits = inst.weight <= inst.capacity[:, None]
    ii, jj = np.nonzero(fits)
    scaled = None
    if solver == "cpsat":  # CP-SAT takes integers: the costs as integers times a unit
        scaled = integer_scaling(inst.cost[ii, jj])
        if scaled is None:
            solver = "highs"
    pkg = import_solver(solver)
    if solver == "cpsat":
        try:
            out = _cpsat_gap(pkg, call, ii, jj, hint_assign, threads, scaled, work_limit)
        except _OutOfTime:
            out = MilpOutcome(
                x=None, bound=None, status="time_limit", solver_status=-1,
                message="CP-SAT: not started, the time limit ran out while its model was "
                "built; no incumbent found", nodes=0, time_limit_hit=True, infeasible=False,
                rows=n + m, time_limit=call.limit,
            )  # fmt: skip
    else:
        out = _milp_gap(solver, pkg, call, ii, jj, hint_assign, threads)
    out.assignment = None
    if out.x is not None:
        assign = np.full(n, -1, dtype=np.int64)
        chosen = np.flatnonzero(out.x > 0.5)
        assign[jj[chosen]] = ii[chosen]
        out.assignment = assign
    return out, solver, time.perf_counter() - t1


class SolverThread(threading.Thread):
    """The solver beside the heuristic: :func:`solver_outcome` in its own thread, under
    its own cancellation scope (cancelled: the solver stops, or never starts); ``halt`` is
    set when it ends with a proof (optimal or infeasible), so that the heuristic stops.

    Parameters
    ----------
    args : tuple
        :func:`solver_outcome`'s arguments.
    halt : threading.Event
        Set on a proof.
    """

    def __init__(self, args: tuple, halt: threading.Event) -> None:
        super().__init__(name="coalloc-gap-solver", daemon=True)
        self.args = args
        self.halt = halt
        self.scope = interrupt.Scope()
        self.outcome: Optional[Outcome] = None
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            with self.scope:
                self.outcome = solver_outcome(*self.args)
            if self.outcome[0].status in ("optimal", "infeasible"):
                self.halt.set()
        except BaseException as exc:  # noqa: BLE001 - cancelled, or the solver failed
            self.error = exc
