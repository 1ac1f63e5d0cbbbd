"""Block layouts of a box stencil sized by the machine: a candidate for the default mapper.

A stencil (a task graph that contains a 2-D or 3-D box lattice in C order, found by
:func:`coalloc.taskmap.latticebound.find_lattice`) on a resource graph whose processors sit in
groups behind bridges (racks, nodes: :class:`coalloc.taskmap.cutbound._Sides`, the tree of
sides) is laid out by guillotine cuts of the box down that tree: the items of a side (its
child sides and its own processors, each with the capacity below it) are split in two halves
of near-equal capacity, the box along its longest axis in proportion to the halves'
capacities, each half recursively. A part that keeps a face of the whole box gets its
capacity times ``1 + e`` in the proportion (its cells' streams through that face are none,
so it can hold more for the same uplink: corner nodes larger, middle nodes smaller; issue 40,
bench/taskmap/ISSUE40.md, h58bound), the heavier half on that side. ``e`` is searched per
depth of the tree over :data:`_BONUS` (one value for all depths, then each depth in turn),
every layout scored by its maximum occupancy; the best is refined by the multilevel mapper's
bottleneck moves (:func:`coalloc.taskmap.refinement.refine`).

:func:`grid_layout` returns that mapping (or None: no lattice, no bridge, too large);
:func:`offer_grid` is the default's hook (:func:`coalloc.taskmap.portfolio.map_portfolio`): the
caller's answer is replaced only when the layout's maximum occupancy is strictly lower.
Deterministic: no seed, no clock in the answer (under a time limit it is skipped, not cut,
when :data:`GRID_SECONDS` predicts it past the deadline).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from .._shared import interrupt
from .._shared.params import _TimeLimitReached
from .latticebound import find_lattice, side_capacities
from .model import ResourceGraph, TaskGraph

__all__ = ["grid_layout", "grid_candidate", "offer_grid", "GRID_STARTS"]

#: The default mapper also tries the block layout on box stencils (measured:
#: bench/taskmap/ISSUE40.md, h58bound follow-up); False leaves it out.
GRID_STARTS = True
#: The face bonuses ``e`` tried per depth of the tree of sides.
_BONUS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
#: Refinement moves at most: ``max(200, _MOVES x tasks)``.
_MOVES = 4
#: Predicted wall seconds: ``GRID_FIXED + GRID_SECONDS x (tasks + streams) x layouts``;
#: measured 0.9-2.7e-7 per unit and 0.02-0.06 s in all on the 12 stencils of the benchmark
#: (load 12, bench/taskmap/ISSUE40.md, h58bound follow-up).
GRID_SECONDS = 2e-7
GRID_FIXED = 0.02
#: Under a time limit the layout runs (after the multilevel mapper, in the time left) only
#: when predicted within this share of the time left (a margin of 2 on the prediction).
GRID_SHARE = 0.5
#: The layout only where the lattice's axis pairs carry at least this share of the streams'
#: volume (the benchmark's stencils 1.0; the pipelines' spurious lattices in their jobs'
#: cliques 0.30-0.38: there the layout cost 0.08 s of CPU for nothing).
LATTICE_SHARE = 0.5
#: :func:`offer_grid` gives the layout it keeps the sum step
#: (:func:`coalloc.taskmap.sumrefine.sum_step_until`: moves under its maximum occupancy as a
#: cap, the lexicographic order: the maximum first, then the route cost), as the multilevel
#: mapper's answer has had it (h59sum: stencil 32x32 on 2x4x8 het had 3.66x the best peer's
#: sum where the layout won the bottleneck).
GRID_SUM = True
#: The sum step runs on a layout whose maximum is at most ``1 + GRID_SUM_NEAR`` times the
#: caller's (its link step may lower the maximum: stencil 32x32 on 2x4x8 het of
#: ``bench/taskmap/vs_peers.py``, the layout 17.5 -> 17.0 against the multilevel's 17.38).
GRID_SUM_NEAR = 0.05
_MAX_N = 1 << 18
#: The sides' weights in the split: the capacity below each, or its uplink's bandwidth
#: (processors: their capacity).
_MODES = ("capacity", "uplink")


def _tree(resources: ResourceGraph):
    """The tree of sides as items: ``children[c]`` (child sides, then own processors as
    ``-1 - node``), ``sub[c]`` the capacity below ``c``, the root; None without a bridge."""
    from .cutbound import _Sides

    sides = _Sides(resources)
    if sides.ncomp < 2:
        return None
    nc = sides.ncomp
    _, sub = side_capacities(sides)
    children: list = [[] for _ in range(nc)]
    for c in sides.order[::-1].tolist():  # root first: children in index order
        p = sides.parent[c]
        if p >= 0 and sub[c] > 0:
            children[p].append(c)
    procs = resources.processors
    for j, c in enumerate(sides.pcomp.tolist()):
        if sides.cap[j] > 0:
            children[c].append(-1 - int(procs[j]))
    root = int(sides.order[-1])
    weights = []
    for mode in _MODES:
        if mode == "capacity":
            w = {c: float(sub[c]) for c in range(nc)}
        else:  # the uplink's bandwidth (the root: its capacity)
            w = {c: float(sides.bw_up[c]) if sides.parent[c] >= 0 else float(sub[c])
                 for c in range(nc)}  # fmt: skip
        for j, p in enumerate(procs.tolist()):
            w[-1 - int(p)] = float(sides.cap[j])
        weights.append(w)
    return children, weights, root


def _halves(items: list, weight: dict, cap: dict) -> tuple:
    """Two halves of near-equal weight (and count): heaviest first (ties: the larger
    capacity ``cap`` first), each to the lighter half while the counts allow; the heavier
    half first."""
    order = sorted(items, key=lambda i: (-weight[i], -cap[i], i))
    a: list = []
    b: list = []
    wa = wb = 0.0
    half = (len(order) + 1) // 2
    for i in order:
        if (wa <= wb and len(a) < half) or len(b) >= len(order) - half:
            a.append(i)
            wa += weight[i]
        else:
            b.append(i)
            wb += weight[i]
    return (a, wa, b, wb) if wa >= wb else (b, wb, a, wa)


def _leaves(items: list, children: list) -> Optional[list]:
    """The processors of ``items`` when each is a processor or a side of one processor
    alone (else None)."""
    out = []
    for it in items:
        while it >= 0 and len(children[it]) == 1:
            it = children[it][0]
        if it >= 0:
            return None
        out.append(-1 - it)
    return out


def _counts(n: int, caps: np.ndarray) -> np.ndarray:
    """``n`` split in proportion to ``caps`` (largest remainders; ties: the first)."""
    tot = float(caps.sum())
    share = n * (caps / tot if tot > 0 else np.full(len(caps), 1.0 / len(caps)))
    cnt = np.floor(share).astype(np.int64)
    rest = n - int(cnt.sum())
    if rest > 0:
        cnt[np.argsort(-(share - cnt), kind="stable")[:rest]] += 1
    return cnt


def _layout(shape: tuple, tree, bonus: tuple, mode: int) -> np.ndarray:
    """The processor of every cell (C order) for face bonuses ``bonus`` (per depth) and the
    weights ``_MODES[mode]``."""
    children, weights, root = tree
    weight = weights[mode]
    d = len(shape)
    out = np.empty(shape, dtype=np.int64)
    # (items, depth, lo, hi): a box [lo, hi) for the items (sides or processors)
    stack = [([root], 0, (0,) * d, tuple(shape))]
    while stack:
        items, depth, lo, hi = stack.pop()
        if len(items) == 1:
            it = items[0]
            if it < 0:
                out[tuple(slice(a, b) for a, b in zip(lo, hi))] = -1 - it
            else:
                stack.append((children[it], depth + 1, lo, hi))
            continue
        procs = _leaves(items, children)
        if procs is not None:  # processors only: cells in C order, counts by capacity
            box = tuple(slice(a_, b_) for a_, b_ in zip(lo, hi))
            cells = np.arange(out.size).reshape(shape)[box].reshape(-1)
            caps = np.array([weights[0][-1 - p] for p in procs])
            flat = out.reshape(-1)
            flat[cells] = np.repeat(np.array(procs, dtype=np.int64), _counts(cells.size, caps))
            continue
        a, wa, b, wb = _halves(items, weight, weights[0])
        ext = [h - l_ for l_, h in zip(lo, hi)]
        ax = int(np.argmax(ext))
        n_ax = ext[ax]
        if n_ax < 2:  # one cell: the heaviest item takes it
            stack.append(([max(items, key=lambda i: (weight[i], -i))], depth, lo, hi))
            continue
        e = bonus[min(depth, len(bonus) - 1)]
        at_lo, at_hi = lo[ax] == 0, hi[ax] == shape[ax]
        # the heavier half on the side that keeps a face of the box (low side on a tie)
        first, second = (b, a) if (at_hi and not at_lo) else (a, b)
        w1 = (wb if first is b else wa) * (1 + e * at_lo)
        w2 = (wa if first is b else wb) * (1 + e * at_hi)
        cut = int(round(n_ax * w1 / (w1 + w2))) if w1 + w2 > 0 else n_ax // 2
        cut = min(max(cut, 1), n_ax - 1)
        mid = lo[ax] + cut
        hi1 = tuple(mid if i == ax else h for i, h in enumerate(hi))
        lo2 = tuple(mid if i == ax else l_ for i, l_ in enumerate(lo))
        stack.append((first, depth, lo, hi1))
        stack.append((second, depth, lo2, hi))
    return out.reshape(-1)


def _lattice(tasks: TaskGraph):
    """The task graph's box lattice when its axis pairs carry at least
    :data:`LATTICE_SHARE` of the volume, else None."""
    lat = find_lattice(tasks)
    if lat is None:
        return None
    n, shape = tasks.n, lat.shape
    idx = np.indices(shape).reshape(len(shape), n)
    s, t, v = tasks.edges()
    a, b = np.minimum(s, t), np.maximum(s, t)
    on = np.zeros(len(a), dtype=bool)
    stride = 1
    for i in range(len(shape) - 1, -1, -1):
        on |= (b - a == stride) & (idx[i][a] < shape[i] - 1)
        stride *= shape[i]
    total = float(v.sum())
    return lat if total > 0 and float(v[on].sum()) >= LATTICE_SHARE * total else None


def _score(tasks: TaskGraph, resources: ResourceGraph, m: np.ndarray) -> float:
    from .occupancy import max_occupancy

    return float(max_occupancy(tasks, resources, m)[0])


def _n_layouts(tree) -> int:
    """How many layouts :func:`grid_layout` scores (for the time prediction)."""
    children, _, root = tree
    depth, frontier = 0, [root]
    while frontier:
        frontier = [c for f in frontier if f >= 0 for c in children[f]]
        depth += 1
    return len(_MODES) * len(_BONUS) * (1 + max(depth - 1, 0))


def grid_layout(tasks: TaskGraph, resources: ResourceGraph, refine_moves: bool = True
                ) -> Optional[np.ndarray]:  # fmt: skip
    """The block layout of a box stencil sized by the machine (module docstring), or None.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    refine_moves : bool, default True
        Refine the best layout by the multilevel mapper's bottleneck moves.

    Returns
    -------
    ndarray of int64 or None
        A total mapping (task -> node), or None when the task graph holds no box lattice
        carrying :data:`LATTICE_SHARE` of its volume, the resource graph no bridge, or it
        has more than ``2^18`` tasks.

    Examples
    --------
    >>> import coalloc.taskmap as tm
    >>> from coalloc.taskmap import generators
    >>> tasks = generators.stencil_task_graph((8, 8), seed=0)
    >>> res = generators.hierarchical_cluster(n_racks=1, nodes_per_rack=4, cores_per_node=2,
    ...                                       speed=(1.0, 3.0), seed=1)
    >>> m = grid_layout(tasks, res)
    >>> report = tm.verify_mapping(tasks, res, m)
    >>> bool(report.valid), round(float(report.max_occupancy), 4)
    (True, 3.7919)
    """
    if tasks.n > _MAX_N:
        return None
    lat = _lattice(tasks)
    if lat is None:
        return None
    tree = _tree(resources)
    if tree is None:
        return None
    children, _, root = tree
    depths = 1
    frontier = [root]
    while True:
        frontier = [c for f in frontier if f >= 0 for c in children[f]]
        if not frontier:
            break
        depths += 1
    best_v, best_m = np.inf, None
    mode_v, best_b = np.inf, None

    def tried(b: tuple, mode: int) -> None:
        """Score bonus ``b``'s layout in ``mode``; keep it as the mode's and the overall best."""
        nonlocal mode_v, best_b, best_v, best_m
        m = _layout(lat.shape, tree, b, mode)
        v = _score(tasks, resources, m)
        if v < mode_v * (1 - 1e-12):
            mode_v, best_b = v, b
        if v < best_v * (1 - 1e-12):
            best_v, best_m = v, m

    for mode in range(len(_MODES)):
        mode_v, best_b = np.inf, None
        for e in _BONUS:  # one bonus for every depth
            tried((e,) * depths, mode)
        for dep in range(depths):  # then each depth in turn
            for e in _BONUS:
                b = tuple(e if i == dep else x for i, x in enumerate(best_b))
                if b != best_b:
                    tried(b, mode)
    if refine_moves:
        best_m = _refined(tasks, resources, best_m)
    return best_m


def _refined(tasks: TaskGraph, resources: ResourceGraph, m: np.ndarray) -> np.ndarray:
    """``m`` after the multilevel mapper's bottleneck moves (never worse)."""
    from .hierarchy import topology
    from .levels import TaskLevel
    from .refinement import RefineState, refine

    topo = topology(resources)
    pos = np.full(resources.n_nodes, -1, dtype=np.int64)
    pos[topo.order_nodes] = np.arange(topo.P)
    state = RefineState(topo, TaskLevel.of(tasks), pos[m])
    refine(state, max(200, _MOVES * tasks.n))
    return topo.order_nodes[state.m].astype(np.int64)


