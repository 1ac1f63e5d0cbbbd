"""The indivisible load-sharing problem as a multiple-knapsack integer program.

Variables ``x_ij`` (job ``j`` on node ``i``, binary) and ``y_i`` (the throughput of node
``i``, continuous)::

    max  sum_i y_i
    s.t. y_i <= capacity_i,   y_i <= sum_j size_j x_ij   (every node)
         sum_i x_ij = 1                                  (every job)

solved on the shared runner (HiGHS by default, CBC). ``y_i = min(load_i, capacity_i)`` at
an optimum, so the value is the best throughput of any placement.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .._shared import lazyimport
from .._shared.constraints import checked
from .._shared.milp import Rejected, import_solver_until, run_milp
from .._shared.result import relative_gap
from .._shared.seeding import check_seed
from .baselines import best_fit
from .model import LoadSharingProblem, throughput_of
from .result import ShareResult
from .verify import verify_placement

__all__ = ["share_exact"]


@checked("coalloc.loadshare.constraints", "exact")
def share_exact(
    problem: LoadSharingProblem,
    *,
    solver: str = "highs",
    time_limit: Optional[float] = None,
    mip_gap: float = 0.0,
    threads: int = 1,
    seed: Optional[int] = None,
    verbose: bool = False,
    max_variables: int = 500_000,
) -> ShareResult:
    """Best throughput of any placement of indivisible jobs (proven when ``optimal``).

    Parameters
    ----------
    problem : LoadSharingProblem
    solver : {"highs", "cbc"}, default "highs"
        The integer-programming solver (``backend=``, its old name, is still accepted by
        :func:`coalloc.loadshare.share` with a DeprecationWarning).
    time_limit : float, optional
        Seconds from the call's start; None (the default, as in every method of every
        family): no limit.
    mip_gap : float, default 0
    threads : int, default 1
    seed : int, optional
    verbose : bool, default False
    max_variables : int, default 500000
        Refuse models with more ``x_ij`` variables than this (nodes x jobs) with a clear
        error instead of building a program no solver here can prove.

    Returns
    -------
    ShareResult
        ``bound`` is the solver's proven upper bound (``min(load, capacity)`` without one).
        The solver starts from best fit decreasing's placement (the default method, computed
        first; ``timings["hint"]``) and the answer is never worse than it: a time limit or
        Ctrl-C that stops the solver before the proof gives status ``time_limit`` with the
        better of the solver's incumbent and that placement; a solver error, status
        ``feasible`` with that placement and the error in ``message``.

    Raises
    ------
    ValueError
        Bad options, or more than ``max_variables`` variables.

    Examples
    --------
    >>> from coalloc.loadshare import LoadSharingProblem, share_exact
    >>> share_exact(LoadSharingProblem([5, 5], [4, 3, 3], [0, 0, 0])).throughput
    9.0
    """
    seed = check_seed(seed)
    t0 = time.perf_counter()
    n, J = problem.n_nodes, problem.n_jobs
    nx = n * J  # x_ij at i * J + j, then y_i
    if nx > max_variables:
        raise ValueError(
            f"the exact program would have {nx} variables (nodes x jobs), more than "
            f"max_variables={max_variables}; use method 'bfd' or raise max_variables"
        )
    c = np.concatenate([np.zeros(nx), np.ones(n)])
    x_idx = np.arange(nx)
    node_of = x_idx // max(J, 1)
    job_of = x_idx % max(J, 1) if J else x_idx
    # rows 0..n-1: y_i - sum_j s_j x_ij <= 0; rows n..n+J-1: sum_i x_ij = 1
    rows = np.concatenate([node_of, np.arange(n), n + job_of])
    cols = np.concatenate([x_idx, nx + np.arange(n), x_idx])
    vals = np.concatenate([-problem.job_size[job_of] if J else np.zeros(0), np.ones(n),
                           np.ones(nx)])  # fmt: skip
    lo = np.concatenate([np.full(n, -np.inf), np.ones(J)])
    hi = np.concatenate([np.zeros(n), np.ones(J)])
    ub = np.concatenate([np.ones(nx), problem.capacity])
    integrality = np.concatenate([np.ones(nx), np.zeros(n)])
    # The heuristic first (best fit decreasing, milliseconds): the solver starts from it
    # (HiGHS) and the answer is never worse than it, whatever stops the solver. When it
    # meets the bound min(total load, total capacity) it is optimal: no solver is needed.
    t_hint = time.perf_counter()
    hint = best_fit(problem, backend="compiled").placement
    hint_tput = throughput_of(problem, hint)
    t_hint = time.perf_counter() - t_hint
    params = {"solver": solver, "time_limit": time_limit, "mip_gap": mip_gap, "threads": threads}
    if hint_tput >= problem.bound * (1 - 1e-12):
        return ShareResult(
            status="optimal", placement=hint, throughput=hint_tput, bound=problem.bound,
            message="best fit decreasing meets the bound min(total load, total capacity): "
            "optimal, the solver was not needed", method="exact", seed=seed, params=params,
            timings={"hint": t_hint, "total": time.perf_counter() - t0},
            iterations={"nodes": 0, "hint_throughput": hint_tput}, objective=hint_tput,
            gap=0.0,
        )  # fmt: skip
    # the exact model alone needs SciPy's sparse matrices and the solver: a process's first
    # import of them (0.3-1.4 s under load) is given up at the deadline (issue 36), with
    # best fit decreasing's placement as the answer
    deadline = None if time_limit is None else t0 + float(time_limit)
    sp = lazyimport.import_by("scipy.sparse", deadline)
    pkg = None if sp is None else import_solver_until(solver, deadline)
    if pkg is None:
        return ShareResult(
            status="time_limit", placement=hint, throughput=hint_tput, bound=problem.bound,
            message=f"stopped at the time limit ({float(time_limit):g} s) before the "
            "solver's first import in this process finished (it goes on for the next "
            "call); the answer is best fit decreasing's", method="exact", seed=seed,
            params=params, timings={"hint": t_hint, "total": time.perf_counter() - t0},
            iterations={"nodes": 0, "hint_throughput": hint_tput}, objective=hint_tput,
            gap=relative_gap(hint_tput, problem.bound, sense="max"),
        )  # fmt: skip
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n + J, nx + n))
    start = np.zeros(nx + n)
    if J:
        start[hint * J + np.arange(J)] = 1.0
    start[nx:] = np.minimum(np.bincount(hint, weights=problem.job_size, minlength=n),
                            problem.capacity)  # fmt: skip
    out = run_milp(solver, pkg, c, A, lo, hi, integrality=integrality, lb=0.0, ub=ub,
                   sense="max", time_limit=time_limit, mip_gap=mip_gap, threads=threads,
                   seed=seed, verbose=verbose, name="loadshare", started=t0,
                   check=lambda x: _check(problem, x), start=start)  # fmt: skip
    message = out.message
    placement = None
    status = out.status
    if out.x is not None:  # status optimal, feasible, or time_limit with the incumbent
        x = out.x[:nx].reshape(n, J)
        placement = np.argmax(x, axis=0).astype(np.int64)
    if status != "infeasible" and (
        placement is None or throughput_of(problem, placement) < hint_tput
    ):
        # The solver ended worse than the heuristic it started from, or with nothing: the
        # heuristic's placement, with the solver's status when it stopped early (an error
        # stays an error in the message, the placement is still a valid one).
        if out.x is None:
            message += "; the solver returned no placement: best fit decreasing's"
        else:
            message += "; the solver's placement was worse than best fit decreasing's: that one"
        placement = hint.copy()
        if status in ("optimal", "error"):
            status = "feasible"
    tput = throughput_of(problem, placement)
    bound = out.bound if out.bound is not None else problem.bound
    bound = min(float(bound), problem.bound)
    if status == "optimal":
        bound = tput
    gap = relative_gap(tput, bound, sense="max")
    return ShareResult(
        status=status, message=message, method="exact", placement=placement,
        throughput=tput, bound=bound, seed=seed,
        params=params,
        timings={"hint": t_hint, "total": time.perf_counter() - t0},
        iterations={"nodes": int(out.nodes or 0), "hint_throughput": hint_tput},
        objective=tput, gap=gap,
    )  # fmt: skip


def _check(problem: LoadSharingProblem, x: np.ndarray) -> float:
    """The runner's check of a solution on the original data: one node for every job (its
    ``x_ij`` near 1, the others near 0), and the placement's throughput as
    :func:`verify_placement` recomputes it (not the solver's ``y``, which a badly scaled model
    may lift above the loads)."""
    n, J = problem.n_nodes, problem.n_jobs
    xs = x[: n * J].reshape(n, J)
    on = xs > 0.5
    count = on.sum(axis=0)
    if J and not np.all(count == 1):
        j = int(np.flatnonzero(count != 1)[0])
        raise Rejected(f"job {j} is on {int(count[j])} nodes")
    report = verify_placement(problem, np.argmax(xs, axis=0) if J else [])
    if not report.valid:
        raise Rejected("; ".join(report.problems))
    return report.throughput
