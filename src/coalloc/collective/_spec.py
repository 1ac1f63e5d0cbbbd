"""What the house needs of collective co-allocation besides its kinds: formats, example, fuzz
seeds.

Read by :class:`coalloc._shared.family.FamilySpec` (the registration in ``__init__``).
"""

from __future__ import annotations

import json
from typing import Dict, List

from .._shared.family import FileFormat, written
from . import generators, io
from .model import CollectiveRequest, ResourcePool
from .solvers import Instance


def example(seed: int = 0) -> Instance:
    """A small collective instance (12 nodes, 3 per request) every method solves at once."""
    pool, request = generators.random_instance(12, 3, seed=seed)
    return Instance(request, pool)


def small() -> tuple:
    """``(pool, request)`` of the fuzzers' seed files (a fuzzer mutates small files best)."""
    pool = ResourcePool.from_slots(
        [[4.0, 8.0], [2.0, 4.0], [1.0, 2.0]],
        [[[1.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 0.0]], [[0.0, 1.0], [0.0, 0.0]]],
        300, ["cores", "mem"], node_names=["n0", "n1", "n2"], labels={"site": ["a", "a", "b"]},
    )  # fmt: skip
    req = CollectiveRequest(600, 2, 0, 1200, {"cores": 0.5}, {"cores": 3.0})
    return pool, req


def _examples(part: str) -> List[dict]:
    pool, request = generators.random_instance(seed=1)
    if part == "pool":
        return [json.loads(written(io.write_pool, pool))]
    if part == "request":
        return [json.loads(written(io.write_request, request))]
    if part == "workload":
        return [{"format": io.WORKLOAD_FORMAT, "version": 1, "requests": [
            {"duration": 600, "count": 2, "earliest_start": 0, "latest_start": 900,
             "minimum": {"cores": 1}, "arrival": 0}]}]  # fmt: skip
    return [json.loads(written(io.write_instance, pool, request))]


def fuzz_seeds() -> Dict[str, bytes]:
    """Small instance files, the seeds of the fuzzers' ``instances`` target."""
    return {"collective.json": written(io.write_instance, *small())}


_POOL = (io.POOL_SCHEMA, io.POOL_FORMAT, io.VERSION, False)
_REQUEST = (io.REQUEST_SCHEMA, io.REQUEST_FORMAT, io.VERSION, False)

FORMATS = (
    FileFormat(io.POOL_FORMAT, "a resource pool with advance reservations (Cankar et al.)",
               io.POOL_SCHEMA, (_POOL,), examples=lambda: _examples("pool"),
               option="json", holds=("pool",)),  # fmt: skip
    FileFormat(io.REQUEST_FORMAT, "a collective request (Cankar et al.)", io.REQUEST_SCHEMA,
               (_REQUEST,), examples=lambda: _examples("request"), holds=("request",)),  # fmt: skip
    FileFormat(
        io.INSTANCE_FORMAT,
        "a pool and a collective request in one file",
        io.INSTANCE_SCHEMA,
        ((io.INSTANCE_SCHEMA, io.INSTANCE_FORMAT, io.VERSION, True), _POOL, _REQUEST),
        examples=lambda: _examples("instance"),
        dump=lambda inst: json.loads(written(io.write_instance, inst.pool, inst.request)),
        option="json",
        holds=("instance",),
    ),
    FileFormat(
        io.WORKLOAD_FORMAT,
        "a stream of collective requests with arrival times",
        io.WORKLOAD_SCHEMA,
        ((io.WORKLOAD_SCHEMA, io.WORKLOAD_FORMAT, io.VERSION, False), _REQUEST),
        examples=lambda: _examples("workload"),
        holds=("workload",),
    ),
)


#: The batch layer's cost model (:mod:`coalloc.batch.cost`): seconds of the default method
#: = c + a * cost_size ** b, fitted by ``python -m bench.shared.scaling_cost``
#: (2-core VM, issue 41); the batch rescales it by the times its workers measure.
COST_MODEL = {"CollectiveInstance": (0.0, 4.0e-4, 0.013)}


def cost_size(inst: Instance) -> float:
    """The size the cost model reads: nodes requested x nodes in the pool."""
    return float(inst.request.count * inst.pool.n_nodes)


# ------------------------------------------------------------------ coalloc collective generate


def _write_generated(what: str):
    """``write(path, kwargs, args)`` of ``generate pool|request|instance``: a Table 1
    pool, then (request, instance) the first pair of section 4.2's requests on it, the
    simple one under ``--simple``."""

    def write(path: str, kw: dict, args) -> str:
        from .cli import _write_pool

        pool = generators.table1_pool(**kw["table1_pool"])
        if what == "pool":
            _write_pool(path, pool, "-o")
            return (f"wrote a Table 1 pool ({pool.n_nodes} nodes, one day of 5-minute slots) "
                    f"to {path}")  # fmt: skip
        given = kw["section42_requests"]
        simple, coll = generators.section42_requests(pool, **given)[0]
        req = simple if args.simple else coll
        if what == "request":
            io.write_request(path, req)
        else:
            io.write_instance(path, pool, req)
        return (f"wrote a section 4.2 {what} ({'simple' if args.simple else 'collective'}, "
                f"N = {given['count']}) to {path}")  # fmt: skip

    return write


def _generated(what: str):
    from .._shared.family_generate import Generated

    fixed = {"load": "a pair (a, b) of Beta parameters: the paper's"}
    gens = (generators.table1_pool,)
    if what != "pool":
        gens += (generators.section42_requests,)
        fixed.update(n_cases="the command writes the first pair: one case is drawn",
                     labels="a mapping: section 4.2's default")  # fmt: skip
    return Generated(what, gens, _write_generated(what), flags={"n_nodes": "--nodes"},
                     defaults={} if what == "pool" else {"count": 5, "n_cases": 1},
                     fixed=fixed)  # fmt: skip


#: What ``coalloc collective generate`` writes (its options: these generators' parameters).
GENERATE = tuple(_generated(what) for what in ("pool", "request", "instance"))


def _line_formats() -> tuple:
    from .._shared.formats_line import LineFormat

    return (
        LineFormat("csv.pool", "a CSV pool", option="csv", detect=("text",),
                   read=io.read_pool_csv, suffixes=(".csv",), holds=("pool",),
                   fuzz_target="collective_csv"),
        LineFormat(io.SNAPSHOT_FORMAT, "a pool snapshot (.npz)", option="npz", detect=("npz",),
                   read=io.read_pool_snapshot, write=io.write_pool_snapshot,
                   suffixes=(".npz",), holds=("pool",),
                   sample=lambda: generators.table1_pool(6, n_slots=4, seed=1),
                   dump=io.pool_to_dict, fuzz_target="collective_snapshot"),
        LineFormat("swf.log", "a Standard Workload Format log", option="swf",
                   detect=("swf",), read=io.read_swf, suffixes=(".swf",),
                   holds=("workload",), fuzz_target="swf"),
    )  # fmt: skip


#: The formats that are no JSON document: the pool's CSV and snapshot, the SWF log.
LINE_FORMATS = _line_formats()
