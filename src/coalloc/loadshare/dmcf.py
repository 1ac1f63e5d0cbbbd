"""DMCF-GGA (Hovey & Jung, section 3.2): coalitions, Phase I and Phase II.

Phase I evolves one chromosome (the coalition id of every node-agent) by conditional
migration (Algorithm 3) against the coalition snapshot the cm-agents exchanged at the end of
the previous generation; Phase II shares the jobs inside every coalition by first fit. The
fitness of a generation is the total first-fit throughput; the best coalition structure is
kept, and the run stops after ``patience`` (100) generations without an increase.

The baselines of section 4.2.3 (``fcfs``, ``fcfs-ff``, ``round-robin``) and the default's
best fit decreasing are in :mod:`coalloc.loadshare.baselines`; they share this module's
coalitions and first fit.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import time
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .._shared import interrupt
from .._shared.constraints import checked
from .._shared.params import check_backend, integer, offer_incumbent
from .._shared.progress import progress as _progress
from .._shared.seeding import kernel_seed, resolve_seed
from . import _dmcf
from ._reference import dmcf as _twin
from .model import LoadSharingProblem, throughput_of
from .result import ShareResult, offer_origins, share_gap

__all__ = [
    "dmcf_gga",
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


@checked("coalloc.loadshare.constraints", "initial_coalitions", tables="FUNCTIONS")
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
    nc = _n_coalitions(problem, coalition_size)  # the values were checked by the table
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
        coal[order] = k // int(coalition_size)
    else:
        coal[order] = k * nc // n
    return coal


@checked("coalloc.loadshare.constraints", "dmcf.job_order", tables="FUNCTIONS")
def job_order(problem: LoadSharingProblem, phase2: str = "ff") -> np.ndarray:
    """The order jobs are offered to first fit: arrival (``"ff"``) or decreasing size
    (``"ffd"``, ties in arrival order); ``phase2`` is checked by its table."""
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
        np.ones(nc, dtype=np.uint8), placement, tp, interrupt.kernel_deadline(),
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
                                       np.ones(k, dtype=np.uint8), placement, tp,
                                       interrupt.kernel_deadline())  # fmt: skip
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
                coal, p.capacity, p.job_size, p.job_origin, self.order, dirty, placement, tp,
                interrupt.kernel_deadline(),
            )  # fmt: skip
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


@checked("coalloc.loadshare.constraints", "dmcf-gga")
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
    # the values were checked by the table (@checked); these only fix their types
    th_i = None if th_i is None else float(th_i)
    settings = _Settings(
        coalition_size=int(coalition_size), p=float(p), th_c=float(th_c), th_i=th_i,
        patience=int(patience), max_generations=int(max_generations), init=init,
        phase2=phase2, backend=backend, executor=executor, chunks=int(chunks),
        every=int(coalition_history), seed=seed, t0=t0, nc=nc,
    )  # fmt: skip
    # every job at its origin: the answer of a limit that passes before the first Phase II
    # (the jobs' size order, sorted below, stops at the deadline)
    offer_origins(problem, "dmcf-gga", seed, t0)
    gga = _GGA(problem, settings)
    # A time limit that stops Phase I gets Phase II on the best structure so far
    # (``finish`` reads ``best_coal`` and ``best_place`` when the limit calls it: they are
    # only ever replaced by better ones).
    offer_incumbent(lambda: gga.finish(stopped=True))
    bar = _progress(total=settings.max_generations, desc="dmcf-gga", unit="gen",
                    disable=not progress)  # fmt: skip
    try:
        gga.generations(bar)
    finally:
        bar.close()
    return gga.finish()


@dataclass(frozen=True, kw_only=True)
class _Settings:
    """The checked parameters of one :func:`dmcf_gga` call, its seed, start and number of
    coalitions ``nc``."""

    coalition_size: int
    p: float
    th_c: float
    th_i: Optional[float]
    patience: int
    max_generations: int
    init: str
    phase2: str
    backend: str
    executor: Optional[cf.Executor]
    chunks: int
    every: int
    seed: int
    t0: float
    nc: int

    def params(self) -> dict:
        """The result's ``params``."""
        return {"coalition_size": self.coalition_size, "p": self.p, "th_c": self.th_c,
                "th_i": self.th_i, "patience": self.patience,
                "max_generations": self.max_generations, "init": self.init,
                "phase2": self.phase2, "backend": self.backend,
                "executor": self.executor is not None}  # fmt: skip


