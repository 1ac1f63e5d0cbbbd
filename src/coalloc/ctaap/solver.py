"""The CTAAP-Solver of Kravtsov et al. (ICCS 2008), section 3.3.

Step 1 (Alg. 1) runs graduated assignment with a slack row and column and the
capacity-aware column normalisation, producing a weight matrix ``X``. Step 2 (Alg. 2) finds
a maximum b-matching of tasks to clusters under constraints (1)-(3) and (5) with those
weights. Step 3 (Alg. 3) counts, for every allocation, the bandwidth-violating pairs it is
part of, removes the worst allocation for good, and returns to step 2 until no pair violates
constraint (4). The result therefore always satisfies (1)-(5).

The hot parts are compiled: step 1 is one ``nogil`` Cython call
(:mod:`coalloc.ctaap._softassign`), step 2 a C++ min-cost-flow matcher that re-matches
incrementally after each removal (:mod:`coalloc.ctaap._bmatching`), and the violation counter is
Cython (:mod:`coalloc.ctaap._violations`), updated incrementally as the matching changes. With
``backend="numpy"`` the same algorithm runs on the plain NumPy/SciPy twins of
:mod:`coalloc.ctaap._reference` (re-matching from scratch and recounting every round, as the
paper describes); the benchmarks compare the two.
"""

from __future__ import annotations

import time
from typing import Any, Optional, Tuple, Union

import numpy as np

from .._shared import interrupt
from .._shared.constraints import checked
from .._shared.params import offer_incumbent
from .._shared.seeding import kernel_seed, resolve_seed
from .model import KernelLinks, Offer, RankedLinks, Request, check_compatible, compatibility
from .result import SolveResult

__all__ = ["solve_ctaap", "COMPATIBILITY_FUNCTIONS", "DEFAULTS"]

#: Edge compatibility functions F(b, b_hat) -> (value if b <= b_hat, value otherwise), applied
#: to request edges only (pairs without a link carry no information). See docs/algorithms.md.
COMPATIBILITY_FUNCTIONS = {
    "signed": (1.0, -1.0),
    "threshold": (1.0, 0.0),
    "penalty": (0.0, -1.0),
}

#: Default parameters (the paper's constants for the annealing schedule).
DEFAULTS = {
    "beta0": 0.5,
    "beta_f": 10.0,
    "beta_r": 1.075,
    "max_outer": 4,
    "max_inner": 30,
    "tol_outer": 1e-2,
    "tol_inner": 1e-2,
    "compat_fn": "penalty",
    "q_scale": "none",
    "matching": "cardinality",
    "init_noise": 1e-3,
    "fill": True,
    "local_search": "auto",
    "backend": "compiled",
}


#: Upper limits of the iteration parameters (a typo such as beta_r=1+1e-12 would otherwise
#: run for ever): the defaults use 41 annealing steps, 4 x 30 inner loops, <= 1000 moves.
MAX_ANNEALING_STEPS = 100_000
MAX_LOOP = 10_000
MAX_LOCAL_SEARCH = 10_000_000


def auto_local_search(n: int) -> int:
    """Local-search iterations of ``local_search="auto"`` for ``n`` tasks.

    ``max(300, min(1000, 5 n))``: 300 up to n = 60, growing to 1000 at n = 200 (measured
    choice, see bench/RESULTS.md).
    """
    return max(300, min(1000, 5 * int(n)))


def _resolve_compat(compat_fn) -> Tuple[float, float]:
    if isinstance(compat_fn, str):
        try:
            return COMPATIBILITY_FUNCTIONS[compat_fn]
        except KeyError:
            raise ValueError(
                f"compat_fn must be one of {sorted(COMPATIBILITY_FUNCTIONS)} or a pair "
                f"(f_ok, f_bad), got {compat_fn!r}"
            ) from None
    try:
        f_ok, f_bad = (float(v) for v in compat_fn)
    except (TypeError, ValueError):
        raise TypeError("compat_fn must be a name or a pair of numbers (f_ok, f_bad)") from None
    if not (np.isfinite(f_ok) and np.isfinite(f_bad)):
        raise ValueError("compat_fn values must be finite")
    return f_ok, f_bad


def _resolve_scale(q_scale, request: Request) -> float:
    if isinstance(q_scale, str):
        if q_scale == "none":
            return 1.0
        if q_scale == "degree":
            deg = np.diff(request.bandwidth.indptr)
            if not request.symmetric:
                deg = deg + np.diff(request.bandwidth_transpose.indptr)
            return float(max(1, deg.max(initial=0)))
        raise ValueError(f"q_scale must be 'none', 'degree' or a positive number, got {q_scale!r}")
    value = float(q_scale)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"q_scale must be positive and finite, got {q_scale!r}")
    return value


