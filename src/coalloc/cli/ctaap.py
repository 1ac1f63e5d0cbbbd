"""``coalloc ctaap ...``: solve, verify, generate, solve-batch and demo for CTAAP."""

from __future__ import annotations

import argparse
from importlib import resources

import numpy as np

from .. import ctaap
from ..ctaap import generators
from ..ctaap.io import read_instance, read_result, write_instance, write_result
from . import _common as common

__all__ = ["add_commands"]


def _summary(name: str, request, offer, result, report) -> str:
    state = "feasible" if report.feasible else f"INFEASIBLE ({report.n_violations} violations)"
    ms = result.timings.get("total", float("nan")) * 1e3
    return (
        f"{name}: {result.method} allocated {result.n_allocated}/{request.n} tasks on "
        f"{offer.m} clusters in {ms:.2f} ms; {state}"
    )


def _solve_and_report(request, offer, args, name: str) -> int:
    params = common.solver_params(args)
    if args.method != "exact":
        for key in ("time_limit", "backend"):
            if getattr(args, key) is not None:
                raise ValueError(f"--{key.replace('_', '-')} applies to --method exact only")
    result = ctaap.solve(request, offer, args.method, seed=args.seed, bound=args.bound, **params)
    report = ctaap.verify(request, offer, result.assignment)
    print(_summary(name, request, offer, result, report))
    line = common.describe_bound(result, "upper")
    if line:
        print(line)
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
    demo = resources.files("coalloc.ctaap").joinpath("data/demo.json")
    with demo.open("r", encoding="utf-8") as fh:
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
    assignment = result["assignment"]
    if assignment.shape[0] != request.n:
        raise ValueError(
            f"{args.result}: the assignment has {assignment.shape[0]} entries but the instance "
            f"has {request.n} tasks"
        )
    report = ctaap.verify(request, offer, assignment)
    claims = {"n_tasks": request.n, "n_allocated": int(np.count_nonzero(assignment >= 0))}
    for key, actual in claims.items():
        if result.get(key) is not None and result[key] != actual:
            raise ValueError(
                f"{args.result}: claims {key} = {result[key]} but the assignment gives {actual}"
            )
    print(str(report))
    return 0 if report.feasible else 1


def _cmd_solve_batch(args) -> int:
    return common.run_batch(args, "ctaap", {"bound": True} if args.bound else None)


def _solver_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default=ctaap.solvers.DEFAULT_METHOD, choices=sorted(ctaap.METHODS))
    common.add_seed(p)
    common.add_params(p, "compat_fn=threshold")
    common.add_exact_options(p, ctaap.exact.BACKENDS)
    common.add_output(p, "write the result as JSON to this file")
    common.add_verbose(p)
    p.add_argument("--bound", action="store_true", help="also compute an upper bound and the gap")


def add_commands(sub, *, aliases: bool = False) -> None:
    """Add the CTAAP subcommands to ``sub`` (a subparsers object).

    With ``aliases`` only the commands that stay one step away at the top level are added
    (``solve``, ``demo``, ``verify``, ``generate``, ``solve-batch``).
    """
    p = sub.add_parser("solve", help="solve a CTAAP instance file")
    p.add_argument("instance", help="instance file (JSON; see 'coalloc docs formats')")
    _solver_options(p)
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser(
        "solve-batch", help="solve many instance files in parallel, one JSON line per instance"
    )
    common.add_batch_options(p, ctaap.METHODS, ctaap.solvers.DEFAULT_METHOD, "compat_fn=threshold")
    p.add_argument("--bound", action="store_true", help="also compute upper bounds and gaps")
    p.set_defaults(func=_cmd_solve_batch)

    p = sub.add_parser("demo", help="solve the built-in example instance")
    _solver_options(p)
    p.set_defaults(func=_cmd_demo)

    p = sub.add_parser("generate", help="write an instance of the paper's experiments")
    p.add_argument("setup", choices=["fig2", "fig3"])
    p.add_argument("--range-factor", type=int, default=1, help="fig2: offer range 1..100*r")
    p.add_argument("--n-tasks", type=int, default=None, help="number of tasks")
    common.add_seed(p)
    common.add_output(p, "instance file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("verify", help="check a result file against its instance")
    p.add_argument("instance")
    p.add_argument("result")
    p.set_defaults(func=_cmd_verify)
