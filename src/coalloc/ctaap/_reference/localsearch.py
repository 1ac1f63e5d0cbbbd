"""Slow, obviously-correct twin of :mod:`coalloc.ctaap._localsearch` (iterated local search).

Everything is recomputed from a dense conflict tensor at every step instead of being
maintained incrementally:

``conflict[i, j, k, l]`` is True when placements (i, j) and (k, l) of two distinct tasks
break constraint (4): ``b[i, k] > bhat[j, l]`` or ``b[k, i] > bhat[l, j]`` with ``b > 0``.

A move is checked by building the allocation it leads to and calling :func:`is_feasible`.

* :func:`find_moves_reference` lists, by brute force, every (0,1) insertion and (1,2) swap
  of an allocation (the moves that ``coalloc.ctaap._localsearch.count_moves`` counts);
* :func:`is_local_optimum_reference` says whether there is none;
* :func:`improve_reference` runs the iterated local search of
  ``coalloc.ctaap._localsearch.improve`` move for move (the kernel's scan orders, list orders
  and xoshiro256** stream), so the two return the same allocation and counters.

The move definitions (shared with the kernel):

(0,1) insertion ``(k, l)``
    unplaced task ``k`` can be placed in cluster ``l``: the result is feasible.
(1,2) swap ``(i, k1, l1, k2, l2)``, ``k1 < k2``
    removing placed task ``i`` (from cluster ``j``) and placing ``k1`` in ``l1`` and ``k2``
    in ``l2`` gives a feasible allocation; each of ``k1``, ``k2`` is unplaced or ``i``
    itself moved to another cluster (``l != j``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..._shared import interrupt
from ..._shared.xoshiro import Xoshiro256

__all__ = [
    "conflict_tensor",
    "is_feasible",
    "find_moves_reference",
    "count_moves_reference",
    "is_local_optimum_reference",
    "improve_reference",
]


# ------------------------------------------------------------------------------ model


def _dense(indptr, indices, data, n):
    """Dense matrix of a CSR triple (duplicates summed), diagonal cleared."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    data = np.asarray(data, dtype=np.float64)
    if indptr.shape != (n + 1,) or indices.ndim != 1 or data.shape != indices.shape:
        raise ValueError("malformed CSR arrays")
    if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] != indices.size:
        raise ValueError("malformed indptr")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise ValueError("indices out of range")
    dense = sp.csr_array((data, indices, indptr), shape=(n, n)).toarray()
    np.fill_diagonal(dense, 0.0)
    return dense


def conflict_tensor(indptr, indices, data, t_indptr, t_indices, t_data, bhat):
    """Boolean ``(n, m, n, m)`` tensor of conflicting placements of distinct tasks.

    Parameters
    ----------
    indptr, indices, data, t_indptr, t_indices, t_data
        CSR of the request bandwidth ``b`` and of its transpose (checked to match).
    bhat : array_like, shape (m, m)
        Available bandwidth between clusters.

    Returns
    -------
    ndarray of bool
        ``out[i, j, k, l]``: placements (i, j) and (k, l) break constraint (4); always
        False for ``i == k``.
    """
    indptr = np.asarray(indptr)
    n = indptr.shape[0] - 1
    bhat = np.asarray(bhat, dtype=np.float64)
    b = _dense(indptr, indices, data, n)
    bt = _dense(t_indptr, t_indices, t_data, n)
    if not np.allclose(bt, b.T, rtol=1e-12, atol=0.0):
        raise ValueError("(t_indptr, t_indices, t_data) is not the transpose of the matrix")
    b_ik = b[:, None, :, None]  # b[i, k]
    b_ki = b.T[:, None, :, None]  # b[k, i]
    out = ((b_ik > 0) & (b_ik > bhat[None, :, None, :])) | (
        (b_ki > 0) & (b_ki > bhat.T[None, :, None, :])
    )
    out[np.arange(n), :, np.arange(n), :] = False
    return out


def is_feasible(conflict, allowed, capacity, assign):
    """True if ``assign`` satisfies the allowed pairs, the capacities and constraint (4)."""
    assign = np.asarray(assign, dtype=np.int64)
    m = allowed.shape[1]
    if np.any((assign < -1) | (assign >= m)):
        return False
    placed = np.flatnonzero(assign >= 0)
    where = assign[placed]
    if not np.all(allowed[placed, where]):
        return False
    if np.any(np.bincount(where, minlength=m) > capacity):
        return False
    return not conflict[placed[:, None], where[:, None], placed[None, :], where[None, :]].any()


