"""Emulab's ``.ptop`` and ``.top`` texts and files: parse, format, read, write.

The grammar is :mod:`.grammar` (one table, one loop, one fast path); a ``.ptop`` text read
again is the same testbed (:mod:`.cache`). The line formats are in the docstring of
:mod:`coalloc.testbed.io`.
"""

from __future__ import annotations

import io as _io
import math
import os
from typing import Any

from ..._shared.jsonio import num, read_text, write_text
from ..model import PhysicalTopology, VirtualTopology
from . import cache, grammar

__all__ = ["parse_ptop", "parse_top", "format_ptop", "format_top", "read_ptop", "read_top",
           "write_ptop", "write_top", "as_ptop", "as_top"]  # fmt: skip


def parse_ptop(text: str, source: str = "<ptop>") -> PhysicalTopology:
    """Parse the text of a ``.ptop`` file (see :mod:`coalloc.testbed.io`).

    Parameters
    ----------
    text : str
    source : str
        Name used in error messages.

    Returns
    -------
    PhysicalTopology

    Raises
    ------
    InstanceError
        On the first malformed line (file, line number, what was expected).

    Examples
    --------
    >>> t = parse_ptop("node sw switch:1 *lan:*\\nnode pc1 pc:1\\nlink l1 pc1 sw 100000 0 0")
    >>> sorted(t.nodes)
    ['pc1', 'sw']
    """
    if not isinstance(text, str):
        return grammar.parse(text, source, "ptop")
    return cache.remembered(text, lambda: grammar.parse(text, source, "ptop"))


def _fmt(x: float) -> str:
    return "*" if math.isinf(x) else str(num(x))


def format_ptop(ptop: PhysicalTopology) -> str:
    """The ``.ptop`` text of a testbed (read back by :func:`parse_ptop` to an equal one).

    Parameters
    ----------
    ptop : PhysicalTopology
        The testbed.

    Returns
    -------
    str
        The file's text.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> print(tb.format_ptop(ptop), end="")
    node sw switch:1
    node a pc:1
    node b pc:1
    link la a sw 100 0 0
    link lb b sw 100 0 0
    """
    out = []
    for p in ptop.nodes.values():
        parts = ["node", p.name]
        parts += [f"{t}:{_fmt(n)}" for t, n in p.types.items()]
        parts += [f"*{t}:{_fmt(n)}" for t, n in p.static.items()]
        if p.features or p.flags:
            parts.append("-")
            parts += [f"{k}:{_fmt(w)}" for k, w in p.features.items()]
        if p.flags:
            parts.append("-")
            parts += [f"{k}:{v}" if v else k for k, v in p.flags.items()]
        out.append(" ".join(parts))
    for lk in ptop.links.values():
        a = f"{lk.a}:{lk.a_iface}" if lk.a_iface else lk.a
        b = f"{lk.b}:{lk.b_iface}" if lk.b_iface else lk.b
        # (a link's slots are not written: Emulab's current format has no such field, its
        # 8th token is the link type; no solver uses them)
        parts = ["link", lk.name, a, b, _fmt(lk.bw), _fmt(lk.delay), _fmt(lk.loss)]
        parts += list(lk.types)
        out.append(" ".join(parts))
    for t, n in ptop.type_limits.items():
        out.append(f"set-type-limit {t} {n}")
    for name, (kind, x) in ptop.policies.items():
        out.append(f"policy desire {name} {kind}" + (f" {_fmt(x)}" if kind == "limit" else ""))
    return "\n".join(out) + "\n"


def read_ptop(src: Any) -> PhysicalTopology:
    """Read a ``.ptop`` file (path or open text stream). See :func:`parse_ptop`.

    Parameters
    ----------
    src : str, path-like or text stream
        The file.

    Returns
    -------
    PhysicalTopology
        The testbed.

    Raises
    ------
    InstanceError
        A malformed file or field (named with the file and line or field).

    Examples
    --------
    >>> import io
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> f = io.StringIO()
    >>> tb.write_ptop(f, ptop)
    >>> _ = f.seek(0)
    >>> tb.read_ptop(f)
    PhysicalTopology(3 nodes, 1 switches, 2 links)
    """
    text, name = read_text(src)
    return parse_ptop(text, name)


def write_ptop(dst: Any, ptop: PhysicalTopology) -> None:
    """Write a testbed as a ``.ptop`` file (path or text stream).

    Parameters
    ----------
    dst : str, path-like or text stream
        Where to write.
    ptop : PhysicalTopology
        The testbed.

    Examples
    --------
    >>> import io
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> f = io.StringIO()
    >>> tb.write_ptop(f, ptop)
    >>> f.getvalue().splitlines()[0]
    'node sw switch:1'
    """
    _write_text(dst, format_ptop(ptop))


