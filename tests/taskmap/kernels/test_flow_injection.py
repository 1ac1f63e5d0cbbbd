"""Flow-injection clustering: the compiled kernel against its twin, the tree, planted clusters."""

from concurrent.futures import ThreadPoolExecutor

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from coalloc.taskmap._flowinject import cluster
from coalloc.taskmap._reference.flowinject import Xoshiro256, flow_injection_reference
from coalloc.taskmap.clustering import FlowInjectionResult, flow_injection

METRICS = ("hops", "inverse_remaining", "inverse_weight")
TREE_KEYS = (
    "order", "parent", "task", "kind", "child_start", "child_count", "injections", "delta",
    "depth", "start", "stop",
)  # fmt: skip

# ----------------------------------------------------------------------------- helpers


def csr(w):
    m = sp.csr_array(w)
    m.sort_indices()
    return (
        np.ascontiguousarray(m.indptr, dtype=np.int64),
        np.ascontiguousarray(m.indices, dtype=np.int64),
        np.ascontiguousarray(m.data, dtype=np.float64),
    )


def random_graph(rng, n_max=22):
    n = int(rng.integers(0, n_max + 1))
    w = rng.random((n, n)) * (rng.random((n, n)) < rng.uniform(0.05, 0.8))
    if rng.random() < 0.3:
        w = np.round(w * 4) / 4  # ties in weights and distances
    w = np.triu(w, 1)
    return w + w.T


def planted(rng, k, size, p_in=1.0, w_in=1.0, p_out=0.03, w_out=0.1):
    """k clusters (cliques for p_in=1) with weak random edges and a weak chain, permuted."""
    sizes = rng.integers(size[0], size[1] + 1, k)
    lab = np.repeat(np.arange(k), sizes)
    n = lab.size
    same = lab[:, None] == lab[None, :]
    adj = np.triu(rng.random((n, n)) < np.where(same, p_in, p_out), 1)
    w = np.where(same, w_in, w_out) * adj
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    for j in range(k - 1):
        w[rng.integers(bounds[j], bounds[j + 1]), rng.integers(bounds[j + 1], bounds[j + 2])] = (
            w_out
        )
    w = w + w.T
    perm = rng.permutation(n)
    return w[np.ix_(perm, perm)], lab[perm]


def contiguous(order, lab):
    """Per cluster: is it one block of the order?"""
    seq = lab[order]
    starts = np.r_[True, seq[1:] != seq[:-1]]
    return np.bincount(seq[starts], minlength=lab.max() + 1) == 1


def same_result(a, b):
    for k in TREE_KEYS:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype.kind == y.dtype.kind, k
        if x.dtype.kind == "f":
            np.testing.assert_array_equal(x, y, err_msg=k)  # NaN == NaN here
        else:
            assert np.array_equal(x, y), k
    assert a["counters"] == b["counters"]


def check_tree(res, n):
    """Structural invariants of a FlowInjectionResult over n tasks."""
    t = res.tree
    assert res.order.dtype == np.int64
    assert np.array_equal(np.sort(res.order), np.arange(n))
    if n == 0:
        assert t.n_nodes == 0
        return
    assert (
        t.parent[0] == -1
        and np.all(t.parent[1:] >= 0)
        and np.all(t.parent[1:] < np.arange(1, t.n_nodes))
    )
    leaves = np.flatnonzero(t.task >= 0)
    assert np.array_equal(np.sort(t.task[leaves]), np.arange(n))  # one leaf per task
    assert np.all(t.child_count[leaves] == 0)
    for x in range(t.n_nodes):
        kids = t.children(x)
        assert np.all(t.parent[kids] == x)
        assert t.depth[x] == (0 if x == 0 else t.depth[t.parent[x]] + 1)
        if kids.size:
            assert t.task[x] == -1 and kids.size >= 2 or t.kind_name(x) == "flat"
            # children tile the parent's span, left to right
            assert t.start[kids[0]] == t.start[x] and t.stop[kids[-1]] == t.stop[x]
            assert np.array_equal(t.stop[kids[:-1]], t.start[kids[1:]])
        else:
            assert t.kind_name(x) == "leaf" and t.stop[x] - t.start[x] == 1
            assert res.order[t.start[x]] == t.task[x]
    # the labels at every level are a partition into contiguous blocks
    for level in range(t.height + 2):
        lab = t.labels(level)
        assert np.all(np.diff(lab[res.order]) >= 0)


