"""The bisection's extra tries on a level's first split (issue 40, h57band): band splits of a
periodic grid (:func:`band_orders`) and multilevel splits (:func:`_vcycle`).

:func:`~coalloc.taskmap.bisection.grow` tries them after its growing seeds and its spectral
split (or hop-distance differences), across slow links, and keeps one only where its cut is
strictly smaller. Moved out of :mod:`~coalloc.taskmap.bisection` (the house's 800 lines).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Callable, Optional

import numpy as np
import scipy.sparse as sp

from .._shared import interrupt
from .._shared.params import time_left
from . import _multilevel
from .levels import TaskLevel, coarsen_level

__all__ = ["band_orders"]


#: Band splits (issue 40, h57band): where the smallest nonzero eigenvalue of the Laplacian
#: is multiple (a periodic grid: the row and the column modes of a torus are equal, so the
#: Fiedler vector is an arbitrary mix of them and its prefixes cut diagonally), the prefixes
#: along its purest directions (:func:`band_orders`: a band, two ring cuts, on a torus) are
#: tried beside the other splits and kept where their cut is strictly smaller. 0: off;
#: 1: the first split of a level only (all its vertices); 2: every split that tries the
#: spectral one. Measured on mm25d 16x16x4 onto tree 4x4x4x2 het (the held-back set):
#: untimed 13.87 -> 12.8 (KaHIP's 12.8).
BAND_SPLITS = 1
#: How many pure directions a band split tries (the purest first).
BAND_DIRECTIONS = 2
#: Eigenvalues within this relative distance of the smallest nonzero one count as equal.
BAND_TOLERANCE = 1e-3
#: The eigenpairs :func:`band_orders` asks ARPACK for (the constant vector's among them).
_BAND_K = 6


#: Multilevel splits (issue 40, h57band): the split's vertices contracted by heavy-edge
#: matchings (:func:`~coalloc.taskmap.levels.coarsen_level`, its own random order per
#: repeat) to about :data:`VCYCLE_COARSE` vertices, grown there (three seeds and the
#: spectral split), and FM passes on every level back up (:func:`_vcycle`): the flat growing
#: on the fine graph misses the cuts a contraction sees (plc 400 m2 onto tree 8x2, the first
#: split: 585.9 flat, 540.2 multilevel; SharedMap's 547-561). Tried beside the others, kept
#: where strictly smaller. 0: off; 1: the first split of a level (all its vertices) across a
#: slow link; 2: every split across a slow link of more than ``2 x VCYCLE_COARSE`` vertices.
VCYCLE_SPLITS = 1
#: Contractions tried per split (their matchings' orders drawn from seeds 0, 1, ...).
VCYCLE_REPEATS = 4
#: The contraction stops at about this many vertices.
VCYCLE_COARSE = 64


#: Under a time limit the multilevel tries of a split begin only when predicted to take at
#: most this share of the time left: ``VCYCLE_SECONDS`` per vertex and entry of the split's
#: graph (all repeats), or the largest rate measured in the time limit's scope (which
#: carries the load). Measured (quiet, one call each, the four repeats of a first split):
#: plc 400 1.8e-5 s (36 ms), delaunay2d 1000 5.6e-6, stencil27 12^3 2.1e-6; at T = 1 s
#: under a load of 7-9 the tries on every first split cost stencil27 12^3 on a torus 39.1 ->
#: 55.8 and stencil9 48x48 51.6 -> 53.6 (their fine re-bisections cut short).
VCYCLE_SHARE = 0.1
#: The predicted seconds of a split's multilevel tries per vertex and entry, before one was
#: measured in the time limit's scope.
VCYCLE_SECONDS = 2e-5


def _vcycle_in_time(prep: dict, left: Optional[float]) -> bool:
    """Under a time limit (``left`` seconds left, None: none), whether the multilevel tries
    of the vertex set of ``prep`` are predicted to end within :data:`VCYCLE_SHARE` of the
    time left (True without one)."""
    if left is None:
        return True
    sip = prep["sub"][0]
    units = float(sip.shape[0] - 1 + sip[-1])
    rate = max(VCYCLE_SECONDS, getattr(interrupt.current(), "vcycle_rate", 0.0))
    return rate * units <= VCYCLE_SHARE * left


def _vcycle_measured(prep: dict, seconds: float, timed: bool) -> None:
    """Keep a multilevel try's seconds, as the rate of all the repeats per vertex and
    entry, on the time limit's scope (nothing without one: ``timed`` False)."""
    scope = interrupt.current()
    if scope is not None and timed:
        sip = prep["sub"][0]
        units = float(sip.shape[0] - 1 + sip[-1])
        rate = VCYCLE_REPEATS * seconds / max(units, 1.0)
        scope.vcycle_rate = max(getattr(scope, "vcycle_rate", 0.0), rate)


