"""The initial mappings of the multilevel mapper: recursive bisection along the processor list.

:func:`bisect_map` splits a block of processors (consecutive in hierarchy order) where two
consecutive processors are farthest apart (:func:`split_point`), and the tasks in proportion
to the two halves' shares by graph growing followed by Fiduccia-Mattheyses passes
(:func:`grow`); across links slower than the fastest ones three growing seeds and a
spectral split (:func:`spectral_split`) are tried and the smallest cut kept, and on a
level's first split also the bands of a periodic grid and multilevel splits
(:mod:`~coalloc.taskmap.splits`; issue 40, h57band).
"""

from __future__ import annotations

import time
from typing import Optional

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .._shared import interrupt
from .._shared.params import time_left
from . import _multilevel, splits
from .hierarchy import Topology
from .levels import TaskLevel, subgraph
from .splits import band_orders

__all__ = [
    "band_orders",
    "bisect_map",
    "envelope_flops",
    "fiedler_order",
    "grow",
    "hop_distances",
    "spectral_split",
    "split_point",
]


#: Up to this many vertices, hop distances come from a Python breadth-first search (the
#: same distances as SciPy's, without its per-call overhead).
_SMALL_BFS = 128

#: Hop distances by the compiled breadth-first search ``_multilevel.hop_distances`` (twin:
#: :func:`coalloc.taskmap._reference.multilevel.hop_distances`; the same distances as
#: SciPy's and the Python search's), at any size: SciPy's ``shortest_path`` spent most of a
#: call building and checking its sparse matrix (``_prepared``'s seeds: 4-6 % of the
#: untimed mapper's CPU on the 30 of ``bench/taskmap/vs_peers.py``; issue 40, h60cpu).
#: False: SciPy above :data:`_SMALL_BFS` vertices, Python below.
HOP_KERNEL = True


def hop_distances(csr: tuple, src: int) -> np.ndarray:
    """Hop distances from ``src`` in the graph of the CSR triple (``-1``: unreachable);
    every stored entry is an edge, as for :func:`scipy.sparse.csgraph.shortest_path`.

    Parameters
    ----------
    csr : tuple of ndarray
        ``(indptr, indices, data)`` of an undirected graph.
    src : int
        The source vertex.

    Returns
    -------
    ndarray of float64
        The distance of each vertex: the compiled search's (:data:`HOP_KERNEL`), else
        SciPy's above ``_SMALL_BFS`` vertices and a plain breadth-first search's below (the
        same values).

    Examples
    --------
    >>> import numpy as np
    >>> csr = (np.array([0, 1, 3, 4, 4]), np.array([1, 0, 2, 1]), np.ones(4))
    >>> hop_distances(csr, 0).tolist()
    [0.0, 1.0, 2.0, -1.0]
    """
    sip, six, siw = csr
    n = sip.shape[0] - 1
    if HOP_KERNEL:  # the same distances, compiled (twin: _reference's hop_distances)
        return _multilevel.hop_distances(sip, six, src)
    if n > _SMALL_BFS:
        d = csgraph.shortest_path(
            sp.csr_matrix((siw, six, sip), shape=(n, n)),
            unweighted=True,
            directed=False,
            indices=src,
        )
        d[~np.isfinite(d)] = -1
        return d
    from ._reference.multilevel import hop_distances as plain  # the kernel's twin

    return plain(sip, six, src)


