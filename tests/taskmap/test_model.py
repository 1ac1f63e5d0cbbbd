"""Task graph / resource graph model: validation, routes, load and occupancy graphs."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from coalloc.taskmap import (
    OccupancyState,
    ResourceGraph,
    TaskGraph,
    load_graph,
    max_occupancy,
    occupancy_graph,
)
from coalloc.taskmap.verify import verify_mapping


def random_resources(rng, n_nodes=12, extra=6, routers=3):
    """A random connected graph (spanning tree + extra links), the first nodes routers."""
    edges = {(int(rng.integers(0, v)), v) for v in range(1, n_nodes)}
    while len(edges) < n_nodes - 1 + extra:
        u, v = sorted(rng.choice(n_nodes, 2, replace=False).tolist())
        edges.add((u, v))
    edges = np.array(sorted(edges))
    cap = rng.uniform(1, 5, n_nodes)
    cap[:routers] = 0
    bw = rng.uniform(1, 10, len(edges))
    return ResourceGraph.from_edges(cap, edges, bw)


def random_tasks(rng, n=15, density=0.3, directed=False):
    w = rng.uniform(0.5, 3, n)
    c = rng.uniform(0, 4, (n, n)) * (rng.random((n, n)) < density)
    np.fill_diagonal(c, 0)
    if not directed:
        c = np.triu(c, 1)
        c = c + c.T
    return TaskGraph(w, c, directed=directed)


def brute_force_loads(tasks_w, comm, directed, edges, bw, cap, mapping, paths):
    """Loads from an explicit list of node paths (networkx), the definition of section 3.2."""
    node = np.zeros(len(cap))
    link = np.zeros(len(edges))
    index = {}
    for k, (u, v) in enumerate(edges):
        index[(u, v)] = index[(v, u)] = k
    for t, p in enumerate(mapping):
        node[p] += tasks_w[t]
    n = len(tasks_w)
    for s in range(n):
        for t in range(n):
            if comm[s, t] == 0 or (not directed and s > t) or s == t:
                continue
            path = paths[mapping[s]][mapping[t]]
            for u, v in zip(path[:-1], path[1:]):
                link[index[(u, v)]] += comm[s, t]
    return node, link


# ---------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------


def test_task_graph_validation():
    with pytest.raises(ValueError, match="node_weight"):
        TaskGraph([1.0, -1.0])
    with pytest.raises(ValueError, match="node_weight"):
        TaskGraph([1.0, np.nan])
    with pytest.raises(ValueError, match="at least one task"):
        TaskGraph([])
    with pytest.raises(ValueError, match="shape"):
        TaskGraph([1, 2], np.zeros((3, 3)))
    with pytest.raises(ValueError, match="non-negative"):
        TaskGraph([1, 2], [[0, -1], [-1, 0]])
    with pytest.raises(ValueError, match="not symmetric"):
        TaskGraph([1, 2], [[0, 1], [0, 0]], directed=False)
    with pytest.raises(TypeError, match="comm"):
        TaskGraph([1, 2], [["a", "b"], ["c", "d"]])
    with pytest.raises(TypeError, match="directed"):
        TaskGraph([1, 2], directed="yes")


def test_task_graph_arrays_and_no_mutation():
    w = np.array([1.0, 2.0, 3.0])
    c = np.array([[5.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]])
    tg = TaskGraph(w, c)
    assert tg.directed  # asymmetric -> directed
    w[0] = 99
    c[0, 1] = 99
    assert tg.node_weight[0] == 1.0 and tg.comm[0, 1] == 1.0
    assert tg.comm[0, 0] == 0  # diagonal dropped
    indptr, indices, data = tg.undirected_csr()
    pair = sp.csr_matrix((data, indices, indptr), shape=(3, 3)).toarray()
    np.testing.assert_allclose(pair, [[0, 1, 0], [1, 0, 2], [0, 2, 0]])
    with pytest.raises(ValueError):
        tg.node_weight[0] = 3.0
    und = TaskGraph([1, 1], sp.csr_matrix([[0, 2.0], [2.0, 0]]))
    assert not und.directed
    s, t, v = und.edges()
    assert s.tolist() == [0] and t.tolist() == [1] and v.tolist() == [2.0]


def test_resource_graph_validation():
    with pytest.raises(ValueError, match="self-loops"):
        ResourceGraph.from_edges([1, 1], [[0, 0]], [1])
    with pytest.raises(ValueError, match="duplicate"):
        ResourceGraph.from_edges([1, 1], [[0, 1], [1, 0]], [1, 1])
    with pytest.raises(ValueError, match="bandwidth must be positive"):
        ResourceGraph.from_edges([1, 1], [[0, 1]], [0])
    with pytest.raises(ValueError, match="not connected"):
        ResourceGraph.from_edges([1, 1, 1], [[0, 1]], [1])
    with pytest.raises(ValueError, match="node indices"):
        ResourceGraph.from_edges([1, 1], [[0, 2]], [1])
    with pytest.raises(ValueError, match="no processor"):
        ResourceGraph.from_edges([0, 0], [[0, 1]], [1])
    with pytest.raises(ValueError, match="positive capacity"):
        ResourceGraph.from_edges([1, 0], [[0, 1]], [1], is_processor=np.array([True, True]))
    with pytest.raises(ValueError, match="route_length"):
        ResourceGraph([1, 1], [[0, 1]], bandwidth=[1], route_length="fast")
    with pytest.raises(ValueError, match="symmetric"):
        ResourceGraph.from_matrix([1, 1], [[0, 1], [2, 0]])


def test_routers_are_not_processors():
    rg = ResourceGraph.from_edges([0, 2, 3], [[0, 1], [0, 2]], [1, 1])
    assert rg.processors.tolist() == [1, 2]
    tg = TaskGraph([1.0])
    with pytest.raises(ValueError, match="not a processor"):
        load_graph(tg, rg, [0])
    report = verify_mapping(tg, rg, [0])
    assert not report.valid


# ---------------------------------------------------------------------------------------
# routes
# ---------------------------------------------------------------------------------------


def test_routes_are_paths_and_symmetric():
    rng = np.random.default_rng(3)
    for _ in range(5):
        rg = random_resources(rng)
        g = nx.Graph()
        g.add_edges_from(rg.links.tolist())
        hops = dict(nx.all_pairs_shortest_path_length(g))
        for a in rg.processors:
            for b in rg.processors:
                r1, r2 = rg.route(a, b), rg.route(b, a)
                assert sorted(r1.tolist()) == sorted(r2.tolist())
                assert len(r1) == hops[int(a)][int(b)]  # a shortest path by hop count
                nodes = rg.route_nodes(a, b)
                assert nodes[0] == a and nodes[-1] == b
                used = {frozenset(rg.links[k].tolist()) for k in r1}
                assert used == {frozenset(e) for e in zip(nodes[:-1], nodes[1:])}


def test_inverse_bandwidth_routes():
    # triangle: the direct link 0-2 is slow, the detour via 1 is fast
    edges = [[0, 1], [1, 2], [0, 2]]
    bw = [10.0, 10.0, 1.0]
    hops = ResourceGraph.from_edges([1, 1, 1], edges, bw)
    fast = ResourceGraph([1, 1, 1], edges, bandwidth=bw, route_length="inverse_bandwidth")
    assert hops.route(0, 2).tolist() == [2]
    assert sorted(fast.route(0, 2).tolist()) == [0, 1]


# ---------------------------------------------------------------------------------------
# load graph
# ---------------------------------------------------------------------------------------


def test_load_graph_hand_example():
    # path 0 - 1 - 2 - 3, node 1 a router
    rg = ResourceGraph.from_edges([1, 0, 2, 4], [[0, 1], [1, 2], [2, 3]], [1, 2, 4])
    tg = TaskGraph([1, 2, 3], [[0, 1, 0], [1, 0, 2], [0, 2, 0]])
    node, link = load_graph(tg, rg, [0, 3, 2])
    np.testing.assert_allclose(node, [1, 0, 3, 2])
    np.testing.assert_allclose(link, [1, 1, 3])  # pair (0,1) on all links, (1,2) on link 2
    no, lo = occupancy_graph(tg, rg, [0, 3, 2])
    np.testing.assert_allclose(no, [1, 0, 1.5, 0.5])
    np.testing.assert_allclose(lo, [1, 0.5, 0.75])
    occ, b = max_occupancy(tg, rg, [0, 3, 2])
    assert occ == pytest.approx(1.5) and (b.kind, b.index) == ("node", 2)
    # directed: both directions share the links
    dg = TaskGraph([1, 2, 3], [[0, 1, 0], [3, 0, 2], [0, 0, 0]])
    _, link = load_graph(dg, rg, [0, 3, 2])
    np.testing.assert_allclose(link, [4, 4, 6])


@pytest.mark.parametrize("directed", [False, True])
def test_load_graph_matches_brute_force(directed):
    rng = np.random.default_rng(11 + directed)
    for _ in range(6):
        rg = random_resources(rng)
        tg = random_tasks(rng, directed=directed)
        g = nx.Graph()
        g.add_edges_from(rg.links.tolist())
        paths = {int(a): {int(b): rg.route_nodes(a, b) for b in rg.processors}
                 for a in rg.processors}  # fmt: skip
        m = rng.choice(rg.processors, tg.n)
        node, link = load_graph(tg, rg, m)
        bn, bl = brute_force_loads(
            tg.node_weight, tg.comm.toarray(), directed, rg.links.tolist(), rg.bandwidth,
            rg.capacity, m, paths,
        )  # fmt: skip
        np.testing.assert_allclose(node, bn)
        np.testing.assert_allclose(link, bl)
        report = verify_mapping(tg, rg, m, claimed=max_occupancy(tg, rg, m)[0])
        assert report.valid and report.matches
        np.testing.assert_allclose(report.link_load, bl)


def test_occupancy_state_tracks_random_moves():
    rng = np.random.default_rng(5)
    for directed in (False, True):
        rg = random_resources(rng, n_nodes=15)
        tg = random_tasks(rng, n=20, directed=directed)
        st = OccupancyState(tg, rg)
        for step in range(200):
            t = int(rng.integers(tg.n))
            if st.mapping[t] >= 0 and rng.random() < 0.3:
                st.remove(t)
            else:
                st.move(t, int(rng.choice(rg.processors)))
            if step % 20 == 0:
                node, link = load_graph(tg, rg, st.mapping)
                np.testing.assert_allclose(st.node_load, node, atol=1e-9)
                np.testing.assert_allclose(st.link_load, link, atol=1e-9)
        m = st.mapping.copy()
        m[m < 0] = rg.processors[0]
        st2 = OccupancyState(tg, rg, m)
        assert st2.max_occupancy() == pytest.approx(verify_mapping(tg, rg, m).max_occupancy)


def test_verify_detects_wrong_claim():
    rng = np.random.default_rng(2)
    rg = random_resources(rng)
    tg = random_tasks(rng)
    m = rng.choice(rg.processors, tg.n)
    occ, _ = max_occupancy(tg, rg, m)
    assert not verify_mapping(tg, rg, m, claimed=occ * 1.01).matches


def test_from_networkx():
    g = nx.DiGraph()
    g.add_node("a", weight=2.0)
    g.add_node("b", weight=1.0)
    g.add_edge("a", "b", weight=3.0)
    tg = TaskGraph.from_networkx(g)
    assert tg.directed and tg.comm[0, 1] == 3.0 and tg.comm[1, 0] == 0
    u = nx.path_graph(3)
    tu = TaskGraph.from_networkx(u, comm="w", default_comm=2.0)
    assert not tu.directed and tu.comm[1, 0] == 2.0 and tu.n_edges == 2
    r = nx.Graph()
    r.add_node("wan", capacity=0.0)
    r.add_node("p1", capacity=3.0)
    r.add_node("p2", capacity=5.0)
    r.add_edge("wan", "p1", bandwidth=10.0)
    r.add_edge("wan", "p2", bandwidth=20.0)
    rg = ResourceGraph.from_networkx(r)
    assert rg.processors.tolist() == [1, 2] and rg.names == ["wan", "p1", "p2"]
    r.add_edge("p1", "p2")
    with pytest.raises(ValueError, match="bandwidth"):
        ResourceGraph.from_networkx(r)
