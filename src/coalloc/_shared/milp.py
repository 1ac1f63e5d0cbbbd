"""One runner for the mixed-integer programs of every family: HiGHS, CBC and CP-SAT.

A family builds its model (a sparse ``A``, row bounds, variable bounds and integrality, or a
CP-SAT ``CpModel``) and hands it to :func:`run_milp` or :func:`run_cpsat`; the runner applies
the common options (time limit, relative gap, seed, threads, log), maps the solver's status
onto the package's vocabulary with one table, and returns a :class:`MilpOutcome`. The
family then rounds, verifies and reports.

Status table (``MilpOutcome.status``):

============  ===========================  ==========================  ====================
status        HiGHS (``scipy.optimize``)   CBC (PuLP)                  CP-SAT
============  ===========================  ==========================  ====================
optimal       0 with ``mip_gap == 0``, or  Optimal, not stopped on     OPTIMAL
              the bound meets the value    time, ``mip_gap == 0``
feasible      0 with a gap left; 1 with a  a solution otherwise        FEASIBLE
              solution
time_limit    1 without a solution         no solution, stopped on     UNKNOWN
                                           time or a limit was given
infeasible    2                            Infeasible                  INFEASIBLE
error         anything else                anything else               MODEL_INVALID, ...
============  ===========================  ==========================  ====================
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

__all__ = [
    "BACKENDS",
    "MilpOutcome",
    "import_backend",
    "cbc_command",
    "remaining",
    "run_milp",
    "run_cpsat",
]

#: Solver back-ends the runner knows.
BACKENDS = ("highs", "cbc", "cpsat")


@dataclass
class MilpOutcome:
    """What a solver run gave, in the package's terms.

    Attributes
    ----------
    x : ndarray or None
        Values of the variables (None without a solution).
    bound : float or None
        The solver's proven bound on the objective, in the model's sense (an upper bound when
        maximising, a lower bound when minimising); None when the solver gave none.
    status : str
        ``optimal | feasible | time_limit | infeasible | error`` (module docstring).
    solver_status : int
        The solver's own status code.
    message : str
        ``"<solver>: <its status>"``.
    nodes : int or None
        Branch-and-bound nodes (CP-SAT: branches) when reported.
    time_limit_hit : bool
        The solver stopped on its time limit.
    infeasible : bool
        The solver proved the model infeasible.
    rows : int
        Constraints of the model.
    time_limit : float or None
        Seconds the solver was given.
    """

    x: Optional[np.ndarray]
    bound: Optional[float]
    status: str
    solver_status: int
    message: str
    nodes: Optional[int]
    time_limit_hit: bool
    infeasible: bool
    rows: int
    time_limit: Optional[float]


def import_backend(backend: str) -> Any:
    """Import the package a back-end needs; a clear ImportError when it is missing.

    Returns :func:`scipy.optimize.milp` for ``"highs"``, the ``pulp`` module for ``"cbc"``
    and ``ortools.sat.python.cp_model`` for ``"cpsat"``.
    """
    if backend == "highs":
        from scipy.optimize import milp

        return milp
    if backend == "cbc":
        try:
            import pulp
        except ImportError as exc:
            raise ImportError("backend 'cbc' needs PuLP: pip install 'coalloc[exact]'") from exc
        if cbc_command(pulp, msg=False) is None:
            raise ImportError(
                "backend 'cbc' found PuLP but no runnable CBC binary: reinstall with "
                "pip install 'coalloc[exact]' (PuLP's bundled CBC) or put cbc on the PATH"
            )
        return pulp
    if backend == "cpsat":
        try:
            from ortools.sat.python import cp_model
        except ImportError as exc:
            raise ImportError(
                "backend 'cpsat' needs OR-Tools: pip install 'coalloc[exact]'"
            ) from exc
        return cp_model
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def cbc_command(pulp: Any, **kwargs: Any) -> Any:
    """PuLP's bundled CBC (``PULP_CBC_CMD``), else a ``cbc`` on the PATH, else None.

    ``PULP_CBC_CMD`` is deprecated from PuLP 3.3 on (removed in 4.0, where ``COIN_CMD`` with
    ``pulp[cbc]`` replaces it); its deprecation warning is silenced here.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for name in ("PULP_CBC_CMD", "COIN_CMD"):
            cls = getattr(pulp, name, None)
            if cls is None:
                continue
            try:
                solver = cls(**kwargs)
                if solver.available():
                    return solver
            except Exception:  # a broken installation: try the next one
                continue
    return None


