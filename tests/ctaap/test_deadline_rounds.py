"""Issue 36 (h47ctaap): the anytime search's deadline met inside its rounds.

A deadline that passes inside a round (the compiled local search's ``improve``) or inside
the cluster sets' bound (which runs between rounds) ends the search with the best
allocation it had, verified, and status ``time_limit``. No clock race: the deadline is
moved to *now* (the scope's instant) at a chosen point, and the referee is the same search
run for a fixed number of rounds (``rounds=k``, no clock), which is deterministic. The
bound's chunked loops are checked against the definition of the compatibility graph and
against one-chunk runs (the same arrays, the same bound). Nothing here is timed.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import coalloc.ctaap as ct
from coalloc._shared import params as checks
from coalloc.ctaap import anytime
from coalloc.ctaap.bounds import BoundStopped, cliques, cluster_set_bound
from coalloc.ctaap.model import compatibility


def _sparse(n, m, p, seed):
    return ct.generators.random_instance(
        n, m, edge_probability=p, capacity_range=(max(1, n // (2 * m)), 3 * n // (2 * m)),
        seed=seed,
    )  # fmt: skip


def _deadline_now() -> None:
    """The running time limit's instant moved to now (the next look stops)."""
    checks._budget().when = time.perf_counter()


@pytest.mark.parametrize("stop_round", [0, 1])
def test_a_deadline_inside_a_rounds_local_search_keeps_the_verified_best(monkeypatch,
                                                                         stop_round):  # fmt: skip
    """The real compiled ``improve`` of round ``stop_round`` meets the deadline at its
    first look; the result is the allocation after ``stop_round`` rounds, i.e. the
    untimed search with ``rounds=stop_round`` (its referee, with ``verify``)."""
    r, o = _sparse(300, 6, 10 / 299, seed=5)
    opts = dict(seed=0, sub_solver="none", lp_bound_share=0.0)
    real = anytime._Run.round
    seen = []

    def round_(self, k, seed, ls_iters):
        seen.append(k)
        if k == stop_round:
            _deadline_now()
        return real(self, k, seed, ls_iters)

    monkeypatch.setattr(anytime._Run, "round", round_)
    res = ct.solve(r, o, time_limit=600, **opts)
    monkeypatch.setattr(anytime._Run, "round", real)
    assert seen == list(range(stop_round + 1))  # the search was in that round
    assert res.status == "time_limit" and res.method == "ctaap" and res.has_solution
    assert ct.verify(r, o, res.assignment).feasible
    if stop_round == 0:
        ref = ct.solve_ctaap(r, o, seed=0)  # no round ran: the default's answer
    else:
        ref = ct.solve(r, o, rounds=stop_round, **opts)
        assert ref.status == "feasible" and ref.iterations["rounds"] == stop_round
    assert np.array_equal(res.assignment, ref.assignment)
    assert res.n_allocated == ref.n_allocated == res.objective
    assert res.bound >= res.n_allocated


def test_a_deadline_inside_the_cluster_sets_bound_keeps_the_verified_best(monkeypatch):
    """Fig. 3 requests are dense: the bound after two rounds is the cluster sets'. The
    deadline passes at the 5th look inside its chunked loops (chunks made tiny); the result
    is the allocation after the two rounds, verified (referee: ``rounds=2``, no bound)."""
    r, o = ct.generators.fig3(300, seed=4)
    opts = dict(seed=0, sub_solver="none")
    ref = ct.solve(r, o, rounds=2, lp_bound_share=0.0, **opts)
    if ref.status == "optimal":
        pytest.fail("the instance must leave the bound to compute (choose another seed)")
    monkeypatch.setattr(cliques, "_CHUNK", 64)
    real_poll = cliques._poll
    looks = []

    def poll(stop_at):
        looks.append(stop_at)
        if len(looks) == 5:
            _deadline_now()
        return real_poll(stop_at)

    monkeypatch.setattr(cliques, "_poll", poll)
    res = ct.solve(r, o, time_limit=600, **opts)
    assert len(looks) == 5  # stopped at the look after the deadline moved
    assert res.status == "time_limit" and res.has_solution
    assert ct.verify(r, o, res.assignment).feasible
    assert res.iterations["rounds"] == 2
    assert np.array_equal(res.assignment, ref.assignment)
    assert res.n_allocated == ref.n_allocated == res.objective


