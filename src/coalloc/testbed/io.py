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
"""

from __future__ import annotations

import hashlib
import io as _io
import math
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from .._shared.jsonio import (
    InstanceError,
    check_envelope,
    dump_json,
    load_json,
    num,
    read_text,
    write_text,
)
from .._shared.schema import (
    AnyValue,
    Int,
    ListOf,
    MapOf,
    Num,
    Obj,
    OneOf,
    Str,
    TupleOf,
    check,
)
from .model import (
    LINK_FLAGS,
    MAX_BANDWIDTH,
    PhysicalTopology,
    PLink,
    PNode,
    VirtualTopology,
    VLink,
    VNode,
    _checked,
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
    "write_instance",
    "instance_from_dict",
    "INSTANCE_FORMAT",
    "clear_read_cache",
    "READ_CACHE_SIZE",
]

INSTANCE_FORMAT = "coalloc.testbed.instance"
#: The node flags of a ``.ptop`` (after the second ``-``), the ones Emulab's assign takes.
_PNODE_FLAGS = ("trivial_bw", "subnode_of", "unique")
#: The most links one older ``link NAME SRC DST BW MULTIPLICITY`` line may stand for.
MAX_MULTIPLICITY = 1000
PathLike = Union[str, "os.PathLike[str]"]


class _Line:
    __slots__ = ("source", "lineno", "text")

    def __init__(self, source: str, lineno: int, text: str) -> None:
        self.source, self.lineno, self.text = source, lineno, text

    def fail(self, expected: str) -> InstanceError:
        """One short line: the quoted line (and tokens quoted in ``expected``) are cut."""
        return InstanceError(
            f"{self.source}:{self.lineno}: expected {_cut(expected, 300)}; "
            f"got {_cut(repr(self.text.strip()), 120)}"
        )


def _cut(text: str, limit: int) -> str:
    """``text`` shortened to about ``limit`` characters (a garbled line can be megabytes)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _count(tok: str, line: _Line, what: str, *, low: int = 0, high: int = 2**53) -> int:
    """A whole number written in ASCII digits, ``low <= n <= high`` (no ``inf``, ``1e400``,
    ``1.5`` or ``1_0``: Emulab reads these counts as C integers)."""
    if not (tok.isascii() and tok.isdigit()):
        raise line.fail(f"{what} (a whole number), not {_cut(repr(tok), 40)}")
    n = int(tok) if len(tok) < 30 else high + 1
    if not low <= n <= high:
        top = "2**53" if high == 2**53 else str(high)
        raise line.fail(f"{what} between {low} and {top}, not {_cut(tok, 40)}")
    return n


def _link_name(name: str, taken: Dict[str, int]) -> str:
    """A repeated link name (Emulab accepts them: each line is one more link) gets the
    suffix ``#k`` for its k-th use, so that routes and mappings can name every link."""
    if name not in taken:
        return name
    k = 2
    while f"{name}#{k}" in taken:
        k += 1
    return f"{name}#{k}"


def _number(tok: str, line: _Line, what: str, *, star: bool = False) -> float:
    """A finite non-negative number in ASCII (``*`` = unlimited where ``star``): ``inf``,
    ``1e400``, ``1_0`` and non-ASCII digits are refused, not read as numbers."""
    if tok.isdigit() and tok.isascii() and len(tok) < 300:  # the common case: finite
        return float(tok)
    if star and tok == "*":
        return math.inf
    try:
        if not tok.isascii() or "_" in tok:
            raise ValueError(tok)
        x = float(tok)
    except ValueError:
        raise line.fail(f"{what} (a number{' or *' if star else ''}), not "
                        f"{_cut(repr(tok), 40)}") from None  # fmt: skip
    if not math.isfinite(x) or x < 0:
        raise line.fail(f"{what} (a finite non-negative number), not {_cut(repr(tok), 40)}")
    return x


def _tolerance(tok: str, line: _Line, what: str, *, star: bool = False) -> Optional[float]:
    """``X`` or Emulab's ``X:UNDER:OVER[:WEIGHT]`` (the tolerances are checked, not kept);
    ``*`` (None) where ``star``."""
    if ":" not in tok:  # the common case: a plain number
        if star and tok == "*":
            return None
        return _number(tok, line, f"{what}{' (or *)' if star else ''}")
    parts = tok.split(":")
    if len(parts) not in (1, 3, 4):
        raise line.fail(f"{what} written X or X:UNDER:OVER[:WEIGHT], not {_cut(repr(tok), 40)}")
    for extra in parts[1:]:
        _number(extra, line, f"a tolerance of {what}")
    if star and parts[0] == "*":
        return None
    return _number(parts[0], line, f"{what}{' (or *)' if star else ''}")


def _pair(tok: str, line: _Line, what: str) -> Tuple[str, float]:
    if ":" not in tok:
        raise line.fail(f"{what} written NAME:WEIGHT, not {tok!r}")
    name, value = tok.rsplit(":", 1)
    if not name:
        raise line.fail(f"{what} written NAME:WEIGHT, not {tok!r}")
    return name, _number(value, line, f"the weight of {name}", star=True)


def _build(line: _Line, factory, *args, **kwargs):
    try:
        return factory(*args, **kwargs)
    except (ValueError, TypeError) as exc:
        raise InstanceError(f"{line.source}:{line.lineno}: {exc}") from None


# ------------------------------------------------------------------- the line table
#
# Both readers are one loop over one table: each row is a line kind of one file kind
# (keyword, the usage the line must follow, its leading fields with their converters and
# how many tokens it takes) and the handler that adds what the converted fields say to
# the file's _Reader. A converter or a handler refuses a token with _Line.fail; the table
# keeps the order in which the fields are checked (and so which error a bad line gets).

_LINK_OPTIONS = ("fixsrciface", "fixdstiface")


class _Reader:
    """What the lines of one file have built so far (the two file kinds share it)."""

    __slots__ = ("nodes", "links", "names", "link_names", "limits", "policies", "vclasses",
                 "fixed", "hints", "full_link")  # fmt: skip

    def __init__(self) -> None:
        self.nodes: list = []
        self.links: list = []
        self.names: Dict[str, int] = {}  # node name -> the line defining it
        self.link_names: Dict[str, int] = {}
        self.limits: Dict[str, int] = {}
        self.policies: Dict[str, Tuple[str, Optional[float]]] = {}
        self.vclasses: Dict[str, Tuple[float, Tuple[str, ...]]] = {}
        self.fixed: Dict[str, str] = {}
        self.hints: Dict[str, str] = {}
        # the first line of a .ptop whose link line has DELAY and LOSS (0: none has)
        self.full_link = 0

    def node_name(self, line: _Line, name: str) -> str:
        """``name`` for a new node (a repeated one is refused, naming its first line)."""
        if name in self.names:
            raise line.fail(f"a new node name ({name!r} already defined on line "
                            f"{self.names[name]})")  # fmt: skip
        self.names[name] = line.lineno
        return name

    def link_name(self, line: _Line, name: str) -> str:
        """The name of one more link called ``name``: ``name#k`` for its k-th use (assign
        accepts a repeated link name as one more link)."""
        name = _link_name(name, self.link_names)
        self.link_names[name] = line.lineno
        return name