def annealing_steps(beta0: float, beta_f: float, beta_r: float) -> float:
    """The number of annealing steps of the schedule ``beta0 -> beta_f`` by ``beta_r``."""
    return max(0.0, float(np.log(beta_f / beta0) / np.log(beta_r)))


@checked("coalloc.ctaap.constraints", "ctaap")
def solve_ctaap(
    request: Request,
    offer: Offer,
    *,
    seed: Optional[int] = 0,
    beta0: float = DEFAULTS["beta0"],
    beta_f: float = DEFAULTS["beta_f"],
    beta_r: float = DEFAULTS["beta_r"],
    max_outer: int = DEFAULTS["max_outer"],
    max_inner: int = DEFAULTS["max_inner"],
    tol_outer: float = DEFAULTS["tol_outer"],
    tol_inner: float = DEFAULTS["tol_inner"],
    compat_fn: Union[str, Tuple[float, float]] = DEFAULTS["compat_fn"],
    q_scale: Union[str, float] = DEFAULTS["q_scale"],
    matching: str = DEFAULTS["matching"],
    init_noise: float = DEFAULTS["init_noise"],
    fill: bool = DEFAULTS["fill"],
    local_search: Union[int, str] = DEFAULTS["local_search"],
    backend: str = DEFAULTS["backend"],
    paper: bool = False,
) -> SolveResult:
    """Allocate a request onto an offer with the CTAAP-Solver.

    Parameters
    ----------
    request : Request
    offer : Offer
    seed : int, optional
        Seeds the ``1 + eps`` start of step 1 (the only random choice).
    beta0, beta_f, beta_r : float
        Annealing schedule of step 1: start, final value, growth factor (paper: 0.5, 10,
        1.075).
    max_outer, max_inner : int
        ``I0`` and ``I1`` of Alg. 1: iterations of the update of ``X`` per ``beta`` and of the
        row/column normalisation (paper: 4, 30).
    tol_outer, tol_inner : float
        Convergence thresholds (maximum absolute change of ``X``) that end those loops
        early, as Alg. 1 says (default 1e-2 each); 0 always runs every iteration.
    compat_fn : str or (float, float)
        Edge compatibility ``F`` (applied to request links): ``"penalty"`` (0 if the link
        fits the offer pair, -1 if not; the default, best measured), ``"signed"`` (+1 / -1),
        ``"threshold"`` (+1 / 0), or a custom pair ``(f_ok, f_bad)``.
    q_scale : "none", "degree" or float
        Divide ``Q`` by this before ``exp``: ``"none"`` (default) is the paper's unscaled
        ``Q``; ``"degree"`` uses the largest task degree so that ``Q`` lies in [-1, 1].
    matching : {"cardinality", "weight"}
        Step 2 objective: maximum cardinality, then maximum weight (default), or plain
        maximum weight.
    init_noise : float
        ``eps`` of the start ``X = 1 + eps * U(0, 1)``.
    fill : bool, default True
        After the cleanup loop, place every unallocated task that fits somewhere without
        any violation (tasks by decreasing best step-1 weight, clusters by decreasing
        weight). Never shrinks the allocation; ``False`` is the paper's algorithm exactly.
    local_search : int or "auto", default "auto"
        Iterations of the iterated local search run after step 3 and the fill (ARW-style
        (0,1) insertions, (1,2) swaps and perturbations, ordered by the step-1 weights,
        seeded from ``seed``; it stops early once the allocation meets a capacity bound);
        0 turns it off. ``"auto"`` runs ``max(300, min(1000, 5 n))`` iterations: 300 at
        the paper's n = 50, where it reaches 0.997 of the optimum and the exact optimum in
        90-100 % of the Fig. 2 instances per range factor, and 1000 from n = 200, where it
        matches or beats CP-SAT's 60 s solution in well under 1 % of the time
        (bench/RESULTS.md). It never shrinks a feasible allocation.
    backend : {"compiled", "numpy"}
        Compiled kernels (default) or the plain NumPy twins of the same algorithm.
    paper : bool, default False
        Run the paper's algorithm exactly: forces ``fill=False`` and ``local_search=0``
        (steps 1-3 only), whatever those two arguments say. For benchmarks that show
        the paper's algorithm beside the default.

    Returns
    -------
    SolveResult
        With ``weights`` (step-1 ``X``), per-step ``timings`` and ``iterations``, and
        ``n_removals`` (step-3 removals).

    Raises
    ------
    TypeError, ValueError
        Incompatible models or a bad parameter (the message names it).

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> result = ct.solve_ctaap(request, offer, seed=0)
    >>> result.assignment.tolist(), result.n_allocated
    ([-1, 1, 1], 2)
    >>> ct.solve_ctaap(request, offer, seed=0, paper=True).n_allocated
    2
    """
    check_compatible(request, offer)
    if paper:
        fill, local_search = False, 0
    if isinstance(local_search, str) and local_search == "auto":
        local_search = auto_local_search(request.n)
    params = dict(
        beta0=float(beta0),
        beta_f=float(beta_f),
        beta_r=float(beta_r),
        max_outer=max_outer,
        max_inner=max_inner,
        tol_outer=float(tol_outer),
        tol_inner=float(tol_inner),
        compat_fn=compat_fn if isinstance(compat_fn, str) else list(compat_fn),
        q_scale=q_scale,
        matching=matching,
        init_noise=float(init_noise),
        fill=bool(fill),
        local_search=local_search,
        backend=backend,
        paper=bool(paper),
    )
    f_ok, f_bad = _resolve_compat(compat_fn)
    scale = _resolve_scale(q_scale, request)
    kernels = _kernels(backend)

    t_start = time.perf_counter()
    n, m = request.n, offer.m
    compat = compatibility(request, offer)
    links = (request.bandwidth, request.bandwidth_transpose)  # B and B.T (built once)
    bhat = offer.bandwidth
    symmetric = request.symmetric and np.array_equal(bhat, bhat.T)
    # The deadline between the unpolled set-up steps (a new request's transpose, the edge
    # ranks: 20-30 ms each on a million links, several times that under load)
    interrupt.check()

    # Step 1: graduated assignment.
    rng = np.random.default_rng(seed := resolve_seed(seed))
    X = 1.0 + params["init_noise"] * rng.random((n + 1, m + 1))
    plan = _step1_plan(params, symmetric=symmetric, f_ok=f_ok, f_bad=f_bad, q_scale=scale)
    beta_steps, q_evals, sinkhorn_iters = _graduated(links, offer, compat, kernels, X, plan)
    weights = np.ascontiguousarray(X[:n, :m])
    t_step1 = time.perf_counter()

    # Steps 2 and 3, the fill and the local search.
    so_far = _SoFar(t_start=t_start, seed=seed, params=params, weights=weights)
    assign, n_removals, n_filled, stats, search_stats, times = _steps_after_graduated(
        request, offer, compat, kernels, weights, rng, so_far
    )
    t_end = time.perf_counter()

    n_alloc = int((assign >= 0).sum())
    return SolveResult(
        assignment=assign,
        n_allocated=n_alloc,
        status="feasible",
        message=_message(n_alloc, n, n_removals, n_filled, bool(params["local_search"])),
        method="ctaap",
        timings={"step1": t_step1 - t_start, **times, "total": t_end - t_start},
        iterations={
            "beta_steps": int(beta_steps),
            "q_evaluations": int(q_evals),
            "sinkhorn_iterations": int(sinkhorn_iters),
            "cleanup_rounds": int(n_removals),
            "filled": int(n_filled),
            **{f"search_{k}": int(v) for k, v in search_stats.items()},
            **stats,
        },
        n_removals=int(n_removals),
        seed=seed,
        params=params,
        weights=weights,
        objective=float(n_alloc),
    )


