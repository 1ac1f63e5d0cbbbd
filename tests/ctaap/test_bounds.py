"""Issue 29: the cluster sets' bound of dense requests (``coalloc.ctaap.bounds``).

Referees: brute force for the capped cliques, the exact method (HiGHS, proven optimal and
checked by ``ctaap.verify``) for optima. A bound must never fall below a verified optimum,
whether its searches finished or were cut short.
"""

from __future__ import annotations

import time
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc.ctaap as ct
from coalloc.ctaap.bounds import (
    best_bound,
    capped_clique,
    cluster_set_bound,
    is_dense,
    lp_bound,
)


def _optimum(request, offer) -> int:
    exact = ct.solve(request, offer, "exact", solver="highs", time_limit=60)
    assert exact.status == "optimal", exact.message
    assert ct.verify(request, offer, exact.assignment).feasible
    return int(exact.n_allocated)


def _brute_capped_clique(adj, group, caps) -> int:
    nv = adj.shape[0]
    for k in range(nv, 0, -1):
        for sub in combinations(range(nv), k):
            idx = list(sub)
            if not adj[np.ix_(idx, idx)][~np.eye(k, dtype=bool)].all():
                continue
            if np.all(np.bincount(group[idx], minlength=len(caps)) <= caps):
                return k
    return 0


@settings(max_examples=40, deadline=None)
@given(
    nv=st.integers(0, 11),
    groups=st.integers(1, 3),
    p=st.sampled_from([0.2, 0.5, 0.8, 1.0]),
    seed=st.integers(0, 10_000),
)
def test_capped_clique_is_exact_when_it_finishes(nv, groups, p, seed):
    rng = np.random.default_rng(seed)
    upper = np.triu(rng.random((nv, nv)) < p, 1)
    adj = upper | upper.T
    group = rng.integers(0, groups, nv)
    caps = rng.integers(0, 5, groups)
    want = _brute_capped_clique(adj, group, caps)
    assert capped_clique(adj, group, caps) == (want, want)
    best, top = capped_clique(adj, group, caps, max_work=0)  # stopped at once
    assert best <= want <= top


def test_capped_clique_checks_its_arguments():
    adj = np.zeros((3, 3), bool)
    with pytest.raises(ValueError, match="adj_rows"):
        capped_clique(np.zeros((2, 3), bool), [0, 0], [1])
    with pytest.raises(ValueError, match="group"):
        capped_clique(adj, [0, 0], [1])
    with pytest.raises(ValueError, match="group"):
        capped_clique(adj, [0, 0, 2], [1, 1])


