"""``coalloc testbed ...``: assign, verify, generate and simulate for testbed mapping."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from .. import testbed
from .._shared.jsonio import InstanceError, load_json
from .._shared.result import relative_gap
from ..cli import _common as common
from ..cli._generate import add_generate, run_generate
from ..cli.explain import add_explain_options, explain_no, explanation_json, explanation_lines
from ..cli.plot import picture_done, picture_params
from ..testbed.io import read_topologies
from .constraints import PARAMS as TESTBED_PARAMS

__all__ = ["add_commands"]


def _check_args(args, whole=(), positive=()) -> None:
    """Options in range, or one ValueError naming the option (one line, exit 2): ``whole``
    holds ``(attribute, low)`` pairs (at most 100,000), ``positive`` attributes that must be
    finite and > 0 when given."""
    for name, lo in whole:
        n = getattr(args, name)
        if not lo <= n <= 100_000:
            raise ValueError(f"--{name} must be {lo} to 100_000, got {n}")
    for name in positive:
        x = getattr(args, name)
        if x is not None and not (math.isfinite(x) and x > 0):
            raise ValueError(f"--{name.replace('_', '-')} must be a finite number > 0, got {x}")


def _assign_quality(top, ptop, result, args) -> tuple:
    """``(comment lines, bound info dict)`` saying how good the inter-switch bandwidth is.

    The dict's ``quality_bound`` is the lower bound the quality line judges by (the
    result's own ``bound``, or a better one that ``--exact-bound`` proved), beside the
    result's ``bound``/``gap``, which it never overwrites."""
    isw = float(result.interswitch_bandwidth)
    info = {"quality_bound": result.bound, "exact_optimum": None}
    if isw <= 0:
        info["quality_bound"] = 0.0
        return ["# quality: optimal: no bandwidth crosses switches"], info
    if result.status == "optimal":  # CP-SAT's proof (the exact method, or the default's)
        info.update(exact_optimum=isw, quality_bound=isw)
        return ["# quality: proven optimal (exact method)"], info
    bound = result.bound
    if args.exact_bound is not None and result.method != "exact":
        exact = testbed.assign(top, ptop, "exact", seed=args.seed, time_limit=args.exact_bound)
        if exact.status == "optimal" and exact.interswitch_bandwidth is not None:
            best = float(exact.interswitch_bandwidth)
            info.update(exact_optimum=best, quality_bound=best)
            if isw <= best:
                return [f"# quality: optimal: equals the exact optimum {best:g}"], info
            gap = common.describe_gap(relative_gap(isw, best, sense="min"))
            return [f"# quality: gap {gap} against the exact optimum {best:g}"], info
        if exact.bound is not None:
            bound = exact.bound if bound is None else max(bound, exact.bound)
            info["quality_bound"] = bound
    if bound is not None and bound > 0:
        gap = relative_gap(isw, bound, sense="min")
        return [f"# quality: lower bound {bound:g}, gap {common.describe_gap(gap)}"], info
    hint = "" if args.exact_bound is not None else "; --exact-bound SECONDS asks CP-SAT"
    return [f"# quality: unknown: no lower bound above 0 is known{hint}"], info


def _trunk_lines(ptop, result) -> list:
    loaded = [(lk, result.trunk_load.get(lk.name, 0.0)) for lk in ptop.trunks()]
    loaded = [(lk, x) for lk, x in loaded if x > 0]
    if not loaded:
        return ["# trunks: none carries traffic"]
    return ["# trunk load/capacity: " + ", ".join(
        f"{lk.name} {x:g}/{lk.bw:g} ({100 * x / lk.bw:.1f}%)" if lk.bw > 0 else f"{lk.name} {x:g}"
        for lk, x in loaded)]  # fmt: skip


#: What the commands that read the topologies read: ``--format`` offers the words of the
#: spec's formats that hold them (``emulab`` for TOP PTOP, ``json`` for one INSTANCE).
TOPOLOGY_HOLDS = ("top", "ptop", "instance")


