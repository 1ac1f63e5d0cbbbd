"""``coalloc collective ...``: solve, verify, simulate and generate for collective requests."""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from .. import collective
from .._shared.jsonio import InstanceError, atomic_output, load_json
from .._shared.result import jsonable
from .._shared.schema import join_path
from ..cli import _common as common
from ..cli._generate import add_generate, run_generate
from ..cli.explain import add_explain_options, explain_no, explanation_json, explanation_lines
from ..cli.plot import picture_done, picture_params
from ..collective import io as cio
from ..collective.constraints import PARAMS

__all__ = ["add_commands"]


def _start_quality(result, request) -> str:
    """How the start compares with the earliest possible one (the request's ``t_e``)."""
    wait = result.start - request.earliest_start
    if wait <= 0:
        return (
            f"  quality: optimal start: {result.start:g} s is the earliest start the request "
            "allows (the window opens then)"
        )
    if result.proven:
        return (
            f"  quality: proven earliest start: {result.start:g} s, {wait:g} s after the window "
            f"opens at {request.earliest_start:g} s (no admissible set of resources earlier)"
        )
    known = ""
    if result.bound is not None and result.bound > request.earliest_start:
        known = f"; no admissible start before {result.bound:g} s (proven)"
    how = ("--method scan with a longer --time-limit proves it" if result.status == "time_limit"
           else "--method scan or exact proves it")  # fmt: skip
    return (
        f"  quality: starts {wait:g} s after the earliest possible start "
        f"{request.earliest_start:g} s (when the window opens); not proven earliest "
        f"({how}){known}"
    )


def _limit(text: str) -> int:
    """``--limit``: a count of jobs, 0 for all (ASCII digits; a negative count is refused
    rather than read as "all but the last"); ``ValueError`` (one line, exit 2)."""
    t = str(text).strip()
    if not (t.isascii() and t.isdigit()):
        raise ValueError(f"--limit must be an integer >= 0 (0: all jobs), got {text!r}")
    return int(t)


#: What a collective command reads where a request, a pool or an instance belongs.
_EXPECTED = ("a request, pool or instance JSON file, a CSV pool (.csv) or a pool snapshot "
             "(.npz)")  # fmt: skip


#: What the POOL file holds: ``--format`` offers the words of the spec's formats that hold it
#: (``json``, ``csv``, ``npz``; a request or an instance is JSON).
POOL_HOLDS = ("pool",)


def _file_kind(path: str, command: str = "collective", fmt=None):
    """``(kind, data, name)`` of a command's file, recognised by its content: kind
    ``"pool"``, ``"request"``, ``"instance"`` (a JSON file's ``"format"``, or its fields),
    ``"snapshot"`` (a pool snapshot, ``.npz``), ``"csv"`` (a CSV pool) or None (a JSON
    file of no known kind: the file's position decides); data is the parsed JSON, read
    once (None for the other formats). ``fmt`` (``--format``) forces the format: the
    file is then read as it says (:func:`_pool_of`)."""
    from .._shared.sniff import sniff, wrong_kind

    if fmt in ("npz", "csv"):
        return {"npz": "snapshot", "csv": "csv"}[fmt], None, str(path)
    if fmt is not None and fmt != "json":  # another line format of a pool the spec declares
        return "line", None, str(path)
    found = sniff(path) if fmt is None else None
    if found is not None and found.kind == "npz":
        return "snapshot", None, str(path)
    if found is not None and found.kind not in ("json", "missing"):
        if str(path).lower().endswith(".csv") or (found.kind == "text" and _csv_like(path)):
            return "csv", None, str(path)
        raise wrong_kind(path, found, command, _EXPECTED)
    data, name = common.read_as(path, fmt, load_json, command=command,
                                expected="a JSON pool or instance file")  # fmt: skip
    fmt = data.get("format") if isinstance(data, dict) else None
    kinds = {cio.POOL_FORMAT: "pool", cio.REQUEST_FORMAT: "request",
             cio.INSTANCE_FORMAT: "instance"}  # fmt: skip
    if fmt in kinds:
        return kinds[fmt], data, name
    if isinstance(data, dict) and fmt is None:  # a file without "format": by its fields
        if "capacity" in data:
            return "pool", data, name
        if "duration" in data:
            return "request", data, name
    if fmt is not None:
        raise wrong_kind(path, found or sniff(path), command, _EXPECTED)
    return None, data, name


