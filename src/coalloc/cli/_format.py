"""The ``--format`` option of the commands that read instance files, written once.

Its words and their help come from the families' specs (issue 37): :func:`add_format_of`
asks a spec for the formats that hold the kinds a command reads, :func:`line_formats_of`
gives the declared reader of a word, and :func:`read_as` reads a file as the forced format
and says in one line what it looked like when the reader refuses it. Re-exported by
:mod:`._common`, where the families' CLIs find them (``common.add_format_of``).
"""

from __future__ import annotations

import argparse
from typing import Any, Dict, Optional, Sequence, Tuple

__all__ = ["format_table", "add_format", "add_format_of", "line_formats_of", "read_as"]


def format_table(family: Optional[str] = None) -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """Every ``--format`` name: what it reads (for the help and the messages) and the kinds
    :func:`coalloc._shared.sniff.sniff` gives a file of that format (a file of one of them
    that the reader refuses is a malformed file of the format: the reader's own message).

    Read from the families' specs (issue 37): their JSON formats' ``option`` and their line
    formats (:func:`coalloc._shared.formats_line.format_options`); with ``family``, that
    family's only (the others not imported; a word the families share reads the same in
    each: ``tests/shared/test_cli_lazy.py``).
    """
    from .._shared.formats_line import format_options

    if family is None:
        return format_options()
    from .._shared.family import family_spec

    return format_options([family_spec(family)])


def add_format(p: argparse.ArgumentParser, formats: Sequence[str], what: str,
               family: Optional[str] = None) -> argparse.Action:  # fmt: skip
    """``--format NAME``: read ``what`` as this format, not as its content suggests.

    Every family's commands that read instance files take their ``--format`` from here, so
    that the option reads the same everywhere: without it a file is recognised by its
    content (:func:`coalloc._shared.sniff.sniff`), whatever its name; with it the named
    reader reads the file (:func:`read_as`).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    formats : sequence of str
        The names the command reads (keys of :func:`format_table`).
    what : str
        The file the option is about, for the help (``"the task graph"``).
    family : str, optional
        The family whose formats these are (its words' help from its spec alone).

    Returns
    -------
    argparse.Action
        The option (``dest`` ``format``, default None).
    """
    table = format_table(family)
    unknown = [f for f in formats if f not in table]
    if unknown:
        raise ValueError(f"formats must be among {sorted(table)}, got {unknown}")
    names = "; ".join(f"{f}: {table[f][0]}" for f in formats)
    return p.add_argument(
        "--format", default=None, choices=list(formats),
        help=f"read {what} as this format ({names}); default: recognised by its content, "
        "whatever its name",
    )  # fmt: skip


def add_format_of(p: argparse.ArgumentParser, family: str, holds: Sequence[str],
                  what: str) -> argparse.Action:  # fmt: skip
    """``--format NAME`` of a command that reads the kinds of file ``holds``: its words are
    those of the family's formats that hold them, as the spec declares them (issue 37).

    A format declared in the family's spec with ``holds`` (and a ``--format`` word) thus
    reaches every command that reads that kind of file (:func:`add_format`,
    :func:`coalloc._shared.formats_line.format_words`).

    Parameters
    ----------
    p : argparse.ArgumentParser
        The subcommand's parser.
    family : str
        The registered family whose formats the command reads.
    holds : sequence of str
        The kinds of file the command reads (``("pool",)``), in the order the option lists
        their words.
    what : str
        The file the option is about, for the help.

    Returns
    -------
    argparse.Action
        The option (``dest`` ``format``, default None).
    """
    from .._shared.formats_line import format_words

    return add_format(p, format_words(family, *holds), what, family)


def line_formats_of(family: str, *holds: str) -> Dict[str, Any]:
    """The family's line formats that hold one of ``holds``, by ``--format`` word.

    A command reads a word its own code does not name (a format added to the spec) with
    the declared reader (``LineFormat.read``).

    Parameters
    ----------
    family : str
        A registered family.
    *holds : str
        The kinds of file the command reads (``"pool"``).

    Returns
    -------
    dict
        Word -> :class:`coalloc._shared.formats_line.LineFormat` (the first declared with
        that word).
    """
    from .._shared.family import family_spec

    out: Dict[str, Any] = {}
    for fmt in family_spec(family).line_formats:
        if set(fmt.holds) & set(holds):
            out.setdefault(fmt.option, fmt)
    return out


def read_as(path: Any, fmt: Optional[str], reader: Any, *, command: str, expected: str,
            kinds: Optional[Sequence[str]] = None) -> Any:  # fmt: skip
    """``reader(path)``, the format forced by ``--format fmt`` (None: not forced).

    A file the reader refuses is said in one line. When the file's content looks like the
    forced format (``kinds``, by default the format's in :func:`format_table`), it is a malformed
    file of that format: the reader's own message (file, line, token). Otherwise the format
    was the wrong one: ``"X looks like ...; CMD expects ..., as --format F says: ..."``
    with the reader's message after it.

    Parameters
    ----------
    path : str or path-like
        The file.
    fmt : str or None
        The forced format (a key of :func:`format_table`), or None.
    reader : callable
        Reads ``path`` in that format.
    command : str
        The command, for the message (``"ctaap solve"``).
    expected : str
        What the command expected there.
    kinds : sequence of str, optional
        The sniffed kinds that count as a file of the format.

    Returns
    -------
    object
        What ``reader`` returns.

    Raises
    ------
    InstanceError
        The file does not parse as ``fmt``.
    """
    from .._shared.sniff import sniff, wrong_kind

    if fmt is None:
        return reader(path)
    try:
        return reader(path)
    except ValueError as exc:  # InstanceError among them
        found = sniff(path)
        ok = format_table()[fmt][1] if kinds is None else kinds
        if found.kind == "missing" or found.kind in ok:
            raise
        said = " ".join(str(exc).split())
        raise wrong_kind(path, found, command, f"{expected}, as --format {fmt} says",
                         f"read as {fmt}, {said}") from None
