"""First-fit greedy baseline that honours every constraint.

Tasks are taken in an order (their index, a seeded random permutation, or by decreasing
degree) and each is placed on the first cluster, by index, where it fits: its properties fit
the machines, the cluster has a free machine, and every bandwidth to an already placed task
fits the bandwidth between the two clusters in both directions. A task that fits nowhere is
left unallocated. With ``restarts > 1`` further runs use random orders and the largest
allocation is kept.
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared.constraints import checked
from .._shared.docs import filled
from .._shared.params import offer_incumbent
from .._shared.seeding import resolve_seed
from .model import Offer, Request, check_compatible, compatibility
from .result import SolveResult

__all__ = ["solve_greedy", "first_fit"]

ORDERS = ("index", "random", "degree")


@filled
def first_fit(request: Request, offer: Offer, order: np.ndarray, on_progress=None) -> np.ndarray:
    """Place tasks first-fit in the given order.

    Parameters
    ----------
    %(ctaap_pair)s
    order : ndarray of int
        Permutation of the task indices.
    on_progress : callable, optional
        Called with the allocation so far (a valid one: the first tasks of ``order``
        placed first-fit) every 256 tasks, and when a poll of the time limit (every 32
        tasks) stops the placement, before the stop is raised.

    Returns
    -------
    ndarray of int64
        Cluster of each task or -1.
    """
    n = request.n
    fits = compatibility(request, offer)
    B, BT, bhat = request.bandwidth, request.bandwidth_transpose, offer.bandwidth
    assign = np.full(n, -1, dtype=np.int64)
    free = offer.capacity.copy()
    for k, i in enumerate(order.tolist()):
        if not k & 31:  # 32 tasks: 3-6 ms on 5,000 Fig. 3 tasks (256 overran a 0.05 s limit)
            if on_progress is not None and k and not k & 255:
                on_progress(assign)
            try:
                interrupt.check()  # the time limit, a batch's timeout or cancellation
            except BaseException:
                if on_progress is not None and k:
                    on_progress(assign)  # what the stop returns: the allocation so far
                raise
        cand = fits[i] & (free > 0)
        if not cand.any():
            continue
        lo, hi = B.indptr[i], B.indptr[i + 1]
        nb = assign[B.indices[lo:hi]]
        placed = nb >= 0
        if placed.any():  # out-edges (i, k): B[i, k] <= bhat[j, a_k]
            cand &= np.all(bhat[:, nb[placed]] >= B.data[lo:hi][placed], axis=1)
        lo, hi = BT.indptr[i], BT.indptr[i + 1]
        nb = assign[BT.indices[lo:hi]]
        placed = nb >= 0
        if placed.any():  # in-edges (k, i): B[k, i] <= bhat[a_k, j]
            cand &= np.all(bhat[nb[placed], :].T >= BT.data[lo:hi][placed], axis=1)
        hits = np.flatnonzero(cand)
        if hits.size:
            assign[i] = hits[0]
            free[hits[0]] -= 1
    return assign


@filled
@checked("coalloc.ctaap.constraints", "greedy")
def solve_greedy(
    request: Request,
    offer: Offer,
    *,
    seed: Optional[int] = 0,
    order: str = "index",
    restarts: int = 1,
) -> SolveResult:
    """First-fit greedy allocation (the baseline).

    Parameters
    ----------
    %(ctaap_pair)s
    seed : int, optional
        Seeds the random orders.
    order : {"index", "random", "degree"}
        Order of the first run: task index, a random permutation, or decreasing number of
        links (most constrained first).
    restarts : int, default 1
        Number of runs; runs after the first use random orders. The largest allocation wins
        (the earliest on ties).

    Returns
    -------
    SolveResult
        The largest allocation found, ``method="greedy"``.

    Raises
    ------
    TypeError, ValueError
        Incompatible models or a bad parameter (the message names it).

    Examples
    --------
    >>> import coalloc.ctaap as ct
    >>> request = ct.Request({"cpu": [10, 20, 30]}, bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]])
    >>> offer = ct.Offer({"cpu": [25, 40]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    >>> result = ct.solve_greedy(request, offer)
    >>> result.assignment.tolist(), result.n_allocated
    ([0, -1, 1], 2)
    """
    check_compatible(request, offer)
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed := resolve_seed(seed))
    n = request.n
    if order == "index":
        first = np.arange(n)
    elif order == "random":
        first = rng.permutation(n)
    else:
        deg = np.diff(request.bandwidth.indptr) + np.diff(request.bandwidth_transpose.indptr)
        first = np.argsort(-deg, kind="stable")
    best = None
    n_best = -1
    offered = [-1]  # size of the allocation last offered

    def keep(assign: np.ndarray) -> None:
        """Under a time limit, the largest allocation so far is what a stop returns."""
        got = int((assign >= 0).sum())
        if got > offered[0]:
            offered[0] = got
            snapshot = assign.copy()
            offer_incumbent(lambda: _result(snapshot, n, seed, order, restarts, t0))

    for run in range(int(restarts)):
        cand = first_fit(request, offer, first if run == 0 else rng.permutation(n), keep)
        if (cand >= 0).sum() > n_best:
            best, n_best = cand, int((cand >= 0).sum())
            keep(best)
    return _result(best, n, seed, order, restarts, t0)


def _result(best, n, seed, order, restarts, t0) -> SolveResult:
    n_alloc = int((best >= 0).sum())
    return SolveResult(
        assignment=best,
        n_allocated=n_alloc,
        status="feasible",
        message=f"first-fit allocated {n_alloc} of {n} tasks",
        method="greedy",
        timings={"total": time.perf_counter() - t0},
        iterations={"restarts": int(restarts)},
        seed=seed,
        params={"order": order, "restarts": int(restarts)},
        objective=float(n_alloc),
    )
