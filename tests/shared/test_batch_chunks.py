"""``chunksize="auto"`` (issue 24 item 2): chunks sized from the cost the workers measure,
the answers those of the serial run whatever the sizes."""

from __future__ import annotations

import concurrent.futures as cf

import pytest
from bench.shared.scaling import FAMILIES, answer, family_batch

import coalloc
from coalloc.batch.run import AUTO_CHUNK_SECONDS, _AutoChunks
from coalloc.batch.worker import _Records
from coalloc.cli import main


def _done(n: int, seconds: float) -> cf.Future:
    future: cf.Future = cf.Future()
    records = _Records([object()] * n)
    records.seconds = seconds
    future.set_result(records)
    return future


def test_the_chunks_grow_to_the_target_time_and_leave_every_worker_a_share():
    sizer = _AutoChunks(workers=2, total=None)
    assert sizer.size(0) == 1  # nothing measured yet: one instance per chunk
    failed: cf.Future = cf.Future()
    failed.set_exception(RuntimeError("lost"))
    sizer.finished(failed)
    assert sizer.size(0) == 1
    for _ in range(3):
        sizer.finished(_done(1, 0.001))  # a millisecond per instance
    assert sizer.size(10) == round(AUTO_CHUNK_SECONDS / 0.001)
    sizer.finished(_done(4, 4.0))  # then a second each: the median moves slowly
    sizer.finished(_done(2, 2.0))
    sizer.finished(_done(2, 2.0))
    sizer.finished(_done(1, 1.0))
    assert sizer.size(10) == 1
    known = _AutoChunks(workers=2, total=1000)
    known.finished(_done(10, 1e-6))  # next to free: capped by MAX and by the share left
    assert known.size(0) == 1000 // 8
    assert known.size(996) == 1
    assert _AutoChunks(1, None).size(0) == 1


@pytest.fixture(scope="module")
def mixed():
    parts = [family_batch(family, 6, seed=2, small=True) for family in FAMILIES]
    batch = [p[i] for i in range(6) for p in parts]
    return batch, [answer(r) for r in coalloc.solve_many(batch, executor="serial", seed=4)]


@pytest.mark.parametrize("executor", ["serial", "threads", "processes"])
def test_auto_chunks_give_the_serial_answers(mixed, executor):
    batch, serial = mixed
    n_jobs = None if executor == "serial" else 2
    got = coalloc.solve_many(batch, executor=executor, n_jobs=n_jobs, seed=4, chunksize="auto")
    assert [answer(r) for r in got] == serial


def test_chunksize_is_checked():
    batch = family_batch("ctaap", 1, small=True)
    for bad, exc in [("big", TypeError), (0, ValueError), (1.5, TypeError)]:
        with pytest.raises(exc, match="chunksize"):
            coalloc.solve_many(batch, chunksize=bad)


def test_the_command_takes_auto(tmp_path, capsys):
    path = tmp_path / "i.json"
    coalloc.write_instance(path, *family_batch("ctaap", 1, small=True)[0])
    out = tmp_path / "r.jsonl"
    assert main(["solve-batch", str(path), "--chunksize", "auto", "-o", str(out)]) == 0
    with pytest.raises(SystemExit) as stop:
        main(["solve-batch", str(path), "--chunksize", "big", "-o", str(out)])
    assert stop.value.code == 2
    assert "'auto'" in capsys.readouterr().err


def test_the_target_of_a_chunk_follows_the_cost_of_its_dispatch():
    from coalloc.batch.run import (
        AUTO_CHUNK_SECONDS_DASK,
        AUTO_CHUNK_SECONDS_PROCESSES,
        _chunk_seconds,
    )

    class DaskLike(cf.Executor):  # what distributed's ClientExecutor looks like to us
        _client = object()

    assert _chunk_seconds(None) == AUTO_CHUNK_SECONDS
    with cf.ThreadPoolExecutor(1) as threads:
        assert _chunk_seconds(threads) == AUTO_CHUNK_SECONDS
    with cf.ProcessPoolExecutor(1) as processes:
        assert _chunk_seconds(processes) == AUTO_CHUNK_SECONDS_PROCESSES
    assert _chunk_seconds(DaskLike()) == AUTO_CHUNK_SECONDS_DASK
    assert AUTO_CHUNK_SECONDS < AUTO_CHUNK_SECONDS_PROCESSES < AUTO_CHUNK_SECONDS_DASK
    sizer = _AutoChunks(workers=2, total=None, seconds=AUTO_CHUNK_SECONDS_PROCESSES)
    sizer.finished(_done(5, 0.005))  # a millisecond per instance
    assert sizer.size(0) == round(AUTO_CHUNK_SECONDS_PROCESSES / 0.001)


def test_the_default_window_holds_four_chunks_per_worker():
    batch = family_batch("ctaap", 12, small=True)
    pulled = []

    def gen():
        for k, inst in enumerate(batch):
            pulled.append(k)
            yield inst

    it = coalloc.solve_many_iter(gen(), n_jobs=1, seed=0)
    first = next(it)
    # four chunks submitted before the first came back, and one more once it had
    assert len(pulled) == 4 * 1 + 1
    rest = list(it)
    serial = coalloc.solve_many(batch, executor="serial", seed=0)
    assert [answer(r) for r in [first, *rest]] == [answer(r) for r in serial]
