"""One runner for the mixed-integer programs of every family: HiGHS, CBC and CP-SAT.

A family builds its model (a sparse ``A``, row bounds, variable bounds and integrality, or a
CP-SAT ``CpModel``) and hands it to :func:`run_milp` or :func:`run_cpsat`; the runner applies
the common options (time limit, relative gap, seed, threads, log), maps the solver's status
onto the package's vocabulary with one table, and returns a :class:`MilpOutcome`. The
family then rounds, verifies and reports.

Status table (``MilpOutcome.status``), after :func:`scipy.optimize.milp` (whose status 1,
"iteration or time limit reached", comes with ``x`` when a solution was found):

============  ===========================  ==========================  ====================
status        HiGHS (``highspy``)          CBC (child process)         CP-SAT
============  ===========================  ==========================  ====================
optimal       Optimal with ``mip_gap ==    Optimal, not stopped on     OPTIMAL (with
              0``, or the bound meets the  time, ``mip_gap == 0``      ``mip_gap > 0``: the
              value                                                    bound meets it)
feasible      Optimal with a gap left      Optimal with ``mip_gap >    FEASIBLE without a
              (``mip_gap > 0``)            0``                         limit; OPTIMAL at
                                                                       the gap
time_limit    stopped by the time limit    stopped (time, Ctrl-C,      FEASIBLE with a
              or Ctrl-C before the proof,  killed) before the proof,   limit or stopped;
              with or without a solution   with or without a solution  UNKNOWN
infeasible    Infeasible                   Infeasible                  INFEASIBLE
error         anything else                anything else               MODEL_INVALID, ...
============  ===========================  ==========================  ====================

``time_limit`` means that a time limit or Ctrl-C stopped the solver before it proved
optimality or infeasibility: ``x`` holds the incumbent when there is one (and ``bound`` its
proven bound), None otherwise, and the message says which ("incumbent kept" / "no solution
found"). ``time_limit_hit`` says the solver was stopped and ``interrupted`` that Ctrl-C
stopped it. A run that ends without a solution is a normal outcome too (``x`` None, a
status and a message), never an exception.

Stopping guarantees. The time limit counts from the call (or from ``started``, when the
family passes the moment it began building its model): what the runner spends converting the
arrays is deducted before the solver gets the rest. Every solver runs away from the calling
thread -- CP-SAT in a worker thread, CBC in a child process, HiGHS in a worker thread for
small models and in a child process for large ones (below) -- while the caller waits in
short slices, so that:

* Ctrl-C (``KeyboardInterrupt`` in the calling thread) asks the solver to stop at once --
  HiGHS through its interrupt callbacks (MIP, simplex and IPM), CP-SAT through
  ``StopSearch``, CBC through SIGINT -- and the call returns the incumbent with its bound;
  a third Ctrl-C while the solver winds down is re-raised;
* past the limit the solver is asked to stop in the same way whatever it is doing (half a
  second past it in a thread; 0.3 s for the HiGHS child, which is killed 1.2 s past the
  limit or 0.8 s after Ctrl-C; CBC is killed 2 s after SIGINT if it has not stopped);
* no process or temporary file outlives the call: CBC's temporary folder is always
  removed, and CBC and the HiGHS child are started with ``PR_SET_PDEATHSIG`` (Linux), so
  that they die with the process that started them even when it is killed.

HiGHS does not look at its interrupt callback inside presolve or a root cut-generation round
(a dense 60 x 3000 knapsack with a 2 s limit ran 6 s in a thread). A model of at least
:data:`HIGHS_PROCESS_MIN_SIZE` nonzeros plus variables is therefore solved in a child
process, whatever may stop it (its time limit, Ctrl-C at a terminal or in a notebook, a
batch's timeout); environment variable ``COALLOC_HIGHS_PROCESS=always|never`` overrides
the choice. The child
(:mod:`coalloc._shared._highs_child`, which imports NumPy and highspy only: 0.2-0.6 s to
start) receives the model through a pipe and sends back every improving solution with the
bound, so that when it has to be killed the call still returns its last incumbent and bound.
Smaller models, such as the many per-start programs of :mod:`coalloc.collective`, stay in
the thread and pay no process start; their presolve and root take milliseconds. A model
solved to optimality gets the same answer either way (same solver, same options, same
arrays).

With ``progress`` (or the command line's default on a terminal) the incumbent, the bound and
the gap are shown over time through :class:`coalloc._shared.progress.SolveProgress`: HiGHS
reports them through its callbacks, CP-SAT through a solution and a bound callback, CBC
through its log, read while it runs.

Scaling and the check. The solvers' tolerances are absolute, so a model is rescaled by
powers of two when its magnitudes leave :data:`SANE_RANGE` (:func:`model_scaling`; inside
it the model reaches the solver untouched), and ``x`` and ``bound`` are given back in the
user's units. CP-SAT models are built by the family from integers (:func:`integer_scaling`
for decimal data; ``objective_scale`` gives the unit). A family passes ``check(x)``, its
verify on the original data returning the solution's objective (:class:`Rejected` when the
solution is not valid): a refused solution, a bound on the wrong side of the checked value,
or an "optimal" whose bound does not meet it, by more than the solver's tolerances explain,
gives ``error`` with a message, never "optimal".

HiGHS is driven through ``highspy`` (a core dependency). If ``highspy`` is missing,
:func:`scipy.optimize.milp` (the same solver, in the calling thread) is the fallback: it
honours the time limit of the solver only, cannot be interrupted, and says so in its
message.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from . import _highs_child, interrupt
from .progress import SolveProgress, exact_progress_wanted

__all__ = [
    "BACKENDS",
    "MilpOutcome",
    "Rejected",
    "SANE_RANGE",
    "Scaling",
    "integer_scaling",
    "model_scaling",
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
        ``optimal | feasible | time_limit | infeasible | error`` (module docstring);
        ``time_limit`` with ``x`` when a stopped solver had an incumbent.
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
        Seconds the call was given (the solver got what remained after the conversion).
    interrupted : bool
        Ctrl-C stopped the solver (the outcome holds its incumbent, if any).
    objective : float or None
        The value of ``x`` in the user's units: what the family's ``check`` computed from
        its original data, else ``c @ x`` (None without a solution, and from
        :func:`run_cpsat` without a ``check``).
    scaled : bool
        The runner solved a rescaled copy of the model (:func:`model_scaling`); ``x`` and
        ``bound`` are given back in the user's units either way.
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
    interrupted: bool = False
    objective: Optional[float] = None
    scaled: bool = False


class Rejected(Exception):
    """Raised by a family's ``check`` (:func:`run_milp`, :func:`run_cpsat`) when a solution
    the solver returned is not valid on the original, unscaled data; the message says why."""


#: Magnitudes (nonzero coefficients of ``A`` and ``c``, finite bounds of continuous
#: variables) inside which :func:`run_milp` hands a model to the solver as it is. HiGHS's and
#: CBC's tolerances are absolute (feasibility 1e-7, an absolute optimality gap of 1e-6, CBC's
#: cutoff increment 1e-5): outside this range they swallow the data (sizes of 1e-8 against a
#: tolerance of 1e-7) or make a proof meaningless, so the model is rescaled first.
SANE_RANGE = (1e-3, 1e6)


@dataclass(frozen=True)
class Scaling:
    """Powers of two that make a model well conditioned (:func:`model_scaling`).

    The solver sees ``A' = diag(row) A diag(col)``, row bounds ``row * row_lb``, variable
    bounds ``lb / col`` and the objective ``c' = obj * c * col``; a solution ``x'`` of it is
    ``x = col * x'`` in the user's variables, and an objective value or bound ``v'`` is
    ``v' / obj``. Every factor is a power of two, so that the conversion is exact (no
    rounding) and a solution means the same in both models. Integer variables keep the
    factor 1.
    """

    row: np.ndarray
    col: np.ndarray
    obj: float


def _log2_round(values: np.ndarray) -> np.ndarray:
    """``round(log2(values))`` (values positive), as float."""
    return np.rint(np.log2(values))


def _segment_extremes(data: np.ndarray, indptr: np.ndarray):
    """Per segment ``data[indptr[k]:indptr[k+1]]``: (min, max); NaN for empty segments."""
    k = indptr.shape[0] - 1
    lo, hi = np.full(k, np.nan), np.full(k, np.nan)
    full = np.flatnonzero(np.diff(indptr) > 0)
    if full.size and data.size:
        starts = indptr[full]
        lo[full] = np.minimum.reduceat(data, starts)
        hi[full] = np.maximum.reduceat(data, starts)
    return lo, hi


def model_scaling(c: Any, A: Any, integrality: Any, lb: Any = 0.0, ub: Any = 1.0,
                  *, sane: tuple = SANE_RANGE) -> Optional[Scaling]:  # fmt: skip
    """The scaling :func:`run_milp` applies to a model, or None when it needs none.

    A model is left as it is when every nonzero coefficient of ``A`` and ``c`` and every
    finite nonzero bound of a continuous variable lies in ``sane`` (:data:`SANE_RANGE`), so
    that well-conditioned models are solved exactly as before. Otherwise rows and continuous
    columns are equilibrated (a few rounds of geometric-mean scaling in powers of two, integer
    columns fixed) and the objective is scaled so that its largest coefficient is about 1.

    Parameters
    ----------
    c : ndarray, shape (nv,)
    A : scipy.sparse matrix, shape (rows, nv)
    integrality : ndarray, shape (nv,)
        1 for integer variables (never scaled), 0 for continuous ones.
    lb, ub : float or ndarray
        Variable bounds.
    sane : (float, float)
        The range of magnitudes left alone.

    Returns
    -------
    Scaling or None

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from coalloc._shared.milp import model_scaling
    >>> model_scaling(np.ones(2), sp.csr_matrix([[1.0, 5.0]]), np.ones(2)) is None
    True
    >>> s = model_scaling(np.ones(2) * 1e-9, sp.csr_matrix([[1e9, 5e9]]), np.ones(2))
    >>> float(s.obj) > 1e8, float(s.row[0]) < 1e-9
    (True, True)
    """
    import scipy.sparse as sp

    c = np.asarray(c, dtype=np.float64)
    nv = c.shape[0]
    csr = sp.csr_matrix(A, dtype=np.float64, copy=True)
    csr.eliminate_zeros()
    cont = ~np.asarray(integrality).astype(bool).reshape(-1)
    lo = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))[cont]
    hi = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))[cont]
    mags = [np.abs(csr.data), np.abs(c[c != 0])]
    for b in (lo, hi):
        mags.append(np.abs(b[np.isfinite(b) & (b != 0)]))
    allm = np.concatenate(mags)
    if allm.size == 0 or (allm.min() >= sane[0] and allm.max() <= sane[1]):
        return None
    rows = csr.shape[0]
    r = np.zeros(rows)  # log2 of the row factors
    k = np.zeros(nv)  # log2 of the column factors (0 for integer columns)
    logs = np.log2(np.abs(csr.data))
    row_of = np.repeat(np.arange(rows), np.diff(csr.indptr))
    cols = csr.indices
    csc_order = np.lexsort((row_of, cols))
    col_ptr = np.searchsorted(cols[csc_order], np.arange(nv + 1))
    # Centre each row's (column's) range of magnitudes on 1, but never lift its largest
    # entry above sane[1]: a row spanning 3 to 1e-300 centred on 2**-497 would hand the
    # solver 1e150, which CBC reads as infinity; its tiny entries stay tiny instead.
    top = np.floor(np.log2(sane[1]))
    for _ in range(6):
        lo_r, hi_r = _segment_extremes(logs + k[cols], csr.indptr)
        new_r = np.where(np.isnan(lo_r), 0.0,
                         np.minimum(-np.rint((lo_r + hi_r) / 2), top - np.ceil(hi_r)))
        lo_c, hi_c = _segment_extremes((logs + new_r[row_of])[csc_order], col_ptr)
        new_k = np.where(np.isnan(lo_c) | ~cont, 0.0,
                         np.minimum(-np.rint((lo_c + hi_c) / 2), top - np.ceil(hi_c)))
        if np.array_equal(new_r, r) and np.array_equal(new_k, k):
            break
        r, k = new_r, new_k
    # Continuous columns outside A: their bounds set their unit.
    alone = cont & (np.diff(col_ptr) == 0)
    if alone.any():
        lo_all = np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))
        hi_all = np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))
        size = np.fmax(np.where(np.isfinite(lo_all), np.abs(lo_all), np.nan),
                       np.where(np.isfinite(hi_all), np.abs(hi_all), np.nan))  # fmt: skip
        use = alone & np.isfinite(size) & (size > 0)
        k[use] = _log2_round(size[use])
    r = np.clip(r, -900, 900)
    k = np.clip(k, -900, 900)
    col = np.exp2(k)
    cs = np.abs(c * col)
    big = cs.max() if cs.size else 0.0
    obj = float(np.exp2(-_log2_round(big))) if big > 0 and np.isfinite(big) else 1.0
    return Scaling(row=np.exp2(r), col=col, obj=obj)


def integer_scaling(values: Any, *, max_total: float = 2.0**50):
    """Integers ``z`` and a unit ``s`` with ``values ~= s * z`` exactly enough to optimise on.

    For CP-SAT, which takes integers. Integer values are taken as they are (``s = 1``),
    divided by their greatest common divisor when their sum would be too large; decimal
    fractions (``3.7e-6``) become integers times ``10**-k`` for the smallest ``k`` at which
    every value is within one unit in the last place of ``s * z``. With ``sum |z| <=
    max_total`` (``2**50``) those rounding errors add up to less than half a unit ``s``, so
    an optimum over ``z`` is an optimum over ``values`` (up to ties within the rounding of
    the data themselves).

    Parameters
    ----------
    values : array_like of float
    max_total : float
        The largest ``sum |z|`` accepted.

    Returns
    -------
    (ndarray of int64, float) or None
        ``(z, s)``, or None when no such scaling exists (use a floating-point solver).

    Examples
    --------
    >>> from coalloc._shared.milp import integer_scaling
    >>> z, s = integer_scaling([3.7e-6, 1.2e-6])
    >>> z.tolist(), s
    ([37, 12], 1e-07)
    >>> integer_scaling([1 / 3, 1.0]) is None
    True
    """
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if v.size == 0:
        return np.zeros(0, dtype=np.int64), 1.0
    if not np.all(np.isfinite(v)):
        return None
    if np.all(v == np.rint(v)):
        if np.abs(v).max() >= 2.0**62:
            return None
        z = v.astype(np.int64)
        if float(np.abs(v).sum()) <= max_total:
            return z, 1.0
        g = int(np.gcd.reduce(np.abs(z)))
        if g > 1 and float(np.abs(z // g).sum()) <= max_total:
            return z // g, float(g)
        return None
    ulp = np.spacing(np.abs(v))
    for k in range(1, 23):  # 10**k is exact in binary up to k = 22
        f = 10.0**k
        z = np.rint(v * f)
        if float(np.abs(z).sum()) > max_total:
            return None
        if np.all(np.abs(z / f - v) <= ulp):
            return z.astype(np.int64), float(10.0**-k)
    return None


def _judge(out: MilpOutcome, check: Any, sense: str, slack_abs: float,
           slack_rel: float) -> MilpOutcome:  # fmt: skip
    """Hold the outcome's solution and bound against the family's ``check``.

    ``check(x)`` gives the objective of ``x`` on the original data (or raises
    :class:`Rejected`). A rejected solution, a bound on the wrong side of that value, or an
    "optimal" whose bound does not meet it, by more than ``slack_abs + slack_rel * |value|``
    (what the solver's tolerances can explain), turns the outcome into ``error`` without a
    solution. Otherwise ``objective`` is set to the checked value.
    """
    if out.x is None:
        return out
    try:
        value = float(check(out.x))
    except Rejected as exc:
        return _as_error(out, f"its solution fails the check on the original data: {exc}")
    if not np.isfinite(value):
        return _as_error(out, f"its solution has no finite value on the original data ({value})")
    out.objective = value
    bound = out.bound
    if bound is None:
        return out
    slack = slack_abs + slack_rel * max(abs(value), abs(bound))
    beyond = (value - bound) if sense == "min" else (bound - value)  # >= 0 for a valid bound
    if beyond < -slack:
        return _as_error(out, f"its bound {bound:.17g} is {'above' if sense == 'min' else 'below'}"
                         f" the value {value:.17g} of its own solution on the original data, by "
                         f"more than its tolerances explain ({slack:.3g})")  # fmt: skip
    if out.status == "optimal" and beyond > slack:
        return _as_error(out, f"it said optimal, but its solution's value on the original data "
                         f"({value:.17g}) is {beyond:.3g} from its bound ({bound:.17g}), more "
                         f"than its tolerances explain ({slack:.3g})")  # fmt: skip
    return out


def _as_error(out: MilpOutcome, why: str) -> MilpOutcome:
    out.message += f"; not trusted: {why}"
    out.status, out.x, out.bound, out.objective = "error", None, None, None
    return out


class _UserUnits(SolveProgress):
    """The progress display of a rescaled model, in the user's units."""

    def __init__(self, *args: Any, unit: float = 1.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unit = float(unit)

    def update(self, elapsed: float, *, incumbent: Optional[float] = None,
               bound: Optional[float] = None) -> None:  # fmt: skip
        super().update(elapsed, incumbent=None if incumbent is None else incumbent / self.unit,
                       bound=None if bound is None else bound / self.unit)  # fmt: skip


def _progress_bar(solver: str, sense: str, time_limit: Any, enabled: bool,
                  unit: float) -> SolveProgress:  # fmt: skip
    if unit == 1.0:
        return SolveProgress(solver, sense=sense, time_limit=time_limit, enabled=enabled)
    return _UserUnits(solver, sense=sense, time_limit=time_limit, enabled=enabled, unit=unit)


def import_backend(backend: str) -> Any:
    """Import the package a back-end needs; a clear ImportError when it is missing.

    Returns the ``highspy`` module for ``"highs"`` (:func:`scipy.optimize.milp`, which
    cannot be interrupted, when ``highspy`` is not installed), the ``pulp`` module for
    ``"cbc"`` and ``ortools.sat.python.cp_model`` for ``"cpsat"``.
    """
    if backend == "highs":
        try:
            import highspy

            if hasattr(highspy, "Highs") and hasattr(highspy, "cb"):
                return highspy
        except ImportError:
            pass
        from scipy.optimize import milp

        return milp
    if backend == "cbc":
        try:
            import pulp
        except ImportError as exc:
            raise ImportError("backend 'cbc' needs PuLP: pip install 'coalloc[cbc]'") from exc
        if cbc_command(pulp, msg=False) is None:
            raise ImportError(
                "backend 'cbc' found PuLP but no runnable CBC binary: reinstall with "
                "pip install 'coalloc[cbc]' (PuLP 3 bundles CBC; with PuLP 4 the extra pulls "
                "cbcbox) or put cbc on the PATH"
            )
        return pulp
    if backend == "cpsat":
        try:
            from ortools.sat.python import cp_model
        except ImportError as exc:
            raise ImportError(
                "backend 'cpsat' needs OR-Tools: pip install 'coalloc[cpsat]'"
            ) from exc
        return cp_model
    raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")


def cbc_command(pulp: Any, **kwargs: Any) -> Any:
    """PuLP's bundled CBC (``PULP_CBC_CMD``, PuLP 3), else ``COIN_CMD`` (a ``cbc`` on the PATH
    or, with PuLP 4, cbcbox's), else None.

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
    progress: Optional[bool] = None,
    started: Optional[float] = None,
    check: Optional[Any] = None,
    scale: bool = True,
    start: Optional[np.ndarray] = None,
) -> MilpOutcome:
    """Solve ``min|max c x`` s.t. ``row_lb <= A x <= row_ub``, ``lb <= x <= ub`` on HiGHS or CBC.

    Parameters
    ----------
    backend : {"highs", "cbc"}
    solver_pkg : module
        What :func:`import_backend` returned for ``backend`` (for ``"highs"``: ``highspy``,
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
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    show = exact_progress_wanted(progress)
    if backend not in ("highs", "cbc"):
        raise ValueError(f"run_milp takes backend 'highs' or 'cbc', got {backend!r}")
    if int(np.asarray(c).shape[0]) == 0:
        out = _empty_outcome(backend, row_lb, row_ub, time_limit)
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
    if backend == "highs":
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
    if scaling is not None:
        out.scaled = True
        if out.x is not None:
            out.x = out.x * scaling.col
        if out.bound is not None:
            out.bound = out.bound / unit
    if out.x is not None:
        out.objective = _finite(float(user_c @ out.x))
    if check is None:
        return out
    # What the solver's tolerances explain, in the user's units: its absolute optimality
    # gap (1e-6) and feasibility tolerance on the continuous variables (1e-7 per row) in
    # the units it solved in, and a relative 1e-7 of the values.
    cont = ~np.asarray(integrality).astype(bool).reshape(-1)
    scaled_c = np.asarray(c, dtype=np.float64)
    slack_abs = 1e-6 * (1.0 + float(np.abs(scaled_c[cont]).sum())) / unit
    return _judge(out, check, sense, slack_abs, 1e-7)


def _empty_outcome(backend, row_lb, row_ub, time_limit) -> MilpOutcome:
    """A model without variables: optimal (value 0) when every row admits 0."""
    lo, hi = np.asarray(row_lb, dtype=np.float64), np.asarray(row_ub, dtype=np.float64)
    fits = bool(np.all(lo <= 0) and np.all(hi >= 0))
    return MilpOutcome(
        x=np.zeros(0) if fits else None, bound=0.0 if fits else None,
        status="optimal" if fits else "infeasible", solver_status=0,
        message=f"{'HiGHS' if backend == 'highs' else 'CBC'}: no variables, not solved "
        f"({'every row admits 0' if fits else 'a row excludes 0: infeasible'})",
        nodes=0, time_limit_hit=False, infeasible=not fits, rows=int(lo.shape[0]),
        time_limit=time_limit,
    )  # fmt: skip


def _left(t_entry: float, time_limit: Optional[float]) -> Optional[float]:
    """Seconds of ``time_limit`` left since ``t_entry`` (at least 10 ms), None without one."""
    if time_limit is None:
        return None
    return max(0.01, float(time_limit) - (time.perf_counter() - t_entry))


def _scope_cancelled() -> bool:
    """True when the calling thread's cancellation scope (a batch's per-instance timeout, a
    cancelled batch: :mod:`coalloc._shared.interrupt`) asks the solve to end. The wait loops
    then stop the solver as for Ctrl-C and, once it has ended and its files are gone, raise
    the scope's error through :func:`interrupt.check`."""
    scope = interrupt.current()
    return scope is not None and scope.cancelled


def _supervise(work, stop, hard: Optional[float], tick=None, poll: float = 0.1):
    """Run ``work()`` in a worker thread while this thread waits in slices of ``poll``.

    ``tick()`` runs after every slice (progress). Ctrl-C here, or the clock passing
    ``hard``, calls ``stop()`` (the solver's own 'stop and keep the incumbent'); the wait
    goes on until ``work`` returns, and a third Ctrl-C is re-raised. Returns ``(value,
    interrupted, overran)``; an exception of ``work`` is raised here.
    """
    box: dict = {}
    done = threading.Event()  # not Thread.join: a Ctrl-C inside join() can leave a live
    # thread looking finished (Python < 3.12), and the solver would be read while it runs

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller's thread
            box["error"] = exc
        finally:
            done.set()

    worker = threading.Thread(target=run, name="coalloc-solver", daemon=True)
    interrupted = overran = cancelled = False
    presses = 0
    worker.start()
    while not done.is_set():
        try:
            if done.wait(poll):
                break
            if tick is not None:
                tick()
            if (hard is not None and not (overran or interrupted)
                    and time.perf_counter() > hard):  # fmt: skip
                overran = True
                stop()
            if not (cancelled or interrupted) and _scope_cancelled():
                cancelled = True
                stop()
        except KeyboardInterrupt:
            presses += 1
            if presses >= 3:
                raise
            if not interrupted:
                interrupted = True
                stop()
    while worker.is_alive():  # it has returned: only its last instructions remain
        try:
            worker.join(0.05)
        except KeyboardInterrupt:
            pass
    if cancelled:
        interrupt.check()  # the scope's TimeoutError/Cancelled, the solver stopped
    if "error" in box:
        raise box["error"]
    return box.get("value"), interrupted, overran


_HIGHS_BANNER_SILENCED = False
_HIGHS_LOCK = threading.Lock()


def _new_highs(hs: Any, verbose: bool) -> Any:
    """A ``highspy.Highs`` whose start-up banner (printed once per process, by the C++
    library on file descriptor 1) does not reach standard output unless ``verbose``."""
    global _HIGHS_BANNER_SILENCED
    with _HIGHS_LOCK:
        if _HIGHS_BANNER_SILENCED or verbose:
            _HIGHS_BANNER_SILENCED = True
            return hs.Highs()
        _HIGHS_BANNER_SILENCED = True
        import sys

        try:
            sys.stdout.flush()
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):  # no usable descriptor 1
            return hs.Highs()
        try:
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 1)
                return hs.Highs()
        finally:
            os.dup2(saved, 1)
            os.close(saved)


def _finite(value: Any) -> Optional[float]:
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if np.isfinite(value) and abs(value) < 1e50 else None


#: Models of at least this many nonzeros plus variables go to a child process when stopping
#: matters (:func:`_highs_in_process`): from about this size HiGHS's presolve and root cut
#: rounds, where it does not look at its interrupt callback, overran a 1 s limit by a
#: quarter of a second or more (a dense 60 x 3000 knapsack: by 4 s), while a child costs
#: the start of a Python process with NumPy and highspy (0.2-0.6 s).
HIGHS_PROCESS_MIN_SIZE = 20_000

#: After the limit plus ``_HIGHS_SOFT`` seconds the child is asked to stop (SIGINT); after
#: the limit plus ``_HIGHS_HARD`` seconds, or ``_HIGHS_GRACE`` after Ctrl-C, it is killed.
_HIGHS_SOFT, _HIGHS_HARD, _HIGHS_GRACE = 0.3, 1.2, 0.8


def _highs_in_process(size: int) -> bool:
    """Whether HiGHS runs in a child process: ``COALLOC_HIGHS_PROCESS`` = ``always`` /
    ``never``, else (``auto``) for every model of at least :data:`HIGHS_PROCESS_MIN_SIZE`
    nonzeros plus variables. A large model may be stopped in many ways -- its time limit,
    Ctrl-C at a terminal or in a notebook (no terminal there), a batch's timeout -- and only a
    child can be stopped inside presolve or a root cut round."""
    mode = os.environ.get("COALLOC_HIGHS_PROCESS", "auto").strip().lower()
    if not sys.executable:  # an embedded interpreter: no Python to start
        return False
    if mode in ("always", "1", "yes"):
        return True
    return mode not in ("never", "0", "no") and size >= HIGHS_PROCESS_MIN_SIZE


def _run_highspy(hs, c, A, row_lb, row_ub, integrality, lb, ub, sense, time_limit, mip_gap,
                 seed, verbose, show, t_entry, unit=1.0, start=None) -> MilpOutcome:  # fmt: skip
    """HiGHS through ``highspy``, from the arrays, in a worker thread or a child process
    (module docstring)."""
    import scipy.sparse as sp

    nv = int(np.asarray(c).shape[0])
    A = sp.csc_matrix(A)
    rows = int(A.shape[0])
    A.sort_indices()
    model = {
        "nv": nv, "rows": rows, "nnz": int(A.nnz), "max": sense == "max",
        "c": np.ascontiguousarray(c, dtype=np.float64),
        "lb": np.ascontiguousarray(np.broadcast_to(np.asarray(lb, dtype=np.float64), (nv,))),
        "ub": np.ascontiguousarray(np.broadcast_to(np.asarray(ub, dtype=np.float64), (nv,))),
        "row_lb": np.ascontiguousarray(row_lb, dtype=np.float64),
        "row_ub": np.ascontiguousarray(row_ub, dtype=np.float64),
        "start": A.indptr.astype(np.int32), "index": A.indices.astype(np.int32),
        "value": np.ascontiguousarray(A.data, dtype=np.float64),
        "integrality": np.ascontiguousarray(integrality, dtype=np.int32),
        "verbose": bool(verbose), "mip_gap": float(mip_gap), "seed": seed,
        "x0": None if start is None else np.ascontiguousarray(start, dtype=np.float64),
    }  # fmt: skip
    if _highs_in_process(nv + int(A.nnz)):
        return _run_highs_process(hs, model, sense, time_limit, mip_gap, show, t_entry, unit)
    h = _new_highs(hs, verbose)
    if not _highs_child.setup(hs, h, model):
        return _highs_rejected(rows, time_limit)
    given = _left(t_entry, time_limit)  # converting the arrays counted against the limit
    if given is not None:
        h.setOptionValue("time_limit", float(given))
    # The callbacks run in the solver's thread: they only record and read flags.
    state: dict = {"stop": False, "primal": None, "dual": None, "nodes": None}
    _highs_child.watch(hs, h, state)

    def stop() -> None:
        state["stop"] = True

    hard = None if time_limit is None else t_entry + float(time_limit) + 0.5
    with _progress_bar("HiGHS", sense, time_limit, show, unit) as bar:

        def tick() -> None:
            bar.update(time.perf_counter() - t_entry, incumbent=state["primal"],
                       bound=state["dual"])  # fmt: skip

        _, interrupted, overran = _supervise(h.run, stop, hard, tick if show else None)
        raw = _highs_child.read_out(hs, h, nv)
        if show:
            tick()
        out = _highs_outcome(hs, raw, sense, mip_gap, time_limit, rows, interrupted, overran)
        bar.close(out.status)
    return out


def _highs_rejected(rows: int, time_limit: Optional[float]) -> MilpOutcome:
    return MilpOutcome(x=None, bound=None, status="error", solver_status=-1,
                       message="HiGHS: the model was rejected (passModel)", nodes=None,
                       time_limit_hit=False, infeasible=False, rows=rows,
                       time_limit=time_limit)  # fmt: skip


def _closed(value: Optional[float], bound: Optional[float], sense: str) -> bool:
    """The proven bound meets the value (to a relative 1e-9)."""
    if value is None or bound is None:
        return False
    slack = 1e-9 * max(1.0, abs(value))
    return bound >= value - slack if sense == "min" else bound <= value + slack


def _highs_outcome(hs, raw: dict, sense: str, mip_gap: float, time_limit, rows: int,
                   interrupted: bool, overran: bool, killed: bool = False):  # fmt: skip
    """The outcome of a HiGHS run from :func:`_highs_child.read_out`'s dict (or, when the
    child was killed, from its last incumbent: ``raw["code"]`` None)."""
    ms = hs.HighsModelStatus
    code, x, value, bound = raw["code"], raw["x"], raw["value"], raw["bound"]
    stopped_codes = {int(ms.kTimeLimit), int(ms.kInterrupt)}
    other_limits = {int(ms.kIterationLimit), int(ms.kSolutionLimit), int(ms.kObjectiveBound),
                    int(ms.kObjectiveTarget)}  # fmt: skip
    if code is None:  # killed: the last incumbent the child sent, if any
        status = "time_limit"
    elif code == int(ms.kOptimal):
        status = "optimal" if mip_gap == 0 or _closed(value, bound, sense) else "feasible"
        if x is None:
            status = "error"
    elif code == int(ms.kInfeasible):
        status = "infeasible"
    elif code in stopped_codes:
        status = "optimal" if x is not None and _closed(value, bound, sense) else "time_limit"
    elif code in other_limits:
        status = "feasible" if x is not None else "time_limit"
    else:
        status = "feasible" if x is not None else "error"
    stopped = code is None or code in stopped_codes or interrupted or overran
    text = raw["text"]
    why = (text if killed
           else "interrupted (Ctrl-C)" if interrupted
           else f"stopped half a second past its time limit ({text})" if overran
           else text)  # fmt: skip
    if status == "time_limit":
        why += (
            "; no solution found"
            if x is None
            else "; incumbent kept"
            if bound is None
            else "; incumbent and bound kept"
        )
    elif x is None and status == "error":
        why += "; no solution found"
    return MilpOutcome(
        x=x, bound=bound, status=status, solver_status=-1 if code is None else int(code),
        message=f"HiGHS: {why}", nodes=raw["nodes"], time_limit_hit=bool(stopped),
        infeasible=status == "infeasible", rows=rows, time_limit=time_limit,
        interrupted=interrupted,
    )  # fmt: skip


_CHILD_SOURCE: Optional[str] = None


def _child_source() -> str:
    """The source of :mod:`._highs_child`, run as ``python -c`` (no coalloc import)."""
    global _CHILD_SOURCE
    if _CHILD_SOURCE is None:
        with open(_highs_child.__file__, encoding="utf-8") as fh:
            _CHILD_SOURCE = fh.read()
    return _CHILD_SOURCE


def _run_highs_process(hs, model: dict, sense: str, time_limit, mip_gap: float, show: bool,
                       t_entry: float, unit: float = 1.0) -> MilpOutcome:  # fmt: skip
    """HiGHS in a child process that sends every incumbent back, so that killing it (past
    the limit, or after Ctrl-C and a grace) still leaves the incumbent and the bound."""
    left = _left(t_entry, time_limit)
    model["deadline"] = None if left is None else time.monotonic() + left
    model["progress"] = bool(show)
    bar = _progress_bar("HiGHS", sense, time_limit, show, unit)
    with bar:
        return _highs_process_in(hs, model, sense, time_limit, mip_gap, show, t_entry, bar)


def _highs_process_in(hs, model, sense, time_limit, mip_gap, show, t_entry, bar):
    """:func:`_run_highs_process` inside its progress display."""
    import pickle

    rows = model["rows"]
    box: dict = {"x": None, "primal": None, "dual": None, "nodes": None, "final": None,
                 "error": None, "rejected": False}  # fmt: skip
    quiet = None if model["verbose"] else subprocess.DEVNULL
    soft = hard = None
    if time_limit is not None:
        soft = t_entry + float(time_limit) + _HIGHS_SOFT
        hard = t_entry + float(time_limit) + _HIGHS_HARD
    interrupted = overran = killed = False
    presses = 0

    def tick() -> None:
        bar.update(time.perf_counter() - t_entry, incumbent=box["primal"], bound=box["dual"])

    rfd, wfd = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", _child_source(), str(wfd), str(os.getpid())],
            stdin=subprocess.PIPE, stdout=quiet, stderr=quiet, pass_fds=(wfd,),
            start_new_session=True,  # Ctrl-C at the terminal reaches this process only
        )  # fmt: skip
    except BaseException:
        os.close(rfd)
        raise
    finally:
        os.close(wfd)

    def read() -> None:
        with os.fdopen(rfd, "rb") as fh:
            while True:
                try:
                    msg = pickle.load(fh)
                except Exception:  # EOF, or a message cut short by a kill
                    return
                if msg[0] == "inc":
                    box["x"] = msg[1]
                    box["primal"], box["dual"], box["nodes"] = msg[2:]
                elif msg[0] == "bound":
                    box["primal"], box["dual"], box["nodes"] = msg[1:]
                elif msg[0] == "done":
                    box["final"] = msg[1]
                elif msg[0] == "rejected":
                    box["rejected"] = True
                elif msg[0] == "error":
                    box["error"] = msg[1:]

    def write() -> None:
        try:
            pickle.dump([p for p in sys.path if p], proc.stdin)
            pickle.dump(model, proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            proc.stdin.close()
        except (OSError, ValueError):  # the child is gone: its exit code tells
            pass

    threads = [threading.Thread(target=f, name=f"coalloc-highs-{f.__name__}", daemon=True)
               for f in (read, write)]  # fmt: skip
    kill_at = hard
    cancelled = False
    try:
        for t in threads:
            t.start()
        while proc.poll() is None:
            try:
                now = time.perf_counter()
                if kill_at is not None and now >= kill_at:
                    proc.kill()
                    killed = True
                    break
                if soft is not None and now >= soft and not (overran or interrupted):
                    overran = True
                    _signal(proc, signal.SIGINT)
                if not (cancelled or interrupted) and _scope_cancelled():
                    cancelled = True  # as Ctrl-C: asked to stop, killed after the grace
                    _signal(proc, signal.SIGINT)
                    grace = now + _HIGHS_GRACE
                    kill_at = grace if kill_at is None else min(kill_at, grace)
                wait = 0.1 if kill_at is None else min(0.1, max(0.0, kill_at - now))
                try:
                    proc.wait(wait)
                except subprocess.TimeoutExpired:
                    pass
                if show:
                    tick()
            except KeyboardInterrupt:
                presses += 1
                if presses >= 3:
                    raise
                if not interrupted:
                    interrupted = True
                    _signal(proc, signal.SIGINT)
                    grace = time.perf_counter() + _HIGHS_GRACE
                    kill_at = grace if kill_at is None else min(kill_at, grace)
    finally:
        if proc.poll() is None:
            proc.kill()
            killed = True
        _reap(proc, threads)
        if box["final"] is not None:
            killed = False  # it had finished when it was killed
            box["primal"], box["dual"] = box["final"]["value"], box["final"]["bound"]
        if show:
            tick()
    if cancelled:
        bar.close("time_limit")
        interrupt.check()
    if box["error"] is not None:
        bar.close("error")
        raise RuntimeError(f"HiGHS failed in its child process: {box['error'][0]}")
    if box["rejected"]:
        bar.close("error")
        return _highs_rejected(rows, time_limit)
    raw = box["final"]
    if raw is None:
        if not killed:  # it died on its own (out of memory, a signal from outside)
            bar.close("error")
            return MilpOutcome(
                x=None, bound=box["dual"], status="error", solver_status=-1,
                message=f"HiGHS: its child process ended with code {proc.returncode} "
                "without an answer", nodes=box["nodes"], time_limit_hit=False,
                infeasible=False, rows=rows, time_limit=time_limit, interrupted=interrupted,
            )  # fmt: skip
        late = time.perf_counter() - t_entry - (0.0 if time_limit is None else time_limit)
        what = (
            f"interrupted (Ctrl-C) and killed {_HIGHS_GRACE:g} s later"
            if interrupted
            else f"killed {late:.1f} s past its time limit"
        )
        what += " (presolve or a root cut round does not look at its interrupt callback)"
        x = box["x"]
        value = None if x is None else _finite(float(model["c"] @ x))  # the incumbent's
        raw = {"code": None, "text": what, "x": x, "value": value, "bound": box["dual"],
               "nodes": box["nodes"]}  # fmt: skip
    out = _highs_outcome(hs, raw, sense, mip_gap, time_limit, rows, interrupted, overran,
                         killed=raw["code"] is None)  # fmt: skip
    bar.close(out.status)
    return out


def _signal(proc: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to ``proc`` unless it has ended."""
    try:
        if proc.poll() is None:
            proc.send_signal(sig)
    except (OSError, ProcessLookupError):
        pass


def _reap(proc: subprocess.Popen, threads: list) -> None:
    """Wait for the killed or finished child and its pipe threads, through Ctrl-C."""
    for wait in [proc.wait] + [t.join for t in threads]:
        while True:
            try:
                wait()
                break
            except KeyboardInterrupt:
                continue
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass


def _run_highs_scipy(milp, c, A, row_lb, row_ub, integrality, lb, ub, sense, time_limit,
                     mip_gap, verbose, t_entry) -> MilpOutcome:  # fmt: skip
    """The fallback without ``highspy``: :func:`scipy.optimize.milp`, in this thread."""
    from scipy.optimize import Bounds, LinearConstraint

    options: dict = {"disp": bool(verbose), "mip_rel_gap": float(mip_gap)}
    given = _left(t_entry, time_limit)
    if given is not None:
        options["time_limit"] = float(given)
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
    elif res.status == 1:  # a limit stopped it: with its incumbent, if any
        status = "time_limit"
        if x is not None and _closed(sign * float(res.fun), bound, sense):
            status = "optimal"
    elif res.status == 2:
        status = "infeasible"
    else:
        status = "error"
    return MilpOutcome(
        x=x,
        bound=bound,
        status=status,
        solver_status=int(res.status),
        message=f"HiGHS: {res.message} (SciPy fallback without highspy: Ctrl-C cannot "
        "interrupt it and model building is not timed by the solver)",
        nodes=None if nodes is None else int(nodes),
        time_limit_hit=res.status == 1,
        infeasible=res.status == 2,
        rows=int(A.shape[0]),
        time_limit=time_limit,
    )


def _run_cbc(pulp, c, A, row_lb, row_ub, integrality, lb, ub, sense, time_limit, mip_gap,
             threads, seed, verbose, name, show, t_entry, unit=1.0) -> MilpOutcome:  # fmt: skip
    """CBC as a child process this module owns: an MPS file written from the arrays, a hard
    wall-clock deadline, SIGINT (CBC's own 'stop and report the incumbent') on the deadline
    or on Ctrl-C, SIGKILL if it does not stop, and its temporary files always removed."""
    solver = cbc_command(pulp)
    if solver is None:
        raise ImportError("no CBC executable found (pip install 'coalloc[cbc]')")
    nv = int(np.asarray(c).shape[0])
    flip = -1.0 if sense == "max" else 1.0
    bar = _progress_bar("CBC", sense, time_limit, show, unit)
    try:
        out = _run_cbc_in(solver, c, A, row_lb, row_ub, integrality, lb, ub, time_limit,
                          mip_gap, threads, seed, verbose, show, t_entry, nv, flip,
                          bar)  # fmt: skip
    finally:
        bar.close()
    return out


def _run_cbc_in(solver, c, A, row_lb, row_ub, integrality, lb, ub, time_limit, mip_gap,
                threads, seed, verbose, show, t_entry, nv, flip, bar) -> MilpOutcome:  # fmt: skip
    _sweep_cbc_folders()
    with tempfile.TemporaryDirectory(prefix=f"coalloc_cbc_{os.getpid()}_") as folder:
        mps, sol, log_path = (os.path.join(folder, f) for f in ("m.mps", "m.sol", "m.log"))
        _write_mps(mps, flip * np.asarray(c, dtype=np.float64), A, row_lb, row_ub,
                   integrality, lb, ub, nv)  # fmt: skip
        args = [solver.path, mps, "-timeMode", "elapsed", "-ratio", repr(float(mip_gap))]
        left = _left(t_entry, time_limit)  # writing the file counts against the limit
        if left is not None:
            args += ["-sec", repr(round(left, 3))]
        if threads > 1:
            args += ["-threads", str(int(threads))]
        if seed is not None:
            args += ["-randomCbcSeed", str(int(seed) % 2147483647)]
        args += ["-solve", "-solution", sol]
        if show and shutil.which("stdbuf"):  # CBC's log line by line, for the progress
            args = [shutil.which("stdbuf"), "-oL", *args]
        interrupted = killed = cancelled = False
        watch = _CbcLog(log_path, flip)
        with open(log_path, "w") as log_fh:
            # CBC may not look at the clock for a long time (its root node): past the limit
            # and half a second, it is asked to stop, and killed a second later.
            hard = None if time_limit is None else t_entry + time_limit + 0.5
            if hard is not None and time.perf_counter() > hard:  # no time left to start it
                return MilpOutcome(
                    x=None, bound=None, status="time_limit", solver_status=-1,
                    message="CBC: not started, the time limit ran out while its model file "
                    "was written; no solution found", nodes=None, time_limit_hit=True,
                    infeasible=False, rows=int(A.shape[0]), time_limit=time_limit,
                )  # fmt: skip
            proc = subprocess.Popen(_dying_with_us(args), stdout=log_fh, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
            try:
                while proc.poll() is None:
                    left = None if hard is None else hard - time.perf_counter()
                    if left is not None and left <= 0:
                        killed = _stop_child(proc)
                        break
                    if _scope_cancelled():
                        cancelled = True
                        _stop_child(proc)
                        break
                    try:
                        proc.wait(timeout=0.2 if left is None else min(0.2, left))
                    except subprocess.TimeoutExpired:
                        pass
                    if show:
                        watch.read()
                        bar.update(time.perf_counter() - t_entry, incumbent=watch.incumbent,
                                   bound=watch.bound)  # fmt: skip
            except KeyboardInterrupt:
                interrupted = True
                killed = _stop_child(proc)
            finally:
                if proc.poll() is None:  # pragma: no cover - belt and braces
                    proc.kill()
                    proc.wait()
            if cancelled:
                bar.close("time_limit")
                interrupt.check()  # leaving the temporary folder removes CBC's files
            if show:
                watch.read()
                bar.update(time.perf_counter() - t_entry, incumbent=watch.incumbent,
                           bound=watch.bound)  # fmt: skip
        with open(log_path, errors="replace") as fh:
            log = fh.read()
        head, values = _read_cbc_solution(sol, nv)
    if verbose:
        print(log)
    out = _cbc_outcome(head, values, log, flip, mip_gap, time_limit, interrupted, killed,
                       int(A.shape[0]), proc.returncode)  # fmt: skip
    out.interrupted = interrupted
    bar.close(out.status)
    return out


class _CbcLog:
    """Incumbent and bound read from CBC's log while it runs (in the model's sense).

    CBC prints, in the minimisation it solves, ``Continuous objective value is V`` (the
    root bound), ``Integer solution of V found ...`` and ``After N nodes, ..., V best
    solution, best possible B (... seconds)``.
    """

    _SOLUTION = re.compile(r"Integer solution of\s+(-?[0-9.eE+]+)")
    _NODES = re.compile(r"(-?[0-9.eE+]+) best solution, best possible (-?[0-9.eE+]+)")
    _ROOT = re.compile(r"Continuous objective value is\s+(-?[0-9.eE+]+)")
    _FINAL = re.compile(r"^Objective value:\s+(-?[0-9.eE+]+)")
    _FINAL_BOUND = re.compile(r"^Lower bound:\s+(-?[0-9.eE+]+)")

    def __init__(self, path: str, flip: float) -> None:
        self.path = path
        self.flip = flip
        self.offset = 0
        self.rest = ""
        self.incumbent: Optional[float] = None
        self.bound: Optional[float] = None

    def read(self) -> None:
        try:
            with open(self.path, errors="replace") as fh:
                fh.seek(self.offset)
                text = fh.read()
                self.offset = fh.tell()
        except OSError:
            return
        lines = (self.rest + text).split("\n")
        self.rest = lines.pop()
        for line in lines:
            self.parse(line)

    def parse(self, line: str) -> None:
        m = self._SOLUTION.search(line)
        if m:
            self.incumbent = _finite(self.flip * float(m.group(1)))
        m = self._NODES.search(line)
        if m:
            found = _finite(self.flip * float(m.group(1)))
            self.incumbent = self.incumbent if found is None else found
            self.bound = _finite(self.flip * float(m.group(2)))
        m = self._ROOT.search(line)
        if m and self.bound is None:
            self.bound = _finite(self.flip * float(m.group(1)))
        m = self._FINAL.search(line)  # the summary CBC prints when it ends
        if m and self.incumbent is not None:  # (with no solution it is the relaxation's)
            found = _finite(self.flip * float(m.group(1)))
            self.incumbent = self.incumbent if found is None else found
        m = self._FINAL_BOUND.search(line)
        if m:
            self.bound = _finite(self.flip * float(m.group(1)))


def _sweep_cbc_folders() -> None:
    """Remove the CBC folders of processes that were killed before they could (the pid is
    in the folder's name; a process killed by SIGKILL cannot clean up after itself, and its
    CBC died with it)."""
    try:
        names = os.listdir(tempfile.gettempdir())
    except OSError:
        return
    for name in names:
        m = re.fullmatch(r"coalloc_cbc_([0-9]+)_\w+", name)
        if m is None or int(m.group(1)) == os.getpid():
            continue
        try:
            os.kill(int(m.group(1)), 0)
            continue  # its owner runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, OSError):
            continue  # another user's, or not a pid
        shutil.rmtree(os.path.join(tempfile.gettempdir(), name), ignore_errors=True)


#: Run as ``python -I -S -c``: ask Linux to SIGKILL this process when its parent dies
#: (``PR_SET_PDEATHSIG``, kept across ``execv`` for an ordinary binary), give up if the
#: parent is already gone, then become the program (CBC).
_EXEC_SHIM = """
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)
except (OSError, AttributeError):
    pass
if os.getppid() != int(sys.argv[1]):
    os._exit(3)
os.execv(sys.argv[2], sys.argv[2:])
"""


def _dying_with_us(args: list) -> list:
    """``args`` started so that the program dies with this process (Linux; elsewhere as is).

    A small Python launcher sets ``PR_SET_PDEATHSIG`` and execs the program (about 20 ms),
    rather than a ``preexec_fn``, which is unsafe when the caller has threads.
    """
    if not sys.platform.startswith("linux") or not sys.executable:
        return list(args)
    return [sys.executable, "-I", "-S", "-c", _EXEC_SHIM, str(os.getpid()), *args]


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
    """A minimisation model in fixed MPS (8-character names X0000000 / R0000000).

    The COLUMNS and BOUNDS sections, the bulk of the file, are assembled as byte arrays
    (a million coefficients take about a second, not ten); values are written with 17
    significant digits, padded to one width per section.
    """
    A = A.tocsc()
    A.sort_indices()
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
    head = ["NAME          COALLOC", "ROWS", " N  OBJ"]
    head += [f" {k}  R{r:07d}" for r, k in enumerate(kinds) if k != "N"]
    head.append("COLUMNS")
    # COLUMNS: per column its objective line, then its coefficients (free rows left out).
    free = np.array([k == "N" for k in kinds], dtype=bool)
    col_of = np.repeat(np.arange(nv), np.diff(A.indptr))
    keep = ~free[A.indices] if free.size else np.ones(A.nnz, dtype=bool)
    cols = np.concatenate([np.arange(nv), col_of[keep]])
    rows = np.concatenate([np.full(nv, -1), A.indices[keep].astype(np.int64)])
    vals = np.concatenate([np.asarray(c, dtype=np.float64), A.data[keep]])
    order = np.argsort(cols, kind="stable")  # objective first within a column
    cols, rows, vals = cols[order], rows[order], vals[order]
    row_field = np.where(rows[:, None] >= 0, _names(b"R", np.maximum(rows, 0)),
                         np.frombuffer(b"OBJ     ", np.uint8)[None, :])  # fmt: skip
    lines = _join_fields(b"    ", _names(b"X", cols), b"  ", row_field, b"  ", _numbers(vals))
    starts = np.searchsorted(cols, np.arange(nv + 1))
    integ = np.asarray(integrality).astype(bool)
    with open(path, "wb") as fh:
        fh.write(("\n".join(head) + "\n").encode())
        marker = False
        run = 0
        for v in [*np.flatnonzero(np.diff(integ)) + 1, nv]:  # runs of equal integrality
            if run < nv and integ[run] != marker:
                marker = bool(integ[run])
                tag = "INTORG" if marker else "INTEND"
                fh.write(f"    MARK      'MARKER'                 '{tag}'\n".encode())
            fh.write(lines[starts[run] : starts[v]].tobytes())
            run = int(v)
        if marker:
            fh.write(b"    MARK      'MARKER'                 'INTEND'\n")
        out = ["RHS"]
        out += [f"    RHS       R{r:07d}  {val: .17g}" for r, val in rhs]
        if ranges:
            out.append("RANGES")
            out += [f"    RNG       R{r:07d}  {val: .17g}" for r, val in ranges]
        out.append("BOUNDS")
        fh.write(("\n".join(out) + "\n").encode())
        binary = integ & (lo == 0) & (hi == 1)
        rest = np.flatnonzero(~binary)
        if rest.size == 0:  # every variable binary: one vectorised block
            fh.write(_join_fields(b" BV BND       ", _names(b"X", np.arange(nv))).tobytes())
        else:
            out = []
            for v in range(nv):
                a, b = lo[v], hi[v]
                if binary[v]:
                    out.append(f" BV BND       X{v:07d}")
                elif a == b:
                    out.append(f" FX BND       X{v:07d}  {a: .17g}")
                else:
                    out.append(f" LO BND       X{v:07d}  {a: .17g}" if np.isfinite(a)
                               else f" MI BND       X{v:07d}")  # fmt: skip
                    out.append(f" UP BND       X{v:07d}  {b: .17g}" if np.isfinite(b)
                               else f" PL BND       X{v:07d}")  # fmt: skip
            fh.write(("\n".join(out) + "\n").encode())
        fh.write(b"ENDATA\n")


def _names(letter: bytes, index: np.ndarray) -> np.ndarray:
    """``letter`` and 7 digits per index, as an (k, 8) array of ASCII bytes."""
    index = np.asarray(index, dtype=np.int64)
    out = np.empty((index.size, 8), dtype=np.uint8)
    out[:, 0] = letter[0]
    rest = index.copy()
    for p in range(7, 0, -1):
        out[:, p] = 48 + rest % 10
        rest //= 10
    return out


def _numbers(values: np.ndarray) -> np.ndarray:
    """``f"{v: .17g}"`` of each value, left-aligned in one width, as (k, w) ASCII bytes."""
    uniq, inverse = np.unique(values, return_inverse=True)
    text = [f"{u: .17g}" for u in uniq]
    width = max((len(t) for t in text), default=1)
    table = np.frombuffer("".join(t.ljust(width) for t in text).encode(), dtype=np.uint8)
    return table.reshape(max(len(text), 1) if text else 0, width)[inverse.reshape(-1)]


def _join_fields(*fields: Any) -> np.ndarray:
    """Lines made of byte constants and (k, w) byte arrays, each ended by a newline."""
    k = next(f.shape[0] for f in fields if isinstance(f, np.ndarray))
    parts = [
        np.broadcast_to(np.frombuffer(f, dtype=np.uint8)[None, :], (k, len(f)))
        if isinstance(f, bytes) else f
        for f in fields
    ]  # fmt: skip
    parts.append(np.full((k, 1), ord("\n"), dtype=np.uint8))
    return np.ascontiguousarray(np.concatenate(parts, axis=1))


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
        status = "time_limit" if stopped else "feasible"
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
    if status == "time_limit":
        why += (
            "; no solution found"
            if x is None
            else "; incumbent kept"
            if bound is None
            else "; incumbent and bound kept"
        )
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
    progress: Optional[bool] = None,
    started: Optional[float] = None,
    check: Optional[Any] = None,
    objective_scale: float = 1.0,
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
    time_limit, mip_gap, threads, seed, verbose, progress, started
        As for :func:`run_milp`; ``threads`` is ``num_search_workers``. Pass ``started``
        (when the model building began) so that building counts against the limit.
    check : callable, optional
        As for :func:`run_milp`: the family's check of a solution against its original data
        (CP-SAT computes in integers, so only a model built from rounded data can fail it).
    objective_scale : float, default 1
        The user's unit of one unit of the model's integer objective (the ``s`` of
        :func:`integer_scaling`): ``bound`` and the progress display are given in the
        user's units.

    Returns
    -------
    MilpOutcome
        Ctrl-C during the search is not raised: the search stops and the outcome holds the
        incumbent and its bound, with ``interrupted`` set.
    """
    t_entry = time.perf_counter() if started is None else float(started)
    show = exact_progress_wanted(progress)
    solver = cp_model.CpSolver()
    prm = solver.parameters
    prm.num_search_workers = int(threads)
    if seed is not None:
        prm.random_seed = int(seed) % 2147483647
    given = _left(t_entry, time_limit)
    if given is not None:
        prm.max_time_in_seconds = float(given)
    prm.relative_gap_limit = float(mip_gap)
    prm.log_search_progress = bool(verbose)
    if hasattr(prm, "catch_sigint_signal"):  # CP-SAT's own handler would replace Python's
        prm.catch_sigint_signal = False  # (and abort outside the main thread): ours stops it
    state: dict = {"incumbent": None, "bound": None}
    callback = None
    if show:  # the callbacks run in the solver's threads: they only record
        callback = _cpsat_recorder(cp_model, state)
        if hasattr(solver, "best_bound_callback"):
            solver.best_bound_callback = lambda b: state.__setitem__("bound", _finite(b))

    def stop() -> None:
        halt = getattr(solver, "stop_search", None) or solver.StopSearch
        halt()

    def work():
        return solver.Solve(model) if callback is None else solver.Solve(model, callback)

    hard = None if time_limit is None else t_entry + float(time_limit) + 0.5
    scale = float(objective_scale)
    with _progress_bar("CP-SAT", _cpsat_sense(model), time_limit, show,
                       1.0 / scale) as bar:  # fmt: skip

        def tick() -> None:
            bar.update(time.perf_counter() - t_entry, incumbent=state["incumbent"],
                       bound=state["bound"])  # fmt: skip

        code, interrupted, overran = _supervise(work, stop, hard, tick if show else None)
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
        status = table.get(code, "error")
        if code == cp_model.FEASIBLE and (interrupted or overran or time_limit is not None):
            status = "time_limit"  # stopped before the proof, with its incumbent
        elif code == cp_model.OPTIMAL and mip_gap > 0:  # CP-SAT says OPTIMAL at the gap
            value = _finite(solver.ObjectiveValue())
            if not _closed(value, bound, _cpsat_sense(model)):
                status = "feasible"
        if show:
            if x is not None:
                state["incumbent"] = _finite(solver.ObjectiveValue())
                state["bound"] = bound
            tick()
        bar.close(status)
    message = f"CP-SAT: {solver.StatusName(code)}"
    if interrupted:
        message += " (interrupted: Ctrl-C)"
    elif overran:
        message += " (stopped half a second past its time limit)"
    if code == cp_model.MODEL_INVALID:
        message += ": " + model.Validate()
    elif status == "time_limit":
        message += ": no solution found" if x is None else ": incumbent and bound kept"
    out = MilpOutcome(
        x=x,
        bound=None if bound is None else bound * scale,
        status=status,
        solver_status=int(code),
        message=message,
        nodes=int(solver.NumBranches()),
        time_limit_hit=code in (cp_model.FEASIBLE, cp_model.UNKNOWN) or interrupted or overran,
        infeasible=code == cp_model.INFEASIBLE,
        rows=int(rows),
        time_limit=time_limit,
        interrupted=interrupted,
    )
    if check is None:
        return out
    # CP-SAT is exact on its integers: what remains is the rounding of the user's data.
    return _judge(out, check, _cpsat_sense(model), 1e-6 * abs(scale), 1e-9)


def _cpsat_sense(model: Any) -> str:
    """``"max"`` when the model maximises (CP-SAT stores a negated scaling factor)."""
    try:
        return "max" if model.Proto().objective.scaling_factor < 0 else "min"
    except Exception:  # no objective, or not a CpModel
        return "min"


def _cpsat_recorder(cp_model: Any, state: dict) -> Any:
    """A solution callback that records the objective and the bound of each solution."""

    class Recorder(cp_model.CpSolverSolutionCallback):
        def on_solution_callback(self) -> None:
            state["incumbent"] = _finite(self.ObjectiveValue())
            state["bound"] = _finite(self.BestObjectiveBound())

    return Recorder()