# ------------------------------------------------------------------------------ parity


def test_rng_matches_reference_stream():
    # xoshiro256** reference values for splitmix64-seeded state (seed 0), shared by both sides
    r = Xoshiro256(0)
    first = [r.next() for _ in range(3)]
    assert first == [11091344671253066420, 13793997310169335082, 1900383378846508768]
    assert 0.0 <= Xoshiro256(5).uniform() < 1.0


@pytest.mark.parametrize("metric", METRICS)
def test_kernel_matches_twin_exactly(metric):
    rng = np.random.default_rng({"hops": 1, "inverse_remaining": 2, "inverse_weight": 3}[metric])
    for _ in range(60):
        w = random_graph(rng)
        n = w.shape[0]
        nw = rng.random(n) * (rng.random(n) < 0.8)
        if rng.random() < 0.2:
            nw = np.ones(n)
        kw = dict(
            metric=metric,
            seed=int(rng.integers(0, 2**63)),
            inherit=bool(rng.random() < 0.5),
            min_cluster_size=int(rng.integers(1, 4)),
            delta_scale=float(rng.choice([0.05, 0.3, 1.5])),
            max_injections=int(rng.choice([3, 1000000])),
        )
        if rng.random() < 0.3:
            kw["delta"] = float(rng.uniform(0.05, 0.5))
        args = csr(w) + (nw,)
        same_result(cluster(*args, **kw), flow_injection_reference(*args, **kw))


def test_public_backends_agree_on_planted_graph():
    rng = np.random.default_rng(4)
    w, _ = planted(rng, 4, (4, 7))
    for metric in METRICS:
        a = flow_injection(w, seed=9, metric=metric)
        b = flow_injection(w, seed=9, metric=metric, backend="python")
        assert np.array_equal(a.order, b.order)
        assert np.array_equal(a.tree.parent, b.tree.parent)
        assert a.counters == b.counters and a.n_injections > 0


def test_forced_split_matches_twin_and_is_flagged():
    rng = np.random.default_rng(5)
    w, _ = planted(rng, 3, (4, 6))
    args = csr(w) + (np.ones(w.shape[0]),)
    a = cluster(*args, seed=1, max_injections=2)
    same_result(a, flow_injection_reference(*args, seed=1, max_injections=2))
    assert a["counters"]["forced_removals"] > 0 and np.any(a["kind"] == 4)
    assert np.all(a["injections"] <= 2)


# ---------------------------------------------------------------------- determinism


def test_same_seed_same_result_different_seed_differs():
    rng = np.random.default_rng(6)
    w, _ = planted(rng, 5, (5, 9), p_in=0.7)
    a = flow_injection(w, seed=123)
    b = flow_injection(w.copy(), seed=123)
    assert np.array_equal(a.order, b.order) and np.array_equal(a.tree.parent, b.tree.parent)
    others = [flow_injection(w, seed=s) for s in range(1, 6)]
    assert any(o.n_injections != a.n_injections for o in others)
    # a Generator or SeedSequence gives one 64-bit seed
    g1 = flow_injection(w, seed=np.random.default_rng(3))
    g2 = flow_injection(w, seed=np.random.default_rng(3))
    assert np.array_equal(g1.order, g2.order) and g1.params["seed"] == g2.params["seed"]
    assert flow_injection(w, seed=-1).params["seed"] == 2**64 - 1


