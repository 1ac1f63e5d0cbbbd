"""The two inputs of testbed mapping, validated once: the physical and the virtual topology.

:class:`PhysicalTopology` is what an Emulab ``.ptop`` file describes (PCs with typed slots,
features, interfaces wired to switches, trunks between switches, type limits);
:class:`VirtualTopology` is what a ``.top`` file describes (typed virtual nodes with
desires, virtual links with bandwidth and flags, LAN nodes, ``fix-node``, ``node-hint``,
``make-vclass``). Both are immutable after construction: the constructors check every
reference and value, and keep their own copies.

Feature and desire names carry their Emulab prefix: none (ordinary: an unmet desire or an
unwanted feature costs its weight; a desire of weight >= 1 is a hard requirement), ``?+``
(additive: the desires of the virtual nodes on a physical node are summed and must not
exceed the feature's value), ``*&`` / ``*!`` (global features, parsed and kept; scored
like ordinary ones).

Why over 800 lines: one idea, the two validated topologies, their node and link records
and the checks of what is handed to them, with how they cross to worker processes (a
plain experiment pickles as rows and is rebuilt without re-running the checks: issue 41's
caller CPU, 220 -> 27 us per experiment). It passed 800 with those rows; the checks are
the part that could go to a module of their own.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Any, ClassVar, Dict, Iterable, Mapping, Optional, Tuple

__all__ = [
    "PNode",
    "PLink",
    "PhysicalTopology",
    "VNode",
    "VLink",
    "VirtualTopology",
    "LINK_FLAGS",
    "HARD_WEIGHT",
    "feature_kind",
]

#: Flags of a virtual link (``.top`` file, after the type).
LINK_FLAGS = ("nodelay", "emulated", "trivial_ok")
#: Desires (and vclasses) of at least this weight are hard constraints.
HARD_WEIGHT = 1.0
INF = math.inf
#: The largest bandwidth a link may have (kbit/s: 10**15 is an exabit per second); the
#: solvers keep sentinels above it.
MAX_BANDWIDTH = 1e15


def feature_kind(name: str) -> str:
    """``"additive"`` (``?+``), ``"global"`` (``*&``, ``*!``) or ``"local"``."""
    if name.startswith("?+"):
        return "additive"
    if name.startswith(("*&", "*!")):
        return "global"
    return "local"


def _name(value: Any, argname: str) -> str:
    # (value.split() == [value]: no white space, as str.isspace has it, and not empty)
    if not isinstance(value, str) or value.split() != [value]:
        raise ValueError(f"{argname} must be a non-empty name without spaces, got {value!r}")
    return value


def _weight_map(values: Any, argname: str) -> Mapping[str, float]:
    if values is None:
        return MappingProxyType({})
    if not isinstance(values, Mapping):
        raise TypeError(f"{argname} must be a mapping of name to weight, got "
                        f"{type(values).__name__}")  # fmt: skip
    out = {}
    for k, v in values.items():
        _name(k, f"{argname} key")
        try:
            w = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{argname}[{k!r}] must be a number, got {v!r}") from None
        if math.isnan(w):
            raise ValueError(f"{argname}[{k!r}] must not be NaN")
        out[k] = w
    return MappingProxyType(out)


def _nonneg(value: Any, argname: str, *, allow_inf: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):  # 10**400 does not fit a float
        raise ValueError(f"{argname} must be a number, got {value!r}") from None
    if math.isnan(x) or x < 0 or (math.isinf(x) and not allow_inf):
        raise ValueError(f"{argname} must be a finite non-negative number, got {value!r}")
    return x


def _bandwidth(value: Any, argname: str) -> float:
    x = _nonneg(value, argname)
    if x > MAX_BANDWIDTH:
        raise ValueError(f"{argname} must be at most {MAX_BANDWIDTH:g} (kbit/s), got {value!r}")
    return x


def _type_limit(value: Any, vtype: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"type limit of {vtype} must be a whole number, got {value!r}")
    x = _nonneg(value, f"type limit of {vtype}")
    if x > 2**53:  # the solvers hold limits as int64; more nodes than that cannot exist
        raise ValueError(f"type limit of {vtype} must be at most 2**53, got {value!r}")
    if x != int(x):
        raise ValueError(f"type limit of {vtype} must be a whole number, got {value!r}")
    return int(x)


def _policy(name: Any, spec: Any) -> Tuple[str, Optional[float]]:
    """``policy desire NAME disallow | limit X`` as ``("disallow", None)``/``("limit", X)``."""
    _name(name, "policy desire name")
    try:
        kind, x = spec
    except (TypeError, ValueError):
        raise ValueError(f"policy {name!r} must be ('disallow', None) or ('limit', X), "
                         f"got {spec!r}") from None  # fmt: skip
    if kind == "disallow" and x is None:
        return ("disallow", None)
    if kind == "limit":
        return ("limit", _nonneg(x, f"policy {name}: limit"))
    raise ValueError(f"policy {name!r} must be ('disallow', None) or ('limit', X), got {spec!r}")


def _checked(cls: type, *values: Any) -> Any:
    """A ``cls`` object (a frozen dataclass of this module) holding ``values``, its fields in
    order, built without running its checks again: for the ``.ptop``/``.top`` readers only,
    which have checked every value as the constructor would (names without white space,
    finite non-negative numbers, bandwidths at most :data:`MAX_BANDWIDTH`, read-only
    mappings of the right kinds) and so validate each value once."""
    obj = object.__new__(cls)
    obj.__dict__.update(zip(cls._FIELD_NAMES, values))
    return obj


class _Pickles:
    """Pickling for the models, whose read-only mappings (``MappingProxyType``) do not pickle
    by themselves: they travel as plain dicts and are made read-only again on arrival, so a
    model reaches a process worker (``solve_many(..., executor="processes")``) unchanged.
    Caches the solvers attach (names starting ``_tb_``) stay behind: a worker builds its own.
    """

    def __getstate__(self) -> dict:
        kept = {k: v for k, v in self.__dict__.items() if not k.startswith("_tb_")}
        proxies = sorted(k for k, v in kept.items() if isinstance(v, MappingProxyType))
        state = {k: (dict(v) if k in proxies else v) for k, v in kept.items()}
        return {"fields": state, "read_only": proxies}

    def __setstate__(self, state: dict) -> None:
        for k, v in state["fields"].items():
            object.__setattr__(self, k, MappingProxyType(v) if k in state["read_only"] else v)


# --------------------------------------------------------------- what the two halves share
#
# A testbed and an experiment are the same kind of object: named nodes (with flags as
# written), named links joining two different nodes with a bandwidth, a delay and a loss,
# and each node's links. _Node, _Link and _Topology hold that once; the physical and the
# virtual classes add what differs (types and features against a type and desires, link
# types against one type and flags, type limits and policies against vclasses and
# placements) and name their side in the messages.


class _Node:
    """A node's name and flags, checked the same way on both sides."""

    def _check_name(self) -> None:
        _name(self.name, "node name")

    def _seal_flags(self) -> None:
        if not isinstance(self.flags, Mapping):
            raise TypeError(f"node {self.name}: flags must be a mapping")
        object.__setattr__(self, "flags", MappingProxyType({str(k): str(v) for k, v in
                                                            self.flags.items()}))  # fmt: skip


