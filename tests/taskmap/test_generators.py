"""The section 5.1 generators of Taura & Chien (Internet-like resource graphs, pipelines)."""

import networkx as nx
import numpy as np
import pytest

from coalloc.taskmap import generators as gen
from coalloc.taskmap.model import ResourceGraph, TaskGraph


def as_networkx(res):
    g = nx.Graph()
    g.add_nodes_from(range(res.n_nodes))
    for (u, v), b in zip(res.links.tolist(), res.bandwidth.tolist()):
        g.add_edge(u, v, bandwidth=b)
    return g


# -------------------------------------------------------------------------- resources


@pytest.mark.parametrize("seed", range(6))
def test_internet_resource_graph_structure(seed):
    res = gen.internet_resource_graph(seed=seed)
    assert isinstance(res, ResourceGraph)
    g = as_networkx(res)
    assert nx.is_tree(g)  # MST of the WAN + trees hanging off it: routes are unique
    n_wan, n_lan = 10, 10
    cap = res.capacity
    assert np.all(cap[:n_wan] == 0)  # WAN routers
    routers = np.flatnonzero(cap == 0)
    assert routers.size == n_wan + n_lan
    assert np.array_equal(res.is_processor, cap > 0)
    gateways = routers[routers >= n_wan]
    bw = {frozenset((u, v)): d["bandwidth"] for u, v, d in g.edges(data=True)}
    # WAN: a spanning tree over the WAN routers with the WAN bandwidth
    wan = g.subgraph(range(n_wan))
    assert nx.is_tree(wan)
    assert all(bw[frozenset(e)] == 1000.0 for e in wan.edges)
    sizes, depths = [], []
    for k, gw in enumerate(gateways):
        nbrs = sorted(g.neighbors(gw))
        wan_nbrs = [v for v in nbrs if v < n_wan]
        lan_nbrs = [v for v in nbrs if v >= n_wan]
        assert len(wan_nbrs) == 1 and bw[frozenset((gw, wan_nbrs[0]))] == 500.0
        assert len(lan_nbrs) == 1 and bw[frozenset((gw, lan_nbrs[0]))] == 50.0
        end = gateways[k + 1] if k + 1 < gateways.size else res.n_nodes
        lan = np.arange(gw + 1, end)
        assert lan[0] == lan_nbrs[0]  # the root follows its gateway
        assert np.all(cap[lan] == cap[lan[0]]) and 3.0 <= cap[lan[0]] <= 15.0
        sub = g.subgraph(lan)
        assert nx.is_tree(sub) and all(bw[frozenset(e)] == 50.0 for e in sub.edges)
        depth = nx.single_source_shortest_path_length(sub, int(lan[0]))
        sizes.append(lan.size)
        depths.append(max(depth.values()))
        kids = [sum(1 for v in sub.neighbors(u) if depth[v] > depth[u]) for u in lan]
        internal = [c for c in kids if c]
        assert all(c <= 20 for c in internal)
        assert all(c >= 5 for c in internal[:-1])  # only the last one may be cut short
    assert all(10 <= s <= 20 for s in sizes)
    assert set(depths) <= {1, 2}


def test_internet_resource_graph_gateway_nearest_and_mst():
    # one LAN, 2 WAN nodes: the graph is connected and the LAN hangs off one WAN router
    res = gen.internet_resource_graph(n_wan=2, n_lan=1, lan_size=1, seed=3)
    assert res.n_nodes == 4 and res.n_processors == 1
    assert nx.is_tree(as_networkx(res))
    res = gen.internet_resource_graph(n_wan=1, n_lan=3, lan_size=(2, 3), children=1, seed=0)
    g = as_networkx(res)
    assert nx.is_tree(g)
    # children=1: every LAN is a path below its root
    for u in np.flatnonzero(res.capacity > 0):
        assert g.degree(int(u)) <= 2


