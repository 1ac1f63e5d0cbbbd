"""The compiled loop of the paper's elementary move (issue 40, h64cpu): ``_occupancy.fill_prefix``
against its twin bit for bit, against a from-scratch referee, and ``Engine.map_tasks``
with the knob on and off."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import _occupancy as K
from coalloc.taskmap import engine
from coalloc.taskmap._reference import occupancy as R
from coalloc.taskmap.occupancy import pairs_of
from coalloc.taskmap.routing import route_table

from .test_occupancy import random_resources, random_tasks, twin_pairs, twin_routes

seeds = st.integers(0, 2**32 - 1)


def _case(rng, max_tasks=16):
    """A resource graph, a task graph, a partial mapping, a processor q and the arguments
    of ``fill_prefix`` as the engine computes them (``open_vol`` from scratch)."""
    res = random_resources(rng)
    tasks = random_tasks(rng, max_tasks)
    m = rng.choice(res.processors, tasks.n).astype(np.int64)
    m[rng.random(tasks.n) < rng.uniform(0.3, 1.0)] = -1
    q = int(rng.choice(res.processors))
    node, link = tm.load_graph(tasks, res, m)
    unmapped = rng.permutation(np.flatnonzero(m < 0)).astype(np.int64)
    ip, ix, pw = tasks.undirected_csr()
    open_vol = 0.0
    for y in np.flatnonzero(m == q):
        nb = ix[ip[y] : ip[y + 1]]
        open_vol += float(pw[ip[y] : ip[y + 1]][m[nb] < 0].sum())
    inv_cap = np.zeros(res.n_nodes)
    np.divide(1.0, res.capacity, out=inv_cap, where=res.is_processor)
    state = tm.OccupancyState(tasks, res, m)
    args = dict(
        unmapped=unmapped, q=q, inv_cq=float(inv_cap[q]),
        cap_q=float(rng.choice([0.0, 1.0, 7.5])), cur=float(state.max_occupancy()),
        rest=float(tasks.node_weight[unmapped].sum()), inv_bw=1.0 / res.bandwidth,
        open_metric=bool(rng.random() < 0.6), open_vol=open_vol,
        adj=float(res.adjacent_bandwidth[q]),
        u=float(np.nan if rng.random() < 0.5 else rng.uniform(0.1, 3.0)),
        early_exit=bool(rng.random() < 0.5), tie=1e-12,
    )  # fmt: skip
    return res, tasks, m, node, link, args


@settings(max_examples=120, deadline=None)
@given(seeds, st.sampled_from([16, 40]))
def test_fill_prefix_matches_its_twin_bit_for_bit(seed, max_tasks):
    rng = np.random.default_rng(seed)
    res, tasks, m, node, link, args = _case(rng, max_tasks)
    got_s, want_s = [m.copy(), node.copy(), link.copy()], [m.copy(), node.copy(), link.copy()]
    got_c, want_c = np.zeros(1, np.int64), np.zeros(1, np.int64)
    got = K.fill_prefix(pairs_of(tasks), route_table(res).kernel, *got_s, **args, poll=None,
                        count=got_c)  # fmt: skip
    want = R.fill_prefix(twin_pairs(tasks), twin_routes(res), *want_s, **args, poll=None,
                         count=want_c)  # fmt: skip
    assert got == want and got_c[0] == want_c[0]
    for x, y in zip(got_s, want_s):
        assert x.dtype == y.dtype and np.array_equal(x, y)  # the float loads bit for bit


@settings(max_examples=80, deadline=None)
@given(seeds)
def test_fill_prefix_keeps_the_best_prefix_by_a_from_scratch_referee(seed):
    """No bound, no early exit: the prefix kept is one of least ``M_i`` (the occupancy of
    the partial mapping, the compute left over the capacity after, the open volume over
    the adjacent bandwidth), every value recomputed from scratch; the loads left are those
    of the mapping with that prefix."""
    rng = np.random.default_rng(seed)
    res, tasks, m, node, link, args = _case(rng, 24)
    args.update(u=np.nan, early_exit=False)
    un, q = args["unmapped"], args["q"]
    if not un.shape[0]:
        return
    s = [m.copy(), node.copy(), link.copy()]
    best = K.fill_prefix(pairs_of(tasks), route_table(res).kernel, *s, **args, poll=None,
                         count=np.zeros(1, np.int64))  # fmt: skip
    ip, ix, pw = tasks.undirected_csr()
    values = []
    for k in range(1, un.shape[0] + 1):
        mk = m.copy()
        mk[un[:k]] = q
        occ = tm.max_occupancy(tasks, res, mk)[0] if (mk >= 0).any() else 0.0
        occ = max(occ, args["cur"])
        rest = float(tasks.node_weight[un[k:]].sum())
        comp = 0.0 if k == un.shape[0] else (rest / args["cap_q"] if args["cap_q"] > 0 else np.inf)
        value = max(occ, comp)
        if args["open_metric"]:
            ov = sum(float(pw[ip[y] : ip[y + 1]][mk[ix[ip[y] : ip[y + 1]]] < 0].sum())
                     for y in np.flatnonzero(mk == q))  # fmt: skip
            if ov > 1e-9:
                value = max(value, ov / args["adj"] if args["adj"] > 0 else np.inf)
        values.append(value)
    assert 1 <= best <= un.shape[0]
    low = min(values)
    assert values[best - 1] <= low * (1 + 1e-9) + 1e-12 or values[best - 1] == low
    want = m.copy()
    want[un[:best]] = q
    assert np.array_equal(s[0], want)
    n2, l2 = tm.load_graph(tasks, res, want)
    assert np.allclose(s[1], n2, atol=1e-9) and np.allclose(s[2], l2, atol=1e-9)


def test_a_poll_that_raises_leaves_the_count_of_the_tasks_placed():
    rng = np.random.default_rng(3)
    res = tm.generators.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2)
    tasks = tm.TaskGraph(rng.random(150) + 0.1, np.zeros((150, 150)))
    for mod, pairs, routes in ((K, pairs_of(tasks), route_table(res).kernel),
                               (R, twin_pairs(tasks), twin_routes(res))):  # fmt: skip
        m = np.full(150, -1, dtype=np.int64)
        node, link = np.zeros(res.n_nodes), np.zeros(res.n_links)
        calls, count = [], np.zeros(1, np.int64)

        def poll(calls=calls):
            calls.append(1)
            if len(calls) == 2:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            mod.fill_prefix(pairs, routes, m, node, link, np.arange(150), int(res.processors[0]),
                            1.0, 100.0, 0.0, float(tasks.node_weight.sum()), 1.0 / res.bandwidth,
                            False, 0.0, 1.0, np.nan, False, 1e-12, poll, count)  # fmt: skip
        assert count[0] == 64 and (m >= 0).sum() == 64


def test_fill_prefix_refuses_bad_arguments_like_its_twin():
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    for mod, pairs, routes in ((K, pairs_of(tasks), route_table(res).kernel),
                               (R, twin_pairs(tasks), twin_routes(res))):  # fmt: skip
        for un, q in (([0, 0], 1), ([1, 5], 1), ([2], 1), ([0], 0)):
            m = np.array([-1, -1, 2], dtype=np.int64)
            with pytest.raises(ValueError):
                mod.fill_prefix(pairs, routes, m, np.zeros(3), np.zeros(2), np.array(un), q, 1.0,
                                1.0, 0.0, 1.0, np.ones(2), True, 0.0, 1.0, np.nan, True, 1e-12,
                                None, np.zeros(1, np.int64))  # fmt: skip


@pytest.mark.parametrize("method", ["base", "open", "open+improve", "base+improve"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_map_tasks_is_the_same_with_the_kernel_on_and_off(monkeypatch, method, seed):
    res = tm.generators.internet_resource_graph(n_wan=3, n_lan=4, seed=seed)
    tasks = tm.generators.pipeline_task_graph(n_clusters=5, c=4.0, seed=seed)
    out = {}
    for on in (False, True):
        monkeypatch.setattr(engine, "FILL_KERNEL", on)
        r = tm.map_tasks(tasks, res, method=method, seed=seed)
        out[on] = (r.mapping.tobytes(), r.max_occupancy)
    assert out[False] == out[True]