def remaining(deadline: Optional[float]) -> Optional[float]:
    """Seconds left before ``deadline`` (at least 10 ms), or None without a limit."""
    return None if deadline is None else max(0.01, deadline - time.perf_counter())


def run_milp(
    backend: str,
    solver_pkg: Any,
    c: np.ndarray,
    A: Any,
    row_lb: np.ndarray,
    row_ub: np.ndarray,
    *,
    integrality: np.ndarray,
    lb: Any = 0.0,
    ub: Any = 1.0,
    sense: str = "min",
    time_limit: Optional[float] = None,
    mip_gap: float = 0.0,
    threads: int = 1,
    seed: Optional[int] = None,
    verbose: bool = False,
    name: str = "coalloc",
) -> MilpOutcome:
    """Solve ``min|max c x`` s.t. ``row_lb <= A x <= row_ub``, ``lb <= x <= ub`` on HiGHS or CBC.

    Parameters
    ----------
    backend : {"highs", "cbc"}
    solver_pkg : module
        What :func:`import_backend` returned for ``backend``.
    c : ndarray, shape (nv,)
        Objective coefficients, in the sense of ``sense``.
    A : scipy.sparse matrix, shape (rows, nv)
    row_lb, row_ub : ndarray, shape (rows,)
        Row bounds (``-inf`` / ``inf`` for one-sided rows).
    integrality : ndarray, shape (nv,)
        1 for integer variables, 0 for continuous ones.
    lb, ub : float or ndarray
        Variable bounds.
    sense : {"min", "max"}
    time_limit : float, optional
        Seconds for the solver.
    mip_gap : float
        Relative gap at which the solver may stop.
    threads : int
        Threads (CBC; HiGHS through SciPy runs its own default).
    seed : int, optional
        CBC's ``randomCbcSeed``; HiGHS through SciPy is deterministic and takes none.
    verbose : bool
        Print the solver log.
    name : str
        Name of the model (CBC).

    Returns
    -------
    MilpOutcome
        ``bound`` assumes a non-negative objective for CBC (its log prints the magnitude).
    """
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    if backend == "highs":
        return _run_highs(solver_pkg, c, A, row_lb, row_ub, integrality, lb, ub, sense,
                          time_limit, mip_gap, verbose)  # fmt: skip
    if backend == "cbc":
        return _run_cbc(solver_pkg, c, A, row_lb, row_ub, integrality, lb, ub, sense,
                        time_limit, mip_gap, threads, seed, verbose, name)  # fmt: skip
    raise ValueError(f"run_milp takes backend 'highs' or 'cbc', got {backend!r}")


def _run_highs(milp, c, A, row_lb, row_ub, integrality, lb, ub, sense, time_limit, mip_gap,
               verbose) -> MilpOutcome:  # fmt: skip
    from scipy.optimize import Bounds, LinearConstraint

    options: dict = {"disp": bool(verbose), "mip_rel_gap": float(mip_gap)}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    sign = -1.0 if sense == "max" else 1.0
    res = milp(
        c=sign * np.asarray(c, dtype=np.float64),
        integrality=integrality,
        bounds=Bounds(lb, ub),
        constraints=[LinearConstraint(A, row_lb, row_ub)] if A.shape[0] else [],
        options=options,
    )
    x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
    dual = getattr(res, "mip_dual_bound", None)
    bound = None if dual is None or not np.isfinite(dual) else sign * float(dual)
    nodes = getattr(res, "mip_node_count", None)
    if res.status == 0:
        status = "optimal" if mip_gap == 0 else "feasible"
        if status == "feasible" and bound is not None and x is not None:
            value = sign * float(res.fun)
            closed = bound >= value * (1 - 1e-9) if sense == "min" else bound <= value
            if closed:
                status = "optimal"
    elif res.status == 1:
        status = "feasible" if x is not None else "time_limit"
    elif res.status == 2:
        status = "infeasible"
    else:
        status = "error"
    return MilpOutcome(
        x=x,
        bound=bound,
        status=status,
        solver_status=int(res.status),
        message=f"HiGHS: {res.message}",
        nodes=None if nodes is None else int(nodes),
        time_limit_hit=res.status == 1,
        infeasible=res.status == 2,
        rows=int(A.shape[0]),
        time_limit=time_limit,
    )


