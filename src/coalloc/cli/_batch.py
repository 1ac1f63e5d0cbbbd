"""The batch runner of every family's ``solve-batch``: its options and the one runner.

:func:`add_batch_options` declares the options (files, workers, method, seed, params,
output, ``--resume``, ``--timeout``, ``--scheduler``, ``--slurm-array``) and
:func:`run_batch` solves the files in parallel through :mod:`coalloc.batch`, one JSON line
per instance, on threads, processes, a Dask cluster or a Slurm job array, resuming a run cut
short. The options shared with the other subcommands live in :mod:`._common`, which
re-exports these names (``coalloc.cli._common.run_batch`` and the like still work).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sys
import time
from typing import Any, Optional, Sequence

from .._shared.jsonio import atomic_output, file_sha256

__all__ = ["add_batch_options", "chunksize", "run_batch"]


def add_batch_options(p: argparse.ArgumentParser, methods: Sequence[str], default: str,
                      example: str) -> None:  # fmt: skip
    """The options of every ``solve-batch``: files, workers, method, seed, params, output."""
    from ._common import add_output, add_params, add_seed, count, jobs, seconds

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
    p.add_argument("--chunksize", type=chunksize, default="auto",
                   help="instances per task, or 'auto' (the default, as in solve_many): "
                   "sized from each instance's predicted solve time, refined by the "
                   "measured times")  # fmt: skip
    add_output(
        p, "write one JSON line per instance, in input order, to this file ('-': stdout)",
        required=True,
    )  # fmt: skip
    p.add_argument(
        "--quiet", "--no-progress", dest="no_progress", action="store_true",
        help="no progress bar on stderr (it is also hidden when stderr is not a terminal)",
    )  # fmt: skip
    p.add_argument(
        "--timeout", type=seconds(), default=None, metavar="SECONDS",
        help="per-instance time limit: an instance still running is recorded as failed "
        "(enforced by killing its worker with --processes; cooperative with threads)",
    )  # fmt: skip
    p.add_argument(
        "--scheduler", default=None, metavar="ADDRESS",
        help="run on a Dask cluster: its scheduler's address (tcp://host:8786) or scheduler "
        "file (pip install 'coalloc[dask]'; see 'coalloc docs batch')",
    )  # fmt: skip
    p.add_argument(
        "--resume", action="store_true",
        help="append each line to the output as it arrives, and skip the instances whose "
        "lines are already there (same file content and seed): rerun the same command after "
        "a crash or Ctrl-C to finish the batch",
    )  # fmt: skip
    p.add_argument(
        "--slurm-array", action="store_true",
        help="run the batch as one Slurm job array (sbatch --array), one element per chunk "
        "of about 30 s of predicted work; the chunks, records and logs go through the folder "
        "OUTPUT.slurm, which the nodes must share; see 'coalloc docs batch'",
    )  # fmt: skip
    p.add_argument(
        "--max-running", type=count(1, 2**31 - 1, what="a number of elements"), default=None,
        metavar="K", help="with --slurm-array: at most K elements at once (sbatch's %%K)",
    )  # fmt: skip
    p.add_argument(
        "--sbatch", default=None, metavar="OPTIONS",
        help="with --slurm-array: more sbatch options, one string "
        "(e.g. '--partition=short --time=01:00:00')",
    )  # fmt: skip


def chunksize(text: str) -> Any:
    """``--chunksize``: a count, or ``auto``."""
    from ._common import count

    if text == "auto":
        return "auto"
    return count(1, 2**31 - 1, what="a count or 'auto'")(text)


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


def _item(args: argparse.Namespace, index: int) -> Any:
    """What the batch solves for file ``index``: the problem read beforehand, or the path."""
    items = getattr(args, "items", None)
    if items is not None and items[index] is not None:
        return items[index]
    return args.files[index]


def _file_digest(path: str) -> Optional[str]:
    """SHA-256 of an instance file's bytes (None when it cannot be read: the worker says why).

    ``path#k`` (instance ``k`` of a file of several, when no file has that very name):
    the digest of the file's bytes followed by ``#k``.
    """
    digest = hashlib.sha256()
    base, sep, part = path.rpartition("#")
    if sep and part.isascii() and part.isdigit() and not os.path.exists(path):
        whole = _file_digest(base)
        if whole is None:
            return None
        digest.update(whole.encode() + b"#" + part.encode())
        return digest.hexdigest()
    return file_sha256(path)


def _lines_done(path: str) -> set:
    """``(sha256, seed)`` of every complete line of an earlier ``--resume`` run in ``path``
    (a record of an instance the batch cancelled is not done: it runs again)."""
    done: set = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for text in fh:
                if not text.endswith("\n"):
                    break  # cut short by a kill: the writer drops it
                try:
                    line = json.loads(text)
                except ValueError:
                    continue
                if not isinstance(line, dict) or "sha256" not in line:
                    continue
                if (line.get("error") or {}).get("type") in ("Cancelled", "SlurmError"):
                    continue  # not solved: a cancelled batch, a lost Slurm element
                done.add((line["sha256"], line.get("seed")))
    except FileNotFoundError:
        pass
    return done


def run_batch(args: argparse.Namespace, family: str, params: Optional[dict] = None,
              items: Optional[Sequence[Any]] = None) -> int:  # fmt: skip
    """Solve ``args.files`` of one family in parallel; one JSON line per instance.

    ``items``, when given, runs parallel to ``args.files``: the problem already read for
    each name (None: the worker reads the file). A family whose files hold several
    instances (an OR-Library GAP file) names them ``path#k`` and passes them read; their
    ``--resume`` digest is that of the file's bytes and ``#k``.

    With ``--resume`` the lines are appended to the output as they arrive (each with the
    ``sha256`` of its instance file), and the instances whose line is already there with
    the same file content and seed are skipped; instance ``i`` keeps the seed
    ``instance_seed(SEED, i)`` whatever was skipped, so the file ends as one run writes it
    (in another order when runs were interrupted).
    """
    from ..batch import instance_seed

    resume = bool(getattr(args, "resume", False))
    to_stdout = args.output == "-"
    if resume and to_stdout:
        raise ValueError("--resume appends to an output file: give -o FILE, not '-'")
    todo = list(range(len(args.files)))
    seeds: Any = args.seed
    digests: dict = {}
    if resume:
        done = _lines_done(args.output)
        todo = []
        for i, name in enumerate(args.files):
            digests[i] = _file_digest(name)
            if (digests[i], instance_seed(args.seed, i)) not in done:
                todo.append(i)
        seeds = [instance_seed(args.seed, i) for i in todo]
    skipped = len(args.files) - len(todo)
    if items is not None:
        args.items = list(items)
    _check_slurm_options(args)
    with _dask_executor(args) as executor:
        return _run_batch_on(args, family, params, executor, todo, seeds, digests, skipped)


def _check_slurm_options(args: argparse.Namespace) -> None:
    """Refuse ``--slurm-array`` beside another engine, and its options without it."""
    if not getattr(args, "slurm_array", False):
        for name in ("max_running", "sbatch"):
            if getattr(args, name, None) is not None:
                flag = "--" + name.replace("_", "-")
                raise ValueError(f"{flag} applies to --slurm-array only")
        return
    if args.processes or getattr(args, "scheduler", None) is not None:
        raise ValueError("--slurm-array runs the batch as a Slurm job array: drop "
                         + ("--processes" if args.processes else "--scheduler"))  # fmt: skip
    if args.output == "-":
        raise ValueError("--slurm-array works through the folder OUTPUT.slurm: give -o FILE, "
                         "not '-'")  # fmt: skip


def _slurm_records(args: argparse.Namespace, family: str, params: Optional[dict],
                   todo: Sequence[int], progress: Any) -> Any:  # fmt: skip
    """The records of ``todo`` from a Slurm job array planned over every file (so that a
    rerun plans the same chunks and reads the records of the elements already done)."""
    from ..batch.slurm import _array_iter, _ArrayOptions

    folder = args.output + ".slurm"  # beside the output: on the file system the nodes share
    return _array_iter(
        [_item(args, i) for i in range(len(args.files))], args.method, _ArrayOptions(
            folder=folder, family=family, seed=args.seed, max_running=args.max_running,
            workers=None if args.jobs in (None, -1) else args.jobs,
            sbatch_args=args.sbatch or (), timeout=args.timeout, progress=progress,
            params={**dict(args.param or []), **(params or {})}, with_report=True,
            wanted=todo),
    )  # fmt: skip


@contextlib.contextmanager
def _dask_executor(args: argparse.Namespace) -> Any:
    """The executor of ``--scheduler``'s Dask cluster (None without it), closed after."""
    address = getattr(args, "scheduler", None)
    if address is None:
        yield None
        return
    if args.processes:
        raise ValueError("--scheduler runs the batch on a Dask cluster: drop --processes")
    try:
        import distributed
    except ImportError:
        raise ValueError(
            "--scheduler needs dask.distributed: pip install 'coalloc[dask]'"
        ) from None
    try:
        if os.path.isfile(address):  # a scheduler file (dask scheduler --scheduler-file)
            client = distributed.Client(scheduler_file=address, timeout=30)
        else:
            client = distributed.Client(address, timeout=30)
    except OSError as exc:
        raise ValueError(f"--scheduler {address}: no Dask scheduler answered ({exc})") from None
    try:
        yield client.get_executor()
    finally:
        client.close()


