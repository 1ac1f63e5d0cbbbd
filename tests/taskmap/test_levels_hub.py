"""The coarsening's target on hub-heavy task graphs (h56hub): :func:`degree_spread` against a
count from a dense matrix, :func:`coarse_target` on regular and power-law graphs, and the
mapper coarsening a power-law graph deeper (its answer verified), a regular one as before."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import generators as gen
from coalloc.taskmap import levels
from coalloc.taskmap.levels import TaskLevel, coarse_target, degree_spread
from coalloc.taskmap.multilevel import map_multilevel


def _preferential(n: int, m: int, seed: int) -> sp.csr_matrix:
    """A Barabasi-Albert-like graph: each new vertex links to ``m`` earlier ones drawn with
    probability proportional to their degree (pair weights 1-5)."""
    rng = np.random.default_rng(seed)
    ends: list = list(range(m + 1))
    rows, cols = [], []
    for v in range(m + 1, n):
        targets = set()
        while len(targets) < m:
            targets.add(int(ends[rng.integers(len(ends))]))
        for u in targets:
            rows.append(v)
            cols.append(u)
            ends += [u, v]
    w = rng.uniform(1.0, 5.0, len(rows))
    a = sp.coo_matrix((w, (rows, cols)), shape=(n, n))
    return (a + a.T).tocsr()


def _level(mat: sp.csr_matrix) -> TaskLevel:
    mat = sp.csr_matrix(mat)
    mat.sort_indices()
    n = mat.shape[0]
    return TaskLevel(mat.indptr.astype(np.int64), mat.indices.astype(np.int64),
                     mat.data.astype(np.float64), np.ones(n))  # fmt: skip


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 40), st.floats(0.0, 0.6), st.integers(0, 2**31 - 1))
@example(1, 0.0, 0)  # no edge: spread 0
@example(5, 1.0, 3)  # a clique: regular, spread 0
def test_degree_spread_is_the_neighbour_counts_spread(n, density, seed):
    rng = np.random.default_rng(seed)
    dense = np.triu(rng.random((n, n)) < density, 1)
    dense = dense | dense.T
    lv = _level(sp.csr_matrix(dense.astype(float)))
    counts = dense.sum(axis=1).astype(float)  # the referee: rows of the dense matrix
    want = counts.std() / counts.mean() if counts.mean() > 0 else 0.0
    assert degree_spread(lv) == pytest.approx(want, abs=1e-12)


def test_the_target_is_smaller_on_a_power_law_graph_on_many_processors_only():
    hubs = _level(_preferential(600, 3, seed=1))
    grid = _level(_grid(20, 30))
    assert degree_spread(hubs) > levels.HUB_SPREAD >= degree_spread(grid)
    cap = levels.HUB_VERTICES
    assert coarse_target(grid, 256, 4.0) == 1024  # a regular graph: the usual target
    assert coarse_target(hubs, 256, 4.0) == cap < 1024
    assert coarse_target(hubs, 2 * cap // 4, 4.0) == cap  # usual target exactly twice
    assert coarse_target(hubs, 2 * cap // 4 - 1, 4.0) == 4 * (2 * cap // 4 - 1)  # under
    assert coarse_target(hubs, 64, 1.0) == 64  # the caller's small factor stands
    assert coarse_target(hubs, 3 * cap, 4.0) == 3 * cap  # at least one vertex a processor
    assert coarse_target(hubs, 2, 4.0) == 16  # never below 16


def _grid(a: int, b: int) -> sp.csr_matrix:
    """The 4-neighbour grid graph of ``a x b`` vertices."""
    idx = np.arange(a * b).reshape(a, b)
    s = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    t = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    m = sp.coo_matrix((np.ones(s.shape[0]), (s, t)), shape=(a * b, a * b))
    return (m + m.T).tocsr()


def test_knob_off_is_the_usual_target(monkeypatch):
    hubs = _level(_preferential(600, 3, seed=1))
    monkeypatch.setattr(levels, "HUB_VERTICES", 0)
    assert coarse_target(hubs, 256, 4.0) == 1024


def _machine():
    return gen.hierarchical_cluster(n_racks=8, nodes_per_rack=4, cores_per_node=4,
                                    rack_bandwidth=40.0, node_bandwidth=40.0)  # fmt: skip


@pytest.mark.slow
def test_a_power_law_graph_is_coarsened_deeper_and_its_answer_verifies(monkeypatch):
    tasks = tm.TaskGraph(np.ones(700), _preferential(700, 3, seed=2))
    res = _machine()
    new = map_multilevel(tasks, res, seed=3)
    again = map_multilevel(tasks, res, seed=3)
    np.testing.assert_array_equal(new.mapping, again.mapping)  # same seed, same answer
    monkeypatch.setattr(levels, "HUB_VERTICES", 0)
    old = map_multilevel(tasks, res, seed=3)
    assert new.iterations["levels"] > old.iterations["levels"]
    for result in (new, old):
        report = tm.verify_mapping(tasks, res, result.mapping, claimed=result.max_occupancy)
        assert report.valid and report.matches, report


def test_a_regular_graph_is_mapped_as_before(monkeypatch):
    tasks = tm.TaskGraph(np.ones(600), _grid(20, 30))
    res = _machine()
    new = map_multilevel(tasks, res, seed=1)
    monkeypatch.setattr(levels, "HUB_VERTICES", 0)
    old = map_multilevel(tasks, res, seed=1)
    np.testing.assert_array_equal(new.mapping, old.mapping)
    assert new.iterations["levels"] == old.iterations["levels"]
