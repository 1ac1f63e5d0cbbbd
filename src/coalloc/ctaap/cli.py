"""``coalloc ctaap ...``: solve, verify, generate, solve-batch and demo for CTAAP."""

from __future__ import annotations

import argparse
import json
from importlib import resources
from types import SimpleNamespace
from typing import Optional

import numpy as np

from .. import ctaap
from .._shared.jsonio import check_output, protect_inputs
from .._shared.result import jsonable, relative_gap
from ..cli import _common as common
from ..cli._generate import add_generate, run_generate
from ..cli.explain import add_explain_options, explain_no, explanation_json, explanation_lines
from ..cli.plot import picture_done, picture_params
from ..ctaap.constraints import PARAMS, SOLVE_PARAMS
from ..ctaap.io import read_instance, read_result, write_result

__all__ = ["add_commands"]


def _summary(name: str, request, offer, result, report) -> str:
    # what verify found (the status is on the quality line, exactly as the result holds it)
    bad = f"verify found {report.n_violations} violations"
    state = "verified: every constraint holds" if report.feasible else bad
    ms = result.timings.get("total", float("nan")) * 1e3
    return (
        f"{name}: {result.method} allocated {result.n_allocated} of {request.n} tasks on "
        f"{offer.m} clusters ({offer.total_capacity} machines) in {ms:.2f} ms; {state}"
    )


def _quality(result) -> str:
    """One line a newcomer reads first: is this allocation good?

    It starts with the status the result holds, exactly (``quality: <status>``): the line
    explains it, it never re-derives it.
    """
    got = int(result.n_allocated)
    status = result.status
    if status == "optimal":
        return f"  quality: optimal (proven: no allocation places more than {got} tasks)"
    if not result.has_solution:
        proven = "" if result.bound is None else f": upper bound {float(result.bound):g}"
        return f"  quality: {status} (no allocation){proven}, gap unknown"
    if result.bound is None:
        return f"  quality: {status} (no bound computed; drop --no-bound to get one)"
    bound = float(result.bound)
    return (
        f"  quality: {status}: upper bound {bound:g}, gap "
        f"{common.describe_gap(result.gap)} (the optimum is between {got} and {bound:g} tasks)"
    )


def _name(names, index: int, default: str) -> str:
    return str(names[index]) if names is not None else f"{default} {index}"


def cluster_table(request, offer, assignment) -> list:
    """Per cluster: machines used / capacity, tasks, links and the peak bandwidth use.

    ``peak_*`` is the link with the largest need / available ratio among the links inside
    the cluster (``in``) or to another cluster (``out``): a feasible allocation keeps it at
    or below 1 (constraint (4) is per pair of tasks).
    """
    a = np.asarray(assignment, dtype=np.int64)
    coo = request.bandwidth.tocoo()
    i, k, need = coo.row, coo.col, coo.data
    placed = (a[i] >= 0) & (a[k] >= 0)
    i, k, need = i[placed], k[placed], need[placed]
    ai, ak = a[i], a[k]
    avail = offer.bandwidth[ai, ak] if ai.size else np.zeros(0)
    ratio = np.divide(need, avail, out=np.full(need.shape, np.inf), where=avail > 0)
    cnames = getattr(offer, "names", None)
    tnames = getattr(request, "names", None)
    rows = []
    for j in range(offer.m):
        members = np.flatnonzero(a == j)
        row = {
            "cluster": _name(cnames, j, "cluster"),
            "index": j,
            "machines_used": int(members.size),
            "capacity": int(offer.capacity[j]),
            "tasks": [_name(tnames, int(t), "task") for t in members] if tnames is not None
            else [int(t) for t in members],
        }  # fmt: skip
        for kind, sel in (("in", (ai == j) & (ak == j)), ("out", (ai == j) & (ak != j))):
            if kind == "in":
                n_links = (
                    int(np.count_nonzero(sel & (i < k)))
                    if request.symmetric
                    else int(np.count_nonzero(sel))
                )
            else:
                n_links = int(np.count_nonzero(sel))
            peak = None
            if np.any(sel):
                w = np.flatnonzero(sel)[int(np.argmax(ratio[sel]))]
                peak = {"need": float(need[w]), "available": float(avail[w])}
            row[f"links_{kind}"] = n_links
            row[f"peak_{kind}"] = peak
        rows.append(row)
    return rows


