"""coalloc: topology-aware co-allocation of parallel jobs onto clustered resources.

The core is the CTAAP-Solver of Kravtsov et al. (ICCS 2008): a request graph of tasks
(minimum properties, pairwise bandwidth) is allocated onto an offer graph of homogeneous
clusters (machine properties, machine counts, intra/inter-cluster bandwidth) so that every
constraint holds, maximising the number of allocated tasks.

Data flows one way: input -> model (:class:`Request`, :class:`Offer`) -> :func:`solve` ->
:class:`SolveResult` -> :func:`verify`.
"""

__version__ = "0.1.0"

from . import generators, taskmap
from .batch import BatchError, solve_many, solve_many_iter
from .exact import upper_bound
from .io import InstanceError, read_instance, read_result, write_instance, write_result
from .model import Offer, Request
from .result import SolveResult
from .solvers import METHODS, solve
from .verify import VerifyReport, verify

__all__ = [
    "Request",
    "Offer",
    "solve",
    "solve_many",
    "solve_many_iter",
    "BatchError",
    "METHODS",
    "SolveResult",
    "verify",
    "VerifyReport",
    "read_instance",
    "write_instance",
    "read_result",
    "write_result",
    "InstanceError",
    "generators",
    "upper_bound",
    "taskmap",
    "flow_injection",
    "__version__",
]


def __getattr__(name: str):
    if name == "flow_injection":  # coalloc.taskmap.flow_injection, imported on first use
        return taskmap.flow_injection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
