"""What the house needs of CTAAP besides its kinds: formats, example, fuzz seeds.

Read by :class:`coalloc._shared.family.FamilySpec` (the registration in ``__init__``).
"""

from __future__ import annotations

import json
from typing import Dict, List

from .._shared.family import FileFormat, written
from . import generators, io
from .solvers import Instance


def example(seed: int = 0) -> Instance:
    """A small CTAAP instance (8 tasks, 2 clusters) every method solves at once."""
    return Instance(*generators.random_instance(8, 2, edge_probability=0.3, seed=seed))


def _examples() -> List[dict]:
    req, offer = generators.fig2(seed=1)
    return [json.loads(written(io.write_instance, req, offer, bandwidth_format=fmt))
            for fmt in ("dense", "edges")]  # fmt: skip


def _dump(inst: Instance) -> dict:
    return json.loads(written(io.write_instance, *inst))


def fuzz_seeds() -> Dict[str, bytes]:
    """Small instance files, the seeds of the fuzzers' ``instances`` target."""
    r, o = generators.fig2(1, n_tasks=5, n_clusters=3, seed=3)
    return {"ctaap.json": written(io.write_instance, r, o, bandwidth_format="edges")}


FORMATS = (
    FileFormat(
        io.INSTANCE_FORMAT,
        "a CTAAP instance: a request and an offer (Kravtsov et al.)",
        io.INSTANCE_SCHEMA,
        ((io.INSTANCE_SCHEMA, io.INSTANCE_FORMAT, 1, False),),
        examples=_examples,
        dump=_dump,
        option="json",
        holds=("instance",),
    ),
)


#: The batch layer's cost model (:mod:`coalloc.batch.cost`): seconds of the default method
#: = c + a * cost_size ** b, fitted by ``python -m bench.shared.scaling_cost``
#: (2-core VM, issue 41); the batch rescales it by the times its workers measure.
COST_MODEL = {"CtaapInstance": (6.0e-4, 1.2e-7, 1.04)}


def cost_size(inst: Instance) -> float:
    """The size the cost model reads: (tasks + communicating pairs) x clusters."""
    return float((inst.request.n + inst.request.n_edges) * inst.offer.m)


# ------------------------------------------------------------------ coalloc ctaap generate


def _write_generated(setup: str):
    """``write(path, kwargs, args)`` of ``generate fig2|fig3``: the instance with the
    setup in its metadata."""

    def write(path: str, kw: dict, args) -> str:
        given = kw[setup]
        request, offer = getattr(generators, setup)(**given)
        meta = {"setup": setup, **({"range_factor": given["range_factor"]} if setup == "fig2"
                                   else {}), "n_tasks": given["n_tasks"]}  # fmt: skip
        if args.n_clusters is not None:
            meta["n_clusters"] = given["n_clusters"]
        meta["seed"] = given["seed"]
        io.write_instance(path, request, offer, metadata=meta)
        return f"wrote {setup} instance ({request.n} tasks, {offer.m} clusters) to {path}"

    return write


def _generate_kinds() -> tuple:
    from .._shared.family_generate import Generated

    return (Generated("fig2", (generators.fig2,), _write_generated("fig2")),
            Generated("fig3", (generators.fig3,), _write_generated("fig3"),
                      defaults={"n_tasks": 100}))  # fmt: skip


#: What ``coalloc ctaap generate`` writes (its options: these generators' parameters).
GENERATE = _generate_kinds()