def test_threads_give_the_same_result():
    rng = np.random.default_rng(7)
    w, _ = planted(rng, 8, (10, 20), p_in=0.8)
    ref = flow_injection(w, seed=5)
    with ThreadPoolExecutor(max_workers=4) as ex:
        results = list(ex.map(lambda _: flow_injection(w, seed=5), range(8)))
    for r in results:
        assert np.array_equal(r.order, ref.order)
        assert np.array_equal(r.tree.parent, ref.tree.parent)
        assert r.counters == ref.counters


# ---------------------------------------------------------------- planted clusters


@pytest.mark.parametrize(
    "k, size, p_in, p_out, w_out",
    [
        (2, (5, 5), 1.0, 0.0, 0.1),  # two cliques, one weak bridge
        (4, (4, 8), 1.0, 0.05, 0.1),  # cliques with weak random edges
        (7, (5, 12), 1.0, 0.02, 0.3),
        (5, (10, 16), 0.8, 0.01, 0.5),  # dense (not complete) clusters
        (12, (3, 6), 1.0, 0.02, 0.2),  # many small cliques
        pytest.param(3, (20, 30), 0.6, 0.005, 1.0, marks=pytest.mark.slow),  # topology only
    ],
)
def test_planted_clusters_are_contiguous(k, size, p_in, p_out, w_out):
    rng = np.random.default_rng([k, size[0], int(100 * p_in)])
    for _ in range(4):
        w, lab = planted(rng, k, size, p_in=p_in, p_out=p_out, w_out=w_out)
        for metric in ("hops", "inverse_remaining"):
            for seed in range(3):
                res = flow_injection(w, seed=seed, metric=metric)
                assert contiguous(res.order, lab).all(), (metric, seed)


def test_pipeline_jobs_are_contiguous_and_exact_tree_nodes():
    from coalloc.taskmap.generators import pipeline_task_graph

    for c in (1.0, 16.0):
        for s in range(4):
            tasks, jobs = pipeline_task_graph(c=c, seed=s, return_jobs=True)
            rng = np.random.default_rng(s)
            perm = rng.permutation(tasks.n)
            w = tasks.comm.toarray()[np.ix_(perm, perm)]
            res = flow_injection(w, node_weight=tasks.node_weight[perm], seed=s)
            lab = jobs[perm]
            assert contiguous(res.order, lab).all()
            node_sets = {frozenset(res.tree.members(x).tolist()) for x in range(res.tree.n_nodes)}
            for j in range(lab.max() + 1):
                assert frozenset(np.flatnonzero(lab == j).tolist()) in node_sets
            # the pipeline keeps its direction: consecutive jobs are adjacent in the order
            blocks = lab[res.order][np.r_[True, np.diff(lab[res.order]) != 0]]
            assert np.all(np.abs(np.diff(blocks)) == 1)


def test_task_graph_input_and_top_split():
    from coalloc.taskmap.model import TaskGraph

    block = np.ones((4, 4)) - np.eye(4)
    w = np.kron(np.eye(2), block * 2.0)
    w[3, 4] = 0.5  # directed stream between the two groups
    tasks = TaskGraph(np.arange(1, 9, dtype=float), w)
    res = flow_injection(tasks, seed=0)
    assert sorted(map(sorted, (c.tolist() for c in res.clusters(1)))) == [
        [0, 1, 2, 3], [4, 5, 6, 7],
    ]  # fmt: skip
    check_tree(res, 8)
    # the same graph as a dense matrix (W + W^T) and as a DiGraph
    res_dense = flow_injection(w, node_weight=np.arange(1, 9), seed=0)
    assert np.array_equal(res_dense.order, res.order)
    g = nx.DiGraph()
    g.add_nodes_from((i, {"weight": float(i + 1)}) for i in range(8))
    g.add_weighted_edges_from((i, j, w[i, j]) for i, j in zip(*np.nonzero(w)))
    assert np.array_equal(flow_injection(g, seed=0).order, res.order)


# ---------------------------------------------------------------- tree and helpers


def test_tree_invariants_on_random_graphs():
    rng = np.random.default_rng(8)
    for _ in range(40):
        w = random_graph(rng, 30)
        res = flow_injection(
            w, seed=int(rng.integers(100)), min_cluster_size=int(rng.integers(1, 4))
        )
        assert isinstance(res, FlowInjectionResult)
        check_tree(res, w.shape[0])


