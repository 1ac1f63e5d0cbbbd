"""The eigensolve's guard on graphs with a dense core (issue 40, h56hub follow-up).

ba 3000 m4 on tree 16x4x4 at ``T`` = 5 s ended at 6.9-9.0 s: a split of ``bisect_map`` began
the Fiedler order of all 3,000 tasks (23,968 entries) with about 1.1 s left, predicted at
0.5 s from the call's pace; shift-invert factorised a Laplacian whose L+U holds 5.0M entries
and took 6-7 s, with no poll inside. The guard now also predicts from the factorisation's
envelope (:func:`~coalloc.taskmap.bisection.envelope_flops`) and skips that eigensolve.

No clock races: the time left and the time limit's scope are stand-ins, and a spy stands in
for the eigensolve (it raises: the old rule would begin it). Referees: the envelope from a
dense matrix row by row, the closed form of a clique's, and the old rule (the knob at 0).
"""

from __future__ import annotations

import types

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy.sparse import csgraph

from coalloc.taskmap import bisection as bi
from coalloc.taskmap import generators as gen
from coalloc.taskmap.hierarchy import topology
from coalloc.taskmap.levels import TaskLevel, subgraph
from tests.taskmap.test_levels_hub import _level, _preferential


class _Began(Exception):
    """The spy's: an eigensolve was begun."""


def _spy(sub, n):
    raise _Began(n)


def _scope(monkeypatch, left, **attrs):
    """A stand-in time limit: ``left`` seconds, and a scope holding ``attrs``."""
    scope = types.SimpleNamespace(**attrs)
    monkeypatch.setattr(bi, "time_left", lambda: left)
    monkeypatch.setattr(bi.interrupt, "current", lambda: scope)
    monkeypatch.setattr(bi.interrupt, "check", lambda: None)
    return scope


def _csr(dense: np.ndarray) -> tuple:
    mat = sp.csr_matrix(dense.astype(float))
    mat.sort_indices()
    return mat.indptr.astype(np.int64), mat.indices.astype(np.int64), mat.data


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.integers(1, 30), st.floats(0.0, 0.7), st.integers(0, 2**31 - 1))
@example(1, 0.0, 0)  # one vertex, no edge: 0
@example(6, 0.0, 1)  # no edge: 0
def test_envelope_is_the_reordered_matrix_row_by_row(n, density, seed):
    rng = np.random.default_rng(seed)
    dense = np.triu(rng.random((n, n)) < density, 1)
    dense = dense | dense.T
    perm = csgraph.reverse_cuthill_mckee(sp.csr_matrix(dense.astype(float)), symmetric_mode=True)
    a = dense[np.ix_(perm, perm)]  # the referee: each row's first entry, dense
    want = 0.0
    for i in range(n):
        cols = np.flatnonzero(a[i, : i + 1])
        want += float(i - (cols[0] if cols.shape[0] else i)) ** 2
    assert bi.envelope_flops(_csr(dense)) == want


@pytest.mark.parametrize("n", [2, 5, 17])
def test_a_clique_is_dense(n):
    dense = ~np.eye(n, dtype=bool)
    assert bi.envelope_flops(_csr(dense)) == (n - 1) * n * (2 * n - 1) / 6


def _hub_level() -> TaskLevel:
    return _level(_preferential(3000, 4, 0))  # 23,960 entries, 160k operations per entry


