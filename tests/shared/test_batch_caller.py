"""The calling process's work per instance (issue 41, h46disp): the chunk sizer's cost
look-up in one step (:func:`coalloc.batch.cost.keyed_cost`) and the cyclic collector
paused while a chunk is pickled (:func:`coalloc.batch.shipping.paused_gc`); the answers
those of the serial run, every result checked by its family's ``verify``."""

from __future__ import annotations

import concurrent.futures as cf
import gc
import threading

import pytest
from bench.shared.scaling import FAMILIES, family_batch

import coalloc
from coalloc.batch import cost
from coalloc.batch.cost import cost_key, keyed_cost, predicted_cost
from coalloc.batch.shipping import paused_gc

from ._batch_referee import same_verified_answers


def _reference(instance):
    """``(cost_key, predicted_cost)`` computed the long way, from the family's spec
    (an independent referee of the memoised :func:`keyed_cost`)."""
    import importlib
    import math

    family = getattr(instance, "family", None)
    if not isinstance(family, str):
        return None, None
    key = (family, type(instance).__name__)
    spec = importlib.import_module(f"coalloc.{family}._spec")
    if key[1] not in spec.COST_MODEL:
        return key, None
    c, a, b = spec.COST_MODEL[key[1]]
    size = float(spec.cost_size(instance))
    seconds = c + a * size**b
    return key, (seconds if seconds > 0 and math.isfinite(seconds) else None)


@pytest.mark.parametrize("family", FAMILIES)
def test_keyed_cost_is_the_key_and_the_prediction(family):
    cost._KINDS.clear()  # first sight, then the memo: the same answers
    for inst in family_batch(family, 3, seed=7, small=True) * 2:
        key, seconds = keyed_cost(inst)
        assert (key, seconds) == (cost_key(inst), predicted_cost(inst))
        want_key, want = _reference(inst)
        assert key == want_key and seconds == pytest.approx(want, rel=1e-12)
        assert seconds is not None and seconds > 0
    assert type(inst) in cost._KINDS


def test_keyed_cost_of_what_has_no_model():
    assert keyed_cost("a/path.json") == (None, None)
    assert keyed_cost(3.5) == (None, None)

    class Odd:  # a family per instance, not per class: asked each time, not memoised
        def __init__(self, family):
            self.family = family

    assert keyed_cost(Odd("no-such-family")) == (("no-such-family", "Odd"), None)
    assert Odd not in cost._KINDS

    class Broken:  # a kind with a model whose size cannot be read: no prediction
        family = "testbed"

    cost._KINDS.pop(Broken, None)
    assert keyed_cost(Broken()) == (("testbed", "Broken"), None)  # no model for "Broken"


def test_a_size_that_cannot_be_read_gives_no_prediction(monkeypatch):
    inst = family_batch("testbed", 1, small=True)[0]
    cost._KINDS.clear()
    spec = cost._spec("testbed")
    monkeypatch.setattr(spec, "cost_size", lambda _: float("nan"))
    assert keyed_cost(inst) == (cost_key(inst), None)
    cost._KINDS.clear()
    monkeypatch.setattr(spec, "cost_size", lambda _: 1 / 0)
    assert keyed_cost(inst) == (cost_key(inst), None)
    cost._KINDS.clear()  # the next test sees the real model


def test_the_collector_is_paused_then_restored_as_it_was():
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():  # nested
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer one still holds it
    assert gc.isenabled()
    gc.disable()  # a caller that had it off: left off
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError):  # an error inside: restored all the same
        with paused_gc():
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_threads_pausing_the_collector_leave_it_enabled():
    start = threading.Barrier(4)

    def work(_):
        start.wait()
        for _ in range(200):
            with paused_gc():
                assert not gc.isenabled()
        return True

    with cf.ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(4)))
    assert gc.isenabled()


@pytest.mark.parametrize("family", ["testbed", "collective", "ctaap"])
def test_a_process_batch_gives_the_serial_answers_and_leaves_the_collector_on(family):
    batch = family_batch(family, 12, seed=4, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=5)
    with cf.ProcessPoolExecutor(2) as pool:
        got = coalloc.solve_many(batch, executor=pool, seed=5, chunksize="auto")
    assert gc.isenabled()
    same_verified_answers(batch, got, serial)


def _seen_by_progress(batch, **kwargs):
    """The collector's state each time the batch's progress callback ran (the caller's
    thread, between two chunks)."""
    states = []
    results = coalloc.solve_many(batch, seed=5, progress=lambda done, total: states.append(
        gc.isenabled()), **kwargs)  # fmt: skip
    return results, states