def test_min_cluster_size_and_to_networkx():
    rng = np.random.default_rng(9)
    w, lab = planted(rng, 3, (6, 8))
    res = flow_injection(w, seed=0, min_cluster_size=8)
    t = res.tree
    flat = np.flatnonzero(t.kind == 3)
    assert flat.size and np.all(t.stop[flat] - t.start[flat] <= 8)
    for x in flat:  # flat clusters list their tasks in index order
        assert np.all(np.diff(t.members(x)) > 0)
    assert np.all(t.kind[t.child_count > 0] != 0)
    g = t.to_networkx()
    assert nx.is_arborescence(g) and g.number_of_nodes() == t.n_nodes
    assert g.nodes[0]["size"] == lab.size
    assert sum(1 for _, d in g.nodes(data=True) if d["task"] >= 0) == lab.size
    assert contiguous(res.order, lab).all()


# ------------------------------------------------------------------------ edge cases


def test_empty_single_isolated_and_zero_weights():
    res = flow_injection(np.zeros((0, 0)))
    assert res.order.shape == (0,) and res.tree.n_nodes == 0
    res = flow_injection(np.zeros((1, 1)))
    assert res.order.tolist() == [0] and res.tree.n_nodes == 1 and res.tree.kind_name(0) == "leaf"
    res = flow_injection(np.zeros((4, 4)))  # no edges: components are the split
    assert res.tree.kind_name(0) == "components" and res.n_injections == 0
    check_tree(res, 4)
    assert res.order.tolist() == [0, 1, 2, 3]
    # zero node weights everywhere: drawn uniformly; one positive weight: also uniform
    w = np.ones((5, 5)) - np.eye(5)
    for nw in (np.zeros(5), np.array([0, 0, 3.0, 0, 0])):
        r = flow_injection(w, node_weight=nw, seed=1)
        check_tree(r, 5)
        assert r.n_injections > 0
    # explicit zeros in a sparse matrix are not edges; a self-loop is ignored
    m = sp.csr_matrix(
        (np.array([0.0, 0.0, 5.0]), (np.array([0, 1, 2]), np.array([1, 0, 2]))), shape=(3, 3)
    )
    r = flow_injection(m)
    assert r.tree.kind_name(0) == "components" and r.n_injections == 0


def test_disconnected_input_components_first():
    rng = np.random.default_rng(10)
    a, _ = planted(rng, 2, (4, 5))
    b, _ = planted(rng, 2, (4, 5))
    w = sp.block_diag([a, b]).toarray()
    res = flow_injection(w, seed=2)
    assert res.tree.kind_name(0) == "components"
    top = [set(c.tolist()) for c in res.clusters(1)]
    assert sorted(map(len, top)) == sorted([a.shape[0], b.shape[0]])
    assert set(range(a.shape[0])) in top
    check_tree(res, w.shape[0])


def test_absolute_delta_and_large_delta():
    w = np.kron(np.eye(2), np.ones((3, 3)) - np.eye(3))
    w[2, 3] = w[3, 2] = 0.1
    res = flow_injection(w, seed=0, delta=0.05)
    assert np.allclose(res.tree.delta[res.tree.kind == 1], 0.05)
    assert sorted(sorted(c.tolist()) for c in res.clusters(1)) == [[0, 1, 2], [3, 4, 5]]
    big = flow_injection(w, seed=0, delta=100.0)  # every path edge dies at once
    check_tree(big, 6)
    assert big.counters["removed_edges"] >= 1


def test_large_sparse_graph_runs():
    rng = np.random.default_rng(11)
    n = 600
    w = sp.random(n, n, density=4 / n, random_state=12, data_rvs=lambda k: rng.uniform(0.5, 2, k))
    w = sp.triu(w, 1)
    res = flow_injection(w + w.T, seed=0, inherit=True)
    check_tree(res, n)


