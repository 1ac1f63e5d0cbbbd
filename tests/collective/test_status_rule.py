"""Issue 36 in the collective family: one status rule, a time limit that keeps the best answer,
one vocabulary (``solver=``), checked against referees written here.

The family minimises the start first (``sense == "min"``): ``objective`` is the start of an
accepted request, ``bound`` a proven lower bound on the earliest admissible start, and
``"optimal"`` means the start meets it. The referee below recomputes the earliest start by
brute force (every breakpoint, every subset), sharing no code with the methods.
"""

from __future__ import annotations

import json
import math
import warnings
from itertools import combinations

import numpy as np
import pytest

import coalloc.collective as co
from coalloc._shared import interrupt
from coalloc.collective import METHODS, coallocate, verify
from coalloc.collective.generators import random_instance
from coalloc.collective.model import TOLERANCE


def earliest_start(pool, req):
    """The earliest admissible start (None: none in the window), by brute force."""
    e, d = req.vectors(pool.names)
    tau = TOLERANCE * np.max(pool.capacity, axis=0, initial=0.0)
    times, res, cap = pool.times, pool.reserved, pool.capacity
    lo, hi = req.earliest_start, req.latest_start
    labels = pool.match(req.labels)
    for t in [lo] + [float(x) for x in times if lo < x <= hi]:
        end = t + req.duration
        seg = [k for k in range(len(times))
               if times[k] < end and (k + 1 == len(times) or times[k + 1] > t)]  # fmt: skip
        avail = {}
        for j in range(pool.n_nodes):
            a = cap[j] - res[j][:, seg].max(axis=1)
            if labels[j] and np.all(a >= e - tau):
                avail[j] = a
        for combo in combinations(sorted(avail), req.count):
            if np.all(sum(avail[j] for j in combo) >= d - req.count * tau):
                return t
    return None


def instances(k, base=0):
    for s in range(base, base + k):
        rng = np.random.default_rng(1000 + s)
        yield random_instance(int(rng.integers(4, 9)), int(rng.integers(1, 4)),
                              n_properties=int(rng.integers(1, 4)), collective=s % 3 != 0,
                              load=float(rng.uniform(0.2, 0.9)), seed=1000 + s)  # fmt: skip


def rule(result) -> str:
    """The status the rule gives ``result`` (a method that ended by itself), recomputed."""
    if result.start is None:
        return "infeasible" if result.proven else "no_solution"
    scale = max(abs(result.start), abs(result.bound))
    gap = 0.0 if scale == 0 else max(0.0, result.start - result.bound) / scale
    return "optimal" if gap <= 1e-9 else "feasible"


@pytest.mark.parametrize("method", ["scan", "cankar", "exact", "brute_force"])
def test_status_follows_the_rule_against_a_brute_force_earliest_start(method):
    seen = set()
    for pool, req in instances(40):
        ref = earliest_start(pool, req)
        res = coallocate(pool, req, method, seed=5)
        assert res.sense == "min"
        assert res.status == rule(res), (res.status, res.message)
        seen.add(res.status)
        if res.start is None:
            assert res.bound is None and res.gap is None and res.objective is None
            if res.status == "infeasible":  # a proof: the referee agrees
                assert ref is None, res.message
            continue
        assert verify(req, pool, res).ok
        assert res.objective == res.start and math.isfinite(res.bound)
        assert ref is not None and res.bound <= ref + 1e-9 <= res.start + 2e-9  # a valid bound
        if method != "cankar":  # the scan, exact and the brute force prove the earliest start
            assert res.status == "optimal" and res.start == pytest.approx(ref, abs=1e-9)
    if method == "cankar":  # the heuristic's rejections are not proofs
        assert "no_solution" in seen or "infeasible" in seen
    else:
        assert seen <= {"optimal", "infeasible"} and "optimal" in seen


def test_the_scan_proof_is_in_the_message_and_the_heuristic_says_no_proof():
    # two nodes, each too small for the total alone, busy at alternating times: no start
    times = np.arange(4) * 100.0
    reserved = np.zeros((2, 1, 4))
    reserved[0, 0, 0::2] = 3.0
    reserved[1, 0, 1::2] = 3.0
    pool = co.ResourcePool([[4.0], [4.0]], ["cores"], times, reserved)
    req = co.CollectiveRequest(100.0, 2, 0.0, 300.0, minimum={"cores": 1},
                               total={"cores": 6})  # fmt: skip
    assert earliest_start(pool, req) is None
    scan = coallocate(pool, req, "scan")
    assert scan.status == "infeasible" and scan.proven and "Proof" in scan.message
    cankar = coallocate(pool, req, "cankar", seed=0)
    assert cankar.status == "no_solution" and not cankar.proven
    assert "not a proof" in cankar.message and cankar.bound is None