def grid_candidate(tasks: TaskGraph, resources: ResourceGraph,
                   budget: Optional[float] = None) -> Optional[np.ndarray]:  # fmt: skip
    """The default's candidate: :func:`grid_layout` when :data:`GRID_STARTS` is on and it
    applies, else None; under a ``budget`` (seconds) None too when :data:`GRID_SECONDS`
    predicts it past :data:`GRID_SHARE` of it.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    budget : float, optional
        The seconds left to the caller's deadline (None: untimed).

    Returns
    -------
    ndarray of int64 or None
    """
    if not GRID_STARTS or tasks.n > _MAX_N or _lattice(tasks) is None:
        return None
    tree = _tree(resources)
    if tree is None:
        return None
    if budget is not None:
        need = GRID_FIXED + GRID_SECONDS * (tasks.n + tasks.n_edges) * _n_layouts(tree)
        if need > GRID_SHARE * budget:
            return None
    try:  # an enclosing deadline's stop (in the routes' build): no candidate
        return grid_layout(tasks, resources)
    except (interrupt.DeadlinePassed, _TimeLimitReached):
        return None


def offer_grid(tasks: TaskGraph, resources: ResourceGraph, result,
               m: Optional[np.ndarray], until: Optional[float] = None,
               sum_step: bool = True) -> tuple:  # fmt: skip
    """The default's hook: ``result`` with the mapping ``m`` (:func:`grid_candidate`) when
    that has a strictly lower maximum occupancy (its ``message`` left to the caller). With
    :data:`GRID_SUM` and ``sum_step``, ``m`` is first given the sum step (never a higher
    maximum, stopped at ``until``) where its maximum is within :data:`GRID_SUM_NEAR` of
    ``result``'s.

    Parameters
    ----------
    tasks : TaskGraph
    resources : ResourceGraph
    result : TaskMappingResult
        The answer held (not modified).
    m : ndarray of int64 or None
        The candidate (None: ``result`` as it is).
    until : float, optional
        The caller's deadline (a :func:`time.perf_counter` instant) for the sum step; None:
        none (the step's tries are counted: the answer depends on the arguments only).
    sum_step : bool, default True
        The caller's ``sum_refine`` parameter (False: no sum step).

    Returns
    -------
    tuple
        ``(result, won)``: the answer and whether ``m`` replaced it.
    """
    if m is None:
        return result, False
    from .occupancy import max_occupancy, occupancy_graph

    occ, bott = max_occupancy(tasks, resources, m)
    held = None if result.mapping is None else float(result.max_occupancy)
    if GRID_SUM and sum_step and (held is None or occ <= held * (1 + GRID_SUM_NEAR)):
        from .sumrefine import sum_step_until  # the sum step under the layout's maximum

        try:  # a stop in the routes' build (an enclosing deadline): the layout as it is
            got = sum_step_until(tasks, resources, m, float(occ), until)
        except (interrupt.DeadlinePassed, _TimeLimitReached):
            got = None
        if got is not None:  # never a higher maximum; its link step may lower it
            m, (occ, bott) = got
    if held is not None and not occ < held * (1 - 1e-12):
        return result, False
    node_occ, link_occ = occupancy_graph(tasks, resources, m)
    history = [*(result.history or []), float(occ)]  # (a stopped result: no mapping, kept)
    return dataclasses.replace(result, mapping=m, max_occupancy=float(occ), bottleneck=bott,
                               node_occupancy=node_occ, link_occupancy=link_occ,
                               history=history), True  # fmt: skip
