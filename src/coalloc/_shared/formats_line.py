"""The families' file formats that are no JSON document: line formats and snapshots (issue 37).

The JSON formats are :class:`~coalloc._shared.family.FileFormat` declarations with a
checker definition (``FamilySpec.formats``: schemas, envelopes, examples). The others, the
Emulab ``.top``/``.ptop`` files, the Standard Workload Format log, the CSV pool and the
pool snapshot of collective co-allocation, the OR-Library GAP text, the METIS and Scotch
graphs, are :class:`LineFormat` declarations of their family's spec
(``FamilySpec.line_formats``): the reader, the writer where the package writes one, the
kinds :func:`coalloc._shared.sniff.sniff` gives their files, and the word of the shared
``--format`` option that forces their reader. The ``--format`` table
(:func:`format_options`), ``coalloc schema``'s listing and the docs read these
declarations; no family is named here.

This module imports no family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Tuple

from .formats_file import FileFormat

__all__ = ["LineFormat", "format_options", "format_words", "line_formats"]


@dataclass(frozen=True)
class LineFormat(FileFormat):
    """A family's file format that is no JSON document (a :class:`FileFormat` without a
    schema): its reader, writer, detection and ``--format`` word.

    Parameters
    ----------
    name : str
        The format's name (``"orlib.gap"``, ``"emulab.top"``; one of the package's own:
        ``coalloc.<family>.<name>``).
    description : str
        One line: what a file of this format holds (the ``--format`` help, ``coalloc schema``).
    option : str
        The word of ``--format`` that reads it (``"emulab"`` for ``.top`` and ``.ptop``).
    detect : tuple of str
        The kinds :func:`coalloc._shared.sniff.sniff` gives a file of this format (a file
        of one of them that the reader refuses is a malformed file of the format).
    read : callable
        ``read(path) -> object``: the family's reader.
    write : callable, optional
        ``write(path, object)``: the family's writer (None: the package reads the format
        and writes none, as the SWF log and the CSV pool).
    suffixes : tuple of str
        The file names' usual suffixes (documentation only: files are recognised by content).
    holds : tuple of str
        What a file of this format holds, in the family's words (``"pool"``, ``"top"``):
        the commands that read that kind offer its ``--format`` word (:func:`format_words`).
    sample : callable, optional
        ``sample() -> object``: a small object its writer writes (deterministic): the line
        round trip of :func:`coalloc.testing.check_family` and the fuzzers' seed file.
        Required with ``write``.
    dump : callable, optional
        ``dump(object) -> JSON-able``: what two reads of a file are compared by, for a
        format whose bytes are not stable (a zip archive's dates); None: the bytes the
        writer writes.
    fuzz_target : str, optional
        The fuzzers' target of the format (``fuzz/targets.py``); default ``line_`` and the
        name with its dots and dashes as underscores.

    Examples
    --------
    >>> from coalloc._shared.formats_line import line_formats
    >>> fmt = line_formats()["emulab.ptop"]
    >>> fmt.option, fmt.detect[0], fmt.write is not None
    ('emulab', 'ptop', True)
    """

    schema: Any = None
    read: Optional[Callable[..., Any]] = None
    write: Optional[Callable[..., None]] = None
    suffixes: Tuple[str, ...] = ()
    sample: Optional[Callable[[], Any]] = None
    fuzz_target: str = ""

    def __post_init__(self) -> None:
        if not self.option or not self.detect:
            raise ValueError(f"line format {self.name!r}: option and detect must be given")
        if not callable(self.read):
            raise TypeError(f"line format {self.name!r}: read must be callable")
        if self.write is not None and not callable(self.sample):
            raise TypeError(f"line format {self.name!r}: a format with a writer declares a "
                            "sample (sample() -> an object the writer writes)")  # fmt: skip

    @property
    def target(self) -> str:
        """The fuzzers' target name (:attr:`fuzz_target`, or ``line_<name>``)."""
        return self.fuzz_target or "line_" + "".join(c if c.isalnum() else "_" for c in self.name)


def line_formats() -> Dict[str, LineFormat]:
    """Every registered family's line formats, name -> :class:`LineFormat`.

    Returns
    -------
    dict
        In the families' order, each family's in its declaration's order.

    Examples
    --------
    >>> from coalloc._shared.formats_line import line_formats
    >>> sorted(line_formats())[:3]
    ['coalloc.collective.pool-snapshot', 'csv.pool', 'emulab.ptop']
    """
    from .family import families

    return {f.name: f for spec in families().values() for f in spec.line_formats}


def format_options(specs: Any = None) -> Dict[str, Tuple[str, Tuple[str, ...]]]:
    """The shared ``--format`` option's words: word -> (what it reads, sniffed kinds).

    Read from the specs: each JSON :class:`FileFormat` that declares an ``option`` (the
    word ``json`` for a family's JSON files, ``loadshare`` for the load-sharing problem)
    and each :class:`LineFormat`; a word several formats share reads what any of them
    reads (``emulab``: ``.top`` and ``.ptop``).

    Returns
    -------
    dict
        Word -> ``(description, kinds)``, in the families' order.

    Examples
    --------
    >>> from coalloc._shared.formats_line import format_options
    >>> format_options()["metis"]
    ('a METIS graph', ('metis',))
    >>> format_options()["json"]
    ('JSON', ('json',))
    """
    from .family import families

    said: Dict[str, list] = {}
    kinds: Dict[str, list] = {}
    for spec in families().values() if specs is None else specs:  # specs: those only
        for fmt in (*spec.formats, *spec.line_formats):
            word = fmt.option
            if not word:
                continue
            if isinstance(fmt, LineFormat):
                text = fmt.description
            else:
                text = "JSON" if word == "json" else f"{fmt.description} ({fmt.name} JSON)"
            if text not in said.setdefault(word, []):
                said[word].append(text)
            for k in fmt.detect or ("json",):
                if k not in kinds.setdefault(word, []):
                    kinds[word].append(k)
    return {w: (" or ".join(said[w]), tuple(kinds[w])) for w in said}


def format_words(spec: Any, *holds: str) -> Tuple[str, ...]:
    """The ``--format`` words of a family's formats that hold one of ``holds``.

    A command that reads a kind of file asks its family's spec for the words of the formats
    holding it (``coalloc collective solve`` reads a ``"pool"``), so a format declared in
    the spec reaches every command that reads its kind. The words come in the order of
    ``holds``, then of the spec's declarations (``formats``, then ``line_formats``), each
    once.

    Parameters
    ----------
    spec : FamilySpec or str
        The family (or its registered name).
    *holds : str
        The kinds the command reads, in the order its option lists them.

    Returns
    -------
    tuple of str
        The words (keys of :func:`format_options`).

    Raises
    ------
    ValueError
        No ``holds`` given, or one no format of the family with a ``--format`` word holds.

    Examples
    --------
    >>> from coalloc._shared.formats_line import format_words
    >>> format_words("collective", "pool")
    ('json', 'csv', 'npz')
    >>> format_words("testbed", "top", "ptop", "instance")
    ('emulab', 'json')
    """
    from .family import family_spec

    if isinstance(spec, str):
        spec = family_spec(spec)
    if not holds:
        raise ValueError(f"family {spec.name!r}: holds must name at least one kind of file")
    decl = [f for f in (*spec.formats, *spec.line_formats) if f.option]
    words: list = []
    for kind in holds:
        found = [f.option for f in decl if kind in f.holds]
        if not found:
            known = sorted({k for f in decl for k in f.holds})
            raise ValueError(f"family {spec.name!r}: no format with a --format word holds "
                             f"{kind!r} (its formats hold {known})")  # fmt: skip
        for word in found:
            if word not in words:
                words.append(word)
    return tuple(words)
