"""Task mapping's ``exact`` in a process's first call under a time limit (issue 36): CBC's
PuLP and CP-SAT are imported through ``coalloc._shared.lazyimport`` (``milp
.import_solver_until``), given up at the deadline while the import goes on (a stand-in import
that takes ``HOLD`` seconds, ``tests/shared/_first_call``)."""

from __future__ import annotations

import pytest

from ..shared._first_call import LIMIT, first_call

SETUP = """
import numpy as np
from coalloc import taskmap as tm
rng = np.random.default_rng(3)
res = tm.ResourceGraph.from_edges([0, 2.0, 3.0, 1.5], [[0, 1], [0, 2], [0, 3]], [4.0, 2.0, 3.0])
c = rng.uniform(0, 3, (5, 5)) * (rng.random((5, 5)) < 0.5)
np.fill_diagonal(c, 0)
tasks = tm.TaskGraph(rng.uniform(0.5, 2, 5), np.triu(c, 1) + np.triu(c, 1).T)
"""
CHECK = """
report = {"status": result.status, "mapping": result.mapping is not None}
"""


# (cpsat: a guard of the import main already gave up at the deadline; cbc fails on main: it
# imported PuLP inside the limit)
@pytest.mark.parametrize("solver,slow", [("cbc", "pulp"),
                                         ("cpsat", "ortools.sat.python.cp_model")])
def test_a_first_exact_call_stops_at_its_deadline_while_the_import_goes_on(solver, slow):
    pytest.importorskip(slow)
    limit = LIMIT  # more than milp.IMPORT_SECONDS: the call waits for the import until then
    call = f'tm.solve_exact_mapping(tasks, res, solver="{solver}", time_limit={limit})'
    out = first_call(SETUP, call, CHECK, [slow])
    assert out["preloaded"] == []
    assert out["reached"] and out["blocked_at_return"]
    assert out["status"] == "time_limit" and not out["mapping"]
