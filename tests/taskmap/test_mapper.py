"""The mapper of Taura & Chien (section 4): guarantee, variants, independent re-checks."""

import math

import numpy as np
import pytest

from coalloc.taskmap import (
    VARIANTS as METHODS,
)
from coalloc.taskmap import (
    ResourceGraph,
    TaskGraph,
    comp_occupancy,
    improve,
    map_tasks,
    map_tasks_on,
    max_occupancy,
    open_occupancy,
    processor_order,
    remove_bottlenecks,
    solve_exact_mapping,
)
from coalloc.taskmap.verify import verify_mapping


def star(capacity, bandwidth=1.0):
    """Processors 1..P around a router 0."""
    p = len(capacity)
    edges = np.array([[0, i + 1] for i in range(p)])
    return ResourceGraph.from_edges(np.r_[0.0, capacity], edges, np.full(p, bandwidth))


def random_tree(rng, n_routers, n_procs, cap=(1.0, 1.0), bw=(1.0, 1.0)):
    """Routers form a random tree, each processor hangs off a random router."""
    edges = [(int(rng.integers(0, v)), v) for v in range(1, n_routers)]
    edges += [(int(rng.integers(0, n_routers)), n_routers + i) for i in range(n_procs)]
    capacity = np.r_[np.zeros(n_routers), rng.uniform(*cap, n_procs)]
    return ResourceGraph.from_edges(capacity, np.array(edges), rng.uniform(*bw, len(edges)))


def clustered_tasks(rng, n_clusters, size, c, weight=(1.0, 1.0)):
    """Complete graphs of `size` tasks (edges c), consecutive clusters joined weakly."""
    n = n_clusters * size
    w = np.repeat(rng.uniform(*weight, n_clusters), size)
    comm = np.zeros((n, n))
    for k in range(n_clusters):
        a = slice(k * size, (k + 1) * size)
        comm[a, a] = c
        if k + 1 < n_clusters:
            b = slice((k + 1) * size, (k + 2) * size)
            comm[a, b] = comm[b, a] = 1.0 / (size * size)
    np.fill_diagonal(comm, 0)
    return TaskGraph(w, comm)


def pipeline_instance(seed, c=8.0):
    rng = np.random.default_rng(seed)
    tasks = clustered_tasks(rng, int(rng.integers(3, 6)), int(rng.integers(3, 6)), c, (1, 3))
    res = random_tree(rng, 5, 14, cap=(3, 15), bw=(20, 80))
    return tasks, res


# ---------------------------------------------------------------------------------------
# the paper's guarantee (section 4.4)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(METHODS))
def test_uniform_guarantee_ceil_n_over_p(method):
    """Uniform tasks and processors, negligible communication: at most ceil(N/P) per processor."""
    rng = np.random.default_rng(0)
    for trial in range(40):
        n = int(rng.integers(1, 60))
        p = int(rng.integers(1, 12))
        res = star(np.ones(p), bandwidth=1.0)
        tiny = 1e-9 * (rng.random((n, n)) < 0.3)
        tasks = TaskGraph(np.ones(n), np.triu(tiny, 1) + np.triu(tiny, 1).T)
        order = rng.permutation(n) if trial % 2 else None  # any order; default: clustering
        pord = ["capacity", "index", "locality", "random"][trial % 4]
        r = map_tasks(tasks, res, method=method, seed=trial, order=order, processor_order=pord)
        counts = np.bincount(r.mapping, minlength=res.n_nodes)
        assert counts.max() == math.ceil(n / p), (n, p, counts)
        assert counts[0] == 0  # never on the router
        assert r.max_occupancy == pytest.approx(math.ceil(n / p))


def test_uniform_guarantee_on_a_tree_of_scaled_processors():
    # capacities all 3, weights all 2: the same guarantee, occupancy 2 ceil(N/P) / 3
    rng = np.random.default_rng(1)
    for _ in range(10):
        n, p = int(rng.integers(5, 40)), int(rng.integers(2, 10))
        res = random_tree(rng, 4, p, cap=(3.0, 3.0))
        r = map_tasks(TaskGraph(np.full(n, 2.0)), res, method="open+improve", seed=1)
        assert np.bincount(r.mapping).max() == math.ceil(n / p)


# ---------------------------------------------------------------------------------------
# communication: clustering vs spreading (section 4.1's example)
# ---------------------------------------------------------------------------------------


