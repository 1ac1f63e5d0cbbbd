"""One runner for the mixed-integer programs of every family: HiGHS, CBC and CP-SAT.

A family builds its model (a sparse ``A``, row bounds, variable bounds and integrality, or a
CP-SAT ``CpModel``) and hands it to :func:`run_milp` or :func:`run_cpsat`; the runner applies
the common options (time limit, relative gap, seed, threads, log), maps the solver's status
onto the package's vocabulary with one table, and returns a :class:`MilpOutcome`. The
family then rounds, verifies and reports.

Status table (``MilpOutcome.status``):

============  ===========================  ==========================  ====================
status        HiGHS (``scipy.optimize``)   CBC (child process)         CP-SAT
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

CBC runs as a child process of this module (the executable PuLP ships, found through PuLP):
the model is written as MPS from the arrays, the time limit counts from the call (the file
writing included), CBC is asked to stop (SIGINT: it reports its incumbent) half a second
past the limit or on Ctrl-C, and killed a second later if it has not; its temporary folder
is always removed, so no process or file outlives the call.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
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
    """CBC as a child process this module owns: an MPS file written from the arrays, a hard
    wall-clock deadline, SIGINT (CBC's own 'stop and report the incumbent') on the deadline
    or on Ctrl-C, SIGKILL if it does not stop, and its temporary files always removed."""
    solver = cbc_command(pulp)
    if solver is None:
        raise ImportError("no CBC executable found (pip install 'coalloc[exact]')")
    t_entry = time.perf_counter()
    nv = int(np.asarray(c).shape[0])
    flip = -1.0 if sense == "max" else 1.0
    with tempfile.TemporaryDirectory(prefix="coalloc_cbc_") as folder:
        mps, sol, log_path = (os.path.join(folder, f) for f in ("m.mps", "m.sol", "m.log"))
        _write_mps(mps, flip * np.asarray(c, dtype=np.float64), A, row_lb, row_ub,
                   integrality, lb, ub, nv)  # fmt: skip
        args = [solver.path, mps, "-timeMode", "elapsed", "-ratio", repr(float(mip_gap))]
        if time_limit is not None:  # writing the file counts against the limit
            left = max(0.01, time_limit - (time.perf_counter() - t_entry))
            args += ["-sec", repr(round(left, 3))]
        if threads > 1:
            args += ["-threads", str(int(threads))]
        if seed is not None:
            args += ["-randomCbcSeed", str(int(seed) % 2147483647)]
        args += ["-solve", "-solution", sol]
        interrupted = killed = False
        with open(log_path, "w") as log_fh:
            proc = subprocess.Popen(args, stdout=log_fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
            # CBC may not look at the clock for a long time (its root node): past the limit
            # and half a second, it is asked to stop, and killed a second later.
            hard = None if time_limit is None else t_entry + time_limit + 0.5
            try:
                while proc.poll() is None:
                    left = None if hard is None else hard - time.perf_counter()
                    if left is not None and left <= 0:
                        killed = _stop_child(proc)
                        break
                    try:
                        proc.wait(timeout=0.2 if left is None else min(0.2, left))
                    except subprocess.TimeoutExpired:
                        pass
            except KeyboardInterrupt:
                interrupted = True
                killed = _stop_child(proc)
            finally:
                if proc.poll() is None:  # pragma: no cover - belt and braces
                    proc.kill()
                    proc.wait()
        with open(log_path, errors="replace") as fh:
            log = fh.read()
        head, values = _read_cbc_solution(sol, nv)
    if verbose:
        print(log)
    return _cbc_outcome(head, values, log, flip, mip_gap, time_limit, interrupted, killed,
                        int(A.shape[0]), proc.returncode)  # fmt: skip


def _stop_child(proc: subprocess.Popen) -> bool:
    """SIGINT (CBC stops and writes its incumbent), then SIGKILL after 2 s; True if killed."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=2.0)
        return False
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return True


def _write_mps(path, c, A, row_lb, row_ub, integrality, lb, ub, nv) -> None:
    """A minimisation model in fixed MPS (8-character names X0000000 / R0000000)."""
    A = A.tocsc()
    lo = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))
    hi = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))
    rlo = np.asarray(row_lb, dtype=np.float64)
    rhi = np.asarray(row_ub, dtype=np.float64)
    if nv >= 10**7 or A.shape[0] >= 10**7:
        raise ValueError("CBC's file format holds at most 10,000,000 variables and rows")
    kinds, rhs, ranges = [], [], []
    for r in range(A.shape[0]):
        a, b = rlo[r], rhi[r]
        if a == b:
            kinds.append("E")
            rhs.append((r, b))
        elif np.isfinite(b):
            kinds.append("L")
            rhs.append((r, b))
            if np.isfinite(a):
                ranges.append((r, b - a))
        elif np.isfinite(a):
            kinds.append("G")
            rhs.append((r, a))
        else:
            kinds.append("N")
    out = ["NAME          COALLOC", "ROWS", " N  OBJ"]
    out += [f" {k}  R{r:07d}" for r, k in enumerate(kinds) if k != "N"]
    out.append("COLUMNS")
    free = {r for r, k in enumerate(kinds) if k == "N"}
    indptr, indices, data = A.indptr, A.indices, A.data
    integer = False
    for v in range(nv):
        if bool(integrality[v]) != integer:
            integer = bool(integrality[v])
            marker = "INTORG" if integer else "INTEND"
            out.append(f"    MARK      'MARKER'                 '{marker}'")
        out.append(f"    X{v:07d}  OBJ       {c[v]: .17g}")
        for k in range(indptr[v], indptr[v + 1]):
            r = int(indices[k])
            if r not in free:
                out.append(f"    X{v:07d}  R{r:07d}  {data[k]: .17g}")
    if integer:
        out.append("    MARK      'MARKER'                 'INTEND'")
    out.append("RHS")
    out += [f"    RHS       R{r:07d}  {val: .17g}" for r, val in rhs]
    if ranges:
        out.append("RANGES")
        out += [f"    RNG       R{r:07d}  {val: .17g}" for r, val in ranges]
    out.append("BOUNDS")
    for v in range(nv):
        a, b = lo[v], hi[v]
        if integrality[v] and a == 0 and b == 1:
            out.append(f" BV BND       X{v:07d}")
            continue
        if a == b:
            out.append(f" FX BND       X{v:07d}  {a: .17g}")
            continue
        out.append(f" LO BND       X{v:07d}  {a: .17g}" if np.isfinite(a)
                   else f" MI BND       X{v:07d}")  # fmt: skip
        out.append(f" UP BND       X{v:07d}  {b: .17g}" if np.isfinite(b)
                   else f" PL BND       X{v:07d}")  # fmt: skip
    out.append("ENDATA")
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")


