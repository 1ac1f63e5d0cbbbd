"""What an input file looks like, from its content (not its name).

Every command that reads instance files asks :func:`sniff` first: a file is recognised by
what it holds (a JSON document and its ``"format"``, a METIS or Scotch graph, an OR-Library
GAP file, an Emulab ``.top``/``.ptop``, a Standard Workload Format log, a NumPy ``.npz``
archive), and a file of the wrong kind is refused with one line that says what it looked
like and what the command expected (:func:`wrong_kind`). A command's ``--format`` option
forces the reader instead.

The guess is cheap (the first 64 KiB; the whole file for the token count of a GAP file up to
:data:`MAX_SCAN` bytes) and never decides an answer: the chosen reader still checks every
token.

Examples
--------
>>> import io
>>> sniff(io.StringIO("% a ring\\n3 3\\n2 3\\n1 3\\n1 2\\n")).kind
'metis'
>>> sniff(io.StringIO('{"format": "coalloc.taskmap.instance"}')).what
'a JSON document of format coalloc.taskmap.instance'
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any, List, Optional

from .jsonio import InstanceError

__all__ = ["Sniffed", "sniff", "wrong_kind", "expect_json", "MAX_SCAN"]

#: Files up to this size are read whole to count the tokens of an OR-Library GAP file.
MAX_SCAN = 64 << 20
_HEAD = 1 << 16
_INT = re.compile(r"[+-]?[0-9]+")
_FORMAT = re.compile(r'"format"\s*:\s*"([^"\\]{1,100})"')
_EMULAB_TOP = {"make-vclass", "fix-node", "node-hint"}
_EMULAB_PTOP = {"set-type-limit", "policy"}


@dataclasses.dataclass(frozen=True)
class Sniffed:
    """What a file looks like.

    Attributes
    ----------
    kind : str
        ``"json"``, ``"metis"``, ``"scotch"``, ``"orlib-gap"``, ``"top"``, ``"ptop"``,
        ``"emulab"`` (a ``.top`` or ``.ptop``, not told apart), ``"swf"``, ``"npz"``,
        ``"empty"``, ``"binary"``, ``"missing"`` or ``"text"`` (none of these).
    what : str
        The phrase for an error message: ``"a METIS graph (header '7 9 011')"``.
    format : str or None
        A JSON document's ``"format"`` (None: none, or not JSON).
    """

    kind: str
    what: str
    format: Optional[str] = None


def _read_head(src: Any) -> tuple:
    """``(bytes of the head, whole text or None, name)``."""
    if hasattr(src, "read"):  # a stream: read it all, then rewind when possible
        pos = src.tell() if hasattr(src, "tell") else None
        data = src.read()
        if pos is not None and hasattr(src, "seek"):
            src.seek(pos)
        raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
        return raw[:_HEAD], raw, getattr(src, "name", "<stream>")
    name = os.fspath(src)
    with open(name, "rb") as fh:
        head = fh.read(_HEAD)
        whole = None
        if len(head) < _HEAD:
            whole = head
        elif os.fstat(fh.fileno()).st_size <= MAX_SCAN:
            whole = head + fh.read()
    return head, whole, name


def _gap_layout(tokens: List[bytes]) -> Optional[str]:
    """``"one instance, m agents x n items"`` / ``"P instances"`` when ``tokens`` (integers)
    are shaped like an OR-Library GAP file; only the counts are converted."""

    def num(pos: int) -> int:
        return int(tokens[pos])

    def size(pos: int) -> int:
        if pos + 2 > len(tokens):
            return -1
        m, n = num(pos), num(pos + 1)
        return 2 + 2 * m * n + m if m >= 1 and n >= 0 else -1

    if len(tokens) >= 2 and size(0) == len(tokens):
        return f"one instance, {num(0)} agents x {num(1)} items"
    if not tokens or num(0) < 1 or num(0) > len(tokens):
        return None
    pos = 1
    for _ in range(num(0)):
        step = size(pos)
        if step < 0:
            return None
        pos += step
    if pos != len(tokens):
        return None
    return f"{num(0)} instance{'s' if num(0) != 1 else ''}"


_NUMBER_BYTES = b"0123456789+- \t\r\n\f\v"


def _metis_lines(first: List[str], whole: bytes) -> bool:
    """A METIS header ``n m [fmt [ncon]]`` followed by exactly ``n`` vertex lines (counted
    without splitting the file: a GAP file is told apart without reading every number)."""
    if not 2 <= len(first) <= 4 or not first[0].isascii() or not first[0].isdigit():
        return False
    body = whole.rstrip(b"\r\n")
    lines = body.count(b"\n") + 1
    comments = body.count(b"\n%") + body.startswith(b"%")
    blank_before = 0
    for raw in body.split(b"\n", 64)[:64]:  # blank lines before the header
        if raw.strip() and not raw.lstrip().startswith(b"%"):
            break
        blank_before += 0 if raw.lstrip().startswith(b"%") else 1
    return lines - comments - blank_before - 1 == int(first[0])


def sniff(src: Any) -> Sniffed:
    """Guess what an input file is from its content.

    Parameters
    ----------
    src : str, path-like or file object
        The file (a stream is rewound after reading when it can be).

    Returns
    -------
    Sniffed
        Its kind and a phrase describing it.

    Examples
    --------
    >>> import io
    >>> sniff(io.StringIO("0\\n3 4\\n0 000\\n1 1\\n2 0 2\\n1 1\\n")).kind
    'scotch'
    >>> sniff(io.StringIO("1\\n1 2\\n3 4\\n1 1\\n2\\n")).what
    'an OR-Library GAP file (1 instance)'
    """
    try:
        head, whole, name = _read_head(src)
    except FileNotFoundError:
        return Sniffed("missing", "a missing file")
    except OSError as exc:
        return Sniffed("missing", f"an unreadable file ({exc.strerror or exc})")
    if not head.strip():
        return Sniffed("empty", "an empty file")
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return Sniffed("npz", "a zip archive (a NumPy .npz snapshot)")
    if b"\0" in head:
        return Sniffed("binary", "a binary file")
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not merely a character cut at the end of the head
            return Sniffed("binary", "a binary file (not UTF-8 text)")
        text = head[: exc.start].decode("utf-8")
    body = text.lstrip("\ufeff \t\r\n")
    if body[:1] in "{[":
        found = _FORMAT.search(body)
        fmt = found.group(1) if found else None
        what = "a JSON document" + (f" of format {fmt}" if fmt else ' without a "format"')
        return Sniffed("json", what, fmt)
    lines = [line.strip() for line in text.splitlines()]
    content = [line for line in lines if line and not line.startswith("%")]
    if not content:
        return Sniffed("text", "a text file of comments only")
    first = content[0].split()
    words = {line.split()[0] for line in content if line.split()}
    if first[0] in {"node", "link"} | _EMULAB_TOP | _EMULAB_PTOP:
        return _emulab(content, words)
    if any(line.startswith(";") for line in lines[:5]) or (
        len(first) == 18 and all(_INT.fullmatch(t) for t in first)
    ):
        return Sniffed("swf", "a Standard Workload Format log (one job per line)")
    if all(_INT.fullmatch(t) for t in first):
        scotch = _scotch(content)
        if scotch is not None:
            return scotch
        if whole is not None and len(whole) > _HEAD and _metis_lines(first, whole):
            # a large METIS graph, told by its line count (a small file: the GAP check first)
            return Sniffed("metis", f"a METIS graph (header {' '.join(first)!r})")
        if whole is not None and not whole.translate(None, _NUMBER_BYTES):  # integers only
            try:  # a sign inside a token ('3-4') is no integer: not a GAP file
                layout = _gap_layout(whole.split())
            except ValueError:
                layout = None
            if layout is not None:
                return Sniffed("orlib-gap", f"an OR-Library GAP file ({layout})")
        if 2 <= len(first) <= 4:
            return Sniffed("metis", f"a METIS graph (header {' '.join(first)!r})")
    return Sniffed("text", f"a text file (first line {content[0][:40]!r})")


def _scotch(content: List[str]) -> Optional[Sniffed]:
    if len(content) < 3 or content[0].split() != ["0"]:
        return None
    second, third = content[1].split(), content[2].split()
    if len(second) == 2 and len(third) == 2 and re.fullmatch(r"[01]{3}", third[1]):
        return Sniffed("scotch", f"a Scotch graph (header '0 / {content[1]} / {content[2]}')")
    return None


def _emulab(content: List[str], words: set) -> Sniffed:
    """A ``.top`` or a ``.ptop``: told apart by their own lines (a ``.ptop`` node has a
    ``-`` between its types and its features, its interfaces name ``node:port``)."""
    if words & _EMULAB_PTOP:
        return Sniffed("ptop", "a physical topology (.ptop)")
    if words & _EMULAB_TOP:
        return Sniffed("top", "a virtual topology (.top)")
    for line in content:
        tok = line.split()
        if tok[0] == "node" and "-" in tok[2:]:
            return Sniffed("ptop", "a physical topology (.ptop)")
        if tok[0] == "node" and len(tok) >= 3 and tok[2].startswith("*") and ":" in tok[2]:
            return Sniffed("ptop", "a physical topology (.ptop)")
        if tok[0] == "link" and len(tok) >= 4 and (":" in tok[2] or ":" in tok[3]):
            return Sniffed("ptop", "a physical topology (.ptop)")
        if tok[0] == "link" and len(tok) >= 4 and tok[4:5] == ["*"]:
            return Sniffed("top", "a virtual topology (.top)")
        if tok[0] == "node" and len(tok) == 3 and ":" not in tok[2]:
            return Sniffed("top", "a virtual topology (.top)")
    return Sniffed("emulab", "an Emulab topology (.top or .ptop)")


def wrong_kind(name: Any, found: Sniffed, command: str, expected: str,
               hint: str = "") -> InstanceError:  # fmt: skip
    """The one-line error for a file of the wrong kind.

    Parameters
    ----------
    name : str or path-like
        The file, as the user named it.
    found : Sniffed
        What it looks like.
    command : str
        The command that read it (``"taskmap map"``).
    expected : str
        What the command expected there.
    hint : str, optional
        What to do (``"give --format metis"``).

    Returns
    -------
    InstanceError
        To raise.

    Examples
    --------
    >>> e = wrong_kind("pipe.txt", Sniffed("metis", "a METIS graph (header '7 9 011')"),
    ...                "taskmap map", "a coalloc.taskmap.instance JSON file")
    >>> str(e)
    "pipe.txt looks like a METIS graph (header '7 9 011'); taskmap map expects a coalloc.taskmap.instance JSON file"
    """  # noqa: E501
    text = f"{os.fspath(name)} looks like {found.what}; {command} expects {expected}"
    if not hint and found.kind != "json":
        hint = _line_owner(found.kind, command)
    return InstanceError(text + (f": {hint}" if hint else ""))


def _owner(fmt: Optional[str]) -> str:
    """``"<fmt> files belong to 'coalloc <family>' ..."`` for a known JSON format."""
    if fmt is None:
        return ""
    from .family import families

    for name, spec in families().items():
        if any(f.name == fmt for f in spec.formats):
            return f"{fmt} files belong to 'coalloc {name}' (see 'coalloc {name} -h')"
    return ""


def _line_owner(kind: str, command: str) -> str:
    """The same hint for a file of another family's line format, read from the specs'
    ``line_formats`` (the kinds :func:`sniff` gives their files, ``LineFormat.detect``):
    empty for a kind no format or several families claim (plain ``text``), or one of the
    command's own family."""
    from .family import families

    owners = {}
    for name, spec in families().items():
        for fmt in spec.line_formats:
            if kind in fmt.detect and kind != "text":
                owners.setdefault(name, fmt.name)
    if len(owners) != 1 or set(owners) & set(command.split()):
        return ""
    (name, fmt_name), = owners.items()
    return f"{fmt_name} files belong to 'coalloc {name}' (see 'coalloc {name} -h')"