def _csv_like(path: str) -> bool:
    """A text file whose first line has a comma (a CSV pool under another name)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return "," in fh.readline()
    except (OSError, UnicodeDecodeError):
        return False


def _pool_of(kind: str, data: Any, name: str, path: str, fmt=None, command: str = "collective"):
    """The pool of a file of ``kind`` (``fmt``: the format ``--format`` forced)."""
    if kind == "csv":
        return common.read_as(path, fmt, cio.read_pool_csv, command=command,
                              expected="a CSV pool")  # fmt: skip
    if kind == "snapshot":
        return common.read_as(path, fmt, cio.read_pool_snapshot, command=command,
                              expected="a pool snapshot (.npz)")  # fmt: skip
    if kind == "line":  # read by the spec's declared reader (a format added to the spec)
        declared = common.line_formats_of("collective", *POOL_HOLDS)[fmt]
        return common.read_as(path, fmt, declared.read, command=command,
                              expected=declared.description)  # fmt: skip
    if kind == "instance":
        return cio.instance_from_dict(data, source=name)[0]
    return cio.pool_from_dict(data, source=name)


def _one_file(args, command: str) -> None:
    """``INSTANCE`` alone (or ``INSTANCE RESULT``): the pool's slot names the instance too."""
    from .._shared.sniff import Sniffed, wrong_kind

    kind = _file_kind(args.request)[0]
    if kind == "instance":
        args.pool = args.request
        return
    names = {"request": "a collective request (coalloc.collective.request)",
             "pool": "a resource pool", "csv": "a CSV resource pool",
             "snapshot": "a pool snapshot (.npz)"}  # fmt: skip
    what = names.get(kind, "a JSON file of no known kind")
    raise wrong_kind(
        args.request, Sniffed(str(kind), what), command,
        f"REQUEST POOL, or one {cio.INSTANCE_FORMAT} file that holds both",
        "give the other file too" if kind in ("request", "pool", "csv", "snapshot") else "",
    )  # fmt: skip


def _read_pair(args):
    """The request and the pool of a command, given as ``REQUEST POOL`` (demand first, as
    ``collective.solve``) or as one instance file (``args.pool`` None); the old order
    ``POOL REQUEST`` is told apart by the files' kinds and swapped with a one-line note on
    stderr (an instance file given twice, or standing for either part, keeps working). A
    request naming properties the pool lacks is refused naming both files (not later by the
    solver, without a file name)."""
    command = f"collective {getattr(args, 'subcommand', None) or 'plot'}"
    if args.pool is None:
        _one_file(args, command)
    fmt = getattr(args, "format", None)  # the POOL file's
    first, second = _file_kind(args.request, command), _file_kind(args.pool, command, fmt)
    pools = ("pool", "csv", "snapshot")
    if fmt is None and ((first[0] in pools and second[0] not in pools) or (
        second[0] == "request" and first[0] != "request"
    )):  # fmt: skip
        print(f"coalloc collective: POOL REQUEST is deprecated, give REQUEST POOL "
              f"(read {args.pool} as the request and {args.request} as the pool)",
              file=sys.stderr)  # fmt: skip
        first, second = second, first
        args.request, args.pool = args.pool, args.request
    kind, req_data, req_name = first
    if kind in ("csv", "snapshot"):  # a pool where the request belongs, with no request
        from .._shared.sniff import sniff, wrong_kind

        raise wrong_kind(args.request, sniff(args.request), command,
                         "a request or instance JSON file (REQUEST POOL)")  # fmt: skip
    pool = _pool_of(second[0], second[1], second[2], args.pool, fmt, command)
    if kind == "instance":
        request = cio.instance_from_dict(req_data, source=req_name)[1]
    else:
        request = cio.request_from_dict(req_data, source=req_name)
    for key, table in (("minimum", request.minimum), ("total", request.total)):
        unknown = sorted(set(table) - set(pool.names))
        if unknown:
            raise ValueError(
                f"{args.request}: {join_path(key, unknown[0])}: not a property of the pool "
                f"{args.pool} (names: {list(pool.names)})"
            )
    return request, pool


