"""``coalloc taskmap ...``: map, generate, verify and solve-batch for task mapping."""

from __future__ import annotations

import argparse
import json
import os
from typing import Optional

from .. import taskmap
from .._shared.jsonio import load_json
from .._shared.result import jsonable
from ..cli import _common as common
from ..cli._generate import add_generate, run_generate
from ..cli.plot import picture_done, picture_params
from ..taskmap.constraints import PARAMS as TASKMAP_PARAMS
from ..taskmap.io import (
    read_instance,
    read_mapping_result,
    read_resource_graph,
    read_task_graph,
    write_mapping_result,
)

__all__ = ["add_commands", "read_graphs"]


#: What the TASKS file holds: ``--format`` offers the words of the spec's formats that hold
#: it (JSON, METIS, Scotch).
TASK_HOLDS = ("taskgraph", "instance")
_TASKS = "a task graph (coalloc.taskgraph JSON, METIS or Scotch)"
_AS = {"json": "a coalloc.taskgraph JSON file", "metis": "a METIS graph",
       "scotch": "a Scotch graph"}  # fmt: skip


def read_graphs(instance: str, resources: Optional[str] = None, fmt: Optional[str] = None,
                command: str = "taskmap map") -> tuple:  # fmt: skip
    """``(TaskGraph, ResourceGraph)`` from the two graph files or from one instance file.

    With ``resources`` given, ``instance`` is a task graph and ``resources`` a resource
    graph; without it, ``instance`` holds both graphs (the ``coalloc.taskmap.instance`` file
    ``coalloc taskmap generate`` writes). Each file is recognised by its content (a task
    graph: ``coalloc.taskgraph`` JSON, a METIS graph or a Scotch graph,
    :mod:`coalloc.taskmap.graphfiles`), whatever its name; ``fmt`` (``--format``) forces
    the task graph's format. A file of another kind is refused in one line that says what
    it looked like and what was expected. ``coalloc taskmap map``, ``verify`` and ``coalloc
    plot taskmap`` read their input through this function.
    """
    from .._shared.formats_line import format_words
    from .._shared.sniff import sniff, wrong_kind
    from ..taskmap.graphfiles import (
        METIS_SUFFIXES,
        SCOTCH_SUFFIXES,
        read_metis_graph,
        read_scotch_graph,
    )
    from ..taskmap.io import INSTANCE_FORMAT

    words = format_words("taskmap", *TASK_HOLDS)
    if fmt is not None and fmt not in words:
        raise ValueError(f"--format must be one of {words}, got {fmt!r}")
    found = sniff(instance) if fmt is None else None
    if resources is None:
        if (
            fmt is not None
            or found.kind in ("metis", "scotch")
            or (found.kind == "json" and found.format not in (INSTANCE_FORMAT, None))
        ):
            shown = found or sniff(instance)
            raise wrong_kind(instance, shown, command,
                             f"one {INSTANCE_FORMAT} JSON file (both graphs), or TASKS RESOURCES",
                             "give the resource graph too (TASKS RESOURCES)")  # fmt: skip
        if found.kind not in ("json", "missing"):
            raise wrong_kind(instance, found, command,
                             f"one {INSTANCE_FORMAT} JSON file (both graphs), or TASKS "
                             "RESOURCES")  # fmt: skip
        return read_instance(instance)
    # the line formats of a task graph, as the spec declares them (METIS, Scotch, ...): the
    # sniffed kind that names each (its first ``detect``), its reader, what it is
    declared = common.line_formats_of("taskmap", *TASK_HOLDS)
    kind = fmt or {"json": "json", **{f.detect[0]: w for w, f in declared.items()}}.get(found.kind)
    if kind is None and found.kind == "missing":
        kind = "json"  # its own 'cannot read' message
    if kind is None and found.kind == "text":  # a damaged graph: its name says which reader
        suffix = os.path.splitext(str(instance))[1].lower()
        kind = (
            "metis" if suffix in METIS_SUFFIXES else "scotch" if suffix in SCOTCH_SUFFIXES else None
        )
    if kind is None:
        raise wrong_kind(instance, found, command, _TASKS,
                         "give --format metis or --format scotch to read it as one")  # fmt: skip
    if kind == "json" and found is not None and found.format == INSTANCE_FORMAT:
        raise wrong_kind(instance, found, command, f"{_TASKS} followed by RESOURCES",
                         "give the instance file alone")  # fmt: skip
    readers = {"json": read_task_graph, "metis": read_metis_graph, "scotch": read_scotch_graph}
    reader = readers.get(kind) or declared[kind].read
    what = _AS.get(kind) or declared[kind].description
    tasks = common.read_as(instance, fmt, reader, command=command,
                           expected=f"{what} (the task graph)")
    rfound = sniff(resources)
    if rfound.kind not in ("json", "missing"):
        expected = "a resource graph (coalloc.resourcegraph JSON) after the task graph"
        raise wrong_kind(resources, rfound, command, expected)
    return tasks, read_resource_graph(resources)


