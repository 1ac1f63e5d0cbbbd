"""Load sharing: every method checked by verify, exact against brute force, the paper's
order of methods, determinism on executors, and bad input."""

from __future__ import annotations

import concurrent.futures as cf
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.loadshare as ls
from coalloc.loadshare import LoadSharingProblem, generators
from tests._optional import skip_unless_ci


def brute_force(problem: LoadSharingProblem) -> float:
    best = 0.0
    for place in itertools.product(range(problem.n_nodes), repeat=problem.n_jobs):
        load = np.zeros(problem.n_nodes)
        for j, i in enumerate(place):
            load[i] += problem.job_size[j]
        best = max(best, float(np.minimum(load, problem.capacity).sum()))
    return best


tiny_problems = st.integers(1, 3).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(1, 9), min_size=n, max_size=n),
        st.lists(st.tuples(st.integers(1, 9), st.integers(0, n - 1)), min_size=0, max_size=5),
    )
)


@settings(max_examples=25, deadline=None)
@given(tiny_problems)
def test_exact_matches_brute_force_and_heuristics_stay_below(data):
    caps, jobs = data
    prob = LoadSharingProblem(caps, [s for s, _ in jobs], [o for _, o in jobs])
    best = brute_force(prob)
    exact = ls.share(prob, "exact")
    assert exact.status == "optimal"
    assert exact.throughput == pytest.approx(best, abs=1e-6)
    assert ls.verify_placement(prob, exact.placement, claimed=exact.throughput).ok
    assert prob.indivisible_bound >= best - 1e-9
    assert prob.indivisible_bound <= prob.bound + 1e-9
    for method in ("bfd", "dmcf-gga", "fcfs", "fcfs-ff", "round-robin"):
        res = ls.share(prob, method, coalition_size=2, seed=1)
        rep = ls.verify_placement(prob, res.placement, claimed=res.throughput)
        assert rep.ok, (method, rep)
        assert res.throughput <= best + 1e-9
    assert ls.share(prob, "fcfs").throughput == pytest.approx(prob.fcfs_throughput)


@pytest.fixture(scope="module")
def paper():
    return generators.paper_setup(seed=11)


def test_paper_setup_matches_fig5(paper):
    assert paper.n_nodes == 500
    assert np.all(paper.capacity == 1000)
    # FCFS: about 2.74e5 in the paper
    assert 2.6e5 < paper.fcfs_throughput < 2.9e5
    assert 0.97 * 5e5 < paper.total_load < 1.03 * 5e5
    heavy = paper.load > 5000
    assert heavy.sum() == 25


@pytest.mark.parametrize("size", [23, 45, 100])
def test_paper_order_and_dmcf_within_one_percent(paper, size):
    res = {m: ls.share(paper, m, coalition_size=size, seed=5)
           for m in ("dmcf-gga", "round-robin", "fcfs-ff", "fcfs", "bfd")}  # fmt: skip
    for m, r in res.items():
        assert ls.verify_placement(paper, r.placement, claimed=r.throughput).ok, m
    t = {m: r.throughput for m, r in res.items()}
    assert t["dmcf-gga"] > t["round-robin"] > t["fcfs-ff"] > t["fcfs"]
    assert t["dmcf-gga"] >= 0.99 * paper.bound
    assert t["bfd"] >= 0.999 * paper.bound
    assert t["bfd"] >= t["dmcf-gga"]


def test_dmcf_counts_and_cost_model(paper):
    r = ls.dmcf_gga(paper, coalition_size=45, seed=2)
    g = r.generations
    assert r.rounds["ConditionalMigration"] == g and r.rounds["CoalitionSnapshot"] == 3 * g
    per_gen = sum(ls.ROUNDS.values())
    assert per_gen == 9  # Fig. 9a: 9 counts, 6.3 ms per generation
    cost = r.cost(0.7e-3)
    assert cost["phase1_overhead"] == pytest.approx(9 * g * 0.7e-3)
    assert cost["total"] == pytest.approx(cost["phase1"] + cost["phase2"])
    moved = r.placement != paper.job_origin
    per = np.bincount(r.coalition[paper.job_origin], weights=moved.astype(float))
    assert cost["phase2"] == pytest.approx(per.max() * 0.7e-3)
    # the migrations, recounted from the coalitions kept at every generation (same answer)
    h = ls.dmcf_gga(paper, coalition_size=45, seed=2, coalition_history=1)
    snaps = h.coalition_history
    changed = sum(int(np.count_nonzero(a != b)) for (_, a), (_, b) in zip(snaps, snaps[1:]))
    assert r.migrations == changed > 0 and np.array_equal(h.placement, r.placement)
    # stopping rule: the last `patience` generations brought no gain
    hist = r.history
    assert hist[-1] == hist[-101] and np.all(np.diff(hist) >= 0)
    n = paper.n_nodes
    assert r.messages["ConditionalMigration"] == n * g
    # the coalition structure reported gives the reported throughput by first fit
    place, tput, _, _ = ls.first_fit(paper, r.coalition, phase2="ffd")
    assert tput == pytest.approx(r.throughput)
    assert np.array_equal(place, r.placement)


