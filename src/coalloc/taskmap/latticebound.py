"""The lattice bound: the uplinks of a stencil's groups of processors, all groups together.

Part of the default :func:`coalloc.taskmap.bounds.lower_bound` (issue 40 item 2). It applies
when the task graph contains a ``d``-dimensional box lattice (``d`` = 2 or 3) in C order:
for a shape ``k_1 x ... x k_d`` with ``prod k_i = n`` and every ``k_i >= 2``, task ``i`` is
the cell of C-order index ``i`` and every pair of axis neighbours is a stream of volume at
least ``v > 0`` (what :func:`coalloc.taskmap.generators.stencil_task_graph` builds; other
streams may exist too: they only add to a cut). Where no shape fits it adds nothing.

**Lemma 1 (the lattice perimeter).** For a set ``S`` of ``a`` cells, let ``P(S)`` be the
number of edges of the infinite lattice ``Z^d`` with one end in ``S`` and ``o(S)`` those
whose other end is outside the box (``S``'s contacts with the box's exterior). The edges of
``P(S)`` whose other end is a cell of the box are streams of volume at least ``v`` split by
``S``, so ``cut(S) >= v (P(S) - o(S))``. Every line of ``Z^d`` parallel to axis ``i`` that
meets ``S`` holds at least two edges of ``P(S)`` (where it enters and where it leaves
``S``), so ``P(S) >= 2 sum_i |pi_i(S)|`` (``pi_i``: the projection along axis ``i``), and
by the Loomis-Whitney inequality ``a^(d-1) <= prod_i |pi_i(S)|`` and the inequality of the
means, ``P(S) >= 2 d a^((d-1)/d)``; ``P(S)`` is even, so ``P(S) >= p(a) = 2 ceil(d
a^((d-1)/d))`` (with a relative slack of 1e-9 before the ceiling).

**Lemma 2 (the contacts, shared).** The contacts of disjoint sets add up to at most those
of the whole box, ``O = 2 sum_i prod_{j != i} k_j``; a set of ``a`` cells has at most
``K(a)``, the sum of the ``a`` largest per-cell contact counts.

**The bound.** Take the sides of the resource graph's bridges at one depth of its tree of
sides (:class:`coalloc.taskmap.cutbound._Sides`: the nodes of a cluster, or its racks):
disjoint groups ``j`` of processors of capacity ``C_j`` behind a bridge of bandwidth
``b_j``; the processors above that depth hold the rest. In a mapping of occupancy at most
``L`` the tasks of group ``j`` (``a_j`` of them, contacts ``o_j``) weigh at most ``L C_j``,
so ``a_j <= A_j``, the most of the lightest tasks that fit; their cut crosses the bridge, so
``v (p(a_j) - o_j) <= L b_j``: ``o_j >= o_min(a_j) = max(0, p(a_j) - L b_j / v)``, and
``o_min(a_j) <= K(a_j)``, ``sum_j o_j <= O``. The rest hold at most ``A_0`` tasks. So
``n - A_0 <= max sum_j a_j`` over those constraints, and for every ``lambda >= 0`` (weak
duality) that maximum is at most ``lambda O + sum_j max_a (a - lambda o_min(a))`` over the
``a <= A_j`` with ``o_min(a) <= K(a)``. If some ``lambda`` of a fixed grid makes it less
than ``n - A_0``, no mapping has occupancy ``L``. The test gets only easier as ``L`` grows,
so the least ``L`` that passes (bisection from below: the value returned failed) is a
lower bound. Work: ``depths x groups x lambdas x n`` (a count, no clock).

What it sees that the per-group arguments miss: a group's tasks cut at least the perimeter
of ``a`` cells *less* what the box's faces hide, and only ``O`` of face is there to share
among all groups together (a stencil on a heterogeneous cluster, bottlenecked at a node's
uplink).
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .._shared.caches import cache_of
from ._bisect import _least
from .model import ResourceGraph, TaskGraph

__all__ = ["lattice_bound", "find_lattice"]

#: The lattice bound is part of the default bound (measured: bench/taskmap/ISSUE40.md,
#: h58bound); False drops it (old/new alternated by flipping this).
LATTICE = True
_LAMBDAS = np.concatenate(([0.0], np.geomspace(1e-4, 1e4, 81)))  # the first grid of lambda
_FINE = 41  # the second grid, between the first's best point's neighbours
_MAX_N = 1 << 20  # no search above this many tasks (a count)
_SLACK = 1e-9


class _Lattice:
    """A box lattice found in the task graph: its shape, the least volume ``v`` of an axis
    pair, the sorted per-cell contact counts' prefix sums ``K`` and the whole box's ``O``."""

    def __init__(self, shape: tuple, v: float):
        self.shape = shape
        self.d = len(shape)
        self.v = v
        n = int(np.prod(shape))
        idx = np.indices(shape).reshape(self.d, n)
        contact = np.zeros(n, dtype=np.int64)
        for i, k in enumerate(shape):
            contact += (idx[i] == 0).astype(np.int64) + (idx[i] == k - 1).astype(np.int64)
        self.O = int(contact.sum())
        self.K = np.concatenate(([0], np.cumsum(np.sort(contact)[::-1])))


def _shapes(n: int):
    """Every shape ``(k_1, ..., k_d)``, d = 2 or 3, sides >= 2, product ``n``."""
    divs = [k for k in range(2, n // 2 + 1) if n % k == 0]
    for a in divs:
        if n // a >= 2:
            yield (a, n // a)
    for a in divs:
        for b in divs:
            if (n // a) % b == 0 and n // (a * b) >= 2:
                yield (a, b, n // (a * b))


def find_lattice(tasks: TaskGraph) -> Optional[_Lattice]:
    """The box lattice of the task graph in C order (see the module docstring), or None.

    Among the shapes that fit, the one with the most dimensions (then the first found);
    kept beside the task graph.

    Parameters
    ----------
    tasks : TaskGraph

    Returns
    -------
    _Lattice or None
    """
    cache = cache_of(tasks)
    if "lattice" in cache:
        return cache["lattice"]
    found = None
    n = tasks.n
    if 4 <= n <= _MAX_N:
        ip, ix, iw = tasks.undirected_csr()
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(ip))
        keys = rows * n + ix
        order = np.argsort(keys, kind="stable")
        keys, vols = keys[order], iw[order]
        n_pairs = int(np.count_nonzero(iw > 0)) // 2
        # the last axis's pairs (i, i + 1) first: one look-up for every shape
        q = np.arange(n - 1, dtype=np.int64) * (n + 1) + 1
        pos = np.minimum(np.searchsorted(keys, q), max(len(keys) - 1, 0))
        nxt = np.zeros(n, dtype=bool)
        if len(keys):
            nxt[:-1] = (keys[pos] == q) & (vols[pos] > 0)
        for shape in _shapes(n):
            need = sum((k - 1) * (n // k) for k in shape)
            if need > n_pairs or (found is not None and len(shape) <= found.d):
                continue
            k = shape[-1]
            if not nxt[np.arange(n) % k != k - 1].all():
                continue
            v = _axis_volume(shape, keys, vols, n)
            if v > 0:
                found = _Lattice(shape, v)
    cache["lattice"] = found
    return found


def _axis_volume(shape: tuple, keys: np.ndarray, vols: np.ndarray, n: int) -> float:
    """The least volume of an axis pair of ``shape`` in C order (0 if one is missing)."""
    idx = np.indices(shape).reshape(len(shape), n)
    cells = np.arange(n, dtype=np.int64)
    least = np.inf
    stride = 1
    for i in range(len(shape) - 1, -1, -1):
        src = cells[idx[i] < shape[i] - 1]
        q = src * n + src + stride
        pos = np.searchsorted(keys, q)
        pos = np.minimum(pos, len(keys) - 1)
        if len(keys) == 0 or not np.all(keys[pos] == q):
            return 0.0
        least = min(least, float(vols[pos].min()))
        stride *= shape[i]
    return least if least > 0 else 0.0


def side_capacities(sides) -> tuple:
    """``(own, sub)`` of a tree of sides (``cutbound._Sides``): the capacity of each side's
    own processors, and of its whole subtree."""
    own = np.bincount(sides.pcomp, weights=sides.cap, minlength=sides.ncomp)
    sub = own.copy()
    for c in sides.order.tolist():  # leaves first
        p = sides.parent[c]
        if p >= 0:
            sub[p] += sub[c]
    return own, sub


def _groups(resources: ResourceGraph) -> list:
    """Per depth of the tree of sides (from 1): ``(C, b, C_rest)``: the capacities and
    uplink bandwidths of the sides at that depth (each with its subtree) and the capacity
    of the processors above it."""
    from .cutbound import _Sides

    sides = _Sides(resources)
    nc = sides.ncomp
    depth = np.zeros(nc, dtype=np.int64)
    for c in sides.order[::-1].tolist():  # root first
        p = sides.parent[c]
        depth[c] = 0 if p < 0 else depth[p] + 1
    own, sub = side_capacities(sides)
    out = []
    for dep in range(1, int(depth.max()) + 1 if nc else 1):
        at = np.flatnonzero((depth == dep) & (sub > 0))
        if at.size == 0:
            continue
        rest = float(own[depth < dep].sum())
        out.append((sub[at], sides.bw_up[at], rest))
    return out


def _most(prefix: np.ndarray, cap: float) -> int:
    """The most tasks whose lightest weights fit ``cap`` (``prefix``: sorted prefix sums)."""
    return int(np.searchsorted(prefix, cap * (1 + _SLACK) + _SLACK, side="right")) - 1


def _feasible(lat: _Lattice, groups: list, prefix: np.ndarray, L: float) -> bool:
    """False when the lattice argument proves no mapping has occupancy ``L``."""
    n = len(prefix) - 1
    d = lat.d
    a_all = np.arange(n + 1, dtype=np.float64)
    p = 2.0 * np.ceil(d * a_all ** ((d - 1) / d) * (1 - _SLACK))
    for caps, bws, rest in groups:
        need = n - _most(prefix, L * rest)
        if need <= 0:
            continue
        tops = np.minimum(np.searchsorted(prefix, L * caps * (1 + _SLACK) + _SLACK,
                                          side="right") - 1, n)  # fmt: skip
        room = L * bws / lat.v * (1 + _SLACK)
        free = p[tops] <= room  # these hold their most with no contact: a - lambda 0
        if tops.sum() < need:
            return False  # (compute alone; every lambda's value is at most sum tops)
        if free.all():
            continue
        base = float(tops[free].sum())
        sides = []
        for top, r in zip(tops[~free].tolist(), room[~free].tolist()):
            omin = np.maximum(0.0, p[: top + 1] - r)
            ok = omin <= lat.K[: top + 1] + 1e-9
            sides.append((a_all[: top + 1][ok], omin[ok]))
        best = _dual(sides, lat.O, _LAMBDAS)
        i = int(np.argmin(best))
        lo = _LAMBDAS[max(i - 1, 0)]
        hi = _LAMBDAS[min(i + 1, len(_LAMBDAS) - 1)]
        fine = np.linspace(lo, hi, _FINE)  # a second grid between the best one's neighbours
        if base + min(float(best.min()), float(_dual(sides, lat.O, fine).min())) < need - 1e-9:
            return False
    return True


def _dual(sides: list, O: float, lambdas: np.ndarray) -> np.ndarray:
    """``lambda O + sum_j max_a (a - lambda o_min(a))`` for every ``lambda`` given."""
    total = lambdas * O
    for a, om in sides:
        total = total + (a[None, :] - lambdas[:, None] * om[None, :]).max(axis=1)
    return total


def lattice_bound(tasks: TaskGraph, resources: ResourceGraph, start: float) -> float:
    """The lattice bound (module docstring), at least ``start``.

    Parameters
    ----------
    tasks, resources : TaskGraph, ResourceGraph
    start : float
        A valid lower bound (the bisection starts there).

    Returns
    -------
    float
        ``start`` when no lattice is found or the argument adds nothing; else the largest
        occupancy found to fail the test.

    Examples
    --------
    An 8 x 8 stencil on four nodes of two cores behind uplinks of 1: the spread is 4; four
    4 x 4 quadrants (a cut of 8 each) reach 8.

    >>> from coalloc.taskmap import generators as gen
    >>> from coalloc.taskmap.latticebound import lattice_bound
    >>> tasks = gen.stencil_task_graph((8, 8))
    >>> res = gen.hierarchical_cluster(n_racks=1, nodes_per_rack=4, cores_per_node=2,
    ...                                speed=2.0, node_bandwidth=1.0)
    >>> round(lattice_bound(tasks, res, 4.0), 2)
    6.82
    """
    if not LATTICE or start <= 0 or resources.n_links == 0:
        return start
    lat = find_lattice(tasks)
    if lat is None:
        return start
    groups = _groups(resources)
    if not groups:
        return start
    prefix = np.concatenate(([0.0], np.cumsum(np.sort(tasks.node_weight.astype(np.float64)))))
    return _least(lambda L: _feasible(lat, groups, prefix, L), float(start))