def occupancy_lower_bound(tasks, resources) -> float:
    """A cheap lower bound on the maximum occupancy of every mapping:
    :func:`coalloc.taskmap.bounds.lower_bound` (kept here under its older name)."""
    from ..taskmap.bounds import lower_bound

    return lower_bound(tasks, resources)


def _where(resources, kind: str, index: int) -> str:
    names = resources.names
    if kind == "node":
        return f"node {index}" + (f" ({names[index]})" if names is not None else "")
    u, v = (int(x) for x in resources.links[index])
    ends = f"{names[u]}-{names[v]}" if names is not None else f"{u}-{v}"
    return f"link {index} ({ends})"


def _busiest(resources, node_occ, link_occ, k: int = 5) -> str:
    items = [(float(o), "node", i) for i, o in enumerate(node_occ) if resources.is_processor[i]]
    items += [(float(o), "link", i) for i, o in enumerate(link_occ)]
    items.sort(key=lambda t: (-t[0], t[1], t[2]))
    return "; ".join(f"{_where(resources, kind, i)} {o:.4g}" for o, kind, i in items[:k])


def _map_quality(result) -> str:
    """The line that says how good the mapping is: its status and its gap to the bound."""
    got, bound = float(result.max_occupancy), result.bound
    if bound is None:
        return f"  status: {result.status} (no lower bound: drop --no-bound to get one)"
    if result.status == "optimal":
        return f"  status: optimal: max occupancy {got:.6g} meets the lower bound {bound:.6g}"
    return (
        f"  status: {result.status}: gap {common.describe_gap(result.gap)} against the lower "
        f"bound {bound:.6g} (no mapping has max occupancy below it)"
    )


def _binds(args, tasks, resources, result) -> Optional[dict]:
    """``--explain`` on a mapping: the bottleneck that sets its maximum occupancy and the
    witness of the lower bound (:func:`coalloc.taskmap.explain_result`); task mapping
    refuses nothing, so this is its one explanation."""
    if not getattr(args, "explain", False):
        return None
    return taskmap.explain_result(tasks, resources, result)


