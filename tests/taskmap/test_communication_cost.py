"""communication_cost against a brute force: every communicating pair's volume times the
length of its networkx path, on random trees (one path between two nodes: the fixed route)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import coalloc.taskmap as tm


def _random_tree_instance(seed: int):
    rng = np.random.default_rng(seed)
    r = int(rng.integers(3, 9))
    links = [(int(rng.integers(0, v)), v) for v in range(1, r)]
    bw = rng.uniform(1.0, 50.0, size=len(links))
    cap = np.where(rng.random(r) < 0.7, rng.uniform(1.0, 4.0, size=r), 0.0)
    cap[-1] = max(cap[-1], 1.0)  # at least one processor
    res = tm.ResourceGraph.from_edges(cap, links, bw)
    n = int(rng.integers(2, 9))
    comm = np.where(rng.random((n, n)) < 0.4, rng.uniform(0.5, 5.0, size=(n, n)), 0.0)
    directed = bool(rng.integers(0, 2))
    if not directed:
        comm = np.triu(comm, 1)
        comm = comm + comm.T
    np.fill_diagonal(comm, 0.0)
    tasks = tm.TaskGraph(rng.uniform(0.5, 2.0, size=n), comm, directed=directed)
    mapping = rng.choice(res.processors, size=n)
    return tasks, res, mapping, links, bw, comm, directed


@pytest.mark.parametrize("seed", range(40))
def test_communication_cost_matches_brute_force(seed):
    tasks, res, mapping, links, bw, comm, directed = _random_tree_instance(seed)
    g = nx.Graph()
    for (u, v), b in zip(links, bw):
        g.add_edge(u, v, inv=1.0 / b)
    expect_inv = expect_hops = 0.0
    n = comm.shape[0]
    for s in range(n):
        for t in range(n):
            if comm[s, t] == 0 or (not directed and t < s):
                continue
            path = nx.shortest_path(g, int(mapping[s]), int(mapping[t]))
            edges = list(zip(path[:-1], path[1:]))
            expect_inv += comm[s, t] * sum(g.edges[e]["inv"] for e in edges)
            expect_hops += comm[s, t] * len(edges)
    got = tm.communication_cost(tasks, res, mapping)
    assert got == pytest.approx(expect_inv, rel=1e-12, abs=1e-12)
    got = tm.communication_cost(tasks, res, mapping, distance="hops")
    assert got == pytest.approx(expect_hops, rel=1e-12, abs=1e-12)


def test_communication_cost_is_zero_on_one_processor_and_rejects_bad_input():
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    assert tm.communication_cost(tasks, res, [1, 1, 1]) == 0.0
    # both directions of the undirected pair (0, 1) count once: 4 over two links of 50
    assert tm.communication_cost(tasks, res, [1, 2, 2]) == pytest.approx(4 * 2 / 50)
    with pytest.raises(ValueError, match="not a processor"):
        tm.communication_cost(tasks, res, [0, 1, 1])
    with pytest.raises(ValueError, match="distance"):
        tm.communication_cost(tasks, res, [1, 1, 1], distance="metres")