def _steps_after_graduated(request: Request, offer: Offer, compat: np.ndarray, kernels: Any,
                           weights: np.ndarray, rng: np.random.Generator,
                           so_far: _SoFar) -> tuple:  # fmt: skip
    """Steps 2 and 3 (the b-matching, then the cleanup until no pair violates constraint
    (4)), the fill and the local search as ``so_far.params`` ask, on the step-1
    ``weights``; each step's allocation is offered as the incumbent a stop returns.
    Returns ``(assign, n_removals, n_filled, stats, search_stats, timings)``, ``timings``
    those of ``step2``, ``step3``, ``fill`` and ``local_search``."""
    params = so_far.params
    assign, n_removals, stats, t2, t3 = kernels.match_and_clean(
        request, offer, weights, compat, params["matching"] == "cardinality"
    )
    so_far.offer(assign, n_removals, "after the matching and cleanup")
    t_fill = time.perf_counter()
    n_filled = 0
    if params["fill"]:
        task_order = np.argsort(-weights.max(axis=1, initial=0.0), kind="stable")
        cluster_order = np.argsort(-weights, axis=1, kind="stable")
        assign, n_filled = kernels.fill_free(
            request, offer, compat, task_order, cluster_order, assign
        )
        so_far.offer(assign, n_removals, "after the fill, before the local search")
    t_search = time.perf_counter()
    search_stats = {}
    if params["local_search"] > 0:
        # the kernel first builds its instance and runs a first descent (about 90 ms on
        # 1,000 tasks under load) before its first poll: a deadline already passed stops
        # the call here, not that much later (issue 36)
        interrupt.check()
        search_stats = kernels.improve(
            request, offer, compat, assign, int(params["local_search"]),
            kernel_seed(rng, bits=63), weights,
        )  # fmt: skip
    t_end = time.perf_counter()
    timings = {"step2": t2, "step3": t3, "fill": t_search - t_fill,
               "local_search": t_end - t_search}  # fmt: skip
    return assign, n_removals, n_filled, stats, search_stats, timings