def _setup(links: tuple, allowed, capacity, assign):
    """The dense conflict tensor of ``links`` (the six CSR arrays of a ``KernelLinks`` and
    ``bhat``), and the checked allowed mask, capacities and feasible allocation."""
    allowed = np.asarray(allowed).astype(bool)
    capacity = np.asarray(capacity, dtype=np.int64)
    n, m = allowed.shape
    if np.any(capacity < 0):
        raise ValueError("capacity must be non-negative")
    allowed = allowed & (capacity > 0)[None, :]
    conflict = conflict_tensor(*links)
    if conflict.shape[:2] != (n, m):
        raise ValueError("shapes disagree")
    assign = np.asarray(assign, dtype=np.int64)
    if assign.shape != (n,) or not is_feasible(conflict, allowed, capacity, assign):
        raise ValueError("assign is not a feasible allocation")
    return conflict, allowed, capacity, assign


# ------------------------------------------------------------------------------ moves


def _moves(conflict, allowed, capacity, assign, first_only):
    n, m = allowed.shape
    insertions, swaps = [], []

    def fits(a, k, l):
        b = a.copy()
        b[k] = l
        return is_feasible(conflict, allowed, capacity, b)

    for k in np.flatnonzero(assign < 0):
        for l in range(m):
            if fits(assign, k, l):
                insertions.append((int(k), l))
                if first_only:
                    return insertions, swaps
    for i in np.flatnonzero(assign >= 0):
        j = assign[i]
        base = assign.copy()
        base[i] = -1
        singles = [
            (int(k), l)
            for k in np.flatnonzero(base < 0)
            for l in range(m)
            if not (k == i and l == j) and fits(base, k, l)
        ]
        for a in range(len(singles)):
            for b in range(a + 1, len(singles)):
                (k1, l1), (k2, l2) = sorted([singles[a], singles[b]])
                if k1 == k2:
                    continue
                both = base.copy()
                both[k1], both[k2] = l1, l2
                if is_feasible(conflict, allowed, capacity, both):
                    swaps.append((int(i), k1, l1, k2, l2))
                    if first_only:
                        return insertions, swaps
    return insertions, swaps


def find_moves_reference(links, bhat, allowed, capacity, assign):
    """Every (0,1) insertion and (1,2) swap of a feasible allocation, by brute force.

    Parameters
    ----------
    links, bhat, allowed, capacity, assign
        As for ``coalloc.ctaap._localsearch.count_moves`` (``links``: a
        :class:`~coalloc.ctaap.model.KernelLinks`).

    Returns
    -------
    insertions : list of (k, l)
    swaps : list of (i, k1, l1, k2, l2) with k1 < k2
    """
    conflict, allowed, capacity, assign = _setup((*links, bhat), allowed, capacity, assign)
    return _moves(conflict, allowed, capacity, assign, first_only=False)


def count_moves_reference(*args):
    """``(len(insertions), len(swaps))`` of :func:`find_moves_reference`."""
    ins, sw = find_moves_reference(*args)
    return len(ins), len(sw)


def is_local_optimum_reference(links, bhat, allowed, capacity, assign):
    """True if the feasible allocation admits no (0,1) insertion and no (1,2) swap."""
    conflict, allowed, capacity, assign = _setup((*links, bhat), allowed, capacity, assign)
    ins, sw = _moves(conflict, allowed, capacity, assign, first_only=True)
    return not ins and not sw


# ------------------------------------------------------------------------------ search