def test_solve_many_on_processes_pauses_the_collector_for_the_whole_run():
    # The caller only packs chunks and loads records there: paused chunk by chunk, the
    # first allocation after each chunk set off the collections it had deferred (a full
    # one of the heap with just-built instances in it). Paused for the whole run now.
    batch = family_batch("testbed", 12, seed=4, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=5)
    with cf.ProcessPoolExecutor(2) as pool:
        got, states = _seen_by_progress(batch, executor=pool, chunksize=2)
    assert states and not any(states)  # between chunks too
    assert gc.isenabled()
    same_verified_answers(batch, got, serial)


@pytest.mark.parametrize("executor", ["threads", "serial"])
def test_a_batch_solved_in_this_process_leaves_the_collector_on(executor):
    # threads and the serial loop solve here: their solvers' garbage needs the collector
    batch = family_batch("testbed", 6, seed=4, small=True)
    _, states = _seen_by_progress(batch, executor=executor, chunksize=2)
    assert states and all(states)
    assert gc.isenabled()


def test_solve_many_iter_leaves_the_collector_on_for_the_callers_code():
    # between two results the caller's own code runs: the collector is on there
    batch = family_batch("testbed", 6, seed=4, small=True)
    with cf.ProcessPoolExecutor(2) as pool:
        seen = [gc.isenabled() for _ in coalloc.solve_many_iter(batch, executor=pool, seed=5,
                                                                 chunksize=2)]  # fmt: skip
    assert seen and all(seen)
    assert gc.isenabled()


def test_a_batch_that_raises_restores_the_collector():
    batch = family_batch("testbed", 4, seed=4, small=True) + ["no/such/file.top"]
    with cf.ProcessPoolExecutor(2) as pool:
        with pytest.raises(coalloc.batch.BatchError):
            coalloc.solve_many(batch, executor=pool, seed=5, on_error="raise", chunksize=2)
    assert gc.isenabled()



@pytest.mark.parametrize("every, collects", [(0.0, True), (float("inf"), False)])
def test_a_paused_run_still_collects_every_so_often(monkeypatch, every, collects):
    # the whole run's pause must not let a long batch's cyclic garbage grow without end:
    # the run collects itself, the collector still paused, every PAUSED_COLLECT_EVERY
    # seconds (at 0: after every chunk; at infinity: never, the referee's other side)
    from coalloc.batch import run as batch_run

    monkeypatch.setattr(batch_run, "PAUSED_COLLECT_EVERY", every)
    real, seen = gc.collect, []

    def spy(*args):
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(gc, "collect", spy)
    batch = family_batch("testbed", 12, seed=4, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=5)
    seen.clear()
    with cf.ProcessPoolExecutor(2) as pool:
        got = coalloc.solve_many(batch, executor=pool, seed=5, chunksize=2)
    if collects:
        assert seen and not any(seen)  # collections made inside the paused run
    else:
        assert seen == []
    assert gc.isenabled()
    same_verified_answers(batch, got, serial)


class _Cycle:
    """A reference cycle (itself), which only the cyclic collector frees."""

    def __init__(self):
        self.me = self


def test_a_paused_run_collects_the_young_generations_and_frees_its_cycles(monkeypatch):
    # h55house: the paused run's own collection looks at generations 0-1 (what was
    # allocated since the pause), not the whole heap; a cycle made inside the run is freed
    # by it (the referee: a weak reference, dead before the collector is back on)
    import weakref

    from coalloc.batch import run as batch_run

    monkeypatch.setattr(batch_run, "PAUSED_COLLECT_EVERY", 0.0)
    real, generations, refs = gc.collect, [], []

    def spy(*args):
        generations.append(args)
        return real(*args)

    def progress(done, total):  # runs inside the paused run, between two chunks
        refs.append(weakref.ref(_Cycle()))

    monkeypatch.setattr(gc, "collect", spy)
    batch = family_batch("testbed", 12, seed=4, small=True)
    serial = coalloc.solve_many(batch, executor="serial", seed=5)
    gc.disable()  # nothing but the run's own collections from here
    try:
        generations.clear()
        with cf.ProcessPoolExecutor(2) as pool:
            got = coalloc.solve_many(batch, executor=pool, seed=5, chunksize=2,
                                     progress=progress)  # fmt: skip
        alive = [r for r in refs if r() is not None]
    finally:
        gc.enable()
    assert generations and set(generations) == {(batch_run.PAUSED_COLLECT_GENERATION,)}
    assert batch_run.PAUSED_COLLECT_GENERATION < 2  # never the whole heap
    assert len(refs) >= 2 and len(alive) <= 1  # all but the last one's cycle freed
    same_verified_answers(batch, got, serial)