def _read_cbc_solution(path: str, nv: int):
    """(first line, values) of CBC's solution file; (None, None) when it wrote none."""
    try:
        with open(path, errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None, None
    if not lines:
        return None, None
    x = np.zeros(nv)
    for line in lines[1:]:
        parts = line.split()
        if parts and parts[0] == "**":
            parts = parts[1:]
        if len(parts) >= 3 and parts[1].startswith("X"):
            x[int(parts[1][1:])] = float(parts[2])
    return lines[0].strip(), x


def _cbc_outcome(head, x, log, flip, mip_gap, time_limit, interrupted, killed, rows, code):
    text = (head or "").lower()
    value = re.search(r"objective value\s*(-?[0-9.eE+]+)", head or "")
    has_solution = (
        x is not None and value is not None and abs(float(value.group(1))) < 1e49
        and not text.startswith(("infeasible", "integer infeasible", "unbounded"))
        and "no integer solution" not in text  # CBC then writes the LP relaxation
    )  # fmt: skip
    if not has_solution:
        x = None
    stopped = interrupted or killed or text.startswith("stopped")
    infeasible = text.startswith(("infeasible", "integer infeasible"))
    bound = None
    match = re.search(r"Lower bound:\s*(-?[0-9.eE+]+)", log)
    if match and not killed:
        bound = flip * float(match.group(1))  # the bound of the minimisation CBC solved
    optimal = text.startswith("optimal") and not stopped
    if optimal and x is not None and value is not None:
        proven = flip * float(value.group(1))  # within CBC's gap tolerance of the optimum
        bound = proven if mip_gap == 0 or bound is None else bound
    if optimal and mip_gap == 0 and x is not None:
        status = "optimal"
    elif x is not None:
        status = "feasible"
    elif infeasible:
        status = "infeasible"
    elif stopped or time_limit is not None:
        status = "time_limit"
    else:
        status = "error"
    nodes = re.search(r"Enumerated nodes:\s*([0-9]+)", log)
    why = (
        "interrupted (Ctrl-C)" if interrupted
        else "killed after overrunning its time limit" if killed
        else (head or f"no solution file (exit code {code})")
    )  # fmt: skip
    return MilpOutcome(
        x=x, bound=bound, status=status, solver_status=int(code if code is not None else -1),
        message=f"CBC: {why}", nodes=int(nodes.group(1)) if nodes else None,
        time_limit_hit=bool(stopped), infeasible=infeasible, rows=rows, time_limit=time_limit,
    )  # fmt: skip


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
