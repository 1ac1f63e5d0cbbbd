"""coalloc: co-allocation of parallel jobs onto grid, cluster and testbed resources.

One subpackage per problem family, over a small shared layer:

* :mod:`coalloc.ctaap`: topology-aware co-allocation of a request graph onto clustered
  offers, the CTAAP-Solver of Kravtsov et al. (ICCS 2008);
* :mod:`coalloc.taskmap`: mapping communicating tasks onto heterogeneous resources with
  stochastic flow injection, Taura & Chien (HCW 2000);
* :mod:`coalloc.loadshare`: coalition load sharing (DMCF-GGA, Hovey & Jung) and
  the generalized assignment problem.
* :mod:`coalloc.collective`: collective co-allocation with advance reservations, Cankar et
  al. (J.UCS 2013).

The main job stays one step away: :func:`solve`, :class:`Request`, :class:`Offer`,
:func:`verify`, :class:`SolveResult`, :data:`METHODS`, :func:`read_instance` and friends are
documented aliases of :mod:`coalloc.ctaap`. :func:`solve_many` solves batches of problems of
any family. Data flows one way: input -> model -> solver -> result -> verify -> output.
"""

__version__ = "0.1.0"

from . import collective, ctaap, loadshare, taskmap, testbed
from ._shared import STATUSES, InstanceError, Report, Result
from .batch import BatchError, solve_many, solve_many_iter

# The main job, one step away: aliases of coalloc.ctaap.
from .ctaap import (
    METHODS,
    Offer,
    Request,
    SolveResult,
    VerifyReport,
    generators,
    read_instance,
    read_result,
    solve,
    upper_bound,
    verify,
    write_instance,
    write_result,
)

#: The problem families, by name.
FAMILIES = ("ctaap", "taskmap", "collective", "testbed", "loadshare")

__all__ = [
    "ctaap",
    "taskmap",
    "loadshare",
    "testbed",
    "collective",
    "FAMILIES",
    "Request",
    "Offer",
    "solve",
    "solve_many",
    "solve_many_iter",
    "BatchError",
    "METHODS",
    "SolveResult",
    "Result",
    "Report",
    "STATUSES",
    "verify",
    "VerifyReport",
    "read_instance",
    "write_instance",
    "read_result",
    "write_result",
    "InstanceError",
    "generators",
    "upper_bound",
    "flow_injection",
    "__version__",
]


def __getattr__(name: str):
    if name == "flow_injection":  # coalloc.taskmap.flow_injection, imported on first use
        return taskmap.flow_injection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
