"""The one fast path of the ``.ptop``/``.top`` reader: plain lines, read by their text alone.

Most lines of a testbed or an experiment are plain ``node`` and ``link`` lines. For each
such line a builder here checks the tokens as the line table's converters and handlers
would (and as the model's constructors would: names without white space, finite
non-negative ASCII numbers, a bandwidth in (0, MAX_BANDWIDTH], two different ends) and
builds the read-only object without checking it a second time. What depends on the other
lines (a repeated node or link name, an end not defined above) is checked by the reading
loop (:func:`.grammar.parse`) for every line, and a line a builder does not take (a
tolerance, a flag, an unusual number, any fault) goes through the table's general path,
which reads it or refuses it with its message: every value is checked once, and the
language read and the messages are the table's.

A plain line's object depends on its text only, so the ``.ptop`` objects are remembered
by the text of their line (:data:`_line_memo`): the free-testbed texts a replay or a
service writes for each experiment repeat most lines of the last one (the free nodes and
their links; only the trunks' residual bandwidths change), so such a text is read at a
dictionary look-up per line. Bounded: cleared when it holds :data:`LINE_MEMO_SIZE` lines.

This replaces four readers of one grammar (the table's per-line fast readers, a column
sweep of the ``.ptop`` link lines, a separate memo reader): the sweep was the fastest cold
reader by about 10 %, and the builders below take its tricks (one digit test for the three
numbers of a link, the object filled without its constructor), so that the one path is as
fast cold and as fast warm (``bench/testbed/read_speed.py``, ``bench/testbed/free_texts.py``).
"""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Optional

from ..model import LINK_FLAGS, MAX_BANDWIDTH, PLink, PNode, VLink, VNode
from ._tokens import _plain

__all__ = ["LINE_MEMO_SIZE", "PLAIN"]

_INF = math.inf
_NO_MAP = MappingProxyType({})
_FLAG_SET = frozenset(LINK_FLAGS)
_new = object.__new__

#: Plain ``node``/``link`` lines of the ``.ptop`` texts read lately -> the read-only
#: :class:`PNode` or :class:`PLink` each reads as (see the module docstring).
_line_memo: Dict[str, Any] = {}
LINE_MEMO_SIZE = 1 << 16


def _three(bw_t: str, delay_t: str, loss_t: str) -> Optional[tuple]:
    """BW DELAY LOSS as plain numbers (one digit test for the common case), or None."""
    digits = bw_t + delay_t + loss_t
    if digits.isdigit() and digits.isascii() and len(digits) < 300:
        return float(bw_t), float(delay_t), float(loss_t)
    bw, delay, loss = _plain(bw_t), _plain(delay_t), _plain(loss_t)
    if bw is None or delay is None or loss is None:
        return None
    return bw, delay, loss


def _ptop_link(tok: List[str]) -> Optional[PLink]:
    """``link NAME SRC[:mac] DST[:mac] BW DELAY LOSS [TYPE ...]`` with plain numbers."""
    if len(tok) < 7:
        return None
    name, src, dst, bw_t, delay_t, loss_t = tok[1:7]
    a, _, a_iface = src.partition(":")
    b, _, b_iface = dst.partition(":")
    nums = _three(bw_t, delay_t, loss_t)
    if a == b or nums is None or not 0.0 < nums[0] <= MAX_BANDWIDTH:
        return None
    link = _new(PLink)
    link.__dict__.update({"name": name, "a": a, "b": b, "bw": nums[0], "delay": nums[1],
                          "loss": nums[2], "types": tuple(tok[7:]), "a_iface": a_iface,
                          "b_iface": b_iface, "slots": None})  # fmt: skip
    return link


def _ptop_node(tok: List[str]) -> Optional[PNode]:
    """``node NAME TYPE:COUNT ... [- FEATURE:WEIGHT ...]`` (no flags) with plain numbers."""
    types: Dict[str, float] = {}
    static: Dict[str, float] = {}
    features: Dict[str, float] = {}
    part = 0
    for t in tok[2:]:
        if t == "-":
            if part:  # (flags: the general path)
                return None
            part = 1
            continue
        key, colon, value = t.rpartition(":")
        if part == 0:
            if not colon:
                return None
            x = _INF if value == "*" else _plain(value)
            table = types
            if key.startswith("*"):
                key, table = key[1:], static
            if x is None or not key:
                return None
            table[key] = x
        else:
            x = _INF if value == "*" else _plain(value)
            if x is None or not key:
                return None
            features[key] = x
    if not types and not static:
        return None
    node = _new(PNode)
    node.__dict__.update({"name": tok[1], "types": MappingProxyType(types),
                          "static": MappingProxyType(static),
                          "features": MappingProxyType(features), "flags": _NO_MAP})  # fmt: skip
    return node


def _top_node(tok: List[str]) -> Optional[VNode]:
    """``node NAME TYPE[:SLOTS] [DESIRE:WEIGHT ...]`` (no flags) with plain numbers."""
    if len(tok) < 3:
        return None
    vtype, colon, slots_t = tok[2].partition(":")
    slots = _plain(slots_t) if colon else 1.0
    if not vtype or slots is None:
        return None
    desires: Dict[str, float] = {}
    for t in tok[3:]:
        key, colon, value = t.rpartition(":")
        x = _INF if value == "*" else _plain(value)
        if not colon or not key or x is None or key == "subnode_of":
            return None
        desires[key] = x
    node = _new(VNode)
    node.__dict__.update({"name": tok[1], "type": vtype, "slots": slots,
                          "desires": MappingProxyType(desires), "flags": _NO_MAP})  # fmt: skip
    return node


def _top_link(tok: List[str]) -> Optional[VLink]:
    """``link NAME A B BW|* DELAY LOSS [TYPE] [nodelay|emulated|trivial_ok ...]`` with plain
    numbers (no tolerances, no ``fix*iface`` options)."""
    if len(tok) < 7:
        return None
    name, a_t, b_t, bw_t, delay_t, loss_t = tok[1:7]
    a, b = a_t.partition(":")[0], b_t.partition(":")[0]
    if a == b:
        return None
    if bw_t == "*":
        delay, loss = _plain(delay_t), _plain(loss_t)
        if delay is None or loss is None:
            return None
        bw = None
    else:
        nums = _three(bw_t, delay_t, loss_t)
        if nums is None or nums[0] > MAX_BANDWIDTH:
            return None
        bw, delay, loss = nums
    ltype = None
    flags = []
    for i, t in enumerate(tok[7:]):
        if t in _FLAG_SET:
            flags.append(t)
        elif i == 0 and ":" not in t:
            ltype = t
        else:
            return None
    if bw is None and flags:  # ('*' with emulated or trivial_ok: the table refuses it)
        return None
    link = _new(VLink)
    link.__dict__.update({"name": name, "a": a, "b": b, "bw": bw, "delay": delay,
                          "loss": loss, "type": ltype, "flags": frozenset(flags),
                          "options": _NO_MAP})  # fmt: skip
    return link


#: The builders of the plain lines, by file kind and keyword: ``builder(tokens) -> object``
#: or None (not plain: the line table reads the line).
PLAIN: Dict[str, Dict[str, Callable[[List[str]], Any]]] = {
    "ptop": {"node": _ptop_node, "link": _ptop_link},
    "top": {"node": _top_node, "link": _top_link},
}


def remember(fresh: list) -> None:
    """Remember the ``(line, object)`` pairs of a ``.ptop`` read without fault (bounded)."""
    if len(_line_memo) + len(fresh) > LINE_MEMO_SIZE:
        _line_memo.clear()
    _line_memo.update(fresh)
