"""The ``coalloc`` command's family groups, its top-level aliases, and mixed-family batches."""

import json

import numpy as np
import pytest

from coalloc import BatchError, ctaap, solve_many, taskmap
from coalloc.batch import instance_seed
from coalloc.cli import main
from coalloc.taskmap.io import read_instance as read_taskmap_instance
from coalloc.taskmap.io import write_instance as write_taskmap_instance


def lines_of(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# ------------------------------------------------------------------------------------ ctaap


def test_ctaap_generate_solve_verify(tmp_path, capsys):
    inst, res = tmp_path / "i.json", tmp_path / "r.json"
    args = ["ctaap", "generate", "fig2", "--range-factor", "2", "--seed", "5", "-o", str(inst)]
    assert main(args) == 0
    assert f"wrote fig2 instance (50 tasks, 5 clusters) to {inst}" in capsys.readouterr().out
    request, offer = ctaap.read_instance(inst)
    expected = ctaap.solve(request, offer, "ctaap", seed=3)
    assert main(["ctaap", "solve", str(inst), "--seed", "3", "-o", str(res)]) == 0
    out = capsys.readouterr().out
    assert f"ctaap allocated {expected.n_allocated} of 50 tasks on 5 clusters" in out
    data = json.loads(res.read_text())
    assert data["assignment"] == expected.assignment.tolist()
    assert data["verify"]["feasible"] and data["seed"] == 3
    assert main(["ctaap", "verify", str(inst), str(res)]) == 0
    assert "feasible" in capsys.readouterr().out
    # A broken result file is caught by verify.
    data["assignment"] = [0] * 50
    data["n_allocated"] = 50  # consistent counts, so the file reaches verify
    res.write_text(json.dumps(data))
    assert main(["ctaap", "verify", str(inst), str(res)]) == 1
    assert "INFEASIBLE" in capsys.readouterr().out


def test_ctaap_solve_batch(tmp_path, capsys):
    files = []
    for k in range(3):
        path = tmp_path / f"c{k}.json"
        assert main(["ctaap", "generate", "fig2", "--seed", str(k), "-o", str(path)]) == 0
        files.append(path)
    out = tmp_path / "out.jsonl"
    args = ["ctaap", "solve-batch", *map(str, files), "-j", "2", "--seed", "9", "--bound"]
    assert main([*args, "--no-progress", "-o", str(out)]) == 0
    assert "solved 3/3 instances (0 failed)" in capsys.readouterr().out
    lines = lines_of(out)
    assert [line["index"] for line in lines] == [0, 1, 2]
    for i, line in enumerate(lines):
        request, offer = ctaap.read_instance(files[i])
        alone = ctaap.solve(request, offer, seed=instance_seed(9, i))
        assert line["ok"] and line["verify"]["feasible"] and line["file"] == str(files[i])
        assert line["assignment"] == alone.assignment.tolist()
        assert line["seed"] == instance_seed(9, i) and "bound" in line
        assert ctaap.verify(request, offer, line["assignment"]).feasible


# ---------------------------------------------------------------------------------- taskmap


def test_taskmap_generate_then_solve_batch(tmp_path, capsys):
    files = []
    for k, c in enumerate((1, 4)):
        path = tmp_path / f"t{k}.json"
        args = ["taskmap", "generate", "--c", str(c), "--seed", str(k), "-o", str(path)]
        assert main(args) == 0
        assert "wrote task-mapping instance (" in capsys.readouterr().out
        files.append(path)
    out = tmp_path / "maps.jsonl"
    args = ["taskmap", "solve-batch", *map(str, files), "--method", "base", "--seed", "4"]
    assert main([*args, "--no-progress", "-o", str(out)]) == 0
    assert "solved 2/2 instances (0 failed)" in capsys.readouterr().out
    lines = lines_of(out)
    assert len(lines) == 2
    for i, line in enumerate(lines):
        tasks, resources = read_taskmap_instance(files[i])
        report = taskmap.verify_mapping(
            tasks, resources, line["mapping"], claimed=line["max_occupancy"]
        )
        assert report.ok, report.problems
        assert line["ok"] and line["verify"]["ok"] and line["method"] == "base"
        alone = taskmap.solve(tasks, resources, "base", seed=instance_seed(4, i))
        assert line["mapping"] == alone.mapping.tolist()
    # A task-mapping file given to the CTAAP group fails alone, recorded as an error line.
    assert main(["ctaap", "solve-batch", str(files[0]), "--no-progress", "-o", str(out)]) == 1
    (line,) = lines_of(out)
    assert not line["ok"] and line["status"] == "error"
    assert line["error"]["message"] == "a taskmap problem in a batch for family 'ctaap'"


def test_taskmap_map_and_verify(tmp_path, capsys, taskmap_small, taskmap_graph_files):
    tp, rp = taskmap_graph_files
    res = tmp_path / "map.json"
    assert main(["taskmap", "map", str(tp), str(rp), "--seed", "2", "-o", str(res)]) == 0
    out = capsys.readouterr().out
    assert "portfolio mapped 6 tasks" in out and "max occupancy" in out  # the default
    data = taskmap.read_mapping_result(res)
    alone = taskmap_small.solve(seed=2)
    np.testing.assert_array_equal(data["mapping"], alone.mapping)
    assert main(["taskmap", "verify", str(tp), str(rp), str(res)]) == 0
    assert "valid mapping" in capsys.readouterr().out
    raw = json.loads(res.read_text())
    raw["max_occupancy"] = raw["max_occupancy"] * 2 + 1
    res.write_text(json.dumps(raw))
    assert main(["taskmap", "verify", str(tp), str(rp), str(res)]) == 1
    assert "MISMATCH" in capsys.readouterr().out


# ---------------------------------------------------------------------- top-level aliases


def test_demo_output(capsys):
    assert main(["demo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("demo instance: 50 tasks")
    assert "ctaap allocated 13 of 50 tasks on 5 clusters" in lines[1]
    assert "quality: optimal (proven: no allocation places more than 13 tasks)" in lines[2]
    assert "every constraint holds" in lines[1] and "violations" not in lines[1]
    assert main(["ctaap", "demo"]) == 0
    group = capsys.readouterr().out.splitlines()
    assert group[0] == lines[0] and group[1].split(" in ")[0] == lines[1].split(" in ")[0]


def test_top_level_aliases_match_the_groups(tmp_path, capsys, taskmap_graph_files):
    inst, r1, r2 = tmp_path / "i.json", tmp_path / "r1.json", tmp_path / "r2.json"
    assert main(["generate", "fig2", "--seed", "2", "-o", str(inst)]) == 0
    assert main(["solve", str(inst), "--method", "greedy", "-o", str(r1)]) == 0
    assert main(["ctaap", "solve", str(inst), "--method", "greedy", "-o", str(r2)]) == 0
    a, b = json.loads(r1.read_text()), json.loads(r2.read_text())
    assert a["assignment"] == b["assignment"] and a["method"] == "greedy"
    assert main(["verify", str(inst), str(r1)]) == 0
    out = tmp_path / "b.jsonl"
    assert main(["solve-batch", str(inst), str(inst), "--no-progress", "-o", str(out)]) == 0
    assert [line["ok"] for line in lines_of(out)] == [True, True]
    tp, rp = taskmap_graph_files
    m1, m2 = tmp_path / "m1.json", tmp_path / "m2.json"
    assert main(["map", str(tp), str(rp), "--method", "open", "-o", str(m1)]) == 0
    assert main(["taskmap", "map", str(tp), str(rp), "--method", "open", "-o", str(m2)]) == 0
    assert json.loads(m1.read_text())["mapping"] == json.loads(m2.read_text())["mapping"]
    capsys.readouterr()


@pytest.mark.parametrize(
    "argv",
    [["taskmap", "solve"], ["ctaap", "map"], ["taskmap", "demo"], ["verify-mapping"]],
)
def test_commands_stay_in_their_group(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


# ---------------------------------------------------------------------- mixed-family batch


def test_solve_many_over_mixed_families(
    tmp_path, ctaap_small, ctaap_file, taskmap_small, taskmap_tiny
):
    req, off = ctaap.generators.fig2(2, n_tasks=20, seed=8)
    tasks, resources = taskmap_tiny
    tm_file = tmp_path / "tm.json"
    write_taskmap_instance(tm_file, tasks, resources)
    batch = [
        ctaap_small,  # ctaap.Instance
        taskmap_small,  # taskmap.Instance
        (req, off),  # a CTAAP pair
        (tasks, resources),  # a task-mapping pair
        str(ctaap_file),  # a CTAAP file
        tm_file,  # a task-mapping file (path-like)
        tmp_path / "missing.json",
    ]
    alone = [
        ctaap_small,
        taskmap_small,
        ctaap.Instance(req, off),
        taskmap.Instance(tasks, resources),
        ctaap.Instance(*ctaap.read_instance(ctaap_file)),
        taskmap.Instance(*read_taskmap_instance(tm_file)),
    ]
    for kwargs in ({"executor": "serial"}, {"n_jobs": 2, "chunksize": 2}):
        results = solve_many(batch, seed=21, **kwargs)
        assert len(results) == len(batch)
        for i, (inst, result) in enumerate(zip(alone, results)):
            expected = inst.solve(seed=instance_seed(21, i))
            assert type(result) is type(expected), i
            assert result.seed == instance_seed(21, i)
            assert inst.verify(result).ok
            if isinstance(inst, ctaap.Instance):
                np.testing.assert_array_equal(result.assignment, expected.assignment)
            else:
                np.testing.assert_array_equal(result.mapping, expected.mapping)
                assert result.max_occupancy == expected.max_occupancy
        error = results[-1]
        assert isinstance(error, BatchError) and error.index == 6
        assert "missing.json" in str(error)


def test_mixed_batch_with_a_method_of_one_family(ctaap_small, taskmap_small):
    results = solve_many([ctaap_small, taskmap_small], "greedy", executor="serial", seed=1)
    assert results[0].method == "greedy" and results[0].success
    assert isinstance(results[1], BatchError)  # task mapping has no greedy method
    with pytest.raises(ValueError, match="method must be one of"):
        solve_many([ctaap_small], "nope")
    with pytest.raises(ValueError, match="family must be one of"):
        solve_many([ctaap_small], family="knapsack")


def test_output_that_is_an_input_is_refused(tmp_path, capsys):
    from coalloc.cli import main

    inst = tmp_path / "x.json"
    assert main(["ctaap", "generate", "fig2", "--n-tasks", "4", "-o", str(inst)]) == 0
    before = inst.read_bytes()
    assert main(["ctaap", "solve", str(inst), "-o", str(inst)]) == 2
    assert "also an input" in capsys.readouterr().err
    other = tmp_path / "y.json"
    other.write_bytes(before)
    assert main(["ctaap", "solve-batch", str(inst), str(other), "-o", str(other)]) == 2
    assert inst.read_bytes() == before and other.read_bytes() == before


def test_batch_output_is_replaced_only_when_complete(tmp_path, monkeypatch):
    import coalloc.cli._batch as common  # where the runner looks the line up
    from coalloc.cli import main

    inst = tmp_path / "x.json"
    assert main(["ctaap", "generate", "fig2", "--n-tasks", "4", "-o", str(inst)]) == 0
    out = tmp_path / "out.jsonl"
    out.write_text("old\n")

    def broken_line(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(common, "_batch_line", broken_line)
    try:
        main(["ctaap", "solve-batch", str(inst), "-o", str(out), "--no-progress"])
    except KeyboardInterrupt:
        pass
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "x.json"]


def test_solve_batch_takes_a_per_instance_timeout_and_quiet(tmp_path):
    """--timeout reaches solve_many; a generous one changes nothing; --quiet is accepted."""
    from coalloc.ctaap.generators import fig2 as _fig2

    files = []
    for k in range(3):
        req, off = _fig2(1, n_tasks=12, seed=k)
        path = tmp_path / f"i{k}.json"
        ctaap.write_instance(path, req, off)
        files.append(str(path))
    out = tmp_path / "out.jsonl"
    code = main(["ctaap", "solve-batch", *files, "-o", str(out), "--timeout", "60",
                     "--quiet", "-j", "2"])  # fmt: skip
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert code == 0 and [x["ok"] for x in lines] == [True] * 3
    with pytest.raises(SystemExit):
        main(["ctaap", "solve-batch", *files, "-o", str(out), "--timeout", "x"])
