"""``coalloc schema [FORMAT] [--all]``: print the published JSON Schema of a file format, or list
them (``--all``: the line formats too).

The schemas ship with the package (``coalloc.formats``); point an editor or any JSON Schema
validator at the printed document (``coalloc schema coalloc.instance > instance.schema.json``).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["add_commands"]


def _cmd_schema(args: argparse.Namespace) -> int:
    # Imported here: the list of formats imports every family; building the parser does not.
    from .._shared.formats_line import line_formats
    from ..formats import FORMATS, schema_text

    if args.format:
        sys.stdout.write(schema_text(args.format))
        return 0
    print("File formats with a published JSON Schema ('coalloc schema FORMAT' prints one):")
    for name, text in FORMATS.items():
        print(f"  {name:<28} {text}")
    if not args.all:
        return 0
    print("Line formats (no schema; a command's --format WORD forces their reader):")
    for name, fmt in line_formats().items():
        print(f"  {name:<34} {fmt.description} (--format {fmt.option})")
    return 0


def add_commands(sub) -> None:
    """Add the ``schema`` command to ``sub`` (a subparsers object).

    Parameters
    ----------
    sub : argparse._SubParsersAction
        The subcommands of the ``coalloc`` command.

    Examples
    --------
    >>> import argparse
    >>> from coalloc.cli.schema import add_commands
    >>> parser = argparse.ArgumentParser(prog="coalloc")
    >>> add_commands(parser.add_subparsers(dest="command"))
    >>> parser.parse_args(["schema", "coalloc.instance"]).format
    'coalloc.instance'
    """
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of a file format (coalloc.instance, ...) or list them",
        description="Print the JSON Schema (draft 2020-12) of one of coalloc's file formats, "
        "or list the formats. The readers check the same rules and also what a schema cannot "
        "say (edges given twice, links to missing nodes).",
    )
    p.add_argument(
        "format", nargs="?", default=None, help="the file's format key (without one: list them)"
    )
    p.add_argument("--all", action="store_true",
                   help="also list the line formats (.top, OR-Library GAP, METIS ...), which "
                   "have no schema, with the --format word that reads each")  # fmt: skip
    p.set_defaults(func=_cmd_schema)
