"""Scaling of a model before a solver sees it: :func:`model_scaling` (powers of two that
bring a badly scaled model into :data:`SANE_RANGE`, for HiGHS and CBC, whose tolerances are
absolute) and :func:`integer_scaling` (decimal data as integers times a unit, for CP-SAT)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

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
        new_r = np.where(
            np.isnan(lo_r), 0.0, np.minimum(-np.rint((lo_r + hi_r) / 2), top - np.ceil(hi_r))
        )
        lo_c, hi_c = _segment_extremes((logs + new_r[row_of])[csc_order], col_ptr)
        new_k = np.where(
            np.isnan(lo_c) | ~cont,
            0.0,
            np.minimum(-np.rint((lo_c + hi_c) / 2), top - np.ceil(hi_c)),
        )
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
