"""Issue 39, item 2 for collective requests: one instance file holds the whole problem
(``coalloc collective solve cinst.json``), pools are recognised by content (JSON, CSV, a
``.npz`` snapshot), and a file of another kind is said for what it is."""

from __future__ import annotations

import json

import pytest

from coalloc.cli import main
from coalloc.collective import io
from coalloc.collective.generators import random_instance


@pytest.fixture
def parts(tmp_path):
    pool, req = random_instance(8, 2, seed=3, load=0.3)
    io.write_pool(tmp_path / "p.json", pool)
    io.write_request(tmp_path / "r.json", req)
    io.write_instance(tmp_path / "i.json", pool, req)
    io.write_pool_snapshot(tmp_path / "p.npz", pool)
    return tmp_path


def _answer(path):
    data = json.loads(path.read_text())
    return data["start"], data["resources"], data["amounts"]


def test_one_instance_file_is_the_whole_problem(parts, capsys):
    t = parts
    assert main(["collective", "solve", str(t / "r.json"), str(t / "p.json"),
                 "-o", str(t / "two.json")]) == 0  # fmt: skip
    assert main(["collective", "solve", str(t / "i.json"), "-o", str(t / "one.json")]) == 0
    assert _answer(t / "one.json") == _answer(t / "two.json")
    # INSTANCE RESULT for verify and plot, as REQUEST POOL RESULT
    assert main(["collective", "verify", str(t / "i.json"), str(t / "one.json")]) == 0
    assert main(["collective", "verify", str(t / "r.json"), str(t / "p.json"),
                 str(t / "one.json")]) == 0  # fmt: skip
    capsys.readouterr()


def test_a_snapshot_pool_is_read_by_content(parts, capsys):
    t = parts
    (t / "pool.bin").write_bytes((t / "p.npz").read_bytes())  # whatever its name
    assert main(["collective", "solve", str(t / "r.json"), str(t / "pool.bin"),
                 "-o", str(t / "snap.json")]) == 0  # fmt: skip
    assert main(["collective", "solve", str(t / "r.json"), str(t / "p.json"),
                 "-o", str(t / "two.json")]) == 0  # fmt: skip
    assert _answer(t / "snap.json") == _answer(t / "two.json")
    capsys.readouterr()


def test_a_request_alone_asks_for_the_pool(parts, capsys):
    assert main(["collective", "solve", str(parts / "r.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "looks like a collective request" in err[0] and "give the other file too" in err[0]


@pytest.mark.parametrize(
    "text, words",
    [
        ("% a ring\n3 3\n2 3\n1 3\n1 2\n", "looks like a METIS graph"),
        ("node a pc\nnode b pc\n", "looks like a virtual topology (.top)"),
        ('{"format": "coalloc.taskmap.instance"}', "format coalloc.taskmap.instance"),
    ],
)
def test_a_file_of_another_kind(parts, capsys, text, words):
    other = parts / "other.txt"
    other.write_text(text)
    assert main(["collective", "solve", str(parts / "r.json"), str(other)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and "collective solve expects" in err[0], err


def test_a_pool_is_written_as_its_suffix_says_and_read_back(parts, capsys):
    t = parts
    assert main(["collective", "generate", "pool", "--nodes", "12", "-o", str(t / "g.npz")]) == 0
    assert (t / "g.npz").read_bytes()[:2] == b"PK"  # a snapshot, not JSON
    assert io.read_pool_snapshot(t / "g.npz").n_nodes == 12
    assert main(["collective", "solve", str(t / "r.json"), str(t / "p.json"),
                 "--reserve-to", str(t / "after.npz")]) == 0  # fmt: skip
    assert main(["collective", "solve", str(t / "r.json"), str(t / "after.npz")]) in (0, 1)
    assert main(["collective", "generate", "pool", "-o", str(t / "g.csv")]) == 2
    assert "not CSV" in capsys.readouterr().err