def _run_batch_on(args, family, params, executor, todo, seeds, digests, skipped) -> int:
    """:func:`run_batch` once the instances to solve and the executor are known."""
    resume = bool(getattr(args, "resume", False))
    to_stdout = args.output == "-"
    from ..batch import ProgressBar, _batch_iter, _BatchOptions

    show = not args.no_progress and sys.stderr.isatty()
    desc = "solved" if not skipped else f"solved ({skipped} skipped: done before)"
    batch = _BatchOptions(
        family=family, n_jobs=args.jobs,
        executor=executor if executor is not None else "processes" if args.processes else "threads",
        seed=seeds, chunksize=args.chunksize, max_in_flight=None, on_error="record",
        progress=ProgressBar(sys.stderr, desc=desc) if show else None, timeout=args.timeout,
    )  # fmt: skip
    if getattr(args, "slurm_array", False):
        records = _slurm_records(args, family, params, todo, batch.progress)
    else:
        records = _batch_iter([_item(args, i) for i in todo], args.method, batch,
                              params={**dict(args.param or []), **(params or {})},
                              with_report=True)  # fmt: skip
    failed = []
    t0 = time.perf_counter()
    if to_stdout:
        sink: Any = contextlib.nullcontext(sys.stdout)
    else:
        sink = atomic_output(args.output, append=resume)
    with contextlib.closing(records), sink as out:  # closing: the bar ends before the summary
        for index, record in zip(todo, records):
            name = args.files[index]
            line = _batch_line(index, name, record)
            if resume:
                line = {**line, "sha256": digests[index]}
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
    n = len(todo)
    where = "" if to_stdout else f"; results written to {args.output}"
    if skipped:
        where += f" ({skipped} instances already there, skipped)"
    print(
        f"solved {n - len(failed)}/{n} instances ({len(failed)} failed) in {elapsed:.2f} s "
        f"({n / max(elapsed, 1e-9):.1f} instances/s){where}",
        file=sys.stderr if to_stdout else sys.stdout,
    )
    return 1 if failed else 0