def grow(
    level: TaskLevel,
    verts: np.ndarray,
    target: float,
    trials: int = 3,
    spectral: bool = True,
    differences: bool = False,
) -> np.ndarray:
    """Boolean mask over ``verts``: a part of weight about ``target`` with a small cut.

    Greedy graph growing from ``trials`` seeds (the two ends of a pseudo-diameter, then the
    task farthest from both) and, across slow links, the spectral split, each followed by
    Fiduccia-Mattheyses passes (the compiled ``grow_fm``, twin
    :func:`coalloc.taskmap._reference.multilevel.grow_fm`); the smallest cut wins (ties: the
    earlier try). Across slow links also (h57band) the band orders of a multiple Fiedler
    value (:func:`~coalloc.taskmap.splits.band_orders`, ``splits.BAND_SPLITS``) and
    multilevel splits (``splits._vcycle``, ``splits.VCYCLE_SPLITS``), after the others:
    kept where strictly smaller.

    Parameters
    ----------
    level : TaskLevel
        The level.
    verts : ndarray of int64
        The vertices to split.
    target : float
        The weight of the part to grow.
    trials : int, default 3
        Growing seeds (1: one seed, then all of it compiled when ``spectral`` is False).
    spectral : bool, default True
        Also try the spectral split (64 vertices or more).
    differences : bool, default False
        Also try, from 64 vertices and three seeds on, the prefixes of the vertices sorted
        by the difference of their hop distances from two seeds (:func:`_difference_order`:
        on a grid, an axis; no eigensolve).

    Returns
    -------
    ndarray of bool
        Over ``verts``: True for the grown part.

    Examples
    --------
    >>> import numpy as np
    >>> ip, ix = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2])
    >>> lv = TaskLevel(ip, ix, np.array([5.0, 5.0, 1.0, 1.0, 5.0, 5.0]), np.ones(4))
    >>> grow(lv, np.arange(4), 2.0).tolist()  # the path 0 - 1 - 2 - 3 cut at its light edge
    [False, False, True, True]
    """
    _multilevel._rest_heap(REST_HEAP)
    n_loc = verts.shape[0]
    wloc = level.vw[verts]
    tol = max(float(wloc.max()), 0.02 * float(wloc.sum()))  # balance of the FM passes
    if trials == 1 and not spectral:  # all of it compiled (twin: _reference's bisect_small)
        if not GROW_MEMO:
            return _multilevel.bisect_small(level.kern, verts, wloc, target, tol, 4)
        memo = level.__dict__.setdefault("_small_tried", {})
        key = (verts.tobytes(), target)
        if key not in memo:
            memo[key] = _multilevel.bisect_small(level.kern, verts, wloc, target, tol, 4)
        return memo[key]
    prep = _prepared(level, verts, trials)
    sip, six, siw = prep["sub"]
    rows, seeds = prep["rows"], prep["seeds"]
    best, best_cut, won = None, np.inf, ""
    tries = [("grow", s0) for s0 in seeds[:trials]]
    fits = spectral and n_loc >= 64 and siw.shape[0]
    if fits and ("order" in prep or _in_time(six.shape[0], prep)):
        tries.append(("spectral", 0))
    if differences and n_loc >= 64 and len(seeds) >= 3:
        tries += [("difference", pair) for pair in _PAIRS]
    if fits and splits._band_here(level, verts) and ("bands" in prep or
                                                      _in_time(six.shape[0], prep)):
        tries += [("band", j) for j in range(splits.BAND_DIRECTIONS)]
    vcycle = trials > 1 and splits._vcycle_here(level, verts)
    if vcycle and ("chains" in prep or splits._vcycle_in_time(prep, time_left())):
        tries += [("vcycle", j) for j in range(splits.VCYCLE_REPEATS)]
    memo = _tried(level, prep, wloc) if GROW_MEMO else None  # (how, s0, target): result
    for how, s0 in tries:
        interrupt.check()
        key = (how, s0, target)
        if memo is not None and key in memo:
            inside, cut = memo[key]
        else:
            inside = _one_try(level, prep, how, s0, wloc, target, tol, spectral, differences)
            cut = np.inf if inside is None else float(siw[inside[rows] != inside[six]].sum())
            if memo is not None and how != "vcycle":  # (a V-cycle's tries are gated by time)
                memo[key] = (inside, cut)
        if inside is not None and cut < best_cut - 1e-12:
            best, best_cut, won = inside, cut, how
    if vcycle and won == "vcycle" and splits._WON.get() is not None:  # (multilevel.VCYCLE_BOTH)
        splits._WON.get().append(verts.shape[0])
    return best


#: :func:`grow` keeps each try's part and cut for its vertex set (:func:`_tried`: shared by
#: the vertex sets of equal subgraphs and weights; by the try and the target) and a
#: one-seed split's part for its vertex set and target (on the level): a try made again
#: with the same inputs gives the same part, and the untimed mapper makes many again (the
#: flat re-bisection of ``splits.both_ways`` repeats the first split's tries; a regular
#: graph's equal blocks repeat each other's): 2,818 of the 10,620
#: ``grow_fm`` calls on the 30 of ``bench/taskmap/vs_peers.py`` and 3,196 of the 17,203
#: ``bisect_small`` calls (35 % and 22 % of their CPU; issue 40, h60cpu). The multilevel
#: tries are not kept (their gate reads the clock). The same parts, so the same answers.
#: False: every try computed.
GROW_MEMO = True

