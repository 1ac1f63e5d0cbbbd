"""bench/taskmap/heldout.py: the held-back generators make valid instances, the same seed the
same instance, and the default's answer on two small ones passes verify."""

from __future__ import annotations

import math

import numpy as np
import pytest
from bench.taskmap import heldout

import coalloc.taskmap as tm
from coalloc.taskmap.model import ResourceGraph, TaskGraph, check_graphs


def _task_arrays(t: TaskGraph) -> tuple:
    return (t.node_weight, t.indptr, t.indices, t.data, np.asarray(t.directed))


def _res_arrays(r: ResourceGraph) -> tuple:
    return (r.capacity, r.links, r.bandwidth, r.is_processor)


def _same(a: tuple, b: tuple) -> bool:
    return all(x.shape == y.shape and np.array_equal(x, y) for x, y in zip(a, b))


_ALL = heldout.instances()


def test_the_set_covers_its_kinds_and_no_name_repeats():
    kinds = [k for k, _, _ in _ALL]
    assert set(kinds) == set(heldout.KINDS) and len(_ALL) == len(heldout.SPECS) >= 20
    assert len({name for _, name, _ in _ALL}) == len(_ALL)


@pytest.mark.parametrize("kind, name, build", _ALL, ids=[n for _, n, _ in _ALL])
def test_every_instance_is_valid_and_the_same_twice(kind, name, build):
    tasks, res = build()
    check_graphs(tasks, res)  # the model's types; the constructors validated the rest
    assert 200 <= tasks.n <= 3500 and 16 <= res.n_processors <= 256
    assert np.all(res.capacity[res.processors] > 0) and np.all(res.bandwidth > 0)
    # every processor pair routed (a disconnected machine would have raised already)
    assert res.routes_from(int(res.processors[0])).shape[0] == res.n_nodes
    again_t, again_r = build()
    assert _same(_task_arrays(tasks), _task_arrays(again_t))
    assert _same(_res_arrays(res), _res_arrays(again_r))
    hierarchy = getattr(build, "hierarchy", None)
    if hierarchy is not None:  # SharedMap's reading: processors numbered innermost first
        assert math.prod(hierarchy) == res.n_processors
        procs = np.sort(res.processors)
        step, hops = 1, []
        for size in hierarchy:
            hops.append(len(res.route(int(procs[0]), int(procs[step]))))
            step *= size
        assert hops == sorted(hops) and hops[0] == 2


@pytest.mark.parametrize(
    "make",
    [
        lambda s: heldout.delaunay_graph(300, 2, s),
        lambda s: heldout.delaunay_graph(200, 3, s),
        lambda s: heldout.network_graph("ba", 300, 2, seed=s),
        lambda s: heldout.network_graph("ws", 300, 4, 0.1, s),
        lambda s: heldout.network_graph("plc", 300, 2, 0.3, s),
        lambda s: heldout.irregular_stencil((10, 12), s),
        lambda s: heldout.hypercube_graph(6, s),
    ],
)
def test_a_seed_decides_the_task_graph(make):
    a, b, c = make(5), make(5), make(6)
    assert _same(_task_arrays(a), _task_arrays(b))
    assert not _same(_task_arrays(a), _task_arrays(c))


def test_seeded_machines_repeat_and_differ():
    def builds(s):
        return [
            heldout.tree_machine((4, 2, 2), (50.0, 10.0, 5.0), (1.0, 2.0), s),
            heldout.torus_machine((4, 4), 10.0, spread=0.5, seed=s),
            heldout.dragonfly_machine(3, 2, 2, local_bw=5.0, global_bw=2.0, speed=(1, 2), seed=s),
            heldout.star_machine(6, seed=s),
        ]

    for a, b, c in zip(builds(1), builds(1), builds(2)):
        assert _same(_res_arrays(a), _res_arrays(b))
        assert not _same(_res_arrays(a), _res_arrays(c))


def test_the_shapes_are_the_documented_ones():
    """Counts worked out by hand from each generator's definition."""
    k = 4
    fly = heldout.butterfly_graph(k)
    assert fly.directed and fly.n == (k + 1) * 2**k and fly.n_edges == 2 * k * 2**k
    cube = heldout.hypercube_graph(5)
    ip, _, _ = cube.undirected_csr()
    assert cube.n == 32 and set(np.diff(ip).tolist()) == {5}
    pen = heldout.pencil_graph(4, 6)
    ip, _, _ = pen.undirected_csr()
    assert set(np.diff(ip).tolist()) == {4 - 1 + 6 - 1}
    mm = heldout.mm25d_graph(4, 3)  # 2 shifts per task on the torus + 2 pillars of 16
    assert mm.n == 48 and mm.n_edges == 2 * 48 + 2 * 16
    red = heldout.reduction_graph(16, 4)  # 16 leaves, 4 combiners, a root
    assert red.directed and red.n == 21 and red.n_edges == 20
    assert np.array_equal(np.diff(red.indptr), np.r_[np.ones(20), 0])  # one parent each
    sten = heldout.irregular_stencil((5, 5))
    ip, _, _ = sten.undirected_csr()
    assert np.diff(ip).reshape(5, 5)[2, 2] == 8 and sten.n_edges == 2 * 5 * 4 + 2 * 4 * 4
    mesh = heldout.delaunay_graph(100, 2, 3)
    assert 2 * 100 <= mesh.n_edges <= 3 * 100 - 6  # a planar triangulation
    torus = heldout.torus_machine((4, 3, 2), 1.0)  # the side of 2 does not wrap twice
    assert torus.n_links == 4 * 3 * 2 + 4 * 3 * 2 + 4 * 3 * 1
    assert heldout.torus_machine((4, 4), 1.0, wrap=False).n_links == 2 * 4 * 3
    fly_m = heldout.dragonfly_machine(4, 3, 2, local_bw=1.0, global_bw=1.0)
    assert fly_m.n_processors == 24 and fly_m.n_links == 24 + 4 * 3 + 6
    tree = heldout.tree_machine((2, 3, 2), (1.0, 1.0, 1.0))
    assert tree.n_processors == 12 and tree.n_nodes == 1 + 2 + 6 + 12


@pytest.mark.parametrize(
    "tasks, res",
    [
        (heldout.delaunay_graph(150, 2, 9), heldout.tree_machine((4, 2, 2), (50.0, 10.0, 20.0))),
        (
            heldout.butterfly_graph(4),
            heldout.dragonfly_machine(3, 2, 2, local_bw=10.0, global_bw=4.0, speed=(1, 2)),
        ),
    ],
)
def test_the_default_answer_passes_verify(tasks, res):
    r = tm.solve(tasks, res)
    rep = tm.verify_mapping(tasks, res, r.mapping)
    assert rep.valid, rep.problems
    assert rep.max_occupancy == pytest.approx(r.max_occupancy, rel=1e-9)
    assert r.bound is not None and r.max_occupancy >= r.bound * (1 - 1e-9)
    assert r.status in ("optimal", "feasible")
