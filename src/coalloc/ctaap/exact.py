"""Exact solution of the CTAAP integer program of Kravtsov et al., section 3.2.

The paper fed "the five equations, with the quadratic equation (4) replaced by a series of
equivalent linear equations" to GLPK and CBC to get the optimum its heuristic is compared
with (Fig. 2) and the exact run times (Fig. 3). This module builds that integer program and
hands it to one of three solvers:

* ``"highs"``: HiGHS through ``highspy`` (a core dependency, the default; SciPy's
  :func:`scipy.optimize.milp` only when highspy is missing);
* ``"cbc"``: CBC through PuLP (``pip install 'coalloc[cbc]'``);
* ``"cpsat"``: OR-Tools CP-SAT (``pip install 'coalloc[cpsat]'``).

Model
-----
There is one binary variable ``x[i, j]`` per *compatible* pair (constraint (3) is enforced
by leaving the other pairs out, and clusters with no machines are never compatible). The
objective is ``max sum x``. Constraint (1) is one row per task, (2) one row per cluster.

Constraint (4), ``x[i,j] B[i,k] x[k,l] <= Bhat[j,l]``, only bites when
``B[i,k] > Bhat[j,l]``: then ``x[i,j]`` and ``x[k,l]`` cannot both be 1. For an asymmetric
``B`` the pair ``(i in j, k in l)`` conflicts when ``B[i,k] > Bhat[j,l]`` *or*
``B[k,i] > Bhat[l,j]``. The set of conflicting variable pairs is enumerated once, vectorised
over the stored entries of ``B`` (one pass per cluster ``j``), and linearised in one of two
ways:

``"pairwise"``
    One row ``x[i,j] + x[k,l] <= 1`` per unordered conflicting pair (deduplicated).
``"aggregated"``
    One row per ``(i, j, l)``: with ``K`` the tasks ``k`` whose placement in ``l`` conflicts
    with ``i`` in ``j``, ``sum_{k in K} x[k,l] <= M (1 - x[i,j])`` where
    ``M = min(|K|, cap[l])`` (the tightest big-M valid without further reasoning: when
    ``x[i,j] = 0`` at most ``|K|`` tasks of ``K`` and at most ``cap[l]`` tasks overall go to
    ``l``). Far fewer rows than pairwise, but a weaker LP relaxation.

``"auto"`` picks ``"aggregated"`` for HiGHS and CBC and ``"pairwise"`` for CP-SAT, where
every pairwise row and every row of (1) becomes an ``AddAtMostOne`` (CP-SAT's native
constraint, which its presolve merges into cliques). With CP-SAT the aggregated rows are
posted as ``sum_{k in K} x[k,l] <= 0`` enforced by ``x[i,j]``, which is the same set over
the integers.

Results
-------
The solution is rounded (``x > 0.5``) and checked with :func:`coalloc.ctaap.verify` on the
original request and offer, as the shared runner's ``check`` (so a solution it refuses, or a
bound the solver's tolerances cannot reconcile with the checked value, makes the outcome
``"error"``); an allocation that fails the check is never returned as a success. The model's
coefficients are 0/1 and the capacities (the data's bandwidths and properties only decide
which variables and conflicts exist, compared exactly as verify compares them), so the
answer is the same in any unit. The
status is ``"optimal"`` only when the proven bound, rounded down (the objective is an
integer), equals the objective -- so a positive ``mip_gap`` that stops the search early
gives ``"feasible"`` here unless the bound closes anyway (``coalloc.ctaap.solve``, which
applies the package's one status rule, counts an answer within ``mip_gap`` as optimal). A
time limit or Ctrl-C that stops the solver before the proof gives ``"time_limit"``, with the
incumbent allocation (checked like any other) when the solver had one and an empty one
otherwise. ``bound`` is the solver's
proven upper bound, intersected with :func:`upper_bound`.

The flow bound (:func:`upper_bound`, :func:`tightened_capacity`) lives in
:mod:`.flow_bound` (re-exported here), and the clique LP and cluster-set bounds that go
beyond it in :mod:`.bounds`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt, lazyimport, milp
from .._shared import params as checks
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.milp import SOLVERS
from .._shared.result import relative_gap
from .._shared.seeding import check_seed
from .flow_bound import (  # noqa: F401 - re-exported: the bounds and tests import them here
    CSGRAPH_IMPORT_SECONDS,
    _import_overruns,
    tightened_capacity,
    upper_bound,
)
from .model import Offer, Request, check_compatible, compatibility
from .result import SolveResult
from .verify import verify

__all__ = ["solve_exact", "upper_bound", "SOLVERS", "FORMULATIONS"]

#: The integer-programming solvers of :func:`solve_exact` (``solver=``): :data:`SOLVERS`.

#: Linearisations of constraint (4).
FORMULATIONS = ("auto", "pairwise", "aggregated")

# Bounded work per vectorised block when enumerating conflicts (entries x clusters); a
# block is also the step at which the deadline is looked at (2**20: 10-30 ms under load).
_BLOCK = 1 << 20


# --------------------------------------------------------------------------------------
# Model building
# --------------------------------------------------------------------------------------


class _Model:
    """The integer program in sparse form, shared by every back-end.

    Attributes
    ----------
    task, cluster : ndarray of int64
        Task and cluster of each variable (compatible pairs, in row-major order).
    pair_u, pair_v : ndarray of int64
        Unordered conflicting variable pairs (``u < v``), deduplicated.
    """

    def __init__(self, request: Request, offer: Offer, deadline: Optional[float] = None):
        n, m = request.n, offer.m
        self.n, self.m = n, m
        compat = compatibility(request, offer)
        task, cluster = np.nonzero(compat)
        self.task = task.astype(np.int64)
        self.cluster = cluster.astype(np.int64)
        self.nvar = int(self.task.size)
        var_index = np.full((n, m), -1, dtype=np.int64)
        var_index[self.task, self.cluster] = np.arange(self.nvar, dtype=np.int64)
        self.capacity = np.asarray(offer.capacity, dtype=np.int64)
        pace = [0.0]  # the blocks' sorting seconds: the pace the later phases are sized by
        self.pair_u, self.pair_v = _conflict_pairs(request, offer, compat, var_index, deadline,
                                                   pace)  # fmt: skip
        self.sort_seconds = pace[0]

    @property
    def n_pairs(self) -> int:
        return int(self.pair_u.size)

    def base_rows(self):
        """Rows of (1) (one per task with >= 2 variables) and (2) (clusters that can fill up)."""
        per_task = np.bincount(self.task, minlength=self.n)
        per_cluster = np.bincount(self.cluster, minlength=self.m)
        task_rows = np.flatnonzero(per_task >= 2)
        cl_rows = np.flatnonzero(per_cluster > self.capacity)
        return task_rows, cl_rows

    def aggregated_rows(self):
        """Aggregated rows as (row_var u, target cluster l, members v, M).

        Returns
        -------
        row_u : ndarray, (R,)   variable x[i,j] of each row
        row_l : ndarray, (R,)   cluster l of each row
        row_M : ndarray, (R,)   big-M of each row
        ent_row, ent_v : ndarray, (E,)  row of each member entry and its variable x[k,l]
        """
        u = np.concatenate([self.pair_u, self.pair_v])
        v = np.concatenate([self.pair_v, self.pair_u])
        key = u * self.m + self.cluster[v]
        keys, ent_row, counts = _unique_inverse(key, self.nvar * self.m)
        row_u = keys // self.m
        row_l = keys % self.m
        row_M = np.minimum(counts, self.capacity[row_l])
        return row_u, row_l, row_M, ent_row.astype(np.int64), v

    def constraint_matrix(self, formulation: str):
        """Sparse ``A x <= ub`` of the whole model (rows of (1), (2) then (4))."""
        task_rows, cl_rows = self.base_rows()
        nv = self.nvar
        # (1): one row per task with several candidate clusters.
        sel = np.isin(self.task, task_rows)
        t_row = np.searchsorted(task_rows, self.task[sel])
        blocks_r = [t_row]
        blocks_c = [np.flatnonzero(sel)]
        blocks_d = [np.ones(t_row.size)]
        ub = [np.ones(task_rows.size)]
        r0 = task_rows.size
        # (2): one row per cluster that has more candidates than machines.
        sel = np.isin(self.cluster, cl_rows)
        c_row = np.searchsorted(cl_rows, self.cluster[sel])
        blocks_r.append(r0 + c_row)
        blocks_c.append(np.flatnonzero(sel))
        blocks_d.append(np.ones(c_row.size))
        ub.append(self.capacity[cl_rows].astype(np.float64))
        r0 += cl_rows.size
        # (4)
        if formulation == "pairwise":
            rows = r0 + np.arange(self.n_pairs, dtype=np.int64)
            blocks_r += [rows, rows]
            blocks_c += [self.pair_u, self.pair_v]
            blocks_d += [np.ones(self.n_pairs), np.ones(self.n_pairs)]
            ub.append(np.ones(self.n_pairs))
            r0 += self.n_pairs
        else:
            row_u, _, row_M, ent_row, ent_v = self.aggregated_rows()
            nr = row_u.size
            blocks_r += [r0 + np.arange(nr, dtype=np.int64), r0 + ent_row]
            blocks_c += [row_u, ent_v]
            blocks_d += [row_M.astype(np.float64), np.ones(ent_v.size)]
            ub.append(row_M.astype(np.float64))
            r0 += nr
        A = sp.csr_array(
            (
                np.concatenate(blocks_d),
                (np.concatenate(blocks_r), np.concatenate(blocks_c)),
            ),
            shape=(r0, nv),
        )
        return A, np.concatenate(ub)


def _unique_inverse(key: np.ndarray, span: Optional[int] = None):
    """``np.unique(key, return_inverse=True, return_counts=True)`` for non-negative keys
    below ``span``: the same three arrays (the sorted distinct keys, each entry's index
    among them, each key's count). When ``span`` is at most a few times the keys' number,
    by counting (``np.bincount``, no sort: np.unique's argsort took 5-14x the conflict
    pairs' sorting on the aggregated rows' keys); else by one argsort."""
    key = np.asarray(key, dtype=np.int64).reshape(-1)
    if key.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    if span is not None and span <= 4 * key.size + 1024:
        counts = np.bincount(key, minlength=span)
        seen = counts > 0
        rank = np.cumsum(seen, dtype=np.int64) - 1
        return np.flatnonzero(seen).astype(np.int64), rank[key], counts[seen]
    order = np.argsort(key)
    sk = key[order]
    first = np.empty(sk.size, dtype=bool)
    first[0] = True
    np.not_equal(sk[1:], sk[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    inverse = np.empty(sk.size, dtype=np.int64)
    inverse[order] = np.cumsum(first, dtype=np.int64) - 1
    counts = np.diff(np.append(starts, sk.size))
    return sk[starts], inverse, counts


def _conflict_pairs(request: Request, offer: Offer, compat, var_index,
                    deadline: Optional[float] = None, pace: Optional[list] = None):  # fmt: skip
    """Unordered pairs of variables that constraint (4) forbids together.

    For every stored entry ``B[i, k] = b`` (``i != k``) and every cluster pair ``(j, l)``
    with ``i`` fitting ``j`` and ``k`` fitting ``l``, the variables ``x[i,j]`` and
    ``x[k,l]`` conflict when ``b > Bhat[j, l]``. Entries of ``B`` in either direction are
    visited, so an asymmetric matrix is covered. Vectorised over blocks of entries (every
    cluster ``j`` per block), so memory stays bounded; ``deadline``: the last merge is not
    begun when it would end past it (:func:`_merge_fits`).
    """
    B = request.bandwidth
    bhat = offer.bandwidth
    m = offer.m
    if B.nnz == 0 or m == 0 or not compat.any():
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    # In blocks of entries, each block over every cluster, the deadline looked at between
    # blocks (issue 36: a pass over every entry, as the diagonal's and the low entries'
    # masks and each cluster's gather were, took 0.1-0.3 s under load on 2,000 dense tasks)
    indptr, bmin = B.indptr, bhat.min()
    nv = np.int64(max(1, int(var_index.max()) + 1))
    runs, pace = [], [0.0] if pace is None else pace
    step = max(1, (_BLOCK >> 1) // max(1, m * m))  # work: step x m clusters x m columns
    for s in range(0, B.nnz, step):
        interrupt.check()  # a time limit's deadline (solve_exact), Ctrl-C, a batch's timeout
        e = min(s + step, B.nnz)
        r = np.searchsorted(indptr, np.arange(s, e), side="right") - 1
        c = B.indices[s:e].astype(np.int64)
        b = B.data[s:e]
        # the diagonal, and entries that can never bite (below every available bandwidth)
        keep = (r != c) & (b > bmin)
        run = _block_keys(r[keep], c[keep], b[keep], compat, bhat, var_index, nv, pace)
        if run.size:
            runs.append(run)
    if not runs:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    _merge_fits(pace[0], deadline)
    key = np.concatenate(runs)
    del runs
    interrupt.check()
    key = np.sort(key, kind="stable")  # sorted runs, merged (np.unique hashes in NumPy 2.4:
    keep = np.empty(key.size, dtype=bool)  # 1.4 s here under load, in one call)
    keep[:1] = True
    np.not_equal(key[1:], key[:-1], out=keep[1:])
    key = key[keep]
    return key // nv, key % nv


def _block_keys(r, c, b, compat, bhat, var_index, nv, pace: list) -> np.ndarray:
    """The conflicting pairs of one block of entries ``(r, c, b)`` over every cluster, as
    sorted distinct keys ``lo * nv + hi``; ``pace[0]`` gets the seconds spent sorting.

    (A block of entries, then every cluster: before, each cluster's pass began with a gather
    over every entry, ``compat[rows, j]``, 0.15-0.3 s between two looks at the deadline on
    2,000 dense tasks at a load of 8, issue 36. The set of pairs is the same.)"""
    cr, cc = compat[r], compat[c]
    us, vs = [], []
    for j in range(compat.shape[1]):
        sel = cr[:, j]
        if not sel.any():
            continue
        hit = cc[sel] & (b[sel][:, None] > bhat[j][None, :])
        e, l = np.nonzero(hit)
        if e.size:
            us.append(var_index[r[sel][e], j])
            vs.append(var_index[c[sel][e], l])
    if not us:
        return np.zeros(0, dtype=np.int64)
    t = time.perf_counter()
    u, v = np.concatenate(us), np.concatenate(vs)
    key = np.sort(np.minimum(u, v) * nv + np.maximum(u, v))
    keep = np.empty(key.size, dtype=bool)
    keep[:1] = True
    np.not_equal(key[1:], key[:-1], out=keep[1:])
    pace[0] += time.perf_counter() - t
    return key[keep]


#: The constraint matrix (one NumPy call after another, not interruptible) predicted as
#: this many times the conflict pairs' sorting seconds, measured in the same call, by
#: formulation (measured 5-14x for the aggregated rows when their keys went through
#: np.unique, 2.8-6x since they are counted (:func:`_unique_inverse`; kept at 16, not
#: re-measured on enough sizes), 0.9-2x for the pairwise ones, on 300-10,000 tasks): not
#: begun when it would end past the deadline (issue 36: 1.6-2.4 s past a 2 s limit on
#: 10,000 sparse tasks under load).
_MATRIX_PACE = {"aggregated": 16.0, "pairwise": 2.5}

#: The last merge of the blocks' sorted keys (concatenation, a merge sort of sorted runs,
#: the duplicates dropped: one call each, not interruptible) predicted as this many times
#: the blocks' own sorting time (measured in the call).
_MERGE_PACE = 1.5


def _merge_fits(sorted_s: float, deadline: Optional[float]) -> None:
    """Stop (:class:`interrupt.DeadlinePassed`) before the last merge when, predicted from the
    blocks' pace (:data:`_MERGE_PACE`), it would end past ``deadline`` (issue 36: 0.35-0.8 s
    past a 2 s limit on 10,000 sparse tasks under load); nothing without one."""
    if deadline is not None and time.perf_counter() + _MERGE_PACE * sorted_s > deadline:
        raise interrupt.DeadlinePassed()
    interrupt.check()


# --------------------------------------------------------------------------------------
# Back-ends
# --------------------------------------------------------------------------------------


def _checker(model: _Model, request: Request, offer: Offer):
    """The runner's check (``check=`` of :func:`~coalloc._shared.milp.run_milp` and
    :func:`~coalloc._shared.milp.run_cpsat`): the solution rounded and judged by
    :func:`coalloc.ctaap.verify` on the original request and offer; its value is the number of
    tasks placed. A value far from 0 or 1, a task placed twice or a violated constraint
    raises :class:`~coalloc._shared.milp.Rejected`, so that such a solution is never
    reported "optimal"."""

    def check(x: np.ndarray) -> float:
        x = np.asarray(x, dtype=np.float64)
        if x.shape != (model.nvar,):
            raise milp.Rejected(f"{x.shape[0] if x.ndim else 0} values for {model.nvar} variables")
        off = np.abs(x - np.rint(x))
        if not np.all(np.isfinite(x)) or off.max(initial=0.0) > 1e-4:
            v = int(np.argmax(np.where(np.isfinite(off), off, np.inf)))
            raise milp.Rejected(f"variable {v} is {x[v]!r}, not binary")
        chosen = np.flatnonzero(x > 0.5)
        tasks, clusters = model.task[chosen], model.cluster[chosen]
        if np.unique(tasks).size != tasks.size:
            raise milp.Rejected("the rounded solution places a task twice")
        candidate = np.full(request.n, -1, dtype=np.int64)
        candidate[tasks] = clusters
        report = verify(request, offer, candidate)
        if not report.feasible:
            broken = {k: v for k, v in report.violations.items() if v}
            raise milp.Rejected(f"the rounded solution violates constraints {broken}")
        return float(report.n_allocated)

    return check


def _run(solver, solver_pkg, model: _Model, formulation, deadline,
         settings: milp.MilpOptions, check=None):  # fmt: skip
    """Build the chosen linearisation and solve it on the shared runner, by ``deadline``
    with ``settings``' gap, threads, seed and log."""
    if solver == "cpsat":
        return _run_cpsat(solver_pkg, model, formulation, deadline, settings, check)
    nv = model.nvar
    # Nothing is built when the solver could not start in the time left (the matrix takes
    # 70 ms on 2,000 tasks and a large model's HiGHS child 0.25 s to start): an upper
    # estimate of its size (rows of (1) and (2): one entry per variable each; (4): two per
    # conflicting pair and one per row).
    late = milp.start_refused(solver, solver_pkg, 3 * nv + 3 * model.n_pairs, deadline)
    if late is not None:
        return late, time.perf_counter()
    if deadline is not None and (time.perf_counter() + _MATRIX_PACE[formulation]
                                 * model.sort_seconds > deadline):  # fmt: skip
        raise _BuildStopped()  # (see _MATRIX_PACE)
    A, ub = model.constraint_matrix(formulation)
    t_built = time.perf_counter()
    problem = milp.MilpProblem(np.ones(nv), A, np.full(A.shape[0], -np.inf), ub,
                               integrality=np.ones(nv), lb=0.0, ub=1.0, sense="max")  # fmt: skip
    options = milp.MilpOptions.until(deadline, mip_gap=settings.mip_gap, threads=settings.threads,
                                     seed=settings.seed, verbose=settings.verbose,
                                     name="coalloc_exact")  # fmt: skip
    outcome = milp.run_milp(solver, solver_pkg, problem, options=options, check=check)
    return outcome, t_built


