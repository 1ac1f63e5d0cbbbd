"""Every method against the referees: verify, brute force, determinism, parity of backends."""

import numpy as np
import pytest

from coalloc.collective import (
    METHODS,
    CollectiveRequest,
    Instance,
    ResourcePool,
    coallocate,
    verify,
)
from coalloc.collective.generators import random_instance, section42_requests, table1_pool


def instances(k, base=0):
    for s in range(base, base + k):
        rng = np.random.default_rng(s)
        n = int(rng.integers(5, 10))
        cnt = int(rng.integers(1, 4))
        yield random_instance(n, cnt, n_properties=int(rng.integers(1, 4)),
                              collective=s % 3 != 0, load=float(rng.uniform(0.2, 0.8)),
                              seed=s)  # fmt: skip


@pytest.mark.parametrize("method", ["scan", "cankar", "exact"])
def test_outputs_admissible_and_against_brute_force(method):
    solvable = early = 0
    ratios = []
    for pool, req in instances(25):
        ref = coallocate(pool, req, "brute_force")
        res = coallocate(pool, req, method, seed=3)
        if res.start is not None:
            rep = verify(req, pool, res)
            assert rep.ok, (method, rep)
            assert ref.start is not None and res.start >= ref.start - 1e-9
            assert res.utilisation <= ref.utilisation * (1 + 1e-9) or res.start > ref.start
        if ref.start is None:
            assert res.start is None
            continue
        solvable += 1
        if method in ("scan", "exact"):
            assert res.start == pytest.approx(ref.start)  # exact earliest start
        if res.start is not None and res.start == pytest.approx(ref.start):
            early += 1
            ratios.append(res.utilisation / ref.utilisation)
    assert solvable >= 8
    if method in ("scan", "exact"):
        assert early == solvable and np.mean(ratios) >= 0.98


def test_scan_quality_without_enumeration():
    """The swap search alone (no enumeration) still finds the earliest start and a good factor."""
    ratios = []
    for pool, req in instances(20, base=100):
        ref = coallocate(pool, req, "brute_force")
        res = coallocate(pool, req, "scan", enumerate_limit=0)
        assert (ref.start is None) == (res.start is None)
        if ref.start is not None:
            assert res.start == pytest.approx(ref.start)
            assert verify(req, pool, res).ok
            ratios.append(res.utilisation / ref.utilisation)
    assert ratios and np.mean(ratios) >= 0.95


@pytest.mark.parametrize("method", ["scan", "cankar"])
def test_backends_agree_and_seed_determinism(method):
    for pool, req in instances(8, base=50):
        a = coallocate(pool, req, method, seed=11, backend="compiled")
        b = coallocate(pool, req, method, seed=11, backend="numpy")
        c = coallocate(pool, req, method, seed=11)
        assert a.start == b.start == c.start
        if a.start is not None:
            assert np.array_equal(a.resources, b.resources)
            assert np.array_equal(a.resources, c.resources)


def test_cankar_on_paper_scale_is_admissible():
    pool = table1_pool(120, seed=4)
    for simple, coll in section42_requests(pool, 10, 4, seed=4):
        for req in (simple, coll):
            for method in ("cankar", "scan"):
                res = coallocate(pool, req, method, seed=0, m_max=3) if method == "cankar" else \
                    coallocate(pool, req, method)  # fmt: skip
                if res.start is not None:
                    assert verify(req, pool, res).ok


def test_rejection_reasons_are_explained():
    pool = ResourcePool.from_slots([[4.0], [4.0], [1.0]], [[[4, 0]], [[0, 0]], [[0, 0]]], 100,
                                   ["cores"])  # fmt: skip
    req = CollectiveRequest(50, 2, 0, 0, minimum={"cores": 2})  # only node 1 free at t=0
    res = coallocate(pool, req)
    assert res.start is None and res.proven and res.status == "infeasible"
    r = res.rejection
    assert r["summary"]["minimum"] == 1 and r["binding"]["property"] == "cores"
    assert r["per_start"][0]["eligible"] == 1
    req2 = CollectiveRequest(50, 2, 0, 500, minimum={"cores": 1}, total={"cores": 9})
    res2 = coallocate(pool, req2)
    assert res2.rejection["reason"] == "capacity" and res2.rejection["best"] == 8.0
    req3 = CollectiveRequest(50, 2, 0, 500, minimum={"cores": 1}, total={"cores": 7})
    res3 = coallocate(pool, req3)
    assert res3.start == 100.0  # node 0 becomes free at t=100
    assert coallocate(pool, req3, "brute_force").start == 100.0