@dataclass(frozen=True)
class _Link:
    """The fields every link has: its name, its ends, bandwidth, delay and loss.

    ``bw=None`` is allowed where the subclass says ``STAR_BW`` (a virtual ``*`` link).
    """

    STAR_BW: ClassVar[bool] = False

    name: str
    a: str
    b: str
    bw: Optional[float]
    delay: float = 0.0
    loss: float = 0.0

    def __post_init__(self) -> None:
        _name(self.name, "link name")
        _name(self.a, f"link {self.name}: source")
        _name(self.b, f"link {self.name}: destination")
        if self.bw is not None or not self.STAR_BW:
            object.__setattr__(self, "bw", _bandwidth(self.bw, f"link {self.name}: bandwidth"))
        object.__setattr__(self, "delay", _nonneg(self.delay, f"link {self.name}: delay"))
        object.__setattr__(self, "loss", _nonneg(self.loss, f"link {self.name}: loss"))


class _Topology(_Pickles):
    """Nodes and links by name, each link joining two different listed nodes, and each
    node's links in the order of the description (the base of both topologies).

    Subclasses name their ``NODE`` and ``LINK`` classes, their ``SIDE`` (``"physical"``
    or ``"virtual"``, in messages) and the attribute ``ADJ`` that holds each node's links.
    """

    NODE: ClassVar[type]
    LINK: ClassVar[type]
    SIDE: ClassVar[str]
    ADJ: ClassVar[str]

    def _index(self, nodes: Iterable[Any], links: Iterable[Any]) -> None:
        """``self.nodes`` and ``self.links`` (dicts until :meth:`_seal`), checked."""
        side, node_cls, link_cls = self.SIDE, self.NODE.__name__, self.LINK.__name__
        self.nodes = {}
        for n in nodes:
            if not isinstance(n, self.NODE):
                raise TypeError(f"nodes must hold {node_cls} objects, got {type(n).__name__}")
            if n.name in self.nodes:
                raise ValueError(f"duplicate {side} node {n.name!r}")
            self.nodes[n.name] = n
        self.links = {}
        for link in links:
            if not isinstance(link, self.LINK):
                raise TypeError(f"links must hold {link_cls} objects, got "
                                f"{type(link).__name__}")  # fmt: skip
            if link.name in self.links:
                raise ValueError(f"duplicate {side} link {link.name!r}")
            for end in (link.a, link.b):
                if end not in self.nodes:
                    raise ValueError(f"{side} link {link.name!r} names unknown node {end!r}")
            if link.a == link.b:
                raise ValueError(f"{side} link {link.name!r} joins {link.a!r} to itself")
            self.links[link.name] = link

    @classmethod
    def _from_reader(cls, nodes: list, links: list, **directives: Any) -> Any:
        """The topology of a ``.ptop``/``.top`` reader's nodes and links, which the reader
        has checked as :meth:`_index` checks them (unique node names, unique link names,
        link ends naming two different nodes defined before), so they are checked once;
        the directives (type limits, policies, vclasses, placements) are checked here."""
        obj = cls.__new__(cls)
        obj.nodes = {n.name: n for n in nodes}
        obj.links = {lk.name: lk for lk in links}
        obj._directives(**directives)
        obj._seal()
        return obj

    def _seal(self) -> None:
        """Each node's links, and the node and link tables made read-only."""
        adj: Dict[str, list] = {n: [] for n in self.nodes}
        for link in self.links.values():
            adj[link.a].append(link)
            adj[link.b].append(link)
        setattr(self, self.ADJ, adj)
        self.nodes = MappingProxyType(self.nodes)
        self.links = MappingProxyType(self.links)

    def _links_at(self, node: str) -> list:
        return list(getattr(self, self.ADJ)[node])


