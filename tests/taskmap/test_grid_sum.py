"""The grid layout's sum step (``gridstarts.GRID_SUM``, h59sum): the layout the default
keeps has had the sum step (moves under its maximum occupancy as a cap), so the answer is
never worse in the maximum and, at an equal maximum, lower in the route cost where the
step finds moves. Referees: :func:`coalloc.taskmap.verify_mapping` (from scratch, against
the claimed maximum) and :func:`coalloc.taskmap.communication_cost`; the default with the
knob off."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import coalloc.taskmap as tm
from coalloc.taskmap import generators as gen
from coalloc.taskmap import gridstarts, sumcycle
from coalloc.taskmap.portfolio import map_portfolio


def _case(it: int, shape: tuple, racks: int, nodes: int, cores: int, node_bw: float,
          rack_bw: float):  # fmt: skip
    tasks = gen.stencil_task_graph(shape, compute=(0.5, 2.0), volume=(0.5, 2.0), seed=it)
    res = gen.hierarchical_cluster(n_racks=racks, nodes_per_rack=nodes, cores_per_node=cores,
                                   speed=(1.0, 4.0), node_bandwidth=node_bw,
                                   rack_bandwidth=rack_bw, seed=it)  # fmt: skip
    return tasks, res


def _both(monkeypatch, tasks, res):
    monkeypatch.setattr(sumcycle, "FINAL_CYCLES", 0)  # the grid's step alone
    out = {}
    for on in (False, True):
        monkeypatch.setattr(gridstarts, "GRID_SUM", on)
        r = map_portfolio(tasks, res)
        rep = tm.verify_mapping(tasks, res, r.mapping, claimed=r.max_occupancy)
        assert rep.valid and rep.matches, rep.problems
        out[on] = (r.max_occupancy, tm.communication_cost(tasks, res, r.mapping), r.message)
    return out


@pytest.mark.parametrize("case", [
    (10, (16, 16), 3, 3, 2, 5.0, 10.0),  # measured: the same maximum, sum 69.9 -> 54.0
    (29, (8, 8, 4), 2, 3, 3, 2.0, 5.0),  # the same maximum, sum 142.0 -> 128.5
    (24, (8, 8, 4), 2, 3, 3, 2.0, 10.0),  # the link step: maximum 20.78 -> 20.11
])
def test_the_kept_layout_has_had_the_sum_step(monkeypatch, case):
    """Lexicographically better with the step (fails without it: the same answer)."""
    tasks, res = _case(*case)
    out = _both(monkeypatch, tasks, res)
    assert "grid layout" in out[True][2]
    (occ_off, sum_off, _), (occ_on, sum_on, _) = out[False], out[True]
    assert occ_on <= occ_off * (1 + 1e-12)
    assert occ_on < occ_off * (1 - 1e-9) or sum_on < sum_off * (1 - 1e-9)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.integers(0, 99), st.sampled_from([(8, 8), (12, 8), (6, 6, 4)]), st.integers(1, 3),
       st.integers(2, 4), st.integers(1, 3))  # fmt: skip
def test_the_step_never_lifts_the_maximum(monkeypatch, it, shape, racks, nodes, cores):
    tasks, res = _case(it, shape, racks, nodes, cores, 2.0, 10.0)
    out = _both(monkeypatch, tasks, res)
    assert out[True][0] <= out[False][0] * (1 + 1e-12)


def test_no_step_when_the_caller_asks_for_none(monkeypatch):
    """``sum_refine=False`` (the caller's): the layout as it was without the step."""
    tasks, res = _case(10, (16, 16), 3, 3, 2, 5.0, 10.0)
    monkeypatch.setattr(sumcycle, "FINAL_CYCLES", 0)
    got = {}
    for on in (False, True):
        monkeypatch.setattr(gridstarts, "GRID_SUM", on)
        r = map_portfolio(tasks, res, sum_refine=False)
        got[on] = r.mapping
    assert (got[False] == got[True]).all()
