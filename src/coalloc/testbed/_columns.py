"""Many experiments as a few flat columns: how a batch chunk carries its testbed instances'
experiments to a process or Dask worker (issue 41, h51pool).

A chunk of a testbed batch holds tens of small experiments (9 nodes and 9 links on
average in the benchmark's workload), each distinct. Pickled one by one, each experiment
is one tuple per node and link (:func:`coalloc.testbed.model._virtual_rows`) and each of
their strings a memo entry of the pickler: the calling process's CPU grows with the
records. :func:`pack` takes the experiments of a whole chunk apart into a struct of
arrays instead: the nodes' and the links' names, types and ends each joined into one
string (names hold no white space, so a newline separates them), their numbers as the
bytes of float64 arrays, the per-experiment counts as the offsets, and the fields that
are usually empty (desires, flags, options, link types, directives) as None when every
record has them empty. The records are read by C-level ``map`` calls, one per field, not
by a Python loop per record. :func:`unpack` rebuilds the same experiments: the same
classes, field values and types, read-only mappings, node and link order, and each
node's links in order, without the constructors' checks again (they were checked when
built, as :func:`coalloc.testbed.model._virtual_from_rows` does).

:func:`pack` returns None for a list it cannot carry exactly (a subclass, nodes or links
of other classes, an attribute beyond the fields, a name or number of another type): the
batch then pickles those experiments as before.
"""

from __future__ import annotations

from itertools import chain
from operator import attrgetter, itemgetter
from types import MappingProxyType
from typing import Any, List, Optional, Sequence

import numpy as np

from .model import _VIRTUAL_KEYS, VirtualTopology, VLink, VNode, _checked, _read_only

__all__ = ["pack", "unpack"]

#: The separator of the joined names (a name holds no white space: ``model._name``).
SEP = "\n"
_F8 = np.dtype("<f8")
_NODE_FIELDS = itemgetter("name", "type", "slots", "desires", "flags")
_LINK_FIELDS = itemgetter("name", "a", "b", "bw", "delay", "loss", "type", "flags", "options")
_EMPTY = frozenset()


def _plain(top: Any) -> bool:
    """An experiment :func:`pack` carries: a VirtualTopology holding its fields (and the
    solvers' ``_tb_`` caches, which stay behind), nothing else."""
    if type(top) is not VirtualTopology:
        return False
    keys = top.__dict__.keys()
    return keys <= _VIRTUAL_KEYS or all(k in _VIRTUAL_KEYS or k.startswith("_tb_") for k in keys)


def _joined(names: Sequence[str]) -> Optional[str]:
    """``names`` joined by :data:`SEP`, or None when one holds it (none does: the model
    refuses white space in a name; a ``str`` subclass arrives as an equal ``str``)."""
    text = SEP.join(names)
    return text if text.count(SEP) == max(len(names) - 1, 0) else None


def _split(text: str, n: int) -> List[str]:
    return text.split(SEP) if n else []


def _floats(values: Sequence[float]) -> bytes:
    """The bytes of ``values`` as float64 (little-endian): the model keeps these numbers
    as Python floats (``model._nonneg``), which float64 holds exactly."""
    return np.fromiter(values, dtype=_F8, count=len(values)).tobytes()


def _sparse(values: Sequence[Any], convert: Any = None) -> Any:
    """None when every value is empty (``not value``), else the values (``convert``-ed)."""
    if not any(values):
        return None
    return list(values) if convert is None else [convert(v) if v else None for v in values]


def _tables(tops: Sequence[VirtualTopology]) -> Any:
    """The directives (vclasses, fixed, hints) of each experiment as dicts, or None when
    every experiment has none."""
    tables = list(map(attrgetter("vclasses", "fixed", "hints"), tops))
    if not any(map(any, tables)):
        return None
    return [tuple(map(dict, t)) for t in tables]