def _cmd_map(args) -> int:
    tasks, resources = read_graphs(args.tasks, args.resources, args.format)
    params = common.exact_params(args, timed=tuple(taskmap.METHODS))
    result = taskmap.solve(tasks, resources, args.method, seed=args.seed, bound=args.bound,
                           **params)  # fmt: skip
    if result.mapping is None:
        if args.output:
            write_mapping_result(args.output, result)  # the status and why, for scripts
        if args.json:
            print(json.dumps(jsonable({"tasks": args.tasks, **result.to_dict()})))
            return 1
        print(f"{args.tasks}: {result.method}: no mapping ({result.status}): {result.message}")
        return 1
    report = taskmap.verify_mapping(tasks, resources, result.mapping, claimed=result.max_occupancy)
    node_occ, link_occ = taskmap.occupancy_graph(tasks, resources, result.mapping)
    summary = {"valid": report.valid, "max_occupancy": report.max_occupancy,
               "matches": report.matches}  # fmt: skip
    if args.output:
        write_mapping_result(args.output, result, verify=summary, tasks=tasks, resources=resources)
    ok = 0 if report.valid and report.matches else 1
    binds = _binds(args, tasks, resources, result)  # --explain: what binds the mapping
    if args.json:
        out = {"tasks": args.tasks, "resources": args.resources, **result.to_dict(),
               "throughput": result.throughput, "node_occupancy": node_occ,
               "link_occupancy": link_occ, "verify": summary}  # fmt: skip
        if binds is not None:
            out["binds"] = binds
        print(json.dumps(jsonable(out)))
        return ok
    b = result.bottleneck
    ms = result.timings.get("total", float("nan")) * 1e3
    print(
        f"{args.tasks}: {result.method} mapped {tasks.n} tasks on "
        f"{len(set(result.mapping.tolist()))}/{resources.n_processors} processors in {ms:.2f} ms; "
        f"max occupancy {result.max_occupancy:.6g} (throughput {result.throughput:.6g}) at "
        f"{_where(resources, b.kind, b.index)}"
    )
    print(_map_quality(result))
    print(f"  busiest: {_busiest(resources, node_occ, link_occ)}")
    if binds is not None:
        print(f"  what binds: {binds['sentence']}")
    if args.verbose:
        for key, value in result.timings.items():
            print(f"  time {key}: {value * 1e3:.3f} ms")
        for key, value in result.iterations.items():
            print(f"  {key}: {value}")
        print(f"  {report}")
    if args.output:
        print(f"result written to {args.output}")
    return ok


def _cmd_verify(args) -> int:
    files = args.files
    if len(files) not in (2, 3):
        raise ValueError(
            f"taskmap verify takes INSTANCE RESULT or TASKS RESOURCES RESULT, got {len(files)} "
            "files"
        )
    tasks, resources = read_graphs(files[0], files[1] if len(files) == 3 else None,
                                   args.format, "taskmap verify")  # fmt: skip
    data = read_mapping_result(files[-1])
    report = taskmap.verify_mapping(
        tasks, resources, data["mapping"], claimed=data.get("max_occupancy")
    )
    print(str(report))
    return 0 if report.ok else 1


#: ``coalloc taskmap generate``: built from the spec (:data:`coalloc.taskmap._spec.GENERATE`).
_cmd_generate = run_generate


def _cmd_solve_batch(args) -> int:
    return common.run_batch(args, "taskmap")


def add_format(p) -> None:
    """``--format``: the task graph file's format, when its content does not say it."""
    common.add_format_of(p, "taskmap", TASK_HOLDS, "the task graph (TASKS)")


def add_commands(sub, *, aliases: bool = False) -> None:
    """Add the task-mapping subcommands to ``sub`` (with ``aliases``: only ``map``)."""
    p = sub.add_parser("map", help="map a task graph onto a resource graph (Taura & Chien)")
    p.add_argument(
        "tasks", metavar="INSTANCE|TASKS",
        help="instance file with both graphs (what 'coalloc taskmap generate' writes), or a task "
        "graph file followed by RESOURCES (JSON; see 'coalloc docs formats'; a task graph may "
        "also be a METIS .graph or Scotch .grf file)",
    )  # fmt: skip
    p.add_argument(
        "resources", nargs="?", default=None, metavar="RESOURCES",
        help="resource graph file, when the first file is a task graph",
    )  # fmt: skip
    add_format(p)
    p.add_argument("--method", default=taskmap.DEFAULT_METHOD, choices=sorted(taskmap.METHODS))
    common.add_seed(p, "seed of the clustering")
    common.add_params(p, "paper_start=0")
    common.add_exact_options(p, TASKMAP_PARAMS["exact"])
    common.add_output(p, "write the mapping as JSON to this file")
    common.add_verbose(p)
    p.add_argument(
        "--bound", action=argparse.BooleanOptionalAction, default=True,
        help="attach the proven lower bound and the gap (default, as taskmap.solve's "
        "bound=True; --no-bound: bound=False)",
    )  # fmt: skip
    p.add_argument(
        "--json", action="store_true",
        help="print the full result (occupancies, lower bound, verification) as JSON",
    )  # fmt: skip
    p.add_argument(
        "--explain", action="store_true",
        help="say what binds the mapping: the bottleneck processor or link, what loads it, "
        "and the witness of the lower bound (with --json: under 'binds')",
    )  # fmt: skip
    p.set_defaults(func=_cmd_map)
    if aliases:
        return

    p = sub.add_parser("verify", help="check a mapping result file against its graphs")
    p.add_argument(
        "files", nargs="+", metavar="FILE",
        help="INSTANCE RESULT, or TASKS RESOURCES RESULT (the graphs as 'map' read them)",
    )  # fmt: skip
    add_format(p)
    p.set_defaults(func=_cmd_verify)

    p = add_generate(sub, "taskmap",
                     help="write a Table 1 instance of section 5 (both graphs in one file)")
    common.add_output(p, "instance file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser(
        "solve-batch", help="map many instance files in parallel, one JSON line per instance"
    )
    common.add_batch_options(p, taskmap.METHODS, taskmap.DEFAULT_METHOD, "paper_start=0")
    p.set_defaults(func=_cmd_solve_batch)