def test_reserve_through_coallocate_and_failure_is_atomic():
    pool, req = random_instance(8, 3, seed=5, load=0.3)
    res = coallocate(pool, req, "scan")
    assert res.start is not None
    again = coallocate(pool, req, "scan", reserve=True)
    assert np.array_equal(again.resources, res.resources)
    by_hand, _ = random_instance(8, 3, seed=5, load=0.3)  # the same pool, reserved by hand
    by_hand.reserve(res.start, req.duration, res.resources, res.amounts)
    assert np.array_equal(pool.times, by_hand.times)
    assert np.array_equal(pool.reserved, by_hand.reserved)
    with pytest.raises(ValueError):
        pool.reserve(res.start, req.duration, res.resources, res.amounts * 1e6)
    assert np.array_equal(pool.times, by_hand.times)  # the failed reservation left no trace
    assert np.array_equal(pool.reserved, by_hand.reserved)


def test_result_dict_and_instance():
    pool, req = random_instance(6, 2, seed=7, load=0.2)
    inst = Instance(req, pool)
    for m in METHODS:
        r = inst.solve(m, seed=0)
        d = r.to_dict()
        assert d["method"] == m
        if r.start is not None:
            assert inst.verify(r).ok
    rejected = coallocate(pool, CollectiveRequest(60, 7, 0, 0, {"p0": 1.0}))
    assert rejected.start is None and not inst.verify(rejected).ok
    with pytest.raises(ValueError, match="method"):
        coallocate(pool, req, "nope")
    with pytest.raises(TypeError, match="takes no parameter"):
        coallocate(pool, req, "scan", l1=3)
    with pytest.raises(ValueError, match="backend"):
        coallocate(pool, req, "cankar", backend="gpu")


def test_exact_plain_and_cpsat_agree_with_pruned():
    for pool, req in instances(10, base=200):
        a = coallocate(pool, req, "exact")
        b = coallocate(pool, req, "exact", prune=False)
        c = coallocate(pool, req, "exact", solver="cpsat", enumerate_limit=1)
        assert a.start == b.start and a.status == b.status
        if a.start is not None:
            assert c.start is None or c.start >= a.start  # CP-SAT rounds conservatively
            if c.start is not None:
                assert verify(req, pool, c).ok


def test_generators_follow_table1_and_section42():
    pool = table1_pool(606, seed=3)
    mean, std = pool.capacity.mean(axis=0), pool.capacity.std(axis=0)
    assert np.allclose(mean, [2.90, 2.68, 2.95], rtol=0.06)
    assert np.allclose(std, [1.51, 0.36, 0.84], rtol=0.15)
    assert pool.times.shape[0] == 289 and pool.times[-1] == 86400
    pairs = section42_requests(pool, 10, 30, seed=1)
    for simple, coll in pairs:
        assert simple.duration in (600, 1800, 3600, 7200, 10800, 18000)
        assert 0 <= simple.earliest_start <= 5 * 3600 + 50 * 60
        assert 18 * 3600 + 10 * 60 - 1e-6 <= coll.latest_start + coll.duration <= 86400 + 1e-6 \
            or coll.latest_start == coll.earliest_start  # fmt: skip
        e_s, d_s = simple.vectors(pool.names)
        e_c, d_c = coll.vectors(pool.names)
        assert np.allclose(d_s, d_c) and np.allclose(e_c * 2, e_s)
    assert section42_requests(pool, 10, 3, seed=1)[0][1].to_dict() == pairs[0][1].to_dict()