class _Search:
    """The kernel's search state (``Search`` of ``coalloc/ctaap/localsearch.hpp``), kept in
    plain Python lists so that every choice follows the kernel's order.

    ``tight[p]`` (``p = k * m + l``): placed tasks ``x != k`` whose placement conflicts with
    ``(k, l)``; ``owner[p]``: the xor of their ids. An allowed pair of an unplaced task sits
    in the free list of its cluster when ``tight == 0`` and in the bucket of its owner when
    ``tight == 1``; lists append and remove by moving their last entry into the hole (the
    kernel's ``enlist``/``unlist``), so that their order, which decides ties, is the
    kernel's. The pairs conflicting with ``(k, l)`` are visited by neighbour ascending, then
    cluster ascending (the kernel's adjacency order).
    """

    def __init__(self, conflict, allowed, capacity, prio, assign0, seed):
        n, m = allowed.shape
        self.n, self.m = n, m
        self.conflict = conflict
        self.allowed = allowed
        self.cap = [int(c) for c in capacity]
        self.prio = prio
        self.rng = Xoshiro256(seed)
        nm = n * m
        self.assign = [-1] * n
        self.load = [0] * m
        self.size = 0
        self.tight = [0] * nm
        self.owner = [0] * nm
        self.pos = [-1] * nm
        self.free = [[] for _ in range(m)]
        self.bucket = [[] for _ in range(n)]
        self.members = [[] for _ in range(m)]
        self.mpos = [-1] * n
        self.allowed_flat = allowed.reshape(-1).tolist()
        self._pairs = {}
        for p in range(nm):
            self.attach(p)
        for k in range(n):
            if assign0[k] >= 0:
                self.place(k, int(assign0[k]))

    # -- lists (the kernel's home / enlist / unlist / attach / detach)
    def home(self, p):
        k = p // self.m
        if self.assign[k] >= 0 or not self.allowed_flat[p]:
            return None
        if self.tight[p] == 0:
            return self.free[p % self.m]
        if self.tight[p] == 1:
            return self.bucket[self.owner[p]]
        return None

    def enlist(self, lst, p):
        self.pos[p] = len(lst)
        lst.append(p)

    def unlist(self, lst, p):
        q = lst[-1]
        lst[self.pos[p]] = q
        self.pos[q] = self.pos[p]
        lst.pop()
        self.pos[p] = -1

    def attach(self, p):
        h = self.home(p)
        if h is not None:
            self.enlist(h, p)

    def detach(self, p):
        if self.pos[p] >= 0:
            self.unlist(self.home(p), p)

    def pairs(self, k, l):
        """The allowed placements ``x * m + j`` conflicting with ``(k, l)``, in visit order."""
        q = k * self.m + l
        got = self._pairs.get(q)
        if got is None:
            hit = self.conflict[k, l] & self.allowed  # (n, m), row-major: x, then j
            got = self._pairs[q] = np.flatnonzero(hit).tolist()
        return got

    def tighten(self, k, l, add):
        m, assign = self.m, self.assign
        for p in self.pairs(k, l):
            t = self.tight[p]
            if assign[p // m] < 0:  # only pairs of unplaced tasks change lists
                if add and t == 0:
                    self.unlist(self.free[p % m], p)
                    self.enlist(self.bucket[k], p)
                elif add and t == 1:
                    self.unlist(self.bucket[self.owner[p]], p)
                elif not add and t == 1:
                    self.unlist(self.bucket[k], p)
                    self.enlist(self.free[p % m], p)
                elif not add and t == 2:
                    self.enlist(self.bucket[self.owner[p] ^ k], p)
            self.tight[p] = t + 1 if add else t - 1
            self.owner[p] ^= k

    def place(self, k, l):
        m = self.m
        for q in range(m):
            self.detach(k * m + q)
        self.assign[k] = l
        self.load[l] += 1
        self.size += 1
        self.mpos[k] = len(self.members[l])
        self.members[l].append(k)
        self.tighten(k, l, True)

    def remove(self, k):
        m, l = self.m, self.assign[k]
        # the kernel marks k unplaced only after its counters: k's own pairs never move
        self.tighten(k, l, False)
        last = self.members[l][-1]
        self.members[l][self.mpos[k]] = last
        self.mpos[last] = self.mpos[k]
        self.members[l].pop()
        self.mpos[k] = -1
        self.assign[k] = -1
        self.load[l] -= 1
        self.size -= 1
        for q in range(m):
            self.attach(k * m + q)

    # -- moves
    def insert_one(self):
        best, ties, best_prio = -1, 0, 0.0
        m = self.m
        for l in range(m):
            if self.load[l] >= self.cap[l]:
                continue
            for p in self.free[l]:
                k = p // m
                pr = self.prio[k, l]
                if best < 0 or pr > best_prio:
                    best, best_prio, ties = k * m + l, pr, 1
                elif pr == best_prio:
                    ties += 1
                    if self.rng.below(ties) == 0:
                        best = k * m + l
        if best < 0:
            return False
        self.place(best // m, best % m)
        return True

    def swap_around(self, i):
        """The first (1,2) swap around placed task ``i`` in the kernel's order, or None."""
        m, j = self.m, self.assign[i]
        groups, room = [[] for _ in range(m)], [0] * m
        for l in range(m):
            room[l] = self.cap[l] - self.load[l] + (1 if l == j else 0)
            if room[l] <= 0:
                continue
            groups[l] = [p // m for p in self.free[l]]
            if l != j and self.allowed_flat[i * m + l] and self.tight[i * m + l] == 0:
                groups[l].append(i)
        for p in self.bucket[i]:
            if room[p % m] > 0:
                groups[p % m].append(p // m)
        if sum(len(g) for g in groups) < 2:
            return None
        for l1 in range(m):
            g1 = groups[l1]
            if not g1:
                continue
            for l2 in range(l1, m):
                g2 = groups[l2]
                if not g2 or (l1 == l2 and room[l1] < 2):
                    continue
                for a, ka in enumerate(g1):
                    for b in range(a + 1 if l1 == l2 else 0, len(g2)):
                        kb = g2[b]
                        if ka == kb or self.conflict[ka, l1, kb, l2]:
                            continue
                        return (i, ka, l1, kb, l2) if ka < kb else (i, kb, l2, ka, l1)
        return None

    def swap_one(self):
        if self.size == 0:
            return False
        start = self.rng.below(self.n)
        mv = None
        for i in [*range(start, self.n), *range(start)]:
            if self.assign[i] >= 0:
                mv = self.swap_around(i)
                if mv is not None:
                    break
        if mv is None:
            return False
        self.remove(mv[0])
        self.place(mv[1], mv[2])
        self.place(mv[3], mv[4])
        return True

    def descend(self, counters):
        while True:
            interrupt.check()  # the compiled kernel's poll (twin)
            if self.insert_one():
                counters["insertions"] += 1
            elif self.swap_one():
                counters["swaps_1_2"] += 1
            else:
                break

    def force(self, k, l):
        if self.assign[k] >= 0:
            self.remove(k)
        for x in range(self.n):
            if self.assign[x] >= 0 and self.conflict[k, l, x, self.assign[x]]:
                self.remove(x)
        if self.load[l] >= self.cap[l]:
            self.remove(self.members[l][self.rng.below(self.load[l])])
        self.place(k, l)

    def random_pair(self):
        n, m = self.n, self.m
        if n == 0 or m == 0:
            return -1
        for _ in range(32):
            k = self.rng.below(n)
            l = self.rng.below(m)
            if self.allowed_flat[k * m + l] and self.assign[k] != l:
                return k * m + l
        p, seen = -1, 0  # sparse allowed: scan
        for q in range(n * m):
            if self.allowed_flat[q] and self.assign[q // m] != q % m:
                seen += 1
                if self.rng.below(seen) == 0:
                    p = q
        return p

    def perturb(self, counters):
        count = 1
        if self.size > 0 and self.rng.uniform() * 2.0 * float(self.size) < 1.0:
            count = 2
            while count < self.n and (self.rng.next() & 1):
                count += 1
        done = False
        for _ in range(count):
            p = self.random_pair()
            if p < 0:
                break
            self.force(p // self.m, p % self.m)
            counters["perturbations"] += 1
            done = True
        return done

    def restore(self, target):
        for k in range(self.n):
            if self.assign[k] >= 0 and self.assign[k] != target[k]:
                self.remove(k)
        for k in range(self.n):
            if target[k] >= 0 and self.assign[k] < 0:
                self.place(k, target[k])


def improve_reference(
    links, bhat, allowed, capacity, assign, max_iters=500, seed=0, priority=None,
    self_check=False, deadline=None,
):  # fmt: skip
    """Twin of ``coalloc.ctaap._localsearch.improve``: the same search, move for move.

    ``assign`` (int64, writable) is updated in place with the best allocation found; the
    counters dict is returned. The random choices come from the kernel's xoshiro256**
    stream (``seed`` modulo 2**64) and every scan follows the kernel's order, so the
    allocation and the counters equal the kernel's (ties included).
    """
    out = assign
    conflict, allowed, capacity, start = _setup((*links, bhat), allowed, capacity, assign)
    if max_iters < 0:
        raise ValueError("max_iters must be >= 0")
    n, m = allowed.shape
    prio = np.zeros((n, m)) if priority is None else np.array(priority, dtype=np.float64)
    prio[np.isnan(prio)] = -np.inf
    interrupt.check_kernel(deadline)  # the kernel's set-up polls (twin: after it)
    st = _Search(conflict, allowed, capacity, prio, start, int(seed) & (2**64 - 1))
    interrupt.check_kernel(deadline)
    counters = dict.fromkeys(
        ["insertions", "swaps_1_2", "plateau_moves", "perturbations", "iterations",
         "accepted"], 0,
    )  # fmt: skip
    counters["initial_size"] = st.size
    tasks = int(allowed.any(axis=1).sum())
    slots = 0
    for l in range(m):
        if slots >= tasks:
            break
        slots += min(int(capacity[l]), tasks)
    upper = min(tasks, slots)
    st.descend(counters)
    best, current = list(st.assign), list(st.assign)
    best_size = cur_size = st.size
    it = 0
    while it < max_iters and best_size < upper:
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        it += 1
        counters["iterations"] += 1
        before = st.size
        if not st.perturb(counters):
            break
        if st.size == before:
            counters["plateau_moves"] += 1
        st.descend(counters)
        size = st.size
        accept = size >= cur_size
        if not accept:
            d, d_best = float(cur_size - size), float(best_size - size)
            accept = st.rng.uniform() < 1.0 / (1.0 + d * d_best)
        if size > best_size:
            best_size, best = size, list(st.assign)
        if accept:
            counters["accepted"] += 1
            cur_size, current = size, list(st.assign)
        else:
            st.restore(current)
    st.restore(best)
    out[:] = st.assign
    counters["best_size"] = st.size
    return counters
