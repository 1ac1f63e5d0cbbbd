"""Emulab's ``.ptop`` / ``.top`` files, networkx graphs and the package's JSON.

Line formats (split on white space as Emulab's parser splits them: ``#`` is an ordinary
character, ``link0#2`` a name; a line whose first token starts with ``#`` is skipped as a
comment; see ``coalloc docs testbed``):

``.ptop``::

    node NAME TYPE:COUNT [TYPE:COUNT ...] [- FEATURE:WEIGHT ... [- FLAG ...]]
    link NAME SRC[:mac[/iface]] DST[:mac[/iface]] BW DELAY LOSS TYPE [TYPE ...]  (2011-2016)
    link NAME SRC DST BW DELAY LOSS                           (2003: untyped)
    link NAME SRC DST BW MULTIPLICITY       (older: that many links; a file in that form)
    set-type-limit TYPE N
    policy desire NAME disallow|limit X

``.top``::

    node NAME TYPE[:SLOTS] [DESIRE:WEIGHT ...] [subnode_of:V] [disallow_trivial_mix]
    link NAME A B BW|* DELAY LOSS TYPE [nodelay] [emulated] [trivial_ok] [fixsrciface:X]
    link NAME A B BW|* DELAY LOSS [FLAG ...]                  (2003: untyped)
    make-vclass NAME WEIGHT TYPE ...
    fix-node V P
    node-hint V P

A type written ``*name`` is static; a count ``*`` is unlimited. The 8th token of a link
line is its type whatever it looks like (``80211``); BW, DELAY and LOSS of a ``.top`` link
may carry Emulab's ``:UNDER:OVER[:WEIGHT]`` tolerances (checked, not used). A repeated
physical link name is one more link (as in Emulab), named ``NAME#k`` for its k-th use.
A malformed line raises one :class:`~coalloc._shared.jsonio.InstanceError` naming the
file, the line number and what was expected.

The subpackage holds one idea per module:

* :mod:`.grammar`: the line table of both file kinds and the one reading loop;
* :mod:`.fast`: its one fast path (plain lines read by their text alone, remembered);
* :mod:`._tokens`: the numbers, counts and names a line holds, and the refusal;
* :mod:`.cache`: a ``.ptop`` text read again is the same testbed;
* :mod:`.text`: parse, format, read and write the two files;
* :mod:`.dicts`: the JSON dictionaries, their schemas and the instance file;
* :mod:`.nx`: the networkx bridges;
* :mod:`.pair`: the two files of a command line, a swap named.
"""

from __future__ import annotations

from ..._shared.jsonio import InstanceError as InstanceError
from .cache import READ_CACHE_SIZE, clear_read_cache
from .dicts import (
    INSTANCE_FORMAT,
    instance_from_dict,
    ptop_from_dict,
    ptop_to_dict,
    read_instance,
    top_from_dict,
    top_to_dict,
    write_instance,
)
from .nx import ptop_from_networkx, ptop_to_networkx, top_from_networkx, top_to_networkx
from .pair import read_topologies
from .text import (
    format_ptop,
    format_top,
    parse_ptop,
    parse_top,
    read_ptop,
    read_top,
    write_ptop,
    write_top,
)

__all__ = [
    "read_ptop",
    "read_top",
    "write_ptop",
    "write_top",
    "parse_ptop",
    "parse_top",
    "format_ptop",
    "format_top",
    "ptop_to_dict",
    "ptop_from_dict",
    "top_to_dict",
    "top_from_dict",
    "ptop_to_networkx",
    "ptop_from_networkx",
    "top_to_networkx",
    "top_from_networkx",
    "read_instance",
    "read_topologies",
    "write_instance",
    "instance_from_dict",
    "INSTANCE_FORMAT",
    "clear_read_cache",
    "READ_CACHE_SIZE",
]

# also importable from here, as before the split (the package's own modules use them)
from .dicts import INSTANCE_SCHEMA as INSTANCE_SCHEMA  # noqa: E402
from .dicts import PTOP_SCHEMA as PTOP_SCHEMA  # noqa: E402
from .dicts import TOP_SCHEMA as TOP_SCHEMA  # noqa: E402
from .fast import LINE_MEMO_SIZE as LINE_MEMO_SIZE  # noqa: E402
from .grammar import MAX_MULTIPLICITY as MAX_MULTIPLICITY  # noqa: E402
from .text import as_ptop as as_ptop  # noqa: E402
from .text import as_top as as_top  # noqa: E402