def _write_text(dst: Any, text: str) -> None:
    write_text(dst, text)  # a stream as is, a path through the one atomic writer


def parse_top(text: str, source: str = "<top>") -> VirtualTopology:
    """Parse the text of a ``.top`` file (see :mod:`coalloc.testbed.io`).

    Parameters
    ----------
    text : str
    source : str
        Name used in error messages.

    Returns
    -------
    VirtualTopology

    Raises
    ------
    InstanceError
        On the first malformed line (file, line number, what was expected).

    Examples
    --------
    >>> v = parse_top("node a pc\\nnode b pc\\nlink l a b 100000 0 0")
    >>> v.links["l"].bw
    100000.0
    """
    return grammar.parse(text, source, "top")


def format_top(top: VirtualTopology) -> str:
    """The ``.top`` text of an experiment (read back by :func:`parse_top` to an equal one).

    Parameters
    ----------
    top : VirtualTopology
        The experiment.

    Returns
    -------
    str
        The file's text.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> print(tb.format_top(top), end="")
    node x pc
    node y pc
    link l x y 100 0 0
    """
    out = []
    for name, (w, types) in top.vclasses.items():
        out.append(f"make-vclass {name} {_fmt(w)} {' '.join(types)}")
    for v in top.nodes.values():
        parts = ["node", v.name, v.type if v.slots == 1 else f"{v.type}:{_fmt(v.slots)}"]
        parts += [f"{k}:{_fmt(w)}" for k, w in v.desires.items()]
        for k, val in v.flags.items():
            parts.append(f"{k}:{val}" if val else k)
        out.append(" ".join(parts))
    for lk in top.links.values():
        parts = ["link", lk.name, lk.a, lk.b, "*" if lk.bw is None else _fmt(lk.bw),
                 _fmt(lk.delay), _fmt(lk.loss)]  # fmt: skip
        if lk.type:
            parts.append(lk.type)
        parts += sorted(lk.flags)
        parts += [f"{k}:{v}" for k, v in lk.options.items()]
        out.append(" ".join(parts))
    for v, p in top.fixed.items():
        out.append(f"fix-node {v} {p}")
    for v, p in top.hints.items():
        out.append(f"node-hint {v} {p}")
    return "\n".join(out) + "\n"


def read_top(src: Any) -> VirtualTopology:
    """Read a ``.top`` file (path or open text stream). See :func:`parse_top`.

    Parameters
    ----------
    src : str, path-like or text stream
        The file.

    Returns
    -------
    VirtualTopology
        The experiment.

    Raises
    ------
    InstanceError
        A malformed file or field (named with the file and line or field).

    Examples
    --------
    >>> import io
    >>> import coalloc.testbed as tb
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> f = io.StringIO()
    >>> tb.write_top(f, top)
    >>> _ = f.seek(0)
    >>> tb.read_top(f)
    VirtualTopology(2 nodes, 1 links)
    """
    text, name = read_text(src)
    return parse_top(text, name)


def write_top(dst: Any, top: VirtualTopology) -> None:
    """Write an experiment as a ``.top`` file (path or text stream).

    Parameters
    ----------
    dst : str, path-like or text stream
        Where to write.
    top : VirtualTopology
        The experiment.

    Examples
    --------
    >>> import io
    >>> import coalloc.testbed as tb
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> f = io.StringIO()
    >>> tb.write_top(f, top)
    >>> f.getvalue().splitlines()
    ['node x pc', 'node y pc', 'link l x y 100 0 0']
    """
    _write_text(dst, format_top(top))


def as_ptop(obj: Any) -> PhysicalTopology:
    """A testbed from a PhysicalTopology, a path to a ``.ptop`` file or a text stream."""
    return _as(obj, PhysicalTopology, read_ptop, "ptop")


def as_top(obj: Any) -> VirtualTopology:
    """An experiment from a VirtualTopology, a path to a ``.top`` file or a text stream."""
    return _as(obj, VirtualTopology, read_top, "top")


def _as(obj: Any, cls: type, read, what: str):
    if isinstance(obj, cls):
        return obj
    if isinstance(obj, (str, os.PathLike, _io.IOBase)):
        return read(obj)
    raise TypeError(f"{what} must be a {cls.__name__} or a .{what} file path, got "
                    f"{type(obj).__name__}")  # fmt: skip
