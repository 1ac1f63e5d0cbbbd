"""Exact decisions about the sets of ``N`` nodes at one start, shared by :func:`.exact.exact`,
:func:`.exact.brute_force` and the scan (:mod:`.scan`).

* :func:`feasible_subset`: whether some set of ``count`` rows meets every total, by an integer
  program on the shared runner (HiGHS or CBC on exactly scaled columns, CP-SAT on integer
  columns or on conservative and relaxed roundings); a set, a proof that none exists, or
  undecided within the time limit.
* :func:`best_subset` / :func:`enumerate_best`: the admissible set of the largest utilisation
  factor, by enumeration of every ``C(k, count)`` subset in blocks (stopped by a deadline,
  keeping its best so far).
"""

from __future__ import annotations

import math
import time
from itertools import chain, combinations, islice
from typing import Optional

import numpy as np

from .._shared import interrupt, lazyimport, milp
from .core import ratio

__all__ = ["feasible_subset", "best_subset", "enumerate_best"]

#: CP-SAT needs every linear expression's range inside int64: exact integer columns are used
#: while the sum of their magnitudes stays below this.
_CPSAT_LIMIT = 2**61
#: The float models of HiGHS and CBC keep a column as it is while its largest magnitude lies
#: in this range (integers: at most the upper end); outside it the column is multiplied by
#: the power of two that brings its largest magnitude into [0.5, 1) (exact in binary).
_WELL_SCALED = (2.0**-10, 2.0**20)


def _deadline(time_limit, started):
    """The call's deadline (``time.perf_counter``), None without a limit."""
    return None if time_limit is None else started + float(time_limit)

