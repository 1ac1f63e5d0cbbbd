"""The runner's entry point for HiGHS and CBC: :func:`run_milp` (scaling, the solver, the
user's units, the check) and :func:`import_solver`."""

from __future__ import annotations

import math
import time
import warnings
from typing import Any, Optional

import numpy as np

from ..progress import exact_progress_wanted
from .cbc import _run_cbc, cbc_command
from .highs import _run_highs_scipy, _run_highspy
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
    progress: Optional[bool] = None,
    started: Optional[float] = None,
    check: Optional[Any] = None,
    scale: bool = True,
    start: Optional[np.ndarray] = None,
    _objective_unit: Optional[float] = None,
) -> MilpOutcome:
    """Solve ``min|max c x`` s.t. ``row_lb <= A x <= row_ub``, ``lb <= x <= ub`` on HiGHS or CBC.

    Parameters
    ----------
    solver : {"highs", "cbc"}
        The integer-programming solver (:func:`run_cpsat` runs CP-SAT).
    solver_pkg : module
        What :func:`import_solver` returned for ``solver`` (for ``"highs"``: ``highspy``,
        or :func:`scipy.optimize.milp` as the fallback).
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
        Wall-clock seconds for the call (from ``started``): converting the model counts, the
        solver gets the rest, and it is stopped half a second past the limit.
    mip_gap : float
        Relative gap at which the solver may stop.
    threads : int
        Threads (CBC; HiGHS runs its own default).
    seed : int, optional
        CBC's ``randomCbcSeed``, HiGHS's ``random_seed`` (not the SciPy fallback).
    verbose : bool
        Print the solver log.
    name : str
        Name of the model (CBC).
    progress : bool, optional
        Show incumbent, bound and gap over time on standard error; None: the default set
        by :func:`coalloc._shared.progress.set_exact_progress` (the CLI), on a terminal only.
    started : float, optional
        ``time.perf_counter()`` from which ``time_limit`` counts (default: this call).
    check : callable, optional
        ``check(x) -> float``: the family's check of a solution (``x`` in the user's
        variables) against its original, unscaled data, returning the solution's objective
        as the family computes it, or raising :class:`Rejected`. A rejected solution, a bound
        on the wrong side of that value, or an "optimal" whose bound does not meet it, by
        more than the solver's tolerances explain, gives status ``error`` (no solution)
        with a message that says which: never "optimal".
    scale : bool, default True
        Rescale a badly scaled model first (:func:`model_scaling`; a model whose magnitudes
        lie in :data:`SANE_RANGE` is solved as it is).
    start : ndarray, shape (nv,), optional
        A feasible solution (in the user's variables) for HiGHS to start from, so that a
        stopped solve holds an incumbent at least as good; CBC and the SciPy fallback
        ignore it (the family compares their answer with its own).

    Returns
    -------
    MilpOutcome
        ``x`` and ``bound`` in the user's units whatever scaling was applied; ``bound``
        assumes a non-negative objective for CBC (its log prints the magnitude). Ctrl-C
        during the solve is not raised: the outcome holds the incumbent, with
        ``interrupted`` set.
    """
    t_entry = time.perf_counter() if started is None else float(started)
    given = (c, A, row_lb, row_ub, lb, ub)  # as the user passed them: for a re-solve below
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    show = exact_progress_wanted(progress)
    if solver not in ("highs", "cbc"):
        raise ValueError(f"run_milp takes solver 'highs' or 'cbc', got {solver!r}")
    if int(np.asarray(c).shape[0]) == 0:
        out = _empty_outcome(solver, row_lb, row_ub, time_limit)
        out.solver = solver
        return out if check is None else _judge(out, check, sense, 1e-9, 1e-9)
    user_c = np.asarray(c, dtype=np.float64)
    scaling = model_scaling(user_c, A, integrality, lb, ub) if scale else None
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
    if _objective_unit is not None:  # the re-solve below: the objective about 1 in size
        unit *= _objective_unit
        c = np.asarray(c, dtype=np.float64) * _objective_unit
    if solver == "highs":
        if callable(solver_pkg):  # scipy.optimize.milp: the fallback without highspy
            out = _run_highs_scipy(solver_pkg, c, A, row_lb, row_ub, integrality, lb, ub,
                                   sense, time_limit, mip_gap, verbose, t_entry)  # fmt: skip
        else:
            out = _run_highspy(solver_pkg, c, A, row_lb, row_ub, integrality, lb, ub, sense,
                               time_limit, mip_gap, seed, verbose, show, t_entry,
                               unit, start)  # fmt: skip
    else:
        out = _run_cbc(solver_pkg, c, A, row_lb, row_ub, integrality, lb, ub, sense,
                       time_limit, mip_gap, threads, seed, verbose, name, show, t_entry,
                       unit)  # fmt: skip
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
        out = _reprove_small_optimum(out, sense, unit, _objective_unit is None, lambda f: run_milp(
            solver, solver_pkg, given[0], given[1], given[2], given[3],
            integrality=integrality, lb=given[4], ub=given[5], sense=sense,
            time_limit=time_limit, mip_gap=mip_gap, threads=threads, seed=seed,
            verbose=verbose, name=name, progress=progress, started=t_entry, check=None,
            scale=scale, start=out.x, _objective_unit=f))  # fmt: skip
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
            "(a tolerance of the solver's units): not proven")
    return out
