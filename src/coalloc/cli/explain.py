"""``coalloc <family> explain FILES``: why a request cannot be met in full, in one sentence.

Every family group gets the command (a family whose CLI defines its own ``explain`` keeps
it). Each file is an instance file of the family (its JSON ``"format"``; for the testbed,
also a ``.top`` and a ``.ptop`` given together); the command prints, per instance, the
family's explanation (:meth:`coalloc.FamilyInstance.explain`): the minimal conflict, how it
was proved and the nearest request that fits, or that the whole request can be met.
``--json`` prints one JSON object per instance instead (the explanation's ``to_dict()``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, List, Tuple

from .._shared.constraints import EXPLAIN_TIME
from .._shared.jsonio import InstanceError
from ._common import add_table_option

__all__ = ["add_command"]


def _instances(family: str, files: List[str]) -> List[Tuple[str, Any]]:
    """(name, instance) per file, read by the file's format."""
    from .._shared.sniff import sniff
    from ..batch.worker import read_problem

    if family == "testbed" and len(files) == 2 and all(sniff(f).kind != "json" for f in files):
        from .. import testbed  # TOP PTOP, each recognised by content (a swap named)

        top, ptop = testbed.io.read_topologies(files[0], files[1], command="testbed explain")
        return [(f"{files[0]} onto {files[1]}", testbed.Instance(top, ptop))]
    out = []
    for path in files:
        if family == "loadshare" and sniff(path).kind == "orlib-gap":
            from .. import loadshare  # OR-Library text: one instance per FILE#k

            instances, _ = loadshare.read_gap_file(path, command="loadshare explain")
            for k, gap in enumerate(instances, start=1):
                out.append((f"{path}#{k}", loadshare.GapProblem(gap)))
            continue
        inst = read_problem(path)
        if inst.family != family:
            raise InstanceError(f"{path}: an instance of {inst.family!r}, not of {family!r}")
        out.append((path, inst))
    return out


def _run(args: argparse.Namespace) -> int:
    for name, inst in _instances(args.family, args.files):
        found = inst.explain(time_limit=args.time_limit)
        if args.json:
            print(
                json.dumps(
                    {
                        "file": name,
                        "kind": inst.kind,
                        "explanation": None if found is None else found.to_dict(),
                    }
                )
            )
        elif found is None:
            print(f"{name}: nothing to explain: the whole request can be met (or the "
                  f"family refuses nothing).")  # fmt: skip
        else:
            print(f"{name}: {found.sentence}")
    sys.stdout.flush()
    return 0


def add_command(subparsers: Any, family: str) -> None:
    """Add ``explain`` to a family's command group.

    Parameters
    ----------
    subparsers : argparse subparsers action
        The family group's subcommands.
    family : str
        The family's name.

    Examples
    --------
    >>> import argparse
    >>> parser = argparse.ArgumentParser(prog="coalloc collective")
    >>> add_command(parser.add_subparsers(dest="subcommand"), "collective")
    >>> parser.parse_args(["explain", "x.json"]).files
    ['x.json']
    """
    p = subparsers.add_parser(
        "explain",
        help="why a request cannot be met in full: a minimal conflict and the "
        "nearest request that fits",
        description="Why each instance's request cannot be met in full: the smallest part of "
        "it that conflicts with the resources, how that was proved, and the nearest request "
        "that fits (each fix solved before it is offered).",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="instance files of the family (testbed: also TOP PTOP)",
    )
    add_table_option(
        p,
        "--time-limit",
        EXPLAIN_TIME,
        default=10.0,
        metavar="S",
        help="seconds per explanation (default 10)",
    )  # the explainers' table
    p.add_argument(
        "--json",
        action="store_true",
        help="one JSON object per instance (the explanation's fields)",
    )
    p.set_defaults(func=_run, family=family)
