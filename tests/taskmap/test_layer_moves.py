"""Layer moves on link-bound mappings (``taskmap.layermoves``; h58edge follow-up) and the
capacity-proportional split of a heterogeneous machine, against independent referees (the
occupancy recomputed by ``verify_mapping``, enumeration)."""

import itertools

import numpy as np
import pytest

from coalloc.taskmap import ResourceGraph, TaskGraph, layermoves, map_multilevel, verify_mapping
from coalloc.taskmap.generators import hierarchical_cluster, stencil_task_graph
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState

from ._brute import brute_force


def _state(tasks, res, nodes_of_task):
    """A RefineState of the mapping that puts task ``i`` on processor position ``m[i]``."""
    topo = topology(res)
    return topo, RefineState(topo, TaskLevel.of(tasks), np.asarray(nodes_of_task))


def _grid_blocks(side, blocks):
    """Processor position of each point of a ``side`` x ``side`` grid cut in ``blocks`` x
    ``blocks`` equal squares (row-major block numbers)."""
    b = side // blocks
    i, j = np.divmod(np.arange(side * side), side)
    return (i // b) * blocks + (j // b)


def test_layer_moves_lower_the_equal_blocks_of_a_link_bound_stencil():
    # 12x12 on 9 single-core nodes behind slow uplinks: the centre block's uplink (16 edges)
    # binds where the corner blocks' carry 8; single moves cannot shift a straight boundary
    tasks = stencil_task_graph((12, 12))
    res = hierarchical_cluster(n_racks=1, nodes_per_rack=9, cores_per_node=1,
                               node_bandwidth=0.5, rack_bandwidth=100.0)  # fmt: skip
    topo, st = _state(tasks, res, _grid_blocks(12, 3))
    before = verify_mapping(tasks, res, topo.order_nodes[st.m]).max_occupancy
    kept = layermoves.layer_refine(topo, res.links, st)
    mapping = topo.order_nodes[st.m]
    report = verify_mapping(tasks, res, mapping, claimed=st.maximum())
    assert report.valid and report.matches
    assert kept > 0
    assert report.max_occupancy < before * (1 - 1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_layer_moves_never_leave_a_higher_maximum(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(x) for x in rng.integers(4, 9, size=int(rng.integers(2, 4))))
    tasks = stencil_task_graph(shape, compute=(0.5, 2.0), volume=(0.5, 2.0), seed=seed)
    res = hierarchical_cluster(n_racks=int(rng.integers(1, 3)), nodes_per_rack=3,
                               cores_per_node=int(rng.integers(1, 3)), speed=(1.0, 3.0),
                               node_bandwidth=float(rng.uniform(0.3, 3.0)),
                               rack_bandwidth=4.0, seed=seed)  # fmt: skip
    p = res.n_processors
    topo, st = _state(tasks, res, rng.integers(0, p, size=tasks.n))
    before = verify_mapping(tasks, res, topo.order_nodes[st.m]).max_occupancy
    layermoves.layer_refine(topo, res.links, st)
    report = verify_mapping(tasks, res, topo.order_nodes[st.m], claimed=st.maximum())
    assert report.valid and report.matches
    assert report.max_occupancy <= before * (1 + 1e-12)


def test_the_mapper_with_layer_moves_verifies_and_is_not_worse_without(monkeypatch):
    tasks = stencil_task_graph((12, 12))
    res = hierarchical_cluster(n_racks=1, nodes_per_rack=9, cores_per_node=2, speed=(1.0, 3.0),
                               node_bandwidth=0.5, rack_bandwidth=100.0, seed=3)  # fmt: skip
    with_layers = map_multilevel(tasks, res, seed=0)
    monkeypatch.setattr(layermoves, "LAYERS", False)
    without = map_multilevel(tasks, res, seed=0)
    for r in (with_layers, without):
        report = verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert report.valid and report.matches
    assert with_layers.max_occupancy <= without.max_occupancy * (1 + 1e-12)


def test_a_fast_node_gets_its_share_the_capacity_split_is_optimal():
    # two single-core nodes of speeds 1 and 3 behind one switch, a chain of 7 unit tasks
    # exchanging little: the optimum (enumeration) puts 5 tasks on the fast node (5/3);
    # every split by task count (3-4 or 4-3) has at least 3 on the slow one
    res = ResourceGraph([0.0, 1.0, 3.0], [[0, 1], [0, 2]], bandwidth=[10.0, 10.0],
                        is_processor=[False, True, True])  # fmt: skip
    n = 7
    comm = np.zeros((n, n))
    for i in range(n - 1):
        comm[i, i + 1] = comm[i + 1, i] = 0.1
    tasks = TaskGraph(np.ones(n), comm)
    best = brute_force(tasks, res)
    even = min(
        verify_mapping(tasks, res, np.array(m)).max_occupancy
        for m in itertools.product([1, 2], repeat=n)
        if abs(sum(x == 2 for x in m) - n / 2) < 1
    )
    assert best < even * (1 - 1e-9)  # the capacity-proportional split is provably better
    r = map_multilevel(tasks, res, seed=0)
    report = verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
    assert report.valid and report.matches
    assert r.max_occupancy == pytest.approx(best, rel=1e-9)
    assert int(np.sum(np.asarray(r.mapping) == 2)) == 5
