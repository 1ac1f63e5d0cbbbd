"""CTAAP with a time budget: the default's answer first, then better with every round.

``coalloc.solve(request, offer, method="ctaap", time_limit=T)`` runs the default
CTAAP-Solver (:func:`coalloc.ctaap.solver.solve_ctaap`, the same answer as without a
limit), then improves its allocation in *rounds* until ``T`` seconds from the call's start,
Ctrl-C, a proven optimum, or ``rounds`` rounds:

* **restart** (rounds ``0, 1, 3, 4, 6, ...``): the compiled iterated local search
  (:mod:`coalloc.ctaap._localsearch`) from the best allocation, on a fresh seed, with
  ``2 x`` the default's iterations;
* **graph neighbourhood** (rounds ``2, 8, 14, ...``): the tasks of a breadth-first region of
  the request graph around an unplaced task are freed, everything else stays where it is,
  and that part is re-solved exactly (CP-SAT, else HiGHS, through the shared MILP runner
  :mod:`coalloc._shared.milp`, hinted with the current placement where the solver takes a
  hint);
* **cluster-pair neighbourhood** (rounds ``5, 11, ...``): the tasks on two clusters and
  unplaced tasks that fit them are freed and re-solved the same way.

A round's allocation replaces the best only when it places more tasks and meets every
constraint as :func:`coalloc.ctaap.verify` checks them (:func:`_feasible`, the same checks
on the placed tasks' links, looking at the deadline between chunks), so the best
allocation is always valid and the
trajectory ``(seconds, allocated, bound)`` is monotone. A neighbourhood covering every
task that the sub-solver proves optimal proves the whole allocation optimal.

Determinism: the rounds draw their seeds and regions from ``seed`` alone, and the local
search is bounded by iterations, not time. Sub-solves run on one thread with a fixed seed
and end at their proven optimum; they also carry a wall-clock safety limit
(``sub_time_limit``), and only a sub-solve that reaches it can make two runs differ.
Hence: the allocation after round ``k`` is a function of (instance, seed, parameters, k)
as long as ``iterations["sub_limit_hits"]`` is 0; where the run stops (how many rounds fit
in ``T``) depends on the machine. ``rounds=k`` (without ``time_limit``) stops after ``k``
rounds: a fully reproducible run.

Why over 800 lines: one idea, the anytime loop, with its three neighbourhoods, the
checks that keep every round's best valid and the deadline polled inside each of them.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._shared import interrupt, lazyimport, milp
from .._shared import params as checks
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.result import relative_gap
from .._shared.seeding import kernel_seed, resolve_seed
from .bounds import BoundStopped, best_bound, flow_bound
from .bounds.flow import tightening_fits
from .greedy import first_fit
from .model import KernelLinks, Offer, Request, check_compatible, compatibility
from .result import SolveResult, stopped_result
from .solver import auto_local_search, solve_ctaap

__all__ = ["solve_anytime", "SUB_SOLVERS"]

#: Exact solvers of the neighbourhoods: "auto" (CP-SAT when OR-Tools is installed, else
#: HiGHS), "cpsat", "highs", or "none" (local-search restarts only).
SUB_SOLVERS = ("auto", "cpsat", "highs", "none")

#: Share of the time limit the LP bound may use.
BOUND_SHARE = 0.3

#: Round kinds, in turn: 0 local-search restart, 1 graph neighbourhood, 2 cluster pair
#: (restarts gained more per second than neighbourhoods of 30 tasks on sparse requests).
_SCHEDULE = (0, 0, 1, 0, 0, 2)

#: Share of the time limit after which a default counts as slow: the bound comes first.
_SLOW_DEFAULT = 0.1

#: The round before which the LP bound is computed.
_LP_ROUND = 2


class _Context:
    """The instance as the rounds use it (read-only arrays, built once)."""

    def __init__(self, request: Request, offer: Offer) -> None:
        self.request, self.offer = request, offer
        self.n, self.m = request.n, offer.m
        self.compat = compatibility(request, offer)
        self.compat_u8 = self.compat.view(np.uint8)
        B, BT = request.bandwidth, request.bandwidth_transpose
        self.links = KernelLinks(B.indptr, B.indices, B.data, BT.indptr, BT.indices, BT.data)
        self.B, self.BT = B, BT
        self.bhat = offer.bandwidth
        self.cap = np.asarray(offer.capacity, dtype=np.int64)
        self.fits = self.compat.any(axis=1)


def _entries(M, rows: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stored entries ``(row, col, value)`` of the CSR rows ``rows`` of ``M``."""
    starts, ends = M.indptr[rows], M.indptr[rows + 1]
    counts = ends - starts
    total = int(counts.sum())
    if total == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
    pos = np.arange(total, dtype=np.int64) + offsets
    return np.repeat(rows, counts), M.indices[pos].astype(np.int64), M.data[pos]


