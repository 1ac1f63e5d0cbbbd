"""Issue 28 deliverable 3: the pool as an online ledger. Bookings on the pool's grid update its
own amounts in place (no copy of the timetables per booking); copies, pickles and readers of
an earlier grid stay independent; a refused booking changes nothing. Referee: the timetables
recomputed from scratch from the bookings that succeeded."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import ResourcePool


def _expected(cap, background, slot, bookings, t):
    """Reserved amounts at ``t``: the background slot plus every booking covering ``t``."""
    k = int(t // slot)
    out = background[:, :, k].copy() if k < background.shape[2] else np.zeros(cap.shape)
    for start, dur, nodes, amt, sign in bookings:
        if start <= t < start + dur:
            out[nodes] += sign * amt
    return out


ops = st.lists(
    st.tuples(
        st.sampled_from(["reserve", "release", "copy", "pickle"]),
        st.integers(0, 7),  # start slot
        st.integers(1, 4),  # duration in slots
        st.sampled_from([0.0, 0.5]),  # off the grid by half a slot (a new breakpoint)
        st.lists(st.integers(0, 4), min_size=1, max_size=3, unique=True),
        st.floats(0.0, 3.0, allow_nan=False),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=50, deadline=None)
@given(ops, st.integers(0, 2**16))
def test_bookings_against_timetables_recomputed_from_scratch(sequence, seed):
    rng = np.random.default_rng(seed)
    slot = 100.0
    cap = np.round(rng.uniform(2, 6, (5, 2)), 1)
    background = np.round(cap[:, :, None] * rng.uniform(0, 0.5, (5, 2, 8)), 2)
    pools = {"a": ResourcePool.from_slots(cap, background, slot, ["p", "q"])}
    booked = {"a": []}
    for q, (op, s0, dur, off, nodes, amount) in enumerate(sequence):
        name = sorted(pools)[q % len(pools)]
        pool = pools[name]
        if op in ("copy", "pickle"):
            new = pool.copy() if op == "copy" else pickle.loads(pickle.dumps(pool))
            pools[f"{name}{q}"] = new
            booked[f"{name}{q}"] = list(booked[name])
            continue
        start, duration = (s0 + off) * slot, dur * slot
        amt = np.full((len(nodes), 2), amount)
        before = (pool.times.copy(), pool.reserved.copy())
        try:
            getattr(pool, op)(start, duration, nodes, amt)
        except ValueError:
            # refused: nothing changed
            assert np.array_equal(pool.times, before[0])
            assert np.array_equal(pool.reserved, before[1])
            continue
        booked[name].append((start, duration, np.array(nodes), amt, 1 if op == "reserve" else -1))
    grid = np.arange(0, 12 * slot, slot / 2)
    for name, pool in pools.items():
        assert np.all(pool.reserved <= cap[:, :, None] + 1e-9)  # never above capacity
        assert np.all(pool.reserved >= 0)
        for t in grid:
            want = _expected(cap, background, slot, booked[name], t)
            np.testing.assert_allclose(pool.reserved_at(t), want, atol=1e-9)


def test_bookings_on_the_grid_do_not_copy_the_timetables():
    pool = ResourcePool.from_slots([[4.0], [4.0]], [[[1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0]]], 60,
                                   ["cores"])  # fmt: skip
    other = pool.copy()
    pool.reserve(0, 60, [0], [[1.0]])  # the first booking makes the amounts the pool's own
    own = pool.reserved
    pool.reserve(60, 60, [1], [[2.0]]).release(0, 60, [0], [[0.5]])
    assert pool.reserved is own and not own.flags.writeable  # the same (read-only) array
    assert pool.reserved_at(0).tolist() == [[1.5], [0.0]]
    assert pool.reserved_at(60).tolist() == [[1.0], [2.0]]
    # the copy made before is untouched, and its bookings do not reach the pool
    assert other.reserved_at(0).tolist() == [[1.0], [0.0]]
    other.reserve(0, 60, [1], [[4.0]])
    assert pool.reserved_at(0).tolist() == [[1.5], [0.0]]
    # a copy made now shares nothing either way
    third = pool.copy()
    pool.reserve(120, 60, [0], [[3.0]])
    assert third.reserved_at(120).tolist() == [[1.0], [0.0]]
    assert pool.reserved_at(120).tolist() == [[4.0], [0.0]]
    with pytest.raises(ValueError, match="nothing was reserved"):
        pool.reserve(120, 60, [0], [[0.5]])
    assert pool.reserved_at(120).tolist() == [[4.0], [0.0]]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), ops)
def test_candidate_starts_equal_the_kernel_through_bookings(seed, sequence):
    """The pool's bits of falling amounts, updated by each booking, give the kernel's starts."""
    from coalloc.collective import _search
    from coalloc.collective._reference.search import block_maxima
    from coalloc.collective.core import Kernels
    from coalloc.collective.model import BLOCK

    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    cap = np.full((5, 2), 4.0)
    background = np.floor(rng.uniform(0, 4, (5, 2, k)))
    pool = ResourcePool.from_slots(cap, background, 100.0, ["p", "q"])
    ker = Kernels(_search)
    pools = [pool]
    for q, (op, s0, dur, off, nodes, amount) in enumerate(sequence):
        p = pools[q % len(pools)]
        if op in ("copy", "pickle"):
            pools.append(p.copy() if op == "copy" else pickle.loads(pickle.dumps(p)))
        else:
            try:
                getattr(p, op)(
                    (s0 + off) * 100.0, dur * 100.0, nodes, np.full((len(nodes), 2), amount)
                )
            except ValueError:
                pass
        for p in pools:
            nodes_ = np.flatnonzero(rng.random(5) < 0.6)
            lo = float(rng.choice([0.0, 50.0, 100.0, 250.0]))
            hi = lo + float(rng.choice([0.0, 100.0, 1000.0, 5000.0]))
            want = ker.decrease_starts(p.times, p.reserved, nodes_, lo, hi)
            assert np.array_equal(p.candidate_starts(nodes_, lo, hi), want)
            # the block maxima the first block of a scan reads, kept by the same bookings
            times, res, bm = p._block_maxima()
            assert np.array_equal(times, p.times) and np.array_equal(res, p.reserved)
            assert np.array_equal(bm, block_maxima(p.reserved, BLOCK))


def test_simulate_on_the_grid_books_in_place_and_never_overbooks():
    from coalloc.collective import CollectiveRequest
    from coalloc.collective.generators import random_instance
    from coalloc.collective.simulate import simulate

    pool, _ = random_instance(12, 2, n_slots=40, slot_seconds=300.0, load=0.3, seed=5)
    rng = np.random.default_rng(5)
    reqs = []
    for _ in range(40):
        n = int(rng.integers(1, 5))
        reqs.append((float(rng.uniform(0, 6000)),
                     CollectiveRequest(float(rng.uniform(100, 2000)), n,
                                       minimum={"p0": 0.5}, total={"p0": 1.5 * n})))  # fmt: skip
    ledger = pool.copy()
    grid = ledger.times.copy()
    sim = simulate(ledger, reqs, align=300.0, in_place=True)
    plain = simulate(pool, reqs)
    assert np.array_equal(ledger.times, grid)  # every booking fell on the grid
    assert np.all(ledger.reserved <= ledger.capacity[:, :, None] + ledger.tolerance[None, :, None])
    accepted = [r for r in sim.records if r["accepted"]]
    assert accepted and all(r["start"] % 300.0 == 0 and r["delay"] >= 0 for r in accepted)
    # the plain run (no grid) books the same requests exactly; its pool is untouched
    assert pool.times.size == grid.size
    assert len(plain.records) == len(sim.records)
    for (arrival, req), rec in zip(sorted(reqs, key=lambda x: x[0]), sim.records):
        assert rec["arrival"] == arrival
        if rec["accepted"]:
            assert rec["start"] >= max(arrival, req.earliest_start)


def test_threads_booking_in_place_never_overbook():
    """Threads share one slotted pool and book on its grid (the in-place path), each solving
    with reserve=True; every acknowledged booking is replayed on a fresh ledger, checked by
    verify first, and the shared pool must hold exactly the replayed ledger, never above
    capacity (releases from threads: test_issue30's balance test)."""
    import threading

    from coalloc.collective import CollectiveRequest, coallocate
    from coalloc.collective.verify import verify_coallocation

    rng = np.random.default_rng(28)
    cap = rng.integers(2, 9, (8, 2)).astype(float)
    background = np.floor(cap[:, :, None] * rng.uniform(0, 0.6, (8, 2, 20)))
    pool = ResourcePool.from_slots(cap, background, 60.0, ["cores", "ram"])
    original = pool.copy()
    pool.reserve(0, 60, [0], [[0.0, 0.0]])  # the pool's own amounts from here: in place
    grid = pool.times.copy()
    reqs = [
        CollectiveRequest(
            float(60 * rng.integers(1, 4)),
            int(rng.integers(1, 4)),
            0.0,
            900.0,
            minimum={"cores": 1.0, "ram": 0.5},
        )  # fmt: skip
        for _ in range(64)
    ]
    acks, lock = [], threading.Lock()
    barrier = threading.Barrier(8)

    def worker(k):
        barrier.wait()
        for q in range(k, len(reqs), 8):
            try:
                res = coallocate(pool, reqs[q], "scan", reserve=True)
            except ValueError:  # lost a race between solving and booking: nothing booked
                continue
            if res.start is None:
                continue
            with lock:
                acks.append((reqs[q], res))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acks) > 8
    assert np.array_equal(pool.times, grid)  # every booking was on the grid: in place
    ledger = original.copy()
    for req, res in sorted(acks, key=lambda x: x[1].start):
        report = verify_coallocation(req, ledger, res.start, res.resources, res.amounts)
        assert report.admissible, report.violations
        ledger.reserve(res.start, req.duration, res.resources, res.amounts)
    tol = pool.tolerance
    for t in grid:
        np.testing.assert_allclose(pool.reserved_at(t), ledger.reserved_at(t), rtol=0, atol=1e-9)
        assert np.all(pool.reserved_at(t) <= cap + tol)


