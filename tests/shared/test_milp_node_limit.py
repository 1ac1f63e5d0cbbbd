"""``MilpOptions.node_limit`` (issue 36 item 3): a cap on branch-and-bound nodes, a count and
not a clock, passed to HiGHS (thread and child process), SciPy's fallback and CBC, refused
by CP-SAT; a solve the cap ends is ``feasible`` (``optimal`` when its bound meets it) with
an incumbent, ``no_solution`` without one, never ``time_limit``.

Referees: a feasibility check of ``x`` on the rows written here (not the runner's), the
uncapped solve's proven optimum, and the status rule recomputed from the outcome's bound.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.sparse as sp

from coalloc._shared import milp


def _gap(n: int = 24, m: int = 4, seed: int = 0) -> milp.MilpProblem:
    """A generalised assignment (minimise cost, each item once, capacities at 80 % of the
    mean load): HiGHS closes it in about 15 nodes, not at its root (24 x 4, seed 0: 376,
    root bound 368)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(10, 60, size=(m, n)).astype(float)
    cost = rng.integers(5, 50, size=(m, n)).astype(float)
    rows = sp.vstack([sp.hstack([sp.identity(n)] * m),
                      sp.block_diag([w[i][None, :] for i in range(m)])]).tocsr()  # fmt: skip
    lo = np.r_[np.ones(n), np.full(m, -np.inf)]
    hi = np.r_[np.ones(n), 0.8 * w.sum(axis=1) / m]
    return milp.MilpProblem(cost.reshape(-1), rows, lo, hi, np.ones(m * n))


