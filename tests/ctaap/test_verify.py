"""verify() on hand-made allocations that break each constraint."""

import numpy as np
import pytest
import scipy.sparse as sp

import coalloc


@pytest.fixture
def inst():
    # Tasks 0-1 need 5 between them, 1-2 need 2; cluster 0 has intra 4, cluster 1 intra 6,
    # 0<->1 bandwidth 3. Task 2 needs cpu 3, which only cluster 1 has.
    req = coalloc.Request(
        {"cpu": [1, 2, 3], "mem": [1, 1, 1]},
        bandwidth=[[0, 5, 0], [5, 0, 2], [0, 2, 0]],
    )
    off = coalloc.Offer({"cpu": [2, 3], "mem": [1, 2]}, capacity=[1, 2], bandwidth=[[4, 3], [3, 6]])
    return req, off


def test_feasible(inst):
    rep = coalloc.verify(*inst, [-1, 1, 1])
    assert rep.feasible and rep.n_allocated == 2 and rep.n_violations == 0
    assert "2/3 tasks allocated, feasible" in str(rep)


def test_empty_allocation_is_feasible(inst):
    rep = coalloc.verify(*inst, [-1, -1, -1])
    assert rep.feasible and rep.n_allocated == 0


def test_capacity_violation(inst):
    rep = coalloc.verify(*inst, [0, 0, -1])
    assert rep.violations[2] == 1
    # 0 and 1 both in cluster 0 with intra bandwidth 4 < 5: both ordered pairs violate.
    assert rep.violations[4] == 2
    assert not rep.feasible


def test_property_violation(inst):
    rep = coalloc.verify(*inst, [-1, -1, 0])
    assert rep.violations == {1: 0, 2: 0, 3: 1, 4: 0, 5: 0}
    assert rep.examples[3] == [(2, 0)]


def test_bandwidth_violation_between_clusters(inst):
    rep = coalloc.verify(*inst, [0, 1, -1])  # 0-1 need 5, clusters 0-1 give 3
    assert rep.violations[4] == 2 and rep.violations[2] == 0
    assert (0, 1) in rep.examples[4]


def test_asymmetric_checked_in_both_directions():
    req = coalloc.Request({"cpu": [1, 1]}, bandwidth=[[0, 5], [0, 0]])
    off = coalloc.Offer({"cpu": [1, 1]}, capacity=[1, 1], bandwidth=[[0, 5], [1, 0]])
    assert coalloc.verify(req, off, [0, 1]).feasible  # 0->1 needs 5, bhat[0,1] = 5
    rep = coalloc.verify(req, off, [1, 0])  # now bhat[1,0] = 1 < 5
    assert rep.violations[4] == 1


def test_matrix_form_checks_one_and_five(inst):
    req, off = inst
    x = np.array([[1, 1], [0, 0], [0, 0]])
    rep = coalloc.verify(req, off, x)
    assert rep.violations[1] == 1
    x = np.array([[0, 0], [0, 0.5], [0, 0]])
    assert coalloc.verify(req, off, x).violations[5] == 1
    x = np.array([[0, 0], [0, 1], [0, 1]])
    assert coalloc.verify(req, off, x).feasible


def test_matrix_form_with_multi_placement_counts_bandwidth(inst):
    req, off = inst
    x = np.array([[1, 1], [1, 0], [0, 0]])  # task 0 on both clusters, task 1 on cluster 0
    rep = coalloc.verify(req, off, x)
    assert rep.violations[1] == 1
    assert rep.violations[2] == 1  # cluster 0 holds 2 > 1
    # (0 in 0, 1 in 0): 5 > 4 twice; (0 in 1, 1 in 0): 5 > 3 twice
    assert rep.violations[4] == 4


@pytest.mark.parametrize(
    "bad, exc, words",
    [
        ([0, 1], ValueError, "shape"),
        ([0, 1, 2], ValueError, "not a cluster index"),
        ([0, 1, -2], ValueError, "not a cluster index"),
        ([0.5, 1, 1], TypeError, "integers"),
        (np.zeros((3, 3)), ValueError, "matrix must have shape"),
    ],
)
def test_bad_assignment(inst, bad, exc, words):
    with pytest.raises(exc, match=words):
        coalloc.verify(*inst, bad)


def test_agrees_with_brute_force_on_random_assignments():
    rng = np.random.default_rng(7)
    for trial in range(60):
        n, m = int(rng.integers(1, 25)), int(rng.integers(1, 5))
        dense = rng.integers(0, 6, (n, n)) * (rng.random((n, n)) < 0.4)
        np.fill_diagonal(dense, 0)
        if trial % 2:
            dense = np.triu(dense) + np.triu(dense, 1).T
        req = coalloc.Request({"cpu": rng.integers(0, 5, n)}, sp.csr_array(dense.astype(float)))
        off = coalloc.Offer(
            {"cpu": rng.integers(0, 5, m)},
            capacity=rng.integers(0, 4, m),
            bandwidth=rng.integers(0, 6, (m, m)),
        )
        a = rng.integers(-1, m, n)
        rep = coalloc.verify(req, off, a)
        v2 = sum(np.sum(a == j) > off.capacity[j] for j in range(m))
        v3 = sum(
            a[i] >= 0 and req.properties["cpu"][i] > off.properties["cpu"][a[i]] for i in range(n)
        )
        v4 = sum(
            a[i] >= 0 and a[k] >= 0 and i != k and dense[i, k] > off.bandwidth[a[i], a[k]]
            for i in range(n)
            for k in range(n)
        )
        assert rep.violations == {1: 0, 2: v2, 3: v3, 4: v4, 5: 0}
        assert rep.n_allocated == int(np.sum(a >= 0))


def test_chunked_path(monkeypatch):
    import importlib

    vmod = importlib.import_module("coalloc.ctaap.verify")  # the module, not the function

    monkeypatch.setattr(vmod, "_CHUNK", 7)
    req, off = coalloc.generators.fig2(1, n_tasks=30, seed=3)
    rng = np.random.default_rng(0)
    a = rng.integers(-1, off.m, req.n)
    small = coalloc.verify(req, off, a).violations
    monkeypatch.setattr(vmod, "_CHUNK", 1 << 22)
    assert coalloc.verify(req, off, a).violations == small
