"""A chunk of one instance class as columns (issue 41, h51pool): what a :class:`~.shipping.Shipper`
sends for a chunk of many small instances of one family.

Packed instance by instance, a chunk costs the calling process a few Python calls per
instance besides the instance's own bytes: the ``(index, instance, seed)`` row, the
instance's parts with its shared model replaced by its digest (a :class:`~.shipping._Parts`
and a :class:`~.shipping._Ref`, each pickled through a Python ``__reduce__``), the sharing
checks. When every instance of a chunk is of the same class, :func:`pack` sends the chunk
as a struct of arrays instead (a :class:`_Chunk`): the indexes as a range (or a list), the
seeds as one value when they are all the same object (a batch seed), and each field of
the instances as one column: a shared model's digest once, an object every instance holds
once, a family's column packer's output (a model class's ``_batch_columns`` hook: a testbed
chunk's experiments as a few joined strings and float64 arrays,
:mod:`coalloc.testbed._columns`), or the list of
the values. The worker rebuilds the same rows (:meth:`_Chunk.rows`): the same instances,
the same seeds, in order. Anything else (mixed classes, files, a value shared from an
earlier chunk in a distinct-valued field) goes row by row, as before.
"""

from __future__ import annotations

import importlib
import operator
from itertools import repeat
from typing import Any, Callable, Dict, List, Optional, Tuple

#: Pack a chunk of one instance class as columns (False: row by row, as before h51pool).
COLUMNAR = True
#: The hook a family's model class declares in its own body (not inherited: a subclass may
#: hold more than the packer keeps) to have its values packed as columns:
#: ``_batch_columns = (module, pack, unpack)``; ``pack(values)`` returns something picklable
#: or None (then the values go as a list), ``unpack(packed)`` the equal values, in order.
#: The batch layer names no family.
HOOK = "_batch_columns"
_packers: Dict[type, Optional[Tuple[Callable[..., Any], Callable[..., Any]]]] = {}


def _packer(cls: type) -> Optional[Tuple[Callable[..., Any], Callable[..., Any]]]:
    """``(pack, unpack)`` of the class ``cls``'s own :data:`HOOK`, or None."""
    try:
        return _packers[cls]
    except KeyError:
        pass
    entry = vars(cls).get(HOOK)
    found = None
    if entry is not None:
        module = importlib.import_module(entry[0])
        found = (getattr(module, entry[1]), getattr(module, entry[2]))
    _packers[cls] = found
    return found


class _Chunk:
    """A chunk's rows as columns: ``cls`` (the instances' class), ``indexes`` (``(first,
    count)`` for consecutive ones, else the list), ``seeds`` (``("one", seed)`` or
    ``("each", list)``), ``fields`` (per field of ``cls``: ``("ref", digest)``, ``("one",
    value)``, ``("cols", unpack, packed)`` or ``("list", values)``)."""

    __slots__ = ("cls", "indexes", "seeds", "fields")

    def __init__(self, cls: type, indexes: Any, seeds: tuple, fields: list):
        self.cls, self.indexes, self.seeds, self.fields = cls, indexes, seeds, fields

    def __reduce__(self):
        return (_Chunk, (self.cls, self.indexes, self.seeds, self.fields))

    def digests(self) -> List[str]:
        """The shared models' digests the chunk names."""
        return [f[1] for f in self.fields if f[0] == "ref"]

    def rows(self, got: Dict[str, Any]) -> list:
        """``[(index, instance, seed), ...]``, the shared models from ``got`` (digest ->
        object), as the chunk held them."""
        indexes = self.indexes
        if isinstance(indexes, tuple):
            indexes = range(indexes[0], indexes[0] + indexes[1])
        n = len(indexes)
        columns = []
        for field in self.fields:
            kind = field[0]
            if kind == "ref":
                columns.append(repeat(got[field[1]], n))
            elif kind == "one":
                columns.append(repeat(field[1], n))
            elif kind == "cols":
                columns.append(field[1](field[2]))
            else:
                columns.append(field[1])
        cls = self.cls
        new = cls.__new__
        items = [new(cls, *parts) for parts in zip(*columns)]
        kind, seeds = self.seeds
        return list(zip(indexes, items, repeat(seeds, n) if kind == "one" else seeds))


def _all_same(values: tuple) -> bool:
    return all(map(operator.is_, values, repeat(values[0])))


def pack(shipper: Any, chunk: list) -> Optional[_Chunk]:
    """``chunk`` (``[(index, instance, seed), ...]``) as a :class:`_Chunk`, or None when it
    goes row by row (instances of several classes, not a family's instance, a subclass
    with a ``__dict__``, or a model of a distinct-valued field held twice in the chunk or
    already shared or seen by the batch: the rows share it as before)."""
    indexes, items, seeds = zip(*chunk)
    cls = type(items[0])
    if (not isinstance(items[0], shipper.instance_type) or cls.__dictoffset__
            or not all(map(operator.is_, map(type, items), repeat(cls)))):  # fmt: skip
        return None  # several classes, not an instance, or one holding more than its fields
    fields = []
    fresh = []
    for values in zip(*items):
        first = values[0]
        if _all_same(values):  # held by every instance: shared (a model) or sent once
            if isinstance(first, shipper.types):
                fields.append(("ref", shipper.share(first)))
            else:
                fields.append(("one", first))
            continue
        kinds = set(map(type, values))
        if any(issubclass(t, shipper.types) for t in kinds):
            # a model held twice here, or seen in an earlier chunk: row by row shares it
            if len(set(map(id, values))) != len(values) or shipper.seen_any(values):
                return None
            fresh.append(values)
        packer = _packer(type(first)) if len(kinds) == 1 else None
        packed = packer[0](values) if packer is not None else None
        fields.append(("list", list(values)) if packed is None else ("cols", packer[1], packed))
    for values in fresh:
        shipper.note(values)
    first = indexes[0]
    consecutive = indexes[-1] - first == len(indexes) - 1 and list(indexes) == list(
        range(first, first + len(indexes))
    )
    return _Chunk(cls, (first, len(indexes)) if consecutive else list(indexes),
                  ("one", seeds[0]) if _all_same(seeds) else ("each", list(seeds)),
                  fields)  # fmt: skip