def test_threshold_lowers_migrations(paper):
    low = ls.dmcf_gga(paper, th_c=0.05, seed=3)
    high = ls.dmcf_gga(paper, th_c=1.2, seed=3)
    assert low.throughput > high.throughput


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_executor_gives_the_serial_answer(backend):
    prob = generators.paper_setup(n_nodes=120, seed=4)
    serial = ls.dmcf_gga(prob, coalition_size=10, seed=9)
    pool = cf.ThreadPoolExecutor(2) if backend == "threads" else cf.ProcessPoolExecutor(2)
    with pool as ex:
        par = ls.dmcf_gga(prob, coalition_size=10, seed=9, executor=ex, chunks=3)
    assert np.array_equal(serial.placement, par.placement)
    assert serial.throughput == par.throughput and serial.generations == par.generations
    twin = ls.dmcf_gga(prob, coalition_size=10, seed=9, backend="numpy")
    assert np.array_equal(serial.placement, twin.placement)
    assert np.array_equal(serial.history, twin.history)


@pytest.mark.slow
def test_dask_executor_gives_the_serial_answer():
    try:
        import distributed
    except ImportError:
        skip_unless_ci("distributed is not installed (pip install 'coalloc[dask]')")
    prob = generators.paper_setup(n_nodes=80, seed=6)
    serial = ls.dmcf_gga(prob, coalition_size=10, seed=1)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2,
                            dashboard_address=None) as client:  # fmt: skip
        par = ls.dmcf_gga(prob, coalition_size=10, seed=1, executor=client.get_executor())
    assert np.array_equal(serial.placement, par.placement)


def test_seed_changes_and_repeats():
    prob = generators.paper_setup(n_nodes=100, seed=2)
    a = ls.dmcf_gga(prob, seed=1)
    b = ls.dmcf_gga(prob, seed=1)
    assert np.array_equal(a.placement, b.placement) and a.migrations == b.migrations


def test_arrival_cutoff_defers_jobs():
    prob = LoadSharingProblem([10, 10], [6, 6, 6, 1], [0, 0, 0, 1])
    r = ls.dmcf_gga(prob, coalition_size=2, th_i=0.3, seed=0)
    # node 0 reaches 12 (|12 - 10| < 3) after two jobs: the third stays at its origin
    assert r.iterations["deferred_jobs"] == 1 and r.placement[2] == 0
    assert ls.verify_placement(prob, r.placement, claimed=r.throughput).ok


def test_result_to_dict_is_json():
    import json

    prob = generators.paper_setup(n_nodes=40, seed=2)
    d = ls.share(prob, "dmcf-gga", coalition_size=10).to_dict()
    back = json.loads(json.dumps(d, allow_nan=False))
    assert len(back["placement"]) == prob.n_jobs and back["method"] == "dmcf-gga"


@pytest.mark.parametrize(
    "args, exc, words",
    [
        (([], [1], [0]), ValueError, "capacity"),
        (([1, 0], [1], [0]), ValueError, "positive"),
        (([1, 1], [1, -1], [0, 0]), ValueError, "job_size"),
        (([1, 1], [1, 1], [0, 2]), ValueError, "job_origin"),
        (([1, 1], [1, 1], [0]), ValueError, "job_origin"),
        (([1, 1], [1, np.nan], [0, 0]), ValueError, "job_size"),
        (([1, 1], [1], [0.5]), TypeError, "job_origin"),
        (([1, 1], ["a"], [0]), TypeError, "job_size"),
    ],
)
def test_bad_problems(args, exc, words):
    with pytest.raises(exc, match=words):
        LoadSharingProblem(*args)


def test_bad_groups_and_parameters():
    with pytest.raises(ValueError, match="groups"):
        LoadSharingProblem([1, 1], [1], [0], groups=[0, 2])
    prob = LoadSharingProblem([1, 1], [1], [0])
    with pytest.raises(ValueError, match="method"):
        ls.share(prob, "nope")
    with pytest.raises(ValueError, match="coalition_size"):
        ls.share(prob, "dmcf-gga", coalition_size=0)
    with pytest.raises(ValueError, match="p"):
        ls.dmcf_gga(prob, p=1.5)
    with pytest.raises(TypeError, match="takes no parameter"):
        ls.share(prob, "fcfs", p=0.3)
    big = generators.paper_setup(n_nodes=40, seed=1)
    with pytest.raises(ValueError, match="max_variables"):
        ls.share(big, "exact", max_variables=1000)


def test_caller_data_is_not_modified():
    cap = np.array([5.0, 5.0])
    size = np.array([4.0, 3.0])
    origin = np.array([0, 0])
    prob = LoadSharingProblem(cap, size, origin)
    cap[0] = 99
    assert prob.capacity[0] == 5.0
    with pytest.raises(ValueError):
        prob.job_size[0] = 1.0


def test_verify_catches_bad_placements():
    prob = LoadSharingProblem([5, 5], [4, 3], [0, 0])
    assert not ls.verify_placement(prob, [0, 2]).ok
    assert not ls.verify_placement(prob, [0]).ok
    assert not ls.verify_placement(prob, [0, 1], claimed=8.0).ok
    assert ls.verify_placement(prob, [0, 1], claimed=7.0).ok
