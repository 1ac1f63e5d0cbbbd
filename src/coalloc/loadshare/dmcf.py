"""DMCF-GGA (Hovey & Jung, section 3.2) and the load-sharing baselines of section 4.2.3.

Phase I evolves one chromosome (the coalition id of every node-agent) by conditional
migration (Algorithm 3) against the coalition snapshot the cm-agents exchanged at the end of
the previous generation; Phase II shares the jobs inside every coalition by first fit. The
fitness of a generation is the total first-fit throughput; the best coalition structure is
kept, and the run stops after ``patience`` (100) generations without an increase.

Baselines: ``fcfs`` (no sharing), ``fcfs-ff`` (coalitions formed first come first served,
first fit inside), ``round-robin`` (nodes dealt to coalitions in turn, first fit inside) and
``bfd`` (the default: a central best-fit-decreasing balancer, no coalitions).
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
from typing import Any, Optional

import numpy as np

from .._shared import interrupt
from .._shared.params import check_backend, integer, number, offer_incumbent
from .._shared.progress import progress as _progress
from .._shared.result import relative_gap
from .._shared.seeding import check_seed, kernel_seed, resolve_seed
from . import _dmcf
from ._reference import dmcf as _twin
from .model import LoadSharingProblem, throughput_of
from .result import ShareResult

__all__ = [
    "dmcf_gga",
    "fcfs",
    "fcfs_ff",
    "round_robin",
    "best_fit",
    "initial_coalitions",
    "first_fit",
    "job_order",
    "PROCEDURES",
    "ROUNDS",
    "DEFAULTS",
]

#: Phase I procedures of Algorithm 1 with their message rounds per generation (Fig. 9a).
ROUNDS = {
    "ConditionalMigration": 1,
    "NotifyDoneMigration": 1,
    "CoalitionSnapshot": 3,
    "Elect": 2,
    "NotifyDoneGeneration": 2,
}
PROCEDURES = tuple(ROUNDS)
#: Paper defaults (Fig. 5) and this implementation's choices.
DEFAULTS = {
    "coalition_size": 23,
    "p": 0.25,
    "th_c": 0.05,
    "th_i": None,
    "patience": 100,
    "max_generations": 20000,
    "init": "arrival",
    "phase2": "ffd",
}
#: The most generations (and the largest patience) a run may be asked for: every generation
#: costs milliseconds on the paper's grids, so this bounds a run to hours, not for ever.
MAX_GENERATIONS = 10**7
_INITS = ("arrival", "random", "round-robin", "ring")
_DEALS = ("ring", "turn")
STREAMS = ("init", "migrate")  # the seed's named streams (new ones go at the end)
_PHASE2 = ("ff", "ffd")


def _kernels(backend: str):
    return _dmcf if check_backend(backend) == "compiled" else _twin


def _n_coalitions(problem: LoadSharingProblem, coalition_size: Any) -> int:
    size = integer(coalition_size, "coalition_size", 1)
    return max(1, math.ceil(problem.n_nodes / size))


def initial_coalitions(
    problem: LoadSharingProblem, coalition_size: int = 23, how: str = "arrival",
    seed: Optional[int] = 0,
) -> np.ndarray:  # fmt: skip
    """The coalition of every node before any migration.

    Parameters
    ----------
    problem : LoadSharingProblem
    coalition_size : int
        Nodes per coalition; ``ceil(n / coalition_size)`` coalitions.
    how : {"arrival", "random", "round-robin", "ring"}
        ``"arrival"``: consecutive blocks of the report order (first come first served,
        :meth:`LoadSharingProblem.report_order`); ``"round-robin"``: the nodes dealt to the
        coalitions in turn, in node order (node ``i`` joins coalition ``i mod k``);
        ``"ring"``: consecutive blocks of ``coalition_size`` nodes in node order (a token
        passed once round the ring of nodes, each coalition taking the nodes it visits until
        it holds ``coalition_size``; the last one holds the rest); ``"random"``: blocks of a
        random permutation. The blocks of ``"arrival"`` and ``"random"`` are near-equal: the
        node at position ``q`` of the order joins coalition ``q * k // n``.
    seed : int, optional
        Seed of the permutation (``"random"``).

    Returns
    -------
    ndarray of int64, shape (n,)
        The coalition index of every node.

    Raises
    ------
    ValueError
        Unknown ``how`` or a bad ``coalition_size``.

    Examples
    --------
    >>> import coalloc.loadshare as ls
    >>> problem = ls.LoadSharingProblem([10, 10, 10], [8, 7, 6, 3], [0, 0, 0, 1])
    >>> ls.initial_coalitions(problem, 2, "round-robin").tolist()
    [0, 1, 0]
    """
    nc = _n_coalitions(problem, coalition_size)
    if how not in _INITS:
        raise ValueError(f"init must be one of {_INITS}, got {how!r}")
    n = problem.n_nodes
    if how == "random":
        order = np.random.default_rng(seed).permutation(n)
    elif how in ("round-robin", "ring"):
        order = np.arange(n)
    else:
        order = problem.report_order()
    coal = np.empty(n, dtype=np.int64)
    k = np.arange(n, dtype=np.int64)
    if how == "round-robin":
        coal[order] = k % nc
    elif how == "ring":
        coal[order] = k // integer(coalition_size, "coalition_size", 1)
    else:
        coal[order] = k * nc // n
    return coal


def job_order(problem: LoadSharingProblem, phase2: str = "ff") -> np.ndarray:
    """The order jobs are offered to first fit: arrival (``"ff"``) or decreasing size
    (``"ffd"``, ties in arrival order)."""
    if phase2 not in _PHASE2:
        raise ValueError(f"phase2 must be one of {_PHASE2}, got {phase2!r}")
    if phase2 == "ff":
        return np.arange(problem.n_jobs, dtype=np.int64)
    return problem.size_order()


def first_fit(problem: LoadSharingProblem, coalition: np.ndarray, *, phase2: str = "ff",
              backend: str = "compiled") -> tuple:  # fmt: skip
    """Phase II on every coalition: ``(placement, throughput, probes, moved)``.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition : array_like of int, shape (n,)
        The coalition of every node (``0 .. k - 1``).
    phase2 : str
        The job order of the first fit (``"ff"``: the paper's).
    backend : {"compiled", "numpy"}
        The compiled kernel or its NumPy twin.

    Returns
    -------
    placement : ndarray of int64, shape (J,)
        The node of every job.
    throughput : float
        The throughput of the placement.
    probes : int
        Nodes probed by the first fit.
    moved : int
        Jobs placed away from their origin.

    Examples
    --------
    >>> from coalloc.loadshare import LoadSharingProblem, first_fit
    >>> first_fit(LoadSharingProblem([5, 5], [4, 3], [0, 0]), [0, 0])[1]
    7.0
    """
    kern = _kernels(backend)
    order = job_order(problem, phase2)
    coal = np.ascontiguousarray(coalition, dtype=np.int64)
    nc = int(coal.max()) + 1
    placement = np.empty(problem.n_jobs, dtype=np.int64)
    tp = np.zeros(nc)
    probes, moved = kern.first_fit_all(
        coal, problem.capacity, problem.job_size, problem.job_origin, order,
        np.ones(nc, dtype=np.uint8), placement, tp,
    )  # fmt: skip
    return placement, float(tp.sum()), int(probes), int(moved)


def _result(future: Any) -> Any:
    """``future.result()``, looking at the calling thread's cancellation scope every 50 ms
    (the chunks run in the executor's threads, outside it: a batch's timeout stops the wait
    and the chunks still running end on their own)."""
    while True:
        try:
            return future.result(timeout=0.05)
        except cf.TimeoutError:
            interrupt.check()


def _ff_task(coal, node_cap, job_size, job_origin, order, k, backend):
    """Executor task: first fit of ``k`` coalitions given as a sub-problem (local ids).

    A picklable top-level function; it receives only the members and jobs of its
    coalitions, so a task ships and scans its share of the grid, not all of it.
    """
    kern = _kernels(backend)
    placement = np.empty(job_size.shape[0], dtype=np.int64)
    tp = np.zeros(k)
    probes, moved = kern.first_fit_all(coal, node_cap, job_size, job_origin, order,
                                       np.ones(k, dtype=np.uint8), placement, tp)  # fmt: skip
    return tp, placement, probes, moved


def _sub_problem(coal, node_cap, job_size, job_origin, order, part, nc):
    """The members and jobs of the coalitions ``part``, renumbered locally (members keep
    their increasing order, jobs their offer order)."""
    local = np.full(nc, -1, dtype=np.int64)
    local[part] = np.arange(part.shape[0])
    nodes = np.flatnonzero(local[coal] >= 0)
    node_local = np.full(coal.shape[0], -1, dtype=np.int64)
    node_local[nodes] = np.arange(nodes.shape[0])
    offered = order[local[coal[job_origin[order]]] >= 0]  # global ids, in offer order
    jobs = np.sort(offered)
    job_local = np.searchsorted(jobs, offered).astype(np.int64)
    args = (local[coal[nodes]], np.ascontiguousarray(node_cap[nodes]),
            np.ascontiguousarray(job_size[jobs]), node_local[job_origin[jobs]], job_local,
            int(part.shape[0]))  # fmt: skip
    return args, nodes, jobs


class _Sharer:
    """Phase II of the dirty coalitions, serially or on an executor (same answers)."""

    def __init__(self, problem, nc, backend, executor, chunks, order):
        self.p = problem
        self.order = order
        self.nc = nc
        self.backend = backend
        self.kern = _kernels(backend)
        self.executor = executor
        self.chunks = chunks

    def run(self, coal, dirty, placement, tp):
        p = self.p
        if self.executor is None:
            return self.kern.first_fit_all(
                coal, p.capacity, p.job_size, p.job_origin, self.order, dirty, placement, tp
            )
        ids = np.flatnonzero(dirty)
        if ids.size == 0:
            return 0, 0
        parts = np.array_split(ids, min(self.chunks, ids.size))
        futures = []
        for part in parts:
            args, nodes, jobs = _sub_problem(coal, p.capacity, p.job_size, p.job_origin,
                                             self.order, part, self.nc)  # fmt: skip
            futures.append((part, nodes, jobs,
                            self.executor.submit(_ff_task, *args, self.backend)))  # fmt: skip
        probes = moved = 0
        for part, nodes, jobs, fut in futures:  # submission order: independent of timing
            ctp, place, pr, mv = _result(fut)
            tp[part] = ctp
            placement[jobs] = nodes[place]
            probes += pr
            moved += mv
        return probes, moved


def _init_messages(n: int, groups: int) -> dict:
    # Algorithm 2: UpdateLocalCMA (n), UpdateEveryCMA (g(g-1)), NotifyReady (3n + g(g-1)).
    return {"UpdateLocalCMA": n, "UpdateEveryCMA": groups * (groups - 1),
            "NotifyReady": 3 * n + groups * (groups - 1)}  # fmt: skip


def _generation_messages(n: int, k: int) -> dict:
    # Algorithms 3-4, per generation, with k coalitions that have members.
    kk = k * (k - 1)
    return {"ConditionalMigration": n, "NotifyDoneMigration": kk,
            "CoalitionSnapshot": 2 * n + kk, "Elect": 2 * (n - k),
            "NotifyDoneGeneration": kk + n}  # fmt: skip


def dmcf_gga(
    problem: LoadSharingProblem,
    *,
    coalition_size: int = 23,
    p: float = 0.25,
    th_c: float = 0.05,
    th_i: Optional[float] = None,
    patience: int = 100,
    max_generations: int = 20000,
    init: str = "arrival",
    phase2: str = "ffd",
    seed: Optional[int] = 0,
    executor: Optional[cf.Executor] = None,
    chunks: int = 8,
    backend: str = "compiled",
    progress: bool = False,
    coalition_history: int = 0,
) -> ShareResult:
    """DMCF-GGA: coalition formation by conditional migration, first fit inside coalitions.

    Parameters
    ----------
    problem : LoadSharingProblem
    coalition_size : int, default 23
        Nodes per coalition at the start; ``ceil(n / coalition_size)`` coalitions (the
        paper's sizes: 23, 33, 45, 83, 100).
    p : float, default 0.25
        Probability that a node-agent attempts a migration in a generation (Fig. 5).
    th_c : float, default 0.05
        Coalition threshold of Algorithm 3, in units of the mean node capacity: a
        coalition counts as overloaded when its load exceeds its capacity by more than
        ``th_c`` node capacities (the paper sweeps 0.05-1.20).
    th_i : float, optional
        Arrival cutoff of the initialisation (Algorithm 2), as a fraction of capacity: a
        node stops taking jobs into the sharing once ``|t - cap| < th_i * cap``; later
        jobs stay at their origin. None (default): every job takes part (the paper's
        experiments fix the arrivals of every node).
    patience : int, default 100
        Stop after this many generations without an increase of the total throughput
        (at most ``MAX_GENERATIONS``, 10**7).
    max_generations : int, default 20000
        Hard limit on generations (at most ``MAX_GENERATIONS``, 10**7).
    init : {"arrival", "random", "round-robin", "ring"}, default "arrival"
        Initial coalition structure (:func:`initial_coalitions`).
    phase2 : {"ffd", "ff"}, default "ffd"
        Phase II (and the fitness of every generation): first fit with each coalition's
        jobs in decreasing size (first fit decreasing, the default) or in arrival order
        (``"ff"``, the paper's literal first fit; it loses up to about 0.2 % to packing
        slack because migration balances coalitions to within ``th_c``).
    seed : int, optional
        Seed of every random choice (same seed, same answer on any executor).
    executor : concurrent.futures.Executor, optional
        Runs Phase II of the changed coalitions of every generation (for example
        ``distributed.Client().get_executor()``); results are identical to the serial run.
    chunks : int, default 8
        Tasks per generation on the executor (at most 10**6).
    backend : {"compiled", "numpy"}, default "compiled"
        The compiled generation step or its NumPy twin (identical results).
    progress : bool, default False
        Show a progress bar over generations.
    coalition_history : int, default 0
        Also keep the coalition of every node every this many generations (and after the
        initialisation and the last generation) in ``result.coalition_history``, for
        :func:`~coalloc.loadshare.plot_coalitions`; 0 keeps none. Answers do not change.

    Returns
    -------
    ShareResult
        With ``coalition``, ``migrations``, ``generations``, ``messages``, ``rounds``,
        ``history``, ``coalition_history`` (when asked) and counters ``attempts``,
        ``ff_probes`` (all generations), ``ff_probes_final`` and ``jobs_moved`` (the final
        Phase II).

    Raises
    ------
    ValueError, TypeError
        Bad parameters.

    Examples
    --------
    >>> from coalloc.loadshare import generators, dmcf_gga
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> res = dmcf_gga(prob, coalition_size=23, seed=0)
    >>> res.throughput <= prob.bound
    True
    """
    t0 = time.perf_counter()
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    nc = _n_coalitions(problem, coalition_size)
    p = float(p) if p == 0 else number(p, "p")
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    th_c = float(th_c) if th_c == 0 else number(th_c, "th_c")
    if th_i is not None:
        th_i = number(th_i, "th_i")
    patience = integer(patience, "patience", 1)
    max_generations = integer(max_generations, "max_generations", 0)
    chunks = integer(chunks, "chunks", 1)
    every = integer(coalition_history, "coalition_history", 0)
    for name, value, most in (("patience", patience, MAX_GENERATIONS),
                              ("max_generations", max_generations, MAX_GENERATIONS),
                              ("chunks", chunks, 10**6)):  # fmt: skip
        if value > most:  # a bounded run time (the loop itself has no clock)
            raise ValueError(f"{name} must be at most {most:,}, got {value}")
    kern = _kernels(backend)
    if executor is not None and not isinstance(executor, cf.Executor):
        if not callable(getattr(executor, "submit", None)):
            raise TypeError("executor must be a concurrent.futures.Executor")
    n = problem.n_nodes
    cap = problem.capacity
    cap_ref = float(cap.mean())

    # ---- DistributedInitializeSystem (Algorithm 2): the arrival cutoff
    if th_i is None:
        shared = np.ones(problem.n_jobs, dtype=bool)
    else:
        shared = _cutoff(problem, th_i)
    if shared.all():
        sub = problem
    else:
        sub = LoadSharingProblem(cap, problem.job_size[shared], problem.job_origin[shared],
                                 problem.groups)  # fmt: skip
    node_load = np.ascontiguousarray(sub.load)
    messages = _init_messages(n, problem.n_groups)
    rounds = {"Initialize": 6}

    # ---- initial coalition structure
    init_seed = kernel_seed(seed, "init", names=STREAMS, bits=32)
    coal = initial_coalitions(sub, coalition_size, init, seed=init_seed)
    order = job_order(sub, phase2)
    sharer = _Sharer(sub, nc, backend, executor, chunks, order)
    placement = np.empty(sub.n_jobs, dtype=np.int64)
    tp = np.zeros(nc)
    _offer_origins(problem, "dmcf-gga", seed, t0)
    ff_probes, _ = sharer.run(coal, np.ones(nc, dtype=np.uint8), placement, tp)
    best = float(tp.sum())
    best_coal = coal.copy()
    best_place = placement.copy()  # Phase II on best_coal (what a time limit returns)
    history = [best]
    mig_history = [0]
    snapshots = [(0, coal.copy())] if every else None
    kseed = kernel_seed(seed, "migrate", names=STREAMS)
    migrations = attempts = 0
    last_gain = 0
    g = 0
    new = np.empty(n, dtype=np.int64)
    for key in PROCEDURES:
        messages.setdefault(key, 0)
        rounds[key] = 0
    t_loop = time.perf_counter()
    t_phase1 = 0.0

    def finish(stopped: bool = False) -> ShareResult:
        """Phase II on the best coalition structure so far, and the result; ``stopped``
        (a time limit): the placement Phase II gave that structure when it was found (the
        same first fit, already computed), not computed again."""
        t2 = time.perf_counter()
        if stopped:
            final = best_place
            probes_final, moved = 0, int(np.count_nonzero(final != sub.job_origin))
        else:
            final = np.empty(sub.n_jobs, dtype=np.int64)
            ftp = np.zeros(nc)
            probes_final, moved = kern.first_fit_all(
                best_coal, cap, sub.job_size, sub.job_origin, order,
                np.ones(nc, dtype=np.uint8), final, ftp,
            )  # fmt: skip
        full = problem.job_origin.copy()
        full[shared] = final
        away = (final != sub.job_origin).astype(np.float64)
        per_coal = np.bincount(best_coal[sub.job_origin], weights=away, minlength=nc)
        critical = int(per_coal.max()) if nc else 0
        t_end = time.perf_counter()
        throughput = throughput_of(problem, full)
        messages["PhaseII"] = int(probes_final)
        messages["total"] = int(sum(v for key, v in messages.items() if key != "total"))
        rounds["total"] = int(sum(v for key, v in rounds.items() if key != "total"))
        bound = problem.bound
        return ShareResult(
            status="feasible",
            message=f"stopped after {g} generations ({g - last_gain} without a gain)",
            method="dmcf-gga",
            placement=full,
            throughput=throughput,
            bound=bound,
            seed=seed,
            params={"coalition_size": int(coalition_size), "p": p, "th_c": th_c, "th_i": th_i,
                    "patience": patience, "max_generations": max_generations, "init": init,
                    "phase2": phase2,
                    "backend": backend, "executor": executor is not None},  # fmt: skip
            timings={"phase1": t_phase1 or t2 - t_loop, "phase2": t_end - t2,
                     "total": t_end - t0},
            iterations={"generations": g, "attempts": attempts, "migrations": migrations,
                        "ff_probes": int(ff_probes + probes_final),
                        "ff_probes_final": int(probes_final), "jobs_moved": int(moved),
                        "jobs_moved_max_coalition": critical,
                        "deferred_jobs": int((~shared).sum())},  # fmt: skip
            objective=throughput,
            gap=_gap(throughput, bound),
            coalition=best_coal,
            migrations=migrations,
            generations=g,
            messages=messages,
            rounds=rounds,
            history=np.asarray(history),
            migration_history=np.asarray(mig_history, dtype=np.int64),
            coalition_history=snapshots,
        )

    # A time limit that stops Phase I gets Phase II on the best structure so far
    # (``finish`` reads ``best_coal`` and ``best_place`` when the limit calls it: they are
    # only ever replaced by better ones).
    offer_incumbent(lambda: finish(stopped=True))
    bar = _progress(total=max_generations, desc="dmcf-gga", unit="gen", disable=not progress)
    try:
        while g < max_generations and g - last_gain < patience:
            interrupt.check()  # a batch's timeout or cancellation
            coal_load = np.bincount(coal, weights=node_load, minlength=nc)
            coal_cap = np.bincount(coal, weights=cap, minlength=nc)
            coal_count = np.bincount(coal, minlength=nc).astype(np.int64)
            k = int(np.count_nonzero(coal_count))
            a, moves = kern.migrate(coal, node_load, cap, coal_load, coal_cap, coal_count,
                                    p, th_c, cap_ref, kseed, g, new)  # fmt: skip
            attempts += a
            migrations += moves
            for key, value in _generation_messages(n, k).items():
                messages[key] += value
                rounds[key] += ROUNDS[key]
            g += 1
            bar.update(1)
            if moves:
                changed = new != coal
                dirty = np.zeros(nc, dtype=np.uint8)
                dirty[coal[changed]] = 1
                dirty[new[changed]] = 1
                coal, new = new, coal
                pr, _ = sharer.run(coal, dirty, placement, tp)
                ff_probes += pr
                total = float(tp.sum())
                if total > best * (1 + 1e-12) + 1e-12:
                    best = total
                    best_coal = coal.copy()
                    best_place = placement.copy()
                    last_gain = g
            history.append(best)
            mig_history.append(migrations)
            if every and g % every == 0:
                snapshots.append((g, coal.copy()))
    finally:
        bar.close()
    t_phase1 = time.perf_counter() - t_loop
    if every and snapshots[-1][0] != g:
        snapshots.append((g, coal.copy()))

    return finish()


def _cutoff(problem: LoadSharingProblem, th_i: float) -> np.ndarray:
    """Jobs taken into the sharing under Algorithm 2's arrival cutoff."""
    t = np.zeros(problem.n_nodes)
    closed = np.zeros(problem.n_nodes, dtype=bool)
    keep = np.zeros(problem.n_jobs, dtype=bool)
    cap = problem.capacity
    for j, (o, s) in enumerate(zip(problem.job_origin.tolist(), problem.job_size.tolist())):
        if closed[o]:
            continue
        keep[j] = True
        t[o] += s
        if abs(t[o] - cap[o]) < th_i * cap[o]:
            closed[o] = True
    return keep


def _offer_origins(problem: LoadSharingProblem, method: str, seed: Any, t0: float,
                   params: Optional[dict] = None) -> None:  # fmt: skip
    """Offer a time limit in force the placement every method starts from: every job on
    its origin node (FCFS's). It is a placement :func:`verify_placement` accepts (one node
    for every job), so a method stopped before its own first placement still returns one,
    as good as no sharing at all; a method that places jobs one by one in a kernel does not
    offer its half-built placement (the kernel's state is lost when the limit stops it)."""
    offer_incumbent(lambda: _simple(problem, method, problem.job_origin.copy(), t0, seed,
                                    dict(params or {}), iterations={"jobs_moved": 0}))  # fmt: skip


def _gap(throughput: float, bound: float) -> float:
    return relative_gap(throughput, bound, sense="max")


def _simple(problem, method, placement, t0, seed, params, coalition=None, iterations=None):
    tput = throughput_of(problem, placement)
    return ShareResult(
        status="feasible", message="", method=method, placement=placement, throughput=tput,
        bound=problem.bound, seed=seed, params=params,
        timings={"total": time.perf_counter() - t0}, iterations=iterations or {},
        objective=tput, gap=_gap(tput, problem.bound), coalition=coalition,
    )  # fmt: skip


def fcfs(problem: LoadSharingProblem, *, seed: Optional[int] = None) -> ShareResult:
    """No sharing: every job runs where it arrived (Condor's first come first served).

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    seed : int, optional
        Recorded in the result (nothing is drawn at random).

    Returns
    -------
    ShareResult
        ``placement`` equal to the jobs' origins.

    Examples
    --------
    >>> from coalloc.loadshare import LoadSharingProblem, fcfs
    >>> fcfs(LoadSharingProblem([10, 10], [15, 1], [0, 1])).throughput
    11.0
    """
    t0 = time.perf_counter()
    return _simple(problem, "fcfs", problem.job_origin.copy(), t0, check_seed(seed), {})


def _coalition_ff(problem, method, how, coalition_size, seed, backend, **extra):
    t0 = time.perf_counter()
    params = {"coalition_size": int(coalition_size), "backend": backend, **extra}
    _offer_origins(problem, method, check_seed(seed), t0, params)
    coal = initial_coalitions(problem, coalition_size, how)
    placement, _, probes, moved = first_fit(problem, coal, backend=backend)
    return _simple(problem, method, placement, t0, check_seed(seed),
                   {"coalition_size": int(coalition_size), "backend": backend, **extra}, coal,
                   {"ff_probes": probes, "jobs_moved": moved})  # fmt: skip


def fcfs_ff(problem: LoadSharingProblem, *, coalition_size: int = 23, seed: Optional[int] = None,
            backend: str = "compiled") -> ShareResult:  # fmt: skip
    """Coalitions formed first come first served (report order, consecutive), first fit inside.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition_size : int
        Nodes per coalition; ``ceil(n / coalition_size)`` coalitions.
    seed : int, optional
        Recorded in the result (the method draws nothing at random).
    backend : {"compiled", "numpy"}
        The compiled first fit or its NumPy twin.

    Returns
    -------
    ShareResult
        The placement, its throughput and the coalitions.

    Raises
    ------
    ValueError, TypeError
        A bad ``coalition_size``, ``seed`` or ``backend``.

    Examples
    --------
    >>> from coalloc.loadshare import generators, fcfs_ff
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> fcfs_ff(prob).throughput >= prob.fcfs_throughput
    True
    """
    return _coalition_ff(problem, "fcfs-ff", "arrival", coalition_size, seed, backend)


def round_robin(problem: LoadSharingProblem, *, coalition_size: int = 23,
                seed: Optional[int] = None, backend: str = "compiled",
                deal: str = "ring") -> ShareResult:  # fmt: skip
    """Round robin (the paper's RR baseline): coalitions formed by a pass round the ring of
    nodes, first fit inside.

    The paper does not say how round robin forms coalitions. ``deal="ring"`` (the default,
    which reproduces the paper's Fig. 8b within 3 %) passes a token once round the ring of
    nodes in node-id order, where the nodes of an administrative domain are consecutive; the
    coalition being formed takes every node the token visits until it holds
    ``coalition_size`` (the last holds the rest). It does not depend on when
    jobs arrive. ``deal="turn"`` deals the nodes to the coalitions in turn instead (node ``i``
    to coalition ``i mod k``); ``docs/loadshare.md`` tabulates both.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition_size : int
        Nodes per coalition; ``ceil(n / coalition_size)`` coalitions.
    seed : int, optional
        Recorded in the result (the method draws nothing at random).
    backend : {"compiled", "numpy"}
        The compiled first fit or its NumPy twin.
    deal : {"ring", "turn"}, default "ring"
        How the nodes are dealt to the coalitions (above).

    Returns
    -------
    ShareResult
        The placement, its throughput and the coalitions.

    Raises
    ------
    ValueError, TypeError
        A bad ``coalition_size``, ``seed``, ``backend`` or ``deal``.

    Examples
    --------
    >>> from coalloc.loadshare import generators, round_robin
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> round_robin(prob).throughput <= prob.bound
    True
    """
    if deal not in _DEALS:
        raise ValueError(f"deal must be one of {_DEALS}, got {deal!r}")
    how = "ring" if deal == "ring" else "round-robin"
    return _coalition_ff(problem, "round-robin", how, coalition_size, seed, backend, deal=deal)


def best_fit(problem: LoadSharingProblem, *, coalition_size: Optional[int] = None,
             seed: Optional[int] = None, backend: str = "compiled") -> ShareResult:  # fmt: skip
    """The default method: keep what fits at the origin, best fit decreasing for the rest.

    Central (no coalitions; ``coalition_size`` is accepted and ignored). Every node keeps
    the jobs that fit whole in its capacity, in arrival order; the other jobs, largest
    first, go to the node with the least remaining capacity that holds them whole, else to
    the node with the most remaining capacity (their excess queues there). It reaches the
    bound whenever the pooled jobs can fill every node or all fit. When it falls short of
    the bound, the same best fit without keeping any job at its origin is tried too and the
    better placement returned.

    Parameters
    ----------
    problem : LoadSharingProblem
        The grid and its jobs.
    coalition_size : int, optional
        Accepted for a uniform call and ignored (checked to be a positive integer).
    seed : int, optional
        Recorded in the result (nothing is drawn at random).
    backend : {"compiled", "numpy"}
        The compiled best fit or its NumPy twin.

    Returns
    -------
    ShareResult
        The placement and its throughput.

    Raises
    ------
    ValueError, TypeError
        A bad ``coalition_size``, ``seed`` or ``backend``.

    Examples
    --------
    >>> from coalloc.loadshare import generators, best_fit
    >>> prob = generators.paper_setup(n_nodes=100, seed=1)
    >>> best_fit(prob).throughput >= 0.999 * prob.bound
    True
    """
    t0 = time.perf_counter()
    kern = _kernels(backend)
    if coalition_size is not None:
        integer(coalition_size, "coalition_size", 1)
    seed = check_seed(seed)
    _offer_origins(problem, "bfd", seed, t0, {"backend": backend})
    order = problem.size_order()
    interrupt.check()  # a time limit that passed while the jobs were sorted
    placement = np.empty(problem.n_jobs, dtype=np.int64)
    moved = kern.best_fit_decreasing(problem.capacity, problem.job_size, problem.job_origin,
                                     order, placement, True)  # fmt: skip
    first = (placement.copy(), int(moved))
    offer_incumbent(lambda: _simple(problem, "bfd", first[0].copy(), t0, seed,
                                    {"backend": backend},
                                    iterations={"jobs_moved": first[1]}))  # fmt: skip
    if throughput_of(problem, placement) < problem.bound * (1 - 1e-12):
        other = np.empty(problem.n_jobs, dtype=np.int64)
        moved2 = kern.best_fit_decreasing(problem.capacity, problem.job_size,
                                          problem.job_origin, order, other, False)  # fmt: skip
        if throughput_of(problem, other) > throughput_of(problem, placement):
            placement, moved = other, moved2
    return _simple(problem, "bfd", placement, t0, seed, {"backend": backend},
                   iterations={"jobs_moved": int(moved)})  # fmt: skip
