"""Routes and occupancy updates: the compiled kernels against their twins and the old walk.

Referees: the NumPy twin (bit-identical results), the hop-by-hop route walk the kernel
replaced (identical route tables on many random graphs, ties included), the former
``load_graph`` formula built on that walk (bit-identical loads) and the family's
independent ``verify_mapping``.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import _occupancy as K
from coalloc.taskmap._reference import occupancy as R
from coalloc.taskmap._reference.routing import routes_from_walk
from coalloc.taskmap.occupancy import pairs_of
from coalloc.taskmap.routing import RouteTable, route_table, routes_digest

# ----------------------------------------------------------------------------- instances


def random_resources(rng, max_nodes=24):
    """A connected graph with cycles (equal-length paths: ties), routers and a route kind."""
    r = int(rng.integers(1, max_nodes + 1))
    edges = {(int(rng.integers(0, v)), v) for v in range(1, r)}  # a random tree ...
    for _ in range(int(rng.integers(0, 2 * r + 1))):  # ... plus chords
        u, v = sorted(int(x) for x in rng.integers(0, r, 2))
        if u != v:
            edges.add((u, v))
    edges = np.array(sorted(edges), dtype=np.int64).reshape(-1, 2)
    e = edges.shape[0]
    cap = np.where(rng.random(r) < 0.7, rng.choice([1.0, 2.0, 5.0], r), 0.0)
    cap[int(rng.integers(0, r))] = 3.0  # at least one processor
    bw = rng.choice([1.0, 2.0, 10.0], e) if e else np.zeros(0)
    kind = ["hops", "inverse_bandwidth", "custom"][int(rng.integers(0, 3))]
    length = rng.choice([1.0, 2.0, 3.0], e) if kind == "custom" else kind
    return tm.ResourceGraph(cap, edges, bandwidth=bw, route_length=length)


def random_tasks(rng, max_tasks=16):
    n = int(rng.integers(1, max_tasks + 1))
    w = rng.random((n, n)) * (rng.random((n, n)) < rng.uniform(0.1, 0.7))
    if rng.random() < 0.5:
        w = np.round(w * 4) / 4
    directed = bool(rng.random() < 0.3)
    if not directed:
        w = np.triu(w, 1)
        w = w + w.T
    return tm.TaskGraph(rng.random(n) * 3, w, directed=directed or None)


def random_mapping(rng, tasks, res, partial=True):
    m = rng.choice(res.processors, tasks.n)
    if partial:
        m[rng.random(tasks.n) < 0.3] = -1
    return m.astype(np.int64)


def twin_routes(res):
    table = route_table(res)
    return R.Routes(table.pred, table.pred_link, table.proc_row, res.n_links)


def twin_pairs(tasks):
    return R.Pairs(*tasks.undirected_csr(), tasks.node_weight)


def old_load_graph(tasks, res, mapping):
    """``load_graph`` as it was before the kernel: bincount over the walked route tables."""
    m = np.asarray(mapping)
    mapped = m >= 0
    node = np.bincount(m[mapped], weights=tasks.node_weight[mapped], minlength=res.n_nodes)
    link = np.zeros(res.n_links)
    s, t, vol = tasks.edges()
    keep = mapped[s] & mapped[t] & (m[s] != m[t])
    for a in np.unique(m[s[keep]]):
        sel = keep & (m[s] == a)
        ids = routes_from_walk(res, int(a))[m[t[sel]]]
        w = np.broadcast_to(vol[sel, None], ids.shape)
        ok = ids >= 0
        link += np.bincount(ids[ok], weights=w[ok], minlength=res.n_links)
    return node, link


seeds = st.integers(0, 2**32 - 1)

# ----------------------------------------------------------------------------- routes


@settings(max_examples=60, deadline=None)
@given(seeds)
def test_route_tables_are_those_of_the_former_walk(seed):
    rng = np.random.default_rng(seed)
    res = random_resources(rng)
    rt = route_table(res)
    twin = twin_routes(res)
    for a in res.processors.tolist():
        old = routes_from_walk(res, a)
        assert np.array_equal(res.routes_from(a), old)
        assert np.array_equal(rt.kernel.table(a), old)
        assert np.array_equal(twin.table(a), old)
        for b in res.processors.tolist():
            links = K.Routes.route(rt.kernel, a, b)
            assert np.array_equal(links, twin.route(a, b))
            assert sorted(links.tolist()) == sorted(old[b][old[b] >= 0].tolist())
            assert sorted(links.tolist()) == sorted(rt.route(b, a).tolist())  # both ways


@settings(max_examples=30, deadline=None)
@given(seeds)
def test_a_route_is_a_shortest_path_between_its_ends(seed):
    # referee: the nodes of route_nodes, walked link by link, and SciPy's distances
    from scipy.sparse import csgraph

    rng = np.random.default_rng(seed)
    res = random_resources(rng)
    length = res.route_length
    ln = res.links
    import scipy.sparse as sp

    adj = sp.csr_matrix(
        (np.r_[length, length], (np.r_[ln[:, 0], ln[:, 1]], np.r_[ln[:, 1], ln[:, 0]])),
        shape=(res.n_nodes, res.n_nodes),
    )
    dist = csgraph.shortest_path(adj, directed=False)
    for a in res.processors.tolist():
        for b in res.processors.tolist():
            links = res.route(a, b)
            assert np.isclose(length[links].sum(), dist[a, b])
            nodes = res.route_nodes(a, b)
            assert nodes[0] == a and nodes[-1] == b
            pairs = {tuple(sorted(x)) for x in zip(nodes, nodes[1:])}
            assert pairs == {tuple(sorted(ln[k])) for k in links.tolist()}


def test_equal_graphs_share_one_route_table_and_other_lengths_do_not():
    args = ([0, 3.0, 5.0, 4.0], [[0, 1], [0, 2], [2, 3], [1, 3]], [50.0, 40.0, 20.0, 10.0])
    a = tm.ResourceGraph.from_edges(*args)
    b = tm.ResourceGraph.from_edges(*args)
    c = tm.ResourceGraph.from_edges(*args, route_length="inverse_bandwidth")
    assert routes_digest(a) == routes_digest(b) != routes_digest(c)
    assert route_table(a) is route_table(b)
    assert route_table(c) is not route_table(a)
    # a fresh table (no cache) is equal to the shared one
    fresh = RouteTable(a)
    assert np.array_equal(fresh.pred, route_table(a).pred)
    assert np.array_equal(fresh.pred_link, route_table(a).pred_link)


def test_the_route_table_is_compact():
    res = tm.generators.internet_resource_graph(n_wan=10, n_lan=20, seed=3)
    table = route_table(res)
    assert table.nbytes == 8 * res.n_processors * res.n_nodes
    assert not table.pred.flags.writeable and not table.pred_link.flags.writeable


# ----------------------------------------------------------------------------- occupancy


@settings(max_examples=60, deadline=None)
@given(seeds)
def test_place_remove_move_match_the_twin_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    res = random_resources(rng)
    tasks = random_tasks(rng)
    routes_c, routes_t = route_table(res).kernel, twin_routes(res)
    pairs_c, pairs_t = pairs_of(tasks), twin_pairs(tasks)
    m0 = random_mapping(rng, tasks, res)
    node0, link0 = tm.load_graph(tasks, res, m0)
    sc = [m0.copy(), node0.copy(), link0.copy()]
    st_ = [m0.copy(), node0.copy(), link0.copy()]
    for _ in range(40):
        t = int(rng.integers(0, tasks.n))
        p = int(rng.choice(res.processors))
        if sc[0][t] < 0:
            op = "place" if rng.random() < 0.6 else "move"
        else:
            op = "remove" if rng.random() < 0.5 else "move"
        if op == "place":
            got = K.place(pairs_c, routes_c, *sc, t, p)
            want = R.place(pairs_t, routes_t, *st_, t, p)
            assert np.array_equal(got, want)
        elif op == "remove":
            got = K.remove(pairs_c, routes_c, *sc, t)
            want = R.remove(pairs_t, routes_t, *st_, t)
            assert np.array_equal(got, want)
        else:
            assert K.move(pairs_c, routes_c, *sc, t, p) is None
            assert R.move(pairs_t, routes_t, *st_, t, p) is None
        for x, y in zip(sc, st_):
            assert np.array_equal(x, y)  # bit-identical (also the float loads)
    # and the loads are those of the final mapping (referee: a plain recount)
    node, link = old_load_graph(tasks, res, sc[0])
    assert np.allclose(sc[1], node, atol=1e-9) and np.allclose(sc[2], link, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(seeds)
def test_link_loads_match_the_twin_the_former_formula_and_verify(seed):
    rng = np.random.default_rng(seed)
    res = random_resources(rng)
    tasks = random_tasks(rng)
    m = random_mapping(rng, tasks, res, partial=bool(rng.random() < 0.5))
    s, t, vol = tasks.edges()
    got = K.link_loads(route_table(res).kernel, m, s, t, vol)
    want = R.link_loads(twin_routes(res), m, s, t, vol)
    assert np.array_equal(got, want)
    node, link = tm.load_graph(tasks, res, m)
    old_node, old_link = old_load_graph(tasks, res, m)
    assert np.array_equal(link, old_link) and np.array_equal(node, old_node)
    if (m >= 0).all():
        report = tm.verify_mapping(tasks, res, m)
        assert report.valid
        assert np.allclose(report.link_load, got, rtol=1e-12, atol=1e-12)


def test_occupancy_state_keeps_the_loads_of_its_mapping_across_many_moves():
    rng = np.random.default_rng(5)
    res = tm.generators.internet_resource_graph(n_wan=4, n_lan=5, seed=5)
    tasks = tm.generators.pipeline_task_graph(n_clusters=6, c=4.0, seed=5)
    state = tm.OccupancyState(tasks, res, rng.choice(res.processors, tasks.n))
    for _ in range(500):
        state.move(int(rng.integers(0, tasks.n)), int(rng.choice(res.processors)))
    report = tm.verify_mapping(tasks, res, state.mapping)
    assert np.allclose(state.node_load, report.node_load)
    assert np.allclose(state.link_load, report.link_load)
    assert np.isclose(state.max_occupancy(), report.max_occupancy)


def test_the_kernels_refuse_bad_arguments_like_their_twins():
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    for mod, routes, pairs in (
        (K, route_table(res).kernel, pairs_of(tasks)),
        (R, twin_routes(res), twin_pairs(tasks)),
    ):
        m = np.array([1, -1, 2], dtype=np.int64)
        node, link = np.zeros(3), np.zeros(2)
        with pytest.raises(ValueError, match="is not a processor"):
            mod.place(pairs, routes, m, node, link, 1, 0)  # node 0 is a router
        with pytest.raises(ValueError, match="already mapped"):
            mod.place(pairs, routes, m, node, link, 0, 2)
        with pytest.raises(ValueError, match="not mapped"):
            mod.remove(pairs, routes, m, node, link, 1)
        with pytest.raises(ValueError, match="not in"):
            mod.move(pairs, routes, m, node, link, 3, 1)
        with pytest.raises(TypeError):  # a copy would lose the update: no conversion
            mod.place(pairs, routes, m.astype(np.int32), node, link, 1, 1)
        with pytest.raises(ValueError, match="node_load"):
            mod.place(pairs, routes, m, np.zeros(2), link, 1, 1)
        assert m.tolist() == [1, -1, 2] and node.tolist() == [0.0, 0.0, 0.0]
        with pytest.raises(ValueError, match="processors"):
            mod.link_loads(routes, np.array([0, 1, 2]), np.array([0]), np.array([1]), [1.0])


def test_the_route_kernel_runs_in_threads_without_the_gil_and_agrees():
    res = tm.generators.internet_resource_graph(n_wan=6, n_lan=10, seed=2)
    tasks = tm.generators.pipeline_task_graph(n_clusters=10, seed=2)
    rng = np.random.default_rng(2)
    maps = [rng.choice(res.processors, tasks.n) for _ in range(8)]
    s, t, vol = tasks.edges()
    kern = route_table(res).kernel
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda m: K.link_loads(kern, m, s, t, vol), maps))
    for m, link in zip(maps, got):
        assert np.array_equal(link, R.link_loads(twin_routes(res), m, s, t, vol))


def test_the_views_check_their_tables_once_like_their_twins():
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    rt = route_table(res)
    pred, link, row = rt.pred, rt.pred_link, rt.proc_row
    bad_link = link.copy()
    bad_link[0, 0] = 5  # the root of row 0 (node 1) gets a link
    bad_pred = pred.copy()
    bad_pred[0, 2] = 7
    for Routes, Pairs in ((K.Routes, K.Pairs), (R.Routes, R.Pairs)):
        Routes(pred, link, row, 2)  # the table itself is fine
        with pytest.raises(ValueError, match="pred_link"):
            Routes(pred, bad_link, row, 2)
        with pytest.raises(ValueError, match="pred must hold"):
            Routes(bad_pred, link, row, 2)
        with pytest.raises(ValueError, match="pred must have shape"):
            Routes(pred[:, :2], link, row, 2)
        with pytest.raises(ValueError, match="every row"):
            Routes(pred, link, np.array([-1, 0, -1]), 2)
        Pairs([0, 1, 2], [1, 0], [1.0, 1.0], [1.0, 1.0])
        with pytest.raises(ValueError, match="indices must be in"):
            Pairs([0, 1, 2], [1, 2], [1.0, 1.0], [1.0, 1.0])
        with pytest.raises(ValueError, match="indptr"):
            Pairs([0, 1], [1, 0], [1.0, 1.0], [1.0, 1.0])


@settings(max_examples=40, deadline=None)
@given(seeds)
def test_route_uses_matches_the_twin_and_the_former_tables(seed):
    rng = np.random.default_rng(seed)
    res = random_resources(rng)
    if res.n_links == 0:
        return
    a = rng.choice(res.processors, 30).astype(np.int64)
    b = rng.choice(res.processors, 30).astype(np.int64)
    link = int(rng.integers(0, res.n_links))
    got = K.route_uses(route_table(res).kernel, a, b, link)
    assert np.array_equal(got, R.route_uses(twin_routes(res), a, b, link))
    # referee: the former walk's tables, as remove_bottlenecks read them
    want = [(routes_from_walk(res, int(x))[int(y)] == link).any() for x, y in zip(a, b)]
    assert got.tolist() == want