def _format_table(rows) -> list:
    def peak(n, p):
        return f"{n}" if p is None else f"{n} ({p['need']:g}/{p['available']:g})"

    cells = [["cluster", "machines", "links inside", "links out", "tasks"]]
    for r in rows:
        tasks = ", ".join(str(t) for t in r["tasks"][:12])
        if len(r["tasks"]) > 12:
            tasks += f", ... ({len(r['tasks'])} in all)"
        cells.append([
            r["cluster"], f"{r['machines_used']}/{r['capacity']}",
            peak(r["links_in"], r["peak_in"]), peak(r["links_out"], r["peak_out"]), tasks or "-",
        ])  # fmt: skip
    widths = [max(len(row[c]) for row in cells) for c in range(4)]
    lines = [
        "  per cluster (links: how many, and need/available bandwidth of the most loaded one):"
    ]
    for row in cells:
        left = "  ".join(
            row[c].ljust(widths[c]) if c == 0 else row[c].rjust(widths[c]) for c in range(4)
        )
        lines.append(f"    {left}  {row[4]}")
    return lines


def _binds(args, request, offer, result) -> Optional[dict]:
    """``--explain``: which clusters and links cap the allocation (any answer with one)."""
    if not getattr(args, "explain", False) or result.assignment is None:
        return None
    from .explain import explain_binding

    return explain_binding(request, offer, result)


def _solve_and_report(request, offer, args, name: str, intro: Optional[str] = None) -> int:
    # every method takes a time limit (ctaap: the anytime search)
    params = common.exact_params(args, timed=("exact", "ctaap", "greedy"))
    result = ctaap.solve(request, offer, args.method, seed=args.seed, bound=args.bound,
                         bound_effort=args.bound_effort, **params)  # fmt: skip
    report = ctaap.verify(request, offer, result.assignment)
    table = cluster_table(request, offer, result.assignment)
    why = explain_no(args, ctaap.Instance(request, offer), result)  # --explain: tasks left out
    binds = _binds(args, request, offer, result)  # --explain: what caps the allocation
    if args.output:
        write_result(args.output, result, report)
    if args.json:
        out = {"instance": name, **result.to_dict(), "verify": report.to_dict(),
               "clusters": table}  # fmt: skip
        explanation_json(why, out)
        if binds is not None:
            out["binds"] = binds
        tnames = getattr(request, "names", None)
        if tnames is not None:
            out["task_names"] = [str(t) for t in tnames]
        print(json.dumps(jsonable(out)))
        return 0 if result.has_solution and report.feasible else 1
    if intro:
        print(intro)
    print(_summary(name, request, offer, result, report))
    print(_quality(result))
    if not result.has_solution:  # stopped without an incumbent, or failed: say why
        print(f"  no solution: {result.message}")
    if result.n_allocated < request.n:
        print(f"  {request.n - result.n_allocated} tasks not allocated")
    for line in _format_table(table) + explanation_lines(why):
        print(line)
    if binds is not None:
        print(f"  what binds: {binds['sentence']}")
    if args.verbose:
        for key, value in result.timings.items():
            print(f"  time {key}: {value * 1e3:.3f} ms")
        for key, value in result.iterations.items():
            print(f"  {key}: {value}")
        print(f"  {result.message}")
    if args.output:
        print(f"result written to {args.output}")
    return 0 if result.has_solution and report.feasible else 1  # 1: no (verified) solution


def _read(path: str, command: str, fmt: Optional[str] = None) -> tuple:
    """The request and offer of a CTAAP instance file, a file of another kind refused in one
    line (what it looked like, what was expected); ``fmt`` (``--format json``) skips the
    recognition by content and reads the file as JSON (:func:`common.read_as`)."""
    from .._shared.sniff import expect_json
    from ..ctaap.io import INSTANCE_FORMAT as FORMAT

    expected = f"a CTAAP instance ({FORMAT} JSON)"
    if fmt is None:
        expect_json(path, [FORMAT], command, expected)
    return common.read_as(path, fmt, read_instance, command=command, expected=expected)


def _add_format(p: argparse.ArgumentParser) -> None:
    common.add_format_of(p, "ctaap", ("instance",), "the instance file")


def _cmd_solve(args) -> int:
    request, offer = _read(args.instance, "ctaap solve", args.format)
    return _solve_and_report(request, offer, args, args.instance)


def _demo_file():
    """The built-in demo instance (a file of the installed package)."""
    return resources.files("coalloc.ctaap").joinpath("data/demo.json")


