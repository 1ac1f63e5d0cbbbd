"""Issue 36: a time limit keeps the best mapping found so far; one status rule.

The kernels take a deadline of their own and return their best when it (or the poll:
Ctrl-C, a cancelled scope) stops them; the methods offer that mapping and the time limit
returns it with status ``time_limit``, verified. No timed assertion: the kernel tests stop
at a deadline already past (0 s), the method tests use schedules that run far longer than
their limit and instances whose first mapping comes at once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from coalloc import testbed as tb
from coalloc._shared import interrupt
from coalloc.testbed import generators as g
from coalloc.testbed.anneal import ANNEAL_DEFAULTS, kernel_data
from coalloc.testbed.problem import build_problem

DATA = Path(__file__).resolve().parents[2] / "bench" / "testbed" / "data"

#: A schedule that melts for ever (10**9 always-accepted moves, minutes), meeting valid
#: mappings on the way.
ENDLESS = {"melt_moves": 10**9, "max_moves": 10**9}


def _kernels(backend):
    if backend == "compiled":
        from coalloc.testbed._allocate import allocate_all
        from coalloc.testbed._anneal import anneal
    else:
        from coalloc.testbed._reference.allocate import allocate_all
        from coalloc.testbed._reference.anneal import anneal
    return anneal, allocate_all


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
def test_anneal_kernel_stopped_returns_its_best(backend):
    """A deadline already past: the kernel stops at its first check and returns the best
    it holds (the start mapping, valid), stopped, with no Python error to raise."""
    anneal, _ = _kernels(backend)
    pt, top = g.utah2000(), g.ring(6)
    pr = build_problem(top, pt)
    start = tb.assign(top, pt, "assign+.1")
    where = np.array([pr.pidx[start.mapping[v]] for v in pr.vnames], dtype=np.int64)
    past = interrupt.KernelDeadline(ns=1)  # the deadline struct, long past
    params = dict(ANNEAL_DEFAULTS, start=where, deadline=past)
    out = anneal(kernel_data(pr), 7, params)
    assert out["stopped"] and out["error"] is None
    assert out["valid"] and np.array_equal(out["where"], where)
    assert out["moves"] < 1000  # stopped long before the schedule's end
    free = anneal(kernel_data(pr), 7, dict(ANNEAL_DEFAULTS, start=where))
    assert not free["stopped"] and free["error"] is None and free["moves"] > 1000


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
def test_allocate_kernel_stopped_before_any_strategy(backend):
    from coalloc.testbed.assignplus import _pclass_scores, partition, plus_data

    _, allocate_all = _kernels(backend)
    pr = build_problem(g.ring(8), g.utah2000())
    data = plus_data(pr, _pclass_scores(pr, "1m", None), partition(pr))
    out = allocate_all(data, [0, 1], True, 50, True, interrupt.KernelDeadline(ns=1))
    assert out["stopped"] and out["error"] is None and np.isnan(out["isw"]).all()
    out = allocate_all(data, [0, 1], True, 50, True, None)
    assert not out["stopped"] and np.isfinite(out["isw"]).any()


def test_anneal_time_limit_returns_the_best_mapping_verified():
    """An endless melting on a small experiment: its first valid mapping comes in
    milliseconds, the limit stops it, and the best mapping found is the answer."""
    pt, top = g.utah2000(), g.ring(10)
    r = tb.assign(top, pt, "anneal", seed=3, time_limit=0.3, **ENDLESS)
    assert r.status == "time_limit" and r.success and r.mapping is not None
    assert r.objective == r.interswitch_bandwidth is not None
    assert tb.Instance(top, pt).verify(r).ok
    assert r.params["time_limit"] == 0.3 and "best found so far" in r.message


def test_every_method_takes_time_limit_in_a_batch_check():
    for method in tb.METHODS:
        tb.Instance.check_params(method, {"time_limit": 1.0})


def test_a_cancelled_scope_still_raises_its_error():
    """The poll's pending Python error (here a scope's timeout, as Ctrl-C) is raised, not
    swallowed by the kernel's catch: without a time limit nothing is returned."""
    pt, top = g.utah2000(), g.ring(10)
    with pytest.raises(TimeoutError):
        with interrupt.Scope(timeout=0.2):
            tb.assign(top, pt, "anneal", seed=3, **ENDLESS)