def _topologies(top: Any, ptop: Any, fmt: Any, command: str) -> tuple:
    """``(top, ptop)`` of a command line: recognised by content (:func:`read_topologies`),
    or read as ``--format`` says: ``emulab`` reads TOP with the ``.top`` reader and PTOP
    with the ``.ptop`` reader, ``json`` reads one ``coalloc.testbed.instance`` file; a file
    that does not parse so is refused in one line (:func:`common.read_as`)."""
    if fmt is None:
        return read_topologies(top, ptop, command=command)
    if fmt not in ("emulab", "json"):
        return _declared_topologies(top, ptop, fmt, command)
    from ..testbed.io import dicts, text

    if fmt == "json":
        if ptop is not None:
            raise ValueError(f"--format json reads one {dicts.INSTANCE_FORMAT} file that holds "
                             f"both topologies: drop {ptop}, or give --format emulab")  # fmt: skip
        return common.read_as(top, "json", dicts.read_instance, command=command,
                              expected=f"a {dicts.INSTANCE_FORMAT} JSON file")  # fmt: skip
    if ptop is None:
        raise ValueError(f"--format emulab reads two files, TOP PTOP: give the .ptop after {top}")
    return (
        common.read_as(top, "emulab", text.read_top, command=command, kinds=("top", "text"),
                       expected="a virtual topology (.top) first (TOP PTOP)"),
        common.read_as(ptop, "emulab", text.read_ptop, command=command, kinds=("ptop", "text"),
                       expected="a physical topology (.ptop) second (TOP PTOP)"),
    )  # fmt: skip


def _declared_topologies(top: Any, ptop: Any, fmt: str, command: str) -> tuple:
    """``(top, ptop)`` read by the spec's line formats of word ``fmt`` (a format added to
    the spec): one holding ``"instance"`` reads one file; else the one holding ``"top"``
    reads TOP and the one holding ``"ptop"`` reads PTOP."""
    from .._shared.family import family_spec

    fmts = [f for f in family_spec("testbed").line_formats if f.option == fmt]
    whole = next((f for f in fmts if "instance" in f.holds), None)
    if whole is not None:
        if ptop is not None:
            raise ValueError(f"--format {fmt} reads one file that holds both topologies: "
                             f"drop {ptop}")  # fmt: skip
        return tuple(common.read_as(top, fmt, whole.read, command=command,
                                    expected=whole.description))  # fmt: skip
    if ptop is None:
        raise ValueError(f"--format {fmt} reads two files, TOP PTOP: give the .ptop after {top}")
    parts = []
    for path, part in ((top, "top"), (ptop, "ptop")):
        reader = next((f for f in fmts if part in f.holds), None)
        if reader is None:
            raise ValueError(f"--format {fmt} declares no reader of a {part} file")
        parts.append(common.read_as(path, fmt, reader.read, command=command,
                                    expected=reader.description))  # fmt: skip
    return tuple(parts)


def _add_format(p) -> None:
    common.add_format_of(p, "testbed", TOPOLOGY_HOLDS,
                         "the topology files (TOP PTOP, or one INSTANCE)")


def _exact_params(args) -> dict:
    """The method's parameters with ``--time-limit`` (every method's ``time_limit``: the
    best mapping found by then) and ``--solver`` (the exact method's ``solver``; CP-SAT is
    its one solver)."""
    return common.exact_params(args, timed=tuple(testbed.METHODS))


def _cmd_assign(args) -> int:
    _check_args(args, positive=("exact_bound",))
    params = _exact_params(args)
    top, ptop = _topologies(args.top, args.ptop, args.format, "testbed assign")
    result = testbed.assign(top, ptop, args.method, seed=args.seed, **params)
    report = None
    quality, info = [], {}
    if result.mapping is not None:
        report = testbed.verify_mapping(top, ptop, result.mapping, result.routes,
                                        claimed=result.interswitch_bandwidth)  # fmt: skip
        quality, info = _assign_quality(top, ptop, result, args)
    why = explain_no(args, testbed.Instance(top, ptop), result)  # --explain: no mapping
    if args.json:
        doc = result.to_dict()
        if report is not None:
            doc["verify"] = report.to_dict()
            doc.update(info)
        explanation_json(why, doc)
        print(json.dumps(doc, indent=1, allow_nan=False))
    else:
        if result.mapping is None:
            print(result.assign_text(list(top.nodes)))
            print(f"# status: {result.status}")
            for line in explanation_lines(why, "# why not: "):  # a comment of assign's format
                print(line)
            print(f"No mapping: {result.message}", file=sys.stderr)
        else:
            print(result.assign_text(list(top.nodes)))
            ms = result.timings.get("total", 0.0) * 1e3
            print(f"# status: {result.status}")
            print(f"# {result.method}: inter-switch bandwidth {result.interswitch_bandwidth:g}"
                  f" in {ms:.2f} ms; verify: {'ok' if report.ok else 'FAILED'}")  # fmt: skip
            for line in quality + _trunk_lines(ptop, result):
                print(line)
    if result.mapping is None:
        return 1
    return 0 if report.ok else 1