#: Issue 40 (h64cpu; the same parts, so the same answers): the compiled growing's restart
#: (an empty heap: the vertex outside and not skipped of largest gain, the first of those)
#: from a second heap instead of a scan of every vertex, made ~50 times a ``grow_fm`` call
#: on the 30 of ``bench/taskmap/vs_peers.py`` (-33 % of its CPU there). Passed to the
#: kernel (``_multilevel._rest_heap``) by :func:`grow` and :func:`bisect_map`. False: the scan.
REST_HEAP = True


def _tried(level: TaskLevel, prep: dict, wloc: np.ndarray) -> dict:
    """The kept tries of :func:`grow` for the vertex set of ``prep`` (:data:`GROW_MEMO`):
    one dict on the level for every vertex set whose induced subgraph and weights are the
    same arrays (a regular graph's equal blocks: the same tries give the same parts)."""
    if "tried" not in prep:
        sip, six, siw = prep["sub"]
        key = (sip.tobytes(), six.tobytes(), siw.tobytes(), wloc.tobytes())
        prep["tried"] = level.__dict__.setdefault("_tried", {}).setdefault(key, {})
    return prep["tried"]


def _one_try(level: TaskLevel, prep: dict, how: str, s0, wloc: np.ndarray, target: float,
             tol: float, spectral: bool, differences: bool) -> Optional[np.ndarray]:  # fmt: skip
    """The part of one try of :func:`grow` (``how``: "grow" from seed ``s0``, "spectral",
    "difference" of seed pair ``s0``, "band" ``s0``, "vcycle" repeat ``s0``) after its FM
    passes, or None where the try does not apply (no such band; a multilevel split that
    stalled or missed the balance)."""
    sip, six, siw = prep["sub"]
    n_loc = sip.shape[0] - 1
    start = None
    if how == "difference":
        start = _prefix(_difference_order(prep, s0), wloc, target)
    elif how == "band":
        if "bands" not in prep:  # the pure directions of a multiple eigenvalue, or none
            csr = sp.csr_matrix((siw, six, sip), shape=(n_loc, n_loc))
            prep["bands"] = band_orders(csr, n_loc)
        if s0 >= len(prep["bands"]):
            return None
        start = _prefix(prep["bands"][s0], wloc, target)
    elif how == "spectral":
        if "order" not in prep:  # the Fiedler order: the same for every target
            prep["order"] = _shared_order(level, prep["sub"])
        if prep["order"] is not None:
            start = _prefix(prep["order"], wloc, target)
    if how == "vcycle":
        t = time.perf_counter()
        # (the coarsest split's eigensolves only where this split's ran: in time)
        inside = splits._vcycle(prep, wloc, target, tol, s0, _plain_grow,
                                spectral and prep.get("order") is not None, differences)
        splits._vcycle_measured(prep, time.perf_counter() - t, time_left() is not None)
        if inside is None or abs(float(wloc[inside].sum()) - target) > tol * (1 + 1e-9):
            return None  # FM brings the projection closer to the target, not always within
        return inside
    if start is None:  # growing (also where the spectral split failed: from task 0)
        return _multilevel.grow_fm(sip, six, siw, wloc, target, s0, tol, 4,
                                   np.zeros(n_loc, dtype=bool))  # fmt: skip
    return _multilevel.grow_fm(sip, six, siw, wloc, target, -1, tol, 4, start)


#: :func:`grow` itself, for the coarsest level of a multilevel split (``splits._vcycle``):
#: a test that replaces the module's ``grow`` to count the caller's splits counts only those.
_plain_grow = grow

#: The seed pairs of the difference tries (:func:`_difference_order`): the third seed (the
#: task farthest from both ends of the pseudo-diameter) against each end, then the two ends.
_PAIRS = ((0, 2), (1, 2), (0, 1))