# ------------------------------------------------------------------------------- physical


@dataclass(frozen=True)
class PNode(_Node, _Pickles):
    """A physical node: a PC (or any host) or a switch.

    Parameters
    ----------
    name : str
        The node's name.
    types : mapping of str to float
        Type name -> slots (``math.inf`` for ``*``). A type written ``*name`` in the file is
        static: pass it in ``static``.
    static : mapping of str to float
        Static types (always available, whatever the node currently is), e.g. ``{"lan": inf}``.
    features : mapping of str to float
        Feature name (with its prefix) -> weight (additive features: the capacity).
    flags : mapping of str to str
        ``trivial_bw``, ``subnode_of``, ``unique`` ... as written.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> tb.PNode("sw", {"switch": 1}).is_switch, tb.PNode("a", {"pc": 1}).types["pc"]
    (True, 1.0)
    """

    name: str
    types: Mapping[str, float]
    static: Mapping[str, float] = field(default_factory=dict)
    features: Mapping[str, float] = field(default_factory=dict)
    flags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check_name()
        for attr in ("types", "static"):
            val = getattr(self, attr)
            if not isinstance(val, Mapping):
                raise TypeError(f"node {self.name}: {attr} must be a mapping of type to slots")
            clean = {}
            for t, n in val.items():
                _name(t, f"node {self.name}: type")
                clean[t] = _nonneg(n, f"node {self.name}: slots of type {t}", allow_inf=True)
            object.__setattr__(self, attr, MappingProxyType(clean))
        if not self.types and not self.static:
            raise ValueError(f"node {self.name}: needs at least one type")
        object.__setattr__(self, "features", _weight_map(self.features, f"node {self.name}: "
                                                         "features"))  # fmt: skip
        self._seal_flags()

    @property
    def is_switch(self) -> bool:
        """Switches forward traffic (type ``switch``)."""
        return "switch" in self.types or "switch" in self.static