def expect_json(src: Any, formats: Any, command: str, expected: str) -> None:
    """Refuse, in one line, a file that is not a JSON document of one of ``formats``.

    A JSON document of no ``"format"`` or of an unknown one passes (the reader checks its
    envelope and fields), and so does a file that cannot be read (the reader's own message).
    A file of another family's format names the command that reads it.

    Parameters
    ----------
    src : str, path-like or file object
        The file.
    formats : iterable of str
        The ``"format"`` values the command reads.
    command : str
        The command (``"ctaap solve"``).
    expected : str
        What it expects, for the message.

    Raises
    ------
    InstanceError
        What the file looked like and what was expected.

    Examples
    --------
    >>> import io
    >>> expect_json(io.StringIO('{"format": "coalloc.instance"}'), ["coalloc.instance"],
    ...             "ctaap solve", "a CTAAP instance")
    >>> expect_json(io.StringIO("3 3\\n2 3\\n1 3\\n1 2\\n"), ["coalloc.instance"],
    ...             "ctaap solve", "a CTAAP instance (coalloc.instance JSON)")
    Traceback (most recent call last):
    ...
    coalloc._shared.jsonio.InstanceError: <stream> looks like a METIS graph (header '3 3'); ctaap solve expects a CTAAP instance (coalloc.instance JSON): metis.graph files belong to 'coalloc taskmap' (see 'coalloc taskmap -h')
    """  # noqa: E501
    found = sniff(src)
    name = getattr(src, "name", "<stream>") if hasattr(src, "read") else src
    if found.kind == "missing":
        return
    if found.kind != "json":
        raise wrong_kind(name, found, command, expected)
    if found.format is not None and found.format not in set(formats):
        owner = _owner(found.format)
        if owner:  # another family's file (an unknown "format": the reader's envelope check)
            raise wrong_kind(name, found, command, expected, owner)