def _difference_order(prep: dict, pair: tuple) -> np.ndarray:
    """The vertices sorted by ``d_i - d_j`` (stable), ``d_i`` the hop distances from seed
    ``i`` of ``prep["seeds"]``; those one of the two does not reach, last.

    On a box of a grid with the pseudo-diameter's ends at two opposite corners ``a``, ``b``
    and the third seed ``c`` at another corner, ``d_a - d_c`` is twice one coordinate up to a
    constant: its prefixes are slabs across an axis, the straight cut the growing tries
    (balls around a corner) miss and the spectral split finds with an eigensolve (issue 40,
    h53tmap: 16x16x16 onto 4x4x16, 0.1-0.2 s for the fine bisection against 1-1.5 s).
    Distances are kept in ``prep`` (``"dist"``) for the other pairs and targets."""
    dist = prep.setdefault("dist", {})
    for i in pair:
        if i not in dist:
            known = prep.get(("da", "db")[i]) if i < 2 else None  # (kept by _prepared)
            dist[i] = known if known is not None else hop_distances(prep["sub"], prep["seeds"][i])
    di, dj = dist[pair[0]], dist[pair[1]]
    key = (di - dj).astype(np.float64)
    key[(di < 0) | (dj < 0)] = np.inf
    return np.argsort(key, kind="stable")


def _prepared(level: TaskLevel, verts: np.ndarray, trials: int) -> dict:
    """What :func:`grow` derives from the vertices alone, whatever the target: the induced
    CSR (``"sub"``), the row of each entry (``"rows"``), the growing seeds (``"seeds"``, at
    least ``min(trials, 3)`` of them) and, once a spectral split asked for it, the Fiedler
    order (``"order"``). Kept on the level for the same vertex set (the first split of every
    bisection of a level onto the processors is of all its vertices, and starts that share a
    first split share the sets below it), so a recurring set costs no hop distances and no
    eigensolve; a level is one run's."""
    cache = level.__dict__.setdefault("_grow_prep", {})
    key = verts.tobytes()
    prep = cache.get(key)
    if prep is None:
        sub = subgraph(level, verts)
        sip = sub[0]
        n_loc = verts.shape[0]
        d0 = hop_distances(sub, 0)
        a = int(np.argmax(d0))
        da = hop_distances(sub, a)
        b = int(np.argmax(da))
        prep = {"sub": sub, "rows": np.repeat(np.arange(n_loc), np.diff(sip)), "seeds": [a, b],
                "da": da}  # fmt: skip
        cache[key] = prep
    if trials > 2 and len(prep["seeds"]) < 3:
        da = prep["da"]
        db = prep["db"] = hop_distances(prep["sub"], prep["seeds"][1])
        both = np.minimum(np.where(da < 0, np.inf, da), np.where(db < 0, np.inf, db))
        both[~np.isfinite(both)] = -1
        prep["seeds"].append(int(np.argmax(both)))
    return prep


#: Fiedler orders shared, on a level, between vertex sets whose induced subgraphs are the
#: same arrays (:func:`_shared_order`): the order is a function of the subgraph alone, and
#: a regular graph's blocks induce equal subgraphs (a stencil's quarters, a bisection's
#: equal halves): 110 of the 562 eigensolves of the untimed mapper on the 30 of
#: ``bench/taskmap/vs_peers.py`` repeated one made before (20 % of their CPU; issue 40,
#: h60cpu). The same orders, so the same answers. False: one eigensolve per vertex set.
FIEDLER_SHARED = True


def _shared_order(level: TaskLevel, sub: tuple) -> Optional[np.ndarray]:
    """:func:`fiedler_order` of the induced subgraph ``sub`` (CSR triple), computed once per
    level for equal arrays (:data:`FIEDLER_SHARED`); a computed one's seconds kept for the
    time limit's predictions (:func:`_measured`)."""
    sip, six, siw = sub
    key = (sip.tobytes(), six.tobytes(), siw.tobytes()) if FIEDLER_SHARED else None
    shared = level.__dict__.setdefault("_fiedler_shared", {})
    if key is not None and key in shared:
        return shared[key]
    n_loc = sip.shape[0] - 1
    csr = sp.csr_matrix((siw, six, sip), shape=(n_loc, n_loc))
    t = time.perf_counter()
    order = fiedler_order(csr, n_loc)
    _measured(six.shape[0], time.perf_counter() - t)
    if key is not None:
        shared[key] = order
    return order


