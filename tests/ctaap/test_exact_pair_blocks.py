"""CTAAP ``exact``'s conflict pairs built in blocks of entries, every cluster per block, the
deadline looked at between blocks and the last merge not begun when its predicted cost
(from the blocks' own pace) would end past the deadline (issue 36, h52first: 0.04-0.17 s
past the allowance at 2,000-10,000 tasks). The pairs are judged against a plain loop over
the entries (an independent referee) with blocks of a few entries."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

import coalloc.ctaap as ct
from coalloc._shared import interrupt
from coalloc.ctaap import exact as ce
from coalloc.ctaap.model import compatibility


def _reference(request, offer):
    """Every entry ``B[i, k] = b`` (``i != k``), every ``j`` fitting ``i`` and ``l`` fitting
    ``k`` with ``b > Bhat[j, l]``: the pair of variables ``x[i,j]``, ``x[k,l]``, by loops."""
    compat = compatibility(request, offer)
    task, cluster = np.nonzero(compat)
    var = {(int(t), int(c)): v for v, (t, c) in enumerate(zip(task, cluster))}
    B = request.bandwidth.tocoo()
    pairs = set()
    for i, k, b in zip(B.row.tolist(), B.col.tolist(), B.data.tolist()):
        if i == k:
            continue
        for j, l in itertools.product(np.flatnonzero(compat[i]), np.flatnonzero(compat[k])):
            if b > offer.bandwidth[j, l]:
                u, v = var[(i, int(j))], var[(k, int(l))]
                pairs.add((min(u, v), max(u, v)))
    pairs = sorted(pairs)
    return (np.array([p[0] for p in pairs], dtype=np.int64),
            np.array([p[1] for p in pairs], dtype=np.int64))  # fmt: skip


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block", [1, 7, 1 << 20])
def test_the_blocked_pairs_are_the_loops_pairs(seed, block, monkeypatch):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 25)), int(rng.integers(1, 6))
    request, offer = ct.generators.random_instance(
        n, m, edge_probability=float(rng.uniform(0.05, 0.9)), seed=seed)  # fmt: skip
    monkeypatch.setattr(ce, "_BLOCK", block * m * m * 2)  # blocks of ``block`` entries
    model = ce._Model(request, offer)
    u, v = _reference(request, offer)
    assert np.array_equal(model.pair_u, u) and np.array_equal(model.pair_v, v)


def test_the_blocks_look_at_the_deadline(monkeypatch):
    request, offer = ct.generators.random_instance(60, 4, edge_probability=0.5, seed=3)
    monkeypatch.setattr(ce, "_BLOCK", 2 * 16)  # one entry a block
    seen = []
    real = interrupt.check

    def counted(*args, **kwargs):
        seen.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(ce.interrupt, "check", counted)
    ce._Model(request, offer)
    assert len(seen) >= request.bandwidth.nnz  # once a block at least
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(time.perf_counter() - 1.0):
            ce._Model(request, offer)


def test_the_last_merge_is_not_begun_past_the_deadline():
    far = time.perf_counter() + 3600.0
    ce._merge_fits(1e9, None)  # no deadline: always
    ce._merge_fits(0.0, far)
    with pytest.raises(interrupt.DeadlinePassed):
        ce._merge_fits(3600.0, far)  # predicted 1.5 x 3600 s: past an hour from now
    request, offer = ct.generators.random_instance(30, 3, edge_probability=0.5, seed=1)
    with pytest.raises(interrupt.DeadlinePassed):
        ce._Model(request, offer, deadline=time.perf_counter() - 1.0)
    assert ce._Model(request, offer, deadline=far).n_pairs > 0


def test_the_matrix_is_not_built_when_its_predicted_cost_ends_past_the_deadline(monkeypatch):
    """The constraint matrix (aggregated rows: 5-14x the pairs' sorting time, one NumPy call
    after another) is predicted from the pairs' own pace; past the deadline it is not begun
    and the call ends as a build the deadline stopped (1.6-2.4 s past a 2 s limit, 10,000
    sparse tasks under load)."""
    request, offer = ct.generators.random_instance(40, 4, edge_probability=0.5, seed=2)
    built = []
    real = ce._Model.constraint_matrix
    monkeypatch.setattr(ce._Model, "constraint_matrix",
                        lambda self, form: built.append(form) or real(self, form))  # fmt: skip
    monkeypatch.setattr(ce, "_MATRIX_PACE", {"aggregated": 1e12, "pairwise": 1e12})
    res = ct.solve_exact(request, offer, time_limit=600)
    assert built == [] and res.status == "time_limit" and "model was built" in res.message
    assert ct.verify(request, offer, res.assignment).feasible
    res = ct.solve_exact(request, offer)  # untimed: no prediction
    assert built == ["aggregated"] and res.status == "optimal"
