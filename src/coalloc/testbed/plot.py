"""Pictures of a testbed mapping: virtual nodes on their PCs, grouped by switch (needs the
``[plot]`` extra: matplotlib)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, Optional

import numpy as np

from .._shared import plotting
from .._shared.docs import filled
from .model import PhysicalTopology, VirtualTopology

__all__ = ["plot_mapping", "home_switches", "plot_explanation"]


def home_switches(ptop: PhysicalTopology) -> Dict[str, Optional[str]]:
    """The switch of every non-switch node: the switch of its first interface (None when it
    has no interface to a switch).

    Parameters
    ----------
    ptop : PhysicalTopology

    Returns
    -------
    dict of str to str or None
    """
    sw = set(ptop.switches)
    out: Dict[str, Optional[str]] = {}
    for name in ptop.nodes:
        if name in sw:
            continue
        home = None
        for link in ptop.interfaces(name):
            other = link.b if link.a == name else link.a
            if other in sw:
                home = other
                break
        out[name] = home
    return out


def _field(result: Any, name: str) -> Any:
    if isinstance(result, dict):
        return result.get(name)
    return getattr(result, name, None)


def _positions(leaves: list, cores: list, by_switch: dict, used: set,
               show_unused: bool) -> tuple:  # fmt: skip
    """Where :func:`plot_mapping` draws each node, and the PC-switch segments: each switch's
    PCs (``by_switch``; the used ones first, the unused ones only with ``show_unused``) in a
    grid centred under it, the switches with PCs (``leaves``) in a row, the others
    (``cores``) above; ``(pos, attach)``."""
    pos: Dict[str, np.ndarray] = {}
    groups = [(s, by_switch[s]) for s in leaves]
    if by_switch.get(None):
        groups.append((None, by_switch[None]))
    # neighbouring switches stand the wider of their grids' widths (plus a gap) apart, so
    # that every PC is nearer to its own switch than to any other
    pitch, gap = 0.8, 1.6
    grids = []
    for s, pcs in groups:
        shown = [p for p in pcs if show_unused or p in used]
        shown.sort(key=lambda p: (p not in used, p))
        cols = max(1, min(8, int(np.ceil(np.sqrt(len(shown) * 1.5)))))
        grids.append((s, shown, cols, pitch * (cols - 1)))
    x = 0.0
    for k, (s, shown, cols, span) in enumerate(grids):
        if k:
            x += max(grids[k - 1][3], span) + gap
        if s is not None:
            pos[s] = np.array([x, 0.0])
        for t, p in enumerate(shown):
            pos[p] = np.array([x - span / 2 + pitch * (t % cols), -1.2 - 0.6 * (t // cols)])
    xs = [pos[s][0] for s in leaves] or [0.0]
    for k, s in enumerate(cores):
        pos[s] = np.array([min(xs) + (max(xs) - min(xs)) * (k + 1) / (len(cores) + 1), 3.0])
    # every PC attached to its switch by a thin line (a PC without a switch stands apart)
    attach = [(tuple(pos[p]), tuple(pos[s])) for s, shown, _, _ in grids if s is not None
              for p in shown]  # fmt: skip
    return pos, attach


def _whole_mapping(top: VirtualTopology, ptop: PhysicalTopology, result: Any) -> dict:
    """The result's mapping (virtual node -> physical node), refused unless it maps every
    virtual node onto a node of the testbed."""
    mapping = _field(result, "mapping")
    if mapping is None:
        raise ValueError("result holds no mapping (the mapper found none)")
    unknown = [p for p in mapping.values() if p not in ptop.nodes]
    if unknown:
        raise ValueError(f"result: physical node {unknown[0]!r} is not in the testbed")
    missing = [v for v in top.nodes if v not in mapping]
    if missing:
        raise ValueError(f"result: virtual node {missing[0]!r} is not mapped")
    return mapping


def _draw_trunks(ax: Any, ptop: PhysicalTopology, pos: dict, load: dict) -> None:
    """The trunks: one segment each (parallel trunks of a pair side by side), as wide as
    their load, a loaded one red and labelled ``load/capacity``."""
    from matplotlib.collections import LineCollection

    seen: Dict[tuple, int] = defaultdict(int)
    segs, widths, colors = [], [], []
    for lk in ptop.trunks():
        pair = tuple(sorted((lk.a, lk.b)))
        off = 0.12 * seen[pair]
        seen[pair] += 1
        a, b = pos[lk.a] + (off, 0), pos[lk.b] + (off, 0)
        segs.append((tuple(a), tuple(b)))
        share = load.get(lk.name, 0.0) / lk.bw if lk.bw > 0 else 0.0
        widths.append(0.8 + 5.0 * min(share, 1.0))
        colors.append(plotting.CROSS if share > 0 else "#555555")
        if load.get(lk.name, 0.0) > 0:
            mid = (a + b) / 2
            ax.annotate(f"{load[lk.name]:g}/{lk.bw:g}", mid, fontsize=7, color=plotting.CROSS,
                        ha="left", va="center", gid=f"trunk-{lk.name}")  # fmt: skip
    if segs:
        ax.add_collection(LineCollection(segs, linewidths=widths, colors=colors, zorder=1,
                                         label="trunk"))  # fmt: skip


def _draw_virtual_links(ax: Any, top: VirtualTopology, mapping: dict, pos: dict,
                        home: dict) -> None:  # fmt: skip
    """The virtual links between two PCs drawn: dashed red between switches, thin grey
    behind one switch."""
    from matplotlib.collections import LineCollection

    inter, intra = [], []
    for vl in top.links.values():
        pa, pb = mapping.get(vl.a), mapping.get(vl.b)
        if pa is None or pb is None or pa == pb or pa not in pos or pb not in pos:
            continue
        seg = (tuple(pos[pa]), tuple(pos[pb]))
        (inter if home.get(pa) != home.get(pb) else intra).append(seg)
    if intra:
        label = f"intra-switch virtual link ({len(intra)})"
        ax.add_collection(LineCollection(intra, colors="#888888", linewidths=0.6, zorder=1,
                                         label=label))  # fmt: skip
    if inter:
        label = f"inter-switch virtual link ({len(inter)})"
        ax.add_collection(LineCollection(inter, colors=plotting.CROSS, linewidths=0.9,
                                         linestyles="dashed", zorder=1, alpha=0.8,
                                         label=label))  # fmt: skip


@filled
def plot_mapping(
    top: VirtualTopology,
    ptop: PhysicalTopology,
    result: Any,
    *,
    show_unused: bool = True,
    ax: Any = None,
    path: Any = None,
    labels: Optional[bool] = None,
    title: Optional[str] = None,
) -> Any:
    """Draw a testbed mapping: PCs under their switch, virtual nodes on them, trunk loads.

    Switches with PCs stand in a row, each with its PCs in a grid centred below it and
    attached to it by thin lines (used PCs coloured and labelled with their virtual node,
    unused ones small and grey; the switches spaced so that every PC is nearer to its own
    switch than to any other); switches without PCs (the core) stand above. Every trunk is a
    line labelled ``load/capacity`` whose width grows with its load; a virtual link between
    nodes behind different switches is a dashed red line, one behind one switch a thin grey
    line.

    Parameters
    ----------
    top : VirtualTopology
    ptop : PhysicalTopology
    result : MappingResult or dict
        A result (or its JSON, from ``coalloc testbed assign --json``) with ``mapping``
        (virtual node -> physical node) and optionally ``trunk_load``.
    show_unused : bool, default True
        Draw the unused PCs too.
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    labels : bool, optional
        Write virtual node names; default when at most 60 are mapped.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Collections ``"switch"``, ``"used PC (k)"``, ``"unused PC (k)"``,
        ``"PC-switch link (k)"`` (one segment from each PC drawn to its switch),
        ``"trunk"`` (one segment per trunk, in ``ptop.trunks()`` order),
        ``"inter-switch virtual link (k)"`` (dashed) and ``"intra-switch virtual link (k)"``.

    Raises
    ------
    %(plot_raises)s
    ValueError
        When the result holds no mapping or names a node the testbed does not have.

    Examples
    --------
    >>> from coalloc import testbed
    >>> from coalloc.testbed import generators as g
    >>> ptop, top = g.deterlab(20, 2, seed=0), g.ring(6)
    >>> fig = plot_mapping(top, ptop, testbed.assign(top, ptop, seed=0))
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "testbed.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    mapping = _whole_mapping(top, ptop, result)
    home = home_switches(ptop)
    switches = list(ptop.switches)
    by_switch: Dict[Optional[str], list] = defaultdict(list)
    for pc, sw in home.items():
        by_switch[sw].append(pc)
    leaves = [s for s in switches if by_switch.get(s)]
    cores = [s for s in switches if not by_switch.get(s)]
    fig, ax = plotting.figure_and_axes(ax, figsize=(max(8.0, 3.2 * len(leaves)), 7.0))
    from matplotlib.collections import LineCollection

    used = set(mapping.values())
    pos, attach = _positions(leaves, cores, by_switch, used, show_unused)
    if attach:
        ax.add_collection(LineCollection(attach, colors="#bbbbbb", linewidths=0.5, zorder=0.5,
                                         label=f"PC-switch link ({len(attach)})"))  # fmt: skip
    load = dict(_field(result, "trunk_load") or {})
    _draw_trunks(ax, ptop, pos, load)
    _draw_virtual_links(ax, top, mapping, pos, home)
    sw_xy = np.array([pos[s] for s in switches]) if switches else np.zeros((0, 2))
    ax.scatter(sw_xy[:, 0], sw_xy[:, 1], s=260, marker="s", color="#4c72b0", zorder=2,
               edgecolors="black", label="switch")  # fmt: skip
    for s in switches:
        ax.annotate(s, pos[s], xytext=(0, 12), textcoords="offset points", ha="center",
                    fontsize=8, fontweight="bold")  # fmt: skip
    used_pcs = sorted(p for p in used if p in pos and p not in set(switches))
    free = sorted(p for p in home if p in pos and p not in used)
    colors = plotting.category_colors(max(len(leaves), 1))
    # one colour per switch: the legend's marker is then neutral, not the first switch's
    by_colour = ", coloured by switch" if len(leaves) > 1 else ""
    face = [colors[leaves.index(home[p])] if home.get(p) in leaves else plotting.GREY
            for p in used_pcs]  # fmt: skip
    ax.scatter([pos[p][0] for p in used_pcs], [pos[p][1] for p in used_pcs], s=90, c=face,
               edgecolors="black", linewidths=0.5, zorder=3,
               label=f"used PC ({len(used_pcs)})" + by_colour)  # fmt: skip
    if free:
        ax.scatter([pos[p][0] for p in free], [pos[p][1] for p in free], s=14,
                   color=plotting.GREY, zorder=2, label=f"unused PC ({len(free)})")  # fmt: skip
    if labels is None:
        labels = len(mapping) <= 60
    if labels:
        hosted: Dict[str, list] = defaultdict(list)
        for v, p in mapping.items():
            hosted[p].append(v)
        for p, vs in hosted.items():
            if p in pos:
                ax.annotate(",".join(sorted(vs)), pos[p], xytext=(0, -9), fontsize=6,
                            textcoords="offset points", ha="center", va="top")  # fmt: skip
    ax.autoscale()
    ax.margins(0.06)
    ax.set_axis_off()
    legend = ax.legend(loc="upper left", fontsize=8, frameon=False, bbox_to_anchor=(1.0, 1.0))
    if by_colour:
        for text, handle in zip(legend.get_texts(), legend.legend_handles):
            if text.get_text().startswith("used PC (") and handle is not None:
                handle.set_facecolor("white")
    if title is None:
        isw = _field(result, "interswitch_bandwidth")
        if isw is None:
            isw = sum(load.values())
        n_sw = len({home.get(p) for p in used_pcs})
        title = (
            f"{len(mapping)} virtual nodes on {len(used_pcs)} PCs behind "
            f"{n_sw} switch{'es' if n_sw != 1 else ''}; inter-switch bandwidth {isw:g}"
        )
    return plotting.finish(fig, path, title=title, ax=ax)


