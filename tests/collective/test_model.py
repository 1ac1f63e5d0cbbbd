"""The model: validation, slots, timetables, atomic reservations (property-based)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.collective import DEFAULT_HORIZON, CollectiveRequest, ResourcePool


def test_pool_validation_names_the_argument():
    with pytest.raises(ValueError, match="capacity"):
        ResourcePool([[-1.0]], ["a"])
    with pytest.raises(ValueError, match="names"):
        ResourcePool([[1.0, 2.0]], ["a"])
    with pytest.raises(ValueError, match="times"):
        ResourcePool([[1.0]], ["a"], times=[5.0], reserved=[[[0.0]]])
    with pytest.raises(ValueError, match="strictly increasing"):
        ResourcePool([[1.0]], ["a"], times=[0.0, 0.0], reserved=[[[0.0, 0.0]]])
    with pytest.raises(ValueError, match="exceeds capacity"):
        ResourcePool([[1.0]], ["a"], times=[0.0], reserved=[[[2.0]]])
    with pytest.raises(ValueError, match="reserved has shape"):
        ResourcePool([[1.0]], ["a"], times=[0.0], reserved=[[[0.0, 1.0]]])
    with pytest.raises(ValueError, match="labels"):
        ResourcePool([[1.0]], ["a"], labels={"arch": ["x", "y"]})
    with pytest.raises(ValueError, match="slot_seconds"):
        ResourcePool.from_slots([[1.0]], [[[0.0]]], 0, ["a"])
    with pytest.raises(TypeError, match="names"):
        ResourcePool([[1.0]], "a")


def test_caller_data_not_modified_and_readonly():
    cap = np.array([[2.0, 3.0]])
    res = np.zeros((1, 2, 3))
    pool = ResourcePool.from_slots(cap, res, 60, ["a", "b"])
    pool.reserve(0, 120, [0], [[1.0, 1.0]])
    assert cap.tolist() == [[2.0, 3.0]] and not res.any()
    with pytest.raises(ValueError):
        pool.capacity[0, 0] = 5


def test_request_defaults_and_validation():
    r = CollectiveRequest(60, 4, total={"ram": 8})
    assert r.earliest_start == 0 and r.latest_start == DEFAULT_HORIZON
    e, d = r.vectors(["cores", "ram"])
    assert e[0] > 0 and d[0] == pytest.approx(4 * e[0]) and d[1] == 8 and 0 < e[1] <= 2
    s = CollectiveRequest(60, 4, 100, minimum={"ram": 2})
    assert s.latest_start == 100 + DEFAULT_HORIZON and not s.collective
    assert s.vectors(["ram"])[1][0] == 8
    with pytest.raises(ValueError, match="duration"):
        CollectiveRequest(0, 1)
    with pytest.raises(ValueError, match="count"):
        CollectiveRequest(10, 0)
    with pytest.raises(TypeError, match="count"):
        CollectiveRequest(10, 1.5)
    with pytest.raises(ValueError, match="latest_start"):
        CollectiveRequest(10, 1, 50, 40)
    with pytest.raises(ValueError, match="total"):
        CollectiveRequest(10, 4, minimum={"a": 2}, total={"a": 4})
    with pytest.raises(ValueError, match="unknown properties"):
        CollectiveRequest(10, 1, minimum={"zz": 1}).vectors(["a"])
    with pytest.raises(TypeError, match="labels"):
        CollectiveRequest(10, 1, labels={"arch": 3})


def test_reserve_is_atomic():
    pool = ResourcePool([[4.0], [4.0]], ["cores"])
    pool.reserve(100, 100, [0], [[3.0]])
    before = (pool.times.copy(), pool.reserved.copy())
    with pytest.raises(ValueError, match="nothing was reserved"):
        pool.reserve(150, 100, [1, 0], [[1.0], [2.0]])  # node 1 fits, node 0 does not
    assert np.array_equal(pool.times, before[0]) and np.array_equal(pool.reserved, before[1])
    pool.reserve(200, 100, [1, 0], [[1.0], [2.0]])  # after the first reservation: fits
    assert pool.reserved_at(250).ravel().tolist() == [2.0, 1.0]
    assert pool.reserved_at(199).ravel().tolist() == [3.0, 0.0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 20), st.integers(1, 10), st.floats(0, 2)), max_size=8),
    st.integers(0, 2**16),
)
def test_reservations_add_up(jobs, seed):
    """The timetable equals the sum of the accepted reservations at every probe time."""
    pool = ResourcePool([[4.0, 4.0], [3.0, 5.0]], ["a", "b"])
    rng = np.random.default_rng(seed)
    accepted = []
    for s, dur, amt in jobs:
        node = int(rng.integers(0, 2))
        a = np.array([[amt, amt / 2]])
        try:
            pool.reserve(s * 10.0, dur * 10.0, [node], a)
            accepted.append((s * 10.0, dur * 10.0, node, a[0]))
        except ValueError:
            pass
    for probe in np.arange(0, 320, 5.0):
        expect = np.zeros((2, 2))
        for s, dur, node, a in accepted:
            if s <= probe < s + dur:
                expect[node] += a
        assert np.allclose(pool.reserved_at(probe), expect, atol=1e-9)
        assert np.all(pool.reserved_at(probe) <= pool.capacity + 1e-9)


def test_from_slots_and_labels():
    pool = ResourcePool.from_slots([[4.0], [2.0]], [[[1, 2]], [[0, 2]]], 300, ["c"],
                                   labels={"arch": ["amd64", "i386"]})  # fmt: skip
    assert pool.times.tolist() == [0, 300, 600]
    assert pool.match({"arch": "amd64"}).tolist() == [True, False]
    assert pool.match({"arch": ["amd64", "i386"]}).tolist() == [True, True]
    assert pool.match({"os": "x"}).tolist() == [False, False]
    assert pool.reserved_at(400).ravel().tolist() == [2.0, 2.0]
    assert pool.reserved_at(10**6).ravel().tolist() == [0.0, 0.0]


def test_clip_usage_above_capacity():
    with pytest.raises(ValueError, match="clip=True"):
        ResourcePool.from_slots([[2.0]], [[[3.0, 1.0]]], 300, ["cores"])
    pool = ResourcePool.from_slots([[2.0]], [[[3.0, 1.0]]], 300, ["cores"], clip=True)
    assert pool.reserved[0, 0].tolist() == [2.0, 1.0, 0.0]


def test_trim_keeps_the_future():
    pool = ResourcePool.from_slots([[4.0]], [[[1, 2, 3, 4]]], 100, ["c"])
    before = [pool.reserved_at(t)[0, 0] for t in (250, 300, 399, 450)]
    pool.trim(250)
    assert [pool.reserved_at(t)[0, 0] for t in (250, 300, 399, 450)] == before
    assert pool.times[0] == 0 and pool.times.shape[0] == 3
