"""Large arrays cross a process pool through files, not its pipe (issue 41): a chunk is
pickled once by the calling process (protocol 5, arrays out of band) and, past
``shipping.SPILL_BYTES``, its arrays go to a file of the batch's folder that the worker
reads and removes; the records come back the same way. The user gets the same objects:
equal answers, the same classes, the same writeable flags, and no file left behind."""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import pickle

import numpy as np
import pytest
from bench.shared.scaling import answer, family_batch, mixed_batch

import coalloc
from coalloc.batch import shipping
from coalloc.batch.shipping import _Spill, received, spill


def _arrays(obj, out=None):
    """Every ndarray reachable through the attributes, tuples, lists and dicts of ``obj``."""
    out = [] if out is None else out
    if isinstance(obj, np.ndarray):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _arrays(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            _arrays(x, out)
    elif hasattr(obj, "__dict__"):
        for x in vars(obj).values():
            _arrays(x, out)
    return out


@pytest.mark.parametrize("mapped", [True, False])
def test_large_buffers_go_to_a_file_read_once_and_removed(tmp_path, monkeypatch, mapped):
    monkeypatch.setattr(shipping, "SPILL_BYTES", 1 << 10)
    monkeypatch.setattr(shipping, "MAP_FILES", mapped)
    frozen = np.arange(1000, dtype=np.int64)
    frozen.flags.writeable = False
    obj = {"frozen": frozen, "free": np.linspace(0, 1, 500), "small": np.arange(3), "n": 7}
    out = spill(obj, str(tmp_path))
    files = list(tmp_path.iterdir())
    assert out.path is not None and [str(f) for f in files] == [out.path]
    # each buffer at a multiple of 64 bytes: 8000 + (4000 -> 4032) + (24 -> 64)
    assert os.path.getsize(out.path) == 8000 + 4032 + 64
    back = received(pickle.loads(pickle.dumps(out)))  # as it crosses the pipe
    assert list(tmp_path.iterdir()) == []  # read and removed
    assert back["n"] == 7 and set(back) == set(obj)
    for key in ("frozen", "free", "small"):
        assert np.array_equal(back[key], obj[key]) and back[key].dtype == obj[key].dtype
        assert back[key].flags.writeable == obj[key].flags.writeable
        assert back[key].flags.aligned
    back["free"][0] = 5.0  # writable as it was, and not shared with the sender
    assert obj["free"][0] == 0.0


def test_small_buffers_stay_beside_the_pickle(tmp_path):
    frozen = np.arange(10.0)
    frozen.flags.writeable = False
    out = spill({"a": frozen, "b": np.arange(4)}, str(tmp_path))
    assert out.path is None and list(tmp_path.iterdir()) == []
    back = pickle.loads(pickle.dumps(out)).load()
    assert np.array_equal(back["a"], frozen) and not back["a"].flags.writeable
    assert np.array_equal(back["b"], np.arange(4)) and back["b"].flags.writeable
    assert spill([1, "x"], str(tmp_path)).load() == [1, "x"]  # no buffers at all


def test_a_folder_that_is_gone_falls_back_to_the_pipe(tmp_path, monkeypatch):
    monkeypatch.setattr(shipping, "SPILL_BYTES", 1)
    out = spill(np.arange(100), str(tmp_path / "gone"))
    assert out.path is None and np.array_equal(out.load(), np.arange(100))


@pytest.mark.parametrize("limit", [1, None])
def test_a_process_batch_through_files_gives_the_serial_objects(monkeypatch, limit):
    """A mixed batch (CTAAP requests, load-sharing placements, collective requests) on a
    forked pool with every array through files (``limit`` 1) and with none (None): the
    answers, the result classes, the arrays' flags and ``verify``'s reports are the serial
    run's (each solution passes it), and the files the caller read were all there is."""
    monkeypatch.setattr(shipping, "SPILL_BYTES", limit)
    loaded = []
    load = _Spill.load

    def spy(self):
        loaded.append(self.path)
        return load(self)

    monkeypatch.setattr(_Spill, "load", spy)
    batch = mixed_batch(60, seed=3, small=True) + family_batch("loadshare", 4, seed=1, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=11)
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("fork")) as pool:
        got = coalloc.solve_many(batch, executor=pool, seed=11, chunksize=7)
    assert [answer(r) for r in got] == [answer(r) for r in serial]
    assert [type(r) for r in got] == [type(r) for r in serial]
    for item, r, s in zip(batch, got, serial):
        report = item.verify(r)  # an infeasible request stays so (proven, as serially)
        assert report.ok or r.status == "infeasible"
        assert report.to_dict() == item.verify(s).to_dict()
        mine, theirs = _arrays(r), _arrays(s)
        assert [a.flags.writeable for a in mine] == [a.flags.writeable for a in theirs]
    chunks = -(-len(batch) // 7)
    assert len(loaded) == chunks  # every chunk's records came back as a _Spill
    through_files = [p for p in loaded if p is not None]
    if limit is None:
        assert through_files == []
    else:
        assert len(through_files) == chunks  # every chunk has arrays (placements, ...)
        assert not any(os.path.exists(p) for p in through_files)  # read and removed
