"""Pictures of a CTAAP allocation (needs the ``[plot]`` extra: matplotlib)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._shared import plotting
from .._shared.docs import filled
from .model import Offer, Request, check_compatible

__all__ = ["plot_allocation", "allocation_links"]


def _assignment(result: Any, n: int) -> np.ndarray:
    if isinstance(result, dict):
        result = result.get("assignment")
    values = getattr(result, "assignment", result)
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"result must be a SolveResult or an assignment array: {exc}") from None
    if arr.shape != (n,):
        raise ValueError(f"result: the assignment must have shape ({n},), got {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError("result: the assignment must hold integer cluster indices (or -1)")
    return arr.astype(np.int64)


def allocation_links(request: Request, assignment: Any) -> dict:
    """The request's links (pairs of tasks) sorted by how an allocation places them.

    Parameters
    ----------
    request : Request
    assignment : array_like of int, shape (n,)
        Cluster of each task, -1 when not allocated.

    Returns
    -------
    dict
        ``"intra"``, ``"cross"`` and ``"unallocated"``: lists of ``(i, k)`` pairs with
        ``i < k`` (a link counted once whatever its direction): both tasks in one cluster,
        in two different clusters, at least one task not allocated.

    Examples
    --------
    >>> import coalloc.ctaap as ctaap
    >>> r = ctaap.Request({"cpu": [1, 1, 1]}, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    >>> allocation_links(r, [0, 1, -1])
    {'intra': [], 'cross': [(0, 1)], 'unallocated': [(1, 2)]}
    """
    a = _assignment(assignment, request.n)
    coo = request.bandwidth.tocoo()
    pairs = sorted({(min(i, k), max(i, k)) for i, k in zip(coo.row.tolist(), coo.col.tolist())})
    out: dict = {"intra": [], "cross": [], "unallocated": []}
    for i, k in pairs:
        if a[i] < 0 or a[k] < 0:
            out["unallocated"].append((i, k))
        elif a[i] == a[k]:
            out["intra"].append((i, k))
        else:
            out["cross"].append((i, k))
    return out


def _positions(a: np.ndarray, m: int) -> np.ndarray:
    """Tasks of a cluster on a small circle around the cluster's centre; the clusters on a
    large circle; unallocated tasks in a grid on the right."""
    n = a.shape[0]
    pos = np.zeros((n, 2))
    radius = 4.0
    for j in range(m):
        members = np.flatnonzero(a == j)
        angle = 2 * np.pi * j / max(m, 1) + np.pi / 2
        centre = np.array([radius * np.cos(angle), radius * np.sin(angle)])
        r = 0.25 + 0.12 * np.sqrt(members.size)
        for t, i in enumerate(members):
            phi = 2 * np.pi * t / max(members.size, 1)
            pos[i] = centre + (r * np.cos(phi), r * np.sin(phi)) if members.size > 1 else centre
    rest = np.flatnonzero(a < 0)
    cols = max(1, int(np.ceil(np.sqrt(rest.size / 2.0))))
    for t, i in enumerate(rest):
        pos[i] = (radius + 2.0 + 0.6 * (t % cols), radius - 0.6 * (t // cols))
    return pos


@filled
def plot_allocation(
    request: Request,
    offer: Offer,
    result: Any,
    *,
    ax: Any = None,
    path: Any = None,
    labels: Optional[bool] = None,
    show_unallocated_links: bool = False,
    title: Optional[str] = None,
) -> Any:
    """Draw the request graph with its tasks coloured by the cluster they are allocated to.

    Tasks of one cluster sit together around the cluster's place; unallocated tasks are grey
    on the right; a link inside a cluster is a thin solid line, a link between two clusters
    a dashed red line (it uses inter-cluster bandwidth); links of unallocated tasks are left
    out unless ``show_unallocated_links``. The legend gives each cluster's tasks / machines.

    Parameters
    ----------
    %(ctaap_pair)s
    result : SolveResult, dict or array_like of int
        A result (its ``assignment``), a result read by :func:`read_result`, or the
        assignment itself (cluster of each task, -1 when not allocated).
    ax : matplotlib.axes.Axes, optional
        Axes to draw into; default a new figure.
    path : str or path-like, optional
        Also save the figure there (format from the suffix).
    labels : bool, optional
        Write task names (or numbers) next to the tasks; default when there are at most 60.
    show_unallocated_links : bool, default False
        Also draw, dotted grey, the links that touch an unallocated task.
    title : str, optional
        Default: ``"allocated A/n tasks on m clusters"``.

    Returns
    -------
    matplotlib.figure.Figure
        One scatter collection per cluster (label ``"cluster j ..."``), one for the
        unallocated tasks (label ``"unallocated ..."``), and line collections labelled
        ``"intra-cluster link"``, ``"cross-cluster link"`` (dashed) and
        ``"unallocated link"``.

    Raises
    ------
    ImportError
        Without matplotlib (``pip install "coalloc[plot]"``).
    TypeError, ValueError
        When the models do not match or the assignment has the wrong shape or values.

    Examples
    --------
    >>> import coalloc.ctaap as ctaap
    >>> request, offer = ctaap.generators.fig2(1, n_tasks=20, seed=0)
    >>> fig = plot_allocation(request, offer, ctaap.solve(request, offer, seed=0))
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "allocation.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    check_compatible(request, offer)
    a = _assignment(result, request.n)
    if np.any((a < -1) | (a >= offer.m)):
        raise ValueError(f"result: cluster indices must be in [-1, {offer.m})")
    fig, ax = plotting.figure_and_axes(ax, figsize=(9.0, 7.0))
    from matplotlib.collections import LineCollection

    pos = _positions(a, offer.m)
    links = allocation_links(request, a)
    styles = {
        "intra": dict(colors="#555555", linewidths=0.8, linestyles="solid", alpha=0.6,
                      label="intra-cluster link"),
        "cross": dict(colors=plotting.CROSS, linewidths=1.0, linestyles="dashed", alpha=0.8,
                      label="cross-cluster link"),
        "unallocated": dict(colors=plotting.GREY, linewidths=0.5, linestyles="dotted",
                            alpha=0.4, label="unallocated link"),
    }  # fmt: skip
    for kind, style in styles.items():
        pairs = links[kind]
        if not pairs or (kind == "unallocated" and not show_unallocated_links):
            continue
        segs = [(tuple(pos[i]), tuple(pos[k])) for i, k in pairs]
        ax.add_collection(LineCollection(segs, zorder=1, **style))
    colors = plotting.category_colors(offer.m)
    names = getattr(request, "names", None)
    cluster_names = getattr(offer, "names", None)
    for j in range(offer.m):
        members = np.flatnonzero(a == j)
        cname = cluster_names[j] if cluster_names is not None else f"cluster {j}"
        label = f"{cname}: {members.size} tasks / {int(offer.capacity[j])} machines"
        ax.scatter(pos[members, 0], pos[members, 1], s=120, color=colors[j], edgecolors="black",
                   linewidths=0.5, zorder=2, label=label)  # fmt: skip
    rest = np.flatnonzero(a < 0)
    ax.scatter(pos[rest, 0], pos[rest, 1], s=80, color=plotting.GREY, edgecolors="#777777",
               linewidths=0.5, zorder=2, label=f"unallocated: {rest.size} tasks")  # fmt: skip
    if labels is None:
        labels = request.n <= 60
    if labels:
        for i in range(request.n):
            text = str(names[i]) if names is not None else str(i)
            ax.annotate(text, pos[i], fontsize=7, ha="center", va="center", zorder=3)
    ax.set_aspect("equal")
    ax.autoscale()
    ax.margins(0.08)
    ax.set_axis_off()
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if title is None:
        n_alloc = int(np.count_nonzero(a >= 0))
        title = f"allocated {n_alloc}/{request.n} tasks on {offer.m} clusters"
    return plotting.finish(fig, path, title=title, ax=ax)
