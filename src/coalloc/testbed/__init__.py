"""Testbed mapping: assign+ against simulated annealing, on Emulab's file formats.

An experimenter's virtual topology (``.top``: typed nodes with desires, links with
bandwidth, LANs) is mapped onto a testbed (``.ptop``: PCs of several types with a few
interfaces to switches, switches joined by trunks) so that every hard constraint holds,
minimising the bandwidth that crosses switches::

    import coalloc.testbed as tb
    r = tb.assign("exp.top", "testbed.ptop", method="assign+")
    r.success, r.mapping, r.routes, r.interswitch_bandwidth, r.reason

Methods (:data:`METHODS`): ``"assign+"`` (the five deterministic strategies of the paper,
scoring ``.1``; also ``"assign+.1"``, ``"assign+.1m"``, ``"assign+.2m"``), ``"anneal"``
(assign's simulated annealing, the compiled baseline) and ``"exact"`` (CP-SAT). Every
result is checked by :func:`verify_mapping`. See ``coalloc docs testbed``.
"""

from .._shared.family import FamilySpec as _Spec
from .._shared.family import register_family as _register
from . import generators
from .anneal import ANNEAL_DEFAULTS
from .assignplus import SCORINGS, STRATEGIES, RequestMemory, partition
from .explain import explain_mapping
from .io import (
    format_ptop,
    format_top,
    parse_ptop,
    parse_top,
    ptop_from_dict,
    ptop_from_networkx,
    ptop_to_dict,
    ptop_to_networkx,
    read_instance,
    read_ptop,
    read_top,
    top_from_dict,
    top_from_networkx,
    top_to_dict,
    top_to_networkx,
    write_instance,
    write_ptop,
    write_top,
)
from .model import PhysicalTopology, PLink, PNode, VirtualTopology, VLink, VNode
from .plot import plot_mapping
from .problem import build_problem
from .result import MappingResult, TestbedMappingResult
from .simulate import SimulationResult, TestbedSimulationResult, simulate
from .solvers import DEFAULT_METHOD, METHODS, Instance, TestbedInstance, assign, solve
from .verify import TestbedMappingReport, VerifyReport, verify_mapping

__all__ = [
    "explain_mapping",
    "plot_mapping",
    "PNode", "PLink", "PhysicalTopology", "VNode", "VLink", "VirtualTopology",
    "assign", "solve", "METHODS", "DEFAULT_METHOD", "Instance", "MappingResult",
    "TestbedInstance", "TestbedMappingResult", "TestbedMappingReport", "TestbedSimulationResult",
    "verify_mapping", "VerifyReport", "build_problem", "partition", "RequestMemory",
    "STRATEGIES", "SCORINGS", "ANNEAL_DEFAULTS",
    "read_ptop", "write_ptop", "parse_ptop", "format_ptop", "read_top", "write_top",
    "parse_top", "format_top", "ptop_to_dict", "ptop_from_dict", "top_to_dict",
    "top_from_dict", "ptop_to_networkx", "ptop_from_networkx", "top_to_networkx",
    "top_from_networkx", "read_instance", "write_instance",
    "generators", "simulate", "SimulationResult",
]  # fmt: skip

# The family's entry in the one list of families (batch layer, CLI group, API reference).
from . import _spec  # noqa: E402 - what the house needs of the family

_register(
    _Spec(
        name="testbed",
        title="Testbed mapping: assign+ and assign",
        summary="mapping .top experiments onto .ptop testbeds (assign+, assign)",
        kinds=(Instance,),
        cli="coalloc.testbed.cli",
        formats=_spec.FORMATS,
        plot="coalloc.testbed.cli",
        example=_spec.example,
        fuzz_seeds=_spec.fuzz_seeds,
        line_formats=_spec.LINE_FORMATS,
        generate=_spec.GENERATE,
    )
)
