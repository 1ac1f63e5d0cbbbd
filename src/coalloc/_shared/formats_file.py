"""A family's JSON file format, as its spec declares it: :class:`FileFormat` (issue 37).

:class:`coalloc._shared.family.FamilySpec` lists a family's formats; the published JSON
Schemas (:mod:`coalloc.formats`), ``coalloc schema``, the schema tests, the fuzzers and
:func:`coalloc.testing.check_family` read them. The formats that are no JSON document are
:class:`coalloc._shared.formats_line.LineFormat` declarations (a subclass). The names stay
importable from :mod:`coalloc._shared.family`.

This module imports no family.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

__all__ = ["Envelope", "FileFormat", "written"]

#: ``(object of a schema, format, version, format_required)``: an object of a format's checker
#: definition whose ``"format"``/``"version"`` envelope the reader checks.
Envelope = Tuple[Any, str, int, bool]


@dataclass(frozen=True)
class FileFormat:
    """A JSON file format of a family: its checker definition, envelopes and examples.

    The published JSON Schema of the format (``coalloc.formats``, ``coalloc schema``) is
    generated from ``schema`` and ``envelopes``; the schema tests and
    :func:`coalloc.testing.check_family` check that the examples are read, and that a JSON
    Schema validator and the readers' checker agree on them.

    Parameters
    ----------
    name : str
        The ``"format"`` key of the files (``"coalloc.collective.pool"``).
    description : str
        One line: what a file of this format holds (the schema's title, ``coalloc schema``).
    schema : coalloc._shared.schema.Spec
        The checker definition the family's reader checks a parsed file with.
    envelopes : tuple of (Spec, str, int, bool)
        Every object of ``schema`` whose envelope the reader checks, as
        ``(object, format, version, format_required)``; empty: ``schema`` itself, with
        ``(name, 1, False)``.
    examples : callable, optional
        ``examples() -> list of dict``: documents of this format written by the family's
        writers (small, deterministic).
    dump : callable, optional
        For the format of a problem kind's instance files: ``dump(instance) -> dict``, the
        document the family's writer makes of an instance (the file round trip).
    option : str, optional
        The word of the shared ``--format`` option that reads files of this format
        (``"json"``; :func:`coalloc._shared.formats_line.format_options`); "": none.
    detect : tuple of str, optional
        The kinds :func:`coalloc._shared.sniff.sniff` gives its files (default ``json``).
    holds : tuple of str, optional
        What a file of this format holds, in the family's words (``"pool"``,
        ``"taskgraph"``, ``"instance"``): a command that reads such a file asks the spec for
        the ``--format`` words of the formats that hold it
        (:func:`coalloc._shared.formats_line.format_words`), so a format declared here
        reaches every command that reads its kind.

    Examples
    --------
    >>> from coalloc._shared.family import FileFormat
    >>> from coalloc._shared.schema import Int, Obj
    >>> fmt = FileFormat("toy.count", "a count", Obj({"n": (Int(lo=0), True)}))
    >>> [(f, v, r) for _, f, v, r in fmt.envelope_entries()]
    [('toy.count', 1, False)]
    """

    name: str
    description: str
    schema: Any
    envelopes: Tuple[Envelope, ...] = ()
    examples: Optional[Callable[[], List[dict]]] = None
    dump: Optional[Callable[[Any], dict]] = None
    option: str = ""
    detect: Tuple[str, ...] = ()
    holds: Tuple[str, ...] = ()

    def envelope_entries(self) -> Tuple[Envelope, ...]:
        """The envelopes the reader checks (``schema`` itself when none were given).

        Returns
        -------
        tuple of (Spec, str, int, bool)
            ``(object, format, version, format_required)`` entries.

        Examples
        --------
        >>> from coalloc._shared.family import families
        >>> fmt = families()["loadshare"].formats[-1]
        >>> fmt.name, len(fmt.envelope_entries())
        ('coalloc.loadshare.gap', 1)
        """
        return self.envelopes or ((self.schema, self.name, 1, False),)


def written(writer: Callable[..., None], *args: Any, **kwargs: Any) -> bytes:
    """The bytes a family's file writer writes (``writer(file, *args, **kwargs)``).

    Parameters
    ----------
    writer : callable
        A writer that takes an open text file first (``write_instance``).
    *args, **kwargs
        What the writer takes after the file.

    Returns
    -------
    bytes
        The file's content, UTF-8.

    Examples
    --------
    >>> import json
    >>> from coalloc._shared.family import written
    >>> written(lambda fh, doc: fh.write(json.dumps(doc)), {"n": 1})
    b'{"n": 1}'
    """
    import io

    buf = io.StringIO()
    writer(buf, *args, **kwargs)
    return buf.getvalue().encode()