def _cmd_verify(args) -> int:
    from .._shared.jsonio import InstanceError, load_json

    files = args.files
    if len(files) not in (2, 3):
        raise ValueError(
            f"testbed verify takes TOP PTOP RESULT or INSTANCE RESULT, got {len(files)} files"
        )
    top, ptop = _topologies(files[0], files[1] if len(files) == 3 else None, args.format,
                            "testbed verify")  # fmt: skip
    data, name = load_json(files[-1])
    if not isinstance(data, dict) or "mapping" not in data:
        raise ValueError(f"{name}: expected the JSON of 'coalloc testbed assign --json'")
    if data["mapping"] is None:
        print("the result holds no mapping")
        return 1
    try:
        report = testbed.verify_mapping(top, ptop, data["mapping"], data.get("routes"),
                                        claimed=data.get("interswitch_bandwidth"))  # fmt: skip
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:  # a malformed result: say which file
        raise InstanceError(f"{name}: {exc}") from None
    print(str(report))
    return 0 if report.ok else 1


#: ``coalloc testbed generate``: built from the spec (:data:`coalloc.testbed._spec.GENERATE`).
_cmd_generate = run_generate


def _cmd_simulate(args) -> int:
    import numpy as np

    from ..testbed import generators as g

    _check_args(args, whole=(("pcs", 1), ("switches", 1), ("experiments", 0)),
                positive=("duration",))  # fmt: skip
    ptop = (testbed.read_ptop(args.ptop) if args.ptop
            else g.deterlab(args.pcs, args.switches, seed=args.seed))  # fmt: skip
    wl = g.workload(args.experiments, seed=args.seed, mean_duration=args.duration)
    res = testbed.simulate(ptop, wl, args.methods, seed=args.seed,
                           show_progress=not args.no_progress)  # fmt: skip
    rows = []
    for m in res.methods:
        row = {"method": m, "experiments": len(wl), "failures": res.failures(m),
               "failure_rate": res.failures(m) / max(len(wl), 1),
               "mean_interswitch_bandwidth": float(np.nanmean(res.isw[m]))
               if res.success[m].any() else None,
               "median_ms": float(np.median(res.seconds[m]) * 1e3),
               "total_s": float(res.seconds[m].sum())}  # fmt: skip
        rows.append(row)
        if not args.json:
            print(f"{m:12s} failures {row['failures']:5d}/{len(wl)} "
                  f"({100 * row['failure_rate']:.1f}%), median {row['median_ms']:.2f} ms, "
                  f"total {row['total_s']:.1f} s")  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=1))
    return 0


def _cmd_assign_compat(args) -> int:
    from ..cli.assign_compat import run

    return run(args.assign_args)


