"""Issue 28: binary snapshots of a pool (the ledger), saved through the guarded writer and read
back bit for bit; every malformed snapshot refused naming the file."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc._shared.jsonio import InstanceError
from coalloc.collective import ResourcePool
from coalloc.collective.io import read_pool_snapshot, write_pool_snapshot


def _same(a, b):
    return (
        a.names == b.names
        and a.node_names == b.node_names
        and np.array_equal(a.capacity, b.capacity)
        and np.array_equal(a.times, b.times)
        and np.array_equal(a.reserved, b.reserved)
        and sorted(a.labels) == sorted(b.labels)
        and all(a.labels[k].tolist() == b.labels[k].tolist() for k in a.labels)
    )


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_snapshot_roundtrip_is_exact(tmp_path_factory, seed, labelled):
    rng = np.random.default_rng(seed)
    n, m, k = int(rng.integers(1, 6)), int(rng.integers(1, 4)), int(rng.integers(1, 9))
    cap = rng.uniform(0, 9, (n, m)) * 10.0 ** float(rng.integers(-9, 12))
    res = cap[:, :, None] * rng.uniform(0, 1, (n, m, k))  # full doubles: no decimal round trip
    labels = None
    if labelled:
        labels = {"arch": [str(v) for v in rng.choice(["amd64", "i386", "ü"], n)],
                  "site": [None if rng.random() < 0.3 else f"s{j}" for j in range(n)]}  # fmt: skip
    pool = ResourcePool.from_slots(cap, res, 300.0, [f"p{i}" for i in range(m)], labels=labels)
    pool.reserve(150.0, 300.0, [0], np.zeros((1, m)))  # a booking off the grid: new breakpoints
    path = tmp_path_factory.mktemp("snap") / "pool.npz"
    write_pool_snapshot(path, pool)
    assert _same(read_pool_snapshot(path), pool)
    with open(path, "rb") as fh:  # a file object too
        assert _same(read_pool_snapshot(fh), pool)


def _write(path, **arrays):
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def _good(tmp_path):
    pool = ResourcePool([[4.0], [2.0]], ["cores"], labels={"arch": ["a", "b"]})
    path = tmp_path / "p.npz"
    write_pool_snapshot(path, pool)
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda a: a.update(extra=np.zeros(1)), "unknown \\['extra'\\]"),
        (lambda a: a.pop("times"), "missing \\['times'\\]"),
        (lambda a: a.update(format=np.array("other")), "format must be"),
        (lambda a: a.update(version=np.array(2)), "version must be 1"),
        (lambda a: a.update(reserved=a["reserved"].astype(np.float32)), "reserved must be float64"),
        (lambda a: a.update(names=np.array([1])), "names must be strings"),
        (lambda a: a.update(label_values=np.array([["a"]])), "do not agree"),
        (lambda a: a.update(reserved=a["reserved"] + 9.0), "reserved exceeds capacity"),
        (lambda a: a.update(times=np.array([5.0])), "times must start at 0"),
    ],
)
def test_malformed_snapshots_are_refused_naming_the_file(tmp_path, change, message):
    arrays = _good(tmp_path)
    change(arrays)
    bad = tmp_path / "bad.npz"
    _write(bad, **arrays)
    with pytest.raises(InstanceError, match=message) as err:
        read_pool_snapshot(bad)
    assert "bad.npz" in str(err.value)


def test_not_a_snapshot_and_pickled_objects_are_refused(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file")
    with pytest.raises(InstanceError, match="junk.npz: not a pool snapshot"):
        read_pool_snapshot(junk)
    arrays = _good(tmp_path)
    arrays["names"] = np.array([object()], dtype=object)
    obj = tmp_path / "obj.npz"
    with open(obj, "wb") as fh:
        np.savez(fh, **arrays)
    with pytest.raises(InstanceError, match="obj.npz"):
        read_pool_snapshot(obj)


def test_a_failed_write_keeps_the_old_snapshot(tmp_path, monkeypatch):
    path = tmp_path / "p.npz"
    pool = ResourcePool([[4.0]], ["cores"])
    write_pool_snapshot(path, pool)
    before = path.read_bytes()
    with pytest.raises(TypeError, match="pool must be a ResourcePool"):
        write_pool_snapshot(path, "not a pool")

    def half_then_fail(fh, **arrays):  # the write dies halfway (disk full, Ctrl-C ...)
        fh.write(b"PK\x03\x04 half an archive")
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_pool_snapshot(path, pool.copy().reserve(0, 60, [0], [[2.0]]))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz"]  # no temporary left