def _subproblem(ctx: _Context, assign: np.ndarray, region: np.ndarray):
    """The neighbourhood ``region`` freed, everything else fixed.

    Returns
    -------
    var_task, var_cluster : ndarray
        The sub-problem's variables (local task index, cluster).
    rescap : ndarray
        Machines left on each cluster by the fixed placements.
    cliques : list of ndarray
        Sets of variables of which at most one may be 1 (per task, and the star cliques of
        every link inside the region).
    """
    R = region
    nr, m, bhat = R.size, ctx.m, ctx.bhat
    local = np.full(ctx.n, -1, dtype=np.int64)
    local[R] = np.arange(nr, dtype=np.int64)
    fixed = assign.copy()
    fixed[R] = -1
    rescap = ctx.cap - np.bincount(fixed[fixed >= 0], minlength=m)
    allowed = ctx.compat[R] & (rescap > 0)[None, :]
    # Placements that conflict with a fixed task are left out.
    forbid = np.zeros((nr, m), dtype=np.int64)
    r, c, w = _entries(ctx.B, R)
    sel = (fixed[c] >= 0) & (r != c)
    if sel.any():  # B[i,k] > bhat[j, l]
        np.add.at(forbid, local[r[sel]], w[sel][:, None] > bhat[:, fixed[c[sel]]].T)
    r2, c2, w2 = _entries(ctx.BT, R)
    sel2 = (fixed[c2] >= 0) & (r2 != c2)
    if sel2.any():  # B[k,i] > bhat[l, j]
        np.add.at(forbid, local[r2[sel2]], w2[sel2][:, None] > bhat[fixed[c2[sel2]], :])
    allowed &= forbid == 0
    vt, vc = np.nonzero(allowed)
    var = np.full((nr, m), -1, dtype=np.int64)
    var[vt, vc] = np.arange(vt.size, dtype=np.int64)
    order = np.argsort(vt, kind="stable")
    bounds = np.searchsorted(vt[order], np.arange(nr + 1))
    cliques = [order[bounds[a] : bounds[a + 1]] for a in range(nr) if bounds[a + 1] - bounds[a] > 1]
    # Star cliques of the links inside the region (either direction of B covers (4)).
    inside = (local[c] >= 0) & (r != c)
    a, b, wv = local[r[inside]], local[c[inside]], w[inside]
    if a.size:
        conf = allowed[a][:, :, None] & allowed[b][:, None, :] & (wv[:, None, None] > bhat[None])
        e, j, l = np.nonzero(conf)
        if e.size:
            key = e * m + j
            starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
            ends = np.r_[starts[1:], key.size]
            for s, t in zip(starts.tolist(), ends.tolist()):
                head = var[a[e[s]], j[s]]
                cliques.append(np.concatenate([[head], var[b[e[s]], l[s:t]]]))
    return vt, vc, rescap, cliques, var


def _solve_region(ctx, assign, region, solver, pkg, limit, seed):
    """Re-solve ``region`` exactly; the new assignment (or None) and whether it is proven."""
    vt, vc, rescap, cliques, var = _subproblem(ctx, assign, region)
    nv = vt.size
    current = assign[region]
    if nv == 0:
        return None, True, False
    hint = np.zeros(nv)
    placed = np.flatnonzero(current >= 0)
    hint[var[placed, current[placed]]] = 1.0
    per_cluster = np.bincount(vc, minlength=ctx.m)
    full = np.flatnonzero(per_cluster > rescap)
    if solver == "cpsat":
        mdl = pkg.CpModel()
        xs = [mdl.NewBoolVar(f"x{v}") for v in range(nv)]
        for q in cliques:
            mdl.AddAtMostOne([xs[v] for v in q.tolist()])
        for j in full.tolist():
            mdl.Add(sum(xs[v] for v in np.flatnonzero(vc == j).tolist()) <= int(rescap[j]))
        for v in range(nv):
            mdl.AddHint(xs[v], int(hint[v]))
        mdl.Maximize(sum(xs))
        out = milp.run_cpsat(pkg, mdl, xs, rows=len(cliques) + full.size, time_limit=limit,
                             threads=1, seed=seed)  # fmt: skip
    else:
        import scipy.sparse as sp

        rows = [np.full(q.size, k, dtype=np.int64) for k, q in enumerate(cliques)]
        cols = list(cliques)
        k0 = len(cliques)
        for k, j in enumerate(full.tolist()):
            members = np.flatnonzero(vc == j)
            rows.append(np.full(members.size, k0 + k, dtype=np.int64))
            cols.append(members)
        n_rows = k0 + full.size
        if n_rows == 0:  # nothing constrains the region: every variable's task once
            return None, False, False
        A = sp.csr_array(
            (np.ones(sum(x.size for x in rows)), (np.concatenate(rows), np.concatenate(cols))),
            shape=(n_rows, nv),
        )
        ub = np.concatenate([np.ones(k0), rescap[full].astype(np.float64)])
        out = milp.run_milp(solver, pkg, np.ones(nv), A, np.full(n_rows, -np.inf), ub,
                            integrality=np.ones(nv), lb=0.0, ub=1.0, sense="max",
                            time_limit=limit, threads=1, seed=seed)  # fmt: skip
    hit = bool(out.time_limit_hit and not out.interrupted)
    if out.interrupted:
        raise KeyboardInterrupt
    if out.x is None:
        return None, False, hit
    chosen = np.flatnonzero(out.x > 0.5)
    new = assign.copy()
    new[region] = -1
    new[region[vt[chosen]]] = vc[chosen]
    return new, out.status == "optimal", hit