def _step1_plan(params: dict, *, symmetric: bool, f_ok: float, f_bad: float,
                q_scale: float) -> dict:  # fmt: skip
    """The step-1 kernel's scalars (``coalloc/ctaap/softassign_plan.h``): the schedule and
    tolerances of ``params``, the compatibility values and the scale of ``Q``."""
    return {
        "symmetric": bool(symmetric), "f_ok": f_ok, "f_bad": f_bad, "q_scale": q_scale,
        "beta0": params["beta0"], "beta_f": params["beta_f"], "beta_r": params["beta_r"],
        "max_outer": int(params["max_outer"]), "max_inner": int(params["max_inner"]),
        "tol_outer": params["tol_outer"], "tol_inner": params["tol_inner"],
    }  # fmt: skip


def _message(n_alloc: int, n: int, n_removals: int, n_filled: int, searched: bool) -> str:
    """The result's message: what was allocated, and by which steps."""
    return (f"allocated {n_alloc} of {n} tasks after {n_removals} cleanup removals"
            f", {n_filled} filled in" + (" and local search" if searched else "")
            + "; all constraints hold")  # fmt: skip


def _graduated(links: tuple, offer: Offer, compat: np.ndarray, kernels: Any, X: np.ndarray,
               plan: dict) -> tuple:  # fmt: skip
    """Step 1, the graduated assignment, on ``X`` in place: the ranks of the links
    (``links``: the request's ``B`` and ``B.T``) among the offer's bandwidths (of ``B.T``
    too unless ``plan["symmetric"]``), then the kernel. Returns ``(beta_steps,
    q_evaluations, sinkhorn_iterations)``."""
    B, BT = links
    bhat = offer.bandwidth
    rank, order = kernels.edge_ranks(B.indptr, B.indices, B.data, bhat)
    if plan["symmetric"]:
        t_rank, t_order = rank, order
    else:
        interrupt.check()
        t_rank, t_order = kernels.edge_ranks(
            BT.indptr, BT.indices, BT.data, np.ascontiguousarray(bhat.T)
        )
    interrupt.check()
    ranked = RankedLinks(B.indptr, B.indices, rank, order, BT.indptr, BT.indices, t_rank,
                         t_order)  # fmt: skip
    return kernels.graduated_assignment(ranked, compat.view(np.uint8), offer.capacity, X, plan)


class _SoFar:
    """What a stopped solve answers with (under a time limit, the allocation so far): the
    solve's start, seed, parameters and step-1 weights, the same at every offer (slots, not
    a frozen dataclass: it is built at every solve, and a frozen one costs microseconds)."""

    __slots__ = ("t_start", "seed", "params", "weights")

    def __init__(self, *, t_start: float, seed: Any, params: dict, weights: np.ndarray) -> None:
        self.t_start, self.seed, self.params, self.weights = t_start, seed, params, weights

    def offer(self, assign: np.ndarray, n_removals: int, phase: str) -> None:
        """Offer a copy of ``assign`` (after ``phase``) as the incumbent a stop returns."""
        snapshot, removals, n = assign.copy(), int(n_removals), assign.shape[0]

        def build() -> SolveResult:
            got = int((snapshot >= 0).sum())
            return SolveResult(
                assignment=snapshot.copy(), n_allocated=got, status="feasible",
                message=f"allocated {got} of {n} tasks ({phase}); all constraints hold",
                method="ctaap", timings={"total": time.perf_counter() - self.t_start},
                n_removals=removals, seed=self.seed, params=dict(self.params),
                weights=self.weights, objective=float(got),
            )  # fmt: skip

        offer_incumbent(build)


