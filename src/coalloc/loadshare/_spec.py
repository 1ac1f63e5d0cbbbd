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
        option="loadshare",
        holds=("instance",),
    ),
    FileFormat(
        solvers.GAP_FORMAT,
        "a generalized assignment problem (costs, weights, capacities)",
        solvers.GAP_SCHEMA,
        ((solvers.GAP_SCHEMA, solvers.GAP_FORMAT, solvers.GAP_VERSION, False),),
        examples=_gaps,
        dump=lambda inst: json.loads(json.dumps(solvers.gap_to_dict(inst.instance))),
        option="json",
        holds=("gap",),
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


# ------------------------------------------------------------------ coalloc loadshare generate


def _write_paper(path: str, kw: dict, args) -> str:
    """``write(path, kwargs, args)`` of ``generate paper``: the Fig. 5 grid, as JSON."""
    if not path.lower().endswith(".json"):
        raise ValueError(
            f"{path}: a load-sharing problem is written as JSON "
            "(coalloc.loadshare.instance): name the file *.json"
        )
    given = kw["paper_setup"]
    prob = generators.paper_setup(**given)
    meta = {"setup": "fig5", "seed": given["seed"], "arrival": given["arrival"]}
    io.write_problem(path, prob, metadata=meta)
    return f"wrote load-sharing problem ({prob.n_nodes} nodes, {prob.n_jobs} jobs) to {path}"


def _write_gap(path: str, kw: dict, args) -> str:
    """``write(path, kwargs, args)`` of ``generate a|b|c|d``: ``--count`` GAP instances
    (seeds ``seed``, ``seed + 1``, ...), JSON for ``*.json``, else OR-Library text."""
    given = kw["generate_gap"]
    seed = given.pop("seed")
    insts = [generate_gap(**given, seed=seed + k) for k in range(args.count)]
    written_as = io.write_gap_file(path, insts, multi=args.count > 1 or not args.single)
    what = ("JSON (coalloc.loadshare.gap, sense min)" if written_as == "json"
            else "OR-Library text (no sense in the format: minimisation)")  # fmt: skip
    return (f"wrote {args.count} GAP instance(s) of type {given['kind'].upper()} "
            f"({given['m']}x{given['n']}) to {path} as {what}")  # fmt: skip


def _generate_kinds() -> tuple:
    from .._shared.family_generate import Generated
    from .gap.generators import GAP_TYPES

    pairs = "a pair (mean, spread): the paper's"
    paper = Generated("paper", (generators.paper_setup,), _write_paper,
                      flags={"n_nodes": "--nodes"},
                      fixed={"light": pairs, "heavy": pairs,
                             "job_size": "a pair (low, high): the paper's"})  # fmt: skip
    gaps = tuple(
        Generated(t, (generate_gap,), _write_gap, flags={"m": "--agents", "n": "--items"},
                  defaults={"kind": t, "m": 5, "n": 100},
                  fixed={"kind": "the type is the command's word"})  # fmt: skip
        for t in GAP_TYPES
    )
    return (paper, *gaps)


#: What ``coalloc loadshare generate`` writes (its options: these generators' parameters).
GENERATE = _generate_kinds()


def _line_formats() -> tuple:
    from .._shared.formats_line import LineFormat

    return (LineFormat("orlib.gap", "OR-Library GAP text", option="orlib",
                       detect=("orlib-gap", "text"), read=io.read_gap, write=io.write_gap,
                       suffixes=(".txt",), holds=("gap",),
                       sample=lambda: [generate_gap("a", 3, 6, seed=4)],
                       fuzz_target="gap"),)  # fmt: skip


#: The GAP's OR-Library text (one instance, or several with their count first).
LINE_FORMATS = _line_formats()
