"""NumPy/Python twin of :mod:`coalloc.loadshare._dmcf` (migrate, first_fit_all, best fit).

Same signatures, same arithmetic: ``migrate`` is vectorised over the nodes with NumPy
``uint64`` arithmetic (which wraps modulo 2**64 like the kernel's); ``first_fit_all`` is a
plain Python loop over the coalitions, members in increasing id and jobs in arrival order;
``best_fit_decreasing`` keeps the free nodes in a sorted list of ``(remaining, node)``.
"""

from __future__ import annotations

import bisect

import numpy as np

from ..._shared import interrupt

__all__ = ["mix64", "migrate", "first_fit_all", "best_fit_decreasing"]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
NODE_MUL = np.uint64(0xD1B54A32D192ED03)
_C1 = np.uint64(0xBF58476D1CE4E5B9)
_C2 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """splitmix64's output function of ``x + golden`` (element-wise, uint64)."""
    with np.errstate(over="ignore"):
        z = np.asarray(x, dtype=np.uint64) + GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _C1
        z = (z ^ (z >> np.uint64(27))) * _C2
        return z ^ (z >> np.uint64(31))


def migrate(coal, node_load, node_cap, coal_load, coal_cap, coal_count, p, th, cap_ref, seed,
            generation, out):  # fmt: skip
    """Twin of ``_dmcf.migrate``; returns ``(attempts, moves)``, fills ``out`` and updates
    the coalition lists in place."""
    n = coal.shape[0]
    nc = coal_load.shape[0]
    with np.errstate(over="ignore"):
        base = np.uint64(seed) ^ (np.uint64(generation + 1) * GOLDEN)
        idx = np.arange(1, n + 1, dtype=np.uint64)
        u1 = mix64(base ^ (idx * NODE_MUL))
    u2 = mix64(u1)
    r = (u1 >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    cand = (u2 % np.uint64(nc)).astype(np.int64)
    out[:] = coal
    attempts = moves = 0
    for i in np.flatnonzero(r < p).tolist():
        attempts += 1
        c1, c = int(coal[i]), int(cand[i])
        if c == c1 or coal_count[c] == 0:
            continue
        e1 = (coal_load[c1] - coal_cap[c1]) / cap_ref
        e2 = (coal_load[c] - coal_cap[c]) / cap_ref
        ld, k = float(node_load[i]), float(node_cap[i])
        if not ((ld > k and e1 > th and e2 < th) or (ld < k and e1 < th and e2 > th)):
            continue
        before = min(coal_load[c1], coal_cap[c1]) + min(coal_load[c], coal_cap[c])
        after = min(coal_load[c1] - ld, coal_cap[c1] - k) + min(coal_load[c] + ld, coal_cap[c] + k)
        if after <= before:
            continue
        out[i] = c
        moves += 1
        coal_load[c1] -= ld
        coal_cap[c1] -= k
        coal_count[c1] -= 1
        coal_load[c] += ld
        coal_cap[c] += k
        coal_count[c] += 1
    return attempts, moves


def first_fit_all(coal, node_cap, job_size, job_origin, job_order, dirty, placement, coal_tp,
                  deadline=None):  # fmt: skip
    """Twin of ``_dmcf.first_fit_all``; returns ``(probes, moved)``."""
    nc = dirty.shape[0]
    members = [[] for _ in range(nc)]
    for i, c in enumerate(np.asarray(coal).tolist()):
        members[c].append(i)
    jobs = [[] for _ in range(nc)]
    for j in np.asarray(job_order).tolist():
        jobs[int(coal[job_origin[j]])].append(j)
    probes = moved = 0
    for c in range(nc):
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        if not dirty[c]:
            continue
        rem = {i: float(node_cap[i]) for i in members[c]}
        left = []
        for j in jobs[c]:
            s = float(job_size[j])
            chosen = -1
            for i in members[c]:
                probes += 1
                if rem[i] >= s:
                    chosen = i
                    break
            if chosen < 0:
                left.append(j)
                continue
            placement[j] = chosen
            rem[chosen] -= s
            moved += chosen != int(job_origin[j])
        for j in left:
            s = float(job_size[j])
            best, room = -1, 0.0
            for i in members[c]:
                probes += 1
                if rem[i] > room:
                    room, best = rem[i], i
            chosen = best if best >= 0 else int(job_origin[j])
            placement[j] = chosen
            rem[chosen] -= s
            moved += chosen != int(job_origin[j])
        tp = 0.0
        for i in members[c]:
            tp += float(node_cap[i]) - rem[i] if rem[i] > 0 else float(node_cap[i])
        coal_tp[c] = tp
    return probes, moved


def best_fit_decreasing(node_cap, job_size, job_origin, size_order, placement, keep=True,
                        deadline=None):  # fmt: skip
    """Twin of ``_dmcf.best_fit_decreasing``; returns the number of jobs moved."""
    n = node_cap.shape[0]
    rem = [float(c) for c in node_cap.tolist()]
    kept = np.zeros(job_size.shape[0], dtype=bool)
    for j in range(job_size.shape[0]):
        o = int(job_origin[j])
        if keep and rem[o] >= float(job_size[j]):
            kept[j] = True
            placement[j] = o
            rem[o] -= float(job_size[j])
    free = sorted((rem[i], i) for i in range(n) if rem[i] > 0)
    moved = 0
    for j in np.asarray(size_order).tolist():
        if kept[j]:
            continue
        s, o = float(job_size[j]), int(job_origin[j])
        if not free:
            placement[j] = o
            rem[o] -= s
            continue
        k = bisect.bisect_left(free, (s, -1))
        if k == len(free):
            k = len(free) - 1
        _, i = free.pop(k)
        placement[j] = i
        rem[i] -= s
        if rem[i] > 0:
            bisect.insort(free, (rem[i], i))
        moved += i != o
    return moved


def size_order(job_size, order, deadline=None):
    """Twin of ``_dmcf.size_order``: every job, largest first, ties in arrival order."""
    order[:] = np.argsort(-np.asarray(job_size), kind="stable")
