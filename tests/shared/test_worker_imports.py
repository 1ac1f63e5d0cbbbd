"""What a fresh batch worker imports to solve one instance with the family's default method
(issue 41: a process worker pays its imports once, inside the batch's time; at 16 workers a
fifth of a second each is a fifth of a 10 s batch's share). SciPy's ``optimize`` (0.2-0.4 s of
CPU) and ``sparse`` (0.1-0.2 s) are imported where a method needs them, never by the family's
import alone: the exact models, the explanations and the validation of sparse input import
them in their functions; task mapping's default bound solves its LP through ``highspy``."""

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from bench.shared.scaling import family_batch

import coalloc
from coalloc.batch.run import _check_item

_CHILD = r"""
import pickle, sys
from coalloc.batch.worker import _solve_chunk
item = pickle.loads(open(sys.argv[1], "rb").read())
out = _solve_chunk([(0, item, 0)], None, {}, False, None)
assert len(out) == 1 and type(out[0]).__name__ != "BatchError", out
print(" ".join(m for m in ("scipy.optimize", "scipy.sparse") if m in sys.modules))
"""

#: The heavy modules each family's default solve does not need.
NOT_IMPORTED = {
    "loadshare": ("scipy.optimize", "scipy.sparse"),
    "collective": ("scipy.optimize", "scipy.sparse"),
    "testbed": ("scipy.optimize", "scipy.sparse"),
    "ctaap": ("scipy.optimize",),
    "taskmap": ("scipy.optimize",),  # its default bound's LP goes to HiGHS directly
}


@pytest.mark.parametrize("family", sorted(NOT_IMPORTED))
def test_a_fresh_worker_imports_no_heavy_scipy_module_it_does_not_use(family, tmp_path):
    item = _check_item(family_batch(family, 1, seed=3, small=True)[0])
    path = tmp_path / "item.pkl"
    path.write_bytes(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
    # the package the test imports (an installed wheel in CI, src/ here)
    env = {**os.environ, "PYTHONPATH": str(Path(coalloc.__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True,
                         text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    imported = set(out.stdout.split())
    assert not imported & set(NOT_IMPORTED[family]), (family, imported)


_WARM_CHILD = r"""
import pickle, sys
from coalloc.batch.warm import _warm
from coalloc.batch.worker import _solve_chunk
_warm((sys.argv[2],))
before = set(sys.modules)
item = pickle.loads(open(sys.argv[1], "rb").read())
out = _solve_chunk([(0, item, 0)], None, {}, False, None)
assert len(out) == 1 and type(out[0]).__name__ != "BatchError", out
print(" ".join(sorted(set(sys.modules) - before)))
"""


@pytest.mark.parametrize("family", sorted(NOT_IMPORTED))
def test_a_warm_pool_worker_has_imported_what_its_first_instance_needs(family, tmp_path):
    """A worker of ``coalloc.batch.pool`` warms its families at its start (their example
    solved): a batch's first instance then imports nothing more (issue 41, h49pool)."""
    item = _check_item(family_batch(family, 1, seed=3, small=True)[0])
    path = tmp_path / "item.pkl"
    path.write_bytes(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))
    env = {**os.environ, "PYTHONPATH": str(Path(coalloc.__file__).resolve().parents[1])}
    out = subprocess.run([sys.executable, "-c", _WARM_CHILD, str(path), family],
                         capture_output=True, text=True, env=env, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [], (family, out.stdout)
