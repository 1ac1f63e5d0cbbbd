"""bench/taskmap/vs_peers.py without the peers: its instances, its bookkeeping and its table,
with stand-in peers whose answers are known."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from bench.taskmap import vs_peers

import coalloc.taskmap as tm
from coalloc.taskmap.bounds import lower_bound


class _OneProcessor:
    """A stand-in peer: every task on the first processor of the list it is given."""

    name = "one"

    def map(self, tasks, res, procs):
        return np.full(tasks.n, procs[0], dtype=np.int64)


class _RoundRobin:
    name = "robin"

    def map(self, tasks, res, procs):
        return np.asarray(procs)[np.arange(tasks.n) % len(procs)]


def test_instances_cover_the_three_kinds_and_build():
    full = vs_peers.instances(vs_peers.KINDS)
    kinds = [k for k, _, _ in full]
    assert (kinds.count("pipeline"), kinds.count("stencil"), kinds.count("geometric")) == (
        10,
        12,
        8,
    )
    assert len({name for _, name, _ in full}) == 30
    for _, _, build in vs_peers.instances(vs_peers.KINDS, quick=True):
        tasks, res = build()
        assert isinstance(tasks, tm.TaskGraph) and isinstance(res, tm.ResourceGraph)
        again, _ = build()  # deterministic builders
        np.testing.assert_array_equal(tasks.node_weight, again.node_weight)


def test_subset_sizes_are_nested_from_all_to_one():
    ks = vs_peers._subsets(256, 16)
    assert ks[0] == 256 and ks[-1] == 1 and ks == sorted(ks, reverse=True)
    assert 12 <= len(ks) <= 17
    assert vs_peers._subsets(1) == [1]


def test_run_instance_recomputes_every_objective():
    kind, name, build = vs_peers.instances(["stencil"], quick=True)[0]
    args = argparse.Namespace(paper_max=100, subsets=4)
    row = vs_peers.run_instance(kind, name, build, [_OneProcessor(), _RoundRobin()], args)
    tasks, res = build()
    order = vs_peers.hierarchy_order(res)
    one = tm.verify_mapping(tasks, res, np.full(tasks.n, order[0])).max_occupancy
    robin = tm.verify_mapping(tasks, res, order[np.arange(tasks.n) % len(order)]).max_occupancy
    assert row["one"] == pytest.approx(one) and row["robin"] == pytest.approx(robin)
    assert row["best_peer_single"] == pytest.approx(min(one, robin))
    # the sweep keeps the best subset: never worse than the single run
    assert row["robin_sweep"] <= row["robin"] + 1e-12
    assert row["coalloc"] == min(row["multilevel"], row["open+improve"])
    assert row["ratio"] == pytest.approx(row["coalloc"] / row["best_peer"])
    lines = vs_peers.summary([row])
    assert lines[2].startswith("| stencil (1) |") and lines[-1].startswith("| all (1) |")
    assert f"{math.exp(math.log(row['ratio'])):.3f}" in lines[2]
    # both objectives and the gap, recomputed by the package
    assert row["sum_one"] == 0.0  # everything on one processor: no traffic
    assert row["sum_robin"] == pytest.approx(
        tm.communication_cost(tasks, res, order[np.arange(tasks.n) % len(order)])
    )
    assert row["best_peer_sum"] <= min(row["sum_one"], row["sum_robin"]) + 1e-12
    assert (
        row["lower_bound"] == pytest.approx(lower_bound(tasks, res))
        and row["lower_bound"] <= row["coalloc"]
    )
    assert row["gap"] == pytest.approx(
        (row["coalloc"] - row["lower_bound"]) / row["coalloc"], abs=1e-12
    )
    # the basic bound beside it (the gap before issue 40's item 2) and the bound's time
    basic = lower_bound(tasks, res, strength="basic")
    assert row["lower_bound_basic"] == basic <= row["lower_bound"]
    assert row["gap_basic"] == pytest.approx(
        (row["coalloc"] - min(basic, row["coalloc"])) / row["coalloc"], abs=1e-12
    )
    assert row["gap_basic"] >= row["gap"] - 1e-12 and row["cpu_bound"] >= 0.0
    assert vs_peers.per_peer([row], [_OneProcessor(), _RoundRobin()])[2].startswith("| one | 1 |")


def test_run_instance_at_a_time_limit_runs_the_default_once(monkeypatch):
    """``--time-limit T``: coalloc is ``solve(tasks, res, time_limit=T)`` (a stand-in here,
    recording its limit), no open+improve; its printed gap and lateness are kept, and the
    hierarchical machines get their own row in the tables."""
    kind, name, build = vs_peers.instances(["stencil"], quick=True)[0]
    seen = []
    solve = tm.solve

    def recorded(tasks, res, **kw):
        seen.append(kw)
        return solve(tasks, res, **kw)

    monkeypatch.setattr(vs_peers, "solve", recorded)
    args = argparse.Namespace(paper_max=100, subsets=4, time_limit=0.5)
    row = vs_peers.run_instance(kind, name, build, [_RoundRobin()], args)
    assert seen == [{"time_limit": 0.5}] and "open+improve" not in row
    assert row["coalloc"] == row["multilevel"] >= row["lower_bound"]  # the one answer
    assert 0.0 <= row["printed_gap"] <= 1.0 and row["late"] in (True, False)
    assert row["hierarchical"] is True
    groups = [line.split(" (")[0] for line in vs_peers.summary([row])[2:]]
    assert groups == ["| stencil", "| hierarchical", "| all"]


def test_hierarchy_tags_and_peer_applicability():
    for kind, _, build in vs_peers.instances(vs_peers.KINDS, quick=True):
        tag = getattr(build, "hierarchy", None)
        assert (tag is None) == (kind == "pipeline")
        if tag is not None:
            _, res = build()
            assert int(np.prod(tag)) == res.n_processors
    stencil = vs_peers.instances(["stencil"], quick=True)[0][2]
    pipe = vs_peers.instances(["pipeline"], quick=True)[0][2]
    _, res = stencil()
    shared = vs_peers.SharedMap.__new__(vs_peers.SharedMap)
    assert shared.applies(stencil, res) and not shared.applies(pipe, pipe()[1])
    mtk = vs_peers.MtKahypar.__new__(vs_peers.MtKahypar)
    assert mtk.applies(stencil, res) and not mtk.applies(pipe, pipe()[1])


def test_distances_and_block_limits():
    tasks, res = vs_peers.instances(["stencil"], quick=True)[0][2]()
    procs = np.sort(res.processors)
    d = vs_peers._distances(res, procs[:3])
    one = tm.TaskGraph([1.0, 1.0], [[0, 2.0], [2.0, 0]])
    for i in range(3):
        for j in range(3):
            if i != j:  # the distance is the cost of a unit stream between the two
                want = tm.communication_cost(one, res, [procs[i], procs[j]]) / 2.0
                assert d[i, j] == pytest.approx(want)
    assert vs_peers._int_distances(np.array([[0.0, 0.5], [0.5, 0.0]]))[0, 1] == 10
    limits = vs_peers._block_limits(tasks, res, procs)
    assert len(limits) == len(procs)
    assert sum(limits) >= vs_peers._ints(tasks.node_weight).sum()


@pytest.mark.parametrize(
    "name, module",
    [
        ("mtkahypar_default", "mtkahypar"),
        ("sharedmap_fast", "chszlablib"),
        ("kaminpar_default", "kaminpar"),
    ],
)
def test_new_peers_give_valid_mappings_when_installed(name, module):
    pytest.importorskip(module)
    kind, inst, build = vs_peers.instances(["stencil"], quick=True)[1]  # 8 processors, het
    peer = vs_peers.PEERS[name]()
    row = vs_peers.run_instance(
        kind, inst, build, [peer], argparse.Namespace(paper_max=0, subsets=4)
    )
    tasks, res = build()
    assert row[name] >= lower_bound(tasks, res) - 1e-12 and row[f"sum_{name}"] >= 0.0