def _adjacency_by_definition(request, offer, clusters):
    """The referee: vertices (i, j) cluster by cluster, tasks rising; adjacent when i != k,
    B[i, k] <= bhat[j, l] and B[k, i] <= bhat[l, j]."""
    B = request.bandwidth.toarray()
    bhat = offer.bandwidth
    compat = compatibility(request, offer)
    verts = [(i, j) for j in clusters for i in np.flatnonzero(compat[:, j])]
    adj = np.zeros((len(verts), len(verts)), dtype=bool)
    for u, (i, j) in enumerate(verts):
        for v, (k, l) in enumerate(verts):
            adj[u, v] = i != k and B[i, k] <= bhat[j, l] and B[k, i] <= bhat[l, j]
    return adj


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("symmetric", [True, False])
def test_the_chunked_adjacency_is_the_definition(monkeypatch, dense, symmetric):
    if symmetric:
        r, o = ct.generators.fig3(40, seed=1)
    else:
        r, o = _sparse(40, 3, 0.5, seed=2)
        B = r.bandwidth.toarray()
        B = B * (np.random.default_rng(2).random(B.shape) < 0.6)  # one direction of some links
        r = ct.Request(r.properties, B)
    assert r.symmetric == symmetric
    monkeypatch.setattr(cliques, "_CHUNK", 16)  # many chunks of rows
    clusters = [0, 1] if o.m > 1 else [0]
    compat = compatibility(r, o)
    adj, group = cliques._set_adjacency(r, o, compat, clusters,
                                        r.bandwidth.toarray() if dense else None,
                                        stop_at=time.perf_counter() + 600)  # fmt: skip
    assert np.array_equal(adj, _adjacency_by_definition(r, o, clusters))
    assert np.array_equal(group, np.repeat(np.arange(len(clusters)),
                                           [compat[:, j].sum() for j in clusters]))  # fmt: skip
    with pytest.raises(BoundStopped):  # a stop_at already past: the first look stops
        cliques._set_adjacency(r, o, compat, clusters, None, stop_at=time.perf_counter() - 1)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_chunks_leave_the_cluster_sets_bound_unchanged(monkeypatch, seed):
    """The bound with chunks of 64 cells (hundreds of looks) equals the one-chunk bound, set
    by set; each set's bound is no less than the exact optimum's tasks on it (referee: the
    optimum's allocation, from the exact model)."""
    r, o = ct.generators.fig3(60, seed=seed)
    whole = cluster_set_bound(r, o, stop_at=time.perf_counter() + 600)
    monkeypatch.setattr(cliques, "_CHUNK", 64)
    chunked = cluster_set_bound(r, o, stop_at=time.perf_counter() + 600)
    strip = lambda info: [(W, b, beta) for W, b, beta, _ in info["sets"]]  # noqa: E731
    assert strip(whole) == strip(chunked) and whole["bound"] == chunked["bound"]
    assert whole["status"] == chunked["status"]
    exact = ct.solve(r, o, "exact", solver="highs", time_limit=120)
    assert exact.status == "optimal" and ct.verify(r, o, exact.assignment).feasible
    assert chunked["bound"] >= exact.n_allocated
    for W, _best, beta, _ in chunked["sets"]:
        assert beta >= int(np.isin(exact.assignment, W).sum())


def _allocations(r, o, seed):
    """Feasible allocations (the default's, first fit's) and perturbed ones (random moves,
    mostly infeasible), as vectors."""
    rng = np.random.default_rng(seed)
    good = [ct.solve_ctaap(r, o, seed=seed).assignment, ct.solve_greedy(r, o).assignment]
    out = list(good)
    for a in good:
        for _ in range(6):
            b = a.copy()
            k = rng.integers(r.n, size=rng.integers(1, 4))
            b[k] = rng.integers(-1, o.m, size=k.size)
            out.append(b)
    return out


