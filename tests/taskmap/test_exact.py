"""Exact min-max-occupancy mapping: against brute force, both linearisations, back-ends."""

import numpy as np
import pytest

from coalloc.taskmap import ResourceGraph, TaskGraph, max_occupancy, solve_exact_mapping
from tests._optional import skip_unless_ci
from tests.taskmap._brute import brute_force


def random_instance(rng, n=5, cycle=False, directed=False):
    if cycle:  # 4 processors on a ring: hop routes that are not cuts
        res = ResourceGraph.from_edges(
            rng.uniform(1, 4, 4), [[0, 1], [1, 2], [2, 3], [3, 0]], rng.uniform(1, 5, 4)
        )
    else:  # a router with 3 processors and one more behind a second router
        res = ResourceGraph.from_edges(
            [0, 0, *rng.uniform(1, 4, 4)],
            [[0, 1], [0, 2], [0, 3], [0, 4], [1, 5]],
            rng.uniform(1, 5, 5),
        )
    c = rng.uniform(0, 3, (n, n)) * (rng.random((n, n)) < 0.5)
    np.fill_diagonal(c, 0)
    if not directed:
        c = np.triu(c, 1) + np.triu(c, 1).T
    return TaskGraph(rng.uniform(0.5, 2, n), c, directed=directed), res


@pytest.mark.parametrize("cycle", [False, True])
@pytest.mark.parametrize("directed", [False, True])
def test_highs_matches_brute_force(cycle, directed):
    rng = np.random.default_rng(10 * cycle + directed)
    for _ in range(3):
        tasks, res = random_instance(rng, cycle=cycle, directed=directed)
        ex = solve_exact_mapping(tasks, res)
        assert ex.status == "optimal"
        assert ex.formulation == ("pairs" if cycle else "cut")
        assert ex.objective == pytest.approx(brute_force(tasks, res), rel=1e-9)
        assert ex.bound <= ex.objective * (1 + 1e-9) and ex.gap == pytest.approx(0, abs=1e-6)
        assert max_occupancy(tasks, res, ex.mapping)[0] == pytest.approx(ex.objective)
        if not cycle:
            pairs = solve_exact_mapping(tasks, res, formulation="pairs")
            assert pairs.objective == pytest.approx(ex.objective, rel=1e-9)


def test_cbc_agrees():
    try:
        import pulp  # noqa: F401
    except ImportError:
        skip_unless_ci("PuLP not installed (optional extra; CI installs coalloc[exact])")
    rng = np.random.default_rng(5)
    tasks, res = random_instance(rng)
    a = solve_exact_mapping(tasks, res, solver="highs")
    b = solve_exact_mapping(tasks, res, solver="cbc")
    assert b.status == "optimal" and b.objective == pytest.approx(a.objective, rel=1e-7)


def test_exact_arguments():
    rng = np.random.default_rng(0)
    tasks, res = random_instance(rng, cycle=True)
    with pytest.raises(ValueError, match="solver"):
        solve_exact_mapping(tasks, res, solver="glpk")
    with pytest.warns(DeprecationWarning, match="backend"), pytest.raises(ValueError):
        solve_exact_mapping(tasks, res, backend="glpk")  # the old name, still understood
    with pytest.raises(ValueError, match="cuts"):
        solve_exact_mapping(tasks, res, formulation="cut")
    with pytest.raises(ValueError, match="too large"):
        solve_exact_mapping(tasks, res, max_variables=10)
    with pytest.raises(ValueError, match="time_limit"):
        solve_exact_mapping(tasks, res, time_limit=0)
