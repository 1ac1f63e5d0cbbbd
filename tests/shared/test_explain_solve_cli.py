"""``--explain`` on every family's solve command (issue 38): a "no" is followed by one
sentence naming its conflict, the ``--json`` output carries the explanation under
``explanation`` (checked against its schema, by the package's checker and by jsonschema),
and a "yes" or a run without ``--explain`` prints and carries none.

The referees are independent of the explainers: the named conflict is re-solved by the
family's exact method (or checked by hand on instances small enough to see the answer).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import jsonschema
import pytest

import coalloc.collective as co
import coalloc.ctaap as ct
import coalloc.loadshare as ls
import coalloc.taskmap as tm
import coalloc.testbed as tb
from coalloc._shared.explain import _schema, check_explanation
from coalloc._shared.schema import to_json_schema
from coalloc.cli import main
from coalloc.cli.assign_compat import run
from tests.shared.test_family import random_instance, to_dict, toy_family  # noqa: F401

EMULAB = Path(__file__).parent.parent / "testbed" / "data" / "emulab"


def _valid(doc) -> dict:
    """The explanation of a command's JSON, checked against its schema (twice)."""
    e = doc["explanation"]
    check_explanation(e)
    jsonschema.validate(e, to_json_schema(_schema()))
    return e


@pytest.fixture
def ctaap_file(tmp_path):
    """Three tasks needing 30 CPU each and one task no cluster holds (mem 99 > 64)."""
    path = tmp_path / "ct.json"
    request = ct.Request({"cpu": [30, 30, 30, 1], "mem": [1, 1, 1, 99]})
    offer = ct.Offer({"cpu": [40], "mem": [64]}, capacity=[4], bandwidth=[[10]])
    ct.io.write_instance(str(path), request, offer)
    return str(path)


def test_ctaap_solve_explains_the_task_left_out(ctaap_file, capsys):
    assert main(["ctaap", "solve", ctaap_file, "--explain"]) == 0
    out = capsys.readouterr().out
    why = [line for line in out.splitlines() if line.startswith("  why not: ")]
    assert len(why) == 1 and "Task 3 cannot be placed" in why[0] and "mem 99" in why[0]
    assert main(["ctaap", "solve", ctaap_file, "--explain", "--json"]) == 0
    e = _valid(json.loads(capsys.readouterr().out))
    assert e["conflict"] == {"tasks": [3]} and e["sound"] is True
    # the referee: the exact optimum places every task but task 3
    r, o = ct.io.read_instance(ctaap_file)
    assert ct.solve(r, o, "exact").n_allocated == 3


def test_ctaap_solve_without_explain_or_with_a_yes_says_nothing(ctaap_file, tmp_path, capsys):
    assert main(["ctaap", "solve", ctaap_file, "--json"]) == 0
    assert "explanation" not in json.loads(capsys.readouterr().out)
    path = tmp_path / "yes.json"
    ct.io.write_instance(str(path), ct.Request({"cpu": [1]}),
                         ct.Offer({"cpu": [2]}, capacity=[1], bandwidth=[[1]]))  # fmt: skip
    assert main(["ctaap", "solve", str(path), "--explain"]) == 0
    assert "why not" not in capsys.readouterr().out


@pytest.fixture
def collective_file(tmp_path):
    path = tmp_path / "c.json"
    pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    co.io.write_instance(str(path), pool, co.CollectiveRequest(600, 2, minimum={"cores": 3}))
    return str(path)


