"""The ``coalloc loadshare`` command group: round trips and one-line errors with exit 2."""

from __future__ import annotations

import json

import pytest

from coalloc.cli import main
from coalloc.loadshare import read_gap, read_problem, verify_gap, verify_placement


def test_generate_share_verify(tmp_path, capsys):
    prob_path = tmp_path / "p.json"
    res_path = tmp_path / "r.json"
    assert main(["loadshare", "generate", "paper", "--nodes", "60", "-o", str(prob_path)]) == 0
    for method in ("dmcf-gga", "bfd", "fcfs-ff"):
        code = main(["loadshare", "share", str(prob_path), "--method", method,
                     "--coalition-size", "12", "-o", str(res_path)])  # fmt: skip
        assert code == 0
        data = json.loads(res_path.read_text())
        prob = read_problem(prob_path)
        assert verify_placement(prob, data["placement"], claimed=data["throughput"]).ok
    assert main(["loadshare", "verify", str(prob_path), str(res_path)]) == 0
    out = capsys.readouterr().out
    assert "valid placement" in out


@pytest.mark.slow
def test_gap_command(tmp_path, capsys):
    path = tmp_path / "g.txt"
    assert main(["loadshare", "generate", "c", "--agents", "3", "--items", "12", "--count",
                 "2", "-o", str(path)]) == 0  # fmt: skip
    out_path = tmp_path / "out.jsonl"
    assert main(["loadshare", "gap", str(path), "--method", "exact", "-o", str(out_path)]) == 0
    rows = [json.loads(line) for line in out_path.read_text().splitlines()]
    insts = read_gap(path)
    assert len(rows) == 2
    for row, inst in zip(rows, insts):
        assert row["status"] == "optimal"
        assert verify_gap(inst, row["assignment"], claimed=row["objective"]).ok


@pytest.mark.parametrize(
    "argv_tail, words",
    [
        (["gap", "{missing}"], "cannot read"),
        (["gap", "{bad}"], "not an integer"),
        (["share", "{bad}"], "looks like a text file"),
        (["share", "{gap}"], "loadshare gap"),
        (["share", "{prob}", "--method", "fcfs", "-p", "p=0.3"], "takes no parameter"),
        (["gap", "{gap}", "--instance", "5"], "--instance"),
        (["share", "{typo}"], "jobsize"),
        (["share", "{prob}", "-o", "{prob}"], "also an input"),
    ],
)
def test_bad_input_one_line_exit_2(tmp_path, capsys, argv_tail, words):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 2 x\n")
    prob = tmp_path / "p.json"
    prob.write_text(json.dumps({"capacity": [1, 1], "job_size": [1], "job_origin": [0]}))
    gap = tmp_path / "g.txt"
    gap.write_text("1 2 1 1 1 1 5\n")
    typo = tmp_path / "typo.json"
    typo.write_text(json.dumps({"capacity": [1], "jobsize": [1], "job_size": [1],
                                "job_origin": [0]}))  # fmt: skip
    names = {"missing": tmp_path / "none.txt", "bad": bad, "prob": prob, "gap": gap,
             "typo": typo}  # fmt: skip
    argv = ["loadshare"] + [a.format(**names) for a in argv_tail]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_solve_batch_same_answer_serial_and_threads(tmp_path):
    import coalloc
    from coalloc.loadshare import Instance, generators, write_problem

    paths = []
    for k in range(3):
        path = tmp_path / f"p{k}.json"
        write_problem(path, generators.paper_setup(n_nodes=40, seed=k))
        paths.append(path)
    out = tmp_path / "out.jsonl"
    code = main(["loadshare", "solve-batch", *map(str, paths), "--method", "dmcf-gga", "-p",
                 "coalition_size=10", "-o", str(out), "--no-progress", "-j", "2"])  # fmt: skip
    assert code == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert all(line["ok"] and line["verify"]["ok"] for line in lines)
    serial = coalloc.solve_many([Instance(read_problem(p)) for p in paths], "dmcf-gga",
                                executor="serial", seed=0, coalition_size=10)  # fmt: skip
    threads = coalloc.solve_many([str(p) for p in paths], "dmcf-gga", n_jobs=2, seed=0,
                                 coalition_size=10)  # fmt: skip
    for a, b, line in zip(serial, threads, lines):
        assert a.placement.tolist() == b.placement.tolist() == line["placement"]


def test_share_says_how_good_and_json(tmp_path, capsys):
    import numpy as np

    prob_path = tmp_path / "p.json"
    assert main(["loadshare", "generate", "paper", "--nodes", "60", "-o", str(prob_path)]) == 0
    prob = read_problem(prob_path)
    capsys.readouterr()
    assert main(["loadshare", "share", str(prob_path), "--method", "fcfs", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert verify_placement(prob, data["placement"], claimed=data["throughput"]).ok
    # referee: loads and bound from the problem, computed here
    loads = np.zeros(prob.n_nodes)
    np.add.at(loads, np.asarray(data["placement"]), prob.job_size)
    assert np.allclose(data["node_load"], loads)
    bound = min(prob.job_size.sum(), prob.capacity.sum())
    assert data["bound"] == pytest.approx(bound)
    assert main(["loadshare", "share", str(prob_path), "--method", "fcfs"]) == 0
    quality = capsys.readouterr().out.splitlines()[1]
    served = np.minimum(loads, prob.capacity).sum()
    if served >= bound * (1 - 1e-12):
        assert "reaches the bound" in quality
    else:
        assert f"gap {100 * (bound - served) / bound:.3f}% to the bound" in quality


def test_share_exact_options(tmp_path, capsys):
    """--time-limit/--solver reach the exact MILP (``params["solver"]``: issue 36 renamed it);
    --solver without --method exact is refused, --time-limit is taken by every method."""
    prob_path, res_path = tmp_path / "p.json", tmp_path / "r.json"
    assert main(["loadshare", "generate", "paper", "--nodes", "12", "-o", str(prob_path)]) == 0
    code = main(["loadshare", "share", str(prob_path), "--method", "exact", "--time-limit", "20",
                 "--solver", "highs", "--quiet", "-o", str(res_path)])  # fmt: skip
    data = json.loads(res_path.read_text())
    prob = read_problem(prob_path)
    assert code == 0 and verify_placement(prob, data["placement"], claimed=data["throughput"]).ok
    assert data["params"]["time_limit"] == 20 and data["params"]["solver"] == "highs"
    capsys.readouterr()
    assert main(["loadshare", "share", str(prob_path), "--backend", "cbc"]) == 2
    assert "applies to --method exact only" in capsys.readouterr().err
