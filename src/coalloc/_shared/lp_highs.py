"""A linear program from SciPy sparse matrices, solved by HiGHS through ``highspy`` directly.

``scipy.optimize.linprog(method="highs")`` runs the same solver but costs its import: 0.13-0.2
s of CPU in a fresh process after ``scipy.sparse`` (issue 41: a batch worker pays it once per
process), while ``highspy`` (a core dependency) imports in about 0.01 s. :func:`solve_lp`
takes ``linprog``'s form (``min c.x``, ``A_ub x <= b_ub``, ``A_eq x = b_eq``, bounds on x),
with the rows in ``linprog``'s order (the inequalities, then the equalities) and its HiGHS
options (dual simplex, presolve on), one thread and no output.

Used by the task mapper's default bound (:func:`coalloc.taskmap.bounds._lp`); CTAAP's
``_solve_dual`` builds its ``HighsLp`` the same way and could use it too.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import highspy  # at import, not in a timed solve's budget (0.01-0.04 s; SciPy's optimize 0.13+)
import numpy as np

from .milp.highs import quiet_highs

__all__ = ["LpOutcome", "solve_lp"]


class LpOutcome(NamedTuple):
    """What :func:`solve_lp` returns.

    Attributes
    ----------
    status : str
        ``"optimal"``, ``"infeasible"`` (HiGHS proved it), ``"unbounded"``,
        ``"unbounded_or_infeasible"``, ``"iteration_limit"``, ``"time_limit"``, or
        ``"highs: <HiGHS's words>"`` for anything else.
    x : ndarray or None
        The primal solution when ``status == "optimal"``, else None.
    objective : float
        The objective value when ``status == "optimal"``, else NaN.
    """

    status: str
    x: Optional[np.ndarray]
    objective: float


def _rows(a: Any, n: int) -> Any:
    """``a`` as a SciPy sparse matrix with ``n`` columns (an empty one for None)."""
    import scipy.sparse as sp

    if a is None:
        return sp.csr_matrix((0, n))
    a = sp.csr_matrix(a) if not sp.issparse(a) else a
    if a.shape[1] != n:
        raise ValueError(f"a constraint matrix has {a.shape[1]} columns, expected {n}")
    return a


def solve_lp(
    cost: np.ndarray,
    a_ub: Any = None,
    b_ub: Optional[np.ndarray] = None,
    a_eq: Any = None,
    b_eq: Optional[np.ndarray] = None,
    lower: Any = 0.0,
    upper: Any = np.inf,
    *,
    integral: bool = False,
    threads: int = 1,
    options: Optional[dict] = None,
) -> LpOutcome:
    """Solve ``min cost.x`` s.t. ``a_ub x <= b_ub``, ``a_eq x = b_eq``, ``lower <= x <= upper``.

    Parameters
    ----------
    cost : ndarray, shape (n,)
        The objective's coefficients (zeros for a feasibility question).
    a_ub, a_eq : scipy.sparse matrix or ndarray, shape (m, n), optional
        The inequality and equality rows; None for none.
    b_ub, b_eq : ndarray, shape (m,), optional
        Their right-hand sides (``np.inf`` allowed in ``b_ub``).
    lower, upper : float or ndarray, default 0 and inf
        The bounds of the variables.
    integral : bool, default False
        Every variable integral (a MILP; HiGHS's branch and bound).
    threads : int, default 1
        HiGHS's ``threads`` option (one: a batch worker does not share its core).
    options : dict, optional
        More HiGHS options, set after the defaults.

    Returns
    -------
    LpOutcome
        The status, and the solution and objective when optimal.

    Raises
    ------
    ValueError
        If the shapes disagree.
    """
    cost = np.ascontiguousarray(cost, dtype=np.float64).reshape(-1)
    n = cost.shape[0]
    a_ub, a_eq = _rows(a_ub, n), _rows(a_eq, n)
    b_ub = np.zeros(0) if b_ub is None else np.asarray(b_ub, np.float64).reshape(-1)
    b_eq = np.zeros(0) if b_eq is None else np.asarray(b_eq, np.float64).reshape(-1)
    if b_ub.shape[0] != a_ub.shape[0] or b_eq.shape[0] != a_eq.shape[0]:
        raise ValueError("b_ub and b_eq must have one entry per row of a_ub and a_eq")
    import scipy.sparse as sp

    a = sp.vstack([a_ub, a_eq], format="csc")
    a.sort_indices()
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = a.shape[0]
    lp.col_cost_ = cost
    lp.col_lower_ = np.clip(np.broadcast_to(np.asarray(lower, np.float64), (n,)), -inf, inf)
    lp.col_upper_ = np.clip(np.broadcast_to(np.asarray(upper, np.float64), (n,)), -inf, inf)
    lp.row_lower_ = np.concatenate([np.full(b_ub.shape[0], -inf), b_eq])
    lp.row_upper_ = np.clip(np.concatenate([b_ub, b_eq]), -inf, inf)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = a.indptr.astype(np.int32)
    lp.a_matrix_.index_ = a.indices.astype(np.int32)
    lp.a_matrix_.value_ = a.data.astype(np.float64)
    lp.sense_ = highspy.ObjSense.kMinimize
    if integral:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
    h = quiet_highs()  # no start-up banner on standard output
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("simplex_strategy", 1)  # dual simplex, as linprog's "highs"
    for key, value in (options or {}).items():
        h.setOptionValue(key, value)
    h.passModel(lp)
    h.run()
    ms = h.getModelStatus()
    named = {
        highspy.HighsModelStatus.kOptimal: "optimal",
        highspy.HighsModelStatus.kInfeasible: "infeasible",
        highspy.HighsModelStatus.kUnbounded: "unbounded",
        highspy.HighsModelStatus.kUnboundedOrInfeasible: "unbounded_or_infeasible",
        highspy.HighsModelStatus.kIterationLimit: "iteration_limit",
        highspy.HighsModelStatus.kTimeLimit: "time_limit",
    }
    status = named.get(ms, f"highs: {h.modelStatusToString(ms)}")
    if status != "optimal":
        return LpOutcome(status, None, float("nan"))
    x = np.asarray(h.getSolution().col_value, dtype=np.float64)
    return LpOutcome(status, x, float(h.getInfo().objective_function_value))