def fiedler_order(sub: sp.csr_matrix, n: int) -> Optional[np.ndarray]:
    """The vertices sorted by the Fiedler vector of ``sub`` (stable), or None where ARPACK
    fails.

    ARPACK in shift-invert mode with a fixed start vector (deterministic).

    Parameters
    ----------
    sub : scipy.sparse.csr_matrix
        The symmetric pair weights of the ``n`` vertices.
    n : int
        The number of vertices.

    Returns
    -------
    ndarray of int64 or None
        The order; None where ARPACK fails (the caller grows from task 0).
    """
    from scipy.sparse.linalg import eigsh

    deg = np.asarray(sub.sum(axis=1)).ravel()
    lap = (sp.diags(deg) - sub).tocsc()
    try:
        shift = 1e-3 * max(float(deg.mean()), 1e-12)
        v0 = np.cos(np.arange(n) * 0.7548776662466927)  # fixed, not constant
        _, vec = eigsh(lap, k=2, sigma=-shift, which="LM", v0=v0, tol=1e-4, maxiter=200)
        f = vec[:, 1]
    except Exception:  # noqa: BLE001 - an ill-conditioned subgraph: the caller grows instead
        return None
    return np.argsort(f, kind="stable")


def _prefix(order: np.ndarray, wloc: np.ndarray, target: float) -> np.ndarray:
    """The prefix of weight ``target`` of the vertices in ``order`` (each counted in where
    its middle is), as a mask."""
    inside = np.zeros(wloc.shape[0], dtype=bool)
    csum = np.cumsum(wloc[order])
    k = int(np.searchsorted(csum - wloc[order] / 2, target))
    inside[order[:k]] = True
    return inside


def spectral_split(sub: sp.csr_matrix, wloc: np.ndarray, target: float) -> Optional[np.ndarray]:
    """Prefix of weight ``target`` of the tasks sorted by the Fiedler vector
    (:func:`fiedler_order`).

    Parameters
    ----------
    sub : scipy.sparse.csr_matrix
        The symmetric pair weights of the vertices to split.
    wloc : ndarray of float64
        Their weights.
    target : float
        The weight of the part.

    Returns
    -------
    ndarray of bool or None
        True for the part; None where ARPACK fails (the caller grows from task 0).
    """
    order = fiedler_order(sub, wloc.shape[0])
    return None if order is None else _prefix(order, wloc, target)


def split_point(gap: list, lo: int, hi: int) -> int:
    """Where to split positions ``lo..hi-1`` of a list: the largest ``gap`` (between
    positions ``i - 1`` and ``i``) in the middle half, the one nearest the middle (the
    first of those). Plain Python: it runs once per split, on a few values.

    Parameters
    ----------
    gap : list of float
        ``gap[i - 1]``: the distance between positions ``i - 1`` and ``i``.
    lo, hi : int
        The block (``hi - lo >= 2``).

    Returns
    -------
    int
        The first position of the right half.

    Examples
    --------
    >>> split_point([1.0, 1.0, 9.0, 1.0, 1.0, 1.0], 0, 7)
    3
    """
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


#: The predicted seconds of a Fiedler order (:func:`fiedler_order`, ARPACK's shift-invert)
#: per entry of the subgraph before one was measured in the run: 3-9e-6 of CPU (20-200 ms
#: on the fine levels of 1,000-4,096 tasks; 1-4 ms for a growing try), about 1e-5 at a
#: third of a core (a load of 6 on 2 cores; 1.5e-5 skipped splits that ended in time on the
#: geometric graphs at 0.5 s: 2.4 -> 13.7-22 %). After one, the largest measured in the time
#: limit's scope: the coarse levels' eigensolves come first, at the load of the moment.
FIEDLER_SECONDS = 1e-5

#: Before any eigensolve was measured: the seconds per entry are at least this many times the
#: call's coarsening pace (seconds per vertex + entry matched, :func:`note_pace`): the pace
#: carries the load the call runs under, which the constant above does not (issue 40,
#: h55tmap: 16^3 on 4x4x16 at 5 s beside busy loops, the finest graph's first eigensolve the
#: first of the call, predicted 0.23 s at 1e-5, took 0.7-2.3 s). Measured on the stencils and
#: geometric graphs of ``bench/taskmap/vs_peers.py`` (load 3-4): the first large eigensolve
#: took 1.1-7.6 x pace x entries (the 3-D stencils the 7.0-7.6). 0: the constant alone.
FIEDLER_PER_PACE = 8.0

