"""The solvers always return feasible allocations; CTAAP is deterministic and validated."""

import numpy as np
import pytest
import scipy.sparse as sp

import coalloc
from coalloc.ctaap._reference.cleanup import match_and_clean_reference
from coalloc.ctaap.generators import fig2, fig3, random_instance
from coalloc.ctaap.model import KernelLinks, compatibility


def check(req, off, res):
    rep = coalloc.verify(req, off, res.assignment)
    assert rep.feasible, (res, rep)
    assert rep.n_allocated == res.n_allocated
    assert res.assignment.dtype == np.int64 and res.assignment.shape == (req.n,)
    return rep


@pytest.mark.parametrize("r", [1, 2, 3, 4, 5])
def test_fig2_instances_feasible(r):
    """Hundreds of instances of the paper's Fig. 2 setup: never a violated constraint."""
    for seed in range(40):
        req, off = fig2(r, seed=1000 * r + seed)
        for method in ("ctaap", "greedy"):
            check(req, off, coalloc.solve(req, off, method, seed=seed))


@pytest.mark.parametrize("n", [10, 20, 40, 80, 120])
def test_fig3_instances_feasible(n):
    for seed in range(6):
        req, off = fig3(n, seed=seed)
        res = coalloc.solve(req, off, seed=seed)
        check(req, off, res)
        assert res.n_allocated >= 1


