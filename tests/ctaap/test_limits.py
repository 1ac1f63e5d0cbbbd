"""Limits of the CTAAP solver: a batch's timeout reaches the NumPy twins' loops."""

from __future__ import annotations

import pytest

import coalloc
from tests._timeouts import assert_times_out


def test_a_thread_batch_timeout_stops_the_numpy_twins():
    # step 1 on the twins runs for many seconds (its setup, one vectorised pass, ~0.3 s)
    request, offer = coalloc.generators.fig2(2, n_tasks=150, n_clusters=10, seed=1)
    assert_times_out(coalloc.ctaap.Instance(request, offer), "ctaap", backend="numpy",
                     local_search=0)  # fmt: skip


@pytest.mark.parametrize("backend", ["compiled", "numpy"])
def test_the_edge_ranks_step_stops_at_the_time_limit(monkeypatch, backend):
    """The step-1 ranks (the default's first unpolled step before issue 36) take the call's
    deadline: when the budget has run out as that step starts, the kernel itself raises the
    time limit's stop (recorded here), and the call returns the honest ``time_limit`` with
    the first-fit allocation the anytime search offered before the default ran, which the
    contract's referee accepts. The budget is spent by
    moving the deadline of the time limit's scope to the past (no clock race)."""
    import time

    from coalloc._shared import interrupt
    from coalloc.ctaap import solver

    kernels = solver._Compiled if backend == "compiled" else solver._NumPy
    real = kernels.edge_ranks
    raised: list = []

    def spent(indptr, indices, data, bhat):
        scope = interrupt.current()
        while scope is not None and not hasattr(scope, "when"):
            scope = scope._outer
        assert scope is not None, "edge_ranks ran outside the time limit's scope"
        scope.when = time.perf_counter() - 1.0  # the budget is spent here
        try:
            return real(indptr, indices, data, bhat)
        except BaseException as exc:
            raised.append(exc)
            raise

    monkeypatch.setattr(kernels, "edge_ranks", staticmethod(spent))
    request, offer = coalloc.generators.fig2(2, n_tasks=60, n_clusters=5, seed=3)
    result = coalloc.solve(request, offer, method="ctaap", time_limit=60, backend=backend)
    assert len(raised) == 1  # the kernel (not a later check) stopped
    assert result.status == "time_limit"
    # the answer is the first-fit allocation the search offered before the default ran
    first_fit = coalloc.ctaap.solve_greedy(request, offer, order="index")
    assert result.n_allocated == first_fit.n_allocated == result.objective > 0
    assert coalloc.ctaap.verify(request, offer, result.assignment).feasible
    from tests.shared.test_contract import violations

    assert violations("ctaap", coalloc.ctaap.Instance(request, offer), result, 60.0) == []