@dataclass(frozen=True)
class _Field:
    """A leading field of a line: its name (for the reader) and its converter
    ``convert(token, line, reader) -> value`` (None: the token as written)."""

    name: str
    convert: Optional[Callable[[str, _Line, _Reader], Any]]


@dataclass(frozen=True)
class _LineKind:
    """One row of the table: a line kind of one file kind.

    ``fields`` are converted in order and passed to ``handler(reader, line, values,
    rest)`` with the tokens after them; a line with fewer than ``min_tokens`` tokens
    (default: the keyword and every field), or more than ``max_tokens``, is refused with
    ``usage``.
    """

    keyword: str
    file: str  # "ptop" or "top"
    usage: str
    fields: Tuple[_Field, ...]
    handler: Callable[[_Reader, _Line, list, List[str]], None]
    min_tokens: int = 0
    max_tokens: Optional[int] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "min_tokens", max(self.min_tokens, len(self.fields) + 1))
        conv = tuple((i, f.convert) for i, f in enumerate(self.fields) if f.convert is not None)
        object.__setattr__(self, "converters", conv)


def _name_field(name: str) -> _Field:
    return _Field(name, None)  # kept as written


def _number_field(name: str, what: str) -> _Field:
    return _Field(name, lambda tok, line, r: _number(tok, line, what))


def _tolerance_field(name: str, what: str, *, star: bool = False) -> _Field:
    return _Field(name, lambda tok, line, r: _tolerance(tok, line, what, star=star))


def _choice_field(name: str, choices: Tuple[str, ...], usage: str) -> _Field:
    def convert(tok: str, line: _Line, r: _Reader) -> str:
        if tok not in choices:
            raise line.fail(usage)
        return tok

    return _Field(name, convert)


def _end(tok: str, line: _Line, r: _Reader) -> Tuple[str, str]:
    """A link end ``NODE[:mac[/iface]]`` naming a node defined above: ``(node, iface)``."""
    node, _, iface = tok.partition(":")
    if node not in r.names:
        raise line.fail(f"a defined node as link end, not {node!r} (nodes come "
                        f"before the links that name them)")  # fmt: skip
    return node, iface


def _defined_vnode(kw: str) -> _Field:
    def convert(tok: str, line: _Line, r: _Reader) -> str:
        if tok not in r.names:
            raise line.fail(f"a defined virtual node after {kw}, not {tok!r}")
        return tok

    return _Field("VIRTUAL", convert)


def _two_ends(line: _Line, side: str, name: str, a: str, b: str) -> None:
    """A link joins two different nodes (refused at its own line)."""
    if a == b:
        raise InstanceError(f"{line.source}:{line.lineno}: {side} link {name!r} joins {a!r} "
                            f"to itself")  # fmt: skip


def _positive_bw(tok: str, line: _Line, r: _Reader) -> float:
    bw = _number(tok, line, "the bandwidth")
    if bw <= 0:  # as assign: "Bad link line - negative or zero bandwidth."
        raise line.fail(f"a bandwidth > 0, not {_cut(repr(tok), 40)}")
    return bw


