"""What the phase benchmarks share: a record of wrapped phases' times and a load beside.

``bench/loadshare/gap_phases.py`` and ``bench/taskmap/timed_phases.py`` wrap a family's
functions in place to see which phases of a timed call ran past its limit;
``bench/shared/large_budgets.py`` and both of them start busy processes beside the calls so
that the load is the same from run to run.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import time

#: (name, start, end) of the wrapped phases, ``time.perf_counter`` values, in call order.
EVENTS: list = []


def timed(fn, label: str):
    """``fn`` wrapped so that each call appends ``(label, start, end)`` to :data:`EVENTS`."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            EVENTS.append((label, t, time.perf_counter()))

    return wrapper


def wrap(owner, name: str, label: str) -> None:
    """Replace ``owner.name`` (a module's function or a class's method) by its timed wrapper."""
    setattr(owner, name, timed(getattr(owner, name), label))


def busy(k: int) -> list:
    """``k`` busy-loop processes (the caller kills them): a load that is the same each run."""
    return [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(k)]
