"""A timed call stopped before the multilevel mapper's quick start still returns a mapping
(h56sets follow-up, issue 40): every task on the processor of the largest capacity, offered
before the topology is built (the held-back ws 1500 k6 onto a dragonfly 9x4x4 het came back
with ``max_occupancy`` None at T = 0.1-0.2 s under load: the deadline passed while the first
call on the resource graph built its routes and topology). The stops here are stand-ins (no
real clock): the topology's build raises the time limit's stop."""

from __future__ import annotations

import numpy as np
import pytest

from coalloc import taskmap
from coalloc._shared import params as budget
from coalloc.taskmap import generators as gen
from coalloc.taskmap import hierarchy, multilevel, starts


def _instance():
    """Six tasks on a star of three processors of capacities 3, 5, 2 (a fresh resource
    graph: no topology cached)."""
    tasks = taskmap.TaskGraph(
        [1.0, 2.0, 1.5, 0.5, 1.0, 2.5],
        [[0, 4, 0, 0, 1, 0], [4, 0, 1, 0, 0, 0], [0, 1, 0, 2, 0, 0],
         [0, 0, 2, 0, 3, 0], [1, 0, 0, 3, 0, 1], [0, 0, 0, 0, 1, 0]],
    )  # fmt: skip
    res = taskmap.ResourceGraph.from_edges(
        [0, 3.0, 5.0, 2.0], [[0, 1], [0, 2], [0, 3]], [10.0, 10.0, 10.0]
    )
    return tasks, res


def _stop(*a, **k):
    raise budget._TimeLimitReached()


def _checked(tasks, res, result):
    """The result's mapping verified, its values those from scratch."""
    assert result.status == "time_limit" and result.mapping is not None
    assert taskmap.Instance(tasks, res).verify(result).ok
    occ, bott = taskmap.max_occupancy(tasks, res, result.mapping)
    assert result.max_occupancy == occ and result.bottleneck == bott
    node, link = taskmap.occupancy_graph(tasks, res, result.mapping)
    assert np.array_equal(result.node_occupancy, node)
    assert np.array_equal(result.link_occupancy, link)


@pytest.mark.parametrize("method", ["portfolio", "multilevel"])
def test_a_stop_in_the_topology_returns_the_first_answer(monkeypatch, method):
    tasks, res = _instance()
    monkeypatch.setattr(multilevel, "topology", _stop)
    result = taskmap.solve(tasks, res, method, time_limit=60.0)
    _checked(tasks, res, result)
    assert set(result.mapping.tolist()) == {2}  # the processor of capacity 5
    assert result.max_occupancy == pytest.approx(8.5 / 5.0, rel=1e-12)
    assert result.iterations["first_answer"] == 1
    assert result.timings["first_answer"] < result.timings["total"]


def test_without_it_the_same_stop_has_no_mapping(monkeypatch):
    """The referee of the test above: the old path (the knob off) has none."""
    tasks, res = _instance()
    monkeypatch.setattr(multilevel, "topology", _stop)
    monkeypatch.setattr(starts, "FIRST_ANSWER", False)
    result = taskmap.solve(tasks, res, time_limit=60.0)
    assert result.status == "time_limit" and result.mapping is None


def test_a_stop_in_the_routes_build_returns_the_first_answer(monkeypatch):
    """The stop inside :class:`~coalloc.taskmap.hierarchy.Topology` (its routes), where the
    real one came; on the Table 1 graph (processors of several capacities)."""
    tasks, res = gen.table1_instance(4, 3)
    assert np.unique(res.capacity[res.processors]).shape[0] > 1
    monkeypatch.setattr(hierarchy, "route_table", _stop)
    result = taskmap.solve(tasks, res, time_limit=60.0)
    _checked(tasks, res, result)
    cap = res.capacity[res.processors]
    assert np.unique(result.mapping).tolist() == [int(res.processors[np.argmax(cap)])]


def test_a_later_stop_keeps_the_better_quick_start(monkeypatch):
    """Once the quick start is offered, it is the answer (never the first one, where
    worse): the stop at the first coarse start."""
    tasks, res = gen.table1_instance(4, 3)
    monkeypatch.setattr(multilevel, "_coarse_starts", _stop)
    result = taskmap.solve(tasks, res, "multilevel", time_limit=60.0, paper_start=0)
    _checked(tasks, res, result)
    assert "first_answer" not in result.iterations
    whole = starts._first_answer(tasks, res, 0, {}, 0.0).max_occupancy
    assert result.max_occupancy < whole


def test_untimed_answers_do_not_change(monkeypatch):
    tasks, res = gen.table1_instance(4, 3)
    a = taskmap.solve(tasks, res, "multilevel", seed=2)
    monkeypatch.setattr(starts, "FIRST_ANSWER", False)
    b = taskmap.solve(tasks, res, "multilevel", seed=2)
    assert np.array_equal(a.mapping, b.mapping) and a.max_occupancy == b.max_occupancy
    assert "first_answer" not in a.iterations