class _BuildStopped(Exception):
    """The time limit passed while a model was posted to the solver (before it ran)."""


def _run_cpsat(cp_model, model: _Model, formulation, deadline, settings: milp.MilpOptions,
               check=None):  # fmt: skip
    nv = model.nvar
    mdl = cp_model.CpModel()
    xs = [mdl.NewBoolVar(f"x{v}") for v in range(nv)]
    if checks.expired(deadline):
        raise _BuildStopped()
    task_rows, cl_rows = model.base_rows()
    order = np.argsort(model.task, kind="stable")
    starts = np.searchsorted(model.task[order], np.arange(model.n + 1))
    for i in task_rows.tolist():
        mdl.AddAtMostOne([xs[v] for v in order[starts[i] : starts[i + 1]].tolist()])
    order = np.argsort(model.cluster, kind="stable")
    starts = np.searchsorted(model.cluster[order], np.arange(model.m + 1))
    for j in cl_rows.tolist():
        mdl.Add(
            sum(xs[v] for v in order[starts[j] : starts[j + 1]].tolist()) <= int(model.capacity[j])
        )
    n_rows = task_rows.size + cl_rows.size
    if formulation == "pairwise":
        for k, (u, v) in enumerate(zip(model.pair_u.tolist(), model.pair_v.tolist())):
            if not k & 8191 and checks.expired(deadline):
                raise _BuildStopped()  # posting millions of rows takes seconds
            mdl.AddAtMostOne([xs[u], xs[v]])
        n_rows += model.n_pairs
    else:
        row_u, _, _, ent_row, ent_v = model.aggregated_rows()
        order = np.argsort(ent_row, kind="stable")
        starts = np.searchsorted(ent_row[order], np.arange(row_u.size + 1))
        ent_v = ent_v[order]
        for r, u in enumerate(row_u.tolist()):
            if not r & 8191 and checks.expired(deadline):
                raise _BuildStopped()
            members = ent_v[starts[r] : starts[r + 1]].tolist()
            mdl.Add(sum(xs[v] for v in members) <= 0).OnlyEnforceIf(xs[u])
        n_rows += row_u.size
    mdl.Maximize(sum(xs))
    t_built = time.perf_counter()
    outcome = milp.run_cpsat(
        cp_model, mdl, xs, rows=n_rows, time_limit=milp.remaining(deadline),
        mip_gap=settings.mip_gap, threads=settings.threads, seed=settings.seed,
        verbose=settings.verbose, check=check,
    )  # fmt: skip
    return outcome, t_built