def _bfs_region(ctx, assign, rng, size):
    """Up to ``size`` tasks breadth-first around an unplaced task that fits somewhere."""
    free = np.flatnonzero((assign < 0) & ctx.fits)
    pool = free if free.size else np.flatnonzero(ctx.fits)
    start = int(pool[rng.integers(pool.size)])
    seen = {start}
    queue = [start]
    head = 0
    while head < len(queue) and len(queue) < size:
        t = queue[head]
        head += 1
        nbrs = np.concatenate([
            ctx.B.indices[ctx.B.indptr[t] : ctx.B.indptr[t + 1]],
            ctx.BT.indices[ctx.BT.indptr[t] : ctx.BT.indptr[t + 1]],
        ])  # fmt: skip
        nbrs = np.unique(nbrs)
        rng.shuffle(nbrs)
        for k in nbrs.tolist():
            if k not in seen and ctx.fits[k]:
                seen.add(k)
                queue.append(k)
                if len(queue) >= size:
                    break
        if head == len(queue) and len(queue) < size:  # component exhausted: jump
            rest = np.flatnonzero(ctx.fits & (assign < 0))
            rest = rest[~np.isin(rest, queue)]
            if rest.size:
                k = int(rest[rng.integers(rest.size)])
                seen.add(k)
                queue.append(k)
    return np.array(sorted(queue), dtype=np.int64)


def _pair_region(ctx, assign, rng, size):
    """Tasks on two clusters plus unplaced tasks that fit one of them, up to ``size``."""
    m = ctx.m
    j = int(rng.integers(m))
    l = int(rng.integers(m)) if m > 1 else j
    on = np.flatnonzero((assign == j) | (assign == l))
    free = np.flatnonzero((assign < 0) & (ctx.compat[:, j] | ctx.compat[:, l]))
    if on.size > size:
        on = rng.choice(on, size=size, replace=False)
    room = size - on.size
    if free.size > room:
        free = rng.choice(free, size=room, replace=False)
    return np.unique(np.concatenate([on, free]).astype(np.int64))


def _import_solver(sub_solver: str):
    if sub_solver == "none":
        return None, None
    if sub_solver in ("auto", "cpsat"):
        try:
            return "cpsat", milp.import_solver("cpsat")
        except ImportError:
            if sub_solver == "cpsat":
                raise
    return "highs", milp.import_solver("highs")


#: Least time left (s) for which the search imports a sub-solver that this process has not
#: imported yet: CP-SAT takes 0.3-0.7 s to import, and the import holds the interpreter in
#: stretches of 10-50 ms (its compiled modules' start-up), delaying the return at a short
#: limit for nothing (the import would not end before it).
IMPORT_MIN_TIME = 0.25

_SOLVER_MODULES = {"auto": "ortools.sat.python.cp_model", "cpsat": "ortools.sat.python.cp_model",
                   "highs": "highspy"}  # fmt: skip


def _worth_importing(sub_solver: str, when: Optional[float]) -> bool:
    """Whether the search starts the sub-solver's import: it is imported already, there is
    no time limit, or at least :data:`IMPORT_MIN_TIME` is left."""
    if when is None or sys.modules.get(_SOLVER_MODULES.get(sub_solver, "")) is not None:
        return True
    return when - time.perf_counter() >= IMPORT_MIN_TIME