@dataclass(frozen=True)
class PLink(_Link):
    """A physical link: a PC interface wired to a switch, a trunk, or a direct cable.

    ``a_iface``/``b_iface`` keep the ``mac/iface`` part of ``node:mac/iface`` ("" if none).

    Parameters
    ----------
    name : str
        The link's name.
    a, b : str
        The nodes it joins.
    bw : float
        Bandwidth (kbit/s, as in the ``.ptop`` file).
    delay, loss : float
        Delay and loss rate.
    types : tuple of str
        Link types it may carry (empty: any).
    a_iface, b_iface : str
        Interface names at each end.
    slots : int, optional
        How many virtual links it may carry (None: no limit).

    Raises
    ------
    ValueError, TypeError
        A bad name or a negative bandwidth, delay or loss.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> link = tb.PLink("la", "a", "sw", 100)
    >>> link.bw, link.types, link.slots
    (100.0, (), None)
    """

    types: Tuple[str, ...] = ()
    a_iface: str = ""
    b_iface: str = ""
    slots: Optional[int] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "types", tuple(_name(t, f"link {self.name}: type")
                                                for t in self.types))  # fmt: skip
        if self.slots is not None:
            try:
                if isinstance(self.slots, bool):
                    raise TypeError
                n = operator.index(self.slots)
            except TypeError:
                n = -1
            if n < 0:
                raise ValueError(f"link {self.name}: slots must be None or a whole number "
                                 f">= 0, got {self.slots!r}")  # fmt: skip
            object.__setattr__(self, "slots", n)


class PhysicalTopology(_Topology):
    """A testbed: physical nodes, links and policies (what a ``.ptop`` file holds).

    Parameters
    ----------
    nodes : iterable of PNode
    links : iterable of PLink
        Every endpoint must name a node. A link between two switches is a trunk; a link
        between a non-switch and a switch is an interface of the non-switch.
    type_limits : mapping of str to int, optional
        ``set-type-limit TYPE N``: at most N physical nodes may act as TYPE.
    policies : mapping of str to (str, float or None), optional
        ``policy desire NAME disallow|limit X``.

    Raises
    ------
    ValueError
        Duplicate names, links naming unknown nodes, bad values.

    Examples
    --------
    >>> from coalloc.testbed import PNode, PLink, PhysicalTopology
    >>> t = PhysicalTopology([PNode("sw", {"switch": 1}, {"lan": float("inf")}),
    ...                       PNode("pc1", {"pc": 1})], [PLink("l1", "pc1", "sw", 100000)])
    >>> t.interfaces("pc1")[0].name
    'l1'
    """

    NODE, LINK, SIDE, ADJ = PNode, PLink, "physical", "_ifaces"

    def __init__(
        self,
        nodes: Iterable[PNode],
        links: Iterable[PLink] = (),
        *,
        type_limits: Optional[Mapping[str, int]] = None,
        policies: Optional[Mapping[str, Tuple[str, Optional[float]]]] = None,
    ) -> None:
        self._index(nodes, links)
        self._directives(type_limits=type_limits, policies=policies)
        self._seal()

    def _directives(self, *, type_limits: Any = None, policies: Any = None) -> None:
        self.type_limits = MappingProxyType(
            {_name(t, "type_limits key"): _type_limit(n, t)
             for t, n in (type_limits or {}).items()}
        )  # fmt: skip
        self.policies = MappingProxyType({k: _policy(k, v) for k, v in (policies or {}).items()})

    @property
    def switches(self) -> Tuple[str, ...]:
        """Names of the switch nodes."""
        return tuple(n for n, p in self.nodes.items() if p.is_switch)

    def interfaces(self, node: str) -> list:
        """The physical links touching ``node`` (its interfaces, for a PC).

        Parameters
        ----------
        node : str
            A physical node's name.

        Returns
        -------
        list of PLink
            Its links, in the order of the description.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw1 switch:1\\nnode sw2 switch:1\\nnode a pc:1\\n"
        ...                      "node b pc:1\\nlink la a sw1 1000 0 0\\n"
        ...                      "link lb b sw2 1000 0 0\\nlink t sw1 sw2 10000 0 0")
        >>> [lk.name for lk in ptop.interfaces("sw1")]
        ['la', 't']
        """
        return self._links_at(node)

    def trunks(self) -> list:
        """Links whose two ends are switches.

        Returns
        -------
        list of PLink
            The inter-switch (trunk) links.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw1 switch:1\\nnode sw2 switch:1\\nnode a pc:1\\n"
        ...                      "node b pc:1\\nlink la a sw1 1000 0 0\\n"
        ...                      "link lb b sw2 1000 0 0\\nlink t sw1 sw2 10000 0 0")
        >>> [(lk.name, lk.a, lk.b) for lk in ptop.trunks()]
        [('t', 'sw1', 'sw2')]
        """
        sw = set(self.switches)
        return [lk for lk in self.links.values() if lk.a in sw and lk.b in sw]

    def without(self, used: Iterable[str]) -> PhysicalTopology:
        """The testbed with the nodes in ``used`` removed (and their links).

        Parameters
        ----------
        used : iterable of str
            Names of the nodes taken (by earlier experiments).

        Returns
        -------
        PhysicalTopology
            A new testbed; this one is unchanged.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> ptop = tb.parse_ptop("node sw1 switch:1\\nnode sw2 switch:1\\nnode a pc:1\\n"
        ...                      "node b pc:1\\nlink la a sw1 1000 0 0\\n"
        ...                      "link lb b sw2 1000 0 0\\nlink t sw1 sw2 10000 0 0")
        >>> rest = ptop.without(["a"])
        >>> sorted(rest.nodes), sorted(rest.links), len(ptop.nodes)
        (['b', 'sw1', 'sw2'], ['lb', 't'], 4)
        """
        gone = set(used)
        return PhysicalTopology(
            [p for n, p in self.nodes.items() if n not in gone],
            [lk for lk in self.links.values() if lk.a not in gone and lk.b not in gone],
            type_limits=self.type_limits, policies=self.policies,
        )  # fmt: skip

    def __repr__(self) -> str:
        return (f"PhysicalTopology({len(self.nodes)} nodes, {len(self.switches)} switches, "
                f"{len(self.links)} links)")  # fmt: skip


