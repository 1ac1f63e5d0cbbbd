"""Issue 28: the default method's search for large N (weighted top-N sets and their proofs),
checked against brute force and the independent verify on instances small enough to
enumerate (the large-N path forced on them)."""

import importlib
from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coalloc.collective import CollectiveRequest, ResourcePool, coallocate, verify
from coalloc.collective._heuristic_sets import dual_cuts as _dual_cuts
from coalloc.collective._heuristic_sets import fill as _fill
from coalloc.collective._heuristic_sets import lagrange as _lagrange
from coalloc.collective._heuristic_sets import large_search as _large_search
from coalloc.collective._heuristic_sets import proven_by as _proven_by
from coalloc.collective._heuristic_sets import repair as _repair
from coalloc.collective._heuristic_sets import top_rows as _top
from coalloc.collective.core import kernels
from coalloc.collective.generators import random_instance

from .test_scaled_referee import build, instances

scan_module = importlib.import_module("coalloc.collective.scan")


def _any_set(a, dlo, n):
    return any(np.all(a[list(c)].sum(axis=0) >= dlo) for c in combinations(range(a.shape[0]), n))


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_lagrange_proofs_and_sets_against_enumeration(seed, ties):
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(1, 10)), int(rng.integers(1, 4))
    n = int(rng.integers(1, r + 1))
    a = rng.uniform(0, 8, (r, m))
    if ties:
        a = np.floor(a)
    # totals around what the top rows reach: feasible and infeasible cases both
    top = -np.sort(-a, axis=0)[:n].sum(axis=0)
    d = top * rng.uniform(0.5, 1.05, m) * (rng.random(m) < 0.9)
    dlo = d - n * 1e-9 * 8
    verdict, sets, steps = _lagrange(a, d, dlo, n)
    truth = _any_set(a, dlo, n)
    assert 1 <= steps or not np.any(d > 0)
    if verdict == "infeasible":
        assert not truth and not sets
    if verdict == "feasible":
        assert truth and sets
    for rows in sets:  # every set offered is admissible: n distinct rows meeting every total
        assert rows.size == n and np.unique(rows).size == n
        assert np.all(a[rows].sum(axis=0) >= dlo)


def test_lagrange_proves_what_no_single_property_shows():
    # two properties that trade off: the 2 largest of each reach its total, no 2 rows reach
    # both (the per-property screens pass, the weighted sum proves there is no set)
    a = np.array([[10.0, 0.0], [10.0, 0.0], [0.0, 10.0], [0.0, 10.0]])
    d = np.array([15.0, 15.0])
    assert -np.sort(-a, axis=0)[:2].sum(axis=0).min() >= 15
    verdict, sets, _ = _lagrange(a, d, d, 2)
    assert verdict == "infeasible" and not sets
    # a mixed set exists for totals of 10: the weights tie (every row scores the same), the
    # one-at-a-time fill finds it
    d = np.array([10.0, 10.0])
    verdict, sets, _ = _lagrange(a, d, d, 2)
    assert verdict in ("feasible", "unknown")
    zeros = np.zeros_like(a)
    verdict, sets, _ = _large_search(a, zeros, a, d, 2, d / 4, d)
    assert verdict == "feasible"
    assert all(sorted(r.tolist()) in ([0, 2], [0, 3], [1, 2], [1, 3]) for r in sets)


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_fill_gives_n_distinct_rows(seed):
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(1, 12)), int(rng.integers(1, 4))
    n = int(rng.integers(1, r + 1))
    a = np.floor(rng.uniform(0, 5, (r, m)))
    d = a.sum(axis=0) * rng.uniform(0.1, 0.6, m) + (rng.random(m) < 0.2)
    rows = _fill(a, d, d, n)
    assert rows.size == n and np.unique(rows).size == n and rows.min() >= 0 and rows.max() < r


def test_top_breaks_ties_by_row():
    score = np.array([1.0, 3.0, 3.0, 3.0, 2.0])
    assert _top(score, 2).tolist() == [1, 2]
    assert _top(score, 4).tolist() == [1, 2, 3, 4]
    assert _top(score, 5).tolist() == [0, 1, 2, 3, 4]


@pytest.fixture
def large_path(monkeypatch):
    """Every start with enough eligible nodes takes the large-N search."""
    monkeypatch.setattr(scan_module, "_LARGE", -1)