def _stall_after(monkeypatch, kernel: str, calls: int):
    """Make the compiled kernel ``kernel`` poll the deadline for ever after ``calls`` calls:
    a search that the time limit must stop."""
    from coalloc.collective import _search

    real = getattr(_search, kernel)
    count = {"n": 0}

    def slow(*args, **kwargs):
        count["n"] += 1
        if count["n"] > calls:
            assert interrupt.current() is not None, "a stall without a time limit"
            while True:
                interrupt.check()
        return real(*args, **kwargs)

    monkeypatch.setattr(_search, kernel, slow)
    return count


def _hard_factor_instance():
    """A request whose earliest start is at the window's opening and whose set is searched by
    swaps (more subsets than the scan enumerates)."""
    rng = np.random.default_rng(7)
    pool = co.ResourcePool(rng.uniform(1, 10, size=(40, 2)), ["a", "b"])
    req = co.CollectiveRequest(60.0, 5, minimum={"a": 0.5, "b": 0.5}, total={"a": 20, "b": 20})
    return pool, req


def test_scan_stopped_after_its_first_set_returns_it_verified(monkeypatch):
    pool, req = _hard_factor_instance()
    _stall_after(monkeypatch, "swap_search", 1)  # the first swap search ends, then a stall
    res = coallocate(pool, req, "scan", time_limit=0.3)
    assert res.has_solution and verify(req, pool, res).ok
    # the start (the window's opening) meets its bound: "optimal" by the rule, stopped or not
    assert res.status == "optimal" and res.start == res.bound == 0.0
    assert "best found so far" in res.message and res.params["time_limit"] == 0.3
    monkeypatch.undo()
    full = coallocate(pool, req, "scan")  # the same start; a factor at least as good
    assert full.start == res.start and full.utilisation >= res.utilisation - 1e-12


def test_cankar_stopped_in_phase5_returns_the_phase4_set(monkeypatch):
    pool, req = _hard_factor_instance()
    _stall_after(monkeypatch, "phase5", 0)
    res = coallocate(pool, req, "cankar", seed=1, time_limit=0.2)
    assert res.has_solution and verify(req, pool, res).ok
    assert res.status == "optimal" and "best found so far" in res.message  # start = t_e
    monkeypatch.undo()
    untimed = coallocate(pool, req, "cankar", seed=1, l2=0)  # Phase IV's set itself
    assert sorted(untimed.resources.tolist()) == sorted(res.resources.tolist())


def test_cankar_stopped_with_a_later_start_is_time_limit(monkeypatch):
    pool, req = _hard_factor_instance()
    reserved = np.zeros((pool.n_nodes, 2, 2))
    reserved[:, :, 0] = pool.capacity * 0.99  # everything busy in the first slot
    busy = co.ResourcePool(pool.capacity, pool.names, np.array([0.0, 100.0]), reserved)
    _stall_after(monkeypatch, "phase5", 0)
    res = coallocate(busy, req, "cankar", seed=1, time_limit=0.2)
    assert res.status == "time_limit" and res.has_solution and verify(req, busy, res).ok
    assert res.start == 100.0 and res.bound == req.earliest_start and res.gap == 1.0


def test_a_method_without_an_answer_by_the_deadline_says_so(monkeypatch):
    pool, req = _hard_factor_instance()
    _stall_after(monkeypatch, "swap_search", 0)  # before any set
    res = coallocate(pool, req, "scan", time_limit=0.2)
    assert res.status == "time_limit" and not res.has_solution and res.start is None
    assert res.bound is None and "before a solution" in res.message


def test_reserve_with_a_stopped_scan_reserves_the_answer(monkeypatch):
    pool, req = _hard_factor_instance()
    _stall_after(monkeypatch, "swap_search", 1)
    before = pool.reserved.sum()
    res = coallocate(pool, req, "scan", time_limit=0.3, reserve=True)
    assert res.has_solution
    assert pool.reserved.sum() == pytest.approx(before + res.amounts.sum())


def test_exact_takes_solver_and_backend_is_its_deprecated_name():
    import inspect

    pool, req = _hard_factor_instance()
    assert "backend" not in inspect.signature(co.exact).parameters
    assert "solver" in inspect.signature(METHODS["exact"]).parameters
    res = coallocate(pool, req, "exact", solver="cbc", enumerate_limit=1)
    assert res.params["solver"] == "cbc" and "backend" not in res.params
    with pytest.warns(DeprecationWarning, match="backend"):
        old = coallocate(pool, req, "exact", backend="cbc", enumerate_limit=1)
    assert old.params == res.params and old.start == res.start
    with pytest.raises(TypeError, match="disagree"):
        coallocate(pool, req, "exact", backend="cbc", solver="highs")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the scan's backend is the kernel: no warning
        assert coallocate(pool, req, "scan", backend="numpy").params["backend"] == "numpy"