def test_collective_solve_explains_the_rejection(collective_file, capsys):
    assert main(["collective", "solve", collective_file, "--explain"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert "rejected (infeasible)" in lines[0]
    assert lines[1].startswith("  why not: No start fits: cores: at least 3 per node")
    assert "ask for 1 node" in lines[1] and len(lines) == 2
    assert main(["collective", "solve", collective_file, "--explain", "--json"]) == 1
    e = _valid(json.loads(capsys.readouterr().out))
    pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    # the referee: brute force rejects the conflict, and accepts each fix
    assert co.coallocate(pool, co.CollectiveRequest(**e["conflict"]), "brute_force").start is None
    for r in e["relaxations"]:
        req = co.CollectiveRequest(**r["changes"]["request"])
        assert co.coallocate(pool, req, "brute_force").start is not None


def test_testbed_assign_explains_in_a_comment_of_assigns_format(capsys):
    top, ptop = str(EMULAB / "test2a.top"), str(EMULAB / "dtest.ptop")
    assert main(["testbed", "assign", top, ptop, "--explain", "--explain-time", "20"]) == 1
    out = capsys.readouterr().out.splitlines()
    why = [line for line in out if line.startswith("# why not: ")]
    assert len(why) == 1 and "C" in why[0] and "cannot be mapped together" in why[0]
    assert out[out.index(why[0]) - 1].startswith("# status: ")
    assert main(["testbed", "assign", top, ptop, "--explain", "--json"]) == 1
    e = _valid(json.loads(capsys.readouterr().out))
    # the referee: the exact model cannot map the conflict's nodes (with their links) alone
    t = tb.read_top(top)
    keep = set(e["conflict"]["vnodes"])
    sub = tb.VirtualTopology([n for v, n in t.nodes.items() if v in keep],
                             [lk for lk in t.links.values() if lk.a in keep and lk.b in keep])
    assert tb.assign(sub, tb.read_ptop(ptop), "exact").mapping is None


def test_loadshare_share_explains_the_load_that_waits(tmp_path, capsys):
    path = tmp_path / "ls.json"
    ls.io.write_problem(str(path), ls.LoadSharingProblem([10, 6], [7, 7, 3], [0, 0, 0]))
    main(["loadshare", "share", str(path), "--explain"])
    why = [x for x in capsys.readouterr().out.splitlines() if x.startswith("  why not: ")]
    assert len(why) == 1 and why[0].startswith("  why not: Jobs 0 and 1")
    main(["loadshare", "share", str(path), "--explain", "--json"])
    e = _valid(json.loads(capsys.readouterr().out))
    assert sorted(e["conflict"]["jobs"]) == [0, 1]  # 7 + 7 fit neither node; each alone fits


def test_loadshare_gap_explains_each_instance_without_an_assignment(tmp_path, capsys):
    path = tmp_path / "g.txt"
    bad = ls.GapInstance([[1, 1, 1], [1, 1, 1]], [[1, 9, 1], [1, 8, 1]], [5, 5])
    good = ls.GapInstance([[1, 1], [1, 1]], [[1, 1], [1, 1]], [5, 5])
    ls.io.write_gap(str(path), [bad, good])
    main(["loadshare", "gap", str(path), "--sense", "min", "--explain"])
    lines = capsys.readouterr().out.splitlines()
    assert [x.startswith("  why not: ") for x in lines] == [False, True, False]
    assert "Item 1 cannot be assigned" in lines[1] and "9 > 5, 8 > 5" in lines[1]
    main(["loadshare", "gap", str(path), "--sense", "min", "--explain", "--json"])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert _valid(rows[0])["conflict"] == {"items": [1]} and "explanation" not in rows[1]


def test_taskmap_map_explains_what_binds(tmp_path, capsys):
    path = tmp_path / "t.json"
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    tm.io.write_instance(str(path), tasks, res)
    assert main(["taskmap", "map", str(path), "--explain", "--method", "open"]) == 0
    binds = [x for x in capsys.readouterr().out.splitlines() if "what binds" in x]
    assert len(binds) == 1 and "is set where" in binds[0]
    assert main(["taskmap", "map", str(path), "--explain", "--json", "--method", "open"]) == 0
    doc = json.loads(capsys.readouterr().out)
    b = doc["binds"]["bottleneck"]
    occ = doc["node_occupancy"] if b["kind"] == "node" else doc["link_occupancy"]
    assert b["occupancy"] == pytest.approx(doc["max_occupancy"]) == pytest.approx(
        occ[b["index"]])  # fmt: skip


def test_coalloc_assign_prints_why_after_its_own_failure_lines():
    buf = io.StringIO()
    status = run(["-s", "1", str(EMULAB / "dtest.ptop"), str(EMULAB / "test2a.top")], buf)
    lines = buf.getvalue().splitlines()
    assert status == 2
    k = lines.index("*** Node mapping precheck failed!")
    assert lines[k + 1].startswith("*** Why: Virtual nodes") and len(lines) == k + 2


def test_taskmap_explain_on_a_saved_result_says_what_binds(tmp_path, capsys):
    path, saved = tmp_path / "t.json", tmp_path / "r.json"
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    tm.io.write_instance(str(path), tasks, res)
    assert main(["taskmap", "map", str(path), "--method", "open", "-o", str(saved)]) == 0
    capsys.readouterr()
    assert main(["taskmap", "explain", str(path), "--result", str(saved), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    mapping = json.loads(saved.read_text())["mapping"]
    referee = tm.verify_mapping(tasks, res, mapping)
    assert doc["explanation"] is None
    assert doc["binds"]["bottleneck"]["occupancy"] == pytest.approx(referee.max_occupancy)
    assert main(["taskmap", "explain", str(path), "--result", str(saved)]) == 0
    assert capsys.readouterr().out.startswith(f"{saved}: what binds: The maximum occupancy")


def test_explain_result_is_refused_where_nothing_binds(tmp_path, capsys):
    path = tmp_path / "c.json"
    co.io.write_instance(str(path), co.ResourcePool([[4.0]], ["cores"]),
                         co.CollectiveRequest(600, 1))  # fmt: skip
    with pytest.raises(SystemExit):  # collective's explain has no --result
        main(["collective", "explain", str(path), "--result", "x.json"])


@pytest.mark.usefixtures("toy_family")
def test_generic_solve_takes_explain_and_says_nothing_without_an_explainer(tmp_path, capsys):
    """A family without a CLI module gets --explain on its generic solve; the toy knapsack
    family has no "why not", so its refusal carries no (null) explanation."""
    inst = random_instance(5)
    path = tmp_path / "k.json"
    path.write_text(json.dumps(to_dict(inst)))
    assert main(["knapsack", "solve", str(path), "--method", "exact", "-p", "fail=true",
                 "--explain"]) == 1  # fmt: skip
    line = json.loads(capsys.readouterr().out)
    assert line["status"] == "infeasible" and "explanation" not in line