def _write_pool(path: str, pool, option: str) -> None:
    """Write a pool in the format its name says: ``*.npz`` a pool snapshot, ``*.csv``
    refused (CSV pools are read, not written), any other name JSON."""
    lower = str(path).lower()
    if lower.endswith(".npz"):
        cio.write_pool_snapshot(path, pool)
    elif lower.endswith(".csv"):
        raise ValueError(
            f"{option} {path}: a pool is written as JSON or as a snapshot (.npz), not CSV: "
            "name the file *.json or *.npz"
        )
    else:
        cio.write_pool(path, pool)


def _cmd_solve(args) -> int:
    request, pool = _read_pair(args)
    # --time-limit is every method's one deadline (the best answer found by then comes back,
    # status "time_limit"); --solver (--backend: its old name) is the exact method's
    # integer-programming solver; the kernels' backend of scan and cankar is -p backend=numpy.
    params = common.exact_params(args, timed=tuple(collective.METHODS))
    result = collective.solve(request, pool, args.method, seed=args.seed, **params)
    if result.start is None:
        why = explain_no(args, collective.Instance(request, pool), result)  # --explain
        if args.output:
            cio.write_result(args.output, result)
        if args.json:
            doc = explanation_json(why, {"request": args.request, **result.to_dict()})
            print(json.dumps(jsonable(doc)))
            return 1
        print(f"{args.request}: {result.method}: rejected ({result.status}): {result.message}")
        if args.verbose and result.rejection:
            print(json.dumps(result.rejection, indent=1))
        for line in explanation_lines(why):
            print(line)
        return 1
    report = collective.verify(request, pool, result)
    if args.json:
        out = {"request": args.request, **result.to_dict(),
               "earliest_start": request.earliest_start, "latest_start": request.latest_start,
               "node_names": [pool.node_names[int(j)] for j in result.resources],
               "verify": report.to_dict()}  # fmt: skip
        print(json.dumps(jsonable(out)))
    else:
        ms = result.timings.get("total", float("nan")) * 1e3
        print(f"{args.request}: {result.method}: start {result.start:g} s on {request.count} "
              f"resources {list(map(int, result.resources))} in {ms:.2f} ms; utilisation "
              f"factor {result.utilisation:.6g} ({result.status})")  # fmt: skip
        print(_start_quality(result, request))
        print(
            f"  window: start in [{request.earliest_start:g}, {request.latest_start:g}] s "
            f"for {request.duration:g} s; utilisation factor {result.utilisation:.4g} "
            "(paper eqs. 1-3: worst-case reserved share after the job, over properties)"
        )
        print("  amount reserved / capacity per resource:")
        names = pool.names
        for j, row in zip(result.resources, result.amounts):
            amounts = ", ".join(
                f"{n}={v:.4g}/{pool.capacity[int(j), i]:.4g}"
                for i, (n, v) in enumerate(zip(names, row))
            )
            print(f"  {pool.node_names[int(j)]}: {amounts}")
        if args.verbose:
            for key, value in result.timings.items():
                print(f"  time {key}: {value * 1e3:.3f} ms")
            print(f"  {report}")
    if args.output:
        cio.write_result(args.output, result, verify=report.to_dict())
        if not args.json:
            print(f"result written to {args.output}")
    if args.reserve_to:
        pool.reserve(result.start, request.duration, result.resources, result.amounts)
        _write_pool(args.reserve_to, pool, "--reserve-to")
        if not args.json:
            print(f"updated pool written to {args.reserve_to}")
    return 0 if report.ok else 1


