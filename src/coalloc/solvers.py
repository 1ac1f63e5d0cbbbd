"""``coalloc.solve``: one entry point for every allocation method."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import numpy as np

from .ctaap import solve_ctaap
from .exact import solve_exact, upper_bound
from .greedy import solve_greedy
from .model import Offer, Request, check_compatible
from .result import SolveResult

__all__ = ["solve", "METHODS"]

#: Registered methods: name -> function(request, offer, *, seed, **params).
METHODS: Dict[str, Callable[..., SolveResult]] = {
    "ctaap": solve_ctaap,
    "greedy": solve_greedy,
    "exact": solve_exact,
}


def solve(
    request: Request,
    offer: Offer,
    method: str = "ctaap",
    *,
    seed: Optional[int] = 0,
    bound: bool = False,
    **params: Any,
) -> SolveResult:
    """Allocate the tasks of ``request`` onto the clusters of ``offer``.

    Parameters
    ----------
    request : Request
        The request graph (tasks, minimum properties, bandwidth needs).
    offer : Offer
        The offer graph (clusters, machine properties, capacities, bandwidths).
    method : str, default "ctaap"
        ``"ctaap"``: the CTAAP-Solver of Kravtsov et al. (see
        :func:`coalloc.ctaap.solve_ctaap` for its parameters); ``"greedy"``: first-fit
        baseline (:func:`coalloc.greedy.solve_greedy`); ``"exact"``: the integer program,
        solved by HiGHS, CBC or CP-SAT (:func:`coalloc.exact.solve_exact`: ``backend``,
        ``time_limit``, ``formulation``, ...).
    seed : int, optional
        Seed of every random choice: the same seed gives the same answer.
    bound : bool, default False
        Also compute the cheap upper bound of :func:`coalloc.upper_bound` (a b-matching
        that ignores the bandwidth between clusters) and report it with the gap
        ``(bound - n_allocated) / max(1, bound)`` in ``result.bound`` / ``result.gap``
        (exact solvers report their own proven bound, which is never weaker).
    **params
        Method-specific parameters.

    Returns
    -------
    SolveResult
        The allocation (``assignment``, ``n_allocated``), ``status``, ``message``, timings
        and iteration counts. Every allocation returned satisfies constraints (1)-(5).

    Examples
    --------
    >>> import coalloc
    >>> req, off = coalloc.generators.fig2(range_factor=3, seed=1)
    >>> res = coalloc.solve(req, off, seed=0)
    >>> coalloc.verify(req, off, res.assignment).feasible
    True
    """
    check_compatible(request, offer)
    if not isinstance(method, str) or method not in METHODS:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    if isinstance(seed, np.integer):
        seed = int(seed)
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
    func = METHODS[method]
    try:
        result = func(request, offer, seed=seed, **params)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise TypeError(f"method {method!r}: {exc}") from None
        raise
    if bound:
        cheap = upper_bound(request, offer)
        result.bound = float(cheap if result.bound is None else min(result.bound, cheap))
        result.gap = (result.bound - result.n_allocated) / max(1.0, result.bound)
    return result