def test_simulate_hands_every_booking_to_on_booking_before_reserving():
    """``on_booking`` sees each accepted request as booked and the timetables it was solved
    on: verify accepts every one there, those timetables are the background plus the earlier
    bookings exactly (recomputed here), and the usage log equals one recomputed from the
    bookings seen."""
    from coalloc.collective import CollectiveRequest
    from coalloc.collective.generators import random_instance
    from coalloc.collective.simulate import simulate
    from coalloc.collective.verify import verify_coallocation

    pool, _ = random_instance(6, 1, n_slots=30, slot_seconds=300.0, load=0.5, seed=3)
    rng = np.random.default_rng(3)
    reqs = []
    for a in rng.uniform(0, 3000, 30):  # windows of 10 minutes: some are refused
        dur, n, e = rng.uniform(300, 1500), int(rng.integers(1, 4)), rng.uniform(0.5, 3)
        reqs.append((float(a), CollectiveRequest(float(dur), n, a, a + 600, {"p0": float(e)})))
    seen = []

    def hook(q, req, res, ledger):
        report = verify_coallocation(req, ledger, res.start, res.resources, res.amounts)
        assert report.ok, report.violations
        seen.append((q, req, res, ledger.reserved.copy()))

    ledger = pool.copy()
    sim = simulate(ledger, reqs, align=300.0, in_place=True, on_booking=hook)
    accepted = [q for q, r in enumerate(sim.records) if r["accepted"]]
    assert [s[0] for s in seen] == accepted and len(accepted) >= 5
    assert len(accepted) < len(reqs)  # some refused: the pool was tight
    t = pool.times
    want = pool.reserved.copy()
    for _, req, res, before in seen:
        np.testing.assert_allclose(before, want, rtol=0, atol=1e-12)  # not yet booked
        k0, k1 = np.searchsorted(t, [res.start, res.start + req.duration])
        want[np.asarray(res.resources), :, k0:k1] += np.asarray(res.amounts)[:, :, None]
    np.testing.assert_allclose(ledger.reserved, want, rtol=0, atol=1e-12)
    # the usage log: the background plus the bookings seen, summed over nodes, per slot
    cap = pool.capacity.sum(axis=0)[0]
    for s, at in enumerate(sim.slot_times):
        k = np.searchsorted(t, at, side="right") - 1
        jobs = sum(float(np.sum(res.amounts, axis=0)[0]) for _, req, res, _ in seen
                   if res.start <= at < res.start + req.duration)  # fmt: skip
        base = pool.reserved[:, 0, k].sum()
        assert sim.usage[s, 0] == pytest.approx((base + jobs) / cap, abs=1e-12)
        assert sim.job_usage[s, 0] == pytest.approx(jobs / cap, abs=1e-12)


def test_simulate_refuses_an_on_booking_that_is_not_callable():
    from coalloc.collective.simulate import simulate

    with pytest.raises(TypeError, match="on_booking"):
        simulate(ResourcePool([[1.0]], ["p"]), [], on_booking=3)
