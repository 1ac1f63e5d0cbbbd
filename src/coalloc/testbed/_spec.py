"""What the house needs of testbed mapping besides its kinds: formats, example, fuzz seeds.

Read by :class:`coalloc._shared.family.FamilySpec` (the registration in ``__init__``).
"""

from __future__ import annotations

import json
from typing import Dict, List

from .._shared.family import FileFormat, written
from . import generators, io
from .solvers import Instance

#: A small testbed (two switches, three PCs) and an experiment it hosts: the fuzzers' seeds.
SMALL_PTOP = """\
node sw0 switch:1 *lan:*
node sw1 switch:1 *lan:*
node pc1 pc:1 pc3000:1 - fast:0.2 ?+mem:2048
node pc2 pc:1 pc3000:1 - fast:0.2 ?+mem:2048
node pc3 pc:1 pc850:1 - ?+mem:512
link pc1:e0 pc1 sw0 100000 0 0
link pc2:e0 pc2 sw0 100000 0 0
link pc3:e0 pc3 sw1 100000 0 0
link trunk sw0 sw1 1000000 0 0
"""
SMALL_TOP = """\
node a pc ?+mem:1024
node b pc
node c pc850
link ab a b 100000 0 0
link bc b c 50000 0 0
"""


def example(seed: int = 0) -> Instance:
    """A small testbed instance (5 virtual nodes, 8 PCs) every method solves at once."""
    top = generators.random_sparse(5, seed=seed)
    return Instance(top, generators.deterlab(8, 2, seed=seed))


def _examples() -> List[dict]:
    top, ptop = generators.ring(4), generators.deterlab(8, 2)
    return [json.loads(written(io.write_instance, top, ptop))]


def fuzz_seeds() -> Dict[str, bytes]:
    """Small instance files, the seeds of the fuzzers' ``instances`` target."""
    top, ptop = io.parse_top(SMALL_TOP), io.parse_ptop(SMALL_PTOP)
    return {"testbed.json": written(io.write_instance, top, ptop)}


FORMATS = (
    FileFormat(
        io.INSTANCE_FORMAT,
        "an experiment (top) and a testbed (ptop) in one file",
        io.INSTANCE_SCHEMA,
        ((io.INSTANCE_SCHEMA, io.INSTANCE_FORMAT, 1, False),),
        examples=_examples,
        dump=lambda inst: json.loads(written(io.write_instance, *inst)),
        option="json",
        holds=("instance",),
    ),
)


#: The batch layer's cost model (:mod:`coalloc.batch.cost`): seconds of the default method
#: = c + a * cost_size ** b, fitted by ``python -m bench.shared.scaling_cost``
#: (2-core VM, issue 41); the batch rescales it by the times its workers measure.
COST_MODEL = {"TestbedInstance": (0.0, 1.3e-3, 0.10)}


def cost_size(inst: Instance) -> float:
    """The size the cost model reads: virtual nodes x physical nodes."""
    return float(max(1, len(inst.top.nodes)) * max(1, len(inst.ptop.nodes)))


# ------------------------------------------------------------------ coalloc testbed generate


def _write_generated(kind: str):
    """``write(path, kwargs, args)`` of ``generate deterlab|grid5000|top``: a testbed
    (``.ptop``) or an experiment (``.top``)."""

    def write(path: str, kw: dict, args) -> str:
        if kind == "top":
            given = kw["random_topology"]
            io.write_top(path, generators.random_topology(**given))
            return f"wrote top ({given['size']}) to {path}"
        given = kw[kind]
        ptop = getattr(generators, kind)(**given)
        io.write_ptop(path, ptop)
        size = given["n_pcs"] if kind == "deterlab" else len(ptop.nodes)
        return f"wrote {kind} ({size}) to {path}"

    return write


def _generate_kinds() -> tuple:
    from .._shared.family_generate import Generated

    return (
        Generated("deterlab", (generators.deterlab,), _write_generated("deterlab"),
                  flags={"n_pcs": "--size", "n_switches": "--switches"}),
        Generated("grid5000", (generators.grid5000,), _write_generated("grid5000")),
        Generated("top", (generators.random_topology,), _write_generated("top"),
                  flags={"size": "--size"}, defaults={"size": 255},
                  fixed={"hw_types": "a list of hardware types: HARDWARE's"}),
    )  # fmt: skip


#: What ``coalloc testbed generate`` writes (its options: these generators' parameters).
GENERATE = _generate_kinds()


def _line_formats() -> tuple:
    from .._shared.formats_line import LineFormat

    return (
        LineFormat("emulab.top", "Emulab .top text (an experiment)", option="emulab",
                   detect=("top", "emulab", "text"), read=io.read_top,
                   write=io.write_top, suffixes=(".top",), holds=("top",),
                   sample=lambda: generators.random_topology(8, seed=2),
                   fuzz_target="testbed_top"),
        LineFormat("emulab.ptop", "Emulab .ptop text (a testbed)", option="emulab",
                   detect=("ptop", "emulab", "text"), read=io.read_ptop,
                   write=io.write_ptop, suffixes=(".ptop",), holds=("ptop",),
                   sample=lambda: generators.deterlab(10, 2, seed=2),
                   fuzz_target="testbed_ptop"),
    )  # fmt: skip


#: The Emulab line formats: an experiment (``.top``) and a testbed (``.ptop``).
LINE_FORMATS = _line_formats()
