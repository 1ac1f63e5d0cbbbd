"""A warm process pool that batches reuse (issue 41, h49pool: :func:`coalloc.batch.pool`).

Its workers start once, warm the families they are told, and serve every batch passed to
them; the answers are the serial ones (same seed, same answers), each checked by its
family's ``verify``, whatever batches came before."""

from __future__ import annotations

import multiprocessing as mp
import os
import sys

import pytest
from bench.shared.scaling import family_batch

import coalloc
from coalloc.batch import WorkerPool, pool

from ._batch_referee import same_verified_answers


def _state(_: int = 0):
    """What a worker holds: its pid, the solver modules it imported, objects frozen."""
    import gc
    import time

    time.sleep(0.05)  # so that every worker takes one
    names = ("coalloc.loadshare.solvers", "coalloc.taskmap.mapping", "scipy.sparse")
    mods = {name for name in names if name in sys.modules}
    return os.getpid(), mods, gc.get_freeze_count()


def test_batches_reuse_the_warm_workers_and_give_the_serial_answers():
    families = ("loadshare", "taskmap", "collective")
    batches = [family_batch(f, 10, seed=3, small=True) for f in families]
    serial = [coalloc.solve_many(b, executor="serial", seed=9) for b in batches]
    with pool(2, families=families, mp_context=mp.get_context("spawn")) as workers:
        assert isinstance(workers, WorkerPool) and os.path.isdir(workers.temp_root)
        pids, mods, frozen = zip(*workers.map(_state, range(4)))
        # warmed at their start, before any batch: the families' modules are in
        assert all("coalloc.loadshare.solvers" in m for m in mods)
        assert all(f > 0 for f in frozen)  # the warm-up's objects out of the collector's way
        for _ in range(2):  # twice each, in turn: the same answers every time
            for batch, want in zip(batches, serial):
                got = coalloc.solve_many(batch, executor=workers, seed=9, n_jobs=2)
                same_verified_answers(batch, got, want)
        after = {pid for pid, _, _ in workers.map(_state, range(4))}
        assert after <= set(workers._processes) and set(pids) <= set(workers._processes)
        assert len(workers._processes) == 2  # no worker was replaced or added
        root = workers.temp_root
    assert not os.path.exists(root)  # the workers' folder went with the pool


def test_a_cold_pool_gives_the_same_answers():
    batch = family_batch("ctaap", 6, seed=1, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=2)
    with pool(2, families=()) as workers:
        _, mods, frozen = zip(*workers.map(_state, range(2)))
        got = coalloc.solve_many(batch, executor=workers, seed=2)
    same_verified_answers(batch, got, serial)


@pytest.mark.parametrize(
    "kwargs, error, word",
    [
        ({"n_jobs": 0}, ValueError, "n_jobs"),
        ({"n_jobs": 1.5}, TypeError, "n_jobs"),
        ({"n_jobs": True}, TypeError, "n_jobs"),
        ({"families": "nope"}, ValueError, "families"),
        ({"families": [3]}, TypeError, "families"),
        ({"families": 3}, TypeError, "families"),
        ({"mp_context": "spawn"}, TypeError, "mp_context"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, error, word):
    with pytest.raises(error, match=word):
        WorkerPool(**kwargs)


def test_minus_one_is_every_cpu():
    with pool(-1, families=()) as workers:
        assert workers._max_workers == len(os.sched_getaffinity(0))


def test_a_pool_never_given_work_stops_its_workers():
    """Its workers started at once; without the executor's manager thread, which only a
    submit started, shutdown never told them to stop and they outlived the caller."""
    with pool(2, families=()) as workers:
        started = list((workers._processes or {}).values())
        assert len(started) == 2
    for process in started:
        process.join(timeout=60)  # shutdown(wait=True) has joined them already
    assert [p.is_alive() for p in started] == [False, False]