class _GGA:
    """One DMCF-GGA run: the initialisation (Algorithm 2 and the first Phase II) when made,
    then :meth:`generations` (Phase I) and :meth:`finish` (Phase II and the result).

    The attributes :meth:`finish` reads (the best structure and its placement, the counters)
    are kept current at every generation, so a time limit that stops Phase I and calls
    ``finish(stopped=True)`` reports where the run stood.
    """

    def __init__(self, problem: LoadSharingProblem, s: _Settings) -> None:
        self.problem, self.s = problem, s
        nc, n = s.nc, problem.n_nodes
        self.kern = _kernels(s.backend)
        # ---- DistributedInitializeSystem (Algorithm 2): the arrival cutoff
        if s.th_i is None:
            self.shared = np.ones(problem.n_jobs, dtype=bool)
        else:
            self.shared = _cutoff(problem, s.th_i)
        if self.shared.all():
            sub = problem
        else:
            sub = LoadSharingProblem(problem.capacity, problem.job_size[self.shared],
                                     problem.job_origin[self.shared],
                                     problem.groups)  # fmt: skip
        self.sub = sub
        self.messages = _init_messages(n, problem.n_groups)
        self.rounds = {"Initialize": 6}
        # ---- initial coalition structure
        init_seed = kernel_seed(s.seed, "init", names=STREAMS, bits=32)
        self.coal = initial_coalitions(sub, s.coalition_size, s.init, seed=init_seed)
        interrupt.check()  # a deadline that passed while the coalitions were formed
        self.order = job_order(sub, s.phase2)
        self.sharer = _Sharer(sub, nc, s.backend, s.executor, s.chunks, self.order)
        self.placement = np.empty(sub.n_jobs, dtype=np.int64)
        self.tp = np.zeros(nc)
        self.ff_probes, _ = self.sharer.run(self.coal, np.ones(nc, dtype=np.uint8),
                                            self.placement, self.tp)  # fmt: skip
        self.best = float(self.tp.sum())
        self.best_coal = self.coal.copy()
        self.best_place = self.placement.copy()  # Phase II on best_coal (a time limit's)
        self.history = [self.best]
        self.mig_history = [0]
        self.snapshots = [(0, self.coal.copy())] if s.every else None
        self.migrations = self.attempts = 0
        self.last_gain = 0
        self.g = 0
        for key in PROCEDURES:
            self.messages.setdefault(key, 0)
            self.rounds[key] = 0
        self.t_loop = time.perf_counter()
        self.t_phase1 = 0.0

    def generations(self, bar) -> None:
        """Phase I: generations of conditional migrations (Algorithms 3-4) until
        ``patience`` generations bring no gain or ``max_generations`` have run."""
        s, kern, sub = self.s, self.kern, self.sub
        nc, n = s.nc, self.problem.n_nodes
        node_load = np.ascontiguousarray(sub.load)
        cap = self.problem.capacity
        cap_ref = float(cap.mean())
        kseed = kernel_seed(s.seed, "migrate", names=STREAMS)
        coal, new = self.coal, np.empty(n, dtype=np.int64)
        placement, tp = self.placement, self.tp
        messages, rounds = self.messages, self.rounds
        while self.g < s.max_generations and self.g - self.last_gain < s.patience:
            interrupt.check()  # a batch's timeout or cancellation
            coal_load = np.bincount(coal, weights=node_load, minlength=nc)
            coal_cap = np.bincount(coal, weights=cap, minlength=nc)
            coal_count = np.bincount(coal, minlength=nc).astype(np.int64)
            k = int(np.count_nonzero(coal_count))
            a, moves = kern.migrate(coal, node_load, cap, coal_load, coal_cap, coal_count,
                                    s.p, s.th_c, cap_ref, kseed, self.g, new)  # fmt: skip
            self.attempts += a
            self.migrations += moves
            for key, value in _generation_messages(n, k).items():
                messages[key] += value
                rounds[key] += ROUNDS[key]
            self.g += 1
            bar.update(1)
            if moves:
                changed = new != coal
                dirty = np.zeros(nc, dtype=np.uint8)
                dirty[coal[changed]] = 1
                dirty[new[changed]] = 1
                coal, new = new, coal
                pr, _ = self.sharer.run(coal, dirty, placement, tp)
                self.ff_probes += pr
                total = float(tp.sum())
                if total > self.best * (1 + 1e-12) + 1e-12:
                    self.best = total
                    self.best_coal = coal.copy()
                    self.best_place = placement.copy()
                    self.last_gain = self.g
            self.history.append(self.best)
            self.mig_history.append(self.migrations)
            if s.every and self.g % s.every == 0:
                self.snapshots.append((self.g, coal.copy()))
        self.coal = coal
        self.t_phase1 = time.perf_counter() - self.t_loop
        if s.every and self.snapshots[-1][0] != self.g:
            self.snapshots.append((self.g, coal.copy()))

    def finish(self, stopped: bool = False) -> ShareResult:
        """Phase II on the best coalition structure so far, and the result; ``stopped``
        (a time limit): the placement Phase II gave that structure when it was found (the
        same first fit, already computed), not computed again."""
        s, sub, problem, nc = self.s, self.sub, self.problem, self.s.nc
        best_coal, messages, rounds, g = self.best_coal, self.messages, self.rounds, self.g
        t2 = time.perf_counter()
        if stopped:
            final = self.best_place
            probes_final, moved = 0, int(np.count_nonzero(final != sub.job_origin))
        else:
            final = np.empty(sub.n_jobs, dtype=np.int64)
            ftp = np.zeros(nc)
            probes_final, moved = self.kern.first_fit_all(
                best_coal, problem.capacity, sub.job_size, sub.job_origin, self.order,
                np.ones(nc, dtype=np.uint8), final, ftp,
            )  # fmt: skip
        full = problem.job_origin.copy()
        full[self.shared] = final
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
            message=f"stopped after {g} generations ({g - self.last_gain} without a gain)",
            method="dmcf-gga",
            placement=full,
            throughput=throughput,
            bound=bound,
            seed=s.seed,
            params=s.params(),
            timings={"phase1": self.t_phase1 or t2 - self.t_loop, "phase2": t_end - t2,
                     "total": t_end - s.t0},  # fmt: skip
            iterations={"generations": g, "attempts": self.attempts,
                        "migrations": self.migrations,
                        "ff_probes": int(self.ff_probes + probes_final),
                        "ff_probes_final": int(probes_final), "jobs_moved": int(moved),
                        "jobs_moved_max_coalition": critical,
                        "deferred_jobs": int((~self.shared).sum())},  # fmt: skip
            objective=throughput,
            gap=share_gap(throughput, bound),
            coalition=best_coal,
            migrations=self.migrations,
            generations=g,
            messages=messages,
            rounds=rounds,
            history=np.asarray(self.history),
            migration_history=np.asarray(self.mig_history, dtype=np.int64),
            coalition_history=self.snapshots,
        )


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
