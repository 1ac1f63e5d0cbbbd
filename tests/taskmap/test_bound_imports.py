"""The default bound's LP runs on HiGHS through highspy, without ``scipy.optimize`` (issue 41:
a fresh batch worker would pay 0.13-0.2 s of CPU importing it for ``linprog`` alone). In a
fresh interpreter, on a small pipeline whose default bound reaches the LP (the child checks
that it does: a spy counts the LP's calls, and highspy is imported), ``scipy.optimize``
stays out of ``sys.modules``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import coalloc

_CHILD = r"""
import sys
from coalloc.taskmap import generators as gen
from coalloc.taskmap import bounds
calls = []
_lp = bounds._lp
def spy(*args):
    calls.append(1)
    return _lp(*args)
bounds._lp = spy
tasks = gen.pipeline_task_graph(n_clusters=(2, 2), cluster_size=(3, 3), c=1.0, seed=2)
res = gen.internet_resource_graph(n_wan=2, n_lan=2, lan_size=(2, 3), capacity=(1.0, 8.0),
                                  lan_bandwidth=2.0, seed=3)
value = bounds.lower_bound(tasks, res)
assert value > 0 and len(calls) > 0, (value, calls)
assert "highspy" in sys.modules
print(" ".join(m for m in ("scipy.optimize",) if m in sys.modules) or "-")
"""


def test_the_default_bound_lp_leaves_scipy_optimize_unimported():
    # the package the test imports (an installed wheel in CI, src/ here)
    env = {**os.environ, "PYTHONPATH": str(Path(coalloc.__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                         env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["-"], out.stdout
