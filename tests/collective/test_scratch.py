"""The scan's window maxima in a buffer each thread keeps (issue 40, h57coll, ``_scratch``):
the same values as a fresh array, one buffer reused per thread (none shared between threads),
and the scan answers alike with it on and off."""

import importlib
import mmap
import threading

import numpy as np
import pytest

from coalloc.collective import CollectiveRequest, scan, verify
from coalloc.collective.core import kernels

from ._routes import answer_key, wandering_pool

scratch = importlib.import_module("coalloc.collective._scratch")


def _case(seed, rows=60, k=300):
    rng = np.random.default_rng(seed)
    times = np.arange(k) * 300.0
    res = np.ascontiguousarray(rng.random((rows, 3, k)))
    nodes = np.sort(rng.choice(rows, size=rows - 7, replace=False))
    return rng, times, res, nodes


@pytest.mark.parametrize("small_pages", [True, False])
def test_the_kept_buffer_gives_the_fresh_arrays_values(monkeypatch, small_pages):
    monkeypatch.setattr(scratch, "LEAST", 0)
    monkeypatch.setattr(scratch, "SMALL_PAGES", small_pages)
    monkeypatch.setattr(scratch, "_LOCAL", threading.local())  # a buffer made here
    ker = kernels("compiled")
    got = []
    for seed in range(12):
        rng, times, res, nodes = _case(seed)
        size = 40 if seed == 0 else int(rng.integers(1, 40))  # the largest first
        starts = np.sort(rng.uniform(0, times[-1], size=size))
        dur = float(rng.uniform(300.0, 20000.0))
        a = scratch.window_rows(ker, times, res, nodes, starts, dur)
        assert np.array_equal(a, ker.window_max_rows(times, res, nodes, starts, dur))
        assert np.array_equal(a, kernels("numpy").window_max_rows(times, res, nodes, starts, dur))
        got.append(a)
    # one buffer (sized by the first, the largest): every output a view of it
    assert all(np.shares_memory(x, scratch._LOCAL.buf) for x in got)
    # SMALL_PAGES: the buffer is an anonymous mmap's (no huge pages asked), writable
    base = scratch._LOCAL.buf.base
    assert isinstance(getattr(base, "obj", base), mmap.mmap) == small_pages
    assert scratch._LOCAL.buf.flags.writeable


def test_threads_keep_their_own_buffers(monkeypatch):
    monkeypatch.setattr(scratch, "LEAST", 0)
    ker, bufs = kernels("compiled"), []
    rng, times, res, nodes = _case(3)

    def run():
        scratch.window_rows(ker, times, res, nodes, np.array([0.0, 600.0]), 900.0)
        bufs.append(scratch._LOCAL.buf)

    ts = [threading.Thread(target=run) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(bufs) == 2 and not np.shares_memory(bufs[0], bufs[1])


def test_the_scan_answers_alike_with_the_kept_buffer(monkeypatch):
    monkeypatch.setattr(scratch, "LEAST", 0)  # every block through the buffer
    pool = wandering_pool(2, 300, k=600, level=(0.1, 0.9), step=0.04, freed=True)
    free = pool.capacity - pool.reserved_at(3000.0)
    for count, f, dur in ((3, 0.8, 3600.0), (5, 0.9, 1800.0), (10, 0.7, 21600.0), (4, 1.0, 900.0)):
        top = -np.sort(-free, axis=0)[:count].sum(axis=0)
        req = CollectiveRequest(dur, count, 3000.0, 3000.0 + 86400.0, {k: 0.0 for k in "abc"},
                                {k: float(v * f) for k, v in zip("abc", top)})  # fmt: skip
        got = {}
        for on in (False, True):
            monkeypatch.setattr(scratch, "ON", on)
            got[on] = scan(req, pool)
        assert answer_key(got[True], message=True) == answer_key(got[False], message=True)
        assert got[True].iterations == got[False].iterations
        if got[True].has_solution:
            assert verify(req, pool, got[True]).admissible
