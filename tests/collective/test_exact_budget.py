"""The collective exact method's budget in a fresh process (issue 36): the package's own
modules it needs are imported with the package, not inside the first call's time limit."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

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


class _Recording(np.ndarray):
    """A pool's amounts that record the size of every array ``exact.py`` and ``cankar.py`` read by
    indexing (the screens before it, polled, are not its own)."""

    sizes: list = []

    def __getitem__(self, key):
        out = np.asarray(super().__getitem__(key))
        if sys._getframe(1).f_code.co_filename.endswith(("exact.py", "cankar.py")):
            _Recording.sizes.append(out.size)
        return out


def _recorded(pool):
    state = pool._state
    pool._state = (state[0], np.asarray(state[1]).view(_Recording), *state[2:])
    _Recording.sizes = []
    return pool


@pytest.mark.parametrize("seed", [1, 2])
def test_exact_reads_only_the_window_of_each_start(seed):
    """Issue 36, 10,000 nodes x 2,016 slots: ``exact`` copied every matching row's whole
    timetable (``pool.reserved[nodes]``, 410 MB) after its first look at the deadline, 0.4-1.5
    s past a 0.05 s limit under load. Now each start copies its window's slots only (the
    same maxima: the same answer as on a plain pool)."""
    co = pytest.importorskip("coalloc.collective")
    pool = co.generators.table1_pool(24, n_slots=96, seed=seed)
    request = co.generators.section42_requests(pool, 4, 2, seed=seed)[0][1]
    want = co.Instance(request, pool).solve("exact", seed=0)
    pool = _recorded(pool)
    got = co.Instance(request, pool).solve("exact", seed=0)
    assert (got.status, got.start) == (want.status, want.start)
    assert np.array_equal(np.asarray(got.resources), np.asarray(want.resources))
    assert got.objective == want.objective
    whole = pool.n_nodes * pool.reserved.shape[1] * pool.reserved.shape[2]
    assert _Recording.sizes and max(_Recording.sizes) < whole // 4


def test_brute_force_finds_the_same_candidates_as_node_by_node():
    """The brute force's candidates per start come from every labelled node's peaks at once
    (10,000 nodes node by node took 0.1-0.2 s CPU before its first check of the deadline):
    the same answer as the exact method on small pools."""
    co = pytest.importorskip("coalloc.collective")
    for seed in range(1, 6):
        pool = co.generators.table1_pool(10, n_slots=24, seed=seed)
        for _, request in co.generators.section42_requests(pool, 3, 2, seed=seed):
            a = co.Instance(request, pool).solve("brute_force", seed=0)
            b = co.Instance(request, pool).solve("exact", seed=0)
            assert a.status == b.status
            if a.status == "optimal":
                assert a.start == b.start


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cankar_reads_only_the_slots_of_its_window(seed):
    """Issue 36, 10,000 nodes x 2,016 slots: Phase III copied the discovered rows' whole
    timetables (``pool.reserved[rjob]``) and ran seconds past a 0.05-2 s limit under load.
    Now it reads the slots from ``t_e``'s to the last window's end only (the same
    candidates and maxima: the same answer as on a plain pool)."""
    co = pytest.importorskip("coalloc.collective")
    pool = co.generators.table1_pool(24, n_slots=288, seed=seed)
    cap = pool.capacity.min(axis=0)
    request = co.CollectiveRequest(1800.0, 3, 3600.0 * seed, 3600.0 * (seed + 3),
                                   {k: float(v) / 8 for k, v in zip(pool.names, cap)})  # fmt: skip
    want = co.Instance(request, pool).solve("cankar", seed=seed)
    pool = _recorded(pool)
    got = co.Instance(request, pool).solve("cankar", seed=seed)
    assert (got.status, got.start, got.message) == (want.status, want.start, want.message)
    assert np.array_equal(np.asarray(got.resources), np.asarray(want.resources))
    assert got.rejection == want.rejection
    whole = pool.n_nodes * pool.reserved.shape[1] * pool.reserved.shape[2]
    assert _Recording.sizes and max(_Recording.sizes) < whole // 4


def test_cankar_phase_three_looks_at_the_deadline_between_chunks(monkeypatch):
    """Phase III's window maxima over every candidate in one call ran 1-3 s past the
    deadline at N = 1,024 on 10,000 nodes under load: now in chunks of ``_CHUNK``
    candidates with the deadline looked at between them (the same answer)."""
    import types

    co = pytest.importorskip("coalloc.collective")
    ck = __import__("coalloc.collective.cankar", fromlist=["_CHUNK"])
    pool = co.generators.table1_pool(24, n_slots=288, seed=4)
    cap = pool.capacity.min(axis=0)
    request = co.CollectiveRequest(1800.0, 3, 0.0, 20 * 3600.0,
                                   {k: float(v) / 8 for k, v in zip(pool.names, cap)})  # fmt: skip
    want = co.Instance(request, pool).solve("cankar", seed=4)
    seen = []
    real = ck.interrupt

    def check(*args):
        seen.append(sys._getframe(1).f_code.co_name)
        return real.check(*args)

    monkeypatch.setattr(ck, "interrupt", types.SimpleNamespace(check=check))
    got = co.Instance(request, pool).solve("cankar", seed=4)
    assert (got.status, got.start, got.message) == (want.status, want.start, want.message)
    assert seen.count("_start_candidates") >= 2  # more than _CHUNK candidates, looked at