def _cmd_demo(args) -> int:
    demo = _demo_file()
    with demo.open("r", encoding="utf-8") as fh:
        request, offer = read_instance(fh)
    with protect_inputs([("the built-in demo instance", demo)]):  # -o must not replace it
        if args.output:
            check_output(args.output, option="-o/--output")  # before solving
        return _solve_and_report(request, offer, args, "demo", _demo_intro(request, offer))


def _demo_intro(request, offer) -> str:
    return (
        f"demo instance: {request.n} tasks ({request.n_edges // 2} links), {offer.m} clusters "
        f"with {offer.total_capacity} machines (the Fig. 2 setup of Kravtsov et al., r = 2)"
    )


#: ``coalloc ctaap generate``: built from the spec (:data:`coalloc.ctaap._spec.GENERATE`).
_cmd_generate = run_generate


def _verified_quality(request, offer, result: dict, n_allocated: int, feasible: bool):
    """The bound, gap and status of a result file, judged again from its instance.

    The bound is the cheap upper bound computed here (:func:`coalloc.ctaap.upper_bound`),
    or the file's own bound when that is tighter and consistent (an exact solver's proven
    bound: at least the allocated count). The status follows the one rule
    (:func:`coalloc._shared.result.settle`): ``optimal`` when the assignment is feasible
    and reaches that bound, whatever the file claims; a file claiming ``optimal`` that does
    not reach it is ``feasible``; an infeasible assignment is ``infeasible``.
    """
    from ..ctaap.exact import upper_bound

    bound = float(upper_bound(request, offer))
    claimed = result.get("bound")
    if isinstance(claimed, (int, float)) and not isinstance(claimed, bool):
        if n_allocated <= claimed < bound:
            bound = float(claimed)
    status = result.get("status") if isinstance(result.get("status"), str) else "feasible"
    if not feasible:
        status = "infeasible"
    elif n_allocated >= bound:
        status = "optimal"
    elif status == "optimal":
        status = "feasible"
    gap = relative_gap(n_allocated, bound, sense="max")
    return SimpleNamespace(
        n_allocated=n_allocated, bound=bound, gap=gap, status=status,
        has_solution=status in ("optimal", "feasible", "time_limit"),
    )  # fmt: skip


def _cmd_verify(args) -> int:
    request, offer = _read(args.instance, "ctaap verify", args.format)
    result = read_result(args.result)
    assignment = result["assignment"]
    if assignment.shape[0] != request.n:
        raise ValueError(
            f"{args.result}: the assignment has {assignment.shape[0]} entries but the instance "
            f"has {request.n} tasks"
        )
    try:
        report = ctaap.verify(request, offer, assignment)
    except ValueError as exc:  # an entry that is no cluster index: the result file's fault
        raise ValueError(f"{args.result}: {exc}") from None
    claims = {"n_tasks": request.n, "n_allocated": int(np.count_nonzero(assignment >= 0))}
    for key, actual in claims.items():
        if result.get(key) is not None and result[key] != actual:
            raise ValueError(
                f"{args.result}: claims {key} = {result[key]} but the assignment gives {actual}"
            )
    got = claims["n_allocated"]
    quality = _verified_quality(request, offer, result, got, report.feasible)
    table = cluster_table(request, offer, assignment)
    if args.json:
        out = {"instance": args.instance, "result": args.result, "method": result.get("method"),
               "status": quality.status, "n_tasks": request.n, "n_allocated": got,
               "bound": quality.bound, "gap": quality.gap, "verify": report.to_dict(),
               "clusters": table}  # fmt: skip
        tnames = getattr(request, "names", None)
        if tnames is not None:
            out["task_names"] = [str(t) for t in tnames]
        print(json.dumps(jsonable(out)))
        return 0 if report.feasible else 1
    print(str(report))
    method = result.get("method")
    print(f"{args.result}: {method + ' ' if isinstance(method, str) else ''}allocated {got} of "
          f"{request.n} tasks on {offer.m} clusters ({offer.total_capacity} machines)")  # fmt: skip
    if report.feasible:
        print(_quality(quality))
    if got < request.n:
        print(f"  {request.n - got} tasks not allocated")
    for line in _format_table(table):
        print(line)
    return 0 if report.feasible else 1


def _cmd_solve_batch(args) -> int:
    extra = {"bound": args.bound}
    if args.bound:
        extra["bound_effort"] = args.bound_effort
    return common.run_batch(args, "ctaap", extra)


