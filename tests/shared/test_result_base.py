"""The one result base: keyword-only, common fields declared once, equal by value, picklable."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import numpy as np
import pytest

from coalloc._shared.family import problem_kinds
from coalloc._shared.result import RESULT_FIELDS, Result

from .test_param_tables import _example


@pytest.mark.parametrize("kind", problem_kinds(), ids=lambda k: k.kind)
def test_every_result_is_keyword_only_and_round_trips_equal(kind):
    """Each family's result declares the common fields through the base only, cannot be
    built positionally, and a pickled copy (a process batch's) compares equal."""
    result = _example(kind).solve(seed=0)
    cls = type(result)
    assert isinstance(result, Result)
    names = [f.name for f in dataclasses.fields(cls)]
    assert names[: len(RESULT_FIELDS)] == list(RESULT_FIELDS)  # the base's, first, once
    for name in RESULT_FIELDS:  # no family declares a common field again
        assert all(name not in vars(c).get("__annotations__", {})
                   for c in cls.__mro__ if c is not Result)  # fmt: skip
    kinds = {p.kind for p in inspect.signature(cls).parameters.values()}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}  # every construction names its fields
    copy = pickle.loads(pickle.dumps(result))
    assert copy == result and copy.to_dict() == result.to_dict()
    copy.status = "error" if result.status != "error" else "feasible"
    assert copy != result


def test_equality_compares_arrays_by_value():
    """Arrays (and arrays in lists and dicts) compare by value, NaN equal to NaN; a dtype or
    shape change is a difference."""
    from coalloc.ctaap.result import SolveResult

    def make(a, **kw):
        return SolveResult(status="feasible", assignment=a, n_allocated=1, **kw)

    a = np.array([0, -1])
    assert make(a) == make(a.copy())
    assert make(a) != make(np.array([0, 1]))
    assert make(a) != make(a.astype(np.int32))
    nan = np.array([[0.1, 1.0, np.nan]])
    assert make(a, trajectory=nan) == make(a, trajectory=nan.copy())
    assert make(a, params={"x": [np.arange(2)]}) == make(a, params={"x": [np.arange(2)]})
    assert make(a, params={"x": [np.arange(2)]}) != make(a, params={"x": [np.arange(3)]})
