"""Pictures of task mapping: the flow-injection cluster tree and a mapping on the resource
graph (needs the ``[plot]`` extra: matplotlib)."""

from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from .._shared import plotting
from .._shared.docs import filled
from .model import ResourceGraph, TaskGraph, check_mapping
from .occupancy import max_occupancy, occupancy_graph

__all__ = ["plot_cluster_tree", "plot_mapping", "tree_layout", "aggregate_groups",
           "AGGREGATE_ABOVE"]


def _tree_of(result: Any) -> Any:
    tree = getattr(result, "tree", result)
    needed = ("parent", "task", "kind", "depth", "start", "stop", "order")
    if not all(hasattr(tree, name) for name in needed):
        raise TypeError(
            f"result must be a FlowInjectionResult or a ClusterTree, got {type(result).__name__}"
        )
    return tree


def tree_layout(tree: Any) -> np.ndarray:
    """``(n_nodes, 2)`` positions of a cluster tree: leaves at their place in the depth-first
    order, an internal node above the middle of its span, depth downwards.

    Parameters
    ----------
    tree : ClusterTree or FlowInjectionResult

    Returns
    -------
    ndarray of float64, shape (n_nodes, 2)
    """
    tree = _tree_of(tree)
    x = (np.asarray(tree.start) + np.asarray(tree.stop) - 1) / 2.0
    y = -np.asarray(tree.depth, dtype=np.float64)
    return np.column_stack([x, y])


