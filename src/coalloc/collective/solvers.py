"""``coalloc.collective.coallocate``: one entry point for every method, and :class:`Instance`."""

from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple, Optional

from .._shared.params import check_keywords, check_method
from .._shared.seeding import check_seed
from .cankar import cankar
from .exact import brute_force, exact
from .model import CollectiveRequest, ResourcePool
from .result import CoallocationResult
from .scan import scan
from .verify import CoallocationReport, verify_coallocation

__all__ = ["coallocate", "solve", "METHODS", "DEFAULT_METHOD", "Instance", "verify"]

#: Registered methods: the default ``"scan"``, the paper's ``"cankar"``, ``"exact"`` (shared
#: integer-programming runner) and ``"brute_force"`` (referee for small cases).
METHODS: Dict[str, Callable[..., CoallocationResult]] = {
    "scan": scan,
    "cankar": cankar,
    "exact": exact,
    "brute_force": brute_force,
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


class Instance(NamedTuple):
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

    pool: ResourcePool
    request: CollectiveRequest

    family = "collective"
    methods = tuple(METHODS)
    format = "coalloc.collective.instance"

    def solve(self, method: Optional[str] = None, *, seed: Optional[int] = 0,
              **params: Any) -> CoallocationResult:  # fmt: skip
        """:func:`coallocate` on this instance (``method=None``: :data:`DEFAULT_METHOD`).

        Parameters
        ----------
        method : str, optional
            A name of :data:`METHODS`; None runs :data:`DEFAULT_METHOD`.
        seed : int or None, default 0
            Seed of every random choice (the family's seed policy).
        **params
            The method's own parameters (see :func:`coallocate`).

        Returns
        -------
        CoallocationResult
            What :func:`coallocate` returns for this instance.

        Examples
        --------
        >>> import coalloc.collective as co
        >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
        >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
        >>> inst = co.Instance(pool, req)
        >>> result = inst.solve()
        >>> result.start, sorted(result.resources.tolist())
        (0.0, [1, 2])
        """
        return coallocate(self.pool, self.request, method or DEFAULT_METHOD, seed=seed, **params)

    def verify(self, result: CoallocationResult) -> CoallocationReport:
        """:func:`verify` of a result; a rejection gives a report that is not ``ok`` and
        names the rejection (so that a batch records it with its reason, not as an error).

        Parameters
        ----------
        result : CoallocationResult
            A result of :meth:`solve` (or of :func:`coallocate`) on this instance.

        Returns
        -------
        CoallocationReport
            The independent verification; ``report.ok`` is True for a valid result.

        Examples
        --------
        >>> import coalloc.collective as co
        >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
        >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
        >>> inst = co.Instance(pool, req)
        >>> inst.verify(inst.solve()).ok
        True
        """
        if result.start is None:
            return CoallocationReport(
                False, [f"no solution (status {result.status!r}): {result.message}"]
            )
        return verify(self.pool, self.request, result)

    @staticmethod
    def check_params(method: Optional[str], params: dict) -> None:
        """Reject an unknown method or parameter names it does not take, before any work.

        Parameters
        ----------
        method : str or None
            A name of :data:`METHODS` (None: :data:`DEFAULT_METHOD`).
        params : dict
            The keyword parameters a batch would pass to :meth:`solve`.

        Raises
        ------
        ValueError
            An unknown method.
        TypeError
            A parameter name the method does not take.

        Examples
        --------
        >>> from coalloc.collective import Instance
        >>> Instance.check_params("scan", {"backend": "numpy"})
        >>> Instance.check_params("scan", {"speed": 3})
        Traceback (most recent call last):
        ...
        TypeError: method ... takes no parameter(s) ['speed']; ...
        """
        method = check_method(method or DEFAULT_METHOD, METHODS)
        check_keywords(METHODS[method], method, set(params))

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>") -> Instance:
        """An instance from a parsed ``coalloc.collective.instance`` file.

        Parameters
        ----------
        data : dict
            The parsed JSON of a ``coalloc.collective.instance`` file.
        source : str, default "<dict>"
            Named in error messages.

        Returns
        -------
        Instance
            The instance the file describes.

        Raises
        ------
        InstanceError
            ``"<source>: <field path>: <what was expected>"`` for a malformed document.

        Examples
        --------
        >>> import coalloc.collective as co
        >>> pool = co.ResourcePool([[4.0, 8.0], [2.0, 2.0], [1.0, 4.0]], ["cores", "ram"])
        >>> req = co.CollectiveRequest(3600, 2, minimum={"cores": 1, "ram": 1}, total={"ram": 6})
        >>> inst = co.Instance(pool, req)
        >>> data = {"format": "coalloc.collective.instance", "version": 1,
        ...         "pool": co.io.pool_to_dict(pool), "request": co.io.request_to_dict(req)}
        >>> same = co.Instance.from_dict(data)
        >>> same.pool.n_nodes, same.request.count
        (3, 2)
        """
        from .io import instance_from_dict

        return cls(*instance_from_dict(data, source=source))


