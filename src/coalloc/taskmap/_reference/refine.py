"""Pure Python/NumPy twins of the refinement kernels of coalloc.taskmap._multilevel
(src/_core/taskmap/_multilevel.cpp) added for issue 40 (h63cpu).

Each is the NumPy or Python code the mapper ran before its kernel (``levels.expand``,
``refinement._destinations`` and ``_bottleneck_tasks``, ``refine``'s choice of a move,
``RefineState.refresh``, a pass of ``cut_refine``, ``sumrefine._cross_gains``,
``_swap_table``, ``_swap_screen`` and ``_eject_screen``, ``bisection.bisect_map``'s fast splits,
``swaprefine._next_move``'s pick), with the kernel's signature and checks; the parity tests
in ``tests/taskmap/kernels/test_refine_kernels.py`` require identical results.
"""

from __future__ import annotations

import numpy as np

from .multilevel import _need, bisect_small, score_moves

__all__ = [
    "expand",
    "destinations",
    "best_move",
    "loads",
    "cut_pass",
    "cross_gains",
    "bottleneck_tasks",
    "bisect_block",
    "link_pick",
    "pick_move",
    "swap_table",
    "eject_screen",
    "swap_screen",
]


def expand(starts, lens) -> tuple:
    """Indices ``starts[r] + 0..lens[r]-1``, run after run, and the run ``r`` of each (the
    NumPy code of :func:`coalloc.taskmap.levels.expand` before the kernel, issue 40 h63cpu).

    Parameters
    ----------
    starts, lens : ndarray of int64, shape (k,)
        The first index and the length of each run.

    Returns
    -------
    index, owner : ndarray of int64
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    lens = np.ascontiguousarray(lens, dtype=np.int64)
    _need(lens.ndim == 1, "lens must be 1-D")
    _need(starts.shape == lens.shape, "starts must have shape (len(lens),)")
    _need(bool(np.all(lens >= 0)), "lens must be >= 0")
    owner = np.repeat(np.arange(lens.shape[0]), lens)
    total = owner.shape[0]
    if total == 0:
        return np.zeros(0, dtype=np.int64), owner
    shift = starts - (np.cumsum(lens) - lens)
    return np.arange(total) + shift[owner], owner


def destinations(level, m, tasks, light, P: int) -> tuple:
    """The candidate moves of ``refinement.refine`` (its Python code before the kernel,
    issue 40 h63cpu): each task to its neighbours' processors, the ``light`` ones and its
    two adjacent ones, in the order of a Python set built from those in that order (its own
    processor discarded).

    Parameters
    ----------
    level : Level
        The graph.
    m : ndarray of int64, shape (n,)
        The processor of each vertex.
    tasks : ndarray of int64
        The tasks to move.
    light : ndarray of int64
        Processors added to every task's destinations.
    P : int
        The number of processors.

    Returns
    -------
    tasks, processors : ndarray of int64
        The moves, task after task.
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    tasks = np.ascontiguousarray(tasks, dtype=np.int64)
    light = np.ascontiguousarray(light, dtype=np.int64)
    _need(m.shape == (level.n,), "m must have shape (n,)")
    _need(tasks.ndim == 1 and light.ndim == 1, "tasks and light must be 1-D")
    _need(P >= 1, "P must be >= 1")
    _need(bool(np.all((light >= 0) & (light < P))), "light must hold processors in [0, P)")
    _need(bool(np.all((tasks >= 0) & (tasks < level.n))), "tasks must hold vertices in [0, n)")
    ip = level.ip
    starts, ends = ip[tasks], ip[tasks + 1]
    ent, _ = expand(starts, ends - starts)
    nbq = m[level.ix[ent]]
    _need(bool(np.all((nbq >= 0) & (nbq < P))) and bool(np.all((m[tasks] >= 0) & (m[tasks] < P))),
          "m must hold processors in [0, P)")  # fmt: skip
    nb = nbq.tolist()
    bounds = np.cumsum(ends - starts).tolist()
    light_l = light.tolist()
    rt: list = []
    rb: list = []
    lo = 0
    for t, a, hi in zip(tasks.tolist(), m[tasks].tolist(), bounds):
        dest = set(nb[lo:hi])
        lo = hi
        dest.update(light_l)
        if a > 0:
            dest.add(a - 1)
        if a < P - 1:
            dest.add(a + 1)
        dest.discard(a)
        rt.extend([t] * len(dest))
        rb.extend(dest)
    return np.asarray(rt, dtype=np.int64), np.asarray(rb, dtype=np.int64)


