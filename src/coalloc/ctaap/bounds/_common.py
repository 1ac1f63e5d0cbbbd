"""What the bounds share: the work caps (their module docstring), the docstring fragments,
:class:`BoundStopped` and the deadline poll, and the LP dual's prices and value (HiGHS).
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from ..._shared import interrupt, lazyimport
from ..._shared import params as checks

# Largest LP (non-zeros) the bound builds; beyond it the flow bound is returned.
_MAX_NONZEROS = 30_000_000


#: Vertices one capped-clique search of :func:`cluster_set_bound` may colour (its work) at
#: ``effort=1`` (a single cluster's search gets twice as many).
CLIQUE_WORK = 5_000


#: Work of the clique LP (:func:`lp_bound`) at ``effort=1``, in non-zeros x iterations:
#: its iteration cap is ``effort * LP_WORK / nnz`` (at least :data:`LP_MIN_ITERATIONS`,
#: at most :data:`LP_ITERATIONS`), PDLP's on large LPs, the dual simplex's on those of at
#: most :data:`SIMPLEX_NONZEROS` non-zeros. About a second on 5,000 sparse tasks.
LP_WORK = 50_000_000


#: Most iterations of the clique LP at ``effort=1`` (small LPs).
LP_ITERATIONS = 40_000


#: Fewest iterations of the clique LP.
LP_MIN_ITERATIONS = 20


#: Largest clique LP (non-zeros) solved by the simplex method rather than PDLP.
SIMPLEX_NONZEROS = 20_000


#: Simplex iterations of the cluster sets' LP at ``effort=1``.
SET_LP_ITERATIONS = 50_000


#: Work (non-zeros x iterations) a first-order or interior-point LP run does per second of
#: one core, below the slowest measured: PDLP on the clique LP of a 3,000-task sparse
#: request (150,311 non-zeros, its cap of 332 iterations) did 185e6 per CPU second at load
#: 12. Under a time limit only, it predicts whether such an LP can end before the deadline
#: (:func:`lp_skip`): HiGHS's PDLP does not honour its ``time_limit`` (given 40 ms, it took
#: 0.16-0.9 s on 26,700-79,346 non-zeros at load 14), so it is not started when it cannot.
LP_RATE = 150e6


#: A process's first ``import highspy`` (39-95 ms at load 9.5, more on a cold start): under
#: a time limit, no LP is started with less time left than this while HiGHS is not loaded.
HIGHS_IMPORT_SECONDS = 0.1


def lp_skip(nnz: int, iterations: int, solver: str, stop_at: Optional[float]) -> Optional[str]:
    """Why an LP of ``nnz`` non-zeros capped at ``iterations`` is not started before
    ``stop_at``, or None to start it (always None without a ``stop_at``: untimed bounds do
    not depend on it).

    The prediction is made of counts and two measured constants, never of a run: the
    simplex method honours HiGHS's ``time_limit`` (it costs only the first import of
    HiGHS, :data:`HIGHS_IMPORT_SECONDS`); PDLP and IPX are predicted to take
    ``nnz * iterations / LP_RATE`` seconds (their iteration cap: the most they can do).

    Examples
    --------
    >>> lp_skip(10**5, 500, "pdlp", None) is None
    True
    >>> lp_skip(10**5, 500, "pdlp", time.perf_counter() + 0.04).split(",")[0] in (
    ...     "predicted 0.333 s", "predicted 0.433 s")  # PDLP's 0.333 s (+ HiGHS's import)
    True
    """
    if stop_at is None:
        return None
    predicted = 0.0 if lazyimport.loaded("highspy") is not None else HIGHS_IMPORT_SECONDS
    if solver != "simplex":
        predicted += nnz * float(iterations) / LP_RATE
    left = stop_at - time.perf_counter()
    if predicted < left:
        return None
    return f"predicted {predicted:.3f} s, {max(left, 0.0):.2f} s left"


class BoundStopped(Exception):
    """A bound's computation passed the ``stop_at`` instant its caller gave it (a solve's
    deadline): the caller drops the bound instead of reporting a value cut by the clock."""


def _effort(effort: Any) -> float:
    return checks.number(effort, "effort")


def _poll(stop_at: Optional[float]) -> None:
    """Ctrl-C and the caller's scope (:mod:`coalloc._shared.interrupt`), then ``stop_at``."""
    interrupt.check()
    if stop_at is not None and time.perf_counter() >= stop_at:
        raise BoundStopped()


