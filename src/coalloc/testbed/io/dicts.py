"""The package's JSON of the testbed family: topology dictionaries, their schemas, and the
``coalloc.testbed.instance`` file (strict: unknown keys and wrong types are refused with
the file and the field path)."""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

from ..._shared.docs import filled
from ..._shared.jsonio import InstanceError, check_envelope, dump_json, load_json, num
from ..._shared.schema import AnyValue, Int, ListOf, MapOf, Num, Obj, OneOf, Str, TupleOf, check
from ..model import LINK_FLAGS, PhysicalTopology, PLink, PNode, VirtualTopology, VLink, VNode

__all__ = ["ptop_to_dict", "ptop_from_dict", "top_to_dict", "top_from_dict", "read_instance",
           "write_instance", "instance_from_dict", "INSTANCE_FORMAT", "INSTANCE_SCHEMA",
           "PTOP_SCHEMA", "TOP_SCHEMA"]  # fmt: skip

INSTANCE_FORMAT = "coalloc.testbed.instance"


def _jnum(x: Optional[float]) -> Any:
    if x is None:
        return None
    return "*" if math.isinf(x) else num(x)


def _unjnum(x: Any) -> Any:
    return math.inf if x == "*" else x


def _jmap(values: Any) -> dict:
    """A mapping of numbers as JSON (``"*"`` for unlimited)."""
    return {k: _jnum(x) for k, x in values.items()}


def _unjmap(d: dict, key: str) -> dict:
    """The mapping ``d[key]`` (empty when absent) read back from JSON."""
    return {k: _unjnum(x) for k, x in d.get(key, {}).items()}


def _link_dict(lk: Any, **side: Any) -> dict:
    """A link of either side as JSON: the fields every link has, then ``side``'s own."""
    return {"name": lk.name, "a": lk.a, "b": lk.b, "bw": _jnum(lk.bw), "delay": _jnum(lk.delay),
            "loss": _jnum(lk.loss), **side}  # fmt: skip


def _link_fields(d: dict) -> tuple:
    """``(name, a, b, bw, delay, loss)`` of a checked link dictionary of either side."""
    return (d["name"], d["a"], d["b"], _unjnum(d.get("bw")), _unjnum(d.get("delay", 0)),
            _unjnum(d.get("loss", 0)))  # fmt: skip


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
        "nodes": [{"name": p.name, "types": _jmap(p.types), "static": _jmap(p.static),
                   "features": _jmap(p.features), "flags": dict(p.flags)}
                  for p in ptop.nodes.values()],
        "links": [_link_dict(lk, types=list(lk.types), a_iface=lk.a_iface,
                             b_iface=lk.b_iface, slots=lk.slots)
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
    nodes = [_model(source, f"{at}nodes[{i}]", PNode, d["name"], _unjmap(d, "types"),
                    _unjmap(d, "static"), _unjmap(d, "features"), d.get("flags", {}))
             for i, d in enumerate(data["nodes"])]  # fmt: skip
    links = [_model(source, f"{at}links[{i}]", PLink, *_link_fields(d),
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
                   "desires": _jmap(v.desires), "flags": dict(v.flags)}
                  for v in top.nodes.values()],
        "links": [_link_dict(lk, type=lk.type, flags=sorted(lk.flags), options=dict(lk.options))
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
                    _unjnum(d.get("slots", 1)), _unjmap(d, "desires"), d.get("flags", {}))
             for i, d in enumerate(data["nodes"])]  # fmt: skip
    links = [_model(source, f"{at}links[{i}]", VLink, *_link_fields(d), d.get("type"),
                    frozenset(d.get("flags", ())), d.get("options", {}))
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


@filled
def write_instance(dst: Any, top: VirtualTopology, ptop: PhysicalTopology,
                   metadata: Optional[dict] = None) -> None:  # fmt: skip
    """Write ``(top, ptop)`` as one ``coalloc.testbed.instance`` JSON file.

    Parameters
    ----------
    dst : str, path-like or text stream
        Where to write.
    %(testbed_topologies)s
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


@filled
def read_instance(src: Any):
    """``(top, ptop)`` from a ``coalloc.testbed.instance`` JSON file.

    Parameters
    ----------
    src : str, path-like or text stream
        The file.

    Returns
    -------
    %(testbed_topologies)s

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
