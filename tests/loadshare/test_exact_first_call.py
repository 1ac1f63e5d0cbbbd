"""Load sharing's ``exact`` in a process's first call under a time limit (issue 36): SciPy's
sparse matrices and the solver are imported through ``coalloc._shared.lazyimport`` after the
best-fit start, given up at the deadline with that start as the answer (a stand-in import
that takes ``HOLD`` seconds, ``tests/shared/_first_call``)."""

from __future__ import annotations

import pytest

from ..shared._first_call import first_call

SETUP = """
from coalloc import loadshare as ls
problem = ls.LoadSharingProblem([5, 5], [4, 3, 3], [0, 0, 0])
"""
CHECK = """
check = ls.verify_placement(problem, result.placement, claimed=result.throughput)
report = {"status": result.status, "throughput": result.throughput,
          "verified": bool(check.valid and check.matches)}
"""


@pytest.mark.parametrize("slow", [["scipy.sparse"], ["highspy"]])
def test_a_first_exact_call_keeps_the_start_at_its_deadline(slow):
    out = first_call(SETUP, 'ls.share_exact(problem, time_limit=LIMIT)', CHECK, slow)
    assert out["preloaded"] == []
    assert out["reached"] and out["blocked_at_return"]
    assert out["status"] == "time_limit" and out["verified"]
    assert out["throughput"] > 0  # best fit decreasing's placement, not nothing


def test_untimed_waits_for_the_import():
    out = first_call(SETUP, 'ls.share_exact(problem)', CHECK, ["scipy.sparse"], hold=1.0)
    assert not out["blocked_at_return"]
    assert out["status"] == "optimal" and out["throughput"] == 9.0 and out["verified"]