def _check(pool, req):
    ref = coallocate(pool, req, "brute_force")
    res = coallocate(pool, req, "scan", enumerate_limit=0)
    label = f"{res.status} {res.message} / referee {ref.status} {ref.start}"
    if ref.start is None:
        assert res.start is None and res.status in ("infeasible", "no_solution"), label
        return
    assert res.start == ref.start, label  # the earliest start, as the referee's
    assert res.proven
    report = verify(req, pool, res)
    assert report.ok, (label, report.violations)
    assert res.utilisation <= ref.utilisation * (1 + 1e-9) + 1e-300


@pytest.mark.slow
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(instances())
def test_large_path_earliest_start_against_brute_force(large_path, inst):
    _check(*build(*inst))


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("collective", [True, False])
def test_large_path_on_random_instances(large_path, seed, collective):
    pool, req = random_instance(9, 4, n_slots=10, collective=collective, seed=seed)
    _check(pool, req)


def test_large_path_is_taken(large_path, monkeypatch):
    calls = []
    real = scan_module.large_search
    monkeypatch.setattr(scan_module, "large_search",
                        lambda *a, **k: calls.append(1) or real(*a, **k))  # fmt: skip
    pool, req = random_instance(9, 4, n_slots=10, seed=3)
    res = coallocate(pool, req, "scan", enumerate_limit=0)
    assert calls and res.iterations["lagrange_steps"] >= 1


# Issue 40: the best weights by cutting planes (a proof before any integer program) and the
# swaps' repair, each against a complete enumeration of the sets (the referee).


def _random_rows(seed, ties):
    rng = np.random.default_rng(seed)
    r, m = int(rng.integers(1, 10)), int(rng.integers(1, 4))
    n = int(rng.integers(1, r + 1))
    a = rng.uniform(0, 8, (r, m))
    if ties:
        a = np.floor(a)
    top = -np.sort(-a, axis=0)[:n].sum(axis=0)
    d = top * rng.uniform(0.5, 1.05, m) * (rng.random(m) < 0.9)
    return a, d, d - n * 1e-9 * 8, n


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.booleans())
@example(seed=0, ties=False)
def test_dual_cuts_proofs_and_sets_against_enumeration(seed, ties):
    a, d, dlo, n = _random_rows(seed, ties)
    verdict, sets, steps = _dual_cuts(a, d, dlo, n)
    truth = _any_set(a, dlo, n)
    if verdict == "infeasible":
        assert not truth and not sets
    if verdict == "feasible":
        assert truth
        rows = sets[0]
        assert rows.size == n and np.unique(rows).size == n
        assert np.all(a[rows].sum(axis=0) >= dlo)
    for rows in sets:  # every set met is n distinct rows
        assert rows.size == n and np.unique(rows).size == n


def test_dual_cuts_on_rows_that_trade_properties_off():
    # three properties the rows trade off: the verdicts agree with the referee at every total
    a = np.array([[9.0, 0.0, 3.0], [0.0, 9.0, 3.0], [4.0, 4.0, 4.0], [6.0, 6.0, 0.0],
                  [3.0, 3.0, 6.0], [0.0, 0.0, 12.0]])  # fmt: skip
    for total in (16.0, 17.0, 18.0, 19.0):
        d = np.full(3, total)
        verdict, _, _ = _dual_cuts(a, d, d, 3)
        truth = _any_set(a, d, 3)
        assert verdict != ("infeasible" if truth else "feasible")
    d = np.full(3, 19.0)
    assert not _any_set(a, d, 3) and _dual_cuts(a, d, d, 3)[0] == "infeasible"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_repair_sets_are_admissible(seed, ties):
    a, d, dlo, n = _random_rows(seed, ties)
    rng = np.random.default_rng(seed)
    cap = a + rng.uniform(0, 4, a.shape)
    start = np.sort(rng.choice(a.shape[0], n, replace=False))
    rows, rounds = _repair(kernels("compiled"), a, cap - a, cap, d, dlo, np.zeros(a.shape[1]),
                           [start], n)  # fmt: skip
    assert rounds >= 0
    if rows is not None:
        assert rows.size == n and np.unique(rows).size == n
        assert np.all(a[rows].sum(axis=0) >= dlo)
    else:  # only a heuristic: it may miss a set, never invent one
        assert not np.all(a[start].sum(axis=0) >= dlo)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("collective", [True, False])