def _timed(out: dict, t0: float, status: Optional[str] = None) -> dict:
    """``out`` with its ``seconds`` since ``t0`` (and its ``status`` when one is given)."""
    if status is not None:
        out["status"] = status
    out["seconds"] = time.perf_counter() - t0
    return out


def _dual_value(A, upper: np.ndarray, y: np.ndarray, col_upper=None) -> float:
    """The weak-duality bound of ``max 1.x, A x <= upper, 0 <= x <= col_upper`` (1 unless
    given) at the row prices ``y`` (negative or non-finite prices read as 0)."""
    y = np.where(np.isfinite(y), np.maximum(y, 0.0), 0.0)
    reduced = 1.0 - A.T @ y
    if col_upper is None:
        return float(y @ upper + np.maximum(reduced, 0.0).sum())
    return float(y @ upper + (col_upper * np.maximum(reduced, 0.0)).sum())


def _solve_dual(A, upper: np.ndarray, iterations: int, solver: str = "ipx",
                stop_at: Optional[float] = None, col_upper=None):  # fmt: skip
    """Row prices of ``max 1.x, A x <= upper, 0 <= x <= col_upper`` (1 unless given) from
    HiGHS, and a status. ``A``: a SciPy sparse matrix, or a small dense array.

    ``solver``: ``"pdlp"`` (first order: the large star-clique LPs), ``"ipx"`` (interior
    point, no crossover) or ``"simplex"`` (the small cluster-set LPs). ``iterations`` caps
    the solver's iterations (the work, so the prices are the same on every run); HiGHS
    gets the time to ``stop_at`` as a limit only to honour a caller's deadline, and a run
    it stops raises :class:`BoundStopped` (its prices would depend on the clock).
    """
    if stop_at is not None and stop_at <= time.perf_counter():
        raise BoundStopped()  # before HiGHS's first import (tens of ms) rather than after
    # a first import by the deadline (the shared mechanism: it goes on for the next call)
    highspy = lazyimport.import_by("highspy", stop_at, cost=HIGHS_IMPORT_SECONDS)
    if highspy is None:
        raise BoundStopped()

    from ..._shared.milp import quiet_highs

    h = quiet_highs()  # no start-up banner on standard output
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", solver)
    h.setOptionValue("run_crossover", "off")
    h.setOptionValue("presolve", "off")  # its work is not capped by the iteration limits
    h.setOptionValue("threads", 1)
    for option in ("pdlp_iteration_limit", "simplex_iteration_limit", "ipm_iteration_limit"):
        h.setOptionValue(option, int(iterations))
    if stop_at is not None:
        left = stop_at - time.perf_counter()
        if left <= 0:
            raise BoundStopped()
        h.setOptionValue("time_limit", float(left))
    nv = A.shape[1]
    lp = highspy.HighsLp()
    lp.num_col_ = nv
    lp.num_row_ = A.shape[0]
    lp.col_cost_ = np.ones(nv)
    lp.col_lower_ = np.zeros(nv)
    lp.col_upper_ = np.ones(nv) if col_upper is None else np.asarray(col_upper, np.float64)
    lp.row_lower_ = np.full(A.shape[0], -highspy.kHighsInf)
    lp.row_upper_ = upper
    if isinstance(A, np.ndarray):  # column by column, rows rising (as a CSC matrix)
        col, row = np.nonzero(A.T)
        start = np.zeros(nv + 1, dtype=np.int32)
        np.cumsum(np.bincount(col, minlength=nv), out=start[1:])
        index, value = row.astype(np.int32), A.T[col, row].astype(np.float64)
    else:
        Ac = A.tocsc()
        start, index = Ac.indptr.astype(np.int32), Ac.indices.astype(np.int32)
        value = Ac.data
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    lp.sense_ = highspy.ObjSense.kMaximize
    h.passModel(lp)
    h.run()
    model_status = h.getModelStatus()
    sol = h.getSolution()
    y = np.asarray(sol.row_dual, dtype=np.float64) if sol.dual_valid else None
    if model_status == highspy.HighsModelStatus.kOptimal:
        status = "optimal"
    elif model_status == highspy.HighsModelStatus.kTimeLimit:
        raise BoundStopped()
    elif model_status == highspy.HighsModelStatus.kIterationLimit:
        status = "iteration_limit"
    else:
        status = f"highs: {h.modelStatusToString(model_status)}"
    if y is not None and y.size != A.shape[0]:
        y = None
    return y, status


# Fraction of stored links (of n (n - 1)) from which a request counts as dense.
DENSE_FRACTION = 0.2