def test_internet_resource_graph_determinism_and_params():
    a = gen.internet_resource_graph(seed=11)
    b = gen.internet_resource_graph(seed=11)
    assert np.array_equal(a.links, b.links) and np.array_equal(a.capacity, b.capacity)
    c = gen.internet_resource_graph(seed=12)
    assert not (np.array_equal(a.capacity, c.capacity) and np.array_equal(a.links, c.links))
    r = gen.internet_resource_graph(
        n_wan=3, n_lan=4, wan_bandwidth=7.0, wan_lan_bandwidth=5.0, lan_bandwidth=2.0,
        capacity=4.0, lan_size=5, children=(2, 2), seed=0,
    )  # fmt: skip
    assert r.n_nodes == 3 + 4 * 6
    assert set(np.unique(r.bandwidth).tolist()) == {7.0, 5.0, 2.0}
    assert set(np.unique(r.capacity).tolist()) == {0.0, 4.0}


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"n_wan": 0}, ValueError),
        ({"n_lan": 1.5}, TypeError),
        ({"children": (5, 2)}, ValueError),
        ({"capacity": (0.0, 1.0)}, ValueError),
        ({"lan_bandwidth": -1.0}, ValueError),
        ({"lan_size": (1, 2, 3)}, ValueError),
    ],
)
def test_internet_resource_graph_bad_params(kwargs, exc):
    with pytest.raises(exc):
        gen.internet_resource_graph(**kwargs)


# ------------------------------------------------------------------------------ tasks


@pytest.mark.parametrize("c", [1.0, 4.0, 16.0])
def test_pipeline_task_graph_structure(c):
    for seed in range(5):
        tasks, jobs = gen.pipeline_task_graph(c=c, seed=seed, return_jobs=True)
        assert isinstance(tasks, TaskGraph) and not tasks.directed
        k = jobs.max() + 1
        assert 5 <= k <= 10 and np.all(np.diff(jobs) >= 0)
        sizes = np.bincount(jobs)
        assert np.all((sizes >= 5) & (sizes <= 10))
        w = tasks.comm.toarray()
        assert np.allclose(w, w.T) and np.all(np.diag(w) == 0)
        for j in range(k):
            idx = np.flatnonzero(jobs == j)
            nw = tasks.node_weight[idx]
            assert np.all(nw == nw[0]) and 1.0 <= nw[0] <= 3.0
            block = w[np.ix_(idx, idx)][~np.eye(idx.size, dtype=bool)]
            assert np.all(block == block[0]) and 1.0 <= block[0] <= c  # complete, one weight
            for j2 in range(k):
                if j2 == j:
                    continue
                other = np.flatnonzero(jobs == j2)
                cross = w[np.ix_(idx, other)]
                if abs(j - j2) == 1:  # complete bipartite, total volume 1
                    assert np.allclose(cross, 1.0 / (idx.size * other.size))
                    assert np.isclose(cross.sum(), 1.0)
                else:
                    assert np.all(cross == 0)


def test_pipeline_task_graph_fixed_values_and_determinism():
    t = gen.pipeline_task_graph(n_clusters=3, cluster_size=4, compute=2.0, c=1.0, seed=0)
    assert t.n == 12 and np.all(t.node_weight == 2.0)
    assert t.n_edges == 3 * 6 + 2 * 16
    a = gen.pipeline_task_graph(seed=5)
    b = gen.pipeline_task_graph(seed=5)
    assert np.array_equal(a.node_weight, b.node_weight)
    assert (a.comm != b.comm).nnz == 0
    one = gen.pipeline_task_graph(n_clusters=1, cluster_size=1, seed=0)
    assert one.n == 1 and one.n_edges == 0


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"c": 0.5}, ValueError),
        ({"n_clusters": (0, 2)}, ValueError),
        ({"cluster_size": "5"}, TypeError),
        ({"compute": (3.0, 1.0)}, ValueError),
        ({"return_jobs": 1}, TypeError),
    ],
)
def test_pipeline_task_graph_bad_params(kwargs, exc):
    with pytest.raises(exc):
        gen.pipeline_task_graph(**kwargs)


def test_table1_instance():
    tasks, res = gen.table1_instance(8.0, seed=3)
    assert isinstance(tasks, TaskGraph) and isinstance(res, ResourceGraph)
    assert 25 <= tasks.n <= 100
    assert res.n_nodes - res.n_processors == 20
    assert 100 <= res.n_processors <= 200
    t2, r2 = gen.table1_instance(8.0, seed=3)
    assert np.array_equal(tasks.node_weight, t2.node_weight)
    assert np.array_equal(res.links, r2.links)
    t3, _ = gen.table1_instance(8.0, seed=4)
    assert not np.array_equal(tasks.node_weight, t3.node_weight) or tasks.n != t3.n
    assert gen.TABLE1["lan_bandwidth"] == 50.0


