"""``coalloc map``: summary line, result file, one-line errors with exit status 2."""

import json

import numpy as np
import pytest

from coalloc import taskmap
from coalloc.cli import main
from coalloc.taskmap import ResourceGraph, TaskGraph, verify_mapping
from coalloc.taskmap.io import (
    read_mapping_result,
    read_resource_graph,
    read_task_graph,
    write_resource_graph,
    write_task_graph,
)


@pytest.fixture
def files(tmp_path):
    comm = np.zeros((6, 6))
    comm[:3, :3] = comm[3:, 3:] = 4.0
    comm[2, 3] = comm[3, 2] = 0.5
    np.fill_diagonal(comm, 0)
    tasks = TaskGraph([1, 1, 1, 2, 2, 2], comm)
    res = ResourceGraph.from_edges(
        [0, 3, 3, 5, 5], [[0, 1], [0, 2], [0, 3], [0, 4]], [10, 10, 20, 20]
    )
    tp, rp = tmp_path / "tasks.json", tmp_path / "res.json"
    write_task_graph(tp, tasks)
    write_resource_graph(rp, res)
    return tasks, res, tp, rp


def test_map_summary_and_output(files, tmp_path, capsys):
    tasks, res, tp, rp = files
    out = tmp_path / "map.json"
    assert main(["map", str(tp), str(rp), "--seed", "1", "-o", str(out), "-v"]) == 0
    text = capsys.readouterr().out
    assert "portfolio mapped 6 tasks" in text and "max occupancy" in text  # the default
    assert "time total" in text
    data = read_mapping_result(out)
    assert data["method"] == "portfolio" and data["seed"] == 1
    report = verify_mapping(tasks, res, data["mapping"], claimed=data["max_occupancy"])
    assert report.valid and report.matches and data["verify"]["matches"]
    assert data["bottleneck"]["kind"] in ("node", "link")


def test_map_params_and_methods(files, capsys):
    _, _, tp, rp = files
    for method in ("base", "base+improve", "open"):
        assert main(["map", str(tp), str(rp), "--method", method]) == 0
    argv = ["--method", "open+improve", "-p", "processor_order=index", "-p", "order=index"]
    assert main(["map", str(tp), str(rp), *argv]) == 0
    assert "open+improve" in capsys.readouterr().out
    assert main(["map", str(tp), str(rp), "-p", "keep=1", "-p", "subsets=false"]) == 0
    assert "portfolio" in capsys.readouterr().out  # the default takes the multilevel's