@filled
@checked("coalloc.ctaap.constraints", "ctaap", relations="anytime")
def solve_anytime(
    request: Request,
    offer: Offer,
    *,
    seed: Optional[int] = 0,
    time_limit: Optional[float] = None,
    rounds: Optional[int] = None,
    neighbourhood: int = 30,
    sub_solver: str = "auto",
    sub_time_limit: float = 2.0,
    lp_bound_share: float = BOUND_SHARE,
    bound_effort: float = 1.0,
    **params: Any,
) -> SolveResult:
    """The CTAAP-Solver's answer, improved until ``time_limit`` (module docstring).

    Parameters
    ----------
    %(ctaap_pair)s
    seed : int, optional
        Seeds the default's step 1 (as without a limit) and every round.
    time_limit : float, optional
        Seconds from the call's start. The default runs under it (stopped before its
        answer: the best allocation it had, after its matching and cleanup, else status
        ``"time_limit"`` without a solution); the rounds run until it passes, and the call
        returns the best allocation found so far.
    rounds : int, optional
        Stop after this many improvement rounds (at least one of ``time_limit`` and
        ``rounds`` is needed).
    neighbourhood : int, default 30
        Tasks freed by a neighbourhood round.
    sub_solver : {"auto", "cpsat", "highs", "none"}, default "auto"
        Exact solver of the neighbourhoods (``"none"``: local-search restarts only). It is
        imported after the default's answer, in the background, while the first rounds
        (local-search restarts) run. A process that has not imported it yet skips the
        import when less than :data:`IMPORT_MIN_TIME` (0.25 s) of the limit is left
        after the default's answer: every round is then a restart (the import would
        not end in time, and it would hold the interpreter near the deadline).
    sub_time_limit : float, default 2.0
        Safety limit of one sub-solve, seconds (see Determinism).
    lp_bound_share : float, default 0.3
        The bound (:func:`coalloc.ctaap.bounds.best_bound` with ``bound_effort``: the
        clique LP on sparse requests, the cluster sets on dense ones; its work capped by
        counts, so its value reproduces) is computed after the first two rounds and may
        take this share of ``time_limit``: one that has not ended by then is dropped (the
        flow bound stays). 0 keeps the flow bound only. Without a time limit the bound
        always runs to its end.
    bound_effort : float, default 1
        ``effort`` of that bound.
    **params
        Parameters of the default (:func:`coalloc.ctaap.solver.solve_ctaap`).

    Returns
    -------
    SolveResult
        The best allocation found, verified. ``status`` is ``"optimal"`` when it meets
        the bound or a whole-instance sub-solve proved it, ``"time_limit"`` when the
        time limit or Ctrl-C ended the rounds (the message says which), ``"feasible"``
        after ``rounds`` rounds. ``bound``/``gap``: the best proven bound (flow or LP).
        ``trajectory``: rows ``(seconds, allocated, bound)``, one per improvement.
        ``iterations``: the default's counters plus ``rounds``, ``improvements``,
        ``sub_solves``, ``sub_optimal``, ``sub_limit_hits`` and ``rejected`` (larger
        allocations that failed ``verify``'s checks, never expected).

    Raises
    ------
    ValueError, TypeError
        A bad parameter (named in the message).

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request, offer = ct.generators.fig2(4, seed=7)
    >>> res = ct.solve(request, offer, rounds=6, sub_solver="highs")
    >>> ct.verify(request, offer, res.assignment).feasible, res.status
    (True, 'optimal')
    """
    started = time.perf_counter()
    check_compatible(request, offer)
    # the values were checked by the table (@checked); these only fix their types
    limit = None if time_limit is None else float(time_limit)
    rounds = None if rounds is None else int(rounds)
    neighbourhood = int(neighbourhood)
    sub_time_limit = float(sub_time_limit)
    lp_bound_share = float(lp_bound_share)
    bound_effort = float(bound_effort)
    seed = resolve_seed(seed)
    anytime_params = {
        "time_limit": limit, "rounds": rounds, "neighbourhood": neighbourhood,
        "sub_solver": sub_solver, "sub_time_limit": sub_time_limit,
        "lp_bound_share": lp_bound_share, "bound_effort": bound_effort,
    }  # fmt: skip
    search = functools.partial(_search, started=started, anytime_params=anytime_params)
    if limit is None:
        return search(request, offer, seed=seed, **params)

    def stopped(request, offer, *, method_params, time_limit, elapsed):
        res = stopped_result(request, offer, method="ctaap", method_params=method_params,
                             time_limit=time_limit, elapsed=elapsed)  # fmt: skip
        res.params = {**res.params, **anytime_params}
        return res

    # The shared deadline: the compiled kernels poll it, and a stop inside one returns the
    # best allocation offered so far (params.offer_incumbent).
    timed = checks.with_time_limit(search, stopped)
    return timed(request, offer, seed=seed, time_limit=limit, **params)