#: A measured rate predicts a larger subgraph's eigensolve at ``(entries / measured
#: entries) ** FIEDLER_GROWTH`` times that rate per entry: shift-invert factorises the
#: Laplacian, whose fill grows faster than the entries on 3-D grids (quiet, one core: the
#: cubes of 1,000-8,000 tasks 5.9 -> 11.7 us per entry over 8.4x the entries, exponent 0.32;
#: the 2-D grids and geometric graphs flat or falling). 0: the old linear rule.
FIEDLER_GROWTH = 0.33

#: An eigensolve starts only when predicted to end within this share of the time left (1:
#: the old rule, "before the deadline"). It cannot be stopped inside and a split that ends
#: past the deadline is lost, so a prediction within the time left but off by 2x overran:
#: h54tmap measured 16^3 on 4x4x16 at 5 s beside six busy loops (load 5.7-7.6), 2 of 10
#: calls past the contract with 1, 0 of 10 with 0.5, answers 19.2 in all.
FIEDLER_SHARE = 0.5


def note_pace(seconds_per_unit: float) -> None:
    """Keep the call's coarsening pace (seconds per vertex + entry matched) on the time
    limit's scope (nothing without one): :func:`_in_time`'s floor before an eigensolve was
    measured (:data:`FIEDLER_PER_PACE`)."""
    scope = interrupt.current()
    if scope is not None and time_left() is not None and seconds_per_unit > 0:
        scope.fiedler_pace = float(seconds_per_unit)


def _measured(nnz: int, seconds: float) -> None:
    """Keep the wall seconds per entry of an eigensolve on the time limit's scope (nothing
    without one), with its entries: what :func:`_in_time` predicts from."""
    scope = interrupt.current()
    if scope is not None and time_left() is not None and nnz >= 1000:
        scope.fiedler_rate = max(getattr(scope, "fiedler_rate", 0.0), seconds / nnz)
        kept = scope.__dict__.setdefault("fiedler_seen", [])
        kept.append((seconds / nnz, nnz))


def predicted_seconds(nnz: int, scope=None) -> float:
    """The predicted wall seconds of the Fiedler order of a subgraph of ``nnz`` entries in
    ``scope`` (default: the current time limit's).

    Parameters
    ----------
    nnz : int
        The subgraph's stored entries.
    scope : optional
        The time limit's scope (its measured rates and pace, when any).

    Returns
    -------
    float
        With eigensolves measured in the scope (:func:`_measured`): the largest of each one's
        seconds per entry x ``nnz`` x ``max(1, nnz / its entries) ** FIEDLER_GROWTH``.
        Before: :data:`FIEDLER_SECONDS` per entry, or :data:`FIEDLER_PER_PACE` x the
        call's coarsening pace (:func:`note_pace`) where larger.
    """
    scope = interrupt.current() if scope is None else scope
    seen = getattr(scope, "fiedler_seen", None)
    if seen:
        return max(r * nnz * max(1.0, nnz / z) ** FIEDLER_GROWTH for r, z in seen)
    rate = getattr(scope, "fiedler_rate", None) or FIEDLER_SECONDS
    pace = getattr(scope, "fiedler_pace", None)
    if pace is not None:
        rate = max(rate, FIEDLER_PER_PACE * pace)
    return rate * nnz


#: A subgraph whose factorisation is predicted to cost more than this many operations per
#: entry (:func:`envelope_flops`) has its eigensolve predicted that many times slower
#: (:func:`_in_time`): shift-invert factorises the Laplacian, and on a graph with dense
#: cores the fill, not the entries, sets the time. Measured (issue 40, h56hub; load 16, one
#: Fiedler order of each fine graph of the held-back set and ``vs_peers``): ba 3000 m4,
#: 23,968 entries and 161k operations per entry, took 6.5-7.7 s (L+U 5.0M entries; the
#: factorisation 6.2 s of 7.1), 12-15x the prediction from the call's pace, and began with
#: 1.1 s left at 5 s ran the call 2-4 s past it; every stencil, mesh and geometric graph is
#: under 6.5k per entry (none changes), ba 2000 m2 72k (0.3 s: over-predicted 4x), ba 1000,
#: plc 1200, the 4-ary reduction 18-22k (about 2x). 0: off (the old rule).
FIEDLER_FILL = 10_000.0


