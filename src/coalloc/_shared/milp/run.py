"""The runner's entry point for HiGHS and CBC: :func:`run_milp` (scaling, the solver, the
user's units, the check) and :func:`import_solver`."""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import replace
from typing import Any, Optional

import numpy as np

from .. import lazyimport as _lazy
from ..progress import exact_progress_wanted
from .cbc import _run_cbc, cbc_command
from .highs import _not_started, _run_highs_scipy, _run_highspy
from .options import MilpOptions, MilpProblem, from_keywords
from .outcome import SOLVERS, MilpOutcome, _empty_outcome, _finite, _judge
from .scale import model_scaling


def import_solver(solver: str) -> Any:
    """Import the package a solver needs; a clear ImportError when it is missing.

    Returns the ``highspy`` module for ``"highs"`` (:func:`scipy.optimize.milp`, which
    cannot be interrupted, when ``highspy`` is not installed), the ``pulp`` module for
    ``"cbc"`` and ``ortools.sat.python.cp_model`` for ``"cpsat"``.

    Examples
    --------
    >>> import_solver("gurobi")
    Traceback (most recent call last):
    ...
    ValueError: solver must be one of ('highs', 'cbc', 'cpsat'), got 'gurobi'
    """
    if solver == "highs":
        try:
            import highspy

            if hasattr(highspy, "Highs") and hasattr(highspy, "cb"):
                return highspy
        except ImportError:
            pass
        from scipy.optimize import milp

        return milp
    if solver == "cbc":
        try:
            import pulp
        except ImportError as exc:
            raise ImportError("solver 'cbc' needs PuLP: pip install 'coalloc[cbc]'") from exc
        if cbc_command(pulp, msg=False) is None:
            raise ImportError(
                "solver 'cbc' found PuLP but no runnable CBC binary: reinstall with "
                "pip install 'coalloc[cbc]' (PuLP 3 bundles CBC; with PuLP 4 the extra pulls "
                "cbcbox) or put cbc on the PATH"
            )
        return pulp
    if solver == "cpsat":
        try:
            from ortools.sat.python import cp_model
        except ImportError as exc:
            raise ImportError(
                "solver 'cpsat' needs OR-Tools: pip install 'coalloc[cpsat]'"
            ) from exc
        return cp_model
    raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")


#: Seconds a solver's first import in a process takes, about (quiet machine: HiGHS 0.15 s,
#: CBC's pulp 0.04 s, CP-SAT 0.4 s; at a load of 6: 0.38-0.45, 0.10-0.11 and 1.13-1.18 s).
#: :func:`import_solver_until` does not wait for an import under way with less time than
#: this left (it goes on in the background for the next call): the module's
#: initialisation holds the interpreter lock, so a caller waiting for it cannot return at
#: its deadline (issue 36: fresh collective ``exact`` calls at 0.05 s overran
#: by 0.11-0.23 s inside HiGHS's import). The shared table is
#: :data:`coalloc._shared.lazyimport.IMPORT_SECONDS` (keys ``"solver:<name>"``).
IMPORT_SECONDS = {s: _lazy.IMPORT_SECONDS[f"solver:{s}"] for s in SOLVERS}

_MODULES = {"highs": "highspy", "cbc": "pulp", "cpsat": "ortools.sat.python.cp_model"}


def import_solver_until(solver: str, deadline: Optional[float]) -> Any:
    """:func:`import_solver`, given up at ``deadline`` (a ``time.perf_counter()`` instant;
    None: wait as long as it takes).

    A process's first import of a solver runs inside a time-limited call's budget when the
    call is the first to need it: OR-Tools' CP-SAT took 0.7 s on a quiet machine and 4.7 s
    under a load of 15 (issue 36). The import runs in a background thread
    (:func:`coalloc._shared.lazyimport.load_by`, the one mechanism every family's heavy
    import goes through), and the call waits for it only until ``deadline``; then it
    returns None and the import goes on, so that the next call finds the solver loaded.
    With less than :data:`IMPORT_SECONDS` left it is not waited for at all (None at once).
    A caller that knows a time-limited solve is coming imports the solver before its clock
    starts (:func:`preload`).

    Returns
    -------
    module or None
        What :func:`import_solver` returns, or None when the deadline came first.

    Raises
    ------
    ImportError, ValueError
        As :func:`import_solver` (the solver is missing or unknown).
    """
    if solver not in SOLVERS:
        return import_solver(solver)  # the ValueError
    if deadline is None or _lazy.loaded(_MODULES[solver]) is not None:
        return import_solver(solver)  # untimed, or loaded: at once
    return _lazy.load_by(f"solver:{solver}", lambda: import_solver(solver), deadline,
                         IMPORT_SECONDS.get(solver, 0.0))  # fmt: skip