class _Import:
    """The neighbourhoods' solver, imported in the background (CP-SAT takes 0.3-0.7 s to
    import: the default's answer and the first rounds do not wait for it), through the
    families' shared mechanism (:mod:`coalloc._shared.lazyimport`: one import a process,
    which the next search finds loaded or under way)."""

    def __init__(self, sub_solver: str) -> None:
        self.sub_solver = sub_solver
        self.key = f"ctaap-sub-solver:{sub_solver}"

    def _load(self) -> Any:
        return _import_solver(self.sub_solver)

    def start(self) -> None:
        lazyimport.start(self.key, self._load)

    def get(self, when: Optional[float]):
        """``(solver, package)``, or None when ``when`` passes first."""
        return lazyimport.load_by(self.key, self._load, when, cost=0.0, poll=interrupt.check)


def _search(
    request: Request,
    offer: Offer,
    *,
    seed: int,
    started: float,
    anytime_params: Dict[str, Any],
    **params: Any,
) -> SolveResult:
    """The anytime search itself (:func:`solve_anytime` after its checks): the default's
    answer, the flow bound, then rounds (:meth:`_Run.round`) until the bound is met, the
    rounds are done or the time is up; the LP bound after :data:`_LP_ROUND` rounds."""
    limit, rounds = anytime_params["time_limit"], anytime_params["rounds"]
    sub_solver = anytime_params["sub_solver"]
    # Under a time limit, a first-fit allocation before the default's (see _first_fit).
    quick = None if limit is None else _first_fit(request, offer, seed, started, anytime_params)
    # The default's answer, under the same deadline (it offers its allocation after its
    # matching and cleanup, and after the fill, so a stop in its local search keeps it).
    try:
        first = solve_ctaap(request, offer, seed=seed, **params)
    except KeyboardInterrupt:
        res = stopped_result(
            request, offer, method="ctaap", method_params=params,
            time_limit=limit or 0.0, elapsed=time.perf_counter() - started,
        )  # fmt: skip
        res.message = "Ctrl-C stopped the CTAAP-Solver before its first answer"
        res.seed = seed
        res.params = {**res.params, **anytime_params}
        return res

    run = _Run(request, offer, first, started, anytime_params)
    if quick is not None and int((quick >= 0).sum()) > run.n_best:  # rare: first fit won
        run.best, run.n_best = quick, int((quick >= 0).sum())
        run.proven = run.n_best >= run.bound
    run.offer_best()
    how = "rounds"
    if sub_solver != "none" and not run.proven and _worth_importing(sub_solver, run.when):
        run.importer = _Import(sub_solver)
        run.importer.start()
    try:
        # the flow bound; under a limit only when its first pass over the links (a process's
        # first bound of this pair: 25 million links took 1.5-2.7 s, unpolled) is predicted
        # to end before the deadline, else the bound stays the count bound (issue 36)
        if not run.proven and tightening_fits(request, offer, run.when):
            run.tighten(int(flow_bound(request, offer)))
        ls_iters = 2 * (auto_local_search(request.n) if params.get("local_search", "auto")
                        == "auto" else max(1, int(params["local_search"])))  # fmt: skip
        now = run.trajectory[0][0]
        k = 0
        while not run.proven and (rounds is None or k < rounds):
            if run.when is not None and time.perf_counter() >= run.when:
                how = "time"
                break
            slow = k == 0 and limit is not None and now > _SLOW_DEFAULT * limit
            if k == _LP_ROUND or slow:  # after two restarts, so that the first gains come
                # first; at once when the default took a tenth of the budget (large
                # requests, loaded machines): two restarts would then take the bound's time
                run.run_lp()
                if run.proven:
                    break
            if not run.round(k, seed, ls_iters):  # the deadline passed in the solver's import
                how = "time"
                break
            k += 1
        if how == "rounds" and not run.proven:  # fewer rounds than _LP_ROUND: the bound
            run.run_lp()
    except KeyboardInterrupt:
        how = "ctrl-c"
    return run.build(how)


