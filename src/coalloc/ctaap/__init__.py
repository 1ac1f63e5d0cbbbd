"""CTAAP: topology-aware co-allocation of a request graph onto clustered offers.

Kravtsov et al. (ICCS 2008). A :class:`Request` (tasks with minimum properties, pairwise
bandwidth needs) is allocated onto an :class:`Offer` (homogeneous clusters with machine
properties, capacities, intra/inter-cluster bandwidth) so that constraints (1)-(5) hold,
maximising the number of allocated tasks::

    import coalloc.ctaap as ctaap
    result = ctaap.solve(request, offer, method="ctaap", seed=0)
    ctaap.verify(request, offer, result.assignment).feasible

Methods (:data:`METHODS`): ``"ctaap"`` (the CTAAP-Solver, compiled), ``"greedy"`` (first
fit), ``"exact"`` (the integer program on HiGHS, CBC or CP-SAT: ``solver=``). ``coalloc.solve``,
``coalloc.Request``, ``coalloc.Offer`` and ``coalloc.verify`` are aliases of this family.
See ``coalloc docs ctaap``.
"""

from .._shared.family import FamilySpec as _Spec
from .._shared.family import register_family as _register
from .._shared.family import renamed_keyword as _renamed
from . import generators
from .exact import solve_exact as _solve_exact
from .exact import upper_bound
from .explain import explain_allocation
from .greedy import solve_greedy
from .io import (
    instance_from_dict,
    instance_to_dict,
    read_instance,
    read_result,
    write_instance,
    write_result,
)
from .model import Offer, Request, check_compatible, compatibility
from .plot import plot_allocation
from .result import SolveResult
from .solver import solve_ctaap
from .solvers import METHODS, CtaapInstance, Instance, solve
from .verify import AssignmentReport, VerifyReport, verify

__all__ = [
    "explain_allocation",
    "Request",
    "Offer",
    "Instance",
    "CtaapInstance",
    "solve",
    "METHODS",
    "SolveResult",
    "verify",
    "VerifyReport",
    "AssignmentReport",
    "solve_ctaap",
    "solve_greedy",
    "solve_exact",
    "upper_bound",
    "check_compatible",
    "compatibility",
    "read_instance",
    "write_instance",
    "instance_to_dict",
    "instance_from_dict",
    "read_result",
    "write_result",
    "generators",
    "plot_allocation",
]

#: :func:`coalloc.ctaap.exact.solve_exact`, also taking ``backend=``, the deprecated name of
#: ``solver=`` (a DeprecationWarning).
solve_exact = _renamed(_solve_exact, "backend", "solver")

# The family's entry in the one list of families (batch layer, CLI group, API reference).
from . import _spec  # noqa: E402 - what the house needs of the family

_register(
    _Spec(
        name="ctaap",
        title="CTAAP: co-allocation of request graphs onto clustered offers",
        summary="co-allocation of a request graph onto clustered offers (Kravtsov et al.)",
        kinds=(Instance,),
        cli="coalloc.ctaap.cli",
        formats=_spec.FORMATS,
        plot="coalloc.ctaap.cli",
        example=_spec.example,
        fuzz_seeds=_spec.fuzz_seeds,
        generate=_spec.GENERATE,
    )
)
