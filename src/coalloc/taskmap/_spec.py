"""What the house needs of the task mapper besides its kinds: formats, example, fuzz seeds.

Read by :class:`coalloc._shared.family.FamilySpec` (the registration in ``__init__``).
"""

from __future__ import annotations

import json
from typing import Dict, List

from .._shared.family import FileFormat, written
from .._shared.schema import Obj
from . import generators, io
from .model import ResourceGraph, TaskGraph
from .solvers import Instance


def example(seed: int = 0) -> Instance:
    """A small task-mapping instance (3 tasks, 3 resource nodes) every method solves at once.

    The seed varies the tasks' costs and the links' bandwidths, not the shapes.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    cost = [float(c) for c in rng.integers(1, 4, 3)]
    comm = float(rng.integers(1, 6))
    tasks = TaskGraph(cost, [[0, comm, 0], [comm, 0, 1], [0, 1, 0]])
    speeds = [0, 3.0, 5.0]
    res = ResourceGraph.from_edges(speeds, [[0, 1], [0, 2]], [50.0, float(rng.integers(20, 60))])
    return Instance(tasks, res)


def small() -> tuple:
    """The small graphs of the fuzzers' seed files (a fuzzer mutates small files best)."""
    tasks = generators.pipeline_task_graph(n_clusters=2, cluster_size=3, seed=0)
    rg = generators.internet_resource_graph(n_wan=2, n_lan=2, children=2, lan_size=3, seed=0)
    return tasks, rg


def _examples(writer) -> List[dict]:
    tasks, resources = generators.table1_instance(seed=1)
    if writer is io.write_task_graph:
        return [json.loads(written(writer, tasks))]
    if writer is io.write_resource_graph:
        return [json.loads(written(writer, resources))]
    return [json.loads(written(writer, tasks, resources))]


def fuzz_seeds() -> Dict[str, bytes]:
    """Small instance files, the seeds of the fuzzers' ``instances`` target."""
    return {"taskmap.json": written(io.write_instance, *small())}


_TASKS, _RESOURCES = io.TASKGRAPH_SCHEMA, io.RESOURCEGRAPH_SCHEMA
# The instance's reader checks its two parts with the graphs' own schemas.
_fields = dict(io.INSTANCE_SCHEMA.fields)
_fields["tasks"] = (_TASKS, _fields["tasks"][1])
_fields["resources"] = (_RESOURCES, _fields["resources"][1])
_INSTANCE = Obj(_fields, extra=io.INSTANCE_SCHEMA.extra)

FORMATS = (
    FileFormat(
        io.TASKGRAPH_FORMAT,
        "a task graph of the task mapper (Taura & Chien)",
        _TASKS,
        ((_TASKS, io.TASKGRAPH_FORMAT, io.VERSION, False),),
        examples=lambda: _examples(io.write_task_graph),
        option="json",
        holds=("taskgraph",),
    ),
    FileFormat(
        io.RESOURCEGRAPH_FORMAT,
        "a resource graph of the task mapper (Taura & Chien)",
        _RESOURCES,
        ((_RESOURCES, io.RESOURCEGRAPH_FORMAT, io.VERSION, False),),
        examples=lambda: _examples(io.write_resource_graph),
        holds=("resourcegraph",),
    ),
    FileFormat(
        io.INSTANCE_FORMAT,
        "a task graph and a resource graph in one file",
        _INSTANCE,
        (
            (_INSTANCE, io.INSTANCE_FORMAT, io.VERSION, True),
            (_TASKS, io.TASKGRAPH_FORMAT, io.VERSION, False),
            (_RESOURCES, io.RESOURCEGRAPH_FORMAT, io.VERSION, False),
        ),
        examples=lambda: _examples(io.write_instance),
        dump=lambda inst: json.loads(written(io.write_instance, *inst)),
        option="json",
        holds=("instance",),
    ),
)


#: The batch layer's cost model (:mod:`coalloc.batch.cost`): seconds of the default method
#: = c + a * cost_size ** b, fitted by ``python -m bench.shared.scaling_cost``
#: (2-core VM, issue 41); the batch rescales it by the times its workers measure.
COST_MODEL = {"TaskMapInstance": (3.2e-3, 1.6e-4, 0.60)}


def cost_size(inst: Instance) -> float:
    """The size the cost model reads: tasks x processors."""
    return float(inst.task_graph.n * inst.resource_graph.n_processors)


# ------------------------------------------------------------------ coalloc taskmap generate


def _write_table1(path: str, kw: dict, args) -> str:
    """``write(path, kwargs, args)`` of ``generate``: a Table 1 instance, both graphs."""
    given = kw["table1_instance"]
    tasks, resources = generators.table1_instance(**given)
    meta = {"setup": "table1", "c": given["c"], "seed": given["seed"]}
    io.write_instance(path, tasks, resources, metadata=meta)
    return (f"wrote task-mapping instance ({tasks.n} tasks, {resources.n_processors} "
            f"processors) to {path}")  # fmt: skip


def _generate_kinds() -> tuple:
    from .._shared.family_generate import Generated

    return (Generated("table1", (generators.table1_instance,), _write_table1),)


#: What ``coalloc taskmap generate`` writes (its options: the generator's parameters).
GENERATE = _generate_kinds()


def _metis_sample() -> TaskGraph:
    """A three-task graph (weights and edge weights): what the METIS writer writes."""
    return TaskGraph([1.0, 2.0, 3.0], [[0, 1, 0], [1, 0, 2], [0, 2, 0]])


def _line_formats() -> tuple:
    from .._shared.formats_line import LineFormat

    return (
        LineFormat("metis.graph", "a METIS graph", option="metis", detect=("metis",),
                   read=io.read_metis_graph, write=io.write_metis_graph,
                   suffixes=(".graph", ".metis"), holds=("taskgraph",),
                   sample=_metis_sample),
        LineFormat("scotch.graph", "a Scotch graph", option="scotch", detect=("scotch",),
                   read=io.read_scotch_graph, suffixes=(".grf",),
                   holds=("taskgraph",)),
    )  # fmt: skip


#: The task graph's line formats (METIS, Scotch); the package writes METIS only.
LINE_FORMATS = _line_formats()