def _bound_effort(p: argparse.ArgumentParser) -> None:
    common.add_table_option(
        p, "--bound-effort", SOLVE_PARAMS["bound_effort"], default=1.0, metavar="EFFORT",
        help="work of the bound, capped by counts so that it reproduces: 1 (default) is "
        "cheap, 10 or 100 search further for a tighter bound",
    )  # fmt: skip


def _solver_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--method", default=ctaap.solvers.DEFAULT_METHOD, choices=sorted(ctaap.METHODS))
    common.add_seed(p)
    common.add_params(p, "compat_fn=threshold")
    common.add_exact_options(p, PARAMS["exact"])
    common.add_output(p, "write the result as JSON to this file")
    common.add_verbose(p)
    p.add_argument(
        "--bound", action=argparse.BooleanOptionalAction, default=True,
        help="compute the cheap upper bound and the gap (default, as ctaap.solve's "
        "bound=True; --no-bound: bound=False)",
    )  # fmt: skip
    _bound_effort(p)
    p.add_argument(
        "--json", action="store_true",
        help="print the full result (with the verification and the per-cluster table) as JSON",
    )  # fmt: skip


def add_commands(sub, *, aliases: bool = False) -> None:
    """Add the CTAAP subcommands to ``sub`` (a subparsers object).

    With ``aliases`` only the commands that stay one step away at the top level are added
    (``solve``, ``demo``, ``verify``, ``generate``, ``solve-batch``).
    """
    p = sub.add_parser("solve", help="solve a CTAAP instance file")
    p.add_argument("instance", help="instance file (JSON; see 'coalloc docs formats')")
    _add_format(p)
    _solver_options(p)
    add_explain_options(p, "; and, for every answer, which clusters and links cap the "
                        "allocation (with --json: under 'binds')")
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser(
        "solve-batch", help="solve many instance files in parallel, one JSON line per instance"
    )
    common.add_batch_options(p, ctaap.METHODS, ctaap.solvers.DEFAULT_METHOD, "compat_fn=threshold")
    p.add_argument(
        "--bound", action=argparse.BooleanOptionalAction, default=True,
        help="compute upper bounds and gaps (default, as ctaap.solve's bound=True; "
        "--no-bound: bound=False, the batch's time without the bounds)",
    )  # fmt: skip
    _bound_effort(p)
    p.set_defaults(func=_cmd_solve_batch)

    p = sub.add_parser("demo", help="solve the built-in example instance")
    _solver_options(p)
    p.set_defaults(func=_cmd_demo)

    p = add_generate(sub, "ctaap", help="write an instance of the paper's experiments")
    common.add_output(p, "instance file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser(
        "verify", help="check a result file against its instance; print its bound, gap and "
        "per-cluster table",
    )  # fmt: skip
    p.add_argument("instance")
    p.add_argument("result")
    _add_format(p)
    p.add_argument(
        "--json", action="store_true",
        help="print the verification, bound, gap and per-cluster table as JSON",
    )  # fmt: skip
    p.set_defaults(func=_cmd_verify)


# ------------------------------------------------------------------- coalloc plot ctaap


def _cmd_plot(args) -> int:
    request, offer = _read(args.instance, "plot ctaap", args.format)
    if args.result:
        result = ctaap.read_result(args.result)
        if result["assignment"].shape[0] != request.n:
            raise ValueError(
                f"{args.result}: the assignment has {result['assignment'].shape[0]} entries "
                f"but the instance has {request.n} tasks"
            )
    else:
        result = ctaap.solve(request, offer, args.method or ctaap.solvers.DEFAULT_METHOD,
                             seed=args.seed, **picture_params(args))  # fmt: skip
    fig = ctaap.plot_allocation(request, offer, result,
                                show_unallocated_links=args.unallocated_links)  # fmt: skip
    return picture_done(fig, args)


def add_plot(fams) -> None:
    """Add ``coalloc plot ctaap`` to ``fams`` (the subparsers of ``coalloc plot``)."""
    from ..cli.plot import picture_options

    p = fams.add_parser("ctaap", help="the request graph coloured by cluster")
    p.add_argument("instance", help="CTAAP instance file (JSON)")
    p.add_argument("result", nargs="?", help="result file of 'coalloc solve -o' (optional)")
    _add_format(p)
    p.add_argument("--unallocated-links", action="store_true",
                   help="also draw the links of unallocated tasks")  # fmt: skip
    picture_options(p, "compat_fn=threshold")
    p.set_defaults(func=_cmd_plot)
