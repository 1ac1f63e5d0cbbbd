"""Strict task-mapping files (issue 15 item 2): mistakes are errors naming file and field."""

import copy

import numpy as np
import pytest

from coalloc._shared.jsonio import InstanceError
from coalloc.taskmap import generators
from coalloc.taskmap.io import (
    instance_from_dict,
    instance_to_dict,
    resource_graph_from_dict,
    task_graph_from_dict,
)


def _instance():
    tasks, resources = generators.table1_instance(1.0, seed=0)
    return instance_to_dict(tasks, resources)


def _edges_graph():
    return {"weights": [1, 2, 3], "comm": {"edges": [[0, 1, 5], [1, 2, 1]]}}


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.__setitem__("wieghts", d.pop("weights")), "t: wieghts: unknown key"),
        (lambda d: d.__setitem__("directed", "false"), "t: directed: expected true or false"),
        (lambda d: d["comm"]["edges"].append([0, 1, 5]), r"t: comm.edges\[2\] = \[0, 1, 5\]"),
        (lambda d: d["comm"]["edges"].append([1, 0, 5]), "gives each pair once"),
        (lambda d: d["comm"]["edges"].append([0, 7, 5]), r"edges\[2\]: task index 7 is not in"),
        (lambda d: d["comm"]["edges"].append([0, 1.5, 5]), r"edges\[2\]\[1\]: expected an integer"),
        (lambda d: d["weights"].__setitem__(0, True), r"t: weights\[0\]: expected a finite number"),
    ],
)
def test_task_graph_mistakes(edit, message):
    d = _edges_graph()
    edit(d)
    with pytest.raises(InstanceError, match=message):
        task_graph_from_dict(d, source="t")


def test_directed_graph_may_have_both_directions():
    d = {**_edges_graph(), "directed": True}
    d["comm"]["edges"].append([1, 0, 5])
    g = task_graph_from_dict(d, source="t")
    assert g.comm[1, 0] == 5 and g.comm[0, 1] == 5


def test_undirected_edges_are_not_doubled():
    g = task_graph_from_dict(_edges_graph(), source="t")
    assert g.comm[0, 1] == 5 and g.comm[1, 0] == 5  # once each way, not 10


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["resources"].__setitem__("capacty", 1), "resources: capacty: unknown key"),
        (lambda d: d["resources"]["links"][0].append(1), r"resources: links\[0\]: expected \["),
        (lambda d: d["resources"].__setitem__("is_processor", "yes"), "is_processor: expected"),
        (lambda d: d.__setitem__("extra", 1), "i: extra: unknown key 'extra'"),
        (lambda d: d.pop("tasks"), "i: tasks: missing"),
    ],
)
def test_instance_mistakes(edit, message):
    d = copy.deepcopy(_instance())
    edit(d)
    with pytest.raises(InstanceError, match=message):
        instance_from_dict(d, source="i")


def test_instance_round_trip_is_exact():
    d = _instance()
    tasks, resources = instance_from_dict(copy.deepcopy(d), source="i")
    assert instance_to_dict(tasks, resources) == d
    again = resource_graph_from_dict(d["resources"], source="r")
    np.testing.assert_array_equal(again.capacity, resources.capacity)
