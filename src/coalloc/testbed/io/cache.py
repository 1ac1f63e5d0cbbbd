"""The whole-file cache of the ``.ptop`` reader: the same text, the same testbed object."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Callable

from ..model import PhysicalTopology
from . import fast

__all__ = ["READ_CACHE_SIZE", "clear_read_cache", "remembered"]


#: How many testbeds :func:`parse_ptop` (and :func:`read_ptop`) remember by the digest of
#: their text: reading the same text again returns the same read-only
#: :class:`PhysicalTopology`, so that the tables the solvers compile once per testbed (kept
#: beside it by :func:`coalloc._shared.caches.cache_of`) serve every experiment of a
#: replay, a batch or a long-running service that reads the testbed file again each time.
READ_CACHE_SIZE = 8
_recent: OrderedDict[bytes, PhysicalTopology] = OrderedDict()
_recent_lock = threading.Lock()


def clear_read_cache() -> None:
    """Forget the testbeds :func:`parse_ptop` remembers (the next read builds a new object,
    whose compiled tables are built again on its first solve).

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> from coalloc.testbed.io import clear_read_cache
    >>> text = "node sw switch:1\\nnode a pc:1\\nlink la a sw 100 0 0"
    >>> tb.parse_ptop(text) is tb.parse_ptop(text)
    True
    >>> first = tb.parse_ptop(text)
    >>> clear_read_cache()
    >>> tb.parse_ptop(text) is first
    False
    """
    with _recent_lock:
        _recent.clear()
        fast._line_memo.clear()


def remembered(text: str, read: Callable[[], PhysicalTopology]) -> PhysicalTopology:
    """The testbed of ``text`` as read before (by the digest of the text), else ``read()``,
    remembered (the last :data:`READ_CACHE_SIZE`; a failed read is not remembered)."""
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    with _recent_lock:
        hit = _recent.get(key)
        if hit is not None:
            _recent.move_to_end(key)
            return hit
    topo = read()
    with _recent_lock:
        _recent[key] = topo
        while len(_recent) > READ_CACHE_SIZE:
            _recent.popitem(last=False)
    return topo