# ------------------------------------------------- beyond Table 1 (issue 26)


@pytest.mark.parametrize("speed", [1.5, (1.0, 3.0)])
def test_hierarchical_cluster_structure(speed):
    res = gen.hierarchical_cluster(
        n_racks=3, nodes_per_rack=2, cores_per_node=4, speed=speed, node_bandwidth=7.0, seed=5
    )
    g = as_networkx(res)
    assert nx.is_tree(g)
    assert res.n_nodes == 1 + 3 * (1 + 2 * (1 + 4)) and res.n_processors == 24
    # every core hangs off its node router by a fast link; a router's uplink is slower
    for p in res.processors.tolist():
        (router,) = list(g.neighbors(p))
        assert g.edges[p, router]["bandwidth"] == 100.0
        assert not res.is_processor[router]
        cores = [c for c in g.neighbors(router) if res.is_processor[c]]
        assert len(cores) == 4 and len({res.capacity[c] for c in cores}) == 1  # one speed
        uplinks = [g.edges[router, x]["bandwidth"] for x in g.neighbors(router) if x not in cores]
        assert uplinks == [7.0]
    speeds = set(res.capacity[res.processors].tolist())
    if isinstance(speed, tuple):
        assert len(speeds) == 6 and min(speeds) >= 1.0 and max(speeds) <= 3.0
    else:
        assert speeds == {1.5}
    again = gen.hierarchical_cluster(
        n_racks=3, nodes_per_rack=2, cores_per_node=4, speed=speed, node_bandwidth=7.0, seed=5
    )
    np.testing.assert_array_equal(res.capacity, again.capacity)


@pytest.mark.parametrize("shape", [(1, 1), (3, 4), (5, 1), (2, 3, 4), (4, 4, 4)])
def test_stencil_task_graph_is_the_grid(shape):
    tasks = gen.stencil_task_graph(shape, compute=(1.0, 2.0), volume=(1.0, 5.0), seed=1)
    assert tasks.n == int(np.prod(shape)) and not tasks.directed
    ref = nx.grid_graph(dim=list(reversed(shape)))  # node tuples in C order of `shape`
    s, t, vol = tasks.edges()
    ours = {(int(a), int(b)) for a, b in zip(s, t)}
    flat = {node: i for i, node in enumerate(sorted(ref.nodes))}
    theirs = {tuple(sorted((flat[u], flat[v]))) for u, v in ref.edges}
    assert ours == theirs
    assert np.all((vol >= 1.0) & (vol <= 5.0))
    assert np.all((tasks.node_weight >= 1.0) & (tasks.node_weight <= 2.0))


def test_geometric_task_graph_is_geometric_and_seeded():
    a = gen.geometric_task_graph((150, 2000), seed=3)
    b = gen.geometric_task_graph((150, 2000), seed=3)
    assert 150 <= a.n <= 2000 and not a.directed
    np.testing.assert_array_equal(a.node_weight, b.node_weight)
    np.testing.assert_array_equal(a.indices, b.indices)
    # the expected degree is about `degree` away from the border
    mean_deg = 2 * a.n_edges / a.n
    assert 5.0 < mean_deg < 9.0
    c = gen.geometric_task_graph(500, degree=16.0, seed=3)
    assert 2 * c.n_edges / c.n > 11.0


def test_new_generators_refuse_bad_arguments():
    with pytest.raises(ValueError, match="n_racks"):
        gen.hierarchical_cluster(n_racks=0)
    with pytest.raises(TypeError, match="cores_per_node"):
        gen.hierarchical_cluster(cores_per_node=2.5)
    with pytest.raises(ValueError, match="node_bandwidth"):
        gen.hierarchical_cluster(node_bandwidth=0.0)
    with pytest.raises(ValueError, match="speed"):
        gen.hierarchical_cluster(speed=(3.0, 1.0))
    with pytest.raises(ValueError, match="shape"):
        gen.stencil_task_graph((4,))
    with pytest.raises(ValueError, match="shape"):
        gen.stencil_task_graph((4, 0))
    with pytest.raises(ValueError, match="volume"):
        gen.stencil_task_graph((4, 4), volume=-1.0)
    with pytest.raises(ValueError, match="n_tasks"):
        gen.geometric_task_graph(0)
    with pytest.raises(ValueError, match="degree"):
        gen.geometric_task_graph(100, degree=0.0)