# -------------------------------------------------------------------------------- virtual


@dataclass(frozen=True)
class VNode(_Node, _Pickles):
    """A virtual node: one type (or a vclass name), its slots and desires.

    Parameters
    ----------
    name : str
        The node's name.
    type : str
        Its type or vclass.
    slots : float
        Slots of its type it uses.
    desires : mapping of str to float
        Desire name -> weight.
    flags : mapping of str to str
        Flags as written in the ``.top`` file.

    Raises
    ------
    ValueError, TypeError
        A bad name, type, slot count or mapping.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> node = tb.VNode("x", "pc")
    >>> node.type, node.slots
    ('pc', 1.0)
    """

    name: str
    type: str
    slots: float = 1.0
    desires: Mapping[str, float] = field(default_factory=dict)
    flags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check_name()
        _name(self.type, f"node {self.name}: type")
        object.__setattr__(self, "slots", _nonneg(self.slots, f"node {self.name}: slots"))
        object.__setattr__(self, "desires", _weight_map(self.desires, f"node {self.name}: "
                                                        "desires"))  # fmt: skip
        self._seal_flags()


@dataclass(frozen=True)
class VLink(_Link, _Pickles):
    """A virtual link. ``bw=None`` is ``*``: the native bandwidth of the interfaces chosen.

    Parameters
    ----------
    name : str
        The link's name.
    a, b : str
        The virtual nodes it joins.
    bw : float or None
        Bandwidth (kbit/s); None for ``*``.
    delay, loss : float
        Delay and loss rate.
    type : str, optional
        Link type.
    flags : frozenset of str
        Flags as written in the ``.top`` file.
    options : mapping of str to str
        Options as written in the ``.top`` file.

    Raises
    ------
    ValueError, TypeError
        A bad name or a negative bandwidth, delay or loss.

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> link = tb.VLink("l", "x", "y", 100)
    >>> link.bw, link.type
    (100.0, None)
    """

    STAR_BW: ClassVar[bool] = True

    type: Optional[str] = None
    flags: frozenset = frozenset()
    options: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.type is not None:
            _name(self.type, f"link {self.name}: type")
        flags = frozenset(self.flags)
        bad = flags - set(LINK_FLAGS)
        if bad:
            raise ValueError(f"link {self.name}: unknown flags {sorted(bad)}; "
                             f"known: {list(LINK_FLAGS)}")  # fmt: skip
        object.__setattr__(self, "flags", flags)
        object.__setattr__(self, "options", MappingProxyType(dict(self.options)))

    @property
    def emulated(self) -> bool:
        """True when the link may be emulated (multiplexed on a physical link)."""
        return "emulated" in self.flags

    @property
    def trivial_ok(self) -> bool:
        """True when the link may be trivial (both ends on one PC)."""
        return "trivial_ok" in self.flags