@pytest.mark.parametrize("gen", ["sparse", "fig3", "asymmetric"])
def test_the_rounds_check_agrees_with_verify(monkeypatch, gen):
    """``_feasible`` (chunks of 64 links, the rounds' check of a larger candidate) and the
    family's ``verify`` (the referee) give the same answer, feasible and infeasible."""
    if gen == "fig3":
        r, o = ct.generators.fig3(80, seed=5)
    else:
        r, o = _sparse(120, 5, 0.1, seed=6)
        if gen == "asymmetric":
            B = r.bandwidth.toarray()
            r = ct.Request(r.properties, B * (np.random.default_rng(6).random(B.shape) < 0.5))
    monkeypatch.setattr(anytime, "CHECK_LINKS", 64)
    ctx = anytime._Context(r, o)
    verdicts = []
    for a in _allocations(r, o, seed=1):
        verdicts.append(ct.verify(r, o, a).feasible)
        assert anytime._feasible(ctx, a) == verdicts[-1]
    assert any(verdicts) and not all(verdicts)  # both kinds were checked


def test_a_deadline_inside_a_candidates_check_keeps_the_verified_best(monkeypatch):
    """The deadline passes inside the check of a round's larger candidate (after its first
    chunk of links): the candidate is not kept; the result is the best before that round,
    verified (referee: the search stopped after the rounds before it, ``rounds=k``)."""
    r, o = _sparse(300, 6, 10 / 299, seed=5)
    opts = dict(seed=0, sub_solver="none", lp_bound_share=0.0)
    monkeypatch.setattr(anytime, "CHECK_LINKS", 64)
    real_round, real_entries = anytime._Run.round, anytime._entries
    seen, calls = [], []

    def round_(self, k, seed, ls_iters):
        seen.append(k)
        return real_round(self, k, seed, ls_iters)

    def entries(M, rows):
        calls.append(rows.size)
        if len(calls) == 1:
            _deadline_now()
        return real_entries(M, rows)

    monkeypatch.setattr(anytime._Run, "round", round_)
    monkeypatch.setattr(anytime, "_entries", entries)
    res = ct.solve(r, o, time_limit=600, rounds=30, **opts)
    monkeypatch.undo()
    assert len(calls) == 1  # the check stopped at its next look
    assert res.status == "time_limit" and res.has_solution
    assert ct.verify(r, o, res.assignment).feasible
    stopped_in = seen[-1]  # rounds 0 .. stopped_in - 1 ended
    if stopped_in == 0:
        ref = ct.solve_ctaap(r, o, seed=0)
    else:
        ref = ct.solve(r, o, rounds=stopped_in, **opts)
    assert np.array_equal(res.assignment, ref.assignment)
    assert res.n_allocated == ref.n_allocated < r.n


@pytest.mark.slow  # over ~1.5 s: CI runs it (-m 'slow or not slow')
def test_a_large_instance_freed_aside_gives_the_same_answers():
    """From 2^22 links the local search frees its instance on a thread of its own (0.2-0.4 s
    of page returns after a stop, on 25 million links). Calls on a 2,100-task Fig. 3 request
    (4.4 million links): the same seed gives the same allocation, verified, never smaller
    than its start; a deadline already past stops the call with ``assign`` untouched."""
    from coalloc._shared import interrupt
    from coalloc.ctaap._localsearch import improve

    r, o = ct.generators.fig3(2100, seed=1)
    ctx = anytime._Context(r, o)
    assert ctx.B.nnz >= 1 << 22
    start = ct.solve_greedy(r, o).assignment
    args = (ctx.links, ctx.bhat, ctx.compat_u8, ctx.cap)
    outs = []
    for _ in range(2):
        a = start.copy()
        improve(*args, a, 2, 11)
        outs.append(a)
    assert np.array_equal(outs[0], outs[1])
    assert ct.verify(r, o, outs[0]).feasible
    assert (outs[0] >= 0).sum() >= (start >= 0).sum()
    a = start.copy()
    with pytest.raises(interrupt.DeadlinePassed):
        with interrupt.until(time.perf_counter() - 1):
            improve(*args, a, 2, 11, deadline=interrupt.kernel_deadline())
    assert np.array_equal(a, start)
