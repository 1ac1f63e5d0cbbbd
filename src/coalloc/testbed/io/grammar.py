"""The grammar of Emulab's ``.ptop`` and ``.top`` files: one table, one reading loop.

Each row of the table (:data:`_LINE_KINDS`) is a line kind of one file kind: its keyword,
the usage the line must follow, its leading fields with their converters, how many tokens
it takes, and the handler that adds what the converted fields say to the file's
:class:`_Reader`. A converter or a handler refuses a token with :meth:`_Line.fail`; the
table keeps the order in which the fields are checked (and so which error a bad line gets).
The two file kinds share the reader, the fields and the loop (:func:`parse`); they differ
only in their rows and in what the reader builds at the end (:data:`_FILES`).

The loop has one fast path (:mod:`.fast`): a plain ``node`` or ``link`` line is read by its
text alone (remembered across ``.ptop`` texts), and the loop checks what depends on the
other lines; any other line, or a plain line out of place, goes through its table row.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..._shared.jsonio import InstanceError
from ..model import LINK_FLAGS, PhysicalTopology, PLink, PNode, VirtualTopology, VLink, VNode
from . import fast
from ._tokens import _build, _count, _cut, _Line, _link_name, _number, _pair, _tolerance

__all__ = ["parse", "MAX_MULTIPLICITY"]

#: The node flags of a ``.ptop`` (after the second ``-``), the ones Emulab's assign takes.
_PNODE_FLAGS = ("trivial_bw", "subnode_of", "unique")
#: The most links one older ``link NAME SRC DST BW MULTIPLICITY`` line may stand for.
MAX_MULTIPLICITY = 1000

_LINK_OPTIONS = ("fixsrciface", "fixdstiface")


class _Reader:
    """What the lines of one file have built so far (the two file kinds share it)."""

    __slots__ = ("nodes", "links", "names", "link_names", "limits", "policies", "vclasses",
                 "fixed", "hints", "lines")  # fmt: skip

    def __init__(self, lines: List[str] = ()) -> None:
        self.nodes: list = []
        self.links: list = []
        self.names: Dict[str, int] = {}  # node name -> the line defining it
        self.link_names: Dict[str, int] = {}
        self.limits: Dict[str, int] = {}
        self.policies: Dict[str, Tuple[str, Optional[float]]] = {}
        self.vclasses: Dict[str, Tuple[float, Tuple[str, ...]]] = {}
        self.fixed: Dict[str, str] = {}
        self.hints: Dict[str, str] = {}
        self.lines = lines

    def full_link(self) -> int:
        """The first line of a ``.ptop`` whose link line has DELAY and LOSS (0: none has):
        is the file of the later forms? (Asked only of a line in the older form.)"""
        tokens = (raw.split() for raw in self.lines)
        return next((i for i, tok in enumerate(tokens, 1) if len(tok) >= 7
                     and tok[0] == "link"), 0)  # fmt: skip

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
        full = r.full_link()
        if full:  # a file of the later forms: this line was cut after its DELAY
            raise line.fail(f"'DELAY LOSS TYPE' after the bandwidth as on line {full} "
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


@dataclass(frozen=True)
class _FileKind:
    """What the loop reads a file kind with: its rows by keyword (unpacked: min and max
    tokens, number of fields, converters, handler, usage), the refusal of an unknown
    keyword, the fast path's builders by keyword (:data:`.fast.PLAIN`), the memo of its
    plain lines (None: none kept), the node class, and what the reader builds at the end."""

    rows: Dict[str, tuple]
    unknown: str
    plain: Dict[str, Callable[[List[str]], Any]]
    memo: Optional[Dict[str, Any]]
    node_class: type
    build: Callable[[_Reader], Any]


def _kind(file: str, memo: Optional[dict], node_class: type, build) -> _FileKind:
    rows = {k.keyword: (k.min_tokens, k.max_tokens or math.inf, len(k.fields), k.converters,
                        k.handler, k.usage) for k in _LINE_KINDS if k.file == file}  # fmt: skip
    words = list(rows)
    unknown = f"a line starting with {', '.join(words[:-1])} or {words[-1]}"
    return _FileKind(rows, unknown, fast.PLAIN[file], memo, node_class, build)


#: The two file kinds: a ``.ptop``'s plain lines are remembered (a replay's free-testbed
#: texts repeat them), a ``.top``'s are not (each experiment is another text).
_FILES = {
    "ptop": _kind("ptop", fast._line_memo, PNode, lambda r: PhysicalTopology._from_reader(
        r.nodes, r.links, type_limits=r.limits, policies=r.policies)),
    "top": _kind("top", None, VNode, lambda r: VirtualTopology._from_reader(
        r.nodes, r.links, vclasses=r.vclasses, fixed=r.fixed, hints=r.hints)),
}  # fmt: skip
_NOTHING: Dict[str, Any] = {}


#: Control characters no ``.top``/``.ptop`` holds (white space ``\t \n \v \f \r`` aside).
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")


def parse(text: str, source: str, file: str) -> Any:
    """The topology of a ``.ptop`` or ``.top`` text (``file``), read line by line: a plain
    line by the fast path, any other through its table row (which reads it or refuses it).

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        Name used in error messages.
    file : {"ptop", "top"}
        The file kind.

    Returns
    -------
    PhysicalTopology or VirtualTopology
        The topology.

    Raises
    ------
    InstanceError
        On the first malformed line (file, line number, what was expected).
    """
    bad = _CONTROL.search(text) if isinstance(text, str) else None
    if bad is not None:  # a NUL ends a C string where Emulab reads: no name holds one
        lineno = text.count("\n", 0, bad.start()) + 1
        column = bad.start() - (text.rfind("\n", 0, bad.start()) + 1) + 1
        raw = text.splitlines()[lineno - 1] if text.splitlines() else text
        char = "a NUL byte" if bad.group() == "\0" else f"the control character {bad.group()!r}"
        raise _Line(source, lineno, raw).fail(f"printable text, not {char} (column {column})")
    kind = _FILES[file]
    rows, plain, node_class = kind.rows, kind.plain, kind.node_class
    memo = kind.memo
    remembered = (memo if memo is not None else _NOTHING).get
    lines = text.splitlines()
    r = _Reader(lines)
    names, taken, nodes, links = r.names, r.link_names, r.nodes, r.links
    fresh: list = []
    last = 0
    for lineno, raw in enumerate(lines, 1):
        obj = remembered(raw)
        tok = None
        if obj is None:
            tok = raw.split()
            # split on white space as Emulab's parser splits: '#' is an ordinary character
            # (link0#2 is a name); only a line whose first token starts with '#' is skipped
            # as a comment (Emulab refuses such a line; files written by hand carry them)
            if not tok or tok[0][0] == "#":
                continue
            builder = plain.get(tok[0])
            if builder is not None:
                obj = builder(tok)
                if obj is not None and memo is not None:
                    fresh.append((raw, obj))
        last = lineno
        if obj is not None:  # a plain line: is it right in its place?
            name = obj.name
            if obj.__class__ is node_class:
                if name not in names:
                    names[name] = lineno
                    nodes.append(obj)
                    continue
            elif name not in taken and obj.a in names and obj.b in names:
                taken[name] = lineno
                links.append(obj)
                continue
            if tok is None:
                tok = raw.split()
        # the general path: the line's table row reads it or refuses it
        line = _Line(source, lineno, raw)
        row = rows.get(tok[0])
        if row is None:
            raise line.fail(kind.unknown)
        low, high, n, converters, handler, usage = row
        if not low <= len(tok) <= high:
            raise line.fail(usage)
        values = tok[1 : n + 1]
        for i, convert in converters:  # (name fields are kept as written)
            values[i] = convert(values[i], line, r)
        handler(r, line, values, tok[n + 1 :])
    try:
        topo = kind.build(r)
    except (ValueError, TypeError) as exc:
        where = f"{source}:{last}" if last else source
        raise InstanceError(f"{where}: {exc}") from None
    if fresh:
        fast.remember(fresh)
    return topo