def import_solver_later(solver: str) -> None:
    """Begin ``solver``'s import in the background for the process's next calls, waiting
    for nothing: a time-limited call too short for the import calls it as it returns (its
    answer built), and inside :func:`coalloc._shared.lazyimport.on_return` it begins when
    the enclosing call returns. Loaded or unknown: nothing."""
    if solver in SOLVERS and _lazy.loaded(_MODULES[solver]) is None:
        _lazy.start_on_return(f"solver:{solver}", lambda: import_solver(solver))


def preload(*solvers: str) -> list:
    """Import the given solvers now (default: every one installed), so that a time-limited
    solve that follows does not spend its budget on a first import (CP-SAT: 0.7-4.7 s).

    Call it before starting a clock: a script or a service that will run time-limited
    exact solves in a fresh process, or the command line once it knows its method.

    Parameters
    ----------
    *solvers : str
        Among :data:`SOLVERS`; none: all of them.

    Returns
    -------
    list of str
        The solvers now loaded (a missing optional one is left out, not raised).

    Examples
    --------
    >>> "highs" in preload("highs")
    True
    """
    loaded = []
    for solver in solvers or SOLVERS:
        try:
            import_solver(solver)
        except ImportError:
            continue
        loaded.append(solver)
    return loaded


def __getattr__(name: str) -> Any:
    # Merge shim (issue 36): the name this function had while ``backend`` also meant the
    # solver; families call import_solver. Remove once no family calls the old name.
    if name == "import_backend":
        warnings.warn("import_backend is deprecated: call import_solver", DeprecationWarning,
                      stacklevel=2)  # fmt: skip
        return import_solver
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_milp(
    solver: str,
    solver_pkg: Any,
    problem: Any,
    *rows: Any,
    options: Optional[MilpOptions] = None,
    check: Optional[Any] = None,
    **legacy: Any,
) -> MilpOutcome:
    """Solve a :class:`MilpProblem` on HiGHS or CBC with :class:`MilpOptions`.

    Parameters
    ----------
    solver : {"highs", "cbc"}
        The integer-programming solver (:func:`run_cpsat` runs CP-SAT).
    solver_pkg : module
        What :func:`import_solver` returned for ``solver`` (for ``"highs"``: ``highspy``,
        or :func:`scipy.optimize.milp` as the fallback).
    problem : MilpProblem
        ``min|max c x`` s.t. ``row_lb <= A x <= row_ub``, ``lb <= x <= ub``, integrality,
        and an optional starting solution.
    options : MilpOptions, optional
        Time limit (a deadline from ``started``: converting the model counts, the solver
        gets the rest, and the call returns at the deadline with the incumbent found so
        far), relative gap, seed, threads, log, progress, scaling. Default: none of them.
    check : callable, optional
        ``check(x) -> float``: the family's check of a solution (``x`` in the user's
        variables) against its original, unscaled data, returning the solution's objective
        as the family computes it, or raising :class:`Rejected`. A rejected solution, a bound
        on the wrong side of that value, or an "optimal" whose bound does not meet it, by
        more than the solver's tolerances explain, gives status ``error`` (no solution)
        with a message that says which: never "optimal".
    *rows, **legacy
        The old form, ``run_milp(solver, solver_pkg, c, A, row_lb, row_ub, integrality=...,
        lb=..., ub=..., sense=..., start=..., time_limit=..., mip_gap=..., ...)`` (each field
        of the two records as a keyword), kept for the callers that still use it.

    Returns
    -------
    MilpOutcome
        ``x`` and ``bound`` in the user's units whatever scaling was applied; ``bound``
        assumes a non-negative objective for CBC (its log prints the magnitude). Ctrl-C
        during the solve is not raised: the outcome holds the incumbent, with
        ``interrupted`` set.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from coalloc._shared import milp
    >>> knap = milp.MilpProblem(c=np.array([3.0, 2.0, 2.0]), A=sp.csr_matrix([[2.0, 1.0, 1.0]]),
    ...                         row_lb=np.array([-np.inf]), row_ub=np.array([2.0]),
    ...                         integrality=np.ones(3), sense="max")
    >>> out = milp.run_milp("highs", milp.import_solver("highs"), knap,
    ...                     options=milp.MilpOptions(time_limit=10))
    >>> out.status, out.objective, out.x.round().astype(int).tolist()
    ('optimal', 4.0, [0, 1, 1])
    """
    if not isinstance(problem, MilpProblem):  # the old form: c, A, row_lb, row_ub, keywords
        if options is not None:
            raise TypeError("run_milp: pass options= with a MilpProblem, or the old keywords")
        problem, options = from_keywords(problem, rows, legacy)
    elif rows or legacy:
        raise TypeError("run_milp(solver, solver_pkg, problem, *, options=None, check=None) "
                        f"takes no other arguments, got {len(rows)} positional and "
                        f"{sorted(legacy)}")  # fmt: skip
    if options is None:
        options = MilpOptions()
    if options.started is None:
        options = replace(options, started=time.perf_counter())
    return _solve(solver, solver_pkg, problem, options, check, None)


