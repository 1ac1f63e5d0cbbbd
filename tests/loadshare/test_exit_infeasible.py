"""One exit-code rule (issue 36): a proven-infeasible GAP instance is still a failed solve
for a script, so ``coalloc loadshare gap`` exits 1 on it, as every family's command does
without an answer (docs/results.md); 0 only when every instance has a verified answer."""

from __future__ import annotations

import json

import pytest

from coalloc import loadshare as ls
from coalloc.cli import main

# two agents of capacity 3, three items of weight 2 each: one item an agent, proven infeasible
INFEASIBLE = ls.GapInstance([[1, 2, 3], [3, 2, 1]], [[2, 2, 2], [2, 2, 2]], [3, 3])
FEASIBLE = ls.GapInstance([[1, 2, 3], [3, 2, 1]], [[2, 2, 2], [2, 2, 2]], [4, 4])


@pytest.mark.parametrize("method", ["heuristic", "exact"])
@pytest.mark.parametrize("json_mode", [False, True])
def test_gap_exits_1_on_a_proven_infeasible_instance(tmp_path, capsys, method, json_mode):
    if method == "exact":
        pytest.importorskip("ortools")
    path = tmp_path / "inf.txt"
    ls.write_gap(path, [INFEASIBLE], multi=False)
    argv = ["loadshare", "gap", str(path), "--method", method] + (["--json"] if json_mode else [])
    code = main(argv)
    out = capsys.readouterr().out
    line = out.splitlines()[0]
    if json_mode:
        assert json.loads(line)["status"] == "infeasible"
    else:
        assert f": {method} infeasible " in line
    assert code == 1


def test_gap_exits_0_with_answers_and_1_when_one_instance_has_none(tmp_path, capsys):
    good = tmp_path / "good.txt"
    ls.write_gap(good, [FEASIBLE, FEASIBLE], multi=True)
    assert main(["loadshare", "gap", str(good)]) == 0
    mixed = tmp_path / "mixed.txt"
    ls.write_gap(mixed, [FEASIBLE, INFEASIBLE], multi=True)
    assert main(["loadshare", "gap", str(mixed)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert " infeasible " in lines[-1]
