"""Issue 39, item 1: the GAP workflow closes from the shell. Every GAP file the package writes
(OR-Library text and coalloc.loadshare.gap JSON) is read back by gap, verify, solve-batch and
plot; generate writes what the suffix says; the objective sense is never silent."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from coalloc.cli import main
from coalloc.loadshare import GapInstance, gap_to_dict, read_gap, verify_gap, write_gap


def _brute(inst: GapInstance, sense: str) -> float:
    """The optimum by enumeration of every assignment (the referee; tiny instances only)."""
    best = None
    for assign in itertools.product(range(inst.m), repeat=inst.n):
        a = np.array(assign)
        used = np.bincount(a, weights=inst.weight[a, np.arange(inst.n)], minlength=inst.m)
        if np.all(used <= inst.capacity):
            value = float(inst.cost[a, np.arange(inst.n)].sum())
            if best is None or (value > best if sense == "max" else value < best):
                best = value
    return best


def _tiny(seed: int) -> GapInstance:
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 10, (2, 6))
    return GapInstance(rng.integers(1, 30, (2, 6)), w, np.floor(0.7 * w.sum(axis=1)).astype(int))


def test_the_issue_workflow_closes(tmp_path, capsys):
    d, out = tmp_path / "d.json", tmp_path / "o.jsonl"
    assert main(["loadshare", "generate", "d", "--agents", "5", "--items", "40", "-o", str(d)]) == 0
    data = json.loads(d.read_text())  # JSON, as the suffix says, with its sense
    assert data["format"] == "coalloc.loadshare.gap" and data["sense"] == "min"
    assert main(["loadshare", "solve-batch", str(d), "-o", str(out), "--quiet"]) == 0
    (line,) = [json.loads(t) for t in out.read_text().splitlines()]
    assert line["ok"] and line["sense"] == "min"
    assert main(["loadshare", "verify", str(d), str(out)]) == 0
    assert "objective" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["g.txt", "g.dat", "g"])
def test_generate_writes_orlibrary_text_for_other_names(tmp_path, name):
    path = tmp_path / name
    assert main(["loadshare", "generate", "c", "--agents", "3", "--items", "7", "--count", "2",
                 "-o", str(path)]) == 0  # fmt: skip
    assert [g.n for g in read_gap(path)] == [7, 7]


def test_several_instances_in_a_json_file_are_refused(tmp_path, capsys):
    path = tmp_path / "g.json"
    argv = ["loadshare", "generate", "c", "--count", "2", "-o", str(path)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds one instance" in err[0] and not path.exists()


def test_a_paper_problem_is_json_only(tmp_path, capsys):
    assert (
        main(["loadshare", "generate", "paper", "--nodes", "8", "-o", str(tmp_path / "p.txt")]) == 2
    )
    assert "*.json" in capsys.readouterr().err


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_sense_is_printed_and_right_for_both_formats(tmp_path, capsys, seed):
    inst = _tiny(seed)
    lo, hi = _brute(inst, "min"), _brute(inst, "max")
    assert lo is not None and lo < hi
    text = tmp_path / "gap1.txt"  # the name of a classical maximisation file
    write_gap(text, inst)
    other = tmp_path / "mine.txt"
    write_gap(other, inst)
    maxed = tmp_path / "maxed.json"
    maxed.write_text(json.dumps(gap_to_dict(GapInstance(inst.cost, inst.weight, inst.capacity,
                                                        sense="max"))))  # fmt: skip
    cases = [
        ([str(text)], f"maximum {hi:g}", "sense max assumed"),
        ([str(other)], f"minimum {lo:g}", "sense min assumed"),
        ([str(maxed)], f"maximum {hi:g}", None),
        ([str(text), "--sense", "min"], f"minimum {lo:g}", None),
        ([str(maxed), "--sense", "min"], f"minimum {lo:g}", "overrides the file's 'max'"),
    ]
    for files, words, note in cases:
        assert main(["loadshare", "gap", *files, "--method", "exact"]) == 0
        captured = capsys.readouterr()
        assert words in captured.out, (files, captured.out)
        if note is None:
            assert "note" not in captured.err
        else:
            assert note in captured.err and len(captured.err.strip().splitlines()) == 1


def test_json_and_text_give_the_same_answer(tmp_path, capsys):
    inst = _tiny(7)
    write_gap(tmp_path / "a.txt", inst)
    (tmp_path / "a.json").write_text(json.dumps(gap_to_dict(inst)))
    rows = []
    for name in ("a.txt", "a.json"):
        out = tmp_path / f"{name}.jsonl"
        assert main(["loadshare", "gap", str(tmp_path / name), "--method", "exact", "--sense",
                     "min", "-o", str(out)]) == 0  # fmt: skip
        rows.append(json.loads(out.read_text()))
    assert rows[0]["objective"] == rows[1]["objective"] == _brute(inst, "min")
    assert rows[0]["sense_from"] == rows[1]["sense_from"] == "option"


def test_format_forces_the_reader(tmp_path, capsys):
    path = tmp_path / "a.txt"
    path.write_text(json.dumps(gap_to_dict(_tiny(1))))
    assert main(["loadshare", "gap", str(path)]) == 0  # JSON by content, whatever the name
    assert main(["loadshare", "gap", str(path), "--format", "orlib"]) == 2
    assert "not an integer" in capsys.readouterr().err


def test_verify_and_batch_read_multi_instance_text(tmp_path, capsys):
    insts = [_tiny(s) for s in (4, 5, 6)]
    path = tmp_path / "gap2.txt"
    write_gap(path, insts)
    out = tmp_path / "o.jsonl"
    assert main(["loadshare", "solve-batch", str(path), "-o", str(out), "--quiet"]) == 0
    assert "sense max assumed" in capsys.readouterr().err
    lines = [json.loads(t) for t in out.read_text().splitlines()]
    assert [row["file"] for row in lines] == [f"{path}#{k}" for k in (1, 2, 3)]
    for row, inst in zip(lines, insts):
        assert row["sense"] == "max"
        assert verify_gap(inst, row["assignment"], claimed=row["objective"]).ok
    assert main(["loadshare", "verify", str(path), str(out)]) == 0
    assert capsys.readouterr().out.count("claimed") == 3
    # a wrong claim is caught for the instance it names
    bad = dict(lines[1], objective=lines[1]["objective"] + 1)
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert main(["loadshare", "verify", str(path), str(tmp_path / "bad.json")]) == 1
    # a line of one instance without its number: the instance is asked for
    (tmp_path / "bare.json").write_text(json.dumps({"assignment": lines[0]["assignment"]}))
    assert main(["loadshare", "verify", str(path), str(tmp_path / "bare.json")]) == 2
    assert "--instance" in capsys.readouterr().err
    assert main(["loadshare", "verify", str(path), str(tmp_path / "bare.json"),
                 "--instance", "1"]) == 0  # fmt: skip


def test_batch_resume_skips_the_instances_of_a_text_file(tmp_path, capsys):
    path = tmp_path / "many.txt"
    write_gap(path, [_tiny(s) for s in (8, 9)])
    out = tmp_path / "o.jsonl"
    argv = ["loadshare", "solve-batch", str(path), "-o", str(out), "--quiet", "--resume"]
    assert main(argv) == 0
    first = out.read_text()
    assert main(argv) == 0
    assert out.read_text() == first and "2 instances already there" in capsys.readouterr().out


def test_plot_draws_a_gap_file(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "g.txt"
    write_gap(path, [_tiny(1), _tiny(2)])
    png = tmp_path / "g.png"
    assert main(["plot", "loadshare", str(path), "--instance", "2", "-o", str(png),
                 "-p", "iterations=200"]) == 0  # fmt: skip
    assert png.stat().st_size > 1000


def test_a_gap_file_given_to_share_names_the_command(tmp_path, capsys):
    path = tmp_path / "g.txt"
    write_gap(path, _tiny(1))
    assert main(["loadshare", "share", str(path)]) == 2
    err = capsys.readouterr().err
    assert "looks like an OR-Library GAP file" in err and "loadshare gap" in err


def test_explain_reads_orlibrary_text_per_instance(tmp_path, capsys):
    path = tmp_path / "two.txt"
    write_gap(path, [_tiny(1), _tiny(2)])
    assert main(["loadshare", "explain", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}#1" in out and f"{path}#2" in out