def pack(tops: Sequence[Any]) -> Optional[tuple]:
    """The experiments ``tops`` as columns (what :func:`unpack` rebuilds), or None.

    Parameters
    ----------
    tops : sequence of VirtualTopology
        The experiments of a chunk, in order.

    Returns
    -------
    tuple or None
        Picklable columns (strings, bytes, small lists); None when an experiment is not
        a plain one or a field is not of the type the columns keep exactly.

    Examples
    --------
    >>> from coalloc.testbed import generators as g
    >>> from coalloc.testbed import _columns
    >>> tops = [item[2] for item in g.workload(3, seed=1)]
    >>> back = _columns.unpack(_columns.pack(tops))
    >>> [list(t.nodes) == list(u.nodes) for t, u in zip(tops, back)]
    [True, True, True]
    """
    if not all(map(_plain, tops)):
        return None
    node_tables = list(map(attrgetter("nodes"), tops))
    link_tables = list(map(attrgetter("links"), tops))
    nodes = list(chain.from_iterable(map(MappingProxyType.values, node_tables)))
    links = list(chain.from_iterable(map(MappingProxyType.values, link_tables)))
    if (nodes and set(map(type, nodes)) != {VNode}) or (links and set(map(type, links)) != {VLink}):
        return None
    nrows = list(zip(*map(_NODE_FIELDS, map(vars, nodes)))) or [()] * 5
    lrows = list(zip(*map(_LINK_FIELDS, map(vars, links)))) or [()] * 9
    text = [_joined(c) for c in (nrows[0], nrows[1], lrows[0], lrows[1], lrows[2])]
    bw = lrows[3]
    star = None
    if None in bw:  # ``*`` links: their bandwidth is None, kept apart
        star = [v is None for v in bw]
        bw = [0.0 if v is None else v for v in bw]
    numbers = [_floats(c) for c in (nrows[2], bw, lrows[4], lrows[5])]
    ltypes = lrows[6]
    if None in text:
        return None
    counts = np.array([list(map(len, node_tables)), list(map(len, link_tables))], dtype="<i8")
    return (len(tops), counts.tobytes(), *text, *numbers, star,
            _sparse(nrows[3], dict), _sparse(nrows[4], dict),
            None if ltypes.count(None) == len(ltypes) else list(ltypes),
            _sparse(lrows[7]), _sparse(lrows[8], dict), _tables(tops))  # fmt: skip


def unpack(columns: tuple) -> List[VirtualTopology]:
    """The experiments :func:`pack` took apart, in order.

    Parameters
    ----------
    columns : tuple
        What :func:`pack` returned.

    Returns
    -------
    list of VirtualTopology
        Equal to the packed ones field by field (the same types, read-only mappings and
        orders), rebuilt without running the constructors' checks again.
    """
    (k, counts, nnames, ntypes, lnames, la, lb, slots, bw, delay, loss, star, desires,
     nflags, ltypes, lflags, options, tables) = columns  # fmt: skip
    nn, nl = np.frombuffer(counts, dtype="<i8").reshape(2, k).tolist()
    n_total, l_total = sum(nn), sum(nl)
    nnames, ntypes = _split(nnames, n_total), _split(ntypes, n_total)
    lnames, la, lb = _split(lnames, l_total), _split(la, l_total), _split(lb, l_total)
    slots = np.frombuffer(slots, dtype=_F8).tolist()
    bw, delay, loss = (np.frombuffer(c, dtype=_F8).tolist() for c in (bw, delay, loss))
    if star is not None:
        bw = [None if s else v for v, s in zip(bw, star)]
    ro = _read_only
    none_n, none_l = [None] * n_total, [None] * l_total
    vnodes = [_checked(VNode, *row) for row in zip(
        nnames, ntypes, slots, map(ro, desires or none_n), map(ro, nflags or none_n))]
    vlinks = [_checked(VLink, *row) for row in zip(
        lnames, la, lb, bw, delay, loss, ltypes or none_l, lflags or [_EMPTY] * l_total,
        map(ro, options or none_l))]  # fmt: skip
    out, i, j = [], 0, 0
    for e in range(k):
        top = VirtualTopology.__new__(VirtualTopology)
        top.nodes = {n.name: n for n in vnodes[i : i + nn[e]]}
        top.links = {lk.name: lk for lk in vlinks[j : j + nl[e]]}
        vc, fixed, hints = tables[e] if tables is not None else (None, None, None)
        top.vclasses, top.fixed, top.hints = ro(vc), ro(fixed), ro(hints)
        top._seal()
        out.append(top)
        i, j = i + nn[e], j + nl[e]
    return out
