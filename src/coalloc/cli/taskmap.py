"""``coalloc taskmap ...``: map, generate, verify and solve-batch for task mapping."""

from __future__ import annotations

from .. import taskmap
from ..taskmap.io import (
    read_mapping_result,
    read_resource_graph,
    read_task_graph,
    write_instance,
    write_mapping_result,
)
from . import _common as common

__all__ = ["add_commands"]


def _cmd_map(args) -> int:
    tasks = read_task_graph(args.tasks)
    resources = read_resource_graph(args.resources)
    params = dict(args.param or [])
    result = taskmap.solve(tasks, resources, args.method, seed=args.seed, **params)
    if result.mapping is None:
        print(f"{args.tasks}: {result.method}: no mapping ({result.status}): {result.message}")
        return 1
    report = taskmap.verify_mapping(tasks, resources, result.mapping, claimed=result.max_occupancy)
    b = result.bottleneck
    ms = result.timings.get("total", float("nan")) * 1e3
    print(
        f"{args.tasks}: {result.method} mapped {tasks.n} tasks on "
        f"{len(set(result.mapping.tolist()))}/{resources.n_processors} processors in {ms:.2f} ms; "
        f"max occupancy {result.max_occupancy:.6g} (throughput {result.throughput:.6g}) at "
        f"{b.kind} {b.index}"
    )
    if result.bound is not None:
        print(f"  lower bound {result.bound:.6g}, gap {100 * (result.gap or 0.0):.1f}%")
    if args.verbose:
        for key, value in result.timings.items():
            print(f"  time {key}: {value * 1e3:.3f} ms")
        for key, value in result.iterations.items():
            print(f"  {key}: {value}")
        print(f"  {report}")
    if args.output:
        summary = {"valid": report.valid, "max_occupancy": report.max_occupancy,
                   "matches": report.matches}  # fmt: skip
        write_mapping_result(args.output, result, verify=summary)
        print(f"result written to {args.output}")
    return 0 if report.valid and report.matches else 1


def _cmd_verify(args) -> int:
    tasks = read_task_graph(args.tasks)
    resources = read_resource_graph(args.resources)
    data = read_mapping_result(args.result)
    report = taskmap.verify_mapping(
        tasks, resources, data["mapping"], claimed=data.get("max_occupancy")
    )
    print(str(report))
    return 0 if report.ok else 1


def _cmd_generate(args) -> int:
    from ..taskmap import generators

    tasks, resources = generators.table1_instance(args.c, seed=args.seed)
    meta = {"setup": "table1", "c": args.c, "seed": args.seed}
    write_instance(args.output, tasks, resources, metadata=meta)
    print(
        f"wrote task-mapping instance ({tasks.n} tasks, {resources.n_processors} processors) "
        f"to {args.output}"
    )
    return 0


def _cmd_solve_batch(args) -> int:
    return common.run_batch(args, "taskmap")


def add_commands(sub, *, aliases: bool = False) -> None:
    """Add the task-mapping subcommands to ``sub`` (with ``aliases``: only ``map``)."""
    p = sub.add_parser("map", help="map a task graph onto a resource graph (Taura & Chien)")
    p.add_argument("tasks", help="task graph file (JSON; see 'coalloc docs formats')")
    p.add_argument("resources", help="resource graph file (JSON; see 'coalloc docs formats')")
    p.add_argument(
        "--method", default=taskmap.DEFAULT_METHOD, choices=sorted(taskmap.METHODS)
    )
    common.add_seed(p, "seed of the clustering")
    common.add_params(p, "processor_order=index")
    common.add_output(p, "write the mapping as JSON to this file")
    common.add_verbose(p)
    p.set_defaults(func=_cmd_map)
    if aliases:
        return

    p = sub.add_parser("verify", help="check a mapping result file against its graphs")
    p.add_argument("tasks")
    p.add_argument("resources")
    p.add_argument("result")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser(
        "generate", help="write a Table 1 instance of section 5 (both graphs in one file)"
    )
    p.add_argument("--c", type=float, default=1.0, help="communication intensity (1 to 16)")
    common.add_seed(p)
    common.add_output(p, "instance file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser(
        "solve-batch", help="map many instance files in parallel, one JSON line per instance"
    )
    common.add_batch_options(
        p, taskmap.METHODS, taskmap.DEFAULT_METHOD, "processor_order=index"
    )
    p.set_defaults(func=_cmd_solve_batch)