def _run_cbc(pulp, c, A, row_lb, row_ub, integrality, lb, ub, sense, time_limit, mip_gap,
             threads, seed, verbose, name) -> MilpOutcome:  # fmt: skip
    nv = int(np.asarray(c).shape[0])
    lo = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))
    hi = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))
    prob = pulp.LpProblem(name, pulp.LpMaximize if sense == "max" else pulp.LpMinimize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        xs = []
        for v in range(nv):
            binary = integrality[v] and lo[v] == 0 and hi[v] == 1
            cat = "Binary" if binary else ("Integer" if integrality[v] else "Continuous")
            low = None if binary or not np.isfinite(lo[v]) else float(lo[v])
            up = None if binary or not np.isfinite(hi[v]) else float(hi[v])
            if hasattr(prob, "add_variable"):  # PuLP >= 3.3
                xs.append(prob.add_variable(f"x{v}", lowBound=low, upBound=up, cat=cat))
            else:
                xs.append(pulp.LpVariable(f"x{v}", lowBound=low, upBound=up, cat=cat))
        prob += pulp.LpAffineExpression(
            [(xs[v], float(c[v])) for v in np.flatnonzero(np.asarray(c)).tolist()]
        )
        A = A.tocsr()
        indptr, indices, data = A.indptr, A.indices.tolist(), A.data.tolist()
        for r in range(A.shape[0]):
            a, b = int(indptr[r]), int(indptr[r + 1])
            expr = pulp.LpAffineExpression([(xs[k], d) for k, d in zip(indices[a:b], data[a:b])])
            lo_r, hi_r = float(row_lb[r]), float(row_ub[r])
            if lo_r == hi_r:
                prob += pulp.LpConstraint(expr, pulp.LpConstraintEQ, f"r{r}", hi_r)
            elif np.isfinite(hi_r):
                prob += pulp.LpConstraint(expr, pulp.LpConstraintLE, f"r{r}", hi_r)
                if np.isfinite(lo_r):
                    prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, f"s{r}", lo_r)
            elif np.isfinite(lo_r):
                prob += pulp.LpConstraint(expr, pulp.LpConstraintGE, f"r{r}", lo_r)
    fd, log_path = tempfile.mkstemp(prefix="coalloc_cbc_", suffix=".log")
    os.close(fd)
    options = []
    if seed is not None:
        options.append(f"randomCbcSeed {int(seed) % 2147483647}")
    solver = cbc_command(
        pulp,
        msg=bool(verbose),
        timeLimit=None if time_limit is None else float(time_limit),
        gapRel=float(mip_gap),
        threads=int(threads) if threads > 1 else None,
        options=options,
        logPath=log_path,
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            prob.solve(solver)
        with open(log_path, errors="replace") as fh:
            log = fh.read()
    finally:
        try:
            os.remove(log_path)
        except OSError:
            pass
    if verbose:
        print(log)
    sol_status = getattr(prob, "sol_status", None)
    have_solution = sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible)
    x = None
    if have_solution:
        x = np.array([v.varValue if v.varValue is not None else 0.0 for v in xs], float)
    stopped = "Stopped on time" in log or "stopped on time" in log.lower()
    proven_optimal = (
        prob.status == pulp.LpStatusOptimal and sol_status == pulp.LpSolutionOptimal
    )
    bound = None
    if proven_optimal and not stopped and mip_gap == 0 and x is not None:
        bound = float(np.dot(np.asarray(c, dtype=np.float64), x))
    match = re.search(r"(?:Upper|Lower) bound:\s*(-?[0-9.eE+]+)", log)
    if match:
        # CBC prints "Upper bound" in the problem's (maximisation) sense; some versions print
        # the internal minimisation value ("Lower bound", negated). Objectives here are
        # non-negative, so the magnitude is the bound either way.
        bound_log = abs(float(match.group(1)))
        if bound is None:
            bound = bound_log
        else:
            bound = min(bound, bound_log) if sense == "max" else max(bound, bound_log)
    nodes = re.search(r"Enumerated nodes:\s*([0-9]+)", log)
    infeasible = prob.status == pulp.LpStatusInfeasible
    if proven_optimal and not stopped and mip_gap == 0:
        status = "optimal"
    elif x is not None:
        status = "feasible"
    elif infeasible:
        status = "infeasible"
    elif stopped or time_limit is not None:
        status = "time_limit"
    else:
        status = "error"
    return MilpOutcome(
        x=x,
        bound=bound,
        status=status,
        solver_status=int(prob.status),
        message="CBC: "
        + ("stopped on time limit" if stopped else str(pulp.LpStatus.get(prob.status)))
        + f" ({pulp.LpSolution.get(sol_status, sol_status)})",
        nodes=int(nodes.group(1)) if nodes else None,
        time_limit_hit=stopped,
        infeasible=infeasible,
        rows=int(A.shape[0]),
        time_limit=time_limit,
    )