def test_default_under_a_limit_holds_a_verified_mapping_or_none():
    """Whatever step of the default's portfolio the limit stops, the answer is either a
    mapping that verifies (status time_limit, or the portfolio's own status when it ended
    first) or none with status time_limit."""
    pt, top = g.deterlab(255, 5, seed=1), g.ring(60)
    for limit in (0.01, 0.1, 0.3):
        r = tb.assign(top, pt, seed=1, time_limit=limit)
        assert r.status in ("time_limit", "feasible", "optimal")
        if r.mapping is not None:
            assert r.objective is not None and tb.Instance(top, pt).verify(r).ok
        else:
            assert r.status == "time_limit"


@pytest.mark.parametrize("seed", [4, 5, 9, 10])
def test_heuristics_that_end_without_a_mapping_say_no_solution(seed):
    """The 255-PC DeterLab-like testbed with 60-90-node experiments the heuristics cannot
    place: they end by themselves, with neither a mapping nor a proof: no_solution, with
    a reason; not time_limit (no limit was given), not infeasible (nothing proven)."""
    pt, top = g.deterlab(255, 5, seed=1), g.random_topology(40 + 5 * seed, seed=seed)
    for method in ("anneal", "assign+"):
        r = tb.assign(top, pt, method, seed=1)
        assert r.status == "no_solution", (method, r.status)
        assert r.mapping is None and r.bound is None and r.reason["constraint"]


def test_exact_takes_solver_and_the_old_names_warn():
    pt, top = g.utah2000(n_pcs=10), g.ring(3)
    r = tb.assign(top, pt, "exact", solver="cpsat", time_limit=30)
    assert r.status == "optimal" and r.params["solver"] == "cpsat"
    assert "time_limit_s" not in r.params
    with pytest.warns(DeprecationWarning, match="time_limit_s"):
        old = tb.assign(top, pt, "exact", time_limit_s=30)
    with pytest.warns(DeprecationWarning, match="backend"):
        tb.assign(top, pt, "exact", backend="cpsat")
    assert old.status == "optimal" and old.params["time_limit"] == 30
    with pytest.raises(TypeError, match="disagree"):
        tb.assign(top, pt, "exact", time_limit=5, time_limit_s=6)


@pytest.mark.slow
def test_test_big_on_utah2000_default_reaches_the_proven_optimum():
    """Emulab's test_big (2003) on the Utah testbed of July 2000 (bench/testbed/data): the
    exact model proves the optimum (it ended at 120 s with bound 0 before its pclass
    aggregation) and the default reaches it (it stopped at 300 before it ran the
    annealer)."""
    pt = tb.read_ptop(DATA / "utah2000.ptop")
    top = tb.read_top(DATA / "test_big.top")
    e = tb.assign(top, pt, "exact", threads=2, time_limit=60)
    assert e.status == "optimal" and e.bound == e.objective
    assert tb.Instance(top, pt).verify(e).ok
    d = tb.assign(top, pt, seed=0)
    assert d.success and tb.Instance(top, pt).verify(d).ok
    assert d.interswitch_bandwidth == e.interswitch_bandwidth
    a = tb.assign(top, pt, "anneal", seed=0)
    assert d.interswitch_bandwidth <= a.interswitch_bandwidth


@pytest.mark.parametrize("gseed", range(8))
def test_pclass_aggregation_keeps_the_exact_optimum(gseed, monkeypatch):
    """The exact model with whole-node pclasses aggregated (n[v, c]) and the per-node model
    (x[v, p] everywhere) prove the same optimum, and both mappings verify."""
    from coalloc.testbed import exact

    pt = g.deterlab(12, 3, trunk_bw=1000000, trunks_per_pair=1, seed=gseed)
    top = g.random_topology(6 + gseed % 4, seed=gseed, p_typed=0.1)  # optima 0 to 600000
    agg = tb.assign(top, pt, "exact", time_limit=60)
    monkeypatch.setattr(exact, "_whole_node_classes", lambda pr: set())
    plain = tb.assign(top, pt, "exact", time_limit=60)
    assert agg.status == plain.status
    if plain.status == "optimal":
        assert agg.objective == plain.objective
        for r in (agg, plain):
            assert tb.Instance(top, pt).verify(r).ok