@filled
def plot_cluster_tree(
    result: Any,
    *,
    ax: Any = None,
    path: Any = None,
    names: Optional[Any] = None,
    labels: Optional[bool] = None,
    title: Optional[str] = None,
) -> Any:
    """Draw the cluster tree of :func:`~coalloc.taskmap.flow_injection`.

    Leaves (tasks) lie on the bottom row in the depth-first order the mapper uses; every
    internal node sits above the tasks it covers, coloured by how it was split (flow
    injection, disconnected components, flat, forced).

    Parameters
    ----------
    result : FlowInjectionResult or ClusterTree
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    names : sequence, optional
        Task names for the leaf labels (default: task numbers).
    labels : bool, optional
        Label the leaves; default when there are at most 80 tasks.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        A line collection ``"tree edge"`` (one segment per parent-child pair), a scatter
        ``"task (n)"`` of the leaves and one scatter per split kind ``"<kind> (k)"``.

    Raises
    ------
    %(plot_raises)s
    TypeError, ValueError
        On a wrong ``result`` or ``names`` of the wrong length.

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.taskmap import flow_injection
    >>> w = np.ones((6, 6)) - np.eye(6)
    >>> fig = plot_cluster_tree(flow_injection(w, seed=0))
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "tree.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    tree = _tree_of(result)
    n = int(tree.order.shape[0])
    if names is not None:
        plotting.check_length(names, n, "names")
    fig, ax = plotting.figure_and_axes(ax, figsize=(max(6.0, min(0.18 * n, 24.0)), 5.0))
    from matplotlib.collections import LineCollection

    pos = tree_layout(tree)
    parent = np.asarray(tree.parent)
    child = np.flatnonzero(parent >= 0)
    segs = [(tuple(pos[parent[c]]), tuple(pos[c])) for c in child]
    ax.add_collection(LineCollection(segs, colors="#777777", linewidths=0.8, zorder=1,
                                     label="tree edge"))  # fmt: skip
    kind = np.asarray(tree.kind)
    leaves = np.flatnonzero(kind == 0)
    ax.scatter(pos[leaves, 0], pos[leaves, 1], s=18, color="black", zorder=2,
               label=f"task ({leaves.size})")  # fmt: skip
    kind_names = getattr(tree, "KIND_NAMES", ("leaf", "flow", "components", "flat", "forced"))
    colors = plotting.category_colors(len(kind_names))
    for k in range(1, len(kind_names)):
        nodes = np.flatnonzero(kind == k)
        if nodes.size:
            ax.scatter(pos[nodes, 0], pos[nodes, 1], s=40, color=colors[k - 1], zorder=3,
                       edgecolors="black", linewidths=0.4,
                       label=f"{kind_names[k]} ({nodes.size})")  # fmt: skip
    if labels is None:
        labels = n <= 80
    if labels:
        task = np.asarray(tree.task)
        for x in leaves:
            t = int(task[x])
            text = str(names[t]) if names is not None else str(t)
            ax.annotate(text, pos[x], xytext=(0, -8), textcoords="offset points", fontsize=6,
                        ha="center", va="top", rotation=90)  # fmt: skip
    ax.autoscale()
    ax.margins(0.05, 0.12)
    ax.set_yticks([-d for d in range(tree.height + 1)])
    ax.set_yticklabels([str(d) for d in range(tree.height + 1)])
    ax.set_ylabel("depth")
    ax.set_xticks([])
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    ax.legend(loc="upper right", fontsize=8, frameon=False)
    if title is None:
        title = f"flow-injection cluster tree: {n} tasks, height {tree.height}"
    return plotting.finish(fig, path, title=title, ax=ax)


def _mapping_of(result: Any) -> Any:
    if isinstance(result, dict):
        return result.get("mapping")
    return getattr(result, "mapping", result)


def _layout(resources: ResourceGraph, seed: int) -> np.ndarray:
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(resources.n_nodes))
    g.add_edges_from((int(u), int(v)) for u, v in resources.links)
    if resources.n_nodes <= 60 and nx.is_connected(g):
        pos = nx.kamada_kawai_layout(g)
    else:
        pos = nx.spring_layout(g, seed=seed, k=1.5 / np.sqrt(max(resources.n_nodes, 1)))
    return np.array([pos[i] for i in range(resources.n_nodes)], dtype=np.float64)


#: Beyond this many processors :func:`plot_mapping` draws groups of them (nodes, racks).
AGGREGATE_ABOVE = 64


def _bfs_tree(resources: ResourceGraph) -> tuple:
    """``(parent, depth)`` of a breadth-first tree of the resource graph from its centre
    (per connected component): on a cluster tree, the root switch, the racks, the nodes,
    then the cores."""
    import networkx as nx

    n = resources.n_nodes
    g = nx.Graph()
    g.add_nodes_from(range(n))
    g.add_edges_from((int(u), int(v)) for u, v in resources.links)
    parent = np.full(n, -1, dtype=np.int64)
    depth = np.zeros(n, dtype=np.int64)
    for comp in nx.connected_components(g):
        sub = g.subgraph(comp)
        if len(comp) <= 3000:
            root = min(nx.center(sub))
        else:  # the centre costs a BFS per node: the best-connected node instead
            root = max(sorted(comp), key=sub.degree)
        for u, v in nx.bfs_edges(sub, root):
            parent[v], depth[v] = u, depth[u] + 1
    return parent, depth


def aggregate_groups(resources: ResourceGraph, limit: int = AGGREGATE_ABOVE) -> np.ndarray:
    """The node that stands for each resource node when the processors are drawn in groups.

    The resource graph is walked breadth-first from its centre (a cluster tree: root switch,
    racks, nodes, cores). The processors are grouped under their ancestor at the deepest
    level that gives at most ``limit`` groups: the cores of a node under the node's router,
    or, when the nodes are too many, everything under its rack switch. Nodes above that
    level stand for themselves.

    Parameters
    ----------
    resources : ResourceGraph
    limit : int, default 64
        Most groups of processors.

    Returns
    -------
    ndarray of int64, shape (n_nodes,)
        ``rep[i]``: the node drawn for node ``i`` (itself when it is not grouped).

    Examples
    --------
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> res = hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2)
    >>> rep = aggregate_groups(res, limit=4)
    >>> len(set(rep[res.processors].tolist()))  # the 8 cores in their 4 nodes
    4
    """
    parent, depth = _bfs_tree(resources)
    procs = resources.processors
    n = resources.n_nodes
    rep = np.arange(n, dtype=np.int64)
    top = int(depth[procs].max()) if procs.size else 0
    for level in range(top, -1, -1):
        rep = np.arange(n, dtype=np.int64)
        for i in range(n):  # climb to the level (parents come before children in depth)
            while depth[rep[i]] > level:
                rep[i] = parent[rep[i]]
        if np.unique(rep[procs]).size <= limit:
            break
    return rep


def _drop_crowded_labels(fig: Any, ax: Any, texts: list) -> None:
    """Remove the labels that overlap a label kept before them (``texts`` in priority
    order): a label is written only where it fits."""
    ax.apply_aspect()
    renderer = fig.canvas.get_renderer()
    kept: list = []
    for text in texts:
        box = text.get_window_extent(renderer).expanded(1.05, 1.1)
        if any(box.overlaps(other) for other in kept):
            text.remove()
        else:
            kept.append(box)


class _Occupancy(NamedTuple):
    """A mapping and what it loads: what :func:`plot_mapping` draws (one record, not seven
    arguments)."""

    tasks: TaskGraph
    resources: ResourceGraph
    mapping: np.ndarray  # the processor of every task
    node_occ: np.ndarray  # load / capacity of every node
    link_occ: np.ndarray  # and of every link
    top: float  # the maximum occupancy
    where: Any  # where it is (``.kind``, ``.index``)


class _Groups(NamedTuple):
    """The processors of a dense cluster in groups (:func:`aggregate_groups`): each node's
    group ``rep``, the groups and the routers above them (``kept``), per group the tasks,
    processors, capacity and highest occupancy, and the busiest link between two groups."""

    rep: np.ndarray
    groups: np.ndarray
    kept: np.ndarray
    counts: np.ndarray
    size: np.ndarray
    cap: np.ndarray
    occ: np.ndarray
    between: dict


def _grouped(o: _Occupancy) -> _Groups:
    """The groups of ``o.resources`` and what the mapping puts on each."""
    resources = o.resources
    rep = aggregate_groups(resources)
    procs = resources.processors
    counts = np.bincount(rep[o.mapping], minlength=resources.n_nodes)
    size = np.bincount(rep[procs], minlength=resources.n_nodes)
    cap = np.bincount(rep[procs], weights=resources.capacity[procs], minlength=resources.n_nodes)
    occ = np.zeros(resources.n_nodes)
    np.maximum.at(occ, rep[procs], o.node_occ[procs])
    ln = resources.links
    inner = rep[ln[:, 0]] == rep[ln[:, 1]]
    if inner.any():  # a group's own links (a node's core links) count in its colour
        np.maximum.at(occ, rep[ln[inner, 0]], o.link_occ[inner])
    between: dict = {}
    for (u, v), x in zip(ln[~inner], o.link_occ[~inner]):
        key = (min(rep[u], rep[v]), max(rep[u], rep[v]))
        between[key] = max(between.get(key, 0.0), float(x))
    return _Groups(rep=rep, groups=np.unique(rep[procs]), kept=np.unique(rep), counts=counts,
                   size=size, cap=cap, occ=occ, between=between)  # fmt: skip


def _group_positions(n_nodes: int, g: _Groups, seed: Any) -> np.ndarray:
    """Where each group and router is drawn (Kamada-Kawai when small and connected, else a
    seeded spring layout); rows of the other nodes stay 0."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(g.kept.tolist())
    graph.add_edges_from(g.between)
    if g.kept.size <= 80 and nx.is_connected(graph):
        layout = nx.kamada_kawai_layout(graph)
    else:
        layout = nx.spring_layout(graph, seed=seed, k=1.5 / np.sqrt(max(g.kept.size, 1)))
    pos = np.zeros((n_nodes, 2))
    for k in g.kept.tolist():
        pos[k] = layout[k]
    return pos


