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

import importlib as _importlib

#: The problem families, by name: the folders ``coalloc/<name>/``, each of which registers
#: itself (:func:`coalloc._shared.family.register_family`) in the one list that the batch
#: layer, the ``coalloc`` command and the API reference read. A family is imported on first
#: use (``coalloc.testbed``, or anything that lists the families), so that a command using
#: one family does not pay for the others' imports. Adding a sixth family is its folder plus
#: its name here.
FAMILIES = ("ctaap", "taskmap", "collective", "testbed", "loadshare")


def _load_families() -> None:
    """Import every family once (each registers itself): whoever lists the families."""
    for name in FAMILIES:
        _load_family(name)


def _load_family(name: str) -> None:
    """Import one family (it registers itself): whoever needs that family's spec only."""
    _importlib.import_module(f"{__name__}.{name}")


from ._shared.family import set_family_loader as _set_family_loader  # noqa: E402

_set_family_loader(_load_families, FAMILIES, _load_family)

#: Names this package provides on first use, and the module each comes from.
_LAZY = {
    **dict.fromkeys(("STATUSES", "FamilyInstance", "InstanceError", "Report", "Result"),
                    "._shared"),
    **dict.fromkeys(("BatchError", "solve_many", "solve_many_iter"), ".batch"),
    # The main job, one step away: aliases of coalloc.ctaap.
    **dict.fromkeys(("METHODS", "AssignmentReport", "Offer", "Request", "SolveResult",
                     "VerifyReport", "generators", "read_instance", "read_result", "solve",
                     "upper_bound", "verify", "write_instance", "write_result"), ".ctaap"),
    "flow_injection": ".taskmap",
}  # fmt: skip

__all__ = [
    *FAMILIES,
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
    "FamilyInstance",
    "STATUSES",
    "verify",
    "VerifyReport",
    "AssignmentReport",
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
    if name in FAMILIES:  # binds coalloc.<name> as a side effect of the import
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value  # once
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