@pytest.mark.parametrize("method", ["scan", "cankar", "exact"])
def test_cli_prints_the_status_the_json_holds(tmp_path, capsys, method):
    from coalloc.cli import main
    from coalloc.collective import io as cio

    statuses = set()
    for k, (pool, req) in enumerate(instances(12, base=50)):
        pp, rp = tmp_path / f"p{k}.json", tmp_path / f"r{k}.json"
        cio.write_pool(pp, pool)
        cio.write_request(rp, req)
        args = ["collective", "solve", str(rp), str(pp), "--method", method, "--seed", "2"]
        code = main([*args, "--json", "--quiet"])
        doc = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert main([*args, "--quiet"]) == code
        text = capsys.readouterr().out.splitlines()[0]
        assert text.endswith(f"({doc['status']})") or f"rejected ({doc['status']})" in text
        assert code == (0 if doc["status"] in ("optimal", "feasible") else 1)
        statuses.add(doc["status"])
    assert len(statuses) >= 2  # both an answer and a rejection were printed


def _hard_starts(slots: int = 60):
    """Every other slot a start whose integer program is infeasible although the screens
    pass (40 nodes rich in one property, 40 in the other; three must meet both totals); a last
    node, busy until the last slot, completes a set there. The totals leave the linear
    relaxation feasible (one and a half nodes of each kind), so no weighted sum proves a start
    empty (issue 40): only the integer program does."""
    k = 80  # C(80, 3) sets: more than the scan enumerates
    cap = np.vstack([np.tile([10.0, 0.5], (40, 1)), np.tile([0.5, 10.0], (40, 1)),
                     [[30.0, 30.0]]])  # fmt: skip
    times = np.arange(slots) * 10.0
    reserved = np.zeros((k + 1, 2, slots))
    reserved[0, 0, 0::2] = 0.2
    reserved[k, :, :-1] = 29.95
    pool = co.ResourcePool(cap, ["a", "b"], times, reserved)
    req = co.CollectiveRequest(1.0, 3, 0.0, float(times[-1]), minimum={"a": 0.1, "b": 0.1},
                               total={"a": 15.5, "b": 15.5})  # fmt: skip
    return pool, req


def test_the_portfolio_keeps_the_heuristics_answer_while_the_scan_proves(monkeypatch):
    import importlib

    scan_module = importlib.import_module("coalloc.collective.scan")

    pool, req = _hard_starts()
    plain = coallocate(pool, req, "scan", portfolio=False)
    assert plain.status == "optimal" and "portfolio_cankar" not in plain.iterations
    full = coallocate(pool, req, "scan", portfolio=True)
    assert full.start == plain.start and full.iterations["portfolio_cankar"] == 1
    assert full.utilisation >= plain.utilisation - 1e-12 and verify(req, pool, full).ok

    real, calls = scan_module.feasible_subset, {"n": 0}

    def stall(*args, **kwargs):  # the integer programs never end: the deadline stops them
        calls["n"] += 1
        if calls["n"] > 2:
            while True:
                interrupt.check()
        return real(*args, **kwargs)

    monkeypatch.setattr(scan_module, "feasible_subset", stall)
    res = coallocate(pool, req, "scan", time_limit=0.5)
    assert res.status == "time_limit" and res.has_solution and verify(req, pool, res).ok
    assert res.method == "scan" and res.start == plain.start  # the heuristic's start here
    assert res.iterations["portfolio_cankar"] == 1 and res.bound < res.start  # the frontier
    assert res.bound >= 10.0  # past the starts the first programs decided


def test_the_portfolio_at_a_budget_is_at_least_as_good_as_exact():
    rng = np.random.default_rng(3)
    pool = co.ResourcePool(rng.uniform(1, 10, size=(30, 3)), ["a", "b", "c"])
    req = co.CollectiveRequest(1.0, 4, minimum={"a": 0.5, "b": 0.5, "c": 0.5},
                               total={"a": 20, "b": 20, "c": 20})  # fmt: skip
    ex = coallocate(pool, req, "exact")  # C(30, 4) = 27,405 sets: the factor enumerated
    assert "proven maximal" in ex.message
    timed = coallocate(pool, req, "scan", time_limit=60)
    assert timed.status == "optimal" and verify(req, pool, timed).ok
    assert timed.start == ex.start and timed.utilisation >= ex.utilisation * (1 - 1e-12)
    assert "every set enumerated" in timed.message
    plain = coallocate(pool, req, "scan")  # untimed: the plain scan (no enumeration here)
    assert "portfolio" in plain.params and plain.params["portfolio"] is None  # as given
