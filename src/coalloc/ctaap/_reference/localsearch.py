"""Slow, obviously-correct twin of :mod:`coalloc.ctaap._localsearch` (iterated local search).

Everything is recomputed from a dense conflict tensor at every step instead of being
maintained incrementally:

``conflict[i, j, k, l]`` is True when placements (i, j) and (k, l) of two distinct tasks
break constraint (4): ``b[i, k] > bhat[j, l]`` or ``b[k, i] > bhat[l, j]`` with ``b > 0``.

A move is checked by building the allocation it leads to and calling :func:`is_feasible`.

* :func:`find_moves_reference` lists, by brute force, every (0,1) insertion and (1,2) swap
  of an allocation (the moves that ``coalloc.ctaap._localsearch.count_moves`` counts);
* :func:`is_local_optimum_reference` says whether there is none;
* :func:`improve_reference` runs the same iterated local search as
  ``coalloc.ctaap._localsearch.improve`` (same move rules and acceptance rule, NumPy's generator
  instead of xoshiro256**, so the two do not return the same allocation).

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


def _setup(indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign):
    allowed = np.asarray(allowed).astype(bool)
    capacity = np.asarray(capacity, dtype=np.int64)
    n, m = allowed.shape
    if np.any(capacity < 0):
        raise ValueError("capacity must be non-negative")
    allowed = allowed & (capacity > 0)[None, :]
    conflict = conflict_tensor(indptr, indices, data, t_indptr, t_indices, t_data, bhat)
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


def find_moves_reference(
    indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign
):
    """Every (0,1) insertion and (1,2) swap of a feasible allocation, by brute force.

    Parameters
    ----------
    indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign
        As for ``coalloc.ctaap._localsearch.count_moves``.

    Returns
    -------
    insertions : list of (k, l)
    swaps : list of (i, k1, l1, k2, l2) with k1 < k2
    """
    conflict, allowed, capacity, assign = _setup(
        indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign
    )
    return _moves(conflict, allowed, capacity, assign, first_only=False)


def count_moves_reference(*args):
    """``(len(insertions), len(swaps))`` of :func:`find_moves_reference`."""
    ins, sw = find_moves_reference(*args)
    return len(ins), len(sw)


def is_local_optimum_reference(
    indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign
):
    """True if the feasible allocation admits no (0,1) insertion and no (1,2) swap."""
    conflict, allowed, capacity, assign = _setup(
        indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign
    )
    ins, sw = _moves(conflict, allowed, capacity, assign, first_only=True)
    return not ins and not sw


# ------------------------------------------------------------------------------ search


class _State:
    """An allocation plus the recount helpers of the search (no incremental structures)."""

    def __init__(self, conflict, allowed, capacity, priority, assign, rng):
        self.conflict, self.allowed, self.capacity = conflict, allowed, capacity
        self.priority, self.assign, self.rng = priority, assign.copy(), rng
        self.n, self.m = allowed.shape

    @property
    def size(self):
        return int((self.assign >= 0).sum())

    def load(self):
        a = self.assign
        return np.bincount(a[a >= 0], minlength=self.m)

    def tightness(self, a=None):
        """(n, m): number of placed tasks conflicting with each placement."""
        a = self.assign if a is None else a
        placed = np.flatnonzero(a >= 0)
        return self.conflict[:, :, placed, a[placed]].sum(axis=2)

    def insert_one(self):
        """(0,1): the insertable pair of highest priority, ties at random."""
        a, load = self.assign, self.load()
        ok = (a < 0)[:, None] & self.allowed & (self.tightness() == 0)
        ok &= (load < self.capacity)[None, :]
        if not ok.any():
            return False
        prio = np.where(ok, self.priority, -np.inf)
        best = np.flatnonzero(ok.ravel() & (prio.ravel() == prio[ok].max()))
        p = int(self.rng.choice(best))
        a[p // self.m] = p % self.m
        return True

    def swap_one(self):
        """(1,2): the first swap found, scanning the placed tasks from a random one."""
        a, n, m = self.assign, self.n, self.m
        if self.size == 0:
            return False
        start = int(self.rng.integers(n))
        for s in range(n):
            i = (start + s) % n
            if a[i] < 0:
                continue
            j = a[i]
            base = a.copy()
            base[i] = -1
            load = np.bincount(base[base >= 0], minlength=m)
            fit = (base < 0)[:, None] & self.allowed & (self.tightness(base) == 0)
            fit &= (load < self.capacity)[None, :]
            fit[i, j] = False
            cand = np.argwhere(fit)
            for x in range(len(cand)):
                for y in range(x + 1, len(cand)):
                    (k1, l1), (k2, l2) = cand[x], cand[y]
                    if k1 == k2 or self.conflict[k1, l1, k2, l2]:
                        continue
                    if l1 == l2 and load[l1] + 2 > self.capacity[l1]:
                        continue
                    a[i] = -1
                    a[k1], a[k2] = l1, l2
                    return True
        return False

    def descend(self, counters):
        while True:
            interrupt.check()  # the compiled kernel's poll (twin)
            if self.insert_one():
                counters["insertions"] += 1
            elif self.swap_one():
                counters["swaps_1_2"] += 1
            else:
                return

    def random_pair(self):
        a = self.assign
        eligible = self.allowed.copy()
        placed = np.flatnonzero(a >= 0)
        eligible[placed, a[placed]] = False
        pairs = np.flatnonzero(eligible.ravel())
        return int(self.rng.choice(pairs)) if pairs.size else -1

    def force(self, k, l):
        """Place (k, l), removing k's old placement, every conflicting placement and, if
        cluster l is still full, one random task of it."""
        a = self.assign
        a[k] = -1
        placed = np.flatnonzero(a >= 0)
        a[placed[self.conflict[k, l, placed, a[placed]]]] = -1
        members = np.flatnonzero(a == l)
        if members.size >= self.capacity[l]:
            a[int(self.rng.choice(members))] = -1
        a[k] = l

    def perturb(self, counters):
        count = 1
        if self.size > 0 and self.rng.random() * 2.0 * self.size < 1.0:
            count = 2
            while count < self.n and self.rng.random() < 0.5:
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


def improve_reference(
    indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign,
    max_iters=500, seed=0, priority=None,
):  # fmt: skip
    """Twin of ``coalloc.ctaap._localsearch.improve``: same moves, same acceptance rule.

    ``assign`` (int64, writable) is updated in place with the best allocation found; the
    counters dict is returned.  Uses :func:`numpy.random.default_rng` (``seed``), so the
    result is reproducible but differs from the kernel's.
    """
    out = assign
    conflict, allowed, capacity, start = _setup(
        indptr, indices, data, t_indptr, t_indices, t_data, bhat, allowed, capacity, assign
    )
    if max_iters < 0:
        raise ValueError("max_iters must be >= 0")
    n, m = allowed.shape
    prio = np.zeros((n, m)) if priority is None else np.array(priority, dtype=np.float64)
    prio[np.isnan(prio)] = -np.inf
    st = _State(conflict, allowed, capacity, prio, start, np.random.default_rng(seed))
    counters = dict.fromkeys(
        ["insertions", "swaps_1_2", "plateau_moves", "perturbations", "iterations",
         "accepted"], 0,
    )  # fmt: skip
    counters["initial_size"] = st.size
    upper = min(int(allowed.any(axis=1).sum()), int(capacity.sum()))
    st.descend(counters)
    best, current = st.assign.copy(), st.assign.copy()
    best_size = cur_size = st.size
    for _ in range(max_iters):
        interrupt.check()  # the compiled kernel's poll (twin)
        if best_size >= upper:
            break
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
            d, d_best = cur_size - size, best_size - size
            accept = st.rng.random() < 1.0 / (1.0 + d * d_best)
        if size > best_size:
            best_size, best = size, st.assign.copy()
        if accept:
            counters["accepted"] += 1
            cur_size, current = size, st.assign.copy()
        else:
            st.assign = current.copy()
    out[:] = best
    counters["best_size"] = int((best >= 0).sum())
    return counters
