"""The link-bound case and referees shared by the layer-move tests in a timed search
(``test_layers_search.py``, ``test_timed_layered.py``)."""

import numpy as np

import coalloc.taskmap as tm
from coalloc.taskmap.generators import hierarchical_cluster, stencil_task_graph
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel
from coalloc.taskmap.refinement import RefineState


def layered_case():
    """12x12 on 9 single-core nodes behind slow uplinks in 3x3 equal blocks: link-bound
    (test_layers_timed.py)."""
    tasks = stencil_task_graph((12, 12))
    res = hierarchical_cluster(n_racks=1, nodes_per_rack=9, cores_per_node=1,
                               node_bandwidth=0.5, rack_bandwidth=100.0)  # fmt: skip
    i, j = np.divmod(np.arange(144), 12)
    return tasks, res, topology(res), TaskLevel.of(tasks), (i // 4) * 3 + (j // 4)


def found(topo, fine, m):
    """A run's answer tuple for positions ``m`` (its maximum, the positions, history)."""
    value = RefineState(topo, fine, m.copy()).maximum()
    return (value, m.copy(), [value], 9, 0)


def verified(tasks, res, topo, m, value):
    """The independent referee: ``m`` verifies with maximum ``value``; that maximum."""
    report = tm.verify_mapping(tasks, res, topo.order_nodes[m], claimed=value)
    assert report.valid and report.matches
    return report.max_occupancy
