"""What the house needs of load sharing and the GAP besides their kinds: formats, example,
fuzz seeds.

Read by :class:`coalloc._shared.family.FamilySpec` (the registration in ``__init__``).
"""

from __future__ import annotations

import json
from typing import Dict, List

from .._shared.family import FileFormat, written
from . import generators, io, solvers
from .gap import generate_gap
from .model import LoadSharingProblem
from .solvers import Instance


def example(seed: int = 0) -> Instance:
    """A small load-sharing instance (8 nodes) every method solves at once."""
    return Instance(generators.paper_setup(8, seed=seed))


def small() -> LoadSharingProblem:
    """The problem of the fuzzers' seed files (a fuzzer mutates small files best)."""
    return LoadSharingProblem([5.0, 5.0, 4.0], [4.0, 3.0, 3.0, 2.0, 1.0], [0, 0, 0, 1, 1])


def fuzz_seeds() -> Dict[str, bytes]:
    """Small instance files (a problem, a GAP), the seeds of the fuzzers' ``instances``
    target."""
    gap = generate_gap("d", 3, 3, seed=1)
    return {"gap.json": json.dumps(solvers.gap_to_dict(gap)).encode(),
            "loadshare.json": written(io.write_problem, small())}  # fmt: skip


def _problems() -> List[dict]:
    return [json.loads(written(io.write_problem, generators.paper_setup(40)))]


def _gaps() -> List[dict]:
    return [solvers.gap_to_dict(generate_gap(t, m, n, seed=1))
            for t, m, n in (("a", 2, 4), ("d", 3, 3))]  # fmt: skip


FORMATS = (
    FileFormat(
        io.FORMAT,
        "a coalition load-sharing problem (Hovey & Jung)",
        io.PROBLEM_SCHEMA,
        ((io.PROBLEM_SCHEMA, io.FORMAT, io.VERSION, False),),
        examples=_problems,
        dump=lambda inst: json.loads(written(io.write_problem, inst.problem)),
    ),
    FileFormat(
        solvers.GAP_FORMAT,
        "a generalized assignment problem (costs, weights, capacities)",
        solvers.GAP_SCHEMA,
        ((solvers.GAP_SCHEMA, solvers.GAP_FORMAT, solvers.GAP_VERSION, False),),
        examples=_gaps,
        dump=lambda inst: json.loads(json.dumps(solvers.gap_to_dict(inst.instance))),
    ),
)


#: The batch layer's cost model (:mod:`coalloc.batch.cost`): seconds of the default method
#: = c + a * cost_size ** b, fitted by ``python -m bench.shared.scaling_cost``
#: (2-core VM, issue 41); the batch rescales it by the times its workers measure.
COST_MODEL = {"LoadShareInstance": (0.0, 4.7e-6, 0.30), "GapProblem": (5.2e-3, 2.7e-4, 0.70)}


def cost_size(inst: object) -> float:
    """The size the cost model reads: jobs x nodes (load sharing), items x agents (GAP)."""
    if isinstance(inst, Instance):
        return float(inst.problem.n_jobs * inst.problem.n_nodes)
    gap = inst.instance  # type: ignore[attr-defined]
    return float(gap.m * gap.n)