def _solve(solver: str, solver_pkg: Any, problem: MilpProblem, options: MilpOptions,
           check: Optional[Any], objective_unit: Optional[float]) -> MilpOutcome:  # fmt: skip
    """:func:`run_milp` once its arguments are records (``options.started`` set);
    ``objective_unit``: the re-solve of a small optimum, the objective times that power of
    two."""
    t_entry = float(options.started)
    time_limit = options.time_limit
    c, A, row_lb, row_ub = problem.c, problem.A, problem.row_lb, problem.row_ub
    integrality, lb, ub, sense = problem.integrality, problem.lb, problem.ub, problem.sense
    start = problem.start
    show = exact_progress_wanted(options.progress)
    if solver not in ("highs", "cbc"):
        raise ValueError(f"run_milp takes solver 'highs' or 'cbc', got {solver!r}")
    if int(np.asarray(c).shape[0]) == 0:
        out = _empty_outcome(solver, row_lb, row_ub, time_limit)
        out.solver = solver
        return out if check is None else _judge(out, check, sense, 1e-9, 1e-9)
    rows = int(A.shape[0])
    late = _not_started(t_entry, time_limit, rows, 0.0, "HiGHS" if solver == "highs" else "CBC")
    if late is not None:  # the caller's model building took the whole budget
        late.solver = solver
        return late
    user_c = np.asarray(c, dtype=np.float64)
    scaling = model_scaling(user_c, A, integrality, lb, ub) if options.scale else None
    unit = 1.0
    if scaling is not None:
        import scipy.sparse as sp

        nv = user_c.shape[0]
        unit = scaling.obj
        c = unit * user_c * scaling.col
        A = (sp.diags(scaling.row) @ sp.csr_matrix(A, dtype=np.float64)
             @ sp.diags(scaling.col)).tocsr()  # fmt: skip
        row_lb = scaling.row * np.asarray(row_lb, dtype=np.float64)
        row_ub = scaling.row * np.asarray(row_ub, dtype=np.float64)
        lb = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,)) / scaling.col
        ub = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,)) / scaling.col
        if start is not None:
            start = np.asarray(start, dtype=np.float64) / scaling.col
    if objective_unit is not None:  # the re-solve below: the objective about 1 in size
        unit *= objective_unit
        c = np.asarray(c, dtype=np.float64) * objective_unit
    mip_gap = options.mip_gap
    # the model in the units the solver sees (the user's when nothing was scaled)
    seen = replace(problem, c=c, A=A, row_lb=row_lb, row_ub=row_ub, lb=lb, ub=ub, start=start)
    if solver == "highs":
        if callable(solver_pkg):  # scipy.optimize.milp: the fallback without highspy
            out = _run_highs_scipy(solver_pkg, seen, options)
        else:
            out = _run_highspy(solver_pkg, seen, options, show, unit)
    else:
        out = _run_cbc(solver_pkg, seen, options, show, unit)
    out.solver = solver
    if scaling is not None:
        out.scaled = True
        if out.x is not None:
            out.x = out.x * scaling.col
    if unit != 1.0 and out.bound is not None:  # the objective's scaling, in either case
        out.bound = out.bound / unit
    if out.x is not None:
        out.objective = _finite(float(user_c @ out.x))
    # HiGHS and CBC prune with absolute tolerances of about 1e-6 in the units they solve in
    # (HiGHS even with mip_abs_gap 0, reporting a bound equal to its incumbent), whatever
    # the gap asked for: a model whose optimum is that small (an occupancy of 5e-6 from
    # coefficients well inside the sane range) came back "optimal" 20 % above its optimum.
    # A proof of an optimum below 1e-2 in the solver's units, or one whose bound does not
    # meet the incumbent, is solved once more with the objective scaled by a power of two
    # to about 1, from the incumbent; if the bound still does not meet it, the answer is
    # "feasible" with that bound, never "optimal".
    if (mip_gap == 0 and out.status == "optimal" and out.x is not None
            and out.bound is not None and out.objective is not None):  # fmt: skip
        out = _reprove_small_optimum(out, sense, unit, objective_unit is None, lambda f: _solve(
            solver, solver_pkg, replace(problem, start=out.x), options, None, f))  # fmt: skip
    if check is None:
        return out
    # What the solver's tolerances explain, in the user's units: its absolute optimality
    # gap (1e-6) and feasibility tolerance on the continuous variables (1e-7 per row) in
    # the units it solved in, and a relative 1e-7 of the values.
    cont = ~np.asarray(integrality).astype(bool).reshape(-1)
    scaled_c = np.asarray(c, dtype=np.float64)
    slack_abs = 1e-6 * (1.0 + float(np.abs(scaled_c[cont]).sum())) / unit
    return _judge(out, check, sense, slack_abs, 1e-7)


