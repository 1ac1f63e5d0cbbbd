"""The cluster order of large task graphs: heavy-edge coarsening, then flow injection."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import coarsen as C


def random_graph(rng, n):
    w = rng.random((n, n)) * (rng.random((n, n)) < rng.uniform(0.05, 0.5))
    w = np.round(w * 3) / 3  # ties
    w = np.triu(w, 1)
    return tm.TaskGraph(rng.random(n) + 0.1, w + w.T)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30))
def test_heavy_edge_matching_is_a_maximal_matching_of_heavy_edges(seed, n):
    rng = np.random.default_rng(seed)
    tasks = random_graph(rng, n)
    indptr, indices, data = tasks.undirected_csr()
    c = C.heavy_edge_matching(indptr, indices, data)
    dense = tasks.comm.toarray()
    sizes = np.bincount(c)
    assert sizes.min() >= 1 and sizes.max() <= 2
    # numbered by their smaller member
    firsts = [int(np.flatnonzero(c == k)[0]) for k in range(sizes.shape[0])]
    assert firsts == sorted(firsts)
    for k in np.flatnonzero(sizes == 2):
        u, v = np.flatnonzero(c == k)
        assert dense[u, v] > 0  # a pair is an edge
    single = np.flatnonzero(sizes[c] == 1)
    assert not (dense[np.ix_(single, single)] > 0).any()  # maximal: no edge left between
    # the greedy rule, replayed: u (in index order) takes its heaviest free neighbour
    free = np.ones(n, dtype=bool)
    for u in range(n):
        if not free[u]:
            continue
        free[u] = False
        nb = [v for v in np.flatnonzero(dense[u] > 0) if free[v]]
        if nb:
            v = max(nb, key=lambda x: (dense[u, x], -x))
            free[v] = False
            assert c[u] == c[v]
        else:
            assert sizes[c[u]] == 1


def test_coarsening_keeps_the_total_weights():
    rng = np.random.default_rng(3)
    tasks = random_graph(rng, 200)
    (indptr, indices, data), w, maps = C.coarsen(*tasks.undirected_csr(), tasks.node_weight, 30)
    n = indptr.shape[0] - 1
    assert n <= 30 or len(maps) > 0
    assert np.isclose(w.sum(), tasks.node_weight.sum())
    # pair weight kept: inside coarse nodes + between them = all
    full = tasks.comm
    proj = np.arange(tasks.n)
    for c in maps:
        proj = c[proj]
    inside = sum(full[i, j] for i, j in zip(*full.nonzero()) if proj[i] == proj[j])
    assert np.isclose(data.sum() + inside, full.sum())
    coarse = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    assert (coarse != coarse.T).nnz == 0 and coarse.diagonal().sum() == 0


def test_small_graphs_keep_the_flow_injection_order_exactly():
    tasks, _ = tm.generators.table1_instance(4.0, 7)
    for seed in (0, 1, 2):
        assert np.array_equal(
            C.cluster_order(tasks, seed), tm.flow_injection(tasks, seed=seed).order
        )


def test_a_large_graph_is_ordered_on_its_coarsening(monkeypatch):
    monkeypatch.setattr(C, "COARSEN_ABOVE", 40)
    tasks = tm.generators.pipeline_task_graph(n_clusters=20, c=8.0, seed=2)
    assert tasks.n > 40
    order = C.cluster_order(tasks, 5)
    assert sorted(order.tolist()) == list(range(tasks.n))
    assert np.array_equal(order, C.cluster_order(tasks, 5))  # same seed, same order
    _, _, maps = C.coarsen(*tasks.undirected_csr(), tasks.node_weight, 40)
    proj = np.arange(tasks.n)
    for c in maps:
        proj = c[proj]
    groups = proj[order]
    # the tasks of a coarse node are contiguous in the order
    assert len([k for k, g in enumerate(groups) if k == 0 or g != groups[k - 1]]) == int(
        proj.max() + 1
    )
    res = tm.generators.internet_resource_graph(n_wan=3, n_lan=4, seed=2)
    r = tm.map_tasks(tasks, res, seed=5)
    assert np.array_equal(r.order, order)
    report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches


@pytest.mark.slow
def test_ten_thousand_tasks_are_mapped_and_verified():
    # a 100 x 100 stencil: the size the coarsening is for (no timing asserted)
    side = 100
    grid = sp.diags([1.0, 1.0], [-1, 1], shape=(side, side))
    comm = sp.kron(sp.identity(side), grid) + sp.kron(grid, sp.identity(side))
    tasks = tm.TaskGraph(np.ones(side * side), comm)
    res = tm.generators.internet_resource_graph(n_wan=5, n_lan=20, seed=1)
    r = tm.map_tasks(tasks, res, method="open", seed=0)
    report = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches


@pytest.mark.slow
def test_a_solve_imports_no_heavy_module():
    # networkx used to be imported inside the first flow injection (0.1-0.2 s of a cold solve)
    import ast
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import coalloc.taskmap as tm\n"
        "from coalloc.taskmap import generators as g\n"
        "tasks, res = g.table1_instance(1.0, 1)\n"
        "before = set(sys.modules)\n"
        "tm.solve(tasks, res, seed=0)\n"
        "print(sorted(set(sys.modules) - before))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    new = ast.literal_eval(out.stdout.strip())
    assert all(m.startswith("coalloc.taskmap.") for m in new), new