def _first_fit(request: Request, offer: Offer, seed: int, started: float,
               anytime_params: Dict[str, Any]) -> np.ndarray:  # fmt: skip
    """A first-fit allocation (task order, :func:`~.greedy.first_fit`), offered as the
    incumbent a stop returns while it grows (every 256 tasks) and when it is done.

    Run under a time limit only, before the CTAAP-Solver: its first step (the graduated
    assignment) alone takes 6-25 s on a 5,000-task Fig. 3 request, and a 10 s budget there
    returned the empty allocation (issue 36); first fit takes about 1 ms on 1,000 Fig. 2
    tasks and about a second on 5,000 Fig. 3 tasks. The CTAAP-Solver's own offers (after
    its matching and cleanup) replace it.
    """
    n = request.n

    def offer_(assign: np.ndarray) -> None:
        snapshot = assign.copy()

        def build() -> SolveResult:
            got = int((snapshot >= 0).sum())
            return SolveResult(
                assignment=snapshot.copy(), n_allocated=got, status="feasible",
                message=(f"allocated {got} of {n} tasks by first fit, before the "
                         "CTAAP-Solver's first answer; all constraints hold"),
                method="ctaap", timings={"total": time.perf_counter() - started},
                seed=seed, params=dict(anytime_params), objective=float(got),
            )  # fmt: skip

        checks.offer_incumbent(build)

    assign = first_fit(request, offer, np.arange(n), offer_)
    offer_(assign)
    return assign


class _Run:
    """Where the anytime search stands as it goes (:class:`_Standing` freezes it for a
    result): the best allocation, the bound, the trajectory, the counters, the LP bound's
    report, and the neighbourhoods' solver once imported."""

    def __init__(self, request: Request, offer: Offer, first: SolveResult, started: float,
                 anytime_params: Dict[str, Any]) -> None:  # fmt: skip
        self.request, self.offer, self.first = request, offer, first
        self.started, self.anytime_params = started, anytime_params
        limit = anytime_params["time_limit"]
        self.when = None if limit is None else started + limit
        self.ctx = _Context(request, offer)
        self.best = first.assignment.copy()
        self.n_best = int(first.n_allocated)
        # A bound known at once: every task that fits a cluster, at most the machines.
        self.bound = int(min(int(self.ctx.fits.sum()), int(self.ctx.cap.sum())))
        self.trajectory: List[Tuple[float, int, int]] = [
            (time.perf_counter() - started, self.n_best, self.bound)]  # fmt: skip
        self.counters: Dict[str, int] = dict.fromkeys(
            ("rounds", "improvements", "sub_solves", "sub_optimal", "sub_limit_hits",
             "rejected"), 0)  # fmt: skip
        self.lp_info: Optional[dict] = None
        self.lp_note = ""
        self.proven = self.n_best >= self.bound
        self.importer: Optional[_Import] = None
        self.solver = self.pkg = None

    def standing(self) -> _Standing:
        return _Standing(best=self.best, n_best=self.n_best, bound=self.bound,
                         proven=self.proven, trajectory=self.trajectory,
                         counters=self.counters, lp_info=self.lp_info,
                         lp_note=self.lp_note)  # fmt: skip

    def build(self, how: str) -> SolveResult:
        """The result of the search as it stands (what a stop returns, too)."""
        return _result(self.request, self.first, self.standing(), how, self.started,
                       self.anytime_params)  # fmt: skip

    def offer_best(self) -> None:
        """Offer where the search stands as the incumbent a stop returns (the builder takes
        copies: the search goes on)."""
        state = replace(self.standing(), trajectory=list(self.trajectory),
                        counters=dict(self.counters))  # fmt: skip
        request, first, started, anytime_params = (self.request, self.first, self.started,
                                                   self.anytime_params)  # fmt: skip
        checks.offer_incumbent(lambda: _result(request, first, state, "time", started,
                                               anytime_params))  # fmt: skip

    def tighten(self, bound: int) -> None:
        """A new upper bound: kept when it is lower (a trajectory point), then offered."""
        if bound < self.bound:
            self.bound = bound
            self.trajectory.append((time.perf_counter() - self.started, self.n_best, bound))
        self.proven = self.n_best >= self.bound
        self.offer_best()

    def run_lp(self) -> None:
        """The LP bound (:func:`best_bound`), within its share of the budget, once."""
        share = self.anytime_params["lp_bound_share"]
        if self.proven or share <= 0 or self.lp_info is not None or self.lp_note:
            return
        # HiGHS imported first (10-15 ms in a fresh process, more under load): its share
        # of the budget is the bound's own work, as in a warm process; a first import that
        # the deadline cuts leaves the bound out (it goes on for the next call)
        if lazyimport.import_in_budget("highspy") is None:
            return

        limit = self.anytime_params["time_limit"]
        stop_at = None
        if limit is not None:
            stop_at = min(self.when, time.perf_counter() + share * limit)
        try:
            self.lp_info = best_bound(self.request, self.offer,
                                      effort=self.anytime_params["bound_effort"],
                                      stop_at=stop_at, at_least=self.n_best)  # fmt: skip
        except BoundStopped:
            self.lp_note = "stopped (its share of the time limit passed first)"
            return
        self.tighten(int(self.lp_info["bound"]))

    def round(self, k: int, seed: int, ls_iters: int) -> bool:
        """Round ``k``: the local search from the best (kind 0) or a neighbourhood re-solved
        by the sub-solver (kinds 1-2, :data:`_SCHEDULE`), then the candidate kept when it
        places more tasks and verifies. False when the deadline passed while the solver was
        imported (no round ran)."""
        round_seed = kernel_seed(np.random.default_rng([seed, 29, k]), bits=63)
        rng = np.random.default_rng(round_seed)
        kind = _SCHEDULE[k % len(_SCHEDULE)] if self.importer is not None else 0
        if kind != 0 and self.solver is None:
            got = self.importer.get(self.when)
            if got is None:
                return False
            self.solver, self.pkg = got
        ctx, proven = self.ctx, self.proven
        if kind == 0:
            from ._localsearch import improve

            candidate = self.best.copy()
            improve(ctx.links, ctx.bhat, ctx.compat_u8, ctx.cap, candidate,
                    ls_iters, round_seed, self.first.weights,
                    deadline=interrupt.kernel_deadline())  # fmt: skip
        else:
            size = min(self.anytime_params["neighbourhood"], self.request.n)
            region = (_bfs_region if kind == 1 else _pair_region)(ctx, self.best, rng, size)
            sub_limit = self.anytime_params["sub_time_limit"]
            if self.when is not None:
                sub_limit = min(sub_limit, max(0.01, self.when - time.perf_counter()))
            candidate, optimal, hit = _solve_region(
                ctx, self.best, region, self.solver, self.pkg, sub_limit,
                int(round_seed % 2**31),
            )  # fmt: skip
            self.counters["sub_solves"] += 1
            self.counters["sub_optimal"] += int(optimal)
            self.counters["sub_limit_hits"] += int(hit)
            if optimal and region.size == self.request.n:
                proven = True
        self.counters["rounds"] = k + 1
        self._keep(candidate)
        if proven:
            self.bound = self.n_best
        self.proven = proven or self.n_best >= self.bound
        self.offer_best()
        return True

    def _keep(self, candidate: Optional[np.ndarray]) -> None:
        """The best becomes ``candidate`` when it places more tasks and verifies."""
        if candidate is None:
            return
        size_new = int((candidate >= 0).sum())
        if size_new > self.n_best:
            if _feasible(self.ctx, candidate):
                self.best, self.n_best = candidate, size_new
                self.counters["improvements"] += 1
                self.trajectory.append((time.perf_counter() - self.started, self.n_best,
                                        self.bound))  # fmt: skip
            else:  # never expected: the sub-model or a kernel is wrong
                self.counters["rejected"] += 1