# --------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------


def _without_allocation(info: dict, ub_comb: float, proven: float,
                        time_limit: Optional[float]) -> tuple:  # fmt: skip
    """``(status, message, objective, bound)`` of a solve that returned no allocation
    (``info``: the solver's outcome): the solver's failure, or, stopped by a limit, the
    empty allocation (always an answer: 0 tasks, verified) with the proven bound."""
    msg_solver = info["solver_message"]
    if info["status"] == "error":  # the solver failed, or the check refused its answer
        return "error", f"{msg_solver}; no allocation returned", None, ub_comb
    if info["infeasible"]:
        return ("error", f"{msg_solver}: the solver reported the model infeasible, but "
                "allocating nothing is always feasible", None, proven)  # fmt: skip
    if info["time_limit_hit"] or time_limit is not None:
        return ("time_limit", f"{msg_solver}: no allocation found within the time limit, so "
                "the answer is the empty allocation (0 tasks); proven upper bound "
                f"{int(proven)}", 0, proven)  # fmt: skip
    return "error", f"{msg_solver}: the solver returned no allocation", None, proven


@filled
@checked("coalloc.ctaap.constraints", "exact")
def solve_exact(
    request: Request,
    offer: Offer,
    *,
    seed: Optional[int] = 0,
    solver: str = "highs",
    time_limit: Optional[float] = None,
    formulation: str = "auto",
    mip_gap: float = 0.0,
    threads: int = 1,
    verbose: bool = False,
) -> SolveResult:
    """Solve the CTAAP integer program exactly (method ``"exact"``).

    Parameters
    ----------
    %(ctaap_pair)s
    seed : int, optional
        Random seed of CBC (``randomCbcSeed``) and CP-SAT (``random_seed``). HiGHS through
        SciPy exposes no seed and is deterministic.
    solver : {"highs", "cbc", "cpsat"}, default "highs"
        ``"highs"``: HiGHS through highspy; ``"cbc"``: PuLP's ``PULP_CBC_CMD``;
        ``"cpsat"``: OR-Tools CP-SAT. The last two need ``pip install 'coalloc[exact]'``.
    time_limit : float, optional
        Wall-clock seconds for the whole call. The solver gets what remains after the model
        is built (at least 10 ms), so the call may overrun slightly (solver start-up and
        the final check are not counted). Solvers only look at the clock now and then:
        HiGHS's presolve does not at all, and on large *pairwise* models (tens of thousands
        of rows, e.g. ``fig3(300)``) it alone can take tens of seconds, as can CBC's root
        node; the default ``"aggregated"`` model keeps both close to the limit.
    formulation : {"auto", "pairwise", "aggregated"}, default "auto"
        Linearisation of constraint (4), see the module docstring. ``"auto"`` is
        ``"aggregated"`` for HiGHS and CBC and ``"pairwise"`` for CP-SAT.
    mip_gap : float, default 0.0
        Relative gap at which the solver may stop. This function then says ``"optimal"``
        only when optimality is proven; :func:`coalloc.ctaap.solve` applies the package's
        one status rule (:func:`coalloc._shared.result.settle`), whose tolerance is the
        ``mip_gap`` the method ran with: there an answer within ``mip_gap`` of its bound is
        ``"optimal"``.
    threads : int, default 1
        Threads for CBC and CP-SAT (``num_search_workers``); HiGHS runs its own
        default and ignores it.
    verbose : bool, default False
        Print the solver log.

    Returns
    -------
    SolveResult
        ``status`` is ``"optimal"`` (proven), ``"feasible"`` (a solution, optimality not
        proven: a positive ``mip_gap``), ``"time_limit"`` (a time limit or Ctrl-C stopped
        the solver before the proof: the incumbent allocation when there was one,
        ``result.success`` True; else ``assignment`` is all -1 and ``result.success``
        False) or ``"error"`` (solver failure, or a solution that failed
        :func:`coalloc.ctaap.verify` after rounding -- never returned as a success).
        ``objective`` is the allocation size, ``bound`` a proven upper bound, ``gap`` is
        ``(bound - objective) / bound`` (:func:`coalloc._shared.result.relative_gap`);
        ``timings`` has ``"build"``, ``"solve"``, ``"total"``; ``iterations["nodes"]`` the
        branch-and-bound nodes (CP-SAT: branches) when the solver reports them.

    Raises
    ------
    ValueError
        On an unknown ``solver`` or ``formulation``, a non-positive ``time_limit``, or
        other malformed arguments (the message names the argument).
    ImportError
        When the back-end's optional package is missing.

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> result = ct.solve_exact(request, offer)          # HiGHS, through highspy
    >>> result.status, result.assignment.tolist(), result.objective, result.bound
    ('optimal', [-1, 1, 1], 2.0, 2.0)
    """
    started = time.perf_counter()  # the time limit counts from here, the import included
    check_compatible(request, offer)
    seed = check_seed(seed)
    threads = int(threads)
    mip_gap = float(mip_gap)
    # counted in the time limit, not in the timings; a first import is given up at the
    # deadline (CP-SAT's: 0.7-4.7 s) and goes on in the background for the next call
    solver_pkg = milp.import_solver_until(solver, checks.deadline(time_limit, started))
    t0 = time.perf_counter()
    form = formulation
    if form == "auto":
        form = "pairwise" if solver == "cpsat" else "aggregated"
    params = {
        "solver": solver,
        "formulation": form,
        "time_limit": None if time_limit is None else float(time_limit),
        "mip_gap": mip_gap,
        "threads": threads,
    }
    n = request.n
    call = _Call(t0=t0, seed=seed, params=params, assignment=np.full(n, -1, dtype=np.int64))
    deadline = checks.deadline(time_limit, started)  # the one rule: from the call's start
    model, ub_comb = _build_under(request, offer, solver_pkg, deadline)
    params["model"] = {} if model is None else {
        "variables": model.nvar,
        "conflict_pairs": model.n_pairs,
    }  # fmt: skip
    empty = ("no allocation found, so the answer is the empty allocation (0 tasks); proven "
             f"upper bound {int(ub_comb)}")  # fmt: skip
    if solver_pkg is None:  # the deadline passed while the solver was imported
        return call.now("time_limit", f"the time limit ({time_limit:g} s) passed while "
                        f"{solver} was imported (a first import in this process; it goes on "
                        f"in the background): {empty}", objective=0,
                        bound=float(ub_comb))  # fmt: skip

    def built_out() -> SolveResult:  # the deadline passed while the model was built
        return call.now("time_limit", f"the time limit ({time_limit:g} s) passed while the "
                        f"model was built: {empty}", objective=0, bound=float(ub_comb))  # fmt: skip

    if model is None:  # the deadline passed while the model was built
        return built_out()
    if model.nvar == 0 or ub_comb == 0:
        params["model"]["constraints"] = 0
        return call.now("optimal", "no task fits any cluster with free machines: the optimum "
                        "is 0", objective=0, bound=0)  # fmt: skip
    if checks.expired(deadline):  # building the model took the whole budget
        return built_out()
    try:
        outcome, t_built = _run(
            solver,
            solver_pkg,
            model,
            form,
            deadline,
            milp.MilpOptions(mip_gap=mip_gap, threads=threads, seed=seed, verbose=verbose),
            _checker(model, request, offer),
        )
    except _BuildStopped:  # the deadline passed while CP-SAT's model was posted
        return built_out()
    except Exception as exc:  # a solver crash is reported, not raised
        return call.now("error", f"{solver} failed: {type(exc).__name__}: {exc}",
                        bound=ub_comb)  # fmt: skip
    t_solved = time.perf_counter()
    params["model"]["constraints"] = outcome.rows
    # Building the model counts against the limit: report what the solver got.
    if outcome.time_limit is not None:
        params["solver_time_limit"] = float(outcome.time_limit)
    proven = _proven_bound(outcome.x, outcome.bound, ub_comb)
    if outcome.x is None:
        status, message, objective, bound = _without_allocation(
            _outcome_info(outcome), float(ub_comb), proven, time_limit)  # fmt: skip
    else:
        status, message, objective, bound = _with_allocation(
            request, offer, model, outcome, proven, call.assignment)  # fmt: skip
    return call.result(status, message, objective=objective, bound=bound, nodes=outcome.nodes,
                       t_built=t_built, t_solved=t_solved)  # fmt: skip


