"""The ``coalloc testbed`` commands: exit 0 on a mapping, 1 without, 2 on bad input."""

from __future__ import annotations

import json

import pytest

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


@pytest.mark.slow
def test_assign_says_how_good_against_the_exact_optimum(tmp_path, capsys):
    from coalloc import testbed
    from coalloc.testbed import generators as g

    top, ptop = g.random_sparse(6, 2, seed=1), g.deterlab(6, 2, seed=0)
    t, p = tmp_path / "e.top", tmp_path / "e.ptop"
    testbed.write_top(t, top)
    testbed.write_ptop(p, ptop)
    assert main(["testbed", "assign", str(t), str(p), "--exact-bound", "20"]) == 0
    out = capsys.readouterr().out.splitlines()
    heur = testbed.assign(top, ptop, "assign+")
    exact = testbed.assign(top, ptop, "exact", time_limit=20)  # the referee
    assert exact.status == "optimal"
    (quality,) = [x for x in out if x.startswith("# quality:")]
    if heur.interswitch_bandwidth == 0:
        assert "no bandwidth crosses switches" in quality
    elif heur.status == "optimal":  # the default's portfolio ran CP-SAT on this small one
        assert heur.interswitch_bandwidth == exact.interswitch_bandwidth
        assert "proven optimal" in quality
    elif heur.interswitch_bandwidth <= exact.interswitch_bandwidth:
        assert f"equals the exact optimum {exact.interswitch_bandwidth:g}" in quality
    else:
        assert f"against the exact optimum {exact.interswitch_bandwidth:g}" in quality
    (trunks,) = [x for x in out if x.startswith("# trunk")]
    loaded = {k for k, v in heur.trunk_load.items() if v > 0}
    assert all(name in trunks for name in loaded)
    assert main(["testbed", "assign", str(t), str(p), "--json", "--exact-bound", "20"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["exact_optimum"] in (None, exact.interswitch_bandwidth)
    if data["interswitch_bandwidth"] > 0:
        assert data["exact_optimum"] == exact.interswitch_bandwidth


def test_assign_prints_the_status_the_result_holds(tmp_path, capsys):
    """Issue 36: the command line prints exactly ``result.status`` (here the JSON of the same
    call is the referee): optimal for a mapping that crosses no switch, no_solution for a
    heuristic that ends without a mapping or a proof, infeasible for a proof."""
    cases = [
        ("node a pc\nnode b pc\nlink l a b 100000 0 0\n", "assign+", 0),
        ("node a pc\nnode b pc\nnode c pc\n", "assign+", 1),  # three PCs for two: proven
        ("node a pc\nnode b pc\nnode c pc\n", "anneal", 1),  # the annealer proves nothing
    ]
    for top, method, code in cases:
        t, p = _files(tmp_path, top)
        assert main(["testbed", "assign", t, p, "--method", method, "--json"]) == code
        status = json.loads(capsys.readouterr().out)["status"]
        assert main(["testbed", "assign", t, p, "--method", method]) == code
        out = capsys.readouterr().out.splitlines()
        assert f"# status: {status}" in out, (method, out)
    assert status == "no_solution"
