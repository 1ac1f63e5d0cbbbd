"""``coalloc.solve``: one entry point for every allocation method."""

from __future__ import annotations

import functools
import time
from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared import interrupt
from .._shared.constraints import check_value, validate
from .._shared.family import FamilyInstance, renamed_keyword
from .._shared.params import check_method, timed_method
from .._shared.result import settle
from .._shared.seeding import resolve_seed
from .anytime import ctaap_method
from .bounds import BoundStopped, best_bound
from .constraints import PARAMS, SOLVE_PARAMS
from .exact import solve_exact
from .greedy import solve_greedy
from .model import Offer, Request, check_compatible
from .result import SolveResult, stopped_result
from .verify import VerifyReport, verify

__all__ = ["solve", "METHODS", "DEFAULT_METHOD", "Instance"]


#: ``_timed(func, name)``: a method taking ``time_limit`` (the shared wrapper).
_timed = functools.partial(timed_method, stopped=stopped_result)


#: Registered methods: name -> function(request, offer, *, seed, **params).
METHODS: Dict[str, Callable[..., SolveResult]] = {
    # without time_limit/rounds: solve_ctaap, today's answer; with them, the anytime search
    "ctaap": ctaap_method,
    "greedy": _timed(solve_greedy, "greedy"),
    # solver="highs"|"cbc"|"cpsat"; backend= is its deprecated name
    "exact": renamed_keyword(solve_exact, "backend", "solver"),
}
#: The method :func:`solve` uses when none is named.
DEFAULT_METHOD = "ctaap"


def solve(
    request: Request,
    offer: Offer,
    method: str = DEFAULT_METHOD,
    *,
    seed: Optional[int] = 0,
    bound: bool = True,
    bound_effort: float = 1.0,
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
        until ``T``, with a trajectory; without either, the default exactly. With
        ``time_limit`` every method returns its best allocation found so far when the
        limit passes (status ``"time_limit"``, verified like any other).
    seed : int, optional
        Seed of every random choice: the same seed gives the same answer.
    bound : bool, default True
        ``coalloc ctaap solve`` and ``solve-batch`` do the same by default (``--no-bound``:
        False, which saves the bound's time, at most about the solve's own on the paper's
        Fig. 2/3 instances). Compute an upper bound and report it with the gap
        ``relative_gap(n_allocated, bound, sense="max")`` (the one gap formula,
        :func:`coalloc._shared.result.relative_gap`) in ``result.bound`` / ``result.gap``.
        Heuristics get :func:`coalloc.ctaap.bounds.best_bound` (never above the flow bound
        :func:`coalloc.upper_bound`: the clique LP's dual bound on sparse requests, the
        cluster sets' bound on dense ones), its work capped by counts (``bound_effort``),
        so the same call gives the same bound on any machine; with a ``time_limit`` that
        passes before the bound is done, no bound (never one cut by the clock). The anytime
        search (``time_limit`` or ``rounds`` with ``"ctaap"``) reports the bound it
        computed within its budget; exact solvers report their own proven bound capped by
        the flow bound. The status then follows the one rule
        (:func:`coalloc._shared.result.settle`): an allocation that meets the bound is
        ``"optimal"``, whichever method found it.
    bound_effort : float, default 1
        The work of the bound of ``bound=True`` (and of the anytime search's bound):
        ``effort`` of :func:`coalloc.ctaap.bounds.best_bound`. 1 is cheap (on the paper's
        Fig. 2 instances about the solve's own time); 10 or 100 search further for a
        tighter bound at up to that many times the cost.
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
    started = time.perf_counter()
    check_compatible(request, offer)
    check_method(method, METHODS)
    check_value(bound, "bound", SOLVE_PARAMS["bound"])
    bound_effort = float(check_value(bound_effort, "bound_effort", SOLVE_PARAMS["bound_effort"]))
    validate(PARAMS[method], params)
    seed = resolve_seed(seed)  # None: fresh, and the result says which
    func = METHODS[method]
    if method == "ctaap" and (params.get("time_limit") or params.get("rounds")) is not None:
        params.setdefault("bound_effort", bound_effort)  # the anytime search's own bound
    try:
        result = func(request, offer, seed=seed, **params)
    except TypeError as exc:
        if "unexpected keyword argument" in str(exc):
            raise TypeError(f"method {method!r}: {exc}") from None
        raise
    # exact: the solver's proven bound is already capped by the flow bound; the anytime
    # search (a trajectory) reports the bound it computed.
    if bound and method != "exact" and result.trajectory is None and result.has_solution:
        limit = params.get("time_limit")
        stop_at = None if limit is None else started + float(limit)
        try:
            info = _bound_until(request, offer, bound_effort, stop_at, int(result.n_allocated))
        except (BoundStopped, interrupt.DeadlinePassed):  # the time limit passed first: no
            result.params["bound"] = "stopped by the time limit"  # bound rather than a cut one
        else:
            cheap = float(info["bound"])
            result.bound = cheap if result.bound is None else min(float(result.bound), cheap)
            result.params["bound_effort"] = bound_effort
            if info.get("lp_skipped"):  # under the time limit: which bound this is, and why
                result.params["bound"] = (f"{info['lp_skipped']}: not started under the "
                                          f"time limit; the {info.get('kind')} bound without "
                                          "it")  # fmt: skip
    return settle(result)


def _bound_until(request: Request, offer: Offer, effort: float, stop_at: Optional[float],
                 at_least: int) -> dict:  # fmt: skip
    """:func:`best_bound` for :func:`solve`, stopped at the time limit's ``stop_at``.

    Not started when ``stop_at`` has passed (a search that ran to its limit), and run in an
    :func:`coalloc._shared.interrupt.until` scope so that the polls of its first steps (the
    flow bound's tightened capacities, ``interrupt.check()`` per cluster) stop it there
    too: they looked at no ``stop_at`` (issue 36: 0.23 s of a 1,000-task Fig. 2 instance's
    bound ran after a 0.5 s limit had passed). Raises :class:`BoundStopped` or
    :class:`coalloc._shared.interrupt.DeadlinePassed` when stopped.
    """
    if stop_at is None:
        return best_bound(request, offer, effort=effort, at_least=at_least)
    if time.perf_counter() >= stop_at:
        raise BoundStopped
    with interrupt.until(stop_at):
        return best_bound(request, offer, effort=effort, stop_at=stop_at, at_least=at_least)


def _explain(request: Request, offer: Offer, *, time_limit: float) -> Any:
    """The family's "why not" (:func:`coalloc.ctaap.explain.explain_allocation`)."""
    from .explain import explain_allocation

    return explain_allocation(request, offer, time_limit=time_limit)


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
    SOLVE_KEYWORDS = frozenset({"bound", "bound_effort"})  # taken by solve() itself
    PARAMS = PARAMS
    SOLVE_PARAMS = SOLVE_PARAMS
    _solve_function = staticmethod(solve)
    _explain_function = staticmethod(
        lambda request, offer, *, time_limit: _explain(request, offer, time_limit=time_limit)
    )

    def _meets_all(self, result: Any) -> bool:
        """Every task placed (CTAAP answers may leave tasks out)."""
        return bool(result.has_solution and result.n_allocated == self.request.n)

    def _verify_solution(self, result: SolveResult) -> VerifyReport:
        return verify(self.request, self.offer, result.assignment)

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import instance_from_dict

        return instance_from_dict(data, source=source)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = CtaapInstance
