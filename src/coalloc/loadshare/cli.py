"""``coalloc loadshare ...``: share, gap, generate, verify and solve-batch for load sharing."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Optional

import numpy as np

from .. import loadshare
from .._shared.jsonio import InstanceError, load_json, write_text_atomic
from .._shared.result import jsonable, relative_gap
from .._shared.sniff import expect_json
from ..cli import _common as common
from ..cli._generate import add_generate, run_generate
from ..cli.explain import add_explain_options, explain_no, explanation_json, explanation_lines
from ..cli.plot import picture_done, picture_params
from ..loadshare.constraints import GAP_PARAMS, PARAMS
from ..loadshare.io import (
    orlib_sense,
    read_gap_file,
    read_problem,
)

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


def _read_share(path: str, command: str):
    """A load-sharing problem; a GAP file is pointed to 'loadshare gap', any other kind of
    file refused in one line."""
    from .._shared.sniff import sniff, wrong_kind

    found = sniff(path)
    expected = "a load-sharing problem (coalloc.loadshare.instance JSON)"
    if found.kind == "orlib-gap" or found.format == loadshare.GapProblem.format:
        raise wrong_kind(path, found, command, expected, "solve it with 'coalloc loadshare gap'")
    expect_json(path, [loadshare.io.FORMAT], command, expected)
    return read_problem(path)


def _cmd_share(args) -> int:
    prob = _read_share(args.problem, "loadshare share")
    params = common.exact_params(args, timed=tuple(loadshare.METHODS))  # all take a limit
    res = loadshare.share(prob, args.method, coalition_size=args.coalition_size, seed=args.seed,
                          **params)  # fmt: skip
    rep = loadshare.verify_placement(prob, res.placement, claimed=res.throughput)
    why = explain_no(args, loadshare.Instance(prob), res)  # --explain: load that waits
    if args.json:
        data = res.to_dict()
        data["verify"] = rep.to_dict()
        data["node_load"] = loadshare.node_loads(prob, res.placement)
        data["capacity"] = prob.capacity
        explanation_json(why, data)
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
    for line in explanation_lines(why):
        print(line)
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


def _note(text: str) -> None:
    print(f"coalloc: note: {text}", file=sys.stderr)


def _sense_of(option: Optional[str], inst: Any, fmt: str, name: str) -> tuple:
    """``(sense, where it came from, note or None)`` for one GAP instance of file ``name``.

    ``--sense`` wins (with a note when the file states the other); then the sense the JSON
    file states; OR-Library text cannot state one, so its sense is assumed from the
    library's naming convention (:func:`coalloc.loadshare.io.orlib_sense`), with a note.
    """
    stated = getattr(inst, "sense", None)
    if option is not None:
        if stated is not None and stated != option:
            return option, "option", f"{name}: --sense {option} overrides the file's {stated!r}"
        return option, "option", None
    if stated is not None:
        return stated, "file", None
    sense, reason = orlib_sense(name)
    other = "max" if sense == "min" else "min"
    return (
        sense,
        "assumed",
        (
            f"{name}: sense {sense} assumed ({reason}); give --sense {other} to "
            f"{'maximise' if other == 'max' else 'minimise'}"
        ),
    )


def _objective_text(res: Any) -> str:
    """``maximum 33`` (proven), ``objective 31 (maximised)``, or ``no assignment``."""
    if res.objective is None or res.assignment is None:
        return f"no assignment ({'maximising' if res.sense == 'max' else 'minimising'})"
    value = f"{res.objective:g}"
    if res.status == "optimal":
        return f"{'maximum' if res.sense == 'max' else 'minimum'} {value}"
    return f"objective {value} ({'maximised' if res.sense == 'max' else 'minimised'})"


def _gap_why(args, inst, res) -> Optional[dict]:
    """``--explain`` on a GAP answer without an assignment of every item (not --partial)."""
    if args.partial or res.assignment is not None:
        return None
    return explain_no(args, loadshare.GapProblem(inst), res)


def _cmd_gap(args) -> int:
    instances, fmt = _read_gap(args.file, args.format, "loadshare gap")
    if args.instance is not None:
        if not 1 <= args.instance <= len(instances):
            raise ValueError(f"--instance must be in 1..{len(instances)}, got {args.instance}")
        chosen = [(args.instance, instances[args.instance - 1])]
    else:
        chosen = list(enumerate(instances, start=1))
    extra = {} if args.solver is None else {"solver": args.solver}
    if extra and args.method != "exact":
        raise ValueError("--solver applies to --method exact only")
    extra.update(dict(args.param or []))  # -p KEY=VALUE: the method's other parameters
    own = sorted({"sense", "assign_all", "time_limit", "seed"} & set(extra))
    if own:
        raise ValueError(f"-p {own[0]}=...: use the command's own option for {own[0]}")
    rows = []
    ok = True
    noted = set()
    for k, inst in chosen:
        sense, source, note = _sense_of(args.sense, inst, fmt, args.file)
        if note is not None and note not in noted:
            noted.add(note)
            _note(note)
        res = loadshare.solve_gap(inst, args.method, sense=sense,
                                  assign_all=not args.partial, time_limit=args.time_limit,
                                  seed=args.seed, **extra)  # fmt: skip
        line = (f"{args.file}#{k} ({inst.m}x{inst.n}): {res.method} {res.status} "
                f"{_objective_text(res)} bound {res.bound}")  # fmt: skip
        if res.gap is not None:
            line += f" gap {100 * res.gap:.3f} %"
        line += f" in {res.timings['total']:.3f} s"
        if source == "assumed":
            line += f" (sense {sense} assumed)"
        if res.assignment is not None:
            rep = loadshare.verify_gap(inst, res.assignment, assign_all=not args.partial,
                                       claimed=res.objective)  # fmt: skip
            ok &= rep.ok
            if not rep.ok:
                line += f"; VERIFY FAILED: {rep}"
        else:  # no assignment, even a proven "infeasible": a failed solve for a script,
            ok = False  # exit 1 as in every family (docs/results.md, issue 36)
        why = _gap_why(args, inst, res)  # --explain: no assignment of every item
        rows.append(explanation_json(why, {"instance": k, "file": args.file,
                                           "sense_from": source, **res.to_dict()}))  # fmt: skip
        # --json: one line per instance, the API's result.to_dict() (as --output writes it)
        print(json.dumps(jsonable(rows[-1])) if args.json else line)
        if not args.json:
            for text in explanation_lines(why):
                print(text)
    if args.output:
        write_text_atomic(args.output, "".join(json.dumps(row) + "\n" for row in rows))
        if not args.json:
            print(f"results written to {args.output}")
    return 0 if ok else 1


#: ``coalloc loadshare generate``: built from the spec (:data:`coalloc.loadshare._spec.GENERATE`).
_cmd_generate = run_generate


def _result_rows(path: str) -> tuple:
    """The result documents of ``path``: one JSON document, or JSON lines (``gap -o``,
    ``solve-batch -o``); ``(rows, name)``."""
    from .._shared.jsonio import read_text

    try:
        data, name = load_json(path)
        return [data], name
    except InstanceError:
        text, _ = read_text(path)
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except ValueError as exc:
            raise InstanceError(f"{path}:{number}: not valid JSON: {exc}") from None
    if not rows:
        raise InstanceError(f"{path}: no result in the file")
    return rows, path


def _rows_of(rows: list, problem: str, name: str) -> list:
    """The rows of a batch output that answer ``problem`` (a ``solve-batch`` line names its
    file; lines of other files are left out, with a note)."""

    def other(row: Any) -> bool:
        if not isinstance(row, dict) or not isinstance(row.get("file"), str):
            return False
        base, sep, part = row["file"].rpartition("#")
        path = base if sep and part.isascii() and part.isdigit() else row["file"]
        try:
            return not os.path.samefile(path, problem)
        except OSError:
            return os.path.basename(path) != os.path.basename(problem)

    kept = [row for row in rows if not other(row)]
    if not kept:
        raise ValueError(f"{name}: no result line answers {problem}")
    if len(kept) < len(rows):
        _note(f"{name}: {len(rows) - len(kept)} line(s) of other files left out")
    return kept


def _which_instance(row: Any, count: int, option: Optional[int], name: str) -> int:
    """The 1-based instance a GAP result row belongs to (``--instance``, the row's
    ``instance``, or the ``#k`` of its ``file``)."""
    if option is not None:
        k = option
    elif isinstance(row.get("instance"), int) and not isinstance(row.get("instance"), bool):
        k = row["instance"]
    elif isinstance(row.get("file"), str) and "#" in row["file"]:
        part = row["file"].rpartition("#")[2]
        k = int(part) if part.isascii() and part.isdigit() else 0
    elif count == 1:
        k = 1
    else:
        raise ValueError(
            f"the problem file holds {count} instances and the result does not say which it "
            "answers: give --instance K"
        )
    if not 1 <= k <= count:
        raise ValueError(f"instance {k} is not in 1..{count} (the problem file's instances)")
    return k


def _cmd_verify(args) -> int:
    from .._shared.sniff import sniff

    found = sniff(args.problem) if args.format is None else None
    gap_words = _gap_formats()
    is_gap = args.format in gap_words or (
        found is not None and (found.kind != "json" or found.format == loadshare.GapProblem.format)
    )
    rows, name = _result_rows(args.result)
    rows = _rows_of(rows, args.problem, name)
    key = "assignment" if is_gap else "placement"
    if is_gap:
        fmt = args.format if args.format in gap_words else None
        instances, _ = _read_gap(args.problem, fmt, "loadshare verify")
    elif args.format == "loadshare":
        prob = common.read_as(args.problem, "loadshare", read_problem, command="loadshare verify",
                              expected="a load-sharing problem (coalloc.loadshare.instance "
                              "JSON)")  # fmt: skip
    else:
        prob = _read_share(args.problem, "loadshare verify")
    ok = True
    for row in rows:
        if not isinstance(row, dict) or key not in row:
            raise ValueError(f"{name}: no {key!r} in the result file")
        try:
            if is_gap:  # a GAP instance and a GAP result, gap -o or solve-batch line
                k = _which_instance(row, len(instances), args.instance, name)
                assign_all = row.get("assign_all", True)
                if not isinstance(assign_all, bool):
                    raise TypeError(f"assign_all must be a bool, got {type(assign_all).__name__}")
                rep = loadshare.verify_gap(instances[k - 1], row["assignment"],
                                           assign_all=assign_all,
                                           claimed=row.get("objective"))  # fmt: skip
                sense = row.get("sense")
                label = f"#{k}" + (f" ({sense}imised)" if sense in ("min", "max") else "")
                print(f"{label}: {rep}" if len(rows) > 1 or len(instances) > 1 else str(rep))
            else:
                rep = loadshare.verify_placement(prob, row["placement"],
                                                 claimed=row.get("throughput"))  # fmt: skip
                print(str(rep))
        except (TypeError, ValueError) as exc:  # a malformed result: say which file
            if isinstance(exc, InstanceError):
                raise
            raise ValueError(f"{name}: {exc}") from None
        ok &= rep.ok
    return 0 if ok else 1


def _cmd_solve_batch(args) -> int:
    """Solve the files; OR-Library GAP files (text, one or several instances each) are read
    here and solved as ``FILE#k``, with the sense their name's convention gives."""
    from .._shared.sniff import sniff

    names, items = [], []
    for path in args.files:
        found = sniff(path)
        if found.kind in ("json", "missing"):
            names.append(path)
            items.append(None)  # the worker reads it (and says why it cannot)
            continue
        forced = "orlib" if found.kind == "orlib-gap" else None  # sniffed once, not twice
        instances, fmt = read_gap_file(path, forced, command="loadshare solve-batch")
        for k, inst in enumerate(instances, start=1):
            if inst.sense is None and "sense" not in dict(args.param or []):
                sense, _, note = _sense_of(None, inst, fmt, path)
                if k == 1:
                    _note(note.replace("give --sense ", "give -p sense="))
                inst = loadshare.GapInstance(inst.cost, inst.weight, inst.capacity,
                                             inst.name, sense=sense)  # fmt: skip
            names.append(f"{path}#{k}" if len(instances) > 1 else path)
            items.append(loadshare.GapProblem(inst))
    args.files = names
    return common.run_batch(args, "loadshare", items=items)


#: The number of instances ``generate`` writes: an integer >= 1 in ASCII decimal digits (no
#: generator parameter; the GAP's sizes are typed from ``generate_gap``'s table).
_positive_int = common.count()


def _gap_formats() -> tuple:
    """The ``--format`` words of the spec's formats that hold a GAP (``json``, ``orlib``)."""
    from .._shared.formats_line import format_words

    return format_words("loadshare", "gap")


def _add_gap_format(p) -> None:
    common.add_format_of(p, "loadshare", ("gap",), "the GAP file")


def _read_gap(path: str, fmt: Optional[str], command: str) -> tuple:
    """:func:`read_gap_file`; under ``--format`` a file that does not parse as it says is
    refused in one line, what it looked like first (:func:`common.read_as`)."""
    if fmt is not None and fmt not in ("json", "orlib"):  # a GAP format added to the spec
        declared = common.line_formats_of("loadshare", "gap")[fmt]
        got = common.read_as(path, fmt, declared.read, command=command,
                             expected=declared.description)  # fmt: skip
        return (list(got) if isinstance(got, (list, tuple)) else [got]), fmt
    expected = "an OR-Library GAP file" if fmt == "orlib" else "a coalloc.loadshare.gap JSON file"
    return common.read_as(path, fmt, lambda f: read_gap_file(f, fmt, command=command),
                          command=command, expected=expected)  # fmt: skip


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
    add_explain_options(p)
    p.set_defaults(func=_cmd_share)

    p = sub.add_parser("gap", help="solve OR-Library GAP instances (exact or heuristic)")
    p.add_argument("file", help="GAP file: OR-Library text (multi-instance or one instance) or "
                   "coalloc.loadshare.gap JSON, recognised by content")  # fmt: skip
    p.add_argument("--method", default="portfolio", choices=list(GAP_PARAMS),
                   help="portfolio (the default: the heuristic with CP-SAT beside it on small "
                   "instances), heuristic (alone) or exact")  # fmt: skip
    gap = GAP_PARAMS["portfolio"]  # the three methods share one table
    common.add_table_option(
        p, "--sense", gap["sense"], default=None,
        help="minimise or maximise (default: the sense a JSON file states; for OR-Library "
        "text, which cannot state it, max for gap1-gap12 and min otherwise, with a note)",
    )  # fmt: skip
    _add_gap_format(p)
    p.add_argument("--partial", action="store_true", help="items may stay unassigned")
    p.add_argument(
        "--instance", type=common.count(), default=None, help="solve only instance K (1-based)"
    )
    common.add_table_option(p, "--time-limit", gap["time_limit"], default=None,
                            metavar="SECONDS", help="seconds per instance")  # fmt: skip
    common.add_table_option(p, "--solver", gap["solver"], default=None,
                            help="the exact method's solver (default cpsat)")  # fmt: skip
    common.add_seed(p)
    common.add_params(p, "iterations=200")
    common.add_output(p, "write one JSON line per instance")
    p.add_argument("--json", action="store_true",
                   help="one JSON line per instance (result.to_dict()), not text")  # fmt: skip
    add_explain_options(p)
    p.set_defaults(func=_cmd_gap)

    p = add_generate(sub, "loadshare", help="write a Fig. 5 grid or GAP instances of type A-D")
    p.add_argument("--count", type=_positive_int, default=1, help="instances (GAP)")
    p.add_argument("--single", action="store_true", help="one-instance layout (no count)")
    common.add_output(
        p,
        "file to write: *.json writes JSON (a GAP: one instance, its sense "
        "stated), any other name OR-Library GAP text",
        required=True,
    )
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser(
        "verify", help="check a share result against its problem, or a GAP result (a "
        "solve-batch line) against its coalloc.loadshare.gap instance"
    )  # fmt: skip
    p.add_argument("problem", help="load-sharing problem (JSON), or GAP file (OR-Library text "
                   "or JSON)")  # fmt: skip
    p.add_argument("result", help="result file: JSON, or JSON lines (gap -o, solve-batch -o)")
    p.add_argument("--instance", type=common.count(), default=None,
                   help="the instance of a multi-instance GAP file the result answers "
                   "(default: the result's own 'instance' or 'file#K')")  # fmt: skip
    common.add_format_of(p, "loadshare", ("instance", "gap"), "PROBLEM")
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser(
        "solve-batch",
        help="solve many problem files in parallel (JSON lines): load-sharing problems "
        "(coalloc.loadshare.instance) and GAP instances (coalloc.loadshare.gap), mixed freely",
    )  # fmt: skip
    # --method: by default each file's kind runs its own default (portfolio, for both kinds)
    common.add_batch_options(p, [*loadshare.METHODS, *loadshare.GAP_METHODS], None,
                             "coalition_size=45")  # fmt: skip
    p.set_defaults(func=_cmd_solve_batch)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)