def random_asymmetric(rng, n, m):
    dense = rng.integers(1, 50, (n, n)) * (rng.random((n, n)) < rng.uniform(0.05, 0.9))
    np.fill_diagonal(dense, 0)
    req = coalloc.Request(
        {"cpu": rng.integers(0, 10, n), "mem": rng.integers(0, 10, n), "disk": rng.random(n)},
        sp.csr_array(dense.astype(float)),
    )
    off = coalloc.Offer(
        {"cpu": rng.integers(0, 12, m), "mem": rng.integers(0, 12, m), "disk": rng.random(m) + 0.5},
        capacity=rng.integers(0, max(2, n // 2), m),
        bandwidth=rng.integers(0, 60, (m, m)),
    )
    return req, off


def test_random_asymmetric_and_sparse_feasible():
    rng = np.random.default_rng(123)
    for trial in range(150):
        req, off = random_asymmetric(rng, int(rng.integers(1, 40)), int(rng.integers(1, 7)))
        for method in ("ctaap", "greedy"):
            check(req, off, coalloc.solve(req, off, method, seed=trial))


@pytest.mark.parametrize(
    "params",
    [
        {"compat_fn": "threshold"},
        {"compat_fn": "penalty"},
        {"compat_fn": (2.0, -0.5)},
        {"q_scale": "none"},
        {"q_scale": 3.5},
        {"matching": "weight"},
        {"tol_outer": 0.0, "tol_inner": 0.0},
        {"beta0": 1.0, "beta_f": 5.0, "beta_r": 1.5, "max_outer": 1, "max_inner": 3},
        pytest.param({"backend": "numpy"}, marks=pytest.mark.slow),
        {"local_search": 300},
        pytest.param({"local_search": 40, "backend": "numpy"}, marks=pytest.mark.slow),
        {"order": "random", "restarts": 3},
        {"order": "degree"},
    ],
)
def test_parameters_keep_feasibility(params):
    method = "greedy" if "order" in params else "ctaap"
    for seed in range(8):
        req, off = fig2(1 + seed % 5, seed=seed)
        res = coalloc.solve(req, off, method, seed=seed, **params)
        check(req, off, res)


def test_large_q_is_numerically_stable():
    """beta up to 10 with unscaled Q in the hundreds: no overflow, weights in [0, 1]."""
    req, off = fig3(300, seed=1)
    res = coalloc.solve(req, off, q_scale="none", compat_fn="threshold")
    check(req, off, res)
    assert np.all(np.isfinite(res.weights))
    assert res.weights.min() >= 0 and res.weights.max() <= 1


def test_same_seed_same_answer():
    req, off = fig3(60, seed=4)
    a = coalloc.solve(req, off, seed=7)
    b = coalloc.solve(req, off, seed=7)
    np.testing.assert_array_equal(a.assignment, b.assignment)
    np.testing.assert_array_equal(a.weights, b.weights)
    g1 = coalloc.solve(req, off, "greedy", seed=3, order="random")
    g2 = coalloc.solve(req, off, "greedy", seed=3, order="random")
    np.testing.assert_array_equal(g1.assignment, g2.assignment)


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_compiled_and_numpy_backends_run_the_same_step1():
    req, off = fig2(3, seed=5)
    a = coalloc.solve(req, off, seed=1)
    b = coalloc.solve(req, off, seed=1, backend="numpy")
    np.testing.assert_allclose(a.weights, b.weights, rtol=1e-6, atol=1e-9)
    check(req, off, b)


def test_result_fields():
    req, off = fig2(2, seed=0)
    res = coalloc.solve(req, off, bound=False)
    assert res.method == "ctaap" and res.status == "feasible" and res.success
    # the default bound=True (issue 39: as the CLI) proves this answer: the bound is met
    proved = coalloc.solve(req, off)
    assert proved.n_allocated == res.n_allocated and proved.bound is not None
    assert proved.status == ("optimal" if proved.n_allocated >= proved.bound else "feasible")
    assert set(res.timings) >= {"step1", "step2", "step3", "total"}
    assert res.iterations["beta_steps"] == 42  # ceil(log(10/0.5)/log(1.075)) steps
    assert res.iterations["q_evaluations"] >= 42
    # The removals, recounted by the NumPy twin of steps 2-3 from the result's own weights.
    ref_assign, ref_removals = match_and_clean_reference(
        KernelLinks.of(req), off.bandwidth, res.weights,
        compatibility(req, off).view(np.uint8), off.capacity,
        res.params["matching"] == "cardinality",
    )  # fmt: skip
    assert res.n_removals == ref_removals > 0
    assert res.n_allocated >= int((ref_assign >= 0).sum())  # fill and search only add
    assert res.weights.shape == (req.n, off.m)
    assert res.params["beta_r"] == 1.075
    d = res.to_dict()
    assert d["n_allocated"] == res.n_allocated and len(d["assignment"]) == req.n
    assert "ctaap" in repr(res)


def test_cleanup_is_needed_and_works():
    """Two tasks that must not share a cluster: step 2 alone would put both in cluster 0."""
    req = coalloc.Request({"cpu": [1, 1]}, bandwidth=[[0, 9], [9, 0]])
    off = coalloc.Offer({"cpu": [1]}, capacity=[2], bandwidth=[[1]])
    res = coalloc.solve(req, off)
    check(req, off, res)
    assert res.n_allocated == 1 and res.n_removals >= 1


def test_trivial_instances():
    empty_req = coalloc.Request({"cpu": []})
    off = coalloc.Offer({"cpu": [1, 2]}, capacity=[1, 1], bandwidth=np.ones((2, 2)))
    for method in ("ctaap", "greedy"):
        res = coalloc.solve(empty_req, off, method)
        assert res.n_allocated == 0 and res.assignment.shape == (0,)
    req = coalloc.Request({"cpu": [1, 1, 1]})
    no_clusters = coalloc.Offer({"cpu": []}, capacity=[])
    for method in ("ctaap", "greedy"):
        res = coalloc.solve(req, no_clusters, method)
        assert res.n_allocated == 0
        np.testing.assert_array_equal(res.assignment, [-1, -1, -1])
    # No links at all: everything that fits is allocated.
    off = coalloc.Offer({"cpu": [1]}, capacity=[5])
    res = coalloc.solve(req, off)
    assert res.n_allocated == 3
    zero_cap = coalloc.Offer({"cpu": [1]}, capacity=[0])
    assert coalloc.solve(req, zero_cap).n_allocated == 0


def test_no_offer_links_forbid_linked_pairs():
    req, _ = random_instance(20, 3, edge_probability=0.3, seed=2)
    off = coalloc.Offer({"cpu": [1000] * 3, "mem": [1000] * 3}, capacity=[20, 20, 20])
    for method in ("ctaap", "greedy"):
        res = coalloc.solve(req, off, method)
        check(req, off, res)
        placed = np.flatnonzero(res.assignment >= 0)
        assert req.bandwidth[placed][:, placed].nnz == 0  # an independent set


@pytest.mark.parametrize(
    "kwargs, exc, words",
    [
        ({"method": "nope"}, ValueError, "method must be one of"),
        ({"seed": "x"}, TypeError, "seed must be an int"),
        ({"beta_r": 1.0}, ValueError, "beta_r"),
        ({"beta0": -1}, ValueError, "beta0"),
        ({"max_outer": 0}, ValueError, "max_outer"),
        ({"max_inner": 2.5}, ValueError, "max_inner"),
        ({"tol_inner": -1}, ValueError, "tol_inner"),
        ({"compat_fn": "other"}, ValueError, "compat_fn"),
        ({"compat_fn": (1, "a")}, TypeError, "compat_fn"),
        ({"q_scale": "big"}, ValueError, "q_scale"),
        ({"q_scale": -2}, ValueError, "q_scale"),
        ({"matching": "max"}, ValueError, "matching"),
        ({"backend": "gpu"}, ValueError, "backend"),
        ({"local_search": -1}, ValueError, "local_search"),
        ({"local_search": 2.5}, ValueError, "local_search"),
        ({"local_search": True}, ValueError, "local_search"),
        ({"unknown": 1}, TypeError, "unknown"),
        ({"method": "greedy", "order": "x"}, ValueError, "order"),
        ({"method": "greedy", "restarts": 0}, ValueError, "restarts"),
    ],
)
def test_bad_parameters(kwargs, exc, words):
    req, off = fig2(1, n_tasks=5, seed=0)
    with pytest.raises(exc, match=words):
        coalloc.solve(req, off, **kwargs)


def test_numpy_seed_accepted():
    req, off = fig2(1, n_tasks=8, seed=0)
    a = coalloc.solve(req, off, seed=np.int64(3))
    assert a.seed == 3


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_bound_and_gap_reported_on_request():
    req, off = fig2(3, seed=8)
    res = coalloc.solve(req, off, bound=True)
    assert res.bound >= res.n_allocated
    assert res.gap == pytest.approx((res.bound - res.n_allocated) / max(1, res.bound))
    assert coalloc.solve(req, off, bound=False).bound is None
    assert coalloc.solve(req, off).bound == res.bound  # bound=True is the default (issue 39)
    exact = coalloc.solve(req, off, "exact", bound=True)
    assert exact.status == "optimal" and exact.bound == exact.n_allocated and exact.gap == 0
    assert exact.n_allocated >= res.n_allocated


def test_local_search_never_shrinks_and_is_seeded():
    for seed in range(15):
        req, off = fig2(1 + seed % 5, seed=500 + seed)
        base = coalloc.solve(req, off, seed=seed)
        better = coalloc.solve(req, off, seed=seed, local_search=500)
        check(req, off, better)
        assert better.n_allocated >= base.n_allocated
        again = coalloc.solve(req, off, seed=seed, local_search=500)
        np.testing.assert_array_equal(better.assignment, again.assignment)
        assert better.iterations["search_best_size"] == better.n_allocated


def test_paper_switch_restores_the_papers_algorithm():
    """paper=True is steps 1-3 exactly (no fill, no local search); the default never loses."""
    gained = 0
    for seed in range(30):
        req, off = fig2(1 + seed % 5, seed=7000 + seed)
        paper = coalloc.solve(req, off, seed=seed, paper=True)
        literal = coalloc.solve(req, off, seed=seed, fill=False, local_search=0)
        forced = coalloc.solve(req, off, seed=seed, paper=True, fill=True, local_search=50)
        default = coalloc.solve(req, off, seed=seed)
        for res in (paper, literal, forced, default):
            check(req, off, res)
        np.testing.assert_array_equal(paper.assignment, literal.assignment)
        np.testing.assert_array_equal(paper.assignment, forced.assignment)
        assert paper.params["fill"] is False and paper.params["local_search"] == 0
        assert default.params["local_search"] > 0 and default.params["fill"] is True
        assert default.n_allocated >= paper.n_allocated
        gained += default.n_allocated > paper.n_allocated
    assert gained > 0
    with pytest.raises(TypeError, match="paper"):
        coalloc.solve(req, off, paper="yes")
