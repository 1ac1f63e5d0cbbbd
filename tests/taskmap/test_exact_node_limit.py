"""The exact mapping's node cap through the shared runner (``MilpOptions.node_limit``): the
default's capped solve (:func:`coalloc.taskmap.portfolio.map_portfolio` past
``EXACT_CELLS``) no longer wraps highspy, so the HiGHS child process and CBC take the cap
too, and CP-SAT refuses it.

Referees: :func:`coalloc.taskmap.verify_mapping` on every answer, the untimed exact
method's proven optimum, and the status rule recomputed from the result's bound.
"""

from __future__ import annotations

import numpy as np
import pytest
from bench.shared import contract_audit as ca  # the audit's generators, seed root 42

from coalloc import taskmap as tm
from coalloc.taskmap.exact import _solve_exact


@pytest.fixture(scope="module")
def case():
    """16 clustered tasks on a star of 6 skewed processors (96 pairs): its optimum (3.2)
    needs more than one node; the multilevel's mapping (3.3) is the start."""
    tasks = ca.task_graph_clustered(16, 1, root=42)
    res = ca.star_resources(6, 1, root=42)
    exact = tm.solve_exact_mapping(tasks, res)
    assert exact.status == "optimal", exact.message
    start = tm.map_multilevel(tasks, res, seed=0).mapping
    return tasks, res, exact.max_occupancy, start


def _rule(tasks, res, result, optimum) -> None:
    report = tm.verify_mapping(tasks, res, result.mapping)
    assert report.valid, report.problems
    assert result.max_occupancy == pytest.approx(report.max_occupancy, rel=1e-12)
    assert result.status in ("optimal", "feasible"), result.message  # never time_limit
    assert result.max_occupancy >= optimum * (1 - 1e-9)
    assert result.bound is not None and result.bound <= optimum * (1 + 1e-9)
    met = result.bound >= result.max_occupancy * (1 - 1e-9)
    assert (result.status == "optimal") == met, (result.status, result.bound)


@pytest.mark.parametrize("process", ["never", "always"])
def test_the_cap_reaches_highs_in_its_thread_and_its_child(case, process, monkeypatch):
    """One node from the multilevel's start: ``feasible`` below the optimum's proof, the
    same mapping and bound in the thread and in the child process (which the old highspy
    wrapper never reached)."""
    tasks, res, optimum, start = case
    monkeypatch.setenv("COALLOC_HIGHS_PROCESS", process)
    result = _solve_exact(tasks, res, start=start, node_limit=1)
    _rule(tasks, res, result, optimum)
    assert result.status == "feasible" and result.iterations["nodes"] == 1, result.message
    monkeypatch.setenv("COALLOC_HIGHS_PROCESS", "never")
    again = _solve_exact(tasks, res, start=start, node_limit=1)
    assert np.array_equal(again.mapping, result.mapping)
    assert (again.max_occupancy, again.bound, again.status) == (
        result.max_occupancy, result.bound, result.status)  # fmt: skip


def test_cbc_takes_the_cap(case):
    pytest.importorskip("pulp")
    tasks, res, optimum, start = case
    result = _solve_exact(tasks, res, solver="cbc", start=start, node_limit=1)
    _rule(tasks, res, result, optimum)


def test_cpsat_refuses_the_cap(case):
    tasks, res, _optimum, start = case
    with pytest.raises(ValueError, match="node_limit"):
        _solve_exact(tasks, res, solver="cpsat", start=start, node_limit=1)