@dataclass(frozen=True, kw_only=True)
class _Call:
    """One :func:`solve_exact` call: what each of its results reports besides its verdict
    (the start of its timings, the seed, the parameters, the assignment filled last)."""

    t0: float
    seed: int
    params: dict
    assignment: np.ndarray

    def result(self, status: str, message: str, *, objective=None, bound=None, nodes=None,
               t_built: float, t_solved: float) -> SolveResult:  # fmt: skip
        """The call's :class:`SolveResult` with this verdict."""
        t_end = time.perf_counter()
        gap = relative_gap(objective, bound, sense="max")
        iterations = {} if nodes is None else {"nodes": int(nodes)}
        return SolveResult(
            assignment=self.assignment,
            n_allocated=int((self.assignment >= 0).sum()),
            status=status,
            message=message,
            method="exact",
            timings={"build": t_built - self.t0, "solve": t_solved - t_built,
                     "total": t_end - self.t0},  # fmt: skip
            iterations=iterations,
            seed=self.seed,
            params=self.params,
            objective=None if objective is None else float(objective),
            bound=None if bound is None else float(bound),
            gap=gap,
        )

    def now(self, status: str, message: str, *, objective=None, bound=None) -> SolveResult:
        """A verdict reached before the solver ran: no time spent solving."""
        t_now = time.perf_counter()
        return self.result(status, message, objective=objective, bound=bound, t_built=t_now,
                           t_solved=t_now)  # fmt: skip


