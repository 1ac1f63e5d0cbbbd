"""``coalloc plot FAMILY INPUT... [RESULT] -o picture.png``: a picture of a result.

``INPUT...`` are the input files of the family's solve command, in its order (``coalloc
plot collective REQUEST POOL`` as ``coalloc collective solve REQUEST POOL``, ``coalloc plot
testbed TOP PTOP`` as ``coalloc testbed assign TOP PTOP``), then the optional RESULT file.
Without a RESULT file the instance is solved first (``--method``, ``--seed``, ``-p``). The
format of the picture follows the suffix of ``-o`` (``.png``, ``.svg``, ``.pdf``). Needs the
``[plot]`` extra (matplotlib).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from .._shared.jsonio import InstanceError, load_json
from . import _common as common

__all__ = ["add_commands"]


def _params(args) -> dict:
    return dict(getattr(args, "param", None) or [])


def _done(fig: Any, args) -> int:
    from .._shared.plotting import save_figure

    written = save_figure(fig, args.output, dpi=args.dpi)  # the one writer; -o pic: pic.png
    print(f"picture written to {written}")
    return 0


# ------------------------------------------------------------------------------ ctaap


def _cmd_ctaap(args) -> int:
    from .. import ctaap

    request, offer = ctaap.read_instance(args.instance)
    if args.result:
        result = ctaap.read_result(args.result)
        if result["assignment"].shape[0] != request.n:
            raise ValueError(
                f"{args.result}: the assignment has {result['assignment'].shape[0]} entries "
                f"but the instance has {request.n} tasks"
            )
    else:
        result = ctaap.solve(request, offer, args.method or ctaap.solvers.DEFAULT_METHOD,
                             seed=args.seed, **_params(args))  # fmt: skip
    fig = ctaap.plot_allocation(request, offer, result,
                                show_unallocated_links=args.unallocated_links)  # fmt: skip
    return _done(fig, args)


# ---------------------------------------------------------------------------- taskmap


def _is_taskmap_instance(path: str) -> bool:
    """Whether ``path`` holds both graphs (then a second file is the RESULT, not RESOURCES)."""
    from ..taskmap.io import INSTANCE_FORMAT

    data, _ = load_json(path)
    return isinstance(data, dict) and data.get("format") == INSTANCE_FORMAT


def _cmd_taskmap(args) -> int:
    from .. import taskmap
    from ..taskmap import io as tio
    from .taskmap import read_graphs

    resources_file, result_file = args.resources, args.result
    if result_file is None and resources_file is not None and _is_taskmap_instance(args.tasks):
        resources_file, result_file = None, resources_file  # INSTANCE RESULT
    tasks, resources = read_graphs(args.tasks, resources_file)
    if args.tree:
        fig = taskmap.plot_cluster_tree(taskmap.flow_injection(tasks, seed=args.seed))
        return _done(fig, args)
    if result_file:
        result = tio.read_mapping_result(result_file)
    else:
        result = taskmap.solve(tasks, resources, args.method or taskmap.DEFAULT_METHOD,
                               seed=args.seed, **_params(args))  # fmt: skip
    return _done(taskmap.plot_mapping(tasks, resources, result, seed=args.seed), args)


# ------------------------------------------------------------------------- collective


def _collective_result(path: str, pool, request) -> dict:
    data, name = load_json(path)
    if not isinstance(data, dict) or "resources" not in data or "start" not in data:
        raise InstanceError(f"{name}: not a collective result (needs start and resources)")
    if data["start"] is None or data["resources"] is None:
        raise InstanceError(f"{name}: the result holds no reservation (the request was rejected)")
    try:
        res = np.asarray(data["resources"], dtype=np.int64).reshape(-1)
        amounts = np.asarray(data.get("amounts"), dtype=np.float64)
        start = float(data["start"])
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{name}: start, resources or amounts malformed: {exc}") from None
    if res.size and (res.min() < 0 or res.max() >= pool.n_nodes):
        raise InstanceError(f"{name}: resources must be node indices in [0, {pool.n_nodes})")
    if amounts.shape != (res.size, pool.n_properties):
        raise InstanceError(
            f"{name}: amounts must have shape ({res.size}, {pool.n_properties}), "
            f"got {amounts.shape}"
        )
    return {"start": start, "resources": res, "amounts": amounts}


def _cmd_collective(args) -> int:
    from .. import collective
    from .collective import _read_pair

    request, pool = _read_pair(args)
    if args.result:
        result: Any = _collective_result(args.result, pool, request)
    else:
        result = collective.solve(request, pool, args.method, seed=args.seed,
                                  **_params(args))  # fmt: skip
        if result.start is None:
            print(f"the request is rejected ({result.status}): {result.message}; drawing the "
                  "timetables only")  # fmt: skip
            result = None
    fig = collective.plot_timetable(request, pool, result, property=args.property,
                                    max_nodes=args.max_nodes)  # fmt: skip
    return _done(fig, args)


# ---------------------------------------------------------------------------- testbed


def _cmd_testbed(args) -> int:
    from .. import testbed

    top, ptop = testbed.read_top(args.top), testbed.read_ptop(args.ptop)
    if args.result:
        data, name = load_json(args.result)
        if not isinstance(data, dict) or not isinstance(data.get("mapping"), dict):
            raise InstanceError(f"{name}: expected the JSON of 'coalloc testbed assign --json' "
                                "with a mapping")  # fmt: skip
        result: Any = data
    else:
        result = testbed.assign(top, ptop, args.method or testbed.DEFAULT_METHOD,
                                seed=args.seed, **_params(args))  # fmt: skip
        if result.mapping is None:
            raise ValueError(f"no mapping to draw: {result.message}")
    return _done(testbed.plot_mapping(top, ptop, result, show_unused=not args.used_only), args)


# -------------------------------------------------------------------------- loadshare


def _cmd_loadshare(args) -> int:
    from .. import loadshare

    prob = loadshare.read_problem(args.problem)
    if args.loads:
        if args.result:
            data, name = load_json(args.result)
            if not isinstance(data, dict) or not isinstance(data.get("placement"), list):
                raise InstanceError(f"{name}: expected a loadshare result with a placement")
            result: Any = {"placement": np.asarray(data["placement"])}
        else:
            result = loadshare.share(prob, args.method or loadshare.DEFAULT_METHOD,
                                     seed=args.seed, **_params(args))  # fmt: skip
        return _done(loadshare.plot_loads(prob, result), args)
    if args.result:
        raise ValueError(
            "the coalitions over generations are not kept in result files: "
            "drop RESULT (the problem is solved with dmcf-gga) or add --loads"
        )
    if args.method not in (None, "dmcf-gga"):
        raise ValueError("the coalitions over generations need --method dmcf-gga")
    params = {"coalition_size": args.coalition_size, **_params(args)}
    result = loadshare.share(prob, "dmcf-gga", seed=args.seed, coalition_history=args.every,
                             **params)  # fmt: skip
    return _done(loadshare.plot_coalitions(prob, result), args)


# ----------------------------------------------------------------------------- parser


def _common_options(p: argparse.ArgumentParser, example: str) -> None:
    common.add_output(p, "picture to write (.png, .svg, .pdf ...)", required=True)
    p.add_argument("--method", default=None, help="method used when no RESULT is given")
    common.add_seed(p)
    common.add_params(p, example)
    p.add_argument(
        "--dpi", type=common.count(1, 10_000), default=120, help="resolution of raster pictures"
    )


def add_commands(sub) -> None:
    """Add ``plot`` and its per-family subcommands to ``sub`` (a subparsers object)."""
    top = sub.add_parser(
        "plot", help="draw a result as a picture (needs the [plot] extra: matplotlib)",
        description="Draw a result of any family as a picture. The input files come in the "
        "order of the family's solve command, then the optional RESULT file; without it the "
        "instance is solved first (--method, --seed, -p). The format follows the suffix of -o "
        "(.png, .svg, .pdf). Needs the [plot] extra (matplotlib).",
    )  # fmt: skip
    fams = top.add_subparsers(dest="family", required=True, metavar="FAMILY")

    p = fams.add_parser("ctaap", help="the request graph coloured by cluster")
    p.add_argument("instance", help="CTAAP instance file (JSON)")
    p.add_argument("result", nargs="?", help="result file of 'coalloc solve -o' (optional)")
    p.add_argument("--unallocated-links", action="store_true",
                   help="also draw the links of unallocated tasks")  # fmt: skip
    _common_options(p, "compat_fn=threshold")
    p.set_defaults(func=_cmd_ctaap)

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
    _common_options(p, "processor_order=index")
    p.set_defaults(func=_cmd_taskmap)

    p = fams.add_parser("collective", help="timetables with the new reservation",
                        description="REQUEST POOL [RESULT], as 'coalloc collective solve' "
                        "(an instance file stands for both: INST INST; the old order "
                        "POOL REQUEST still works, deprecated).")  # fmt: skip
    p.add_argument("request", help="request file (JSON) or an instance file")
    p.add_argument("pool", help="pool file (JSON or CSV) or an instance file")
    p.add_argument("result", nargs="?", help="result file of 'collective solve -o' (optional)")
    p.add_argument("--property", default=None, help="property drawn (default: the first "
                   "the request asks a total of)")  # fmt: skip
    p.add_argument("--max-nodes", type=common.count(), default=30, help="nodes drawn at most")
    _common_options(p, "backend=numpy")
    p.set_defaults(func=_cmd_collective)

    p = fams.add_parser("testbed", help="virtual nodes on their PCs, grouped by switch")
    p.add_argument("top", help="virtual topology (.top), as 'coalloc testbed assign TOP PTOP'")
    p.add_argument("ptop", help="physical topology (.ptop)")
    p.add_argument("result", nargs="?",
                   help="JSON of 'coalloc testbed assign --json' (optional)")  # fmt: skip
    p.add_argument("--used-only", action="store_true", help="leave out the unused PCs")
    _common_options(p, 'scoring="2m"')
    p.set_defaults(func=_cmd_testbed)

    p = fams.add_parser("loadshare", help="DMCF-GGA's coalitions over generations, or loads")
    p.add_argument("problem", help="load-sharing problem file (JSON), as 'loadshare share'")
    p.add_argument("result", nargs="?", help="result file of 'loadshare share -o' (--loads)")
    p.add_argument(
        "--loads",
        action="store_true",
        help="draw node loads against capacity instead of the coalitions",
    )
    p.add_argument("--coalition-size", type=common.count(), default=23, help="nodes per coalition")
    p.add_argument(
        "--every",
        type=common.count(),
        default=1,
        help="keep the coalitions every EVERY generations (default 1)",
    )
    _common_options(p, "th_c=0.1")
    p.set_defaults(func=_cmd_loadshare)
