"""The GAP default (``method="portfolio"``) is never worse than ``heuristic`` at the same
seed, by construction (issue 36 item 4, issue 40: h59gap).

Where the timed default runs the heuristic alone (``exact.portfolio_start`` says "off":
below ``PORTFOLIO_COLD_FROM`` on more than ``PORTFOLIO_EARLY_PAIRS`` pairs, as the contract
audit's heavy 10 x 80 at 0.05-0.1 s), it makes the very call ``method="heuristic"`` makes
(no wrapper, no callbacks), so the two walk one trajectory and a wall-clock difference
between two calls is the clock's alone. The tests judge by counted work, not by the
clock: a run of ``iterations`` tabu iterations under a limit it does not reach walks the
same trajectory in both methods; where a solver runs beside or after the search, the
default keeps the better answer of the two (the untimed default: the heuristic, then
CP-SAT under a deterministic work cap)."""

from __future__ import annotations

import pytest

from coalloc.loadshare import generate_gap, solve_gap, verify_gap
from coalloc.loadshare.gap import exact, heuristic, solve

KINDS = ("a", "b", "c", "d")


def _cases(sizes):
    return [(k, m, n, s) for k in KINDS for (m, n) in sizes for s in (0, 1)]


def _worse(a, b, sense: str) -> bool:
    """Whether objective ``a`` is worse than ``b`` in ``sense``."""
    return a > b + 1e-9 if sense == "min" else a < b - 1e-9


def test_the_off_path_makes_the_heuristics_call(monkeypatch) -> None:
    """The timed default on the audit's sizes below ``PORTFOLIO_COLD_FROM`` hands
    :func:`.heuristic.solve_heuristic` what ``method="heuristic"`` hands it: the same call
    (instance, sense, limit, seed, relink, cycles), iterations, bound, and no callbacks or
    halt event (a spy, not a clock)."""
    seen = {}

    def spy(name, real):
        def run(call, iterations, with_bound, on_round=None, halt=None, on_bound=None):
            seen[name] = (call.instance, call.sense, call.assign_all, call.limit, call.seed,
                          call.relink, call.cycles, iterations, with_bound, on_round, halt,
                          on_bound)  # fmt: skip
            return real(call, iterations, with_bound, on_round, halt, on_bound)

        return run

    real = heuristic.solve_heuristic
    monkeypatch.setattr(solve, "solve_heuristic", spy("heuristic", real))
    monkeypatch.setattr(exact, "solve_heuristic", spy("portfolio", real))
    inst = generate_gap("c", 10, 80, seed=3)  # 800 pairs: "off" below PORTFOLIO_COLD_FROM
    for limit in (0.05, 0.1, 0.3):
        assert exact.portfolio_start(limit, inst.m * inst.n) == "off"
        for seed in (0, 7):
            seen.clear()
            h = solve_gap(inst, "heuristic", time_limit=limit, seed=seed)
            d = solve_gap(inst, time_limit=limit, seed=seed)
            assert set(seen) == {"heuristic", "portfolio"}
            assert seen["portfolio"] == seen["heuristic"]
            assert seen["portfolio"][9:] == (None, None, None)
            for r in (h, d):
                assert verify_gap(inst, r.assignment).feasible
            assert d.method == "portfolio" and d.iterations["solver_started"] == 0
            assert "heuristic runs alone" in d.message


@pytest.mark.slow
@pytest.mark.parametrize("kind,m,n,seed", _cases([(5, 50), (8, 60), (10, 80), (12, 150)]))
def test_off_path_equal_at_counted_work(monkeypatch, kind, m, n, seed) -> None:
    """At a counted ``iterations`` under a limit far beyond it (every phase of the search
    ends by its count, not the clock), the default forced onto its "off" path gives
    exactly the heuristic's assignment, at several counts and seeds: one trajectory (a
    run whose bound proved its answer stops sooner, holding the same assignment)."""
    monkeypatch.setattr(exact, "PORTFOLIO_COLD_FROM", 1e9)  # every limit "below" it
    monkeypatch.setattr(exact, "PORTFOLIO_EARLY_PAIRS", 0)  # ... and every size "off"
    inst = generate_gap(kind, m, n, seed=seed)
    for its in (50, 400, 1500):
        for s in (seed, seed + 11):
            h = solve_gap(inst, "heuristic", time_limit=60.0, seed=s, iterations=its)
            d = solve_gap(inst, time_limit=60.0, seed=s, iterations=its)
            assert d.iterations["solver_started"] == 0
            # (the bound's steps between rounds follow the clock: one run may prove its
            # answer optimal and stop sooner, holding what the other holds at that count)
            ran = (h.iterations["tabu_iterations"], d.iterations["tabu_iterations"])
            assert ran == (its, its) or "optimal" in (h.status, d.status), ran
            assert h.objective == d.objective
            assert (h.assignment == d.assignment).all()
            assert verify_gap(inst, d.assignment).feasible


@pytest.mark.slow
@pytest.mark.parametrize("kind,m,n,seed", _cases([(3, 12), (5, 30), (6, 33)]))
def test_solver_paths_never_worse_at_counted_work(kind, m, n, seed) -> None:
    """Where a solver runs (small instances: CP-SAT from the heuristic's first feasible
    assignment below ``PORTFOLIO_COLD_FROM``, HiGHS from the start at 2 s; untimed: CP-SAT after
    the heuristic under a work cap), the default's answer is at least the heuristic's at
    the same seed and counted iterations, in both senses."""
    for sense in ("min", "max"):
        inst = generate_gap(kind, m, n, seed=seed)
        for limit in (None, 2.0):
            for its in (30, 300):
                h = solve_gap(inst, "heuristic", time_limit=limit, seed=seed, iterations=its,
                              sense=sense)  # fmt: skip
                d = solve_gap(inst, time_limit=limit, seed=seed, iterations=its, sense=sense)
                assert d.params.get("portfolio") is True
                if h.assignment is None:  # (a limit may end the heuristic first: no claim)
                    continue
                assert d.assignment is not None
                assert verify_gap(inst, d.assignment).feasible
                assert not _worse(d.objective, h.objective, sense), (limit, its, d.message)
