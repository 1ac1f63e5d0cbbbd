"""Pictures of task mapping: counts drawn match the tree and the mapping, counted apart."""

import numpy as np
import pytest

from coalloc import taskmap
from tests._plots import collections, mpl, png_is_picture, starting  # noqa: F401

pytestmark = pytest.mark.usefixtures("mpl")


@pytest.mark.slow
def test_cluster_tree_draws_every_node_and_edge(tmp_path):
    tasks, resources = taskmap.generators.table1_instance(2.0, seed=1)
    fi = taskmap.flow_injection(tasks, seed=0)
    path = tmp_path / "tree.png"
    fig = taskmap.plot_cluster_tree(fi, path=path)
    drawn = collections(fig)
    tree = fi.tree
    # referee: walk the tree's parent array here
    n_edges = sum(1 for p in tree.parent.tolist() if p >= 0)
    assert len(drawn["tree edge"].get_segments()) == n_edges == tree.n_nodes - 1
    assert len(drawn[f"task ({tasks.n})"].get_offsets()) == tasks.n
    kinds = [c for k, c in drawn.items() if not k.startswith(("task", "tree"))]
    internal = sum(len(c.get_offsets()) for c in kinds)
    assert internal == tree.n_nodes - tasks.n
    # every leaf sits below its parent, and a parent over the middle of its children
    for seg in drawn["tree edge"].get_segments():
        (_, y_parent), (_, y_child) = seg
        assert y_parent == y_child + 1
    png_is_picture(path)


@pytest.mark.slow
def test_mapping_draws_tasks_on_their_processors(tmp_path, taskmap_small):
    tasks, resources = taskmap_small.task_graph, taskmap_small.resource_graph
    result = taskmap.solve(tasks, resources, seed=0)
    path = tmp_path / "map.png"
    fig = taskmap.plot_mapping(tasks, resources, result, path=path)
    drawn = collections(fig)
    assert len(drawn[f"task ({tasks.n})"].get_offsets()) == tasks.n
    assert len(drawn["link"].get_segments()) == resources.n_links
    assert len(drawn["processor"].get_offsets()) == resources.n_processors
    counts = np.bincount(result.mapping, minlength=resources.n_nodes)
    texts = {t.get_gid(): t.get_text() for t in fig.axes[0].texts if t.get_gid()}
    assert texts == {f"tasks-on-{p}": f"{c} task{'s' if c != 1 else ''}"
                     for p, c in enumerate(counts) if c}  # fmt: skip
    _, where = taskmap.max_occupancy(tasks, resources, result.mapping)  # the referee
    starting(drawn, f"bottleneck {where.kind} {where.index}")
    png_is_picture(path)


def test_mapping_refuses_a_mapping_on_a_router(taskmap_small):
    tasks, resources = taskmap_small.task_graph, taskmap_small.resource_graph
    with pytest.raises(ValueError, match="not a processor"):
        taskmap.plot_mapping(tasks, resources, np.zeros(tasks.n, dtype=int))


def test_task_counts_carry_their_unit(taskmap_small):
    """Issue 39: a bare count beside a processor read as its node id; each says "n tasks"."""
    tasks, resources = taskmap_small.task_graph, taskmap_small.resource_graph
    procs = resources.processors
    # a mapping of our own with counts 1, 2 and 3 on three processors (the referee)
    mapping = np.array([procs[0], procs[1], procs[1], procs[2], procs[2], procs[2]])
    fig = taskmap.plot_mapping(tasks, resources, mapping, labels=True)
    texts = {t.get_gid(): t.get_text() for t in fig.axes[0].texts if t.get_gid()}
    want = {f"tasks-on-{procs[0]}": "1 task", f"tasks-on-{procs[1]}": "2 tasks",
            f"tasks-on-{procs[2]}": "3 tasks"}  # fmt: skip
    assert texts == want
    # no count text is a bare number that could be a node name
    names = {t.get_text() for t in fig.axes[0].texts if not t.get_gid()}
    assert not any(t.strip().isdigit() for t in texts.values())
    assert names and not set(texts.values()) & names


