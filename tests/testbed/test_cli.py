"""The ``coalloc testbed`` commands: exit 0 on a mapping, 1 without, 2 on bad input."""

from __future__ import annotations

import json

from coalloc.cli import main

PTOP = ("node sw0 switch:1 *lan:*\nnode pc1 pc:1\nnode pc2 pc:1\n"
        "link e1 pc1 sw0 100000 0 0\nlink e2 pc2 sw0 100000 0 0\n")


def _files(tmp_path, top):
    t, p = tmp_path / "x.top", tmp_path / "x.ptop"
    t.write_text(top)
    p.write_text(PTOP)
    return str(t), str(p)


def test_assign_prints_sections_and_verifies(tmp_path, capsys):
    t, p = _files(tmp_path, "node a pc\nnode b pc\nlink l a b 100000 0 0\n")
    for method in ("assign+", "anneal", "exact"):
        assert main(["testbed", "assign", t, p, "--method", method]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[:2] == ["Nodes:", out[1]] and "End Nodes" in out and "End Edges" in out
        edge = out[out.index("Edges:") + 1].split()
        assert edge[:2] == ["l", "intraswitch"] and sorted(edge[2:]) == ["e1", "e2"]


def test_assign_json_and_verify_round_trip(tmp_path, capsys):
    t, p = _files(tmp_path, "node a pc\nnode b pc\nlink l a b 100000 0 0\n")
    assert main(["testbed", "assign", t, p, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verify"]["ok"] and set(doc["mapping"].values()) == {"pc1", "pc2"}
    doc["mapping"] = {"a": "pc1", "b": "pc1"}  # break it: one PC twice
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    assert main(["testbed", "verify", t, p, str(res)]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_no_mapping_exits_1_and_bad_input_exits_2(tmp_path, capsys):
    t, p = _files(tmp_path, "node a pc\nnode b pc\nnode c pc\n")
    assert main(["testbed", "assign", t, p]) == 1
    assert "unassigned: a" in capsys.readouterr().out
    t, p = _files(tmp_path, "node a pc\nlink l a zz 1 0 0\n")
    assert main(["testbed", "assign", t, p]) == 2
    err = capsys.readouterr().err
    assert "x.top:2:" in err and len(err.strip().splitlines()) == 1


def test_simulate_runs(capsys):
    assert main(["testbed", "simulate", "--pcs", "30", "--switches", "2", "--experiments", "8",
                 "--no-progress", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["method"] for r in rows] == ["assign+", "anneal"]
    assert all(0 <= r["failures"] <= 8 for r in rows)