def _build_under(request: Request, offer: Offer, solver_pkg, deadline) -> tuple:
    """``(model, bound)``: the model and the flow bound, built under the deadline.

    The model and the bound are built under the deadline (issue 36: 0.2-0.6 s on 2,000
    tasks, past a 0.05 s limit): it stops them between clusters; the bound then is the
    plain one, the tasks that fit somewhere capped by the machines (and the model None when
    it was not finished, or when no solver was imported to build it for).
    """
    n = request.n
    compat = compatibility(request, offer)
    ub_comb = int(min(np.count_nonzero(compat.any(axis=1)),
                      np.minimum(offer.capacity, n)[compat.any(axis=0)].sum()))  # fmt: skip
    model = None
    try:
        if solver_pkg is None:
            raise interrupt.DeadlinePassed  # (no solver to build for)
        with interrupt.until(deadline):
            model = _Model(request, offer, deadline)
            # the flow bound's SciPy import (0.3-1.4 s in a fresh process) by the deadline,
            # through the shared mechanism: when it would not fit, the plain bound, and the
            # import goes on in the background for the next call
            if lazyimport.import_by("scipy.sparse.csgraph", deadline,
                                    cost=CSGRAPH_IMPORT_SECONDS) is not None:  # fmt: skip
                ub_comb = upper_bound(request, offer)
    except interrupt.DeadlinePassed:
        pass
    return model, ub_comb


