"""Pictures of load sharing: coalitions over the generations of DMCF-GGA, node loads
against capacity, and the GAP heuristic's objective and bound against time (needs the
``[plot]`` extra: matplotlib)."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .._shared import plotting
from .._shared.docs import filled
from .model import LoadSharingProblem, node_loads

__all__ = ["plot_coalitions", "plot_loads", "plot_gap_trajectory", "coalition_matrix"]


def coalition_matrix(result: Any) -> tuple:
    """The recorded coalition structures as one matrix, nodes ordered by final coalition.

    Parameters
    ----------
    result : ShareResult
        A DMCF-GGA result run with ``coalition_history=k``.

    Returns
    -------
    generations : ndarray of int64, shape (R,)
        The generation of every recorded structure.
    matrix : ndarray of int64, shape (R, n)
        ``matrix[r, c]``: coalition of node ``order[c]`` at ``generations[r]``.
    order : ndarray of int64, shape (n,)
        Nodes sorted by their last recorded coalition (then by index).

    Raises
    ------
    ValueError
        When the result kept no coalition history.
    """
    history = getattr(result, "coalition_history", None)
    if not history:
        raise ValueError(
            "result has no coalition history: run dmcf-gga with coalition_history=K "
            "(keep the coalitions every K generations)"
        )
    gens = np.array([g for g, _ in history], dtype=np.int64)
    mat = np.vstack([np.asarray(c, dtype=np.int64) for _, c in history])
    order = np.lexsort((np.arange(mat.shape[1]), mat[-1]))
    return gens, mat[:, order], order


@filled
def plot_coalitions(
    problem: LoadSharingProblem,
    result: Any,
    *,
    ax: Any = None,
    path: Any = None,
    title: Optional[str] = None,
) -> Any:
    """Draw how DMCF-GGA's coalitions change over the generations.

    Top: one row per recorded generation, one column per node (nodes grouped by their final
    coalition), coloured by the node's coalition then: a node that migrates changes colour.
    Below (when no ``ax`` is given): the best total throughput after every generation
    against the bound ``min(total load, total capacity)``.

    Parameters
    ----------
    problem : LoadSharingProblem
    result : ShareResult
        From ``dmcf_gga(..., coalition_history=k)`` (or ``share(..., "dmcf-gga",
        coalition_history=k)``).
    ax : matplotlib.axes.Axes, optional
        Draw only the coalition map into these axes.
    %(plot_path)s
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        The coalition map is an image (``axes.images[0]``) whose array is the matrix of
        :func:`coalition_matrix`, coloured with one distinct colour per coalition
        (:func:`coalloc._shared.plotting.category_colors`: none repeated), the final
        coalitions named ``c<k>`` on the top edge; the throughput curve is the line
        labelled ``"best throughput"``.

    Raises
    ------
    %(plot_raises)s
    ValueError
        When the result kept no coalition history or does not match the problem.

    Examples
    --------
    >>> from coalloc import loadshare
    >>> prob = loadshare.generators.paper_setup(n_nodes=100, seed=1)
    >>> res = loadshare.dmcf_gga(prob, coalition_size=23, seed=0, coalition_history=5)
    >>> fig = plot_coalitions(prob, res)
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "coalitions.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    gens, mat, order = coalition_matrix(result)
    if mat.shape[1] != problem.n_nodes:
        raise ValueError(
            f"result: the coalitions cover {mat.shape[1]} nodes but the problem has "
            f"{problem.n_nodes}"
        )
    if ax is None:
        plt = plotting.import_pyplot()
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(10.0, 7.0), constrained_layout=True,
                                      gridspec_kw={"height_ratios": (2.2, 1.0)})  # fmt: skip
    else:
        fig, ax = plotting.figure_and_axes(ax)
        ax2 = None
    from matplotlib.colors import ListedColormap

    k = int(mat.max()) + 1 if mat.size else 1
    # one colour per coalition, none repeated (the colours used to wrap after twenty)
    cmap = ListedColormap(plotting.category_colors(k))
    ax.imshow(mat, aspect="auto", interpolation="nearest", cmap=cmap, vmin=-0.5,
              vmax=len(cmap.colors) - 0.5)  # fmt: skip
    rows = np.linspace(0, len(gens) - 1, min(len(gens), 8)).round().astype(int)
    ax.set_yticks(rows)
    ax.set_yticklabels([str(gens[r]) for r in rows])
    ax.set_ylabel("generation")
    ax.set_xlabel("node (grouped by final coalition)")
    final = mat[-1]
    bounds = np.flatnonzero(np.diff(final)) + 0.5
    for b in bounds:
        ax.axvline(b, color="white", linewidth=0.6)
    # the final coalitions named on the top edge (at most 40 names), so that two coalitions
    # of similar colours are still told apart
    edges = np.concatenate([[-0.5], bounds, [final.size - 0.5]])
    centres = (edges[:-1] + edges[1:]) / 2
    ids = final[np.round(centres).astype(int).clip(0, max(final.size - 1, 0))]
    step = max(1, int(np.ceil(len(centres) / 40)))
    top = ax.secondary_xaxis("top")
    top.set_xticks(centres[::step], [f"c{int(c)}" for c in ids[::step]], fontsize=6,
                   rotation=90)  # fmt: skip
    top.set_xlabel("final coalition", fontsize=8)
    if ax2 is not None:
        hist = np.asarray(getattr(result, "history", None) if result is not None else [])
        if hist is not None and hist.size:
            ax2.plot(np.arange(hist.size), hist, color="#1f77b4", label="best throughput")
        ax2.axhline(problem.bound, color=plotting.CROSS, linestyle="--",
                    label=f"bound {problem.bound:.6g}")  # fmt: skip
        ax2.set_xlabel("generation")
        ax2.set_ylabel("throughput")
        ax2.legend(loc="lower right", fontsize=8)
    if title is None:
        n_coal = len(np.unique(final))
        moves = int(getattr(result, "migrations", 0))
        title = (
            f"{problem.n_nodes} nodes in {n_coal} coalitions; {moves} migrations over "
            f"{int(gens[-1])} generations"
        )
    return plotting.finish(fig, path, title=title, ax=ax)


