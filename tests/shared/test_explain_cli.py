"""``coalloc <family> explain`` and ``FamilyInstance.explain`` (issue 38): every family
group has the command, the sentence is the explanation's, the JSON is its ``to_dict()``,
and a result that already meets its request carries none."""

from __future__ import annotations

import json

import pytest

import coalloc
import coalloc.collective as co
import coalloc.ctaap as ct
import coalloc.taskmap as tm
from coalloc.cli import main


@pytest.fixture
def collective_file(tmp_path):
    path = tmp_path / "c.json"
    pool = co.ResourcePool([[4.0], [2.0]], ["cores"])
    co.io.write_instance(str(path), pool, co.CollectiveRequest(600, 2, minimum={"cores": 3}))
    return str(path)


def test_explain_prints_the_sentence(collective_file, capsys):
    assert main(["collective", "explain", collective_file]) == 0
    out = capsys.readouterr().out
    assert out.startswith(collective_file + ": No start fits") and "Nearest fix" in out


def test_explain_json_is_the_explanation(collective_file, capsys):
    assert main(["collective", "explain", collective_file, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    e = doc["explanation"]
    assert e["sound"] is True and e["minimal"] is True
    assert co.coallocate(co.ResourcePool([[4.0], [2.0]], ["cores"]),
                         co.CollectiveRequest(**e["conflict"])).status == "infeasible"


def test_explain_refuses_another_familys_file(collective_file, capsys):
    assert main(["ctaap", "explain", collective_file]) == 2
    assert "not of 'ctaap'" in capsys.readouterr().err


def test_every_family_group_has_explain(capsys):
    for name in coalloc.FAMILIES:
        with pytest.raises(SystemExit) as stop:
            main([name, "explain", "-h"])
        assert stop.value.code == 0
        assert "nearest request that fits" in " ".join(capsys.readouterr().out.split())


def test_task_mapping_refuses_nothing(tmp_path, capsys):
    path = tmp_path / "t.json"
    tasks = tm.TaskGraph([1.0, 2.0], [[0, 1], [1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0], [[0, 1]], [50.0])
    tm.io.write_instance(str(path), tasks, res)
    assert main(["taskmap", "explain", str(path)]) == 0
    assert "nothing to explain" in capsys.readouterr().out


def test_result_carries_the_explanation_only_for_a_no():
    r, o = ct.generators.fig2(1, n_tasks=30, seed=1)
    inst = ct.Instance(r, o)
    res = inst.solve()
    assert res.n_allocated < r.n
    e = inst.explain(res)
    assert res.explanation is e and res.to_dict()["explanation"]["sound"] is True
    small = ct.Instance(ct.Request({"cpu": [1]}), ct.Offer({"cpu": [2]}, capacity=[1],
                                                          bandwidth=[[1]]))  # fmt: skip
    full = small.solve()
    assert small.explain(full) is None and "explanation" not in full.to_dict()
