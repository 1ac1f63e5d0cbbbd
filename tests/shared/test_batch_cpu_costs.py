"""A chunk reports what each instance cost in CPU seconds, not wall seconds (issue 41): a
loaded machine stretches the wall time of every solve, and ``chunksize="auto"``, which
sizes chunks by these costs, then cut batches into chunks of one or two instances, each
costing the calling process its submit, wake-ups and result. A solve's CPU includes that of
the child processes it ran and waited for (an exact method's CBC)."""

from __future__ import annotations

import subprocess
import sys
import time

from coalloc.batch.worker import _cpu_seconds, _solve_chunk

_ARGS = (None, {}, False, None)  # method, params, with_report, family


class _Sleeper:
    """A problem whose solve waits without computing."""

    family = "fake"

    def __init__(self, seconds: float):
        self.seconds = seconds

    def solve(self, method, seed=None):
        time.sleep(self.seconds)
        return "slept"


class _Parent:
    """A problem whose solve runs a child process that computes, and remembers the CPU
    the child's wait added to this process's children's (the referee)."""

    family = "fake"
    child_cpu = None

    def solve(self, method, seed=None):
        import os

        before = os.times()
        subprocess.run([sys.executable, "-c", "sum(i * i for i in range(3_000_000))"],
                       check=True)  # fmt: skip
        after = os.times()
        _Parent.child_cpu = (after.children_user - before.children_user
                             + after.children_system - before.children_system)  # fmt: skip
        return "ran"


def test_waiting_costs_no_cpu():
    nap = 0.3
    records = _solve_chunk([(0, _Sleeper(nap), 1), (1, _Sleeper(nap), 2)], *_ARGS)
    assert list(records) == ["slept", "slept"]
    assert len(records.costs) == 2
    # wall seconds would be at least `nap` each, whatever the load; CPU is a sleep's few us
    assert all(0 <= cost < nap / 2 for cost in records.costs)
    assert records.seconds >= 2 * nap  # the chunk's own time stays wall (the sizer's view)


def test_a_child_process_cpu_is_counted():
    records = _solve_chunk([(0, _Parent(), 1)], *_ARGS)
    assert list(records) == ["ran"]
    assert _Parent.child_cpu is not None and _Parent.child_cpu > 0
    assert records.costs[0] >= _Parent.child_cpu


def test_cpu_seconds_grow_with_work():
    start = _cpu_seconds()
    total = sum(i * i for i in range(200_000))  # some work of this thread
    assert total > 0
    assert _cpu_seconds() > start