def add_commands(sub, *, aliases: bool = False) -> None:
    """Add the testbed subcommands to ``sub``."""
    p = sub.add_parser("assign", help="map a .top experiment onto a .ptop testbed "
                       "(prints assign's Nodes:/Edges: sections)")  # fmt: skip
    p.add_argument("top", metavar="TOP|INSTANCE", help="virtual topology (.top), or one "
                   "coalloc.testbed.instance JSON file that holds both topologies")  # fmt: skip
    p.add_argument("ptop", nargs="?", metavar="PTOP", help="physical topology (.ptop); the "
                   "order is TOP PTOP (coalloc-assign, as Emulab's assign: PTOP TOP)")  # fmt: skip
    _add_format(p)
    p.add_argument("--method", default=testbed.DEFAULT_METHOD, choices=sorted(testbed.METHODS))
    common.add_seed(p, "seed of the annealer")
    common.add_params(p, 'scoring="2m"')
    common.add_exact_options(p, TESTBED_PARAMS["exact"])
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--exact-bound", type=common.seconds(), default=None, metavar="SECONDS",
        help="also run the exact CP-SAT model for up to SECONDS: its optimum or lower bound "
        "says how good the mapping is (needs the [exact] extra)",
    )  # fmt: skip
    add_explain_options(p)
    p.set_defaults(func=_cmd_assign)
    if aliases:
        return

    # assign's own command line, read by its getopt loop: every token goes to it as written
    # (prefix '+' so that argparse leaves assign's '-s 1' alone; no --help of argparse's)
    p = sub.add_parser("assign-compat", prefix_chars="+", add_help=False,
                       help="a drop-in for Emulab's assign: [-s SEED] [options] PTOP TOP, "
                       "its output and exit codes (0, 1 retryable, 2 impossible, 255 bad "
                       "input); also the command coalloc-assign",
                       usage="coalloc testbed assign-compat [-s SEED] [options] PTOP TOP "
                       "[NAME=VALUE ...]")  # fmt: skip
    p.add_argument("assign_args", nargs="*", metavar="ARG", help="assign's arguments")
    p.set_defaults(func=_cmd_assign_compat)

    p = sub.add_parser("verify", help="check the JSON of 'assign --json' against the files")
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="TOP PTOP RESULT, or INSTANCE RESULT (the topologies as 'assign' "
                   "reads them)")  # fmt: skip
    _add_format(p)
    p.set_defaults(func=_cmd_verify)

    p = add_generate(sub, "testbed",
                     help="write a generated testbed (.ptop) or experiment (.top)")
    common.add_output(p, "file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("simulate", help="replay a generated workload on a testbed, mappers "
                       "side by side")  # fmt: skip
    p.add_argument("--ptop", help="testbed file (default: a generated DeterLab-like one)")
    p.add_argument("--pcs", type=common.count(), default=255)
    p.add_argument("--switches", type=common.count(), default=5)
    p.add_argument("--experiments", type=common.count(0), default=500)
    p.add_argument(
        "--duration",
        type=common.Real(0.0, lo_open=True),
        default=20.0,
        help="mean duration (arrivals 1/s)",
    )
    p.add_argument("--methods", nargs="+", default=["assign+", "anneal"],
                   choices=sorted(testbed.METHODS))  # fmt: skip
    common.add_seed(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", "--no-progress", dest="no_progress", action="store_true",
                   help="no progress bar")  # fmt: skip
    p.set_defaults(func=_cmd_simulate)


# ------------------------------------------------------------------- coalloc plot testbed


def _cmd_plot(args) -> int:
    from .._shared.sniff import sniff

    ptop_file, result_file = args.ptop, args.result
    one = args.format == "json" or (args.format is None and sniff(args.top).kind == "json")
    if result_file is None and ptop_file is not None and one:
        ptop_file, result_file = None, ptop_file  # INSTANCE RESULT
    top, ptop = _topologies(args.top, ptop_file, args.format, "plot testbed")
    if result_file:
        data, name = load_json(result_file)
        if not isinstance(data, dict) or not isinstance(data.get("mapping"), dict):
            raise InstanceError(f"{name}: expected the JSON of 'coalloc testbed assign --json' "
                                "with a mapping")  # fmt: skip
        result: Any = data
    else:
        result = testbed.assign(top, ptop, args.method or testbed.DEFAULT_METHOD,
                                seed=args.seed, **picture_params(args))  # fmt: skip
        if result.mapping is None:
            raise ValueError(f"no mapping to draw: {result.message}")
    fig = testbed.plot_mapping(top, ptop, result, show_unused=not args.used_only)
    return picture_done(fig, args)


def add_plot(fams) -> None:
    """Add ``coalloc plot testbed`` to ``fams`` (the subparsers of ``coalloc plot``)."""
    from ..cli.plot import picture_options

    p = fams.add_parser("testbed", help="virtual nodes on their PCs, grouped by switch")
    p.add_argument("top", metavar="TOP|INSTANCE", help="virtual topology (.top), as 'coalloc "
                   "testbed assign TOP PTOP', or a coalloc.testbed.instance JSON file")  # fmt: skip
    p.add_argument("ptop", nargs="?", metavar="PTOP", help="physical topology (.ptop)")
    p.add_argument("result", nargs="?",
                   help="JSON of 'coalloc testbed assign --json' (optional)")  # fmt: skip
    p.add_argument("--used-only", action="store_true", help="leave out the unused PCs")
    _add_format(p)
    picture_options(p, 'scoring="2m"')
    p.set_defaults(func=_cmd_plot)