def envelope_flops(sub: tuple) -> float:
    """The operations of a banded factorisation of the subgraph's Laplacian in the reverse
    Cuthill-McKee order: the sum of the squared row widths of its lower envelope (the
    distance of each row to its first entry). An upper estimate of the factorisation behind
    :func:`fiedler_order` (whose ordering is better), in about a millisecond per 10,000
    entries: it is small on meshes and geometric graphs (row widths about the square root
    of the vertices, or their 2/3 power) and near ``n**3 / 3`` on graphs with a dense core.

    Parameters
    ----------
    sub : tuple of ndarray
        ``(indptr, indices, data)`` of an undirected graph (no self-loops needed).

    Returns
    -------
    float
        The sum over rows of ``(row - first column) ** 2`` after the reordering.

    Examples
    --------
    >>> import numpy as np
    >>> path = (np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2]), np.ones(6))
    >>> envelope_flops(path)  # a path is banded: widths 0, 1, 1, 1
    3.0
    """
    sip, six, siw = sub
    n = sip.shape[0] - 1
    if n == 0 or six.shape[0] == 0:
        return 0.0
    csr = sp.csr_matrix((np.ones(six.shape[0]), six, sip), shape=(n, n))
    perm = csgraph.reverse_cuthill_mckee(csr, symmetric_mode=True)
    pos = np.empty(n, dtype=np.int64)
    pos[perm] = np.arange(n)
    rows = np.repeat(pos, np.diff(sip))  # each entry's row, by position
    first = np.arange(n)  # the first column of each position's row (itself at most)
    np.minimum.at(first, rows, pos[six])
    width = (np.arange(n) - first).astype(np.float64)
    return float(np.dot(width, width))


def _fill_factor(nnz: int, prep: Optional[dict]) -> float:
    """How many times slower than :func:`predicted_seconds` the eigensolve of the vertex set
    of ``prep`` (:func:`_prepared`) is predicted: ``envelope_flops / nnz /
    FIEDLER_FILL``, at least 1 (1 without ``prep``, below 1,000 entries, or with the knob
    off); kept in ``prep``."""
    if prep is None or FIEDLER_FILL <= 0 or nnz < 1000:
        return 1.0
    if "fill" not in prep:
        prep["fill"] = envelope_flops(prep["sub"]) / nnz
    return max(1.0, prep["fill"] / FIEDLER_FILL)


def _in_time(nnz: int, prep: Optional[dict] = None) -> bool:
    """Under a time limit, whether the Fiedler order of a subgraph of ``nnz`` entries is
    predicted (:func:`predicted_seconds`, times :func:`_fill_factor` for the vertex set of
    ``prep``) to end within :data:`FIEDLER_SHARE` of the time left (True without a time
    limit). An eigensolve cannot be stopped inside, and a split that ends past the deadline
    is lost (the stop comes at the next split; the run's answer is its mapping offered
    before). On the large stencils and geometric graphs it ran 0.07-0.18 s past a 1 s limit
    under a load of 6 (h51tmap), 0.5-1.8 s past 5 s beside busy loops (h54tmap), on ba 3000
    m4 2-4 s past 5 s (h56hub: :data:`FIEDLER_FILL`); skipped, the split grows from its
    seeds."""
    left = time_left()
    if left is None:
        return True
    budget = FIEDLER_SHARE * left
    pred = predicted_seconds(nnz)
    return pred <= budget and pred * _fill_factor(nnz, prep) <= budget


#: :func:`bisect_map` maps a block whose splits are all fast ones (one growing seed, no
#: spectral split: within the fastest links, or at most 8 tasks, or ``full`` False) by the
#: compiled ``_multilevel.bisect_block`` (twin:
#: :func:`coalloc.taskmap._reference.refine.bisect_block`, the Python recursion it replaces:
#: the same split points, NumPy's sums in the same order, ``bisect_small`` with the same
#: balance, so the same mapping and answers). Each fast split cost 60-80 us of Python around
#: its 20 us kernel; 17,000 of them on the 30 of ``bench/taskmap/vs_peers.py`` (issue 40,
#: h63cpu). False: the Python recursion (``grow`` called for each split).
BLOCK_KERNEL = True