class VirtualTopology(_Topology):
    """An experiment: virtual nodes and links plus placement directives (a ``.top`` file).

    Parameters
    ----------
    nodes : iterable of VNode
    links : iterable of VLink
    vclasses : mapping of str to (float, tuple of str), optional
        ``make-vclass NAME WEIGHT TYPE...``: a node typed NAME may become any of the
        types; all members should become the same one (hard when WEIGHT >= 1).
    fixed : mapping of str to str, optional
        ``fix-node V P`` (checked against a testbed when mapping).
    hints : mapping of str to str, optional
        ``node-hint V P``.

    Raises
    ------
    ValueError
        Duplicates, links or directives naming unknown virtual nodes, bad values.

    Examples
    --------
    >>> from coalloc.testbed import VNode, VLink, VirtualTopology
    >>> v = VirtualTopology([VNode("a", "pc"), VNode("b", "pc")],
    ...                     [VLink("l", "a", "b", 100000)])
    >>> v.degree("a")
    1
    """

    #: A batch chunk's experiments cross as columns (:mod:`coalloc.batch.columnar`'s hook).
    _batch_columns = ("coalloc.testbed._columns", "pack", "unpack")

    NODE, LINK, SIDE, ADJ = VNode, VLink, "virtual", "_adj"

    def __init__(
        self,
        nodes: Iterable[VNode],
        links: Iterable[VLink] = (),
        *,
        vclasses: Optional[Mapping[str, Tuple[float, Iterable[str]]]] = None,
        fixed: Optional[Mapping[str, str]] = None,
        hints: Optional[Mapping[str, str]] = None,
    ) -> None:
        self._index(nodes, links)
        self._directives(vclasses=vclasses, fixed=fixed, hints=hints)
        self._seal()

    def _directives(self, *, vclasses: Any = None, fixed: Any = None, hints: Any = None) -> None:
        vc = {}
        for name, spec in (vclasses or {}).items():
            try:
                weight, types = spec
            except (TypeError, ValueError):
                raise ValueError(f"vclass {name!r} must be (weight, types)") from None
            types = tuple(_name(t, f"vclass {name}: type") for t in types)
            if not types:
                raise ValueError(f"vclass {name!r} has no types")
            vc[_name(name, "vclass name")] = (_nonneg(weight, f"vclass {name}: weight"), types)
        self.vclasses = MappingProxyType(vc)
        for what, table in (("fix-node", fixed), ("node-hint", hints)):
            for v, p in (table or {}).items():
                if v not in self.nodes:
                    raise ValueError(f"{what} names unknown virtual node {v!r}")
                _name(p, f"{what} {v}: physical node")
        self.fixed = MappingProxyType(dict(fixed or {}))
        self.hints = MappingProxyType(dict(hints or {}))

    def degree(self, node: str) -> int:
        """Number of virtual links at ``node``.

        Parameters
        ----------
        node : str
            A virtual node's name.

        Returns
        -------
        int
            How many virtual links end at ``node``.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> top = tb.parse_top("make-vclass big 0.5 pc850 pc3000\\nnode x big\\n"
        ...                    "node y pc\\nnode z pc\\nlink l1 x y 100 0 0\\n"
        ...                    "link l2 x z 100 0 0")
        >>> top.degree("x"), top.degree("z")
        (2, 1)
        """
        return len(self._adj[node])

    def incident(self, node: str) -> list:
        """The virtual links at ``node``.

        Parameters
        ----------
        node : str
            A virtual node's name.

        Returns
        -------
        list of VLink
            The links ending at ``node``.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> top = tb.parse_top("make-vclass big 0.5 pc850 pc3000\\nnode x big\\n"
        ...                    "node y pc\\nnode z pc\\nlink l1 x y 100 0 0\\n"
        ...                    "link l2 x z 100 0 0")
        >>> [lk.name for lk in top.incident("x")]
        ['l1', 'l2']
        """
        return self._links_at(node)

    def allowed_types(self, node: str) -> Tuple[str, ...]:
        """The physical types ``node`` may take (the vclass members, or its own type).

        Parameters
        ----------
        node : str
            A virtual node's name.

        Returns
        -------
        tuple of str
            The accepted physical types.

        Examples
        --------
        >>> import coalloc.testbed as tb
        >>> top = tb.parse_top("make-vclass big 0.5 pc850 pc3000\\nnode x big\\n"
        ...                    "node y pc\\nnode z pc\\nlink l1 x y 100 0 0\\n"
        ...                    "link l2 x z 100 0 0")
        >>> top.allowed_types("x"), top.allowed_types("y")
        (('pc850', 'pc3000'), ('pc',))
        """
        t = self.nodes[node].type
        if t in self.vclasses:
            return self.vclasses[t][1]
        return (t,)

    def __repr__(self) -> str:
        return f"VirtualTopology({len(self.nodes)} nodes, {len(self.links)} links)"

    def __reduce__(self) -> tuple:
        """A compact pickle: the nodes and links as rows of their fields (read-only
        mappings as dicts), the directives as dicts; each node and link is rebuilt on
        arrival without its checks again (it was checked here). A batch pickles one
        experiment per instance in the calling process (issue 41): the rows take about a
        fifth of the CPU the per-object ``__getstate__`` took. An experiment holding
        anything else than its fields and the solvers' ``_tb_`` caches (which stay
        behind) pickles field by field, as before."""
        rows = _virtual_rows(self)
        if rows is None:
            return (_from_state, (type(self), self.__getstate__()))
        return (_virtual_from_rows, rows)


