"""bench/taskmap/vs_peers.py without the peers: its instances, its bookkeeping and its table,
with stand-in peers whose answers are known."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from bench.taskmap import vs_peers

import coalloc.taskmap as tm


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
