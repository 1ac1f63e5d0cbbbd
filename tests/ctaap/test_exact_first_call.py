"""CTAAP ``exact``'s first call in a process under a time limit (issue 36): HiGHS and the
flow bound's SciPy graph module are imported through ``coalloc._shared.lazyimport``, given
up at the deadline while the import goes on (a stand-in import that takes ``HOLD`` seconds,
``tests/shared/_first_call``)."""

from __future__ import annotations

import pytest

from ..shared._first_call import first_call

SETUP = """
import coalloc.ctaap as ct
request, offer = ct.generators.fig2(2, n_tasks=40, seed=1)
"""
CHECK = """
report = {"status": result.status, "n": int(result.n_allocated), "bound": result.bound,
          "verified": bool(ct.verify(request, offer, result.assignment).feasible)}
"""


# (highspy: a guard of the solver import, which main already gave up at the deadline;
# the flow bound's csgraph import fails on main: it waited for it)
@pytest.mark.parametrize("slow", [["highspy"], ["scipy.sparse.csgraph"]])
def test_a_first_exact_call_stops_at_its_deadline_while_the_import_goes_on(slow):
    out = first_call(SETUP, 'ct.solve_exact(request, offer, time_limit=LIMIT)', CHECK, slow)
    assert out["preloaded"] == []  # the family's import did not load it: the test means it
    assert out["reached"] and out["blocked_at_return"]
    assert out["verified"] and out["bound"] is not None and out["bound"] >= out["n"]


def test_untimed_waits_for_the_import():
    out = first_call(SETUP, 'ct.solve_exact(request, offer)', CHECK, ["scipy.sparse.csgraph"],
                     hold=1.0)  # fmt: skip
    assert not out["blocked_at_return"]
    assert out["status"] == "optimal" and out["verified"]