#: The multilevel splits' state in the current context (h58edge): ``_OFF`` True makes
#: :func:`_vcycle_here` False (the flat splits alone); ``_WON`` a list (None: not kept) that
#: :func:`~coalloc.taskmap.bisection.grow` appends to where a multilevel split won
#: (``multilevel.VCYCLE_BOTH``).
_OFF: ContextVar[bool] = ContextVar("vcycle_off", default=False)
_WON: ContextVar[Optional[list]] = ContextVar("vcycle_won", default=None)


#: Untimed (h58edge): the first this many fine re-bisections of a run whose first split a
#: multilevel split won are made again with the flat splits alone (:func:`both_ways`), and
#: the multilevel mapper refines both through the levels and keeps the lower maximum
#: occupancy (the cut is not the bottleneck: on geometric 1200 onto the Table 1 graph the
#: V-cycle's smaller cut led the untimed run to 4.9859 where the flat split gives 4.9336, a
#: 0.2 s call's answer, whose budget gates the V-cycle off). On the 30 of ``vs_peers`` the
#: flat one won on the first (the best coarse start's) only; on all of them the CPU rose
#: 1.17x. 0: the split of the smaller cut alone, as before.
VCYCLE_BOTH = 1


def both_ways(bisect: Callable[[], np.ndarray], rank: int = 1) -> list:
    """``[bisect()]``, and, untimed for the ``rank``-th fine re-bisection of a run up to
    :data:`VCYCLE_BOTH` where a multilevel split won a first split in it, the mapping
    ``bisect()`` makes with the flat splits alone (when it differs) after it."""
    if rank > VCYCLE_BOTH or time_left() is not None:
        return [bisect()]
    won: list = []
    token = _WON.set(won)
    try:
        m = bisect()
    finally:
        _WON.reset(token)
    if not won:
        return [m]
    token = _OFF.set(True)
    try:
        flat = bisect()
    finally:
        _OFF.reset(token)
    return [m] if np.array_equal(flat, m) else [m, flat]


def _vcycle_here(level: TaskLevel, verts: np.ndarray) -> bool:
    """Whether a slow split of ``verts`` tries :func:`_vcycle` (:data:`VCYCLE_SPLITS`)."""
    if VCYCLE_SPLITS <= 0 or verts.shape[0] <= 2 * VCYCLE_COARSE or _OFF.get():
        return False
    return VCYCLE_SPLITS >= 2 or verts.shape[0] == level.n


def _vcycle(prep: dict, wloc: np.ndarray, target: float, tol: float, rep: int,
            grow: Callable, spectral: bool = True,
            differences: bool = False) -> Optional[np.ndarray]:  # fmt: skip
    """One multilevel split of the vertex set of ``prep`` (``bisection._prepared``): its
    contraction ``rep`` (kept in ``prep`` for the other targets), grown on the coarsest
    level by ``grow`` (:func:`~coalloc.taskmap.bisection.grow`; with the split's ``spectral`` and
    ``differences``: no eigensolve where the split has none), projected and refined by FM
    passes on each finer level (the compiled ``grow_fm`` from the projected part). Returns
    the mask over the vertices, or None where the matchings stall above ``2 x
    VCYCLE_COARSE`` vertices (the coarsest grown there would try its own V-cycle)."""
    chains = prep.setdefault("chains", {})
    chain = chains.get(rep)
    if chain is None:
        sip, six, siw = prep["sub"]
        chain = [TaskLevel(sip, six, siw, wloc)]  # (its own: coarsen_level sets cmap)
        rng = np.random.default_rng(rep)
        max_w = max(1.5 * float(wloc.sum()) / VCYCLE_COARSE, float(wloc.max()))
        while chain[-1].n > VCYCLE_COARSE:
            interrupt.check()
            nxt = coarsen_level(chain[-1], max_w, rng)
            if nxt is None:
                break
            chain.append(nxt)
        chains[rep] = chain
    coarse = chain[-1]
    if coarse.n > 2 * VCYCLE_COARSE:
        return None  # the matchings stalled (a star: < 5 % a level): no V-cycle
    inside = grow(coarse, np.arange(coarse.n, dtype=np.int64), target, 3, spectral,
                  differences)  # fmt: skip
    for lv in chain[-2::-1]:
        interrupt.check()
        inside = _multilevel.grow_fm(lv.ip, lv.ix, lv.iw, lv.vw, target, -1, tol, 4,
                                     inside[lv.cmap])  # fmt: skip
    return inside