def test_map_bad_input(files, tmp_path, capsys):
    _, _, tp, rp = files
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"weights": [1, -2]}))
    assert main(["map", str(bad), str(rp)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.json" in err
    assert "weights[1]: expected a finite number >= 0" in err
    bad.write_text(json.dumps({"capacity": [1, 1], "links": [[0, 5, 1]]}))
    assert main(["map", str(tp), str(bad)]) == 2
    assert "links" in capsys.readouterr().err
    bad.write_text("{")
    assert main(["map", str(tp), str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert main(["map", str(tp), str(rp), "-p", "speed=3"]) == 2
    assert "speed" in capsys.readouterr().err
    assert main(["map", str(tp), str(tmp_path / "missing.json")]) == 2
    # too few tasks in the mapping file's task graph vs. resources is not an error: 1 task
    one = tmp_path / "one.json"
    one.write_text(json.dumps({"weights": [1.0]}))
    assert main(["map", str(one), str(rp)]) == 0


def test_io_round_trip(files, tmp_path):
    tasks, res, tp, rp = files
    t2, r2 = read_task_graph(tp), read_resource_graph(rp)
    np.testing.assert_array_equal(t2.comm.toarray(), tasks.comm.toarray())
    np.testing.assert_array_equal(t2.node_weight, tasks.node_weight)
    assert t2.directed == tasks.directed
    np.testing.assert_array_equal(r2.links, res.links)
    np.testing.assert_array_equal(r2.bandwidth, res.bandwidth)
    np.testing.assert_array_equal(r2.is_processor, res.is_processor)
    # directed graphs and dense matrices
    d = TaskGraph([1, 2], [[0, 3], [1, 0]])
    write_task_graph(tmp_path / "d.json", d, comm_format="edges")
    d2 = read_task_graph(tmp_path / "d.json")
    assert d2.directed and d2.comm.toarray().tolist() == [[0, 3], [1, 0]]
    write_task_graph(tmp_path / "d.json", d, comm_format="dense")
    assert read_task_graph(tmp_path / "d.json").comm.toarray().tolist() == [[0, 3], [1, 0]]
    # routers flagged explicitly survive
    r = ResourceGraph.from_edges([2, 3], [[0, 1]], [1], is_processor=np.array([False, True]))
    write_resource_graph(tmp_path / "r.json", r)
    assert read_resource_graph(tmp_path / "r.json").processors.tolist() == [1]


@pytest.mark.slow
def test_cheap_lower_bound_never_exceeds_the_exact_optimum(taskmap_tiny, taskmap_small):
    from coalloc.taskmap.cli import occupancy_lower_bound

    for inst in (taskmap_tiny, taskmap_small):
        exact = taskmap.solve(inst.task_graph, inst.resource_graph, "exact")
        assert exact.status == "optimal"
        bound = occupancy_lower_bound(inst.task_graph, inst.resource_graph)
        assert 0 < bound <= exact.max_occupancy + 1e-9


@pytest.mark.slow
def test_map_prints_quality_and_json(tmp_path, capsys, taskmap_tiny):
    import json as _json

    from coalloc.cli import main
    from coalloc.taskmap.io import write_resource_graph, write_task_graph

    tp, rp = tmp_path / "t.json", tmp_path / "r.json"
    write_task_graph(tp, taskmap_tiny.task_graph)
    write_resource_graph(rp, taskmap_tiny.resource_graph)
    assert main(["map", str(tp), str(rp)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  status: ") and lines[2].startswith("  busiest: ")
    assert main(["map", str(tp), str(rp), "--json"]) == 0
    data = _json.loads(capsys.readouterr().out)
    report = taskmap.verify_mapping(taskmap_tiny.task_graph, taskmap_tiny.resource_graph,
                                    data["mapping"], claimed=data["max_occupancy"])  # fmt: skip
    assert report.valid and report.matches
    # one field set (bound, gap), the printed status is the file's, and the rule holds
    assert "lower_bound" not in data and "bound_gap" not in data
    assert lines[1].split()[1].rstrip(":") == data["status"]
    exact = taskmap.solve(taskmap_tiny.task_graph, taskmap_tiny.resource_graph, "exact")
    assert data["bound"] <= exact.max_occupancy + 1e-9 <= data["max_occupancy"] + 2e-9
    gap = (data["max_occupancy"] - data["bound"]) / data["max_occupancy"]
    assert data["status"] == ("optimal" if gap <= 1e-9 else "feasible")
    assert max(data["node_occupancy"] + data["link_occupancy"]) == data["max_occupancy"]
    assert main(["map", str(tp), str(rp), "--method", "exact"]) == 0
    assert "status: optimal" in capsys.readouterr().out.splitlines()[1]


def test_map_exact_options(files, tmp_path, capsys):
    """--time-limit/--backend reach the exact MILP; without --method exact they are refused."""
    tasks, res, tp, rp = files
    out = tmp_path / "exact.json"
    argv = ["taskmap", "map", str(tp), str(rp), "--method", "exact", "--time-limit", "30"]
    assert main([*argv, "--backend", "highs", "--quiet", "-o", str(out)]) == 0
    data = read_mapping_result(out)
    assert data["params"]["time_limit"] == 30 and data["params"]["solver"] == "highs"
    report = verify_mapping(tasks, res, data["mapping"], claimed=data["max_occupancy"])
    assert report.valid and report.matches
    heuristic = taskmap.solve(tasks, res, "open+improve", seed=0)
    assert data["max_occupancy"] <= heuristic.max_occupancy + 1e-9  # the optimum is no worse
    capsys.readouterr()
    # every method takes --time-limit; --solver is the exact method's only
    assert main(["taskmap", "map", str(tp), str(rp), "--time-limit", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"]["time_limit"] == 5 if data["status"] == "time_limit" else True
    assert verify_mapping(tasks, res, data["mapping"], claimed=data["max_occupancy"]).ok
    assert main(["taskmap", "map", str(tp), str(rp), "--solver", "cbc"]) == 2
    assert "applies to --method exact only" in capsys.readouterr().err


@pytest.mark.slow  # a Table 1 instance read, mapped and verified five times (2-4 s)
def test_generate_then_map_and_verify_the_combined_file(tmp_path, capsys):
    """``taskmap generate`` writes one file with both graphs; ``map`` and ``verify`` read it."""
    inst, out = tmp_path / "tm.json", tmp_path / "map.json"
    assert main(["taskmap", "generate", "--c", "2", "--seed", "3", "-o", str(inst)]) == 0
    capsys.readouterr()
    argv = ["--method", "open", "--seed", "1"]
    assert main(["taskmap", "map", str(inst), *argv, "-o", str(out), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    # Referee: the graphs read by the library's instance reader, the mapping checked there.
    tasks, resources = taskmap.io.read_instance(inst)
    mapping = read_mapping_result(out)["mapping"]
    report = verify_mapping(tasks, resources, mapping, claimed=printed["max_occupancy"])
    assert report.valid and report.matches and len(mapping) == tasks.n
    expected = taskmap.solve(tasks, resources, "open", seed=1)
    assert mapping.tolist() == expected.mapping.tolist()
    # The same graphs written as two files give the same mapping through the two-file form.
    tp, rp = tmp_path / "t.json", tmp_path / "r.json"
    write_task_graph(tp, tasks)
    write_resource_graph(rp, resources)
    assert main(["map", str(tp), str(rp), *argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mapping"] == mapping.tolist()
    # verify takes INSTANCE RESULT as well as TASKS RESOURCES RESULT.
    assert main(["taskmap", "verify", str(inst), str(out)]) == 0
    assert main(["taskmap", "verify", str(tp), str(rp), str(out)]) == 0
    capsys.readouterr()
    assert main(["taskmap", "verify", str(out)]) == 2
    assert "INSTANCE RESULT or TASKS RESOURCES RESULT" in capsys.readouterr().err
    # A lone task graph is not an instance: the error names the format expected.
    assert main(["map", str(tp)]) == 2
    assert "coalloc.taskmap.instance" in capsys.readouterr().err