# ------------------------------------------------------------------- coalloc plot taskmap


def _is_taskmap_instance(path: str) -> bool:
    """Whether ``path`` holds both graphs (then a second file is the RESULT, not RESOURCES)."""
    from .._shared.sniff import sniff
    from ..taskmap.io import INSTANCE_FORMAT

    found = sniff(path)
    if found.kind != "json":
        return False
    data, _ = load_json(path)
    return isinstance(data, dict) and data.get("format") == INSTANCE_FORMAT


def _cmd_plot(args) -> int:
    from ..taskmap import io as tio

    resources_file, result_file = args.resources, args.result
    if result_file is None and resources_file is not None and _is_taskmap_instance(args.tasks):
        resources_file, result_file = None, resources_file  # INSTANCE RESULT
    if args.tree and args.aggregate is not None:
        flag = "--aggregate" if args.aggregate else "--no-aggregate"
        raise ValueError(f"{flag} applies to the mapping's picture, not to --tree")
    tasks, resources = read_graphs(args.tasks, resources_file, args.format, "plot taskmap")
    if args.tree:
        fig = taskmap.plot_cluster_tree(taskmap.flow_injection(tasks, seed=args.seed))
        return picture_done(fig, args)
    if result_file:
        result = tio.read_mapping_result(result_file)
    else:
        result = taskmap.solve(tasks, resources, args.method or taskmap.DEFAULT_METHOD,
                               seed=args.seed, **picture_params(args))  # fmt: skip
    fig = taskmap.plot_mapping(tasks, resources, result, seed=args.seed, aggregate=args.aggregate)
    return picture_done(fig, args)


def add_plot(fams) -> None:
    """Add ``coalloc plot taskmap`` to ``fams`` (the subparsers of ``coalloc plot``)."""
    from ..cli.plot import picture_options

    p = fams.add_parser("taskmap", help="a mapping on the resource graph, or the cluster tree",
                        description="INSTANCE [RESULT] or TASKS RESOURCES [RESULT], as "
                        "'coalloc taskmap map'.")  # fmt: skip
    p.add_argument("tasks", metavar="INSTANCE|TASKS", help="task-mapping instance file, or a "
                   "task graph followed by RESOURCES (as 'coalloc taskmap map')")  # fmt: skip
    p.add_argument("resources", nargs="?", metavar="RESOURCES",
                   help="resource graph file, when the first file is a task graph")  # fmt: skip
    p.add_argument("result", nargs="?", metavar="RESULT",
                   help="mapping file of 'coalloc taskmap map -o' (optional)")  # fmt: skip
    p.add_argument("--tree", action="store_true", help="draw the flow-injection cluster tree")
    p.add_argument("--aggregate", action=argparse.BooleanOptionalAction, default=None,
                   help="draw the processors in groups (a node's cores as one circle), or not "
                   "(--no-aggregate); default: grouped beyond "
                   f"{taskmap.plot.AGGREGATE_ABOVE} processors, as plot_mapping")  # fmt: skip
    add_format(p)
    picture_options(p, "processor_order=index")
    p.set_defaults(func=_cmd_plot)
