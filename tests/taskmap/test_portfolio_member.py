"""The default's multilevel member (``portfolio._member``, h59edge): the named method's
keywords and defaults passed through, the tiny-budget order a parameter, not a context."""

from __future__ import annotations

import numpy as np
import pytest

import coalloc.taskmap as tm
from coalloc.taskmap import multilevel as ml
from coalloc.taskmap import portfolio as pf


@pytest.mark.parametrize("seed, kw", [(0, {}), (3, {"keep": 1}), (5, {"sum_refine": False}),
                                      (7, {"coarse_factor": 2.0, "subsets": False})])  # fmt: skip
def test_the_member_is_the_named_method_untimed(seed, kw):
    """Untimed (the knob compares a budget: none here) the member's mapping is the named
    method's at the same seed and keywords, its ``params`` too; both verified."""
    tasks = tm.generators.stencil_task_graph((8, 8))
    res = tm.generators.hierarchical_cluster(n_racks=2, nodes_per_rack=2, cores_per_node=2)
    a = ml.map_multilevel(tasks, res, seed=seed, **kw)
    b = pf._member(tasks, res, seed=seed, **kw)
    for r in (a, b):
        assert tm.verify_mapping(tasks, res, r.mapping).valid
    assert np.array_equal(a.mapping, b.mapping)
    assert a.max_occupancy == b.max_occupancy and a.params == b.params


def test_the_member_refuses_an_unknown_keyword():
    """A name the named method does not take is refused, as its own call refuses it."""
    tasks = tm.generators.stencil_task_graph((4, 4))
    res = tm.generators.hierarchical_cluster(n_racks=1, nodes_per_rack=2, cores_per_node=2)
    with pytest.raises(TypeError):
        pf._member(tasks, res, seed=0, no_such_knob=1)