def _node_router_of(resources):
    """The referee of the groups of a hierarchical cluster: its nodes come in the order root,
    then per rack its switch, then per node its router followed by its cores, so a core's
    node is the nearest router before it."""
    owner, last = {}, None
    for i in range(resources.n_nodes):
        if resources.is_processor[i]:
            owner[i] = last
        else:
            last = i
    return owner


def test_a_dense_cluster_is_drawn_in_nodes_with_counts_that_fit(tmp_path):
    """Issue 39: 256 cores and thousands of tasks were a blot of dots and overlapping
    counts; the cores of a node are one circle and a count is written only where it fits."""
    g = taskmap.generators
    tasks = g.stencil_task_graph((32, 32))
    resources = g.hierarchical_cluster(n_racks=4, nodes_per_rack=8, cores_per_node=8)
    procs = resources.processors
    assert procs.size == 256 > taskmap.plot.AGGREGATE_ABOVE
    rng = np.random.default_rng(5)
    mapping = procs[rng.integers(0, procs.size, tasks.n)]  # uneven counts per node
    path = tmp_path / "dense.png"
    fig = taskmap.plot_mapping(tasks, resources, mapping, path=path)
    drawn = collections(fig)
    groups = starting(drawn, "group of processors (32;")
    assert len(groups.get_offsets()) == 32
    assert not any(k.startswith("task (") for k in drawn)  # no dot per task
    owner = _node_router_of(resources)
    want = {}
    for t in mapping.tolist():
        want[owner[t]] = want.get(owner[t], 0) + 1
    ax = fig.axes[0]
    texts = {t.get_gid(): t for t in ax.texts if (t.get_gid() or "").startswith("tasks-in-")}
    assert texts, "no count written"
    for gid, text in texts.items():
        k = int(gid.rsplit("-", 1)[1])
        n = want[k]
        assert text.get_text() == f"{n} task{'s' if n != 1 else ''}"
    busiest = max(want, key=lambda k: (want[k], -k))
    assert f"tasks-in-{busiest}" in texts  # the busiest first: never left out
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in ax.texts]
    for i, a in enumerate(boxes):
        assert not any(a.overlaps(b) for b in boxes[i + 1:]), "two labels overlap"
    _, where = taskmap.max_occupancy(tasks, resources, mapping)
    starting(drawn, f"bottleneck {where.kind} {where.index}")
    png_is_picture(path)


def test_groups_climb_to_racks_when_the_nodes_are_too_many():
    g = taskmap.generators
    resources = g.hierarchical_cluster(n_racks=3, nodes_per_rack=30, cores_per_node=2)
    rep = taskmap.plot.aggregate_groups(resources, limit=64)
    owner = _node_router_of(resources)
    procs = resources.processors
    assert np.unique(rep[procs]).size == 3  # 90 nodes > 64: the racks
    # two cores in one node share their group; every group is a rack switch
    assert rep[procs[0]] == rep[procs[1]] and owner[procs[0]] == owner[procs[1]]
    assert not resources.is_processor[np.unique(rep[procs])].any()
    rep = taskmap.plot.aggregate_groups(resources, limit=90)
    assert np.unique(rep[procs]).size == 90
    assert all(rep[p] == owner[p] for p in procs.tolist())


def test_aggregate_false_keeps_every_processor(taskmap_small):
    tasks, resources = taskmap_small.task_graph, taskmap_small.resource_graph
    mapping = taskmap.solve(tasks, resources, "base", seed=0).mapping
    fig = taskmap.plot_mapping(tasks, resources, mapping, aggregate=True)
    assert any(k.startswith("group of processor") for k in collections(fig))
    fig = taskmap.plot_mapping(tasks, resources, mapping, aggregate=False)
    assert len(collections(fig)["processor"].get_offsets()) == resources.n_processors
