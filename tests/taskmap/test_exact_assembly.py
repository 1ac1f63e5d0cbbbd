"""Task mapping's ``exact`` keeps a timed call's budget through the model's matrix assembly
(issue 40, h54tmap follow-up 2): the rows' build is polled, the assembly into one matrix was a
single unpolled step after it (0.4-0.67 s beside two busy loops on Table 1's pipelines, a call
at T = 0.5 s ending at 0.70-1.05 s). It is begun only when :data:`exact.MATRIX_PER_BUILD`
times the build's seconds fit the time left, and is polled between its steps.

No race with the real clock: the module's clock is the real one plus seconds that stand-ins
of the build and of the assembly add."""

from __future__ import annotations

import types

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc import taskmap as tm
from coalloc.taskmap import exact as ex


def _small():
    tasks = tm.TaskGraph([1.0, 2.0, 1.5], [[0, 4, 0], [4, 0, 1], [0, 1, 0]])
    res = tm.ResourceGraph.from_edges([0, 3.0, 5.0], [[0, 1], [0, 2]], [50.0, 50.0])
    return tasks, res


@pytest.fixture
def slow(monkeypatch):
    """``set(build=, matrix=)``: the seconds the build and the assembly are made to take on
    the module's clock; returns the list of the assemblies begun."""
    extra = [0.0]
    real = ex.time.perf_counter
    monkeypatch.setattr(ex, "time", types.SimpleNamespace(perf_counter=lambda: real() + extra[0]))
    cost = {"build": 0.0, "matrix": 0.0}
    begun: list = []
    build, matrix = ex._build, ex._Builder.matrix

    def slow_build(*args, **kwargs):
        out = build(*args, **kwargs)
        extra[0] += cost["build"]
        return out

    def slow_matrix(self, n_vars):
        begun.append(n_vars)
        extra[0] += cost["matrix"]
        return matrix(self, n_vars)

    monkeypatch.setattr(ex, "_build", slow_build)
    monkeypatch.setattr(ex._Builder, "matrix", slow_matrix)

    def set_costs(build: float, matrix: float) -> list:
        cost.update(build=build, matrix=matrix)
        return begun

    return set_costs


def test_an_assembly_predicted_past_the_deadline_is_not_begun(slow):
    # the build takes 0.3 s of 0.5 s, the assembly as long again: before the fix it ran and
    # the call ended at 0.6 s (past 0.5 + 0.05)
    begun = slow(build=0.3, matrix=0.3)
    out = tm.solve_exact_mapping(*_small(), time_limit=0.5)
    assert begun == []
    assert out.status == "time_limit" and out.mapping is None
    assert out.timings["total"] <= 0.5 + 0.05
    assert "while building the model" in out.message


def test_an_assembly_that_fits_is_run_and_the_answer_verified(slow):
    begun = slow(build=0.1, matrix=0.1)
    tasks, res = _small()
    out = tm.solve_exact_mapping(tasks, res, time_limit=60)
    assert len(begun) == 1
    assert out.status == "optimal" and out.max_occupancy == pytest.approx(0.6)
    assert tm.verify_mapping(tasks, res, out.mapping).ok


def test_the_assembly_stops_between_its_steps_past_the_deadline():
    b = ex._Builder(deadline=ex.time.perf_counter() + 3600.0)
    b.add_block(np.array([[0, 1], [1, 2]]), np.ones(2), 0.0, 1.0)
    b.deadline = ex.time.perf_counter() - 1.0  # passed while the rows were added
    with pytest.raises(ex._OutOfTime):
        b.matrix(3)


@pytest.mark.parametrize("seed", range(25))
def test_the_direct_assembly_equals_the_triplet_conversion(seed):
    # rows of random widths, columns in any order and repeated: the same CSR arrays (sorted
    # columns, duplicates summed) as scipy's conversion of the triplets, which the model
    # used before (the solver's model, so its answers, unchanged)
    rng = np.random.default_rng(seed)
    n_vars = int(rng.integers(1, 12))
    b = ex._Builder()
    rows, cols, vals = [], [], []
    for _ in range(int(rng.integers(1, 8))):
        m, w = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        c = rng.integers(0, n_vars, (m, w))
        v = rng.normal(size=(m, w))
        rows.append(np.repeat(np.arange(b.n_rows, b.n_rows + m), w))
        b.add_block(c, v, -1.0, 1.0)
        cols.append(c.reshape(-1))
        vals.append(v.reshape(-1))
    a, lb, ub = b.matrix(n_vars)
    ref = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                        shape=(b.n_rows, n_vars))  # fmt: skip
    assert a.shape == ref.shape and a.has_canonical_format and ref.has_canonical_format
    for name in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(a, name), getattr(ref, name)), name
    assert lb.shape == ub.shape == (b.n_rows,)