def run_cpsat(
    cp_model: Any,
    model: Any,
    variables: list,
    *,
    rows: int,
    time_limit: Optional[float] = None,
    mip_gap: float = 0.0,
    threads: int = 1,
    seed: Optional[int] = None,
    verbose: bool = False,
) -> MilpOutcome:
    """Solve a built CP-SAT model (objective already set) with the common options.

    Parameters
    ----------
    cp_model : module
        ``ortools.sat.python.cp_model`` (from :func:`import_backend`).
    model : CpModel
    variables : list of BoolVar or IntVar
        The variables whose values form ``MilpOutcome.x``.
    rows : int
        Number of constraints, for the report.
    time_limit, mip_gap, threads, seed, verbose
        As for :func:`run_milp`; ``threads`` is ``num_search_workers``.

    Returns
    -------
    MilpOutcome
    """
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_search_workers = int(threads)
    if seed is not None:
        prm.random_seed = int(seed) % 2147483647
    if time_limit is not None:
        prm.max_time_in_seconds = float(time_limit)
    prm.relative_gap_limit = float(mip_gap)
    prm.log_search_progress = bool(verbose)
    code = solver.Solve(model)
    x = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        x = np.array([solver.Value(v) for v in variables], dtype=np.float64)
    # The bound is only meaningful with a solution (UNKNOWN reports a placeholder 0).
    bound = float(solver.BestObjectiveBound()) if x is not None else None
    table = {
        cp_model.OPTIMAL: "optimal",
        cp_model.FEASIBLE: "feasible",
        cp_model.UNKNOWN: "time_limit",
        cp_model.INFEASIBLE: "infeasible",
    }
    message = f"CP-SAT: {solver.StatusName(code)}"
    if code == cp_model.MODEL_INVALID:
        message += ": " + model.Validate()
    return MilpOutcome(
        x=x,
        bound=bound,
        status=table.get(code, "error"),
        solver_status=int(code),
        message=message,
        nodes=int(solver.NumBranches()),
        time_limit_hit=code in (cp_model.FEASIBLE, cp_model.UNKNOWN),
        infeasible=code == cp_model.INFEASIBLE,
        rows=int(rows),
        time_limit=time_limit,
    )