#: Links of the placed tasks' rows that :func:`_feasible` checks between two looks at the
#: deadline: ``verify`` on the 5,000-task Fig. 3 request (25 million links) took 1.4 s
#: unpolled at load 9, after a round that ended just before the deadline (issue 36).
CHECK_LINKS = 1 << 19


def _feasible(ctx: _Context, assign: np.ndarray) -> bool:
    """Whether the allocation vector ``assign`` meets constraints (2)-(4), as
    :func:`coalloc.ctaap.verify` checks them (its ``feasible``; (1) and (5) hold for a
    vector): the clusters' loads, each placed task's properties, and every link from a
    placed task to another placed task. The links are read a chunk of about
    :data:`CHECK_LINKS` at a time, with a look at the deadline and Ctrl-C
    (:func:`coalloc._shared.interrupt.check`, which raises) before each."""
    request, offer = ctx.request, ctx.offer
    if assign.shape != (ctx.n,) or np.any((assign < -1) | (assign >= ctx.m)):
        return False
    tasks = np.flatnonzero(assign >= 0)
    clusters = assign[tasks]
    if np.any(np.bincount(clusters, minlength=ctx.m) > np.asarray(offer.capacity)):
        return False  # (2)
    for name, need in request.properties.items():  # (3)
        if np.any(need[tasks] > offer.properties[name][clusters]):
            return False
    links = np.cumsum(np.diff(ctx.B.indptr)[tasks])  # (4), the placed tasks' rows
    edges = np.searchsorted(links, np.arange(CHECK_LINKS, int(links[-1]) if links.size else 0,
                                             CHECK_LINKS), side="right")  # fmt: skip
    edges = np.unique(np.concatenate([[0], edges, [tasks.size]]))
    for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist()):
        interrupt.check()
        rows, cols, b = _entries(ctx.B, tasks[lo:hi])
        a_c = assign[cols]
        sel = (a_c >= 0) & (rows != cols)
        if np.any(b[sel] > ctx.bhat[assign[rows[sel]], a_c[sel]]):
            return False
    return True


