"""The job bound of :func:`coalloc.taskmap.bounds.lower_bound` (part of the default
``"stars"`` strength): each dense job of the task graph, alone, placed integrally over the
tree of the resource graph's bridges.

**Lemma 1 (a job alone).** Drop every task outside a set ``J`` and every stream with an end
outside ``J``: every processor load and every link load of a mapping only falls, so the least
maximum occupancy of ``J`` alone is a lower bound for the whole task graph. The largest such
bound over any family of sets ``J`` is one too (each argument is about one set only).

**Lemma 2 (a cut profile).** Let ``J`` be ``k`` tasks with volumes ``V`` between them. A
task ``t`` of a subset ``X`` of ``n`` keeps inside ``X`` at most its ``n - 1`` largest volumes
to ``J``, so the volume between ``X`` and ``J - X`` is at least the sum of the ``n`` smallest
``vol_J(t) - top_{n-1}(t)``; the same holds for ``J - X`` with ``k - n`` (the same cut):
``cut[n]`` is the larger. For a clique of equal volumes ``v``, ``cut[n] = n (k - n) v``.

**Lemma 3 (a job, integrally).** In a mapping of ``J`` with maximum occupancy at most ``L``,
let ``n_p`` of its tasks sit on processor ``p``. Then

1. ``S(n_p) <= L c_p``, with ``S(n)`` the weight of the ``n`` lightest tasks of ``J``;
2. at least ``cut[n_p]`` leaves ``p`` over its own links (every route from ``p`` leaves by
   one of them): at most ``L`` times their bandwidth;
3. for every bridge of the resource graph with ``N`` of the tasks on the processors of one
   side, at least ``cut[N]`` crosses it (every path between the sides does): ``cut[N] <= L
   bw``.

Over the tree of 2-edge-connected components joined by the bridges, from the leaves up, the
set of counts a side can hold (the sums of its processors' and child sides' counts, those of
a child side kept only where 3. holds) is a set of integers in ``0..k`` (a bitset); if the
root's set lacks ``k`` no mapping of ``J`` has occupancy ``L``. The test gets only easier as
``L`` grows, and its answer changes only where some ``S(n) / c_p``, ``cut[n] / b`` equals
``L``: the least passing value among those (a binary search over them, with a relative slack
of 1e-12 so that a rounding error never fails a feasible ``L``) is the exact least ``L`` of
the relaxation, hence a lower bound.

The jobs ``J``: the connected components of the pairs whose volume is at least half the
largest volume of either end, of 3 to ``_K_MAX`` tasks (a pipeline's jobs are cliques). Which
sets are taken never affects soundness (Lemma 1), only strength. Work: at most ``_K_MAX``
bits per side, ``log2`` of the candidate values tests per job, capped by a count
(``_WORK``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .cutbound import _Sides
from .model import ResourceGraph, TaskGraph

_K_MAX = 24  # largest job the bound takes (tasks)
_SLACK = 1e-12  # relative slack of every test (as the stars bound)
_WORK = 3e5  # cap on (job tests x sides): the jobs past it are left out


def _jobs(tasks: TaskGraph) -> list:
    """``(members, cut)`` for every job: a connected set of 3..``_K_MAX`` tasks and
    ``cut[n]`` (``n = 0..k``) a certified lower bound on the volume between any ``n`` of
    them and the other ``k - n`` (:func:`_cut_profile`); jobs with no cut left out."""
    out = []
    for members in _job_sets(tasks):
        cut = _profile_of(tasks, members)
        if cut.max() > 0:
            out.append((members, cut))
    return out


def _job_sets(tasks: TaskGraph) -> list:
    """The jobs' task sets (sorted index arrays), heaviest first: the connected components
    of the pairs whose volume is at least half the larger of its ends' largest volumes, of
    3..``_K_MAX`` tasks. Linear work (a sort of the tasks by component)."""
    from scipy.sparse import csgraph

    n = tasks.n
    ip, ix, iw = tasks.undirected_csr()
    if ix.shape[0] == 0:
        return []
    deg = np.diff(ip)
    rows = np.repeat(np.arange(n), deg)
    top = np.zeros(n)
    has = deg > 0
    top[has] = np.maximum.reduceat(iw, ip[:-1][has])
    keep = (iw > 0) & (iw >= 0.5 * np.minimum(top[rows], top[ix]))
    a = sp.csr_matrix((np.ones(int(keep.sum())), (rows[keep], ix[keep])), shape=(n, n))
    ncomp, comp = csgraph.connected_components(a, directed=False)
    sizes = np.bincount(comp, minlength=ncomp)
    weight = np.bincount(comp, weights=tasks.node_weight.astype(np.float64), minlength=ncomp)
    order = np.argsort(comp, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    chosen = np.flatnonzero((sizes >= 3) & (sizes <= _K_MAX))
    chosen = chosen[np.argsort(-weight[chosen], kind="stable")]
    return [order[starts[j]:starts[j + 1]] for j in chosen.tolist()]


def _profile_of(tasks: TaskGraph, members: np.ndarray) -> np.ndarray:
    """:func:`_cut_profile` of the volumes among ``members``."""
    ip, ix, iw = tasks.undirected_csr()
    full = sp.csr_matrix((iw, ix, ip), shape=(tasks.n, tasks.n))
    return _cut_profile(full[members][:, members].toarray())


def _cut_profile(V: np.ndarray) -> np.ndarray:
    """``cut[n]``: a lower bound on the volume between any ``n`` of the ``k`` tasks of the
    symmetric volume matrix ``V`` (zero diagonal) and the rest. A task ``t`` of a set ``X``
    of ``n`` keeps inside ``X`` at most its ``n - 1`` largest volumes, so ``X``'s cut is at
    least the sum over ``X`` of ``r_n(t) = vol(t) - top_{n-1}(t)``, at least the sum of the
    ``n`` smallest ``r_n``; the same for the other ``k - n`` (the same cut): the larger of
    the two. For a clique of equal volumes ``v``: ``n (k - n) v``."""
    k = V.shape[0]
    total = V.sum(axis=1)
    ranked = np.concatenate([np.zeros((k, 1)), np.cumsum(-np.sort(-V, axis=1), axis=1)], axis=1)
    least = np.zeros(k + 1)
    for m in range(1, k):
        least[m] = np.sort(np.maximum(total - ranked[:, m - 1], 0.0))[:m].sum()
    cut = np.maximum(least, least[::-1])
    cut[0] = cut[k] = 0.0
    return cut


def _jobs_bound(tasks: TaskGraph, resources: ResourceGraph, start: float) -> float:
    """The largest job bound (Lemma 2) over the jobs, or ``start`` when none is larger."""
    if tasks.n < 3 or resources.n_processors < 1:
        return start
    jobs = _job_sets(tasks)
    if not jobs:
        return start
    sides = _Sides(resources)
    if sides.order.shape[0] != sides.ncomp:
        return start  # a resource graph in pieces: not every side is on the tree
    w = tasks.node_weight.astype(np.float64)
    cmax = float(sides.cap.max())
    if not cmax > 0:
        return start
    best = float(start)
    per_test = resources.n_processors + sides.ncomp
    work = 0
    for members in jobs:  # heaviest first: the likeliest to bind
        S = np.concatenate([[0.0], np.cumsum(np.sort(w[members]))])
        if S[-1] / cmax <= best:
            break  # the whole job fits on the largest processor (and so do the lighter ones)
        k = members.shape[0]
        work += k * k + per_test * 2 * (k + 9)  # its profile, about one binary search's tests
        if work > _WORK:
            break  # a count, not a clock: the bound stays valid, only weaker
        cut = _profile_of(tasks, members)
        if cut.max() > 0:
            best = max(best, _job_least(sides, S, cut, best))
    return best


def _job_least(sides: _Sides, S: np.ndarray, cut: np.ndarray, start: float) -> float:
    """The least candidate ``L`` (at least ``start``) at which the job of prefix weights
    ``S`` and cut profile ``cut`` (``k + 1`` entries each) passes :func:`_job_feasible`."""
    pairs = cut[cut > 0]
    cap = sides.cap[sides.cap > 0]
    cand = [np.outer(S[1:], 1.0 / np.unique(cap)).ravel()]
    for b in (sides.band, sides.bw_up):
        b = np.unique(b[b > 0])
        if b.size:
            cand.append(np.outer(pairs, 1.0 / b).ravel())
    cand = np.unique(np.concatenate(cand))
    cand = cand[cand > start]
    if cand.size == 0 or _job_feasible(sides, S, cut, start):
        return start
    lo, hi = -1, cand.size - 1  # cand[hi] passes (everything on the largest processor)
    if not _job_feasible(sides, S, cut, float(cand[hi])):
        return start  # cannot happen; never claim more than the search showed
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _job_feasible(sides, S, cut, float(cand[mid])):
            hi = mid
        else:
            lo = mid
    # every candidate below cand[hi] fails (start too), and the exact test changes only at
    # candidates: its least passing value is at least cand[hi] (up to rounding)
    return max(start, float(cand[hi]) / (1 + _SLACK))


def _job_feasible(sides: _Sides, S: np.ndarray, cut: np.ndarray, L: float) -> bool:
    """False only if no mapping of the job alone has maximum occupancy at most ``L``."""
    k = S.shape[0] - 1
    Ls = L * (1 + _SLACK)
    counts = np.arange(k + 1)
    split = cut
    mask = (1 << (k + 1)) - 1
    most = np.searchsorted(S, Ls * sides.cap, side="right") - 1  # the largest n: S[n] <= L c
    ok = (split[None, :] <= Ls * sides.band[:, None]) & (counts[None, :] <= most[:, None])
    ok[:, 0] = True
    bits = (ok.astype(np.int64) << counts[None, :]).sum(axis=1).tolist()
    sets = [1] * sides.ncomp  # {0}
    for p, c in enumerate(sides.pcomp.tolist()):
        if bits[p] != 1:
            sets[c] = _sumset(sets[c], bits[p], mask)
    through = (split[None, :] <= Ls * sides.bw_up[:, None]).astype(np.int64)
    allowed = (through << counts[None, :]).sum(axis=1).tolist()
    parent = sides.parent
    for c in sides.order.tolist():
        p = parent[c]
        if p < 0:
            return bool((sets[c] >> k) & 1)
        s = sets[c] & allowed[c]
        if s != 1:
            sets[p] = _sumset(sets[p], s, mask)
    return True


def _sumset(a: int, b: int, mask: int) -> int:
    """``{x + y : x in a, y in b}`` of two bitsets, cut at ``mask``."""
    if a == 1:
        return b & mask
    if b == 1:
        return a
    out = 0
    i = 0
    while b:
        if b & 1:
            out |= a << i
        b >>= 1
        i += 1
    return out & mask