def _mark_group_bottleneck(ax, o: _Occupancy, g: _Groups, pos: np.ndarray) -> None:
    """Circle the group that holds the bottleneck, or draw the link between two groups."""
    from matplotlib.collections import LineCollection

    where, resources = o.where, o.resources
    if where.kind == "node":
        spot, kind = int(g.rep[where.index]), "node"
    else:
        a, b = (int(g.rep[e]) for e in resources.links[where.index])
        spot, kind = (a, "link") if a == b else (None, "link")
    if spot is not None:
        grouped = kind == "link" or spot != where.index
        inside = f" (inside the group at {_name(resources, spot)})" if grouped else ""
        ax.scatter(pos[[spot], 0], pos[[spot], 1], s=520, facecolors="none",
                   edgecolors=plotting.CROSS, linewidths=2.0, zorder=4,
                   label=f"bottleneck {kind} {where.index}{inside}")  # fmt: skip
    else:
        ax.add_collection(LineCollection([(tuple(pos[a]), tuple(pos[b]))],
                                         colors=plotting.CROSS, linewidths=4.0, zorder=1.5,
                                         label=f"bottleneck link {where.index}"))  # fmt: skip


def _group_texts(ax, resources: ResourceGraph, g: _Groups, pos: np.ndarray, sizes: np.ndarray,
                 labels: Optional[bool]) -> list:  # fmt: skip
    """The tasks beside each used group (the busiest first) and, with ``labels``, each
    node's name under its marker; the annotations, for :func:`_drop_crowded_labels`."""
    texts = []
    for k in sorted(g.groups.tolist(), key=lambda k: (-g.counts[k], k)):  # the busiest first
        n_here = int(g.counts[k])
        if not n_here:  # an unused group is white: no "0 tasks" beside it
            continue
        word = f"{n_here} task{'s' if n_here != 1 else ''}"
        texts.append(ax.annotate(word, pos[k], xytext=(7, 5), textcoords="offset points",
                                 fontsize=7, gid=f"tasks-in-{k}"))  # fmt: skip
    if labels is None:
        labels = g.kept.size <= 40
    if labels:  # under each marker (its radius in points: the square root of its area / 2)
        radius = dict(zip(g.groups.tolist(), (np.sqrt(sizes) / 2).tolist()))
        for k in g.kept.tolist():
            below = radius.get(k, 2.5) + 2.0
            texts.append(ax.annotate(_name(resources, k), pos[k], xytext=(0, -below),
                                     ha="center", va="top", textcoords="offset points",
                                     fontsize=6, zorder=5,
                                     color="#444444"))  # fmt: skip
    return texts


