"""Exact CTAAP at any scale of numbers (issue 30, deliverable 1).

The same request and offer in other units -- every property (tasks' and machines') times one
power of ten, every bandwidth (requested and available) times another, from 1e-9 to 1e12 --
has the same optimum, and every exact solver (HiGHS, CBC, CP-SAT, both linearisations)
must find it: brute force over every assignment, judged by :func:`coalloc.ctaap.verify`, is
the referee. An answer that fails verify, or a bound below its own solution, comes back as
``error``, never as ``optimal``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coalloc
from coalloc._shared import milp
from coalloc.ctaap import exact
from coalloc.ctaap.exact import solve_exact, upper_bound
from tests._optional import require_solver

SCALES = [1e-9, 1e-6, 1e-3, 1.0, 1e3, 1e6, 1e9, 1e12]


available = require_solver


def brute_force(req, off) -> int:
    """The most tasks any assignment places, by verify's arithmetic."""
    best = 0
    for assign in itertools.product(range(-1, off.m), repeat=req.n):
        size = sum(a >= 0 for a in assign)
        if size > best and coalloc.verify(req, off, np.array(assign)).feasible:
            best = size
    return best


def instance(seed: int, n: int, m: int, prop: float, band: float, directed: bool):
    """Integer data (the same problem at every power of ten) times ``prop`` for the
    properties and ``band`` for the bandwidths."""
    rng = np.random.default_rng(seed)
    bw = rng.integers(1, 60, (n, n)) * (rng.random((n, n)) < 0.7)
    np.fill_diagonal(bw, 0)
    if not directed:
        bw = np.triu(bw, 1) + np.triu(bw, 1).T
    req = coalloc.Request(
        {"cpu": rng.integers(1, 60, n) * prop, "mem": rng.integers(1, 60, n) * prop},
        bandwidth=bw * band,
    )
    off = coalloc.Offer(
        {"cpu": rng.integers(1, 90, m) * prop, "mem": rng.integers(1, 90, m) * prop},
        capacity=rng.integers(0, 4, m),
        bandwidth=rng.integers(1, 60, (m, m)) * band,
    )
    return req, off


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["highs", "cbc", "cpsat"])
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 5), m=st.integers(1, 3),
       prop=st.sampled_from(SCALES), band=st.sampled_from(SCALES), directed=st.booleans(),
       formulation=st.sampled_from(["pairwise", "aggregated"]))  # fmt: skip
def test_exact_any_scale_against_brute_force(backend, seed, n, m, prop, band, directed,
                                             formulation):  # fmt: skip
    available(backend)
    req, off = instance(seed, n, m, prop, band, directed)
    best = brute_force(req, off)
    assert best == brute_force(*instance(seed, n, m, 1.0, 1.0, directed))  # same problem
    res = solve_exact(req, off, solver=backend, formulation=formulation, time_limit=30)
    assert res.status == "optimal", res.message
    rep = coalloc.verify(req, off, res.assignment)
    assert rep.feasible, rep
    assert res.n_allocated == rep.n_allocated == best == res.objective
    assert res.bound == best  # a valid bound, in the user's units (tasks)
    assert upper_bound(req, off) >= best


def test_a_solution_the_check_refuses_is_an_error(monkeypatch):
    """The runner's check is verify on the original data: a solution placing every task
    on every cluster it fits (breaking capacities and bandwidths) is never optimal."""
    req, off = instance(4, 5, 2, 1.0, 1.0, False)
    real = milp.run_milp

    def all_ones(*args, check=None, **kwargs):
        return real(*args, check=lambda x: check(np.ones_like(x)), **kwargs)

    monkeypatch.setattr(exact.milp, "run_milp", all_ones)
    res = solve_exact(req, off, solver="highs")
    assert res.status == "error" and not res.success, res.message
    assert np.all(res.assignment == -1) and "fails the check" in res.message


@pytest.mark.parametrize("backend", ["highs", "cpsat"])
def test_a_bound_below_the_checked_value_is_an_error(monkeypatch, backend):
    """A maximisation whose bound is below its own solution's verified value."""
    available(backend)
    req, off = instance(4, 5, 2, 1.0, 1.0, False)
    assert brute_force(req, off) >= 2
    name = "run_cpsat" if backend == "cpsat" else "run_milp"
    real = getattr(milp, name)

    def doubled(*args, check=None, **kwargs):
        return real(*args, check=lambda x: 2 * check(x), **kwargs)

    monkeypatch.setattr(exact.milp, name, doubled)
    res = solve_exact(req, off, solver=backend)
    assert res.status == "error" and not res.success, res.message
    assert "bound" in res.message