def _add_simulate_explain(p) -> None:
    """``simulate --explain``: why each rejected request was rejected (issue 38)."""
    p.add_argument("--explain", action="store_true",
                   help="explain every rejection in its record (--records): the minimal "
                   "conflict on the timetables it met and the earliest later start that fits")
    p.add_argument("--explain-time", type=common.seconds(), default=1.0, metavar="S",
                   help="seconds at most per explanation (default 1)")
    p.add_argument("--explain-share", type=common.Real(0.0, what="share"),
                   default=0.5, metavar="F",
                   help="all the explanations together take at most F times the run's own "
                   "time so far, plus one --explain-time (default 0.5): later rejections "
                   "are recorded as not explained")  # fmt: skip
    p.add_argument("--explain-budget", type=common.seconds(), default=None, metavar="S",
                   help="an absolute cap in seconds on all the explanations, beside the "
                   "share (default: none)")  # fmt: skip


def _explained(records) -> dict:
    """How many rejections each ``explained`` outcome has (the summary's line)."""
    out: dict = {}
    for rec in records:
        if "explained" in rec:
            out[rec["explained"]] = out.get(rec["explained"], 0) + 1
    return out


def _cmd_simulate(args) -> int:
    from .._shared.sniff import sniff, wrong_kind
    from ..collective.simulate import simulate

    limit = _limit(args.limit)
    kind, data, name = _file_kind(args.pool, "collective simulate", args.format)
    if kind == "request":
        raise wrong_kind(args.pool, sniff(args.pool), "collective simulate",
                         "a pool first (JSON, CSV or .npz; or an instance file), then the "
                         "workload")  # fmt: skip
    pool = _pool_of(kind, data, name, args.pool, args.format, "collective simulate")
    extra = {}
    swf = args.swf or args.workload.lower().endswith(".swf") or sniff(args.workload).kind == "swf"
    if swf:
        jobs = cio.read_swf(args.workload)
        if limit:  # the first LIMIT jobs of the trace (cancelled ones among them)
            jobs = jobs[:limit]
        wl = cio.swf_workload(
            jobs, procs_property=args.procs_property, memory_property=args.memory_property,
            procs_per_node=args.procs_per_node, max_wait=args.max_wait,
            collective=not args.simple, source=args.workload,
        )  # fmt: skip
        reqs, extra = wl.requests, wl.simulate_kwargs()
    else:
        reqs = cio.read_workload(args.workload)
    params = dict(args.param or [])
    if args.explain:  # why each rejection (in its record), within the budget
        extra = {**extra, "explain": True, "explain_time": args.explain_time,
                 "explain_budget": args.explain_budget,
                 "explain_share": args.explain_share}  # fmt: skip
    try:
        sim = simulate(pool, reqs, method=args.method, seed=args.seed,
                       slot_seconds=args.slot_seconds, horizon=args.horizon,
                       show_progress=sys.stderr.isatty(), **extra, **params)  # fmt: skip
    except (TypeError, ValueError) as exc:  # say which files the simulation came from
        raise ValueError(f"simulating {args.workload} on {args.pool}: {exc}") from None
    summary = sim.summary()
    if args.explain:
        summary["explained"] = _explained(sim.records)
    print(json.dumps(summary, indent=1))
    if args.output:
        import csv

        with atomic_output(args.output, newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["slot_start", *[f"usage_{n}" for n in sim.names],
                        *[f"job_usage_{n}" for n in sim.names]])  # fmt: skip
            for t, u, ju in zip(sim.slot_times, sim.usage, sim.job_usage):
                w.writerow([f"{t:g}", *[f"{x:.6g}" for x in u], *[f"{x:.6g}" for x in ju]])
        print(f"per-slot usage written to {args.output}")
    if args.records:
        with atomic_output(args.records) as fh:
            for rec in sim.records:
                fh.write(json.dumps(rec) + "\n")
            for rec in sim.skipped:  # the jobs not simulated, with the status that says why
                fh.write(json.dumps({**rec, "accepted": False, "simulated": False}) + "\n")
        print(f"per-request records written to {args.records}")
    return 0