def test_caller_data_not_mutated():
    rng = np.random.default_rng(13)
    w, _ = planted(rng, 3, (4, 6))
    before = w.copy()
    m = sp.csr_matrix(w)
    m_data = m.data.copy()
    nw = np.ones(w.shape[0])
    flow_injection(w, seed=0, node_weight=nw)
    flow_injection(m, seed=0)
    assert np.array_equal(w, before) and np.array_equal(m.data, m_data)
    assert np.array_equal(nw, np.ones(w.shape[0]))


# ------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "graph, kwargs, exc, match",
    [
        (np.ones((2, 3)), {}, ValueError, "square"),
        (np.ones(3), {}, ValueError, "square"),
        (-np.ones((2, 2)), {}, ValueError, "non-negative"),
        (np.array([[0, np.nan], [np.nan, 0]]), {}, ValueError, "finite"),
        (np.array([[0, np.inf], [1, 0]]), {}, ValueError, "finite"),
        (np.ones((2, 2), dtype=complex), {}, TypeError, "real"),
        (np.array([["a", "b"], ["c", "d"]]), {}, TypeError, "numeric"),
        ("graph", {}, TypeError, "graph must be"),
        (np.ones((2, 2)), {"node_weight": [1.0]}, ValueError, "node_weight"),
        (np.ones((2, 2)), {"node_weight": [1.0, -1.0]}, ValueError, "node_weight"),
        (np.ones((2, 2)), {"node_weight": [1.0, np.nan]}, ValueError, "node_weight"),
        (np.ones((2, 2)), {"metric": "euclid"}, ValueError, "metric"),
        (np.ones((2, 2)), {"backend": "gpu"}, ValueError, "backend"),
        (np.ones((2, 2)), {"delta": 0.0}, ValueError, "delta"),
        (np.ones((2, 2)), {"delta": -1.0}, ValueError, "delta"),
        (np.ones((2, 2)), {"delta": float("inf")}, ValueError, "delta"),
        (np.ones((2, 2)), {"delta_scale": 0}, ValueError, "delta_scale"),
        (np.ones((2, 2)), {"delta": "big"}, TypeError, "delta"),
        (np.ones((2, 2)), {"min_cluster_size": 0}, ValueError, "min_cluster_size"),
        (np.ones((2, 2)), {"min_cluster_size": 1.5}, TypeError, "min_cluster_size"),
        (np.ones((2, 2)), {"max_injections": -1}, ValueError, "max_injections"),
        (np.ones((2, 2)), {"seed": 1.5}, TypeError, "seed"),
        (np.ones((2, 2)), {"seed": True}, TypeError, "seed"),
        (np.ones((2, 2)), {"inherit": "yes"}, TypeError, "inherit"),
    ],
)
def test_bad_input(graph, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        flow_injection(graph, **kwargs)


def test_bad_networkx_weights_and_kernel_checks():
    g = nx.Graph()
    g.add_edge(0, 1, weight=-2.0)
    with pytest.raises(ValueError, match="non-negative"):
        flow_injection(g)
    g = nx.Graph()
    g.add_node(0, weight=-1.0)
    with pytest.raises(ValueError, match="non-negative"):
        flow_injection(g)
    # the kernel never trusts its caller: malformed CSR is a ValueError, not a crash
    ip, ix, d = csr(np.ones((3, 3)))
    with pytest.raises(ValueError, match="indices"):
        cluster(ip, ix + 5, d, np.ones(3))
    with pytest.raises(ValueError, match="indptr"):
        cluster(ip[:-1], ix, d, np.ones(3))
    with pytest.raises(ValueError, match="indptr"):
        cluster(ip[::-1].copy(), ix, d, np.ones(3))
    with pytest.raises(ValueError, match="data"):
        cluster(ip, ix, -d, np.ones(3))
    with pytest.raises(ValueError, match="metric"):
        cluster(ip, ix, d, np.ones(3), metric="x")
    with pytest.raises(ValueError, match="delta_scale"):
        cluster(ip, ix, d, np.ones(3), delta_scale=0.0)