def _open_gap(out: MilpOutcome, sense: str, unit: float) -> bool:
    """Whether the bound is better than the incumbent beyond rounding (in the solver's
    units, ``unit`` times the user's: relative 1e-7 and absolute 1e-12). An incumbent past
    its bound is the solver's feasibility tolerance, not an open gap."""
    d = (out.objective - out.bound) * (1.0 if sense == "min" else -1.0)
    return d > 1e-7 * max(abs(out.objective), abs(out.bound)) and d * unit > 1e-12


def _reprove_small_optimum(out: MilpOutcome, sense: str, unit: float, may_resolve: bool,
                           resolve: Any) -> MilpOutcome:  # fmt: skip
    """The re-solve of :func:`run_milp` for an "optimal" whose value is tiny in the units
    the solver saw, or whose bound does not meet it: ``resolve(f)`` solves again with the
    objective times the power of two ``f`` (about 1 in size), from the incumbent; a proof
    whose bound still does not meet its incumbent becomes "feasible"."""
    size = max(abs(out.objective), abs(out.bound))
    small = 1e-12 < size * unit < 1e-2
    open_gap = _open_gap(out, sense, unit)
    if not (small or open_gap):
        return out
    # A gap the solver's absolute optimality gap (HiGHS: 1e-6 in its units) explains, on a
    # value of moderate size (1.3333323 proven for 1.3333333 on a task mapping): the same
    # re-solve, the objective times a power of two that takes it to about 2**13, where that
    # absolute gap is 1e-10 of it.
    d = (out.objective - out.bound) * (1.0 if sense == "min" else -1.0) * unit
    absolute = open_gap and not small and d <= 2e-6 and 1e-2 <= size * unit < 2.0**12
    if may_resolve and (small or absolute):
        f = float(2.0 ** ((13 if absolute else 0) - round(math.log2(size * unit))))
        again = resolve(f)
        if again.x is not None and again.bound is not None:
            out, unit = again, unit * f
    if out.status == "optimal" and out.bound is not None and _open_gap(out, sense, unit):
        out.status = "feasible"
        out.message = ((out.message + "; ") if out.message else "") + (
            "the solver called it optimal but its bound does not meet the solution "
            "(a tolerance of the solver's units): not proven")  # fmt: skip
    return out