def test_open_metric_keeps_heavy_clusters_together():
    rng = np.random.default_rng(2)
    tasks = clustered_tasks(rng, 4, 4, c=10.0)  # 16 unit tasks, 4 cliques with edges 10
    res = star(np.ones(16))
    open_ = map_tasks(tasks, res, method="open", order="index", processor_order="index")
    base = map_tasks(tasks, res, method="base", order="index", processor_order="index")
    # base balances compute only and spreads the cliques: each link carries >= 3 x 10
    assert base.max_occupancy > 30
    # open puts each clique on one processor: node occupancy 4, links 2 x 1/16
    assert open_.max_occupancy == pytest.approx(4.0)
    for k in range(4):
        assert len(set(open_.mapping[4 * k : 4 * k + 4].tolist())) == 1
    # with the default (flow-injection) task order too
    clus = map_tasks(tasks, res, method="open", seed=0, processor_order="index")
    assert clus.max_occupancy == pytest.approx(4.0)


def test_light_communication_spreads():
    rng = np.random.default_rng(3)
    tasks = clustered_tasks(rng, 4, 4, c=0.01)
    res = star(np.ones(16))
    for method in METHODS:
        r = map_tasks(tasks, res, method=method, seed=0)
        assert np.bincount(r.mapping).max() == 1
        assert r.max_occupancy == pytest.approx(1.0)


# ---------------------------------------------------------------------------------------
# results are checked independently
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", sorted(METHODS))
def test_results_recomputed_independently(method):
    for seed in range(6):
        tasks, res = pipeline_instance(seed)
        r = map_tasks(tasks, res, method=method, seed=seed)
        report = verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert report.valid and report.matches, str(report)
        assert r.mapping.dtype == np.int64 and r.mapping.shape == (tasks.n,)
        assert np.all(res.is_processor[r.mapping])
        b = r.bottleneck
        occ = r.node_occupancy if b.kind == "node" else r.link_occupancy
        assert occ[b.index] == pytest.approx(r.max_occupancy)
        assert r.method == method


def test_same_seed_same_answer_and_no_mutation():
    tasks, res = pipeline_instance(7)
    w0, data0 = tasks.node_weight.copy(), tasks.data.copy()
    a = map_tasks(tasks, res, method="open+improve", seed=3, processor_order="random")
    b = map_tasks(tasks, res, method="open+improve", seed=3, processor_order="random")
    np.testing.assert_array_equal(a.mapping, b.mapping)
    assert a.max_occupancy == b.max_occupancy
    np.testing.assert_array_equal(tasks.node_weight, w0)
    np.testing.assert_array_equal(tasks.data, data0)


def test_improvement_never_worse():
    for seed in range(8):
        tasks, res = pipeline_instance(100 + seed, c=float(1 + seed))
        for metric in ("base", "open"):
            one = map_tasks(tasks, res, method=metric, seed=seed)
            two = map_tasks(tasks, res, method=metric + "+improve", seed=seed)
            np.testing.assert_array_equal(one.order, two.order)
            assert two.max_occupancy <= one.max_occupancy * (1 + 1e-12)
            assert two.history[0] == pytest.approx(one.max_occupancy)
            assert all(x > y for x, y in zip(two.history, two.history[1:]))


def test_early_exit_does_not_change_the_mapping():
    for seed in range(6):
        tasks, res = pipeline_instance(200 + seed, c=4.0)
        for method in METHODS:
            a = map_tasks(tasks, res, method=method, seed=seed)
            b = map_tasks(tasks, res, method=method, seed=seed, early_exit=False)
            np.testing.assert_array_equal(a.mapping, b.mapping)
            assert a.iterations["moves"] <= b.iterations["moves"]


def test_never_below_the_exact_optimum():
    rng = np.random.default_rng(9)
    for _ in range(4):
        tasks = clustered_tasks(rng, 2, 3, c=float(rng.uniform(0.5, 6)), weight=(1, 3))
        res = random_tree(rng, 2, 4, cap=(2, 6), bw=(2, 8))
        ex = solve_exact_mapping(tasks, res)
        assert ex.status == "optimal"
        for method in METHODS:
            r = map_tasks(tasks, res, method=method, seed=0)
            assert r.max_occupancy >= ex.objective * (1 - 1e-9)


# ---------------------------------------------------------------------------------------
# the elementary procedures
# ---------------------------------------------------------------------------------------


