"""The ``_allocate`` binding only marshals (issue 23 item 3): the arrays go into typed views
filled in one place (bind_data.hpp), the strategy loop runs in allocate.hpp. Its contract is
the twin's: same answer on arrays of any accepted dtype (converted copies must stay alive
through the search), the same refusals of arrays of the wrong size or a missing one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc.testbed import generators as g
from coalloc.testbed.problem import build_problem

PLUS_KEYS = ("cscore", "vscore", "parent", "list_ptr", "list_idx", "vlist", "cswitch")


def _data(gseed, size):
    from coalloc.testbed.assignplus import _pclass_scores, partition, plus_data

    pt = g.deterlab(14, 2, seed=gseed)
    pr = build_problem(g.random_topology(size, seed=gseed), pt)
    if any(not c for c in pr.cand):
        return None
    return plus_data(pr, _pclass_scores(pr, "1m", None), partition(pr))


def _same(a, b):
    assert np.array_equal(a["where"], b["where"])
    assert np.array_equal(a["fail"], b["fail"])
    assert np.array_equal(a["isw"], b["isw"], equal_nan=True)
    assert a["exchanges"] == b["exchanges"]


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 10), st.booleans())
def test_converted_arrays_give_the_twins_answer(gseed, size, aware):
    """Every array passed as a non-contiguous view (its integers as int32): the binding
    converts each into a temporary, whose views must live as long as the search."""
    from coalloc.testbed._allocate import allocate_all as compiled
    from coalloc.testbed._reference.allocate import allocate_all as twin

    data = _data(gseed, size)
    if data is None:
        return
    strided = {}
    for k, v in data.items():
        v = np.asarray(v)
        if v.dtype == np.int64 and v.size and np.abs(v).max() < 2**31:
            v = v.astype(np.int32)  # converted back to int64 by the binding
        big = np.repeat(v.reshape(-1), 2).reshape(v.shape + (2,)) if v.size else v[..., None]
        strided[k] = big[..., 0]  # non-contiguous view: another conversion
    _same(compiled(strided, [0, 1, 2, 3, 4], True, 50, aware),
          twin(data, [0, 1, 2, 3, 4], True, 50, aware))  # fmt: skip


@pytest.mark.parametrize("key", PLUS_KEYS + ("tcap",))
def test_missing_array_is_named(key):
    from coalloc.testbed._allocate import allocate_all as compiled

    data = _data(3, 6)
    assert data is not None
    del data[key]
    with pytest.raises(ValueError, match=f"data lacks '{key}'"):
        compiled(data, [0], True, 5, False)


@pytest.mark.parametrize(("key", "words"), [
    ("cscore", "cscore/cswitch need nc entries"), ("cswitch", "cscore/cswitch need nc entries"),
    ("vscore", "vscore/parent/vlist need nv entries"),
    ("parent", "vscore/parent/vlist need nv entries"),
    ("vlist", "vscore/parent/vlist need nv entries"),
])  # fmt: skip
def test_wrong_sizes_are_refused(key, words):
    from coalloc.testbed._allocate import allocate_all as compiled

    data = _data(3, 6)
    data[key] = np.asarray(data[key])[:-1]
    with pytest.raises(ValueError, match=words):
        compiled(data, [0], True, 5, False)
    with pytest.raises(ValueError, match="strategies must be in 0..5"):
        compiled(_data(3, 6), [0, 6], True, 5, False)