# ------------------------------------------------------------------- coalloc plot loadshare


def _plot_gap(args) -> int:
    """A GAP file (OR-Library text or JSON): the heuristic's objective and bound over time."""
    instances, fmt = read_gap_file(args.problem, None, command="plot loadshare")
    if args.result or args.loads:
        raise ValueError(
            f"{args.problem} is a GAP file: its picture is the heuristic's objective and bound "
            "over time (drop RESULT and --loads)"
        )
    k = args.instance or 1
    if not 1 <= k <= len(instances):
        raise ValueError(f"--instance must be in 1..{len(instances)}, got {k}")
    inst = instances[k - 1]
    params = picture_params(args)
    sense, _, note = _sense_of(params.pop("sense", None), inst, fmt, args.problem)
    if note is not None:
        _note(note.replace("give --sense ", "give -p sense="))
    result = loadshare.solve_gap(inst, args.method or "portfolio", sense=sense, seed=args.seed,
                                 **params)  # fmt: skip
    title = f"{args.problem}#{k}: {_objective_text(result)}"
    return picture_done(loadshare.plot_gap_trajectory(result, title=title), args)


def _cmd_plot(args) -> int:
    from .._shared.sniff import sniff

    found = sniff(args.problem)
    if found.kind != "json" or found.format == loadshare.GapProblem.format:
        return _plot_gap(args)
    prob = _read_share(args.problem, "plot loadshare")
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

    p = fams.add_parser(
        "loadshare", help="DMCF-GGA's coalitions over generations, or loads; for a GAP file, "
        "the heuristic's objective and bound over time",
    )  # fmt: skip
    p.add_argument("problem", help="load-sharing problem file (JSON), as 'loadshare share', or "
                   "a GAP file (OR-Library text or JSON), as 'loadshare gap'")  # fmt: skip
    p.add_argument("--instance", type=common.count(), default=None,
                   help="the instance of a multi-instance GAP file (default 1)")  # fmt: skip
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
