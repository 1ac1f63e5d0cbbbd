"""The BLAS threads around the mapper (h57cpu, :mod:`coalloc.taskmap.blasthreads`)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from coalloc.taskmap import blasthreads, generators, verify_mapping
from coalloc.taskmap.blasthreads import blas_threads, openblas_threads
from coalloc.taskmap.multilevel import map_multilevel

pytestmark = pytest.mark.skipif(
    not openblas_threads(), reason="no OpenBLAS library found in this process"
)


@pytest.fixture
def at_three():
    """Every OpenBLAS library at 3 threads (so that a block that does nothing is seen),
    the counts of before restored after the test."""
    libs = blasthreads._loaded_openblas()
    before = [get() for get, _ in libs]
    for _, put in libs:
        put(3)
    yield
    for (_, put), k in zip(libs, before):
        put(k)


def test_a_block_sets_every_library_and_restores_it(at_three):
    assert set(openblas_threads()) == {3}
    with blas_threads(1):
        assert set(openblas_threads()) == {1}
    assert set(openblas_threads()) == {3}


def test_an_exception_in_the_block_restores_the_counts(at_three):
    with pytest.raises(RuntimeError):
        with blas_threads(1):
            raise RuntimeError("inside")
    assert set(openblas_threads()) == {3}


def test_nested_blocks_keep_the_outer_count_and_restore_at_the_end(at_three):
    with blas_threads(1):
        with blas_threads(2):
            assert set(openblas_threads()) == {1}
        assert set(openblas_threads()) == {1}
    assert set(openblas_threads()) == {3}


def test_the_knob_none_leaves_the_counts(at_three, monkeypatch):
    monkeypatch.setattr(blasthreads, "BLAS_THREADS", None)
    with blas_threads():
        assert set(openblas_threads()) == {3}
    monkeypatch.setattr(blasthreads, "BLAS_THREADS", 1)
    with blas_threads():
        assert set(openblas_threads()) == {1}


def test_blocks_in_two_threads_restore_when_the_last_ends(at_three):
    entered, release, seen = threading.Event(), threading.Event(), []

    def other():
        with blas_threads(1):
            entered.set()
            release.wait(10)
            seen.append(openblas_threads())

    th = threading.Thread(target=other)
    with blas_threads(1):
        th.start()
        assert entered.wait(10)
    # this thread's block ended first: the other's is still open, its count kept
    assert set(openblas_threads()) == {1}
    release.set()
    th.join(10)
    assert seen and set(seen[0]) == {1}
    assert set(openblas_threads()) == {3}


@pytest.mark.parametrize("shape", [(24, 24), (8, 8, 8)])
def test_the_mapping_is_the_same_with_one_thread(shape, at_three):
    """The eigensolves' BLAS at 1 and at 3 threads: the same answer (the mapper's result
    is checked by the family's verify)."""
    tasks = generators.stencil_task_graph(shape, seed=3)
    res = generators.hierarchical_cluster(
        n_racks=2, nodes_per_rack=4, cores_per_node=4, speed=(1.0, 3.0), seed=5
    )
    free = map_multilevel(tasks, res, seed=0)
    with blas_threads(1):
        one = map_multilevel(tasks, res, seed=0)
    for r in (free, one):
        rep = verify_mapping(tasks, res, r.mapping)
        assert rep.valid and abs(rep.max_occupancy - r.max_occupancy) <= 1e-9 * r.max_occupancy
    assert np.array_equal(free.mapping, one.mapping)


def test_solve_runs_every_method_at_the_knobs_count(at_three, monkeypatch):
    """The family's ``solve`` (what the CLI, ``Instance.solve`` and the batch layer call)
    runs its method inside the block: the method sees one thread, the caller three after."""
    from coalloc.taskmap import solvers

    seen = []
    real = solvers.METHODS["multilevel"]

    def spy(*args, **kwargs):
        seen.append(openblas_threads())
        return real(*args, **kwargs)

    monkeypatch.setitem(solvers.METHODS, "multilevel", spy)
    tasks = generators.stencil_task_graph((12, 12), seed=3)
    res = generators.hierarchical_cluster(
        n_racks=2, nodes_per_rack=2, cores_per_node=4, speed=(1.0, 3.0), seed=5
    )
    result = solvers.solve(tasks, res, "multilevel", seed=0)
    assert seen and set(seen[0]) == {1}
    assert set(openblas_threads()) == {3}
    assert verify_mapping(tasks, res, result.mapping).valid
