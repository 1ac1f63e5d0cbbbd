"""Twin of :func:`coalloc.ctaap._cleanup.match_and_clean`: the cleanup loop of Alg. 3, literally.

Each round recounts every pair from scratch with NumPy (as the paper describes) and
re-matches through the same b-matching class, driven from Python. Because the matcher is
deterministic and the argmax rule is the same (largest count, lowest index on ties), the
result must equal the compiled loop's exactly.
"""

from __future__ import annotations

import numpy as np

from ..._shared import interrupt
from .violations import violation_counts_reference


def match_and_clean_reference(
    links, bhat, weights, allowed, capacity, cardinality_first, deadline=None,
):  # fmt: skip
    """Run steps 2-3 with a full recount each round.

    Parameters
    ----------
    links, bhat, weights, allowed, capacity, cardinality_first
        As for :func:`coalloc.ctaap._cleanup.match_and_clean` (``links``: a
        :class:`~coalloc.ctaap.model.KernelLinks`; its transpose is unused: the recount
        needs only the out-edges).

    Returns
    -------
    assign : ndarray of int64
        Final allocation.
    removals : int
        Number of cleanup rounds.
    """
    from .._bmatching import BMatcher

    matcher = BMatcher(weights, allowed, capacity, bool(cardinality_first))
    matcher.solve()
    removals = 0
    while True:
        interrupt.check_kernel(deadline)  # the compiled kernel's poll (twin)
        assign = matcher.assignment
        total, counts = violation_counts_reference(links.indptr, links.indices, links.data,
                                                   bhat, assign)  # fmt: skip
        if total == 0:
            return assign, removals
        worst = int(np.argmax(counts))
        matcher.forbid(worst, int(assign[worst]))
        matcher.solve()
        removals += 1


def fill_free_reference(links, bhat, allowed, capacity, task_order, cluster_order, assign):
    """Twin of :func:`coalloc.ctaap._cleanup.fill_free`; returns ``(assign, added)``.

    Checks each candidate placement against every pair of the dense bandwidth matrix.
    """
    n = len(assign)
    B = np.zeros((n, n))
    rows = np.repeat(np.arange(n), np.diff(links.indptr))
    B[rows, links.indices] = links.data
    np.fill_diagonal(B, 0)
    assign = np.array(assign, dtype=np.int64)
    load = np.bincount(assign[assign >= 0], minlength=len(capacity))
    added = 0
    for task in task_order:
        if assign[task] >= 0:
            continue
        placed = np.flatnonzero(assign >= 0)
        for c in cluster_order[task]:
            if not allowed[task, c] or load[c] >= capacity[c]:
                continue
            out_ok = np.all(B[task, placed] <= bhat[c, assign[placed]])
            in_ok = np.all(B[placed, task] <= bhat[assign[placed], c])
            if out_ok and in_ok:
                assign[task] = c
                load[c] += 1
                added += 1
                break
    return assign, added