def _plot_groups(o: _Occupancy, ax, fig, *, labels: Optional[bool], seed: Any) -> str:
    """:func:`plot_mapping` of a dense cluster: the processors drawn in groups; the title."""
    from matplotlib import colormaps
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    resources, top = o.resources, o.top
    g = _grouped(o)
    groups = g.groups
    pos = _group_positions(resources.n_nodes, g, seed)
    norm = Normalize(vmin=0.0, vmax=max(top, 1e-12))
    cmap = colormaps["viridis_r"]
    pairs = list(g.between)
    x = np.array([g.between[k] for k in pairs])
    ax.add_collection(LineCollection(
        [(tuple(pos[a]), tuple(pos[b])) for a, b in pairs], colors=cmap(norm(x)),
        linewidths=0.6 + 3.0 * (x / max(top, 1e-12)), zorder=1, label="link"))  # fmt: skip
    unit = "processor" if int(g.size[groups].max()) == 1 else "processors"
    sizes = 60 + 340 * g.cap[groups] / max(float(g.cap[groups].max()), 1e-12)
    face = [cmap(norm(g.occ[k])) if g.counts[k] else (1, 1, 1, 1) for k in groups]
    ax.scatter(pos[groups, 0], pos[groups, 1], s=sizes, c=face, edgecolors="black",
               linewidths=0.6, zorder=2,
               label=f"group of {unit} ({groups.size}; size: capacity)")  # fmt: skip
    routers = np.setdiff1d(g.kept, groups)
    routers = routers[~resources.is_processor[routers]]
    if routers.size:
        ax.scatter(pos[routers, 0], pos[routers, 1], s=20, marker="s", color=plotting.GREY,
                   zorder=2, label="router")  # fmt: skip
    _mark_group_bottleneck(ax, o, g, pos)
    texts = _group_texts(ax, resources, g, pos, sizes, labels)
    from matplotlib.cm import ScalarMappable

    fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.7,
                 label="occupancy (the highest in a group: load / capacity)")  # fmt: skip
    ax.set_aspect("equal")
    ax.autoscale()
    ax.margins(0.08)
    ax.set_axis_off()
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8,
              frameon=False)  # fmt: skip
    _drop_crowded_labels(fig, ax, texts)
    lo, hi = int(g.size[groups].min()), int(g.size[groups].max())
    each = f"{lo}" if lo == hi else f"{lo} to {hi}"
    return (
        f"{o.tasks.n} tasks on {int(np.count_nonzero(np.bincount(o.mapping)))}/"
        f"{resources.n_processors} processors in {groups.size} groups of {each}: max "
        f"occupancy {top:.4g} at {o.where.kind} {o.where.index}"
    )