def _market_split(m: int = 2, n: int = 18, seed: int = 0) -> milp.MilpProblem:
    """Cornuejols-Dawande market split rows ``A x = A x*`` for a random 0/1 ``x*`` (feasible
    by construction): HiGHS's root finds no solution (2 x 18, seed 0; about 19 nodes to
    the optimum)."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 100, size=(m, n)).astype(float)
    x = rng.integers(0, 2, size=n)
    b = a @ x
    return milp.MilpProblem(rng.integers(0, 3, n).astype(float), sp.csr_matrix(a), b, b,
                            np.ones(n))  # fmt: skip


def _valid(problem: milp.MilpProblem, x: np.ndarray) -> float:
    """The objective of ``x`` after checking it here: 0/1, every row within its bounds."""
    assert np.all(np.abs(x - np.round(x)) <= 1e-6) and x.min() >= -1e-9 and x.max() <= 1 + 1e-9
    xr = np.round(x)
    ax = problem.A @ xr
    assert np.all(ax >= problem.row_lb - 1e-6) and np.all(ax <= problem.row_ub + 1e-6)
    return float(problem.c @ xr)


def _rule(problem: milp.MilpProblem, out: milp.MilpOutcome, optimum: float) -> None:
    """The status rule of a solve its node cap ended (minimisation), its answer checked."""
    assert out.status in ("optimal", "feasible", "no_solution"), out.message
    assert not out.time_limit_hit
    if out.x is None:
        assert out.status == "no_solution" and out.objective is None
        return
    assert out.objective == pytest.approx(_valid(problem, out.x), abs=1e-6)
    assert out.objective >= optimum - 1e-6  # never better than the proven optimum
    assert out.bound is not None and out.bound <= optimum + 1e-6  # a valid bound
    met = out.bound >= out.objective - 1e-9 * max(1.0, abs(out.objective))
    assert (out.status == "optimal") == met, (out.status, out.objective, out.bound)


@pytest.fixture(scope="module")
def gap_optimum() -> float:
    out = milp.run_milp("highs", milp.import_solver("highs"), _gap())
    assert out.status == "optimal" and out.nodes > 1, out.message  # not proven at the root
    return _valid(_gap(), out.x)


@pytest.mark.parametrize("process", ["never", "always"])
def test_a_cap_of_one_node_ends_feasible_with_a_verified_answer(process, gap_optimum,
                                                                 monkeypatch):  # fmt: skip
    """HiGHS in its thread and in its child process: stopped at its root, with the root's
    incumbent and bound, ``feasible`` (the bound does not meet it), never ``time_limit``."""
    monkeypatch.setenv("COALLOC_HIGHS_PROCESS", process)
    problem = _gap()
    out = milp.run_milp("highs", milp.import_solver("highs"), problem,
                        options=milp.MilpOptions(node_limit=1))  # fmt: skip
    _rule(problem, out, gap_optimum)
    assert out.status == "feasible" and out.nodes == 1, out.message
    assert "node_limit" in out.message


def test_the_same_answer_twice_and_under_load(gap_optimum):
    """The cap is a count: two calls, and a third while two threads keep the interpreter
    busy, give the same incumbent, bound, nodes and status (a clock would not)."""
    problem, pkg = _gap(), milp.import_solver("highs")
    options = milp.MilpOptions(node_limit=3, seed=0)
    runs = [milp.run_milp("highs", pkg, problem, options=options) for _ in range(2)]
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(i * i for i in range(5_000))

    busy = [threading.Thread(target=spin, daemon=True) for _ in range(2)]
    for t in busy:
        t.start()
    try:
        runs.append(milp.run_milp("highs", pkg, problem, options=options))
    finally:
        stop.set()
        for t in busy:
            t.join(5)
    first = runs[0]
    _rule(problem, first, gap_optimum)
    for r in runs[1:]:
        np.testing.assert_array_equal(r.x, first.x)
        assert (r.status, r.objective, r.bound, r.nodes) == (first.status, first.objective,
                                                              first.bound, first.nodes)  # fmt: skip


def test_no_incumbent_at_the_cap_is_no_solution():
    """Market split rows: no solution at the root, so the capped solve says
    ``no_solution`` (not ``time_limit``, not ``infeasible``); uncapped, HiGHS finds the
    planted one."""
    problem, pkg = _market_split(), milp.import_solver("highs")
    out = milp.run_milp("highs", pkg, problem, options=milp.MilpOptions(node_limit=1))
    assert out.status == "no_solution" and out.x is None, out.message
    assert not out.time_limit_hit and not out.infeasible
    again = milp.run_milp("highs", pkg, problem, options=milp.MilpOptions(node_limit=1))
    assert (again.status, again.bound, again.nodes) == (out.status, out.bound, out.nodes)
    full = milp.run_milp("highs", pkg, problem)
    assert full.status == "optimal" and full.nodes > 1
    _valid(problem, full.x)


def test_scipy_fallback_takes_the_cap(gap_optimum):
    """Without highspy the runner uses :func:`scipy.optimize.milp`, whose ``node_limit``
    is the same HiGHS option (its end is SciPy's unrecognised status 4)."""
    from scipy.optimize import milp as scipy_milp

    problem = _gap()
    out = milp.run_milp("highs", scipy_milp, problem, options=milp.MilpOptions(node_limit=1))
    _rule(problem, out, gap_optimum)
    assert out.status == "feasible" and out.nodes == 1, out.message


def test_cbc_takes_the_cap(gap_optimum):
    pytest.importorskip("pulp")
    problem = _gap()
    try:
        pkg = milp.import_solver("cbc")
    except ImportError as exc:  # PuLP without a runnable CBC: said, not silently passed
        pytest.skip(str(exc))
    out = milp.run_milp("cbc", pkg, problem, options=milp.MilpOptions(node_limit=1))
    _rule(problem, out, gap_optimum)
    assert out.status == "feasible" and out.nodes == 1, out.message


BAD = [(0, ValueError), (-3, ValueError), (2.0, TypeError), (1.5, TypeError), (True, TypeError),
       (False, TypeError), ("10", TypeError), (np.bool_(True), TypeError)]


@pytest.mark.parametrize("bad, error", BAD)
def test_bad_node_limits_are_refused_naming_the_argument(bad, error):
    with pytest.raises(error, match="node_limit"):
        milp.MilpOptions(node_limit=bad)
    with pytest.raises(error, match="node_limit"):  # the runner's old keyword form too
        milp.run_milp("highs", milp.import_solver("highs"), np.ones(1), sp.csr_matrix((0, 1)),
                      np.zeros(0), np.zeros(0), integrality=np.ones(1), node_limit=bad)


def test_good_node_limits_are_kept_as_int():
    assert milp.MilpOptions(node_limit=np.int64(7)).node_limit == 7
    assert type(milp.MilpOptions(node_limit=np.int64(7)).node_limit) is int
    assert milp.MilpOptions().node_limit is None


def test_cpsat_refuses_a_node_limit():
    cp_model = pytest.importorskip("ortools.sat.python.cp_model")
    model = cp_model.CpModel()
    x = model.NewBoolVar("x")
    model.Maximize(x)
    with pytest.raises(ValueError, match="node_limit"):
        milp.run_cpsat(cp_model, model, [x], rows=0, options=milp.MilpOptions(node_limit=5))
    with pytest.raises(ValueError, match="work_limit"):  # the keyword form: the same reason
        milp.run_cpsat(cp_model, model, [x], rows=0, node_limit=5)


def test_highs_options_reach_highs_and_bad_ones_are_refused():
    problem, pkg = _gap(), milp.import_solver("highs")
    options = milp.MilpOptions(highs_options={"mip_heuristic_run_rins": False})
    assert options.highs_options == (("mip_heuristic_run_rins", False),)
    out = milp.run_milp("highs", pkg, problem, options=options)
    assert out.status == "optimal"
    with pytest.raises(ValueError, match="no_such_option"):
        milp.run_milp("highs", pkg, problem,
                      options=milp.MilpOptions(highs_options={"no_such_option": 1}))  # fmt: skip
    with pytest.raises(TypeError, match="highs_options"):
        milp.MilpOptions(highs_options=3)
