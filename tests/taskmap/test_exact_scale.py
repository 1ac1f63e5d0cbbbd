"""Exact task mapping at any scale of numbers (issue 30, deliverable 1).

The same problem in other units -- the tasks' weights and volumes times one power of ten,
the processors' capacities and the links' bandwidths times another, from 1e-9 to 1e12 --
has the same optimal mapping, and its maximum occupancy scales by their ratio. Every exact
solver of the family (HiGHS, CBC) is compared with brute force over every mapping, judged by
:func:`coalloc.taskmap.verify_mapping`. An answer the solver's tolerances cannot justify must
come back as ``error``, never as ``optimal``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coalloc._shared import milp
from coalloc.taskmap import ResourceGraph, TaskGraph, exact, solve_exact_mapping, verify_mapping
from tests._optional import require_solver

SCALES = [1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9, 1e12]


available = require_solver


def brute_force(tasks: TaskGraph, res: ResourceGraph) -> float:
    """The least maximum occupancy of any mapping, by verify's arithmetic."""
    return min(
        verify_mapping(tasks, res, list(m)).max_occupancy
        for m in itertools.product(res.processors.tolist(), repeat=tasks.n)
    )


def close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def instance(seed: int, n: int, cycle: bool, load: float, speed: float):
    """Integer data (so that scaling by a power of ten is the same problem), times ``load``
    for the tasks and ``speed`` for the processors and links."""
    rng = np.random.default_rng(seed)
    if cycle:  # a ring of 3 processors: routes that are not cuts ("pairs" formulation)
        cap = rng.integers(1, 6, 3).astype(float)
        edges = [[0, 1], [1, 2], [2, 0]]
        bw = rng.integers(1, 9, 3).astype(float)
    else:  # a star around a router: "cut" formulation
        cap = np.r_[0.0, rng.integers(1, 6, 3)]
        edges = [[0, 1], [0, 2], [0, 3]]
        bw = rng.integers(1, 9, 3).astype(float)
    c = rng.integers(0, 6, (n, n)) * (rng.random((n, n)) < 0.6)
    np.fill_diagonal(c, 0)
    c = np.triu(c, 1) + np.triu(c, 1).T
    w = rng.integers(1, 7, n).astype(float)
    tasks = TaskGraph(w * load, c.astype(float) * load)
    res = ResourceGraph.from_edges(cap * speed, edges, bw * speed)
    return tasks, res


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["highs", "cbc"])
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4), cycle=st.booleans(),
       load=st.sampled_from(SCALES), speed=st.sampled_from(SCALES))  # fmt: skip
def test_exact_any_scale_against_brute_force(backend, seed, n, cycle, load, speed):
    available(backend)
    tasks, res = instance(seed, n, cycle, load, speed)
    best = brute_force(tasks, res)
    ex = solve_exact_mapping(tasks, res, solver=backend, time_limit=30)
    assert ex.status == "optimal", ex.message  # never "error" on a model this small
    rep = verify_mapping(tasks, res, ex.mapping, claimed=ex.objective)
    assert rep.ok, rep
    assert close(ex.objective, best), (ex.objective, best, ex.message)
    assert ex.bound <= ex.objective  # a valid bound, in the user's units
    assert abs(ex.bound - best) <= 1e-6 * best  # CBC's bound comes from its log's digits


# Wrong "optimal" answers found by the test above before the fix: (seed, n, cycle, load,
# speed, backend, what was claimed).
CASES = [
    (1, 3, False, 1e-3, 1e3, "highs"),  # 1.5e-06 "optimal" with bound 9e-07 (optimum 9e-07)
    (0, 1, False, 1e-3, 1e3, "highs"),  # occupancies ~1e-6: inside HiGHS's absolute gap
    (70121, 2, False, 1.0, 1.0, "cbc"),  # 4.0 "optimal" for 1.6 (CBC's preprocessing)
    (70121, 2, False, 1e-9, 1e-9, "cbc"),
    # HiGHS stopped at its absolute gap (1e-6): bound 1.3333323 for 1.3333333, "feasible"
    (14999, 4, True, 1e3, 1e3, "highs"),
    (14999, 4, True, 1e6, 1e-9, "highs"),
    (14999, 4, True, 1e12, 1.0, "highs"),
]


@pytest.mark.parametrize("seed,n,cycle,load,speed,backend", CASES)
def test_exact_reproducers(seed, n, cycle, load, speed, backend):
    available(backend)
    tasks, res = instance(seed, n, cycle, load, speed)
    best = brute_force(tasks, res)
    ex = solve_exact_mapping(tasks, res, solver=backend, time_limit=30)
    assert ex.status == "optimal", ex.message
    assert close(ex.objective, best), (ex.objective, best)
    assert ex.bound <= ex.objective and abs(ex.bound - best) <= 1e-6 * best


@pytest.mark.parametrize("backend", ["highs", "cbc"])
@pytest.mark.parametrize("load,speed", [(1e-9, 1.0), (1.0, 1e12), (1e12, 1e-9), (1.0, 1.0)])
def test_exact_scaled_instances_same_mapping_value(backend, load, speed):
    """The same instance in other units: the optimum is the unit-free one times load/speed."""
    available(backend)
    base_tasks, base_res = instance(7, 4, False, 1.0, 1.0)
    best = brute_force(base_tasks, base_res)
    tasks, res = instance(7, 4, False, load, speed)
    ex = solve_exact_mapping(tasks, res, solver=backend, time_limit=30)
    assert ex.status == "optimal", ex.message
    assert abs(ex.objective / (load / speed) - best) <= 1e-9 * best
    assert verify_mapping(tasks, res, ex.mapping, claimed=ex.objective).ok


def test_a_solution_the_check_refuses_is_an_error(monkeypatch):
    """A solver answer that is not a mapping (a task on two processors) is never optimal."""
    tasks, res = instance(3, 3, False, 1.0, 1.0)
    real = milp.run_milp

    def two_places(*args, check=None, **kwargs):
        def lying(x):
            x = np.array(x)
            x[1] = 1.0  # task 0 on its first two processors
            x[0] = 1.0
            return check(x)

        return real(*args, check=lying, **kwargs)

    monkeypatch.setattr(exact.milp, "run_milp", two_places)
    ex = solve_exact_mapping(tasks, res)
    assert ex.status == "error" and ex.mapping is None, ex.message
    assert "fails the check" in ex.message


def test_a_bound_above_the_checked_value_is_an_error(monkeypatch):
    """A proof that contradicts the recomputed occupancy of the solver's own mapping."""
    tasks, res = instance(3, 3, False, 1.0, 1.0)
    real = milp.run_milp

    def inflated(*args, check=None, **kwargs):
        return real(*args, check=lambda x: check(x) * 0.5, **kwargs)

    monkeypatch.setattr(exact.milp, "run_milp", inflated)
    ex = solve_exact_mapping(tasks, res)
    assert ex.status == "error" and ex.mapping is None and ex.bound is None, ex.message
    assert "bound" in ex.message
