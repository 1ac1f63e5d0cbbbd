"""``coalloc loadshare ...``: share, gap, generate, verify and solve-batch for load sharing."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from .. import loadshare
from .._shared.jsonio import InstanceError, load_json, write_text_atomic
from .._shared.result import jsonable, relative_gap
from ..cli import _common as common
from ..cli.plot import picture_done, picture_params
from ..loadshare.constraints import GAP_PARAMS, PARAMS
from ..loadshare.io import read_gap, read_problem, write_gap, write_problem

__all__ = ["add_commands"]


def _share_quality(prob, res) -> str:
    """How the throughput compares with the bound ``min(total load, total capacity)``."""
    if not res.has_solution:
        return "  quality: no placement"
    if res.status == "optimal":
        return "  quality: optimal: the throughput meets a proven bound"
    gap = relative_gap(res.throughput, res.bound, sense="max")
    return (
        f"  quality: gap {100 * gap:.3f}% to the bound {res.bound:.6g} = min(total load, "
        "total capacity) (no placement does better; whole jobs may not reach it)"
    )


def _cmd_share(args) -> int:
    prob = read_problem(args.problem)
    params = common.exact_params(args, timed=tuple(loadshare.METHODS))  # all take a limit
    res = loadshare.share(prob, args.method, coalition_size=args.coalition_size, seed=args.seed,
                          **params)  # fmt: skip
    rep = loadshare.verify_placement(prob, res.placement, claimed=res.throughput)
    if args.json:
        data = res.to_dict()
        data["verify"] = rep.to_dict()
        data["node_load"] = loadshare.node_loads(prob, res.placement)
        data["capacity"] = prob.capacity
        print(json.dumps(jsonable(data)))
        if args.output:
            write_text_atomic(args.output, json.dumps(jsonable(res.to_dict())) + "\n")
        return 0 if res.has_solution and rep.ok else 1
    ms = res.timings.get("total", float("nan")) * 1e3
    print(f"{args.problem}: {res.method} ({res.status}) on {prob.n_nodes} nodes, "
          f"{prob.n_jobs} jobs in {ms:.2f} ms: throughput {res.throughput:.6g} of bound "
          f"{res.bound:.6g} ({100 * res.ratio:.3f} %)")  # fmt: skip
    print(_share_quality(prob, res))
    if res.method == "dmcf-gga":
        cost = res.cost(args.latency)
        print(f"  {res.generations} generations, {res.migrations} migrations, "
              f"{res.messages.get('total', 0)} messages; search cost {cost['total']:.3f} s at "
              f"{1e3 * args.latency:g} ms per message")  # fmt: skip
    if args.verbose:
        for key, value in res.iterations.items():
            print(f"  {key}: {value}")
        print(f"  {rep}")
    if args.output:
        data = res.to_dict()
        data["verify"] = rep.to_dict()
        write_text_atomic(args.output, json.dumps(data) + "\n")
        print(f"result written to {args.output}")
    return 0 if res.has_solution and rep.ok else 1  # 1: no (verified) solution


def _cmd_gap(args) -> int:
    instances = read_gap(args.file)
    if args.instance is not None:
        if not 1 <= args.instance <= len(instances):
            raise ValueError(f"--instance must be in 1..{len(instances)}, got {args.instance}")
        chosen = [(args.instance, instances[args.instance - 1])]
    else:
        chosen = list(enumerate(instances, start=1))
    rows = []
    ok = True
    for k, inst in chosen:
        extra = {} if args.solver is None else {"solver": args.solver}
        if extra and args.method != "exact":
            raise ValueError("--solver applies to --method exact only")
        res = loadshare.solve_gap(inst, args.method, sense=args.sense,
                                  assign_all=not args.partial, time_limit=args.time_limit,
                                  seed=args.seed, **extra)  # fmt: skip
        line = (f"{args.file}#{k} ({inst.m}x{inst.n}): {res.method} {res.status} "
                f"objective {res.objective} bound {res.bound}")  # fmt: skip
        if res.gap is not None:
            line += f" gap {100 * res.gap:.3f} %"
        line += f" in {res.timings['total']:.3f} s"
        if res.assignment is not None:
            rep = loadshare.verify_gap(inst, res.assignment, assign_all=not args.partial,
                                       claimed=res.objective)  # fmt: skip
            ok &= rep.ok
            if not rep.ok:
                line += f"; VERIFY FAILED: {rep}"
        else:
            ok &= res.status == "infeasible"
        print(line)
        rows.append({"instance": k, **res.to_dict()})
    if args.output:
        write_text_atomic(args.output, "".join(json.dumps(row) + "\n" for row in rows))
        print(f"results written to {args.output}")
    return 0 if ok else 1


def _cmd_generate(args) -> int:
    if args.kind == "paper":
        prob = loadshare.generators.paper_setup(args.nodes, seed=args.seed, arrival=args.arrival)
        write_problem(args.output, prob,
                      metadata={"setup": "fig5", "seed": args.seed, "arrival": args.arrival})
        print(f"wrote load-sharing problem ({prob.n_nodes} nodes, {prob.n_jobs} jobs) "
              f"to {args.output}")  # fmt: skip
        return 0
    insts = [loadshare.generate_gap(args.kind, args.agents, args.items, seed=args.seed + k)
             for k in range(args.count)]  # fmt: skip
    write_gap(args.output, insts, multi=args.count > 1 or not args.single)
    print(f"wrote {args.count} GAP instance(s) of type {args.kind.upper()} "
          f"({args.agents}x{args.items}) to {args.output}")  # fmt: skip
    return 0


def _cmd_verify(args) -> int:
    from .._shared.jsonio import load_json

    problem_data, problem_name = load_json(args.problem)
    data, name = load_json(args.result)
    gap_format = loadshare.GapProblem.format
    is_gap = isinstance(problem_data, dict) and problem_data.get("format") == gap_format
    key = "assignment" if is_gap else "placement"
    if not isinstance(data, dict) or key not in data:
        raise ValueError(f"{name}: no {key!r} in the result file")
    try:
        if is_gap:  # a GAP instance (coalloc.loadshare.gap) and a GAP result or batch line
            inst = loadshare.gap_from_dict(problem_data, source=problem_name)
            assign_all = data.get("assign_all", True)
            if not isinstance(assign_all, bool):
                raise TypeError(f"assign_all must be a bool, got {type(assign_all).__name__}")
            rep = loadshare.verify_gap(inst, data["assignment"], assign_all=assign_all,
                                       claimed=data.get("objective"))  # fmt: skip
        else:
            prob = loadshare.io.problem_from_dict(problem_data, source=problem_name)
            rep = loadshare.verify_placement(prob, data["placement"],
                                             claimed=data.get("throughput"))  # fmt: skip
    except (TypeError, ValueError) as exc:  # a malformed result: say which file
        if isinstance(exc, InstanceError):
            raise
        raise ValueError(f"{name}: {exc}") from None
    print(str(rep))
    return 0 if rep.ok else 1


def _cmd_solve_batch(args) -> int:
    return common.run_batch(args, "loadshare")


#: Sizes and counts: integers >= 1 in ASCII decimal digits.
_positive_int = common.count()


def add_commands(sub) -> None:
    """Add the load-sharing subcommands to ``sub``."""
    p = sub.add_parser("share", help="share the jobs of a grid (DMCF-GGA, baselines, exact)")
    p.add_argument("problem", help="load-sharing problem file (JSON, coalloc.loadshare.instance)")
    p.add_argument("--method", default=loadshare.DEFAULT_METHOD, choices=sorted(loadshare.METHODS))
    common.add_table_option(p, "--coalition-size", PARAMS["dmcf-gga"]["coalition_size"],
                            default=None, metavar="N",
                            help="nodes per coalition (coalition methods; default 23)")  # fmt: skip
    p.add_argument("--latency", type=common.Real(0.0), default=0.7e-3,
                   help="seconds per sequential round of messages in the cost model "
                   "(default: DAS-3's 0.7 ms)")  # fmt: skip
    common.add_seed(p)
    common.add_params(p, "th_c=0.1")
    common.add_exact_options(p, PARAMS["exact"])
    common.add_output(p, "write the result (with the placement) as JSON")
    common.add_verbose(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the full result (with node loads and verification) as JSON",
    )
    p.set_defaults(func=_cmd_share)

    p = sub.add_parser("gap", help="solve OR-Library GAP instances (exact or heuristic)")
    p.add_argument("file", help="OR-Library GAP file (multi-instance or one instance)")
    p.add_argument("--method", default="heuristic", choices=["heuristic", "exact"])
    gap = GAP_PARAMS["heuristic"]  # the exact method's table is the same
    common.add_table_option(p, "--sense", gap["sense"], default="min",
                            help="minimise or maximise the cost")  # fmt: skip
    p.add_argument("--partial", action="store_true", help="items may stay unassigned")
    p.add_argument(
        "--instance", type=common.count(), default=None, help="solve only instance K (1-based)"
    )
    common.add_table_option(p, "--time-limit", gap["time_limit"], default=None,
                            metavar="SECONDS", help="seconds per instance")  # fmt: skip
    common.add_table_option(p, "--solver", gap["solver"], default=None,
                            help="the exact method's solver (default cpsat)")  # fmt: skip
    common.add_seed(p)
    common.add_output(p, "write one JSON line per instance")
    p.set_defaults(func=_cmd_gap)

    p = sub.add_parser("generate", help="write a Fig. 5 grid or GAP instances of type A-D")
    p.add_argument("kind", choices=["paper", "a", "b", "c", "d"])
    p.add_argument("--nodes", type=_positive_int, default=500, help="nodes (paper setup)")
    p.add_argument("--arrival", default=loadshare.generators.ARRIVALS[0],
                   choices=loadshare.generators.ARRIVALS,
                   help="when jobs arrive (paper setup; coalloc docs loadshare)")  # fmt: skip
    p.add_argument("--agents", type=_positive_int, default=5, help="agents (GAP)")
    p.add_argument("--items", type=_positive_int, default=100, help="items (GAP)")
    p.add_argument("--count", type=_positive_int, default=1, help="instances (GAP)")
    p.add_argument("--single", action="store_true", help="one-instance layout (no count)")
    common.add_seed(p)
    common.add_output(p, "file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser(
        "verify", help="check a share result against its problem, or a GAP result (a "
        "solve-batch line) against its coalloc.loadshare.gap instance"
    )  # fmt: skip
    p.add_argument("problem")
    p.add_argument("result")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser(
        "solve-batch",
        help="solve many problem files in parallel (JSON lines): load-sharing problems "
        "(coalloc.loadshare.instance) and GAP instances (coalloc.loadshare.gap), mixed freely",
    )  # fmt: skip
    # --method: by default each file's kind runs its own default (portfolio; the GAP: heuristic)
    common.add_batch_options(p, [*loadshare.METHODS, *loadshare.GAP_METHODS], None,
                             "coalition_size=45")  # fmt: skip
    p.set_defaults(func=_cmd_solve_batch)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)


# ------------------------------------------------------------------- coalloc plot loadshare


def _cmd_plot(args) -> int:
    prob = loadshare.read_problem(args.problem)
    if args.loads:
        if args.result:
            data, name = load_json(args.result)
            if not isinstance(data, dict) or not isinstance(data.get("placement"), list):
                raise InstanceError(f"{name}: expected a loadshare result with a placement")
            result: Any = {"placement": np.asarray(data["placement"])}
        else:
            result = loadshare.share(prob, args.method or loadshare.DEFAULT_METHOD,
                                     seed=args.seed, **picture_params(args))  # fmt: skip
        return picture_done(loadshare.plot_loads(prob, result), args)
    if args.result:
        raise ValueError(
            "the coalitions over generations are not kept in result files: "
            "drop RESULT (the problem is solved with dmcf-gga) or add --loads"
        )
    if args.method not in (None, "dmcf-gga"):
        raise ValueError("the coalitions over generations need --method dmcf-gga")
    params = {"coalition_size": args.coalition_size, **picture_params(args)}
    result = loadshare.share(prob, "dmcf-gga", seed=args.seed, coalition_history=args.every,
                             **params)  # fmt: skip
    return picture_done(loadshare.plot_coalitions(prob, result), args)


def add_plot(fams) -> None:
    """Add ``coalloc plot loadshare`` to ``fams`` (the subparsers of ``coalloc plot``)."""
    from ..cli.plot import picture_options

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
    picture_options(p, "th_c=0.1")
    p.set_defaults(func=_cmd_plot)
