"""``coalloc.collective.solve``: one entry point for every method, and :class:`Instance`.

Demand before supply, as in every family: ``solve(request, pool)`` and
``Instance(request, pool)``. :func:`coallocate` keeps the paper's order (Cankar et al.:
the pool, then the request) as the documented domain alias.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared.constraints import validate
from .._shared.family import FamilyInstance
from .._shared.params import check_keywords, check_method, timed_method
from .._shared.seeding import check_seed
from ._order import demand_first
from .cankar import cankar
from .constraints import PARAMS
from .core import settled
from .exact import brute_force, exact
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult, stopped_result
from .scan import scan
from .verify import CoallocationReport, verify_coallocation

__all__ = ["coallocate", "solve", "METHODS", "DEFAULT_METHOD", "Instance", "verify"]


#: ``_timed(func, name)``: a method taking ``time_limit``, with the one status rule at its
#: exit (the shared wrapper).
_timed = functools.partial(timed_method, stopped=stopped_result, exit=settled)


#: Registered methods: the default ``"scan"``, the paper's ``"cankar"``, ``"exact"`` (shared
#: integer-programming runner) and ``"brute_force"`` (referee for small cases).
METHODS: Dict[str, Callable[..., CoallocationResult]] = {
    "scan": scan,
    "cankar": cankar,
    "exact": exact,  # solver="highs"|"cbc"|"cpsat" (backend=: its deprecated name)
    "brute_force": _timed(brute_force, "brute_force"),
}
#: Keywords a method still takes under an old name (deprecated, hidden from its signature).
_RENAMED = {"exact": {"backend"}}
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
    """Co-allocate ``request`` on ``pool`` with any method of the family (the paper's order).

    The domain name of :func:`solve`, with the paper's argument order (Cankar et al.: the
    pool, then the request); ``coallocate(pool, request)`` and ``solve(request, pool)``
    give the same answer.

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
    check_keywords(METHODS[method], method, set(params) - _RENAMED.get(method, set()))
    validate(PARAMS[method], params)
    return METHODS[method](request, pool, seed=check_seed(seed), **params)


def solve(
    request: CollectiveRequest,
    pool: ResourcePool,
    method: Optional[str] = None,
    *,
    seed: Optional[int] = 0,
    **params: Any,
) -> CoallocationResult:
    """Co-allocate ``request`` on ``pool`` with any method of the family (demand first).

    The family's primary entry point, in the order every family uses (the demand, then
    the supply). It gives the same answer as ``coallocate(pool, request, ...)``, the
    domain name in the paper's order.

    Parameters
    ----------
    request : CollectiveRequest
        The job's request.
    pool : ResourcePool
        The resources and their timetables. The old order ``solve(pool, request)`` (a
        ``ResourcePool`` first) still works, with a :class:`DeprecationWarning`.
    method : str, optional
        ``"scan"`` (default, :data:`DEFAULT_METHOD`), ``"cankar"``, ``"exact"`` or
        ``"brute_force"``; None: the default.
    seed : int, optional
        Seed of every random choice (``"cankar"``); None: fresh entropy.
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
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> result = co.solve(req, pool)
    >>> result.start, result.resources.tolist() == co.coallocate(pool, req).resources.tolist()
    (0.0, True)
    """
    note = " (coallocate(pool, request) keeps the paper's order)"
    request, pool = demand_first(request, pool, "solve", rest="", note=note)
    return coallocate(pool, request, method or DEFAULT_METHOD, seed=seed, **params)


def verify(request: CollectiveRequest, pool: ResourcePool,
           result: CoallocationResult) -> CoallocationReport:  # fmt: skip
    """:func:`verify_coallocation` of a result, checking its claimed utilisation factor.

    Parameters
    ----------
    request : CollectiveRequest
        The request.
    pool : ResourcePool
        The pool the result was computed on (before reserving it). The old order
        ``verify(pool, request, result)`` still works, with a :class:`DeprecationWarning`.
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
    >>> result = co.solve(req, pool)
    >>> report = co.verify(req, pool, result)
    >>> print(report)
    admissible; utilisation factor 0.666667
    >>> report.ok
    True
    """
    request, pool = demand_first(request, pool, "verify", rest=", result")
    return verify_coallocation(request, pool, result.start, result.resources, result.amounts,
                               claimed_utilisation=result.utilisation)  # fmt: skip


def _explain(request: CollectiveRequest, pool: ResourcePool, *, time_limit: float) -> Any:
    """The family's "why not" (:func:`coalloc.collective.explain.explain_request`)."""
    from .explain import explain_request

    return explain_request(pool, request, time_limit=time_limit)


class _Parts(NamedTuple):
    request: CollectiveRequest
    pool: ResourcePool


class CollectiveInstance(FamilyInstance, _Parts):
    """A co-allocation problem as one object: what :func:`coalloc.solve_many` takes.

    Its fields are in the order of :func:`solve`, the demand first. The old order
    ``Instance(pool, request)`` (and a pickle of an instance made before the change) is
    told apart by type and gives the same instance; :meth:`coerce` takes a
    ``(request, pool)`` pair or a ``(pool, request)`` one.

    Parameters
    ----------
    request : CollectiveRequest
        The job's request.
    pool : ResourcePool
        The resources and their timetables.

    Examples
    --------
    >>> import coalloc.collective as co
    >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
    >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
    >>> inst = co.Instance(req, pool)
    >>> result = inst.solve()
    >>> result.start, inst.verify(result).ok
    (0.0, True)
    >>> co.Instance(pool, req) == inst == co.Instance.coerce((pool, req))
    True
    """

    __slots__ = ()

    def __new__(cls, request: CollectiveRequest, pool: ResourcePool) -> CollectiveInstance:
        # The old field order (pool, request), from a caller or an old pickle: swap by type.
        request, pool = demand_first(request, pool)
        return _Parts.__new__(cls, request, pool)

    family = "collective"
    format = "coalloc.collective.instance"
    METHODS = METHODS
    PARAMS = PARAMS
    DEFAULT_METHOD = DEFAULT_METHOD
    SOLUTION_FIELD = "start"  # None: the request was rejected (a report says why)
    _solve_function = staticmethod(solve)
    _explain_function = staticmethod(lambda request, pool, *, time_limit: _explain(
        request, pool, time_limit=time_limit))

    def _verify_solution(self, result: CoallocationResult) -> CoallocationReport:
        return verify(self.request, self.pool, result)

    @staticmethod
    def _fields_from_dict(data: Any, *, source: str) -> tuple:
        from .io import instance_from_dict

        pool, request = instance_from_dict(data, source=source)
        return request, pool

    @classmethod
    def _coerced(cls, obj: Any) -> Optional[FamilyInstance]:
        # A pair in either order: (request, pool) or the old (pool, request), by type.
        if isinstance(obj, (tuple, list)) and len(obj) == 2:
            request, pool = demand_first(obj[0], obj[1])
            if isinstance(request, CollectiveRequest) and isinstance(pool, ResourcePool):
                return cls(request, pool)
        return super()._coerced(obj)


#: The name the family protocol gives every family's instance (``<family>.Instance``).
Instance = CollectiveInstance