#: Under a scope that polls (a time limit), only blocks of at most this many tasks are
#: mapped by one ``bisect_block`` call (unpolled; about 1 ms); larger ones split in Python.
BLOCK_POLLED = 1024


def bisect_map(
    topo: Topology,
    level: TaskLevel,
    subset: np.ndarray,
    share: np.ndarray,
    full: bool = True,
    spectral: bool = True,
) -> np.ndarray:
    """Recursive bisection of ``level`` onto the processors ``subset`` (increasing indices,
    i.e. in hierarchy order); returns the processor index of every vertex.

    Parameters
    ----------
    topo : Topology
        The processors in hierarchy order.
    level : TaskLevel
        The task graph to map.
    subset : ndarray of int64
        Processor positions, increasing.
    share : ndarray of float64, shape (P,)
        The share of the compute each position should get (relative).
    full : bool, default True
        Splits across links slower than the fastest ones get three growing seeds and the
        spectral split; otherwise (and always across the fastest links) one seed.
    spectral : bool, default True
        False: those splits get the three growing seeds and the hop-distance differences
        (:func:`_difference_order`) instead of the spectral split (its eigensolve is most of
        a fine bisection's time; issue 40, h53tmap).

    Returns
    -------
    ndarray of int64, shape (level.n,)
        The processor position of each vertex.

    Examples
    --------
    >>> import numpy as np
    >>> from coalloc.taskmap.generators import hierarchical_cluster
    >>> from coalloc.taskmap.hierarchy import topology
    >>> topo = topology(hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=1))
    >>> ip, ix = np.array([0, 1, 3, 5, 6]), np.array([1, 0, 2, 1, 3, 2])
    >>> lv = TaskLevel(ip, ix, np.array([5.0, 5.0, 1.0, 1.0, 5.0, 5.0]), np.ones(4))
    >>> bisect_map(topo, lv, np.arange(2), np.ones(2)).tolist()  # cut at the light edge
    [1, 1, 0, 0]
    """
    fast = float(topo.gap.min()) if topo.gap.shape[0] else 0.0
    gap_a = topo.cost[subset[:-1], subset[1:]]
    gap = gap_a.tolist()
    sh = share[subset]
    m = np.zeros(level.n, dtype=np.int64)
    stack = [(np.arange(level.n), 0, subset.shape[0])]
    _multilevel._rest_heap(REST_HEAP)  # (bisect_block's growing too)
    if BLOCK_KERNEL:  # the slow gaps before each position: a block without any is all fast
        slow_before = np.concatenate([[0], np.cumsum(gap_a > fast * (1 + 1e-9))]).tolist()
        most = None if interrupt.current() is None else BLOCK_POLLED
    while stack:
        interrupt.check()  # a split may take a spectral solve and FM passes: poll each
        verts, lo, hi = stack.pop()
        if (BLOCK_KERNEL and hi - lo >= 2 and verts.shape[0] >= 2
                and (most is None or verts.shape[0] <= most)
                and (not full or verts.shape[0] <= 8
                     or slow_before[hi - 1] == slow_before[lo])):  # fmt: skip
            # every split below is a fast one: the same recursion, compiled
            _multilevel.bisect_block(level.kern, verts, lo, hi, gap_a, sh, subset, level.vw,
                                     m, 4)  # fmt: skip
            continue
        if hi - lo == 1 or verts.shape[0] == 0:
            m[verts] = subset[lo]
            continue
        if verts.shape[0] == 1:  # one task: the processor of the largest share in the block
            m[verts] = subset[lo + int(np.argmax(sh[lo:hi]))]
            continue
        s = split_point(gap, lo, hi)
        left_cap, total_cap = sh[lo:s].sum(), sh[lo:hi].sum()
        target = level.vw[verts].sum() * left_cap / total_cap
        slow = full and gap[s - 1] > fast * (1 + 1e-9)
        slow = slow and verts.shape[0] > 8  # a few tasks: one seed and FM suffice
        inside = grow(level, verts, target, 3 if slow else 1, slow and spectral,
                      slow and not spectral)  # fmt: skip
        stack.append((verts[~inside], s, hi))
        stack.append((verts[inside], lo, s))
    return m
