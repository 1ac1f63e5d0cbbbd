"""The replay's sliding window (issue 39): the online simulator cuts the timetables' past off
its working pool (``simulate(..., compact=True)``, the default) so that a request's cost does
not grow with the log's length. The referee is the same replay without cuts
(``compact=False``, the timetables from the origin as before): records, usage logs and the
ledger must be equal, bit for bit, on generated workloads and on an SWF log built in the
format (the package ships no real log)."""

from __future__ import annotations

import importlib
import io

import numpy as np
import pytest

from coalloc.collective import CollectiveRequest, ResourcePool
from coalloc.collective import io as cio
from coalloc.collective.generators import random_instance
from coalloc.collective.simulate import simulate
from coalloc.collective.verify import verify_coallocation

# the module (the package's name `simulate` is the function)
simulate_module = importlib.import_module("coalloc.collective.simulate")


def workload(seed: int, n: int = 150, collective: bool = True, span: float = 60_000.0):
    """``n`` requests over ``span`` seconds: 1 to 4 nodes, windows of 0 to an hour, some
    with an earliest start after their arrival."""
    rng = np.random.default_rng(seed)
    reqs = []
    for a in np.sort(rng.uniform(0.0, span, n)):
        a = float(a)
        dur, k = float(rng.uniform(60.0, 3000.0)), int(rng.integers(1, 5))
        e0 = a + float(rng.choice([0.0, 0.0, 450.0]))
        wait = float(rng.choice([0.0, 600.0, 3600.0]))
        e = float(rng.uniform(0.2, 1.5))
        total = {"p0": 1.5 * e * k} if collective else None
        reqs.append((a, CollectiveRequest(dur, k, e0, e0 + wait, {"p0": e}, total)))
    return reqs


@pytest.fixture
def trims(monkeypatch):
    """Cut as soon as 4 breakpoints lie behind (many cuts on small runs); count the cuts."""
    calls = []
    trim = ResourcePool.trim

    def counted(self, before):
        calls.append(float(before))
        return trim(self, before)

    monkeypatch.setattr(simulate_module, "_COMPACT_AT", 4)
    monkeypatch.setattr(ResourcePool, "trim", counted)
    return calls


def assert_same(a, b):
    assert len(a.records) == len(b.records)
    for ra, rb in zip(a.records, b.records):
        assert ra == rb
    assert a.skipped == b.skipped
    assert np.array_equal(a.slot_times, b.slot_times)
    assert np.array_equal(a.usage, b.usage) and np.array_equal(a.job_usage, b.job_usage)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("collective", [True, False])
@pytest.mark.parametrize("options", [{}, {"horizon": 50_000.0}, {"align": 300.0},
                                     {"method": "cankar"}], ids=["plain", "horizon", "align",
                                                                 "cankar"])  # fmt: skip
def test_cutting_the_past_changes_no_answer(trims, seed, collective, options):
    pool, _ = random_instance(10, 2, n_properties=2, n_slots=60, slot_seconds=300.0,
                              load=0.4, seed=seed)  # fmt: skip
    reqs = workload(seed, collective=collective)
    cut = simulate(pool, reqs, seed=seed, **options)
    assert len(trims) >= 5  # the window did slide
    n = len(trims)
    whole = simulate(pool, reqs, seed=seed, compact=False, **options)
    assert len(trims) == n  # the referee never cuts
    assert_same(cut, whole)
    accepted = sum(r["accepted"] for r in cut.records)
    assert 0 < accepted  # the comparison covers bookings
    if "horizon" not in options:
        assert accepted < len(reqs) or collective  # some refused on the tight pool (simple)


def test_the_ledger_in_place_is_whole_again_after_the_cuts(trims):
    pool, _ = random_instance(8, 2, n_properties=2, n_slots=40, slot_seconds=300.0,
                              load=0.3, seed=7)  # fmt: skip
    reqs = workload(7, n=120)
    a, b = pool.copy(), pool.copy()
    cut = simulate(a, reqs, in_place=True)
    assert trims
    whole = simulate(b, reqs, in_place=True, compact=False)
    assert_same(cut, whole)
    assert np.array_equal(a.times, b.times) and np.array_equal(a.reserved, b.reserved)
    assert a.times[0] == 0.0 and a.times.size > 100  # the whole past, from the origin
    assert np.all(a.reserved <= a.capacity[:, :, None] + a.tolerance[None, :, None])
    # and it takes one more booking like any pool
    a.reserve(float(a.times[-1]), 60.0, [0], [[0.1, 0.0]])