def best_move(level, routes, m, lload, bw, rt, rb, node_part, link: int, tiny: float) -> tuple:
    """``refinement.refine``'s choice among the moves ``rt[i] -> rb[i]`` (its NumPy code
    before the kernel, issue 40 h63cpu): the scores ``max(up, node_part[i])`` of
    :func:`score_moves` (for ``link >= 0`` also the link's new occupancy, and ``inf`` where
    its load does not fall by more than ``tiny``) and NumPy's argmin of them.

    Parameters
    ----------
    level, routes, m, lload, bw, rt, rb, link, tiny
        As for :func:`score_moves` (``rt`` not empty).
    node_part : ndarray of float64, shape (len(rt),)
        The processors' part of each move's score.

    Returns
    -------
    tuple
        ``(i, score)``: the first candidate of least score, and its score.
    """
    rt = np.ascontiguousarray(rt, dtype=np.int64)
    node_part = np.ascontiguousarray(node_part, dtype=np.float64)
    _need(rt.ndim == 1 and rt.shape[0] >= 1, "rt must not be empty")
    _need(node_part.shape == rt.shape, "node_part must have shape (len(rt),)")
    up, dv = score_moves(level, routes, m, lload, bw, rt, rb, link, tiny)
    score = np.maximum(up, node_part)
    if link >= 0:
        lload = np.ascontiguousarray(lload, dtype=np.float64)
        bw = np.ascontiguousarray(bw, dtype=np.float64)
        score = np.maximum(score, (lload[link] + dv) / bw[link])
        score = np.where(dv < -tiny * (1 + lload[link]), score, np.inf)
    pick = int(np.argmin(score))
    return pick, float(score[pick])


