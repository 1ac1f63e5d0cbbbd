"""Issue 39, item 2 for task mapping: a task graph recognised by its content (JSON, METIS,
Scotch, whatever its name), ``--format`` to force it, and one line that says what a wrong
file looked like and what was expected."""

from __future__ import annotations

import json

import pytest

from coalloc.cli import main
from coalloc.taskmap import ResourceGraph, TaskGraph
from coalloc.taskmap.graphfiles import write_metis_graph
from coalloc.taskmap.io import write_instance, write_resource_graph, write_task_graph

# a triangle in Scotch's source-graph format (0-based, no labels or loads)
SCOTCH = "0\n3 6\n0 000\n2 1 2\n2 0 2\n2 0 1\n"


@pytest.fixture
def graphs(tmp_path):
    tasks = TaskGraph([1.0, 2.0, 1.0], [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    resources = ResourceGraph.from_edges([0, 3.0, 3.0], [[0, 1], [0, 2]], [50.0, 50.0])
    write_metis_graph(tmp_path / "pipe.txt", tasks)  # a METIS graph, not named *.graph
    write_task_graph(tmp_path / "tasks.json", tasks)
    write_resource_graph(tmp_path / "res.json", resources)
    write_instance(tmp_path / "inst.json", tasks, resources)
    (tmp_path / "tri.dat").write_text(SCOTCH)
    return tmp_path


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _mapped(capsys) -> str:
    return capsys.readouterr().out.splitlines()[0].split(": ", 1)[1].split(" in ")[0]


def test_metis_by_content_maps_as_its_json_twin(graphs, capsys):
    t = graphs
    assert main(["taskmap", "map", str(t / "pipe.txt"), str(t / "res.json")]) == 0
    metis = _mapped(capsys)
    assert main(["taskmap", "map", str(t / "tasks.json"), str(t / "res.json")]) == 0
    assert _mapped(capsys) == metis


def test_scotch_by_content(graphs, capsys):
    assert main(["taskmap", "map", str(graphs / "tri.dat"), str(graphs / "res.json")]) == 0
    assert "mapped 3 tasks" in capsys.readouterr().out


def test_a_graph_alone_asks_for_the_resources(graphs, capsys):
    assert main(["taskmap", "map", str(graphs / "pipe.txt")]) == 2
    line = _err(capsys)
    assert f"error: {graphs / 'pipe.txt'} looks like a METIS graph (header '3 3" in line
    assert "taskmap map expects one coalloc.taskmap.instance JSON file" in line
    assert "give the resource graph too" in line


def test_an_instance_where_a_task_graph_belongs(graphs, capsys):
    assert main(["taskmap", "map", str(graphs / "inst.json"), str(graphs / "res.json")]) == 2
    assert "give the instance file alone" in _err(capsys)


def test_format_forces_the_reader(graphs, capsys):
    t = graphs
    assert main(["taskmap", "map", str(t / "pipe.txt"), str(t / "res.json"), "--format",
                 "scotch"]) == 2  # fmt: skip
    assert "pipe.txt:" in _err(capsys)  # the Scotch reader's own message, file and line
    assert main(["taskmap", "map", str(t / "pipe.txt"), str(t / "res.json"), "--format",
                 "metis"]) == 0  # fmt: skip


def test_an_unknown_file_suggests_format(graphs, capsys):
    odd = graphs / "odd.txt"
    odd.write_text("vertices: 3\n")
    assert main(["taskmap", "map", str(odd), str(graphs / "res.json")]) == 2
    line = _err(capsys)
    assert "looks like a text file" in line and "--format metis" in line


def test_resources_of_another_kind(graphs, capsys):
    assert main(["taskmap", "map", str(graphs / "tasks.json"), str(graphs / "pipe.txt")]) == 2
    assert "expects a resource graph" in _err(capsys)


def test_verify_reads_the_same_way(graphs, capsys):
    t = graphs
    out = t / "m.json"
    assert main(["taskmap", "map", str(t / "pipe.txt"), str(t / "res.json"), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["mapping"]
    assert main(["taskmap", "verify", str(t / "pipe.txt"), str(t / "res.json"), str(out)]) == 0
    capsys.readouterr()