@filled
def plot_loads(
    problem: LoadSharingProblem,
    result: Any,
    *,
    ax: Any = None,
    path: Any = None,
    sort: bool = True,
    title: Optional[str] = None,
) -> Any:
    """Draw every node's load against its capacity, before and after sharing.

    Parameters
    ----------
    problem : LoadSharingProblem
    result : ShareResult, dict or array_like of int
        A result (its ``placement``), its JSON, or the node of every job.
    ax : matplotlib.axes.Axes, optional
    %(plot_path)s
    sort : bool, default True
        Nodes in decreasing capacity (else by index).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Bars ``"load after sharing"`` (up to the capacity, one per node in the drawn order)
        with ``"over capacity (not served)"`` stacked on them, the capacity as the step line
        ``"capacity"`` and the load before sharing as points.

    Raises
    ------
    %(plot_raises)s
    ValueError
        When the placement does not fit the problem.

    Examples
    --------
    >>> from coalloc import loadshare
    >>> prob = loadshare.generators.paper_setup(n_nodes=100, seed=1)
    >>> fig = plot_loads(prob, loadshare.share(prob, seed=0))
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "loads.png"
    ...     fig.savefig(path, dpi=40)
    ...     path.read_bytes()[:4]
    b'\\x89PNG'
    """
    placement = result.get("placement") if isinstance(result, dict) else getattr(
        result, "placement", result)  # fmt: skip
    place = np.asarray(placement)
    if place.shape != (problem.n_jobs,):
        raise ValueError(f"result: the placement must have shape ({problem.n_jobs},)")
    if place.size and (not np.issubdtype(place.dtype, np.integer) or place.min() < 0
                       or place.max() >= problem.n_nodes):  # fmt: skip
        raise ValueError(f"result: the placement must hold node indices in [0, {problem.n_nodes})")
    loads = node_loads(problem, place.astype(np.int64))
    cap = problem.capacity
    order = np.argsort(-cap, kind="stable") if sort else np.arange(problem.n_nodes)
    fig, ax = plotting.figure_and_axes(ax, figsize=(10.0, 4.5))
    x = np.arange(problem.n_nodes)
    over = loads[order] > cap[order] * (1 + 1e-12)
    served = np.minimum(loads[order], cap[order])
    ax.bar(x, served, width=1.0, color="#4c72b0", label="load after sharing")
    ax.bar(x, loads[order] - served, bottom=served, width=1.0, color=plotting.CROSS,
           label="over capacity (not served)")  # fmt: skip
    ax.step(x, cap[order], where="mid", color="black", linewidth=1.0, label="capacity")
    top = 1.25 * max(float(cap.max(initial=0.0)), float(loads.max(initial=0.0)), 1e-12)
    before = problem.load[order]
    high = before > top
    ax.plot(x[~high], before[~high], ".", color="#555555", markersize=3,
            label="load before sharing")  # fmt: skip
    if high.any():
        ax.plot(x[high], np.full(int(high.sum()), 0.98 * top), "^", color="#555555",
                markersize=4, label="load before sharing (off the scale)")  # fmt: skip
    ax.set_ylim(0.0, top)
    ax.set_xlabel("node" + (" (by decreasing capacity)" if sort else ""))
    ax.set_ylabel("load (Mflops)")
    ax.set_xlim(-0.5, problem.n_nodes - 0.5)
    ax.legend(loc="upper right", fontsize=8)
    if title is None:
        tp = float(np.minimum(loads, cap).sum())
        title = (
            f"throughput {tp:.6g} of the bound {problem.bound:.6g} "
            f"({100 * tp / problem.bound if problem.bound else 100:.2f}%); "
            f"{int(over.sum())} nodes over capacity"
        )
    return plotting.finish(fig, path, title=title, ax=ax)


