"""Collective co-allocation with advance reservations (Cankar et al., J.UCS 2013).

A job asks for ``N`` resources of a :class:`ResourcePool` for a duration within a start
window; a :class:`CollectiveRequest` gives a per-resource minimum ``e_i`` and a total ``d_i``
per quantitative property, resources are partially reserved and each has a timetable::

    from coalloc.collective import ResourcePool, CollectiveRequest, solve
    result = solve(request, pool)                   # default "scan": earliest start
    # coallocate(pool, request): the same call in the paper's order (the domain name)
    result.start, result.resources, result.amounts, result.utilisation
    pool.reserve(result.start, request.duration, result.resources, result.amounts)

Methods (:data:`METHODS`): ``"scan"`` (default), ``"cankar"`` (the paper's Phases I-VI),
``"exact"`` (shared integer-programming runner) and ``"brute_force"``. See
``coalloc docs collective``.
"""

from .._shared.family import FamilySpec as _Spec
from .._shared.family import register_family as _register
from .cankar import cankar
from .exact import brute_force, exact
from .explain import explain_request
from .io import (
    read_instance,
    read_pool,
    read_pool_csv,
    read_request,
    read_swf,
    read_workload,
    swf_requests,
    swf_workload,
    write_instance,
    write_pool,
    write_request,
    write_result,
)
from .model import DEFAULT_HORIZON, DEFAULT_MINIMUM, CollectiveRequest, ResourcePool
from .plot import plot_timetable
from .result import CoallocationResult
from .scan import scan
from .solvers import (
    DEFAULT_METHOD,
    METHODS,
    CollectiveInstance,
    Instance,
    coallocate,
    solve,
    verify,
)
from .verify import CoallocationReport, verify_coallocation


def __getattr__(name: str):
    if name in ("generators", "simulate"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "explain_request",
    "plot_timetable",
    "ResourcePool",
    "CollectiveRequest",
    "DEFAULT_HORIZON",
    "DEFAULT_MINIMUM",
    "coallocate",
    "solve",
    "METHODS",
    "DEFAULT_METHOD",
    "Instance",
    "CollectiveInstance",
    "CoallocationResult",
    "CoallocationReport",
    "verify",
    "verify_coallocation",
    "cankar",
    "scan",
    "exact",
    "brute_force",
    "read_pool",
    "read_pool_csv",
    "write_pool",
    "read_request",
    "write_request",
    "read_instance",
    "write_instance",
    "write_result",
    "read_workload",
    "read_swf",
    "swf_requests",
    "swf_workload",
    "generators",
    "simulate",
]

# The family's entry in the one list of families (batch layer, CLI group, API reference).
from . import _spec  # noqa: E402 - what the house needs of the family

_register(
    _Spec(
        name="collective",
        title="Collective co-allocation with advance reservations (Cankar et al.)",
        summary="collective co-allocation with advance reservations (Cankar et al.)",
        kinds=(Instance,),
        cli="coalloc.collective.cli",
        formats=_spec.FORMATS,
        plot="coalloc.collective.cli",
        example=_spec.example,
        fuzz_seeds=_spec.fuzz_seeds,
        line_formats=_spec.LINE_FORMATS,
        generate=_spec.GENERATE,
    )
)
