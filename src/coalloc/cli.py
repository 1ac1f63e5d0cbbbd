"""The ``coalloc`` command.

``coalloc solve INSTANCE.json`` solves an instance file and prints a one-line summary;
``coalloc demo`` solves the built-in example; ``coalloc generate`` writes instances of the
paper's experiments; ``coalloc verify`` checks a result file against its instance;
``coalloc solve-batch FILES... -o OUT.jsonl`` solves many instance files in parallel;
``coalloc map TASKS.json RESOURCES.json`` maps a task graph onto a resource graph (Taura &
Chien). Errors in the input are reported as one line on stderr with exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from typing import Optional, Sequence

from . import __version__, generators
from .io import InstanceError, read_instance, read_result, write_instance, write_result
from .solvers import METHODS, solve
from .verify import verify

__all__ = ["main"]


def _param(text: str):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def _summary(name: str, request, offer, result, report) -> str:
    state = "feasible" if report.feasible else f"INFEASIBLE ({report.n_violations} violations)"
    ms = result.timings.get("total", float("nan")) * 1e3
    return (
        f"{name}: {result.method} allocated {result.n_allocated}/{request.n} tasks on "
        f"{offer.m} clusters in {ms:.2f} ms; {state}"
    )


def _solve_and_report(request, offer, args, name: str) -> int:
    params = dict(args.param or [])
    result = solve(request, offer, args.method, seed=args.seed, bound=args.bound, **params)
    report = verify(request, offer, result.assignment)
    print(_summary(name, request, offer, result, report))
    if result.bound is not None:
        print(f"  upper bound {result.bound:g}, gap {100 * result.gap:.1f}%")
    if args.verbose:
        for key, value in result.timings.items():
            print(f"  time {key}: {value * 1e3:.3f} ms")
        for key, value in result.iterations.items():
            print(f"  {key}: {value}")
        print(f"  {result.message}")
    if args.output:
        write_result(args.output, result, report)
        print(f"result written to {args.output}")
    return 0 if report.feasible else 1


def _cmd_solve(args) -> int:
    request, offer = read_instance(args.instance)
    return _solve_and_report(request, offer, args, args.instance)


def _cmd_demo(args) -> int:
    with resources.files("coalloc").joinpath("data/demo.json").open("r", encoding="utf-8") as fh:
        request, offer = read_instance(fh)
    print(
        f"demo instance: {request.n} tasks ({request.n_edges // 2} links), {offer.m} clusters "
        f"with {offer.total_capacity} machines (the Fig. 2 setup of Kravtsov et al., r = 2)"
    )
    return _solve_and_report(request, offer, args, "demo")


def _cmd_generate(args) -> int:
    if args.setup == "fig2":
        n = args.n_tasks if args.n_tasks is not None else 50
        request, offer = generators.fig2(args.range_factor, n_tasks=n, seed=args.seed)
        meta = {"setup": "fig2", "range_factor": args.range_factor, "n_tasks": n, "seed": args.seed}
    else:
        n = args.n_tasks if args.n_tasks is not None else 100
        request, offer = generators.fig3(n, seed=args.seed)
        meta = {"setup": "fig3", "n_tasks": n, "seed": args.seed}
    write_instance(args.output, request, offer, metadata=meta)
    print(f"wrote {args.setup} instance ({request.n} tasks, {offer.m} clusters) to {args.output}")
    return 0


def _cmd_verify(args) -> int:
    request, offer = read_instance(args.instance)
    result = read_result(args.result)
    report = verify(request, offer, result["assignment"])
    print(str(report))
    return 0 if report.feasible else 1


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers, got {text!r}") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"must be a positive number or -1 (all CPUs), got {value}")
    return value


def _batch_line(index: int, name: str, record) -> dict:
    from .batch import BatchError

    if isinstance(record, BatchError):
        return {
            "index": index, "file": name, "ok": False, "status": "error", "seed": record.seed,
            "error": {"type": record.exc_type, "message": record.message},
        }  # fmt: skip
    result, report = record
    ok = bool(result.success and report["feasible"])
    return {"index": index, "file": name, "ok": ok, **result.to_dict(), "verify": report}


def _cmd_solve_batch(args) -> int:
    import time

    from .batch import ProgressBar, _batch_iter

    show = not args.no_progress and sys.stderr.isatty()
    records = _batch_iter(
        args.files, args.method, n_jobs=args.jobs, executor=None,
        backend="processes" if args.processes else "threads", seed=args.seed,
        chunksize=args.chunksize, max_in_flight=None, on_error="record",
        progress=ProgressBar(sys.stderr) if show else None, bound=args.bound,
        params=dict(args.param or []), with_report=True,
    )  # fmt: skip
    to_stdout = args.output == "-"
    out = sys.stdout if to_stdout else open(args.output, "w", encoding="utf-8")
    failed = []
    t0 = time.perf_counter()
    try:
        for index, (name, record) in enumerate(zip(args.files, records)):
            line = _batch_line(index, name, record)
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
            if not line["ok"]:
                failed.append(
                    str(record) if not isinstance(record, tuple)
                    else f"instance {index} ({name}): {record[0].status}, not feasible"
                )  # fmt: skip
    finally:
        if not to_stdout:
            out.close()
    elapsed = time.perf_counter() - t0
    for text in failed[:10]:
        print(f"coalloc: failed: {text}", file=sys.stderr)
    if len(failed) > 10:
        print(f"coalloc: ... and {len(failed) - 10} more failures", file=sys.stderr)
    n = len(args.files)
    where = "" if to_stdout else f"; results written to {args.output}"
    print(
        f"solved {n - len(failed)}/{n} instances ({len(failed)} failed) in {elapsed:.2f} s "
        f"({n / max(elapsed, 1e-9):.1f} instances/s){where}",
        file=sys.stderr if to_stdout else sys.stdout,
    )
    return 1 if failed else 0


def _cmd_map(args) -> int:
    from . import taskmap
    from .taskmap.io import read_resource_graph, read_task_graph, write_mapping_result

    tasks = read_task_graph(args.tasks)
    resources = read_resource_graph(args.resources)
    params = dict(args.param or [])
    result = taskmap.map_tasks(tasks, resources, method=args.method, seed=args.seed, **params)
    report = taskmap.verify_mapping(tasks, resources, result.mapping, claimed=result.max_occupancy)
    b = result.bottleneck
    ms = result.timings.get("total", float("nan")) * 1e3
    print(
        f"{args.tasks}: {result.method} mapped {tasks.n} tasks on "
        f"{len(set(result.mapping.tolist()))}/{resources.n_processors} processors in {ms:.2f} ms; "
        f"max occupancy {result.max_occupancy:.6g} (throughput {result.throughput:.6g}) at "
        f"{b.kind} {b.index}"
    )
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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``coalloc`` command."""
    parser = argparse.ArgumentParser(
        prog="coalloc", description="Topology-aware co-allocation of parallel jobs."
    )
    parser.add_argument("--version", action="version", version=f"coalloc {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def solver_options(p):
        p.add_argument("--method", default="ctaap", choices=sorted(METHODS))
        p.add_argument("--seed", type=int, default=0)
        p.add_argument(
            "-p", "--param", action="append", type=_param, metavar="KEY=VALUE",
            help="solver parameter, e.g. -p compat_fn=threshold (repeatable; JSON values)",
        )  # fmt: skip
        p.add_argument("-o", "--output", help="write the result as JSON to this file")
        p.add_argument("-v", "--verbose", action="store_true", help="print timings and counters")
        p.add_argument(
            "--bound", action="store_true", help="also compute an upper bound and the gap"
        )

    p = sub.add_parser("solve", help="solve an instance file")
    p.add_argument("instance", help="instance file (JSON, see docs/formats.md)")
    solver_options(p)
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser(
        "solve-batch", help="solve many instance files in parallel, one JSON line per instance"
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="instance files (JSON)")
    p.add_argument(
        "-j", "--jobs", type=_jobs, default=None,
        help="parallel workers (default: every CPU; -1 likewise)",
    )  # fmt: skip
    p.add_argument("--method", default="ctaap", choices=sorted(METHODS))
    p.add_argument(
        "--processes", action="store_true", help="use worker processes instead of threads"
    )
    p.add_argument(
        "--seed", type=int, default=0,
        help="batch seed; instance i is solved with coalloc.batch.instance_seed(SEED, i)",
    )  # fmt: skip
    p.add_argument(
        "-p", "--param", action="append", type=_param, metavar="KEY=VALUE",
        help="solver parameter for every instance (repeatable; JSON values)",
    )  # fmt: skip
    p.add_argument("--chunksize", type=int, default=1, help="instances per task (default 1)")
    p.add_argument("--bound", action="store_true", help="also compute upper bounds and gaps")
    p.add_argument(
        "-o", "--output", required=True,
        help="write one JSON line per instance, in input order, to this file ('-': stdout)",
    )  # fmt: skip
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=_cmd_solve_batch)

    p = sub.add_parser("demo", help="solve the built-in example instance")
    solver_options(p)
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("generate", help="write an instance of the paper's experiments")
    p.add_argument("setup", choices=["fig2", "fig3"])
    p.add_argument("--range-factor", type=int, default=1, help="fig2: offer range 1..100*r")
    p.add_argument("--n-tasks", type=int, default=None, help="number of tasks")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("map", help="map a task graph onto a resource graph (Taura & Chien)")
    p.add_argument("tasks", help="task graph file (JSON, see docs/formats.md)")
    p.add_argument("resources", help="resource graph file (JSON, see docs/formats.md)")
    p.add_argument(
        "--method", default="open+improve",
        choices=["base", "base+improve", "open", "open+improve"],
    )  # fmt: skip
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "-p", "--param", action="append", type=_param, metavar="KEY=VALUE",
        help="mapper parameter, e.g. -p processor_order=index (repeatable; JSON values)",
    )  # fmt: skip
    p.add_argument("-o", "--output", help="write the mapping as JSON to this file")
    p.add_argument("-v", "--verbose", action="store_true", help="print timings and counters")
    p.set_defaults(func=_cmd_map)

    p = sub.add_parser("verify", help="check a result file against its instance")
    p.add_argument("instance")
    p.add_argument("result")
    p.set_defaults(func=_cmd_verify)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``coalloc`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (InstanceError, ValueError, TypeError, OSError) as exc:
        print(f"coalloc: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