def _links(request: Request) -> KernelLinks:
    """The request's links as the kernels take them: one record, the CSR of B and of B.T
    (the cleanup and local-search kernels; step 1 takes ranks of its own)."""
    return KernelLinks.of(request)


class _Compiled:
    """Steps 1-3 on the compiled kernels: one call for step 1, one for steps 2-3."""

    @staticmethod
    def edge_ranks(indptr, indices, data, bhat):
        from ._softassign import edge_ranks

        return edge_ranks(indptr, indices, data, bhat, interrupt.kernel_deadline())

    @staticmethod
    def graduated_assignment(*args):
        from ._softassign import graduated_assignment

        return graduated_assignment(*args, interrupt.kernel_deadline())

    @staticmethod
    def match_and_clean(request, offer, weights, compat, cardinality_first):
        from ._cleanup import match_and_clean

        assign = np.empty(request.n, dtype=np.int64)
        removals, augmentations, cycles, t_match, t_count = match_and_clean(
            _links(request), offer.bandwidth, weights, compat.view(np.uint8),
            offer.capacity, cardinality_first, assign, interrupt.kernel_deadline(),
        )  # fmt: skip
        stats = {"augmentations": int(augmentations), "cycle_cancellations": int(cycles)}
        return assign, removals, stats, t_match, t_count

    @staticmethod
    def fill_free(request, offer, compat, task_order, cluster_order, assign):
        from ._cleanup import fill_free

        added = fill_free(
            _links(request), offer.bandwidth,
            compat.view(np.uint8), offer.capacity, task_order, cluster_order, assign,
        )  # fmt: skip
        return assign, added

    @staticmethod
    def improve(request, offer, compat, assign, iters, seed, priority):
        from ._localsearch import improve

        return improve(
            _links(request), offer.bandwidth,
            compat.view(np.uint8), offer.capacity, assign, iters, seed, priority,
            deadline=interrupt.kernel_deadline(),
        )  # fmt: skip


class _NumPy:
    """Steps 1-3 on the plain NumPy twins, re-solving and recounting every round."""

    @staticmethod
    def edge_ranks(indptr, indices, data, bhat):
        from ._reference.softassign import edge_ranks_reference

        return edge_ranks_reference(indptr, indices, data, bhat, interrupt.kernel_deadline())

    @staticmethod
    def graduated_assignment(*args):
        from ._reference.softassign import graduated_assignment_reference

        X = args[3]  # (links, compat, capacity, X, plan)
        out_X, *counters = graduated_assignment_reference(*args)
        X[...] = out_X
        return tuple(counters)

    @staticmethod
    def match_and_clean(request, offer, weights, compat, cardinality_first):
        from ._reference.matching import b_matching_reference
        from ._reference.violations import violation_counts_reference

        allowed = compat.copy()
        t_match = t_count = 0.0
        removals = 0
        while True:
            interrupt.check()  # a batch's timeout or cancellation
            t0 = time.perf_counter()
            assign = b_matching_reference(weights, allowed, offer.capacity, cardinality_first)
            t1 = time.perf_counter()
            B = request.bandwidth
            total, counts = violation_counts_reference(
                B.indptr, B.indices, B.data, offer.bandwidth, assign
            )
            t2 = time.perf_counter()
            t_match += t1 - t0
            t_count += t2 - t1
            if total == 0:
                return assign, removals, {"matchings": removals + 1}, t_match, t_count
            worst = int(np.argmax(counts))
            allowed[worst, assign[worst]] = False
            removals += 1

    @staticmethod
    def fill_free(request, offer, compat, task_order, cluster_order, assign):
        from ._reference.cleanup import fill_free_reference

        return fill_free_reference(
            _links(request), offer.bandwidth,
            compat, offer.capacity, task_order, cluster_order, assign,
        )  # fmt: skip

    @staticmethod
    def improve(request, offer, compat, assign, iters, seed, priority):
        from ._reference.localsearch import improve_reference

        return improve_reference(
            _links(request), offer.bandwidth,
            compat, offer.capacity, assign, iters, seed, priority,
        )  # fmt: skip


def _kernels(backend: str):
    return _Compiled if backend == "compiled" else _NumPy
