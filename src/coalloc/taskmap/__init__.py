"""Mapping communicating tasks onto heterogeneous resources (Taura & Chien, HCW 2000).

A :class:`TaskGraph` (compute requirements, communication volumes) is mapped onto a
:class:`ResourceGraph` (processor capacities, link bandwidths, fixed routes) so that the
maximum occupancy -- the inverse of the pipeline's throughput -- is small::

    import coalloc.taskmap as tm
    result = tm.solve(tasks, resources, seed=0)          # the default, "multilevel"
    result.mapping, result.max_occupancy, result.bottleneck

Methods (:data:`METHODS`): ``"multilevel"`` (the default: coarsening, a bisection along the
resource hierarchy, refinement off the bottleneck at every level; :func:`map_multilevel`),
the four variants of section 5.2 (:data:`VARIANTS`, run by :func:`map_tasks`; the paper's
reference) and ``"exact"`` (the MILP of :func:`solve_exact_mapping`); all return a
:class:`MappingResult`. See ``coalloc docs taskmap``.
"""

from .._shared.family import FamilySpec as _Spec
from .._shared.family import register_family as _register
from . import mapper
from .exact import ExactMappingResult, solve_exact_mapping
from .explain import bound_witness, explain_result
from .io import (
    named_mapping,
    read_mapping_result,
    read_metis_graph,
    read_resource_graph,
    read_scotch_graph,
    read_task_graph,
    write_mapping_result,
    write_metis_graph,
    write_resource_graph,
    write_task_graph,
)
from .mapper import (
    MappingResult,
    TaskMappingResult,
    improve,
    map_tasks,
    map_tasks_on,
    processor_order,
    remove_bottlenecks,
)
from .model import ResourceGraph, TaskGraph
from .multilevel import hierarchy_order, map_multilevel
from .occupancy import (
    Bottleneck,
    OccupancyState,
    comp_occupancy,
    load_graph,
    max_occupancy,
    occupancy_graph,
    open_occupancy,
)
from .plot import plot_cluster_tree, plot_mapping
from .solvers import DEFAULT_METHOD, METHODS, Instance, TaskMapInstance, solve
from .verify import MappingReport, communication_cost, verify_mapping

#: The four heuristic variants of section 5.2: name -> (open metric, improvement phase).
VARIANTS = mapper.METHODS


def __getattr__(name: str):
    # The clustering (section 4.3) and the section 5.1 generators are imported on first use,
    # so that the model and mapper stay importable on their own.
    if name in ("flow_injection", "FlowInjectionResult"):
        from . import clustering

        return getattr(clustering, name)
    if name == "generators":
        import importlib

        return importlib.import_module(".generators", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "explain_result",
    "bound_witness",
    "map_multilevel",
    "hierarchy_order",
    "named_mapping",
    "read_metis_graph",
    "read_scotch_graph",
    "write_metis_graph",
    "plot_cluster_tree",
    "plot_mapping",
    "TaskGraph",
    "ResourceGraph",
    "OccupancyState",
    "Bottleneck",
    "load_graph",
    "occupancy_graph",
    "max_occupancy",
    "map_tasks",
    "map_tasks_on",
    "improve",
    "remove_bottlenecks",
    "processor_order",
    "comp_occupancy",
    "open_occupancy",
    "MappingResult",
    "TaskMappingResult",
    "METHODS",
    "VARIANTS",
    "DEFAULT_METHOD",
    "Instance",
    "TaskMapInstance",
    "solve",
    "flow_injection",
    "FlowInjectionResult",
    "generators",
    "solve_exact_mapping",
    "ExactMappingResult",
    "verify_mapping",
    "communication_cost",
    "MappingReport",
    "read_task_graph",
    "write_task_graph",
    "read_resource_graph",
    "write_resource_graph",
    "read_mapping_result",
    "write_mapping_result",
]

# The family's entry in the one list of families (batch layer, CLI group, API reference).
from . import _spec  # noqa: E402 - what the house needs of the family

_register(
    _Spec(
        name="taskmap",
        title="Task mapping (Taura & Chien)",
        summary="mapping task graphs onto resource graphs (Taura & Chien)",
        kinds=(Instance,),
        cli="coalloc.taskmap.cli",
        formats=_spec.FORMATS,
        plot="coalloc.taskmap.cli",
        example=_spec.example,
        fuzz_seeds=_spec.fuzz_seeds,
        line_formats=_spec.LINE_FORMATS,
        generate=_spec.GENERATE,
    )
)
