"""CBC's model file (issue 23 item 8): the runner's MPS writer, refereed by HiGHS's reader.

The runner hands CBC a model through its own byte-array MPS writer (kept over HiGHS's and
PuLP's writers, which are slower on the package's largest models: bench/shared/mps_writer.py,
bench/RESULTS.md). HiGHS reads the file back to exactly the arrays written (every value has
17 significant digits); and CBC, given HiGHS's own file of the same model, finds the same
objective as from ours, on models the families build.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc._shared.milp import cbc
from tests._optional import require_solver

INF = np.inf


@st.composite
def models(draw):
    """A small model with every kind of row (equal, <=, >=, ranged, free) and bound (free,
    one-sided, fixed, binary, general integer), values of any magnitude and sign."""
    nv = draw(st.integers(1, 7))
    nr = draw(st.integers(1, 6))
    # magnitudes 1e-6 .. 1e9 (the runner rescales into that range; HiGHS's reader drops
    # matrix entries below 1e-9 as tiny)
    value = st.one_of(
        st.integers(-9, 9).map(float),
        st.builds(lambda m, s: s * m, st.floats(1e-6, 1e9), st.sampled_from([-1.0, 1.0])),
    )
    dense = np.array([[draw(st.one_of(st.just(0.0), value)) for _ in range(nv)]
                      for _ in range(nr)])  # fmt: skip
    c = np.array([draw(value) for _ in range(nv)])
    integrality = np.array([draw(st.booleans()) for _ in range(nv)])
    lb, ub = np.empty(nv), np.empty(nv)
    for j in range(nv):
        kind = draw(st.sampled_from(["binary", "free", "lower", "upper", "box", "fixed"]))
        a, b = sorted([draw(st.integers(-50, 50)) * 1.0, draw(st.integers(-50, 50)) * 1.0])
        lb[j], ub[j] = {"binary": (0.0, 1.0), "free": (-INF, INF), "lower": (a, INF),
                        "upper": (-INF, b), "box": (a, b), "fixed": (a, a)}[kind]  # fmt: skip
    row_lb, row_ub = np.empty(nr), np.empty(nr)
    for r in range(nr):
        kind = draw(st.sampled_from(["eq", "le", "ge", "range", "free"]))
        a, b = sorted([draw(value), draw(value)])
        row_lb[r], row_ub[r] = {"eq": (a, a), "le": (-INF, b), "ge": (a, INF),
                                "range": (a, b), "free": (-INF, INF)}[kind]  # fmt: skip
    return c, dense, row_lb, row_ub, integrality, lb, ub


def _read_back(path):
    """The model HiGHS reads from ``path``: (c, dense A, row bounds, bounds, integer?)."""
    import highspy

    from coalloc._shared.milp.highs import _new_highs

    h = _new_highs(highspy, False)
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) != highspy.HighsStatus.kError
    lp = h.getLp()
    a = lp.a_matrix_
    A = sp.csc_matrix((np.array(a.value_), np.array(a.index_), np.array(a.start_)),
                      shape=(lp.num_row_, lp.num_col_))  # fmt: skip
    integer = np.array([int(k) for k in lp.integrality_] or [0] * lp.num_col_) == 1
    return (np.array(lp.col_cost_), A.toarray(), np.array(lp.row_lower_),
            np.array(lp.row_upper_), integer, np.array(lp.col_lower_),
            np.array(lp.col_upper_))  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(models())
def test_highs_reads_back_exactly_the_arrays_the_writer_wrote(tmp_path_factory, model):
    require_solver("highs")
    c, dense, row_lb, row_ub, integrality, lb, ub = model
    path = tmp_path_factory.mktemp("mps") / "m.mps"
    cbc._write_mps(path, c, sp.csr_matrix(dense), row_lb, row_ub, integrality, lb, ub, c.size)
    rc, rA, rlo, rhi, rint, rlb, rub = _read_back(path)
    # a free row constrains nothing: the writer leaves it out
    kept = np.isfinite(row_lb) | np.isfinite(row_ub)
    np.testing.assert_array_equal(rc, c)
    np.testing.assert_array_equal(rA, dense[kept])
    np.testing.assert_array_equal(rhi, row_ub[kept])
    # MPS gives a ranged row as its right-hand side (the upper bound, exact) and the range
    # b - a: the lower bound comes back as b - (b - a), within rounding of the larger bound
    lo, hi = row_lb[kept], row_ub[kept]
    ranged = np.isfinite(lo) & np.isfinite(hi) & (lo != hi)
    np.testing.assert_array_equal(rlo[~ranged], lo[~ranged])
    spread = 2 * np.finfo(float).eps * np.maximum(np.abs(lo), np.abs(hi))
    assert np.all(np.abs(rlo[ranged] - lo[ranged]) <= spread[ranged])
    np.testing.assert_array_equal(rint, integrality)
    np.testing.assert_array_equal(rlb, lb)
    np.testing.assert_array_equal(rub, ub)


def test_cbc_finds_the_same_objective_from_highs_file_as_from_ours(tmp_path):
    require_solver("cbc")
    require_solver("highs")
    from bench.shared.mps_writer import cbc_objective, small_models, write_mps_highs

    models = small_models()
    assert len(models) == 3
    for name, model in models.items():
        ours, theirs = tmp_path / "ours.mps", tmp_path / "highs.mps"
        cbc._write_mps(str(ours), *model)
        write_mps_highs(str(theirs), *model)
        first = cbc_objective(str(ours), str(tmp_path))
        assert first.startswith("Optimal - objective value"), (name, first)
        assert cbc_objective(str(theirs), str(tmp_path)) == first, name
