"""Collective ``exact``'s first call in a process under a time limit (issue 36): SciPy's
sparse matrices and HiGHS are imported through ``coalloc._shared.lazyimport``, given up at
the deadline; a stand-in import that takes ``HOLD`` seconds (``tests/shared/_first_call``)."""

from __future__ import annotations

import pytest

from ..shared._first_call import first_call

SETUP = """
import coalloc.collective as co
pool = co.generators.table1_pool(16, n_slots=48, seed=1)
request = co.generators.section42_requests(pool, 4, 2, seed=1)[0][1]
inst = co.Instance(request, pool)
"""
CHECK = """
report = {"status": result.status, "verified": bool(co.verify(request, pool, result).admissible)
          if result.start is not None else None}
"""


@pytest.mark.parametrize("slow", [["scipy.sparse"], ["highspy"]])
def test_a_first_exact_call_stops_at_its_deadline_while_the_import_goes_on(slow):
    out = first_call(SETUP, 'inst.solve("exact", seed=0, time_limit=LIMIT)', CHECK, slow)
    assert out["preloaded"] == []  # the family's import did not load it: the test means it
    assert out["reached"]  # the call began the import
    assert out["blocked_at_return"]  # and returned before it finished
    assert out["status"] == "time_limit"
    assert out["verified"] in (None, True)


def test_untimed_waits_for_the_import():
    out = first_call(SETUP, 'inst.solve("exact", seed=0)', CHECK, ["scipy.sparse"],
                     hold=1.0)
    assert not out["blocked_at_return"]  # (the stand-in's hold ends; the answer follows)
    assert out["status"] == "optimal" and out["verified"]
