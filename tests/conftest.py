"""Fixtures every family's tests share: small instances of each family and files of them.

Hypothesis runs without its example database, so no failing example saved on one machine
or xdist worker changes what another runs (``.hypothesis/`` still holds a cache that ignores
itself); ``HYPOTHESIS_PROFILE=dev`` keeps the database for local shrinking sessions.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import settings

from coalloc import ctaap, taskmap
from coalloc.ctaap.generators import random_instance
from coalloc.taskmap.io import write_instance as write_taskmap_instance
from coalloc.taskmap.io import write_resource_graph, write_task_graph

settings.register_profile("default", database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


# ------------------------------------------------------------------------------- CTAAP


@pytest.fixture
def ctaap_small():
    """A random CTAAP instance: 12 tasks, 3 clusters, half of the pairs communicating."""
    return ctaap.Instance(*random_instance(12, 3, edge_probability=0.5, seed=3))


@pytest.fixture
def ctaap_tiny():
    """A hand-made CTAAP instance small enough to check by hand.

    Four tasks in two communicating pairs ``{0, 1}`` (needs 5) and ``{2, 3}`` (needs 1);
    cluster 0 has 2 fast machines and intra bandwidth 10, cluster 1 has 3 slow machines,
    intra bandwidth 1 and 2 towards cluster 0. Task 0 needs a fast machine. The optimum
    places all four: {0, 1} on cluster 0, {2, 3} on cluster 1.
    """
    bw = np.zeros((4, 4))
    bw[0, 1] = bw[1, 0] = 5.0
    bw[2, 3] = bw[3, 2] = 1.0
    request = ctaap.Request({"cpu": [4.0, 1.0, 1.0, 1.0]}, bw)
    offer = ctaap.Offer({"cpu": [4.0, 2.0]}, [2, 3], [[10.0, 2.0], [2.0, 1.0]])
    return ctaap.Instance(request, offer)


@pytest.fixture
def ctaap_file(tmp_path, ctaap_small):
    """``ctaap_small`` written as a ``coalloc.instance`` file."""
    path = tmp_path / "ctaap.json"
    ctaap.write_instance(path, *ctaap_small)
    return path


# ------------------------------------------------------------------------- task mapping


@pytest.fixture
def taskmap_small():
    """Two groups of three chatty tasks on a star: a router and four processors."""
    comm = np.zeros((6, 6))
    comm[:3, :3] = comm[3:, 3:] = 4.0
    comm[2, 3] = comm[3, 2] = 0.5
    np.fill_diagonal(comm, 0)
    tasks = taskmap.TaskGraph([1, 1, 1, 2, 2, 2], comm)
    resources = taskmap.ResourceGraph.from_edges(
        [0, 3, 3, 5, 5], [[0, 1], [0, 2], [0, 3], [0, 4]], [10, 10, 20, 20]
    )
    return taskmap.Instance(tasks, resources)


@pytest.fixture
def taskmap_tiny():
    """Three tasks on a path of three processors (small enough for the exact MILP)."""
    tasks = taskmap.TaskGraph([2.0, 1.0, 1.0], [[0, 3, 0], [3, 0, 1], [0, 1, 0]])
    resources = taskmap.ResourceGraph.from_edges([2.0, 1.0, 2.0], [[0, 1], [1, 2]], [4.0, 2.0])
    return taskmap.Instance(tasks, resources)


@pytest.fixture
def taskmap_file(tmp_path, taskmap_small):
    """``taskmap_small`` written as one ``coalloc.taskmap.instance`` file."""
    path = tmp_path / "taskmap.json"
    write_taskmap_instance(path, *taskmap_small)
    return path


@pytest.fixture
def taskmap_graph_files(tmp_path, taskmap_small):
    """``taskmap_small`` as a task-graph file and a resource-graph file."""
    tp, rp = tmp_path / "tasks.json", tmp_path / "resources.json"
    write_task_graph(tp, taskmap_small.task_graph)
    write_resource_graph(rp, taskmap_small.resource_graph)
    return tp, rp


# ------------------------------------------------------------------------- load sharing


@pytest.fixture
def loadshare_tiny():
    """Three nodes, five jobs (small enough for the exact MILP)."""
    from coalloc import loadshare

    return loadshare.Instance(
        loadshare.LoadSharingProblem([5.0, 5.0, 4.0], [4.0, 3.0, 3.0, 2.0, 1.0], [0, 0, 0, 1, 1])
    )


# ------------------------------------------------------------------------ testbed mapping

TESTBED_PTOP = """\
node sw0 switch:1 *lan:*
node sw1 switch:1 *lan:*
node pc1 pc:1 pc3000:1 - fast:0.2 ?+mem:2048
node pc2 pc:1 pc3000:1 - fast:0.2 ?+mem:2048
node pc3 pc:1 pc850:1 - ?+mem:512
node pc4 pc:1 pc850:1 - ?+mem:512
link pc1:e0 pc1 sw0 100000 0 0
link pc1:e1 pc1 sw0 100000 0 0
link pc2:e0 pc2 sw0 100000 0 0
link pc3:e0 pc3 sw1 100000 0 0
link pc3:e1 pc3 sw1 100000 0 0
link pc4:e0 pc4 sw1 100000 0 0
link trunk0 sw0 sw1 100000 0 0
"""
TESTBED_TOP = """\
node a pc ?+mem:1024
node b pc
node c pc850
link ab a b 100000 0 0
link bc b c 50000 0 0
"""


@pytest.fixture
def testbed_tiny():
    """Three virtual nodes (one needs 1 GB, one a pc850) on four PCs behind two switches."""
    from coalloc import testbed

    return testbed.Instance(testbed.parse_top(TESTBED_TOP), testbed.parse_ptop(TESTBED_PTOP))


# ----------------------------------------------------------------- collective co-allocation


@pytest.fixture
def collective_tiny():
    """Three nodes, one property; two nodes with 3 cores in total, from t = 0 (feasible)."""
    from coalloc import collective

    pool = collective.ResourcePool.from_slots(
        [[4.0], [2.0], [1.0]], [[[1.0, 0.0]], [[0.0, 0.0]], [[0.0, 1.0]]], 300, ["cores"]
    )
    request = collective.CollectiveRequest(600, 2, 0, 1200, {"cores": 0.5}, {"cores": 3.0})
    return collective.Instance(request, pool)