def _instance(kind, n, m, seed, asym):
    if kind == "fig2":
        r, o = ct.generators.fig2(1 + seed % 5, n_tasks=n, n_clusters=m, seed=seed)
    elif kind == "fig3":
        r, o = ct.generators.fig3(n, n_clusters=m, seed=seed)
    else:  # half the pairs linked, capacities near n / m
        r, o = ct.generators.random_instance(
            n, m, edge_probability=0.5, capacity_range=(1, max(1, 2 * n // m)), seed=seed
        )
    if asym:  # an asymmetric request: each direction constrains separately
        B = r.bandwidth.toarray()
        B = B * (np.random.default_rng(seed).random(B.shape) < 0.8)
        r = ct.Request(r.properties, B)
    return r, o


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
@settings(max_examples=40, deadline=None)
@given(
    kind=st.sampled_from(["fig2", "fig3", "half"]),
    n=st.integers(1, 24),
    m=st.integers(1, 4),
    asym=st.booleans(),
    cut=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_cluster_set_bound_is_never_below_the_optimum(kind, n, m, asym, cut, seed):
    r, o = _instance(kind, n, m, seed, asym)
    info = cluster_set_bound(r, o, max_set_size=3, effort=1e-9 if cut else 1000)
    opt = _optimum(r, o)
    assert opt <= info["bound"] <= info["flow"] == ct.upper_bound(r, o)
    for _, best, beta, _ in info["sets"]:  # every set's search: a clique found, a bound
        assert best <= beta
    if not cut:
        assert info["status"] in ("optimal", "trivial")
    assert opt <= best_bound(r, o, effort=1e-9 if cut else 10)["bound"]


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_the_cluster_sets_close_most_of_the_flow_bounds_excess_on_fig3_requests():
    flow, sets, opt = [], [], []
    for seed in range(6):
        r, o = ct.generators.fig3(30, seed=seed)
        info = cluster_set_bound(r, o, effort=10)  # stronger on request: searches finish
        assert info["status"] == "optimal"
        flow.append(info["flow"])
        sets.append(info["bound"])
        opt.append(_optimum(r, o))
    assert all(b >= x for b, x in zip(sets, opt))
    assert np.mean(sets) - np.mean(opt) < 0.5 * (np.mean(flow) - np.mean(opt))


def test_best_bound_picks_the_cluster_sets_on_dense_requests_only():
    r, o = ct.generators.fig3(40, seed=1)
    assert is_dense(r)
    info = best_bound(r, o)
    assert info["kind"].startswith("cluster sets") and info["bound"] <= info["flow"]
    sparse = ct.generators.random_instance(40, 4, edge_probability=0.1, seed=1)
    assert not is_dense(sparse[0])
    assert best_bound(*sparse)["kind"] == "clique LP"


def test_the_anytime_search_and_bound_true_report_the_cluster_sets_bound():
    r, o = ct.generators.fig3(40, seed=8)
    want = best_bound(r, o)["bound"]
    assert want < ct.upper_bound(r, o)  # this instance: the flow bound is looser
    res = ct.solve(r, o, "greedy", bound=True)
    assert res.bound == want and res.gap == pytest.approx((want - res.n_allocated) / want)
    got = ct.solve(r, o, seed=0, rounds=3, sub_solver="none")
    assert got.bound <= want or got.status == "optimal"
    assert got.params["lp_bound_kind"].startswith("cluster sets") or got.status == "optimal"


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
@pytest.mark.parametrize("kind", ["fig2", "fig3", "half"])
def test_the_bounds_stay_above_verified_optima_on_many_instances(kind):
    for seed in range(15):
        n, m = 14 + seed % 9, 3 + seed % 3
        r, o = _instance(kind, n, m, 7000 + seed, asym=seed % 4 == 3)
        opt = _optimum(r, o)
        full = cluster_set_bound(r, o, effort=10)
        assert opt <= full["bound"] <= full["flow"]
        assert opt <= best_bound(r, o)["bound"]
        assert opt <= best_bound(r, o, effort=10)["bound"]


# --------------------------------------------------------------------------------------
# Issue 36: bounds capped by counts reproduce, whatever the load; a deadline drops them
# --------------------------------------------------------------------------------------


def _busy(stop):
    """A thread that keeps the interpreter busy (a loaded machine, seen from Python)."""
    x = 0
    while not stop.is_set():
        x = (x * 31 + 7) % 1_000_003
        np.dot(np.ones(2000), np.ones(2000))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ct.generators.fig2(
            2, seed=2001
        ),  # dense: cluster sets (searches stop at their cap)
        lambda: ct.generators.fig2(3, seed=3002),
        lambda: ct.generators.fig3(40, seed=8),
        lambda: ct.generators.random_instance(300, 6, edge_probability=0.03, seed=5),  # clique LP
    ],
)
@pytest.mark.parametrize("effort", [0.2, 1.0, pytest.param(10.0, marks=pytest.mark.slow)])
def test_the_same_call_gives_the_same_bound_twice_and_under_load(make, effort):
    import threading

    r, o = make()
    first = best_bound(r, o, effort=effort)
    again = best_bound(r, o, effort=effort)
    stop = threading.Event()
    worker = threading.Thread(target=_busy, args=(stop,))
    worker.start()
    try:
        loaded = best_bound(r, o, effort=effort)
        solved = ct.solve(r, o, "greedy", bound=True, bound_effort=effort)
    finally:
        stop.set()
        worker.join()
    assert first["bound"] == again["bound"] == loaded["bound"] == solved.bound
    assert first["status"] == loaded["status"] and first["kind"] == loaded["kind"]
    assert first.get("lp") == loaded.get("lp")  # the LP's dual value too, to the last bit


def test_a_search_stopped_at_its_work_cap_stays_valid_and_reproduces():
    r, o = ct.generators.fig2(2, seed=2001)  # a pair search here needs ~1e5 colourings
    cut = cluster_set_bound(r, o, effort=0.2)
    full = cluster_set_bound(r, o, effort=40)
    assert cut["status"] == "work_limit" and full["status"] == "optimal"
    assert full["bound"] <= cut["bound"] == cluster_set_bound(r, o, effort=0.2)["bound"]
    assert ct.solve(r, o, seed=0).n_allocated <= full["bound"]  # an answer never exceeds it


def test_a_bound_past_its_stop_instant_raises_rather_than_cut_short():
    import time

    from coalloc.ctaap.bounds import BoundStopped

    r, o = ct.generators.fig3(40, seed=8)
    with pytest.raises(BoundStopped):
        best_bound(r, o, stop_at=time.perf_counter())
    sparse = ct.generators.random_instance(200, 5, edge_probability=0.05, seed=2)
    with pytest.raises(BoundStopped):
        best_bound(*sparse, stop_at=time.perf_counter())
    with pytest.raises(ValueError, match="effort"):
        best_bound(r, o, effort=0)


def test_a_known_allocation_stops_the_work_but_never_changes_the_bound():
    """``at_least`` (what ``solve(..., bound=True)`` passes: its verified count) is a
    shortcut, not a different bound: the same value on Fig. 2, Fig. 3 and sparse requests,
    and the shortcut is taken on some of them."""
    met = 0
    for s in range(40):
        for request, offer in (
            ct.generators.fig2(1 + s % 5, seed=360000 + s),
            ct.generators.fig3(20 + 10 * (s % 4), seed=370000 + s),
            ct.generators.random_instance(40, 4, edge_probability=0.1, seed=s),
        ):
            res = ct.solve(request, offer, seed=0)
            assert ct.verify(request, offer, res.assignment).feasible
            plain = best_bound(request, offer)
            known = best_bound(request, offer, at_least=res.n_allocated)
            assert known["bound"] == plain["bound"]
            assert known["bound"] >= res.n_allocated
            met += known["status"] == "met"
    assert met > 0
    with pytest.raises(ValueError):
        best_bound(request, offer, at_least=-1)


@pytest.mark.parametrize("dense", [True, False])
def test_the_grouped_cluster_sets_lp_has_the_per_task_lps_value(monkeypatch, dense):
    """The cluster sets' LP is solved with one column per group of interchangeable tasks;
    its value is that of the LP with one column per (task, cluster), solved by SciPy."""
    from scipy.optimize import linprog

    from coalloc.ctaap.bounds import cluster_sets as bounds  # the module of _set_lp

    if not dense:
        monkeypatch.setattr(bounds, "_DENSE_SET_LP", 0)
    rng = np.random.default_rng(5)
    for _ in range(25):
        n, m = int(rng.integers(1, 40)), int(rng.integers(1, 6))
        compat = rng.random((n, m)) < rng.random()
        sets = [[j] for j in range(m)] + [list(W) for W in combinations(range(m), 2)]
        limits = [int(x) for x in rng.integers(0, 12, len(sets))]
        ti, cj = np.nonzero(compat)
        if ti.size == 0:
            continue
        A = np.zeros((n + len(sets), ti.size))
        A[ti, np.arange(ti.size)] = 1
        for r, W in enumerate(sets):
            A[n + r] = np.isin(cj, W)
        want = -linprog(-np.ones(ti.size), A_ub=A, b_ub=[1] * n + limits, bounds=(0, 1)).fun
        got = bounds._set_lp(compat, sets, limits, 50_000)
        assert got == pytest.approx(want, abs=1e-6)


# ------------------------------------------------ issue 36 (h46ctaap): an LP that cannot fit


def _h46_sparse(n=40, m=4, p=0.15, seed=1):
    """A sparse request (the clique LP's kind) whose LP bound beats the flow bound."""
    return ct.generators.random_instance(
        n, m, edge_probability=p, capacity_range=(max(1, n // (2 * m)), 3 * n // (2 * m)),
        seed=seed,
    )  # fmt: skip


def _h46_optimum(request, offer) -> int:
    exact = ct.solve(request, offer, "exact", solver="highs", time_limit=60)
    assert exact.status == "optimal", exact.message
    assert ct.verify(request, offer, exact.assignment).feasible
    return int(exact.n_allocated)


def test_h46_lp_skip_is_never_asked_without_a_deadline():
    """Untimed, every LP starts (the bound stays a function of the instance alone); with a
    deadline the prediction is counts over measured rates."""
    import time

    from coalloc.ctaap.bounds import _common

    assert _common.lp_skip(10**9, 10**6, "pdlp", None) is None
    assert _common.lp_skip(10, 10, "pdlp", time.perf_counter() - 1.0).startswith("predicted")
    assert _common.lp_skip(10, 10, "simplex", time.perf_counter() + 3600) is None
    work = 2 * _common.LP_RATE  # two seconds of PDLP at the rate
    assert _common.lp_skip(int(work), 1, "pdlp", time.perf_counter() + 1.0) is not None
    assert _common.lp_skip(int(work), 1, "pdlp", time.perf_counter() + 3600) is None


def test_h46_a_clique_lp_predicted_too_long_is_not_started(monkeypatch):
    """Issue 36: HiGHS's PDLP ignored a 40 ms ``time_limit`` for 0.1-0.9 s, so ``greedy``
    with ``bound=True`` at 0.05 s overran. Under a limit an LP whose predicted time does not
    fit is not started: the bound is the flow bound, valid (the exact optimum is below it),
    and the result says which bound it is. Forced here by the rate (no clock race); the
    same call untimed still solves the LP."""
    from coalloc.ctaap.bounds import _common, clique_lp

    r, o = _h46_sparse()
    untimed = ct.solve(r, o, "greedy", bound=True)
    assert untimed.bound == lp_bound(r, o)["bound"] < ct.upper_bound(r, o)
    monkeypatch.setattr(clique_lp, "SIMPLEX_NONZEROS", 0)  # PDLP, whose time is predicted
    monkeypatch.setattr(_common, "LP_RATE", 1.0)  # every LP predicted to take ages
    info = lp_bound(r, o, stop_at=time.perf_counter() + 3600)
    assert info["status"] == "lp_skipped" and info["lp"] is None
    assert info["bound"] == info["flow"] == ct.upper_bound(r, o)
    assert "pdlp" in info["lp_skipped"]
    res = ct.solve(r, o, "greedy", bound=True, time_limit=3600)
    assert res.bound == ct.upper_bound(r, o) >= _h46_optimum(r, o)
    assert "clique LP" in res.params["bound"] and "not started" in res.params["bound"]
    assert lp_bound(r, o)["status"] == "optimal"  # untimed: the rate is never asked


def test_h46_cluster_sets_without_their_lp_when_highs_cannot_load_in_time(monkeypatch):
    """Dense requests: the cluster sets' LP is tiny; what cannot fit a short limit is HiGHS's
    first import (tens of ms). Not loaded and predicted too slow to load: the bound is the
    flow with the single clusters' bounds, valid against the exact optimum."""
    import sys

    from coalloc.ctaap.bounds import _common, cluster_set_bound

    r, o = ct.generators.fig3(30, seed=4)
    optimum = _h46_optimum(r, o)  # (loads HiGHS: unloaded below, restored after the test)
    full = cluster_set_bound(r, o)
    assert "lp_skipped" not in full
    monkeypatch.setattr(_common, "HIGHS_IMPORT_SECONDS", 1e9)
    monkeypatch.delitem(sys.modules, "highspy", raising=False)
    info = cluster_set_bound(r, o, stop_at=time.perf_counter() + 3600)
    assert "sets' LP" in info["lp_skipped"] and "highspy" not in sys.modules
    assert full["bound"] < info["bound"] <= info["flow"]  # weaker without the LP, here
    assert info["bound"] >= optimum


@pytest.mark.parametrize("limit", [1e-4, 0.003, 0.02])
def test_h46_a_bound_under_a_tiny_limit_is_absent_or_valid(limit):
    """Whatever the clock does, a heuristic's bound under a tiny limit is absent (no bound
    rather than one cut by the clock) or at least the exact optimum."""
    cases = [
        _h46_sparse(),
        ct.generators.fig3(30, seed=4),
        ct.generators.fig2(2, n_tasks=30, seed=2),
    ]
    for r, o in cases:
        res = ct.solve(r, o, "greedy", bound=True, time_limit=limit)
        if res.bound is not None:
            assert res.bound >= _h46_optimum(r, o)
            assert res.bound <= ct.upper_bound(r, o)


def test_h46_the_pair_count_looks_at_its_deadline_between_chunks(monkeypatch):
    """The largest common neighbourhood is counted 2^12 pairs at a time with a look at the
    bound's ``stop_at`` between chunks (2^16 at once ran 40-100 ms past a 0.05-0.14 s limit
    on a 1,000-task Fig. 2 request): the same count as the matrix product (the referee),
    whatever the chunk, and a passed ``stop_at`` raises rather than cut the count."""
    from coalloc.ctaap.bounds import BoundStopped, cliques

    rng = np.random.default_rng(5)
    X = rng.random((90, 70)) < 0.3
    pairs = rng.random((90, 90)) < 0.2
    product = (X.astype(np.int64) @ X.T.astype(np.int64))
    mask = np.triu(pairs, 1) | np.triu(pairs.T, 1)
    expect = int(product[mask].max())
    assert cliques._most_common_neighbours(X, pairs) == expect
    monkeypatch.setattr(cliques, "_PAIR_CHUNK", 7)
    assert cliques._most_common_neighbours(X, pairs, time.perf_counter() + 3600) == expect
    with pytest.raises(BoundStopped):
        cliques._most_common_neighbours(X, pairs, time.perf_counter() - 1.0)


def test_h46_a_bound_whose_first_pass_cannot_fit_is_not_started(monkeypatch):
    """The flow bound's tightened capacities make one unpolled pass over the links (60-110 ms
    past a 0.05 s limit in a fresh process on 1,000 Fig. 2 tasks). Under a ``stop_at`` that
    the pass is predicted to outlast (forced by the rate here), the bound is not started
    (BoundStopped: no bound, never a cut one); once the pair's capacities are known, or
    without a ``stop_at``, it runs, and gives the untimed bound."""
    from coalloc.ctaap.bounds import BoundStopped, flow
    from coalloc.ctaap.bounds.flow import tightening_fits

    r, o = ct.generators.fig2(2, n_tasks=40, seed=11)  # a pair no other test has seen
    monkeypatch.setattr(flow, "TIGHTENING_RATE", 1e-9)
    later = time.perf_counter() + 3600
    assert not tightening_fits(r, o, later) and tightening_fits(r, o, None)
    for bound in (cluster_set_bound, lp_bound):
        with pytest.raises(BoundStopped):
            bound(r, o, stop_at=later)
    untimed = best_bound(r, o)  # computes (and keeps) the pair's capacities
    assert tightening_fits(r, o, later)
    assert best_bound(r, o, stop_at=later)["bound"] == untimed["bound"]
    solved = ct.solve(r, o, "greedy", bound=True, time_limit=3600)
    assert solved.bound == untimed["bound"]
