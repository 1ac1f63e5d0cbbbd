"""What every family's subcommands share: options written once, and the batch runner."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from typing import Any, Optional, Sequence

from .._shared.jsonio import atomic_output

__all__ = [
    "OutputPath",
    "add_output_option",
    "param",
    "jobs",
    "add_params",
    "add_seed",
    "add_output",
    "add_verbose",
    "add_exact_options",
    "solver_params",
    "describe_bound",
    "describe_gap",
    "add_batch_options",
    "run_batch",
]


def param(text: str):
    """``KEY=VALUE`` with a JSON value (a plain string when it is not JSON)."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, value = text.split("=", 1)
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def jobs(text: str) -> int:
    """A number of workers: positive, or -1 for every CPU."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of workers, got {text!r}") from None
    if value < 1 and value != -1:
        raise argparse.ArgumentTypeError(f"must be a positive number or -1 (all CPUs), got {value}")
    return value


def add_params(p: argparse.ArgumentParser, example: str) -> None:
    """``-p/--param KEY=VALUE`` (repeatable, JSON values)."""
    p.add_argument(
        "-p", "--param", action="append", type=param, metavar="KEY=VALUE",
        help=f"solver parameter, e.g. -p {example} (repeatable; JSON values)",
    )  # fmt: skip


def add_seed(p: argparse.ArgumentParser, help: str = "seed of every random choice") -> None:
    """``--seed N`` (default 0)."""
    p.add_argument("--seed", type=int, default=0, help=help)


class OutputPath(argparse._StoreAction):
    """The action of every option that names a file the command writes.

    It stores the path like ``store`` does; its class marks the option as an output, so that
    the ``coalloc`` command refuses the path when it is also one of the command's inputs
    (:func:`coalloc.cli.main`), and the writes go through the one writer
    (:func:`coalloc._shared.jsonio.atomic_output`). ``tests/shared/test_writer_cli.py``
    finds every option by this class and fails on one that writes without it.
    """


def add_output_option(p: argparse.ArgumentParser, *flags: str, help: str,
                      required: bool = False, metavar: str = "FILE") -> None:  # fmt: skip
    """An option naming a file the command writes (``-o``, ``--reserve-to``, ``--records``).

    Every option that writes a file is added here (:class:`OutputPath`); the command writes
    it with :func:`coalloc._shared.jsonio.atomic_output` or a family writer built on it.
    """
    p.add_argument(*flags, action=OutputPath, required=required, metavar=metavar, help=help)


def add_output(p: argparse.ArgumentParser, help: str, required: bool = False) -> None:
    """``-o/--output FILE`` (an :class:`OutputPath`)."""
    add_output_option(p, "-o", "--output", help=help, required=required)


def add_exact_options(p: argparse.ArgumentParser, backends: Sequence[str]) -> None:
    """``--time-limit SECONDS``, ``--solver NAME`` (alias ``--backend``, its former name) and
    ``--quiet`` for the exact method."""
    p.add_argument(
        "--time-limit", type=float, default=None, metavar="SECONDS",
        help="wall-clock limit of an exact solve (model building included)",
    )  # fmt: skip
    p.add_argument(
        "--solver", "--backend", dest="solver", choices=list(backends), default=None,
        help="integer-programming solver of the exact method (--backend: its former name)",
    )  # fmt: skip
    p.add_argument(
        "--quiet", action="store_true",
        help="no progress display (incumbent, bound, gap) of an exact solve on a terminal",
    )  # fmt: skip


def solver_params(args: argparse.Namespace) -> dict:
    """``-p KEY=VALUE`` pairs plus ``--time-limit``/``--solver`` when given.

    It also decides whether an exact solve shows its progress (incumbent, bound and gap over
    time) on standard error: yes for ``--method exact`` without ``--quiet``, and then only on
    a terminal (:func:`coalloc._shared.progress.set_exact_progress`).
    """
    from .._shared.progress import set_exact_progress

    set_exact_progress(
        getattr(args, "method", None) == "exact" and not getattr(args, "quiet", False)
    )
    params = dict(getattr(args, "param", None) or [])
    for key, aliases in (("time_limit", ("time_limit",)), ("solver", ("solver", "backend"))):
        value = getattr(args, key, None)
        if value is not None:
            for name in aliases:  # -p backend=... is the solver's deprecated name
                if name in params and params[name] != value:
                    raise ValueError(f"--{key.replace('_', '-')} and -p {name}=... disagree")
            params[key] = value
    return params


def exact_params(args: argparse.Namespace) -> dict:
    """:func:`solver_params`, refusing ``--time-limit``/``--solver`` without ``--method exact``."""
    params = solver_params(args)
    if getattr(args, "method", None) != "exact":
        for key in ("time_limit", "solver"):
            if getattr(args, key, None) is not None:
                raise ValueError(f"--{key.replace('_', '-')} applies to --method exact only")
    return params


def describe_gap(gap: Optional[float]) -> str:
    """A relative gap as a percentage (``"unknown (no solution)"`` when None)."""
    return "unknown (no solution)" if gap is None else f"{100 * gap:.1f}%"


def describe_bound(result: Any, kind: str = "upper") -> Optional[str]:
    """``status, bound and gap`` of a result in one line (None when it has no bound)."""
    if result.bound is None:
        return None
    gap = describe_gap(result.gap)
    return f"  {result.status}: {kind} bound {result.bound:g}, gap {gap}"


def add_verbose(p: argparse.ArgumentParser) -> None:
    """``-v/--verbose``."""
    p.add_argument("-v", "--verbose", action="store_true", help="print timings and counters")


def add_batch_options(p: argparse.ArgumentParser, methods: Sequence[str], default: str,
                      example: str) -> None:  # fmt: skip
    """The options of every ``solve-batch``: files, workers, method, seed, params, output."""
    p.add_argument("files", nargs="+", metavar="FILE", help="instance files (JSON)")
    p.add_argument(
        "-j", "--jobs", type=jobs, default=None,
        help="parallel workers (default: every CPU; -1 likewise)",
    )  # fmt: skip
    each = "method (default: each problem kind's own default)"
    p.add_argument("--method", default=default, choices=sorted(set(methods)),
                   help=each if default is None else None)  # fmt: skip
    p.add_argument(
        "--processes", action="store_true", help="use worker processes instead of threads"
    )
    add_seed(p, "batch seed; instance i is solved with coalloc.batch.instance_seed(SEED, i)")
    add_params(p, example)
    p.add_argument("--chunksize", type=int, default=1, help="instances per task (default 1)")
    add_output(
        p, "write one JSON line per instance, in input order, to this file ('-': stdout)",
        required=True,
    )  # fmt: skip
    p.add_argument(
        "--quiet", "--no-progress", dest="no_progress", action="store_true",
        help="no progress bar on stderr (it is also hidden when stderr is not a terminal)",
    )  # fmt: skip
    p.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS",
        help="per-instance time limit: an instance still running is recorded as failed "
        "(enforced by killing its worker with --processes; cooperative with threads)",
    )  # fmt: skip


def _batch_line(index: int, name: str, record: Any) -> dict:
    from ..batch import BatchError

    if isinstance(record, BatchError):
        return {
            "index": index, "file": name, "ok": False, "status": "error", "seed": record.seed,
            "error": {"type": record.exc_type, "message": record.message},
        }  # fmt: skip
    result, report = record
    ok = bool(result.success and report.get("ok", report.get("feasible")))
    return {"index": index, "file": name, "ok": ok, **result.to_dict(), "verify": report}


def run_batch(args: argparse.Namespace, family: str, params: Optional[dict] = None) -> int:
    """Solve ``args.files`` of one family in parallel; one JSON line per instance."""
    from ..batch import ProgressBar, _batch_iter

    show = not args.no_progress and sys.stderr.isatty()
    records = _batch_iter(
        args.files, args.method, family=family, n_jobs=args.jobs, executor=None,
        backend="processes" if args.processes else "threads", seed=args.seed,
        chunksize=args.chunksize, max_in_flight=None, on_error="record",
        progress=ProgressBar(sys.stderr) if show else None,
        params={**dict(args.param or []), **(params or {})}, with_report=True,
        timeout=args.timeout,
    )  # fmt: skip
    to_stdout = args.output == "-"
    failed = []
    t0 = time.perf_counter()
    with (
        contextlib.closing(records),
        (  # closing: the progress bar ends before the summary
            contextlib.nullcontext(sys.stdout) if to_stdout else atomic_output(args.output)
        ) as out,
    ):
        for index, (name, record) in enumerate(zip(args.files, records)):
            line = _batch_line(index, name, record)
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            if not line["ok"]:
                failed.append(
                    str(record) if not isinstance(record, tuple)
                    else f"instance {index} ({name}): {record[0].status}, not feasible"
                )  # fmt: skip
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