#: ``coalloc collective generate``: built from the spec (:data:`coalloc.collective._spec.GENERATE`).
_cmd_generate = run_generate


def _instance_then_result(args) -> None:
    """``INSTANCE RESULT``: the second file is the result when the first holds both parts
    (and the second is not the instance again: ``INST INST`` is the older spelling)."""
    if args.result is None and args.pool is not None and _file_kind(args.request)[0] == "instance":
        try:
            again = _file_kind(args.pool)[0] == "instance"
        except (InstanceError, ValueError):  # a result (or another file): not the instance
            again = False
        if not again:
            args.pool, args.result = None, args.pool


def _cmd_verify(args) -> int:
    _instance_then_result(args)
    if args.result is None:
        raise ValueError("collective verify takes REQUEST POOL RESULT or INSTANCE RESULT")
    request, pool = _read_pair(args)
    from .._shared.jsonio import get_key

    data, name = load_json(args.result)
    start = get_key(data, "start", name)
    try:
        report = collective.verify_coallocation(
            request,
            pool,
            start,
            get_key(data, "resources", name),
            get_key(data, "amounts", name),
            claimed_utilisation=data.get("utilisation"),
        )
    except (ValueError, TypeError) as exc:  # a value verify cannot judge: name the file
        kind = TypeError if isinstance(exc, TypeError) else ValueError
        raise kind(f"{name}: {exc}") from None
    print(str(report))
    return 0 if report.ok else 1


def _cmd_solve_batch(args) -> int:
    return common.run_batch(args, "collective")


def _add_format(p) -> None:
    common.add_format_of(p, "collective", POOL_HOLDS,
                         "the POOL file (a request or an instance is JSON)")