def _outcome_info(outcome: milp.MilpOutcome) -> dict:
    """The fields of a solver's outcome that :func:`_without_allocation` reads."""
    return {
        "status": outcome.status,
        "solver_message": outcome.message,
        "infeasible": outcome.infeasible,
        "time_limit_hit": outcome.time_limit_hit,
    }


def _proven_bound(x: Optional[np.ndarray], bound: Optional[float], ub_comb: float) -> float:
    """The proven bound: the solver's (an integer objective: round down), capped by ours."""
    proven = float(ub_comb)
    if bound is not None and np.isfinite(bound):
        if x is None or bound >= float(np.sum(x > 0.5)) - 1e-6:  # ignore a nonsense bound
            proven = min(proven, math.floor(bound + 1e-6))
    return proven


def _with_allocation(request: Request, offer: Offer, model: _Model, outcome, proven: float,
                     assignment: np.ndarray) -> tuple:  # fmt: skip
    """``(status, message, objective, bound)`` of a solve that returned values ``x``: they
    are rounded robustly and checked independently (:func:`coalloc.ctaap.verify`); an
    allocation that passes fills ``assignment``."""
    msg_solver, n = outcome.message, request.n
    chosen = np.flatnonzero(outcome.x > 0.5)
    tasks, clusters = model.task[chosen], model.cluster[chosen]
    if np.unique(tasks).size != tasks.size:
        return "error", f"{msg_solver}: the rounded solution places a task twice", None, proven
    candidate = np.full(n, -1, dtype=np.int64)
    candidate[tasks] = clusters
    report = verify(request, offer, candidate)
    if not report.feasible:
        return ("error", f"{msg_solver}: the rounded solution violates constraints "
                f"{ {k: v for k, v in report.violations.items() if v} }", None,
                proven)  # fmt: skip
    assignment[:] = candidate
    objective = report.n_allocated
    proven = max(proven, float(objective))
    if proven <= objective:
        status = "optimal"
        message = f"{msg_solver}: optimal allocation of {objective} of {n} tasks"
    elif outcome.time_limit_hit:
        status = "time_limit"
        why = "Ctrl-C" if outcome.interrupted else "the time limit"
        message = (
            f"{msg_solver}: stopped by {why} before optimality was proven; incumbent "
            f"allocation of {objective} of {n} tasks, upper bound {int(proven)}"
        )
    else:
        status = "feasible"
        message = (
            f"{msg_solver}: allocation of {objective} of {n} tasks, optimality not proven "
            f"(gap limit or early stop); upper bound {int(proven)}"
        )
    return status, message, objective, proven