def test_the_timetables_a_request_meets_stay_bounded(monkeypatch):
    """With the default threshold, a request meets the breakpoints from about its arrival on:
    a bounded number on a stationary workload, while without cuts they grow with the log."""
    seen = []
    solve = simulate_module.coallocate

    def counted(pool, request, method, **kw):
        seen.append(pool.times.size)
        return solve(pool, request, method, **kw)

    monkeypatch.setattr(simulate_module, "coallocate", counted)
    pool = ResourcePool([[4.0]] * 16, ["p0"])
    reqs = workload(11, n=800, span=320_000.0)
    cut = simulate(pool, reqs)
    met, seen[:] = list(seen), []
    whole = simulate(pool, reqs, compact=False)
    assert_same(cut, whole)
    assert len(met) == len(seen) == len(reqs)
    assert seen[-1] > 1000  # without cuts: every booking's ends, from the origin
    # with them: what lies ahead of the arrival, plus at most the threshold's backlog
    assert max(met) < max(seen) / 4
    assert max(met[400:]) <= 2 * max(met[:400])  # no growth along the log


def test_no_cut_when_the_whole_timetables_are_promised(trims):
    pool, _ = random_instance(6, 1, n_properties=1, n_slots=30, slot_seconds=300.0,
                              load=0.3, seed=3)  # fmt: skip
    reqs = workload(3, n=80)
    seen = []

    def hook(q, req, res, ledger):
        assert verify_coallocation(req, ledger, res.start, res.resources, res.amounts).ok
        seen.append(ledger.times.size)

    simulate(pool, reqs, on_booking=hook)
    assert not trims and seen == sorted(seen) and seen[-1] > 50  # the whole grid, growing
    with pytest.raises(TypeError, match="compact"):
        simulate(pool, reqs, compact="yes")


def swf_log(n: int, seed: int) -> str:
    """An SWF log (the format's 18 fields, a header) of ``n`` jobs: every status of field 11,
    requested times above and below the run times, unknown values as -1."""
    rng = np.random.default_rng(seed)
    lines = ["; Version: 2.2", "; Computer: generated", "; MaxNodes: 16", "; MaxProcs: 16", ";"]
    submit = 0
    for job in range(1, n + 1):
        submit += int(rng.integers(0, 900))
        status = int(rng.choice([1, 1, 1, 1, 0, 5, -1, 2, 3, 4]))
        run = int(rng.integers(1, 7200)) if rng.random() > 0.05 else -1
        asked = int(run * rng.uniform(0.8, 3.0)) if run > 0 and rng.random() > 0.3 else -1
        procs = int(rng.integers(1, 17))
        fields = [job, submit, -1, run, procs, -1, -1, procs, asked, -1, status, 1, 1, -1, 1,
                  -1, -1, -1]  # fmt: skip
        lines.append(" ".join(str(v) for v in fields))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("horizon", [None, 400_000.0])
def test_an_swf_replay_is_the_same_with_cuts(trims, horizon):
    jobs = cio.read_swf(io.StringIO(swf_log(600, 5)))
    w = cio.swf_workload(jobs, procs_per_node=1.0, max_wait=3600.0)
    assert w.skipped  # cancelled and failed-to-start jobs among them
    pool = ResourcePool([[1.0]] * 16, ["cores"])
    cut = simulate(pool, w.requests, horizon=horizon, **w.simulate_kwargs())
    assert len(trims) >= 10
    whole = simulate(pool, w.requests, horizon=horizon, compact=False, **w.simulate_kwargs())
    assert_same(cut, whole)
    s = cut.summary()
    assert s["requests"] == len(w.requests) and 0 < s["acceptance_rate"] < 1