_VIRTUAL_KEYS = frozenset(("nodes", "links", "vclasses", "fixed", "hints", "_adj"))


def _virtual_rows(top: VirtualTopology) -> Optional[tuple]:
    """``(nodes, links, vclasses, fixed, hints)`` of an experiment as plain rows and dicts
    (what :func:`_virtual_from_rows` rebuilds it from; an empty mapping of a node or link,
    the usual desires, flags and options, as None), or None when it is not a plain one: a
    subclass, nodes or links of other classes, attributes beyond its fields."""
    if type(top) is not VirtualTopology:
        return None
    if any(k not in _VIRTUAL_KEYS and not k.startswith("_tb_") for k in top.__dict__):
        return None
    nodes = []
    for n in top.nodes.values():
        if type(n) is not VNode:
            return None
        d = n.__dict__
        desires, flags = d["desires"], d["flags"]
        nodes.append((d["name"], d["type"], d["slots"], dict(desires) if desires else None,
                      dict(flags) if flags else None))  # fmt: skip
    links = []
    for lk in top.links.values():
        if type(lk) is not VLink:
            return None
        d = lk.__dict__
        options = d["options"]
        links.append((d["name"], d["a"], d["b"], d["bw"], d["delay"], d["loss"], d["type"],
                      d["flags"], dict(options) if options else None))  # fmt: skip
    return (nodes, links, dict(top.vclasses), dict(top.fixed), dict(top.hints))


def _read_only(table: Optional[dict]) -> MappingProxyType:
    return MappingProxyType({} if table is None else table)


def _virtual_from_rows(nodes: list, links: list, vclasses: dict, fixed: dict,
                       hints: dict) -> VirtualTopology:  # fmt: skip
    """The experiment :func:`_virtual_rows` took apart (its pickle): the same fields, the
    same read-only mappings, each node's links rebuilt in order."""
    ro = _read_only
    top = VirtualTopology.__new__(VirtualTopology)
    top.nodes = {r[0]: _checked(VNode, r[0], r[1], r[2], ro(r[3]), ro(r[4])) for r in nodes}
    top.links = {r[0]: _checked(VLink, *r[:8], ro(r[8])) for r in links}
    top.vclasses, top.fixed, top.hints = ro(vclasses), ro(fixed), ro(hints)
    top._seal()
    return top


def _from_state(cls: type, state: dict) -> Any:
    """A model rebuilt from its :meth:`_Pickles.__getstate__` (the general pickle)."""
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj


# the field names of each dataclass, in order, for _checked
for _cls in (PNode, PLink, VNode, VLink):
    _cls._FIELD_NAMES = tuple(f.name for f in fields(_cls))
del _cls
