"""Pictures of collective co-allocation: timetables with the new reservation, and why a
request has no start (needs the ``[plot]`` extra: matplotlib)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._shared import plotting
from .._shared.docs import filled
from ._order import demand_first
from .model import CollectiveRequest, ResourcePool

__all__ = ["plot_timetable", "plot_explanation"]


def _field(result: Any, name: str) -> Any:
    if isinstance(result, dict):
        return result.get(name)
    return getattr(result, name, None)


@filled
def plot_timetable(
    request: CollectiveRequest,
    pool: ResourcePool,
    result: Any = None,
    *,
    property: Optional[str] = None,
    nodes: Any = None,
    max_nodes: int = 30,
    until: Optional[float] = None,
    ax: Any = None,
    path: Any = None,
    title: Optional[str] = None,
) -> Any:
    """Draw, per node, the share of one property reserved over time, with the new reservation.

    Every node is a lane; the grey step area is the amount already reserved (as a share of the
    node's capacity), the red boxes are the reservation of ``result`` (from its start, for the
    request's duration, as high as the amount reserved on that node), and the request's window
    (earliest start to latest start + duration) is shaded.

    Parameters
    ----------
    request : CollectiveRequest
        The request (demand first, as ``solve``; the old order ``(pool, request)`` still
        works, with a ``DeprecationWarning``).
    pool : ResourcePool
        The pool the result was computed on (before the reservation was made).
    result : CoallocationResult or dict, optional
        A result (or its JSON); None draws the timetables and the window only.
    property : str, optional
        The property drawn; default the request's first property with a total (or the
        pool's first).
    nodes : sequence of int, optional
        Nodes drawn, in order; default the chosen resources, then the other nodes, at most
        ``max_nodes`` in all.
    max_nodes : int, default 30
    until : float, optional
        Right end of the time axis; default a little after the window's end.
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        One fill per lane of what is already reserved (gid ``"lane-<node>"``), one fill per
        chosen resource stacked on it from the start for the duration (gid
        ``"new-<node>"``, as high as the new share), the window as a shaded span.

    Raises
    ------
    %(plot_raises)s
    ValueError
        On an unknown property or node.

    Examples
    --------
    >>> from coalloc.collective import ResourcePool, CollectiveRequest, solve
    >>> pool = ResourcePool([[4, 8.0], [2, 4.0]], ["cores", "ram"])
    >>> req = CollectiveRequest(3600, 2, total={"ram": 6})
    >>> fig = plot_timetable(req, pool, solve(req, pool))
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "timetable.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    request, pool = demand_first(request, pool, "plot_timetable")
    names = list(pool.names)
    if property is None:
        property = next((p for p in request.total if p in names), names[0])
    if property not in names:
        raise ValueError(f"property must be one of {names}, got {property!r}")
    col = names.index(property)
    resources = _field(result, "resources") if result is not None else None
    start = _field(result, "start") if result is not None else None
    chosen = [] if resources is None else [int(j) for j in resources]
    if nodes is None:
        rest = [j for j in range(pool.n_nodes) if j not in set(chosen)]
        nodes = (chosen + rest)[: max(max_nodes, len(chosen))]
    nodes = [int(j) for j in nodes]
    if any(not 0 <= j < pool.n_nodes for j in nodes):
        raise ValueError(f"nodes must be in [0, {pool.n_nodes})")
    times = np.asarray(pool.times, dtype=np.float64)
    end = request.latest_start + request.duration
    if until is None:
        until = max(end, times[-1], (start or 0.0) + request.duration) * 1.05 + 1.0
    fig, ax = plotting.figure_and_axes(ax, figsize=(10.0, 1.0 + 0.32 * len(nodes)))
    ax.axvspan(request.earliest_start, end, color="#1f77b4", alpha=0.08, zorder=0,
               label="request window")  # fmt: skip
    ax.axvline(request.earliest_start, color="#1f77b4", linewidth=0.8, linestyle=":")
    ax.axvline(request.latest_start, color="#1f77b4", linewidth=0.8, linestyle="--",
               label="latest start")  # fmt: skip
    cap = np.asarray(pool.capacity)[:, col]
    reserved = np.asarray(pool.reserved)[:, col, :]
    xs = np.append(times, until)
    amounts = _field(result, "amounts") if result is not None else None
    amount_of = {}
    if amounts is not None:
        a = np.asarray(amounts, dtype=np.float64)
        for row, j in enumerate(chosen):
            amount_of[j] = float(a[row, col])
    for lane, j in enumerate(nodes):
        base = len(nodes) - 1 - lane
        share = np.divide(reserved[j], cap[j], out=np.zeros_like(reserved[j]), where=cap[j] > 0)
        ys = base + 0.9 * np.append(share, share[-1])
        fill = ax.fill_between(xs, base, ys, step="post", color=plotting.GREY, linewidth=0,
                               zorder=1, label="reserved" if lane == 0 else None)  # fmt: skip
        fill.set_gid(f"lane-{j}")
        if j in amount_of and start is not None:
            # the new reservation stacked on what is already reserved during it
            stop = start + request.duration
            inside = times[(times > start) & (times < stop)]
            px = np.concatenate([[start], inside, [stop]])
            low = share[np.searchsorted(times, px, side="right") - 1]
            low[-1] = low[-2] if low.size > 1 else low[-1]
            h = amount_of[j] / cap[j] if cap[j] > 0 else 0.0
            new = ax.fill_between(px, base + 0.9 * low, base + 0.9 * (low + h), step="post",
                                  color=plotting.CROSS, alpha=0.8, linewidth=0.6,
                                  edgecolor="black", zorder=2,
                                  label="new reservation" if j == chosen[0] else None)  # fmt: skip
            new.set_gid(f"new-{j}")
        ax.axhline(base, color="#dddddd", linewidth=0.5, zorder=0)
    ax.set_yticks([len(nodes) - 1 - lane + 0.45 for lane in range(len(nodes))])
    ax.set_yticklabels([pool.node_names[j] + (" *" if j in amount_of else "") for j in nodes],
                       fontsize=7)  # fmt: skip
    ax.set_xlim(0.0, until)
    ax.set_ylim(-0.1, len(nodes))
    ax.set_xlabel("time (s from the pool's origin)")
    ax.set_ylabel(f"{property}: reserved share per node")
    ax.legend(loc="upper right", fontsize=8, framealpha=0.9)
    if title is None:
        if start is not None:
            title = (
                f"{len(chosen)} resources from t = {start:g} s for {request.duration:g} s "
                f"(earliest possible {request.earliest_start:g} s); {property}"
            )
        else:
            title = f"timetables of {property}"
    return plotting.finish(fig, path, title=title, ax=ax)


def _blocked(pool: ResourcePool, conflict: CollectiveRequest) -> np.ndarray:
    """``(n_nodes, n_intervals)``: the node cannot hold one node of ``conflict`` then (a
    label it lacks, less free than the per-node minimum of a property, the model's small
    default minimum where the request gives none, or less than its share of a total)."""
    names = list(pool.names)
    n, k = pool.n_nodes, len(pool.times)
    out = np.zeros((n, k), dtype=bool)
    labels = pool.labels
    for key, want in conflict.labels.items():
        allowed = {want} if isinstance(want, str) else set(want)
        have = labels.get(key)
        bad = (np.ones(n, dtype=bool) if have is None
               else np.array([v not in allowed for v in have], dtype=bool))  # fmt: skip
        out |= bad[:, None]
    cap = np.asarray(pool.capacity, dtype=np.float64)
    reserved = np.asarray(pool.reserved, dtype=np.float64)
    e, d = conflict.vectors(names)  # every property: its minimum (a small one by default)
    for col in range(len(names)):
        need = max(float(e[col]), float(d[col]) / conflict.count)
        free = cap[:, col][:, None] - reserved[:, col, :]
        out |= free < need * (1 - 1e-9)
    return out


@filled
def plot_explanation(
    request: CollectiveRequest,
    pool: ResourcePool,
    explanation: Any = None,
    *,
    max_nodes: int = 30,
    time_limit: float = 10.0,
    ax: Any = None,
    path: Any = None,
    title: Optional[str] = None,
) -> Any:
    """Draw why ``request`` has no admissible start: its window, the nodes, the blocked slots.

    Every node is a lane over time; the grey step area is the share of the conflict's first
    property already reserved (as in :func:`plot_timetable`), and red marks the intervals in
    which the node cannot hold one node of the conflict (it lacks a required label, or has
    less free than the per-node minimum or its share of a total). The window (earliest start
    to latest start + duration) is shaded: no ``N`` lanes stay free of red for the duration
    from any start in it. The nearest fix in time (the earliest later start, when the
    explanation found one) is drawn as a green span.

    Parameters
    ----------
    request : CollectiveRequest
        The rejected request.
    pool : ResourcePool
        The pool it was rejected on.
    explanation : Explanation or dict, optional
        Its explanation (:func:`~coalloc.collective.explain.explain_request`, or its
        ``to_dict()``); None computes it.
    max_nodes : int, default 30
        Lanes drawn at most: the nodes blocked least in the window first.
    time_limit : float, default 10.0
        Seconds for the explanation when it is computed here.
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    title : str, optional
        Default: the conflict's requirements.

    Returns
    -------
    matplotlib.figure.Figure
        One fill per lane of what is reserved (gid ``"lane-<node>"``), one of its blocked
        intervals (gid ``"blocked-<node>"``), the window as a shaded span and the nearest
        start as a green span (gid ``"fix"``).

    Raises
    ------
    %(plot_raises)s
    ValueError
        When the request fits (nothing to explain).

    Examples
    --------
    >>> from coalloc.collective import ResourcePool, CollectiveRequest
    >>> pool = ResourcePool([[4.0], [4.0]], ["cores"]).reserve(0, 3600, [0], [[4.0]])
    >>> req = CollectiveRequest(600, 2, 0, 600, minimum={"cores": 1})
    >>> fig = plot_explanation(req, pool)
    >>> sorted(a.get_gid() for a in fig.axes[0].collections if a.get_gid())[:2]
    ['blocked-0', 'blocked-1']
    """
    from .explain import explain_request

    doc = plotting.explanation_document(
        explanation, lambda: explain_request(pool, request, time_limit=time_limit),
        "the request fits the pool (or its rejection was not proved in time_limit): nothing "
        "to explain")  # fmt: skip
    conflict = CollectiveRequest(**doc["conflict"])
    blocked = _blocked(pool, conflict)
    times = np.asarray(pool.times, dtype=np.float64)
    te, tl, dur = request.earliest_start, request.latest_start, request.duration
    later = [r for r in doc.get("relaxations", ()) if r.get("kind") == "later_start"]
    fix = float(later[0]["changes"]["latest_start"]) if later else None
    end = max(tl + dur, (fix + dur) if fix is not None else 0.0)
    until = max(end, times[-1] if times.size else 0.0) * 1.05 + 1.0
    # the nodes blocked least inside the window first: the candidates a user looks at
    inside = (np.append(times[1:], np.inf) > te) & (times < tl + dur)
    share = blocked[:, inside].mean(axis=1) if inside.any() else np.zeros(pool.n_nodes)
    nodes = [int(j) for j in np.argsort(share, kind="stable")[:max_nodes]]
    names = list(pool.names)
    props = [p for p in names if p in conflict.minimum or p in conflict.total] or names[:1]
    col = names.index(props[0])
    plt_fig, ax = plotting.figure_and_axes(ax, figsize=(10.0, 1.3 + 0.32 * len(nodes)))
    ax.axvspan(te, tl + dur, color="#1f77b4", alpha=0.08, zorder=0, label="request window")
    ax.axvline(tl, color="#1f77b4", linewidth=0.8, linestyle="--", label="latest start")
    if fix is not None:
        span = ax.axvspan(fix, fix + dur, color="#2ca02c", alpha=0.18, zorder=0,
                          label=f"nearest fix: start at {fix:g} s")  # fmt: skip
        span.set_gid("fix")
    cap = np.asarray(pool.capacity, dtype=np.float64)[:, col]
    reserved = np.asarray(pool.reserved, dtype=np.float64)[:, col, :]
    xs = np.append(times, until)
    for lane, j in enumerate(nodes):
        base = len(nodes) - 1 - lane
        used = np.divide(reserved[j], cap[j], out=np.zeros_like(reserved[j]), where=cap[j] > 0)
        fill = ax.fill_between(xs, base, base + 0.9 * np.append(used, used[-1]), step="post",
                               color=plotting.GREY, linewidth=0, zorder=1,
                               label="reserved" if lane == 0 else None)  # fmt: skip
        fill.set_gid(f"lane-{j}")
        row = np.append(blocked[j], blocked[j][-1]).astype(float)
        red = ax.fill_between(xs, base, base + 0.9 * row, step="post", color=plotting.CROSS,
                              alpha=0.35, linewidth=0, zorder=2,
                              label="cannot hold one node of the conflict"
                              if lane == 0 else None)  # fmt: skip
        red.set_gid(f"blocked-{j}")
        ax.axhline(base, color="#dddddd", linewidth=0.5, zorder=0)
    ax.set_yticks([len(nodes) - 1 - lane + 0.45 for lane in range(len(nodes))])
    ax.set_yticklabels([pool.node_names[j] for j in nodes], fontsize=7)
    ax.set_xlim(0.0, until)
    ax.set_ylim(-0.1, len(nodes) + 0.6)
    ax.set_xlabel("time (s from the pool's origin)")
    ax.set_ylabel(f"{props[0]}: reserved share per node")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, framealpha=0.9)
    if title is None:
        title = (f"No start fits: {'; '.join(doc['demand'])}\n"
                 f"(red: the node cannot hold one of the {conflict.count} nodes)")  # fmt: skip
    return plotting.finish(plt_fig, path, title=title, ax=ax)