def loads(level, routes, m, vw) -> tuple:
    """The processors' and links' loads of the mapping ``m`` (the NumPy code of
    ``refinement.RefineState.refresh`` before the kernel, issue 40 h63cpu).

    Parameters
    ----------
    level : Level
        The graph.
    routes : PairRoutes
        The routes between processors.
    m : ndarray of int64, shape (n,)
        The processor of each vertex.
    vw : ndarray of float64, shape (n,)
        The vertices' weights.

    Returns
    -------
    nload : ndarray of float64, shape (P,)
    lload : ndarray of float64, shape (E,)
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    vw = np.ascontiguousarray(vw, dtype=np.float64)
    _need(m.shape == (level.n,), "m must have shape (n,)")
    _need(vw.shape == (level.n,), "vw must have shape (n,)")
    _need(bool(np.all((m >= 0) & (m < routes.P))), "m must hold processors in [0, P)")
    p = routes.P
    nload = np.bincount(m, weights=vw, minlength=p).astype(np.float64)
    s = np.repeat(np.arange(level.n), np.diff(level.ip))
    u = level.ix
    keep = (s < u) & (m[s] != m[u])
    pair = m[s[keep]] * p + m[u[keep]]
    rptr = routes.rptr
    ent, own = expand(rptr[pair], np.diff(rptr)[pair])
    lload = np.bincount(
        routes.rlink[ent], weights=level.iw[keep][own], minlength=routes.E
    ).astype(np.float64)
    return nload, lload


def cut_pass(level, m, nload, vw, cost, ub, chunk: int, poll) -> tuple:
    """One pass of ``refinement.cut_refine`` (its NumPy and Python code before the kernel,
    issue 40 h63cpu; ``m`` changed in place): the boundary moves ``(t, b)`` (``b`` the
    processor of a neighbour of ``t`` on another one) of positive route-cost gain, most
    first (stable), each taken when neither ``t`` nor a neighbour moved in the pass and
    ``b``'s load stays within ``max(ub[b], its load at the start) + 1e-12``.

    Parameters
    ----------
    level : Level
        The graph.
    m : ndarray of int64, shape (n,)
        The processor of each vertex (changed in place).
    nload : ndarray of float64, shape (P,)
        The processors' loads.
    vw : ndarray of float64, shape (n,)
        The vertices' weights.
    cost : ndarray of float64, shape (P, P)
        The route cost per unit volume between processors.
    ub : ndarray of float64, shape (P,)
        The processors' balance bounds.
    chunk : int
        The scoring is polled in chunks of about this many entries (0: one chunk).
    poll : callable or None
        Called before each chunk, and after the scoring when a move gains.

    Returns
    -------
    tuple
        ``(moves made, the new loads)``, or ``(-1, None)`` when no move gains.
    """
    n = level.n
    _need(isinstance(m, np.ndarray) and m.dtype == np.int64 and m.ndim == 1
          and m.flags.c_contiguous and m.flags.writeable and m.shape[0] == n,
          f"m must be a writeable contiguous 1-D int64 array of length {n}")  # fmt: skip
    nload = np.ascontiguousarray(nload, dtype=np.float64)
    vw = np.ascontiguousarray(vw, dtype=np.float64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    ub = np.ascontiguousarray(ub, dtype=np.float64)
    _need(nload.ndim == 1, "nload must be 1-D")
    p = nload.shape[0]
    _need(vw.shape == (n,), "vw must have shape (n,)")
    _need(ub.shape == (p,), "ub must have shape (len(nload),)")
    _need(cost.shape == (p, p), "cost must have shape (P, P)")
    _need(bool(np.all((m >= 0) & (m < p))), "m must hold processors in [0, P)")
    ip, ix, iw = level.ip, level.ix, level.iw
    rows = np.repeat(np.arange(n), np.diff(ip))
    cross = m[rows] != m[ix]
    if not cross.any():
        return -1, None
    cand = np.unique(rows[cross] * p + m[ix[cross]])
    ct, cb = cand // p, cand % p
    lens = ip[ct + 1] - ip[ct]
    if chunk <= 0 or int(lens.sum()) <= chunk:
        bounds = [0, ct.shape[0]]
    else:
        ends = np.cumsum(lens)
        cuts = np.searchsorted(ends, np.arange(chunk, int(ends[-1]), chunk), "right")
        bounds = sorted({0, ct.shape[0], *cuts.tolist()})
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if poll is not None:
            poll()
        c, d = ct[lo:hi], cb[lo:hi]
        ent, own = expand(ip[c], lens[lo:hi])
        q = m[ix[ent]]
        a = m[c][own]
        parts.append(np.bincount(own, weights=iw[ent] * (cost[a, q] - cost[d[own], q]),
                                 minlength=hi - lo))  # fmt: skip
    gain = np.concatenate(parts)
    good = gain > 1e-12 * (1 + np.abs(gain).max())
    if not good.any():
        return -1, None
    if poll is not None:
        poll()
    order = np.flatnonzero(good)[np.argsort(-gain[good], kind="stable")]
    near = [False] * n
    applied = 0
    limit = np.maximum(ub, nload).tolist()
    ctl, cbl, load = ct.tolist(), cb.tolist(), nload.tolist()
    vwl = vw.tolist()
    for k in order.tolist():
        t, b = ctl[k], cbl[k]
        if near[t]:
            continue
        w = vwl[t]
        if load[b] + w > limit[b] + 1e-12:
            continue
        load[int(m[t])] -= w
        load[b] += w
        m[t] = b
        near[t] = True
        for u in ix[ip[t] : ip[t + 1]].tolist():
            near[u] = True
        applied += 1
    return applied, np.asarray(load, dtype=np.float64)


def cross_gains(level, m, cost, positive: bool, tiny: float) -> tuple:
    """The moves of boundary tasks to a neighbour's processor with their gains in route
    cost, most gain first (the NumPy code of ``sumrefine._cross_gains`` before the kernel,
    issue 40 h63cpu).

    Parameters
    ----------
    level : Level
        The graph.
    m : ndarray of int64, shape (n,)
        The processor of each vertex.
    cost : ndarray of float64, shape (P, P)
        The route cost per unit volume between processors.
    positive : bool
        Only the gains above ``tiny * (1 + the largest |gain|)``; False: all.
    tiny : float
        The relative tolerance.

    Returns
    -------
    tuple
        ``(tasks, processors, gains)``, stable in the order of ``t * P + b``.
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    _need(m.shape == (level.n,), "m must have shape (n,)")
    _need(cost.ndim == 2 and cost.shape[0] == cost.shape[1], "cost must be square")
    p = cost.shape[0]
    _need(bool(np.all((m >= 0) & (m < p))), "m must hold processors in [0, P)")
    ip, ix, iw = level.ip, level.ix, level.iw
    rows = np.repeat(np.arange(level.n), np.diff(ip))
    cross = m[rows] != m[ix]
    if not cross.any():
        return (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0),)
    cand = np.unique(rows[cross] * p + m[ix[cross]])
    ct, cb = cand // p, cand % p
    ent, own = expand(ip[ct], ip[ct + 1] - ip[ct])
    q = m[ix[ent]]
    gain = np.bincount(own, weights=iw[ent] * (cost[m[ct][own], q] - cost[cb[own], q]),
                       minlength=ct.shape[0])  # fmt: skip
    good = gain > tiny * (1 + np.abs(gain).max()) if positive else np.ones(gain.shape, bool)
    order = np.flatnonzero(good)[np.argsort(-gain[good], kind="stable")]
    return ct[order], cb[order], gain[order]


