"""Twin of :func:`coalloc._cleanup.match_and_clean`: the cleanup loop of Alg. 3, literally.

Each round recounts every pair from scratch with NumPy (as the paper describes) and
re-matches through the same b-matching class, driven from Python. Because the matcher is
deterministic and the argmax rule is the same (largest count, lowest index on ties), the
result must equal the compiled loop's exactly.
"""

from __future__ import annotations

import numpy as np

from .violations import violation_counts_reference


def match_and_clean_reference(
    indptr, indices, data, t_indptr, t_indices, t_data, bhat, weights, allowed, capacity,
    cardinality_first,
):  # fmt: skip
    """Run steps 2-3 with a full recount each round.

    Parameters
    ----------
    indptr, indices, data, t_indptr, t_indices, t_data, bhat, weights, allowed, capacity,
    cardinality_first
        As for :func:`coalloc._cleanup.match_and_clean` (the transpose is unused: the
        recount needs only the out-edges).

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
        assign = matcher.assignment
        total, counts = violation_counts_reference(indptr, indices, data, bhat, assign)
        if total == 0:
            return assign, removals
        worst = int(np.argmax(counts))
        matcher.forbid(worst, int(assign[worst]))
        matcher.solve()
        removals += 1
