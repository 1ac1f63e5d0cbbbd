"""The collective exact method's budget in a fresh process (issue 36): the package's own
modules it needs are imported with the package, not inside the first call's time limit."""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = r"""
import json, sys
import coalloc.collective as co
pool = co.generators.table1_pool(16, n_slots=48, seed=1)
request = co.generators.section42_requests(pool, 4, 2, seed=1)[0][1]
before = set(sys.modules)
result = co.Instance(request, pool).solve("exact", seed=0, time_limit=30)
new = sorted(m for m in set(sys.modules) - before if m.startswith("coalloc"))
print(json.dumps({"status": result.status, "new": new}))
"""


def test_a_first_exact_call_imports_none_of_the_package():
    """The window kernels (the twin's window_max, 35-46 ms to compile in a fresh process
    without bytecode; the compiled swap search) were imported inside the first call's
    limit; now with ``coalloc.collective``. (The solver's own package may still load in the
    call, bounded by the deadline: ``milp.import_solver_until``.)"""
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         timeout=300, check=True)  # fmt: skip
    doc = json.loads(out.stdout.strip().splitlines()[-1])
    assert doc["status"] == "optimal"
    assert doc["new"] == []