def _name(resources: ResourceGraph, i: int) -> str:
    """Node ``i`` by its name, or ``"node i"`` (a bare number would read as a count)."""
    names = resources.names
    return str(names[i]) if names is not None else f"node {i}"


@filled
def plot_mapping(
    tasks: TaskGraph,
    resources: ResourceGraph,
    result: Any,
    *,
    ax: Any = None,
    path: Any = None,
    seed: int = 0,
    labels: Optional[bool] = None,
    title: Optional[str] = None,
    aggregate: Optional[bool] = None,
) -> Any:
    """Draw a task mapping on the resource graph, coloured by occupancy.

    Processors are circles (size by capacity, colour by occupancy; unused ones white),
    routers small grey squares, links lines whose colour and width grow with their
    occupancy; the bottleneck (the node or link with the maximum occupancy) is outlined in
    red. The tasks of a processor are small dots around it and its task count is written
    next to it with its unit (``"3 tasks"``, ``"1 task"``: a bare number would read as a
    node id).

    A dense cluster (more than :data:`AGGREGATE_ABOVE` processors: 256 cores and a 64 x 64
    stencil would be a blot of 4,096 dots and 256 overlapping counts) is drawn in groups
    (:func:`aggregate_groups`): the cores of a node as one circle at the node (the nodes of
    a rack, when the nodes are too many), sized by the group's capacity and coloured by the
    highest occupancy in it (its cores and its inner links), the links between groups
    coloured by their highest occupancy, and each group's task count written where it fits
    (the busiest groups first; a count that would overlap another is left out).

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    result : MappingResult, dict or array_like of int
        A result (its ``mapping``), a result file read by ``read_mapping_result`` or the
        mapping itself (processor node of each task).
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    seed : int, default 0
        Seed of the spring layout of larger resource graphs.
    labels : bool, optional
        Write node names; default when at most 40 nodes are drawn.
    title : str, optional
    aggregate : bool, optional
        Draw the processors in groups; default when there are more than
        :data:`AGGREGATE_ABOVE`.

    Returns
    -------
    matplotlib.figure.Figure
        Collections ``"link"``, ``"processor"``, ``"router"``, ``"task (n)"`` and
        ``"bottleneck <kind> <index>"``; the task count of processor ``p`` is a text
        ``"<n> tasks"`` with gid ``"tasks-on-<p>"``. In groups: ``"group of processors
        (g; size: capacity)"`` instead of the processors and the task dots, and the count
        of the group drawn at node ``k`` has gid ``"tasks-in-<k>"`` (when it fits).

    Raises
    ------
    %(plot_raises)s
    TypeError, ValueError
        On a mapping that does not fit the graphs.

    Examples
    --------
    >>> from coalloc import taskmap
    >>> tasks, resources = taskmap.generators.table1_instance(1.0, seed=0)
    >>> res = taskmap.solve(tasks, resources)
    >>> fig = plot_mapping(tasks, resources, res)
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "mapping.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    m = check_mapping(tasks, resources, _mapping_of(result))
    node_occ, link_occ = occupancy_graph(tasks, resources, m)
    top, where = max_occupancy(tasks, resources, m)
    fig, ax = plotting.figure_and_axes(ax, figsize=(9.0, 7.0))
    if aggregate is None:
        aggregate = resources.n_processors > AGGREGATE_ABOVE
    if aggregate:
        occupied = _Occupancy(tasks=tasks, resources=resources, mapping=m, node_occ=node_occ,
                              link_occ=link_occ, top=top, where=where)  # fmt: skip
        said = _plot_groups(occupied, ax, fig, labels=labels, seed=seed)
        return plotting.finish(fig, path, title=said if title is None else title, ax=ax)
    from matplotlib import colormaps
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    pos = _layout(resources, seed)
    norm = Normalize(vmin=0.0, vmax=max(top, 1e-12))
    cmap = colormaps["viridis_r"]
    ln = resources.links
    segs = [(tuple(pos[u]), tuple(pos[v])) for u, v in ln]
    widths = 0.6 + 3.0 * (link_occ / max(top, 1e-12))
    ax.add_collection(LineCollection(segs, colors=cmap(norm(link_occ)), linewidths=widths,
                                     zorder=1, label="link"))  # fmt: skip
    procs = resources.processors
    counts = np.bincount(m, minlength=resources.n_nodes)
    cap = resources.capacity[procs]
    sizes = 40 + 160 * cap / max(float(cap.max()), 1e-12)
    face = [cmap(norm(node_occ[p])) if counts[p] else (1, 1, 1, 1) for p in procs]
    ax.scatter(pos[procs, 0], pos[procs, 1], s=sizes, c=face, edgecolors="black",
               linewidths=0.6, zorder=2, label="processor")  # fmt: skip
    routers = np.flatnonzero(~resources.is_processor)
    if routers.size:
        ax.scatter(pos[routers, 0], pos[routers, 1], s=20, marker="s", color=plotting.GREY,
                   zorder=2, label="router")  # fmt: skip
    # the tasks: small dots on a ring around their processor
    span = float(np.ptp(pos, axis=0).max()) if resources.n_nodes > 1 else 1.0
    dots = np.zeros((tasks.n, 2))
    for p in np.flatnonzero(counts):
        members = np.flatnonzero(m == p)
        ring = 0.025 * span
        phi = 2 * np.pi * np.arange(members.size) / members.size
        dots[members] = pos[p] + ring * np.column_stack([np.cos(phi), np.sin(phi)])
        # with its unit: a bare number beside a node reads as the node's id
        n_here = int(counts[p])
        ax.annotate(f"{n_here} task{'s' if n_here != 1 else ''}", pos[p], xytext=(6, 6),
                    textcoords="offset points", fontsize=7, gid=f"tasks-on-{p}")  # fmt: skip
    ax.scatter(dots[:, 0], dots[:, 1], s=6, color="black", zorder=3, label=f"task ({tasks.n})")
    if where.kind == "node":
        ax.scatter(pos[[where.index], 0], pos[[where.index], 1], s=320, facecolors="none",
                   edgecolors=plotting.CROSS, linewidths=2.0, zorder=4,
                   label=f"bottleneck node {where.index}")  # fmt: skip
    else:
        u, v = ln[where.index]
        ax.add_collection(LineCollection([(tuple(pos[u]), tuple(pos[v]))],
                                         colors=plotting.CROSS, linewidths=4.0, zorder=1.5,
                                         label=f"bottleneck link {where.index}"))  # fmt: skip
    if labels is None:
        labels = resources.n_nodes <= 40
    if labels:
        names = resources.names
        for i in range(resources.n_nodes):
            text = str(names[i]) if names is not None else str(i)
            ax.annotate(text, pos[i], xytext=(-6, -10), textcoords="offset points", fontsize=6)
    from matplotlib.cm import ScalarMappable

    sm = ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(sm, ax=ax, shrink=0.7, label="occupancy (load / capacity)")
    ax.set_aspect("equal")
    ax.autoscale()
    ax.margins(0.05)
    ax.set_axis_off()
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    if title is None:
        used = int(np.count_nonzero(counts))
        title = (
            f"{tasks.n} tasks on {used}/{resources.n_processors} processors: max occupancy "
            f"{top:.4g} at {where.kind} {where.index}"
        )
    return plotting.finish(fig, path, title=title, ax=ax)
