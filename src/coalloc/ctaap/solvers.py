"""``coalloc.solve``: one entry point for every allocation method."""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Mapping, NamedTuple, Optional

import numpy as np

from .._shared.family import FamilyInstance, solver_keyword
from .._shared.params import check_method, with_time_limit
from .._shared.result import relative_gap
from .._shared.seeding import resolve_seed
from .anytime import BOUND_SHARE, ctaap_method
from .bounds import best_bound
from .exact import solve_exact, upper_bound
from .greedy import solve_greedy
from .model import Offer, Request, check_compatible
from .result import SolveResult, stopped_result
from .verify import VerifyReport, verify

__all__ = ["solve", "METHODS", "DEFAULT_METHOD", "Instance"]


def _timed(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``func`` taking ``time_limit`` (it stops at the deadline between iterations)."""
    return with_time_limit(func, functools.partial(stopped_result, method=name))


#: Registered methods: name -> function(request, offer, *, seed, **params).
METHODS: Dict[str, Callable[..., SolveResult]] = {
    # without time_limit/rounds: solve_ctaap, today's answer; with them, the anytime search
    "ctaap": ctaap_method,
    "greedy": _timed(solve_greedy, "greedy"),
    "exact": solver_keyword(solve_exact),  # solver="highs"|"cbc"|"cpsat"
}
#: Seconds the LP bound of ``bound=True`` may take when the call has no time limit.
LP_BOUND_SECONDS = 10.0
#: The method :func:`solve` uses when none is named.
DEFAULT_METHOD = "ctaap"


def solve(
    request: Request,
    offer: Offer,
    method: str = DEFAULT_METHOD,
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
        :func:`coalloc.ctaap.solver.solve_ctaap` for its parameters); ``"greedy"``: first-fit
        baseline (:func:`coalloc.ctaap.greedy.solve_greedy`); ``"exact"``: the integer program,
        solved by HiGHS, CBC or CP-SAT (:func:`coalloc.ctaap.exact.solve_exact`: ``solver``,
        ``time_limit``, ``formulation``, ...; ``backend=`` for the solver is deprecated).
        ``"ctaap"`` with ``time_limit=T`` (or ``rounds=k``) is the anytime search
        (:func:`coalloc.ctaap.anytime.solve_anytime`): the default's answer, improved
        until ``T``, with a trajectory; without either, the default exactly.
    seed : int, optional
        Seed of every random choice: the same seed gives the same answer.
    bound : bool, default False
        Also compute an upper bound and report it with the gap
        ``relative_gap(n_allocated, bound, sense="max")`` (the one gap formula,
        :func:`coalloc._shared.result.relative_gap`) in ``result.bound`` / ``result.gap``.
        Heuristics get :func:`coalloc.ctaap.bounds.best_bound` (never above the flow bound
        :func:`coalloc.upper_bound`: the clique LP's dual bound on sparse requests, the
        cluster sets' bound on dense ones), given ``0.3 * time_limit`` seconds (10 s without
        a limit; a bound stopped early is still valid, and weaker, so then the value depends
        on the machine); the anytime
        search (``time_limit`` or ``rounds`` with ``"ctaap"``) reports the bound it
        computed within its budget; exact solvers report their own proven bound capped by
        the flow bound.
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
    check_method(method, METHODS)
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    func = METHODS[method]
    try:
        result = func(request, offer, seed=seed, **params)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise TypeError(f"method {method!r}: {exc}") from None
        raise
    if bound:
        if method == "exact":  # the solver's proven bound, capped by the flow bound
            cheap = upper_bound(request, offer)
        elif result.trajectory is not None:  # the anytime search's bound (flow or LP)
            cheap = result.bound
        else:  # the LP bound, within its share of the limit (10 s without one)
            limit = params.get("time_limit")
            share = LP_BOUND_SECONDS if limit is None else max(0.05, BOUND_SHARE * limit)
            cheap = best_bound(request, offer, time_limit=share)["bound"]
        result.bound = float(cheap if result.bound is None else min(result.bound, cheap))
        result.gap = relative_gap(result.n_allocated, result.bound, sense="max")
    return result


class _Parts(NamedTuple):
    request: Request
    offer: Offer


class CtaapInstance(FamilyInstance, _Parts):
    """A CTAAP problem as one object: what :func:`coalloc.solve_many` takes for this family.

    A plain ``(request, offer)`` pair (it unpacks as one), with the family protocol's calls
    (:class:`coalloc.FamilyInstance`: ``solve``, ``verify``, ``check_params``,
    ``from_dict``, ``coerce``).

    Parameters
    ----------
    request : Request
        The request graph.
    offer : Offer
        The offer graph.

    Examples
    --------
    >>> import coalloc
    >>> inst = coalloc.ctaap.Instance(*coalloc.ctaap.generators.fig2(2, seed=1))
    >>> inst.verify(inst.solve(seed=0)).feasible
    True
    """

    __slots__ = ()

    family = "ctaap"
    format = "coalloc.instance"
    FORMAT_OPTIONAL = True  # a file without "format" is a CTAAP instance
    METHODS = METHODS
    DEFAULT_METHOD = DEFAULT_METHOD
    SOLUTION_FIELD = "assignment"
    SOLVE_KEYWORDS = frozenset({"bound"})  # taken by solve() itself
    _solve_function = staticmethod(solve)

    def _verify_solution(self, result: SolveResult) -> VerifyReport:
        return verify(self.request, self.offer, result.assignment)

    @classmethod
    def check_params(cls, method: Optional[str], params: Mapping[str, Any]) -> None:
        """Reject an unknown method or parameter names it does not take, before any work.

        Parameters
        ----------
        method : str or None
            A name of :data:`METHODS` (None: :data:`DEFAULT_METHOD`).
        params : mapping
            The keyword parameters a batch would pass to :meth:`solve`.

        Raises
        ------
        ValueError
            An unknown method.
        TypeError
            A parameter name the method does not take, or ``bound`` that is not a bool.

        Examples
        --------
        >>> from coalloc.ctaap import Instance
        >>> Instance.check_params("ctaap", {"compat_fn": "threshold"})
        >>> Instance.check_params("ctaap", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        """
        super().check_params(method, params)
        if "bound" in params and not isinstance(params["bound"], (bool, np.bool_)):
            raise TypeError(f"bound must be a bool, got {type(params['bound']).__name__}")

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import instance_from_dict

        return instance_from_dict(data, source=source)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = CtaapInstance
