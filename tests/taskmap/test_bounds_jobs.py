"""The job bound (issue 40, item 2; ``coalloc.taskmap.jobbound``, part of the default
``lower_bound``): each dense job alone, placed integrally over the tree of bridges.

Referees: brute force over every mapping (shares no code with the bound) on small random
instances of three generators (cliques with mixed weights and volumes on trees of routers
and processors; the same on graphs with cycles, where only bridges count; small pipelines on
small Internet-like graphs), the exact method's proven optimum on larger ones, and the
multilevel mapper's answer recomputed by ``verify_mapping`` on the Table 1 pipelines.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coalloc import taskmap
from coalloc.taskmap import ResourceGraph, TaskGraph
from coalloc.taskmap import generators as gen
from coalloc.taskmap.bounds import lower_bound
from coalloc.taskmap.jobbound import _cut_profile, _jobs, _jobs_bound
from tests.strategies import draw_small_network
from tests.taskmap._brute import brute_force as _brute_force

_SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def cliques_on_graphs(draw, max_tasks: int = 6, max_procs: int = 4, cycles: bool = False):
    """One or two dense jobs (3+ tasks, mixed weights, mixed volumes inside, some pairs
    missing in a third of the draws, a light volume between) on a connected graph of
    processors and routers: a tree, or with extra links (cycles) when ``cycles``; mixed
    bandwidths and either route length."""
    n = draw(st.integers(3, max_tasks))
    two = n >= 6 and draw(st.booleans())
    job = np.array([0] * 3 + [1] * (n - 3)) if two else np.zeros(n, dtype=int)
    w = np.array(draw(st.lists(st.integers(1, 6), min_size=n, max_size=n)), float) / 2
    inside = np.array(draw(st.lists(st.integers(4, 40), min_size=n * n, max_size=n * n)),
                      float).reshape(n, n)  # fmt: skip
    if draw(st.integers(0, 2)) == 0:  # holes: not a clique
        inside *= np.array(draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
                           ).reshape(n, n)  # fmt: skip
    inside = np.maximum(inside, inside.T)
    light = draw(st.sampled_from([0.0, 0.5, 1.0]))
    comm = np.where(job[:, None] == job[None, :], inside, light)
    np.fill_diagonal(comm, 0.0)
    res = draw_small_network(draw, procs=(2, max_procs), caps=[1, 2, 3, 5, 8],
                             extra=(1, 3) if cycles else None)  # fmt: skip
    return TaskGraph(w, comm), res


@st.composite
def small_pipelines(draw):
    """A pipeline of two jobs (3 tasks each at most 6 in all) on a two-LAN Internet-like
    graph of at most 4 processors (the benchmark's shape, shrunk for brute force)."""
    seed = draw(st.integers(0, 10**6))
    c = draw(st.sampled_from([1.0, 4.0, 16.0]))
    tasks = gen.pipeline_task_graph(n_clusters=(1, 2), cluster_size=(3, 3), c=c, seed=seed)
    res = gen.internet_resource_graph(
        n_wan=2, n_lan=2, lan_size=(1, 2), capacity=(1.0, 8.0),
        lan_bandwidth=draw(st.sampled_from([2.0, 10.0, 50.0])), seed=seed + 1,
    )  # fmt: skip
    return tasks, res


def _check(tasks, res):
    jobs = _jobs_bound(tasks, res, 0.0)
    default = lower_bound(tasks, res)
    best = _brute_force(tasks, res)
    assert jobs <= default * (1 + 1e-12), "the default is at least the job bound"
    assert jobs <= best * (1 + 1e-9) + 1e-12, (jobs, best)
    assert default <= best * (1 + 1e-9) + 1e-12, (default, best)
    return jobs, best


@settings(max_examples=80, **_SETTINGS)
@given(inst=cliques_on_graphs())
@example(inst=(TaskGraph([1.0, 1.0, 1.0], [[0, 9, 9], [9, 0, 9], [9, 9, 0]]),
               ResourceGraph.from_edges([0, 2.0, 2.0, 2.0], [[0, 1], [0, 2], [0, 3]],
                                        [5.0, 5.0, 5.0])))  # fmt: skip
def test_job_bound_never_exceeds_the_brute_force_optimum_on_trees(inst):
    _check(*inst)


@settings(max_examples=60, **_SETTINGS)
@given(inst=cliques_on_graphs(cycles=True))
def test_job_bound_never_exceeds_the_brute_force_optimum_with_cycles(inst):
    _check(*inst)


@settings(max_examples=40, **_SETTINGS)
@given(inst=small_pipelines())
def test_job_bound_never_exceeds_the_brute_force_optimum_on_small_pipelines(inst):
    tasks, res = inst
    if res.n_processors ** tasks.n > 5000:
        tasks = TaskGraph(tasks.node_weight[:4], tasks.comm.toarray()[:4, :4])
    _check(tasks, res)


def test_job_bound_binds_and_is_sometimes_tight():
    """On 40 drawn single cliques on a star of processors it beats the stars bound on most
    and meets the optimum on some (a bound that never moved would pass the tests above by
    doing nothing)."""
    rng = np.random.default_rng(7)
    stronger = tight = 0
    for _ in range(40):
        k = 4
        v = rng.uniform(5, 30)
        comm = np.full((k, k), v)
        np.fill_diagonal(comm, 0.0)
        tasks = TaskGraph(rng.uniform(0.5, 2.0, k), comm)
        res = ResourceGraph.from_edges(
            [0, *rng.choice([1.0, 2.0, 4.0], 3)], [[0, 1], [0, 2], [0, 3]],
            rng.choice([1.0, 5.0, 20.0], 3),
        )  # fmt: skip
        stars = max(lower_bound(tasks, res, strength="basic"),
                    lower_bound(tasks, res))  # fmt: skip
        jobs, best = _check(tasks, res)
        stronger += jobs > 1.001 * lower_bound(tasks, res, strength="basic")
        tight += jobs >= best * (1 - 1e-6)
        assert stars >= jobs * (1 - 1e-12)
    assert stronger >= 20 and tight >= 5, (stronger, tight)


def test_a_split_clique_is_charged_on_its_leaf_link():
    """Three tasks of weight 1 exchanging 9 (each pair), processors of capacity 2 on a star
    of links of bandwidth 5: at most two tasks share a processor below occupancy 1.5, and
    the lone third one sends 18 over its link (3.6); the optimum puts all three together
    (1.5). The job bound finds 1.5; the per-task knapsack of the stars bound sees less."""
    tasks = TaskGraph([1.0, 1.0, 1.0], [[0, 9, 9], [9, 0, 9], [9, 9, 0]])
    res = ResourceGraph.from_edges([0, 2.0, 2.0, 2.0], [[0, 1], [0, 2], [0, 3]], [5.0] * 3)
    assert _jobs_bound(tasks, res, 0.0) == pytest.approx(1.5, rel=1e-6)
    assert lower_bound(tasks, res) == pytest.approx(1.5, rel=1e-6)
    assert _brute_force(tasks, res) == pytest.approx(1.5)
    # a mapping at the optimum meets the bound within the optimality tolerance (the bound's
    # slack is far below it): "optimal", not "feasible"
    result = taskmap.solve(tasks, res)
    assert result.max_occupancy == pytest.approx(1.5) and result.status == "optimal"


def test_jobs_are_the_cliques_of_a_pipeline():
    tasks, job = gen.pipeline_task_graph(n_clusters=(4, 4), cluster_size=(3, 6), c=4.0,
                                         seed=3, return_jobs=True)  # fmt: skip
    found = sorted((tuple(m.tolist()), tuple(cut.tolist())) for m, cut in _jobs(tasks))
    assert [f[0] for f in found] == [tuple(np.flatnonzero(job == j).tolist()) for j in range(4)]
    A = tasks.comm.toarray()
    for members, cut in found:
        k, v = len(members), A[members[0], members[1]]
        assert cut == pytest.approx([n * (k - n) * v for n in range(k + 1)])  # a clique's


@settings(max_examples=60, **_SETTINGS)
@given(k=st.integers(2, 7), seed=st.integers(0, 10**6), holes=st.sampled_from([0.0, 0.3, 0.7]))
def test_cut_profile_is_below_every_subset_cut(k, seed, holes):
    """Lemma 2 on every subset of random symmetric volumes (some pairs missing)."""
    rng = np.random.default_rng(seed)
    V = rng.integers(0, 20, (k, k)).astype(float) * (rng.random((k, k)) >= holes)
    V = np.triu(V, 1)
    V = V + V.T
    cut = _cut_profile(V)
    for mask in range(1 << k):
        inside = np.array([(mask >> t) & 1 for t in range(k)], dtype=bool)
        assert V[inside][:, ~inside].sum() >= cut[inside.sum()] * (1 - 1e-12) - 1e-12


@pytest.mark.parametrize("seed", range(4))
def test_job_bound_never_exceeds_the_exact_optimum(seed):
    """Larger than brute force allows: 8 pipeline tasks on a tree of 4 processors; the
    exact method's answer is optimal (its status says so) and the bound stays below."""
    rng = np.random.default_rng(200 + seed)
    tasks = gen.pipeline_task_graph(n_clusters=(2, 2), cluster_size=(4, 4), c=16.0, seed=seed)
    res = ResourceGraph.from_edges(
        [0, 0, *rng.choice([2.0, 4.0, 8.0], 4)], [[0, 1], [0, 2], [1, 3], [1, 4], [2, 5]],
        [100.0, 50.0, *rng.choice([5.0, 20.0, 60.0], 3)],
    )  # fmt: skip
    exact = taskmap.solve(tasks, res, method="exact")
    assert exact.status == "optimal"
    report = taskmap.verify_mapping(tasks, res, exact.mapping, claimed=exact.max_occupancy)
    assert report.valid and report.matches
    assert _jobs_bound(tasks, res, 0.0) <= report.max_occupancy * (1 + 1e-6)
    assert lower_bound(tasks, res) <= report.max_occupancy * (1 + 1e-6)


@pytest.mark.parametrize("c,i", [(1, 0), (16, 0), (16, 1), (16, 4)])
def test_job_bound_stays_below_the_mapper_on_the_table1_pipelines(c, i):
    """The benchmark's instances (bench/taskmap/vs_peers.py): the mapper's answer,
    recomputed by verify_mapping, is at least the bound."""
    tasks, res = gen.table1_instance(c, 7000 + 100 * c + i)
    result = taskmap.map_multilevel(tasks, res, seed=0)
    report = taskmap.verify_mapping(tasks, res, result.mapping)
    assert report.valid
    assert lower_bound(tasks, res) <= report.max_occupancy * (1 + 1e-9)