def _band_here(level: TaskLevel, verts: np.ndarray) -> bool:
    """Whether a split of ``verts`` tries the band orders (:data:`BAND_SPLITS`)."""
    return BAND_SPLITS >= 2 or (BAND_SPLITS == 1 and verts.shape[0] == level.n)


def _pure_directions(x: np.ndarray, iters: int = 200) -> list:
    """Unit directions in the column space of ``x`` (n x m, orthogonal columns) along which
    the projected values have the smallest kurtosis, found one after another (each
    orthogonal to those before) by the fixed-point iteration ``u <- E[z (u.z)^3] - 3 u`` on
    the standardised rows ``z`` (the fixed points of the fourth moment on the sphere). A
    pure mode of a periodic grid, ``cos(2 pi i / q)``, has kurtosis 1.5; an even mix of two
    independent ones 2.25. Returns ``[(kurtosis, values)]``, lowest kurtosis first."""
    n, m = x.shape
    z = x - x.mean(axis=0)
    scale = np.sqrt((z**2).mean(axis=0))
    z = z / np.where(scale > 0, scale, 1.0)
    found, basis = [], []
    for k in range(m):
        u = np.zeros(m)
        u[k] = 1.0
        for w in basis:
            u -= (u @ w) * w
        if np.linalg.norm(u) < 1e-9:
            continue
        u /= np.linalg.norm(u)
        for _ in range(iters):
            y = z @ u
            nxt = (z * (y**3)[:, None]).mean(axis=0) - 3.0 * u
            for w in basis:
                nxt -= (nxt @ w) * w
            norm = np.linalg.norm(nxt)
            if norm < 1e-12:
                break
            nxt /= norm
            done = abs(abs(float(nxt @ u)) - 1.0) < 1e-10
            u = nxt
            if done:
                break
        basis.append(u)
        y = z @ u
        found.append((float((y**4).mean() / max((y**2).mean() ** 2, 1e-300)), y))
    return sorted(found, key=lambda kv: kv[0])


def band_orders(sub: sp.csr_matrix, n: int) -> list:
    """Vertex orders along the purest directions of the Laplacian's lowest eigenspace when
    its smallest nonzero eigenvalue is multiple, else ``[]``.

    ARPACK in shift-invert mode (the fixed start vector of :func:`fiedler_order`) gives the
    :data:`_BAND_K` smallest eigenpairs; the eigenvectors whose eigenvalue is within
    :data:`BAND_TOLERANCE` of the smallest nonzero one span its eigenspace (on a torus the
    row and column modes), and :func:`_pure_directions` rotates them to the directions of
    the smallest kurtosis: one periodic mode each, whose prefixes are bands (two ring cuts)
    where the Fiedler vector's mix cuts diagonally.

    Parameters
    ----------
    sub : scipy.sparse.csr_matrix
        The symmetric pair weights of the ``n`` vertices.
    n : int
        The number of vertices.

    Returns
    -------
    list of ndarray of int64
        At most :data:`BAND_DIRECTIONS` orders (stable argsorts), purest first; empty where
        the eigenvalue is simple, the graph too small, or ARPACK fails.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> ring = sp.csr_matrix((np.ones(32), (np.arange(32), (np.arange(32) + 1) % 32)),
    ...                      shape=(32, 32))
    >>> orders = band_orders(ring + ring.T, 32)  # a ring: cos and sin modes, equal
    >>> len(orders) >= 1
    True
    >>> path = sp.diags([np.ones(31), np.ones(31)], [-1, 1]).tocsr()
    >>> band_orders(path, 32)  # a path: its Fiedler value is simple
    []
    """
    from scipy.sparse.linalg import eigsh

    k = min(_BAND_K, n - 2)
    if k < 3:
        return []
    deg = np.asarray(sub.sum(axis=1)).ravel()
    lap = (sp.diags(deg) - sub).tocsc()
    try:
        shift = 1e-3 * max(float(deg.mean()), 1e-12)
        v0 = np.cos(np.arange(n) * 0.7548776662466927)
        lam, vec = eigsh(lap, k=k, sigma=-shift, which="LM", v0=v0, tol=1e-4, maxiter=200)
    except Exception:  # noqa: BLE001 - an ill-conditioned subgraph: no band tries
        return []
    o = np.argsort(lam)
    lam, vec = lam[o], vec[:, o]
    low = float(lam[1])
    if low <= 1e-9 * max(float(deg.max()), 1e-12):
        return []  # disconnected: the smallest "nonzero" is zero
    same = np.flatnonzero(lam[1:] <= low * (1 + BAND_TOLERANCE)) + 1
    if same.shape[0] < 2:
        return []
    pure = _pure_directions(vec[:, same])
    return [np.argsort(y, kind="stable") for _, y in pure[:BAND_DIRECTIONS]]
