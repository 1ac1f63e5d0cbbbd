"""networkx bridges of the testbed family: a topology of either side as a
``networkx.MultiGraph`` (one edge per link, keyed by its name) and back."""

from __future__ import annotations

from typing import Any

from ..model import PhysicalTopology, PLink, PNode, VirtualTopology, VLink, VNode

__all__ = ["ptop_to_networkx", "ptop_from_networkx", "top_to_networkx", "top_from_networkx"]


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
    """``((name, a, b, bw, delay, loss), attributes)`` of each edge of a graph of either
    side: the fields every link has (the edge's key where it is a string, else
    ``link<i>``; its ends in the order ``a`` records; bandwidth 100000, delay and loss 0
    where absent), then the edge's attributes for the side's own fields."""
    edges = graph.edges(keys=True, data=True) if graph.is_multigraph() else (
        (u, v, None, d) for u, v, d in graph.edges(data=True))  # fmt: skip
    for i, (u, v, key, d) in enumerate(edges):
        a, b = (str(u), str(v)) if d.get("a", u) == u else (str(v), str(u))
        name = str(key) if isinstance(key, str) else f"link{i}"
        yield (name, a, b, d.get("bw", 100000), d.get("delay", 0), d.get("loss", 0)), d


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
    links = [PLink(*common, tuple(d.get("types", ())), d.get("a_iface", ""),
                   d.get("b_iface", ""), d.get("slots"))
             for common, d in _edges(graph)]  # fmt: skip
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
    links = [VLink(*common, d.get("type"), frozenset(d.get("flags", ())), d.get("options", {}))
             for common, d in _edges(graph)]  # fmt: skip
    return VirtualTopology(nodes, links, vclasses=graph.graph.get("vclasses", {}),
                           fixed=graph.graph.get("fixed", {}),
                           hints=graph.graph.get("hints", {}))  # fmt: skip