def test_large_path_without_the_program(large_path, monkeypatch, seed, collective):
    """The large path with the integer program forbidden: every start it decides is
    decided by the weights, the cutting planes, the fill or the repair; the answer still
    matches brute force whenever no start needed the program."""
    pool, req = random_instance(9, 4, n_slots=10, collective=collective, seed=seed)
    monkeypatch.setattr(scan_module, "feasible_subset",
                        lambda *a, **k: ("time_limit", None))  # fmt: skip
    ref = coallocate(pool, req, "brute_force")
    res = coallocate(pool, req, "scan", enumerate_limit=0)
    if res.proven:  # no start left to the program: the verdicts alone were exact
        assert res.start == ref.start
        if res.start is not None:
            assert verify(req, pool, res).ok


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_proofs_kept_across_starts_are_proofs(seed, ties):
    """Weights kept from an earlier start (any weights >= 0) prove a start empty only when
    the referee finds no set; dual_cuts keeps the weights of its proofs, most recent first."""
    a, d, dlo, n = _random_rows(seed, ties)
    k = int((d > 0).sum())
    rng = np.random.default_rng(seed)
    proofs = [w / w.sum() for w in rng.uniform(0.01, 1, (3, max(k, 1)))]
    if _proven_by(a, d, dlo, n, proofs):
        assert not _any_set(a, dlo, n)
    kept: list = []
    verdict, _, _ = _dual_cuts(a, d, dlo, n, proofs=kept)
    if verdict == "infeasible" and kept:
        assert _proven_by(a, d, dlo, n, kept[:1]) and not _any_set(a, dlo, n)


def test_a_kept_proof_decides_the_next_start_in_one_step():
    a = np.array([[10.0, 0.0], [10.0, 0.0], [0.0, 10.0], [0.0, 10.0], [4.0, 4.0]])
    d = np.array([15.0, 15.0])
    kept: list = []
    assert _dual_cuts(a, d, d, 2, proofs=kept)[0] == "infeasible" and len(kept) <= 1
    kept = kept or [np.array([0.5, 0.5])]
    verdict, sets, steps = _dual_cuts(a * 0.99, d, d, 2, proofs=kept)
    assert verdict == "infeasible" and steps == 1 and not _any_set(a * 0.99, d, 2)


def _trade_off(seed, slots=12):
    """Two kinds of node, each rich in one property, three to pick: many starts pass the
    per-property screens and have no set, and the equal weights do not always prove it."""
    rng = np.random.default_rng(seed)
    ka, kb = int(rng.integers(3, 7)), int(rng.integers(3, 7))
    rich_a = np.column_stack([rng.uniform(6, 10, ka), rng.uniform(0.2, 1, ka)])
    rich_b = np.column_stack([rng.uniform(0.2, 1, kb), rng.uniform(3, 5, kb)])
    cap = np.vstack([rich_a, rich_b])
    times = np.arange(slots) * 10.0
    reserved = np.zeros((ka + kb, 2, slots))
    reserved[:, 0, 0::2] = rng.uniform(0, 0.15, (ka + kb, (slots + 1) // 2))  # falls: starts
    pool = ResourcePool(cap, ["a", "b"], times, reserved)
    tot = -np.sort(-cap, axis=0)[:3].sum(axis=0) * rng.uniform(0.55, 0.8, 2)
    req = CollectiveRequest(1.0, 3, 0.0, float(times[-1]), minimum={"a": 0.1, "b": 0.1},
                            total={"a": float(tot[0]), "b": float(tot[1])})  # fmt: skip
    return pool, req


@pytest.mark.parametrize("seed", range(60))
def test_swaps_path_with_kept_proofs_against_brute_force(seed):
    """The small-N path (no enumeration): the weights kept from earlier proofs, the cutting
    planes' proofs and the integer program together give brute force's earliest start."""
    _check(*_trade_off(seed))


def test_swaps_path_takes_the_kept_proofs(monkeypatch):
    hits = {"planes": 0, "kept": 0}
    planes, kept = scan_module.dual_cuts, scan_module.proven_by

    def count_planes(*args, **kwargs):
        out = planes(*args, **kwargs)
        hits["planes"] += out[0] == "infeasible"
        return out

    def count_kept(*args, **kwargs):
        out = kept(*args, **kwargs)
        hits["kept"] += out
        return out

    monkeypatch.setattr(scan_module, "dual_cuts", count_planes)
    monkeypatch.setattr(scan_module, "proven_by", count_kept)
    for seed in (7, 38, 47, 48):
        _check(*_trade_off(seed))
    assert hits["planes"] >= 1 and hits["kept"] >= 1