def _ptop_node(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    """``TYPE:COUNT ... [- FEATURE:WEIGHT ... [- FLAG ...]]``."""
    types: Dict[str, float] = {}
    static: Dict[str, float] = {}
    features: Dict[str, float] = {}
    flags: Dict[str, str] = {}
    part = 0
    for t in rest:
        if t == "-":
            part += 1
            if part > 2:
                raise line.fail("at most two '-' separators (types - features - flags)")
            continue
        if part == 0:
            if ":" not in t:  # as assign: "Bad node line, no load for type"
                raise line.fail(f"TYPE:COUNT (a count after each type), not {_cut(repr(t), 40)}")
            name, count = t.rsplit(":", 1)
            value = _number(count, line, f"the slot count of type {name}", star=True)
            if name.startswith("*"):
                static[name[1:]] = value
            else:
                types[name] = value
        elif part == 1:
            k, w = _pair(t, line, "a feature")
            features[k] = w
        else:
            k, _, v = t.partition(":")
            if k not in _PNODE_FLAGS:  # as assign: "Bad flag given"
                raise line.fail(f"a node flag ({', '.join(_PNODE_FLAGS)}), not "
                                f"{_cut(repr(t), 40)}")  # fmt: skip
            if k == "trivial_bw":
                _number(v, line, "the trivial_bw bandwidth")
            flags[k] = v
    if not types and not static:
        raise line.fail("at least one TYPE:COUNT after the node name")
    r.nodes.append(_build(line, PNode, r.node_name(line, values[0]), types, static, features,
                          flags))  # fmt: skip


def _ptop_link(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    """``DELAY LOSS [TYPE ...]`` (2011-2016 with types, 2003 without: the 8th token is the
    link type whatever it looks like, 80211 is one) or the older ``MULTIPLICITY``."""
    name, (a, a_iface), (b, b_iface), bw = values
    copies = 1
    delay = loss = 0.0
    if len(rest) == 1:
        if r.full_link:  # a file of the later forms: this line was cut after its DELAY
            raise line.fail(f"'DELAY LOSS TYPE' after the bandwidth as on line {r.full_link} "
                            f"(the older 'BW MULTIPLICITY' form is read in files whose link "
                            f"lines all take it)")  # fmt: skip
        copies = _count(rest[0], line, "the multiplicity", low=1, high=MAX_MULTIPLICITY)
    else:
        delay = _number(rest[0], line, "the delay")
        loss = _number(rest[1], line, "the loss")
    types = tuple(rest[2:])
    for _ in range(copies):
        lname = r.link_name(line, name)
        _two_ends(line, "physical", lname, a, b)
        r.links.append(_build(line, PLink, lname, a, b, bw, delay, loss, types, a_iface,
                              b_iface))  # fmt: skip


def _type_limit(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    r.limits[values[0]] = values[1]


def _policy(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    _, name, kind = values
    if kind == "limit":
        if len(rest) != 1:
            raise line.fail("'policy desire NAME limit X'")
        r.policies[name] = ("limit", _number(rest[0], line, "the policy limit X"))
    else:  # as assign, words after disallow are ignored
        r.policies[name] = ("disallow", None)


def _top_node(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    """``[DESIRE:WEIGHT ...] [subnode_of:V] [disallow_trivial_mix]``."""
    name, (vtype, nslots) = values
    desires: Dict[str, float] = {}
    flags: Dict[str, str] = {}
    for t in rest:
        if t == "disallow_trivial_mix":
            flags[t] = ""
        elif t.startswith("subnode_of:"):
            flags["subnode_of"] = t.split(":", 1)[1]
        else:
            k, w = _pair(t, line, "a desire")
            desires[k] = w
    r.nodes.append(_build(line, VNode, r.node_name(line, name), vtype, nslots, desires, flags))


def _typed_slots(tok: str, line: _Line, r: _Reader) -> Tuple[str, float]:
    vtype, _, slots = tok.partition(":")
    return vtype, (_number(slots, line, "the slot count") if slots else 1.0)


def _top_link(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    """``[TYPE] [FLAG ...]``: the first token after LOSS that is no flag or option is the
    link type, whatever it looks like (80211 is one)."""
    name, (a, _), (b, _), bw, delay, loss = values
    ltype = None
    flags = set()
    options: Dict[str, str] = {}
    for i, t in enumerate(rest):
        key = t.split(":", 1)[0]
        if t in LINK_FLAGS:
            flags.add(t)
        elif key in _LINK_OPTIONS and ":" in t:
            options[key] = t.split(":", 1)[1]
        elif i == 0:
            ltype = t
        else:
            raise line.fail(f"a link flag ({', '.join(LINK_FLAGS)}, fixsrciface:X, "
                            f"fixdstiface:X), not {t!r}")  # fmt: skip
    if bw is None and flags & {"emulated", "trivial_ok"}:  # as assign refuses it
        raise line.fail("a bandwidth, not '*', on an emulated or trivial_ok link "
                        "(as assign: no auto-assigned bandwidth on those)")  # fmt: skip
    lname = r.link_name(line, name)
    _two_ends(line, "virtual", lname, a, b)
    r.links.append(_build(line, VLink, lname, a, b, bw, delay, loss, ltype, frozenset(flags),
                          options))  # fmt: skip


def _vclass(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
    r.vclasses[values[0]] = (values[1], tuple(rest))


def _placement(table: str) -> Callable[[_Reader, _Line, list, List[str]], None]:
    def handler(r: _Reader, line: _Line, values: list, rest: List[str]) -> None:
        getattr(r, table)[values[0]] = values[1]

    return handler


# ---------------------------------------------------------------- the lines read at speed
#
# Most lines of a testbed are plain ``link`` and ``node`` lines. For them a fast reader
# checks the tokens as the table's converters and handlers would (and as the model's
# constructors would: names without white space, finite non-negative ASCII numbers, a
# bandwidth in (0, MAX_BANDWIDTH], ends naming two different nodes defined above) and
# builds the objects without checking them a second time. A line it does not recognise as
# plain (a tolerance, a flag, a unusual number, any fault) goes through the table's
# general path, which reads it or refuses it with its message: every value is checked
# once, and the language read and the messages are the table's.

_INF = math.inf
_NO_MAP = MappingProxyType({})


def _plain(tok: str) -> Optional[float]:
    """A finite non-negative number written in ASCII, as :func:`_number` reads it (None:
    anything else, for the general path to read or refuse)."""
    if tok.isascii() and "_" not in tok:
        try:
            x = float(tok)
        except ValueError:
            return None
        if 0.0 <= x < _INF:
            return x
    return None


def _fast_ptop_link(r: _Reader, tok: List[str], lineno: int) -> bool:
    """``link NAME SRC[:mac] DST[:mac] BW DELAY LOSS [TYPE ...]`` with plain numbers."""
    if len(tok) < 7:
        return False
    name, src, dst, bw_t, delay_t, loss_t = tok[1:7]
    a, _, a_iface = src.partition(":")
    b, _, b_iface = dst.partition(":")
    names = r.names
    if a == b or a not in names or b not in names:
        return False
    bw, delay, loss = _plain(bw_t), _plain(delay_t), _plain(loss_t)
    if bw is None or delay is None or loss is None or not 0.0 < bw <= MAX_BANDWIDTH:
        return False
    taken = r.link_names
    if name in taken:
        name = _link_name(name, taken)
    taken[name] = lineno
    r.links.append(_checked(PLink, name, a, b, bw, delay, loss, tuple(tok[7:]), a_iface,
                            b_iface, None))  # fmt: skip
    return True


def _fast_ptop_node(r: _Reader, tok: List[str], lineno: int) -> bool:
    """``node NAME TYPE:COUNT ... [- FEATURE:WEIGHT ...]`` (no flags) with plain numbers."""
    name = tok[1]
    if name in r.names:
        return False
    types: Dict[str, float] = {}
    static: Dict[str, float] = {}
    features: Dict[str, float] = {}
    part = 0
    for t in tok[2:]:
        if t == "-":
            if part:  # (flags: the general path)
                return False
            part = 1
            continue
        key, colon, value = t.rpartition(":")
        if part == 0:
            if not colon:
                return False
            x = _INF if value == "*" else _plain(value)
            table = types
            if key.startswith("*"):
                key, table = key[1:], static
            if x is None or not key:
                return False
            table[key] = x
        else:
            x = _INF if value == "*" else _plain(value)
            if x is None or not key:
                return False
            features[key] = x
    if not types and not static:
        return False
    r.names[name] = lineno
    r.nodes.append(_checked(PNode, name, MappingProxyType(types), MappingProxyType(static),
                            MappingProxyType(features), _NO_MAP))  # fmt: skip
    return True


def _fast_top_node(r: _Reader, tok: List[str], lineno: int) -> bool:
    """``node NAME TYPE[:SLOTS] [DESIRE:WEIGHT ...]`` (no flags) with plain numbers."""
    name = tok[1]
    vtype, colon, slots_t = tok[2].partition(":")
    slots = _plain(slots_t) if colon else 1.0
    if name in r.names or not vtype or slots is None:
        return False
    desires: Dict[str, float] = {}
    for t in tok[3:]:
        key, colon, value = t.rpartition(":")
        x = _INF if value == "*" else _plain(value)
        if not colon or not key or x is None or key == "subnode_of":
            return False
        desires[key] = x
    r.names[name] = lineno
    r.nodes.append(_checked(VNode, name, vtype, slots, MappingProxyType(desires), _NO_MAP))
    return True


_FLAG_SET = frozenset(LINK_FLAGS)


def _fast_top_link(r: _Reader, tok: List[str], lineno: int) -> bool:
    """``link NAME A B BW|* DELAY LOSS [TYPE] [nodelay|emulated|trivial_ok ...]`` with plain
    numbers (no tolerances, no ``fix*iface`` options)."""
    if len(tok) < 7:
        return False
    name, a_t, b_t, bw_t, delay_t, loss_t = tok[1:7]
    a, b = a_t.partition(":")[0], b_t.partition(":")[0]
    names = r.names
    if a == b or a not in names or b not in names:
        return False
    bw = None if bw_t == "*" else _plain(bw_t)
    delay, loss = _plain(delay_t), _plain(loss_t)
    if delay is None or loss is None or (bw is None and bw_t != "*"):
        return False
    if bw is not None and bw > MAX_BANDWIDTH:
        return False
    ltype = None
    flags = []
    for i, t in enumerate(tok[7:]):
        if t in _FLAG_SET:
            flags.append(t)
        elif i == 0 and ":" not in t:
            ltype = t
        else:
            return False
    if bw is None and flags:  # ('*' with emulated or trivial_ok: the table refuses it)
        return False
    taken = r.link_names
    if name in taken:
        name = _link_name(name, taken)
    taken[name] = lineno
    r.links.append(_checked(VLink, name, a, b, bw, delay, loss, ltype, frozenset(flags),
                            _NO_MAP))  # fmt: skip
    return True


#: The fast readers of the plain lines, by (file, keyword).
_FAST = {("ptop", "link"): _fast_ptop_link, ("ptop", "node"): _fast_ptop_node,
         ("top", "node"): _fast_top_node, ("top", "link"): _fast_top_link}  # fmt: skip


_POLICY_USAGE = "'policy desire NAME disallow' or 'policy desire NAME limit X'"
_NAME_FIELD, _END_A, _END_B = _name_field("NAME"), _Field("SRC", _end), _Field("DST", _end)

#: The line kinds of the two files, in the order the refusal of an unknown keyword names them.
_LINE_KINDS: Tuple[_LineKind, ...] = (
    _LineKind("node", "ptop", "'node NAME TYPE:COUNT ... [- FEATURE:WEIGHT ... [- FLAG ...]]'",
              (_NAME_FIELD,), _ptop_node, min_tokens=3),
    _LineKind("link", "ptop", "'link NAME SRC DST BW DELAY LOSS TYPE [TYPE ...]' (or the "
              "older 'BW DELAY LOSS' or 'BW MULTIPLICITY')",
              (_NAME_FIELD, _END_A, _END_B, _Field("BW", _positive_bw)), _ptop_link,
              min_tokens=6),
    _LineKind("set-type-limit", "ptop", "'set-type-limit TYPE N'",
              (_name_field("TYPE"),
               _Field("N", lambda tok, line, r: _count(tok, line, "the type limit N"))),
              _type_limit, max_tokens=3),
    _LineKind("policy", "ptop", _POLICY_USAGE,
              (_choice_field("desire", ("desire",), _POLICY_USAGE), _NAME_FIELD,
               _choice_field("KIND", ("disallow", "limit"), _POLICY_USAGE)), _policy),
    _LineKind("node", "top", "'node NAME TYPE[:SLOTS] [DESIRE:WEIGHT ...]'",
              (_NAME_FIELD, _Field("TYPE", _typed_slots)), _top_node),
    _LineKind("link", "top", "'link NAME A B BW|* DELAY LOSS [TYPE] [FLAG ...]'",
              (_NAME_FIELD, _END_A, _END_B,
               _tolerance_field("BW", "the bandwidth", star=True),
               _tolerance_field("DELAY", "the delay"), _tolerance_field("LOSS", "the loss")),
              _top_link),
    _LineKind("make-vclass", "top", "'make-vclass NAME WEIGHT TYPE ...'",
              (_NAME_FIELD, _number_field("WEIGHT", "the vclass weight")), _vclass,
              min_tokens=4),
    _LineKind("fix-node", "top", "'fix-node VIRTUAL PHYSICAL'",
              (_defined_vnode("fix-node"), _name_field("PHYSICAL")), _placement("fixed"),
              max_tokens=3),
    _LineKind("node-hint", "top", "'node-hint VIRTUAL PHYSICAL'",
              (_defined_vnode("node-hint"), _name_field("PHYSICAL")), _placement("hints"),
              max_tokens=3),
)  # fmt: skip


def _kinds(file: str) -> Tuple[Dict[str, tuple], str]:
    """The rows of ``file``'s line kinds by keyword, unpacked for the reading loop, and
    the refusal of an unknown keyword (naming the keywords in the table's order)."""
    rows = {k.keyword: (k.min_tokens, k.max_tokens or math.inf, len(k.fields), k.converters,
                        k.handler, k.usage, _FAST.get((file, k.keyword)))
            for k in _LINE_KINDS if k.file == file}  # fmt: skip
    words = list(rows)
    return rows, f"a line starting with {', '.join(words[:-1])} or {words[-1]}"


#: What the reader of each file kind builds from its lines.
_FILES = {
    "ptop": (_kinds("ptop"), lambda r: PhysicalTopology._from_reader(
        r.nodes, r.links, type_limits=r.limits, policies=r.policies)),
    "top": (_kinds("top"), lambda r: VirtualTopology._from_reader(
        r.nodes, r.links, vclasses=r.vclasses, fixed=r.fixed, hints=r.hints)),
}  # fmt: skip


def _parse(text: str, source: str, file: str):
    """The topology of a ``.ptop`` or ``.top`` text: a testbed first in one sweep over its
    columns (:func:`_sweep_ptop`), anything that sweep does not take line by line through
    the table (which reads it the same way or refuses its first faulty line)."""
    lines = text.splitlines()
    if file == "ptop":
        topo = _memo_ptop(lines)
        if topo is not None:
            return topo
        topo = _sweep_ptop(lines, source)
        if topo is not None:
            return topo
    return _parse_lines(lines, source, file)


#: Plain ``node``/``link`` lines of the ``.ptop`` texts read lately -> the read-only
#: :class:`PNode` or :class:`PLink` each reads as (a line's object depends on its text only;
#: what depends on the other lines -- a repeated node or link name, an end not defined
#: before -- is checked on every read). The free-testbed texts a replay or a service writes
#: for each experiment repeat most lines of the last one (the free nodes and their links;
#: only the trunks' residual bandwidths change), so such a text is read at a dictionary
#: look-up per line. Bounded: cleared when it holds :data:`LINE_MEMO_SIZE` lines.
_line_memo: Dict[str, Any] = {}
LINE_MEMO_SIZE = 1 << 16


def _memo_ptop(lines: List[str]) -> Optional[PhysicalTopology]:
    """A ``.ptop`` whose lines are all plain ``node`` and ``link`` lines (and blank or
    comment lines), each taken from :data:`_line_memo` or read by its line kind's fast
    reader. None when any line is not plain or not right in its place (a repeated name, an
    end not defined before): :func:`_sweep_ptop` or the line-by-line reader then reads the
    file, so the result and the messages are theirs."""
    memo = _line_memo
    (rows, _), build = _FILES["ptop"]
    if not memo or rows["node"][6] is None or rows["link"][6] is None:
        return None  # (nothing remembered, or no fast readers)
    r = _Reader()
    names, taken, nodes, links = r.names, r.link_names, r.nodes, r.links
    fresh = []
    for lineno, raw in enumerate(lines, 1):
        obj = memo.get(raw)
        if obj is None:
            if len(fresh) > 32 and 2 * len(fresh) > lineno:
                return None  # mostly new lines: the column sweep reads (and remembers) them
            tok = raw.split()
            if not tok or tok[0][0] == "#":
                continue
            row = rows.get(tok[0])
            if row is None or tok[0] not in ("node", "link"):
                return None
            low, high, fast = row[0], row[1], row[6]
            if not low <= len(tok) <= high or not fast(r, tok, lineno):
                return None
            if tok[0] == "node":
                fresh.append((raw, nodes[-1]))
            elif links[-1].name == tok[1]:  # (a repeated name, renamed: not remembered)
                fresh.append((raw, links[-1]))
            continue
        name = obj.name
        if type(obj) is PNode:
            if name in names:
                return None
            names[name] = lineno
            nodes.append(obj)
        else:
            if name in taken or obj.a not in names or obj.b not in names:
                return None
            taken[name] = lineno
            links.append(obj)
    try:
        topo = build(r)
    except (ValueError, TypeError):
        return None
    if fresh:
        if len(memo) + len(fresh) > LINE_MEMO_SIZE:
            memo.clear()
        memo.update(fresh)
    return topo


def _sweep_ptop(lines: List[str], source: str) -> Optional[PhysicalTopology]:
    """A ``.ptop`` whose link lines are all plain (seven tokens or more, plain numbers,
    ends naming two different nodes defined on earlier lines), read with its link lines
    taken as columns: each column checked at once (ASCII digits, bandwidths in range) and
    the links built without checking them again. None when anything is not plain or not
    right: the line-by-line reader then reads the file (or refuses it at its first fault),
    so the result and the messages are the table's."""
    (rows, _), build = _FILES["ptop"]
    r = _Reader()
    links: List[List[str]] = []
    linenos: List[int] = []
    fresh = []  # (line, node) of the node lines read by the fast reader, for the line memo
    for lineno, raw in enumerate(lines, 1):
        tok = raw.split()
        if not tok or tok[0][0] == "#":
            continue
        if tok[0] == "link":
            links.append(tok)
            linenos.append(lineno)
            continue
        row = rows.get(tok[0])
        if row is None:
            return None
        low, high, n, converters, handler, usage, fast = row
        if not low <= len(tok) <= high:
            return None
        if fast is not None and fast(r, tok, lineno):
            if tok[0] == "node":
                fresh.append((raw, r.nodes[-1]))
            continue
        line = _Line(source, lineno, raw)
        values = tok[1 : n + 1]
        try:
            for i, convert in converters:
                values[i] = convert(values[i], line, r)
            handler(r, line, values, tok[n + 1 :])
        except InstanceError:
            return None
    if links and min(map(len, links)) < 7:
        return None
    names = r.names
    ends = []
    for lineno, tok in zip(linenos, links):
        a, _, a_iface = tok[2].partition(":")
        b, _, b_iface = tok[3].partition(":")
        if a == b or names.get(a, lineno) >= lineno or names.get(b, lineno) >= lineno:
            return None  # (an end unknown, defined later or the same node twice)
        ends.append((a, b, a_iface, b_iface))
    columns = []
    for j in (4, 5, 6):  # BW DELAY LOSS
        col = [tok[j] for tok in links]
        digits = "".join(col)
        if digits.isdigit() and digits.isascii() and max(map(len, col)) < 300:
            values = list(map(float, col))
        else:
            values = [_plain(t) for t in col]
            if None in values:
                return None
        columns.append(values)
    bws, delays, losses = columns
    if links and not (min(bws) > 0.0 and max(bws) <= MAX_BANDWIDTH):
        return None
    lnames = [tok[1] for tok in links]
    if len(set(lnames)) != len(lnames):  # repeated names: NAME#k, in the order of the lines
        taken = r.link_names
        for k, name in enumerate(lnames):
            if name in taken:
                lnames[k] = name = _link_name(name, taken)
            taken[name] = linenos[k]
    new = object.__new__
    out = r.links
    for name, (a, b, a_iface, b_iface), bw, delay, loss, tok in zip(lnames, ends, bws, delays,
                                                                    losses, links):  # fmt: skip
        link = new(PLink)
        link.__dict__.update({"name": name, "a": a, "b": b, "bw": bw, "delay": delay,
                              "loss": loss, "types": tuple(tok[7:]), "a_iface": a_iface,
                              "b_iface": b_iface, "slots": None})  # fmt: skip
        out.append(link)
    try:
        topo = build(r)
    except (ValueError, TypeError):
        return None
    # the link lines read as the fast reader reads them (a renamed repeat: not remembered)
    fresh.extend((lines[k - 1], link) for k, tok, link in zip(linenos, links, out)
                 if link.name == tok[1])  # fmt: skip
    if len(_line_memo) + len(fresh) > LINE_MEMO_SIZE:
        _line_memo.clear()
    _line_memo.update(fresh)
    return topo


def _parse_lines(lines: List[str], source: str, file: str):
    """The topology of a ``.ptop`` or ``.top`` text, read line by line through the table."""
    (rows, unknown), build = _FILES[file]
    r = _Reader()
    if file == "ptop":  # is the file of the later forms (link lines with DELAY and LOSS)?
        tokens = (raw.split() for raw in lines)
        r.full_link = next((i for i, tok in enumerate(tokens, 1) if len(tok) >= 7
                            and tok[0] == "link"), 0)  # fmt: skip
    last = 0
    for lineno, raw in enumerate(lines, 1):
        tok = raw.split()
        # split on white space as Emulab's parser splits: '#' is an ordinary character
        # (link0#2 is a name); only a line whose first token starts with '#' is skipped as
        # a comment (Emulab refuses such a line; files written by hand carry them)
        if not tok or tok[0][0] == "#":
            continue
        last = lineno
        row = rows.get(tok[0])
        if row is not None:
            low, high, n, converters, handler, usage, fast = row
            if low <= len(tok) <= high and fast is not None and fast(r, tok, lineno):
                continue  # a plain line, read and checked by its fast reader
        line = _Line(source, lineno, raw)
        if row is None:
            raise line.fail(unknown)
        if not low <= len(tok) <= high:
            raise line.fail(usage)
        values = tok[1 : n + 1]
        for i, convert in converters:  # (name fields are kept as written)
            values[i] = convert(values[i], line, r)
        handler(r, line, values, tok[n + 1 :])
    try:
        return build(r)
    except (ValueError, TypeError) as exc:
        where = f"{source}:{last}" if last else source
        raise InstanceError(f"{where}: {exc}") from None


# -------------------------------------------------------------------------------- ptop


def parse_ptop(text: str, source: str = "<ptop>") -> PhysicalTopology:
    """Parse the text of a ``.ptop`` file (see the module docstring).

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
        return _parse(text, source, "ptop")
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    with _recent_lock:
        hit = _recent.get(key)
        if hit is not None:
            _recent.move_to_end(key)
            return hit
    topo = _parse(text, source, "ptop")
    with _recent_lock:
        _recent[key] = topo
        while len(_recent) > READ_CACHE_SIZE:
            _recent.popitem(last=False)
    return topo


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
        _line_memo.clear()


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


# --------------------------------------------------------------------------------- top


def parse_top(text: str, source: str = "<top>") -> VirtualTopology:
    """Parse the text of a ``.top`` file (see the module docstring).

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
    return _parse(text, source, "top")


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


# ------------------------------------------------------------------------- dict / JSON


def _jnum(x: Optional[float]) -> Any:
    if x is None:
        return None
    return "*" if math.isinf(x) else num(x)


def _unjnum(x: Any) -> Any:
    return math.inf if x == "*" else x


def ptop_to_dict(ptop: PhysicalTopology) -> dict:
    """A JSON-ready dictionary of a testbed (``"*"`` for unlimited slots).

    Parameters
    ----------
    ptop : PhysicalTopology
        The testbed.

    Returns
    -------
    dict
        ``nodes``, ``links``, ``type_limits`` and ``policies``.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> data = tb.ptop_to_dict(ptop)
    >>> [n["name"] for n in data["nodes"]], data["links"][0]["bw"]
    (['sw', 'a', 'b'], 100)
    """
    return {
        "nodes": [{"name": p.name, "types": {t: _jnum(n) for t, n in p.types.items()},
                   "static": {t: _jnum(n) for t, n in p.static.items()},
                   "features": {k: _jnum(w) for k, w in p.features.items()},
                   "flags": dict(p.flags)} for p in ptop.nodes.values()],
        "links": [{"name": lk.name, "a": lk.a, "b": lk.b, "bw": _jnum(lk.bw),
                   "delay": _jnum(lk.delay), "loss": _jnum(lk.loss), "types": list(lk.types),
                   "a_iface": lk.a_iface, "b_iface": lk.b_iface, "slots": lk.slots}
                  for lk in ptop.links.values()],
        "type_limits": dict(ptop.type_limits),
        "policies": {k: [kind, x] for k, (kind, x) in ptop.policies.items()},
    }  # fmt: skip


class _Star(Str):
    """The string ``"*"`` (unlimited) where a number may also stand."""

    def __init__(self) -> None:
        super().__init__(["*"])
        self.expected = "a finite number or '*'"


#: A number, or ``"*"`` for unlimited (what :func:`_jnum` writes).
_NUM_OR_STAR = OneOf(((int, float), Num()), (str, _Star()))
_NAME = Str()
#: The testbed object of the JSON formats (strict: unknown keys and wrong types are errors).
PTOP_SCHEMA = Obj(
    {
        "nodes": (ListOf(Obj({
            "name": (_NAME, True),
            "types": (MapOf(_NUM_OR_STAR), False),
            "static": (MapOf(_NUM_OR_STAR), False),
            "features": (MapOf(_NUM_OR_STAR), False),
            "flags": (MapOf(Str()), False),
        })), True),
        "links": (ListOf(Obj({
            "name": (_NAME, True),
            "a": (_NAME, True),
            "b": (_NAME, True),
            "bw": (_NUM_OR_STAR, True),
            "delay": (_NUM_OR_STAR, False),
            "loss": (_NUM_OR_STAR, False),
            "types": (ListOf(Str()), False),
            "a_iface": (Str(), False),
            "b_iface": (Str(), False),
            "slots": (OneOf((int, Int(0)), (type(None), AnyValue())), False),
        })), True),
        "type_limits": (MapOf(Int(0)), False),
        "policies": (MapOf(TupleOf(Str(["limit", "disallow"]),
                                   OneOf(((int, float), Num(0)), (type(None), AnyValue())))),
                     False),
    }
)  # fmt: skip
#: The experiment object of the JSON formats.
TOP_SCHEMA = Obj(
    {
        "nodes": (ListOf(Obj({
            "name": (_NAME, True),
            "type": (Str(), True),
            "slots": (_NUM_OR_STAR, False),
            "desires": (MapOf(_NUM_OR_STAR), False),
            "flags": (MapOf(Str()), False),
        })), True),
        "links": (ListOf(Obj({
            "name": (_NAME, True),
            "a": (_NAME, True),
            "b": (_NAME, True),
            "bw": (OneOf(((int, float), Num()), (str, _Star()), (type(None), AnyValue())),
                   False),
            "delay": (_NUM_OR_STAR, False),
            "loss": (_NUM_OR_STAR, False),
            "type": (OneOf((str, Str()), (type(None), AnyValue())), False),
            "flags": (ListOf(Str(LINK_FLAGS)), False),
            "options": (MapOf(Str()), False),
        })), True),
        "vclasses": (MapOf(TupleOf(_NUM_OR_STAR, ListOf(Str(), min_length=1))), False),
        "fixed": (MapOf(Str()), False),
        "hints": (MapOf(Str()), False),
    }
)  # fmt: skip
#: A ``coalloc.testbed.instance`` file.
INSTANCE_SCHEMA = Obj(
    {
        "format": (AnyValue(), False),
        "version": (AnyValue(), False),
        "top": (TOP_SCHEMA, True),
        "ptop": (PTOP_SCHEMA, True),
        "metadata": (AnyValue(), False),
    }
)


def _unique(items: list, key: str, path: str, source: str) -> None:
    """No two items of a checked list share ``item[key]`` (names, flags)."""
    first: Dict[Any, int] = {}
    for i, item in enumerate(items):
        value = item[key] if key else item
        if value in first:
            where = f"{path}[{i}].{key}" if key else f"{path}[{i}]"
            raise InstanceError(f"{source}: {where}: {value!r} repeats {path}[{first[value]}]")
        first[value] = i


def _ends(data: Any, at: str, source: str) -> None:
    """Every link of a checked topology joins two different nodes that it lists."""
    names = {d["name"] for d in data["nodes"]}
    for i, d in enumerate(data["links"]):
        for end in ("a", "b"):
            if d[end] not in names:
                raise InstanceError(
                    f"{source}: {at}links[{i}].{end}: expected the name of a node of "
                    f"{at}nodes, got {d[end]!r}"
                )
        if d["a"] == d["b"]:
            raise InstanceError(f"{source}: {at}links[{i}].b: the link joins {d['a']!r} to itself")


def _checked_topology(data: Any, schema: Obj, source: str, root: str, link_list: str) -> str:
    """Check a topology object of either side against its schema, then what a schema does
    not say: unique node and link names, links joining two different listed nodes, no
    repeats in each link's ``link_list`` (``types`` or ``flags``). Returns the field-path
    prefix (``"ptop."``, ``"top."`` or ``""``)."""
    check(data, schema, source, root=root)
    at = f"{root}." if root else ""
    _unique(data["nodes"], "name", f"{at}nodes", source)
    _unique(data["links"], "name", f"{at}links", source)
    _ends(data, at, source)
    for i, d in enumerate(data["links"]):
        _unique(d.get(link_list, []), "", f"{at}links[{i}].{link_list}", source)
    return at


def _model(source: str, what: str, factory, *args, **kwargs):
    try:
        return factory(*args, **kwargs)
    except InstanceError:
        raise
    except (TypeError, ValueError) as exc:
        raise InstanceError(f"{source}: {what}: {exc}") from None


def ptop_from_dict(data: Any, *, source: str = "<dict>", root: str = "") -> PhysicalTopology:
    """The testbed of :func:`ptop_to_dict`'s dictionary.

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: <what was expected>"`` for unknown keys, wrong types,
        repeated names and contradictions.
    """
    at = _checked_topology(data, PTOP_SCHEMA, source, root, "types")
    for k, (kind, x) in data.get("policies", {}).items():
        if (kind == "limit") != (x is not None):
            need = "a number" if kind == "limit" else "null"
            raise InstanceError(f"{source}: {at}policies.{k}[1]: a {kind!r} policy takes {need}")
    nodes = [_model(source, f"{at}nodes[{i}]", PNode, d["name"],
                    {t: _unjnum(n) for t, n in d.get("types", {}).items()},
                    {t: _unjnum(n) for t, n in d.get("static", {}).items()},
                    {k: _unjnum(w) for k, w in d.get("features", {}).items()},
                    d.get("flags", {})) for i, d in enumerate(data["nodes"])]  # fmt: skip
    links = [_model(source, f"{at}links[{i}]", PLink, d["name"], d["a"], d["b"],
                    _unjnum(d["bw"]), _unjnum(d.get("delay", 0)), _unjnum(d.get("loss", 0)),
                    tuple(d.get("types", ())), d.get("a_iface", ""), d.get("b_iface", ""),
                    d.get("slots")) for i, d in enumerate(data["links"])]  # fmt: skip
    pol = {k: (v[0], v[1]) for k, v in data.get("policies", {}).items()}
    return _model(source, root or "ptop", PhysicalTopology, nodes, links,
                  type_limits=data.get("type_limits", {}), policies=pol)  # fmt: skip


def top_to_dict(top: VirtualTopology) -> dict:
    """A JSON-ready dictionary of an experiment (``bw: null`` for ``*``).

    Parameters
    ----------
    top : VirtualTopology
        The experiment.

    Returns
    -------
    dict
        ``nodes``, ``links``, ``vclasses``, ``fixed`` and ``hints``.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> tb.top_to_dict(top)["links"][0]["name"]
    'l'
    """
    return {
        "nodes": [{"name": v.name, "type": v.type, "slots": _jnum(v.slots),
                   "desires": {k: _jnum(w) for k, w in v.desires.items()},
                   "flags": dict(v.flags)} for v in top.nodes.values()],
        "links": [{"name": lk.name, "a": lk.a, "b": lk.b, "bw": _jnum(lk.bw),
                   "delay": _jnum(lk.delay), "loss": _jnum(lk.loss), "type": lk.type,
                   "flags": sorted(lk.flags), "options": dict(lk.options)}
                  for lk in top.links.values()],
        "vclasses": {k: [_jnum(w), list(t)] for k, (w, t) in top.vclasses.items()},
        "fixed": dict(top.fixed),
        "hints": dict(top.hints),
    }  # fmt: skip


def top_from_dict(data: Any, *, source: str = "<dict>", root: str = "") -> VirtualTopology:
    """The experiment of :func:`top_to_dict`'s dictionary.

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: <what was expected>"`` for unknown keys, wrong types,
        repeated names and contradictions.
    """
    at = _checked_topology(data, TOP_SCHEMA, source, root, "flags")
    for k, (_, types) in data.get("vclasses", {}).items():
        _unique(types, "", f"{at}vclasses.{k}[1]", source)
    nodes = [_model(source, f"{at}nodes[{i}]", VNode, d["name"], d["type"],
                    _unjnum(d.get("slots", 1)),
                    {k: _unjnum(w) for k, w in d.get("desires", {}).items()},
                    d.get("flags", {})) for i, d in enumerate(data["nodes"])]  # fmt: skip
    links = [_model(source, f"{at}links[{i}]", VLink, d["name"], d["a"], d["b"],
                    _unjnum(d.get("bw")), _unjnum(d.get("delay", 0)), _unjnum(d.get("loss", 0)),
                    d.get("type"), frozenset(d.get("flags", ())), d.get("options", {}))
             for i, d in enumerate(data["links"])]  # fmt: skip
    vc = {k: (_unjnum(v[0]), tuple(v[1])) for k, v in data.get("vclasses", {}).items()}
    return _model(source, root or "top", VirtualTopology, nodes, links, vclasses=vc,
                  fixed=data.get("fixed", {}), hints=data.get("hints", {}))  # fmt: skip


def instance_from_dict(data: Any, *, source: str = "<dict>"):
    """``(top, ptop)`` from a parsed ``coalloc.testbed.instance`` document.

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: <what was expected>"``.
    """
    check_envelope(data, INSTANCE_FORMAT, 1, source)
    check(data, INSTANCE_SCHEMA, source)
    return (top_from_dict(data["top"], source=source, root="top"),
            ptop_from_dict(data["ptop"], source=source, root="ptop"))  # fmt: skip


def write_instance(dst: Any, top: VirtualTopology, ptop: PhysicalTopology,
                   metadata: Optional[dict] = None) -> None:  # fmt: skip
    """Write ``(top, ptop)`` as one ``coalloc.testbed.instance`` JSON file.

    Parameters
    ----------
    dst : str, path-like or text stream
        Where to write.
    top : VirtualTopology
        The experiment.
    ptop : PhysicalTopology
        The testbed.
    metadata : dict, optional
        Free-form information stored with the instance.

    Examples
    --------
    >>> import io
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> f = io.StringIO()
    >>> tb.write_instance(f, top, ptop)
    >>> _ = f.seek(0)
    >>> tb.read_instance(f)
    (VirtualTopology(2 nodes, 1 links), PhysicalTopology(3 nodes, 1 switches, 2 links))
    """
    doc = {"format": INSTANCE_FORMAT, "version": 1, "top": top_to_dict(top),
           "ptop": ptop_to_dict(ptop)}  # fmt: skip
    if metadata:
        doc["metadata"] = metadata
    dump_json(doc, dst)


def read_instance(src: Any):
    """``(top, ptop)`` from a ``coalloc.testbed.instance`` JSON file.

    Parameters
    ----------
    src : str, path-like or text stream
        The file.

    Returns
    -------
    top : VirtualTopology
        The experiment.
    ptop : PhysicalTopology
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
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> f = io.StringIO()
    >>> tb.write_instance(f, top, ptop)
    >>> _ = f.seek(0)
    >>> tb.assign(*tb.read_instance(f)).mapping
    {'x': 'a', 'y': 'b'}
    """
    data, name = load_json(src)
    return instance_from_dict(data, source=name)


# ---------------------------------------------------------------------------- networkx


def _to_networkx(topo: Any, graph_attrs: dict, node_attrs, link_attrs):
    """A ``networkx.MultiGraph`` of either side: ``graph_attrs`` on the graph, each node
    with ``node_attrs(node)``, one edge per link keyed by its name with its bandwidth,
    delay, loss, then ``link_attrs(link)`` and ``a`` (which end is the source)."""
    import networkx as nx

    g = nx.MultiGraph(**graph_attrs)
    for v in topo.nodes.values():
        g.add_node(v.name, **node_attrs(v))
    for lk in topo.links.values():
        g.add_edge(lk.a, lk.b, key=lk.name, bw=lk.bw, delay=lk.delay, loss=lk.loss,
                   **link_attrs(lk), a=lk.a)  # fmt: skip
    return g


def _edges(graph: Any):
    """``(name, a, b, attributes)`` of each edge of a graph of either side: the edge's key
    where it is a string (else ``link<i>``), its ends in the order ``a`` records."""
    edges = graph.edges(keys=True, data=True) if graph.is_multigraph() else (
        (u, v, None, d) for u, v, d in graph.edges(data=True))  # fmt: skip
    for i, (u, v, key, d) in enumerate(edges):
        a, b = (str(u), str(v)) if d.get("a", u) == u else (str(v), str(u))
        yield (str(key) if isinstance(key, str) else f"link{i}"), a, b, d


def ptop_to_networkx(ptop: PhysicalTopology):
    """A ``networkx.MultiGraph``: node attributes ``types, static, features, flags``; one
    edge per link keyed by its name with ``bw, delay, loss, types, a_iface, b_iface``;
    graph attributes ``type_limits`` and ``policies``.

    Parameters
    ----------
    ptop : PhysicalTopology
        The testbed.

    Returns
    -------
    networkx.MultiGraph
        The testbed as a graph.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> g = tb.ptop_to_networkx(ptop)
    >>> sorted(g.nodes), g.number_of_edges(), g.nodes["sw"]["types"]
    (['a', 'b', 'sw'], 2, {'switch': 1.0})
    """
    return _to_networkx(
        ptop,
        {"type_limits": dict(ptop.type_limits), "policies": dict(ptop.policies)},
        lambda p: {"types": dict(p.types), "static": dict(p.static),
                   "features": dict(p.features), "flags": dict(p.flags)},
        lambda lk: {"types": list(lk.types), "a_iface": lk.a_iface, "b_iface": lk.b_iface,
                    "slots": lk.slots},
    )  # fmt: skip


def ptop_from_networkx(graph: Any) -> PhysicalTopology:
    """The testbed of a networkx graph laid out as :func:`ptop_to_networkx` writes it
    (plain graphs work too: missing ``types`` default to ``{"pc": 1}``, edge names to
    ``link<i>``, bandwidth to 100000).

    Parameters
    ----------
    graph : networkx.Graph or networkx.MultiGraph
        The testbed's graph.

    Returns
    -------
    PhysicalTopology
        The testbed.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nnode b pc:1\\n"
    ...                      "link la a sw 100 0 0\\nlink lb b sw 100 0 0")
    >>> tb.ptop_from_networkx(tb.ptop_to_networkx(ptop))
    PhysicalTopology(3 nodes, 1 switches, 2 links)
    """
    nodes = [PNode(str(n), d.get("types", {"pc": 1}), d.get("static", {}),
                   d.get("features", {}), d.get("flags", {}))
             for n, d in graph.nodes(data=True)]  # fmt: skip
    links = [PLink(name, a, b, d.get("bw", 100000), d.get("delay", 0), d.get("loss", 0),
                   tuple(d.get("types", ())), d.get("a_iface", ""), d.get("b_iface", ""),
                   d.get("slots")) for name, a, b, d in _edges(graph)]  # fmt: skip
    return PhysicalTopology(nodes, links, type_limits=graph.graph.get("type_limits", {}),
                            policies=graph.graph.get("policies", {}))  # fmt: skip


def top_to_networkx(top: VirtualTopology):
    """A ``networkx.MultiGraph`` of an experiment (node ``type, slots, desires, flags``;
    edges keyed by link name with ``bw, delay, loss, type, flags, options``; graph
    attributes ``vclasses, fixed, hints``).

    Parameters
    ----------
    top : VirtualTopology
        The experiment.

    Returns
    -------
    networkx.MultiGraph
        The experiment as a graph.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> top = tb.parse_top("node x pc\\nnode y pc\\nlink l x y 100 0 0")
    >>> g = tb.top_to_networkx(top)
    >>> sorted(g.nodes), list(g.edges(keys=True))
    (['x', 'y'], [('x', 'y', 'l')])
    """
    return _to_networkx(
        top,
        {"vclasses": dict(top.vclasses), "fixed": dict(top.fixed), "hints": dict(top.hints)},
        lambda v: {"type": v.type, "slots": v.slots, "desires": dict(v.desires),
                   "flags": dict(v.flags)},
        lambda lk: {"type": lk.type, "flags": sorted(lk.flags), "options": dict(lk.options)},
    )  # fmt: skip


def top_from_networkx(graph: Any) -> VirtualTopology:
    """The experiment of a networkx graph laid out as :func:`top_to_networkx` writes it
    (plain graphs work: type ``pc``, link names ``link<i>``, bandwidth 100000).

    Parameters
    ----------
    graph : networkx.Graph or networkx.MultiGraph
        The experiment's graph.

    Returns
    -------
    VirtualTopology
        The experiment.

    Examples
    --------
    >>> import networkx as nx
    >>> import coalloc.testbed as tb
    >>> tb.top_from_networkx(nx.path_graph(3))
    VirtualTopology(3 nodes, 2 links)
    """
    nodes = [VNode(str(n), d.get("type", "pc"), d.get("slots", 1), d.get("desires", {}),
                   d.get("flags", {})) for n, d in graph.nodes(data=True)]  # fmt: skip
    links = [VLink(name, a, b, d.get("bw", 100000), d.get("delay", 0), d.get("loss", 0),
                   d.get("type"), frozenset(d.get("flags", ())), d.get("options", {}))
             for name, a, b, d in _edges(graph)]  # fmt: skip
    return VirtualTopology(nodes, links, vclasses=graph.graph.get("vclasses", {}),
                           fixed=graph.graph.get("fixed", {}),
                           hints=graph.graph.get("hints", {}))  # fmt: skip


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
