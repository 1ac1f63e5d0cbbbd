"""Collective results cross process boundaries unchanged (issue 41): a result pickled and
unpickled, and a result a process pool sends back, compare equal to the serial one and
write the same dictionary; their arrays keep their dtype, shape and writeable flag."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np

import coalloc
from coalloc import collective as co
from coalloc.batch import BatchError
from coalloc.collective import generators as g


def _batch(n: int, count: int = 4):
    pool = g.table1_pool(40, n_slots=48, seed=11)
    pairs = g.section42_requests(pool, count, n_cases=n, seed=12)
    # simple and collective requests, both kinds of the family's request
    return [co.Instance(pair[k % 2], pool) for k, pair in enumerate(pairs)]


def _same_result(got, want) -> None:
    assert not isinstance(got, BatchError), got
    assert type(got) is type(want)
    assert dataclasses.replace(want, timings=got.timings) == got  # every field but times
    for name in ("resources", "amounts"):
        a, b = getattr(got, name), getattr(want, name)
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.flags.writeable == b.flags.writeable
    a, b = got.to_dict(), want.to_dict()
    a.pop("timings"), b.pop("timings")
    assert a == b


def test_results_round_trip_through_pickle():
    results = [inst.solve(seed=2) for inst in _batch(8)]
    assert any(r.resources is not None for r in results)
    for result in results:
        back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        assert back == result and back.to_dict() == result.to_dict()
        _same_result(back, result)


def test_a_rejection_round_trips_through_pickle():
    pool = co.ResourcePool([[1.0], [1.0]], ["cores"])
    request = co.CollectiveRequest(600, 2, minimum={"cores": 4.0})
    result = co.coallocate(pool, request)
    assert result.rejection is not None and result.resources is None
    back = pickle.loads(pickle.dumps(result))
    assert back == result and back.to_dict() == result.to_dict()


def test_process_batch_equals_the_serial_one():
    batch = _batch(30)
    serial = coalloc.solve_many(batch, executor="serial", seed=4)
    accepted = [r for r in serial if r.resources is not None]
    assert accepted  # solutions to compare, not only rejections
    pooled = coalloc.solve_many(batch, executor="processes", n_jobs=2, seed=4, chunksize=7)
    assert len(pooled) == len(serial)
    for inst, got, want in zip(batch, pooled, serial):
        _same_result(got, want)
        report = inst.verify(got)
        assert report.ok, report  # the family's referee
        if got.resources is not None:
            assert np.issubdtype(got.resources.dtype, np.integer)