def bottleneck_tasks(level, m, vw, lptr, lpairs, pair_mark, link: bool, idx: int,
                     n_cand: int) -> np.ndarray:  # fmt: skip
    """The tasks ``refinement.refine`` tries to move off the bottleneck ``idx`` (the NumPy
    code of ``refinement._bottleneck_tasks`` before the kernel, issue 40 h63cpu), at most
    ``n_cand``: a processor's tasks of positive weight, most volume to other processors
    first; a link's tasks that send across it, most volume first.

    Parameters
    ----------
    level : Level
        The graph.
    m : ndarray of int64, shape (n,)
        The processor of each vertex.
    vw : ndarray of float64, shape (n,)
        The vertices' weights.
    lptr, lpairs : ndarray of int64
        CSR of the processor pairs ``a * P + b`` whose route uses each link.
    pair_mark : ndarray of bool, shape (P * P,)
        A zeroed scratch mask (left zeroed).
    link : bool
        Whether ``idx`` is a link (else a processor).
    idx : int
        The bottleneck.
    n_cand : int
        At most this many tasks.

    Returns
    -------
    ndarray of int64
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    vw = np.ascontiguousarray(vw, dtype=np.float64)
    _need(m.shape == (level.n,) and vw.shape == (level.n,), "m and vw must have shape (n,)")
    _need(n_cand >= 0, "n_cand must be >= 0")
    _need(isinstance(pair_mark, np.ndarray) and pair_mark.dtype == np.bool_
          and pair_mark.ndim == 1 and pair_mark.flags.writeable,
          "pair_mark must be a writeable contiguous 1-D bool array")  # fmt: skip
    p = int(round(pair_mark.shape[0] ** 0.5))
    _need(p * p == pair_mark.shape[0] and p >= 1, "pair_mark must have P * P entries")
    _need(bool(np.all((m >= 0) & (m < p))), "m must hold processors in [0, P)")
    _need(0 <= idx < (lptr.shape[0] - 1 if link else p), "idx must be a link (link) or a processor")
    rows = np.repeat(np.arange(level.n), np.diff(level.ip))
    ix, iw = level.ix, level.iw
    if not link:
        tasks = np.flatnonzero(m == idx)
        tasks = tasks[vw[tasks] > 0]
        if tasks.shape[0] > n_cand:
            deg_ext = np.zeros(level.n)
            ext = (m[rows] == idx) & (m[ix] != idx)
            np.add.at(deg_ext, rows[ext], iw[ext])
            score = deg_ext[tasks] - 1e-9 * vw[tasks]
            tasks = tasks[np.argsort(-score, kind="stable")[:n_cand]]
        return tasks
    pairs = lpairs[lptr[idx] : lptr[idx + 1]]
    pair_mark[pairs] = True
    cross = pair_mark[m[rows] * p + m[ix]]
    pair_mark[pairs] = False
    s = rows[cross]
    if s.shape[0] == 0:
        return s
    vol = np.bincount(s, weights=iw[cross], minlength=level.n)
    tasks = np.flatnonzero(vol)
    if tasks.shape[0] > n_cand:
        tasks = tasks[np.argsort(-vol[tasks], kind="stable")[:n_cand]]
    return tasks


def _split_point(gap: list, lo: int, hi: int) -> int:
    """``bisection.split_point`` (its code)."""
    k = hi - lo
    a, b = lo + max(1, k // 4), lo + max(1, k - k // 4)
    if b <= a:
        return lo + k // 2
    cand = range(a, b + 1) if b < hi else range(a, b)
    if not cand:
        return lo + k // 2
    top = max(gap[c - 1] for c in cand) * (1 - 1e-9)
    mid = lo + k / 2
    best, best_d = lo + k // 2, float("inf")
    for c in cand:
        if gap[c - 1] >= top and abs(c - mid) < best_d:
            best, best_d = c, abs(c - mid)
    return best


def bisect_block(level, verts, lo: int, hi: int, gap, sh, subset, vw, m, passes: int) -> None:
    """``bisection.bisect_map``'s recursion on the block ``lo..hi-1`` of ``subset`` where
    every split is a fast one (its Python code before the kernel, issue 40 h63cpu): the
    split point, the target by NumPy's sums, :func:`bisect_small` with ``grow``'s balance;
    ``m[v]`` for the vertices ``verts``, in place.

    Parameters
    ----------
    level : Level
        The graph.
    verts : ndarray of int64
        Distinct vertices to map.
    lo, hi : int
        The block of positions of ``subset``.
    gap : ndarray of float64, shape (len(subset) - 1,)
        The route cost between consecutive positions of ``subset``.
    sh : ndarray of float64, shape (len(subset),)
        The share of each position.
    subset : ndarray of int64
        The processor positions.
    vw : ndarray of float64, shape (n,)
        The vertices' weights.
    m : ndarray of int64, shape (n,)
        The mapping (written at ``verts``).
    passes : int
        The FM passes of each split.
    """
    verts = np.ascontiguousarray(verts, dtype=np.int64)
    subset = np.ascontiguousarray(subset, dtype=np.int64)
    sh = np.ascontiguousarray(sh, dtype=np.float64)
    vw = np.ascontiguousarray(vw, dtype=np.float64)
    _need(verts.ndim == 1 and subset.ndim == 1, "verts and subset must be 1-D")
    _need(sh.shape == subset.shape, "sh must have shape (len(subset),)")
    _need(len(gap) >= subset.shape[0] - 1, "gap must have len(subset) - 1 entries")
    _need(0 <= lo < hi <= subset.shape[0], "need 0 <= lo < hi <= len(subset)")
    _need(vw.shape == (level.n,), "vw must have shape (n,)")
    _need(passes >= 0, "passes must be >= 0")
    _need(isinstance(m, np.ndarray) and m.dtype == np.int64 and m.ndim == 1
          and m.flags.c_contiguous and m.flags.writeable and m.shape[0] == level.n,
          f"m must be a writeable contiguous 1-D int64 array of length {level.n}")  # fmt: skip
    _need(bool(np.all((verts >= 0) & (verts < level.n)))
          and np.unique(verts).shape[0] == verts.shape[0],
          "verts must hold distinct vertices in [0, n)")  # fmt: skip
    gap = [float(g) for g in gap]
    stack = [(verts, lo, hi)]
    while stack:
        vs, a, b = stack.pop()
        if b - a == 1 or vs.shape[0] == 0:
            m[vs] = subset[a]
            continue
        if vs.shape[0] == 1:
            m[vs] = subset[a + int(np.argmax(sh[a:b]))]
            continue
        s = _split_point(gap, a, b)
        target = vw[vs].sum() * sh[a:s].sum() / sh[a:b].sum()
        wloc = vw[vs]
        tol = max(float(wloc.max()), 0.02 * float(wloc.sum()))
        inside = bisect_small(level, vs, wloc, target, tol, passes)
        stack.append((vs[~inside], s, b))
        stack.append((vs[inside], a, s))


def link_pick(level, routes, m, lload, bw, rt, rb, link: int, tiny: float, over, thr: float,
              lptr, lpairs) -> int:  # fmt: skip
    """``swaprefine._next_move``'s pick among the moves ``rt[i] -> rb[i]`` (its NumPy code
    before the kernel, issue 40 h63cpu): of those whose :func:`score_moves` ``up`` is below
    ``thr``, the first by ``(over, the change of link's load, i)``; -1 for none.

    Parameters
    ----------
    level, routes, m, lload, bw, rt, rb, tiny
        As for :func:`score_moves`.
    link : int
        The link whose load change orders the moves.
    over : ndarray of bool, shape (len(rt),)
        Whether the move's destination would be over the maximum (last).
    thr : float
        The moves' largest rising link must stay below this.
    lptr, lpairs : ndarray of int64
        CSR of the processor pairs whose route uses each link (checked only).

    Returns
    -------
    int
        The index of the move, or -1.
    """
    over = np.ascontiguousarray(over, dtype=bool)
    rt = np.ascontiguousarray(rt, dtype=np.int64)
    _need(over.shape == rt.shape, "over must have shape (len(rt),)")
    _need(0 <= link < routes.E, "link must be in [0, n_links)")
    _need(np.asarray(lptr).shape == (routes.E + 1,), "lptr must have shape (n_links + 1,)")
    up, dv = score_moves(level, routes, m, lload, bw, rt, rb, link, tiny)
    ok = np.flatnonzero(up < thr)
    if ok.shape[0] == 0:
        return -1
    return int(ok[np.lexsort((dv[ok], over[ok]))[0]])


def pick_move(level, routes, m, nload, lload, cap, bw, vw, rt, rb, link: int, idx: int,
              limit: float, tiny: float) -> tuple:  # fmt: skip
    """``refinement.refine``'s move off the bottleneck (processor ``idx`` when ``link`` is
    -1, else that link) among ``rt[i] -> rb[i]`` (its NumPy code before the kernel, issue 40
    h63cpu): the processors' part of each score, the moves it keeps below ``limit`` (of
    positive weight off a processor), and :func:`best_move` among them.

    Parameters
    ----------
    level, routes, m, lload, bw, rt, rb, tiny
        As for :func:`score_moves`.
    nload, cap : ndarray of float64, shape (P,)
        The processors' loads and capacities.
    vw : ndarray of float64, shape (n,)
        The vertices' weights.
    link, idx : int
        The bottleneck: ``link`` a link, or -1 and ``idx`` a processor.
    limit : float
        A move is kept when its processors' part is below this.

    Returns
    -------
    tuple
        ``(i, score)``, or ``(-1, 0.0)`` when no move is kept.
    """
    rt = np.ascontiguousarray(rt, dtype=np.int64)
    rb = np.ascontiguousarray(rb, dtype=np.int64)
    nload = np.ascontiguousarray(nload, dtype=np.float64)
    cap = np.ascontiguousarray(cap, dtype=np.float64)
    vw = np.ascontiguousarray(vw, dtype=np.float64)
    _need(nload.shape == (routes.P,) and cap.shape == (routes.P,), "nload, cap: shape (P,)")
    _need(vw.shape == (level.n,), "vw must have shape (n,)")
    _need(rb.shape == rt.shape, "rb must have shape (len(rt),)")
    _need(link >= 0 or 0 <= idx < routes.P, "idx must be a processor when link = -1")
    w = vw[rt]
    a_of = np.asarray(m)[rt]
    node_part = np.maximum((nload[rb] + w) / cap[rb], (nload[a_of] - w) / cap[a_of])
    if link < 0:
        node_part = np.maximum(node_part, (nload[idx] - w) / cap[idx])
        live = (node_part < limit) & (w > 0)
    else:
        live = node_part < limit
    sel = np.flatnonzero(live)
    if sel.shape[0] == 0:
        return -1, 0.0
    pick, top = best_move(level, routes, m, lload, bw, rt[sel], rb[sel], node_part[sel], link,
                          tiny)  # fmt: skip
    return int(sel[pick]), top


def swap_table(level, m, cost, t, b) -> tuple:
    """``sumrefine._swap_table`` for the moves ``t[i] -> b[i]`` (its NumPy code before the
    kernel, issue 40 h63cpu): for every distinct pair ``(b, a = m[t])``, the tasks on ``b``
    in increasing order and the route cost each saves moving alone to ``a``.

    Parameters
    ----------
    level : Level
        The graph.
    m : ndarray of int64, shape (n,)
        The processor of each vertex.
    cost : ndarray of float64, shape (P, P)
        The route cost per unit volume between processors.
    t, b : ndarray of int64
        The moves.

    Returns
    -------
    tuple
        ``(pair of each move, offsets, tasks, gains, largest)``: pair ``j``'s tasks are
        ``tasks[offsets[j]:offsets[j + 1]]``, ``largest[j]`` the largest of their gains
        (-inf for none).
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    t = np.ascontiguousarray(t, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    _need(m.shape == (level.n,), "m must have shape (n,)")
    _need(cost.ndim == 2 and cost.shape[0] == cost.shape[1], "cost must be square")
    p = cost.shape[0]
    _need(t.ndim == 1 and b.shape == t.shape, "t must be 1-D and b of its shape")
    _need(bool(np.all((m >= 0) & (m < p))), "m must hold processors in [0, P)")
    _need(bool(np.all((t >= 0) & (t < level.n) & (b >= 0) & (b < p))),
          "t must hold tasks and b processors")  # fmt: skip
    ip, ix, iw = level.ip, level.ix, level.iw
    key = b * p + m[t]
    pairs, pair_of = np.unique(key, return_inverse=True)
    pb, pa = pairs // p, pairs % p
    order = np.argsort(m, kind="stable")
    count = np.bincount(m, minlength=p)
    lens = count[pb]
    idx, owner = expand((np.cumsum(count) - count)[pb], lens)
    tasks = order[idx]
    ent, own = expand(ip[tasks], ip[tasks + 1] - ip[tasks])
    q = m[ix[ent]]
    gains = np.bincount(
        own, weights=iw[ent] * (cost[m[tasks][own], q] - cost[pa[owner][own], q]),
        minlength=tasks.shape[0],
    )  # fmt: skip
    offsets = np.concatenate([[0], np.cumsum(lens)])
    largest = np.full(pairs.shape[0], -np.inf)
    some = lens > 0
    largest[some] = np.maximum.reduceat(gains, offsets[:-1][some]) if tasks.shape[0] else 0
    return pair_of, offsets, tasks, gains, largest


def eject_screen(m, vw, nload, cap, touched, near, t, b, g_t, et, ec, eg, limit: float,
                 tries: int) -> np.ndarray:  # fmt: skip
    """``sumrefine._eject_screen`` (its NumPy code before the kernel, issue 40 h63cpu): for
    each move ``t[i] -> b[i]`` of gain ``g_t[i]``, whether ``b``'s compute blocks it and,
    among the first ``tries`` boundary moves ``(et, ec, eg)`` of tasks of ``b`` that pass
    the ejection's filters, one is of a task other than ``t`` not ``near`` a move.

    Parameters
    ----------
    m : ndarray of int64, shape (n,)
        The processor of each task.
    vw : ndarray of float64, shape (n,)
        The tasks' weights.
    nload, cap : ndarray of float64, shape (P,)
        The processors' loads and capacities.
    touched, near : ndarray of bool, shape (n,)
        Tasks moved in the pass; tasks moved or next to one moved.
    t, b : ndarray of int64
        The blocked moves.
    g_t : ndarray of float64
        Their gains.
    et, ec, eg : ndarray
        The boundary moves (tasks, processors, gains).
    limit : float
        The cap on the occupancy.
    tries : int
        The ejections tried per move.

    Returns
    -------
    ndarray of bool
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    t = np.ascontiguousarray(t, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    et = np.ascontiguousarray(et, dtype=np.int64)
    ec = np.ascontiguousarray(ec, dtype=np.int64)
    n, p = m.shape[0], np.asarray(nload).shape[0]
    _need(np.asarray(vw).shape == (n,) and np.asarray(touched).shape == (n,)
          and np.asarray(near).shape == (n,), "vw, touched, near: shape (len(m),)")  # fmt: skip
    _need(b.shape == t.shape and np.asarray(g_t).shape == t.shape, "b, g_t: shape of t")
    _need(ec.shape == et.shape and np.asarray(eg).shape == et.shape, "ec, eg: shape of et")
    _need(bool(np.all((m >= 0) & (m < p))), "m must hold processors in [0, P)")
    _need(bool(np.all((t >= 0) & (t < n) & (b >= 0) & (b < p))),
          "t must hold tasks and b processors")  # fmt: skip
    _need(bool(np.all((et >= 0) & (et < n) & (ec >= 0) & (ec < p))),
          "et must hold tasks and ec processors")  # fmt: skip
    a = m[t]
    room = nload[b] + vw[t] - limit * cap[b]
    w_e = vw[et]
    each = ~touched[et] & (nload[ec] + w_e <= limit * cap[ec])
    on_b = (m[et][None, :] == b[:, None]) & (ec[None, :] != a[:, None])
    on_b &= (w_e[None, :] >= room[:, None]) & each[None, :]
    on_b &= eg[None, :] > -g_t[:, None]
    first = on_b & (np.cumsum(on_b, axis=1) <= tries)
    near_e = np.asarray(near, dtype=bool)[et]
    free = first & (et[None, :] != t[:, None]) & ~near_e[None, :]
    return (room > 0) & free.any(axis=1)


def swap_screen(level, m, vw, nload, cap, cost, touched, t, b, g_t, pair_of, offsets, tasks,
                gains, limit: float, tiny: float) -> np.ndarray:  # fmt: skip
    """``sumrefine._swap_screen`` (its NumPy code before the kernel, issue 40 h63cpu): for
    each move ``t[i] -> b[i]`` of gain ``g_t[i]``, whether a task ``u`` of ``b`` (its pair's
    tasks of :func:`swap_table`: ``tasks[offsets[j]:offsets[j + 1]]``, ``j = pair_of[i]``,
    with their ``gains``), not ``touched``, fits the swap's compute and gains more than
    ``tiny * (1 + |g_t|)`` swapped with ``t``.

    Parameters
    ----------
    level : Level
        The graph.
    m, vw, nload, cap, cost, touched
        The mapping, the weights, the processors' loads and capacities, the route costs and
        the tasks moved in the pass.
    t, b, g_t : ndarray
        The blocked moves and their gains.
    pair_of, offsets, tasks, gains : ndarray
        :func:`swap_table`'s for these moves.
    limit, tiny : float
        The cap on the occupancy and the relative tolerance.

    Returns
    -------
    ndarray of bool
    """
    m = np.ascontiguousarray(m, dtype=np.int64)
    t = np.ascontiguousarray(t, dtype=np.int64)
    b = np.ascontiguousarray(b, dtype=np.int64)
    pair_of = np.ascontiguousarray(pair_of, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    n, p = level.n, np.asarray(nload).shape[0]
    _need(m.shape == (n,), "m must have shape (n,)")
    _need(b.shape == t.shape and pair_of.shape == t.shape, "b, pair_of: the shape of t")
    _need(bool(np.all((t >= 0) & (t < n) & (b >= 0) & (b < p)))
          and bool(np.all((pair_of >= 0) & (pair_of + 1 < offsets.shape[0]))),
          "t, b, pair_of: a task, a processor and a pair each")  # fmt: skip
    ip, ix, iw = level.ip, level.ix, level.iw
    a = m[t]
    starts = offsets[pair_of]
    idx, own = expand(starts, offsets[pair_of + 1] - starts)
    u = tasks[idx]
    tk, ak, bk, gk = t[own], a[own], b[own], np.asarray(g_t)[own]
    dw = vw[u] - vw[tk]
    fit = (nload[ak] + dw <= np.maximum(limit * cap[ak], nload[ak])) & (
        nload[bk] - dw <= np.maximum(limit * cap[bk], nload[bk])
    )
    ent, eown = expand(ip[t], ip[t + 1] - ip[t])
    keys, inv = np.unique(eown * n + ix[ent], return_inverse=True)
    vol = np.bincount(inv.ravel(), weights=iw[ent], minlength=keys.shape[0])
    want = own * n + u
    at = np.minimum(np.searchsorted(keys, want), max(keys.shape[0] - 1, 0))
    w_tu = np.where(keys[at] == want, vol[at], 0.0) if keys.shape[0] else np.zeros(u.shape[0])
    g = gk + gains[idx] - 2 * w_tu * cost[ak, bk]
    good = (g > tiny * (1 + np.abs(gk))) & fit & ~touched[u]
    return np.bincount(own[good], minlength=t.shape[0]) > 0