@dataclass(frozen=True, kw_only=True)
class _Standing:
    """Where the anytime search stands: its best allocation (``n_best`` tasks), the upper
    bound and whether it is met, the trajectory, the counters and the LP bound's report
    (``lp_info``, or ``lp_note`` on why there is none)."""

    best: np.ndarray
    n_best: int
    bound: int
    proven: bool
    trajectory: list
    counters: Dict[str, int]
    lp_info: Optional[dict]
    lp_note: str


def _result(request, first, standing: _Standing, how: str, started: float,
            anytime_params: Dict[str, Any]) -> SolveResult:  # fmt: skip
    """The anytime search's result from where it stands (``how``: "rounds", "time",
    "ctrl-c")."""
    best, n_best, bound, proven = (standing.best, standing.n_best, standing.bound,
                                   standing.proven)  # fmt: skip
    trajectory, counters = standing.trajectory, standing.counters
    lp_info, lp_note = standing.lp_info, standing.lp_note
    elapsed = time.perf_counter() - started
    if proven:
        bound = n_best
    trajectory = [*trajectory, (elapsed, n_best, bound)]
    n = request.n
    if proven:
        status = "optimal"
        message = f"optimal allocation of {n_best} of {n} tasks (bound met)"
    elif how == "rounds":
        status = "feasible"
        message = f"allocated {n_best} of {n} tasks after {counters['rounds']} rounds"
    else:
        status = "time_limit"
        why = "Ctrl-C" if how == "ctrl-c" else "the time limit"
        message = (
            f"stopped by {why} after {counters['rounds']} rounds; best allocation of "
            f"{n_best} of {n} tasks, upper bound {bound}"
        )
    message += f" (the default allocated {first.n_allocated}); all constraints hold"
    iterations = {**first.iterations, **counters}
    timings = {**{f"default_{k}": v for k, v in first.timings.items()}, "total": elapsed}
    out_params = {**first.params, **anytime_params}
    if lp_info is not None:
        timings["lp_bound"] = float(lp_info["seconds"])
        out_params["lp_bound_status"] = lp_info["status"]
        out_params["lp_bound_kind"] = lp_info["kind"]
        if lp_info.get("lp_skipped"):  # its LP predicted not to fit the time left
            out_params["lp_bound_skipped"] = lp_info["lp_skipped"]
    elif lp_note:
        out_params["lp_bound_status"] = lp_note
    return SolveResult(
        assignment=best.copy(),
        n_allocated=n_best,
        status=status,
        message=message,
        method="ctaap",
        timings=timings,
        iterations=iterations,
        n_removals=first.n_removals,
        seed=first.seed,
        params=out_params,
        weights=first.weights,
        objective=float(n_best),
        bound=float(bound),
        gap=relative_gap(n_best, bound, sense="max"),
        trajectory=np.array(trajectory, dtype=np.float64).reshape(-1, 3),
    )


def _signature_with(func, extra: Dict[str, Any]) -> inspect.Signature:
    """``func``'s signature with the keyword-only parameters ``extra`` added."""
    sig = inspect.signature(func)
    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    names = {p.name for p in params}
    for name, default in extra.items():
        if name not in names:
            params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default))
    return sig.replace(parameters=params)


_ANYTIME_KEYWORDS = {
    "time_limit": None,
    "rounds": None,
    "neighbourhood": 30,
    "sub_solver": "auto",
    "sub_time_limit": 2.0,
    "lp_bound_share": BOUND_SHARE,
    "bound_effort": 1.0,
}


def ctaap_method(request: Request, offer: Offer, **params: Any) -> SolveResult:
    """The ``"ctaap"`` method: :func:`solve_ctaap` without ``time_limit`` and ``rounds``
    (today's answer, bit for bit), :func:`solve_anytime` with either."""
    if params.get("time_limit") is None and params.get("rounds") is None:
        extra = {k: params.pop(k) for k in list(params) if k in _ANYTIME_KEYWORDS}
        extra.pop("time_limit", None)
        extra.pop("rounds", None)
        if extra:
            raise TypeError(
                f"{sorted(extra)} only apply with time_limit or rounds (the anytime search)"
            )
        params.pop("time_limit", None)
        params.pop("rounds", None)
        return solve_ctaap(request, offer, **params)
    return solve_anytime(request, offer, **params)


#: Marks a method whose ``time_limit`` is a budget it spends improving (never worse).
ctaap_method.anytime = True  # type: ignore[attr-defined]
ctaap_method.__signature__ = _signature_with(solve_ctaap, _ANYTIME_KEYWORDS)  # type: ignore[attr-defined]