@filled
def plot_gap_trajectory(
    result: Any,
    *,
    ax: Any = None,
    path: Any = None,
    best_known: Optional[float] = None,
    label: str = "",
    logx: bool = False,
    title: Optional[str] = None,
) -> Any:
    """Draw the GAP heuristic's best objective and proven bound against time.

    Parameters
    ----------
    result : GapResult
        A heuristic result of :func:`solve_gap` (its ``trajectory``: rows ``(seconds,
        objective, bound)``, NaN where none yet).
    ax : matplotlib.axes.Axes, optional
        Draw there (several results on one axes: give each a ``label``).
    %(plot_path)s
    best_known : float, optional
        A reference value (e.g. the literature's best known), drawn as a dotted line.
    label : str, default ""
        Prefix of the line labels.
    logx : bool, default False
        Time on a logarithmic axis.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Step lines ``label + "objective"`` (the best assignment so far, from its first
        one) and ``label + "bound"`` (from the first bound), each held to the end of the
        run (``timings["total"]``).

    Raises
    ------
    %(plot_raises)s
    ValueError
        When the result has no trajectory (the exact method's).

    Examples
    --------
    >>> from coalloc.loadshare import generate_gap, solve_gap, plot_gap_trajectory
    >>> res = solve_gap(generate_gap("d", 5, 40, seed=0), iterations=2000)
    >>> fig = plot_gap_trajectory(res)
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['objective', 'bound']
    """
    traj = getattr(result, "trajectory", None)
    if traj is None:
        raise ValueError("result: no trajectory (only the heuristic records one)")
    traj = np.asarray(traj, dtype=np.float64)
    if traj.ndim != 2 or traj.shape[1] != 3:
        raise ValueError("result: the trajectory must have shape (k, 3)")
    end = float((getattr(result, "timings", None) or {}).get("total", 0.0))
    if traj.size:
        end = max(end, float(traj[:, 0].max()))
    fig, ax = plotting.figure_and_axes(ax, figsize=(8.0, 4.5))
    drawn = False
    for col, name, color in ((1, "objective", "#4c72b0"), (2, "bound", "#dd8452")):
        keep = ~np.isnan(traj[:, col])
        if not keep.any():
            continue
        t = np.append(traj[keep, 0], end)
        v = np.append(traj[keep, col], traj[keep, col][-1])
        if logx:  # a first point at time 0 has no place on a log axis
            t = np.maximum(t, 1e-4)
        ax.step(t, v, where="post", color=color, linewidth=1.5, label=label + name)
        drawn = True
    if best_known is not None:
        ax.axhline(float(best_known), color="black", linestyle=":", linewidth=1.0,
                   label="best known")  # fmt: skip
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel("seconds since the call")
    sense = getattr(result, "sense", "min")
    ax.set_ylabel("cost" if sense == "min" else "profit")
    if drawn or best_known is not None:
        ax.legend(loc="best", fontsize=8)
    if title is None:
        obj, bound = getattr(result, "objective", None), getattr(result, "bound", None)
        parts = [f"objective {obj:.8g}" if obj is not None else "no assignment"]
        if bound is not None:
            parts.append(f"bound {bound:.8g}")
        if best_known is not None and obj is not None and best_known:
            parts.append(f"{100 * (obj - best_known) / abs(best_known):+.3f}% from the best known")
        title = "; ".join(parts) + f" ({end:.3g} s)"
    return plotting.finish(fig, path, title=title, ax=ax)
