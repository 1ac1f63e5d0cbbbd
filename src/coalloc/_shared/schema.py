"""Strict checking of parsed JSON documents: one helper for every family's file formats.

A schema is built from a few node types (:class:`Obj`, :class:`ListOf`, :class:`Num`,
:class:`Int`, :class:`Bool`, :class:`Str`, :class:`MapOf`, :class:`OneOf`, :class:`AnyValue`)
and applied with :func:`check`. Every mistake becomes one :class:`InstanceError` naming the
file, the field path (``request.bandwidth.edges[3][1]``) and what was expected:

* unknown keys of an object (a misspelt ``"bandwith"`` is not silently ignored),
* wrong types (the string ``"false"`` where a boolean belongs, ``true`` where a number
  belongs: JSON booleans are never numbers),
* numbers that are not finite or outside their range (integers checked before any
  conversion, so nothing wraps),
* lists of the wrong length.

The checker only reads the document: it never converts or modifies it.

:func:`to_json_schema` turns a schema into a JSON Schema document (draft 2020-12): the
package's published schemas (``coalloc.schemas``) are generated from the same definitions
the readers check with, so the two cannot drift. One difference is inherent to JSON Schema,
whose data model does not tell ``2`` from ``2.0``: where an integer belongs the checker
refuses ``2.0`` (unless the field takes ``whole_floats``) and a JSON Schema validator
accepts it.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple

from .jsonio import InstanceError

__all__ = [
    "Spec",
    "Obj",
    "ListOf",
    "MapOf",
    "TupleOf",
    "OneOf",
    "Num",
    "Int",
    "Bool",
    "Str",
    "AnyValue",
    "check",
    "to_json_schema",
    "JSON_SCHEMA_DIALECT",
    "INT64_MAX",
]

#: Largest integer any family accepts in a file (kernels use signed 64-bit integers).
INT64_MAX = 2**63 - 1


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        text = value if len(value) <= 20 else value[:17] + "..."
        return f"the string {text!r}"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


#: The longest key a message prints whole: a longer one (a damaged file can hold a key of
#: kilobytes) is cut to this many characters, ``...`` last, so that the message stays one
#: short line.
KEY_SHOWN = 60


def shown_key(key: Any) -> str:
    """``key`` as a message prints it: whole up to :data:`KEY_SHOWN` characters, else cut.

    Examples
    --------
    >>> shown_key("cores")
    'cores'
    >>> len(shown_key("x" * 5000))
    60
    """
    text = str(key)
    return text if len(text) <= KEY_SHOWN else text[: KEY_SHOWN - 3] + "..."


def join_path(path: str, key: Any) -> str:
    r"""``path`` and ``key`` as a field path in a message: ``a.b``, ``a[3]``, or ``a['x\ny']``
    for a key that would not print on one line (a key longer than :data:`KEY_SHOWN` is cut).

    Examples
    --------
    >>> join_path("request.total", "cores")
    'request.total.cores'
    >>> print(join_path("request.total", "a\nb"))
    request.total['a\nb']
    """
    if isinstance(key, int):
        return f"{path}[{key}]"
    key = shown_key(key)
    if not str(key).isprintable():  # a newline or control character: quoted, one line
        return f"{path}[{key!r}]"
    return f"{path}.{key}" if path else str(key)


class Spec:
    """A node of a schema: :meth:`validate` raises :class:`_Mismatch` on a mistake."""

    expected = "a value"

    def validate(self, value: Any, path: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def fail(self, value: Any, path: str, expected: Optional[str] = None) -> None:
        raise _Mismatch(path, f"expected {expected or self.expected}, got {_kind(value)}")


class _Mismatch(Exception):
    def __init__(self, path: str, text: str) -> None:
        super().__init__(path, text)
        self.path, self.text = path, text


class AnyValue(Spec):
    """Anything (free-form fields such as ``metadata``)."""

    expected = "any value"

    def validate(self, value: Any, path: str) -> None:
        return None


class Bool(Spec):
    """A JSON boolean (``true``/``false``; never a string or a number)."""

    expected = "true or false"

    def validate(self, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            self.fail(value, path)


class Str(Spec):
    """A string, optionally one of ``choices``."""

    def __init__(self, choices: Optional[Iterable[str]] = None) -> None:
        self.choices = None if choices is None else tuple(choices)
        self.expected = (
            "a string" if self.choices is None
            else "one of " + ", ".join(repr(c) for c in self.choices)
        )  # fmt: skip

    def validate(self, value: Any, path: str) -> None:
        if not isinstance(value, str) or (self.choices is not None and value not in self.choices):
            self.fail(value, path)


class Num(Spec):
    """A finite JSON number (integers included, booleans never) in ``[lo, hi]``."""

    def __init__(self, lo: Optional[float] = None, hi: Optional[float] = None) -> None:
        self.lo, self.hi = lo, hi
        self.expected = "a finite number" + _range_text(lo, hi)

    def validate(self, value: Any, path: str) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(value, path)
        if isinstance(value, int):
            ok = _within(value, self.lo, self.hi) and abs(value) <= sys.float_info.max
        else:
            ok = math.isfinite(value) and _within(value, self.lo, self.hi)
        if not ok:
            self.fail(value, path)


class Int(Spec):
    """A JSON integer in ``[lo, hi]`` (default: a signed 64-bit integer).

    ``2.0`` is accepted as the integer 2 only when ``whole_floats`` is true.
    """

    def __init__(
        self, lo: Optional[int] = None, hi: Optional[int] = INT64_MAX, *, whole_floats: bool = False
    ) -> None:
        self.lo = -INT64_MAX - 1 if lo is None else lo
        self.hi = INT64_MAX if hi is None else hi
        self.whole_floats = whole_floats
        self.expected = "an integer" + _range_text(self.lo, self.hi)

    def validate(self, value: Any, path: str) -> None:
        if isinstance(value, bool):
            self.fail(value, path)
        if isinstance(value, float) and self.whole_floats and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or not self.lo <= value <= self.hi:
            self.fail(value, path)


class ListOf(Spec):
    """A list whose items all match ``item``, with an optional exact or bounded length."""

    def __init__(
        self,
        item: Spec,
        *,
        length: Optional[int] = None,
        min_length: int = 0,
        max_length: Optional[int] = None,
    ) -> None:
        self.item, self.length = item, length
        self.min_length, self.max_length = min_length, max_length
        if length is not None:
            self.expected = f"a list of {length} ({item.expected})"
        else:
            self.expected = f"a list of {item.expected}"

    def validate(self, value: Any, path: str) -> None:
        if not isinstance(value, list):
            self.fail(value, path)
        n = len(value)
        if self.length is not None and n != self.length:
            self.fail(value, path)
        if n < self.min_length or (self.max_length is not None and n > self.max_length):
            hi = "" if self.max_length is None else f" and at most {self.max_length}"
            self.fail(value, path, f"a list of at least {self.min_length}{hi} items")
        for i, item in enumerate(value):
            self.item.validate(item, f"{path}[{i}]")


class TupleOf(Spec):
    """A fixed-length list whose items match ``items`` one by one (``[i, k, bandwidth]``)."""

    def __init__(self, *items: Spec) -> None:
        self.items = items
        self.expected = "[" + ", ".join(spec.expected for spec in items) + "]"

    def validate(self, value: Any, path: str) -> None:
        if not isinstance(value, list) or len(value) != len(self.items):
            self.fail(value, path)
        for i, (item, spec) in enumerate(zip(value, self.items)):
            spec.validate(item, f"{path}[{i}]")


class MapOf(Spec):
    """An object with any string keys (names chosen by the user) whose values match ``value``."""

    def __init__(self, value: Spec) -> None:
        self.value = value
        self.expected = f"an object of {value.expected}"

    def validate(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.fail(value, path)
        for key, item in value.items():
            self.value.validate(item, join_path(path, key))


class Obj(Spec):
    """An object with known keys: ``fields`` maps each key to ``(spec, required)``.

    Keys not in ``fields`` are errors unless ``extra`` is true; the message lists the keys
    allowed, so a misspelt key is easy to spot.
    """

    def __init__(self, fields: Mapping[str, Tuple[Spec, bool]], *, extra: bool = False) -> None:
        self.fields: Dict[str, Tuple[Spec, bool]] = dict(fields)
        self.extra = extra
        self.expected = "an object"

    def validate(self, value: Any, path: str) -> None:
        if not isinstance(value, dict):
            self.fail(value, path)
        if not self.extra:
            unknown = [k for k in value if k not in self.fields]
            if unknown:
                raise _Mismatch(
                    join_path(path, unknown[0]),
                    f"unknown key {shown_key(unknown[0])!r} "
                    f"(allowed here: {', '.join(self.fields)})",
                )
        for key, (spec, required) in self.fields.items():
            if key in value:
                spec.validate(value[key], join_path(path, key))
            elif required:
                raise _Mismatch(join_path(path, key), "missing (required)")


class OneOf(Spec):
    """The first of ``options`` whose top-level type matches; its errors are reported."""

    def __init__(self, *options: Tuple[type, Spec]) -> None:
        self.options: Sequence[Tuple[type, Spec]] = options
        self.expected = " or ".join(spec.expected for _, spec in options)

    def validate(self, value: Any, path: str) -> None:
        for kind, spec in self.options:
            if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
                spec.validate(value, path)
                return
        self.fail(value, path)


def _within(value: float, lo: Optional[float], hi: Optional[float]) -> bool:
    return (lo is None or value >= lo) and (hi is None or value <= hi)


def _range_text(lo: Optional[float], hi: Optional[float]) -> str:
    if lo is not None and hi is not None and hi < 2**62:
        return f" in [{lo:g}, {hi:g}]"
    if lo is not None and lo == 0:
        return " >= 0"
    if lo is not None and lo > -(2**62):
        return f" >= {lo:g}"
    return ""


def check(data: Any, schema: Spec, source: str, *, root: str = "") -> None:
    """Check a parsed document against ``schema``.

    Parameters
    ----------
    data : object
        The parsed JSON (not modified).
    schema : Spec
        The document's schema.
    source : str
        The file name (or ``"<dict>"``), first in every message.
    root : str, optional
        Path prefix of ``data`` inside the document (for a checked sub-document).

    Raises
    ------
    InstanceError
        ``"<source>: <field path>: expected <what>, got <what it is>"``.

    Examples
    --------
    >>> from coalloc._shared.schema import Bool, Obj, check
    >>> try:
    ...     check({"symmetric": "false"}, Obj({"symmetric": (Bool(), True)}), "x.json")
    ... except ValueError as exc:
    ...     print(exc)
    x.json: symmetric: expected true or false, got the string 'false'
    """
    try:
        schema.validate(data, root)
    except _Mismatch as exc:
        where = exc.path or "(document)"
        raise InstanceError(f"{source}: {where}: {exc.text}") from None


#: The JSON Schema dialect :func:`to_json_schema` writes.
JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string",
               list: "array", dict: "object", type(None): "null"}  # fmt: skip


def _json_type(kind: Any) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = sorted({_JSON_TYPES[k] for k in kinds})
    if "integer" in names and "number" in names:
        names.remove("integer")  # a JSON Schema number includes the integers
    return names[0] if len(names) == 1 else names


def _node(spec: Spec, envelopes: Mapping[int, Tuple[str, int, bool]]) -> Dict[str, Any]:
    if isinstance(spec, AnyValue) or type(spec) is Spec:
        return {}
    if isinstance(spec, Bool):
        return {"type": "boolean"}
    if isinstance(spec, Str):
        out: Dict[str, Any] = {"type": "string"}
        if spec.choices is not None:
            out["enum"] = list(spec.choices)
        return out
    if isinstance(spec, Num):
        # finite: a JSON integer of 400 digits is a number to JSON Schema, not to the readers
        out = {"type": "number", "minimum": -sys.float_info.max, "maximum": sys.float_info.max}
        if spec.lo is not None:
            out["minimum"] = spec.lo
        if spec.hi is not None:
            out["maximum"] = spec.hi
        return out
    if isinstance(spec, Int):
        return {"type": "integer", "minimum": spec.lo, "maximum": spec.hi}
    if isinstance(spec, ListOf):
        out = {"type": "array", "items": _node(spec.item, envelopes)}
        lo, hi = spec.min_length, spec.max_length
        if spec.length is not None:
            lo, hi = max(lo, spec.length), spec.length if hi is None else min(hi, spec.length)
        if lo:
            out["minItems"] = lo
        if hi is not None:
            out["maxItems"] = hi
        return out
    if isinstance(spec, TupleOf):
        n = len(spec.items)
        return {"type": "array", "prefixItems": [_node(s, envelopes) for s in spec.items],
                "items": False, "minItems": n}  # fmt: skip
    if isinstance(spec, MapOf):
        return {"type": "object", "additionalProperties": _node(spec.value, envelopes)}
    if isinstance(spec, Obj):
        props = {key: _node(sub, envelopes) for key, (sub, _) in spec.fields.items()}
        required = [key for key, (_, req) in spec.fields.items() if req]
        envelope = envelopes.get(id(spec))
        if envelope is not None:
            fmt, version, fmt_required = envelope
            props["format"] = {"const": fmt} if fmt_required else {"enum": [fmt, None]}
            props["version"] = {"const": version}
            if fmt_required and "format" not in required:
                required.insert(0, "format")
        out = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        if not spec.extra:
            out["additionalProperties"] = False
        return out
    if isinstance(spec, OneOf):
        options = []
        for kind, sub in spec.options:
            node = _node(sub, envelopes)
            if "type" not in node:  # AnyValue under a kind: the kind alone decides
                node = {"type": _json_type(kind), **node}
            elif node["type"] != _json_type(kind):
                raise ValueError(f"OneOf option of kind {kind!r} holds {node['type']!r}")
            options.append(node)
        return {"anyOf": options}
    raise TypeError(f"to_json_schema: no JSON Schema for {type(spec).__name__}")


def to_json_schema(
    spec: Spec,
    *,
    title: Optional[str] = None,
    schema_id: Optional[str] = None,
    envelopes: Optional[Mapping[int, Tuple[str, int, bool]]] = None,
) -> Dict[str, Any]:
    """The JSON Schema (draft 2020-12) document accepting what :func:`check` accepts.

    Parameters
    ----------
    spec : Spec
        The schema the reader checks with.
    title, schema_id : str, optional
        The document's ``title`` and ``$id``.
    envelopes : mapping, optional
        ``id(obj_spec) -> (format, version, format_required)``: the objects whose
        ``format``/``version`` keys the reader checks with
        :func:`coalloc._shared.jsonio.check_envelope` (which :func:`check` leaves free);
        their keys become constants.

    Returns
    -------
    dict
        A JSON-ready document. It accepts a document exactly when :func:`check` (and the
        envelope check) does, except that JSON Schema reads ``2.0`` as an integer and has
        no bound for an integer over ``2**1023`` in a number field (which the checker
        refuses).

    Raises
    ------
    TypeError
        A node type that has no JSON Schema translation.

    Examples
    --------
    >>> from coalloc._shared.schema import Int, ListOf, Obj, to_json_schema
    >>> doc = to_json_schema(Obj({"sizes": (ListOf(Int(0, 9)), True)}))
    >>> doc["properties"]["sizes"]
    {'type': 'array', 'items': {'type': 'integer', 'minimum': 0, 'maximum': 9}}
    """
    out: Dict[str, Any] = {"$schema": JSON_SCHEMA_DIALECT}
    if schema_id is not None:
        out["$id"] = schema_id
    if title is not None:
        out["title"] = title
    out.update(_node(spec, envelopes or {}))
    return out
