"""``coalloc.collective.coallocate``: one entry point for every method, and :class:`Instance`."""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared.family import FamilyInstance, solver_keyword
from .._shared.params import check_keywords, check_method, with_time_limit
from .._shared.seeding import check_seed
from .cankar import cankar
from .exact import brute_force, exact
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult, stopped_result
from .scan import scan
from .verify import CoallocationReport, verify_coallocation

__all__ = ["coallocate", "solve", "METHODS", "DEFAULT_METHOD", "Instance", "verify"]


def _timed(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``func`` taking ``time_limit`` (it stops at the deadline between iterations)."""
    return with_time_limit(func, functools.partial(stopped_result, method=name))


#: Registered methods: the default ``"scan"``, the paper's ``"cankar"``, ``"exact"`` (shared
#: integer-programming runner) and ``"brute_force"`` (referee for small cases).
METHODS: Dict[str, Callable[..., CoallocationResult]] = {
    "scan": scan,
    "cankar": _timed(cankar, "cankar"),
    "exact": solver_keyword(exact),  # solver="highs"|"cbc"|"cpsat"
    "brute_force": _timed(brute_force, "brute_force"),
}
#: The method :func:`coallocate` uses when none is named.
DEFAULT_METHOD = "scan"


def coallocate(
    pool: ResourcePool,
    request: CollectiveRequest,
    method: str = DEFAULT_METHOD,
    *,
    seed: Optional[int] = 0,
    **params: Any,
) -> CoallocationResult:
    """Co-allocate ``request`` on ``pool`` with any method of the family.

    Parameters
    ----------
    pool : ResourcePool
    request : CollectiveRequest
    method : str, default "scan"
        ``"scan"`` (default: exact earliest start, high utilisation, explainable
        rejections), ``"cankar"`` (the paper's Phases I-VI), ``"exact"`` or
        ``"brute_force"``.
    seed : int, optional
        Seed of every random choice (``"cankar"``).
    **params
        Parameters of the method, e.g. ``backend="numpy"``, ``reserve=True``.

    Returns
    -------
    CoallocationResult

    Raises
    ------
    ValueError, TypeError
        On an unknown method or parameter, or a malformed pool or request.

    Examples
    --------
    >>> from coalloc.collective import ResourcePool, CollectiveRequest, coallocate
    >>> pool = ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> coallocate(pool, req).success
    True
    """
    check_method(method, METHODS)
    check_keywords(METHODS[method], method, set(params))
    return METHODS[method](pool, request, seed=check_seed(seed), **params)


#: Alias of :func:`coallocate` (every family has a ``solve``).
solve = coallocate


def verify(pool: ResourcePool, request: CollectiveRequest,
           result: CoallocationResult) -> CoallocationReport:  # fmt: skip
    """:func:`verify_coallocation` of a result, checking its claimed utilisation factor.

    Parameters
    ----------
    pool : ResourcePool
        The pool the result was computed on (before reserving it).
    request : CollectiveRequest
        The request.
    result : CoallocationResult
        A result with a solution (``result.start`` not None).

    Returns
    -------
    CoallocationReport
        Admissibility, violations and the recomputed utilisation factor.

    Examples
    --------
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> result = co.coallocate(pool, req)
    >>> report = co.verify(pool, req, result)
    >>> print(report)
    admissible; utilisation factor 0.666667
    >>> report.ok
    True
    """
    return verify_coallocation(pool, request, result.start, result.resources, result.amounts,
                               claimed_utilisation=result.utilisation)  # fmt: skip


class _Parts(NamedTuple):
    pool: ResourcePool
    request: CollectiveRequest


class CollectiveInstance(FamilyInstance, _Parts):
    """A co-allocation problem as one object: what :func:`coalloc.solve_many` takes.

    Parameters
    ----------
    pool : ResourcePool
        The resources and their timetables.
    request : CollectiveRequest
        The job's request.

    Examples
    --------
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> inst = co.Instance(pool, req)
    >>> result = inst.solve()
    >>> result.start, inst.verify(result).ok
    (0.0, True)
    """

    __slots__ = ()

    family = "collective"
    format = "coalloc.collective.instance"
    METHODS = METHODS
    DEFAULT_METHOD = DEFAULT_METHOD
    SOLUTION_FIELD = "start"  # None: the request was rejected (a report says why)
    _solve_function = staticmethod(coallocate)

    def _verify_solution(self, result: CoallocationResult) -> CoallocationReport:
        return verify(self.pool, self.request, result)

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import instance_from_dict

        return instance_from_dict(data, source=source)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = CollectiveInstance
