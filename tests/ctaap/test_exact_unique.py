"""CTAAP exact's aggregated rows: ``_unique_inverse`` (counting when the keys' span is small,
one argsort otherwise) gives ``np.unique``'s three arrays exactly, its referee."""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coalloc.ctaap.exact import _unique_inverse


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=400), st.integers(0, 3))
@example([], 0)
@example([0], 0)
@example([7, 7, 7], 0)
def test_same_as_numpy_unique(values, extra):
    key = np.asarray(values, dtype=np.int64)
    want = np.unique(key, return_inverse=True, return_counts=True)
    spans = [None, int(key.max(initial=-1)) + 1 + extra, 10**7]  # counting, argsort, argsort
    for span in spans:
        got = _unique_inverse(key, span)
        for w, g in zip(want, got):
            assert g.dtype == np.int64
            assert np.array_equal(np.asarray(w).reshape(-1), g)


def test_the_aggregated_rows_use_the_counting_path():
    from coalloc import ctaap as ct
    from coalloc.ctaap.exact import _Model

    req, off = ct.generators.random_instance(300, 8, edge_probability=0.3, seed=3)
    model = _Model(req, off)
    row_u, row_l, row_M, ent_row, ent_v = model.aggregated_rows()
    u = np.concatenate([model.pair_u, model.pair_v])
    key = u * model.m + model.cluster[ent_v]
    keys, inv, counts = np.unique(key, return_inverse=True, return_counts=True)
    assert np.array_equal(row_u, keys // model.m) and np.array_equal(row_l, keys % model.m)
    assert np.array_equal(ent_row, inv.reshape(-1))
    assert np.array_equal(row_M, np.minimum(counts, model.capacity[row_l]))
    assert row_u.size > 0
