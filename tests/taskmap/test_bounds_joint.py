"""The joint job bound (``lower_bound(..., strength="joint")``, ``coalloc.taskmap.jointbound``,
issue 40, h51tmap): every dense job together, counted per side of every bridge, a MILP whose
proven dual bound is kept.

Referees: brute force over every mapping (no code shared with the bound) on small random
instances of the job bound's generators (one or two dense jobs on trees, on graphs with
cycles where a side holds several processors, small pipelines on two-LAN Internet-like
graphs), a hand-built case where the jobs compete for one large processor (the bound is
strictly above the default and equals the optimum), and the mapper's verified answers on a
Table 1 pipeline.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from coalloc.taskmap import ResourceGraph, TaskGraph, verify_mapping
from coalloc.taskmap import generators as gen
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.jobbound import _jobs_bound
from coalloc.taskmap.jointbound import joint_bound, prove_at
from coalloc.taskmap.multilevel import map_multilevel
from tests.taskmap._brute import brute_force
from tests.taskmap.test_bounds_jobs import cliques_on_graphs, small_pipelines

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _check(tasks, res):
    stars = lower_bound(tasks, res)
    joint = lower_bound(tasks, res, strength="joint")
    best = brute_force(tasks, res)
    assert joint >= stars, "the joint strength is at least the default"
    assert joint <= best * (1 + 1e-6) + 1e-12, (joint, best, stars)
    return stars, joint, best


@settings(max_examples=60, **_SETTINGS)
@given(inst=cliques_on_graphs())
def test_joint_bound_never_exceeds_the_brute_force_optimum_on_trees(inst):
    _check(*inst)


@settings(max_examples=40, **_SETTINGS)
@given(inst=cliques_on_graphs(cycles=True))
def test_joint_bound_never_exceeds_the_brute_force_optimum_with_cycles(inst):
    _check(*inst)


@settings(max_examples=40, **_SETTINGS)
@given(inst=small_pipelines())
def test_joint_bound_never_exceeds_the_brute_force_optimum_on_small_pipelines(inst):
    tasks, res = inst
    if res.n_processors ** tasks.n > 5000:
        tasks = TaskGraph(tasks.node_weight[:4], tasks.comm.toarray()[:4, :4])
    _check(tasks, res)


def _competing(v: float = 0.625):
    """Two cliques of three tasks of weight 1 (volume ``v`` a pair); a processor of capacity
    4 on a hub, and a LAN of two processors of capacity 1 behind an uplink of bandwidth 1.
    Either job alone fits on the large processor (0.75); both there make 1.5; the LAN holds
    one task a processor below 1, and any task there sends at least ``2 v`` = 1.25 over the
    uplink (two of one job: 1.25; one of each: 2.5), so the optimum is 1.25 (a job's two
    tasks in the LAN, its third with the other job)."""
    comm = np.zeros((6, 6))
    for job in ((0, 1, 2), (3, 4, 5)):
        for a in job:
            for b in job:
                if a != b:
                    comm[a, b] = v
    tasks = TaskGraph(np.ones(6), comm)
    res = ResourceGraph.from_edges([0, 4.0, 0, 1.0, 1.0], [[0, 1], [0, 2], [2, 3], [2, 4]],
                                   [100.0, 1.0, 100.0, 100.0])  # fmt: skip
    return tasks, res


def test_the_jobs_competing_for_one_processor_lift_the_bound_to_the_optimum():
    tasks, res = _competing()
    stars, joint, best = _check(tasks, res)
    assert best == pytest.approx(1.25)
    assert _jobs_bound(tasks, res, 0.0) == pytest.approx(0.75, rel=1e-6)  # each job alone
    assert stars < 1.2, stars  # the default does not see the competition
    assert joint == pytest.approx(1.25, rel=1e-3)


def test_upper_caps_the_value_and_a_proof_above_it_returns_it():
    tasks, res = _competing()
    stars = lower_bound(tasks, res)
    assert joint_bound(tasks, res, stars, 1.2) == pytest.approx(1.2)  # proven: above 1.2
    assert joint_bound(tasks, res, stars, 10.0) <= 1.25 * (1 + 1e-6)
    assert joint_bound(tasks, res, stars, stars) == stars  # nothing to look at
    assert joint_bound(tasks, res, stars, tries=0) == stars


def test_a_proof_at_a_level_returns_it_only_below_the_optimum():
    tasks, res = _competing()  # optimum 1.25
    stars = lower_bound(tasks, res)
    far = time.perf_counter() + 3600.0
    assert prove_at(tasks, res, stars, 1.2, far) == pytest.approx(1.2)
    assert stars <= prove_at(tasks, res, stars, 1.3, far) <= 1.25 * (1 + 1e-6)
    assert prove_at(tasks, res, stars, 0.5 * stars, far) == stars  # nothing to prove
    assert prove_at(tasks, res, stars, 1.2, time.perf_counter() - 1.0) == stars  # no time


def test_no_jobs_returns_lower_and_a_grid_job_stays_below_brute_force():
    res = ResourceGraph.from_edges([0, 2.0, 2.0], [[0, 1], [0, 2]], [1.0, 1.0])
    alone = TaskGraph(np.ones(4), np.zeros((4, 4)))  # no streams: no jobs
    assert joint_bound(alone, res, 0.25) == 0.25
    grid = gen.stencil_task_graph((3, 3), seed=1)  # one job of nine tasks
    assert joint_bound(grid, res, 0.25) <= brute_force(grid, res) * (1 + 1e-6)


@pytest.mark.slow
def test_joint_bound_stays_below_the_mapper_on_a_table1_pipeline():
    tasks, res = gen.table1_instance(1.0, 7101)  # vs_peers' c=1 #1
    mapped = verify_mapping(tasks, res, map_multilevel(tasks, res).mapping)
    joint = lower_bound(tasks, res, strength="joint")
    assert lower_bound(tasks, res) <= joint <= mapped.max_occupancy * (1 + 1e-9)