def _dyadic(col: np.ndarray, need: float):
    """``(A, k, N)``: the column as exact integers ``A = col * 2**k`` (every finite double is
    an integer times a power of two) and ``N = ceil(need * 2**k)``, so that for binary ``x``
    ``sum A x >= N`` exactly when ``sum col x >= need``."""
    ratios = [float(v).as_integer_ratio() for v in col.tolist()]
    num_n, den_n = float(need).as_integer_ratio()
    k = max([den.bit_length() - 1 for _, den in ratios] + [0])
    ints = [num * ((1 << k) // den) for num, den in ratios]
    return ints, k, -(-(num_n << k) // den_n)


def _check(avail: np.ndarray, rows: np.ndarray, dlo: np.ndarray, count: int) -> bool:
    """The tolerance rule on the original data: ``count`` distinct rows whose column sums
    reach ``dlo``."""
    return (rows.size == count and np.unique(rows).size == count
            and bool(np.all(avail[rows].sum(axis=0) >= dlo)))  # fmt: skip


def _cpsat_model(cp, avail, need_cols, count, mode):
    """A CP-SAT model of ``sum x = count`` and ``sum_j A_ij x_j >= N_i``: ``mode`` "exact"
    (``need_cols`` holds integer columns), "relaxed" (availabilities rounded up, needs
    down: its infeasibility is a proof) or "conservative" (the other way: its solutions are
    admissible)."""
    k, m = avail.shape
    model = cp.CpModel()
    xs = [model.NewBoolVar(f"x{j}") for j in range(k)]
    model.Add(sum(xs) == count)
    for i in range(m):
        if mode == "exact":
            coef, need = need_cols[i]
        else:
            col, need_f = avail[:, i], need_cols[i]
            big = max(float(np.abs(col).max()), abs(need_f), 1e-300)
            scale = 2.0 ** (40 - math.frexp(big)[1])  # largest magnitude about 2**40
            up = mode == "relaxed"
            coef = (np.ceil(col * scale) if up else np.floor(col * scale)).astype(np.int64)
            need = int(math.floor(need_f * scale) if up else math.ceil(need_f * scale))
        model.Add(sum(int(c) * x for c, x in zip(coef, xs)) >= int(need))
    return model, xs


def feasible_subset(
    avail: np.ndarray,
    d: np.ndarray,
    count: int,
    *,
    solver: str = "highs",
    time_limit: Optional[float] = None,
    weights: Optional[np.ndarray] = None,
    started: Optional[float] = None,
    tol: Optional[np.ndarray] = None,
):
    """Is there a set of ``count`` rows of ``avail`` whose column sums reach ``d``?

    The family's tolerance rule applies: the sums must reach ``d - count * tol``
    (``tol``: ``tau_i`` per property, None: zeros). ``time_limit`` counts from ``started``
    (a ``time.perf_counter()`` value; default: this call), so that a caller running several
    tests under one deadline passes its own start. Returns ``(status, rows)``:
    ``"feasible"`` with rows checked against ``avail`` itself, ``"infeasible"`` (proven) or
    ``"time_limit"``/``"error"`` (undecided) with None.

    The models are exact at any scale of numbers: CP-SAT gets every column as exact
    integers (a power-of-two multiple) when they fit its 64-bit range, else a relaxation
    (rounded up: only its infeasibility is used) and a conservative model (rounded down:
    only its solutions are used); HiGHS and CBC get columns multiplied by a power of two
    (exact) when their magnitudes leave a well-conditioned range. A set a solver returns is
    checked against the original data before it is called feasible; a start HiGHS or CBC
    leave undecided that way goes to CP-SAT's exact model (when OR-Tools is installed).
    """  # fmt: skip
    started = time.perf_counter() if started is None else float(started)
    # No progress display per program (no objective to show): exact() shows the starts.
    k, m = avail.shape
    avail = np.asarray(avail, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    dlo = d if tol is None else d - count * np.asarray(tol, dtype=np.float64)
    if solver == "cpsat":  # a first import (0.7-4.7 s) is given up at the deadline
        cp = milp.import_solver_until("cpsat", _deadline(time_limit, started))
        if cp is None:
            return "time_limit", None
        cols = [_dyadic(avail[:, i], float(dlo[i])) for i in range(m)]
        exact_ints = all(sum(abs(v) for v in c) + abs(nd) < _CPSAT_LIMIT for c, _, nd in cols)
        modes = ["exact"] if exact_ints else ["relaxed", "conservative"]
        for mode in modes:
            need_cols = [(c, nd) for c, _, nd in cols] if mode == "exact" else list(dlo)
            model, xs = _cpsat_model(cp, avail, need_cols, count, mode)
            out = milp.run_cpsat(cp, model, xs, rows=m + 1, time_limit=time_limit,
                                 started=started, progress=False)  # fmt: skip
            if out.status == "infeasible" and mode != "conservative":
                return "infeasible", None  # exact or a relaxation: a proof
            if out.x is not None and out.status in ("optimal", "feasible", "time_limit"):
                rows = np.flatnonzero(np.round(out.x[:k]) > 0.5)
                if _check(avail, rows, dlo, count):
                    return "feasible", rows
            if out.time_limit_hit or out.status == "time_limit":
                return "time_limit", None
        return "error", None  # the rounded models could not decide
    # HiGHS, CBC: a float model, columns brought into a well-conditioned range
    scale = np.ones(m)
    lo_rule = dlo.copy()  # the rule's thresholds (scaled like their columns)
    lo_first = d.copy()  # the plain model first where a column is kept as it is
    for i in range(m):
        col = avail[:, i]
        big = float(np.abs(col).max()) if k else 0.0
        if bool(np.all(col == np.round(col))) and big <= _WELL_SCALED[1]:
            lo_rule[i] = lo_first[i] = math.ceil(dlo[i])  # integer sums: exact
        elif big > 0 and not (_WELL_SCALED[0] <= big <= _WELL_SCALED[1]):
            scale[i] = 2.0 ** -math.frexp(big)[1]  # exact: a power of two
            lo_rule[i] = lo_first[i] = dlo[i] * scale[i]
    a = np.vstack([np.ones((1, k)), (avail * scale[None, :]).T])
    hi = np.concatenate([[count], np.full(m, np.inf)])
    # a first import (SciPy's sparse: 0.2-1 s) is given up at the deadline (issue 36)
    sp = lazyimport.import_by("scipy.sparse", _deadline(time_limit, started))
    if sp is None:
        return "time_limit", None

    cost = np.zeros(k) if weights is None else weights
    # The rule's thresholds first: most starts a scan asks about are infeasible, and their
    # proof is this one solve. A feasible one is then asked with the plain thresholds, and
    # a set meeting those is preferred (the answer the plain model alone gave before).
    plain = bool(np.any(lo_first != lo_rule))
    passes = [lo_rule]
    status = "error"
    margin = False
    found = None
    pkg = milp.import_solver_until(solver, _deadline(time_limit, started))  # (as above)
    if pkg is None:
        return "time_limit", None
    while passes:
        lo_rows = passes.pop(0)
        lo = np.concatenate([[count], lo_rows])
        out = milp.run_milp(solver, pkg, cost, sp.csr_matrix(a), lo,
                            hi, integrality=np.ones(k), lb=0.0, ub=1.0, sense="min",
                            time_limit=time_limit, mip_gap=0.0, started=started,
                            progress=False)  # fmt: skip
        if out.x is not None and out.status in ("optimal", "feasible", "time_limit"):
            rows = np.flatnonzero(np.round(out.x[:k]) > 0.5)
            if _check(avail, rows, dlo, count):
                if lo_rows is lo_first:
                    return "feasible", rows
                if plain and not margin and found is None:
                    found, passes = rows, [lo_first]
                    continue
                return "feasible", rows
            if found is not None:  # the plain thresholds' set fails the rule: keep the rule's
                return "feasible", found
            # a set within the solver's own tolerances only: undecided, never "infeasible";
            # once more with the thresholds raised above those tolerances
            status = "error"
            if not margin:
                margin, passes = True, [lo_rule + 1e-6 * np.maximum(1.0, np.abs(lo_rule))]
        elif found is not None:  # the plain thresholds admit nothing: the rule's set
            return "feasible", found
        elif out.status == "infeasible":
            # the rule's own thresholds decide; a raised threshold's infeasibility proves nothing
            status = "error" if margin else "infeasible"
        else:
            status = "error"
        if out.time_limit_hit or out.status == "time_limit":
            return "time_limit", None
    if status == "error":  # CP-SAT on exact integers decides what float tolerances cannot
        if not lazyimport.installed("ortools"):  # (not imported here: inside the limit)
            return status, None
        try:
            return feasible_subset(avail, d, count, solver="cpsat", time_limit=time_limit,
                                   started=started, tol=tol)  # fmt: skip
        except ImportError:
            return status, None
    return status, None


def best_subset(avail, tmax, cap, d, count, limit, deadline=None, tol=None):
    """The subset of ``count`` rows with every total met (the tolerance rule: sums at least
    ``d - count * tol``) and the largest factor, by enumeration of all ``C(k, count)``
    subsets (None when there are more than ``limit`` or when ``time.perf_counter()`` passes
    ``deadline`` before the enumeration ends; ``(None, -1.0)`` when none is admissible).
    Returns ``(rows, factor)``."""
    if math.comb(avail.shape[0], count) > limit:
        return None
    rows, u, complete = enumerate_best(avail, tmax, cap, d, count, deadline, tol)
    return (rows, u) if complete else None


def enumerate_best(avail, tmax, cap, d, count, deadline=None, tol=None, on_better=None):
    """:func:`best_subset`'s enumeration, keeping what it found when ``deadline`` (a
    :func:`time.perf_counter` value) stops it: ``(rows, factor, complete)``, rows None
    (factor -1) when no admissible subset was met; ``complete`` False when the deadline cut
    the enumeration (the factor is then not proven maximal). ``on_better(rows, factor)`` is
    called at each better subset (a time limit's incumbent)."""
    k = avail.shape[0]
    dlo = d if tol is None else d - count * np.asarray(tol, dtype=np.float64)
    best_rows, best_u = None, -1.0
    it, pos = combinations(range(k), count), 0
    # blocks of at most _BLOCK_ENTRIES row indices (4096 subsets up to 4 rows each): a block
    # of 4096 subsets of 40 rows took 0.15-0.28 s, so a deadline checked between blocks was
    # passed by that much; the best (the first largest factor in enumeration order) is the
    # same whatever the blocks
    step = max(1, min(4096, _BLOCK_ENTRIES // max(count, 1)))
    while True:
        interrupt.check()  # between blocks: a batch's timeout, a cancelled batch
        if deadline is not None and time.perf_counter() >= deadline:
            return best_rows, best_u, False
        # the next ``step`` subsets flattened in C (chain, islice; single rows: a range), in
        # the same order (issue 40, h54coll: a Python generator per row index cost 3.1 of
        # 5.5 ms for one node among 9,997 rows, 1.1 of 10 ms for 256 of 257 rows)
        if count == 1:
            block, pos = np.arange(pos, min(pos + step, k), dtype=np.int64), pos + step
        else:
            block = np.fromiter(chain.from_iterable(islice(it, step)), dtype=np.int64)
        if block.size == 0:
            break
        block = block.reshape(-1, count)
        sa = avail[block].sum(axis=1)
        ok = np.all(sa >= dlo[None, :], axis=1)
        if not ok.any():
            continue
        b = block[ok]
        u = np.prod(ratio(d[None, :] + tmax[b].sum(axis=1), cap[b].sum(axis=1)), axis=1)
        q = int(np.argmax(u))
        if u[q] > best_u:
            best_u, best_rows = float(u[q]), b[q]
            if on_better is not None:
                on_better(best_rows, best_u)
    return best_rows, best_u, True


#: Row indices per block of :func:`enumerate_best` (subsets x rows per subset).
_BLOCK_ENTRIES = 16384