@filled
def plot_explanation(
    top: VirtualTopology,
    ptop: PhysicalTopology,
    explanation: Any = None,
    *,
    max_classes: int = 12,
    time_limit: float = 10.0,
    ax: Any = None,
    path: Any = None,
    title: Optional[str] = None,
) -> Any:
    """Draw why an experiment does not map: its conflict's nodes and the PCs they can use.

    The conflict's virtual nodes stand in a column on the left (their virtual links as arcs
    beside it); the testbed's classes of interchangeable PCs stand on the right, each with
    how many PCs it holds. A line joins a virtual node to every class it can use (type,
    features, interfaces, bandwidth: the mapper's own candidate filter), so a counting
    conflict shows at a glance: more nodes on the left than PCs in the classes they reach.
    A node that can use no class is crossed out, with the constraint each class fails.

    Parameters
    ----------
    top : VirtualTopology
    ptop : PhysicalTopology
    explanation : Explanation or dict, optional
        Its explanation (:func:`~coalloc.testbed.explain.explain_mapping`, or its
        ``to_dict()``); None computes it.
    max_classes : int, default 12
        Classes drawn at most (those the conflict can use first; the rest are counted).
    time_limit : float, default 10.0
        Seconds for the explanation when it is computed here.
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    title : str, optional
        Default: the explanation's conflict sentence.

    Returns
    -------
    matplotlib.figure.Figure
        Points with gids ``"vnode-<name>"`` and ``"class-<k>"``, lines ``"cand-<name>-<k>"``.

    Raises
    ------
    %(plot_raises)s
    ValueError
        When the experiment maps (nothing to explain).

    Examples
    --------
    >>> import coalloc.testbed as tb
    >>> ptop = tb.parse_ptop("node sw switch:1\\nnode a pc:1\\nlink la a sw 100 0 0")
    >>> top = tb.parse_top("node x pc\\nnode y pc")
    >>> fig = plot_explanation(top, ptop)
    >>> sorted(str(a.get_gid()).split("-")[1] for a in fig.axes[0].lines
    ...        if str(a.get_gid()).startswith("cand-"))  # both nodes reach the one PC
    ['x', 'y']
    """
    import textwrap

    from .explain import _sub, explain_mapping
    from .problem import build_problem

    doc = plotting.explanation_document(
        explanation, lambda: explain_mapping(top, ptop, time_limit=time_limit),
        "the experiment maps (or its failure was not proved in time_limit): nothing to "
        "explain")  # fmt: skip
    vnodes = [v for v in doc["conflict"]["vnodes"] if v in top.nodes]
    pr = build_problem(_sub(top, vnodes), ptop)
    cand = {pr.vnames[i]: [int(c) for c in pr.cand[i]] for i in range(pr.nv)}
    usable = sorted({c for cs in cand.values() for c in cs})
    switch = np.asarray(pr.pis_switch, dtype=bool)
    others = [c for c in range(pr.nc) if c not in set(usable)
              and not all(switch[int(p)] for p in pr.members[c])]  # switches are no PCs
    shown = (usable + others)[: max(max_classes, len(usable))]
    fig, ax = plotting.figure_and_axes(
        ax, figsize=(9.0, 1.8 + 0.42 * max(len(vnodes), len(shown))))  # fmt: skip
    ys_v = {v: len(vnodes) - 1 - i for i, v in enumerate(vnodes)}
    scale = (len(vnodes) - 1) / max(1, len(shown) - 1) if len(shown) > 1 else 0.0
    ys_c = {c: (len(vnodes) - 1) - k * scale if len(shown) > 1 else (len(vnodes) - 1) / 2
            for k, c in enumerate(shown)}  # fmt: skip
    for v in vnodes:
        for c in cand[v]:
            if c in ys_c:
                (line,) = ax.plot([0.0, 1.0], [ys_v[v], ys_c[c]], color="#ff7f0e",
                                  linewidth=0.9, alpha=0.7, zorder=1)  # fmt: skip
                line.set_gid(f"cand-{v}-{c}")
    for v in vnodes:
        bad = not cand[v]
        (pt,) = ax.plot([0.0], [ys_v[v]], marker="X" if bad else "o", markersize=9,
                        color=plotting.CROSS, zorder=3, linestyle="none")  # fmt: skip
        pt.set_gid(f"vnode-{v}")
        node = top.nodes[v]
        text = f"{v} ({node.type})"
        if bad:
            why = pr.cand_why[pr.vnames.index(v)]
            text += f": no class fits ({why})" if why else ": no class fits"
        ax.annotate(text, (0.0, ys_v[v]), xytext=(-8, 0), textcoords="offset points",
                    ha="right", va="center", fontsize=8)  # fmt: skip
    for a, b in ((lk.a, lk.b) for lk in top.links.values()):
        if a in ys_v and b in ys_v and a != b:
            ax.annotate("", (0.0, ys_v[b]), xytext=(0.0, ys_v[a]),
                        arrowprops={"arrowstyle": "-", "color": "#1f77b4", "linewidth": 0.8,
                                    "linestyle": "--",
                                    "connectionstyle": "arc3,rad=0.5"})  # fmt: skip
    free = 0
    for c in shown:
        members = [pr.pnames[int(p)] for p in pr.members[c]]
        on = c in set(usable)
        free += len(members) if on else 0
        (pt,) = ax.plot([1.0], [ys_c[c]], marker="s", markersize=10, linestyle="none",
                        color="#ff7f0e" if on else plotting.GREY, zorder=3)  # fmt: skip
        pt.set_gid(f"class-{c}")
        names = ", ".join(members[:4]) + (" ..." if len(members) > 4 else "")
        ax.annotate(f"{len(members)} PC{'s' if len(members) != 1 else ''}: {names}",
                    (1.0, ys_c[c]), xytext=(8, 0), textcoords="offset points", ha="left",
                    va="center", fontsize=8, color="black" if on else "#777777")  # fmt: skip
    hidden = len(usable) + len(others) - len(shown)
    ax.set_xlim(-1.2, 2.2)
    ax.set_ylim(-1.0, max(len(vnodes), 1) + 0.2)
    ax.axis("off")
    ax.text(0.0, max(len(vnodes), 1) - 0.2, f"{len(vnodes)} virtual nodes of the conflict",
            ha="center", fontsize=9, weight="bold")  # fmt: skip
    ax.text(1.0, max(len(vnodes), 1) - 0.2,
            f"PCs they can use: {free}" + (f" ({hidden} more classes not drawn)" if hidden
                                           else ""),
            ha="center", fontsize=9, weight="bold")  # fmt: skip
    if title is None:
        first = doc["sentence"].split(" Nearest fix")[0]
        title = "\n".join(textwrap.wrap(first, 100)[:4])
    return plotting.finish(fig, path, title=title, ax=ax)