def test_map_tasks_on_balances_compute():
    res = star([1.0, 1.0, 2.0])
    tasks = TaskGraph(np.ones(8))
    empty = np.full(8, -1)
    m = map_tasks_on(tasks, res, empty, 1, [2, 3], order=np.arange(8))
    # O = i, O_comp = (8 - i) / 3: minimum of the max at i = 2 (2 vs 2)
    assert (m == 1).sum() == 2 and (m < 0).sum() == 6
    assert comp_occupancy(tasks, res, m, [2, 3]) == pytest.approx(2.0)
    # last processor takes everything left
    m2 = map_tasks_on(tasks, res, m, 2, [], order=np.arange(8))
    assert (m2 < 0).sum() == 0
    # the bound u stops before the occupancy exceeds it
    m3 = map_tasks_on(tasks, res, empty, 1, [2, 3], order=np.arange(8), u=0.5)
    assert (m3 >= 0).sum() == 0


def test_open_occupancy_and_map_tasks_on_stops_at_cluster_edge():
    # two cliques of 3 (edges 5), one link per processor of bandwidth 1
    comm = np.zeros((6, 6))
    comm[:3, :3] = comm[3:, 3:] = 5.0
    np.fill_diagonal(comm, 0)
    tasks = TaskGraph(np.ones(6), comm)
    res = star(np.full(4, 10.0))
    m = np.array([1, -1, -1, -1, -1, -1])
    assert open_occupancy(tasks, res, m, 1) == pytest.approx(10.0)
    m = map_tasks_on(tasks, res, np.full(6, -1), 1, [2, 3, 4], order=np.arange(6))
    assert m.tolist() == [1, 1, 1, -1, -1, -1]
    assert open_occupancy(tasks, res, m, 1) == 0.0
    m = map_tasks_on(
        tasks, res, np.full(6, -1), 1, [2, 3, 4], order=np.arange(6), open_metric=False
    )
    assert (m == 1).sum() == 1  # without the metric: compute balance only


def test_remove_bottlenecks_and_improve():
    tasks, res = pipeline_instance(11, c=12.0)
    r = map_tasks(tasks, res, method="base", seed=0)
    partial = remove_bottlenecks(tasks, res, r.mapping, acceleration=0.75)
    assert (partial < 0).any()
    kept = partial >= 0
    np.testing.assert_array_equal(partial[kept], r.mapping[kept])
    occ, _ = max_occupancy(tasks, res, partial)
    assert occ <= 0.75 * r.max_occupancy * (1 + 1e-12)
    better = improve(tasks, res, r.mapping, order=r.order, open_metric=False)
    assert max_occupancy(tasks, res, better)[0] <= r.max_occupancy


def test_initial_partial_mapping_is_kept_without_improve():
    tasks, res = pipeline_instance(12)
    init = np.full(tasks.n, -1)
    init[:3] = res.processors[-1]
    r = map_tasks(tasks, res, method="open", seed=0, initial=init)
    assert np.all(r.mapping[:3] == res.processors[-1])
    assert np.all(r.mapping >= 0)


def test_processor_orders():
    rng = np.random.default_rng(4)
    res = random_tree(rng, 4, 9, cap=(1, 5))
    for kind in ("capacity", "index", "locality", "random"):
        order = processor_order(res, kind, seed=1)
        assert sorted(order.tolist()) == res.processors.tolist()
    cap = res.capacity[processor_order(res, "capacity")]
    assert np.all(np.diff(cap) <= 0)


def test_bad_arguments():
    tasks, res = pipeline_instance(1)
    with pytest.raises(ValueError, match="method"):
        map_tasks(tasks, res, method="fast")
    with pytest.raises(TypeError, match="TaskGraph"):
        map_tasks(np.ones(3), res)
    with pytest.raises(ValueError, match="order"):
        map_tasks(tasks, res, order=[0, 0, 1])
    with pytest.raises(ValueError, match="processor_order"):
        map_tasks(tasks, res, processor_order="fastest")
    with pytest.raises(ValueError, match="processor_order"):
        map_tasks(tasks, res, processor_order=res.processors[:2])
    with pytest.raises(ValueError, match="acceleration"):
        map_tasks(tasks, res, acceleration=1.5)
    with pytest.raises(TypeError, match="seed"):
        map_tasks(tasks, res, seed="x")
    with pytest.raises(ValueError, match="not a processor"):
        map_tasks(tasks, res, initial=np.zeros(tasks.n, dtype=int))
