"""What caps a CTAAP allocation (issue 38, item 4): every claim judged by ``verify``.

:func:`explain_binding` reads an allocation and names the full clusters, the links used to
the full and, per left-out task and cluster, what stops it there. The referee is the
family's independent checker: adding the task to that cluster must violate a constraint
exactly when a reason is given (and of the kind named), and fit when it says "fits".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import coalloc.ctaap as ct
from coalloc.cli import main
from coalloc.ctaap.explain import explain_binding

KIND = {"capacity": 2, "properties": 3, "bandwidth": 4}  # verify's constraint numbers


def _cases():
    for s in range(12):
        if s % 2:
            yield pytest.param(*ct.generators.random_instance(30 + 5 * s, 4, seed=s), id=f"r{s}")
        else:
            yield pytest.param(*ct.generators.fig2(1 + s % 3, n_tasks=20 + 2 * s, seed=s),
                               id=f"f{s}")  # fmt: skip


@pytest.mark.parametrize("request_, offer", list(_cases()))
def test_every_reason_is_a_violation_verify_finds(request_, offer):
    res = ct.solve(request_, offer, seed=0)
    a = np.asarray(res.assignment)
    assert ct.verify(request_, offer, a).feasible
    b = explain_binding(request_, offer, res)
    load = np.bincount(a[a >= 0], minlength=offer.m)
    assert b["placed"] == int((a >= 0).sum())
    assert {f["index"] for f in b["full_clusters"]} == {
        j for j in range(offer.m) if offer.capacity[j] > 0 and load[j] == offer.capacity[j]}
    for x in b["tight_links"]:
        i, k = x["tasks"]
        assert sorted([a[i], a[k]]) == x["clusters"]
        assert request_.bandwidth.tocsr()[i, k] == x["need"] == x["available"]
    left = [int(t) for t in np.flatnonzero(a < 0)]
    assert [d["task"] for d in b["blocked"]] == left[:20]
    for d in b["blocked"]:
        for j in range(offer.m):
            name = f"cluster {j}" if offer.names is None else f"cluster {offer.names[j]}"
            trial = a.copy()
            trial[d["task"]] = j
            rep = ct.verify(request_, offer, trial)
            why = d["by"][name]
            if why.startswith("fits"):
                assert rep.feasible, (d["task"], j)
                continue
            kind = ("capacity" if why.startswith("full") else "properties"
                    if why.startswith("its machines") else "bandwidth")  # fmt: skip
            assert rep.violations[KIND[kind]] > 0, (d["task"], j, why)
    assert sum(x["blocks"] for x in b["binding"]) <= len(left) * offer.m
    assert b["sentence"].endswith(".") and (not left or "left out are stopped by" in b["sentence"])


def test_a_full_cluster_binds():
    request = ct.Request({"cpu": [30, 30, 30]})
    offer = ct.Offer({"cpu": [40]}, capacity=[2], bandwidth=[[10]])
    b = explain_binding(request, offer, [0, 0, -1])
    assert b["binding"] == [{"constraint": "capacity", "where": "cluster 0", "blocks": 1}]
    assert "full: cluster 0 (2/2)" in b["sentence"]


def test_a_narrow_link_binds():
    request = ct.Request({"cpu": [1, 1]}, bandwidth=[[0, 8], [8, 0]])
    offer = ct.Offer({"cpu": [2, 2]}, capacity=[1, 1], bandwidth=[[9, 5], [5, 9]])
    b = explain_binding(request, offer, [0, -1])
    assert b["blocked"][0]["by"]["cluster 1"] == "task 0 on cluster 0 needs 8 over a link of 5"
    assert b["binding"][0]["constraint"] in ("capacity", "bandwidth")
    assert {x["constraint"] for x in b["binding"]} == {"capacity", "bandwidth"}


def test_explain_binding_refuses_a_bad_assignment():
    request = ct.Request({"cpu": [1, 1]})
    offer = ct.Offer({"cpu": [2]}, capacity=[2], bandwidth=[[1]])
    with pytest.raises(ValueError, match="result"):
        explain_binding(request, offer, [0, 3])
    with pytest.raises(ValueError, match="result"):
        explain_binding(request, offer, [0])


def test_solve_and_explain_commands_say_what_binds(tmp_path, capsys):
    path, saved = tmp_path / "i.json", tmp_path / "r.json"
    ct.io.write_instance(str(path), ct.Request({"cpu": [30, 30, 30]}),
                         ct.Offer({"cpu": [40]}, capacity=[2], bandwidth=[[10]]))  # fmt: skip
    assert main(["ctaap", "solve", str(path), "--explain", "-o", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "  what binds: 2 of 3 tasks are placed" in out and "full: cluster 0 (2/2)" in out
    assert main(["ctaap", "explain", str(path), "--result", str(saved), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["binds"]["full_clusters"][0]["used"] == 2 and doc["explanation"]["sound"] is True