def test_the_traced_split_is_skipped_on_a_dense_core(monkeypatch):
    """The first split of a 3,000-vertex Barabasi-Albert-like graph with 2 s left and nothing
    measured: 1e-5 x 23,960 = 0.24 s within half of 2 s (the old rule begins it), times the
    fill factor (about 16) not; the part still grows to the target's weight."""
    monkeypatch.setattr(bi, "fiedler_order", _spy)
    _scope(monkeypatch, 2.0)
    level = _hub_level()
    verts = np.arange(level.n)
    prep = bi._prepared(level, verts, 3)
    nnz = prep["sub"][1].shape[0]
    fill = bi.envelope_flops(prep["sub"]) / nnz
    assert fill > 8 * bi.FIEDLER_FILL
    assert bi._fill_factor(nnz, prep) == pytest.approx(fill / bi.FIEDLER_FILL, rel=1e-12)
    assert bi.predicted_seconds(nnz) <= bi.FIEDLER_SHARE * 2.0 and not bi._in_time(nnz, prep)
    target = float(level.vw.sum()) / 2
    inside = bi.grow(level, verts, target)  # no eigensolve begun
    tol = max(float(level.vw.max()), 0.02 * float(level.vw.sum()))
    assert abs(float(level.vw[inside].sum()) - target) <= tol + 1e-9
    monkeypatch.setattr(bi, "FIEDLER_FILL", 0.0)  # the old rule on the same stand-ins
    with pytest.raises(_Began):
        bi.grow(_hub_level(), verts, target)


def test_bisect_map_onto_a_tree_begins_no_long_eigensolve(monkeypatch):
    """The traced call's step: the whole graph bisected onto 256 processors of a 16x4x4
    tree at the traced moment (1.1 s left, the call's pace 2.7 us, a stand-in clock that
    does not move): the split of all 3,000 vertices (6-7 s measured) grows from its seeds;
    the smaller splits still take their eigensolves (the spy lets those run). The old rule
    (8 x 2.7e-6 x 23,960 = 0.52 s within half of 1.1 s) began it."""
    begun = []
    real = bi.fiedler_order

    def spy(sub, n):
        begun.append(n)
        if n > 2000:
            raise _Began(n)
        return real(sub, n)

    monkeypatch.setattr(bi, "fiedler_order", spy)
    _scope(monkeypatch, 1.1, fiedler_pace=2.7e-6)
    topo = topology(gen.hierarchical_cluster(n_racks=16, nodes_per_rack=4, cores_per_node=4))
    level = _hub_level()
    m = bi.bisect_map(topo, level, np.arange(topo.P), np.ones(topo.P))
    assert begun and max(begun) <= 2000  # some begun, none of the whole graph
    assert m.shape == (level.n,) and set(m.tolist()) == set(range(topo.P))
    monkeypatch.setattr(bi, "FIEDLER_FILL", 0.0)
    _scope(monkeypatch, 1.1, fiedler_pace=2.7e-6)
    with pytest.raises(_Began):
        bi.bisect_map(topo, _hub_level(), np.arange(topo.P), np.ones(topo.P))


@pytest.mark.parametrize("shape", [(8, 8, 8), (32, 32)])
def test_meshes_keep_the_old_rule(monkeypatch, shape):
    """A stencil's envelope is far under the knob (about 300 operations per entry): factor
    1, the same decision as the old rule at every time left, the eigensolve begun."""
    _scope(monkeypatch, 1.0)
    level = TaskLevel.of(gen.stencil_task_graph(shape, seed=0))
    verts = np.arange(level.n)
    prep = bi._prepared(level, verts, 3)
    nnz = prep["sub"][1].shape[0]
    assert bi._fill_factor(nnz, prep) == 1.0
    for left in (0.001, 0.01, 0.05, 0.1, 1.0):
        monkeypatch.setattr(bi, "time_left", lambda left=left: left)
        new = bi._in_time(nnz, prep)
        monkeypatch.setattr(bi, "FIEDLER_FILL", 0.0)
        assert bi._in_time(nnz, prep) == new
        monkeypatch.setattr(bi, "FIEDLER_FILL", 10_000.0)


def test_no_time_limit_and_small_subgraphs(monkeypatch):
    """Untimed: every eigensolve begun, no envelope computed; under 1,000 entries, no factor."""
    _scope(monkeypatch, None)
    prep = {"sub": subgraph(_hub_level(), np.arange(3000))}
    assert bi._in_time(10**9, prep) and "fill" not in prep
    assert bi._fill_factor(999, prep) == 1.0 and "fill" not in prep
