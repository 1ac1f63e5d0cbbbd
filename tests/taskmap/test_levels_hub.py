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
    monkeypatch.setattr(levels, "HUB_CLUSTER", False)  # matching: a level a halving
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


def _referee_lp(dense: np.ndarray, vw: np.ndarray, max_w: float, seed: int, rounds: int):
    """Label propagation from a dense weight matrix: each visited vertex joins the
    neighbouring cluster of largest connection (the first in neighbour order among equals)
    when strictly above its own cluster's and within ``max_w``."""
    n = dense.shape[0]
    rng = np.random.default_rng(seed)
    lab, cw = np.arange(n), vw.astype(float).copy()
    for _ in range(rounds):
        moved = 0
        for v in rng.permutation(n):
            nbrs = np.flatnonzero(dense[v])
            conn = {}
            for u in nbrs:
                conn.setdefault(int(lab[u]), float(dense[v, lab == lab[u]].sum()))
            own = int(lab[v])
            best, best_w = own, float(dense[v, lab == own].sum())
            for c, w in conn.items():
                if w > best_w and c != own and cw[c] + vw[v] <= max_w:
                    best, best_w = c, w
            if best != own:
                cw[own] -= vw[v]
                cw[best] += vw[v]
                lab[v] = best
                moved += 1
        if moved < 0.01 * n:
            break
    return lab


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.integers(2, 25), st.floats(0.05, 0.7), st.integers(0, 2**31 - 1),
       st.sampled_from([1.5, 3.0, 1e9]), st.integers(1, 3))  # fmt: skip
@example(6, 0.0, 0, 3.0, 1)  # no edge: nothing joins, no coarser level
def test_cluster_level_is_label_propagation_under_the_weight_cap(n, density, seed, cap, rounds):
    rng = np.random.default_rng(seed)
    upper = np.triu((rng.random((n, n)) < density) * rng.integers(1, 4, (n, n)), 1)
    dense = (upper + upper.T).astype(float)  # integer weights: sums exact in any order
    vw = rng.integers(1, 3, n).astype(float)
    lv = TaskLevel(*[np.asarray(a) for a in _csr(dense)], vw)
    coarse = levels.cluster_level(lv, cap, np.random.default_rng(seed + 1), rounds=rounds)
    lab = _referee_lp(dense, vw, cap, seed + 1, rounds)
    groups = np.unique(lab, return_inverse=True)[1]
    if coarse is None:  # shrinks by less than 5 %
        assert np.unique(lab).shape[0] > 0.95 * n
        return
    np.testing.assert_array_equal(lv.cmap, groups)
    k = coarse.n
    proj = np.zeros((n, k))
    proj[np.arange(n), lv.cmap] = 1.0
    want = proj.T @ dense @ proj
    np.fill_diagonal(want, 0.0)
    got = sp.csr_matrix((coarse.iw, coarse.ix, coarse.ip), shape=(k, k)).toarray()
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(coarse.vw, np.bincount(lv.cmap, weights=vw))
    sizes = np.bincount(lv.cmap)
    assert np.all((coarse.vw <= cap) | (sizes == 1))  # a cluster stays under the cap


def _csr(dense: np.ndarray) -> tuple:
    m = sp.csr_matrix(dense)
    m.sort_indices()
    return m.indptr.astype(np.int64), m.indices.astype(np.int64), m.data.astype(np.float64)


def test_a_star_is_gathered_by_its_hub_up_to_the_cap():
    n = 41
    dense = np.zeros((n, n))
    dense[0, 1:] = dense[1:, 0] = 1.0
    lv = TaskLevel(*_csr(dense), np.ones(n))
    coarse = levels.cluster_level(lv, 21.0, np.random.default_rng(0), rounds=3)
    assert coarse is not None and coarse.n == 21  # the hub and 20 leaves, 20 leaves alone
    assert sorted(np.bincount(lv.cmap).tolist())[-1] == 21
    matched = levels.coarsen_level(TaskLevel(*_csr(dense), np.ones(n)), 21.0,
                                   np.random.default_rng(0))  # fmt: skip
    assert matched is None  # a matching pairs the hub with one leaf: under 5 % shrink


def _levels_of(tasks, res, step) -> list:
    """The vertex counts of repeated ``step`` down to the mapper's target (its rng)."""
    from coalloc.taskmap.hierarchy import topology

    fine = TaskLevel.of(tasks)
    target = coarse_target(fine, topology(res).P, 4.0)
    rng = np.random.default_rng(np.random.SeedSequence(5))
    out = [fine]
    while out[-1].n > target:
        nxt = step(out[-1], 1.5 * float(fine.vw.sum()) / target, rng)
        if nxt is None:
            break
        out.append(nxt)
    return [lv.n for lv in out]


@pytest.mark.slow
def test_the_mapper_coarsens_a_hub_graph_by_label_propagation(monkeypatch):
    from coalloc.taskmap import multilevel as ml
    from coalloc.taskmap.hierarchy import topology

    tasks = tm.TaskGraph(np.ones(1400), _preferential(1400, 3, seed=2))
    res = _machine()

    def mapper_levels():
        fine = TaskLevel.of(tasks)
        lv = [fine]
        ml._coarsen(topology(res), lv, 4.0, np.random.default_rng(np.random.SeedSequence(5)))
        return [x.n for x in lv]

    assert levels.hub_clustering(TaskLevel.of(tasks), res.n_processors, 4.0)
    on = mapper_levels()
    assert on == _levels_of(tasks, res, levels.cluster_level) != _levels_of(
        tasks, res, levels.coarsen_level)  # fmt: skip
    monkeypatch.setattr(levels, "HUB_CLUSTER", False)
    assert not levels.hub_clustering(TaskLevel.of(tasks), res.n_processors, 4.0)
    assert mapper_levels() == _levels_of(tasks, res, levels.coarsen_level)
    monkeypatch.undo()
    result = map_multilevel(tasks, res, seed=5)
    report = tm.verify_mapping(tasks, res, result.mapping, claimed=result.max_occupancy)
    assert report.valid and report.matches, report