def add_commands(sub, *, aliases: bool = False) -> None:
    """Add the collective co-allocation subcommands to ``sub``."""
    p = sub.add_parser("solve", help="co-allocate a request on a pool (Cankar et al.)")
    p.add_argument("request", metavar="REQUEST|INSTANCE",
                   help="request file (JSON), or one instance file that holds the pool and "
                   "the request")  # fmt: skip
    p.add_argument("pool", nargs="?", metavar="POOL",
                   help="pool file (JSON, CSV or a .npz snapshot, recognised by content; see "
                   "'coalloc docs collective') or an instance file; the old order POOL "
                   "REQUEST works (deprecated)")  # fmt: skip
    p.add_argument("--method", default=collective.DEFAULT_METHOD,
                   choices=sorted(collective.METHODS))  # fmt: skip
    common.add_seed(p)
    _add_format(p)
    common.add_params(p, "backend=numpy")
    common.add_exact_options(p, PARAMS["exact"])
    common.add_output(p, "write the result as JSON to this file")
    common.add_output_option(
        p, "--reserve-to", help="reserve the solution and write the updated pool here"
    )
    common.add_verbose(p)
    p.add_argument("--json", action="store_true",
                   help="print the full result (with the verification) as JSON")  # fmt: skip
    add_explain_options(p)
    p.set_defaults(func=_cmd_solve)

    p = sub.add_parser("verify", help="check a result file against its request and pool")
    p.add_argument("request", metavar="REQUEST|INSTANCE",
                   help="request file (JSON) or an instance file")  # fmt: skip
    p.add_argument("pool", metavar="POOL", help="pool file (JSON, CSV or .npz) or an "
                   "instance file; with one instance file: the RESULT")  # fmt: skip
    p.add_argument("result", nargs="?", metavar="RESULT")
    _add_format(p)
    p.set_defaults(func=_cmd_verify)

    p = sub.add_parser("simulate", help="run a stream of requests (workload JSON or SWF)")
    p.add_argument("pool", help="pool file")
    p.add_argument("workload", help="coalloc.collective.workload JSON or an SWF file (.swf)")
    p.add_argument("--swf", action="store_true", help="read WORKLOAD as SWF whatever its name")
    _add_format(p)
    p.add_argument("--method", default=collective.DEFAULT_METHOD,
                   choices=sorted(collective.METHODS))  # fmt: skip
    p.add_argument("--simple", action="store_true", help="SWF jobs as simple requests")
    p.add_argument("--procs-property", default="cores", help="property SWF processors map to")
    p.add_argument("--memory-property", default=None, help="property SWF memory maps to (GB)")
    p.add_argument("--procs-per-node", type=common.Real(0.0, lo_open=True), default=1.0)
    p.add_argument(
        "--max-wait", type=common.Real(0.0), default=86400.0, help="t_l - t_e of SWF jobs (s)"
    )
    p.add_argument("--limit", type=common.count(0, what="a number of jobs (0: all)"), default=0,
                   help="only the first LIMIT SWF jobs (0: all)")  # fmt: skip
    p.add_argument("--slot-seconds", type=common.seconds(), default=300.0)
    p.add_argument("--horizon", type=common.seconds(), default=None,
                   help="the end of the pool's known future (s): a job that cannot end by "
                        "then is rejected 'past the horizon' (default: none)")  # fmt: skip
    common.add_output_option(p, "--records", help="write one JSON line per request to this file")
    common.add_seed(p)
    common.add_params(p, "time_limit=5")
    common.add_output(p, "write the per-slot usage as CSV to this file")
    _add_simulate_explain(p)
    p.set_defaults(func=_cmd_simulate)

    p = add_generate(sub, "collective",
                     help="write a Table 1 pool, a section 4.2 request or both")
    p.add_argument("--simple", action="store_true", help="a simple request (e_i = d_i / N)")
    common.add_output(p, "file to write", required=True)
    p.set_defaults(func=_cmd_generate)

    p = sub.add_parser("solve-batch", help="solve many instance files in parallel")
    common.add_batch_options(p, collective.METHODS, collective.DEFAULT_METHOD, "backend=numpy")
    p.set_defaults(func=_cmd_solve_batch)


# ------------------------------------------------------------------- coalloc plot collective


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


def _cmd_plot(args) -> int:
    _instance_then_result(args)
    request, pool = _read_pair(args)
    if args.result:
        result: Any = _collective_result(args.result, pool, request)
    else:
        result = collective.solve(request, pool, args.method, seed=args.seed,
                                  **picture_params(args))  # fmt: skip
        if result.start is None:
            print(f"the request is rejected ({result.status}): {result.message}; drawing the "
                  "timetables only")  # fmt: skip
            result = None
    fig = collective.plot_timetable(request, pool, result, property=args.property,
                                    max_nodes=args.max_nodes)  # fmt: skip
    return picture_done(fig, args)


def add_plot(fams) -> None:
    """Add ``coalloc plot collective`` to ``fams`` (the subparsers of ``coalloc plot``)."""
    from ..cli.plot import picture_options

    p = fams.add_parser("collective", help="timetables with the new reservation",
                        description="REQUEST POOL [RESULT], as 'coalloc collective solve' "
                        "(an instance file stands for both: INST INST; the old order "
                        "POOL REQUEST still works, deprecated).")  # fmt: skip
    p.add_argument("request", metavar="REQUEST|INSTANCE",
                   help="request file (JSON) or an instance file")  # fmt: skip
    p.add_argument("pool", nargs="?", metavar="POOL",
                   help="pool file (JSON, CSV or .npz) or an instance file")  # fmt: skip
    p.add_argument("result", nargs="?", help="result file of 'collective solve -o' (optional)")
    p.add_argument("--property", default=None, help="property drawn (default: the first "
                   "the request asks a total of)")  # fmt: skip
    p.add_argument("--max-nodes", type=common.count(), default=30, help="nodes drawn at most")
    _add_format(p)
    picture_options(p, "backend=numpy")
    p.set_defaults(func=_cmd_plot)
